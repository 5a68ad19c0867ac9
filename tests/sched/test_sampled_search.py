"""`find_nodes_that_fit(sample=True)` with a `FilterMemo`: a pod shape's search starts from where
its last one left off (only the nodes whose NodeInfo changed, and those nominated pods hold room
on, are filtered again) and must find what a search from the first node finds — the same
feasible nodes in the same order, the same failed nodes with the same statuses, and whether it
stopped early, and the scheduler's message when nothing fits (whose reason counts a search
carries over from the last one) — as the cluster changes under it. Pods of the same shape whose
other filters depend on other nodes share the memo's NodeResourcesFit verdicts, and must find
what they find without the memo too.

The clusters have 120–160 nodes, so that `numFeasibleNodesToFind` (100 here) cuts the search
short, and a change before the cut moves it either way.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.objects import Pod
from kresched.sched.framework import Snapshot
from kresched.sched.runner import (
    Diagnosis,
    FilterMemo,
    default_plugins,
    find_nodes_that_fit,
    fit_error_message,
    memo_of,
)
from kresched.sched.static import StaticFilters, fit_shape
from tests.builders import make_node, make_pod, make_state


def _found(diag: Diagnosis) -> tuple:
    return (diag.feasible, diag.sampled,
            {n: (s.code, s.reasons, s.plugin, s.details) for n, s in diag.node_to_status.items()})


@settings(derandomize=True, database=None, deadline=None, max_examples=40)
@given(st.data())
def test_a_search_started_where_the_last_one_of_its_shape_stopped_finds_what_a_full_search_finds(
        data: st.DataObject) -> None:
    n_nodes = data.draw(st.integers(120, 160))
    nodes = [make_node(f"n{i:03}", cpu="2", pods=data.draw(st.sampled_from((110, 110, 3))),
                       labels={"topology.kubernetes.io/zone": f"z{i % 3}"}) for i in range(n_nodes)]
    pods = [make_pod(f"r{i}", node=f"n{i:03}", cpu=data.draw(st.sampled_from(("500m", "1", "1500m"))),
                     labels=data.draw(st.sampled_from(({}, {"app": "web"}))))
            for i in range(n_nodes) if data.draw(st.booleans())]
    # ("3": fits nowhere, so every node fails and the message counts their reasons.)
    shapes = [make_pod(f"pending-{cpu}", cpu=cpu, priority=100) for cpu in ("500m", "1", "2", "3")]
    # Pods of the same shapes that keep off nodes with a web pod: not `node_local` (their
    # InterPodAffinity filter depends on other pods), so only the memo's NodeResourcesFit verdicts
    # are theirs, and the rest of their filters run where those pass.
    shapes += [make_pod(f"pending-{cpu}-apart", cpu=cpu, priority=100, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}})
        for cpu in ("1", "3")]
    # And web pods spread over the zones (their PodTopologySpread filter reads every zone's count of
    # web pods: a change in one zone moves its count, or the global minimum every zone's skew).
    shapes += [make_pod(f"pending-{cpu}-spread-{skew}", cpu=cpu, priority=100, labels={"app": "web"}, spread=[
        {"maxSkew": skew, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "web"}}}]) for cpu, skew in (("500m", 1), ("1", 1), ("1", 2))]
    state = make_state(nodes, [*pods, *shapes])
    snap = Snapshot.from_state(state)
    plugins = default_plugins()
    static = StaticFilters(plugins)
    memos: dict[bytes, FilterMemo] = {}
    # Or one memo for every shape, as the planner keeps one per profile: shapes of the same requests
    # share NodeResourcesFit's verdicts, each its own walks.
    shared = FilterMemo() if data.draw(st.booleans()) else None
    names = [n.metadata.name for n in nodes]
    for step in range(data.draw(st.integers(2, 8))):
        # Some nodes change: a pod added (taking room) or the first one removed (freeing it).
        for k in range(data.draw(st.integers(0, 6))):
            name = data.draw(st.sampled_from(names))
            info = snap.by_name[name].clone()
            if info.pods and data.draw(st.booleans()):
                info.remove_pod(info.pods[0])
            else:
                info.add_pod(make_pod(f"s{step}-{k}", node=name, cpu=data.draw(st.sampled_from(("250m", "1"))),
                                      labels=data.draw(st.sampled_from(({}, {"app": "web"})))))
            snap = snap.with_node_info(info)
        # Now and then a pod nominated to a node holds room there (priority above the pending pods').
        nominated = {name: [make_pod(f"nom-{step}-{name}", cpu="1", priority=1000, nominated_node=name)]
                     for name in data.draw(st.lists(st.sampled_from(names), max_size=2))}
        pod = data.draw(st.sampled_from(shapes))
        got, _ = find_nodes_that_fit(plugins, pod, snap, nominated, static, shared or memo_of(memos, fit_shape(pod)),
                                     sample=True)
        want, _ = find_nodes_that_fit(plugins, pod, snap, nominated, static, None, sample=True)
        assert _found(got) == _found(want)
        assert fit_error_message(got) == fit_error_message(want)


def test_the_nodes_a_resumed_search_filters_again_are_those_replaced_anywhere_in_the_walk() -> None:
    """`_replaced_at` compares slices whole before it looks inside: a replaced NodeInfo at either
    end of a slice, or in the last, shorter one, is found; nothing else is."""
    from kresched.sched.runner import _replaced_at  # (private: the slicing is what is tested)
    infos = Snapshot.from_state(make_state([make_node(f"n{i:03}") for i in range(600)], [])).node_infos
    now = [*infos, infos[0]]  # the walk visited 600 nodes of a longer list
    for j in (0, 255, 256, 511, 599):
        now[j] = now[j].clone()
    assert _replaced_at(now, infos) == {0, 255, 256, 511, 599}
    assert _replaced_at(list(infos), infos) == set()


def test_each_search_starts_where_the_last_one_stopped_and_every_node_gets_its_turn():
    """Upstream's TestFairEvaluationForNodes (schedule_one_test.go): 500 nodes, 30 % to score, so 150
    nodes found per search; the scheduler's `nextStartNodeIndex` moves on by the nodes each search
    processed, wrapping around, so that every node is looked at in turn."""
    from kresched.sched.runner import processed_nodes

    n_all = 500
    state = make_state([make_node(str(i)) for i in range(n_all)])
    snap = Snapshot.from_state(state)
    order = [i.name for i in snap.in_scheduling_order()]
    plugins = default_plugins()
    pod = make_pod("p", priority=0)
    start = 0
    to_find = 150
    for i in range(2 * (n_all // to_find + 1)):
        diag, _ = find_nodes_that_fit(plugins, pod, snap, sample=True, percentage=30, start=start)
        assert len(diag.feasible) == to_find
        assert diag.feasible == [order[(start + k) % n_all] for k in range(to_find)]
        start = (start + processed_nodes(diag)) % n_all
        assert start == (i + 1) * to_find % n_all


def test_the_planner_rotates_the_start_only_when_asked_to():
    """`Planner(rotate=True)` (what a what-if plans with): identical empty nodes tie, the scheduler
    takes the first its search found, and each search starts where the last one stopped (300 nodes:
    144 found per search); without it every search starts at the first node."""
    from kresched.plan.planner import Planner

    state = make_state([make_node(f"n{i:03}", cpu="4") for i in range(300)])
    pods = [make_pod(f"p{i}", cpu="100m", priority=0) for i in range(3)]
    rotating = Planner(state, rotate=True)
    fixed = Planner(state)
    assert [rotating.plan(p, commit=True).node for p in pods] == ["n000", "n144", "n288"]
    assert [fixed.plan(p, commit=True).node for p in pods] == ["n000", "n001", "n002"]


def test_a_first_search_reads_the_filters_of_the_node_alone_from_a_column_kept_for_pods_that_ask_the_same():
    """Pods of the same requests and node-static signature share what the node-static filters and
    NodeResourcesFit say of each node in the search order (`runner._Column`): the first search of
    another shape reads it, filtering again every node replaced since (one freed, one filled), and stops
    where a search of every node's filters stops — the 100th feasible node, with the next one
    failing NodeResourcesFit and so never filtered."""
    nodes = [make_node(f"n{i:03}", cpu="2") for i in range(200)]
    full = [make_pod(f"r{i}", node=f"n{i:03}", cpu="2") for i in range(0, 200, 3)]  # every third node full
    apart = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    alone = make_pod("alone", cpu="1", priority=100)  # node-local: its walk is its own
    away = make_pod("away", cpu="1", priority=100, labels={"app": "web"}, affinity=apart)  # reads the cluster
    snap = Snapshot.from_state(make_state(nodes, [*full, alone, away]))
    plugins = default_plugins()
    static = StaticFilters(plugins)
    memo = FilterMemo()

    def both(pod: Pod) -> Diagnosis:  # with the memo, and as a search that keeps nothing finds it
        got, _ = find_nodes_that_fit(plugins, pod, snap, None, static, memo, sample=True)
        want, _ = find_nodes_that_fit(plugins, pod, snap, None, static, None, sample=True)
        assert _found(got) == _found(want)
        return got

    first = both(alone)
    assert len(first.feasible) == 100
    assert first.feasible[-1] == "n149"
    assert "n150" not in first.node_to_status
    freed = snap.by_name["n000"].clone()
    freed.remove_pod(freed.pods[0])
    filled = snap.by_name["n001"].clone()
    filled.add_pod(make_pod("new", node="n001", cpu="2"))
    snap = snap.with_node_info(freed).with_node_info(filled)
    later = both(away)
    assert later.feasible[0] == "n000"
    assert "n001" in later.node_to_status
    assert later.feasible[-1] == "n149"
    assert "n150" not in later.node_to_status
