"""`null` is read as Go reads it, field by field: the zero value, as if the field were absent.

Go's decoder reads `null` into any field as that field's zero value, and the API server accepts such
objects; real servers send `null` for every empty slice, map or pointer field declared without
`omitempty` (objects are stored as protobuf: an empty list comes back as nil). So for every field
kresched decodes, of every kind, in every form of input (a JSON object, a List whose typed decode
fails over to item by item, a typed `PodList`, YAML), an object with that field `null` must decode
exactly as the same object without it — or fail exactly as it does — and an element or map value
`null` as the zero element.

The fields are not listed by hand: they are walked from the model's own types, which mirror the Go
types of k8s.io/api (field names as in the API).

`GO_NULLABLE` is derived from the Go types of k8s.io/api v1.36.2 (core/v1, storage/v1, policy/v1,
scheduling/v1, scheduling/v1alpha2, apps/v1, resource/v1, coordination/v1, meta/v1) and of the two
PodGroup CRDs (scheduler-plugins' scheduling.x-k8s.io/v1alpha1, Volcano's scheduling.volcano.sh/v1beta1;
`scripts/go_nullable_fields.py` walks them beside kresched's structs): the fields kresched reads whose
Go type is a slice, map or pointer declared without `omitempty`, or a `metav1.Time` (a zero time is
written `null`), so that a server sends them as `null` (every kind's `metadata.creationTimestamp` too,
left out: a server always sets it). A CRD's server prunes a `null` its schema does not allow (the two
allow none), so of those two only what the v1alpha2 PodGroup shares with them is here. Those a
server does send empty are read on the typed decode's fast path, never through the slower
item-by-item retry: every real cluster has a CSINode per node with `drivers: null`.
"""

from __future__ import annotations

import copy
import json
import typing
from typing import Any

import msgspec
import pytest
import yaml

from kresched.errors import InputError
from kresched.sources import decode as decode_module
from kresched.sources.decode import KINDS, decode_json, decode_yaml

#: field path → whether a real API server sends it as `null` (rather than rejecting it as empty in
#: validation, which requires these lists to be non-empty, so that only other tools write `null`).
GO_NULLABLE = {
    "CSINode.spec.drivers": True,
    "CSINode.spec.drivers[].topologyKeys": True,
    "Node.status.images[].names": True,
    "PodDisruptionBudget.status.disruptedPods{}": True,  # a zero metav1.Time
    "Pod.status.conditions[].lastTransitionTime": True,
    "Node.status.conditions[].lastTransitionTime": True,
    # resource.k8s.io/v1 (served the same in v1beta1 and v1beta2): a claim without requests, a
    # capacity's request policy without a default, a device its driver reported no condition of.
    "ResourceClaim.spec.devices.requests": True,
    "ResourceClaimTemplate.spec.spec.devices.requests": True,
    "ResourceSlice.spec.devices[].capacity{}.requestPolicy.default": True,
    "ResourceClaim.status.devices[].conditions": True,
    "ResourceClaimTemplate.spec.metadata.creationTimestamp": True,  # the template's own, never set
    "ResourceClaim.status.devices[].conditions[].lastTransitionTime": False,
    "ResourceClaim.status.allocation.nodeSelector.nodeSelectorTerms": False,
    "ResourceSlice.spec.nodeSelector.nodeSelectorTerms": False,
    "ResourceSlice.spec.devices[].nodeSelector.nodeSelectorTerms": False,
    "Pod.spec.containers": False,
    "Pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms": False,
    "Pod.spec.volumes[].rbd.monitors": False,
    "PersistentVolume.spec.nodeAffinity.required.nodeSelectorTerms": False,
    "ReplicaSet.spec.selector": False,
    "StatefulSet.spec.selector": False,
    "StorageClass.allowedTopologies[].matchLabelExpressions[].values": False,
    # scheduling.k8s.io/v1alpha2 (recorded: a PodGroup made without a Workload's template, a
    # template without constraints); the Workload's templates are required, and so are a template
    # reference's workload and a condition's time (ValidateConditions).
    "PodGroup.spec.podGroupTemplateRef": True,
    "Workload.spec.podGroupTemplates[].schedulingConstraints": True,
    "PodGroup.spec.podGroupTemplateRef.workload": False,
    "PodGroup.status.conditions[].lastTransitionTime": False,
    "Workload.spec.podGroupTemplates": False,
}

