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

from kresched.bench.generate import _CRITICAL_ADDONS, GENERATOR_VERSION, PRIORITY, ensure_cluster
from kresched.bench.kube import Ids, Workload, container, make_controller, make_pod

__all__ = ["CRITICAL_PRIORITY", "critical_objects", "ensure_pending", "pending_path", "with_pending"]

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
    encoder = msgspec.json.Encoder(order="sorted")
    tmp = out.with_suffix(out.suffix + f".tmp{os.getpid()}")
    try:
        with tmp.open("wb") as f:
            f.write(b'{"apiVersion":"v1","items":[')
            for i, raw in enumerate(kept):
                f.write((b"," if i else b"") + bytes(raw))
            for obj in critical_objects(n, requests, message, seed):
                f.write(b"," + encoder.encode(obj))
            f.write(b'],"kind":"List","metadata":{"resourceVersion":""}}\n')
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return len(items) - len(kept)


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

