"""`plan_wave`: a rebalance move's prediction re-derived right before its eviction, from where the
earlier replacements really landed — kept, retargeted or dropped — and the moves evicted at once,
predicted over every order the scheduler may place their replacements in."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.placement import bound_to, replacement_of
from kresched.plan.rebalance import plan_rebalance
from kresched.plan.rebalance_plans import Move, RebalanceOptions, RebalancePlan
from kresched.plan.rebalance_rederive import ends_as_planned, plan_wave
from kresched.sources.snapshot import load_snapshot
from tests.builders import gang_member, make_namespace, make_node, make_pdb, make_pod, make_pod_group, make_state
from tests.plan.test_rebalance import PROFILE, clusters

UTIL = RebalanceOptions(objectives=("utilisation",))


def web(name: str, node: str) -> Pod:
    return make_pod(name, "shop", node=node, cpu="1", memory="64Mi", limits={"cpu": "1", "memory": "64Mi"},
                    labels={"app": "web"}, owner="ReplicaSet/web-7d9")


def batch(name: str, node: str) -> Pod:
    return make_pod(name, "shop", node=node, cpu="500m", memory="64Mi", labels={"app": "batch"},
                    owner="ReplicaSet/batch-5c4")


def issue_scene() -> ClusterState:
    """Issue 45's scene: five 4-CPU nodes; n1 holds 1 web and 4 batch (75 %), n2 3 web and 1 batch
    (87.5 %), n3 2 web (50 %); n4 and n5 are empty. A 6-replica web with a PDB, a 5-replica batch."""
    pods = [web("web-0", "n1"), *(batch(f"batch-{i}", "n1") for i in range(4)),
            *(web(f"web-{i}", "n2") for i in (1, 2, 3)), batch("batch-4", "n2"), web("web-4", "n3"), web("web-5", "n3")]
    return make_state([make_node(f"n{i}", cpu="4") for i in range(1, 6)], pods,
                      [make_pdb("web", "shop", selector={"app": "web"}, max_unavailable=1, disruptions_allowed=1)],
                      [], [make_namespace("shop")])


def landed(state: ClusterState, *moves: tuple[Move, str]) -> ClusterState:
    """The cluster once each move's pod is gone and its replacement is bound to the node given."""
    gone = {m.pod.key: node for m, node in moves}
    pods = [p for p in state.pods if p.key not in gone]
    pods += [bound_to(replacement_of(m.pod), state.node_by_name[node]) for m, node in moves]
    return ClusterState.build(state.nodes, pods, state.pdbs, state.priority_classes, state.namespaces,
                              state.workloads)


def moves_of(plan: RebalancePlan) -> dict[str, Move]:
    return {m.pod.name: m for m in plan.moves}


def test_the_issues_plan_rests_later_predictions_on_the_first_tie_break() -> None:
    plan = plan_rebalance(issue_scene())
    assert [(m.pod.name, m.source, m.to, m.candidates) for m in plan.moves] == [
        ("batch-0", "n1", "n4", ("n4", "n5")), ("batch-1", "n1", "n5", ("n5",)),
        ("batch-4", "n2", "n4", ("n4", "n5")), ("web-1", "n2", "n5", ("n5",))]
    assert all(m.destinations == {"n4", "n5"} for m in plan.moves)


def test_a_later_move_is_retargeted_to_where_the_earlier_tie_really_broke() -> None:
    state = issue_scene()
    plan = plan_rebalance(state)
    m = moves_of(plan)
    # batch-0's replacement took n5, the other tied node: batch-1's n5 rested on the tie-break.
    wave = plan_wave(landed(state, (m["batch-0"], "n5")), plan, [m["batch-1"]])
    [p] = wave.run
    assert (p.to, p.candidates, p.retargeted, p.dropped) == ("n4", ("n4",), True, None)
    assert wave.dropped == ()
    # Where the tie broke as planned, the plan's prediction stands.
    [same] = plan_wave(landed(state, (m["batch-0"], "n4")), plan, [m["batch-1"]]).run
    assert (same.to, same.candidates, same.retargeted) == ("n5", ("n5",), False)


