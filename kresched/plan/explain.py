"""Why a pod is Pending, node by node, in the scheduler's own words — and what would make it fit.

Owns `explain_pod`: runs the filters for one pod on every node, builds the scheduler's
`PodScheduled` message (filter part and preemption part, exactly as kube-scheduler 1.35/1.36
writes them), ranks nodes by how close they are to fitting, and turns each failure's structured
data into a hint an operator can act on. For a pod that fits — or one already running, asked as if
it were Pending again on the cluster as it is now without it ("why there") — the Score phase:
per node and plugin, the raw, normalized and weighted scores and the total, as
kube-scheduler-simulator shows them, and the node the scheduler picks with the nodes tied with it.
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.gangs import Gang, declared_group
from kresched.model.objects import Pod
from kresched.model.quantity import format_bytes, format_cpu
from kresched.model.specs import Taint, Toleration
from kresched.plan.candidates import is_candidate_victim, nominated_pods
from kresched.plan.devices import (
    DeviceHint,
    asks_for_devices,
    device_hints,
    device_state_notes,
    freeing_nodes,
    is_device_rejection,
)
from kresched.plan.gang_breaks import SchedulerPreemption, lowest_running_gang_priority, scheduler_choice
from kresched.plan.lost import is_lost
from kresched.plan.placement import Placer, replacement_of
from kresched.plan.plans import RESERVATION_TAINT, RESERVED_FOR
from kresched.plan.pod_group import GroupVerdict, group_verdict, simulates_groups
from kresched.sched.dra.claims import missing_kinds
from kresched.sched.dra.extended import CLASS_PREFIX
from kresched.sched.dra.inuse import cluster_snapshot
from kresched.sched.dynamic_resources import NAME as DRA
from kresched.sched.dynamic_resources import post_filter_note
from kresched.sched.framework import Code, FilterPlugin, InsufficientResource, Snapshot, Status
from kresched.sched.node_affinity import ERR_REASON_CONFLICT, required_node_affinity_matches
from kresched.sched.node_info import NodeInfo
from kresched.sched.node_resources_fit import NAME as NODE_RESOURCES_FIT
from kresched.sched.node_resources_fit import fits_request
from kresched.sched.pod_group_cycle import NOT_ELIGIBLE_WAP
from kresched.sched.preemption import (
    DEFAULT_POST_FILTERS,
    DRA_POSTFILTER_NOTE,
    full_scheduler_message,
    post_filter_error,
    preemption_message,
)
from kresched.sched.profile import Profile, Profiles, scheduler_name
from kresched.sched.runner import (
    NO_NODES_AVAILABLE,
    SCHEDULER_ERROR_NOTE,
    find_nodes_that_fit,
    fit_error_message,
    holding_room,
    scheduler_error,
)
from kresched.sched.score import NodeScore
from kresched.sched.taint_toleration import format_taint, tolerations_tolerate_taint

__all__ = ["Explanation", "NodeVerdict", "explain_pod", "format_amount", "volume_state_notes"]

DEFAULT_SCHEDULER = "default-scheduler"
#: What NodeUnschedulable asks the pod to tolerate on a cordoned node.
_UNSCHEDULABLE = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


@dataclass(frozen=True)
class NodeVerdict:
    """One node's answer for the pod: SUCCESS, or the first failing plugin's status."""

    node: str
    status: Status
    #: What would make the pod fit here, each one change (offered only where they would, together).
    hints: tuple[str, ...] = ()
    #: When NodeResourcesFit rejected the node: what it lacks, with the numbers.
    short: tuple[InsufficientResource, ...] = ()
    #: Past a taint, label or cordon (`lifts`): what the pod would still meet there (None: nothing
    #: was lifted), and whether nothing makes it fit here at all (`hopeless`).
    beyond: Status | None = None
    lifts: tuple[str, ...] = ()
    hopeless: bool = False
    #: When DynamicResources rejected the node: its facts (`hints` holds their lines).
    devices: tuple[DeviceHint, ...] = ()

    @property
    def fits(self) -> bool:
        return self.status.is_success

    @property
    def verdict(self) -> str:
        if self.status.is_success:
            return "fits"
        if self.status.code == Code.ERROR:
            return "error"  # a plugin's error, not a verdict (`diagnosis.scheduler_error`)
        return "unresolvable" if self.status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE else "unschedulable"


@dataclass(frozen=True)
class Explanation:
    pod: Pod
    num_nodes: int
    schedulable: bool
    #: The filter part, `0/N nodes are available: ... .`; None when the pod fits somewhere.
    message: str | None
    #: What the scheduler writes after `preemption: `; None when it fits, or when the scheduler's
    #: own preemption would find victims (it then nominates a node instead of failing).
    preemption_message: str | None
    #: Nodes nearest to fitting first (fitting nodes first of all).
    verdicts: tuple[NodeVerdict, ...]
    #: When schedulable: why the pod may still be Pending. When bound: where it runs.
    notes: tuple[str, ...] = ()
    reason_counts: dict[str, int] = field(default_factory=dict)
    #: When it fits (or runs): the scores of the nodes the scheduler scores, best first.
    scores: tuple[NodeScore, ...] = ()
    #: The node the scheduler picks, and every node tied with it at the top score.
    predicted: str | None = None
    candidates: tuple[str, ...] = ()
    #: The scheduler would score only a sample of the feasible nodes (large clusters).
    likely: bool = False
    #: For a bound pod: the node it runs on.
    bound_to: str | None = None
    #: What the scheduler appends instead of a preemption part when its PostFilter stops at an
    #: error (`preemption.post_filter_error`); then `preemption_message` is None too.
    post_filter_error: str | None = None
    #: The scheduler profile simulated, and its PostFilter plugins (what the message ends with).
    profile: str = DEFAULT_SCHEDULER
    post_filters: tuple[str, ...] = DEFAULT_POST_FILTERS
    #: What kresched could not simulate of that profile (out-of-tree plugins, extenders, ...).
    warnings: tuple[str, ...] = ()
    #: The pod's schedulerName when no profile names it (the profile simulated stands in for it).
    other_scheduler: str | None = None
    #: A scheduler configuration was given (`--scheduler-config`), not the built-in profile.
    configured: bool = False
    #: What DynamicResources' PostFilter adds to the scheduler's message (`post_filter_note`).
    dra_note: str = DRA_POSTFILTER_NOTE
    #: A plugin returned an error, not a verdict (`diagnosis.scheduler_error`): `message` is that
    #: error, the whole of what the scheduler writes (reason `SchedulerError`), and no PostFilter ran.
    scheduler_error: bool = False
    #: Where the scheduler's own preemption cannot help: the nodes where kresched's device freeing
    #: makes room (`plan.devices.freeing_nodes`; `plan` picks one and its victims).
    device_freeing: tuple[str, ...] = ()
    #: The DRA kinds the pod's answer depends on that the state does not hold
    #: (`sched.dra.claims.missing_kinds`): its devices were not looked at.
    missing_kinds: tuple[str, ...] = ()

    @property
    def unknown(self) -> bool:
        """Whether it runs cannot be known: some node fits but for its devices, which the state
        says nothing about (`missing_kinds`); `message` is then None and nothing is predicted."""
        return bool(self.missing_kinds) and not self.schedulable and self.message is None
    #: The gang the pod is a member of (`kresched.model.gangs`), if any.
    gang: Gang | None = None
    #: Where the cluster's scheduler runs pod-group cycles (`--feature-gates ...GangScheduling=true`):
    #: what its cycles do with the pod's group, and with the pod (`plan.pod_group`).
    group: GroupVerdict | None = None
    #: What the scheduler's own per-pod preemption would evict, where a running gang could be its
    #: victim (`plan.gang_breaks`).
    scheduler_preemption: SchedulerPreemption | None = None

    @property
    def scheduler_message(self) -> str | None:
        group = self.group
        if group is not None and group.fallback is None and self.bound_to is None:
            return group.message  # its group's cycle decides what is written (None: it binds, or nothing is)
        if self.message is None or self.scheduler_error:
            return self.message
        return full_scheduler_message(self.message, self.preemption_message, self.post_filter_error,
                                      self.post_filters, self.dra_note)

    @property
    def feasible(self) -> list[str]:
        return [v.node for v in self.verdicts if v.fits]


def explain_pod(state: ClusterState, pod: Pod, plugins: Sequence[FilterPlugin] | None = None,
                snapshot: Snapshot | None = None, profiles: Profiles | None = None) -> Explanation:
    """Why `pod` is Pending (or, bound, why there), simulated with the profile of its scheduler
    (`profiles`; the v1.36 default profile without). A pod whose scheduler no profile names is
    explained with the fallback profile, else the `default-scheduler` one (or the first), and
    the explanation says it stands in for another scheduler. `plugins` (tests) replaces the
    profile's filter plugins."""
    profiles = profiles or Profiles.default()
    profile = profiles.for_pod(pod)
    other = None
    if profile is None:
        other = scheduler_name(pod)
        profile = profiles.with_fallback().fallback
        assert profile is not None
    verdict = None
    if simulates_groups(profiles.gates) and pod.is_pending and pod.spec.scheduling_group is not None:
        snapshot = snapshot or cluster_snapshot(state)
        verdict = group_verdict(state, pod, profiles, snapshot, nominated_pods(state, exclude=pod))
    wap_member = verdict is not None and verdict.fallback is None and profiles.gates.workload_aware_preemption
    result = _explain(state, profile.planning_pod(pod), profile,
                      list(plugins) if plugins is not None else list(profile.filters), snapshot, wap_member,
                      profiles.gates.gang_scheduling)
    warnings = profiles.warnings_for(profile, pod)
    if other is not None:
        where = f"the scheduler configuration {profiles.source}" if profiles.source else "kresched's default profile"
        warnings = (f"scheduled by another scheduler ({other!r}): no profile of {where} names it, so this is what "
                    f"the {profile.name} profile would do, not what its own scheduler does", *warnings)
    gang = state.gangs.gang_of(pod) if declared_group(pod) is not None else None
    result = replace(result, pod=pod, profile=profile.name, post_filters=profile.post_filters, warnings=warnings,
                     other_scheduler=other, configured=not profiles.builtin, gang=gang)
    return _with_group(result, verdict) if verdict is not None else result


