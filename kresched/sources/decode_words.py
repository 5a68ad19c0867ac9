"""How a fault in decoding JSON is worded: one line that names the object (`Pod ns/name`), the
field (`spec.priority`, a map's key by name) and, for malformed JSON or a byte that is not UTF-8,
the line and column in the input — counted a chunk at a time, so that a mapped file is not copied
whole for a message. Used by `kresched.sources.decode` and the readers of manifests. Pure.
"""

from __future__ import annotations

import json
import mmap
import re
from typing import Any, TypeAlias

import msgspec

__all__ = ["Buffer", "bad_byte", "clean", "describe", "describe_error", "json_error", "not_utf8", "one_line",
           "shown_name", "where"]

#: What JSON is decoded from: bytes, or a file mapped into memory (`mmap`, read-only), or a view of either.
Buffer: TypeAlias = bytes | memoryview | mmap.mmap


class _Name(msgspec.Struct):
    name: Any = None
    namespace: Any = None


class _Ident(msgspec.Struct):
    metadata: _Name | None = None


def not_utf8(data: Buffer) -> str:
    try:
        str(data, "utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8: {bad_byte(data, exc.start)}"
    return "not UTF-8"


def bad_byte(data: Buffer, offset: int) -> str:
    """`byte 0xe9 at line 3, column 12`: the byte at `offset` of `data`, and where it is."""
    return f"byte 0x{memoryview(data)[offset]:02x} at {where(data, offset)}"


def where(data: Buffer, offset: int) -> str:
    """`line 3, column 12` of the byte at `offset` (lines and columns from 1). The bytes before it
    are counted a chunk at a time: a mapped file is not copied whole for an error message."""
    view = memoryview(data)
    line, start = 1, 0  # `start`: where the offset's line begins
    for i in range(0, offset, _WHERE_CHUNK):
        chunk = bytes(view[i:min(i + _WHERE_CHUNK, offset)])
        line += chunk.count(b"\n")
        if (nl := chunk.rfind(b"\n")) != -1:
            start = i + nl + 1
    return f"line {line}, column {offset - start + 1}"


_WHERE_CHUNK = 1 << 24


_BYTE = re.compile(r"\(byte (\d+)\)")


def json_error(exc: Exception, data: Buffer) -> str:
    """msgspec's `JSON is malformed: invalid character (byte 42)` with a line and column instead.

    A string that is not UTF-8 is named by its byte and place whichever msgspec decoded it: up to
    0.22 msgspec raises `UnicodeDecodeError` (the callers catch it), from 0.23 `DecodeError("Invalid
    UTF-8 encoded string")`, without an offset.
    """
    text = one_line(str(exc)).removeprefix("JSON is malformed: ")
    if isinstance(exc, UnicodeDecodeError) or text.startswith("Invalid UTF-8"):
        return not_utf8(data)
    m = _BYTE.search(text)
    if m is None:
        return text
    return f"{text[: m.start()].rstrip()} at {where(data, int(m.group(1)))}"




def describe(kind: str, obj: Buffer | dict[str, Any], index: int | None) -> str:
    """`Pod ns/name`, `Node name`, or `Pod (item 3, without a name)`."""
    name: Any = None
    namespace: Any = None
    try:
        if isinstance(obj, dict):
            meta = obj.get("metadata")
            if isinstance(meta, dict):
                name, namespace = meta.get("name"), meta.get("namespace")
        else:
            meta = msgspec.json.decode(obj, type=_Ident).metadata
            if meta is not None:
                name, namespace = meta.name, meta.namespace
    except msgspec.MsgspecError:
        pass
    if not name or not isinstance(name, str):
        where = f"item {index}, without a name" if index is not None else "without a name"
        return f"{kind} ({where})"
    if namespace and isinstance(namespace, str):
        return f"{kind} {shown_name(namespace)}/{shown_name(name)}"
    return f"{kind} {shown_name(name)}"


def shown_name(name: str) -> str:
    """A name as a one-line message shows it: as it is, or quoted with escapes (as Go's `%q` shows
    it) where it holds a line break, a control character or another character that prints nothing —
    a file can hold any string, and an error is one line."""
    return name if name.isprintable() else json.dumps(name)


_PATH = re.compile(r" - at `\$(.*)`$")


def clean(exc: Exception, obj: Buffer | dict[str, Any] | None = None) -> str:
    """msgspec's `Expected `int`, got `str` - at `$.spec.priority`` → `spec.priority: expected `int`, got `str``.

    msgspec writes a map's key as `[...]`; when the object is at hand, the key is named instead
    (`metadata.labels.tier`), found by the value that is not what the struct expects.
    """
    text = one_line(str(exc))
    text = text[:1].lower() + text[1:] if text.startswith(("Expected", "Invalid", "Object")) else text
    m = _PATH.search(text)
    if not m:
        return text
    msg = text[: m.start()]
    path = m.group(1).lstrip(".")
    if "[...]" in path and obj is not None:
        got = _GOT.search(msg)
        if got is not None:
            path = _name_map_key(path, obj, got.group(1))
    return f"{path}: {msg}" if path else msg


def describe_error(exc: Exception, obj: Buffer | dict[str, Any] | None = None) -> str:
    """A decoding failure as one line naming the field: `spec.priority: expected `int`, got `str``."""
    return clean(exc, obj)


_GOT = re.compile(r"got `(\w+)`")
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),), "bool": (bool,), "int": (int,), "float": (float,), "str": (str,),
    "array": (list,), "object": (dict,),
}


def _name_map_key(path: str, obj: Buffer | dict[str, Any], got: str) -> str:
    """`metadata.labels[...]` → `metadata.labels.tier`, `spec.devices[0].attributes[...].string` →
    `spec.devices[0].attributes.model.string`: each key the first whose value, followed along the
    rest of the path, is of the type msgspec got."""
    types = _JSON_TYPES.get(got)
    if types is None:
        return path
    try:
        node: Any = obj if isinstance(obj, dict) else msgspec.json.decode(obj)
    except msgspec.MsgspecError:
        return path
    parts = re.findall(r"\[\.\.\.\]|\[\d+\]|[^.\[\]]+", path)
    named = _follow(node, parts, lambda v: isinstance(v, types) and (got == "bool" or not isinstance(v, bool)))
    if named is None:
        return path
    return "".join(p if p.startswith("[") or i == 0 else f".{p}" for i, p in enumerate(named))


def _follow(node: Any, parts: list[str], wanted: Any) -> list[str] | None:
    """`parts` with each `[...]` replaced by a key under which the path reaches a `wanted` value."""
    if not parts:
        return [] if wanted(node) else None
    head, rest = parts[0], parts[1:]
    if head == "[...]":
        if isinstance(node, dict):
            for key, value in node.items():
                found = _follow(value, rest, wanted)
                if found is not None:
                    return [str(key), *found]
        return None
    try:
        child = node[int(head[1:-1])] if head.startswith("[") else node[head]
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    found = _follow(child, rest, wanted)
    return None if found is None else [head, *found]


def one_line(text: str) -> str:
    return " ".join(text.split())
