"""A lost node as the real control plane played it, against kresched's recovery timeline.

`tests/fixtures/lost/node-lost-and-out-of-service.json` was recorded on the rig (kube-apiserver,
kube-scheduler and kube-controller-manager v1.36.2 with the node-lifecycle controller on; a
development aid only, never needed here): node-x's kubelet died, the lifecycle controller marked it
Unknown and tainted it, the taint manager evicted its pods, and `kresched drain node-x
--out-of-service` then ran for real. Its `how` says how it was made. Here kresched reads the same
objects and must tell what happened: who was evicted when, where the replacements went, what did
not come back by itself, and where the out-of-service run's new pods were bound.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kresched.errors import ExitCode
from kresched.model.cluster import ClusterState
from kresched.model.objects import time_seconds
from kresched.plan.lost import NODE_MONITOR_GRACE_SECONDS, is_lost, node_loss, observed_at
from kresched.plan.recovery import recovery_timeline
from kresched.sources.snapshot import load_snapshot
from tests.clirun import documents, reset_env, run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "lost" / "node-lost-and-out-of-service.json"
DATA: dict[str, Any] = json.loads(FIXTURE.read_bytes())


def snapshot(name: str) -> ClusterState:
    return load_snapshot("-", io.BytesIO(json.dumps(DATA["snapshots"][name]).encode()))


def timeline_at(t: float) -> dict[str, Any]:
    """The last recorded entry at or before `t` seconds after the kubelet died."""
    return [e for e in DATA["timeline"] if e["t"] <= t][-1]


def test_what_the_api_server_holds_about_a_lost_node_makes_it_lost():
    state = snapshot("tainted")
    node = state.node_by_name["node-x"]
    assert is_lost(node)
    assert not any(is_lost(state.node_by_name[n]) for n in ("node-a1", "node-b1"))
    # The lifecycle controller's taints carry timeAdded, NoSchedule's too; Ready is Unknown.
    assert sorted((t.key, t.effect, bool(t.time_added)) for t in node.spec.taints) == [
        ("node.kubernetes.io/unreachable", "NoExecute", True), ("node.kubernetes.io/unreachable", "NoSchedule", True)]
    loss = node_loss(state, "node-x", observed_at(state))
    assert (loss.ready, loss.ready_reason) == ("Unknown", "NodeStatusUnknown")
    # Its Lease stopped when the kubelet died; the others' go on.
    assert loss.silent_seconds is not None
    assert loss.silent_seconds > NODE_MONITOR_GRACE_SECONDS
    assert all(node_loss(state, n, observed_at(state)).silent_seconds < NODE_MONITOR_GRACE_SECONDS
               for n in ("node-a1", "node-b1"))


def test_the_eviction_times_are_the_taint_managers():
    state = snapshot("tainted")
    r = recovery_timeline(state, "node-x", observed_at(state))
    predicted = {f.pod.name: f.evicted_at for f in r.pods}
    later = timeline_at(1e9)
    actual = {p["name"]: time_seconds(p["deletionTimestamp"]) - 30 for p in later["pods"]
              if p["node"] == "node-x" and p["deletionTimestamp"]}  # each deleted with its 30 s grace
    assert actual  # the 20 s pods were evicted while recording
    assert {name: predicted[name] for name in actual} == actual
    # The DaemonSet pod tolerates the taint for ever; slow waits out the admission's 300 s.
    by = {f.pod.name.split("-")[0]: f for f in r.pods}
    assert by["agent"].outcome == "stays"
    assert by["slow"].evicted_at == time_seconds(state.node_by_name["node-x"].spec.taints[0].time_added) + 300
    assert [p for p in later["pods"] if p["name"].startswith(("agent", "slow")) and p["deletionTimestamp"]] == []


def test_the_replacements_land_where_the_scheduler_put_them():
    tainted = snapshot("tainted")
    predicted = Counter(f.lands_on for f in recovery_timeline(tainted, "node-x", observed_at(tainted)).pods
                        if f.pod.name.startswith("web-"))
    later = snapshot("beforeOutOfService")
    actual = Counter(p.node_name for p in later.pods if p.name.startswith("web-") and p.node_name != "node-x")
    assert predicted == actual == Counter({"node-a1": 1, "node-b1": 1})
    # And the timeline told from the later snapshot names them.
    r = recovery_timeline(later, "node-x", observed_at(later))
    named = Counter(n for f in r.pods if f.pod.name.startswith("web-") for n in f.replacements.values())
    assert named == actual


def test_what_does_not_come_back_by_itself_did_not():
    state = snapshot("beforeOutOfService")
    r = recovery_timeline(state, "node-x", observed_at(state))
    stuck = {f.pod.name: f for f in r.stuck}
    assert sorted(stuck) == ["db-0", "debug"]
    assert stuck["db-0"].outcome == "recreated"
    assert stuck["debug"].outcome == "gone"
    # The StatefulSet had not made db-0 again: the old one, Terminating on node-x, is its only pod.
    assert [(p.node_name, p.is_terminating) for p in state.pods if p.name == "db-0"] == [("node-x", True)]
    assert any("--out-of-service" in s for s in r.speed_up)


def test_out_of_service_the_new_pods_go_where_kresched_now_predicts():
    state = snapshot("beforeOutOfService")
    # Told at the moment the taint was added (its timeAdded, as the run wrote it).
    after = snapshot("afterOutOfService").node_by_name["node-x"]
    (taint,) = [t for t in after.spec.taints if t.key == "node.kubernetes.io/out-of-service"]
    r = recovery_timeline(state, "node-x", time_seconds(taint.time_added))
    assert r.out_of_service is not None
    predicted: dict[str, Counter[str | None]] = {}
    for f in r.out_of_service:
        if f.outcome == "recreated" or (f.outcome == "replaced" and not f.evicted):
            c = f.pod.controller
            predicted.setdefault(f"{f.pod.namespace}/{c.kind}/{c.name}", Counter())[f.lands_on] += 1
    (done,) = DATA["outOfService"]["summary"]["nodes"]
    assert predicted == {g: Counter(nodes) for g, nodes in done["landed"].items()}
    assert sorted(done["gone"]) == sorted(f.pod.key for f in r.out_of_service if f.outcome != "stays")


def test_after_out_of_service_the_node_is_empty_and_the_taint_named():
    state = snapshot("afterOutOfService")
    r = recovery_timeline(state, "node-x", observed_at(state))
    assert r.loss.out_of_service
    assert r.pods == ()
    assert r.out_of_service is None
    assert any("untaint node-x --out-of-service" in s for s in r.speed_up)
    assert {p.name: p.node_name for p in state.pods if p.name == "db-0"} == {"db-0": "node-a1"}


@pytest.mark.parametrize("name", sorted(DATA["snapshots"]))
def test_the_recorded_snapshots_read_back_with_their_leases(name: str):
    state = snapshot(name)
    assert sorted(state.lease_by_node) == ["node-a1", "node-b1", "node-x"]


# -- the commands, on the recorded snapshots ----------------------------------------------------------

@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[Callable[[str], str]]:
    def write(name: str) -> str:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(DATA["snapshots"][name]))
        return str(path)

    yield write
    reset_env()


def test_explain_node_tells_the_timeline_as_json_and_as_a_table(monkeypatch, recorded):
    source = recorded("beforeOutOfService")
    res = run_cli(monkeypatch, "explain", "node/node-x", "--snapshot", source, "-o", "json")
    assert (res.exit_code, res.stderr) == (0, "")
    out = json.loads(res.stdout)
    assert (out["node"], out["lost"], out["ready"], out["outOfService"]) == ("node-x", True, "Unknown", False)
    assert {p["pod"]: p["comesBack"] for p in out["pods"]}["shop/db-0"] is False
    assert [p["outcome"] for p in out["outOfServicePods"] if p["pod"] == "shop/db-0"] == ["recreated"]
    table = run_cli(monkeypatch, "explain", "node/node-x", "--snapshot", source, width=200)
    assert table.exit_code == 0
    assert "Not back by themselves: 2 pods" in table.stdout
    assert "kresched drain node-x --out-of-service" in table.stdout


def test_explain_on_a_pod_of_a_lost_node_says_so(monkeypatch, recorded):
    res = run_cli(monkeypatch, "explain", "shop/db-0", "--snapshot", recorded("beforeOutOfService"), "-o", "json")
    assert res.exit_code == 0
    lost = json.loads(res.stdout)["lostNode"]
    assert (lost["node"], lost["lost"], lost["fate"]["outcome"], lost["fate"]["comesBack"]) == (
        "node-x", True, "recreated", False)


def test_a_drain_dry_run_on_the_lost_node_would_never_finish(monkeypatch, recorded):
    res = run_cli(monkeypatch, "drain", "node-x", "--ignore-daemonsets", "--force", "--dry-run", "--snapshot",
                  recorded("tainted"), "-o", "json")
    assert res.exit_code == ExitCode.INFEASIBLE
    assert "the drain would never finish: node/node-x is lost" in res.stderr
    preflight, summary = documents(res.stdout)
    assert [loss["node"] for loss in preflight["lost"]] == ["node-x"]
    assert (summary["action"], summary["complete"], summary["lost"]) == ("summary", False, ["node-x"])
    oos = run_cli(monkeypatch, "drain", "node-x", "--out-of-service", "--dry-run", "--snapshot", recorded("tainted"),
                  "-o", "json")
    assert oos.exit_code == ExitCode.OK
    preflight, summary = documents(oos.stdout)
    assert (preflight["action"], preflight["node"]) == ("preflight", "node-x")
    assert preflight["outOfServicePods"]
    assert (summary["action"], summary["nodes"], summary["mode"]) == ("summary", [], "dry run")
    assert summary["message"] == "node/node-x would be tainted node.kubernetes.io/out-of-service (dry run)"
