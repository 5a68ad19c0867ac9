"""The Score half of InterPodAffinity (PreScore, Score, NormalizeScore) against upstream's own test
tables (kube-scheduler v1.36, pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go),
kresched's own cases for what those tables leave out, and a property test against a literal port of
upstream's `processExistingPod` loop.

Each ported case is one upstream case; its id is `<Go test name>/<upstream case name>` (Go's subtest
name: a repeated name gets `#01`). Upstream's pods have no name and live in the namespace ""; they
get a name here (kresched requires one) and keep the namespace "". Upstream's harness registers the
four namespaces `subteam{1,2}.team{1,2}` (labels `team: team1|team2`) with the namespace lister;
`_scores` puts their labels into the snapshot.

All of TestPreferredAffinity and TestPreferredAffinityWithHardPodAffinitySymmetricWeight is here.
One deliberate difference: "invalid Affinity fails PreScore" and "invalid AntiAffinity fails
PreScore" (a label value `{{.bad-value.}}` upstream fails to parse) expect an Error status upstream;
kresched's score path has no Error status and matches an unparsable selector against nothing (as
everywhere in kresched, and the API server rejects such a pod), so with no other pods PreScore
returns Skip.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.objects import Node, Pod
from kresched.model.selectors import label_selector_matches
from kresched.model.specs import PodAffinityTerm
from kresched.sched import interpod_affinity as ipa
from kresched.sched import interpod_affinity_score as ipa_score
from kresched.sched.framework import MAX_NODE_SCORE, SUCCESS, Code, CycleState, Snapshot
from kresched.sched.interpod_affinity import NAME, InterPodAffinity
from kresched.sched.interpod_affinity_existing import (
    EXISTING_ANTI_INDEX,
    EXISTING_TERMS_INDEX,
    ExistingAntiAffinityIndex,
    ExistingTermsIndex,
)
from kresched.sched.interpod_affinity_terms import int32
from kresched.sched.node_info import NodeInfo
from kresched.sched.score import prioritize_nodes
from tests.builders import make_pod

SKIP = "Skip"  # what `_scores` returns when PreScore skips the plugin

# -- builders ---------------------------------------------------------------------------------------

_names = itertools.count()


def _node(name: str, labels: Mapping[str, str] | None = None) -> Node:
    """A node with exactly these labels (upstream's test nodes have no hostname label)."""
    return msgspec.convert({"metadata": {"name": name, "labels": dict(labels or {})}}, Node)


def _pod(node: str = "", labels: Mapping[str, str] | None = None, affinity: dict[str, Any] | None = None,
         ns: str = "", name: str | None = None) -> Pod:
    return make_pod(name or f"p{next(_names)}", ns, node=node, labels=dict(labels or {}), affinity=affinity)


def _incoming(labels: Mapping[str, str] | None = None, affinity: dict[str, Any] | None = None, ns: str = "") -> Pod:
    return _pod(labels=labels, affinity=affinity, ns=ns, name="incoming")


def _expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def _sel(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(exprs)}


def _term(key: str, *exprs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"labelSelector": _sel(*exprs), "topologyKey": key, **extra}


def _wterm(weight: int, key: str, *exprs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": _term(key, *exprs, **extra)}


def _pref(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def _pref_anti(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


#: Upstream's `namespaces` fixture.
NAMESPACES: dict[str, dict[str, str]] = {
    "subteam1.team1": {"team": "team1"}, "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"}, "subteam2.team2": {"team": "team2"},
}


def _snapshot(nodes: list[Node], existing: list[Pod], namespaces: Mapping[str, dict[str, str]] = NAMESPACES
              ) -> Snapshot:
    infos = [NodeInfo(n, [p for p in existing if p.spec.node_name == n.metadata.name]) for n in nodes]
    return Snapshot(infos, {i.name: i for i in infos}, dict(namespaces))


def _scores(pod: Pod, existing: list[Pod], nodes: list[Node], *, hard: int = 1, ignore: bool = False,
            namespaces: Mapping[str, dict[str, str]] = NAMESPACES, normalize: bool = True) -> list[int] | str:
    """Upstream's harness: PreScore, Score every node in the given order, then NormalizeScore."""
    snapshot = _snapshot(nodes, existing, namespaces)
    plugin = InterPodAffinity(hard_pod_affinity_weight=hard, ignore_preferred_terms_of_existing_pods=ignore)
    cycle = CycleState()
    status = plugin.pre_score(cycle, pod, snapshot.node_infos, snapshot)
    if status.code == Code.SKIP:
        return SKIP
    assert status.is_success, status
    scores = [plugin.score(cycle, pod, info) for info in snapshot.node_infos]
    if normalize:
        plugin.normalize_score(cycle, pod, scores)
    return scores


# -- upstream's fixtures (TestPreferredAffinity) ---------------------------------------------------

RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}

STAY_WITH_S1_IN_REGION = _pref(_wterm(5, "region", _expr("security", "In", "S1")))
STAY_WITH_S2_IN_REGION = _pref(_wterm(6, "region", _expr("security", "In", "S2")))
AFFINITY3 = _pref(
    _wterm(8, "region", _expr("security", "NotIn", "S1"), _expr("security", "In", "S2")),
    _wterm(2, "region", _expr("security", "Exists"), _expr("wrongkey", "DoesNotExist")),
)
HARD_AFFINITY = _required(
    _term("region", _expr("security", "In", "S1", "value2")),
    _term("region", _expr("security", "Exists"), _expr("wrongkey", "DoesNotExist")),
)
AWAY_FROM_S1_IN_AZ = _pref_anti(_wterm(5, "az", _expr("security", "In", "S1")))
AWAY_FROM_S2_IN_AZ = _pref_anti(_wterm(5, "az", _expr("security", "In", "S2")))
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = {
    **_pref(_wterm(8, "region", _expr("security", "In", "S1"))),
    **_pref_anti(_wterm(5, "az", _expr("security", "In", "S2"))),
}
_NS_TERM = {"namespaces": ["subteam2.team2"], "namespaceSelector": _sel(_expr("team", "In", "team1"))}
AFFINITY_NAMESPACE_SELECTOR = _pref(_wterm(5, "region", _expr("security", "In", "S1"), **_NS_TERM))
ANTI_AFFINITY_NAMESPACE_SELECTOR = _pref_anti(_wterm(5, "region", _expr("security", "In", "S1"), **_NS_TERM))
INVALID_AFFINITY_LABELS = _pref(_wterm(8, "region", _expr("security", "In", "{{.bad-value.}}")))
INVALID_ANTI_AFFINITY_LABELS = _pref_anti(_wterm(5, "az", _expr("security", "In", "{{.bad-value.}}")))

_PA = "TestPreferredAffinity/"


def _on(node: str, labels: Mapping[str, str] | None = None, affinity: dict[str, Any] | None = None,
        ns: str = "") -> Pod:
    return _pod(node, labels, affinity, ns)


def _nodes(*labels: Mapping[str, str]) -> list[Node]:
    return [_node(f"node{i}", lab) for i, lab in enumerate(labels, 1)]


_NS_PODS = [_on("node1", S1, ns="subteam1.team1"), _on("node1", S1, ns="subteam1.team1"),
            _on("node1", S1, ns="subteam1.team2"), _on("node2", S1, ns="subteam2.team1")]
_IGNORE_PODS = [_on("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), _on("node2", S2, STAY_WITH_S2_IN_REGION)]
_NS_PODS_BOTH = [_on("node1", S1, ns="subteam1.team1"), _on("node1", S1, ns="subteam1.team1"),
                 _on("node1", S1, ns="subteam2.team2"), _on("node2", S1, ns="subteam2.team1")]


@pytest.mark.parametrize(("pod", "pods", "nodes", "ignore", "want"), [
    pytest.param(_incoming(S1), [], _nodes(RG_CHINA, RG_INDIA, AZ1), False, SKIP,
                 id=_PA + "all nodes are same priority as Affinity is nil"),
    pytest.param(_incoming(S1, STAY_WITH_S1_IN_REGION),
                 [_on("node1", S1), _on("node2", S2), _on("node3", S1)],
                 _nodes(RG_CHINA, RG_INDIA, AZ1), False, [MAX_NODE_SCORE, 0, 0],
                 id=_PA + "Affinity: pod that matches topology key & pods in nodes will get high score comparing to "
                          "otherswhich doesn't match either pods in nodes or in topology key"),
    pytest.param(_incoming(None, STAY_WITH_S1_IN_REGION), [_on("node1", S1)],
                 _nodes(RG_CHINA, RG_CHINA_AZ1, RG_INDIA), False, [MAX_NODE_SCORE, MAX_NODE_SCORE, 0],
                 id=_PA + "All the nodes that have the same topology key & label value with one of them has an "
                          "existing pod that match the affinity rules, have the same score"),
    pytest.param(_incoming(S1, STAY_WITH_S2_IN_REGION),
                 [_on("node1", S2), _on("node1", S2), _on("node2", S2), _on("node3", S2), _on("node4", S2),
                  _on("node5", S2)],
                 _nodes(RG_CHINA, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA), False,
                 [MAX_NODE_SCORE, 0, MAX_NODE_SCORE, MAX_NODE_SCORE, 0],
                 id=_PA + "Affinity: nodes in one region has more matching pods comparing to other region, so the "
                          "region which has more matches will get high score"),
    pytest.param(_incoming(S1, AFFINITY3), [_on("node1", S1), _on("node2", S2), _on("node3", S1)],
                 _nodes(RG_CHINA, RG_INDIA, AZ1), False, [20, MAX_NODE_SCORE, 0],
                 id=_PA + "Affinity: different Label operators and values for pod affinity scheduling preference, "
                          "including some match failures "),
    pytest.param(_incoming(S2), [_on("node1", S1, STAY_WITH_S1_IN_REGION), _on("node2", S2, STAY_WITH_S2_IN_REGION)],
                 _nodes(RG_CHINA, RG_INDIA, AZ1), False, [0, MAX_NODE_SCORE, 0],
                 id=_PA + "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in "
                          "pod affinity symmetry"),
    pytest.param(_incoming(S1, ns="subteam1.team1"),
                 [_on("node1", S1, AFFINITY_NAMESPACE_SELECTOR), _on("node2", S2, STAY_WITH_S2_IN_REGION)],
                 _nodes(RG_CHINA, RG_INDIA, AZ1), False, [MAX_NODE_SCORE, 0, 0],
                 id=_PA + "Affinity symmetry with namespace selector"),
    pytest.param(_incoming(S1, ns="subteam1.team1"),
                 [_on("node1", S1, ANTI_AFFINITY_NAMESPACE_SELECTOR), _on("node2", S2, STAY_WITH_S2_IN_REGION)],
                 _nodes(RG_CHINA, RG_INDIA, AZ1), False, [0, MAX_NODE_SCORE, MAX_NODE_SCORE],
                 id=_PA + "AntiAffinity symmetry with namespace selector"),
    pytest.param(_incoming(S1), [_on("node1", S1, HARD_AFFINITY), _on("node2", S2, HARD_AFFINITY)],
                 _nodes(RG_CHINA, RG_INDIA, AZ1), False, [MAX_NODE_SCORE, MAX_NODE_SCORE, 0],
                 id=_PA + "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod "
                          "affinity symmetry"),
    pytest.param(_incoming(S1, AWAY_FROM_S1_IN_AZ), [_on("node1", S1), _on("node2", S2)],
                 _nodes(AZ1, RG_CHINA), False, [0, MAX_NODE_SCORE],
                 id=_PA + "Anti Affinity: pod that does not match existing pods in node will get high score "),
    pytest.param(_incoming(S1, AWAY_FROM_S1_IN_AZ), [_on("node1", S1), _on("node2", S1)],
                 _nodes(AZ1, RG_CHINA), False, [0, MAX_NODE_SCORE],
                 id=_PA + "Anti Affinity: pod that does not match topology key & match the pods in nodes will get "
                          "higher score comparing to others "),
    pytest.param(_incoming(S1, AWAY_FROM_S1_IN_AZ), [_on("node1", S1), _on("node1", S1), _on("node2", S2)],
                 _nodes(AZ1, RG_INDIA), False, [0, MAX_NODE_SCORE],
                 id=_PA + "Anti Affinity: one node has more matching pods comparing to other node, so the node "
                          "which has more unmatches will get high score"),
    pytest.param(_incoming(S2), [_on("node1", S1, AWAY_FROM_S2_IN_AZ), _on("node2", S2, AWAY_FROM_S1_IN_AZ)],
                 _nodes(AZ1, AZ2), False, [0, MAX_NODE_SCORE],
                 id=_PA + "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get "
                          "high score"),
    pytest.param(_incoming(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), [_on("node1", S1), _on("node2", S1)],
                 _nodes(RG_CHINA, AZ1), False, [MAX_NODE_SCORE, 0],
                 id=_PA + "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution "
                          "in both pod affinity & anti affinity"),
    pytest.param(_incoming(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
                 [_on("node1", S1), _on("node1", S1), _on("node2", S1), _on("node3", S1), _on("node3", S1),
                  _on("node4", S1), _on("node5", S1)],
                 _nodes(RG_CHINA_AZ1, RG_INDIA, RG_CHINA, RG_CHINA, RG_INDIA), False,
                 [MAX_NODE_SCORE, 0, MAX_NODE_SCORE, MAX_NODE_SCORE, 0],
                 id=_PA + "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to "
                          "schedule and existing pods have the same labels"),
    pytest.param(_incoming(S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
                 [_on("node1", S1), _on("node2", S2), _on("node3", None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
                  _on("node4", None, AWAY_FROM_S1_IN_AZ)],
                 _nodes(RG_CHINA, AZ1, RG_INDIA, AZ2), False, [MAX_NODE_SCORE, 0, MAX_NODE_SCORE, 0],
                 id=_PA + "Affinity and Anti Affinity and symmetry: considered only "
                          "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & "
                          "symmetry"),
    pytest.param(_incoming(S1), [_on("node1", S1), _on("node2", None, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)],
                 _nodes(RG_CHINA, RG_CHINA), False, [0, 0],
                 id=_PA + "Avoid panic when partial nodes in a topology don't have pods with affinity"),
    # Deliberate difference (module docstring): upstream fails PreScore with an Error.
    pytest.param(_incoming(None, INVALID_AFFINITY_LABELS), [], _nodes(RG_CHINA, RG_CHINA), False, SKIP,
                 id=_PA + "invalid Affinity fails PreScore"),
    pytest.param(_incoming(None, INVALID_ANTI_AFFINITY_LABELS), [], _nodes(RG_CHINA, RG_CHINA), False, SKIP,
                 id=_PA + "invalid AntiAffinity fails PreScore"),
    pytest.param(_incoming(S1, AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"), _NS_PODS,
                 _nodes(RG_CHINA, RG_INDIA), False, [MAX_NODE_SCORE, 0],
                 id=_PA + "Affinity with pods matching NamespaceSelector"),
    pytest.param(_incoming(S1, AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"), _NS_PODS_BOTH,
                 _nodes(RG_CHINA, RG_INDIA), False, [MAX_NODE_SCORE, 0],
                 id=_PA + "Affinity with pods matching both NamespaceSelector and Namespaces fields"),
    pytest.param(_incoming(S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"), _NS_PODS,
                 _nodes(RG_CHINA, RG_INDIA), False, [0, MAX_NODE_SCORE],
                 id=_PA + "Affinity with pods matching NamespaceSelector#01"),
    pytest.param(_incoming(S1, ANTI_AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"), _NS_PODS_BOTH,
                 _nodes(RG_CHINA, RG_INDIA), False, [0, MAX_NODE_SCORE],
                 id=_PA + "Affinity with pods matching both NamespaceSelector and Namespaces fields#01"),
    pytest.param(_incoming(S2), _IGNORE_PODS, _nodes(RG_CHINA, RG_INDIA), True, SKIP,
                 id=_PA + "Ignore preferred terms of existing pods"),
    pytest.param(_incoming(S2), _IGNORE_PODS, _nodes(RG_CHINA, RG_INDIA), False, [0, MAX_NODE_SCORE],
                 id=_PA + "Do not ignore preferred terms of existing pods"),
    pytest.param(_incoming(S2), [], [], False, SKIP, id=_PA + "No nodes to score"),
])
def test_preferred_affinity(pod: Pod, pods: list[Pod], nodes: list[Node], ignore: bool, want: list[int] | str) -> None:
    assert _scores(pod, pods, nodes, hard=1, ignore=ignore) == want


HARD_POD_AFFINITY = _required(_term("region", _expr("service", "In", "S1"), namespaces=["", "subteam2.team2"],
                                    namespaceSelector=_sel(_expr("team", "In", "team1"))))
_HW = "TestPreferredAffinityWithHardPodAffinitySymmetricWeight/"
_HW_PODS = [_on("node1", None, HARD_POD_AFFINITY), _on("node2", None, HARD_POD_AFFINITY)]
_HW_NODES = _nodes(RG_CHINA, RG_INDIA, AZ1)
SERVICE_S1 = {"service": "S1"}


@pytest.mark.parametrize(("pod", "hard", "want"), [
    pytest.param(_incoming(SERVICE_S1), 1, [MAX_NODE_SCORE, MAX_NODE_SCORE, 0], id=_HW + "with default weight"),
    pytest.param(_incoming(SERVICE_S1), 0, SKIP, id=_HW + "with zero weight"),
    pytest.param(_incoming(SERVICE_S1, ns="subteam1.team2"), 1, SKIP, id=_HW + "with no matching namespace"),
    pytest.param(_incoming(SERVICE_S1, ns="subteam1.team1"), 1, [MAX_NODE_SCORE, MAX_NODE_SCORE, 0],
                 id=_HW + "with matching NamespaceSelector"),
    pytest.param(_incoming(SERVICE_S1, ns="subteam2.team2"), 1, [MAX_NODE_SCORE, MAX_NODE_SCORE, 0],
                 id=_HW + "with matching Namespaces"),
])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(pod: Pod, hard: int, want: list[int] | str) -> None:
    assert _scores(pod, _HW_PODS, _HW_NODES, hard=hard) == want


def test_default_arguments_are_the_default_profiles() -> None:
    plugin = InterPodAffinity()
    assert plugin.hard_pod_affinity_weight == 1
    assert plugin.ignore_preferred_terms_of_existing_pods is False


# -- kresched's own cases ---------------------------------------------------------------------------

_A, _B, _C = {"region": "a"}, {"region": "b"}, {"region": "c"}


def test_raw_scores_are_signed_sums_and_normalization_truncates() -> None:
    # -5 (anti-affinity to the S2 pod in a), 0, +8 (affinity to the S1 pod in c): 100·5/13 = 38.46 → 38.
    pod = _incoming(None, {**_pref(_wterm(8, "region", _expr("security", "In", "S1"))),
                           **_pref_anti(_wterm(5, "region", _expr("security", "In", "S2")))})
    pods = [_on("node1", S2), _on("node3", S1)]
    nodes = _nodes(_A, _B, _C)
    assert _scores(pod, pods, nodes, normalize=False) == [-5, 0, 8]
    assert _scores(pod, pods, nodes) == [0, 38, 100]


def test_matching_terms_that_cancel_out_still_score() -> None:
    # The map has an entry (sum 0), so PreScore does not skip; every node then normalizes to 0.
    pod = _incoming(None, {**_pref(_wterm(5, "region", _expr("security", "In", "S1"))),
                           **_pref_anti(_wterm(5, "region", _expr("security", "In", "S1")))})
    assert _scores(pod, [_on("node1", S1)], _nodes(_A, _B), normalize=False) == [0, 0]
    assert _scores(pod, [_on("node1", S1)], _nodes(_A, _B)) == [0, 0]


def test_terms_that_match_nothing_skip() -> None:
    pod = _incoming(S1, STAY_WITH_S2_IN_REGION)
    assert _scores(pod, [_on("node1", S1)], _nodes(_A, _B)) == SKIP


def test_hard_weight_counts_once_per_required_term() -> None:
    # HARD_AFFINITY has two required terms the incoming S1 pod matches: 2 × 7 on region a.
    pods = [_on("node1", None, HARD_AFFINITY)]
    assert _scores(_incoming(S1), pods, _nodes(_A, _B), hard=7, normalize=False) == [14, 0]


def test_existing_pods_on_nodes_without_labels_or_key_count_nowhere() -> None:
    bare = _node("bare")
    nodes = [bare, *_nodes(_A)]
    # Upstream returns early for a node without any label; one without the term's key adds nothing.
    assert _scores(_incoming(S1), [_on("bare", None, HARD_AFFINITY)], nodes) == SKIP
    assert _scores(_incoming(S1), [_on("node1", None, _required(_term("zone", _expr("security", "Exists"))))],
                   nodes) == SKIP
    assert _scores(_incoming(S1, STAY_WITH_S1_IN_REGION), [_on("bare", S1)], nodes) == SKIP


def test_pre_score_reads_the_whole_snapshot_not_only_the_filtered_nodes() -> None:
    # node1 did not pass the filters, but its pod still pulls region a (and so node2) up.
    nodes = _nodes(_A, _A, _B)
    snapshot = _snapshot(nodes, [_on("node1", S1)])
    pod = _incoming(None, STAY_WITH_S1_IN_REGION)
    plugin = InterPodAffinity()
    cycle = CycleState()
    feasible = snapshot.node_infos[1:]
    assert plugin.pre_score(cycle, pod, feasible, snapshot) == SUCCESS
    scores = [plugin.score(cycle, pod, info) for info in feasible]
    assert scores == [5, 0]
    plugin.normalize_score(cycle, pod, scores)
    assert scores == [MAX_NODE_SCORE, 0]


def test_ignore_preferred_terms_only_skips_pods_without_preferred_terms() -> None:
    # With the option, a pod with preferred terms still counts existing pods' preferred terms
    # (upstream's option is only a Skip).
    pod = _incoming(S2, STAY_WITH_S1_IN_REGION)
    pods = [_on("node1", S1), _on("node2", None, STAY_WITH_S2_IN_REGION)]
    assert _scores(pod, pods, _nodes(_A, _B), ignore=True, normalize=False) == [5, 6]
    assert _scores(pod, pods, _nodes(_A, _B), ignore=False, normalize=False) == [5, 6]


def test_an_incoming_namespace_selector_matching_empty_labels_selects_every_namespace() -> None:
    # Upstream adds the selected namespaces (the team2 ones) but keeps the selector and matches it
    # against nil labels: `team NotIn (team1)` matches them, so the term reaches team1's pods too.
    not_team1 = _sel(_expr("team", "NotIn", "team1"))
    pod = _incoming(None, _pref(_wterm(5, "region", _expr("security", "In", "S1"), namespaceSelector=not_team1)),
                    ns="other")
    assert _scores(pod, [_on("node1", S1, ns="subteam1.team1")], _nodes(_A, _B)) == [MAX_NODE_SCORE, 0]
    # A selector that needs a label does not: only the namespaces it selects count.
    team2 = _sel(_expr("team", "In", "team2"))
    pod = _incoming(None, _pref(_wterm(5, "region", _expr("security", "In", "S1"), namespaceSelector=team2)),
                    ns="other")
    assert _scores(pod, [_on("node1", S1, ns="subteam1.team1")], _nodes(_A, _B)) == SKIP
    assert _scores(pod, [_on("node1", S1, ns="subteam1.team2")], _nodes(_A, _B)) == [MAX_NODE_SCORE, 0]


def test_existing_terms_match_the_incoming_pods_namespace_labels() -> None:
    # An existing pod's namespaceSelector is matched against the labels of the incoming pod's
    # namespace; an unknown namespace has none.
    team2 = _sel(_expr("team", "In", "team2"))
    aff = _pref(_wterm(5, "region", _expr("security", "In", "S1"), namespaceSelector=team2))
    pods = [_on("node1", None, aff)]
    assert _scores(_incoming(S1, ns="subteam2.team2"), pods, _nodes(_A, _B)) == [MAX_NODE_SCORE, 0]
    assert _scores(_incoming(S1, ns="subteam2.team1"), pods, _nodes(_A, _B)) == SKIP
    assert _scores(_incoming(S1, ns="unknown"), pods, _nodes(_A, _B)) == SKIP


def test_match_label_keys_of_preferred_terms_are_merged() -> None:
    aff = _pref(_wterm(5, "region", _expr("app", "Exists"), matchLabelKeys=["version"]))
    pod = _incoming({"app": "web", "version": "v2"}, aff)
    pods = [_on("node1", {"app": "web", "version": "v1"}), _on("node2", {"app": "web", "version": "v2"})]
    assert _scores(pod, pods, _nodes(_A, _B)) == [0, MAX_NODE_SCORE]


def test_terminal_pods_do_not_count() -> None:
    done = make_pod("done", "", node="node1", labels=S1, phase="Succeeded")
    assert _scores(_incoming(None, STAY_WITH_S1_IN_REGION), [done], _nodes(_A, _B)) == SKIP


def test_state_key_is_its_own_and_shared_by_clones() -> None:
    # PreScore must not clobber PreFilter's state; a cloned cycle scores the same.
    nodes = _nodes(_A, _B)
    pod = _incoming(S1, {**STAY_WITH_S1_IN_REGION,
                         "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                             _term("region", _expr("security", "In", "S2"))]}})
    snapshot = _snapshot(nodes, [_on("node1", S1), _on("node2", S2)])
    plugin = InterPodAffinity()
    cycle = CycleState()
    assert plugin.pre_filter(cycle, pod, snapshot).status.is_success
    assert plugin.pre_score(cycle, pod, snapshot.node_infos, snapshot) == SUCCESS
    assert [plugin.filter(cycle, pod, i).code for i in snapshot.node_infos] == [Code.SUCCESS, Code.UNSCHEDULABLE]
    clone = cycle.clone()
    assert [plugin.score(clone, pod, i) for i in snapshot.node_infos] == [5, 0]


def test_normalize_without_state_or_nodes_is_a_no_op() -> None:
    plugin = InterPodAffinity()
    scores = [3, -4]
    plugin.normalize_score(CycleState(), _incoming(), scores)
    assert scores == [3, -4]
    assert plugin.score(CycleState(), _incoming(), NodeInfo(_node("n", _A))) == 0


def test_prioritize_nodes_weights_the_normalized_score() -> None:
    nodes = _nodes(_A, _B)
    snapshot = _snapshot(nodes, [_on("node1", S1)])
    pod = _incoming(None, STAY_WITH_S1_IN_REGION)
    out = prioritize_nodes([(InterPodAffinity(), 2)], CycleState(), pod, snapshot.node_infos, snapshot)
    assert [(s.node, s.total) for s in out] == [("node1", 200), ("node2", 0)]
    assert [(p.plugin, p.raw, p.normalized) for s in out for p in s.plugins] == [(NAME, 5, 100), (NAME, 0, 0)]
    cycle = CycleState()
    prioritize_nodes([(InterPodAffinity(), 2)], cycle, _incoming(S2), snapshot.node_infos, snapshot)
    assert NAME in cycle.skip_score


# -- properties -------------------------------------------------------------------------------------

_NS_LABELS = {"a": {"team": "t1"}, "b": {"team": "t2"}}
_NODE_LABELS = st.fixed_dictionaries({}, optional={"region": st.sampled_from(["r1", "r2"]),
                                                   "zone": st.sampled_from(["z1", "z2"])})
_POD_LABELS = st.fixed_dictionaries({}, optional={"app": st.sampled_from(["x", "y"])})
_LABEL_SELECTOR = st.sampled_from([None, {}, {"matchLabels": {"app": "x"}}, _sel(_expr("app", "NotIn", "x"))])
_NS_SELECTOR = st.sampled_from([None, {}, {"matchLabels": {"team": "t1"}}, _sel(_expr("team", "NotIn", "t1"))])


@st.composite
def _terms(draw: st.DrawFn) -> dict[str, Any]:
    term: dict[str, Any] = {"topologyKey": draw(st.sampled_from(["region", "zone", "rack"])),
                            "namespaces": draw(st.sampled_from([[], ["a"], ["", "b"]]))}
    sel, ns_sel = draw(_LABEL_SELECTOR), draw(_NS_SELECTOR)
    if sel is not None:
        term["labelSelector"] = sel
    if ns_sel is not None:
        term["namespaceSelector"] = ns_sel
    return term


_WEIGHTED = st.builds(lambda w, t: {"weight": w, "podAffinityTerm": t}, st.integers(1, 100), _terms())
_AFFINITY = st.one_of(st.none(), st.builds(
    lambda req, pref, anti, req_anti: {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": req,
                        "preferredDuringSchedulingIgnoredDuringExecution": pref},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": anti,
                            "requiredDuringSchedulingIgnoredDuringExecution": req_anti}},
    st.lists(_terms(), max_size=2), st.lists(_WEIGHTED, max_size=2), st.lists(_WEIGHTED, max_size=2),
    st.lists(_terms(), max_size=2)))
_NAMESPACE = st.sampled_from(["", "a", "b"])


def _reference(pod: Pod, snapshot: Snapshot, hard: int, ignore: bool) -> dict[str, dict[str, int]] | None:
    """A literal port of upstream's PreScore (`processExistingPod` over every pod), with the term
    matching written out from the API objects; None for Skip."""
    aff = pod.spec.affinity
    pref = aff.pod_affinity.preferred_during_scheduling_ignored_during_execution if aff and aff.pod_affinity else ()
    anti = (aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
            if aff and aff.pod_anti_affinity else ())
    has_constraints = bool(pref or anti)
    if ignore and not has_constraints:
        return None
    ns_labels = snapshot.namespace_labels.get(pod.metadata.namespace, {})

    def namespaces(owner: Pod, term: PodAffinityTerm) -> set[str]:
        if not term.namespaces and term.namespace_selector is None:
            return {owner.metadata.namespace}
        return set(term.namespaces)

    def incoming_matches(term: PodAffinityTerm, target: Pod) -> bool:
        names = namespaces(pod, term)
        sel = term.namespace_selector
        if sel is not None and (sel.match_labels or sel.match_expressions):
            names |= {n for n, lab in snapshot.namespace_labels.items() if label_selector_matches(sel, lab)}
        in_ns = target.metadata.namespace in names or (sel is not None and label_selector_matches(sel, {}))
        return in_ns and label_selector_matches(term.label_selector, target.metadata.labels)

    def existing_matches(owner: Pod, term: PodAffinityTerm) -> bool:
        sel = term.namespace_selector
        in_ns = pod.metadata.namespace in namespaces(owner, term) or (
            sel is not None and label_selector_matches(sel, ns_labels))
        return in_ns and label_selector_matches(term.label_selector, pod.metadata.labels)

    out: dict[str, dict[str, int]] = {}

    def add(labels: Mapping[str, str], key: str, amount: int) -> None:
        if key in labels:
            bucket = out.setdefault(key, {})
            bucket[labels[key]] = bucket.get(labels[key], 0) + amount

    for info in snapshot.node_infos:
        labels = info.node.metadata.labels
        for existing in (info.pods if has_constraints else info.pods_with_affinity):
            if not labels:
                continue
            for w in pref:
                if incoming_matches(w.pod_affinity_term, existing):
                    add(labels, w.pod_affinity_term.topology_key, w.weight)
            for w in anti:
                if incoming_matches(w.pod_affinity_term, existing):
                    add(labels, w.pod_affinity_term.topology_key, -w.weight)
            e_aff = existing.spec.affinity
            if e_aff is None:
                continue
            if hard > 0 and e_aff.pod_affinity:
                for t in e_aff.pod_affinity.required_during_scheduling_ignored_during_execution:
                    if existing_matches(existing, t):
                        add(labels, t.topology_key, hard)
            for sign, group in ((1, e_aff.pod_affinity), (-1, e_aff.pod_anti_affinity)):
                for w in group.preferred_during_scheduling_ignored_during_execution if group else ():
                    if existing_matches(existing, w.pod_affinity_term):
                        add(labels, w.pod_affinity_term.topology_key, sign * w.weight)
    return out or None


@settings(max_examples=300, deadline=None)
@given(st.lists(_NODE_LABELS, min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 3), _NAMESPACE, _POD_LABELS, _AFFINITY), max_size=8),
       _NAMESPACE, _POD_LABELS, _AFFINITY, st.sampled_from([0, 1, 5]), st.booleans(), st.data())
def test_scores_match_a_literal_port_of_upstream_and_stay_in_range(
        node_labels: list[dict[str, str]], existing: list[tuple[int, str, dict[str, str], dict[str, Any] | None]],
        ns: str, labels: dict[str, str], affinity: dict[str, Any] | None, hard: int, ignore: bool,
        data: st.DataObject) -> None:
    nodes = [_node(f"n{i}", lab) for i, lab in enumerate(node_labels)]
    pods = [_pod(f"n{i % len(nodes)}", lab, aff, pns) for i, pns, lab, aff in existing]
    snapshot = _snapshot(nodes, pods, _NS_LABELS)
    pod = _incoming(labels, affinity, ns=ns)
    feasible = [info for info in snapshot.node_infos if data.draw(st.booleans(), label=f"{info.name} feasible")]

    plugin = InterPodAffinity(hard_pod_affinity_weight=hard, ignore_preferred_terms_of_existing_pods=ignore)
    cycle = CycleState()
    status = plugin.pre_score(cycle, pod, feasible, snapshot)
    want = _reference(pod, snapshot, hard, ignore)
    if want is None:
        assert status.code == Code.SKIP
        return
    assert status == SUCCESS
    raw = [plugin.score(cycle, pod, info) for info in feasible]
    assert raw == [sum(values.get(info.node.metadata.labels[key], 0) for key, values in want.items()
                       if key in info.node.metadata.labels) for info in feasible]
    scores = list(raw)
    plugin.normalize_score(cycle, pod, scores)
    assert all(0 <= s <= MAX_NODE_SCORE for s in scores)
    if raw and max(raw) > min(raw):
        assert scores[raw.index(max(raw))] == MAX_NODE_SCORE
        assert scores[raw.index(min(raw))] == 0
        for a, sa in zip(raw, scores, strict=True):
            for b, sb in zip(raw, scores, strict=True):
                if a <= b:
                    assert sa <= sb
    else:
        assert scores == [0] * len(raw)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-(2**40), 2**40), max_size=12))
def test_normalized_scores_stay_within_0_and_100(raw: list[int]) -> None:
    pod = _incoming(None, STAY_WITH_S1_IN_REGION)
    snapshot = _snapshot(_nodes(_A), [_on("node1", S1)])
    plugin = InterPodAffinity()
    cycle = CycleState()
    assert plugin.pre_score(cycle, pod, snapshot.node_infos, snapshot) == SUCCESS
    scores = list(raw)
    plugin.normalize_score(cycle, pod, scores)
    assert all(0 <= s <= MAX_NODE_SCORE for s in scores)
    if raw and max(raw) > min(raw):
        assert max(scores) == MAX_NODE_SCORE
        assert min(scores) == 0


# -- the existing pods' term index (per snapshot, carried through `with_node_info`) ---------------

_OPS = st.lists(st.tuples(st.sampled_from(["add", "remove", "relabel"]), st.integers(0, 3), _NAMESPACE,
                          _POD_LABELS, _AFFINITY, _NODE_LABELS), max_size=6)


def _score_map(pod: Pod, snapshot: Snapshot, hard: int) -> dict[str, dict[str, int]] | None:
    cycle = CycleState()
    status = InterPodAffinity(hard_pod_affinity_weight=hard).pre_score(cycle, pod, snapshot.node_infos, snapshot)
    if status.code == Code.SKIP:
        return None
    return cycle.read("PreScore" + NAME).topology_score


def _literal_existing(pod: Pod, snapshot: Snapshot, hard: int) -> dict[str, dict[str, int]]:
    """The unindexed walk over every existing pod with affinity (`_add_existing_terms`)."""
    out: dict[str, dict[str, int]] = {}
    ns_labels = snapshot.namespace_labels.get(pod.metadata.namespace, {})
    ipa_score._add_existing_terms(out, pod, ns_labels, snapshot.node_infos, int32(hard))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(_NODE_LABELS, min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 3), _NAMESPACE, _POD_LABELS, _AFFINITY), max_size=8),
       _OPS, st.lists(st.tuples(_NAMESPACE, _POD_LABELS, _AFFINITY), min_size=1, max_size=3),
       st.sampled_from([0, 1, 5, 2**31 + 3, 2**32 + 7]), st.booleans(), st.randoms(use_true_random=False))
def test_the_index_carried_through_simulations_scores_as_a_fresh_walk(
        node_labels: list[dict[str, str]], existing: list[tuple[int, str, dict[str, str], dict[str, Any] | None]],
        ops: list[tuple[str, int, str, dict[str, str], dict[str, Any] | None, dict[str, str]]],
        incoming: list[tuple[str, dict[str, str], dict[str, Any] | None]], hard: int, prebuild: bool,
        rnd: Any) -> None:
    # Replicas of a workload share terms (the small strategy space makes equal signatures common);
    # each step replaces one NodeInfo as the planner and drain do, and every snapshot along the way —
    # including the earlier ones, whose index must not change — scores as the literal walk and as
    # the literal port of upstream does. Without `prebuild` no snapshot has the index when the chain
    # is made: the first one scored derives it from the root (`Snapshot.index`), in random order.
    nodes = [_node(f"n{i}", lab) for i, lab in enumerate(node_labels)]
    pods = [_pod(f"n{i % len(nodes)}", lab, aff, pns) for i, pns, lab, aff in existing]
    snapshot = _snapshot(nodes, pods, _NS_LABELS)
    probes = [_incoming(lab, aff, ns=ns) for ns, lab, aff in incoming]
    chain = [snapshot]
    if prebuild:
        for pod in probes:
            _score_map(pod, snapshot, hard)  # builds the index on the first snapshot
    for op, i, ns, labels, aff, new_labels in ops:
        info = snapshot.node_infos[i % len(nodes)].clone()
        if op == "add":
            info.add_pod(_pod(info.name, labels, aff, ns))
        elif op == "remove" and info.pods:
            info.remove_pod(info.pods[i % len(info.pods)])
        elif op == "relabel":
            info.node = _node(info.name, new_labels)
        snapshot = snapshot.with_node_info(info)
        chain.append(snapshot)
    rnd.shuffle(chain)
    for snap in chain:
        # The namespaces' lists of terms, carried down, are those built from the index's terms, in order.
        carried = snap.index(EXISTING_TERMS_INDEX, ExistingTermsIndex.build)
        assert carried.by_namespace == ExistingTermsIndex(carried.groups).by_namespace
        fresh = Snapshot(list(snap.node_infos), dict(snap.by_name), dict(snap.namespace_labels))
        for pod in probes:
            got = _score_map(pod, snap, hard)
            assert got == _score_map(pod, fresh, hard)
            want = _reference(pod, snap, int32(hard), False)
            assert got == want
            if not (pod.spec.affinity and (pod.spec.affinity.pod_affinity or pod.spec.affinity.pod_anti_affinity)):
                assert (got or {}) == _literal_existing(pod, snap, hard)
            # The same index, for the existing pods' required anti-affinity (PreFilter).
            ns_labels = snap.namespace_labels.get(pod.metadata.namespace, {})
            anti = snap.index(EXISTING_ANTI_INDEX, ExistingAntiAffinityIndex.build)
            assert anti.counts(pod, ns_labels) == ipa._existing_anti_affinity_counts(
                pod, ns_labels, snap.have_pods_with_required_anti_affinity())
