"""A lost node: recognised from the API server's objects, and its recovery timeline (upstream's
taint manager, DefaultTolerationSeconds, StatefulSet, pod GC and attach/detach rules)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kresched.model.cluster import ClusterState
from kresched.model.lease import Lease
from kresched.model.objects import Node, time_seconds
from kresched.plan.candidates import LOST_NODE
from kresched.plan.drain import DrainOptions, plan_drain
from kresched.plan.explain import explain_pod
from kresched.plan.lost import is_lost, lost_nodes, node_loss, observed_at
from kresched.plan.planner import plan_pod
from kresched.plan.rebalance import plan_rebalance
from kresched.plan.rebalance_plans import RebalanceOptions
from kresched.plan.recovery import recovery_timeline, toleration_seconds
from kresched.sources.decode import Objects
from kresched.sources.snapshot import build_state
from tests.builders import make_lost_node, make_node, make_node_lease, make_pod, make_pv, make_pvc, pvc_volume

LOST_AT = "2026-11-28T22:00:00Z"
T0 = time_seconds(LOST_AT)
assert T0 is not None


lost_node = make_lost_node
lease = make_node_lease


def state_of(nodes: list[Node], pods: list[Any], leases: list[Lease] = (), storage: list[Any] = ()) -> ClusterState:
    objects = Objects(list(nodes), list(pods))
    objects.leases = list(leases)
    for obj in storage:
        objects.add(obj)
    return build_state(objects)


# -- recognising a lost node -------------------------------------------------------------------------

@pytest.mark.parametrize(("node", "lost"), [
    pytest.param(lost_node(), True, id="Ready Unknown with the unreachable taints is lost"),
    pytest.param(lost_node(taints=False), True, id="Ready Unknown before the taints come is lost"),
    pytest.param(lost_node(ready="False"), False, id="Ready False (only a kubelet writes False) is not lost"),
    pytest.param(make_node("node-a"), False, id="a Ready node is not lost"),
])
def test_the_lifecycle_controllers_verdict_needs_no_clock(node, lost):
    assert is_lost(node) is lost


def test_a_kubelet_silent_past_the_grace_period_is_lost_before_the_controller_says_so():
    state = state_of([make_node("node-a"), make_node("node-b")],
                     [], [lease("node-a", "2026-11-28T22:00:00.000000Z"), lease("node-b", "2026-11-28T22:05:00.0Z")])
    now = observed_at(state)
    assert now == T0 + 300
    silent = node_loss(state, "node-a", now)
    assert silent.silent_seconds == 300
    assert silent.is_lost
    assert silent.kubelet_silent
    assert not node_loss(state, "node-b", now).is_lost
    assert lost_nodes(state) == frozenset()  # the planners' verdict waits for the controller


# -- when each pod is evicted ---------------------------------------------------------------------

UNREACHABLE = (msgspec.convert({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
                               type=lost_node().spec.taints[1].__class__),)


@pytest.mark.parametrize(("tolerations", "owner", "seconds"), [
    pytest.param([], "ReplicaSet/web", 300, id="no toleration: the admission's default 300 s"),
    pytest.param([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                   "tolerationSeconds": 30}], "ReplicaSet/web", 30, id="its own tolerationSeconds"),
    pytest.param([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}],
                 "DaemonSet/agent", None, id="tolerated without seconds (DaemonSet pods): never"),
    pytest.param([{"operator": "Exists"}], "ReplicaSet/web", None, id="a toleration of everything: never"),
    pytest.param([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                   "tolerationSeconds": -5}], "ReplicaSet/web", 0, id="seconds below zero: at once"),
])
def test_the_taint_manager_waits_the_smallest_matching_toleration(tolerations, owner, seconds):
    assert toleration_seconds(make_pod(tolerations=tolerations, owner=owner), UNREACHABLE) == seconds


def test_the_timeline_tells_who_goes_when_who_comes_back_where_and_who_does_not():
    pods = [
        make_pod("web-1", node="node-x", cpu="1", owner="ReplicaSet/web"),
        make_pod("fast-1", node="node-x", cpu="1", owner="ReplicaSet/fast", tolerations=[
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 30}]),
        make_pod("db-0", node="node-x", cpu="1", owner="StatefulSet/db"),
        make_pod("debug", node="node-x", cpu="100m", owner=None),
        make_pod("agent-x", node="node-x", owner="DaemonSet/agent", tolerations=[
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]),
    ]
    state = state_of([lost_node(), make_node("node-a", cpu="2"), make_node("node-b", cpu="4")], pods)
    r = recovery_timeline(state, "node-x", T0 + 10)
    by = {f.pod.name: f for f in r.pods}
    assert [f.pod.name for f in r.pods] == ["fast-1", "db-0", "debug", "web-1", "agent-x"]
    assert by["fast-1"].evicted_at == T0 + 30
    assert by["web-1"].evicted_at == T0 + 300
    assert by["agent-x"].outcome == "stays"
    assert by["agent-x"].evicted_at is None
    assert by["web-1"].outcome == "replaced"
    assert by["web-1"].lands_on == "node-b"
    assert by["web-1"].comes_back
    assert by["db-0"].outcome == "recreated"
    assert not by["db-0"].comes_back
    assert "StatefulSet creates db-0 again only once the old pod is gone" in by["db-0"].waits_for[0]
    assert by["debug"].outcome == "gone"
    assert "nothing recreates it" in by["debug"].waits_for[0]
    # Out of service: everything not tolerating it goes at once; the StatefulSet pod comes back too.
    assert r.out_of_service is not None
    after = {f.pod.name: f for f in r.out_of_service}
    assert after["db-0"].evicted_at == T0 + 10
    assert after["db-0"].lands_on in ("node-a", "node-b")
    assert not after["db-0"].waits_for
    assert after["agent-x"].outcome == "with-node"
    assert any("--out-of-service" in s and "1 pod(s) that would not come back by themselves then do" in s
               for s in r.speed_up)


def test_replacements_never_land_on_another_lost_node():
    pods = [make_pod("web-1", node="node-x", cpu="1", owner="ReplicaSet/web")]
    # node-y is lost too but its taints are not there yet: only the verdict keeps pods off it.
    state = state_of([lost_node(), lost_node("node-y", taints=False, cpu="64"), make_node("node-a", cpu="2")], pods)
    (fate,) = recovery_timeline(state, "node-x", T0).pods
    assert fate.lands_on == "node-a"


def test_a_replacement_waits_for_its_readwriteonce_volume_to_detach_unless_out_of_service():
    pods = [make_pod("web-1", node="node-x", cpu="1", owner="ReplicaSet/web", volumes=[pvc_volume("data")])]
    storage = [make_pvc("data", volume="pv-data"),
               make_pv("pv-data", claim="default/data", csi=("ebs.csi.aws.com", "vol-1"))]
    state = state_of([lost_node(), make_node("node-a")], pods, storage=storage)
    r = recovery_timeline(state, "node-x", T0)
    (fate,) = r.pods
    assert fate.volumes == ("pv-data",)
    assert "stays attached to node-x" in fate.waits_for[0]
    assert "6m" in fate.waits_for[0]
    assert r.out_of_service is not None
    assert not r.out_of_service[0].waits_for


def test_an_evicted_pods_existing_replacement_is_named_not_placed_again():
    evicted = make_pod("web-1", node="node-x", cpu="1", owner="ReplicaSet/web",
                       deletion_timestamp="2026-11-28T22:05:30Z", spec=None)
    raw = msgspec.to_builtins(evicted)
    raw["metadata"]["deletionGracePeriodSeconds"] = 30
    evicted = msgspec.convert(raw, type(evicted))
    new = msgspec.to_builtins(make_pod("web-2", node="node-a", cpu="1", owner="ReplicaSet/web"))
    new["metadata"]["creationTimestamp"] = "2026-11-28T22:05:01Z"
    state = state_of([lost_node(), make_node("node-a")], [evicted, msgspec.convert(new, type(evicted))])
    (fate,) = list(recovery_timeline(state, "node-x", T0 + 400).pods)
    assert fate.evicted
    assert fate.evicted_at == T0 + 300
    assert fate.replacements == {"default/web-2": "node-a"}
    assert fate.lands_on is None


# -- the planners leave a lost node alone ----------------------------------------------------------

def test_plan_never_evicts_on_a_lost_node_and_says_why():
    # Both nodes are full of less important pods; node-x (lost, no taints yet) comes first by name.
    nodes = [lost_node(taints=False, cpu="2"), make_node("node-a", cpu="2")]
    pods = [make_pod("old-x", node="node-x", cpu="2", priority=0),
            make_pod("old-a", node="node-a", cpu="2", priority=0), make_pod("vip", cpu="2", priority=1000, owner=None)]
    plan = plan_pod(state_of(nodes, pods), state_of(nodes, pods).pod("default/vip"))
    assert (plan.outcome, plan.node) == ("evict", "node-a")
    assert [v.pod.name for v in plan.victims] == ["old-a"]
    alone = state_of(nodes[:1], pods[:1] + pods[2:])
    refused = plan_pod(alone, alone.pod("default/vip"))
    assert refused.outcome == "infeasible"
    assert [(r.node, r.reason) for r in refused.runners_up] == [("node-x", LOST_NODE)]


def test_rebalance_moves_nothing_off_or_onto_a_lost_node():
    busy = [make_pod(f"web-{i}", node="node-a", cpu="1", labels={"app": "web"}, owner="ReplicaSet/web")
            for i in range(3)]
    onto = state_of([make_node("node-a"), lost_node(taints=False)], busy)
    assert plan_rebalance(onto, RebalanceOptions(objectives=("utilisation",))).moves == ()
    off = state_of([lost_node(taints=False), make_node("node-b")],
                   [make_pod(f"web-{i}", node="node-x", cpu="1", labels={"app": "web"}, owner="ReplicaSet/web")
                    for i in range(3)])
    assert plan_rebalance(off, RebalanceOptions(objectives=("utilisation",))).moves == ()
    # The same clusters with the nodes healthy do move (the lost node is what stops them).
    healthy = state_of([make_node("node-a"), make_node("node-x")], busy)
    assert plan_rebalance(healthy, RebalanceOptions(objectives=("utilisation",))).moves


def test_drain_lands_nothing_on_a_lost_node_before_its_taints_come():
    state = state_of([make_node("node-a"), lost_node(taints=False, cpu="64"), make_node("node-b", cpu="1")],
                     [make_pod("web-1", node="node-a", cpu="500m")])
    (node,) = plan_drain(state, ["node-a"], DrainOptions()).nodes
    assert node.evict[0].lands_on == "node-b"


def test_rebalance_refuses_a_move_a_tolerate_everything_replacement_could_make_onto_a_lost_node():
    anywhere = [{"operator": "Exists"}]  # it tolerates the cordon too: only the refusal keeps it off
    state = state_of([make_node("node-a"), make_node("node-b"), lost_node(taints=False, cpu="64")],
                     [make_pod(f"web-{i}", node="node-a", cpu="1", labels={"app": "web"}, owner="ReplicaSet/web",
                               tolerations=anywhere) for i in range(3)])
    plan = plan_rebalance(state, RebalanceOptions(objectives=("utilisation",)))
    assert plan.moves == ()
    assert any("node-x, a lost node" in s.reason for s in plan.skipped)


def test_on_a_not_ready_node_whose_kubelet_reports_evicted_pods_terminate_and_come_back():
    pods = [make_pod("db-0", node="node-x", cpu="1", owner="StatefulSet/db")]
    state = state_of([lost_node(ready="False"), make_node("node-a")], pods)
    r = recovery_timeline(state, "node-x", T0)
    (fate,) = r.pods
    assert fate.evicted_at == T0 + 300  # its not-ready toleration, from the admission
    assert fate.comes_back
    assert fate.lands_on == "node-a"
    assert r.out_of_service is None  # the out-of-service taint is for a lost node only
    assert r.speed_up == ()


def test_a_ready_node_has_no_timeline():
    state = state_of([make_node("node-a")], [make_pod("web-1", node="node-a")])
    r = recovery_timeline(state, "node-a", T0)
    assert (r.pods, r.out_of_service, r.speed_up) == ((), None, ())


def test_explain_says_a_node_is_lost_under_its_verdict():
    state = state_of([lost_node(), make_node("node-a", cpu="1")], [make_pod("big", cpu="2", owner=None)])
    verdicts = {v.node: v for v in explain_pod(state, state.pod("default/big")).verdicts}
    assert verdicts["node-x"].hints == ("node is lost: its kubelet does not report (kresched explain node/node-x)",)
    assert "lost" not in " ".join(verdicts["node-a"].hints)
