"""Extended resources backed by DRA (DRAExtendedResource): which class backs a name, the special
claim's requests (upstream's TestCreateRequestsAndMappings rows), and pods asking for
`example.com/gpu` placed on nodes whose devices are published in ResourceSlices."""

from __future__ import annotations

import msgspec
import pytest

from kresched.model.dra import DeviceClass, DraState, ResourceClaim
from kresched.model.objects import Pod
from kresched.plan.explain import explain_pod
from kresched.plan.planner import plan_pod
from kresched.plan.queue import plan_pending
from kresched.sched.dra.extended import CLASS_PREFIX, resource_classes, special_claim
from tests.builders import make_device_class, make_node, make_pod, make_slice, make_state

GPU = "example.com/gpu"


def _class(name: str, resource: str | None, created: str = "2026-01-01T00:00:00Z") -> DeviceClass:
    spec = {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}
    if resource is not None:
        spec["extendedResourceName"] = resource
    return msgspec.convert({"metadata": {"name": name, "creationTimestamp": created}, "spec": spec}, DeviceClass)


def _pod(*containers: tuple[str, dict[str, str]]) -> Pod:
    """Containers as (kind, requests): kind "init", "sidecar" or "main", in the pod's order."""
    inits = [{"name": f"c{i}", "resources": {"requests": r}, **({"restartPolicy": "Always"} if k == "sidecar" else {})}
             for i, (k, r) in enumerate(containers) if k != "main"]
    mains = [{"name": f"c{i}", "resources": {"requests": r}} for i, (k, r) in enumerate(containers) if k == "main"]
    return msgspec.convert({"metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"},
                            "spec": {"initContainers": inits, "containers": mains}}, Pod)


DRA = DraState.build([_class("class", GPU), _class("classInit", GPU + "init")])


@pytest.mark.parametrize(("name", "pod", "want"), [
    ("one init container, one regular container",
     _pod(("init", {GPU + "init": "2"}), ("main", {GPU: "1"})),
     [("container-0-request-0", "classInit", 2), ("container-1-request-0", "class", 1)]),
    ("two init containers, one regular container",
     _pod(("init", {GPU + "init": "1"}), ("init", {GPU + "init": "2"}), ("main", {GPU: "1"})),
     [("container-1-request-0", "classInit", 2), ("container-2-request-0", "class", 1)]),
    ("three init containers, one sidecar, one regular container",
     _pod(("init", {GPU + "init": "1"}), ("sidecar", {GPU + "init": "1"}), ("init", {GPU + "init": "2"}),
          ("main", {GPU: "1"})),
     [("container-1-request-0", "classInit", 1), ("container-2-request-0", "classInit", 2),
      ("container-3-request-0", "class", 1)]),
])
def test_the_special_claims_requests_are_upstreams(name: str, pod: Pod, want: list[tuple[str, str, int]]) -> None:
    claim = special_claim(pod, DRA, {GPU: 1, GPU + "init": 2})
    got = [(r.name, r.exactly.device_class_name, r.exactly.count) for r in claim.requests]
    assert got == want, name


def test_a_class_backs_its_extended_resource_name_and_its_implicit_one_the_newer_winning_a_clash() -> None:
    old, new = _class("a-old", GPU, "2026-01-01T00:00:00Z"), _class("z-new", GPU, "2026-02-01T00:00:00Z")
    classes = resource_classes(DraState.build([old, new]))
    assert classes[GPU].name == "z-new"
    assert classes[CLASS_PREFIX + "a-old"].name == "a-old"
    tie = resource_classes(DraState.build([_class("b", GPU), _class("a", GPU)]))
    assert tie[GPU].name == "a"


def _gpu_state(pods, *, plugin_node: bool = False):
    nodes = [make_node("node-a"), make_node("node-b", extra={GPU: "4"} if plugin_node else None)]
    return make_state(nodes, pods, dra=[make_device_class(extended_resource_name=GPU), make_slice("node-a", 2)])


def test_a_pod_asking_for_a_dra_backed_extended_resource_lands_where_the_devices_are() -> None:
    pod = make_pod("trainer", cpu="1", extra_requests={GPU: "2"})
    state = _gpu_state([pod])
    e = explain_pod(state, state.pod(pod.key))
    assert e.feasible == ["node-a"]
    assert {v.node: v.status.reasons for v in e.verdicts}["node-b"] == ("cannot allocate all claims",)


def test_a_node_with_a_device_plugin_for_the_name_is_checked_by_node_resources_fit_as_before() -> None:
    pod = make_pod("trainer", cpu="1", extra_requests={GPU: "2"})
    state = _gpu_state([pod], plugin_node=True)
    assert sorted(explain_pod(state, state.pod(pod.key)).feasible) == ["node-a", "node-b"]
    big = make_pod("big", cpu="1", extra_requests={GPU: "8"})
    state = _gpu_state([big], plugin_node=True)
    reasons = {v.node: v.status.reasons for v in explain_pod(state, state.pod(big.key)).verdicts}
    assert reasons == {"node-a": ("cannot allocate all claims",), "node-b": (f"Insufficient {GPU}",)}


def test_queued_pods_take_the_backing_devices_one_by_one() -> None:
    first = make_pod("first", priority=10, cpu="1", extra_requests={GPU: "2"})
    second = make_pod("second", priority=5, cpu="1", extra_requests={GPU: "1"})
    state = _gpu_state([first, second])
    plans = plan_pending(state, [state.pod(first.key), state.pod(second.key)])
    assert [(p.pod.name, p.outcome, p.node) for p in plans] == [("first", "fits", "node-a"),
                                                               ("second", "infeasible", None)]
    assert plan_pod(state, state.pod(second.key)).node == "node-a"


def test_a_special_claim_left_by_an_earlier_cycle_is_deleted_before_the_pod_is_placed() -> None:
    """Upstream's Filter refuses every node while the pod's special claim from an earlier cycle
    (whose binding failed) exists, and its PostFilter deletes it; a pod that is not its owner is
    placed as usual."""
    pod = make_pod("trainer", cpu="1", extra_requests={GPU: "1"})
    leftover = msgspec.convert({
        "metadata": {"name": "trainer-extended-resources-x7k2p", "namespace": "default",
                     "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "trainer", "uid": pod.uid,
                                          "controller": True}]},
        "spec": {"devices": {"requests": [{"name": "container-0-request-0",
                                           "exactly": {"deviceClassName": "gpu.example.com"}}]}}}, ResourceClaim)
    state = make_state([make_node("node-a")], [pod], dra=[make_device_class(extended_resource_name=GPU),
                                                          make_slice("node-a", 2), leftover])
    e = explain_pod(state, state.pod(pod.key))
    assert e.scheduler_message == ("0/1 nodes are available: 1 cannot schedule extended resource claim. deletion "
                                   "of ResourceClaim completed, preemption: 0/1 nodes are available: 1 Preemption "
                                   "is not helpful for scheduling.")
    other = make_pod("other", cpu="1", extra_requests={GPU: "1"})
    state = make_state([make_node("node-a")], [other], dra=[make_device_class(extended_resource_name=GPU),
                                                            make_slice("node-a", 2), leftover])
    assert explain_pod(state, state.pod(other.key)).feasible == ["node-a"]
