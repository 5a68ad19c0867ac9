"""Gangs in a plan: all or nothing (design: "Gangs").

Owns `plan_gang` and `plan_queue`. A gang's pending members are planned as one unit on the
planner's working cluster, each seeing the ones before it placed and their victims gone, as the
pods of a queue are. The gang is kept only when at least its minCount members would run — those
already running count — and otherwise every plan of it is given up (`Planner.rollback`): nothing
is evicted for a gang that cannot start, and its members are `infeasible` with the gang's reason
("3 of 4 members fit after evictions; a gang runs all or nothing: nothing evicted").

The victims are searched for the gang as a whole: the members are first planned in the queue's
order (priority, then age), each taking the node its own plan prefers; when that leaves the gang
short while its members are not all alike, once more with the most constrained members first
(those with the fewest nodes where they could run, with evictions), so that a member that could
run anywhere does not take the one node another member needs.

A gang is the unit of the plan, not of a filter: the filters still answer per pod. Victims that
are members of running gangs are priced by the PDB ledger (`plan.pdb`: the gang is a budget).
Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import msgspec

from kresched.model.gangs import Gang
from kresched.model.objects import Pod
from kresched.plan.plans import GangOutcome, Outcome, Plan
from kresched.sched.static import fit_shape

if TYPE_CHECKING:  # (the planner plans with this module: it is handed in)
    from kresched.plan.planner import Planner

#: A pod's gang (None: it is no gang's member), and a gang's pending members in queue order.
GangOf = Callable[[Pod], Gang | None]
PendingOf = Callable[[Gang], list[Pod]]

__all__ = ["GangPlan", "plan_gang", "plan_queue", "plan_unit", "queue_units"]


@dataclass(frozen=True)
class GangPlan:
    """A gang's pending members, planned as one (`plan_gang`)."""

    gang: Gang
    #: Each pending member's plan, in the order planned; a gang given up has every member
    #: `infeasible` with the gang's reason (see `tried` for what was tried).
    plans: tuple[Plan, ...]
    #: Members placed by these plans (`fits` or `evict`, not blocked).
    placed: int
    outcome: Outcome
    message: str
    #: A gang given up: its members' plans as they were tried (the reason each one failed).
    tried: tuple[Plan, ...] = ()

    @property
    def kept(self) -> bool:
        return self.outcome != "infeasible"


def plan_gang(planner: Planner, gang: Gang, pods: Sequence[Pod]) -> GangPlan:
    """Plan `pods` (the gang's pending members, in queue order) as one; committed on the planner's
    working cluster when the gang would run (see the module docstring), rolled back otherwise."""
    running = len(gang.running)
    checkpoint = planner.checkpoint()
    plans = [planner.plan(p, commit=True) for p in pods]
    if _placed(plans) + running >= gang.min_count:
        return _result(gang, plans, running)
    first = plans
    # (One pending member short of minCount is given up too: its running members alone do not run.)
    if len(pods) > 1 and not _all_alike(pods):
        planner.rollback(checkpoint)
        reach = {p.key: planner.reachable_nodes(p) for p in pods}
        order = sorted(pods, key=lambda p: reach[p.key])  # (stable: queue order among equals)
        if [p.key for p in order] != [p.key for p in pods]:
            plans = [planner.plan(p, commit=True) for p in order]
            if _placed(plans) + running >= gang.min_count:
                return _result(gang, plans, running, note="its members planned the most constrained first (the "
                                                          "fewest nodes where each could run)")
    planner.rollback(checkpoint)
    return _given_up(gang, first, running)


def plan_queue(planner: Planner, state_pods: Sequence[Pod], gang_of: GangOf, pending_of: PendingOf) -> Iterator[Plan]:
    """The plans of a queue of pending pods (`queue_units`): one plan per pod, a gang's members
    planned together where its first member comes, each later plan seeing the earlier ones
    carried out. `gang_of(pod)`: its gang or None; `pending_of(gang)`: the gang's pending members
    in queue order."""
    for unit in queue_units(state_pods, gang_of, pending_of):
        yield from plan_unit(planner, unit)


def plan_unit(planner: Planner, unit: Pod | tuple[Gang, list[Pod]]) -> list[Plan]:
    """The plans of one unit of `queue_units`, carried out in the planner's cluster."""
    if isinstance(unit, tuple):
        return plan_gang(planner, *unit).plans
    return [planner.plan(unit, commit=True)]


