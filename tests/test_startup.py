"""A snapshot run starts without the live path: no Kubernetes client, no urllib3, no HTTP stack.

Each command runs in a fresh interpreter (the test process has long since imported everything),
through the same entry point as the `kresched` script, and reports what it imported at exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clirun import run_cli

#: Only the live path (`sources.live`, `.calls`, `.connection`, `execute.kube`) needs these.
LIVE_ONLY = ("kubernetes", "urllib3", "tenacity", "http.client", "ssl", "kresched.sources.live",
             "kresched.sources.calls", "kresched.sources.connection", "kresched.execute.kube")

#: `main()` leaves with `os._exit` once its output is flushed; here that raises instead, so that
#: the modules imported by then can be read.
_RUN = """
import json, os, sys
out, sys.argv = sys.argv[1], ["kresched", *sys.argv[2:]]
os._exit = sys.exit
from kresched.cli import main
try:
    main()
except SystemExit:
    pass
with open(out, "w") as f:
    json.dump(sorted(sys.modules), f)
"""


#: A snapshot run of each verb that only computes, with machine output.
JSON_RUNS = [
    ["plan", "--snapshot", "demo", "-o", "json"],
    ["explain", "metrics-server-5p9lfwkgvh-mkd72", "-n", "kube-system", "--snapshot", "demo", "-o", "json"],
    ["drain", "worker-b3", "--snapshot", "demo", "--ignore-daemonsets", "--dry-run", "-o", "json"],
    ["rebalance", "--snapshot", "demo", "--dry-run", "-o", "json"],
]


def _imported(args: list[str], tmp_path: Path) -> list[str]:
    """The modules `kresched ARGS` imported, run as the script runs it."""
    out = tmp_path / "modules.json"
    run = subprocess.run([sys.executable, "-c", _RUN, str(out), *args], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip(), "the command printed nothing"
    return json.loads(out.read_text())


def _of(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(name + ".") for name in packages)]


@pytest.mark.parametrize("args", JSON_RUNS, ids=lambda a: a[0])
def test_a_snapshot_run_never_imports_the_kubernetes_client_or_the_http_stack(args: list[str],
                                                                              tmp_path: Path) -> None:
    loaded = _of(_imported(args, tmp_path), LIVE_ONLY)
    assert not loaded, f"kresched {' '.join(args)} imported {loaded[:10]}"


@pytest.mark.parametrize("args", JSON_RUNS, ids=lambda a: a[0])
def test_a_json_run_never_imports_rich(args: list[str], tmp_path: Path) -> None:
    # rich draws tables and status lines: a script's `-o json` starts without it (a fifth of
    # kresched's own start-up).
    loaded = _of(_imported(args, tmp_path), ("rich",))
    assert not loaded, f"kresched {' '.join(args)} imported {loaded[:10]}"


def test_the_check_sees_rich_where_a_table_is_drawn(tmp_path: Path) -> None:
    assert _of(_imported(["plan", "--snapshot", "demo"], tmp_path), ("rich",))


def test_a_json_run_never_imports_pyyaml(tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.json"
    with snapshot.open("w") as f:
        subprocess.run([sys.executable, "-m", "kresched", "snapshot", "--snapshot", "demo", "-o", "json"], stdout=f,
                       check=True, timeout=120)
    out = tmp_path / "modules.json"
    run = subprocess.run([sys.executable, "-c", _RUN, str(out), "plan", "--snapshot", str(snapshot), "-o", "json"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["plans"]
    modules = json.loads(out.read_text())
    assert "yaml" not in modules


@pytest.mark.parametrize("args", [
    ["plan", "--snapshot", "demo"],
    ["drain", "worker-b3", "--snapshot", "demo", "--ignore-daemonsets", "--dry-run"],
    ["plan", "--snapshot", "demo", "-o", "yaml"],
], ids=lambda a: " ".join(a[:1] + a[-2:]))
def test_a_process_says_all_it_says_in_process_though_it_leaves_without_teardown(
        args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # `main()` flushes its streams and leaves with `os._exit` (the loaded cluster is not freed
    # object by object): nothing it wrote may be lost on the way, tables included, nor its exit code.
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE")}
    run = subprocess.run([sys.executable, "-m", "kresched", *args], capture_output=True, text=True, timeout=120,
                         env={**env, "COLUMNS": "120"})
    inproc = run_cli(monkeypatch, *args, env={"COLUMNS": "120"})
    assert (run.returncode, run.stdout, run.stderr) == (inproc.exit_code, inproc.stdout, inproc.stderr)
    assert len(run.stdout.splitlines()) > 5
