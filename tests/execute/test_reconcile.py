"""`kresched reconcile` end to end: one pass of the critical-pod rescheduler (seed 000's control
loop) through the real command, the official client and real HTTP against the fake API server,
whose scheduler binds a pending pod once it fits (honouring kresched's reservation taint).

The scenario (`seed_cluster`): four 4-CPU nodes, each full.
- node-1: web-1 and web-2 (2 CPU each, priority 500);
- node-2..node-4: web-3..web-5 (2 CPU, priority 100) next to a system-cluster-critical pod that no
  plan may touch (sys-2..sys-4, 2 CPU).
Pending, all marked Unschedulable by the scheduler five minutes ago, all tolerating
CriticalAddonsOnly — in the order the scheduler's queue (and kresched) takes them:
- kube-system/node-agent (system-node-critical, 2 CPU) → node-2, evicting web-3;
- kube-system/dns (system-cluster-critical, 4 CPU) → node-1, evicting web-1 and web-2 (the only
  node without a critical pod);
- kube-system/legacy (priority 0, the legacy critical-pod annotation) → node-3, evicting web-4;
- shop/payments (priority 1,000,000: helped only with `--min-priority`) → node-4, evicting web-5;
  (these two select `pool: general`, which node-1 lacks: otherwise, as a real scheduler would, the
  fake binds one of them into the room freed on node-1 by dns's first eviction — the reservation
  taint keeps out only the pods that do not tolerate it);
- shop/batch (priority 10, 3 CPU): pending too, but not critical — never kresched's business.
Every victim has a 5 s grace period and no PDB (tier 1).
"""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from typer.testing import CliRunner

from kresched.cli import app
from kresched.cli.common import ENV
from kresched.errors import ExitCode
from kresched.render.manifests import ManifestOptions, build_manifests
from tests.builders import make_namespace, make_node, make_pod, make_priority_class, make_state
from tests.clirun import DURATION
from tests.execute.conftest import RESERVED_AT, RESERVED_FOR, kresched_annotations, pod, taints
from tests.fakeapi import NODES, PODS, FakeApiServer, call
from tests.fakeapi.controllers import NEVER
from tests.fakeapi.store import LEASES

OURS = {"key": "CriticalAddonsOnly", "value": "kresched", "effect": "NoSchedule"}
CLOUD = {"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}
TOLERATES = [{"key": "CriticalAddonsOnly", "operator": "Exists"}]
LEGACY = {"scheduler.alpha.kubernetes.io/critical-pod": ""}
GENERAL = {"pool": "general"}
LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kresched"
LEASE_COLLECTION = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"

#: (pod, node, victims) in the order one pass helps them.
HELPED = [("kube-system/node-agent", "node-2", ["shop/web-3"]),
          ("kube-system/dns", "node-1", ["shop/web-2", "shop/web-1"]),
          ("kube-system/legacy", "node-3", ["shop/web-4"]),
          ("shop/payments", "node-4", ["shop/web-5"])]
ALL_CRITICAL = ["--min-priority", "1000000"]


def rfc3339(seconds_ago: float) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def unschedulable(fake: FakeApiServer, key: str, seconds_ago: float = 300) -> None:
    """What the scheduler writes on a pod it cannot place (PodScheduled=False, Unschedulable)."""
    ns, name = key.split("/")
    fake.store.mutate(PODS, ns, name, lambda p: p["status"].update(conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "lastTransitionTime": rfc3339(seconds_ago), "message": "0/4 nodes are available: 4 Insufficient cpu."}]))


