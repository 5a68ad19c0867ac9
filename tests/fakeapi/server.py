"""A small, stateful fake Kubernetes API server for tests, spoken to by the official client over real HTTP.

Bound to 127.0.0.1 on an ephemeral port, never any other address. Structure, so that later issues
slot in (PATCH on nodes, pods/eviction, DELETE, watches, leases):

- `routes`: a table of `Route(method, template, handler, verb, resource, subresource)`; templates are
  real REST paths (`/api/v1/namespaces/{namespace}/pods/{name}/eviction`). `FakeApiServer.route`
  adds one (new routes are matched before the built-in ones); the built-in list/get routes are made
  for every resource in `store.RESOURCES`. A handler gets a `Request` (with `params` from the
  template) and returns a `Response` or raises `ApiError`.
- `store`: the objects, keyed by (resource key, namespace, name), with resourceVersions (`store.py`).
- `faults`: scripted errors, drops and delays per path (`faults.py`), applied before anything else.
- `requests`: every request received (method, path, query, body, status answered), in order.
- authentication (`token`: bearer token required when set → 401) and authorisation (`forbid(verb,
  resource)` → 403 with the real Status message naming `user`).

Built-in writes, with a real server's semantics (see each module's docstring):
- `PATCH` nodes, pods, PDBs: merge, JSON and strategic merge patches (patch.py); a
  `metadata.resourceVersion` in the patch makes it conditional (409 Conflict when stale); status
  is kept (it has its own subresource); node taints are validated (unique per key and effect,
  known effects → 422 Invalid); `dryRun=All` validates without storing; a patch that changes
  nothing does not bump the resourceVersion.
- `DELETE` pods and `POST pods/{name}/eviction` (pods.py: `PodLifecycle`, the eviction handler's
  decisions, graceful termination on `clock`, `advance(seconds)`).
- `GET ...?watch=true` (watch.py): chunked event streams, 410 for compacted resourceVersions.
- `controllers` (controllers.py): scheduler, kubelet, PDB and ReplicaSet controllers for tests to
  step (`controllers.settle()`) or run in the background (`controllers.start()`).
- `POST` and `PUT` Leases (coordination.k8s.io/v1): create (409 AlreadyExists) and update, which
  must name the resourceVersion it replaces (409 Conflict when stale, 422 when missing).
- discovery (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/GROUP`, `/apis/GROUP/VERSION`;
  discovery.py): what `kubectl` reads before anything else (the drain benchmark runs `kubectl
  drain` against the fake), and kresched before listing `resource.k8s.io`.
- `resource.k8s.io` (DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates):
  listed and got in each version `dra_versions` names (v1 by default; `()`: no such group), the
  items converted for v1beta1 (served.py).
- gangs (`store.GANGS`: v1alpha2 Workloads and PodGroups, coscheduling's and Volcano's PodGroups):
  listed and got where `gangs_served` names them (none by default; discovery lists their group
  versions only then); a CRD's list items carry their kind and apiVersion, as a real server's do.

A request goes: record → fault hook → bearer token → route (404/405 if none) → forbid list → handler.
A new built-in endpoint is a handler method plus one `Route` appended in `__init__`; a test-only one
is `fake.route(...)`, e.g. (the RBAC verb defaults from the method: POST → create):

    def evict(req: Request) -> Response:
        pod = fake.store.require(PODS, req.params["namespace"], req.params["name"])
        ...
        return Response(201, {"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201})

    fake.route("POST", "/api/v1/namespaces/{namespace}/pods/{name}/eviction", evict,
               resource=PODS, subresource="eviction")
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import re
import socket
import struct
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import msgspec
import yaml

from tests.fakeapi.controllers import Controllers, Scheduler
from tests.fakeapi.discovery import discovery_routes
from tests.fakeapi.errors import ApiError
from tests.fakeapi.events import add_event_routes
from tests.fakeapi.faults import Cut, Fault, Faults
from tests.fakeapi.patch import PatchError, json_patch, merge_patch, strategic_merge_patch
from tests.fakeapi.pods import Clock, PodLifecycle, dry_run_option
from tests.fakeapi.served import dra_served
from tests.fakeapi.store import (
    APPLIED,
    CRD_GANGS,
    DRA,
    DRA_GROUP,
    DRA_VERSIONS,
    GANGS,
    LEASES,
    NAMESPACES,
    NODES,
    PDBS,
    PODS,
    RESOURCES,
    Resource,
    Store,
    field_selector_matches,
    label_selector_matches,
    storage_key,
)
from tests.fakeapi.watch import watch

__all__ = ["DEFAULT_USER", "FakeApiServer", "RecordedRequest", "Request", "Response", "Route"]

DEFAULT_USER = "system:serviceaccount:kube-system:kresched"
_LOOPBACK = "127.0.0.1"
_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: Mapping[str, str]
    body: bytes = b""
    #: Values of the `{placeholders}` of the matched route template.
    params: dict[str, str] = field(default_factory=dict)
    #: Set by a `cut(...)` fault: a streamed answer is dropped after so many events / seconds.
    cut_after_events: int | None = None
    cut_after_seconds: float | None = None

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError as exc:
            raise ApiError.bad_request(f"the request body is not JSON: {exc}") from None

    def flag(self, name: str) -> bool:
        return self.query.get(name, "").lower() in ("1", "true")


@dataclass
class Response:
    status: int = 200
    body: Any = None  # dict/list (sent as JSON) or bytes
    headers: dict[str, str] = field(default_factory=dict)
    #: A streamed answer (a watch): chunks sent with `Transfer-Encoding: chunked` as they come.
    stream: Iterator[bytes] | None = None

    def encode(self) -> bytes:
        if self.body is None:
            return b""
        return self.body if isinstance(self.body, bytes) else msgspec.json.encode(self.body)


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    body: bytes = b""
    #: The status answered; None when the connection was dropped or reset.
    status: int | None = None
    content_type: str = ""


Handler = Callable[[Request], Response]


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    handler: Handler
    #: RBAC verb and resource, for `forbid` (None: not a resource request, never forbidden).
    verb: str | None = None
    resource: Resource | None = None
    subresource: str = ""
    regex: re.Pattern[str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(self.template))
        object.__setattr__(self, "regex", re.compile(pattern))

    def match(self, path: str) -> dict[str, str] | None:
        m = self.regex.fullmatch(path)
        return m.groupdict() if m else None


class _Drop(Exception):
    def __init__(self, reset: bool) -> None:
        self.reset = reset


class FakeApiServer:
    """Serve `store` over HTTP on 127.0.0.1; use as a context manager or `start()`/`stop()`."""

    def __init__(self, *objects: Any, token: str | None = "fake-token", user: str = DEFAULT_USER,
                 context: str = "fake") -> None:
        self.store = Store()
        self.faults = Faults()
        self.requests: list[RecordedRequest] = []
        self.token = token
        self.user = user
        self.context = context
        #: (verb, resource) pairs refused with 403: ("list", "pods"), ("create", "pods/eviction"),
        #: ("list", "poddisruptionbudgets.policy"); "*" matches any verb.
        self.forbidden: set[tuple[str, str]] = set()
        self.routes: list[Route] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        #: The cluster's time: deletionTimestamps, disruptedPods; `advance()` moves it.
        self.clock = Clock()
        #: Pod deletion and eviction; `pods.termination = "graceful"` keeps deleted pods Terminating.
        self.pods = PodLifecycle(self.store, self.clock)
        #: Watches: default timeout, BOOKMARK interval (None: none), and how a too-old
        #: resourceVersion is answered ("event": an ERROR event; "status": HTTP 410).
        self.watch_timeout_seconds = 30.0
        self.bookmark_seconds: float | None = None
        self.watch_gone = "event"
        #: Set when the server stops: open watch streams end.
        self.stopping = threading.Event()
        #: The versions of resource.k8s.io served, most preferred first: v1 as from v1.34 on;
        #: ("v1beta1",) as v1.32, ("v1beta2", "v1beta1") as v1.33; () as a server without the group.
        self.dra_versions: tuple[str, ...] = ("v1",)
        #: The gang resources served (`store.GANGS`, any of them): none, as almost every cluster.
        self.gangs_served: tuple[Resource, ...] = ()
        for r in (*RESOURCES, *GANGS):
            self._add_resource_routes(r)
        for r in DRA:
            for version in DRA_VERSIONS:
                self._add_resource_routes(replace(r, version=version))
        self._add_write_routes()
        add_event_routes(self)
        self.routes.extend(discovery_routes(lambda: self.url, lambda: self.dra_versions, lambda: self.gangs_served))
        #: What server-side apply wrote: (kind, namespace, name, fieldManager), in order.
        self.applied: list[tuple[str, str, str, str]] = []
        #: Called (with the store's lock held) just before an apply stores its object.
        self.on_apply: Callable[[], None] | None = None
        self.controllers = Controllers(self)
        if objects:
            self.store.load(*objects)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> FakeApiServer:
        httpd = _Server((_LOOPBACK, 0), _Handler)
        httpd.daemon_threads = True
        httpd.api = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="fake-api-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.controllers.stop()
        self.stopping.set()
        with self.store.changed:
            self.store.changed.notify_all()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake API server is not started")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{_LOOPBACK}:{self.port}"

    # -- configuration --------------------------------------------------------------------------
    def load(self, *objects: Any) -> None:
        """Seed objects: ClusterStates, kresched model objects, API dicts or Lists, snapshot files."""
        self.store.load(*objects)

    @property
    def scheduler(self) -> Scheduler:
        return self.controllers.scheduler

    def advance(self, seconds: float = 0.0) -> int:
        """Move the cluster's clock forward and let the controllers catch up: terminations whose
        grace is over finish, pending pods are bound and started, and — when enabled — replacements
        are created and PDB statuses recomputed. Returns how many things they did."""
        self.clock.advance(seconds)
        return self.controllers.settle()

    def forbid(self, verb: str, resource: str) -> None:
        """Refuse `verb` on `resource` (`pods`, `pods/eviction`, `poddisruptionbudgets.policy`) with 403."""
        self.forbidden.add((verb, resource))

    def route(self, method: str, template: str, handler: Handler, *, verb: str | None = None,
              resource: Resource | None = None, subresource: str = "") -> Route:
        """Add a route, matched before the existing ones (so a test can also override one)."""
        if verb is None and resource is not None:
            verb = _VERBS[method.upper()]
        r = Route(method.upper(), template, handler, verb, resource, subresource)
        self.routes.insert(0, r)
        return r

    def write_kubeconfig(self, path: str | Path, *, token: str | None = None, context: str | None = None,
                         namespace: str = "default", server: str | None = None) -> Path:
        """A kubeconfig the official client uses as is: this server (or `server`), a bearer token, one context."""
        ctx = context or self.context
        user: dict[str, Any] = {"token": token if token is not None else self.token or "no-token"}
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": f"{ctx}-cluster", "cluster": {"server": server or self.url}}],
            "users": [{"name": f"{ctx}-user", "user": user}],
            "contexts": [{"name": ctx, "context": {"cluster": f"{ctx}-cluster", "user": f"{ctx}-user",
                                                   "namespace": namespace}}],
            "current-context": ctx,
            "preferences": {},
        }
        p = Path(path)
        p.write_text(yaml.safe_dump(config, sort_keys=False))
        return p

    # -- recorded calls -------------------------------------------------------------------------
    def calls(self, path: str | None = None, method: str | None = None) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests
                    if (path is None or r.path == path) and (method is None or r.method == method.upper())]

    def clear_calls(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- request handling (called from the HTTP handler threads) --------------------------------
    def handle(self, req: Request) -> Response:
        """The whole pipeline: record, fault hook, authentication, routing, authorisation, handler."""
        record = RecordedRequest(req.method, req.path, dict(req.query), req.body,
                                 content_type=(req.headers.get("Content-Type") or "").split(";")[0].strip())
        with self._lock:
            self.requests.append(record)
        try:
            resp = self._faulted(req) or self._serve(req)
        except ApiError as err:
            resp = Response(err.code, err.body(), dict(err.headers))
        record.status = resp.status
        return resp

    def _faulted(self, req: Request) -> Response | None:
        fault: Fault = self.faults.next_for(req.method, req.path, req.query)
        if fault.delay_seconds:
            time.sleep(fault.delay_seconds)
        if fault.cut_after_events is not None or fault.cut_after_seconds is not None:
            req.cut_after_events, req.cut_after_seconds = fault.cut_after_events, fault.cut_after_seconds
        if fault.drop or fault.reset:
            raise _Drop(reset=fault.reset)
        if fault.status is not None:
            raise ApiError.for_code(fault.status, fault.message, retry_after=fault.retry_after)
        if fault.action is not None:
            answer = fault.action(req)
            return answer if isinstance(answer, Response) else None  # anything else: go on normally
        return None

    def _serve(self, req: Request) -> Response:
        if self.token is not None and req.headers.get("Authorization") != f"Bearer {self.token}":
            raise ApiError.unauthorized()
        path_known = False
        for route in self.routes:
            params = route.match(req.path)
            if params is None:
                continue
            path_known = True
            if route.method != req.method:
                continue
            req.params = params
            self._authorise(route, req)
            return route.handler(req)
        if path_known:
            raise ApiError.method_not_allowed(req.method)
        raise ApiError.path_not_found()

    def _authorise(self, route: Route, req: Request) -> None:
        if route.resource is None or route.verb is None:
            return
        verb = route.verb
        if verb == "list" and req.flag("watch"):
            verb = "watch"
        rbac = f"{route.resource.plural}/{route.subresource}" if route.subresource else route.resource.plural
        names = {rbac, f"{rbac}.{route.resource.group}" if route.resource.group else rbac}
        if any((v, n) in self.forbidden for v in (verb, "*") for n in names):
            raise ApiError.forbidden(route.resource, verb, self.user, namespace=req.params.get("namespace", ""),
                                     name=req.params.get("name", ""), subresource=route.subresource)

    # -- built-in resource routes ---------------------------------------------------------------
    def _add_resource_routes(self, res: Resource) -> None:
        def listing(req: Request) -> Response:
            return self._list(res, req)

        def getting(req: Request) -> Response:
            return self._get(res, req)

        base = res.prefix
        self.routes.append(Route("GET", f"{base}/{res.plural}", listing, "list", res))
        if res.namespaced:
            ns_base = f"{base}/namespaces/{{namespace}}/{res.plural}"
            self.routes.append(Route("GET", ns_base, listing, "list", res))
            self.routes.append(Route("GET", f"{ns_base}/{{name}}", getting, "get", res))
        else:
            self.routes.append(Route("GET", f"{base}/{res.plural}/{{name}}", getting, "get", res))

    def _get(self, res: Resource, req: Request) -> Response:
        self._check_served(res)
        obj = self.store.require(res, req.params.get("namespace", ""), req.params["name"])
        return Response(200, {"kind": res.kind, "apiVersion": res.api_version, **self._served(res, obj)})

    def _check_served(self, res: Resource) -> None:
        if res.group == DRA_GROUP and res.version not in self.dra_versions:
            raise ApiError.path_not_found()
        if res in GANGS and res not in self.gangs_served:
            raise ApiError.path_not_found()

    @staticmethod
    def _served(res: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        if res in CRD_GANGS:  # a custom resource's list items are whole objects
            return {"apiVersion": res.api_version, "kind": res.kind, **obj}
        return dra_served(res.kind, res.version, obj) if res.group == DRA_GROUP else obj

    def _add_write_routes(self) -> None:
        for res in (NODES, PODS, PDBS, NAMESPACES, *(r for r in APPLIED if r is not PODS)):
            path = (f"{res.prefix}/namespaces/{{namespace}}/{res.plural}/{{name}}" if res.namespaced
                    else f"{res.prefix}/{res.plural}/{{name}}")
            self.routes.append(Route("PATCH", path, lambda req, r=res: self._patch(r, req), "patch", res))
        pod = f"{PODS.prefix}/namespaces/{{namespace}}/pods/{{name}}"
        self.routes.append(Route("DELETE", pod, self._delete_pod, "delete", PODS))
        self.routes.append(Route("POST", f"{pod}/eviction", self._evict, "create", PODS, "eviction"))
        leases = f"{LEASES.prefix}/namespaces/{{namespace}}/leases"
        self.routes.append(Route("POST", leases, lambda req: self._create(LEASES, req), "create", LEASES))
        self.routes.append(Route("PUT", f"{leases}/{{name}}", lambda req: self._update(LEASES, req), "update", LEASES))

    # -- POST, PUT ----------------------------------------------------------------------------------
    def _create(self, res: Resource, req: Request) -> Response:
        obj = req.json()
        if not isinstance(obj, dict):
            raise ApiError.bad_request(f"the body is not a {res.kind}")
        obj.pop("kind", None)
        obj.pop("apiVersion", None)
        meta = obj.setdefault("metadata", {})
        namespace = req.params.get("namespace", "")
        if res.namespaced and meta.setdefault("namespace", namespace) != namespace:
            raise ApiError.bad_request("the namespace of the provided object does not match the namespace sent on "
                                       "the request")
        meta.pop("resourceVersion", None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.clock.now()))
        _validate(res, obj)
        if dry_run_option(req.query.get("dryRun")):
            with self.store.lock:
                if self.store.get(res, namespace, meta.get("name", "")) is not None:
                    raise ApiError.already_exists(res, meta["name"])
            return Response(201, {"kind": res.kind, "apiVersion": res.api_version, **obj})
        created = self.store.create(res, obj)
        return Response(201, {"kind": res.kind, "apiVersion": res.api_version, **created})

    def _update(self, res: Resource, req: Request) -> Response:
        obj = req.json()
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            raise ApiError.bad_request(f"the body is not a {res.kind}")
        obj.pop("kind", None)
        obj.pop("apiVersion", None)
        name = req.params["name"]
        if obj["metadata"].get("name") != name:
            raise ApiError.bad_request(f"the name of the object ({obj['metadata'].get('name')}) does not match the "
                                       f"name on the URL ({name})")
        version = obj["metadata"].get("resourceVersion")
        if not version:  # Leases do not allow unconditional updates
            raise ApiError(422, "Invalid", f'{res.kind}.{res.group} "{name}" is invalid: metadata.resourceVersion: '
                           "Invalid value: 0x0: must be specified for an update",
                           details={"name": name, "group": res.group, "kind": res.kind,
                                    "causes": [{"reason": "FieldValueInvalid", "field": "metadata.resourceVersion",
                                                "message": "Invalid value: 0x0: must be specified for an update"}]})
        with self.store.lock:
            current = self.store.require(res, req.params.get("namespace", ""), name)
            for immutable in ("uid", "creationTimestamp"):
                if immutable in current["metadata"]:
                    obj["metadata"][immutable] = current["metadata"][immutable]
            _validate(res, obj)
            if dry_run_option(req.query.get("dryRun")):
                if version != current["metadata"].get("resourceVersion"):
                    raise ApiError.conflict(res, name)
                return Response(200, {"kind": res.kind, "apiVersion": res.api_version, **obj})
            stored = self.store.replace(res, obj, expect_version=version)
        return Response(200, {"kind": res.kind, "apiVersion": res.api_version, **stored})

    # -- PATCH ------------------------------------------------------------------------------------
    def _patch(self, res: Resource, req: Request) -> Response:
        content_type = (req.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type == "application/apply-patch+yaml" and res in APPLIED:
            return self._server_side_apply(res, req)
        apply = _PATCHERS.get(content_type)
        if apply is None:
            raise ApiError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - "
                           f"accepted media types include: {', '.join(_PATCHERS)}, application/apply-patch+yaml")
        patch = req.json()
        dry_run = dry_run_option(req.query.get("dryRun"))
        namespace, name = req.params.get("namespace", ""), req.params["name"]
        with self.store.lock:
            current = self.store.require(res, namespace, name)
            try:
                new = apply({"kind": res.kind, "apiVersion": res.api_version, **current}, patch)
            except PatchError as exc:
                raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request",
                               details={"causes": [{"message": str(exc)}]}) from None
            if not isinstance(new, dict):
                raise ApiError.bad_request("the patched object is not an object")
            new.pop("kind", None)
            new.pop("apiVersion", None)
            meta = new.get("metadata")
            if not isinstance(meta, dict) or meta.get("name") != name:
                got = meta.get("name") if isinstance(meta, dict) else None
                raise ApiError.bad_request(f"the name of the object ({got}) does not match the name on the URL "
                                           f"({name})")
            if res.namespaced and meta.get("namespace", namespace) != namespace:
                raise ApiError.bad_request("the namespace of the provided object does not match the namespace "
                                           "sent on the request")
            version = meta.get("resourceVersion")
            if version and version != current["metadata"].get("resourceVersion"):
                raise ApiError.conflict(res, name)
            for immutable in ("uid", "creationTimestamp", "resourceVersion", "deletionTimestamp"):
                if immutable in current["metadata"]:
                    meta[immutable] = current["metadata"][immutable]
                else:
                    meta.pop(immutable, None)
            if res in _WITH_STATUS:  # the main resource ignores status; it has its own subresource
                if "status" in current:
                    new["status"] = copy.deepcopy(current["status"])
                else:
                    new.pop("status", None)
            _validate(res, new)
            if new == current or dry_run:
                return Response(200, {"kind": res.kind, "apiVersion": res.api_version, **new})
            stored = self.store.replace(res, new)
            return Response(200, {"kind": res.kind, "apiVersion": res.api_version, **stored})

    def _server_side_apply(self, res: Resource, req: Request) -> Response:
        """Server-side apply, as far as kresched uses it: `fieldManager` is required; the object is
        created when it does not exist (an apply that creates is authorised as a create too: the
        authoriser checks both), else its fields are replaced by the applied ones; a field manager
        other than the one that applied it before is a conflict (409) unless `force=true`."""
        manager = req.query.get("fieldManager")
        if not manager:
            raise ApiError.bad_request("PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
                                       "required for apply patch")
        self._authorise_apply_create(res, req)
        obj = req.json()
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            raise ApiError.bad_request(f"the body is not a {res.kind}")
        if obj.get("kind") != res.kind or obj.get("apiVersion") != res.api_version:
            raise ApiError.bad_request(f"the object is a {obj.get('kind')} {obj.get('apiVersion')}, not a {res.kind}")
        obj = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion", "status")}
        meta = obj["metadata"]
        namespace, name = req.params.get("namespace", ""), req.params["name"]
        if meta.get("name") != name or meta.get("namespace", namespace) != namespace:
            raise ApiError.bad_request("the name or namespace of the object does not match the request")
        meta["namespace"] = namespace
        dry_run = dry_run_option(req.query.get("dryRun"))
        with self.store.lock:
            current = self.store.get(res, namespace, name)
            if current is None:
                meta["uid"] = str(uuid.uuid4())
                meta["creationTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.clock.now()))
                meta["managedFields"] = [{"manager": manager, "operation": "Apply"}]
                if dry_run:
                    return Response(201, {"kind": res.kind, "apiVersion": res.api_version, **obj})
                if self.on_apply is not None:
                    self.on_apply()
                created = self.store.create(res, obj)
                self.applied.append((res.kind, namespace, name, manager))
                return Response(201, {"kind": res.kind, "apiVersion": res.api_version, **created})
            owners = {f.get("manager") for f in current["metadata"].get("managedFields") or []}
            if owners and manager not in owners and req.query.get("force") != "true" \
                    and current.get("spec") != obj.get("spec"):
                raise ApiError(409, "Conflict", f"Apply failed with 1 conflict: conflict with "
                               f'"{sorted(owners)[0]}": .spec')
            new = copy.deepcopy(current)
            new["metadata"] = {**current["metadata"], **{k: v for k, v in meta.items() if k != "managedFields"}}
            new["metadata"]["managedFields"] = [*(current["metadata"].get("managedFields") or []),
                                                *([{"manager": manager, "operation": "Apply"}]
                                                  if manager not in owners else [])]
            for k, v in obj.items():
                if k != "metadata":
                    new[k] = v
            if dry_run:
                return Response(200, {"kind": res.kind, "apiVersion": res.api_version, **new})
            stored = self.store.replace(res, new)
            self.applied.append((res.kind, namespace, name, manager))
            return Response(200, {"kind": res.kind, "apiVersion": res.api_version, **stored})

    def _authorise_apply_create(self, res: Resource, req: Request) -> None:
        """An apply that would create the object needs `create` as well as `patch` (the API server's
        patch handler authorises the create it turns into)."""
        with self.store.lock:
            exists = self.store.get(res, req.params.get("namespace", ""), req.params["name"]) is not None
        names = {res.plural, res.key}
        if not exists and any((v, n) in self.forbidden for v in ("create", "*") for n in names):
            raise ApiError.forbidden(res, "create", self.user, namespace=req.params.get("namespace", ""),
                                     name=req.params["name"])

    # -- pods: DELETE, eviction ---------------------------------------------------------------------
    def _delete_pod(self, req: Request) -> Response:
        # As the apiserver's delete handler: options come from the body when there is one, and
        # only from the query string when there is none.
        if req.body.strip():
            options = req.json()
            if not isinstance(options, dict):
                raise ApiError.bad_request("the body is not a DeleteOptions")
        else:
            options = {}
            if "gracePeriodSeconds" in req.query:
                try:
                    options["gracePeriodSeconds"] = int(req.query["gracePeriodSeconds"])
                except ValueError:
                    raise ApiError.bad_request("invalid gracePeriodSeconds") from None
            if req.query.get("dryRun"):
                options["dryRun"] = [req.query["dryRun"]]
        dry_run = dry_run_option(None, options.get("dryRun"))
        pod = self.pods.delete(req.params["namespace"], req.params["name"], options, dry_run=dry_run)
        return Response(200, {"kind": "Pod", "apiVersion": "v1", **pod})

    def _evict(self, req: Request) -> Response:
        code, body = self.pods.evict(req.params["namespace"], req.params["name"], req.json(),
                                     dry_run_query=req.query.get("dryRun"))
        return Response(code, body)

    def _list(self, res: Resource, req: Request) -> Response:
        self._check_served(res)
        if req.flag("watch"):
            code, stream = watch(self, res, req)
            return Response(code, stream=stream)  # type: ignore[arg-type]
        q = req.query
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise ApiError.bad_request(f"invalid limit {q['limit']!r}") from None
        with self.store.lock:
            items = self.store.list(res, req.params.get("namespace"))
            if q.get("labelSelector"):
                items = [o for o in items
                         if label_selector_matches(q["labelSelector"], o["metadata"].get("labels") or {})]
            if q.get("fieldSelector"):
                items = [o for o in items if field_selector_matches(q["fieldSelector"], o)]
            list_rv = self.store.revision
            if q.get("continue"):
                token_rv, start = _decode_continue(q["continue"])
                if token_rv < self.store.compacted:  # the token's revision is gone; offer an inconsistent one
                    raise ApiError.expired(_encode_continue(self.store.revision, start))
                # A real server reads the rest at the token's revision; the fake reads the current
                # objects after the token's key (consistent as long as the test does not write between pages).
                list_rv = token_rv
                items = [o for o in items if storage_key(res, o) > start]
            meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
            page = items[:limit] if limit > 0 else items
            if len(page) < len(items):
                meta["continue"] = _encode_continue(list_rv, storage_key(res, page[-1]))
                if not q.get("labelSelector") and not q.get("fieldSelector"):
                    meta["remainingItemCount"] = len(items) - len(page)
            body = {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": meta,
                    "items": [self._served(res, o) for o in page]}
            return Response(200, msgspec.json.encode(body))


_PATCHERS: dict[str, Callable[[Any, Any], Any]] = {
    "application/json-patch+json": json_patch,
    "application/merge-patch+json": merge_patch,
    "application/strategic-merge-patch+json": strategic_merge_patch,
}
_WITH_STATUS = (NODES, PODS, PDBS, NAMESPACES)
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _validate(res: Resource, obj: dict[str, Any]) -> None:
    """What the API server's validation says about a written object (the parts kresched writes)."""
    meta = obj["metadata"]
    for field_name in ("labels", "annotations"):
        values = meta.get(field_name) or {}
        if not isinstance(values, dict) or any(not isinstance(v, str) for v in values.values()):
            raise ApiError.bad_request(f"json: cannot unmarshal into Go struct field ObjectMeta.metadata.{field_name} "
                                       "of type map[string]string")
    if res != NODES:
        return
    causes = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate((obj.get("spec") or {}).get("taints") or []):
        where = f"spec.taints[{i}]"
        key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
        if not key:
            causes.append(("FieldValueInvalid", f"{where}.key", 'Invalid value: "": name part must be non-empty'))
        if effect not in _TAINT_EFFECTS:
            supported = ", ".join(f'"{e}"' for e in _TAINT_EFFECTS)
            causes.append(("FieldValueNotSupported", f"{where}.effect",
                           f'Unsupported value: "{effect}": supported values: {supported}'))
        if (key, effect) in seen:
            added = "(*v1.Time)(nil)" if not taint.get("timeAdded") else f'time.Date({taint["timeAdded"]})'
            causes.append(("FieldValueDuplicate", where,
                           f'Duplicate value: core.Taint{{Key:"{key}", Value:"{value}", Effect:"{effect}", '
                           f"TimeAdded:{added}}}: taints must be unique by key and effect pair"))
        seen.add((key, effect))
    if causes:
        text = "; ".join(f"{f}: {m}" for _, f, m in causes)
        message = f'Node "{meta["name"]}" is invalid: ' + (f"[{text}]" if len(causes) > 1 else text)
        raise ApiError(422, "Invalid", message, details={
            "name": meta["name"], "kind": "Node",
            "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes]})


def _encode_continue(rv: int, start: str) -> str:
    """Shaped like the real token (base64 JSON with the revision and the last key), opaque to clients."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start + "\x00"}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        return int(data["rv"]), str(data["start"]).rstrip("\x00")
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise ApiError.bad_request(f"continue key is not valid: {token!r}") from None


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that resets an idle keep-alive connection (a closed pool, a cut watch) is normal.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-kube-apiserver"
    # Headers and body go out in separate writes: with Nagle on, each response waits for a delayed ACK.
    disable_nagle_algorithm = True

    def _handle(self) -> None:
        api: FakeApiServer = self.server.api  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        req = Request(self.command, parts.path, dict(parse_qsl(parts.query, keep_blank_values=True)),
                      self.headers, body)
        try:
            resp = api.handle(req)
        except _Drop as drop:
            self._drop(drop.reset)
            return
        if resp.stream is not None:
            self._stream(resp)
            return
        data = resp.encode()
        try:
            self.send_response(resp.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in resp.headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (e.g. its read timeout)
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    def _stream(self, resp: Response) -> None:
        """A chunked answer, one chunk per item, flushed as it comes; `Cut` drops it mid-way."""
        assert resp.stream is not None
        try:
            self.send_response(resp.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            for k, v in resp.headers.items():
                self.send_header(k, v)
            self.end_headers()
            for chunk in resp.stream:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        except Cut:
            self._drop(reset=False)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            close = getattr(resp.stream, "close", None)
            if close is not None:
                close()

    def _drop(self, reset: bool) -> None:
        self.close_connection = True
        sock = self.connection
        try:
            if reset:  # SO_LINGER 0: close() sends RST instead of FIN
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
            else:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass
