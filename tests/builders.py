"""Tiny builders for test objects: `make_pod(...)`, `make_node(...)`, `make_pdb(...)`, ...

They build the same typed objects the loader builds (through `msgspec.convert` of API-shaped
dicts), so a test reads like the YAML an operator would write.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.dra import DRA_KINDS, DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from kresched.model.gangs import PodGroup
from kresched.model.lease import Lease
from kresched.model.objects import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from kresched.model.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kresched.sources.decode import Objects
from kresched.sources.snapshot import build_state


def make_node(name: str = "node-a", *, cpu: str | int = "4", memory: str = "8Gi", pods: int = 110,
              labels: dict[str, str] | None = None, taints: list[dict[str, Any]] | None = None,
              unschedulable: bool = False, extra: dict[str, str] | None = None, ready: bool = True) -> Node:
    allocatable: dict[str, Any] = {"cpu": str(cpu), "memory": memory, "pods": str(pods),
                                   "ephemeral-storage": "100Gi", **(extra or {})}
    return msgspec.convert({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"unschedulable": unschedulable, "taints": taints or []},
        "status": {"allocatable": allocatable, "capacity": allocatable,
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }, Node)


def make_lost_node(name: str = "node-x", *, ready: str = "Unknown", taints: bool = True,
                   added: str | None = "2026-11-28T22:00:00Z", cpu: str = "4") -> Node:
    """A node as the node-lifecycle controller leaves it when its kubelet stops reporting: Ready
    Unknown (NodeStatusUnknown) since `added`, and — with `taints` — `node.kubernetes.io/unreachable`
    NoSchedule and NoExecute added then (`not-ready` for `ready="False"`)."""
    node = msgspec.to_builtins(make_node(name, cpu=cpu))
    if taints:
        key = "node.kubernetes.io/unreachable" if ready == "Unknown" else "node.kubernetes.io/not-ready"
        node["spec"]["taints"] = [{"key": key, "effect": "NoSchedule", "timeAdded": added},
                                  {"key": key, "effect": "NoExecute", "timeAdded": added}]
    node["status"]["conditions"] = [{"type": "Ready", "status": ready, "reason": "NodeStatusUnknown",
                                     "message": "Kubelet stopped posting node status.", "lastTransitionTime": added}]
    return msgspec.convert(node, Node)


def make_node_lease(node: str, renewed: str, seconds: int = 40) -> Lease:
    """The kubelet's heartbeat for `node` (kube-node-lease), last renewed at `renewed`."""
    return msgspec.convert({"metadata": {"name": node, "namespace": "kube-node-lease"},
                            "spec": {"holderIdentity": node, "leaseDurationSeconds": seconds, "renewTime": renewed}},
                           Lease)


def make_pod(name: str = "pod", namespace: str = "default", *, node: str = "", cpu: str | None = None,
             memory: str | None = None, limits: dict[str, str] | None = None, priority: int | None = 0,
             priority_class: str = "", labels: dict[str, str] | None = None,
             annotations: dict[str, str] | None = None, owner: str | None = "ReplicaSet/rs",
             phase: str | None = None, grace: int | None = None, ports: list[dict[str, Any]] | None = None,
             tolerations: list[dict[str, Any]] | None = None, node_selector: dict[str, str] | None = None,
             affinity: dict[str, Any] | None = None, spread: list[dict[str, Any]] | None = None,
             volumes: list[dict[str, Any]] | None = None, start_time: str | None = "2026-01-01T00:00:00Z",
             preemption_policy: str | None = None, extra_requests: dict[str, str] | None = None,
             init_containers: list[dict[str, Any]] | None = None, deletion_timestamp: str | None = None,
             nominated_node: str = "", ready: bool = True, uid: str | None = None,
             spec: dict[str, Any] | None = None, claims: dict[str, str] | None = None,
             claim_templates: dict[str, str] | None = None, generated: dict[str, str | None] | None = None) -> Pod:
    """A pod with one container. `owner` is `Kind/name` of its controller, or None for a bare pod.
    `claims` (entry → ResourceClaim name) and `claim_templates` (entry → ResourceClaimTemplate
    name) are its `spec.resourceClaims`; `generated` its `status.resourceClaimStatuses` (entry →
    the claim made from the template)."""
    requests: dict[str, str] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    requests.update(extra_requests or {})
    container: dict[str, Any] = {"name": "main", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": requests, "limits": limits or {}},
                                 "ports": ports or []}
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}",
                            "labels": labels or {}, "annotations": annotations or {}}
    if owner:
        kind, _, oname = owner.partition("/")
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": oname,
                                    "uid": f"uid-{oname}", "controller": True}]
    if deletion_timestamp:
        meta["deletionTimestamp"] = deletion_timestamp
    pod_spec: dict[str, Any] = {"containers": [container], "nodeName": node,
                                "priorityClassName": priority_class,
                                "tolerations": tolerations or [], "nodeSelector": node_selector or {},
                                "topologySpreadConstraints": spread or [], "volumes": volumes or [],
                                "initContainers": init_containers or []}
    if priority is not None:
        pod_spec["priority"] = priority
    if grace is not None:
        pod_spec["terminationGracePeriodSeconds"] = grace
    if affinity is not None:
        pod_spec["affinity"] = affinity
    if preemption_policy is not None:
        pod_spec["preemptionPolicy"] = preemption_policy
    resource_claims = [{"name": k, "resourceClaimName": v} for k, v in (claims or {}).items()]
    resource_claims += [{"name": k, "resourceClaimTemplateName": v} for k, v in (claim_templates or {}).items()]
    if resource_claims:
        pod_spec["resourceClaims"] = resource_claims
    pod_spec.update(spec or {})
    status: dict[str, Any] = {"phase": phase or ("Running" if node else "Pending"),
                              "nominatedNodeName": nominated_node}
    if generated:
        status["resourceClaimStatuses"] = [{"name": k, "resourceClaimName": v} for k, v in generated.items()]
    if start_time and node:
        status["startTime"] = start_time
    if node:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return msgspec.convert({"metadata": meta, "spec": pod_spec, "status": status}, Pod)


