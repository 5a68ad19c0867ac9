"""InterPodAffinity's Score half (PreScore, Score, NormalizeScore), after kube-scheduler's
`interpodaffinity/scoring.go` (Kubernetes 1.35/1.36).

Owns the PreScore state (`ScoreState`: upstream's `scoreMap`; `pre_score_state`), the score of a
node (`score_node`) and the normalisation (`normalize_scores`); the plugin
(`kresched.sched.interpod_affinity`) keeps the state in the cycle. The existing pods' terms come
from `kresched.sched.interpod_affinity_existing`'s index (`_add_existing_terms`, the per-pod walk,
is kept here as the reference it is tested against). Never filters.

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
Deliberate differences of the score half: an unparsable selector matches nothing (upstream fails
PreScore with an Error status; the API server rejects such pods), and the int64 sums are not
wrapped on overflow (it would take more than 10^16 matching pods).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat
from operator import add

from kresched.model.objects import Pod
from kresched.model.selectors import label_selector_matches
from kresched.model.specs import PodAffinityTerm
from kresched.sched.framework import MAX_NODE_SCORE, NodeLabels, Snapshot
from kresched.sched.interpod_affinity_existing import (
    EXISTING_TERMS_INDEX,
    ExistingTermsIndex,
    ScoreMap,
    existing_score_terms,
)
from kresched.sched.interpod_affinity_terms import (
    NO_LABELS,
    AffinityTerm,
    WeightedTerm,
    build_affinity_term,
    int32,
    preferred_terms,
)
from kresched.sched.match_counts import selected_per_node
from kresched.sched.node_info import NodeInfo

__all__ = ["ScoreState", "normalize_scores", "pre_score_state", "score_node", "score_nodes", "score_prescored"]


class ScoreState:
    """Upstream's `preScoreState` (only what Score and NormalizeScore read). Never changed after
    PreScore, so `clone()` shares it, as upstream's does."""

    __slots__ = ("topology_score", "view")

    def __init__(self, topology_score: ScoreMap, view: NodeLabels | None = None) -> None:
        self.topology_score = topology_score
        #: The nodes PreScore was given, their labels read from the snapshot's columns (`score_prescored`).
        self.view = view

    def clone(self) -> ScoreState:
        return self


def _add(scores: ScoreMap, key: str, value: str, amount: int) -> None:
    # Creates the entry even for an amount of 0, as upstream: an entry, whatever its sum, keeps
    # PreScore from returning Skip.
    bucket = scores.get(key)
    if bucket is None:
        bucket = scores[key] = {}
    bucket[value] = bucket.get(value, 0) + amount


def _score_incoming_term(pod: Pod, term: PodAffinityTerm, namespace_labels: Mapping[str, Mapping[str, str]]
                         ) -> AffinityTerm:
    """A preferred term of the incoming pod as upstream's PreScore leaves it: the namespaces a
    non-empty `namespaceSelector` selects now are added to `namespaces`, but (the term being passed
    by value to `mergeAffinityTermNamespacesIfNotEmpty`) the selector is *not* replaced by Nothing;
    the term is then matched with nil namespace labels (`matches(p, NO_LABELS)`)."""
    t = build_affinity_term(pod, term)
    sel = t.namespace_selector
    if sel is None or t.selects_all_namespaces:
        return t
    selected = {ns for ns, labels in namespace_labels.items()
                if label_selector_matches(sel, labels)}  # type: ignore[arg-type]
    return AffinityTerm(t.topology_key, t.namespaces | selected, sel, t.selector, t.selector_key)


def _add_incoming_terms(scores: ScoreMap, terms: Sequence[WeightedTerm], snapshot: Snapshot) -> None:
    """The incoming pod's preferred terms against every existing pod (`processExistingPod`'s first
    two `processTerms`), namespace by namespace, matching pods counted per node as kept per snapshot
    lineage (`selected_per_node`, every pod: upstream counts terminating ones too)."""
    by_namespace = snapshot.pods_by_namespace()
    names: Iterable[str]
    # Matched with nil namespace labels, a term's namespace selector selects every namespace or
    # none: where none does, only the namespaces the terms name are looked at, not the cluster's
    # thousands (the sums are of integers: the order they are added in does not matter).
    if any(t.selects_namespace("", NO_LABELS) for _, t in terms):  # ("": no namespace's name)
        names = by_namespace.keys()
    else:
        names = [ns for ns in sorted(frozenset().union(*(t.namespaces for _, t in terms))) if by_namespace.get(ns)]
    for ns in names:
        for w, t in terms:
            if not t.selects_namespace(ns, NO_LABELS):
                continue
            value_at = snapshot.label_column(t.topology_key).get  # (a node's value is one lookup)
            for name, n in selected_per_node(snapshot, ns, t.selector_key, t.selector, True).items():
                value = value_at(name)
                if value is not None:
                    _add(scores, t.topology_key, value, n * w)


