"""`kresched reconcile`: one idempotent pass of the critical-pod rescheduler, for a CronJob."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from kresched.cli.act import (
    ClientDryRunOpt,
    DryRun,
    client_dry_run,
    cluster_dict,
    make_api,
    make_recorder,
    make_reporter,
    write_event,
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
    load_policy,
    load_profiles,
    make_options,
    parse_duration,
)
from kresched.cli.load import load_state
from kresched.cli.plan import AllowPdbOpt
from kresched.cli.rebalance import build_options
from kresched.errors import ExitCode
from kresched.plan.plans import PlanOptions

if TYPE_CHECKING:
    from kresched.execute.reconcile import ReconcileResult



@command
def reconcile_command(
    min_pending: Annotated[str | None, typer.Option("--min-pending", metavar="DURATION", show_default=False,
                                                    help="Only pods Unschedulable for at least this long (the "
                                                         "scheduler's own preemption goes first; default 60s).")]
    = None,
    min_priority: Annotated[int | None, typer.Option("--min-priority", metavar="N",
                                                     help="Also help pods with at least this priority.")] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", metavar="NAMESPACE",
                                                  help="Only pods in this namespace (default: every namespace).")]
    = None,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A",
                                                 help="Pods in every namespace (the default).")] = False,
    max_evictions: Annotated[int | None, typer.Option("--max-evictions", callback=at_least(0), metavar="N",
                                                      show_default=False,
                                                      help="Evictions allowed per pass (default 10).")] = None,
    deadline: Annotated[str | None, typer.Option("--deadline", metavar="DURATION", show_default=False,
                                                 help="The whole pass ends within this (default 4m).")] = None,
    reservation_ttl: Annotated[str | None, typer.Option("--reservation-ttl", metavar="DURATION", show_default=False,
                                                        help="Reservations older than this are stale (default "
                                                             "10m).")] = None,
    lease: Annotated[str, typer.Option("--lease", metavar="NS/NAME", help="The Lease used as a lock.")]
    = "kube-system/kresched",
    rebalance: Annotated[bool, typer.Option("--rebalance", help="After the pending pods, one bounded rebalance "
                                                                "pass (as `kresched rebalance --yes`), within "
                                                                "--max-evictions and --deadline.")] = False,
    rebalance_objective: Annotated[list[str] | None, typer.Option(
        "--rebalance-objective", metavar="NAME[,NAME]", help="With --rebalance: its objectives (default all).")]
    = None,
    rebalance_thresholds: Annotated[str | None, typer.Option("--rebalance-thresholds", metavar="RES=PCT,...",
                                                             show_default=False,
                                                             help="With --rebalance: rebalance's --thresholds.")]
    = None,
    rebalance_target_thresholds: Annotated[str | None, typer.Option(
        "--rebalance-target-thresholds", metavar="RES=PCT,...", show_default=False,
        help="With --rebalance: rebalance's --target-thresholds.")] = None,
    max_grace: Annotated[int | None, typer.Option("--max-grace", callback=at_least(0), metavar="SECONDS",
                                                  show_default=False,
                                                  help="Tier 1 takes only victims with a grace period up to this; "
                                                       "longer ones are shortened to it on eviction (default 10).")]
    = None,
    allow_pdb_violation: AllowPdbOpt = False,
    dry_run: ClientDryRunOpt = DryRun.none,
    config: ConfigOpt = None,
    scheduler_config: SchedulerConfigOpt = None,
    feature_gates: FeatureGatesOpt = None,
    simulate_other_schedulers: OtherSchedulersOpt = False,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
) -> int:
    """One pass of the critical-pod rescheduler: take the Lease, clean stale reservations, and make
    room for each pending critical pod the scheduler cannot place — within an eviction budget.

    Pods are helped in priority order; the first one that the eviction budget (--max-evictions)
    or the deadline cannot cover stops the acting, and it and the pods after it are left to the
    next pass. Every pod left Pending is listed with the reason; nothing is remembered between
    passes, so the next pass finds it again. Running it twice in a row is harmless; two at once are
    kept apart by the Lease (the second says the Lease is held and exits 0).

    A gang (the workers of a training job, all or nothing) is helped as one: all of its pending
    members together, only when the evictions of all of them fit in what is left of
    --max-evictions (else it is skipped whole and listed), and never when fewer than its minCount
    members would run.

    --dry-run reads the cluster (or --snapshot) once and changes nothing at all: it neither reads
    nor takes the Lease (it rehearses taking it), so it can run next to a real pass.

    --rebalance adds, after the pending pods and only if nothing stopped the pass, one bounded
    `kresched rebalance` pass: at most the evictions left of --max-evictions, within --deadline.

    Output: a line per action and a readable summary; -o json: one JSON object per line, ending
    with the summary (the CronJob's log); -o yaml: one YAML document per action.

    Exit codes: 0 the pass completed — also when some pods could not be helped, or another pass
    holds the Lease; 4 an action failed (an eviction or a reservation that kept failing, a PDB that
    kept refusing an eviction, a reservation or the Lease that could not be released); 5 the
    cluster is unreachable or refused access; 130 interrupted (reservations and the Lease are
    released first).

    In the cluster it runs as a CronJob: see `kresched manifests`.

    Examples:

    \b
      kresched reconcile --dry-run --snapshot demo
      kresched reconcile --dry-run --snapshot demo --min-pending 0 --max-evictions 1 -o json
    """
    # Imported here, not at the top: every other verb (and a snapshot run) starts without them.
    from kresched.execute.events import Event
    from kresched.execute.preempt import Terminated, signals_as_exceptions
    from kresched.execute.reconcile import ReconcileOptions, ReconcileResult, reconcile

    opts = make_options(snapshot, kubeconfig, context, output, no_color, namespace, all_namespaces)
    ns, _, name = lease.partition("/")
    if not name:
        ns, name = "kube-system", ns
    policy = load_policy(config)
    profiles = load_profiles(scheduler_config, simulate_other_schedulers, offline=snapshot is not None,
                             feature_gates=feature_gates)
    rp = policy.reconcile
    options = ReconcileOptions(
        lease_namespace=ns, lease_name=name,
        deadline_seconds=rp.deadline_seconds if deadline is None else parse_duration(deadline, "--deadline"),
        reservation_ttl_seconds=rp.reservation_ttl_seconds if reservation_ttl is None
        else parse_duration(reservation_ttl, "--reservation-ttl"),
        min_priority=rp.min_priority if min_priority is None else min_priority,
        min_pending_seconds=rp.min_pending_seconds if min_pending is None
        else parse_duration(min_pending, "--min-pending"),
        namespace=namespace, max_evictions=rp.max_evictions if max_evictions is None else max_evictions,
        plan=PlanOptions(rp.max_grace_seconds if max_grace is None else max_grace,
                         allow_pdb_violation or rp.allow_pdb_violation, profiles),
        rebalance=replace(build_options(rebalance_objective, rebalance_thresholds, rebalance_target_thresholds, None,
                                        False, None, None, None, policy.rebalance), profiles=profiles)
        if rebalance or rp.rebalance else None,
        critical_pods=rp.critical_pods,
    )
    client = client_dry_run(dry_run, "reconcile")
    api = make_api(opts, load_state(opts) if client else None, client)
    report = make_reporter(opts, api.mode)
    # What kresched cannot simulate of the cluster's scheduler profiles, once per pass: every plan
    # of the pass could be changed by it.
    for w in dict.fromkeys(w for p in profiles.by_name.values() for w in profiles.warnings_for(p)):
        report(Event("simulation-warning", f"warning: {w}", {"warning": w}, "warn"))
    result = ReconcileResult()
    try:
        with signals_as_exceptions(), make_recorder(api, "reconcile") as recorder:
            reconcile(api, options, report, result=result, recorder=recorder)
    except (KeyboardInterrupt, Terminated):
        # The reservation it held was released (or not) by preempt, which said so just before.
        lease_state = "released" if result.lease_released else "not released (it expires on its own)"
        report(Event("interrupted", f"interrupted: the pass stopped; the Lease was {lease_state}", {}, "error"))
        _summary(result, api.mode, opts, "interrupted")
        return ExitCode.INTERRUPTED
    _summary(result, api.mode, opts, result.error.message if result.error else None)
    if result.error is not None:
        raise result.error  # its exit code (5 for cluster access), through the one mapping
    return ExitCode.PARTIAL if result.failed_actions else ExitCode.OK


def _summary(r: ReconcileResult, mode: str, opts: Options, error: str | None) -> None:
    from kresched.render.results import pass_summary, pass_summary_text

    cluster = cluster_dict(opts)
    write_event(opts, {"action": "summary", **pass_summary(r, mode, error, cluster)},
                lambda: pass_summary_text(r, mode, error, cluster))
