"""Bytes → model objects. The only place where API JSON/YAML becomes `kresched.model` objects.

JSON is decoded by msgspec straight into the typed structs (unknown fields such as `managedFields`
are skipped without building them); YAML goes through PyYAML's C loader when present and then
`msgspec.convert` into the same structs. Every failure becomes an `InputError` whose one-line
message names the origin (file), the object (`Pod ns/name`) and the field.

A PodGroup is one of three APIs' (`kresched.model.gangs`), and Kueue has a Workload of its own:
for those two kinds the `apiVersion` decides whether an object is read at all (another group's is
skipped before it is decoded), an API server's typed `PodGroupList` gives its items its own, and
one without any is refused.

The fast path for a JSON `List` of known kinds (what `kubectl get ... -o json` and kresched's
own snapshot give) is one typed decode of the whole document. Only when that fails (an item of
another kind, items without `kind`, a bad object) are the items decoded one by one, each still
straight into its struct: never into generic dicts. A large file mapped into memory may be decoded
an item at a time from the start (`decode_json(by_item=True)`), the same steps with the same
objects, so that its pages can be let go of as they are read.
"""

from __future__ import annotations

import functools
import gc
import mmap
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import msgspec

from kresched.errors import InputError
from kresched.model.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from kresched.model.gangs import (
    COSCHEDULING_API,
    GANG_KINDS,
    VOLCANO_API,
    WORKLOAD_API,
    PodGroup,
    SchedulingWorkload,
    is_gang_api,
)
from kresched.model.lease import Lease
from kresched.model.objects import (
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from kresched.model.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from kresched.model.validation import check_stored_pod_spec
from kresched.sources import served
from kresched.sources.decode_words import (
    Buffer,
    bad_byte,
    clean,
    describe,
    describe_error,
    json_error,
    not_utf8,
    one_line,
    shown_name,
)
from kresched.sources.nulls import drop_nulls, is_null_error

__all__ = ["KINDS", "MAX_DEPTH", "Buffer", "Objects", "bad_byte", "check_yaml_depth", "decode_items", "decode_json",
           "decode_object", "decode_yaml", "describe_error", "paused_gc", "yaml_documents"]


KINDS: dict[str, type] = {
    "Node": Node,
    "Pod": Pod,
    "PodDisruptionBudget": PodDisruptionBudget,
    "PriorityClass": PriorityClass,
    "Namespace": Namespace,
    "Service": Service,
    "ReplicationController": ReplicationController,
    "ReplicaSet": ReplicaSet,
    "StatefulSet": StatefulSet,
    "PersistentVolume": PersistentVolume,
    "PersistentVolumeClaim": PersistentVolumeClaim,
    "StorageClass": StorageClass,
    "CSINode": CSINode,
    "DeviceClass": DeviceClass,
    "ResourceSlice": ResourceSlice,
    "ResourceClaim": ResourceClaim,
    "ResourceClaimTemplate": ResourceClaimTemplate,
    "Lease": Lease,
    "PodGroup": PodGroup,
    "Workload": SchedulingWorkload,
}
_LIST_KINDS = {f"{k}List": k for k in KINDS}
Known = (Node | Pod | PodDisruptionBudget | PriorityClass | Namespace | Service | ReplicationController | ReplicaSet
         | StatefulSet | PersistentVolume | PersistentVolumeClaim | StorageClass | CSINode | DeviceClass
         | ResourceSlice | ResourceClaim | ResourceClaimTemplate | Lease | PodGroup | SchedulingWorkload)


@dataclass
class Objects:
    """What one or more inputs held, kind by kind, in input order."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    workloads: list[Service | ReplicationController | ReplicaSet | StatefulSet] = field(default_factory=list)
    pvs: list[PersistentVolume] = field(default_factory=list)
    pvcs: list[PersistentVolumeClaim] = field(default_factory=list)
    storage_classes: list[StorageClass] = field(default_factory=list)
    csi_nodes: list[CSINode] = field(default_factory=list)
    #: Leases (only the `kube-node-lease` namespace's are kept in the state).
    leases: list[Lease] = field(default_factory=list)
    #: The storage kinds the input held, even when empty (a live list of each); None: those present.
    storage_kinds: frozenset[str] | None = None
    device_classes: list[DeviceClass] = field(default_factory=list)
    resource_slices: list[ResourceSlice] = field(default_factory=list)
    resource_claims: list[ResourceClaim] = field(default_factory=list)
    claim_templates: list[ResourceClaimTemplate] = field(default_factory=list)
    #: The DRA kinds the input held, even when empty (a live list of each); None: those present.
    dra_kinds: frozenset[str] | None = None
    #: PodGroups of the three gang APIs and `scheduling.k8s.io` Workloads (`kresched.model.gangs`).
    pod_groups: list[PodGroup] = field(default_factory=list)
    scheduling_workloads: list[SchedulingWorkload] = field(default_factory=list)
    #: Which of `PodGroup`, `Workload` the input held, even when empty (a live cluster: those it
    #: lists or does not serve); None: those present.
    gang_kinds: frozenset[str] | None = None

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
        elif isinstance(obj, (Service, ReplicationController, ReplicaSet, StatefulSet)):
            self.workloads.append(obj)
        elif isinstance(obj, PersistentVolumeClaim):
            self.pvcs.append(obj)
        elif isinstance(obj, PersistentVolume):
            self.pvs.append(obj)
        elif isinstance(obj, StorageClass):
            self.storage_classes.append(obj)
        elif isinstance(obj, CSINode):
            self.csi_nodes.append(obj)
        elif isinstance(obj, ResourceSlice):
            self.resource_slices.append(obj)
        elif isinstance(obj, ResourceClaim):
            self.resource_claims.append(obj)
        elif isinstance(obj, DeviceClass):
            self.device_classes.append(obj)
        elif isinstance(obj, ResourceClaimTemplate):
            self.claim_templates.append(obj)
        elif isinstance(obj, Lease):
            self.leases.append(obj)
        elif isinstance(obj, PodGroup):
            self.pod_groups.append(obj)
        elif isinstance(obj, SchedulingWorkload):
            self.scheduling_workloads.append(obj)

    def count(self) -> int:
        """How many objects, of every kind."""
        return (len(self.nodes) + len(self.pods) + len(self.pdbs) + len(self.priority_classes) + len(self.namespaces)
                + len(self.workloads) + len(self.pvs) + len(self.pvcs) + len(self.storage_classes)
                + len(self.csi_nodes) + len(self.device_classes) + len(self.resource_slices)
                + len(self.resource_claims) + len(self.claim_templates) + len(self.leases) + len(self.pod_groups)
                + len(self.scheduling_workloads))

    def extend(self, other: Objects) -> None:
        self.nodes += other.nodes
        self.pods += other.pods
        self.pdbs += other.pdbs
        self.priority_classes += other.priority_classes
        self.namespaces += other.namespaces
        self.workloads += other.workloads
        self.pvs += other.pvs
        self.pvcs += other.pvcs
        self.storage_classes += other.storage_classes
        self.csi_nodes += other.csi_nodes
        self.leases += other.leases
        if other.storage_kinds is not None:
            self.storage_kinds = (self.storage_kinds or frozenset()) | other.storage_kinds
        self.device_classes += other.device_classes
        self.resource_slices += other.resource_slices
        self.resource_claims += other.resource_claims
        self.claim_templates += other.claim_templates
        if other.dra_kinds is not None:
            self.dra_kinds = (self.dra_kinds or frozenset()) | other.dra_kinds
        self.pod_groups += other.pod_groups
        self.scheduling_workloads += other.scheduling_workloads
        if other.gang_kinds is not None:
            self.gang_kinds = (self.gang_kinds or frozenset()) | other.gang_kinds


def _is_list_kind(kind: str) -> bool:
    return kind == "List" or kind.endswith("List")


class _Kind(msgspec.Struct):
    kind: str = ""
    #: Only what a gang kind's apiVersion is looked at for (`_reads`); anything else is no string of ours.
    api_version: Any = msgspec.field(default="", name="apiVersion")


class _TypedList(msgspec.Struct):
    kind: str = ""
    api_version: Any = msgspec.field(default="", name="apiVersion")
    #: `null` (Go's nil slice): an empty list, as Go reads it.
    items: list[Known] | None = []


class _RawList(msgspec.Struct):
    kind: str = ""
    api_version: Any = msgspec.field(default="", name="apiVersion")
    items: list[msgspec.Raw] | None = []


_typed_list_decoder = msgspec.json.Decoder(_TypedList)
_raw_list_decoder = msgspec.json.Decoder(_RawList)
_kind_decoder = msgspec.json.Decoder(_Kind)
_item_decoders = {k: msgspec.json.Decoder(t) for k, t in KINDS.items()}
#: An item of a `List` as `_typed_list_decoder` reads each (`_decoded_by_item`).
_known_decoder = msgspec.json.Decoder(Known)
# An API `PodList` (and kresched's per-kind lists): items without `kind`. A tagged struct decoded
# on its own takes a missing tag as its own kind, so the whole list is still one typed decode.
_kind_list_decoders = {
    k: msgspec.json.Decoder(msgspec.defstruct(f"_{k}List", [("kind", str, ""), ("items", list[t] | None, [])]))
    for k, t in KINDS.items()
}


@contextmanager
def paused_gc() -> Iterator[None]:
    """Decoding allocates millions of objects and no cycles: collecting during it is pure cost.
    So does planning (the CLI plans under it too; tests/plan/test_no_cycles.py holds the planners
    to it): its young collections each walk tens of thousands of new objects that point at cold
    pods, for no garbage — 15 ms apiece at 1k nodes.

    On the way out everything allocated so far is frozen (moved to the permanent generation), so
    later collections never walk the loaded state again — 1.5 million objects for a 150,000-pod
    cluster, seconds per full collection."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


# -- JSON -----------------------------------------------------------------------------------------


#: How deep objects and lists may nest. Kubernetes objects stay within a few dozen levels (a
#: CRD's managedFields included); the limit is there so that no parser recurses until the C stack
#: overflows (libyaml's composer segfaults at ~30,000 levels) or Python's recursion limit is hit.
MAX_DEPTH = 512


def _too_deep(origin: str, mark: Any = None) -> InputError:
    """`mark`: a YAML position (`line`, `column`, from 0), where the input went too deep."""
    where = f" (at line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return InputError(f"{origin}: objects and lists nested more than {MAX_DEPTH} levels deep{where}; "
                      "no Kubernetes object is")


