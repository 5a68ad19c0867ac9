"""What-if planning (`kresched.plan.whatif`): the pods the controllers would create, planned one
after another as the scheduler would place them.

The DaemonSet rows are upstream's `TestNodeShouldRunDaemonPod` (pkg/controller/daemon/
daemon_controller_test.go: a node `test-node` labelled `name=simple-daemon, type=production`);
the rest are what an operator planning a rollout must be able to rely on.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import msgspec
import pytest

from kresched.model.cluster import ClusterState
from kresched.model.storage import StorageClass
from kresched.plan.plans import PlanOptions
from kresched.plan.whatif import WhatIfOptions, plan_workloads, replicas_of
from kresched.sources.manifests import Document, Manifests, workloads_of
from tests.builders import make_node, make_pdb, make_pod, make_priority_class, make_state, make_storage_class

WEB = {"app": "web"}


def deployment(name: str = "web", replicas: int | None = 3, *, cpu: str = "1", labels: dict[str, str] | None = None,
               spec: dict[str, Any] | None = None, namespace: str | None = "shop", kind: str = "Deployment",
               api_version: str = "apps/v1", extra: dict[str, Any] | None = None) -> dict[str, Any]:
    labels = labels or {"app": name}
    pod_spec = {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
                **(spec or {})}
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    body: dict[str, Any] = {"selector": {"matchLabels": labels},
                            "template": {"metadata": {"labels": labels}, "spec": pod_spec}, **(extra or {})}
    if replicas is not None:
        body["replicas"] = replicas
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": body}


def manifests(state: ClusterState, *docs: dict[str, Any], namespace: str = "default", replicas: int | None = None,
              enforce: bool = False) -> Manifests:
    return workloads_of([Document("test.yaml", copy.deepcopy(d), "test.yaml") for d in docs], state, namespace,
                        enforce, replicas)


def plan(state: ClusterState, *docs: dict[str, Any], options: WhatIfOptions | None = None, **kw: Any):
    return plan_workloads(state, manifests(state, *docs, **kw), options or WhatIfOptions())


def three_nodes(cpu: str = "4", zones: bool = True) -> list:
    zone = ["zone-a", "zone-a", "zone-b"]
    return [make_node(n, cpu=cpu, labels={"topology.kubernetes.io/zone": z} if zones else {})
            for n, z in zip(("node-a1", "node-a2", "node-b1"), zone, strict=True)]


# -- the pods the controllers create ---------------------------------------------------------------------

def test_a_deployments_pods_are_named_and_owned_by_its_replicaset_with_the_pod_template_hash():
    state = make_state(three_nodes())
    [spec] = manifests(state, deployment()).workloads
    pods = replicas_of(spec, state)
    rs = spec.template.metadata.name
    assert rs.startswith("web-")
    assert rs.removeprefix("web-") == spec.template.labels["pod-template-hash"]
    assert len({p.name for p in pods}) == 3
    for p in pods:
        assert p.name.startswith(f"{rs}-")
        assert len(p.name) == len(rs) + 6
        assert (p.controller.kind, p.controller.name) == ("ReplicaSet", rs)
        assert p.labels == {"app": "web", "pod-template-hash": spec.template.labels["pod-template-hash"]}
    assert spec.selector.match_labels == {"app": "web", "pod-template-hash": spec.template.labels["pod-template-hash"]}


def test_the_same_manifest_gives_the_same_names_every_time():
    state = make_state(three_nodes())
    a = [p.name for p in replicas_of(manifests(state, deployment()).workloads[0], state)]
    b = [p.name for p in replicas_of(manifests(state, deployment()).workloads[0], state)]
    assert a == b


def test_a_statefulsets_pods_have_ordinals_from_ordinals_start_and_their_own_labels():
    state = make_state(three_nodes())
    sts = deployment("db", 2, kind="StatefulSet", extra={"ordinals": {"start": 3}, "serviceName": "db"})
    [spec] = manifests(state, sts).workloads
    pods = replicas_of(spec, state)
    assert [p.name for p in pods] == ["db-3", "db-4"]
    assert pods[0].labels["statefulset.kubernetes.io/pod-name"] == "db-3"
    assert pods[1].labels["apps.kubernetes.io/pod-index"] == "4"
    assert pods[0].controller.kind == "StatefulSet"


@pytest.mark.parametrize(("job", "active"), [
    ({}, 1),
    ({"parallelism": 3}, 3),
    ({"parallelism": 5, "completions": 2}, 2),
    ({"completions": 4}, 1),
    ({"parallelism": 0}, 0),
])
def test_a_job_runs_its_parallelism_but_no_more_than_its_completions(job, active):
    state = make_state(three_nodes())
    doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"},
           "spec": {**job, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}}}}
    [spec] = manifests(state, doc).workloads
    pods = replicas_of(spec, state)
    assert len(pods) == active
    for p in pods:
        assert p.labels["job-name"] == "train"
        assert p.labels["batch.kubernetes.io/job-name"] == "train"
        assert p.labels["batch.kubernetes.io/controller-uid"] == spec.selector.match_labels[
            "batch.kubernetes.io/controller-uid"]
        assert p.name.startswith("train-")
        assert p.controller.kind == "Job"


def test_an_indexed_jobs_pods_carry_their_completion_index():
    state = make_state(three_nodes())
    doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "shard", "namespace": "ml"},
           "spec": {"parallelism": 2, "completions": 2, "completionMode": "Indexed",
                    "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}}}}
    pods = replicas_of(manifests(state, doc).workloads[0], state)
    assert [p.labels["batch.kubernetes.io/job-completion-index"] for p in pods] == ["0", "1"]
    assert [p.name[:len("shard-0-")] for p in pods] == ["shard-0-", "shard-1-"]


def test_a_cronjob_runs_one_job_named_after_its_schedule():
    state = make_state(three_nodes())
    doc = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "report", "namespace": "ops"},
           "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"parallelism": 2, "template": {
               "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c"}]}}}}}}
    [spec] = manifests(state, doc).workloads
    pods = replicas_of(spec, state)
    assert len(pods) == 2
    job = pods[0].controller.name
    assert pods[0].controller.kind == "Job"
    assert job.startswith("report-")
    assert job[len("report-"):].isdigit()


SIMPLE = {"name": "simple-daemon", "type": "production"}


def _daemonset(pod_spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"name": "simple-daemon"}},
                     "template": {"metadata": {"labels": {"name": "simple-daemon"}},
                                  "spec": {"containers": [{"name": "c"}], **pod_spec}}}}


def _resources(memory: str, cpu: str) -> dict[str, Any]:
    return {"containers": [{"name": "c", "resources": {"requests": {"memory": memory, "cpu": cpu}}}]}


@pytest.mark.parametrize(("predicate", "pod_spec", "unschedulable", "should_run"), [
    ("ShouldRunDaemonPod", _resources("50M", "0.5"), False, True),
    ("InsufficientResourceError", _resources("200M", "0.5"), False, True),
    ("ErrPodNotMatchHostName", {"nodeName": "other-node", **_resources("50M", "0.5")}, False, False),
    ("ErrPodNotFitsHostPorts", {"containers": [{"name": "c", "ports": [{"containerPort": 666, "hostPort": 666}]}]},
     False, True),
    ("ErrNodeSelectorNotMatch", {"nodeSelector": {"name": "simple-daemon", "type": "test"}}, False, False),
    ("ShouldRunDaemonPod (nodeSelector)", {"nodeSelector": SIMPLE}, False, True),
    ("ErrPodAffinityNotMatch", {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "type", "operator": "In", "values": ["test"]}]}]}}}},
     False, False),
    ("ShouldRunDaemonPod (node affinity)", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "type", "operator": "In", "values": ["production"]}]}]}}}}, False, True),
    ("ShouldRunDaemonPodOnUnschedulableNode", _resources("50M", "0.5"), True, True),
])
def test_a_daemonset_runs_a_pod_on_each_node_it_should_run_on(predicate, pod_spec, unschedulable, should_run):
    node = make_node("test-node", cpu="1", memory="100M", labels=SIMPLE, unschedulable=unschedulable)
    state = make_state([node])
    [spec] = manifests(state, _daemonset(pod_spec)).workloads
    pods = replicas_of(spec, state)
    assert len(pods) == (1 if should_run else 0)


def test_a_daemonset_skips_nodes_whose_taints_it_does_not_tolerate_but_tolerates_the_node_condition_taints():
    nodes = [make_node("n1"), make_node("n2", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
             make_node("n3", taints=[{"key": "node.kubernetes.io/memory-pressure", "effect": "NoSchedule"}]),
             make_node("n4", taints=[{"key": "dedicated", "value": "gpu", "effect": "PreferNoSchedule"}])]
    state = make_state(nodes)
    [spec] = manifests(state, _daemonset({})).workloads
    pods = replicas_of(spec, state)
    bound = [p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms[0]
             .match_fields[0].values for p in pods]
    assert bound == [("n1",), ("n3",), ("n4",)]


# -- planning --------------------------------------------------------------------------------------------

def test_each_replica_sees_the_ones_before_it_placed_so_required_anti_affinity_spreads_them():
    state = make_state(three_nodes())
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": WEB}, "topologyKey": "kubernetes.io/hostname"}]}}}
    result = plan(state, deployment(replicas=4, spec=anti, labels=WEB))
    [w] = result.workloads
    assert w.placed == {"node-a1": 1, "node-a2": 1, "node-b1": 1}
    assert w.pending == 1
    assert "didn't match pod anti-affinity rules" in w.message
    assert w.nearest is not None
    assert w.nearest.message.startswith("0/3 nodes are available")


def test_replicas_fill_the_nodes_and_the_rest_stay_pending_with_the_schedulers_message():
    state = make_state(three_nodes(cpu="2"))
    [w] = plan(state, deployment(replicas=8, cpu="1")).workloads
    assert sum(w.placed.values()) == 6
    assert w.pending == 2
    assert "0/3 nodes are available: 3 Insufficient cpu." in w.message
    assert [p.outcome for p in w.plans] == ["fits"] * 6 + ["infeasible"] * 2


def test_zone_spreading_among_the_replicas_themselves():
    """maxSkew 1 over two zones (two nodes in zone-a, one in zone-b): 2 per zone, then skew."""
    state = make_state(three_nodes())
    spread = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                             "whenUnsatisfiable": "DoNotSchedule",
                                             "labelSelector": {"matchLabels": WEB}}]}
    [w] = plan(state, deployment(replicas=4, cpu="100m", spec=spread, labels=WEB)).workloads
    zone_a = w.placed.get("node-a1", 0) + w.placed.get("node-a2", 0)
    assert (zone_a, w.placed["node-b1"], w.pending) == (2, 2, 0)


def test_a_replica_that_needs_evictions_is_placed_and_its_plan_says_which():
    nodes = three_nodes(cpu="2")
    busy = [make_pod(f"batch-{i}", "batch", node=n.name, cpu="2", priority=0) for i, n in enumerate(nodes)]
    state = make_state(nodes, busy, priority_classes=[make_priority_class("high", 1000)])
    [w] = plan(state, deployment(replicas=2, cpu="1", spec={"priorityClassName": "high"})).workloads
    assert sum(w.placed.values()) == 2
    assert w.pending == 0
    evicting = [p for p in w.plans if p.outcome == "evict"]
    assert len(evicting) == 1
    assert len(evicting[0].victims) == 1
    # The second replica takes the room the first one's eviction freed.
    assert w.plans[1].outcome == "fits"
    assert w.plans[1].node == evicting[0].node


def test_a_replica_whose_plan_a_budget_blocks_is_still_placed_as_the_schedulers_preemption_would():
    nodes = [make_node("node-a", cpu="2")]
    busy = [make_pod("db-0", "data", node="node-a", cpu="2", priority=0, labels={"app": "db"})]
    state = make_state(nodes, busy, [make_pdb("db", "data", selector={"app": "db"}, min_available=1)],
                       priority_classes=[make_priority_class("high", 1000)])
    [w] = plan(state, deployment(replicas=1, cpu="1", spec={"priorityClassName": "high"})).workloads
    assert w.placed == {"node-a": 1}
    assert w.plans[0].blocked
    assert "--allow-pdb-violation" in w.message


def test_preemption_policy_never_keeps_the_replicas_pending_with_the_schedulers_words():
    nodes = [make_node("node-a", cpu="1")]
    state = make_state(nodes, [make_pod("x", node="node-a", cpu="1", priority=0)],
                       priority_classes=[make_priority_class("polite", 1000, preemption_policy="Never")])
    [w] = plan(state, deployment(replicas=1, spec={"priorityClassName": "polite"})).workloads
    assert w.pending == 1
    assert w.message.endswith("preemption: not eligible due to preemptionPolicy=Never.")


def test_ordered_ready_statefulset_creates_no_ordinal_after_one_that_stays_pending():
    state = make_state([make_node("node-a", cpu="2")])
    sts = deployment("db", 4, cpu="1", kind="StatefulSet", extra={"serviceName": "db"})
    [w] = plan(state, sts).workloads
    assert [p.pod.name for p in w.plans] == ["db-0", "db-1", "db-2"]
    assert (w.pending, w.not_created) == (2, 1)
    assert "never created" in w.message
    parallel = deployment("db", 4, cpu="1", kind="StatefulSet", extra={"podManagementPolicy": "Parallel"})
    [w] = plan(state, parallel).workloads
    assert len(w.plans) == 4
    assert (w.pending, w.not_created) == (2, 0)


def test_workloads_are_queued_by_priority_then_as_the_file_lists_them():
    state = make_state([make_node("node-a", cpu="2")], priority_classes=[make_priority_class("high", 1000)])
    low = deployment("low", 2, cpu="1")
    high = deployment("high", 2, cpu="1", spec={"priorityClassName": "high"})
    result = plan(state, low, high)
    by_name = {w.spec.name: w for w in result.workloads}
    assert by_name["high"].pending == 0
    assert by_name["low"].pending == 2
    assert [w.spec.name for w in result.workloads] == ["low", "high"]  # reported in file order


def test_a_missing_priority_class_means_the_api_server_refuses_every_pod():
    state = make_state(three_nodes())
    [w] = plan(state, deployment(spec={"priorityClassName": "gold"})).workloads
    assert (w.placed, w.pending, w.plans) == ({}, 3, ())
    rs = w.spec.template.metadata.name
    assert w.message == f'the API server refuses its pods: pods "{rs}-" is forbidden: no PriorityClass with name ' \
                        "gold was found"


def test_a_priority_class_from_the_same_manifests_is_used():
    state = make_state(three_nodes())
    gold = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gold"},
            "value": 5000}
    [w] = plan(state, gold, deployment(spec={"priorityClassName": "gold"})).workloads
    assert w.spec.template.priority == 5000
    assert w.pending == 0


def test_a_workload_that_runs_already_is_planned_as_once_rolled_out():
    nodes = [make_node("node-a", cpu="2")]
    old = [make_pod(f"web-old-{i}", "shop", node="node-a", cpu="1", labels={"app": "web", "pod-template-hash": "old"},
                    owner="ReplicaSet/web-old") for i in range(2)]
    state = make_state(nodes, old)
    [w] = plan(state, deployment(replicas=2, cpu="1")).workloads
    assert w.pending == 0  # the old pods' room is theirs
    assert any("exists already (2 pods, 2 running)" in n for n in w.notes)


def test_replicas_override_the_manifest_and_do_not_apply_to_a_daemonset():
    state = make_state(three_nodes())
    [w] = plan(state, deployment(replicas=1), replicas=5).workloads
    assert w.replicas == 5
    with pytest.raises(Exception, match="--replicas does not apply to a DaemonSet"):
        manifests(state, _daemonset({}), replicas=2)


# -- --max --------------------------------------------------------------------------------------------

def test_max_counts_the_replicas_that_fit_without_evictions_and_with_them():
    nodes = [make_node("node-a", cpu="4"), make_node("node-b", cpu="4")]
    low = [make_pod(f"low-{i}", "batch", node=n, cpu="1", priority=0) for i, n in enumerate(("node-a", "node-b"))]
    state = make_state(nodes, low, priority_classes=[make_priority_class("high", 1000)])
    options = WhatIfOptions(PlanOptions(), max=True, max_limit=100)
    [w] = plan(state, deployment(replicas=1, cpu="1", spec={"priorityClassName": "high"}), options=options).workloads
    m = w.max
    assert (m.without_evictions, m.placed_without) == (6, {"node-a": 3, "node-b": 3})
    assert m.stopped_without.startswith("replica 7: 0/2 nodes are available: 2 Insufficient cpu.")
    assert (m.with_evictions, m.evictions) == (8, 2)


def test_max_stops_at_the_limit_and_says_so():
    state = make_state([make_node("node-a", cpu="64", pods=110)])
    options = WhatIfOptions(PlanOptions(), max=True, max_limit=5)
    [w] = plan(state, deployment(replicas=1, cpu="10m"), options=options).workloads
    assert w.max.without_evictions == 5
    assert "limit of 5" in w.max.stopped_without


# -- the manifests ---------------------------------------------------------------------------------------

def test_an_object_without_namespace_goes_to_the_default_one_and_a_different_one_with_explicit_n_is_an_error():
    state = make_state(three_nodes())
    [w] = manifests(state, deployment(namespace=None), namespace="team-a").workloads
    assert w.namespace == "team-a"
    assert w.template.namespace == "team-a"
    with pytest.raises(Exception, match=re.escape("the namespace from the provided object 'shop' does not match the "
                                                  "namespace 'team-a'. You must pass '--namespace=shop'")):
        manifests(state, deployment(), namespace="team-a", enforce=True)


@pytest.mark.parametrize(("doc", "error"), [
    (deployment(api_version="apps/v1beta1"), "no matches for kind 'Deployment' in version 'apps/v1beta1'"),
    (deployment(labels=None, extra={"selector": {"matchLabels": {"app": "other"}}}),
     "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match "
     "template `labels`"),
    ({**deployment(), "spec": {**deployment()["spec"], "selector": None}}, "spec.selector: Required value"),
    ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
      "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
     'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'),
])
def test_what_the_api_server_would_refuse_is_refused_in_its_words(doc, error):
    state = make_state(three_nodes())
    with pytest.raises(Exception, match=re.escape(error)):
        manifests(state, doc)


def test_other_kinds_are_named_and_not_planned():
    state = make_state(three_nodes())
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "shop"}}
    m = manifests(state, cm, deployment())
    assert m.ignored == ["ConfigMap shop/cfg"]
    assert len(m.workloads) == 1


def test_a_replica_only_a_daemonset_pod_stands_in_the_way_of_is_pending_and_said_to_be():
    """kresched never evicts DaemonSet pods; the scheduler's own preemption would: the plan counts the
    replica Pending and says the scheduler would make room."""
    state = make_state([make_node("node-a", cpu="2")],
                       [make_pod("agent-x", "kube-system", node="node-a", cpu="2", priority=0,
                                 owner="DaemonSet/agent")],
                       priority_classes=[make_priority_class("high", 1000)])
    [w] = plan(state, deployment(replicas=1, cpu="1", spec={"priorityClassName": "high"})).workloads
    assert w.pending == 1
    assert any("the scheduler's own preemption would make room" in n for n in w.notes)
    assert w.message.endswith("0/1 nodes are available: 1 Insufficient cpu.")


def _sts_with_claims(storage_class: str | None) -> dict[str, Any]:
    claim: dict[str, Any] = {"metadata": {"name": "data"},
                             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    if storage_class is not None:
        claim["spec"]["storageClassName"] = storage_class
    return deployment("db", 2, cpu="100m", kind="StatefulSet", extra={"volumeClaimTemplates": [claim]})


def test_a_statefulsets_new_claims_are_made_and_bound_where_its_class_can_provision():
    """The controller's claims `data-db-<ordinal>`: a WaitForFirstConsumer class allowed only in zone-b
    binds them there, so the replicas go to zone-b; a claim that exists already (db-0's, bound to a PV
    in zone-a) is reused, and db-0 follows its volume."""
    zonal = make_storage_class("zonal-b", allowed_zones=["zone-b"])
    from tests.builders import make_pv, make_pvc

    pv = make_pv("pv-a", storage_class="zonal-b", claim="shop/data-db-0",
                 node_affinity=[[{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]])
    existing = make_pvc("data-db-0", "shop", storage_class="zonal-b", volume="pv-a")
    state = make_state(three_nodes(), storage=[zonal, pv, existing])
    [w] = plan(state, _sts_with_claims("zonal-b")).workloads
    nodes = {p.pod.name: p.node for p in w.plans}
    assert nodes["db-0"] in ("node-a1", "node-a2")  # its existing claim's volume is in zone-a
    assert nodes["db-1"] == "node-b1"  # a new claim: only zone-b can provision it
    assert w.pending == 0


def test_a_claim_without_a_class_gets_the_default_one_and_an_immediate_class_is_said_to_follow_its_pod():
    default = msgspec.convert({"metadata": {"name": "fast", "annotations": {
        "storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "csi.example.com",
        "volumeBindingMode": "Immediate"}, StorageClass)
    state = make_state(three_nodes(), storage=[default])
    [w] = plan(state, _sts_with_claims(None)).workloads
    assert w.pending == 0
    assert any("volumeBindingMode Immediate" in n and "fast" in n for n in w.notes)
