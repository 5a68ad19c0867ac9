"""`kresched preempt -f FILE` over real HTTP against the fake API server (its scheduler, kubelet and
Deployment/ReplicaSet controllers running): the evictions a what-if plans, the reservations, the
server-side apply of the workload once the room is made, the wait for its pods, and the release.

The cluster: node-a and node-b (4 CPU each) each run two priority-100 pods of 2 CPU (a Job's: nothing
replaces them); the Deployment `shop/web` (priority 1000, 2 replicas of 2 CPU) fits only once two
of them are evicted (both on node-a: node-b ties with it, and the name decides).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kresched.render.manifests import API_CALLS
from tests.builders import make_namespace, make_node, make_pod, make_priority_class, make_state
from tests.execute.conftest import Cli, kresched_annotations, taints
from tests.fakeapi import PODS, FakeApiServer
from tests.fakeapi.store import DEPLOYMENTS

TOLERATES_CRITICAL = [{"key": "CriticalAddonsOnly", "operator": "Exists"}]


def _deployment(tolerations: list[dict[str, Any]] | None = None, replicas: int = 2) -> dict[str, Any]:
    spec: dict[str, Any] = {"priorityClassName": "high", "containers": [
        {"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "2"}}}]}
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec}}}


@pytest.fixture
def cluster(fake_api: FakeApiServer) -> FakeApiServer:
    nodes = [make_node("node-a", cpu="4"), make_node("node-b", cpu="4")]
    pods = [make_pod(f"batch-{n}-{i}", "batch", node=f"node-{n}", cpu="2", priority=100, grace=5,
                     owner="Job/nightly", labels={"app": "batch"}) for n in "ab" for i in range(2)]
    fake_api.load(make_state(nodes, pods, priority_classes=[make_priority_class("high", 1000)],
                             namespaces=[make_namespace("shop"), make_namespace("batch")]))
    fake_api.controllers.rollouts.enabled = True
    fake_api.controllers.start()
    return fake_api


def _manifest(tmp_path: Path, doc: dict[str, Any]) -> str:
    path = tmp_path / "web.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _pods_of_web(fake: FakeApiServer) -> list[dict[str, Any]]:
    return [p for p in fake.store.list(PODS, "shop") if p["metadata"]["name"].startswith("web-")]


def test_apply_makes_the_room_creates_the_workload_and_waits_for_its_pods(cluster: FakeApiServer, cli: Cli,
                                                                          tmp_path: Path) -> None:
    run = cli("preempt", "-f", _manifest(tmp_path, _deployment()), "--apply", "--yes", "--timeout", "20s",
              "-o", "json")
    assert run.code == 0, run.stderr
    actions = run.actions()
    assert actions[0] == "plan"
    assert actions.index("evicted") < actions.index("room-made") < actions.index("applied") < actions.index("bound")
    summary = run.summary
    assert len(summary["evicted"]) == 2
    assert summary["applied"] == ["deployment/shop/web"]
    assert sum(summary["bound"].values()) == 2
    assert summary["expected"] == 2
    assert summary["message"].startswith("deployment/shop/web: 2 pods bound in ")
    # Server-side apply with kresched's field manager; the Deployment controller made the pods.
    assert cluster.applied == [("Deployment", "shop", "web", "kresched")]
    assert cluster.store.get(DEPLOYMENTS, "shop", "web") is not None
    planned = run.events("plan")[0]["workloads"][0]["placed"]
    assert summary["bound"] == planned == {"node-a": 2}  # both evictions on node-a: a tie broken by name
    assert sorted(p["spec"]["nodeName"] for p in _pods_of_web(cluster)) == ["node-a", "node-a"]
    apply_requests = [r for r in cluster.requests if r.method == "PATCH" and "deployments" in r.path]
    assert [r.content_type for r in apply_requests] == ["application/apply-patch+yaml"]
    assert apply_requests[0].query == {"fieldManager": "kresched"}


def test_without_apply_nothing_is_created_and_the_run_waits_for_the_operator(cluster: FakeApiServer, cli: Cli,
                                                                            tmp_path: Path) -> None:
    run = cli("preempt", "-f", _manifest(tmp_path, _deployment()), "--yes", "--timeout", "2s", "-o", "json")
    assert run.code == 4  # nobody applied it: still 0 of 2 after the timeout
    assert not cluster.applied
    assert cluster.store.get(DEPLOYMENTS, "shop", "web") is None
    waiting = run.events("waiting")[0]["message"]
    assert "apply them now: kresched does not create them without --apply" in waiting
    assert run.summary["message"].startswith("deployment/shop/web: 0 of 2 pods bound after ")
    assert len(run.summary["evicted"]) == 2


def test_a_workload_that_tolerates_the_reservation_gets_its_nodes_reserved_and_released(
        cluster: FakeApiServer, cli: Cli, tmp_path: Path) -> None:
    seen: list[dict[str, str]] = []
    # The reservations, as they are when the workload is applied.
    cluster.on_apply = lambda: seen.append(kresched_annotations(cluster, "node-a"))
    run = cli("preempt", "-f", _manifest(tmp_path, _deployment(TOLERATES_CRITICAL)), "--apply", "--yes",
              "--timeout", "20s", "-o", "json")
    assert run.code == 0, run.stderr
    assert seen
    assert seen[0]["kresched.io/reserved-for"] == "deployment/shop/web"
    assert run.summary["reserved"] == run.summary["released"] == ["node-a"]
    assert kresched_annotations(cluster, "node-a") == {}
    assert not any(t["key"] == "CriticalAddonsOnly" for t in taints(cluster, "node-a"))


def test_server_dry_run_sends_every_write_with_dry_run_and_creates_nothing(cluster: FakeApiServer, cli: Cli,
                                                                          tmp_path: Path) -> None:
    run = cli("preempt", "-f", _manifest(tmp_path, _deployment()), "--apply", "--dry-run=server", "--yes",
              "-o", "json")
    assert run.code == 0, run.stderr
    writes = [r for r in cluster.requests if r.method in ("POST", "PATCH") and "events.k8s.io" not in r.path]
    assert writes
    assert all(r.query.get("dryRun") == "All" or b"All" in r.body for r in writes)
    assert cluster.store.get(DEPLOYMENTS, "shop", "web") is None
    assert len(cluster.store.list(PODS, "batch")) == 4


def test_apply_forbidden_names_both_verbs_it_needs(cluster: FakeApiServer, cli: Cli, tmp_path: Path) -> None:
    cluster.forbid("create", "deployments")
    run = cli("preempt", "-f", _manifest(tmp_path, _deployment()), "--apply", "--yes", "--timeout", "5s")
    assert run.code == 5
    assert 'verbs ["create", "patch"]' in run.stderr


def test_the_apply_calls_are_in_the_rbac_table_but_never_in_the_manifests_role() -> None:
    apply = [p for p in API_CALLS if p.only_with_apply]
    assert {(p.verb, p.resource) for p in apply} >= {("patch", "deployments"), ("create", "deployments"),
                                                     ("patch", "statefulsets"), ("create", "jobs")}
    from kresched.render.manifests import ManifestOptions, build_manifests

    role = next(o for o in build_manifests(ManifestOptions()) if o["kind"] == "ClusterRole")
    granted = {(r, v) for rule in role["rules"] for r in rule["resources"] for v in rule["verbs"]}
    assert not {(p.resource, p.verb) for p in apply} & granted
