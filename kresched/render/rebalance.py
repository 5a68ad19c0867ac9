"""Rendering a rebalance plan (the `-o json` contract and the per-node diff) and its summary. Never prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kresched.plan.rebalance_plans import RESOURCES, RebalancePlan
from kresched.render.common import cluster_text, count, duration_text
from kresched.render.events import dry_suffix
from kresched.render.table import Columns, Hanging

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

    from kresched.execute.rebalance import RebalanceResult

__all__ = ["rebalance_closing", "rebalance_dict", "rebalance_summary", "rebalance_view",
           "summary_view"]


def rebalance_dict(plan: RebalancePlan, result: RebalanceResult | None = None) -> dict[str, Any]:
    """`{"moves": [{"pod", "from", "to", "candidates", "objective", "reason", "pdb", "landedOn"}],
    "before": {node: {"cpu", "memory", "pods"}}, "after": {...}}`, plus `skipped` and `limits`.
    `landedOn` is where the replacement landed after execution; null in a dry run (or not moved)."""
    outcomes = result.outcomes if result is not None else {}
    moves = []
    for m in plan.moves:
        o = outcomes.get(m.pod.key)
        moves.append({"pod": m.pod.key, "from": m.source, "to": m.to, "candidates": list(m.candidates),
                      "objective": m.objective, "reason": m.reason, "pdb": m.pdb,
                      "landedOn": o.landed_on if o is not None and o.status == "moved" else None,
                      **({"status": o.status} if o is not None else {}),
                      **({"likely": True} if m.likely else {})})
    out: dict[str, Any] = {
        "moves": moves,
        "before": plan.before,
        "after": plan.after,
        "skipped": [{"pod": s.pod.key, "node": s.node, "objective": s.objective, "reason": s.reason}
                    for s in plan.skipped],
        "limits": [{"limit": h.limit, "value": h.value, "scope": h.scope} for h in plan.limits],
    }
    if plan.warnings:  # what kresched could not simulate of the scheduler profiles
        out["warnings"] = list(plan.warnings)
    return out


def _cell(before: int, after: int) -> Text:
    from rich.text import Text

    if before == after:
        return Text(f"{before}%")
    return Text.assemble(f"{before}% → ", (f"{after}%", "green" if after < before else "yellow"))


def rebalance_view(plan: RebalancePlan, show_skipped: int = 10) -> RenderableType:
    """kubectl-style columns (`render.table`): names are never broken; reasons go under their row."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    parts: list[RenderableType] = [Text.from_markup(
        f"[bold]Rebalance[/]: {len(plan.moves)} move(s)"
        + (f", {len(plan.skipped)} proposal(s) refused by the simulation" if plan.skipped else ""))]
    parts.extend(Hanging(Text(f"warning: {w}", style="yellow"), first="") for w in plan.warnings)
    heads = ("NODE", *(r.upper() for r in RESOURCES), "MOVES")
    nodes = Columns(*heads, right=heads[1:], movable=("MOVES", *heads[-2:0:-1]))
    out = dict.fromkeys(plan.before, 0)
    into = dict.fromkeys(plan.before, 0)
    for m in plan.moves:
        out[m.source] += 1
        into[m.to] += 1
    for node, b in plan.before.items():
        a = plan.after.get(node, b)
        changes = " ".join(x for x in (f"-{out[node]}" if out[node] else "", f"+{into[node]}" if into[node] else "")
                           if x)
        nodes.add_row(node, *(_cell(b[r], a[r]) for r in RESOURCES), changes or "-")
    parts.append(Text("Requests / allocatable, before → after:"))
    parts.append(nodes)
    if plan.moves:
        t = Columns("POD", "FROM", "TO", "OBJECTIVE", "PDB", movable=("PDB", "OBJECTIVE", "FROM", "TO"))
        for m in plan.moves:
            details = [Text(f"why: {m.reason}", style="dim")]
            if len(m.candidates) > 1:
                details.append(Text(f"tied at the top score: {', '.join(m.candidates)}", style="dim"))
            t.add_row(m.pod.key, m.source, m.to, m.objective, m.pdb or "-", details=details)
        parts.append(Text(""))
        parts.append(Text("Moves:"))
        parts.append(t)
    if plan.skipped and show_skipped:
        t = Columns("POD", "NODE", "OBJECTIVE", movable=("OBJECTIVE", "NODE"))
        for sk in plan.skipped[:show_skipped]:
            t.add_row(sk.pod.key, sk.node, sk.objective, details=[Text(f"why not: {sk.reason}", style="dim")])
        parts.append(Text(""))
        parts.append(Text("Not moved (the simulation says it would not help):"))
        parts.append(t)
        if len(plan.skipped) > show_skipped:
            parts.append(Text(f"... and {len(plan.skipped) - show_skipped} more (-o json lists them all)"))
    for h in plan.limits:
        parts.append(Text.from_markup(f"[yellow]limit reached[/]: --{h.limit} {h.value}"
                                      + (f" ({escape(h.scope)})" if h.scope else "")))
    return Group(*parts)


