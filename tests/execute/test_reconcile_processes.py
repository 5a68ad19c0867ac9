"""`kresched reconcile` as real processes (`python -m kresched`) against one fake API server: two
passes started together (the Lease lets exactly one work), SIGTERM mid-pass (reservation and Lease
released, exit 130), SIGKILL mid-pass (what it leaves, the next passes clean up).

The cluster is test_reconcile's without kube-system/legacy and shop/payments (tolerating the
reservation, either would take the room a pass frees on node-2 for node-agent while that one is
kept Pending); the scheduler never binds kube-system/node-agent (the first pod a pass helps)
until a test says so, which keeps a pass waiting after it reserved node-2 and evicted web-3; dns
comes next. Each process imports the kubernetes client (about 2 s): marked slow.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest

from kresched.errors import ExitCode
from tests.execute.conftest import RESERVED_AT, RESERVED_FOR, kresched_annotations, pod, taints
from tests.execute.test_reconcile import (
    LEASE_COLLECTION,
    LEASE_PATH,
    OURS,
    lease,
    no_reservations,
    pending_reasons,
    requests,
    rfc3339,
    seed_cluster,
)
from tests.execute.test_signals import wait_for
from tests.fakeapi import BIND, NEVER, NODES, PODS, FakeApiServer
from tests.fakeapi.store import LEASES

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FIRST = "kube-system/node-agent"


def start(kubeconfig: Path, name: str, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "KRESCHED_BACKOFF_SCALE": "0.01", "PYTHONPATH": str(ROOT), "POD_NAME": name}
    return subprocess.Popen(
        [sys.executable, "-m", "kresched", "reconcile", "-o", "json", "--deadline", "60s", "--kubeconfig",
         str(kubeconfig), *extra],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(proc: subprocess.Popen[bytes], timeout: float = 30) -> tuple[int, list[dict], str]:
    out, err = proc.communicate(timeout=timeout)
    lines = [msgspec.json.decode(line) for line in out.splitlines() if line.startswith(b"{")]
    return proc.returncode, lines, err.decode()


def waiting_for_first(fake: FakeApiServer) -> bool:
    """A pass reserved node-2 for node-agent, evicted web-3 and is watching node-agent."""
    return (OURS in taints(fake, "node-2") and pod(fake, "shop/web-3") is None
            and any(r.query.get("watch") for r in fake.requests))


@pytest.fixture
def cluster(fake_api: FakeApiServer) -> Iterator[FakeApiServer]:
    seed_cluster(fake_api)
    fake_api.store.delete(PODS, "kube-system", "legacy")
    fake_api.store.delete(PODS, "shop", "payments")
    fake_api.scheduler.set(FIRST, NEVER)
    fake_api.controllers.start()
    procs: list[subprocess.Popen[bytes]] = []
    fake_api.procs = procs  # type: ignore[attr-defined]
    yield fake_api
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.communicate(timeout=10)


def test_two_passes_started_together_one_works_and_the_other_says_the_lease_is_held(cluster, fake_kubeconfig):
    a, b = start(fake_kubeconfig, "kresched-a"), start(fake_kubeconfig, "kresched-b")
    cluster.procs += [a, b]
    # The loser ends at once; the winner is still waiting for node-agent's binding.
    wait_for(lambda: a.poll() is not None or b.poll() is not None, seconds=20)
    loser, winner = (a, b) if a.poll() is not None else (b, a)
    code, lines, err = finish(loser)
    assert code == ExitCode.OK, err
    [held] = [line for line in lines if line["action"] == "lock-held"]
    assert lines[-1]["action"] == "summary"
    assert lines[-1]["podsHelped"] == 0
    wait_for(lambda: waiting_for_first(cluster), seconds=20)
    assert winner.poll() is None
    winner_name = "kresched-a" if winner is a else "kresched-b"
    assert held["holder"] == f"{winner_name}_{winner.pid}"
    assert held["message"].startswith("another pass holds the Lease kube-system/kresched ")

    cluster.scheduler.set(FIRST, BIND)
    code, lines, err = finish(winner)
    assert code == ExitCode.OK, err
    summary = lines[-1]
    assert (summary["lock"], summary["podsHelped"], summary["evictions"]) == ("acquired", 2, 3)
    assert summary["bound"] == [{"pod": FIRST, "node": "node-2"}, {"pod": "kube-system/dns", "node": "node-1"}]
    # Everything was done once: one Lease created, each victim evicted once.
    # The server records calls as they complete: the loser's 409 may be logged before the 201.
    assert sorted(r.status for r in cluster.calls(LEASE_COLLECTION, "POST")) in ([201], [201, 409])
    evictions = [r.path for r in cluster.calls(method="POST") if r.path.endswith("/eviction")]
    assert sorted(evictions) == sorted(set(evictions))
    assert len(evictions) == 3
    assert no_reservations(cluster)
    assert lease(cluster)["holderIdentity"] == ""


def test_sigterm_mid_pass_removes_the_reservation_releases_the_lease_and_exits_130(cluster, fake_kubeconfig):
    proc = start(fake_kubeconfig, "kresched-term")
    cluster.procs.append(proc)
    wait_for(lambda: waiting_for_first(cluster) or proc.poll() is not None, seconds=20)
    assert proc.poll() is None
    assert kresched_annotations(cluster, "node-2")[RESERVED_FOR] == FIRST
    assert lease(cluster)["holderIdentity"] == f"kresched-term_{proc.pid}"
    proc.send_signal(signal.SIGTERM)
    code, lines, err = finish(proc)
    assert code == ExitCode.INTERRUPTED, err
    assert [line["action"] for line in lines][-3:] == ["released", "interrupted", "summary"]
    assert lines[-2]["message"] == "interrupted: the pass stopped; the Lease was released"
    summary = lines[-1]
    assert summary["error"] == "interrupted"
    # No pod is lost: the one it was helping and the ones it did not reach are all reported.
    assert pending_reasons_of(summary) == {
        FIRST: "the pass was interrupted while acting for it; the next pass picks it up",
        "kube-system/dns": "not reached: the pass was interrupted; the next pass picks it up",
    }
    assert no_reservations(cluster)
    assert lease(cluster)["holderIdentity"] == ""


def pending_reasons_of(summary: dict) -> dict[str, str]:
    return {p["pod"]: p["reason"] for p in summary["stillPending"]}


def test_a_pass_killed_mid_way_leaves_nothing_the_next_passes_do_not_clean(cluster, fake_kubeconfig, cli):
    proc = start(fake_kubeconfig, "kresched-killed")
    cluster.procs.append(proc)
    wait_for(lambda: waiting_for_first(cluster) or proc.poll() is not None, seconds=20)
    assert proc.poll() is None
    proc.kill()
    code, lines, _ = finish(proc)
    assert code == -signal.SIGKILL
    assert "released" not in [line["action"] for line in lines]
    dead = f"kresched-killed_{proc.pid}"
    assert lease(cluster)["holderIdentity"] == dead
    assert taints(cluster, "node-2") == [OURS]

    # While its Lease lasts, the next pass keeps off, and touches nothing.
    cluster.clear_calls()
    held = cli("reconcile", "-o", "json")
    assert held.code == ExitCode.OK
    assert held.summary["lock"] == f"held by {dead}"
    assert requests(cluster) == [("GET", LEASE_PATH)]

    # Once it has expired, the next pass takes it over. node-agent's reservation is fresh and
    # node-agent still Pending (it fits now: the scheduler has yet to bind it), so it is kept;
    # dns is helped.
    cluster.store.mutate(LEASES, "kube-system", "kresched", lambda obj: obj["spec"].update(
        renewTime=(datetime.now(UTC) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")))
    taken = cli("reconcile", "-o", "json")
    assert taken.code == ExitCode.OK, taken.stderr
    assert [e["previous"] for e in taken.events("lock-taken-over")] == [dead]
    assert lease(cluster)["leaseTransitions"] == 1
    assert taken.summary["reservationsCleaned"] == 0
    assert taken.summary["bound"] == [{"pod": "kube-system/dns", "node": "node-1"}]
    assert pending_reasons(taken)[FIRST].startswith("fits on node node-2 without evicting anything")
    assert taints(cluster, "node-2") == [OURS]

    # When the TTL says it is stale, the next pass removes it.
    cluster.store.mutate(NODES, "", "node-2", lambda n: n["metadata"]["annotations"].update(
        {RESERVED_AT: rfc3339(20 * 60)}))
    cleaned = cli("reconcile", "-o", "json")
    assert cleaned.code == ExitCode.OK, cleaned.stderr
    assert cleaned.summary["reservationsCleaned"] == 1
    assert [e["reason"] for e in cleaned.events("stale")] == ["reserved 20m ago, longer than 10m"]
    assert no_reservations(cluster)
    assert lease(cluster)["holderIdentity"] == ""
