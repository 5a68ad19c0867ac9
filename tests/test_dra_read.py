"""DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates read from snapshots: every
served version (v1, v1beta2 with v1's shape, v1beta1 converted as the API server converts it), JSON
and YAML, `null`s where real servers send them, and a bad object named with its field."""

from __future__ import annotations

import copy
import json
from typing import Any

import msgspec
import pytest
import yaml

from kresched.errors import InputError
from kresched.model.dra import DRA_KINDS, ResourceClaim, ResourceSlice
from kresched.sources.decode import Objects, decode_json, decode_yaml
from kresched.sources.snapshot import build_state, encode_snapshot, load_snapshot
from tests.dra_objects import CLAIM, SLICE, TEMPLATE, V1, V1BETA1, as_version, v1_objects


def as_list(objects: list[dict[str, Any]]) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}).encode()


def as_yaml(objects: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(objects)


def dra_of(objs: Objects) -> list[bytes]:
    """The DRA objects read, as kresched writes them back (v1 JSON)."""
    return [msgspec.json.encode(o) for o in (*objs.device_classes, *objs.resource_slices, *objs.resource_claims,
                                              *objs.claim_templates)]


READERS = {
    "a JSON List": lambda objects: decode_json(as_list(objects), "t.json"),
    "YAML documents": lambda objects: decode_yaml(as_yaml(objects), "t.yaml"),
}


# -- v1 -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_v1_objects_are_read_field_by_field(read):
    objs = read(V1)
    (cls,), (sl,), (claim,), (template,) = (objs.device_classes, objs.resource_slices, objs.resource_claims,
                                            objs.claim_templates)
    assert cls.name == "gpu"
    assert cls.spec.selectors[0].cel.expression == 'device.driver == "gpu.example.com"'
    assert cls.spec.extended_resource_name == "example.com/gpu"
    assert (sl.spec.driver, sl.spec.node_name, sl.spec.pool.name, sl.spec.pool.generation) == (
        "gpu.example.com", "node-a", "node-a", 1)
    gpu0 = sl.spec.devices[0]
    assert gpu0.attributes["model"].string == "A100"
    assert gpu0.attributes["index"].int_ == 0
    assert gpu0.attributes["gpu.example.com/mig"].bool_ is False
    assert gpu0.attributes["driverVersion"].version == "1.2.3"
    assert gpu0.capacity["memory"].value == "40Gi"
    assert gpu0.capacity["slices"].request_policy.default == "1"
    assert gpu0.taints[0].key == "maintenance"
    assert claim.key == "ml/train-gpu"
    gpu, spare = claim.requests
    assert (gpu.exactly.device_class_name, gpu.exactly.mode, gpu.exactly.exact_count) == ("gpu", "ExactCount", 1)
    assert gpu.exactly.tolerations[0].operator == "Exists"
    assert [(s.name, s.mode, s.exact_count) for s in spare.first_available] == [
        ("big", "All", 1), ("small", "ExactCount", 2)]
    assert spare.exactly is None
    assert claim.spec.devices.constraints[0].match_attribute == "gpu.example.com/model"
    assert [r.device_id for r in claim.status.allocation.devices.results] == [
        ("gpu.example.com", "node-a", "gpu-0"), ("gpu.example.com", "node-a", "gpu-1")]
    assert claim.status.allocation.node_selector.node_selector_terms[0].match_fields[0].values == ("node-a",)
    assert claim.reserved_pod_uids == frozenset({"u-pod"})
    assert claim.status.devices[0].conditions[0].type == "Ready"
    assert claim.metadata.owner_references[0].name == "train"
    assert template.key == "ml/one-gpu"
    assert template.spec.spec.devices.requests[0].exactly.device_class_name == "gpu"


def test_the_four_kinds_are_indexed_in_the_state_and_known():
    state = build_state(decode_json(as_list(V1), "t"))
    dra = state.dra
    assert dra.kinds == frozenset(DRA_KINDS)
    assert dra.device_class("gpu") is not None
    assert dra.claim("ml", "train-gpu") is not None
    assert dra.template("ml", "one-gpu") is not None
    assert [s.name for s in dra.slices] == ["node-a-gpu"]


def test_a_snapshot_without_dra_kinds_says_nothing_about_devices():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"containers": [{"name": "c"}]}}
    assert not build_state(decode_json(as_list([pod]), "t")).dra.is_known


# -- other served versions ------------------------------------------------------------------------

@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_v1beta1_objects_are_read_as_the_api_server_converts_them(read):
    """A device's `basic` moves up onto the device, a request's flat fields into `exactly` (its
    `firstAvailable` stays), and every object is written back as v1."""
    assert dra_of(read(V1BETA1)) == dra_of(read(V1))


@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_v1beta2_objects_have_the_v1_shape(read):
    assert dra_of(read(as_version(V1, "v1beta2"))) == dra_of(read(V1))


def test_every_object_is_written_back_as_v1():
    objs = decode_json(as_list(V1BETA1), "t")
    assert {json.loads(b)["apiVersion"] for b in dra_of(objs)} == {"resource.k8s.io/v1"}


