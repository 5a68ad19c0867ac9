# ruff: noqa: E501 - rows ported line for line; long strings are upstream's
"""allocatortesting.TestAllocator, rows 44-86 of 215
("admin-access-enabled" .. "partitionable-devices-unused-counters-in-counter-set"), ported
mechanically from upstream Go (`staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
allocatortesting/allocator_testing.go`, v1.36): each row builds the same objects with the same helpers.
"""

from tests.sched.dra.upstream_builders import (
    BOOL_ATTRIBUTE,
    CLAIM0,
    CLASS_A,
    CLASS_B,
    COUNTER_SET1,
    COUNTER_SET2,
    DEVICE0,
    DEVICE1,
    DEVICE2,
    DEVICE3,
    DRIVER_A,
    DRIVER_B,
    FROM_COUNTERS,
    INT_ATTRIBUTE,
    NODE1,
    NON_EXISTENT_ATTRIBUTE,
    POOL1,
    POOL2,
    REGION1,
    REQ0,
    REQ0_SUB_REQ0,
    REQ0_SUB_REQ1,
    REQ1,
    REQ1_SUB_REQ0,
    REQ1_SUB_REQ1,
    REQ2,
    SLICE1,
    SLICE2,
    SLICE3,
    SLICE4,
    STRING_ATTRIBUTE,
    SUB_REQ0,
    SUB_REQ1,
    VERSION_ATTRIBUTE,
    allocation_result,
    allocation_result_with_config,
    allocation_result_with_configs,
    claim,
    claim_with_device_config,
    claim_with_request,
    claim_with_requests,
    class_,
    class_with_config,
    counter_set,
    device,
    device_allocation_result,
    device_claim_config,
    device_configuration,
    device_counter_consumption,
    device_request,
    go_features,
    local_node_selector,
    make_device_id,
    node,
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
    with_configs,
    with_constraints,
    with_device_counter_consumption,
    with_requests,
    with_selectors,
)


def _r43_0():
    v_c = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_c["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    return [v_c]


def _r47_0():
    v_claim = claim_with_requests(CLAIM0, [{"matchAttribute": INT_ATTRIBUTE}], request(REQ0, CLASS_A, 0))
    v_claim["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "All"
    return v_claim


def _r56_0():
    v_claim = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{}]
    return v_claim


def _r57_0():
    v_claim = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_claim["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "future-mode"
    return v_claim


def _r58_0():
    v_claim = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_claim["spec"]["devices"]["constraints"] = [{}]
    return v_claim


def _r59_0():
    v_claim = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": "noSuchVar"}}]
    return v_claim


def _r60_0():
    v_c = class_(CLASS_A, DRIVER_A)
    v_c["spec"]["selectors"][0]["cel"]["expression"] = "noSuchVar"
    return v_c


def _r61_0():
    v_claim = claim_with_request(CLAIM0, REQ0, CLASS_A)
    v_claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": "noSuchVar"}}]
    v_claim["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "All"
    return v_claim


def _r73_0():
    v_claim = with_requests(
        claim(CLAIM0),
        request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_A, 1)),
    )
    v_claim["spec"]["devices"]["requests"][0]["firstAvailable"][0]["allocationMode"] = "All"
    v_claim["spec"]["devices"]["requests"][0]["firstAvailable"][0]["count"] = 0
    return v_claim


def _r75_0():
    v_claim = with_requests(claim(CLAIM0), request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1)))
    return v_claim


