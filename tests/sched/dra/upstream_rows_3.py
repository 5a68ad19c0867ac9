# ruff: noqa: E501 - rows ported line for line; long strings are upstream's
"""allocatortesting.TestAllocator, rows 87-129 of 215
("partitionable-devices-no-capacity-available" .. "consumable-capacity-disabled-feature-with-prioritized-list"), ported
mechanically from upstream Go (`staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
allocatortesting/allocator_testing.go`, v1.36): each row builds the same objects with the same helpers.
"""

from tests.sched.dra.upstream_builders import (
    CLAIM0,
    CLASS_A,
    CLASS_B,
    COUNTER_SET1,
    COUNTER_SET2,
    DEVICE1,
    DEVICE2,
    DEVICE3,
    DRIVER_A,
    DRIVER_B,
    FIELD_NAME_KEY,
    FROM_COUNTERS,
    NODE1,
    NODE2,
    NODE_SELECTION_ALL,
    NODE_SELECTION_PER_DEVICE,
    ONE,
    PLANET_KEY,
    PLANET_VALUE_EARTH,
    POOL1,
    POOL2,
    REGION1,
    REGION_KEY,
    REQ0,
    REQ0_SUB_REQ1,
    REQ1,
    REQ1_SUB_REQ1,
    SLICE1,
    SLICE2,
    SLICE3,
    SLICE4,
    SUB_REQ0,
    SUB_REQ1,
    TAINT_NO_EXECUTE,
    TAINT_NO_SCHEDULE,
    TAINT_NONE,
    TOLERATION_NO_EXECUTE,
    TOLERATION_NO_SCHEDULE,
    TOLERATION_NO_SCHEDULE_KEY1,
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
    multiple_device_allocation_results,
    node,
    node_label_selector,
    request,
    request_with_prioritized_list,
    resource_pool,
    slice_with_counter_sets,
    slice_with_devices,
    slice_with_multiple_devices,
    slice_with_one_device,
    sprintf,
    sub_request,
    with_allocation_mode,
    with_binding_conditions,
    with_binds_to_node,
    with_capacity_request,
    with_device_counter_consumption,
    with_node_selection,
    with_requests,
    with_taints,
    with_tolerations,
)


