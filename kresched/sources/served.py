"""Pods and Nodes as the API server served them, kept beside their models for the scheduler's
extenders, and only while some extender is called (`record_into`).

kresched decodes objects straight into its models, which skip every field it does not read. An
extender is sent the objects the scheduler holds — the full objects from its informers — and may
read any field (a container's command, an annotation, the node's `nodeInfo`). So while recording,
every JSON or YAML input decoded by `sources.decode` (a snapshot, a live list page, a single GET)
also keeps the Pods' and Nodes' own bytes here, by pod UID (namespace/name without one) and node
name; a later read of the same object replaces the earlier one. Without extenders nothing is kept:
a 150,000-pod cluster's served JSON would double what loading it costs.

`ServedObjects.pod` and `.node` give an object as the scheduler's informers hold it (its `kind` and
`apiVersion` empty, a Pod's `managedFields` dropped as the scheduler's pod informer drops them), with
what kresched changed in its model since (a replacement's name, an unbound spec) applied on top; a
pod that does not exist yet (a replacement) loses what the API server sets when it creates a pod.
Objects kresched made up itself (a what-if's pods) were never served: the caller encodes its model.

Must not import `sources.decode` (which calls in here) nor anything above sources.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

__all__ = ["ServedObjects", "record_into", "recording"]

_RECORDING: ServedObjects | None = None


def record_into(store: ServedObjects | None) -> None:
    """From now on, keep the served Pods and Nodes every decode reads in `store` (None: keep none)."""
    global _RECORDING
    _RECORDING = store


def recording() -> ServedObjects | None:
    """Where served objects are kept now; None (the default): nowhere."""
    return _RECORDING


class _Meta(msgspec.Struct):
    name: Any = ""
    namespace: Any = ""
    uid: Any = ""


class _Head(msgspec.Struct):
    kind: Any = ""
    metadata: msgspec.Raw = msgspec.Raw(b"null")


class _RawList(msgspec.Struct):
    kind: Any = ""
    items: list[msgspec.Raw] | None = []


_head = msgspec.json.Decoder(_Head)
_meta = msgspec.json.Decoder(_Meta)
_raw_list = msgspec.json.Decoder(_RawList)
_KEPT = ("Pod", "Node")
#: What the API server sets on a pod it creates: unknown for a pod that does not exist yet.
_CREATED = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
            "generation", "managedFields")
_MISSING = object()


class ServedObjects:
    """The served bytes of Pods (by UID, else namespace/name) and Nodes (by name), each with the
    model decoded from them."""

    def __init__(self) -> None:
        self._pods: dict[str, tuple[Any, msgspec.Raw]] = {}
        self._nodes: dict[str, tuple[Any, msgspec.Raw]] = {}
        #: Per key: the served object as the scheduler holds it (kind and managedFields gone), encoded once.
        self._plain: dict[tuple[str, str], msgspec.Raw] = {}

    def __len__(self) -> int:
        return len(self._pods) + len(self._nodes)

    # -- recording (sources.decode) --------------------------------------------------------------

    def add_json(self, data: Any, pods: Iterable[Any], nodes: Iterable[Any], item_kind: str | None = None) -> None:
        """The Pods and Nodes of a JSON object or list (`item_kind`: the kind of a list whose items
        carry none, an API `PodList`), matched to their models `pods` and `nodes`. The input was
        decoded already: whatever is odd in it costs only its served form, never the load."""
        try:
            self._add_json(data, pods, nodes, item_kind)
        except msgspec.MsgspecError:
            return

    def _add_json(self, data: Any, pods: Iterable[Any], nodes: Iterable[Any], item_kind: str | None) -> None:
        by_key = {_pod_key(p.metadata.uid, p.metadata.namespace, p.metadata.name): p for p in pods}
        by_name = {n.metadata.name: n for n in nodes}
        if not by_key and not by_name:
            return
        head = _head.decode(data)
        if head.kind in _KEPT:
            self._add(head, msgspec.Raw(bytes(data)), by_key, by_name)
            return
        default = item_kind or (head.kind[:-4] if isinstance(head.kind, str) and head.kind.endswith("List") else None)
        for item in _raw_list.decode(data).items or ():
            one = _head.decode(item)
            if not one.kind:
                one.kind = default
            self._add(one, item, by_key, by_name)

    def add_object(self, data: Any, kind: str, model: Any) -> None:
        """One object of `kind` (an API GET answer), and its model."""
        try:
            head = _head.decode(data)
        except msgspec.MsgspecError:
            return
        head.kind = kind
        meta = model.metadata
        key = _pod_key(meta.uid, meta.namespace, meta.name)
        self._add(head, msgspec.Raw(bytes(data)), {key: model} if kind == "Pod" else {},
                  {meta.name: model} if kind == "Node" else {})

    def add_documents(self, items: Iterable[dict[str, Any]], pods: Iterable[Any], nodes: Iterable[Any]) -> None:
        """The Pods and Nodes of YAML documents (generic), matched to their models."""
        by_key = {_pod_key(p.metadata.uid, p.metadata.namespace, p.metadata.name): p for p in pods}
        by_name = {n.metadata.name: n for n in nodes}
        for item in items:
            kind = item.get("kind")
            if kind not in _KEPT:
                continue
            try:
                raw = msgspec.Raw(msgspec.json.encode(item))
            except (TypeError, ValueError):  # a YAML value JSON has no form for: not sent as served
                continue
            try:
                self._add(_head.decode(raw), raw, by_key, by_name)
            except msgspec.MsgspecError:
                continue

    def _add(self, head: _Head, raw: msgspec.Raw, pods: dict[str, Any], nodes: dict[str, Any]) -> None:
        try:
            meta = _meta.decode(head.metadata) if bytes(head.metadata) != b"null" else _Meta()
        except msgspec.MsgspecError:  # not an object: no model was made of it either
            return
        if head.kind == "Pod":
            key = _pod_key(meta.uid, meta.namespace, meta.name)
            model = pods.get(key)
            if model is not None:
                self._pods[key] = (model, raw)
                self._plain.pop(("Pod", key), None)
        elif head.kind == "Node" and isinstance(meta.name, str) and meta.name in nodes:
            self._nodes[meta.name] = (nodes[meta.name], raw)
            self._plain.pop(("Node", meta.name), None)

    # -- serving (sched.extender) ----------------------------------------------------------------

    def pod(self, pod: Any) -> msgspec.Raw | None:
        """`pod` as the scheduler would send it, from what was served; None if it never was."""
        meta = pod.metadata
        key = _pod_key(meta.uid, meta.namespace, meta.name)
        entry = self._pods.get(key)
        if entry is None:
            return None
        return self._serve("Pod", key, entry, pod, new=meta.name != entry[0].metadata.name)

    def node(self, node: Any) -> msgspec.Raw | None:
        """`node` as the scheduler would send it, from what was served; None if it never was."""
        entry = self._nodes.get(node.metadata.name)
        if entry is None:
            return None
        return self._serve("Node", node.metadata.name, entry, node, new=False)

    def _serve(self, kind: str, key: str, entry: tuple[Any, msgspec.Raw], obj: Any, new: bool) -> msgspec.Raw:
        model, raw = entry
        if obj is model:
            plain = self._plain.get((kind, key))
            if plain is None:
                plain = self._plain[(kind, key)] = _as_informer(msgspec.json.decode(raw), kind)
            return plain
        served = msgspec.json.decode(raw)
        now = msgspec.to_builtins(obj)
        if isinstance(served, dict):
            _apply(served, msgspec.to_builtins(model), now)
            if new:
                meta = served.get("metadata")
                if isinstance(meta, dict):
                    for k in _CREATED:
                        meta.pop(k, None)
                served["status"] = now.get("status", {}) if isinstance(now, dict) else {}
        return _as_informer(served, kind)


def _pod_key(uid: Any, namespace: Any, name: Any) -> str:
    return uid if isinstance(uid, str) and uid else f"{namespace or ''}/{name or ''}"


def _as_informer(obj: Any, kind: str) -> msgspec.Raw:
    """The object as an informer holds it: no `kind`, no `apiVersion` (a typed client clears them);
    a Pod without `managedFields` (the scheduler's pod informer drops them)."""
    if isinstance(obj, dict):
        obj.pop("kind", None)
        obj.pop("apiVersion", None)
        meta = obj.get("metadata")
        if kind == "Pod" and isinstance(meta, dict):
            meta.pop("managedFields", None)
    return msgspec.Raw(msgspec.json.encode(obj))


def _apply(served: dict[str, Any], before: Any, after: Any) -> None:
    """What changed from `before` to `after` (the model as decoded, and as kresched changed it),
    applied to `served`: a changed value replaces the served one, a removed one goes; fields the
    model does not have are left as they were served."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return
    for k in {*before, *after}:
        old, new = before.get(k, _MISSING), after.get(k, _MISSING)
        if old == new:
            continue
        here = served.get(k, _MISSING)
        if isinstance(old, dict) and isinstance(new, dict) and isinstance(here, dict):
            _apply(here, old, new)
        elif new is _MISSING:
            served.pop(k, None)
        else:
            served[k] = new
