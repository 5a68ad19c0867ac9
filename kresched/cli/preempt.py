"""`kresched preempt`: carry a plan out — reserve the node, evict, wait for the binding, release; for
a gang (a member pod, `podgroup/NAME`, or a workload whose pods are one gang's), every member's."""

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
    NamespaceOpt,
    NoColorOpt,
    Options,
    OtherSchedulersOpt,
    Output,
    OutputOpt,
    SchedulerConfigOpt,
    SnapshotOpt,
    command,
    default_namespace,
    load_profiles,
    make_options,
    parse_duration,
)
from kresched.cli.load import load_state
from kresched.cli.plan import (
    AllowPdbOpt,
    FilenameOpt,
    GangOpt,
    MaxGraceOpt,
    PodArg,
    PodOpt,
    RecursiveOpt,
    ReplicasOpt,
    gang_min_count,
)
from kresched.cli.progress import progress
from kresched.cli.resolve import gang_of_target, parse_target, pick_pod_ref, resolve_pod
from kresched.errors import ExitCode, InputError
from kresched.model.cluster import ClusterState
from kresched.model.gangs import Gang
from kresched.plan.planner import plan_pod
from kresched.plan.plans import Plan, PlanOptions
from kresched.plan.queue import gang_lookups, plan_pending
from kresched.render.common import count
from kresched.render.plan import plan_dict, plan_view, plans_dict, plans_view
from kresched.sources.decode import paused_gc

if TYPE_CHECKING:
    from kresched.execute.events import Event, Reporter
    from kresched.execute.gang import GangResult
    from kresched.execute.preempt import PreemptOptions, PreemptResult



