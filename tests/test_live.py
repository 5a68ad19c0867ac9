"""The live source over real HTTP: the official client, unmodified, against the fake API server."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import urllib3
import yaml
from kubernetes import client as k8s
from typer.testing import CliRunner

from kresched.cli import app
from kresched.cli.common import ENV
from kresched.errors import ClusterAccessError, ExitCode
from kresched.model.cluster import ClusterState
from kresched.model.dra import DRA_KINDS, DraState
from kresched.model.gangs import GANG_KINDS
from kresched.model.storage import STORAGE_KINDS, StorageState
from kresched.plan.explain import explain_pod
from kresched.retry import RetryPolicy
from kresched.sources import live
from kresched.sources.calls import ApiCall, access_error, is_transient
from kresched.sources.connection import LiveClient, connect
from kresched.sources.live import load_live
from kresched.sources.snapshot import load_snapshot
from tests import fakeapi
from tests.builders import (
    make_csinode,
    make_namespace,
    make_node,
    make_pdb,
    make_pod,
    make_priority_class,
    make_pv,
    make_pvc,
    make_state,
    make_storage_class,
    pvc_volume,
)
from tests.fakeapi import DEFAULT_USER, DROP, PASS, RESET, FakeApiServer, Request, Response, call, delay, status

PODS = "/api/v1/pods"
NODES = "/api/v1/nodes"
PDBS = "/apis/policy/v1/poddisruptionbudgets"


class Sleeps(list[float]):
    """A `sleep` for RetryPolicy that records instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture(autouse=True)
def _unscaled_backoff(monkeypatch):
    """The tests below record pauses instead of sleeping, and assert their exact lengths."""
    monkeypatch.setenv("KRESCHED_BACKOFF_SCALE", "1")


def fast_retry(attempts: int = 3, **kw: Any) -> tuple[RetryPolicy, Sleeps]:
    sleeps = Sleeps()
    return RetryPolicy(attempts=attempts, initial_seconds=0.001, max_seconds=0.01, jitter_seconds=0,
                       sleep=sleeps, **kw), sleeps


def seed_state() -> ClusterState:
    """3 namespaces, 2 PriorityClasses, 4 nodes, 2 PDBs and 13 pods (one pending, one critical)."""
    nodes = [make_node(f"node-{c}", cpu="8", memory="32Gi", taints=[{"key": "gpu", "effect": "NoSchedule"}]
                       if c == "d" else None) for c in "abcd"]
    pods = [make_pod(f"web-{i}", "shop", node=f"node-{'abc'[i % 3]}", cpu="500m", memory="1Gi",
                     labels={"app": "web"}, priority=None, priority_class="low", grace=5) for i in range(8)]
    pods += [make_pod(f"db-{i}", "data", node="node-a", cpu="2", memory="8Gi", limits={"cpu": "2", "memory": "8Gi"},
                      labels={"app": "db"}, owner="StatefulSet/db") for i in range(3)]
    pods.append(make_pod("dns", "kube-system", node="node-b", priority_class="system-cluster-critical",
                         priority=2_000_000_000, owner="ReplicaSet/coredns-7d9"))
    pods.append(make_pod("pending", "shop", cpu="4", priority=None, priority_class="high", owner=None))
    return make_state(
        nodes, pods,
        [make_pdb("web", "shop", selector={"app": "web"}, min_available=6, disruptions_allowed=2),
         make_pdb("db", "data", selector={"app": "db"}, max_unavailable=1)],
        [make_priority_class("low", 100, global_default=True), make_priority_class("high", 1_000_000)],
        [make_namespace(n, {"kubernetes.io/metadata.name": n}) for n in ("shop", "data", "kube-system")],
    )


