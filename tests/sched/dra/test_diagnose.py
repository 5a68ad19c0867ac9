"""The allocated state's bookkeeping (who holds a device; claims taken away and added) and
`diagnose`'s facts for a node where allocation fails."""

from __future__ import annotations

from typing import Any

import msgspec

from kresched.model.dra import DeviceClass, ResourceClaim, ResourceSlice
from kresched.sched.dra.allocated import AllocatedState
from kresched.sched.dra.allocator import Allocator
from kresched.sched.dra.diagnose import diagnose
from kresched.sched.dra.pools import SliceIndex
from tests.sched.dra.upstream_builders import (
    CLASS_A,
    DRIVER_A,
    NODE1,
    POOL1,
    REGION1,
    SLICE1,
    class_,
    device,
    node,
    request,
    slice_with_devices,
    with_taints,
)

GPUS = slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device("gpu-0", None, {"model": {"string": "a100"}}),
                          device("gpu-1", None, {"model": {"string": "h100"}}))


def _claim(name: str, *requests: dict[str, Any], allocated: list[str] | None = None) -> ResourceClaim:
    raw: dict[str, Any] = {"metadata": {"name": name, "namespace": "ml"},
                           "spec": {"devices": {"requests": list(requests)}}}
    if allocated:
        raw["status"] = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": DRIVER_A, "pool": POOL1, "device": d} for d in allocated]}}}
    return msgspec.convert(raw, ResourceClaim)


def _allocator(state: AllocatedState, slices: list[dict[str, Any]] | None = None) -> Allocator:
    return Allocator([msgspec.convert(class_(CLASS_A, DRIVER_A), DeviceClass)],
                     [msgspec.convert(s, ResourceSlice) for s in slices or [GPUS]], state)


def _gpu_request(count: int = 1, *selectors: str) -> dict[str, Any]:
    return request("gpu", CLASS_A, count, *({"cel": {"expression": e}} for e in selectors))


def test_every_claims_allocation_holds_its_devices_until_the_claim_is_taken_away() -> None:
    holders = [_claim("train-0", _gpu_request(), allocated=["gpu-0"]),
               _claim("train-1", _gpu_request(), allocated=["gpu-1"])]
    state = AllocatedState.from_claims(holders)
    pending = _claim("pending", _gpu_request())
    assert state.holders((DRIVER_A, POOL1, "gpu-0")) == ("ml/train-0",)
    assert _allocator(state).allocate(node(NODE1, REGION1), [pending]) is None
    freed = _allocator(state.without(["ml/train-1"])).allocate(node(NODE1, REGION1), [pending])
    assert freed is not None
    assert [r.device for r in freed.claim_results[0].devices.results] == ["gpu-1"]


def test_a_planned_allocation_added_to_the_state_takes_its_devices_from_the_next_pod() -> None:
    first = _claim("first", _gpu_request())
    outcome = _allocator(AllocatedState()).allocate(node(NODE1, REGION1), [first])
    assert outcome is not None
    state = AllocatedState().with_results([(first.key, outcome.claim_results[0])])
    second = _allocator(state).allocate(node(NODE1, REGION1), [_claim("second", _gpu_request())])
    assert second is not None
    assert second.claim_results[0].devices.results[0].device == "gpu-1"
    assert _allocator(state.with_results([("ml/third", second.claim_results[0])])).allocate(
        node(NODE1, REGION1), [_claim("fourth", _gpu_request())]) is None


def test_admin_access_results_are_not_counted_as_allocated() -> None:
    raw = _claim("monitor", _gpu_request(), allocated=["gpu-0"])
    result = raw.status.allocation.devices.results[0]  # type: ignore[union-attr]
    admin = msgspec.structs.replace(result, admin_access=True)
    allocation = msgspec.structs.replace(raw.status.allocation, devices=msgspec.structs.replace(
        raw.status.allocation.devices, results=(admin,)))  # type: ignore[union-attr]
    state = AllocatedState().with_results([(raw.key, allocation)])
    assert not state.is_allocated((DRIVER_A, POOL1, "gpu-0"))


def test_diagnose_names_the_claims_holding_every_matching_device() -> None:
    state = AllocatedState.from_claims([_claim("train-0", _gpu_request(), allocated=["gpu-0", "gpu-1"])])
    facts = diagnose(_allocator(state), node(NODE1, REGION1), [_claim("pending", _gpu_request())])
    assert [f.kind for f in facts] == ["all-allocated"]
    assert "driver-a/pool-1/gpu-0 by ml/train-0" in facts[0].message


def test_diagnose_names_the_selector_no_device_passes() -> None:
    expression = 'device.attributes["driver-a"].model == "b200"'
    facts = diagnose(_allocator(AllocatedState()), node(NODE1, REGION1), [_claim("p", _gpu_request(1, expression))])
    assert [(f.kind, f.selector_index, f.expression) for f in facts] == [("selector-mismatch", 0, expression)]
    assert "2 device(s) of class class-a, none passes selector #0" in facts[0].message


def test_diagnose_says_when_no_device_of_the_class_is_on_the_node() -> None:
    other = slice_with_devices(SLICE1, "node-2", POOL1, DRIVER_A, device("gpu-0", None, None))
    facts = diagnose(_allocator(AllocatedState(), [other]), node(NODE1, REGION1), [_claim("p", _gpu_request())])
    assert [f.kind for f in facts] == ["no-class-devices"]


def test_diagnose_reports_untolerated_taints_and_too_few_devices() -> None:
    tainted = slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, with_taints(
        device("gpu-0", None, None), {"key": "broken", "value": "", "effect": "NoSchedule"}))
    facts = diagnose(_allocator(AllocatedState(), [tainted]), node(NODE1, REGION1), [_claim("p", _gpu_request())])
    assert [f.kind for f in facts] == ["tainted"]
    facts = diagnose(_allocator(AllocatedState()), node(NODE1, REGION1), [_claim("p", _gpu_request(3))])
    assert [f.message for f in facts] == ["claim ml/p, request gpu: needs 3 device(s) of class class-a, only 2 free"]


def test_diagnose_reports_an_incomplete_pool() -> None:
    partial = slice_with_devices(SLICE1, NODE1, {"name": POOL1, "resourceSliceCount": 2, "generation": 1}, DRIVER_A,
                                 device("gpu-0", None, None))
    facts = diagnose(_allocator(AllocatedState(), [partial]), node(NODE1, REGION1), [_claim("p", _gpu_request())])
    assert [f.kind for f in facts] == ["pool-incomplete", "no-class-devices"]


def test_a_shared_index_gathers_a_nodes_pools_once_for_every_pod() -> None:
    slices = [msgspec.convert(GPUS, ResourceSlice)]
    index = SliceIndex(slices)
    classes = [msgspec.convert(class_(CLASS_A, DRIVER_A), DeviceClass)]
    target = node(NODE1, REGION1)
    first = Allocator(classes, slices, AllocatedState(), index=index)
    second = Allocator(classes, slices, AllocatedState(), index=index)
    assert first.pools_for(target) is second.pools_for(target)
    assert second.allocate(target, [_claim("p", _gpu_request(2))]) is not None
