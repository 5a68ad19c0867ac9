"""`kresched drain`: a drain with a real pre-flight — PDB blockers, where every pod lands."""

from __future__ import annotations

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
    ENV,
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
    is_table,
    load_profiles,
    make_options,
    parse_duration,
)
from kresched.cli.complete import complete_nodes
from kresched.cli.load import load_state
from kresched.cli.progress import progress
from kresched.cli.resolve import resolve_nodes
from kresched.errors import ExitCode, InputError, KreschedError
from kresched.model.cluster import ClusterState
from kresched.model.selectors import label_selector_matches
from kresched.render.common import count
from kresched.sources.decode import paused_gc

if TYPE_CHECKING:
    from kresched.execute.drain import DrainResult
    from kresched.execute.events import Event, Reporter
    from kresched.plan.drain import DrainPlan


#: kubectl drain waits forever by default; a CI gate needs an end, and a PodDisruptionBudget that
#: nothing gives back must fail the run rather than hang it.
DEFAULT_TIMEOUT = "10m"


@command
def drain_command(
    nodes: Annotated[list[str] | None, typer.Argument(metavar="NODE...", show_default=False,
                                                      autocompletion=complete_nodes,
                                                      help="The node(s) to drain: NODE or node/NODE.")] = None,
    selector: Annotated[str | None, typer.Option("--selector", "-l", metavar="SELECTOR",
                                                 help="Drain the nodes with these labels (e.g. -l "
                                                      "topology.kubernetes.io/zone=eu-west-1b).")] = None,
    ignore_daemonsets: Annotated[bool, typer.Option("--ignore-daemonsets", help="Ignore DaemonSet-managed pods.")]
    = False,
    delete_emptydir_data: Annotated[bool, typer.Option("--delete-emptydir-data",
                                                       help="Evict pods using emptyDir (their data is lost).")]
    = False,
    force: Annotated[bool, typer.Option("--force", help="Also evict pods no controller manages (gone for good).")]
    = False,
    grace_period: Annotated[int, typer.Option("--grace-period", metavar="SECONDS",
                                              help="Grace period for every pod; -1 = each pod's own.")] = -1,
    timeout: Annotated[str, typer.Option("--timeout", metavar="DURATION",
                                         help="Give up waiting (for budgets, for pods to go) after this; 0 = never "
                                              "(kubectl's default).")] = DEFAULT_TIMEOUT,
    pod_selector: Annotated[str | None, typer.Option("--pod-selector", metavar="SELECTOR",
                                                     help="Only pods matching this label selector.")] = None,
    disable_eviction: Annotated[bool, typer.Option("--disable-eviction",
                                                   help="DELETE instead of evicting: bypasses PodDisruptionBudgets.")]
    = False,
    parallel: Annotated[int, typer.Option("--parallel", callback=at_least(1), metavar="N",
                                          help="How many evictions are in flight at once (the pods of one "
                                               "PodDisruptionBudget go one after another).")] = 10,
    allow_pending: Annotated[bool, typer.Option("--allow-pending", help="Drain even if some evicted pods would "
                                                                        "find no node.")] = False,
    allow_gang_disruption: Annotated[bool, typer.Option(
        "--allow-gang-disruption", help="Drain even if it stops a running gang (evicting members takes it below "
                                        "its minCount: all its members stop).")] = False,
    out_of_service: Annotated[bool, typer.Option(
        "--out-of-service", help="For a lost node whose machine is really off: the non-graceful node shutdown (taint "
                                 "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute), then wait for the "
                                 "replacements.")] = False,
    yes: YesOpt = False,
    dry_run: DryRunOpt = DryRun.none,
    scheduler_config: SchedulerConfigOpt = None,
    feature_gates: FeatureGatesOpt = None,
    simulate_other_schedulers: OtherSchedulersOpt = False,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
) -> int:
    """Drain nodes with a pre-flight first: which PodDisruptionBudget covers each pod and whether it
    allows the eviction now, where each pod would land, and what would stay Pending.

    A running gang (the workers of a training job, all or nothing) whose members the drain would
    take below its minCount stops whole: the pre-flight names it, and the drain is refused unless
    --allow-gang-disruption accepts it, as a disruption a PodDisruptionBudget would refuse.

    --dry-run (=client) prints the pre-flight only. Nothing is touched (not even a cordon) when the
    drain is refused. Exit codes: 0 drained (with --dry-run: the drain would finish), 2 not
    confirmed (no --yes and no terminal), 3 refused (pods kubectl would refuse without a flag, pods
    left Pending without --allow-pending, a gang stopped without --allow-gang-disruption; with
    --dry-run also an eviction a PodDisruptionBudget
    refuses that nothing the drain does gives back, so it could only end at --timeout), 4 not
    finished (blocked by a PodDisruptionBudget or still terminating at --timeout), 130
    interrupted. The nodes stay cordoned after a drain that did not finish: `kubectl uncordon` them.
    --timeout defaults to 10m (kubectl's drain waits forever), so a stuck drain ends a CI job.

    A lost node (its kubelet stopped reporting) is refused: its evictions would never complete.
    If its machine is really off, --out-of-service carries out Kubernetes' non-graceful node
    shutdown instead: after a confirmation it adds node.kubernetes.io/out-of-service=nodeshutdown:
    NoExecute (its pods are force-deleted, its volumes detached), waits until the replacements are
    bound, and reports where they went against the prediction. The taint stays until the machine is
    back: `kresched untaint NODE --out-of-service` removes it.

    Examples:

    \b
      kresched drain worker-b3 --ignore-daemonsets --dry-run --snapshot demo
      kresched drain node/worker-b3 --ignore-daemonsets --delete-emptydir-data --force --dry-run --snapshot demo
      kresched drain -l topology.kubernetes.io/zone=eu-west-1c --ignore-daemonsets --dry-run --snapshot demo -o json
    """
    # Imported here, not at the top: every other verb, and a client dry run, start without them.
    from kresched.plan.drain import DrainOptions, parse_selector, plan_drain
    from kresched.render.drain import preflight_dict, preflight_view

    opts = make_options(snapshot, kubeconfig, context, output, no_color)
    try:
        pods_selected = parse_selector(pod_selector) if pod_selector else None
    except ValueError as exc:
        raise InputError(f"--pod-selector: {exc}") from None
    try:
        nodes_selected = parse_selector(selector) if selector else None
    except ValueError as exc:
        raise InputError(f"--selector: {exc}") from None
    if not nodes and nodes_selected is None:
        raise InputError("a node is required: NODE..., node/NODE or -l SELECTOR")
    limit = parse_duration(timeout, "--timeout")
    profiles = load_profiles(scheduler_config, simulate_other_schedulers, offline=snapshot is not None,
                             feature_gates=feature_gates)
    state = load_state(opts)
    names = _node_names(state, nodes or [], nodes_selected, selector)
    with progress(opts, f"simulating the drain of {', '.join(names)}"), paused_gc():
        plan = plan_drain(state, names, DrainOptions(ignore_daemonsets, delete_emptydir_data, force, disable_eviction,
                                                     pods_selected, profiles))
    from kresched.cli.lost import drain_lost  # a lost node: refused, or taken out of service

    lost = drain_lost(opts, state, names, plan, out_of_service=out_of_service, yes=yes, dry_run=dry_run,
                      timeout_seconds=limit or float("inf"), profiles=profiles)
    if lost is not None:
        return lost
    if dry_run is DryRun.client:
        emit(opts.output, preflight_dict(plan), lambda: preflight_view(plan, wide=opts.output is Output.wide))
        return _dry_run_verdict(opts, plan, allow_pending, timeout, allow_gang_disruption)
    # Acting for real (or with dryRun=All): only now the execution layer.
    from kresched.execute.drain import DrainOptions as ExecOptions
    from kresched.execute.drain import DrainResult, drain
    from kresched.execute.events import Event
    from kresched.execute.preempt import Terminated, signals_as_exceptions
    api = make_api(opts, state, dry_run)
    report = make_reporter(opts, api.mode)
    write_event(opts, {"action": "preflight", **preflight_dict(plan)},
                lambda: preflight_view(plan, wide=opts.output is Output.wide))
    result = DrainResult()
    # Refusals are decided before anything is touched: not even a cordon. The pre-flight above
    # names the pods; the refusal says why nothing was done.
    if plan.errors:
        refusals = [Event("refused", f"error: {line}", {"errors": plan.kubectl_errors()}, "error")
                    for line in plan.refusals()]
        _summarise(opts, report, result, names, api.mode, f"kubectl would refuse {count(len(plan.errors), 'pod')} "
                   "without a flag (above); nothing was changed", documents=refusals)
        return ExitCode.INFEASIBLE
    if plan.pending and not allow_pending:
        pending = [p.pod.key for p in plan.pending]
        refusal = (f"{count(len(pending), 'pod')} would stay Pending (above); nothing was changed: --allow-pending "
                   "drains anyway")
        _summarise(opts, report, result, names, api.mode, refusal,
                   documents=[Event("refused", refusal, {"pods": pending}, "error")])
        return ExitCode.INFEASIBLE
    if plan.stopped_gangs and not allow_gang_disruption:
        refusal = (f"it would stop {_gangs_text(plan)} (above); nothing was changed: --allow-gang-disruption drains "
                   "anyway")
        _summarise(opts, report, result, names, api.mode, refusal,
                   documents=[Event("refused", refusal, {"gangs": [g.gang for g in plan.stopped_gangs]}, "error")])
        return ExitCode.INFEASIBLE
    total = sum(len(n.evict) for n in plan.nodes)
    if not confirm(f"Cordon {', '.join(names)} and evict {count(total, 'pod')}{in_cluster(opts)}?", yes):
        _summarise(opts, report, result, names, api.mode, "not confirmed: nothing was changed")
        return ExitCode.OK
    exec_opts = ExecOptions(parallel, grace_period if grace_period >= 0 else None, limit or None, disable_eviction)
    uncordon = f"kubectl uncordon {' '.join(names)}"
    try:
        with signals_as_exceptions(), make_recorder(api, "drain") as recorder, \
                live_reporting(opts, api.mode) as live:
            drain(api, plan, exec_opts, live, result=result, recorder=recorder)
    except KreschedError as exc:  # RBAC refusal, unreachable server: the cordon stays, say how to undo it
        _summarise(opts, report, result, names, api.mode)
        if not result.cordoned or api.mode != "cluster":
            raise
        left = result.cordoned
        raise type(exc)(f"{exc.message}; {', '.join(left)} {_stay(left)} cordoned: `kubectl uncordon "
                        f"{' '.join(left)}` removes the cordon", exc.exit_code) from None
    except (KeyboardInterrupt, Terminated):
        _summarise(opts, report, result, names, api.mode, left_behind=[Event(
            "interrupted", f"interrupted: no new evictions were started; {', '.join(names)} {_stay(names)} cordoned "
                           f"({uncordon} to undo)", {"uncordon": uncordon}, "error")])
        return ExitCode.INTERRUPTED
    left_behind = [] if result.complete or api.mode != "cluster" else [Event(
        "incomplete", f"the drain did not finish; {', '.join(names)} {_stay(names)} cordoned ({uncordon} to undo)",
        {"uncordon": uncordon}, "error")]
    _summarise(opts, report, result, names, api.mode, left_behind=left_behind)
    return ExitCode.OK if result.complete else ExitCode.PARTIAL


