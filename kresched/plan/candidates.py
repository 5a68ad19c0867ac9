"""Which running pods kresched may evict for a pending pod, and why not the others.

Owns the candidate-victim rules of the design ("The plan", step 2). Pure.
"""

from __future__ import annotations

from kresched.model.objects import Pod

__all__ = ["is_candidate_victim", "not_evictable_reason", "protected_reason"]


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
