"""Events: what the execution layer reports as it acts. It never prints; the CLI turns each
event into a JSON line or a line of rich output (`kresched.render.events`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Event", "Reporter", "Collector", "count"]


@dataclass(frozen=True)
class Event:
    """One action or observation. `action` is a stable, machine-readable verb (`evicted`,
    `pdb-blocked`, `bound`, ...); `text` is for people; `data` are the structured fields."""

    action: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    #: "info", "ok", "warn" or "error": how a terminal should colour it.
    level: str = "info"
    #: Wall-clock time (seconds since the epoch) when it happened.
    at: float = field(default_factory=time.time)


Reporter = Callable[[Event], None]


@dataclass
class Collector:
    """A reporter that keeps events (tests, and summaries built from what happened)."""

    events: list[Event] = field(default_factory=list)

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def actions(self) -> list[str]:
        return [e.action for e in self.events]


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`1 pod`, `2 pods`, `0 pods` (`plural` where adding an s is wrong): for an event's text."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
