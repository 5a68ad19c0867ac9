"""Rendering plans: the JSON/YAML contract and the readable plan with its before/after diff, in
kubectl-style columns (`render.table`); `wide` adds the columns a narrow screen can do without.
Never prints."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.explain import format_amount
from kresched.plan.plans import DeviceGrant, GangOutcome, Plan, Victim
from kresched.render.common import (
    Source,
    bar,
    claims_text,
    count,
    pod_requests_text,
    priority_text,
    requests_text,
)
from kresched.render.table import Columns, Command, Hanging
from kresched.sched.pod_group_cycle import PodGroupCondition

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["victim_costs", "next_steps", "next_view", "plan_dict", "plans_dict", "plan_view", "plans_view", "tally"]


def victim_dict(v: Victim) -> dict[str, Any]:
    """The design's victim; a member of a running gang also `"gang"` and `"stopsGang"`."""
    out = {
        "pod": v.pod.key,
        "node": v.node,
        "priority": v.pod.priority,
        "qos": v.pod.qos,
        "pdb": v.pdb.pdb,
        "pdbViolation": not v.pdb.allowed,
        "gracePeriodSeconds": v.grace_seconds,
        "evictionGracePeriodSeconds": v.eviction_grace_seconds,
        "controller": v.pod.controller_ref,
        "landsOn": v.lands_on,
        "candidates": list(v.candidates),
        "likely": v.likely,
    }
    if v.pdb.gang is not None:
        out["gang"] = v.pdb.gang
        out["stopsGang"] = v.pdb.stops_gang
    return out


def plan_dict(p: Plan) -> dict[str, Any]:
    """The design's contract: `pod, priority, outcome, node, tier, taint, victims, message`; with a
    profile other than `default-scheduler` (or none: a pod of another scheduler) `"profile"`, and
    `"warnings"` when kresched could not simulate all of it; for a pod that asks for devices,
    `"devices"` (what its claims get on `node`) and `"freesDevices"` (the victims go to free
    devices: kresched's own device freeing); `"missingKinds"` when the state lacks DRA kinds the
    answer depends on (outcome `unknown`, or `infeasible` whatever the devices)."""
    out = {
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
    if p.profile != "default-scheduler":
        out["profile"] = p.profile
    if p.warnings:
        out["warnings"] = list(p.warnings)
    if p.devices is not None:
        out["devices"] = [grant_dict(g) for g in p.devices]
        out["freesDevices"] = p.frees_devices
    if p.missing_kinds:
        out["missingKinds"] = list(p.missing_kinds)
    if p.gang is not None:
        out["gang"] = gang_dict(p.gang)
    stopped = p.stopped_gangs
    if stopped:
        out["gangsStopped"] = [{"gang": key, "running": vs[0].pdb.gang_running, "minCount": vs[0].pdb.gang_min_count,
                                "evicted": [v.pod.key for v in vs]} for key, vs in stopped.items()]
    return out


def grant_dict(g: DeviceGrant) -> dict[str, Any]:
    return {"claim": g.claim, "request": g.request, "driver": g.driver, "pool": g.pool, "device": g.device,
            "resource": g.resource, "container": g.container}


def gang_dict(g: GangOutcome) -> dict[str, Any]:
    """What the plan of a pod's gang came to (docs/reference/json.md, "Gangs")."""
    out: dict[str, Any] = {"gang": g.key, "flavor": g.flavor, "minCount": g.min_count, "members": g.members,
                           "running": g.running, "placed": g.placed, "kept": g.kept, "declaredBy": g.declared_by,
                           "message": g.message}
    if g.scheduler:  # GangScheduling on: placed as the scheduler's pod-group cycle places it
        out["scheduler"] = True
        out["condition"] = condition_dict(g.condition)
    return out


def condition_dict(c: PodGroupCondition | None) -> dict[str, str] | None:
    """A PodGroup's `PodGroupScheduled` condition as the scheduler writes it (None: it writes none)."""
    return None if c is None else {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}


def plans_dict(plans: list[Plan]) -> dict[str, Any]:
    """`{"plans": [...]}`, and `"gangs"` (each gang once, in the order planned) when a pod is a gang's."""
    out: dict[str, Any] = {"plans": [plan_dict(p) for p in plans]}
    gangs = {p.gang.key: p.gang for p in plans if p.gang is not None}
    if gangs:
        out["gangs"] = [{**gang_dict(g), "pods": [p.pod.key for p in plans if p.gang is not None and p.gang.key == k]}
                        for k, g in gangs.items()]
    return out


_OUTCOME_STYLE = {"fits": "green", "evict": "yellow", "infeasible": "red", "unknown": "magenta"}


def plan_view(p: Plan, state: ClusterState, runners_up: int = 5, wide: bool = False,
              source: Source | None = None) -> RenderableType:
    """One pod's plan: the pod, the outcome, why, the node's diff, the victims and the runners-up;
    with `source` (the options that name the cluster or snapshot, `--snapshot demo`), the command
    that comes next last."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    parts: list[RenderableType] = [
        Text(p.pod.key, style="bold"),
        Hanging(f"priority {priority_text(p.pod)}, {requests_text(p.pod)}", first="  "),
    ]
    if claims := claims_text(p.pod):
        parts.append(Hanging(claims, first="  "))
    if p.profile not in ("default-scheduler", None):
        parts.append(Hanging(f"simulated with scheduler profile {p.profile}", first="  "))
    parts.extend(Hanging(Text(f"warning: {w}", style="yellow"), first="  ") for w in p.warnings)
    style = _OUTCOME_STYLE[p.outcome]
    head = f"[{style} bold]{p.outcome.upper()}[/]"
    if p.node:
        head += f" on [bold]{escape(p.node)}[/]"
    if p.tier:
        head += f" · tier {p.tier}"
    if p.outcome == "evict":
        head += " · reservation taint: " + ("yes" if p.taint else "[yellow]no[/] (the pod does not tolerate "
                                                                   "CriticalAddonsOnly)")
        head += "".join(f" · [yellow]{escape(c)}[/]" for c in victim_costs(p.victims))
    parts.append(Hanging(Text.from_markup(head), first="", rest="  "))
    parts.append(Hanging(Text(p.message, style="red" if p.blocked else ""), first="", rest="  "))
    if p.gang is not None and p.gang.message != p.message:
        parts.append(Hanging(f"Gang: {p.gang.message}", first="", rest="  "))
    for key, vs in p.stopped_gangs.items():
        parts.append(Hanging(Text(f"Stops {key}: evicting {', '.join(v.pod.key for v in vs)} leaves it below its "
                                  f"minCount {vs[0].pdb.gang_min_count}, so all {vs[0].pdb.gang_running} running "
                                  "members stop (a gang runs all or nothing)", style="red"), first="", rest="  "))
    if p.outcome == "fits" and len(p.candidates) > 1:
        parts.append(Hanging(f"Tied at the top score (the scheduler takes the first its filters found): "
                             f"{', '.join(p.candidates)}", first="", rest="  "))
    if p.decided_by:
        parts.append(Hanging(f"Why {p.node or ''}: {p.decided_by}", first="", rest="  "))
    parts.extend(Hanging(Text(f"Note: {n}", style="dim"), first="", rest="  ") for n in p.notes)
    if p.outcome == "evict" and p.node:
        parts.append(Text(""))
        parts.append(_diff(p, state))
        parts.append(Text(""))
        parts.append(Text("Victims, most important first:", style="bold"))
        parts.append(_victims_table(p, wide))
    if p.runners_up:
        parts.append(Text(""))
        parts.append(Text("Runner-up nodes:" if p.outcome == "evict" else "Why no node works:", style="bold"))
        parts.append(_runners_table(p, runners_up))
    if source is not None:
        parts.append(Text(""))
        parts.extend(next_view([p], source))
    return Group(*parts)


def victim_costs(victims: Sequence[Victim]) -> list[str]:
    """What a plan's defaults cost its victims, said up front: grace periods shortened (to the
    eviction's grace), bare pods gone for good, emptyDir data lost, running gangs stopped (with
    every running member: they are disrupted too)."""
    out = []
    stopped = {v.pdb.gang: v.pdb.gang_running for v in victims if v.pdb.stops_gang and v.pdb.gang}
    out += [f"stops {key} ({count(running, 'running member')})" for key, running in stopped.items()]
    shortened = [v for v in victims if v.grace_shortened]
    if shortened:
        to = sorted({v.eviction_grace_seconds for v in shortened})
        out.append(f"{count(len(shortened), 'grace period')} shortened to {'/'.join(f'{s}s' for s in to)}")
    bare = sum(1 for v in victims if v.is_bare)
    if bare:
        out.append(f"{count(bare, 'bare pod')} gone for good")
    lost = sum(1 for v in victims if v.has_empty_dir)
    if lost:
        out.append(f"emptyDir data of {count(lost, 'pod')} lost")
    return out


#: How each kind of plan is counted in a tally: (singular, plural).
_TALLY = (("fits", ("fits now", "fit now")), ("evict", ("needs evictions", "need evictions")),
          ("blocked", ("needs evictions a PDB forbids", "need evictions a PDB forbids")),
          ("infeasible", ("cannot be placed", "cannot be placed")),
          ("unknown", ("cannot be known (device data missing)", "cannot be known (device data missing)")))


def _kind(p: Plan) -> str:
    return "blocked" if p.blocked else p.outcome


def tally(plans: list[Plan]) -> str:
    """`2 pods: 1 needs evictions, 1 cannot be placed`."""
    kinds = Counter(_kind(p) for p in plans)
    parts = [f"{kinds[k]} {one if kinds[k] == 1 else many}" for k, (one, many) in _TALLY if kinds[k]]
    return f"{count(len(plans), 'pod')}: {', '.join(parts)}"


def next_steps(plans: list[Plan], source: Source) -> list[tuple[str, str]]:
    """The commands that come next, each once, as (what it does, the command): carry out — or
    rehearse: acting on a snapshot can only be rehearsed — the first plan that makes room, explain
    the first pod nothing can place."""
    args = f" {source.args}" if source.args else ""
    rehearse = " --dry-run" if source.on_snapshot else ""
    first = {k: next((p for p in plans if _kind(p) == k), None)
             for k in ("evict", "blocked", "infeasible", "unknown", "fits")}
    out = []
    if (p := first["evict"]) is not None:
        out.append(("rehearse it" if source.on_snapshot else "carry it out (--dry-run rehearses it)",
                    f"{source.prog} preempt {p.pod.key}{args}{rehearse}"))
    if (p := first["blocked"]) is not None:
        out.append(("rehearse it, over the PodDisruptionBudget" if source.on_snapshot
                    else "carry it out over the PodDisruptionBudget (--dry-run rehearses it)",
                    f"{source.prog} preempt {p.pod.key}{args} --allow-pdb-violation{rehearse}"))
    if (p := first["infeasible"]) is not None:
        out.append(("why no node works", f"{source.prog} explain {p.pod.key}{args}"))
    if (p := first["unknown"]) is not None:
        out.append(("what it depends on", f"{source.prog} explain {p.pod.key}{args}"))
    if (p := first["fits"]) is not None and not out:
        out.append(("why it is still Pending", f"{source.prog} explain {p.pod.key}{args}"))
    return out


def next_view(plans: list[Plan], source: Source) -> list[RenderableType]:
    """`next (rehearse it):` and the command under it, never broken: it is meant to be copied."""
    from rich.text import Text

    out: list[RenderableType] = []
    for what, command in next_steps(plans, source):
        out.append(Hanging(Text(f"next ({what}):", style="dim"), first="", rest="  "))
        out.append(Command(command))
    return out


def plans_view(plans: list[Plan], state: ClusterState, wide: bool = False, source: Source | None = None,
               what: str = "pending pod", where: str = "", left_out: tuple[str, ...] = (),
               empty: str | None = None) -> RenderableType:
    """Several plans: one row each, in the order planned, then the tally, what was left out (with
    the flag that includes it) and the next commands. Each pod's whole plan only under `wide` (or
    when there is one pod). `empty` is what to say when there is no plan."""
    from rich.console import Group
    from rich.text import Text

    notes = [Hanging(Text(n, style="dim"), first="", rest="  ") for n in left_out]
    if not plans:
        return Group(Hanging(empty or f"No {what}s{where} to plan for.", first="", rest="  "), *notes)
    parts: list[RenderableType] = [Hanging(Text(f"{count(len(plans), what)}{where}, planned in priority order:",
                                                 style="bold"), first="", rest="  ")]
    summary = Columns("POD", "PRIORITY", "OUTCOME", "NODE", "TIER", "VICTIMS", right=("PRIORITY", "VICTIMS"),
                      movable=("PRIORITY", "TIER", "VICTIMS", "NODE")) \
        if wide else Columns("POD", "OUTCOME", "NODE", "VICTIMS", right=("VICTIMS",), movable=("VICTIMS", "NODE"))
    for p in plans:
        outcome = Text(p.outcome, style=_OUTCOME_STYLE[p.outcome])
        if wide:
            summary.add_row(p.pod.key, str(p.priority), outcome, p.node or "-", str(p.tier or "-"),
                            str(len(p.victims)))
        else:
            summary.add_row(p.pod.key, outcome, p.node or "-", str(len(p.victims)))
    parts.append(summary)
    gangs = {p.gang.key: p.gang for p in plans if p.gang is not None}
    for g in gangs.values():
        parts.append(Hanging(Text(g.message, style="" if g.kept else "red"), first="", rest="  "))
    if wide or len(plans) == 1:
        for p in plans:
            parts.append(Text(""))
            parts.append(plan_view(p, state, runners_up=3, wide=wide))
        parts.append(Text(""))
    parts.append(Text(tally(plans) + ("" if wide or len(plans) == 1 else " (-o wide: each pod's plan)"),
                      style="bold"))
    parts.extend(notes)
    if source is not None:
        parts.extend(next_view(plans, source))
    return Group(*parts)


def _usage(pods: list[Pod]) -> tuple[int, int]:
    live = [q for q in pods if q.status.phase not in ("Succeeded", "Failed")]
    return sum(q.requests.milli_cpu for q in live), sum(q.requests.memory for q in live)


def _diff(p: Plan, state: ClusterState) -> RenderableType:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    node = state.node_by_name[p.node or ""]
    alloc = node.allocatable
    before = list(p.node_pods_before)
    gone = {v.pod.key for v in p.victims}
    after = [q for q in before if q.key not in gone] + [p.pod]
    cpu_b, mem_b = _usage(before)
    cpu_a, mem_a = _usage(after)
    lines: list[RenderableType] = [Text.from_markup(f"[bold]{escape(p.node or '')}[/]: before → after")]
    for label, kind, b, a, cap in (("CPU   ", "cpu", cpu_b, cpu_a, alloc.milli_cpu),
                                   ("Memory", "memory", mem_b, mem_a, alloc.memory)):
        lines.append(Text.from_markup(f"  {label}  {bar(b, cap, width=12)}  →  {bar(a, cap, width=12)}  "
                                      f"({format_amount(kind, a)}/{format_amount(kind, cap)})"))
    lines += [Hanging(Text.from_markup(f"[red]- {escape(v.pod.key)}[/]  [dim]{escape(pod_requests_text(v.pod))}[/]"),
                      first="  ", rest="    ") for v in p.victims]
    lines.append(Hanging(Text.from_markup(f"[green]+ {escape(p.pod.key)}[/]  "
                                          f"[dim]{escape(pod_requests_text(p.pod))}[/]"), first="  ", rest="    "))
    return Group(*lines)


def _victims_table(p: Plan, wide: bool) -> Columns:
    from rich.text import Text

    if wide:
        t = Columns("POD", "PRIORITY", "QOS", "PDB", "GRACE", "CONTROLLER", "LANDS ON", "CANDIDATES",
                    right=("PRIORITY",),
                    movable=("CANDIDATES", "CONTROLLER", "QOS", "PDB", "PRIORITY", "LANDS ON"))
    else:
        t = Columns("POD", "PRIORITY", "PDB", "GRACE", "LANDS ON", right=("PRIORITY",),
                    movable=("PDB", "PRIORITY", "LANDS ON"))
    for v in p.victims:
        pdb = Text("-" if v.pdb.pdb is None else f"{v.pdb.pdb} ({v.pdb.remaining} left)",
                   style="red" if v.pdb.violation else "")
        grace = f"{v.grace_seconds}s" + (f"→{v.eviction_grace_seconds}s" if v.grace_shortened else "")
        if v.lands_on:
            lands = Text(v.lands_on + ("" if wide or len(v.candidates) < 2 else f" (+{len(v.candidates) - 1} tied)"))
        else:
            lands = Text("gone", style="red") if v.is_bare else Text("Pending", style="yellow")
        notes = [Text(f"! {f}", style="yellow") for f in v.flags]
        if wide:
            t.add_row(v.pod.key, str(v.pod.priority), v.pod.qos, pdb, grace, v.pod.controller_ref or "none (bare)",
                      lands, ",".join(v.candidates) or "-", details=notes)
        else:
            t.add_row(v.pod.key, str(v.pod.priority), pdb, grace, lands, details=notes)
    return t


def _runners_table(p: Plan, limit: int) -> RenderableType:
    from rich.console import Group
    from rich.text import Text

    t = Columns("NODE", "VICTIMS", "WHY NOT CHOSEN", wrap_last=True, right=("VICTIMS",), movable=("VICTIMS",))
    for r in p.runners_up[:limit]:
        t.add_row(r.node, str(r.victims) if r.tier is not None else "-", r.reason)
    hidden = len(p.runners_up) - limit
    if hidden > 0:
        return Group(t, Text(f"… and {hidden} more", style="dim"))
    return t
