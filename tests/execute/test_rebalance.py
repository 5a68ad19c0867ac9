"""`kresched rebalance` end to end: the real command, the official client, real HTTP, and the fake API
server's ReplicaSet controller creating each evicted pod's replacement, its scheduler (Placer) binding
it and its kubelet making it Ready — with predicted and actual landings compared per move."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kresched.errors import ExitCode
from tests.builders import make_namespace, make_node, make_pdb, make_pod, make_state
from tests.execute.conftest import Cli, writes
from tests.fakeapi import PODS, FakeApiServer
from tests.fakeapi.events import events


def web(n: int, node: str = "node-a", **kw: Any) -> list:
    return [make_pod(f"web-{i}", "shop", node=node, cpu="1", labels={"app": "web"}, owner="ReplicaSet/web-7d9",
                     **kw) for i in range(n)]


def seed(fake: FakeApiServer, pods: list, *, pdbs: tuple = ()) -> None:
    # node-a is 75 % requested (above the 50 % target), node-b is the new empty node.
    nodes = [make_node("node-a", cpu="4"), make_node("node-b", cpu="4")]
    fake.load(make_state(nodes, pods, list(pdbs), [], [make_namespace("shop")]))
    fake.controllers.pdbs.sync()


def rebalance(cli: Cli, *args: str):
    return cli("rebalance", "--objective", "utilisation", "-o", "json", *args)


def running_on(fake: FakeApiServer) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in fake.store.list(PODS)
            if not p["metadata"].get("deletionTimestamp")}


def test_a_full_run_moves_one_pod_and_its_replicaset_replacement_lands_where_predicted(fake_api, cli):
    seed(fake_api, web(3), pdbs=(make_pdb("web", "shop", selector={"app": "web"}, max_unavailable=1),))
    fake_api.controllers.replicasets.enabled = True
    fake_api.controllers.pdbs.enabled = True
    fake_api.controllers.start()
    run = rebalance(cli, "--yes", "--timeout", "20s")

    assert run.code == ExitCode.OK, run.stdout + run.stderr
    plan = run.events("plan")[0]
    assert [(m["pod"], m["from"], m["to"], m["objective"], m["pdb"], m["landedOn"]) for m in plan["moves"]] == [
        ("shop/web-0", "node-a", "node-b", "utilisation", "shop/web", None)]
    assert plan["before"]["node-a"] == {"cpu": 75, "memory": 0, "pods": 2}
    assert plan["after"]["node-b"] == {"cpu": 25, "memory": 0, "pods": 0}
    # One eviction, through the Eviction API; the replacement was created by the ReplicaSet controller.
    assert [p for m, p in writes(fake_api) if m == "POST"] == ["/api/v1/namespaces/shop/pods/web-0/eviction"]
    [replacement] = fake_api.controllers.replicasets.created
    summary = run.summary
    [move] = summary["moves"]
    assert (move["pod"], move["to"], move["landedOn"], move["status"]) == ("shop/web-0", "node-b", "node-b", "moved")
    assert summary["result"]["moves"][0]["asPredicted"] is True
    assert summary["result"]["complete"] is True
    # Recorded on the pod for `kubectl describe`: why kresched evicted it, and where it should go.
    [event] = events(fake_api)
    assert (event["reason"], event["action"], event["regarding"]["name"], event["related"]["name"]) == (
        "Rebalance", "Evicting", "web-0", "node-b")
    assert event["note"].startswith("Evicted by kresched rebalance (utilisation): node-a is above the target")
    assert event["note"].endswith("; its replacement should land on node-b")
    fake_api.controllers.stop()
    assert running_on(fake_api)[replacement.split("/")[1]] == "node-b"


def test_moves_of_one_workload_wait_for_each_replacement_to_be_ready(fake_api, cli):
    """Three moves of one ReplicaSet (node-a from 87.5 % down to the 50 % target, node-b filled to
    37.5 %): the second eviction is sent only once the first replacement is Ready, so the workload
    never has two replicas down because of the rebalance."""
    seed(fake_api, [make_pod(f"web-{i}", "shop", node="node-a", cpu="500m", labels={"app": "web"},
                             owner="ReplicaSet/web-7d9") for i in range(7)])
    fake_api.controllers.replicasets.enabled = True
    fake_api.controllers.start()
    run = rebalance(cli, "--yes", "--timeout", "20s")
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    moves = run.summary["moves"]
    assert [m["pod"] for m in moves] == ["shop/web-0", "shop/web-1", "shop/web-2"]
    assert all(m["landedOn"] == "node-b" for m in moves)
    evictions = [i for i, r in enumerate(fake_api.requests) if r.path.endswith("/eviction")]
    ready_reads = [i for i, r in enumerate(fake_api.requests) if r.method == "GET"
                   and r.path == "/api/v1/namespaces/shop/pods" and evictions[0] < i < evictions[1]]
    assert ready_reads, "the second eviction did not wait for the first replacement"


@pytest.mark.parametrize("with_replicaset", [True, False], ids=["the ReplicaSet's selector",
                                                                 "the pod's template labels (no ReplicaSet)"])
def test_a_replacement_that_lands_in_another_zone_is_found(fake_api, cli, with_replicaset):
    """v1.35+: the API server copies the node's zone onto each pod it binds. The replacement of a
    pod of zone-a lands in zone-b with zone-b's label: it is found by its controller, not by the old
    pod's labels (on the real control plane that rebalance waited out its timeout and exited 4)."""
    zone = "topology.kubernetes.io/zone"
    nodes = [make_node("node-a", cpu="4", labels={zone: "zone-a"}),
             make_node("node-b", cpu="4", labels={zone: "zone-b"})]
    workloads = [{"kind": "ReplicaSet", "apiVersion": "apps/v1", "metadata": {"name": "web-7d9", "namespace": "shop"},
                  "spec": {"selector": {"matchLabels": {"app": "web"}}}}] if with_replicaset else []
    fake_api.load(make_state(nodes, web(3), [], [], [make_namespace("shop")]), *workloads)
    assert {p["metadata"]["labels"][zone] for p in fake_api.store.list(PODS)} == {"zone-a"}  # as admitted
    fake_api.controllers.replicasets.enabled = True
    fake_api.controllers.start()
    run = rebalance(cli, "--yes", "--timeout", "20s")
    fake_api.controllers.stop()
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    [move] = run.summary["moves"]
    assert (move["to"], move["landedOn"], move["status"]) == ("node-b", "node-b", "moved")
    [replacement] = fake_api.controllers.replicasets.created
    stored = fake_api.store.get(PODS, "shop", replacement.split("/")[1])
    assert stored["metadata"]["labels"][zone] == "zone-b"
    lists = [r for r in fake_api.requests if r.method == "GET" and r.path == "/api/v1/namespaces/shop/pods"]
    assert {r.query.get("labelSelector") for r in lists} == {"app=web"}


