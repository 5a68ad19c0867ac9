"""The live source: connect to an API server and read the cluster state a plan needs.

Owns: finding the credentials (kubeconfig file and context, or the in-cluster service account),
listing Nodes, Pods, PodDisruptionBudgets (policy/v1), PriorityClasses (scheduling.k8s.io/v1),
Namespaces, PersistentVolumes, PersistentVolumeClaims, StorageClasses and CSINodes
(storage.k8s.io/v1) page by page (`limit`/`continue`), and turning every way that can fail into a one-line
`ClusterAccessError`. Also the pieces the execution layer reuses for its own calls: `LiveClient`,
`ApiCall` (what a call does, for messages and RBAC hints), `is_transient` and
`retry_after_seconds` (what `kresched.retry`'s policies need to know about the client's
exceptions) and `access_error` (exception → message).

Pages are fetched with `_preload_content=False` and decoded by `kresched.sources.decode` straight
into the model structs: the client's own model deserialisation costs seconds per few thousand pods.
Must not write to the API (that is `kresched.execute`'s job).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec
import urllib3
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config import kube_config as _kube_config
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.exec_provider import ExecProvider

from kresched.errors import ClusterAccessError, InputError
from kresched.model.cluster import ClusterState
from kresched.model.storage import STORAGE_KINDS
from kresched.retry import LIST_RETRY, RetryPolicy, retry_after_from_headers
from kresched.sources.decode import Objects, check_yaml_depth, decode_json, paused_gc
from kresched.sources.snapshot import build_state, max_input_bytes

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "ApiCall",
    "LiveClient",
    "access_error",
    "connect",
    "is_transient",
    "load_live",
    "read_live",
    "read_within",
    "requests_still_running",
    "RequestDeadline",
    "retry_after_seconds",
]

DEFAULT_PAGE_SIZE = 500
DEFAULT_KUBECONFIG = "~/.kube/config"
_SERVICE_HOST_ENV = "KUBERNETES_SERVICE_HOST"

#: Seconds: how long one request may take in all (headers and body; the read timeout is per
#: read, so a server trickling a byte at a time would hold a request for ever without it).
REQUEST_TIMEOUT_ENV = "KRESCHED_REQUEST_TIMEOUT"
DEFAULT_REQUEST_TIMEOUT = 60.0
#: Seconds: how long reading one list, page after page with retries, may take in all.
LIST_TIMEOUT_ENV = "KRESCHED_LIST_TIMEOUT"
DEFAULT_LIST_TIMEOUT = 600.0
#: Seconds an exec credential plugin (`aws eks get-token`, `gke-gcloud-auth-plugin`) may run.
EXEC_TIMEOUT_ENV = "KRESCHED_EXEC_TIMEOUT"
DEFAULT_EXEC_TIMEOUT = 60.0


def _seconds_from_env(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text.removesuffix("s"))
    except ValueError:
        value = -1.0
    if not value > 0:
        raise InputError(f"{name}={text!r}: not a number of seconds above 0")
    return value


# -- the client ----------------------------------------------------------------------------------

@dataclass
class LiveClient:
    """An `ApiClient` plus what error messages need: where the server is and whose credentials."""

    api_client: k8s.ApiClient
    #: Server URL, e.g. `https://10.0.0.1:6443`.
    server: str
    #: `kubeconfig context "NAME"` or `the in-cluster service account`.
    credentials: str
    #: (connect, read) timeouts in seconds for every request.
    request_timeout: tuple[float, float] = (10.0, 60.0)
    #: Seconds one request may take in all, and one list page after page (see `REQUEST_TIMEOUT_ENV`).
    request_deadline: float = DEFAULT_REQUEST_TIMEOUT
    list_deadline: float = DEFAULT_LIST_TIMEOUT
    #: Errors the client logged since connecting (an exec plugin failing on a credential refresh).
    client_log: list[str] = field(default_factory=list)

    @property
    def core(self) -> k8s.CoreV1Api:
        return k8s.CoreV1Api(self.api_client)

    @property
    def policy(self) -> k8s.PolicyV1Api:
        return k8s.PolicyV1Api(self.api_client)

    @property
    def scheduling(self) -> k8s.SchedulingV1Api:
        return k8s.SchedulingV1Api(self.api_client)

    @property
    def apps(self) -> k8s.AppsV1Api:
        return k8s.AppsV1Api(self.api_client)

    @property
    def storage(self) -> k8s.StorageV1Api:
        return k8s.StorageV1Api(self.api_client)

    def list_page(self, path: str, limit: int, token: str | None) -> Any:
        """One page of the list at `path` (`/api/v1/pods`), JSON, as the urllib3 response, unread.

        The generated `*Api` classes are not used for lists: importing one imports the pydantic
        models of its whole API group (half a second of CPU for the groups a plan lists), and a
        raw read needs none of them. Authentication, TLS and proxies are the `ApiClient`'s, as
        for every other call; a non-2xx answer raises `ApiException` as the generated methods do."""
        query: list[tuple[str, Any]] = [("limit", limit)]
        if token:
            query.append(("continue", token))
        api = self.api_client
        request = api.param_serialize("GET", path, query_params=query, header_params={"Accept": "application/json"},
                                      auth_settings=["BearerToken"])
        response = api.call_api(*request, _request_timeout=self.request_timeout)
        if not 200 <= response.status <= 299:
            response.read()
            raise ApiException.from_response(http_resp=response, body=None, data=None)
        return response.response

    def close(self) -> None:
        self.api_client.close()

    def __enter__(self) -> LiveClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(kubeconfig: str | None = None, context: str | None = None, *,
            request_timeout: tuple[float, float] | None = None) -> LiveClient:
    """A client for the cluster named by `kubeconfig` (a path or an os.pathsep-separated list; else
    $KUBECONFIG, else ~/.kube/config) and `context` (else its current-context); with no kubeconfig
    file at all, the in-cluster service account when running in a pod. Connects lazily: an
    unreachable server is reported by the first call. An exec credential plugin runs here, at most
    `$KRESCHED_EXEC_TIMEOUT` seconds; its failure is this call's `ClusterAccessError`.
    """
    deadline = _seconds_from_env(REQUEST_TIMEOUT_ENV, DEFAULT_REQUEST_TIMEOUT)
    list_deadline = _seconds_from_env(LIST_TIMEOUT_ENV, DEFAULT_LIST_TIMEOUT)
    if request_timeout is None:
        # The read timeout a little past the deadline: a silent server ends at the deadline, once,
        # with the deadline's message — not as read timeouts retried five times over.
        request_timeout = (min(10.0, deadline), deadline + 1.0)
    spec = kubeconfig or os.environ.get("KUBECONFIG") or ""
    explicit = bool(spec)
    paths = [os.path.expanduser(p) for p in (spec or DEFAULT_KUBECONFIG).split(os.pathsep) if p]
    for p in paths:
        if os.path.isdir(p):
            raise ClusterAccessError(f"kubeconfig {p}: is a directory, not a file")
        if os.path.exists(p) and not os.path.isfile(p):
            raise ClusterAccessError(f"kubeconfig {p}: not a regular file")
    existing = [p for p in paths if os.path.isfile(p)]
    cfg = k8s.Configuration()
    log = _client_log()
    if existing:
        name = _check_context(existing, context)
        _install_exec_provider()
        try:
            _load_kube_config(existing, name, cfg)
            if log:  # the client logs an exec plugin's failure and goes on without credentials
                raise ClusterAccessError(f'cannot get credentials for kubeconfig context "{name}": {log[-1]}')
        except ConfigException as exc:
            raise ClusterAccessError(f"invalid kubeconfig {_names(existing)}: {_one_line(exc)}") from None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ClusterAccessError(f"invalid kubeconfig {_names(existing)}: {type(exc).__name__}: "
                                     f"{_one_line(exc)}") from None
        credentials = f'kubeconfig context "{name}"'
    elif explicit:
        raise ClusterAccessError(f"kubeconfig {spec}: no such file")
    elif context is not None:
        raise ClusterAccessError(f"--context {context}: no kubeconfig found ({DEFAULT_KUBECONFIG} does not exist; "
                                 "set --kubeconfig or KUBECONFIG)")
    elif os.environ.get(_SERVICE_HOST_ENV):
        try:
            k8s_config.load_incluster_config(client_configuration=cfg)
        except ConfigException as exc:
            raise ClusterAccessError(f"in-cluster configuration: {_one_line(exc)}") from None
        credentials = "the in-cluster service account"
    else:
        raise ClusterAccessError(f"no kubeconfig found ({DEFAULT_KUBECONFIG} does not exist; set --kubeconfig or "
                                 "KUBECONFIG) and not running inside a cluster")
    # One retry layer (tenacity, below), not urllib3's silent three on top of it.
    cfg.retries = 0
    return LiveClient(k8s.ApiClient(cfg), cfg.host, credentials, request_timeout, deadline, list_deadline, log)


def _load_kube_config(paths: list[str], context: str, cfg: Any) -> None:
    """`load_kube_config` (files merged as kubectl merges them, no persisting), with a server that
    has no scheme given the one client-go's `DefaultServerURL` gives it (`_give_server_a_scheme`)."""
    merged = k8s_config.kube_config.KubeConfigMerger(os.pathsep.join(paths))
    if merged.config is None:
        raise ConfigException("Invalid kube-config file. No configuration found.")
    _give_server_a_scheme(merged.config, context)
    k8s_config.kube_config.KubeConfigLoader(config_dict=merged.config, active_context=context,
                                            config_base_path=None).load_and_set(cfg)


