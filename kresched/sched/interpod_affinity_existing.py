"""InterPodAffinity's view of the existing pods' terms: parsed once per pod, indexed per snapshot.

Owns what PreFilter and PreScore read of the terms of the pods already running:
`ExistingAntiAffinityIndex` (their required anti-affinity terms, for PreFilter's
`getExistingAntiAffinityCounts`), `ExistingTermsIndex` (their required and preferred affinity and
anti-affinity terms, for PreScore), `existing_score_terms` (one pod's scoring terms, parsed once)
and the interning of equal terms across pods. Matches terms against the incoming pod only when
asked (`counts`, `add_to`); decides nothing about a node, and never changes a snapshot (an index
is carried to a new snapshot copy on write).

How PreScore visits existing pods' terms (same sums as the per-pod walk `_add_existing_terms`, kept
as the reference the property tests compare against): `ExistingTermsIndex` groups the terms of every
pod in `pods_with_affinity` by signature (the term, the owner's namespace when the term defaults to it,
the owner's values of its match/mismatch label keys — all `build_affinity_term` reads) with, per
(weight or "required", topology key), how many pods put it at each topology value of their node
(nodes without labels or without the key put it nowhere; terminal pods are not in NodeInfos). It is
built once per `Snapshot` lineage (`Snapshot.index`) and carried through `with_node_info` by
subtracting the replaced node's contributions and adding the new one's; PreScore matches each
distinct term once and adds weight × multiplicity (int32 weights, int64 sums, as upstream).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import is_
from typing import Self

import msgspec

from kresched.model.objects import Pod
from kresched.model.specs import PodAffinityTerm
from kresched.sched.framework import Snapshot
from kresched.sched.interpod_affinity_terms import (
    AffinityTerm,
    Counts,
    WeightedTerm,
    build_affinity_term,
    int32,
    preferred_terms,
)
from kresched.sched.layered import Layered
from kresched.sched.node_info import NodeInfo

__all__ = ["EXISTING_ANTI_INDEX", "EXISTING_TERMS_INDEX", "ExistingAntiAffinityIndex", "ExistingTermsIndex",
           "ScoreMap", "existing_score_terms"]

#: Upstream's `scoreMap`: topology key → topology value → summed weight.
ScoreMap = dict[str, dict[str, int]]
#: Where an existing pod's parsed scoring terms are cached (as `required_anti_affinity_terms` does).
_SCORE_TERMS_ATTR = "_kresched_interpod_affinity_score_terms"

#: `Snapshot.index` key of `ExistingTermsIndex`.
EXISTING_TERMS_INDEX = "InterPodAffinity/existing-score-terms"
#: Where an existing pod's scoring terms with their signatures are cached (see `_signed_terms`).
_SIGNED_TERMS_ATTR = "_kresched_interpod_affinity_signed_terms"
#: What decides whether a term matches a pod (see `_interned`): equal signatures, equal terms.
_Signature = bytes
#: (signature, the term, weight — None for a required term, weighted by hard_pod_affinity_weight).
_SignedTerm = tuple[_Signature, AffinityTerm, "int | None"]
#: (weight or None, topology key) → topology value → how many existing pods put that term there.
_Entries = dict[tuple["int | None", str], dict[str, int]]


def _term_namespaces(term: AffinityTerm) -> Iterable[str | None]:
    """The keys of `ExistingTermsIndex.by_namespace` a term is listed under (None: any namespace)."""
    return (None,) if term.namespace_selector is not None else term.namespaces


class ExistingTermsIndex:
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

    def __init__(self, groups: Layered[_Signature, tuple[AffinityTerm, _Entries]],
                 by_namespace: dict[str | None, list[_Signature]] | None = None) -> None:
        #: A `Layered` mapping: a node replaced changes a few of the thousands of groups a cluster
        #: has, and copying them all was most of what carrying the index cost.
        self.groups = groups
        if by_namespace is None:
            by_namespace = {}
            for sig, (term, _) in groups.items():
                for ns in _term_namespaces(term):
                    by_namespace.setdefault(ns, []).append(sig)
        self.by_namespace = by_namespace

    def candidates(self, namespace: str) -> Iterable[tuple[AffinityTerm, _Entries]]:
        """The groups whose term may select a pod of `namespace`, in signature order of insertion."""
        groups = self.groups
        for key in (namespace, None):
            for sig in self.by_namespace.get(key, ()):
                yield groups[sig]

    @staticmethod
    def pods_of(info: NodeInfo) -> list[Pod]:
        """The node's pods whose terms the index holds."""
        return info.pods_with_affinity

    @staticmethod
    def contributions(info: NodeInfo, pods: Iterable[Pod]) -> Iterable[tuple[_Signature, AffinityTerm, int | None,
                                                                              str, str]]:
        """What `pods` (on `info`'s node) add to the index."""
        return _node_contributions(info, pods)

    @classmethod
    def build(cls, snapshot: Snapshot) -> Self:
        groups: dict[_Signature, tuple[AffinityTerm, _Entries]] = {}
        for info in snapshot.node_infos:
            for sig, term, w, key, value in cls.contributions(info, cls.pods_of(info)):
                group = groups.get(sig)
                if group is None:
                    group = groups[sig] = (term, {})
                values = group[1].get((w, key))
                if values is None:
                    values = group[1][(w, key)] = {}
                values[value] = values.get(value, 0) + 1
        return cls(Layered(groups))

    def replaced(self, old: NodeInfo, new: NodeInfo) -> Self:
        deltas: dict[tuple[_Signature, int | None, str, str], int] = {}
        terms: dict[_Signature, AffinityTerm] = {}
        before, after = self.pods_of(old), self.pods_of(new)
        if old.node is new.node and len(after) >= len(before) and all(map(is_, after, before)):
            sides = ((1, new, after[len(before):]),)  # pods placed there (appended), the common change
        else:
            sides = ((-1, old, before), (1, new, after))
        for sign, info, pods in sides:
            for sig, term, w, key, value in self.contributions(info, pods):
                k = (sig, w, key, value)
                deltas[k] = deltas.get(k, 0) + sign
                if sign > 0:
                    terms[sig] = term
        changed = {k: d for k, d in deltas.items() if d}
        if not changed:
            return self
        groups = self.groups.draft()
        copied_groups: set[_Signature] = set()
        copied_values: set[tuple[_Signature, int | None, str]] = set()
        appeared: list[_Signature] = []  # terms new to the index, in the order added to `groups`
        gone: list[tuple[_Signature, AffinityTerm]] = []  # (a term appears only with what new adds)
        for (sig, w, key, value), d in changed.items():
            group = groups.get(sig)
            if group is None:
                group = groups[sig] = (terms[sig], {})
                copied_groups.add(sig)
                appeared.append(sig)
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
                        gone.append((sig, group[0]))
        by_namespace = self.by_namespace
        if appeared or gone:  # as `__init__` builds it from `groups`, in their order
            by_namespace = dict(by_namespace)
            for sig, term in gone:
                for ns in _term_namespaces(term):
                    left = [s for s in by_namespace[ns] if s != sig]
                    if left:
                        by_namespace[ns] = left
                    else:
                        del by_namespace[ns]
            for sig in appeared:
                for ns in _term_namespaces(groups[sig][0]):
                    by_namespace[ns] = [*by_namespace.get(ns, ()), sig]
        return type(self)(groups.done(), by_namespace)

    def add_to(self, scores: ScoreMap, pod: Pod, ns_labels: Mapping[str, str], hard_weight: int) -> None:
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


