# ruff: noqa: E501, PIE807 - rows ported line for line; long strings are upstream's
"""allocatortesting.TestAllocator, rows 1-43 of 215
("empty" .. "admin-access-disabled"), ported
mechanically from upstream Go (`staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
allocatortesting/allocator_testing.go`, v1.36): each row builds the same objects with the same helpers.
"""

from tests.sched.dra.upstream_builders import (
    CLAIM0,
    CLAIM1,
    CLASS_A,
    CLASS_B,
    COUNTER_SET1,
    DEVICE1,
    DEVICE2,
    DRIVER_A,
    DRIVER_B,
    FIELD_NAME_KEY,
    NODE1,
    NODE2,
    NODE_SELECTION_ALL,
    PLANET_KEY,
    PLANET_VALUE_EARTH,
    POOL1,
    POOL2,
    POOL3,
    POOL4,
    REGION1,
    REGION2,
    REGION_KEY,
    REQ0,
    REQ0_SUB_REQ1,
    REQ1,
    SLICE1,
    SLICE2,
    SUB_REQ0,
    SUB_REQ1,
    allocation_result,
    claim,
    claim_with_request,
    claim_with_requests,
    class_,
    counter_set,
    deep_copy,
    device,
    device_allocation_result,
    device_counter_consumption,
    go_features,
    local_node_selector,
    make_device_id,
    node,
    node_label_selector,
    request,
    request_with_prioritized_list,
    resource_pool,
    slice_with_counter_sets,
    slice_with_devices,
    slice_with_no_devices,
    slice_with_one_device,
    sprintf,
    sub_request,
    with_device_counter_consumption,
    with_requests,
)


def _r7_0():
    v_slice = slice_with_devices(
        "slice-1-obsolete", NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE2, None, None)
    )
    v_slice["spec"]["pool"]["generation"] += 1
    return v_slice


def _r8_0():
    v_slice_a = slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)
    v_slice_a["spec"]["pool"]["resourceSliceCount"] = 2
    v_slice_b = deep_copy(v_slice_a)
    v_slice_b["metadata"]["name"] += "-2"
    return [v_slice_a, v_slice_b]


def _r18_0():
    v_slice = slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)
    v_slice["spec"]["pool"]["resourceSliceCount"] += 1
    return v_slice


def _r28_0():
    v_c = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_c["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    v_c["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "All"
    return [v_c]


def _r29_0():
    v_c = claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))
    v_c["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    v_c["spec"]["devices"]["requests"][1]["exactly"]["adminAccess"] = True
    v_c["spec"]["devices"]["requests"][1]["exactly"]["allocationMode"] = "All"
    return [v_c]


def _r30_0():
    v_c = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_c["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    v_c["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "ExactCount"
    v_c["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    return [v_c]


def _r31_0():
    v_c1 = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_c1["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    v_c2 = claim_with_request(CLAIM1, REQ0, CLASS_A)
    v_c2["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    return [v_c1, v_c2]


def _r32_0():
    v_admin = claim_with_request(CLAIM1, REQ0, CLASS_A)
    v_admin["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    return [claim_with_request(CLAIM0, REQ0, CLASS_A), v_admin]


def _r33_0():
    v_claim = with_requests(
        claim(CLAIM0),
        request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_B, 1)),
    )
    v_claim["spec"]["devices"]["requests"][0]["firstAvailable"][0]["allocationMode"] = "All"
    v_claim["spec"]["devices"]["requests"][0]["firstAvailable"][0]["count"] = 0
    return v_claim


def _r34_0():
    v_claim = with_requests(
        claim(CLAIM0),
        request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_B, 1)),
    )
    v_claim["spec"]["devices"]["requests"][0]["firstAvailable"][0]["allocationMode"] = "All"
    v_claim["spec"]["devices"]["requests"][0]["firstAvailable"][0]["count"] = 0
    return v_claim


def _r35_0():
    v_claim = with_requests(
        claim(CLAIM0),
        request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_B, 1)),
    )
    v_claim["spec"]["devices"]["requests"][0]["firstAvailable"][0]["allocationMode"] = "All"
    v_claim["spec"]["devices"]["requests"][0]["firstAvailable"][0]["count"] = 0
    return v_claim


