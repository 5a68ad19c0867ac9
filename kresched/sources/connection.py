"""The connection to an API server: the credentials, the client, and the time each request may take.

Owns `connect` and `LiveClient`: finding the credentials (kubeconfig files merged as kubectl merges
them, and their context; or the in-cluster service account), checking what the Python client
assumes of a kubeconfig without checking, giving a bare `server:` the scheme kubectl gives it,
running exec credential plugins within `$KRESCHED_EXEC_TIMEOUT`, collecting what the client would
log, and the request and list deadlines (`$KRESCHED_REQUEST_TIMEOUT`, `$KRESCHED_LIST_TIMEOUT`).
Every way that can fail is a one-line `ClusterAccessError`. It makes no API call itself (connecting
is lazy): what a call is and how its failure reads are `kresched.sources.calls`'; what is listed,
`kresched.sources.live`'s. Must not write to the API (that is `kresched.execute`'s job).
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config import kube_config as _kube_config
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.exec_provider import ExecProvider

from kresched.errors import ClusterAccessError, InputError
from kresched.sources.config_file import read_kubeconfig
from kresched.sources.decode import check_yaml_depth

__all__ = [
    "DEFAULT_LIST_TIMEOUT",
    "DEFAULT_REQUEST_TIMEOUT",
    "LIST_TIMEOUT_ENV",
    "REQUEST_TIMEOUT_ENV",
    "LiveClient",
    "connect",
    "one_line",
]

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
    # A directory, a device or a FIFO among them is refused by `_check_context`, which reads them.
    existing = [p for p in paths if os.path.exists(p)]
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
            raise ClusterAccessError(f"invalid kubeconfig {_names(existing)}: {one_line(exc)}") from None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ClusterAccessError(f"invalid kubeconfig {_names(existing)}: {type(exc).__name__}: "
                                     f"{one_line(exc)}") from None
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
            raise ClusterAccessError(f"in-cluster configuration: {one_line(exc)}") from None
        credentials = "the in-cluster service account"
    else:
        raise ClusterAccessError(f"no kubeconfig found ({DEFAULT_KUBECONFIG} does not exist; set --kubeconfig or "
                                 "KUBECONFIG) and not running inside a cluster")
    # One retry layer (tenacity, below), not urllib3's silent three on top of it.
    cfg.retries = 0
    return LiveClient(k8s.ApiClient(cfg), cfg.host, credentials, request_timeout, deadline, list_deadline, log)


class _Merger(_kube_config.KubeConfigMerger):
    """The client's merger, each file read through `read_kubeconfig` (bounded; a pipe's bytes read
    once per run — `--kubeconfig <(vault read ...)` — where the client would open it again and find
    it empty). The rest is the client's `load_config` as it is."""

    def load_config(self, path: str) -> None:
        config = yaml.safe_load(read_kubeconfig(path))
        if config is None:
            raise ConfigException(f"Invalid kube-config. {path} file is empty")
        if self.config_merged is None:
            config_merged = copy.deepcopy(config)
            for item in ("clusters", "contexts", "users"):
                config_merged[item] = []
            self.config_merged = _kube_config.ConfigNode(path, config_merged, path)
        for item in ("clusters", "contexts", "users"):
            self._merge(item, config.get(item, []) or [], path)
        if "current-context" in config:
            self.config_merged.value["current-context"] = config["current-context"]
        self.config_files[path] = config


def _load_kube_config(paths: list[str], context: str, cfg: Any) -> None:
    """`load_kube_config` (files merged as kubectl merges them, no persisting), with a server that
    has no scheme given the one client-go's `DefaultServerURL` gives it (`_give_server_a_scheme`)."""
    merged = _Merger(os.pathsep.join(paths))
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
            text = read_kubeconfig(p)
            check_yaml_depth(text, f"invalid kubeconfig {p}")
            doc = yaml.safe_load(text)
        except InputError as exc:
            raise ClusterAccessError(exc.message) from None
        except yaml.YAMLError as exc:
            raise ClusterAccessError(f"invalid kubeconfig {p}: malformed YAML: {one_line(exc)}") from None
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


def one_line(exc: BaseException) -> str:
    """`exc`'s message on one line (a client's exception may span several)."""
    return " ".join(str(exc).split())
