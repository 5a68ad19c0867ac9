"""NodeResourcesBalancedAllocation: favour nodes whose cpu and memory stay evenly used.

Mirrors kube-scheduler v1.36's `pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go`.
A score plugin only; no NormalizeScore. The resources are the profile's
(NodeResourcesBalancedAllocationArgs `resources`, each of weight 1; default cpu and memory): the
default pair is computed inline below, any other list by `resource_allocation.ResourceAllocation`.

1. PreScore: the pod's *actual* requests (`useRequested`: no non-zero defaults) of the resources; a
   pod that requests none of them is BestEffort for this plugin, which then returns Skip.
2. Score: for each resource the node has (allocatable > 0), the fraction `requested / allocatable`
   capped at 1, with requested = the node's requests (+ the pod's); the imbalance is the standard
   deviation of the fractions (for two resources, `|f1 - f2| / 2`); a placement scores
   `int64((1 - std) * 100)`. In v1.36 the node is scored by how much the pod *changes* its
   balance: `50 + (50 + with_pod - without_pod) / 2` (Go integer division, truncating), so a pod
   that evens a node out scores above 50 and one that skews it below.

Pure; stateless.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from kresched.model.objects import Pod
from kresched.sched.framework import MAX_NODE_SCORE, SUCCESS, Code, CycleState, Snapshot, Status, go_div
from kresched.sched.node_info import NodeInfo
from kresched.sched.resource_allocation import ResourceAllocation, balanced_resource_score

__all__ = ["DEFAULT_RESOURCES", "NAME", "NodeResourcesBalancedAllocation", "balanced_resource_score"]

NAME = "NodeResourcesBalancedAllocation"
#: The default resources: cpu and memory, weight 1.
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))


class NodeResourcesBalancedAllocation:
    name: ClassVar[str] = NAME
    #: Score reads only the pod and the NodeInfo: `sched.score.ScoreMemo` may reuse it while the
    #: NodeInfo is the same object.
    node_local: ClassVar[bool] = True

    def __init__(self, resources: Sequence[tuple[str, int]] = DEFAULT_RESOURCES) -> None:
        """`resources`: (name, weight) as NodeResourcesBalancedAllocationArgs gives them, defaulted."""
        self.resources = tuple(resources)
        self._general = None if self.resources == DEFAULT_RESOURCES else ResourceAllocation.balanced(self.resources)

    def pre_score(self, cycle: CycleState, pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot) -> Status:
        general = self._general
        if general is not None:
            if not any(general.pod_requests(pod)):
                return Status(Code.SKIP)
            return SUCCESS
        r = pod.requests
        if r.milli_cpu == 0 and r.memory == 0:
            return Status(Code.SKIP)
        return SUCCESS

    def score(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        general = self._general
        if general is not None:
            requests = general.pod_requests(pod)
            return general.score(requests, node_info) if any(requests) else 0
        r = pod.requests
        if r.milli_cpu == 0 and r.memory == 0:
            return 0
        alloc = node_info.node.allocatable
        cpu_cap, mem_cap = alloc.milli_cpu, alloc.memory
        if cpu_cap and mem_cap:  # the usual node: `balanced_resource_score` for two fractions, inline
            used_cpu, used_mem = node_info.requested_milli_cpu, node_info.requested_memory
            with_pod = int((1 - abs((min(float(used_cpu + r.milli_cpu) / float(cpu_cap), 1.0)
                                     - min(float(used_mem + r.memory) / float(mem_cap), 1.0)) / 2))
                           * float(MAX_NODE_SCORE))
            without_pod = int((1 - abs((min(float(used_cpu) / float(cpu_cap), 1.0)
                                        - min(float(used_mem) / float(mem_cap), 1.0)) / 2)) * float(MAX_NODE_SCORE))
            half = MAX_NODE_SCORE // 2
            return half + go_div(half + with_pod - without_pod, 2)
        requested: list[int] = []
        allocated: list[int] = []
        allocatable: list[int] = []
        for pod_request, node_requested, cap in ((r.milli_cpu, node_info.requested_milli_cpu, alloc.milli_cpu),
                                                 (r.memory, node_info.requested_memory, alloc.memory)):
            if cap == 0:
                continue
            allocatable.append(cap)
            allocated.append(node_requested)
            requested.append(node_requested + pod_request)
        with_pod = balanced_resource_score(requested, allocatable)
        without_pod = balanced_resource_score(allocated, allocatable)
        half = MAX_NODE_SCORE // 2
        return half + go_div(half + with_pod - without_pod, 2)

    def normalize_score(self, cycle: CycleState, pod: Pod, scores: list[int]) -> None:
        return None
