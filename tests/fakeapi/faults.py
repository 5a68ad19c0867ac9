"""Fault injection: scripted per-path sequences of errors, dropped connections and delays.

A test scripts what the next requests to a path get, e.g. two 500s and then the real answer:

    fake.faults.script([500, 500], path="/api/v1/pods")

Each matching request consumes one step; once a script is used up, requests reach the server
normally (so `[500, 500]` and `[500, 500, PASS]` are the same). `repeat=True` cycles the steps
forever (a 429 storm). Steps:

- an `int` or `status(code, message, retry_after=...)`: answer with that Status error;
- `DROP` / `"drop"`: close the connection without answering (the client sees it aborted);
- `RESET` / `"reset"`: abort it with a TCP RST (connection reset by peer);
- `delay(seconds)`: wait, then answer normally (`delay(s, then=...)` waits, then applies `then`);
- `call(fn)`: run `fn(request)` (e.g. `lambda r: fake.store.compact()`); if it returns a `Response`
  that is the answer, anything else goes on normally;
- `cut(events=N)` / `cut(seconds=S)`: for a streamed answer (a watch): start it normally, then drop
  the connection after N events or S seconds, mid-stream (no terminating chunk);
- `PASS` / `None` / `"ok"`: answer normally.

`script(..., query={"watch": "true"})` only matches requests whose query has those values (a
watch and a list share their path); `method=None` matches any method.

The hook runs before authentication and routing, as a proxy or an overloaded server would fail.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    from tests.fakeapi.server import Request, Response

__all__ = ["DROP", "PASS", "RESET", "Cut", "Fault", "Faults", "Script", "call", "cut", "delay", "status"]


class Cut(Exception):
    """Raised inside a streamed answer to drop the connection mid-stream."""


@dataclass(frozen=True)
class Fault:
    """One scripted step; the default (`PASS`) lets the request through."""

    status: int | None = None
    message: str = ""
    retry_after: int | None = None
    drop: bool = False
    reset: bool = False
    delay_seconds: float = 0.0
    action: Callable[[Request], Response | None] | None = None
    #: For streamed answers: drop the connection after this many events / seconds.
    cut_after_events: int | None = None
    cut_after_seconds: float | None = None

    @property
    def is_pass(self) -> bool:
        return self == PASS


PASS = Fault()
DROP = Fault(drop=True)
RESET = Fault(reset=True)


def status(code: int, message: str = "", *, retry_after: int | None = None) -> Fault:
    return Fault(status=code, message=message, retry_after=retry_after)


def delay(seconds: float, then: Fault = PASS) -> Fault:
    return replace(then, delay_seconds=seconds)


def cut(events: int | None = None, seconds: float | None = None) -> Fault:
    if events is None and seconds is None:
        raise ValueError("cut() needs events= or seconds=")
    return Fault(cut_after_events=events, cut_after_seconds=seconds)


def call(fn: Callable[[Request], Response | None]) -> Fault:
    return Fault(action=fn)


Step = Union[Fault, int, str, None]  # noqa: UP007 (a runtime alias)
_SHORTHANDS = {"drop": DROP, "reset": RESET, "ok": PASS, "pass": PASS}


def as_fault(step: Step) -> Fault:
    if step is None:
        return PASS
    if isinstance(step, Fault):
        return step
    if isinstance(step, bool):
        raise TypeError("a fault step is a Fault, a status code, 'drop', 'reset', 'ok' or None")
    if isinstance(step, int):
        return status(step)
    if isinstance(step, str) and step.lower() in _SHORTHANDS:
        return _SHORTHANDS[step.lower()]
    raise TypeError(f"unknown fault step {step!r}")


@dataclass
class Script:
    """Steps for the requests matching `method` (None: any) and `path` (exact, or a regex fullmatch)."""

    steps: list[Fault]
    path: str | re.Pattern[str] | None = None
    method: str | None = None
    repeat: bool = False
    used: int = 0
    #: Query parameters the request must carry (compared case-insensitively).
    query: dict[str, str] | None = None

    def matches(self, method: str, path: str, query: dict[str, str] | None = None) -> bool:
        if self.method is not None and self.method.upper() != method:
            return False
        if self.query and any((query or {}).get(k, "").lower() != v.lower() for k, v in self.query.items()):
            return False
        if self.path is None:
            return True
        if isinstance(self.path, re.Pattern):
            return self.path.fullmatch(path) is not None
        return self.path == path

    @property
    def done(self) -> bool:
        return not self.repeat and self.used >= len(self.steps)

    def take(self) -> Fault:
        step = self.steps[self.used % len(self.steps)]
        self.used += 1
        return step


@dataclass
class Faults:
    scripts: list[Script] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def script(self, steps: Iterable[Step], *, path: str | re.Pattern[str] | None = None,
               method: str | None = "GET", repeat: bool = False, query: dict[str, str] | None = None) -> Script:
        """Script the next requests to `path` (all paths if None); see the module docstring."""
        s = Script([as_fault(x) for x in steps], path, method, repeat, query=query)
        if not s.steps:
            raise ValueError("a fault script needs at least one step")
        with self._lock:
            self.scripts.append(s)
        return s

    def next_for(self, method: str, path: str, query: dict[str, str] | None = None) -> Fault:
        """The step this request gets: from the first matching script that is not used up."""
        with self._lock:
            for s in self.scripts:
                if not s.done and s.matches(method, path, query):
                    return s.take()
        return PASS

    def clear(self) -> None:
        with self._lock:
            self.scripts.clear()

    def pending(self) -> list[Any]:
        """Scripts with steps left (a test can assert every scripted fault was hit)."""
        with self._lock:
            return [s for s in self.scripts if not s.done and not s.repeat]
