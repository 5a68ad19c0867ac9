"""The simulated pods: a victim's replacement as its controller creates it, a pod as the scheduler
binds it — with the labels a v1.35+ API server gives them (PodTopologyLabelsAdmission: a bound pod
carries its node's zone and region, overwriting its own) — and the selector that finds a pod's
replacement on the cluster (its controller's, never the pod's own labels)."""

from __future__ import annotations

import msgspec
import pytest

from kresched.model.objects import ReplicaSet, ReplicationController, StatefulSet
from kresched.plan.placement import bound_to, replacement_of
from tests.builders import make_node, make_pod, make_state

ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"


def test_a_replacement_has_its_templates_labels_not_its_old_nodes_zone() -> None:
    pod = make_pod("web-0", "shop", node="a", labels={"app": "web", ZONE: "zone-a", REGION: "eu"})
    assert replacement_of(pod).labels == {"app": "web"}


@pytest.mark.parametrize(("node_labels", "want"), [
    pytest.param({ZONE: "zone-b", REGION: "eu"}, {"app": "web", ZONE: "zone-b", REGION: "eu"},
                 id="bound, it carries its node's zone and region"),
    pytest.param({}, {"app": "web"}, id="a node without topology labels gives none"),
])
def test_a_bound_pod_carries_its_nodes_topology_labels(node_labels, want) -> None:
    pod = replacement_of(make_pod("web-0", "shop", node="a", labels={"app": "web", ZONE: "zone-a"}))
    bound = bound_to(pod, make_node("b", labels=node_labels))
    assert (bound.labels, bound.node_name) == (want, "b")


def test_a_pod_already_carrying_its_nodes_labels_is_bound_without_copying_them() -> None:
    pod = make_pod("web-0", "shop", labels={ZONE: "zone-b"})
    assert bound_to(pod, make_node("b", labels={ZONE: "zone-b"})).metadata is pod.metadata


def _rs(kind: type, name: str, selector: object) -> object:
    api = "v1" if kind is ReplicationController else "apps/v1"
    return msgspec.convert({"kind": kind.__name__, "apiVersion": api, "metadata": {"name": name, "namespace": "shop"},
                            "spec": {"selector": selector}}, kind)


@pytest.mark.parametrize(("owner", "workload", "want"), [
    pytest.param("ReplicaSet/web-7d9", _rs(ReplicaSet, "web-7d9", {
        "matchLabels": {"app": "web", "pod-template-hash": "7d9"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]},
                             {"key": "canary", "operator": "DoesNotExist"}]}),
        "app=web,!canary,pod-template-hash=7d9,tier in (a,b)", id="a ReplicaSet's selector, as the API takes it"),
    pytest.param("StatefulSet/db", _rs(StatefulSet, "db", {"matchLabels": {"app": "db"}}), "app=db",
                 id="a StatefulSet's"),
    pytest.param("ReplicationController/old", _rs(ReplicationController, "old", {"app": "old"}), "app=old",
                 id="a ReplicationController's map"),
    pytest.param("Job/batch", None, "app=web,pod-template-hash=7d9,tier=a",
                 id="no such controller in the state: the template's labels, without zone or pod name"),
])
def test_the_selector_that_finds_a_pods_replacement(owner, workload, want) -> None:
    pod = make_pod("web-0", "shop", node="a", owner=owner,
                   labels={"app": "web", "pod-template-hash": "7d9", "tier": "a", ZONE: "zone-a",
                           "statefulset.kubernetes.io/pod-name": "web-0"})
    state = make_state([make_node("a")], [pod])
    if workload is not None:
        state = type(state).build(state.nodes, state.pods, workloads=[workload])
    assert state.replica_selector(pod) == want
