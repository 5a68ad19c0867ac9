"""The scheduler's pod-group cycle (pkg/scheduler/schedule_one_podgroup.go, v1.36, gates
`GenericWorkload` and `GangScheduling`; `WorkloadAwarePreemption` for its preemption).

A pod with `spec.schedulingGroup` is never scheduled alone: when the first of its group's members
leaves the queue, every unscheduled member in the queue is taken with it (`podGroupInfoForPod`)
and the group goes through one cycle on one snapshot:

1. the algorithm (`pod_group_algorithm`, `podGroupSchedulingDefaultAlgorithm`): the members in a
   fixed order — higher priority first, then the one that entered the queue first
   (`member_order_key`) — each through the ordinary filters and scores with the earlier ones
   assumed where they were placed, then through Permit (`gang_scheduling.permit`). Greedy: no
   backtracking, so a group may fail where another order would fit. The group is schedulable as
   soon as some member's Permit says Success (for a gang: minCount members scheduled, those
   already bound counting; for a `basic` group: any member placed); a member that fits nowhere
   keeps its own failure and the others go on;
2. when the group is Unschedulable and `WorkloadAwarePreemption` is on, workload-aware preemption
   (`sched.pod_group_preemption`): the algorithm again, without PostFilters, on the cluster without
   candidate victims; Success means the group waits for its victims to go (`waiting_on_preemption`);
3. what is written (`submitPodGroupAlgorithmResult`): each member's `PodScheduled` message
   (`CycleResult.messages`: None for a member that binds) and the PodGroup's `PodGroupScheduled`
   condition, never turned back to False once True (`updatePodGroupCondition`).

Per-member filtering and scoring are the caller's (`MemberScheduler`: the planner's placer), so
this module never chooses a node itself; what it owns is the order, the Permit counts, the
statuses and their words. Not simulated: the Permit timeout as a wall clock (the cycle decides in
one pass: recorded, a member never waited for it), the retry loop (each cycle here is one), the
placement-based algorithm of `TopologyAwareWorkloadScheduling`, and — with
`WorkloadAwarePreemption` off — the per-pod preemption a member would run inside the cycle
(`Attempt.needs_preemption` says when it would). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kresched.model.gangs import PodGroup
from kresched.model.objects import Pod, PodDisruptionBudget
from kresched.sched.framework import SUCCESS, Code, Snapshot, Status, StatusCode
from kresched.sched.gang_scheduling import PodGroupState, permit
from kresched.sched.pod_group_preemption import (
    NOT_REGISTERED,
    NOT_SUPPORTED_WITH_CONSTRAINTS,
    PreemptionVictim,
    pod_group_priority,
    preemptor_preemption_policy,
    select_victims_on_domain,
)

__all__ = [
    "CONDITION_TYPE",
    "ERR_MIXED_SCHEDULERS",
    "ERR_POD_GROUP_UNSCHEDULABLE",
    "NOT_ELIGIBLE_WAP",
    "PERMIT_WAIT_NOTE",
    "AlgorithmResult",
    "Attempt",
    "CycleResult",
    "MemberResult",
    "MemberScheduler",
    "PodGroupCondition",
    "Preemption",
    "WorkloadPreemption",
    "member_order_key",
    "pod_group_algorithm",
    "pod_group_cycle",
    "snapshot_without",
]

#: `errPodGroupUnschedulable`: the first reason of a group that does not schedule.
ERR_POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
#: What `RunPermitPlugins` appends to a Wait.
PERMIT_WAIT_NOTE = "one or more plugins asked to wait and no plugin rejected pod"
#: DefaultPreemption's PostFilter for a member when WorkloadAwarePreemption is on (it writes it after
#: `preemption: `): per-pod preemption is off for every pod with a `schedulingGroup`.
NOT_ELIGIBLE_WAP = "not eligible due to workload aware preemption enabled"
#: `frameworkForPodGroup`, members of different schedulers.
ERR_MIXED_SCHEDULERS = "all pods in a single pod group should have the same .spec.schedulerName set, got: {!r} and {!r}"
_ERR_OTHER_POD = "failed to schedule other pod from a pod group: {}"
#: The PodGroup's condition (`schedulingapi.PodGroupScheduled`).
CONDITION_TYPE = "PodGroupScheduled"


def member_order_key(pod: Pod) -> tuple[int, str, str]:
    """The members' order in the cycle: higher priority first, then the one that entered the
    queue first — for kresched, created first (a pod created ungated enters the queue as it is
    created), then by key."""
    return (-pod.priority, pod.metadata.creation_timestamp or "", pod.key)


@dataclass(frozen=True)
class Attempt:
    """What the scheduling algorithm (filters, scores, and with `post_filters` the PostFilters) said
    of one member on one snapshot: the node it picks (None: it fits nowhere), its tied nodes, and
    otherwise the scheduler's message for it."""

    node: str | None
    candidates: tuple[str, ...] = ()
    #: The scheduler would score only a sample of the feasible nodes: `node` is the likely one.
    likely: bool = False
    message: str = ""
    #: A plugin failed with an error, not a verdict (`message` is it).
    error: bool = False
    #: WorkloadAwarePreemption off: the per-pod preemption inside the cycle would nominate a node
    #: for this member (not simulated).
    needs_preemption: bool = False
    #: The caller's own data of the attempt (the planner keeps its landing: the scores).
    detail: object = field(default=None, compare=False)


