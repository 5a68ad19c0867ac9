"""A queue of pods whose filters read the cluster (required pod affinity and anti-affinity,
spreading) plans the same with its searches resumed as with nothing kept (hypothesis).

`sched.resume` starts the search of such a pod where the last pod of its shape stopped, filtering
again only the nodes that changed and those of the topology domains whose counts changed: on
clusters of 150 nodes the scheduler's search stops at 100 feasible nodes (`numFeasibleNodesToFind`),
so where the last search stopped, and which nodes it saw, decide the answer. Groups of pods of one
shape come one after another (the second and later resume), among pods of other shapes; some need
evictions (whose victims move to other domains). Runs derandomized: CI is deterministic."""

from __future__ import annotations

from collections import Counter
from typing import Any
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan import placement, planner
from kresched.plan.planner import Planner
from kresched.plan.plans import PlanOptions
from kresched.plan.queue import pending_pods_to_plan
from kresched.sched.runner import fit_error_message
from tests.builders import make_node, make_pod, make_state
from tests.plan.test_queue_cache import assert_same_with_caches_off, decision

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=40,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APPS = ("a", "b", "c", "d")


def _term(app: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


@st.composite
def shapes(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "app": draw(st.sampled_from(APPS)),
        "cpu": draw(st.sampled_from(("250m", "500m", "1", "3"))),
        "priority": draw(st.sampled_from((100, 1000))),
        "anti": draw(st.sampled_from((None, HOST, HOST, ZONE))),
        "affinity": draw(st.sampled_from((None, None, "a", "b"))),
        "spread": draw(st.sampled_from((None, None, ZONE, HOST))),
        "zone": draw(st.sampled_from((None, None, "z1"))),
        "count": draw(st.integers(1, 6)),
    }


@st.composite
def queues(draw: st.DrawFn) -> tuple[ClusterState, list[Pod]]:
    nodes, pods = [], []
    zones = draw(st.integers(2, 4))
    for i in range(150):
        name = f"n{i:03d}"
        nodes.append(make_node(name, cpu="4", memory="16Gi", labels={ZONE: f"z{i % zones}"}))
        for j in range(draw(st.integers(0, 3))):
            app = draw(st.sampled_from(APPS))
            anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(app, HOST)]}} \
                if draw(st.integers(0, 9)) == 0 else None
            pods.append(make_pod(f"run-{name}-{j}", node=name, cpu="1", priority=draw(st.sampled_from((0, 500))),
                                 labels={"app": app, ZONE: f"z{i % zones}"}, affinity=anti, grace=30,
                                 owner=f"ReplicaSet/{app}"))
    queue = []
    for g, shape in enumerate(draw(st.lists(shapes(), min_size=2, max_size=7))):
        app = shape["app"]
        affinity: dict[str, Any] = {}
        if shape["anti"]:
            affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                _term(app, shape["anti"])]}
        if shape["affinity"]:
            affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                _term(shape["affinity"], ZONE)]}
        spread = [{"maxSkew": 1, "topologyKey": shape["spread"], "whenUnsatisfiable": "DoNotSchedule",
                   "labelSelector": {"matchLabels": {"app": app}}}] if shape["spread"] else None
        for k in range(shape["count"]):
            queue.append(make_pod(f"q{g}-{k}", cpu=shape["cpu"], priority=shape["priority"], labels={"app": app},
                                  affinity=affinity or None, spread=spread, owner=f"ReplicaSet/q{g}",
                                  node_selector={ZONE: shape["zone"]} if shape["zone"] else None,
                                  start_time=f"2026-01-01T00:{g:02d}:{k:02d}Z"))
    state = make_state(nodes, [*pods, *queue])
    return state, pending_pods_to_plan(state, all_pending=True)


@PROFILE
@given(queues(), st.booleans())
def test_a_queue_of_pods_reading_the_cluster_plans_the_same_with_searches_resumed(
        queue: tuple[ClusterState, list[Pod]], rotate: bool) -> None:
    assert_same_with_caches_off(*queue, rotate)


@PROFILE
@given(queues())
def test_a_search_resumed_later_leaves_the_diagnoses_handed_out_before_as_they_were(
        queue: tuple[ClusterState, list[Pod]]) -> None:
    """A resumed search shares its lists with the walk it resumes, and so with the Diagnosis that
    walk's search handed out (it copies what it changes): every Diagnosis of a queue still holds,
    once the whole queue is planned, what it held when its search returned — its feasible nodes,
    its statuses, and its counts of their reasons (a message counts them: here every search's is
    asked for)."""
    state, pods = queue
    real = placement.find_nodes_that_fit
    seen: list[tuple[Any, list[str], dict[str, Any]]] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        diag, cycle = real(*args, **kwargs)
        fit_error_message(diag)  # its reasons counted now, as a message counts them (then kept in step)
        seen.append((diag, list(diag.feasible), dict(diag.node_to_status)))
        return diag, cycle

    with patch.object(placement, "find_nodes_that_fit", recording):
        planner = Planner(state, PlanOptions())
        for pod in pods:
            planner.plan(pod, commit=True)
    assert len(seen) >= len(pods)
    for diag, feasible, statuses in seen:
        assert diag.feasible == feasible
        assert diag.feasible_set == frozenset(feasible)
        assert diag.node_to_status == statuses
        assert diag.reason_counts == Counter(st.reasons for st in statuses.values())


