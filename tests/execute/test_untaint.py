"""`kresched untaint`: removes kresched's reservations that are no longer needed — and nothing else."""

from __future__ import annotations

import time

import pytest

from kresched.errors import ExitCode
from tests.builders import make_node, make_pod, make_state
from tests.execute.conftest import RESERVED_AT, RESERVED_FOR, kresched_annotations, taints
from tests.fakeapi import NODES, FakeApiServer, call

OURS = {"key": "CriticalAddonsOnly", "value": "kresched", "effect": "NoSchedule"}
CLOUD = {"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}
GPU = {"key": "gpu", "value": "true", "effect": "NoSchedule"}


def rfc3339(seconds_ago: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds_ago))


def reserved(fake: FakeApiServer, name: str, pod: str, seconds_ago: float = 5) -> None:
    fake.store.mutate(NODES, "", name, lambda n: n["metadata"].update(
        annotations={RESERVED_FOR: pod, RESERVED_AT: rfc3339(seconds_ago), "team": "infra"}))


@pytest.fixture
def reservations(fake_api: FakeApiServer) -> FakeApiServer:
    """One node per case; every node but n-cloud carries a kresched reservation."""
    nodes = [
        make_node("n-bound", taints=[OURS]),
        make_node("n-gone", taints=[GPU, OURS]),
        make_node("n-old", taints=[OURS]),
        make_node("n-fresh", taints=[OURS]),
        make_node("n-cloud", taints=[CLOUD]),  # a managed cloud's system pool: not kresched's
        make_node("n-cloud-stale", taints=[CLOUD]),  # kresched's annotations, the cloud's taint
    ]
    pods = [make_pod("bound", "shop", node="n-bound"), make_pod("old", "shop"), make_pod("fresh", "shop")]
    fake_api.load(make_state(nodes, pods))
    reserved(fake_api, "n-bound", "shop/bound")
    reserved(fake_api, "n-gone", "shop/vanished")
    reserved(fake_api, "n-old", "shop/old", seconds_ago=3600)
    reserved(fake_api, "n-fresh", "shop/fresh")
    reserved(fake_api, "n-cloud-stale", "shop/vanished")
    return fake_api


def test_stale_reservations_go_and_a_fresh_one_for_a_pending_pod_stays(reservations, cli):
    run = cli("untaint", "-o", "json")
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["removed"] == ["n-bound", "n-cloud-stale", "n-gone", "n-old"]
    assert run.summary["kept"] == ["n-fresh"]
    reasons = {e["node"]: e["reason"] for e in run.events("stale")}
    assert reasons == {"n-bound": "shop/bound is bound to n-bound", "n-gone": "shop/vanished is gone",
                       "n-cloud-stale": "shop/vanished is gone", "n-old": "reserved 60m ago, longer than 10m"}
    assert run.events("kept")[0]["reason"].startswith("shop/fresh is still Pending; reserved ")
    for name in ("n-bound", "n-old"):
        assert (taints(reservations, name), kresched_annotations(reservations, name)) == ([], {})
    assert taints(reservations, "n-gone") == [GPU]  # other taints are kept as they were
    assert taints(reservations, "n-fresh") == [OURS]
    assert kresched_annotations(reservations, "n-fresh")[RESERVED_FOR] == "shop/fresh"
    # Someone else's annotation stays.
    assert reservations.store.get(NODES, "", "n-old")["metadata"]["annotations"] == {"team": "infra"}


def test_a_critical_addons_taint_kresched_did_not_place_survives_every_untaint(reservations, cli):
    assert cli("untaint", "--all", "-o", "json").code == ExitCode.OK
    assert taints(reservations, "n-cloud") == [CLOUD]
    assert taints(reservations, "n-cloud-stale") == [CLOUD]
    assert kresched_annotations(reservations, "n-cloud-stale") == {}
    patched = {r.path for r in reservations.calls(method="PATCH")}
    assert "/api/v1/nodes/n-cloud" not in patched


def test_all_removes_every_kresched_reservation(reservations, cli):
    run = cli("untaint", "--all", "-o", "json")
    assert run.summary["removed"] == ["n-bound", "n-cloud-stale", "n-fresh", "n-gone", "n-old"]
    assert all(OURS not in taints(reservations, n["metadata"]["name"]) for n in reservations.store.list(NODES))


def test_older_than_sets_how_old_a_reservation_may_be(reservations, cli):
    run = cli("untaint", "n-fresh", "n-old", "--older-than", "2h", "-o", "json")
    assert (run.summary["removed"], run.summary["kept"]) == ([], ["n-fresh", "n-old"])
    run = cli("untaint", "n-fresh", "--older-than", "1s", "-o", "json")
    assert run.summary["removed"] == ["n-fresh"]