@command
def preempt_command(
    pod_arg: PodArg = None,
    pod: PodOpt = None,
    filename: FilenameOpt = None,
    recursive: RecursiveOpt = False,
    replicas: ReplicasOpt = None,
    gang: GangOpt = None,
    apply: Annotated[bool, typer.Option("--apply", help="With -f: once the room is made, create the workloads "
                                                        "(server-side apply, field manager kresched).")] = False,
    yes: YesOpt = False,
    dry_run: DryRunOpt = DryRun.none,
    timeout: Annotated[str, typer.Option("--timeout", metavar="DURATION",
                                         help="How long to wait for the scheduler to bind the pod (with -f: the "
                                              "workloads' pods).")] = "5m",
    eviction_timeout: Annotated[str, typer.Option("--eviction-timeout", metavar="DURATION",
                                                  help="How long to retry an eviction a PodDisruptionBudget "
                                                       "refuses (429) before giving up on that victim.")] = "60s",
    max_grace: MaxGraceOpt = 10,
    allow_pdb_violation: AllowPdbOpt = False,
    namespace: NamespaceOpt = None,
    scheduler_config: SchedulerConfigOpt = None,
    feature_gates: FeatureGatesOpt = None,
    simulate_other_schedulers: OtherSchedulersOpt = False,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
) -> int:
    """Carry the plan out: reserve the node with a taint, evict the victims, wait for the pod to be
    bound, and always remove the reservation.

    Exit codes: 0 bound (also on another node), 3 nothing feasible, 4 partly done (e.g. timed
    out), 5 cluster access, 6 cannot be known (device data missing: nothing done), 130 interrupted.

    A gang's member (or podgroup/NAME, or job/NAME whose pods are one gang's) makes room for the
    whole gang, all or nothing: its pending members are planned together, and nothing is evicted
    unless at least minCount members would run (exit 3 otherwise, saying why). Every node a member
    is placed on is reserved, every member's victims evicted, and every member waited for with one
    --timeout; exit 4 when only some were bound, the summary saying which.

    On a cluster: `kresched preempt -n kube-system POD` asks before it evicts (--yes does not ask),
    and --dry-run=server has the API server validate every write without acting.

    With -f FILE it makes room for workloads that do not exist yet (as `plan -f FILE` plans it):
    reserve, evict replica by replica, wait until the evicted pods are gone, then create nothing —
    the operator applies the workloads, kresched waits (--timeout) until their pods are bound and
    releases the reservations; --apply creates them itself once the room is made.

    Examples:

    \b
      kresched preempt metrics-server-5p9lfwkgvh-mkd72 -n kube-system --dry-run --snapshot demo
      kresched preempt kube-system/metrics-server-5p9lfwkgvh-mkd72 --dry-run=client --snapshot demo -o yaml
      kresched preempt -f demo --apply --dry-run --snapshot demo
    """
    # Imported here, not at the top: every other verb (and a snapshot run) starts without them.
    from kresched.execute.events import Event
    from kresched.execute.preempt import PreemptOptions, PreemptResult, Terminated, preempt, signals_as_exceptions

    opts = make_options(snapshot, kubeconfig, context, output, no_color, namespace)
    profiles = load_profiles(scheduler_config, simulate_other_schedulers, offline=snapshot is not None,
                             feature_gates=feature_gates)
    options = PreemptOptions(PlanOptions(max_grace, allow_pdb_violation, profiles),
                             parse_duration(timeout, "--timeout"),
                             parse_duration(eviction_timeout, "--eviction-timeout"))
    if filename is not None:
        if pod_arg or pod:
            raise InputError("-f and POD are exclusive: -f makes room for the workloads in the manifests")
        return _make_room(opts, filename, recursive, replicas, apply, options, dry_run, yes, gang_min_count(gang))
    if apply or replicas is not None or recursive or gang is not None:
        flag = '--apply' if apply else '--replicas' if replicas is not None else '--gang' if gang is not None else '-R'
        raise InputError(f"{flag} goes with -f FILE (the workloads to make room for)")
    ref = pick_pod_ref(pod_arg, pod, required=True)
    assert ref is not None
    state = load_state(opts)
    named = parse_target(ref, default_namespace(opts), namespace is not None)
    if isinstance(named, str):
        target = resolve_pod(state, named, opts.source)
        gang = gang_of_target(state, target, opts.source)
    else:
        gang = gang_of_target(state, named, opts.source)
        if gang is None:
            raise InputError(f"the pods of {named} are no gang's members: preempt makes room for one pod (POD) or "
                             f"for a gang (a member pod, podgroup/NAME); `plan {ref}` plans each of its pods")
    if gang is not None:
        return _preempt_gang(opts, state, gang, options, dry_run, yes)
    if target.spec.node_name:
        raise InputError(f"pod {target.key} is not Pending: it is bound to node {target.spec.node_name}")
    api = make_api(opts, state, dry_run)
    report = make_reporter(opts, api.mode)
    with progress(opts, f"planning {target.key}"), paused_gc():
        plan = plan_pod(state, target, options.plan)
    _show(plan, state, opts)
    result = PreemptResult(plan.pod.key, plan)
    if plan.outcome != "evict" or plan.blocked:
        result.outcome = {"fits": "nothing-to-do", "infeasible": "infeasible",
                          "unknown": "unknown"}.get(plan.outcome, "blocked")
        blocked = [Event("blocked", plan.message, {"pod": plan.pod.key}, "error")] if plan.blocked else []
        return _finish(opts, report, result, api.mode, documents=blocked)
    question = f"Evict {count(len(plan.victims), 'pod')} on {plan.node} for {plan.pod.key}{in_cluster(opts)}?"
    if dry_run is not DryRun.client and not confirm(question, yes):
        result.outcome = "aborted"
        return _finish(opts, report, result, api.mode)

    def confirm_changed(new: Plan) -> bool:
        _show(new, state, opts)
        return confirm(f"The plan changed. Evict {count(len(new.victims), 'pod')} on {new.node}{in_cluster(opts)}?",
                       yes)

    try:
        with signals_as_exceptions(), make_recorder(api, "preempt") as recorder, \
                live_reporting(opts, api.mode) as live:
            preempt(api, plan, options, live, confirm_changed, result=result, recorder=recorder)
    except (KeyboardInterrupt, Terminated):
        # Whether the reservation went has been reported just before (released / release-failed).
        result.outcome = "interrupted"
        stays = Event("interrupted", "interrupted; pods already evicted stay evicted", {"pod": plan.pod.key}, "error")
        _finish(opts, report, result, api.mode, [stays])
        return ExitCode.INTERRUPTED
    return _finish(opts, report, result, api.mode)


