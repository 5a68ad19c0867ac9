"""PodTopologySpread's Score half (PreScore, Score, NormalizeScore), after kube-scheduler's
`podtopologyspread/scoring.go` (Kubernetes 1.35/1.36), and a bound of it for planners.

Owns the PreScore state (`ScoreState`: the constraints, the ignored nodes, the domain counts and
weights; `pre_score_state`), the score of each node (`score_nodes`), its normalisation
(`normalize_scores`), what is kept per snapshot lineage so that PreScore walks only what changed
(`kresched.sched.match_counts`, `_AllNodeDomains`), `ScoreGainBound`, and Go's float arithmetic the score needs
bit for bit (`go_log`, `go_round`). The plugin (`kresched.sched.pod_topology_spread`) keeps the
state in the cycle; the constraints are `kresched.sched.pod_topology_spread_constraints`'. Never
filters: a node's score says nothing about whether the pod fits there.

As upstream:
  1. Constraints: the pod's `ScheduleAnyway` ones; if the pod has no constraints at all, the
     profile's default ScheduleAnyway ones with the selector `default_selector` builds. No
     constraint, or an empty default selector: PreScore Skip (also when the snapshot has no node).
  2. IgnoredNodes: with the pod's own constraints (or `List` defaults), feasible nodes lacking any
     of their topology keys score 0. With the system defaults no node is ignored: a node without a
     zone label adds the domain "" to the zone count (and its own zone term is left out of its score).
  3. Per constraint (not hostname): the domains are the values on the non-ignored feasible nodes;
     every node of the cluster that has all keys (own constraints only) and passes the
     constraint's inclusion policies adds its matching pods to its domain's count. Hostname
     constraints count the pods on the scored node itself, with no inclusion policy.
  4. Score = round-half-away(Σ count × log(domains + 2) + (maxSkew − 1)) over the constraints
     whose key the node has, in float64 (Go's `math.Log`, reproduced bit for bit); the hostname
     domain count is the number of non-ignored feasible nodes.
  5. NormalizeScore: ignored nodes 0; otherwise 100 when every score is 0, else
     `100 × (max + min − score) / max` in int64 (min and max over the non-ignored nodes).

PreScore walks only the pods of the incoming pod's namespace. Score is never called without
PreScore state in kresched; where upstream would return an error status, the score is 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import compress, repeat
from operator import add

from kresched.model.objects import Pod
from kresched.model.specs import TopologySpreadConstraint
from kresched.sched.framework import MAX_NODE_SCORE, NodeLabels, Snapshot, go_div
from kresched.sched.match_counts import count_selected, selected_per_node
from kresched.sched.node_info import NodeInfo
from kresched.sched.pod_topology_spread_constraints import (
    HOSTNAME_LABEL,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SpreadConstraint,
    build_constraints,
    build_default_constraints,
    node_inclusion,
)

__all__ = ["ScoreGainBound", "ScoreState", "go_log", "go_round", "matching_counts", "normalize_scores",
           "pre_score_state", "score_nodes"]


def pre_score_state(pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot,
                    defaults: tuple[TopologySpreadConstraint, ...], system: bool,
                    view: NodeLabels | None = None) -> ScoreState | None:
    """`PreScore`: the constraints, the ignored nodes, the domain counts and weights; None (Skip)
    when the snapshot has no node, or the pod has no ScheduleAnyway constraint (for a pod without
    constraints: when its default selector is empty)."""
    if not snapshot.node_infos:
        return None
    constraints, require_all = _score_constraints(pod, snapshot, defaults, system)
    if not constraints:
        return None
    everywhere: _AllNodeDomains = snapshot.index(_ALL_NODE_DOMAINS, _AllNodeDomains.build)
    if view is None or view.nodes is not nodes:
        view = NodeLabels(nodes, snapshot.by_name, snapshot)
    domains = _ScoreDomains(constraints, require_all, view, everywhere.get(constraints, require_all, snapshot))
    return _score_state(pod, constraints, require_all, domains, snapshot, view)


def score_nodes(state: ScoreState, nodes: Sequence[NodeInfo]) -> list[int]:
    """`Score` of each of `nodes`: Σ over the constraints whose topology key the node has of
    `matching pods in its domain × weight + (maxSkew − 1)`, rounded; 0 for an ignored node."""
    ignored, namespace = state.ignored, state.namespace
    view = state.view if state.view is not None and state.view.nodes is nodes else NodeLabels(nodes, state.by_name)
    if len(state.constraints) == 2 and state.is_host[0] != state.is_host[1]:
        out = _score_pair(state, view)
        if ignored:
            out = [0 if name in ignored else n for name, n in zip(view.names, out, strict=True)]
        return out
    # A constraint at a time, each node's terms added in the constraints' order (the same
    # float sums as upstream's loop, which leaves out the term of a key the node lacks: here
    # it is 0.0, and t + 0.0 is t).
    totals: list[float] | None = None
    at: dict[str, int] | None = None
    for i, c in enumerate(state.constraints):
        key, weight, skew = c.topology_key, state.weights[i], float(c.max_skew - 1)
        values = view.values(key)
        if state.is_host[i]:
            if at is None:
                at = view.positions()
            # A node without matching pods: 0.0 × weight + skew, which is skew.
            terms = [0.0 if v is None else skew for v in values]
            by_name = state.by_name
            for name, n in state.host_counts[i].items():
                j = at.get(name)
                if j is not None and values[j] is not None and nodes[j] is by_name.get(name):
                    terms[j] = float(n) * weight + skew
            for j in view.own:  # NodeInfos not the snapshot's: their pods are counted here
                if values[j] is not None:
                    terms[j] = float(_count_matching(nodes[j], c, namespace)) * weight + skew
        else:  # a few domains: each one's term once (a domain without a count: 0.0 × weight + skew)
            term = {v: float(n) * weight + skew for v, n in state.counts[i].items()}
            terms = [0.0 if v is None else term.get(v, skew) for v in values]
        totals = terms if totals is None else list(map(add, totals, terms))
    if totals is None:
        totals = [0.0] * len(nodes)
    if all(c.max_skew >= 1 for c in state.constraints):  # every total ≥ 0: `go_round` inline
        out = [int(t) + (t - int(t) >= 0.5) for t in totals]
    else:
        out = [go_round(t) for t in totals]
    if ignored:
        out = [0 if name in ignored else n for name, n in zip(view.names, out, strict=True)]
    return out


def normalize_scores(state: ScoreState, scores: list[int]) -> None:
    """`NormalizeScore`: fewer matching pods score higher; ignored nodes 0. (A node's total is one
    of a few: each distinct one is normalized once, and the list mapped in C.)"""
    ignored = state.ignored_at if len(state.ignored_at) == len(scores) else ()
    skipping = True in ignored
    valid = [s for s, skip in zip(scores, ignored, strict=True) if not skip] if skipping else scores
    if not valid:
        scores[:] = [0] * len(scores)
        return
    lo, hi = min(valid), max(0, max(valid))
    if hi == 0:
        value = dict.fromkeys(valid, MAX_NODE_SCORE)
    elif lo >= 0:  # every dividend ≥ 0: `go_div` is `//`
        value = {s: MAX_NODE_SCORE * (hi + lo - s) // hi for s in set(valid)}
    else:
        value = {s: go_div(MAX_NODE_SCORE * (hi + lo - s), hi) for s in set(valid)}
    if skipping:
        scores[:] = [0 if skip else value[s] for s, skip in zip(scores, ignored, strict=True)]
    else:
        scores[:] = map(value.__getitem__, scores)


def _score_pair(state: ScoreState, view: NodeLabels) -> list[int]:
    """`score_nodes` (but for ignored nodes) for one hostname constraint and one other, as the system
    defaults are: the same float sums, rounded alike. A node's total is one of a few — by whether it
    has the hostname key and which domain of the other key it is in — but where it has matching
    pods of its own: those nodes (and any NodeInfo not the snapshot's) are summed one by one.
    (The two terms are added in either order: IEEE addition is commutative.)"""
    h = 0 if state.is_host[0] else 1
    ch, cz = state.constraints[h], state.constraints[1 - h]
    wh, wz = state.weights[h], state.weights[1 - h]
    sh, sz = float(ch.max_skew - 1), float(cz.max_skew - 1)
    rnd: Callable[[float], int] = _half_up if ch.max_skew >= 1 and cz.max_skew >= 1 else go_round
    term = {v: float(n) * wz + sz for v, n in state.counts[1 - h].items()}
    term[None] = 0.0  # (a node without the key: its value is None)
    # Per domain, the total of a node with and without the hostname key and no matching pods.
    with_host = {v: rnd(sh + t) for v, t in term.items()}
    without = {v: rnd(0.0 + t) for v, t in term.items()}
    other_with, other_without = rnd(sh + sz), rnd(0.0 + sz)  # a domain without a count
    zones, hosts = view.values(cz.topology_key), view.values(ch.topology_key)
    if None in hosts:
        out = [without.get(z, other_without) if hv is None else with_host.get(z, other_with)
               for z, hv in zip(zones, hosts, strict=True)]
    else:  # every node has the hostname key (as a real cluster's do): looked up in C
        out = list(map(with_host.get, zones, repeat(other_with)))
    by_name, nodes = state.by_name, view.nodes
    counted = state.host_counts[h]
    if counted:
        at = view.positions()
        for name, n in counted.items():
            j = at.get(name)
            if j is not None and hosts[j] is not None and nodes[j] is by_name.get(name):
                out[j] = rnd(float(n) * wh + sh + term.get(zones[j], sz))
    for j in view.own:
        if hosts[j] is not None:
            n = _count_matching(nodes[j], ch, state.namespace)
            out[j] = rnd(float(n) * wh + sh + term.get(zones[j], sz))
    return out


def _half_up(t: float) -> int:
    """`go_round` of a total ≥ 0."""
    return int(t) + (t - int(t) >= 0.5)


class ScoreState:
    """Upstream's `preScoreState`. Read-only once written, so `clone()` shares it (as upstream)."""

    __slots__ = ("by_name", "constraints", "counts", "host_counts", "ignored", "ignored_at", "is_host", "namespace",
                 "view", "weights")

    def __init__(self, namespace: str, constraints: tuple[SpreadConstraint, ...], is_host: tuple[bool, ...],
                 counts: list[dict[str, int]], weights: tuple[float, ...], ignored: frozenset[str],
                 ignored_at: tuple[bool, ...], by_name: Mapping[str, NodeInfo],
                 host_counts: list[dict[str, int]], view: NodeLabels | None = None) -> None:
        self.namespace = namespace
        self.constraints = constraints
        #: Per constraint: is its key `kubernetes.io/hostname` (counted per node in `score`)?
        self.is_host = is_host
        #: Per constraint: topology value → matching pods (`TopologyValueToPodCounts`); empty for
        #: hostname constraints.
        self.counts = counts
        #: Per constraint: `topologyNormalizingWeight`.
        self.weights = weights
        #: `IgnoredNodes`: feasible nodes lacking a topology key of the pod's own constraints.
        self.ignored = ignored
        #: The same, aligned with the nodes given to PreScore (NormalizeScore gets scores only).
        self.ignored_at = ignored_at
        #: The snapshot's NodeInfos by name: `host_counts` holds the counts of those (a node absent
        #: from it has no matching pod); `score` counts any other NodeInfo itself.
        self.by_name = by_name
        #: Per hostname constraint: node name → matching pods on it (`countPodsMatchSelector`;
        #: shared with `selected_per_node`: do not change it).
        self.host_counts = host_counts
        #: The scored nodes' labels PreScore read (`score` reads them again for those nodes).
        self.view = view

    def clone(self) -> ScoreState:
        return self


def _score_constraints(pod: Pod, snapshot: Snapshot,
                       defaults: tuple[TopologySpreadConstraint, ...] | None = None,
                       system: bool = True) -> tuple[tuple[SpreadConstraint, ...], bool]:
    """The constraints the score reads — the pod's ScheduleAnyway ones, or, for a pod without any
    constraint, the profile's default ones (`defaults`; None: the system defaults) — and whether a
    node needs all their keys (`requireAllTopologies`: not with the system defaults, where a node
    without a zone label still gets hostname spreading)."""
    own = bool(pod.spec.topology_spread_constraints)
    if own:
        return build_constraints(pod, "ScheduleAnyway"), True
    defaults = SYSTEM_DEFAULT_CONSTRAINTS if defaults is None else defaults
    return build_default_constraints(pod, snapshot.cluster, defaults, "ScheduleAnyway"), not system


class _ScoreDomains:
    """PreScore's walk over the scored nodes: which are ignored (lack a key, own constraints only),
    and per constraint (not hostname) the topology values among the others, each counting 0.
    With `everywhere` (the same over every node of the cluster), a walk for a constraint stops
    once it has met every value the cluster has (the order first met is then the same)."""

    __slots__ = ("ignored", "ignored_at", "is_host", "keys", "scored", "values")

    def __init__(self, constraints: tuple[SpreadConstraint, ...], require_all: bool, view: NodeLabels,
                 everywhere: _ScoreDomains | None = None) -> None:
        self.keys = keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
        self.is_host = is_host = tuple(c.topology_key == HOSTNAME_LABEL for c in constraints)
        kept: list[bool] | None = None  # per node, not ignored (None: none is)
        if require_all:
            columns = [view.values(k) for k in keys]
            self.ignored_at = tuple([None in vs for vs in zip(*columns, strict=True)])
            self.ignored = frozenset(compress(view.names, self.ignored_at))
            if self.ignored:
                kept = [not skip for skip in self.ignored_at]
        else:
            self.ignored_at = (False,) * len(view.nodes)
            self.ignored = frozenset()
        # Each topology value of the nodes not ignored, counting 0, in the order first met.
        self.values: list[dict[str, int]] = []
        for i, c in enumerate(constraints):
            values: dict[str, int] = {}
            if not is_host[i]:
                every = len(everywhere.values[i]) if everywhere is not None else -1
                column = view.values(c.topology_key)
                for v in compress(column, kept) if kept is not None else column:
                    values.setdefault("" if v is None else v, 0)
                    if len(values) == every:
                        break
            self.values.append(values)
        #: How many nodes are not ignored.
        self.scored = kept.count(True) if kept is not None else len(view.nodes)


def _score_state(pod: Pod, constraints: tuple[SpreadConstraint, ...], require_all: bool, domains: _ScoreDomains,
                 snapshot: Snapshot, view: NodeLabels | None = None) -> ScoreState:
    """PreScore's counts over `domains` (the scored nodes' walk): every node of the cluster adds its
    matching pods to its domain, if that domain is one of the scored nodes'. Nodes without a pod of
    the namespace add nothing, so only they are walked. For hostname constraints, the counts per
    node of the snapshot's NodeInfos, as kept (`selected_per_node`)."""
    keys, is_host = domains.keys, domains.is_host
    counts = [dict(v) for v in domains.values]
    # `topologyNormalizingWeight`: log(domains + 2); a hostname constraint has one domain per
    # node that is not ignored.
    weights = tuple(go_log(float((domains.scored if is_host[i] else len(counts[i])) + 2))
                    for i in range(len(constraints)))
    host_counts: list[dict[str, int]] = [{} for _ in constraints]
    if any(c.counts_existing for c in constraints):
        eligible = node_inclusion(pod)
        by_name = snapshot.by_name
        for i, c in enumerate(constraints):
            if not c.counts_existing:
                continue
            per_node = matching_counts(snapshot, pod.metadata.namespace, c)
            if is_host[i]:
                host_counts[i] = per_node
                continue
            there = counts[i]
            key = c.topology_key
            for name, n in per_node.items():
                node = by_name[name].node
                labels = node.metadata.labels
                if require_all and not all(k in labels for k in keys):
                    continue
                if not eligible(c, node):
                    continue
                value = labels.get(key, "")
                if value in there:
                    there[value] += n
    return ScoreState(pod.metadata.namespace, constraints, is_host, counts, weights, domains.ignored,
                       domains.ignored_at, snapshot.by_name, host_counts, view)


def matching_counts(snapshot: Snapshot, namespace: str, c: SpreadConstraint) -> dict[str, int]:
    """Node name → how many of `namespace`'s pods on it `c`'s selector matches, terminating ones
    left out (`countPodsMatchSelector` per node; nodes with none left out), kept per snapshot
    lineage (`selected_per_node`). Do not change it."""
    return selected_per_node(snapshot, namespace, c.selector_key, c.selector)


#: `Snapshot.index` key of `_AllNodeDomains`.
_ALL_NODE_DOMAINS = "PodTopologySpread/all-node-score-domains"


class _AllNodeDomains:
    """`_ScoreDomains` over every node of a snapshot, per (constraint keys, require_all), built on
    first use; carried through simulations while no node's labels change."""

    __slots__ = ("by_keys",)

    def __init__(self) -> None:
        self.by_keys: dict[tuple[tuple[str, ...], bool], _ScoreDomains] = {}

    @classmethod
    def build(cls, snapshot: Snapshot) -> _AllNodeDomains:
        return cls()

    def replaced(self, old: NodeInfo, new: NodeInfo) -> _AllNodeDomains:
        return self if old.node.metadata.labels == new.node.metadata.labels else _AllNodeDomains()

    def get(self, constraints: tuple[SpreadConstraint, ...], require_all: bool, snapshot: Snapshot) -> _ScoreDomains:
        key = (tuple(c.topology_key for c in constraints), require_all)
        found = self.by_keys.get(key)
        if found is None:
            found = self.by_keys[key] = _ScoreDomains(constraints, require_all,
                                                      NodeLabels(snapshot.node_infos, snapshot.by_name))
        return found


class ScoreGainBound:
    """How much lower (better) PodTopologySpread's raw score of `pod` can be on any node than on a
    given one, on `snapshot` with one of the given node's pods removed, whatever nodes turn out
    feasible: an upper bound, exact when it says 0. For callers that want to know whether moving a
    pod could ever gain on its ScheduleAnyway spreading without scoring every node.

    PreScore's counts over every node (the most domains, so the largest weights any feasible set
    gives; the node walk is kept per snapshot lineage); then per node O(constraints). Raw scores
    are `round(Σ count × weight + maxSkew − 1)` with the same weights on both nodes, so the gain is
    at most `Σ (count there − least count of any domain) × weight`, plus 1 for the rounding; when
    some node is ignored (lacks a topology key), it scores 0 and the gain is at most the node's
    whole score."""

    def __init__(self, pod: Pod, snapshot: Snapshot) -> None:
        self._state: ScoreState | None = None
        self._eligible = node_inclusion(pod)
        self._scored = 0
        if not snapshot.node_infos:
            return
        constraints, require_all = _score_constraints(pod, snapshot)
        if not constraints:
            return
        index: _AllNodeDomains = snapshot.index(_ALL_NODE_DOMAINS, _AllNodeDomains.build)
        domains = index.get(constraints, require_all, snapshot)
        self._state = _score_state(pod, constraints, require_all, domains, snapshot)
        self._scored = domains.scored

    def gain(self, node: NodeInfo, removed: Pod | None = None) -> int:
        """The bound for `node` (the snapshot's own NodeInfo), `removed` (a pod on it) gone."""
        state = self._state
        if state is None or node.name in state.ignored:
            return 0  # no score at all, or the node scores 0 and no node scores below 0
        labels = node.node.metadata.labels
        drop = removed is not None and removed.metadata.deletion_timestamp is None \
            and removed.metadata.namespace == state.namespace
        diff = 0.0
        whole = 0.0
        for i, c in enumerate(state.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            gone = int(drop and c.counts_existing and c.selector(removed.metadata.labels)  # type: ignore[union-attr]
                       and (state.is_host[i] or self._eligible(c, node.node)))
            if state.is_host[i]:
                here = state.host_counts[i].get(node.name, 0) - gone
                least = 0 if len(state.host_counts[i]) < self._scored else min(state.host_counts[i].values())
            else:
                counts = state.counts[i]
                here = counts.get(value, 0) - gone
                least = min((n for v, n in counts.items() if v != value), default=here)
            least = min(least, here)
            diff += (here - least) * state.weights[i]
            whole += here * state.weights[i] + (c.max_skew - 1)
        if state.ignored:
            return int(whole) + 1
        return 0 if diff == 0 else int(diff) + 1


def _count_matching(info: NodeInfo, c: SpreadConstraint, namespace: str) -> int:
    """`countPodsMatchSelector` over the pods on one node."""
    if not c.counts_existing:
        return 0
    return count_selected((p for p in info.pods if p.metadata.namespace == namespace), c.selector)


# -- Go's float arithmetic -------------------------------------------------------------------------

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01
_SQRT2_HALF = 7.07106781186547524401e-01


def go_log(x: float) -> float:
    """Go's `math.Log` for finite x > 0, bit for bit (FreeBSD's e_log.c as Go's log.go and
    log_amd64.s compute it). The C library's `log` that Python's `math.log` calls differs from it
    in the last bit for about 1 % of integers, which can move a rounded score."""
    f1, ki = math.frexp(x)
    if f1 < _SQRT2_HALF:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def go_round(x: float) -> int:
    """`int64(math.Round(x))`: half away from zero (Python's `round` rounds half to even)."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return int(t)