def make_pdb(name: str, namespace: str = "default", *, selector: dict[str, str], min_available: int | str | None = None,
             max_unavailable: int | str | None = None, disruptions_allowed: int | None = None,
             policy: str | None = None, disrupted: dict[str, str] | None = None) -> PodDisruptionBudget:
    spec: dict[str, Any] = {"selector": {"matchLabels": selector}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    if policy is not None:
        spec["unhealthyPodEvictionPolicy"] = policy
    obj: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace}, "spec": spec}
    if disruptions_allowed is not None:
        obj["status"] = {"disruptionsAllowed": disruptions_allowed, "disruptedPods": disrupted or {}}
    return msgspec.convert(obj, PodDisruptionBudget)


def make_priority_class(name: str, value: int, *, global_default: bool = False,
                        preemption_policy: str | None = None) -> PriorityClass:
    obj: dict[str, Any] = {"metadata": {"name": name}, "value": value, "globalDefault": global_default}
    if preemption_policy:
        obj["preemptionPolicy"] = preemption_policy
    return msgspec.convert(obj, PriorityClass)


def make_namespace(name: str, labels: dict[str, str] | None = None) -> Namespace:
    return msgspec.convert({"metadata": {"name": name, "labels": labels or {}}}, Namespace)


def make_pv(name: str, *, capacity: str = "10Gi", storage_class: str = "",
            access_modes: tuple[str, ...] = ("ReadWriteOnce",),
            labels: dict[str, str] | None = None, claim: str | None = None, claim_uid: str = "",
            hosts: list[str] | None = None, node_affinity: list[dict[str, Any]] | None = None,
            phase: str | None = None, csi: tuple[str, str] | None = None, volume_mode: str | None = None,
            spec: dict[str, Any] | None = None, deleting: bool = False) -> PersistentVolume:
    """A PV. `claim` is `ns/name` of the claim it is bound (or pre-bound) to; `hosts` pins it to
    nodes with a `kubernetes.io/hostname In [...]` term (a local PV); `node_affinity` gives the
    required terms' matchExpressions, one list per term; `csi` is (driver, volumeHandle). Phase
    defaults to Bound when `claim` is set, else Available."""
    pv_spec: dict[str, Any] = {"capacity": {"storage": capacity}, "accessModes": list(access_modes),
                               "storageClassName": storage_class}
    if claim:
        ns, _, cname = claim.partition("/")
        pv_spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": cname, "uid": claim_uid}
    terms = [[{"key": "kubernetes.io/hostname", "operator": "In", "values": hosts}]] if hosts else node_affinity
    if terms:
        pv_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}}
    if csi:
        pv_spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    if volume_mode:
        pv_spec["volumeMode"] = volume_mode
    pv_spec.update(spec or {})
    meta: dict[str, Any] = {"name": name, "labels": labels or {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return msgspec.convert({"metadata": meta, "spec": pv_spec,
                            "status": {"phase": phase or ("Bound" if claim else "Available")}}, PersistentVolume)


def make_pvc(name: str, namespace: str = "default", *, storage_class: str | None = None, volume: str = "",
             request: str = "1Gi", access_modes: tuple[str, ...] = ("ReadWriteOnce",), bound: bool | None = None,
             annotations: dict[str, str] | None = None, selector: dict[str, str] | None = None,
             phase: str | None = None, owner_uid: str | None = None, uid: str | None = None,
             volume_mode: str | None = None, deleting: bool = False) -> PersistentVolumeClaim:
    """A claim; with `volume` it is bound (phase Bound, bind-completed annotation) unless `bound=False`
    (pre-bound: the volume named, the binding not completed)."""
    bound = bool(volume) if bound is None else bound
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-pvc-{namespace}-{name}",
                            "annotations": ann}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": owner_uid,
                                    "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {"accessModes": list(access_modes), "resources": {"requests": {"storage": request}},
                            "volumeName": volume}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if selector:
        spec["selector"] = {"matchLabels": selector}
    if volume_mode:
        spec["volumeMode"] = volume_mode
    return msgspec.convert({"metadata": meta, "spec": spec,
                            "status": {"phase": phase or ("Bound" if bound else "Pending")}}, PersistentVolumeClaim)


