"""Writes examples/training-cluster.json: a small GPU cluster with gangs, for docs/guide/training-job.md.

Four nodes with two GPUs each (`nvidia.com/gpu`, a device plugin's extended resource). Running:
an evaluation job `ml/eval` that is a gang (PodGroup, minCount 2, priority 100) on gpu-1, and four
notebooks (priority 0, one GPU each). Pending: the training job `ml/train` (4 workers of one GPU,
PodGroup minCount 4, priority 1000) and the fine-tuning job `ml/finetune` (3 workers of two GPUs,
minCount 3, priority 500). The shape is `kubectl get ... -o json` output (a List), with the
PodGroups of v1.36's Workload API (`scheduling.k8s.io/v1alpha2`).

    python scripts/make_training_example.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "examples" / "training-cluster.json"
CREATED = "2026-11-30T08:00:00Z"


def node(name: str) -> dict[str, Any]:
    resources = {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "2", "ephemeral-storage": "100Gi"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-node-{name}", "creationTimestamp": CREATED,
                         "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                    "nvidia.com/gpu.present": "true", "topology.kubernetes.io/zone": "zone-a"}},
            "spec": {},
            "status": {"allocatable": resources, "capacity": resources,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}


def pod(name: str, *, node: str = "", gpus: int = 1, cpu: str = "2", priority: int, priority_class: str,
        group: str | None = None, owner: str, started: str = "2026-11-30T09:00:00Z") -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": "8Gi", "nvidia.com/gpu": str(gpus)}
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "registry.example/ml:1",
                        "resources": {"requests": requests, "limits": {"nvidia.com/gpu": str(gpus)}}}],
        "priority": priority, "priorityClassName": priority_class, "preemptionPolicy": "PreemptLowerPriority",
        "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30, "restartPolicy": "Never",
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300},
                        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300}],
    }
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    kind, _, oname = owner.partition("/")
    meta = {"name": name, "namespace": "ml", "uid": f"uid-pod-{name}", "creationTimestamp": CREATED,
            "labels": {"app": oname}, "ownerReferences": [
                {"apiVersion": "batch/v1" if kind == "Job" else "apps/v1", "kind": kind, "name": oname,
                 "uid": f"uid-{kind.lower()}-{oname}", "controller": True, "blockOwnerDeletion": True}]}
    if node:
        spec["nodeName"] = node
        meta["labels"]["topology.kubernetes.io/zone"] = "zone-a"
        status = {"phase": "Running", "qosClass": "Burstable", "startTime": started,
                  "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]}
    else:
        status = {"phase": "Pending", "qosClass": "Burstable",
                  "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def pod_group(name: str, min_count: int, priority: int, priority_class: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ml", "uid": f"uid-podgroup-{name}", "creationTimestamp": CREATED,
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name,
                                              "uid": f"uid-job-{name}", "controller": True}]},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}, "disruptionMode": "Pod",
                     "priorityClassName": priority_class, "priority": priority}}


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "preemptionPolicy": "PreemptLowerPriority"}


def main() -> None:
    items: list[dict[str, Any]] = [node(f"gpu-{i}") for i in range(1, 5)]
    items += [priority_class("notebook", 0), priority_class("evaluation", 100), priority_class("finetuning", 500),
              priority_class("training", 1000)]
    items += [pod_group("eval", 2, 100, "evaluation"), pod_group("train", 4, 1000, "training"),
              pod_group("finetune", 3, 500, "finetuning")]
    items += [pod(f"eval-{i}", node="gpu-1", priority=100, priority_class="evaluation", group="eval",
                  owner="Job/eval") for i in range(2)]
    notebooks = [("notebook-ana", "gpu-2"), ("notebook-ben", "gpu-3"), ("notebook-chen", "gpu-3"),
                 ("notebook-dev", "gpu-4")]
    items += [pod(name, node=where, priority=0, priority_class="notebook", owner=f"StatefulSet/{name}")
              for name, where in notebooks]
    items += [pod(f"train-{i}", priority=1000, priority_class="training", group="train", owner="Job/train")
              for i in range(4)]
    items += [pod(f"finetune-{i}", gpus=2, priority=500, priority_class="finetuning", group="finetune",
                  owner="Job/finetune") for i in range(3)]
    OUT.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                               "items": items}, indent=1) + "\n")


if __name__ == "__main__":
    main()
