"""What the verbs share about lost nodes (`kresched.plan.lost`): the moment a timeline is told
from, and `explain node/NAME`."""

from __future__ import annotations

import time
from typing import Any

from kresched.cli.common import ENV, Options, emit
from kresched.model.cluster import ClusterState
from kresched.plan.lost import observed_at
from kresched.sched.profile import Profiles
from kresched.sources.decode import paused_gc

__all__ = ["explain_node", "lost_pod_parts", "now_for"]


def now_for(opts: Options, state: ClusterState) -> float:
    """"Now" for a live cluster; for a snapshot, when it was taken as well as it tells (the latest
    renewal of a kubelet's Lease), else now: a recorded timeline reads as it did when recorded."""
    if opts.snapshot is not None:
        taken = observed_at(state)
        if taken is not None:
            return taken
    return time.time()


def explain_node(opts: Options, state: ClusterState, name: str, profiles: Profiles) -> int:
    """`explain node/NAME`: whether the node is lost and, if it is, its recovery timeline."""
    from kresched.cli.progress import progress
    from kresched.plan.recovery import recovery_timeline
    from kresched.render.recovery import recovery_dict, recovery_view

    with progress(opts, f"explaining node/{name}"), paused_gc():
        recovery = recovery_timeline(state, name, now_for(opts, state), profiles)
    emit(opts.output, recovery_dict(recovery), lambda: recovery_view(recovery))
    return 0


def lost_pod_parts(opts: Options, state: ClusterState, pod_key: str,
                   profiles: Profiles) -> tuple[dict[str, Any], list[Any]]:
    """For `explain POD` when POD is bound to a lost node: `{"lostNode": {...the node..., "fate": {...}}}`
    for the JSON, and the lines for the table; nothing otherwise."""
    from kresched.plan.lost import is_lost
    from kresched.plan.recovery import recovery_timeline
    from kresched.render.recovery import fate_dict, fate_line, loss_dict, lost_line
    from kresched.render.table import Hanging

    pod = state.pod(pod_key)
    node = state.node_by_name.get(pod.node_name) if pod is not None and pod.node_name else None
    if node is None or not is_lost(node):
        return {}, []
    with paused_gc():
        recovery = recovery_timeline(state, node.name, now_for(opts, state), profiles)
    fate = next((f for f in recovery.pods if f.pod.key == pod_key), None)
    if fate is None:  # finished: nothing happens to it
        return {"lostNode": loss_dict(recovery.loss)}, [Hanging(lost_line(recovery.loss), first="  ! ")]
    lines = [Hanging(lost_line(recovery.loss), first="  ! "),
             Hanging(f"then: {fate_line(fate, node.name)}", first="    ")]
    lines += [Hanging(w, first="    • ") for w in fate.waits_for]
    args = f" {opts.source_args}" if opts.source_args else ""
    lines.append(Hanging(f"the node's whole timeline: {ENV.prog} explain node/{node.name}{args}", first="    "))
    return {"lostNode": {**loss_dict(recovery.loss), "fate": fate_dict(fate)}}, lines
