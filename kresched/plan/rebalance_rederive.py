"""A rebalance move's prediction, re-derived right before its eviction from the cluster as it is.

Owns `plan_wave`. The plan (`kresched.plan.rebalance.plan_rebalance`) predicts each move on the
cluster as the earlier moves would leave it, each replacement on its predicted node: the first of
the nodes tied for it. Carried out, a replacement may take another tied node, and a later move's
prediction that rested on that tie-break no longer holds; moves of several workloads evicted at
once may be placed by the scheduler in any order. So the execution layer
(`kresched.execute.rebalance`) carries the moves out in *waves*: before each it re-reads the
cluster and asks `plan_wave` which of the moves ready to go (the next move of each workload, in
the plan's order) to evict now, and where each replacement may land:

1. The first ready move is judged alone on the cluster as it is, by the plan's own rules
   (`Objective.stale`: would its objective still propose it; `Round.judge`: does its landing still
   help — with the round's destinations the plan kept on the move). It is *dropped* when not, with
   why; otherwise it runs with its prediction re-derived: *retargeted* when the nodes tied for its
   replacement are no longer the plan's.
2. Each further ready move joins the wave only if the wave's moves hold together: their pods
   evicted at once, the scheduler places their replacements one at a time in any order, each on
   any node tied at its turn, and every such course is simulated (`_Joint`, at most
   `JOINT_LANDINGS` landings) — in every one, each replacement must land where its objective
   wants it. A move's predicted set is then every node its replacement takes in some course, its
   predicted node the one of the plan's order with the first tie-break. A move that does not join
   waits for the next wave (where it may be first), as does one whose PDB is another's of the
   wave (its eviction would wait for the other's replacement anyway).

The PDBs and the limits are not judged again: the plan spent a unit of each budget per move, and
the eviction API judges at the eviction. A running gang's budget is (the eviction API does not
count it): a move whose eviction would now stop its pod's gang (a member went since the plan) is
dropped, with why, and one that would stop it evicted with the wave's other members of the gang
waits for the next wave.

Also owns `ends_as_planned`: whether the round ended in a state the plan predicted — its ties
broken some way, not necessarily the first (the after-table's). Pure: no I/O, no clock, no
randomness.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.placement import bound_to, replacement_of
from kresched.plan.rebalance import objectives_of
from kresched.plan.rebalance_plans import Move, RebalancePlan
from kresched.plan.rebalance_round import Round, gang_refusal
from kresched.sched.framework import Snapshot

__all__ = ["JOINT_LANDINGS", "Prediction", "Wave", "as_planned", "ends_as_planned", "plan_wave"]

#: The most replacement landings the simulation of one wave's courses may take; a move whose
#: joining would take more waits for a later wave (its prediction could not be checked).
JOINT_LANDINGS = 256


@dataclass(frozen=True)
class Prediction:
    """Where a move's replacement may land, re-derived right before its eviction."""

    move: Move
    #: The predicted node (the first of `candidates`); None when the move is dropped.
    to: str | None
    #: Every node the replacement may land on (tied at the top score, and with the other moves of
    #: its wave, in any order the scheduler places them).
    candidates: tuple[str, ...] = ()
    #: Why the move no longer helps (it is not carried out), or None.
    dropped: str | None = None
    #: The pod is gone, or another pod took its name: nothing to evict.
    gone: bool = False
    #: The scheduler would score only a sample of the feasible nodes: `to` is the likely one.
    likely: bool = False
    #: The pods evicted at once with it.
    together: tuple[str, ...] = ()

    @property
    def retargeted(self) -> bool:
        """Its predicted set is not the plan's."""
        return self.to is not None and set(self.candidates) != set(_planned(self.move))


@dataclass(frozen=True)
class Wave:
    #: The moves to evict now, at once, each with its prediction, in the plan's order.
    run: tuple[Prediction, ...] = ()
    #: The moves that no longer help, or whose pod is gone: not carried out.
    dropped: tuple[Prediction, ...] = ()


def as_planned(move: Move, together: tuple[str, ...] = ()) -> Prediction:
    """The plan's own prediction (a dry run, where nothing lands, re-derives nothing)."""
    return Prediction(move, move.to, _planned(move), likely=move.likely, together=together)


def plan_wave(state: ClusterState, plan: RebalancePlan, ready: Sequence[Move],
              budget: int = JOINT_LANDINGS) -> Wave:
    """The next wave (the module's docstring): of `ready` — at most one move per workload, in the
    plan's order — the moves to evict now with their predictions, and those dropped. A move in
    neither waits. `state`: the cluster as it is now, the moves before these carried out."""
    r = Round(state, plan.options)
    r.objectives = objectives_of(plan.options)
    running: list[tuple[Move, Pod]] = []
    run: list[Prediction] = []
    dropped: list[Prediction] = []
    for m in ready:
        pod = state.pod(m.pod.key)
        if pod is None or (m.pod.uid and pod.uid and pod.uid != m.pod.uid):
            dropped.append(Prediction(m, None, dropped="the pod was already gone", gone=True))
            continue
        if pod.metadata.deletion_timestamp is not None:
            dropped.append(Prediction(m, None, dropped="it is already terminating (evicted or deleted by another)"))
            continue
        check = r.ledger.check(pod)
        if check.stops_gang:
            dropped.append(Prediction(m, None, dropped=gang_refusal(check)))
            continue
        if not running:
            p = _alone(r, m, pod)
            if p.dropped is not None:
                dropped.append(p)
            else:
                running.append((m, pod))
                run = [p]
            continue
        if m.pdb is not None and any(x.pdb == m.pdb for x, _ in running):
            continue  # its eviction would wait for the other's replacement anyway: the next wave
        if check.gang is not None and \
                sum(r.ledger.gang(x) == check.gang for _, x in running) >= r.ledger.budget(check.gang):
            continue  # evicted with the wave's other members it would stop the gang: the next wave
        joint = _Joint(r, [*running, (m, pod)], budget).predictions()
        if joint is not None:
            running.append((m, pod))
            run = joint
    keys = [m.pod.key for m, _ in running]
    return Wave(tuple(replace(p, together=tuple(k for k in keys if k != p.move.pod.key)) for p in run),
                tuple(dropped))


