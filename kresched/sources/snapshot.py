"""Snapshot sources: a file, a directory of files, `-` (stdin) or `demo` (the built-in cluster).

Owns reading and writing kresched's snapshot format, which is simply a Kubernetes `List`
(`{"apiVersion": "v1", "kind": "List", "items": [...]}`), and building the `ClusterState`
from decoded objects (`build_state`). Does not talk to the API server (see `live`).
"""

from __future__ import annotations

import gzip
import mmap
import os
import re
import stat
import sys
import zlib
from importlib import resources
from pathlib import Path
from typing import BinaryIO

import msgspec

from kresched.errors import InputError
from kresched.model.cluster import ClusterState
from kresched.model.dra import DRA_KINDS, DraState
from kresched.model.objects import Pod, PriorityClass
from kresched.model.quantity import InvalidQuantity, to_int
from kresched.model.storage import STORAGE_KINDS, StorageState
from kresched.sources.config_file import file_type, open_pipe
from kresched.sources.decode import Buffer, Objects, bad_byte, decode_json, decode_yaml, paused_gc

__all__ = [
    "DEMO",
    "DEFAULT_MAX_INPUT_BYTES",
    "MAX_INPUT_ENV",
    "default_max_input",
    "SYSTEM_PRIORITY_CLASSES",
    "max_input_bytes",
    "build_state",
    "encode_snapshot",
    "load_snapshot",
    "read_source",
    "usable_memory",
    "write_snapshot",
]

DEMO = "demo"
_SUFFIXES = (".json", ".yaml", ".yml")
_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20
#: Regular files at least this large are mapped into memory instead of copied into it: decoding
#: reads the page cache's pages in place, which spares a copy of the file and the page faults on
#: fresh memory to hold it (for a 1.4 GiB dump of 5,000 nodes, 1 to 3 s of system time on the
#: bench VM, and most of its run-to-run variance). Such a file must not be truncated while kresched
#: reads it (its pages would be gone: SIGBUS, as for `rg` and `git`, which map files too);
#: kresched's own `snapshot --file` replaces a file rather than rewriting it in place.
_MAP_AT = 1 << 20

#: How many bytes one snapshot input may hold, after decompression, at the least: `/dev/zero` or a
#: gzip bomb is stopped here instead of by the kernel's OOM killer. `KRESCHED_MAX_INPUT` (or
#: `kresched --max-input`) sets it; without it the limit is what the machine's memory can read
#: (`default_max_input`), never below this.
DEFAULT_MAX_INPUT_BYTES = 2 << 30
MAX_INPUT_ENV = "KRESCHED_MAX_INPUT"
#: An input may be half the memory kresched may use. A JSON file that large, mapped, peaks at about
#: its objects' size (decoded an item at a time: `_BY_ITEM_SHARE`); one read into memory (gzip,
#: YAML, stdin) at its size and its objects' together.
_MEMORY_PER_INPUT_BYTE = 2
#: A mapped file larger than this share of the input limit (with the default limit: a quarter of
#: the memory), or than `DEFAULT_MAX_INPUT_BYTES` (2 GiB) where that is less, is decoded an item at
#: a time, its pages let go of as they are read (`decode.decode_json(by_item=True)`). Decoded
#: whole, the file's pages and the objects from them are in memory together at the end, about
#: twice its size (a 1.6 GB dump of 5,000 nodes and 150,000 pods: a peak of 3.2 GiB; a 2.4 GB one
#: with more managedFields, 3.6 GiB); an item at a time the peak is the objects' (1.9 GiB for the
#: first), for one more pass over the file (about 1 s of CPU for the first).
_BY_ITEM_SHARE = 2


