"""One API call: what it is to RBAC, reading its answer within its deadline, and how its failure reads.

Owns `ApiCall` (a call as RBAC sees it, for messages and RBAC hints), `read_within` (an answer read
completely within the request's deadline and size limit, in a thread abandoned at the deadline:
`requests_still_running`), `is_transient` and `retry_after_seconds` (what `kresched.retry`'s
policies need to know of the client's exceptions) and `access_error` (a failed call → one line).
The execution layer makes its own calls with these; `kresched.sources.live` its lists. Decides
nothing about what to call or when to retry (`kresched.retry` holds the policies); must not write
to the API (that is `kresched.execute`'s job).
"""

from __future__ import annotations

import contextlib
import http.client
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import urllib3
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from kresched.errors import ClusterAccessError
from kresched.retry import retry_after_from_headers
from kresched.sources.connection import REQUEST_TIMEOUT_ENV, LiveClient, one_line
from kresched.sources.snapshot import max_input_bytes

__all__ = [
    "ApiCall",
    "ApiStatus",
    "ListSpec",
    "RequestDeadline",
    "access_error",
    "api_status",
    "is_transient",
    "read_within",
    "requests_still_running",
    "retry_after_seconds",
]

# -- what a call does (for messages and RBAC hints) ----------------------------------------------

@dataclass(frozen=True)
class ApiCall:
    """One API call as RBAC sees it: `list pods at the cluster scope`, `create pods/eviction "web-1" ...`."""

    verb: str
    resource: str
    group: str = ""
    subresource: str = ""
    namespace: str | None = None
    name: str | None = None

    @property
    def rbac_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    @property
    def scope(self) -> str:
        return f'in the namespace "{self.namespace}"' if self.namespace else "at the cluster scope"

    def describe(self) -> str:
        """`list pods at the cluster scope`, `patch nodes "node-a" at the cluster scope`, ..."""
        what = f"{self.rbac_resource}.{self.group}" if self.group else self.rbac_resource
        if self.name:
            what += f' "{self.name}"'
        return f"{self.verb} {what} {self.scope}"

    def rbac_hint(self) -> str:
        return (f'apiGroups ["{self.group}"], resources ["{self.rbac_resource}"], verbs ["{self.verb}"]')


# -- retries ----------------------------------------------------------------------------------------
# The policies live in `kresched.retry`; what counts as transient, and how to read a Retry-After from
# the client's exceptions, is this module's knowledge.

_TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})


def is_transient(exc: BaseException) -> bool:
    """A failure worth retrying: a 5xx or 429 answer, a dropped or reset connection, a read timeout.

    Refused connections, unknown hosts and connect timeouts are not: the server is not there, and
    the operator should hear so at once.
    """
    if isinstance(exc, ApiException):
        return exc.status in _TRANSIENT_STATUS
    if isinstance(exc, urllib3.exceptions.MaxRetryError):
        return exc.reason is not None and is_transient(exc.reason)
    return isinstance(exc, (urllib3.exceptions.ProtocolError, urllib3.exceptions.ReadTimeoutError,
                            ConnectionResetError, ConnectionAbortedError, http.client.IncompleteRead,
                            http.client.RemoteDisconnected))


def retry_after_seconds(exc: BaseException | None) -> float | None:
    """The Retry-After an API error carries (seconds or an HTTP date), if any."""
    return retry_after_from_headers(exc.headers) if isinstance(exc, ApiException) else None


# -- errors ---------------------------------------------------------------------------------------

class ApiStatus(msgspec.Struct):
    """The `Status` body of an API error, as far as messages need it."""

    message: str = ""
    reason: str = ""
    code: int = 0


def api_status(exc: ApiException) -> ApiStatus:
    """What the API server said in `exc`'s body (its text, shortened, when it is not a Status)."""
    body = exc.body
    if body:
        try:
            return msgspec.json.decode(body, type=ApiStatus)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError, TypeError):
            text = " ".join(str(body).split())
            return ApiStatus(message=text[:200] + ("…" if len(text) > 200 else ""), reason=str(exc.reason or ""))
    return ApiStatus(reason=str(exc.reason or ""))


def access_error(exc: BaseException, call: ApiCall, client: LiveClient) -> ClusterAccessError | None:
    """The one-line `ClusterAccessError` for a failed `call`, or None when `exc` is not an access error."""
    server = client.server
    if isinstance(exc, ApiException):
        if not exc.status:  # no answer: the client wraps TLS failures this way
            reason = str(exc.reason or "")
            if reason.startswith("SSLError"):
                return ClusterAccessError(f"cannot reach the API server at {server}: TLS error: "
                                          f"{one_line(reason.removeprefix('SSLError'))}")
            return None
        st = api_status(exc)
        message = st.message or st.reason or str(exc.reason or "")
        if exc.status == 401:
            if client.client_log:  # no credentials at all: the plugin failed on a refresh
                return ClusterAccessError(f"cannot get credentials for {client.credentials}: {client.client_log[-1]}")
            return ClusterAccessError(f"unauthorised: the API server at {server} rejected the credentials of "
                                      f"{client.credentials}: {message or 'Unauthorized'}")
        if exc.status == 403:
            user = re.search(r'User "([^"]*)"', st.message)
            who = f' for User "{user.group(1)}"' if user else ""
            return ClusterAccessError(f"forbidden: cannot {call.describe()} (needs RBAC: {call.rbac_hint()}{who})")
        answer = " ".join(x for x in (str(exc.status), st.reason or str(exc.reason or "")) if x)
        detail = f": {st.message}" if st.message else ""
        return ClusterAccessError(f"cannot {call.describe()}: the API server at {server} answered {answer}{detail}")
    if isinstance(exc, ConfigException):  # e.g. an exec credential plugin failing on refresh
        return ClusterAccessError(f"cannot get credentials for {client.credentials}: {one_line(exc)}")
    why = _network_reason(exc, client)
    if why is not None:
        return ClusterAccessError(f"cannot reach the API server at {server}: {why}")
    return None