def _node_names(state: ClusterState, refs: list[str], selected: object, selector: str | None) -> list[str]:
    names = [n.name for n in resolve_nodes(state, refs)]
    if selected is not None:
        matching = [n.name for n in state.nodes if label_selector_matches(selected, n.labels)]  # type: ignore[arg-type]
        if not matching:
            raise InputError(f"no nodes match the selector {selector}")
        names = list(dict.fromkeys(names + sorted(matching)))
    return names


def _gangs_text(plan: DrainPlan) -> str:
    """`PodGroup ml/train (4 running, minCount 4)`, or `2 gangs: ...`."""
    each = [f"{g.gang} ({g.running} running, minCount {g.min_count})" for g in plan.stopped_gangs]
    return each[0] if len(each) == 1 else f"{len(each)} gangs: {', '.join(each)}"


def _dry_run_verdict(opts: Options, plan: DrainPlan, allow_pending: bool, timeout: str,
                     allow_gang_disruption: bool = False) -> int:
    """The exit code a CI gate reads from `--dry-run`, with the reason on stderr when it is not 0;
    a table that would finish ends as kubectl's dry run does (`node/worker-b3 drained (dry run)`)."""
    reasons = []
    if plan.errors:
        reasons.append(f"kubectl would refuse {count(len(plan.errors), 'pod')} without {' '.join(plan.flags())}")
    pending = [*(p.pod.key for p in plan.pending), *(e.pod.key for e in plan.pending_once_lifted)]
    if pending and not allow_pending:
        reasons.append(f"{count(len(pending), 'pod')} would stay Pending ({', '.join(pending)}: what holds each is "
                       "above; --allow-pending drains anyway)")
    if plan.blocked:
        reasons.append(f"{count(len(plan.blocked), 'eviction')} would be refused by a PodDisruptionBudget that "
                       f"nothing the drain does gives back ({', '.join(p.pod.key for p in plan.blocked)}), so the "
                       "drain " + ("would wait forever (--timeout 0)" if parse_duration(timeout, "--timeout") == 0
                                   else f"would stop unfinished at --timeout {timeout}"))
    if plan.stopped_gangs and not allow_gang_disruption:
        reasons.append(f"it would stop {_gangs_text(plan)}: a gang runs all or nothing (--allow-gang-disruption "
                       "drains anyway)")
    if not reasons:
        if is_table(opts.output):
            evicted = sum(len(n.evict) for n in plan.nodes)
            ENV.out.print(f"{', '.join(f'node/{n.node}' for n in plan.nodes)} drained: {count(evicted, 'pod')} "
                          "evicted (dry run)", markup=False, highlight=False, crop=False, soft_wrap=True)
        return ExitCode.OK
    ENV.say(f"error: the drain would not finish: {'; '.join(reasons)}")
    return ExitCode.INFEASIBLE


def _summarise(opts: Options, report: Reporter, result: DrainResult, nodes: list[str], mode: str,
               refused: str | None = None, left_behind: list[Event] | None = None,
               documents: list[Event] | None = None) -> None:
    """The drain's summary, always its last word (`refused`: why nothing was done)."""
    from kresched.render.drain import drain_summary, drain_view

    data = drain_summary(result, nodes, mode, cluster_dict(opts))
    if refused is not None:
        data["complete"] = False
        data["message"] = f"{', '.join(f'node/{n}' for n in nodes)} not drained: {refused}"
    write_summary(opts, report, data, lambda: drain_view(data), left_behind or (), documents or ())


def _stay(names: list[str]) -> str:
    return "stays" if len(names) == 1 else "stay"
