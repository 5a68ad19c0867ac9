"""Upstream's `TestPlugin` objects (`pkg/scheduler/framework/plugins/dynamicresources/
dynamicresources_test.go`, its package variables and `st` wrappers), as API-shaped dicts under
snake_case names, so that a row of `test_plugin_table.py` reads like its Go original.

Every builder returns a fresh dict: the `adminAccess`, `breakCELIn...`, `reserve` style helpers
copy before they change.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from kresched.model.dra import DeviceClass, ResourceClaim, ResourceSlice
from kresched.model.objects import Node, Pod
from tests.builders import make_node, make_pod

NODE, NODE2, NODE3 = "worker", "worker-2", "worker-3"
DRIVER, DRIVER2 = "some-driver", "some-driver-2"
POD_NAME, POD_UID = "my-pod", "1234"
POD_GROUP_NAME, POD_GROUP_UID = "my-podgroup", "5678"
RESOURCE, RESOURCE2 = "my-resource", "my-resource-2"
CLAIM_NAME, CLAIM_NAME2 = f"{POD_NAME}-{RESOURCE}", f"{POD_NAME}-{RESOURCE2}"
CLASS = "my-resource-class"
NS = "default"
ATTR = "healthy"  # a device attribute only the non-default nodes have
ER, ER2 = "example.com/gpu", "example.com/gpu2"
IMPLICIT_ER = f"deviceclass.resource.kubernetes.io/{CLASS}"
BROKEN_SELECTOR = f'device.attributes["{DRIVER}"].{ATTR}'
FINALIZER = "resource.kubernetes.io/delete-protection"
EXTENDED_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


# -- nodes and pods ----------------------------------------------------------------------------

def node(name: str = NODE, **allocatable: str) -> Node:
    """`st.MakeNode().Name(name).Label("kubernetes.io/hostname", name)`, with `allocatable`."""
    return make_node(name, extra=allocatable)


worker_node, worker_node2, worker_node3 = node(), node(NODE2), node(NODE3)


def pod(*, claims: dict[str, str] | None = None, templates: dict[str, str] | None = None,
        in_status: bool = False, containers: list[dict[str, str]] | None = None, pod_group: bool = False) -> Pod:
    """`podWith...`: `claims` / `templates` its PodResourceClaims (entry → claim or template
    name), `in_status` the template's claims named in its status, `containers` one container per
    request map (`.Req(...)`), `pod_group` its `schedulingGroup` (DRAWorkloadResourceClaims)."""
    spec: dict[str, Any] = {}
    if containers:
        spec["containers"] = [{"name": f"con{i}", "resources": {"requests": r}} for i, r in enumerate(containers)]
    if pod_group:
        spec["schedulingGroup"] = {"podGroupName": POD_GROUP_NAME}
    return make_pod(POD_NAME, NS, uid=POD_UID, owner=None, claims=claims, claim_templates=templates,
                    generated=dict(templates) if in_status and templates else None, spec=spec)


pod_with_claim_name = pod(claims={RESOURCE: CLAIM_NAME})
pod_with_claim_template = pod(templates={RESOURCE: CLAIM_NAME})
pod_with_claim_template_in_status = pod(templates={RESOURCE: CLAIM_NAME}, in_status=True)
pod_with_two_claim_names = pod(claims={RESOURCE: CLAIM_NAME, RESOURCE2: CLAIM_NAME2})
grouped_pod_with_claim_name = pod(claims={RESOURCE: CLAIM_NAME}, pod_group=True)
pod_with_extended_resource_name = pod(containers=[{ER: "1"}])
pod_with_extended_resource_name2 = pod(containers=[{ER: "1", ER2: "1"}])
pod_with_implicit_extended_resource_name = pod(containers=[{IMPLICIT_ER: "1", ER: "2"}])
pod_with_implicit_extended_resource_name_two_containers = pod(containers=[{IMPLICIT_ER: "1"}, {ER: "2"}])


# -- device classes and slices -----------------------------------------------------------------

def device_class(name: str = CLASS, *, extended: str | None = None, selectors: tuple[str, ...] = ()) -> DeviceClass:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in selectors]}
    if extended is not None:
        spec["extendedResourceName"] = extended
    return msgspec.convert({"metadata": {"name": name}, "spec": spec}, DeviceClass)


def break_cel_in_class(cls: DeviceClass) -> DeviceClass:
    return device_class(cls.name, extended=cls.spec.extended_resource_name,
                        selectors=(BROKEN_SELECTOR,) * max(1, len(cls.spec.selectors)))


def make_device(name: str, *, attrs: dict[str, bool] | None = None, **fields: Any) -> dict[str, Any]:
    return {"name": name, "attributes": {k: {"bool": v} for k, v in (attrs or {}).items()}, **fields}


def resource_slice(node_name: str, driver: str, *devices: dict[str, Any] | str, **spec: Any) -> ResourceSlice:
    """`st.MakeResourceSlice(node, driver).Device(...)...`: a device is a name or `make_device`'s."""
    devs = [make_device(d) if isinstance(d, str) else d for d in devices]
    body = {"nodeName": node_name, "driver": driver, "pool": {"name": node_name, "resourceSliceCount": 1},
            "devices": devs, **spec}
    return msgspec.convert({"metadata": {"name": f"{node_name}-{driver}"}, "spec": body}, ResourceSlice)


