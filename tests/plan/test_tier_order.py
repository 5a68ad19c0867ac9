"""The order the planner searches its tiers in: where taking more pods off a node can fail the pod
only through pods its required affinity matches (`preemption.removal_hazards`), tier 3 runs before
tier 2 — a tier-3 search that finds nothing settles that no tier has an option, unless tier 3 also
took off such a pod — and the plans are those of the tiers searched one by one."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kresched.model.cluster import ClusterState
from kresched.plan import planner as planner_module
from kresched.plan.choice import why_not_enough
from kresched.plan.planner import Planner
from kresched.plan.plans import PlanOptions
from kresched.render.plan import plan_dict
from kresched.sched.preemption import removal_hazards
from kresched.sched.runner import default_plugins
from tests.builders import make_namespace, make_node, make_pdb, make_pod, make_state
from tests.plan.test_properties import OPTIONS, PROFILE, clusters

HOST = "kubernetes.io/hostname"


def _affinity(kind: str, app: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOST}
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def test_taking_pods_off_can_fail_a_pod_only_through_its_required_pod_affinity() -> None:
    plugins = default_plugins()
    assert removal_hazards(make_pod("p", cpu="1"), plugins) == ()
    assert removal_hazards(make_pod("p", affinity=_affinity("podAntiAffinity", "db")), plugins) == ()
    assert removal_hazards(make_pod("p", spread=[{"maxSkew": 1, "topologyKey": HOST,
                                                  "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": {"app": "web"}}}]), plugins) == ()
    (term,) = removal_hazards(make_pod("p", affinity=_affinity("podAffinity", "db")), plugins) or ()
    assert term.matches(make_pod("db", labels={"app": "db"}), {})
    assert not term.matches(make_pod("web", labels={"app": "web"}), {})


def test_a_filter_kresched_does_not_know_is_never_taken_for_monotone() -> None:
    class Custom:
        name = "SomeoneElsesFilter"

    assert removal_hazards(make_pod("p", cpu="1"), [*default_plugins(), Custom()]) is None  # type: ignore[list-item]


def test_a_pod_that_must_be_near_a_pod_only_tier_3_may_evict_is_planned_in_tier_2() -> None:
    """Tier 1 may evict nothing on node a (the db pod's PDB allows no disruption, the web pod's
    grace period is over the limit); tier 3 may evict both, and then nothing the pod must be near
    is left; tier 2 evicts the web pod only. Taking tier 3's "nothing" for every tier's would make
    the pod infeasible."""
    db = make_pod("db", node="a", cpu="100m", labels={"app": "db"}, priority=0, grace=5)
    web = make_pod("web", node="a", cpu="1800m", labels={"app": "web"}, priority=0, grace=60)
    pending = make_pod("pending", cpu="1", priority=100, labels={"app": "api"},
                       affinity=_affinity("podAffinity", "db"))
    state = make_state([make_node("a", cpu="2")], [db, web, pending],
                       [make_pdb("db", selector={"app": "db"}, disruptions_allowed=0)])
    plan = Planner(state, PlanOptions(max_grace_seconds=30)).plan(pending)
    assert (plan.outcome, plan.node, plan.tier, [v.pod.name for v in plan.victims]) == ("evict", "a", 2, ["web"])


@pytest.mark.parametrize("where", [{"namespaces": ["data"]}, {"namespaceSelector": {"matchLabels": {"team": "data"}}}],
                         ids=["namespaces", "namespace selector"])
def test_a_pod_that_must_be_near_a_pod_of_another_namespace_only_tier_3_may_evict_is_planned_in_tier_2(
        where: dict[str, Any]) -> None:
    """The same, with the db pod in another namespace, which the pod's term names or selects by its
    labels: tier 3 would take it off too, so tier 2 is searched and evicts the web pod only."""
    db = make_pod("db", "data", node="a", cpu="100m", labels={"app": "db"}, priority=0, grace=5)
    web = make_pod("web", node="a", cpu="1800m", labels={"app": "web"}, priority=0, grace=60)
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOST, **where}
    pending = make_pod("pending", cpu="1", priority=100, labels={"app": "api"},
                       affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    state = make_state([make_node("a", cpu="2")], [db, web, pending],
                       [make_pdb("db", "data", selector={"app": "db"}, disruptions_allowed=0)],
                       namespaces=[make_namespace("data", {"team": "data"}), make_namespace("default")])
    plan = Planner(state, PlanOptions(max_grace_seconds=30)).plan(pending)
    assert (plan.outcome, plan.node, plan.tier, [v.pod.name for v in plan.victims]) == ("evict", "a", 2, ["web"])


def test_a_pod_that_must_be_near_a_pod_tier_1_keeps_is_planned_in_tier_1() -> None:
    """The db pod's grace period is over the limit, so tier 1 leaves it and evicts the web pod; tier 3
    (and tier 2) take both off and strand the pod. Tier 3's "nothing", looked at first, settles
    nothing here."""
    db = make_pod("db", node="a", cpu="100m", labels={"app": "db"}, priority=0, grace=60)
    web = make_pod("web", node="a", cpu="1800m", labels={"app": "web"}, priority=0, grace=5)
    pending = make_pod("pending", cpu="1", priority=100, labels={"app": "api"},
                       affinity=_affinity("podAffinity", "db"))
    state = make_state([make_node("a", cpu="2")], [db, web, pending])
    plan = Planner(state, PlanOptions(max_grace_seconds=30)).plan(pending)
    assert (plan.outcome, plan.node, plan.tier, [v.pod.name for v in plan.victims]) == ("evict", "a", 1, ["web"])


def test_a_pod_no_tier_helps_that_tier_2_was_searched_for_names_its_nodes_in_tier_3s_words() -> None:
    """The db pod it must be near is one only tier 3 may evict, so tier 2 is searched after tier 3
    found nothing: it finds nothing either, and node a is out in the most permissive tier's words."""
    db = make_pod("db", node="a", cpu="100m", labels={"app": "db"}, priority=0)
    web = make_pod("web", node="a", cpu="1800m", labels={"app": "web"}, priority=1000)
    pending = make_pod("pending", cpu="1", priority=100, affinity=_affinity("podAffinity", "db"))
    state = make_state([make_node("a", cpu="2")], [db, web, pending],
                       [make_pdb("db", selector={"app": "db"}, disruptions_allowed=0)])
    plan = Planner(state, PlanOptions()).plan(pending)
    assert plan.outcome == "infeasible"
    assert [(r.node, r.reason) for r in plan.runners_up] == [("a", why_not_enough(3, 30))]


