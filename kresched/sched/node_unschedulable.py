"""NodeUnschedulable: a cordoned node (`spec.unschedulable: true`) takes no new pods.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`:
a pod that tolerates the taint `node.kubernetes.io/unschedulable:NoSchedule` passes anyway (that is
how DaemonSet pods land on cordoned nodes). Toleration matching is TaintToleration's
`tolerations_tolerate_taint`. Pure; stateless.
"""

from __future__ import annotations

from typing import ClassVar

from kresched.model.objects import Pod
from kresched.model.specs import Taint
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.taint_toleration import tolerations_tolerate_taint

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NAME", "UNSCHEDULABLE_TAINT", "NodeUnschedulable"]

NAME = "NodeUnschedulable"

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

#: The taint a pod must tolerate to be placed on a cordoned node (`v1.TaintNodeUnschedulable`).
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")

_REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,), NAME)


class NodeUnschedulable:
    """Rejects cordoned nodes unless the pod tolerates the unschedulable taint.

    UnschedulableAndUnresolvable: evicting pods does not uncordon a node.
    """

    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        # Upstream's PreFilter only skips pods whose in-place resize is deferred (bound pods).
        return PreFilterResult()

    def node_reads(self, pod: Pod) -> tuple[str, ...]:
        """The node labels Filter reads: none (only whether the node is cordoned)."""
        return ()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not node_info.node.spec.unschedulable:
            return SUCCESS
        if tolerations_tolerate_taint(pod.spec.tolerations, UNSCHEDULABLE_TAINT):
            return SUCCESS
        return _REJECTED

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None
