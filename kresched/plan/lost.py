"""Lost nodes: recognising one from what the API server holds.

A node is *lost* when its kubelet stopped reporting: the node-lifecycle controller has set its
Ready condition to Unknown (`NodeStatusUnknown`, "Kubelet stopped posting node status.") after its
Lease went unrenewed for `nodeMonitorGracePeriod` (50 s), and tainted it
`node.kubernetes.io/unreachable` (NoSchedule, and NoExecute with the `timeAdded` the taint
manager counts from). That verdict needs no clock (`is_lost`, `lost_nodes`): it is what the
planners use, so that nothing plans evictions there or lands pods there. With a "now" (passed in
by the CLI), `node_loss` also reads the Lease: when the kubelet was last heard from, and whether
it has gone silent before the controller said so.

A node whose Ready is False is not lost: only its kubelet writes False, so it still reports; its
pods are evicted when their `not-ready` toleration runs out, and those evictions complete.
What happens next on a lost node is `kresched.plan.recovery`'s. Pure: "now" is an argument.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.objects import Node
from kresched.model.objects import time_seconds as seconds_of
from kresched.model.specs import Taint
from kresched.sched.framework import Snapshot
from kresched.sched.node_info import NodeInfo

__all__ = [
    "DEFAULT_TOLERATION_SECONDS",
    "MAX_WAIT_FOR_UNMOUNT_SECONDS",
    "NODE_MONITOR_GRACE_SECONDS",
    "NOT_READY_TAINT",
    "OUT_OF_SERVICE_TAINT",
    "OUT_OF_SERVICE_VALUE",
    "UNREACHABLE_TAINT",
    "POD_GC_PERIOD_SECONDS",
    "NodeLoss",
    "duration_text",
    "is_lost",
    "lost_nodes",
    "node_loss",
    "observed_at",
    "without_lost",
    "seconds_of",
]

UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
#: The value the documented procedure uses
#: (`kubectl taint nodes NODE node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`).
OUT_OF_SERVICE_VALUE = "nodeshutdown"
#: DefaultTolerationSeconds admission: `--default-(not-ready|unreachable)-toleration-seconds`.
DEFAULT_TOLERATION_SECONDS = 300
#: The node-lifecycle controller's `--node-monitor-grace-period` default (v1.32+).
NODE_MONITOR_GRACE_SECONDS = 50
#: The attach/detach controller's `ReconcilerMaxWaitForUnmountDuration`.
MAX_WAIT_FOR_UNMOUNT_SECONDS = 360
#: The pod GC's check period (gcCheckPeriod): how soon a terminating pod on an out-of-service node
#: is force-deleted.
POD_GC_PERIOD_SECONDS = 20
_LIFECYCLE_TAINTS = (UNREACHABLE_TAINT, NOT_READY_TAINT, OUT_OF_SERVICE_TAINT)


def _ready(node: Node) -> tuple[str, str | None, str | None]:
    for c in node.status.conditions:
        if c.type == "Ready":
            return c.status, c.reason, c.last_transition_time
    return "", None, None


def is_lost(node: Node) -> bool:
    """The node-lifecycle controller's verdict, no clock needed: Ready Unknown, or tainted
    `node.kubernetes.io/unreachable`."""
    return _ready(node)[0] == "Unknown" or any(t.key == UNREACHABLE_TAINT for t in node.spec.taints)


def lost_nodes(state: ClusterState) -> frozenset[str]:
    return frozenset(n.name for n in state.nodes if is_lost(n))


def without_lost(snap: Snapshot, lost: frozenset[str]) -> Snapshot:
    """`snap` with the `lost` nodes cordoned: the simulated scheduler lands nothing there, whatever
    a pod tolerates (a lost node's taints may not be there yet)."""
    if not lost:
        return snap
    infos = []
    for info in snap.node_infos:
        if info.name in lost and not info.node.unschedulable:
            node = info.node
            node = msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, unschedulable=True))
            info = NodeInfo(node, list(info.pods))
        infos.append(info)
    return Snapshot(infos, {i.name: i for i in infos}, snap.namespace_labels, snap.facts, snap.storage)


