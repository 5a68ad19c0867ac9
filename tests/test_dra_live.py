"""The DRA kinds read live, over real HTTP against the fake API server: the version chosen from the
group's discovery (v1, else v1beta2, else v1beta1), page by page, a cluster without the group (no
devices, nothing said), one serving only a version kresched cannot read (devices unknown), 403s
and transient failures, and `kresched snapshot` writing them so that they read back equal."""

from __future__ import annotations

import copy
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kresched.errors import ClusterAccessError, ExitCode
from kresched.model.dra import DRA_KINDS, DraState
from kresched.sources.connection import LiveClient, connect
from kresched.sources.decode import decode_json
from kresched.sources.live import load_live
from kresched.sources.snapshot import build_state, load_snapshot
from tests.builders import make_node
from tests.clirun import run_cli
from tests.dra_objects import SLICE, V1, V1BETA1
from tests.fakeapi import DEFAULT_USER, FakeApiServer, Response, status
from tests.test_live import fast_retry

GROUP = "/apis/resource.k8s.io"
LISTS = ("deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates")


def second_slice() -> dict[str, Any]:
    other = copy.deepcopy(SLICE)
    other["metadata"] = {"name": "node-b-gpu", "uid": "u-slice-b"}
    other["spec"]["nodeName"] = other["spec"]["pool"]["name"] = "node-b"
    return other


OBJECTS = [*V1, second_slice()]


def expected() -> DraState:
    """What a snapshot of the same objects reads as."""
    return build_state(decode_json(json.dumps({"kind": "List", "items": OBJECTS}).encode(), "t")).dra


def comparable(dra: DraState) -> list[bytes]:
    """Every object as kresched writes it, without the resourceVersion the server assigned."""
    def strip(obj: Any) -> bytes:
        meta = msgspec.structs.replace(obj.metadata, resource_version="")
        return msgspec.json.encode(msgspec.structs.replace(obj, metadata=meta))

    return sorted(strip(o) for o in (*dra.classes, *dra.slices, *dra.claims, *dra.templates))


@pytest.fixture
def client(fake_api: FakeApiServer, fake_kubeconfig: Path) -> Iterator[LiveClient]:
    fake_api.load(make_node("node-a"), make_node("node-b"), OBJECTS)
    with connect(str(fake_kubeconfig)) as c:
        yield c


def dra_paths(fake_api: FakeApiServer) -> list[str]:
    return [c.path for c in fake_api.requests if c.path.startswith(GROUP)]


# -- which version --------------------------------------------------------------------------------

@pytest.mark.parametrize(("served", "read"), [
    (("v1",), "v1"),                         # v1.34 on
    (("v1", "v1beta2", "v1beta1"), "v1"),    # the betas enabled beside it
    (("v1beta2", "v1beta1"), "v1beta2"),     # v1.33
    (("v1beta1",), "v1beta1"),               # v1.32
    (("v1beta1", "v1beta2"), "v1beta2"),     # whatever the server prefers, v1beta2 is read before v1beta1
])
def test_the_version_read_is_the_most_preferred_one_served(fake_api, client, served, read):
    fake_api.dra_versions = served
    state = load_live(client)
    assert dra_paths(fake_api) == [GROUP, *(f"{GROUP}/{read}/{r}" for r in LISTS)]
    assert comparable(state.dra) == comparable(expected())
    assert state.dra.kinds == frozenset(DRA_KINDS)


def test_v1beta1_served_objects_read_as_their_v1_selves(fake_api, client):
    """The fake converts as the API server does; the objects read are the ones stored."""
    fake_api.dra_versions = ("v1beta1",)
    request = urllib.request.Request(f"{fake_api.url}{GROUP}/v1beta1/resourceslices",
                                     headers={"Authorization": f"Bearer {fake_api.token}"})
    with urllib.request.urlopen(request) as answer:
        served = json.load(answer)["items"][0]
    assert "basic" in served["spec"]["devices"][0]
    assert comparable(load_live(client).dra) == comparable(expected())


def test_objects_created_in_v1beta1_read_the_same(fake_api, fake_kubeconfig):
    fake_api.load(make_node("node-a"), V1BETA1)
    with connect(str(fake_kubeconfig)) as c:
        dra = load_live(c).dra
    assert comparable(dra) == comparable(build_state(decode_json(json.dumps(
        {"kind": "List", "items": V1}).encode(), "t")).dra)


def test_the_lists_are_read_page_by_page(fake_api, client):
    state = load_live(client, page_size=1)
    slices = fake_api.calls(f"{GROUP}/v1/resourceslices")
    assert [c.query.get("limit") for c in slices] == ["1", "1"]
    assert "continue" not in slices[0].query
    assert slices[1].query.get("continue")
    assert sorted(s.name for s in state.dra.slices) == ["node-a-gpu", "node-b-gpu"]


# -- no devices, or devices kresched cannot read ----------------------------------------------------

