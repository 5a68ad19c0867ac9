"""The preemption node choice against upstream's own table.

Ported from kube-scheduler v1.36's `TestSelectBestCandidate`
(pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go): the same nodes,
pods, priorities, requests and expected nodes, run through kresched's planner. Adapted where a
snapshot cannot hold upstream's input:
- the start times `epochTime1..6` are nanoseconds apart upstream; `status.startTime` is written
  with second precision, so here they are seconds apart (the same order);
- every pod's grace period is 5 s, so that all options are in seed 000's tier 1 and kresched's
  own criteria (tiers, shortened graces) do not come into play: the table tests the choice
  *within* a tier, which must be upstream's.
"""

from __future__ import annotations

import math

import pytest

from kresched.plan.choice import PRIORITY_OFFSET, cannot_beat
from kresched.plan.planner import plan_pod
from tests.builders import make_node, make_pod, make_state

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = ("100m", "100"), ("200m", "200"), ("300m", "300"), ("500m", "500")


def _t(second: int) -> str:
    return f"1970-01-01T00:00:{second:02d}Z"


def p(name: str, node: str, priority: int, res: tuple[str, str], start: int = 0):
    return make_pod(name, node=node, priority=priority, cpu=res[0], memory=res[1], grace=5, start_time=_t(start))


CASES = [
    pytest.param(["node1", "node2"], HIGH, LARGE, [
        p("p1", "node1", MID, LARGE), p("p2", "node2", MID, LARGE)],
        {"node1", "node2"}, id="a pod that fits on both nodes when lower priority pods are preempted"),
    pytest.param(["node1", "node2", "node3"], HIGH, VERY_LARGE, [
        p("p1.1", "node1", MID, MEDIUM), p("p1.2", "node1", MID, LARGE),
        p("p2.1", "node2", MID, MEDIUM), p("p2.2", "node2", LOW, MEDIUM),
        p("p3.1", "node3", LOW, MEDIUM), p("p3.2", "node3", LOW, MEDIUM)],
        {"node3"}, id="node with min highest priority pod is picked"),
    pytest.param(["node1", "node2", "node3"], HIGH, VERY_LARGE, [
        p("p1.1", "node1", MID, MEDIUM), p("p1.2", "node1", MID, LARGE),
        p("p2.1", "node2", MID, LARGE), p("p2.2", "node2", LOW, MEDIUM),
        p("p3.1", "node3", MID, MEDIUM), p("p3.2", "node3", MID, MEDIUM)],
        {"node2"}, id="when highest priorities are the same, minimum sum of priorities is picked"),
    pytest.param(["node1", "node2", "node3"], HIGH, VERY_LARGE, [
        p("p1.1", "node1", MID, SMALL), p("p1.2", "node1", NEG, SMALL),
        p("p1.3", "node1", MID, SMALL), p("p1.4", "node1", NEG, SMALL),
        p("p2.1", "node2", MID, LARGE), p("p2.2", "node2", NEG, MEDIUM),
        p("p3.1", "node3", MID, MEDIUM), p("p3.2", "node3", NEG, SMALL), p("p3.3", "node3", LOW, SMALL)],
        {"node2"}, id="when highest priority and sum are the same, minimum number of pods is picked"),
    pytest.param(["node1", "node2", "node3"], HIGH, VERY_LARGE, [
        p("p1.1", "node1", MID, SMALL), p("p1.2", "node1", NEG, SMALL), p("p1.3", "node1", NEG, SMALL),
        p("p2.1", "node2", MID, LARGE), p("p2.2", "node2", NEG, MEDIUM),
        p("p3.1", "node3", MID, MEDIUM), p("p3.2", "node3", NEG, SMALL), p("p3.3", "node3", LOW, SMALL)],
        {"node2"}, id="sum of adjusted priorities is considered"),
    pytest.param(["node1", "node2", "node3", "node4"], VERY_HIGH, VERY_LARGE, [
        p("p1.1", "node1", MID, SMALL), p("p1.2", "node1", LOW, SMALL), p("p1.3", "node1", LOW, SMALL),
        p("p2.1", "node2", HIGH, LARGE),
        p("p3.1", "node3", MID, MEDIUM), p("p3.2", "node3", LOW, SMALL), p("p3.3", "node3", LOW, SMALL),
        p("p3.4", "node3", LOW, MEDIUM),
        p("p4.1", "node4", MID, MEDIUM), p("p4.2", "node4", MID, SMALL), p("p4.3", "node4", MID, SMALL),
        p("p4.4", "node4", NEG, SMALL)],
        {"node1"}, id="non-overlapping lowest high priority, sum priorities, and number of pods"),
    pytest.param(["node1", "node2", "node3"], HIGH, VERY_LARGE, [
        p("p1.1", "node1", MID, MEDIUM, 2), p("p1.2", "node1", MID, MEDIUM, 2),
        p("p2.1", "node2", MID, MEDIUM, 3), p("p2.2", "node2", MID, MEDIUM, 3),
        p("p3.1", "node3", MID, MEDIUM, 1), p("p3.2", "node3", MID, MEDIUM, 1)],
        {"node2"}, id="same priority, same number of victims, different start time for each node's pod"),
    pytest.param(["node1", "node2", "node3"], HIGH, VERY_LARGE, [
        p("p1.1", "node1", MID, MEDIUM, 4), p("p1.2", "node1", MID, MEDIUM, 2),
        p("p2.1", "node2", MID, MEDIUM, 5), p("p2.2", "node2", MID, MEDIUM, 1),
        p("p3.1", "node3", MID, MEDIUM, 3), p("p3.2", "node3", MID, MEDIUM, 6)],
        {"node3"}, id="same priority, same number of victims, different start time for all pods"),
    pytest.param(["node1", "node2", "node3"], HIGH, VERY_LARGE, [
        p("p1.1", "node1", LOW, MEDIUM, 4), p("p1.2", "node1", MID, MEDIUM, 2),
        p("p2.1", "node2", MID, MEDIUM, 6), p("p2.2", "node2", LOW, MEDIUM, 1),
        p("p3.1", "node3", LOW, MEDIUM, 3), p("p3.2", "node3", MID, MEDIUM, 5)],
        {"node2"}, id="different priority, same number of victims, different start time for all pods"),
]