def test_re_deriving_each_move_where_the_earlier_ones_landed_as_planned_gives_the_plans_prediction() -> None:
    for state in (issue_scene(), load_snapshot("demo")):
        plan = plan_rebalance(state)
        assert plan.moves
        _assert_re_derived_as_planned(state, plan)


@PROFILE
@given(clusters())
def test_re_derived_predictions_are_the_plans_on_random_clusters(state: ClusterState) -> None:
    opts = RebalanceOptions(thresholds={"cpu": 30, "memory": 30, "pods": 30},
                            target_thresholds={"cpu": 60, "memory": 60, "pods": 60})
    _assert_re_derived_as_planned(state, plan_rebalance(state, opts))


def _assert_re_derived_as_planned(state: ClusterState, plan: RebalancePlan) -> None:
    done: list[tuple[Move, str]] = []
    for m in plan.moves:
        wave = plan_wave(landed(state, *done), plan, [m])
        assert wave.dropped == (), (m.pod.key, wave.dropped)
        [p] = wave.run
        assert (p.to, p.candidates, p.retargeted) == (m.to, m.candidates, False), m.pod.key
        done.append((m, m.to))


def test_a_move_whose_source_is_no_longer_above_the_target_is_dropped_with_why() -> None:
    """Two bare pods (never moved) left n1 after the plan: at 50 % it is no longer a source."""
    pods = [make_pod(f"bare-{i}", "shop", node="n1", cpu="500m", owner=None) for i in range(4)]
    pods += [batch(f"batch-{i}", "n1") for i in range(3)]
    state = make_state([make_node("n1", cpu="4"), make_node("n2", cpu="4")], pods, [], [], [make_namespace("shop")])
    plan = plan_rebalance(state, UTIL)
    assert [m.pod.name for m in plan.moves] == ["batch-0", "batch-1", "batch-2"]
    m = moves_of(plan)
    later = landed(state, (m["batch-0"], "n2"))
    later = ClusterState.build(later.nodes, [p for p in later.pods if p.name not in ("bare-0", "bare-1")],
                               namespaces=later.namespaces)
    wave = plan_wave(later, plan, [m["batch-1"]])
    assert wave.run == ()
    [p] = wave.dropped
    assert (p.move.pod.name, p.dropped, p.gone) == ("batch-1", "n1 is no longer above the target thresholds", False)


def test_a_move_whose_landing_no_longer_helps_is_dropped_with_the_simulations_reason() -> None:
    """A pod nobody planned took n2 (the only destination) to the target: batch-1's replacement
    would push it above."""
    state = make_state([make_node("n1", cpu="4"), make_node("n2", cpu="4")],
                       [batch(f"batch-{i}", "n1") for i in range(7)], [], [], [make_namespace("shop")])
    plan = plan_rebalance(state, UTIL)
    m = moves_of(plan)
    crowded = landed(state, (m["batch-0"], "n2"))
    crowded = ClusterState.build(crowded.nodes, [*crowded.pods, make_pod("other", "shop", node="n2", cpu="1500m")],
                                 namespaces=crowded.namespaces)
    [p] = plan_wave(crowded, plan, [m["batch-1"]]).dropped
    assert p.dropped == "it would push n2 above the target thresholds"


@pytest.mark.parametrize(("why", "pod"), [
    ("the pod was already gone", None),
    ("the pod was already gone", make_pod("batch-1", "shop", node="n1", cpu="500m", uid="a-new-pod")),
    ("it is already terminating (evicted or deleted by another)",
     make_pod("batch-1", "shop", node="n1", cpu="500m", uid="uid-shop-batch-1",
              deletion_timestamp="2026-01-01T00:00:00Z")),
])
def test_a_move_whose_pod_is_gone_or_going_is_not_carried_out(why: str, pod: Pod | None) -> None:
    state = make_state([make_node("n1", cpu="4"), make_node("n2", cpu="4")],
                       [batch(f"batch-{i}", "n1") for i in range(7)], [], [], [make_namespace("shop")])
    plan = plan_rebalance(state, UTIL)
    m = moves_of(plan)
    now = landed(state, (m["batch-0"], "n2"))
    now = ClusterState.build(now.nodes, [p for p in now.pods if p.name != "batch-1"] + ([pod] if pod else []),
                             namespaces=now.namespaces)
    [p] = plan_wave(now, plan, [m["batch-1"]]).dropped
    assert (p.dropped, p.gone) == (why, "gone" in why)