def comparable(state: ClusterState) -> dict[str, list[Any]]:
    """The state's objects in key order without resourceVersions (which the server assigns)."""

    def strip(obj: Any) -> Any:
        return msgspec.structs.replace(obj, metadata=msgspec.structs.replace(obj.metadata, resource_version=""))

    def key(obj: Any) -> tuple[str, str]:
        return obj.metadata.namespace, obj.metadata.name

    return {kind: sorted((strip(o) for o in getattr(state, kind)), key=key)
            for kind in ("nodes", "pods", "pdbs", "priority_classes", "namespaces")}


@pytest.fixture
def seeded(fake_api: FakeApiServer) -> ClusterState:
    state = seed_state()
    fake_api.load(state)
    return state


@pytest.fixture
def client(fake_kubeconfig: Path) -> Iterator[LiveClient]:
    with connect(str(fake_kubeconfig)) as c:
        yield c


# -- loading ------------------------------------------------------------------------------------

def test_the_loaded_state_equals_the_snapshot_the_server_was_seeded_with(seeded, client, fake_api):
    state = load_live(client)
    assert comparable(state) == comparable(seeded)
    assert state.pod("shop/pending").priority == 1_000_000  # spec.priority as the server stored it
    stored = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in fake_api.store.list(fakeapi.PODS)}
    assert {p.name: p.metadata.resource_version for p in state.pods} == stored


def test_lists_are_read_page_by_page_with_the_continue_token(seeded, client, fake_api):
    state = load_live(client, page_size=4)
    assert len(state.pods) == 13
    calls = fake_api.calls(PODS)
    assert [c.query.get("limit") for c in calls] == ["4"] * 4
    assert "continue" not in calls[0].query
    tokens = [c.query.get("continue") for c in calls[1:]]
    assert all(tokens)
    assert len(set(tokens)) == 3
    assert len(fake_api.calls(NODES)) == 1  # 4 nodes fit in one page of 4
    dra = "/apis/resource.k8s.io"
    assert [c.path for c in fake_api.requests] == [
        "/api/v1/namespaces", "/apis/scheduling.k8s.io/v1/priorityclasses", NODES, PDBS,
        "/api/v1/services", "/api/v1/replicationcontrollers", "/apis/apps/v1/replicasets", "/apis/apps/v1/statefulsets",
        "/apis/storage.k8s.io/v1/storageclasses", "/apis/storage.k8s.io/v1/csinodes", "/api/v1/persistentvolumes",
        "/api/v1/persistentvolumeclaims", NODE_LEASES, dra, f"{dra}/v1/deviceclasses", f"{dra}/v1/resourceslices",
        f"{dra}/v1/resourceclaims", f"{dra}/v1/resourceclaimtemplates",
        # the gang APIs' discovery: none served (404), nothing listed
        "/apis/scheduling.k8s.io/v1alpha2", "/apis/scheduling.x-k8s.io/v1alpha1", "/apis/scheduling.volcano.sh/v1beta1",
        PODS, PODS, PODS, PODS]



NODE_LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"


def node_lease(node: str, renewed: str) -> dict[str, object]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": node, "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": node, "leaseDurationSeconds": 40, "renewTime": renewed}}


def test_the_kubelets_leases_are_read_page_by_page_and_only_kube_node_leases(seeded, client, fake_api):
    fake_api.load([node_lease(f"node-{i}", f"2026-11-28T22:00:0{i}.000000Z") for i in range(5)],
                  {**node_lease("kube-scheduler", "2026-11-28T22:00:00.000000Z"),
                   "metadata": {"name": "kube-scheduler", "namespace": "kube-system"}})
    state = load_live(client, page_size=2)
    assert sorted(state.lease_by_node) == [f"node-{i}" for i in range(5)]
    assert state.lease_by_node["node-3"].spec.renew_time == "2026-11-28T22:00:03.000000Z"
    assert [c.query.get("continue") is not None for c in fake_api.calls(NODE_LEASES)] == [False, True, True]