@pytest.mark.parametrize("affinity", [None, _affinity("podAntiAffinity", "db")],
                         ids=["resources only", "anti-affinity"])
def test_a_plan_tier_3_wins_after_tier_2_names_its_runners_up_in_tier_3s_words(affinity: Any) -> None:
    """Tier 3 is searched before tier 2 and wins once tier 2 has nothing: node b, out in both, is out
    in tier 3's words (the winning tier's), not tier 2's."""
    x = make_pod("x", node="a", cpu="1800m", labels={"app": "x"}, priority=0)
    z = make_pod("z", node="b", cpu="500m", labels={"app": "z"}, priority=0)
    w = make_pod("w", node="b", cpu="1300m", labels={"app": "w"}, priority=1000)
    pending = make_pod("pending", cpu="1", priority=100, affinity=affinity)
    state = make_state([make_node("a", cpu="2"), make_node("b", cpu="2")], [x, z, w, pending],
                       [make_pdb("x", selector={"app": "x"}, disruptions_allowed=0)])
    plan = Planner(state, PlanOptions(allow_pdb_violation=True)).plan(pending)
    assert (plan.outcome, plan.node, plan.tier) == ("evict", "a", 3)
    assert [(r.node, r.reason) for r in plan.runners_up] == [("b", why_not_enough(3, 30))]


@st.composite
def pods_with_terms(draw: st.DrawFn) -> tuple[ClusterState, Any]:
    """`clusters()` with a pending pod that may also have required pod affinity or anti-affinity to
    an app, or a spread constraint over the nodes."""
    state, pod = draw(clusters())
    kind = draw(st.sampled_from((None, "podAffinity", "podAntiAffinity", "spread")))
    app = draw(st.sampled_from(("a", "b", "c")))
    extra: dict[str, Any] = {}
    if kind == "spread":
        extra["spread"] = [{"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": app}}}]
    elif kind is not None:
        extra["affinity"] = _affinity(kind, app)
    pending = make_pod("pending", cpu=f"{pod.requests.milli_cpu}m", memory=str(pod.requests.memory),
                       priority=pod.priority, labels={"app": draw(st.sampled_from(("a", "z")))}, **extra)
    state = ClusterState.build(state.nodes, [*[p for p in state.pods if p.key != pod.key], pending], state.pdbs,
                               state.priority_classes, state.namespaces)
    return state, pending


@PROFILE
@given(pods_with_terms(), OPTIONS, st.integers(1, 3))
def test_searching_tier_3_before_tier_2_changes_no_plan(cluster: tuple[ClusterState, Any], options: PlanOptions,
                                                        replicas: int) -> None:
    """Every plan — the tier, the victims, the runners-up and their reasons, the message of a pod no
    eviction helps — is the one a planner searching the tiers in order makes, replicas included."""
    state, pod = cluster
    copies = [pod] + [make_pod(f"copy-{i}", cpu=f"{pod.requests.milli_cpu}m", memory=str(pod.requests.memory),
                               priority=pod.priority, labels=dict(pod.metadata.labels),
                               affinity=_as_dict(pod, "affinity"), spread=_as_dict(pod, "topologySpreadConstraints"))
                      for i in range(replicas - 1)]
    state = ClusterState.build(state.nodes, [*state.pods, *copies[1:]], state.pdbs, state.priority_classes,
                               state.namespaces)
    reordered = Planner(state, options)
    with mock.patch.object(planner_module, "removal_hazards", return_value=None):
        in_order = Planner(state, options)
        expected = [plan_dict(in_order.plan(p, commit=True)) for p in copies]
    assert [plan_dict(reordered.plan(p, commit=True)) for p in copies] == expected


def _as_dict(pod: Any, field: str) -> Any:
    import msgspec

    return msgspec.to_builtins(pod.spec).get(field) or None