def make_storage_class(name: str, *, provisioner: str = "csi.example.com", wait: bool = True,
                       allowed_zones: list[str] | None = None, zone_key: str = "topology.kubernetes.io/zone"
                       ) -> StorageClass:
    obj: dict[str, Any] = {"metadata": {"name": name}, "provisioner": provisioner,
                           "volumeBindingMode": "WaitForFirstConsumer" if wait else "Immediate"}
    if allowed_zones is not None:
        obj["allowedTopologies"] = [{"matchLabelExpressions": [{"key": zone_key, "values": allowed_zones}]}]
    return msgspec.convert(obj, StorageClass)


def make_csinode(name: str, limits: dict[str, int | None] | None = None, *, migrated: str = "") -> CSINode:
    """A CSINode whose drivers are `limits`' keys, each with that attach limit (None: no limit)."""
    drivers = []
    for driver, count in (limits or {}).items():
        d: dict[str, Any] = {"name": driver, "nodeID": f"{name}-{driver}"}
        if count is not None:
            d["allocatable"] = {"count": count}
        drivers.append(d)
    meta: dict[str, Any] = {"name": name}
    if migrated:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return msgspec.convert({"metadata": meta, "spec": {"drivers": drivers}}, CSINode)


def pvc_volume(claim: str, name: str | None = None) -> dict[str, Any]:
    """A pod volume using the claim `claim`."""
    return {"name": name or claim, "persistentVolumeClaim": {"claimName": claim}}


def make_pod_group(name: str, namespace: str = "default", *, min_count: int | None = None,
                   api: str = "scheduling.k8s.io/v1alpha2", disruption_mode: str | None = None,
                   basic: bool = False) -> PodGroup:
    """A PodGroup: v1alpha2 (`gang.minCount`, or `basic`), or with `api` coscheduling's or Volcano's
    (`minMember`)."""
    spec: dict[str, Any] = {}
    if api.startswith("scheduling.k8s.io/"):
        spec["schedulingPolicy"] = {"basic": {}} if basic else {"gang": {"minCount": min_count}}
        if disruption_mode is not None:
            spec["disruptionMode"] = disruption_mode
    else:
        spec["minMember"] = min_count
    return msgspec.convert({"apiVersion": api, "metadata": {"name": name, "namespace": namespace,
                                                             "uid": f"uid-pg-{namespace}-{name}"},
                            "spec": spec}, PodGroup)


def gang_member(group: str, *, flavor: str = "workload") -> dict[str, Any]:
    """`make_pod` keyword arguments that make a pod a member of the group `group`, declared the
    `flavor` way (`workload`: spec.schedulingGroup; `coscheduling`, `volcano`: a label or annotation)."""
    if flavor == "workload":
        return {"spec": {"schedulingGroup": {"podGroupName": group}}}
    if flavor == "coscheduling":
        return {"labels": {"scheduling.x-k8s.io/pod-group": group}}
    return {"annotations": {"scheduling.k8s.io/group-name": group}}


