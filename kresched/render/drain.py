"""Rendering a drain pre-flight (JSON contract and table) and a drain's summary. Never prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kresched.plan.drain import DrainPlan, DrainPod, GangStop, NodeDrain
from kresched.render.common import cluster_text, count, duration_text
from kresched.render.events import dry_suffix, summary_view
from kresched.render.table import Columns, Hanging

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

    from kresched.execute.drain import DrainResult

__all__ = ["gang_stop_text", "gangs_stopped_dicts", "node_drain_dict", "preflight_dict", "preflight_view",
           "drain_closing", "drain_summary", "drain_view"]


def node_drain_dict(n: NodeDrain) -> dict[str, Any]:
    """`{"node", "evict": [{"pod", "pdb", "blocked", "landsOn"}], "skip": [...], "errors": [...]}`;
    an evicted pod of a scheduler no profile names adds `"otherScheduler"` (its landing is not
    simulated)."""
    return {
        "node": n.node,
        "evict": [_evict_dict(p) for p in n.evict],
        "skip": [{"pod": s.pod.key, "reason": s.reason} for s in n.skip],
        "errors": [{"pod": e.pod.key, "reason": e.reason, **({"also": list(e.also)} if e.also else {})}
                   for e in n.errors],
    }


def _evict_dict(p: DrainPod) -> dict[str, Any]:
    out = {"pod": p.pod.key, "pdb": p.pdb, "blocked": p.blocked, "landsOn": p.lands_on,
           "candidates": list(p.candidates), "likely": p.likely}
    if p.other_scheduler is not None:
        out["otherScheduler"] = p.other_scheduler
    if p.gang is not None:
        out["gang"] = p.gang
        out["stopsGang"] = p.stops_gang
    return out


def gangs_stopped_dicts(plan: DrainPlan) -> list[dict[str, Any]]:
    """`[{"gang", "running", "minCount", "evicted"}]`: the running gangs the drain stops."""
    return [{"gang": g.gang, "running": g.running, "minCount": g.min_count, "evicted": list(g.evicted)}
            for g in plan.stopped_gangs]


def gang_stop_text(g: GangStop) -> str:
    """`PodGroup ml/train: evicting ml/a, ml/b leaves it below its minCount 4, so all 4 running
    members stop (a gang runs all or nothing)`."""
    return (f"{g.gang}: evicting {', '.join(g.evicted)} leaves it below its minCount {g.min_count}, so all "
            f"{g.running} running members stop (a gang runs all or nothing)")


def preflight_dict(plan: DrainPlan) -> dict[str, Any]:
    """One node's object, or `{"nodes": [...]}` for several; `"warnings"` (when any): what kresched
    could not simulate of the scheduler profiles that place the replacements."""
    if len(plan.nodes) == 1:
        out = node_drain_dict(plan.nodes[0])
    else:
        out = {"nodes": [node_drain_dict(n) for n in plan.nodes]}
    if plan.errors:
        out["flags"] = plan.flags()
    if plan.warnings:
        out["warnings"] = list(plan.warnings)
    if plan.stopped_gangs:
        out["gangsStopped"] = gangs_stopped_dicts(plan)
    return out


def preflight_view(plan: DrainPlan, wide: bool = False) -> RenderableType:
    """Per node: a headline of what is not empty, a row per pod to evict with every fact about it
    said once under it (why it waits, why it would stay Pending, what holds it), the skipped pods
    grouped by kubectl's reason, and kubectl's refusals. The verdict (whether the drain would
    finish) is the caller's: `--dry-run` says it on stderr, a real drain acts on it."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    parts: list[RenderableType] = [Hanging(Text(f"warning: {w}", style="yellow"), first="") for w in plan.warnings]
    for n in plan.nodes:
        counts = [count(len(n.evict), "pod") + " to evict"] if n.evict else ["nothing to evict"]
        if n.skip:
            counts.append(f"{len(n.skip)} skipped")
        if n.errors:
            counts.append(f"{len(n.errors)} refused by kubectl's rules")
        parts.append(Hanging(Text.from_markup(f"[bold]Drain {escape(n.node)}[/]: {escape(', '.join(counts))}"),
                             first="", rest="  "))
        if n.evict:
            t = Columns("POD", "PDB", "EVICTION", "LANDS ON", "CONTROLLER",
                        movable=("CONTROLLER", "PDB", "LANDS ON")) if wide \
                else Columns("POD", "PDB", "EVICTION", "LANDS ON", movable=("PDB", "LANDS ON"))
            for p in n.evict:
                cells = [p.pod.key, p.pdb or "-", *_cells(p)]
                if wide:
                    cells.append(p.pod.controller_ref or "none (bare)")
                t.add_row(*cells, details=_details(p))
            parts.append(t)
        by_reason: dict[str, list[str]] = {}
        for sk in n.skip:
            by_reason.setdefault(sk.reason, []).append(sk.pod.key)
        parts.extend(Hanging(Text(f"{reason}: {', '.join(pods)}", style="dim"), first="  ", rest="    ")
                     for reason, pods in by_reason.items())
        errors = n.blockers()
        if errors:
            parts.append(Text(""))
            parts.append(Text(f"kubectl would refuse to drain {n.node} (every refusal, not only the first):",
                              style="bold red"))
            parts.extend(Hanging(Text(e, style="red"), first="  ", rest="    ") for e in errors)
            for e in n.errors:
                then = e.then
                if then is None:
                    continue
                if then.lands_on:
                    what = f"would land on {then.lands_on}"
                elif e.pod.is_bare:
                    what = "would be gone for good (no controller recreates it)"
                else:
                    what = f"would stay Pending: {then.pending_reason or 'no node would take it'}"
                parts.append(Hanging(Text(f"once evicted, {e.pod.key} {what}", style="yellow"), first="  ",
                                     rest="    "))
    for g in plan.stopped_gangs:
        parts.append(Hanging(Text(f"Stops {gang_stop_text(g)}", style="bold red"), first="", rest="  "))
    flags = plan.flags()
    if flags:
        parts.append(Hanging(Text(f"the flags that lift every refusal: {' '.join(flags)}", style="bold"), first="",
                             rest="  "))
    return Group(*parts)


