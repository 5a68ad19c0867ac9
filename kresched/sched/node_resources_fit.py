"""NodeResourcesFit: the node must have room for the pod's requests and one more pod.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/noderesources/fit.go` (`Filter`,
`fitsRequest`). The pod's requests are `Pod.requests` (`resourcehelper.PodRequests`: containers,
sidecars, init containers, overhead, pod-level resources); the node's use is `NodeInfo`'s sum of
its pods' requests. For one node, in upstream's order:

1. pods: `len(pods) + 1 > allocatable pods` gives `Too many pods`;
2. a pod requesting nothing stops here;
3. cpu, memory, ephemeral-storage, then each extended/scalar resource (hugepages, `vendor/x`,
   ...) the pod requests a non-zero amount of: `request > allocatable - requested` gives
   `Insufficient <name>`. A resource the node does not have at all has allocatable 0.
   Zero requests are ignored.

Every insufficient resource is one reason; `fits_request` gives its numbers
(`InsufficientResource{resource, requested, used, capacity, unresolvable}`), which `explain` reads.
The code is UnschedulableAndUnresolvable when, for some insufficient resource, the request alone
exceeds the node's whole allocatable (no eviction can help), else Unschedulable. `Too many pods` is
never unresolvable, as upstream. A rejection is one `Status` object per code and reasons
(`rejection`): most nodes a search looks at are rejected, and a rejection is then only counted.

PreFilter never skips (upstream computes the request there; kresched has it on the Pod).

The profile's NodeResourcesFitArgs: `ignoredResources` (extended resources by name) and
`ignoredResourceGroups` (by the prefix before `/`) are not checked by the filter (only extended
resources: cpu, memory, hugepages and `kubernetes.io/` names always are); the planner plans a pod
without them (`without_ignored`) so that its shortcuts agree with the filter.

Score, by the profile's `scoringStrategy`. The default (LeastAllocated, cpu and memory, weight 1
each; least_allocated.go, resource_allocation.go), inline below: per resource the node has,
`(allocatable - requested) * 100 / allocatable` (0 when over), where requested is the node's
`NonZeroRequested` plus the pod's — both counting 100m CPU and 200Mi memory for a container that
requests none (`Pod.nonzero_milli_cpu`) — then the weighted mean, in integer arithmetic. Any other
strategy or resource list (MostAllocated, RequestedToCapacityRatio with its shape, other
resources or weights) is `resource_allocation.ResourceAllocation`. No NormalizeScore.

Extended resources backed by a DRA DeviceClass (DRAExtendedResource, on in v1.36) are left to
DynamicResources on a node whose allocatable lacks them (`DRA_BACKED`, `shouldDelegateResourceToDRA`).

Deliberate difference: extended resources are reported in name order (upstream iterates a Go
map: random order). Pure; stateless.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from kresched.model.objects import Pod
from kresched.model.resources import Resources
from kresched.sched.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    Code,
    CycleState,
    InsufficientResource,
    PreFilterResult,
    Snapshot,
    Status,
)
from kresched.sched.node_info import NodeInfo
from kresched.sched.resource_allocation import ResourceAllocation

__all__ = [
    "DEFAULT_RESOURCES",
    "is_extended_resource_name",
    "least_requested_score",
    "without_ignored",
    "fits_usage",
    "ERR_REASON_INSUFFICIENT",
    "ERR_REASON_TOO_MANY_PODS",
    "NAME",
    "NodeResourcesFit",
    "fits_request",
    "rejection",
]

NAME = "NodeResourcesFit"

ERR_REASON_TOO_MANY_PODS = "Too many pods"
#: `Insufficient <resource name>`, e.g. `Insufficient cpu`, `Insufficient nvidia.com/gpu`
#: (`InsufficientResource.reason` writes both).
ERR_REASON_INSUFFICIENT = "Insufficient {}"
#: The default scoring resources: cpu and memory, weight 1.
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))


class NodeResourcesFit:
    """Rejects a node without room for the pod; one reason per resource that is short."""

    name: ClassVar[str] = NAME
    #: Score reads only the pod and the NodeInfo: `sched.score.ScoreMemo` may reuse it while the
    #: NodeInfo is the same object.
    node_local: ClassVar[bool] = True

    def __init__(self, strategy: str = "LeastAllocated", resources: Iterable[tuple[str, int]] = DEFAULT_RESOURCES,
                 shape: Iterable[tuple[int, int]] = (), ignored_resources: Iterable[str] = (),
                 ignored_resource_groups: Iterable[str] = ()) -> None:
        """The profile's NodeResourcesFitArgs, defaulted: the scoring `strategy` (LeastAllocated,
        MostAllocated, RequestedToCapacityRatio with its `shape` of (utilization, score) points),
        its (resource, weight) list, and the extended resources the filter ignores."""
        self.strategy = strategy
        self.resources = tuple(resources)
        self.ignored_resources = frozenset(ignored_resources)
        self.ignored_resource_groups = frozenset(ignored_resource_groups)
        self._general: ResourceAllocation | None = None
        if strategy == "MostAllocated":
            self._general = ResourceAllocation.most_allocated(self.resources)
        elif strategy == "RequestedToCapacityRatio":
            self._general = ResourceAllocation.requested_to_capacity_ratio(self.resources, tuple(shape))
        elif strategy != "LeastAllocated":
            raise ValueError(f"scoring strategy {strategy} is not supported")
        elif self.resources != DEFAULT_RESOURCES:
            self._general = ResourceAllocation.least_allocated(self.resources)

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        if pod.requests.scalar and snapshot.dra.classes:
            from kresched.sched.dra.extended import delegated

            backed = delegated(pod, snapshot.dra)
            if backed:
                cycle.write(DRA_BACKED, frozenset(backed))
        return PreFilterResult()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        request = pod.requests
        if not request.scalar:  # `fits_usage` inline, for the pod without extended resources (most)
            alloc = node_info.node.allocatable
            cpu, mem, eph = request.milli_cpu, request.memory, request.ephemeral_storage
            pods = len(node_info.pods) >= alloc.allowed_pods
            short_cpu = cpu > 0 and alloc.milli_cpu - node_info.requested_milli_cpu < cpu
            short_mem = mem > 0 and alloc.memory - node_info.requested_memory < mem
            short_eph = eph > 0 and alloc.ephemeral_storage - node_info.requested_ephemeral_storage < eph
            if not (pods or short_cpu or short_mem or short_eph):
                return SUCCESS
            # What `_rejection` of `_short` depends on: which resources are short, and whether a
            # request alone exceeds the node's allocatable (most of the nodes a pod is filtered on
            # are short of something).
            key = (pods, short_cpu, short_mem, short_eph, (short_cpu and cpu > alloc.milli_cpu)
                   or (short_mem and mem > alloc.memory) or (short_eph and eph > alloc.ephemeral_storage))
            st = _SHORT_REJECTIONS.get(key)
            if st is None:
                st = _SHORT_REJECTIONS[key] = _rejection(_short(request, *_usage(node_info)))
            return st
        usage = _usage(node_info)
        if request.scalar and (self.ignored_resources or self.ignored_resource_groups):
            request = without_ignored(request, self.ignored_resources, self.ignored_resource_groups)
        if request.scalar:
            backed: frozenset[str] | None = cycle.read(DRA_BACKED)
            if backed:  # `shouldDelegateResourceToDRA`: a node without it in allocatable leaves it to DRA
                allocatable = usage[0].scalar
                left = [r for r in backed if not allocatable.get(r, 0)]
                if left:
                    scalar = {k: v for k, v in request.scalar.items() if k not in left}
                    request = Resources(request.milli_cpu, request.memory, request.ephemeral_storage, scalar,
                                        request.allowed_pods)
        if fits_usage(request, *usage):
            return SUCCESS
        return _rejection(_short(request, *usage))

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None

    # -- Score ------------------------------------------------------------------------------------
    def pre_score(self, cycle: CycleState, pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot) -> Status:
        return SUCCESS

    def score(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        general = self._general
        if general is not None:
            return general.score(general.pod_requests(pod), node_info)
        alloc = node_info.node.allocatable
        cpu_cap, mem_cap = alloc.milli_cpu, alloc.memory
        if cpu_cap and mem_cap:  # the usual node: both `least_requested_score`s inline
            cpu = node_info.nonzero_milli_cpu + pod.nonzero_milli_cpu
            mem = node_info.nonzero_memory + pod.nonzero_memory
            return ((0 if cpu > cpu_cap else (cpu_cap - cpu) * MAX_NODE_SCORE // cpu_cap)
                    + (0 if mem > mem_cap else (mem_cap - mem) * MAX_NODE_SCORE // mem_cap)) // 2
        total = weights = 0
        for requested, allocatable in (
            (node_info.nonzero_milli_cpu + pod.nonzero_milli_cpu, alloc.milli_cpu),
            (node_info.nonzero_memory + pod.nonzero_memory, alloc.memory),
        ):
            if allocatable == 0:
                continue
            total += least_requested_score(requested, allocatable)  # weight 1
            weights += 1
        return total // weights if weights else 0

    def normalize_score(self, cycle: CycleState, pod: Pod, scores: list[int]) -> None:
        return None


#: CycleState key: the pod's extended resources a DeviceClass backs (`sched.dra.extended.delegated`).
DRA_BACKED = "NodeResourcesFit/dra-backed"


def least_requested_score(requested: int, capacity: int) -> int:
    """`leastRequestedScore`: the unused share of `capacity`, 0..100 (0 when over or no capacity)."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def is_extended_resource_name(name: str) -> bool:
    """`v1helper.IsExtendedResourceName`: a name with a domain that is not `kubernetes.io`'s
    (cpu, memory, hugepages-* and `*kubernetes.io/*` are native), not a quota's `requests.`."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def without_ignored(request: Resources, ignored: frozenset[str], groups: frozenset[str]) -> Resources:
    """`request` without the extended resources NodeResourcesFit's args tell the filter to ignore
    (by name, or by the group before the `/`); the same object when it requests none of them."""
    drop = [n for n in request.scalar if is_extended_resource_name(n)
            and (n in ignored or n.split("/", 1)[0] in groups)]
    if not drop:
        return request
    scalar = {k: v for k, v in request.scalar.items() if k not in drop}
    return Resources(request.milli_cpu, request.memory, request.ephemeral_storage, scalar, request.allowed_pods)


def fits_request(request: Resources, node_info: NodeInfo) -> list[InsufficientResource]:
    """`fitsRequest`: the resources `node_info` lacks for a pod requesting `request`; empty when
    the pod fits. The order is upstream's: pods, cpu, memory, ephemeral-storage, then scalars."""
    return [InsufficientResource(name, want, used, capacity, unresolvable=_unresolvable(name, want, capacity))
            for name, want, used, capacity in _short(request, *_usage(node_info))]