def test_moves_evicted_at_once_predict_every_order_the_scheduler_may_take() -> None:
    """batch-0 and web-1 evicted together: whichever replacement the scheduler places first takes
    one of the empty nodes, the other the other — each may land on n4 or n5 (the plan, one after
    the other, said n4 for batch-0 and n5 for web-1)."""
    state = issue_scene()
    plan = plan_rebalance(state)
    m = moves_of(plan)
    wave = plan_wave(state, plan, [m["batch-0"], m["web-1"]])
    assert [(p.move.pod.name, p.to, p.candidates, p.together) for p in wave.run] == [
        ("batch-0", "n4", ("n4", "n5"), ("shop/web-1",)), ("web-1", "n5", ("n4", "n5"), ("shop/batch-0",))]
    assert [p.retargeted for p in wave.run] == [False, True]


def test_three_workloads_evicted_at_once_each_may_take_any_empty_node_and_any_such_end_is_planned() -> None:
    """--parallel 3: one pod of each of three workloads leaves n1 (four bare pods stay) for the three
    empty nodes. One after the other the plan says n2, n3, n4; evicted at once, placed in any
    order, each replacement may take any of them, and any of those ends is one the plan predicted."""
    pods = [make_pod(f"{rs}-0", "shop", node="n1", cpu="1", labels={"app": rs}, owner=f"ReplicaSet/{rs}")
            for rs in "abc"]
    pods += [make_pod(f"bare-{i}", "shop", node="n1", cpu="1", owner=None) for i in range(4)]
    state = make_state([make_node(f"n{i}", cpu="8") for i in (1, 2, 3, 4)], pods, [], [], [make_namespace("shop")])
    plan = plan_rebalance(state, UTIL)
    assert [(m.pod.name, m.to, m.candidates) for m in plan.moves] == [
        ("a-0", "n2", ("n2", "n3", "n4")), ("b-0", "n3", ("n3", "n4")), ("c-0", "n4", ("n4",))]
    wave = plan_wave(state, plan, plan.moves)
    assert [(p.move.pod.name, p.to, p.candidates, p.retargeted, len(p.together)) for p in wave.run] == [
        ("a-0", "n2", ("n2", "n3", "n4"), False, 2), ("b-0", "n3", ("n2", "n3", "n4"), True, 2),
        ("c-0", "n4", ("n2", "n3", "n4"), True, 2)]
    assert ends_as_planned(state, plan, {"shop/a-0": "n4", "shop/b-0": "n2", "shop/c-0": "n3"})
    # Two on one node is no course the scheduler takes (the second scores the emptier nodes higher).
    assert not ends_as_planned(state, plan, {"shop/a-0": "n2", "shop/b-0": "n2", "shop/c-0": "n3"})


def _pools() -> tuple[ClusterState, RebalancePlan]:
    """api (pinned to pool x: n1, n2, n3) and batch (anywhere) each give one pod; n2 and n5 are
    the empty destinations, n3 (22.5 %) is neither. One after the other, api takes n2 and batch
    n5; but were batch placed first it could take n2, and api would then land on n3."""
    x = {"pool": "x"}
    nodes = [make_node("n1", cpu="4", labels=x), make_node("n2", cpu="4", labels=x), make_node("n3", cpu="4", labels=x),
             make_node("n4", cpu="4"), make_node("n5", cpu="4")]
    pods = [make_pod(f"api-{i}", "shop", node="n1", cpu="1", labels={"app": "api"}, owner="ReplicaSet/api",
                     node_selector=x) for i in range(3)]
    pods += [make_pod(f"batch-{i}", "shop", node="n4", cpu="1", labels={"app": "batch"}, owner="ReplicaSet/batch")
             for i in range(3)]
    pods.append(make_pod("bare", "shop", node="n3", cpu="900m", owner=None))
    state = make_state(nodes, pods, [], [], [make_namespace("shop")])
    return state, plan_rebalance(state, UTIL)


