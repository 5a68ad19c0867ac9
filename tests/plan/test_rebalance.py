"""`plan_rebalance`: each objective's rule, the simulation that decides whether a move helps, the
PDB and limits, and properties on random clusters (no move makes its objective worse, no PDB is
overspent, a second pass over the predicted result proposes nothing)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan import rebalance
from kresched.plan.pdb import PdbLedger
from kresched.plan.placement import bound_to, replacement_of
from kresched.plan.rebalance import plan_rebalance
from kresched.plan.rebalance_plans import RebalanceOptions, RebalancePlan, validate_options
from tests.builders import make_node, make_pdb, make_pod, make_state

UTIL = RebalanceOptions(objectives=("utilisation",))
VIOL = RebalanceOptions(objectives=("violations",))
PREF = RebalanceOptions(objectives=("preferences",))


def cpu_pods(node: str, n: int, cpu: str = "1", app: str = "web", **kw: Any) -> list[Pod]:
    return [make_pod(f"{app}-{node}-{i}", node=node, cpu=cpu, labels={"app": app}, owner=f"ReplicaSet/{app}", **kw)
            for i in range(n)]


def predicted(state: ClusterState, plan: RebalancePlan) -> ClusterState:
    """The cluster once the plan is carried out as predicted: each moved pod gone, its
    replacement bound where the plan says it lands (renamed as a controller would), and each PDB's
    `disruptionsAllowed` less the units the evictions spent (as the API server records them)."""
    moved = {m.pod.key: m for m in plan.moves}
    spent: dict[str, int] = {}
    for m in plan.moves:
        if m.pdb is not None:
            spent[m.pdb] = spent.get(m.pdb, 0) + 1
    pdbs = [msgspec.structs.replace(b, status=msgspec.structs.replace(
        b.status, disruptions_allowed=b.status.disruptions_allowed - spent[b.key]))
        if b.key in spent and b.status is not None else b for b in state.pdbs]
    pods = []
    for p in state.pods:
        m = moved.get(p.key)
        if m is None:
            pods.append(p)
        else:
            pods.append(bound_to(replacement_of(p), state.node_by_name[m.to]))
    return ClusterState.build(state.nodes, pods, pdbs, state.priority_classes, state.namespaces,
                              state.workloads)


ANTI_WEB = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                        "topologyKey": "kubernetes.io/hostname"}}]}}
ZONE = "topology.kubernetes.io/zone"
SPREAD_WEB = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
               "labelSelector": {"matchLabels": {"app": "web"}}}]


@dataclass
class Case:
    name: str
    state: ClusterState
    opts: RebalanceOptions
    moves: list[tuple[str, str, str]]  # (pod, from, to)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (pod, substring of the reason)
    limits: list[str] = field(default_factory=list)


CASES = [
    # -- utilisation: LowNodeUtilization's sources and destinations --------------------------------
    Case("a pod leaves a node above the target thresholds for an empty node, until the source is at target",
         make_state([make_node("a"), make_node("b")], cpu_pods("a", 3)), UTIL,
         [("default/web-a-0", "a", "b")]),
    Case("nothing moves when no node is below the thresholds (the descheduler's rule)",
         make_state([make_node("a"), make_node("b")], cpu_pods("a", 3) + cpu_pods("b", 1, app="db")), UTIL, []),
    Case("a node is a source when any resource is above its target (pods here)",
         make_state([make_node("a", pods=4), make_node("b", pods=4)],
                    cpu_pods("a", 3, cpu="10m")), UTIL, [("default/web-a-0", "a", "b")]),
    Case("least important pods leave first: lowest priority, then BestEffort before Guaranteed",
         make_state([make_node("a"), make_node("b")],
                    [make_pod("gold", node="a", cpu="1", memory="1Gi", limits={"cpu": "1", "memory": "1Gi"},
                              priority=10),
                     make_pod("low", node="a", cpu="1", priority=0),
                     make_pod("mid", node="a", cpu="1", priority=10)]), UTIL,
         [("default/low", "a", "b")]),
    Case("a move is refused when its replacement would land on a node that is not underutilised",
         make_state([make_node("a", labels={"pool": "x"}), make_node("b"), make_node("c", labels={"pool": "x"})],
                    cpu_pods("a", 3, node_selector={"pool": "x"}) + cpu_pods("c", 1, app="db")), UTIL, [],
         [("default/web-a-0", "not underutilised")]),
    Case("a cordoned empty node is not a destination",
         make_state([make_node("a"), make_node("b", unschedulable=True)], cpu_pods("a", 3)), UTIL, []),
    Case("a PodDisruptionBudget with no disruption left stops the move",
         make_state([make_node("a"), make_node("b")], cpu_pods("a", 3),
                    [make_pdb("web", selector={"app": "web"}, disruptions_allowed=0)]), UTIL, [],
         [("default/web-a-0", "allows no more disruptions")]),
    Case("each move spends one unit of the budget: one unit, one move, even when more would help",
         make_state([make_node("a"), make_node("b")], cpu_pods("a", 4),
                    [make_pdb("web", selector={"app": "web"}, disruptions_allowed=1)]), UTIL,
         [("default/web-a-0", "a", "b")], [("default/web-a-1", "allows no more disruptions")]),
    Case("bare, DaemonSet, critical and emptyDir pods never move",
         make_state([make_node("a"), make_node("b")],
                    [make_pod("bare", node="a", cpu="1", owner=None),
                     make_pod("ds", node="a", cpu="1", owner="DaemonSet/agent"),
                     make_pod("crit", node="a", cpu="1", priority_class="system-cluster-critical"),
                     make_pod("cache", node="a", cpu="1", volumes=[{"name": "c", "emptyDir": {}}])]), UTIL, []),
    Case("pods with emptyDir move when asked (--evict-local-storage-pods)",
         make_state([make_node("a"), make_node("b")],
                    [make_pod(f"cache-{i}", node="a", cpu="1", volumes=[{"name": "c", "emptyDir": {}}])
                     for i in range(3)]),
         RebalanceOptions(objectives=("utilisation",), evict_local_storage=True), [("default/cache-0", "a", "b")]),
    Case("--max-moves-per-node stops the moves off a node, and says so",
         make_state([make_node("a", cpu="8"), make_node("b", cpu="8"), make_node("c", cpu="8")],
                    cpu_pods("a", 7)),
         RebalanceOptions(objectives=("utilisation",), max_moves_per_node=1), [("default/web-a-0", "a", "b")],
         limits=["max-moves-per-node"]),
    Case("--max-moves stops every objective, and says so",
         make_state([make_node("a", cpu="8"), make_node("b", cpu="8"), make_node("c", cpu="8")],
                    cpu_pods("a", 7)),
         RebalanceOptions(max_moves=0), [], limits=["max-moves"]),
    # -- violations: constraints that stopped holding ------------------------------------------------
    Case("a pod whose nodeSelector no longer matches its node moves to a node that matches",
         make_state([make_node("a"), make_node("b", labels={"disk": "ssd"})],
                    [make_pod("db-0", node="a", cpu="1", node_selector={"disk": "ssd"})]), VIOL,
         [("default/db-0", "a", "b")]),
    Case("a pod on a node with an untolerated NoExecute taint moves off it",
         make_state([make_node("a", taints=[{"key": "gone", "effect": "NoExecute"}]), make_node("b")],
                    [make_pod("web-0", node="a", cpu="1")]), VIOL, [("default/web-0", "a", "b")]),
    Case("a tolerated taint is no violation",
         make_state([make_node("a", taints=[{"key": "gpu", "effect": "NoSchedule"}]), make_node("b")],
                    [make_pod("web-0", node="a", cpu="1", tolerations=[{"key": "gpu", "operator": "Exists"}])]),
         VIOL, []),
    Case("required anti-affinity that no longer holds: one of the two pods moves",
         make_state([make_node("a"), make_node("b")],
                    [make_pod(f"zk-{i}", node="a", cpu="1", labels={"app": "zk"}, owner="StatefulSet/zk",
                              affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                                  {"labelSelector": {"matchLabels": {"app": "zk"}},
                                   "topologyKey": "kubernetes.io/hostname"}]}}) for i in range(2)]),
         VIOL, [("default/zk-0", "a", "b")]),
    Case("a DoNotSchedule zone spread that no longer holds: pods leave the crowded zone until the skew is met",
         make_state([make_node("a", labels={ZONE: "x"}), make_node("b", labels={ZONE: "x"}),
                     make_node("c", labels={ZONE: "y"})],
                    [make_pod(f"web-{i}", node="ab"[i % 2], cpu="100m", labels={"app": "web"},
                              owner="ReplicaSet/web", spread=[
                                  {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                   "labelSelector": {"matchLabels": {"app": "web"}}}]) for i in range(3)]),
         VIOL, [("default/web-0", "a", "c")]),
    Case("a violation with nowhere to go is reported, not acted on",
         make_state([make_node("a"), make_node("b")],
                    [make_pod("db-0", node="a", cpu="1", node_selector={"disk": "ssd"})]), VIOL, [],
         [("default/db-0", "would stay Pending")]),
    Case("a cordoned node is drain's business, not a violation",
         make_state([make_node("a", unschedulable=True), make_node("b")], [make_pod("web-0", node="a", cpu="1")]),
         VIOL, []),
    # -- preferences ----------------------------------------------------------------------------------
    Case("a pod moves to the node its preferred node affinity names, by more than the margin",
         make_state([make_node("a"), make_node("b", labels={"fast": "true"})],
                    [make_pod("web-0", node="a", cpu="1", affinity={"nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 50, "preference": {"matchExpressions": [
                                {"key": "fast", "operator": "In", "values": ["true"]}]}}]}})]), PREF,
         [("default/web-0", "a", "b")]),
    Case("a preference gain below the margin is not worth the disruption (no node could give more: not simulated)",
         make_state([make_node("a"), make_node("b", labels={"fast": "true"})],
                    [make_pod("web-0", node="a", cpu="1", affinity={"nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 5, "preference": {"matchExpressions": [
                                {"key": "fast", "operator": "In", "values": ["true"]}]}}]}})]), PREF, []),
    Case("the replacement would land where it gains less than the margin: refused, and said why",
         make_state([make_node("a"), make_node("b", labels={"ssd": "true"}),
                     make_node("c", labels={"fast": "true"}, taints=[{"key": "gpu", "effect": "NoSchedule"}])],
                    [make_pod("web-0", node="a", cpu="1", affinity={"nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 50, "preference": {"matchExpressions": [
                                {"key": "fast", "operator": "In", "values": ["true"]}]}},
                            {"weight": 5, "preference": {"matchExpressions": [
                                {"key": "ssd", "operator": "In", "values": ["true"]}]}}]}})]), PREF, [],
         [("default/web-0", "less than the margin")]),
    Case("preferred pod anti-affinity: a replica next to its sibling moves to a node without one",
         make_state([make_node("a"), make_node("b")],
                    [make_pod(f"web-{i}", node="a", cpu="500m", labels={"app": "web"}, owner="ReplicaSet/web",
                              affinity=ANTI_WEB) for i in range(2)]), PREF, [("default/web-0", "a", "b")]),
    Case("ScheduleAnyway spread: replicas move until the spread is even, and no further (margin 1: counts)",
         make_state([make_node("a"), make_node("b")],
                    [make_pod(f"web-{i}", node="a", cpu="500m", labels={"app": "web"}, owner="ReplicaSet/web",
                              spread=SPREAD_WEB) for i in range(4)]),
         RebalanceOptions(objectives=("preferences",), preference_margin=1),
         [("default/web-0", "a", "b"), ("default/web-1", "a", "b")]),
    Case("ScheduleAnyway spread: a gain of a few pods is below the default margin (bounded, not simulated)",
         make_state([make_node("a"), make_node("b")],
                    [make_pod(f"web-{i}", node="a", cpu="500m", labels={"app": "web"}, owner="ReplicaSet/web",
                              spread=SPREAD_WEB) for i in range(4)]), PREF, []),
    Case("ScheduleAnyway spread: a crowded node sheds pods until the gain is below the margin",
         make_state([make_node("a"), make_node("b")],
                    [make_pod(f"web-{i}", node="a", cpu="100m", labels={"app": "web"}, owner="ReplicaSet/web",
                              spread=SPREAD_WEB) for i in range(12)]), PREF,
         [(f"default/web-{i}", "a", "b") for i in range(2)]),
    Case("a pod already on its preferred node stays",
         make_state([make_node("a", labels={"fast": "true"}), make_node("b")],
                    [make_pod("web-0", node="a", cpu="1", affinity={"nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 50, "preference": {"matchExpressions": [
                                {"key": "fast", "operator": "In", "values": ["true"]}]}}]}})]), PREF, []),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule(case: Case) -> None:
    plan = plan_rebalance(case.state, case.opts)
    assert [(m.pod.key, m.source, m.to) for m in plan.moves] == case.moves
    for pod, text in case.skipped:
        reasons = [s.reason for s in plan.skipped if s.pod.key == pod]
        assert any(text in r for r in reasons), (pod, reasons)
    assert sorted(h.limit for h in plan.limits) == sorted(case.limits)
    # The second pass over the predicted result proposes nothing (unless a limit stopped this one).
    if not case.limits:
        assert plan_rebalance(predicted(case.state, plan), case.opts).moves == ()


def test_utilisation_before_and_after_are_request_percentages() -> None:
    state = make_state([make_node("a"), make_node("b")], cpu_pods("a", 3))
    plan = plan_rebalance(state, UTIL)
    assert plan.before == {"a": {"cpu": 75, "memory": 0, "pods": 2}, "b": {"cpu": 0, "memory": 0, "pods": 0}}
    assert plan.after == {"a": {"cpu": 50, "memory": 0, "pods": 1}, "b": {"cpu": 25, "memory": 0, "pods": 0}}


def test_a_move_names_its_objective_reason_and_pdb() -> None:
    state = make_state([make_node("a"), make_node("b")], cpu_pods("a", 3),
                       [make_pdb("web", selector={"app": "web"}, disruptions_allowed=2)])
    [m] = plan_rebalance(state, UTIL).moves
    assert (m.objective, m.pdb, m.candidates) == ("utilisation", "default/web", ("b",))
    assert "a is above the target thresholds (cpu 75%)" in m.reason


def test_tied_candidates_must_all_be_acceptable() -> None:
    """Two empty nodes tie for the replacement: both underutilised, so the move is made and names both."""
    state = make_state([make_node("a"), make_node("b"), make_node("c")], cpu_pods("a", 3))
    [m] = plan_rebalance(state, UTIL).moves
    assert m.candidates == ("b", "c")


def test_options_are_validated_together() -> None:
    errors = validate_options(RebalanceOptions(objectives=("nope",), thresholds={"cpu": 60, "gpu": 5},
                                               target_thresholds={"cpu": 50}))
    assert any("unknown objective 'nope'" in e for e in errors)
    assert any("unknown resource 'gpu'" in e for e in errors)
    assert any("cpu=60 is above --target-thresholds cpu=50" in e for e in errors)


# -- properties -------------------------------------------------------------------------------------

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=120,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def clusters(draw: st.DrawFn) -> ClusterState:
    nodes, pods, pdbs = [], [], []
    for i in range(draw(st.integers(2, 5))):
        labels = {"fast": "true"} if draw(st.booleans()) else {}
        tainted = draw(st.integers(0, 6)) == 0
        nodes.append(make_node(f"n{i}", cpu=draw(st.sampled_from(("2", "4", "8"))), memory="8Gi", labels=labels,
                               taints=[{"key": "old", "effect": "NoExecute"}] if tainted else None))
        for j in range(draw(st.integers(0, 6))):
            app = draw(st.sampled_from(("a", "b", "c")))
            kw: dict[str, Any] = {}
            if draw(st.integers(0, 4)) == 0:
                kw["node_selector"] = {"fast": "true"}
            if draw(st.integers(0, 3)) == 0:
                kw["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": draw(st.sampled_from((5, 50, 100))), "preference": {"matchExpressions": [
                        {"key": "fast", "operator": "In", "values": ["true"]}]}}]}}
            pods.append(make_pod(f"{app}-{i}-{j}", node=f"n{i}", cpu=draw(st.sampled_from(("250m", "500m", "1"))),
                                 memory=draw(st.sampled_from(("256Mi", "1Gi"))), labels={"app": app},
                                 owner=f"ReplicaSet/{app}", priority=draw(st.sampled_from((0, 10)))))
    for app in ("a", "b"):
        if draw(st.booleans()):
            pdbs.append(make_pdb(app, selector={"app": app}, disruptions_allowed=draw(st.integers(0, 2))))
    return make_state(nodes, pods, pdbs)


@PROFILE
@given(clusters())
def test_properties_hold_on_random_clusters(state: ClusterState) -> None:
    opts = RebalanceOptions(thresholds={"cpu": 30, "memory": 30, "pods": 30},
                            target_thresholds={"cpu": 60, "memory": 60, "pods": 60})
    plan = plan_rebalance(state, opts)
    # No PDB overspent: at most its budget of moves per PDB.
    ledger = PdbLedger(state)
    spent: dict[str, int] = {}
    for m in plan.moves:
        if m.pdb is not None:
            spent[m.pdb] = spent.get(m.pdb, 0) + 1
    assert all(n <= ledger.budget(k) for k, n in spent.items())
    # No move makes its objective worse.
    for m in plan.moves:
        assert m.to != m.source
        assert m.to in m.candidates
        if m.objective == "utilisation":
            assert all(plan.after[m.source][r] <= plan.before[m.source][r] for r in ("cpu", "memory", "pods")) \
                or any(x.to == m.source for x in plan.moves)
            assert plan.after[m.to]["cpu"] <= 60
            assert plan.after[m.to]["memory"] <= 60
    # A pod moves at most once, and the second pass over the predicted result proposes nothing.
    assert len({m.pod.key for m in plan.moves}) == len(plan.moves)
    assert plan_rebalance(predicted(state, plan), opts).moves == ()


# -- the shortcuts change no plan -------------------------------------------------------------------

_HOST = "kubernetes.io/hostname"
_ZONE = "topology.kubernetes.io/zone"


@st.composite
def preference_clusters(draw: st.DrawFn) -> ClusterState:
    """Clusters of replicas with every kind of constraint the shortcuts reason about: preferred node
    affinity, preferred anti-affinity by hostname (sometimes from another namespace's pods),
    ScheduleAnyway and DoNotSchedule spreading by zone or hostname, required anti-affinity."""
    zones = ("z1", "z2", "z3")
    nodes, pods = [], []
    n_nodes = draw(st.integers(2, 5))
    for i in range(n_nodes):
        labels = {_ZONE: draw(st.sampled_from(zones)), **({"fast": "true"} if draw(st.booleans()) else {})}
        nodes.append(make_node(f"n{i}", cpu="8", memory="16Gi", labels=labels))
    for app in ("a", "b", "c"):
        kind = draw(st.sampled_from(("anti", "spread-zone", "spread-host", "node-pref", "required-anti",
                                     "must-spread", "anti-other-ns")))
        ns = "other" if kind == "anti-other-ns" else "default"
        kw: dict[str, Any] = {}
        if kind in ("anti", "anti-other-ns"):
            term = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": _HOST}
            if kind == "anti-other-ns":
                term["namespaces"] = ["default"]
            kw["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": draw(st.sampled_from((10, 100))), "podAffinityTerm": term}]}}
        elif kind.startswith("spread") or kind == "must-spread":
            kw["spread"] = [{"maxSkew": 1, "topologyKey": _HOST if kind == "spread-host" else _ZONE,
                             "whenUnsatisfiable": "DoNotSchedule" if kind == "must-spread" else "ScheduleAnyway",
                             "labelSelector": {"matchLabels": {"app": app}}}]
        elif kind == "node-pref":
            kw["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": draw(st.sampled_from((5, 50))), "preference": {"matchExpressions": [
                    {"key": "fast", "operator": "In", "values": ["true"]}]}}]}}
        else:
            kw["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": _HOST}]}}
        for j in range(draw(st.integers(1, 7))):
            pods.append(make_pod(f"{app}-{j}", ns, node=f"n{draw(st.integers(0, n_nodes - 1))}",
                                 cpu=draw(st.sampled_from(("250m", "1"))), labels={"app": app},
                                 owner=f"ReplicaSet/{app}", **kw))
    return make_state(nodes, pods)


@settings(derandomize=True, database=None, deadline=None, max_examples=150,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(preference_clusters(), st.sampled_from((1, 10)))
def test_bounds_memos_and_kept_verdicts_change_no_plan(state: ClusterState, margin: int) -> None:
    # The exact shortcuts (preference bounds, per-shape filter and score memos, violation verdicts
    # kept across rounds) against a plan that simulates every pod with preferences every round;
    # the per-shape budget, which is not exact, is off in both.
    opts = RebalanceOptions(preference_margin=margin)
    fast = rebalance._plan(state, opts, shape_tries=None)
    slow = rebalance._plan(state, opts, prune=False, shape_tries=None)
    assert [(m.pod.key, m.source, m.to, m.candidates, m.objective, m.reason) for m in fast.moves] == \
        [(m.pod.key, m.source, m.to, m.candidates, m.objective, m.reason) for m in slow.moves]
    assert fast.after == slow.after


def _profiles(profile: dict[str, Any]) -> Any:
    from kresched.sched.config import parse_scheduler_config
    from kresched.sched.profile import build_profiles

    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", **profile}]}
    return build_profiles(*parse_scheduler_config(doc), "test")


@pytest.mark.parametrize(("profile", "moved"), [
    pytest.param({}, ["default/web-0"], id="the default profile: an untolerated NoExecute taint is a violation"),
    pytest.param({"plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}}}, [],
                 id="a profile without TaintToleration's filter: the taint keeps no pod off, nothing moves"),
])
def test_violations_are_the_filters_of_the_pods_profile(profile: dict[str, Any], moved: list[str]) -> None:
    state = make_state([make_node("a", taints=[{"key": "gone", "effect": "NoExecute"}]), make_node("b")],
                       [make_pod("web-0", node="a", cpu="1")])
    plan = plan_rebalance(state, RebalanceOptions(objectives=("violations",), profiles=_profiles(profile)))
    assert [m.pod.key for m in plan.moves] == moved


def test_a_profiles_added_affinity_makes_a_pod_outside_it_a_violation() -> None:
    """NodeAffinityArgs' addedAffinity applies to every pod: one running where it does not hold
    moves to a node where it does (the scheduler places its replacement there)."""
    added = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["new"]}]}]}}
    profiles = _profiles({"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": added}}]})
    state = make_state([make_node("old"), make_node("fresh", labels={"pool": "new"})],
                       [make_pod("web-0", node="old", cpu="1")])
    plan = plan_rebalance(state, RebalanceOptions(objectives=("violations",), profiles=profiles))
    assert [(m.pod.key, m.source, m.to) for m in plan.moves] == [("default/web-0", "old", "fresh")]
    assert "scheduler-enforced node affinity" in plan.moves[0].reason
    assert plan_rebalance(state, RebalanceOptions(objectives=("violations",))).moves == ()


# -- LowNodeUtilization: the underutilised nodes are filled up to the target ------------------------

def _busy_and_empty() -> ClusterState:
    """Issue 38's scene: five 4-CPU nodes; n1 at 100 % of its CPU requested, n2 and n3 at 87.5 %
    (1-CPU and 500m replicas), n4 and n5 empty."""
    pods = cpu_pods("n1", 4)
    for node in ("n2", "n3"):
        pods += cpu_pods(node, 3) + cpu_pods(node, 1, cpu="500m", app="api")
    return make_state([make_node(f"n{i}") for i in range(1, 6)], pods)


def _cpu_spread(utilisation: dict[str, dict[str, int]]) -> int:
    return max(u["cpu"] for u in utilisation.values()) - min(u["cpu"] for u in utilisation.values())


def test_the_underutilised_nodes_take_pods_up_to_the_target_not_one_each() -> None:
    """The nodes below the thresholds when the round began stay destinations until a move would
    take them above the target (the descheduler's "total available usage" of the low nodes): the
    spread of CPU requests at least halves, and no node that started below the target ends above it."""
    state = _busy_and_empty()
    plan = plan_rebalance(state)
    assert _cpu_spread(plan.before) == 100
    assert _cpu_spread(plan.after) <= 50, plan.after
    assert {m.to for m in plan.moves} == {"n4", "n5"}
    assert all(plan.after[n]["cpu"] <= 50 for n in ("n4", "n5")), plan.after
    assert plan.after["n1"]["cpu"] <= 50


def test_filling_the_underutilised_nodes_does_not_flap() -> None:
    """The next round over the predicted result moves nothing: the destinations are at the target,
    not below the thresholds, and no source is above it that could give to one."""
    state = _busy_and_empty()
    plan = plan_rebalance(state)
    assert plan.moves
    assert plan_rebalance(predicted(state, plan)).moves == ()


def test_a_destination_is_not_pushed_above_the_target_even_when_it_started_underutilised() -> None:
    """One empty 4-CPU node, target 50 %: it takes two 1-CPU pods, not a third; the rest stay."""
    state = make_state([make_node("a"), make_node("b")], cpu_pods("a", 4))
    plan = plan_rebalance(state, UTIL)
    assert [(m.pod.key, m.to) for m in plan.moves] == [("default/web-a-0", "b"), ("default/web-a-1", "b")]
    assert plan.after["b"]["cpu"] == 50


def test_once_the_destinations_are_at_the_target_the_other_sources_are_not_tried() -> None:
    """The busiest source gives first; when the destinations' headroom up to the target is spent
    (in any resource), the round stops: the other source's pods are neither moved nor listed."""
    state = make_state([make_node("a"), make_node("b"), make_node("c")],
                       cpu_pods("a", 4) + cpu_pods("c", 3, cpu="1100m", app="api"))
    plan = plan_rebalance(state, UTIL)
    assert [(m.source, m.to) for m in plan.moves] == [("a", "b"), ("a", "b")]
    assert plan.after["b"]["cpu"] == 50
    assert not [s for s in plan.skipped if s.node == "c"]
