"""The filters after NodeResourcesFit, where each reads of a node only some of its labels for the pod
(`label_keys`: PodTopologySpread and InterPodAffinity without a hostname key): `find_nodes_that_fit`
finds their first failing status once per combination of those labels' values. Every node's status
must be what the filters themselves say of it — code, reasons, plugin and details (`explain` prints
the details: the domain's count and minimum, the pair existing pods' anti-affinity is counted
under) — with spreading, required affinity and anti-affinity over zones and racks, existing pods'
anti-affinity under one key or two (then the message names the node's first label counted, in the
node's own order of its labels), and nodes lacking a key.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.sched.framework import Snapshot
from kresched.sched.runner import FilterMemo, default_plugins, find_nodes_that_fit, run_filters, run_pre_filter
from kresched.sched.static import StaticFilters
from tests.builders import make_node, make_pod, make_state

_ZONE, _RACK = "topology.kubernetes.io/zone", "rack"
_KEYS = (_ZONE, _RACK)
_APPS = ("web", "db")

_selector = st.fixed_dictionaries({"matchLabels": st.fixed_dictionaries({"app": st.sampled_from(_APPS)})})
_term = st.fixed_dictionaries({"labelSelector": _selector,
                               "topologyKey": st.sampled_from((*_KEYS, "kubernetes.io/hostname"))})
_zonal_term = st.fixed_dictionaries({"labelSelector": _selector, "topologyKey": st.sampled_from(_KEYS)})


@st.composite
def _node_labels(draw: st.DrawFn) -> list[tuple[str, str]]:
    """A node's labels in its own order (some lack a key)."""
    pairs = [(k, f"{k[-4:]}-{draw(st.integers(0, 2))}") for k in _KEYS if draw(st.integers(0, 5))]
    return draw(st.permutations(pairs)) if pairs else []


@st.composite
def _incoming(draw: st.DrawFn) -> dict[str, Any]:
    spread = draw(st.lists(st.fixed_dictionaries({
        "maxSkew": st.integers(1, 2), "topologyKey": st.sampled_from(_KEYS),
        "whenUnsatisfiable": st.just("DoNotSchedule"), "labelSelector": _selector}),
        max_size=2, unique_by=lambda c: c["topologyKey"]))
    affinity: dict[str, Any] = {}
    if terms := draw(st.lists(_zonal_term, max_size=1)):
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": terms}
    if terms := draw(st.lists(_term, max_size=2)):
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": terms}
    return {"spread": spread, "affinity": affinity or None, "labels": {"app": draw(st.sampled_from(_APPS))}}


def _seen(diag_statuses: dict[str, Any]) -> dict[str, tuple]:
    return {n: (s.code, s.reasons, s.plugin, s.details) for n, s in diag_statuses.items()}


@settings(derandomize=True, database=None, deadline=None, max_examples=150)
@given(nodes=st.lists(_node_labels(), min_size=4, max_size=14),
       running=st.lists(st.tuples(st.integers(0, 13), st.sampled_from(_APPS), st.lists(_term, max_size=1)),
                        max_size=12),
       pods=st.lists(_incoming(), min_size=1, max_size=3))
def test_the_verdicts_found_once_per_label_values_are_the_filters_own_on_every_node(
        nodes: list[list[tuple[str, str]]], running: list[tuple[int, str, list[dict[str, Any]]]],
        pods: list[dict[str, Any]]) -> None:
    cluster = [make_node(f"n{i:02}", labels=dict(labels)) for i, labels in enumerate(nodes)]
    existing = [make_pod(f"r{j}", node=cluster[i % len(cluster)].metadata.name, cpu="100m", labels={"app": app},
                         affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": anti}}
                         if anti else None)
                for j, (i, app, anti) in enumerate(running)]
    incoming = [make_pod(f"p{j}", cpu="500m", labels=p["labels"], spread=p["spread"], affinity=p["affinity"])
                for j, p in enumerate(pods)]
    snap = Snapshot.from_state(make_state(cluster, [*existing, *incoming]))
    plugins = default_plugins()
    static = StaticFilters(plugins)
    memo = FilterMemo()
    for pod in incoming:
        got, _ = find_nodes_that_fit(plugins, pod, snap, static=static, memo=memo)
        cycle, status, _ = run_pre_filter(plugins, pod, snap)
        assert got.pre_filter_status is None
        assert status.is_success
        want = {info.name: st for info in snap.node_infos
                if not (st := run_filters(plugins, cycle, pod, info)).is_success}
        assert _seen(got.node_to_status) == _seen(want)
        assert sorted(got.feasible) == sorted(info.name for info in snap.node_infos if info.name not in want)


def test_existing_anti_affinity_under_two_keys_names_the_nodes_first_label_counted() -> None:
    """Two nodes alike in their zone and rack, their labels in another order, where existing pods'
    anti-affinity against the pod is counted under both keys: each node's message names its own
    first label counted (upstream walks the node's labels), so their statuses are not shared."""
    zone_first = make_node("n1", labels={_ZONE: "z", _RACK: "r"})
    rack_first = make_node("n2", labels={_RACK: "r", _ZONE: "z"})
    keepers = [make_pod(f"keeper-{key}", node="n1", cpu="100m", affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": key}]}}) for key in _KEYS]
    pod = make_pod("web", cpu="500m", labels={"app": "web"})
    snap = Snapshot.from_state(make_state([zone_first, rack_first], [*keepers, pod]))
    plugins = default_plugins()
    diag, _ = find_nodes_that_fit(plugins, pod, snap, static=StaticFilters(plugins), memo=FilterMemo())
    assert diag.node_to_status["n1"].details == ("pods in topology.kubernetes.io/zone=z have anti-affinity against "
                                                 "this pod",)
    assert diag.node_to_status["n2"].details == ("pods in rack=r have anti-affinity against this pod",)