class MemberScheduler(Protocol):
    """The per-member scheduling the cycle runs (`schedulingAlgorithm`, `assumeAndReserve`)."""

    def schedule(self, pod: Pod, snapshot: Snapshot, post_filters: bool) -> Attempt: ...

    def assume(self, pod: Pod, node: str, snapshot: Snapshot) -> Snapshot: ...


@dataclass(frozen=True)
class MemberResult:
    pod: Pod
    attempt: Attempt
    #: Permit's status once placed (Success or Wait); None when not placed.
    permit: Status | None = None

    @property
    def placed(self) -> bool:
        return self.attempt.node is not None and not self.attempt.error


@dataclass(frozen=True)
class AlgorithmResult:
    """`podGroupAlgorithmResult`: each member's result (in order; after an error, only those tried),
    the group's status, and the snapshot with the placed members assumed."""

    members: tuple[MemberResult, ...]
    code: StatusCode
    reasons: tuple[str, ...]
    snapshot: Snapshot
    #: WorkloadAwarePreemption off and some member would preempt per pod: the result is not the scheduler's.
    needs_preemption: bool = False

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    @property
    def placed(self) -> tuple[MemberResult, ...]:
        return tuple(m for m in self.members if m.placed)


def pod_group_algorithm(pod_group: PodGroup | None, pods: Sequence[Pod], state: PodGroupState, snapshot: Snapshot,
                        scheduler: MemberScheduler, post_filters: bool = True) -> AlgorithmResult:
    """`podGroupSchedulingDefaultAlgorithm` for `pods` (the queued members, in `member_order_key`
    order), `state` counting the group's pods before the cycle."""
    code, reasons = Code.UNSCHEDULABLE, (ERR_POD_GROUP_UNSCHEDULABLE,)
    out: list[MemberResult] = []
    preempting = False
    for pod in pods:
        attempt = scheduler.schedule(pod, snapshot, post_filters)
        if attempt.error:
            out.append(MemberResult(pod, attempt))
            return AlgorithmResult(tuple(out), Code.ERROR, (_ERR_OTHER_POD.format(attempt.message),), snapshot,
                                   preempting)
        if attempt.node is None:
            preempting = preempting or attempt.needs_preemption
            out.append(MemberResult(pod, attempt))
            continue
        state = state.assume()
        snapshot = scheduler.assume(pod, attempt.node, snapshot)
        status = permit(pod, pod_group, state, member=True)  # (every pod of the cycle is the group's)
        out.append(MemberResult(pod, attempt, status))
        if status.is_success:
            code, reasons = Code.SUCCESS, ()
    return AlgorithmResult(tuple(out), code, reasons, snapshot, preempting)


