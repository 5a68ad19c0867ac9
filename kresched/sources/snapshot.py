"""Snapshot sources: a file, a directory of files, `-` (stdin) or `demo` (the built-in cluster).

Owns reading and writing kresched's snapshot format, which is simply a Kubernetes `List`
(`{"apiVersion": "v1", "kind": "List", "items": [...]}`), and building the `ClusterState`
from decoded objects (`build_state`). Does not talk to the API server (see `live`).
"""

from __future__ import annotations

import gzip
import sys
import zlib
from importlib import resources
from pathlib import Path
from typing import BinaryIO

import msgspec

from kresched.errors import InputError
from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod, PriorityClass
from kresched.model.storage import STORAGE_KINDS, StorageState
from kresched.sources.decode import Objects, decode_json, decode_yaml, paused_gc

__all__ = [
    "DEMO",
    "SYSTEM_PRIORITY_CLASSES",
    "build_state",
    "encode_snapshot",
    "load_snapshot",
    "read_source",
    "write_snapshot",
]

DEMO = "demo"
_SUFFIXES = (".json", ".yaml", ".yml")
_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"


def load_snapshot(spec: str, stdin: BinaryIO | None = None) -> ClusterState:
    """Read `spec` (path, directory, `-` or `demo`) into a `ClusterState`."""
    with paused_gc():
        objects = read_source(spec, stdin)
        return build_state(objects)


def read_source(spec: str, stdin: BinaryIO | None = None) -> Objects:
    if spec == "-":
        data = (stdin or sys.stdin.buffer).read()
        return _decode(data, "<stdin>", None)
    if spec == DEMO:
        ref = resources.files("kresched.demo").joinpath("cluster.yaml")
        try:
            data = ref.read_bytes()
        except OSError:
            raise InputError("demo: the built-in demo cluster (kresched/demo/cluster.yaml) is missing "
                             "from this installation") from None
        return _decode(data, "demo", "cluster.yaml")
    path = Path(spec)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and _is_snapshot_name(p.name))
        if not files:
            raise InputError(f"{spec}: no *.json, *.yaml or *.yml files in this directory")
        out = Objects()
        for f in files:
            out.extend(_decode(_read(f), str(f), f.name))
        return out
    return _decode(_read(path), spec, path.name)


def _is_snapshot_name(name: str) -> bool:
    base = name[:-3] if name.endswith(".gz") else name
    return base.endswith(_SUFFIXES)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file or directory") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _decode(data: bytes, origin: str, name: str | None) -> Objects:
    """JSON or YAML, gzip-compressed or not: gzip is told by its magic bytes, not by the name;
    JSON by its first character (or a `.json` name), anything else is read as YAML."""
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{origin}: corrupt gzip data: {' '.join(str(exc).split())}") from None
        if name and name.endswith(".gz"):
            name = name[:-3]
    data = data.removeprefix(_UTF8_BOM)
    stripped = data.lstrip()
    if not stripped:
        raise InputError(f"{origin}: empty input: expected a Kubernetes List or objects (JSON or YAML)")
    looks_json = stripped[:1] in (b"{", b"[") or (name or "").endswith(".json")
    if looks_json:
        return decode_json(data, origin)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{origin}: not UTF-8 text (JSON or YAML expected)") from None
    return decode_yaml(text, origin)


#: Created by the API server in every cluster (`scheduling.SystemPriorityClasses`), so a snapshot
#: may omit them and a pod may still name them.
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}


def build_state(objects: Objects) -> ClusterState:
    """Resolve what the API server would have filled in, then index.

    The Priority admission plugin sets a new pod's `spec.priority` (and its preemptionPolicy, and
    its priorityClassName when it names none): from the PriorityClass it names, or else from the
    `globalDefault` class (the one with the lowest value if several), or else 0. Real dumps
    already carry the result; hand-written snapshots may not. A pod whose `spec.priority` is set
    is left as it is.
    """
    pods = objects.pods
    if any(p.spec.priority is None for p in pods):
        classes = {c.name: c for c in objects.priority_classes}
        default = min((c for c in objects.priority_classes if c.global_default), key=lambda c: c.value,
                      default=None)
        pods = [p if p.spec.priority is not None else _admit(p, classes, default) for p in pods]
    kinds = objects.storage_kinds
    if kinds is not None:
        kinds |= {k for k, objs in zip(STORAGE_KINDS, (objects.pvs, objects.pvcs, objects.storage_classes,
                                                          objects.csi_nodes), strict=True) if objs}
    storage = StorageState.build(objects.pvs, objects.pvcs, objects.storage_classes, objects.csi_nodes, kinds)
    return ClusterState.build(objects.nodes, pods, objects.pdbs, objects.priority_classes, objects.namespaces,
                              objects.workloads, storage)


def _admit(pod: Pod, classes: dict[str, PriorityClass], default: PriorityClass | None) -> Pod:
    """The Priority admission plugin's `admitPod` on a pod that has no `spec.priority` yet."""
    name = pod.spec.priority_class_name
    cls = classes.get(name) if name else default
    if cls is not None:
        name, value, policy = cls.name, cls.value, cls.preemption_policy or "PreemptLowerPriority"
    elif name in SYSTEM_PRIORITY_CLASSES:
        value, policy = SYSTEM_PRIORITY_CLASSES[name], "PreemptLowerPriority"
    elif name and default is not None:
        # The API server would have refused a pod naming a class that does not exist; the
        # snapshot may simply lack the class: fall back to the default class's value.
        value, policy = default.value, default.preemption_policy or "PreemptLowerPriority"
    else:
        value, policy = 0, "PreemptLowerPriority"
    spec = msgspec.structs.replace(pod.spec, priority=value, priority_class_name=name,
                                   preemption_policy=pod.spec.preemption_policy or policy)
    return msgspec.structs.replace(pod, spec=spec)


def encode_snapshot(state: ClusterState) -> bytes:
    """The state as one JSON `List` that `load_snapshot` reads back into an equal state."""
    st = state.storage
    items: list[object] = [*state.namespaces, *state.priority_classes, *state.nodes, *state.pdbs, *state.workloads,
                           *state.pods, *st.classes, *st.pvs, *st.pvcs, *st.csi_nodes]
    return msgspec.json.encode({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items})


def write_snapshot(state: ClusterState, path: str | None, stdout: BinaryIO | None = None) -> None:
    data = encode_snapshot(state) + b"\n"
    if path is None or path == "-":
        out = stdout or sys.stdout.buffer
        out.write(data)
        out.flush()
        return
    if path.endswith(".gz"):
        data = gzip.compress(data, compresslevel=6)
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
