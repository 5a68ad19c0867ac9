"""Rendering an `Explanation`: the JSON contract and the readable view in kubectl-style columns
(`render.table`; `wide` adds the filter plugin and every score plugin). Never prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kresched.model.gangs import Gang
from kresched.plan.devices import DeviceHint, missing_text
from kresched.plan.explain import Explanation
from kresched.plan.gang_breaks import SchedulerPreemption
from kresched.plan.pod_group import GroupVerdict
from kresched.render.common import Source, claims_text, count, priority_text, requests_text
from kresched.render.plan import condition_dict
from kresched.render.table import Columns, Command, Hanging

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["explanation_dict", "explanation_table"]


def explanation_dict(e: Explanation) -> dict[str, Any]:
    """`{"pod", "schedulable", "message", "preemptionMessage", "nodes": {name: [reasons]}}`, and for a
    pod that fits or runs `"scores": {node: {plugin: weighted score, ..., "total": n}}` with the
    predicted `"node"`, its tied `"candidates"`, `"likely"` and `"boundTo"`. `"profile"`: the
    scheduler profile simulated; `"warnings"` (when any): what kresched could not simulate of it, and
    `"otherScheduler"` the pod's schedulerName when no profile names it. `"devices"`: per node
    DynamicResources rejected, its facts (which request, why, who holds the devices);
    `"deviceFreeing"`: the nodes where kresched's own device freeing makes room (`plan` evicts);
    `"missingKinds"`: the DRA kinds its answer depends on that the state lacks (with `message`
    null and `schedulable` false: it cannot be known)."""
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
    devices = {v.node: [device_hint_dict(h) for h in v.devices] for v in sorted(e.verdicts, key=lambda v: v.node)
               if v.devices}
    if devices:
        out["devices"] = devices
    if e.device_freeing:
        out["deviceFreeing"] = list(e.device_freeing)
    if e.missing_kinds:
        out["missingKinds"] = list(e.missing_kinds)
    if e.gang is not None:
        out["gang"] = gang_summary(e.gang)
    if e.group is not None:
        out["schedulerMessage"] = e.scheduler_message
        out["podGroup"] = group_dict(e.group)
    if e.scheduler_preemption is not None and e.scheduler_preemption.breaks_gangs:
        out["schedulerPreemption"] = scheduler_preemption_dict(e.scheduler_preemption)
    return out


def group_dict(g: GroupVerdict) -> dict[str, Any]:
    """What the scheduler's pod-group cycles do with the pod's group (GangScheduling on;
    docs/reference/json.md, "Gangs")."""
    if g.fallback is not None:
        return {"podGroup": g.key, "simulated": False, "fallback": g.fallback}
    return {"podGroup": g.key, "simulated": True, "summary": g.summary, "wait": g.wait, "node": g.node,
            "candidates": list(g.candidates), "afterPreemption": g.after_preemption,
            "condition": condition_dict(g.condition), "finalCondition": condition_dict(g.final_condition),
            "victims": [v.key for v in g.victims], "members": [{"pod": p, "node": n} for p, n in g.members]}


def scheduler_preemption_dict(s: SchedulerPreemption) -> dict[str, Any]:
    """The scheduler's own per-pod preemption where it breaks a running gang: each tied node, its
    victims and the gangs they break."""
    return {"nodes": [{"node": c.node, "victims": [v.key for v in c.victims],
                       "gangsBroken": [{"gang": b.gang, "minCount": b.min_count, "running": b.running,
                                        "evicted": list(b.evicted)} for b in bs]}
                      for c, bs in zip(s.candidates, s.breaks, strict=True)]}


def group_lines(g: GroupVerdict) -> list[str]:
    """The readable lines of `group_dict`."""
    if g.fallback is not None or g.wait is not None:  # (a wait is among the notes)
        return []
    out = [f"its pod group: {g.summary}"]
    if g.members:
        out.append("cycle order: " + ", ".join(f"{p} → {n or 'stays Pending'}" for p, n in g.members))
    if g.condition is not None:
        c = g.condition
        text = f"PodGroupScheduled={c.status} {c.reason}" + (f": {c.message}" if c.message else "")
        f = g.final_condition
        if f is not None and f != c:
            text += f"; then {f.status} {f.reason}" + (f": {f.message}" if f.message else "")
        out.append(text)
    return out


def device_hint_dict(h: DeviceHint) -> dict[str, Any]:
    """One of explain's device facts for a node (`plan.devices.DeviceHint`)."""
    return {"kind": h.kind, "claim": h.claim, "request": h.request, "resource": h.resource, "container": h.container,
            "message": h.message,
            "holders": [{"device": d.device, "claims": list(d.claims), "pods": list(d.pods)} for d in h.holders]}


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
            and (e.device_freeing or any(v.verdict == "unschedulable" for v in e.verdicts)):
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
        Hanging(f"priority {priority_text(pod)}, {requests_text(pod)}", first="  "),
    ]
    if claims := claims_text(pod):
        parts.append(Hanging(claims, first="  "))
    if e.gang is not None:
        parts.append(Hanging(gang_text(e.gang), first="  "))
    if e.group is not None:
        parts.extend(Hanging(line, first="  ") for line in group_lines(e.group))
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
    if e.unknown:
        fits = f"it fits on {len(e.feasible)}/{e.num_nodes} nodes" if e.feasible else "no node fits"
        parts.append(Hanging(Text.from_markup(f"[bold magenta]Cannot be known[/]: without its devices {fits}, but the "
                                              f"state holds {escape(missing_text(e.missing_kinds))}, which they "
                                              "depend on."), first="", rest="  "))
        parts.append(_bullets(e.notes))
    elif e.schedulable:
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
        said = e.scheduler_message
        if said is None and e.group is not None:
            said = "nothing (it leaves the last condition it wrote)"
        parts.append(Hanging(Text(said or "", style="italic"), first="  "))
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