_CA_KEYS = ("certificate-authority", "certificate-authority-data")
#: A URL Go's `url.Parse` reads with a scheme and a host. `DefaultServerURL` gives any other server
#: (`10.0.0.1:6443`, `ht!tp://[::1` — "!" is no scheme's) the default scheme in front.
_SCHEME_AND_HOST = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]")


def _give_server_a_scheme(config: Any, context: str) -> None:
    """`server: 127.0.0.1:6443` (or anything else without a scheme and a host, as Go parses URLs) is
    https to kubectl when TLS is configured (a CA, a client certificate and key,
    `insecure-skip-tls-verify`, a TLS server name), else http; the Python client would send the
    bare name to urllib3, which guesses and warns. Mended in the merged config itself, so that the
    client loads the TLS settings it skips for a server not https."""
    try:
        ctx = config["contexts"].get_with_name(context)["context"]
        cluster = config["clusters"].get_with_name(ctx["cluster"])["cluster"].value
        user_entry = config["users"].get_with_name(ctx["user"], safe=True) if "user" in ctx else None
        user = user_entry["user"].value if user_entry is not None and "user" in user_entry else {}
    except (ConfigException, TypeError, KeyError):
        return  # the loader names what is wrong
    server = cluster.get("server") if isinstance(cluster, dict) else None
    if not isinstance(server, str) or not server or _SCHEME_AND_HOST.match(server):
        return
    user = user if isinstance(user, dict) else {}
    cert = any(k in user for k in ("client-certificate", "client-certificate-data"))
    key = any(k in user for k in ("client-key", "client-key-data"))
    tls = (any(k in cluster for k in _CA_KEYS) or cluster.get("insecure-skip-tls-verify") is True
           or bool(cluster.get("tls-server-name")) or (cert and key))
    cluster["server"] = ("https://" if tls else "http://") + server


