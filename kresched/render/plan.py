"""Rendering plans: the JSON/YAML contract and the readable plan with its before/after diff.
Never prints."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.explain import format_amount
from kresched.plan.planner import Plan, Victim
from kresched.render.common import bar, pod_requests_text, priority_text

__all__ = ["plan_dict", "plans_dict", "plan_view", "plans_view"]


def victim_dict(v: Victim) -> dict[str, Any]:
    return {
        "pod": v.pod.key,
        "node": v.node,
        "priority": v.pod.priority,
        "qos": v.pod.qos,
        "pdb": v.pdb.pdb,
        "pdbViolation": v.pdb.violation,
        "gracePeriodSeconds": v.grace_seconds,
        "evictionGracePeriodSeconds": v.eviction_grace_seconds,
        "controller": v.pod.controller_ref,
        "landsOn": v.lands_on,
        "candidates": list(v.candidates),
        "likely": v.likely,
    }


def plan_dict(p: Plan) -> dict[str, Any]:
    """The design's contract: `pod, priority, outcome, node, tier, taint, victims, message`."""
    return {
        "pod": p.pod.key,
        "priority": p.priority,
        "outcome": p.outcome,
        "node": p.node,
        "tier": p.tier,
        "taint": p.taint,
        "victims": [victim_dict(v) for v in p.victims],
        "candidates": list(p.candidates),
        "likely": p.likely,
        "message": p.message,
    }


def plans_dict(plans: list[Plan]) -> dict[str, Any]:
    return {"plans": [plan_dict(p) for p in plans]}


_OUTCOME_STYLE = {"fits": "green", "evict": "yellow", "infeasible": "red"}


def plan_view(p: Plan, state: ClusterState, runners_up: int = 5) -> RenderableType:
    parts: list[RenderableType] = [
        Text.from_markup(f"[bold]{escape(p.pod.key)}[/]  priority {escape(priority_text(p.pod))}  ·  "
                         f"requests {escape(pod_requests_text(p.pod))}"),
    ]
    style = _OUTCOME_STYLE[p.outcome]
    head = f"[{style} bold]{p.outcome.upper()}[/]"
    if p.node:
        head += f" on [bold]{escape(p.node)}[/]"
    if p.tier:
        head += f" · tier {p.tier}"
    if p.outcome == "evict":
        head += " · reservation taint: " + ("yes" if p.taint else "[yellow]no[/] (the pod does not tolerate "
                                                                   "CriticalAddonsOnly)")
    parts.append(Text.from_markup(head))
    parts.append(Text(p.message, style="red" if p.blocked else ""))
    if p.decided_by:
        parts.append(Text.from_markup(f"Why {escape(p.node or '')}: {escape(p.decided_by)}"))
    parts.extend(Text(f"Note: {n}", style="dim") for n in p.notes)
    if p.outcome == "evict" and p.node:
        parts.append(Text(""))
        parts.append(_diff(p, state))
        parts.append(Text(""))
        parts.append(_victims_table(p))
    if p.runners_up:
        parts.append(Text(""))
        parts.append(_runners_table(p, runners_up))
    return Group(*parts)


def plans_view(plans: list[Plan], state: ClusterState) -> RenderableType:
    if not plans:
        return Text("No pending pods to plan for.")
    parts: list[RenderableType] = []
    summary = Table(title=f"{len(plans)} pending pod(s), planned in priority order", title_justify="left",
                    header_style="bold")
    for col in ("POD", "PRIORITY", "OUTCOME", "NODE", "TIER", "VICTIMS"):
        summary.add_column(col, overflow="fold")
    for p in plans:
        summary.add_row(escape(p.pod.key), str(p.priority), f"[{_OUTCOME_STYLE[p.outcome]}]{p.outcome}[/]",
                        escape(p.node or "-"), str(p.tier or "-"), str(len(p.victims)))
    parts.append(summary)
    for p in plans:
        parts.append(Text(""))
        parts.append(Text("─" * 60, style="dim"))
        parts.append(plan_view(p, state, runners_up=3))
    return Group(*parts)


def _usage(pods: list[Pod]) -> tuple[int, int]:
    live = [q for q in pods if q.status.phase not in ("Succeeded", "Failed")]
    return sum(q.requests.milli_cpu for q in live), sum(q.requests.memory for q in live)


def _diff(p: Plan, state: ClusterState) -> RenderableType:
    node = state.node_by_name[p.node or ""]
    alloc = node.allocatable
    before = list(p.node_pods_before)
    gone = {v.pod.key for v in p.victims}
    after = [q for q in before if q.key not in gone] + [p.pod]
    cpu_b, mem_b = _usage(before)
    cpu_a, mem_a = _usage(after)
    t = Table(title=f"{p.node}: before → after", title_justify="left", box=None, show_header=False,
              padding=(0, 1))
    t.add_column()
    t.add_column()
    t.add_column()
    t.add_column()
    t.add_row("CPU", bar(cpu_b, alloc.milli_cpu), "→", bar(cpu_a, alloc.milli_cpu) +
              f"  ({format_amount('cpu', cpu_a)}/{format_amount('cpu', alloc.milli_cpu)})")
    t.add_row("Memory", bar(mem_b, alloc.memory), "→", bar(mem_a, alloc.memory) +
              f"  ({format_amount('memory', mem_a)}/{format_amount('memory', alloc.memory)})")
    lines = [Text.from_markup(f"  [red]- {escape(v.pod.key)}[/]  [dim]{escape(pod_requests_text(v.pod))}[/]")
             for v in p.victims]
    lines.append(Text.from_markup(f"  [green]+ {escape(p.pod.key)}[/]  [dim]{escape(pod_requests_text(p.pod))}[/]"))
    return Group(t, *lines)


def _victims_table(p: Plan) -> Table:
    t = Table(title="Victims (most important first)", title_justify="left", header_style="bold")
    for col in ("POD", "PRIORITY", "QOS", "PDB (BUDGET LEFT)", "GRACE", "CONTROLLER", "LANDS ON", "NOTES"):
        t.add_column(col, overflow="fold")
    for v in p.victims:
        pdb = "-" if v.pdb.pdb is None else f"{v.pdb.pdb} ({v.pdb.remaining})"
        pdb_style = "red" if v.pdb.violation else ""
        grace = f"{v.grace_seconds}s" + (f" → {v.eviction_grace_seconds}s" if v.grace_shortened else "")
        lands = v.lands_on or ("[red]gone[/]" if v.is_bare else "[yellow]stays Pending[/]")
        if v.lands_on and len(v.candidates) > 1:
            lands += f" (or {len(v.candidates) - 1} tied)"
        t.add_row(escape(v.pod.key), str(v.pod.priority), v.pod.qos, f"[{pdb_style}]{escape(pdb)}[/]"
                  if pdb_style else escape(pdb), grace, escape(v.pod.controller_ref or "none (bare)"),
                  lands if v.lands_on is None else escape(lands), escape("; ".join(v.flags) or "-"))
    return t


def _runners_table(p: Plan, limit: int) -> Table:
    title = "Runner-up nodes" if p.outcome == "evict" else "Why no node works"
    t = Table(title=title, title_justify="left", header_style="bold")
    t.add_column("NODE")
    t.add_column("VICTIMS")
    t.add_column("WHY NOT CHOSEN")
    for r in p.runners_up[:limit]:
        t.add_row(escape(r.node), str(r.victims) if r.tier is not None else "-", escape(r.reason))
    hidden = len(p.runners_up) - limit
    if hidden > 0:
        t.caption = f"… and {hidden} more"
    return t
