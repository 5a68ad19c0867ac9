"""Objects as a real API server stores and serves them, not as a test wrote them.

- Protobuf storage: an empty slice comes back nil, and the fields declared without `omitempty`
  serve nil as `null` (`CSINode.spec.drivers`, a driver's `topologyKeys`, a node image's `names`),
  as `GO_NULLABLE` in tests/test_nulls.py lists them.
- PodTopologyLabelsAdmission (v1.35+): a pod created with `spec.nodeName`, or bound, gets its node's
  `topology.kubernetes.io/zone` and `region` labels, overwriting its own.
- The kubelet: every node has a CSINode of its name, owned by it, with no drivers (`drivers: null`).
"""

from __future__ import annotations

from typing import Any

TOPOLOGY_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region")

__all__ = ["TOPOLOGY_LABELS", "admit_topology_labels", "kubelet_csinode", "nil_as_null"]


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