def _with_group(result: Explanation, verdict: GroupVerdict) -> Explanation:
    """The explanation of a member as its group's cycle decides: bound now or not, where, its scores
    at its turn in the cycle."""
    if verdict.fallback is not None:
        return replace(result, group=verdict, notes=(*result.notes, verdict.fallback))
    binds = verdict.binds_now
    notes = result.notes if binds else tuple(n for n in result.notes if n not in _SOLO_NOTES)
    if verdict.wait is not None:
        notes = (*notes, verdict.wait)
    landing = verdict.landing
    if binds and landing is not None:
        scores = tuple(sorted(landing.scores, key=lambda s: (-s.total, s.node))) or result.scores
        return replace(result, group=verdict, schedulable=True, predicted=verdict.node, candidates=verdict.candidates,
                       likely=verdict.likely, scores=scores, notes=notes)
    return replace(result, group=verdict, schedulable=binds, notes=notes,
                   predicted=verdict.node if binds else None, candidates=verdict.candidates if binds else (),
                   scores=result.scores if binds else ())


def _explain(state: ClusterState, pod: Pod, profile: Profile, plugins: list[FilterPlugin],
             snapshot: Snapshot | None, wap_member: bool = False, gangs: bool = False) -> Explanation:
    """`wap_member`: a pod group's member where WorkloadAwarePreemption is on, for which
    DefaultPreemption's PostFilter refuses at once (its group preempts as one). `gangs`: the
    scheduler runs GangScheduling; then where its own preemption would break a running gang, say so."""
    if pod.spec.node_name:
        return _why_there(state, pod, profile, plugins)
    snapshot = snapshot or cluster_snapshot(state)
    if not snapshot.node_infos:
        # ErrNoNodesAvailable: the scheduler runs no PostFilter, so there is no preemption part.
        return Explanation(pod, 0, False, NO_NODES_AVAILABLE, None, (),
                           ("the cluster has no nodes: nothing can run until one joins",))
    nominated = nominated_pods(state, exclude=pod)
    diag, cycle = find_nodes_that_fit(plugins, pod, snapshot, nominated)
    if profile.extenders is not None:
        from kresched.sched.extender import pass_extenders

        diag = pass_extenders(profile.extenders, pod, snapshot, diag)
    # What it would take past a taint, a label or a cordon: the same pod without them, filtered once.
    relaxed = None
    if any(diag.status_of(i.name).plugin in _LIFTABLE for i in snapshot.node_infos):
        lifted = _lifted(pod)
        relaxed = (lifted, find_nodes_that_fit(plugins, lifted, snapshot, nominated)[0])
    ranked = []
    for info in snapshot.node_infos:
        st = diag.status_of(info.name)
        held = nominated.get(info.name, ())
        short = _shortfall(pod, info, st, held)
        freeable = _Freeable(pod, info)
        devices = device_hints(pod, cycle, info, snapshot) if st.plugin == DRA else ()
        hints = tuple(h.message for h in devices) if st.plugin == DRA else _hints(pod, info, st, short, freeable)
        v = NodeVerdict(info.name, st, hints, short, devices=devices)
        if relaxed is not None and st.plugin in _LIFTABLE and ERR_REASON_CONFLICT not in st.reasons \
                and not is_lost(info.node):  # a lost node: nothing lifted would make anything run there
            v = _past_the_lifts(state, pod, info, v, relaxed[0], relaxed[1].status_of(info.name), held, freeable)
        ranked.append((_distance(v, freeable), v))
    ranked.sort(key=lambda dv: dv[0])
    verdicts = [v for _, v in ranked]
    counts: dict[str, int] = {}
    for v in verdicts:
        for r in v.status.reasons:
            counts[r] = counts.get(r, 0) + 1
    volume_notes = volume_state_notes(pod, state) + device_state_notes(pod, state.dra) + diag.notes
    missing = missing_kinds(pod, state.dra) if pod.spec.resource_claims or pod.requests.scalar else ()
    error = scheduler_error(diag)
    if error is not None:
        return Explanation(pod, diag.num_all_nodes, False, error, None, tuple(verdicts),
                           (*volume_notes, SCHEDULER_ERROR_NOTE), counts, scheduler_error=True)
    named = "DeviceClass" in missing and any(r.startswith(CLASS_PREFIX) for r in pod.requests.scalar)
    if missing and (diag.feasible or named):
        # Fitting but for its devices (or stopped by an extended resource no class is known to
        # back): the state cannot say; nothing is predicted.
        return Explanation(pod, diag.num_all_nodes, False, None, None, tuple(verdicts), volume_notes, counts,
                           missing_kinds=missing)
    if diag.feasible:
        placer = Placer(plugins, None, profile.scores, percentage=profile.percentage_of_nodes_to_score,
                        extenders=profile.extenders)
        landing = placer.land(pod, snapshot, nominated)
        scores = tuple(sorted(landing.scores, key=lambda s: (-s.total, s.node)))
        extra = tuple(n for n in landing.notes if n not in volume_notes)
        return Explanation(pod, diag.num_all_nodes, True, None, None, tuple(verdicts),
                           volume_notes + extra + _why_still_pending(pod, state, profile.name), counts, scores,
                           landing.node, landing.candidates, landing.likely)
    message = fit_error_message(diag)
    notes: tuple[str, ...] = volume_notes
    note = post_filter_note(cycle)
    if diag.error:
        # Not a FitError: the scheduler writes the error itself, runs no PostFilter and retries.
        failed = ("a scheduler extender failed (it is not ignorable): the scheduler fails the pod with this error, "
                  "does not preempt, and retries it",)
        return Explanation(pod, diag.num_all_nodes, False, message, None, tuple(verdicts), (*notes, *failed), counts)
    stopped = post_filter_error(diag, profile.post_filters)
    if stopped is not None:
        # PostFilter fails before DefaultPreemption runs: the scheduler does not try to preempt.
        return Explanation(pod, diag.num_all_nodes, False, message, None, tuple(verdicts), notes, counts,
                           post_filter_error=stopped, dra_note=note)
    if not profile.preempts:
        alone = f"the {profile.name} profile runs no DefaultPreemption: the scheduler itself never evicts for this pod"
        return Explanation(pod, diag.num_all_nodes, False, message, None, tuple(verdicts), (*notes, alone), counts,
                           dra_note=note)
    if wap_member:
        return Explanation(pod, diag.num_all_nodes, False, message, NOT_ELIGIBLE_WAP, tuple(verdicts), notes, counts,
                           dra_note=note)
    pmsg, _ = preemption_message(plugins, pod, snapshot, diag, cycle, nominated)
    if pmsg is None and profile.extenders is not None:
        from kresched.sched.extender import scheduler_preemption

        pmsg, stopped, skipped = scheduler_preemption(profile.extenders, plugins, pod, snapshot, diag, cycle,
                                                      nominated, state.pdbs)
        notes += skipped
        if stopped is not None:
            notes += ("a preempt extender failed (it is not ignorable): the scheduler does not preempt",)
            return Explanation(pod, diag.num_all_nodes, False, message, None, tuple(verdicts), notes, counts,
                               post_filter_error=stopped)
    found = None
    if pmsg is None:
        notes += (_SCHEDULER_PREEMPTS,)
        floor = lowest_running_gang_priority(state) if gangs else None
        if floor is not None and pod.priority > floor:
            found = scheduler_choice(state, plugins, pod, snapshot, diag, cycle, nominated)
            if found is not None and found.breaks_gangs:
                notes += (found.note,)
    freeing: tuple[str, ...] = ()
    if pmsg is not None and pod.spec.preemption_policy != "Never" and asks_for_devices(pod, snapshot.dra) \
            and any(is_device_rejection(v.status) for v in verdicts):
        freeing = freeing_nodes(pod, snapshot, plugins, diag.node_to_status, nominated)
        if freeing:
            where = ", ".join(freeing[:5]) + (f" and {len(freeing) - 5} more" if len(freeing) > 5 else "")
            notes += (f"kresched can make room where the scheduler's preemption cannot: evicting lower-priority pods "
                      f"that hold devices frees enough for it on {where} (its plan names the node and the pods; "
                      "the scheduler then binds the pod once their claims are deallocated)",)
    return Explanation(pod, diag.num_all_nodes, False, message, pmsg, tuple(verdicts), notes, counts, dra_note=note,
                       device_freeing=freeing, missing_kinds=missing, scheduler_preemption=found)


