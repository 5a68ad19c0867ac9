"""PodTopologySpread: the pod's `DoNotSchedule` topology spread constraints, after kube-scheduler's
`pkg/scheduler/framework/plugins/podtopologyspread` (filtering.go, common.go, plugin.go;
Kubernetes 1.35/1.36).

Owns: parsing the constraints (`SpreadConstraint`), the per-pod PreFilter state — for each
constraint, the number of matching pods per topology value of every eligible domain
(upstream's `TpValueToMatchNum`, keyed by constraint like upstream) and its global minimum —,
their upkeep when a preemption simulation adds or removes a pod (`updateWithPod`), and the
per-node Filter, which only looks counts up: O(constraints) per node. Must not scan pods in
`filter`.

PreFilter is the only cluster-wide pass: one walk over the nodes to find the eligible domains
(a node is eligible when it has every constraint's topology key and passes the constraint's
node inclusion policies), then one walk over the pods of the incoming pod's namespace only
(`Snapshot.pods_by_namespace`), grouped by node.

Semantics, as upstream:
  1. Only `whenUnsatisfiable: DoNotSchedule` constraints filter; `ScheduleAnyway` ones only score.
  2. `matchLabelKeys`: each key the incoming pod has is ANDed into the selector as `key=value`
     (`mergeLabelSetWithSelector`); a nil selector stays nil (it matches nothing).
  3. Counted pods: in the incoming pod's namespace, not terminating (`countPodsMatchSelector`
     skips pods with a deletionTimestamp), matching the selector. A selector with no
     requirements (`labelSelector: {}`) counts no existing pod, yet matches the incoming pod.
  4. A node counts for a constraint only if it has *all* constraints' topology keys and passes
     `nodeAffinityPolicy` (default Honor: the pod's nodeSelector and required node affinity) and
     `nodeTaintsPolicy` (default Ignore; Honor: every NoSchedule/NoExecute taint tolerated).
     Eligible domains count even with no matching pod.
  5. Filter: a node without a constraint's topology key fails UnschedulableAndUnresolvable with
     `node(s) didn't match pod topology spread constraints (missing required label)`. Otherwise
     `matching pods in the node's domain + (1 if the pod matches its own selector) − global
     minimum` must not exceed `maxSkew`, else Unschedulable with
     `node(s) didn't match pod topology spread constraints`. The global minimum is 0 when there
     are fewer eligible domains than `minDomains` (default 1).
  6. A pod without constraints would get the cluster's default constraints. With the default
     scheduler configuration those are the system defaults (hostname maxSkew 3, zone maxSkew 5),
     which are `ScheduleAnyway` and therefore never filter: such a pod's PreFilter returns Skip.

Deliberate differences:
  * Custom `defaultConstraints` in a scheduler configuration (`PodTopologySpreadArgs`, which may
    be DoNotSchedule) are not modelled: kresched does not read the scheduler's configuration.
  * The global minimum is kept exact under any sequence of `add_pod`/`remove_pod` (a histogram of
    domains per count, as the newest `filtering.go` does with `DomainsAtCount`); releases up to
    1.35 keep two "critical paths", which give the same answer after a fresh PreFilter but can
    drift after several additions.
  * `add_pod`/`remove_pod` ignore terminating pods and constraints whose selector has no
    requirements, so that they always agree with a fresh PreFilter on the changed cluster;
    upstream's `updateWithPod` counts both although `countPodsMatchSelector` never does.
  * `nodeTaintsPolicy: Honor` reads tolerations exactly as kresched's TaintToleration does (so the
    alpha `Gt`/`Lt` operators count as that plugin counts them); the in-place-resize Skip is not
    modelled.
  * Invalid selectors (which API validation rejects) match nothing instead of failing PreFilter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from kresched.model.objects import LabelSelector, LabelSelectorRequirement, Node, Pod
from kresched.sched.framework import (
    SUCCESS,
    Code,
    CycleState,
    NodeInfo,
    PreFilterResult,
    Snapshot,
    Status,
    unresolvable,
    unschedulable,
)
from kresched.sched.interpod_affinity import compile_label_selector
from kresched.sched.node_affinity import required_node_affinity_matches
from kresched.sched.taint_toleration import find_untolerated_taint

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
    "SpreadConstraint",
    "build_constraints",
]

NAME = "PodTopologySpread"

#: Upstream `ErrReasonConstraintsNotMatch` (Unschedulable).
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
#: Upstream `ErrReasonNodeLabelNotMatch` (UnschedulableAndUnresolvable).
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

_STATE_KEY = "PreFilter" + NAME
_NO_DOMAIN_MIN = 2**31 - 1  # upstream's math.MaxInt32: the minimum when no domain is eligible


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """Upstream's internal `topologySpreadConstraint`: defaults applied, selector parsed."""

    max_skew: int
    topology_key: str
    selector: Callable[[Mapping[str, str]], bool]
    #: False when the selector has no requirements (`selector.Empty()`): no existing pod counts.
    counts_existing: bool
    min_domains: int
    honor_node_affinity: bool
    honor_node_taints: bool