def decode_json(data: Buffer, origin: str, item_kind: str | None = None, by_item: bool = False) -> Objects:
    """A JSON List (kubectl's `List` or an API `PodList`, ...), or a single object.

    `item_kind` is for API list responses, whose items carry no `kind`. Objects of kinds kresched
    does not use (ConfigMap, Service, ...) are skipped. Strings that are not UTF-8 and nesting
    deeper than msgspec's guard allows (it checks the depth before it recurses; at about
    `sys.getrecursionlimit()` levels) are `InputError`s like every other fault. `by_item`: a List in
    a file mapped into memory is decoded an item at a time, its pages let go of as they are read
    (`_decoded_by_item`: the same objects, at a lower peak of memory and one more pass's CPU).
    """
    try:
        found = _decoded_by_item(data, origin) if by_item and item_kind is None else None
        out, list_version = found if found is not None else _decode_json(data, origin, item_kind)
        out = _stored(out, origin, list_version)
        store = served.recording()
        if store is not None:  # extenders are called: they are sent the objects as served
            store.add_json(data, out.pods, out.nodes, item_kind)
        return out
    except UnicodeDecodeError:
        raise InputError(f"{origin}: malformed JSON: {not_utf8(data)}") from None
    except RecursionError:
        raise _too_deep(origin) from None
    except msgspec.ValidationError as exc:  # (a subclass of DecodeError: first) e.g. a malformed item's kind
        raise InputError(f"{origin}: {clean(exc)}") from None
    except msgspec.DecodeError as exc:  # malformed JSON found on a second, item-by-item pass
        raise InputError(f"{origin}: malformed JSON: {json_error(exc, data)}") from None