_SCHEDULER_PREEMPTS = ("the scheduler's own preemption can make room: it will evict lower-priority pods and nominate "
                       "a node on its next attempt")
#: What is said of a pod considered alone that its group's cycle says otherwise.
_SOLO_NOTES = frozenset({_SCHEDULER_PREEMPTS, "it fits now: the scheduler has probably not retried yet (backoff after "
                         "a failed attempt, or its queue is long); it will bind the pod on its next attempt"})


def _why_there(state: ClusterState, pod: Pod, profile: Profile, plugins: list[FilterPlugin]) -> Explanation:
    """A bound pod: filter and score it as if it were Pending now, on the cluster without it."""
    node = pod.spec.node_name
    where = f"runs on node {node} (phase {pod.status.phase or 'unknown'})"
    if node not in state.node_by_name:
        return Explanation(pod, len(state.nodes), True, None, None, (), (f"{where}, which is not in the snapshot",),
                           bound_to=node)
    rest = [p for p in state.pods if p.key != pod.key]
    without = ClusterState.build(state.nodes, rest, state.pdbs, state.priority_classes, state.namespaces,
                                 state.workloads, state.storage, state.dra, state.node_leases)
    unbound = replacement_of(pod)
    # The same pod (its name, so its own ephemeral claims too), unbound.
    unbound = msgspec.structs.replace(unbound, metadata=pod.metadata,
                                      spec=msgspec.structs.replace(unbound.spec, volumes=pod.spec.volumes))
    again = _explain(without, unbound, profile, plugins, None)
    notes = [where]
    if again.predicted is None:
        notes.append("it would not fit anywhere if it were scheduled again now")
    elif node in again.candidates:
        notes.append(f"scheduled again now, it would land on {node} again"
                     + (f" or one of {len(again.candidates) - 1} node(s) tied with it" if len(again.candidates) > 1
                        else ""))
    else:
        notes.append(f"scheduled again now, it would land on {again.predicted}, not {node}: the cluster has "
                     "changed since it was placed (scores below are for now)")
    return Explanation(pod, again.num_nodes, True, None, None, again.verdicts, tuple(notes), again.reason_counts,
                       again.scores, again.predicted, again.candidates, again.likely, node)


