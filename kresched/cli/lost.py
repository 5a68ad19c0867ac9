"""What the verbs share about lost nodes (`kresched.plan.lost`): the moment a timeline is told
from, `explain node/NAME`, and `drain` on a lost node (refused, or `--out-of-service`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from kresched.cli.act import DryRun
from kresched.cli.common import ENV, Options, Output, emit
from kresched.model.cluster import ClusterState
from kresched.plan.lost import OUT_OF_SERVICE_TAINT, NodeLoss, observed_at
from kresched.sched.profile import Profiles
from kresched.sources.decode import paused_gc

if TYPE_CHECKING:
    from kresched.plan.drain import DrainPlan

__all__ = ["drain_lost", "explain_node", "lost_pod_parts", "now_for"]


def now_for(opts: Options, state: ClusterState) -> float:
    """"Now" for a live cluster; for a snapshot, when it was taken as well as it tells
    (`plan.lost.observed_at`: the latest of its Lease renewals and other forward-only times), else
    now: a recorded timeline reads as it did when it was recorded."""
    if opts.snapshot is not None:
        taken = observed_at(state)
        if taken is not None:
            return taken
    return time.time()


def explain_node(opts: Options, state: ClusterState, name: str, profiles: Profiles) -> int:
    """`explain node/NAME`: whether the node is lost and, if it is, its recovery timeline."""
    from kresched.cli.progress import progress
    from kresched.plan.recovery import recovery_timeline
    from kresched.render.recovery import recovery_dict, recovery_view

    with progress(opts, f"explaining node/{name}"), paused_gc():
        recovery = recovery_timeline(state, name, now_for(opts, state), profiles)
    emit(opts.output, recovery_dict(recovery), lambda: recovery_view(recovery))
    return 0


def lost_pod_parts(opts: Options, state: ClusterState, pod_key: str,
                   profiles: Profiles) -> tuple[dict[str, Any], list[Any]]:
    """For `explain POD` when POD is bound to a lost node: `{"lostNode": {...the node..., "fate": {...}}}`
    for the JSON, and the lines for the table; nothing otherwise."""
    from kresched.plan.lost import is_lost
    from kresched.plan.recovery import recovery_timeline
    from kresched.render.recovery import fate_dict, fate_line, loss_dict, lost_line
    from kresched.render.table import Hanging

    pod = state.pod(pod_key)
    node = state.node_by_name.get(pod.node_name) if pod is not None and pod.node_name else None
    if node is None or not is_lost(node):
        return {}, []
    with paused_gc():
        recovery = recovery_timeline(state, node.name, now_for(opts, state), profiles)
    fate = next((f for f in recovery.pods if f.pod.key == pod_key), None)
    if fate is None:  # finished: nothing happens to it
        return {"lostNode": loss_dict(recovery.loss)}, [Hanging(lost_line(recovery.loss), first="  ! ")]
    lines = [Hanging(lost_line(recovery.loss), first="  ! "),
             Hanging(f"then: {fate_line(fate, node.name)}", first="    ")]
    lines += [Hanging(w, first="    • ") for w in fate.waits_for]
    args = f" {opts.source_args}" if opts.source_args else ""
    lines.append(Hanging(f"the node's whole timeline: {ENV.prog} explain node/{node.name}{args}", first="    "))
    return {"lostNode": {**loss_dict(recovery.loss), "fate": fate_dict(fate)}}, lines


def drain_lost(opts: Options, state: ClusterState, names: list[str], plan: DrainPlan, *, out_of_service: bool,
               yes: bool, dry_run: DryRun, timeout_seconds: float, profiles: Profiles) -> int | None:
    """`drain` when a named node is lost, or with --out-of-service; None: an ordinary drain.

    Without --out-of-service a lost node is refused before anything is touched: its evictions
    would never complete, and the pre-flight says so. With it, every named node must be lost; the
    operator confirms the machine is off, then `execute.outofservice` taints it and waits."""
    from kresched.errors import InputError
    from kresched.plan.lost import node_loss

    now = now_for(opts, state)
    losses = {n: node_loss(state, n, now) for n in names}
    lost = [n for n in names if losses[n].is_lost]
    if out_of_service and len(lost) < len(names):
        alive = [n for n in names if n not in lost]
        raise InputError(f"--out-of-service: {', '.join(f'node/{n}' for n in alive)} "
                         f"{'is' if len(alive) == 1 else 'are'} not lost ({losses[alive[0]].summary()}); the taint "
                         "force-deletes pods and detaches volumes, only for a machine that is really off: drain "
                         "it without --out-of-service")
    if not lost:
        return None
    if not out_of_service:
        return _refuse_lost(opts, plan, [losses[n] for n in lost], names, dry_run)
    return _out_of_service(opts, state, names, now, yes, dry_run, timeout_seconds, profiles)


def _refuse_lost(opts: Options, plan: DrainPlan, losses: list[NodeLoss], names: list[str], dry_run: DryRun) -> int:
    """The pre-flight with the lost nodes named, and the refusal: nothing is touched."""
    from kresched.cli.act import cluster_dict, make_reporter, write_event, write_summary
    from kresched.errors import ExitCode
    from kresched.execute.drain import DrainResult
    from kresched.execute.events import Event
    from kresched.render.drain import drain_summary, drain_view, preflight_dict, preflight_view
    from kresched.render.recovery import loss_dict, lost_line
    from kresched.render.table import Hanging

    lines = [lost_line(loss) for loss in losses]
    data = {**preflight_dict(plan), "lost": [loss_dict(loss) for loss in losses]}

    def view() -> object:
        wide = opts.output is Output.wide
        return _group(*(Hanging(line, first="! ") for line in lines), preflight_view(plan, wide=wide))

    lost = [loss.node for loss in losses]
    args = f" {opts.source_args}" if opts.source_args else ""
    why = (f"{', '.join(f'node/{n}' for n in lost)} {'is' if len(lost) == 1 else 'are'} lost: evictions there never "
           f"complete by themselves; if the machine is really off, --out-of-service carries out the non-graceful node "
           f"shutdown ({ENV.prog} explain node/{lost[0]}{args} tells what it changes)")
    if dry_run is DryRun.client:
        from kresched.cli.common import is_table, write_doc
        from kresched.render.drain import dry_run_summary

        if is_table(opts.output):
            ENV.out.print(view(), crop=False)
        else:  # the stream of an ordinary dry run, the lost nodes named
            write_doc(opts.output, {"action": "preflight", **data})
            write_doc(opts.output, {"action": "summary", **dry_run_summary(plan, names, [why], cluster_dict(opts)),
                                    "lost": lost})
        ENV.say(f"error: the drain would never finish: {why}")
        return ExitCode.INFEASIBLE
    mode = "server dry run" if dry_run is DryRun.server else "cluster"
    report = make_reporter(opts, mode)
    write_event(opts, {"action": "preflight", **data}, view)
    summary = drain_summary(DrainResult(), names, mode, cluster_dict(opts))
    summary["complete"] = False
    summary["message"] = f"{', '.join(f'node/{n}' for n in names)} not drained: {why}; nothing was changed"
    write_summary(opts, report, summary, lambda: drain_view(summary),
                  documents=[Event("refused", f"error: {why}", {"lost": lost}, "error")])
    ENV.say(f"error: nothing was changed: {why}")
    return ExitCode.INFEASIBLE


def _out_of_service(opts: Options, state: ClusterState, names: list[str], now: float, yes: bool, dry_run: DryRun,
                    timeout_seconds: float, profiles: Profiles) -> int:
    """Show each node's timeline once out of service, confirm that the machines are off, taint and
    watch (`execute.outofservice`), then report where the new pods went against the prediction."""
    from kresched.cli.act import cluster_dict, confirm, in_cluster, make_api, make_reporter, write_event, write_summary
    from kresched.errors import ExitCode
    from kresched.execute.outofservice import out_of_service
    from kresched.plan.recovery import recovery_timeline
    from kresched.render.recovery import out_of_service_summary, out_of_service_view, recovery_dict, recovery_view

    with paused_gc():
        recoveries = [recovery_timeline(state, n, now, profiles) for n in names]
    if dry_run is DryRun.client:
        from kresched.cli.common import is_table, write_doc

        if is_table(opts.output):
            ENV.out.print(_group(*(recovery_view(r) for r in recoveries)), crop=False)
            return ExitCode.OK
        # The stream the real run writes, whatever the number of nodes: a pre-flight per node, then
        # the summary (nothing tainted, nothing waited for).
        for r in recoveries:
            write_doc(opts.output, {"action": "preflight", **recovery_dict(r)})
        data = out_of_service_summary([], "dry run", cluster_dict(opts),
                                      refused=f"{', '.join(f'node/{n}' for n in names)} would be tainted "
                                              f"{OUT_OF_SERVICE_TAINT}")
        write_doc(opts.output, {"action": "summary", **data, "complete": True})  # as the exit code: 0
        return ExitCode.OK
    api = make_api(opts, state, dry_run)
    report = make_reporter(opts, api.mode)
    if dry_run is not DryRun.client:
        for r in recoveries:
            write_event(opts, {"action": "preflight", **recovery_dict(r)}, lambda r=r: recovery_view(r))
    which = ", ".join(names)
    question = (f"{which} must really be off (powered down, or unable ever to run its pods again): the "
                f"{OUT_OF_SERVICE_TAINT} taint force-deletes {'its' if len(names) == 1 else 'their'} pods and "
                f"detaches {'its' if len(names) == 1 else 'their'} volumes even if something there still uses them. "
                f"Is the machine of {which} shut down, and taint it out of service{in_cluster(opts)}?")
    if not confirm(question, yes):
        data = out_of_service_summary([], api.mode, cluster_dict(opts), refused="not confirmed: nothing was changed")
        write_summary(opts, report, data, lambda: out_of_service_view([], data))
        return ExitCode.OK
    results = []
    for r in recoveries:
        fates = r.out_of_service if r.out_of_service is not None else r.pods
        selectors = {f.pod.key: state.replica_selector(f.pod) for f in fates}
        results.append(out_of_service(api, r.loss.node, fates, selectors, timeout_seconds, report))
    data = out_of_service_summary(results, api.mode, cluster_dict(opts))
    write_summary(opts, report, data, lambda: out_of_service_view(results, data))
    return ExitCode.OK if all(x.complete for x in results) else ExitCode.PARTIAL


def _group(*parts: object) -> object:
    from rich.console import Group

    return Group(*parts)  # type: ignore[arg-type]
