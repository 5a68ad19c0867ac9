"""`kresched drain`: a drain with a real pre-flight — PDB blockers, where every pod lands."""

from __future__ import annotations

from typing import Annotated

import typer

from kresched.cli.act import (
    DryRunOpt,
    ServerDryRunOpt,
    YesOpt,
    confirm,
    json_lines,
    live_reporting,
    make_api,
    make_reporter,
    write_json_line,
)
from kresched.cli.common import (
    ENV,
    ContextOpt,
    KubeconfigOpt,
    NoColorOpt,
    Options,
    Output,
    OutputOpt,
    SnapshotOpt,
    command,
    emit,
    load_state,
    make_options,
    parse_duration,
)
from kresched.errors import ExitCode, InputError, KreschedError
from kresched.execute.drain import DrainOptions as ExecOptions
from kresched.execute.drain import DrainResult, drain
from kresched.execute.events import Event
from kresched.execute.preempt import Terminated, signals_as_exceptions
from kresched.plan.drain import DrainOptions, parse_selector, plan_drain
from kresched.render.drain import drain_summary, preflight_dict, preflight_view
from kresched.render.events import summary_text


@command
def drain_command(
    nodes: Annotated[list[str], typer.Argument(metavar="NODE...", help="The node(s) to drain.")],
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
                                         help="Stop waiting (for budgets, for pods to go) after this; 0 = never.")]
    = "0",
    pod_selector: Annotated[str | None, typer.Option("--pod-selector", metavar="SELECTOR",
                                                     help="Only pods matching this label selector.")] = None,
    disable_eviction: Annotated[bool, typer.Option("--disable-eviction",
                                                   help="DELETE instead of evicting: bypasses PodDisruptionBudgets.")]
    = False,
    parallel: Annotated[int, typer.Option("--parallel", min=1, help="How many evictions are in flight at once "
                                                                   "(the pods of one PodDisruptionBudget go one "
                                                                   "after another).")] = 10,
    allow_pending: Annotated[bool, typer.Option("--allow-pending", help="Drain even if some evicted pods would "
                                                                        "find no node.")] = False,
    yes: YesOpt = False,
    dry_run: DryRunOpt = False,
    server_dry_run: ServerDryRunOpt = False,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
) -> int:
    """Drain nodes with a pre-flight first: which PodDisruptionBudget covers each pod and whether it
    allows the eviction now, where each pod would land, and what would stay Pending.

    --dry-run prints the pre-flight only. Nothing is touched (not even a cordon) when the drain is
    refused. Exit codes: 0 drained, 2 not confirmed (no --yes and no terminal), 3 refused (pods
    kubectl would refuse without a flag, or pods left Pending without --allow-pending), 4 not
    finished (blocked by a PodDisruptionBudget or still terminating at --timeout), 130 interrupted.
    The nodes stay cordoned after a drain that did not finish: `kubectl uncordon` them.

    Examples:

      kresched drain node-7 --ignore-daemonsets --dry-run --snapshot demo

      kresched drain node-7 node-8 --ignore-daemonsets --delete-emptydir-data --timeout 10m
    """
    opts = make_options(snapshot, kubeconfig, context, output, no_color)
    if dry_run and server_dry_run:  # as preempt: a client dry run sends nothing the server could check
        raise InputError("--dry-run and --server-dry-run are exclusive")
    try:
        selector = parse_selector(pod_selector) if pod_selector else None
    except ValueError as exc:
        raise InputError(f"--pod-selector: {exc}") from None
    limit = parse_duration(timeout, "--timeout")
    state = load_state(opts)
    unknown = [n for n in nodes if n not in state.node_by_name]
    if unknown:
        raise InputError(f"no such node: {', '.join(unknown)}")
    plan = plan_drain(state, list(dict.fromkeys(nodes)),
                      DrainOptions(ignore_daemonsets, delete_emptydir_data, force, disable_eviction, selector))
    if dry_run:
        emit(opts.output, preflight_dict(plan), lambda: preflight_view(plan))
        return ExitCode.INFEASIBLE if plan.errors or (plan.pending and not allow_pending) else ExitCode.OK
    api = make_api(opts, state, False, server_dry_run)
    report = make_reporter(opts, api.mode)
    if json_lines(opts):
        write_json_line({"action": "preflight", **preflight_dict(plan)})
    else:
        ENV.out.print(preflight_view(plan))
    # Refusals are decided before anything is touched: not even a cordon.
    if plan.errors:
        for line in plan.refusals():
            report(Event("refused", f"error: {line}", {"errors": plan.kubectl_errors()}, "error"))
        return ExitCode.INFEASIBLE
    if plan.pending and not allow_pending:
        report(Event("refused", f"{len(plan.pending)} pod(s) would stay Pending: "
                                f"{', '.join(p.pod.key for p in plan.pending)}; nothing was changed (pass "
                                "--allow-pending to drain anyway)", {"pods": [p.pod.key for p in plan.pending]},
                     "error"))
        return ExitCode.INFEASIBLE
    names = list(dict.fromkeys(nodes))
    total = sum(len(n.evict) for n in plan.nodes)
    if not confirm(f"Cordon {', '.join(names)} and evict {total} pod(s)?", yes):
        report(Event("aborted", "not confirmed: nothing was changed", {}, "warn"))
        return ExitCode.OK
    exec_opts = ExecOptions(parallel, grace_period if grace_period >= 0 else None, limit or None, disable_eviction)
    result = DrainResult()
    uncordon = f"kubectl uncordon {' '.join(names)}"
    try:
        with signals_as_exceptions(), live_reporting(opts, api.mode) as live:
            drain(api, plan, exec_opts, live, result=result)
    except KreschedError as exc:  # RBAC refusal, unreachable server: the cordon stays, say how to undo it
        _summarise(opts, result, names)
        if not result.cordoned or api.mode != "cluster":
            raise
        left = result.cordoned
        raise type(exc)(f"{exc.message}; {', '.join(left)} {_stay(left)} cordoned: `kubectl uncordon "
                        f"{' '.join(left)}` removes the cordon", exc.exit_code) from None
    except (KeyboardInterrupt, Terminated):
        _summarise(opts, result, names)
        report(Event("interrupted", f"interrupted: no new evictions were started; {', '.join(names)} {_stay(names)} "
                                    f"cordoned ({uncordon} to undo)", {"uncordon": uncordon}, "error"))
        return ExitCode.INTERRUPTED
    _summarise(opts, result, names)
    if not result.complete:
        report(Event("incomplete", f"the drain did not finish; {', '.join(names)} {_stay(names)} cordoned "
                                   f"({uncordon} to undo)", {"uncordon": uncordon}, "error"))
    return ExitCode.OK if result.complete else ExitCode.PARTIAL


def _summarise(opts: Options, result: DrainResult, nodes: list[str]) -> None:
    data = drain_summary(result, nodes)
    if json_lines(opts):
        write_json_line({"action": "summary", **data})
    else:
        ENV.out.print(summary_text(data))


def _stay(names: list[str]) -> str:
    return "stays" if len(names) == 1 else "stay"
