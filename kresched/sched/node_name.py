"""NodeName: a pod that names its node (`spec.nodeName`) fits only that node.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/nodename/node_name.go`. Current upstream
also has a PreFilter that narrows the search to the named node (`PreFilterResult.NodeNames`,
added for the deferred in-place resize of bound pods); kresched reproduces it. A Pending pod the
scheduler handles has no `spec.nodeName`, so for it the plugin never rejects anything. Pure;
stateless.
"""

from __future__ import annotations

from typing import ClassVar

from kresched.model.objects import Pod
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo

__all__ = ["ERR_REASON", "NAME", "NodeName"]

NAME = "NodeName"

ERR_REASON = "node(s) didn't match the requested node name"

_REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,), NAME)


class NodeName:
    """Rejects every node but the one in `spec.nodeName`, when set.

    UnschedulableAndUnresolvable: evicting pods does not rename a node.
    """

    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        if pod.spec.node_name:
            return PreFilterResult(node_names=frozenset({pod.spec.node_name}))
        return PreFilterResult()

    def node_reads(self, pod: Pod) -> tuple[str, ...] | None:
        """The node labels Filter reads for `pod`: none; None where it reads the node's name."""
        return None if pod.spec.node_name else ()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if not pod.spec.node_name or pod.spec.node_name == node_info.name:
            return SUCCESS
        return _REJECTED

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None