def _add_existing_terms(scores: ScoreMap, pod: Pod, ns_labels: Mapping[str, str], infos: Iterable[NodeInfo],
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
            required, weighted = existing_score_terms(existing)
            if hard_weight > 0:
                for t in required:
                    value = labels.get(t.topology_key)
                    if value is not None and t.matches(pod, ns_labels):
                        _add(scores, t.topology_key, value, hard_weight)
            for w, t in weighted:
                value = labels.get(t.topology_key)
                if value is not None and t.matches(pod, ns_labels):
                    _add(scores, t.topology_key, value, w)


def pre_score_state(pod: Pod, snapshot: Snapshot, hard_pod_affinity_weight: int,
                    ignore_preferred_terms_of_existing_pods: bool,
                    view: NodeLabels | None = None) -> ScoreState | None:
    """`PreScore`: the topology score map over the whole snapshot; None (Skip) as upstream (see the
    module docstring). `view`: the labels of the nodes to score, kept for Score."""
    preferred, preferred_anti = preferred_terms(pod)
    has_constraints = bool(preferred or preferred_anti)
    if ignore_preferred_terms_of_existing_pods and not has_constraints:
        return None
    known = snapshot.namespace_labels
    topology_score: ScoreMap = {}
    if has_constraints:
        terms = [(int32(w.weight), _score_incoming_term(pod, w.pod_affinity_term, known)) for w in preferred]
        terms += [(int32(-w.weight), _score_incoming_term(pod, w.pod_affinity_term, known))
                  for w in preferred_anti]
        _add_incoming_terms(topology_score, terms, snapshot)
    ns_labels = known.get(pod.metadata.namespace, NO_LABELS)
    index: ExistingTermsIndex = snapshot.index(EXISTING_TERMS_INDEX, ExistingTermsIndex.build)
    index.add_to(topology_score, pod, ns_labels, int32(hard_pod_affinity_weight))
    if not topology_score:
        return None
    return ScoreState(topology_score, view)


def score_node(state: ScoreState, labels: Mapping[str, str]) -> int:
    """`Score`: the sum of the map's values at the node's labels (positive for affinity,
    negative for anti-affinity)."""
    return score_nodes(state, (labels,))[0]


def score_nodes(state: ScoreState, labels: Sequence[Mapping[str, str]]) -> list[int]:
    """`score_node` of each of the nodes with these `labels`: a topology key at a time, for all of
    them (integer sums: the order they are added in does not matter)."""
    return _summed(state, lambda key: [lab.get(key) for lab in labels], len(labels))


def score_prescored(state: ScoreState, nodes: Sequence[NodeInfo]) -> list[int]:
    """`score_nodes` of `nodes`, their labels read as PreScore's `view` holds them when they are its nodes."""
    view = state.view
    if view is None or view.nodes is not nodes:
        return score_nodes(state, [info.node.metadata.labels for info in nodes])
    return _summed(state, view.values, len(nodes))


def _summed(state: ScoreState, values: Callable[[str], list[str | None]], n: int) -> list[int]:
    """Per node, the sum of the map's values at its value of each key (`values`: a key's column)."""
    totals = [0] * n
    for key, scores in state.topology_score.items():
        # (a node without the key has None, never a value of the map)
        totals = list(map(add, totals, map(scores.get, values(key), repeat(0))))
    return totals


def normalize_scores(state: ScoreState, scores: list[int]) -> None:
    """`NormalizeScore`: min..max onto 0..MAX_NODE_SCORE in float64, truncated to int64; all
    equal → all 0; nothing at all when the map is empty."""
    if not state.topology_score or not scores:
        return
    low, high = min(scores), max(scores)
    diff = high - low
    for i, s in enumerate(scores):
        f = 0.0
        if diff > 0:
            f = float(MAX_NODE_SCORE) * (float(s - low) / float(diff))
        scores[i] = int(f)
