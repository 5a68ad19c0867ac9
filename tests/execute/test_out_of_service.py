"""`kresched drain` on a lost node, and `--out-of-service` (the non-graceful node shutdown), end to
end: the real command over real HTTP against the fake API server, whose kubelet on node-x is dead
(nothing there is confirmed) and whose taint manager and pod GC act on the out-of-service taint as
upstream's do; its ReplicaSet and StatefulSet controllers, scheduler and kubelet elsewhere run in
the background."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kresched.errors import ExitCode
from tests.builders import make_lost_node, make_namespace, make_node, make_node_lease, make_pod, make_state
from tests.execute.conftest import body, node, pod, taints, writes
from tests.fakeapi import NODES, FakeApiServer

OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}
DS_TOLERATION = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]


def seed_lost(fake: FakeApiServer, *, lost: bool = True) -> None:
    """node-x lost (its kubelet dead) with a ReplicaSet pod, a StatefulSet pod the taint manager
    already deleted (Terminating for ever), a bare pod and a DaemonSet pod; node-a and node-b healthy."""
    x = make_lost_node("node-x") if lost else make_node("node-x")
    pods = [
        make_pod("web-1", "shop", node="node-x", cpu="1", labels={"app": "web"}, owner="ReplicaSet/web-7d9"),
        make_pod("db-0", "shop", node="node-x", cpu="1", labels={"app": "db"}, owner="StatefulSet/db",
                 deletion_timestamp="2026-11-28T22:05:30Z"),
        make_pod("debug", "shop", node="node-x", owner=None),
        make_pod("agent-x", "shop", node="node-x", owner="DaemonSet/agent", tolerations=DS_TOLERATION),
    ]
    fake.load(make_state([x, make_node("node-a", cpu="2"), make_node("node-b", cpu="4")], pods, [], [],
                         [make_namespace("shop")]),
              # A dead kubelet's Lease stopped long ago; a live one's was renewed just now.
              make_node_lease("node-x", "2026-11-28T21:59:10.000000Z" if lost else
                              datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")))
    fake.pods.termination = "graceful"  # a deleted pod stays Terminating until its kubelet confirms
    fake.controllers.kubelet.dead_nodes.add("node-x")
    for c in (fake.controllers.out_of_service, fake.controllers.replicasets, fake.controllers.statefulsets):
        c.enabled = True
    fake.controllers.start()


def summary_node(run: Any) -> dict[str, Any]:
    (one,) = run.summary["nodes"]
    return one


def test_drain_on_a_lost_node_is_refused_before_anything_is_touched_and_says_why(fake_api, cli):
    seed_lost(fake_api)
    run = cli("drain", "node-x", "--ignore-daemonsets", "--force", "--yes", "-o", "json")
    assert run.code == ExitCode.INFEASIBLE, run.stderr
    assert "node/node-x is lost" in run.stderr
    assert "--out-of-service" in run.stderr
    (preflight,) = run.events("preflight")
    (refused,) = run.events("refused")
    assert refused["lost"] == ["node-x"]
    assert run.summary["complete"] is False
    assert [loss["node"] for loss in preflight["lost"]] == ["node-x"]
    assert preflight["lost"][0]["ready"] == "Unknown"
    assert writes(fake_api) == []


def test_out_of_service_taints_the_node_and_reports_where_the_new_pods_went_against_the_prediction(fake_api, cli):
    seed_lost(fake_api)
    run = cli("drain", "node-x", "--out-of-service", "--yes", "--timeout", "60s", "-o", "json")
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    (ours,) = [t for t in taints(fake_api, "node-x") if t["key"] == OUT_OF_SERVICE["key"]]
    assert {k: ours[k] for k in OUT_OF_SERVICE} == OUT_OF_SERVICE
    assert ours["timeAdded"]
    (patch,) = [r for r in fake_api.requests if r.method == "PATCH"]
    assert patch.path == "/api/v1/nodes/node-x"
    assert [t["key"] for t in body(patch)["spec"]["taints"]] == [
        "node.kubernetes.io/unreachable", "node.kubernetes.io/unreachable", "node.kubernetes.io/out-of-service"]
    done = summary_node(run)
    assert sorted(done["gone"]) == ["shop/agent-x", "shop/db-0", "shop/debug", "shop/web-1"]
    # The StatefulSet pod came back (a new pod under the same name) and the ReplicaSet's replacement
    # is bound: both where kresched predicted (node-b has the room).
    assert done["landed"] == {"shop/ReplicaSet/web-7d9": ["node-b"], "shop/StatefulSet/db": ["node-b"]}
    assert done["predicted"] == done["landed"]
    assert done["asPredicted"] is True
    assert done["waiting"] == []
    db = pod(fake_api, "shop/db-0")
    assert db is not None
    assert db["metadata"]["uid"] != "uid-shop-db-0"
    assert db["spec"]["nodeName"] == "node-b"
    assert "kresched untaint node-x --out-of-service" in run.summary["message"]
    assert [e["pod"] for e in run.events("bound")]


def test_out_of_service_is_refused_for_a_node_that_is_not_lost(fake_api, cli):
    seed_lost(fake_api, lost=False)
    run = cli("drain", "node-x", "--out-of-service", "--yes", "--timeout", "20s", "-o", "json")
    assert run.code == ExitCode.USAGE
    assert "node/node-x is not lost" in run.stderr
    assert writes(fake_api) == []


def test_out_of_service_without_a_confirmation_changes_nothing(fake_api, cli):
    seed_lost(fake_api)
    run = cli("drain", "node-x", "--out-of-service", "--timeout", "20s", "-o", "json")
    assert run.code == ExitCode.USAGE
    assert "confirmation" in run.stderr
    assert writes(fake_api) == []
    assert not [t for t in taints(fake_api, "node-x") if t["key"] == OUT_OF_SERVICE["key"]]


def test_untaint_names_the_out_of_service_taint_and_removes_it_only_when_asked(fake_api, cli):
    seed_lost(fake_api)
    fake_api.controllers.stop()
    fake_api.store.mutate(NODES, "", "node-x",
                          lambda n: n["spec"]["taints"].append({**OUT_OF_SERVICE, "timeAdded": "2026-11-28T22:10:00Z"}))
    kept = cli("untaint", "-o", "json")
    assert kept.code == ExitCode.OK
    assert [e["node"] for e in kept.events("out-of-service-kept")] == ["node-x"]
    assert kept.summary["outOfService"] == {"removed": [], "kept": ["node-x"]}
    assert writes(fake_api) == []
    removed = cli("untaint", "node-x", "--out-of-service", "-o", "json")
    assert removed.code == ExitCode.OK
    assert removed.summary["outOfService"] == {"removed": ["node-x"], "kept": []}
    assert [t["key"] for t in taints(fake_api, "node-x")] == ["node.kubernetes.io/unreachable"] * 2
    assert node(fake_api, "node-x")["status"]["conditions"][0]["status"] == "Unknown"
    assert pod(fake_api, "shop/web-1") is not None  # nothing else was touched
    assert [m for m, _ in writes(fake_api)] == ["PATCH"]
