"""Upstream's `TestPlugin` table (`pkg/scheduler/framework/plugins/dynamicresources/
dynamicresources_test.go`, 86 rows), what the scheduler decides in each: PreEnqueue and PreFilter
rejections, each node's Filter verdict (an Error ending the cycle), the scores and normalized scores
when more than one node passes, and PostFilter's note when none does. The harness follows
upstream's `testPlugin` loop with kresched's plugin object on a Snapshot of the row's cluster.

Rows keep upstream's names. Phases that write API objects (Reserve, Unreserve, PreBind, PostBind)
are not simulated: a row about those alone keeps its earlier phases (they must pass). Rows that
need a feature upstream's harness turns off while v1.36 has it on, an alpha feature, in-flight
allocations or the wall clock are skipped with the reason.

Messages are compared whole (upstream matches substrings); codes are the ones
`dynamicresources.go` returns (every rejection UnschedulableAndUnresolvable), not the tests'.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from kresched.model.objects import Node, Pod
from kresched.sched.dynamic_resources import DynamicResources, post_filter_note
from kresched.sched.framework import Code, CycleState, Snapshot
from tests.builders import make_pod, make_state
from tests.sched.dra.plugin_rows import (
    CLASS,
    DRIVER,
    DRIVER2,
    ER,
    ER2,
    NODE,
    NODE2,
    NODE3,
    admin_access,
    allocated_claim,
    allocated_claim_with_good_topology,
    allocated_claim_with_wrong_topology,
    allocated_pod_group_claim,
    allocated_pod_group_claim_with_wrong_topology,
    bound_claim,
    bound_claim2,
    break_cel_in_claim,
    break_cel_in_class,
    claim,
    claim_with_prioritized_list,
    device_class,
    extended_resource_claim,
    extended_resource_claim_node2,
    fabric_slice,
    failed_binding_claim,
    failed_binding_claim2,
    grouped_pod_with_claim_name,
    healthy_slice,
    in_use_claim,
    instances,
    large_worker_node_slice,
    node,
    other_allocated_claim,
    other_claim,
    pending_claim,
    pending_claim2_with_prioritized_list_and_multiple_subrequests,
    pending_claim_with_multiple_prioritized_list_requests,
    pending_claim_with_prioritized_list,
    pending_claim_with_prioritized_list_and_selector,
    pod_with_claim_name,
    pod_with_claim_template,
    pod_with_claim_template_in_status,
    pod_with_extended_resource_name,
    pod_with_extended_resource_name2,
    pod_with_implicit_extended_resource_name,
    pod_with_implicit_extended_resource_name_two_containers,
    pod_with_two_claim_names,
    resource_slice,
    taint_devices,
    typed,
    update_device_class_name,
    worker_node,
    worker_node2,
    worker_node3,
    worker_node_slice,
)

SKIP = "skip"  # PreFilter's Skip
NOT_AVAILABLE = "resourceclaim not available on the node"
CANNOT_ALLOCATE = "cannot allocate all claims"
CEL_ERROR = "claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: healthy"


@dataclass
class Row:
    pod: Pod
    claims: list[dict[str, Any]] = field(default_factory=list)
    classes: list[Any] = field(default_factory=list)
    objs: list[Any] = field(default_factory=list)  # ResourceSlices
    nodes: list[Node] = field(default_factory=lambda: [worker_node])
    #: PreEnqueue's rejection (kresched's PreFilter gives it; upstream's loop stops there).
    preenqueue: str | None = None
    #: PreFilter's rejection, or SKIP; None: success.
    prefilter: str | None = None
    #: Node → Filter's rejection (absent: the node passes).
    filter: dict[str, str] = field(default_factory=dict)
    #: (node, text): Filter's Error there, which ends the cycle.
    error: tuple[str, str] | None = None
    scores: dict[str, int] = field(default_factory=dict)
    normalized: dict[str, int] = field(default_factory=dict)
    postfilter: str | None = None


def skip(reason: str) -> Any:
    return pytest.param(None, marks=pytest.mark.skip(reason=reason))


ALPHA_POD_GROUP = "PodGroup claims (DRAWorkloadResourceClaims) are alpha, off in v1.36"
IN_FLIGHT = "in-flight allocations of other pods (in Reserve..PreBind) are not in a snapshot"
BINDING_TIMEOUT = "binding-conditions timeout compares allocationTimestamp + 600s with the wall clock"
NODE_ALLOCATABLE = "DRANodeAllocatableResources is alpha, off in v1.36"

FOO = make_pod("foo", owner=None)
ALLOCATED = [allocated_claim, other_claim]
WITH_RESOURCES = {"pod": pod_with_claim_name, "claims": [pending_claim], "classes": [device_class()],
                  "objs": [worker_node_slice()]}
EXTENDED = {"pod": pod_with_extended_resource_name, "classes": [device_class(extended=ER)],
            "objs": [worker_node_slice()]}
LEFTOVER = {**EXTENDED, "filter": {NODE: "cannot schedule extended resource claim"},
            "postfilter": "deletion of ResourceClaim completed"}
ONE_CLAIM_MISSING = {"pod": pod_with_claim_template_in_status}
MULTI = {"pod": pod_with_two_claim_names, "classes": [device_class()], "objs": [fabric_slice(),
                                                                             fabric_slice(DRIVER2, "instance-2")]}
UNAVAILABLE = {"filter": {NODE: NOT_AVAILABLE}, "postfilter": "deallocation of ResourceClaim completed"}


def deleted(c: dict[str, Any]) -> dict[str, Any]:
    c = copy.deepcopy(c)
    c["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return c


def not_owned(c: dict[str, Any]) -> dict[str, Any]:
    c = copy.deepcopy(c)
    c["metadata"]["ownerReferences"][0]["uid"] += "123"
    return c


ROWS: dict[str, Any] = {
    "empty": Row(FOO, prefilter=SKIP),
    "empty-with-extended-resources-enabled": Row(FOO, prefilter=SKIP),
    "claim-reference": Row(pod_with_claim_name, ALLOCATED),
    "claim-template": Row(pod_with_claim_template_in_status, ALLOCATED),
    "podgroup-claim-reference-feature-disabled-reserves-for-pod": Row(grouped_pod_with_claim_name,
                                                                      [allocated_pod_group_claim, other_claim]),
    "podgroup-claim-reference": skip(ALPHA_POD_GROUP),
    "podgroup-claim-template": skip(ALPHA_POD_GROUP),
    "missing-claim": Row(pod_with_claim_template, ALLOCATED,
                         preenqueue='pod "default/my-pod": ResourceClaim not created yet'),
    "deleted-claim": Row(pod_with_claim_template_in_status, [deleted(allocated_claim)],
                         preenqueue='resourceclaim "my-pod-my-resource" is being deleted'),
    "wrong-claim": Row(pod_with_claim_template_in_status, [not_owned(allocated_claim)],
                       preenqueue="ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod "
                                 "(Pod is not owner)"),
    "no-resources": Row(pod_with_claim_name, [pending_claim], [device_class()], filter={NODE: CANNOT_ALLOCATE},
                        postfilter="still not schedulable"),
    "with-resources": Row(**WITH_RESOURCES),
    "podgroup-with-resources": skip(ALPHA_POD_GROUP),
    "podgroup-with-resources-feature-disabled-reserves-for-pod": Row(
        grouped_pod_with_claim_name, [claim(owner="podgroup")], [device_class()], [worker_node_slice()]),
    # The finalizer is not part of what the scheduler decides; these rows' subject is PreBind.
    "with-resources-has-finalizer": Row(**WITH_RESOURCES),
    "with-resources-finalizer-gets-removed": Row(**WITH_RESOURCES),
    "with-resources-finalizer-gets-added": Row(**WITH_RESOURCES),
    "skip-bind": Row(**WITH_RESOURCES),
    "exhausted-resources-in-informer-cache": Row(**{**WITH_RESOURCES, "claims": [pending_claim, other_allocated_claim]},
                                                 filter={NODE: CANNOT_ALLOCATE}, postfilter="still not schedulable"),
    "exhausted-resources-in-flight-claim": skip(IN_FLIGHT),
    "other-resources-in-flight-claim": skip(IN_FLIGHT),
    "tainted-device-disabled": skip("needs DRADeviceTaints off (upstream's harness default); on in v1.36"),
    "tainted-device-enabled": Row(**{**WITH_RESOURCES, "objs": [taint_devices(worker_node_slice())]},
                                  filter={NODE: CANNOT_ALLOCATE}, postfilter="still not schedulable"),
    "request-admin-access-with-DRAAdminAccess-featuregate": Row(
        **{**WITH_RESOURCES, "claims": [admin_access(pending_claim), other_allocated_claim]}),
    "request-admin-access-without-DRAAdminAccess-featuregate": skip("needs DRAAdminAccess off (v1.35 emulation); "
                                                                    "GA and locked on in v1.36"),
    "structured-ignore-allocated-admin-access": Row(
        **{**WITH_RESOURCES, "claims": [pending_claim, admin_access(other_allocated_claim)]}),
    "claim-parameters-CEL-runtime-error": Row(**{**WITH_RESOURCES, "claims": [break_cel_in_claim(pending_claim)]},
                                              error=(NODE, CEL_ERROR)),
    "class-parameters-CEL-runtime-error": Row(
        **{**WITH_RESOURCES, "classes": [break_cel_in_class(device_class())]},
        error=(NODE, "class my-resource-class: selector #0: CEL runtime error: no such key: healthy")),
    "CEL-runtime-error-for-one-of-two-nodes": Row(
        pod_with_claim_name, [break_cel_in_claim(pending_claim)], [device_class()],
        [worker_node_slice(), healthy_slice(NODE2)], [worker_node, worker_node2], error=(NODE, CEL_ERROR)),
    "CEL-runtime-error-for-one-of-three-nodes": Row(
        pod_with_claim_name, [break_cel_in_claim(pending_claim)], [device_class()],
        [worker_node_slice(), healthy_slice(NODE2), healthy_slice(NODE3)], [worker_node, worker_node2, worker_node3],
        error=(NODE, CEL_ERROR)),
    "missing-class": Row(pod_with_claim_name, [pending_claim],
                         prefilter=f"request req-1: device class {CLASS} does not exist",
                         postfilter="no new claims to deallocate"),
    "wrong-topology": Row(pod_with_claim_name, [allocated_claim_with_wrong_topology], **UNAVAILABLE),
    "good-topology": Row(pod_with_claim_name, [allocated_claim_with_good_topology]),
    "bind-failure": Row(pod_with_claim_name, [allocated_claim_with_good_topology]),
    "bind-podgroup-failure": skip(ALPHA_POD_GROUP),
    "postfilter-unreserve-podgroup": skip(ALPHA_POD_GROUP),
    "postfilter-skip-unreserve-podgroup-feature-disabled": Row(
        grouped_pod_with_claim_name, [allocated_pod_group_claim_with_wrong_topology], [device_class()],
        filter={NODE: NOT_AVAILABLE}, postfilter="still not schedulable"),
    "postfilter-deallocate-podgroup": skip(ALPHA_POD_GROUP),
    "postfilter-skip-unreserve-podgroup-when-pods-active": skip(ALPHA_POD_GROUP),
    "postfilter-skip-unreserve-podgroup-other-claim-deallocated": skip(ALPHA_POD_GROUP),
    "reserved-okay": Row(pod_with_claim_name, [in_use_claim]),
    "reserved-okay-podgroup": skip(ALPHA_POD_GROUP),
    "DRA-disabled": skip("needs DynamicResourceAllocation off; GA and locked on in v1.36"),
    "claim-with-request-with-unknown-device-class": Row(
        pod_with_claim_name, [update_device_class_name(claim(), "does-not-exist")],
        prefilter="request req-1: device class does-not-exist does not exist",
        postfilter="no new claims to deallocate"),
    "claim-with-prioritized-list-feature-disabled": skip("needs DRAPrioritizedList off (upstream's harness default); "
                                                         "GA and on in v1.36"),
    "claim-with-prioritized-list-unknown-device-class": Row(
        pod_with_claim_name, [update_device_class_name(claim_with_prioritized_list, "does-not-exist")],
        prefilter="request req-1/subreq-1: device class does-not-exist does not exist",
        postfilter="no new claims to deallocate"),
    "claim-with-prioritized-list": Row(**{**WITH_RESOURCES, "claims": [pending_claim_with_prioritized_list]}),
    "extended-resource-name-with-node-resource": Row(pod_with_extended_resource_name,
                                                     classes=[device_class(extended=ER)], nodes=[node(**{ER: "1"})]),
    "extended-resource-one-device-plugin-one-dra": Row(
        pod_with_extended_resource_name2, classes=[device_class(extended=ER), device_class(CLASS + "2", extended=ER2)],
        objs=[worker_node_slice()], nodes=[node(**{ER: "1"})]),
    "extended-resource-name-with-zero-allocatable": Row(**EXTENDED, nodes=[node(**{ER: "0"})]),
    "non-DRA-extended-resource-name-with-zero-allocatable": Row(
        pod_with_extended_resource_name, classes=[device_class()], objs=[worker_node_slice()],
        nodes=[node(**{ER: "0"})], prefilter=SKIP),
    "extended-resource-name-no-resource": Row(pod_with_extended_resource_name, classes=[device_class(extended=ER)],
                                              filter={NODE: CANNOT_ALLOCATE}, postfilter="still not schedulable"),
    "extended-resource-name-with-resources": Row(**EXTENDED),
    "implicit-extended-resource-name-with-resources": Row(
        pod_with_implicit_extended_resource_name, classes=[device_class(extended=ER)],
        objs=[large_worker_node_slice()]),
    "implicit-extended-resource-name-two-containers-with-resources": Row(
        pod_with_implicit_extended_resource_name_two_containers, classes=[device_class(extended=ER)],
        objs=[large_worker_node_slice()]),
    "extended-resource-name-with-resources-fail-patch": Row(**EXTENDED),
    "extended-resource-name-with-resources-has-claim": Row(**LEFTOVER, claims=[extended_resource_claim]),
    "extended-resource-name-with-resources-delete-claim": Row(**LEFTOVER, claims=[extended_resource_claim_node2]),
    "extended-resource-name-bind-failure": Row(**EXTENDED),
    "extended-resource-name-skip-bind": Row(**EXTENDED),
    "extended-resource-name-claim-creation-failure": Row(**EXTENDED),
    "canceled": skip("Filter with a cancelled context: kresched's Filter has no caller that cancels"),
    "timeout": skip("a 1ns filterTimeout: wall-clock timing"),
    "timeout_disabled": Row(**WITH_RESOURCES),
    "timeout_zero": Row(**WITH_RESOURCES),
    # DRADeviceBindingConditions off changes only PreBind's write here (no device has conditions).
    "dont-add-allocation-timestamp": Row(**WITH_RESOURCES),
    "add-allocation-timestamp": Row(**WITH_RESOURCES),
    "add-allocation-timestamp-failure": Row(pod_with_claim_name, [allocated_claim]),
    "bind-claim-with-binding-conditions": Row(**{**WITH_RESOURCES, "objs": [fabric_slice()]}),
    "bind-failure-concurrent-deallocation": Row(**{**WITH_RESOURCES, "objs": [fabric_slice()]}),
    "bound-claim-with-succeeded-binding-conditions": Row(pod_with_claim_name, [bound_claim]),
    "bound-claim-with-failed-binding": Row(pod_with_claim_name, [failed_binding_claim], objs=[worker_node_slice()],
                                           **UNAVAILABLE),
    "bound-claim-with-timed-out-binding": skip(BINDING_TIMEOUT),
    "prebind-fail-with-binding-timeout": skip(BINDING_TIMEOUT),
    "bound-claim-with-mixed-binding-conditions": skip(BINDING_TIMEOUT),
    "bound-claim-without-binding-conditions": Row(pod_with_claim_template_in_status, ALLOCATED),
    "multi-claims-binding-conditions-all-success": Row(**MULTI, claims=[bound_claim, bound_claim2]),
    "multi-claims-binding-conditions-one-fail": Row(**MULTI, claims=[bound_claim, failed_binding_claim2],
                                                    **UNAVAILABLE),
    "single-claim-prioritized-list-scoring": Row(
        pod_with_claim_name, [pending_claim_with_prioritized_list_and_selector], [device_class()],
        [healthy_slice(NODE, True), healthy_slice(NODE2, False)], [worker_node, worker_node2],
        scores={NODE: 8, NODE2: 7}, normalized={NODE: 100, NODE2: 87}),
    "multiple-claims-prioritized-list-scoring": Row(
        pod_with_two_claim_names,
        [pending_claim_with_prioritized_list, pending_claim2_with_prioritized_list_and_multiple_subrequests],
        [device_class()],
        [resource_slice(NODE, DRIVER, *instances(4)), resource_slice(NODE2, DRIVER, *instances(2)),
         resource_slice(NODE3, DRIVER, *instances(1))], [worker_node, worker_node2, worker_node3],
        filter={NODE3: CANNOT_ALLOCATE}, scores={NODE: 15, NODE2: 13}, normalized={NODE: 100, NODE2: 86}),
    "multiple-requests-prioritized-list-scoring": Row(
        pod_with_claim_name, [pending_claim_with_multiple_prioritized_list_requests], [device_class()],
        [resource_slice(NODE, DRIVER, *instances(4)), resource_slice(NODE2, DRIVER, *instances(3)),
         resource_slice(NODE3, DRIVER, *instances(2))], [worker_node, worker_node2, worker_node3],
        scores={NODE: 16, NODE2: 15, NODE3: 14}, normalized={NODE: 100, NODE2: 93, NODE3: 87}),
    "node-allocatable-resource-multiplier": skip(NODE_ALLOCATABLE),
    "node-allocatable-resource-capacitykey": skip(NODE_ALLOCATABLE),
    "node-allocatable-resource-capacitykey-and-multiplier": skip(NODE_ALLOCATABLE),
    "node-allocatable-resource-insufficient-resources-with-multiplier": skip(NODE_ALLOCATABLE),
    "node-allocatable-resource-insufficient-with-capacityKey": skip(NODE_ALLOCATABLE),
}


def test_the_table_has_upstreams_86_rows() -> None:
    assert len(ROWS) == 86


def _params() -> list[Any]:
    out = []
    for name, r in ROWS.items():
        if not isinstance(r, Row):
            out.append(pytest.param(r.values[0], marks=r.marks, id=name))
        else:
            out.append(pytest.param(r, id=name))
    return out


@pytest.mark.parametrize("row", _params())
def test_plugin(row: Row) -> None:
    """upstream's testPlugin loop: PreFilter; Filter per node, stopping at an Error; Score and
    NormalizeScore when more than one node passes; PostFilter when none does."""
    state = make_state(row.nodes, [row.pod], dra=[*row.classes, *row.objs, *(typed(c) for c in row.claims)])
    snapshot = Snapshot.from_state(state)
    plugin, cycle, pod = DynamicResources(), CycleState(), state.pod(row.pod.key)
    pre = plugin.pre_filter(cycle, pod, snapshot).status
    if row.preenqueue is not None:
        assert (pre.code, pre.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (row.preenqueue,))
        return
    if row.prefilter == SKIP:
        assert pre.code == Code.SKIP
    elif row.prefilter is not None:
        assert (pre.code, pre.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (row.prefilter,))
    else:
        assert pre.is_success, pre
    feasible: list[str] = []
    if not pre.is_rejected:
        for info in snapshot.node_infos:
            st = plugin.filter(cycle, pod, info)
            if row.error is not None and info.name == row.error[0]:
                assert (st.code, st.reasons) == (Code.ERROR, (row.error[1],))
                return  # an Error aborts the cycle
            if info.name in row.filter:
                assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (row.filter[info.name],))
            else:
                assert st.is_success, (info.name, st)
                feasible.append(info.name)
    assert row.error is None
    if len(feasible) > 1:
        infos = [snapshot.by_name[n] for n in feasible]
        pre_score = plugin.pre_score(cycle, pod, infos, snapshot)
        scores = [0 if pre_score.code == Code.SKIP else plugin.score(cycle, pod, i) for i in infos]
        assert dict(zip(feasible, scores, strict=True)) == {n: row.scores.get(n, 0) for n in feasible}
        plugin.normalize_score(cycle, pod, scores)
        assert dict(zip(feasible, scores, strict=True)) == {n: row.normalized.get(n, 0) for n in feasible}
    else:
        assert not row.scores
    if feasible:
        assert row.postfilter is None
    else:
        assert post_filter_note(cycle) == row.postfilter
