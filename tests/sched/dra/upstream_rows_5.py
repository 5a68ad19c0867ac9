# ruff: noqa: E501 - rows ported line for line; long strings are upstream's
"""allocatortesting.TestAllocator, rows 173-215 of 215
("list-attributes-match-constaint-list-of-string-values-without-common-elements" .. "check-combinations-with-prioritized-list"), ported
mechanically from upstream Go (`staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
allocatortesting/allocator_testing.go`, v1.36): each row builds the same objects with the same helpers.
"""

from tests.sched.dra.upstream_builders import (
    BOOL_ATTRIBUTE,
    CLAIM0,
    CLASS_A,
    COUNTER_SET1,
    COUNTER_SET2,
    DEVICE1,
    DEVICE2,
    DEVICE3,
    DEVICE4,
    DRIVER_A,
    FROM_COUNTERS,
    INT_ATTRIBUTE,
    NODE1,
    NODE2,
    POOL1,
    POOL2,
    POOL3,
    POOL4,
    REGION1,
    REQ0,
    REQ0_SUB_REQ1,
    REQ1,
    REQ1_SUB_REQ1,
    REQ2,
    REQ2_SUB_REQ1,
    SLICE1,
    SLICE2,
    SLICE3,
    SLICE4,
    STRING_ATTRIBUTE,
    SUB_REQ0,
    SUB_REQ1,
    VERSION_ATTRIBUTE,
    allocation_result,
    claim,
    claim_with_request,
    claim_with_requests,
    class_,
    counter_set,
    device,
    device_allocation_result,
    device_counter_consumption,
    device_request,
    device_request_allocation_result_with_binding_conditions,
    go_features,
    local_node_selector,
    make_device_id,
    node,
    request,
    request_with_prioritized_list,
    resource_pool,
    slice_with_counter_sets,
    slice_with_devices,
    sprintf,
    sub_request,
    with_binding_conditions,
    with_device_counter_consumption,
    with_requests,
)


def _r193_0():
    v_s = slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None))
    v_s["spec"]["pool"]["generation"] = 1
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r193_1():
    v_s = slice_with_devices(SLICE2, NODE2, POOL1, DRIVER_A, device(DEVICE2, None, None))
    v_s["spec"]["pool"]["generation"] = 2
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r194_0():
    v_s = slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None))
    v_s["spec"]["pool"]["generation"] = 1
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r194_1():
    v_s = slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, None, None))
    v_s["spec"]["pool"]["generation"] = 1
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r194_2():
    v_s = slice_with_devices(SLICE2, NODE2, POOL1, DRIVER_A, device(DEVICE1, None, None))
    v_s["spec"]["pool"]["generation"] = 2
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r194_3():
    v_s = slice_with_devices(SLICE2, NODE2, POOL1, DRIVER_A, device(DEVICE2, None, None))
    v_s["spec"]["pool"]["generation"] = 2
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r195_0():
    v_s = slice_with_devices(SLICE1, NODE2, POOL1, DRIVER_A, device(DEVICE1, None, None))
    v_s["spec"]["pool"]["generation"] = 1
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r195_1():
    v_s = slice_with_devices(SLICE1, NODE2, POOL1, DRIVER_A, device(DEVICE2, None, None))
    v_s["spec"]["pool"]["generation"] = 1
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r195_2():
    v_s = slice_with_devices(SLICE2, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None))
    v_s["spec"]["pool"]["generation"] = 2
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r195_3():
    v_s = slice_with_devices(SLICE2, NODE1, POOL1, DRIVER_A, device(DEVICE2, None, None))
    v_s["spec"]["pool"]["generation"] = 2
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r196_0():
    v_s = slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None))
    v_s["spec"]["pool"]["generation"] = 1
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r196_1():
    v_s = slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, None, None))
    v_s["spec"]["pool"]["generation"] = 1
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r196_2():
    v_s = slice_with_devices(SLICE2, NODE2, POOL1, DRIVER_A, device(DEVICE1, None, None))
    v_s["spec"]["pool"]["generation"] = 2
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r197_0():
    v_s = slice_with_devices(SLICE1, NODE2, POOL1, DRIVER_A, device(DEVICE1, None, None))
    v_s["spec"]["pool"]["generation"] = 1
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r197_1():
    v_s = slice_with_devices(SLICE1, NODE2, POOL1, DRIVER_A, device(DEVICE2, None, None))
    v_s["spec"]["pool"]["generation"] = 1
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


