"""NodeName: a pod naming its node fits only that node."""

from __future__ import annotations

import pytest

from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.node_name import ERR_REASON, NAME, NodeName
from kresched.sched.runner import find_nodes_that_fit
from tests.builders import make_node, make_pod, make_state

REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,), NAME)


@pytest.mark.parametrize(
    ("pod_node", "node", "want"),
    [
        pytest.param("", "node-a", SUCCESS, id="a pod without spec.nodeName fits any node"),
        pytest.param("node-a", "node-a", SUCCESS, id="a pod naming this node fits it"),
        pytest.param("node-b", "node-a", REJECTED, id="a pod naming another node is rejected, unresolvably"),
    ],
)
def test_filter(pod_node: str, node: str, want: Status) -> None:
    pod = make_pod(node=pod_node, phase="Pending")
    assert NodeName().filter(CycleState(), pod, NodeInfo(make_node(node))) == want


@pytest.mark.parametrize(
    ("pod_node", "want"),
    [
        pytest.param("", PreFilterResult(), id="without spec.nodeName every node is a candidate"),
        pytest.param("node-b", PreFilterResult(node_names=frozenset({"node-b"})),
                     id="with spec.nodeName only that node is a candidate"),
    ],
)
def test_pre_filter(pod_node: str, want: PreFilterResult) -> None:
    snapshot = Snapshot.from_state(make_state([make_node("node-a"), make_node("node-b")]))
    assert NodeName().pre_filter(CycleState(), make_pod(node=pod_node, phase="Pending"), snapshot) == want


def test_other_nodes_are_left_out_by_pre_filter() -> None:
    state = make_state([make_node("node-a"), make_node("node-b"), make_node("node-c")])
    pod = make_pod(node="node-b", phase="Pending")
    diag, _ = find_nodes_that_fit([NodeName()], pod, Snapshot.from_state(state))
    assert diag.feasible == ["node-b"]
    assert diag.status_of("node-a").code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
