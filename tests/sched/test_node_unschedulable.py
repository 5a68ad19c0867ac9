"""NodeUnschedulable: cordoned nodes reject pods that do not tolerate the unschedulable taint."""

from __future__ import annotations

from typing import Any

import pytest

from kresched.model.specs import Taint
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.node_unschedulable import (
    ERR_REASON_UNSCHEDULABLE,
    NAME,
    UNSCHEDULABLE_TAINT,
    NodeUnschedulable,
)
from kresched.sched.runner import find_nodes_that_fit, fit_error_message
from tests.builders import make_node, make_pod, make_state

REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,), NAME)
KEY = "node.kubernetes.io/unschedulable"


def _filter(pod_tolerations: list[dict[str, Any]], unschedulable: bool) -> Status:
    pod = make_pod(tolerations=pod_tolerations)
    node = make_node(unschedulable=unschedulable)
    return NodeUnschedulable().filter(CycleState(), pod, NodeInfo(node))


@pytest.mark.parametrize(
    ("tolerations", "unschedulable", "want"),
    [
        pytest.param([], False, SUCCESS, id="a schedulable node takes a pod without tolerations"),
        pytest.param([], True, REJECTED, id="a cordoned node rejects a pod without tolerations, unresolvably"),
        pytest.param([{"key": KEY, "operator": "Exists", "effect": "NoSchedule"}], True, SUCCESS,
                     id="a pod tolerating the unschedulable NoSchedule taint passes a cordoned node"),
        pytest.param([{"key": KEY, "operator": "Exists"}], True, SUCCESS,
                     id="a toleration without effect covers the NoSchedule unschedulable taint"),
        pytest.param([{"operator": "Exists"}], True, SUCCESS,
                     id="a toleration of every key passes a cordoned node"),
        pytest.param([{"key": KEY, "operator": "Equal", "value": "", "effect": "NoSchedule"}], True, SUCCESS,
                     id="Equal with an empty value matches the unschedulable taint, whose value is empty"),
        pytest.param([{"key": KEY, "operator": "Equal", "value": "true", "effect": "NoSchedule"}], True, REJECTED,
                     id="Equal with a non-empty value does not match the unschedulable taint"),
        pytest.param([{"key": KEY, "operator": "Exists", "effect": "NoExecute"}], True, REJECTED,
                     id="a NoExecute toleration does not cover the NoSchedule unschedulable taint"),
        pytest.param([{"key": "other", "operator": "Exists"}], True, REJECTED,
                     id="a toleration of another key does not help on a cordoned node"),
    ],
)
def test_filter(tolerations: list[dict[str, Any]], unschedulable: bool, want: Status) -> None:
    assert _filter(tolerations, unschedulable) == want


def test_the_unschedulable_taint_is_upstreams() -> None:
    assert Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule") == UNSCHEDULABLE_TAINT


def test_pre_filter_keeps_every_node() -> None:
    snapshot = Snapshot.from_state(make_state([make_node()]))
    assert NodeUnschedulable().pre_filter(CycleState(), make_pod(), snapshot) == PreFilterResult()


def test_the_scheduler_message_counts_cordoned_nodes() -> None:
    state = make_state([make_node("a", unschedulable=True), make_node("b", unschedulable=True), make_node("c")])
    diag, _ = find_nodes_that_fit([NodeUnschedulable()], make_pod(), Snapshot.from_state(state))
    assert diag.feasible == ["c"]
    assert fit_error_message(diag) == "0/3 nodes are available: 2 node(s) were unschedulable."
