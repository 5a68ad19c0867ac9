"""Which running pods kresched may evict for a pending pod, and why not the others.

Owns the candidate-victim rules of the design ("The plan", step 2), and the pending pods the
scheduler has nominated to a node (`nominated_pods`: they hold room there, victims or not). Pure.
"""

from __future__ import annotations

from kresched.model.cluster import ClusterState
from kresched.model.objects import Node, Pod
from kresched.plan.lost import is_lost

__all__ = ["LOST_NODE", "is_candidate_victim", "node_refusal", "nominated_pods", "not_evictable_reason",
           "protected_reason"]

#: Why no pod of a lost node is a victim (`plan.lost`).
LOST_NODE = ("its node is lost (its kubelet does not report): an eviction there would never complete — "
             "`kresched explain node/NAME` tells what happens to its pods")


def node_refusal(node: Node) -> str | None:
    """Why no pod of `node` may be evicted whatever the pending pod, or None: a lost node, where
    evictions never complete by themselves (the planner never plans them)."""
    return LOST_NODE if is_lost(node) else None


def not_evictable_reason(victim: Pod, preemptor_priority: int) -> str | None:
    """Why `victim` can never be a victim for a pod of `preemptor_priority`, or None if it can.

    Strictly lower effective priority, and never mirror (static) pods, DaemonSet pods, pods
    already terminating, or critical pods — even when their priority is lower.
    """
    if victim.effective_priority >= preemptor_priority:
        return "priority not lower than the pending pod's"
    return protected_reason(victim)


def protected_reason(victim: Pod) -> str | None:
    """Why `victim` is never evicted whatever the pending pod's priority, or None: a mirror
    (static) pod, a DaemonSet pod, a pod already terminating, a critical pod (`Pod.protection`,
    found once per pod)."""
    return victim.protection


def is_candidate_victim(victim: Pod, preemptor_priority: int) -> bool:
    return not_evictable_reason(victim, preemptor_priority) is None


def nominated_pods(state: ClusterState, exclude: Pod | None = None) -> dict[str, list[Pod]]:
    """Pending pods the scheduler has nominated to a node, by node (they hold room there)."""
    out: dict[str, list[Pod]] = {}
    for p in state.pending_pods():
        nom = p.status.nominated_node_name
        if nom and (exclude is None or p.key != exclude.key):
            out.setdefault(nom, []).append(p)
    return out