ROWS = {
    "admin-access-enabled": lambda: {
        "features": go_features(admin_access=True),
        "claims_to_allocate": _r43_0(),
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE1), make_device_id(DRIVER_A, POOL1, DEVICE2)],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, True)
            )
        ],
    },
    "with-constraint": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                [
                    {"matchAttribute": INT_ATTRIBUTE},
                    {"matchAttribute": VERSION_ATTRIBUTE},
                    {"matchAttribute": STRING_ATTRIBUTE},
                    {"matchAttribute": BOOL_ATTRIBUTE},
                ],
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(
                    DEVICE1,
                    None,
                    {
                        "driverVersion": {"version": "1.0.0"},
                        "numa": {"int": 1},
                        "stringAttribute": {"string": "stringAttributeValue"},
                        "boolAttribute": {"bool": True},
                    },
                ),
                device(
                    DEVICE2,
                    None,
                    {
                        "driverVersion": {"version": "1.0.0"},
                        "numa": {"int": 1},
                        "stringAttribute": {"string": "stringAttributeValue"},
                        "boolAttribute": {"bool": True},
                    },
                ),
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
    "with-constraint-non-existent-attribute": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A, {"matchAttribute": NON_EXISTENT_ATTRIBUTE})],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "with-constraint-not-matching-int-attribute": lambda: {
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": INT_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"numa": {"int": 1}}),
                device(DEVICE2, None, {"numa": {"int": 2}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "with-constraint-not-matching-int-attribute-all-devices": lambda: {
        "claims_to_allocate": [_r47_0()],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"numa": {"int": 1}}),
                device(DEVICE2, None, {"numa": {"int": 2}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_error": "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied",
    },
    "with-constraint-not-matching-string-attribute": lambda: {
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": STRING_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"stringAttribute": {"string": "stringAttributeValue"}}),
                device(DEVICE2, None, {"stringAttribute": {"string": "stringAttributeValue2"}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "with-constraint-not-matching-bool-attribute": lambda: {
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": BOOL_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"boolAttribute": {"bool": True}}),
                device(DEVICE2, None, {"boolAttribute": {"bool": False}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "with-constraint-not-matching-version-attribute": lambda: {
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, [{"matchAttribute": VERSION_ATTRIBUTE}], request(REQ0, CLASS_A, 2))
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"driverVersion": {"version": "1.0.0"}}),
                device(DEVICE2, None, {"driverVersion": {"version": "2.0.0"}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "with-constraint-for-request": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                [{"requests": [REQ0], "matchAttribute": VERSION_ATTRIBUTE}],
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"driverVersion": {"version": "1.0.0"}}),
                device(DEVICE2, None, {"driverVersion": {"version": "2.0.0"}}),
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
    "with-constraint-for-request-retry": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0,
                [{"requests": [REQ0], "matchAttribute": VERSION_ATTRIBUTE}, {"matchAttribute": STRING_ATTRIBUTE}],
                request(REQ0, CLASS_A, 1),
                request(REQ1, CLASS_A, 1),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, None, {"driverVersion": {"version": "1.0.0"}, "stringAttribute": {"string": "a"}}),
                device(DEVICE2, None, {"driverVersion": {"version": "2.0.0"}, "stringAttribute": {"string": "b"}}),
                device(DEVICE3, None, {"driverVersion": {"version": "3.0.0"}, "stringAttribute": {"string": "b"}}),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
    "with-class-device-config": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [class_with_config(CLASS_A, DRIVER_A, "classAttribute")],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result_with_configs(
                local_node_selector(NODE1),
                [device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False)],
                [
                    {
                        "source": "FromClass",
                        "requests": [REQ0],
                        "deviceConfiguration": device_configuration(DRIVER_A, "classAttribute"),
                    }
                ],
            )
        ],
    },
    "with-class-device-config-with-multiple-request-and-configs": lambda: {
        "claims_to_allocate": [
            claim_with_requests(
                CLAIM0, [], request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1), request(REQ2, CLASS_B, 1)
            )
        ],
        "classes": [
            class_with_config(CLASS_A, DRIVER_A, "classAttribute-A"),
            class_with_config(CLASS_B, DRIVER_B, "classAttribute-B"),
        ],
        "slices": [
            slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 2),
            slice_with_one_device(SLICE2, NODE1, POOL1, DRIVER_B),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result_with_configs(
                local_node_selector(NODE1),
                [
                    device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE0, False),
                    device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE1, False),
                    device_allocation_result(REQ2, DRIVER_B, POOL1, DEVICE1, False),
                ],
                [
                    {
                        "source": "FromClass",
                        "requests": [REQ0, REQ1],
                        "deviceConfiguration": device_configuration(DRIVER_A, "classAttribute-A"),
                    },
                    {
                        "source": "FromClass",
                        "requests": [REQ2],
                        "deviceConfiguration": device_configuration(DRIVER_B, "classAttribute-B"),
                    },
                ],
            )
        ],
    },
    "claim-with-device-config": lambda: {
        "claims_to_allocate": [claim_with_device_config(CLAIM0, REQ0, CLASS_A, DRIVER_A, "deviceAttribute")],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result_with_config(
                local_node_selector(NODE1),
                DRIVER_A,
                "FromClaim",
                "deviceAttribute",
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
            )
        ],
    },
    "unknown-selector": lambda: {
        "claims_to_allocate": [_r56_0()],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_error": "CEL expression empty (unsupported selector type?)",
    },
    "unknown-allocation-mode": lambda: {
        "claims_to_allocate": [_r57_0()],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_error": "unsupported count mode future-mode",
    },
    "unknown-constraint": lambda: {
        "claims_to_allocate": [_r58_0()],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_error": "empty constraint (unsupported constraint type?)",
    },
    "invalid-CEL-one-device": lambda: {
        "claims_to_allocate": [_r59_0()],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_error": "undeclared reference",
    },
    "invalid-CEL-one-device-class": lambda: {
        "claims_to_allocate": [claim_with_request(CLAIM0, REQ0, CLASS_A)],
        "classes": [_r60_0()],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_error": "undeclared reference",
    },
    "invalid-CEL-all-devices": lambda: {
        "claims_to_allocate": [_r61_0()],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_error": "undeclared reference",
    },
    "too-many-devices-single-request": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 500))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "expect_error": "exceeds the claim limit",
    },
    "many-devices-okay": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 32))],
        "classes": [class_(CLASS_A, DRIVER_A)],
    },
    "too-many-devices-total": lambda: {
        "claims_to_allocate": [
            claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 32), request(REQ1, CLASS_A, 1))
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 32 + 1)],
        "node": node(NODE1, REGION1),
        "expect_error": "exceeds the claim limit",
    },
    "all-devices-invalid-CEL": lambda: {
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 500))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "expect_error": "exceeds the claim limit",
    },
    "prioritized-list-first-unavailable": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0, sub_request(SUB_REQ0, CLASS_B, 1), sub_request(SUB_REQ1, CLASS_A, 1)
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "prioritized-list-non-available": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0, sub_request(SUB_REQ0, CLASS_B, 2), sub_request(SUB_REQ1, CLASS_A, 2)
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
            slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": None,
    },
    "prioritized-list-device-config": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_configs(
                with_requests(
                    claim(CLAIM0),
                    request_with_prioritized_list(
                        REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_B, 2)
                    ),
                ),
                [
                    device_claim_config([REQ0_SUB_REQ0], device_configuration(DRIVER_A, "foo")),
                    device_claim_config([REQ0_SUB_REQ1], device_configuration(DRIVER_B, "bar")),
                ],
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1, None, {}), device(DEVICE2, None, {}))
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result_with_configs(
                local_node_selector(NODE1),
                [
                    device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE1, False),
                    device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE2, False),
                ],
                [
                    {
                        "source": "FromClaim",
                        "requests": [REQ0_SUB_REQ1],
                        "deviceConfiguration": device_configuration(DRIVER_B, "bar"),
                    }
                ],
            )
        ],
    },
    "prioritized-list-class-config": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0, sub_request(SUB_REQ0, CLASS_A, 2), sub_request(SUB_REQ1, CLASS_B, 2)
                ),
            )
        ],
        "classes": [class_with_config(CLASS_A, DRIVER_A, "foo"), class_with_config(CLASS_B, DRIVER_B, "bar")],
        "slices": [
            slice_with_devices(
                SLICE1, NODE1, POOL1, DRIVER_B, device(DEVICE1, None, None), device(DEVICE2, None, None)
            ),
            slice_with_devices(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE3, None, None)),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result_with_configs(
                local_node_selector(NODE1),
                [
                    device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE1, False),
                    device_allocation_result(REQ0_SUB_REQ1, DRIVER_B, POOL1, DEVICE2, False),
                ],
                [
                    {
                        "source": "FromClass",
                        "requests": [REQ0_SUB_REQ1],
                        "deviceConfiguration": device_configuration(DRIVER_B, "bar"),
                    }
                ],
            )
        ],
    },
    "prioritized-list-subrequests-with-expressions": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                with_selectors(
                    device_request(REQ0, CLASS_A, 1),
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
                request_with_prioritized_list(
                    REQ1,
                    sub_request(
                        SUB_REQ0,
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
                    sub_request(
                        SUB_REQ1,
                        CLASS_A,
                        2,
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
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {"memory": "2Gi"}, None),
                device(DEVICE2, {"memory": "2Gi"}, None),
                device(DEVICE3, {"memory": "1Gi"}, None),
            )
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE3, False),
                device_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2, False),
            )
        ],
    },
    "prioritized-list-subrequests-with-constraints-ref-parent-request": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                with_constraints(claim(CLAIM0), {"requests": [REQ0, REQ1], "matchAttribute": VERSION_ATTRIBUTE}),
                with_selectors(
                    device_request(REQ0, CLASS_A, 1),
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
                request_with_prioritized_list(
                    REQ1,
                    sub_request(
                        SUB_REQ0,
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
                    sub_request(
                        SUB_REQ1,
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
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {"memory": "8Gi"}, {"driverVersion": {"version": "1.0.0"}}),
            ),
            slice_with_devices(
                SLICE2,
                NODE1,
                POOL2,
                DRIVER_A,
                device(DEVICE2, {"memory": "2Gi"}, {"driverVersion": {"version": "2.0.0"}}),
                device(DEVICE3, {"memory": "1Gi"}, {"driverVersion": {"version": "1.0.0"}}),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL2, DEVICE3, False),
            )
        ],
    },
    "prioritized-list-subrequests-with-constraints-ref-sub-request": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                with_constraints(
                    claim(CLAIM0), {"requests": [REQ0, REQ1_SUB_REQ0], "matchAttribute": VERSION_ATTRIBUTE}
                ),
                with_selectors(
                    device_request(REQ0, CLASS_A, 1),
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
                request_with_prioritized_list(
                    REQ1,
                    sub_request(
                        SUB_REQ0,
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
                    sub_request(
                        SUB_REQ1,
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
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                device(DEVICE1, {"memory": "8Gi"}, {"driverVersion": {"version": "1.0.0"}}),
            ),
            slice_with_devices(
                SLICE2,
                NODE1,
                POOL2,
                DRIVER_A,
                device(DEVICE2, {"memory": "2Gi"}, {"driverVersion": {"version": "2.0.0"}}),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL2, DEVICE2, False),
            )
        ],
    },
    "prioritized-list-subrequests-with-allocation-mode-all": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [_r73_0()],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None))
        ],
        "allocated_devices": [make_device_id(DRIVER_A, POOL1, DEVICE1)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE2, False)
            )
        ],
    },
    "prioritized-list-allocation-mode-all-multiple-requests": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                device_request(REQ0, CLASS_A, 1),
                request_with_prioritized_list(
                    REQ1,
                    with_allocation_mode(sub_request(SUB_REQ0, CLASS_A, 0), "All"),
                    sub_request(SUB_REQ1, CLASS_A, 1),
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, None), device(DEVICE2, None, None))
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2, False),
            )
        ],
    },
    "prioritized-list-disabled": lambda: {
        "features": go_features(prioritized_list=False),
        "claims_to_allocate": [_r75_0()],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": None,
        "expect_error": "claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled",
    },
    "prioritized-list-multi-request": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                with_selectors(
                    device_request(REQ1, CLASS_A, 1),
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
                request_with_prioritized_list(
                    REQ0,
                    sub_request(
                        SUB_REQ0,
                        CLASS_A,
                        1,
                        {
                            "cel": {
                                "expression": sprintf(
                                    'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', DRIVER_A
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
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"}, {})),
            slice_with_devices(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "4Gi"}, {})),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL2, DEVICE2, False),
            )
        ],
    },
    "prioritized-list-with-backtracking": lambda: {
        "features": go_features(prioritized_list=True),
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
                                    'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', DRIVER_A
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
                with_selectors(
                    device_request(REQ1, CLASS_A, 1),
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', DRIVER_A
                            )
                        }
                    },
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, {"memory": "8Gi"}, {})),
            slice_with_devices(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, {"memory": "4Gi"}, {})),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL2, DEVICE2, False),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE1, False),
            )
        ],
    },
    "prioritized-list-too-many-in-first-subrequest": lambda: {
        "features": go_features(prioritized_list=True),
        "claims_to_allocate": [
            with_requests(
                claim(CLAIM0),
                request_with_prioritized_list(
                    REQ0, sub_request(SUB_REQ0, CLASS_B, 500), sub_request(SUB_REQ1, CLASS_A, 1)
                ),
            )
        ],
        "classes": [class_(CLASS_A, DRIVER_A), class_(CLASS_B, DRIVER_B)],
        "slices": [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1), device_allocation_result(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, False)
            )
        ],
    },
    "partitionable-devices-single-device": lambda: {
        "features": go_features(partitionable_devices=True),
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
    "partitionable-devices-prioritized-list": lambda: {
        "features": go_features(prioritized_list=True, partitionable_devices=True),
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
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "6Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE3, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
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
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
    "partitionable-devices-multiple-devices": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "6Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE3, FROM_COUNTERS, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
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
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
    "partitionable-devices-multiple-capacity-pools": lambda: {
        "features": go_features(prioritized_list=True, partitionable_devices=True),
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
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    device_counter_consumption(COUNTER_SET2, {"cpus": "4"}),
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"memory": "6Gi"}),
                    device_counter_consumption(COUNTER_SET2, {"cpus": "6"}),
                ),
                with_device_counter_consumption(
                    device(DEVICE3, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"}),
                    device_counter_consumption(COUNTER_SET2, {"cpus": "4"}),
                ),
            ),
            slice_with_counter_sets(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, {"memory": "18Gi"}),
                counter_set(COUNTER_SET2, {"cpus": "8"}),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE1, False),
                device_allocation_result(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
    "partitionable-devices-multiple-counters": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"memory": "4Gi", "cpus": "6"}),
                    device_counter_consumption(COUNTER_SET2, {"cpus": "4", "memory": "2Gi"}),
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"memory": "6Gi", "cpus": "4"}),
                    device_counter_consumption(COUNTER_SET2, {"cpus": "6", "memory": "6Gi"}),
                ),
                with_device_counter_consumption(
                    device(DEVICE3, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"memory": "4Gi", "cpus": "4"}),
                    device_counter_consumption(COUNTER_SET2, {"cpus": "4", "memory": "4Gi"}),
                ),
            ),
            slice_with_counter_sets(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, {"cpus": "8", "memory": "18Gi"}),
                counter_set(COUNTER_SET2, {"cpus": "12", "memory": "18Gi"}),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
                device_allocation_result(REQ1, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
    "partitionable-devices-multiple-pools": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"cpus": "6", "memory": "4Gi"}),
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"cpus": "4", "memory": "6Gi"}),
                ),
                with_device_counter_consumption(
                    device(DEVICE3, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"cpus": "4", "memory": "4Gi"}),
                ),
            ),
            slice_with_counter_sets(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, {"cpus": "8", "memory": "18Gi"}),
            ),
            slice_with_devices(
                SLICE3,
                NODE1,
                resource_pool(POOL2, 2),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"cpus": "6", "memory": "4Gi"}),
                ),
                with_device_counter_consumption(
                    device(DEVICE2, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"cpus": "1", "memory": "7Gi"}),
                ),
                with_device_counter_consumption(
                    device(DEVICE3, FROM_COUNTERS, None),
                    device_counter_consumption(COUNTER_SET1, {"cpus": "1", "memory": "7Gi"}),
                ),
            ),
            slice_with_counter_sets(
                SLICE4,
                NODE1,
                resource_pool(POOL2, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, {"cpus": "8", "memory": "18Gi"}),
            ),
        ],
        "allocated_devices": [
            make_device_id(DRIVER_A, POOL1, DEVICE2),
            make_device_id(DRIVER_A, POOL1, DEVICE3),
            make_device_id(DRIVER_A, POOL2, DEVICE1),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL2, DEVICE2, False),
                device_allocation_result(REQ1, DRIVER_A, POOL2, DEVICE3, False),
            )
        ],
    },
    "partitionable-devices-unused-counters-in-counter-set": lambda: {
        "features": go_features(partitionable_devices=True),
        "claims_to_allocate": [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
        "classes": [class_(CLASS_A, DRIVER_A)],
        "slices": [
            slice_with_devices(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                with_device_counter_consumption(
                    device(DEVICE1, None, None), device_counter_consumption(COUNTER_SET1, {"memory": "5Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE2, None, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
                ),
                with_device_counter_consumption(
                    device(DEVICE3, None, None), device_counter_consumption(COUNTER_SET1, {"memory": "4Gi"})
                ),
            ),
            slice_with_counter_sets(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 2),
                DRIVER_A,
                counter_set(COUNTER_SET1, {"memory": "8Gi", "unused": "1Gi"}),
            ),
        ],
        "node": node(NODE1, REGION1),
        "expect_results": [
            allocation_result(
                local_node_selector(NODE1),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE2, False),
                device_allocation_result(REQ0, DRIVER_A, POOL1, DEVICE3, False),
            )
        ],
    },
}