@pytest.mark.parametrize(("nodes", "priority", "wants", "pods", "expected"), CASES)
def test_select_best_candidate(nodes, priority, wants, pods, expected) -> None:
    state = make_state([make_node(n, cpu=VERY_LARGE[0], memory=VERY_LARGE[1]) for n in nodes],
                       [*pods, make_pod("p", priority=priority, cpu=wants[0], memory=wants[1])])
    plan = plan_pod(state, state.pod("default/p"))
    assert plan.outcome == "evict", plan.message
    assert plan.node in expected, plan.message


def test_two_victims_of_priority_100_beat_three_with_a_lower_raw_sum() -> None:
    """The example of the issue that brought this rule in: {100, 100} on node a against
    {100, 0, 0} on node b — the scheduler evicts two pods on a (each victim adds MaxInt32+1)."""
    pods = [p("a1", "a", 100, ("1", "1")), p("a2", "a", 100, ("1", "1")),
            p("b1", "b", 100, ("1", "1")), p("b2", "b", 0, ("500m", "1")), p("b3", "b", 0, ("500m", "1"))]
    state = make_state([make_node("a", cpu="2", memory="2"), make_node("b", cpu="2", memory="2")],
                       [*pods, make_pod("p", priority=1000, cpu="2", memory="2")])
    plan = plan_pod(state, state.pod("default/p"))
    assert (plan.node, sorted(v.pod.name for v in plan.victims)) == ("a", ["a1", "a2"])
    # The words say what was compared: the raw sums alone (200 against 100) would read backwards.
    assert plan.decided_by == "a lower sum of victim priorities than b (2^31 a victim: 2 victims against 3)"
    assert [(r.node, r.reason) for r in plan.runners_up] == [
        ("b", "sum of victim priorities: 100 + 3×2^31 vs 200 + 2×2^31 on a")]


def test_one_victim_against_two_is_said_in_the_singular() -> None:
    pods = [p("a1", "a", LOW, ("2", "1")), p("b1", "b", LOW, ("1", "1")), p("b2", "b", LOW, ("1", "1"))]
    state = make_state([make_node("a", cpu="2", memory="2"), make_node("b", cpu="2", memory="2")],
                       [*pods, make_pod("p", priority=HIGH, cpu="2", memory="1")])
    plan = plan_pod(state, state.pod("default/p"))
    assert plan.decided_by == "a lower sum of victim priorities than b (2^31 a victim: 1 victim against 2)"


def test_equal_priorities_fewer_victims_win_on_the_sum_and_the_words_say_why() -> None:
    """Recorded on the real control plane: every victim of priority 0, two on a node against three
    on the others. The sum decides (each victim adds MaxInt32+1); its words name the counts, not "0
    vs 0"."""
    pods = [p("a1", "a", LOW, ("1", "1")), p("a2", "a", LOW, ("1", "1")),
            p("b1", "b", LOW, ("1", "1")), p("b2", "b", LOW, ("500m", "1")), p("b3", "b", LOW, ("500m", "1"))]
    state = make_state([make_node("a", cpu="2", memory="2"), make_node("b", cpu="2", memory="2")],
                       [*pods, make_pod("p", priority=HIGH, cpu="2", memory="2")])
    plan = plan_pod(state, state.pod("default/p"))
    assert (plan.node, sorted(v.pod.name for v in plan.victims)) == ("a", ["a1", "a2"])
    assert plan.decided_by == "a lower sum of victim priorities than b (2^31 a victim: 2 victims against 3)"
    assert [(r.node, r.reason) for r in plan.runners_up] == [
        ("b", "sum of victim priorities: 0 + 3×2^31 vs 0 + 2×2^31 on a")]


@pytest.mark.parametrize(("bound", "words"), [
    pytest.param((0, 0, 0, 3 * PRIORITY_OFFSET, 3), "sum of victim priorities: at least 0 + 3×2^31 vs 0 + 2×2^31 on a",
                 id="more victims at best: the 2^31 each adds is shown"),
    pytest.param((0, 0, 0, 2 * PRIORITY_OFFSET + 100, 2), "sum of victim priorities: at least 100 vs 0 on a",
                 id="as many victims: their own priorities"),
])
def test_a_pruned_nodes_words_on_the_priority_sum(bound: tuple, words: str) -> None:
    best = (0, 0, 0, 2 * PRIORITY_OFFSET, 2, -1.0, 0.5, 0, "a")
    assert cannot_beat((*bound, -math.inf, 0.0, 0, "b"), best) == words
