"""VolumeBinding: bound claims' PV node affinity, unbound Immediate claims, WaitForFirstConsumer
claims matched against available PVs or left to a provisioner.

Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/volumebinding/
volume_binding_test.go (TestVolumeBinding: PreFilter result and Filter statuses) and binder_test.go
(TestFindPodVolumesWithoutProvisioning, TestFindPodVolumesWithProvisioning,
TestFindPodVolumesWithCSIMigration's node-affinity cases), with this file's own fixtures.
"""

from __future__ import annotations

from typing import Any

import pytest

from kresched.model.objects import Pod
from kresched.plan.explain import explain_pod
from kresched.sched.framework import Code, CycleState, Snapshot
from kresched.sched.runner import default_plugins, find_nodes_that_fit
from kresched.sched.volume_binding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    UNBOUND_IMMEDIATE,
    VolumeBinding,
)
from tests.builders import make_node, make_pod, make_pv, make_pvc, make_state, make_storage_class, pvc_volume
from tests.sched.volume_cases import SKIP, Outcome, run_plugin, unresolvable

ZONE = "topology.kubernetes.io/zone"
WAIT = "wait-sc"
IMMEDIATE = "immediate-sc"
LOCAL = "local-sc"
TOPO = "topo-sc"


def _zone_affinity(*zones: str) -> list[list[dict[str, Any]]]:
    return [[{"key": ZONE, "operator": "In", "values": list(zones)}]]


STORAGE: list[Any] = [
    make_storage_class(WAIT),
    make_storage_class(IMMEDIATE, wait=False),
    make_storage_class(LOCAL, provisioner="kubernetes.io/no-provisioner"),
    make_storage_class(TOPO, allowed_zones=["zone-a"]),
    # bound claims
    make_pv("pv-a", claim="default/pvc-a", node_affinity=_zone_affinity("zone-a")),
    make_pvc("pvc-a", volume="pv-a"),
    make_pv("pv-b", claim="default/pvc-b", node_affinity=_zone_affinity("zone-b")),
    make_pvc("pvc-b", volume="pv-b"),
    make_pv("pv-local-1", claim="default/pvc-local-1", hosts=["node-1"], storage_class=LOCAL),
    make_pvc("pvc-local-1", volume="pv-local-1", storage_class=LOCAL),
    make_pv("pv-local-2", claim="default/pvc-local-2", hosts=["node-2"], storage_class=LOCAL),
    make_pvc("pvc-local-2", volume="pv-local-2", storage_class=LOCAL),
    make_pvc("pvc-no-pv", volume="pv-gone"),
    make_pvc("pvc-lost", volume="pv-lost", phase="Lost", bound=False),
    make_pvc("pvc-deleting", volume="pv-a", deleting=True),
    # unbound claims
    make_pvc("pvc-immediate", storage_class=IMMEDIATE),
    make_pvc("pvc-no-class"),
    make_pvc("pvc-missing-class", storage_class="no-such-class"),
    make_pvc("pvc-prebound", storage_class=WAIT, volume="pv-x", bound=False),
    make_pvc("pvc-wait-local", storage_class=LOCAL, request="5Gi"),
    make_pvc("pvc-wait", storage_class=WAIT, request="5Gi"),
    make_pvc("pvc-wait-topo", storage_class=TOPO),
    make_pvc("pvc-selected-node-2", storage_class=WAIT, annotations={"volume.kubernetes.io/selected-node": "node-2"}),
    make_pvc("pvc-wait-rwx", storage_class=LOCAL, access_modes=("ReadWriteMany",)),
    make_pvc("pvc-wait-selector", storage_class=LOCAL, selector={"tier": "gold"}),
    make_pvc("pvc-wait-block", storage_class=LOCAL, volume_mode="Block"),
    # a PV pre-bound (claimRef) to an unbound WaitForFirstConsumer claim, on node-2
    make_pvc("pvc-wants-pre", storage_class=LOCAL),
    make_pv("pv-pre", storage_class=LOCAL, hosts=["node-2"], claim="default/pvc-wants-pre", phase="Available"),
    # available PVs for the local class: one on node-1 (10Gi) and one on node-2 (2Gi)
    make_pv("pv-avail-node-1", storage_class=LOCAL, hosts=["node-1"], capacity="10Gi", labels={"tier": "silver"}),
    make_pv("pv-avail-node-2", storage_class=LOCAL, hosts=["node-2"], capacity="2Gi", labels={"tier": "gold"}),
]


def _pod(*claims: str) -> Pod:
    return make_pod("pod-a", volumes=[pvc_volume(c) for c in claims] or None)


NODE_1 = make_node("node-1", labels={ZONE: "zone-a"})
NODE_2 = make_node("node-2", labels={ZONE: "zone-b"})


