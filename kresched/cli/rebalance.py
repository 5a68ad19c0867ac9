"""`kresched rebalance`: controlled rescheduling (seed 003), every move simulated first."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from kresched.cli.act import (
    DryRun,
    DryRunOpt,
    YesOpt,
    cluster_dict,
    confirm,
    in_cluster,
    live_reporting,
    make_api,
    make_recorder,
    make_reporter,
    write_event,
    write_summary,
)
from kresched.cli.common import (
    ConfigOpt,
    ContextOpt,
    FeatureGatesOpt,
    KubeconfigOpt,
    NoColorOpt,
    Options,
    OtherSchedulersOpt,
    Output,
    OutputOpt,
    SchedulerConfigOpt,
    SnapshotOpt,
    at_least,
    command,
    emit,
    load_policy,
    load_profiles,
    make_options,
    parse_duration,
)
from kresched.cli.load import load_state
from kresched.cli.resolve import check_namespace
from kresched.errors import ExitCode, InputError
from kresched.plan.objectives import OBJECTIVES
from kresched.render.common import count
from kresched.sources.decode import paused_gc

if TYPE_CHECKING:
    from rich.console import RenderableType

    from kresched.execute.events import Event, Reporter
    from kresched.execute.rebalance import RebalanceResult
    from kresched.plan.policy import RebalancePolicy
    from kresched.plan.rebalance_plans import RebalanceOptions, RebalancePlan


ObjectiveOpt = Annotated[list[str] | None, typer.Option(
    "--objective", metavar="NAME[,NAME]",
    help=f"What to improve: {', '.join(OBJECTIVES)} (or utilization; repeatable or a comma list; default all).")]
RebalanceNamespaceOpt = Annotated[str | None, typer.Option(
    "--namespace", "-n", metavar="NAMESPACE", show_default=False,
    help="Move only pods of this namespace (pods of every namespace still count where they run).")]
RebalanceAllOpt = Annotated[bool, typer.Option("--all-namespaces", "-A",
                                               help="Move pods of every namespace (the default without -n).")]
ThresholdsOpt = Annotated[str | None, typer.Option(
    "--thresholds", metavar="RES=PCT,...",
    help="utilisation: a node below all of these request-% is underutilised (a destination; default "
         "cpu=20,memory=20,pods=20, or --config's).", show_default=False)]
TargetOpt = Annotated[str | None, typer.Option(
    "--target-thresholds", metavar="RES=PCT,...",
    help="utilisation: a node above any of these request-% is overutilised (a source; default "
         "cpu=50,memory=50,pods=50, or --config's).", show_default=False)]
MarginOpt = Annotated[int | None, typer.Option("--margin", metavar="POINTS", show_default=False,
                                               help="preferences: how many preference points (raw scores of the "
                                                    "preferred terms' weights) a move must gain (default 10, or "
                                                    "--config's).")]
LocalStorageOpt = Annotated[bool, typer.Option("--evict-local-storage-pods",
                                               help="Also move pods with emptyDir (their data is lost).")]
MaxMovesOpt = Annotated[int | None, typer.Option("--max-moves", callback=at_least(0), metavar="N",
                                                 help="Moves in total.")]
MaxPerNodeOpt = Annotated[int | None, typer.Option("--max-moves-per-node", callback=at_least(0), metavar="N",
                                                   help="Moves off any one node.")]
MaxPerNsOpt = Annotated[int | None, typer.Option("--max-moves-per-namespace", callback=at_least(0), metavar="N",
                                                 help="Moves in any one namespace.")]


#: Other spellings of the objectives: the American one (the descheduler's LowNodeUtilization).
OBJECTIVE_ALIASES = {"utilization": "utilisation"}


def parse_objectives(values: list[str] | None) -> tuple[str, ...]:
    if not values:
        return OBJECTIVES
    out = [OBJECTIVE_ALIASES.get(v.strip(), v.strip()) for item in values for v in item.split(",") if v.strip()]
    return tuple(dict.fromkeys(out))


def parse_thresholds(text: str, option: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = int(value.strip().rstrip("%"))
        except ValueError:
            raise InputError(f"{option}: expected RESOURCE=PERCENT (e.g. cpu=20,memory=20,pods=20), got {part!r}") \
                from None
    return out


def build_options(objective: list[str] | None, thresholds: str | None, target_thresholds: str | None,
                  margin: int | None, evict_local_storage_pods: bool, max_moves: int | None,
                  max_moves_per_node: int | None, max_moves_per_namespace: int | None,
                  policy: RebalancePolicy | None = None) -> RebalanceOptions:
    """The options: each flag given, else the policy's (`--config`), else the built-in default."""
    from kresched.plan.policy import RebalancePolicy
    from kresched.plan.rebalance_plans import RebalanceOptions, validate_options

    p = policy or RebalancePolicy()
    low = dict(p.thresholds) | (parse_thresholds(thresholds, "--thresholds") if thresholds is not None else {})
    high = dict(p.target_thresholds) | (parse_thresholds(target_thresholds, "--target-thresholds")
                                        if target_thresholds is not None else {})
    opts = RebalanceOptions(parse_objectives(objective) if objective else p.objectives, low, high,
                            p.margin if margin is None else margin, evict_local_storage_pods or p.evict_local_storage,
                            p.max_moves if max_moves is None else max_moves,
                            p.max_moves_per_node if max_moves_per_node is None else max_moves_per_node,
                            p.max_moves_per_namespace if max_moves_per_namespace is None else max_moves_per_namespace,
                            budget_buffer=p.budget_buffer)
    errors = validate_options(opts)
    if errors:
        raise InputError("; ".join(errors))
    return opts