def test_a_move_whose_prediction_does_not_hold_with_the_wave_waits_for_the_next() -> None:
    state, plan = _pools()
    assert [(m.pod.name, m.to) for m in plan.moves] == [("api-0", "n2"), ("batch-0", "n5")]
    api, bat = plan.moves
    wave = plan_wave(state, plan, [api, bat])
    assert [(p.move.pod.name, p.to, p.candidates, p.together) for p in wave.run] == [("api-0", "n2", ("n2",), ())]
    assert wave.dropped == ()
    # Once api's replacement is on n2, batch goes alone, as planned.
    [p] = plan_wave(landed(state, (api, "n2")), plan, [bat]).run
    assert (p.to, p.candidates) == ("n5", ("n5",))


def test_the_courses_simulated_for_a_wave_are_bounded() -> None:
    state = issue_scene()
    plan = plan_rebalance(state)
    m = moves_of(plan)
    ready: Sequence[Move] = [m["batch-0"], m["web-1"]]
    assert len(plan_wave(state, plan, ready).run) == 2
    # Both orders need 2 + 4 landings; with fewer, web-1 waits and batch-0 goes alone.
    assert [p.move.pod.name for p in plan_wave(state, plan, ready, budget=5).run] == ["batch-0"]


@pytest.mark.parametrize(("landings", "as_planned"), [
    ({"batch-0": "n4", "batch-1": "n5", "batch-4": "n4", "web-1": "n5"}, True),
    # The issue's runs: batch-0 took the other tied node, batch-1 the one left — the pair as planned.
    ({"batch-0": "n5", "batch-1": "n4", "batch-4": "n4", "web-1": "n5"}, True),
    # Every tie broken the other way: not the after-table, but an end the plan's ties allow.
    ({"batch-0": "n5", "batch-1": "n4", "batch-4": "n5", "web-1": "n4"}, True),
    # No tie-break puts all three batch replacements on n4, or one on n3.
    ({"batch-0": "n4", "batch-1": "n4", "batch-4": "n4", "web-1": "n5"}, False),
    ({"batch-0": "n4", "batch-1": "n3", "batch-4": "n4", "web-1": "n5"}, False),
    # A move not carried out.
    ({"batch-0": "n4", "batch-1": "n5", "batch-4": "n4"}, False),
])
def test_the_round_ends_as_planned_when_the_plans_ties_broken_some_way_end_there(
        landings: dict[str, str], as_planned: bool) -> None:
    state = issue_scene()
    plan = plan_rebalance(state)
    assert ends_as_planned(state, plan, {f"shop/{k}": v for k, v in landings.items()}) is as_planned


def test_moves_under_one_pdb_are_not_evicted_at_once() -> None:
    """Two workloads under one PDB (it selects both): the second would wait for the first's
    replacement anyway, so it waits for the next wave."""
    pods = [make_pod(f"a-{i}", "shop", node="n1", cpu="1", labels={"tier": "front"}, owner="ReplicaSet/a")
            for i in range(3)]
    pods += [make_pod(f"b-{i}", "shop", node="n2", cpu="1", labels={"tier": "front"}, owner="ReplicaSet/b")
             for i in range(3)]
    front = make_pdb("front", "shop", selector={"tier": "front"}, max_unavailable=2, disruptions_allowed=2)
    state = make_state([make_node(f"n{i}", cpu="4") for i in (1, 2, 3, 4)], pods, [front], [],
                       [make_namespace("shop")])
    plan = plan_rebalance(state, UTIL)
    assert [(m.pod.name, m.pdb) for m in plan.moves] == [("a-0", "shop/front"), ("b-0", "shop/front")]
    assert [p.move.pod.name for p in plan_wave(state, plan, plan.moves).run] == ["a-0"]


# -- the other objectives' moves, re-derived --------------------------------------------------------

def test_a_violation_that_no_longer_holds_is_dropped_with_why() -> None:
    """db-0 wanted a disk=ssd node; since the plan its own node got the label: nothing to fix."""
    ssd = {"disk": "ssd"}
    pod = make_pod("db-0", "shop", node="a", cpu="1", node_selector=ssd, owner="StatefulSet/db")
    state = make_state([make_node("a"), make_node("b", labels=ssd)], [pod], [], [], [make_namespace("shop")])
    plan = plan_rebalance(state, RebalanceOptions(objectives=("violations",)))
    [m] = plan.moves
    assert (m.pod.name, m.to) == ("db-0", "b")
    assert [p.to for p in plan_wave(state, plan, [m]).run] == ["b"]
    relabelled = make_state([make_node("a", labels=ssd), make_node("b", labels=ssd)], [pod], [], [],
                            [make_namespace("shop")])
    wave = plan_wave(relabelled, plan, [m])
    assert wave.run == ()
    [p] = wave.dropped
    assert (p.dropped, p.gone) == ("its constraints hold on a again", False)


