"""Rendering the results of `preempt` and of a `reconcile` pass: the summary line's data (a
stable JSON shape for log pipelines) and the readable summary. Never prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kresched.execute.preempt import PreemptResult
from kresched.execute.reconcile import ReconcileResult
from kresched.render.table import markup_lines

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["preempt_summary", "pass_summary", "pass_summary_text"]


def preempt_summary(r: PreemptResult, mode: str) -> dict[str, Any]:
    return {
        "pod": r.pod,
        "outcome": r.outcome,
        "node": r.node,
        "plannedNode": r.plan.node,
        "evicted": r.evicted,
        "alreadyGone": r.already_gone,
        "pdbBlocked": [{"pod": p, "pdb": b} for p, b in r.pdb_blocked],
        "failed": [{"pod": p, "reason": why} for p, why in r.failed],
        "reservationRemoved": r.released or not r.reserved,
        "seconds": round(r.seconds, 1),
        "mode": mode,
    }


def pass_summary(r: ReconcileResult, mode: str, error: str | None) -> dict[str, Any]:
    if r.locked:
        lock = "acquired"
    elif r.lock_holder is not None:
        lock = f"held by {r.lock_holder}"
    else:
        lock = "not acquired"
    return {
        "lock": lock,
        "podsHelped": len(r.helped),
        "bound": [{"pod": p, "node": n} for p, n in r.bound],
        "stillPending": [{"pod": p, "reason": why} for p, why in r.still_pending],
        "evictions": r.evictions,
        "reservationsCleaned": len(r.cleaned),
        "failedActions": r.failed_actions,
        "error": error,
        "seconds": round(r.seconds, 1),
        "mode": mode,
        **({"moves": [{"pod": p, "from": f, "to": t, "landedOn": landed, "status": st}
                      for p, f, t, landed, st in r.moves]} if r.moves else {}),
        **({"rebalance": r.rebalance_skipped} if r.rebalance_skipped else {}),
    }


def pass_summary_text(r: ReconcileResult, mode: str, error: str | None) -> RenderableType:
    """For people: one headline, then what was bound, what is still Pending and why, what failed."""
    from rich.markup import escape
    from rich.text import Text

    prefix = f"[dim]({escape(mode)})[/] " if mode != "cluster" else ""
    if not r.locked and r.lock_holder is not None:
        return Text.from_markup(f"{prefix}[bold]Nothing done[/]: another pass holds the Lease "
                                f"({escape(r.lock_holder)}).")
    head = (f"{prefix}[bold]Pass {'stopped' if error else 'done'}[/] in {r.seconds:.1f}s: {len(r.helped)} pod(s) "
            f"helped, {r.evictions} eviction(s), {len(r.cleaned)} stale reservation(s) removed.")
    lines = ["[bold]Dry run[/]: nothing was changed.", head] if mode != "cluster" else [head]
    lines += [f"  [green]✓[/] {escape(p)} is bound to {escape(n)}" for p, n in r.bound]
    for p, f, t, landed, st in r.moves:
        mark = "[green]✓[/]" if st == "moved" and landed == t else \
            "[dim]·[/]" if st == "simulated" else "[yellow]![/]"
        lines.append(f"  {mark} moved {escape(p)}: {escape(f)} → {escape(landed or '-')} (predicted {escape(t)}, "
                     f"{escape(st)})")
    if r.rebalance_skipped:
        lines.append(f"  [yellow]![/] rebalance {escape(r.rebalance_skipped)}")
    if r.still_pending:
        lines.append("[bold]Still pending[/]:")
        lines += [f"  [yellow]![/] {escape(p)}: {escape(why)}" for p, why in r.still_pending]
    if r.failed_actions:
        lines.append("[bold]Failed[/]:")
        lines += [f"  [red]✗[/] {escape(f)}" for f in r.failed_actions]
    return markup_lines(lines)
