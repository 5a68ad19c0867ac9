"""A generated cluster with exactly N pending critical pods, for watching planning grow with the queue.

Owns the variant files `<size>-v<GENERATOR_VERSION>-pending<N>.json` next to the cluster they come
from. A variant is the generated cluster byte for byte — every node, running pod, controller, PDB,
volume and non-critical Pending pod — except that the cluster's own pending critical pods are left
out and N new ones take their place: critical add-ons (`system-cluster-critical`, one
single-replica Deployment each, kube-system) shaped as the generator shapes its own (the same
requests: a little more memory than any worker has free, so each needs evictions somewhere).
`kresched plan` (critical pods only) then plans exactly N pods on an otherwise unchanged cluster.

The generated cluster itself is never changed: its objects are copied as they are (msgspec `Raw`),
read only far enough to tell a pending critical pod.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import msgspec

from benchmarks.generate import _CRITICAL_ADDONS, GENERATOR_VERSION, PRIORITY, ensure_cluster
from benchmarks.kube import Ids, Workload, container, make_controller, make_pod

__all__ = ["CRITICAL_PRIORITY", "NATURAL_PENDING", "critical_objects", "ensure_natural", "ensure_pending",
           "natural_objects", "pending_path", "with_pending"]

#: How many pending pods `ensure_natural` adds per size: with the cluster's own 100, about the
#: queues the performance issue names (~400 at 1k nodes, ~1,400 at 5k).
NATURAL_PENDING = {"small": 40, "medium": 300, "large": 1300}

#: A pod is critical (kresched plans it without --all-pending) from this priority on.
CRITICAL_PRIORITY = 2_000_000_000


class _Spec(msgspec.Struct):
    nodeName: str = ""
    priority: int | None = None
    containers: list[dict] = []


class _Head(msgspec.Struct):
    kind: str = ""
    spec: _Spec | None = None


class _RawList(msgspec.Struct):
    items: list[msgspec.Raw] = []


def pending_path(directory: Path, size: str, n: int) -> Path:
    return directory / f"{size}-v{GENERATOR_VERSION}-pending{n}.json"


def ensure_pending(directory: Path, size: str, n: int, log: Callable[[str], None] = print) -> Path:
    """The cached variant of `size` with `n` pending critical pods, written first if missing (and the
    cluster it comes from generated first if that is missing)."""
    path = pending_path(directory, size, n)
    if not path.exists():
        base = ensure_cluster(directory, size, log)
        log(f"writing {size} with {n} pending critical pod(s) into {path} ...")
        with_pending(base, n, path, seed=hash_seed(size, n))
    return path


def natural_path(directory: Path, size: str, n: int) -> Path:
    return directory / f"{size}-v{GENERATOR_VERSION}-natural{n}.json"


def ensure_natural(directory: Path, size: str, n: int, log: Callable[[str], None] = print) -> Path:
    """The cached variant of `size` with `n` more Pending pods of ordinary workloads (its own pending
    pods kept), written first if missing."""
    path = natural_path(directory, size, n)
    if not path.exists():
        base = ensure_cluster(directory, size, log)
        log(f"writing {size} with {n} more pending pod(s) into {path} ...")
        items = msgspec.json.decode(base.read_bytes(), type=_RawList).items
        _write_list(path, [bytes(raw) for raw in items], natural_objects(n, hash_seed(size, -n)))
    return path


def hash_seed(size: str, n: int) -> int:
    """Deterministic (no `hash()`: it is salted per process)."""
    return sum(ord(c) * 131**i for i, c in enumerate(f"{size}/pending/{n}")) % 2**31


def _is_pending_critical(head: _Head) -> bool:
    return head.kind == "Pod" and head.spec is not None and not head.spec.nodeName \
        and (head.spec.priority or 0) >= CRITICAL_PRIORITY


def with_pending(base: Path, n: int, out: Path, *, seed: int = 0) -> int:
    """Write `base` with its pending critical pods replaced by `n` new ones to `out`; returns how
    many it left out. The new pods request what the generator's own critical pods request."""
    data = base.read_bytes()
    items = msgspec.json.decode(data, type=_RawList).items
    head = msgspec.json.Decoder(_Head)
    kept: list[msgspec.Raw] = []
    requests: dict[str, str] | None = None
    message = ""
    for raw in items:
        h = head.decode(raw)
        if _is_pending_critical(h):
            if requests is None and h.spec is not None and h.spec.containers:
                requests = dict(h.spec.containers[0].get("resources", {}).get("requests", {}))
                pod = msgspec.json.decode(raw)
                message = next((c.get("message", "") for c in pod.get("status", {}).get("conditions", [])
                                if c.get("type") == "PodScheduled"), "")
            continue
        kept.append(raw)
    if requests is None:
        raise ValueError(f"{base}: no pending critical pod to take the requests of the new ones from")
    _write_list(out, [bytes(raw) for raw in kept], critical_objects(n, requests, message, seed))
    return len(items) - len(kept)