def rejection(request: Resources, node_info: NodeInfo) -> Status:
    """The filter's Status for a pod requesting `request` on `node_info` (SUCCESS where it fits)."""
    return _rejection(_short(request, *_usage(node_info)))


def _usage(node_info: NodeInfo) -> tuple[Resources, int, int, int, int, dict[str, int]]:
    """What `fits_usage` and `_short` read of a node: its allocatable, pod count and requests."""
    return (node_info.node.allocatable, len(node_info.pods), node_info.requested_milli_cpu, node_info.requested_memory,
            node_info.requested_ephemeral_storage, node_info.requested_scalar)


def _short(request: Resources, allocatable: Resources, pods: int, milli_cpu: int, memory: int,
           ephemeral_storage: int, scalar: dict[str, int]) -> list[tuple[str, int, int, int]]:
    """(resource, requested, used, capacity) of each resource a node whose pods number `pods` and
    request the given totals lacks for `request` (`fitsRequest`, in its order)."""
    out: list[tuple[str, int, int, int]] = []
    if pods + 1 > allocatable.allowed_pods:
        out.append(("pods", 1, pods, allocatable.allowed_pods))
    # Zero requests are never checked (upstream skips them), hence the `> 0` guards.
    if request.milli_cpu > 0 and request.milli_cpu > allocatable.milli_cpu - milli_cpu:
        out.append(("cpu", request.milli_cpu, milli_cpu, allocatable.milli_cpu))
    if request.memory > 0 and request.memory > allocatable.memory - memory:
        out.append(("memory", request.memory, memory, allocatable.memory))
    if request.ephemeral_storage > 0 and request.ephemeral_storage > allocatable.ephemeral_storage - ephemeral_storage:
        out.append(("ephemeral-storage", request.ephemeral_storage, ephemeral_storage,
                    allocatable.ephemeral_storage))
    if request.scalar:
        for name in sorted(n for n, amount in request.scalar.items() if amount > 0):
            want, used, capacity = request.scalar[name], scalar.get(name, 0), allocatable.scalar.get(name, 0)
            if want > capacity - used:
                out.append((name, want, used, capacity))
    return out