def _decode_json(data: Buffer, origin: str, item_kind: str | None) -> tuple[Objects, str]:
    """The objects, and the apiVersion of a typed list of a gang kind (`_gang_versions`)."""
    out = Objects()
    if item_kind is None:
        try:
            head: _TypedList | None = _typed_list_decoder.decode(data)
        except msgspec.ValidationError:  # (a subclass of DecodeError: catch it first)
            head = None  # another kind among the items, items without `kind`, or a bad object
        except msgspec.DecodeError as exc:
            raise InputError(f"{origin}: malformed JSON: {json_error(exc, data)}") from None
        if head is not None:
            if head.kind in KINDS:
                if _reads(head.kind, head.api_version):
                    out.add(_decode_one(head.kind, data, origin, None))
            elif not head.kind:
                raise InputError(f"{origin}: not a Kubernetes object or List: it has no `kind`")
            else:
                for obj in head.items or ():
                    out.add(obj)
            return out, _list_version(head.kind, head.api_version)
        try:
            head_kind = _kind_decoder.decode(data)
        except msgspec.ValidationError as exc:
            raise InputError(f"{origin}: not a Kubernetes object or List: {clean(exc)}") from None
        kind = head_kind.kind
        if kind in KINDS:
            if _reads(kind, head_kind.api_version):
                out.add(_decode_one(kind, data, origin, None))
            return out, ""
        if not kind:
            raise InputError(f"{origin}: not a Kubernetes object or List: it has no `kind`")
        if not _is_list_kind(kind):
            return out, ""  # a single object of a kind kresched does not use
        default_kind = _LIST_KINDS.get(kind)
        list_kind = kind
        list_version = _list_version(kind, head_kind.api_version)
    else:
        default_kind = item_kind
        list_kind = f"{item_kind}List"
        # An API list answer: its items carry no apiVersion (a CRD's do), the list does.
        list_version = _list_version(list_kind, _kind_decoder.decode(data).api_version) \
            if item_kind in GANG_KINDS else ""
    if default_kind is not None:
        if not _reads(default_kind, list_version):
            return out, list_version  # a list of another group's PodGroups
        try:
            for obj in _kind_list_decoders[default_kind].decode(data).items or ():
                out.add(obj)
            return out, list_version
        except msgspec.ValidationError:
            pass  # find the culprit item by item, for the message
        except msgspec.DecodeError as exc:
            raise InputError(f"{origin}: malformed JSON: {json_error(exc, data)}") from None
    _decode_items(data, origin, list_kind, default_kind, out, list_version)
    return out, list_version


