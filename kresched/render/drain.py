"""Rendering a drain pre-flight (JSON contract and table) and a drain's summary. Never prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kresched.plan.drain import DrainPlan, DrainPod, NodeDrain
from kresched.render.table import Columns, Hanging

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

    from kresched.execute.drain import DrainResult

__all__ = ["node_drain_dict", "preflight_dict", "preflight_view", "drain_summary"]


def node_drain_dict(n: NodeDrain) -> dict[str, Any]:
    """`{"node", "evict": [{"pod", "pdb", "blocked", "landsOn"}], "skip": [...], "errors": [...]}`;
    an evicted pod of a scheduler no profile names adds `"otherScheduler"` (its landing is not
    simulated)."""
    return {
        "node": n.node,
        "evict": [_evict_dict(p) for p in n.evict],
        "skip": [{"pod": s.pod.key, "reason": s.reason} for s in n.skip],
        "errors": [{"pod": e.pod.key, "reason": e.reason} for e in n.errors],
    }


def _evict_dict(p: DrainPod) -> dict[str, Any]:
    out = {"pod": p.pod.key, "pdb": p.pdb, "blocked": p.blocked, "landsOn": p.lands_on,
           "candidates": list(p.candidates), "likely": p.likely}
    if p.other_scheduler is not None:
        out["otherScheduler"] = p.other_scheduler
    return out


def preflight_dict(plan: DrainPlan) -> dict[str, Any]:
    """One node's object, or `{"nodes": [...]}` for several; `"warnings"` (when any): what kresched
    could not simulate of the scheduler profiles that place the replacements."""
    if len(plan.nodes) == 1:
        out = node_drain_dict(plan.nodes[0])
    else:
        out = {"nodes": [node_drain_dict(n) for n in plan.nodes]}
    if plan.warnings:
        out["warnings"] = list(plan.warnings)
    return out


def preflight_view(plan: DrainPlan, wide: bool = False) -> RenderableType:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    parts: list[RenderableType] = [Hanging(Text(f"warning: {w}", style="yellow"), first="") for w in plan.warnings]
    for n in plan.nodes:
        parts.append(Text.from_markup(
            f"[bold]Drain {escape(n.node)}[/]: {len(n.evict)} pod(s) to evict, {len(n.skip)} skipped, "
            f"{len(n.errors)} refused"))
        if n.evict:
            t = Columns("POD", "PDB", "EVICTION", "LANDS ON", "CONTROLLER") if wide \
                else Columns("POD", "PDB", "EVICTION", "LANDS ON")
            for p in n.evict:
                details: list[Text] = []
                if p.blocked:
                    now = Text("blocked", style="red")
                    details.append(Text(f"✗ {p.blocked}", style="red"))
                elif p.queued_behind:
                    now = Text("queued")
                    details.append(Text(f"after {p.queued_behind} of its PDB (as their replacements are Ready)",
                                        style="dim"))
                else:
                    now = Text("allowed", style="green")
                if p.lands_on:
                    lands = Text(p.lands_on)
                elif p.pod.is_finished:
                    lands = Text("- (finished)", style="dim")
                elif p.pod.is_bare:
                    lands = Text("gone for good", style="red")
                    details.append(Text("! a bare pod: no controller recreates it", style="red"))
                elif p.pod.is_terminating:
                    lands = Text("- (terminating)", style="dim")
                elif p.other_scheduler is not None:
                    lands = Text("- (another scheduler)", style="dim")
                    details.append(Text(f"! {p.pending_reason or ''}", style="dim"))
                else:
                    lands = Text("stays Pending", style="yellow")
                    details.append(Text(f"! {p.pending_reason or ''}", style="yellow"))
                if p.warning:
                    details.append(Text(f"! {p.warning}", style="yellow"))
                if p.held_by:
                    details.append(Text(f"! held by volume: {p.held_by}", style="yellow"))
                cells = [p.pod.key, p.pdb or "-", now, lands]
                if wide:
                    cells.append(p.pod.controller_ref or "none (bare)")
                t.add_row(*cells, details=details)
            parts.append(t)
        for s in n.skip:
            parts.append(Hanging(Text(f"skip {s.pod.key}: {s.reason}", style="dim"), first="  "))
    for n in plan.nodes:
        errors = n.kubectl_errors()
        if errors:
            parts.append(Text(""))
            parts.append(Text(f"kubectl would refuse to drain {n.node}:", style="bold red"))
            parts.extend(Hanging(Text(e, style="red"), first="  ") for e in errors)
    pending = plan.pending
    if pending:
        parts.append(Text(""))
        parts.append(Text(f"{len(pending)} pod(s) would stay Pending (--allow-pending to drain anyway):",
                          style="bold yellow"))
        parts.extend(Hanging(Text(f"{p.pod.key}: {p.held_by + '; ' if p.held_by else ''}{p.pending_reason}",
                                  style="yellow"), first="  ")
                     for p in pending)
    if plan.blocked:
        parts.append(Hanging(Text(f"{len(plan.blocked)} eviction(s) would be refused by PodDisruptionBudgets and "
                                  "nothing the drain does gives the budget back; it would retry them until --timeout.",
                                  style="yellow"), first=""))
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
