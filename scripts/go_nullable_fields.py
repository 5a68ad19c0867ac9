"""Which fields kresched decodes can an API server send as `null`? Prints them, one per line.

Walks kresched's msgspec structs (from `kresched.sources.decode.KINDS`) beside the Go types of
k8s.io/api and apimachinery along the same JSON paths, and prints each field whose Go type is a
slice, map or pointer declared without `omitempty` (Go's encoder writes nil as `null`), or a
`metav1.Time` (a zero time is written as `null`), and each list or map whose elements are such.
tests/test_nulls.py's `GO_NULLABLE` is this list for Kubernetes v1.36.2.

    python scripts/go_nullable_fields.py STAGING_SRC_K8S_IO

STAGING_SRC_K8S_IO is a Kubernetes tree's `staging/src/k8s.io` (holding `api/` and
`apimachinery/`). The Go parsing is a few regular expressions: enough for the API types, whose
fields are one per line.
"""

from __future__ import annotations

import re
import sys
import typing
from pathlib import Path
from typing import Any

import msgspec

PACKAGES = {"core": "api/core/v1", "storage": "api/storage/v1", "policy": "api/policy/v1",
            "scheduling": "api/scheduling/v1", "apps": "api/apps/v1", "resource": "api/resource/v1",
            "meta": "apimachinery/pkg/apis/meta/v1"}
IMPORT_ALIASES = {"metav1": "meta", "v1": "core", "corev1": "core"}
KIND_PACKAGE = {"Node": "core", "Pod": "core", "PodDisruptionBudget": "policy", "PriorityClass": "scheduling",
                "Namespace": "core", "Service": "core", "ReplicationController": "core", "ReplicaSet": "apps",
                "StatefulSet": "apps", "PersistentVolume": "core", "PersistentVolumeClaim": "core",
                "StorageClass": "storage", "CSINode": "storage", "DeviceClass": "resource",
                "ResourceSlice": "resource", "ResourceClaim": "resource", "ResourceClaimTemplate": "resource"}
_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.S | re.M)
_NAMED = re.compile(r"^type (\w+) (map\[[^\n]+|\[\][^\n]+|string|int32|int64)\s*$", re.M)
_FIELD = re.compile(r'^(?:(\w+)\s+)?([\w.\[\]*]+)\s+`json:"([^"]*)"')


class GoTypes:
    def __init__(self, root: Path) -> None:
        self.structs: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self.named: dict[tuple[str, str], str] = {}
        for pkg, folder in PACKAGES.items():
            for path in (root / folder).glob("*.go"):
                text = path.read_text()
                for m in _STRUCT.finditer(text):
                    fields = [(fm.group(2), fm.group(3)) for line in m.group(2).splitlines()
                              if (fm := _FIELD.match(line.strip()))]
                    self.structs[(pkg, m.group(1))] = fields
                for m in _NAMED.finditer(text):
                    self.named[(pkg, m.group(1))] = m.group(2)

    def resolve(self, pkg: str, typ: str) -> tuple[str, str, str]:
        """(`slice`/`map`/`ptr`/`time`/`struct`/`scalar`, package, element or struct name)."""
        if typ.startswith("[]"):
            return "slice", pkg, typ[2:]
        if typ.startswith("map["):
            return "map", pkg, typ.split("]", 1)[1]
        if typ.startswith("*"):
            return "ptr", pkg, typ[1:]
        if "." in typ:
            alias, name = typ.split(".")
            return self.resolve(IMPORT_ALIASES[alias], name) if alias in IMPORT_ALIASES else ("scalar", pkg, typ)
        if (pkg, typ) == ("meta", "Time"):
            return "time", pkg, typ
        if (pkg, typ) in self.named:
            return self.resolve(pkg, self.named[(pkg, typ)])
        return ("struct" if (pkg, typ) in self.structs else "scalar"), pkg, typ

    def fields(self, pkg: str, name: str) -> dict[str, tuple[str, bool, str]]:
        """JSON name → (Go type, omitempty, package); inlined structs flattened."""
        out: dict[str, tuple[str, bool, str]] = {}
        for typ, tag in self.structs.get((pkg, name), []):
            json_name, _, opts = tag.partition(",")
            if "inline" in opts:
                kind, p, base = self.resolve(pkg, typ)
                if kind == "struct":
                    out.update(self.fields(p, base))
                continue
            out[json_name] = (typ, "omitempty" in opts, pkg)
        return out


def _structs_in(t: Any) -> list[type]:
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        return [t]
    return [s for a in typing.get_args(t) for s in _structs_in(a)]


def nullable_paths(go: GoTypes) -> list[str]:
    from kresched.sources.decode import KINDS

    found: set[str] = set()

    def walk(cls: type, pkg: str, go_name: str, path: str) -> None:
        go_fields = go.fields(pkg, go_name)
        hints = typing.get_type_hints(cls)
        for f in msgspec.structs.fields(cls):
            if f.encode_name in ("kind", "apiVersion"):
                continue
            if pkg == "resource" and f.encode_name not in go_fields:
                continue  # v1beta1's shape, moved into v1's as read (a device's `basic`, a request's flat fields)
            go_type, omitempty, go_pkg = go_fields[f.encode_name]
            kind, p, base = go.resolve(go_pkg, go_type)
            here = f"{path}.{f.encode_name}"
            if (kind in ("slice", "map", "ptr") and not omitempty) or kind == "time":
                found.add(here)
            if kind in ("slice", "map") and go.resolve(p, base)[0] in ("slice", "map", "ptr", "time"):
                found.add(here + ("[]" if kind == "slice" else "{}"))
            mark = {"slice": "[]", "map": "{}"}.get(kind, "")
            elem_kind, elem_pkg, elem = kind, p, base
            while elem_kind in ("slice", "map", "ptr"):
                elem_kind, elem_pkg, elem = go.resolve(elem_pkg, elem)
            for sub in _structs_in(hints[f.name]):
                walk(sub, elem_pkg, elem, here + mark)

    for kind, cls in KINDS.items():
        walk(cls, KIND_PACKAGE[kind], kind, kind)
    return sorted(found)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-5], file=sys.stderr)
        return 2
    for path in nullable_paths(GoTypes(Path(argv[1]))):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
