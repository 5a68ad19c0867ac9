"""Rendering a drain pre-flight (JSON contract and table) and a drain's summary. Never prints."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from kresched.execute.drain import DrainResult
from kresched.plan.drain import DrainPlan, NodeDrain

__all__ = ["node_drain_dict", "preflight_dict", "preflight_view", "drain_summary"]


def node_drain_dict(n: NodeDrain) -> dict[str, Any]:
    """`{"node", "evict": [{"pod", "pdb", "blocked", "landsOn"}], "skip": [...], "errors": [...]}`."""
    return {
        "node": n.node,
        "evict": [{"pod": p.pod.key, "pdb": p.pdb, "blocked": p.blocked, "landsOn": p.lands_on,
                   "candidates": list(p.candidates), "likely": p.likely} for p in n.evict],
        "skip": [{"pod": s.pod.key, "reason": s.reason} for s in n.skip],
        "errors": [{"pod": e.pod.key, "reason": e.reason} for e in n.errors],
    }


def preflight_dict(plan: DrainPlan) -> dict[str, Any]:
    """One node's object, or `{"nodes": [...]}` for several."""
    if len(plan.nodes) == 1:
        return node_drain_dict(plan.nodes[0])
    return {"nodes": [node_drain_dict(n) for n in plan.nodes]}


def preflight_view(plan: DrainPlan) -> RenderableType:
    parts: list[RenderableType] = []
    for n in plan.nodes:
        parts.append(Text.from_markup(
            f"[bold]Drain {escape(n.node)}[/]: {len(n.evict)} pod(s) to evict, {len(n.skip)} skipped, "
            f"{len(n.errors)} refused"))
        if n.evict:
            t = Table(header_style="bold")
            for col in ("POD", "PDB", "NOW", "LANDS ON", "NOTES"):
                t.add_column(col, overflow="fold")
            for p in n.evict:
                if p.blocked:
                    now = f"[red]blocked[/]: {escape(p.blocked)}"
                elif p.queued_behind:
                    now = f"after {p.queued_behind} of its PDB (as their replacements are Ready)"
                else:
                    now = "[green]allowed[/]"
                if p.lands_on:
                    lands = escape(p.lands_on)
                elif p.pod.is_finished:
                    lands = "[dim]finished: nothing to reschedule[/]"
                elif p.pod.is_bare:
                    lands = "[red]gone for good[/] (bare pod)"
                elif p.pod.is_terminating:
                    lands = "[dim]already terminating: its replacement exists[/]"
                else:
                    lands = f"[yellow]stays Pending[/]: {escape(p.pending_reason or '')}"
                notes = "; ".join(x for x in (p.warning, f"held by volume: {p.held_by}" if p.held_by else None) if x)
                t.add_row(escape(p.pod.key), escape(p.pdb or "-"), now, lands, escape(notes or "-"))
            parts.append(t)
        for s in n.skip:
            parts.append(Text(f"  skip {s.pod.key}: {s.reason}", style="dim"))
    for n in plan.nodes:
        errors = n.kubectl_errors()
        if errors:
            parts.append(Text(""))
            parts.append(Text(f"kubectl would refuse to drain {n.node}:", style="bold red"))
            parts.extend(Text(f"  {e}", style="red") for e in errors)
    pending = plan.pending
    if pending:
        parts.append(Text(""))
        parts.append(Text(f"{len(pending)} pod(s) would stay Pending (--allow-pending to drain anyway):",
                          style="bold yellow"))
        parts.extend(Text(f"  {p.pod.key}: {p.held_by + '; ' if p.held_by else ''}{p.pending_reason}", style="yellow")
                     for p in pending)
    if plan.blocked:
        parts.append(Text(f"{len(plan.blocked)} eviction(s) would be refused by PodDisruptionBudgets and nothing "
                          "the drain does gives the budget back; it retries them until --timeout.", style="yellow"))
    return Group(*parts)


def drain_summary(result: DrainResult, nodes: list[str]) -> dict[str, Any]:
    return {
        "cordoned": result.cordoned,
        "evicted": result.evicted,
        "gone": result.gone,
        "alreadyGone": result.already_gone,
        "blocked": [{"pod": k, "reason": v} for k, v in sorted(result.blocked.items())],
        "failed": [{"pod": k, "reason": v} for k, v in sorted(result.failed.items())],
        "notStarted": result.not_started,
        "stillTerminating": result.terminating,
        "complete": result.complete,
        "seconds": round(result.seconds, 1),
        "uncordon": f"kubectl uncordon {' '.join(nodes)}",
    }
