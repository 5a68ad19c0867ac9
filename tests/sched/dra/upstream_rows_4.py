# ruff: noqa: E501 - rows ported line for line; long strings are upstream's
"""allocatortesting.TestAllocator, rows 130-172 of 215
("consumable-capacity-multi-allocatable-device-with-missing-capacity-request" .. "list-attributes-match-constaint-list-of-string-values-with-partially-common-elements"), ported
mechanically from upstream Go (`staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
allocatortesting/allocator_testing.go`, v1.36): each row builds the same objects with the same helpers.
"""

from tests.sched.dra.upstream_builders import (
    BOOL_ATTRIBUTE,
    CAPACITY0,
    CAPACITY1,
    CLAIM0,
    CLAIM1,
    CLASS_A,
    COUNTER_SET1,
    COUNTER_SET2,
    DEVICE1,
    DEVICE2,
    DEVICE3,
    DEVICE4,
    DRIVER_A,
    FIXED_SHARE_ID,
    FOUR,
    FROM_COUNTERS,
    INT_ATTRIBUTE,
    NODE1,
    ONE,
    POOL1,
    REGION1,
    REQ0,
    REQ0_SUB_REQ0,
    REQ0_SUB_REQ1,
    REQ1,
    REQ1_SUB_REQ1,
    REQ2,
    REQ2_SUB_REQ0,
    REQ3,
    SLICE1,
    SLICE2,
    STRING_ATTRIBUTE,
    SUB_REQ0,
    SUB_REQ1,
    THREE,
    TWO,
    VERSION_ATTRIBUTE,
    ZERO,
    all_device_request,
    allocation_result,
    claim,
    claim_with_requests,
    class_,
    class_with_allow_multiple_allocations,
    counter_set,
    device,
    device_allocation_result,
    device_counter_consumption,
    device_request,
    device_request_allocation_result,
    go_features,
    local_node_selector,
    make_device_id,
    make_shared_device_id,
    new_quantity,
    node,
    request,
    request_with_prioritized_list,
    resource_pool,
    slice_with_counter_sets,
    slice_with_devices,
    sprintf,
    sub_request,
    with_allow_multiple_allocations,
    with_capacity_request,
    with_capacity_request_policy_range,
    with_capacity_request_policy_valid_values,
    with_constraints,
    with_consumed_capacity,
    with_device_counter_consumption,
    with_requests,
    with_selectors,
)