def volume_state_notes(pod: Pod, state: ClusterState) -> tuple[str, ...]:
    """What the state cannot say about the pod's claims — never a silent guess: a snapshot
    without storage objects (the volume filters were not run), and claims the snapshot does not
    hold (`sources.snapshot._storage_kinds`: the cluster does not have them either)."""
    claims = [c for c in pod.claim_names if c]
    if not claims:
        return ()
    storage = state.storage
    names = ", ".join(claims)
    if not storage.has_claims:
        return (f"uses PersistentVolumeClaims ({names}) but the snapshot has no storage objects: the volume filters "
                "(VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone) were not run, so the "
                "scheduler may answer differently; include pv,pvc,storageclasses,csinodes in the snapshot",)
    out = []
    missing = [c for c in claims if storage.pvc(pod.namespace, c) is None]
    if missing:
        out.append(f"PersistentVolumeClaim(s) {', '.join(missing)} not in the snapshot: the scheduler keeps "
                   "the pod Pending until they exist")
    return tuple(out)


def _why_still_pending(pod: Pod, state: ClusterState, profile: str) -> tuple[str, ...]:
    out: list[str] = []
    if pod.spec.scheduling_gates:
        gates = ", ".join(g.name for g in pod.spec.scheduling_gates)
        out.append(f"held by scheduling gates ({gates}): the scheduler ignores it until they are removed")
    name = scheduler_name(pod)
    if name != profile:
        out.append(f"uses schedulerName {name!r}: only that scheduler places it")
    if pod.is_terminating:
        out.append("is being deleted")
    nom = pod.status.nominated_node_name
    if nom:
        waiting = [p for p in state.pods_on(nom) if p.is_terminating]
        if waiting:
            out.append(f"nominated to node {nom}, where {len(waiting)} pod(s) are still terminating "
                       "(preemption victims in their grace period)")
        else:
            out.append(f"nominated to node {nom}: the scheduler should bind it on its next attempt")
    cond = pod.condition("PodScheduled")
    if cond is not None and cond.status == "False" and cond.message:
        out.append(f"the scheduler's last word (may be stale): {cond.message}")
    if not out:
        out.append("it fits now: the scheduler has probably not retried yet (backoff after a failed "
                   "attempt, or its queue is long); it will bind the pod on its next attempt")
    return tuple(out)


