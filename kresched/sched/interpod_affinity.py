"""InterPodAffinity: required pod affinity and anti-affinity (Filter) and preferred inter-pod
affinity (Score), after kube-scheduler's `pkg/scheduler/framework/plugins/interpodaffinity`
(filtering.go, scoring.go, plugin.go) and the `AffinityTerm` of `framework/types.go`
(Kubernetes 1.35/1.36).

Owns the plugin (every extension point), the per-pod PreFilter state —
three maps from topology pair (key, value) to a count, as upstream's `preFilterState`:
  * `existing_anti_affinity_counts`: existing pods whose required anti-affinity terms match the
    incoming pod, by the pair of the node they run on;
  * `affinity_counts`: existing pods matching *all* the incoming pod's required affinity terms;
  * `anti_affinity_counts`: existing pods matching each of its required anti-affinity terms;
— their upkeep when a preemption simulation adds or removes a pod (`updateWithPod`), and the
per-node Filter, which only looks pairs up: O(terms + node labels) per node. Must not scan pods
in `filter`. The terms are `kresched.sched.interpod_affinity_terms`' (`AffinityTerm`), the index of
existing pods' terms `kresched.sched.interpod_affinity_existing`'s, and the Score half (PreScore,
Score, NormalizeScore) `kresched.sched.interpod_affinity_score`'s, which the plugin's score
methods call.

PreFilter is the only cluster-wide pass: existing pods' required anti-affinity terms come from an
index by signature and namespace carried through simulations (`ExistingAntiAffinityIndex`: each
distinct term matched once), and the incoming pod's own terms are matched only against the pods of
the namespaces they select (`Snapshot.pods_by_namespace`).
Existing pods' parsed anti-affinity terms are cached on the pod object (as upstream's `PodInfo`
caches `RequiredAntiAffinityTerms`): they depend on nothing but the pod.

Semantics, as upstream:
  1. Namespaces of a term: `namespaces` ∪ (namespaces whose labels match `namespaceSelector`);
     no namespaces and no selector means the pod's own namespace; an empty selector `{}` means
     every namespace. For the incoming pod the selector is resolved against the snapshot's
     namespaces once (`mergeAffinityTermNamespacesIfNotEmpty`); an existing pod's selector is
     matched against the incoming pod's namespace labels (empty if the namespace is unknown).
  2. A nil `labelSelector` matches no pod; an empty one matches every pod.
  3. Affinity: the node must carry every term's topology key, and each term's pair must hold a
     pod matching all terms — unless no pod in the cluster matches all terms and the pod matches
     them itself (the first pod of a group): then any node with all the keys passes.
     Failure is UnschedulableAndUnresolvable (evicting pods cannot create a matching pod).
  4. Anti-affinity: no pod matching a term in the node's pair for that term. Unschedulable.
  5. Existing pods' anti-affinity: no pair of the node's labels holds an existing pod whose
     anti-affinity term matches the incoming pod. Unschedulable.
  6. PreFilter returns Skip when the pod has no required terms and no existing pod's required
     anti-affinity matches it (upstream's condition: the count map is empty, not merely "no pod
     has anti-affinity").

Deliberate differences:
  * `matchLabelKeys` / `mismatchLabelKeys` are merged into the term's `labelSelector` here (as
    `key In (value)` / `key NotIn (value)` from the owning pod's labels, keys the pod lacks
    skipped, nil selectors left nil), exactly as kube-apiserver does when it creates the pod
    (`applyMatchLabelKeysAndMismatchLabelKeys`; the scheduler itself reads the merged selector).
    This makes hand-written snapshots behave like created pods; a requirement the API server
    already added is not added twice. Only if a pod's labels changed after creation do the two
    differ (upstream keeps the creation-time values).
  * An invalid selector (which API validation rejects) matches nothing, as in
    `kresched.model.selectors`, instead of failing PreFilter with `parsing pod: ...`.
  * The `InterPodAffinityHostnameFastPath` gate (a hostname-only fast path with the same results)
    and the in-place-resize Skip (`IsPodResizeDeferred`) are not modelled.
  * `add_pod` / `remove_pod` without PreFilter state (the plugin was skipped) do nothing, as the
    framework never calls a skipped plugin's extensions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import ClassVar

import msgspec

from kresched.model.objects import Pod
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
from kresched.sched.interpod_affinity_existing import EXISTING_ANTI_INDEX, ExistingAntiAffinityIndex
from kresched.sched.interpod_affinity_score import (
    ScoreState,
    normalize_scores,
    pre_score_state,
    score_node,
    score_prescored,
)
from kresched.sched.interpod_affinity_terms import (
    NO_LABELS,
    AffinityTerm,
    Counts,
    required_anti_affinity_terms,
    required_terms,
    resolve_namespaces,
)
from kresched.sched.match_counts import selected_per_node
from kresched.sched.node_info import NodeInfo
from kresched.sched.pod_topology_spread_constraints import HOSTNAME_LABEL

__all__ = [
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "InterPodAffinity",
]

NAME = "InterPodAffinity"

#: Upstream `ErrReasonExistingAntiAffinityRulesNotMatch` (Unschedulable).
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
#: Upstream `ErrReasonAffinityRulesNotMatch` (UnschedulableAndUnresolvable).
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
#: Upstream `ErrReasonAntiAffinityRulesNotMatch` (Unschedulable).
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

_STATE_KEY = "PreFilter" + NAME
#: Upstream `preScoreStateKey`.
_PRESCORE_KEY = "PreScore" + NAME
#: `v1.DefaultHardPodAffinitySymmetricWeight`, InterPodAffinityArgs' default.
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1


class _State:
    """Upstream's `preFilterState`; `clone()` copies the counts, shares the parsed terms."""

    __slots__ = ("affinity_counts", "affinity_terms", "anti_affinity_counts", "anti_affinity_terms",
                 "existing_anti_affinity_counts", "existing_keys", "matches_own_affinity", "namespace_labels", "pod")

    def __init__(self, pod: Pod, affinity_terms: tuple[AffinityTerm, ...],
                 anti_affinity_terms: tuple[AffinityTerm, ...], namespace_labels: Mapping[str, str],
                 existing_anti_affinity_counts: Counts, affinity_counts: Counts,
                 anti_affinity_counts: Counts) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels
        self.existing_anti_affinity_counts = existing_anti_affinity_counts
        self.affinity_counts = affinity_counts
        self.anti_affinity_counts = anti_affinity_counts
        #: `podMatchesAllAffinityTerms(terms, pod)` for the incoming pod, which never changes.
        self.matches_own_affinity = _matches_all(affinity_terms, pod)
        #: The topology keys `existing_anti_affinity_counts` has counted (a key whose counts fell to
        #: 0 may stay: a node is looked up by these, then its count checked), so that a node is
        #: looked up key by key, not label by label.
        self.existing_keys: tuple[str, ...] = tuple(dict.fromkeys(k for k, _ in existing_anti_affinity_counts))

    def clone(self) -> _State:
        c = _State.__new__(_State)
        c.pod = self.pod
        c.affinity_terms = self.affinity_terms
        c.anti_affinity_terms = self.anti_affinity_terms
        c.namespace_labels = self.namespace_labels
        c.matches_own_affinity = self.matches_own_affinity
        c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        c.existing_keys = self.existing_keys
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_affinity_counts = dict(self.anti_affinity_counts)
        return c

    def update_with_pod(self, pod: Pod, node_labels: Mapping[str, str], delta: int) -> None:
        """`preFilterState.updateWithPod`: account for `pod` appearing (+1) or going (-1) on a
        node with `node_labels`."""
        for counts, key in self._counted_in(pod):
            _bump(counts, node_labels, key, delta)
            if counts is self.existing_anti_affinity_counts and key not in self.existing_keys:
                self.existing_keys = (*self.existing_keys, key)

    def counted(self, pod: Pod, node_labels: Mapping[str, str]) -> bool:
        """Whether `pod`, on a node with `node_labels`, is in any count (`update_with_pod` changes one)."""
        return any(key in node_labels for _, key in self._counted_in(pod))

    def _counted_in(self, pod: Pod) -> Iterator[tuple[Counts, str]]:
        """The counts `pod` is in, each with the topology key it is counted under (`updateWithPod`'s
        conditions; a node without that label counts it nowhere)."""
        if pod.spec.affinity is not None:  # (most pods have none: their terms are not looked up)
            for t in required_anti_affinity_terms(pod):
                if t.matches(self.pod, self.namespace_labels):
                    yield self.existing_anti_affinity_counts, t.topology_key
        if self.affinity_terms and _matches_all(self.affinity_terms, pod):
            for t in self.affinity_terms:
                yield self.affinity_counts, t.topology_key
        for t in self.anti_affinity_terms:
            if t.matches(pod, NO_LABELS):
                yield self.anti_affinity_counts, t.topology_key


