"""The benchmark's hard queue: a GPU cluster whose Pending pods are drawn from its own pod shapes.

Owns `ensure_queue`: next to a generated cluster `<size>-v5.json`, the file `<size>-v5-queue.json`
— the same cluster turned into a GPU cluster, with a long queue of mixed shapes (`python -m
benchmarks --processes`, rows `plan.queue*`; in-process `--cases plan.queue`):

- on every worker a ResourceSlice of 8 GPUs of one of three models (`MODELS`, by node: the model
  is not the zone), a DeviceClass selecting the driver by CEL, and 6 of each worker's 8 GPUs held
  by the claims of application pods already running there (their pods gain the claim: evicting
  one frees its GPU);
- the cluster's own 100 Pending pods, and as many new ones as `QUEUE_PENDING` asks for in all
  (1,250 at 1k nodes, 5,000 at 5k), each group of 1 to 8 a scale-up of one of the cluster's own
  running workloads: its pod's spec (requests, priority, tolerations, affinity, StatefulSet
  volumes and anti-affinity) with, drawn per group: a GPU claim from a template (about 4 in 5 of
  the whole queue), a quarter of those selecting a GPU model by CEL; required pod affinity or
  anti-affinity (1 in 6); a DoNotSchedule topology spread constraint (1 in 12); a required node
  affinity to two zones or two instance types (1 in 6); StatefulSet pods with a new Pending claim
  (WaitForFirstConsumer) each.

Most of the queue fits (2 GPUs free a node, nodes ~90% requested); pods of larger shapes need
evictions, some of them of GPU holders, and some fit nowhere. The generated cluster is copied
object by object (msgspec `Raw`); only the holders are decoded and written again.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from benchmarks.devices import DRIVER, gpu_slice
from benchmarks.generate import DAY, GENERATOR_VERSION, ensure_cluster
from benchmarks.kube import Ids
from benchmarks.pending import _write_list, hash_seed

__all__ = ["DRIVER", "MODELS", "QUEUE_PENDING", "ensure_queue", "queue_objects", "queue_path"]

MODELS = ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L40S")
HELD_PER_NODE = 6
#: Pending pods in all (the cluster's own 100 included), per size.
QUEUE_PENDING = {"small": 250, "medium": 1250, "large": 5000}
#: Group sizes of the queue's workloads (a scale-up of one workload), drawn uniformly.
GROUP_SIZES = (1, 1, 1, 2, 2, 3, 4, 6, 8)
_CONTROL_PLANE = "node-role.kubernetes.io/control-plane"
_SYSTEM = frozenset(("kube-system", "kube-public", "kube-node-lease", "monitoring", "logging", "default"))
_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
_NAME = "app.kubernetes.io/name"
_STORAGE_CLASS = "gp3"
#: The share of the whole queue (the cluster's own pending pods included, which have none of
#: these) with each feature; a CEL model selector: of the claims. Pod affinity: required affinity
#: or anti-affinity, the template's own included.
_SHARES = {"claim": 0.8, "model": 0.25, "affinity": 1 / 6, "spread": 1 / 12, "node_affinity": 1 / 6}


def queue_path(directory: Path, size: str) -> Path:
    return directory / f"{size}-v{GENERATOR_VERSION}-queue.json"


def ensure_queue(directory: Path, size: str, log: Callable[[str], None] = print) -> Path:
    """The cached queue variant of `size`, written first if missing."""
    path = queue_path(directory, size)
    if not path.exists():
        base = ensure_cluster(directory, size, log)
        log(f"writing {size} as a GPU cluster with a queue of {QUEUE_PENDING[size]:,} into {path} ...")
        queue_objects(base, QUEUE_PENDING[size], path, seed=hash_seed(size, -7))
    return path


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = {}
    ownerReferences: list[dict[str, Any]] = []


class _Spec(msgspec.Struct):
    nodeName: str = ""


class _Head(msgspec.Struct):
    kind: str = ""
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _Spec | None = None


class _RawList(msgspec.Struct):
    items: list[msgspec.Raw] = []


def queue_objects(base: Path, pending: int, out: Path, *, seed: int = 0) -> int:
    """Write the GPU cluster with its queue (see the module doc) to `out`; returns how many
    pending pods it added."""
    ids = Ids(seed)
    rng = ids.rng
    items = msgspec.json.decode(base.read_bytes(), type=_RawList).items
    head = msgspec.json.Decoder(_Head)
    heads = [head.decode(raw) for raw in items]
    workers = [h.metadata.name for h in heads if h.kind == "Node" and _CONTROL_PLANE not in h.metadata.labels]
    model_of = {n: MODELS[(i // 3) % len(MODELS)] for i, n in enumerate(workers)}
    own_pending = sum(1 for h in heads if h.kind == "Pod" and h.spec is not None and not h.spec.nodeName)
    # Application pods running on workers: holders of GPUs, and the shapes the queue is drawn from.
    by_node: dict[str, list[int]] = {}
    apps: list[int] = []
    app_names: dict[str, set[str]] = {}
    for i, h in enumerate(heads):
        if h.kind != "Pod" or h.spec is None or h.spec.nodeName not in model_of or h.metadata.namespace in _SYSTEM:
            continue
        owner = next((o.get("kind") for o in h.metadata.ownerReferences if o.get("controller")), None)
        if owner not in ("ReplicaSet", "StatefulSet"):
            continue
        by_node.setdefault(h.spec.nodeName, []).append(i)
        apps.append(i)
        if _NAME in h.metadata.labels:
            app_names.setdefault(h.metadata.namespace, set()).add(h.metadata.labels[_NAME])
    namespaces: set[str] = set()
    claims: list[dict] = []
    replaced: dict[int, bytes] = {}
    for node in workers:
        on = by_node.get(node, [])
        for j, i in enumerate(sorted(rng.sample(on, min(HELD_PER_NODE, len(on))))):
            pod = msgspec.json.decode(items[i])
            _with_claim(pod, "gpu")
            claims.append(_claim(pod, "gpu", None, node, f"gpu-{j}"))
            namespaces.add(pod["metadata"]["namespace"])
            replaced[i] = msgspec.json.encode(pod)
    objects: list[dict] = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
                            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}]
    objects += [gpu_slice(n, model_of[n]) for n in workers]
    objects += claims
    queue: list[dict] = []
    n_new = max(0, pending - own_pending)
    # Each feature goes to the next group while the pods having it are fewer than its share: the
    # shares hold at any size, whatever group sizes are drawn.
    counts = dict.fromkeys(_SHARES, 0)
    group = added = 0
    while added < n_new:
        template = msgspec.json.decode(items[rng.choice(apps)])
        size = min(rng.choice(GROUP_SIZES), n_new - added)
        ns = template["metadata"]["namespace"]
        namespaces.add(ns)
        queued = own_pending + added + size
        features = {k: counts[k] < share * (counts["claim"] + size if k == "model" else queued)
                    for k, share in _SHARES.items()}
        features["model"] = features["model"] and features["claim"]
        has_affinity = _required_affinity(template)
        features["affinity"] = features["affinity"] and not has_affinity
        for k, on in features.items():
            counts[k] += size if on or (k == "affinity" and has_affinity) else 0
        model = rng.choice(MODELS) if features["model"] else None
        claimed = features["claim"]
        partner = sorted(app_names.get(ns, set()))
        shape = _shape(template, features, rng.choice(partner) if partner else None, rng)
        created = ids.ts(-rng.randint(60, DAY // 4))
        for k in range(size):
            pod, extra = _clone(shape, ids, group, k, created)
            if model is not None or claimed:
                tmpl = _template_name(model)
                _with_claim(pod, tmpl)
                extra.append(_claim(pod, tmpl, model, None, None))
            queue.append(pod)
            queue.extend(extra)
        added += size
        group += 1
    for ns in sorted(namespaces):
        objects += [_template(ns, None), *(_template(ns, m) for m in MODELS)]
    objects += queue
    _write_list(out, [replaced.get(i, bytes(raw)) for i, raw in enumerate(items)], objects)
    return n_new


def _required_affinity(pod: dict[str, Any]) -> bool:
    affinity = pod["spec"].get("affinity") or {}
    return any((affinity.get(k) or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
               for k in ("podAffinity", "podAntiAffinity"))


def _template_name(model: str | None) -> str:
    return "gpu" if model is None else "gpu-" + model.split()[1].split("-")[0].lower()


def _request(model: str | None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": 1}
    if model is not None:
        exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].productName == "{model}"'}}]
    return {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}


def _template(namespace: str, model: str | None) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": _template_name(model), "namespace": namespace},
            "spec": {"spec": _request(model)}}


def _with_claim(pod: dict[str, Any], template: str) -> None:
    """The pod with a claim `gpu` from `template`, used by its first container."""
    spec = pod["spec"]
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    resources = spec["containers"][0].setdefault("resources", {})
    resources["claims"] = [{"name": "gpu"}]
    spec["tolerations"] = [*spec.get("tolerations", []),
                           {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
    pod["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": f"{pod['metadata']['name']}-gpu"}]


def _claim(pod: dict[str, Any], template: str, model: str | None, node: str | None,
           device: str | None) -> dict[str, Any]:
    """The claim made for `pod` from its template; allocated to `device` on `node` when given."""
    meta = pod["metadata"]
    claim: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": f"{meta['name']}-gpu", "namespace": meta["namespace"],
                     "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"],
                                          "controller": True, "blockOwnerDeletion": True}]},
        "spec": _request(model), "status": {}}
    if node is not None:
        claim["status"] = {
            "allocation": {"devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node,
                                                    "device": device}]},
                           "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                               {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
            "reservedFor": [{"resource": "pods", "name": meta["name"], "uid": meta["uid"]}]}
    return claim


def _shape(template: dict[str, Any], features: dict[str, Any], partner: str | None, rng: Any) -> dict[str, Any]:
    """The spec the group's pods share: the template pod's, unbound, with the group's features."""
    pod = copy.deepcopy(template)
    meta, spec = pod["metadata"], pod["spec"]
    for k in ("resourceVersion", "uid", "deletionTimestamp"):
        meta.pop(k, None)
    meta["labels"] = {k: v for k, v in meta.get("labels", {}).items() if k not in (_ZONE, _REGION)}
    for k in ("nodeName", "resourceClaims"):
        spec.pop(k, None)
    for c in spec.get("containers", []):
        c.get("resources", {}).pop("claims", None)
    spec["tolerations"] = [t for t in spec.get("tolerations", []) if t.get("key") != "nvidia.com/gpu"]
    own = meta["labels"].get(_NAME)
    if features["affinity"] and own is not None:
        affinity = spec.setdefault("affinity", {})
        if rng.random() < 0.5 or partner is None:
            term = {"labelSelector": {"matchLabels": {_NAME: own}}, "topologyKey": "kubernetes.io/hostname"}
            affinity["podAntiAffinity"] = {**affinity.get("podAntiAffinity", {}),
                                           "requiredDuringSchedulingIgnoredDuringExecution": [term]}
        else:
            affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {_NAME: partner}}, "topologyKey": _ZONE}]}
    if features["spread"] and own is not None:
        spec["topologySpreadConstraints"] = [
            {"labelSelector": {"matchLabels": {_NAME: own}}, "maxSkew": 1, "topologyKey": _ZONE,
             "whenUnsatisfiable": "DoNotSchedule"}]
    if features["node_affinity"]:
        if rng.random() < 0.5:
            expr = {"key": _ZONE, "operator": "In", "values": sorted(rng.sample(["eu-west-1a", "eu-west-1b",
                                                                                 "eu-west-1c"], 2))}
        else:
            expr = {"key": "node.kubernetes.io/instance-type", "operator": "In",
                    "values": sorted(rng.sample(["m6i.2xlarge", "m6i.4xlarge", "m5.2xlarge", "m7i.4xlarge"], 2))}
        affinity = spec.setdefault("affinity", {})
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expr]}]}}
    pod["status"] = {"phase": "Pending", "qosClass": template.get("status", {}).get("qosClass", "Burstable"),
                     "conditions": [{"lastProbeTime": None, "message": "", "reason": "Unschedulable",
                                     "status": "False", "type": "PodScheduled"}]}
    return pod


