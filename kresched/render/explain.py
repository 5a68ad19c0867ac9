"""Rendering an `Explanation`: the JSON contract and the readable table. Never prints."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from kresched.plan.explain import Explanation
from kresched.render.common import pod_requests_text, priority_text

__all__ = ["explanation_dict", "explanation_table"]


def explanation_dict(e: Explanation) -> dict[str, Any]:
    """`{"pod", "schedulable", "message", "preemptionMessage", "nodes": {name: [reasons]}}`, and for a
    pod that fits or runs `"scores": {node: {plugin: weighted score, ..., "total": n}}` with the
    predicted `"node"`, its tied `"candidates"`, `"likely"` and `"boundTo"`."""
    out: dict[str, Any] = {
        "pod": e.pod.key,
        "schedulable": e.schedulable,
        "message": e.message,
        "preemptionMessage": e.preemption_message,
        "nodes": {v.node: list(v.status.reasons) for v in sorted(e.verdicts, key=lambda v: v.node)},
    }
    if e.predicted is not None:
        out["node"] = e.predicted
        out["candidates"] = list(e.candidates)
        out["likely"] = e.likely
        out["scores"] = {s.node: {**{p.plugin: p.weighted for p in s.plugins}, "total": s.total}
                         for s in sorted(e.scores, key=lambda s: s.node)}
    if e.bound_to is not None:
        out["boundTo"] = e.bound_to
    return out


_VERDICT_STYLE = {"fits": "green", "unschedulable": "yellow", "unresolvable": "red"}


def _bullets(notes: tuple[str, ...]) -> RenderableType:
    """`• note` lines, indented, wrapped lines aligned under the text."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for n in notes:
        grid.add_row("•", Text(n))
    return Padding(grid, (0, 0, 0, 2), expand=False)


def explanation_table(e: Explanation, top: int = 10, all_nodes: bool = False) -> RenderableType:
    pod = e.pod
    parts: list[RenderableType] = [
        Text.from_markup(f"[bold]{escape(pod.key)}[/]  priority {escape(priority_text(pod))}"),
        Padding(Text(f"requests {pod_requests_text(pod)}"), (0, 0, 0, 2), expand=False),
    ]
    if e.schedulable and not e.verdicts:  # bound: nothing to filter
        parts.append(_bullets(e.notes))
        return Group(*parts)
    if e.bound_to is not None:
        parts.append(_bullets(e.notes))
        if e.scores:
            parts.append(_scores_table(e))
        return Group(*parts)
    if e.schedulable:
        fits = e.feasible
        parts.append(Text.from_markup(
            f"[green]Schedulable[/]: fits on {len(fits)}/{e.num_nodes} nodes "
            f"({escape(', '.join(fits[:5]))}{', …' if len(fits) > 5 else ''})."))
        parts.append(Text("Why it may still be Pending:"))
        parts.append(_bullets(e.notes))
        if e.scores:
            parts.append(_scores_table(e))
    else:
        parts.append(Text.from_markup("[bold red]Unschedulable.[/] What kube-scheduler writes into PodScheduled:"))
        parts.append(Padding(Text(e.scheduler_message or "", style="italic"), (0, 0, 0, 2), expand=False))
        if e.notes:
            parts.append(_bullets(e.notes))
    if not e.verdicts:
        return Group(*parts)
    if e.reason_counts:
        counts = Table(show_header=True, header_style="bold", box=None, padding=(0, 1))
        counts.add_column("NODES", justify="right")
        counts.add_column("REASON")
        for reason, n in sorted(e.reason_counts.items(), key=lambda kv: (-kv[1], kv[0])):
            counts.add_row(str(n), Text(reason))
        parts.append(Text(""))
        parts.append(counts)
    shown = list(e.verdicts) if all_nodes else list(e.verdicts[:top])
    table = Table(title=None if all_nodes else f"Nearest {len(shown)} of {e.num_nodes} nodes",
                  title_justify="left", header_style="bold", expand=False)
    table.add_column("NODE", no_wrap=True)
    table.add_column("VERDICT")
    table.add_column("PLUGIN")
    # Fold rather than cut: a taint key or a label is only useful whole.
    table.add_column("REASONS", overflow="fold")
    table.add_column("WHAT WOULD MAKE IT FIT", overflow="fold")
    for v in shown:
        style = _VERDICT_STYLE[v.verdict]
        table.add_row(v.node, f"[{style}]{v.verdict}[/]", v.status.plugin or "-",
                      Text(", ".join(v.status.reasons) or "-"), Text("\n".join(v.hints) or "-"))
    parts.append(Text(""))
    parts.append(table)
    hidden = len(e.verdicts) - len(shown)
    if hidden > 0:
        parts.append(Text(f"… {hidden} more nodes not shown (--all-nodes lists them).", style="dim"))
    return Group(*parts)


def _scores_table(e: Explanation, top: int = 10) -> RenderableType:
    """Per node (best first) and score plugin: weighted score (raw → normalized), and the total."""
    plugins = [p.plugin for p in e.scores[0].plugins] if e.scores else []
    ties = len(e.candidates) - 1
    head = f"The scheduler picks {e.predicted}"
    if ties:
        head += f" (or one of {ties} node(s) tied with it: it takes the first it finds, which can vary)"
    if e.likely:
        head += "; on a cluster this large it scores a sample of the feasible nodes, so this is the likely pick"
    table = Table(header_style="bold", box=None, padding=(0, 1))
    table.add_column("NODE", no_wrap=True)
    for name in plugins:
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("TOTAL", justify="right", no_wrap=True)
    for s in e.scores[:top]:
        mark = "*" if s.node in e.candidates else " "
        cells = [f"{p.weighted} ({p.raw}→{p.normalized})" for p in s.plugins]
        table.add_row(f"{mark}{s.node}", *cells, str(s.total))
    notes = [Text(""), Text(head + ".")]
    if not e.scores:
        return Group(*notes)
    notes.append(Text("Weighted score per plugin (raw → normalized 0-100); * = top score.", style="dim"))
    notes.append(table)
    if len(e.scores) > top:
        notes.append(Text(f"… {len(e.scores) - top} more scored nodes (-o json lists them).", style="dim"))
    return Group(*notes)
