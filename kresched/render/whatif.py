"""Rendering a what-if (`plan -f FILE`): the JSON/YAML contract and the readable answer — per
workload how many replicas are placed and where, the evictions that make room, the scheduler's
message for those that stay Pending and what the nearest nodes lack — in kubectl-style columns that
fit the screen (`render.table`). Never prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kresched.plan.plans import Plan
from kresched.plan.whatif import MaxResult, WhatIf, WorkloadPlan
from kresched.render.common import Source, claims_text, count, priority_text, requests_text
from kresched.render.explain import device_hint_dict
from kresched.render.plan import gang_dict, plan_dict, plan_view, victim_costs
from kresched.render.table import Columns, Command, Hanging

if TYPE_CHECKING:
    from rich.console import RenderableType

    from kresched.model.cluster import ClusterState

__all__ = ["NEAREST", "whatif_dict", "whatif_view", "workload_dict"]

#: How many of the nearest nodes are named for a workload with Pending replicas.
NEAREST = 5
#: How many nodes and eviction plans a table lists before it counts the rest (-o wide: all).
ROWS = 20


def workload_dict(w: WorkloadPlan) -> dict[str, Any]:
    """The design's contract: `workload, kind, replicas, placed, pending, message, plans`; with
    Pending replicas nothing can place, `"nearest"` (the nearest nodes, each with the scheduler's
    reasons and what would make the pod fit there); `"notes"` when there are any; `"unknown"`
    (replicas whose answer cannot be known: the state lacks DRA kinds their devices depend on)
    when there are any; `"max"` with `--max`."""
    out: dict[str, Any] = {
        "workload": w.spec.key,
        "kind": w.spec.kind,
        "replicas": w.replicas,
        "placed": dict(w.placed),
        "pending": w.pending,
        "message": w.message,
        "plans": [plan_dict(p) for p in w.plans],
    }
    if w.nearest is not None:
        out["nearest"] = [{"node": v.node, "reasons": list(v.status.reasons), "hints": list(v.hints),
                           **({"devices": [device_hint_dict(h) for h in v.devices]} if v.devices else {})}
                          for v in w.nearest.verdicts[:NEAREST]]
    if w.notes:
        out["notes"] = list(w.notes)
    if w.unknown:
        out["unknown"] = w.unknown
    if w.max is not None:
        out["max"] = max_dict(w.max)
    if w.gang is not None:
        out["gang"] = gang_dict(w.gang)
    return out


def max_dict(m: MaxResult) -> dict[str, Any]:
    return {
        "withoutEvictions": {"replicas": m.without_evictions, "placed": m.placed_without,
                             "stoppedBy": m.stopped_without},
        "withEvictions": {"replicas": m.with_evictions, "placed": m.placed_with, "evictions": m.evictions,
                          "stoppedBy": m.stopped_with},
        "limit": m.limit,
    }


def whatif_dict(result: WhatIf) -> dict[str, Any]:
    return {"workloads": [workload_dict(w) for w in result.workloads]}


def whatif_view(result: WhatIf, state: ClusterState, files: tuple[str, ...], wide: bool = False,
                source: Source | None = None, not_simulated: str = "") -> RenderableType:
    """Every workload's answer, then what was not planned and the command that comes next."""
    from rich.console import Group
    from rich.text import Text

    parts: list[RenderableType] = []
    for i, w in enumerate(result.workloads):
        if i:
            parts.append(Text(""))
        parts.append(_workload_view(w, state, wide))
    if not result.workloads:
        parts.append(Hanging("No workload to plan for in the manifests.", first=""))
    parts.append(Text(""))
    parts.append(Text(_tally(result), style="bold"))
    if result.ignored:
        parts.append(Hanging(Text(f"not planned (not workloads): {', '.join(result.ignored)}", style="dim"),
                             first="", rest="  "))
    if not_simulated:
        parts.append(Hanging(Text(not_simulated, style="dim"), first="", rest="  "))
    if source is not None:
        parts.extend(_next(result, files, source))
    return Group(*parts)


def _tally(result: WhatIf) -> str:
    """`2 workloads: 7 of 8 replicas placed (2 after evictions), 1 Pending`."""
    wanted = sum(w.replicas for w in result.workloads)
    placed = sum(sum(w.placed.values()) for w in result.workloads)
    evicting = sum(1 for w in result.workloads for p in w.plans if p.outcome == "evict")
    pending = sum(w.pending for w in result.workloads)
    text = f"{count(len(result.workloads), 'workload')}: {placed} of {count(wanted, 'replica')} placed"
    if evicting:
        text += f" ({evicting} after evictions)"
    if pending:
        text += f", {pending} Pending"
    unknown = sum(w.unknown for w in result.workloads)
    if unknown:
        text += f", {unknown} cannot be known (device data missing)"
    return text


