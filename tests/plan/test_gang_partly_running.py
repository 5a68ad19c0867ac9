"""A gang partly running: its running members count toward minCount, and when they and the pending
member(s) that could be placed stay short of it, nothing is evicted — with one pending member as
with several (the case `preempt` meets when it plans a gang again after some members were bound)."""

from __future__ import annotations

from kresched.plan.queue import pending_pods_to_plan, plan_pending
from tests.builders import gang_member, make_node, make_pod, make_pod_group, make_state


def test_one_pending_member_that_cannot_bring_its_gang_to_minCount_evicts_nothing():
    # Four workers, minCount 4: two run on node-a, one is gone, the last one pending needs node-b's
    # low pod evicted. Three would run: short of minCount, so nothing is evicted for it.
    running = [make_pod(f"train-{i}", node="node-a", cpu="1", priority=1000, owner="Job/train",
                        **gang_member("train")) for i in range(2)]
    pending = make_pod("train-3", cpu="3", priority=1000, owner="Job/train", **gang_member("train"))
    low = make_pod("low", node="node-b", cpu="3", priority=1, grace=5)
    state = make_state([make_node("node-a", cpu="2"), make_node("node-b", cpu="4")], [*running, pending, low],
                       pod_groups=[make_pod_group("train", min_count=4)])
    [plan] = plan_pending(state, pending_pods_to_plan(state, all_pending=True))
    assert plan.outcome == "infeasible"
    assert not plan.victims
    assert plan.gang is not None
    assert not plan.gang.kept
    assert plan.message == ("3 of 3 members of PodGroup default/train would run (2 running, 1 placed after "
                            "evictions), minCount 4; a gang runs all or nothing: nothing evicted")
