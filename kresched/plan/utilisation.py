"""Rebalance's third objective: the descheduler's LowNodeUtilization, every move simulated.

Owns `LowNodeUtilization` and the request-utilisation it measures (`node_utilisation`): per
resource (cpu, memory, pods), what the node's pods request against its allocatable. Each round, as
the descheduler's `classifyNodes` and `evictPodsFromSourceNodes` do:

1. The nodes are classified once, when the round begins: *underutilised* when every resource is
   below `thresholds` (and the node is schedulable), *overutilised* when any is above
   `target_thresholds`. Nothing moves without an underutilised node. The underutilised nodes are
   the round's destinations; their headroom up to the target thresholds, summed per resource, is
   what the round may move (the descheduler's "total available usage").
2. The sources are the overutilised nodes, the busiest first (the descheduler's order: the sum of
   requested memory bytes, milli-CPU and pods; then the name). Pods leave a source least important
   first (priority, then QoS BestEffort < Burstable < Guaranteed, as the descheduler sorts them)
   while the source is still above its target and the destinations have headroom left in every
   resource (the descheduler's `continueEvictionCond`).
3. Unlike the descheduler, every move is simulated (`kresched.plan.rebalance_round`): the move is
   kept only when every node tied for the replacement is one of the round's destinations and the
   replacement does not take it above the target thresholds. A destination stays one for the whole
   round, however many pods it takes, until a move would take it above the target.

The next round classifies the nodes anew, so a destination filled to between the thresholds is
neither a source nor a destination: nothing moves back. Pure.
"""

from __future__ import annotations

from kresched.model.objects import Pod
from kresched.plan.placement import Landing, bound_to, replacement_of
from kresched.plan.rebalance_plans import RESOURCES, RebalanceOptions
from kresched.plan.rebalance_round import Round
from kresched.sched.framework import Snapshot
from kresched.sched.node_info import NodeInfo

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


def _headroom(info: NodeInfo, r: str, opts: RebalanceOptions) -> int:
    """What the node may still take of `r` up to its target threshold, in hundredths of the
    resource's unit (exact: no rounding)."""
    return opts.target_thresholds.get(r, 100) * _allocatable(info, r) - _used(info, r) * 100


def _busiest_first(info: NodeInfo) -> tuple[int, str]:
    """The descheduler's order of the sources (`sortNodesByUsage`, descending): the sum of requested
    memory bytes, milli-CPU and pods; the name breaks ties."""
    return (-sum(_used(info, r) for r in RESOURCES), info.name)


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
        low = [i for i in r.snap.node_infos if is_underutilised(i, opts)]
        self.destinations = frozenset(i.name for i in low)
        if not low:
            return 0
        available = {res: sum(_headroom(i, res, opts) for i in low) for res in RESOURCES}
        sources = sorted((i for i in r.snap.node_infos if is_overutilised(i, opts)), key=_busiest_first)
        made = 0
        for source in sources:
            node = source.name
            # The shapes whose replacement was refused since the last move: their twins would be too.
            failed: dict[bytes, str] = {}
            seen_version = r.version
            pods = sorted((p for p in r.snap.by_name[node].pods if r.eligible(p)), key=_eviction_order)
            for pod in pods:
                info = r.snap.by_name[node]
                if not is_overutilised(info, opts) or any(v <= 0 for v in available.values()):
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
                    after = r.snap.by_name[node]
                    for res in RESOURCES:
                        available[res] -= (_used(info, res) - _used(after, res)) * 100
                else:
                    last = r.skipped[-1] if r.skipped and r.skipped[-1].pod.key == pod.key else None
                    if last is not None:
                        failed[shape] = last.reason
                    if r.limits and r.limit_reached(pod, node) is not None:
                        break
        return made

    def stale(self, r: Round, pod: Pod, node: str) -> str | None:
        if not is_overutilised(r.snap.by_name[node], r.opts):
            return f"{node} is no longer above the target thresholds"
        return None

    def refusal(self, r: Round, pod: Pod, node: str, landing: Landing, without: Snapshot) -> str | None:
        """Every node tied for the replacement must be a destination of the round that the
        replacement does not take above the target thresholds."""
        cands = landing.candidates or (landing.node,)
        tied = f" (tied: {', '.join(cands)})" if len(cands) > 1 else ""
        bad = [c for c in cands if c not in self.destinations]
        if bad:
            return f"its replacement would land on {', '.join(bad)}, not underutilised{tied}"
        replacement = replacement_of(pod)
        full = []
        for c in cands:
            dest = without.by_name[c].clone()
            dest.add_pod(bound_to(replacement, dest.node))
            if is_overutilised(dest, r.opts):
                full.append(c)
        if full:
            return f"it would push {', '.join(full)} above the target thresholds{tied}"
        return None

    def guard(self, r: Round, objective: str, before: NodeInfo, after: NodeInfo) -> str | None:
        """A move of another objective (a violation excepted: it must move) does not push a node
        that is not above the target thresholds above them."""
        if objective == "violations" or not is_overutilised(after, r.opts) or is_overutilised(before, r.opts):
            return None
        return f"it would push {after.name} above the target thresholds"

    def again(self, r: Round, placed: Pod, node: str, after: Snapshot) -> str | None:
        return "its new node would be overutilised" if is_overutilised(after.by_name[node], r.opts) else None
