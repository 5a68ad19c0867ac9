"""The resource-allocation scoring that NodeResourcesFit and NodeResourcesBalancedAllocation
share, for any list of resources and weights a scheduler profile configures, after
kube-scheduler's `pkg/scheduler/framework/plugins/noderesources` (resource_allocation.go,
least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go, balanced_allocation.go)
and `helper.BuildBrokenLinearFunction`.

Per configured resource, in the configured order:
- the pod's request: cpu and memory with the non-zero defaults (100m, 200Mi per container that
  requests none) unless `use_requested` (BalancedAllocation), every other resource as requested;
- the node's allocatable and what its pods request (cpu and memory: `NonZeroRequested` unless
  `use_requested`; ephemeral-storage and scalar resources: requested); a resource the node does not
  have (allocatable 0, or a scalar resource it does not list) is left out, and so is a scalar
  resource (extended, hugepages, ...) the pod does not request;
- the strategy's function of (requested with the pod, requested without it, allocatable).

The default profile's cases (LeastAllocated and BalancedAllocation over cpu and memory, weight 1)
are computed inline by the plugins themselves, on the hot path; this module is what every other
configuration runs. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from kresched.model.objects import Pod
from kresched.sched.framework import MAX_NODE_SCORE, go_div
from kresched.sched.node_info import NodeInfo

__all__ = ["MAX_CUSTOM_PRIORITY_SCORE", "ResourceAllocation", "balanced_resource_score", "broken_linear", "go_round"]

#: `config.MaxCustomPriorityScore`: shape points score 0..10, scaled ×10 to 0..100.
MAX_CUSTOM_PRIORITY_SCORE = 10
#: `maxUtilization` of requested_to_capacity_ratio.go.
MAX_UTILIZATION = 100

Scorer = Callable[[list[int], list[int], list[int]], int]


def go_round(x: float) -> int:
    """`int64(math.Round(x))`: half away from zero (Python's `round` rounds half to even)."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return int(t)


class ResourceAllocation:
    """`resourceAllocationScorer`: `resources` (name, weight), whether requests are taken as they
    are (`use_requested`) or with the non-zero defaults, and the strategy's scorer."""

    __slots__ = ("names", "scorer", "use_requested", "weights")

    def __init__(self, resources: Sequence[tuple[str, int]], use_requested: bool, scorer: Scorer) -> None:
        self.names = tuple(n for n, _ in resources)
        self.weights = tuple(w for _, w in resources)
        self.use_requested = use_requested
        self.scorer = scorer

    @classmethod
    def least_allocated(cls, resources: Sequence[tuple[str, int]]) -> ResourceAllocation:
        weights = [w for _, w in resources]
        return cls(resources, False, lambda req, _alloc, cap: _weighted(weights, req, cap, _least))

    @classmethod
    def most_allocated(cls, resources: Sequence[tuple[str, int]]) -> ResourceAllocation:
        weights = [w for _, w in resources]
        return cls(resources, False, lambda req, _alloc, cap: _weighted(weights, req, cap, _most))

    @classmethod
    def requested_to_capacity_ratio(cls, resources: Sequence[tuple[str, int]],
                                    shape: Sequence[tuple[int, int]]) -> ResourceAllocation:
        """`shape`: (utilization, score 0..10) points, scaled to 0..100 as upstream does."""
        raw = broken_linear([(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape])
        weights = [w for _, w in resources]

        def resource_score(requested: int, capacity: int) -> int:
            if capacity == 0 or requested > capacity:
                return raw(MAX_UTILIZATION)
            return raw(requested * MAX_UTILIZATION // capacity)

        def scorer(req: list[int], _alloc: list[int], cap: list[int]) -> int:
            node_score = weight_sum = 0
            for i, r in enumerate(req):
                if cap[i] == 0:
                    continue
                s = resource_score(r, cap[i])
                if s > 0:  # upstream counts a resource only where it scores
                    node_score += s * weights[i]
                    weight_sum += weights[i]
            return 0 if weight_sum == 0 else go_round(float(node_score) / float(weight_sum))

        return cls(resources, False, scorer)

    @classmethod
    def balanced(cls, resources: Sequence[tuple[str, int]]) -> ResourceAllocation:
        """BalancedAllocation: actual requests; `balancedResourceScorer`, how much the pod changes
        the node's balance (`50 + (50 + with - without) / 2`)."""

        def scorer(req: list[int], alloc: list[int], cap: list[int]) -> int:
            with_pod = balanced_resource_score(req, cap)
            without = balanced_resource_score(alloc, cap)
            half = MAX_NODE_SCORE // 2
            return half + go_div(half + with_pod - without, 2)

        return cls(resources, True, scorer)

    def pod_requests(self, pod: Pod) -> list[int]:
        """`calculatePodResourceRequestList`."""
        r = pod.requests
        out = []
        for name in self.names:
            if name == "cpu":
                out.append(r.milli_cpu if self.use_requested else pod.nonzero_milli_cpu)
            elif name == "memory":
                out.append(r.memory if self.use_requested else pod.nonzero_memory)
            elif name == "ephemeral-storage":
                out.append(r.ephemeral_storage)
            else:
                out.append(r.scalar.get(name, 0))
        return out

    def score(self, pod_requests: Sequence[int], info: NodeInfo) -> int:
        """`resourceAllocationScorer.score` of a node for a pod requesting `pod_requests`."""
        n = len(self.names)
        requested, allocated, allocatable = [0] * n, [0] * n, [0] * n
        alloc = info.node.allocatable
        for i, name in enumerate(self.names):
            want = pod_requests[i]
            if name == "cpu":
                cap = alloc.milli_cpu
                used = info.requested_milli_cpu if self.use_requested else info.nonzero_milli_cpu
            elif name == "memory":
                cap = alloc.memory
                used = info.requested_memory if self.use_requested else info.nonzero_memory
            elif name == "ephemeral-storage":
                cap, used = alloc.ephemeral_storage, info.requested_ephemeral_storage
            else:
                if want == 0:
                    continue  # a scalar resource the pod does not request is left out
                cap = alloc.scalar.get(name, 0)
                used = info.requested_scalar.get(name, 0) if cap else 0
            if cap == 0:
                continue
            allocatable[i] = cap
            allocated[i] = used
            requested[i] = used + want
        return self.scorer(requested, allocated, allocatable)


def _least(requested: int, capacity: int) -> int:
    """`leastRequestedScore`."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def _most(requested: int, capacity: int) -> int:
    """`mostRequestedScore`: requests above capacity count as capacity (a node over-committed by
    other schedulers still scores 100, not more)."""
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def _weighted(weights: Sequence[int], requested: list[int], capacity: list[int], fn: Callable[[int, int], int]) -> int:
    node_score = weight_sum = 0
    for i, r in enumerate(requested):
        if capacity[i] == 0:
            continue
        node_score += fn(r, capacity[i]) * weights[i]
        weight_sum += weights[i]
    return 0 if weight_sum == 0 else node_score // weight_sum


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """`helper.BuildBrokenLinearFunction`: the first point's score below it, the last one's above,
    linear (Go's integer division) in between."""

    def f(p: int) -> int:
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return s
                u0, s0 = shape[i - 1]
                return s0 + go_div((s - s0) * (p - u0), u - u0)
        return shape[-1][1]

    return f


def balanced_resource_score(requested: list[int], allocatable: list[int]) -> int:
    """`balancedResourceScore`: `int64((1 - std) * 100)` over the capped usage fractions."""
    fractions = [min(float(req) / float(cap), 1.0) for req, cap in zip(requested, allocatable, strict=True) if cap]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))
