"""NodeAffinity: nodeSelector AND required node affinity; PreFilter narrows to named nodes.

Also the selector semantics it relies on (kresched.model.selectors), where they had to be brought
in line with apimachinery's `labels.NewRequirement` / `Requirement.Matches`.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kresched.model.selectors import (
    node_field_requirement_matches,
    node_requirement_matches,
    node_selector_term_matches,
)
from kresched.model.specs import NodeSelectorRequirement, NodeSelectorTerm
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_affinity import ERR_REASON_CONFLICT, ERR_REASON_POD, NAME, NodeAffinity
from kresched.sched.node_info import NodeInfo
from kresched.sched.runner import find_nodes_that_fit, fit_error_message
from tests.builders import make_node, make_pod, make_state

SKIP = PreFilterResult(Status(Code.SKIP))
ALL_NODES = PreFilterResult()


def _rejected(*details: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_POD,), NAME, details=details)


def _expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def _name_in(*names: str) -> dict[str, Any]:
    return _expr("metadata.name", "In", *names)


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def _req(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    return msgspec.convert(_expr(key, operator, *values), NodeSelectorRequirement)


@pytest.mark.parametrize(
    ("node_selector", "affinity", "want"),
    [
        pytest.param(None, None, SKIP, id="a pod without nodeSelector or required affinity skips the filter"),
        pytest.param(None, {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [_expr("zone", "In", "a")]}}]}}, SKIP,
            id="preferred node affinity alone skips the filter"),
        pytest.param({"disk": "ssd"}, None, ALL_NODES, id="a nodeSelector filters every node"),
        pytest.param(None, _required({"matchExpressions": [_expr("zone", "In", "a")]}), ALL_NODES,
                     id="required label expressions filter every node"),
        # The API server allows one value per matchFields requirement
        # (ValidateNodeFieldSelectorRequirement); several nodes take several terms.
        pytest.param(None, _required({"matchFields": [_name_in("n1")]}),
                     PreFilterResult(node_names=frozenset({"n1"})),
                     id="matchFields metadata.name In narrows the search to that node"),
        pytest.param(None, _required({"matchFields": [_name_in("n1")]}, {"matchFields": [_name_in("n3")]}),
                     PreFilterResult(node_names=frozenset({"n1", "n3"})),
                     id="names from ORed terms are united"),
        pytest.param(None, _required({"matchFields": [_name_in("n2"), _name_in("n2")]},
                                     {"matchFields": [_name_in("n1"), _name_in("n3")]}),
                     PreFilterResult(node_names=frozenset({"n2"})),
                     id="names within one term are intersected"),
        pytest.param(None, _required({"matchFields": [_name_in("n1")]},
                                     {"matchExpressions": [_expr("zone", "In", "a")]}), ALL_NODES,
                     id="a term that names no node keeps every node a candidate"),
        pytest.param(None, _required({"matchFields": [_expr("metadata.name", "NotIn", "n1")]}), ALL_NODES,
                     id="metadata.name NotIn does not narrow the search"),
        pytest.param(None, _required({"matchFields": [_name_in("ghost")]}),
                     PreFilterResult(node_names=frozenset({"ghost"})),
                     id="names of nodes that do not exist are kept for the framework to drop"),
        pytest.param(None, _required({"matchFields": [_name_in("n1"), _name_in("n2")]}),
                     PreFilterResult(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,), NAME)),
                     id="terms naming contradictory nodes reject the pod with pod affinity terms conflict"),
    ],
)
def test_pre_filter(node_selector: dict[str, str] | None, affinity: dict[str, Any] | None,
                    want: PreFilterResult) -> None:
    pod = make_pod(node_selector=node_selector, affinity=affinity)
    snapshot = Snapshot.from_state(make_state([make_node("n1"), make_node("n2")]))
    assert NodeAffinity().pre_filter(CycleState(), pod, snapshot) == want


NODE_LABELS = {"zone": "a", "disk": "ssd", "cores": "16"}


@pytest.mark.parametrize(
    ("node_selector", "affinity", "want"),
    [
        pytest.param({"disk": "ssd"}, None, SUCCESS, id="a node with the selected label fits"),
        pytest.param({"disk": "hdd"}, None, _rejected("nodeSelector disk=hdd: node has disk=ssd"),
                     id="a node with another value for a selected label is rejected, unresolvably"),
        pytest.param({"gpu": "true"}, None, _rejected("nodeSelector gpu=true: node has no label gpu"),
                     id="a node without a selected label is rejected"),
        pytest.param({"disk": "ssd"}, _required({"matchExpressions": [_expr("zone", "In", "b")]}),
                     _rejected("required term 0: zone In ['b'] (node has zone=a)"),
                     id="nodeSelector and required affinity must both match"),
        pytest.param(None, _required({"matchExpressions": [_expr("zone", "In", "b")]},
                                     {"matchExpressions": [_expr("zone", "In", "a")]}), SUCCESS,
                     id="required terms are ORed"),
        pytest.param(None, _required({"matchExpressions": [_expr("zone", "In", "a"), _expr("disk", "In", "hdd")]}),
                     _rejected("required term 0: disk In ['hdd'] (node has disk=ssd)"),
                     id="expressions within a term are ANDed"),
        pytest.param(None, _required({"matchExpressions": [_expr("zone", "NotIn", "b", "c")]}), SUCCESS,
                     id="NotIn matches a node whose value is not listed"),
        pytest.param(None, _required({"matchExpressions": [_expr("rack", "NotIn", "r1")]}), SUCCESS,
                     id="NotIn matches a node without the label"),
        pytest.param(None, _required({"matchExpressions": [_expr("disk", "Exists")]}), SUCCESS,
                     id="Exists matches a node with the label"),
        pytest.param(None, _required({"matchExpressions": [_expr("gpu", "DoesNotExist")]}), SUCCESS,
                     id="DoesNotExist matches a node without the label"),
        pytest.param(None, _required({"matchExpressions": [_expr("cores", "Gt", "8")]}), SUCCESS,
                     id="Gt compares label values as integers"),
        pytest.param(None, _required({"matchExpressions": [_expr("cores", "Lt", "8")]}),
                     _rejected("required term 0: cores Lt ['8'] (node has cores=16)"),
                     id="Lt rejects a greater label value"),
        pytest.param(None, _required({"matchExpressions": [_expr("zone", "Gt", "1")]}),
                     _rejected("required term 0: zone Gt ['1'] (node has zone=a)"),
                     id="Gt never matches a non-integer label value"),
        pytest.param(None, _required({"matchFields": [_name_in("node-a")]}), SUCCESS,
                     id="matchFields metadata.name In matches the named node"),
        pytest.param(None, _required({"matchFields": [_expr("metadata.name", "NotIn", "node-a")]}),
                     _rejected("required term 0: metadata.name NotIn ['node-a'] (node is node-a)"),
                     id="matchFields metadata.name NotIn excludes the named node"),
        pytest.param(None, _required({}), _rejected("required term 0: empty term matches no node"),
                     id="an empty term matches no node"),
        pytest.param(None, _required(), _rejected("required node affinity has no terms"),
                     id="required node affinity without terms matches no node"),
    ],
)
def test_filter(node_selector: dict[str, str] | None, affinity: dict[str, Any] | None, want: Status) -> None:
    pod = make_pod(node_selector=node_selector, affinity=affinity)
    node = make_node("node-a", labels=NODE_LABELS)
    assert NodeAffinity().filter(CycleState(), pod, NodeInfo(node)) == want


@pytest.mark.parametrize(
    ("req", "value", "want"),
    [
        pytest.param(_req("n", "Gt", "5"), "1_000", False,
                     id="Gt does not read 1_000 as an integer (Go's ParseInt refuses underscores)"),
        pytest.param(_req("n", "Gt", "5"), str(2**63), False,
                     id="Gt does not match a label value beyond int64"),
        pytest.param(_req("n", "Lt", "-1"), "-5", False,
                     id="Gt/Lt with a value that is not a valid label value never matches"),
        pytest.param(_req("n", "Lt", "10"), "007", True, id="Lt reads a label value with leading zeros in base 10"),
        pytest.param(_req("n", "Gt", "1", "2"), "5", False, id="Gt with two values never matches"),
        pytest.param(_req("disk", "In", "ssd", "not valid!"), "ssd", False,
                     id="In with an invalid label value among its values never matches"),
        pytest.param(_req("disk", "NotIn"), None, False, id="NotIn without values never matches"),
        pytest.param(_req("disk", "In"), "ssd", False, id="In without values never matches"),
        pytest.param(_req("disk", "Exists", "ssd"), "ssd", False, id="Exists with values never matches"),
        pytest.param(_req("disk", "DoesNotExist", "ssd"), None, False, id="DoesNotExist with values never matches"),
        pytest.param(_req("disk", "In", ""), "", True, id="In matches an empty label value"),
        pytest.param(_req("disk", "Matches", "ssd"), "ssd", False, id="an unknown operator never matches"),
    ],
)
def test_label_requirement(req: NodeSelectorRequirement, value: str | None, want: bool) -> None:
    assert node_requirement_matches(req, value) is want


@pytest.mark.parametrize(
    ("req", "want"),
    [
        pytest.param(_req("metadata.name", "In", "node-a"), True, id="metadata.name In the node's name matches"),
        pytest.param(_req("metadata.name", "In", "node-a", "node-b"), False,
                     id="a field requirement with two values never matches (upstream cannot parse it)"),
        pytest.param(_req("metadata.name", "Exists"), False, id="a field requirement must be In or NotIn"),
        pytest.param(_req("spec.unschedulable", "In", ""), True,
                     id="a field other than metadata.name reads as empty, as fields.Set.Get does"),
        pytest.param(_req("spec.unschedulable", "NotIn", "true"), True,
                     id="NotIn on a field other than metadata.name compares with empty"),
    ],
)
def test_field_requirement(req: NodeSelectorRequirement, want: bool) -> None:
    assert node_field_requirement_matches(req, "node-a") is want


def test_a_term_with_fields_and_expressions_needs_both() -> None:
    term = NodeSelectorTerm(match_expressions=(_req("zone", "In", "a"),),
                            match_fields=(_req("metadata.name", "In", "node-b"),))
    assert not node_selector_term_matches(term, "node-a", {"zone": "a"})
    assert node_selector_term_matches(term, "node-b", {"zone": "a"})


def test_nodes_outside_the_named_ones_are_reported_as_the_scheduler_does() -> None:
    state = make_state([make_node("n1", labels={"zone": "a"}), make_node("n2", labels={"zone": "b"}),
                        make_node("n3", labels={"zone": "b"})])
    zone_b = [_expr("zone", "In", "b")]
    pod = make_pod(affinity=_required({"matchFields": [_name_in("n1")], "matchExpressions": zone_b},
                                      {"matchFields": [_name_in("n2")], "matchExpressions": zone_b}))
    diag, _ = find_nodes_that_fit([NodeAffinity()], pod, Snapshot.from_state(state))
    assert diag.feasible == ["n2"]
    assert set(diag.node_to_status) == {"n1"}
    assert fit_error_message(diag) == (
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


def test_conflicting_terms_fail_pre_filter_for_every_node() -> None:
    state = make_state([make_node("n1"), make_node("n2")])
    pod = make_pod(affinity=_required({"matchFields": [_name_in("n1"), _name_in("n2")]}))
    diag, _ = find_nodes_that_fit([NodeAffinity()], pod, Snapshot.from_state(state))
    assert diag.feasible == []
    assert fit_error_message(diag) == "0/2 nodes are available: pod affinity terms conflict."
