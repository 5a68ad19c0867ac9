"""The DynamicResources plugin's PreFilter and Filter where no allocation is needed: how a pod's
claims are found (upstream's texts, dynamicresources.go and resourceclaim.go), an allocated claim's
node selector, and the PostFilter note in the scheduler's message."""

from __future__ import annotations

import pytest

from kresched.plan.explain import explain_pod
from kresched.sched.dynamic_resources import NOT_AVAILABLE
from tests.builders import (
    device_request,
    make_claim,
    make_claim_template,
    make_device_class,
    make_node,
    make_pod,
    make_slice,
    make_state,
)

NODES = [make_node("node-a"), make_node("node-b")]
GPU_CLASS = make_device_class()
NOT_HELPFUL = "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."


def explain(pod, dra):
    state = make_state(NODES, [pod], dra=dra)
    return explain_pod(state, state.pod(pod.key))


def test_a_pod_whose_claim_from_a_template_is_not_created_yet_is_not_scheduled() -> None:
    pod = make_pod("trainer", claim_templates={"gpu": "gpu-template"})
    e = explain(pod, [GPU_CLASS, make_claim_template("gpu-template")])
    assert e.scheduler_message == ('0/2 nodes are available: pod "default/trainer": ResourceClaim not created yet. '
                                   f"no new claims to deallocate, {NOT_HELPFUL}")


def test_a_claim_that_does_not_exist_is_named_with_its_namespace() -> None:
    pod = make_pod("trainer", claims={"gpu": "shared-gpu"})
    e = explain(pod, [GPU_CLASS])
    assert e.message == '0/2 nodes are available: could not find ResourceClaim "default/shared-gpu".'


def test_a_claim_being_deleted_rejects_the_pod() -> None:
    pod = make_pod("trainer", claims={"gpu": "shared-gpu"})
    claim = make_claim("shared-gpu")
    claim = type(claim)(metadata=type(claim.metadata)(name="shared-gpu", namespace="default",
                                                       deletion_timestamp="2026-01-01T00:00:00Z"), spec=claim.spec)
    e = explain(pod, [GPU_CLASS, claim])
    assert e.message == '0/2 nodes are available: resourceclaim "shared-gpu" is being deleted.'


def test_a_generated_claim_another_pod_owns_is_refused() -> None:
    other = make_pod("other")
    pod = make_pod("trainer", claim_templates={"gpu": "gpu-template"}, generated={"gpu": "trainer-gpu-x7k2p"})
    claim = make_claim("trainer-gpu-x7k2p", owner_pod=other)
    e = explain(pod, [GPU_CLASS, make_claim_template("gpu-template"), claim])
    assert e.message == ("0/2 nodes are available: ResourceClaim default/trainer-gpu-x7k2p was not created for "
                         "Pod default/trainer (Pod is not owner).")


def test_a_template_entry_that_needed_no_claim_is_skipped() -> None:
    pod = make_pod("trainer", claim_templates={"gpu": "gpu-template"}, generated={"gpu": None})
    e = explain(pod, [GPU_CLASS, make_claim_template("gpu-template")])
    assert e.schedulable


@pytest.mark.parametrize(("request_", "text"), [
    (device_request(device_class="h100.example.com"), "request gpu: device class h100.example.com does not exist"),
    ({"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": "gpu.example.com"},
                                        {"name": "small", "deviceClassName": "mig.example.com"}]},
     "request gpu/small: device class mig.example.com does not exist"),
    ({"name": "gpu"}, "resource claim default/shared-gpu, request gpu: unknown request type"),
])
def test_each_request_of_an_unallocated_claim_needs_its_device_class(request_, text) -> None:
    pod = make_pod("trainer", claims={"gpu": "shared-gpu"})
    e = explain(pod, [GPU_CLASS, make_claim("shared-gpu", requests=[request_])])
    assert e.scheduler_message == f"0/2 nodes are available: {text}. no new claims to deallocate, {NOT_HELPFUL}"


def test_an_allocated_claim_holds_its_pod_to_the_nodes_its_allocation_selects() -> None:
    pod = make_pod("trainer", claims={"gpu": "shared-gpu"})
    claim = make_claim("shared-gpu", allocated=[("gpu.example.com", "node-b", "gpu-0")], node="node-b")
    e = explain(pod, [GPU_CLASS, make_slice("node-b", 1), claim])
    assert e.schedulable
    assert e.feasible == ["node-b"]
    by_node = {v.node: v.status.reasons for v in e.verdicts}
    assert by_node["node-a"] == (NOT_AVAILABLE,)


def test_a_claim_allocated_elsewhere_and_reserved_by_no_one_would_be_deallocated_by_the_postfilter() -> None:
    pod = make_pod("trainer", claims={"gpu": "shared-gpu"})
    claim = make_claim("shared-gpu", allocated=[("gpu.example.com", "node-c", "gpu-0")], node="node-c")
    e = explain(pod, [GPU_CLASS, claim])
    assert e.scheduler_message == (f"0/2 nodes are available: 2 {NOT_AVAILABLE}. deallocation of ResourceClaim "
                                   f"completed, {NOT_HELPFUL}")


def test_a_claim_allocated_elsewhere_for_another_pod_leaves_the_pod_still_not_schedulable() -> None:
    user = make_pod("user", node="node-c")
    pod = make_pod("trainer", claims={"gpu": "shared-gpu"})
    claim = make_claim("shared-gpu", allocated=[("gpu.example.com", "node-c", "gpu-0")], node="node-c",
                       reserved_for=[user])
    e = explain(pod, [GPU_CLASS, claim])
    assert e.scheduler_message == (f"0/2 nodes are available: 2 {NOT_AVAILABLE}. still not schedulable, "
                                   f"{NOT_HELPFUL}")


def test_without_any_dra_object_in_the_snapshot_claims_are_not_looked_at_and_it_cannot_be_known() -> None:
    pod = make_pod("trainer", claims={"gpu": "shared-gpu"})
    state = make_state(NODES, [pod])
    e = explain_pod(state, state.pod(pod.key))
    assert (e.schedulable, e.unknown, e.missing_kinds) == (False, True, ("DeviceClass", "ResourceSlice",
                                                                         "ResourceClaim"))
    assert e.feasible == ["node-a", "node-b"]  # as far as the rest of the filters go
