"""`kresched plan`: the dry run — node, victims, tier, and where the victims land afterwards."""

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
from kresched.errors import ExitCode, InputError
from kresched.model.cluster import parse_pod_ref
from kresched.plan.planner import PlanOptions, pending_pods_to_plan, plan_pending, plan_pod
from kresched.render.plan import plan_dict, plan_view, plans_dict, plans_view

MaxGraceOpt = Annotated[int, typer.Option("--max-grace", min=0, metavar="SECONDS",
                                          help="Tier 1 takes only victims with a grace period up to this; "
                                               "longer ones are shortened to it on eviction.")]
AllowPdbOpt = Annotated[bool, typer.Option("--allow-pdb-violation",
                                           help="Allow tier-3 plans that violate PodDisruptionBudgets.")]


@command
def plan(
    pod: Annotated[str | None, typer.Option(
        "--pod", "-p", metavar="NS/NAME", help="Plan for this pod; without it, for every pending critical pod.",
    )] = None,
    all_pending: Annotated[bool, typer.Option("--all-pending", help="Without --pod: every pending pod, "
                                                                    "not only critical ones.")] = False,
    max_grace: MaxGraceOpt = 10,
    allow_pdb_violation: AllowPdbOpt = False,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
) -> int:
    """Dry run: which node, which victims, which tier, and where the victims land afterwards.

    Exit code 0 when every pod planned fits or can be made to fit, 3 when one cannot.

    Examples:

      kresched plan --snapshot demo

      kresched plan --pod kube-system/metrics-server-7f9c -o json

      kresched plan --all-pending --snapshot cluster.json.gz
    """
    opts = make_options(snapshot, kubeconfig, context, output, no_color)
    if pod is not None and all_pending:
        raise InputError("--pod and --all-pending are exclusive")
    if pod is not None:  # `--pod ""` (an empty variable in a script) must not plan every pending pod
        try:
            parse_pod_ref(pod)
        except ValueError as exc:
            raise InputError(str(exc)) from None
    state = load_state(opts)
    options = PlanOptions(max_grace_seconds=max_grace, allow_pdb_violation=allow_pdb_violation)
    if pod is not None:
        target = resolve_pod(state, pod, opts.snapshot or "the cluster")
        if target.spec.node_name:
            raise InputError(f"pod {target.key} is not Pending: it is bound to node {target.spec.node_name} "
                             f"(phase {target.status.phase or 'unknown'})")
        result = plan_pod(state, target, options)
        emit(opts.output, plan_dict(result), lambda: plan_view(result, state))
        return ExitCode.INFEASIBLE if result.outcome == "infeasible" else ExitCode.OK
    plans = plan_pending(state, pending_pods_to_plan(state, all_pending), options)
    emit(opts.output, plans_dict(plans), lambda: plans_view(plans, state))
    return ExitCode.INFEASIBLE if any(p.outcome == "infeasible" for p in plans) else ExitCode.OK
