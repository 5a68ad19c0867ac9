"""The three PATCH formats the API server accepts for built-in types, applied to plain API dicts.

- `merge_patch`: `application/merge-patch+json` (RFC 7386): maps merge, `null` deletes a key,
  lists and scalars are replaced whole.
- `json_patch`: `application/json-patch+json` (RFC 6902): `add`, `remove`, `replace`, `move`,
  `copy`, `test`; a failed operation (a missing path, a failed `test`) is a `PatchError`.
- `strategic_merge_patch`: `application/strategic-merge-patch+json`: like a merge patch, except
  that lists whose Go field carries a `patchMergeKey` are merged item by item on that key (e.g. a
  node's `status.conditions` by `type`); every other list — a node's `spec.taints` among them,
  which has no merge key — is replaced whole. Supports the `$patch: replace|delete` directive on
  maps and on list items, and `$retainKeys` is ignored. `MERGE_KEYS` says which lists merge.

Pure functions on copies; the server turns `PatchError` into the Status a real server sends.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["MERGE_KEYS", "PatchError", "json_patch", "merge_patch", "strategic_merge_patch"]


class PatchError(Exception):
    """The patch cannot be applied to this object (the server answers 422)."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch; returns a new value."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


# -- RFC 6902 -----------------------------------------------------------------------------------

def _tokens(pointer: str) -> list[str]:
    """RFC 6901 JSON pointer → reference tokens (`~1` is `/`, `~0` is `~`)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"JSON pointer {pointer!r} must start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _index(container: list[Any], token: str, pointer: str, *, for_add: bool = False) -> int:
    if for_add and token == "-":
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r} in {pointer}")
    i = int(token)
    if i > len(container) or (i == len(container) and not for_add):
        raise PatchError(f"array index {i} out of bounds in {pointer}")
    return i


def _parent(doc: Any, pointer: str) -> tuple[Any, str]:
    tokens = _tokens(pointer)
    if not tokens:
        raise PatchError("the root cannot be the target of this operation")
    node = doc
    for token in tokens[:-1]:
        node = _child(node, token, pointer)
    return node, tokens[-1]


def _child(node: Any, token: str, pointer: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise PatchError(f"missing value at {pointer}")
        return node[token]
    if isinstance(node, list):
        return node[_index(node, token, pointer)]
    raise PatchError(f"cannot traverse a scalar at {pointer}")


def _get(doc: Any, pointer: str) -> Any:
    node = doc
    for token in _tokens(pointer):
        node = _child(node, token, pointer)
    return node


def _add(doc: Any, pointer: str, value: Any) -> Any:
    if pointer == "":
        return value
    parent, token = _parent(doc, pointer)
    if isinstance(parent, dict):
        parent[token] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, token, pointer, for_add=True), value)
    else:
        raise PatchError(f"cannot add to a scalar at {pointer}")
    return doc


def _remove(doc: Any, pointer: str) -> Any:
    parent, token = _parent(doc, pointer)
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"unable to remove nonexistent key: {token}: missing value")
        return parent.pop(token)
    if isinstance(parent, list):
        return parent.pop(_index(parent, token, pointer))
    raise PatchError(f"cannot remove from a scalar at {pointer}")


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902 JSON patch; returns a new value, or raises `PatchError` (nothing half-applied)."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid operation {op!r}: needs 'op' and 'path'")
        kind, path = op["op"], op["path"]
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"{kind} operation on {path} has no value")
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            if path == "":
                doc = copy.deepcopy(op["value"])
                continue
            _get(doc, path)  # must exist
            parent, token = _parent(doc, path)
            if isinstance(parent, list):
                parent[_index(parent, token, path)] = copy.deepcopy(op["value"])
            else:
                parent[token] = copy.deepcopy(op["value"])
        elif kind in ("move", "copy"):
            if "from" not in op:
                raise PatchError(f"{kind} operation on {path} has no 'from'")
            if kind == "move" and (path + "/").startswith(op["from"] + "/") and path != op["from"]:
                raise PatchError(f"cannot move {op['from']} into its own child {path}")
            value = _remove(doc, op["from"]) if kind == "move" else copy.deepcopy(_get(doc, op["from"]))
            doc = _add(doc, path, value)
        elif kind == "test":
            try:
                have = _get(doc, path)
            except PatchError:
                raise PatchError(f"testing value {path} failed: test failed") from None
            if have != op["value"]:
                raise PatchError(f"testing value {path} failed: test failed")
        else:
            raise PatchError(f"Unexpected kind: {kind}")
    return doc


# -- strategic merge patch ------------------------------------------------------------------------

#: Lists merged by key in a strategic merge patch, by field path ("[]" = any item of a list).
#: Everything else (a node's spec.taints: no patchMergeKey in core/v1) is replaced whole.
MERGE_KEYS: dict[str, str] = {
    "metadata.ownerReferences": "uid",
    "status.conditions": "type",
    "status.addresses": "type",
    "spec.containers": "name",
    "spec.initContainers": "name",
    "spec.volumes": "name",
    "spec.containers[].ports": "containerPort",
    "spec.containers[].env": "name",
}


def strategic_merge_patch(target: Any, patch: Any, path: str = "") -> Any:
    """A strategic merge patch of built-in types (see the module docstring); returns a new value."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    patch = dict(patch)
    directive = patch.pop("$patch", None)
    patch.pop("$retainKeys", None)
    if directive == "delete":
        return None
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if v is not None}
    if directive is not None:
        raise PatchError(f"unknown patch directive $patch: {directive}")
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith(("$setElementOrder/", "$deleteFromPrimitiveList/")):
            continue
        sub = f"{path}.{key}" if path else key
        if value is None:
            out.pop(key, None)
        elif isinstance(value, list) and MERGE_KEYS.get(sub):
            out[key] = _merge_list(out.get(key) or [], value, MERGE_KEYS[sub], sub)
        elif isinstance(value, list):
            out[key] = [strategic_merge_patch(None, v, f"{sub}[]") if isinstance(v, dict) else copy.deepcopy(v)
                        for v in value if not (isinstance(v, dict) and v.get("$patch") == "delete")]
        else:
            merged = strategic_merge_patch(out.get(key), value, sub)
            if merged is None:
                out.pop(key, None)
            else:
                out[key] = merged
    return out


def _merge_list(current: list[Any], patch: list[Any], key: str, path: str) -> list[Any]:
    out = copy.deepcopy(current)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise PatchError(f"map: {item!r} does not contain declared merge key: {key}")
        where = next((i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if where is not None:
                out.pop(where)
        elif where is None:
            out.append(strategic_merge_patch(None, item, f"{path}[]"))
        else:
            out[where] = strategic_merge_patch(out[where], item, f"{path}[]")
    return out
