"""Rendering the results of `preempt` (of a pod, or of a gang) and of a `reconcile` pass: the
summary line's data (a stable JSON shape for log pipelines) and the readable summary. Never prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kresched.execute.gang import GangResult, stopped_by
from kresched.execute.preempt import PreemptResult
from kresched.execute.reconcile import ReconcileResult
from kresched.execute.untaint import UntaintResult
from kresched.execute.whatif import WhatIfRunResult
from kresched.plan.plans import Plan
from kresched.render.common import cluster_text, count, duration_text
from kresched.render.events import dry_suffix, summary_view
from kresched.render.table import markup_lines

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = ["gang_closing", "gang_summary", "gang_view", "gangs_stopped", "preempt_closing", "preempt_summary",
           "preempt_view", "pass_summary", "pass_summary_text", "untaint_summary", "untaint_view",
           "whatif_run_closing", "whatif_run_summary", "whatif_run_view"]


def preempt_summary(r: PreemptResult, mode: str, cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `summary` document of `preempt` (and its readable form's data). `reserved` says whether a
    reservation was made on the cluster (never in a dry run); `reservationRemoved` whether it was
    removed again (null when there was none)."""
    reserved = r.reserved and mode == "cluster"
    return {
        "pod": r.pod,
        "outcome": r.outcome,
        "node": r.node,
        "plannedNode": r.plan.node,
        "evicted": r.evicted,
        "alreadyGone": r.already_gone,
        "pdbBlocked": [{"pod": p, "pdb": b} for p, b in r.pdb_blocked],
        "failed": [{"pod": p, "reason": why} for p, why in r.failed],
        "reserved": reserved,
        "reservationRemoved": r.released if reserved else None,
        **({"gangsStopped": stopped} if (stopped := gangs_stopped([r.plan], r.evicted)) else {}),
        "seconds": round(r.seconds, 1),
        "mode": mode,
        "cluster": cluster,
        "message": preempt_closing(r, mode),
    }


def gangs_stopped(plans: list[Plan], evicted: list[str]) -> list[dict[str, Any]]:
    """The running gangs the victims in `evicted` stopped (`execute.gang.stopped_by`), as the JSON's
    `gangsStopped`: `{"gang", "running", "minCount", "evicted"}`."""
    return [_stopped_dict(s) for s in stopped_by(plans, evicted)]


def _stopped_dict(s: tuple[str, int, int, tuple[str, ...]]) -> dict[str, Any]:
    return {"gang": s[0], "running": s[1], "minCount": s[2], "evicted": list(s[3])}


def preempt_closing(r: PreemptResult, mode: str) -> str:
    """One line, kubectl's way: `pod kube-system/x bound to worker-c1 in 10.5s (1 pod evicted)`."""
    pod, took = f"pod {r.pod}", duration_text(r.seconds)
    evicted = f" after evicting {count(len(r.evicted), 'pod')}" if r.evicted else ""
    dry = dry_suffix(mode)
    if r.outcome == "bound":
        return f"{pod} bound to {r.node} in {took}{evicted}{dry}"
    if r.outcome == "bound-elsewhere":
        return f"{pod} bound to {r.node} (not the planned {r.plan.node}) in {took}{evicted}{dry}"
    if r.outcome == "simulated":
        # Nothing happened: said as what would, not as kubectl's past tense.
        return f"{pod} would be bound to {r.plan.node}{evicted}{dry}"
    if r.outcome == "timeout":
        return f"{pod} still Pending after {took}{evicted}{dry}"
    if r.outcome == "deleted":
        return f"{pod} was deleted{evicted}{dry}"
    if r.outcome == "gave-up":
        refused = ", ".join(p for p, _ in r.pdb_blocked)
        return f"{pod} not bound: PodDisruptionBudgets kept refusing {refused}{evicted}{dry}"
    if r.outcome == "interrupted":
        return f"{pod} not bound: interrupted{evicted or ' before evicting anything'}{dry}"
    if r.outcome == "nothing-to-do":
        return f"{pod} fits on {r.plan.node or 'a node'} without evictions: nothing to do{dry}"
    if r.outcome == "infeasible":
        return f"{pod} cannot be placed, whatever is evicted: nothing was done{dry}"
    if r.outcome == "unknown":
        return f"{pod}: whether it can be placed cannot be known (device data missing): nothing was done{dry}"
    if r.outcome == "aborted":
        return f"{pod}: not confirmed, nothing was changed"
    if r.outcome == "blocked" and not r.evicted:
        why = ": evicting would violate a PodDisruptionBudget (--allow-pdb-violation to go on)" if r.plan.blocked \
            else ""
        return f"{pod} not helped{why}; nothing was evicted{dry}"
    return f"{pod} not helped ({r.outcome}): nothing was evicted{dry}" if not r.evicted else \
        f"{pod} not bound ({r.outcome}){evicted}{dry}"