def seed_cluster(fake: FakeApiServer) -> None:
    nodes = [make_node("node-1", cpu="4")]
    nodes += [make_node(f"node-{i}", cpu="4", labels={"pool": "general"}) for i in range(2, 5)]
    running = [make_pod(f"web-{i}", "shop", node="node-1", cpu="2", priority=500, grace=5, labels={"app": "web"})
               for i in (1, 2)]
    running += [make_pod(f"web-{i}", "shop", node=f"node-{i - 1}", cpu="2", priority=100, grace=5,
                         labels={"app": "web"}) for i in (3, 4, 5)]
    running += [make_pod(f"sys-{i}", "kube-system", node=f"node-{i}", cpu="2", priority=2_000_000_000,
                         priority_class="system-cluster-critical", owner="DaemonSet/sys") for i in (2, 3, 4)]
    pending = [
        make_pod("node-agent", "kube-system", cpu="2", priority=2_000_001_000, priority_class="system-node-critical",
                 tolerations=TOLERATES),
        make_pod("dns", "kube-system", cpu="4", priority=2_000_000_000, priority_class="system-cluster-critical",
                 tolerations=TOLERATES),
        make_pod("legacy", "kube-system", cpu="2", priority=0, annotations=LEGACY, tolerations=TOLERATES,
                 node_selector=GENERAL),
        make_pod("payments", "shop", cpu="2", priority=1_000_000, priority_class="high", tolerations=TOLERATES,
                 node_selector=GENERAL),
        make_pod("batch", "shop", cpu="3", priority=10),
    ]
    fake.load(make_state(nodes, running + pending, [],
                         [make_priority_class("high", 1_000_000),
                          make_priority_class("system-cluster-critical", 2_000_000_000),
                          make_priority_class("system-node-critical", 2_000_001_000)],
                         [make_namespace("shop"), make_namespace("kube-system")]))
    for p in pending:
        unschedulable(fake, p.key)


@pytest.fixture
def cluster(fake_api: FakeApiServer) -> FakeApiServer:
    seed_cluster(fake_api)
    fake_api.controllers.start()
    return fake_api


#: The pass deadline `reconcile()` gives (tests of the deadline itself pass their own).
DEADLINE = 120


def reconcile(cli, *extra: str):
    # A cap, not a pace: a pass ends as soon as its pods are bound. Generous, so that a machine
    # busy with other work does not turn "bound" into "deadline reached".
    return cli("reconcile", "-o", "json", "--deadline", f"{DEADLINE}s", *extra)


def lease(fake: FakeApiServer) -> dict[str, Any] | None:
    obj = fake.store.get(LEASES, "kube-system", "kresched")
    return obj["spec"] if obj else None


def put_lease(fake: FakeApiServer, holder: str, renewed_seconds_ago: float, duration: int = 300,
              transitions: int = 3) -> None:
    renewed = (datetime.now(UTC) - timedelta(seconds=renewed_seconds_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    fake.store.put(LEASES, {"metadata": {"name": "kresched", "namespace": "kube-system"},
                            "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration,
                                     "acquireTime": renewed, "renewTime": renewed, "leaseTransitions": transitions}})


def no_reservations(fake: FakeApiServer) -> bool:
    return all(OURS not in (n["spec"].get("taints") or []) and not kresched_annotations(fake, n["metadata"]["name"])
               for n in fake.store.list(NODES))


def requests(fake: FakeApiServer) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in fake.requests]


def writes(fake: FakeApiServer) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in fake.requests if r.method != "GET"]


def pending_reasons(run) -> dict[str, str]:
    return {p["pod"]: p["reason"] for p in run.summary["stillPending"]}


#: What one pass reads to plan: the thirteen lists of `snapshot`, one page each here.
STATE_READ = [("GET", "/api/v1/namespaces"), ("GET", "/apis/scheduling.k8s.io/v1/priorityclasses"),
              ("GET", "/api/v1/nodes"), ("GET", "/apis/policy/v1/poddisruptionbudgets"),
              ("GET", "/api/v1/services"), ("GET", "/api/v1/replicationcontrollers"),
              ("GET", "/apis/apps/v1/replicasets"), ("GET", "/apis/apps/v1/statefulsets"),
              ("GET", "/apis/storage.k8s.io/v1/storageclasses"), ("GET", "/apis/storage.k8s.io/v1/csinodes"),
              ("GET", "/api/v1/persistentvolumes"), ("GET", "/api/v1/persistentvolumeclaims"),
              ("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"),
              ("GET", "/apis/resource.k8s.io"), *(("GET", f"/apis/resource.k8s.io/v1/{r}") for r in (
                  "deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates")),
              # The gang APIs' discovery: none is served here, so no PodGroup or Workload is listed.
              *(("GET", f"/apis/{gv}") for gv in ("scheduling.k8s.io/v1alpha2", "scheduling.x-k8s.io/v1alpha1",
                                                  "scheduling.volcano.sh/v1beta1")),
              ("GET", "/api/v1/pods")]


# -- one pass, several pods ---------------------------------------------------------------------------