def _prefers_fast(fast: tuple[str, ...]) -> tuple[ClusterState, Pod]:
    pod = make_pod("web-0", "shop", node="a", cpu="1", owner="ReplicaSet/web", affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "preference": {"matchExpressions": [
            {"key": "fast", "operator": "In", "values": ["true"]}]}}]}})
    nodes = [make_node(n, labels={"fast": "true"} if n in fast else {}) for n in ("a", "b", "c")]
    return make_state(nodes, [pod], [], [], [make_namespace("shop")]), pod


def test_a_preference_move_follows_the_preferred_node_and_is_dropped_when_no_node_gains() -> None:
    state, _ = _prefers_fast(("b",))
    plan = plan_rebalance(state, RebalanceOptions(objectives=("preferences",)))
    [m] = plan.moves
    assert (m.to, m.candidates) == ("b", ("b",))
    # The label moved from b to c since the plan: retargeted to c.
    [p] = plan_wave(_prefers_fast(("c",))[0], plan, [m]).run
    assert (p.to, p.candidates, p.retargeted) == ("c", ("c",), True)
    # No node is preferred any more: its own node is among those tied, the move is dropped.
    [gone] = plan_wave(_prefers_fast(())[0], plan, [m]).dropped
    assert gone.dropped == "a is among the nodes tied for its replacement (a, b, c)"


# -- gangs: the eviction API does not count them, the re-derivation does -----------------------------

def _gang_scene(min_count: int, *, lost: str | None = None) -> ClusterState:
    """Two ReplicaSets of one running gang (`train`, six members), three on n1 and three on n2
    (75 % each), n3 and n4 empty; `lost`: a member gone since the plan."""
    pods = [make_pod(f"{rs}-{i}", "shop", node=node, cpu="1", owner=f"ReplicaSet/{rs}", **gang_member("train"))
            for rs, node in (("a", "n1"), ("b", "n2")) for i in range(3)]
    group = make_pod_group("train", "shop", min_count=min_count)
    return make_state([make_node(f"n{i}", cpu="4") for i in (1, 2, 3, 4)], [p for p in pods if p.name != lost],
                      [], [], [make_namespace("shop")], pod_groups=[group])


def test_a_move_that_would_now_stop_its_gang_is_dropped_and_members_evicted_at_once_keep_the_gang() -> None:
    state = _gang_scene(4)
    plan = plan_rebalance(state, UTIL)
    assert [m.pod.name for m in plan.moves] == ["a-0", "b-0"]  # six running, minCount 4: two to spare
    a, b = plan.moves
    # Two to spare: both members may be evicted at once.
    assert [p.move.pod.name for p in plan_wave(state, plan, [a, b]).run] == ["a-0", "b-0"]
    # One to spare (minCount raised since the plan): b-0 evicted with a-0 would stop the gang, so it
    # waits for the next wave (the budget is read again once a-0's replacement runs).
    wave = plan_wave(_gang_scene(5), plan, [a, b])
    assert ([p.move.pod.name for p in wave.run], wave.dropped) == (["a-0"], ())
    # A member (on n2) went since the plan: five running, one to spare, a-0 still goes...
    [p] = plan_wave(_gang_scene(4, lost="b-2"), plan, [a]).run
    assert (p.move.pod.name, p.to, p.candidates) == ("a-0", "n3", ("n3", "n4"))
    # ...but with none to spare its eviction would stop the gang: dropped, and the report says why.
    wave = plan_wave(_gang_scene(5, lost="b-2"), plan, [a])
    assert wave.run == ()
    [dropped] = wave.dropped
    assert dropped.dropped == ("moving it stops its gang PodGroup shop/train (5 running, minCount 5: "
                               "a gang runs all or nothing)")
