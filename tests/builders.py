"""Tiny builders for test objects: `make_pod(...)`, `make_node(...)`, `make_pdb(...)`, ...

They build the same typed objects the loader builds (through `msgspec.convert` of API-shaped
dicts), so a test reads like the YAML an operator would write.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.objects import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
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
             spec: dict[str, Any] | None = None) -> Pod:
    """A pod with one container. `owner` is `Kind/name` of its controller, or None for a bare pod."""
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
    pod_spec.update(spec or {})
    status: dict[str, Any] = {"phase": phase or ("Running" if node else "Pending"),
                              "nominatedNodeName": nominated_node}
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


def make_state(nodes: list[Node] = (), pods: list[Pod] = (), pdbs: list[PodDisruptionBudget] = (),
               priority_classes: list[PriorityClass] = (), namespaces: list[Namespace] = ()) -> ClusterState:
    return build_state(Objects(list(nodes), list(pods), list(pdbs), list(priority_classes), list(namespaces)))
