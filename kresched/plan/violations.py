"""Rebalance's first objective: pods whose constraints no longer hold on their node.

Owns `Violations` and `violation_of`. A constraint of the pod no longer holds on its node: required
node affinity or nodeSelector, an untolerated NoSchedule/NoExecute taint, its required pod
anti-affinity, or a DoNotSchedule spread constraint — the scheduler's own filters, those of the
pod's scheduler profile (`violation_plugins`), asked on the node without the pod. An unschedulable
(cordoned) node is not a violation: that is drain's business. kresched's own reservation taint is
temporary: pods under it are not in violation. The move is kept when the replacement lands
anywhere else (`kresched.plan.rebalance_round`) where the constraint holds. Pure.
"""

from __future__ import annotations

import msgspec

from kresched.model.objects import Pod
from kresched.plan.placement import Landing
from kresched.plan.plans import RESERVATION_TAINT
from kresched.plan.rebalance_round import Round
from kresched.sched import interpod_affinity, node_affinity, pod_topology_spread, taint_toleration
from kresched.sched.framework import Code, CycleState, FilterPlugin, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.profile import Profile

__all__ = ["Violations", "violation_of", "violation_plugins"]

_RESERVATION = (RESERVATION_TAINT.key, RESERVATION_TAINT.value, RESERVATION_TAINT.effect)

_VIOLATION_NAMES = ("NodeAffinity", "TaintToleration", "InterPodAffinity", "PodTopologySpread")
_VIOLATION_PLUGINS: tuple[FilterPlugin, ...] = (
    node_affinity.NodeAffinity(), taint_toleration.TaintToleration(), interpod_affinity.InterPodAffinity(),
    pod_topology_spread.PodTopologySpread())


def violation_plugins(profile: Profile | None) -> tuple[FilterPlugin, ...]:
    """The filters whose verdict on a running pod can stop holding, as the pod's scheduler profile
    runs them (in its order, with its args: an added affinity, hard default spreading; a filter
    the profile disables is no violation); the default profile's without one."""
    if profile is None or profile.builtin:
        return _VIOLATION_PLUGINS
    return tuple(pl for pl in profile.filters if pl.name in _VIOLATION_NAMES)


def _may_violate(pod: Pod, info: NodeInfo, plugins: tuple[FilterPlugin, ...] = _VIOLATION_PLUGINS) -> bool:
    """Cheap pre-check: does the pod have anything the violation filters could reject? (A profile's
    added affinity or hard default spreading applies to every pod: no shortcut then.)"""
    if plugins is not _VIOLATION_PLUGINS and any(
            getattr(pl, "added_affinity", None) is not None or getattr(pl, "hard_defaults", False)
            for pl in plugins):
        return True
    spec = pod.spec
    aff = spec.affinity
    return bool(
        spec.node_selector
        or (aff is not None and aff.node_affinity is not None
            and aff.node_affinity.required_during_scheduling_ignored_during_execution is not None)
        or any(t.effect in ("NoSchedule", "NoExecute") for t in info.node.taints)
        or (aff is not None and aff.pod_anti_affinity is not None
            and aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution)
        or any(c.when_unsatisfiable == "DoNotSchedule" for c in spec.topology_spread_constraints)
    )


def _depends_on_other_pods(pod: Pod) -> bool:
    """Whether the pod has required pod affinity or anti-affinity, or DoNotSchedule spreading."""
    aff = pod.spec.affinity
    return bool(
        (aff is not None and aff.pod_affinity is not None
         and aff.pod_affinity.required_during_scheduling_ignored_during_execution)
        or (aff is not None and aff.pod_anti_affinity is not None
            and aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution)
        or any(c.when_unsatisfiable == "DoNotSchedule" for c in pod.spec.topology_spread_constraints))


