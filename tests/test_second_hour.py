"""A newcomer's second hour (issue 45, section 2), tried as a new user would, at 80 columns: a
forgotten file name, drain's JSON in one shape whatever the number of nodes, kubectl's `TYPE NAME`
and `help`, words that read well, NO_COLOR honoured on a terminal, namespaces completed and the
completion installed where the docs say, close names that are close, an example cluster with a lost
node for the guide, a terminating StatefulSet pod told as it is, README links that work on PyPI, and
extenders sent the objects as the API server served them.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kresched.plan.choice import lost_because
from kresched.plan.plans import NodeOption
from kresched.sources import served
from tests.builders import make_node, make_pod
from tests.clirun import Result, documents, drained, reset_env, run_cli
from tests.extender_server import FakeExtender, closed_port, running_extender
from tests.fakeapi import PODS
from tests.test_cli_plan import write
from tests.test_completions import bash_complete, kresched_on_path  # noqa: F401 (a fixture)

Run = Callable[..., Result]

ROOT = Path(__file__).resolve().parents[1]
CRITICAL = "kube-system/metrics-server-5p9lfwkgvh-mkd72"
LOST = "examples/lost-node.yaml"


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    def run(*args: str, **kwargs: Any) -> Result:
        kwargs.setdefault("env", {"COLUMNS": "80"})
        return run_cli(monkeypatch, *args, **kwargs)

    yield run
    served.record_into(None)
    reset_env()


def flat(text: str) -> str:
    return " ".join(text.split())


# -- `-f` without its FILE -------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "after"), [
    pytest.param(("plan", "-f", "--snapshot", "demo"), ", not --snapshot", id="followed by an option"),
    pytest.param(("plan", "--snapshot", "demo", "-f"), "", id="last"),
    pytest.param(("preempt", "--filename", "-n", "shop"), ", not -n", id="--filename, on preempt"),
])
def test_f_without_a_file_says_that_f_needs_a_file(cli: Run, args: tuple[str, ...], after: str) -> None:
    r = cli(*args)
    flag, verb = ("--filename" if "--filename" in args else "-f"), args[0]
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (f"error: {flag} needs a FILE: the manifests of workloads that do not exist yet (a file, a "
                        f"directory, or - for stdin){after} (see 'kresched {verb} --help')\n")


def test_f_with_its_file_still_plans_and_stdin_is_still_a_file(cli: Run) -> None:
    import typer

    from kresched.cli import app, normalize_args

    assert cli("plan", "-f", "demo", "--snapshot", "demo", "-o", "json").exit_code in (0, 3)
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert normalize_args(["plan", "-f", "-", "--snapshot", "demo"], commands) == [
        "plan", "-f", "-", "--snapshot", "demo"]


# -- drain's JSON: one shape, and a summary at the end ---------------------------------------------


@pytest.mark.parametrize("nodes", [
    pytest.param(("worker-b3",), id="one node"),
    pytest.param(("-l", "kubernetes.io/hostname=worker-b3"), id="a selector matching one"),
    pytest.param(("worker-b3", "worker-c1"), id="two nodes"),
    pytest.param(("-l", "topology.kubernetes.io/zone=eu-west-1b"), id="a selector matching three"),
])
def test_drain_json_has_one_shape_whatever_the_number_of_nodes(cli: Run, nodes: tuple[str, ...]) -> None:
    r = cli("drain", *nodes, "--ignore-daemonsets", "--dry-run", "--snapshot", "demo", "-o", "json")
    stream = documents(r.stdout)
    assert [d["action"] for d in stream] == ["preflight", "summary"]
    preflight, summary = stream
    assert set(preflight) <= {"action", "nodes", "flags", "warnings"}
    assert isinstance(preflight["nodes"], list)
    assert "worker-b3" in [n["node"] for n in preflight["nodes"]]
    assert all(set(n) == {"node", "evict", "skip", "errors"} for n in preflight["nodes"])
    assert set(summary) == {"action", "complete", "reasons", "refused", "pending", "blocked", "mode", "cluster",
                            "message"}
    # The summary says what the exit code says, and why, as stderr does.
    assert summary["complete"] is (r.exit_code == 0)
    assert (summary["mode"], summary["cluster"]) == ("dry run", None)
    assert r.stderr == f"error: the drain would not finish: {'; '.join(summary['reasons'])}\n"
    assert summary["message"].endswith(" (dry run)")


def test_a_drain_dry_run_that_would_finish_ends_with_kubectls_closing_line_in_every_format(cli: Run) -> None:
    args = ("drain", "worker-c1", "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--allow-pending",
            "--dry-run", "--snapshot", "demo")
    table = cli(*args)
    as_json = documents(cli(*args, "-o", "json").stdout)
    as_yaml = list(yaml.safe_load_all(cli(*args, "-o", "yaml").stdout))
    assert table.exit_code == 0, table.stderr
    assert as_json == as_yaml
    summary = as_json[-1]
    assert (summary["action"], summary["complete"], summary["reasons"]) == ("summary", True, [])
    assert re.fullmatch(r"node/worker-c1 drained: \d+ pods evicted \(dry run\)", summary["message"])
    assert flat(table.stdout).endswith(summary["message"])


def test_a_lost_nodes_drain_and_the_out_of_service_rehearsal_stream_as_every_other(cli: Run) -> None:
    refused = documents(cli("drain", "worker-c2", "--ignore-daemonsets", "--force", "--dry-run", "--snapshot", LOST,
                            "-o", "json").stdout)
    assert [d["action"] for d in refused] == ["preflight", "summary"]
    assert [n["node"] for n in refused[0]["nodes"]] == ["worker-c2"]
    assert (refused[1]["complete"], refused[1]["lost"]) == (False, ["worker-c2"])
    rehearsed = documents(cli("drain", "worker-c2", "--out-of-service", "--dry-run", "--snapshot", LOST,
                              "-o", "json").stdout)
    assert [(d["action"], d.get("node")) for d in rehearsed] == [("preflight", "worker-c2"), ("summary", None)]
    assert rehearsed[1]["message"] == "node/worker-c2 would be tainted node.kubernetes.io/out-of-service (dry run)"


def test_the_docs_show_drain_json_in_the_shape_it_has() -> None:
    page = (ROOT / "docs" / "reference" / "json.md").read_text()
    assert '"nodes": [...]}` for several' not in page  # the old, count-dependent shape
    assert '{"action": "preflight",\n "nodes": [{"node": "worker-b3",' in page
    assert "whatever the number of nodes" in page
    assert "`drain --dry-run` prints its pre-flight, then the summary" in \
        " ".join((ROOT / "docs" / "reference" / "output.md").read_text().split())


# -- kubectl habits: TYPE NAME, and `help` ----------------------------------------------------------


@pytest.mark.parametrize(("spaced", "slashed"), [
    pytest.param(("explain", "pod", "metrics-server-5p9lfwkgvh-mkd72", "-n", "kube-system"),
                 ("explain", "pod/metrics-server-5p9lfwkgvh-mkd72", "-n", "kube-system"), id="explain pod NAME -n NS"),
    pytest.param(("explain", "-n", "kube-system", "po", "metrics-server-5p9lfwkgvh-mkd72"),
                 ("explain", "-n", "kube-system", "po/metrics-server-5p9lfwkgvh-mkd72"), id="-n first, po NAME"),
    pytest.param(("explain", "node", "worker-b3"), ("explain", "node/worker-b3"), id="explain node NAME"),
    pytest.param(("plan", "deploy", "metrics-server", "-n", "kube-system"),
                 ("plan", "deploy/metrics-server", "-n", "kube-system"), id="plan deploy NAME"),
    pytest.param(("plan", "deployments.apps", "metrics-server", "-n", "kube-system"),
                 ("plan", "deployments.apps/metrics-server", "-n", "kube-system"), id="plan TYPE.GROUP NAME"),
    pytest.param(("preempt", "pod", "metrics-server-5p9lfwkgvh-mkd72", "-n", "kube-system", "--dry-run"),
                 ("preempt", "pod/metrics-server-5p9lfwkgvh-mkd72", "-n", "kube-system", "--dry-run"),
                 id="preempt pod NAME"),
    pytest.param(("drain", "node", "worker-b3", "--dry-run"), ("drain", "node/worker-b3", "--dry-run"),
                 id="drain node NAME"),
])
def test_type_space_name_is_type_slash_name(cli: Run, spaced: tuple[str, ...], slashed: tuple[str, ...]) -> None:
    a = cli(*spaced, "--snapshot", "demo", "-o", "json")
    b = cli(*slashed, "--snapshot", "demo", "-o", "json")
    assert "unexpected extra argument" not in a.stderr
    assert a.exit_code == b.exit_code
    # (a dry run's steps are timed; a node without a Lease is told as of now)
    strip = re.compile(r'"time":"[^"]*",?|"seconds":[0-9.]+|[0-9]+\.[0-9]s|[0-9-]{10}T[0-9:.]+Z')
    assert strip.sub("", a.stdout) == strip.sub("", b.stdout)
    assert a.stdout


def test_type_with_two_names_says_one_object_at_a_time(cli: Run) -> None:
    r = cli("explain", "pod", "web-1", "web-2", "--snapshot", "demo")
    assert (r.exit_code, r.stderr) == (2, "error: explain takes one object at a time: pod web-1 web-2 names 2 (e.g. "
                                          "explain pod/web-1) (see 'kresched explain --help')\n")


@pytest.mark.parametrize(("args", "error"), [
    pytest.param(("explain", "pod"), "pod default/pod not found in the snapshot; pod is a type, not a name: give the "
                                     "name too (pod NAME, or pod/NAME)", id="explain pod"),
    pytest.param(("plan", "deploy", "-n", "shop"), "pod shop/deploy not found in the snapshot; deploy is a type, not a "
                                                   "name: give the name too (deploy NAME, or deploy/NAME)",
                 id="plan deploy"),
    pytest.param(("drain", "node", "--dry-run"), "node node not found; node is a type, not a name: give the name too "
                                                 "(node NAME, or node/NAME)", id="drain node"),
    pytest.param(("explain", "node"), "node node not found; node is a type, not a name: give the name too (node "
                                      "NAME, or node/NAME)", id="explain node"),
])
def test_a_type_without_its_name_says_so_not_what_the_type_resembles(cli: Run, args: tuple[str, ...],
                                                                     error: str) -> None:
    r = cli(*args, "--snapshot", "demo")
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"error: {error}\n")


def test_help_and_help_command_show_the_help(cli: Run) -> None:
    root = cli("help")
    assert (root.exit_code, root.stdout) == (0, cli("--help").stdout)
    assert "help       Help about any command" in root.stdout
    for verb in ("plan", "drain", "explain"):
        assert cli("help", verb).stdout == cli(verb, "--help").stdout
    typo = cli("help", "pln")
    assert (typo.exit_code, typo.stderr) == (2, "error: unknown command 'pln'; did you mean plan? (see 'kresched "
                                                "--help')\n")


# -- words ---------------------------------------------------------------------------------------------


def test_a_workload_without_requests_says_no_requests(cli: Run, tmp_path: Path) -> None:
    manifest = tmp_path / "idle.yaml"
    manifest.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: idle, namespace: shop}\n"
                        "spec:\n  replicas: 1\n  selector: {matchLabels: {app: idle}}\n  template:\n"
                        "    metadata: {labels: {app: idle}}\n    spec: {containers: [{name: c, image: busybox}]}\n")
    out = flat(cli("plan", "-f", str(manifest), "--snapshot", "demo").stdout)
    assert "requests no requests" not in out
    assert re.search(r"priority \d+ \(standard\), no requests, from ", out)
    sized = flat(cli("plan", "-f", "demo", "--snapshot", "demo").stdout)
    assert "requests cpu 1, memory 1Gi per replica" in sized


@pytest.mark.parametrize("verb", ["explain", "plan"])
def test_a_pod_with_claims_says_its_claims_in_its_header(cli: Run, verb: str) -> None:
    r = cli(verb, "default/trainer", "--snapshot", "examples/gpu-cluster.json")
    assert r.stdout.splitlines()[1:3] == ["  priority 1000, requests cpu 1",
                                          "  ResourceClaims: gpu (trainer-gpu, from template one-gpu)"]


def test_a_tie_down_to_the_node_name_reads_as_a_tie(cli: Run, tmp_path: Path) -> None:
    nodes = [make_node("node-a", cpu="2"), make_node("node-b", cpu="2")]
    pods = [make_pod("va", node="node-a", cpu="2", grace=5), make_pod("vb", node="node-b", cpu="2", grace=5),
            make_pod("p", cpu="1", priority=1000)]
    out = flat(cli("plan", "default/p", "--snapshot", write(tmp_path, nodes, pods)).stdout)
    assert "node name:" not in out
    assert "vs node-a on node-a" not in out
    assert "Why node-a: it ties with node-b on every criterion and comes first by name (the scheduler may take " \
           "either)" in out
    assert "node-b 1 it ties with node-a on every criterion; node-a comes first by name" in out


def test_a_node_lost_on_an_earlier_criterion_still_names_it() -> None:
    key = (0, 0, 100, 100, 1, 0, 0, 0)
    a = NodeOption("node-a", 1, (), (*key, "node-a"))
    b = NodeOption("node-b", 1, (), (0, 0, 200, 200, 1, 0, 0, 0, "node-b"))
    assert lost_because(b, a) == "highest victim priority: 200 vs 100 on node-a"


def test_no_new_claims_to_deallocate_is_the_schedulers_text_and_the_docs_say_so_once(cli: Run) -> None:
    # Kept word for word, as the scheduler wrote it into the demo's pod (no device anywhere).
    out = flat(cli("explain", "ml/train-ranker-v7-95mf5", "--snapshot", "demo").stdout)
    assert "node affinity/selector. no new claims to deallocate, preemption: 0/10 nodes are available" in out
    pages = {p: p.read_text() for p in (ROOT / "docs").rglob("*.md")}
    explained = [p for p, text in pages.items() if "no new claims to deallocate" in " ".join(text.split())]
    assert [p.name for p in explained] == ["pending-pod.md"]
    text = " ".join(pages[explained[0]].split())
    assert "that is the scheduler's own text, kept word for word" in text
    assert "for a pod without ResourceClaims it answers exactly that" in text


# -- NO_COLOR on a terminal -----------------------------------------------------------------------------


def _on_a_terminal(args: list[str], env: dict[str, str]) -> bytes:
    """What `kresched ARGS` writes to a terminal (stdout and stderr both on one pty)."""
    master, slave = pty.openpty()
    clean = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "KRESCHED_NO_PROGRESS",
                                                              "COLUMNS", "TERM")}
    proc = subprocess.Popen([sys.executable, "-m", "kresched", *args], stdin=slave, stdout=slave, stderr=slave,
                            env={**clean, "TERM": "xterm-256color", "COLUMNS": "80", **env}, cwd=ROOT)
    os.close(slave)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other end closed (Linux: EIO)
                break
            if not chunk:
                break
            out += chunk
    finally:
        proc.wait(timeout=120)
        os.close(master)
    return out


@pytest.mark.slow
def test_no_color_on_a_terminal_writes_no_escape_code_at_all_not_even_the_status_lines() -> None:
    args = ["plan", CRITICAL, "--snapshot", "demo"]
    coloured = _on_a_terminal(args, {})
    assert b"\x1b[" in coloured  # the test can fail: without NO_COLOR there are some
    plain = _on_a_terminal(args, {"NO_COLOR": "1"})
    assert b"reading the demo cluster" in plain  # the status line is still there
    assert b"EVICT on worker-c1" in plain
    assert b"\x1b" not in plain
    assert b"\x1b" not in _on_a_terminal([*args, "--no-color"], {})


# -- completion -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_namespaces_complete_from_the_snapshot(kresched_on_path: dict[str, str]) -> None:  # noqa: F811
    assert bash_complete(["kresched", "explain", "--snapshot", "demo", "-n", "kube-sys"], kresched_on_path) == [
        "kube-system"]
    assert bash_complete(["kresched", "rebalance", "--snapshot", "demo", "-n", "s"], kresched_on_path) == ["shop"]
    assert bash_complete(["kresched", "reconcile", "--snapshot", "demo", "-n", "kube-"], kresched_on_path) == [
        "kube-node-lease", "kube-public", "kube-system"]


@pytest.mark.slow
def test_namespaces_complete_from_the_cluster(kresched_on_path: dict[str, str], fake_api: Any,  # noqa: F811
                                              fake_kubeconfig: Path) -> None:
    # Without --snapshot, as the newcomer typed it: the namespaces the API server lists, over HTTP.
    fake_api.load({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        for name in ("default", "kube-node-lease", "kube-public", "kube-system", "shop")]})
    env = {**kresched_on_path, "KUBECONFIG": str(fake_kubeconfig)}
    assert bash_complete(["kresched", "explain", "-n", "kube-sys"], env) == ["kube-system"]
    assert bash_complete(["kresched", "plan", "--kubeconfig", str(fake_kubeconfig), "-n", "sh"],
                         kresched_on_path) == ["shop"]


def test_namespaces_complete_from_the_pods_when_a_snapshot_has_no_namespace_objects(tmp_path: Path) -> None:
    from kresched.cli.complete import complete_namespaces

    class Ctx:
        params = {"snapshot": write(tmp_path, [make_node()], [make_pod("a", "shop"), make_pod("b", "batch")])}
        parent = None

    assert complete_namespaces(Ctx(), "") == ["batch", "shop"]
    assert complete_namespaces(Ctx(), "sh") == ["shop"]


def _documented_paths() -> dict[str, str]:
    """The paths docs/guide/ci-and-cluster.md says `--install-completion SHELL` writes, by shell."""
    text = " ".join((ROOT / "docs" / "guide" / "ci-and-cluster.md").read_text().split())
    said = text.split("`kresched --install-completion [bash|zsh|fish]`", 1)[1]
    return {shell: re.search(rf"`(~/[^`]+)` for {shell}", said).group(1)  # type: ignore[union-attr]
            for shell in ("bash", "zsh", "fish")}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_install_completion_writes_the_committed_script_where_the_docs_say(cli: Run, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch,
                                                                            shell: str) -> None:
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "BASH_COMPLETION_USER_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    r = cli("--install-completion", shell)
    assert r.exit_code == 0, r.stderr
    path = tmp_path / _documented_paths()[shell].removeprefix("~/")
    name = {"bash": "kresched.bash", "zsh": "_kresched", "fish": "kresched.fish"}[shell]
    assert path.read_text() == (ROOT / "completions" / name).read_text()
    assert r.stdout.startswith(f"{shell} completion installed in {path}\n")
    assert {p for p in tmp_path.rglob("*") if p.is_file()} == ({path, tmp_path / ".zshrc"} if shell == "zsh"
                                                                else {path})
    if shell == "zsh":  # sourced from ~/.zshrc, once however often it is installed
        cli("--install-completion", shell)
        assert (tmp_path / ".zshrc").read_text() == f"source {path}\n"


def test_show_completion_takes_the_shell_and_an_unknown_one_is_refused(cli: Run) -> None:
    assert cli("--show-completion", "zsh").stdout.startswith("#compdef kresched\n")
    r = cli("--install-completion", "tcsh")
    assert (r.exit_code, r.stderr) == (2, "error: --install-completion: shell 'tcsh' is not supported: name one of "
                                          "bash, zsh, fish (--install-completion bash) (see 'kresched --help')\n")


# -- close names -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "error"), [
    pytest.param(("explain", "metrics-server"),
                 "pod default/metrics-server not found in the snapshot; did you mean "
                 f"{CRITICAL} (or deployment/metrics-server -n kube-system)?", id="a pod's stem in another namespace"),
    pytest.param(("explain", "metrics-server", "-n", "kube-system"),
                 f"pod kube-system/metrics-server not found in the snapshot; did you mean {CRITICAL} (or "
                 "deployment/metrics-server)?", id="its stem in -n: only the pod it begins"),
    pytest.param(("plan", "metrics-servre", "-n", "kube-system"),
                 f"pod kube-system/metrics-servre not found in the snapshot; did you mean {CRITICAL}?",
                 id="a typo: the close name only"),
    pytest.param(("drain", "worker-b", "--dry-run"), "node worker-b not found; did you mean worker-b1, worker-b2, "
                                                     "worker-b3?", id="a node's stem: every node it begins"),
    pytest.param(("explain", "nats", "-n", "data"), "pod data/nats not found in the snapshot; did you mean "
                                                    "data/nats-0, data/nats-1, data/nats-2 (or statefulset/nats)?",
                 id="a StatefulSet's name"),
])
def test_close_names_are_the_close_ones(cli: Run, args: tuple[str, ...], error: str) -> None:
    r = cli(*args, "--snapshot", "demo")
    assert (r.exit_code, r.stderr) == (2, f"error: {error}\n")


def test_a_manifest_given_as_the_snapshot_suggests_f(cli: Run, tmp_path: Path) -> None:
    web = tmp_path / "web.yaml"
    web.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"
                   "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
                   "    spec: {containers: [{name: web, image: nginx}]}\n")
    r = cli("plan", "--snapshot", str(web))
    assert (r.exit_code, r.stderr) == (2, f"error: snapshot {web} has no nodes, only a Deployment (default/web): is "
                                          f"it a manifest? -f names the manifests of workloads to plan for (kresched "
                                          f"plan -f {web}, with --snapshot for the cluster's state, or none for the "
                                          "cluster itself)\n")
    nodeless = write(tmp_path, [], [make_pod("a", node="gone")])
    r = cli("plan", "--snapshot", nodeless)
    assert r.stderr == (f"error: snapshot {nodeless} has no nodes (1 pod): a plan needs the nodes too, e.g. kubectl "
                        "get nodes,pods,pdb,priorityclasses,namespaces -A -o yaml\n")


# -- the lost-node example, and the README's preempt block -----------------------------------------------


def _script(name: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def test_the_lost_node_example_is_what_its_script_writes() -> None:
    assert _script("make_lost_node").main(["--check"]) == 0


def test_the_lost_node_example_tells_every_fate_the_guide_names(cli: Run) -> None:
    node = json.loads(cli("explain", "node/worker-c2", "--snapshot", LOST, "-o", "json").stdout)
    assert (node["lost"], node["ready"]) == (True, "Unknown")
    def fate(stem: str) -> tuple[str, bool]:
        (p,) = [p for p in node["pods"] if p["pod"].startswith(stem)]
        return p["outcome"], p["comesBack"]

    assert fate("data/postgres-1") == ("recreated", False)  # its StatefulSet waits for the old pod to be gone
    assert fate("default/debug-shell") == ("gone", False)
    assert fate("shop/frontend-") == ("replaced", True)
    assert fate("shop/uploads-") == ("replaced", False)  # its ReadWriteOnce volume stays attached to the lost node
    assert fate("kube-system/kube-proxy-") == ("stays", True)
    # Its own toleration: evicted before the others.
    first = min(node["pods"], key=lambda p: p["evictedAt"] or "~")
    assert first["pod"].startswith("ml/feature-server-")
    guide = (ROOT / "docs" / "guide" / "lost-node.md").read_text()
    runnable = [ln for ln in guide.splitlines() if ln.startswith("kresched ") and f"--snapshot {LOST}" in ln]
    assert {ln.split()[1] for ln in runnable} == {"explain", "drain"}
    assert any("--out-of-service" in ln for ln in runnable)


def test_the_readmes_preempt_block_shows_the_plan_it_prints_first() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- output of: kresched preempt ", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    lines = block.splitlines()
    assert lines[:3] == [CRITICAL, "  priority 2000000000 (system-cluster-critical), requests cpu 500m, memory 1Gi",
                         "EVICT on worker-c1 · tier 1 · reservation taint: yes"]
    assert lines.index("· (dry run) the plan holds: node worker-c1, 1 victim") > 3


# -- a terminating pod, by its controller's kind ---------------------------------------------------------


def test_a_terminating_pod_is_told_as_its_controller_replaces_it(cli: Run, tmp_path: Path) -> None:
    gone = "2026-01-02T00:00:00Z"
    source = write(tmp_path, [make_node("node-a"), make_node("node-b")], [
        make_pod("db-0", "shop", node="node-a", cpu="1", owner="StatefulSet/db", deletion_timestamp=gone),
        make_pod("web-1", "shop", node="node-a", cpu="1", owner="ReplicaSet/web-7d9", deletion_timestamp=gone),
        make_pod("job-x", "shop", node="node-a", cpu="1", owner="Job/job", deletion_timestamp=gone),
    ])
    table = flat(cli("drain", "node-a", "--dry-run", "--snapshot", source, width=200).stdout)
    assert "replacement exists" not in table
    assert "shop/db-0 - allowed node-b already terminating: its StatefulSet makes it again, under the same name, " \
           "only once it is gone" in table
    assert "shop/web-1 - allowed - already terminating: its ReplicaSet has made its replacement already (a " \
           "terminating pod no longer counts)" in table
    assert "already terminating: its Job replaces it at once (podReplacementPolicy TerminatingOrFailed" in table
    assert "! already terminating" not in table  # said once
    evict = {e["pod"]: e["landsOn"] for e in drained(cli("drain", "node-a", "--dry-run", "--snapshot", source,
                                                         "-o", "json").stdout)["evict"]}
    # Only the StatefulSet's pod is placed: the others' replacements exist already.
    assert evict == {"shop/db-0": "node-b", "shop/job-x": None, "shop/web-1": None}


# -- the README on PyPI ------------------------------------------------------------------------------------


def test_the_long_description_is_the_readme_with_links_into_the_repository_at_this_version() -> None:
    make = _script("make_long_description")
    assert make.main(["--check"]) == 0
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["readme"] == "README.pypi.md"
    repo = pyproject["project"]["urls"]["Repository"]
    krew = yaml.safe_load((ROOT / "plugins" / "krew" / "kresched.yaml").read_text())
    assert krew["spec"]["homepage"] == repo
    from kresched import __version__

    text = (ROOT / "README.pypi.md").read_text()
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    assert targets
    assert all(re.match(r"https?://", t) for t in targets), "a relative link left"
    ours = [t for t in targets if t.startswith(repo)]
    assert len(ours) == len(re.findall(r"\]\((?!https?:)[^)\s]+\)", (ROOT / "README.md").read_text()))
    for t in ours:
        path = t.removeprefix(f"{repo}/blob/v{__version__}/").partition("#")[0]
        assert (ROOT / path).exists(), t
    # Nothing but the links differs from the README.
    assert re.sub(r"\]\([^)]*\)", "]()", text.split("\n", 1)[1]) == \
        re.sub(r"\]\([^)]*\)", "]()", (ROOT / "README.md").read_text())


def test_the_long_description_rewrites_relative_links_only() -> None:
    make = _script("make_long_description")
    base = "https://example.com/r/blob/v1/"
    assert make.long_description("[a](docs/x.md#y) [b](https://k8s.io) [c](#set-up) [d](mailto:x@y)", base) == \
        make._NOTE + f"[a]({base}docs/x.md#y) [b](https://k8s.io) [c]({base}README.md#set-up) [d](mailto:x@y)"


# -- extenders: the objects as the API server served them -------------------------------------------------


def _config(url: str, **fields: object) -> dict[str, Any]:
    ext = {"urlPrefix": url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "preemptVerb": "preempt",
           "weight": 1, **fields}
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "extenders": [ext]}


def _served_cluster(tmp_path: Path) -> str:
    """A `kubectl get -o json` List whose pods and nodes carry what kresched does not read (a
    container's command and env, the pod's IP, managedFields, the node's nodeInfo and images)."""
    items: list[dict[str, Any]] = []
    for name in ("node-a", "node-b", "node-c"):
        items.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}, "uid": f"uid-{name}",
                         "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
            "spec": {"providerID": f"aws:///eu-west-1a/i-{name}"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}],
                       "nodeInfo": {"kubeletVersion": "v1.36.2", "machineID": f"m-{name}"},
                       "images": [{"names": ["ghcr.io/acme/web:1"], "sizeBytes": 1000}]}})

    def pod(name: str, node: str | None, cpu: str, priority: int, owner: str | None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "namespace": "shop", "uid": f"uid-{name}",
                                "resourceVersion": "42", "creationTimestamp": "2026-01-01T00:00:00Z",
                                "labels": {"app": name}, "managedFields": [{"manager": "kubectl"}]}
        if owner:
            meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                        "uid": f"uid-{owner}", "controller": True}]
        spec: dict[str, Any] = {"priority": priority, "containers": [{
            "name": "main", "image": "ghcr.io/acme/web:1", "command": ["/web", "--port=8080"],
            "env": [{"name": "MODE", "value": "fast"}], "resources": {"requests": {"cpu": cpu}}}]}
        status: dict[str, Any] = {"phase": "Pending"}
        if node:
            spec["nodeName"] = node
            status = {"phase": "Running", "podIP": "10.244.0.7", "hostIP": "10.0.0.1",
                      "conditions": [{"type": "Ready", "status": "True"}]}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}

    items += [pod("web-1", "node-a", "3", 0, "web-7d9"), pod("p", None, "2", 1000, None)]
    path = tmp_path / "served.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