def _decode_items(data: Buffer, origin: str, list_kind: str, default_kind: str | None, out: Objects,
                  list_version: str) -> None:
    try:
        raw = _raw_list_decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise InputError(f"{origin}: {list_kind}: {clean(exc)}") from None
    _decode_raw_items(raw.items or [], origin, list_kind, default_kind, out, list_version)


def _decode_raw_items(items: list[msgspec.Raw], origin: str, list_kind: str, default_kind: str | None, out: Objects,
                      list_version: str, mapped: mmap.mmap | None = None) -> None:
    """Each item on its own: its kind, then its struct, each fault worded with the item's place
    (`mapped`: the file they are in, whose pages are let go of as they are read)."""
    for i, item in enumerate(_letting_go(items, mapped)):
        try:
            head = _kind_decoder.decode(item)
        except msgspec.ValidationError as exc:
            raise InputError(f"{origin}: item {i} of the {list_kind}: {clean(exc)}") from None
        kind = head.kind or default_kind
        if not kind:
            raise InputError(f"{origin}: item {i} of the {list_kind} has no `kind`")
        if kind in KINDS and _reads(kind, head.api_version or list_version):
            out.add(_decode_one(kind, item, origin, i))


#: How much of a mapped file `_decoded_by_item` reads before it lets go of its pages again.
_RELEASE_EVERY = 64 << 20


def _decoded_by_item(data: Buffer, origin: str) -> tuple[Objects, str] | None:
    """`_decode_json` of a List in a file mapped into memory, an item at a time, the file's pages
    let go of (`MADV_DONTNEED`: they stay in the page cache) as the items are decoded — the same
    objects from the same steps (the items as one typed decode reads them; where one is not of a
    known kind, as the list of one kind reads them; then one by one, each fault worded), but the
    peak of memory is the objects, not the objects and the whole file. Its cost: one more pass
    over the file, to find the items. None where `data` is not a mapped file, or not a List with
    items (`_decode_json` reads it, and words any fault)."""
    if not isinstance(data, mmap.mmap) or not hasattr(data, "madvise"):
        return None
    try:
        raw = _raw_list_decoder.decode(data)
    except msgspec.DecodeError:  # (and ValidationError) a fault `_decode_json` words
        return None
    kind, items = raw.kind, raw.items
    if not items or not _is_list_kind(kind):
        return None
    list_version = _list_version(kind, raw.api_version)
    default_kind = _LIST_KINDS.get(kind)
    del raw
    _let_go(data)  # (the pass that found the items read every page)
    decoders = [_known_decoder] if default_kind is None else [_known_decoder, _item_decoders[default_kind]]
    for decoder in decoders:
        if decoder is not _known_decoder and not _reads(default_kind, list_version):
            return Objects(), list_version  # a list of another group's PodGroups
        out = Objects()
        add, decode = out.add, decoder.decode
        try:
            for item in _letting_go(items, data):
                add(decode(item))
            return out, list_version
        except msgspec.ValidationError:  # (a subclass of DecodeError: first)
            _let_go(data)
        except msgspec.DecodeError:
            return None  # malformed JSON the pass over the items let through: worded for the whole file
    out = Objects()
    _decode_raw_items(items, origin, kind, default_kind, out, list_version, data)
    return out, list_version