def _workload_view(w: WorkloadPlan, state: ClusterState, wide: bool) -> RenderableType:
    from rich.console import Group
    from rich.text import Text

    spec = w.spec
    pod = spec.template
    parts: list[RenderableType] = [
        Text(f"{spec.kind.lower()} {spec.key}", style="bold"),
        Hanging(f"priority {priority_text(pod)}, {requests_text(pod, ' per replica')}"
                + (f", from {spec.origin}" if spec.origin else ""), first="  "),
    ]
    if claims := claims_text(pod):  # (a claim from a template is made for each replica)
        parts.append(Hanging(claims, first="  "))
    style = "red" if w.pending else "green"
    parts.append(Hanging(Text(w.message, style=style if w.pending or not w.plans else ""), first="", rest="  "))
    if w.gang is not None:
        parts.append(Hanging(f"A gang: {w.gang.key}, minCount {w.gang.min_count} ({w.gang.declared_by})"
                             + (f"; {w.gang.message}" if w.gang.kept else ""), first="", rest="  "))
    costs = victim_costs([v for p in w.plans if p.outcome == "evict" for v in p.victims])
    if costs:
        parts.append(Hanging(Text(f"The evictions' cost: {', '.join(costs)}", style="yellow"), first="", rest="  "))
    parts.extend(Hanging(Text(f"Note: {n}", style="dim"), first="", rest="  ") for n in w.notes)
    if w.placed:
        parts.append(Text(""))
        parts.append(_nodes_table(w, wide))
    evicting = [p for p in w.plans if p.outcome == "evict"]
    if evicting:
        parts.append(Text(""))
        parts.append(Text("Evictions that make room, replica by replica:", style="bold"))
        parts.append(_evictions_table(evicting, wide))
        if wide:
            for p in evicting:
                parts.append(Text(""))
                parts.append(plan_view(p, state, runners_up=3, wide=True))
    if w.nearest is not None:
        parts.append(Text(""))
        parts.append(Text("Nearest nodes for the Pending replicas, and what each lacks:", style="bold"))
        parts.append(_nearest_table(w, wide))
    if w.max is not None:
        parts.append(Text(""))
        parts.append(_max_view(w.max))
    return Group(*parts)


def _nodes_table(w: WorkloadPlan, wide: bool) -> RenderableType:
    """Per node: the replicas placed, how many of them after evictions, and how many had other nodes
    tied at the top score (the scheduler may take any of those)."""
    from rich.console import Group
    from rich.text import Text

    evicts: dict[str, int] = {}
    tied: dict[str, set[str]] = {}
    ties: dict[str, int] = {}
    for p in w.plans:
        if p.node is None:
            continue
        if p.outcome == "evict":
            evicts[p.node] = evicts.get(p.node, 0) + 1
        if len(p.candidates) > 1:
            ties[p.node] = ties.get(p.node, 0) + 1
            tied.setdefault(p.node, set()).update(c for c in p.candidates if c != p.node)
    rows = sorted(w.placed.items(), key=lambda kv: (-kv[1], kv[0]))
    if wide:
        t = Columns("NODE", "REPLICAS", "AFTER EVICTIONS", "TIED", "TIED WITH", wrap_last=True,
                    right=("REPLICAS", "AFTER EVICTIONS", "TIED"), movable=("AFTER EVICTIONS", "TIED"))
    else:
        t = Columns("NODE", "REPLICAS", "AFTER EVICTIONS", "TIED", right=("REPLICAS", "AFTER EVICTIONS", "TIED"),
                    movable=("TIED", "AFTER EVICTIONS"))
    shown = rows if wide else rows[:ROWS]
    for node, n in shown:
        cells = [node, str(n), str(evicts.get(node, 0) or "-"), str(ties.get(node, 0) or "-")]
        if wide:
            cells.append(", ".join(sorted(tied.get(node, ()))) or "-")
        t.add_row(*cells)
    out: list[RenderableType] = [t]
    if len(rows) > len(shown):
        out.append(Text(f"… and {count(len(rows) - len(shown), 'more node')} (-o wide: all)", style="dim"))
    if ties:
        out.append(Hanging(Text("TIED: replicas for which other nodes tie at the top score; the scheduler takes the "
                                "first its filters found, so any of them may be the one", style="dim"),
                           first="", rest="  "))
    likely = sum(1 for p in w.plans if p.likely and p.node is not None)
    if likely:
        out.append(Hanging(Text(f"{count(likely, 'replica')} placed where the scheduler would score only a sample of "
                                "the feasible nodes: the node is the likely one", style="dim"), first="", rest="  "))
    return Group(*out)


