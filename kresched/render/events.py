"""Rendering execution events and summaries: one JSON object per line for log pipelines, or a
coloured line per event on a terminal with a live footer of what is in progress. Never prints."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kresched.execute.events import Event
from kresched.render.table import markup_lines

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

__all__ = ["Progress", "dry_suffix", "event_dict", "event_text", "narration", "progress_text", "summary_view",
           "value_text"]

_ICON = {"ok": "[green]✓[/]", "warn": "[yellow]![/]", "error": "[red]✗[/]", "info": "[dim]·[/]"}
#: In a dry run nothing happened: the execution layer's past tense becomes "would".
_WOULD = (("evicted ", "would evict "), ("deleted ", "would delete "), ("cordoned ", "would cordon "),
          ("reserved node ", "would reserve node "), ("released node ", "would release node "),
          ("took over ", "would take over "), ("kept the ", "would keep the "), ("gave up ", "would give up "),
          ("waiting up to ", "would wait up to "), ("evicting ", "would evict "),
          ("plan still holds on the live state: ", "the plan holds: "), ("applied ", "would apply "),
          ("the plan still holds on the live state: ", "the plan holds: "))
_WOULD_INSIDE = {"gone": (" is gone", " would be gone"), "bound": (" is bound to ", " would be bound to "),
                 "room-made": (" are gone: the room is made", " would be gone: the room would be made"),
                 "pdb-allows": (": evicting ", ": would evict "),
                 "pdb-blocked": ("; waiting for ", "; would wait for ")}


def narration(text: str, mode: str, action: str = "") -> str:
    """The event's text as it reads in `mode`: in a dry run (client or server) every action is
    something that *would* happen."""
    if mode == "cluster":
        return text
    for done, would in _WOULD:
        if text.startswith(done):
            text = would + text[len(done):]
            break
    if action in _WOULD_INSIDE:
        text = text.replace(*_WOULD_INSIDE[action])
    return text


def _ts(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def event_dict(e: Event, mode: str) -> dict[str, Any]:
    """`{"time", "action", "message", "mode", ...data}` — one log line."""
    return {"time": _ts(e.at), "action": e.action, "message": narration(e.text, mode, e.action), "level": e.level,
            "mode": mode, **e.data}


def event_text(e: Event, mode: str) -> RenderableType:
    # A dry run's successes are not successes: a plain bullet, not a tick.
    from rich.markup import escape

    icon = "[dim]·[/]" if mode != "cluster" and e.level == "ok" else _ICON.get(e.level, "·")
    prefix = f"[dim]({escape(mode)})[/] " if mode != "cluster" else ""
    return markup_lines([f"{icon} {prefix}{escape(narration(e.text, mode, e.action))}"])


def dry_suffix(mode: str) -> str:
    """kubectl's mark on what a dry run says it did: ` (dry run)`, ` (server dry run)`."""
    return "" if mode == "cluster" else f" ({mode})"


def summary_view(categories: Sequence[tuple[str, Any]], closing: str, style: str = "bold") -> RenderableType:
    """The end of a run as an operator reads it: the categories that are not empty, one `label:
    value` line each (in words: never a Python value), then one closing line in kubectl's manner
    (`node/worker-b1 drained in 12.3s: 11 pods evicted`), last."""
    from rich.markup import escape

    lines = [f"[dim]{escape(label)}:[/] {escape(value_text(value))}" for label, value in categories
             if value not in (None, "", [], {}, ())]
    lines.append(f"[{style}]{escape(closing)}[/]")
    return markup_lines(lines)


def value_text(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return ", ".join(value_text(x) for x in v) or "none"
    if isinstance(v, dict):
        return " ".join(value_text(x) for x in v.values() if x is not None)
    return str(v)


@dataclass
class Progress:
    """What has happened so far, from the events: the terminal's live footer."""

    started: float
    counts: Counter[str] = field(default_factory=Counter)
    #: PDB → pods waiting for it to allow their eviction.
    waiting_on: dict[str, set[str]] = field(default_factory=dict)
    last: str = ""

    def update(self, e: Event) -> None:
        self.counts[e.action] += 1
        self.last = e.action
        pod, pdb = e.data.get("pod"), e.data.get("pdb")
        if e.action == "pdb-blocked" and pod and pdb:
            self.waiting_on.setdefault(pdb, set()).add(pod)
        elif e.action in ("evicted", "gave-up", "failed", "already-gone") and pod:
            for pods in self.waiting_on.values():
                pods.discard(pod)


_SHOWN = (("evicted", "evicted"), ("deleted", "deleted"), ("gone", "gone"), ("already-gone", "already gone"),
          ("pdb-blocked", "refused by a PDB"), ("gave-up", "given up"), ("failed", "failed"))


def progress_text(p: Progress, now: float) -> Text:
    """`⏱ 12s · evicted 7 · gone 5 · refused by a PDB 2 · waiting for shop/web (2)`."""
    from rich.text import Text

    parts = [f"⏱ {now - p.started:.0f}s"]
    parts += [f"{label} {p.counts[action]}" for action, label in _SHOWN if p.counts[action]]
    queues = [f"{pdb} ({len(pods)})" for pdb, pods in sorted(p.waiting_on.items()) if pods]
    if queues:
        parts.append("waiting for " + ", ".join(queues))
    if p.last == "waiting":
        parts.append("waiting for the scheduler to bind the pod")
    return Text(" · ".join(parts), style="bold cyan")