# -- what the client would print or wait for ----------------------------------------------------

class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split()))


def _client_log() -> list[str]:
    """The client reports an exec plugin's failure (at load and on every credential refresh) with
    `logging.error` on the root logger, which prints `ERROR:root:...` and goes on without
    credentials. Those lines are collected instead and become kresched's one error line."""
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, _Collect)), None)
    if handler is None:
        handler = _Collect()
        root.addHandler(handler)
    handler.messages.clear()
    return handler.messages


class _TimedExecProvider(ExecProvider):
    """The client's exec credential plugin runner (`ExecProvider.run`, same protocol and
    messages) with a timeout: the client waits for the plugin for ever, and a plugin waiting for a
    browser login or a hung cloud CLI would hang kresched with it."""

    def run(self, previous_response: Any = None) -> Any:
        timeout = _seconds_from_env(EXEC_TIMEOUT_ENV, DEFAULT_EXEC_TIMEOUT)
        command = " ".join(str(a) for a in self.args)
        interactive = bool(getattr(sys.stdout, "isatty", lambda: False)())
        info: dict[str, Any] = {"apiVersion": self.api_version, "kind": "ExecCredential",
                                "spec": {"interactive": interactive}}
        if previous_response:
            info["spec"]["response"] = previous_response
        if self.cluster:
            info["spec"]["cluster"] = self.cluster.value
        env = {**self.env, "KUBERNETES_EXEC_INFO": json.dumps(info)}
        try:
            # Its own process group (unless it may talk to the terminal): a shell script's children
            # hold the pipes open, so killing the plugin alone would leave communicate() waiting.
            proc = subprocess.Popen(self.args, stdout=subprocess.PIPE,
                                    stderr=None if interactive else subprocess.PIPE,
                                    stdin=None if interactive else subprocess.DEVNULL,
                                    cwd=self.cwd, env=env, text=True, process_group=None if interactive else 0)
        except OSError as exc:
            raise ConfigException(f"exec credential plugin `{command}`: {exc.strerror or exc}") from None
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                if interactive:
                    proc.kill()
                else:
                    os.killpg(proc.pid, signal.SIGKILL)
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
            proc.wait()
            raise ConfigException(f"exec credential plugin `{command}` did not finish within {timeout:g}s "
                                  f"(raise {EXEC_TIMEOUT_ENV} if it needs longer)") from None
        if proc.returncode != 0:
            detail = " ".join((stderr or "").split())
            raise ConfigException(f"exec credential plugin `{command}` failed with exit code {proc.returncode}"
                                  + (f": {detail[:300]}" if detail else ""))
        try:
            data = json.loads(stdout)
        except (ValueError, RecursionError):
            raise ConfigException(f"exec credential plugin `{command}` printed no ExecCredential JSON") from None
        if not isinstance(data, dict) or not isinstance(data.get("status"), dict):
            raise ConfigException(f"exec credential plugin `{command}`: malformed ExecCredential (no status)")
        if data.get("apiVersion") != self.api_version:
            raise ConfigException(f"exec credential plugin `{command}`: apiVersion {data.get('apiVersion')!r} "
                                  f"does not match {self.api_version!r}")
        return data["status"]