def test_a_role_that_cannot_list_leases_still_reads_the_cluster_without_them(seeded, client, fake_api):
    fake_api.load(node_lease("node-0", "2026-11-28T22:00:00.000000Z"))
    fake_api.forbid("list", "leases.coordination.k8s.io")
    state = load_live(client)
    assert len(state.nodes) == 4
    assert state.node_leases == ()


def test_an_expired_continue_token_restarts_the_list_once(seeded, client, fake_api):
    fake_api.faults.script([PASS, call(lambda req: fake_api.store.compact())], path=PODS)
    state = load_live(client, page_size=5)
    assert comparable(state) == comparable(seeded)
    calls = fake_api.calls(PODS)
    assert [c.status for c in calls] == [200, 410, 200, 200, 200]
    assert "continue" not in calls[2].query  # restarted from the beginning, not continued inconsistently


def test_a_list_that_keeps_expiring_is_a_clear_error(seeded, client, fake_api):
    fake_api.faults.script([call(lambda req: fake_api.store.compact())], path=PODS, repeat=True)
    with pytest.raises(ClusterAccessError, match=r"^cannot list pods at the cluster scope: the list expired twice"):
        load_live(client, page_size=5)
    assert [c.status for c in fake_api.calls(PODS)] == [200, 410, 200, 410]


