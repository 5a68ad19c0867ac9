"""Rendering an `Explanation`: the JSON contract and the readable view in kubectl-style columns
(`render.table`; `wide` adds the filter plugin and every score plugin). Never prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kresched.model.gangs import Gang
from kresched.plan.explain import Explanation
from kresched.render.common import Source, count, pod_requests_text, priority_text
from kresched.render.table import Columns, Command, Hanging

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["explanation_dict", "explanation_table"]


def explanation_dict(e: Explanation) -> dict[str, Any]:
    """`{"pod", "schedulable", "message", "preemptionMessage", "nodes": {name: [reasons]}}`, and for a
    pod that fits or runs `"scores": {node: {plugin: weighted score, ..., "total": n}}` with the
    predicted `"node"`, its tied `"candidates"`, `"likely"` and `"boundTo"`. `"profile"`: the
    scheduler profile simulated; `"warnings"` (when any): what kresched could not simulate of it, and
    `"otherScheduler"` the pod's schedulerName when no profile names it."""
    out: dict[str, Any] = {
        "pod": e.pod.key,
        "profile": e.profile,
        "schedulable": e.schedulable,
        "message": e.message,
        "preemptionMessage": e.preemption_message,
        "nodes": {v.node: list(v.status.reasons) for v in sorted(e.verdicts, key=lambda v: v.node)},
    }
    if e.other_scheduler is not None:
        out["otherScheduler"] = e.other_scheduler
    if e.warnings:
        out["warnings"] = list(e.warnings)
    if e.predicted is not None:
        out["node"] = e.predicted
        out["candidates"] = list(e.candidates)
        out["likely"] = e.likely
        out["scores"] = {s.node: {**{p.plugin: p.weighted for p in s.plugins}, "total": s.total}
                         for s in sorted(e.scores, key=lambda s: s.node)}
    if e.bound_to is not None:
        out["boundTo"] = e.bound_to
    if e.gang is not None:
        out["gang"] = gang_summary(e.gang)
    return out


def gang_summary(g: Gang) -> dict[str, Any]:
    """A gang as `explain` and `plan` name it (docs/reference/json.md, "Gangs")."""
    return {"gang": g.key, "flavor": g.flavor, "minCount": g.min_count, "members": len(g.members),
            "running": len(g.running), "pending": len(g.pending), "disruptionMode": g.disruption_mode,
            "declaredBy": g.declared_by}


def gang_text(g: Gang) -> str:
    """`member of PodGroup ml/train: minCount 4 (PodGroup ... gang.minCount 4), 2 running, 2 pending`."""
    mode = ", disruptionMode PodGroup" if g.disruption_mode == "PodGroup" else ""
    return (f"member of {g.key}: minCount {g.min_count} ({g.declared_by}{mode}); {len(g.members)} members, "
            f"{len(g.running)} running, {len(g.pending)} pending")


_VERDICT_STYLE = {"fits": "green", "unschedulable": "yellow", "unresolvable": "red"}


def _bullets(notes: tuple[str, ...]) -> RenderableType:
    """`• note` lines, indented, wrapped lines aligned under the text."""
    from rich.console import Group

    return Group(*(Hanging(n) for n in notes))


def explanation_table(e: Explanation, top: int = 10, all_nodes: bool = False, wide: bool = False,
                      source: Source | None = None, also: tuple[str, tuple[str, ...]] | None = None) -> RenderableType:
    """The readable explanation; with `source`, the command that comes next (`kresched plan POD`
    when evictions could make room); with `also` (a workload and its other Pending pods), a line
    naming them."""
    from rich.console import Group
    from rich.text import Text

    parts = [_explanation_parts(e, top, all_nodes, wide)]
    if also is not None and also[1]:
        workload, others = also
        parts.append(Hanging(Text(f"{count(len(others), 'more Pending pod')} of {workload}, from the same template: "
                                  f"{', '.join(others)}", style="dim"), first="", rest="  "))
    if source is not None and not e.schedulable and e.bound_to is None \
            and any(v.verdict == "unschedulable" for v in e.verdicts):
        args = f" {source.args}" if source.args else ""
        parts += [Text(""), Hanging(Text("next (what must move for it to fit; its tiers evict what costs least "
                                         "first, so it may pick another node than the nearest: plan --help):",
                                         style="dim"), first="", rest="  "),
                  Command(f"{source.prog} plan {e.pod.key}{args}")]
    return Group(*parts)