#: A valid element for the struct types whose empty value the API server's validation refuses (so
#: that a field inside one is tested inside a valid object).
SEEDS: dict[str, dict[str, Any]] = {
    "Toleration": {"operator": "Exists"},
    "Taint": {"key": "k", "effect": "NoSchedule"},
    "TopologySpreadConstraint": {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
    "PodAffinityTerm": {"topologyKey": "zone"},
    "NodeSelectorRequirement": {"key": "metadata.name", "operator": "In", "values": ["x"]},  # a field one too
    "WeightedPodAffinityTerm": {"weight": 1, "podAffinityTerm": {"topologyKey": "zone"}},
    "PreferredSchedulingTerm": {"weight": 1, "preference": {}},
    "LabelSelectorRequirement": {"key": "k", "operator": "Exists"},
    "ContainerPort": {"containerPort": 80},
    "Container": {"name": "c"},
}

BASE: dict[str, dict[str, Any]] = {
    kind: {"kind": kind, "metadata": {"name": "x", "namespace": "ns"}} for kind in KINDS
}
# A pod the API server stores has a container (`spec.containers: Required value`).
BASE["Pod"]["spec"] = {"containers": [{"name": "c"}]}
# Which API a PodGroup or Workload is of decides whether it is read at all (the struct is one for all
# three PodGroup APIs: walked once).
BASE["PodGroup"]["apiVersion"] = BASE["Workload"]["apiVersion"] = "scheduling.k8s.io/v1alpha2"


def _struct_types(t: Any) -> list[type]:
    if isinstance(t, type) and issubclass(t, msgspec.Struct):
        return [t]
    return [s for a in typing.get_args(t) for s in _struct_types(a)]


def _shape(t: Any) -> str:
    """`struct`, `list` or `map`: how a field of this type holds its struct types."""
    for a in (t, *typing.get_args(t)):
        origin = typing.get_origin(a)
        if origin in (list, tuple):
            return "list"
        if origin is dict:
            return "map"
    return "struct"


def _element_zero(t: Any) -> Any:
    """Go's zero value of an element (or map value) of the list (or map) type `t`, as a document."""
    container = next(a for a in (t, *typing.get_args(t)) if typing.get_origin(a) in (list, tuple, dict))
    elem = typing.get_args(container)[-1 if typing.get_origin(container) is dict else 0]
    forms = typing.get_args(elem)
    if elem is Any or type(None) in forms:
        return None  # the model gives the element's null a meaning of its own
    if forms:  # IntOrString, a Quantity: the number 0
        elem = int if int in forms else forms[0]
    if isinstance(elem, type) and issubclass(elem, msgspec.Struct):
        return {}
    return {str: "", int: 0, bool: False, float: 0.0}[elem]


def field_paths() -> list[tuple[str, str, list[tuple[Any, ...]]]]:
    """(kind, readable path, steps) for every field of every kind, recursively, and for every list
    and map a null element. A step is (name in the document, `struct`/`list`/`map`, the struct type's
    name) on the way, and (name, `leaf`) or (name, `list-null`/`map-null`, the element's zero) last."""
    out: list[tuple[str, str, list[tuple[Any, ...]]]] = []

    def walk(kind: str, cls: type, path: str, steps: list[tuple[Any, ...]], depth: int) -> None:
        hints = typing.get_type_hints(cls)
        for f in msgspec.structs.fields(cls):
            if f.encode_name == "kind":
                continue
            t = hints[f.name]
            shape = _shape(t)
            here = f"{path}.{f.encode_name}"
            out.append((kind, here, [*steps, (f.encode_name, "leaf")]))
            if depth < 8:
                mark = {"list": "[]", "map": "{}", "struct": ""}[shape]
                for sub in _struct_types(t):
                    walk(kind, sub, here + mark, [*steps, (f.encode_name, shape, sub.__name__)], depth + 1)
            if shape != "struct":
                mark = "[]" if shape == "list" else "{}"
                out.append((kind, here + mark, [*steps, (f.encode_name, f"{shape}-null", _element_zero(t))]))

    for kind, cls in KINDS.items():
        walk(kind, cls, kind, [], 0)
    return out


def with_null(kind: str, steps: list[tuple[Any, ...]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the object with the field or element null, the same object as Go reads it)."""
    doc = copy.deepcopy(BASE[kind])
    want = copy.deepcopy(BASE[kind])
    at, at_want = doc, want
    for name, shape, sub in steps[:-1]:
        seed = SEEDS.get(sub, {})
        if shape == "list":
            at[name], at_want[name] = [copy.deepcopy(seed)], [copy.deepcopy(seed)]
            at, at_want = at[name][0], at_want[name][0]
        elif shape == "map":
            at[name], at_want[name] = {"k": copy.deepcopy(seed)}, {"k": copy.deepcopy(seed)}
            at, at_want = at[name]["k"], at_want[name]["k"]
        else:
            at.setdefault(name, copy.deepcopy(seed))
            at_want.setdefault(name, copy.deepcopy(seed))
            at, at_want = at[name], at_want[name]
    name, shape, *zero = steps[-1]
    if shape == "leaf":
        at[name] = None
        at_want.pop(name, None)
    elif shape == "list-null":
        at[name], at_want[name] = [None], [zero[0]]
    else:
        at[name], at_want[name] = {"k": None}, {"k": zero[0]}
    return doc, want


def _outcome(decode: Any) -> Any:
    try:
        objs = decode()
    except InputError as exc:
        return ("error", str(exc))
    found = [o for kind_list in (objs.nodes, objs.pods, objs.pdbs, objs.priority_classes, objs.namespaces,
                                 objs.workloads, objs.pvs, objs.pvcs, objs.storage_classes, objs.csi_nodes,
                                 objs.device_classes, objs.resource_slices, objs.resource_claims,
                                 objs.claim_templates, objs.leases, objs.pod_groups, objs.scheduling_workloads)
             for o in kind_list]
    return ("ok", [msgspec.json.encode(o) for o in found])


PATHS = field_paths()


@pytest.mark.parametrize(("kind", "path", "steps"), PATHS, ids=[p[1] for p in PATHS])
def test_a_null_field_is_read_as_go_reads_it(kind: str, path: str, steps: list[Any]) -> None:
    doc, want = with_null(kind, steps)
    other = {"kind": "ConfigMap", "metadata": {"name": "other"}}
    forms = {
        "a JSON object": lambda d: decode_json(json.dumps(d).encode(), "t"),
        "a List, item by item": lambda d: decode_json(json.dumps({"kind": "List", "items": [other, d]}).encode(), "t"),
        f"a typed {kind}List": lambda d: decode_json(json.dumps({"kind": f"{kind}List", "items": [d]}).encode(), "t"),
        "YAML": lambda d: decode_yaml(yaml.safe_dump(d), "t"),
    }
    for form, decode in forms.items():
        assert _outcome(lambda decode=decode: decode(doc)) == _outcome(lambda decode=decode: decode(want)), form


def test_every_kind_has_its_fields_walked() -> None:
    kinds = {k for k, _, _ in PATHS}
    assert kinds == set(KINDS)
    assert len(PATHS) > 300


@pytest.mark.parametrize("path", [p for p, served in GO_NULLABLE.items() if served])
def test_what_a_server_sends_as_null_is_read_on_the_fast_path(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real cluster's objects never need the retry: 5,000 CSINodes with `drivers: null` must not
    turn a 150,000-pod List into an item-by-item decode."""
    def refuse(*_: Any) -> Any:
        raise AssertionError(f"{path}: decoded through the null retry")

    monkeypatch.setattr(decode_module, "drop_nulls", refuse)
    kind = path.split(".")[0]
    steps = next(s for k, p, s in PATHS if p == path and k == kind)
    doc, _ = with_null(kind, steps)
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": [{"name": "c"}]}}
    data = json.dumps({"kind": "List", "items": [pod, doc]}).encode()
    objs = decode_json(data, "t")
    assert objs.count() == 2


def test_go_nullable_paths_are_fields_kresched_decodes() -> None:
    known = {p for _, p, _ in PATHS}
    assert set(GO_NULLABLE) <= known


def test_a_null_list_of_items_is_an_empty_list() -> None:
    assert decode_json(b'{"kind": "List", "items": null}', "t").count() == 0
    assert decode_json(b'{"kind": "PodList", "items": null}', "t").count() == 0
    assert decode_yaml("kind: List\nitems: null\n", "t").count() == 0


def test_a_kubelet_csinode_as_a_real_server_serves_it() -> None:
    """Recorded from the v1.36.2 rig: the simulated kubelet creates it as the real one does."""
    csinode = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
               "metadata": {"creationTimestamp": "2026-11-27T13:17:50Z", "name": "node-a1",
                            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-a1",
                                                 "uid": "7cabc299-fe27-4d4f-b763-96bf68c16126"}],
                            "resourceVersion": "222", "uid": "4cfd06d6-7822-412f-8c28-255b6104b6b8"},
               "spec": {"drivers": None}}
    objs = decode_json(json.dumps({"apiVersion": "v1", "kind": "List", "items": [csinode]}).encode(), "t")
    assert objs.csi_nodes[0].spec.drivers == ()
    assert objs.csi_nodes[0].limits() == {}