def _r42_0():
    v_c = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_c["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    return [v_c]


ROWS = {
    "empty": lambda: {},
    "simple": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "other-node": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
            slice_with_one_device(SLICE2, NODE2, POOL2, DRIVER_A),
        ],
        "node": node(NODE2, REGION2),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE2), device_allocation_result(REQ0, DRIVER_A, POOL2, DEVICE1, False)
            )
        ],
    },
    "small-and-large": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                None,
                request(
                    REQ0,
                    CLASS_A,
                    1,
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
                request(
                    REQ1,
                    CLASS_A,
                    1,
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {"memory": "1Gi"}, None),
                device(DEVICE2, {"memory": "2Gi"}, None),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE2, False),
            )
        ],
    },
    "small-and-large-backtrack-requests": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                None,
                request(
                    REQ0,
                    CLASS_A,
                    1,
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
                request(
                    REQ1,
                    CLASS_A,
                    1,
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE2, {"memory": "2Gi"}, None),
                device(DEVICE1, {"memory": "1Gi"}, None),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE2, False),
            )
        ],
    },
    "small-and-large-backtrack-claims": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                None,
                request(
                    REQ0,
                    CLASS_A,
                    1,
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
            ),
            claim_with_requests(
                CLAIM1,
                None,
                request(
                    REQ1,
                    CLASS_A,
                    1,
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
            ),
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE2, {"memory": "2Gi"}, None),
                device(DEVICE1, {"memory": "1Gi"}, None),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            ),
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE2, False)
            ),
        ],
    },
    "devices-split-across-different-slices": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                None,
                {"name": REQ0, "exactly": {"count": 2, "allocationMode": "ExactCount", "deviceClassName": CLASS_A}},
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_A),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL2, DEVICE1, False),
            )
        ],
    },
    "obsolete-slice": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                "slice-1-obsolete", NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, None)
            ),
            _r7_0(),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "duplicate-slice": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": _r8_0(),
        "node": node(NODE1, REGION1),
        "expect_error": "invalid resource pools were encountered",
    },
    "no-slices": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": None,
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "not-enough-suitable-devices": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ1, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "no-classes": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": None,
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_error": "could not retrieve device class class-a",
    },
    "unknown-class": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, "unknown-class")],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_error": "could not retrieve device class unknown-class",
    },
    "empty-class": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, "")],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_error": "claim claim-0, request req-0: missing device class name (unsupported request type?)",
    },
    "no-claims-to-allocate": lambda: {
        "claims_to_allocate": None,
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "all-devices-single": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "all-devices-with-consumed-counters": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, None, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
                ),
            ),
            slice_with_counter_sets(
                SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "all-devices-many": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL2, DEVICE1, False),
            )
        ],
    },
    "all-devices-of-the-incomplete-pool": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                None,
                {"name": REQ0, "exactly": {"allocationMode": "All", "count": 1, "deviceClassName": CLASS_A}},
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [_r18_0()],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_error": "claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being updated",
    },
    "all-devices-plus-another": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            ),
            claim_with_requests(
                CLAIM1,
                None,
                {"name": REQ0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": CLASS_B}},
            ),
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            ),
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_B, POOL1, DEVICE1, False)
            ),
        ],
    },
    "all-devices-plus-another-reversed": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM1,
                None,
                {"name": REQ0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": CLASS_B}},
            ),
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            ),
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_B, POOL1, DEVICE1, False)
            ),
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            ),
        ],
    },
    "all-devices-many-plus-another": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            ),
            claim_with_requests(
                CLAIM1,
                None,
                {"name": REQ0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": CLASS_B}},
            ),
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None)
            ),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
            ),
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_B, POOL1, DEVICE1, False)
            ),
        ],
    },
    "all-devices-many-plus-another-reversed": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM1,
                None,
                {"name": REQ0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": CLASS_B}},
            ),
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            ),
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None)
            ),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_B, POOL1, DEVICE1, False)
            ),
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
            ),
        ],
    },
    "all-devices-no-solution": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM1,
                None,
                {"name": REQ0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": CLASS_A}},
            ),
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            ),
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
    },
    "all-devices-no-solution-reversed": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            ),
            claim_with_requests(
                CLAIM1,
                None,
                {"name": REQ0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": CLASS_A}},
            ),
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
    },
    "all-devices-slice-without-devices": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_no_devices(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "all-devices-no-slices": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": None,
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "all-devices-some-allocated": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            )
        ],
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE1)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None))
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "all-devices-some-allocated-admin-access": lambda: {
        "features": go_features(admin_access=True),
        "claims_to_allocate": _r28_0(),
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE1)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None))
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, True),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, True),
            )
        ],
    },
    "all-devices-some-allocating-admin-access": lambda: {
        "features": go_features(admin_access=True),
        "claims_to_allocate": _r29_0(),
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None))
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "count-devices-some-allocated-admin-access": lambda: {
        "features": go_features(admin_access=True),
        "claims_to_allocate": _r30_0(),
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE1)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None))
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, True),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, True),
            )
        ],
    },
    "separate-claims-share-device-admin-access": lambda: {
        "features": go_features(admin_access=True),
        "claims_to_allocate": _r31_0(),
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None))
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, True)
            ),
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, True)
            ),
        ],
    },
    "admin-access-claims-device-allocating-for-non-admin-access": lambda: {
        "features": go_features(admin_access=True),
        "claims_to_allocate": _r32_0(),
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None))
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            ),
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, True)
            ),
        ],
    },
    "all-devices-slice-without-devices-prioritized-list": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [_r33_0()],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_no_devices(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1, False)
            )
        ],
    },
    "all-devices-no-slices-prioritized-list": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [_r34_0()],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1, False)
            )
        ],
    },
    "all-devices-some-allocated-prioritized-list": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [_r35_0()],
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE1)],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None)
            ),
            slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1, False)
            )
        ],
    },
    "network-attached-device": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                node_label_selector(REGION_KEY, REGION1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
            )
        ],
    },
    "unsuccessful-allocation-network-attached-device": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A)],
        "node": node(NODE2, REGION2),
        "expect_results": None,
    },
    "many-network-attached-devices": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 4))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE_SELECTION_ALL, POOL2, DRIVER_A),
            slice_with_one_device(SLICE1, node_label_selector(PLANET_KEY, PLANET_VALUE_EARTH), POOL3, DRIVER_A),
            slice_with_one_device(SLICE1, local_node_selector(NODE1), POOL4, DRIVER_A),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": REGION_KEY, "operator": "In", "values": [REGION1]},
                                {"key": PLANET_KEY, "operator": "In", "values": [PLANET_VALUE_EARTH]},
                            ],
                            "matchFields": [{"key": FIELD_NAME_KEY, "operator": "In", "values": [NODE1]}],
                        }
                    ]
                },
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL2, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL3, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL4, DEVICE1, False),
            )
        ],
    },
    "local-and-network-attached-devices": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A),
            slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL2, DEVICE1, False),
            )
        ],
    },
    "several-different-drivers": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ0, CLASS_B)],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None)
            ),
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            ),
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_B, POOL1, DEVICE1, False)
            ),
        ],
    },
    "already-allocated-devices": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE1), make_device_id(DRIVER_A, POOL1, DEVICE2)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "admin-access-disabled": lambda: {
        "features": go_features(admin_access=False),
        "claims_to_allocate": _r42_0(),
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_error": "claim claim-0, request req-0: admin access is requested, but the feature is disabled",
    },
}
