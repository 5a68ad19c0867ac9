"""The fake API server's write paths answer as a real API server does — what the execution tests
(and drain's) rely on. Spoken to with the official client, over HTTP."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from kresched.sources.connection import connect
from tests.builders import make_node, make_pdb, make_pod, make_state
from tests.fakeapi import NODES, PDBS, PODS, FakeApiServer, Response, call
from tests.fakeapi.controllers import NEVER
from tests.fakeapi.faults import cut

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


@pytest.fixture
def core(fake_kubeconfig: Path) -> Iterator[k8s.CoreV1Api]:
    with connect(str(fake_kubeconfig)) as c:
        yield c.core


def status_of(err: pytest.ExceptionInfo[ApiException]) -> dict[str, Any]:
    return msgspec.json.decode(err.value.body)


def stored(fake: FakeApiServer, resource: Any, ns: str, name: str) -> dict[str, Any]:
    obj = fake.store.get(resource, ns, name)
    assert obj is not None
    return obj


# -- PATCH ---------------------------------------------------------------------------------------------

@pytest.fixture
def node_a(fake_api: FakeApiServer) -> FakeApiServer:
    fake_api.load(make_node("node-a", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]))
    return fake_api


def test_a_merge_patch_with_a_stale_resource_version_is_a_conflict(node_a, core):
    rv = stored(node_a, NODES, "", "node-a")["metadata"]["resourceVersion"]
    patched = core.patch_node("node-a", {"metadata": {"resourceVersion": rv, "labels": {"x": "1"}}},
                              _content_type=MERGE)
    assert patched.metadata.labels["x"] == "1"
    assert patched.metadata.resource_version != rv
    with pytest.raises(ApiException) as err:
        core.patch_node("node-a", {"metadata": {"resourceVersion": rv, "labels": {"x": "2"}}}, _content_type=MERGE)
    assert status_of(err) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Operation cannot be fulfilled on nodes "node-a": the object has been modified; please apply '
                   "your changes to the latest version and try again",
        "reason": "Conflict", "details": {"name": "node-a", "kind": "nodes"}, "code": 409}
    assert stored(node_a, NODES, "", "node-a")["metadata"]["labels"]["x"] == "1"


def test_a_patch_that_changes_nothing_keeps_the_resource_version(node_a, core):
    before = stored(node_a, NODES, "", "node-a")["metadata"]["resourceVersion"]
    core.patch_node("node-a", {"metadata": {"labels": {"kubernetes.io/hostname": "node-a"}}}, _content_type=MERGE)
    assert stored(node_a, NODES, "", "node-a")["metadata"]["resourceVersion"] == before


def test_merge_and_strategic_patches_replace_the_taint_list_and_merge_annotations(node_a, core):
    core.patch_node("node-a", {"metadata": {"annotations": {"a": "1"}}}, _content_type=MERGE)
    core.patch_node("node-a", {"metadata": {"annotations": {"b": "2"}},
                               "spec": {"taints": [{"key": "k", "effect": "NoExecute"}]},
                               "status": {"allocatable": {"cpu": "99"}}}, _content_type=STRATEGIC)
    node = stored(node_a, NODES, "", "node-a")
    assert node["metadata"]["annotations"] == {"a": "1", "b": "2"}
    assert node["spec"]["taints"] == [{"key": "k", "effect": "NoExecute"}]
    assert node["status"]["allocatable"]["cpu"] == "4"  # status is its own subresource
    core.patch_node("node-a", {"metadata": {"annotations": {"a": None}}}, _content_type=MERGE)
    assert stored(node_a, NODES, "", "node-a")["metadata"]["annotations"] == {"b": "2"}


def test_a_json_patch_test_operation_makes_it_conditional(node_a, core):
    rv = stored(node_a, NODES, "", "node-a")["metadata"]["resourceVersion"]
    ops = [{"op": "test", "path": "/metadata/resourceVersion", "value": rv},
           {"op": "add", "path": "/spec/taints/-", "value": {"key": "k", "effect": "NoSchedule"}}]
    core.patch_node("node-a", ops, _content_type=JSON_PATCH)
    assert [t["key"] for t in stored(node_a, NODES, "", "node-a")["spec"]["taints"]] == ["gpu", "k"]
    with pytest.raises(ApiException) as err:
        core.patch_node("node-a", ops, _content_type=JSON_PATCH)
    assert err.value.status == 422
    assert status_of(err)["details"]["causes"] == [
        {"message": "testing value /metadata/resourceVersion failed: test failed"}]


def test_node_taints_must_be_unique_per_key_and_effect(node_a, core):
    with pytest.raises(ApiException) as err:
        core.patch_node("node-a", {"spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"},
                                                       {"key": "gpu", "value": "no", "effect": "NoSchedule"}]}},
                        _content_type=MERGE)
    body = status_of(err)
    assert (err.value.status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'Node "node-a" is invalid: spec.taints[1]: Duplicate value: core.Taint{Key:"gpu", Value:"no", '
        'Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair')
    assert body["details"]["causes"][0]["field"] == "spec.taints[1]"
    assert len(stored(node_a, NODES, "", "node-a")["spec"]["taints"]) == 1


def test_a_dry_run_patch_answers_the_result_and_stores_nothing(node_a, core):
    revision = node_a.store.revision
    answer = core.patch_node("node-a", {"metadata": {"labels": {"x": "1"}}}, dry_run="All", _content_type=MERGE)
    assert answer.metadata.labels["x"] == "1"
    assert "x" not in stored(node_a, NODES, "", "node-a")["metadata"]["labels"]
    assert node_a.store.revision == revision


# -- the Eviction subresource -------------------------------------------------------------------------

@pytest.fixture
def shop(fake_api: FakeApiServer) -> FakeApiServer:
    pods = [make_pod(f"web-{i}", "shop", node="node-a", labels={"app": "web"}, grace=20) for i in range(3)]
    pods += [make_pod("pending", "shop", labels={"app": "web"}),
             make_pod("done", "shop", node="node-a", labels={"app": "web"}, phase="Succeeded", ready=False),
             make_pod("both", "shop", node="node-a", labels={"app": "web", "tier": "db"}),
             make_pod("unready", "shop", node="node-a", labels={"app": "web"}, ready=False),
             make_pod("free", "shop", node="node-a", labels={"app": "other"})]
    fake_api.load(make_state([make_node("node-a", cpu="16")], pods,
                             [make_pdb("web", "shop", selector={"app": "web"}, min_available=2),
                              make_pdb("db", "shop", selector={"tier": "db"}, min_available=0)]))
    fake_api.controllers.pdbs.sync()
    fake_api.scheduler.set("shop/pending", NEVER)
    return fake_api


def evict(core: k8s.CoreV1Api, name: str, *, uid: str | None = None, dry_run: str | None = None) -> Any:
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "shop"}}
    if uid:
        body["deleteOptions"] = {"preconditions": {"uid": uid}}
    return core.create_namespaced_pod_eviction(name, "shop", body, dry_run=dry_run, _preload_content=False)


def budget(fake: FakeApiServer) -> dict[str, Any]:
    return stored(fake, PDBS, "shop", "web")["status"]


def test_the_pdb_controller_status_the_eviction_handler_reads(shop):
    # 7 pods match app=web (web-0..2, pending, done, both, unready); 4 of them are Ready.
    st = budget(shop)
    assert (st["expectedPods"], st["desiredHealthy"], st["currentHealthy"], st["disruptionsAllowed"]) == (7, 2, 4, 2)


def test_an_eviction_within_the_budget_spends_it_and_deletes_the_pod(shop, core):
    resp = evict(core, "web-0")
    assert resp.status == 201
    assert msgspec.json.decode(resp.data) == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                              "status": "Success", "code": 201}
    assert shop.store.get(PODS, "shop", "web-0") is None
    st = budget(shop)
    assert st["disruptionsAllowed"] == 1
    assert list(st["disruptedPods"]) == ["web-0"]


def test_an_eviction_beyond_the_budget_is_429_with_the_budget_named(shop, core):
    evict(core, "web-0")
    evict(core, "web-1")
    with pytest.raises(ApiException) as err:
        evict(core, "web-2")
    assert status_of(err) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.", "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget",
                                "message": "The disruption budget web needs 2 healthy pods and has 4 currently"}]},
        "code": 429}
    assert shop.store.get(PODS, "shop", "web-2") is not None
    # The controller then sees two pods gone and the budget is 0 for a good reason.
    shop.controllers.pdbs.sync()
    assert (budget(shop)["currentHealthy"], budget(shop)["disruptionsAllowed"]) == (2, 0)


@pytest.mark.parametrize(("pod", "why"), [
    ("pending", "a Pending pod"), ("done", "a Succeeded pod"), ("terminating", "a terminating pod")])
def test_pods_that_cannot_disrupt_anything_are_evicted_without_a_pdb_check(shop, core, pod, why):
    shop.store.mutate(PDBS, "shop", "web", lambda b: b["status"].update(disruptionsAllowed=0))
    if pod == "terminating":
        shop.pods.termination = "graceful"
        core.delete_namespaced_pod("web-0", "shop")
        pod = "web-0"
    assert evict(core, pod).status == 201, why
    assert budget(shop)["disruptionsAllowed"] == 0


def test_a_pod_under_two_pdbs_cannot_be_evicted(shop, core):
    with pytest.raises(ApiException) as err:
        evict(core, "both")
    assert status_of(err) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        "code": 500}
    assert shop.store.get(PODS, "shop", "both") is not None


def test_an_unready_pod_is_evicted_without_spending_a_healthy_budget(shop, core):
    assert evict(core, "unready").status == 201
    assert budget(shop)["disruptionsAllowed"] == 2


def test_an_unready_pod_under_an_exhausted_budget_needs_always_allow(shop, core):
    shop.store.mutate(PDBS, "shop", "web", lambda b: b["status"].update(disruptionsAllowed=0, currentHealthy=1))
    with pytest.raises(ApiException) as err:
        evict(core, "unready")
    assert err.value.status == 429
    shop.store.mutate(PDBS, "shop", "web", lambda b: b["spec"].update(unhealthyPodEvictionPolicy="AlwaysAllow"))
    assert evict(core, "unready").status == 201


def test_a_pdb_the_controller_has_not_seen_yet_is_429_with_retry_after(shop, core):
    shop.store.mutate(PDBS, "shop", "web", lambda b: b["metadata"].update(generation=2))
    with pytest.raises(ApiException) as err:
        evict(core, "web-0")
    assert err.value.headers["Retry-After"] == "10"
    assert status_of(err)["details"]["causes"][0]["message"] == (
        "The disruption budget web is still being processed by the server.")


def test_evictions_of_gone_or_replaced_pods(shop, core):
    with pytest.raises(ApiException) as err:
        evict(core, "nope")
    assert (err.value.status, status_of(err)["message"]) == (404, 'pods "nope" not found')
    with pytest.raises(ApiException) as err:
        evict(core, "web-0", uid="an-older-uid")
    assert status_of(err)["message"] == ('Operation cannot be fulfilled on pods "web-0": Precondition failed: UID in '
                                         "precondition: an-older-uid, UID in object meta: uid-shop-web-0")
    assert shop.store.get(PODS, "shop", "web-0") is not None
    # As upstream, the budget was spent before the delete failed on its precondition.
    assert budget(shop)["disruptionsAllowed"] == 1


def test_a_dry_run_eviction_checks_everything_and_changes_nothing(shop, core):
    revision = shop.store.revision
    assert evict(core, "web-0", dry_run="All").status == 201
    shop.store.mutate(PDBS, "shop", "web", lambda b: b["status"].update(disruptionsAllowed=0))
    with pytest.raises(ApiException) as err:
        evict(core, "web-0", dry_run="All")
    assert err.value.status == 429
    assert shop.store.revision == revision + 1  # only the test's own mutate


# -- DELETE and graceful termination -------------------------------------------------------------------

def test_a_graceful_delete_leaves_the_pod_terminating_until_its_grace_is_over(shop, core):
    shop.pods.termination = "graceful"
    answer = core.delete_namespaced_pod("web-0", "shop", body=k8s.V1DeleteOptions(grace_period_seconds=5))
    assert answer.metadata.deletion_grace_period_seconds == 5
    terminating = stored(shop, PODS, "shop", "web-0")
    assert terminating["metadata"]["deletionTimestamp"]
    shop.advance(3)
    assert shop.store.get(PODS, "shop", "web-0") is not None
    shop.advance(3)
    assert shop.store.get(PODS, "shop", "web-0") is None
    # An unbound pod has nothing to stop: it goes at once.
    core.delete_namespaced_pod("pending", "shop", body=k8s.V1DeleteOptions(grace_period_seconds=30))
    assert shop.store.get(PODS, "shop", "pending") is None


def test_delete_options_come_from_the_body_when_there_is_one(shop, core):
    with pytest.raises(ApiException) as err:
        core.delete_namespaced_pod("web-0", "shop", body=k8s.V1DeleteOptions(
            preconditions=k8s.V1Preconditions(uid="other")))
    assert err.value.status == 409
    core.delete_namespaced_pod("web-0", "shop", dry_run="All")  # no body: the query's dryRun counts
    assert shop.store.get(PODS, "shop", "web-0") is not None
    core.delete_namespaced_pod("web-0", "shop", body=k8s.V1DeleteOptions(dry_run=["All"]))
    assert shop.store.get(PODS, "shop", "web-0") is not None
    # With a body, a real API server ignores the query string's options: this one is not a dry run.
    core.delete_namespaced_pod("web-0", "shop", body=k8s.V1DeleteOptions(grace_period_seconds=1), dry_run="All")
    assert shop.store.get(PODS, "shop", "web-0") is None


# -- watches -------------------------------------------------------------------------------------------

def watch_lines(core: k8s.CoreV1Api, **kw: Any) -> list[dict[str, Any]]:
    resp = core.list_namespaced_pod("shop", watch=True, _preload_content=False, **kw)
    try:
        return [msgspec.json.decode(line) for line in resp if line.strip()]
    finally:
        resp.release_conn()


def later(seconds: float, fn: Any) -> threading.Thread:
    t = threading.Thread(target=lambda: (time.sleep(seconds), fn()), daemon=True)
    t.start()
    return t


def test_a_watch_streams_changes_after_its_resource_version_and_ends_at_its_timeout(shop, core):
    rv = stored(shop, PODS, "shop", "pending")["metadata"]["resourceVersion"]
    shop.store.mutate(PODS, "shop", "web-0", lambda p: p["metadata"]["labels"].update(x="1"))  # another pod
    later(0.1, lambda: shop.store.mutate(PODS, "shop", "pending", lambda p: p["spec"].update(nodeName="node-a")))
    later(0.2, lambda: shop.store.delete(PODS, "shop", "pending"))
    started = time.monotonic()
    events = watch_lines(core, field_selector="metadata.name=pending", resource_version=rv, timeout_seconds=1)
    assert time.monotonic() - started > 0.9  # it streamed until timeoutSeconds, then ended
    assert [(e["type"], e["object"]["kind"], e["object"]["spec"].get("nodeName")) for e in events] == [
        ("MODIFIED", "Pod", "node-a"), ("DELETED", "Pod", "node-a")]
    assert int(events[1]["object"]["metadata"]["resourceVersion"]) > int(events[0]["object"]["metadata"][
        "resourceVersion"])


def test_a_watch_without_resource_version_starts_with_the_current_objects(shop, core):
    events = watch_lines(core, label_selector="app=other", timeout_seconds=1)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "free")]


def test_a_watch_sees_an_object_leave_its_selection_as_deleted(shop, core):
    rv = str(shop.store.revision)
    later(0.1, lambda: shop.store.mutate(PODS, "shop", "free", lambda p: p["metadata"]["labels"].update(app="web")))
    events = watch_lines(core, label_selector="app=other", resource_version=rv, timeout_seconds=1)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("DELETED", "free")]


def test_a_watch_from_a_compacted_resource_version_is_410_gone(shop, core):
    rv = str(shop.store.revision)
    shop.store.compact()
    [event] = watch_lines(core, resource_version=rv, timeout_seconds=5)
    assert event["type"] == "ERROR"
    assert (event["object"]["code"], event["object"]["reason"]) == (410, "Expired")
    assert event["object"]["message"] == f"too old resource version: {rv} ({shop.store.compacted})"
    shop.watch_gone = "status"
    with pytest.raises(ApiException) as err:
        watch_lines(core, resource_version=rv, timeout_seconds=5)
    assert err.value.status == 410


def test_a_watch_cut_mid_stream_breaks_the_client_read(shop, core):
    shop.faults.script([cut(events=1)], path="/api/v1/namespaces/shop/pods", query={"watch": "true"})
    with pytest.raises(Exception) as err:  # noqa: PT011 (urllib3's ProtocolError, whatever its wording)
        watch_lines(core, timeout_seconds=5)
    assert "ProtocolError" in type(err.value).__name__ or "IncompleteRead" in type(err.value).__name__


def test_a_quiet_watch_gets_bookmarks_when_it_asks(shop, core):
    shop.bookmark_seconds = 0.2
    events = watch_lines(core, resource_version=str(shop.store.revision), timeout_seconds=1,
                         allow_watch_bookmarks=True)
    assert events
    assert {e["type"] for e in events} == {"BOOKMARK"}
    assert events[0]["object"]["metadata"] == {"resourceVersion": str(shop.store.revision)}


# -- the controllers -----------------------------------------------------------------------------------

def test_the_scheduler_binds_by_priority_where_the_pod_fits_and_honours_taints(fake_api):
    reserved = {"key": "CriticalAddonsOnly", "value": "kresched", "effect": "NoSchedule"}
    fake_api.load(make_state(
        [make_node("node-a", cpu="2", taints=[reserved]), make_node("node-b", cpu="2")],
        [make_pod("low", "shop", cpu="2", priority=1),
         make_pod("high", "shop", cpu="2", priority=10),
         make_pod("critical", "shop", cpu="2", priority=5,
                  tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}]),
         make_pod("held", "shop", cpu="1", priority=100)]))
    fake_api.scheduler.set("shop/held", NEVER)
    fake_api.controllers.settle()
    # high goes first and only node-b takes it (node-a is reserved); critical tolerates the taint.
    assert fake_api.scheduler.bindings == [("shop/high", "node-b"), ("shop/critical", "node-a")]
    assert stored(fake_api, PODS, "shop", "high")["status"]["phase"] == "Running"  # the kubelet started it
    assert not stored(fake_api, PODS, "shop", "low")["spec"].get("nodeName")
    assert not stored(fake_api, PODS, "shop", "held")["spec"].get("nodeName")


def test_a_budget_recovers_when_the_evicted_pods_replacement_is_ready(shop, core):
    shop.controllers.pdbs.enabled = True
    shop.controllers.replicasets.enabled = True
    evict(core, "web-0")
    evict(core, "web-1")
    assert budget(shop)["disruptionsAllowed"] == 0
    shop.controllers.settle()
    assert len(shop.controllers.replicasets.created) == 2  # rs-xxxxx, bound and started
    for key in shop.controllers.replicasets.created:
        ns, name = key.split("/")
        assert name.startswith("rs-")
        assert stored(shop, PODS, ns, name)["status"]["phase"] == "Running"
    assert (budget(shop)["currentHealthy"], budget(shop)["disruptionsAllowed"]) == (4, 2)
    assert evict(core, "web-2").status == 201


def test_faults_may_answer_for_the_server(shop, core):
    shop.faults.script([call(lambda r: Response(418, {"kind": "Status", "code": 418}))], path="/api/v1/nodes")
    with pytest.raises(ApiException) as err:
        core.list_node()
    assert err.value.status == 418


def test_leases_are_created_once_and_updated_only_from_their_current_version(fake_api, fake_kubeconfig):
    with connect(str(fake_kubeconfig)) as c:
        leases = k8s.CoordinationV1Api(c.api_client)
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": "kresched", "namespace": "kube-system"}, "spec": {"holderIdentity": "a"}}
        created = leases.create_namespaced_lease("kube-system", body)
        with pytest.raises(ApiException) as err:
            leases.create_namespaced_lease("kube-system", body)
        assert (err.value.status, status_of(err)["reason"]) == (409, "AlreadyExists")
        rv = created.metadata.resource_version
        update = {**body, "metadata": {**body["metadata"], "resourceVersion": rv}, "spec": {"holderIdentity": "b"}}
        updated = leases.replace_namespaced_lease("kresched", "kube-system", update)
        assert (updated.spec.holder_identity, updated.metadata.uid) == ("b", created.metadata.uid)
        with pytest.raises(ApiException) as err:
            leases.replace_namespaced_lease("kresched", "kube-system", update)  # rv is stale now
        assert (err.value.status, status_of(err)["reason"]) == (409, "Conflict")
        with pytest.raises(ApiException) as err:
            leases.replace_namespaced_lease("kresched", "kube-system", body)  # no resourceVersion at all
        assert err.value.status == 422


def test_a_max_unavailable_budget_comes_back_only_when_a_replacement_is_ready(fake_api, core):
    pods = [make_pod(f"api-{i}", "shop", node="node-a", labels={"app": "api"}, owner="ReplicaSet/api-6c")
            for i in range(3)]
    fake_api.load(make_state([make_node("node-a", cpu="16")], pods,
                             [make_pdb("api", "shop", selector={"app": "api"}, max_unavailable=1)]))
    pdbs = fake_api.controllers.pdbs
    pdbs.sync()

    def api_budget() -> tuple[int, int, int, int]:
        st = stored(fake_api, PDBS, "shop", "api")["status"]
        return st["expectedPods"], st["desiredHealthy"], st["currentHealthy"], st["disruptionsAllowed"]

    assert api_budget() == (3, 2, 3, 1)
    evict(core, "api-0")
    pdbs.sync()
    assert api_budget() == (3, 2, 2, 0)  # the ReplicaSet still wants 3: the pod gone does not shrink it
    replacement = make_pod("api-new", "shop", node="node-a", labels={"app": "api"}, owner="ReplicaSet/api-6c")
    fake_api.load(replacement)
    pdbs.sync()
    assert api_budget() == (3, 2, 3, 1)
