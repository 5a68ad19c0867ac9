"""Volumes in planning: a victim whose claim ties it to its node or zone is shown as such, and its
replacement lands only where the volume can follow (or stays Pending) — in `plan`, drain's
pre-flight and `explain`; evicting frees attachments and ReadWriteOncePod claims for the pod."""

from __future__ import annotations

from typing import Any

import pytest

from kresched.plan.drain import DrainOptions, plan_drain
from kresched.plan.explain import explain_pod
from kresched.plan.planner import Planner, plan_pod
from kresched.plan.plans import PlanOptions
from kresched.plan.queue import pending_pods_to_plan
from kresched.sched.volume_binding import ERR_REASON_NODE_CONFLICT
from kresched.sched.volume_restrictions import ERR_REASON_RWOP_CONFLICT
from tests.builders import (
    make_csinode,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_state,
    make_storage_class,
    pvc_volume,
)
from tests.clirun import drained, run_cli

ZONE = "topology.kubernetes.io/zone"
EBS = "ebs.csi.aws.com"


def _zonal(claim: str, zone: str, **kw: Any) -> list[Any]:
    """A claim bound to an EBS-like PV in `zone`."""
    return [make_pvc(claim, volume=f"pv-{claim}", storage_class="gp3", **kw),
            make_pv(f"pv-{claim}", claim=f"default/{claim}", storage_class="gp3", csi=(EBS, f"vol-{claim}"),
                    node_affinity=[[{"key": ZONE, "operator": "In", "values": [zone]}]])]


def _nodes(**zones: str) -> list[Any]:
    return [make_node(name, cpu="2", labels={ZONE: zone}) for name, zone in zones.items()]


def test_a_victims_replacement_stays_in_its_volumes_zone() -> None:
    """Without its volume the database pod would move to node-c (the emptier); its disk is in
    zone-a, so it can only go to node-b, and the plan says why."""
    db = make_pod("db-0", node="node-a", cpu="1", owner="StatefulSet/db", volumes=[pvc_volume("data-db-0")])
    critical = make_pod("critical", cpu="2", priority=1000)
    others = [make_pod("filler", node="node-b", cpu="600m", priority=2000),
              make_pod("blocker", node="node-c", cpu="500m", priority=2000)]
    state = make_state(_nodes(**{"node-a": "zone-a", "node-b": "zone-a", "node-c": "zone-b"}),
                       [db, *others, critical], storage=[make_storage_class("gp3"), *_zonal("data-db-0", "zone-a")])
    plan = plan_pod(state, critical)
    assert (plan.outcome, plan.node) == ("evict", "node-a")
    [victim] = plan.victims
    assert victim.lands_on == "node-b"  # without the volume: node-c
    assert "held by volume: its volume pv-data-db-0 (claim data-db-0) is in zone zone-a" in victim.flags


def test_a_victim_whose_volume_cannot_follow_stays_pending() -> None:
    db = make_pod("db-0", node="node-a", cpu="1", owner="StatefulSet/db", volumes=[pvc_volume("data-db-0")])
    critical = make_pod("critical", cpu="2", priority=1000)
    blocker = make_pod("blocker", node="node-c", cpu="500m", priority=2000)
    state = make_state(_nodes(**{"node-a": "zone-a", "node-c": "zone-b"}), [db, blocker, critical],
                       storage=[make_storage_class("gp3"), *_zonal("data-db-0", "zone-a")])
    [victim] = plan_pod(state, critical).victims
    assert victim.lands_on is None
    assert victim.pending_reason == (f"0/2 nodes are available: 1 Insufficient cpu, 1 {ERR_REASON_NODE_CONFLICT}.")


