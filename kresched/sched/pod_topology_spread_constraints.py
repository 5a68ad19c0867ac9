"""PodTopologySpread's constraints: the pod's own, the profile's defaults and the default selector,
and which nodes count for a constraint, after kube-scheduler's `podtopologyspread/common.go`,
`plugin.go` (`systemDefaultConstraints`) and `helper/spread.go` (Kubernetes 1.35/1.36).

Owns `SpreadConstraint` (upstream's internal `topologySpreadConstraint`, defaults applied and the
selector compiled), `build_constraints` (the pod's own constraints of one kind),
`build_default_constraints` and `SYSTEM_DEFAULT_CONSTRAINTS` (the profile's defaults, each with the
pod's `default_selector`), and `node_inclusion` (`matchNodeInclusionPolicies`). Shared by the
filter (`kresched.sched.pod_topology_spread`) and the score
(`kresched.sched.pod_topology_spread_score`); counts no pod and decides no node's fate.

As upstream:
  * `matchLabelKeys`: each key the incoming pod has is ANDed into the selector as `key=value`
    (`mergeLabelSetWithSelector`); a nil selector stays nil (it matches nothing). A selector with
    no requirements (`labelSelector: {}`) counts no existing pod, yet matches the incoming pod.
  * A node counts for a constraint only if it passes `nodeAffinityPolicy` (default Honor: the
    pod's nodeSelector and required node affinity) and `nodeTaintsPolicy` (default Ignore; Honor:
    every NoSchedule/NoExecute taint tolerated).
  * A pod without constraints gets the profile's default constraints (PodTopologySpreadArgs),
    each with the pod's default selector (`default_selector`; none when it is empty): the selectors
    of the pod's namespace's Services that select the pod, merged, plus the selector of its
    controlling ReplicationController (`v1`, merged as a map), ReplicaSet or StatefulSet
    (`apps/v1`, whose requirements are ANDed).

Deliberate differences:
  * `nodeTaintsPolicy: Honor` reads tolerations exactly as kresched's TaintToleration does (so the
    alpha `Gt`/`Lt` operators count as that plugin counts them).
  * Invalid selectors (which API validation rejects) match nothing; an invalid
    ReplicaSet/StatefulSet selector (likewise rejected by the API server) is ANDed into the default
    selector (matching nothing) where upstream leaves it out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import msgspec

from kresched.model.objects import Node, Pod
from kresched.model.specs import LabelSelector, LabelSelectorRequirement, TopologySpreadConstraint
from kresched.sched.framework import ClusterFacts
from kresched.sched.interpod_affinity_terms import compile_label_selector
from kresched.sched.node_affinity import required_node_affinity_matches, required_node_selector
from kresched.sched.taint_toleration import find_untolerated_taint

__all__ = [
    "HOSTNAME_LABEL",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "ZONE_LABEL",
    "SpreadConstraint",
    "build_constraints",
    "build_default_constraints",
    "default_selector",
    "node_inclusion",
]


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
    #: The selector as data (JSON): constraints with equal keys match the same pods (the key of
    #: the match counts kept per snapshot).
    selector_key: bytes


# -- the constraints ------------------------------------------------------------------------------

def build_constraints(pod: Pod, when: str = "DoNotSchedule") -> tuple[SpreadConstraint, ...]:
    """`filterTopologySpreadConstraints(pod's constraints, pod's labels, when)` with upstream's
    defaults: the filter reads the DoNotSchedule ones, scoring the ScheduleAnyway ones."""
    out = []
    labels = pod.metadata.labels
    for c in pod.spec.topology_spread_constraints:
        if c.when_unsatisfiable != when:
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
            selector_key=msgspec.json.encode(selector),
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


# -- the system default constraints and their selector (common.go, helper/spread.go) ----------------

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"

#: `systemDefaultConstraints` (plugin.go), in upstream's order (the score adds them up in it).
SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(max_skew=3, topology_key=HOSTNAME_LABEL, when_unsatisfiable="ScheduleAnyway"),
    TopologySpreadConstraint(max_skew=5, topology_key=ZONE_LABEL, when_unsatisfiable="ScheduleAnyway"),
)


def build_default_constraints(pod: Pod, cluster: ClusterFacts,
                               defaults: tuple[TopologySpreadConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS,
                               when: str = "ScheduleAnyway") -> tuple[SpreadConstraint, ...]:
    """`buildDefaultConstraints(pod, when)`: the default constraints of that kind, each with the
    pod's default selector in place of its own (matchLabelKeys included: upstream overwrites the
    merged selector); none when there are none or that selector is empty."""
    chosen = [c for c in defaults if c.when_unsatisfiable == when]
    if not chosen:
        return ()
    # All the default selector reads of the pod: the pods of a workload share the constraints.
    owner = pod.controller
    memo = cluster.memo("PodTopologySpread/default-constraints")
    reads = (when, msgspec.json.encode((pod.metadata.namespace, pod.metadata.labels,
                                        (owner.api_version, owner.kind, owner.name) if owner is not None else None)))
    hit = memo.get(reads)
    if hit is not None and hit[0] is defaults:
        return hit[1]
    out = _default_constraints(chosen, default_selector(pod, cluster))
    memo[reads] = (defaults, out)
    return out


def _default_constraints(chosen: list[TopologySpreadConstraint], selector: LabelSelector
                         ) -> tuple[SpreadConstraint, ...]:
    if not selector.match_labels and not selector.match_expressions:
        return ()
    match = compile_label_selector(selector)
    key = msgspec.json.encode(selector)
    return tuple(SpreadConstraint(
        max_skew=c.max_skew,
        topology_key=c.topology_key,
        selector=match,
        counts_existing=True,
        min_domains=1 if c.min_domains is None else c.min_domains,
        honor_node_affinity=(c.node_affinity_policy or "Honor") == "Honor",
        honor_node_taints=(c.node_taints_policy or "Ignore") == "Honor",
        selector_key=key,
    ) for c in chosen)


def default_selector(pod: Pod, cluster: ClusterFacts) -> LabelSelector:
    """`helper.DefaultSelector`: the merged selectors (`matchLabels`) of the Services of the pod's
    namespace that select it (`GetPodServices`: a nil selector selects nothing, an empty one
    everything), then its controller, looked up by name in the pod's namespace: a
    ReplicationController (`v1`) merges its selector map in (it wins on a conflict, as
    `labels.Merge`); a ReplicaSet or StatefulSet (`apps/v1`) ANDs its selector's requirements
    (as `matchExpressions`; a nil selector adds none). Other owners, or a controller that is not
    in the snapshot, add nothing. Empty (no requirement) when nothing selects the pod."""
    namespace = pod.metadata.namespace
    labels = pod.metadata.labels
    merged: dict[str, str] = {}
    for sel in cluster.services.get(namespace, ()):
        if all(labels.get(k) == v for k, v in sel.items()):
            merged.update(sel)
    extra: tuple[LabelSelectorRequirement, ...] = ()
    owner = pod.controller
    if owner is not None:
        gv = _parse_group_version(owner.api_version)
        key = (owner.kind, namespace, owner.name)
        if gv == ("", "v1") and owner.kind == "ReplicationController":
            if key in cluster.controllers:
                rc = cluster.controllers[key]
                if isinstance(rc, dict):
                    merged.update(rc)
        elif gv == ("apps", "v1") and owner.kind in ("ReplicaSet", "StatefulSet"):
            sel = cluster.controllers.get(key)
            if isinstance(sel, LabelSelector):
                extra = (*(LabelSelectorRequirement(key=k, operator="In", values=(v,))
                           for k, v in sel.match_labels.items()), *sel.match_expressions)
    return LabelSelector(match_labels=merged, match_expressions=extra)


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """`schema.ParseGroupVersion`: "" → ("", ""), "v1" → ("", "v1"), "g/v" → ("g", "v"), more
    slashes → None (an error)."""
    if not api_version:
        return ("", "")
    parts = api_version.split("/")
    if len(parts) == 1:
        return ("", parts[0])
    if len(parts) == 2:
        return (parts[0], parts[1])
    return None


# -- node inclusion policies ----------------------------------------------------------------------

def node_inclusion(pod: Pod) -> Callable[[SpreadConstraint, Node], bool]:
    """`matchNodeInclusionPolicies` for `pod`, memoised per node (both answers depend only on the
    pod and the node, and every constraint of the pod asks the same two questions). The checks
    are NodeAffinity's and TaintToleration's own (`GetRequiredNodeAffinity(pod).Match`,
    `FindMatchingUntoleratedTaint` over NoSchedule/NoExecute taints)."""
    affinity: dict[str, bool] = {}
    taints: dict[str, bool] = {}
    # No nodeSelector and no required node affinity: every node matches (`GetRequiredNodeAffinity`
    # of such a pod matches everything), so the affinity policy never leaves a node out.
    selects = bool(pod.spec.node_selector) or required_node_selector(pod) is not None

    def eligible(c: SpreadConstraint, node: Node) -> bool:
        name = node.metadata.name
        if c.honor_node_affinity and selects:
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
