"""A hostile API server (tests/fakeapi/hostile.py): every behaviour ends in one `error:` line on
stderr naming the server and what it did, exit 5, within the deadline the message states — never a
hang, never a traceback. Deadlines are made small through the environment, as an operator would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings

import pytest
from urllib3.exceptions import InsecureRequestWarning

from kresched.cli import plan as plan_cli
from kresched.errors import ExitCode
from kresched.sources.snapshot import load_snapshot
from tests.clirun import run_cli
from tests.fakeapi.hostile import HostileServer

#: What these tests give kresched: 1 s per request, 3 s per list, no backoff pauses.
FAST = {"KRESCHED_REQUEST_TIMEOUT": "1", "KRESCHED_LIST_TIMEOUT": "3", "KRESCHED_BACKOFF_SCALE": "0"}


def run(kubeconfig, *args: str, env: dict[str, str] | None = None, timeout: float = 30):
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kresched", *args, "--kubeconfig", str(kubeconfig)],
                          capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, **FAST, **(env or {})})
    return proc.returncode, proc.stderr.decode(errors="replace"), time.monotonic() - started


def error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    return lines[0]


@pytest.mark.parametrize(("behaviour", "expected"), [
    ("silence", "error: cannot list namespaces at the cluster scope: the API server at {url} sent no complete "
                "answer within 1s (set KRESCHED_REQUEST_TIMEOUT or --request-timeout to wait longer)"),
    ("trickle", "error: cannot list namespaces at the cluster scope: the API server at {url} sent no complete "
                "answer within 1s (set KRESCHED_REQUEST_TIMEOUT or --request-timeout to wait longer)"),
    ("trickle-headers", "error: cannot list namespaces at the cluster scope: the API server at {url} sent no "
                        "complete answer within 1s (set KRESCHED_REQUEST_TIMEOUT or --request-timeout to wait "
                        "longer)"),
    ("loop", "error: cannot list namespaces at the cluster scope: the API server at {url} sent the same continue "
             "token again on page 2: the list would never end"),
    ("garbage", "error: cannot reach the API server at {url}: "),
    ("not-json", "error: {url}/api/v1/namespaces (page 1): the API server sent an unreadable list: "),
], ids=lambda v: v if v in ("silence", "trickle", "trickle-headers", "loop", "garbage", "not-json") else "")
def test_a_hostile_server_ends_in_one_error_line_within_the_deadline(tmp_path, behaviour, expected):
    with HostileServer(behaviour) as srv:
        code, stderr, seconds = run(srv.write_kubeconfig(tmp_path / "kubeconfig"), "plan", "-o", "json")
        url = srv.url
    assert code == ExitCode.CLUSTER_ACCESS, stderr
    assert error_line(stderr).startswith(expected.format(url=url))
    assert seconds < 20  # the deadlines are 1 s and 3 s; a hang would hit the subprocess timeout


def test_an_endless_answer_is_cut_at_the_size_limit_before_it_fills_memory(tmp_path):
    with HostileServer("huge-line") as srv:
        code, stderr, _ = run(srv.write_kubeconfig(tmp_path / "kubeconfig"), "plan",
                              env={"KRESCHED_REQUEST_TIMEOUT": "20", "KRESCHED_MAX_INPUT": "4Mi"})
        url = srv.url
    assert code == ExitCode.CLUSTER_ACCESS
    assert error_line(stderr) == (f"error: cannot list namespaces at the cluster scope: the API server at {url} sent "
                                  "more than 4 MiB in one answer (KRESCHED_MAX_INPUT raises the limit)")


def test_a_list_that_takes_longer_than_its_deadline_stops_there(tmp_path):
    # Each page comes quickly, but the pages never end and the token changes: the list deadline ends it.
    with HostileServer("trickle") as srv:
        code, stderr, _ = run(srv.write_kubeconfig(tmp_path / "kubeconfig"), "plan",
                              env={"KRESCHED_REQUEST_TIMEOUT": "5", "KRESCHED_LIST_TIMEOUT": "1"})
    assert code == ExitCode.CLUSTER_ACCESS
    assert error_line(stderr) == ("error: cannot list namespaces at the cluster scope: the list was not read within "
                                  "1s (stopped on page 1; set KRESCHED_LIST_TIMEOUT to allow longer)")


def test_a_hanging_exec_credential_plugin_is_stopped_after_its_timeout(tmp_path):
    plugin = tmp_path / "plugin.sh"
    plugin.write_text("#!/bin/sh\nsleep 60\n")
    plugin.chmod(0o755)
    kubeconfig = exec_kubeconfig(tmp_path, plugin)
    code, stderr, seconds = run(kubeconfig, "plan", env={"KRESCHED_EXEC_TIMEOUT": "1"})
    assert code == ExitCode.CLUSTER_ACCESS
    assert error_line(stderr) == (f'error: cannot get credentials for kubeconfig context "exec": exec credential '
                                  f"plugin `{plugin}` did not finish within 1s (raise KRESCHED_EXEC_TIMEOUT if it "
                                  "needs longer)")
    assert seconds < 20


def test_a_failing_exec_plugin_is_named_instead_of_the_network_and_the_client_prints_nothing(tmp_path):
    plugin = tmp_path / "plugin.sh"
    plugin.write_text("#!/bin/sh\necho 'token expired: run login' >&2\nexit 3\n")
    plugin.chmod(0o755)
    code, stderr, _ = run(exec_kubeconfig(tmp_path, plugin), "plan")
    assert code == ExitCode.CLUSTER_ACCESS
    assert error_line(stderr) == (f'error: cannot get credentials for kubeconfig context "exec": exec credential '
                                  f"plugin `{plugin}` failed with exit code 3: token expired: run login")


def exec_kubeconfig(tmp_path, plugin) -> os.PathLike:
    path = tmp_path / "kubeconfig"
    # A closed port on loopback: the plugin fails before any connection is tried.
    path.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:9"}}}}]
users: [{{name: u, user: {{exec: {{apiVersion: client.authentication.k8s.io/v1, command: "{plugin}",
  interactiveMode: Never}}}}}}]
contexts: [{{name: exec, context: {{cluster: c, user: u}}}}]
current-context: exec
""")
    return path


def test_library_warnings_are_one_line_of_kresched_and_insecure_tls_ones_are_silent(monkeypatch):
    def load_with_warnings(opts):
        warnings.warn(InsecureRequestWarning("Unverified HTTPS request is being made to host '127.0.0.1'. "
                                             "Adding certificate verification is strongly advised."), stacklevel=1)
        for _ in range(3):
            warnings.warn("this call is\ndeprecated", DeprecationWarning, stacklevel=1)
        return load_snapshot("demo")

    monkeypatch.setattr(plan_cli, "load_state", load_with_warnings)
    result = run_cli(monkeypatch, "plan", "-o", "json")
    assert result.exit_code == ExitCode.OK, result.stderr
    assert result.stderr.splitlines() == ["warning: this call is deprecated",
                                          "note: 1 other pending pod is not critical: --all-pending plans it too"]


def test_an_unreadable_request_timeout_is_a_usage_error(tmp_path):
    with HostileServer("silence") as srv:
        code, stderr, _ = run(srv.write_kubeconfig(tmp_path / "kubeconfig"), "plan",
                              env={"KRESCHED_REQUEST_TIMEOUT": "soon"})
    assert code == ExitCode.USAGE
    assert error_line(stderr) == "error: KRESCHED_REQUEST_TIMEOUT='soon': not a number of seconds above 0"
