"""`null` read as Go reads it: the zero value of the field, whatever the field.

Go's `encoding/json` (and so the API server, kubectl and every Go tool) reads `null` into a field as
that field's zero value: nil for a slice, map or pointer, and a no-op for a struct, a string or a
number. A field sent as `null` is therefore the same object as one without it (the API server then
applies its defaults to both alike), an element sent as `null` is the zero element (`""` in a list
of strings, `{}` in a list of objects), and a map value sent as `null` is the zero value.

Real API servers send `null` for every empty slice, map or pointer field declared without
`omitempty` — the objects are stored as protobuf, so an empty list comes back as nil. Of the fields
kresched reads, those that a server actually sends empty (`CSINode.spec.drivers`,
`spec.drivers[].topologyKeys`, `Node.status.images[].names`, a zero time in
`PodDisruptionBudget.status.disruptedPods`) are declared nullable in the model itself, so that the
typed decode of a whole list never leaves its fast path for them. Everywhere else (support bundles,
other tools' fixtures: `spec: null`, `status.conditions: null`, ...) a strict decode that fails on
a `null` is retried through `drop_nulls`: the generic document is made what Go would have read,
guided by the model's own types, and converted again.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec
from msgspec import inspect as mi

__all__ = ["drop_nulls", "is_null_error"]


def is_null_error(exc: msgspec.ValidationError) -> bool:
    """Whether a strict decode failed on a `null` (msgspec: "Expected `array`, got `null`")."""
    return "got `null`" in str(exc)


def drop_nulls(value: Any, typ: Any) -> Any:
    """`value` (a generic document: dicts, lists, scalars) as Go would have read it into `typ`: a
    `null` field dropped, a `null` element or map value replaced by the zero value of its type.
    Fields the type declares nullable keep their `null` (the model gives it a meaning of its own).
    Dicts and lists are changed in place; the (same) value is returned."""
    return _clean(value, _info(typ))


@functools.cache
def _info(typ: Any) -> mi.Type:
    return mi.type_info(typ)


def _nullable(info: mi.Type) -> bool:
    if isinstance(info, mi.AnyType | mi.NoneType):
        return True
    return isinstance(info, mi.UnionType) and any(isinstance(t, mi.NoneType) for t in info.types)


def _struct_of(info: mi.Type) -> mi.StructType | None:
    """The struct a value of this type decodes into, when it is an object (`X | None` included)."""
    if isinstance(info, mi.StructType):
        return info
    if isinstance(info, mi.UnionType):
        for t in info.types:
            if isinstance(t, mi.StructType):
                return t
    return None


def _element(info: mi.Type) -> mi.Type | None:
    """The element type of a list-like type (`X | None` included)."""
    if isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return info.item_type
    if isinstance(info, mi.UnionType):
        for t in info.types:
            if (e := _element(t)) is not None:
                return e
    return None


def _values(info: mi.Type) -> mi.Type | None:
    """The value type of a map type (`X | None` included)."""
    if isinstance(info, mi.DictType):
        return info.value_type
    if isinstance(info, mi.UnionType):
        for t in info.types:
            if isinstance(t, mi.DictType):
                return t.value_type
    return None


def _zero(info: mi.Type) -> Any:
    """Go's zero value of an element or map value of this type, as a generic document."""
    if _nullable(info):
        return None
    if isinstance(info, mi.UnionType):  # IntOrString, a Quantity: Go's zero is the number 0
        ints = [t for t in info.types if isinstance(t, mi.IntType)]
        info = ints[0] if ints else info.types[0]
    if isinstance(info, mi.StructType | mi.DictType):
        return {}
    if _element(info) is not None:
        return []
    if isinstance(info, mi.StrType):
        return ""
    if isinstance(info, mi.BoolType):
        return False
    if isinstance(info, mi.IntType):
        return 0
    if isinstance(info, mi.FloatType):
        return 0.0
    return None


_FIELDS: dict[type, dict[str, mi.Type]] = {}


def _fields(info: mi.StructType) -> dict[str, mi.Type]:
    """A struct's fields by their name in the document (inspect's types are not hashable: by class)."""
    fields = _FIELDS.get(info.cls)
    if fields is None:
        fields = _FIELDS[info.cls] = {f.encode_name: f.type for f in info.fields}
    return fields


def _clean(value: Any, info: mi.Type) -> Any:
    if isinstance(value, dict):
        struct = _struct_of(info)
        if struct is not None:
            fields = _fields(struct)
            for key in [k for k, v in value.items() if v is None and k in fields and not _nullable(fields[k])]:
                del value[key]
            for key, v in value.items():
                if v is not None and (t := fields.get(key)) is not None:
                    _clean(v, t)
            return value
        vt = _values(info)
        if vt is not None:
            for key, v in value.items():
                if v is None:
                    value[key] = _zero(vt)
                else:
                    _clean(v, vt)
        return value
    if isinstance(value, list):
        et = _element(info)
        if et is not None:
            for i, v in enumerate(value):
                if v is None:
                    value[i] = _zero(et)
                else:
                    _clean(v, et)
    return value
