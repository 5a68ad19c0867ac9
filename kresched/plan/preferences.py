"""Rebalance's second objective: pods another node would satisfy more of the preferences of.

Owns `Preferences` and `preference_points`. Another node satisfies more of the pod's preferred node
affinity, preferred pod (anti-)affinity or ScheduleAnyway spread: the raw scores of NodeAffinity
and InterPodAffinity (higher is better) minus PodTopologySpread's (lower is better), counting only
the kinds of preference the pod declares, by at least `preference_margin` points on every node
tied for the replacement. A pod that could not gain that much on any node — an exact bound per
plugin (`Preferences.bound`), no node scored — is not simulated (nor listed in `skipped`); once
`SHAPE_TRIES` replicas of one shape with the same bound are found not worth moving, the others are
left alone until a move changes their namespace (a budget, not a proof). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from kresched.model.objects import Pod
from kresched.model.selectors import label_selector_matches, node_selector_term_matches
from kresched.model.specs import LabelSelector, PreferredSchedulingTerm
from kresched.plan.placement import Landing, replacement_of
from kresched.plan.rebalance_round import Round
from kresched.sched import interpod_affinity, node_affinity, pod_topology_spread
from kresched.sched.framework import Code, CycleState, Snapshot
from kresched.sched.node_info import NodeInfo
from kresched.sched.pod_topology_spread_score import ScoreGainBound

__all__ = ["SHAPE_TRIES", "Preferences", "has_preferences", "landing_points", "preference_points"]

#: How many pods of one shape (the replicas of a workload) with the same preference bound are
#: simulated and found not worth moving before the others are left alone, until a move changes
#: their namespace. A budget, not a proof: replicas on other nodes may differ (see
#: docs/how-it-decides.md, "How rebalance decides").
SHAPE_TRIES = 2

_PREFERENCE_PLUGINS = ((node_affinity.NodeAffinity(), 1), (interpod_affinity.InterPodAffinity(), 1),
                       (pod_topology_spread.PodTopologySpread(), -1))


def has_preferences(pod: Pod) -> bool:
    aff = pod.spec.affinity
    return bool(
        (aff is not None and aff.node_affinity is not None
         and aff.node_affinity.preferred_during_scheduling_ignored_during_execution)
        or (aff is not None and aff.pod_affinity is not None
            and aff.pod_affinity.preferred_during_scheduling_ignored_during_execution)
        or (aff is not None and aff.pod_anti_affinity is not None
            and aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution)
        or any(c.when_unsatisfiable == "ScheduleAnyway" for c in pod.spec.topology_spread_constraints)
    )


def preference_points(pod: Pod, nodes: Sequence[str], snapshot: Snapshot) -> dict[str, int]:
    """Per node, how much of the preferences the pod declares it satisfies: the raw scores of
    NodeAffinity (preferred node terms) and InterPodAffinity (preferred pod (anti-)affinity) minus
    PodTopologySpread's (explicit ScheduleAnyway constraints: fewer matching pods is better). The
    system default spreading is the scheduler's preference, not the pod's: not counted."""
    infos = [snapshot.by_name[n] for n in nodes]
    points = dict.fromkeys(nodes, 0)
    aff = pod.spec.affinity
    declared = (
        bool(aff is not None and aff.node_affinity is not None
             and aff.node_affinity.preferred_during_scheduling_ignored_during_execution),
        _has_pod_preferences(pod),
        any(c.when_unsatisfiable == "ScheduleAnyway" for c in pod.spec.topology_spread_constraints),
    )
    for (pl, sign), wanted in zip(_PREFERENCE_PLUGINS, declared, strict=True):
        if not wanted or not hasattr(pl, "pre_score"):
            continue
        cycle = CycleState()
        st = pl.pre_score(cycle, pod, infos, snapshot)  # type: ignore[attr-defined]
        if st.code == Code.SKIP or not st.is_success:
            continue
        for info in infos:
            points[info.name] += sign * pl.score(cycle, pod, info)  # type: ignore[attr-defined]
    return points


def landing_points(pod: Pod, landing: Landing, nodes: Sequence[str], snapshot: Snapshot,
                   default_profile: bool = True) -> dict[str, int]:
    """`preference_points`, read from the raw scores the landing already computed when it scored
    every one of `nodes` (the same cycle, so the same numbers); computed afresh otherwise, and
    when another profile than the default scored it (its plugins may carry args — an added
    affinity's weights — or be disabled: the points are the pod's own preferences, measured as
    the default plugins measure them)."""
    by_node = {s.node: s for s in landing.scores}
    if not default_profile or not all(n in by_node for n in nodes):
        return preference_points(pod, nodes, snapshot)
    aff = pod.spec.affinity
    declared = {
        "NodeAffinity": bool(aff is not None and aff.node_affinity is not None
                             and aff.node_affinity.preferred_during_scheduling_ignored_during_execution),
        "InterPodAffinity": _has_pod_preferences(pod),
        "PodTopologySpread": any(c.when_unsatisfiable == "ScheduleAnyway"
                                 for c in pod.spec.topology_spread_constraints),
    }
    signs = {pl.name: sign for pl, sign in _PREFERENCE_PLUGINS}
    return {n: sum(signs[ps.plugin] * ps.raw for ps in by_node[n].plugins if declared.get(ps.plugin)) for n in nodes}


def _node_affinity_points(terms: tuple[PreferredSchedulingTerm, ...], node: NodeInfo) -> int:
    n = node.node
    return sum(t.weight for t in terms if node_selector_term_matches(t.preference, n.name, n.labels))


def _has_pod_preferences(pod: Pod) -> bool:
    aff = pod.spec.affinity
    return bool(
        (aff is not None and aff.pod_affinity is not None
         and aff.pod_affinity.preferred_during_scheduling_ignored_during_execution)
        or (aff is not None and aff.pod_anti_affinity is not None
            and aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution))


HOSTNAME = "kubernetes.io/hostname"


def _others_terms(snapshot: Snapshot) -> list[tuple[bool, str, LabelSelector | None]]:
    """Every distinct (is it affinity, topology key, selector) among the scored pod-affinity terms
    of the pods in the cluster (preferred affinity and anti-affinity, required affinity)."""
    seen: dict[bytes, tuple[bool, str, LabelSelector | None]] = {}
    for info in snapshot.node_infos:
        for p in info.pods_with_affinity:
            aff = p.spec.affinity
            if aff is None:
                continue
            terms: list[tuple[bool, object]] = []
            if aff.pod_affinity is not None:
                terms += [(True, t.pod_affinity_term)
                          for t in aff.pod_affinity.preferred_during_scheduling_ignored_during_execution]
                terms += [(True, t) for t in aff.pod_affinity.required_during_scheduling_ignored_during_execution]
            if aff.pod_anti_affinity is not None:
                terms += [(False, t.pod_affinity_term)
                          for t in aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution]
            for is_affinity, t in terms:
                key = msgspec.json.encode((is_affinity, t.topology_key, t.label_selector))  # type: ignore[attr-defined]
                if key not in seen:
                    seen[key] = (is_affinity, t.topology_key, t.label_selector)  # type: ignore[attr-defined]
    return list(seen.values())


def _only_own_hostname_anti_affinity(pod: Pod) -> bool:
    """The pod's preferred pod (anti-)affinity is only anti-affinity by hostname in its own
    namespace (the usual "spread my replicas over nodes")."""
    aff = pod.spec.affinity
    if aff is None or aff.pod_anti_affinity is None:
        return False
    if aff.pod_affinity is not None and aff.pod_affinity.preferred_during_scheduling_ignored_during_execution:
        return False
    terms = aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
    return bool(terms) and all(t.pod_affinity_term.topology_key == HOSTNAME
                               and t.pod_affinity_term.namespace_selector is None
                               and set(t.pod_affinity_term.namespaces) <= {pod.namespace} for t in terms)


class Preferences:
    """The objective: every pod with preferences (`has_preferences`) that could gain the margin
    (`bound`) is simulated; one whose replacement gains on its node is proposed."""

    name = "preferences"
    destinations: frozenset[str] = frozenset()

    def __init__(self, shape_tries: int | None = SHAPE_TRIES) -> None:
        """`shape_tries` None turns off the per-shape budget, which is not exact."""
        self.shape_tries = shape_tries
        #: Preferred node-affinity terms → the most points any node gives them (node labels never
        #: change in a plan): a pod already on such a node cannot gain on NodeAffinity.
        self.best_points: dict[bytes, int] = {}
        #: (pod shape, node) → the version at which such a pod there was found not worth moving.
        self.not_worth: dict[tuple[bytes, str], int] = {}
        #: (pod shape, preference bound) → (stamp, how many of such pods the simulation found not
        #: worth moving): after `shape_tries` refusals, the others are not simulated until a move
        #: changes their namespace.
        self.shape_refusals: dict[tuple[bytes, int | None], tuple[int, int]] = {}
        #: The scored pod-affinity terms of every pod (`_others_terms`), built on first use: moves
        #: change where pods run, not which terms exist (a replacement has its original's).
        self.others_terms: list[tuple[bool, str, LabelSelector | None]] | None = None
        #: Pod key → (its node's NodeInfo, its namespace's stamp, `bound`): a bound reads only the
        #: pod's node and, for spreading, its namespace's pods.
        self.bounds: dict[str, tuple[NodeInfo, int, int | None]] = {}
        #: Pod shape → (namespace stamp, its `ScoreGainBound`).
        self.spread_bounds: dict[bytes, tuple[int, ScoreGainBound]] = {}
        #: Pod labels → whether some pod's term other than anti-affinity by hostname selects them.
        self.attracted: dict[bytes, bool] = {}

    def run(self, r: Round) -> int:
        made = 0
        for pod, node in list(r.movable(self.name, _proposable)):
            if pod.key in r.moved:
                continue
            if r.refused.get((self.name, pod.key)) == r.version:
                continue
            bound = self.bound(r, pod, node) if r.prune else None
            if bound is not None and bound < max(1, r.opts.preference_margin):
                continue
            shape = r.shape(pod)
            twin = (shape, node)
            if self.not_worth.get(twin) == r.version:
                continue
            # Replicas that could gain alike (same shape, same bound) share a budget of tries.
            alike = (shape, bound)
            stamp = r.stamp(pod)
            tried = self.shape_refusals.get(alike)
            if self.shape_tries is not None and tried is not None and tried[0] == stamp \
                    and tried[1] >= self.shape_tries:
                continue
            made_before = len(r.moves)
            self._move(r, pod, node)
            if len(r.moves) > made_before:
                made += 1
            else:
                self.not_worth[twin] = r.version
                n = tried[1] if tried is not None and tried[0] == stamp else 0
                self.shape_refusals[alike] = (stamp, n + 1)
        return made

    def _move(self, r: Round, pod: Pod, node: str) -> None:
        why = r.precheck(pod, node, self.name)
        if why is not None:
            if why:
                r.refuse(pod, node, self.name, why)
            return
        simulated = r.land(pod, node)
        landing, without, replacement = simulated
        if landing.node is None or node in landing.candidates:
            return
        points = landing_points(replacement, landing, [node, landing.node], without, _by_default(r, pod))
        gain = points[landing.node] - points[node]
        if gain <= 0:
            return
        reason = (f"{landing.node} satisfies more of its preferences than {node} "
                  f"({points[landing.node]} vs {points[node]} point(s))")
        r.try_move(pod, node, self.name, reason, simulated)

    def stale(self, r: Round, pod: Pod, node: str) -> str | None:
        return None  # `refusal` measures the gain against its node as the cluster is now

    def refusal(self, r: Round, pod: Pod, node: str, landing: Landing, without: Snapshot) -> str | None:
        cands = landing.candidates or (landing.node,)
        points = landing_points(replacement_of(pod), landing, [node, *cands], without, _by_default(r, pod))
        short = [c for c in cands if points[c] - points[node] < r.opts.preference_margin]
        if not short:
            return None
        c = short[0]
        return (f"{c} satisfies its preferences by {points[c] - points[node]} point(s) more than {node}, "
                f"less than the margin {r.opts.preference_margin}"
                + (f" (tied: {', '.join(cands)})" if len(cands) > 1 else ""))

    def guard(self, r: Round, objective: str, before: NodeInfo, after: NodeInfo) -> str | None:
        return None

    def again(self, r: Round, placed: Pod, node: str, after: Snapshot) -> str | None:
        """Why the replacement should move for its preferences where it landed (the landing of its
        own replacement gains the margin on every tied candidate), or None."""
        landing, without, replacement = r.land(placed, node, after)
        if landing.node is None or node in landing.candidates:
            return None
        points = landing_points(replacement, landing, [node, *landing.candidates], without, _by_default(r, placed))
        gain = min(points[c] - points[node] for c in landing.candidates)
        if gain >= r.opts.preference_margin:
            return f"{landing.node} satisfies its preferences by {gain} point(s) more than {node}"
        return None

    def bound(self, r: Round, pod: Pod, node: str) -> int | None:
        """At most how many preference points the pod could gain by moving, whatever node its
        replacement lands on (None: no cheap bound; the pod is simulated). The sum of one bound per
        plugin (`preference_points` is their sum): NodeAffinity's, InterPodAffinity's
        (`_pod_affinity_bound`) and PodTopologySpread's (`ScoreGainBound`)."""
        info = r.snap.by_name[node]
        stamp = r.ns_version.get(pod.namespace, 0)
        cached = self.bounds.get(pod.key)
        if cached is not None and cached[0] is info and cached[1] == stamp:
            return cached[2]
        ipa = self._pod_affinity_bound(r, pod, node) if _has_pod_preferences(pod) else 0
        bound = (None if ipa is None else
                 self._node_affinity_bound(r, pod, node) + ipa + self._spread_bound(r, pod, node))
        self.bounds[pod.key] = (info, stamp, bound)
        return bound

    def _node_affinity_bound(self, r: Round, pod: Pod, node: str) -> int:
        """The best node's points minus the pod's node's (node labels never change in a plan)."""
        terms = node_affinity.preferred_terms(pod)
        if not terms:
            return 0
        key = msgspec.json.encode(terms)
        best = self.best_points.get(key)
        if best is None:
            best = self.best_points[key] = max((_node_affinity_points(terms, i) for i in r.snap.node_infos),
                                               default=0)
        return best - _node_affinity_points(terms, r.snap.by_name[node])

    def _spread_bound(self, r: Round, pod: Pod, node: str) -> int:
        """`ScoreGainBound` for the pod's explicit ScheduleAnyway constraints, the pod gone from its
        node; one PreScore per pod shape until a move changes its namespace."""
        if not any(c.when_unsatisfiable == "ScheduleAnyway" for c in pod.spec.topology_spread_constraints):
            return 0
        shape = r.shape(pod)
        stamp = r.ns_version.get(pod.namespace, 0)
        cached = self.spread_bounds.get(shape)
        if cached is None or cached[0] != stamp:
            bound = ScoreGainBound(replacement_of(pod), r.snap)
            cached = self.spread_bounds[shape] = (stamp, bound)
        return cached[1].gain(r.snap.by_name[node], pod)

    def _pod_affinity_bound(self, r: Round, pod: Pod, node: str) -> int | None:
        """For a pod whose only preferred pod (anti-)affinity is anti-affinity by hostname in its own
        namespace (`_only_own_hostname_anti_affinity`), when no pod anywhere has a scored term that
        matches it other than anti-affinity by hostname: every node's InterPodAffinity raw score is
        at most 0 for it, so it gains at most what its own node takes away: the weights of its
        terms matching the other pods there, and of their preferred anti-affinity terms matching
        it. None for any other pod (its score depends on the other pods' places)."""
        if not _only_own_hostname_anti_affinity(pod):
            return None
        if self.others_terms is None:
            self.others_terms = _others_terms(r.snap)
        key = msgspec.json.encode(pod.labels)
        hit = self.attracted.get(key)
        if hit is None:
            hit = self.attracted[key] = any(
                (is_affinity or topology != HOSTNAME) and sel is not None and label_selector_matches(sel, pod.labels)
                for is_affinity, topology, sel in self.others_terms)
        if hit:
            return None
        info = r.snap.by_name[node]
        aff = pod.spec.affinity
        assert aff is not None
        assert aff.pod_anti_affinity is not None
        own = [(t.weight, t.pod_affinity_term.label_selector)
               for t in aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution]
        neighbours = r.snap.pods_by_namespace()[pod.namespace][node]  # the pod itself is there
        taken = sum(w for p in neighbours if p is not pod
                    for w, sel in own if sel is not None and label_selector_matches(sel, p.metadata.labels))
        for other in info.pods_with_affinity:
            anti = other.spec.affinity.pod_anti_affinity if other.spec.affinity is not None else None
            if other is not pod and anti is not None:
                taken += sum(t.weight for t in anti.preferred_during_scheduling_ignored_during_execution
                             if t.pod_affinity_term.label_selector is not None
                             and label_selector_matches(t.pod_affinity_term.label_selector, pod.labels))
        return max(0, taken)



def _proposable(pod: Pod, info: NodeInfo) -> bool:
    return has_preferences(pod)


def _by_default(r: Round, pod: Pod) -> bool:
    """Whether the built-in default profile places the pod's replacement (its landing's raw scores
    are then the preference points' own)."""
    profile = r.opts.profiles.for_pod(pod)
    return profile is None or profile.builtin
