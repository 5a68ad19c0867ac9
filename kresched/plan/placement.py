"""Where the scheduler would most likely put a pod that fits on several nodes.

Owns `pick_node`: an approximation of kube-scheduler's default scoring for resources —
NodeResourcesFit's LeastAllocated and NodeResourcesBalancedAllocation, each weight 1, on cpu and
memory, with the scheduler's non-zero defaults (100m CPU, 200Mi memory) for a pod that requests
nothing. The other score plugins (taints' PreferNoSchedule, preferred affinities, spreading,
image locality) are not simulated, so this names the *likely* node, not a certainty. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from kresched.model.objects import Pod
from kresched.sched.framework import NodeInfo

__all__ = ["pick_node", "score"]

DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024


def _nonzero(pod: Pod) -> tuple[int, int]:
    r = pod.requests
    return (r.milli_cpu or DEFAULT_MILLI_CPU, r.memory or DEFAULT_MEMORY)


def score(pod: Pod, info: NodeInfo) -> float:
    """LeastAllocated + BalancedAllocation for cpu and memory, 0–200."""
    cpu, mem = _nonzero(pod)
    alloc = info.node.allocatable
    fractions = []
    for used, cap in ((info.requested_milli_cpu + cpu, alloc.milli_cpu), (info.requested_memory + mem, alloc.memory)):
        fractions.append(min(used / cap, 1.0) if cap > 0 else 1.0)
    least = sum((1 - f) * 100 for f in fractions) / len(fractions)
    mean = sum(fractions) / len(fractions)
    std = (sum((f - mean) ** 2 for f in fractions) / len(fractions)) ** 0.5
    balanced = (1 - std) * 100
    return least + balanced


def pick_node(pod: Pod, infos: Sequence[NodeInfo]) -> str | None:
    """The highest-scoring node (ties: the first by name), or None if `infos` is empty."""
    best: tuple[float, str] | None = None
    for info in infos:
        key = (-score(pod, info), info.name)
        if best is None or key < best:
            best = key
    return best[1] if best else None
