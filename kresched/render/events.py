"""Rendering execution events and summaries: one JSON object per line for log pipelines, or a
coloured line per event on a terminal. Never prints."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.markup import escape
from rich.text import Text

from kresched.execute.events import Event

__all__ = ["event_dict", "event_text", "summary_text"]

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
