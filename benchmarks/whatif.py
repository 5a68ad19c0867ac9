"""The what-if of the benchmark: a Deployment of 1,000 replicas planned on a generated cluster
(`kresched plan -f FILE --snapshot CLUSTER`).

Owns the manifest `whatif-1000.yaml` next to the clusters: a Deployment in a team namespace of the
generated cluster, 1,000 replicas of one shape — 250m CPU and 512Mi, the generator's most common
application profile, priority `high` (10,000): on a cluster whose nodes are ~90% requested, most
replicas fit where there is room left and the rest make room by evicting lower-priority pods —
spread by the system default constraints among themselves (a Service selects them). Every replica
is planned, one after another, each seeing the ones before placed: the planner's per-shape reuse
(`FilterMemo`, `ScoreMemos`, the tier indexes) is what keeps it near the cost of loading the cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

__all__ = ["REPLICAS", "ensure_whatif", "whatif_manifest"]

REPLICAS = 1000


def whatif_manifest(replicas: int = REPLICAS) -> list[dict]:
    labels = {"app.kubernetes.io/name": "checkout-api", "app.kubernetes.io/part-of": "checkout"}
    container = {"name": "api", "image": "registry.acme.io/checkout/api:4.2.0",
                 "ports": [{"containerPort": 8080, "name": "http"}],
                 "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "512Mi"}}}
    return [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "checkout-api", "namespace": "checkout"},
         "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": "http"}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "checkout-api", "namespace": "checkout"},
         "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"priorityClassName": "high", "containers": [container]}}}},
    ]


def ensure_whatif(directory: Path, log: Callable[[str], None] = print) -> Path:
    """The manifest, written first if missing (a JSON `List`: kubectl reads it as it reads YAML)."""
    path = directory / f"whatif-{REPLICAS}.json"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        log(f"writing {path.name}")
        path.write_bytes(msgspec.json.encode({"apiVersion": "v1", "kind": "List", "items": whatif_manifest()}))
    return path