def test_a_local_volume_pins_the_replacement_to_its_node() -> None:
    db = make_pod("db-0", node="node-a", cpu="1", owner="StatefulSet/db", volumes=[pvc_volume("data-db-0")])
    storage = [make_storage_class("local", provisioner="kubernetes.io/no-provisioner"),
               make_pvc("data-db-0", volume="pv-local", storage_class="local"),
               make_pv("pv-local", claim="default/data-db-0", storage_class="local", hosts=["node-a"])]
    state = make_state(_nodes(**{"node-a": "zone-a", "node-b": "zone-a"}), [db], storage=storage)
    drain = plan_drain(state, ["node-a"], DrainOptions())
    [d] = drain.nodes[0].evict
    assert d.lands_on is None
    assert d.held_by == "its volume pv-local (claim data-db-0) is local to node-a"
    assert d.pending_reason == ("0/2 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, "
                                "1 node(s) were unschedulable.")


def test_evicting_the_holder_of_a_read_write_once_pod_claim_lets_the_pod_run() -> None:
    """VolumeRestrictions' conflict is Unschedulable: preemption can evict the pod using the claim
    (upstream counts it through the PreFilter extensions)."""
    claim = make_pvc("shared", volume="pv-shared", access_modes=("ReadWriteOncePod",))
    pv = make_pv("pv-shared", claim="default/shared", access_modes=("ReadWriteOncePod",))
    holder = make_pod("holder", node="node-a", priority=0, volumes=[pvc_volume("shared")])
    wants = make_pod("wants", priority=1000, volumes=[pvc_volume("shared")])
    state = make_state([make_node("node-a"), make_node("node-b")], [holder, wants], storage=[claim, pv])
    expl = explain_pod(state, wants)
    assert expl.message == f"0/2 nodes are available: 2 {ERR_REASON_RWOP_CONFLICT}."
    assert expl.preemption_message is None  # the scheduler's own preemption would evict the holder
    plan = plan_pod(state, wants)
    assert (plan.outcome, plan.node, [v.pod.name for v in plan.victims]) == ("evict", "node-a", ["holder"])


def test_a_read_write_once_pod_claim_the_queue_gave_to_one_pod_is_in_use_for_the_next() -> None:
    """Two pending pods of one priority use one ReadWriteOncePod claim: the first planned runs with
    it, and the second finds it in use on every node (VolumeRestrictions reads the pods the queue
    placed, not only the cluster's)."""
    claim = make_pvc("shared", volume="pv-shared", access_modes=("ReadWriteOncePod",))
    pv = make_pv("pv-shared", claim="default/shared", access_modes=("ReadWriteOncePod",))
    pods = [make_pod(f"wants-{k}", priority=1000, volumes=[pvc_volume("shared")],
                     start_time=f"2026-01-01T00:00:0{k}Z") for k in range(2)]
    state = make_state([make_node("node-a"), make_node("node-b")], pods, storage=[claim, pv])
    planner = Planner(state, PlanOptions())
    first, second = (planner.plan(p, commit=True) for p in pending_pods_to_plan(state, all_pending=True))
    assert (first.pod.name, first.outcome) == ("wants-0", "fits")
    assert second.outcome == "infeasible"
    assert f"2 {ERR_REASON_RWOP_CONFLICT}" in second.message


def test_evicting_a_pod_frees_its_attachments() -> None:
    """At the CSI attach limit: evicting a pod with a volume on the node makes room for another."""
    storage = [make_storage_class("gp3"), *_zonal("a", "zone-a"), *_zonal("b", "zone-a"),
               make_csinode("node-a", {EBS: 1})]
    low = make_pod("low", node="node-a", priority=0, volumes=[pvc_volume("a")])
    high = make_pod("high", priority=1000, volumes=[pvc_volume("b")])
    state = make_state(_nodes(**{"node-a": "zone-a"}), [low, high], storage=storage)
    plan = plan_pod(state, high)
    assert (plan.outcome, plan.node, [v.pod.name for v in plan.victims]) == ("evict", "node-a", ["low"])