def _letting_go(items: list[msgspec.Raw], mapped: mmap.mmap | None) -> Iterator[msgspec.Raw]:
    """`items` in order, the pages of `mapped` (the file they are in) let go of every
    `_RELEASE_EVERY` bytes of them."""
    read = 0
    for item in items:
        yield item
        if mapped is not None and (read := read + len(item)) >= _RELEASE_EVERY:
            _let_go(mapped)
            read = 0


def _let_go(mapped: mmap.mmap) -> None:
    """Drop the pages of `mapped` from this process's memory (they stay in the page cache, and
    come back on the next read); where the system refuses, they stay: only the peak is higher."""
    with suppress(OSError):
        mapped.madvise(mmap.MADV_DONTNEED)


# -- gang kinds: which API an object is of -------------------------------------------------------------

_GANG_LISTS = {f"{k}List" for k in GANG_KINDS}
#: What a PodGroup or a Workload without an apiVersion is asked to say.
_GANG_VERSIONS = {"PodGroup": f"{WORKLOAD_API}, {COSCHEDULING_API} or {VOLCANO_API}",
                  "Workload": f"{WORKLOAD_API}; Kueue's Workload is another kind, of kueue.x-k8s.io"}


def _reads(kind: str, api_version: Any) -> bool:
    """Whether an object of `kind` and `api_version` is decoded at all: a PodGroup or a Workload of
    another API group (`is_gang_api`) is another object of the same name, skipped before it is
    decoded, so that its fields never fail. One without an apiVersion is decoded, and refused after
    (`_gang_versions`) unless its typed list gives it one."""
    if kind not in GANG_KINDS or not api_version or not isinstance(api_version, str):
        return True
    return is_gang_api(kind, api_version)


def _list_version(list_kind: str, api_version: Any) -> str:
    """A typed `PodGroupList`'s or `WorkloadList`'s apiVersion: its items' (an API answer's items
    carry none). Another list's (a kubectl `List` is `v1`) says nothing about its items."""
    return api_version if list_kind in _GANG_LISTS and isinstance(api_version, str) else ""


def _gang_versions(out: Objects, origin: str, list_version: str) -> None:
    """Every PodGroup and Workload of `out` with its apiVersion — its own, else its typed list's
    `list_version` — and only those of the groups kresched reads (`is_gang_api`; the others were
    decoded in a List's one typed decode). One without any apiVersion is an error: which of the
    three PodGroup APIs it is of decides what it means, and no API server stores an object without."""
    for attr, kind in (("pod_groups", "PodGroup"), ("scheduling_workloads", "Workload")):
        objs = getattr(out, attr)
        if not objs:
            continue
        for obj in objs:
            if not obj.api_version:
                if not list_version:
                    meta = {"name": obj.metadata.name, "namespace": obj.metadata.namespace}
                    raise InputError(f"{origin}: {describe(kind, {'metadata': meta}, None)}: apiVersion is "
                                     f"required: {_GANG_VERSIONS[kind]}")
                msgspec.structs.force_setattr(obj, "api_version", list_version)
        setattr(out, attr, [o for o in objs if is_gang_api(kind, o.api_version)])


def _decode_one(kind: str, data: Buffer, origin: str, index: int | None) -> Any:
    try:
        return _item_decoders[kind].decode(data)
    except msgspec.ValidationError as exc:
        if is_null_error(exc):
            return _decode_with_nulls(kind, data, origin, index)
        raise InputError(f"{origin}: {describe(kind, data, index)}: {clean(exc, data)}") from None
    except msgspec.DecodeError as exc:
        raise InputError(f"{origin}: malformed JSON: {json_error(exc, data)}") from None


