"""YAML as Go reads and writes it (sigs.k8s.io/yaml, i.e. go-yaml v2's `resolve`), both ways.

`tests/fixtures/kubectl/tricky-pod.{yaml,json}` were recorded on the rig: one pod whose labels and
annotations hold the values YAML dialects disagree on, read back with `kubectl get -o yaml` and
`-o json`. kresched must read kubectl's YAML as kubectl's JSON, and write YAML that Go reads back
unchanged (checked on the rig with `kubectl create --dry-run=client -o json` of a `kresched
snapshot -o yaml`: labels and annotations identical; here, through the same resolution rules).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from kresched.render.common import to_yaml
from kresched.sources.decode import decode_json, decode_yaml
from kresched.sources.goyaml import go_tag, loader

FIXTURES = Path(__file__).parent / "fixtures" / "kubectl"
STR, BOOL, INT, FLOAT, NULL = (f"tag:yaml.org,2002:{t}" for t in ("str", "bool", "int", "float", "null"))


@pytest.mark.parametrize(("plain", "tag"), [
    # go-yaml v2 resolve.go: its map first (YAML 1.1's booleans, y and n included; its nulls) ...
    ("y", BOOL), ("Y", BOOL), ("yes", BOOL), ("n", BOOL), ("NO", BOOL), ("on", BOOL), ("Off", BOOL),
    ("true", BOOL), ("False", BOOL), ("", NULL), ("~", NULL), ("null", NULL), ("Null", NULL),
    (".inf", FLOAT), ("-.Inf", FLOAT), (".NaN", FLOAT),
    # ... then ParseInt(s, 0, 64) without underscores, ParseUint, yamlStyleFloat + ParseFloat
    ("0", INT), ("017", INT), ("0o17", INT), ("0x1F", INT), ("0b101", INT), ("-0b11", INT), ("+1", INT), ("+0b1", INT),
    ("1_000", INT), ("18446744073709551615", INT),
    ("08", FLOAT), ("1e3", FLOAT), ("1.5", FLOAT), ("-.5", FLOAT), (".5", FLOAT), ("5.", FLOAT),
    ("99999999999999999999", FLOAT),
    # ... and everything else is a string, where PyYAML's YAML 1.1 reads something else or fails
    ("=", STR), ("0x_", STR), (".5_", STR), ("1:20", STR), ("1e400", STR), ("_1", STR), (".", STR),
    ("-", STR), ("yep", STR), ("nULL", STR), ("0x", STR), ("1.2.3", STR), ("-0x", STR),
])
def test_a_plain_scalar_resolves_as_go_yaml_v2_resolves_it(plain: str, tag: str) -> None:
    assert go_tag(plain) == tag


def test_kubectls_yaml_reads_as_kubectls_json() -> None:
    from_yaml = decode_yaml((FIXTURES / "tricky-pod.yaml").read_text(), "yaml").pods[0]
    from_json = decode_json((FIXTURES / "tricky-pod.json").read_bytes(), "json").pods[0]
    assert from_yaml.metadata.annotations == from_json.metadata.annotations
    assert from_yaml.metadata.labels == from_json.metadata.labels
    assert from_yaml == from_json


def test_what_kubectl_writes_bare_is_a_string_to_go() -> None:
    """kubectl quotes a value only where Go would read something else: so every annotation it
    wrote bare (`=`, `<<`, `0x_`, `.5_`, ...) must resolve to the string it is."""
    text = (FIXTURES / "tricky-pod.yaml").read_text()
    annotations = json.loads((FIXTURES / "tricky-pod.json").read_text())["metadata"]["annotations"]
    bare = [v for k, v in annotations.items() if f"    {k}: {v}\n" in text and v]
    assert {"=", "<<", "0x_", ".5_"} <= set(bare)
    for value in bare:
        assert go_tag(value) == STR or value == "<<", value


def test_what_kubectl_double_quotes_for_its_resolver_kresched_quotes_too() -> None:
    """go-yaml's encoder double-quotes a plain-safe string exactly when its resolver would read it
    as another type (or as a base-60 float): kresched's writer must quote each of those."""
    text = (FIXTURES / "tricky-pod.yaml").read_text()
    doc = json.loads((FIXTURES / "tricky-pod.json").read_text())["metadata"]
    values = {**doc["labels"], **doc["annotations"]}
    quoted = {v for v in values.values() if f': "{v}"\n' in text and v and v.isprintable()}
    assert {"y", "n", "on", "08", "1e3", "0o17", "1_000", "1:20", "2026-01-02", "null"} <= quoted
    written = to_yaml({"v": sorted(quoted)})
    for value in quoted:
        assert f"- {value}\n" not in written, value