@command
def rebalance_command(
    objective: ObjectiveOpt = None,
    thresholds: ThresholdsOpt = None,
    target_thresholds: TargetOpt = None,
    margin: MarginOpt = None,
    evict_local_storage_pods: LocalStorageOpt = False,
    max_moves: MaxMovesOpt = None,
    max_moves_per_node: MaxPerNodeOpt = None,
    max_moves_per_namespace: MaxPerNsOpt = None,
    parallel: Annotated[int, typer.Option("--parallel", callback=at_least(1), metavar="N",
                                          help="Workloads moving at once (the pods of one workload move one "
                                               "after another).")] = 5,
    timeout: Annotated[str, typer.Option("--timeout", metavar="DURATION",
                                         help="Stop waiting (for budgets, for replacements) after this; 0 = never.")]
    = "10m",
    yes: YesOpt = False,
    dry_run: DryRunOpt = DryRun.none,
    config: ConfigOpt = None,
    scheduler_config: SchedulerConfigOpt = None,
    feature_gates: FeatureGatesOpt = None,
    simulate_other_schedulers: OtherSchedulersOpt = False,
    namespace: RebalanceNamespaceOpt = None,
    all_namespaces: RebalanceAllOpt = False,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
) -> int:
    """Move running pods where the scheduler would now put them better: off nodes whose constraints
    stopped holding (violations), onto nodes that meet more of their preferences (preferences), off
    overutilised nodes onto underutilised ones (utilisation, the descheduler's LowNodeUtilization).
    Every move is simulated: the replacement must land on the intended kind of node, within PDBs,
    and the next pass would not move it back.

    --dry-run prints the plan only. Exit codes: 0 done (or nothing to move), 2 not confirmed (no
    --yes and no terminal), 4 not finished (a PDB still refused, or a replacement not Ready by
    --timeout), 130 interrupted.

    Examples:

    \b
      kresched rebalance --snapshot demo --dry-run
      kresched rebalance --snapshot demo --dry-run --objective utilisation --target-thresholds cpu=60,memory=60 -o json
      kresched rebalance --snapshot demo --dry-run --objective violations,preferences --max-moves 5 -o wide
    """
    # Imported here, not at the top: every other verb, and a client dry run, start without them.
    from kresched.plan.rebalance import plan_rebalance
    from kresched.render.rebalance import rebalance_dict, rebalance_view

    opts = make_options(snapshot, kubeconfig, context, output, no_color, namespace, all_namespaces)
    policy = load_policy(config)
    ropts = build_options(objective, thresholds, target_thresholds, margin, evict_local_storage_pods, max_moves,
                          max_moves_per_node, max_moves_per_namespace, policy.rebalance)
    ropts = replace(ropts, profiles=load_profiles(scheduler_config, simulate_other_schedulers,
                                                  offline=snapshot is not None, feature_gates=feature_gates),
                    namespace=namespace)
    limit = parse_duration(timeout, "--timeout")
    state = load_state(opts)
    if namespace is not None:
        check_namespace(state, namespace, opts.source)
    with paused_gc():
        plan = plan_rebalance(state, ropts)
    if dry_run is DryRun.client:
        emit(opts.output, rebalance_dict(plan), lambda: rebalance_view(plan))
        return ExitCode.OK
    # Acting for real (or with dryRun=All): only now the execution layer.
    from kresched.execute.events import Event
    from kresched.execute.preempt import Terminated, signals_as_exceptions
    from kresched.execute.rebalance import RebalanceOptions as ExecOptions
    from kresched.execute.rebalance import RebalanceResult, rebalance
    api = make_api(opts, state, dry_run)
    report = make_reporter(opts, api.mode)
    write_event(opts, {"action": "plan", **rebalance_dict(plan)}, lambda: rebalance_view(plan))
    result = RebalanceResult()
    if not plan.moves:
        _summarise(opts, report, plan, result, api.mode, "nothing to move")
        return ExitCode.OK
    if not confirm(f"Evict {count(len(plan.moves), 'pod')} so that their replacements land as planned"
                   f"{in_cluster(opts)}?", yes):
        _summarise(opts, report, plan, result, api.mode, "not confirmed: nothing was changed")
        return ExitCode.OK
    try:
        with signals_as_exceptions(), make_recorder(api, "rebalance") as recorder, \
                live_reporting(opts, api.mode) as live:
            rebalance(api, plan, ExecOptions(parallel, limit or None), live, result=result, recorder=recorder)
    except (KeyboardInterrupt, Terminated):
        _summarise(opts, report, plan, result, api.mode, left_behind=[
            Event("interrupted", "interrupted: no new evictions were started", {}, "error")])
        return ExitCode.INTERRUPTED
    _summarise(opts, report, plan, result, api.mode)
    return ExitCode.OK if result.complete else ExitCode.PARTIAL


def _summarise(opts: Options, report: Reporter, plan: RebalancePlan, result: RebalanceResult, mode: str,
               nothing: str | None = None, left_behind: list[Event] | None = None) -> None:
    """The summary document (the plan with where each replacement landed, and predicted against
    actual), always the run's last; `nothing`: why nothing was done, as its closing line."""
    from kresched.render.rebalance import rebalance_dict, rebalance_summary, summary_view

    outcome = rebalance_summary(plan, result, mode)
    if nothing is not None:
        outcome["message"] = nothing
    data = {**rebalance_dict(plan, result), "result": outcome, "mode": mode, "cluster": cluster_dict(opts),
            "message": outcome["message"]}
    def view() -> RenderableType:
        from rich.text import Text

        return Text(nothing, style="bold") if nothing is not None else summary_view({**outcome,
                                                                                      "cluster": data["cluster"]})

    write_summary(opts, report, data, view, left_behind or ())