def rebalance_summary(plan: RebalancePlan, result: RebalanceResult, mode: str = "cluster") -> dict[str, Any]:
    """Per move: the plan's prediction (`planned`, `plannedCandidates`), the one made right before
    its eviction (`predicted`, `candidates`: every node its replacement may land on; `retargeted`
    when it is not the plan's), where it landed, the outcome and the wave that evicted it;
    `endAsPlanned`: whether the round ended in a state the plan predicted; `message` is the
    closing line."""
    moves = []
    for m in plan.moves:
        o = result.outcomes.get(m.pod.key)
        planned = list(m.candidates or (m.to,))
        moves.append({"pod": m.pod.key, "from": m.source, "predicted": o.predicted if o is not None else m.to,
                      "candidates": list(o.candidates) if o is not None and o.candidates else planned,
                      "landedOn": o.landed_on if o is not None else None,
                      "status": o.status if o is not None else "not-started",
                      "asPredicted": o is not None and o.as_predicted,
                      "message": o.message if o is not None else "",
                      "planned": m.to, "plannedCandidates": planned,
                      "retargeted": o is not None and o.retargeted, "wave": o.wave if o is not None else 0})
    counts: dict[str, int] = {}
    for x in moves:
        counts[x["status"]] = counts.get(x["status"], 0) + 1
    end = result.end_as_planned
    return {"moves": moves, "counts": counts, "complete": result.complete, "endAsPlanned": end,
            "seconds": round(result.seconds, 3), "message": rebalance_closing(moves, counts, result, mode, end)}


def rebalance_closing(moves: list[dict[str, Any]], counts: dict[str, int], result: RebalanceResult, mode: str,
                      end: bool = False) -> str:
    """`5 pods moved in 2m03s: 4 as predicted (1 retargeted), 1 elsewhere; the round did not end as
    planned`, with what did not move."""
    moved = counts.get("moved", 0) + counts.get("simulated", 0)
    as_predicted = sum(1 for m in moves if m["asPredicted"] and m["status"] in ("moved", "simulated"))
    retargeted = sum(1 for m in moves if m["retargeted"])
    parts = []
    if moved and mode == "cluster":
        parts.append(f"{as_predicted} as predicted" + (f" ({retargeted} retargeted)" if retargeted else ""))
        if moved - as_predicted:
            parts.append(f"{moved - as_predicted} elsewhere")
    parts += [f"{n} {status.replace('-', ' ')}" for status, n in counts.items() if status not in ("moved", "simulated")]
    head = f"{count(moved, 'pod')} moved" + ("" if mode != "cluster" else f" in {duration_text(result.seconds)}")
    if result.interrupted:
        head += " (interrupted)"
    tail = ""
    if moved and mode == "cluster":
        tail = "; the round ended as planned" if end else "; the round did not end as planned"
    return head + (f": {', '.join(parts)}" if parts else "") + tail + dry_suffix(mode)


def summary_view(data: dict[str, Any]) -> RenderableType:
    """Predicted against actual, move by move (problems under their row), then the closing line."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    t = Columns("POD", "FROM", "PREDICTED", "LANDED ON", "STATUS", movable=("FROM", "PREDICTED", "LANDED ON"))
    for m in data["moves"]:
        landed = m["landedOn"] or "-"
        style = "green" if m["asPredicted"] else ("yellow" if m["landedOn"] else "red")
        if m["status"] in ("simulated", "dropped"):
            style = "dim"
        details = [Text(m["message"], style="dim")] if m["message"] else []
        t.add_row(m["pod"], m["from"], ",".join(m["candidates"]), Text(landed, style=style), m["status"],
                  details=details)
    lines: list[RenderableType] = [Text("Predicted against actual:"), t]
    if data.get("cluster"):
        lines.append(Text.from_markup(f"[dim]cluster:[/] {escape(cluster_text(data['cluster']) or '')}"))
    lines.append(Text(data["message"], style="bold" if data["complete"] else "bold yellow"))
    return Group(*lines)