def _explanation_parts(e: Explanation, top: int, all_nodes: bool, wide: bool) -> RenderableType:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    pod = e.pod
    parts: list[RenderableType] = [
        Text(pod.key, style="bold"),
        Hanging(f"priority {priority_text(pod)}, requests {pod_requests_text(pod)}", first="  "),
    ]
    if e.gang is not None:
        parts.append(Hanging(gang_text(e.gang), first="  "))
    if e.configured or e.other_scheduler is not None:
        parts.append(Hanging(f"simulated with scheduler profile {e.profile}", first="  "))
    for w in e.warnings:
        parts.append(Hanging(Text(f"warning: {w}", style="yellow"), first="  "))
    if e.schedulable and not e.verdicts:  # bound: nothing to filter
        parts.append(_bullets(e.notes))
        return Group(*parts)
    if e.bound_to is not None:
        parts.append(_bullets(e.notes))
        if e.scores:
            parts.append(_scores_table(e, wide=wide))
        return Group(*parts)
    if e.schedulable:
        fits = e.feasible
        parts.append(Hanging(Text.from_markup(
            f"[green]Schedulable[/]: fits on {len(fits)}/{e.num_nodes} nodes "
            f"({escape(', '.join(fits[:5]))}{', …' if len(fits) > 5 else ''})."), first="", rest="  "))
        parts.append(Text("Why it may still be Pending:"))
        parts.append(_bullets(e.notes))
        if e.scores:
            parts.append(_scores_table(e, wide=wide))
    else:
        parts.append(Text.from_markup("[bold red]Unschedulable.[/] What kube-scheduler writes into PodScheduled:"))
        parts.append(Hanging(Text(e.scheduler_message or "", style="italic"), first="  "))
        if e.notes:
            parts.append(_bullets(e.notes))
    if not e.verdicts:
        return Group(*parts)
    if e.reason_counts:
        counts = Columns("NODES", "REASON", right=("NODES",))
        for reason, n in sorted(e.reason_counts.items(), key=lambda kv: (-kv[1], kv[0])):
            counts.add_row(str(n), reason)
        parts.append(Text(""))
        parts.append(counts)
    shown = list(e.verdicts) if all_nodes else list(e.verdicts[:top])
    parts.append(Text(""))
    parts.append(Text("Every node:" if all_nodes else f"Nearest {len(shown)} of {e.num_nodes} nodes "
                      "(what would make the pod fit under each):", style="bold"))
    # A taint key or a label is only useful whole: reasons wrap as a whole column, never mid-word,
    # and the hints go under their node.
    table = Columns("NODE", "VERDICT", "PLUGIN", "REASONS", wrap_last=True, movable=("PLUGIN",)) if wide \
        else Columns("NODE", "VERDICT", "REASONS", wrap_last=True)
    for v in shown:
        verdict = Text(v.verdict, style=_VERDICT_STYLE[v.verdict])
        reasons = ", ".join(v.status.reasons) or "-"
        hints = [Text(f"→ {h}", style="dim") for h in v.hints]
        if wide:
            table.add_row(v.node, verdict, v.status.plugin or "-", reasons, details=hints)
        else:
            table.add_row(v.node, verdict, reasons, details=hints)
    parts.append(table)
    hidden = len(e.verdicts) - len(shown)
    if hidden > 0:
        parts.append(Text(f"… {hidden} more nodes not shown (--all-nodes lists them).", style="dim"))
    return Group(*parts)


def _scores_table(e: Explanation, top: int = 10, wide: bool = False) -> RenderableType:
    """Per node (best first): the total and, with `wide`, the weighted score of every score plugin
    (raw → normalized)."""
    from rich.console import Group
    from rich.text import Text

    plugins = [p.plugin for p in e.scores[0].plugins] if e.scores else []
    ties = len(e.candidates) - 1
    head = f"The scheduler picks {e.predicted}"
    if ties:
        head += f" (or one of {ties} node(s) tied with it: it takes the first it finds, which can vary)"
    if e.likely:
        head += "; on a cluster this large it scores a sample of the feasible nodes, so this is the likely pick"
    notes: list[RenderableType] = [Text(""), Hanging(head + ".", first="")]
    if not e.scores:
        return Group(*notes)
    if wide:
        table = Columns("NODE", *plugins, "TOTAL", right=(*plugins, "TOTAL"), movable=plugins[::-1])
        for s in e.scores[:top]:
            table.add_row(s.node, *(f"{p.weighted} ({p.raw}→{p.normalized})" for p in s.plugins), _total(e, s))
        notes.append(Text("Weighted score per plugin (raw → normalized 0-100); * = top score.", style="dim"))
    else:
        table = Columns("NODE", "TOTAL", "TOP PLUGINS", right=("TOTAL",), wrap_last=True)
        for s in e.scores[:top]:
            best = sorted(s.plugins, key=lambda p: -p.weighted)[:3]
            table.add_row(s.node, _total(e, s), ", ".join(f"{p.plugin} {p.weighted}" for p in best))
        notes.append(Text("* = top score; -o wide shows every score plugin.", style="dim"))
    notes.append(table)
    if len(e.scores) > top:
        notes.append(Text(f"… {len(e.scores) - top} more scored nodes (-o json lists them).", style="dim"))
    return Group(*notes)


def _total(e: Explanation, s: Any) -> str:
    # The mark goes with the number, not the name: a node name is copied whole.
    return f"{s.total}{'*' if s.node in e.candidates else ' '}"