def default_max_input(memory: int | None = None) -> int:
    """The input limit without `KRESCHED_MAX_INPUT`: half of `memory` (the machine's, or its
    cgroup's limit where lower: `usable_memory`), whole GiB, and at least 2 GiB — so that the
    largest cluster Kubernetes supports reads where memory allows, and a larger input than memory
    can hold is refused with one line instead of being killed."""
    memory = usable_memory() if memory is None else memory
    return max(DEFAULT_MAX_INPUT_BYTES, memory // _MEMORY_PER_INPUT_BYTE >> 30 << 30)


def usable_memory() -> int:
    """The memory this process may use: the machine's, or less where a cgroup (v2 `memory.max`, v1
    `memory.limit_in_bytes`) limits it; 0 where none can be read."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        total = 0
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read(64).strip()
        except OSError:
            continue
        if text.isdigit() and (total == 0 or int(text) < total):
            total = int(text)
    return total


def max_input_bytes() -> int:
    """The input limit: `$KRESCHED_MAX_INPUT` (a byte quantity: `4Gi`, `500Mi`, `1000000`) or, without
    it, `default_max_input()`."""
    text = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not text:
        return default_max_input()
    try:
        value = to_int("memory", text)
    except InvalidQuantity:
        value = 0
    if value <= 0:
        raise InputError(f"{MAX_INPUT_ENV}={text!r}: not a byte size (use e.g. 4Gi, 500Mi)")
    return value


def _size(n: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= factor:
            return f"{n / factor:g} {unit}"
    return f"{n} bytes"


def _too_large(origin: str, limit: int, what: str = "") -> InputError:
    return InputError(f"{origin}: larger than {_size(limit)}{what}; if it really is a snapshot, raise the "
                      f"limit with --max-input or {MAX_INPUT_ENV} (e.g. {MAX_INPUT_ENV}=8Gi)")


def load_snapshot(spec: str, stdin: BinaryIO | None = None) -> ClusterState:
    """Read `spec` (path, directory, `-` or `demo`) into a `ClusterState`."""
    with paused_gc():
        objects = read_source(spec, stdin)
        return build_state(objects)


def read_source(spec: str, stdin: BinaryIO | None = None) -> Objects:
    limit = max_input_bytes()
    if spec == "-":
        stream = stdin or sys.stdin.buffer
        _check_stdin(stream)
        return _decode(_read_bounded(stream, "<stdin>", limit), "<stdin>", None, limit)
    if spec == DEMO:
        ref = resources.files("kresched.demo").joinpath("cluster.yaml")
        try:
            data = ref.read_bytes()
        except OSError:
            raise InputError("demo: the built-in demo cluster (kresched/demo/cluster.yaml) is missing "
                             "from this installation") from None
        return _decode(data, "demo", "cluster.yaml", limit)
    path = Path(spec)
    if path.is_dir():
        # Only regular files (symlinks to them included): a FIFO named `x.yaml` would block the read.
        files = sorted(p for p in path.iterdir() if _is_snapshot_name(p.name) and p.is_file())
        if not files:
            raise InputError(f"{spec}: no *.json, *.yaml or *.yml files in this directory")
        out = Objects()
        for f in files:
            out.extend(_decode(_read(f, limit), str(f), f.name, limit))
        return out
    return _decode(_read(path, limit), spec, path.name, limit)


def _is_snapshot_name(name: str) -> bool:
    base = name[:-3] if name.endswith(".gz") else name
    return base.endswith(_SUFFIXES)


def _read(path: Path, limit: int) -> Buffer:
    """A regular file's bytes, at most `limit` of them, or a named pipe's as stdin's are read
    (opened without waiting for a writer: `open_pipe`). Devices and sockets are refused before
    they are opened: `/dev/zero` never ends. A file of `_MAP_AT` bytes or more is mapped, not copied."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file or directory") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{path}: is a directory")
    if stat.S_ISFIFO(st.st_mode):  # `-f <(helm template ...)`, `/dev/stdin` on a pipe
        try:
            with open_pipe(path) as f:
                return _read_bounded(f, str(path), limit)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: not a regular file (it is a {file_type(st.st_mode)}); "
                         "use '-' to read a stream from stdin")
    if st.st_size > limit:
        raise _too_large(str(path), limit)
    try:
        with path.open("rb") as f:
            data = _mapped(f) if st.st_size >= _MAP_AT else None
            if data is None:
                # One read into one buffer of the file's size (chunks joined would hold it twice);
                # a file that grows as it is read (or says it is empty, as /proc's do) is read on
                # chunk by chunk, within the limit.
                data = f.read(st.st_size + 1)
                if len(data) > st.st_size:
                    data += _read_bounded(f, str(path), limit - len(data))
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:  # it grew since `stat`
        raise _too_large(str(path), limit)
    if data[:2] != _GZIP_MAGIC:
        # The head only: a binary file is refused before it is decoded. A NUL further on makes the
        # decoding fail (JSON and YAML refuse it), and `_decode` then names it.
        _refuse_binary(data[:_HEAD], str(path))
    return data