_SINGLE_KINDS: dict[str, type] = {**KINDS, "Lease": Lease}
_single_decoders = {k: msgspec.json.Decoder(t) for k, t in _SINGLE_KINDS.items()}


def _decode_with_nulls(kind: str, data: Buffer, origin: str, index: int | None) -> Any:
    """The object again, its `null`s read as Go reads them (`kresched.sources.nulls`)."""
    doc = msgspec.json.decode(data)
    try:
        return msgspec.convert(drop_nulls(doc, _SINGLE_KINDS[kind]), _SINGLE_KINDS[kind])
    except msgspec.ValidationError as exc:
        raise InputError(f"{origin}: {describe(kind, doc, index)}: {clean(exc, doc)}") from None


def decode_object(data: bytes, kind: str, origin: str) -> Any:
    """One object of a known kind (an API GET/PATCH answer, a watch event's object, a Lease)."""
    obj = _decode_object(data, kind, origin)
    if isinstance(obj, Pod):
        _stored(Objects(pods=[obj]), origin)
    store = served.recording()
    if store is not None and isinstance(obj, (Pod, Node)):
        store.add_object(data, kind, obj)
    return obj


def _decode_object(data: bytes, kind: str, origin: str) -> Any:
    try:
        return _single_decoders[kind].decode(data)
    except msgspec.ValidationError as exc:
        if is_null_error(exc):
            return _decode_with_nulls(kind, data, origin, None)
        raise InputError(f"{origin}: {describe(kind, data, None)}: {clean(exc, data)}") from None
    except msgspec.DecodeError as exc:
        raise InputError(f"{origin}: malformed JSON: {json_error(exc, data)}") from None
    except UnicodeDecodeError:
        raise InputError(f"{origin}: malformed JSON: {not_utf8(data)}") from None
    except RecursionError:
        raise _too_deep(origin) from None


# -- YAML -----------------------------------------------------------------------------------------

@functools.cache
def _yaml() -> tuple[Any, type]:
    """PyYAML and the loader that reads YAML as Go does (`kresched.sources.goyaml`), imported on
    first use: a JSON run never needs them."""
    import yaml

    from kresched.sources.goyaml import loader

    return yaml, loader()


def decode_yaml(text: str | bytes, origin: str) -> Objects:
    """Multi-document YAML: each document a List or a single object."""
    out = Objects()
    docs = yaml_documents(text, origin)
    if all(doc is None for doc in docs):
        raise InputError(f"{origin}: empty input: no YAML document in it")
    for n, doc in enumerate(docs):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            what = "document" if len(docs) == 1 else f"document {n + 1}"
            raise InputError(f"{origin}: {what} is not a Kubernetes object or List "
                             f"(it is a {_yaml_type(doc)})")
        decode_items(doc, origin, out)
    out = _stored(out, origin)
    store = served.recording()
    if store is not None:  # extenders are called: they are sent the objects as served
        store.add_documents(_items(docs), out.pods, out.nodes)
    return out


def _items(docs: list[Any]) -> Iterator[dict[str, Any]]:
    """The objects of YAML documents, a List's items one by one (`decode_items` checked their shape)."""
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        kind = doc.get("kind")
        if isinstance(kind, str) and _is_list_kind(kind) and kind not in KINDS:
            default = _LIST_KINDS.get(kind)
            for item in doc.get("items") or ():
                if isinstance(item, dict):
                    yield {"kind": default, **item} if default and not item.get("kind") else item
        else:
            yield doc


def _stored(out: Objects, origin: str, list_version: str = "") -> Objects:
    """`out`, unless it holds an object the API server never stores though the model builds it
    (`check_stored_pod_spec`): then the one-line error naming it and the field. Its PodGroups and
    Workloads are settled (`_gang_versions`: `list_version` is a typed gang list's apiVersion)."""
    if out.pod_groups or out.scheduling_workloads:
        _gang_versions(out, origin, list_version)
    for pod in out.pods:
        try:
            check_stored_pod_spec(pod.spec)
        except ValueError as exc:
            ns, name = shown_name(pod.metadata.namespace), shown_name(pod.metadata.name)
            raise InputError(f"{origin}: Pod {f'{ns}/{name}' if ns else name}: {exc}") from None
    return out


