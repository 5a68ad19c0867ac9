"""PodTopologySpread: the pod's topology spread constraints, after kube-scheduler's
`pkg/scheduler/framework/plugins/podtopologyspread` (plugin.go, filtering.go; Kubernetes
1.35/1.36). Filters on `DoNotSchedule` constraints and scores on `ScheduleAnyway` ones (or, for a
pod without constraints, the system default constraints).

Owns the plugin (every extension point), the per-pod PreFilter state — for each constraint, the
number of matching pods per topology value of every eligible domain (upstream's
`TpValueToMatchNum`, keyed by constraint like upstream) and its global minimum —, their upkeep
when a preemption simulation adds or removes a pod (`updateWithPod`), and the per-node Filter,
which only looks counts up: O(constraints) per node. Must not scan pods in `filter`. The
constraints, their defaults and the node inclusion policies are
`kresched.sched.pod_topology_spread_constraints`'; the Score half (PreScore, Score,
NormalizeScore) is `kresched.sched.pod_topology_spread_score`'s, which the plugin's score methods
call.

PreFilter is the only cluster-wide pass: one walk over the nodes to find the eligible domains
(a node is eligible when it has every constraint's topology key and passes the constraint's
node inclusion policies), then one walk over the pods of the incoming pod's namespace only
(`Snapshot.pods_by_namespace`), grouped by node.

Semantics, as upstream:
  1. Only `whenUnsatisfiable: DoNotSchedule` constraints filter; `ScheduleAnyway` ones only score.
  2. Counted pods: in the incoming pod's namespace, not terminating (`countPodsMatchSelector`
     skips pods with a deletionTimestamp), matching the selector (`matchLabelKeys` merged in).
  3. A node counts for a constraint only if it has *all* constraints' topology keys and passes
     the constraint's node inclusion policies. Eligible domains count even with no matching pod.
  4. Filter: a node without a constraint's topology key fails UnschedulableAndUnresolvable with
     `node(s) didn't match pod topology spread constraints (missing required label)`. Otherwise
     `matching pods in the node's domain + (1 if the pod matches its own selector) − global
     minimum` must not exceed `maxSkew`, else Unschedulable with
     `node(s) didn't match pod topology spread constraints`. The global minimum is 0 when there
     are fewer eligible domains than `minDomains` (default 1).
  5. A pod without constraints gets the profile's default constraints. With `defaultingType:
     System` (the default) those are the system defaults (hostname maxSkew 3, zone maxSkew 5),
     which are `ScheduleAnyway` and therefore never filter: such a pod's PreFilter returns Skip.
     With `defaultingType: List` they are `defaultConstraints` (none when empty); their
     DoNotSchedule ones filter like the pod's own.

Deliberate differences:
  * The global minimum is kept exact under any sequence of `add_pod`/`remove_pod` (a histogram of
    domains per count, as the newest `filtering.go` does with `DomainsAtCount`); releases up to
    1.35 keep two "critical paths", which give the same answer after a fresh PreFilter but can
    drift after several additions.
  * `add_pod`/`remove_pod` ignore terminating pods and constraints whose selector has no
    requirements, so that they always agree with a fresh PreFilter on the changed cluster;
    upstream's `updateWithPod` counts both although `countPodsMatchSelector` never does.
  * The in-place-resize Skip is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter, is_
from typing import ClassVar

import msgspec

from kresched.model.objects import Node, Pod
from kresched.model.specs import TopologySpreadConstraint
from kresched.sched.framework import (
    SUCCESS,
    Code,
    CycleState,
    PreFilterResult,
    Snapshot,
    Status,
    node_labels,
    unresolvable,
    unschedulable,
)
from kresched.sched.node_affinity import required_node_selector
from kresched.sched.node_info import NodeInfo
from kresched.sched.pod_topology_spread_constraints import (
    HOSTNAME_LABEL,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SpreadConstraint,
    build_constraints,
    build_default_constraints,
    node_inclusion,
)
from kresched.sched.pod_topology_spread_score import (
    ScoreState,
    matching_counts,
    normalize_scores,
    pre_score_state,
    score_nodes,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
]

NAME = "PodTopologySpread"

#: Upstream `ErrReasonConstraintsNotMatch` (Unschedulable).
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
#: Upstream `ErrReasonNodeLabelNotMatch` (UnschedulableAndUnresolvable).
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

_STATE_KEY = "PreFilter" + NAME
_PRESCORE_KEY = "PreScore" + NAME
_NO_DOMAIN_MIN = 2**31 - 1  # upstream's math.MaxInt32: the minimum when no domain is eligible


class _State:
    """Upstream's `preFilterState`; `clone()` copies the counts, shares the constraints."""

    __slots__ = ("constraints", "counts", "domains_at_count", "eligible", "keys", "min_match", "namespace",
                 "self_match", "topology_keys", "verdicts")

    def __init__(self, pod: Pod, constraints: tuple[SpreadConstraint, ...], counts: list[dict[str, int]],
                 eligible: Callable[[SpreadConstraint, Node], bool]) -> None:
        self.constraints = constraints
        self.topology_keys = frozenset(c.topology_key for c in constraints)
        #: Each constraint's key, in order, where no key is a node's own (hostname): then Filter's
        #: verdict on a node is a function of the node's values of these keys, kept in `verdicts`
        #: until a count changes. None: every node is its own domain, nothing to share.
        self.keys = None if HOSTNAME_LABEL in self.topology_keys else tuple(c.topology_key for c in constraints)
        self.verdicts: dict[tuple[str | None, ...] | str | None, Status] = {}
        self.namespace = pod.metadata.namespace
        self.eligible = eligible
        #: 1 where the incoming pod matches the constraint's own selector (`selfMatchNum`).
        self.self_match = tuple(int(c.selector(pod.metadata.labels)) for c in constraints)
        #: Per constraint: topology value → matching pods, for every eligible domain.
        self.counts = counts
        #: Per constraint: matching-pod count → how many domains have it; keeps `min_match` exact.
        self.domains_at_count: list[dict[int, int]] = []
        self.min_match: list[int] = []
        for per_value in counts:
            hist: dict[int, int] = {}
            for n in per_value.values():
                hist[n] = hist.get(n, 0) + 1
            self.domains_at_count.append(hist)
            self.min_match.append(min(per_value.values(), default=_NO_DOMAIN_MIN))

    def clone(self) -> _State:
        c = _State.__new__(_State)
        c.constraints = self.constraints
        c.topology_keys = self.topology_keys
        c.keys = self.keys
        c.verdicts = {}
        c.namespace = self.namespace
        c.eligible = self.eligible
        c.self_match = self.self_match
        c.counts = [dict(m) for m in self.counts]
        c.domains_at_count = [dict(h) for h in self.domains_at_count]
        c.min_match = list(self.min_match)
        return c

    def min_match_num(self, i: int) -> int:
        """The global minimum of constraint `i`, 0 while there are fewer domains than minDomains."""
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.min_match[i]

    def counted_for(self, pod: Pod, node: Node) -> list[int]:
        """The constraints whose counts `pod` on `node` is in (`updateWithPod`'s conditions)."""
        if pod.metadata.namespace != self.namespace or pod.metadata.deletion_timestamp is not None:
            return []
        labels = node.metadata.labels
        if not all(k in labels for k in self.topology_keys):
            return []
        pod_labels = pod.metadata.labels
        return [i for i, c in enumerate(self.constraints)
                if c.counts_existing and c.selector(pod_labels) and self.eligible(c, node)]

    def update_with_pod(self, pod: Pod, node: Node, delta: int) -> None:
        """`updateWithPod`: account for `pod` appearing (+1) or going (-1) on `node`."""
        for i in self.counted_for(pod, node):
            c = self.constraints[i]
            value = node.metadata.labels[c.topology_key]
            per_value = self.counts[i]
            if value not in per_value:  # not reachable from a consistent snapshot; stay exact anyway
                per_value[value] = 0
                self._move(i, None, 0)
            old = per_value[value]
            per_value[value] = old + delta
            self._move(i, old, old + delta)
            if self.verdicts:
                self.verdicts.clear()

    def _move(self, i: int, old: int | None, cur: int) -> None:
        """One domain's count went from `old` (None: a new domain) to `cur`, |cur − old| ≤ 1."""
        hist = self.domains_at_count[i]
        if old is not None:
            left = hist.get(old, 0) - 1
            if left > 0:
                hist[old] = left
            else:
                hist.pop(old, None)
        hist[cur] = hist.get(cur, 0) + 1
        if cur < self.min_match[i]:
            self.min_match[i] = cur
        elif old == self.min_match[i] and old not in hist:
            # The last domain at the minimum moved up by one: every other domain is ≥ cur.
            self.min_match[i] = cur