@dataclass(frozen=True)
class PodGroupCondition:
    """The PodGroup's `PodGroupScheduled` condition as the scheduler writes it."""

    status: str
    reason: str
    message: str = ""
    type: str = CONDITION_TYPE

    @property
    def text(self) -> str:
        """`PodGroupScheduled=False (Unschedulable): pod group is unschedulable, ...`."""
        return f"{self.type}={self.status} ({self.reason})" + (f": {self.message}" if self.message else "")


@dataclass(frozen=True)
class WorkloadPreemption:
    """What workload-aware preemption needs besides the cycle: the gate, whether the profile runs
    DefaultPreemption (its only PodGroupPostFilter plugin), every unit of the cluster
    (`pod_group_preemption.domain_victims`), the PDBs, and the cluster without given pods."""

    enabled: bool
    registered: bool
    victims: Sequence[PreemptionVictim]
    pdbs: Sequence[PodDisruptionBudget]
    without: Callable[[frozenset[str]], Snapshot]


@dataclass(frozen=True)
class Preemption:
    """What workload-aware preemption came to: its victims (Success), or why none."""

    status: Status
    victims: tuple[PreemptionVictim, ...] = ()
    #: How many units had a lower priority than the preemptor.
    potential: int = 0
    #: The preemptor's priority: its PodGroup's.
    priority: int = 0

    @property
    def pods(self) -> tuple[Pod, ...]:
        return tuple(p for v in self.victims for p in v.pods)