def _r103_0():
    v_c = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_c["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    return [v_c]


def _r104_0():
    v_c = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_c["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    return [v_c]


ROWS = {
    "partitionable-devices-no-capacity-available": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "16Gi"})
                ),
            ),
            slice_with_counter_sets(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, {"memory": "18Gi"})),
        ],
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE2)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "partitionable-devices-overallocated-capacity-pool": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "20Gi"})
                ),
            ),
            slice_with_counter_sets(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, {"memory": "18Gi"})),
        ],
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE2)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "partitionable-devices-disabled-device-consumes-counters": lambda: {
        "features": go_features(partitionable_devices=False),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, None, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
                ),
            ),
            slice_with_counter_sets(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, {"memory": "18Gi"})),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "partitionable-devices-disabled-other-device-do-not-consume-counters": lambda: {
        "features": go_features(partitionable_devices=False),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
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
                device(DEVICE2, None, None),
            ),
            slice_with_counter_sets(
                SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, {"memory": "18Gi"})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False)
            )
        ],
    },
    "partitionable-devices-disabled-per-device-node-selection": lambda: {
        "features": go_features(partitionable_devices=False),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE_SELECTION_PER_DEVICE,
                POOL1,
                DRIVER_A,
                with_node_selection(device(DEVICE2, None, None), NODE1),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "partitionable-devices-per-device-node-selection-nodename": lambda: {
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
                                    'device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', DRIVER_A
                                )
                            }
                        },
                    ),
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE_SELECTION_PER_DEVICE,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_node_selection(
                    with_device_counter_consumption(
                        device(DEVICE1, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    ),
                    NODE1,
                ),
                with_node_selection(
                    with_device_counter_consumption(
                        device(DEVICE2, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "6Gi"}),
                    ),
                    NODE2,
                ),
            ),
            slice_with_counter_sets(
                SLICE2,
                NODE_SELECTION_PER_DEVICE,
                resource_pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, {"memory": "18Gi"}),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "partitionable-devices-per-device-node-selection-node-selector": lambda: {
        "features": go_features(partitionable_devices=True, prioritized_list=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE_SELECTION_PER_DEVICE,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_node_selection(
                    with_device_counter_consumption(
                        device(DEVICE1, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    ),
                    node_label_selector(REGION_KEY, REGION1),
                ),
            ),
            slice_with_counter_sets(
                SLICE2,
                NODE_SELECTION_PER_DEVICE,
                resource_pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, {"memory": "18Gi"}),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": REGION_KEY, "operator": "In", "values": [REGION1]}]}
                    ]
                },
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
            )
        ],
    },
    "partitionable-devices-per-device-node-selection-node-selector-multiple-devices": lambda: {
        "features": go_features(partitionable_devices=True, prioritized_list=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 3), request(REQ1, CLASS_B, 3))],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE_SELECTION_PER_DEVICE,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_node_selection(
                    with_device_counter_consumption(
                        device(DEVICE1, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    ),
                    node_label_selector(REGION_KEY, REGION1),
                ),
                with_node_selection(
                    with_device_counter_consumption(
                        device(DEVICE2, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    ),
                    NODE1,
                ),
                with_node_selection(
                    with_device_counter_consumption(
                        device(DEVICE3, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    ),
                    NODE_SELECTION_ALL,
                ),
            ),
            slice_with_counter_sets(
                SLICE2,
                NODE_SELECTION_PER_DEVICE,
                resource_pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, {"memory": "18Gi"}),
            ),
            slice_with_devices(
                SLICE3,
                NODE1,
                resource_pool(POOL2, 2),
                DRIVER_B,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET2, {"memory": "4Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET2, {"memory": "4Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE3, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET2, {"memory": "4Gi"})
                ),
            ),
            slice_with_counter_sets(
                SLICE4, NODE1, resource_pool(POOL2, 2), DRIVER_B, counter_set(COUNTER_SET2, {"memory": "12Gi"})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": FIELD_NAME_KEY, "operator": "In", "values": [NODE1]}]}
                    ]
                },
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE3, False),
                device_allocation_result(REQ1, DRIVER_B, POOL2, DEVICE1, False),
                device_allocation_result(REQ1, DRIVER_B, POOL2, DEVICE2, False),
                device_allocation_result(REQ1, DRIVER_B, POOL2, DEVICE3, False),
            )
        ],
    },
    "tainted-two-devices": lambda: {
        "features": go_features(device_taints=True),
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE),
                with_taints(device(DEVICE2, None, None), TAINT_NO_EXECUTE),
            )
        ],
        "node": node(NODE1, REGION1),
    },
    "tainted-one-device-two-taints": lambda: {
        "features": go_features(device_taints=True),
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE),
            )
        ],
        "node": node(NODE1, REGION1),
    },
    "tainted-two-devices-tolerated": lambda: {
        "features": go_features(device_taints=True),
        "claims_to_allocate": [with_tolerations(claim_with_request(CLAIM0, REQ0, CLASS_A), TOLERATION_NO_EXECUTE)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE),
                with_taints(device(DEVICE2, None, None), TAINT_NO_EXECUTE),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False, TOLERATION_NO_EXECUTE),
            )
        ],
    },
    "tainted-two-devices-prioritized-list-tolerated": lambda: {
        "features": go_features(device_taints=True, prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_A, 1, TOLERATION_NO_EXECUTE)
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
                with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE),
                with_taints(device(DEVICE2, None, None), TAINT_NO_EXECUTE),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE2, False, TOLERATION_NO_EXECUTE),
            )
        ],
    },
    "tainted-no-effect": lambda: {
        "features": go_features(device_taints=True),
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, with_taints(device(DEVICE1, None, None), TAINT_NONE))
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "tainted-one-device-two-taints-both-tolerated": lambda: {
        "features": go_features(device_taints=True),
        "claims_to_allocate": [
            with_tolerations(claim_with_request(CLAIM0, REQ0, CLASS_A), TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE)
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(
                    REQ0, DRIVER_A, POOL1, DEVICE1, False, TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE
                ),
            )
        ],
    },
    "tainted-disabled": lambda: {
        "features": go_features(device_taints=False),
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "tainted-prioritized-list": lambda: {
        "features": go_features(device_taints=True, prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0, sub_request(SUB_REQ0, CLASS_B, 1), sub_request(SUB_REQ1, CLASS_A, 1)
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE)
            )
        ],
        "node": node(NODE1, REGION1),
    },
    "tainted-prioritized-list-disabled": lambda: {
        "features": go_features(device_taints=False, prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0, sub_request(SUB_REQ0, CLASS_B, 1), sub_request(SUB_REQ1, CLASS_A, 1)
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE)
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "tainted-admin-access": lambda: {
        "features": go_features(device_taints=True, admin_access=True),
        "claims_to_allocate": _r103_0(),
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE1), make_device_id(DRIVER_A, POOL1, DEVICE2)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE)
            )
        ],
        "node": node(NODE1, REGION1),
    },
    "tainted-admin-access-disabled": lambda: {
        "features": go_features(device_taints=False, admin_access=True),
        "claims_to_allocate": _r104_0(),
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE1), make_device_id(DRIVER_A, POOL1, DEVICE2)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE)
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, True)
            )
        ],
    },
    "tainted-all-devices-single": lambda: {
        "features": go_features(device_taints=True),
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE)
            )
        ],
        "node": node(NODE1, REGION1),
    },
    "tainted-all-devices-single-disabled": lambda: {
        "features": go_features(device_taints=False),
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, None, {"name": REQ0, "exactly": {"allocationMode": "All", "deviceClassName": CLASS_A}}
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_taints(device(DEVICE1, None, None), TAINT_NO_SCHEDULE)
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "prioritized-list-allocation-mode-all": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0,
                    with_allocation_mode(sub_request(SUB_REQ0, CLASS_A, 0), "All"),
                    sub_request(SUB_REQ1, CLASS_A, 1),
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None))
        ],
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE2)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "prioritized-list-allocation-mode-all-with-selectors": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0,
                    with_allocation_mode(
                        sub_request(
                            SUB_REQ0,
                            CLASS_A,
                            0,
                            {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v6"', DRIVER_A)}},
                        ),
                        "All",
                    ),
                    with_allocation_mode(
                        sub_request(
                            SUB_REQ1,
                            CLASS_A,
                            0,
                            {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v5"', DRIVER_A)}},
                        ),
                        "All",
                    ),
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, {"generation": {"string": "v5"}}))
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0,
                    with_allocation_mode(
                        sub_request(
                            SUB_REQ0,
                            CLASS_A,
                            0,
                            {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v6"', DRIVER_A)}},
                        ),
                        "All",
                    ),
                    with_allocation_mode(
                        sub_request(
                            SUB_REQ1,
                            CLASS_A,
                            0,
                            {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v5"', DRIVER_A)}},
                        ),
                        "All",
                    ),
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, {"generation": {"string": "v5"}})),
            slice_with_devices(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE1, None, {"generation": {"string": "v5"}})),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL2, DEVICE1, False),
            )
        ],
    },
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0,
                    with_allocation_mode(
                        sub_request(
                            SUB_REQ0,
                            CLASS_A,
                            0,
                            {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v6"', DRIVER_A)}},
                        ),
                        "All",
                    ),
                    with_allocation_mode(
                        sub_request(
                            SUB_REQ1,
                            CLASS_A,
                            0,
                            {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v5"', DRIVER_A)}},
                        ),
                        "All",
                    ),
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, {"generation": {"string": "v5"}})),
            slice_with_devices(
                SLICE2,
                NODE2,
                POOL2,
                DRIVER_A,
                device(DEVICE1, None, {"generation": {"string": "v5"}}),
                device(DEVICE2, None, {"generation": {"string": "v6"}}),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0,
                    with_allocation_mode(
                        sub_request(
                            SUB_REQ0,
                            CLASS_A,
                            0,
                            {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v6"', DRIVER_A)}},
                        ),
                        "All",
                    ),
                    with_allocation_mode(
                        sub_request(
                            SUB_REQ1,
                            CLASS_A,
                            0,
                            {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v5"', DRIVER_A)}},
                        ),
                        "All",
                    ),
                ),
            )
        ],
        "classes": [
            {
                "metadata": {"name": CLASS_A},
                "spec": {
                    "selectors": [
                        {
                            "cel": {
                                "expression": sprintf(
                                    'device.driver == "%s" && device.attributes["%s"].selected', DRIVER_A, DRIVER_A
                                )
                            }
                        }
                    ]
                },
            }
        ],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"generation": {"string": "v6"}, "selected": {"bool": False}}),
                device(DEVICE2, None, {"generation": {"string": "v5"}, "selected": {"bool": False}}),
                device(DEVICE3, None, {"generation": {"string": "v5"}, "selected": {"bool": True}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE3, False)
            )
        ],
    },
    "max-number-devices": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 32))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 32)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), *multiple_device_allocation_results(REQ0, DRIVER_A, POOL1, 32, 0)
            )
        ],
    },
    "partitionable-devices-with-attribute-selector": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                None,
                request(REQ0, CLASS_A, 2),
                request(
                    REQ1, CLASS_A, 1, {"cel": {"expression": sprintf('device.attributes["%s"].special', DRIVER_A)}}
                ),
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
                    device(DEVICE1, None, {"special": {"bool": True}}),
                    device_counter_consumption(COUNTER_SET1, {"cpu1": "1"}),
                    device_counter_consumption(COUNTER_SET2, {"mem": "10Gi"}),
                ),
                with_device_counter_consumption(
                    device(DEVICE2, None, {"special": {"bool": False}}),
                    device_counter_consumption(COUNTER_SET1, {"cpu2": "1"}),
                    device_counter_consumption(COUNTER_SET2, {"mem": "10Gi"}),
                ),
                with_device_counter_consumption(
                    device(DEVICE3, None, {"special": {"bool": False}}),
                    device_counter_consumption(COUNTER_SET1, {"cpu3": "1"}),
                    device_counter_consumption(COUNTER_SET2, {"mem": "10Gi"}),
                ),
            ),
            slice_with_counter_sets(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, {"cpu1": "1", "cpu2": "1", "cpu3": "1"}),
                counter_set(COUNTER_SET2, {"mem": "30Gi"}),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE3, False),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE1, False),
            )
        ],
    },
    "prioritized-list-max-allocation-limit-request": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0, sub_request(SUB_REQ0, CLASS_A, 32), sub_request(SUB_REQ1, CLASS_A, 32 // 2)
                ),
                request_with_prioritized_list(
                    REQ1, sub_request(SUB_REQ0, CLASS_A, 32), sub_request(SUB_REQ1, CLASS_A, 32 // 2)
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 32 * 2)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                *[
                    *multiple_device_allocation_results(REQ0_SUB_REQ1, DRIVER_A, POOL1, 32 // 2, 0),
                    *multiple_device_allocation_results(REQ1_SUB_REQ1, DRIVER_A, POOL1, 32 // 2, 32 // 2),
                ],
            )
        ],
        "expect_num_allocate_one_invocations": 75,
    },
    "prioritized-list-max-allocation-allocation-mode-all": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0,
                    with_allocation_mode(sub_request(SUB_REQ0, CLASS_A, 0), "All"),
                    sub_request(SUB_REQ1, CLASS_A, 2),
                ),
                device_request(REQ1, CLASS_B, 2),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 32 - 1),
            slice_with_multiple_devices(SLICE2, NODE1, POOL2, DRIVER_B, 2),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, "device-0", False),
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, "device-1", False),
                device_allocation_result(REQ1, DRIVER_B, POOL2, "device-0", False),
                device_allocation_result(REQ1, DRIVER_B, POOL2, "device-1", False),
            )
        ],
        "expect_num_allocate_one_invocations": 42,
    },
    "device-binding-conditions": lambda: {
        "features": go_features(device_binding_and_status=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_binding_conditions(device(DEVICE1, None, None), ["IsPrepare"], ["BindingFailed"]),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            {
                "devices": {
                    "results": [
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]
                        )
                    ]
                },
                "nodeSelector": local_node_selector(NODE1),
            }
        ],
    },
    "binding-conditions-multiple-devices": lambda: {
        "features": go_features(device_binding_and_status=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2), request(REQ1, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_binding_conditions(device(DEVICE1, None, None), ["IsPrepare"], ["BindingFailed"]),
                with_binding_conditions(device(DEVICE2, None, None), ["IsPrepare2"], ["BindingFailed2"]),
                with_binding_conditions(device(DEVICE3, None, None), ["IsPrepare3"], ["BindingFailed3"]),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            {
                "devices": {
                    "results": [
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE2, ["IsPrepare2"], ["BindingFailed2"]
                        ),
                        device_request_allocation_result_with_binding_conditions(
                            REQ1, DRIVER_A, POOL1, DEVICE3, ["IsPrepare3"], ["BindingFailed3"]
                        ),
                    ]
                },
                "nodeSelector": local_node_selector(NODE1),
            }
        ],
    },
    "binding-conditions-with-and-without": lambda: {
        "features": go_features(device_binding_and_status=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, None),
                with_binding_conditions(device(DEVICE2, None, None), ["IsPrepare"], ["BindingFailed"]),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            {
                "devices": {
                    "results": [
                        device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                        device_request_allocation_result_with_binding_conditions(
                            REQ1, DRIVER_A, POOL1, DEVICE2, ["IsPrepare"], ["BindingFailed"]
                        ),
                    ]
                },
                "nodeSelector": local_node_selector(NODE1),
            }
        ],
    },
    "binding-conditions-without-feature-gate": lambda: {
        "features": go_features(device_binding_and_status=False),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_binding_conditions(device(DEVICE1, None, None), ["IsPrepare"], ["BindingFailed"]),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "node-restriction": lambda: {
        "features": go_features(device_binding_and_status=True),
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                node_label_selector(PLANET_KEY, PLANET_VALUE_EARTH),
                POOL1,
                DRIVER_A,
                with_binds_to_node(device(DEVICE1, None, None), True),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "partitionable-devices-with-binding-conditions": lambda: {
        "features": go_features(partitionable_devices=True, device_binding_and_status=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_binding_conditions(
                    with_device_counter_consumption(
                        device(DEVICE1, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    ),
                    ["IsPrepare"],
                    ["BindingFailed"],
                ),
            ),
            slice_with_counter_sets(
                SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            {
                "devices": {
                    "results": [
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]
                        )
                    ]
                },
                "nodeSelector": local_node_selector(NODE1),
            }
        ],
    },
    "partitionable-devices-with-binding-conditions-multiple": lambda: {
        "features": go_features(partitionable_devices=True, device_binding_and_status=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_binding_conditions(
                    with_device_counter_consumption(
                        device(DEVICE1, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    ),
                    ["IsPrepare"],
                    ["BindingFailed"],
                ),
                with_binding_conditions(
                    with_device_counter_consumption(
                        device(DEVICE2, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    ),
                    ["IsPrepare2"],
                    ["BindingFailed2"],
                ),
            ),
            slice_with_counter_sets(
                SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            {
                "devices": {
                    "results": [
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE2, ["IsPrepare2"], ["BindingFailed2"]
                        ),
                    ]
                },
                "nodeSelector": local_node_selector(NODE1),
            }
        ],
    },
    "partitionable-devices-with-binding-conditions-some-devices-no-conditions": lambda: {
        "features": go_features(partitionable_devices=True, device_binding_and_status=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 3))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_binding_conditions(
                    with_device_counter_consumption(
                        device(DEVICE1, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "2Gi"}),
                    ),
                    ["IsPrepare"],
                    ["BindingFailed"],
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "2Gi"})
                ),
                with_binding_conditions(
                    with_device_counter_consumption(
                        device(DEVICE3, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    ),
                    ["IsReady"],
                    ["BindingTimeout"],
                ),
            ),
            slice_with_counter_sets(
                SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            {
                "devices": {
                    "results": [
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE2, None, None
                        ),
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE3, ["IsReady"], ["BindingTimeout"]
                        ),
                    ]
                },
                "nodeSelector": local_node_selector(NODE1),
            }
        ],
    },
    "partitionable-devices-with-binding-conditions-multi-slices": lambda: {
        "features": go_features(partitionable_devices=True, device_binding_and_status=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE4,
                NODE1,
                resource_pool(POOL1, 4),
                DRIVER_A,
                with_binding_conditions(
                    with_device_counter_consumption(
                        device(DEVICE1, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    ),
                    ["IsPrepare"],
                    ["BindingFailed"],
                ),
            ),
            slice_with_counter_sets(
                SLICE3, NODE1, resource_pool(POOL1, 4), DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})
            ),
            slice_with_devices(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 4),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET2, {"memory": "4Gi"})
                ),
            ),
            slice_with_counter_sets(
                SLICE1, NODE1, resource_pool(POOL1, 4), DRIVER_A, counter_set(COUNTER_SET2, {"memory": "8Gi"})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            {
                "devices": {
                    "results": [
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE2, None, None
                        ),
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE1, ["IsPrepare"], ["BindingFailed"]
                        ),
                    ]
                },
                "nodeSelector": local_node_selector(NODE1),
            }
        ],
    },
    "partitionable-devices-with-binding-conditions-and-taints": lambda: {
        "features": go_features(partitionable_devices=True, device_binding_and_status=True, device_taints=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_taints(
                    with_binding_conditions(
                        with_device_counter_consumption(
                            device(DEVICE1, FROM_COUNTERS, None),
                            device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                        ),
                        ["IsPrepare"],
                        ["BindingFailed"],
                    ),
                    {"key": "key1", "value": "value1", "effect": "NoSchedule"},
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
                ),
            ),
            slice_with_counter_sets(SLICE2, NODE1, POOL1, DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "partitionable-devices-with-binding-conditions-and-taints-tolerated": lambda: {
        "features": go_features(partitionable_devices=True, device_binding_and_status=True, device_taints=True),
        "claims_to_allocate": [
            with_tolerations(claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2)), TOLERATION_NO_SCHEDULE_KEY1)
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_taints(
                    with_binding_conditions(
                        with_device_counter_consumption(
                            device(DEVICE1, FROM_COUNTERS, None),
                            device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                        ),
                        ["IsPrepare"],
                        ["BindingFailed"],
                    ),
                    {"key": "key1", "value": "value1", "effect": "NoSchedule"},
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
                ),
            ),
            slice_with_counter_sets(
                SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            {
                "devices": {
                    "results": [
                        device_request_allocation_result_with_binding_conditions(
                            REQ0,
                            DRIVER_A,
                            POOL1,
                            DEVICE1,
                            ["IsPrepare"],
                            ["BindingFailed"],
                            TOLERATION_NO_SCHEDULE_KEY1,
                        ),
                        device_request_allocation_result_with_binding_conditions(
                            REQ0, DRIVER_A, POOL1, DEVICE2, None, None, TOLERATION_NO_SCHEDULE_KEY1
                        ),
                    ]
                },
                "nodeSelector": local_node_selector(NODE1),
            }
        ],
    },
    "consumable-capacity-disabled-feature": lambda: {
        "features": go_features(device_binding_and_status=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_error": "claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled",
    },
    "consumable-capacity-disabled-feature-with-prioritized-list": lambda: {
        "features": go_features(prioritized_list=True, device_binding_and_status=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0,
                    with_capacity_request(sub_request(SUB_REQ0, CLASS_A, 1), ONE),
                    with_capacity_request(sub_request(SUB_REQ1, CLASS_A, 1), ONE),
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_error": "claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is disabled",
    },
}
