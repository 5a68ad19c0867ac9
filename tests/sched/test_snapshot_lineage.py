"""`Snapshot.with_node_info` chains: `pods_by_namespace` and plugin indexes (`Snapshot.index`) that a
snapshot derives from its ancestors must equal what a fresh snapshot of the same NodeInfos builds,
whichever snapshots of the chain asked first, and must never change an ancestor's."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.objects import Node
from kresched.model.specs import LabelSelector
from kresched.sched import framework, match_counts
from kresched.sched.framework import Snapshot
from kresched.sched.interpod_affinity_terms import compile_label_selector
from kresched.sched.node_info import NodeInfo
from kresched.sched.pod_topology_spread_constraints import SpreadConstraint
from tests.builders import make_pod, pvc_volume

_NAMESPACE = st.sampled_from(["a", "b", "c"])


def _node(name: str) -> Node:
    return msgspec.convert({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}, Node)


def _canonical(index: dict[str, dict[str, tuple[Any, ...]]]) -> dict[str, dict[str, list[str]]]:
    return {ns: {name: sorted(p.key for p in pods) for name, pods in entries.items()}
            for ns, entries in index.items()}


def _fresh(snap: Snapshot) -> dict[str, dict[str, list[str]]]:
    return _canonical(Snapshot(list(snap.node_infos), dict(snap.by_name)).pods_by_namespace())


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.lists(st.tuples(st.integers(0, 3), _NAMESPACE), max_size=8),
       st.lists(st.tuples(st.booleans(), st.integers(0, 7), _NAMESPACE), max_size=8),
       st.sets(st.integers(0, 8)), st.randoms(use_true_random=False), st.sampled_from([1, 2, 64]))
def test_pods_by_namespace_derived_down_a_chain_is_a_fresh_grouping(
        n_nodes: int, pods: list[tuple[int, str]], ops: list[tuple[bool, int, str]], asked_early: set[int],
        rnd: Any, max_lineage: int) -> None:
    saved = framework._MAX_LINEAGE
    framework._MAX_LINEAGE = max_lineage  # short chains: past the bound a snapshot groups afresh
    try:
        _check_chain(n_nodes, pods, ops, asked_early, rnd)
    finally:
        framework._MAX_LINEAGE = saved


def _check_chain(n_nodes: int, pods: list[tuple[int, str]], ops: list[tuple[bool, int, str]],
                 asked_early: set[int], rnd: Any) -> None:
    nodes = [_node(f"n{i}") for i in range(n_nodes)]
    existing = [make_pod(f"p{k}", ns, node=f"n{i % n_nodes}") for k, (i, ns) in enumerate(pods)]
    infos = [NodeInfo(n, [p for p in existing if p.spec.node_name == n.metadata.name]) for n in nodes]
    snapshot = Snapshot(infos, {i.name: i for i in infos})
    chain = [snapshot]
    for k, (add, i, ns) in enumerate(ops):
        if len(chain) - 1 in asked_early:
            chain[-1].pods_by_namespace()
        info = snapshot.node_infos[i % n_nodes].clone()
        if add:
            info.add_pod(make_pod(f"q{k}", ns, node=info.name))
        elif info.pods:
            info.remove_pod(info.pods[i % len(info.pods)])
        snapshot = snapshot.with_node_info(info)
        chain.append(snapshot)
    want = [_fresh(s) for s in chain]
    order = list(range(len(chain)))
    rnd.shuffle(order)
    for k in order:
        assert _canonical(chain[k].pods_by_namespace()) == want[k]
    assert [_canonical(s.pods_by_namespace()) for s in chain] == want


def _spread(app: str) -> SpreadConstraint:
    selector = LabelSelector(match_labels={"app": app})
    return SpreadConstraint(
        max_skew=1, topology_key="kubernetes.io/hostname", selector=compile_label_selector(selector),
        counts_existing=True, min_domains=1, honor_node_affinity=True, honor_node_taints=False,
        selector_key=msgspec.json.encode(selector))


_APP = st.sampled_from(["web", "db"])


_GOING = "2026-11-30T00:00:00Z"


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.lists(st.tuples(st.integers(0, 3), _NAMESPACE, _APP, st.booleans()), max_size=8),
       st.lists(st.tuples(st.booleans(), st.integers(0, 7), _NAMESPACE, _APP, st.booleans()), max_size=8),
       st.lists(st.tuples(st.integers(0, 8), _NAMESPACE, _APP, st.booleans()), max_size=6),
       st.randoms(use_true_random=False))
def test_match_counts_derived_down_a_chain_are_a_fresh_count(
        n_nodes: int, pods: list[tuple[int, str, str, bool]], ops: list[tuple[bool, int, str, str, bool]],
        asked_early: list[tuple[int, str, str, bool]], rnd: Any) -> None:
    """The per-selector counts of matching pods per node (PodTopologySpread's, terminating pods left
    out; InterPodAffinity's, every pod), carried down simulations and asked for first at any snapshot
    of the chain (earlier answers are shared with later snapshots where the namespace's pods did not
    change), are what counting that snapshot's pods gives."""
    nodes = [_node(f"n{i}") for i in range(n_nodes)]
    existing = [make_pod(f"p{k}", ns, node=f"n{i % n_nodes}", labels={"app": app},
                         deletion_timestamp=_GOING if going else None)
                for k, (i, ns, app, going) in enumerate(pods)]
    infos = [NodeInfo(n, [p for p in existing if p.spec.node_name == n.metadata.name]) for n in nodes]
    snapshot = Snapshot(infos, {i.name: i for i in infos})
    chain = [snapshot]
    early = {k: (ns, app, every) for k, ns, app, every in asked_early}

    def counts(snap: Snapshot, ns: str, app: str, every: bool) -> dict[str, int]:
        c = _spread(app)
        return dict(match_counts.selected_per_node(snap, ns, c.selector_key, c.selector, every))

    for k, (add, i, ns, app, going) in enumerate(ops):
        if len(chain) - 1 in early:
            counts(chain[-1], *early[len(chain) - 1])
        info = snapshot.node_infos[i % n_nodes].clone()
        if add:
            info.add_pod(make_pod(f"q{k}", ns, node=info.name, labels={"app": app},
                                  deletion_timestamp=_GOING if going else None))
        elif info.pods:
            info.remove_pod(info.pods[i % len(info.pods)])
        snapshot = snapshot.with_node_info(info)
        chain.append(snapshot)
    asks = [(k, ns, app, every) for k in range(len(chain)) for ns in ("a", "b", "c") for app in ("web", "db")
            for every in (False, True)]
    rnd.shuffle(asks)
    for k, ns, app, every in asks:
        want = {i.name: n for i in chain[k].node_infos
                if (n := sum(1 for p in i.pods if p.namespace == ns and p.labels.get("app") == app
                             and (every or p.metadata.deletion_timestamp is None)))}
        assert counts(chain[k], ns, app, every) == want


def test_regrouped_answers_afresh_once_a_node_info_it_compared_changed() -> None:
    # Its last answer is kept for the next index of the same step; a pod added since must show.
    old = NodeInfo(_node("n0"), [make_pod("p0", "a", node="n0")])
    new = old.clone()
    new.add_pod(make_pod("p1", "b", node="n0"))
    assert sorted(framework.regrouped(old, new)[0]) == ["b"]
    assert sorted(framework.regrouped(old, new)[0]) == ["b"]
    new.add_pod(make_pod("p2", "c", node="n0"))
    changed, before, after = framework.regrouped(old, new)
    assert sorted(changed) == ["b", "c"]
    assert sorted(after) == ["a", "b", "c"]
    assert sorted(before) == ["a"]
    old.remove_pod(old.pods[0])
    assert sorted(framework.regrouped(old, new)[0]) == ["a", "b", "c"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_NAMESPACE, st.booleans()), max_size=6),
       st.lists(st.tuples(st.booleans(), st.integers(0, 7), _NAMESPACE, st.booleans()), min_size=1, max_size=8))