def _preempt_gang(opts: Options, state: ClusterState, gang: Gang, options: PreemptOptions, dry_run: DryRun,
                  yes: bool) -> int:
    """`preempt` for a gang: its pending members planned together, carried out all or nothing
    (`execute.gang.preempt_gang`)."""
    from kresched.execute.events import Event
    from kresched.execute.gang import GangResult, placed_members, preempt_gang, victims_of
    from kresched.execute.preempt import Terminated, signals_as_exceptions

    pending = gang_lookups(state)[1](gang)
    if not pending:
        gated = sum(1 for p in gang.members if p.spec.scheduling_gates and not p.spec.node_name)
        held = f", {gated} held by scheduling gates (the scheduler does not place them until they are removed)" \
            if gated else ""
        raise InputError(f"{gang.key} has no Pending member ({len(gang.running)} of "
                         f"{count(len(gang.members), 'member')} running{held}): nothing to make room for")
    api = make_api(opts, state, dry_run)
    report = make_reporter(opts, api.mode)
    with progress(opts, f"planning the {count(len(pending), 'pending member')} of {gang.key}"), paused_gc():
        plans = plan_pending(state, pending, options.plan)
    _show_gang(plans, state, opts, gang)
    result = GangResult(gang, plans)
    info = plans[0].gang
    if info is None or not info.kept:
        result.outcome = "infeasible"
        return _finish_gang(opts, report, result, api.mode)
    victims = victims_of(plans)
    if not victims:
        result.outcome = "nothing-to-do"
        return _finish_gang(opts, report, result, api.mode)

    def question(new: list[Plan], head: str = "") -> str:
        nodes = sorted({p.node for p in placed_members(new) if p.outcome == "evict" and p.node})
        return (f"{head}Evict {count(victims_of(new), 'pod')} on {', '.join(nodes)} for "
                f"{count(len(placed_members(new)), 'member')} of {gang.key}{in_cluster(opts)}?")

    if dry_run is not DryRun.client and not confirm(question(plans), yes):
        result.outcome = "aborted"
        return _finish_gang(opts, report, result, api.mode)

    def confirm_changed(new: list[Plan]) -> bool:
        _show_gang(new, state, opts, gang)
        return confirm(question(new, "The plan changed. "), yes)

    try:
        with signals_as_exceptions(), make_recorder(api, "preempt") as recorder, \
                live_reporting(opts, api.mode) as live:
            preempt_gang(api, gang, plans, options, live, confirm_changed, result=result, recorder=recorder)
    except (KeyboardInterrupt, Terminated):
        result.outcome = "interrupted"
        stays = Event("interrupted", "interrupted; pods already evicted stay evicted", {"gang": gang.key}, "error")
        _finish_gang(opts, report, result, api.mode, [stays])
        return ExitCode.INTERRUPTED
    return _finish_gang(opts, report, result, api.mode)


def _show_gang(plans: list[Plan], state: ClusterState, opts: Options, gang: Gang) -> None:
    write_event(opts, {"action": "plan", **plans_dict(plans)},
                lambda: plans_view(plans, state, wide=opts.output is Output.wide, what="Pending member",
                                   where=f" of {gang.key}"))


