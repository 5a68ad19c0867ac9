"""`kresched explain`: why a pod is Pending, per node and filter, in the scheduler's own words."""

from __future__ import annotations

from typing import Annotated

import typer

from kresched.cli.common import (
    ENV,
    ContextOpt,
    FeatureGatesOpt,
    KubeconfigOpt,
    NamespaceOpt,
    NoColorOpt,
    OtherSchedulersOpt,
    Output,
    OutputOpt,
    ReadOnlyDryRunOpt,
    SchedulerConfigOpt,
    SnapshotOpt,
    at_least,
    command,
    default_namespace,
    emit,
    is_table,
    load_profiles,
    make_options,
    read_only_dry_run,
    simulation_args,
)
from kresched.cli.load import load_state
from kresched.cli.lost import explain_node, lost_pod_parts
from kresched.cli.plan import PodArg, PodOpt
from kresched.cli.progress import progress
from kresched.cli.resolve import none_pending, parse_target, pick_pod_ref, resolve_nodes, resolve_pod, workload_pods
from kresched.errors import ExitCode
from kresched.plan.explain import explain_pod
from kresched.plan.queue import queue_key
from kresched.render.common import Source
from kresched.render.explain import explanation_dict, explanation_table
from kresched.render.table import Hanging
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
    feature_gates: FeatureGatesOpt = None,
    simulate_other_schedulers: OtherSchedulersOpt = False,
    namespace: NamespaceOpt = None,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
    dry_run: ReadOnlyDryRunOpt = None,
) -> int:
    """Why a pod is Pending: every node's verdict, the scheduler's own message, and what would make it fit.

    Exit code 6 when whether the pod fits cannot be known: the snapshot lacks the device objects
    (DRA) its claims depend on; else 0.

    `explain node/NAME`: whether the node is lost (its kubelet stopped reporting) and its recovery
    timeline — when each pod is evicted, where its replacement lands, which pods will not come
    back by themselves and why, and what would speed it up.

    Examples:

    \b
      kresched explain metrics-server-5p9lfwkgvh-mkd72 -n kube-system --snapshot demo
      kresched explain ml/train-ranker-v7-95mf5 --snapshot demo --all-nodes -o wide
      kresched -n kube-system explain pod/metrics-server-5p9lfwkgvh-mkd72 --snapshot demo -o json
    """
    opts = make_options(snapshot, kubeconfig, context, output, no_color, namespace)
    read_only_dry_run(dry_run, "explain")
    ref = pick_pod_ref(pod_arg, pod, required=True)
    assert ref is not None
    profiles = load_profiles(scheduler_config, simulate_other_schedulers, offline=snapshot is not None,
                             feature_gates=feature_gates)
    state = load_state(opts)
    if ref.partition("/")[0].lower() in ("node", "nodes", "no"):
        (node,) = resolve_nodes(state, [ref])
        return explain_node(opts, state, node.name, profiles)
    target = parse_target(ref, default_namespace(opts), namespace is not None)
    simulation = simulation_args(scheduler_config, simulate_other_schedulers, feature_gates)
    source = Source(ENV.prog, f"{opts.source_args} {simulation}".strip())
    wide = opts.output is Output.wide
    if isinstance(target, str):
        one = resolve_pod(state, target, opts.source)
        with progress(opts, f"explaining {one.key}"), paused_gc():
            result = explain_pod(state, one, profiles=profiles)
        lost, lines = lost_pod_parts(opts, state, one.key, profiles)
        def view() -> object:
            from rich.console import Group

            return Group(explanation_table(result, top=top, all_nodes=all_nodes, wide=wide, source=source), *lines)

        emit(opts.output, {**explanation_dict(result), **lost}, view)
        return ExitCode.UNKNOWN if result.unknown else ExitCode.OK
    # A workload: every Pending pod of it (replicas of one template read alike: a table shows the first).
    pods = workload_pods(state, target, opts.source)
    pending = sorted((p for p in pods if p.is_pending), key=queue_key)
    results = []
    with progress(opts, f"explaining the Pending pods of {target}") as p, paused_gc():
        for i, each in enumerate(pending if not is_table(opts.output) else pending[:1]):
            p.update(f"explaining the Pending pods of {target}: {i} of {len(pending)} done")
            results.append(explain_pod(state, each, profiles=profiles))
    if not pending:
        none = f"{none_pending(target, pods)}: nothing to explain (explain POD says why a running one runs " \
               "where it does)"
        if is_table(opts.output):
            ENV.out.print(Hanging(none, first="", rest="  "), crop=False)
            return 0
        ENV.say(f"note: {none}")
    others = tuple(q.key for q in pending[1:])
    emit(opts.output, {"explanations": [explanation_dict(r) for r in results]},
         lambda: explanation_table(results[0], top=top, all_nodes=all_nodes, wide=wide, source=source,
                                   also=(str(target), others)))
    return ExitCode.UNKNOWN if any(r.unknown for r in results) else ExitCode.OK
