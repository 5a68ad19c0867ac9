"""`kresched preempt` end to end: the real command, the official client, real HTTP, and a fake API
server whose eviction, patch, delete and watch answers are a real server's — with its scheduler
binding the pod once it fits, unless a test says otherwise."""

from __future__ import annotations

import pytest

from kresched.errors import ExitCode
from tests.execute.conftest import (
    EVICTION_PATH,
    NODE_A_PATH,
    PENDING,
    POD_PATH,
    RESERVED_AT,
    RESERVED_FOR,
    VICTIM,
    WATCH_PATH,
    body,
    kresched_annotations,
    node,
    pod,
    seed_preemption,
    set_budget,
    taints,
    writes,
)
from tests.fakeapi import NODES, PDBS, PODS, FakeApiServer, call, status
from tests.fakeapi.controllers import BIND, DELETE, NEVER, bind_to
from tests.fakeapi.faults import cut

OURS = {"key": "CriticalAddonsOnly", "value": "kresched", "effect": "NoSchedule"}
CLOUD = {"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}


def preempt(cli, *extra: str):
    return cli("preempt", "--pod", PENDING, "--yes", "-o", "json", "--timeout", "5s", *extra)


def assert_released(fake: FakeApiServer, original_taints: list | None = None) -> None:
    assert taints(fake) == (original_taints or [])
    assert kresched_annotations(fake) == {}


# -- the happy path -----------------------------------------------------------------------------------

def test_reserve_evict_bind_release_in_that_order_over_the_real_api(cluster, cli):
    run = preempt(cli, "--max-grace", "7")

    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["outcome"] == "bound"
    assert (run.summary["node"], run.summary["evicted"], run.summary["reservationRemoved"]) == (
        "node-a", [VICTIM], True)
    assert [a for a in run.actions() if a != "plan"] == [
        "revalidated", "reserved", "evicted", "waiting", "bound", "released", "summary"]
    # What the server saw: reserve (conditional merge patch), evict through the Eviction API, release.
    assert writes(cluster) == [("PATCH", NODE_A_PATH), ("POST", EVICTION_PATH), ("PATCH", NODE_A_PATH)]
    reserve, eviction, release = (r for r in cluster.requests if r.method != "GET" and "/events" not in r.path)
    reserve_patch = body(reserve)
    assert reserve_patch["spec"]["taints"] == [OURS]
    assert reserve_patch["metadata"]["annotations"][RESERVED_FOR] == PENDING
    assert reserve_patch["metadata"]["resourceVersion"]  # conditional on the node being unchanged
    assert (reserve.status, eviction.status, release.status) == (200, 201, 200)
    evict = body(eviction)
    assert (evict["apiVersion"], evict["kind"], evict["metadata"]) == (
        "policy/v1", "Eviction", {"name": "web-1", "namespace": "shop"})
    assert evict["deleteOptions"]["gracePeriodSeconds"] == 7  # min(30 s of the pod, --max-grace 7)
    assert evict["deleteOptions"]["preconditions"] == {"uid": "uid-shop-web-1"}
    assert "dryRun" not in eviction.query
    # The cluster afterwards: the pod runs on the planned node, the victim is gone, the budget was
    # spent through the API, and node-a is as it was.
    assert pod(cluster, PENDING)["spec"]["nodeName"] == "node-a"
    assert pod(cluster, VICTIM) is None
    pdb = cluster.store.get(PDBS, "shop", "web")
    assert pdb["status"]["disruptionsAllowed"] == 0
    assert "web-1" in pdb["status"]["disruptedPods"]
    assert_released(cluster)
    assert cluster.scheduler.bindings == [(PENDING, "node-a")]


def test_the_taint_is_on_the_node_while_the_victims_are_evicted(cluster, cli):
    seen: list = []
    cluster.faults.script([call(lambda r: seen.append((taints(cluster), kresched_annotations(cluster))))],
                          path=EVICTION_PATH, method="POST")
    assert preempt(cli).code == ExitCode.OK
    [(during, annotations)] = seen
    assert during == [OURS]
    assert annotations[RESERVED_FOR] == PENDING
    assert annotations[RESERVED_AT].endswith("Z")
    assert_released(cluster)


# -- PDB answers, retries ---------------------------------------------------------------------------

def test_a_storm_of_pdb_429s_is_waited_out_until_the_budget_comes_back(cluster, cli):
    # The budget drops to 0 just before the first eviction and comes back before the fourth one:
    # the first three are refused by the eviction handler itself, with its real message.
    cluster.faults.script([call(lambda r: set_budget(cluster, 0)), None, None, call(lambda r: set_budget(cluster, 1))],
                          path=EVICTION_PATH, method="POST")
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert [r.status for r in cluster.calls(EVICTION_PATH)] == [429, 429, 429, 201]
    blocked = run.events("pdb-blocked")
    assert len(blocked) == 3
    assert blocked[0]["message"] == ("shop/web-1: Cannot evict pod as it would violate the pod's disruption budget. "
                                     "The disruption budget web needs 0 healthy pods and has 1 currently; retrying")
    assert run.summary["evicted"] == [VICTIM]
    assert run.summary["outcome"] == "bound"


def test_a_pdb_that_refuses_until_the_deadline_gives_up_on_the_victim_replans_and_stops(cluster, cli):
    cluster.faults.script([call(lambda r: set_budget(cluster, 0))], path=EVICTION_PATH, method="POST")
    run = preempt(cli, "--eviction-timeout", "2s", "--timeout", "5m")
    assert run.code == ExitCode.PARTIAL
    attempts = cluster.calls(EVICTION_PATH)
    assert len(attempts) >= 2
    assert {r.status for r in attempts} == {429}
    [gave_up] = run.events("gave-up")
    assert gave_up["pod"] == VICTIM
    assert gave_up["pdb"] == "shop/web"
    assert "Cannot evict pod as it would violate the pod's disruption budget." in gave_up["message"]
    assert run.summary["pdbBlocked"] == [{"pod": VICTIM, "pdb": "shop/web"}]
    # Re-planned on the live state: no room without the refused pod, so it does not wait out the
    # five-minute binding timeout for nothing.
    [no_room] = run.events("no-room")
    assert VICTIM in no_room["message"]
    assert run.summary["outcome"] == "gave-up"
    assert "waiting" not in run.actions()
    assert pod(cluster, VICTIM) is not None
    assert_released(cluster)


def test_server_errors_on_the_eviction_are_retried(cluster, cli):
    cluster.faults.script([500, status(503, retry_after=1)], path=EVICTION_PATH, method="POST")
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert [r.status for r in cluster.calls(EVICTION_PATH)] == [500, 503, 201]
    assert run.summary["evicted"] == [VICTIM]


def test_a_dropped_connection_on_the_eviction_is_retried(cluster, cli):
    cluster.faults.script(["drop"], path=EVICTION_PATH, method="POST")
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert [r.status for r in cluster.calls(EVICTION_PATH)] == [None, 201]


def test_an_eviction_failing_for_good_is_reported_and_the_reservation_still_removed(cluster, cli):
    cluster.faults.script([500], path=EVICTION_PATH, method="POST", repeat=True)
    run = preempt(cli, "--timeout", "1s")
    assert run.code == ExitCode.PARTIAL
    assert len(cluster.calls(EVICTION_PATH)) == 5  # TRANSIENT_RETRY's attempts
    [failed] = run.summary["failed"]
    assert failed["pod"] == VICTIM
    assert "500" in failed["reason"]
    assert_released(cluster)


def test_a_watch_that_is_cut_mid_way_is_started_again_and_the_binding_still_seen(cluster, cli):
    cluster.scheduler.set(PENDING, NEVER)
    # The first watch is cut; while the second one is open, the scheduler binds the pod.
    cluster.faults.script([cut(seconds=0.1), call(lambda r: cluster.scheduler.set(PENDING, BIND))],
                          path=WATCH_PATH, query={"watch": "true"})
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["outcome"] == "bound"
    watches = [r for r in cluster.calls(WATCH_PATH) if r.query.get("watch")]
    assert len(watches) == 2
    assert all(w.query["fieldSelector"] == "metadata.name=critical" and w.query["resourceVersion"] for w in watches)
    assert any("watch interrupted (the connection was lost)" in e["message"] for e in run.events("watch"))
    assert not cluster.faults.pending()


@pytest.mark.parametrize("gone", ["event", "status"])
def test_a_watch_ended_by_410_gone_is_restarted_from_a_fresh_read(cluster, cli, gone):
    cluster.watch_gone = gone  # an ERROR event in the stream, or an HTTP 410 answer
    cluster.scheduler.set(PENDING, NEVER)
    cluster.faults.script([call(lambda r: cluster.store.compact()),
                           call(lambda r: cluster.scheduler.set(PENDING, BIND))],
                          path=WATCH_PATH, query={"watch": "true"})
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert any("too old resource version" in e["message"] for e in run.events("watch"))
    assert [r.status for r in cluster.calls(WATCH_PATH) if r.query.get("watch")] == [
        200 if gone == "event" else 410, 200]
    assert run.summary["outcome"] == "bound"


def test_a_pod_pending_for_long_is_watched_from_a_current_resource_version(cluster, cli):
    # The pod has not changed since before the API server's watch window: a watch from its own
    # resourceVersion would only ever get 410 Gone.
    cluster.store.compact()
    cluster.scheduler.set(PENDING, NEVER)
    cluster.faults.script([call(lambda r: cluster.scheduler.set(PENDING, BIND))],
                          path=WATCH_PATH, query={"watch": "true"})
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["outcome"] == "bound"
    assert [r.status for r in cluster.calls(WATCH_PATH) if r.query.get("watch")] == [200]
    assert run.events("watch") == []


def test_a_watch_rbac_forbids_falls_back_to_polling_the_pod(cluster, cli):
    cluster.scheduler.set(PENDING, NEVER)
    cluster.forbid("watch", "pods")
    cluster.faults.script([call(lambda r: cluster.scheduler.set(PENDING, BIND))],
                          path=WATCH_PATH, query={"watch": "true"})
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["outcome"] == "bound"
    assert [r.status for r in cluster.calls(WATCH_PATH) if r.query.get("watch")] == [403]
    [event] = run.events("watch")
    assert event["message"].startswith('forbidden: cannot watch pods "critical" in the namespace "shop"')
    assert event["message"].endswith("; polling the pod instead")


def test_a_409_on_the_taint_patch_rereads_the_node_and_keeps_every_taint_once(cluster, cli):
    other = {"key": "maintenance", "value": "soon", "effect": "PreferNoSchedule"}
    # Someone else changes node-a between kresched's read and its patch.
    cluster.faults.script([call(lambda r: cluster.store.mutate(NODES, "", "node-a",
                                                               lambda n: n["spec"].update(taints=[other])))],
                          path=NODE_A_PATH, method="PATCH")
    seen: list = []
    cluster.faults.script([call(lambda r: seen.append(taints(cluster)))], path=EVICTION_PATH, method="POST")
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert [r.status for r in cluster.calls(NODE_A_PATH, "PATCH")] == [409, 200, 200]
    assert seen == [[other, OURS]]
    assert_released(cluster, [other])


# -- the victims and the pod changing under kresched ---------------------------------------------------

def test_a_victim_already_gone_counts_as_evicted_already(cluster, cli):
    cluster.faults.script([call(lambda r: cluster.store.delete(PODS, "shop", "web-1"))],
                          path=EVICTION_PATH, method="POST")
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert [r.status for r in cluster.calls(EVICTION_PATH)] == [404]
    assert run.events("already-gone")[0]["pod"] == VICTIM
    assert (run.summary["alreadyGone"], run.summary["evicted"]) == ([VICTIM], [])
    assert run.summary["outcome"] == "bound"


def test_a_victim_replaced_by_a_same_name_pod_is_not_evicted(cluster, cli):
    cluster.faults.script([call(lambda r: cluster.store.mutate(PODS, "shop", "web-1",
                                                               lambda p: p["metadata"].update(uid="new-uid")))],
                          path=EVICTION_PATH, method="POST")
    run = preempt(cli, "--timeout", "1s")
    assert [r.status for r in cluster.calls(EVICTION_PATH)] == [409]  # the UID precondition
    assert pod(cluster, VICTIM) is not None
    assert run.summary["alreadyGone"] == [VICTIM]


def test_the_pod_bound_elsewhere_is_reported_and_is_success(cluster, cli):
    cluster.scheduler.set(PENDING, bind_to("node-b"))
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    assert (run.summary["outcome"], run.summary["node"], run.summary["plannedNode"]) == (
        "bound-elsewhere", "node-b", "node-a")
    [event] = run.events("bound-elsewhere")
    assert event["message"] == "shop/critical is bound to node-b, not to the planned node-a"
    assert_released(cluster)


def test_the_pod_deleted_while_waiting_ends_the_wait(cluster, cli):
    cluster.scheduler.set(PENDING, DELETE)
    run = preempt(cli)
    assert run.code == ExitCode.PARTIAL  # pods were evicted for a pod that is gone
    assert run.summary["outcome"] == "deleted"
    assert pod(cluster, PENDING) is None
    assert_released(cluster)


def test_a_pod_never_bound_times_out_and_the_reservation_is_removed(cluster, cli):
    cluster.scheduler.set(PENDING, NEVER)
    run = preempt(cli, "--timeout", "1s")
    assert run.code == ExitCode.PARTIAL
    assert run.summary["outcome"] == "timeout"
    assert run.summary["reservationRemoved"] is True
    assert_released(cluster)
    assert pod(cluster, PENDING)["spec"].get("nodeName") is None


# -- access, dry runs, safety ------------------------------------------------------------------------

def test_rbac_forbidding_evictions_exits_5_naming_the_verb_and_the_rule(cluster, cli):
    cluster.forbid("create", "pods/eviction")
    run = preempt(cli)
    assert run.code == ExitCode.CLUSTER_ACCESS
    assert run.stderr.strip() == (
        'error: forbidden: cannot create pods/eviction "web-1" in the namespace "shop" (needs RBAC: '
        'apiGroups [""], resources ["pods/eviction"], verbs ["create"] for User '
        '"system:serviceaccount:kube-system:kresched")')
    assert [r.status for r in cluster.calls(EVICTION_PATH)] == [403]  # not retried
    assert pod(cluster, VICTIM) is not None
    assert_released(cluster)


def test_server_dry_run_sends_dry_run_all_on_every_write_and_changes_nothing(cluster, cli):
    revision = cluster.store.revision
    run = preempt(cli, "--server-dry-run")
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["outcome"] == "simulated"
    sent = [r for r in cluster.requests if r.method != "GET"]
    assert writes(cluster) == [("PATCH", NODE_A_PATH), ("POST", EVICTION_PATH)]
    assert all(r.query.get("dryRun") == "All" for r in sent)  # the Events recorded too
    assert len(sent) > 2
    assert cluster.store.revision == revision  # not one object changed


def test_server_dry_run_of_a_pdb_violating_delete_deletes_nothing(fake_api, cli):
    seed_preemption(fake_api, budget=0)
    revision = fake_api.store.revision
    run = preempt(cli, "--server-dry-run", "--allow-pdb-violation")
    assert run.code == ExitCode.OK, run.stderr
    [delete] = fake_api.calls(POD_PATH, "DELETE")
    # With a body, the API server reads a DELETE's options from the body only: dryRun must be there.
    assert body(delete)["dryRun"] == ["All"]
    assert fake_api.store.revision == revision
    assert pod(fake_api, VICTIM) is not None


def test_client_dry_run_sends_no_write_at_all(cluster, cli):
    run = preempt(cli, "--dry-run")
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["outcome"] == "simulated"
    assert {r.method for r in cluster.requests} == {"GET"}
    assert "reserved" in run.actions()
    assert "evicted" in run.actions()
    assert all(e["mode"] == "dry run" for e in run.events("evicted"))


def test_without_yes_and_without_a_terminal_nothing_is_written(cluster, cli):
    run = cli("preempt", "--pod", PENDING, "-o", "json")
    assert run.code == ExitCode.USAGE
    assert "refusing to act without confirmation: standard input is not a terminal (pass --yes)" in run.stderr
    assert {r.method for r in cluster.requests} == {"GET"}


def test_a_pod_that_does_not_tolerate_the_reservation_taint_gets_no_taint(fake_api, cli):
    seed_preemption(fake_api, tolerations=None)
    fake_api.controllers.start()
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    [skipped] = run.events("reserve-skipped")
    assert skipped["level"] == "warn"
    assert "does not tolerate CriticalAddonsOnly" in skipped["message"]
    assert writes(fake_api) == [("POST", EVICTION_PATH)]
    assert run.summary["outcome"] == "bound"


def test_a_cloud_critical_addons_taint_is_never_touched(fake_api, cli):
    seed_preemption(fake_api, node_a_taints=[CLOUD])
    fake_api.controllers.start()
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stderr
    [skipped] = run.events("reserve-skipped")
    assert "already carries CriticalAddonsOnly=true:NoSchedule (not kresched's)" in skipped["message"]
    assert writes(fake_api) == [("POST", EVICTION_PATH)]
    assert taints(fake_api) == [CLOUD]
    assert kresched_annotations(fake_api) == {}


def test_pdb_violating_victims_are_refused_without_the_flag(fake_api, cli):
    seed_preemption(fake_api, budget=0)
    run = preempt(cli)
    assert run.code == ExitCode.INFEASIBLE
    assert run.events("blocked")[0]["message"].endswith("(use --allow-pdb-violation to go on)")
    assert {r.method for r in fake_api.requests} == {"GET"}


def test_pdb_violating_victims_are_deleted_with_the_flag(fake_api, cli):
    seed_preemption(fake_api, budget=0)
    fake_api.controllers.start()
    run = preempt(cli, "--allow-pdb-violation", "--max-grace", "4")
    assert run.code == ExitCode.OK, run.stderr
    assert writes(fake_api) == [("PATCH", NODE_A_PATH), ("DELETE", POD_PATH), ("PATCH", NODE_A_PATH)]
    delete = body(fake_api.calls(POD_PATH, "DELETE")[0])
    assert delete["gracePeriodSeconds"] == 4
    assert delete["preconditions"] == {"uid": "uid-shop-web-1"}
    assert "dryRun" not in delete
    assert pod(fake_api, VICTIM) is None
    assert run.events("deleted")[0]["message"] == (
        "deleted shop/web-1 (bypassing PodDisruptionBudget shop/web, grace 4s)")
    assert fake_api.store.get(PDBS, "shop", "web")["status"]["disruptionsAllowed"] == 0  # no budget spent
    assert run.summary["outcome"] == "bound"


@pytest.mark.parametrize("termination", ["immediate", "graceful"])
def test_a_victim_in_its_grace_period_still_holds_its_room(fake_api, cli, termination):
    """With graceful termination the pod only fits once the victim's grace is over (the kubelet
    removes it then); kresched waits for the binding either way."""
    seed_preemption(fake_api)
    fake_api.pods.termination = termination
    fake_api.controllers.start()
    run = preempt(cli, "--max-grace", "1")
    assert run.code == ExitCode.OK, run.stderr
    assert run.summary["outcome"] == "bound"
    assert node(fake_api)["spec"].get("taints") in (None, [])
    changes = [(c.type, c.object["metadata"]["name"], bool(c.object["metadata"].get("deletionTimestamp")),
                c.object["spec"].get("nodeName")) for c in fake_api.store.history if c.resource == PODS]
    gone = changes.index(("DELETED", "web-1", termination == "graceful", "node-a"))
    bound = next(i for i, (_, name, _, on) in enumerate(changes) if name == "critical" and on)
    assert gone < bound  # the scheduler placed the pod only once the victim had left
    terminating = [i for i, (kind, name, deleting, _) in enumerate(changes)
                   if (kind, name, deleting) == ("MODIFIED", "web-1", True)]
    assert bool(terminating) == (termination == "graceful")


def test_a_reservation_that_cannot_be_removed_is_named_on_stderr_with_the_command_that_removes_it(cluster, cli):
    # The reserve goes through; every later node patch (the release) keeps failing with 500.
    cluster.faults.script([None] + [500] * 50, path=NODE_A_PATH, method="PATCH")
    run = preempt(cli)
    assert run.code == ExitCode.PARTIAL
    assert run.summary["reservationRemoved"] is False
    [warning] = run.stderr.splitlines()
    assert warning.startswith("warning: could not remove the reservation from node node-a: ")
    assert warning.endswith("run `kresched untaint node-a`")
    assert taints(cluster) == [OURS]


def test_server_dry_run_as_kubectl_spells_it_streams_yaml_documents_that_say_would(cluster, cli):
    # `kubectl`'s order and spelling: -n before the verb, the pod by name, --dry-run=server, -o yaml.
    import yaml

    namespace, name = PENDING.split("/")
    revision = cluster.store.revision
    run = cli("-n", namespace, "preempt", name, "--dry-run=server", "--yes", "-o", "yaml", "--timeout", "5s")
    assert run.code == ExitCode.OK, run.stderr
    docs = list(yaml.safe_load_all(run.stdout))
    assert run.stdout.count("\n---\n") == len(docs) - 1
    assert (docs[0]["action"], docs[0]["pod"]) == ("plan", PENDING)
    assert (docs[-1]["action"], docs[-1]["mode"]) == ("summary", "server dry run")
    [evicted] = [d for d in docs if d["action"] == "evicted"]
    assert evicted["message"].startswith(f"would evict {VICTIM}")
    assert all(r.query.get("dryRun") == "All" for r in cluster.requests if r.method != "GET")
    assert cluster.store.revision == revision
