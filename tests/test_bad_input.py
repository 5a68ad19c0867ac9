"""Bad input through the real command, in-process: every case is ONE line on stderr that starts with
`error:` and names the file (and the object and field where there is one), exit code 2, no traceback.
"""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kresched.cli import app
from kresched.cli.common import ENV, parse_duration
from kresched.errors import InputError
from kresched.sources import decode_words, snapshot


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


def run(monkeypatch: pytest.MonkeyPatch, *args: str) -> Run:
    """`kresched ARGS` with ENV's streams pointed at buffers (the commands write through ENV)."""
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(ENV, "stdout", out)
    monkeypatch.setattr(ENV, "stderr", err)
    for console in ("out", "err"):  # cached consoles around the previous streams
        monkeypatch.delitem(ENV.__dict__, console, raising=False)
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return Run(result.exit_code, out.getvalue() + result.stdout, err.getvalue() + result.stderr)


def write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def pod_yaml(requests: str = "cpu: 250m", labels: str = "app: web", name: str = "name: web") -> str:
    return f"""apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    {name}
    namespace: shop
    labels:
      {labels}
  spec:
    containers:
    - name: main
      image: nginx
      resources:
        requests:
          {requests}
"""


NODE_JSON = {"kind": "Node", "metadata": {"name": "node-a"},
             "status": {"allocatable": {"cpu": "4 cores", "memory": "16Gi", "pods": "110"}}}


# (file name, content, what the one line must contain besides the file name)
_BINARY = "binary data (a NUL byte), not JSON or YAML text"

