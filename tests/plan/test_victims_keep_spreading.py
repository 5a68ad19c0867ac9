"""A node spreading fails, with nothing taken off or with the room made: victim selection answers
from the filter statuses where taking the candidates off changes no count (hypothesis).

Where PodTopologySpread failed a pod on a node (Unschedulable) and the filters before it only
gain from removals, taking off pods that none of its constraints counts there leaves it failing
alike: `select_victims` then answers with the node's filter status (`failed`) instead of removing
every candidate from a clone and filtering again. Where NodeResourcesFit failed it and the
candidates taken off make room (running totals), spreading, the next filter, decides the same way:
its status now is the answer. Here generated zones of nodes whose pods the
pending pod's zone or hostname constraint counts or not (another app, another namespace, a pod
terminating): on every node, the victims — or the reason when there are none — are those of
the procedure on clones (`select_victims_on_node`), with that status given or not.

And with pod (anti-)affinity besides: where neither spreading nor pod affinity counts any
candidate, only the resources decide which go (running totals), and where the pod then fails,
the first of them that fails it now is the answer — every node's victims, or reason, are the
procedure's there too.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.planner import Planner
from kresched.plan.plans import PlanOptions
from kresched.sched.framework import Code
from kresched.sched.preemption import select_victims, select_victims_on_node
from kresched.sched.runner import find_nodes_that_fit
from tests.builders import make_node, make_pod, make_state

ZONE = "topology.kubernetes.io/zone"


@st.composite
def scenes(draw: st.DrawFn) -> tuple:
    nodes, pods = [], []
    for i in range(draw(st.integers(2, 5))):
        name = f"n{i}"
        nodes.append(make_node(name, cpu="4", memory="8Gi", labels={ZONE: draw(st.sampled_from("abc"))}))
        for j in range(draw(st.integers(0, 4))):
            pods.append(make_pod(
                f"{name}-p{j}", draw(st.sampled_from(("default", "other"))), node=name,
                cpu=draw(st.sampled_from(("250m", "500m", "1", "2"))),
                labels={"app": draw(st.sampled_from(("web", "db", "db")))},
                priority=draw(st.sampled_from((0, 100, 5000))),
                deletion_timestamp="2026-01-01T00:00:00Z" if draw(st.integers(0, 9)) == 0 else None))
    key = draw(st.sampled_from((ZONE, "kubernetes.io/hostname")))
    spread = [{"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    pending = make_pod("p", cpu=draw(st.sampled_from(("500m", "1", "3"))), labels={"app": "web"}, priority=1000,
                       spread=spread, start_time=None)
    return make_state(nodes, [*pods, pending]), pending


@settings(derandomize=True, database=None, deadline=None, max_examples=200,
          suppress_health_check=[HealthCheck.too_slow])
@given(scenes())
def test_victims_where_spreading_failed_are_those_found_by_taking_every_candidate_off(scene: tuple) -> None:
    _as_the_procedure(*scene)


def _as_the_procedure(state: ClusterState, pod: Pod) -> None:
    """On every node the filters failed Unschedulable: `select_victims` — given its filter status or
    not, answering from it, from running totals where only the resources change, or by the
    procedure — finds the victims, or the reason, `select_victims_on_node` finds on clones."""
    planner = Planner(state, PlanOptions())
    snap = planner.work.snapshot
    diag, cycle = find_nodes_that_fit(planner.plugins, pod, snap)
    split = planner.work.ledger.split_violating
    for info in snap.node_infos:
        failed = diag.node_to_status.get(info.name)
        if failed is None or failed.code != Code.UNSCHEDULABLE:
            continue
        eligible = planner.evictable.eligible(info, planner.evictable.candidates(info, pod.priority), 3)
        want = select_victims_on_node(planner.dynamic, cycle.clone(), pod, info.clone(), eligible, split)
        for given_status in (failed, None):
            got = select_victims(planner.dynamic, cycle, pod, info, eligible, split, (), given_status)
            assert (got.status.code, got.status.reasons, got.status.details, got.status.plugin) == \
                (want.status.code, want.status.reasons, want.status.details, want.status.plugin), info.name
            assert [p.key for p in got.victims] == [p.key for p in want.victims], info.name
            assert got.num_violating == want.num_violating, info.name


def _term(app: str, key: str) -> dict:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


@st.composite
def affinity_scenes(draw: st.DrawFn) -> tuple:
    """Zones of nodes whose pods the pending pod's spreading or pod (anti-)affinity counts or not,
    some running pods with anti-affinity against it: spreading, pod affinity and the resources."""
    nodes, pods = [], []
    keys = (ZONE, "kubernetes.io/hostname")
    for i in range(draw(st.integers(2, 5))):
        name = f"n{i}"
        zone = draw(st.sampled_from(("a", "b", "c", None)))
        nodes.append(make_node(name, cpu="4", memory="8Gi", labels={ZONE: zone} if zone else {}))
        for j in range(draw(st.integers(0, 4))):
            against = draw(st.sampled_from((None, None, None, "web")))
            pods.append(make_pod(
                f"{name}-p{j}", draw(st.sampled_from(("default", "default", "other"))), node=name,
                cpu=draw(st.sampled_from(("250m", "500m", "1", "2"))),
                labels={"app": draw(st.sampled_from(("web", "db", "db", "cache")))},
                priority=draw(st.sampled_from((0, 100, 5000))),
                affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    _term(against, draw(st.sampled_from(keys)))]}} if against else None))
    affinity: dict = {}
    if draw(st.booleans()):
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term("db", ZONE)]}
    if draw(st.booleans()):
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            _term(draw(st.sampled_from(("web", "cache"))), draw(st.sampled_from(keys)))]}
    spread = [{"maxSkew": 1, "topologyKey": draw(st.sampled_from(keys)), "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}] if draw(st.booleans()) else None
    pending = make_pod("p", cpu=draw(st.sampled_from(("500m", "1", "3"))), labels={"app": "web"}, priority=1000,
                       spread=spread, affinity=affinity or None, start_time=None)
    return make_state(nodes, [*pods, pending]), pending


@settings(derandomize=True, database=None, deadline=None, max_examples=300,
          suppress_health_check=[HealthCheck.too_slow])
@given(affinity_scenes())
def test_victims_told_without_a_clone_are_those_of_the_procedure(scene: tuple) -> None:
    _as_the_procedure(*scene)
