"""Signals against a real `python -m kresched preempt` process: Ctrl-C and SIGTERM remove the
reservation on the way out (exit 130); SIGKILL cannot, and the next `kresched untaint` cleans up.

Each test starts a Python process that imports the kubernetes client (about 2 s): marked slow."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest

from kresched.errors import ExitCode
from tests.execute.conftest import PENDING, RESERVED_FOR, kresched_annotations, pod, seed_preemption, taints
from tests.fakeapi import PODS, FakeApiServer
from tests.fakeapi.controllers import NEVER

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
OURS = {"key": "CriticalAddonsOnly", "value": "kresched", "effect": "NoSchedule"}


def wait_for(condition: Callable[[], bool], seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the condition")
        time.sleep(0.01)


@pytest.fixture
def waiting_run(fake_api: FakeApiServer, fake_kubeconfig: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`kresched preempt` in a subprocess, stopped in the wait: node-a reserved, web-1 evicted, and a
    scheduler that never binds the pod."""
    seed_preemption(fake_api)
    fake_api.scheduler.set(PENDING, NEVER)
    fake_api.controllers.start()
    env = {**os.environ, "KRESCHED_BACKOFF_SCALE": "0.01", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kresched", "preempt", "--pod", PENDING, "--yes", "-o", "json", "--timeout", "60s",
         "--kubeconfig", str(fake_kubeconfig)],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: (OURS in taints(fake_api) and pod(fake_api, "shop/web-1") is None
                 and any(r.query.get("watch") for r in fake_api.requests)) or proc.poll() is not None)
        assert proc.poll() is None, proc.communicate()
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def finish(proc: subprocess.Popen[bytes]) -> tuple[int, list[dict], str]:
    out, err = proc.communicate(timeout=60)  # (a bound on a hang, generous on a loaded machine)
    lines = [msgspec.json.decode(line) for line in out.splitlines() if line.startswith(b"{")]
    return proc.returncode, lines, err.decode()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_removes_its_reservation_and_exits_130(waiting_run, fake_api, signum):
    assert kresched_annotations(fake_api)[RESERVED_FOR] == PENDING
    waiting_run.send_signal(signum)
    code, lines, err = finish(waiting_run)
    assert code == ExitCode.INTERRUPTED, err
    actions = [line["action"] for line in lines]
    assert actions[-3:] == ["released", "interrupted", "summary"]
    assert lines[-1]["message"].startswith(f"pod {PENDING} not bound: interrupted after evicting 1 pod")
    assert lines[-1]["reservationRemoved"] is True
    assert taints(fake_api) == []
    assert kresched_annotations(fake_api) == {}


def test_a_killed_run_leaves_its_reservation_for_untaint_to_clean(waiting_run, fake_api, cli):
    waiting_run.kill()
    code, lines, _ = finish(waiting_run)
    assert code == -signal.SIGKILL
    assert "released" not in [line["action"] for line in lines]
    assert taints(fake_api) == [OURS]
    # The pod is still Pending and the reservation fresh: the next untaint keeps it...
    kept = cli("untaint", "-o", "json")
    assert kept.code == ExitCode.OK
    assert (kept.summary["removed"], kept.summary["kept"]) == ([], ["node-a"])
    assert taints(fake_api) == [OURS]
    # ...until the pod is bound (here, by hand, to node-b): then it is stale and removed.
    fake_api.store.mutate(PODS, "shop", "critical", lambda p: p["spec"].update(nodeName="node-b"))
    cleaned = cli("untaint", "-o", "json")
    assert cleaned.code == ExitCode.OK
    assert cleaned.summary["removed"] == ["node-a"]
    assert cleaned.events("stale")[0]["reason"] == "shop/critical is bound to node-b"
    assert taints(fake_api) == []
    assert kresched_annotations(fake_api) == {}
