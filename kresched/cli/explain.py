"""`kresched explain`: why a pod is Pending, per node and filter, in the scheduler's own words."""

from __future__ import annotations

from typing import Annotated

import typer

from kresched.cli.common import (
    ContextOpt,
    KubeconfigOpt,
    NoColorOpt,
    Output,
    OutputOpt,
    SnapshotOpt,
    command,
    emit,
    load_state,
    make_options,
)
from kresched.cli.resolve import resolve_pod
from kresched.plan.explain import explain_pod
from kresched.render.explain import explanation_dict, explanation_table


@command
def explain(
    pod: Annotated[str, typer.Option("--pod", "-p", metavar="NS/NAME", help="The Pending pod to explain.")],
    all_nodes: Annotated[bool, typer.Option("--all-nodes", help="List every node, not only the nearest.")] = False,
    top: Annotated[int, typer.Option("--top", min=1, help="How many of the nearest nodes to list.")] = 10,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
) -> int:
    """Why a pod is Pending: every node's verdict, the scheduler's own message, and what would make it fit.

    Examples:

      kresched explain --pod kube-system/metrics-server-7f9c --snapshot demo

      kresched explain --pod web/api-0 -o json
    """
    opts = make_options(snapshot, kubeconfig, context, output, no_color)
    state = load_state(opts)
    target = resolve_pod(state, pod, opts.snapshot or "the cluster")
    result = explain_pod(state, target)
    emit(opts.output, explanation_dict(result), lambda: explanation_table(result, top=top, all_nodes=all_nodes))
    return 0