@pytest.mark.parametrize(("storage", "want"), [
    pytest.param(None, "uses PersistentVolumeClaims (data) but the snapshot has no storage objects: the volume "
                 "filters", id="a snapshot without storage kinds says the volume filters were not run"),
    pytest.param([make_storage_class("gp3"), make_pvc("other")], "PersistentVolumeClaim(s) data not in the snapshot",
                 id="a claim the snapshot lacks is named"),
])
def test_explain_says_what_the_snapshot_cannot_tell(storage: list[Any] | None, want: str) -> None:
    pod = make_pod("p", volumes=[pvc_volume("data")])
    state = make_state([make_node("node-a")], [pod], storage=storage, as_in_a_file=True)
    notes = explain_pod(state, pod).notes
    assert any(n.startswith(want) for n in notes), notes


def test_a_snapshot_with_only_the_kubelets_csinodes_lacks_the_claim_as_the_cluster_does() -> None:
    """`kubectl get ...,pv,pvc,storageclasses,csinodes` on a cluster without claims writes only the
    CSINodes (every node has one; an empty list leaves no trace): the snapshot held the storage
    kinds, so a claim it lacks is missing as the scheduler sees it, not an unknown."""
    pod = make_pod("p", volumes=[pvc_volume("data")])
    state = make_state([make_node("node-a")], [pod], storage=[make_csinode("node-a", {})], as_in_a_file=True)
    expl = explain_pod(state, pod)
    assert not expl.schedulable
    assert expl.message == '0/1 nodes are available: persistentvolumeclaim "data" not found.'


def test_without_storage_kinds_a_pod_with_claims_is_placed_as_before() -> None:
    pod = make_pod("p", volumes=[pvc_volume("data")])
    state = make_state([make_node("node-a")], [pod])
    assert explain_pod(state, pod).schedulable


def test_the_demo_drain_says_the_nats_replica_would_be_stranded(monkeypatch: pytest.MonkeyPatch) -> None:
    r = run_cli(monkeypatch, "drain", "worker-b3", "--snapshot", "demo", "--ignore-daemonsets", "--dry-run",
                width=400)
    assert r.exit_code == 3  # pods would stay Pending: nothing is done without --allow-pending
    lines = r.stdout.splitlines()
    row = next(i for i, ln in enumerate(lines) if ln.startswith("data/nats-1 "))
    assert lines[row].split()[-1] == "Pending"  # LANDS ON
    # What holds it and why it would stay Pending: under its row, each said once.
    details = lines[row + 1:row + 3]
    assert all(d.startswith("    ! ") for d in details)
    line = " ".join(details)
    assert "held by volume: its volume" in line
    assert "(claim data-nats-1) is in zone eu-west-1b" in line
    # 3: worker-a2 (tainted by the demo's leftover reservation) fails on its taint first.
    assert f"3 {ERR_REASON_NODE_CONFLICT}" in line
    assert "1 node(s) didn't match pod anti-affinity rules" in line
    out = run_cli(monkeypatch, "drain", "worker-b3", "--snapshot", "demo", "--ignore-daemonsets", "--dry-run",
                  "-o", "json")
    nats = next(e for e in drained(out.stdout)["evict"] if e["pod"] == "data/nats-1")
    assert nats["landsOn"] is None


def test_a_replica_with_a_generic_ephemeral_volume_gets_a_new_claim_wherever_it_lands() -> None:
    """Its claim goes with the evicted pod (`<pod>-<volume>`, owned by it); the replacement's new
    claim does not exist yet: it is not what keeps the replacement Pending."""
    web = make_pod("web-1", node="node-a", cpu="1", uid="uid-web-1", volumes=[{"name": "scratch", "ephemeral": {}}])
    claim = make_pvc("web-1-scratch", volume="pv-scratch", storage_class="gp3", owner_uid="uid-web-1")
    pv = make_pv("pv-scratch", claim="default/web-1-scratch", storage_class="gp3",
                 node_affinity=[[{"key": ZONE, "operator": "In", "values": ["zone-a"]}]])
    state = make_state(_nodes(**{"node-a": "zone-a", "node-b": "zone-b"}), [web],
                       storage=[make_storage_class("gp3"), claim, pv])
    [d] = plan_drain(state, ["node-a"], DrainOptions()).nodes[0].evict
    assert (d.lands_on, d.held_by) == ("node-b", None)
