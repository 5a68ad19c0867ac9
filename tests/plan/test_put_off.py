"""A tier's search puts off selecting victims on a node whose tighter bound (`one_victim_bound`)
shows it can be neither the best option nor the runner-up, and selects them only where a plan
could show them (`search.best_of_later`, `first_out_of_later`, the indexed search's `out`).

Every plan is the one the same search gives selecting victims on every node it reaches: the node,
victims and tier, and also the runners-up after the deciding one, the first nodes out by name and
why — on random clusters wider than a plan shows (7–12 nodes, so that options and nodes out are
left unshown), for queues of one shape (the search kept across pods, some nominated to a node)
and for pods whose filters read other nodes (required anti-affinity: the search of every node).
Runs derandomized, like tests/plan/test_properties.py.
"""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.planner import Planner
from kresched.plan.plans import Plan, PlanOptions
from kresched.render.plan import plan_dict
from tests.builders import make_node, make_pdb, make_pod, make_state

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=150,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: A required anti-affinity to the pods no pending pod may evict (`guard` below): InterPodAffinity
#: reads the other nodes, so the pod is searched without the index kept per shape, and where such a
#: pod runs, no victims make room (nor, asking for its host port, in the index either).
APART = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "none"}}, "topologyKey": "kubernetes.io/hostname"}]}}


@st.composite
def wide_clusters(draw: st.DrawFn) -> tuple[ClusterState, list[Pod]]:
    """7–12 alike nodes, full of pods of a few priorities started on various days (the options
    tie up to the start of their victims), 0–2 PDBs, and a queue of 1–4 pods of one shape (some
    nominated to a node), with or without the anti-affinity above."""
    nodes, pods = [], []
    count = draw(st.integers(8, 14))
    for i in range(count):
        name = f"n{i:02d}"
        nodes.append(make_node(name, cpu="4000m", memory="8Gi", pods=110))
        used = j = 0
        if i < 3 and draw(st.booleans()):  # a pod the pending ones may not evict, in their way
            used += 500
            pods.append(make_pod(f"{name}-guard", node=name, cpu="500m", memory="256Mi", priority=2000,
                                 labels={"app": "none"}, ports=[{"containerPort": 9000, "hostPort": 9000}]))
        while True:
            cpu = draw(st.sampled_from((500, 1500, 1500)))
            if used + cpu > 4000:
                break  # a consistent snapshot: what runs fits where it runs
            used, j = used + cpu, j + 1
            # The small pods mostly started last (on the first nodes by name, all of them): the bound
            # that orders the search (the latest start among a node's lowest-priority pods) is then
            # mostly theirs, though they free too little.
            day = draw(st.integers(5 + (i < 3) * 4, 9) if cpu == 500 else st.integers(1, 6 - (i < 3) * 4))
            pods.append(make_pod(
                f"{name}-p{j}", node=name, cpu=f"{cpu}m", memory="256Mi",
                priority=draw(st.sampled_from((0, 0, 0, 10))), grace=draw(st.sampled_from((5, 30))),
                labels={"app": draw(st.sampled_from(("a", "b", "c")))},
                owner=draw(st.sampled_from(("ReplicaSet/rs", "ReplicaSet/rs", None))),
                start_time=f"2026-01-0{day}T0{draw(st.integers(0, 9))}:00:00Z"))
    pdbs = [make_pdb(f"pdb-{app}", selector={"app": app}, disruptions_allowed=draw(st.integers(0, 2)))
            for app in draw(st.lists(st.sampled_from(("a", "b", "c")), max_size=2, unique=True))]
    cpu = draw(st.sampled_from((1500, 1500, 1000, 2000)))
    affinity: dict[str, Any] | None = APART if draw(st.booleans()) else None
    ports = [{"containerPort": 9000, "hostPort": 9000}] if draw(st.booleans()) else None
    queue = [make_pod(f"pending-{k}", cpu=f"{cpu}m", memory="512Mi", priority=1000, affinity=affinity, ports=ports,
                      nominated_node=draw(st.sampled_from(("", "", "", f"n{draw(st.integers(0, count - 1)):02d}"))))
             for k in range(draw(st.integers(1, 4)))]
    return make_state(nodes, [*pods, *queue], pdbs), queue


OPTIONS = st.builds(PlanOptions, max_grace_seconds=st.sampled_from((10, 30)), allow_pdb_violation=st.booleans())


def _every_node_reached(pod: Any, info: Any, eligible: Any, bound: tuple) -> tuple:
    """`one_victim_bound` that never raises the bound: the search then puts off no node."""
    return bound


@PROFILE
@given(wide_clusters(), OPTIONS)
def test_putting_off_victims_changes_nothing_a_plan_shows(cluster: tuple[ClusterState, list[Pod]],
                                                          options: PlanOptions) -> None:
    state, queue = cluster
    late = Planner(state, options)
    every = Planner(state, options)
    for pod in queue:
        shown = _shown(late.plan(pod, commit=True))
        with patch("kresched.plan.search.one_victim_bound", _every_node_reached):
            assert shown == _shown(every.plan(pod, commit=True))


