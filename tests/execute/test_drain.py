"""`kresched drain` end to end: the real command, the official client, real HTTP, and a fake API
server whose eviction answers are eviction.go's (PodDisruptionBudget 429s included), with its
scheduler, kubelet, disruption, ReplicaSet and StatefulSet controllers stepped by the tests."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kresched.errors import ExitCode
from tests.builders import make_namespace, make_node, make_pdb, make_pod, make_state
from tests.execute.conftest import Cli, body, node, pod, writes
from tests.fakeapi import DROP, NODES, PDBS, PODS, RESET, FakeApiServer, call, status
from tests.fakeapi.controllers import bind_to

ROOT = Path(__file__).resolve().parents[2]
EMPTY_DIR = [{"name": "scratch", "emptyDir": {}}]
PDB_PATH = "/apis/policy/v1/namespaces/shop/poddisruptionbudgets/web"
PDBS_PATH = "/apis/policy/v1/namespaces/shop/poddisruptionbudgets"
NODE_A_PODS = {"fieldSelector": "spec.nodeName=node-a"}


def evictions(fake: FakeApiServer) -> list[tuple[str, int | None]]:
    """(pod name, HTTP status) of every eviction request, in order."""
    return [(r.path.split("/")[-2], r.status) for r in fake.requests if r.path.endswith("/eviction")]


def cordoned(fake: FakeApiServer, name: str = "node-a") -> bool:
    return bool(node(fake, name)["spec"].get("unschedulable"))


def web(n: int, **kw: Any) -> list:
    return [make_pod(f"web-{i}", "shop", node="node-a", cpu="1", labels={"app": "web"}, owner="ReplicaSet/web-7d9",
                     **kw) for i in range(n)]


def seed(fake: FakeApiServer, pods: list, *, pdbs: tuple = (), nodes: list | None = None) -> None:
    nodes = nodes or [make_node("node-a", cpu="8"), make_node("node-b", cpu="8")]
    namespaces = sorted({p.namespace for p in pods})
    fake.load(make_state(nodes, pods, list(pdbs), [], [make_namespace(n) for n in namespaces]))
    fake.controllers.pdbs.sync()  # statuses as the disruption controller writes them


def web_pdb(**spec: Any):
    return make_pdb("web", "shop", selector={"app": "web"}, **spec)


def drain(cli, *args: str):
    return cli("drain", *args, "-o", "json")


# -- kubectl's pod classes, before anything is touched ----------------------------------------------

def seed_every_class(fake: FakeApiServer) -> None:
    seed(fake, [
        make_pod("web-1", "shop", node="node-a", cpu="1", owner="ReplicaSet/web-7d9"),
        make_pod("fluent-bit-x2", "logging", node="node-a", cpu="100m", owner="DaemonSet/fluent-bit"),
        make_pod("cache-0", "shop", node="node-a", cpu="1", owner="StatefulSet/cache", volumes=EMPTY_DIR),
        make_pod("debug", "default", node="node-a", owner=None),
        make_pod("report-1", "default", node="node-a", owner=None, phase="Succeeded", ready=False),
        make_pod("kube-proxy-node-a", "kube-system", node="node-a", owner="Node/node-a",
                 annotations={"kubernetes.io/config.mirror": "0d8e"}),
    ])


def test_pods_kubectl_refuses_refuse_the_drain_in_kubectls_words_before_even_a_cordon(fake_api, cli):
    seed_every_class(fake_api)
    run = drain(cli, "node-a", "--yes")
    assert run.code == ExitCode.INFEASIBLE, run.stderr
    [refused] = run.events("refused")
    assert refused["message"] == (
        'error: unable to drain node "node-a" due to error: [cannot delete Pods that declare no controller '
        "(use --force to override): default/debug, cannot delete DaemonSet-managed Pods (use "
        "--ignore-daemonsets to ignore): logging/fluent-bit-x2, cannot delete Pods with local storage (use "
        "--delete-emptydir-data to override): shop/cache-0]")
    assert writes(fake_api) == []
    assert not cordoned(fake_api)


def test_with_the_flags_the_drain_evicts_all_but_daemonset_and_mirror_pods(fake_api, cli):
    seed_every_class(fake_api)
    run = drain(cli, "node-a", "--yes", "--ignore-daemonsets", "--delete-emptydir-data", "--force")
    assert run.code == ExitCode.OK, run.stderr
    assert writes(fake_api)[0] == ("PATCH", "/api/v1/nodes/node-a")  # cordoned first
    assert sorted(name for name, _ in evictions(fake_api)) == ["cache-0", "debug", "report-1", "web-1"]
    assert {s for _, s in evictions(fake_api)} == {201}
    (preflight,) = run.events("preflight")[0]["nodes"]
    assert {s["pod"]: s["reason"] for s in preflight["skip"]} == {
        "logging/fluent-bit-x2": "ignoring DaemonSet-managed Pods",
        "kube-system/kube-proxy-node-a": "mirror pod (a static pod the kubelet runs; the API cannot delete it)"}
    assert pod(fake_api, "logging/fluent-bit-x2") is not None
    assert pod(fake_api, "kube-system/kube-proxy-node-a") is not None
    assert sorted(run.summary["gone"]) == ["default/debug", "default/report-1", "shop/cache-0", "shop/web-1"]
    assert run.summary["complete"] is True
    assert cordoned(fake_api)


# -- PodDisruptionBudgets ------------------------------------------------------------------------------

def test_a_budget_of_one_drains_three_pods_one_at_a_time_watching_the_pdb_until_it_recovers(fake_api, cli):
    seed(fake_api, web(3), pdbs=(web_pdb(max_unavailable=1),))
    fake_api.controllers.replicasets.enabled = True
    fake_api.controllers.pdbs.enabled = True

    def catch_up(request: Any) -> None:
        # While kresched watches the PDB, the cluster catches up: the evicted pod's replacement is
        # created, scheduled on node-b, started, and the disruption controller gives the budget back.
        fake_api.advance(0)

    fake_api.faults.script([call(catch_up)], path=PDBS_PATH, query={"watch": "true"}, repeat=True)
    run = drain(cli, "node-a", "--yes", "--timeout", "20s")

    assert run.code == ExitCode.OK, run.stderr
    (preflight,) = run.events("preflight")[0]["nodes"]
    assert [(e["pod"], e["pdb"], e["blocked"], e["landsOn"]) for e in preflight["evict"]] == [
        ("shop/web-0", "shop/web", None, "node-b"), ("shop/web-1", "shop/web", None, "node-b"),
        ("shop/web-2", "shop/web", None, "node-b")]
    # In order; each 429 is followed by one read of the PDB and one watch from that read, whose
    # event (the budget given back) sends the eviction again at once: no polling, no fixed pause.
    sequence = [(r.method, r.path.rsplit("/", 2)[-2] if r.method == "POST" else
                 "watch pdb" if r.query.get("watch") == "true" else "list pdb", r.status)
                for r in fake_api.requests if r.path.endswith("/eviction") or r.path in (PDB_PATH, PDBS_PATH)]
    assert sequence == [
        ("POST", "web-0", 201),
        ("POST", "web-1", 429), ("GET", "list pdb", 200), ("GET", "watch pdb", 200), ("POST", "web-1", 201),
        ("POST", "web-2", 429), ("GET", "list pdb", 200), ("GET", "watch pdb", 200), ("POST", "web-2", 201),
    ]
    assert all(r.query.get("fieldSelector") == "metadata.name=web" for r in fake_api.requests if r.path == PDBS_PATH)
    blocked = run.events("pdb-blocked")
    assert [b["pod"] for b in blocked] == ["shop/web-1", "shop/web-2"]
    # The API server's words, from the status the eviction of web-0 left (it only took the budget).
    assert blocked[0]["reason"] == ("Cannot evict pod as it would violate the pod's disruption budget. "
                                    "The disruption budget web needs 2 healthy pods and has 3 currently")
    assert run.summary["evicted"] == ["shop/web-0", "shop/web-1", "shop/web-2"]
    assert run.summary["complete"] is True
    fake_api.advance(0)
    assert len(fake_api.controllers.replicasets.created) == 3
    assert [p["spec"]["nodeName"] for p in fake_api.store.list(PODS)] == ["node-b"] * 3


def test_where_rbac_forbids_watching_the_pdb_the_drain_reads_it_until_it_recovers(fake_api, cli):
    seed(fake_api, web(2), pdbs=(web_pdb(max_unavailable=1),))
    fake_api.controllers.replicasets.enabled = True
    fake_api.controllers.pdbs.enabled = True
    fake_api.forbid("watch", "poddisruptionbudgets.policy")
    reads = []

    def catch_up(request: Any) -> None:
        if request.query.get("watch") != "true":
            reads.append(request)
        if len(reads) == 3:  # the budget comes back after a few reads
            fake_api.advance(0)

    fake_api.faults.script([call(catch_up)], path=PDBS_PATH, repeat=True)
    run = drain(cli, "node-a", "--yes", "--timeout", "20s")

    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["evicted"] == ["shop/web-0", "shop/web-1"]
    watches = [r for r in fake_api.requests if r.path == PDBS_PATH and r.query.get("watch") == "true"]
    assert [r.status for r in watches] == [403]  # refused once, then never asked again
    assert len([r for r in fake_api.requests if r.path == PDBS_PATH and r.query.get("watch") != "true"]) >= 3


def test_a_budget_that_never_recovers_times_out_saying_what_is_blocked_and_why(fake_api, cli):
    seed(fake_api, [*web(3), make_pod("api-0", "shop", node="node-a", cpu="1")],
         pdbs=(web_pdb(min_available=3),))
    run = drain(cli, "node-a", "--yes", "--timeout", "1s")

    assert run.code == ExitCode.PARTIAL, run.stderr
    reason = ("Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web needs "
              "3 healthy pods and has 3 currently")
    assert run.summary["blocked"] == [
        {"pod": "shop/web-0", "reason": reason},
        {"pod": "shop/web-1", "reason": "queued behind shop/web-0 for PodDisruptionBudget shop/web"},
        {"pod": "shop/web-2", "reason": "queued behind shop/web-0 for PodDisruptionBudget shop/web"}]
    assert run.summary["gone"] == ["shop/api-0"]
    assert run.summary["complete"] is False
    # The pre-flight said so before anything was done.
    (preflight,) = run.events("preflight")[0]["nodes"]
    assert {e["pod"]: e["blocked"] for e in preflight["evict"]}["shop/web-0"] == (
        "PodDisruptionBudget shop/web allows no more disruptions (needs 3 healthy pods, has 3)")
    # One eviction request, then the PDB watched (not hammered) until the timeout.
    assert [e for e in evictions(fake_api) if e[0].startswith("web")] == [("web-0", 429)]
    assert any(r.query.get("watch") == "true" for r in fake_api.requests if r.path == PDBS_PATH)
    [gave_up] = run.events("gave-up")
    assert gave_up["queued"] == ["shop/web-1", "shop/web-2"]
    assert cordoned(fake_api)
    assert "kubectl uncordon node-a" in run.events("incomplete")[0]["message"]


# -- where pods land -------------------------------------------------------------------------------

def test_pods_that_would_stay_pending_refuse_the_drain_untouched_unless_allowed(fake_api, cli):
    seed(fake_api, web(2, grace=5), nodes=[make_node("node-a", cpu="8"), make_node("node-b", cpu="500m")])
    run = drain(cli, "node-a", "--yes")
    assert run.code == ExitCode.INFEASIBLE, run.stderr
    [refused] = run.events("refused")
    assert refused["pods"] == ["shop/web-0", "shop/web-1"]
    assert "--allow-pending" in refused["message"]
    assert fake_api.requests
    assert writes(fake_api) == []
    assert not cordoned(fake_api)

    run = drain(cli, "node-a", "--yes", "--allow-pending")
    assert run.code == ExitCode.OK, run.stderr
    assert sorted(run.summary["gone"]) == ["shop/web-0", "shop/web-1"]
    assert cordoned(fake_api)


def test_several_nodes_drain_together_and_none_of_them_takes_the_others_pods(fake_api, cli):
    nodes = [make_node("node-a", cpu="4"), make_node("node-b", cpu="32"), make_node("node-c", cpu="4")]
    pods = [make_pod("api-0", "shop", node="node-a", cpu="1"), make_pod("api-1", "shop", node="node-b", cpu="1")]
    seed(fake_api, pods, nodes=nodes)

    dry = cli("drain", "node-a", "node-b", "--dry-run", "-o", "json")
    assert dry.code == ExitCode.OK, dry.stderr
    assert dry.actions() == ["preflight", "summary"]
    assert (dry.summary["complete"], dry.summary["message"]) == (True, "node/node-a, node/node-b drained: 2 pods "
                                                                       "evicted (dry run)")
    # node-b has the most room, but it is drained too: everything lands on node-c.
    assert dry.events("preflight") == [{"action": "preflight", "nodes": [
        {"node": "node-a", "evict": [{"pod": "shop/api-0", "pdb": None, "blocked": None, "landsOn": "node-c",
                                    "candidates": ["node-c"], "likely": False}],
         "skip": [], "errors": []},
        {"node": "node-b", "evict": [{"pod": "shop/api-1", "pdb": None, "blocked": None, "landsOn": "node-c",
                                    "candidates": ["node-c"], "likely": False}],
         "skip": [], "errors": []}]}]

    run = drain(cli, "node-a", "node-b", "--yes")
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["cordoned"] == ["node-a", "node-b"]
    assert sorted(run.summary["gone"]) == ["shop/api-0", "shop/api-1"]
    assert cordoned(fake_api, "node-a")
    assert cordoned(fake_api, "node-b")
    assert not cordoned(fake_api, "node-c")


def test_a_statefulset_pod_recreated_under_its_name_counts_as_gone(fake_api, cli):
    seed(fake_api, [make_pod("db-0", "data", node="node-a", cpu="1", owner="StatefulSet/db")])
    fake_api.controllers.statefulsets.enabled = True
    # The new db-0 goes straight back to node-a (as a pod pinned to its node's local volume would).
    fake_api.scheduler.set("data/db-0", bind_to("node-a", when="now"))
    # Before the first look at node-a's pods, the cluster catches up: db-0 is back, with a new UID.
    fake_api.faults.script([call(lambda r: fake_api.advance(0))], path="/api/v1/pods", query=NODE_A_PODS)
    run = drain(cli, "node-a", "--yes", "--timeout", "5s")

    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["gone"] == ["data/db-0"]
    assert fake_api.controllers.statefulsets.recreated == ["data/db-0"]
    new = pod(fake_api, "data/db-0")
    assert new["metadata"]["uid"] != "uid-data-db-0"
    assert new["spec"]["nodeName"] == "node-a"
    [eviction] = [r for r in fake_api.requests if r.path.endswith("/eviction")]
    assert body(eviction)["deleteOptions"]["preconditions"] == {"uid": "uid-data-db-0"}


# -- how pods go ---------------------------------------------------------------------------------------

def test_disable_eviction_deletes_and_never_asks_the_eviction_api(fake_api, cli):
    seed(fake_api, web(2, grace=20), pdbs=(web_pdb(min_available=2),))
    run = drain(cli, "node-a", "--yes", "--disable-eviction")
    assert run.code == ExitCode.OK, run.stderr
    assert evictions(fake_api) == []
    deletes = [r for r in fake_api.requests if r.method == "DELETE"]
    assert sorted(r.path for r in deletes) == ["/api/v1/namespaces/shop/pods/web-0",
                                               "/api/v1/namespaces/shop/pods/web-1"]
    assert {body(r)["gracePeriodSeconds"] for r in deletes} == {20}
    assert run.actions().count("deleted") == 2
    assert fake_api.store.get(PDBS, "shop", "web")["status"]["disruptionsAllowed"] == 0


@pytest.mark.parametrize(("flags", "grace"), [((), 45), (("--grace-period", "7"), 7)],
                         ids=["each pod's own", "--grace-period"])
def test_grace_period(fake_api, cli, flags, grace):
    seed(fake_api, web(2, grace=45))
    run = drain(cli, "node-a", "--yes", *flags)
    assert run.code == ExitCode.OK, run.stderr
    sent = [body(r)["deleteOptions"]["gracePeriodSeconds"] for r in fake_api.requests if r.path.endswith("/eviction")]
    assert sent == [grace, grace]


def test_pod_selector_drains_only_the_pods_it_selects(fake_api, cli):
    seed(fake_api, [*web(2), make_pod("api-0", "shop", node="node-a", cpu="1", labels={"app": "api"})])
    run = drain(cli, "node-a", "--yes", "--pod-selector", "app=web")
    assert run.code == ExitCode.OK, run.stderr
    assert sorted(name for name, _ in evictions(fake_api)) == ["web-0", "web-1"]
    assert pod(fake_api, "shop/api-0") is not None


def test_pods_still_terminating_at_the_timeout_leave_the_drain_unfinished(fake_api, cli):
    seed(fake_api, web(1, grace=30))
    fake_api.pods.termination = "graceful"  # and the fake's clock does not move: web-0 never goes
    run = drain(cli, "node-a", "--yes", "--timeout", "500ms")
    assert run.code == ExitCode.PARTIAL, run.stderr
    assert run.summary["evicted"] == ["shop/web-0"]
    assert run.summary["stillTerminating"] == ["shop/web-0"]
    assert run.summary["gone"] == []
    assert pod(fake_api, "shop/web-0")["metadata"]["deletionTimestamp"]


def test_an_eviction_rbac_forbids_stops_the_drain_with_the_verb_and_resource(fake_api, cli):
    seed(fake_api, web(1))
    fake_api.forbid("create", "pods/eviction")
    run = drain(cli, "node-a", "--yes")
    assert run.code == ExitCode.CLUSTER_ACCESS, run.stderr
    [line] = run.stderr.splitlines()
    assert line.startswith('error: forbidden: cannot create pods/eviction "web-0" in the namespace "shop" '
                           '(needs RBAC: apiGroups [""], resources ["pods/eviction"], verbs ["create"]')
    # The cordon stays, and the line says how to undo it.
    assert line.endswith("; node-a stays cordoned: `kubectl uncordon node-a` removes the cordon")
    assert pod(fake_api, "shop/web-0") is not None


def test_the_dry_run_and_the_server_dry_run_are_exclusive_as_in_preempt(fake_api, cli):
    seed(fake_api, web(1))
    run = drain(cli, "node-a", "--dry-run", "--server-dry-run")
    assert run.code == ExitCode.USAGE
    [line] = run.stderr.splitlines()
    assert line.startswith("error: --dry-run=client and --dry-run=server are exclusive")
    assert not fake_api.calls()


# -- faults --------------------------------------------------------------------------------------------

def test_server_errors_and_dropped_connections_are_retried(fake_api, cli):
    seed(fake_api, web(2))
    fake_api.faults.script([503, DROP], path="/api/v1/namespaces/shop/pods/web-0/eviction", method="POST")
    fake_api.faults.script([status(500), RESET], path="/api/v1/pods", query=NODE_A_PODS)
    fake_api.faults.script([DROP], path="/api/v1/nodes/node-a", method="PATCH")
    run = drain(cli, "node-a", "--yes")
    assert run.code == ExitCode.OK, run.stderr
    assert [s for name, s in evictions(fake_api) if name == "web-0"] == [503, None, 201]
    assert [r.status for r in fake_api.calls("/api/v1/pods") if r.query.get("fieldSelector")][:3] == [500, None, 200]
    assert sorted(run.summary["gone"]) == ["shop/web-0", "shop/web-1"]
    assert not fake_api.faults.pending()
    assert cordoned(fake_api)


# -- dry runs and confirmation -----------------------------------------------------------------------

def test_dry_run_prints_the_preflight_contract_and_writes_nothing(fake_api, cli):
    seed(fake_api, [
        make_pod("api-0", "shop", node="node-a", cpu="1"),
        *web(1),
        make_pod("fluent-bit-x2", "logging", node="node-a", owner="DaemonSet/fluent-bit"),
        make_pod("debug", "default", node="node-a", owner=None),
    ], pdbs=(web_pdb(min_available=1),))
    run = cli("drain", "node-a", "--dry-run", "--ignore-daemonsets", "-o", "json")
    assert run.code == ExitCode.INFEASIBLE  # the bare pod needs --force
    preflight, summary = run.lines
    assert preflight == {
        "action": "preflight",
        "nodes": [{
            "node": "node-a",
            "evict": [{"pod": "shop/api-0", "pdb": None, "blocked": None, "landsOn": "node-b",
                       "candidates": ["node-b"], "likely": False},
                      {"pod": "shop/web-0", "pdb": "shop/web",
                       "blocked": "PodDisruptionBudget shop/web allows no more disruptions (needs 1 healthy pods, "
                                  "has 1)",
                       "landsOn": "node-b", "candidates": ["node-b"], "likely": False}],
            "skip": [{"pod": "logging/fluent-bit-x2", "reason": "ignoring DaemonSet-managed Pods"}],
            "errors": [{"pod": "default/debug",
                        "reason": "cannot delete Pods that declare no controller (use --force to override)"}],
        }],
        "flags": ["--force"],
    }
    # Every streamed command ends with a summary: here, why the drain would not finish.
    assert (summary["action"], summary["complete"], summary["refused"], summary["mode"]) == (
        "summary", False, ["default/debug"], "dry run")
    assert summary["message"].startswith("node/node-a would not be drained: kubectl would refuse 1 pod without "
                                         "--force")
    assert {r.method for r in fake_api.requests} == {"GET"}
    assert not cordoned(fake_api)


def test_server_dry_run_sends_every_write_with_dry_run_all_and_changes_nothing(fake_api, cli):
    seed(fake_api, web(2), pdbs=(web_pdb(max_unavailable=2),))
    before = dict(fake_api.store.objects)
    run = drain(cli, "node-a", "--yes", "--server-dry-run")
    assert run.code == ExitCode.OK, run.stderr
    sent = [r for r in fake_api.requests if r.method != "GET"]
    assert (sent[0].method, sent[0].path) == ("PATCH", "/api/v1/nodes/node-a")
    assert sorted(name for name, _ in evictions(fake_api)) == ["web-0", "web-1"]
    assert all(r.query.get("dryRun") == "All" for r in sent)
    assert fake_api.store.objects == before
    assert run.events("evicted")[0]["mode"] == "server dry run"


def test_without_yes_and_without_a_terminal_nothing_is_done(fake_api, cli):
    seed(fake_api, web(1))
    run = drain(cli, "node-a")
    assert run.code == ExitCode.USAGE
    assert "pass --yes" in run.stderr
    assert writes(fake_api) == []
    assert fake_api.store.get(NODES, "", "node-a")["spec"].get("unschedulable") is not True
    assert pod(fake_api, "shop/web-0") is not None


# -- Ctrl-C, for real ----------------------------------------------------------------------------------

def wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the condition")
        time.sleep(0.01)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_drain_starts_no_new_eviction_and_leaves_the_node_cordoned(fake_api, fake_kubeconfig, signum):
    # Budget 1 and nothing gives it back: web-0 goes, web-1 is refused and its PDB watched.
    seed(fake_api, web(3), pdbs=(web_pdb(max_unavailable=1),))
    env = {**os.environ, "KRESCHED_BACKOFF_SCALE": "0.01", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kresched", "drain", "node-a", "--yes", "-o", "json", "--timeout", "60s",
         "--kubeconfig", str(fake_kubeconfig)],
        cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: any(r.query.get("watch") == "true" for r in fake_api.calls(PDBS_PATH))
                 or proc.poll() is not None)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)  # (a bound on a hang, generous on a loaded machine)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == ExitCode.INTERRUPTED, err.decode()
    lines = [msgspec.json.decode(line) for line in out.splitlines() if line.startswith(b"{")]
    # The summary is the stream's last document, after what stays behind.
    summary = lines[-1]
    assert summary["action"] == "summary"
    assert summary["evicted"] == ["shop/web-0"]
    assert summary["notStarted"] == ["shop/web-1", "shop/web-2"]
    assert summary["gone"] + summary["stillTerminating"] == ["shop/web-0"]
    assert summary["message"].startswith("node/node-a not drained (interrupted): 1 pod evicted, 2 not started")
    assert lines[-2]["action"] == "interrupted"
    assert "node-a stays cordoned (kubectl uncordon node-a to undo)" in lines[-2]["message"]
    assert evictions(fake_api) == [("web-0", 201), ("web-1", 429)]
    assert pod(fake_api, "shop/web-1") is not None
    assert pod(fake_api, "shop/web-2") is not None
    assert cordoned(fake_api)
    assert fake_api.store.get(PODS, "shop", "web-0") is None


# -- the same pods as kubectl ------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_and_kresched_evict_the_same_pods_of_every_class(tmp_path, monkeypatch):
    # No DaemonSet pod here: kubectl looks its DaemonSet up, and the fake serves no apps/v1.
    pods = [
        make_pod("web-1", "shop", node="node-a", cpu="1", owner="ReplicaSet/web-7d9"),
        make_pod("cache-0", "shop", node="node-a", cpu="1", owner="StatefulSet/cache", volumes=EMPTY_DIR),
        make_pod("debug", "default", node="node-a", owner=None),
        make_pod("report-1", "default", node="node-a", owner=None, phase="Succeeded", ready=False),
        make_pod("kube-proxy-node-a", "kube-system", node="node-a", owner="Node/node-a",
                 annotations={"kubernetes.io/config.mirror": "0d8e"}),
    ]
    flags = ["--delete-emptydir-data", "--force"]
    evicted = {}
    for tool in ("kubectl", "kresched"):
        # client-go sends no bearer token over plain HTTP: this server asks for none.
        with FakeApiServer(token=None) as fake:
            seed(fake, pods)
            kubeconfig = fake.write_kubeconfig(tmp_path / f"{tool}.kubeconfig")
            if tool == "kubectl":
                proc = subprocess.run(["kubectl", "drain", "node-a", *flags, "--timeout", "20s",
                                       "--kubeconfig", str(kubeconfig)], capture_output=True, text=True, timeout=60)
                assert proc.returncode == 0, proc.stderr
            else:
                run = Cli(monkeypatch, kubeconfig)("drain", "node-a", *flags, "--yes", "-o", "json")
                assert run.code == ExitCode.OK, run.stderr
            evicted[tool] = sorted(r.path for r in fake.requests if r.path.endswith("/eviction"))
            assert cordoned(fake)
    assert evicted["kresched"] == evicted["kubectl"]
    assert len(evicted["kubectl"]) == 4