@pytest.mark.parametrize(("pod", "node", "want_pre", "want_filter"), [
    pytest.param(make_pod("pod-a"), NODE_1, SKIP, None, id="pod has not pvcs"),
    pytest.param(make_pod("pod-a", volumes=[{"name": "c", "configMap": {"name": "x"}}]), NODE_1, SKIP, None,
                 id="a pod with other volumes only skips"),
    pytest.param(_pod("pvc-a"), NODE_1, None, None, id="all bound"),
    pytest.param(_pod("pvc-b"), NODE_1, None, unresolvable(ERR_REASON_NODE_CONFLICT),
                 id="bound claim whose PV node affinity the node does not match"),
    pytest.param(_pod("pvc-missing"), NODE_1, unresolvable('persistentvolumeclaim "pvc-missing" not found'), None,
                 id="PVC does not exist"),
    pytest.param(_pod("pvc-a", "pvc-missing"), NODE_1,
                 unresolvable('persistentvolumeclaim "pvc-missing" not found'), None,
                 id="Part of PVCs do not exist"),
    pytest.param(_pod("pvc-immediate"), NODE_1, unresolvable(UNBOUND_IMMEDIATE), None,
                 id="immediate claims not bound"),
    pytest.param(_pod("pvc-no-class"), NODE_1, unresolvable(UNBOUND_IMMEDIATE), None,
                 id="an unbound claim without a class is immediate"),
    pytest.param(_pod("pvc-missing-class"), NODE_1, unresolvable(UNBOUND_IMMEDIATE), None,
                 id="an unbound claim of a missing class is immediate"),
    pytest.param(_pod("pvc-prebound"), NODE_1, unresolvable(UNBOUND_IMMEDIATE), None,
                 id="a pre-bound claim not yet bound is treated as immediate"),
    pytest.param(_pod("pvc-no-pv"), NODE_1, None, unresolvable(ERR_REASON_PV_NOT_EXIST), id="pv not found"),
    pytest.param(_pod("pvc-lost"), NODE_1,
                 unresolvable('persistentvolumeclaim "pvc-lost" bound to non-existent persistentvolume "pv-lost"'),
                 None, id="pv not found claim lost"),
    pytest.param(_pod("pvc-deleting"), NODE_1, unresolvable('persistentvolumeclaim "pvc-deleting" is being deleted'),
                 None, id="a claim being deleted"),
    pytest.param(_pod("pvc-wait"), NODE_1, None, None, id="a WaitForFirstConsumer claim its class can provision"),
    pytest.param(_pod("pvc-wait-local"), NODE_1, None, None,
                 id="a WaitForFirstConsumer claim matches an available local PV on this node"),
    pytest.param(_pod("pvc-wait-local"), NODE_2, None, unresolvable(ERR_REASON_BIND_CONFLICT),
                 id="unbound claims no matches: the PV here is too small and the class cannot provision"),
    pytest.param(_pod("pvc-b", "pvc-wait"), NODE_2, None, None,
                 id="a bound claim and an unbound one, both satisfied"),
    pytest.param(_pod("pvc-b", "pvc-wait-local"), NODE_1, None,
                 unresolvable(ERR_REASON_NODE_CONFLICT),
                 id="bound and unbound: the bound one's conflict is reported"),
    pytest.param(_pod("pvc-a", "pvc-wait-local"), NODE_2, None,
                 unresolvable(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT),
                 id="bound and unbound unsatisfied: both reasons"),
    pytest.param(_pod("pvc-wait-topo"), NODE_1, None, None, id="a provisioner whose allowedTopologies match"),
    pytest.param(_pod("pvc-wait-topo"), NODE_2, None, unresolvable(ERR_REASON_BIND_CONFLICT),
                 id="a provisioner whose allowedTopologies exclude the node"),
    pytest.param(_pod("pvc-selected-node-2"), NODE_1, None, unresolvable(ERR_REASON_BIND_CONFLICT),
                 id="a claim being provisioned for another node"),
    pytest.param(_pod("pvc-selected-node-2"), NODE_2, None, None, id="a claim being provisioned for this node"),
    pytest.param(_pod("pvc-wait-rwx"), NODE_1, None, unresolvable(ERR_REASON_BIND_CONFLICT),
                 id="an available PV without the claim's access mode does not match"),
    pytest.param(_pod("pvc-wait-selector"), NODE_1, None, unresolvable(ERR_REASON_BIND_CONFLICT),
                 id="an available PV the claim's selector does not select does not match"),
    pytest.param(_pod("pvc-wait-selector"), NODE_2, None, None,
                 id="the claim's selector picks the PV on the other node"),
    pytest.param(_pod("pvc-wait-block"), NODE_1, None, unresolvable(ERR_REASON_BIND_CONFLICT),
                 id="an available PV of another volume mode does not match"),
    pytest.param(_pod("pvc-wants-pre"), NODE_2, None, None, id="the PV pre-bound to the claim is chosen"),
    pytest.param(_pod("pvc-wants-pre"), NODE_1, None, unresolvable(ERR_REASON_BIND_CONFLICT),
                 id="a PV pre-bound to the claim on another node rules out every other PV"),
])
def test_volume_binding(pod: Pod, node: Any, want_pre: Outcome, want_filter: Outcome) -> None:
    other = [n for n in (NODE_1, NODE_2) if n.name != node.name]
    assert run_plugin(VolumeBinding(), pod, node, STORAGE, other_nodes=other) == (want_pre, want_filter)