def test_dry_run_prints_the_contract_with_landed_on_null_and_writes_nothing(fake_api, cli):
    seed(fake_api, web(3))
    run = rebalance(cli, "--dry-run")
    assert run.code == ExitCode.OK, run.stderr
    data = msgspec.json.decode(run.stdout)
    assert list(data) == ["moves", "before", "after", "skipped", "limits"]
    assert data["moves"] == [{"pod": "shop/web-0", "from": "node-a", "to": "node-b", "candidates": ["node-b"],
                              "objective": "utilisation",
                              "reason": "node-a is above the target thresholds (cpu 75%)", "pdb": None,
                              "landedOn": None}]
    assert writes(fake_api) == []


def test_server_dry_run_sends_the_eviction_with_dry_run_all_and_changes_nothing(fake_api, cli):
    seed(fake_api, web(3))
    run = rebalance(cli, "--server-dry-run", "--yes")
    assert run.code == ExitCode.OK, run.stderr
    [post] = [r for r in fake_api.requests if r.method == "POST" and r.path.endswith("/eviction")]
    assert post.path.endswith("/web-0/eviction")
    assert all(r.query.get("dryRun") == "All" for r in fake_api.requests if r.method == "POST")
    assert len(running_on(fake_api)) == 3
    assert run.summary["moves"][0]["status"] == "simulated"


def test_without_yes_and_without_a_terminal_nothing_is_done(fake_api, cli):
    seed(fake_api, web(3))
    run = rebalance(cli)
    assert run.code == ExitCode.USAGE
    assert "pass --yes" in run.stderr
    assert writes(fake_api) == []


def test_a_replacement_that_never_becomes_ready_leaves_the_run_unfinished(fake_api, cli):
    seed(fake_api, web(3))
    fake_api.controllers.replicasets.enabled = True
    fake_api.controllers.kubelet.start_pods = False
    fake_api.controllers.start()
    run = rebalance(cli, "--yes", "--timeout", "2s")
    assert run.code == ExitCode.PARTIAL
    [move] = run.summary["result"]["moves"]
    assert (move["status"], move["landedOn"]) == ("timeout", "node-b")
    assert "no Ready replacement" in move["message"]


