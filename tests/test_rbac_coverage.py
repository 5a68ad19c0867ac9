"""The RBAC `kresched manifests` grants covers every request kresched sends, and nothing more.

Three checks, from the code to the wire:
1. every `ApiCall(...)` the code describes (sources/live.py, execute/kube.py) is in the table the
   roles are built from (`kresched.render.manifests.API_CALLS`), and the table has nothing else;
2. the real commands (snapshot, plan, explain, preempt, drain, untaint, reconcile, rebalance — reconcile with
   the CronJob's own arguments) run end to end against the fake API server; every request it
   records is turned into RBAC request attributes as the API server does (verb, apiGroup,
   resource/subresource, namespace, name) and must be allowed by the ServiceAccount's bindings in
   the manifests — with `--allow-pdb-violation` only for the scenarios that delete pods;
3. together the commands use every permission the manifests grant (least privilege).
`preempt -f --apply` (server-side apply of workloads; an apply that creates is authorised as a create
too) is the operator's, never the CronJob's: its permissions are in the table, marked
`only_with_apply`, never in the manifests' role, and its scenario is checked against the manifests
plus those (`apply_role_rules`).
"""

from __future__ import annotations

import ast
import io
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import msgspec
import pytest
from typer.testing import CliRunner

from kresched.cli import app
from kresched.cli.common import ENV
from kresched.demo import __file__ as demo_init
from kresched.render.manifests import API_CALLS, ManifestOptions, apply_role_rules, build_manifests
from tests.builders import make_namespace, make_node, make_pdb, make_pod, make_priority_class, make_state
from tests.fakeapi import GANGS, NODES, PODS, FakeApiServer, RecordedRequest
from tests.fakeapi.controllers import BIND, NEVER

ROOT = Path(__file__).resolve().parents[1]
DEMO = Path(demo_init).parent / "cluster.yaml"
CRITICAL = "kube-system/metrics-server-5p9lfwkgvh-mkd72"  # the demo's pending critical add-on
SERVICE_ACCOUNT = ("kresched", "kube-system")


# -- RBAC as the API server sees a request -----------------------------------------------------------

@dataclass(frozen=True)
class Attributes:
    """The request attributes the RBAC authoriser decides on (k8s.io/apiserver RequestInfo)."""

    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def rbac_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.verb} {self.rbac_resource}.{self.group or 'core'} {self.name!r}{where}"


_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


#: The non-resource URLs the default `system:discovery` ClusterRole lets every authenticated user
#: GET (bound to `system:authenticated` by the API server itself): no role of kresched's grants them.
DISCOVERY_URLS = ("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
                  "/version", "/version/")


def is_resource_request(path: str) -> bool:
    """As RequestInfoFactory: /api/VERSION/RESOURCE... or /apis/GROUP/VERSION/RESOURCE..."""
    parts = path.strip("/").split("/")
    return (parts[0] == "api" and len(parts) >= 3) or (parts[0] == "apis" and len(parts) >= 4)


def discovery_allows(method: str, path: str) -> bool:
    return method == "GET" and any(path == u or (u.endswith("*") and path.startswith(u[:-1])) for u in DISCOVERY_URLS)


def attributes(method: str, path: str, query: dict[str, str]) -> Attributes:
    """As the API server's RequestInfoFactory: /api/v1 or /apis/GROUP/VERSION, then optionally
    `watch/`, `namespaces/NS/`, then RESOURCE[/NAME[/SUBRESOURCE]]; GET is get (with a name), list
    or watch (`?watch=true`), DELETE without a name is deletecollection; a list or watch selecting
    `metadata.name=X` is authorised with that name."""
    parts = [unquote(p) for p in path.strip("/").split("/")]
    if parts[0] == "api" and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[0] == "apis" and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        raise AssertionError(f"not a resource request: {method} {path}")
    legacy_watch = bool(rest) and rest[0] == "watch"
    rest = rest[1:] if legacy_watch else rest
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    assert rest, f"no resource in {path}"
    resource, name, sub = rest[0], rest[1] if len(rest) > 1 else "", rest[2] if len(rest) > 2 else ""
    if method == "GET":
        verb = "get" if name else "list"
        if legacy_watch or query.get("watch", "").lower() in ("true", "1"):
            verb = "watch"
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = _VERBS[method]
    if verb in ("list", "watch") and not name:
        for term in query.get("fieldSelector", "").split(","):
            key, _, value = term.partition("=")
            if key.strip() == "metadata.name" and value:
                name = value.lstrip("=").strip()
    return Attributes(verb, group, resource, sub, namespace, name)