def test_a_malformed_object_from_the_server_is_an_error_naming_it(fake_api, client):
    fake_api.load({"kind": "Pod", "metadata": {"name": "bad", "namespace": "shop"},
                   "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}})
    # The server's answer, not the operator's input: exit 5 (cluster), not 2 (usage).
    with pytest.raises(ClusterAccessError, match=r"^the API server sent an object kresched cannot use: "
                                                 r".*/api/v1/pods \(page 1\): Pod shop/bad: .*cpu"):
        load_live(client)


def test_an_empty_cluster_loads_as_an_empty_state(fake_api, client):
    # Empty, and known to hold no storage, DRA or gang objects (so the volume filters run and find
    # nothing; a gang API the server does not serve holds no PodGroups).
    assert load_live(client) == ClusterState.build(storage=StorageState.build(kinds=frozenset(STORAGE_KINDS)),
                                                   dra=DraState.build(kinds=frozenset(DRA_KINDS)),
                                                   gang_kinds=frozenset(GANG_KINDS))


def test_storage_objects_are_listed_and_a_pod_with_claims_is_explained_with_the_volume_filters(fake_api, client):
    storage = [make_storage_class("gp3"), make_csinode("node-a", {"ebs.csi.aws.com": 25}),
               make_pvc("data-db-0", "data", volume="pv-db-0", storage_class="gp3"),
               make_pv("pv-db-0", claim="data/data-db-0", storage_class="gp3", csi=("ebs.csi.aws.com", "vol-0"),
                       node_affinity=[[{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]])]
    pending = make_pod("db-0", "data", owner="StatefulSet/db", volumes=[pvc_volume("data-db-0")])
    seeded = make_state([make_node("node-a", labels={"topology.kubernetes.io/zone": "a"})], [pending],
                        storage=storage)
    fake_api.load(seeded)
    state = load_live(client)
    assert state.storage.kinds == frozenset(STORAGE_KINDS)
    assert [c.key for c in state.storage.pvcs] == ["data/data-db-0"]
    assert [p.name for p in state.storage.pvs] == ["pv-db-0"]
    assert [c.name for c in state.storage.classes] == ["gp3"]
    assert [(n.name, n.limits()) for n in state.storage.csi_nodes] == [("node-a", {"ebs.csi.aws.com": 25})]
    expl = explain_pod(state, state.pod("data/db-0"))
    assert expl.message == "0/1 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity."


# -- errors -------------------------------------------------------------------------------------

def test_a_wrong_token_is_unauthorised(seeded, fake_api, tmp_path):
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kc", token="stolen")
    with connect(str(kubeconfig)) as c, pytest.raises(ClusterAccessError) as err:
        load_live(c)
    assert err.value.message == (f'unauthorised: the API server at {fake_api.url} rejected the credentials of '
                                 'kubeconfig context "fake": Unauthorized')
    assert err.value.exit_code == ExitCode.CLUSTER_ACCESS
    assert len(fake_api.requests) == 1  # not retried


@pytest.mark.parametrize(("resource", "expected"), [
    ("pods", 'forbidden: cannot list pods at the cluster scope (needs RBAC: apiGroups [""], resources ["pods"], '
             f'verbs ["list"] for User "{DEFAULT_USER}")'),
    ("poddisruptionbudgets.policy",
     'forbidden: cannot list poddisruptionbudgets.policy at the cluster scope (needs RBAC: apiGroups ["policy"], '
     f'resources ["poddisruptionbudgets"], verbs ["list"] for User "{DEFAULT_USER}")'),
])
def test_forbidden_names_the_verb_and_the_resource(seeded, client, fake_api, resource, expected):
    fake_api.forbid("list", resource)
    with pytest.raises(ClusterAccessError) as err:
        load_live(client)
    assert err.value.message == expected


def test_an_unreachable_server_is_reported_without_retrying(fake_api, tmp_path, closed_port_url):
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kc", server=closed_port_url)
    policy, sleeps = fast_retry()
    with connect(str(kubeconfig)) as c, pytest.raises(ClusterAccessError) as err:
        load_live(c, retry=policy)
    assert err.value.message == f"cannot reach the API server at {closed_port_url}: connection refused"
    assert sleeps == []


def test_transient_500s_are_retried_then_the_list_succeeds(seeded, client, fake_api):
    fake_api.faults.script([500, 503], path=NODES)
    policy, sleeps = fast_retry(attempts=3)
    state = load_live(client, retry=policy)
    assert len(state.nodes) == 4
    assert [c.status for c in fake_api.calls(NODES)] == [500, 503, 200]
    assert len(sleeps) == 2
    assert not fake_api.faults.pending()


def test_retries_give_up_with_the_servers_message(seeded, client, fake_api):
    fake_api.faults.script([status(500, "etcdserver: request timed out")], path=NODES, repeat=True)
    policy, sleeps = fast_retry(attempts=3)
    with pytest.raises(ClusterAccessError) as err:
        load_live(client, retry=policy)
    assert err.value.message == (f"cannot list nodes at the cluster scope: the API server at {fake_api.url} answered "
                                 "500 InternalError: Internal error occurred: etcdserver: request timed out")
    assert len(fake_api.calls(NODES)) == 3
    assert sleeps == [0.001, 0.002]  # exponential backoff


@pytest.mark.parametrize("fault", [DROP, RESET], ids=["dropped", "reset"])
def test_a_connection_lost_mid_list_is_retried(seeded, client, fake_api, fault):
    fake_api.faults.script([PASS, fault], path=PODS)
    state = load_live(client, page_size=5, retry=fast_retry()[0])
    assert comparable(state) == comparable(seeded)
    calls = fake_api.calls(PODS)
    assert [c.status for c in calls] == [200, None, 200, 200]
    assert calls[1].query == calls[2].query  # the same page again, same continue token


def test_a_slow_answer_times_out_and_is_retried(seeded, fake_kubeconfig, fake_api):
    fake_api.faults.script([delay(0.5)], path=NODES)
    with connect(str(fake_kubeconfig), request_timeout=(1.0, 0.1)) as c:
        state = load_live(c, retry=fast_retry()[0])
    assert len(state.nodes) == 4
    assert len(fake_api.calls(NODES)) == 2


def test_a_server_that_stays_slow_is_unreachable(seeded, fake_kubeconfig, fake_api):
    fake_api.faults.script([delay(0.3)], path=NODES, repeat=True)
    with connect(str(fake_kubeconfig), request_timeout=(1.0, 0.05)) as c, pytest.raises(ClusterAccessError) as err:
        load_live(c, retry=fast_retry(attempts=2)[0])
    assert err.value.message == (f"cannot reach the API server at {fake_api.url}: "
                                 "no response within 0.05s (read timeout)")


def test_429_waits_at_least_retry_after_within_the_cap(seeded, client, fake_api):
    fake_api.faults.script([status(429, retry_after=1)], path=PDBS)
    policy, sleeps = fast_retry()
    load_live(client, retry=policy)
    assert sleeps == [0.01]  # Retry-After: 1, capped by max_seconds


def test_errors_that_retrying_cannot_fix_are_not_retried(seeded, client, fake_api):
    fake_api.faults.script([status(404, "the server could not find the requested resource")], path=PDBS)
    policy, sleeps = fast_retry()
    with pytest.raises(ClusterAccessError) as err:
        load_live(client, retry=policy)
    assert err.value.message == (
        f"cannot list poddisruptionbudgets.policy at the cluster scope: the API server at {fake_api.url} answered "
        "404 NotFound: the server could not find the requested resource")
    assert sleeps == []


def test_name_resolution_failures_read_as_unreachable():
    conn = urllib3.connection.HTTPSConnection("api.example.invalid", 6443)
    exc = urllib3.exceptions.MaxRetryError(None, "/api/v1/pods",  # type: ignore[arg-type]
                                           urllib3.exceptions.NameResolutionError("api.example.invalid", conn,
                                                                                  OSError("Name or service not known")))
    c = LiveClient(k8s.ApiClient(k8s.Configuration()), "https://api.example.invalid:6443", "kubeconfig context \"x\"")
    err = access_error(exc, ApiCall("list", "pods"), c)
    assert err is not None
    assert err.message == ("cannot reach the API server at https://api.example.invalid:6443: "
                           "cannot resolve the host name 'api.example.invalid'")
    assert not is_transient(exc)


def test_the_list_head_is_read_whatever_the_key_order():
    items_first = b'{"items":[{"metadata":{"name":"a"}}],"kind":"PodList","metadata":{"continue":"tok"}}'
    usual = b'{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"tok"},"items":[{"metadata":{}}]}'
    for data in (items_first, usual):
        head = live._decode_list_head(data)
        assert (head.kind, head.metadata.continue_) == ("PodList", "tok")


# -- connecting ---------------------------------------------------------------------------------

def two_context_kubeconfig(path: Path, fake: FakeApiServer, unreachable: str) -> Path:
    doc = {
        "apiVersion": "v1", "kind": "Config", "current-context": "broken",
        "clusters": [{"name": "good", "cluster": {"server": fake.url}},
                     {"name": "bad", "cluster": {"server": unreachable}}],
        "users": [{"name": "u", "user": {"token": fake.token}}],
        "contexts": [{"name": "working", "context": {"cluster": "good", "user": "u"}},
                     {"name": "broken", "context": {"cluster": "bad", "user": "u"}}],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_context_option_picks_the_context(seeded, fake_api, tmp_path, closed_port_url):
    kubeconfig = two_context_kubeconfig(tmp_path / "kc", fake_api, closed_port_url)
    with connect(str(kubeconfig), "working") as c:
        assert len(load_live(c).pods) == 13
    with connect(str(kubeconfig)) as c, pytest.raises(ClusterAccessError, match="cannot reach"):
        load_live(c, retry=fast_retry()[0])


def test_an_unknown_context_is_named_with_the_available_ones(fake_api, tmp_path, closed_port_url):
    kubeconfig = two_context_kubeconfig(tmp_path / "kc", fake_api, closed_port_url)
    with pytest.raises(ClusterAccessError) as err:
        connect(str(kubeconfig), "prod")
    assert err.value.message == f'context "prod" not found in kubeconfig {kubeconfig} (available: working, broken)'


def test_kubeconfig_comes_from_the_environment(seeded, fake_kubeconfig, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", f"{fake_kubeconfig.parent / 'missing'}{os.pathsep}{fake_kubeconfig}")
    with connect(None, None) as c:
        assert len(load_live(c).nodes) == 4


def test_a_server_without_a_scheme_is_read_as_client_go_reads_it(seeded, fake_api, tmp_path, cli_out):
    """`server: 127.0.0.1:PORT` with no TLS configured is http (client-go's `DefaultServerURL`):
    it works, and no library's warning (urllib3's FutureWarning) reaches stderr."""
    out, err = cli_out
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kc", server=fake_api.url.removeprefix("http://"))
    code, printed = run_cli(out, "snapshot", "--kubeconfig", str(kubeconfig))
    assert code == 0
    assert len(msgspec.json.decode(printed)["items"]) > 0
    assert err.getvalue() == ""


@pytest.mark.parametrize(("tls", "scheme"), [
    ({"certificate-authority-data": "Zm9v"}, "https"), ({"insecure-skip-tls-verify": True}, "https"), ({}, "http"),
])
def test_the_scheme_a_server_without_one_gets(tmp_path, tls, scheme):
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
              "clusters": [{"name": "c", "cluster": {"server": "10.0.0.1:6443", **tls}}],
              "users": [{"name": "u", "user": {"token": "t"}}],
              "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}
    (tmp_path / "kc").write_text(yaml.safe_dump(config))
    assert connect(str(tmp_path / "kc")).server == f"{scheme}://10.0.0.1:6443"


@pytest.mark.parametrize(("content", "expected"), [
    ("clusters: [", r"^invalid kubeconfig .*/kc: malformed YAML: "),
    ("- just\n- a list\n", r"^invalid kubeconfig .*/kc: not a kubeconfig"),
    ("apiVersion: v1\nkind: Config\n",
     r"^kubeconfig .*/kc sets no current-context: pass --context \(it has no contexts\)$"),
    ("current-context: x\ncontexts: [{name: x, context: {cluster: nowhere, user: u}}]\n",
     r"^invalid kubeconfig .*/kc: Invalid kube-config file\. Expected object with name nowhere in .*clusters list$"),
])
def test_an_invalid_kubeconfig_is_a_clear_error(tmp_path, content, expected):
    (tmp_path / "kc").write_text(content)
    with pytest.raises(ClusterAccessError, match=expected):
        connect(str(tmp_path / "kc"))


def test_a_missing_kubeconfig_file_is_named(tmp_path):
    with pytest.raises(ClusterAccessError, match=r"^kubeconfig .*/nope: no such file$"):
        connect(str(tmp_path / "nope"))


def test_without_kubeconfig_outside_a_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ClusterAccessError, match=r"^no kubeconfig found \(~/\.kube/config does not exist; .*"
                                                 r"and not running inside a cluster$"):
        connect(None, None)


@pytest.mark.skipif(Path("/var/run/secrets/kubernetes.io/serviceaccount/token").exists(),
                    reason="actually running in a pod")
def test_without_kubeconfig_inside_a_pod_the_service_account_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "1")
    with pytest.raises(ClusterAccessError, match=r"^in-cluster configuration: Service token file does not exist\.$"):
        connect(None, None)


# -- the fake server itself (what later tests rely on) ------------------------------------------

def test_the_fake_serves_objects_and_status_errors_like_a_real_server(seeded, client, fake_api):
    core = client.core
    pod = core.read_namespaced_pod("web-1", "shop")
    assert (pod.kind, pod.api_version, pod.spec.node_name) == ("Pod", "v1", "node-b")
    assert [p.metadata.name for p in core.list_namespaced_pod("data").items] == ["db-0", "db-1", "db-2"]
    page = msgspec.json.decode(core.list_namespaced_pod("data", _preload_content=False).read())
    assert (page["kind"], page["apiVersion"]) == ("PodList", "v1")
    assert not any("kind" in item for item in page["items"])  # as in a real server's lists
    with pytest.raises(k8s.ApiException) as err:
        core.read_node("node-z")
    assert msgspec.json.decode(err.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'nodes "node-z" not found', "reason": "NotFound", "details": {"name": "node-z", "kind": "nodes"},
        "code": 404}
    assert fake_api.calls("/api/v1/nodes/node-z")[0].status == 404
    assert [p.metadata.name for p in core.list_pod_for_all_namespaces(field_selector="spec.nodeName=node-c",
                                                                      label_selector="app in (web)").items] == [
        "web-2", "web-5"]


# -- the CLI end to end -------------------------------------------------------------------------

@pytest.fixture
def cli_out(monkeypatch) -> Iterator[tuple[io.TextIOWrapper, io.StringIO]]:
    """Point the CLI's environment at buffers (the command writes through `ENV`, not sys.stdout)."""
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    monkeypatch.setattr(ENV, "stdout", out)
    monkeypatch.setattr(ENV, "stderr", err)
    for cached in ("out", "err"):
        monkeypatch.delitem(ENV.__dict__, cached, raising=False)
    yield out, err
    for cached in ("out", "err"):
        ENV.__dict__.pop(cached, None)


def run_cli(out: io.TextIOWrapper, *args: str) -> tuple[int, bytes]:
    start = out.buffer.tell()
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    out.flush()
    return result.exit_code, out.buffer.getvalue()[start:]


def test_snapshot_command_writes_a_list_that_loads_back_equal(seeded, fake_kubeconfig, cli_out, tmp_path):
    out, _ = cli_out
    code, printed = run_cli(out, "snapshot", "--kubeconfig", str(fake_kubeconfig))
    assert code == 0
    doc = msgspec.json.decode(printed)
    assert (doc["kind"], len(doc["items"])) == ("List", 3 + 2 + 4 + 2 + 13 + 4)  # + a CSINode per node
    (tmp_path / "snap.json").write_bytes(printed)
    assert comparable(load_snapshot(str(tmp_path / "snap.json"))) == comparable(seeded)
    code, again = run_cli(out, "snapshot", "--snapshot", str(tmp_path / "snap.json"))
    assert (code, again) == (0, printed)


def test_snapshot_command_exits_5_when_the_cluster_is_unreachable(fake_api, cli_out, tmp_path, closed_port_url):
    out, err = cli_out
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kc", server=closed_port_url)
    code, printed = run_cli(out, "snapshot", "--kubeconfig", str(kubeconfig))
    assert (code, printed) == (ExitCode.CLUSTER_ACCESS, b"")
    assert err.getvalue().strip() == f"error: cannot reach the API server at {closed_port_url}: connection refused"


def test_the_fake_takes_new_routes_with_rbac_for_subresources(seeded, client, fake_api):
    def evict(req: Request) -> Response:
        fake_api.store.delete(fakeapi.PODS, req.params["namespace"], req.params["name"])
        return Response(201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})

    fake_api.route("POST", "/api/v1/namespaces/{namespace}/pods/{name}/eviction", evict,
                   resource=fakeapi.PODS, subresource="eviction")
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-0", "namespace": "shop"}}
    client.core.create_namespaced_pod_eviction("web-0", "shop", eviction)
    assert fake_api.store.get(fakeapi.PODS, "shop", "web-0") is None
    assert msgspec.json.decode(fake_api.calls(method="POST")[0].body)["kind"] == "Eviction"
    fake_api.forbid("create", "pods/eviction")
    with pytest.raises(k8s.ApiException) as err:
        client.core.create_namespaced_pod_eviction("web-1", "shop", eviction)
    assert msgspec.json.decode(err.value.body)["message"] == (
        f'pods "web-1" is forbidden: User "{DEFAULT_USER}" cannot create resource "pods/eviction" in API group "" '
        'in the namespace "shop"')
