"""The GangScheduling plugin (pkg/scheduler/framework/plugins/gangscheduling, v1.36, gate
`GangScheduling`) and the pod-group state it reads (backend/cache/podgroupstate.go).

Two extension points:

1. PreEnqueue: a pod that names a PodGroup (`spec.schedulingGroup.podGroupName`) stays out of the
   active queue while that PodGroup does not exist, and — for a `gang` policy — while fewer than
   minCount of its pods exist (`AllPodsCount`: every member the scheduler knows, bound, pending
   or gated). Both are UnschedulableAndUnresolvable and silent: no event, no condition (recorded
   on v1.36.2: `min-count-not-reached`, `missing-podgroup`).
2. Permit: in the pod-group cycle, a gang member placed while fewer than minCount members are
   scheduled (bound or assumed in this cycle) waits (`Wait`, with a 5-minute timeout the pod-group
   cycle never reaches: it decides in one pass); the one that makes minCount allows them all. A
   `basic` PodGroup, and a pod of no group, pass.

`PodGroupState` is the cache's count of a group's pods; `pod_group_state` builds it from the
members a cluster state holds. Reason strings are upstream's, word for word. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from kresched.model.gangs import PodGroup
from kresched.model.objects import Pod
from kresched.sched.framework import SUCCESS, Code, Status

__all__ = [
    "ERR_MIN_COUNT_NOT_CREATED",
    "ERR_POD_GROUP_MISSING",
    "NAME",
    "PERMIT_TIMEOUT_SECONDS",
    "WAIT_MIN_COUNT",
    "PodGroupState",
    "is_gang",
    "permit",
    "pod_group_state",
    "pre_enqueue",
]

NAME = "GangScheduling"

#: PreEnqueue, the pod's PodGroup does not exist (`%q` of its name).
ERR_POD_GROUP_MISSING = "waiting for pods's pod group \"{}\" to appear in scheduling queue"
#: PreEnqueue, fewer than minCount of a gang's pods exist.
ERR_MIN_COUNT_NOT_CREATED = "waiting for minCount pods from a gang to appear in scheduling queue"
#: Permit, fewer than minCount of a gang's pods are scheduled.
WAIT_MIN_COUNT = "waiting for minCount pods from a gang to be scheduled"
#: Permit's timeout (`permitTimeoutDuration`): a wall clock kresched does not simulate.
PERMIT_TIMEOUT_SECONDS = 300


@dataclass(frozen=True)
class PodGroupState:
    """What the scheduler's cache counts of one pod group: every member it knows (`all_pods`),
    those bound to a node (`assigned`, terminating ones too: the cache keeps a pod until it is
    deleted) and those assumed in the current pod-group cycle (`assumed`)."""

    all_pods: int
    assigned: int
    assumed: int = 0

    @property
    def scheduled(self) -> int:
        """`ScheduledPodsCount`: assigned and assumed."""
        return self.assigned + self.assumed

    def assume(self) -> PodGroupState:
        """One more member assumed (placed in this cycle)."""
        return replace(self, assumed=self.assumed + 1)


def pod_group_state(members: Iterable[Pod]) -> PodGroupState:
    """The cache's state of a group from its member pods: finished pods are not in the cache (its
    informer drops them), every other one counts, bound or not, gated or not."""
    all_pods = assigned = 0
    for p in members:
        if p.is_finished:
            continue
        all_pods += 1
        if p.spec.node_name:
            assigned += 1
    return PodGroupState(all_pods, assigned)


def is_gang(pod_group: PodGroup) -> bool:
    """`policy.Gang != nil` (a `basic` policy, or none, is no gang)."""
    return _min_count(pod_group) is not None


def _min_count(pod_group: PodGroup) -> int | None:
    policy = pod_group.spec.scheduling_policy
    return policy.gang.min_count if policy is not None and policy.gang is not None else None


def pre_enqueue(pod: Pod, pod_group: PodGroup | None, state: PodGroupState) -> Status:
    """`PreEnqueue`: Success, or why the pod stays out of the active queue (UnschedulableAndUnresolvable)."""
    group = pod.spec.scheduling_group
    if group is None or not group.pod_group_name:
        return SUCCESS
    if pod_group is None:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_POD_GROUP_MISSING.format(group.pod_group_name),),
                      NAME)
    min_count = _min_count(pod_group)
    if min_count is not None and state.all_pods < min_count:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_MIN_COUNT_NOT_CREATED,), NAME)
    return SUCCESS


def permit(pod: Pod, pod_group: PodGroup | None, state: PodGroupState, member: bool = False) -> Status:
    """`Permit` for a member already assumed (counted in `state`): Success, or Wait while fewer
    than minCount members are scheduled. `member`: the pod is known to be the group's though it
    names none yet (a what-if Job's replica, before the Job controller names its PodGroup)."""
    min_count = _min_count(pod_group) if pod_group is not None else None
    if (pod.spec.scheduling_group is None and not member) or min_count is None:
        return SUCCESS
    if state.scheduled < min_count:
        return Status(Code.WAIT, (WAIT_MIN_COUNT,), NAME)
    return SUCCESS
