"""Upstream's allocator test helpers (`structured/internal/allocatortesting/allocator_testing.go`),
one for one under snake_case names, building API-shaped dicts that the test converts to typed objects.

The rows in `upstream_rows_*.py` call these exactly as the Go rows call theirs, so a row can be
compared with its upstream original line by line.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest

from kresched.model.objects import Node
from kresched.sched.dra.capacity import quantity_text

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2, REQ3 = "req-0", "req-1", "req-2", "req-3"
SUB_REQ0, SUB_REQ1 = "subReq-0", "subReq-1"
REQ0_SUB_REQ0, REQ0_SUB_REQ1 = "req-0/subReq-0", "req-0/subReq-1"
REQ1_SUB_REQ0, REQ1_SUB_REQ1 = "req-1/subReq-0", "req-1/subReq-1"
REQ2_SUB_REQ0, REQ2_SUB_REQ1 = "req-2/subReq-0", "req-2/subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2, SLICE3, SLICE4 = "slice-1", "slice-2", "slice-3", "slice-4"
DEVICE0, DEVICE1, DEVICE2, DEVICE3, DEVICE4 = "device-0", "device-1", "device-2", "device-3", "device-4"
COUNTER_SET1, COUNTER_SET2 = "counter-set-1", "counter-set-2"
CAPACITY0, CAPACITY1 = "capacity-0", "capacity-1"
FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
ZERO, ONE, TWO, THREE, FOUR = "0", "1", "2", "3", "4"
FIELD_NAME_KEY, REGION_KEY, PLANET_KEY, PLANET_VALUE_EARTH = "metadata.name", "region", "planet", "earth"
NODE_SELECTION_ALL, NODE_SELECTION_PER_DEVICE = "nodeSelectionAll", "nodeSelectionPerDevice"
FROM_COUNTERS = "fromCounters"

# TestAllocator's locals.
NON_EXISTENT_ATTRIBUTE = DRIVER_A + "/NonExistentAttribute"
BOOL_ATTRIBUTE = DRIVER_A + "/boolAttribute"
STRING_ATTRIBUTE = DRIVER_A + "/stringAttribute"
VERSION_ATTRIBUTE = DRIVER_A + "/driverVersion"
INT_ATTRIBUTE = DRIVER_A + "/numa"
TAINT_NONE = {"key": "taint-key", "value": "taint-value", "effect": "None"}
TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TOLERATION_NO_SCHEDULE = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
TOLERATION_NO_EXECUTE = {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TOLERATION_NO_SCHEDULE_KEY1 = {"operator": "Exists", "key": "key1", "effect": "NoSchedule"}

_FLAG = "_capacityFromCounters"
#: Helpers whose rows need opaque device configuration, which kresched's model does not keep.
CONFIG_HELPERS = ("class_with_config", "claim_with_device_config", "allocation_result_with_config",
                  "allocation_result_with_configs", "with_configs", "device_claim_config", "device_configuration")


def go_features(**enabled: bool) -> dict[str, bool]:
    """`Features{...}`: what a row does not name is off."""
    return enabled


def sprintf(fmt: str, *args: Any) -> str:
    """`fmt.Sprintf` for the verbs the rows use (`%s`, `%d`, `%v`)."""
    values = tuple(("true" if a else "false") if isinstance(a, bool) else a for a in args)
    return fmt.replace("%v", "%s") % values


def new_quantity(n: int) -> str:
    return quantity_text(n)


def deep_copy(obj: Any) -> Any:
    return copy.deepcopy(obj)


def make_device_id(driver: str, pool: str, device_name: str) -> tuple[str, str, str]:
    return driver, pool, device_name


def make_shared_device_id(device_id: tuple[str, str, str], share_id: str) -> tuple[str, str, str, str]:
    return (*device_id, share_id)


def node(name: str, region: str) -> Node:
    return msgspec.convert({"metadata": {"name": name, "labels": {REGION_KEY: region, PLANET_KEY: PLANET_VALUE_EARTH}}},
                           Node)


def _selector(expression: str) -> dict[str, Any]:
    return {"cel": {"expression": expression}}


def class_(name: str, driver: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"selectors": [_selector(f'device.driver == "{driver}"')]}}


def class_with_allow_multiple_allocations(name: str, driver: str, multi: bool) -> dict[str, Any]:
    expression = sprintf('device.driver == "%s" && device.allowMultipleAllocations == %v', driver, multi)
    return {"metadata": {"name": name}, "spec": {"selectors": [_selector(expression)]}}


def claim_with_requests(name: str, constraints: list[dict[str, Any]] | None,
                        *requests: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name},
            "spec": {"devices": {"requests": list(requests), "constraints": list(constraints or [])}}}


def request(name: str, class_name: str, count: int, *selectors: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "exactly": {"count": count, "allocationMode": "ExactCount", "deviceClassName": class_name,
                                      "selectors": list(selectors)}}


def device_request(name: str, class_name: str, count: int) -> dict[str, Any]:
    return request(name, class_name, count)


def all_device_request(name: str, class_name: str) -> dict[str, Any]:
    return {"name": name, "exactly": {"allocationMode": "All", "deviceClassName": class_name}}


def sub_request(name: str, class_name: str, count: int, *fields: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "count": count, "allocationMode": "ExactCount",
                           "deviceClassName": class_name, "selectors": [], "tolerations": []}
    for f in fields:
        out["selectors" if "cel" in f else "tolerations"].append(f)
    return out


def _capacity_requests(quantity: str | None) -> dict[str, Any]:
    return {"requests": {CAPACITY0: quantity} if quantity is not None else {}}


def with_capacity_request(req: dict[str, Any], quantity: str | None) -> dict[str, Any]:
    out = copy.deepcopy(req)
    out.get("exactly", out)["capacity"] = _capacity_requests(quantity)
    return out


def with_selectors(req: dict[str, Any], *selectors: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(req)
    out["exactly"]["selectors"] = list(selectors)
    return out


def with_allocation_mode(sub: dict[str, Any], mode: str) -> dict[str, Any]:
    out = copy.deepcopy(sub)
    out["allocationMode"] = mode
    return out


def request_with_prioritized_list(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def claim_with_request(name: str, req: str, class_name: str, *constraints: dict[str, Any]) -> dict[str, Any]:
    return claim_with_requests(name, list(constraints), request(req, class_name, 1))


def claim(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"devices": {"requests": [], "constraints": []}}}


def with_tolerations(c: dict[str, Any], *tolerations: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(c)
    for r in out["spec"]["devices"]["requests"]:
        r["exactly"].setdefault("tolerations", []).extend(tolerations)
    return out


def with_requests(c: dict[str, Any], *requests: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(c)
    out["spec"]["devices"]["requests"] = list(requests)
    return out


def with_constraints(c: dict[str, Any], *constraints: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(c)
    out["spec"]["devices"]["constraints"] = list(constraints)
    return out


def device(name: str, capacity: Any, attributes: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "attributes": dict(attributes or {})}
    if capacity == FROM_COUNTERS:
        out[_FLAG] = True
    elif capacity is not None:
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    return out


def _copy_device(d: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(d)
    out.pop(_FLAG, None)
    return out


def with_taints(d: dict[str, Any], *taints: dict[str, Any]) -> dict[str, Any]:
    out = _copy_device(d)
    out.setdefault("taints", []).extend(taints)
    return out


def with_device_counter_consumption(d: dict[str, Any], *consumption: dict[str, Any]) -> dict[str, Any]:
    out = _copy_device(d)
    out.setdefault("consumesCounters", []).extend(consumption)
    if d.get(_FLAG):
        out["capacity"] = {name: {"value": c["value"]} for dcc in out["consumesCounters"]
                           for name, c in dcc["counters"].items()}
    return out


def with_node_selection(d: dict[str, Any], selection: Any) -> dict[str, Any]:
    out = _copy_device(d)
    if isinstance(selection, dict):
        out["nodeSelector"] = selection
    elif selection == NODE_SELECTION_ALL:
        out["allNodes"] = True
    else:
        out["nodeName"] = selection
    return out


def with_binding_conditions(d: dict[str, Any], conditions: list[str] | None,
                            failure_conditions: list[str] | None) -> dict[str, Any]:
    out = _copy_device(d)
    out["bindingConditions"] = list(conditions or [])
    out["bindingFailureConditions"] = list(failure_conditions or [])
    return out


def with_binds_to_node(d: dict[str, Any], binds: bool) -> dict[str, Any]:
    out = _copy_device(d)
    out["bindsToNode"] = binds
    return out


def with_allow_multiple_allocations(d: dict[str, Any]) -> dict[str, Any]:
    out = _copy_device(d)
    out["allowMultipleAllocations"] = True
    return out


def with_capacity_request_policy_range(d: dict[str, Any], capacity: dict[str, str]) -> dict[str, Any]:
    out = _copy_device(d)
    caps = out.setdefault("capacity", {})
    for name, q in capacity.items():
        caps[name] = {"value": q, "requestPolicy": {"default": TWO,
                                                    "validRange": {"min": TWO, "step": TWO, "max": FOUR}}}
    return out


def with_capacity_request_policy_valid_values(d: dict[str, Any], default: str, capacity: dict[str, str],
                                              additional: list[str]) -> dict[str, Any]:
    out = _copy_device(d)
    caps = out.setdefault("capacity", {})
    for name, q in capacity.items():
        caps[name] = {"value": q, "requestPolicy": {"default": default, "validValues": [default, *(additional or [])]}}
    return out


def device_counter_consumption(counter_set_name: str, counters: dict[str, str]) -> dict[str, Any]:
    return {"counterSet": counter_set_name, "counters": {k: {"value": v} for k, v in (counters or {}).items()}}


def slice_(name: str, node_selection: Any, pool: Any, driver: str) -> dict[str, Any]:
    if isinstance(pool, str):
        pool = {"name": pool, "resourceSliceCount": 1, "generation": 1}
    spec: dict[str, Any] = {"driver": driver, "pool": dict(pool)}
    if isinstance(node_selection, dict):
        spec["nodeSelector"] = node_selection
    elif node_selection == NODE_SELECTION_ALL:
        spec["allNodes"] = True
    elif node_selection == NODE_SELECTION_PER_DEVICE:
        spec["perDeviceNodeSelection"] = True
    else:
        spec["nodeName"] = node_selection
    return {"metadata": {"name": name}, "spec": spec}


def slice_with_devices(name: str, node_selection: Any, pool: Any, driver: str,
                       *devices: dict[str, Any]) -> dict[str, Any]:
    s = slice_(name, node_selection, pool, driver)
    s["spec"]["devices"] = [_copy_device(d) for d in devices]
    return s


def slice_with_counter_sets(name: str, node_selection: Any, pool: Any, driver: str,
                            *counter_sets: dict[str, Any]) -> dict[str, Any]:
    s = slice_(name, node_selection, pool, driver)
    s["spec"]["sharedCounters"] = list(counter_sets)
    return s


def resource_pool(name: str, count: int) -> dict[str, Any]:
    return {"name": name, "resourceSliceCount": count, "generation": 1}


def slice_with_no_devices(name: str, node_selection: Any, pool: Any, driver: str) -> dict[str, Any]:
    return slice_with_devices(name, node_selection, pool, driver)


def slice_with_one_device(name: str, node_selection: Any, pool: Any, driver: str) -> dict[str, Any]:
    return slice_with_devices(name, node_selection, pool, driver, device(DEVICE1, None, None))


def slice_with_multiple_devices(name: str, node_selection: Any, pool: Any, driver: str, count: int) -> dict[str, Any]:
    return slice_with_devices(name, node_selection, pool, driver,
                              *(device(f"device-{i}", None, None) for i in range(count)))


def counter_set(name: str, counters: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "counters": {k: {"value": v} for k, v in (counters or {}).items()}}


def device_allocation_result(req: str, driver: str, pool: str, device_name: str, admin_access: bool,
                             *tolerations: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"request": req, "driver": driver, "pool": pool, "device": device_name,
                           "tolerations": list(tolerations)}
    if admin_access:
        out["adminAccess"] = True
    return out


def device_request_allocation_result(req: str, driver: str, pool: str, device_name: str) -> dict[str, Any]:
    return {"request": req, "driver": driver, "pool": pool, "device": device_name}


def with_consumed_capacity(result: dict[str, Any], share_id: str | None,
                           consumed: dict[str, str] | None) -> dict[str, Any]:
    out = copy.deepcopy(result)
    out["shareID"] = share_id
    out["consumedCapacity"] = consumed
    return out


def device_request_allocation_result_with_binding_conditions(
        req: str, driver: str, pool: str, device_name: str, conditions: list[str] | None,
        failure_conditions: list[str] | None, *tolerations: dict[str, Any]) -> dict[str, Any]:
    return {"request": req, "driver": driver, "pool": pool, "device": device_name,
            "bindingConditions": list(conditions or []), "bindingFailureConditions": list(failure_conditions or []),
            "tolerations": list(tolerations)}


def multiple_device_allocation_results(req: str, driver: str, pool: str, count: int,
                                       start: int) -> list[dict[str, Any]]:
    return [device_allocation_result(req, driver, pool, f"device-{i}", False) for i in range(start, start + count)]


def node_label_selector(key: str, *values: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}


def local_node_selector(node_name: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": FIELD_NAME_KEY, "operator": "In", "values": [node_name]}]}]}


def allocation_result(selector: dict[str, Any] | None, *results: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelector": selector, "results": list(results)}


def _no_config(*_: Any) -> Any:
    pytest.skip("kresched's model keeps no opaque device configuration (`config`), which the scheduler never reads")


class_with_config = claim_with_device_config = allocation_result_with_config = _no_config
allocation_result_with_configs = with_configs = device_claim_config = device_configuration = _no_config