def instances(n: int) -> list[str]:
    return [f"instance-{i}" for i in range(1, n + 1)]


def worker_node_slice() -> ResourceSlice:
    return resource_slice(NODE, DRIVER, "instance-1")


def large_worker_node_slice() -> ResourceSlice:
    return resource_slice(NODE, DRIVER, *instances(4))


def healthy_slice(node_name: str, healthy: bool = True) -> ResourceSlice:
    """`workerNode2Slice`, `workerNode3Slice`: instance-1 with a `healthy` attribute."""
    return resource_slice(node_name, DRIVER, make_device("instance-1", attrs={ATTR: healthy}))


def taint_devices(s: ResourceSlice) -> ResourceSlice:
    raw = msgspec.to_builtins(s)
    for d in raw["spec"]["devices"]:
        d.setdefault("taints", []).append({"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"})
    return msgspec.convert(raw, ResourceSlice)


def fabric_slice(driver: str = DRIVER, device: str = "instance-1") -> ResourceSlice:
    """`fabricSlice` / `fabricSlice2`: a device that binds to the node once its binding
    conditions are met (the slice has both `nodeName` and a `nodeSelector`, as upstream's)."""
    return resource_slice(NODE, driver, make_device(device, bindsToNode=True, bindingConditions=["condition"],
                                                    bindingFailureConditions=["failed"]),
                          nodeSelector=fields_selector(NODE))


# -- claims ------------------------------------------------------------------------------------

def request(class_name: str = CLASS, count: int = 1, *, name: str = "", selectors: tuple[str, ...] = ()
            ) -> dict[str, Any]:
    """`.Request(class)` (named `req-<n>` by `claim`), `.RequestWithName[Count](name, class[, n])`."""
    exactly: dict[str, Any] = {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": name, "exactly": exactly}


def sub_request(name: str, class_name: str = CLASS, count: int = 1, selector: str = "") -> dict[str, Any]:
    """`st.SubRequest`, `st.SubRequestWithSelector`."""
    sub: dict[str, Any] = {"name": name, "deviceClassName": class_name, "allocationMode": "ExactCount",
                           "count": count}
    if selector:
        sub["selectors"] = [{"cel": {"expression": selector}}]
    return sub


def prioritized(*subs: dict[str, Any]) -> dict[str, Any]:
    """`.RequestWithPrioritizedList(subs...)`."""
    return {"name": "", "firstAvailable": list(subs)}


def claim(name: str = CLAIM_NAME, *requests: dict[str, Any], owner: str | None = None,
          annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """`st.MakeResourceClaim().Name(name).Namespace("default").Request(...)`; `owner` "pod" or
    "podgroup": `.OwnerReference(...)` to the pod or its PodGroup."""
    reqs = []
    for i, r in enumerate(requests or (request(),)):
        reqs.append({**r, "name": r["name"] or f"req-{i + 1}"})
    meta: dict[str, Any] = {"name": name, "namespace": NS, "uid": f"uid-{name}", "annotations": annotations or {}}
    if owner == "pod":
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": POD_UID,
                                    "controller": True}]
    elif owner == "podgroup":
        meta["ownerReferences"] = [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                    "name": POD_GROUP_NAME, "uid": POD_GROUP_UID, "controller": True}]
    return {"metadata": meta, "spec": {"devices": {"requests": reqs}}, "status": {}}