def _shown(plan: Plan) -> tuple:
    """What a plan shows: its fields, the runner-up that decided it, every runner-up and node out."""
    return plan_dict(plan), plan.decided_by, plan.runners_up


def _row(name: str, big_day: int, small_hour: int) -> list[Pod]:
    """A full node's pods: two of 1500m, started on the 1st of January and on `big_day`, and two
    of 500m started on the 9th at `small_hour`, the latest — so the bound that orders the search is
    theirs, though neither alone makes room for 1500m, and the victim is the second large one (the
    reprieve keeps the others)."""
    pods = [make_pod(f"{name}-big-{k}", node=name, cpu="1500m", memory="1Gi", priority=0, grace=5,
                     start_time=f"2026-01-0{day}T00:00:00Z") for k, day in enumerate((1, big_day))]
    return pods + [make_pod(f"{name}-small-{j}", node=name, cpu="500m", memory="1Gi", priority=0, grace=5,
                            start_time=f"2026-01-09T{small_hour:02d}:{j:02d}:00Z") for j in range(2)]


def _tangled(name: str) -> list[Pod]:
    """A full node where two pods must go (one for the cpu, one for the memory a pending pod asks),
    all four under one PDB that allows one disruption: tiers 1 and 2 have no option there."""
    return [make_pod(f"{name}-{k}", node=name, cpu=cpu, memory=memory, priority=0, grace=5, labels={"app": "tangled"},
                     start_time=start)
            for k, (cpu, memory, start) in enumerate((("1500m", "1Gi", "2026-01-01T00:00:00Z"),
                                                      ("1500m", "1Gi", "2026-01-01T00:00:00Z"),
                                                      ("500m", "3Gi", "2026-01-09T05:00:00Z"),
                                                      ("500m", "3Gi", "2026-01-09T05:01:00Z")))]


def _pending(name: str, affinity: dict[str, Any] | None = None) -> Pod:
    return make_pod(name, cpu="1500m", memory="3Gi", priority=1000, owner="ReplicaSet/web", affinity=affinity)


def _cluster(*extra: Pod, others: bool = False) -> ClusterState:
    """n00–n03, where tier 1 has no option (`_tangled`), and n04–n11, whose victims started on the
    1st to the 8th: a plan shows six options of eight. `others`: also e0–e2, full of
    pods no pending pod may evict (out, before n00 by name), and f0, f1, where a pod of priority 0
    started last of all (the best victim there is) holds 500m beside 2500m no pending pod may evict,
    and a pending pod nominated there (w0, w1, which may run only on g0, tainted for them) holds
    the room that leaves — until it is placed on g0."""
    nodes = [make_node(f"n{i:02d}", cpu="4000m", memory="8Gi") for i in range(12)]
    pods = [p for i in range(4) for p in _tangled(f"n{i:02d}")]
    for i in range(4, 12):
        pods += _row(f"n{i:02d}", 1 + i % 8, 10 + i)
    if others:
        nodes.append(make_node("g0", cpu="4000m", memory="8Gi", labels={"pool": "g"},
                               taints=[{"key": "pool", "value": "g", "effect": "NoSchedule"}]))
        for i in range(3):
            nodes.append(make_node(f"e{i}", cpu="4000m", memory="8Gi"))
            pods.append(make_pod(f"e{i}-kept", node=f"e{i}", cpu="4000m", memory="256Mi", priority=1500))
        for i in range(2):
            nodes.append(make_node(f"f{i}", cpu="4000m", memory="8Gi"))
            pods += [make_pod(f"f{i}-kept", node=f"f{i}", cpu="2500m", memory="256Mi", priority=1500),
                     make_pod(f"f{i}-late", node=f"f{i}", cpu="500m", memory="256Mi", priority=0, grace=5,
                              start_time=f"2026-01-09T23:0{i}:00Z"),
                     make_pod(f"w{i}", cpu="1500m", memory="256Mi", priority=2000, nominated_node=f"f{i}",
                              node_selector={"pool": "g"},
                              tolerations=[{"key": "pool", "value": "g", "effect": "NoSchedule"}])]
    return make_state(nodes, [*pods, *extra], [make_pdb("tangled", selector={"app": "tangled"},
                                                        disruptions_allowed=1)])


#: A required anti-affinity no pod matches: it fails no node, but InterPodAffinity reads the other
#: nodes, so the pod is searched without the index kept per shape.
NOWHERE = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "nowhere"}}, "topologyKey": "kubernetes.io/hostname"}]}}