def _finish_gang(opts: Options, report: Reporter, r: GangResult, mode: str,
                 left_behind: list[Event] | None = None) -> int:
    """The gang's summary, always the run's last word; the exit code it stands for: 0 every member
    placed was bound (or a dry run, or nothing to do), 3 the gang cannot start or its room could not
    be reserved (nothing evicted), 4 partly done (only some members bound, none, a budget kept
    refusing, an eviction failed or a reservation left behind), 130 interrupted."""
    from kresched.render.results import gang_summary, gang_view

    data = gang_summary(r, mode, cluster_dict(opts))
    write_summary(opts, report, data, lambda: gang_view(data), left_behind or ())
    clean = not r.failed and set(r.released) >= set(r.reserved)
    if r.outcome in ("bound", "simulated", "nothing-to-do"):
        return ExitCode.OK if clean else ExitCode.PARTIAL
    if r.outcome in ("infeasible", "blocked"):
        return ExitCode.INFEASIBLE if clean else ExitCode.PARTIAL
    if r.outcome == "aborted":
        return ExitCode.OK
    if r.outcome == "interrupted":
        return ExitCode.INTERRUPTED
    if r.outcome == "deleted":
        return ExitCode.OK if not r.evicted else ExitCode.PARTIAL
    return ExitCode.PARTIAL


def _make_room(opts: Options, files: list[str], recursive: bool, replicas: int | None, apply: bool,
               options: PreemptOptions, dry_run: DryRun, yes: bool, gang: int | None = None) -> int:
    """`preempt -f FILE`: the what-if's evictions carried out (`execute.whatif.make_room`)."""
    from kresched.execute.events import Event
    from kresched.execute.preempt import Terminated, signals_as_exceptions
    from kresched.execute.whatif import WhatIfRunOptions, WhatIfRunResult, make_room, reservation_ref
    from kresched.plan.whatif import WhatIf, WhatIfOptions, plan_workloads
    from kresched.render.whatif import whatif_dict, whatif_view
    from kresched.sources.manifests import read_manifests, workloads_of

    if "-" in files and opts.snapshot == "-":
        raise InputError("-f - and --snapshot - both read standard input: give one of them a file")
    docs = read_manifests(files, recursive, getattr(ENV.stdin, "buffer", ENV.stdin))
    state = load_state(opts)
    manifests = workloads_of(docs, state, default_namespace(opts), opts.namespace is not None, replicas)
    if not manifests.workloads:
        raise InputError(f"-f {' '.join(files)}: no workload to make room for")
    api = make_api(opts, state, dry_run)
    report = make_reporter(opts, api.mode)
    whatif_options = WhatIfOptions(options.plan, gang=gang, job_gangs=options.plan.profiles.gates.workload_with_job)
    with progress(opts, f"planning {count(len(manifests.workloads), 'workload')}"), paused_gc():
        whatif = plan_workloads(state, manifests, whatif_options)

    def show(w: WhatIf) -> None:
        write_event(opts, {"action": "plan", **whatif_dict(w)},
                    lambda: whatif_view(w, state, tuple(files), wide=opts.output is Output.wide))

    show(whatif)
    result = WhatIfRunResult([reservation_ref(s) for s in manifests.workloads], whatif)
    evicting = [p for p in whatif.plans if p.outcome == "evict"]
    victims = sum(len(p.victims) for p in evicting)
    if not evicting and not apply:
        # Nothing to evict: every replica fits as it is, or those that do not fit no eviction helps.
        result.outcome = "infeasible" if any(w.pending for w in whatif.workloads) else \
            "unknown" if any(w.unknown for w in whatif.workloads) else "nothing-to-do"
        return _finish_room(opts, report, result, api.mode)
    what = f"Evict {count(victims, 'pod')} for {', '.join(result.workloads)}" if evicting else \
        f"Apply {', '.join(result.workloads)}"
    if evicting and apply:
        what += " and apply them"
    if dry_run is not DryRun.client and not confirm(f"{what}{in_cluster(opts)}?", yes):
        result.outcome = "aborted"
        return _finish_room(opts, report, result, api.mode)

    def confirm_changed(new: WhatIf) -> bool:
        show(new)
        n = sum(len(p.victims) for p in new.plans if p.outcome == "evict")
        return confirm(f"The plan changed. Evict {count(n, 'pod')}{in_cluster(opts)}?", yes)

    try:
        with signals_as_exceptions(), make_recorder(api, "preempt") as recorder, \
                live_reporting(opts, api.mode) as live:
            make_room(api, manifests, whatif, WhatIfRunOptions(options, apply), live, confirm_changed,
                      result=result, recorder=recorder, whatif_options=whatif_options)
    except (KeyboardInterrupt, Terminated):
        result.outcome = "interrupted"
        stays = Event("interrupted", "interrupted; pods already evicted stay evicted", {}, "error")
        _finish_room(opts, report, result, api.mode, [stays])
        return ExitCode.INTERRUPTED
    return _finish_room(opts, report, result, api.mode)


