"""InterPodAffinity: required pod affinity / anti-affinity of the incoming pod and existing pods'
required anti-affinity, and PreFilter state that add_pod/remove_pod keep equal to a fresh one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.objects import Namespace, Node, Pod
from kresched.sched.framework import Code, CycleState, Snapshot
from kresched.sched.interpod_affinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NAME,
    InterPodAffinity,
)
from kresched.sched.node_info import NodeInfo
from kresched.sched.runner import find_nodes_that_fit, fit_error_message
from tests.builders import make_namespace, make_node, make_pod, make_state

OK = (Code.SUCCESS, ())
AFFINITY = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,))
ANTI = (Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,))
EXISTING = (Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,))
SKIP = "Skip"

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"

#: n1 and n2 in zone a, n3 in zone b, n4 without a zone label (every node has a hostname).
NODES = [
    make_node("n1", labels={ZONE: "a"}),
    make_node("n2", labels={ZONE: "a"}),
    make_node("n3", labels={ZONE: "b"}),
    make_node("n4"),
]


def _term(key: str = ZONE, match: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    """A PodAffinityTerm; `match` becomes `labelSelector.matchLabels` (pass selector=None for none)."""
    term: dict[str, Any] = {"topologyKey": key, **extra}
    if match is not None:
        term["labelSelector"] = {"matchLabels": match}
    return term


def _affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def _anti(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def _results(pod: Pod, pods: list[Pod], nodes: list[Node] = NODES, namespaces: list[Namespace] = ()
             ) -> dict[str, tuple[Code, tuple[str, ...]]] | str:
    snapshot = Snapshot.from_state(make_state(nodes, pods, namespaces=namespaces))
    return _filter_all(pod, snapshot)


def _filter_all(pod: Pod, snapshot: Snapshot) -> dict[str, tuple[Code, tuple[str, ...]]] | str:
    plugin = InterPodAffinity()
    cycle = CycleState()
    result = plugin.pre_filter(cycle, pod, snapshot)
    if result.status.code == Code.SKIP:
        return SKIP
    assert result.status.is_success
    return {info.name: _short(plugin, cycle, pod, info) for info in snapshot.node_infos}


def _short(plugin: InterPodAffinity, cycle: CycleState, pod: Pod, info: NodeInfo) -> tuple[Code, tuple[str, ...]]:
    st_ = plugin.filter(cycle, pod, info)
    return st_.code, st_.reasons


def _db(name: str = "db", node: str = "n1", namespace: str = "default", **kw: Any) -> Pod:
    return make_pod(name, namespace, node=node, labels=kw.pop("labels", {"app": "db"}), **kw)


def _web(name: str = "web", node: str = "n1", namespace: str = "default", **kw: Any) -> Pod:
    return make_pod(name, namespace, node=node, labels=kw.pop("labels", {"app": "web"}), **kw)


def _incoming(affinity: dict[str, Any] | None, labels: dict[str, str] | None = None,
              namespace: str = "default") -> Pod:
    return make_pod("incoming", namespace, labels=labels if labels is not None else {"app": "web"},
                    affinity=affinity)


BLUE = {"matchLabels": {"team": "blue"}}
TEAM_NAMESPACES = [make_namespace("default"), make_namespace("blue", {"team": "blue"}),
                   make_namespace("green", {"team": "green"})]


@pytest.mark.parametrize(
    ("pod", "pods", "namespaces", "want"),
    [
        # -- pod affinity -----------------------------------------------------------------------
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "db"}))), [_db(node="n1")], [],
                     {"n1": OK, "n2": OK, "n3": AFFINITY, "n4": AFFINITY},
                     id="zone affinity admits every node of the zone that runs a matching pod"),
        pytest.param(_incoming(_affinity(_term(HOST, {"app": "db"}))), [_db(node="n1")], [],
                     {"n1": OK, "n2": AFFINITY, "n3": AFFINITY, "n4": AFFINITY},
                     id="hostname affinity admits only the node that runs the matching pod"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "web"}))), [_db(node="n1")], [],
                     {"n1": OK, "n2": OK, "n3": OK, "n4": AFFINITY},
                     id="the first pod of a group with affinity to itself fits any node having the topology key"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "web"})), labels={"app": "api"}), [_db()], [],
                     {"n1": AFFINITY, "n2": AFFINITY, "n3": AFFINITY, "n4": AFFINITY},
                     id="without a matching pod, a pod that does not match its own term fits nowhere"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "web"}))), [_web(node="n3")], [],
                     {"n1": AFFINITY, "n2": AFFINITY, "n3": OK, "n4": AFFINITY},
                     id="once a matching pod exists the first-pod exception no longer applies"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "db"}), _term(ZONE, {"tier": "backend"}))),
                     [_db(node="n1"), make_pod("cache", node="n2", labels={"tier": "backend"})], [],
                     {"n1": AFFINITY, "n2": AFFINITY, "n3": AFFINITY, "n4": AFFINITY},
                     id="all affinity terms must be matched by one pod, not by several pods together"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "db"}), _term(HOST, {"tier": "backend"}))),
                     [_db(node="n2", labels={"app": "db", "tier": "backend"})], [],
                     {"n1": AFFINITY, "n2": OK, "n3": AFFINITY, "n4": AFFINITY},
                     id="with two affinity terms the node must be in both topologies of a matching pod"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "db"}))), [_db(node="n1", namespace="blue")], [],
                     {"n1": AFFINITY, "n2": AFFINITY, "n3": AFFINITY, "n4": AFFINITY},
                     id="affinity without namespaces only looks at the pod's own namespace"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "db"}, namespaces=["blue"]))),
                     [_db(node="n3", namespace="blue")], [],
                     {"n1": AFFINITY, "n2": AFFINITY, "n3": OK, "n4": AFFINITY},
                     id="affinity with namespaces looks at pods in those namespaces"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "db"}, namespaceSelector=BLUE))),
                     [_db(node="n3", namespace="blue"), _db("db2", node="n1", namespace="green")], TEAM_NAMESPACES,
                     {"n1": AFFINITY, "n2": AFFINITY, "n3": OK, "n4": AFFINITY},
                     id="a namespaceSelector selects namespaces by their labels"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "db"}, namespaceSelector={}))),
                     [_db(node="n3", namespace="green")], TEAM_NAMESPACES,
                     {"n1": AFFINITY, "n2": AFFINITY, "n3": OK, "n4": AFFINITY},
                     id="an empty namespaceSelector selects every namespace"),
        # -- pod anti-affinity ------------------------------------------------------------------
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}))), [_web(node="n1")], [],
                     {"n1": ANTI, "n2": ANTI, "n3": OK, "n4": OK},
                     id="zone anti-affinity rejects every node of the zone that runs a matching pod"),
        pytest.param(_incoming(_anti(_term(HOST, {"app": "web"}))), [_web(node="n1")], [],
                     {"n1": ANTI, "n2": OK, "n3": OK, "n4": OK},
                     id="hostname anti-affinity rejects only the node that runs the matching pod"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}))), [_web(node="n4")], [],
                     {"n1": OK, "n2": OK, "n3": OK, "n4": OK},
                     id="a matching pod on a node without the topology key counts nowhere"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}))), [_web(node="n1", namespace="blue")], [],
                     {"n1": OK, "n2": OK, "n3": OK, "n4": OK},
                     id="anti-affinity ignores matching pods in other namespaces"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}, namespaces=["blue"]))),
                     [_web(node="n1", namespace="blue"), _web("web2", node="n3")], [],
                     {"n1": ANTI, "n2": ANTI, "n3": OK, "n4": OK},
                     id="listed namespaces replace the pod's own namespace"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}, namespaceSelector={"matchLabels": {"team": "pk"}}))),
                     [_web(node="n1")], TEAM_NAMESPACES,
                     {"n1": OK, "n2": OK, "n3": OK, "n4": OK},
                     id="a namespaceSelector matching no namespace does not fall back to the pod's own"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}, namespaceSelector={"matchLabels": {"team": "blue"}}))),
                     [_web(node="n1", namespace="blue")], [],
                     {"n1": OK, "n2": OK, "n3": OK, "n4": OK},
                     id="a namespaceSelector only selects namespaces the snapshot knows"),
        pytest.param(_incoming(_anti(_term(ZONE, None))), [_web(node="n1")], [],
                     {"n1": OK, "n2": OK, "n3": OK, "n4": OK},
                     id="a term without labelSelector matches no pod"),
        pytest.param(_incoming(_anti(_term(ZONE, {}))), [_db(node="n3")], [],
                     {"n1": OK, "n2": OK, "n3": ANTI, "n4": OK},
                     id="an empty labelSelector matches every pod"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}))),
                     [_web(node="n1", deletion_timestamp="2026-01-01T00:00:00Z")], [],
                     {"n1": ANTI, "n2": ANTI, "n3": OK, "n4": OK},
                     id="terminating pods still count for anti-affinity as they do upstream"),
        pytest.param(_incoming({**_affinity(_term(ZONE, {"app": "db"})), **_anti(_term(ZONE, {"app": "web"}))}),
                     [_db(node="n1"), _web(node="n1"), _db("db2", node="n3")], [],
                     {"n1": ANTI, "n2": ANTI, "n3": OK, "n4": AFFINITY},
                     id="a node must satisfy affinity and anti-affinity, affinity reported first"),
        # -- matchLabelKeys / mismatchLabelKeys -------------------------------------------------
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}, matchLabelKeys=["version"])),
                               labels={"app": "web", "version": "v2"}),
                     [_web(node="n1", labels={"app": "web", "version": "v1"}),
                      _web("web2", node="n3", labels={"app": "web", "version": "v2"})], [],
                     {"n1": OK, "n2": OK, "n3": ANTI, "n4": OK},
                     id="matchLabelKeys adds the incoming pod's own value of the key to the selector"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}, matchLabelKeys=["version"]))),
                     [_web(node="n1", labels={"app": "web", "version": "v1"})], [],
                     {"n1": ANTI, "n2": ANTI, "n3": OK, "n4": OK},
                     id="matchLabelKeys that the pod does not carry are ignored"),
        pytest.param(_incoming(_anti(_term(ZONE, {}, mismatchLabelKeys=["tenant"])),
                               labels={"app": "web", "tenant": "acme"}),
                     [_web(node="n1", labels={"tenant": "globex"}), _web("web2", node="n3", labels={"tenant": "acme"})],
                     [], {"n1": ANTI, "n2": ANTI, "n3": OK, "n4": OK},
                     id="mismatchLabelKeys keeps the pod away from zones of other tenants only"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web", "version": "v2"}, matchLabelKeys=["version"])),
                               labels={"app": "web", "version": "v2"}),
                     [_web(node="n1", labels={"app": "web", "version": "v2"})], [],
                     {"n1": ANTI, "n2": ANTI, "n3": OK, "n4": OK},
                     id="a selector the API server already merged behaves the same"),
        # -- existing pods' anti-affinity -------------------------------------------------------
        pytest.param(_incoming(None), [_db(node="n1", affinity=_anti(_term(ZONE, {"app": "web"})))], [],
                     {"n1": EXISTING, "n2": EXISTING, "n3": OK, "n4": OK},
                     id="an existing pod's zone anti-affinity keeps a matching pod out of its zone"),
        pytest.param(_incoming(None), [_db(node="n1", affinity=_anti(_term(HOST, {"app": "web"})))], [],
                     {"n1": EXISTING, "n2": OK, "n3": OK, "n4": OK},
                     id="an existing pod's hostname anti-affinity keeps a matching pod off its node"),
        pytest.param(_incoming(None, namespace="blue"),
                     [_db(node="n3", affinity=_anti(_term(ZONE, {"app": "web"}, namespaceSelector={
                         "matchLabels": {"team": "blue"}})))], TEAM_NAMESPACES,
                     {"n1": OK, "n2": OK, "n3": EXISTING, "n4": OK},
                     id="an existing pod's namespaceSelector is matched against the incoming pod's namespace"),
        pytest.param(_incoming(None, labels={"app": "web", "version": "v2"}),
                     [_db(node="n1", labels={"app": "web", "version": "v2"},
                          affinity=_anti(_term(ZONE, {"app": "web"}, matchLabelKeys=["version"])))], [],
                     {"n1": EXISTING, "n2": EXISTING, "n3": OK, "n4": OK},
                     id="an existing pod's matchLabelKeys keep out pods with its own value"),
        pytest.param(_incoming(None, labels={"app": "web", "version": "v1"}),
                     [_db(node="n1", labels={"app": "web", "version": "v2"},
                          affinity=_anti(_term(ZONE, {"app": "web"}, matchLabelKeys=["version"])))], [], SKIP,
                     id="an existing pod's matchLabelKeys let pods with another value in"),
        pytest.param(_incoming(_anti(_term(HOST, {"app": "db"}))),
                     [_db(node="n1"), _db("guard", node="n1", labels={"app": "guard"},
                                          affinity=_anti(_term(ZONE, {"app": "web"}))),
                      _db("guard2", node="n3", labels={"app": "guard"}, affinity=_anti(_term(ZONE, {"app": "web"})))],
                     [], {"n1": ANTI, "n2": EXISTING, "n3": EXISTING, "n4": OK},
                     id="the pod's own anti-affinity is checked before existing pods' anti-affinity"),
        # -- PreFilter Skip ---------------------------------------------------------------------
        pytest.param(_incoming(None), [_web(node="n1"), _db(node="n2")], [], SKIP,
                     id="a pod without terms in a cluster without anti-affinity is skipped"),
        pytest.param(_incoming(None), [_db(node="n1", affinity=_anti(_term(ZONE, {"app": "api"})))], [], SKIP,
                     id="a pod that no existing anti-affinity term matches is skipped"),
        pytest.param(_incoming({"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 1, "podAffinityTerm": _term(ZONE, {"app": "db"})}]}}), [_db()], [], SKIP,
                     id="preferred terms never filter"),
    ],
)
def test_filter(pod: Pod, pods: list[Pod], namespaces: list[Namespace], want: object) -> None:
    assert _results(pod, pods, namespaces=namespaces) == want


def test_statuses_say_which_topology_failed() -> None:
    pods = [_web(node="n1"), _db(node="n3", affinity=_anti(_term(ZONE, {"app": "web"})))]
    pod = _incoming({**_affinity(_term(ZONE, {"app": "db"})), **_anti(_term(HOST, {"app": "web"}))})
    snapshot = Snapshot.from_state(make_state(NODES, pods))
    plugin, cycle = InterPodAffinity(), CycleState()
    plugin.pre_filter(cycle, pod, snapshot)
    details = {i.name: plugin.filter(cycle, pod, i).details for i in snapshot.node_infos}
    assert details == {
        "n1": (f"no pod matching the affinity terms runs in {ZONE}=a",),
        "n2": (f"no pod matching the affinity terms runs in {ZONE}=a",),
        "n3": (f"pods in {ZONE}=b have anti-affinity against this pod",),
        "n4": (f"node has no {ZONE} label",),
    }
    pod = _incoming(_anti(_term(HOST, {"app": "web"})))
    plugin.pre_filter(cycle, pod, snapshot)
    assert plugin.filter(cycle, pod, snapshot.by_name["n1"]).details == (
        f"pods matching an anti-affinity term run in {HOST}=n1",)


def test_message_counts_each_reason_once_per_node() -> None:
    pods = [_web(node="n1"), _db(node="n3", affinity=_anti(_term(ZONE, {"app": "web"})))]
    pod = _incoming(_anti(_term(ZONE, {"app": "web"})))
    diag, _ = find_nodes_that_fit([InterPodAffinity()], pod, Snapshot.from_state(make_state(NODES, pods)))
    assert diag.feasible == ["n4"]
    assert {n: st.plugin for n, st in diag.node_to_status.items()} == {"n1": NAME, "n2": NAME, "n3": NAME}
    assert fit_error_message(diag) == (
        "0/4 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules, "
        "2 node(s) didn't match pod anti-affinity rules.")


class _NoScan(list):
    def __iter__(self):  # type: ignore[override]
        raise AssertionError("filter scanned the node's pods")


def test_filter_reads_only_the_node_labels() -> None:
    pods = [_web(node="n1"), _db(node="n3", affinity=_anti(_term(ZONE, {"app": "web"})))]
    pod = _incoming({**_affinity(_term(ZONE, {"app": "db"})), **_anti(_term(ZONE, {"app": "web"}))})
    snapshot = Snapshot.from_state(make_state(NODES, pods))
    plugin, cycle = InterPodAffinity(), CycleState()
    plugin.pre_filter(cycle, pod, snapshot)
    for info in snapshot.node_infos:
        blind = info.clone()
        blind.pods = blind.pods_with_affinity = blind.pods_with_required_anti_affinity = _NoScan()
        assert plugin.filter(cycle, pod, blind) == plugin.filter(cycle, pod, info)


def test_filter_without_pre_filter_state_is_an_error() -> None:
    st_ = InterPodAffinity().filter(CycleState(), _incoming(None), NodeInfo(NODES[0]))
    assert st_.code == Code.ERROR


# -- add_pod / remove_pod against a fresh PreFilter ---------------------------------------------

def _after_change(pod: Pod, pods: list[Pod], node: str, add: Pod | None = None, remove: Pod | None = None
                  ) -> tuple[object, object]:
    """(filter results with PreFilter state updated by add_pod/remove_pod, results of a fresh
    PreFilter on the changed snapshot)."""
    snapshot = Snapshot.from_state(make_state(NODES, pods))
    plugin, cycle = InterPodAffinity(), CycleState()
    skipped = plugin.pre_filter(cycle, pod, snapshot).status.code == Code.SKIP
    changed = snapshot.by_name[node].clone()
    state = cycle.clone()
    if remove is not None:
        changed.remove_pod(remove)
        plugin.remove_pod(state, pod, remove, changed)
    if add is not None:
        changed.add_pod(add)
        plugin.add_pod(state, pod, add, changed)
    after = snapshot.with_node_info(changed)
    fresh = _filter_all(pod, after)
    if skipped:
        return SKIP, fresh
    updated = {i.name: _short(plugin, state, pod, i) for i in after.node_infos}
    return updated, fresh


WEB_N1 = _web(node="n1")
DB_N3 = _db(node="n3")
GUARD_N1 = _db("guard", node="n1", affinity=_anti(_term(ZONE, {"app": "web"})))


@pytest.mark.parametrize(
    ("pod", "pods", "node", "add", "remove"),
    [
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}))), [WEB_N1], "n1", None, WEB_N1,
                     id="removing the only conflicting pod frees its zone"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}))), [WEB_N1], "n3", _web("w2", node="n3"), None,
                     id="adding a conflicting pod closes its zone"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "db"}))), [DB_N3], "n3", None, DB_N3,
                     id="removing the last matching pod brings back the first-pod exception"),
        pytest.param(_incoming(_affinity(_term(ZONE, {"app": "web"}))), [], "n2", _web("w2", node="n2"), None,
                     id="adding the first matching pod ends the first-pod exception"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "web"}))), [GUARD_N1], "n1", None, GUARD_N1,
                     id="removing an existing pod with anti-affinity frees its zone"),
        pytest.param(_incoming(_anti(_term(ZONE, {"app": "db"}))), [DB_N3], "n2",
                     _db("guard", node="n2", affinity=_anti(_term(HOST, {"app": "web"}))), None,
                     id="adding an existing pod with anti-affinity closes its node"),
    ],
)
def test_add_and_remove_pod_agree_with_a_fresh_pre_filter(pod: Pod, pods: list[Pod], node: str,
                                                          add: Pod | None, remove: Pod | None) -> None:
    updated, fresh = _after_change(pod, pods, node, add, remove)
    before = _results(pod, pods)
    assert updated == fresh
    assert fresh != before  # the case changes the outcome, or it would prove nothing


def test_adding_a_matching_pod_on_a_node_without_the_topology_key_changes_nothing() -> None:
    pod = _incoming(_anti(_term(ZONE, {"app": "web"})))
    updated, fresh = _after_change(pod, [WEB_N1], "n4", add=_web("w2", node="n4"))
    assert updated == fresh == _results(pod, [WEB_N1]) == {"n1": ANTI, "n2": ANTI, "n3": OK, "n4": OK}


def test_add_pod_to_a_skipped_plugin_changes_nothing() -> None:
    # The framework never runs a skipped plugin's PreFilterExtensions or Filter; no state, no error.
    cycle = CycleState()
    pod = _incoming(None)
    snapshot = Snapshot.from_state(make_state(NODES, [WEB_N1]))
    assert InterPodAffinity().pre_filter(cycle, pod, snapshot).status.code == Code.SKIP
    InterPodAffinity().add_pod(cycle, pod, GUARD_N1, snapshot.by_name["n1"])
    assert cycle.read("PreFilter" + NAME) is None


def test_clone_keeps_the_original_state() -> None:
    pod = _incoming(_anti(_term(ZONE, {"app": "web"})))
    snapshot = Snapshot.from_state(make_state(NODES, [WEB_N1]))
    plugin, cycle = InterPodAffinity(), CycleState()
    plugin.pre_filter(cycle, pod, snapshot)
    clone = cycle.clone()
    plugin.remove_pod(clone, pod, WEB_N1, snapshot.by_name["n1"])
    assert plugin.filter(clone, pod, snapshot.by_name["n1"]).is_success
    assert _short(plugin, cycle, pod, snapshot.by_name["n1"]) == ANTI


_LABELS = st.fixed_dictionaries({}, optional={"app": st.sampled_from(["web", "db"]),
                                             "tier": st.sampled_from(["front", "back"])})
_TERMS = st.builds(lambda key, app, ns: _term(key, {"app": app}, **({"namespaces": ns} if ns else {})),
                   st.sampled_from([ZONE, HOST]), st.sampled_from(["web", "db"]),
                   st.sampled_from([None, ["default", "blue"]]))
_AFFINITY = st.builds(lambda aff, anti: {**(_affinity(*aff) if aff else {}), **(_anti(*anti) if anti else {})},
                      st.lists(_TERMS, max_size=2), st.lists(_TERMS, max_size=2))
_EXISTING = st.lists(st.tuples(st.sampled_from(["n1", "n2", "n3", "n4"]), st.sampled_from(["default", "blue"]),
                               _LABELS, st.one_of(st.none(), st.lists(_TERMS, min_size=1, max_size=1).map(
                                   lambda t: _anti(*t)))), max_size=8)


@settings(max_examples=150, deadline=None)
@given(_EXISTING, _AFFINITY, _LABELS, st.data())
def test_any_add_or_remove_agrees_with_a_fresh_pre_filter(existing: list[tuple[Any, ...]], affinity: dict[str, Any],
                                                          labels: dict[str, str], data: st.DataObject) -> None:
    pods = [make_pod(f"p{i}", ns, node=node, labels=lbl, affinity=aff)
            for i, (node, ns, lbl, aff) in enumerate(existing)]
    pod = _incoming(affinity or None, labels=labels)
    if pods and data.draw(st.booleans(), label="remove"):
        victim = data.draw(st.sampled_from(pods), label="victim")
        updated, fresh = _after_change(pod, pods, victim.node_name, remove=victim)
    else:
        node, ns, lbl, aff = data.draw(_EXISTING.filter(bool), label="added")[0]
        updated, fresh = _after_change(pod, pods, node, add=make_pod("added", ns, node=node, labels=lbl, affinity=aff))
    if updated != SKIP:  # a skipped plugin is not consulted again, as upstream
        assert updated == _skip_as_success(fresh)


def _skip_as_success(results: object) -> object:
    """A skipped plugin lets every node through."""
    return {n.name: OK for n in NODES} if results == SKIP else results