def test_pending_critical_pods_are_helped_one_after_another_in_priority_order(cluster, cli):
    run = reconcile(cli, *ALL_CRITICAL)

    assert run.code == ExitCode.OK, run.stderr
    # One JSON line per action, pod after pod; then the summary.
    per_pod = [(line["action"], line["node"] if line["action"] in ("reserved", "released") else line["pod"])
               for line in run.lines if line["action"] in ("reserved", "evicted", "bound", "released")]
    expected = []
    for key, node, victims in HELPED:
        expected += [("reserved", node), *[("evicted", v) for v in victims], ("bound", key), ("released", node)]
    assert per_pod == expected
    assert run.actions()[-1] == "summary"
    assert all(line["mode"] == "cluster" for line in run.lines)
    summary = run.summary
    assert summary["podsHelped"] == 4
    assert summary["bound"] == [{"pod": key, "node": node} for key, node, _ in HELPED]
    assert summary["stillPending"] == []  # shop/batch is not critical: not kresched's business
    assert summary["evictions"] == 5
    assert summary["reservationsCleaned"] == 0
    assert summary["failedActions"] == []
    assert summary["lock"] == "acquired"
    # How long it took: 0.0 on a fast machine.
    assert isinstance(summary["seconds"], float)
    assert summary["seconds"] >= 0
    # The cluster afterwards: every pod runs where it was planned, no reservation is left, and the
    # scheduler bound them in the order kresched freed the room.
    assert cluster.scheduler.bindings == [(key, node) for key, node, _ in HELPED]
    for key, node, victims in HELPED:
        assert pod(cluster, key)["spec"]["nodeName"] == node
        assert all(pod(cluster, v) is None for v in victims)
    assert pod(cluster, "shop/batch")["spec"].get("nodeName") in (None, "")
    assert no_reservations(cluster)
    assert lease(cluster)["holderIdentity"] == ""


def test_without_min_priority_only_system_critical_and_annotated_pods_are_helped(cluster, cli):
    run = reconcile(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["bound"] == [{"pod": key, "node": node} for key, node, _ in HELPED[:3]]
    assert run.summary["stillPending"] == []
    assert pod(cluster, "shop/web-5") is not None


def test_a_pod_unschedulable_for_less_than_min_pending_is_left_to_the_schedulers_own_preemption(cluster, cli):
    unschedulable(cluster, "kube-system/dns", seconds_ago=10)
    run = reconcile(cli, "--min-pending", "60s")
    assert run.code == ExitCode.OK, run.stderr
    assert [b["pod"] for b in run.summary["bound"]] == ["kube-system/node-agent", "kube-system/legacy"]
    reason = pending_reasons(run)["kube-system/dns"]
    assert "less than --min-pending (60s)" in reason
    assert "scheduler's own preemption" in reason
    assert pod(cluster, "shop/web-1") is not None
    assert pod(cluster, "shop/web-2") is not None
    # Once it has been Unschedulable long enough, the next pass helps it.
    again = reconcile(cli, "--min-pending", "5s")
    assert [b["pod"] for b in again.summary["bound"]] == ["kube-system/dns"]


def test_a_pod_the_scheduler_has_not_marked_unschedulable_is_reported_and_left_alone(cluster, cli):
    cluster.store.mutate(PODS, "kube-system", "dns", lambda p: p["status"].update(conditions=[]))
    run = reconcile(cli)
    assert pending_reasons(run)["kube-system/dns"].startswith("the scheduler has not marked it Unschedulable")
    assert pod(cluster, "shop/web-1") is not None


def test_namespace_limits_the_pass_to_one_namespace(cluster, cli):
    # Left Pending (the scheduler is stuck on them): tolerating the reservation, node-agent would
    # otherwise take the room freed for payments, as the real scheduler would.
    for key, _, _ in HELPED[:3]:
        cluster.scheduler.set(key, NEVER)
    run = reconcile(cli, *ALL_CRITICAL, "--namespace", "shop")
    assert run.code == ExitCode.OK, run.stderr
    # Planned alone, payments gets the first of the equal nodes.
    assert run.summary["bound"] == [{"pod": "shop/payments", "node": "node-2"}]
    assert run.summary["stillPending"] == []  # the kube-system pods are not this pass's business
    assert [e["pod"] for e in run.events("evicted")] == ["shop/web-3"]
    assert all(pod(cluster, f"shop/web-{i}") is not None for i in (1, 2, 4, 5))


# -- pods it cannot help: reported, not retried, found again --------------------------------------------

def test_an_infeasible_pod_is_reported_with_its_reason_once_and_found_again_by_the_next_pass(cluster, cli):
    # kube-system/huge needs 6 CPU: no node has that much, whatever is evicted.
    cluster.load(make_state([], [make_pod("huge", "kube-system", cpu="6", priority=2_000_000_000,
                                          priority_class="system-cluster-critical", tolerations=TOLERATES)]))
    unschedulable(cluster, "kube-system/huge")
    cluster.scheduler.set("kube-system/huge", NEVER)
    for key, _, _ in HELPED:  # only huge is left to help
        cluster.store.delete(PODS, *key.split("/"))

    run = reconcile(cli)
    assert run.code == ExitCode.OK, run.stderr
    [cannot] = run.events("cannot-help")
    assert cannot["pod"] == "kube-system/huge"
    assert cannot["outcome"] == "infeasible"
    reason = pending_reasons(run)["kube-system/huge"]
    assert reason.startswith("0/4 nodes are available: 4 Insufficient cpu.")
    assert cannot["message"] == f"kube-system/huge: {reason}"
    # Not retried within the pass: take the Lease, read the cluster once, release the Lease.
    assert requests(cluster) == [("GET", LEASE_PATH), ("POST", LEASE_COLLECTION), *STATE_READ, ("PUT", LEASE_PATH)]

    # The next pass finds it again and says so again.
    cluster.clear_calls()
    second = reconcile(cli)
    assert second.code == ExitCode.OK
    assert [e["pod"] for e in second.events("cannot-help")] == ["kube-system/huge"]
    assert pending_reasons(second) == {"kube-system/huge": reason}
    assert requests(cluster) == [("GET", LEASE_PATH), ("PUT", LEASE_PATH), *STATE_READ, ("PUT", LEASE_PATH)]


def test_a_pod_that_could_not_be_helped_is_helped_by_the_next_pass_once_the_cluster_changed(cluster, cli):
    cluster.load(make_state([], [make_pod("huge", "kube-system", cpu="6", priority=2_000_000_000,
                                          priority_class="system-cluster-critical", tolerations=TOLERATES)]))
    unschedulable(cluster, "kube-system/huge")
    first = reconcile(cli)
    assert "kube-system/huge" in pending_reasons(first)
    # A bigger node joins, full of a low-priority pod: now an eviction helps.
    cluster.load(make_state([make_node("node-big", cpu="8")],
                            [make_pod("filler", "shop", node="node-big", cpu="8", priority=100, grace=5)]))
    second = reconcile(cli)
    assert second.code == ExitCode.OK, second.stderr
    assert second.summary["bound"] == [{"pod": "kube-system/huge", "node": "node-big"}]
    assert [e["pod"] for e in second.events("evicted")] == ["shop/filler"]
    assert second.summary["stillPending"] == []
    assert no_reservations(cluster)


# -- the eviction budget --------------------------------------------------------------------------------

def test_the_eviction_budget_stops_the_pass_cleanly_and_the_next_passes_carry_on(cluster, cli):
    # node-agent takes 1 eviction; dns needs 2 and only 1 is left: the pass stops there — even
    # though legacy would need only 1, it does not jump the queue.
    run = reconcile(cli, "--max-evictions", "2")
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["bound"] == [{"pod": "kube-system/node-agent", "node": "node-2"}]
    assert run.summary["evictions"] == 1
    reasons = pending_reasons(run)
    assert list(reasons) == ["kube-system/dns", "kube-system/legacy"]
    assert reasons["kube-system/dns"] == ("needs 2 eviction(s) but only 1 of --max-evictions 2 left in this pass; "
                                          "the next pass picks it up")
    assert reasons["kube-system/legacy"] == ("the eviction budget of this pass is used up (--max-evictions 2); "
                                             "the next pass picks it up")
    assert [e["pod"] for e in run.events("budget-exhausted")] == ["kube-system/dns"]
    # Nothing half-done: no node reserved, no victim of theirs touched.
    assert no_reservations(cluster)
    assert all(pod(cluster, f"shop/web-{i}") is not None for i in (1, 2, 4, 5))
    assert [r.path for r in cluster.calls(method="POST") if r.path.endswith("/eviction")] == [
        "/api/v1/namespaces/shop/pods/web-3/eviction"]

    second = reconcile(cli, "--max-evictions", "2")
    assert second.summary["bound"] == [{"pod": "kube-system/dns", "node": "node-1"}]
    assert list(pending_reasons(second)) == ["kube-system/legacy"]
    third = reconcile(cli, "--max-evictions", "2")
    assert third.summary["bound"] == [{"pod": "kube-system/legacy", "node": "node-3"}]
    assert third.summary["stillPending"] == []


def test_the_pass_ends_within_its_deadline_and_leaves_the_pods_it_did_not_reach_to_the_next_pass(cluster, cli):
    # The scheduler never binds node-agent: waiting for it uses up the pass's time. The deadline
    # keeps 5 s for the way out, and a pod is only started with 10 s left after that.
    cluster.scheduler.set("kube-system/node-agent", NEVER)
    run = cli("reconcile", "-o", "json", "--deadline", "16s")
    assert run.code == ExitCode.OK, run.stderr
    reasons = pending_reasons(run)
    assert reasons["kube-system/node-agent"].startswith("evicted 1 pod(s) but it was not bound within ")
    assert reasons["kube-system/dns"] == "the pass's deadline (16s) was reached; the next pass picks it up"
    assert reasons["kube-system/legacy"] == reasons["kube-system/dns"]
    assert [e["pod"] for e in run.events("deadline-reached")] == ["kube-system/dns"]
    assert [e["pod"] for e in run.events("evicted")] == ["shop/web-3"]
    assert no_reservations(cluster)
    assert lease(cluster)["holderIdentity"] == ""


def test_a_deadline_too_short_to_see_a_pod_through_evicts_nothing(cluster, cli):
    run = cli("reconcile", "-o", "json", "--deadline", "12s")
    assert run.code == ExitCode.OK, run.stderr
    assert [p["reason"] for p in run.summary["stillPending"]] == [
        "the pass's deadline (12s) was reached; the next pass picks it up"] * 3
    assert writes(cluster) == [("POST", LEASE_COLLECTION), ("PUT", LEASE_PATH)]


# -- the Lease --------------------------------------------------------------------------------------------

def test_a_lease_held_by_another_live_pass_means_nothing_to_do_and_no_writes(cluster, cli):
    put_lease(cluster, "kresched-29123456-abcde_1", renewed_seconds_ago=20)
    run = reconcile(cli)
    assert run.code == ExitCode.OK, run.stderr
    [held] = run.events("lock-held")
    assert held["holder"] == "kresched-29123456-abcde_1"
    assert held["message"].startswith("another pass holds the Lease kube-system/kresched "
                                      "(kresched-29123456-abcde_1 until ")
    assert run.summary["lock"] == "held by kresched-29123456-abcde_1"
    assert run.summary["podsHelped"] == 0
    assert requests(cluster) == [("GET", LEASE_PATH)]
    assert lease(cluster)["holderIdentity"] == "kresched-29123456-abcde_1"


def test_an_expired_lease_is_taken_over_and_released_at_the_end(cluster, cli):
    put_lease(cluster, "kresched-29123450-zzzzz_1", renewed_seconds_ago=600, duration=300, transitions=3)
    taken: list[dict] = []
    cluster.faults.script([call(lambda r: taken.append(lease(cluster)))], path="/api/v1/nodes", method="GET")
    run = reconcile(cli)
    assert run.code == ExitCode.OK, run.stderr
    [over] = run.events("lock-taken-over")
    assert over["previous"] == "kresched-29123450-zzzzz_1"
    # While the pass ran, the Lease was ours, for the pass's deadline and a minute more.
    [during] = taken
    assert during["holderIdentity"] not in ("", "kresched-29123450-zzzzz_1")
    assert (during["leaseTransitions"], during["leaseDurationSeconds"]) == (4, DEADLINE + 60)
    after = lease(cluster)
    assert (after["holderIdentity"], after["leaseTransitions"], after["leaseDurationSeconds"]) == ("", 4, 1)


def test_the_lease_is_released_when_the_pass_fails(cluster, cli):
    cluster.forbid("list", "pods")
    run = reconcile(cli)
    assert run.code == ExitCode.CLUSTER_ACCESS
    assert "forbidden: cannot list pods" in run.stderr
    assert run.summary["error"].startswith("forbidden: cannot list pods")
    assert lease(cluster)["holderIdentity"] == ""
    assert writes(cluster) == [("POST", LEASE_COLLECTION), ("PUT", LEASE_PATH)]


def test_a_lease_that_cannot_be_released_is_a_failed_action(cluster, cli):
    cluster.faults.script([500], path=LEASE_PATH, method="PUT", repeat=True)
    run = reconcile(cli)
    assert run.code == ExitCode.PARTIAL
    assert len(run.summary["bound"]) == 3  # the pass itself went well
    [failed] = run.summary["failedActions"]
    assert failed.startswith("release the Lease kube-system/kresched: ")
    assert run.events("lease-release-failed")


# -- stale reservations ---------------------------------------------------------------------------------

def reserve(fake: FakeApiServer, node: str, for_pod: str, seconds_ago: float, taint: dict = OURS) -> None:
    def change(n: dict[str, Any]) -> None:
        n["metadata"].setdefault("annotations", {}).update({RESERVED_FOR: for_pod, RESERVED_AT: rfc3339(seconds_ago)})
        n["spec"]["taints"] = [*(n["spec"].get("taints") or []), taint]

    fake.store.mutate(NODES, "", node, change)


@pytest.fixture
def reservations(fake_api: FakeApiServer) -> FakeApiServer:
    """Reservations a killed run left behind, and a managed cloud's own CriticalAddonsOnly taint."""
    nodes = [make_node(n, cpu="4") for n in ("n-bound", "n-gone", "n-old", "n-fresh", "n-cloud")]
    pods = [make_pod("bound", "shop", node="n-bound", cpu="1"), make_pod("old", "shop", cpu="1", node_selector={
        "kubernetes.io/hostname": "n-old"}), make_pod("fresh", "shop", cpu="1", node_selector={
            "kubernetes.io/hostname": "n-fresh"})]
    fake_api.load(make_state(nodes, pods))
    reserve(fake_api, "n-bound", "shop/bound", 30)
    reserve(fake_api, "n-gone", "shop/vanished", 30)
    reserve(fake_api, "n-old", "shop/old", 3600)
    reserve(fake_api, "n-fresh", "shop/fresh", 30)
    fake_api.store.mutate(NODES, "", "n-cloud", lambda n: n["spec"].update(taints=[CLOUD]))
    return fake_api


def test_stale_reservations_are_cleaned_and_a_foreign_critical_addons_taint_is_never_touched(reservations, cli):
    run = reconcile(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["reservationsCleaned"] == 3
    assert {e["node"]: e["reason"] for e in run.events("stale")} == {
        "n-bound": "shop/bound is bound to n-bound", "n-gone": "shop/vanished is gone",
        "n-old": "reserved 60m ago, longer than 10m"}
    for n in ("n-bound", "n-gone", "n-old"):
        assert (taints(reservations, n), kresched_annotations(reservations, n)) == ([], {})
    assert taints(reservations, "n-fresh") == [OURS]  # its pod is still Pending, and it is fresh
    assert taints(reservations, "n-cloud") == [CLOUD]
    patched = {r.path for r in reservations.calls(method="PATCH")}
    assert patched == {"/api/v1/nodes/n-bound", "/api/v1/nodes/n-gone", "/api/v1/nodes/n-old"}
    # A shorter TTL makes the fresh one stale too.
    assert reconcile(cli, "--reservation-ttl", "10s").summary["reservationsCleaned"] == 1
    assert no_reservations(reservations)
    assert taints(reservations, "n-cloud") == [CLOUD]


def test_a_reservation_that_cannot_be_removed_is_a_failed_action(reservations, cli):
    reservations.faults.script([500], path="/api/v1/nodes/n-gone", method="PATCH", repeat=True)
    run = reconcile(cli)
    assert run.code == ExitCode.PARTIAL
    assert run.summary["reservationsCleaned"] == 2
    [failed] = run.summary["failedActions"]
    assert failed == "release the reservation on n-gone"
    assert run.events("release-failed")[0]["node"] == "n-gone"


# -- idempotence, dry run, failures ------------------------------------------------------------------------

def test_a_second_pass_right_after_has_nothing_to_do_and_says_only_so(cluster, cli):
    first = reconcile(cli, *ALL_CRITICAL)
    assert first.summary["podsHelped"] == 4
    cluster.clear_calls()
    second = reconcile(cli, *ALL_CRITICAL)
    assert second.code == ExitCode.OK, second.stderr
    assert second.actions() == ["summary"]
    assert (second.summary["podsHelped"], second.summary["evictions"], second.summary["stillPending"],
            second.summary["reservationsCleaned"]) == (0, 0, [], 0)
    assert writes(cluster) == [("PUT", LEASE_PATH), ("PUT", LEASE_PATH)]  # take and release the Lease


def test_dry_run_plans_and_rehearses_without_writing_anything_not_even_the_lease(cluster, cli):
    put_lease(cluster, "kresched-29123456-abcde_1", renewed_seconds_ago=20)  # a real pass is running
    revision = cluster.store.revision
    run = reconcile(cli, *ALL_CRITICAL, "--dry-run")
    assert run.code == ExitCode.OK, run.stderr
    # Only the one read of the cluster: no write, and not even a read of the Lease.
    assert requests(cluster) == STATE_READ
    assert cluster.store.revision == revision
    assert run.summary["mode"] == "dry run"
    assert all(line["mode"] == "dry run" for line in run.lines)
    assert run.summary["lock"] == "acquired"  # the rehearsed one
    assert run.summary["podsHelped"] == 4
    assert [p["pod"] for p in run.summary["stillPending"]] == [key for key, _, _ in HELPED]
    assert pending_reasons(run)["kube-system/node-agent"] == (
        "dry run: would wait for the scheduler to bind it to node-2")
    _, node, victims = HELPED[0]
    assert [(e["action"], e["node"] if e["action"] == "reserved" else e["pod"]) for e in run.lines
            if e["action"] in ("reserved", "evicted")][:2] == [("reserved", node), ("evicted", victims[0])]
    assert lease(cluster)["holderIdentity"] == "kresched-29123456-abcde_1"


def test_a_dry_run_rehearses_the_plan_a_real_pass_carries_out_pod_by_pod(cluster, cli):
    run = reconcile(cli, *ALL_CRITICAL, "--dry-run")
    assert "replanned" not in run.actions()
    assert [(e["action"], e["node"] if e["action"] == "reserved" else e["pod"]) for e in run.lines
            if e["action"] in ("reserved", "evicted")] == [
        (a, x) for _, node, victims in HELPED for a, x in [("reserved", node), *[("evicted", v) for v in victims]]]
    assert run.summary["evictions"] == 5


def test_an_eviction_failing_for_good_is_a_failed_action_and_the_pass_goes_on(cluster, cli):
    # payments (the last pod) cannot have its victim evicted: preempt still waits for the binding
    # (the shortest deadline that lets it act keeps that short), then the pass ends.
    cluster.faults.script([500], path="/api/v1/namespaces/shop/pods/web-5/eviction", method="POST", repeat=True)
    run = cli("reconcile", "-o", "json", "--deadline", "16s", *ALL_CRITICAL)
    assert run.code == ExitCode.PARTIAL
    [failed] = run.summary["failedActions"]
    assert failed.startswith("evict shop/web-5: cannot create pods/eviction")
    assert "500" in failed
    assert len(cluster.calls("/api/v1/namespaces/shop/pods/web-5/eviction")) == 5  # the client's retries, once
    assert [b["pod"] for b in run.summary["bound"]] == [key for key, _, _ in HELPED[:3]]
    assert pending_reasons(run)["shop/payments"].startswith("evicted 0 pod(s) but it was not bound within ")
    assert pod(cluster, "shop/web-5") is not None
    assert no_reservations(cluster)
    assert lease(cluster)["holderIdentity"] == ""


def test_a_reservation_write_failing_for_good_is_a_failed_action_and_the_pass_goes_on(cluster, cli):
    # node-2 refuses node-agent's reservation (the client's five tries), then works again. Left
    # Pending, node-agent is not bound anywhere (its scheduler is stuck): tolerating the
    # reservation, it would otherwise take the room freed on node-1 for dns.
    cluster.scheduler.set("kube-system/node-agent", NEVER)
    cluster.faults.script([500] * 5, path="/api/v1/nodes/node-2", method="PATCH")
    run = reconcile(cli)
    assert run.code == ExitCode.PARTIAL
    [failed] = run.summary["failedActions"]
    assert failed.startswith('act for kube-system/node-agent: cannot patch nodes "node-2"')
    assert pending_reasons(run)["kube-system/node-agent"].endswith("the next pass tries again")
    assert [b["pod"] for b in run.summary["bound"]] == ["kube-system/dns", "kube-system/legacy"]
    assert pod(cluster, "shop/web-3") is not None or pod(cluster, "kube-system/legacy")["spec"]["nodeName"] == "node-2"
    assert no_reservations(cluster)


def test_forbidden_to_list_pods_is_exit_5(cluster, cli):
    cluster.forbid("list", "pods")
    run = reconcile(cli)
    assert run.code == ExitCode.CLUSTER_ACCESS
    assert run.stderr.startswith("error: forbidden: cannot list pods")
    assert run.summary["podsHelped"] == 0


def test_an_unreachable_api_server_is_exit_5(cli, closed_port_url, tmp_path):
    kubeconfig = FakeApiServer().write_kubeconfig(tmp_path / "kc", server=closed_port_url)
    run = cli("reconcile", "-o", "json", "--kubeconfig", str(kubeconfig), kubeconfig=False)
    assert run.code == ExitCode.CLUSTER_ACCESS
    assert "cannot reach the API server" in run.stderr


# -- the CronJob ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("deadline", [10, 240, 3600])
def test_the_cronjob_gives_a_pass_more_time_than_its_deadline(deadline):
    [job] = [o for o in build_manifests(ManifestOptions(deadline_seconds=deadline)) if o["kind"] == "CronJob"]
    spec = job["spec"]["jobTemplate"]["spec"]
    grace = spec["template"]["spec"]["terminationGracePeriodSeconds"]
    assert spec["activeDeadlineSeconds"] > deadline
    # Killed at activeDeadlineSeconds, a pass still gets its grace period to release what it holds.
    assert spec["activeDeadlineSeconds"] - deadline + grace >= 30
    assert job["spec"]["concurrencyPolicy"] == "Forbid"


class _Terminal(io.TextIOWrapper):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_readable_summary_instead_of_json_lines(cluster, fake_kubeconfig, monkeypatch):
    cluster.load(make_state([], [make_pod("huge", "kube-system", cpu="6", priority=2_000_000_000,
                                          priority_class="system-cluster-critical", tolerations=TOLERATES)]))
    unschedulable(cluster, "kube-system/huge")
    out = _Terminal(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(ENV, "stdout", out)
    monkeypatch.setattr(ENV, "stderr", io.StringIO())
    monkeypatch.setattr(ENV, "no_color", True)
    monkeypatch.setenv("COLUMNS", "400")
    for cached in ("out", "err"):
        ENV.__dict__.pop(cached, None)
    try:
        result = CliRunner().invoke(app, ["reconcile", "--kubeconfig", str(fake_kubeconfig)], catch_exceptions=False)
    finally:
        for cached in ("out", "err"):
            ENV.__dict__.pop(cached, None)
    out.flush()
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.buffer.getvalue().decode())
    assert result.exit_code == ExitCode.OK
    assert "{" not in text  # no JSON
    lines = text.splitlines()
    assert "✓ reserved node node-2 for kube-system/node-agent (taint CriticalAddonsOnly=kresched:NoSchedule)" in lines
    summary = lines[lines.index("✓ released node node-3") + 1:]
    assert summary[0] == f'cluster: context "fake" ({cluster.url})'
    assert summary[1:5] == ["✓ kube-system/node-agent is bound to node-2", "✓ kube-system/dns is bound to node-1",
                            "✓ kube-system/legacy is bound to node-3", "still Pending:"]
    assert summary[5].startswith("  ! kube-system/huge: 0/4 nodes are available: 4 Insufficient cpu.")
    # The closing line, last: only what is not zero (no stale reservation was removed).
    assert re.fullmatch(rf"pass done in {DURATION}: 3 pods helped \(4 evictions\), 1 still Pending", summary[-1])
    assert len(summary) == 7


def test_a_reservation_time_without_a_zone_is_cleaned_as_stale_and_the_pass_goes_on(reservations, cli):
    reservations.store.mutate(NODES, "", "n-fresh", lambda n: n["metadata"]["annotations"].update(
        {RESERVED_AT: "2025-01-01T00:00:00"}))
    run = reconcile(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["reservationsCleaned"] == 4
    assert "is not an RFC 3339 time with a zone" in {e["node"]: e["reason"] for e in run.events("stale")}["n-fresh"]
    assert no_reservations(reservations)


def test_rbac_forbidding_node_patches_ends_the_pass_with_exit_5_the_rule_and_what_stays(reservations, cli):
    reservations.forbid("patch", "nodes")
    run = reconcile(cli)
    assert run.code == ExitCode.CLUSTER_ACCESS
    error = run.stderr.splitlines()[-1]
    assert error.startswith('error: forbidden: cannot patch nodes "n-bound" at the cluster scope (needs RBAC: '
                            'apiGroups [""], resources ["nodes"], verbs ["patch"]')
    assert error.endswith("`kresched untaint n-bound` removes it")
    assert lease(reservations)["holderIdentity"] == ""  # the Lease is released all the same