def _finish_room(opts: Options, report: Reporter, r: object, mode: str,
                 left_behind: list[Event] | None = None) -> int:
    from kresched.execute.whatif import WhatIfRunResult
    from kresched.render.results import whatif_run_summary, whatif_run_view

    assert isinstance(r, WhatIfRunResult)
    data = whatif_run_summary(r, mode, cluster_dict(opts))
    write_summary(opts, report, data, lambda: whatif_run_view(data), left_behind or ())
    if r.outcome in ("done", "simulated", "nothing-to-do", "aborted"):
        clean = not r.failed and not r.pdb_blocked and set(r.released) >= set(r.reserved)
        if r.plan is not None and any(w.pending for w in r.plan.workloads) and r.outcome != "aborted":
            return ExitCode.INFEASIBLE if clean else ExitCode.PARTIAL
        if r.plan is not None and any(w.unknown for w in r.plan.workloads) and r.outcome != "aborted":
            return ExitCode.UNKNOWN if clean else ExitCode.PARTIAL
        return ExitCode.OK if clean else ExitCode.PARTIAL
    if r.outcome == "interrupted":
        return ExitCode.INTERRUPTED
    if r.outcome == "infeasible":
        return ExitCode.INFEASIBLE
    if r.outcome == "unknown":
        return ExitCode.UNKNOWN
    return ExitCode.PARTIAL


def _show(plan: Plan, state: ClusterState, opts: Options) -> None:
    write_event(opts, {"action": "plan", **plan_dict(plan)},
                lambda: plan_view(plan, state, wide=opts.output is Output.wide))


def _finish(opts: Options, report: Reporter, r: PreemptResult, mode: str, left_behind: list[Event] | None = None,
            documents: list[Event] | None = None) -> int:
    """The summary, always the run's last word; the exit code it stands for."""
    from kresched.render.results import preempt_summary, preempt_view

    data = preempt_summary(r, mode, cluster_dict(opts))
    write_summary(opts, report, data, lambda: preempt_view(data), left_behind or (), documents or ())
    return _exit_code(r)


def _exit_code(r: PreemptResult) -> int:
    clean = not r.failed and (r.released or not r.reserved)
    if r.outcome in ("bound", "bound-elsewhere", "simulated", "nothing-to-do"):
        return ExitCode.OK if clean else ExitCode.PARTIAL
    if r.outcome in ("infeasible", "blocked"):
        return ExitCode.INFEASIBLE
    if r.outcome == "unknown":
        return ExitCode.UNKNOWN
    if r.outcome == "aborted":
        return ExitCode.OK
    if r.outcome == "interrupted":
        return ExitCode.INTERRUPTED
    if r.outcome == "deleted":
        return ExitCode.OK if not r.evicted else ExitCode.PARTIAL
    return ExitCode.PARTIAL