def _evictions_table(plans: list[Plan], wide: bool) -> RenderableType:
    from rich.console import Group
    from rich.text import Text

    t = Columns("REPLICA", "NODE", "TIER", "VICTIMS", right=("TIER", "VICTIMS"), movable=("TIER", "NODE"))
    shown = plans if wide else plans[:ROWS]
    for p in shown:
        details = []
        if p.blocked:
            details.append(Text("! blocked: evicting would violate a PodDisruptionBudget (--allow-pdb-violation)",
                                style="red"))
        for v in p.victims:
            where = v.lands_on or ("gone for good" if v.is_bare else "Pending")
            details.append(Text(f"- {_victim_name(v.pod.key)} → {where}", style="dim"))
        t.add_row(p.pod.name, p.node or "-", str(p.tier or "-"), str(len(p.victims)), details=details)
    if len(plans) > len(shown):
        return Group(t, Text(f"… and {count(len(plans) - len(shown), 'more replica')} (-o wide: all)", style="dim"))
    return t


def _victim_name(key: str) -> str:
    """A victim's key; the replacement an earlier replica's eviction brought (`placement.replacement_of`)
    as such: its name is the controller's to choose."""
    return f"the replacement of {key.removesuffix('~replacement')}" if key.endswith("~replacement") else key


def _nearest_table(w: WorkloadPlan, wide: bool = False) -> RenderableType:
    """The nearest nodes (those that need the least change) and what each lacks; -o wide: every
    node, with the scheduler's reason beside it."""
    from rich.console import Group
    from rich.text import Text

    assert w.nearest is not None
    verdicts = w.nearest.verdicts if wide else w.nearest.verdicts[:NEAREST]
    t = Columns("NODE", "SCHEDULER SAYS", "WHY NOT", movable=("SCHEDULER SAYS",), wrap_last=True) if wide \
        else Columns("NODE", "WHY NOT", wrap_last=True)
    for v in verdicts:
        why = "; ".join(v.hints) or ", ".join(v.status.reasons)
        t.add_row(v.node, ", ".join(v.status.reasons) or "-", why) if wide else t.add_row(v.node, why)
    hidden = len(w.nearest.verdicts) - len(verdicts)
    if hidden:
        return Group(t, Text(f"… and {hidden} more (-o wide lists every node)", style="dim"))
    return t


def _max_view(m: MaxResult) -> RenderableType:
    from rich.console import Group
    from rich.text import Text

    def at_least(n: int) -> str:
        return f"at least {n}" if n >= m.limit else str(n)

    return Group(
        Text("How many replicas fit (--max):", style="bold"),
        Hanging(f"without evicting anything: {at_least(m.without_evictions)} (stopped by {m.stopped_without})",
                first="  ", rest="    "),
        Hanging(f"with evictions within the tiers: {at_least(m.with_evictions)}, evicting {count(m.evictions, 'pod')} "
                f"(stopped by {m.stopped_with})", first="  ", rest="    "),
    )


def _next(result: WhatIf, files: tuple[str, ...], source: Source) -> list[RenderableType]:
    """What comes next: make the room (preempt -f, rehearsed on a snapshot), or apply the workload."""
    from rich.text import Text

    args = f" {source.args}" if source.args else ""
    f_args = " ".join(f"-f {f}" for f in files)
    evicting = any(p.outcome == "evict" for p in result.plans)
    out: list[RenderableType] = []
    if evicting:
        what = "rehearse making the room" if source.on_snapshot else \
            "make the room (--dry-run rehearses it; --apply also creates the workloads)"
        out.append(Hanging(Text(f"next ({what}):", style="dim"), first="", rest="  "))
        out.append(Command(f"{source.prog} preempt {f_args}{args}{' --dry-run' if source.on_snapshot else ''}"))
    elif result.workloads and all(not w.pending for w in result.workloads) and not source.on_snapshot:
        out.append(Hanging(Text("next (it fits: create it):", style="dim"), first="", rest="  "))
        out.append(Command(f"kubectl apply {f_args}"))
    return out
