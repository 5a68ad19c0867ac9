"""Gangs in a plan: all or nothing (design: "Gangs"; issue 43, items 3 and 4).

A gang's pending members are planned as one: evictions only when at least minCount members would
run (those running count), none otherwise; a victim that stops a running gang is a violation, as
an overspent PodDisruptionBudget is.
"""

from __future__ import annotations

import pytest

from kresched.plan.planner import Planner
from kresched.plan.queue import pending_pods_to_plan, plan_pending
from tests.builders import gang_member, make_node, make_pdb, make_pod, make_pod_group, make_state

LOW = 100
HIGH = 1000


def _workers(n: int, group: str = "train", *, cpu: str = "3", flavor: str = "workload", **kw) -> list:
    return [make_pod(f"{group}-{i}", cpu=cpu, priority=HIGH, owner=f"Job/{group}", **gang_member(group, flavor=flavor),
                     **kw) for i in range(n)]


def _holders(nodes: list[str], cpu: str = "2", priority: int = LOW) -> list:
    # Bare pods: nothing replaces them (a replacement would take room elsewhere in the plan).
    return [make_pod(f"low-{n}", node=n, cpu=cpu, priority=priority, grace=5, owner=None) for n in nodes]


NODES = ["node-a", "node-b", "node-c"]


@pytest.mark.parametrize("flavor", ["workload", "coscheduling", "volcano"])
def test_a_gang_that_cannot_start_evicts_nothing_and_says_how_many_would_fit(flavor):
    # Three 4-CPU nodes, each with a 2-CPU low-priority pod; 4 workers of 3 CPU, minCount 4: at most
    # 3 can be placed, so evicting for them destroys three pods for nothing.
    api = {"workload": "scheduling.k8s.io/v1alpha2", "coscheduling": "scheduling.x-k8s.io/v1alpha1",
           "volcano": "scheduling.volcano.sh/v1beta1"}[flavor]
    state = make_state([make_node(n) for n in NODES], [*_holders(NODES), *_workers(4, flavor=flavor)],
                       pod_groups=[make_pod_group("train", min_count=4, api=api)])
    plans = plan_pending(state, pending_pods_to_plan(state, all_pending=True))
    assert [p.outcome for p in plans] == ["infeasible"] * 4
    assert not any(p.victims for p in plans)
    assert plans[0].message == ("3 of 4 members of PodGroup default/train fit after evictions (minCount 4); a gang "
                                "runs all or nothing: nothing evicted")
    assert plans[0].gang is not None
    assert not plans[0].gang.kept
    assert plans[0].gang.key == "PodGroup default/train"


def test_a_gang_that_can_start_is_planned_whole_with_every_eviction_it_needs():
    state = make_state([make_node(n) for n in NODES], [*_holders(NODES), *_workers(3)],
                       pod_groups=[make_pod_group("train", min_count=3)])
    plans = plan_pending(state, pending_pods_to_plan(state, all_pending=True))
    assert [p.outcome for p in plans] == ["evict"] * 3
    assert sorted(p.node for p in plans) == NODES
    assert sorted(v.pod.name for p in plans for v in p.victims) == ["low-node-a", "low-node-b", "low-node-c"]
    assert plans[0].gang is not None
    assert plans[0].gang.kept
    assert plans[0].gang.message == ("all 3 members of PodGroup default/train would run (minCount 3): 3 after "
                                     "evicting 3 pods")


def test_minCount_below_the_members_keeps_the_gang_with_the_members_that_fit():
    state = make_state([make_node(n) for n in NODES], [*_holders(NODES), *_workers(4)],
                       pod_groups=[make_pod_group("train", min_count=3)])
    plans = plan_pending(state, pending_pods_to_plan(state, all_pending=True))
    assert sorted(p.outcome for p in plans) == ["evict", "evict", "evict", "infeasible"]
    assert plans[0].gang.message.startswith("3 of 4 members of PodGroup default/train would run (minCount 3): 3 "
                                            "after evicting 3 pods; 1 stays Pending")


def test_members_already_running_count_toward_minCount():
    # Two of four run; room for the other two only after evicting: 4 would run, minCount 4.
    running = [make_pod(f"train-r{i}", node="node-c", cpu="2", priority=HIGH, owner="Job/train",
                        **gang_member("train")) for i in range(2)]
    state = make_state([make_node(n) for n in NODES], [*_holders(["node-a", "node-b"]), *running, *_workers(2)],
                       pod_groups=[make_pod_group("train", min_count=4)])
    plans = plan_pending(state, pending_pods_to_plan(state, all_pending=True))
    assert [p.outcome for p in plans] == ["evict", "evict"]
    assert plans[0].gang.running == 2
    assert "(minCount 4, 2 running already)" in plans[0].gang.message


def test_a_basic_pod_group_is_no_gang():
    state = make_state([make_node(n) for n in NODES], [*_holders(NODES), *_workers(4)],
                       pod_groups=[make_pod_group("train", basic=True)])
    plans = plan_pending(state, pending_pods_to_plan(state, all_pending=True))
    assert sorted(p.outcome for p in plans) == ["evict", "evict", "evict", "infeasible"]
    assert all(p.gang is None for p in plans)


def test_a_group_whose_pod_group_is_not_in_the_snapshot_needs_every_member():
    # coscheduling label, no PodGroup object: minCount is taken as every member (4): nothing evicted.
    state = make_state([make_node(n) for n in NODES], [*_holders(NODES), *_workers(4, flavor="coscheduling")])
    plans = plan_pending(state, pending_pods_to_plan(state, all_pending=True))
    assert [p.outcome for p in plans] == ["infeasible"] * 4
    assert plans[0].gang.declared_by == "PodGroup scheduling.x-k8s.io/v1alpha1 default/train not read: every member"