@dataclass(frozen=True)
class CycleResult:
    """One pod-group cycle on the cluster as it is, and what it writes."""

    algorithm: AlgorithmResult
    #: The group's final status: code and message (the algorithm's, with preemption's reason appended).
    code: StatusCode
    message: str
    #: What workload-aware preemption did (None: it did not run).
    preemption: Preemption | None
    waiting_on_preemption: bool
    #: Each queued member's `PodScheduled` message, by pod key (None: it binds).
    messages: Mapping[str, str | None]
    condition: PodGroupCondition
    #: When it preempts: the next cycle, once its victims are gone (where the members bind).
    after: AlgorithmResult | None = None

    @property
    def scheduled(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def final_condition(self) -> PodGroupCondition:
        """The condition once the cycle's outcome has played out: after preemption, what the next
        cycle writes when the members bind (`PodGroupScheduled=True`)."""
        if self.waiting_on_preemption and self.after is not None and self.after.code == Code.SUCCESS:
            return _condition(Code.SUCCESS, "")
        return self.condition


def pod_group_cycle(pod_group: PodGroup | None, pods: Sequence[Pod], state: PodGroupState, snapshot: Snapshot,
                    scheduler: MemberScheduler, preemption: WorkloadPreemption | None = None,
                    existing: PodGroupCondition | None = None) -> CycleResult:
    """`podGroupCycle` then `submitPodGroupAlgorithmResult` (see the module docstring). `pods`: the
    queued members in order; `preemption`: None when the gate is off; `existing`: the PodGroup's
    condition before the cycle (default: the object's)."""
    result = pod_group_algorithm(pod_group, pods, state, snapshot, scheduler)
    code, reasons = result.code, result.reasons
    wap: Preemption | None = None
    after: AlgorithmResult | None = None
    if preemption is not None and preemption.enabled and code == Code.UNSCHEDULABLE and pod_group is not None:
        wap = _run_preemption(pod_group, pods, state, scheduler, preemption)
        if wap.status.is_success:
            after = pod_group_algorithm(pod_group, pods, state, preemption.without(frozenset(p.key for p in wap.pods)),
                                        scheduler)
        elif wap.status.code == Code.ERROR:
            code, reasons = Code.ERROR, wap.status.reasons
        else:
            reasons = (*reasons, ", ".join(wap.status.reasons))
    waiting = wap is not None and wap.status.is_success
    message = ", ".join(reasons)
    messages: dict[str, str | None] = {}
    tried = {m.pod.key: m for m in result.members}
    for pod in pods:
        m = tried.get(pod.key)
        if code == Code.ERROR:
            messages[pod.key] = m.attempt.message if m is not None and m.attempt.error else message
        elif m is None:
            messages[pod.key] = message
        elif m.placed:
            if code == Code.SUCCESS:
                messages[pod.key] = None
            elif waiting:
                messages[pod.key] = message
            else:
                assert m.permit is not None
                messages[pod.key] = ", ".join((ERR_POD_GROUP_UNSCHEDULABLE, *_permit_reasons(m.permit)))
        else:
            messages[pod.key] = m.attempt.message
    condition = _condition(code, message)
    existing = existing if existing is not None else _existing_condition(pod_group)
    if existing is not None and existing.status == "True" and condition.status != "True":
        condition = existing
    return CycleResult(result, code, message, wap, waiting, messages, condition, after)


def _run_preemption(pod_group: PodGroup, pods: Sequence[Pod], state: PodGroupState, scheduler: MemberScheduler,
                    preemption: WorkloadPreemption) -> Preemption:
    """`runWorkloadAwarePreemption`: the algorithm without PostFilters is the check."""
    priority = pod_group_priority(pod_group)
    if not preemption.registered:
        return Preemption(Status(Code.UNSCHEDULABLE, (NOT_REGISTERED,)), priority=priority)
    constraints = pod_group.spec.scheduling_constraints
    if constraints is not None and constraints.topology:
        return Preemption(Status(Code.UNSCHEDULABLE, (NOT_SUPPORTED_WITH_CONSTRAINTS,)), priority=priority)
    checked: dict[frozenset[str], Status] = {}

    def schedulable(removed: frozenset[str]) -> Status:
        st = checked.get(removed)
        if st is None:
            res = pod_group_algorithm(pod_group, pods, state, preemption.without(removed), scheduler,
                                      post_filters=False)
            st = checked[removed] = SUCCESS if res.code == Code.SUCCESS else Status(res.code, res.reasons)
        return st

    sel = select_victims_on_domain(priority, preemptor_preemption_policy(pods), preemption.victims, preemption.pdbs,
                                   schedulable)
    return Preemption(sel.status, sel.victims, sel.potential, priority)


def _permit_reasons(st: Status) -> tuple[str, ...]:
    """A Wait's reasons as `RunPermitPlugins` returns them."""
    return (*st.reasons, PERMIT_WAIT_NOTE) if st.code == Code.WAIT else st.reasons


def _condition(code: StatusCode, message: str) -> PodGroupCondition:
    if code == Code.SUCCESS:
        return PodGroupCondition("True", "Scheduled", message)
    if code == Code.ERROR:
        return PodGroupCondition("False", "SchedulerError", message)
    return PodGroupCondition("False", "Unschedulable", message)


def _existing_condition(pod_group: PodGroup | None) -> PodGroupCondition | None:
    if pod_group is None:
        return None
    for c in pod_group.status.conditions:
        if c.type == CONDITION_TYPE:
            return PodGroupCondition(c.status, c.reason or "", c.message or "")
    return None


def snapshot_without(snapshot: Snapshot, pods: Sequence[Pod]) -> Snapshot:
    """`snapshot` with `pods` (bound pods) taken off their nodes."""
    by_node: dict[str, list[Pod]] = {}
    for p in pods:
        by_node.setdefault(p.spec.node_name, []).append(p)
    for node, gone in by_node.items():
        info = snapshot.by_name.get(node)
        if info is None:
            continue
        info = info.clone()
        for p in gone:
            info.remove_pod(p)
        snapshot = snapshot.with_node_info(info)
    return snapshot