def test_dry_run_changes_nothing(reservations, cli):
    revision = reservations.store.revision
    run = cli("untaint", "--all", "--dry-run", "-o", "json")
    assert run.code == ExitCode.OK
    assert run.summary["mode"] == "dry run"
    assert run.summary["removed"] == ["n-bound", "n-cloud-stale", "n-fresh", "n-gone", "n-old"]
    assert {r.method for r in reservations.requests} == {"GET"}
    assert reservations.store.revision == revision


def test_an_unknown_node_is_a_usage_error(reservations, cli):
    run = cli("untaint", "n-nope")
    assert run.code == ExitCode.USAGE
    assert run.stderr.strip() == "error: node n-nope not found; did you mean n-gone?"
    assert {r.method for r in reservations.requests} == {"GET"}


def test_a_node_reserved_again_for_another_pod_meanwhile_is_left_alone(reservations, cli):
    # untaint read n-gone as reserved for a vanished pod; before it writes, a new run reserves the
    # node for shop/fresh: that reservation is not stale and must stay.
    reservations.faults.script([call(lambda r: reserved(reservations, "n-gone", "shop/fresh"))],
                               path="/api/v1/nodes/n-gone", method="GET")
    run = cli("untaint", "n-gone", "-o", "json")
    assert run.code == ExitCode.OK
    assert run.events("release-skipped")[0]["pod"] == "shop/fresh"
    assert (run.summary["removed"], run.summary["kept"]) == ([], ["n-gone"])
    assert kresched_annotations(reservations, "n-gone")[RESERVED_FOR] == "shop/fresh"
    assert taints(reservations, "n-gone") == [GPU, OURS]
    assert reservations.calls("/api/v1/nodes/n-gone", "PATCH") == []


def test_a_hand_edited_reservation_time_without_a_zone_is_reported_stale_and_the_others_still_work(reservations, cli):
    # `2025-01-01T00:00:00` has no offset: it once made every untaint fail on comparing datetimes.
    reservations.store.mutate(NODES, "", "n-fresh", lambda n: n["metadata"]["annotations"].update(
        {RESERVED_AT: "2025-01-01T00:00:00"}))
    run = cli("untaint", "-o", "json")
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["removed"] == ["n-bound", "n-cloud-stale", "n-fresh", "n-gone", "n-old"]
    reason = {e["node"]: e["reason"] for e in run.events("stale")}["n-fresh"]
    assert "'2025-01-01T00:00:00' is not an RFC 3339 time with a zone" in reason
    assert taints(reservations, "n-fresh") == []


def test_rbac_forbidding_node_patches_exits_5_naming_the_rule_and_what_stays(reservations, cli):
    reservations.forbid("patch", "nodes")
    run = cli("untaint", "-o", "json")
    assert run.code == ExitCode.CLUSTER_ACCESS
    lines = run.stderr.splitlines()
    assert lines[0].startswith("warning: could not remove the reservation from node n-bound: forbidden: ")
    assert lines[-1].startswith('error: forbidden: cannot patch nodes "n-bound" at the cluster scope (needs RBAC: '
                                'apiGroups [""], resources ["nodes"], verbs ["patch"]')
    assert lines[-1].endswith("; node n-bound keeps kresched's reservation (taint "
                              "CriticalAddonsOnly=kresched:NoSchedule): `kresched untaint n-bound` removes it")
    assert taints(reservations, "n-bound") == [OURS]


@pytest.mark.parametrize(("pods", "seconds_ago", "stale", "reason"), [
    ([], 5, False, "deployment/shop/web: not created yet; reserved "),
    ([("web-7d9-a", "node-x"), ("web-7d9-b", "")], 5, False, "deployment/shop/web: 1 of its pods still Pending; "
                                                            "reserved "),
    ([("web-7d9-a", "node-x"), ("web-7d9-b", "node-x")], 5, True, "the pods of deployment/shop/web are bound"),
    ([], 3600, True, "reserved 60m ago, longer than 10m"),
])
def test_a_reservation_for_a_workload_lasts_until_its_pods_are_bound_or_the_ttl(fake_api, cli, pods, seconds_ago,
                                                                                stale, reason):
    """`preempt -f` reserves nodes for a workload that does not exist yet (reserved-for
    `deployment/shop/web`): its pods are found through their ReplicaSet, `<deployment>-<hash>`."""
    objects = [make_pod(name, "shop", node=node, owner="ReplicaSet/web-7d9", labels={"pod-template-hash": "7d9"})
               for name, node in pods]
    fake_api.load(make_state([make_node("node-r", taints=[OURS]), make_node("node-x")], objects))
    reserved(fake_api, "node-r", "deployment/shop/web", seconds_ago=seconds_ago)
    run = cli("untaint", "-o", "json")
    assert run.code == ExitCode.OK, run.stderr
    if stale:
        assert run.summary["removed"] == ["node-r"]
        assert run.events("stale")[0]["reason"] == reason
    else:
        assert run.summary["kept"] == ["node-r"]
        assert run.events("kept")[0]["reason"].startswith(reason)  # (then how long ago: a few seconds)
