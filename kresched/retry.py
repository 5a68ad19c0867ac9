"""Every retry policy kresched has, in one place (tenacity underneath).

- `LIST_RETRY`: reading state — a few quick retries of 5xx, 429 and dropped connections;
- `TRANSIENT_RETRY`: one write — the same for 5xx and dropped connections;
- `EVICTION_RETRY`: an eviction answered 429 by a PodDisruptionBudget — back off (1 s doubling
  to 15 s) until the caller's deadline, then give up on that victim;
- `CONFLICT_RETRY`: a node write answered 409 — re-read and retry quickly, a few times.

`KRESCHED_BACKOFF_SCALE` (a float, default 1) scales every pause; the test suite sets it small so
that fault tests run in milliseconds. Which failures are transient is `kresched.sources.calls`'
`is_transient` (it knows the client's exceptions).
"""

from __future__ import annotations

import email.utils
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import tenacity

__all__ = [
    "RetryPolicy",
    "LIST_RETRY",
    "TRANSIENT_RETRY",
    "EVICTION_RETRY",
    "CONFLICT_RETRY",
    "retry_after_from_headers",
]

T = TypeVar("T")


def _scale() -> float:
    try:
        return max(0.0, float(os.environ.get("KRESCHED_BACKOFF_SCALE", "1")))
    except ValueError:
        return 1.0


@dataclass(frozen=True)
class RetryPolicy:
    """Up to `attempts` tries (None: unbounded) within `deadline_seconds` (None: unbounded),
    pausing `initial_seconds` doubling up to `max_seconds`, plus up to `jitter_seconds`, and at
    least the server's Retry-After (capped at `max_seconds`)."""

    attempts: int | None = 5
    initial_seconds: float = 0.5
    max_seconds: float = 8.0
    jitter_seconds: float = 0.25
    deadline_seconds: float | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)
    #: How to read a server's Retry-After from an exception (set by the client layer).
    retry_after: Callable[[BaseException | None], float | None] = field(default=lambda e: None, compare=False,
                                                                         repr=False)

    def with_deadline(self, seconds: float) -> RetryPolicy:
        return replace(self, deadline_seconds=seconds)

    def wait_seconds(self, attempt: int, exc: BaseException | None) -> float:
        """The pause after failed try number `attempt` (1-based)."""
        backoff = self.initial_seconds * 2 ** (attempt - 1) + random.uniform(0, self.jitter_seconds)
        return min(self.max_seconds, max(backoff, self.retry_after(exc) or 0.0)) * _scale()

    def retrying(self, retry_on: Callable[[BaseException], bool]) -> tenacity.Retrying:
        """A tenacity `Retrying` (iterate it: `for attempt in policy.retrying(...): with attempt: ...`)."""
        import tenacity  # here: only acting and the live path retry, and a snapshot run starts without it

        stop: Any = tenacity.stop_never
        if self.attempts is not None:
            stop = tenacity.stop_after_attempt(self.attempts)
        if self.deadline_seconds is not None:
            by_time = tenacity.stop_after_delay(self.deadline_seconds * _scale())
            stop = by_time if self.attempts is None else stop | by_time

        def wait(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome is not None else None
            return self.wait_seconds(state.attempt_number, exc)

        return tenacity.Retrying(stop=stop, wait=wait, retry=tenacity.retry_if_exception(retry_on),
                                 sleep=self.sleep, reraise=True)

    def call(self, fn: Callable[[], T], retry_on: Callable[[BaseException], bool]) -> T:
        """`fn()`, retried while it raises something `retry_on` accepts; the last failure propagates."""
        return self.retrying(retry_on)(fn)


LIST_RETRY = RetryPolicy()
TRANSIENT_RETRY = RetryPolicy(attempts=5, initial_seconds=0.5, max_seconds=8.0)
EVICTION_RETRY = RetryPolicy(attempts=None, initial_seconds=1.0, max_seconds=15.0, jitter_seconds=0.5)
CONFLICT_RETRY = RetryPolicy(attempts=6, initial_seconds=0.05, max_seconds=1.0, jitter_seconds=0.05)


def retry_after_from_headers(headers: Any) -> float | None:
    """Seconds from a Retry-After header (seconds or an HTTP date), if there is one."""
    value = headers.get("Retry-After") if headers else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
