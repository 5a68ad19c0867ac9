"""Rendering a lost node's recovery (`plan.recovery.Recovery`) and the one line that says a node is
lost wherever it appears (`lost_line`). The JSON contract and the readable view; never prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kresched.model.objects import start_text
from kresched.plan.lost import NodeLoss, duration_text
from kresched.plan.recovery import PodFate, Recovery
from kresched.render.common import cluster_text, count
from kresched.render.events import dry_suffix
from kresched.render.table import Columns, Hanging

if TYPE_CHECKING:
    from rich.console import RenderableType

    from kresched.execute.outofservice import OutOfServiceResult

__all__ = ["LOST_CONSEQUENCE", "fate_dict", "fate_line", "loss_dict", "lost_line", "out_of_service_summary",
           "out_of_service_view", "recovery_dict", "recovery_view"]

#: What a lost node means for anything that would evict there.
LOST_CONSEQUENCE = ("its kubelet does not report, so evictions there never complete by themselves: deleted pods "
                    "stay Terminating")


def _time(t: float | None) -> str | None:
    return start_text(t) if t is not None else None


def loss_dict(loss: NodeLoss) -> dict[str, Any]:
    """`{"node", "lost", "ready", "readyReason", "readySince", "taints": [{"key", "effect", "timeAdded"}],
    "lease": {"renewTime", "leaseDurationSeconds", "silentSeconds"} | null, "outOfService"}`."""
    return {
        "node": loss.node,
        "lost": loss.is_lost,
        "ready": loss.ready or None,
        "readyReason": loss.ready_reason,
        "readySince": _time(loss.ready_since),
        "taints": [{"key": t.key, "effect": t.effect, "timeAdded": t.time_added} for t in loss.taints],
        "lease": None if loss.lease_renewed is None else {
            "renewTime": _time(loss.lease_renewed), "leaseDurationSeconds": loss.lease_seconds,
            "silentSeconds": round(loss.silent_seconds) if loss.silent_seconds is not None else None},
        "outOfService": loss.out_of_service,
    }


def lost_line(loss: NodeLoss) -> str:
    """`node/X is lost (Ready Unknown ...; tainted unreachable; Lease last renewed 5m ago): its kubelet ...`."""
    return f"node/{loss.node} is {loss.summary()}: {LOST_CONSEQUENCE}"


def fate_dict(f: PodFate) -> dict[str, Any]:
    """One pod's fate: `{"pod", "controller", "outcome", "evicted", "evictedAt", "toleratesSeconds",
    "landsOn", "candidates", "pendingReason", "replacements": {pod: node|null}, "volumes", "waitsFor",
    "comesBack"}`."""
    return {
        "pod": f.pod.key,
        "controller": f.pod.controller_ref,
        "outcome": f.outcome,
        "evicted": f.evicted,
        "evictedAt": _time(f.evicted_at),
        "toleratesSeconds": f.tolerates_seconds,
        "landsOn": f.lands_on,
        "candidates": list(f.candidates),
        "pendingReason": f.pending_reason,
        "replacements": dict(f.replacements),
        "volumes": list(f.volumes),
        "waitsFor": list(f.waits_for),
        "comesBack": f.comes_back,
    }


def recovery_dict(r: Recovery) -> dict[str, Any]:
    """`{**loss_dict, "asOf", "pods": [fate...], "outOfServicePods": [fate...] | null, "speedUp": [...],
    "warnings"}`: the timeline as it stands and, when the node is not out of service yet, as it
    would be with the out-of-service taint."""
    out = {**loss_dict(r.loss), "asOf": _time(r.now), "pods": [fate_dict(f) for f in r.pods],
           "outOfServicePods": [fate_dict(f) for f in r.out_of_service] if r.out_of_service is not None else None,
           "speedUp": list(r.speed_up)}
    if r.warnings:
        out["warnings"] = list(r.warnings)
    return out


def _when(f: PodFate, now: float) -> str:
    if f.outcome == "stays":
        return "never"
    if f.evicted_at is None:
        return "once tainted" if not f.evicted else "evicted"
    delta = f.evicted_at - now
    rel = "now" if abs(delta) < 1 else f"in {duration_text(delta)}" if delta > 0 else f"{duration_text(-delta)} ago"
    return f"{start_text(f.evicted_at)[11:]} ({rel})"


def fate_line(f: PodFate, node: str) -> str:
    """What becomes of the pod after it is evicted, in a few words."""
    if f.outcome == "stays":
        return f"stays: it tolerates {node}'s NoExecute taints for ever"
    if f.outcome in ("replaced", "recreated"):
        verb = "replaced" if f.outcome == "replaced" else "recreated"
        if f.replacements:
            where = ", ".join(f"{k} on {v}" if v else f"{k} Pending" for k, v in sorted(f.replacements.items()))
            text = f"{verb}: {where}"
        elif f.lands_on is not None:
            tied = f" (tied: {', '.join(c for c in f.candidates if c != f.lands_on)})" if len(f.candidates) > 1 else ""
            text = f"{verb}, lands on {f.lands_on}{tied}"
        elif f.pending_reason is not None:
            text = f"{verb}, stays Pending: {f.pending_reason}"
        else:
            text = verb
        return text + ("; NOT BACK BY ITSELF" if f.waits_for else "")
    return {"gone": "gone for good: nothing recreates it", "with-node": "back with the node",
            "controller": f"up to its {f.pod.controller.kind if f.pod.controller else 'controller'}"}[f.outcome]


def recovery_view(r: Recovery) -> RenderableType:
    from rich.console import Group
    from rich.text import Text

    loss = r.loss
    parts: list[RenderableType] = [Text(f"node/{loss.node}", style="bold")]
    style = "bold red" if loss.is_lost else "yellow" if loss.not_ready else "green"
    parts.append(Hanging(Text(loss.summary(), style=style), first="  "))
    if loss.is_lost:
        parts.append(Hanging(f"{LOST_CONSEQUENCE}.", first="  "))
    elif loss.not_ready:
        parts.append(Hanging("its kubelet still reports: pods evicted there terminate and are replaced as usual",
                             first="  "))
    else:
        parts.append(Hanging("nothing to recover: the node is not lost", first="  "))
        return Group(*parts)
    for w in r.warnings:
        parts.append(Hanging(Text(f"warning: {w}", style="yellow"), first="  "))
    parts += [Text(""), Text(f"Recovery timeline (as of {start_text(r.now)}):", style="bold")]
    parts.append(_timeline_table(r.pods, r.now, loss.node) if r.pods else Hanging("no pods on the node", first="  "))
    stuck = r.stuck
    if stuck:
        parts += [Text(""), Text(f"Not back by themselves: {count(len(stuck), 'pod')}", style="bold")]
        for f in stuck:
            parts += [Hanging(Text(f.pod.key), first="  ")] + [Hanging(w, first="    • ") for w in f.waits_for]
    if r.out_of_service is not None and r.pods:
        parts += [Text(""), Text(f"With {loss.node} out of service (kresched drain {loss.node} --out-of-service):",
                                 style="bold")]
        parts.append(_timeline_table(r.out_of_service, r.now, loss.node))
    if r.speed_up:
        parts += [Text(""), Text("What would speed it up:", style="bold")]
        parts += [Hanging(s) for s in r.speed_up]
    return Group(*parts)


def _timeline_table(fates: tuple[PodFate, ...], now: float, node: str) -> Columns:
    from rich.text import Text

    table = Columns("EVICTED", "POD", "THEN", wrap_last=True)
    for f in fates:
        then = fate_line(f, node)
        table.add_row(_when(f, now), f.pod.key, Text(then, style="red") if f.waits_for else then)
    return table


def out_of_service_summary(results: list[OutOfServiceResult], mode: str, cluster: dict[str, Any] | None = None,
                           refused: str | None = None) -> dict[str, Any]:
    """`drain --out-of-service`'s last word: `{"nodes": [{"node", "tainted", "alreadyTainted", "gone",
    "landed": {controller: [node...]}, "predicted": {controller: [node|null...]}, "asPredicted", "waiting"}],
    "complete", "mode", "cluster", "message"}`."""
    nodes = [{"node": r.node, "tainted": r.tainted, "alreadyTainted": r.already, "gone": r.gone,
              "landed": r.landed, "predicted": r.predicted, "asPredicted": not r.surprises, "waiting": r.waiting,
              "seconds": round(r.seconds, 1)} for r in results]
    complete = bool(results) and all(r.complete for r in results) and refused is None
    if refused is not None:
        message = refused
    else:
        which = ", ".join(f"node/{r.node}" for r in results)
        bound = sum(len(v) for r in results for v in r.landed.values())
        gone = sum(len(r.gone) for r in results)
        message = f"{which} out of service: {count(gone, 'pod')} gone, {count(bound, 'new pod')} bound"
        if any(r.surprises for r in results):
            message += " (not all where predicted)"
        waiting = sum(len(r.waiting) for r in results)
        if waiting:
            message += f"; still waiting for {count(waiting, 'thing')} at the timeout"
        nodes_ = " ".join(r.node for r in results)
        message += f"; remove the taint once the machine is back: kresched untaint {nodes_} --out-of-service"
    return {"nodes": nodes, "complete": complete, "mode": mode, "cluster": cluster,
            "message": message + dry_suffix(mode)}


def out_of_service_view(results: list[OutOfServiceResult], data: dict[str, Any]) -> RenderableType:
    """Predicted against actual, per controller, then what is still awaited, then the closing line."""
    from rich.console import Group
    from rich.text import Text

    parts: list[RenderableType] = []
    t = Columns("NODE", "CONTROLLER", "PREDICTED", "BOUND TO", wrap_last=True)
    for r in results:
        for g, predicted in sorted(r.predicted.items()):
            landed = r.landed.get(g, [])
            as_predicted = sorted(landed) == sorted(n for n in predicted if n is not None)
            t.add_row(r.node, g, ", ".join(n or "Pending" for n in predicted),
                      Text(", ".join(landed) or "-", style="green" if as_predicted else "yellow"))
    if t:
        parts += [Text("Predicted against actual:"), t]
    waiting = [w for r in results for w in r.waiting]
    if waiting:
        parts.append(Text(f"still waiting: {'; '.join(waiting)}", style="yellow"))
    if data.get("cluster"):
        parts.append(Text(f"cluster: {cluster_text(data['cluster'])}", style="dim"))
    parts.append(Text(data["message"], style="bold" if data["complete"] else "bold yellow"))
    return Group(*parts)