def _install_exec_provider() -> None:
    # `kube_config` looks the class up in its own namespace each time it runs a plugin.
    _kube_config.ExecProvider = _TimedExecProvider  # type: ignore[attr-defined, misc]



def _check_context(paths: list[str], context: str | None) -> str:
    """The context to use; a clear error when it does not exist (the client's own message does not say)."""
    contexts: list[str] = []
    current = ""
    for p in paths:
        try:
            text = Path(p).read_text()
            check_yaml_depth(text, f"invalid kubeconfig {p}")
            doc = yaml.safe_load(text)
        except InputError as exc:
            raise ClusterAccessError(exc.message) from None
        except yaml.YAMLError as exc:
            raise ClusterAccessError(f"invalid kubeconfig {p}: malformed YAML: {_one_line(exc)}") from None
        except OSError as exc:
            raise ClusterAccessError(f"kubeconfig {p}: cannot read: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ClusterAccessError(f"invalid kubeconfig {p}: not UTF-8 text") from None
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ClusterAccessError(f"invalid kubeconfig {p}: not a kubeconfig (expected a mapping with clusters, "
                                     "contexts and users)")
        _check_shape(doc, p)
        for c in doc.get("contexts") or []:
            if isinstance(c, dict) and isinstance(c.get("name"), str) and c["name"] not in contexts:
                contexts.append(c["name"])
        current = current or str(doc.get("current-context") or "")  # the first file that sets it wins
    available = f"available: {', '.join(contexts)}" if contexts else "it has no contexts"
    if context is not None:
        if context not in contexts:
            raise ClusterAccessError(f'context "{context}" not found in kubeconfig {_names(paths)} ({available})')
        return context
    if not current:
        raise ClusterAccessError(f"kubeconfig {_names(paths)} sets no current-context: pass --context ({available})")
    if current not in contexts:
        raise ClusterAccessError(f'kubeconfig {_names(paths)}: current-context "{current}" is not defined '
                                 f"({available})")
    return current


#: The string fields of a kubeconfig's entries the client looks things up by (Go's `api.Context`
#: and `api.Cluster`: kubectl cannot decode another kind there either).
_STRING_FIELDS = {"context": ("cluster", "user", "namespace"), "cluster": ("server",)}


def _check_shape(doc: dict[str, Any], path: str) -> None:
    """What the client assumes without checking (it fails with a TypeError or an AttributeError,
    or names a Python object): `current-context` is a string; `clusters`, `contexts` and `users`
    are lists of mappings, each with a string `name`; a context's cluster, user and namespace and a
    cluster's server are strings."""
    current = doc.get("current-context")
    if current is not None and not isinstance(current, str):
        raise ClusterAccessError(f"invalid kubeconfig {path}: current-context: expected a string, got "
                                 f"{_yaml_kind(current)}")
    for key in ("clusters", "contexts", "users"):
        value = doc.get(key)
        if value is None:
            continue
        if not isinstance(value, list):
            raise ClusterAccessError(f"invalid kubeconfig {path}: {key}: expected a list, got {_yaml_kind(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise ClusterAccessError(f"invalid kubeconfig {path}: {key}[{i}]: expected a mapping, got "
                                         f"{_yaml_kind(item)}")
            if not isinstance(item.get("name"), str):
                raise ClusterAccessError(f"invalid kubeconfig {path}: {key}[{i}].name: expected a string")
            inner = key[:-1]  # cluster, context, user
            if item.get(inner) is not None and not isinstance(item[inner], dict):
                raise ClusterAccessError(f"invalid kubeconfig {path}: {key}[{i}].{inner}: expected a mapping, got "
                                         f"{_yaml_kind(item[inner])}")
            for name in _STRING_FIELDS.get(inner, ()):
                value = (item.get(inner) or {}).get(name)
                if value is not None and not isinstance(value, str):
                    raise ClusterAccessError(f"invalid kubeconfig {path}: {key}[{i}].{inner}.{name}: expected a "
                                             f"string, got {_yaml_kind(value)}")


def _yaml_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "a number" if isinstance(value, (int, float)) else f"a {type(value).__name__}"


def _names(paths: list[str]) -> str:
    return os.pathsep.join(paths)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


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

class _Status(msgspec.Struct):
    message: str = ""
    reason: str = ""
    code: int = 0


def _status(exc: ApiException) -> _Status:
    body = exc.body
    if body:
        try:
            return msgspec.json.decode(body, type=_Status)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError, TypeError):
            text = " ".join(str(body).split())
            return _Status(message=text[:200] + ("…" if len(text) > 200 else ""), reason=str(exc.reason or ""))
    return _Status(reason=str(exc.reason or ""))