CASES = [
    pytest.param("empty.yaml", "", ["empty input"], id="an empty file"),
    pytest.param("blank.json", "  \n\t\n  ", ["empty input"], id="a file of whitespace only"),
    pytest.param("comments.yaml", "# nothing here\n---\n", ["empty input", "no YAML document"],
                 id="a YAML file of comments only"),
    pytest.param("broken.yaml", "kind: Pod\nmetadata:\n  name: [web\n  namespace: shop\n",
                 ["malformed YAML", "at line"], id="malformed YAML"),
    pytest.param("tabs.yaml", "kind: Pod\nmetadata:\n\tname: web\n", ["malformed YAML", "line 3"],
                 id="YAML indented with a tab"),
    pytest.param("broken.json", '{"kind": "List",\n "items": [}', ["malformed JSON", "line 2, column"],
                 id="malformed JSON"),
    pytest.param("truncated.json", json.dumps({"kind": "List", "items": [NODE_JSON]})[:40], ["malformed JSON"],
                 id="truncated JSON"),
    pytest.param("garbage.json", json.dumps({"kind": "List", "items": ["oops", 5]}),
                 ["item 0 of the List", "expected `object`, got `str`"], id="a JSON List whose items are a string"),
    pytest.param("numbers.json", json.dumps({"kind": "List", "items": [5]}),
                 ["item 0 of the List", "got `int`"], id="a JSON List whose item is a number"),
    pytest.param("garbage.yaml", "kind: List\nitems:\n- oops\n- 5\n",
                 ["item 0 of the List is not an object (it is a string)"], id="a YAML List whose items are a string"),
    pytest.param("items.yaml", "kind: List\nitems: nope\n", ["`items` of the List is not a list"],
                 id="a YAML List whose items are not a list"),
    pytest.param("items.json", json.dumps({"kind": "List", "items": {"a": 1}}), ["List: items: expected `array"],
                 id="a JSON List whose items are not a list"),
    pytest.param("nokind.json", json.dumps({"metadata": {"name": "web"}}), ["has no `kind`"],
                 id="a JSON object without kind"),
    pytest.param("nokind.yaml", "metadata:\n  name: web\n", ["has no `kind`"], id="a YAML object without kind"),
    pytest.param("nokind-item.json", json.dumps({"kind": "List", "items": [{"metadata": {"name": "x"}}]}),
                 ["item 0 of the List has no `kind`"], id="a List item without kind"),
    pytest.param("array.json", "[1, 2]", ["not a Kubernetes object or List", "got `array`"],
                 id="a JSON array"),
    pytest.param("scalar.yaml", "just some text\n", ["document is not a Kubernetes object or List (it is a string)"],
                 id="a YAML scalar"),
    pytest.param("list.yaml", "- kind: Pod\n", ["not a Kubernetes object or List (it is a list)"],
                 id="a YAML sequence"),
    pytest.param("quantity.yaml", pod_yaml(requests="cpu: lots"),
                 ["Pod shop/web", "spec.containers[main].resources.requests.cpu", "invalid quantity 'lots'"],
                 id="an invalid quantity in a pod"),
    pytest.param("quantity.json", json.dumps({"kind": "List", "items": [
        {"kind": "Pod", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"containers": [{"name": "main", "resources": {"limits": {"memory": "1GB"}}}]}}]}),
                 ["Pod shop/web", "spec.containers[main].resources.limits.memory", "invalid quantity '1GB'"],
                 id="an invalid quantity in a pod, in JSON"),
    pytest.param("negative.yaml", pod_yaml(requests="memory: -1Gi"),
                 ["Pod shop/web", "requests.memory: must be greater than or equal to 0"],
                 id="a negative request"),
    pytest.param("node.json", json.dumps(NODE_JSON),
                 ["Node node-a", "status.allocatable.cpu", "invalid quantity '4 cores'"],
                 id="an invalid quantity in a node's allocatable"),
    pytest.param("nameless.yaml", pod_yaml(name="generateName: web-"),
                 ["Pod (item 0, without a name)", "metadata.name is required"], id="a pod without a name"),
    pytest.param("nameless.json", json.dumps({"kind": "Pod", "metadata": {"namespace": "shop"}}),
                 ["Pod (without a name)", "metadata.name is required"], id="a single pod without a name"),
    pytest.param("labels.yaml", pod_yaml(labels="tier: 1"),
                 ["Pod shop/web", "metadata.labels.tier", "expected `str`, got `int`"],
                 id="a label value that is a number in YAML"),
    pytest.param("priority.json", json.dumps({"kind": "Pod", "metadata": {"name": "web", "namespace": "shop"},
                                              "spec": {"priority": "high"}}),
                 ["Pod shop/web", "spec.priority", "expected `int | null`, got `str`"], id="a field of the wrong type"),
    pytest.param("pdb.yaml", "kind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\n"
                             "spec: {minAvailable: 'all', selector: {matchLabels: {app: web}}}\n",
                 ["PodDisruptionBudget shop/web", "spec.minAvailable", "'all' must be an integer or a percentage"],
                 id="a bad PDB minAvailable string"),
    pytest.param("pdb.json", json.dumps({"kind": "PodDisruptionBudget",
                                         "metadata": {"name": "web", "namespace": "shop"},
                                         "spec": {"maxUnavailable": "150%"}}),
                 ["PodDisruptionBudget shop/web", "spec.maxUnavailable", "must not be greater than 100%"],
                 id="a PDB maxUnavailable above 100%"),
    pytest.param("pvc.yaml", "kind: PersistentVolumeClaim\nmetadata: {name: data, namespace: shop}\n"
                             "spec: {resources: {requests: {storage: 10 gigs}}}\n",
                 ["PersistentVolumeClaim shop/data", "spec.resources.requests.storage", "invalid quantity '10 gigs'"],
                 id="an invalid quantity in a claim"),
    pytest.param("pv.json", json.dumps({"kind": "PersistentVolume", "metadata": {"name": "pv-1"},
                                        "spec": {"capacity": {"storage": "1TB"}}}),
                 ["PersistentVolume pv-1", "spec.capacity.storage", "invalid quantity '1TB'"],
                 id="an invalid capacity in a volume"),
    pytest.param("csinode.yaml", "kind: CSINode\nmetadata: {name: node-a}\n"
                                 "spec: {drivers: [{name: ebs.csi.aws.com, allocatable: {count: many}}]}\n",
                 ["CSINode node-a", "spec.drivers[0].allocatable.count", "expected `int | null`, got `str`"],
                 id="an attach limit that is not a number"),
    pytest.param("corrupt.json.gz", gzip.compress(b'{"kind": "List", "items": []}')[:12] + b"garbage" * 4,
                 ["corrupt gzip data"], id="a corrupt .gz"),
    pytest.param("truncated.yaml.gz", gzip.compress(pod_yaml().encode())[:-10], ["corrupt gzip data"],
                 id="a truncated .gz"),
    pytest.param("latin1.yaml", "kind: Pod\nmetadata: {name: caf\xe9}\n".encode("latin-1"), ["not UTF-8"],
                 id="a file that is not UTF-8"),
    # A NUL is named wherever it is: in the head a file is refused before it is decoded; further
    # on, the decoding it stops is (what the error was before a NUL is looked for there).
    pytest.param("nul.json", b'{"kind": "List", "items": [\0]}', [_BINARY], id="a NUL byte near the start"),
    pytest.param("nul-deep.json", b'{"kind": "List", "items": [' + b" " * 70_000 + b"\0]}", [_BINARY],
                 id="a NUL byte past the first 64 KiB"),
    pytest.param("nul-deep.yaml", b"kind: List\nitems: []\n# " + b"x" * 70_000 + b"\0\n", [_BINARY],
                 id="a NUL byte past the first 64 KiB of YAML"),
    pytest.param("nul-after-error.json", b'{"kind": "List", "items": [oops' + b" " * 70_000 + b"\0]}", [_BINARY],
                 id="a NUL byte after a syntax error"),
]


