"""Reaching the scheduler's extenders over HTTP: the I/O half of `kresched.sched.extender`, whose
`ExtenderTransport` port `HttpTransport` implements (kresched asks an extender as it asks the
API server: a read, so it lives with the other sources; it never binds, so nothing here writes).

Owns `HttpTransport` — one POST of JSON to `urlPrefix` + `/` + verb, with the extender's
`httpTimeout` for the whole call and a TLS setup made as `makeTransport` makes it (pkg/scheduler/
extender.go): `tlsConfig`'s fields as client-go's `TLSConfigFor` reads them (`insecure`, the CA,
the client certificate, `serverName`), and `enableHTTPS` without a CA meaning no verification —
and `probe`, whether an extender's address answers at all (what an offline run asks first).
Errors are worded as Go's `http.Client` words them (`Post "URL": dial tcp HOST: connect:
connection refused`, `... (Client.Timeout exceeded while awaiting headers)`), or as
`HTTPExtender.send` does for a status other than 200.

Reads the extender's fields by name (`Endpoint`), not through the configuration's types: sources
sit below sched and import nothing from it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import tempfile
import threading
import warnings
from typing import Protocol
from urllib.parse import urlsplit

import urllib3

from kresched.errors import InputError

__all__ = ["Endpoint", "HttpTransport", "probe"]


class _TLS(Protocol):
    insecure: bool
    server_name: str
    cert_file: str
    key_file: str
    ca_file: str
    cert_data: bytes
    key_data: bytes
    ca_data: bytes


class Endpoint(Protocol):
    """What `HttpTransport` reads of an extender (`sched.config.types.Extender` has these)."""

    url_prefix: str
    enable_https: bool
    tls: _TLS | None
    http_timeout_seconds: float


class _Error(Exception):
    """Raised as the port's `ExtenderError` (`error_type`): the caller's exception type."""


class HttpTransport:
    """`ExtenderTransport` over HTTP(S). `error_type`: the exception to raise (the port's
    `ExtenderError`, passed in: this layer cannot import it). Pools are kept per extender."""

    def __init__(self, error_type: type[Exception]) -> None:
        self._error = error_type
        self._pools: dict[int, urllib3.PoolManager] = {}
        self._lock = threading.Lock()

    def post(self, extender: Endpoint, verb: str, body: bytes) -> bytes:
        url = extender.url_prefix.rstrip("/") + "/" + verb
        timeout = extender.http_timeout_seconds
        try:
            pool = self._pool(extender)
            with warnings.catch_warnings():  # `insecure` was asked for: kube-scheduler says nothing either
                warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                resp = pool.request("POST", url, body=body, headers={"Content-Type": "application/json"},
                                    timeout=urllib3.Timeout(total=timeout), retries=False, redirect=False,
                                    preload_content=True)
        except InputError as e:
            raise self._error(e.message) from None
        except urllib3.exceptions.HTTPError as e:
            raise self._error(f'Post "{url}": {_go_words(e, url)}') from None
        except (ValueError, OSError) as e:  # a URL urllib3 cannot use, a socket error outside its wrapping
            raise self._error(f'Post "{url}": {e}') from None
        if resp.status != 200:
            raise self._error(f"failed {verb} with extender at URL {url}, code {resp.status}")
        return resp.data

    def prepare(self, extender: Endpoint) -> None:
        """Set up `extender`'s connection pool now: `InputError` for a TLS configuration that
        cannot be used (a missing or bad CA, certificate or key), which kube-scheduler refuses to
        start with (`makeTransport`)."""
        self._pool(extender)

    def _pool(self, extender: Endpoint) -> urllib3.PoolManager:
        key = id(extender)
        with self._lock:
            pool = self._pools.get(key)
            if pool is None:
                pool = self._pools[key] = urllib3.PoolManager(num_pools=2, maxsize=4, **_tls_args(extender))
            return pool


def _tls_args(extender: Endpoint) -> dict[str, object]:
    """`makeTransport`: no TLS configuration at all → the default (system roots, verified);
    `enableHTTPS` without a CA → not verified; else as configured."""
    tls = extender.tls
    has_ca = tls is not None and bool(tls.ca_file or tls.ca_data)
    insecure = (tls is not None and tls.insecure) or (extender.enable_https and not has_ca)
    ctx = ssl.create_default_context()
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif tls is not None and has_ca:
        try:
            ctx = ssl.create_default_context(cafile=tls.ca_file or None,
                                             cadata=tls.ca_data.decode("ascii", "replace") if tls.ca_data else None)
        except (OSError, ValueError) as e:  # ssl.SSLError is an OSError
            raise InputError(f"tlsConfig: cannot load the CA: {e}") from None
    args: dict[str, object] = {"ssl_context": ctx}
    if tls is not None:
        if tls.server_name:
            args["server_hostname"] = tls.server_name
            if not insecure:
                args["assert_hostname"] = tls.server_name
        _load_client_cert(ctx, tls)
    return args


def _load_client_cert(ctx: ssl.SSLContext, tls: _TLS) -> None:
    """The client certificate, from files or data (Python reads a chain only from files: data is
    written to a private temporary file for the moment it is read)."""
    if not (tls.cert_file or tls.cert_data):
        return
    try:
        if tls.cert_file and not tls.cert_data:
            ctx.load_cert_chain(tls.cert_file, tls.key_file or None)
            return
        with tempfile.TemporaryDirectory() as tmp:
            cert = os.path.join(tmp, "cert.pem")
            with open(cert, "wb") as f:
                f.write(tls.cert_data)
            key = tls.key_file or None
            if tls.key_data:
                key = os.path.join(tmp, "key.pem")
                with open(key, "wb") as f:
                    f.write(tls.key_data)
            ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as e:
        raise InputError(f"tlsConfig: cannot load the client certificate: {e}") from None


def _go_words(e: urllib3.exceptions.HTTPError, url: str) -> str:
    """urllib3's exception as Go's transport words the same failure."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    addr = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    reason = getattr(e, "reason", None) or e
    if isinstance(reason, urllib3.exceptions.NameResolutionError):
        return f"dial tcp: lookup {host}: no such host"
    if isinstance(reason, urllib3.exceptions.NewConnectionError):  # (a ConnectTimeoutError subclass)
        if isinstance(reason.__cause__, ConnectionRefusedError) or "refused" in str(reason):
            return f"dial tcp {addr}: connect: connection refused"
        return f"dial tcp {addr}: {reason.__cause__ or reason}"
    if isinstance(reason, (urllib3.exceptions.TimeoutError, socket.timeout, TimeoutError)):
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    if isinstance(reason, urllib3.exceptions.SSLError):
        return f"tls: {reason}"
    text = str(reason)
    if "Connection refused" in text or isinstance(reason, ConnectionRefusedError):
        return f"dial tcp {addr}: connect: connection refused"
    if isinstance(reason, (urllib3.exceptions.ProtocolError, ConnectionResetError)):
        return "EOF"
    return text


def probe(extender: Endpoint) -> str | None:
    """Why `extender`'s address does not answer (None: it accepts a connection). A TCP connect
    within its `httpTimeout`, nothing sent."""
    parts = urlsplit(extender.url_prefix)
    host = parts.hostname
    if not host or parts.scheme not in ("http", "https"):
        return f"urlPrefix {extender.url_prefix!r} is not an http(s) URL"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as e:
        return str(e)
    try:
        with contextlib.closing(socket.create_connection((host, port), timeout=extender.http_timeout_seconds)):
            return None
    except TimeoutError:
        return f"dial tcp {host}:{port}: i/o timeout"
    except ConnectionRefusedError:
        return f"dial tcp {host}:{port}: connect: connection refused"
    except OSError as e:
        return f"dial tcp {host}:{port}: {e.strerror or e}"
