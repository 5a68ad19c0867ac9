"""Gangs read live, over real HTTP against the fake API server: which of the gang APIs the server
serves (each group version's discovery; a cluster without them lists nothing and says nothing), the
lists page by page, a CRD's list items with their kind and apiVersion and a built-in one's without,
a 403 that leaves the kind unknown instead of failing the run, transient failures, and `kresched
snapshot` writing them so that they read back equal."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kresched.errors import ClusterAccessError
from kresched.model.cluster import ClusterState
from kresched.model.gangs import COSCHEDULING_API, GANG_KINDS, VOLCANO_API, WORKLOAD_API
from kresched.sources.connection import LiveClient, connect
from kresched.sources.decode import decode_json
from kresched.sources.live import load_live
from kresched.sources.snapshot import build_state, load_snapshot
from tests.builders import make_node
from tests.clirun import run_cli
from tests.fakeapi import (
    COSCHEDULING_POD_GROUPS,
    DEFAULT_USER,
    GANGS,
    POD_GROUPS,
    SCHEDULING_WORKLOADS,
    VOLCANO_POD_GROUPS,
    FakeApiServer,
    Response,
    status,
)
from tests.test_gangs_read import (
    COSCHEDULING_POD_GROUP,
    MEMBER,
    RECORDED,
    VOLCANO_POD_GROUP,
    WORKLOAD,
    WORKLOAD_POD_GROUP,
)
from tests.test_live import fast_retry

DISCOVERY = ("/apis/scheduling.k8s.io/v1alpha2", "/apis/scheduling.x-k8s.io/v1alpha1",
             "/apis/scheduling.volcano.sh/v1beta1")
LISTS = {r: f"{r.prefix}/{r.plural}" for r in GANGS}
OBJECTS = [WORKLOAD_POD_GROUP, COSCHEDULING_POD_GROUP, VOLCANO_POD_GROUP, WORKLOAD, MEMBER]


def second(obj: dict[str, Any], name: str) -> dict[str, Any]:
    other = json.loads(json.dumps(obj))
    other["metadata"] = {"name": name, "namespace": "ml"}
    return other


EVERY = [*OBJECTS, second(VOLCANO_POD_GROUP, "job-2"), second(WORKLOAD_POD_GROUP, "eval")]


def comparable(state: ClusterState) -> list[bytes]:
    """The gang objects as kresched writes them, without the resourceVersion the server assigned."""
    def strip(obj: Any) -> bytes:
        meta = msgspec.structs.replace(obj.metadata, resource_version="")
        return msgspec.json.encode(msgspec.structs.replace(obj, metadata=meta))

    return sorted(strip(o) for o in (*state.pod_groups, *state.scheduling_workloads))


def from_a_file(objects: list[dict[str, Any]]) -> ClusterState:
    return build_state(decode_json(json.dumps({"kind": "List", "items": objects}).encode(), "t"))


@pytest.fixture
def client(fake_api: FakeApiServer, fake_kubeconfig: Path) -> Iterator[LiveClient]:
    fake_api.load(make_node("node-a"), EVERY)
    fake_api.gangs_served = GANGS
    with connect(str(fake_kubeconfig)) as c:
        yield c


def gang_requests(fake_api: FakeApiServer) -> list[str]:
    return [c.path for c in fake_api.requests if c.path.startswith(DISCOVERY)]


# -- served -----------------------------------------------------------------------------------------

def test_every_served_gang_api_is_listed_and_read_as_a_snapshot_of_the_same_objects(fake_api, client):
    state = load_live(client)
    assert comparable(state) == comparable(from_a_file(EVERY))
    assert sorted((g.flavor, g.key) for g in state.pod_groups) == [
        ("coscheduling", "ml/nginx"), ("volcano", "ml/job-1"), ("volcano", "ml/job-2"), ("workload", "ml/eval"),
        ("workload", "ml/train")]
    assert state.gang_kinds == frozenset(GANG_KINDS)
    assert gang_requests(fake_api) == [*DISCOVERY, LISTS[SCHEDULING_WORKLOADS], LISTS[POD_GROUPS],
                                       LISTS[COSCHEDULING_POD_GROUPS], LISTS[VOLCANO_POD_GROUPS]]
    gang = state.gangs.gang_of(state.pod("ml/train-0"))
    assert (gang.min_count, gang.assumed) == (4, False)


def test_a_state_loaded_into_the_fake_serves_its_gang_objects(fake_kubeconfig):
    """`FakeApiServer.load` takes a ClusterState's PodGroups and Workloads, each into its API."""
    with FakeApiServer(from_a_file(EVERY)) as fake:
        fake.gangs_served = GANGS
        with connect(str(fake.write_kubeconfig(fake_kubeconfig.parent / "kc2"))) as c:
            state = load_live(c)
    assert comparable(state) == comparable(from_a_file(EVERY))


