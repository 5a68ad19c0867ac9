"""What a plan leaves behind: where each victim's replacement lands, and the cluster later plans see.

Owns the run's working copy of the cluster (`Working`: the snapshot, the PDB ledger, what earlier
plans placed and evicted, which nodes changed), the second-order effects of a plan (design: "The
plan", 6 — `second_order`: each victim's replacement landed with the scheduler's filters and
scores, most important first, on the cluster with P placed and its node reserved) and how a plan
becomes part of the working cluster (`apply_plan`; seed 001, examples 1–4). It does not choose
nodes or victims, and where a replacement lands is the scheduler's answer (`land`, from the
planner's profiles). Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import msgspec

from kresched.model.objects import Node, Pod
from kresched.model.storage import StorageState
from kresched.plan.pdb import PdbLedger
from kresched.plan.placement import Landing, bound_to, held_by_volume
from kresched.plan.plans import RESERVATION_TAINT, NodeOption, Plan, Victim
from kresched.sched.framework import Snapshot
from kresched.sched.node_info import NodeInfo

__all__ = ["After", "Lander", "Mark", "Working", "apply_cluster", "apply_plan", "second_order", "with_node"]

#: Where a victim's replacement lands on a simulated cluster, with the pods nominated to each node
#: holding room: the replacement and its landing, or why it is not simulated (another scheduler's).
Lander = Callable[[Pod, Snapshot, dict[str, list[Pod]]], tuple[Pod, Landing] | str]


@dataclass
class Working:
    snapshot: Snapshot
    ledger: PdbLedger
    #: Pods placed by earlier plans of this run (by key), and victims removed.
    placed: set[str] = field(default_factory=set)
    evicted: set[str] = field(default_factory=set)
    #: The nodes whose NodeInfo `apply_plan` replaced, in order (with repeats): what changed since.
    changes: list[str] = field(default_factory=list)
    #: Told of each NodeInfo the working cluster replaces (what was kept of it may go).
    forget: Callable[[NodeInfo], None] | None = None

    def mark(self) -> Mark:
        """What `restore` takes the working cluster back to."""
        return Mark(self.snapshot, self.ledger.mark(), frozenset(self.placed), frozenset(self.evicted),
                    len(self.changes))

    def advance(self, snapshot: Snapshot, changed: Iterable[str]) -> None:
        """The working cluster is now `snapshot`, which replaced the NodeInfos of the nodes `changed`
        (in order, with repeats)."""
        changed = list(changed)
        if self.forget is not None:
            before, now = self.snapshot.by_name, snapshot.by_name
            for name in dict.fromkeys(changed):
                old = before.get(name)
                if old is not None and now.get(name) is not old:
                    self.forget(old)
        self.snapshot = snapshot
        self.changes.extend(changed)

    def restore(self, mark: Mark) -> None:
        """The working cluster as it was at `mark`: the plans applied since are given up (a gang
        that would run short). The nodes they changed count as changed again, and the budgets they
        spent as spent again, so that what was kept per node and per budget is looked at anew."""
        changed = dict.fromkeys(self.changes[mark.changes:])
        self.snapshot = mark.snapshot
        self.ledger.restore(mark.budgets)
        self.placed = set(mark.placed)
        self.evicted = set(mark.evicted)
        self.changes.extend(changed)


class Mark(NamedTuple):
    """A point `Working.restore` can go back to."""
    snapshot: Snapshot
    budgets: tuple[int, dict[str, int]]
    placed: frozenset[str]
    evicted: frozenset[str]
    changes: int


class After(NamedTuple):
    """The cluster once a plan is carried out, as `second_order` simulated it: its snapshot, and
    the reserved node's Node before the reservation taint (None: it was not tainted)."""
    snapshot: Snapshot
    untainted: Node | None


def second_order(work: Working, storage: StorageState, pod: Pod, best: NodeOption, taint: bool,
                 nominated: dict[str, list[Pod]], land: Lander) -> tuple[tuple[Victim, ...], After]:
    """Where each victim's replacement lands after P is placed, most important victim first,
    each seeing where the earlier ones went. During the operation the reserved node carries
    the reservation taint (when P tolerates it). Pods nominated to a node hold room there for
    replacements of lower or equal priority, as they do for P. Also the simulated cluster
    once they have landed (`After`), which `apply_plan` makes the working one."""
    snap = work.snapshot
    node = snap.by_name[best.node].clone()
    for v in best.victims:
        node.remove_pod(v.pod)
    node.add_pod(bound_to(pod, node.node))
    if taint:
        tainted = msgspec.structs.replace(node.node, spec=msgspec.structs.replace(
            node.node.spec, taints=(*node.node.spec.taints, RESERVATION_TAINT)))
        node = with_node(node, tainted)
    sim = snap.with_node_info(node)
    out = []
    for v in best.victims:
        v = replace(v, held_by=held_by_volume(v.pod, storage))
        if v.is_bare:
            out.append(replace(v, lands_on=None, pending_reason="bare pod: no controller recreates it"))
            continue
        landed = land(v.pod, sim, nominated)
        if isinstance(landed, str):
            out.append(replace(v, lands_on=None, pending_reason=landed))
            continue
        replacement, landing = landed
        if landing.node is None:
            out.append(replace(v, lands_on=None, pending_reason=landing.reason))
            continue
        info = sim.by_name[landing.node].clone()
        info.add_pod(bound_to(replacement, info.node))
        sim = sim.with_node_info(info)
        out.append(replace(v, lands_on=landing.node, candidates=landing.candidates, likely=landing.likely))
    return tuple(out), After(sim, snap.by_name[best.node].node if taint else None)


def apply_plan(work: Working, plan: Plan, after: After | None = None) -> None:
    """Later plans see this pod placed on its node, its victims gone (seed 001, ex. 1–4) and
    the victims' replacements where they land, taking room there: for a plan that evicts, the
    cluster `second_order` simulated (`after`), without the reservation taint."""
    if plan.node is None:
        return
    w = work
    w.placed.add(plan.pod.key)
    w.evicted.update(v.pod.key for v in plan.victims)
    if after is not None:
        snap = after.snapshot
        if after.untainted is not None:
            snap = snap.with_node_info(with_node(snap.by_name[plan.node], after.untainted))
        w.advance(snap, [plan.node, *(v.lands_on for v in plan.victims if v.lands_on is not None)])
    else:  # a pod that fits: nothing is evicted
        assert not plan.victims, "an evicting plan is applied with the cluster its simulation built"
        info = w.snapshot.by_name[plan.node].clone()
        info.add_pod(bound_to(plan.pod, info.node))
        w.advance(w.snapshot.with_node_info(info), (plan.node,))
    w.ledger.commit(v.pod for v in plan.victims)


def apply_cluster(work: Working, snapshot: Snapshot, placed: Iterable[Pod], evicted: Iterable[Pod],
                  changed: Iterable[str]) -> None:
    """Later plans see `snapshot`, where several plans were carried out at once (a pod group's
    members placed by the scheduler's pod-group cycle, its victims gone and their replacements
    landed): `placed`, `evicted` and the nodes `changed` recorded as `apply_plan` records them."""
    gone = list(evicted)
    work.placed.update(p.key for p in placed)
    work.evicted.update(p.key for p in gone)
    work.advance(snapshot, changed)
    work.ledger.commit(gone)


def with_node(info: NodeInfo, node: Node) -> NodeInfo:
    """A copy of `info` whose Node is `node`."""
    out = info.clone()
    out.node = node
    return out