# -- ranking and hints --------------------------------------------------------------------------


def _distance(v: NodeVerdict, freeable: _Freeable) -> tuple[int, int, int, float, str]:
    """The order nodes are listed in, nearest to fitting first — the least change first, a missing
    toleration (or label, or an uncordon) counted as one change as much as missing CPU is:

    1. nodes where the pod fits;
    2. then by how many changes it takes: each taint, label or cordon to get past, each resource
       short (or, without numbers, each reason);
    3. of as many changes, those evicting lower-priority pods could make (resources they hold
       enough of) before those that change the pod or the node;
    4. nodes where nothing makes the pod fit (requests above allocatable, ...) last;
    then the smaller relative resource shortfall, then the node name.
    """
    if v.status.is_success:
        return (0, 0, 0, 0.0, v.node)
    st = v.beyond if v.beyond is not None else v.status
    if st.is_success:
        changes, by_eviction = 0, 0
    elif st.code == Code.UNSCHEDULABLE and v.short:
        changes = len(v.short)
        by_eviction = sum(1 for ir in v.short if freeable(ir.resource) >= max(ir.missing, 1))
    else:
        changes, by_eviction = len(st.reasons), 0
    changes += len(v.lifts)
    shortfall = 0.0
    for ir in v.short:
        shortfall += max(ir.missing, 0) / (ir.capacity or 1)
    if v.hopeless or (v.beyond is None and any(_beyond_allocatable(ir) for ir in v.short)):
        return (2, 0, 0, shortfall, v.node)
    return (1, changes, changes - by_eviction, shortfall, v.node)