def _check_one_line_error(r: Run, *needles: str) -> str:
    assert r.code == 2, r
    assert "Traceback" not in r.stderr + r.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    line = lines[0]
    assert line.startswith("error: "), line
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    return line


@pytest.mark.parametrize(("name", "content", "needles"), CASES)
def test_bad_snapshot_files_are_one_line_errors_naming_the_file(monkeypatch, tmp_path, name, content, needles):
    path = write(tmp_path / name, content)
    r = run(monkeypatch, "snapshot", "--snapshot", str(path))
    _check_one_line_error(r, str(path), *needles)
    assert r.stdout == ""


@pytest.mark.parametrize(("name", "content", "needles"), CASES)
def test_a_bad_file_mapped_into_memory_is_the_same_error_as_read_whole_or_by_item(monkeypatch, tmp_path, name, content,
                                                                                  needles):
    # Large files are mapped, not copied (snapshot._MAP_AT): here every non-empty file is.
    path = write(tmp_path / name, content)
    read = run(monkeypatch, "snapshot", "--snapshot", str(path))
    monkeypatch.setattr(snapshot, "_MAP_AT", 1)
    mapped = run(monkeypatch, "snapshot", "--snapshot", str(path))
    assert (mapped.code, mapped.stdout, mapped.stderr) == (read.code, read.stdout, read.stderr)
    _check_one_line_error(mapped, str(path), *needles)
    # A mapped file beyond its share of the input limit is decoded an item at a time: here every one.
    monkeypatch.setattr(snapshot, "_BY_ITEM_SHARE", 1 << 62)
    by_item = run(monkeypatch, "snapshot", "--snapshot", str(path))
    assert (by_item.code, by_item.stdout, by_item.stderr) == (read.code, read.stdout, read.stderr)


def test_a_missing_file(monkeypatch, tmp_path):
    path = tmp_path / "nope.yaml"
    line = _check_one_line_error(run(monkeypatch, "snapshot", "--snapshot", str(path)), str(path))
    assert line.endswith("no such file or directory")


def test_a_directory_without_snapshot_files(monkeypatch, tmp_path):
    write(tmp_path / "README.md", "hello")
    write(tmp_path / "cluster.txt", "kind: Pod")
    r = run(monkeypatch, "snapshot", "--snapshot", str(tmp_path))
    _check_one_line_error(r, str(tmp_path), "no *.json, *.yaml or *.yml files")