def test_a_built_in_lists_items_carry_no_api_version_and_a_crds_do(fake_api, client):
    """What the fake serves, as a real server does: the reader must not need either."""
    pages = {}
    for res in (POD_GROUPS, VOLCANO_POD_GROUPS):
        req = urllib.request.Request(f"{fake_api.url}{LISTS[res]}", headers={"Authorization": "Bearer fake-token"})
        with urllib.request.urlopen(req) as resp:
            pages[res.group] = json.loads(resp.read())
    assert {k for i in pages["scheduling.k8s.io"]["items"] for k in i} == {"metadata", "spec", "status"}
    assert pages["scheduling.k8s.io"]["items"][0]["spec"]["podGroupTemplateRef"] is None  # protobuf's nil
    assert all(i["apiVersion"] == VOLCANO_API and i["kind"] == "PodGroup"
               for i in pages["scheduling.volcano.sh"]["items"])


def test_the_lists_are_read_page_by_page(fake_api, client):
    state = load_live(client, page_size=1)
    calls = fake_api.calls(LISTS[VOLCANO_POD_GROUPS])
    assert [c.query.get("limit") for c in calls] == ["1", "1"]
    assert "continue" not in calls[0].query
    assert calls[1].query.get("continue")
    assert sorted(g.name for g in state.pod_groups if g.flavor == "volcano") == ["job-1", "job-2"]


def test_a_group_version_serving_only_some_kinds_lists_only_those_and_knows_the_rest(fake_api, client):
    """`--runtime-config` may enable the Workload resource without the PodGroup one: then there are no
    v1alpha2 PodGroups, and the PodGroups of the other APIs are still read."""
    fake_api.gangs_served = (SCHEDULING_WORKLOADS, VOLCANO_POD_GROUPS)
    state = load_live(client)
    assert gang_requests(fake_api) == [*DISCOVERY, LISTS[SCHEDULING_WORKLOADS], LISTS[VOLCANO_POD_GROUPS]]
    assert sorted(g.key for g in state.pod_groups) == ["ml/job-1", "ml/job-2"]
    assert [w.key for w in state.scheduling_workloads] == ["ml/train"]
    assert state.gang_kinds == frozenset(GANG_KINDS)


# -- not served: nothing said ------------------------------------------------------------------------

def test_a_cluster_without_any_gang_api_lists_nothing_and_says_nothing(fake_api, client, monkeypatch, tmp_path):
    fake_api.gangs_served = ()
    state = load_live(client)
    assert gang_requests(fake_api) == list(DISCOVERY)  # three 404s
    assert (state.pod_groups, state.scheduling_workloads) == ((), ())
    assert state.gang_kinds == frozenset(GANG_KINDS)  # known: the cluster has none
    gang = state.gangs.gang_of(state.pod("ml/train-0"))  # (the pod names a PodGroup all the same)
    assert gang.assumed
    assert "not in the snapshot" in gang.declared_by
    snap = tmp_path / "snap.json"
    r = run_cli(monkeypatch, "snapshot", "--kubeconfig", str(fake_api.write_kubeconfig(tmp_path / "kc")),
                "--file", str(snap))
    assert (r.exit_code, r.stderr) == (0, "wrote 1 nodes, 1 pods, 0 PodDisruptionBudgets, 0 PriorityClasses, "
                                          f"0 PersistentVolumeClaims to {snap}\n")


# -- forbidden: the run goes on, the kind unknown ----------------------------------------------------

@pytest.mark.parametrize("resource", [POD_GROUPS, COSCHEDULING_POD_GROUPS, VOLCANO_POD_GROUPS])
def test_a_forbidden_pod_group_list_leaves_pod_groups_unknown_and_the_run_goes_on(fake_api, client, resource):
    fake_api.forbid("list", f"podgroups.{resource.group}")
    state = load_live(client)
    assert "PodGroup" not in state.gang_kinds
    assert "Workload" in state.gang_kinds
    read = {g.api_version for g in state.pod_groups}
    assert read == {WORKLOAD_API, COSCHEDULING_API, VOLCANO_API} - {resource.api_version}
    assert [p.key for p in state.pods] == ["ml/train-0"]  # the pods are read after it


def test_a_gang_whose_pod_group_could_not_be_read_needs_every_member_and_says_so(fake_api, client):
    fake_api.forbid("list", "podgroups.scheduling.k8s.io")
    state = load_live(client)
    gang = state.gangs.gang_of(state.pod("ml/train-0"))
    assert (gang.min_count, gang.assumed) == (1, True)  # its one member in the state
    assert gang.declared_by == f"PodGroup {WORKLOAD_API} ml/train not read: every member"


def test_a_forbidden_workload_list_leaves_workloads_unknown(fake_api, client):
    fake_api.forbid("list", "workloads.scheduling.k8s.io")
    state = load_live(client)
    assert state.gang_kinds == {"PodGroup"}
    assert state.scheduling_workloads == ()


@pytest.mark.parametrize("path", DISCOVERY)
def test_a_forbidden_discovery_leaves_its_kinds_unknown_and_the_run_goes_on(fake_api, client, path):
    fake_api.faults.script([status(403, f'forbidden: User "{DEFAULT_USER}" cannot get path "{path}"')], path=path)
    state = load_live(client)
    unknown = {"PodGroup", "Workload"} if path == DISCOVERY[0] else {"PodGroup"}
    assert state.gang_kinds == frozenset(GANG_KINDS) - unknown
    assert path.removeprefix("/apis/") not in {g.api_version for g in state.pod_groups}