def _planned(move: Move) -> tuple[str, ...]:
    return move.candidates or (move.to,)


def _as_the_round_judged(r: Round, m: Move) -> None:
    """The move's objective judges its landing by the round's destinations the plan kept."""
    r.objectives[m.objective].destinations = m.destinations


def _alone(r: Round, m: Move, pod: Pod) -> Prediction:
    """Rule 1: the move judged alone on the cluster as it is."""
    _as_the_round_judged(r, m)
    objective = r.objectives[m.objective]
    why = objective.stale(r, pod, m.source)
    if why is not None:
        return Prediction(m, None, dropped=why)
    simulated = r.land(pod, m.source)
    why, _, _ = r.judge(pod, m.source, m.objective, simulated)
    if why is not None:
        return Prediction(m, None, dropped=why)
    landing = simulated[0]
    assert landing.node is not None
    return Prediction(m, landing.node, landing.candidates or (landing.node,), likely=landing.likely)


class _Joint:
    """Rule 2: every course the scheduler may take with the wave's replacements, their pods all
    evicted: at each step any replacement not yet placed goes next, onto any node tied for it.
    Courses that reach the same placements share their rest (`seen`)."""

    def __init__(self, r: Round, moves: list[tuple[Move, Pod]], budget: int) -> None:
        self.r = r
        self.moves = moves
        self.budget = budget
        self.replacements = [replacement_of(pod) for _, pod in moves]
        #: Per move, the nodes its replacement takes in some course, in the order first found.
        self.found: list[dict[str, None]] = [{} for _ in moves]
        self.likely = [False] * len(moves)
        self.seen: set[frozenset[tuple[int, str]]] = set()
        self.landings = 0
        snap = r.snap
        for m, pod in moves:
            info = snap.by_name[m.source].clone()
            info.remove_pod(pod)
            snap = snap.with_node_info(info)
        self.base = snap

    def predictions(self) -> list[Prediction] | None:
        """Each move's prediction when every course lands each replacement where its objective
        wants it (within the budget); None otherwise."""
        if not self._explore((), self.base):
            return None
        return [Prediction(m, next(iter(found)), tuple(sorted(found)), likely=likely)
                for (m, _), found, likely in zip(self.moves, self.found, self.likely, strict=True)]

    def _explore(self, placed: tuple[tuple[int, str], ...], snap: Snapshot) -> bool:
        key = frozenset(placed)
        if key in self.seen:
            return True
        self.seen.add(key)
        done = {i for i, _ in placed}
        r = self.r
        for i, (m, pod) in enumerate(self.moves):
            if i in done:
                continue
            self.landings += 1
            if self.landings > self.budget:
                return False
            _as_the_round_judged(r, m)
            replacement = self.replacements[i]
            landing = r.place(replacement, snap)
            if landing.node is None:
                return False
            self.likely[i] = self.likely[i] or landing.likely
            for node in (landing.node, *(c for c in landing.candidates if c != landing.node)):
                why, after, _ = r.judge(pod, m.source, m.objective, (landing, snap, replacement), node)
                if why is not None or after is None:
                    return False
                self.found[i].setdefault(node)
                if not self._explore((*placed, (i, node)), after):
                    return False
        return True


def ends_as_planned(state: ClusterState, plan: RebalancePlan, landed: Mapping[str, str]) -> bool:
    """Whether the round ended as planned: every move carried out (`landed`: pod key → the node
    its replacement landed on), and the plan's own simulation, on `state` (the cluster it was made
    on), with each tie broken some way, puts each workload's replacements on those nodes (the
    replicas of a workload are interchangeable: two that swapped tied nodes end as planned)."""
    moves = plan.moves
    if any(m.pod.key not in landed for m in moves):
        return False
    r = Round(state, plan.options)
    wanted = Counter((_workload(m), landed[m.pod.key]) for m in moves)
    #: (move index, the landings still to place) known to lead nowhere: courses that placed the
    #: same replacements on the same nodes share what follows.
    failed: set[tuple[int, frozenset[tuple[tuple[tuple[str, str], str], int]]]] = set()

    def reach(i: int, snap: Snapshot, left: Counter[tuple[tuple[str, str], str]]) -> bool:
        if i == len(moves):
            return True
        key = (i, frozenset(item for item in left.items() if item[1]))
        if key in failed:
            return False
        m = moves[i]
        landing, without, replacement = r.land(m.pod, m.source, snap)
        for node in landing.candidates or ((landing.node,) if landing.node else ()):
            if left[(_workload(m), node)] <= 0:
                continue
            info = without.by_name[node].clone()
            info.add_pod(bound_to(replacement, info.node))
            left[(_workload(m), node)] -= 1
            if reach(i + 1, without.with_node_info(info), left):
                return True
            left[(_workload(m), node)] += 1
        failed.add(key)
        return False

    return reach(0, r.snap, wanted)


def _workload(m: Move) -> tuple[str, str]:
    return (m.pod.namespace, m.pod.controller_ref or m.pod.key)
