"""Signals against a real `python -m kresched preempt` process making room for a gang: Ctrl-C and
SIGTERM remove every node's reservation on the way out (exit 130); SIGKILL cannot, and the next
`kresched untaint` keeps the gang's reservations while a member is Pending and cleans them once
none is.

Each test starts a Python process that imports the kubernetes client (about 2 s): marked slow."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kresched.errors import ExitCode
from tests.execute.conftest import kresched_annotations, pod, taints
from tests.execute.test_gang_preempt import NODES, OURS, REF, seed_gang
from tests.execute.test_signals import finish, wait_for
from tests.fakeapi import PODS, FakeApiServer
from tests.fakeapi.controllers import NEVER

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def waiting_gang(fake_api: FakeApiServer, fake_kubeconfig: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`kresched preempt` of the gang in a subprocess, stopped in the wait: every node reserved,
    every victim evicted, and a scheduler that never binds the members."""
    seed_gang(fake_api)
    for i in range(3):
        fake_api.scheduler.set(f"ml/train-{i}", NEVER)
    fake_api.controllers.start()
    env = {**os.environ, "KRESCHED_BACKOFF_SCALE": "0.01", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kresched", "preempt", "podgroup/train", "-n", "ml", "--yes", "-o", "json",
         "--timeout", "60s", "--kubeconfig", str(fake_kubeconfig)],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: (all(OURS in taints(fake_api, n) for n in NODES)
                          and all(pod(fake_api, f"batch/low-{n[-1]}") is None for n in NODES)
                          and any(r.query.get("watch") for r in fake_api.requests)) or proc.poll() is not None,
                 seconds=60)  # a busy machine starts the process slowly
        assert proc.poll() is None, proc.communicate()
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_gang_run_removes_every_reservation_and_exits_130(waiting_gang, fake_api, signum):
    assert {kresched_annotations(fake_api, n)["kresched.io/reserved-for"] for n in NODES} == {REF}
    waiting_gang.send_signal(signum)
    code, lines, err = finish(waiting_gang)
    assert code == ExitCode.INTERRUPTED, err
    actions = [line["action"] for line in lines]
    assert actions[-5:] == ["released", "released", "released", "interrupted", "summary"]
    summary = lines[-1]
    assert summary["message"] == "PodGroup ml/train not bound: interrupted after evicting 3 pods"
    assert sorted(summary["released"]) == NODES
    assert summary["reservationsRemoved"] is True
    assert all(taints(fake_api, n) == [] and kresched_annotations(fake_api, n) == {} for n in NODES)


def test_a_killed_gang_run_leaves_its_reservations_for_untaint_to_clean(waiting_gang, fake_api, cli):
    waiting_gang.kill()
    code, lines, _ = finish(waiting_gang)
    assert code == -signal.SIGKILL
    assert "released" not in [line["action"] for line in lines]
    # Every member still Pending and the reservations fresh: untaint keeps them...
    kept = cli("untaint", "-o", "json")
    assert kept.code == ExitCode.OK
    assert (kept.summary["removed"], kept.summary["kept"]) == ([], NODES)
    assert kept.events("kept")[0]["reason"].startswith(f"{REF}: 3 of its members still Pending; reserved ")
    # ...while any member is Pending; once all are bound (here, by hand) they are stale and removed.
    for i, n in enumerate(NODES[:2]):
        fake_api.store.mutate(PODS, "ml", f"train-{i}", lambda p, n=n: p["spec"].update(nodeName=n))
    assert cli("untaint", "-o", "json").summary["removed"] == []
    fake_api.store.mutate(PODS, "ml", "train-2", lambda p: p["spec"].update(nodeName="node-c"))
    cleaned = cli("untaint", "-o", "json")
    assert cleaned.summary["removed"] == NODES
    assert cleaned.events("stale")[0]["reason"] == f"the members of {REF} are bound"
    assert all(taints(fake_api, n) == [] and kresched_annotations(fake_api, n) == {} for n in NODES)