def test_a_cluster_without_the_resource_group_has_no_devices_and_nothing_is_said(fake_api, client, monkeypatch,
                                                                                 tmp_path):
    fake_api.dra_versions = ()
    state = load_live(client)
    assert state.dra == DraState.build(kinds=frozenset(DRA_KINDS))
    assert state.dra.is_known
    assert dra_paths(fake_api) == [GROUP]
    snap = tmp_path / "snap.json"
    r = run_cli(monkeypatch, "snapshot", "--kubeconfig", str(fake_api.write_kubeconfig(tmp_path / "kc")),
                "--file", str(snap))
    assert (r.exit_code, r.stderr) == (0, "wrote 2 nodes, 0 pods, 0 PodDisruptionBudgets, 0 PriorityClasses, "
                                          f"0 PersistentVolumeClaims to {snap}\n")
    assert not [i for i in msgspec.json.decode(snap.read_bytes())["items"]
                if i["apiVersion"].startswith("resource.k8s.io")]


def test_a_group_serving_only_an_alpha_version_leaves_devices_unknown(fake_api, client):
    """v1.31's v1alpha3 has another shape: no list is read, and a pod's claims stay unknowable
    rather than read as asking for nothing."""
    fake_api.dra_versions = ("v1alpha3",)
    state = load_live(client)
    assert not state.dra.is_known
    assert dra_paths(fake_api) == [GROUP]


# -- failures ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("resource", LISTS)
def test_a_forbidden_dra_list_stops_the_read_naming_the_rule_to_add(fake_api, client, resource):
    """As for every list: a plan made without the devices would put GPU pods where they cannot run."""
    fake_api.forbid("list", f"{resource}.resource.k8s.io")
    with pytest.raises(ClusterAccessError) as err:
        load_live(client)
    assert err.value.message == (
        f"forbidden: cannot list {resource}.resource.k8s.io at the cluster scope (needs RBAC: apiGroups "
        f'["resource.k8s.io"], resources ["{resource}"], verbs ["list"] for User "{DEFAULT_USER}")')


def test_a_forbidden_discovery_stops_the_read_naming_the_url(fake_api, client):
    fake_api.faults.script([status(403, f'forbidden: User "{DEFAULT_USER}" cannot get path "{GROUP}"')],
                           path=GROUP)
    with pytest.raises(ClusterAccessError) as err:
        load_live(client)
    assert err.value.message == (
        f"forbidden: cannot get {GROUP} (the discovery of the API group resource.k8s.io) (needs RBAC: "
        f'nonResourceURLs ["{GROUP}"], verbs ["get"] for User "{DEFAULT_USER}")')


def test_a_transient_failure_of_the_discovery_is_retried(fake_api, client):
    fake_api.faults.script([503, 500], path=GROUP)
    policy, sleeps = fast_retry()
    state = load_live(client, retry=policy)
    assert len(sleeps) == 2
    assert comparable(state.dra) == comparable(expected())


def test_a_discovery_answer_that_is_not_an_api_group_is_refused(fake_api, client):
    fake_api.route("GET", GROUP, lambda req: Response(200, {"kind": "APIGroupList", "groups": []}))
    with pytest.raises(ClusterAccessError, match=r"/apis/resource.k8s.io: expected an APIGroup from the API server, "
                                                 r"got APIGroupList"):
        load_live(client)


# -- kresched snapshot ------------------------------------------------------------------------------

@pytest.mark.parametrize("served", [("v1",), ("v1beta1",)])
def test_snapshot_writes_the_dra_objects_and_they_read_back_equal(fake_api, client, monkeypatch, tmp_path, served):
    fake_api.dra_versions = served
    live = load_live(client)
    snap = tmp_path / "snap.json"
    r = run_cli(monkeypatch, "snapshot", "--kubeconfig", str(fake_api.write_kubeconfig(tmp_path / "kc")),
                "--file", str(snap))
    assert r.exit_code == 0
    assert r.stderr.endswith(f"0 PersistentVolumeClaims, 1 DeviceClasses, 2 ResourceSlices, 1 ResourceClaims, "
                             f"1 ResourceClaimTemplates to {snap}\n")
    kinds = sorted(i["kind"] for i in msgspec.json.decode(snap.read_bytes())["items"]
                   if i["apiVersion"] == "resource.k8s.io/v1")
    assert kinds == ["DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "ResourceSlice"]
    again = load_snapshot(str(snap))
    assert again.dra == live.dra
    assert again.dra.kinds == frozenset(DRA_KINDS)


def test_snapshot_of_a_forbidden_list_exits_with_the_access_code(fake_api, client, monkeypatch, tmp_path):
    fake_api.forbid("list", "resourceclaims.resource.k8s.io")
    r = run_cli(monkeypatch, "snapshot", "--kubeconfig", str(fake_api.write_kubeconfig(tmp_path / "kc")))
    assert (r.exit_code, r.stdout) == (ExitCode.CLUSTER_ACCESS, "")
    assert r.stderr.startswith("error: forbidden: cannot list resourceclaims.resource.k8s.io at the cluster scope")