def _mapped(f: BinaryIO) -> mmap.mmap | None:
    """The open file mapped read-only into memory, or None where it cannot be (it was emptied
    since `stat`, or its file system does not map files)."""
    try:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


#: How much of a file is looked at for a NUL before it is decoded.
_HEAD = 1 << 16


def _refuse_binary(data: Buffer, origin: str) -> None:
    """Raw NUL bytes, which no JSON or YAML text holds."""
    if data.find(b"\0") != -1:
        raise InputError(f"{origin}: binary data (a NUL byte), not JSON or YAML text")


def _check_stdin(stream: BinaryIO) -> None:
    """Pipes, regular files and terminals are fine on stdin; `- < /dev/zero` is refused at once."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return  # not a real file (tests pass buffers): nothing to check
    if (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)) and not stream.isatty():
        raise InputError(f"<stdin>: is a {file_type(mode)}, not a file or a pipe")


def _read_bounded(stream: BinaryIO, origin: str, limit: int) -> bytes:
    """Up to `limit` bytes, read chunk by chunk; raw NUL bytes (which no JSON or YAML holds) end
    the read at once, so a binary stream is refused after its first chunk, not after gigabytes."""
    chunks: list[bytes] = []
    total = 0
    gzipped: bool | None = None
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        if gzipped is None:
            gzipped = chunk[:2] == _GZIP_MAGIC
        if not gzipped:
            _refuse_binary(chunk, origin)
        total += len(chunk)
        if total > limit:
            raise _too_large(origin, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _gunzip(data: Buffer, origin: str, limit: int) -> bytes:
    """gzip members one after another (as `gzip.decompress`), stopping once more than `limit`
    bytes come out: a few megabytes can expand to gigabytes."""
    out: list[bytes] = []
    total = 0
    rest = data
    try:
        while rest:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            piece = d.decompress(rest, limit - total + 1)
            while True:
                total += len(piece)
                if total > limit:
                    raise _too_large(origin, limit, " once decompressed")
                out.append(piece)
                if d.eof or not d.unconsumed_tail:
                    break
                piece = d.decompress(d.unconsumed_tail, limit - total + 1)
            if not d.eof:
                raise InputError(f"{origin}: corrupt gzip data: the compressed stream ends early")
            rest = d.unused_data.lstrip(b"\0")  # gzip allows zero padding between members
            if rest and rest[:2] != _GZIP_MAGIC:
                raise InputError(f"{origin}: corrupt gzip data: trailing garbage after the compressed data")
    except zlib.error as exc:
        raise InputError(f"{origin}: corrupt gzip data: {' '.join(str(exc).split())}") from None
    return b"".join(out)


def _decode(data: Buffer, origin: str, name: str | None, limit: int) -> Objects:
    """JSON or YAML, gzip-compressed or not: gzip is told by its magic bytes, not by the name;
    JSON by its first character (or a `.json` name), anything else is read as YAML."""
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data, origin, limit)
        if b"\0" in data:
            raise InputError(f"{origin}: binary data (a NUL byte) inside the gzip data, not JSON or YAML text")
        if name and name.endswith(".gz"):
            name = name[:-3]
    try:
        return _decode_text(data, origin, name, len(data) > min(limit // _BY_ITEM_SHARE, DEFAULT_MAX_INPUT_BYTES))
    except InputError:
        _refuse_binary(data, origin)  # the error is a NUL's (`_read` looked at the head only)
        raise


def _decode_text(data: Buffer, origin: str, name: str | None, by_item: bool = False) -> Objects:
    if data[:3] == _UTF8_BOM:
        data = memoryview(data)[3:]
    first = _FIRST_CHAR.search(data)
    if first is None:
        raise InputError(f"{origin}: empty input: expected a Kubernetes List or objects (JSON or YAML)")
    looks_json = first.group() in (b"{", b"[") or (name or "").endswith(".json")
    if looks_json:
        return decode_json(data, origin, by_item=by_item)
    try:
        text = str(data, "utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{origin}: not UTF-8 text (JSON or YAML expected): {bad_byte(data, exc.start)}") from None
    return decode_yaml(text, origin)


#: The first byte that is not ASCII white space (what `bytes.lstrip` strips).
_FIRST_CHAR = re.compile(rb"[^ \t\n\r\x0b\x0c]")


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
    storage = StorageState.build(objects.pvs, objects.pvcs, objects.storage_classes, objects.csi_nodes,
                                 _storage_kinds(objects))
    dra = DraState.build(objects.device_classes, objects.resource_slices, objects.resource_claims,
                         objects.claim_templates, _dra_kinds(objects))
    return ClusterState.build(objects.nodes, pods, objects.pdbs, objects.priority_classes, objects.namespaces,
                              objects.workloads, storage, dra, objects.leases, pod_groups=objects.pod_groups,
                              scheduling_workloads=objects.scheduling_workloads, gang_kinds=objects.gang_kinds)


def _storage_kinds(objects: Objects) -> frozenset[str]:
    """The storage kinds the source listed. A live cluster lists all four. A snapshot file is read as
    holding all four as soon as it holds one: `kubectl get nodes,pods,...,pv,pvc,storageclasses,
    csinodes` writes nothing for an empty list, and every real node has a CSINode, so a dump that
    asked for the storage kinds always shows some. A claim it lacks is then a claim the cluster
    lacks: `persistentvolumeclaim "x" not found`, as the scheduler says. A snapshot without any
    storage object was taken without them: the volume filters are not run (`explain` says so)."""
    if objects.storage_kinds is not None:
        return objects.storage_kinds
    held = objects.pvs or objects.pvcs or objects.storage_classes or objects.csi_nodes
    return frozenset(STORAGE_KINDS) if held else frozenset()


def _dra_kinds(objects: Objects) -> frozenset[str]:
    """The DRA kinds the source listed. A live cluster lists all four. A snapshot file is read as
    holding the kinds it has objects of: `kubectl get` writes nothing for an empty list, so a kind
    it lacks may have been left out of the command, and a pod whose answer depends on it is then
    said to be unknowable (`sched.dra.claims.missing_kinds`) rather than answered as if the
    cluster had none."""
    if objects.dra_kinds is not None:
        return objects.dra_kinds
    return frozenset(kind for kind, objs in zip(DRA_KINDS, (objects.device_classes, objects.resource_slices,
                                                              objects.resource_claims, objects.claim_templates),
                                               strict=True) if objs)


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
    st, dra = state.storage, state.dra
    items: list[object] = [*state.namespaces, *state.priority_classes, *state.nodes, *state.pdbs, *state.workloads,
                           *state.pods, *st.classes, *st.pvs, *st.pvcs, *st.csi_nodes, *dra.classes, *dra.slices,
                           *dra.claims, *dra.templates, *state.node_leases, *state.scheduling_workloads,
                           *state.pod_groups]
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
        _replace(Path(path), data)
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _replace(path: Path, data: bytes) -> None:
    """Write `data` as the file `path`: a new or regular file is written beside it under another
    name and renamed over it, so that no reader sees it half-written (a full disk leaves the old
    one) or truncated under it (a reader that mapped the old file keeps it: `_MAP_AT`); its mode
    is kept. Anything else (a symlink, a device such as /dev/stdout), and a file in a directory
    where no other file may be made, is written through."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        path.write_bytes(data)
        return
    import tempfile  # (3 ms of imports a reading run never needs)

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except PermissionError:
        if st is None:
            raise
        path.write_bytes(data)  # the file may be written, its directory not
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), st.st_mode & 0o7777 if st is not None else 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