@pytest.mark.parametrize("flag", ["--thresholds", "--target-thresholds"])
def test_bad_thresholds_are_one_line_errors(cli, flag):
    run = cli("rebalance", flag, "cpu=abc", "--dry-run")
    assert run.code == ExitCode.USAGE
    assert run.stderr.startswith("error: ")
    assert run.stderr.count("\n") == 1


def test_reconcile_rebalance_runs_one_pass_within_the_eviction_budget(fake_api, cli):
    """The CronJob's pass with --rebalance: no pending pod to help, so the whole budget
    (--max-evictions 1) goes to the rebalance — one move, its replacement Ready where predicted."""
    seed(fake_api, [make_pod(f"web-{i}", "shop", node="node-a", cpu="500m", labels={"app": "web"},
                             owner="ReplicaSet/web-7d9") for i in range(7)])
    fake_api.controllers.replicasets.enabled = True
    fake_api.controllers.start()
    run = cli("reconcile", "-o", "json", "--deadline", "30s", "--max-evictions", "1", "--rebalance",
              "--rebalance-objective", "utilisation")
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    [planned] = run.events("rebalance-plan")
    assert [m["pod"] for m in planned["moves"]] == ["shop/web-0"]
    summary = run.summary
    assert summary["moves"] == [{"pod": "shop/web-0", "from": "node-a", "to": "node-b", "landedOn": "node-b",
                                 "status": "moved"}]
    assert summary["evictions"] == 1
    assert "lease" in " ".join(p for _, p in writes(fake_api))  # the pass took (and released) its Lease


def test_reconcile_rebalance_is_not_run_when_the_budget_is_spent(fake_api, cli):
    seed(fake_api, web(3))
    run = cli("reconcile", "-o", "json", "--deadline", "30s", "--max-evictions", "0", "--rebalance")
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["rebalance"] == "not run: the eviction budget of this pass is used up"
    assert [p for m, p in writes(fake_api) if p.endswith("/eviction")] == []


def test_issue_38s_scene_carried_out_evens_the_cluster_and_a_second_run_moves_nothing(fake_api, cli):
    """Five 4-CPU nodes, n1 at 100 % of its CPU requested, n2 and n3 at 87.5 %, n4 and n5 empty:
    the empty nodes take pods up to the 50 % target (not one each) and the next run over the
    cluster as it is then moves nothing back. One workload at a time (--parallel 1), so that each
    replacement is bound before the next is placed, as the plan simulates them."""
    nodes = [make_node(f"n{i}", cpu="4") for i in range(1, 6)]
    pods = [make_pod(f"web-n1-{i}", "shop", node="n1", cpu="1", labels={"app": "web"}, owner="ReplicaSet/web-7d9")
            for i in range(4)]
    for n in ("n2", "n3"):
        pods += [make_pod(f"web-{n}-{i}", "shop", node=n, cpu="1", labels={"app": "web"}, owner="ReplicaSet/web-7d9")
                 for i in range(3)]
        pods.append(make_pod(f"api-{n}", "shop", node=n, cpu="500m", labels={"app": "api"}, owner="ReplicaSet/api-5c4"))
    fake_api.load(make_state(nodes, pods, [], [], [make_namespace("shop")]))
    fake_api.controllers.replicasets.enabled = True
    fake_api.controllers.start()
    run = rebalance(cli, "--yes", "--timeout", "30s", "--parallel", "1")
    fake_api.controllers.stop()
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    moves = run.summary["moves"]
    assert [m["status"] for m in moves] == ["moved"] * len(moves)
    assert {m["landedOn"] for m in moves} == {"n4", "n5"}
    requested = dict.fromkeys((n.name for n in nodes), 0)
    for p in fake_api.store.list(PODS):
        if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp"):
            cpu = p["spec"]["containers"][0]["resources"]["requests"]["cpu"]
            requested[p["spec"]["nodeName"]] += 500 if cpu == "500m" else 1000
    assert max(requested.values()) - min(requested.values()) <= 2000, requested  # 4000 before
    assert requested["n4"] <= 2000, requested
    assert requested["n5"] <= 2000, requested
    again = rebalance(cli, "--dry-run")
    assert again.code == ExitCode.OK, again.stderr
    assert msgspec.json.decode(again.stdout)["moves"] == []