def format_amount(resource: str, amount: int) -> str:
    if resource == "cpu":
        return format_cpu(amount)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return format_bytes(amount)
    return str(amount)


def _amount(resource: str, amount: int) -> str:
    """An amount with its unit where the number alone does not say it: `1.5 CPU`, `512Mi`,
    `2 nvidia.com/gpu`."""
    text = format_amount(resource, amount)
    if resource == "cpu":
        return f"{text} CPU"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return text
    return f"{text} {resource}"


def _more(resource: str, amount: int) -> str:
    """`1.5 more CPU`, `512Mi more memory`, `1 more nvidia.com/gpu`."""
    unit = "CPU" if resource == "cpu" else resource
    return f"{format_amount(resource, amount)} more {unit}"


class _Freeable:
    """How much of a resource the pods kresched may evict for `pod` hold on the node (`pods`: how
    many there are); they are found once per node, on first use."""

    __slots__ = ("_info", "_lower", "_pod", "_sums")

    def __init__(self, pod: Pod, info: NodeInfo) -> None:
        self._pod, self._info = pod, info
        self._lower: list[Pod] | None = None
        self._sums: dict[str, int] = {}

    def __call__(self, resource: str) -> int:
        lower = self._lower
        if lower is None:
            priority = self._pod.effective_priority
            lower = self._lower = [p for p in self._info.pods if is_candidate_victim(p, priority)]
        if resource == "pods":
            return len(lower)
        amount = self._sums.get(resource)
        if amount is None:
            amount = self._sums[resource] = sum(p.requests.get(resource) for p in lower)
        return amount


def _shortfall(pod: Pod, info: NodeInfo, st: Status, nominated: Sequence[Pod]) -> tuple[InsufficientResource, ...]:
    """What the node lacks for the pod when NodeResourcesFit rejected it, as the filter saw the
    node: with the nominated pods that hold room there first (`run_filters_with_nominated`)."""
    if st.plugin != NODE_RESOURCES_FIT:
        return ()
    others = holding_room(pod, nominated)
    if others:
        held = info.clone()
        for p in others:
            held.add_pod(p)
        short = fits_request(pod.requests, held)
        if short:
            return tuple(short)
    return tuple(fits_request(pod.requests, info))


