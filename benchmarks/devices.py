"""The devices of the benchmark: a generated cluster with GPUs handed out through Dynamic Resource
Allocation, and a queue of GPU pods to plan on it (`python -m benchmarks --cases plan.gpu`).

Owns `ensure_gpu_cluster`: next to a generated cluster `<size>-v5.json`, the file
`<size>-v5-gpu.json` — the same objects, plus what a GPU cluster adds: a DeviceClass selecting the
driver by CEL, a ResourceClaimTemplate for one GPU, and on every worker node a ResourceSlice of
8 GPUs (attributes and memory capacity, as a driver publishes them), 6 of them allocated to the
claims of running pods that hold them (small pods, so that CPU and memory are not what decides),
and 1,000 Pending GPU pods of one shape, each with its claim from the template created and not
allocated yet. Planned one after another in priority order, the first ones fill the free GPUs (2 per
node) and the rest find none.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["DEVICES_PER_NODE", "GPU_PODS", "ensure_gpu_cluster"]

DRIVER = "gpu.nvidia.com"
DEVICES_PER_NODE = 8
HELD_PER_NODE = 6
GPU_PODS = 1000
NAMESPACE = "ml-train"


def ensure_gpu_cluster(base: Path, log: Callable[[str], None] = print) -> Path:
    """The GPU variant of the cluster file `base`, written first if missing."""
    path = base.with_name(f"{base.stem}-gpu.json")
    if path.exists():
        return path
    log(f"writing {path.name}")
    doc = json.loads(base.read_bytes())
    items: list[dict[str, Any]] = doc["items"]
    workers = [i["metadata"]["name"] for i in items if i.get("kind") == "Node"
               and "node-role.kubernetes.io/control-plane" not in i["metadata"].get("labels", {})]
    items += [_namespace(), _device_class(), _template()]
    for node in workers:
        items.append(gpu_slice(node))
        for j in range(HELD_PER_NODE):
            pod = _pod(f"holder-{node}-{j}", node, priority=0)
            items += [pod, _claim(pod, node, f"gpu-{j}")]
    for k in range(GPU_PODS):
        pod = _pod(f"trainer-{k:04d}", "", priority=10_000)
        items += [pod, _claim(pod, None, None)]
    path.write_bytes(json.dumps(doc, separators=(",", ":")).encode())
    return path


def _namespace() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}


def _device_class() -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def _template() -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": NAMESPACE},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}}


def gpu_slice(node: str, model: str = "NVIDIA H100 80GB HBM3") -> dict[str, Any]:
    """The node's ResourceSlice: `DEVICES_PER_NODE` GPUs of `model` in one pool of the node's name."""
    devices = [{"name": f"gpu-{i}",
                "attributes": {"index": {"int": i}, "productName": {"string": model},
                               "driverVersion": {"version": "560.35.3"}},
                "capacity": {"memory": {"value": "80Gi"}}} for i in range(DEVICES_PER_NODE)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-{DRIVER}", "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node, "uid": f"uid-node-{node}"}]},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                                  "resourceSliceCount": 1},
                     "devices": devices}}


def _pod(name: str, node: str, *, priority: int) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Running" if node else "Pending",
                              "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]}
    if node:
        status["startTime"] = "2026-11-01T00:00:00Z"
        status["conditions"] = [{"type": "Ready", "status": "True"}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}",
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name.rsplit("-", 1)[0],
                                              "uid": "uid-job", "controller": True}]},
            "spec": {"nodeName": node, "priority": priority, "schedulerName": "default-scheduler",
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                     "containers": [{"name": "train", "image": "registry.acme.io/ml/train:1.0",
                                     "resources": {"requests": {"cpu": "100m", "memory": "256Mi"},
                                                   "claims": [{"name": "gpu"}]}}]},
            "status": status}


def _claim(pod: dict[str, Any], node: str | None, device: str | None) -> dict[str, Any]:
    meta = pod["metadata"]
    claim: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": f"{meta['name']}-gpu", "namespace": NAMESPACE,
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"],
                                          "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER,
                                                                       "allocationMode": "ExactCount", "count": 1}}]}},
        "status": {}}
    if node is not None:
        claim["status"] = {
            "allocation": {"devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node,
                                                    "device": device}]},
                           "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                               {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
            "reservedFor": [{"resource": "pods", "name": meta["name"], "uid": meta["uid"]}]}
    return claim
