"""A scheduler extender of the test suite's own: a threaded `http.server` on 127.0.0.1 that answers
kube-scheduler's extender verbs (k8s.io/kube-scheduler/extender/v1 wire types, Go field names) by
a fixed `Policy` of node and pod names, and records every request it gets.

The same server ran beside the rig's real kube-scheduler v1.36.2 to record the fixtures in
`tests/fixtures/extenders/` (`python -m tests.extender_server --port N --policy FILE.json`), so
the tests drive kresched against the very answers the scheduler got.

Policy (all optional): `deny` {node: message} → FailedNodes; `unresolvable` {node: message} →
FailedAndUnresolvableNodes; `scores` {node: 0..10} (others 0); `noPreempt` [node] → left out of
the preemption answer; `protect` [pod name, or UID when only UIDs come] → never a victim;
`status` {verb: HTTP code} → that code instead of an answer; `error` {verb: text} → an answer
whose `Error` is that text; `delay` {verb: seconds} before answering.
"""

from __future__ import annotations

import argparse
import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeExtender", "Policy", "closed_port", "running_extender"]


@dataclass
class Policy:
    deny: dict[str, str] = field(default_factory=dict)
    unresolvable: dict[str, str] = field(default_factory=dict)
    scores: dict[str, int] = field(default_factory=dict)
    no_preempt: list[str] = field(default_factory=list)
    protect: list[str] = field(default_factory=list)
    status: dict[str, int] = field(default_factory=dict)
    error: dict[str, str] = field(default_factory=dict)
    delay: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, doc: dict[str, Any]) -> Policy:
        return cls(doc.get("deny", {}), doc.get("unresolvable", {}), doc.get("scores", {}),
                   doc.get("noPreempt", []), doc.get("protect", []), doc.get("status", {}), doc.get("error", {}),
                   doc.get("delay", {}))


def _names(args: dict[str, Any]) -> tuple[list[str], bool]:
    """The node names an `ExtenderArgs` carries, and whether they came as names (`NodeNames`)."""
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"]), True
    return [n["metadata"]["name"] for n in (args.get("Nodes") or {}).get("items") or ()], False


class FakeExtender:
    """The server. `url`: its urlPrefix; `requests`: (verb, decoded body) in the order received."""

    def __init__(self, policy: Policy | None = None, port: int = 0,
                 tls: tuple[str, str, str | None] | None = None) -> None:
        """`tls`: (certificate file, key file, CA file client certificates must be signed by or
        None): serve HTTPS."""
        self.policy = policy or Policy()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                verb = self.path.rstrip("/").rsplit("/", 1)[-1]
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
                with server._lock:
                    server.requests.append((verb, body))
                code, answer = server.answer(verb, body)
                data = json.dumps(answer).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/scheduler"
        if tls is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls[0], tls[1])
            if tls[2] is not None:
                ctx.verify_mode = ssl.CERT_REQUIRED
                ctx.load_verify_locations(tls[2])
            self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)
            self.url = f"https://127.0.0.1:{self.port}/scheduler"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self) -> FakeExtender:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def verbs(self) -> list[str]:
        with self._lock:
            return [v for v, _ in self.requests]

    def answer(self, verb: str, args: dict[str, Any]) -> tuple[int, Any]:
        p = self.policy
        if verb in p.delay:
            time.sleep(p.delay[verb])
        if verb in p.status:
            return p.status[verb], {}
        if verb == "filter":
            if verb in p.error:
                return 200, {"Error": p.error[verb]}
            names, by_name = _names(args)
            keep = [n for n in names if n not in p.deny and n not in p.unresolvable]
            out: dict[str, Any] = {
                "FailedNodes": {n: p.deny[n] for n in names if n in p.deny},
                "FailedAndUnresolvableNodes": {n: p.unresolvable[n] for n in names if n in p.unresolvable},
                "Error": ""}
            if by_name:
                out["NodeNames"] = keep
            else:
                items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in keep]
                out["Nodes"] = {"metadata": {}, "items": items}
            return 200, out
        if verb == "prioritize":
            names, _ = _names(args)
            return 200, [{"Host": n, "Score": p.scores.get(n, 0)} for n in names]
        if verb == "preempt":
            if args.get("NodeNameToMetaVictims") is not None:
                given = {n: [v["UID"] for v in mv["Pods"] or ()] for n, mv in args["NodeNameToMetaVictims"].items()}
                protected = set(p.protect)  # UIDs: a cache-capable extender gets no names
            else:
                given = {n: [v["metadata"]["uid"] for v in vs["Pods"] or ()]
                         for n, vs in args["NodeNameToVictims"].items()}
                protected = {v["metadata"]["uid"] for vs in args["NodeNameToVictims"].values()
                             for v in vs["Pods"] or () if v["metadata"]["name"] in p.protect}
            out = {}
            for node, uids in given.items():
                if node in p.no_preempt:
                    continue
                kept = [u for u in uids if u not in protected]
                if kept:
                    out[node] = {"Pods": [{"UID": u} for u in kept], "NumPDBViolations": 0}
            return 200, {"NodeNameToMetaVictims": out}
        return 404, {}


@contextmanager
def running_extender(policy: Policy | None = None,
                     tls: tuple[str, str, str | None] | None = None) -> Iterator[FakeExtender]:
    ext = FakeExtender(policy, tls=tls).start()
    try:
        yield ext
    finally:
        ext.stop()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--policy", help="a JSON file (see the module docstring)")
    parser.add_argument("--log", help="append each request, one JSON line, to this file")
    a = parser.parse_args()
    policy = Policy.of(json.load(open(a.policy))) if a.policy else Policy()  # noqa: SIM115
    ext = FakeExtender(policy, a.port)
    if a.log:
        log = open(a.log, "a")  # noqa: SIM115
        original = ext.answer

        def logged(verb: str, args: dict[str, Any]) -> tuple[int, Any]:
            code, out = original(verb, args)
            log.write(json.dumps({"verb": verb, "request": args, "code": code, "answer": out}) + "\n")
            log.flush()
            return code, out

        ext.answer = logged  # type: ignore[method-assign]
    print(f"extender at {ext.url}", flush=True)
    ext._httpd.serve_forever()


if __name__ == "__main__":
    main()