def test_in_a_directory_the_bad_file_is_named(monkeypatch, tmp_path):
    write(tmp_path / "a-good.yaml", pod_yaml())
    bad = write(tmp_path / "b-bad.json", json.dumps(NODE_JSON))
    _check_one_line_error(run(monkeypatch, "snapshot", "--snapshot", str(tmp_path)), str(bad), "Node node-a")


def test_bad_input_on_stdin_is_named_stdin(monkeypatch):
    monkeypatch.setattr(ENV, "stdin", io.BytesIO(b"kind: List\nitems: [oops]\n"))
    _check_one_line_error(run(monkeypatch, "snapshot", "--snapshot", "-"), "<stdin>", "item 0 of the List")


def test_a_good_file_works_through_the_same_command(monkeypatch, tmp_path):
    path = write(tmp_path / "ok.yaml", pod_yaml() + """- apiVersion: v1
  kind: Node
  metadata:
    name: node-a
  status:
    allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
""")
    r = run(monkeypatch, "snapshot", "--snapshot", str(path))
    assert (r.code, r.stderr) == (0, "")
    assert {i["metadata"]["name"] for i in json.loads(r.stdout)["items"]} >= {"web", "node-a"}


@pytest.mark.parametrize("command", ["plan", "explain", "snapshot"])
def test_a_snapshot_of_pods_only_is_an_input_error_naming_the_missing_nodes(monkeypatch, tmp_path, command):
    # What `kubectl get pods -A -o yaml` gives (its pods bound to nodes it does not hold): not
    # "INFEASIBLE", but what to capture instead. (Pods bound to no node are a manifest: -f.)
    path = write(tmp_path / "pods.yaml", pod_yaml().replace("    containers:", "    nodeName: node-a\n    containers:"))
    args = [command, "--snapshot", str(path)] + (["shop/web"] if command == "explain" else [])
    r = run(monkeypatch, *args)
    assert r.code == 2
    assert _check_one_line_error(r) == (
        f"error: snapshot {path} has no nodes (1 pod): a plan needs the nodes too, e.g. kubectl get "
        "nodes,pods,pdb,priorityclasses,namespaces -A -o yaml")


def test_a_multi_line_message_is_printed_on_one_line(monkeypatch, tmp_path):
    # Whatever produced it, an error reaches the operator as one line.
    def fail(opts):
        raise InputError("first line\n  second line")

    monkeypatch.setattr("kresched.cli.snapshot.load_state", fail)
    r = run(monkeypatch, "snapshot", "--snapshot", str(tmp_path))
    assert _check_one_line_error(r) == "error: first line second line"


# -- durations ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90.0), ("90s", 90.0), ("5m", 300.0), ("1h", 3600.0), ("1h30m", 5400.0), ("500ms", 0.5),
     ("1m30s", 90.0), ("1.5h", 5400.0), ("1.5", 1.5), ("0", 0.0), (" 10s ", 10.0), ("2h0m0s", 7200.0)],
)
def test_durations(text, seconds):
    assert parse_duration(text, "--timeout") == seconds


@pytest.mark.parametrize("text", ["5x", "-1", "", " ", "-5m", "1h 30m", "ms", "m5", "5 m", "1e3", "5M", "١٠s", ".5s"])
def test_bad_durations_are_input_errors_naming_the_option(text):
    with pytest.raises(InputError, match=r"^--timeout: invalid duration") as info:
        parse_duration(text, "--timeout")
    assert info.value.exit_code == 2


@pytest.mark.parametrize("chunk", [1, 2, 3, 1 << 24])
def test_where_a_bad_byte_is_counted_the_same_chunk_by_chunk(monkeypatch, chunk):
    # Line and column of a byte, counted a chunk at a time (a mapped file is not copied whole).
    monkeypatch.setattr(decode_words, "_WHERE_CHUNK", chunk)
    data = b'{"a":\n  1,\n\n  "b": x}'
    assert decode_words.where(data, data.index(b"x")) == "line 4, column 8"
    assert decode_words.where(data, 0) == "line 1, column 1"
    assert decode_words.where(memoryview(data)[6:], 0) == "line 1, column 1"
    assert decode_words.where(data, data.index(b"\n")) == "line 1, column 6"