@pytest.mark.parametrize("affinity", [None, NOWHERE], ids=["the index kept per shape", "every node searched"])
def test_a_node_put_off_shows_why_it_is_out_among_the_first_by_name(affinity: dict[str, Any] | None) -> None:
    """n00–n03 are put off (no one pod there makes room: no victims can tie the runner-up) and stay
    so past the six options shown; they are first by name, so the plan shows why they are out."""
    pod = _pending("pending", affinity)
    state = _cluster(pod)
    plan = Planner(state, PlanOptions()).plan(pod)
    with patch("kresched.plan.search.one_victim_bound", _every_node_reached):
        assert _shown(plan) == _shown(Planner(state, PlanOptions()).plan(pod))
    assert (plan.node, plan.tier) == ("n07", 1)
    assert [r.node for r in plan.runners_up if r.tier is not None] == ["n06", "n05", "n04", "n11", "n10"]
    out = [r for r in plan.runners_up if r.tier is None]
    assert [r.node for r in out] == ["n00", "n01", "n02", "n03"]  # n08 and n09 have options, not shown
    assert all("overspend a PodDisruptionBudget" in r.reason for r in out)


def test_a_node_put_off_by_an_earlier_pod_of_the_shape_shows_why_it_is_out_once_pruned() -> None:
    """The first pod puts n00–n03 off (f0 and f1 are held for w0 and w1; e0–e2, f0 and f1 are the
    first five nodes out, so its plan selects no victims there). Once w0 and w1 are placed on g0,
    the next pod of the shape finds on f0 and f1 the best victims there are (f1's started last), so
    its search prunes n00, which a search that had selected its victims the first time would have
    kept as out, with why: the plan still shows why n00 is out, not only that it cannot beat f1."""
    first, second = _pending("pending-0"), _pending("pending-1")
    state = _cluster(first, second, others=True)
    queue = [first, *(p for p in state.pods if p.name in ("w0", "w1")), second]
    late, every = Planner(state, PlanOptions()), Planner(state, PlanOptions())
    plans = []
    for pod in queue:
        plans.append(late.plan(pod, commit=True))
        with patch("kresched.plan.search.one_victim_bound", _every_node_reached):
            assert _shown(plans[-1]) == _shown(every.plan(pod, commit=True))
    assert [p.node for p in plans] == ["n07", "g0", "g0", "f1"]
    assert [r.node for r in plans[0].runners_up if r.tier is None] == ["e0", "e1", "e2", "f0", "f1"]
    out = {r.node: r.reason for r in plans[3].runners_up if r.tier is None}
    assert "overspend a PodDisruptionBudget" in out["n00"]


def test_a_node_held_for_a_nominated_pod_is_not_taken_for_one_put_off_earlier() -> None:
    """As above, but the first pod is nominated to n00 and its plan is not carried out: it still
    holds room on n00 when the next pod is planned, whose search then starts n00 afresh and prunes
    it with its quick bound — as a search that had selected n00's victims the first time does (what
    it kept there is not used while something nominated holds room)."""
    first = make_pod("pending-0", cpu="1500m", memory="3Gi", priority=1000, owner="ReplicaSet/web",
                     nominated_node="n00")
    second = _pending("pending-1")
    state = _cluster(first, second, others=True)
    queue = [first, *(p for p in state.pods if p.name in ("w0", "w1")), second]
    late, every = Planner(state, PlanOptions()), Planner(state, PlanOptions())
    plans = []
    for pod in queue:
        plans.append(late.plan(pod, commit=pod is not first))
        with patch("kresched.plan.search.one_victim_bound", _every_node_reached):
            assert _shown(plans[-1]) == _shown(every.plan(pod, commit=pod is not first))
    assert [p.node for p in plans] == ["n07", "g0", "g0", "f1"]
    out = {r.node: r.reason for r in plans[3].runners_up if r.tier is None}
    assert out["n00"] == "start of the most important victims: no later than on f1"  # its quick bound
    assert "overspend a PodDisruptionBudget" in out["n01"]


def test_a_node_put_off_again_while_held_keeps_what_was_put_off_before() -> None:
    """The first pod (nominated to n00, its plan not carried out) puts n00 off; the next one, for
    which the first holds room on n00, puts it off again without keeping anything there; once w0
    and w1 are placed, the first pod's search prunes n00 — and its plan shows why n00 has no
    option, as what the first search would have kept there shows."""
    first = make_pod("pending-0", cpu="1500m", memory="3Gi", priority=1000, owner="ReplicaSet/web",
                     nominated_node="n00")
    second = _pending("pending-1")
    state = _cluster(first, second, others=True)
    queue = [(first, False), (second, True), *((p, True) for p in state.pods if p.name in ("w0", "w1")), (first, True)]
    late, every = Planner(state, PlanOptions()), Planner(state, PlanOptions())
    plans = []
    for pod, commit in queue:
        plans.append(late.plan(pod, commit=commit))
        with patch("kresched.plan.search.one_victim_bound", _every_node_reached):
            assert _shown(plans[-1]) == _shown(every.plan(pod, commit=commit))
    assert [p.node for p in plans] == ["n07", "n07", "g0", "g0", "f1"]
    out = {r.node: r.reason for r in plans[4].runners_up if r.tier is None}
    assert "overspend a PodDisruptionBudget" in out["n00"]
