"""Fuzzing the snapshot decoder (hypothesis): whatever the bytes, loading them either succeeds or
raises kresched's own `InputError` with a one-line message — never another exception type.

Three generators: raw bytes; JSON documents shaped like Kubernetes objects (known kinds, real
field names, values of every JSON type, nested a little or a lot); and the same documents as YAML
(flow and block style, gzip-compressed or not).
"""

from __future__ import annotations

import gzip
import io
import json
import mmap
import tempfile
from typing import Any

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kresched.errors import InputError
from kresched.sources.decode import Objects, decode_json
from kresched.sources.snapshot import load_snapshot

KINDS = ["Pod", "Node", "PodDisruptionBudget", "PriorityClass", "Namespace", "Service", "ReplicaSet",
         "StatefulSet", "ReplicationController", "ConfigMap", "List", "PodList", ""]
FIELDS = ["kind", "apiVersion", "metadata", "name", "namespace", "labels", "annotations", "ownerReferences",
          "controller", "spec", "status", "containers", "initContainers", "resources", "requests", "limits", "cpu",
          "memory", "priority", "priorityClassName", "value", "globalDefault", "tolerations", "operator", "key",
          "values", "effect", "affinity", "nodeAffinity", "podAntiAffinity", "matchExpressions", "matchFields",
          "nodeSelectorTerms", "requiredDuringSchedulingIgnoredDuringExecution", "topologySpreadConstraints",
          "maxSkew", "topologyKey", "whenUnsatisfiable", "ports", "containerPort", "hostPort", "volumes",
          "emptyDir", "selector", "matchLabels", "minAvailable", "maxUnavailable", "taints", "allocatable",
          "capacity", "nodeName", "terminationGracePeriodSeconds", "items", "phase", "conditions", "x"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
    st.sampled_from(["100m", "1Gi", "1e3", "-1", "lots", "In", "Exists", "Gt", "NoSchedule", "0.5", "%", "50%"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(FIELDS), inner, max_size=5)), max_leaves=25)
objects = st.builds(
    lambda kind, body, name: {"kind": kind, "metadata": {"name": name, "namespace": "ns"}, **body},
    st.sampled_from(KINDS), st.dictionaries(st.sampled_from(FIELDS), values, max_size=4),
    st.one_of(st.text(min_size=1, max_size=8), st.integers(), st.none()))
documents = st.one_of(objects, st.builds(lambda items: {"apiVersion": "v1", "kind": "List", "items": items},
                                         st.lists(st.one_of(objects, values), max_size=4)))


def load(data: bytes) -> None:
    error: InputError | None = None
    try:
        load_snapshot("-", stdin=io.BytesIO(data))
    except InputError as exc:  # anything else fails the test with its traceback
        error = exc
    if error is not None:
        assert "\n" not in error.message, error.message
        assert error.message.strip(), "an empty message"


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_bytes_load_or_fail_with_one_line(data: bytes) -> None:
    load(data)


@FUZZ
@given(documents, st.booleans())
@example({"kind": "Pod", "metadata": {"name": "\n", "namespace": "ns"}}, False)  # found by this test
@example({"kind": "Pod", "metadata": {"name": "web", "namespace": "a\nb"}, "spec": {"containers": 1}}, False)
def test_kubernetes_shaped_json_loads_or_fails_with_one_line(doc: Any, compress: bool) -> None:
    data = json.dumps(doc).encode()
    load(gzip.compress(data) if compress else data)


@FUZZ
@given(documents, st.booleans())
def test_kubernetes_shaped_yaml_loads_or_fails_with_one_line(doc: Any, flow: bool) -> None:
    load(yaml.safe_dump(doc, default_flow_style=flow).encode())


@FUZZ
@given(documents, st.integers(min_value=0, max_value=400), st.binary(min_size=1, max_size=3))
def test_corrupted_json_loads_or_fails_with_one_line(doc: Any, at: int, junk: bytes) -> None:
    data = json.dumps(doc).encode()
    at = at % (len(data) + 1)
    load(data[:at] + junk + data[at + 1:])


def decoded(data: bytes, by_item: bool) -> Objects | str:
    """The objects of a JSON document in a file mapped into memory, or the message it fails with."""
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            try:
                return decode_json(mapped, "doc.json", by_item=by_item)
            except InputError as exc:
                return exc.message


@FUZZ
@given(documents, st.integers(min_value=0, max_value=400), st.binary(min_size=0, max_size=3))
@example({"kind": "Pod", "metadata": {"name": "a", "namespace": "ns"}, "spec": {"containers": [{"name": "c"}]},
          "items": [{"kind": "Node", "metadata": {"name": "n"}}]}, 0, b"")  # not a List, whatever it holds
def test_json_decoded_an_item_at_a_time_is_what_one_decode_gives(doc: Any, at: int, junk: bytes) -> None:
    # A large mapped file is decoded an item at a time (`snapshot._BY_ITEM_SHARE`): the same
    # objects, or the same one-line error, as decoding it whole (here the documents are small,
    # the junk spliced in makes some malformed).
    data = json.dumps(doc).encode()
    data = data[:at] + junk + data[at:]
    assert decoded(data, by_item=True) == decoded(data, by_item=False)