def access_error(exc: BaseException, call: ApiCall, client: LiveClient) -> ClusterAccessError | None:
    """The one-line `ClusterAccessError` for a failed `call`, or None when `exc` is not an access error."""
    server = client.server
    if isinstance(exc, ApiException):
        if not exc.status:  # no answer: the client wraps TLS failures this way
            reason = str(exc.reason or "")
            if reason.startswith("SSLError"):
                return ClusterAccessError(f"cannot reach the API server at {server}: TLS error: "
                                          f"{_one_line(reason.removeprefix('SSLError'))}")
            return None
        st = _status(exc)
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
        return ClusterAccessError(f"cannot get credentials for {client.credentials}: {_one_line(exc)}")
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
        return f"TLS error: {_one_line(e)}"
    if isinstance(e, errs.ProxyError):
        return f"proxy error: {_one_line(e)}"
    if isinstance(e, errs.ProtocolError):
        inner = e.args[1] if len(e.args) > 1 and isinstance(e.args[1], BaseException) else None
        if isinstance(inner, ConnectionResetError):
            return "connection reset by the server"
        return "connection closed by the server without a response"
    if isinstance(e, (ConnectionError, http.client.HTTPException, errs.HTTPError)):
        return _one_line(e) or type(e).__name__
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


# -- listing --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _ListSpec:
    kind: str
    path: str
    call: ApiCall