def _hints(pod: Pod, info: NodeInfo, st: Status, short: Sequence[InsufficientResource],
           freeable: _Freeable) -> tuple[str, ...]:
    if st.is_success:
        return ()
    if is_lost(info.node):  # whatever the filter says, nothing would run there
        return (f"node is lost: its kubelet does not report (kresched explain node/{info.name})",)
    plugin = st.plugin
    if plugin == NODE_RESOURCES_FIT:
        beyond = [ir for ir in short if _beyond_allocatable(ir)]
        if beyond:  # only why not: the room evictions could make would not be enough
            return (_NOTHING + "; ".join(_resource_hint(ir, freeable).removesuffix(_NO_EVICTION) for ir in beyond),)
        return tuple(_resource_hint(ir, freeable) for ir in short)
    if plugin == "TaintToleration":
        return tuple(f"tolerate taint {d}" for d in st.details) or ("tolerate the node's NoSchedule/NoExecute taints",)
    if plugin == "NodeAffinity":
        if ERR_REASON_CONFLICT in st.reasons:
            return ("the pod's required node affinity terms name no node in common (matchFields metadata.name)",)
        return _affinity_hints(pod, info, st)
    if plugin == "NodeUnschedulable":
        return ("node is cordoned: uncordon it (kubectl uncordon " + info.name + ")",)
    if plugin == "NodeName":
        return (f"the pod asks for node {pod.spec.node_name or '(another node)'} by spec.nodeName",)
    if not plugin and any(r.startswith("node(s) didn't satisfy plugin") for r in st.reasons):
        if any("VolumeBinding" in r for r in st.reasons):
            return ("left out before filtering: a claim of the pod is bound to a local PersistentVolume on "
                    "other nodes (its node affinity names their hostnames)",)
        return ("left out before filtering: the pod's spec.nodeName or node affinity "
                "(matchFields metadata.name) names other nodes",)
    if st.details:
        return st.details
    if st.code == Code.UNSCHEDULABLE and plugin in ("NodePorts", "InterPodAffinity", "PodTopologySpread"):
        return ("evicting lower-priority pods on this node could help",)
    return ()


_NO_EVICTION = ": no eviction helps"
_NOTHING = "nothing makes it fit here: "
#: The filters whose refusal a change of the pod or node lifts (a toleration, a label, an
#: uncordon), past which other filters may still refuse it.
_LIFTABLE = frozenset({"TaintToleration", "NodeAffinity", "NodeUnschedulable"})


def _lifted(pod: Pod) -> Pod:
    """`pod` as if it tolerated every taint and had no nodeSelector nor required node affinity:
    filtered, it says what each node would still refuse once those are lifted."""
    spec = pod.spec
    affinity = spec.affinity
    if affinity is not None and affinity.node_affinity is not None:
        affinity = msgspec.structs.replace(affinity, node_affinity=msgspec.structs.replace(
            affinity.node_affinity, required_during_scheduling_ignored_during_execution=None))
    spec = msgspec.structs.replace(spec, tolerations=(*spec.tolerations, Toleration(operator="Exists")),
                                   node_selector={}, affinity=affinity)
    return msgspec.structs.replace(pod, spec=spec)


def _past_the_lifts(state: ClusterState, pod: Pod, info: NodeInfo, v: NodeVerdict, lifted: Pod, beyond: Status,
                    held: Sequence[Pod], freeable: _Freeable) -> NodeVerdict:
    """A node a taint, label or cordon refuses: what would make the pod fit there — every such
    change it needs (`_lifts`) and what the rest would still need (more room) — offered only when
    they would, together; where nothing would (requests above allocatable, ...), only why not."""
    lifts = _lifts(state, pod, info)
    short = _shortfall(lifted, info, beyond, held)
    after = _hints(lifted, info, beyond, short, freeable)
    if beyond.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return replace(v, hints=after or v.hints, short=short, beyond=beyond, hopeless=True)
    if beyond.is_success:
        after = ("then it fits",)
    return replace(v, hints=(*lifts, *after), short=short, beyond=beyond, lifts=lifts)