def _cells(p: DrainPod) -> list[Text]:
    from rich.text import Text

    if p.blocked:
        now = Text("blocked", style="red")
    elif p.queued_behind:
        now = Text("queued")
    else:
        now = Text("allowed", style="green")
    if p.lands_on:
        lands = Text(p.lands_on)
    elif p.pod.is_bare and not p.pod.is_finished:
        lands = Text("gone", style="red")
    elif p.pod.is_finished or p.pod.is_terminating:
        lands = Text("-", style="dim")
    elif p.other_scheduler is not None:
        lands = Text("-", style="dim")  # placed by another scheduler: not simulated (`_details` says so)
    else:
        lands = Text("Pending", style="yellow")
    return [now, lands]


def _details(p: DrainPod) -> list[Text]:
    """What to know about one pod, each fact once: why its eviction waits, why its replacement
    would stay Pending (or what holds it), what is lost."""
    from rich.text import Text

    out: list[Text] = []
    if p.blocked:
        out.append(Text(f"✗ {p.blocked}", style="red"))
    elif p.queued_behind:
        out.append(Text(f"after {p.queued_behind} of its PDB (as their replacements are Ready)", style="dim"))
    if p.lands_on:
        pass  # where: the LANDS ON column
    elif p.pod.is_finished:
        out.append(Text("finished: nothing to replace", style="dim"))
    elif p.pod.is_bare:
        out.append(Text("! a bare pod: no controller recreates it", style="red"))
    elif p.pod.is_terminating:
        out.append(Text("already terminating: its replacement exists", style="dim"))
    elif p.other_scheduler is not None:
        out.append(Text(f"! {p.pending_reason or ''}", style="dim"))
    else:
        out.append(Text(f"! {p.pending_reason or 'no node would take it'}", style="yellow"))
    if p.stops_gang:
        out.append(Text(f"! stops its gang {p.gang} (below its minCount)", style="red"))
    if p.held_by:
        out.append(Text(f"! held by volume: {p.held_by}", style="yellow"))
    if p.warning:
        out.append(Text(f"! {p.warning}", style="yellow"))
    return out


def drain_summary(result: DrainResult, nodes: list[str], mode: str = "cluster",
                  cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `summary` document of a drain; `message` is its closing line."""
    return {
        "cordoned": result.cordoned,
        "evicted": result.evicted,
        "gone": result.gone,
        "alreadyGone": result.already_gone,
        "blocked": [{"pod": k, "reason": v} for k, v in sorted(result.blocked.items())],
        "failed": [{"pod": k, "reason": v} for k, v in sorted(result.failed.items())],
        "notStarted": result.not_started,
        "stillTerminating": sorted(result.terminating),
        "complete": result.complete,
        "seconds": round(result.seconds, 1),
        "uncordon": f"kubectl uncordon {' '.join(nodes)}",
        "mode": mode,
        "cluster": cluster,
        "message": drain_closing(result, nodes, mode),
    }


def drain_closing(result: DrainResult, nodes: list[str], mode: str) -> str:
    """kubectl's `node/worker-b1 drained`, with how long and how many; or why not."""
    names = ", ".join(f"node/{n}" for n in nodes)
    took = duration_text(result.seconds)
    evicted = len(result.evicted)
    if result.complete:
        what = f"{count(evicted, 'pod')} evicted" if evicted else "nothing to evict"
        return f"{names} drained in {took}: {what}{dry_suffix(mode)}"
    problems = [f"{len(pods)} {label}" for pods, label in (
        (result.blocked, "refused by a PodDisruptionBudget"), (result.failed, "failed"),
        (result.not_started, "not started"), (result.terminating, "still terminating")) if pods]
    how = "interrupted" if result.interrupted else f"after {took}"
    return (f"{names} not drained ({how}): {count(evicted, 'pod')} evicted"
            + (f", {', '.join(problems)}" if problems else "") + dry_suffix(mode))


def drain_view(data: dict[str, Any]) -> RenderableType:
    """The summary for people: what needs a look, then the closing line. What went as planned
    (cordoned, evicted, gone) was said as it happened and is in the closing line's counts."""
    categories = [
        ("cluster", cluster_text(data["cluster"])),
        ("already gone", data["alreadyGone"]),
        ("refused by a PodDisruptionBudget", [f"{b['pod']}: {b['reason']}" for b in data["blocked"]]),
        ("failed", [f"{f['pod']}: {f['reason']}" for f in data["failed"]]),
        ("not started", data["notStarted"]),
        ("still terminating", data["stillTerminating"]),
    ]
    return summary_view(categories, data["message"], "bold" if data["complete"] else "bold yellow")
