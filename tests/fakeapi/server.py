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
import json
import re
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import msgspec
import yaml

from tests.fakeapi.errors import ApiError
from tests.fakeapi.faults import Fault, Faults
from tests.fakeapi.store import RESOURCES, Resource, Store, field_selector_matches, label_selector_matches, storage_key

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
        for r in RESOURCES:
            self._add_resource_routes(r)
        if objects:
            self.store.load(*objects)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> FakeApiServer:
        httpd = ThreadingHTTPServer((_LOOPBACK, 0), _Handler)
        httpd.daemon_threads = True
        httpd.api = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="fake-api-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
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
        record = RecordedRequest(req.method, req.path, dict(req.query), req.body)
        with self._lock:
            self.requests.append(record)
        try:
            resp = self._faulted(req) or self._serve(req)
        except ApiError as err:
            resp = Response(err.code, err.body(), dict(err.headers))
        record.status = resp.status
        return resp

    def _faulted(self, req: Request) -> Response | None:
        fault: Fault = self.faults.next_for(req.method, req.path)
        if fault.delay_seconds:
            time.sleep(fault.delay_seconds)
        if fault.drop or fault.reset:
            raise _Drop(reset=fault.reset)
        if fault.status is not None:
            raise ApiError.for_code(fault.status, fault.message, retry_after=fault.retry_after)
        if fault.action is not None:
            return fault.action(req)
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
        obj = self.store.require(res, req.params.get("namespace", ""), req.params["name"])
        return Response(200, {"kind": res.kind, "apiVersion": res.api_version, **obj})

    def _list(self, res: Resource, req: Request) -> Response:
        if req.flag("watch"):
            raise ApiError.not_implemented("watch")
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
            body = {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": meta, "items": page}
            return Response(200, msgspec.json.encode(body))


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
