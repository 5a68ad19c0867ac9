"""`kresched rebalance` end to end: the real command, the official client, real HTTP, and the fake API
server's ReplicaSet controller creating each evicted pod's replacement, its scheduler (Placer) binding
it and its kubelet making it Ready — with predicted and actual landings compared per move."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from kresched.errors import ExitCode
from kresched.model.objects import Pod
from kresched.plan.placement import Landing
from tests.builders import make_namespace, make_node, make_pdb, make_pod, make_state
from tests.execute.conftest import Cli, writes
from tests.fakeapi import PODS, FakeApiServer
from tests.fakeapi.events import events
from tests.plan.test_rebalance_rederive import issue_scene as rederive_scene


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


# -- predictions re-derived before each eviction (issue 45) ---------------------------------------------

def issue_scene(fake: FakeApiServer) -> None:
    """`tests.plan.test_rebalance_rederive.issue_scene` served, with the PDB's status as the
    disruption controller writes it; its plan: batch-0 n1 → n4 (tied with n5), batch-1 n1 → n5,
    batch-4 n2 → n4 (tied with n5), web-1 n2 → n5."""
    fake.load(rederive_scene())
    fake.controllers.pdbs.sync()
    fake.controllers.replicasets.enabled = True
    fake.controllers.pdbs.enabled = True


def other_tied_node(ties: int | None = None) -> Callable[[Pod, Landing], str]:
    """The scheduler's choice among tied nodes: the other one than kresched's first, as the real
    scheduler's parallel filters sometimes make it — for the first `ties` tied choices (None: all)."""
    seen = []

    def pick(pod: Pod, landing: Landing) -> str:
        assert landing.node is not None
        if len(landing.candidates) < 2 or (ties is not None and len(seen) >= ties):
            return landing.node
        seen.append(pod.key)
        return next(c for c in landing.candidates if c != landing.node)
    return pick


def landings(run: Any) -> list[tuple[str, str, list[str], str | None, str, bool, bool, str, list[str]]]:
    return [(m["pod"].split("/")[1], m["predicted"], m["candidates"], m["landedOn"], m["status"], m["asPredicted"],
             m["retargeted"], m["planned"], m["plannedCandidates"]) for m in run.summary["result"]["moves"]]


def test_a_later_prediction_resting_on_an_earlier_tie_break_is_re_derived_where_it_really_broke(fake_api, cli):
    """The first batch replacement takes n5, the other tied node: batch-1's prediction (n5, which
    rested on the tie-break) is re-derived on the cluster as it is before its eviction — n4, where
    it lands. Every move as predicted, and the round ends as planned (the two batch replacements
    swapped tied nodes). Before issue 45 this said "4 pods moved: 3 as predicted, 1 elsewhere"."""
    issue_scene(fake_api)
    fake_api.controllers.scheduler.pick = other_tied_node(1)
    fake_api.controllers.start()
    run = rebalance(cli, "--yes", "--timeout", "30s", "--parallel", "1")
    fake_api.controllers.stop()
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    assert landings(run) == [
        ("batch-0", "n4", ["n4", "n5"], "n5", "moved", True, False, "n4", ["n4", "n5"]),
        ("batch-1", "n4", ["n4"], "n4", "moved", True, True, "n5", ["n5"]),
        ("batch-4", "n4", ["n4", "n5"], "n4", "moved", True, False, "n4", ["n4", "n5"]),
        ("web-1", "n5", ["n5"], "n5", "moved", True, False, "n5", ["n5"])]
    result = run.summary["result"]
    assert result["endAsPlanned"] is True
    assert result["message"].endswith(": 4 as predicted (1 retargeted); the round ended as planned")
    [retarget] = run.events("retargeted")
    assert (retarget["pod"], retarget["predicted"], retarget["planned"]) == ("shop/batch-1", "n4", "n5")
    assert "now predicted n4 (the plan said n5)" in retarget["message"]
    # One wave at a time: each eviction after the previous replacement was Ready, the cluster read anew.
    assert [m["wave"] for m in result["moves"]] == [1, 2, 3, 4]


def test_when_every_tie_breaks_the_other_way_each_move_is_as_predicted_and_the_round_ends_as_planned(fake_api, cli):
    """Not the after-table's end (that shows the ties broken the first way), but one the plan
    predicted: it named both tied nodes each time."""
    issue_scene(fake_api)
    fake_api.controllers.scheduler.pick = other_tied_node()
    fake_api.controllers.start()
    run = rebalance(cli, "--yes", "--timeout", "30s", "--parallel", "1")
    fake_api.controllers.stop()
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    moves = run.summary["result"]["moves"]
    assert [(m["landedOn"], m["asPredicted"]) for m in moves] == [
        ("n5", True), ("n4", True), ("n5", True), ("n4", True)]
    assert [m["retargeted"] for m in moves] == [False, True, False, True]
    assert run.summary["result"]["endAsPlanned"] is True
    assert run.summary["result"]["message"].endswith(": 4 as predicted (2 retargeted); the round ended as planned")