@pytest.fixture
def ext() -> Iterator[FakeExtender]:
    with running_extender() as server:
        yield server


def test_extenders_are_sent_the_pods_and_nodes_as_served_not_as_kresched_models_them(cli: Run, ext: FakeExtender,
                                                                                     tmp_path: Path) -> None:
    cfg = tmp_path / "sched.json"
    cfg.write_text(json.dumps(_config(ext.url)))
    res = cli("plan", "shop/p", "--snapshot", _served_cluster(tmp_path), "--scheduler-config", str(cfg), "-o", "json")
    assert res.exit_code == 0, res.stderr
    verb, body = ext.requests[0]
    assert verb == "filter"
    sent = body["Pod"]
    container = sent["spec"]["containers"][0]
    assert (container["command"], container["env"]) == (["/web", "--port=8080"], [{"name": "MODE", "value": "fast"}])
    # As the scheduler's informer holds it: no kind nor apiVersion, and a pod's managedFields dropped.
    assert ("kind" in sent, "apiVersion" in sent, "managedFields" in sent["metadata"]) == (False, False, False)
    assert sent["metadata"]["resourceVersion"] == "42"
    nodes = {n["metadata"]["name"]: n for n in body["Nodes"]["items"]}
    assert nodes["node-b"]["status"]["nodeInfo"] == {"kubeletVersion": "v1.36.2", "machineID": "m-node-b"}
    assert nodes["node-b"]["spec"]["providerID"] == "aws:///eu-west-1a/i-node-b"
    assert nodes["node-b"]["metadata"]["managedFields"] == [{"manager": "kubelet", "operation": "Update"}]
    assert "kind" not in nodes["node-b"]


