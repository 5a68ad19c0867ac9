"""What the scheduler's own per-pod preemption does to running gangs.

kube-scheduler's DefaultPreemption weighs no gang: for a pod that names no pod group it takes the
victims `SelectVictimsOnNode` and `pickOneNodeForPreemption` find, a member of a running gang like
any other pod, whatever the gang's `disruptionMode` (recorded on v1.36.2 with every gang gate on:
`single-preempts-member-pod`, `single-preempts-member-podgroup`; and it prefers a gang member to an
older single pod by its usual rules, `single-prefers-member-over-older-pod-*`). kresched's own plans
price such a victim (`plan.pdb`: the gang is a budget); where kresched says what the scheduler
itself would do — explain's preemption part, and a note on a plan that does not simply fit — this
module names the victims the scheduler would take and the running gangs they break: those left
below their minCount, and those whose `disruptionMode: PodGroup` says a member's loss disrupts the
whole group.

Owns `SchedulerPreemption` (`scheduler_choice`), `GangBreak` and `lowest_running_gang_priority`
(whether it is worth asking at all). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kresched.model.cluster import ClusterState
from kresched.model.gangs import declared_group
from kresched.model.objects import Pod
from kresched.sched.diagnosis import Diagnosis
from kresched.sched.framework import CycleState, FilterPlugin, Snapshot
from kresched.sched.preemption import Candidate, select_candidates

__all__ = ["GangBreak", "SchedulerPreemption", "gang_breaks", "lowest_running_gang_priority",
           "scheduler_choice"]


@dataclass(frozen=True)
class GangBreak:
    """A running gang some victims break: its key, minCount, running members, those evicted."""

    gang: str
    min_count: int
    running: int
    evicted: tuple[str, ...]
    disruption_mode: str = "Pod"

    @property
    def left(self) -> int:
        return self.running - len(self.evicted)

    @property
    def text(self) -> str:
        """`PodGroup ml/train (minCount 3, 3 running): 2 keep running, below its minCount`."""
        head = f"{self.gang} (minCount {self.min_count}, {self.running} running)"
        if self.left < self.min_count:
            return f"{head}: {self.left} would keep running, below its minCount: the gang stops"
        return f"{head}: its disruptionMode PodGroup says losing a member disrupts the whole group"


def gang_breaks(state: ClusterState, victims: Sequence[Pod]) -> tuple[GangBreak, ...]:
    """The running gangs evicting `victims` breaks, in the order first met."""
    hit: dict[str, list[str]] = {}
    gangs = {}
    for v in victims:
        if declared_group(v) is None or not v.spec.node_name or v.is_terminating:
            continue
        g = state.gangs.gang_of(v)
        if g is None:
            continue
        gangs[g.key] = g
        hit.setdefault(g.key, []).append(v.key)
    out = []
    for key, evicted in hit.items():
        g = gangs[key]
        running = len(g.running)
        if running - len(evicted) < g.min_count or g.disruption_mode == "PodGroup":
            out.append(GangBreak(key, g.min_count, running, tuple(evicted), g.disruption_mode))
    return tuple(out)


@dataclass(frozen=True)
class SchedulerPreemption:
    """What the scheduler's own preemption would do for one pod: the node it picks and those tied
    with it (it picks one of them at random), each with its victims, and the gangs they break."""

    candidates: tuple[Candidate, ...]
    #: Per candidate (same order): the running gangs its victims break.
    breaks: tuple[tuple[GangBreak, ...], ...]

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(c.node for c in self.candidates)

    @property
    def breaks_gangs(self) -> bool:
        return any(self.breaks)

    @property
    def note(self) -> str:
        """One sentence: the victims, where, and the gangs they break."""
        if len(self.candidates) == 1:
            c = self.candidates[0]
            where = f"evicts {', '.join(v.key for v in c.victims)} on node {c.node}"
        else:
            each = "; ".join(f"{', '.join(v.key for v in c.victims)} on node {c.node}" for c in self.candidates)
            where = f"picks one of {len(self.candidates)} tied nodes at random and evicts there: {each}"
        text = f"left to itself, the scheduler's own preemption {where}"
        broken: dict[str, GangBreak] = {}
        for bs in self.breaks:
            for b in bs:
                broken.setdefault(b.gang, b)
        if broken:
            whichever = "whichever it picks, " if len(self.candidates) > 1 and all(self.breaks) else ""
            text += (f"; {whichever}that breaks {'; '.join(b.text for b in broken.values())} — its per-pod "
                     "preemption does not weigh gangs")
        return text


def scheduler_choice(state: ClusterState, plugins: Sequence[FilterPlugin], pod: Pod, snapshot: Snapshot,
                         diag: Diagnosis, cycle: CycleState,
                         nominated: dict[str, list[Pod]] | None = None) -> SchedulerPreemption | None:
    """`pod` fits nowhere (`diag`): the scheduler's own choice of victims (`preemption.select_candidates`)
    and the gangs they break; None when it would not preempt."""
    candidates = select_candidates(plugins, pod, snapshot, diag, cycle, state.pdbs, nominated)
    if not candidates:
        return None
    return SchedulerPreemption(candidates, tuple(gang_breaks(state, c.victims) for c in candidates))


def lowest_running_gang_priority(state: ClusterState) -> int | None:
    """The lowest priority of a running member of any gang (None: no gang runs): a pod of no higher
    priority can make the scheduler break none."""
    low = None
    for g in state.gangs.gangs.values():
        for p in g.running:
            low = p.priority if low is None else min(low, p.priority)
    return low
