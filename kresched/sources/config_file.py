"""Reading a configuration document — kube-scheduler's `--config` file, kresched's own
configuration — from a file or a ConfigMap manifest holding it: bounded, UTF-8, one YAML or JSON
document (YAML as Kubernetes reads it: timestamps stay strings), nested no deeper than the
snapshot reader allows. Every failure is one `InputError` line naming the file (a kubeconfig's, `read_kubeconfig`, a
`ClusterAccessError`). What the document
means is decided above (`sched.config`, `plan.policy`): this module only reads.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from kresched.errors import ClusterAccessError, InputError
from kresched.sources.decode import MAX_DEPTH, _yaml, _yaml_error, _yaml_type, check_yaml_depth

__all__ = ["KUBECONFIG_MAX_BYTES", "MAX_CONFIG_BYTES", "file_type", "open_pipe", "read_config_document",
           "read_kubeconfig"]

#: A configuration file is small; anything larger is not one.
MAX_CONFIG_BYTES = 4 << 20

#: Bytes: a kubeconfig longer than this is refused unread. Real ones are kilobytes (a few MiB with
#: hundreds of contexts and their CA bundles); `/dev/zero` or a runaway file would be read to
#: the end of memory.
KUBECONFIG_MAX_BYTES = 16 << 20


def read_config_document(path: str, what: str, key: str | None = None) -> Any:
    """The one document in `path` (`what` names the option for messages). A ConfigMap manifest is
    accepted in its place when `key` is given: the document is its `data[key]` (or its only key),
    as a pod reads it mounted from the ConfigMap."""
    origin = f"{what} {path}"
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"{origin}: no such file") from None
    except OSError as exc:
        raise InputError(f"{origin}: cannot read it: {exc.strerror}") from None
    fifo = stat.S_ISFIFO(st.st_mode)
    if not stat.S_ISREG(st.st_mode) and not fifo:
        raise InputError(f"{origin}: not a regular file")
    if st.st_size > MAX_CONFIG_BYTES:
        raise InputError(f"{origin}: larger than {MAX_CONFIG_BYTES >> 20} MiB: not a configuration file")
    try:
        data = _read_at_most(path, st, MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{origin}: cannot read it: {exc.strerror}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise InputError(f"{origin}: larger than {MAX_CONFIG_BYTES >> 20} MiB: not a configuration file")
    doc = parse_document(data, origin)
    if key is not None and isinstance(doc, dict) and doc.get("kind") == "ConfigMap" and doc.get("apiVersion") == "v1":
        data_map = doc.get("data") or {}
        if not isinstance(data_map, dict) or not data_map:
            raise InputError(f"{origin}: the ConfigMap has no data")
        if key in data_map:
            text = data_map[key]
        elif len(data_map) == 1:
            text = next(iter(data_map.values()))
        else:
            raise InputError(f"{origin}: the ConfigMap has no key {key!r} (it has {', '.join(sorted(data_map))})")
        if not isinstance(text, str):
            raise InputError(f"{origin}: the ConfigMap's data is not text")
        doc = parse_document(text.encode(), f"{origin} (ConfigMap data)")
    return doc


def parse_document(data: bytes, origin: str) -> Any:
    """One YAML (or JSON: YAML reads it) document from `data`."""
    if b"\x00" in data:
        raise InputError(f"{origin}: binary data (a NUL byte): not a YAML or JSON document")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{origin}: not UTF-8 (byte {exc.start})") from None
    yaml, _ = _yaml()
    from kresched.sources.goyaml import loader

    try:
        check_yaml_depth(text, origin)
        # Strict, as kube-scheduler decodes its --config (`serializer.EnableStrict`): a key twice is an error.
        docs = [d for d in yaml.load_all(text, Loader=loader(strict=True)) if d is not None]
    except yaml.YAMLError as exc:
        raise InputError(f"{origin}: malformed YAML: {_yaml_error(exc)}") from None
    except RecursionError:
        raise InputError(f"{origin}: nested more than {MAX_DEPTH} levels deep") from None
    if not docs:
        raise InputError(f"{origin}: empty: no document in it")
    if len(docs) > 1:
        raise InputError(f"{origin}: {len(docs)} documents: a configuration file holds one")
    if not isinstance(docs[0], dict):
        raise InputError(f"{origin}: not a mapping (it is a {_yaml_type(docs[0])})")
    return docs[0]


def read_kubeconfig(path: str) -> str:
    """The text of the kubeconfig at `path`, read no further than `KUBECONFIG_MAX_BYTES`: a
    device, a socket or a runaway file is one line (`ClusterAccessError`), not memory exhausted or
    a hang. A pipe is read as kubectl reads one (`--kubeconfig <(vault read ...)`), never waiting
    for a writer that is not there (`open_pipe`)."""
    try:
        st = os.stat(path)
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            raise ClusterAccessError(f"kubeconfig {path}: is a directory, not a file")
        if not stat.S_ISREG(mode) and not stat.S_ISFIFO(mode):
            raise ClusterAccessError(f"kubeconfig {path}: not a regular file (it is a {file_type(mode)})")
        data = _read_at_most(path, st, KUBECONFIG_MAX_BYTES + 1)
    except OSError as exc:
        raise ClusterAccessError(f"kubeconfig {path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > KUBECONFIG_MAX_BYTES:
        raise ClusterAccessError(f"kubeconfig {path}: larger than {KUBECONFIG_MAX_BYTES >> 20} MiB; "
                                 "not read (a kubeconfig is kilobytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ClusterAccessError(f"invalid kubeconfig {path}: not UTF-8 text") from None


#: What each named pipe read held, by its device and inode: a pipe can be read only once, and a
#: run reads its kubeconfig twice (the context's namespace, then the connection).
_PIPES: dict[tuple[int, int], bytes] = {}


def _read_at_most(path: str | os.PathLike[str], st: os.stat_result, limit: int) -> bytes:
    """Up to `limit` bytes of the regular file or named pipe `path` (`st`: its stat); a pipe's
    once, the same bytes again for every later read in the run."""
    if not stat.S_ISFIFO(st.st_mode):
        with open(path, "rb") as f:
            return f.read(limit)
    key = (st.st_dev, st.st_ino)
    if key not in _PIPES:
        with open_pipe(path) as f:
            _PIPES[key] = f.read(limit)
    return _PIPES[key]


def open_pipe(path: str | os.PathLike[str]) -> BinaryIO:
    """A named pipe (a FIFO: `/dev/stdin` on a pipe, bash's `<(...)`) opened for reading without
    waiting for a writer: opened non-blocking (a plain open of a FIFO nobody writes to blocks
    forever), then read blocking as any file. With no writer at all it reads as empty at once."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def file_type(mode: int) -> str:
    """What a file that is not a regular one is, for a message: `FIFO`, `character device`."""
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"
