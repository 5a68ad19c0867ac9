"""NodeAffinity: the node must match the pod's `spec.nodeSelector` and its required node affinity.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go` (PreFilter
and Filter) and component-helpers' `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`:

1. every `spec.nodeSelector` pair must be a label of the node (equality);
2. and, when `requiredDuringSchedulingIgnoredDuringExecution` is set, one of its terms must match
   (terms are ORed; a term's expressions and fields are ANDed; an empty term matches nothing;
   a term upstream cannot parse matches nothing; operators In, NotIn, Exists, DoesNotExist, Gt,
   Lt on labels, In/NotIn on the field `metadata.name`) — see `kresched.model.selectors`.

PreFilter, as upstream:
- Skip when the pod has neither a nodeSelector nor required node affinity;
- when every required term names nodes with `matchFields metadata.name In`, the search is narrowed
  to those nodes (`PreFilterResult.node_names`: the union over terms of the intersection within
  each term). Names of nodes that do not exist are kept: the framework drops them, and the nodes
  left out get `node(s) didn't satisfy plugin(s) [NodeAffinity]`;
- when that union is empty (every term names contradictory nodes), the pod is rejected for all
  nodes with UnschedulableAndUnresolvable `pod affinity terms conflict`.

Score, as upstream: the sum of the weights of the pod's preferred terms the node matches (terms of
weight 0 and empty terms count for nothing), normalized by the highest sum (`DefaultNormalizeScore`);
PreScore Skip when the pod has no preferred terms at all.

The scheduler profile's `addedAffinity` (NodeAffinityArgs; the default profile has none), as
upstream: its required terms are checked first, failing with `node(s) didn't match
scheduler-enforced node affinity` (UnschedulableAndUnresolvable), and keep PreFilter from
skipping a pod without affinity of its own (the node-name narrowing reads the pod's terms only);
its preferred terms add their weights to every pod's score, and keep PreScore from skipping.
Pure; stateless but for the profile's args.
"""

from __future__ import annotations

from typing import ClassVar

from kresched.model.objects import Pod
from kresched.model.selectors import (
    node_field_requirement_matches,
    node_requirement_matches,
    node_selector_term_matches,
)
from kresched.model.specs import NodeAffinity as NodeAffinitySpec
from kresched.model.specs import NodeSelector, NodeSelectorTerm, PreferredSchedulingTerm
from kresched.sched.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    Code,
    CycleState,
    PreFilterResult,
    Snapshot,
    Status,
    default_normalize_score,
)
from kresched.sched.node_info import NodeInfo

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "NodeAffinity",
    "required_node_affinity_matches",
    "required_node_names",
    "required_node_selector",
]

NAME = "NodeAffinity"

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_SKIP = PreFilterResult(Status(Code.SKIP))
_CONFLICT = PreFilterResult(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,), NAME))


class NodeAffinity:
    """Rejects nodes that miss the pod's nodeSelector or required node affinity.

    UnschedulableAndUnresolvable: evicting pods does not relabel a node.
    """

    name: ClassVar[str] = NAME
    #: Score reads only the pod and the NodeInfo: `sched.score.ScoreMemo` may reuse it while the
    #: NodeInfo is the same object.
    node_local: ClassVar[bool] = True

    def __init__(self, added_affinity: NodeAffinitySpec | None = None) -> None:
        """`added_affinity`: NodeAffinityArgs' `addedAffinity`, applied to every pod."""
        self.added_affinity = added_affinity
        self._added_required = added_affinity.required_during_scheduling_ignored_during_execution \
            if added_affinity is not None else None
        self._added_preferred: tuple[PreferredSchedulingTerm, ...] = () if added_affinity is None else tuple(
            t for t in added_affinity.preferred_during_scheduling_ignored_during_execution
            if t.weight != 0 and (t.preference.match_expressions or t.preference.match_fields))
        self._added_prefers = added_affinity is not None and bool(
            added_affinity.preferred_during_scheduling_ignored_during_execution)

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        required = required_node_selector(pod)
        if required is None and not pod.spec.node_selector and self._added_required is None:
            return _SKIP
        if required is None:
            return PreFilterResult()
        names = required_node_names(required)
        if names is None:
            return PreFilterResult()
        if not names:
            return _CONFLICT
        return PreFilterResult(node_names=names)

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        added = self._added_required
        if added is not None and not any(node_selector_term_matches(t, node.name, node.labels)
                                         for t in added.node_selector_terms):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_ENFORCED,), NAME,
                          details=("the scheduler profile's addedAffinity (NodeAffinityArgs) excludes this node",))
        if required_node_affinity_matches(pod, node.name, node.labels):
            return SUCCESS
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_POD,), NAME,
                      details=_mismatch_details(pod, node.name, node.labels))

    def node_reads(self, pod: Pod) -> tuple[str, ...] | None:
        """The node labels Filter reads for `pod` (and for its message), all it reads of a node;
        None where a term reads the node's name (`matchFields`)."""
        keys = dict.fromkeys(pod.spec.node_selector)
        for required in (required_node_selector(pod), self._added_required):
            for term in required.node_selector_terms if required is not None else ():
                if term.match_fields:
                    return None
                keys.update(dict.fromkeys(req.key for req in term.match_expressions))
        return tuple(keys)

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None

    # -- Score ------------------------------------------------------------------------------------
    def pre_score(self, cycle: CycleState, pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot) -> Status:
        # Upstream skips only a pod without preferred terms; terms of weight 0 or empty ones still
        # make it score (0 everywhere).
        aff = pod.spec.affinity
        if (aff is None or aff.node_affinity is None
                or not aff.node_affinity.preferred_during_scheduling_ignored_during_execution) \
                and not self._added_prefers:
            return Status(Code.SKIP)
        cycle.write(_PRESCORE_KEY, preferred_terms(pod))
        return SUCCESS

    def score(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        terms = cycle.read(_PRESCORE_KEY)
        if terms is None:
            terms = preferred_terms(pod)
        node = node_info.node
        count = sum(t.weight for t in terms if node_selector_term_matches(t.preference, node.name, node.labels))
        if self._added_preferred:
            count += sum(t.weight for t in self._added_preferred
                         if node_selector_term_matches(t.preference, node.name, node.labels))
        return count

    def normalize_score(self, cycle: CycleState, pod: Pod, scores: list[int]) -> None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)


