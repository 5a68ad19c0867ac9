"""What the scheduler's preempt extenders make of a tier's options (framework/preemption
`callExtenders`, `sched.extender.process_preemption`), for the planner.

Owns `vet_options`: each option's node and victims go to the extenders; a node they leave out is
out of the tier, with why; where they agree to other victims than kresched's, the option is found
again among those of them the tier may evict (the planner's `among`): kresched never evicts a pod
the extenders did not agree to, nor one its own tiers forbid, and still evicts no more than needed.
A node they add is not taken (kresched plans only the nodes its own search found). An error of a
non-ignorable extender stops preemption, as it stops the scheduler's. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kresched.model.objects import Pod
from kresched.plan.choice import Reason
from kresched.plan.plans import NodeOption
from kresched.sched.framework import Snapshot

if TYPE_CHECKING:
    from kresched.sched.extender import Extenders

__all__ = ["LEFT_OUT", "vet_options"]

LEFT_OUT = "the scheduler's preempt extenders left this node out"


def vet_options(exts: Extenders, pod: Pod, snapshot: Snapshot, options: list[NodeOption],
                among: Callable[[str, set[str]], NodeOption | str],
                reasons: dict[str, Reason]) -> tuple[list[NodeOption], str]:
    """The options the extenders leave (in `options`' order), and "" — or none and the error
    that stops preemption. `among(node, uids)`: the node's option among the victims with those
    UIDs, or why there is none. Why a node is out goes into `reasons`."""
    from kresched.sched.extender import process_preemption

    asked = {o.node: (tuple(v.pod for v in o.victims), o.violations) for o in options}
    answer = process_preemption(exts, pod, asked, snapshot)
    if answer.error:
        return [], answer.error
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
    return kept, ""
