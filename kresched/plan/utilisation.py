"""Rebalance's third objective: the descheduler's LowNodeUtilization, every move simulated.

Owns `LowNodeUtilization` and the request-utilisation it measures (`node_utilisation`): per
resource (cpu, memory, pods), what the node's pods request against its allocatable. A node is
*underutilised* when every resource is below `thresholds` (and it is schedulable), *overutilised*
when any is above `target_thresholds`. Nothing moves when no node is underutilised. Pods leave an
overutilised node, least important first (priority, then QoS BestEffort < Burstable < Guaranteed,
as the descheduler sorts them), while the node is still overutilised, and only when every node
tied for the replacement is underutilised. Pure.
"""

from __future__ import annotations

from kresched.model.objects import Pod
from kresched.plan.placement import Landing
from kresched.plan.rebalance_plans import RESOURCES, RebalanceOptions
from kresched.plan.rebalance_round import Round
from kresched.sched.framework import NodeInfo, Snapshot

__all__ = ["LowNodeUtilization", "is_overutilised", "is_underutilised", "node_utilisation"]


def _used(info: NodeInfo, r: str) -> int:
    return len(info.pods) if r == "pods" else info.requested(r)


def _allocatable(info: NodeInfo, r: str) -> int:
    a = info.node.allocatable
    return a.allowed_pods if r == "pods" else a.milli_cpu if r == "cpu" else a.memory


def node_utilisation(info: NodeInfo) -> dict[str, int]:
    """Request-% per resource, rounded down (100 when the node has none of it allocatable)."""
    out = {}
    for r in RESOURCES:
        cap = _allocatable(info, r)
        out[r] = _used(info, r) * 100 // cap if cap > 0 else 100
    return out


def _above(info: NodeInfo, r: str, pct: int) -> bool:
    """used/allocatable > pct %, exactly (no rounding)."""
    cap = _allocatable(info, r)
    return _used(info, r) * 100 > pct * cap if cap > 0 else True


def _below(info: NodeInfo, r: str, pct: int) -> bool:
    cap = _allocatable(info, r)
    return _used(info, r) * 100 < pct * cap if cap > 0 else False


def is_overutilised(info: NodeInfo, opts: RebalanceOptions) -> bool:
    return any(_above(info, r, opts.target_thresholds.get(r, 100)) for r in RESOURCES)


def is_underutilised(info: NodeInfo, opts: RebalanceOptions) -> bool:
    return not info.node.unschedulable and all(_below(info, r, opts.thresholds.get(r, 100)) for r in RESOURCES)


def _eviction_order(pod: Pod) -> tuple[int, int, str]:
    """The descheduler's order on a source node: lowest priority first, then BestEffort, Burstable,
    Guaranteed; the key breaks ties (kresched is deterministic)."""
    return (pod.effective_priority, {"BestEffort": 0, "Burstable": 1}.get(pod.qos, 2), pod.key)


class LowNodeUtilization:
    """The objective (the module's docstring): one pass per round, over the round's classification."""

    name = "utilisation"

    def __init__(self) -> None:
        #: The underutilised nodes when the round began: its destinations.
        self.destinations: frozenset[str] = frozenset()

    def run(self, r: Round) -> int:
        opts = r.opts
        if not any(is_underutilised(i, opts) for i in r.snap.node_infos):
            return 0
        made = 0
        sources = [i.name for i in r.snap.node_infos if is_overutilised(i, opts)]
        for node in sources:
            # The shapes whose replacement was refused since the last move: their twins would be too.
            failed: dict[bytes, str] = {}
            seen_version = r.version
            pods = sorted((p for p in r.snap.by_name[node].pods if r.eligible(p)), key=_eviction_order)
            for pod in pods:
                info = r.snap.by_name[node]
                if not is_overutilised(info, opts):
                    break
                if r.version != seen_version:
                    failed.clear()
                    seen_version = r.version
                shape = r.shape(pod)
                if shape in failed:
                    r.refuse(pod, node, self.name, failed[shape])
                    continue
                over = ", ".join(f"{res} {v}%" for res, v in node_utilisation(info).items()
                                 if _above(info, res, opts.target_thresholds.get(res, 100)))
                if r.try_move(pod, node, self.name, f"{node} is above the target thresholds ({over})"):
                    made += 1
                else:
                    last = r.skipped[-1] if r.skipped and r.skipped[-1].pod.key == pod.key else None
                    if last is not None:
                        failed[shape] = last.reason
                    if r.limits and r.limit_reached(pod, node) is not None:
                        break
        return made

    def refusal(self, r: Round, pod: Pod, node: str, landing: Landing, without: Snapshot) -> str | None:
        cands = landing.candidates or (landing.node,)
        bad = [c for c in cands if not is_underutilised(without.by_name[c], r.opts)]
        if bad:
            return (f"its replacement would land on {', '.join(bad)}, not underutilised"
                    + (f" (tied: {', '.join(cands)})" if len(cands) > 1 else ""))
        return None

    def guard(self, r: Round, objective: str, before: NodeInfo, after: NodeInfo) -> str | None:
        """A move of another objective (a violation excepted: it must move) does not push a node
        that is not above the target thresholds above them."""
        if objective == "violations" or not is_overutilised(after, r.opts) or is_overutilised(before, r.opts):
            return None
        return f"it would push {after.name} above the target thresholds"

    def again(self, r: Round, placed: Pod, node: str, after: Snapshot) -> str | None:
        return "its new node would be overutilised" if is_overutilised(after.by_name[node], r.opts) else None