ROWS = {
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_allow_multiple_allocations(device(DEVICE1, {CAPACITY1: ONE}, None))
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(all_device_request(REQ0, CLASS_A), ONE))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_allow_multiple_allocations(device(DEVICE1, {CAPACITY1: ONE}, None))
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), device_request(REQ0, CLASS_A, 1)),
            with_requests(claim(CLAIM1), device_request(REQ0, CLASS_A, 1)),
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_allow_multiple_allocations(device(DEVICE1, None, None))
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, None
                ),
            ),
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, None
                ),
            ),
        ],
    },
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), device_request(REQ0, CLASS_A, 1)),
            with_requests(claim(CLAIM1), device_request(REQ0, CLASS_A, 1)),
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_allow_multiple_allocations(device(DEVICE1, {CAPACITY0: ONE}, None)),
                with_allow_multiple_allocations(device(DEVICE2, {CAPACITY0: ONE}, None)),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: ONE}
                ),
            ),
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2), FIXED_SHARE_ID, {CAPACITY0: ONE}
                ),
            ),
        ],
    },
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), device_request(REQ0, CLASS_A, 1)),
            with_requests(claim(CLAIM1), device_request(REQ0, CLASS_A, 1)),
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_allow_multiple_allocations(device(DEVICE1, {CAPACITY0: TWO}, None))
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE)),
            with_requests(claim(CLAIM1), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE)),
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_allow_multiple_allocations(device(DEVICE1, {CAPACITY0: TWO}, None))
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: ONE}
                ),
            ),
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: ONE}
                ),
            ),
        ],
    },
    "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1)),
            claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1)),
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), {CAPACITY0: FOUR}
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            ),
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            ),
        ],
    },
    "consumable-capacity-multi-allocatable-device-with-zero-request-policy": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1)),
            claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1)),
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_valid_values(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), ZERO, {CAPACITY0: ONE}, None
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: ZERO}
                ),
            ),
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: ZERO}
                ),
            ),
        ],
    },
    "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_valid_values(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), ZERO, {CAPACITY0: ONE}, None
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE)),
            with_requests(claim(CLAIM1), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE)),
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), {CAPACITY0: FOUR}
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            ),
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            ),
        ],
    },
    "consumable-capacity-multi-allocatable-device-with-range-policy-step": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), new_quantity(3)))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), {CAPACITY0: FOUR}
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: FOUR}
                ),
            )
        ],
    },
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), new_quantity(2)))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_valid_values(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), ONE, {CAPACITY0: FOUR}, [TWO]
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            )
        ],
    },
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), new_quantity(2)))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_valid_values(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), ONE, {CAPACITY0: THREE}, [THREE]
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: THREE}
                ),
            )
        ],
    },
    "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE)),
            with_requests(claim(CLAIM1), with_capacity_request(device_request(REQ0, CLASS_A, 1), TWO)),
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), {CAPACITY0: TWO}
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), new_quantity(6)))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), {CAPACITY0: new_quantity(10)}
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), TWO))
        ],
        "allocated_capacity_devices": {make_device_id(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: TWO}},
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), {CAPACITY0: FOUR}
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            )
        ],
    },
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), TWO))
        ],
        "allocated_capacity_devices": {make_device_id(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: TWO}},
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), {CAPACITY0: TWO}
                ),
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE2, None, None)), {CAPACITY0: TWO}
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            )
        ],
    },
    "consumable-capacity-with-multi-allocatable-device-backtrack": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                with_constraints(claim(CLAIM0), {"matchAttribute": STRING_ATTRIBUTE}),
                with_capacity_request(device_request(REQ0, CLASS_A, 1), TWO),
                with_capacity_request(device_request(REQ1, CLASS_A, 1), TWO),
            ),
            with_requests(claim(CLAIM1), with_capacity_request(device_request(REQ0, CLASS_A, 1), TWO)),
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(
                        device(DEVICE2, None, {"stringAttribute": {"string": "stringAttributeValue1"}})
                    ),
                    {CAPACITY0: TWO},
                ),
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(
                        device(DEVICE1, None, {"stringAttribute": {"string": "stringAttributeValue2"}})
                    ),
                    {CAPACITY0: FOUR},
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            ),
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            ),
        ],
    },
    "consumable-capacity-multi-allocatable-device-with-subrequest": lambda: {
        "features": go_features(consumable_capacity=True, prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0,
                    with_capacity_request(sub_request(SUB_REQ0, CLASS_A, 1), FOUR),
                    with_capacity_request(sub_request(SUB_REQ1, CLASS_A, 1), TWO),
                    sub_request(SUB_REQ1, CLASS_A, 1),
                ),
            )
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), {CAPACITY0: TWO}
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1),
                    FIXED_SHARE_ID,
                    {CAPACITY0: TWO},
                ),
            )
        ],
    },
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), TWO))
        ],
        "allocated_capacity_devices": {make_device_id(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: TWO}},
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), {CAPACITY0: TWO}
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(all_device_request(REQ0, CLASS_A), TWO))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_allow_multiple_allocations(device(DEVICE1, {CAPACITY0: TWO}, None)),
                with_allow_multiple_allocations(device(DEVICE2, None, None)),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            )
        ],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(all_device_request(REQ0, CLASS_A), TWO))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_allow_multiple_allocations(device(DEVICE1, {CAPACITY0: TWO}, None)),
                with_allow_multiple_allocations(device(DEVICE2, {CAPACITY0: ONE}, None)),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            )
        ],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE),
                with_capacity_request(all_device_request(REQ1, CLASS_A), ONE),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_allow_multiple_allocations(device(DEVICE1, {CAPACITY0: TWO}, None)),
                with_allow_multiple_allocations(device(DEVICE2, {CAPACITY0: ONE}, None)),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: ONE}
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: ONE}
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE2), FIXED_SHARE_ID, {CAPACITY0: ONE}
                ),
            )
        ],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": lambda: {
        "features": go_features(consumable_capacity=True),
        "allocated_capacity_devices": {make_device_id(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: ONE}},
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(all_device_request(REQ0, CLASS_A), ONE))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_allow_multiple_allocations(device(DEVICE1, {CAPACITY0: TWO}, None)),
                with_allow_multiple_allocations(device(DEVICE2, {CAPACITY0: ONE}, None)),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: ONE}
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2), FIXED_SHARE_ID, {CAPACITY0: ONE}
                ),
            )
        ],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE),
                with_capacity_request(all_device_request(REQ1, CLASS_A), ONE),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_allow_multiple_allocations(device(DEVICE1, {CAPACITY0: ONE}, None)),
                with_allow_multiple_allocations(device(DEVICE2, {CAPACITY0: ONE}, None)),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": lambda: {
        "features": go_features(consumable_capacity=True),
        "allocated_capacity_devices": {make_device_id(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: ONE}},
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(all_device_request(REQ0, CLASS_A), ONE))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_allow_multiple_allocations(device(DEVICE1, {CAPACITY0: ONE}, None)),
                with_allow_multiple_allocations(device(DEVICE2, {CAPACITY0: ONE}, None)),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2), FIXED_SHARE_ID, {CAPACITY0: ONE}
                ),
            )
        ],
    },
    "consumable-capacity-dedicated-device-with-consumable-capacity-request": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, False)],
        "slices": [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {CAPACITY0: ONE}, None))],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE)),
            with_requests(claim(CLAIM1), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE)),
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, False)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(device(DEVICE1, None, None), {CAPACITY0: TWO}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, False)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_allow_multiple_allocations(device(DEVICE1, {CAPACITY0: ONE}, None))
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": lambda: {
        "features": go_features(consumable_capacity=True),
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE1)],
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE))
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(device(DEVICE1, None, None)), {CAPACITY0: TWO}
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(claim(CLAIM0), with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE))
        ],
        "allocated_capacity_devices": {make_device_id(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: ONE}},
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(device(DEVICE1, None, None), {CAPACITY0: TWO}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "allow-multiple-allocations-with-partitionable-device": lambda: {
        "features": go_features(prioritized_list=True, partitionable_devices=True, consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                device_request(REQ0, CLASS_A, 1),
                request_with_prioritized_list(
                    REQ1,
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
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_allow_multiple_allocations(
                    with_device_counter_consumption(
                        device(DEVICE1, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    )
                ),
                with_allow_multiple_allocations(
                    with_device_counter_consumption(
                        device(DEVICE2, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "6Gi"}),
                    )
                ),
                with_allow_multiple_allocations(
                    with_device_counter_consumption(
                        device(DEVICE3, FROM_COUNTERS, None),
                        device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    )
                ),
            ),
            slice_with_counter_sets(
                SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, {"memory": "8Gi"})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {"memory": "4Gi"}
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3),
                    FIXED_SHARE_ID,
                    {"memory": "4Gi"},
                ),
            )
        ],
    },
    "allow-multiple-allocations-with-shared-device-counter-cross-cycle": lambda: {
        "features": go_features(partitionable_devices=True, consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                with_selectors(
                    with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE),
                    {"cel": {"expression": sprintf('device.attributes["%s"].mode == "b"', DRIVER_A)}},
                ),
            )
        ],
        "allocated_shared_device_ids": [
            make_shared_device_id(make_device_id(DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID)
        ],
        "allocated_capacity_devices": {make_device_id(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: ONE}},
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_allow_multiple_allocations(
                    with_device_counter_consumption(
                        device(DEVICE1, FROM_COUNTERS, {"mode": {"string": "a"}}),
                        device_counter_consumption(COUNTER_SET1, {CAPACITY0: ONE}),
                    )
                ),
                with_allow_multiple_allocations(
                    with_device_counter_consumption(
                        device(DEVICE2, FROM_COUNTERS, {"mode": {"string": "b"}}),
                        device_counter_consumption(COUNTER_SET1, {CAPACITY0: ONE}),
                    )
                ),
            ),
            slice_with_counter_sets(
                SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A, counter_set(COUNTER_SET1, {CAPACITY0: ONE})
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "consumable-capacity-with-partitionable-device-multiple-capacity-pools": lambda: {
        "features": go_features(prioritized_list=True, partitionable_devices=True, consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE),
                with_capacity_request(device_request(REQ2, CLASS_A, 1), TWO),
                request_with_prioritized_list(
                    REQ1,
                    with_capacity_request(
                        sub_request(
                            SUB_REQ0,
                            CLASS_A,
                            1,
                            {
                                "cel": {
                                    "expression": sprintf(
                                        'device.capacity["%s"]["%s"].compareTo(quantity("4")) >= 0', DRIVER_A, CAPACITY0
                                    )
                                }
                            },
                        ),
                        ONE,
                    ),
                    with_capacity_request(
                        sub_request(
                            SUB_REQ1,
                            CLASS_A,
                            1,
                            {
                                "cel": {
                                    "expression": sprintf(
                                        'device.capacity["%s"]["%s"].compareTo(quantity("2")) >= 0', DRIVER_A, CAPACITY0
                                    )
                                }
                            },
                        ),
                        ONE,
                    ),
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
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(
                        with_device_counter_consumption(
                            device(DEVICE1, FROM_COUNTERS, None),
                            device_counter_consumption(COUNTER_SET1, {CAPACITY0: TWO}),
                            device_counter_consumption(COUNTER_SET2, {CAPACITY1: FOUR}),
                        )
                    ),
                    ({CAPACITY1: FOUR}),
                ),
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(
                        with_device_counter_consumption(
                            device(DEVICE2, FROM_COUNTERS, None),
                            device_counter_consumption(COUNTER_SET1, {CAPACITY0: FOUR}),
                            device_counter_consumption(COUNTER_SET2, {CAPACITY1: FOUR}),
                        )
                    ),
                    ({CAPACITY1: FOUR}),
                ),
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(
                        with_device_counter_consumption(
                            device(DEVICE3, FROM_COUNTERS, None),
                            device_counter_consumption(COUNTER_SET1, {CAPACITY0: TWO}),
                            device_counter_consumption(COUNTER_SET2, {CAPACITY1: FOUR}),
                        )
                    ),
                    ({CAPACITY1: FOUR}),
                ),
            ),
            slice_with_counter_sets(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, {CAPACITY0: FOUR}),
                counter_set(COUNTER_SET2, {CAPACITY1: "8"}),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1),
                    FIXED_SHARE_ID,
                    {CAPACITY0: ONE, CAPACITY1: TWO},
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ2, DRIVER_A, POOL1, DEVICE3),
                    FIXED_SHARE_ID,
                    {CAPACITY0: TWO, CAPACITY1: TWO},
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE1),
                    FIXED_SHARE_ID,
                    {CAPACITY0: ONE, CAPACITY1: TWO},
                ),
            )
        ],
    },
    "with-distinct-constraints": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                with_constraints(
                    claim(CLAIM0),
                    {"distinctAttribute": BOOL_ATTRIBUTE, "requests": [REQ0, REQ1]},
                    {"distinctAttribute": VERSION_ATTRIBUTE, "requests": [REQ0, REQ1, REQ2]},
                    {"distinctAttribute": INT_ATTRIBUTE, "requests": [REQ0, REQ1, REQ2, REQ3]},
                ),
                device_request(REQ0, CLASS_A, 1),
                device_request(REQ1, CLASS_A, 1),
                device_request(REQ2, CLASS_A, 1),
                device_request(REQ3, CLASS_A, 1),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_allow_multiple_allocations(
                    device(
                        DEVICE1,
                        None,
                        {"driverVersion": {"version": "1.0.0"}, "numa": {"int": 0}, "boolAttribute": {"bool": True}},
                    )
                ),
                with_allow_multiple_allocations(
                    device(
                        DEVICE2,
                        None,
                        {"driverVersion": {"version": "1.0.1"}, "numa": {"int": 1}, "boolAttribute": {"bool": False}},
                    )
                ),
                with_allow_multiple_allocations(
                    device(
                        DEVICE3,
                        None,
                        {"driverVersion": {"version": "1.0.2"}, "numa": {"int": 2}, "boolAttribute": {"bool": True}},
                    )
                ),
                with_allow_multiple_allocations(
                    device(
                        DEVICE4,
                        None,
                        {"driverVersion": {"version": "1.0.0"}, "numa": {"int": 3}, "boolAttribute": {"bool": True}},
                    )
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, None
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE2), FIXED_SHARE_ID, None
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ2, DRIVER_A, POOL1, DEVICE3), FIXED_SHARE_ID, None
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ3, DRIVER_A, POOL1, DEVICE4), FIXED_SHARE_ID, None
                ),
            )
        ],
    },
    "with-distinct-constraints-attribute-not-set": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                with_constraints(claim(CLAIM0), {"distinctAttribute": BOOL_ATTRIBUTE, "requests": [REQ0]}),
                device_request(REQ0, CLASS_A, 1),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_A, with_allow_multiple_allocations(device(DEVICE1, None, None))
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "with-distinct-constraints-unknown-type-attribute": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                with_constraints(claim(CLAIM0), {"distinctAttribute": BOOL_ATTRIBUTE, "requests": [REQ0]}),
                device_request(REQ0, CLASS_A, 1),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_allow_multiple_allocations(device(DEVICE1, None, {"boolAttribute": {}})),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
        "expect_error": "unsupported attribute value",
    },
    "with-distinct-constraints-with-subrequests": lambda: {
        "features": go_features(consumable_capacity=True, prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                with_constraints(claim(CLAIM0), {"distinctAttribute": BOOL_ATTRIBUTE, "requests": [REQ0, REQ1]}),
                request_with_prioritized_list(
                    REQ0,
                    sub_request(
                        SUB_REQ0,
                        CLASS_A,
                        1,
                        {"cel": {"expression": sprintf('device.attributes["%s"].boolAttribute', DRIVER_A)}},
                    ),
                    sub_request(SUB_REQ1, CLASS_A, 1),
                ),
                request_with_prioritized_list(
                    REQ1,
                    sub_request(
                        SUB_REQ0,
                        CLASS_A,
                        1,
                        {"cel": {"expression": sprintf('device.attributes["%s"].boolAttribute', DRIVER_A)}},
                    ),
                    sub_request(SUB_REQ1, CLASS_A, 1),
                ),
                request_with_prioritized_list(
                    REQ2,
                    sub_request(
                        SUB_REQ0,
                        CLASS_A,
                        1,
                        {"cel": {"expression": sprintf('device.attributes["%s"].boolAttribute', DRIVER_A)}},
                    ),
                    sub_request(SUB_REQ1, CLASS_A, 1),
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
                with_allow_multiple_allocations(device(DEVICE1, None, {"boolAttribute": {"bool": True}})),
                with_allow_multiple_allocations(device(DEVICE2, None, {"boolAttribute": {"bool": False}})),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0_SUB_REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, None
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2), FIXED_SHARE_ID, None
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ2_SUB_REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, None
                ),
            )
        ],
    },
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                with_constraints(claim(CLAIM0), {"distinctAttribute": STRING_ATTRIBUTE}),
                with_capacity_request(device_request(REQ0, CLASS_A, 1), ONE),
                with_capacity_request(device_request(REQ1, CLASS_A, 1), ONE),
            )
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(
                        device(DEVICE1, None, {"stringAttribute": {"string": "stringAttributeValue"}})
                    ),
                    {CAPACITY0: TWO},
                ),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [],
    },
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": lambda: {
        "features": go_features(consumable_capacity=True),
        "claims_to_allocate": [
            with_requests(
                with_constraints(claim(CLAIM0), {"distinctAttribute": STRING_ATTRIBUTE}),
                with_capacity_request(device_request(REQ0, CLASS_A, 1), TWO),
                with_capacity_request(device_request(REQ1, CLASS_A, 1), TWO),
            )
        ],
        "classes": [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(
                        device(DEVICE1, None, {"stringAttribute": {"string": "stringAttributeValue1"}})
                    ),
                    {CAPACITY0: FOUR},
                ),
            ),
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_capacity_request_policy_range(
                    with_allow_multiple_allocations(
                        device(DEVICE2, None, {"stringAttribute": {"string": "stringAttributeValue2"}})
                    ),
                    {CAPACITY0: FOUR},
                ),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                with_consumed_capacity(
                    device_request_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
                with_consumed_capacity(
                    device_request_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE2), FIXED_SHARE_ID, {CAPACITY0: TWO}
                ),
            )
        ],
    },
    "list-attributes-match-constaint-scalar-string-values": lambda: {
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
                device(DEVICE2, None, {"stringAttribute": {"string": "value1"}}),
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
    "list-attributes-match-constaint-list-of-string-values-with-common-elements": lambda: {
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
                device(DEVICE1, None, {"stringAttribute": {"stringValues": ["value1", "value2", "value3"]}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value2", "value3", "value4"]}}),
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
    "list-attributes-match-constaint-list-of-string-values-with-partially-common-elements": lambda: {
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
                device(DEVICE1, None, {"stringAttribute": {"stringValues": ["value1", "value2"]}}),
                device(DEVICE2, None, {"stringAttribute": {"stringValues": ["value2", "value3"]}}),
                device(DEVICE3, None, {"stringAttribute": {"stringValues": ["value3", "value1"]}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
}