#: What a plan needs, in the order it is read (small and cluster-scoped first).
_LISTS = (
    _ListSpec("Namespace", "/api/v1/namespaces", ApiCall("list", "namespaces")),
    _ListSpec("PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses",
              ApiCall("list", "priorityclasses", "scheduling.k8s.io")),
    _ListSpec("Node", "/api/v1/nodes", ApiCall("list", "nodes")),
    _ListSpec("PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets",
              ApiCall("list", "poddisruptionbudgets", "policy")),
    # What scoring needs: the selectors of the system default spreading constraints.
    _ListSpec("Service", "/api/v1/services", ApiCall("list", "services")),
    _ListSpec("ReplicationController", "/api/v1/replicationcontrollers", ApiCall("list", "replicationcontrollers")),
    _ListSpec("ReplicaSet", "/apis/apps/v1/replicasets", ApiCall("list", "replicasets", "apps")),
    _ListSpec("StatefulSet", "/apis/apps/v1/statefulsets", ApiCall("list", "statefulsets", "apps")),
    _ListSpec("StorageClass", "/apis/storage.k8s.io/v1/storageclasses",
              ApiCall("list", "storageclasses", "storage.k8s.io")),
    _ListSpec("CSINode", "/apis/storage.k8s.io/v1/csinodes",
              ApiCall("list", "csinodes", "storage.k8s.io")),
    _ListSpec("PersistentVolume", "/api/v1/persistentvolumes", ApiCall("list", "persistentvolumes")),
    _ListSpec("PersistentVolumeClaim", "/api/v1/persistentvolumeclaims", ApiCall("list", "persistentvolumeclaims")),
    _ListSpec("Pod", "/api/v1/pods", ApiCall("list", "pods")),
)


class _ListMeta(msgspec.Struct, frozen=True):
    continue_: str = msgspec.field(default="", name="continue")


class _ListHead(msgspec.Struct):
    kind: str = ""
    metadata: _ListMeta = _ListMeta()


_list_head = msgspec.json.Decoder(_ListHead)
_ITEMS_KEY = b'"items":'


def _decode_list_head(data: bytes) -> _ListHead:
    """The list's kind and continue token, without scanning the items a second time.

    The API server writes `kind`, `apiVersion` and `metadata` before `items`; when the bytes before
    the first `"items":` hold the metadata, decoding just that prefix is enough (and saves about a
    fifth of the decoding time). Anything else falls back to reading the whole page.
    """
    i = data.find(_ITEMS_KEY)
    if i > 0 and b'"metadata":' in data[:i]:
        try:
            return _list_head.decode(data[:i] + b'"items":null}')
        except msgspec.DecodeError:
            pass
    return _list_head.decode(data)


#: Told after each page: the kind being listed, how many of it so far, and the bytes read in all.
OnPage = Callable[[str, int, int], None]


def load_live(client: LiveClient, page_size: int = DEFAULT_PAGE_SIZE, *,
              retry: RetryPolicy | None = None, on_page: OnPage | None = None) -> ClusterState:
    """Read the cluster state from the API server (see `read_live`) and index it."""
    with paused_gc():
        return build_state(read_live(client, page_size, retry=retry, on_page=on_page))