def fields_selector(node_name: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                     "values": [node_name]}]}]}


def labels_selector(key: str, value: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}


def result(request_name: str = "req-1", device: str = "instance-1", driver: str = DRIVER, *,
           binding: bool = False) -> dict[str, Any]:
    r: dict[str, Any] = {"request": request_name, "driver": driver, "pool": NODE, "device": device}
    if binding:
        r.update(bindingConditions=["condition"], bindingFailureConditions=["failed"])
    return r


def allocation(*results: dict[str, Any], selector: dict[str, Any] | None = None, timestamp: bool = False
               ) -> dict[str, Any]:
    """An AllocationResult (`allocationResult...`); on `worker` unless `selector` says otherwise;
    `timestamp`: the zero `allocationTimestamp` upstream's binding-conditions results carry."""
    a: dict[str, Any] = {"devices": {"results": list(results)},
                         "nodeSelector": selector if selector is not None else fields_selector(NODE)}
    if timestamp:
        a["allocationTimestamp"] = "0001-01-01T00:00:00Z"
    return a


def allocated(c: dict[str, Any], alloc: dict[str, Any] | None = None) -> dict[str, Any]:
    """`st.FromResourceClaim(c).Allocation(alloc)` (default: `allocationResult`)."""
    c = copy.deepcopy(c)
    c["metadata"]["finalizers"] = [FINALIZER]
    c["status"]["allocation"] = alloc if alloc is not None else allocation(result())
    return c


def reserve(c: dict[str, Any], *consumers: dict[str, str]) -> dict[str, Any]:
    """`reserve(claim, pod)` / `.ReservedForPodGroup(...)`: default the pod."""
    c = copy.deepcopy(c)
    c["status"]["reservedFor"] = list(consumers) or [{"resource": "pods", "name": POD_NAME, "uid": POD_UID}]
    return c


POD_GROUP_RESERVATION = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": POD_GROUP_NAME,
                         "uid": POD_GROUP_UID}


def device_statuses(c: dict[str, Any], *conditions: tuple[str, str], driver: str = DRIVER,
                    device: str = "instance-1") -> dict[str, Any]:
    """`.AllocatedDeviceStatuses(...)`: one device's (type, status) conditions."""
    c = copy.deepcopy(c)
    c["status"]["devices"] = [{"driver": driver, "pool": NODE, "device": device,
                               "conditions": [{"type": t, "status": s} for t, s in conditions]}]
    return c


def admin_access(c: dict[str, Any]) -> dict[str, Any]:
    c = copy.deepcopy(c)
    for r in c["spec"]["devices"]["requests"]:
        r["exactly"]["adminAccess"] = True
    for r in (c["status"].get("allocation") or {}).get("devices", {}).get("results", []):
        r["adminAccess"] = True
    return c


def break_cel_in_claim(c: dict[str, Any]) -> dict[str, Any]:
    c = copy.deepcopy(c)
    for r in c["spec"]["devices"]["requests"]:
        n = len(r["exactly"].get("selectors", []))
        r["exactly"]["selectors"] = [{"cel": {"expression": BROKEN_SELECTOR}}] * max(1, n)
    return c


