"""DRA objects for the read tests, as a v1.36 API server serves them in `resource.k8s.io/v1`, and
the same objects as a v1.32–v1.33 server serves them in `v1beta1` (written by hand from the Go
types, not converted by code: the decode tests hold kresched's conversion to them).

A GPU driver publishes one pool per node (node-a: two GPUs); a class selects its devices; a claim
with an exact request and a prioritised list (`firstAvailable`), allocated and reserved for a pod;
a template the pods' claims are made from.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["V1", "V1BETA1", "as_version", "v1_objects"]

DRIVER = "gpu.example.com"

DEVICE_CLASS: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
    "metadata": {"name": "gpu", "uid": "u-class", "creationTimestamp": "2026-11-01T10:00:00Z"},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
             "extendedResourceName": "example.com/gpu"},
}

SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "node-a-gpu", "uid": "u-slice", "creationTimestamp": "2026-11-01T10:00:00Z"},
    "spec": {
        "driver": DRIVER, "nodeName": "node-a",
        "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {"name": "gpu-0",
             "attributes": {"model": {"string": "A100"}, "index": {"int": 0}, "driverVersion": {"version": "1.2.3"},
                            f"{DRIVER}/mig": {"bool": False}},
             "capacity": {"memory": {"value": "40Gi"},
                          "slices": {"value": "7", "requestPolicy": {"default": "1", "validRange": {"min": "1"}}}},
             "taints": [{"key": "maintenance", "effect": "NoSchedule"}]},
            {"name": "gpu-1", "attributes": {"model": {"string": "A100"}, "index": {"int": 1}},
             "capacity": {"memory": {"value": "40Gi"}}},
        ],
    },
}

CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "train-gpu", "namespace": "ml", "uid": "u-claim",
                 "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                 "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "train", "uid": "u-pod",
                                      "controller": True, "blockOwnerDeletion": True}]},
    "spec": {"devices": {
        "requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
                                        "selectors": [{"cel": {"expression": 'device.attributes["model"] == "A100"'}}],
                                        "tolerations": [{"key": "maintenance", "operator": "Exists"}]}},
            {"name": "spare", "firstAvailable": [
                {"name": "big", "deviceClassName": "gpu", "allocationMode": "All"},
                {"name": "small", "deviceClassName": "gpu", "count": 2}]},
        ],
        "constraints": [{"requests": ["gpu", "spare"], "matchAttribute": f"{DRIVER}/model"}],
    }},
    "status": {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-0",
                                     "tolerations": [{"key": "maintenance", "operator": "Exists"}]},
                                    {"request": "spare/small", "driver": DRIVER, "pool": "node-a", "device": "gpu-1"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]},
        },
        "reservedFor": [{"resource": "pods", "name": "train", "uid": "u-pod"}],
        "devices": [{"driver": DRIVER, "pool": "node-a", "device": "gpu-0",
                     "conditions": [{"type": "Ready", "status": "True", "reason": "Configured", "message": "",
                                     "lastTransitionTime": "2026-11-01T10:01:00Z", "observedGeneration": 1}]}],
    },
}

TEMPLATE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu", "namespace": "ml", "uid": "u-template"},
    "spec": {"metadata": {"labels": {"team": "ml"}},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}},
}

V1: list[dict[str, Any]] = [DEVICE_CLASS, SLICE, CLAIM, TEMPLATE]


def _beta1_request(request: dict[str, Any]) -> dict[str, Any]:
    """A v1beta1 request: `exactly`'s fields on the request itself."""
    out = {k: v for k, v in request.items() if k != "exactly"}
    out.update(request.get("exactly") or {})
    return out


def _beta1(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["apiVersion"] = "resource.k8s.io/v1beta1"
    kind = out["kind"]
    if kind == "ResourceSlice":
        out["spec"]["devices"] = [{"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
                                  for d in out["spec"]["devices"]]
    claim_spec = {"ResourceClaim": lambda o: o["spec"], "ResourceClaimTemplate": lambda o: o["spec"]["spec"]}
    if kind in claim_spec:
        devices = claim_spec[kind](out)["devices"]
        devices["requests"] = [_beta1_request(r) for r in devices["requests"]]
    return out


V1BETA1: list[dict[str, Any]] = [_beta1(o) for o in V1]


def as_version(objects: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    """`objects` (v1 or v1beta2, which share a shape) labelled with another version of the same shape."""
    return [{**copy.deepcopy(o), "apiVersion": f"resource.k8s.io/{version}"} for o in objects]


def v1_objects() -> list[dict[str, Any]]:
    return copy.deepcopy(V1)