def read_live(client: LiveClient, page_size: int = DEFAULT_PAGE_SIZE, *,
              retry: RetryPolicy | None = None, on_page: OnPage | None = None) -> Objects:
    """List every kind a plan needs, `page_size` objects a request, retrying transient failures
    with `retry` (default `LIST_RETRY`); every failure left is a `ClusterAccessError`. `on_page`
    (progress on a terminal) is told after every page.
    """
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    policy = replace(retry if retry is not None else LIST_RETRY, retry_after=retry_after_seconds)
    out = Objects()
    read = [0]
    for spec in _LISTS:
        try:
            out.extend(_list_all(client, spec, page_size, policy, on_page, read))
        except Exception as exc:
            err = access_error(exc, spec.call, client)
            if err is None:
                raise
            raise err from None
    # Every storage kind was listed: an empty list means the cluster has none, not "unknown".
    out.storage_kinds = frozenset(STORAGE_KINDS)
    return out


def _list_all(client: LiveClient, spec: _ListSpec, page_size: int, policy: RetryPolicy,
              on_page: OnPage | None = None, read: list[int] | None = None) -> Objects:
    """All pages of one list. A 410 Gone on a continue token (the list took longer than the server
    keeps its snapshot) restarts the list once from the beginning: mixing pages of two snapshots
    could show a pod twice or not at all.
    """
    started = time.monotonic()
    for restart in (False, True):
        objects = Objects()
        token: str | None = None
        seen: set[str] = set()
        page = 0
        try:
            while True:
                page += 1
                left = client.list_deadline - (time.monotonic() - started)
                try:
                    if left <= 0:
                        raise RequestDeadline("")
                    data = _fetch(client, spec, page_size, token, policy.with_deadline(left), left)
                except RequestDeadline:
                    if time.monotonic() - started < client.list_deadline:
                        raise
                    raise ClusterAccessError(
                        f"cannot {spec.call.describe()}: the list was not read within {client.list_deadline:g}s "
                        f"(stopped on page {page}; set {LIST_TIMEOUT_ENV} to allow longer)") from None
                origin = f"{client.server}{spec.path} (page {page})"
                try:
                    head = _decode_list_head(data)
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    raise ClusterAccessError(f"{origin}: the API server sent an unreadable list: {exc}") from None
                if head.kind != f"{spec.kind}List":
                    raise ClusterAccessError(f"{origin}: expected a {spec.kind}List from the API server, "
                                             f"got {head.kind or 'something without a kind'}")
                try:
                    page_objects = decode_json(data, origin, item_kind=spec.kind)
                except InputError as exc:
                    # Not the operator's input: the server's answer. Nothing is acted upon.
                    raise ClusterAccessError(f"the API server sent an object kresched cannot use: {exc.message}") \
                        from None
                objects.extend(page_objects)
                if on_page is not None:
                    if read is not None:
                        read[0] += len(data)
                    on_page(spec.kind, objects.count(), read[0] if read is not None else len(data))
                token = head.metadata.continue_ or None
                if token is None:
                    return objects
                if token in seen:
                    raise ClusterAccessError(
                        f"cannot {spec.call.describe()}: the API server at {client.server} sent the same continue "
                        f"token again on page {page}: the list would never end")
                seen.add(token)
        except ApiException as exc:
            if exc.status == 410 and token is not None and not restart:
                continue
            if exc.status == 410 and token is not None:
                raise ClusterAccessError(
                    f"cannot {spec.call.describe()}: the list expired twice while being read page by page "
                    f"(410 {_status(exc).reason or 'Gone'}); try again, or with a larger page size") from None
            raise
    raise AssertionError("unreachable")


def _fetch(client: LiveClient, spec: _ListSpec, page_size: int, token: str | None, policy: RetryPolicy,
           left: float) -> bytes:
    """One page's raw bytes, retried while the failure is transient, within what is `left` of the
    list's deadline."""
    started = time.monotonic()
    for attempt in policy.retrying(is_transient):
        with attempt:
            remaining = left - (time.monotonic() - started)
            return read_within(client, spec.call, lambda: client.list_page(spec.path, page_size, token),
                               min(client.request_deadline, max(remaining, 0.0)))
    raise AssertionError("unreachable")
