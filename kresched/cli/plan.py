"""`kresched plan`: the dry run — node, victims, tier, and where the victims land afterwards."""

from __future__ import annotations

from typing import Annotated

import typer

from kresched.cli.common import (
    ENV,
    AllNamespacesOpt,
    ContextOpt,
    FeatureGatesOpt,
    KubeconfigOpt,
    NamespaceOpt,
    NoColorOpt,
    Options,
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
from kresched.cli.complete import complete_pods
from kresched.cli.load import keep_to_the_end, load_state
from kresched.cli.progress import progress
from kresched.cli.resolve import (
    Workload,
    check_namespace,
    none_pending,
    parse_target,
    pick_pod_ref,
    resolve_pod,
    workload_pods,
)
from kresched.errors import ExitCode, InputError
from kresched.model.cluster import ClusterState
from kresched.model.gangs import declared_group
from kresched.model.objects import Pod
from kresched.plan.gang import plan_unit, planner_units
from kresched.plan.planner import Planner, plan_pod
from kresched.plan.plans import Plan, PlanOptions
from kresched.plan.queue import gang_lookups, pending_pods_to_plan, queue_key
from kresched.plan.whatif import DEFAULT_MAX_LIMIT
from kresched.render.common import Source, count
from kresched.render.plan import plan_dict, plan_view, plans_dict, plans_view
from kresched.sources.decode import paused_gc

MaxGraceOpt = Annotated[int, typer.Option("--max-grace", callback=at_least(0), metavar="SECONDS",
                                          help="Tier 1 takes only victims with a grace period up to this; "
                                               "longer ones are shortened to it on eviction.")]
AllowPdbOpt = Annotated[bool, typer.Option("--allow-pdb-violation",
                                           help="Allow tier-3 plans that violate PodDisruptionBudgets.")]


FilenameOpt = Annotated[list[str] | None, typer.Option(
    "--filename", "-f", metavar="FILE", show_default=False,
    help="Manifests of workloads that do not exist yet (a file, a directory, or '-' for stdin; repeatable; 'demo': "
         "the demo's): plan for them as if created now. Not the snapshot: that is --snapshot.")]
RecursiveOpt = Annotated[bool, typer.Option("--recursive", "-R",
                                            help="With -f DIR: read its subdirectories too (kubectl's -R).")]
ReplicasOpt = Annotated[int | None, typer.Option(
    "--replicas", metavar="N", callback=at_least(0), show_default=False,
    help="With -f: plan for N replicas of each workload (a Job's parallelism) instead of the manifest's.")]

GangOpt = Annotated[str | None, typer.Option(
    "--gang", metavar="[MINCOUNT]", show_default=False,
    help="With -f: plan each workload that declares no gang (no PodGroup, coscheduling, Volcano or Kueue group) as "
         "one: its replicas run all together or not at all, at least MINCOUNT of them (bare: every replica), and "
         "kresched evicts for it only when that many fit.")]


def gang_min_count(value: str | None) -> int | None:
    """`--gang`'s value: None (not given), 0 (bare: every replica) or the minCount."""
    if value is None:
        return None
    if value == "all":
        return 0
    if not value.isdigit() or int(value) < 1:
        raise InputError(f"--gang {value}: a minCount is a positive integer (or give --gang alone: every replica)")
    return int(value)


PodArg = Annotated[str | None, typer.Argument(metavar="POD", help="NAME (in -n), pod/NAME or NAMESPACE/NAME.",
                                              show_default=False, autocompletion=complete_pods)]
PodOpt = Annotated[str | None, typer.Option("--pod", "-p", metavar="POD", show_default=False,
                                            autocompletion=complete_pods,
                                            help="The same as the POD argument (kresched's first spelling).")]


@command
def plan(
    pod_arg: PodArg = None,
    pod: PodOpt = None,
    all_pending: Annotated[bool, typer.Option("--all-pending", help="Without POD: every pending pod, "
                                                                    "not only critical ones.")] = False,
    filename: FilenameOpt = None,
    recursive: RecursiveOpt = False,
    replicas: ReplicasOpt = None,
    max_: Annotated[bool, typer.Option("--max", help="With -f: also find how many replicas fit at all, without "
                                                     "evictions and with them (cluster-capacity's question).")] = False,
    max_limit: Annotated[int, typer.Option("--max-limit", metavar="N", callback=at_least(1),
                                           help="With --max: simulate at most N replicas.")] = DEFAULT_MAX_LIMIT,
    gang: GangOpt = None,
    max_grace: MaxGraceOpt = 10,
    allow_pdb_violation: AllowPdbOpt = False,
    scheduler_config: SchedulerConfigOpt = None,
    feature_gates: FeatureGatesOpt = None,
    simulate_other_schedulers: OtherSchedulersOpt = False,
    namespace: NamespaceOpt = None,
    all_namespaces: AllNamespacesOpt = False,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
    dry_run: ReadOnlyDryRunOpt = None,
) -> int:
    """Dry run: which node, which victims, which tier, and where the victims land afterwards.

    Without POD it plans every pending critical pod (--all-pending: every pending pod) in every
    namespace, in priority order, each later plan seeing the earlier ones carried out; -n narrows
    that to one namespace. Exit code 0 when every pod planned fits or can be made to fit, 3 when
    one cannot, else 6 when whether one can cannot be known (a snapshot without the device objects
    its claims depend on).

    With -f FILE (kubectl's -f: manifests, not the snapshot, which is --snapshot) it plans for the
    workloads in FILE as if they were created now: how many replicas are placed and where, the
    evictions that make room for them, and why the rest would stay Pending. Exit code 3 when some
    replica would stay Pending, else 6 when the answer for one cannot be known. PriorityClasses,
    ResourceClaimTemplates, ResourceClaims and DeviceClasses in FILE are part of the what-if.

    Tiers, tried in order; the first that finds a node wins, so a plan evicts what costs least: tier
    1 evicts only pods that stop within --max-grace seconds (10) and whose PodDisruptionBudget
    allows the eviction; tier 2 also pods with a longer grace period (shortened to --max-grace);
    tier 3 any lower-priority pod, even over a PDB (carried out only with --allow-pdb-violation).
    Among the nodes of that tier, the scheduler's own rule picks (fewest PDB violations, lowest
    victim priority, fewest victims, ...). So the node `explain` finds nearest (the least it
    lacks) is not always the one a plan picks: a runner-up says which tier ruled it out.

    Examples:

    \b
      kresched plan --snapshot demo
      kresched plan metrics-server-5p9lfwkgvh-mkd72 -n kube-system --snapshot demo
      kresched plan kube-system/metrics-server-5p9lfwkgvh-mkd72 --snapshot demo -o json
      kresched plan --all-pending --snapshot demo -o wide
      kresched plan -f demo --snapshot demo
      kresched plan -f demo --snapshot demo --max -o json
    """
    opts = make_options(snapshot, kubeconfig, context, output, no_color, namespace, all_namespaces)
    read_only_dry_run(dry_run, "plan")
    ref = pick_pod_ref(pod_arg, pod, required=False)
    if filename is not None:
        if ref or all_pending or all_namespaces:
            raise InputError("-f and " + ("POD" if ref else "--all-pending" if all_pending else "-A")
                             + " are exclusive: -f plans the workloads in the manifests")
        return _what_if(opts, filename, recursive, replicas, max_, max_limit,
                        PlanOptions(max_grace_seconds=max_grace, allow_pdb_violation=allow_pdb_violation,
                                    profiles=load_profiles(scheduler_config, simulate_other_schedulers,
                                                           offline=snapshot is not None, feature_gates=feature_gates)),
                        gang_min_count(gang),
                        simulation_args(scheduler_config, simulate_other_schedulers, feature_gates))
    if replicas is not None or max_ or recursive or gang is not None:
        raise InputError(f"{'--replicas' if replicas is not None else '--max' if max_ else '--gang' if gang else '-R'} "
                         "goes with -f FILE "
                         "(the workloads to plan for)")
    if ref and all_pending:
        raise InputError("POD and --all-pending are exclusive")
    if ref and all_namespaces:
        raise InputError("POD and -A/--all-namespaces are exclusive: -A plans every pending pod")
    profiles = load_profiles(scheduler_config, simulate_other_schedulers, offline=snapshot is not None,
                             feature_gates=feature_gates)
    state = load_state(opts)
    options = PlanOptions(max_grace_seconds=max_grace, allow_pdb_violation=allow_pdb_violation, profiles=profiles)
    wide = opts.output is Output.wide
    source = Source(ENV.prog, _joined(opts.source_args,
                                      simulation_args(scheduler_config, simulate_other_schedulers, feature_gates)))
    target = parse_target(ref, default_namespace(opts), namespace is not None) if ref else None
    if isinstance(target, str):
        pod = resolve_pod(state, target, opts.source)
        if pod.spec.node_name:
            raise InputError(f"pod {pod.key} is not Pending: it is bound to node {pod.spec.node_name} "
                             f"(phase {pod.status.phase or 'unknown'})")
        gang = state.gangs.gang_of(pod) if declared_group(pod) is not None else None
        if gang is None:
            with progress(opts, f"planning {pod.key}"), paused_gc():
                result = plan_pod(state, pod, options)
            emit(opts.output, plan_dict(result), lambda: plan_view(result, state, wide=wide, source=source))
            return plans_exit_code([result])
        # A gang's member: its gang is planned, as one (`plan.gang`).
        plans = _plan_all(opts, state, [pod], options)
        emit(opts.output, plans_dict(plans),
             lambda: plans_view(plans, state, wide=wide, source=source, what="Pending member", where=f" of {gang.key}"))
        return plans_exit_code(plans)
    left_out: list[str] = []
    empty = None
    if isinstance(target, Workload):
        pods = workload_pods(state, target, opts.source)
        pending = sorted((p for p in pods if p.is_pending), key=queue_key)
        empty = f"{none_pending(target, pods)}: nothing to plan."
        what, where = "Pending pod", f" of {target}"
    else:
        if namespace is not None:
            check_namespace(state, namespace, opts.source)
        def in_scope(p: Pod) -> bool:
            return namespace is None or p.namespace == namespace

        def leave_out(pods: list[Pod], why: str) -> None:
            """Say that `pods` are not planned, and `why` (`{it}`: it or them)."""
            if pods:
                n = len(pods)
                left_out.append(f"{count(n, 'other pending pod' if pending else 'pending pod')}{where} "
                                f"{'is' if n == 1 else 'are'} " + why.format(it="it" if n == 1 else "them"))

        pending = [p for p in pending_pods_to_plan(state, all_pending) if in_scope(p)]
        what, where = ("pending pod" if all_pending else "pending critical pod"), \
            (f" in namespace {namespace}" if namespace is not None else "")
        if not all_pending:
            leave_out([p for p in state.pending_pods() if not p.is_critical and in_scope(p)],
                      "not critical: --all-pending plans {it} too")
        leave_out([p for p in state.unbound_pods if p.is_gated and (all_pending or p.is_critical) and in_scope(p)],
                  "held by scheduling gates: the scheduler does not try {it} until the gates are removed "
                  "(kresched explain POD names its gates)")
    plans = _plan_all(opts, state, pending, options)
    if not is_table(opts.output):
        for note in left_out if plans or empty is None else [empty]:
            ENV.say(f"note: {note}")
    emit(opts.output, plans_dict(plans), lambda: plans_view(plans, state, wide=wide, source=source, what=what,
                                                             where=where, left_out=tuple(left_out), empty=empty))
    return plans_exit_code(plans)


def plans_exit_code(plans: list[Plan]) -> ExitCode:
    """3 when a pod cannot be placed; else 6 when a pod's answer cannot be known (device data
    missing); else 0."""
    if any(p.outcome == "infeasible" for p in plans):
        return ExitCode.INFEASIBLE
    return ExitCode.UNKNOWN if any(p.outcome == "unknown" for p in plans) else ExitCode.OK


def _what_if(opts: Options, files: list[str], recursive: bool, replicas: int | None, max_: bool, max_limit: int,
             options: PlanOptions, gang: int | None = None, simulation: str = "") -> int:
    """`plan -f FILE`: the workloads of the manifests, planned as if created now."""
    from kresched.plan.whatif import WhatIfOptions, plan_workloads
    from kresched.render.whatif import whatif_dict, whatif_view
    from kresched.sources.admission import NOT_SIMULATED
    from kresched.sources.manifests import read_manifests, workloads_of

    if "-" in files and opts.snapshot == "-":
        raise InputError("-f - and --snapshot - both read standard input: give one of them a file")
    stdin = getattr(ENV.stdin, "buffer", ENV.stdin)
    docs = read_manifests(files, recursive, stdin)
    state = load_state(opts)
    manifests = workloads_of(docs, state, default_namespace(opts), opts.namespace is not None, replicas)
    if not manifests.workloads:
        kinds = f" (only {', '.join(manifests.ignored)})" if manifests.ignored else ""
        raise InputError(f"-f {' '.join(files)}: no workload to plan for{kinds}: kresched plans Pods, Deployments, "
                         "ReplicaSets, ReplicationControllers, StatefulSets, DaemonSets, Jobs and CronJobs")
    n = sum(w.replicas or 0 for w in manifests.workloads)
    with progress(opts, f"planning {count(len(manifests.workloads), 'workload')} ({count(n, 'replica')})"), \
            paused_gc():
        result = plan_workloads(state, manifests, WhatIfOptions(options, max_, max_limit, gang,
                                                                options.profiles.gates.workload_with_job))
    if not is_table(opts.output):
        for name in manifests.ignored:
            ENV.say(f"note: {name} is not a workload: not planned")
        ENV.say(f"note: {NOT_SIMULATED}")
    # preempt -f makes the room for the same workloads, simulated the same way.
    same = [*(["-R"] * recursive), *([f"--replicas {replicas}"] * (replicas is not None)),
            *([f"--gang={gang}" if gang else "--gang"] * (gang is not None)), simulation]
    source = Source(ENV.prog, _joined(opts.source_args, *same))
    emit(opts.output, whatif_dict(result),
         lambda: whatif_view(result, state, tuple(files), wide=opts.output is Output.wide, source=source,
                             not_simulated=NOT_SIMULATED))
    if any(w.pending for w in result.workloads):
        return ExitCode.INFEASIBLE
    return ExitCode.UNKNOWN if any(w.unknown for w in result.workloads) else ExitCode.OK


def _joined(*args: str) -> str:
    return " ".join(a for a in args if a)


def _plan_all(opts: Options, state: ClusterState, pods: list[Pod], options: PlanOptions) -> list[Plan]:
    """`plan_pending`, one pod (or gang) at a time so that a terminal can show how far it got."""
    plans: list[Plan] = []
    with progress(opts, f"planning {count(len(pods), 'pending pod')}") as p, paused_gc():
        planner = Planner(state, options)
        keep_to_the_end(planner)
        for unit in planner_units(planner, pods, *gang_lookups(state)):
            now = f"gang {unit[0].key}" if isinstance(unit, tuple) else unit.key
            p.update(f"planning pending pods: {len(plans)} of {len(pods)} done, now {now}")
            plans.extend(plan_unit(planner, unit))
    return plans
