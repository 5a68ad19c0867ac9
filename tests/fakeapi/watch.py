"""Watches: `GET <list path>?watch=true` streamed as a real API server streams them.

The answer is HTTP 200 with `Transfer-Encoding: chunked`, one JSON event per line
(`{"type": "ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR", "object": {...}}`), objects with their
`kind` and `apiVersion`. Semantics:

- `resourceVersion` unset or "0": synthetic ADDED events for the current matching objects, then
  every change after the store's current revision; `resourceVersion=RV`: every change after RV
  (the store's `history`). An RV older than the last `Store.compact()` is "too old": an ERROR
  event carrying a 410 Expired Status (`too old resource version: RV (OLDEST)`) and the end of
  the stream — or, with `FakeApiServer.watch_gone = "status"`, an HTTP 410 answer instead.
- `fieldSelector` / `labelSelector` filter events; an object that stops matching is DELETED for
  the watcher, one that starts matching is ADDED.
- The stream ends cleanly after `timeoutSeconds` (default `FakeApiServer.watch_timeout_seconds`),
  or when the server stops.
- `allowWatchBookmarks=true` and `FakeApiServer.bookmark_seconds` set: a BOOKMARK (an object
  with only `metadata.resourceVersion`) after every quiet stretch that long.
- Faults: a `cut(events=N)` or `cut(seconds=S)` step (faults.py) lets the watch start and then
  drops the connection mid-stream, without the terminating chunk.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from tests.fakeapi.errors import ApiError
from tests.fakeapi.faults import Cut
from tests.fakeapi.store import Change, Resource, field_selector_matches, label_selector_matches

if TYPE_CHECKING:
    from tests.fakeapi.server import FakeApiServer, Request

__all__ = ["watch"]


def _event(kind: str, res: Resource, obj: dict[str, Any]) -> bytes:
    return msgspec.json.encode({"type": kind, "object": {"kind": res.kind, "apiVersion": res.api_version,
                                                         **obj}}) + b"\n"


def _too_old(rv: int, oldest: int) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"too old resource version: {rv} ({oldest})", "reason": "Expired", "code": 410}


def watch(server: FakeApiServer, res: Resource, req: Request) -> tuple[int, Iterator[bytes] | dict[str, Any]]:
    """(200, the event stream) or raises `ApiError` (410 as a status, bad parameters)."""
    store = server.store
    q = req.query
    namespace = req.params.get("namespace")
    try:
        timeout = float(q.get("timeoutSeconds") or server.watch_timeout_seconds)
        rv_text = q.get("resourceVersion") or ""
        rv = int(rv_text) if rv_text not in ("", "0") else None
    except ValueError:
        raise ApiError.bad_request(f"invalid watch parameters: {q}") from None
    bookmarks = req.flag("allowWatchBookmarks") and server.bookmark_seconds is not None

    def selected(obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        meta = obj["metadata"]
        if namespace is not None and meta.get("namespace") != namespace:
            return False
        if q.get("labelSelector") and not label_selector_matches(q["labelSelector"], meta.get("labels") or {}):
            return False
        return not (q.get("fieldSelector") and not field_selector_matches(q["fieldSelector"], obj))

    with store.lock:
        if rv is not None and rv < store.compacted:
            if server.watch_gone == "status":
                raise ApiError(410, "Expired", f"too old resource version: {rv} ({store.compacted})")
            first = [msgspec.json.encode({"type": "ERROR", "object": _too_old(rv, store.compacted)}) + b"\n"]
            return 200, iter(first)
        if rv is None:
            first = [_event("ADDED", res, o) for o in store.list(res, namespace) if selected(o)]
            start = store.revision
        else:
            first, start = [], rv
        position = bisect.bisect_right(store.history, start, key=lambda c: c.revision)

    def events_of(change: Change) -> bytes | None:
        if change.resource != res:
            return None
        now_in, was_in = selected(change.object), selected(change.old)
        if change.type == "DELETED":
            return _event("DELETED", res, change.object) if was_in or now_in else None
        if now_in and not was_in:
            return _event("ADDED", res, change.object)
        if now_in:
            return _event(change.type, res, change.object)
        if was_in:  # left the selection: the watcher sees it go
            return _event("DELETED", res, change.object)
        return None

    cut_events, cut_seconds = req.cut_after_events, req.cut_after_seconds

    def stream() -> Iterator[bytes]:
        nonlocal position
        started = time.monotonic()
        deadline = started + timeout
        cut_at = started + cut_seconds if cut_seconds is not None else None
        sent = 0
        last = started

        def check_cut() -> None:
            if cut_events is not None and sent >= cut_events:
                raise Cut()
            if cut_at is not None and time.monotonic() >= cut_at:
                raise Cut()

        check_cut()
        for line in first:
            yield line
            sent += 1
            last = time.monotonic()
            check_cut()
        while not server.stopping.is_set():
            now = time.monotonic()
            if now >= deadline:
                return
            wake = [deadline, now + 0.2]
            if cut_at is not None:
                wake.append(cut_at)
            if bookmarks:
                wake.append(last + server.bookmark_seconds)  # type: ignore[operator]
            with store.changed:
                if position >= len(store.history):
                    store.changed.wait(max(0.0, min(wake) - now))
                changes = store.history[position:]
                position = len(store.history)
                revision = store.revision
            for change in changes:
                line = events_of(change)
                if line is not None:
                    yield line
                    sent += 1
                    last = time.monotonic()
                    check_cut()
            check_cut()
            if bookmarks and time.monotonic() - last >= server.bookmark_seconds:  # type: ignore[operator]
                yield _event("BOOKMARK", res, {"metadata": {"resourceVersion": str(revision)}})
                last = time.monotonic()

    return 200, stream()