class _State:
    """Upstream's `preFilterState`; `clone()` copies the counts, shares the constraints."""

    __slots__ = ("constraints", "counts", "domains_at_count", "eligible", "min_match", "namespace",
                 "self_match", "topology_keys")

    def __init__(self, pod: Pod, constraints: tuple[SpreadConstraint, ...], counts: list[dict[str, int]],
                 eligible: Callable[[SpreadConstraint, Node], bool]) -> None:
        self.constraints = constraints
        self.topology_keys = frozenset(c.topology_key for c in constraints)
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

    def update_with_pod(self, pod: Pod, node: Node, delta: int) -> None:
        """`updateWithPod`: account for `pod` appearing (+1) or going (-1) on `node`."""
        if pod.metadata.namespace != self.namespace or pod.metadata.deletion_timestamp is not None:
            return
        labels = node.metadata.labels
        if not all(k in labels for k in self.topology_keys):
            return
        pod_labels = pod.metadata.labels
        for i, c in enumerate(self.constraints):
            if not c.counts_existing or not c.selector(pod_labels) or not self.eligible(c, node):
                continue
            value = labels[c.topology_key]
            per_value = self.counts[i]
            if value not in per_value:  # not reachable from a consistent snapshot; stay exact anyway
                per_value[value] = 0
                self._move(i, None, 0)
            old = per_value[value]
            per_value[value] = old + delta
            self._move(i, old, old + delta)

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


class PodTopologySpread:
    """The PodTopologySpread filter plugin (PreFilter, Filter and PreFilterExtensions)."""

    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        constraints = build_constraints(pod)
        if not constraints:
            return PreFilterResult(Status(Code.SKIP))
        eligible = _node_inclusion(pod)
        keys = {c.topology_key for c in constraints}

        counts: list[dict[str, int]] = [{} for _ in constraints]
        value_of_node: list[dict[str, str]] = [{} for _ in constraints]
        for info in snapshot.node_infos:
            node = info.node
            labels = node.metadata.labels
            if not all(k in labels for k in keys):
                continue
            for i, c in enumerate(constraints):
                if eligible(c, node):
                    value = labels[c.topology_key]
                    counts[i].setdefault(value, 0)
                    value_of_node[i][info.name] = value

        groups = snapshot.pods_by_namespace().get(pod.metadata.namespace, ())
        for i, c in enumerate(constraints):
            if not c.counts_existing:
                continue
            sel, values, per_value = c.selector, value_of_node[i], counts[i]
            for info, pods in groups:
                value = values.get(info.name)
                if value is None:
                    continue
                n = sum(1 for p in pods
                        if p.metadata.deletion_timestamp is None and sel(p.metadata.labels))
                if n:
                    per_value[value] += n

        cycle.write(_STATE_KEY, _State(pod, constraints, counts, eligible))
        return PreFilterResult()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is None:
            return Status(Code.ERROR, (f"reading {_STATE_KEY!r} from cycle state: not found",))
        labels = node_info.node.metadata.labels
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

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is not None:
            state.update_with_pod(pod_to_add, node_info.node, 1)

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is not None:
            state.update_with_pod(pod_to_remove, node_info.node, -1)


# -- the constraints ------------------------------------------------------------------------------

def build_constraints(pod: Pod) -> tuple[SpreadConstraint, ...]:
    """`filterTopologySpreadConstraints(..., DoNotSchedule)` with upstream's defaults."""
    out = []
    labels = pod.metadata.labels
    for c in pod.spec.topology_spread_constraints:
        if c.when_unsatisfiable != "DoNotSchedule":
            continue
        selector = _merge_match_label_keys(c.label_selector, labels, c.match_label_keys)
        out.append(SpreadConstraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=compile_label_selector(selector),
            counts_existing=selector is not None and bool(selector.match_labels or selector.match_expressions),
            min_domains=1 if c.min_domains is None else c.min_domains,
            honor_node_affinity=(c.node_affinity_policy or "Honor") == "Honor",
            honor_node_taints=(c.node_taints_policy or "Ignore") == "Honor",
        ))
    return tuple(out)


def _merge_match_label_keys(selector: LabelSelector | None, pod_labels: Mapping[str, str],
                            keys: tuple[str, ...]) -> LabelSelector | None:
    """`mergeLabelSetWithSelector`: AND `key=value` for each key the pod has (as `In` requirements,
    so a conflicting matchLabels entry still applies); a nil selector stays nil. Requirements
    already merged by kube-apiserver (`MatchLabelKeysInPodTopologySpreadSelectorMerge`) are not
    repeated."""
    if selector is None or not keys:
        return selector
    extra = [LabelSelectorRequirement(key=k, operator="In", values=(pod_labels[k],))
             for k in keys if k in pod_labels and selector.match_labels.get(k) != pod_labels[k]]
    extra = [r for r in extra if r not in selector.match_expressions]
    if not extra:
        return selector
    return LabelSelector(match_labels=selector.match_labels,
                         match_expressions=(*selector.match_expressions, *extra))


# -- node inclusion policies ----------------------------------------------------------------------

def _node_inclusion(pod: Pod) -> Callable[[SpreadConstraint, Node], bool]:
    """`matchNodeInclusionPolicies` for `pod`, memoised per node (both answers depend only on the
    pod and the node, and every constraint of the pod asks the same two questions). The checks
    are NodeAffinity's and TaintToleration's own (`GetRequiredNodeAffinity(pod).Match`,
    `FindMatchingUntoleratedTaint` over NoSchedule/NoExecute taints)."""
    affinity: dict[str, bool] = {}
    taints: dict[str, bool] = {}

    def eligible(c: SpreadConstraint, node: Node) -> bool:
        name = node.metadata.name
        if c.honor_node_affinity:
            ok = affinity.get(name)
            if ok is None:
                ok = affinity[name] = required_node_affinity_matches(pod, name, node.metadata.labels)
            if not ok:
                return False
        if c.honor_node_taints:
            ok = taints.get(name)
            if ok is None:
                ok = taints[name] = find_untolerated_taint(node.spec.taints, pod.spec.tolerations) is None
            if not ok:
                return False
        return True

    return eligible