def _network_reason(exc: BaseException, client: LiveClient) -> str | None:
    e = exc.reason if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None else exc
    errs = urllib3.exceptions
    connect_s, read_s = client.request_timeout
    if isinstance(e, errs.NameResolutionError):
        return f"cannot resolve the host name {e.conn.host!r}" if getattr(e, "conn", None) else "unknown host"
    if isinstance(e, errs.NewConnectionError):
        cause = e.__cause__ or e.__context__
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror[:1].lower() + cause.strerror[1:]
        text = str(e)
        return text.split("connection: ", 1)[-1].strip() if "connection: " in text else text
    if isinstance(e, errs.ConnectTimeoutError):
        return f"connection timed out after {connect_s:g}s"
    if isinstance(e, errs.ReadTimeoutError):
        return f"no response within {read_s:g}s (read timeout)"
    if isinstance(e, errs.SSLError):
        return f"TLS error: {one_line(e)}"
    if isinstance(e, errs.ProxyError):
        return f"proxy error: {one_line(e)}"
    if isinstance(e, errs.ProtocolError):
        inner = e.args[1] if len(e.args) > 1 and isinstance(e.args[1], BaseException) else None
        if isinstance(inner, ConnectionResetError):
            return "connection reset by the server"
        return "connection closed by the server without a response"
    if isinstance(e, (ConnectionError, http.client.HTTPException, errs.HTTPError)):
        return one_line(e) or type(e).__name__
    return None


# -- one request, within its deadline -------------------------------------------------------------

class RequestDeadline(ClusterAccessError):
    """A request did not complete within its deadline."""


_abandoned: list[threading.Thread] = []


def requests_still_running() -> bool:
    """Whether a request abandoned at its deadline is still blocked in its thread. Finalising the
    interpreter under such a daemon thread was seen to abort (SIGABRT) now and then;
    `kresched.cli.main` then ends the process without finalising."""
    return any(t.is_alive() for t in _abandoned)


def read_within(client: LiveClient, call: ApiCall, request: Callable[[], Any], seconds: float | None = None) -> bytes:
    """The body of `request()` (a call made with `_preload_content=False`), read completely within
    `seconds` (default: the client's request deadline), or a `ClusterAccessError` saying so.

    urllib3's read timeout is per socket read: a server that trickles a byte now and then, headers
    or body, holds a request for ever. The request runs in a daemon thread that the caller waits
    for; past the deadline the response (if it has come that far) is shut down and the thread
    abandoned — it ends with its socket, and never keeps the process alive.
    """
    limit = client.request_deadline if seconds is None else seconds
    max_bytes = max_input_bytes()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            resp = request()
            box["resp"] = resp
            try:
                box["data"] = _read_body(resp, max_bytes) if hasattr(resp, "read") else b""
            finally:
                if hasattr(resp, "release_conn"):
                    resp.release_conn()
        except BaseException as exc:  # handed to the waiting thread
            box["exc"] = exc

    worker = threading.Thread(target=work, name="kresched-request", daemon=True)
    worker.start()
    worker.join(max(limit, 0.0))
    if worker.is_alive():
        _abandoned.append(worker)
        resp = box.get("resp")
        if resp is not None:
            with contextlib.suppress(Exception):  # best effort: the thread is abandoned either way
                resp.shutdown()
        raise RequestDeadline(f"cannot {call.describe()}: the API server at {client.server} sent no complete "
                                 f"answer within {limit:g}s (set {REQUEST_TIMEOUT_ENV} or --request-timeout "
                                 "to wait longer)")
    if "exc" in box:
        exc = box["exc"]
        if isinstance(exc, _TooLarge):
            raise ClusterAccessError(f"cannot {call.describe()}: the API server at {client.server} sent more than "
                                     f"{max_bytes >> 20} MiB in one answer (KRESCHED_MAX_INPUT raises the limit)"
                                     ) from None
        raise exc
    return box["data"]


class _TooLarge(Exception):
    pass


def _read_body(resp: Any, max_bytes: int) -> bytes:
    """The whole body, refusing more than `max_bytes`: a server streaming without end would
    otherwise fill memory before any deadline."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = resp.read(1 << 20)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > max_bytes:
            raise _TooLarge
        chunks.append(chunk)


@dataclass(frozen=True)
class ListSpec:
    """One list a plan needs: the kind, its path, and the call (for messages and RBAC hints)."""

    kind: str
    path: str
    call: ApiCall
    #: Read when allowed: a 403 or 404 leaves the kind out instead of failing the run (what it
    #: adds is a hint, and a role that predates it must keep working).
    optional: bool = False
