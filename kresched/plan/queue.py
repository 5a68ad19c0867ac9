"""The scheduling queue as kresched plans it: which pending pods, in which order (PrioritySort:
higher priority first, then older), each later plan seeing the earlier ones carried out, a gang's
pending members planned together where its first member comes (`plan.gang`). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from kresched.model.cluster import ClusterState
from kresched.model.gangs import Gang, declared_group
from kresched.model.objects import Pod
from kresched.plan.gang import GangOf, PendingOf, plan_queue
from kresched.plan.planner import Planner
from kresched.plan.plans import Plan, PlanOptions

__all__ = ["gang_lookups", "pending_pods_to_plan", "plan_pending", "queue_key"]


def pending_pods_to_plan(state: ClusterState, all_pending: bool = False) -> list[Pod]:
    """Pending pods in the order they are planned: critical only (or all), highest priority first
    (as the scheduling queue's PrioritySort), then oldest first."""
    pods = [p for p in state.pending_pods() if all_pending or p.is_critical]
    pods.sort(key=queue_key)
    return pods


def queue_key(pod: Pod) -> tuple[int, str, str]:
    """The scheduling queue's order (PrioritySort): higher priority first, then older first."""
    return (-pod.effective_priority, pod.metadata.creation_timestamp or "", pod.key)


def plan_pending(state: ClusterState, pods: Iterable[Pod], options: PlanOptions = PlanOptions()) -> list[Plan]:
    """Plan `pods` in order; each later plan sees the earlier pods placed and their victims gone. A
    gang's pending members are planned together where its first member comes (`plan.gang`)."""
    planner = Planner(state, options)
    return list(plan_queue(planner, list(pods), *gang_lookups(state)))


def gang_lookups(state: ClusterState) -> tuple[GangOf, PendingOf]:
    """(`gang_of`, `pending_of`) for `plan.gang.plan_queue` on `state`: a pod's gang (None when it
    declares none, without indexing the cluster's gangs), and a gang's pending members in queue order."""
    def gang_of(pod: Pod) -> Gang | None:
        return state.gangs.gang_of(pod) if declared_group(pod) is not None else None

    def pending_of(gang: Gang) -> list[Pod]:
        return sorted(gang.pending, key=queue_key)

    return gang_of, pending_of