def test_replicas_no_eviction_helps_are_answered_alike_until_the_cluster_changes():
    # Zone z1 holds a pod of app web that nothing may evict for the replicas (a higher priority):
    # their anti-affinity to web rules out every node of the zone their selector asks for. Two of
    # them are planned on the same cluster; then a pod of higher priority still evicts web (bare:
    # nothing recreates it), and the third replica is placed by evicting a pod of lower priority.
    nodes = [make_node(f"n{i}", cpu="4", memory="16Gi", labels={ZONE: f"z{2 - i % 2}"}) for i in range(1, 5)]
    web = make_pod("web", node="n1", cpu="3", priority=1000, labels={"app": "web"}, owner=None)
    filler = make_pod("filler", node="n3", cpu="4", priority=0, labels={"app": "filler"})
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("web", ZONE)]}}
    replicas = [make_pod(f"r-{k}", cpu="3", priority=500, labels={"app": "r"}, affinity=anti,
                         node_selector={ZONE: "z1"}, owner="ReplicaSet/r") for k in range(3)]
    mover = make_pod("mover", cpu="2", priority=2000, labels={"app": "mover"},
                     node_selector={"kubernetes.io/hostname": "n1"})
    state = make_state(nodes, [web, filler, *replicas, mover])
    order = [*replicas[:2], mover, replicas[2]]
    for memoize in (True, False):
        planner = Planner(state, PlanOptions(), memoize=memoize)
        plans = [planner.plan(p, commit=True) for p in order]
        assert [(p.outcome, p.node) for p in plans] == [("infeasible", None), ("infeasible", None),
                                                        ("evict", "n1"), ("evict", "n3")]
        assert [v.pod.name for v in plans[3].victims] == ["filler"]
        assert plans[0].message == plans[1].message
        assert "anti-affinity" in plans[0].message
        assert plans[1].runners_up == plans[0].runners_up
        assert plans[1].pod.name == "r-1"


def test_a_node_placed_on_in_a_zone_spreading_now_rules_out_fails_the_next_replica_for_its_room_first():
    # n0, alone in z0, has room for one replica; z1's nodes for none. The first replica lands on n0;
    # the second resumes its search, z0 now skewed for it: n0 is filtered again both for that and
    # because the first replica took its room — NodeResourcesFit comes first, so its cpu is why.
    nodes = [make_node("n0", cpu="2", memory="16Gi", labels={ZONE: "z0"}),
             *(make_node(f"n{i}", cpu="1", memory="16Gi", labels={ZONE: "z1"}) for i in (1, 2))]
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    replicas = [make_pod(f"web-{k}", cpu="2", priority=100, labels={"app": "web"}, spread=spread,
                         owner="ReplicaSet/web", start_time=f"2026-01-01T00:00:0{k}Z") for k in range(2)]
    state = make_state(nodes, replicas)
    pods = pending_pods_to_plan(state, all_pending=True)
    for memoize in (True, False):
        planner = Planner(state, PlanOptions(), memoize=memoize)
        first, second = (planner.plan(p, commit=True) for p in pods)
        assert (first.outcome, first.node) == ("fits", "n0")
        assert second.outcome == "infeasible"
        assert "3 Insufficient cpu" in second.message, second.message
        assert "topology spread" not in second.message.partition("preemption")[0]


@PROFILE
@given(queues())
def test_a_tier_search_that_gives_up_early_to_ask_whether_any_tier_has_an_option_plans_the_same(
        queue: tuple[ClusterState, list[Pod]]) -> None:
    """Tier 1's search of a pod whose filters read the cluster gives up after `_GIVE_UP` nodes with
    no option found, to ask whether any tier has one (`NodeSearch.no_tier_has_one`; where none has,
    tier 3 is searched alone): a queue plans the same when it gives up at its first node as when it
    never does."""
    state, pods = queue

    def plans(give_up: int) -> list[tuple]:
        with patch.object(planner, "_GIVE_UP", give_up):
            p = Planner(state, PlanOptions())
            return [decision(p.plan(pod, commit=True)) for pod in pods]

    assert plans(1) == plans(0)