def _domains(pod: Pod, constraints: tuple[SpreadConstraint, ...], eligible: Callable[[SpreadConstraint, Node], bool],
             snapshot: Snapshot) -> tuple[list[dict[str, str]], list[dict[str, int]]]:
    """Per constraint: the topology value of each node that has every key of the constraints and
    passes the constraint's node inclusion policies, and each such value counting 0, in node order
    (PreFilter's walk over the nodes). What it reads of the pod — the keys and policies, its node
    selector, required node affinity and tolerations — is the same for many pods, and nodes do not
    change in a simulation (pods do): kept per that key while the snapshot's nodes are the same
    objects as the cluster's. Do not change the answer."""
    facts = snapshot.cluster
    infos = snapshot.node_infos
    key: bytes | None = None
    if snapshot.index(_SAME_NODES, _SameNodes.build).same:
        # (The policies read the pod's node selector and required node affinity, or its
        # tolerations, only where a constraint honors them.)
        affinity = any(c.honor_node_affinity for c in constraints)
        key = msgspec.json.encode((
            [(c.topology_key, c.honor_node_affinity, c.honor_node_taints) for c in constraints],
            (pod.spec.node_selector, required_node_selector(pod)) if affinity else None,
            pod.spec.tolerations if any(c.honor_node_taints for c in constraints) else None))
        found = facts.memo(_DOMAINS_MEMO).get(key)
        if found is not None:
            return found
    keys = {c.topology_key for c in constraints}
    counts: list[dict[str, int]] = [{} for _ in constraints]
    value_of_node: list[dict[str, str]] = [{} for _ in constraints]
    for info in infos:
        node = info.node
        labels = node.metadata.labels
        if not all(k in labels for k in keys):
            continue
        for i, c in enumerate(constraints):
            if eligible(c, node):
                value = labels[c.topology_key]
                counts[i].setdefault(value, 0)
                value_of_node[i][info.name] = value
    if key is not None:
        facts.memo(_DOMAINS_MEMO)[key] = (value_of_node, counts)
    return value_of_node, counts


