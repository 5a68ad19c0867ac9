"""`ScoreMemo`: the node-local plugins' raw scores kept across the pods of one shape give the scores
scoring afresh gives, whatever nodes are scored next — the same ones (where only the NodeInfos
replaced are looked up), the last ones less a few and then a few more (a replica's search resumed
past its walk's cut), or any others — and whichever NodeInfos were replaced in between."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.objects import Pod
from kresched.sched.framework import CycleState, Snapshot
from kresched.sched.node_affinity import NodeAffinity
from kresched.sched.node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from kresched.sched.node_resources_fit import NodeResourcesFit
from kresched.sched.score import NodeScore, ScoreMemo, ScoreMemos, score_nodes
from kresched.sources.decode import Objects
from kresched.sources.snapshot import build_state
from tests.builders import make_node, make_pod

_NAMES = [f"node-{i}" for i in range(8)]
_PLUGINS = [(NodeResourcesFit(), 1), (NodeResourcesBalancedAllocation(), 1), (NodeAffinity(), 2)]
_POD = make_pod("p", cpu="500m", memory="1Gi", affinity={"nodeAffinity": {
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}}]}})


def _snapshot() -> Snapshot:
    nodes = [make_node(n, cpu=str(2 + i % 3), memory=f"{4 + i}Gi", labels={"tier": "ab"[i % 2]})
             for i, n in enumerate(_NAMES)]
    pods = [make_pod(f"run-{i}", node=_NAMES[i % 8], cpu=f"{100 * (i % 5 + 1)}m", memory=f"{i % 3 + 1}00Mi")
            for i in range(12)]
    return Snapshot.from_state(build_state(Objects(nodes=nodes, pods=pods)))


def _placed(snap: Snapshot, name: str, i: int) -> Snapshot:
    info = snap.by_name[name].clone()
    info.add_pod(make_pod(f"new-{i}", node=name, cpu="250m", memory="256Mi"))
    return snap.with_node_info(info)


def _scored(snap: Snapshot, names: list[str], memo: ScoreMemo | None) -> tuple[NodeScore, ...]:
    """Each node's row (every plugin's raw, normalized and weighted score, and the total)."""
    infos = [snap.by_name[n] for n in names]
    given = list(names) if memo is not None else None
    return score_nodes(_PLUGINS, CycleState(), _POD, infos, snap, memo, given).rows()


_step = st.tuples(
    st.sampled_from(["same", "lost-then-more", "any"]),
    st.lists(st.sampled_from(_NAMES), max_size=3, unique=True),  # nodes a pod was placed on since
    st.lists(st.sampled_from(_NAMES), max_size=3, unique=True),  # nodes lost
    st.permutations(_NAMES), st.integers(1, 8))


@settings(max_examples=300, deadline=None)
@given(st.lists(_step, min_size=1, max_size=8), st.permutations(_NAMES), st.integers(1, 8))
def test_kept_raw_scores_are_the_fresh_ones_whatever_is_scored_next(
        steps: list[tuple[str, list[str], list[str], list[str], int]], first: list[str], n: int) -> None:
    snap, memo = _snapshot(), ScoreMemo()
    names = first[:n]
    assert _scored(snap, names, memo) == _scored(snap, names, None)
    placed = 0
    for kind, changed, lost, order, k in steps:
        for name in changed:
            placed += 1
            snap = _placed(snap, name, placed)
        if kind == "lost-then-more":
            names = [x for x in names if x not in lost] + [x for x in order if x not in names][:k]
        elif kind == "any":
            names = order[:k]
        if not names:
            continue
        assert _scored(snap, names, memo) == _scored(snap, names, None)


def test_a_replica_past_the_cut_scores_the_nodes_it_kept_and_those_it_found_as_afresh() -> None:
    # The memo has scored every node, then the first six. The next replica lost node-2 (the last
    # one filled it) and found node-6 and node-7 past the cut; node-4 and node-6 got a pod
    # meanwhile: node-6's row from before is another NodeInfo's.
    snap, memo = _snapshot(), ScoreMemo()
    _scored(snap, _NAMES, memo)
    _scored(snap, _NAMES[:6], memo)
    for i, name in enumerate(("node-2", "node-4", "node-6")):
        snap = _placed(snap, name, i)
    names = ["node-0", "node-1", "node-3", "node-4", "node-5", "node-6", "node-7"]
    assert _scored(snap, names, memo) == _scored(snap, names, None)


def test_nodes_the_cluster_facts_do_not_know_are_kept_after_the_ones_they_do() -> None:
    # A snapshot whose facts hold six of its eight nodes: the memo keeps node-6 and node-7 past
    # the facts' places, and scores each as afresh, with the others, however often it is asked.
    snap = _snapshot()
    facts_of_six = Snapshot.from_state(build_state(Objects(nodes=[i.node for i in snap.node_infos[:6]]))).cluster
    wider = Snapshot(snap.node_infos, snap.by_name, snap.namespace_labels, facts_of_six, snap.storage, snap.dra)
    memo = ScoreMemo()
    for names in (_NAMES[:6], _NAMES, ["node-7", "node-0", "node-6"], _NAMES[5:]):
        assert _scored(wider, names, memo) == _scored(wider, names, None)
    wider = _placed(wider, "node-7", 0)
    assert _scored(wider, _NAMES, memo) == _scored(wider, _NAMES, None)


def _pod(name: str, preferred: str, required: list[str] | None = None) -> Pod:
    affinity: dict[str, Any] = {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": [preferred]}]}}]}
    if required is not None:
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "tier", "operator": "In", "values": required}]}]}
    return make_pod(name, cpu="500m", memory="1Gi", affinity={"nodeAffinity": affinity})


def test_pods_kept_in_one_memo_are_those_whose_scores_read_the_same() -> None:
    # NodeAffinity scores the preferred terms alone: pods that differ in their required terms only
    # share a memo, pods that prefer other nodes do not; through the memos each scores as afresh.
    memos, snap = ScoreMemos(), _snapshot()
    pinned, loose, other = _pod("pinned", "a", ["a", "b"]), _pod("loose", "a"), _pod("other", "b", ["a", "b"])
    assert memos.for_pod(pinned) is memos.for_pod(loose)
    assert memos.for_pod(other) is not memos.for_pod(pinned)
    for pod in (pinned, loose, other, pinned):
        infos = [snap.by_name[n] for n in _NAMES]
        got = score_nodes(_PLUGINS, CycleState(), pod, infos, snap, memos.for_pod(pod), list(_NAMES)).rows()
        assert got == score_nodes(_PLUGINS, CycleState(), pod, infos, snap).rows()
