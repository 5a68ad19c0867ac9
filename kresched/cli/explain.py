"""`kresched explain`: why a pod is Pending, per node and filter, in the scheduler's own words."""

from __future__ import annotations

from typing import Annotated

import typer

from kresched.cli.common import (
    ContextOpt,
    KubeconfigOpt,
    NamespaceOpt,
    NoColorOpt,
    OtherSchedulersOpt,
    Output,
    OutputOpt,
    SchedulerConfigOpt,
    SnapshotOpt,
    at_least,
    command,
    default_namespace,
    emit,
    load_profiles,
    load_state,
    make_options,
)
from kresched.cli.plan import PodArg, PodOpt
from kresched.cli.progress import progress
from kresched.cli.resolve import pick_pod_ref, resolve_pod
from kresched.plan.explain import explain_pod
from kresched.render.explain import explanation_dict, explanation_table
from kresched.sources.decode import paused_gc


@command
def explain(
    pod_arg: PodArg = None,
    pod: PodOpt = None,
    all_nodes: Annotated[bool, typer.Option("--all-nodes", help="List every node, not only the nearest.")] = False,
    top: Annotated[int, typer.Option("--top", callback=at_least(1), metavar="N",
                                     help="How many of the nearest nodes to list.")]
    = 10,
    scheduler_config: SchedulerConfigOpt = None,
    simulate_other_schedulers: OtherSchedulersOpt = False,
    namespace: NamespaceOpt = None,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
) -> int:
    """Why a pod is Pending: every node's verdict, the scheduler's own message, and what would make it fit.

    Examples:

    \b
      kresched explain metrics-server-5p9lfwkgvh-mkd72 -n kube-system --snapshot demo
      kresched explain ml/train-ranker-v7-95mf5 --snapshot demo --all-nodes -o wide
      kresched -n kube-system explain pod/metrics-server-5p9lfwkgvh-mkd72 --snapshot demo -o json
    """
    opts = make_options(snapshot, kubeconfig, context, output, no_color, namespace)
    ref = pick_pod_ref(pod_arg, pod, required=True)
    assert ref is not None
    profiles = load_profiles(scheduler_config, simulate_other_schedulers)
    state = load_state(opts)
    target = resolve_pod(state, ref, opts.source, default_namespace(opts), namespace is not None)
    with progress(opts, f"explaining {target.key}"), paused_gc():
        result = explain_pod(state, target, profiles=profiles)
    emit(opts.output, explanation_dict(result),
         lambda: explanation_table(result, top=top, all_nodes=all_nodes, wide=opts.output is Output.wide))
    return 0
