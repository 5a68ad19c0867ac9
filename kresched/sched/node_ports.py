"""NodePorts: a pod's host ports must be free on the node.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/nodeports/node_ports.go` and the
conflict rule of `HostPortInfo.CheckConflict` (pkg/scheduler/framework/types.go):

1. the ports a pod needs are `util.GetHostPorts`: every port with `hostPort > 0` of its
   containers and of its restartable (sidecar) init containers; an empty hostIP is `0.0.0.0`,
   an empty protocol `TCP` (`Pod.host_ports` computes them once);
2. a wanted `(0.0.0.0, protocol, port)` conflicts with that protocol and port in use on any IP;
3. a wanted `(ip, protocol, port)` conflicts with the same triple or with
   `(0.0.0.0, protocol, port)` in use. Only `0.0.0.0` is a wildcard (upstream does not treat
   `::` as one either).

PreFilter returns Skip for a pod without host ports, as upstream does. The used ports are kept by
`NodeInfo.used_ports`, so adding or removing pods in a preemption simulation needs nothing here.
Pure; stateless.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import ClassVar

from kresched.model.objects import Pod
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo

__all__ = ["BIND_ALL_HOST_IP", "ERR_REASON", "NAME", "NodePorts", "conflicting_ports", "port_conflicts"]

NAME = "NodePorts"

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

#: `DefaultBindAllHostIP`.
BIND_ALL_HOST_IP = "0.0.0.0"

_SKIP = PreFilterResult(Status(Code.SKIP))

HostPort = tuple[str, str, int]


class NodePorts:
    """Rejects a node where a host port the pod needs is taken.

    Unschedulable (not unresolvable): evicting the pod holding the port frees it.
    """

    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        if not pod.host_ports:
            return _SKIP
        return PreFilterResult()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        taken = conflicting_ports(pod.host_ports, node_info.used_ports)
        if not taken:
            return SUCCESS
        return Status(Code.UNSCHEDULABLE, (ERR_REASON,), NAME,
                      details=tuple(f"hostPort {ip}:{port}/{protocol} is in use" for ip, protocol, port in taken))

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None


def conflicting_ports(wanted: Iterable[HostPort], used: Collection[HostPort]) -> list[HostPort]:
    """The wanted `(hostIP, protocol, port)` triples that conflict with the ports in use
    (`used`: a set, or `NodeInfo.used_ports`)."""
    return [w for w in wanted if port_conflicts(w, used)]


def port_conflicts(wanted: HostPort, used: Collection[HostPort]) -> bool:
    """`HostPortInfo.CheckConflict` for one wanted triple; `used` holds sanitized triples."""
    ip, protocol, port = wanted
    if port <= 0:
        return False
    ip = ip or BIND_ALL_HOST_IP
    protocol = protocol or "TCP"
    if ip == BIND_ALL_HOST_IP:
        return any(p == port and proto == protocol for _, proto, p in used)
    return (BIND_ALL_HOST_IP, protocol, port) in used or (ip, protocol, port) in used
