"""Where the scheduler would most likely put a pod that fits on several nodes.

Owns `pick_node`: an approximation of kube-scheduler's default scoring for resources —
NodeResourcesFit's LeastAllocated and NodeResourcesBalancedAllocation, each weight 1, on cpu and
memory, with the scheduler's non-zero defaults (100m CPU, 200Mi memory) for a pod that requests
nothing. The other score plugins (taints' PreferNoSchedule, preferred affinities, spreading,
image locality) are not simulated, so this names the *likely* node, not a certainty. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from kresched.model.objects import Pod
from kresched.sched.framework import NodeInfo

__all__ = ["bound_to", "pick_node", "replacement_of", "score"]

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


def bound_to(pod: Pod, node: str) -> Pod:
    """The pod as it is once the scheduler has bound it to `node` (simulations place it so)."""
    spec = msgspec.structs.replace(pod.spec, node_name=node)
    status = msgspec.structs.replace(pod.status, phase="Running", nominated_node_name="")
    return msgspec.structs.replace(pod, spec=spec, status=status)


def replacement_of(pod: Pod) -> Pod:
    """The pod its controller creates after it is evicted: same spec, unbound, Pending, another name."""
    spec = msgspec.structs.replace(pod.spec, node_name="")
    status = msgspec.structs.replace(pod.status, phase="Pending", conditions=(), start_time=None,
                                     nominated_node_name="")
    meta = msgspec.structs.replace(pod.metadata, name=pod.metadata.name + "~replacement")
    return msgspec.structs.replace(pod, spec=spec, status=status, metadata=meta)
