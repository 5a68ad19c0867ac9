"""Rendering execution events and summaries: one JSON object per line for log pipelines, or a
coloured line per event on a terminal with a live footer of what is in progress. Never prints."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from rich.markup import escape
from rich.text import Text

from kresched.execute.events import Event

__all__ = ["Progress", "event_dict", "event_text", "progress_text", "summary_text"]

_ICON = {"ok": "[green]✓[/]", "warn": "[yellow]![/]", "error": "[red]✗[/]", "info": "[dim]·[/]"}


def _ts(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def event_dict(e: Event, mode: str) -> dict[str, Any]:
    """`{"time", "action", "message", "mode", ...data}` — one log line."""
    return {"time": _ts(e.at), "action": e.action, "message": e.text, "level": e.level, "mode": mode, **e.data}


def event_text(e: Event, mode: str) -> Text:
    prefix = f"[dim]({escape(mode)})[/] " if mode != "cluster" else ""
    return Text.from_markup(f"{_ICON.get(e.level, '·')} {prefix}{escape(e.text)}")


def summary_text(summary: dict[str, Any]) -> Text:
    """The end-of-run summary as `key: value` lines."""
    lines = []
    for k, v in summary.items():
        if isinstance(v, list):
            v = ", ".join(_item(x) for x in v) or "none"
        lines.append(f"[bold]{escape(k)}[/]: {escape(str(v))}")
    return Text.from_markup("\n".join(lines))


def _item(x: Any) -> str:
    if isinstance(x, dict):
        return " ".join(f"{v}" for v in x.values())
    return str(x)


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
    parts = [f"⏱ {now - p.started:.0f}s"]
    parts += [f"{label} {p.counts[action]}" for action, label in _SHOWN if p.counts[action]]
    queues = [f"{pdb} ({len(pods)})" for pdb, pods in sorted(p.waiting_on.items()) if pods]
    if queues:
        parts.append("waiting for " + ", ".join(queues))
    if p.last == "waiting":
        parts.append("waiting for the scheduler to bind the pod")
    return Text(" · ".join(parts), style="bold cyan")