def observed_at(state: ClusterState) -> float | None:
    """When the state was read, as well as it tells: the latest of the times it holds that only
    move forward — the kubelets' Lease renewals (every 10 s while they live), the nodes' Ready
    transitions and taints' `timeAdded`, the pods' creations. None without a Lease."""
    times = [t for le in state.node_leases if (t := seconds_of(le.spec.renew_time)) is not None]
    if not times:
        return None
    for n in state.nodes:
        times += [t for c in n.status.conditions if (t := seconds_of(c.last_transition_time)) is not None]
        times += [t for x in n.spec.taints if (t := seconds_of(x.time_added)) is not None]
    times += [t for p in state.pods if (t := seconds_of(p.metadata.creation_timestamp)) is not None]
    return max(times)


@dataclass(frozen=True)
class NodeLoss:
    """What the API server holds about a node's health (see the module docstring)."""

    node: str
    #: The Ready condition's status ("True", "False", "Unknown"; "" when there is none), reason and
    #: when it last changed (seconds since the epoch).
    ready: str
    ready_reason: str | None
    ready_since: float | None
    #: The lifecycle taints it carries (unreachable, not-ready, out-of-service), with `timeAdded`.
    taints: tuple[Taint, ...]
    #: Its Lease's last renewal and duration; None without a Lease in the state.
    lease_renewed: float | None
    lease_seconds: int | None
    #: Seconds since the Lease was renewed, at `now`; None without a Lease.
    silent_seconds: float | None

    @property
    def is_lost(self) -> bool:
        """The controller's verdict, or a Lease unrenewed past the controller's grace period."""
        return (self.ready == "Unknown" or any(t.key == UNREACHABLE_TAINT for t in self.taints)
                or self.kubelet_silent)

    @property
    def kubelet_silent(self) -> bool:
        return self.silent_seconds is not None and self.silent_seconds > NODE_MONITOR_GRACE_SECONDS

    @property
    def out_of_service(self) -> bool:
        return any(t.key == OUT_OF_SERVICE_TAINT for t in self.taints)

    @property
    def not_ready(self) -> bool:
        return self.ready == "False"

    def summary(self) -> str:
        """One line: `lost: Ready Unknown since ... (NodeStatusUnknown), tainted unreachable; kubelet silent 5m`."""
        parts = []
        if self.ready:
            parts.append(f"Ready {self.ready}" + (f" ({self.ready_reason})" if self.ready_reason else ""))
        keys = sorted({t.key.removeprefix("node.kubernetes.io/") for t in self.taints})
        if keys:
            parts.append(f"tainted {', '.join(keys)}")
        if self.silent_seconds is not None:
            parts.append(f"Lease last renewed {duration_text(self.silent_seconds)} ago")
        elif self.is_lost:
            parts.append("no Lease in the input")
        state = "lost" if self.is_lost else "not ready" if self.not_ready else "ready"
        return f"{state}: {'; '.join(parts)}" if parts else state


def node_loss(state: ClusterState, name: str, now: float | None = None) -> NodeLoss:
    node = state.node_by_name[name]
    ready, reason, since = _ready(node)
    lease = state.lease_by_node.get(name)
    renewed = seconds_of(lease.spec.renew_time) if lease is not None else None
    silent = max(now - renewed, 0.0) if renewed is not None and now is not None else None
    return NodeLoss(name, ready, reason, seconds_of(since),
                    tuple(t for t in node.spec.taints if t.key in _LIFECYCLE_TAINTS),
                    renewed, lease.spec.lease_duration_seconds if lease is not None else None, silent)


def duration_text(seconds: float) -> str:
    """`45s`, `5m`, `5m30s`, `2h10m`: how long, as an operator reads it."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        m, r = divmod(s, 60)
        return f"{m}m{r}s" if r else f"{m}m"
    h, r = divmod(s, 3600)
    return f"{h}h{r // 60}m" if r // 60 else f"{h}h"