def test_a_replacement_outside_its_re_derived_set_is_still_elsewhere(fake_api, cli):
    """batch-1's prediction is re-derived (n4, batch-0 took n5), but the scheduler puts its
    replacement on n3: elsewhere, against the re-derived set; the later moves are re-derived from
    there (batch-4, web-1)."""
    issue_scene(fake_api)
    flip = other_tied_node(1)

    def pick(pod: Pod, landing: Landing) -> str:
        return "n3" if len(fake_api.controllers.scheduler.bindings) == 1 else flip(pod, landing)
    fake_api.controllers.scheduler.pick = pick
    fake_api.controllers.start()
    run = rebalance(cli, "--yes", "--timeout", "30s", "--parallel", "1")
    fake_api.controllers.stop()
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    moves = run.summary["result"]["moves"]
    second = moves[1]
    assert (second["pod"], second["predicted"], second["candidates"], second["landedOn"], second["asPredicted"]) == (
        "shop/batch-1", "n4", ["n4"], "n3", False)
    assert second["message"] == "retargeted before its eviction: the plan said n5; predicted n4"
    assert [m["asPredicted"] for m in moves] == [True, False, True, True]
    # n4 still empty, n5 holding batch-0: batch-4 takes n4 alone, then web-1 either.
    assert [(m["retargeted"], m["candidates"]) for m in moves[2:]] == [(True, ["n4"]), (True, ["n4", "n5"])]
    [elsewhere] = [e for e in run.events("moved") if e["pod"] == "shop/batch-1"]
    assert elsewhere["message"].endswith("n1 → n3 (predicted n4)")
    result = run.summary["result"]
    assert result["endAsPlanned"] is False
    assert ": 3 as predicted (3 retargeted), 1 elsewhere;" in result["message"]


def test_a_move_that_no_longer_helps_is_dropped_and_the_report_says_why(fake_api, cli):
    """While the first replacement is being placed, two bare pods (which rebalance never moves)
    leave n1: at 50 % it is no longer above the target, and the two later moves are dropped."""
    pods = [make_pod(f"bare-{i}", "shop", node="n1", cpu="500m", owner=None) for i in range(4)]
    pods += [make_pod(f"batch-{i}", "shop", node="n1", cpu="500m", labels={"app": "batch"},
                      owner="ReplicaSet/batch-5c4") for i in range(3)]
    fake_api.load(make_state([make_node("n1", cpu="4"), make_node("n2", cpu="4")], pods, [], [],
                             [make_namespace("shop")]))
    fake_api.controllers.replicasets.enabled = True

    def pick(pod: Pod, landing: Landing) -> str:
        for name in ("bare-0", "bare-1"):
            if fake_api.store.get(PODS, "shop", name) is not None:
                fake_api.store.delete(PODS, "shop", name)
        assert landing.node is not None
        return landing.node
    fake_api.controllers.scheduler.pick = pick
    fake_api.controllers.start()
    run = rebalance(cli, "--yes", "--timeout", "30s")
    fake_api.controllers.stop()
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    moves = run.summary["result"]["moves"]
    assert [(m["pod"], m["status"], m["landedOn"]) for m in moves] == [
        ("shop/batch-0", "moved", "n2"), ("shop/batch-1", "dropped", None), ("shop/batch-2", "dropped", None)]
    assert moves[1]["message"] == "not moved: n1 is no longer above the target thresholds"
    assert [e["pod"] for e in run.events("dropped")] == ["shop/batch-1", "shop/batch-2"]
    assert [p for m, p in writes(fake_api) if m == "POST" and p.endswith("/eviction")] == [
        "/api/v1/namespaces/shop/pods/batch-0/eviction"]
    assert run.summary["result"]["message"].endswith(": 1 as predicted, 2 dropped; the round did not end as planned")


def test_with_parallel_the_moves_evicted_at_once_are_predicted_together(fake_api, cli):
    """--parallel 3: the batch lane and the web lane start at once (batch-0 and web-1, evicted
    before either replacement is Ready); placed in either order, each may take n4 or n5, and that
    is what is predicted. The later batch moves are re-derived after them, one wave each."""
    issue_scene(fake_api)
    fake_api.controllers.scheduler.pick = other_tied_node()
    fake_api.controllers.start()
    run = rebalance(cli, "--yes", "--timeout", "30s", "--parallel", "3")
    fake_api.controllers.stop()
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    moves = {m["pod"].split("/")[1]: m for m in run.summary["result"]["moves"]}
    assert (moves["batch-0"]["wave"], moves["web-1"]["wave"]) == (1, 1)
    assert moves["batch-0"]["candidates"] == moves["web-1"]["candidates"] == ["n4", "n5"]
    assert moves["web-1"]["retargeted"] is True  # the plan, one after the other, said n5 only
    assert all(m["asPredicted"] for m in moves.values()), moves
    assert run.summary["result"]["message"].split(": ")[1].startswith("4 as predicted")
    evictions = [i for i, r in enumerate(fake_api.requests) if r.path.endswith("/eviction")]
    first_two = {fake_api.requests[i].path.split("/")[-2] for i in evictions[:2]}
    assert first_two == {"batch-0", "web-1"}


def test_the_operator_reads_the_retarget_before_the_eviction_and_in_the_summary(fake_api, cli):
    issue_scene(fake_api)
    fake_api.controllers.scheduler.pick = other_tied_node(1)
    fake_api.controllers.start()
    run = cli("rebalance", "--yes", "--timeout", "30s", "--parallel", "1")
    fake_api.controllers.stop()
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    out = run.stdout
    retarget = out.index("shop/batch-1: now predicted n4 (the plan said n5)")
    assert out.index("evicted shop/batch-0") < retarget < out.index("evicted shop/batch-1")
    assert "shop/batch-1: n1 → n4 (as predicted, retargeted)" in out
    summary = out[out.index("Predicted against actual:"):]
    row = next(line for line in summary.splitlines() if line.startswith("shop/batch-1 "))
    assert row.split() == ["shop/batch-1", "n1", "n4", "n4", "moved"]
    assert "    retargeted before its eviction: the plan said n5" in out
    assert out.rstrip().endswith(": 4 as predicted (1 retargeted); the round ended as planned")