def test_tier_1_may_have_an_option_where_tier_3_takes_off_the_pod_it_must_be_near():
    # n1 is full: db (which web must share a node with) stops in 600s, beyond the grace limit, so
    # only tier 3 may evict it, and tier 3 evicting every lower-priority pod there leaves web nothing
    # to be near. Tier 1 evicts the filler alone: an option tier 3 has not, found even where tier
    # 1's search gives up at once to ask whether any tier has one.
    nodes = [make_node("n1", cpu="4", memory="16Gi"), make_node("n2", cpu="4", memory="16Gi")]
    db = make_pod("db", node="n1", cpu="1", priority=0, labels={"app": "db"}, grace=600)
    filler = make_pod("filler", node="n1", cpu="3", priority=0, labels={"app": "filler"}, grace=5)
    near_db = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("db", HOST)]}}
    web = make_pod("web", cpu="2", priority=1000, labels={"app": "web"}, affinity=near_db)
    state = make_state(nodes, [db, filler, web])
    for give_up in (1, 0):
        with patch.object(planner, "_GIVE_UP", give_up):
            plan = Planner(state, PlanOptions()).plan(web)
        assert (plan.outcome, plan.node, plan.tier) == ("evict", "n1", 1), plan.message
        assert [v.pod.name for v in plan.victims] == ["filler"]


def test_which_candidates_a_pod_must_be_near_is_asked_again_for_a_pod_near_other_ones():
    # As above, but the planner first plans web2, of the same priority (the same candidates on n1),
    # which must be near the filler: no tier helps it (taking the filler off leaves it nothing to be
    # near). Then web, near db, still finds tier 1's option: which of n1's candidates a pod must be
    # near is its own terms' answer, not kept from web2's.
    nodes = [make_node("n1", cpu="4", memory="16Gi")]
    db = make_pod("db", node="n1", cpu="1", priority=0, labels={"app": "db"}, grace=600)
    filler = make_pod("filler", node="n1", cpu="3", priority=0, labels={"app": "filler"}, grace=5)
    near = {app: {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(app, HOST)]}}
            for app in ("db", "filler")}
    web2 = make_pod("web2", cpu="2", priority=1000, labels={"app": "web"}, affinity=near["filler"])
    web = make_pod("web", cpu="2", priority=1000, labels={"app": "web"}, affinity=near["db"])
    state = make_state(nodes, [db, filler, web2, web])
    with patch.object(planner, "_GIVE_UP", 1):
        p = Planner(state, PlanOptions())
        first, second = p.plan(web2), p.plan(web)
    assert first.outcome == "infeasible", first.message
    assert (second.outcome, second.node, second.tier) == ("evict", "n1", 1), second.message
    assert [v.pod.name for v in second.victims] == ["filler"]


def test_a_pod_no_tier_helps_is_answered_by_tier_3_alone_as_after_every_tier():
    # web must share a node with db; db may go (tier 1), but taking it off leaves web nothing to be
    # near, and n2 has no db: no tier has an option. Where tier 1's search gives up at once to ask,
    # tier 3 is searched alone, and its reasons are the answer's, as after every tier.
    nodes = [make_node("n1", cpu="4", memory="16Gi"), make_node("n2", cpu="4", memory="16Gi")]
    db = make_pod("db", node="n1", cpu="3", priority=0, labels={"app": "db"}, grace=5)
    other = make_pod("other", node="n1", cpu="1", priority=2000, labels={"app": "other"})
    near_db = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("db", HOST)]}}
    web = make_pod("web", cpu="2", priority=1000, labels={"app": "web"}, affinity=near_db)
    state = make_state(nodes, [db, other, web])
    answers = []
    for give_up in (1, 0):
        with patch.object(planner, "_GIVE_UP", give_up):
            plan = Planner(state, PlanOptions()).plan(web)
        assert plan.outcome == "infeasible"
        assert [(r.node, r.reason) for r in plan.runners_up] == [
            ("n1", "node(s) didn't match pod affinity rules even after evicting every eligible pod")]
        answers.append(decision(plan))
    assert answers[0] == answers[1]


def test_a_pod_its_own_affinity_term_matches_is_not_given_the_walk_of_one_it_does_not():
    # Two bare pods alike but for their app label, each with required affinity (by zone) to pods of
    # app a, of which none runs: p0-b, planned first, matches no pod and not its own term, so no
    # node passes; p1-a matches its own term — the first of its group — so any node does. Their
    # walks differ by the one label their term reads.
    nodes = [make_node(f"n{i}", cpu="4", memory="16Gi", labels={ZONE: f"z{i % 2}"}) for i in range(4)]
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("a", ZONE)]}}
    pods = [make_pod(f"p{k}-{app}", cpu="1", priority=100, labels={"app": app}, affinity=affinity, owner=None,
                     start_time=f"2026-01-01T00:00:0{k}Z") for k, app in enumerate(("b", "a"))]
    state = make_state(nodes, pods)
    for memoize in (True, False):
        planner = Planner(state, PlanOptions(), memoize=memoize)
        first, second = (planner.plan(p, commit=True) for p in pending_pods_to_plan(state, all_pending=True))
        assert (first.pod.name, first.outcome) == ("p0-b", "infeasible")
        assert (second.pod.name, second.outcome) == ("p1-a", "fits")
