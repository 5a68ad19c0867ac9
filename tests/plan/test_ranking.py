"""`evictable.Ranking`: a node's evictable pods ranked most important first. Where pods were placed
on a node since it was last ranked, `grown` ranks only them into the last ranking: it must give what
ranking every pod afresh gives — the same pods in the same order, the same columns — and decline
where the node lost a pod or is another Node."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.objects import Pod
from kresched.plan.evictable import Ranking
from kresched.sched.node_info import NodeInfo
from tests.builders import make_lost_node, make_node, make_pod

_GRACE = 30

_pod = st.builds(
    lambda i, priority, cpu, limited, start, grace, owner: make_pod(
        f"p-{i}", node="node-a", priority=priority, cpu=f"{cpu}00m", memory=f"{cpu}00Mi",
        limits={"cpu": f"{cpu}00m", "memory": f"{cpu}00Mi"} if limited else None,
        start_time=f"2026-01-0{start}T00:00:00Z" if start else None, grace=grace, owner=owner),
    st.integers(), st.sampled_from([0, 10, 1000, 2_000_000_000]), st.integers(1, 9), st.booleans(),
    st.integers(0, 3), st.sampled_from([None, 10, 60]), st.sampled_from(["ReplicaSet/rs", "DaemonSet/ds", None]))


def _columns(r: Ranking) -> tuple[object, ...]:
    return ([id(p) for p in r.ranked], r.keys, r.negs, r.cpus, r.memories, r.ok, [id(p) for p in r.pods], r.lost)


@settings(max_examples=300, deadline=None)
@given(st.lists(_pod, max_size=6), st.lists(st.lists(_pod, max_size=4), min_size=1, max_size=4), st.booleans())
def test_pods_placed_since_are_ranked_as_ranking_them_all_ranks_them(
        running: list[Pod], placements: list[list[Pod]], lost: bool) -> None:
    node = make_lost_node("node-a") if lost else make_node("node-a")
    pods = {f"{p.namespace}/{p.name}": p for p in running}  # (names unique on a node)
    info = NodeInfo(node, list(pods.values()))
    ranking = Ranking.of(info, _GRACE)
    for batch in placements:
        info = info.clone()
        for p in batch:
            if p.key not in pods:
                pods[p.key] = p
                info.add_pod(p)
        grown = ranking.grown(info, _GRACE)
        assert grown is not None
        assert _columns(grown) == _columns(Ranking.of(info, _GRACE))
        ranking = grown


def test_a_node_that_lost_a_pod_or_is_another_node_is_ranked_afresh() -> None:
    a, b = make_pod("a", node="node-a", cpu="100m"), make_pod("b", node="node-a", cpu="200m")
    info = NodeInfo(make_node("node-a"), [a, b])
    ranking = Ranking.of(info, _GRACE)
    smaller = info.clone()
    smaller.remove_pod(a)
    assert ranking.grown(smaller, _GRACE) is None
    swapped = smaller.clone()  # as many pods as before, and more after, but not the same ones
    swapped.add_pod(make_pod("c", node="node-a", cpu="300m"))
    swapped.add_pod(make_pod("d", node="node-a", cpu="400m"))
    assert ranking.grown(swapped, _GRACE) is None
    relabeled = NodeInfo(make_node("node-a", labels={"x": "y"}), [a, b])
    assert ranking.grown(relabeled, _GRACE) is None
    assert ranking.grown(info, _GRACE) is not None