def yaml_documents(text: str | bytes, origin: str) -> list[Any]:
    """Every document of multi-document YAML, read as Go reads it (`kresched.sources.goyaml`),
    generic (dicts, lists, scalars; None for an empty document); nesting beyond `MAX_DEPTH` and
    malformed YAML are `InputError`s naming `origin`."""
    yaml, loader = _yaml()
    try:
        check_yaml_depth(text, origin)
        return list(yaml.load_all(text, Loader=loader))
    except yaml.YAMLError as exc:
        raise InputError(f"{origin}: malformed YAML: {_yaml_error(exc)}") from None
    except RecursionError:
        raise _too_deep(origin) from None


def check_yaml_depth(text: str | bytes, origin: str) -> None:
    """Walk the event stream (libyaml's parser is a state machine: it does not recurse) and stop
    at the first node nested deeper than `MAX_DEPTH`, before the composer, which does recurse,
    ever sees the document. Aliases are single events here: an alias bomb costs nothing."""
    yaml, loader = _yaml()
    opening = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    closing = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    depth = 0
    events = yaml.parse(text, Loader=loader)
    while True:
        try:
            event = next(events, None)
        except yaml.MarkedYAMLError as exc:
            # libyaml from 0.2.5 (PyYAML 6.0.4's wheels) stops at 1,000 levels in its scanner,
            # which reads ahead of the events: the same input, refused a little further on.
            if "maximum nesting depth" not in (exc.problem or ""):
                raise
            raise _too_deep(origin, exc.problem_mark) from None
        if event is None:
            return
        if isinstance(event, opening):
            depth += 1
            if depth > MAX_DEPTH:
                raise _too_deep(origin, event.start_mark)
        elif isinstance(event, closing):
            depth -= 1


def _yaml_error(exc: Exception) -> str:
    """PyYAML's multi-line report as `<problem> at line L, column C`."""
    yaml, _ = _yaml()
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        problem = one_line(exc.problem or "")
        context = one_line(exc.context or "")
        what = f"{problem} ({context})" if context else problem
        return f"{what} at line {mark.line + 1}, column {mark.column + 1}"
    return one_line(str(exc))


def _yaml_type(value: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__)


def decode_items(doc: dict[str, Any], origin: str, out: Objects) -> None:
    """A decoded (generic) List or object into `out`."""
    kind = doc.get("kind")
    if not isinstance(kind, str) or not kind:
        raise InputError(f"{origin}: not a Kubernetes object or List: it has no `kind`")
    if kind in KINDS:
        if _reads(kind, doc.get("apiVersion")):
            _convert(doc, kind, origin, None, out)
        return
    if not _is_list_kind(kind):
        return  # a kind kresched does not use
    list_version = _list_version(kind, doc.get("apiVersion"))
    items = doc.get("items") or []  # absent or `null`: none
    if not isinstance(items, list):
        raise InputError(f"{origin}: `items` of the {kind} is not a list (it is a {_yaml_type(items)})")
    default_kind = _LIST_KINDS.get(kind)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(f"{origin}: item {i} of the {kind} is not an object (it is a {_yaml_type(item)})")
        item_kind = item.get("kind") or default_kind
        if not isinstance(item_kind, str) or not item_kind:
            raise InputError(f"{origin}: item {i} of the {kind} has no `kind`")
        if list_version and not item.get("apiVersion") and item_kind in GANG_KINDS:
            item = {**item, "apiVersion": list_version}  # an API list answer's item: the list's
        if _reads(item_kind, item.get("apiVersion")):
            _convert(item, item_kind, origin, i, out)


def _convert(item: dict[str, Any], kind: str, origin: str, index: int | None, out: Objects) -> None:
    typ = KINDS.get(kind)
    if typ is None:
        return
    try:
        # strict: the same document in YAML and in JSON decodes the same way (no "5" for 5).
        try:
            obj = msgspec.convert(item, typ)
        except msgspec.ValidationError as exc:
            if not is_null_error(exc):
                raise
            obj = msgspec.convert(drop_nulls(item, typ), typ)
        out.add(obj)
    except RecursionError:
        raise _too_deep(origin) from None
    except msgspec.ValidationError as exc:
        text = clean(exc, item)
        if _UNQUOTED.search(text):
            text += " (YAML reads a bare y, n, on, off, true, 08 or 1e3 as Go does, as a boolean or a number: quote it)"
        raise InputError(f"{origin}: {describe(kind, item, index)}: {text}") from None


_UNQUOTED = re.compile(r"expected `str`, got `(bool|int|float)`")