def _rule_allows(rule: dict[str, Any], a: Attributes) -> bool:
    return ((a.group in rule.get("apiGroups", []) or "*" in rule.get("apiGroups", []))
            and (a.rbac_resource in rule.get("resources", []) or "*" in rule.get("resources", []))
            and (a.verb in rule["verbs"] or "*" in rule["verbs"])
            and (not rule.get("resourceNames") or a.name in rule["resourceNames"]))


def allowed(objects: list[dict[str, Any]], a: Attributes, subject: tuple[str, str] = SERVICE_ACCOUNT) -> bool:
    """Whether the bindings in `objects` let the ServiceAccount `subject` make request `a`."""
    name, namespace = subject
    roles = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o["rules"]
             for o in objects if o["kind"] in ("ClusterRole", "Role")}
    for b in objects:
        if b["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        if {"kind": "ServiceAccount", "name": name, "namespace": namespace} not in b["subjects"]:
            continue
        ref = b["roleRef"]
        binding_ns = b["metadata"].get("namespace", "")
        rules = roles.get((ref["kind"], binding_ns if ref["kind"] == "Role" else "", ref["name"]), [])
        if b["kind"] == "RoleBinding" and a.namespace != binding_ns:
            continue  # a RoleBinding grants only in its own namespace
        if any(_rule_allows(r, a) for r in rules):
            return True
    return False


# -- the authoriser and the attributes themselves ---------------------------------------------------

DEFAULT = build_manifests(ManifestOptions())
WITH_DELETE = build_manifests(ManifestOptions(allow_pdb_violation=True))


@pytest.mark.parametrize(("method", "path", "query", "expected"), [
    ("GET", "/api/v1/pods", {"limit": "500"}, Attributes("list", "", "pods")),
    ("GET", "/api/v1/namespaces/shop/pods", {"watch": "true", "fieldSelector": "metadata.name=web-1"},
     Attributes("watch", "", "pods", namespace="shop", name="web-1")),
    ("GET", "/api/v1/watch/namespaces/shop/pods/web-1", {}, Attributes("watch", "", "pods", "", "shop", "web-1")),
    ("POST", "/api/v1/namespaces/shop/pods/web-1/eviction", {},
     Attributes("create", "", "pods", "eviction", "shop", "web-1")),
    ("PATCH", "/api/v1/nodes/node-a", {"dryRun": "All"}, Attributes("patch", "", "nodes", name="node-a")),
    ("DELETE", "/api/v1/namespaces/shop/pods", {}, Attributes("deletecollection", "", "pods", namespace="shop")),
    ("GET", "/api/v1/namespaces", {}, Attributes("list", "", "namespaces")),
    ("GET", "/api/v1/namespaces/shop", {}, Attributes("get", "", "namespaces", name="shop")),
    ("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kresched", {},
     Attributes("update", "coordination.k8s.io", "leases", namespace="kube-system", name="kresched")),
])
def test_request_attributes_are_read_as_the_api_server_reads_them(method, path, query, expected):
    assert attributes(method, path, query) == expected


@pytest.mark.parametrize(("method", "path", "expected"), [
    ("GET", "/apis/resource.k8s.io", True),
    ("GET", "/apis/resource.k8s.io/v1", True),
    ("GET", "/version", True),
    ("POST", "/apis/resource.k8s.io", False),
    ("GET", "/metrics", False),
])
def test_discovery_is_every_authenticated_users(method, path, expected):
    assert not is_resource_request(path)
    assert discovery_allows(method, path) is expected


@pytest.mark.parametrize(("request_", "objects", "expected"), [
    (Attributes("list", "", "pods"), DEFAULT, True),
    (Attributes("watch", "", "pods", namespace="shop", name="web-1"), DEFAULT, True),
    (Attributes("create", "", "pods", "eviction", "shop", "web-1"), DEFAULT, True),
    (Attributes("delete", "", "pods", namespace="shop", name="web-1"), DEFAULT, False),
    (Attributes("delete", "", "pods", namespace="shop", name="web-1"), WITH_DELETE, True),
    (Attributes("patch", "", "pods", namespace="shop", name="web-1"), WITH_DELETE, False),
    (Attributes("create", "", "pods", namespace="shop"), WITH_DELETE, False),
    (Attributes("update", "", "nodes", name="node-a"), DEFAULT, False),
    (Attributes("list", "", "secrets"), DEFAULT, False),
    (Attributes("list", "apps", "pods"), DEFAULT, False),
    (Attributes("get", "coordination.k8s.io", "leases", namespace="kube-system", name="kresched"), DEFAULT, True),
    (Attributes("create", "coordination.k8s.io", "leases", namespace="kube-system"), DEFAULT, True),
    (Attributes("get", "coordination.k8s.io", "leases", namespace="kube-system", name="other"), DEFAULT, False),
    (Attributes("get", "coordination.k8s.io", "leases", namespace="default", name="kresched"), DEFAULT, False),
    (Attributes("update", "coordination.k8s.io", "leases", namespace="default", name="kresched"), DEFAULT, False),
])
def test_the_authoriser_grants_exactly_the_rules(request_, objects, expected):
    assert allowed(objects, request_) is expected


def test_another_service_account_gets_nothing():
    assert not allowed(DEFAULT, Attributes("list", "", "pods"), subject=("kresched", "default"))


# -- 1. the code's ApiCalls are the table ----------------------------------------------------------

def _api_calls_in_code() -> dict[tuple[str, str, str, str], str]:
    """(verb, group, resource, subresource) → where, for every `ApiCall(...)` in kresched/."""
    found: dict[tuple[str, str, str, str], str] = {}
    for path in sorted((ROOT / "kresched").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ApiCall"):
                continue
            names = ["verb", "resource", "group", "subresource"]
            values = dict.fromkeys(names, "")
            for i, arg in enumerate(node.args[:4]):
                values[names[i]] = ast.literal_eval(arg)
            for kw in node.keywords:
                if kw.arg in names:
                    values[kw.arg] = ast.literal_eval(kw.value)
            key = (values["verb"], values["group"], values["resource"], values["subresource"])
            found.setdefault(key, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_api_call_the_code_makes_is_in_the_rbac_table_and_nothing_else():
    in_code = _api_calls_in_code()
    table = {(p.verb, p.group, p.resource, p.subresource) for p in API_CALLS}
    assert len(in_code) >= 10, in_code  # the scan finds the calls at all
    missing = {k: where for k, where in in_code.items() if k not in table}
    assert not missing, f"API calls not in kresched.render.manifests.API_CALLS (so not in the role): {missing}"
    unused = table - set(in_code)
    assert not unused, f"API_CALLS grants what no code calls: {unused}"


# -- 2. the real commands against the fake API server ----------------------------------------------

@dataclass
class Run:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    def actions(self) -> list[str]:
        return [msgspec.json.decode(ln).get("action", "") for ln in self.stdout.splitlines() if ln.startswith("{")]


@dataclass
class Scenario:
    name: str
    #: The scenario deletes pods: its requests are checked against the --allow-pdb-violation manifests.
    deletes: bool = False
    requests: list[RecordedRequest] = field(default_factory=list)
    #: The scenario runs `preempt -f --apply`: its requests are checked against the manifests plus
    #: the operator's apply permissions (`apply_role_rules`), which the manifests never grant.
    applies: bool = False


def request_attributes(r: RecordedRequest) -> list[Attributes]:
    """What the authoriser checks for a request: its attributes, and for a server-side apply that
    created its object (201) the create it turned into too; none for discovery, which every
    authenticated user may read (a non-resource request it does not allow fails here)."""
    if not is_resource_request(r.path):
        assert discovery_allows(r.method, r.path), f"a non-resource request no default role allows: {r.method} {r.path}"
        return []
    a = attributes(r.method, r.path, r.query)
    if r.method == "PATCH" and r.content_type == "application/apply-patch+yaml" and r.status == 201:
        return [a, Attributes("create", a.group, a.resource, a.subresource, a.namespace, a.name)]
    return [a]


def with_apply_role(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The manifests plus a ClusterRole of the apply permissions bound to the same ServiceAccount."""
    name, namespace = SERVICE_ACCOUNT
    role = {"kind": "ClusterRole", "metadata": {"name": "kresched-apply"}, "rules": apply_role_rules()}
    binding = {"kind": "ClusterRoleBinding", "metadata": {"name": "kresched-apply"},
               "roleRef": {"kind": "ClusterRole", "name": "kresched-apply"},
               "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]}
    return [*objects, role, binding]


class Cluster:
    """A started fake API server, its controllers running, and the CLI pointed at it."""

    def __init__(self, server: FakeApiServer, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.fake = server
        self.kubeconfig = kubeconfig
        self.monkeypatch = monkeypatch

    def run(self, *args: str) -> Run:
        out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
        self.monkeypatch.setattr(ENV, "stdout", out)
        self.monkeypatch.setattr(ENV, "stderr", err)
        self.monkeypatch.setattr(ENV, "stdin", io.StringIO())
        for cached in ("out", "err"):
            ENV.__dict__.pop(cached, None)
        try:
            result = CliRunner().invoke(app, [*args, "--kubeconfig", str(self.kubeconfig)], catch_exceptions=False)
        finally:
            for cached in ("out", "err"):
                ENV.__dict__.pop(cached, None)
        out.flush()
        return Run(args, result.exit_code, out.buffer.getvalue().decode(), err.getvalue())


def cronjob_args(options: ManifestOptions) -> list[str]:
    (cron,) = [o for o in build_manifests(options) if o["kind"] == "CronJob"]
    (container,) = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    return container["args"]


def _reserve(fake: FakeApiServer, node: str, pod: str, minutes_ago: int) -> None:
    """A reservation kresched left behind (a run killed with SIGKILL)."""
    at = (datetime.now(UTC) - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def change(n: dict[str, Any]) -> None:
        n["metadata"].setdefault("annotations", {}).update({"kresched.io/reserved-for": pod,
                                                            "kresched.io/reserved-at": at})
        n["spec"]["taints"] = [*(n["spec"].get("taints") or []),
                               {"key": "CriticalAddonsOnly", "value": "kresched", "effect": "NoSchedule"}]

    fake.store.mutate(NODES, "", node, change)


def _mark_unschedulable(fake: FakeApiServer, namespace: str, name: str) -> None:
    since = (datetime.now(UTC) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fake.store.mutate(PODS, namespace, name, lambda p: p["status"].update(conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastTransitionTime": since,
         "message": "0/2 nodes are available: 2 Insufficient cpu."}]))


def demo_reads(c: Cluster) -> None:
    for args in (("snapshot",), ("plan", "--pod", CRITICAL, "-o", "json"), ("explain", "--pod", CRITICAL, "-o", "json"),
                 ("preempt", "--pod", CRITICAL, "--server-dry-run", "--yes", "-o", "json")):
        run = c.run(*args)
        assert run.code == 0, (args, run.stderr)


def demo_preempt(c: Cluster) -> None:
    # The scheduler binds only once kresched watches the pod, so that the wait does watch.
    c.fake.scheduler.set(CRITICAL, NEVER)
    done = threading.Event()

    def bind_once_watched() -> None:
        while not done.wait(0.02):
            if any(r.query.get("watch") == "true" for r in c.fake.calls(method="GET")):
                c.fake.scheduler.set(CRITICAL, BIND)
                return

    binder = threading.Thread(target=bind_once_watched, daemon=True)
    binder.start()
    try:
        run = c.run("preempt", "--pod", CRITICAL, "--yes", "--timeout", "30s", "-o", "json")
    finally:
        done.set()
        binder.join()
    assert run.code == 0, run.stderr
    assert {"reserved", "evicted", "bound", "released"} <= set(run.actions())


def demo_drain(c: Cluster) -> None:
    # data/zookeeper-1's PDB allows no disruption: its eviction is refused (429) and the budget
    # re-read until the timeout.
    run = c.run("drain", "worker-b3", "--yes", "--ignore-daemonsets", "--delete-emptydir-data", "--force",
                "--allow-pending", "--timeout", "3s", "-o", "json")
    assert run.code == 4, run.stderr
    assert {"evicted", "gone", "pdb-blocked"} <= set(run.actions())


def demo_untaint(c: Cluster) -> None:
    _reserve(c.fake, "worker-a1", "kube-system/coredns-gone-x", minutes_ago=30)
    run = c.run("untaint", "-o", "json")
    assert run.code == 0, run.stderr
    assert "worker-a1" in msgspec.json.decode(run.stdout.splitlines()[-1])["removed"]


def demo_reconcile(c: Cluster) -> None:
    _reserve(c.fake, "worker-a2", "kube-system/coredns-gone-x", minutes_ago=30)
    args = cronjob_args(ManifestOptions())
    first = c.run(*args)
    assert first.code == 0, first.stderr
    assert {"evicted", "summary"} <= set(first.actions())
    second = c.run(*args)  # the Lease exists now: read and updated, not created
    assert second.code == 0, second.stderr


def seed_demo(fake: FakeApiServer) -> None:
    fake.load(DEMO)
    fake.gangs_served = GANGS  # every gang API: their lists are read, and must be granted
    fake.controllers.pdbs.sync()


def seed_demo_with_replicasets(fake: FakeApiServer) -> None:
    seed_demo(fake)
    fake.controllers.replicasets.enabled = True


def demo_rebalance(c: Cluster) -> None:
    """The demo's scale-up (scenario 4): `rebalance` moves pods onto the new nodes, then the CronJob
    with --rebalance runs its own bounded pass."""
    run = c.run("rebalance", "--yes", "--max-moves", "1", "--timeout", "20s", "-o", "json")
    assert run.code == 0, run.stderr
    assert {"plan", "evicted", "moved", "summary"} <= set(run.actions())
    run = c.run(*cronjob_args(ManifestOptions(rebalance=True)))
    assert run.code == 0, run.stderr
    assert "rebalance-plan" in run.actions()


def seed_tier3(fake: FakeApiServer) -> None:
    """node-a's only victims are under a PDB that allows nothing (node-b runs only a critical pod):
    plans for the two pending critical pods are tier 3."""
    nodes = [make_node("node-a", cpu="4"), make_node("node-b", cpu="4")]
    pods = [make_pod(f"web-{i}", "shop", node="node-a", cpu="2", priority=100, labels={"app": "web"}, grace=5,
                     owner="ReplicaSet/web-7d9") for i in (1, 2)]
    pods += [make_pod("db-0", "data", node="node-b", cpu="4", priority=2_000_000_000,
                      priority_class="system-cluster-critical", owner="StatefulSet/db")]
    pods += [make_pod(n, "kube-system", cpu="2", priority=2_000_000_000, priority_class="system-cluster-critical",
                      tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}], owner="ReplicaSet/c")
             for n in ("critical-1", "critical-2")]
    fake.load(make_state(nodes, pods, [make_pdb("web", "shop", selector={"app": "web"}, min_available=2)],
                         [make_priority_class("system-cluster-critical", 2_000_000_000)],
                         [make_namespace(n) for n in ("shop", "data", "kube-system")]))
    fake.controllers.pdbs.sync()  # web: 2 healthy, minAvailable 2 → no disruption allowed


def tier3(c: Cluster) -> None:
    """Tier-3 plans carried out by deleting the victim (--allow-pdb-violation): by `preempt`, by the
    CronJob's `reconcile`; and `drain --disable-eviction`, which deletes too."""
    c.fake.scheduler.set("kube-system/critical-2", NEVER)  # reconcile's turn, below
    run = c.run("preempt", "--pod", "kube-system/critical-1", "--allow-pdb-violation", "--yes", "--timeout", "20s",
                "-o", "json")
    assert run.code == 0, run.stderr
    assert "deleted" in run.actions()
    c.fake.scheduler.set("kube-system/critical-2", BIND)
    _mark_unschedulable(c.fake, "kube-system", "critical-2")
    run = c.run(*cronjob_args(ManifestOptions(allow_pdb_violation=True)))
    assert run.code == 0, run.stderr
    assert "deleted" in run.actions()
    run = c.run("drain", "node-b", "--yes", "--disable-eviction", "--allow-pending", "--timeout", "10s", "-o", "json")
    assert run.code == 0, run.stderr
    assert "deleted" in run.actions()


#: A workload of every kind `--apply` creates, small enough to fit the demo without evictions.
_APPLY_KINDS = ("Pod", "ReplicationController", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job",
                "CronJob")


def _every_kind_manifest(path: Path) -> Path:
    import yaml

    container = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1m", "memory": "1Mi"}}}
    docs: list[dict[str, Any]] = []
    for kind in _APPLY_KINDS:
        name = f"rbac-{kind.lower()}"
        labels = {"app": name}
        pod_spec: dict[str, Any] = {"containers": [container],
                                    "tolerations": [{"operator": "Exists"}]}
        if kind in ("Job", "CronJob"):
            pod_spec["restartPolicy"] = "Never"
        template = {"metadata": {"labels": labels}, "spec": pod_spec}
        version = {"Pod": "v1", "ReplicationController": "v1", "Job": "batch/v1", "CronJob": "batch/v1"}.get(kind,
                                                                                                            "apps/v1")
        meta = {"name": name, "namespace": "default", **({"labels": labels} if kind == "Pod" else {})}
        if kind == "Pod":
            spec: dict[str, Any] = pod_spec
        elif kind == "CronJob":
            spec = {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": template}}}
        elif kind == "Job":
            spec = {"template": template}
        elif kind == "ReplicationController":
            spec = {"replicas": 1, "selector": labels, "template": template}
        else:
            spec = {"selector": {"matchLabels": labels}, "template": template,
                    **({} if kind == "DaemonSet" else {"replicas": 1})}
        docs.append({"apiVersion": version, "kind": kind, "metadata": meta, "spec": spec})
    path.write_text(yaml.safe_dump_all(docs))
    return path


def demo_apply(c: Cluster) -> None:
    """`preempt -f --apply` with a workload of every kind: each is created by server-side apply (a
    PATCH that is a create too); then applied again (a PATCH of what exists)."""
    manifest = _every_kind_manifest(c.kubeconfig.parent / "every-kind.yaml")
    for _ in range(2):
        run = c.run("preempt", "-f", str(manifest), "--apply", "--yes", "--timeout", "1s", "-o", "json")
        assert run.code in (0, 4), run.stderr  # (the fake has no controller for most kinds: pods never come)
        assert "applied" in run.actions()


SCENARIOS = {
    "reads": (seed_demo, demo_reads, False),
    "preempt": (seed_demo, demo_preempt, False),
    "drain": (seed_demo, demo_drain, False),
    "untaint": (seed_demo, demo_untaint, False),
    "reconcile": (seed_demo, demo_reconcile, False),
    "rebalance": (seed_demo_with_replicasets, demo_rebalance, False),
    "tier 3 deletes": (seed_tier3, tier3, True),
    "apply": (seed_demo, demo_apply, False),
}
#: The scenarios that run `preempt -f --apply`.
APPLYING = {"apply"}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scenario]:
    """Every scenario run once, each on its own fake API server."""
    results: dict[str, Scenario] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KRESCHED_BACKOFF_SCALE", "0.01")
        for name, (seed, body, deletes) in SCENARIOS.items():
            with FakeApiServer() as server:
                seed(server)
                kubeconfig = server.write_kubeconfig(tmp_path_factory.mktemp("kc") / "kubeconfig")
                server.controllers.start()
                try:
                    body(Cluster(server, kubeconfig, mp))
                finally:
                    server.controllers.stop()
                results[name] = Scenario(name, deletes, requests=list(server.requests), applies=name in APPLYING)
                assert not server.controllers.errors, server.controllers.errors
    return results


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_request_the_commands_send_is_allowed_by_the_manifests(recorded, name):
    scenario = recorded[name]
    objects = WITH_DELETE if scenario.deletes else DEFAULT
    if scenario.applies:
        objects = with_apply_role(objects)
    assert scenario.requests
    denied = sorted({str(a) for r in scenario.requests for a in request_attributes(r) if not allowed(objects, a)})
    assert not denied, f"requests the manifests' RBAC does not allow: {denied}"


def test_only_the_apply_scenario_needs_the_apply_permissions(recorded):
    for name, scenario in recorded.items():
        needs = any(not allowed(WITH_DELETE, a) for r in scenario.requests for a in request_attributes(r))
        assert needs is scenario.applies, name


def test_pods_are_deleted_only_where_the_manifests_allow_it(recorded):
    for name, scenario in recorded.items():
        deletes = [r for r in scenario.requests if r.method == "DELETE"]
        assert bool(deletes) is scenario.deletes, name


def test_together_the_commands_use_every_permission_granted(recorded):
    used = {(a.verb, a.group, a.resource, a.subresource)
            for s in recorded.values() for r in s.requests for a in request_attributes(r)}
    granted = {(p.verb, p.group, p.resource, p.subresource) for p in API_CALLS}
    assert granted - used == set(), "granted but never used by any command"
    assert used - granted == set(), "used but not in API_CALLS"