def test_a_v1beta1_slice_without_a_node_name_or_all_nodes_has_neither():
    """v1beta1's `nodeName` is a string and `allNodes` a bool: "" and false are unset in v1."""
    beta = copy.deepcopy(V1BETA1[1])
    beta["spec"].update(nodeName="", allNodes=False, nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}]})
    (sl,) = decode_json(as_list([beta]), "t").resource_slices
    assert sl.spec.node_name is None
    assert sl.spec.all_nodes is None
    assert sl.spec.node_selector is not None


def test_a_v1beta1_request_with_only_first_available_gets_no_exactly():
    claim = copy.deepcopy(V1BETA1[2])
    (_, spare) = decode_json(as_list([claim]), "t").resource_claims[0].requests
    assert spare.exactly is None
    assert [s.name for s in spare.first_available] == ["big", "small"]


def test_v1beta1_flat_request_fields_become_exactly():
    claim = copy.deepcopy(V1BETA1[2])
    claim["spec"]["devices"]["requests"] = [{"name": "two", "deviceClassName": "gpu", "count": 2,
                                             "adminAccess": True, "allocationMode": "ExactCount"}]
    (req,) = decode_json(as_list([claim]), "t").resource_claims[0].requests
    assert (req.exactly.device_class_name, req.exactly.exact_count, req.exactly.admin_access) == ("gpu", 2, True)
    assert req.device_class_name is None


# -- nulls as real servers send them --------------------------------------------------------------

def test_nulls_a_real_server_sends_are_read_as_empty():
    claim = copy.deepcopy(CLAIM)
    claim["spec"]["devices"]["requests"] = None
    claim["status"]["devices"][0]["conditions"] = None
    template = copy.deepcopy(TEMPLATE)
    template["spec"]["metadata"] = {"creationTimestamp": None}
    template["spec"]["spec"]["devices"]["requests"] = None
    sl = copy.deepcopy(SLICE)
    sl["spec"]["devices"][0]["capacity"]["slices"]["requestPolicy"]["default"] = None
    for objs in (decode_json(as_list([claim, template, sl]), "t"), decode_yaml(as_yaml([claim, template, sl]), "t")):
        (c,), (t,), (s,) = objs.resource_claims, objs.claim_templates, objs.resource_slices
        assert c.requests == ()
        assert c.status.devices[0].conditions == ()
        assert t.spec.spec.devices.requests == ()
        assert s.spec.devices[0].capacity["slices"].request_policy.default is None


@pytest.mark.parametrize("kind", DRA_KINDS)
def test_a_typed_list_with_items_null_is_empty(kind):
    objs = decode_json(json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": f"{kind}List",
                                   "metadata": {}, "items": None}).encode(), "t")
    assert objs.count() == 0


# -- bad objects ------------------------------------------------------------------------------------

BAD = [
    ("an attribute of the wrong type", SLICE, lambda o: o["spec"]["devices"][0]["attributes"].update(
        model={"string": 3}),
     "ResourceSlice node-a-gpu: spec.devices[0].attributes.model.string: expected `str | null`, got `int`"),
    ("a count that is not a number", CLAIM, lambda o: o["spec"]["devices"]["requests"][0]["exactly"].update(
        count="two"),
     "ResourceClaim ml/train-gpu: spec.devices.requests[0].exactly.count: expected `int`, got `str`"),
    ("a pool generation that is not a number", SLICE, lambda o: o["spec"]["pool"].update(generation="1"),
     "ResourceSlice node-a-gpu: spec.pool.generation: expected `int`, got `str`"),
    ("a class without a name", V1[0], lambda o: o["metadata"].pop("name"),
     "DeviceClass (without a name): metadata.name is required"),
]


@pytest.mark.parametrize(("obj", "change", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_object_is_named_with_its_field(obj, change, message):
    bad = copy.deepcopy(obj)
    change(bad)
    with pytest.raises(InputError) as json_err:
        decode_json(json.dumps(bad).encode(), "t.json")
    assert str(json_err.value) == f"t.json: {message}"
    with pytest.raises(InputError) as yaml_err:
        decode_yaml(yaml.safe_dump(bad), "t.yaml")
    assert str(yaml_err.value) == f"t.yaml: {message}"


def test_a_bad_attribute_under_a_qualified_name_is_named():
    bad = copy.deepcopy(SLICE)
    bad["spec"]["devices"][1]["attributes"]["gpu.example.com/mig"] = {"bool": "no"}
    with pytest.raises(InputError, match=r"spec\.devices\[1\]\.attributes\.gpu\.example\.com/mig\.bool: "):
        decode_json(as_list([bad]), "t")


# -- kresched's own snapshot --------------------------------------------------------------------------

def test_the_snapshot_round_trip_keeps_every_dra_object(tmp_path):
    state = build_state(decode_json(as_list(v1_objects()), "t"))
    path = tmp_path / "snap.json"
    path.write_bytes(encode_snapshot(state))
    again = load_snapshot(str(path))
    assert again.dra == state.dra
    assert again.dra.kinds == frozenset(DRA_KINDS)
    assert isinstance(again.dra.claims[0], ResourceClaim)
    assert isinstance(again.dra.slices[0], ResourceSlice)
    assert encode_snapshot(again) == encode_snapshot(state)
