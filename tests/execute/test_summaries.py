"""How an acting command ends (issue 31), against the fake API server over real HTTP: one closing
line in kubectl's manner, only the categories that are not empty, the cluster named (context and
server) in the prompt and the summary, an interrupted run's summary as accurate as a finished
one's, and under -o json|yaml the `summary` document always last."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kresched.cli import app
from kresched.cli.common import ENV
from kresched.errors import ExitCode
from tests.builders import make_namespace, make_node, make_pod, make_state
from tests.clirun import DURATION
from tests.execute.conftest import PENDING, VICTIM, Cli, seed_preemption
from tests.fakeapi import FakeApiServer

ROOT = Path(__file__).resolve().parents[2]
#: Summary categories that say nothing when they are empty (issue 31: a dump of `blocked: none`).
EMPTY_CATEGORIES = ("blocked:", "failed:", "not started:", "still terminating:", "already gone:",
                    "refused by a PodDisruptionBudget:")


def web(n: int, grace: int = 30) -> list:
    return [make_pod(f"web-{i}", "shop", node="node-a", cpu="1", labels={"app": "web"}, owner="ReplicaSet/web-7d9",
                     grace=grace) for i in range(n)]


def seed_drain(fake: FakeApiServer, pods: list) -> None:
    fake.load(make_state([make_node("node-a", cpu="8"), make_node("node-b", cpu="8")], pods, [], [],
                         [make_namespace("shop")]))


def test_a_finished_drain_ends_with_kubectls_line_and_lists_no_empty_category(fake_api: FakeApiServer,
                                                                                cli: Cli) -> None:
    seed_drain(fake_api, web(2))
    run = cli("drain", "node-a", "--yes")
    assert run.code == ExitCode.OK, run.stderr
    lines = run.stdout.splitlines()
    assert re.fullmatch(rf"node/node-a drained in {DURATION}: 2 pods evicted", lines[-1])
    assert lines[-2] == f'cluster: context "{fake_api.context}" ({fake_api.url})'
    assert not any(line.startswith(EMPTY_CATEGORIES) for line in lines)
    as_json = cli("drain", "node-a", "--yes", "-o", "json")
    assert as_json.lines[-1]["action"] == "summary"
    assert as_json.summary["cluster"] == {"context": fake_api.context, "server": fake_api.url}
    assert re.fullmatch(rf"node/node-a drained in {DURATION}: nothing to evict", as_json.summary["message"])


def test_an_unfinished_drain_lists_what_needs_a_look_then_its_line_and_what_stays_behind(fake_api: FakeApiServer,
                                                                                         cli: Cli) -> None:
    seed_drain(fake_api, web(1))
    fake_api.pods.termination = "graceful"  # and the fake's clock does not move: web-0 never goes
    run = cli("drain", "node-a", "--yes", "--timeout", "500ms")
    assert run.code == ExitCode.PARTIAL
    lines = run.stdout.splitlines()
    assert lines[-2] == "still terminating: shop/web-0"
    assert re.fullmatch(r"node/node-a not drained \(after [0-9.]+s\): 1 pod evicted, 1 still terminating", lines[-1])
    # What stays behind, once, where errors go.
    assert run.stderr == "✗ the drain did not finish; node-a stays cordoned (kubectl uncordon node-a to undo)\n"
    as_json = cli("drain", "node-a", "--yes", "--timeout", "500ms", "-o", "json")
    assert [line["action"] for line in as_json.lines][-2:] == ["incomplete", "summary"]


@pytest.mark.slow
def test_a_drain_interrupted_while_pods_terminate_says_which_are_still_terminating(fake_api: FakeApiServer,
                                                                                    fake_kubeconfig: Path) -> None:
    seed_drain(fake_api, web(4))
    fake_api.pods.termination = "graceful"  # the four evicted pods keep terminating
    env = {**os.environ, "KRESCHED_BACKOFF_SCALE": "0.01", "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kresched", "drain", "node-a", "--yes", "--kubeconfig", str(fake_kubeconfig)],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while sum(r.status == 201 for r in fake_api.requests if r.path.endswith("/eviction")) < 4:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(0.3)  # the drain now waits for them to go
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # (a bound on a hang, generous on a loaded machine)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == ExitCode.INTERRUPTED, err.decode()
    lines = out.decode().splitlines()
    assert lines[-2] == "still terminating: shop/web-0, shop/web-1, shop/web-2, shop/web-3"
    assert lines[-1] == "node/node-a not drained (interrupted): 4 pods evicted, 4 still terminating"
    assert "node-a stays cordoned (kubectl uncordon node-a to undo)" in err.decode()


def test_preempt_ends_with_where_the_pod_was_bound_and_on_which_cluster(cluster: FakeApiServer, cli: Cli) -> None:
    run = cli("preempt", PENDING, "--yes", "-o", "json", "--timeout", "10s")
    assert run.code == ExitCode.OK, run.stderr
    summary = run.lines[-1]
    assert summary["action"] == "summary"
    assert (summary["reserved"], summary["reservationRemoved"]) == (True, True)
    assert summary["cluster"] == {"context": cluster.context, "server": cluster.url}
    assert re.fullmatch(rf"pod {PENDING} bound to node-a in [0-9.]+s after evicting 1 pod", summary["message"])


def test_a_dry_run_does_not_claim_it_removed_a_reservation_it_never_made(cluster: FakeApiServer, cli: Cli) -> None:
    for spelling in ("--dry-run", "--dry-run=server"):
        run = cli("preempt", PENDING, "--yes", "-o", "json", spelling)
        assert run.code == ExitCode.OK, run.stderr
        summary = run.lines[-1]
        assert (summary["reserved"], summary["reservationRemoved"]) == (False, None)
        assert summary["evicted"] == [VICTIM]
        mode = "dry run" if spelling == "--dry-run" else "server dry run"
        assert summary["message"] == f"pod {PENDING} would be bound to node-a after evicting 1 pod ({mode})"
    table = cli("preempt", PENDING, "--yes", "--dry-run").stdout
    assert "reservation removed" not in table


@pytest.mark.parametrize(("budget", "last"), [
    pytest.param(0, f"pod {PENDING} not helped: evicting would violate a PodDisruptionBudget (--allow-pdb-violation "
                 "to go on); nothing was evicted", id="a plan a PDB blocks"),
])
def test_a_preempt_that_does_nothing_still_ends_with_its_summary(fake_api: FakeApiServer, cli: Cli, budget: int,
                                                                 last: str) -> None:
    seed_preemption(fake_api, budget=budget)
    run = cli("preempt", PENDING, "--yes", "-o", "json")
    assert run.code == ExitCode.INFEASIBLE
    assert [line["action"] for line in run.lines] == ["plan", "blocked", "summary"]
    assert run.summary["message"] == last
    assert cli("preempt", PENDING, "--yes").stdout.splitlines()[-1] == last


def test_the_confirmation_names_the_cluster_it_would_change(fake_api: FakeApiServer, fake_kubeconfig: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    seed_drain(fake_api, web(1))

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    monkeypatch.setattr(ENV, "stdout", out)
    monkeypatch.setattr(ENV, "stderr", err)
    monkeypatch.setattr(ENV, "stdin", Terminal())
    for cached in ("out", "err"):
        ENV.__dict__.pop(cached, None)
    result = CliRunner().invoke(app, ["drain", "node-a", "--kubeconfig", str(fake_kubeconfig)], input="n\n",
                                catch_exceptions=False)
    for cached in ("out", "err"):
        ENV.__dict__.pop(cached, None)
    out.flush()
    assert result.exit_code == ExitCode.OK
    assert f'Cordon node-a and evict 1 pod in context "{fake_api.context}" ({fake_api.url})? [y/N]' in result.output
    assert out.buffer.getvalue().decode().splitlines()[-1] == "node/node-a not drained: not confirmed: nothing was " \
                                                              "changed"
    assert not [r for r in fake_api.requests if r.method != "GET"]


def test_rebalance_with_nothing_to_move_ends_with_its_summary(fake_api: FakeApiServer, cli: Cli) -> None:
    seed_drain(fake_api, web(1))
    run = cli("rebalance", "--yes", "-o", "json")
    assert run.code == ExitCode.OK, run.stderr
    assert [line["action"] for line in run.lines] == ["plan", "summary"]
    assert run.summary["message"] == "nothing to move"
    assert run.summary["cluster"] == {"context": fake_api.context, "server": fake_api.url}