def _clone(shape: dict[str, Any], ids: Ids, group: int, k: int, created: str) -> tuple[dict[str, Any], list[dict]]:
    """Pod `k` of group `group`, with the new claims of its StatefulSet volumes (Pending)."""
    pod = copy.deepcopy(shape)
    meta = pod["metadata"]
    owner = next((o for o in meta.get("ownerReferences", []) if o.get("controller")), {})
    extra: list[dict] = []
    if owner.get("kind") == "StatefulSet":
        ordinal = 1000 + 10 * group + k
        meta["name"] = f"{owner['name']}-{ordinal}"
        meta["labels"] = {**meta["labels"], "statefulset.kubernetes.io/pod-name": meta["name"],
                          "apps.kubernetes.io/pod-index": str(ordinal)}
        for v in pod["spec"].get("volumes", []):
            pvc = v.get("persistentVolumeClaim")
            if pvc is None:
                continue
            claim = f"{v['name']}-{owner['name']}-{ordinal}"
            pvc["claimName"] = claim
            extra.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                          "metadata": {"name": claim, "namespace": meta["namespace"], "uid": ids.uid()},
                          "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}},
                                   "storageClassName": _STORAGE_CLASS, "volumeMode": "Filesystem"},
                          "status": {"phase": "Pending"}})
    else:
        meta["name"] = f"{meta.get('generateName', 'queued-')}q{group:04d}{k}{ids.suffix(3)}"
    meta["uid"] = ids.uid()
    meta["creationTimestamp"] = created
    return pod, extra
