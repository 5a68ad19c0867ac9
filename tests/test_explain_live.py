"""`kresched explain` against a cluster (the fake API server, over real HTTP with the official
client) says exactly what it says for a snapshot of the same objects."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kresched.errors import ExitCode
from kresched.model.cluster import ClusterState
from kresched.sources.snapshot import encode_snapshot, load_snapshot
from tests.builders import make_namespace, make_node, make_pod, make_priority_class, make_state
from tests.clirun import Result, reset_env, run_cli
from tests.fakeapi import FakeApiServer

Run = Callable[..., Result]
TERMINATING = "2026-01-01T00:00:05Z"


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    def run(*args: str) -> Result:
        return run_cli(monkeypatch, *args)

    yield run
    reset_env()


def cluster() -> ClusterState:
    """Every kind of answer: resources (evictions help / do not), a taint, a cordon, a label, a
    PriorityClass resolved by name, preemptionPolicy Never, a nominated pod, a schedulable pod."""
    nodes = [
        make_node("node-a", cpu="4", labels={"disktype": "ssd"}),
        make_node("node-b", cpu="8", labels={"disktype": "ssd"}),
        make_node("node-c", cpu="8", unschedulable=True),
        make_node("node-t", cpu="8", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
    ]
    pods = [
        make_pod("db-0", "shop", node="node-a", cpu="1", priority=1000, owner="StatefulSet/db"),
        make_pod("batch-0", "batch", node="node-a", cpu="2500m", priority=None, priority_class="low"),
        make_pod("db-1", "shop", node="node-b", cpu="7", priority=1000, owner="StatefulSet/db"),
        make_pod("old", "batch", node="node-b", priority=0, deletion_timestamp=TERMINATING),
        make_pod("checkout", "shop", cpu="2", priority=None, priority_class="high",
                 node_selector={"disktype": "ssd"}),
        make_pod("nightly", "shop", cpu="2", priority=100, preemption_policy="Never"),
        make_pod("huge", "shop", cpu="6", priority=100),
        make_pod("small", "shop", cpu="100m", priority=100, nominated_node="node-b"),
    ]
    return make_state(nodes, pods, priority_classes=[make_priority_class("low", 0, global_default=True),
                                                     make_priority_class("high", 100)],
                      namespaces=[make_namespace(n) for n in ("shop", "batch")])


def explain(cli: Run, pod: str, *source: str) -> dict[str, Any]:
    res = cli("explain", "--pod", pod, "-o", "json", *source)
    assert (res.exit_code, res.stderr) == (0, "")
    return json.loads(res.stdout)


@pytest.mark.parametrize("pod", ["shop/checkout", "shop/nightly", "shop/huge", "shop/small", "shop/db-0"])
def test_the_live_cluster_and_a_snapshot_of_it_give_the_same_json(cli: Run, fake_api: FakeApiServer,
                                                                  fake_kubeconfig: Path, tmp_path: Path,
                                                                  pod: str) -> None:
    state = cluster()
    fake_api.load(state)
    (tmp_path / "snap.json").write_bytes(encode_snapshot(state))
    live = explain(cli, pod, "--kubeconfig", str(fake_kubeconfig))
    assert live == explain(cli, pod, "--snapshot", str(tmp_path / "snap.json"))
    assert live["pod"] == pod
    assert fake_api.calls("/api/v1/pods")  # it did read the cluster


def test_the_live_answers_are_the_expected_ones(cli: Run, fake_api: FakeApiServer, fake_kubeconfig: Path) -> None:
    fake_api.load(cluster())
    kc = ("--kubeconfig", str(fake_kubeconfig))
    checkout = explain(cli, "shop/checkout", *kc)
    assert checkout["message"] == ("0/4 nodes are available: 1 node(s) had untolerated taint(s), "
                                   "1 node(s) were unschedulable, 2 Insufficient cpu.")
    assert checkout["preemptionMessage"] is None  # batch-0 (PriorityClass low) can go
    assert explain(cli, "shop/nightly", *kc)["preemptionMessage"] == "not eligible due to preemptionPolicy=Never."
    small = explain(cli, "shop/small", *kc)
    assert (small["schedulable"], small["nodes"]["node-a"]) == (True, [])


def test_the_demo_served_live_explains_as_the_demo_snapshot(cli: Run, fake_api: FakeApiServer,
                                                            fake_kubeconfig: Path) -> None:
    demo = load_snapshot("demo")
    fake_api.load(demo)
    pending = demo.pending_pods()
    assert pending
    for pod in pending:
        assert explain(cli, pod.key, "--kubeconfig", str(fake_kubeconfig)) == explain(cli, pod.key, "--snapshot",
                                                                                       "demo")


def test_an_unknown_pod_in_the_live_cluster_is_a_usage_error(cli: Run, fake_api: FakeApiServer,
                                                             fake_kubeconfig: Path) -> None:
    fake_api.load(cluster())
    res = cli("explain", "--pod", "shop/chekout", "--kubeconfig", str(fake_kubeconfig))
    assert (res.exit_code, res.stdout) == (ExitCode.USAGE, "")
    assert res.stderr.startswith("error: pod shop/chekout not found in the cluster; did you mean shop/checkout")


def test_an_unreachable_cluster_exits_5(cli: Run, fake_api: FakeApiServer, tmp_path: Path,
                                        closed_port_url: str) -> None:
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kc", server=closed_port_url)
    res = cli("explain", "--pod", "shop/checkout", "--kubeconfig", str(kubeconfig))
    assert (res.exit_code, res.stdout) == (ExitCode.CLUSTER_ACCESS, "")
    assert res.stderr == f"error: cannot reach the API server at {closed_port_url}: connection refused\n"