#: `Snapshot.index` key of `ExistingAntiAffinityIndex`.
EXISTING_ANTI_INDEX = "InterPodAffinity/existing-required-anti-affinity"


class ExistingAntiAffinityIndex(ExistingTermsIndex):
    """The existing pods' required anti-affinity terms, grouped by signature like
    `ExistingTermsIndex` (weight always None): PreFilter matches each distinct term once against
    the incoming pod instead of every term of every pod (`_existing_anti_affinity_counts`, kept as
    the reference)."""

    __slots__ = ()

    @staticmethod
    def pods_of(info: NodeInfo) -> list[Pod]:
        return info.pods_with_required_anti_affinity

    @staticmethod
    def contributions(info: NodeInfo, pods: Iterable[Pod]) -> Iterable[tuple[_Signature, AffinityTerm, int | None,
                                                                              str, str]]:
        labels = info.node.metadata.labels
        if not labels:
            return
        for existing in pods:
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


def _node_contributions(info: NodeInfo, pods: Iterable[Pod]) -> Iterable[tuple[_Signature, AffinityTerm, int | None,
                                                                               str, str]]:
    """Each (term, topology value) an existing pod of `pods` on this node scores at: one per term
    whose topology key the node carries (a node without labels carries none)."""
    labels = info.node.metadata.labels
    if not labels:
        return
    for existing in pods:
        for sig, term, w in _signed_terms(existing):
            value = labels.get(term.topology_key)
            if value is not None:
                yield sig, term, w, term.topology_key, value


def _signed_terms(pod: Pod) -> tuple[_SignedTerm, ...]:
    """`existing_score_terms` of the pod with each term's signature, computed once per pod object;
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
        preferred, anti = preferred_terms(pod)
        out += [(*_interned(pod, w.pod_affinity_term), int32(w.weight)) for w in preferred]
        out += [(*_interned(pod, w.pod_affinity_term), int32(-w.weight)) for w in anti]
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


def existing_score_terms(pod: Pod) -> tuple[tuple[AffinityTerm, ...], tuple[WeightedTerm, ...]]:
    """An existing pod's required affinity terms and its preferred affinity (+weight) and
    anti-affinity (−weight) terms, parsed once per pod object."""
    cached = pod.__dict__.get(_SCORE_TERMS_ATTR)
    if cached is not None:
        return cached
    required: tuple[AffinityTerm, ...] = ()
    weighted: list[WeightedTerm] = []
    aff = pod.spec.affinity
    if aff is not None:
        if aff.pod_affinity is not None:
            required = tuple(build_affinity_term(pod, t)
                             for t in aff.pod_affinity.required_during_scheduling_ignored_during_execution)
        preferred, anti = preferred_terms(pod)
        weighted += [(int32(w.weight), build_affinity_term(pod, w.pod_affinity_term)) for w in preferred]
        weighted += [(int32(-w.weight), build_affinity_term(pod, w.pod_affinity_term)) for w in anti]
    result = (required, tuple(weighted))
    pod.__dict__[_SCORE_TERMS_ATTR] = result
    return result
