"""What the scheduler's preempt extenders make of a tier's options (framework/preemption
`callExtenders`, `sched.extender.process_preemption`), for the planner.

Owns `vet_options`: each option's node and victims go to the extenders; a node they leave out is
out of the tier, with why; where they agree to other victims than kresched's, the option is found
again among those of them the tier may evict (the planner's `among`): kresched never evicts a pod
the extenders did not agree to, nor one its own tiers forbid, and still evicts no more than needed.
A node they add is not taken (kresched plans only the nodes its own search found). An error of a
non-ignorable extender stops preemption, as it stops the scheduler's.

Also `admitted_options`: the options whose node the filter extenders accept for the pod. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kresched.model.objects import Pod
from kresched.plan.choice import Reason
from kresched.plan.plans import NodeOption
from kresched.sched.diagnosis import Diagnosis
from kresched.sched.framework import Snapshot

if TYPE_CHECKING:
    from kresched.sched.extender import Extenders

__all__ = ["LEFT_OUT", "admitted_options", "vet_options"]

LEFT_OUT = "the scheduler's preempt extenders left this node out"


def vet_options(exts: Extenders, pod: Pod, snapshot: Snapshot, options: list[NodeOption],
                among: Callable[[str, set[str]], NodeOption | str],
                reasons: dict[str, Reason]) -> tuple[list[NodeOption], str, tuple[str, ...]]:
    """The options the extenders leave (in `options`' order), and "" — or none and the error
    that stops preemption —, and the ignorable extenders skipped. `among(node, uids)`: the node's
    option among the victims with those UIDs, or why there is none. Why a node is out goes into
    `reasons`."""
    from kresched.sched.extender import process_preemption

    asked = {o.node: (tuple(v.pod for v in o.victims), o.violations) for o in options}
    answer = process_preemption(exts, pod, asked, snapshot)
    if answer.error:
        return [], answer.error, answer.notes
    kept: list[NodeOption] = []
    for opt in options:
        got = answer.victims.get(opt.node)
        if got is None:
            reasons[opt.node] = LEFT_OUT
            continue
        agreed = {p.uid for p in got[0]}
        if agreed == {p.uid for p in asked[opt.node][0]}:
            kept.append(opt)
            continue
        again = among(opt.node, agreed)
        if isinstance(again, str):
            reasons[opt.node] = f"the victims the scheduler's preempt extenders agree to do not make room: {again}"
        else:
            kept.append(again)
    return kept, "", answer.notes


def admitted_options(exts: Extenders, pod: Pod, snapshot: Snapshot, options: list[NodeOption],
                     reasons: dict[str, Reason]) -> tuple[list[NodeOption], str, tuple[str, ...]]:
    """The options whose node the filter extenders accept for `pod` (kresched's own rule, better
    than the scheduler's: it asks its filter extenders only about feasible nodes, so it may
    preempt on a node they then refuse, and the pod stays Pending there). One filter pass over
    every option's node, as the scheduler's next attempt would make once the victims are gone (an
    extender is sent the nodes, or their names, never the pods on them: the answer is the same
    as it will be then). Returns them, and "" — or none and the error of a non-ignorable
    extender —, and the ignorable extenders skipped."""
    from kresched.sched.extender import pass_extenders

    nodes = [o.node for o in options]
    diag = pass_extenders(exts, pod, snapshot, Diagnosis(len(snapshot.node_infos), feasible=nodes,
                                                         feasible_set=frozenset(nodes)))
    if diag.error:
        return [], diag.error, diag.notes
    kept = []
    for opt in options:
        if opt.node in diag.feasible_set:
            kept.append(opt)
            continue
        st = diag.node_to_status.get(opt.node)
        why = ", ".join(st.reasons) if st is not None else "left out without a reason"
        reasons[opt.node] = f"the scheduler's filter extenders refuse the node for this pod: {why}"
    return kept, "", diag.notes