def _write_list(out: Path, raws: list[bytes], objects: list[dict]) -> None:
    """A `List` of the objects already encoded (`raws`) and then `objects`, written atomically."""
    encoder = msgspec.json.Encoder(order="sorted")
    tmp = out.with_suffix(out.suffix + f".tmp{os.getpid()}")
    try:
        with tmp.open("wb") as f:
            f.write(b'{"apiVersion":"v1","items":[')
            for i, raw in enumerate(raws):
                f.write((b"," if i else b"") + raw)
            for obj in objects:
                f.write(b"," + encoder.encode(obj))
            f.write(b'],"kind":"List","metadata":{"resourceVersion":""}}\n')
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)


#: The natural queue's workloads, cycled: (requests, priority class) — a small service that fits
#: somewhere, mid-sized ones that need evictions on most nodes, one that fits no node.
_NATURAL_SHAPES = (
    ({"cpu": "250m", "memory": "512Mi"}, "standard"),
    ({"cpu": "2", "memory": "12Gi"}, "high"),
    ({"cpu": "1", "memory": "20Gi"}, "platform-critical"),
    ({"cpu": "500m", "memory": "1Gi"}, "batch-low"),
    ({"cpu": "64", "memory": "512Gi"}, "standard"),
)


def natural_objects(n: int, seed: int = 0) -> list[dict]:
    """`n` Pending pods of ordinary Deployments (10 replicas each, namespace `surge`), with their
    ReplicaSets, cycling through `_NATURAL_SHAPES`."""
    ids = Ids(seed)
    out: list[dict] = []
    for k in range(0, n, 10):
        requests, pc = _NATURAL_SHAPES[(k // 10) % len(_NATURAL_SHAPES)]
        name = f"surge-{k // 10:03d}"
        w = Workload("surge", "Deployment", name,
                     [container("app", f"registry.example/surge/{name}:1.0", requests=requests,
                                limits={"memory": requests["memory"]}, probe_port=8080)],
                     ids, labels={"app.kubernetes.io/name": name}, priority_class=pc, priority=PRIORITY[pc],
                     preemption_policy="Never" if pc == "batch-low" else "PreemptLowerPriority",
                     created_s=-ids.rng.randint(60, 3600))
        replicas = min(10, n - k)
        controller = make_controller(w, replicas)
        if controller is not None:
            out.append(controller)
        out.extend(make_pod(w, node=None, age_s=min(w.created_s + ids.rng.randint(1, 59), -60), ready=False,
                            managed_fields=True) for _ in range(replicas))
    return out


def critical_objects(n: int, requests: dict[str, str], message: str = "", seed: int = 0) -> list[dict]:
    """`n` pending critical add-on pods, each with the ReplicaSet that owns it."""
    ids = Ids(seed)
    out: list[dict] = []
    for k in range(n):
        addon = _CRITICAL_ADDONS[k % len(_CRITICAL_ADDONS)]
        name = f"{addon}-q{k:03d}"
        w = Workload("kube-system", "Deployment", name,
                     [container(addon.split("-")[0], f"registry.k8s.io/{addon}/{addon}:v0.8.0", requests=requests,
                                limits={"memory": requests["memory"]} if "memory" in requests else None,
                                probe_port=8080)],
                     ids, labels={"k8s-app": name, "app.kubernetes.io/name": name},
                     priority_class="system-cluster-critical", priority=PRIORITY["system-cluster-critical"],
                     tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}], service_account=addon,
                     created_s=-ids.rng.randint(60, 3600))
        controller = make_controller(w, 1)
        if controller is not None:
            out.append(controller)
        out.append(make_pod(w, node=None, age_s=min(w.created_s + ids.rng.randint(1, 59), -60), ready=False,
                            managed_fields=True, pending_message=message))
    return out

