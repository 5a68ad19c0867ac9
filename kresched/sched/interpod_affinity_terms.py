"""InterPodAffinity's terms: a pod's (anti-)affinity terms parsed once, after the `AffinityTerm` of
kube-scheduler's `framework/types.go` and `interpodaffinity` (Kubernetes 1.35/1.36).

Owns `AffinityTerm` (one term with its selectors parsed, and whether it matches a pod), building
it from a pod's term (`build_affinity_term`, with the label keys merged in as kube-apiserver merges
them: `merge_label_keys`), a pod's required terms (`required_terms`; the anti-affinity ones cached
on the pod: `required_anti_affinity_terms`) and preferred ones (`preferred_terms`), resolving a
namespace selector against the snapshot's namespaces (`resolve_namespaces`), and
`compile_label_selector` (a fast predicate for a label selector, also PodTopologySpread's). Counts
no pods and decides nothing about a node: the filter is `kresched.sched.interpod_affinity`'s, the
score `kresched.sched.interpod_affinity_score`'s.

As upstream:
  1. Namespaces of a term: `namespaces` ∪ (namespaces whose labels match `namespaceSelector`);
     no namespaces and no selector means the pod's own namespace; an empty selector `{}` means
     every namespace.
  2. A nil `labelSelector` matches no pod; an empty one matches every pod.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial

import msgspec

from kresched.model.objects import Pod
from kresched.model.selectors import label_selector_matches
from kresched.model.specs import LabelSelector, LabelSelectorRequirement, PodAffinityTerm, WeightedPodAffinityTerm

__all__ = [
    "NO_LABELS",
    "AffinityTerm",
    "Counts",
    "TopologyPair",
    "WeightedTerm",
    "build_affinity_term",
    "compile_label_selector",
    "int32",
    "merge_label_keys",
    "preferred_terms",
    "required_anti_affinity_terms",
    "required_terms",
    "resolve_namespaces",
]

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
    #: The label selector `selector` is compiled from, encoded (equal keys: equal selectors).
    selector_key: bytes

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


NO_LABELS: Mapping[str, str] = {}


#: A term with its signed weight (`weight × multiplier`, an int32 as upstream).
WeightedTerm = tuple[int, AffinityTerm]


def required_terms(pod: Pod) -> tuple[tuple[AffinityTerm, ...], tuple[AffinityTerm, ...]]:
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
    return AffinityTerm(term.topology_key, namespaces, term.namespace_selector, compile_label_selector(selector),
                        msgspec.json.encode(selector))


def resolve_namespaces(term: AffinityTerm, namespace_labels: Mapping[str, Mapping[str, str]]) -> AffinityTerm:
    """`mergeAffinityTermNamespacesIfNotEmpty`: a non-empty namespace selector becomes the names of
    the namespaces it selects now; an empty one (every namespace) stays."""
    sel = term.namespace_selector
    if sel is None or term.selects_all_namespaces:
        return term
    selected = {ns for ns, labels in namespace_labels.items()
                if label_selector_matches(sel, labels)}  # type: ignore[arg-type]
    return AffinityTerm(term.topology_key, term.namespaces | selected, None, term.selector, term.selector_key)


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


def int32(n: int) -> int:
    """Go's int32 wraparound (weights and their products are int32 upstream)."""
    return (n + 2**31) % 2**32 - 2**31


def preferred_terms(pod: Pod) -> tuple[tuple[WeightedPodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
    aff = pod.spec.affinity
    if aff is None:
        return (), ()
    preferred = aff.pod_affinity.preferred_during_scheduling_ignored_during_execution if aff.pod_affinity else ()
    anti = aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution if aff.pod_anti_affinity else ()
    return preferred, anti