def _r197_2():
    v_s = slice_with_devices(SLICE2, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None))
    v_s["spec"]["pool"]["generation"] = 2
    v_s["spec"]["pool"]["resourceSliceCount"] = 2
    return v_s


ROWS = {
    "list-attributes-match-constaint-list-of-string-values-without-common-elements": lambda: {
        "features": go_features(list_type_attributes=True),
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, [{"matchAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 1), request(REQ0, CLASS_A, 1)
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"stringValues": ["value1", "value2"]}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value3", "value4"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-elements": lambda: {
        "features": go_features(list_type_attributes=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"string": "value1"}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value1", "value2"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
            )
        ],
    },
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-common-elements": lambda: {
        "features": go_features(list_type_attributes=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 3))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"string": "value1"}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value1", "value2"]}}),
                device(DEVICE3, None, {"stringAttribute": {"stringValues": ["value2", "value3"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements": lambda: {
        "features": go_features(list_type_attributes=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"string": "value1"}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value2", "value3"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "list-attributes-match-constaint-list-of-int-values-with-common-elements": lambda: {
        "features": go_features(list_type_attributes=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": INT_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"numa": {"intValues": [0, 1, 2]}}),
                device(DEVICE2, None, {"numa": {"intValues": [1, 2, 3]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
            )
        ],
    },
    "list-attributes-match-constaint-list-of-bool-values-with-common-elements": lambda: {
        "features": go_features(list_type_attributes=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": BOOL_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"boolAttribute": {"boolValues": [True, False]}}),
                device(DEVICE2, None, {"boolAttribute": {"boolValues": [True]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
            )
        ],
    },
    "list-attributes-match-constaint-list-of-version-values-with-common-elements": lambda: {
        "features": go_features(list_type_attributes=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": VERSION_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"driverVersion": {"versionValues": ["1.0.0", "1.1.0", "2.0.0"]}}),
                device(DEVICE2, None, {"driverVersion": {"versionValues": ["1.1.0", "2.0.0", "2.1.0"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
            )
        ],
    },
    "list-attributes-match-constaint-with-empty-or-unknown-type": lambda: {
        "features": go_features(list_type_attributes=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": []}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_error": "unsupported attribute value",
    },
    "list-attributes-disabled-match-constraint-with-lists": lambda: {
        "features": go_features(list_type_attributes=False),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"stringValues": ["value1", "value2", "value3"]}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value2", "value3", "value4"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
        "expect_error": "unsupported attribute value",
    },
    "list-attributes-distinct-constraint-scalar-string-values-all-distinct": lambda: {
        "features": go_features(list_type_attributes=True, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"string": "value1"}}),
                device(DEVICE2, None, {"stringAttribute": {"string": "value2"}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
            )
        ],
    },
    "list-attributes-distinct-constraint-scalar-string-values-not-distinct": lambda: {
        "features": go_features(list_type_attributes=True, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"string": "value1"}}),
                device(DEVICE2, None, {"stringAttribute": {"string": "value1"}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "list-attributes-distinct-constraint-list-of-string-values-all-distinct": lambda: {
        "features": go_features(list_type_attributes=True, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"stringValues": ["value1", "value2"]}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value2", "value3"]}}),
                device(DEVICE3, None, {"stringAttribute": {"stringValues": ["value3", "value4"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
    "list-attributes-distinct-constraint-list-of-string-values-with-common-elements": lambda: {
        "features": go_features(list_type_attributes=True, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"stringValues": ["value1", "value2", "value3"]}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value2", "value4", "value5"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct": lambda: {
        "features": go_features(list_type_attributes=True, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"string": "value1"}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value1", "value2"]}}),
                device(DEVICE3, None, {"stringAttribute": {"stringValues": ["value2", "value3"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
    "list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements": lambda: {
        "features": go_features(list_type_attributes=True, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"string": "value1"}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value1", "value2"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "list-attributes-distinct-constraint-list-of-int-values-all-distinct": lambda: {
        "features": go_features(list_type_attributes=True, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": INT_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"numa": {"intValues": [0, 1]}}),
                device(DEVICE2, None, {"numa": {"intValues": [1, 2]}}),
                device(DEVICE3, None, {"numa": {"intValues": [2, 3]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
    "list-attributes-distinct-constraint-list-of-bool-values-all-distinct": lambda: {
        "features": go_features(list_type_attributes=True, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": BOOL_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"boolAttribute": {"boolValues": [True]}}),
                device(DEVICE2, None, {"boolAttribute": {"boolValues": [True, False]}}),
                device(DEVICE3, None, {"boolAttribute": {"boolValues": [False]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
    "list-attributes-distinct-constraint-list-of-version-values-all-distinct": lambda: {
        "features": go_features(list_type_attributes=True, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": VERSION_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"driverVersion": {"versionValues": ["1.0.0", "1.1.0"]}}),
                device(DEVICE2, None, {"driverVersion": {"versionValues": ["1.1.0", "2.0.0"]}}),
                device(DEVICE3, None, {"driverVersion": {"versionValues": ["2.0.0", "2.1.0"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
    "list-attributes-distinct-constaint-with-empty-or-unknown-type": lambda: {
        "features": go_features(list_type_attributes=True, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": VERSION_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"driverVersion": {"versionValues": []}}),
                device(DEVICE2, None, {"driverVersion": {"versionValues": None}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_error": "unsupported attribute value",
    },
    "list-attributes-disabled-distinct-constraint-with-lists": lambda: {
        "features": go_features(list_type_attributes=False, consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"distinctAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"stringValues": ["value1", "value2", "value3"]}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value2", "value3", "value4"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
        "expect_error": "unsupported attribute value",
    },
    "allocation-mode-all-with-multi-host-resource-pool": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, None)),
            slice_with_devices(SLICE2, NODE2, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE2, None, None)),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "multi-host-resource-pool-with-stale-slice-for-current-node": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [_r193_0(), _r193_1()],
        "node": node(NODE1, REGION1),
    },
    "multi-host-resource-pool-complete-update-from-node-1-to-node-2": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [_r194_0(), _r194_1(), _r194_2(), _r194_3()],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "multi-host-resource-pool-complete-update-from-node-2-to-node-1": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [_r195_0(), _r195_1(), _r195_2(), _r195_3()],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [_r196_0(), _r196_1(), _r196_2()],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [_r197_0(), _r197_1(), _r197_2()],
        "node": node(NODE1, REGION1),
    },
    "partitionable-devices-same-counter-set-name-in-different-resource-slices": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [with_requests(claim(CLAIM0), device_request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 4), DRIVER_A, device(DEVICE1, None, None)),
            slice_with_counter_sets(SLICE2, NODE1, resource_pool(POOL1, 4), DRIVER_A, counter_set(COUNTER_SET1, None)),
            slice_with_devices(SLICE3, NODE1, resource_pool(POOL1, 4), DRIVER_A, device(DEVICE2, None, None)),
            slice_with_counter_sets(SLICE4, NODE1, resource_pool(POOL1, 4), DRIVER_A, counter_set(COUNTER_SET1, None)),
        ],
        "node": node(NODE1, REGION1),
        "expect_error": "invalid resource pools were encountered",
    },
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [with_requests(claim(CLAIM0), device_request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, None, None), device_counter_consumption(COUNTER_SET2, None)
                ),
            ),
            slice_with_counter_sets(SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, None)),
        ],
        "node": node(NODE1, REGION1),
        "expect_error": "invalid resource pools were encountered",
    },
    "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [with_requests(claim(CLAIM0), device_request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, None, None), device_counter_consumption(COUNTER_SET1, {"memory": "8Gi"})
                ),
            ),
            slice_with_counter_sets(
                SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, {"other-memory": "8Gi"})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_error": "invalid resource pools were encountered",
    },
    "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [with_requests(claim(CLAIM0), device_request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, None, None), device_counter_consumption(COUNTER_SET1, {"memory": "8Gi"})
                ),
            ),
            slice_with_counter_sets(SLICE2, NODE1, POOL2, DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})),
        ],
        "node": node(NODE1, REGION1),
        "expect_error": "invalid resource pools were encountered",
    },
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": lambda: {
        "features": go_features(partitionable_devices=True, prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0,
                    sub_request(
                        SUB_REQ0,
                        CLASS_A,
                        1,
                        {
                            "cel": {
                                "expression": sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', DRIVER_A
                                )
                            }
                        },
                    ),
                    sub_request(
                        SUB_REQ1,
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
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_counter_sets(
                SLICE1, NODE1, resource_pool(POOL1, 3), DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})
            ),
            slice_with_devices(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 3),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "6Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "2Gi"})
                ),
            ),
            slice_with_devices(
                SLICE3,
                NODE2,
                resource_pool(POOL1, 3),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE3, None, None), device_counter_consumption(COUNTER_SET1, {"memory": "6Gi"})
                ),
            ),
        ],
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE3)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE2, False)
            )
        ],
    },
    "partitionable-devices-validation-error-on-non-targeting-slice": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_counter_sets(
                SLICE1, NODE1, resource_pool(POOL1, 3), DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})
            ),
            slice_with_devices(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 3),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "6Gi"})
                ),
            ),
            slice_with_devices(
                SLICE3,
                NODE2,
                resource_pool(POOL1, 3),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE3, None, None), device_counter_consumption(COUNTER_SET2, {"memory": "6Gi"})
                ),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_error": "invalid resource pools were encountered",
    },
    "different-resourceslices-in-pool-can-target-different-nodes": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE2, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, None)),
            slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE2, None, None)),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False)
            )
        ],
    },
    "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, None)),
            slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, None)),
            slice_with_devices(SLICE3, NODE1, resource_pool(POOL2, 1), DRIVER_A, device(DEVICE2, None, None)),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL2, DEVICE2, False)
            )
        ],
    },
    "invalid-pool-is-error-if-no-other-device-can-be-allocated": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, None)),
            slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, None)),
            slice_with_devices(SLICE3, NODE1, resource_pool(POOL2, 1), DRIVER_A, device(DEVICE2, None, None)),
        ],
        "allocated_devices": [make_device_id(DRIVER_A, POOL2, DEVICE2)],
        "node": node(NODE1, REGION1),
        "expect_error": "invalid resource pools were encountered",
    },
    "no-allocation-from-incomplete-pools": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, None))],
        "node": node(NODE1, REGION1),
    },
    "check-combinations-within-single-request-single-pool-single-slice": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 5))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, None),
                device(DEVICE2, None, None),
                device(DEVICE3, None, None),
                device(DEVICE4, None, None),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_num_allocate_one_invocations": 16,
        "expect_num_allocate_one_invocations_by_channel": {"stable": 65},
    },
    "check-combinations-within-single-request-single-pool-multiple-slices": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 5))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                device(DEVICE1, None, None),
                device(DEVICE2, None, None),
            ),
            slice_with_devices(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                device(DEVICE3, None, None),
                device(DEVICE4, None, None),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_num_allocate_one_invocations": 16,
        "expect_num_allocate_one_invocations_by_channel": {"stable": 65},
    },
    "check-combinations-within-single-request-multiple-pools-multiple-slices": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 5))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, None)),
            slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE2, None, None)),
            slice_with_devices(
                SLICE3, NODE1, POOL2, DRIVER_A, device(DEVICE3, None, None), device(DEVICE4, None, None)
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_num_allocate_one_invocations": 16,
        "expect_num_allocate_one_invocations_by_channel": {"stable": 65},
    },
    "check-combinations-within-single-request-many-pools": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 5))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None)),
            slice_with_devices(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, None, None)),
            slice_with_devices(SLICE3, NODE1, POOL3, DRIVER_A, device(DEVICE3, None, None)),
            slice_with_devices(SLICE4, NODE1, POOL4, DRIVER_A, device(DEVICE4, None, None)),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_num_allocate_one_invocations": 16,
        "expect_num_allocate_one_invocations_by_channel": {"stable": 65},
    },
    "check-combinations-with-backtracking": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                None,
                request(REQ1, CLASS_A, 2),
                request(
                    REQ2, CLASS_A, 1, {"cel": {"expression": sprintf('device.attributes["%s"].type == "X"', DRIVER_A)}}
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
                device(DEVICE1, None, {"type": {"string": "X"}}),
                device(DEVICE2, None, {"type": {"string": "Y"}}),
                device(DEVICE3, None, {"type": {"string": "Y"}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE2, False),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE3, False),
                device_allocation_result(REQ2, DRIVER_A, POOL1, DEVICE1, False),
            )
        ],
        "expect_num_allocate_one_invocations": 12,
        "expect_num_allocate_one_invocations_by_channel": {"stable": 14},
    },
    "check-combinations-with-backtracking-across-slices-and-pools": lambda: {
        "features": go_features(device_binding_and_status=True),
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                None,
                request(REQ1, CLASS_A, 2),
                request(
                    REQ2, CLASS_A, 1, {"cel": {"expression": sprintf('device.attributes["%s"].type == "X"', DRIVER_A)}}
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, {"type": {"string": "X"}})
            ),
            slice_with_devices(
                SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE2, None, {"type": {"string": "Y"}})
            ),
            slice_with_devices(
                SLICE3,
                NODE1,
                POOL2,
                DRIVER_A,
                with_binding_conditions(device(DEVICE3, None, {"type": {"string": "Y"}}), ["IsPrepare"], []),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE2, False),
                device_request_allocation_result_with_binding_conditions(
                    REQ1, DRIVER_A, POOL2, DEVICE3, ["IsPrepare"], []
                ),
                device_allocation_result(REQ2, DRIVER_A, POOL1, DEVICE1, False),
            )
        ],
        "expect_num_allocate_one_invocations": 12,
        "expect_num_allocate_one_invocations_by_channel": {"stable": 14},
    },
    "check-combinations-with-prioritized-list": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ1,
                    sub_request(
                        SUB_REQ0,
                        CLASS_A,
                        3,
                        {"cel": {"expression": sprintf('device.attributes["%s"].type == "Y"', DRIVER_A)}},
                    ),
                    sub_request(SUB_REQ1, CLASS_A, 2),
                ),
                request_with_prioritized_list(
                    REQ2,
                    sub_request(SUB_REQ0, CLASS_A, 2),
                    sub_request(
                        SUB_REQ1,
                        CLASS_A,
                        1,
                        {"cel": {"expression": sprintf('device.attributes["%s"].type == "X"', DRIVER_A)}},
                    ),
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
                device(DEVICE1, None, {"type": {"string": "X"}}),
                device(DEVICE2, None, {"type": {"string": "Y"}}),
                device(DEVICE3, None, {"type": {"string": "Y"}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2, False),
                device_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3, False),
                device_allocation_result(REQ2_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, False),
            )
        ],
        "expect_num_allocate_one_invocations": 26,
        "expect_num_allocate_one_invocations_by_channel": {"stable": 32},
    },
}
