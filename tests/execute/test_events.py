"""The Kubernetes Events kresched records (issue 31), over real HTTP against the fake API server,
which validates them as the API server does (`ValidateEventCreate` for events.k8s.io/v1): after a
preemption, a drain or a rebalance, `kubectl describe pod` and `kubectl get events` say who was
evicted, by which kresched command, for which pod or node. A cluster that refuses Events (RBAC)
does not fail the run: one warning line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kresched.errors import ExitCode
from kresched.execute.recorder import event_body
from tests.builders import make_namespace, make_node, make_pod, make_state
from tests.execute.conftest import PENDING, VICTIM, Cli, seed_preemption
from tests.fakeapi import NODES, FakeApiServer
from tests.fakeapi.events import event_errors, events

EVENT_POSTS = "/apis/events.k8s.io/v1/namespaces/"
_NODE_A = (NODES, "", "node-a")
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def summary(e: dict) -> tuple:
    """What `kubectl get events` shows of an Event, and what it is about."""
    related = e.get("related") or {}
    return (e["type"], e["reason"], e["action"], e["regarding"]["kind"], e["regarding"]["name"],
            related.get("kind"), related.get("name"))


def posts(fake: FakeApiServer) -> list:
    return [r for r in fake.requests if r.method == "POST" and r.path.startswith(EVENT_POSTS)]


def test_a_preemption_records_who_was_evicted_for_whom_and_the_reservation(cluster: FakeApiServer, cli: Cli) -> None:
    run = cli("preempt", PENDING, "--yes", "-o", "json", "--timeout", "10s")
    assert run.code == ExitCode.OK, run.stderr
    assert run.stderr == ""  # every Event was accepted
    recorded = events(cluster)
    assert [summary(e) for e in recorded] == [
        ("Normal", "Reserved", "Reserving", "Node", "node-a", "Pod", "critical"),
        ("Normal", "Preempted", "Preempting", "Pod", "web-1", "Pod", "critical"),
        ("Normal", "MadeRoom", "Preempting", "Pod", "critical", "Node", "node-a"),
        ("Normal", "Released", "Releasing", "Node", "node-a", None, None),
    ]
    reserved, evicted, made_room, _ = recorded
    assert evicted["note"] == f"Evicted by kresched preempt (grace 10s) to make room for pod {PENDING} on node node-a"
    # What `kubectl describe pod` looks the Events up by: the namespace, the name and the UID.
    assert evicted["metadata"]["namespace"] == "shop"
    assert evicted["regarding"] == {"apiVersion": "v1", "kind": "Pod", "namespace": "shop", "name": "web-1",
                                    "uid": "uid-shop-web-1"}
    assert evicted["related"]["uid"] == "uid-shop-critical"
    assert made_room["note"].startswith(f"kresched preempt evicted 1 pod on node node-a for this pod ({VICTIM}); "
                                        "it was bound to node-a ")
    # An Event about a node (cluster-scoped) lives in `default`.
    assert reserved["metadata"]["namespace"] == "default"
    # As client-go's recorder makes them.
    for e in recorded:
        assert (e["reportingController"], e["reportingInstance"][:9]) == ("kresched", "kresched-")
        assert STAMP.fullmatch(e["eventTime"])
        assert re.fullmatch(rf"{re.escape(e['regarding']['name'])}\.[0-9a-f]+", e["metadata"]["name"])


def test_a_drain_records_the_cordon_and_each_eviction_regarding_the_pod_related_to_the_node(
        fake_api: FakeApiServer, cli: Cli) -> None:
    pods = [make_pod(f"web-{i}", "shop", node="node-a", cpu="1", owner="ReplicaSet/web-7d9", grace=5)
            for i in range(2)]
    fake_api.load(make_state([make_node("node-a"), make_node("node-b")], pods, [], [], [make_namespace("shop")]))
    run = cli("drain", "node-a", "--yes", "-o", "json")
    assert run.code == ExitCode.OK, run.stderr
    recorded = sorted(summary(e) for e in events(fake_api))
    assert recorded == [("Normal", "Cordoned", "Cordoning", "Node", "node-a", None, None),
                        ("Normal", "NodeDrain", "Evicting", "Pod", "web-0", "Node", "node-a"),
                        ("Normal", "NodeDrain", "Evicting", "Pod", "web-1", "Node", "node-a")]
    [note] = {e["note"] for e in events(fake_api, "NodeDrain") if e["regarding"]["name"] == "web-0"}
    assert note == "Evicted by kresched drain of node node-a (grace 5s)"


def test_a_cluster_that_refuses_events_does_not_fail_the_run_one_warning_says_so(cluster: FakeApiServer,
                                                                                 cli: Cli) -> None:
    cluster.forbid("create", "events.events.k8s.io")
    run = cli("preempt", PENDING, "--yes", "-o", "json", "--timeout", "10s")
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["outcome"] == "bound"
    [warning] = run.stderr.splitlines()
    assert warning.startswith("warning: kresched's Events are not recorded: forbidden: cannot create "
                              "events.events.k8s.io")
    assert warning.endswith("; the run goes on without them")
    assert len(posts(cluster)) == 1  # refused once: not asked again
    assert events(cluster) == []


@pytest.mark.parametrize(("spelling", "sent"), [
    pytest.param("--dry-run=server", True, id="a server dry run sends them with dryRun=All"),
    pytest.param("--dry-run", False, id="a client dry run sends none"),
])
def test_a_dry_run_records_nothing(cluster: FakeApiServer, cli: Cli, spelling: str, sent: bool) -> None:
    run = cli("preempt", PENDING, "--yes", "-o", "json", spelling)
    assert run.code == ExitCode.OK, run.stderr
    assert events(cluster) == []
    assert bool(posts(cluster)) is sent
    assert all(r.query.get("dryRun") == "All" for r in posts(cluster))


def test_untaint_records_the_release_of_a_stale_reservation(fake_api: FakeApiServer, cli: Cli) -> None:
    seed_preemption(fake_api)
    fake_api.store.mutate(*_NODE_A, lambda n: n["metadata"].setdefault("annotations", {}).update(
        {"kresched.io/reserved-for": "shop/gone", "kresched.io/reserved-at": "2025-01-01T00:00:00Z"}))
    run = cli("untaint", "-o", "json")
    assert run.code == ExitCode.OK, run.stderr
    [released] = events(fake_api)
    assert summary(released) == ("Normal", "Released", "Releasing", "Node", "node-a", None, None)
    assert released["note"] == "kresched untaint removed its reservation for pod shop/gone: stale: shop/gone is gone"


# -- the Event itself, against the API server's validation ------------------------------------------

@pytest.mark.parametrize(("regarding", "related", "namespace"), [
    pytest.param(make_pod("web-1", "shop"), make_pod("critical", "shop"), "shop", id="a pod, about a pod"),
    pytest.param(make_node("ip-10-0-16-195.eu-west-1.compute.internal"), None, "default",
                 id="a node: in the default namespace"),
    pytest.param("node-a", make_pod("critical", "shop"), "default", id="a node named only: its name as UID"),
    pytest.param(make_pod("x" * 250, "shop"), None, "shop", id="a name too long for a suffix: a UUID instead"),
])
def test_the_events_kresched_builds_pass_the_api_servers_validation(regarding, related, namespace: str) -> None:
    body = event_body(regarding, related, "Normal", "Preempted", "Preempting", "a note " * 300, "kresched-host",
                      1_767_225_600.25)
    assert body["metadata"]["namespace"] == namespace
    assert event_errors(namespace, body) == []
    assert len(body["note"]) == 1024
    assert body["eventTime"] == "2026-01-01T00:00:00.250000Z"


@pytest.mark.parametrize(("change", "field"), [
    pytest.param({"type": "Info"}, "type", id="a type other than Normal or Warning"),
    pytest.param({"reportingController": "kresched tool"}, "reportingController", id="a controller not qualified"),
    pytest.param({"eventTime": None}, "eventTime", id="no eventTime"),
    pytest.param({"action": "x" * 129}, "action", id="an action over 128 characters"),
])
def test_the_fake_refuses_what_the_api_server_refuses(change: dict, field: str) -> None:
    body = {**event_body(make_pod("web-1", "shop"), None, "Normal", "R", "A", "n", "i", 1.0), **change}
    assert [f for f, _ in event_errors("shop", body)] == [field]



# -- what a real API server accepted ------------------------------------------------------------------

RIG_EVENTS = Path(__file__).resolve().parents[1] / "fixtures" / "events" / "rig-kresched-events.json"


def test_the_events_a_real_api_server_accepted_are_the_ones_kresched_builds() -> None:
    """Recorded on the development rig (v1.36.2): a preemption and a drain. The fake accepts each
    as the API server did, and kresched builds the same fields today."""
    recorded = json.loads(RIG_EVENTS.read_text())["items"]
    assert [(e["type"], e["reason"], e["action"]) for e in recorded] == [
        ("Normal", "Reserved", "Reserving"), ("Normal", "Preempted", "Preempting"),
        ("Warning", "MadeRoom", "Preempting"), ("Normal", "Released", "Releasing"),
        ("Normal", "Cordoned", "Cordoning"), ("Normal", "NodeDrain", "Evicting")]
    server_fields = {"metadata", "deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedSource"}
    for e in recorded:
        assert event_errors(e["metadata"]["namespace"], e) == [], e["reason"]
        built = event_body(e["regarding"]["name"], None, e["type"], e["reason"], e["action"], e["note"],
                           e["reportingInstance"], 0.0)
        assert set(built) | {"related"} >= set(e) - server_fields
        assert built["reportingController"] == e["reportingController"] == "kresched"