class InterPodAffinity:
    """The InterPodAffinity plugin: PreFilter, Filter and PreFilterExtensions; PreScore, Score and
    NormalizeScore. The arguments are InterPodAffinityArgs' (defaults as the default profile)."""

    name: ClassVar[str] = NAME

    def __init__(self, hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT,
                 ignore_preferred_terms_of_existing_pods: bool = False) -> None:
        self.hard_pod_affinity_weight = hard_pod_affinity_weight
        self.ignore_preferred_terms_of_existing_pods = ignore_preferred_terms_of_existing_pods

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        affinity, anti_affinity = required_terms(pod)
        known = snapshot.namespace_labels
        affinity = tuple(resolve_namespaces(t, known) for t in affinity)
        anti_affinity = tuple(resolve_namespaces(t, known) for t in anti_affinity)
        ns_labels = known.get(pod.metadata.namespace, NO_LABELS)

        anti_index: ExistingAntiAffinityIndex = snapshot.index(EXISTING_ANTI_INDEX, ExistingAntiAffinityIndex.build)
        existing = anti_index.counts(pod, ns_labels)
        affinity_counts, anti_affinity_counts = _incoming_counts(affinity, anti_affinity, snapshot)
        if not existing and not affinity and not anti_affinity:
            return PreFilterResult(Status(Code.SKIP))
        cycle.write(_STATE_KEY, _State(pod, affinity, anti_affinity, ns_labels, existing,
                                       affinity_counts, anti_affinity_counts))
        return PreFilterResult()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is None:
            return Status(Code.ERROR, (f"reading {_STATE_KEY!r} from cycle state: not found",))
        labels = node_info.node.metadata.labels

        missing = _affinity_failure(state, labels)
        if missing is not None:
            return unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH, details=(missing,))

        counts = state.anti_affinity_counts
        if counts:
            for t in state.anti_affinity_terms:
                value = labels.get(t.topology_key)
                if value is not None and counts.get((t.topology_key, value), 0) > 0:
                    return unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
                                         details=(f"pods matching an anti-affinity term run in "
                                                  f"{t.topology_key}={value}",))

        counts = state.existing_anti_affinity_counts
        if counts:
            # Upstream walks the node's labels; only the keys counted can match (a few, where a node
            # has a dozen labels). On a match, the walk in the node's order names the pair.
            for key in state.existing_keys:
                value = labels.get(key)
                if value is not None and counts.get((key, value), 0) > 0:
                    for pair in labels.items():
                        if counts.get(pair, 0) > 0:
                            return unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
                                                 details=(f"pods in {pair[0]}={pair[1]} have anti-affinity "
                                                          f"against this pod",))
        return SUCCESS

    def label_keys(self, cycle: CycleState) -> tuple[str, ...] | None:
        """The node labels Filter reads for this pod, all it reads of a node (its verdict is a
        function of their values while the PreFilter state stays as it is): the terms' topology keys
        and those the existing pods' anti-affinity is counted under. None where a key is the
        hostname (every node its own domain), where there is no state, or where that anti-affinity
        is counted under two keys or more (then the message names the first of the node's labels
        counted, in the node's order of its labels)."""
        state: _State | None = cycle.read(_STATE_KEY)
        if state is None or len(state.existing_keys) > 1:
            return None
        keys = tuple(dict.fromkeys((*(t.topology_key for t in state.affinity_terms),
                                    *(t.topology_key for t in state.anti_affinity_terms), *state.existing_keys)))
        return None if HOSTNAME_LABEL in keys else keys

    def resume_state(self, cycle: CycleState) -> _State | None:
        """What Filter reads besides the node (`sched.resume`): a copy of the PreFilter state."""
        state: _State | None = cycle.read(_STATE_KEY)
        return state.clone() if state is not None else None

    def changed_domains(self, before: _State | None, after: _State | None) -> set[tuple[str, str]] | None:
        """The topology pairs where Filter's verdict may differ between two states of pods with the
        same terms (`sched.resume`): where a count is positive in one and not in the other; None
        (every node) where whether any pod matches the affinity terms at all changed."""
        if before is None or after is None:
            return set() if before is after else None
        if bool(before.affinity_counts) != bool(after.affinity_counts):
            return None
        out: set[tuple[str, str]] = set()
        for a, b in ((before.affinity_counts, after.affinity_counts),
                     (before.anti_affinity_counts, after.anti_affinity_counts),
                     (before.existing_anti_affinity_counts, after.existing_anti_affinity_counts)):
            if a != b:
                out.update(k for k in a.keys() | b.keys() if (a.get(k, 0) > 0) != (b.get(k, 0) > 0))
        return out

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is not None:
            state.update_with_pod(pod_to_add, node_info.node.metadata.labels, 1)

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is not None:
            state.update_with_pod(pod_to_remove, node_info.node.metadata.labels, -1)

    def remove_pods(self, cycle: CycleState, pod: Pod, pods: Sequence[Pod], node_info: NodeInfo) -> None:
        """`remove_pod` of each of `pods`, in order (victim selection takes a node's pods off at once)."""
        state: _State | None = cycle.read(_STATE_KEY)
        if state is not None:
            labels = node_info.node.metadata.labels
            for p in pods:
                state.update_with_pod(p, labels, -1)

    def removal_changes_nothing(self, cycle: CycleState, pods: Sequence[Pod], node_info: NodeInfo) -> bool:
        """Whether taking `pods` off `node_info` leaves every count Filter reads as it is (none of them
        is counted there): then its verdict on every node stays (`preemption.select_victims`)."""
        state: _State | None = cycle.read(_STATE_KEY)
        if state is None:
            return True
        labels = node_info.node.metadata.labels
        return not any(state.counted(p, labels) for p in pods)

    # -- Score (scoring.go) ------------------------------------------------------------------------

    # -- Score (scoring.go: `kresched.sched.interpod_affinity_score`) ----------------------------------

    def pre_score(self, cycle: CycleState, pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot) -> Status:
        """`PreScore` (`pre_score_state`): the topology score map over the whole snapshot (as upstream,
        whatever `nodes`; their labels are read here for Score); Skip as upstream."""
        state = pre_score_state(pod, snapshot, self.hard_pod_affinity_weight,
                                self.ignore_preferred_terms_of_existing_pods, node_labels(cycle, nodes, snapshot))
        if state is None:
            return Status(Code.SKIP)
        cycle.write(_PRESCORE_KEY, state)
        return SUCCESS

    def score(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """`Score` (`score_node`)."""
        state: ScoreState | None = cycle.read(_PRESCORE_KEY)
        if state is None:  # upstream: an Error status; the framework never scores a skipped plugin
            return 0
        return score_node(state, node_info.node.metadata.labels)

    def score_all(self, cycle: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        """`score` of each of `nodes` (the framework scores the feasible nodes in one call)."""
        state: ScoreState | None = cycle.read(_PRESCORE_KEY)
        if state is None:
            return [0] * len(nodes)
        return score_prescored(state, nodes)

    def normalize_score(self, cycle: CycleState, pod: Pod, scores: list[int]) -> None:
        """`NormalizeScore` (`normalize_scores`)."""
        state: ScoreState | None = cycle.read(_PRESCORE_KEY)
        if state is None:
            return
        normalize_scores(state, scores)


# -- the check ------------------------------------------------------------------------------------

def _affinity_failure(state: _State, labels: Mapping[str, str]) -> str | None:
    """`satisfyPodAffinity`: None when the node passes, else what is missing (for `explain`)."""
    terms = state.affinity_terms
    if not terms:
        return None
    counts = state.affinity_counts
    lacking: str | None = None
    for t in terms:
        value = labels.get(t.topology_key)
        if value is None:
            return f"node has no {t.topology_key} label"
        if lacking is None and counts.get((t.topology_key, value), 0) <= 0:
            lacking = f"no pod matching the affinity terms runs in {t.topology_key}={value}"
    if lacking is None:
        return None
    # The first pod of a group with affinity to itself: nothing in the cluster matches yet.
    if not counts and state.matches_own_affinity:
        return None
    return lacking


def _existing_anti_affinity_counts(pod: Pod, ns_labels: Mapping[str, str], infos: Iterable[NodeInfo]) -> Counts:
    """`getExistingAntiAffinityCounts`."""
    counts: Counts = {}
    for info in infos:
        labels = info.node.metadata.labels
        for existing in info.pods_with_required_anti_affinity:
            for t in required_anti_affinity_terms(existing):
                if t.matches(pod, ns_labels):
                    _bump(counts, labels, t.topology_key, 1)
    return counts


def _incoming_counts(affinity: tuple[AffinityTerm, ...], anti_affinity: tuple[AffinityTerm, ...],
                     snapshot: Snapshot) -> tuple[Counts, Counts]:
    """`getIncomingAffinityAntiAffinityCounts`, visiting only the namespaces the terms select.

    The incoming pod's namespace selectors are already resolved into `namespaces` (or select all),
    so whether a term applies is decided once per namespace. Pods are counted per node as kept per
    snapshot lineage (`selected_per_node`, every pod: upstream counts terminating ones too): the
    replicas of a workload ask the same of one simulated cluster after another.
    """
    affinity_counts: Counts = {}
    anti_counts: Counts = {}
    if not affinity and not anti_affinity:
        return affinity_counts, anti_counts
    index = snapshot.pods_by_namespace()
    by_name = snapshot.by_name
    terms = (*affinity, *anti_affinity)
    names: Iterable[str]
    if any(t.selects_all_namespaces for t in terms):
        names = index.keys()
    else:
        names = sorted(set().union(*(t.namespaces for t in terms)))
    for ns in names:
        if not index.get(ns):
            continue
        aff = affinity if affinity and all(t.selects_namespace(ns, NO_LABELS) for t in affinity) else ()
        anti = [t for t in anti_affinity if t.selects_namespace(ns, NO_LABELS)]
        if aff:
            # A pod counts where it matches every affinity term.
            key = aff[0].selector_key if len(aff) == 1 else msgspec.json.encode([t.selector_key for t in aff])
            for name, n in selected_per_node(snapshot, ns, key, _all_of([t.selector for t in aff]), True).items():
                labels = by_name[name].node.metadata.labels
                for t in aff:
                    value = labels.get(t.topology_key)
                    if value is not None:
                        pair = (t.topology_key, value)
                        affinity_counts[pair] = affinity_counts.get(pair, 0) + n
        for t in anti:
            for name, n in selected_per_node(snapshot, ns, t.selector_key, t.selector, True).items():
                value = by_name[name].node.metadata.labels.get(t.topology_key)
                if value is not None:
                    pair = (t.topology_key, value)
                    anti_counts[pair] = anti_counts.get(pair, 0) + n
    return affinity_counts, anti_counts


def _all_of(selectors: list[Callable[[Mapping[str, str]], bool]]) -> Callable[[Mapping[str, str]], bool]:
    if len(selectors) == 1:
        return selectors[0]
    return lambda labels: all(sel(labels) for sel in selectors)


def _bump(counts: Counts, node_labels: Mapping[str, str], topology_key: str, delta: int) -> None:
    """`topologyToMatchedTermCount.update`: nodes without the key count nowhere; zeros are dropped
    (the first-pod-of-a-group rule asks whether the map is empty)."""
    value = node_labels.get(topology_key)
    if value is None:
        return
    pair = (topology_key, value)
    n = counts.get(pair, 0) + delta
    if n == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = n


def _matches_all(terms: tuple[AffinityTerm, ...], pod: Pod) -> bool:
    """`podMatchesAllAffinityTerms` for the incoming pod's (namespace-resolved) terms."""
    if not terms:
        return False
    return all(t.matches(pod, NO_LABELS) for t in terms)