def test_a_gang_given_up_leaves_its_room_to_the_pods_after_it():
    # The short gang's trial evictions are undone: a later, lower-priority pod still sees node-a as it is.
    late = make_pod("late", cpu="2", priority=LOW + 1)
    state = make_state([make_node(n) for n in NODES], [*_holders(NODES), *_workers(4), late],
                       pod_groups=[make_pod_group("train", min_count=4)])
    plans = plan_pending(state, pending_pods_to_plan(state, all_pending=True))
    assert plans[-1].pod.name == "late"
    assert plans[-1].outcome == "fits"  # 2 CPU are free on every node: nothing of the gang was kept


def test_the_victim_search_places_the_whole_gang_where_member_by_member_would_leave_it_short():
    # The driver could run anywhere; the worker only on the GPU node. Member by member, the driver
    # (first in the queue) takes the GPU node, whose victim has the lower priority, and the worker
    # finds no room. Planned as a whole: the driver on node-cpu, the worker on node-gpu.
    gpu = make_node("node-gpu", labels={"pool": "gpu"})
    cpu = make_node("node-cpu", labels={"pool": "cpu"})
    victims = [make_pod("low-gpu", node="node-gpu", cpu="4", priority=1, grace=5),
               make_pod("low-cpu", node="node-cpu", cpu="4", priority=2, grace=5)]
    driver = make_pod("train-driver", cpu="4", priority=HIGH, owner="Job/train", **gang_member("train"))
    worker = make_pod("train-worker", cpu="4", priority=HIGH, owner="Job/train", node_selector={"pool": "gpu"},
                      **gang_member("train"))
    state = make_state([gpu, cpu], [*victims, driver, worker], pod_groups=[make_pod_group("train", min_count=2)])
    # Member by member, as the plan of each pod alone would go:
    lone = Planner(state)
    assert lone.plan(driver, commit=True).node == "node-gpu"
    assert lone.plan(worker, commit=True).outcome == "infeasible"
    plans = {p.pod.name: p for p in plan_pending(state, pending_pods_to_plan(state, all_pending=True))}
    assert plans["train-driver"].node == "node-cpu"
    assert plans["train-worker"].node == "node-gpu"
    assert "most constrained first" in plans["train-driver"].gang.message


# -- a gang as a victim --------------------------------------------------------------------------------


def _running_gang(node: str, n: int, min_count: int, cpu: str = "1", mode: str | None = None) -> tuple[list, object]:
    pods = [make_pod(f"job-{i}", node=node, cpu=cpu, priority=LOW, grace=5, owner="Job/job",
                     **gang_member("job")) for i in range(n)]
    return pods, make_pod_group("job", min_count=min_count, disruption_mode=mode)


def test_a_victim_that_stops_a_running_gang_counts_as_a_violation_and_another_node_wins():
    # node-a: a running gang of 4 (minCount 4). node-b: one plain pod of the same priority, 4 CPU.
    gang, group = _running_gang("node-a", 4, 4)
    plain = make_pod("plain", node="node-b", cpu="4", priority=LOW, grace=5)
    p = make_pod("p", cpu="1", priority=HIGH)
    state = make_state([make_node("node-a"), make_node("node-b")], [*gang, plain, p], pod_groups=[group])
    plan = Planner(state).plan(p)
    assert plan.outcome == "evict"
    assert plan.node == "node-b"
    assert [v.pod.name for v in plan.victims] == ["plain"]
    assert plan.tier == 1


def test_a_gang_with_members_to_spare_is_evicted_from_within_its_budget():
    # 5 running, minCount 4: one member may go without stopping the gang.
    gang, group = _running_gang("node-a", 5, 4, cpu="0.8")
    p = make_pod("p", cpu="0.5", priority=HIGH)
    state = make_state([make_node("node-a")], [*gang, p], pod_groups=[group])
    plan = Planner(state).plan(p)
    assert plan.tier == 1
    assert len(plan.victims) == 1
    assert not plan.victims[0].pdb.stops_gang
    assert plan.victims[0].pdb.gang == "PodGroup default/job"


@pytest.mark.parametrize(("n", "cpu", "min_count", "mode"), [
    pytest.param(4, "1", 4, None, id="at its minCount"),
    pytest.param(5, "0.8", 4, "PodGroup", id="disruptionMode PodGroup"),
])
def test_when_only_a_gang_member_can_make_room_the_plan_is_tier_3_and_says_which_gang_it_stops(n, cpu, min_count,
                                                                                                mode):
    gang, group = _running_gang("node-a", n, min_count, cpu=cpu, mode=mode)
    p = make_pod("p", cpu="0.5", priority=HIGH)
    state = make_state([make_node("node-a")], [*gang, p], pod_groups=[group])
    plan = Planner(state).plan(p)
    assert plan.outcome == "evict"
    assert plan.tier == 3
    assert plan.blocked
    assert list(plan.stopped_gangs) == ["PodGroup default/job"]
    assert "stops its gang (PodGroup default/job)" in plan.victims[0].flags
    assert "violates PDB" not in plan.victims[0].flags  # the eviction API lets it go: no PDB covers it


def test_a_gang_members_pdb_and_its_gang_are_two_budgets_not_two_pdbs():
    # A pod covered by one PDB and in a gang is evictable through the API (not "covered by 2 PDBs").
    gang, group = _running_gang("node-a", 5, 4, cpu="0.8")
    pdb = make_pdb("job", selector={"scheduling.x-k8s.io/none": "x"}, min_available=0)
    p = make_pod("p", cpu="0.5", priority=HIGH)
    state = make_state([make_node("node-a")], [*gang, p], [pdb], pod_groups=[group])
    plan = Planner(state).plan(p)
    assert plan.victims[0].pdb.allowed
