"""Objects as a real API server stores and serves them, not as a test wrote them.

- Protobuf storage: an empty slice comes back nil, and the fields declared without `omitempty`
  serve nil as `null` (`CSINode.spec.drivers`, a driver's `topologyKeys`, a node image's `names`),
  as `GO_NULLABLE` in tests/test_nulls.py lists them.
- PodTopologyLabelsAdmission (v1.35+): a pod created with `spec.nodeName`, or bound, gets its node's
  `topology.kubernetes.io/zone` and `region` labels, overwriting its own.
- The kubelet: every node has a CSINode of its name, owned by it, with no drivers (`drivers: null`).
- `scheduling.k8s.io/v1alpha2` (protobuf too): a PodGroup without `spec.podGroupTemplateRef` and a
  Workload's template without `schedulingConstraints` serve them as `null`.
- A CustomResourceDefinition's objects (coscheduling's and Volcano's PodGroups) are stored as
  written, but for every `null` of a field the schema does not make nullable, which the server
  prunes (`PruneNonNullableNullsWithoutDefaults`; their schemas make none nullable).
- `resource.k8s.io`: objects are stored in v1 (v1beta1 input converted as the API server converts
  it) and served in the version asked for; v1beta2 has v1's shape, v1beta1 holds a device's fields
  under `basic` and an exact request's fields on the request itself
  (`pkg/apis/resource/v1beta1/conversion.go`).
"""

from __future__ import annotations

import copy
from typing import Any

TOPOLOGY_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region")

__all__ = ["TOPOLOGY_LABELS", "admit_topology_labels", "dra_served", "dra_stored", "kubelet_csinode", "nil_as_null",
           "prune_nulls"]


def nil_as_null(kind: str, obj: dict[str, Any]) -> None:
    """An empty list in a field without `omitempty` as the server serves it: `null`."""
    if kind == "CSINode":
        spec = obj.setdefault("spec", {})
        drivers = spec.get("drivers") or None
        for d in drivers or ():
            d["topologyKeys"] = d.get("topologyKeys") or None
        spec["drivers"] = drivers
    elif kind == "Node":
        for image in (obj.get("status") or {}).get("images") or ():
            image["names"] = image.get("names") or None
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        spec = obj.setdefault("spec", {})
        if kind == "ResourceClaimTemplate":
            spec.setdefault("metadata", {}).setdefault("creationTimestamp", None)
            spec = spec.setdefault("spec", {})
        devices = spec.setdefault("devices", {})
        devices["requests"] = devices.get("requests") or None
        for device in (obj.get("status") or {}).get("devices") or ():
            device["conditions"] = device.get("conditions") or None
    elif kind == "PodGroup":  # (v1alpha2's: a CRD's objects are `prune_nulls`'s)
        obj.setdefault("spec", {}).setdefault("podGroupTemplateRef", None)
    elif kind == "Workload":
        for template in (obj.get("spec") or {}).get("podGroupTemplates") or ():
            template.setdefault("schedulingConstraints", None)
    elif kind == "ResourceSlice":
        for device in (obj.get("spec") or {}).get("devices") or ():
            for capacity in (device.get("capacity") or {}).values():
                if capacity.get("requestPolicy") is not None:
                    capacity["requestPolicy"].setdefault("default", None)


def prune_nulls(value: Any) -> None:
    """Every `null` field of a CRD's object dropped, at any depth (elements of lists are kept)."""
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for v in value.values():
            prune_nulls(v)
    elif isinstance(value, list):
        for v in value:
            prune_nulls(v)


def admit_topology_labels(pod: dict[str, Any], node: dict[str, Any] | None) -> None:
    """The bound pod gets its node's zone and region labels (when the node has them)."""
    if node is None:
        return
    node_labels = node.get("metadata", {}).get("labels") or {}
    topology = {k: node_labels[k] for k in TOPOLOGY_LABELS if k in node_labels}
    if topology:
        pod.setdefault("metadata", {})["labels"] = {**(pod["metadata"].get("labels") or {}), **topology}


def kubelet_csinode(node: dict[str, Any]) -> dict[str, Any]:
    meta = node["metadata"]
    owner = {"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta.get("uid") or meta["name"]}
    return {"metadata": {"name": meta["name"], "ownerReferences": [owner]}, "spec": {"drivers": None}}


#: v1's request fields that v1beta1 holds on the request itself.
_EXACT = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")


def _requests(kind: str, obj: dict[str, Any]) -> list[dict[str, Any]]:
    if kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return []
    spec = obj.get("spec") or {}
    if kind == "ResourceClaimTemplate":
        spec = spec.get("spec") or {}
    return (spec.get("devices") or {}).get("requests") or []


def dra_stored(kind: str, obj: dict[str, Any]) -> None:
    """A v1beta1 object (any other version has v1's shape) in v1's, in place."""
    if not str(obj.get("apiVersion", "")).endswith("/v1beta1"):
        return
    if kind == "ResourceSlice":
        spec = obj.get("spec") or {}
        for device in spec.get("devices") or ():
            device.update(device.pop("basic", None) or {})
        for name, unset in (("nodeName", ""), ("allNodes", False)):
            if name in spec and spec[name] == unset:
                del spec[name]
    for request in _requests(kind, obj):
        exactly = {k: request.pop(k) for k in _EXACT if k in request}
        if exactly:
            request["exactly"] = exactly


def dra_served(kind: str, version: str, obj: dict[str, Any]) -> dict[str, Any]:
    """A stored (v1) object as `version` serves it: a converted copy for v1beta1."""
    if version != "v1beta1" or kind not in ("ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"):
        return obj
    out = copy.deepcopy(obj)
    for device in (out.get("spec") or {}).get("devices") or () if kind == "ResourceSlice" else ():
        basic = {k: device.pop(k) for k in list(device) if k != "name"}
        device["basic"] = basic
    for request in _requests(kind, out):
        request.update(request.pop("exactly", None) or {})
    return out