def test_a_replacement_is_sent_as_its_controller_would_create_it_from_the_served_pod(cli: Run, ext: FakeExtender,
                                                                                    tmp_path: Path) -> None:
    cfg = tmp_path / "sched.json"
    cfg.write_text(json.dumps(_config(ext.url)))
    res = cli("drain", "node-a", "--dry-run", "--snapshot", _served_cluster(tmp_path), "--scheduler-config", str(cfg),
              "-o", "json")
    assert drained(res.stdout)["evict"][0]["landsOn"] in ("node-b", "node-c"), res.stderr
    sent = next(b["Pod"] for v, b in ext.requests if v == "filter")
    assert sent["metadata"]["name"].startswith("web-1")
    assert sent["spec"]["containers"][0]["command"] == ["/web", "--port=8080"]
    assert "nodeName" not in sent["spec"]  # not bound yet
    # What the API server sets when it creates the pod is not known yet, nor anything of its status.
    assert not {"uid", "resourceVersion", "creationTimestamp", "managedFields"} & set(sent["metadata"])
    assert "podIP" not in sent["status"]
    assert sent["metadata"]["ownerReferences"][0]["name"] == "web-7d9"


def test_live_the_extender_gets_the_objects_the_api_server_served(cli: Run, ext: FakeExtender, fake_api: Any,
                                                                  fake_kubeconfig: Path, tmp_path: Path) -> None:
    fake_api.load(_served_cluster(tmp_path))  # served back with every field, over real HTTP, page by page
    cfg = tmp_path / "sched.json"
    cfg.write_text(json.dumps(_config(ext.url)))
    res = cli("explain", "shop/p", "--kubeconfig", str(fake_kubeconfig), "--scheduler-config", str(cfg), "-o", "json")
    assert res.exit_code == 0, res.stderr
    _, body = ext.requests[0]
    assert body["Pod"]["spec"]["containers"][0]["env"] == [{"name": "MODE", "value": "fast"}]
    # (the fake API server's own resourceVersion: the object as it served it, not as the file had it)
    assert body["Pod"]["metadata"]["resourceVersion"] == fake_api.store.get(PODS, "shop", "p")["metadata"][
        "resourceVersion"]
    # (node-a, full, is not feasible: not sent)
    assert {n["metadata"]["name"]: n["status"]["nodeInfo"]["machineID"] for n in body["Nodes"]["items"]} == {
        "node-b": "m-node-b", "node-c": "m-node-c"}


