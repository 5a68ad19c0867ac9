"""`kresched plan -f FILE`, run in-process: kubectl's `-f`, the JSON contract of a what-if, the exit
codes, the table that fits 80 columns, and the bad input an operator can give it."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from kresched.cli.common import ENV
from kresched.sources.snapshot import encode_snapshot
from tests.builders import make_node, make_pod, make_priority_class, make_state
from tests.clirun import Result, reset_env, run_cli

Run = Callable[..., Result]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    def run(*args: str, stdin: bytes | None = None, width: int | None = None,
            env: dict[str, str] | None = None) -> Result:
        if stdin is not None:
            monkeypatch.setattr(ENV, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        return run_cli(monkeypatch, *args, width=width, env=env)

    yield run
    reset_env()


def _snapshot(tmp_path: Path) -> str:
    nodes = [make_node("node-a1", cpu="2", labels={"topology.kubernetes.io/zone": "a"}),
             make_node("node-b1", cpu="2", labels={"topology.kubernetes.io/zone": "b"})]
    pods = [make_pod("batch-1", "batch", node="node-a1", cpu="1500m", priority=0, grace=5)]
    path = tmp_path / "cluster.json"
    path.write_bytes(encode_snapshot(make_state(nodes, pods, priority_classes=[make_priority_class("high", 1000)])))
    return str(path)


def _deployment(name: str = "web", replicas: int = 3, cpu: str = "1", priority_class: str = "high",
                namespace: str | None = "shop") -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"priorityClassName": priority_class,
                                           "containers": [{"name": "c", "image": "nginx",
                                                           "resources": {"requests": {"cpu": cpu}}}]}}}}


def _write(tmp_path: Path, *docs: dict, name: str = "deploy.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_json_is_the_what_if_contract(cli: Run, tmp_path: Path) -> None:
    r = cli("plan", "-f", _write(tmp_path, _deployment()), "--snapshot", _snapshot(tmp_path), "-o", "json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    [w] = out["workloads"]
    assert list(out) == ["workloads"]
    assert {"workload", "kind", "replicas", "placed", "pending", "message", "plans"} <= set(w)
    assert (w["workload"], w["kind"], w["replicas"], w["pending"]) == ("shop/web", "Deployment", 3, 0)
    assert sum(w["placed"].values()) == 3
    assert [p["outcome"] for p in w["plans"]].count("evict") == 1
    assert all({"pod", "outcome", "node", "victims", "message"} <= set(p) for p in w["plans"])
    assert "note: not simulated: LimitRange defaults" in r.stderr


def test_pending_replicas_exit_3_with_the_nearest_nodes(cli: Run, tmp_path: Path) -> None:
    r = cli("plan", "-f", _write(tmp_path, _deployment(replicas=6)), "--snapshot", _snapshot(tmp_path), "-o", "json")
    assert r.exit_code == 3
    [w] = json.loads(r.stdout)["workloads"]
    assert (sum(w["placed"].values()), w["pending"]) == (4, 2)
    assert "0/2 nodes are available: 2 Insufficient cpu." in w["message"]
    assert [n["node"] for n in w["nearest"]] == ["node-a1", "node-b1"] or len(w["nearest"]) == 2
    assert all(n["reasons"] == ["Insufficient cpu"] for n in w["nearest"])


def test_the_table_fits_80_columns(cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # (paths longer than the screen run long, whole, as names do)
    _write(tmp_path, _deployment(replicas=6))
    _snapshot(tmp_path)
    r = cli("plan", "-f", "deploy.yaml", "--snapshot", "cluster.json", env={"COLUMNS": "80"})
    assert r.exit_code == 3
    lines = r.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert lines[0] == "deployment shop/web"
    assert any(line.startswith("NODE") and "REPLICAS" in line for line in lines)
    assert "1 workload: 4 of 6 replicas placed (1 after evictions), 2 Pending" in r.stdout


def test_stdin_directories_and_recursion_are_kubectls(cli: Run, tmp_path: Path) -> None:
    snap = _snapshot(tmp_path)
    manifest = yaml.safe_dump(_deployment(replicas=1)).encode()
    r = cli("plan", "-f", "-", "--snapshot", snap, "-o", "json", stdin=manifest)
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["workloads"][0]["workload"] == "shop/web"
    d = tmp_path / "manifests"
    (d / "more").mkdir(parents=True)
    _write(d, _deployment("api", 1), name="api.yaml")
    _write(d / "more", _deployment("worker", 1), name="worker.yml")
    (d / "README.md").write_text("not a manifest")
    flat = json.loads(cli("plan", "-f", str(d), "--snapshot", snap, "-o", "json").stdout)
    assert [w["workload"] for w in flat["workloads"]] == ["shop/api"]
    deep = json.loads(cli("plan", "-f", str(d), "-R", "--snapshot", snap, "-o", "json").stdout)
    assert [w["workload"] for w in deep["workloads"]] == ["shop/api", "shop/worker"]


def test_a_list_and_several_files(cli: Run, tmp_path: Path) -> None:
    snap = _snapshot(tmp_path)
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [_deployment("a", 1)]}))
    r = cli("plan", "-f", str(listed), "-f", _write(tmp_path, _deployment("b", 1)), "--snapshot", snap, "-o", "json")
    assert [w["workload"] for w in json.loads(r.stdout)["workloads"]] == ["shop/a", "shop/b"]


@pytest.mark.parametrize(("args", "error"), [
    (("plan", "-f", "https://example.com/deploy.yaml"),
     "error: -f https://example.com/deploy.yaml: kresched does not fetch URLs; download the manifest and pass the "
     "file"),
    (("plan", "-f", "missing.yaml"), "error: -f missing.yaml: no such file or directory"),
    (("plan", "web-1", "-f", "x.yaml"), "error: -f and POD are exclusive: -f plans the workloads in the manifests"),
    (("plan", "--max"), "error: --max goes with -f FILE (the workloads to plan for)"),
    (("explain", "-f", "x.yaml"), "error: unknown shorthand flag: 'f' in -f: explain reads no manifests (-f is plan's "
                                  "and preempt's, as kubectl's); a snapshot is --snapshot PATH (see 'kresched explain "
                                  "--help')"),
    (("-f", "demo", "plan"), "error: -f names manifests and comes after the verb (kresched plan -f FILE); a snapshot "
                             "is --snapshot PATH (see 'kresched --help')"),
])
def test_bad_input_is_one_error_line(cli: Run, tmp_path: Path, args: tuple[str, ...], error: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = cli(*args, "--snapshot", "demo") if args[0] != "-f" else cli(*args)
    assert r.exit_code == 2
    assert r.stderr.strip() == error


def test_a_manifest_without_workloads_is_an_error(cli: Run, tmp_path: Path) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}}
    r = cli("plan", "-f", _write(tmp_path, cm), "--snapshot", _snapshot(tmp_path))
    assert r.exit_code == 2
    assert r.stderr.startswith("error: -f ")
    assert "no workload to plan for (only ConfigMap default/cfg)" in r.stderr


def test_explicit_namespace_must_match_the_objects(cli: Run, tmp_path: Path) -> None:
    r = cli("plan", "-f", _write(tmp_path, _deployment()), "-n", "other", "--snapshot", _snapshot(tmp_path))
    assert r.exit_code == 2
    assert "the namespace from the provided object 'shop' does not match the namespace 'other'" in r.stderr
    r = cli("plan", "-f", _write(tmp_path, _deployment(namespace=None)), "-n", "other", "--snapshot",
            _snapshot(tmp_path), "-o", "json")
    assert json.loads(r.stdout)["workloads"][0]["workload"] == "other/web"


def test_the_demo_manifests_on_the_demo_cluster(cli: Run) -> None:
    r = cli("plan", "-f", "demo", "--snapshot", "demo", "-o", "json")
    assert r.exit_code == 3  # the training Job fits nowhere, as its comment says
    by_kind = {w["kind"]: w for w in json.loads(r.stdout)["workloads"]}
    assert set(by_kind) == {"Deployment", "DaemonSet", "Job"}
    assert by_kind["Deployment"]["pending"] == 0
    assert any(p["outcome"] == "evict" for p in by_kind["Deployment"]["plans"])
    assert by_kind["Job"]["pending"] == 2
    assert by_kind["Job"]["nearest"]


@pytest.mark.parametrize(("name", "content", "error"), [
    ("bin.yaml", b"\x00\x01binary", "bin.yaml: binary data (a NUL byte), not JSON or YAML text"),
    ("deep.json", b"[" * 5000 + b"]" * 5000, "deep.json: objects and lists nested too deeply; no Kubernetes object is"),
    ("bad.yaml", b"a: [\n", "bad.yaml: malformed YAML: did not find expected node content (while parsing a flow node) "
                            "at line 2, column 1"),
    ("list.yaml", b"- 1\n- 2\n", "list.yaml: item 0 is not an object"),
    ("nokind.yaml", b"metadata: {name: x}\n", "nokind.yaml: not a Kubernetes object: it has no `kind`"),
    ("badq.yaml", yaml.safe_dump({**_deployment(), "spec": {**_deployment()["spec"], "template": {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1 core"}}}]}}}}).encode(),
     "badq.yaml: Deployment shop/web: spec.template.spec.containers[c].resources.requests.cpu: invalid quantity "
     "'1 core'"),
    ("nocontainers.yaml", yaml.safe_dump({**_deployment(), "spec": {**_deployment()["spec"], "template": {
        "metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}}}).encode(),
     "nocontainers.yaml: Deployment shop/web: spec.template.spec.containers: Required value"),
    ("nullspec.yaml", b"apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\nspec: null\n",
     "nullspec.yaml: Pod shop/web: spec.containers: Required value"),
])
def test_a_bad_manifest_is_one_error_line_naming_the_file_and_the_field(cli: Run, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch, name: str,
                                                                       content: bytes, error: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_bytes(content)
    r = cli("plan", "-f", name, "--snapshot", "demo")
    assert r.exit_code == 2
    assert len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith(f"error: {error}")


def test_nulls_in_a_manifest_are_read_as_go_reads_them(cli: Run, tmp_path: Path) -> None:
    doc = _deployment(replicas=2)
    doc["metadata"]["labels"] = None
    doc["spec"]["template"]["metadata"]["annotations"] = None
    doc["spec"]["template"]["spec"]["tolerations"] = None
    doc["spec"]["template"]["spec"]["containers"][0]["ports"] = None
    r = cli("plan", "-f", _write(tmp_path, doc), "--snapshot", _snapshot(tmp_path), "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["workloads"][0]["replicas"] == 2