def preempt_view(data: dict[str, Any]) -> RenderableType:
    """`preempt_summary` for people: what needs a look (pods already gone, refused, failed, gangs
    stopped), the cluster, then the closing line."""
    style = "bold" if data["outcome"] in ("bound", "simulated", "nothing-to-do") else "bold yellow"
    categories = [
        ("cluster", cluster_text(data["cluster"])),
        ("already gone", data["alreadyGone"]),
        ("refused by a PodDisruptionBudget", [f"{b['pod']} ({b['pdb']})" for b in data["pdbBlocked"]]),
        ("failed", [f"{f['pod']}: {f['reason']}" for f in data["failed"]]),
        ("gangs stopped", _stopped_texts(data.get("gangsStopped", []))),
    ]
    return summary_view(categories, data["message"], style)


def _stopped_texts(stopped: list[dict[str, Any]]) -> list[str]:
    return [f"{g['gang']} (all {g['running']} running members: {', '.join(g['evicted'])} took it below minCount "
            f"{g['minCount']})" for g in stopped]


def gang_summary(r: GangResult, mode: str, cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `summary` document of `preempt` for a gang: each pending member's planned node, the node
    it was bound to and how its wait ended; how many are bound and the gang's minCount; what was
    evicted; the nodes reserved and released (on a cluster: never in a dry run)."""
    reserved = mode == "cluster"
    return {
        "gang": r.key,
        "flavor": r.gang.flavor,
        "minCount": r.min_count,
        "running": r.running,
        "outcome": r.outcome,
        "members": [{"pod": m.pod, "plannedNode": m.planned, "node": m.node, "outcome": m.outcome}
                    for m in r.members.values()],
        "bound": len(r.bound),
        "evicted": r.evicted,
        "alreadyGone": r.already_gone,
        "pdbBlocked": [{"pod": p, "pdb": b} for p, b in r.pdb_blocked],
        "failed": [{"pod": p, "reason": why} for p, why in r.failed],
        "gangsStopped": gangs_stopped(r.plans, r.evicted),
        "leftToTheScheduler": r.left,
        "reserved": list(r.reserved) if reserved else [],
        "released": list(r.released) if reserved else [],
        "reservationsRemoved": (set(r.released) >= set(r.reserved)) if reserved and r.reserved else None,
        "seconds": round(r.seconds, 1),
        "mode": mode,
        "cluster": cluster,
        "message": gang_closing(r, mode),
    }


def gang_closing(r: GangResult, mode: str) -> str:
    """One line: `PodGroup ml/train: all 3 members bound in 4.2s after evicting 3 pods`; what became
    of the members when not all of them were bound."""
    gang, took, dry = r.key, duration_text(r.seconds), dry_suffix(mode)
    evicted = f" after evicting {count(len(r.evicted), 'pod')}" if r.evicted else ""
    waited = r.waited_for
    bound = len(r.bound)
    runs = r.running + bound
    if r.outcome == "bound":
        elsewhere = sum(1 for m in waited if m.outcome == "bound-elsewhere")
        also = f" ({elsewhere} not on its planned node)" if elsewhere else ""
        left = len(r.members) - len(waited)
        if left or r.running:
            what = f"{bound} of its {len(r.members)} pending members bound"
            also += f" ({runs} running, minCount {r.min_count})"
        else:
            what = f"all {count(bound, 'member')} bound"
        return f"{gang}: {what} in {took}{evicted}{also}{dry}"
    if r.outcome == "simulated":
        return f"{gang}: {count(len(waited), 'member')} would be bound{evicted}{dry}"
    if r.outcome in ("partial", "timeout"):
        verdict = f"{runs} running, minCount {r.min_count}: " + ("it runs" if runs >= r.min_count
                                                                  else "the gang does not run")
        if r.outcome == "timeout":
            return f"{gang}: no member bound after {took}{evicted} ({verdict}){dry}"
        missing = [m.pod for m in waited if m.outcome not in ("bound", "bound-elsewhere")]
        return f"{gang}: only {bound} of {count(len(waited), 'member')} bound after {took}{evicted}; not bound: " \
               f"{', '.join(missing)} ({verdict}){dry}"
    if r.outcome == "deleted":
        return f"{gang}: its members were deleted{evicted}{dry}"
    if r.outcome == "gave-up":
        refused = ", ".join(p for p, _ in r.pdb_blocked)
        return f"{gang} not bound: PodDisruptionBudgets kept refusing {refused}{evicted}{dry}"
    if r.outcome == "interrupted":
        return f"{gang} not bound: interrupted{evicted or ' before evicting anything'}{dry}"
    if r.outcome == "nothing-to-do":
        if not r.gang.pending:
            return f"{gang}: every member is bound already: nothing to do{dry}"
        return f"{gang}: the members it needs fit without evictions: nothing to do{dry}"
    if r.outcome == "infeasible":
        info = r.plans[0].gang if r.plans else None
        return f"{gang} cannot start: {info.message if info else 'no member can be placed'}{dry}"
    if r.outcome == "aborted":
        return f"{gang}: not confirmed, nothing was changed"
    if r.outcome == "blocked" and not r.evicted:
        return f"{gang} not helped; nothing was evicted{dry}"
    return f"{gang} not helped ({r.outcome}): nothing was evicted{dry}" if not r.evicted else \
        f"{gang} not bound ({r.outcome}){evicted}{dry}"


def gang_view(data: dict[str, Any]) -> RenderableType:
    """`gang_summary` for people: each member and where it was bound (or why not), what needs a
    look, the cluster, then the closing line."""
    style = "bold" if data["outcome"] in ("bound", "simulated", "nothing-to-do") else "bold yellow"
    members = []
    for m in data["members"]:
        if m["outcome"] in ("bound", "bound-elsewhere"):
            members.append(f"{m['pod']} on {m['node']}" + ("" if m["outcome"] == "bound"
                                                           else f" (planned {m['plannedNode']})"))
        elif m["outcome"] == "simulated":
            members.append(f"{m['pod']} → {m['plannedNode']}")
        elif m["outcome"] != "pending":
            members.append(f"{m['pod']}: {m['outcome']}")
    categories = [
        ("cluster", cluster_text(data["cluster"])),
        ("members", members),
        ("already gone", data["alreadyGone"]),
        ("refused by a PodDisruptionBudget", [f"{b['pod']} ({b['pdb']})" for b in data["pdbBlocked"]]),
        ("failed", [f"{f['pod']}: {f['reason']}" for f in data["failed"]]),
        ("gangs stopped", _stopped_texts(data["gangsStopped"])),
        ("reservations left", [n for n in data["reserved"] if n not in data["released"]]),
    ]
    return summary_view(categories, data["message"], style)


def pass_summary(r: ReconcileResult, mode: str, error: str | None,
                 cluster: dict[str, Any] | None = None) -> dict[str, Any]:
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
        **({"gangs": [{"gang": g.gang, "members": list(g.members), "minCount": g.min_count, "outcome": g.outcome,
                       "bound": g.bound, "reason": g.reason} for g in r.gangs]} if r.gangs else {}),
        **({"gangsStopped": [_stopped_dict(g) for g in r.gangs_stopped]} if r.gangs_stopped else {}),
        "cluster": cluster,
        "message": pass_closing(r, mode, error),
    }


def pass_closing(r: ReconcileResult, mode: str, error: str | None) -> str:
    """`pass done in 4.2s: 1 pod helped (1 eviction), 1 stale reservation removed`: only what is
    not zero."""
    if not r.locked and r.lock_holder is not None:
        return f"nothing done: another pass holds the Lease ({r.lock_holder})"
    done = []
    if r.helped:
        done.append(f"{count(len(r.helped), 'pod')} helped ({count(r.evictions, 'eviction')})")
    elif r.evictions:
        done.append(count(r.evictions, "eviction"))
    if r.moves:
        done.append(f"{count(sum(1 for m in r.moves if m[4] in ('moved', 'simulated')), 'pod')} rebalanced")
    if r.cleaned:
        done.append(f"{count(len(r.cleaned), 'stale reservation')} removed")
    if r.still_pending:
        done.append(f"{len(r.still_pending)} still Pending")
    if r.failed_actions:
        done.append(f"{count(len(r.failed_actions), 'action')} failed")
    head = f"pass {'stopped' if error else 'done'} in {duration_text(r.seconds)}"
    return f"{head}: {', '.join(done) if done else 'nothing to do'}{dry_suffix(mode)}"


def pass_summary_text(r: ReconcileResult, mode: str, error: str | None,
                      cluster: dict[str, Any] | None = None) -> RenderableType:
    """For people: what was bound, moved, what is still Pending and why, what failed — each only
    when there is any —, then the closing line."""
    from rich.markup import escape

    lines = []
    if cluster:
        lines.append(f"[dim]cluster:[/] {escape(cluster_text(cluster) or '')}")
    lines += [f"[green]✓[/] {escape(p)} is bound to {escape(n)}" for p, n in r.bound]
    for p, f, t, landed, st in r.moves:
        mark = "[green]✓[/]" if st == "moved" and landed == t else \
            "[dim]·[/]" if st == "simulated" else "[yellow]![/]"
        lines.append(f"{mark} moved {escape(p)}: {escape(f)} → {escape(landed or '-')} (predicted {escape(t)}, "
                     f"{escape(st)})")
    if r.rebalance_skipped:
        lines.append(f"[yellow]![/] rebalance {escape(r.rebalance_skipped)}")
    for g in r.gangs:
        mark = "[green]✓[/]" if g.outcome == "bound" else "[dim]·[/]" if g.outcome in ("simulated", "nothing-to-do") \
            else "[yellow]![/]"
        lines.append(f"{mark} {escape(g.gang)} ({count(len(g.members), 'pending member')}): {escape(g.outcome)}, "
                     f"{escape(g.reason)}")
    lines += [f"[red]✗[/] stopped {escape(t)}" for t in _stopped_texts([_stopped_dict(g) for g in r.gangs_stopped])]
    if r.still_pending:
        lines.append("[dim]still Pending:[/]")
        lines += [f"  [yellow]![/] {escape(p)}: {escape(why)}" for p, why in r.still_pending]
    if r.failed_actions:
        lines.append("[dim]failed:[/]")
        lines += [f"  [red]✗[/] {escape(f)}" for f in r.failed_actions]
    style = "bold yellow" if error or r.failed_actions else "bold"
    lines.append(f"[{style}]{escape(pass_closing(r, mode, error))}[/]")
    return markup_lines(lines)


def untaint_summary(r: UntaintResult, mode: str, cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    """`{"removed", "kept", "failed"}` (node names), the mode, the cluster and the closing line."""
    removed = [d.reservation.node for d in r.removed]
    if removed:
        message = f"{', '.join(f'node/{n}' for n in removed)} untainted"
    elif r.kept or r.failed:
        message = "no reservation removed"
    else:
        message = "no kresched reservations found"
    if r.kept and removed:
        message += f"; {count(len(r.kept), 'reservation')} kept"
    return {"removed": removed, "kept": [d.reservation.node for d in r.kept],
            "failed": [d.reservation.node for d in r.failed], "mode": mode, "cluster": cluster,
            "message": message + dry_suffix(mode)}


def untaint_view(r: UntaintResult, data: dict[str, Any]) -> RenderableType:
    categories = [("cluster", cluster_text(data["cluster"])),
                  ("kept", [f"{d.reservation.node} ({d.reason})" for d in r.kept]),
                  ("failed", [d.reservation.node for d in r.failed])]
    return summary_view(categories, data["message"], "bold yellow" if r.failed else "bold")


def whatif_run_summary(r: WhatIfRunResult, mode: str, cluster: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `summary` document of `preempt -f`: what was evicted, reserved and released, what was
    applied, and how many of the workloads' pods were bound where (`expected`: how many the plan
    places)."""
    reserved = mode == "cluster"
    return {
        "workloads": r.workloads,
        "outcome": r.outcome,
        "evicted": r.evicted,
        "alreadyGone": r.already_gone,
        "pdbBlocked": [{"pod": p, "pdb": b} for p, b in r.pdb_blocked],
        "failed": [{"pod": p, "reason": why} for p, why in r.failed],
        "blocked": r.blocked,
        "leftToTheScheduler": r.left,
        "reserved": sorted(r.reserved) if reserved else [],
        "released": sorted(r.released) if reserved else [],
        "applied": r.applied,
        "bound": r.bound,
        "expected": r.expected,
        "seconds": round(r.seconds, 1),
        "mode": mode,
        "cluster": cluster,
        "message": whatif_run_closing(r, mode),
    }


def whatif_run_closing(r: WhatIfRunResult, mode: str) -> str:
    """`deployment/shop/web: 3 pods bound in 14.2s after evicting 2 pods`."""
    what = ", ".join(r.workloads)
    took = duration_text(r.seconds)
    evicted = f" after evicting {count(len(r.evicted), 'pod')}" if r.evicted else ""
    dry = dry_suffix(mode)
    n = sum(r.bound.values())
    if r.outcome == "done":
        return f"{what}: {count(n, 'pod')} bound in {took}{evicted}{dry}"
    if r.outcome == "simulated":
        made = f"room would be made for {count(r.expected, 'pod')}{evicted}" if r.evicted or r.expected \
            else "nothing to do"
        return f"{what}: {made}{', and the workloads applied' if r.applied else ''}{dry}"
    if r.outcome == "nothing-to-do":
        return f"{what}: every replica fits without evictions: nothing to do (kubectl apply -f creates it){dry}"
    if r.outcome == "unknown" and r.plan is not None:
        unknown = sum(w.unknown for w in r.plan.workloads)
        return f"{what}: {count(unknown, 'replica')} cannot be known (device data missing): nothing was done{dry}"
    if r.outcome == "infeasible" and r.plan is not None:
        # No eviction makes room: said as the plan above says it, never "nothing to do".
        pending = sum(w.pending for w in r.plan.workloads)
        wanted = sum(w.replicas for w in r.plan.workloads)
        fits = wanted - pending
        also = f"; {fits} fit{'s' if fits == 1 else ''} without evictions (kubectl apply -f creates them)" \
            if fits else ""
        return f"{what}: no eviction makes room: {pending} of {count(wanted, 'replica')} would stay Pending{also}{dry}"
    if r.outcome == "timeout":
        return f"{what}: {n} of {count(r.expected, 'pod')} bound after {took}{evicted}{dry}"
    if r.outcome == "aborted":
        return f"{what}: not confirmed, nothing was changed"
    if r.outcome == "interrupted":
        return f"{what}: interrupted{evicted or ' before evicting anything'}{dry}"
    return f"{what}: {r.outcome}{evicted}{dry}"


def whatif_run_view(data: dict[str, Any]) -> RenderableType:
    style = "bold" if data["outcome"] in ("done", "simulated", "nothing-to-do") else "bold yellow"
    categories = [
        ("cluster", cluster_text(data["cluster"])),
        ("already gone", data["alreadyGone"]),
        ("refused by a PodDisruptionBudget", [f"{b['pod']} ({b['pdb']})" for b in data["pdbBlocked"]]),
        ("not carried out (a PodDisruptionBudget forbids it: --allow-pdb-violation)", data["blocked"]),
        ("left to the scheduler's own preemption", data["leftToTheScheduler"]),
        ("failed", [f"{f['pod']}: {f['reason']}" for f in data["failed"]]),
    ]
    return summary_view(categories, data["message"], style)