def test_without_a_called_extender_nothing_more_is_kept(cli: Run, tmp_path: Path) -> None:
    cluster = _served_cluster(tmp_path)
    assert cli("plan", "shop/p", "--snapshot", cluster, "-o", "json").exit_code == 0
    assert served.recording() is None
    cfg = tmp_path / "sched.json"
    cfg.write_text(json.dumps(_config(f"http://127.0.0.1:{closed_port()}/scheduler")))
    # Offline, an extender nobody answers at is not called: nothing to send, nothing kept.
    assert cli("plan", "shop/p", "--snapshot", cluster, "--scheduler-config", str(cfg), "-o", "json").exit_code == 0
    assert served.recording() is None


def test_while_recording_every_input_form_keeps_its_pods_and_nodes(tmp_path: Path) -> None:
    from kresched.sources.decode import decode_json, decode_object
    from kresched.sources.snapshot import load_snapshot

    store = served.ServedObjects()
    served.record_into(store)
    try:
        cluster = _served_cluster(tmp_path)
        state = load_snapshot(cluster)
        assert len(store) == 5  # 3 nodes, 2 pods
        web = state.pod("shop/web-1")
        assert json.loads(bytes(store.pod(web)))["spec"]["containers"][0]["command"] == ["/web", "--port=8080"]
        # YAML, and an API list whose items carry no kind, and a single GET: the same.
        doc = json.loads(Path(cluster).read_text())
        as_yaml = tmp_path / "served.yaml"
        as_yaml.write_text(yaml.safe_dump(doc))
        again = load_snapshot(str(as_yaml))
        assert json.loads(bytes(store.node(again.node_by_name["node-c"])))["status"]["nodeInfo"]["machineID"] == \
            "m-node-c"
        pods = [dict(i) for i in doc["items"] if i["kind"] == "Pod"]
        for p in pods:
            del p["kind"]
        listed = decode_json(json.dumps({"kind": "PodList", "items": pods}).encode(), "list", item_kind="Pod")
        assert json.loads(bytes(store.pod(listed.pods[0])))["status"]["podIP"] == "10.244.0.7"
        one = decode_object(json.dumps(pods[1] | {"kind": "Pod"}).encode(), "Pod", "get")
        assert json.loads(bytes(store.pod(one)))["metadata"]["name"] == "p"
        assert store.pod(make_pod("made-up")) is None  # never served: the caller sends its model
    finally:
        served.record_into(None)
    state = load_snapshot(cluster)
    assert store.pod(state.pod("shop/web-1")) is not None  # the store keeps what it had ...
    assert len(store) == 5  # ... and nothing more was recorded once recording stopped


def test_recording_costs_nothing_when_off(tmp_path: Path) -> None:
    """The memory rule: without extenders, loading keeps no bytes beyond the models (measured with
    tracemalloc around the same load, recording off and on)."""
    import tracemalloc

    from kresched.sources.snapshot import load_snapshot

    cluster = _served_cluster(tmp_path)
    load_snapshot(cluster)  # warm: imports and decoders

    def peak(store: served.ServedObjects | None) -> int:
        served.record_into(store)
        try:
            tracemalloc.start()
            kept = load_snapshot(cluster)
            size = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            assert kept.pods
            return size
        finally:
            served.record_into(None)

    store = served.ServedObjects()
    assert peak(store) > peak(None)
    assert len(store) == 5