def test_a_node_infos_groups_carried_through_adds_and_removes_are_a_fresh_grouping(
        pods: list[tuple[str, bool]], ops: list[tuple[bool, int, str, bool]]) -> None:
    # A NodeInfo's pods by namespace and its pods with volumes, once found, are carried through
    # a pod added or removed (new objects: the NodeInfo it was cloned from keeps its own).
    def pod(name: str, ns: str, claim: bool) -> Any:
        return make_pod(name, ns, node="n0", volumes=[pvc_volume(f"c-{name}")] if claim else None)

    def found(info: NodeInfo) -> tuple[dict[str, list[str]], list[str]]:
        return ({ns: [p.key for p in ps] for ns, ps in info.namespace_groups().items()},
                [p.key for p in info.pods_with_volumes()])

    info = NodeInfo(_node("n0"), [pod(f"p{k}", ns, claim) for k, (ns, claim) in enumerate(pods)])
    for k, (add, i, ns, claim) in enumerate(ops):
        found(info)  # found before the change
        before = found(info)
        changed = info.clone()
        if add:
            changed.add_pod(pod(f"q{k}", ns, claim))
        elif changed.pods:
            changed.remove_pod(changed.pods[i % len(changed.pods)])
        assert found(changed) == found(NodeInfo(_node("n0"), list(changed.pods)))
        assert found(info) == before
        info = changed


_ZONE = "topology.kubernetes.io/zone"


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.lists(st.tuples(st.integers(0, 3), st.sampled_from([None, "a", "b"]), st.booleans()),
                                   max_size=8),
       st.sets(st.integers(0, 8)))
def test_label_columns_derived_down_a_chain_are_the_nodes_labels(
        n_nodes: int, ops: list[tuple[int, str | None, bool]], asked_early: set[int]) -> None:
    # Each step replaces a node: by a Node with another zone label (or none), or only by another
    # NodeInfo of the same Node (a pod placed). Every snapshot's columns, whichever snapshots
    # asked first, are its own nodes' labels, and asking never changes an ancestor's answer.
    def labelled(name: str, zone: str | None) -> Node:
        labels = {"kubernetes.io/hostname": name, **({_ZONE: zone} if zone is not None else {})}
        return msgspec.convert({"metadata": {"name": name, "labels": labels}}, Node)

    infos = [NodeInfo(labelled(f"n{i}", "a")) for i in range(n_nodes)]
    chain = [Snapshot(infos, {i.name: i for i in infos})]
    for k, (i, zone, relabel) in enumerate(ops):
        old = chain[-1].by_name[f"n{i % n_nodes}"]
        node = labelled(old.name, zone) if relabel else old.node
        chain.append(chain[-1].with_node_info(NodeInfo(node, [make_pod(f"p{k}", "a", node=old.name)])))
        if k in asked_early:
            chain[-1].label_column(_ZONE)
    seen = [dict(s.label_column(_ZONE)) for s in chain]
    for snap, column in zip(chain, seen, strict=True):
        want = {i.name: v for i in snap.node_infos if (v := i.node.metadata.labels.get(_ZONE)) is not None}
        assert column == want
        assert snap.label_column("kubernetes.io/hostname") == {i.name: i.name for i in snap.node_infos}
    assert [dict(s.label_column(_ZONE)) for s in chain] == seen