#: `_rejection`'s Status objects, per (resources short, unresolvable).
_REJECTIONS: dict[tuple[tuple[str, ...], bool], Status] = {}
#: The same for a request without extended resources, per (pods, cpu, memory, ephemeral storage
#: short, unresolvable) (`NodeResourcesFit.filter`).
_SHORT_REJECTIONS: dict[tuple[bool, bool, bool, bool, bool], Status] = {}


def _rejection(short: list[tuple[str, int, int, int]]) -> Status:
    """The Status for the resources `short` (`_short`'s list), one object per code and reasons;
    SUCCESS when nothing is short."""
    if not short:
        return SUCCESS
    names = []
    unresolvable = False
    for name, want, _, capacity in short:
        names.append(name)
        unresolvable = unresolvable or _unresolvable(name, want, capacity)
    key = (tuple(names), unresolvable)
    st = _REJECTIONS.get(key)
    if st is None:
        st = _REJECTIONS[key] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE,
                                       tuple(InsufficientResource(*x).reason for x in short), NAME)
    return st


def _unresolvable(resource: str, requested: int, capacity: int) -> bool:
    """No eviction helps: the request alone exceeds the node's allocatable (never `Too many pods`)."""
    return requested > capacity and resource != "pods"


def fits_usage(request: Resources, allocatable: Resources, pods: int, milli_cpu: int, memory: int,
               ephemeral_storage: int, scalar: dict[str, int]) -> bool:
    """`fits_request(...) == []` for a node whose pods number `pods` and request the given totals —
    the same rule without building a NodeInfo, for victim selection's inner loop."""
    if pods + 1 > allocatable.allowed_pods:
        return False
    # Zero requests are never checked (upstream skips them), hence the `> 0` guards.
    if request.milli_cpu > 0 and request.milli_cpu > allocatable.milli_cpu - milli_cpu:
        return False
    if request.memory > 0 and request.memory > allocatable.memory - memory:
        return False
    if request.ephemeral_storage > 0 and request.ephemeral_storage > allocatable.ephemeral_storage - ephemeral_storage:
        return False
    return all(amount <= 0 or amount <= allocatable.scalar.get(name, 0) - scalar.get(name, 0)
               for name, amount in request.scalar.items())


