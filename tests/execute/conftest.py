"""What the execution tests share: fast backoff, the CLI run in-process against the fake API
server (real HTTP, the official client), and the preemption scenario most tests start from.

The scenario (`seed_preemption`): node-a (4 CPU) runs web-1 (priority 100, 2 CPU, grace 30 s,
ReplicaSet, PDB `shop/web` allowing 1 disruption) and sys-1 (priority 2,000,000, 1 CPU); node-b
(4 CPU) is full of db-0 (priority 2,000,000). The Pending pod shop/critical (priority 1,000,000,
2 CPU, tolerating CriticalAddonsOnly) fits only if web-1 goes: the plan is "evict web-1 on node-a",
tier 2 (its grace exceeds 10 s), eviction grace min(30, --max-grace).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from kresched.cli import app
from kresched.cli.common import ENV
from tests.builders import make_namespace, make_node, make_pdb, make_pod, make_priority_class, make_state
from tests.fakeapi import NODES, PDBS, PODS, FakeApiServer

PENDING = "shop/critical"
VICTIM = "shop/web-1"
TOLERATES_CRITICAL = [{"key": "CriticalAddonsOnly", "operator": "Exists"}]
EVICTION_PATH = "/api/v1/namespaces/shop/pods/web-1/eviction"
POD_PATH = "/api/v1/namespaces/shop/pods/web-1"
NODE_A_PATH = "/api/v1/nodes/node-a"
WATCH_PATH = "/api/v1/namespaces/shop/pods"
RESERVED_FOR = "kresched.io/reserved-for"
RESERVED_AT = "kresched.io/reserved-at"


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every retry pause (and retry deadline) a hundred times shorter."""
    monkeypatch.setenv("KRESCHED_BACKOFF_SCALE", "0.01")


def seed_preemption(fake: FakeApiServer, *, node_a_taints: list[dict[str, Any]] | None = None,
                    tolerations: list[dict[str, Any]] | None = TOLERATES_CRITICAL,
                    budget: int = 1, web_grace: int = 30) -> None:
    nodes = [make_node("node-a", cpu="4", taints=node_a_taints), make_node("node-b", cpu="4")]
    pods = [
        make_pod("web-1", "shop", node="node-a", cpu="2", priority=100, labels={"app": "web"}, grace=web_grace,
                 owner="ReplicaSet/web-7d9"),
        make_pod("sys-1", "shop", node="node-a", cpu="1", priority=2_000_000, owner="ReplicaSet/sys"),
        make_pod("db-0", "data", node="node-b", cpu="4", priority=2_000_000, owner="StatefulSet/db"),
        make_pod("critical", "shop", cpu="2", priority=1_000_000, priority_class="high", tolerations=tolerations,
                 owner="ReplicaSet/critical-5f"),
    ]
    state = make_state(
        nodes, pods,
        [make_pdb("web", "shop", selector={"app": "web"}, max_unavailable=budget, disruptions_allowed=budget)],
        [make_priority_class("high", 1_000_000)],
        [make_namespace("shop"), make_namespace("data")],
    )
    fake.load(state)
    fake.controllers.pdbs.sync()  # a realistic status: currentHealthy, desiredHealthy, expectedPods


def set_budget(fake: FakeApiServer, allowed: int) -> None:
    fake.store.mutate(PDBS, "shop", "web", lambda b: b["status"].update(disruptionsAllowed=allowed))


def node(fake: FakeApiServer, name: str = "node-a") -> dict[str, Any]:
    obj = fake.store.get(NODES, "", name)
    assert obj is not None
    return obj


def taints(fake: FakeApiServer, name: str = "node-a") -> list[dict[str, Any]]:
    return node(fake, name)["spec"].get("taints") or []


def kresched_annotations(fake: FakeApiServer, name: str = "node-a") -> dict[str, str]:
    ann = node(fake, name)["metadata"].get("annotations") or {}
    return {k: v for k, v in ann.items() if k.startswith("kresched.io/")}


def pod(fake: FakeApiServer, key: str) -> dict[str, Any] | None:
    ns, name = key.split("/")
    return fake.store.get(PODS, ns, name)


#: Where kresched records its Kubernetes Events (tests/execute/test_events.py checks them).
EVENTS_PREFIX = "/apis/events.k8s.io/"


def writes(fake: FakeApiServer) -> list[tuple[str, str]]:
    """The writes to the cluster's objects, in order (the Events recorded about them aside)."""
    return [(r.method, r.path) for r in fake.requests if r.method != "GET" and not r.path.startswith(EVENTS_PREFIX)]


def body(request: Any) -> Any:
    return msgspec.json.decode(request.body)


# -- the CLI, in-process ---------------------------------------------------------------------------

@dataclass
class CliRun:
    code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[dict[str, Any]]:
        """The JSON lines written (events and the summary)."""
        return [msgspec.json.decode(line) for line in self.stdout.splitlines() if line.startswith("{")]

    def actions(self) -> list[str]:
        return [line["action"] for line in self.lines]

    def events(self, action: str) -> list[dict[str, Any]]:
        return [line for line in self.lines if line["action"] == action]

    @property
    def summary(self) -> dict[str, Any]:
        found = self.events("summary")
        assert found, f"no summary in: {self.stdout}\n{self.stderr}"
        return found[-1]


class Cli:
    """Runs `kresched ...` in-process with ENV pointed at buffers (stdout and stdin are not terminals)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, kubeconfig: Path) -> None:
        self.monkeypatch = monkeypatch
        self.kubeconfig = kubeconfig

    def __call__(self, *args: str, kubeconfig: bool = True) -> CliRun:
        out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
        self.monkeypatch.setattr(ENV, "stdout", out)
        self.monkeypatch.setattr(ENV, "stderr", err)
        self.monkeypatch.setattr(ENV, "stdin", io.StringIO())
        for cached in ("out", "err"):
            ENV.__dict__.pop(cached, None)
        extra = ["--kubeconfig", str(self.kubeconfig)] if kubeconfig else []
        try:
            result = CliRunner().invoke(app, [*args, *extra], catch_exceptions=False)
        finally:
            for cached in ("out", "err"):
                ENV.__dict__.pop(cached, None)
        out.flush()
        return CliRun(result.exit_code, out.buffer.getvalue().decode(), err.getvalue())


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, fake_kubeconfig: Path) -> Cli:
    return Cli(monkeypatch, fake_kubeconfig)


@pytest.fixture
def cluster(fake_api: FakeApiServer) -> FakeApiServer:
    """The fake API server seeded with the preemption scenario, its controllers running."""
    seed_preemption(fake_api)
    fake_api.controllers.start()
    return fake_api
