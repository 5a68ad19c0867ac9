"""Resuming the search of a pod shape whose filters read the cluster (`runner.find_nodes_that_fit`).

A search of a shape whose every filter reads the node alone starts where the last one of that shape
stopped: only the nodes whose NodeInfo changed since are filtered again (`runner._resume`). A pod
with required pod (anti-)affinity or spreading has filters that read the whole cluster too, through
their PreFilter's counts per topology domain — and the next pod of its workload finds those
counts changed only in the domains where the pods placed, evicted or moved since then run. Its
search starts where the last one stopped as well, filtering again the nodes whose NodeInfo changed
and the nodes of every domain whose counts differ in what the filter reads of them
(`changed_domains`: for pod affinity whether a domain holds a matching pod, for spreading the
domains that fail with either count or global minimum).

Resumable: pods whose filters after the node-static ones are node-local (NodeResourcesFit,
NodePorts; DynamicResources where every device is a node's own; the volume filters where each
claim is new and left to its class — a StatefulSet's replicas) or have `resume_state` and
`changed_domains` (InterPodAffinity, PodTopologySpread). The walks are kept per `walk_key` —
everything those PreFilters read of the pod — for the most recently used keys (`WALKS_KEPT`).
Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from kresched.model.objects import Pod
from kresched.model.specs import LabelSelector
from kresched.sched.framework import ClusterFacts, CycleState, FilterPlugin, Snapshot
from kresched.sched.static import NODE_STATIC_PLUGINS, fit_shape

__all__ = ["WALKS_KEPT", "Walked", "affected_positions", "cluster_shape", "kept_states", "walk_key"]

#: Filters (not node-static) whose verdict on a node is a function of its NodeInfo and the pod.
NODE_LOCAL = frozenset({"NodeResourcesFit", "NodePorts"})


class Walked:
    """The last search of a walk key (`runner._Walk`; None before the first) and the states its
    filters read (`kept_states`)."""

    __slots__ = ("states", "walk")

    def __init__(self) -> None:
        self.walk: Any = None
        self.states: dict[str, Any] = {}


#: How many walk keys keep their last search (each holds the NodeInfos it visited: the bound keeps
#: memory flat however many shapes a queue has).
WALKS_KEPT = 64


def walk_key(pod: Pod, full_key: bytes, cycle: CycleState) -> bytes:
    """`full_key` (`runner.verdict_keys`) with what the Filters of pod affinity and spreading read of
    the pod besides their states (whose counts a resumed search compares, `affected_positions`): its
    namespace, owners, pod (anti-)affinity and spread constraints (and its host ports, NodePorts'),
    and of its labels those its own terms and constraints read (`_labels_read`). Pods with equal
    keys get equal verdicts from equal states."""
    return full_key + _cluster_reads(pod, _labels_read(pod, cycle))


def _labels_read(pod: Pod, cycle: CycleState) -> dict[str, str]:
    """The pod's labels its own required pod (anti-)affinity terms and spread constraints read
    (their selectors' keys, `matchLabelKeys`, `mismatchLabelKeys`): whether it matches its own terms
    and constraints, and their selectors as merged. The labels existing pods' anti-affinity reads
    are in InterPodAffinity's counts. All of them where PodTopologySpread runs with the profile's
    default constraints (the pod has none): their selectors are its Services' and owner's, which
    may read any label. A StatefulSet's replicas differ in their pod-name and pod-index labels
    alone: read by nothing, they share a walk."""
    labels = pod.metadata.labels
    spread = pod.spec.topology_spread_constraints
    if not spread and "PodTopologySpread" not in cycle.skip:  # (or not in the profile: all, to be safe)
        return labels
    keys: set[str] = set()
    aff = pod.spec.affinity
    terms = [*(aff.pod_affinity.required_during_scheduling_ignored_during_execution
               if aff is not None and aff.pod_affinity is not None else ()),
             *(aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution
               if aff is not None and aff.pod_anti_affinity is not None else ())]
    for t in terms:
        _selector_keys(t.label_selector, keys)
        keys.update(t.match_label_keys, t.mismatch_label_keys)
    for c in spread:
        _selector_keys(c.label_selector, keys)
        keys.update(c.match_label_keys)
    return {k: v for k, v in labels.items() if k in keys}


def _selector_keys(selector: LabelSelector | None, keys: set[str]) -> None:
    if selector is not None:
        keys.update(selector.match_labels)
        keys.update(r.key for r in selector.match_expressions)


def _cluster_reads(pod: Pod, labels: dict[str, str]) -> bytes:
    aff = pod.spec.affinity
    return msgspec.json.encode((
        pod.metadata.namespace, labels, pod.metadata.owner_references,
        aff.pod_affinity if aff is not None else None, aff.pod_anti_affinity if aff is not None else None,
        pod.spec.topology_spread_constraints, pod.host_ports))


#: The filters (not node-static, not node-local) whose state `cluster_shape` covers.
_CLUSTER_READING = frozenset({"InterPodAffinity", "PodTopologySpread"})


def cluster_shape(pod: Pod, cycle: CycleState, plugins: Sequence[FilterPlugin],
                  static: frozenset[str] = NODE_STATIC_PLUGINS) -> bytes | None:
    """Everything the filters of `pod` (after its PreFilter, `cycle`) read of it, with its priorities
    and preemption policy (`fit_shape`, what choosing victims reads too), where each filter that did
    not return Skip is node-static, node-local (`NODE_LOCAL`, a DynamicResources whose verdict is
    node-local: then the specs of its claims, not their names) or pod affinity or spreading: pods of
    equal shapes get equal filter states, verdicts and victims from one cluster. None where another
    filter runs (the volume filters read the pod's claims by name)."""
    active: list[str] = []
    claims: bytes | None = None
    for pl in plugins:
        name = pl.name
        if name in cycle.skip or name in static:
            continue
        if name == "DynamicResources":
            dra = cycle.read(name)
            if not getattr(dra, "node_local", False):
                return None
            claims = dra.verdict_key
        elif name not in NODE_LOCAL and name not in _CLUSTER_READING:
            return None
        active.append(name)
    return fit_shape(pod) + msgspec.json.encode((active, claims)) + _cluster_reads(pod, pod.metadata.labels)


def kept_states(plugins: Sequence[FilterPlugin], cycle: CycleState) -> dict[str, Any] | None:
    """Per filter of the pod (not skipped) that reads more than the node: a copy of what its
    Filter reads (`resume_state`). None when some filter is neither node-local nor resumable."""
    out: dict[str, Any] = {}
    for pl in plugins:
        name = pl.name
        if name in cycle.skip or name in NODE_STATIC_PLUGINS or name in NODE_LOCAL:
            continue
        if getattr(cycle.read(name), "node_local", False):  # (DynamicResources, the volume filters)
            continue
        keep = getattr(pl, "resume_state", None)
        if keep is None:
            return None
        out[name] = keep(cycle)
    return out


def affected_positions(plugins: Sequence[FilterPlugin], before: dict[str, Any], after: dict[str, Any],
                       snapshot: Snapshot) -> set[int] | None:
    """The positions in the search order of the nodes whose verdict may differ between a search
    with the filter states `before` and one with `after`; None: any node's."""
    if before.keys() != after.keys():
        return None
    out: set[int] = set()
    for pl in plugins:
        if pl.name not in after:
            continue
        pairs = pl.changed_domains(before[pl.name], after[pl.name])  # type: ignore[attr-defined]
        if pairs is None:
            return None
        for key, value in pairs:
            out.update(_nodes_with(snapshot.cluster, key).get(value, ()))
    return out


def _nodes_with(facts: ClusterFacts, key: str) -> dict[str, list[int]]:
    """Label `key`'s values → the search-order positions of the nodes that have it (the nodes do
    not change in a simulation)."""
    memo = facts.memo("resume/nodes-with")
    found = memo.get(key)
    if found is None:
        found = {}
        positions = facts.order_positions
        for node in facts.nodes:
            value = node.metadata.labels.get(key)
            if value is not None:
                found.setdefault(value, []).append(positions[node.metadata.name])
        memo[key] = found
    return found