def make_state(nodes: list[Node] = (), pods: list[Pod] = (), pdbs: list[PodDisruptionBudget] = (),
               priority_classes: list[PriorityClass] = (), namespaces: list[Namespace] = (),
               storage: list[Any] | None = None, as_in_a_file: bool = False,
               dra: list[Any] | None = None, pod_groups: list[PodGroup] | None = None) -> ClusterState:
    """`storage`: PVs, claims, classes and CSINodes, in any order; given (even empty), the state is
    one whose source held every storage kind (as a live cluster's does) — or, `as_in_a_file`, read
    as a snapshot file's (every kind if it holds any, else none)."""
    objects = Objects(list(nodes), list(pods), list(pdbs), list(priority_classes), list(namespaces))
    if storage is not None:
        for obj in storage:
            objects.add(obj)
        if not as_in_a_file:
            objects.storage_kinds = frozenset({"PersistentVolume", "PersistentVolumeClaim", "StorageClass",
                                               "CSINode"})
    if dra is not None:  # DeviceClasses, ResourceSlices, claims and templates: a source that held them all
        for obj in dra:
            objects.add(obj)
        objects.dra_kinds = frozenset(DRA_KINDS)
    state = build_state(objects)
    if pod_groups is not None:  # a source that held PodGroups (even none)
        state = dataclasses.replace(state, pod_groups=tuple(pod_groups), gang_kinds=frozenset({"PodGroup"}))
    return state


# -- Dynamic Resource Allocation --------------------------------------------------------------------

def make_device_class(name: str = "gpu.example.com", *, selectors: list[str] | None = None,
                      extended_resource_name: str | None = None) -> DeviceClass:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in selectors or []]}
    if extended_resource_name is not None:
        spec["extendedResourceName"] = extended_resource_name
    return msgspec.convert({"metadata": {"name": name}, "spec": spec}, DeviceClass)


def make_device(name: str, *, attributes: dict[str, Any] | None = None, capacity: dict[str, str] | None = None,
                **extra: Any) -> dict[str, Any]:
    """A device of a slice, as the API writes it (`attributes` values: int, bool or str)."""
    attrs = {k: ({"bool": v} if isinstance(v, bool) else {"int": v} if isinstance(v, int) else {"string": v})
             for k, v in (attributes or {}).items()}
    return {"name": name, "attributes": attrs, "capacity": {k: {"value": v} for k, v in (capacity or {}).items()},
            **extra}


def make_slice(node: str | None, devices: list[dict[str, Any]] | int, *, driver: str = "gpu.example.com",
               pool: str | None = None, name: str | None = None, generation: int = 1, slice_count: int = 1,
               **spec: Any) -> ResourceSlice:
    """A ResourceSlice of `driver` for `node` (its pool named after it); `devices` an int gives
    that many plain devices `gpu-0`, `gpu-1`, ..."""
    if isinstance(devices, int):
        devices = [make_device(f"gpu-{i}") for i in range(devices)]
    body: dict[str, Any] = {"driver": driver, "pool": {"name": pool or node or "shared", "generation": generation,
                                                        "resourceSliceCount": slice_count}, "devices": devices, **spec}
    if node is not None:
        body["nodeName"] = node
    return msgspec.convert({"metadata": {"name": name or f"{node or pool}-{driver}"}, "spec": body}, ResourceSlice)


def device_request(name: str = "gpu", device_class: str = "gpu.example.com", *, count: int | None = None,
                   mode: str | None = None, selectors: list[str] | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class}
    if count is not None:
        exactly["count"] = count
    if mode is not None:
        exactly["allocationMode"] = mode
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": name, "exactly": exactly}


def make_claim(name: str, namespace: str = "default", *, requests: list[dict[str, Any]] | None = None,
               owner_pod: Pod | None = None, allocated: list[tuple[str, str, str]] | None = None,
               node: str | None = None, reserved_for: list[Pod] | None = None,
               request: str = "gpu") -> ResourceClaim:
    """A claim; `allocated` (driver, pool, device) triples make it allocated (for `node`, whose name
    its node selector then matches), `reserved_for` the pods that use it."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-claim-{name}"}
    if owner_pod is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner_pod.name,
                                    "uid": owner_pod.uid, "controller": True}]
    status: dict[str, Any] = {}
    if allocated is not None:
        alloc: dict[str, Any] = {"devices": {"results": [{"request": request, "driver": d, "pool": p, "device": x}
                                                         for d, p, x in allocated]}}
        if node is not None:
            alloc["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        status["allocation"] = alloc
    if reserved_for:
        status["reservedFor"] = [{"resource": "pods", "name": p.name, "uid": p.uid} for p in reserved_for]
    return msgspec.convert({"metadata": meta, "spec": {"devices": {"requests": requests or [device_request()]}},
                            "status": status}, ResourceClaim)


def make_claim_template(name: str, namespace: str = "default", *,
                        requests: list[dict[str, Any]] | None = None) -> ResourceClaimTemplate:
    return msgspec.convert({"metadata": {"name": name, "namespace": namespace},
                            "spec": {"spec": {"devices": {"requests": requests or [device_request()]}}}},
                           ResourceClaimTemplate)
