"""Which fields kresched decodes can an API server send as `null`? Prints them, one per line.

Walks kresched's msgspec structs (from `kresched.sources.decode.KINDS`) beside the Go types of
k8s.io/api and apimachinery along the same JSON paths, and prints each field whose Go type is a
slice, map or pointer declared without `omitempty` (Go's encoder writes nil as `null`), or a
`metav1.Time` (a zero time is written as `null`), and each list or map whose elements are such.
tests/test_nulls.py's `GO_NULLABLE` is this list for Kubernetes v1.36.2.

    python scripts/go_nullable_fields.py STAGING_SRC_K8S_IO [COSCHEDULING_TYPES VOLCANO_TYPES]

STAGING_SRC_K8S_IO is a Kubernetes tree's `staging/src/k8s.io` (holding `api/` and
`apimachinery/`). The PodGroup struct is shared by three APIs: it is walked beside each one's Go
types (a field another API has is skipped): `scheduling.k8s.io/v1alpha2` from the tree, and the
two served from CustomResourceDefinitions from the folders of their Go types when given —
scheduler-plugins' `apis/scheduling/v1alpha1` (scheduling.x-k8s.io) and volcano-sh/apis'
`pkg/apis/scheduling/v1beta1` (scheduling.volcano.sh). A CRD's server prunes every `null` of a
field its schema does not declare `nullable` (`PruneNonNullableNullsWithoutDefaults`, on every
write), so of those only the fields marked `+nullable` are printed; the others a Go client writes as
`null` are printed after `# pruned:` (a server never sends them). The Go parsing is a few regular
expressions: enough for the API types, whose fields are one per line.
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
            "coordination": "api/coordination/v1", "workload": "api/scheduling/v1alpha2",
            "meta": "apimachinery/pkg/apis/meta/v1"}
#: The packages served from CustomResourceDefinitions (folders given on the command line).
CRD_PACKAGES = ("coscheduling", "volcano")
IMPORT_ALIASES = {"metav1": "meta", "v1": "core", "corev1": "core"}
#: The package(s) of each kind's Go type: a kind of several (the three PodGroups) is walked beside each.
KIND_PACKAGES = {"Node": ("core",), "Pod": ("core",), "PodDisruptionBudget": ("policy",),
                 "PriorityClass": ("scheduling",), "Namespace": ("core",), "Service": ("core",),
                 "ReplicationController": ("core",), "ReplicaSet": ("apps",), "StatefulSet": ("apps",),
                 "PersistentVolume": ("core",), "PersistentVolumeClaim": ("core",), "StorageClass": ("storage",),
                 "CSINode": ("storage",), "DeviceClass": ("resource",), "ResourceSlice": ("resource",),
                 "ResourceClaim": ("resource",), "ResourceClaimTemplate": ("resource",), "Lease": ("coordination",),
                 "PodGroup": ("workload", *CRD_PACKAGES), "Workload": ("workload",)}
#: Packages whose Go types hold only some of the model's fields (the model reads several shapes).
PARTIAL = {"resource", "workload", *CRD_PACKAGES}
_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.S | re.M)
_NAMED = re.compile(r"^type (\w+) (map\[[^\n]+|\[\][^\n]+|string|int32|int64)\s*$", re.M)
_FIELD = re.compile(r'^(?:(\w+)\s+)?([\w.\[\]*]+)\s+`json:"([^"]*)"')


class GoTypes:
    def __init__(self, root: Path, crds: dict[str, Path] | None = None) -> None:
        #: (package, struct) → [(Go type, json tag, marked `+nullable`)]
        self.structs: dict[tuple[str, str], list[tuple[str, str, bool]]] = {}
        self.named: dict[tuple[str, str], str] = {}
        folders = {pkg: root / folder for pkg, folder in PACKAGES.items()}
        folders.update(crds or {})
        for pkg, folder in folders.items():
            for path in folder.glob("*.go"):
                text = path.read_text()
                for m in _STRUCT.finditer(text):
                    fields = []
                    nullable = False
                    for line in m.group(2).splitlines():
                        line = line.strip()
                        if line.startswith("//"):
                            nullable = nullable or line.removeprefix("//").strip() == "+nullable"
                        elif (fm := _FIELD.match(line)):
                            fields.append((fm.group(2), fm.group(3), nullable))
                            nullable = False
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

    def fields(self, pkg: str, name: str) -> dict[str, tuple[str, bool, str, bool]]:
        """JSON name → (Go type, omitempty, package, marked `+nullable`); inlined structs flattened."""
        out: dict[str, tuple[str, bool, str, bool]] = {}
        for typ, tag, nullable in self.structs.get((pkg, name), []):
            json_name, _, opts = tag.partition(",")
            if "inline" in opts:
                kind, p, base = self.resolve(pkg, typ)
                if kind == "struct":
                    out.update(self.fields(p, base))
                continue
            out[json_name] = (typ, "omitempty" in opts, pkg, nullable)
        return out


def _structs_in(t: Any) -> list[type]:
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        return [t]
    return [s for a in typing.get_args(t) for s in _structs_in(a)]


def nullable_paths(go: GoTypes) -> tuple[list[str], list[str]]:
    """(the paths a server sends as `null`, those a Go client writes so that a CRD's server prunes)."""
    from kresched.sources.decode import KINDS

    found: set[str] = set()
    pruned: set[str] = set()

    def walk(cls: type, pkg: str, go_name: str, path: str, crd: bool) -> None:
        go_fields = go.fields(pkg, go_name)
        hints = typing.get_type_hints(cls)
        for f in msgspec.structs.fields(cls):
            if f.encode_name in ("kind", "apiVersion"):
                continue
            if pkg in PARTIAL and f.encode_name not in go_fields:
                # v1beta1's DRA shape, moved into v1's as read (a device's `basic`, a request's flat
                # fields); another PodGroup API's field; a field of a type the package borrows.
                continue
            go_type, omitempty, go_pkg, marked = go_fields[f.encode_name]
            kind, p, base = go.resolve(go_pkg, go_type)
            here = f"{path}.{f.encode_name}"
            served = found if not crd or marked else pruned
            if (kind in ("slice", "map", "ptr") and not omitempty) or kind == "time":
                served.add(here)
            if kind in ("slice", "map") and go.resolve(p, base)[0] in ("slice", "map", "ptr", "time"):
                # A null element of a list or map: a CRD's server does not prune it (it refuses it).
                (found if crd else served).add(here + ("[]" if kind == "slice" else "{}"))
            mark = {"slice": "[]", "map": "{}"}.get(kind, "")
            elem_kind, elem_pkg, elem = kind, p, base
            while elem_kind in ("slice", "map", "ptr"):
                elem_kind, elem_pkg, elem = go.resolve(elem_pkg, elem)
            for sub in _structs_in(hints[f.name]):
                walk(sub, elem_pkg, elem, here + mark, crd)

    for kind, cls in KINDS.items():
        for pkg in KIND_PACKAGES[kind]:
            if any(p == pkg for p, _ in go.structs):
                walk(cls, pkg, kind, kind, pkg in CRD_PACKAGES)
    return sorted(found), sorted(pruned - found)


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 4):
        print("usage: python scripts/go_nullable_fields.py STAGING_SRC_K8S_IO [COSCHEDULING_TYPES VOLCANO_TYPES]",
              file=sys.stderr)
        return 2
    crds = dict(zip(CRD_PACKAGES, map(Path, argv[2:]), strict=False))
    served, pruned = nullable_paths(GoTypes(Path(argv[1]), crds))
    for path in served:
        print(path)
    for path in pruned:
        print(f"# pruned: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