def _lifts(state: ClusterState, pod: Pod, info: NodeInfo) -> tuple[str, ...]:
    """Every taint the pod does not tolerate, label it lacks and cordon on the node: one change each.
    kresched's own reservation is named as such, with whether it is stale."""
    node = info.node
    out = []
    if node.spec.unschedulable and not tolerations_tolerate_taint(pod.spec.tolerations, _UNSCHEDULABLE):
        out.append(f"node is cordoned: uncordon it (kubectl uncordon {node.name})")
    for t in node.taints:
        if t.effect not in ("NoSchedule", "NoExecute") or tolerations_tolerate_taint(pod.spec.tolerations, t):
            continue
        if (t.key, t.value, t.effect) == (RESERVATION_TAINT.key, RESERVATION_TAINT.value, RESERVATION_TAINT.effect):
            out.append(_reservation_hint(state, node.metadata.annotations.get(RESERVED_FOR)))
        else:
            out.append(f"tolerate taint {format_taint(t)}")
    if not required_node_affinity_matches(pod, node.name, node.labels):
        out.extend(_affinity_hints(pod, info, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)))
    return tuple(out)


def _reservation_hint(state: ClusterState, holder: str | None) -> str:
    """kresched's reservation taint: stale when the pod it was made for is gone or bound (a gang's,
    `podgroup/ml/train`: when none of its members is Pending)."""
    if holder and holder.startswith("podgroup/") and holder.count("/") == 2:
        _, ns, name = holder.split("/")
        pending = sum(1 for g in state.gangs.find(ns, name) for p in g.members if p.is_pending)
        if pending:
            return (f"its taint {format_taint(RESERVATION_TAINT)} is kresched's reservation for {holder} ({pending} "
                    "member(s) still Pending): it goes when that preempt ends, or `kresched untaint` if the run was "
                    "killed")
        return (f"a stale kresched reservation (made for {holder}, no member Pending): `kresched untaint` removes its "
                f"taint {format_taint(RESERVATION_TAINT)}")
    held = state.pod(holder) if holder and holder.count("/") == 1 else None
    if holder and held is not None and held.is_pending:
        return (f"its taint {format_taint(RESERVATION_TAINT)} is kresched's reservation for {holder} (still "
                "Pending): it goes when that preempt ends, or `kresched untaint` if the run was killed")
    why = f" (made for {holder}, {'now bound' if held is not None else 'gone'})" if holder else ""
    return f"a stale kresched reservation{why}: `kresched untaint` removes its taint {format_taint(RESERVATION_TAINT)}"


def _beyond_allocatable(ir: InsufficientResource) -> bool:
    """The node could never give the pod this resource, whatever is evicted."""
    return ir.resource != "pods" and (ir.capacity <= 0 or ir.unresolvable or ir.requested > ir.capacity)


def _resource_hint(ir: InsufficientResource, freeable: _Freeable) -> str:
    name = ir.resource
    if name == "pods":
        lower = freeable("pods")
        if lower:
            return (f"node is at its limit of {ir.capacity} pods: evicting 1 of its {lower} lower-priority pods "
                    "makes room")
        return f"node is at its limit of {ir.capacity} pods and has no lower-priority pod to evict"
    if ir.capacity <= 0:
        return f"node has no {name} (the pod requests {_amount(name, ir.requested)}): no eviction helps"
    if ir.unresolvable or ir.requested > ir.capacity:
        return (f"requests {_amount(name, ir.requested)} but the node has only {_amount(name, ir.capacity)} "
                "allocatable: no eviction helps")
    missing = ir.missing
    held = freeable(name)
    text = f"needs {_more(name, missing)}"
    if held >= missing:
        return f"{text}: evicting lower-priority pods could free {_amount(name, held)}"
    if held > 0:
        return f"{text}: lower-priority pods hold only {_amount(name, held)}"
    return f"{text}: no lower-priority pod here holds any"


def _affinity_hints(pod: Pod, info: NodeInfo, st: Status) -> tuple[str, ...]:
    labels = info.node.labels
    out = []
    for k, v in pod.spec.node_selector.items():
        have = labels.get(k)
        if have is None:
            out.append(f"node label {k}={v} missing")
        elif have != v:
            out.append(f"node label {k} is {have!r}, the pod's nodeSelector wants {v!r}")
    if out:
        return tuple(out)
    if st.details:
        return st.details
    aff = pod.spec.affinity
    na = aff.node_affinity if aff else None
    req = na.required_during_scheduling_ignored_during_execution if na else None
    if req is not None:
        n = len(req.node_selector_terms)
        out.append(f"node matches none of the pod's {n} required node affinity term{'s' if n != 1 else ''}")
    return tuple(out)