WRITE_BACK = ["y", "n", "on", "off", "yes", "NO", "08", "1e3", "0o17", "0x1F", "1_000", "1:20", "2026-01-02",
              "null", "~", "", "=", "<<", "0x_", ".5_", ".inf", "+1", "-.5", "99999999999999999999", "a: b",
              "# h", "plain", "- d", "a\nb", " a ", "0b101", "true", "1.0"]


def test_what_kresched_writes_reads_back_identically_as_go_and_as_pyyaml_read_it() -> None:
    data = {"labels": {f"k{i}": v for i, v in enumerate(WRITE_BACK)}, "n": 5, "f": 1.5, "b": True, "none": None}
    text = to_yaml(data)
    assert yaml.load(text, Loader=loader()) == data
    assert yaml.safe_load(text) == data


@pytest.mark.parametrize(("text", "value"), [
    pytest.param("v: 08", 8, id="a float that is whole reaches Go's JSON decoder as an integer"),
    pytest.param("v: 1e3", 1000, id="1e3 too"),
    pytest.param("v: 2.5", 2.5, id="a float that is not whole stays one"),
    pytest.param("v: 017", 15, id="a leading 0 is octal"),
    pytest.param("v: 2026-01-02", "2026-01-02", id="a timestamp stays its text (deliberately: Go makes a time)"),
    pytest.param("y: 1", {"true": 1}, id="a key that resolves to a boolean is its Go string"),
    pytest.param("1: a", {"1": "a"}, id="a number key too"),
    pytest.param("base: &b {x: 1}\nv: {<<: *b, z: 2}", {"x": 1, "z": 2}, id="a merge key merges"),
])
def test_a_document_reads_as_go_reads_it(text: str, value: object) -> None:
    doc = yaml.load(text, Loader=loader())
    assert doc.get("v", doc) == value


def test_a_bare_boolean_where_a_string_is_expected_is_refused_with_the_reason() -> None:
    with pytest.raises(Exception, match=r"metadata\.name: expected `str`, got `bool` \(YAML reads a bare y, n"):
        decode_yaml("kind: Node\nmetadata: {name: n}\n", "node.yaml")


def test_special_floats() -> None:
    doc = yaml.load("a: .nan\nb: -.inf", Loader=loader())
    assert math.isnan(doc["a"])
    assert doc["b"] == -math.inf


def test_a_string_of_several_lines_is_a_literal_block_as_kubectl_writes_it() -> None:
    """go-yaml's encoder writes a multi-line string as `|` (a ConfigMap's file reads as the file)."""
    text = to_yaml({"config.yaml": "apiVersion: v1\nkind: Config\n"})
    assert text == "config.yaml: |\n  apiVersion: v1\n  kind: Config\n"
    for value in ("a\nb", "a \nb", "\tz\nq", "trailing\n\n", " lead\nx"):
        assert yaml.load(to_yaml({"v": value}), Loader=loader()) == {"v": value}


def test_a_key_given_twice_is_the_last_one_or_an_error_when_strict() -> None:
    """go-yaml's `Unmarshal` keeps the last; `UnmarshalStrict` (the API machinery's strict decoding,
    which reads kube-scheduler's --config) refuses it."""
    text = "a: 1\nb: 2\na: 3\n"
    assert yaml.load(text, Loader=loader()) == {"a": 3, "b": 2}
    with pytest.raises(yaml.YAMLError, match="key 'a' already set in map"):
        yaml.load(text, Loader=loader(strict=True))
    assert yaml.load("base: &b {x: 1}\nv: {<<: *b, x: 2}\n", Loader=loader(strict=True))["v"] == {"x": 2}
