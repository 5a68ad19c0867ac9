"""Workload-aware preemption: a pod group preempts as one, the whole cluster its domain
(pkg/scheduler/framework/preemption/podgrouppreemption.go and types.go, v1.36, gate
`WorkloadAwarePreemption`).

Owns the preemption units (`PreemptionVictim`: one pod, or every pod of a PodGroup whose
`disruptionMode` is `PodGroup`), their order (`more_important_victim`), the scheduler's PDB split of
units (`filter_victims_with_pdb_violation`) and `select_victims_on_domain`: remove every unit of
lower priority than the preemptor PodGroup, check the group schedules, then reprieve units —
PDB-violating ones first, each half from the most important down — keeping each one whose return
still lets the group schedule. The check is the caller's (`Schedulable`: the pod-group algorithm
without PostFilters, on the cluster without the given pods), so this module never places a pod.

What upstream leaves to chance: units of equal rank are ordered by a map's iteration order; here
by their first pod's key (`victim_order_key`), so the same state gives the same victims. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kresched.model.gangs import PodGroup
from kresched.model.objects import Pod, PodDisruptionBudget
from kresched.model.selectors import label_selector_matches
from kresched.sched.framework import SUCCESS, Code, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.preemption import NOT_ELIGIBLE_NEVER

__all__ = [
    "NO_VICTIMS_FOR_PREEMPTOR",
    "NOT_REGISTERED",
    "NOT_SUPPORTED_WITH_CONSTRAINTS",
    "PREEMPTED_BY",
    "PREEMPTION_CONDITION",
    "DomainSelection",
    "PreemptionVictim",
    "Schedulable",
    "domain_victims",
    "filter_victims_with_pdb_violation",
    "more_important_victim",
    "pod_group_priority",
    "preemptor_preemption_policy",
    "select_victims_on_domain",
    "victim_order_key",
]

NO_VICTIMS_FOR_PREEMPTOR = "No preemption victims found for incoming preemptor"
#: `runWorkloadAwarePreemption` without a PodGroupPostFilter plugin (a profile without DefaultPreemption).
NOT_REGISTERED = "default preemption plugin is not registered, workload aware preemption is disabled"
#: `runWorkloadAwarePreemption` for a PodGroup with topology constraints.
NOT_SUPPORTED_WITH_CONSTRAINTS = "workload aware preemption is not supported for pod groups with scheduling constraints"
#: The event on each victim (`Preempted`), and its `DisruptionTarget` condition's message.
PREEMPTED_BY = "Preempted by podgroup {uid} on node cluster"
PREEMPTION_CONDITION = "{scheduler}: preempting to accommodate a higher priority podgroup"

#: Whether the preemptor group schedules on the cluster without the pods of the given keys.
Schedulable = Callable[[frozenset[str]], Status]


def pod_group_priority(pod_group: PodGroup) -> int:
    """`util.PodGroupPriority`: the PodGroup's `spec.priority` (set at admission from its own
    `priorityClassName`), 0 when unset — never its pods' priorities."""
    return pod_group.spec.priority if pod_group.spec.priority is not None else 0


def preemptor_preemption_policy(pods: Iterable[Pod]) -> str:
    """`newPodGroupPreemptor`: `Never` when any member says so, else `PreemptLowerPriority`."""
    return "Never" if any(p.spec.preemption_policy == "Never" for p in pods) else "PreemptLowerPriority"


@dataclass(frozen=True)
class PreemptionVictim:
    """One unit workload-aware preemption evicts whole (upstream's `victim`)."""

    pods: tuple[Pod, ...]
    #: A single pod's own priority; a PodGroup unit's PodGroup priority.
    priority: int
    #: `PodGroup ns/name` when the unit is a `disruptionMode: PodGroup` group.
    pod_group: str | None = None

    @property
    def is_pod_group(self) -> bool:
        """`IsPodGroup`: its (first) pod names a scheduling group — a disruptionMode-Pod member too."""
        return self.pods[0].spec.scheduling_group is not None

    @property
    def earliest_start(self) -> float:
        """`EarliestStartTime`: the earliest `status.startTime` of its pods (not started: now, after any)."""
        return min(p.start_seconds for p in self.pods)

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(p.key for p in self.pods)


def victim_order_key(v: PreemptionVictim) -> tuple[int, int, int, float, str]:
    """Most important first (`moreImportantVictim`): higher priority; a group's unit before a single
    pod of the same priority; of two single pods the older; of two groups the larger, then the
    older. Ties (upstream: a map's order) by the first pod's key."""
    size = -len(v.pods) if v.is_pod_group else 0
    return (-v.priority, 0 if v.is_pod_group else 1, size, v.earliest_start, min(p.key for p in v.pods))


def more_important_victim(a: PreemptionVictim, b: PreemptionVictim) -> bool:
    """`moreImportantVictim` (its numbered rules; see `victim_order_key`), without the tie-break."""
    if a.priority != b.priority:
        return a.priority > b.priority
    if a.is_pod_group != b.is_pod_group:
        return a.is_pod_group
    if not a.is_pod_group:
        return a.earliest_start < b.earliest_start
    if len(a.pods) != len(b.pods):
        return len(a.pods) > len(b.pods)
    return a.earliest_start < b.earliest_start


def domain_victims(node_infos: Iterable[NodeInfo], pod_group_of: Callable[[Pod], PodGroup | None]
                   ) -> list[PreemptionVictim]:
    """`newDomainForWorkloadPreemption`: every pod on the nodes, each its own unit, but the pods of a
    PodGroup whose `disruptionMode` is `PodGroup` one unit of the PodGroup's priority.
    `pod_group_of(pod)`: the v1alpha2 PodGroup its `schedulingGroup` names, if it exists."""
    singles: list[PreemptionVictim] = []
    groups: dict[str, tuple[PodGroup, list[Pod]]] = {}
    for info in node_infos:
        for p in info.pods:
            group = pod_group_of(p) if p.spec.scheduling_group is not None else None
            if group is None or group.disruption_mode != "PodGroup":
                singles.append(PreemptionVictim((p,), p.priority))
                continue
            groups.setdefault(group.key, (group, []))[1].append(p)
    units = [PreemptionVictim(tuple(pods), pod_group_priority(g), f"PodGroup {g.key}") for g, pods in groups.values()]
    return singles + units


def filter_victims_with_pdb_violation(victims: Sequence[PreemptionVictim], pdbs: Sequence[PodDisruptionBudget]
                                      ) -> tuple[list[PreemptionVictim], list[PreemptionVictim]]:
    """`filterVictimsWithPDBViolation`: budgets from `status.disruptionsAllowed`, spent in the order
    given; a unit violates when any of its pods does (its later pods then spend nothing); a pod's
    PDBs are looked at until one goes below zero; an empty selector matches nothing; a pod already
    in `status.disruptedPods` spends nothing."""
    allowed = [pdb.status.disruptions_allowed if pdb.status else 0 for pdb in pdbs]

    def violating(pod: Pod) -> bool:
        if not pod.labels:
            return False
        for i, pdb in enumerate(pdbs):
            if pdb.namespace != pod.namespace:
                continue
            sel = pdb.spec.selector
            if sel is None or (not sel.match_labels and not sel.match_expressions):
                continue
            if not label_selector_matches(sel, pod.labels):
                continue
            if pdb.status is not None and pod.name in pdb.status.disrupted_pods:
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                return True
        return False

    bad: list[PreemptionVictim] = []
    good: list[PreemptionVictim] = []
    for v in victims:
        (bad if any(violating(p) for p in v.pods) else good).append(v)
    return bad, good


@dataclass(frozen=True)
class DomainSelection:
    """What `select_victims_on_domain` found: the units to preempt, most important first (Success),
    or why there are none (the status the pod-group cycle appends to its own)."""

    victims: tuple[PreemptionVictim, ...]
    status: Status
    #: The units that could have been preempted (lower priority than the preemptor).
    potential: int = 0

    @property
    def pods(self) -> tuple[Pod, ...]:
        return tuple(p for v in self.victims for p in v.pods)


def select_victims_on_domain(priority: int, preemption_policy: str, victims: Iterable[PreemptionVictim],
                             pdbs: Sequence[PodDisruptionBudget], schedulable: Schedulable) -> DomainSelection:
    """`selectVictimsOnDomain` (see the module docstring). `priority`, `preemption_policy`: the
    preemptor PodGroup's; `victims`: every unit of the domain (`domain_victims`)."""
    if preemption_policy == "Never":
        return DomainSelection((), Status(Code.UNSCHEDULABLE, (NOT_ELIGIBLE_NEVER,)))
    potential = sorted((v for v in victims if v.priority < priority), key=victim_order_key)
    if not potential:
        return DomainSelection((), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS_FOR_PREEMPTOR,)))
    removed = frozenset().union(*(v.keys for v in potential))
    st = schedulable(removed)
    if not st.is_success:
        return DomainSelection((), st, len(potential))
    bad, good = filter_victims_with_pdb_violation(potential, pdbs)
    chosen: list[PreemptionVictim] = []
    for v in (*bad, *good):
        back = removed - v.keys
        if schedulable(back).is_success:
            removed = back
        else:
            chosen.append(v)
    chosen.sort(key=victim_order_key)
    return DomainSelection(tuple(chosen), SUCCESS, len(potential))