@pytest.mark.parametrize("claims", [("pvc-a",), ("pvc-local-1",), ("pvc-local-1", "pvc-local-2"), ("pvc-no-pv",)])
def test_prefilter_does_not_narrow_the_nodes(claims: tuple[str, ...]) -> None:
    """v1.36.2 reports a local PV on another node at Filter, on every node (the rig's p-local)."""
    state = make_state([NODE_1, NODE_2], [], storage=STORAGE)
    result = VolumeBinding().pre_filter(CycleState(), _pod(*claims), Snapshot.from_state(state))
    assert result.status.is_success
    assert result.node_names is None


def _message(pod: Pod, nodes: list[Any]) -> str | None:
    pv_b = make_pv("pv-b", claim="default/pvc-b", node_affinity=_zone_affinity("zone-b"), labels={ZONE: "zone-b"})
    storage = [o for o in STORAGE if getattr(o, "name", "") != "pv-b"] + [pv_b]
    return explain_pod(make_state(nodes, [pod], storage=storage), pod).scheduler_message


def _nodes(cordoned: str) -> list[Any]:
    return [make_node(f"node-{i}", labels={ZONE: f"zone-{z}"}, unschedulable=f"node-{i}" == cordoned)
            for i, z in ((1, "a"), (2, "b"), (3, "c"))]


NOT_HELPFUL = (" no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for"
               " scheduling.")


@pytest.mark.parametrize(("pod", "cordoned", "want"), [
    pytest.param(_pod("pvc-local-1"), "node-1",
                 "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match PersistentVolume's"
                 " node affinity." + NOT_HELPFUL,
                 id="a local PV on a cordoned node"),
    pytest.param(_pod("pvc-local-1", "pvc-local-2"), "",
                 "0/3 nodes are available: 3 node(s) didn't match PersistentVolume's node affinity." + NOT_HELPFUL,
                 id="local PVs on two nodes: no node can have both"),
    pytest.param(_pod("pvc-b"), "node-2",
                 "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match PersistentVolume's"
                 " node affinity." + NOT_HELPFUL,
                 id="a zonal disk whose only node in the zone is cordoned"),
    pytest.param(_pod("pvc-immediate"), "",
                 "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found",
                 id="an unbound immediate claim: PostFilter stops before preemption"),
])
def test_messages(pod: Pod, cordoned: str, want: str) -> None:
    """The whole PodScheduled message, as the scheduler writes it for the same state."""
    assert _message(pod, _nodes(cordoned)) == want


def test_a_volume_binding_failure_is_not_helped_by_preemption() -> None:
    low = make_pod("low", node="node-2", priority=0)
    high = make_pod("high", priority=1000, volumes=[pvc_volume("pvc-a")])
    state = make_state([NODE_2], [low], storage=STORAGE)
    snap = Snapshot.from_state(state)
    diag, _ = find_nodes_that_fit(default_plugins(), high, snap)
    assert diag.node_to_status["node-2"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_the_volumes_a_claim_may_bind_are_its_class_but_those_bound_to_other_claims_in_name_order() -> None:
    # FindMatchingVolume skips a volume whose claimRef names another claim; one pre-bound to this
    # claim (by name; a stale UID is left to the match itself) stays a candidate, in its place.
    claim = make_pvc("data", storage_class="fast")
    pvs = [make_pv("pv-a", storage_class="fast", claim="default/other"),
           make_pv("pv-b", storage_class="fast"),
           make_pv("pv-c", storage_class="fast", claim="default/data", claim_uid="stale"),
           make_pv("pv-d", storage_class="fast"),
           make_pv("pv-e", storage_class="slow"),
           make_pv("pv-f", storage_class="fast", claim="other/data")]
    storage = make_state(storage=[*reversed(pvs), claim]).storage
    assert [pv.name for pv in storage.bindable(claim)] == ["pv-b", "pv-c", "pv-d"]
    assert [pv.name for pv in storage.bindable(make_pvc("new", storage_class="fast"))] == ["pv-b", "pv-d"]
