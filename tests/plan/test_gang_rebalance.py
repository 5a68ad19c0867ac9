"""Rebalance never moves a member whose eviction stops its gang (issue 43, item 4): a running gang
is a budget (running members less minCount), and a move past it is refused with why."""

from __future__ import annotations

import pytest

from kresched.plan.rebalance import plan_rebalance
from kresched.plan.rebalance_plans import RebalanceOptions
from tests.builders import gang_member, make_node, make_pod, make_pod_group, make_state

UTIL = RebalanceOptions(objectives=("utilisation",))


def workers(n: int) -> list:
    # Node a at 75 % CPU, node b empty: the utilisation objective moves one pod off a.
    return [make_pod(f"job-{i}", node="a", cpu="1", owner="Job/job", **gang_member("job")) for i in range(n)]


@pytest.mark.parametrize(("min_count", "mode", "moved"), [
    pytest.param(3, None, [], id="at its minCount: no member moves"),
    pytest.param(2, "PodGroup", [], id="disruptionMode PodGroup: no member moves"),
    pytest.param(2, None, ["default/job-0"], id="one member to spare: it may move"),
])
def test_a_move_that_would_stop_a_gang_is_refused_and_says_which(min_count, mode, moved):
    state = make_state([make_node("a"), make_node("b")], workers(3),
                       pod_groups=[make_pod_group("job", min_count=min_count, disruption_mode=mode)])
    plan = plan_rebalance(state, UTIL)
    assert [m.pod.key for m in plan.moves] == moved
    if not moved:
        reasons = {s.pod.key: s.reason for s in plan.skipped}
        assert reasons["default/job-0"] == (f"moving it stops its gang PodGroup default/job (3 running, minCount "
                                            f"{min_count}: a gang runs all or nothing)")
