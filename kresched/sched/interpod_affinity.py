"""InterPodAffinity: required pod affinity and anti-affinity (Filter) and preferred inter-pod
affinity (Score), after kube-scheduler's `pkg/scheduler/framework/plugins/interpodaffinity`
(filtering.go, scoring.go, plugin.go) and the `AffinityTerm` of `framework/types.go`
(Kubernetes 1.35/1.36).

Owns: parsing required (anti-)affinity terms (`AffinityTerm`), the per-pod PreFilter state —
three maps from topology pair (key, value) to a count, as upstream's `preFilterState`:
  * `existing_anti_affinity_counts`: existing pods whose required anti-affinity terms match the
    incoming pod, by the pair of the node they run on;
  * `affinity_counts`: existing pods matching *all* the incoming pod's required affinity terms;
  * `anti_affinity_counts`: existing pods matching each of its required anti-affinity terms;
— their upkeep when a preemption simulation adds or removes a pod (`updateWithPod`), and the
per-node Filter, which only looks pairs up: O(terms + node labels) per node. Must not scan pods
in `filter`.

PreFilter is the only cluster-wide pass: existing pods' required anti-affinity terms come from an
index by signature and namespace carried through simulations (`_ExistingAntiAffinityIndex`: each
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

Score (scoring.go). PreScore builds one map, topology key → value → int64 sum, over the whole
snapshot (not only the nodes that passed the filters), from every existing pod on a node that has
at least one label:
  * +weight for each of the incoming pod's preferred affinity terms the existing pod matches, and
    −weight for each preferred anti-affinity term (pods of every node when the incoming pod has
    preferred terms; visited through `Snapshot.pods_by_namespace`, only the namespaces a term
    selects, counting matching pods per node);
  * +hard_pod_affinity_weight (InterPodAffinityArgs.HardPodAffinityWeight, default 1; 0 turns it
    off) for each of the existing pod's *required* affinity terms the incoming pod matches, and
    +weight / −weight for each of its preferred affinity / anti-affinity terms it matches (only pods
    in `NodeInfo.pods_with_affinity` can have terms; their parsed terms are cached on the pod);
each at the pair (term's topology key, the existing pod's node's value), when that node has the
key. `weight × ±1` is an int32 product, as upstream. Score sums, over the map's topology keys the
node carries, the value for the node's label; NormalizeScore maps min..max to 0..100 in float64
then truncates (all equal → 0), and does nothing when the map is empty.
PreScore returns Skip when IgnorePreferredTermsOfExistingPods is set and the pod has no preferred
terms, or when no term at all matched on a node with its topology key (the map is empty) — so a
pod without preferred terms in a cluster without pods with affinity is skipped; terms that match
but cancel out (sum 0) do not make it skip.
Exactly as upstream, and easy to miss: `mergeAffinityTermNamespacesIfNotEmpty` takes the term by
value, so for the incoming pod's preferred terms the namespaces its `namespaceSelector` selects
are added to `namespaces` but the selector itself stays, and is then matched against *empty*
namespace labels: a selector that matches an empty label set (only `NotIn` / `DoesNotExist`
requirements) makes the term apply to pods of every namespace. `_score_incoming_term` keeps that.
How PreScore visits existing pods' terms (same sums as the per-pod walk `_add_existing_terms`, kept
as the reference the property tests compare against): `_ExistingTermsIndex` groups the terms of every
pod in `pods_with_affinity` by signature (the term, the owner's namespace when the term defaults to it,
the owner's values of its match/mismatch label keys — all `build_affinity_term` reads) with, per
(weight or "required", topology key), how many pods put it at each topology value of their node
(nodes without labels or without the key put it nowhere; terminal pods are not in NodeInfos). It is
built once per `Snapshot` lineage (`Snapshot.index`) and carried through `with_node_info` by
subtracting the replaced node's contributions and adding the new one's; PreScore matches each
distinct term once and adds weight × multiplicity (int32 weights, int64 sums, as upstream).
Deliberate differences of the score half: an unparsable selector matches nothing (upstream fails
PreScore with an Error status; the API server rejects such pods), and the int64 sums are not
wrapped on overflow (it would take more than 10^16 matching pods).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import ClassVar, Self

import msgspec

from kresched.model.objects import Pod
from kresched.model.selectors import label_selector_matches
from kresched.model.specs import LabelSelector, LabelSelectorRequirement, PodAffinityTerm, WeightedPodAffinityTerm
from kresched.sched.framework import (
    MAX_NODE_SCORE,
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

__all__ = [
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "AffinityTerm",
    "InterPodAffinity",
    "build_affinity_term",
    "compile_label_selector",
    "merge_label_keys",
    "required_anti_affinity_terms",
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
#: Where an existing pod's parsed scoring terms are cached (as `_ANTI_TERMS_ATTR`).
_SCORE_TERMS_ATTR = "_kresched_interpod_affinity_score_terms"
#: Where an existing pod's parsed required anti-affinity terms are cached (not a msgspec field,
#: so never serialised; a pod is immutable, so the cache never goes stale).
_ANTI_TERMS_ATTR = "_kresched_required_anti_affinity_terms"

TopologyPair = tuple[str, str]
Counts = dict[TopologyPair, int]


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """`framework.AffinityTerm`: one required term with its selectors parsed.

    `namespace_selector` None is upstream's `labels.Nothing()`; an empty `LabelSelector` is
    `labels.Everything()`.
    """

    topology_key: str
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    selector: Callable[[Mapping[str, str]], bool]

    @property
    def selects_all_namespaces(self) -> bool:
        sel = self.namespace_selector
        return sel is not None and not sel.match_labels and not sel.match_expressions

    def selects_namespace(self, namespace: str, namespace_labels: Mapping[str, str]) -> bool:
        if namespace in self.namespaces:
            return True
        sel = self.namespace_selector
        return sel is not None and label_selector_matches(sel, namespace_labels)  # type: ignore[arg-type]

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str]) -> bool:
        """`AffinityTerm.Matches`: the pod's namespace is selected and its labels match."""
        meta = pod.metadata
        return self.selects_namespace(meta.namespace, namespace_labels) and self.selector(meta.labels)


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
        for t in required_anti_affinity_terms(pod):
            if t.matches(self.pod, self.namespace_labels):
                _bump(self.existing_anti_affinity_counts, node_labels, t.topology_key, delta)
                if t.topology_key not in self.existing_keys:
                    self.existing_keys = (*self.existing_keys, t.topology_key)
        if _matches_all(self.affinity_terms, pod):
            for t in self.affinity_terms:
                _bump(self.affinity_counts, node_labels, t.topology_key, delta)
        for t in self.anti_affinity_terms:
            if t.matches(pod, _NO_LABELS):
                _bump(self.anti_affinity_counts, node_labels, t.topology_key, delta)