def update_device_class_name(c: dict[str, Any], class_name: str) -> dict[str, Any]:
    c = copy.deepcopy(c)
    for r in c["spec"]["devices"]["requests"]:
        for sub in r.get("firstAvailable") or [r["exactly"]]:
            sub["deviceClassName"] = class_name
    return c


def extended_claim(*requests: dict[str, Any], alloc: dict[str, Any]) -> dict[str, Any]:
    """`extendedResourceClaim...`: the special claim an earlier cycle created for the pod."""
    c = claim("my-pod-extended-resources-0", *requests, owner="pod", annotations={EXTENDED_ANNOTATION: "true"})
    c["metadata"]["generateName"] = "my-pod-extended-resources-"
    return allocated(c, alloc)


def typed(c: dict[str, Any]) -> ResourceClaim:
    return msgspec.convert(c, ResourceClaim)


# Upstream's package variables.
pending_claim = claim(owner="pod")
pending_claim2 = claim(CLAIM_NAME2, owner="pod")
pending_pod_group_claim = claim(owner="podgroup")
other_claim = claim("not-my-claim")
other_allocated_claim = allocated(other_claim)
allocated_claim = allocated(pending_claim)
allocated_pod_group_claim = allocated(pending_pod_group_claim)
in_use_claim = reserve(allocated_claim)
large_claim = claim(CLAIM_NAME, *[request()] * 5)
claim_with_prioritized_list = claim(CLAIM_NAME, prioritized(sub_request("subreq-1")))
pending_claim_with_prioritized_list = claim(CLAIM_NAME, prioritized(sub_request("subreq-1")), owner="pod")
pending_claim_with_prioritized_list_and_selector = claim(
    CLAIM_NAME, prioritized(sub_request("subreq-1", selector=BROKEN_SELECTOR), sub_request("subreq-2")), owner="pod")
pending_claim2_with_prioritized_list_and_multiple_subrequests = claim(
    CLAIM_NAME2, prioritized(*[sub_request(f"subreq-{i}", count=5 - i) for i in range(1, 5)]), owner="pod")
pending_claim_with_multiple_prioritized_list_requests = claim(
    CLAIM_NAME, *[prioritized(sub_request("subreq-1", count=2), sub_request("subreq-2"))] * 2, owner="pod")
allocated_claim_with_wrong_topology = allocated(
    allocated_claim, {"devices": {}, "nodeSelector": labels_selector("no-such-label", "no-such-value")})
allocated_pod_group_claim_with_wrong_topology = reserve(allocated(
    allocated_pod_group_claim, {"devices": {}, "nodeSelector": labels_selector("no-such-label", "no-such-value")}),
    POD_GROUP_RESERVATION)
allocated_claim_with_good_topology = allocated(
    allocated_claim, {"devices": {}, "nodeSelector": labels_selector("kubernetes.io/hostname", NODE)})
allocation_result_with_binding_conditions = allocation(result(binding=True), timestamp=True)
bound_claim = device_statuses(allocated(pending_claim, allocation_result_with_binding_conditions),
                              ("condition", "True"), ("failed", "False"))
failed_binding_claim = device_statuses(allocated(pending_claim, allocation_result_with_binding_conditions),
                                       ("condition", "False"), ("failed", "True"))
_allocation2_with_binding_conditions = allocation(result("req-2", "instance-2", DRIVER2, binding=True), timestamp=True)
bound_claim2 = device_statuses(allocated(pending_claim2, _allocation2_with_binding_conditions),
                               ("condition", "True"), ("failed", "False"), driver=DRIVER2, device="instance-2")
failed_binding_claim2 = device_statuses(allocated(pending_claim2, _allocation2_with_binding_conditions),
                                        ("condition", "False"), ("failed", "True"), driver=DRIVER2,
                                        device="instance-2")
extended_resource_claim = extended_claim(request(name="container-0-request-0"),
                                         alloc=allocation(result("container-0-request-0")))
extended_resource_claim_node2 = extended_claim(
    request(name="container-0-request-0"), alloc=allocation(result("container-0-request-0"),
                                                            selector=fields_selector(NODE2)))