def violation_of(pod: Pod, node: str, snapshot: Snapshot,
                 plugins: tuple[FilterPlugin, ...] = _VIOLATION_PLUGINS) -> str | None:
    """What no longer holds for `pod` on `node` (the node's NodeInfo in `snapshot` without the pod),
    as the filter's reason with its details, or None. `plugins`: `violation_plugins` of the pod's
    scheduler profile."""
    info = snapshot.by_name[node]
    taints = info.node.spec.taints
    own = [t for t in taints if (t.key, t.value, t.effect) == _RESERVATION]
    if own:
        # kresched's own reservation taint is temporary (a preemption in progress, or a leftover
        # `kresched untaint` removes): pods under it are not in violation.
        info = info.clone()
        info.node = msgspec.structs.replace(info.node, spec=msgspec.structs.replace(
            info.node.spec, taints=tuple(t for t in taints if t not in own)))
    if not _may_violate(pod, info, plugins):
        return None
    without = info.clone()
    present = any(p.key == pod.key for p in without.pods)
    if present:
        without.remove_pod(pod)
    # PreFilter on the cluster as it is, then the pod taken away as preemption does (the plugins'
    # `remove_pod`, which keeps their state equal to a fresh PreFilter without it); a node whose
    # taints were edited above needs a snapshot of its own.
    snap = snapshot.with_node_info(without) if own else snapshot
    cycle = CycleState()
    for pl in plugins:
        res = pl.pre_filter(cycle, pod, snap)
        st = res.status
        if st.code == Code.SKIP:
            continue
        if not st.is_success:
            return _describe(pl.name, st)
        if res.node_names is not None and node not in res.node_names:
            return f"{pl.name}: {node} is not among the nodes the pod's terms allow"
        if present and not own:
            pl.remove_pod(cycle, pod, pod, info)
        st = pl.filter(cycle, pod, without)
        if not st.is_success:
            return _describe(pl.name, st)
    return None


def _describe(plugin: str, st: Status) -> str:
    text = ", ".join(st.reasons) or plugin
    return f"{text} ({'; '.join(st.details)})" if st.details else text


class Violations:
    """The objective: every pod that may violate something (`_may_violate`, cheap) is asked
    `violation_of`; one in violation is proposed."""

    name = "violations"
    destinations: frozenset[str] = frozenset()

    def __init__(self) -> None:
        #: Pod key → (the stamp it was checked at, `violation_of`): see `run`.
        self.seen: dict[str, tuple[int, str | None]] = {}

    def run(self, r: Round) -> int:
        if r.opts.profiles.builtin:
            wanted = _may_violate
        else:
            def wanted(p: Pod, info: NodeInfo) -> bool:
                return _may_violate(p, info, self.plugins(r, p))
        made = 0
        for pod, node in list(r.movable(self.name, wanted)):
            if pod.key in r.moved:
                continue
            # A pod's node-local constraints (node affinity, nodeSelector, taints) never change in
            # a plan, and no move puts a pod with required anti-affinity next to one it repels (the
            # scheduler's filter refuses it): only a pod with its own required pod (anti-)affinity
            # or DoNotSchedule spreading can be in violation after a move that was not before.
            # Those look at their own namespace's pods, unless a pod affinity term names others.
            stamp = -1 if not _depends_on_other_pods(pod) else r.stamp(pod, required=True)
            seen = self.seen.get(pod.key) if r.prune else None
            if seen is not None and seen[0] == stamp:
                why = seen[1]
            else:
                why = violation_of(pod, node, r.snap, self.plugins(r, pod))
                self.seen[pod.key] = (stamp, why)
            if why is not None and r.try_move(pod, node, self.name, f"no longer holds on {node}: {why}"):
                made += 1
        return made

    def stale(self, r: Round, pod: Pod, node: str) -> str | None:
        if violation_of(pod, node, r.snap, self.plugins(r, pod)) is None:
            return f"its constraints hold on {node} again"
        return None

    def refusal(self, r: Round, pod: Pod, node: str, landing: Landing, without: Snapshot) -> str | None:
        return None  # anywhere the scheduler places it, the filters hold

    def guard(self, r: Round, objective: str, before: NodeInfo, after: NodeInfo) -> str | None:
        return None

    def again(self, r: Round, placed: Pod, node: str, after: Snapshot) -> str | None:
        return violation_of(placed, node, after, self.plugins(r, placed))

    @staticmethod
    def plugins(r: Round, pod: Pod) -> tuple[FilterPlugin, ...]:
        """`violation_plugins` of the pod's scheduler profile."""
        return violation_plugins(r.opts.profiles.for_pod(pod))
