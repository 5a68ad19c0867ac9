"""Controlled rescheduling (seed 003): which running pods to move, and where their replacements land.

Owns `plan_rebalance`. Three objectives, tried in this order in each round (the most urgent first),
each a rule that proposes pods, and one simulation (`kresched.plan.rebalance_round`) that decides
whether a move helps:

1. **violations** (`kresched.plan.violations`) — a constraint of the pod no longer holds on its node.
2. **preferences** (`kresched.plan.preferences`) — another node satisfies more of its preferences.
3. **utilisation** (`kresched.plan.utilisation`) — the descheduler's LowNodeUtilization: pods leave
   nodes above the target thresholds for the nodes below the thresholds when the round began,
   until those are at the target.

Rounds repeat until one proposes nothing, so that a second plan over the predicted result
proposes nothing either; a pod moves at most once per plan.

Deliberate differences from the descheduler: every move is simulated (the descheduler's NodeFit
only asks whether *some* node fits, not where the replacement lands — descheduler#1584), so a pod
whose replacement would land back, on a node that is not a destination of the round, or above the
target, stays; default thresholds are cpu/memory/pods 20 % and targets 50 % (the descheduler has
none); unschedulable nodes are never destinations. Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from kresched.model.cluster import ClusterState
from kresched.plan.objectives import OBJECTIVES
from kresched.plan.preferences import SHAPE_TRIES, Preferences
from kresched.plan.rebalance_plans import RebalanceOptions, RebalancePlan
from kresched.plan.rebalance_round import Objective, Round
from kresched.plan.utilisation import LowNodeUtilization, node_utilisation
from kresched.plan.violations import Violations

__all__ = ["MAX_ROUNDS", "objectives_of", "plan_rebalance"]

#: Upper bound on rounds (each round after the first only runs when the previous one moved a pod).
MAX_ROUNDS = 10


def plan_rebalance(state: ClusterState, opts: RebalanceOptions = RebalanceOptions()) -> RebalancePlan:
    return _plan(state, opts)


def _plan(state: ClusterState, opts: RebalanceOptions, prune: bool = True,
          shape_tries: int | None = SHAPE_TRIES) -> RebalancePlan:
    """`prune=False` turns off the exact shortcuts (tests prove they change no plan); `shape_tries`
    None the preferences' per-shape budget, which is not exact."""
    p = Round(state, opts, prune)
    p.objectives = objectives_of(opts, shape_tries)
    before = {i.name: node_utilisation(i) for i in p.snap.node_infos}
    for _ in range(MAX_ROUNDS):
        made = 0
        for objective in p.objectives.values():
            made += objective.run(p)
        if made == 0:
            break
    after = {i.name: node_utilisation(i) for i in p.snap.node_infos}
    moved = {m.pod.key for m in p.moves}
    skipped = tuple(s for s in p.skipped if s.pod.key not in moved)
    profiles = opts.profiles
    warnings = tuple(dict.fromkeys(w for name in p.placers for w in profiles.warnings_for(profiles.by_name[name])
                                   if name in profiles.by_name))
    return RebalancePlan(tuple(p.moves), skipped, tuple(p.limits.values()), before, after, warnings, opts)


def objectives_of(opts: RebalanceOptions, shape_tries: int | None = SHAPE_TRIES) -> dict[str, Objective]:
    """The objectives `opts` asks for, by name, in the order each round tries them (fresh: they
    hold the round's memos)."""
    made_by: dict[str, Objective] = {"violations": Violations(), "preferences": Preferences(shape_tries),
                                     "utilisation": LowNodeUtilization()}
    return {name: made_by[name] for name in OBJECTIVES if name in opts.objectives}
