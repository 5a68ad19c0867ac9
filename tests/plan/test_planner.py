"""The planner's rules, one table per rule (design: "The plan"; seeds 000 and 001).

Every scenario is a small cluster built with the test builders. Resources are whole CPUs unless a
case needs otherwise; running pods default to a 5 s grace period so that, unless a case says
otherwise, they are tier-1 material. The pending pod is `default/p` with priority 100.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest

from kresched.model.objects import Node, Pod, PodDisruptionBudget
from kresched.plan.planner import Planner, plan_pod
from kresched.plan.plans import CRITERIA, Plan, PlanOptions
from kresched.plan.queue import pending_pods_to_plan, plan_pending
from kresched.render.plan import plan_dict
from tests.builders import make_node, make_pdb, make_pod, make_state

P = 100
CRITICAL_ANNOTATION = {"scheduler.alpha.kubernetes.io/critical-pod": ""}
MIRROR_ANNOTATION = {"kubernetes.io/config.mirror": "abc123"}
TOLERATE_RESERVATION = [{"key": "CriticalAddonsOnly", "operator": "Exists"}]


def node(name: str, cpu: int | str = 4, **kw: Any) -> Node:
    return make_node(name, cpu=str(cpu), memory="8Gi", **kw)


def run(name: str, on: str, cpu: int | str = 1, priority: int = 0, grace: int = 5, **kw: Any) -> Pod:
    """A running pod."""
    return make_pod(name, node=on, cpu=str(cpu), priority=priority, grace=grace, **kw)


def pend(name: str = "p", cpu: int | str = 2, priority: int | None = P, **kw: Any) -> Pod:
    """A pending pod."""
    return make_pod(name, cpu=str(cpu), priority=priority, **kw)


def plan_for(nodes: Sequence[Node], pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget] = (),
             pod: str = "default/p", options: PlanOptions = PlanOptions()) -> Plan:
    state = make_state(list(nodes), list(pods), list(pdbs))
    target = state.pod(pod)
    assert target is not None
    return plan_pod(state, target, options)


def names(plan: Plan) -> list[str]:
    """The victims' names, most important first (the plan's order)."""
    return [v.pod.name for v in plan.victims]


@dataclass
class Case:
    nodes: list[Node]
    pods: list[Pod]
    outcome: str
    node: str | None = None
    tier: int | None = None
    victims: list[str] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    options: PlanOptions = field(default_factory=PlanOptions)


def check(case: Case) -> Plan:
    plan = plan_for(case.nodes, case.pods, case.pdbs, options=case.options)
    assert (plan.outcome, plan.node, plan.tier, names(plan)) == (case.outcome, case.node, case.tier, case.victims), \
        plan.message
    return plan


# -- the seed's example, fits, infeasible -------------------------------------------------------


def test_the_seed_example_evicts_only_the_priority_2_pod() -> None:
    # Seed 001: "if node capacity is 10, and pending pod is priority 10 and requires 5 units of
    # resource, and the running pods are {priority 0 request 3, priority 1 request 1, priority 2
    # request 5, priority 3 request 1}, scheduler will preempt the priority 2 pod only".
    pods = [run(f"p{prio}", "n1", cpu=req, priority=prio) for prio, req in enumerate((3, 1, 5, 1))]
    plan = plan_for([node("n1", cpu=10)], [*pods, pend(cpu=5, priority=10)])
    assert (plan.outcome, plan.node, names(plan)) == ("evict", "n1", ["p2"])
    assert plan_dict(plan)["victims"][0]["priority"] == 2


@pytest.mark.parametrize("case", [
    pytest.param(Case([node("a"), node("b")], [run("x", "a", cpu=3), pend(cpu=2)], "fits", "b"),
                 id="a pod with room on some node fits there, on the emptier node the scheduler would pick"),
    pytest.param(Case([node("a"), node("b")], [run("x", "b", cpu=3), pend(cpu=2)], "fits", "a"),
                 id="the likely node follows the free room, not the node name"),
    pytest.param(Case([node("a", cpu=2)], [run("x", "a", cpu=2, priority=P), pend(cpu=2)], "infeasible"),
                 id="nothing helps when the only pod in the way has the same priority"),
    pytest.param(Case([node("a", cpu=1)], [pend(cpu=2)], "infeasible"),
                 id="nothing helps when the pod asks for more than a node has at all"),
])
def test_outcome(case: Case) -> None:
    plan = check(case)
    if case.outcome == "fits":
        assert plan.message.startswith(f"fits on node {case.node} without evicting anything")
        assert plan.victims == ()
    else:
        assert f"0/{len(case.nodes)} nodes are available:" in plan.message


def test_an_infeasible_plan_carries_the_scheduler_message() -> None:
    plan = plan_for([node("a", cpu=2), node("b", cpu=2, unschedulable=True)],
                    [run("x", "a", cpu=2, priority=P), pend(cpu=2)])
    assert plan.outcome == "infeasible"
    assert "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable." in plan.message
    assert plan.node is None
    assert plan.tier is None


# -- who may be a victim ----------------------------------------------------------------------------


@pytest.mark.parametrize(("victim", "evictable"), [
    pytest.param(run("v", "a", cpu=2, priority=P - 1), True, id="a pod of lower priority may be evicted"),
    pytest.param(run("v", "a", cpu=2, priority=P), False, id="a pod of equal priority is never a victim"),
    pytest.param(run("v", "a", cpu=2, priority=P + 1), False, id="a pod of higher priority is never a victim"),
    pytest.param(run("v", "a", cpu=2, annotations=MIRROR_ANNOTATION, owner="Node/a"), False,
                 id="a mirror (static) pod is never a victim"),
    pytest.param(run("v", "a", cpu=2, owner="DaemonSet/ds"), False, id="a DaemonSet pod is never a victim"),
    pytest.param(run("v", "a", cpu=2, deletion_timestamp="2026-01-01T00:00:00Z"), False,
                 id="a terminating pod is never a victim"),
    pytest.param(run("v", "a", cpu=2, priority=5, priority_class="system-cluster-critical"), False,
                 id="a pod of a system-critical priority class is never a victim, whatever its priority"),
    pytest.param(run("v", "a", cpu=2, annotations=CRITICAL_ANNOTATION), False,
                 id="a pod with the legacy critical-pod annotation is never a victim"),
])
def test_candidate_victims(victim: Pod, evictable: bool) -> None:
    plan = plan_for([node("a", cpu=2)], [victim, pend(cpu=2)])
    if evictable:
        assert (plan.outcome, names(plan)) == ("evict", ["v"])
    else:
        assert plan.outcome == "infeasible"
        assert plan.victims == ()


def test_the_legacy_critical_annotation_counts_as_system_critical_priority() -> None:
    critical = pend(priority=0, annotations=CRITICAL_ANNOTATION)
    plan = plan_for([node("a", cpu=2)], [run("v", "a", cpu=2, priority=1_999_999_999), critical])
    assert (plan.outcome, names(plan), plan.priority) == ("evict", ["v"], 2_000_000_000)
    assert plan_dict(plan)["priority"] == 2_000_000_000


def test_without_the_annotation_the_same_pod_cannot_evict_anything() -> None:
    plan = plan_for([node("a", cpu=2)], [run("v", "a", cpu=2, priority=1), pend(priority=0)])
    assert plan.outcome == "infeasible"


# -- which nodes are candidates ---------------------------------------------------------------------

NO_SCHEDULE = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


@pytest.mark.parametrize(("bad", "wants"), [
    pytest.param(node("a", cpu=2, taints=NO_SCHEDULE), {}, id="a node with a taint the pod does not tolerate"),
    pytest.param(node("a", cpu=2, labels={"disk": "hdd"}), {"node_selector": {"disk": "ssd"}},
                 id="a node that does not match the pod's nodeSelector"),
    pytest.param(node("a", cpu=2, unschedulable=True), {}, id="a cordoned node"),
])
def test_a_node_failing_for_reasons_no_eviction_changes_is_never_a_candidate(bad: Node, wants: dict[str, Any]
                                                                             ) -> None:
    cheap, p = run("cheap", "a", cpu=2, priority=0), pend(**wants)
    # With only the bad node, nothing can be done although its pod is cheap to evict.
    alone = plan_for([bad], [cheap, p])
    assert alone.outcome == "infeasible"
    assert "0/1 nodes are available:" in alone.message
    # With a good node too, the dearer eviction there wins: the bad node is not an option at all.
    plan = plan_for([bad, node("z", cpu=2, labels={"disk": "ssd"})], [cheap, run("dear", "z", cpu=2, priority=50), p])
    assert (plan.outcome, plan.node, names(plan)) == ("evict", "z", ["dear"])
    assert plan.runners_up == ()


# -- tiers --------------------------------------------------------------------------------------------

BUDGET_0 = make_pdb("none-left", selector={"app": "guarded"}, disruptions_allowed=0)
GUARDED = {"app": "guarded"}


@pytest.mark.parametrize("case", [
    pytest.param(Case([node("a", cpu=2), node("b", cpu=2)],
                      [run("slow", "a", cpu=2, priority=1, grace=30), run("quick", "b", cpu=2, priority=50, grace=5),
                       pend()], "evict", "b", 1, ["quick"]),
                 id="tier 1 wins when some node allows it, even against a cheaper tier-2 eviction"),
    pytest.param(Case([node("a", cpu=2), node("b", cpu=2)],
                      [run("slow-a", "a", cpu=2, priority=1, grace=30), run("slow-b", "b", cpu=2, priority=2, grace=60),
                       pend()], "evict", "a", 2, ["slow-a"]),
                 id="tier 2 when every tier-1 option is missing because of grace periods over max-grace"),
    pytest.param(Case([node("a", cpu=2), node("b", cpu=2)],
                      [run("guarded", "a", cpu=2, priority=1, labels=GUARDED),
                       run("slow", "b", cpu=2, priority=50, grace=3600), pend()], "evict", "b", 2, ["slow"],
                      pdbs=[BUDGET_0]),
                 id="tier 2 beats a PDB violation even when its victim's grace period is an hour"),
    pytest.param(Case([node("a", cpu=2), node("b", cpu=2)],
                      [run("g1", "a", cpu=2, priority=1, labels=GUARDED),
                       run("g2", "b", cpu=2, priority=2, labels=GUARDED), pend()], "evict", "a", 3, ["g1"],
                      pdbs=[BUDGET_0]),
                 id="tier 3 only when every node needs a PDB violation"),
    pytest.param(Case([node("a", cpu=2)], [run("slow", "a", cpu=2, grace=30), pend()], "evict", "a", 1, ["slow"],
                      options=PlanOptions(max_grace_seconds=30)),
                 id="--max-grace 30 makes a 30 s grace period tier-1 material"),
    pytest.param(Case([node("a", cpu=2)], [run("quick", "a", cpu=2, grace=5), pend()], "evict", "a", 2, ["quick"],
                      options=PlanOptions(max_grace_seconds=4)),
                 id="--max-grace 4 pushes a 5 s grace period to tier 2"),
])
def test_tier(case: Case) -> None:
    check(case)


@pytest.mark.parametrize(("max_grace", "grace", "eviction_grace", "flag"), [
    pytest.param(10, 30, 10, "grace shortened 30s→10s", id="a grace period over max-grace is shortened to it"),
    pytest.param(30, 30, 30, None, id="a grace period within max-grace is kept"),
    pytest.param(10, -1, 1, None, id="a negative grace period is 1 s, as the API server deletes it"),
])
def test_eviction_grace(max_grace: int, grace: int, eviction_grace: int, flag: str | None) -> None:
    plan = plan_for([node("a", cpu=2)], [run("v", "a", cpu=2, grace=grace), pend()],
                    options=PlanOptions(max_grace_seconds=max_grace))
    [v] = plan_dict(plan)["victims"]
    assert (v["gracePeriodSeconds"], v["evictionGracePeriodSeconds"]) == (max(grace, 1), eviction_grace)
    assert (flag in plan.victims[0].flags) if flag else not plan.victims[0].grace_shortened


@pytest.mark.parametrize(("allow", "blocked"), [
    pytest.param(False, True, id="a tier-3 plan without allow_pdb_violation is planned but blocked"),
    pytest.param(True, False, id="a tier-3 plan with allow_pdb_violation is not blocked"),
])
def test_tier_3_blocking(allow: bool, blocked: bool) -> None:
    plan = plan_for([node("a", cpu=2)], [run("g", "a", cpu=2, labels=GUARDED), pend()], [BUDGET_0],
                    options=PlanOptions(allow_pdb_violation=allow))
    assert (plan.outcome, plan.tier, plan.blocked) == ("evict", 3, blocked)
    assert ("blocked" in plan.message) is blocked
    assert plan_dict(plan)["victims"][0]["pdbViolation"] is True


def test_tiers_1_and_2_never_block() -> None:
    plan = plan_for([node("a", cpu=2)], [run("v", "a", cpu=2, grace=30), pend()])
    assert (plan.tier, plan.blocked) == (2, False)


# -- choosing the node: each criterion on its own -----------------------------------------------------
#
# Two nodes tie on every criterion before the one under test and differ in it. The winner is node-b
# (except for the last criterion), so the node name, the final tie-breaker, points the other way.

H = 1000  # priority of pods the pending pod may not evict


def _full(n: str, *victims: Pod, cpu: int = 4) -> list[Pod]:
    """The victims, plus a pod nobody may evict filling the rest of the node."""
    used = sum(v.requests.milli_cpu for v in victims) // 1000
    rest = [run(f"{n}-keep", n, cpu=cpu - used, priority=H)] if cpu > used else []
    return [*victims, *rest]


GA = make_pdb("guard-a", selector={"guard": "a"}, disruptions_allowed=0)
GB = make_pdb("guard-b", selector={"guard": "b"}, disruptions_allowed=0)

CRITERION_CASES = [
    pytest.param(
        0, "b",
        [*_full("node-a", run("a1", "node-a", labels={"guard": "a"}), run("a2", "node-a", labels={"guard": "a"})),
         *_full("node-b", run("b1", "node-b", labels={"guard": "b"}), run("b2", "node-b", priority=7))],
        [GA, GB], id="fewer PDB violations decides (1 against 2), though its victims' priorities are higher"),
    pytest.param(
        1, "b",
        [*_full("node-a", run("a1", "node-a", grace=30), run("a2", "node-a", grace=30)),
         *_full("node-b", run("b1", "node-b", grace=30, priority=7), run("b2", "node-b", grace=5, priority=7))],
        [], id="fewer grace periods shortened decides (1 against 2), though its victims' priorities are higher"),
    pytest.param(
        2, "b",
        [*_full("node-a", run("a1", "node-a", cpu=2, priority=5)),
         *_full("node-b", run("b1", "node-b", priority=3), run("b2", "node-b", priority=3))],
        [], id="a lower highest victim priority decides (3 against 5), though the sum and count are higher"),
    pytest.param(
        3, "b",
        [*_full("node-a", run("a1", "node-a", priority=4), run("a2", "node-a", priority=4)),
         *_full("node-b", run("b1", "node-b", priority=4), run("b2", "node-b", priority=1))],
        [], id="a lower sum of victim priorities decides (5 against 8) between equally many victims"),
    pytest.param(
        3, "a",
        [*_full("node-a", run("a1", "node-a", priority=4), run("a2", "node-a", priority=4)),
         *_full("node-b", run("b1", "node-b", priority=4), run("b2", "node-b", cpu="500m", priority=1),
                run("b3", "node-b", cpu="500m", priority=1))],
        [], id="each victim adds MaxInt32+1 to the sum: two victims (8) beat three with a lower raw sum (6)"),
    pytest.param(
        4, "b",
        [*_full("node-a", run("a1", "node-a", priority=3), run("a2", "node-a", priority=-2**31)),
         *_full("node-b", run("b1", "node-b", cpu=2, priority=3))],
        [], id="fewer victims decides (1 against 2) when the offset sums tie (a victim of priority MinInt32 adds 0)"),
    pytest.param(
        5, "b",
        [*_full("node-a", run("a1", "node-a", cpu=2, priority=3, start_time="2026-01-01T00:00:00Z")),
         *_full("node-b", run("b1", "node-b", cpu=2, priority=3, start_time="2026-01-02T00:00:00Z"))],
        [], id="the later start of the most important victims decides when priorities and counts tie"),
    pytest.param(
        6, "b",
        [*_full("node-a", run("a1", "node-a", cpu=3, priority=3)),
         *_full("node-b", run("b1", "node-b", cpu=2, priority=3))],
        [], id="smaller victim requests decide (2 CPU against 3) when upstream's criteria tie"),
    pytest.param(
        7, "b",
        [*_full("node-a", run("a1", "node-a", cpu=2, priority=3, owner=None)),
         *_full("node-b", run("b1", "node-b", cpu=2, priority=3))],
        [], id="controller-managed victims beat a bare-pod victim when everything else ties"),
    pytest.param(
        8, "a",
        [*_full("node-a", run("a1", "node-a", cpu=2, priority=3)),
         *_full("node-b", run("b1", "node-b", cpu=2, priority=3))],
        [], id="the node name decides between identical options"),
]


@pytest.mark.parametrize(("criterion", "winner", "pods", "pdbs"), CRITERION_CASES)
def test_node_choice_criterion(criterion: int, winner: str, pods: list[Pod], pdbs: list[PodDisruptionBudget]
                               ) -> None:
    plan = plan_for([node("node-a"), node("node-b")], [*pods, pend()], pdbs)
    loser = "node-a" if winner == "b" else "node-b"
    assert (plan.outcome, plan.node) == ("evict", f"node-{winner}"), plan.message
    name, better = CRITERIA[criterion]
    [runner] = [r for r in plan.runners_up if r.node == loser]
    assert runner.tier == plan.tier
    if name == "node name":  # a tie on everything the choice weighs reads as a tie
        assert plan.decided_by == (f"it ties with {loser} on every criterion and comes first by name (the scheduler "
                                   "may take either)")
        assert runner.reason == f"it ties with node-{winner} on every criterion; node-{winner} comes first by name"
    else:
        # (The priority sum counts 2^31 a victim: where the counts differ, the words say so.)
        won = len(plan.victims)
        counts = f" (2^31 a victim: {won} victim{'' if won == 1 else 's'} against {runner.victims})" \
            if name == "sum of victim priorities" and len(plan.victims) != runner.victims else ""
        assert plan.decided_by == f"{better} than {loser}{counts}"
        assert runner.reason.startswith(f"{name}: ")


def test_a_node_whose_latest_low_pod_started_last_wins_though_its_oldest_is_older_than_every_other() -> None:
    # The branch and bound's start bound is the *latest* start among a node's lowest-priority
    # candidates: a bound from the earliest would prune node a (its a1 is the oldest pod of all)
    # once b and c were found, and miss its young a2.
    day = "2026-01-0{}T00:00:00Z".format
    pods = [run("a1", "a", cpu=1, start_time=day(1)), run("a2", "a", cpu=1, start_time=day(8)),
            run("a3", "a", cpu=1, priority=100, start_time=day(1)),
            run("b1", "b", cpu=1, start_time=day(5)), run("b2", "b", cpu=1, priority=100),
            run("c1", "c", cpu=1, start_time=day(4)), run("c2", "c", cpu=1, priority=100),
            pend(cpu=1)]
    plan = plan_for([node("a", cpu=3), node("b", cpu=2), node("c", cpu=2)], pods)
    assert (plan.node, names(plan)) == ("a", ["a2"])
    assert plan.decided_by == "a later start of its most important victims than b"


def test_a_runner_up_lost_on_start_time_shows_both_starts() -> None:
    # The start is shown as the API writes it (UTC): "started vs started" tells an operator nothing.
    day = "2026-01-0{}T00:00:00Z".format
    pods = [run("a1", "a", cpu=2, start_time=day(5)), run("b1", "b", cpu=2, start_time=day(3)), pend(cpu=2)]
    plan = plan_for([node("a", cpu=2), node("b", cpu=2)], pods)
    assert (plan.node, names(plan)) == ("a", ["a1"])
    [b] = [r for r in plan.runners_up if r.node == "b"]
    assert b.reason == ("start of the most important victims: started 2026-01-03T00:00:00Z vs "
                        "started 2026-01-05T00:00:00Z on a")
    plan = plan_for([node("a", cpu=2), node("c", cpu=2)], [*pods[:1], run("c1", "c", cpu=2, start_time=None), pods[-1]])
    assert (plan.node, names(plan)) == ("c", ["c1"])
    [a] = plan.runners_up
    assert a.reason == "start of the most important victims: started 2026-01-05T00:00:00Z vs not started on c"


def test_a_node_one_victim_frees_wins_though_its_lowest_pods_started_earlier_than_others() -> None:
    # The quick bound counts the fewest candidates whose requests cover what the pod lacks (the
    # largest first): b and c each need one victim too (their big, old b2/c2), so a bound of two
    # there would prune node a — whose one victim started later than theirs — once b and c were found.
    day = "2026-01-0{}T00:00:00Z".format
    pods = [run("a1", "a", cpu=2, start_time=day(5)),
            run("b1", "b", cpu=1, start_time=day(8)), run("b2", "b", cpu=2, start_time=day(2)),
            run("c1", "c", cpu=1, start_time=day(7)), run("c2", "c", cpu=2, start_time=day(3)),
            pend(cpu=2)]
    plan = plan_for([node("a", cpu=2), node("b", cpu=3), node("c", cpu=3)], pods)
    assert (plan.node, names(plan)) == ("a", ["a1"])
    assert plan.decided_by == "a later start of its most important victims than c"


def test_the_criteria_are_the_designs_in_its_order() -> None:
    assert [name for name, _ in CRITERIA] == [
        "PDB violations", "grace periods shortened", "highest victim priority", "sum of victim priorities",
        "victims", "start of the most important victims", "victim requests", "bare-pod victims", "node name"]


def test_the_chosen_node_is_never_listed_as_a_runner_up() -> None:
    # Tier 1 fails on node a (grace 30) before tier 2 succeeds there: the tier-1 reason must not
    # show node a as "not chosen".
    plan = plan_for([node("a", cpu=2), node("b", cpu=2)],
                    [run("v", "a", cpu=2, grace=30), run("w", "b", cpu=2, priority=P), pend()])
    assert (plan.node, plan.tier) == ("a", 2)
    assert "a" not in {r.node for r in plan.runners_up}


def test_a_runner_up_is_explained_by_the_winning_tier() -> None:
    # a makes room in tier 2 (grace 30); b only by violating a PDB. The plan is tier 2, so b's
    # reason is tier 2's, not tier 1's.
    plan = plan_for([node("a", cpu=2), node("b", cpu=2)],
                    [run("v", "a", cpu=2, grace=30), run("g", "b", cpu=2, labels=GUARDED), pend()], [BUDGET_0])
    assert (plan.node, plan.tier) == ("a", 2)
    [b] = [r for r in plan.runners_up if r.node == "b"]
    assert b.reason == "tier 2 evicts only pods whose PDB allows it: those here hold too little"


def test_an_infeasible_plan_explains_each_node_by_the_most_permissive_tier() -> None:
    plan = plan_for([node("a", cpu=2)], [run("v", "a", cpu=1, grace=30), run("w", "a", cpu=1, priority=H), pend()])
    assert plan.outcome == "infeasible"
    assert [(r.node, r.reason) for r in plan.runners_up] == [
        ("a", "even evicting every lower-priority pod here frees too little")]


# -- victims on a node: the reprieve order ------------------------------------------------------------

GUARANTEED = {"memory": "1Gi", "limits": {"cpu": "1", "memory": "1Gi"}}


@pytest.mark.parametrize(("pods", "pdbs", "tier", "victims"), [
    pytest.param(
        [run("low", "a", priority=1, labels=GUARDED), run("mid", "a", priority=2, labels=GUARDED),
         run("free", "a", priority=3), run("keep", "a", priority=H)],
        [BUDGET_0], 3, ["free", "low"],
        id="PDB-violating candidates are reprieved first: one violation instead of two"),
    pytest.param(
        [run("low", "a", priority=1), run("high", "a", priority=2), run("keep", "a", cpu=2, priority=H)],
        [], 1, ["low"], id="among equals, the higher-priority pod is reprieved and the lower one evicted"),
    pytest.param(
        [run("g", "a", priority=1, **GUARANTEED), run("b", "a", priority=1, memory="1Gi"),
         run("keep", "a", cpu=2, priority=H)],
        [], 1, ["b"], id="on a priority tie a Guaranteed pod is reprieved before a Burstable one"),
    pytest.param(
        [run("started-early", "a", priority=1, start_time="2026-01-01T00:00:00Z"),
         run("started-late", "a", priority=1, start_time="2026-01-02T00:00:00Z"),
         run("keep", "a", cpu=2, priority=H)],
        [], 1, ["started-late"], id="on a priority and QoS tie the earlier-started pod is reprieved"),
])
def test_reprieve_order(pods: list[Pod], pdbs: list[PodDisruptionBudget], tier: int, victims: list[str]) -> None:
    plan = plan_for([node("a")], [*pods, pend(cpu=len(victims))], pdbs, options=PlanOptions(allow_pdb_violation=True))
    assert (plan.outcome, plan.tier, sorted(names(plan))) == ("evict", tier, sorted(victims))


def test_a_burstable_pod_is_reprieved_before_a_best_effort_one() -> None:
    # BestEffort pods free no CPU; a node at its pod limit makes them worth evicting.
    pods = [run("burstable", "a", cpu=1, priority=1), make_pod("best-effort", node="a", priority=1, grace=5)]
    plan = plan_for([make_node("a", cpu="4", pods=2)], [*pods, make_pod("p", priority=P)])
    assert (plan.outcome, names(plan)) == ("evict", ["best-effort"])


def test_victims_are_listed_most_important_first() -> None:
    pods = [run("v0", "a", priority=0), run("v2", "a", priority=2), run("v1", "a", priority=1)]
    plan = plan_for([node("a", cpu=3)], [*pods, pend(cpu=3)])
    assert names(plan) == ["v2", "v1", "v0"]


# -- PDB accounting across victims and plans ------------------------------------------------------------


def _budget(allowed: int | None, **kw: Any) -> PodDisruptionBudget:
    return make_pdb("web", selector={"app": "web"}, disruptions_allowed=allowed, **kw)


WEB = {"app": "web"}


def test_a_budget_of_one_covering_two_needed_victims_is_one_violation() -> None:
    pods = [run("w1", "a", priority=2, labels=WEB), run("w2", "a", priority=1, labels=WEB)]
    plan = plan_for([node("a", cpu=2)], [*pods, pend()], [_budget(1)])
    assert (plan.tier, names(plan)) == (3, ["w1", "w2"])
    assert [v.pdb.violation for v in plan.victims] == [False, True]
    assert [v.pdb.remaining for v in plan.victims] == [1, 0]


def test_a_budget_of_one_is_spent_on_one_victim_when_a_pod_without_pdb_can_take_the_others_place() -> None:
    # x (no PDB) and b (PDB, budget 1) make room; the design's reprieve order alone would keep x
    # and evict a and b, two of the PDB's pods for a budget of one.
    pods = [run("x", "a", priority=5), run("a", "a", priority=4, labels=WEB),
            run("b", "a", cpu=2, priority=3, labels=WEB)]
    plan = plan_for([node("a", cpu=4)], [*pods, pend(cpu=3)], [_budget(1)])
    assert (plan.outcome, plan.tier, sorted(names(plan))) == ("evict", 1, ["b", "x"])
    assert not plan.blocked


def test_a_budget_spent_by_an_earlier_plan_is_not_spent_again() -> None:
    pods = [run("w1", "a", cpu=2, labels=WEB), run("w2", "b", cpu=2, labels=WEB),
            pend("first", priority=P), pend("second", priority=P - 1)]
    state = make_state([node("a", cpu=2), node("b", cpu=2)], pods, [_budget(1)])
    first, second = plan_pending(state, [state.pod("default/first"), state.pod("default/second")])  # type: ignore[list-item]
    assert (first.node, first.tier, names(first)) == ("a", 1, ["w1"])
    assert (second.node, second.tier, names(second)) == ("b", 3, ["w2"])
    assert second.victims[0].pdb.violation
    assert second.blocked
    # Alone, the second pod would have had the budget to itself.
    alone = plan_pod(state, state.pod("default/second"))  # type: ignore[arg-type]
    assert (alone.tier, alone.blocked) == (1, False)


@pytest.mark.parametrize(("pdbs", "labels", "ready", "tier"), [
    pytest.param([_budget(5), make_pdb("all-tiers", selector={"tier": "front"}, disruptions_allowed=5)],
                 {"app": "web", "tier": "front"}, True, 3,
                 id="a pod under two PDBs cannot be evicted through the API, whatever their budgets"),
    pytest.param([_budget(0, disrupted={"v": "2026-01-01T00:00:00Z"})], WEB, True, 1,
                 id="a pod already in disruptedPods spends nothing"),
    pytest.param([_budget(0, policy="AlwaysAllow")], WEB, False, 1,
                 id="an unready pod under unhealthyPodEvictionPolicy AlwaysAllow spends nothing"),
    pytest.param([_budget(0, policy="IfHealthyBudget")], WEB, False, 3,
                 id="an unready pod under IfHealthyBudget needs a budget when the application is disrupted"),
    pytest.param([_budget(0, policy="AlwaysAllow")], WEB, True, 3,
                 id="AlwaysAllow does not help a ready pod"),
    pytest.param([make_pdb("web", selector={}, disruptions_allowed=0)], WEB, True, 1,
                 id="a PDB with an empty selector guards nothing for the eviction API"),
])
def test_pdb_rules_in_a_plan(pdbs: list[PodDisruptionBudget], labels: dict[str, str], ready: bool, tier: int
                             ) -> None:
    plan = plan_for([node("a", cpu=2)], [run("v", "a", cpu=2, labels=labels, ready=ready), pend()], pdbs,
                    options=PlanOptions(allow_pdb_violation=True))
    assert (plan.outcome, plan.tier, names(plan)) == ("evict", tier, ["v"])
    assert plan.victims[0].pdb.violation is (tier == 3)


@pytest.mark.parametrize(("spec", "ready", "tier"), [
    pytest.param({"min_available": 2}, 3, 1, id="minAvailable 2 of 3 ready pods leaves a budget of 1"),
    pytest.param({"min_available": 3}, 3, 3, id="minAvailable 3 of 3 ready pods leaves no budget"),
    pytest.param({"min_available": 2}, 2, 3, id="minAvailable 2 with one of 3 pods unready leaves no budget"),
    pytest.param({"max_unavailable": 1}, 3, 1, id="maxUnavailable 1 of 3 leaves a budget of 1"),
    pytest.param({"max_unavailable": 0}, 3, 3, id="maxUnavailable 0 leaves no budget"),
    pytest.param({"min_available": "50%"}, 3, 1, id="minAvailable 50% of 3 rounds up to 2: a budget of 1"),
    pytest.param({"min_available": "67%"}, 3, 3, id="minAvailable 67% of 3 rounds up to 3: no budget"),
    pytest.param({"max_unavailable": "34%"}, 3, 1, id="maxUnavailable 34% of 3 rounds up to 2: a budget of 1"),
    pytest.param({"max_unavailable": "30%"}, 3, 1, id="maxUnavailable 30% of 3 rounds up to 1: a budget of 1"),
    pytest.param({}, 3, 3, id="a PDB with neither field set allows no disruption"),
])
def test_a_pdb_without_status_gets_the_disruption_controllers_budget(spec: dict[str, Any], ready: int, tier: int
                                                                        ) -> None:
    # Three web pods: the victim on node a (ready), two elsewhere (one unready when ready == 2).
    pods = [run("v", "a", cpu=2, labels=WEB), run("w1", "b", cpu=2, priority=H, labels=WEB),
            run("w2", "b", cpu=2, priority=H, labels=WEB, ready=ready >= 3), pend()]
    plan = plan_for([node("a", cpu=2), node("b", cpu=4)], pods, [make_pdb("web", selector=WEB, **spec)],
                    options=PlanOptions(allow_pdb_violation=True))
    assert (plan.outcome, plan.tier, names(plan)) == ("evict", tier, ["v"])


# -- nominated pods -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("nominated_priority", "outcome", "plan_node"), [
    pytest.param(P, "evict", "b", id="a pod nominated to a node with priority equal to P's holds the room there"),
    pytest.param(P + 1, "evict", "b", id="a pod nominated with a higher priority holds the room there"),
    pytest.param(P - 1, "fits", "a", id="a pod nominated with a lower priority does not hold room against P"),
])
def test_nominated_pods_hold_room(nominated_priority: int, outcome: str, plan_node: str) -> None:
    pods = [pend("nominee", priority=nominated_priority, nominated_node="a"), run("x", "b", cpu=2), pend()]
    plan = plan_for([node("a", cpu=2), node("b", cpu=2)], pods)
    assert (plan.outcome, plan.node) == (outcome, plan_node)


# -- second-order effects ---------------------------------------------------------------------------------


def test_a_victim_lands_on_another_node_with_room() -> None:
    pods = [run("v", "a", cpu=2), run("c-used", "c", cpu=2, priority=H), pend(cpu=3)]
    plan = plan_for([node("a", cpu=3), node("c", cpu=4)], pods)
    assert (plan.node, names(plan)) == ("a", ["v"])
    assert plan.victims[0].lands_on == "c"
    assert plan_dict(plan)["victims"][0]["landsOn"] == "c"


def test_a_victim_with_nowhere_to_go_stays_pending_with_the_reason() -> None:
    pods = [run("v", "a", cpu=2), run("c-used", "c", cpu=3, priority=H), pend(cpu=3)]
    plan = plan_for([node("a", cpu=3), node("c", cpu=4)], pods)
    [v] = plan.victims
    assert v.lands_on is None
    assert v.pending_reason is not None
    assert v.pending_reason.startswith("0/2 nodes are available:")
    assert "Insufficient cpu" in v.pending_reason


@pytest.mark.parametrize(("nominee_priority", "lands_on"), [
    pytest.param(4, "c", id="a victim may take room a nominated pod of lower priority waits for"),
    pytest.param(5, None, id="a victim does not land in room a nominated pod of its own priority holds"),
])
def test_nominated_pods_hold_room_against_victims_too(nominee_priority: int, lands_on: str | None) -> None:
    # The victim (priority 5, 2 CPU) could take node c's free 2 CPU, which a pending pod
    # nominated to c also needs.
    pods = [run("v", "a", cpu=2, priority=5), run("c-used", "c", cpu=2, priority=H),
            pend("nominee", cpu=2, priority=nominee_priority, nominated_node="c"), pend(cpu=3)]
    plan = plan_for([node("a", cpu=3), node("c", cpu=4)], pods)
    assert (plan.node, names(plan)) == ("a", ["v"])
    assert plan.victims[0].lands_on == lands_on


def test_a_bare_victim_is_flagged_and_not_rescheduled() -> None:
    pods = [run("bare", "a", cpu=2, owner=None), run("c-used", "c", cpu=2, priority=H), pend(cpu=3)]
    plan = plan_for([node("a", cpu=3), node("c", cpu=4)], pods)
    [v] = plan.victims
    assert (v.lands_on, v.is_bare) == (None, True)
    assert "bare pod: gone for good" in v.flags
    assert plan_dict(plan)["victims"][0]["controller"] is None


def test_a_victim_with_an_empty_dir_is_flagged() -> None:
    pods = [run("scratch", "a", cpu=2, volumes=[{"name": "tmp", "emptyDir": {}}]),
            run("c-used", "c", cpu=2, priority=H), pend(cpu=3)]
    plan = plan_for([node("a", cpu=3), node("c", cpu=4)], pods)
    [v] = plan.victims
    assert "emptyDir data lost" in v.flags
    assert v.lands_on == "c"  # it is rescheduled; only its data is lost


def test_earlier_victims_landings_consume_room_for_later_ones() -> None:
    pods = [run("v-high", "a", priority=2), run("v-low", "a", priority=1), run("c-used", "c", cpu=3, priority=H),
            pend(cpu=2)]
    plan = plan_for([node("a", cpu=2), node("c", cpu=4)], pods)
    assert names(plan) == ["v-high", "v-low"]
    assert [v.lands_on for v in plan.victims] == ["c", None]


SPREAD = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"app": "web"}}}]


@pytest.mark.parametrize(("tolerations", "taint", "lands_on"), [
    pytest.param(TOLERATE_RESERVATION, True, "b",
                 id="a victim does not land on the reserved node when P tolerates the reservation taint"),
    pytest.param(None, False, "a",
                 id="without the reservation taint a victim may land back on the node P needs"),
])
def test_the_reservation_taint_keeps_victims_off_the_reserved_node(tolerations: list[dict[str, str]] | None,
                                                                   taint: bool, lands_on: str) -> None:
    # P spreads app=web pods one per host at most one apart. a holds the evictable web pod v, b a
    # web pod P may not evict, c has no web pod but no room for P: P fits on a only without v.
    # v's replacement has no constraint and finds the most room on a, unless a is tainted.
    pods = [run("v", "a", labels=WEB), run("w", "b", labels=WEB, priority=H), run("c-used", "c", priority=H),
            pend(cpu=1, labels=WEB, spread=SPREAD, tolerations=tolerations)]
    plan = plan_for([node("a", cpu=8), node("b", cpu=2), node("c", cpu=1)], pods)
    assert (plan.outcome, plan.node, names(plan), plan.taint) == ("evict", "a", ["v"], taint)
    assert plan.victims[0].lands_on == lands_on


@pytest.mark.parametrize(("tolerations", "taint"), [
    pytest.param(TOLERATE_RESERVATION, True, id="P tolerating CriticalAddonsOnly gets the reservation taint"),
    pytest.param([{"operator": "Exists"}], True, id="a toleration of every taint covers the reservation taint"),
    pytest.param([{"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoExecute"}], False,
                 id="a NoExecute-only toleration does not cover the NoSchedule reservation taint"),
    pytest.param(None, False, id="P without the toleration gets no reservation taint"),
])
def test_taint(tolerations: list[dict[str, str]] | None, taint: bool) -> None:
    plan = plan_for([node("a", cpu=2)], [run("v", "a", cpu=2), pend(tolerations=tolerations)])
    assert plan.outcome == "evict"
    assert plan_dict(plan)["taint"] is taint


# -- determinism --------------------------------------------------------------------------------------------


def _busy_cluster() -> tuple[list[Node], list[Pod], list[PodDisruptionBudget]]:
    nodes = [node(f"n{i}", cpu=4) for i in range(5)]
    pods = [run(f"n{i}-v{j}", f"n{i}", priority=(i * 7 + j * 3) % 10, grace=(5, 30)[j % 2],
                labels={"app": f"a{j % 3}"}) for i in range(5) for j in range(4)]
    pdbs = [make_pdb("a0", selector={"app": "a0"}, disruptions_allowed=1),
            make_pdb("a1", selector={"app": "a1"}, disruptions_allowed=0)]
    return nodes, [*pods, pend(cpu=3)], pdbs


def test_the_same_state_gives_the_same_plan() -> None:
    nodes, pods, pdbs = _busy_cluster()
    state = make_state(nodes, pods, pdbs)
    pod = state.pod("default/p")
    assert pod is not None
    first, second = plan_pod(state, pod), Planner(state).plan(pod)
    assert first == second
    assert first.outcome == "evict"


def test_the_order_of_nodes_and_pods_in_the_input_does_not_matter() -> None:
    nodes, pods, pdbs = _busy_cluster()
    want = plan_dict(plan_for(nodes, pods, pdbs))
    rng = random.Random(7)
    for _ in range(5):
        rng.shuffle(nodes)
        rng.shuffle(pods)
        rng.shuffle(pdbs)
        assert plan_dict(plan_for(nodes, pods, pdbs)) == want


# -- seed 001, examples 1–4: several pending pods, each later plan seeing the earlier ones placed --------


def _example_1_state(*extra_nodes: Node, extra: Sequence[Pod] = ()) -> Any:
    # "There is only 1 node (other than the master) in the cluster. The node capacity is 10 units
    # of resources. There are two pods, A and B, running on the node. Both have priority 100 and
    # each use 5 units of resources. Pod A has 60 seconds of graceful termination period and pod B
    # has 30 seconds. Scheduler has two pods, C and D, in its queue. Pod C needs 10 units of
    # resources and its priority is 1000. Pod D needs 2 units of resources and its priority is 50."
    pods = [run("a", "node-1", cpu=5, priority=100, grace=60), run("b", "node-1", cpu=5, priority=100, grace=30),
            pend("c", cpu=10, priority=1000), pend("d", cpu=2, priority=50), *extra]
    return make_state([node("node-1", cpu=10), *extra_nodes], pods)


def _plan_queue(state: Any, *keys: str) -> list[Plan]:
    return plan_pending(state, [state.pod(f"default/{k}") for k in keys])


def test_seed_example_1_c_evicts_a_and_b_and_d_cannot_be_scheduled() -> None:
    # "Given that pod C's priority is 1000, scheduler preempts both of pods A and B and sets the
    # future node name of C to Node 1. Pod D cannot be scheduled anywhere."
    c, d = _plan_queue(_example_1_state(), "c", "d")
    assert (c.outcome, c.node, sorted(names(c))) == ("evict", "node-1", ["a", "b"])
    assert c.tier == 2  # both grace periods exceed 10 s
    assert d.outcome == "infeasible"
    assert "0/1 nodes are available: 1 Insufficient cpu." in d.message


def test_seed_example_1_later_d_does_not_fit_because_c_is_nominated_ahead_of_it() -> None:
    # "After 30 seconds (or less) pod B terminates [...] Scheduler tries to schedule pod D, but since
    # pod C is ahead of pod D in the queue, scheduler assumes that it is bound to Node 1 when it
    # evaluates feasibility of pod D. With this assumption, scheduler determines that the node does
    # not have enough resources for pod D." (A is still terminating; C is nominated to node 1.)
    state = make_state([node("node-1", cpu=10)], [
        run("a", "node-1", cpu=5, priority=100, grace=60, deletion_timestamp="2026-01-01T00:00:00Z"),
        pend("c", cpu=10, priority=1000, nominated_node="node-1"), pend("d", cpu=2, priority=50)])
    d = plan_pod(state, state.pod("default/d"))  # type: ignore[arg-type]
    assert d.outcome == "infeasible"
    # Without C's nomination the same room would take D.
    free = make_state([node("node-1", cpu=10)], [state.pod("default/a"), state.pod("default/d")])  # type: ignore[list-item]
    assert plan_pod(free, free.pod("default/d")).outcome == "fits"  # type: ignore[arg-type]


def test_seed_example_2_c_evicts_on_node_1_while_e_holds_node_2() -> None:
    # "Everything is similar to the previous example, but here we have two nodes. Node 2 is running
    # pod E with priority 2000 and request of 10 units. Similar to example 1, scheduler preempts
    # pods A and B on Node 1 and sets the future node of pod C to Node 1. Pod D cannot be scheduled
    # anywhere."
    state = _example_1_state(node("node-2", cpu=10), extra=[run("e", "node-2", cpu=10, priority=2000)])
    c, d = _plan_queue(state, "c", "d")
    assert (c.outcome, c.node, sorted(names(c))) == ("evict", "node-1", ["a", "b"])
    assert d.outcome == "infeasible"


def test_seed_example_2_once_e_and_b_are_gone_c_goes_to_node_2_and_d_to_node_1() -> None:
    # "pod E terminates on Node 2. [...] scheduler finds Node 2 available for pod C. It schedules
    # pod C on Node 2. After 30 seconds (or less) pod B terminates. A scheduler pass is triggered
    # and scheduler schedules pod D on Node 1." A is still terminating; C is still nominated to
    # node 1, but once C is placed on node 2 its nomination no longer holds room for D.
    state = make_state([node("node-1", cpu=10), node("node-2", cpu=10)], [
        run("a", "node-1", cpu=5, priority=100, grace=60, deletion_timestamp="2026-01-01T00:00:00Z"),
        pend("c", cpu=10, priority=1000, nominated_node="node-1"), pend("d", cpu=2, priority=50)])
    c, d = _plan_queue(state, "c", "d")
    assert (c.outcome, c.node) == ("fits", "node-2")
    assert (d.outcome, d.node) == ("fits", "node-1")


def test_seed_example_3_d_fits_on_node_2() -> None:
    # "Everything is similar to example 2, but pod E uses 8 units of resources. So, 2 units of
    # resources are available on Node 2. Similar to example 2, scheduler preempts pods A and B and
    # sets the future node of pod C to Node 1. Scheduler looks at pod D in the queue. Pod D can fit
    # on Node 2."
    state = _example_1_state(node("node-2", cpu=10), extra=[run("e", "node-2", cpu=8, priority=2000)])
    c, d = _plan_queue(state, "c", "d")
    assert (c.outcome, c.node, sorted(names(c))) == ("evict", "node-1", ["a", "b"])
    assert (d.outcome, d.node) == ("fits", "node-2")


def test_seed_example_4_f_is_placed_on_node_1_and_c_and_d_remain_pending() -> None:
    # "Everything is similar to example 1, but while scheduler is waiting for pods A and B to
    # gracefully terminate, a new higher priority pod F is created and goes to the head of the
    # queue. Scheduler evaluates the feasibility of pod F and determines that it can be scheduled on
    # Node 1. [...] Scheduler looks at pod C and assumes that pod F is already bound to Node 1, so
    # pod C can no longer run on Node 1. [...] Eventually when pods A and B terminate, pod F is
    # bound to Node 1 and pods C and D remain pending."
    # kresched plans the queue in one pass from the state before any eviction, with F (priority
    # 1500, 5 units) at its head: the outcome the seed states is the one that must come out.
    state = _example_1_state(extra=[pend("f", cpu=5, priority=1500)])
    f, c, d = _plan_queue(state, "f", "c", "d")
    assert (f.outcome, f.node) == ("evict", "node-1")
    assert len(f.victims) == 1  # F needs 5 units: one of A and B is enough
    assert c.outcome == "infeasible"
    assert d.outcome == "infeasible"


def test_plan_pending_sees_each_earlier_pod_placed() -> None:
    # Two pods that each fit alone on the one free node: the second must see the first there.
    state = make_state([node("a", cpu=2), node("b", cpu=2)],
                       [run("x", "b", cpu=2, priority=H), pend("first", cpu=2), pend("second", cpu=2, priority=P - 1)])
    first, second = _plan_queue(state, "first", "second")
    assert (first.outcome, first.node) == ("fits", "a")
    assert second.outcome == "infeasible"


# -- which pods are planned, and in which order -----------------------------------------------------------


def test_pending_pods_are_planned_by_effective_priority_critical_only_by_default() -> None:
    pods = [
        pend("cluster-critical", priority=2_000_000_000, priority_class="system-cluster-critical"),
        pend("node-critical", priority=2_000_001_000, priority_class="system-node-critical"),
        pend("legacy", priority=0, annotations=CRITICAL_ANNOTATION),
        pend("plain-high", priority=1_000_000),
        pend("plain-low", priority=5),
    ]
    state = make_state([node("a")], pods)
    # legacy counts as 2000000000 and ties with cluster-critical; neither has a creation time, so
    # the tie goes by name.
    assert [p.name for p in pending_pods_to_plan(state)] == ["node-critical", "cluster-critical", "legacy"]
    assert [p.name for p in pending_pods_to_plan(state, all_pending=True)] == [
        *[p.name for p in pending_pods_to_plan(state)], "plain-high", "plain-low"]


def test_equal_priorities_are_planned_oldest_first() -> None:
    def aged(name: str, ts: str) -> Pod:
        p = pend(name, priority=2_000_000_000)
        return msgspec.structs.replace(p, metadata=msgspec.structs.replace(p.metadata, creation_timestamp=ts))

    state = make_state([node("a")], [aged("young", "2026-01-02T00:00:00Z"), aged("old", "2026-01-01T00:00:00Z")])
    assert [p.name for p in pending_pods_to_plan(state)] == ["old", "young"]


@pytest.mark.parametrize("pod", [
    pytest.param(pend("gated", priority=2_000_000_000, spec={"schedulingGates": [{"name": "wait"}]}),
                 id="a pod held by a scheduling gate is not pending for the scheduler"),
    pytest.param(make_pod("bound", node="a", priority=2_000_000_000, phase="Pending"),
                 id="a pod already bound to a node is not pending"),
    pytest.param(pend("leaving", priority=2_000_000_000, deletion_timestamp="2026-01-01T00:00:00Z"),
                 id="a terminating pod is not pending"),
    pytest.param(pend("done", priority=2_000_000_000, phase="Succeeded"), id="a finished pod is not pending"),
])
def test_pods_that_are_not_pending_are_not_planned(pod: Pod) -> None:
    state = make_state([node("a")], [pod, pend("waiting", priority=2_000_000_000)])
    assert [p.name for p in pending_pods_to_plan(state, all_pending=True)] == ["waiting"]


def test_a_node_looked_at_for_one_pod_is_looked_at_afresh_once_a_plan_spends_its_pdb() -> None:
    """The search kept per pod shape remembers a node it bounded but did not need (n2: its pod of
    app g sits under a spent PDB, so two of its app-h pods would have to go). The first pending
    pod's plan evicts a0, spending the app-h PDB's last unit: for the second pod n2's app-h pods are
    protected too, and the plan says so, as a planner that recomputes everything says it."""
    nodes = [make_node(n, cpu="2", pods=110) for n in ("n0", "n1", "n2")]
    pods = [
        make_pod("a0", node="n0", cpu="1", priority=100, labels={"app": "h"}, grace=5),
        make_pod("f0", node="n0", cpu="1", priority=5000, grace=5),
        make_pod("a1", node="n1", cpu="1", priority=100, labels={"app": "y"}, grace=5),
        make_pod("f1", node="n1", cpu="1", priority=5000, grace=5),
        # Started later than a0 and a1: n2's quick bound comes first, its refined bound (two
        # victims) after their options, so the first pod's search keeps it unselected.
        make_pod("g2", node="n2", cpu="1", priority=100, labels={"app": "g"}, grace=5,
                 start_time="2026-01-05T00:00:00Z"),
        make_pod("h2a", node="n2", cpu="500m", priority=100, labels={"app": "h"}, grace=5,
                 start_time="2026-01-05T00:00:00Z"),
        make_pod("h2b", node="n2", cpu="500m", priority=100, labels={"app": "h"}, grace=5,
                 start_time="2026-01-05T00:00:00Z"),
    ]
    pending = [make_pod(f"p{i}", cpu="1", priority=1000) for i in (1, 2)]
    pdbs = [make_pdb("g", selector={"app": "g"}, disruptions_allowed=0),
            make_pdb("h", selector={"app": "h"}, disruptions_allowed=1)]
    state = make_state(nodes, [*pods, *pending], pdbs)
    options = PlanOptions(max_grace_seconds=30)
    kept, fresh = Planner(state, options), Planner(state, options, memoize=False)
    first = kept.plan(pending[0], commit=True)
    assert (first.node, [v.pod.name for v in first.victims]) == ("n0", ["a0"])
    assert plan_dict(first) == plan_dict(fresh.plan(pending[0], commit=True))
    second = kept.plan(pending[1], commit=True)
    assert (second.node, [v.pod.name for v in second.victims]) == ("n1", ["a1"])
    assert plan_dict(second) == plan_dict(fresh.plan(pending[1], commit=True))
    assert [(r.node, r.reason) for r in second.runners_up if r.node == "n2"] == [
        ("n2", "tier 1 evicts only pods that stop within 30s and whose PDB allows it: those here hold too little (a "
               "node where they do is chosen first)")]