_DOMAINS_MEMO = "PodTopologySpread/domains"
#: `Snapshot.index` key of `_SameNodes`.
_SAME_NODES = "PodTopologySpread/same-nodes"


class _SameNodes:
    """Whether a snapshot's nodes are the very objects its cluster facts were gathered from (then
    `_domains` may keep its answer per pod key): found once per lineage, carried down simulations,
    which replace NodeInfos and keep their nodes (one that brings another node object makes it False)."""

    __slots__ = ("same",)

    def __init__(self, same: bool) -> None:
        self.same = same

    @classmethod
    def build(cls, snapshot: Snapshot) -> _SameNodes:
        facts, infos = snapshot.cluster, snapshot.node_infos
        return cls(len(infos) == len(facts.nodes) and all(map(is_, map(_NODE, infos), facts.nodes)))

    def replaced(self, old: NodeInfo, new: NodeInfo) -> _SameNodes:
        return self if new.node is old.node or not self.same else _SameNodes(False)


_NODE = attrgetter("node")


class PodTopologySpread:
    """The PodTopologySpread filter plugin (PreFilter, Filter and PreFilterExtensions)."""

    name: ClassVar[str] = NAME

    def __init__(self, default_constraints: tuple[TopologySpreadConstraint, ...] | None = None) -> None:
        """`default_constraints`: PodTopologySpreadArgs' `defaultConstraints` with `defaultingType:
        List` (an empty tuple: no default spreading); None (`System`): the system defaults."""
        self.system_defaulted = default_constraints is None
        self.default_constraints = SYSTEM_DEFAULT_CONSTRAINTS if default_constraints is None \
            else tuple(default_constraints)
        #: Some default constraint is DoNotSchedule: it filters every pod without constraints of its own.
        self.hard_defaults = any(c.when_unsatisfiable == "DoNotSchedule" for c in self.default_constraints)

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        if pod.spec.topology_spread_constraints or not self.hard_defaults:
            constraints = build_constraints(pod)
        else:  # `getConstraints`: the profile's default DoNotSchedule constraints
            constraints = build_default_constraints(pod, snapshot.cluster, self.default_constraints, "DoNotSchedule")
        if not constraints:
            return PreFilterResult(Status(Code.SKIP))
        eligible = node_inclusion(pod)
        value_of_node, domains = _domains(pod, constraints, eligible, snapshot)
        counts = [dict(d) for d in domains]
        for i, c in enumerate(constraints):
            if not c.counts_existing:
                continue
            # Each node's matching pods (`countPodsMatchSelector`), as PreScore keeps them per snapshot.
            values, per_value = value_of_node[i], counts[i]
            for name, n in matching_counts(snapshot, pod.metadata.namespace, c).items():
                value = values.get(name)
                if value is not None:
                    per_value[value] += n

        cycle.write(_STATE_KEY, _State(pod, constraints, counts, eligible))
        return PreFilterResult()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is None:
            return Status(Code.ERROR, (f"reading {_STATE_KEY!r} from cycle state: not found",))
        labels = node_info.node.metadata.labels
        keys = state.keys
        if keys is None:
            return _verdict(state, labels)
        # (One key, as most constraints have: its value is the key in `verdicts`, not a 1-tuple.)
        values = labels.get(keys[0]) if len(keys) == 1 else tuple([labels.get(k) for k in keys])
        st = state.verdicts.get(values)
        if st is None:
            st = state.verdicts[values] = _verdict(state, labels)
        return st

    def label_keys(self, cycle: CycleState) -> tuple[str, ...] | None:
        """The node labels Filter reads for this pod, all it reads of a node (its verdict is a
        function of their values while the PreFilter state stays as it is); None where a key is
        the hostname (every node its own domain) or there is no state."""
        state: _State | None = cycle.read(_STATE_KEY)
        return state.keys if state is not None else None

    def resume_state(self, cycle: CycleState) -> _State | None:
        """What Filter reads besides the node (`sched.resume`): a copy of the PreFilter state."""
        state: _State | None = cycle.read(_STATE_KEY)
        return state.clone() if state is not None else None

    def changed_domains(self, before: _State | None, after: _State | None) -> set[tuple[str, str]] | None:
        """The topology pairs where Filter's verdict may differ between two states of pods with the
        same constraints (`sched.resume`): where a domain fails in either state, unless it fails in
        both with the same numbers (its count, the global minimum, whether the pod matches: what
        the message names). A domain that passes in both passes alike, wherever the minimum moved;
        one that neither state counts has no matching pod, so it passes in both unless the pod
        alone would skew it (then None: every node)."""
        if before is None or after is None:
            return set() if before is after else None
        if len(before.constraints) != len(after.constraints):
            return None
        out: set[tuple[str, str]] = set()
        for i, c in enumerate(after.constraints):
            a, b = before.counts[i], after.counts[i]
            low_a, low_b = before.min_match_num(i), after.min_match_num(i)
            own_a, own_b = before.self_match[i], after.self_match[i]
            if low_a == low_b and own_a == own_b and a == b:
                continue
            if own_a - low_a > c.max_skew or own_b - low_b > c.max_skew:
                return None  # an uncounted domain may fail
            for v in a.keys() | b.keys():
                n_a, n_b = a.get(v, 0), b.get(v, 0)
                fails_a, fails_b = n_a + own_a - low_a > c.max_skew, n_b + own_b - low_b > c.max_skew
                if (fails_a or fails_b) and (fails_a, n_a, low_a, own_a) != (fails_b, n_b, low_b, own_b):
                    out.add((c.topology_key, v))
        return out

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is not None:
            state.update_with_pod(pod_to_add, node_info.node, 1)

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is not None:
            state.update_with_pod(pod_to_remove, node_info.node, -1)

    def remove_pods(self, cycle: CycleState, pod: Pod, pods: Sequence[Pod], node_info: NodeInfo) -> None:
        """`remove_pod` of each of `pods`, in order (victim selection takes a node's pods off at once)."""
        state: _State | None = cycle.read(_STATE_KEY)
        if state is not None:
            node = node_info.node
            for p in pods:
                state.update_with_pod(p, node, -1)

    def removal_changes_nothing(self, cycle: CycleState, pods: Sequence[Pod], node_info: NodeInfo) -> bool:
        """Whether taking `pods` off `node_info` leaves every count Filter reads as it is (none of them
        is counted there): then its verdict on every node stays (`preemption.select_victims`)."""
        state: _State | None = cycle.read(_STATE_KEY)
        node = node_info.node
        return state is None or not any(state.counted_for(p, node) for p in pods)

    # -- Score (scoring.go: `kresched.sched.pod_topology_spread_score`) -----------------------------

    def pre_score(self, cycle: CycleState, pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot) -> Status:
        """`PreScore` (`pre_score_state`); Skip when there is nothing to score."""
        cycle.write(_PRESCORE_KEY, None)
        state = pre_score_state(pod, nodes, snapshot, self.default_constraints, self.system_defaulted,
                                node_labels(cycle, nodes, snapshot))
        if state is None:
            return Status(Code.SKIP)
        cycle.write(_PRESCORE_KEY, state)
        return SUCCESS

    def score(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """`Score` (`score_nodes`); 0 for an ignored node."""
        return self.score_all(cycle, pod, [node_info])[0]

    def score_all(self, cycle: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        """`score` of each of `nodes` (the framework scores the feasible nodes in one call)."""
        state: ScoreState | None = cycle.read(_PRESCORE_KEY)
        if state is None:
            return [0] * len(nodes)
        return score_nodes(state, nodes)

    def normalize_score(self, cycle: CycleState, pod: Pod, scores: list[int]) -> None:
        """`NormalizeScore` (`normalize_scores`): fewer matching pods score higher; ignored nodes 0."""
        state: ScoreState | None = cycle.read(_PRESCORE_KEY)
        if state is None:
            return
        normalize_scores(state, scores)


def _verdict(state: _State, labels: Mapping[str, str]) -> Status:
    """Filter's verdict on a node with these labels."""
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH,
                                details=(f"node has no {c.topology_key} label",))
        minimum = state.min_match_num(i)
        matching = state.counts[i].get(value, 0)
        skew = matching + state.self_match[i] - minimum
        if skew > c.max_skew:
            return unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH, details=(
                f"{c.topology_key}={value}: skew {skew} > maxSkew {c.max_skew} "
                f"({matching} matching pods there, global minimum {minimum})",))
    return SUCCESS