_PRESCORE_KEY = f"PreScore{NAME}"


def preferred_terms(pod: Pod) -> tuple[PreferredSchedulingTerm, ...]:
    """`NewPreferredSchedulingTerms`: the preferred terms that can score (weight ≠ 0, not empty)."""
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return ()
    return tuple(t for t in aff.node_affinity.preferred_during_scheduling_ignored_during_execution
                 if t.weight != 0 and (t.preference.match_expressions or t.preference.match_fields))


def required_node_selector(pod: Pod) -> NodeSelector | None:
    """`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`, or None."""
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    return aff.node_affinity.required_during_scheduling_ignored_during_execution


def required_node_affinity_matches(pod: Pod, node_name: str, labels: dict[str, str]) -> bool:
    """`GetRequiredNodeAffinity(pod).Match(node)`: nodeSelector AND (any required term).

    A required node affinity without terms matches no node (the API rejects one, but a
    hand-written snapshot may hold it).
    """
    for key, value in pod.spec.node_selector.items():
        if labels.get(key) != value:
            return False
    required = required_node_selector(pod)
    if required is None:
        return True
    return any(node_selector_term_matches(t, node_name, labels) for t in required.node_selector_terms)


def required_node_names(required: NodeSelector) -> frozenset[str] | None:
    """The only nodes the required terms can match, from `matchFields metadata.name In`:
    None when some term does not name nodes (all nodes are candidates), else the union over the
    terms of each term's intersection (possibly empty: the terms conflict)."""
    terms = required.node_selector_terms
    if not terms:
        return None
    names: set[str] = set()
    for term in terms:
        term_names: set[str] | None = None
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In":
                term_names = set(req.values) if term_names is None else term_names & set(req.values)
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


def _mismatch_details(pod: Pod, node_name: str, labels: dict[str, str]) -> tuple[str, ...]:
    """What the node lacks, for `explain`: each failing nodeSelector pair, or each required term
    with its first failing requirement."""
    out: list[str] = []
    for key, want in pod.spec.node_selector.items():
        have = labels.get(key)
        if have != want:
            found = f"node has {key}={have}" if have is not None else f"node has no label {key}"
            out.append(f"nodeSelector {key}={want}: {found}")
    if out:
        return tuple(out)
    required = required_node_selector(pod)
    if required is None:
        return ()
    if not required.node_selector_terms:
        return ("required node affinity has no terms",)
    for i, term in enumerate(required.node_selector_terms):
        out.append(f"required term {i}: {_term_failure(term, node_name, labels)}")
    return tuple(out)


def _term_failure(term: NodeSelectorTerm, node_name: str, labels: dict[str, str]) -> str:
    if not term.match_expressions and not term.match_fields:
        return "empty term matches no node"
    for req in term.match_expressions:
        if not node_requirement_matches(req, labels.get(req.key)):
            have = labels.get(req.key)
            found = f"node has {req.key}={have}" if have is not None else f"node has no label {req.key}"
            return f"{req.key} {req.operator} {list(req.values)} ({found})"
    for req in term.match_fields:
        if not node_field_requirement_matches(req, node_name):
            return f"{req.key} {req.operator} {list(req.values)} (node is {node_name})"
    return "does not match"
