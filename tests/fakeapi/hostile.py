"""A hostile API server for the live path's hardening tests: raw TCP on 127.0.0.1 that answers
every request the way a broken or malicious server (or a proxy in front of one) might.

    with HostileServer("trickle") as srv:
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig")

Behaviours:
- `silence`: accepts the connection, reads the request, never answers;
- `trickle`: sends a 200 with chunked JSON, one byte every `interval` seconds, for ever;
- `trickle-headers`: sends the status line and headers one byte every `interval` seconds;
- `garbage`: answers with bytes that are not HTTP, then closes;
- `not-json`: a well-formed HTTP 200 whose body is not JSON;
- `loop`: a valid, empty list of whatever was asked, always with the same `continue` token;
- `huge-line`: a watch-style chunked 200 that streams one endless line without a newline.

Each connection is served on its own daemon thread; `stop()` closes the listening socket and every
connection, so an abandoned client thread ends with it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from pathlib import Path

import yaml

__all__ = ["BEHAVIOURS", "HostileServer"]

BEHAVIOURS = ("silence", "trickle", "trickle-headers", "garbage", "not-json", "loop", "huge-line")

_LIST_KINDS = {
    "namespaces": "NamespaceList", "priorityclasses": "PriorityClassList", "nodes": "NodeList",
    "poddisruptionbudgets": "PodDisruptionBudgetList", "services": "ServiceList",
    "replicationcontrollers": "ReplicationControllerList", "replicasets": "ReplicaSetList",
    "statefulsets": "StatefulSetList", "pods": "PodList",
}


class HostileServer:
    def __init__(self, behaviour: str, interval: float = 0.05) -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}")
        self.behaviour = behaviour
        self.interval = interval
        self.requests: list[str] = []
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._thread = threading.Thread(target=self._accept, daemon=True, name="hostile-accept")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            for c in self._conns:
                with contextlib.suppress(OSError):
                    c.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    c.close()

    def write_kubeconfig(self, path: Path) -> Path:
        config = {
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "hostile", "cluster": {"server": self.url}}],
            "users": [{"name": "hostile", "user": {"token": "t"}}],
            "contexts": [{"name": "hostile", "context": {"cluster": "hostile", "user": "hostile"}}],
            "current-context": "hostile",
        }
        path.write_text(yaml.safe_dump(config))
        return path

    # -- serving ---------------------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True, name="hostile-conn").start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            while not self._stop.is_set():
                request = self._read_request(conn)
                if request is None:
                    return
                self.requests.append(request)
                if not self._answer(conn, request):
                    return
        except OSError:
            return
        finally:
            with contextlib.suppress(OSError):
                conn.close()

    @staticmethod
    def _read_request(conn: socket.socket) -> str | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = next((int(v) for k, _, v in (ln.partition(":") for ln in lines[1:])
                       if k.strip().lower() == "content-length"), 0)
        while len(rest) < length:
            rest += conn.recv(65536)
        return lines[0]

    def _drip(self, conn: socket.socket, data: bytes) -> None:
        for i in range(len(data)):
            if self._stop.wait(self.interval):
                return
            conn.sendall(data[i:i + 1])

    def _answer(self, conn: socket.socket, request: str) -> bool:
        """Answer one request; False to stop serving the connection."""
        b = self.behaviour
        if b == "silence":
            self._stop.wait()
            return False
        if b == "garbage":
            conn.sendall(b"\x00\xffSSH-2.0-OpenSSH_9.6 \x1b[2J not http at all\r\n\r\n")
            return False
        if b == "trickle-headers":
            self._drip(conn, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Pad: a\r\n" * 10_000)
            return False
        if b == "not-json":
            self._send(conn, 200, b"<html><body>Login required</body></html>", "text/html")
            return True
        if b == "loop":
            path = request.split(" ")[1].split("?")[0]
            kind = _LIST_KINDS.get(path.rstrip("/").rsplit("/", 1)[-1], "List")
            body = {"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "1", "continue": "again"},
                    "items": []}
            self._send(conn, 200, json.dumps(body).encode())
            return True
        # trickle and huge-line: a chunked 200, then bytes for ever
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        payload = b'{"kind": "PodList", "items": [' if b == "trickle" else b"x" * 65536
        while not self._stop.is_set():
            if b == "trickle":
                self._drip(conn, b"%x\r\n%s\r\n" % (1, payload[:1]))
                payload = payload[1:] or b" "
            else:
                conn.sendall(b"%x\r\n%s\r\n" % (len(payload), payload))
                time.sleep(0.001)
        return False

    @staticmethod
    def _send(conn: socket.socket, status: int, body: bytes, content_type: str = "application/json") -> None:
        conn.sendall(b"HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s"
                     % (status, content_type.encode(), len(body), body))


