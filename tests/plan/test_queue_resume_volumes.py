"""A StatefulSet's replicas, each with a new claim of its own that its class provisions, resume one
search (`sched.resume`): their volume filters' verdicts read the claims' classes, not their names,
and of their labels only those their own terms and constraints read — not the pod-name and
pod-index labels each replica has alone. They plan as with nothing kept (hypothesis, derandomized),
and where a name does matter it is not shared: a claim another pod already uses, a class that
refuses some nodes (whose message names the claim), an existing pod's anti-affinity against one
replica's pod-name label."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan import placement
from kresched.plan.planner import Planner
from kresched.plan.plans import PlanOptions
from kresched.plan.queue import pending_pods_to_plan
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
from tests.plan.test_queue_cache import assert_same_with_caches_off

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=30,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
POD_NAME = "statefulset.kubernetes.io/pod-name"
DRIVER = "ebs.csi.aws.com"


#: An anti-affinity (by host) to pods of an app nothing runs: the replicas' filters read the cluster.
OTHER = "other"


def _replica(sts: str, k: int, claim_class: str | None, *, cpu: str = "1", anti: str | None = HOST,
             claim: str | None = None, priority: int = 100) -> Pod:
    """Replica `k` of StatefulSet `sts`, with its own claim `data-<sts>-<k>` (or `claim`); with
    anti-affinity to its own app by `anti` as topology key (or by host to app `other`)."""
    app, key = (OTHER, HOST) if anti == OTHER else (sts, anti)
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}]}} if anti else None
    volumes = [pvc_volume(claim or f"data-{sts}-{k}", "data")] if claim_class or claim else None
    return make_pod(f"{sts}-{k}", cpu=cpu, priority=priority, owner=f"StatefulSet/{sts}", affinity=affinity,
                    labels={"app": sts, POD_NAME: f"{sts}-{k}", "apps.kubernetes.io/pod-index": str(k)},
                    volumes=volumes, start_time=f"2026-01-01T00:00:{k:02d}Z")


@st.composite
def queues(draw: st.DrawFn) -> tuple[ClusterState, list[Pod]]:
    zones = draw(st.integers(2, 3))
    nodes: list[Any] = []
    pods: list[Pod] = []
    storage: list[Any] = [make_storage_class("gp3", provisioner=DRIVER),
                          make_storage_class("zonal", provisioner=DRIVER, allowed_zones=["z0"])]
    for i in range(130):
        name = f"n{i:03d}"
        nodes.append(make_node(name, cpu="4", memory="16Gi", labels={ZONE: f"z{i % zones}"}))
        limit = draw(st.sampled_from((None, 1, 2, 8)))
        if limit is not None:
            storage.append(make_csinode(name, {DRIVER: limit}))
        for j in range(draw(st.integers(0, 2))):
            claim = f"run-{name}-{j}"
            storage += [make_pvc(claim, storage_class="gp3", volume=f"pv-{claim}"),
                        make_pv(f"pv-{claim}", storage_class="gp3", claim=f"default/{claim}", csi=(DRIVER, claim))]
            pods.append(make_pod(f"run-{name}-{j}", node=name, cpu="1", priority=draw(st.sampled_from((0, 500))),
                                 labels={"app": "run"}, volumes=[pvc_volume(claim)], grace=30))
    queue: list[Pod] = []
    for s in range(draw(st.integers(1, 3))):
        sts = f"db{s}"
        claim_class = draw(st.sampled_from(("gp3", "gp3", "zonal")))
        anti = draw(st.sampled_from((HOST, ZONE, OTHER)))
        cpu = draw(st.sampled_from(("1", "3")))
        for k in range(draw(st.integers(2, 6))):
            shared = draw(st.integers(0, 5)) == 0  # now and then the claim of the replica before it
            claim = f"data-{sts}-{k - 1}" if shared and k else None
            queue.append(_replica(sts, k, claim_class, cpu=cpu, anti=anti, claim=claim,
                                  priority=draw(st.sampled_from((100, 1000)))))
            if claim is None:
                storage.append(make_pvc(f"data-{sts}-{k}", storage_class=claim_class))
    state = make_state(nodes, [*pods, *queue], storage=storage)
    return state, pending_pods_to_plan(state, all_pending=True)


@PROFILE
@given(queues(), st.booleans())
def test_replicas_with_claims_of_their_own_plan_the_same_with_their_searches_resumed(
        queue: tuple[ClusterState, list[Pod]], rotate: bool) -> None:
    assert_same_with_caches_off(*queue, rotate)


def _cluster(count: int, *, limit: int | None = None, zones: int = 1) -> tuple[list[Any], list[Any]]:
    nodes = [make_node(f"n{i:03d}", cpu="4", memory="16Gi", labels={ZONE: f"z{i % zones}"}) for i in range(count)]
    storage: list[Any] = [make_storage_class("gp3", provisioner=DRIVER),
                          make_storage_class("zonal", provisioner=DRIVER, allowed_zones=["z0"])]
    if limit is not None:
        storage += [make_csinode(n.metadata.name, {DRIVER: limit}) for n in nodes]
    return nodes, storage


def _plans(state: ClusterState, memoize: bool) -> list[Any]:
    planner = Planner(state, PlanOptions(), memoize=memoize)
    return [planner.plan(p, commit=True) for p in pending_pods_to_plan(state, all_pending=True)]


def test_a_replica_sharing_the_claim_of_one_placed_fits_beside_it_where_a_replica_of_its_own_claim_did_not():
    # Every node attaches one volume of the driver, and all but n000 and n001 attach one already.
    # db-0 takes one of the two with its claim, db-1 the other with its own; db-2 uses db-0's claim:
    # where db-0 runs it adds no volume, so it fits there — though db-1's search, which db-2's would
    # resume but for the claim db-0 uses, found that node full.
    nodes, storage = _cluster(110, limit=1)
    running = []
    for node in nodes[2:]:
        claim = f"vol-{node.metadata.name}"
        storage += [make_pvc(claim, storage_class="gp3", volume=f"pv-{claim}"),
                    make_pv(f"pv-{claim}", storage_class="gp3", claim=f"default/{claim}", csi=(DRIVER, claim))]
        running.append(make_pod(f"run-{claim}", node=node.metadata.name, cpu="1", priority=1000,
                                volumes=[pvc_volume(claim)]))
    storage += [make_pvc("data-db-0", storage_class="gp3"), make_pvc("data-db-1", storage_class="gp3")]
    replicas = [_replica("db", 0, "gp3", anti=OTHER), _replica("db", 1, "gp3", anti=OTHER),
                _replica("db", 2, None, anti=OTHER, claim="data-db-0")]
    state = make_state(nodes, [*running, *replicas], storage=storage)
    for memoize in (True, False):
        plans = _plans(state, memoize)
        assert [p.outcome for p in plans] == ["fits"] * 3, [p.message for p in plans]
        assert {plans[0].node, plans[1].node} == {"n000", "n001"}
        assert plans[2].node == plans[0].node


def test_a_replica_an_existing_pod_keeps_away_by_its_pod_name_label_is_kept_away_though_it_shares_a_search():
    # Only n000 and n001 have room for a replica; a pod on n000 keeps db-1 away by its pod-name
    # label. db-0 takes n001 (the emptier), and db-1 — whose search resumes db-0's, the two
    # differing in no label their own terms read — finds no node: not n000.
    nodes, storage = _cluster(110)
    guard = make_pod("guard", node="n000", cpu="100m", priority=1000, owner=None, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {POD_NAME: "db-1"}}, "topologyKey": HOST}]}})
    busy = [make_pod(f"busy-{n.metadata.name}", node=n.metadata.name, cpu="2", priority=1000) for n in nodes[2:]]
    storage += [make_pvc(f"data-db-{k}", storage_class="gp3") for k in range(2)]
    replicas = [_replica("db", k, "gp3", cpu="3", anti=OTHER) for k in range(2)]
    state = make_state(nodes, [guard, *busy, *replicas], storage=storage)
    for memoize in (True, False):
        first, second = _plans(state, memoize)
        assert (first.outcome, first.node) == ("fits", "n001")
        assert second.outcome == "infeasible"
        assert "anti-affinity" in second.message


def test_a_replica_whose_class_refuses_a_zone_is_told_of_its_own_claim_on_the_nodes_there():
    # The class provisions only in z0: on z1's nodes VolumeBinding fails each replica naming the
    # replica's own claim, though the second replica's search resumes the first one's.
    nodes, storage = _cluster(120, zones=2)
    storage += [make_pvc(f"data-db-{k}", storage_class="zonal") for k in range(3)]
    replicas = [_replica("db", k, "zonal") for k in range(3)]
    state = make_state(nodes, replicas, storage=storage)
    real = placement.find_nodes_that_fit
    seen: list[tuple[str, set[str]]] = []

    def recording(plugins: Any, pod: Pod, *args: Any, **kwargs: Any) -> Any:
        diag, cycle = real(plugins, pod, *args, **kwargs)
        seen.append((pod.name, {d for s in diag.node_to_status.values() if s.plugin == "VolumeBinding"
                                for d in s.details}))
        return diag, cycle

    with patch.object(placement, "find_nodes_that_fit", recording):
        plans = _plans(state, True)
    assert [p.outcome for p in plans] == ["fits"] * 3
    assert all(p.node is not None and int(p.node[1:]) % 2 == 0 for p in plans)  # z0's nodes
    assert [name for name, _ in seen] == ["db-0", "db-1", "db-2"]
    for name, details in seen:
        claim = f"data-{name}"
        assert details, name
        assert all(d.startswith(f"claim {claim}:") for d in details), (name, details)