class InterPodAffinity:
    """The InterPodAffinity plugin: PreFilter, Filter and PreFilterExtensions; PreScore, Score and
    NormalizeScore. The arguments are InterPodAffinityArgs' (defaults as the default profile)."""

    name: ClassVar[str] = NAME

    def __init__(self, hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT,
                 ignore_preferred_terms_of_existing_pods: bool = False) -> None:
        self.hard_pod_affinity_weight = hard_pod_affinity_weight
        self.ignore_preferred_terms_of_existing_pods = ignore_preferred_terms_of_existing_pods

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        affinity, anti_affinity = _required_terms(pod)
        known = snapshot.namespace_labels
        affinity = tuple(_resolve_namespaces(t, known) for t in affinity)
        anti_affinity = tuple(_resolve_namespaces(t, known) for t in anti_affinity)
        ns_labels = known.get(pod.metadata.namespace, _NO_LABELS)

        anti_index: _ExistingAntiAffinityIndex = snapshot.index(_EXISTING_ANTI_INDEX, _ExistingAntiAffinityIndex.build)
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

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is not None:
            state.update_with_pod(pod_to_add, node_info.node.metadata.labels, 1)

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        state: _State | None = cycle.read(_STATE_KEY)
        if state is not None:
            state.update_with_pod(pod_to_remove, node_info.node.metadata.labels, -1)

    # -- Score (scoring.go) ------------------------------------------------------------------------

    def pre_score(self, cycle: CycleState, pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot) -> Status:
        """`PreScore`: the topology score map over the whole snapshot (`nodes` is not used, as
        upstream); Skip as upstream (see the module docstring)."""
        preferred, preferred_anti = _preferred(pod)
        has_constraints = bool(preferred or preferred_anti)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        known = snapshot.namespace_labels
        topology_score: _ScoreMap = {}
        if has_constraints:
            terms = [(_int32(w.weight), _score_incoming_term(pod, w.pod_affinity_term, known)) for w in preferred]
            terms += [(_int32(-w.weight), _score_incoming_term(pod, w.pod_affinity_term, known))
                      for w in preferred_anti]
            _add_incoming_terms(topology_score, terms, snapshot)
        ns_labels = known.get(pod.metadata.namespace, _NO_LABELS)
        index: _ExistingTermsIndex = snapshot.index(_EXISTING_TERMS_INDEX, _ExistingTermsIndex.build)
        index.add_to(topology_score, pod, ns_labels, _int32(self.hard_pod_affinity_weight))
        if not topology_score:
            return Status(Code.SKIP)
        cycle.write(_PRESCORE_KEY, _ScoreState(topology_score))
        return SUCCESS

    def score(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """`Score`: the sum of the map's values at the node's labels (positive for affinity,
        negative for anti-affinity)."""
        state: _ScoreState | None = cycle.read(_PRESCORE_KEY)
        if state is None:  # upstream: an Error status; the framework never scores a skipped plugin
            return 0
        labels = node_info.node.metadata.labels
        total = 0
        for key, values in state.topology_score.items():
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total

    def normalize_score(self, cycle: CycleState, pod: Pod, scores: list[int]) -> None:
        """`NormalizeScore`: min..max onto 0..MAX_NODE_SCORE in float64, truncated to int64; all
        equal → all 0; nothing at all when the map is empty."""
        state: _ScoreState | None = cycle.read(_PRESCORE_KEY)
        if state is None or not state.topology_score or not scores:
            return
        low, high = min(scores), max(scores)
        diff = high - low
        for i, s in enumerate(scores):
            f = 0.0
            if diff > 0:
                f = float(MAX_NODE_SCORE) * (float(s - low) / float(diff))
            scores[i] = int(f)


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
    so whether a term applies is decided once per namespace, and pods are counted per node.
    """
    affinity_counts: Counts = {}
    anti_counts: Counts = {}
    if not affinity and not anti_affinity:
        return affinity_counts, anti_counts
    index = snapshot.pods_by_namespace()
    by_name = snapshot.by_name
    terms = (*affinity, *anti_affinity)
    if any(t.selects_all_namespaces for t in terms):
        namespaces: Iterable[str] = index.keys()
    else:
        namespaces = sorted(set().union(*(t.namespaces for t in terms)))
    for ns in namespaces:
        groups = index.get(ns)
        if not groups:
            continue
        aff = affinity if affinity and all(t.selects_namespace(ns, _NO_LABELS) for t in affinity) else ()
        anti = [t for t in anti_affinity if t.selects_namespace(ns, _NO_LABELS)]
        if not aff and not anti:
            continue
        aff_selectors = [t.selector for t in aff]
        for name, pods in groups.items():
            labels = by_name[name].node.metadata.labels
            if aff:
                pairs = [(t.topology_key, labels[t.topology_key]) for t in aff if t.topology_key in labels]
                if pairs:
                    n = _count_matching(pods, aff_selectors)
                    if n:
                        for pair in pairs:
                            affinity_counts[pair] = affinity_counts.get(pair, 0) + n
            for t in anti:
                value = labels.get(t.topology_key)
                if value is None:
                    continue
                n = _count_matching(pods, (t.selector,))
                if n:
                    pair = (t.topology_key, value)
                    anti_counts[pair] = anti_counts.get(pair, 0) + n
    return affinity_counts, anti_counts


# -- scoring --------------------------------------------------------------------------------------

#: Upstream's `scoreMap`: topology key → topology value → summed weight.
_ScoreMap = dict[str, dict[str, int]]
#: A term with its signed weight (`weight × multiplier`, an int32 as upstream).
_WeightedTerm = tuple[int, AffinityTerm]


class _ScoreState:
    """Upstream's `preScoreState` (only what Score and NormalizeScore read). Never changed after
    PreScore, so `clone()` shares it, as upstream's does."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: _ScoreMap) -> None:
        self.topology_score = topology_score

    def clone(self) -> _ScoreState:
        return self


def _int32(n: int) -> int:
    """Go's int32 wraparound (weights and their products are int32 upstream)."""
    return (n + 2**31) % 2**32 - 2**31


def _add(scores: _ScoreMap, key: str, value: str, amount: int) -> None:
    # Creates the entry even for an amount of 0, as upstream: an entry, whatever its sum, keeps
    # PreScore from returning Skip.
    bucket = scores.get(key)
    if bucket is None:
        bucket = scores[key] = {}
    bucket[value] = bucket.get(value, 0) + amount


def _preferred(pod: Pod) -> tuple[tuple[WeightedPodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
    aff = pod.spec.affinity
    if aff is None:
        return (), ()
    preferred = aff.pod_affinity.preferred_during_scheduling_ignored_during_execution if aff.pod_affinity else ()
    anti = aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution if aff.pod_anti_affinity else ()
    return preferred, anti


def _score_incoming_term(pod: Pod, term: PodAffinityTerm, namespace_labels: Mapping[str, Mapping[str, str]]
                         ) -> AffinityTerm:
    """A preferred term of the incoming pod as upstream's PreScore leaves it: the namespaces a
    non-empty `namespaceSelector` selects now are added to `namespaces`, but (the term being passed
    by value to `mergeAffinityTermNamespacesIfNotEmpty`) the selector is *not* replaced by Nothing;
    the term is then matched with nil namespace labels (`matches(p, _NO_LABELS)`)."""
    t = build_affinity_term(pod, term)
    sel = t.namespace_selector
    if sel is None or t.selects_all_namespaces:
        return t
    selected = {ns for ns, labels in namespace_labels.items()
                if label_selector_matches(sel, labels)}  # type: ignore[arg-type]
    return AffinityTerm(t.topology_key, t.namespaces | selected, sel, t.selector)


def _add_incoming_terms(scores: _ScoreMap, terms: Sequence[_WeightedTerm], snapshot: Snapshot) -> None:
    """The incoming pod's preferred terms against every existing pod (`processExistingPod`'s first
    two `processTerms`), namespace by namespace, matching pods counted per node."""
    by_name = snapshot.by_name
    for ns, groups in snapshot.pods_by_namespace().items():
        here = [(w, t) for w, t in terms if t.selects_namespace(ns, _NO_LABELS)]
        if not here:
            continue
        for name, pods in groups.items():
            labels = by_name[name].node.metadata.labels
            if not labels:
                continue
            for w, t in here:
                value = labels.get(t.topology_key)
                if value is None:
                    continue
                n = _count_matching(pods, (t.selector,))
                if n:
                    _add(scores, t.topology_key, value, n * w)


def _add_existing_terms(scores: _ScoreMap, pod: Pod, ns_labels: Mapping[str, str], infos: Iterable[NodeInfo],
                        hard_weight: int) -> None:
    """Existing pods' required affinity (× hard_weight, when > 0) and preferred affinity /
    anti-affinity terms against the incoming pod (the rest of `processExistingPod`)."""
    for info in infos:
        if not info.pods_with_affinity:
            continue
        labels = info.node.metadata.labels
        if not labels:
            continue
        for existing in info.pods_with_affinity:
            required, weighted = _existing_score_terms(existing)
            if hard_weight > 0:
                for t in required:
                    value = labels.get(t.topology_key)
                    if value is not None and t.matches(pod, ns_labels):
                        _add(scores, t.topology_key, value, hard_weight)
            for w, t in weighted:
                value = labels.get(t.topology_key)
                if value is not None and t.matches(pod, ns_labels):
                    _add(scores, t.topology_key, value, w)


#: `Snapshot.index` key of `_ExistingTermsIndex`.
_EXISTING_TERMS_INDEX = NAME + "/existing-score-terms"
#: Where an existing pod's scoring terms with their signatures are cached (see `_signed_terms`).
_SIGNED_TERMS_ATTR = "_kresched_interpod_affinity_signed_terms"
#: What decides whether a term matches a pod (see `_interned`): equal signatures, equal terms.
_Signature = bytes
#: (signature, the term, weight — None for a required term, weighted by hard_pod_affinity_weight).
_SignedTerm = tuple[_Signature, AffinityTerm, "int | None"]
#: (weight or None, topology key) → topology value → how many existing pods put that term there.
_Entries = dict[tuple["int | None", str], dict[str, int]]


class _ExistingTermsIndex:
    """The existing pods' scoring terms of a whole snapshot, grouped by signature: for each
    distinct term, a representative `AffinityTerm` and, per (weight, topology key), the multiplicity
    of each topology value (one per pod on a node carrying the key). PreScore evaluates each
    distinct term once against the incoming pod and adds weight × multiplicity — the same sums as
    visiting every pod (`_add_existing_terms`, kept as the reference).

    Built once per snapshot (`Snapshot.index`) and carried over by `with_node_info`, which
    subtracts the replaced node's contributions and adds the new one's (copy on write: the old
    snapshot's index stays valid).

    `by_namespace` lists the signatures of the terms that can select a pod of each namespace (key
    None: terms with a namespace selector, which may select any), so that a pod is matched only
    against those; it is shared down the chain until a term appears or goes."""

    __slots__ = ("by_namespace", "groups")

    def __init__(self, groups: dict[_Signature, tuple[AffinityTerm, _Entries]],
                 by_namespace: dict[str | None, list[_Signature]] | None = None) -> None:
        self.groups = groups
        if by_namespace is None:
            by_namespace = {}
            for sig, (term, _) in groups.items():
                for ns in (None,) if term.namespace_selector is not None else term.namespaces:
                    by_namespace.setdefault(ns, []).append(sig)
        self.by_namespace = by_namespace

    def candidates(self, namespace: str) -> Iterable[tuple[AffinityTerm, _Entries]]:
        """The groups whose term may select a pod of `namespace`, in signature order of insertion."""
        groups = self.groups
        for key in (namespace, None):
            for sig in self.by_namespace.get(key, ()):
                yield groups[sig]

    @staticmethod
    def contributions(info: NodeInfo) -> Iterable[tuple[_Signature, AffinityTerm, int | None, str, str]]:
        return _node_contributions(info)

    @classmethod
    def build(cls, snapshot: Snapshot) -> Self:
        groups: dict[_Signature, tuple[AffinityTerm, _Entries]] = {}
        for info in snapshot.node_infos:
            for sig, term, w, key, value in cls.contributions(info):
                group = groups.get(sig)
                if group is None:
                    group = groups[sig] = (term, {})
                values = group[1].get((w, key))
                if values is None:
                    values = group[1][(w, key)] = {}
                values[value] = values.get(value, 0) + 1
        return cls(groups)

    def replaced(self, old: NodeInfo, new: NodeInfo) -> Self:
        deltas: dict[tuple[_Signature, int | None, str, str], int] = {}
        terms: dict[_Signature, AffinityTerm] = {}
        for sign, info in ((-1, old), (1, new)):
            for sig, term, w, key, value in self.contributions(info):
                k = (sig, w, key, value)
                deltas[k] = deltas.get(k, 0) + sign
                if sign > 0:
                    terms[sig] = term
        changed = {k: d for k, d in deltas.items() if d}
        if not changed:
            return self
        groups = dict(self.groups)
        copied_groups: set[_Signature] = set()
        copied_values: set[tuple[_Signature, int | None, str]] = set()
        reshaped = False  # a term appeared or went: by_namespace is rebuilt
        for (sig, w, key, value), d in changed.items():
            group = groups.get(sig)
            if group is None:
                group = groups[sig] = (terms[sig], {})
                copied_groups.add(sig)
                reshaped = True
            elif sig not in copied_groups:
                group = groups[sig] = (group[0], dict(group[1]))
                copied_groups.add(sig)
            entries = group[1]
            values = entries.get((w, key))
            if values is None:
                values = entries[(w, key)] = {}
                copied_values.add((sig, w, key))
            elif (sig, w, key) not in copied_values:
                values = entries[(w, key)] = dict(values)
                copied_values.add((sig, w, key))
            n = values.get(value, 0) + d
            if n:
                values[value] = n
            else:
                del values[value]
                if not values:
                    del entries[(w, key)]
                    if not entries:
                        del groups[sig]
                        reshaped = True
        return type(self)(groups, None if reshaped else self.by_namespace)

    def add_to(self, scores: _ScoreMap, pod: Pod, ns_labels: Mapping[str, str], hard_weight: int) -> None:
        """`_add_existing_terms` over the whole snapshot, one match per distinct term."""
        for term, entries in self.candidates(pod.metadata.namespace):
            if not term.matches(pod, ns_labels):
                continue
            for (w, key), values in entries.items():
                if w is None:
                    if hard_weight <= 0:
                        continue
                    w = hard_weight
                bucket = scores.get(key)
                if bucket is None:
                    bucket = scores[key] = {}
                for value, n in values.items():
                    bucket[value] = bucket.get(value, 0) + w * n


#: `Snapshot.index` key of `_ExistingAntiAffinityIndex`.
_EXISTING_ANTI_INDEX = NAME + "/existing-required-anti-affinity"


class _ExistingAntiAffinityIndex(_ExistingTermsIndex):
    """The existing pods' required anti-affinity terms, grouped by signature like
    `_ExistingTermsIndex` (weight always None): PreFilter matches each distinct term once against
    the incoming pod instead of every term of every pod (`_existing_anti_affinity_counts`, kept as
    the reference)."""

    __slots__ = ()

    @staticmethod
    def contributions(info: NodeInfo) -> Iterable[tuple[_Signature, AffinityTerm, int | None, str, str]]:
        labels = info.node.metadata.labels
        if not labels:
            return
        for existing in info.pods_with_required_anti_affinity:
            for sig, term in _signed_anti_terms(existing):
                value = labels.get(term.topology_key)
                if value is not None:
                    yield sig, term, None, term.topology_key, value

    def counts(self, pod: Pod, ns_labels: Mapping[str, str]) -> Counts:
        """`getExistingAntiAffinityCounts`: per (topology key, value), the existing pods there
        whose required anti-affinity terms match `pod`."""
        counts: Counts = {}
        for term, entries in self.candidates(pod.metadata.namespace):
            if not term.matches(pod, ns_labels):
                continue
            for (_, key), values in entries.items():
                for value, n in values.items():
                    pair = (key, value)
                    counts[pair] = counts.get(pair, 0) + n
        return counts


_SIGNED_ANTI_TERMS_ATTR = "_kresched_interpod_affinity_signed_anti_terms"


def _signed_anti_terms(pod: Pod) -> tuple[tuple[_Signature, AffinityTerm], ...]:
    """The pod's required anti-affinity terms with their signatures, computed once per pod object."""
    cached = pod.__dict__.get(_SIGNED_ANTI_TERMS_ATTR)
    if cached is not None:
        return cached
    aff = pod.spec.affinity
    result: tuple[tuple[_Signature, AffinityTerm], ...] = ()
    if aff is not None and aff.pod_anti_affinity is not None:
        terms = aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution
        result = tuple(_interned(pod, t) for t in terms)
    pod.__dict__[_SIGNED_ANTI_TERMS_ATTR] = result
    return result


def _node_contributions(info: NodeInfo) -> Iterable[tuple[_Signature, AffinityTerm, int | None, str, str]]:
    """Each (term, topology value) an existing pod on this node scores at: one per term whose
    topology key the node carries (a node without labels carries none)."""
    labels = info.node.metadata.labels
    if not labels:
        return
    for existing in info.pods_with_affinity:
        for sig, term, w in _signed_terms(existing):
            value = labels.get(term.topology_key)
            if value is not None:
                yield sig, term, w, term.topology_key, value


def _signed_terms(pod: Pod) -> tuple[_SignedTerm, ...]:
    """`_existing_score_terms` of the pod with each term's signature, computed once per pod object;
    equal terms of different pods (replicas) share one `AffinityTerm`."""
    cached = pod.__dict__.get(_SIGNED_TERMS_ATTR)
    if cached is not None:
        return cached
    out: list[_SignedTerm] = []
    aff = pod.spec.affinity
    if aff is not None:
        if aff.pod_affinity is not None:
            out += [(*_interned(pod, t), None)
                    for t in aff.pod_affinity.required_during_scheduling_ignored_during_execution]
        preferred, anti = _preferred(pod)
        out += [(*_interned(pod, w.pod_affinity_term), _int32(w.weight)) for w in preferred]
        out += [(*_interned(pod, w.pod_affinity_term), _int32(-w.weight)) for w in anti]
    result = tuple(out)
    pod.__dict__[_SIGNED_TERMS_ATTR] = result
    return result


#: Interned existing-pod terms by signature (bounded: cleared when it grows past the limit).
_INTERNED: dict[bytes, AffinityTerm] = {}
_INTERNED_LIMIT = 100_000


def _interned(pod: Pod, term: PodAffinityTerm) -> tuple[_Signature, AffinityTerm]:
    """The term's signature — everything `build_affinity_term(pod, term)` reads: the term, the
    pod's namespace when the term defaults to it, and the pod's values of the match/mismatch label
    keys — and the built term, shared by every pod with that signature."""
    default_ns = pod.metadata.namespace if not term.namespaces and term.namespace_selector is None else None
    labels = pod.metadata.labels
    sig = msgspec.json.encode((default_ns, term, [labels.get(k) for k in term.match_label_keys],
                               [labels.get(k) for k in term.mismatch_label_keys]))
    built = _INTERNED.get(sig)
    if built is None:
        if len(_INTERNED) >= _INTERNED_LIMIT:
            _INTERNED.clear()
        built = _INTERNED[sig] = build_affinity_term(pod, term)
    return sig, built


def _existing_score_terms(pod: Pod) -> tuple[tuple[AffinityTerm, ...], tuple[_WeightedTerm, ...]]:
    """An existing pod's required affinity terms and its preferred affinity (+weight) and
    anti-affinity (−weight) terms, parsed once per pod object."""
    cached = pod.__dict__.get(_SCORE_TERMS_ATTR)
    if cached is not None:
        return cached
    required: tuple[AffinityTerm, ...] = ()
    weighted: list[_WeightedTerm] = []
    aff = pod.spec.affinity
    if aff is not None:
        if aff.pod_affinity is not None:
            required = tuple(build_affinity_term(pod, t)
                             for t in aff.pod_affinity.required_during_scheduling_ignored_during_execution)
        preferred, anti = _preferred(pod)
        weighted += [(_int32(w.weight), build_affinity_term(pod, w.pod_affinity_term)) for w in preferred]
        weighted += [(_int32(-w.weight), build_affinity_term(pod, w.pod_affinity_term)) for w in anti]
    result = (required, tuple(weighted))
    pod.__dict__[_SCORE_TERMS_ATTR] = result
    return result


# -- helpers ---------------------------------------------------------------------------------------

_NO_LABELS: Mapping[str, str] = {}


def _count_matching(pods: Iterable[Pod], selectors: Sequence[Callable[[Mapping[str, str]], bool]]) -> int:
    if len(selectors) == 1:
        sel = selectors[0]
        return sum(1 for p in pods if sel(p.metadata.labels))
    return sum(1 for p in pods if all(sel(p.metadata.labels) for sel in selectors))


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
    return all(t.matches(pod, _NO_LABELS) for t in terms)


def _required_terms(pod: Pod) -> tuple[tuple[AffinityTerm, ...], tuple[AffinityTerm, ...]]:
    aff = pod.spec.affinity
    if aff is None:
        return (), ()
    affinity: tuple[AffinityTerm, ...] = ()
    if aff.pod_affinity is not None:
        affinity = tuple(build_affinity_term(pod, t)
                         for t in aff.pod_affinity.required_during_scheduling_ignored_during_execution)
    return affinity, required_anti_affinity_terms(pod)


def required_anti_affinity_terms(pod: Pod) -> tuple[AffinityTerm, ...]:
    """The pod's parsed required anti-affinity terms, computed once per pod object."""
    cached = pod.__dict__.get(_ANTI_TERMS_ATTR)
    if cached is not None:
        return cached
    terms: tuple[AffinityTerm, ...] = ()
    aff = pod.spec.affinity
    if aff is not None and aff.pod_anti_affinity is not None:
        terms = tuple(build_affinity_term(pod, t)
                      for t in aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution)
    pod.__dict__[_ANTI_TERMS_ATTR] = terms
    return terms


def build_affinity_term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    """`newAffinityTerm` for a term of `pod`, with its label keys merged into the selector."""
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.metadata.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    selector = merge_label_keys(term.label_selector, pod.metadata.labels,
                                term.match_label_keys, term.mismatch_label_keys)
    return AffinityTerm(term.topology_key, namespaces, term.namespace_selector, compile_label_selector(selector))


def _resolve_namespaces(term: AffinityTerm, namespace_labels: Mapping[str, Mapping[str, str]]) -> AffinityTerm:
    """`mergeAffinityTermNamespacesIfNotEmpty`: a non-empty namespace selector becomes the names of
    the namespaces it selects now; an empty one (every namespace) stays."""
    sel = term.namespace_selector
    if sel is None or term.selects_all_namespaces:
        return term
    selected = {ns for ns, labels in namespace_labels.items()
                if label_selector_matches(sel, labels)}  # type: ignore[arg-type]
    return AffinityTerm(term.topology_key, term.namespaces | selected, None, term.selector)


def merge_label_keys(selector: LabelSelector | None, pod_labels: Mapping[str, str],
                     match_label_keys: Iterable[str], mismatch_label_keys: Iterable[str] = ()
                     ) -> LabelSelector | None:
    """kube-apiserver's `applyMatchLabelKeysAndMismatchLabelKeys`: `key In (v)` for each match
    key and `key NotIn (v)` for each mismatch key the pod has (v its value); a nil selector stays
    nil (it matches nothing anyway). Requirements already present are not repeated."""
    if selector is None:
        return None
    extra = [LabelSelectorRequirement(key=k, operator="In", values=(pod_labels[k],))
             for k in match_label_keys if k in pod_labels]
    extra += [LabelSelectorRequirement(key=k, operator="NotIn", values=(pod_labels[k],))
              for k in mismatch_label_keys if k in pod_labels]
    extra = [r for r in extra if r not in selector.match_expressions]
    if not extra:
        return selector
    return LabelSelector(match_labels=selector.match_labels,
                         match_expressions=(*selector.match_expressions, *extra))


def _match_nothing(labels: Mapping[str, str]) -> bool:
    return False


def _match_everything(labels: Mapping[str, str]) -> bool:
    return True


def compile_label_selector(selector: LabelSelector | None) -> Callable[[Mapping[str, str]], bool]:
    """A fast predicate equivalent to `label_selector_matches(selector, labels)` (nil matches
    nothing, empty matches everything); the common `matchLabels`-only selectors skip the generic
    walk, which matters when PreFilter tests every pod of a namespace."""
    if selector is None:
        return _match_nothing
    if selector.match_expressions:
        return partial(label_selector_matches, selector)
    items = tuple(selector.match_labels.items())
    if not items:
        return _match_everything
    if len(items) == 1:
        ((key, value),) = items
        return lambda labels: labels.get(key) == value
    return lambda labels: all(labels.get(k) == v for k, v in items)
