"""Bytes → model objects. The only place where API JSON/YAML becomes `kresched.model` objects.

JSON is decoded by msgspec straight into the typed structs (unknown fields such as `managedFields`
are skipped without building them); YAML goes through PyYAML's C loader when present and then
`msgspec.convert` into the same structs. Every failure becomes an `InputError` whose one-line
message names the origin (file), the object (`Pod ns/name`) and the field.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import msgspec
import yaml

from kresched.errors import InputError
from kresched.model.lease import Lease
from kresched.model.objects import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass

__all__ = ["Objects", "KINDS", "decode_json", "decode_yaml", "decode_items", "paused_gc"]

KINDS: dict[str, type] = {
    "Node": Node,
    "Pod": Pod,
    "PodDisruptionBudget": PodDisruptionBudget,
    "PriorityClass": PriorityClass,
    "Namespace": Namespace,
}
_LIST_KINDS = {f"{k}List": k for k in KINDS}
Known = Node | Pod | PodDisruptionBudget | PriorityClass | Namespace


@dataclass
class Objects:
    """What one or more inputs held, kind by kind, in input order."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)

    def add(self, obj: Any) -> None:
        if isinstance(obj, Pod):
            self.pods.append(obj)
        elif isinstance(obj, Node):
            self.nodes.append(obj)
        elif isinstance(obj, PodDisruptionBudget):
            self.pdbs.append(obj)
        elif isinstance(obj, PriorityClass):
            self.priority_classes.append(obj)
        elif isinstance(obj, Namespace):
            self.namespaces.append(obj)

    def extend(self, other: Objects) -> None:
        self.nodes += other.nodes
        self.pods += other.pods
        self.pdbs += other.pdbs
        self.priority_classes += other.priority_classes
        self.namespaces += other.namespaces


class _Head(msgspec.Struct):
    kind: str = ""
    metadata: dict[str, Any] = {}


class _TypedList(msgspec.Struct):
    kind: str = ""
    items: list[Known] = []


class _RawList(msgspec.Struct):
    kind: str = ""
    items: list[msgspec.Raw] | None = None


_typed_list_decoder = msgspec.json.Decoder(_TypedList)
_raw_list_decoder = msgspec.json.Decoder(_RawList)
_head_decoder = msgspec.json.Decoder(_Head)
_item_decoders = {k: msgspec.json.Decoder(t) for k, t in KINDS.items()}


@contextmanager
def paused_gc() -> Iterator[None]:
    """Decoding allocates millions of objects and no cycles: collecting during it is pure cost."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def decode_json(data: bytes, origin: str, item_kind: str | None = None) -> Objects:
    """A JSON List (kubectl's `List` or an API `PodList`, ...), or a single object.

    `item_kind` is for API list responses, whose items carry no `kind`.
    """
    out = Objects()
    try:
        if item_kind is None:
            try:
                head = _typed_list_decoder.decode(data)
            except msgspec.ValidationError:
                head = None  # unknown kinds, items without `kind`, or a bad object: go item by item
            if head is not None:
                if head.kind in KINDS:
                    out.add(_item_decoders[head.kind].decode(data))
                else:
                    for obj in head.items:
                        out.add(obj)
                return out
        raw = _raw_list_decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise InputError(f"{origin}: malformed JSON: {exc}") from None
    except msgspec.ValidationError as exc:
        raise InputError(f"{origin}: not a Kubernetes object or List: {exc}") from None
    if raw.items is None:
        kind = raw.kind or _head_decoder.decode(data).kind
        if kind not in KINDS:
            if not kind:
                raise InputError(f"{origin}: not a Kubernetes object or List (no `kind`)")
            return out  # a single object of a kind kresched does not use
        out.add(_decode_one(_item_decoders[kind], data, kind, origin, data))
        return out
    default_kind = item_kind or _LIST_KINDS.get(raw.kind)
    for i, item in enumerate(raw.items):
        kind = _head_decoder.decode(item).kind if default_kind is None else default_kind
        if not kind:
            raise InputError(f"{origin}: item {i} of the List has no `kind`")
        decoder = _item_decoders.get(kind)
        if decoder is not None:
            out.add(_decode_one(decoder, item, kind, origin, item))
    return out


def _decode_one(decoder: msgspec.json.Decoder, data: bytes, kind: str, origin: str, raw: bytes) -> Any:
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise InputError(f"{origin}: {kind} {_describe(raw)}: {_clean(exc)}") from None


def _describe(raw: bytes | dict[str, Any]) -> str:
    try:
        meta = raw.get("metadata") if isinstance(raw, dict) else _head_decoder.decode(raw).metadata
    except msgspec.MsgspecError:
        meta = None
    if not isinstance(meta, dict) or not meta.get("name"):
        return "(without a name)"
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else str(meta["name"])


_PATH = re.compile(r" - at `\$(.*)`$")


def _clean(exc: Exception) -> str:
    """msgspec's `Expected int, got str - at $.spec.priority` → `spec.priority: expected int, got str`."""
    text = str(exc)
    m = _PATH.search(text)
    if not m:
        return text
    msg = text[: m.start()]
    path = m.group(1).lstrip(".")
    return f"{path}: {msg}" if path else msg


# -- YAML -----------------------------------------------------------------------------------------

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader that keeps timestamps as strings, as Kubernetes' own YAML decoding does."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}


def decode_yaml(text: str | bytes, origin: str) -> Objects:
    """Multi-document YAML: each document a List or a single object."""
    out = Objects()
    try:
        docs = list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        raise InputError(f"{origin}: malformed YAML: {' '.join(str(exc).split())}") from None
    for n, doc in enumerate(docs):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise InputError(f"{origin}: document {n + 1} is not a Kubernetes object or List")
        decode_items(doc, origin, out)
    return out


def decode_items(doc: dict[str, Any], origin: str, out: Objects) -> None:
    """A decoded (generic) List or object into `out`."""
    kind = doc.get("kind")
    if kind == "List" or (isinstance(kind, str) and kind.endswith("List")):
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise InputError(f"{origin}: `items` of the {kind} is not a list")
        default_kind = _LIST_KINDS.get(kind)
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise InputError(f"{origin}: item {i} of the {kind} is not an object")
            _convert(item, item.get("kind") or default_kind, origin, i, out)
        return
    if not isinstance(kind, str) or not kind:
        raise InputError(f"{origin}: not a Kubernetes object or List (no `kind`)")
    _convert(doc, kind, origin, None, out)


def _convert(item: dict[str, Any], kind: Any, origin: str, index: int | None, out: Objects) -> None:
    if not isinstance(kind, str) or not kind:
        where = f"item {index} of the List" if index is not None else "a document"
        raise InputError(f"{origin}: {where} has no `kind`")
    typ = KINDS.get(kind)
    if typ is None:
        return
    try:
        out.add(msgspec.convert(item, typ, strict=False))
    except msgspec.ValidationError as exc:
        raise InputError(f"{origin}: {kind} {_describe(item)}: {_clean(exc)}") from None


_single_decoders = {**_item_decoders, "Lease": msgspec.json.Decoder(Lease)}


def decode_object(data: bytes, kind: str, origin: str) -> Any:
    """One object of a known kind (an API GET/PATCH answer, a watch event's object, a Lease)."""
    try:
        return _single_decoders[kind].decode(data)
    except msgspec.DecodeError as exc:
        raise InputError(f"{origin}: malformed JSON: {exc}") from None
    except msgspec.ValidationError as exc:
        raise InputError(f"{origin}: {kind} {_describe(data)}: {_clean(exc)}") from None
