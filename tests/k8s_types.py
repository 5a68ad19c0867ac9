"""Check API objects (plain dicts, as `kubectl apply` reads them) against the Kubernetes OpenAPI
types the official `kubernetes` client ships.

Every generated model class (`V1CronJob`, `V1PodSpec`, ...; pydantic models in client 37) carries
`openapi_types` (attribute → type string: `str`, `int`, `bool`, `List[V1Container]`,
`Dict[str, str]`, `V1ObjectMeta`, ...) and `attribute_map` (attribute → JSON field name). The
walker below follows them from the top-level kind down every field, and reports each field the
type does not have, each value of the wrong JSON type, and each required field missing.

The client's own deserialisation is not enough on its own: `ApiClient().deserialize` type-checks
but silently drops unknown fields (a misspelt `securityContext` field would vanish), hence the
walker, plus a round trip that must give back the input unchanged.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kubernetes import client as k8s
from kubernetes.client import models

__all__ = ["model_name", "round_trip", "schema_errors", "type_errors"]

_LIST = re.compile(r"^List\[(.+)\]$")
_DICT = re.compile(r"^Dict\[([^,]+), (.+)\]$")
#: JSON types of the OpenAPI primitive type names the generator uses (bool is not an int here).
_PRIMITIVES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
    "datetime": (str,),
    "date": (str,),
    "bytes": (str,),
}


def model_name(obj: dict[str, Any]) -> str:
    """`batch/v1` `CronJob` → `V1CronJob`; `rbac.authorization.k8s.io/v1` `Role` → `V1Role`."""
    version = str(obj.get("apiVersion", "")).rpartition("/")[2]
    return f"{version[:1].upper()}{version[1:]}{obj.get('kind', '')}"


def schema_errors(obj: dict[str, Any]) -> list[str]:
    """Every way `obj` (a whole object with apiVersion and kind) departs from its OpenAPI type."""
    name = model_name(obj)
    if not hasattr(models, name):
        return [f"{obj.get('apiVersion')} {obj.get('kind')}: no such type in the kubernetes client ({name})"]
    return type_errors(obj, name, obj.get("kind", name))


def type_errors(value: Any, type_name: str, path: str) -> list[str]:
    """Errors of `value` against the type string `type_name`, each prefixed with its JSON path."""
    if (m := _LIST.match(type_name)) is not None:
        if not isinstance(value, list):
            return [f"{path}: expected a list ({type_name}), got {type(value).__name__}"]
        return [e for i, item in enumerate(value) for e in type_errors(item, m.group(1), f"{path}[{i}]")]
    if (m := _DICT.match(type_name)) is not None:
        if not isinstance(value, dict):
            return [f"{path}: expected a map ({type_name}), got {type(value).__name__}"]
        bad_keys = [f"{path}: key {k!r} is not a string" for k in value if not isinstance(k, str)]
        return bad_keys + [e for k, v in value.items() for e in type_errors(v, m.group(2), f"{path}.{k}")]
    if type_name == "object":  # free-form (IntOrString, RawExtension, ...)
        return []
    if type_name in _PRIMITIVES:
        ok = isinstance(value, _PRIMITIVES[type_name]) and not (type_name != "bool" and isinstance(value, bool))
        return [] if ok else [f"{path}: expected {type_name}, got {type(value).__name__} {value!r}"]
    model = getattr(models, type_name, None)
    if model is None:
        raise AssertionError(f"{path}: the kubernetes client has no type {type_name!r}")
    if not isinstance(value, dict):
        return [f"{path}: expected an object ({type_name}), got {type(value).__name__}"]
    by_json = {json_name: attr for attr, json_name in model.attribute_map.items()}
    errors = [f"{path}.{k}: unknown field (not in {type_name})" for k in value if k not in by_json]
    required = [model.attribute_map[attr] for attr, f in model.model_fields.items()
                if f.is_required() and attr in model.attribute_map]
    errors += [f"{path}.{k}: required field missing ({type_name})" for k in required if value.get(k) is None]
    for key, item in value.items():
        if key in by_json and item is not None:
            errors += type_errors(item, model.openapi_types[by_json[key]], f"{path}.{key}")
    return errors


def round_trip(obj: dict[str, Any]) -> Any:
    """`obj` deserialised by the client into its model (which raises on a wrong type) and
    serialised back: equal to `obj` when nothing was dropped or changed."""
    api = k8s.ApiClient()
    model = api.deserialize(json.dumps(obj), model_name(obj), "application/json")
    assert model is not None
    return api.sanitize_for_serialization(model)