def test_a_list_gone_between_discovery_and_listing_is_read_as_unknown(fake_api, client):
    """A CRD deleted in between: 404 on its list, as on any optional list."""
    fake_api.faults.script([404], path=LISTS[COSCHEDULING_POD_GROUPS])
    state = load_live(client)
    assert "PodGroup" not in state.gang_kinds
    assert COSCHEDULING_API not in {g.api_version for g in state.pod_groups}


# -- other failures -----------------------------------------------------------------------------------

def test_a_transient_failure_of_a_discovery_and_of_a_list_is_retried(fake_api, client):
    fake_api.faults.script([503, 500], path=DISCOVERY[2])
    fake_api.faults.script([503], path=LISTS[POD_GROUPS])
    policy, sleeps = fast_retry()
    state = load_live(client, retry=policy)
    assert len(sleeps) == 3
    assert comparable(state) == comparable(from_a_file(EVERY))


def test_a_discovery_that_keeps_failing_stops_the_read(fake_api, client):
    fake_api.faults.script([500], path=DISCOVERY[1], repeat=True)
    policy, _ = fast_retry()
    with pytest.raises(ClusterAccessError) as err:
        load_live(client, retry=policy)
    assert err.value.message.startswith(
        f"cannot get {DISCOVERY[1]} (the discovery of the API group version scheduling.x-k8s.io/v1alpha1): the API "
        f"server at {fake_api.url} answered 500")


def test_a_discovery_answer_that_is_not_a_resource_list_is_refused(fake_api, client):
    fake_api.route("GET", DISCOVERY[2], lambda req: Response(200, {"kind": "APIGroup", "versions": []}))
    with pytest.raises(ClusterAccessError, match=r"/apis/scheduling.volcano.sh/v1beta1: expected an APIResourceList "
                                                 r"from the API server, got APIGroup"):
        load_live(client)


def test_a_bad_object_in_a_gang_list_is_the_servers_answer_named(fake_api, client):
    fake_api.route("GET", LISTS[VOLCANO_POD_GROUPS], lambda req: Response(200, {
        "apiVersion": VOLCANO_API, "kind": "PodGroupList", "metadata": {},
        "items": [{"apiVersion": VOLCANO_API, "kind": "PodGroup", "metadata": {"name": "b", "namespace": "ml"},
                   "spec": {"minMember": "two"}}]}))
    with pytest.raises(ClusterAccessError, match=r"^the API server sent an object kresched cannot use: .*"
                                                 r"/apis/scheduling.volcano.sh/v1beta1/podgroups \(page 1\): "
                                                 r"PodGroup ml/b: spec.minMember"):
        load_live(client)


# -- kresched snapshot ------------------------------------------------------------------------------

def test_snapshot_writes_the_gang_objects_and_they_read_back_equal(fake_api, client, monkeypatch, tmp_path):
    live = load_live(client)
    snap = tmp_path / "snap.json"
    r = run_cli(monkeypatch, "snapshot", "--kubeconfig", str(fake_api.write_kubeconfig(tmp_path / "kc")),
                "--file", str(snap))
    assert r.exit_code == 0, r.stderr
    assert r.stderr.endswith(f"0 PersistentVolumeClaims, 5 PodGroups, 1 Workloads to {snap}\n")
    items = msgspec.json.decode(snap.read_bytes())["items"]
    assert sorted((i["apiVersion"], i["kind"]) for i in items if i["kind"] in GANG_KINDS) == [
        (WORKLOAD_API, "PodGroup"), (WORKLOAD_API, "PodGroup"), (WORKLOAD_API, "Workload"),
        (VOLCANO_API, "PodGroup"), (VOLCANO_API, "PodGroup"), (COSCHEDULING_API, "PodGroup")]
    again = load_snapshot(str(snap))
    assert comparable(again) == comparable(live)
    assert again.pod("ml/train-0").spec.scheduling_group == live.pod("ml/train-0").spec.scheduling_group
    assert again.pods == live.pods


# -- a real server's answers --------------------------------------------------------------------------

def test_the_recorded_answers_of_a_real_server_read_as_its_kubectl_dump(fake_api, fake_kubeconfig):
    """The v1.36.2 rig's discovery documents and list answers (tests/fixtures/gang-objects), served
    as recorded: a built-in list's items without kind nor apiVersion, a CRD's keys sorted with
    `kind` after `items`, `podgroups/status` among the resources."""
    for path in sorted((RECORDED / "api").glob("*.json")):
        url = "/apis/" + path.stem.replace("_", "/")
        data = path.read_bytes()
        fake_api.route("GET", url, lambda req, data=data: Response(200, data))
    with connect(str(fake_kubeconfig)) as c:
        state = load_live(c)
    dump = load_snapshot(str(RECORDED / "kubectl-list.json"))
    assert comparable(state) == comparable(dump)
    assert state.gang_kinds == frozenset(GANG_KINDS)
