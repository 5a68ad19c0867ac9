"""How many of a namespace's pods on each node a label selector matches, per snapshot lineage.

PodTopologySpread counts a selector's pods per node in PreFilter and PreScore (`countPodsMatchSelector`:
terminating pods left out), InterPodAffinity the pods its incoming pod's terms select in PreFilter
(`getIncomingAffinityAntiAffinityCounts`) and PreScore (`processExistingPod`), all of them. The
replicas of a workload ask the same of one simulated cluster after another, each differing from the
last on a node or two: `selected_per_node` finds a selector's counts once, on first use, and carries
them down the simulations (`MatchCounts`, a `Snapshot.index`). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from operator import is_

from kresched.model.objects import Pod
from kresched.sched.framework import Snapshot, regrouped
from kresched.sched.node_info import NodeInfo

__all__ = ["MATCH_COUNTS", "MatchCounts", "count_selected", "selected_per_node"]

#: `Snapshot.index` key of `MatchCounts`.
MATCH_COUNTS = "match-counts"

Selector = Callable[[Mapping[str, str]], bool]
#: How many of some pods count: those `Selector` matches, terminating ones left out or not.
Counter = Callable[[Iterable[Pod]], int]


def selected_per_node(snapshot: Snapshot, namespace: str, key: bytes, selector: Selector,
                      terminating: bool = False) -> dict[str, int]:
    """Node name → how many of `namespace`'s pods on it `selector` matches (nodes with none left
    out), terminating ones counted only where `terminating`. `key` names the selector (equal keys:
    equal selectors, its encoded `LabelSelector`). Kept per snapshot lineage: do not change it."""
    index: MatchCounts = snapshot.index(MATCH_COUNTS, MatchCounts.build)
    return index.counts(snapshot, namespace, (terminating, key), selector, terminating)


def count_selected(pods: Iterable[Pod], selector: Selector, terminating: bool = False) -> int:
    """How many of `pods` `selector` matches, terminating ones counted only where `terminating`
    (PodTopologySpread's `countPodsMatchSelector` leaves them out; InterPodAffinity counts them)."""
    if terminating:
        return sum(1 for p in pods if selector(p.metadata.labels))
    return sum(1 for p in pods if p.metadata.deletion_timestamp is None and selector(p.metadata.labels))


def _counter(selector: Selector, terminating: bool) -> Counter:
    return lambda pods: count_selected(pods, selector, terminating)


class MatchCounts:
    """Per namespace and (whether terminating pods count, selector key): node name → how many of the
    namespace's pods there the selector matches (nodes with none left out). A selector's counts are
    found on first use (a walk of the namespace's pods), then carried down simulations: a replaced
    node is counted again for the namespaces whose pods on it changed.

    Kept counts are shared by snapshots whose pods of the namespace are the same, and a snapshot
    adding a selector's counts adds them for those too (valid: same pods, same counts). A snapshot
    that finds them afresh also hands them up its nearest `_LINKED` ancestors (`_teach`): each
    differs from its child on one node, counted again. So the simulations of one working snapshot
    (whose namespaces differ from it where a victim left) count a selector once, on the first.
    """

    __slots__ = ("by_namespace", "depth", "parent", "step")

    def __init__(self, by_namespace: dict[str, dict[tuple[bool, bytes], tuple[Counter, dict[str, int]]]],
                 parent: MatchCounts | None = None, step: tuple[str, dict[str, tuple[Pod, ...]]] = ("", {}),
                 depth: int = 0) -> None:
        self.by_namespace = by_namespace
        #: The ancestor this one was carried down from (None past `_LINKED` steps), the node that
        #: changed (and its pods there before, of the namespaces that changed), how many links up.
        self.parent = parent
        self.step = step
        self.depth = depth

    @classmethod
    def build(cls, snapshot: Snapshot) -> MatchCounts:
        return cls({})

    def counts(self, snapshot: Snapshot, namespace: str, key: tuple[bool, bytes], selector: Selector,
               terminating: bool) -> dict[str, int]:
        """Node name → matching pods of `namespace` on it (do not change it)."""
        kept = self.by_namespace.setdefault(namespace, {})
        hit = kept.get(key)
        if hit is None:
            count = _counter(selector, terminating)
            groups = snapshot.pods_by_namespace().get(namespace, {})
            hit = kept[key] = (count, {name: n for name, pods in groups.items() if (n := count(pods))})
            self._teach(namespace, key, count, hit[1])
        return hit[1]

    def _teach(self, namespace: str, key: tuple[bool, bytes], count: Counter, per_node: dict[str, int]) -> None:
        """Give the linked ancestors lacking them the counts `per_node` found here, each step's
        node counted again with its pods before the step."""
        child = self
        while (parent := child.parent) is not None:
            kept = parent.by_namespace.setdefault(namespace, {})
            if key in kept:
                return
            name, before = child.step
            if namespace in before:  # the namespace's pods on the node changed at this step
                n = count(before[namespace])
                if per_node.get(name, 0) != n:
                    per_node = _recounted(per_node, name, n)
            kept[key] = (count, per_node)
            child = parent

    def replaced(self, old: NodeInfo, new: NodeInfo) -> MatchCounts:
        changed, before, after = regrouped(old, new)
        if not changed:
            return self
        by_namespace = dict(self.by_namespace)
        for ns in changed:
            kept = by_namespace.get(ns)
            if kept is None:
                continue
            pods, was = after.get(ns, ()), before.get(ns, ())
            # Pods placed there (the common change): the namespace's pods before, then more; a count
            # is the one kept for `old` and the new pods the selector matches.
            added = pods[len(was):] if len(pods) > len(was) and all(map(is_, was, pods)) else None
            fresh = {}
            for key, (count, per_node) in kept.items():
                then = per_node.get(new.name, 0)
                n = count(pods) if added is None else then + count(added)
                if then != n:
                    per_node = _recounted(per_node, new.name, n)
                fresh[key] = (count, per_node)
            by_namespace[ns] = fresh
        if self.depth >= _LINKED:
            return MatchCounts(by_namespace)
        return MatchCounts(by_namespace, self, (new.name, {ns: before.get(ns, ()) for ns in changed}), self.depth + 1)


#: How many ancestors a `MatchCounts` hands counts found afresh up to (and keeps alive).
_LINKED = 8


def _recounted(per_node: dict[str, int], name: str, n: int) -> dict[str, int]:
    """`per_node` with `name`'s count `n` (0: none), a changed count last (a copy: the old one is
    shared)."""
    out = per_node.copy()
    out.pop(name, None)
    if n:
        out[name] = n
    return out