def queue_units(pods: Sequence[Pod], gang_of: GangOf, pending_of: PendingOf) -> Iterator[Pod | tuple[Gang, list[Pod]]]:
    """`pods` (a queue, in order) as the units the scheduler takes: a pod alone, or a gang's
    pending members — all of them, when its first member comes (the pod-group cycle takes every
    unscheduled pod of the group)."""
    done: set[tuple[str, str]] = set()
    for pod in pods:
        gang = gang_of(pod)
        if gang is None:
            yield pod
            continue
        ident = (gang.flavor, gang.key)
        if ident in done:
            continue
        done.add(ident)
        yield gang, pending_of(gang)


# -- the result ------------------------------------------------------------------------------------------


def _placed(plans: Sequence[Plan]) -> int:
    return sum(1 for p in plans if p.outcome != "infeasible" and not p.blocked)


def _result(gang: Gang, plans: list[Plan], running: int, note: str | None = None) -> GangPlan:
    placed = _placed(plans)
    blocked = sum(1 for p in plans if p.outcome == "evict" and p.blocked)
    evicting = [p for p in plans if p.outcome == "evict" and not p.blocked]
    victims = sum(len(p.victims) for p in evicting)
    total = len(gang.members)
    if placed == len(plans):
        head = f"all {_count(total, 'member')} of {gang.key} would run (minCount {gang.min_count}"
    else:
        head = f"{running + placed} of {_count(total, 'member')} of {gang.key} would run (minCount {gang.min_count}"
    head += f", {running} running already)" if running else ")"
    parts = []
    if placed - len(evicting):
        parts.append(f"{placed - len(evicting)} placed without evicting anything")
    if evicting:
        parts.append(f"{len(evicting)} after evicting {_count(victims, 'pod')}")
    message = head + (": " + ", ".join(parts) if parts else "")
    if placed < len(plans):
        message += f"; {len(plans) - placed} stay{'s' if len(plans) - placed == 1 else ''} Pending"
        if blocked:
            message += f" ({blocked} only {_blocked_by([p for p in plans if p.blocked])}: --allow-pdb-violation)"
    if note:
        message += f"; {note}"
    outcome: Outcome = "evict" if evicting else "fits"
    info = GangOutcome(gang.key, gang.flavor, gang.min_count, total, running, placed, True, message,
                       gang.declared_by)
    return GangPlan(gang, tuple(replace(p, gang=info) for p in plans), placed, outcome, message)


def _given_up(gang: Gang, tried: list[Plan], running: int) -> GangPlan:
    placed = _placed(tried)
    blocked = [p for p in tried if p.outcome == "evict" and p.blocked]
    evicting = any(p.outcome == "evict" and not p.blocked for p in tried)
    would = running + placed
    total = len(gang.members)
    fit = "fit after evictions" if evicting else "fit"
    if running:
        head = (f"{would} of {total} members of {gang.key} would run ({running} running, {placed} placed"
                f"{' after evictions' if evicting else ''}), minCount {gang.min_count}")
    elif would:
        head = f"{would} of {total} members of {gang.key} {fit} (minCount {gang.min_count})"
    else:
        head = f"none of the {total} members of {gang.key} fit{' as things are' if not blocked else ''} " \
               f"(minCount {gang.min_count})"
    if blocked:
        more = f", {len(blocked)} more" if would else f": {len(blocked)}"
        head += f"{more} would, only {_blocked_by(blocked)} (--allow-pdb-violation)"
    message = f"{head}; a gang runs all or nothing: nothing evicted"
    info = GangOutcome(gang.key, gang.flavor, gang.min_count, total, running, 0, False, message, gang.declared_by)
    plans = tuple(Plan(p.pod, p.priority, "infeasible", taint=p.taint, message=message, notes=p.notes, gang=info,
                       profile=p.profile, warnings=p.warnings) for p in tried)
    return GangPlan(gang, plans, 0, "infeasible", message, tuple(replace(p, gang=info) for p in tried))


def _blocked_by(plans: Sequence[Plan]) -> str:
    """What a blocked plan would have to overrule: a PodDisruptionBudget, a running gang, or both."""
    gangs = any(p.stopped_gangs for p in plans)
    pdbs = any(not v.pdb.allowed for p in plans for v in p.victims)
    if gangs and pdbs:
        return "over a PodDisruptionBudget and by stopping a running gang"
    return "by stopping a running gang" if gangs else "over a PodDisruptionBudget"


def _all_alike(pods: Sequence[Pod]) -> bool:
    """Whether every member asks the filters the same (then no order places more of them)."""
    first = _likeness(pods[0])
    return all(_likeness(p) == first for p in pods[1:])


def _likeness(pod: Pod) -> bytes:
    spec = pod.spec
    return fit_shape(pod) + msgspec.json.encode((spec.affinity, spec.topology_spread_constraints, spec.volumes,
                                                 spec.resource_claims, spec.scheduler_name))


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"
