"""Carrying a gang's plan out (`kresched preempt` of a gang, and each gang of a `reconcile` pass).

Owns `preempt_gang`, the flow of design "Carrying a plan out" for the pending members of one gang
(design "Gangs": all or nothing), planned together by `plan.gang`:
1. re-read the live state and plan the gang's pending members again, as one (`plan_pending`); a
   different plan is confirmed again. A gang given up (fewer than minCount members would run,
   those running counted) evicts nothing: outcome `infeasible`, with the gang's reason;
2. reserve every node where the plan places a member (the annotation names the gang,
   `podgroup/ml/train`; the taint only when every member placed there tolerates it). A node
   another run has reserved stops the run before anything is evicted: the gang's room is made
   whole or not at all;
3. evict every member's victims, least important first, member after member (`preempt`'s
   eviction: the Eviction API, 429 retried until the eviction deadline; DELETE only over a
   PodDisruptionBudget with `allow_pdb_violation`). A victim that is the replacement of an earlier
   one (it does not exist yet) is left: the reservation keeps it off a reserved node it does not
   tolerate, else the scheduler's own preemption must make that room. A victim a budget kept
   refusing: the gang is
   planned again on the live state, and the run goes on only when that plan keeps the gang with
   the nodes already reserved and without the refused pods;
4. wait until every member the plan places is bound — one deadline for the gang — and say which
   were bound, where, and which were not (`partial`: some bound, some not; `timeout`: none). A
   member bound to another node the room was made on is bound as planned: the scheduler takes
   alike members in its own order;
5. ALWAYS release every reservation — on success, failure, timeout, Ctrl-C and SIGTERM (the
   release runs with the signals deferred, as `preempt`'s).

Every API call goes through a `ClusterApi`; a dry run swaps the client, not this code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kresched.execute.api import ClusterApi
from kresched.execute.events import Event, Reporter, count
from kresched.execute.preempt import PreemptOptions, _evict_one, _signals_blocked, release_outcome
from kresched.execute.recorder import NO_RECORDER, Recorder
from kresched.execute.reservation import ReservedByAnother, foreign_taint_refusal, reserve_patch
from kresched.execute.writes import patch_node_with_retry
from kresched.model.cluster import ClusterState
from kresched.model.gangs import Gang
from kresched.plan.plans import RESERVATION_TAINT, Plan, Victim
from kresched.plan.queue import gang_lookups, plan_pending
from kresched.sched.taint_toleration import tolerations_tolerate_taint

#: How the planner names a victim that is the replacement of an earlier one (`placement.replacement_of`).
REPLACEMENT = "~replacement"

__all__ = ["GangResult", "MemberResult", "gang_reservation_ref", "placed_members", "preempt_gang", "stopped_by",
           "victims_of"]


def gang_reservation_ref(gang: Gang) -> str:
    """What a reservation for a gang records (`kresched.io/reserved-for`): kubectl's TYPE/NAME with
    its namespace, `podgroup/ml/train` (a pod's is `ml/train-0`)."""
    return f"podgroup/{gang.namespace}/{gang.name}"


def placed_members(plans: list[Plan]) -> list[Plan]:
    """The plans that place their member: `fits`, or `evict` not blocked by a budget."""
    return [p for p in plans if p.node and (p.outcome == "fits" or (p.outcome == "evict" and not p.blocked))]


def stopped_by(plans: list[Plan], evicted: list[str]) -> list[tuple[str, int, int, tuple[str, ...]]]:
    """The running gangs the victims in `evicted` stopped (evicted past the gang's budget: its
    running members fall below minCount), each once: (gang, running members, minCount, its
    members evicted)."""
    done = set(evicted)
    out: dict[str, tuple[str, int, int, tuple[str, ...]]] = {}
    for p in plans:
        for key, vs in p.stopped_gangs.items():
            gone = tuple(v.pod.key for v in vs if v.pod.key in done)
            if gone:
                before = out.get(key, (key, vs[0].pdb.gang_running, vs[0].pdb.gang_min_count, ()))
                out[key] = (*before[:3], before[3] + gone)
    return list(out.values())


def victims_of(plans: list[Plan]) -> int:
    """How many pods carrying out `plans` evicts."""
    return sum(len(p.victims) for p in plans if p.outcome == "evict" and not p.blocked)


@dataclass
class MemberResult:
    """One pending member: where the plan places it, and how its wait ended."""

    pod: str
    planned: str | None
    #: bound | bound-elsewhere | deleted | timeout | simulated | not-placed (its plan places it
    #: nowhere: the gang runs without it) | pending (not waited for: the run stopped before)
    outcome: str = "pending"
    node: str | None = None


@dataclass
class GangResult:
    """What a gang's run did (the eviction lists are `_evict_one`'s, as `PreemptResult`'s)."""

    gang: Gang
    plans: list[Plan]
    #: bound | partial | timeout | deleted | simulated | nothing-to-do | infeasible | blocked |
    #: gave-up | aborted | interrupted
    outcome: str = "pending"
    #: Per pending member, in the order planned.
    members: dict[str, MemberResult] = field(default_factory=dict)
    #: Members running before the run (they count toward minCount).
    running: int = 0
    evicted: list[str] = field(default_factory=list)
    already_gone: list[str] = field(default_factory=list)
    pdb_blocked: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    #: Victims that are replacements of earlier victims (not created yet): left, not evicted.
    left: list[str] = field(default_factory=list)
    #: The nodes reserved for the gang; those whose reservation is gone again.
    reserved: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self.running = len(self.gang.running)
        self.set_plans(self.plans)

    def set_plans(self, plans: list[Plan]) -> None:
        """The plans carried out (re-validation may replace them), and a `MemberResult` per member."""
        self.plans = plans
        placed = {p.key for p in placed_members(plans)}
        self.members = {p.key: MemberResult(p.key, p.node if p.key in placed else None,
                                            "pending" if p.key in placed else "not-placed") for p in plans}

    @property
    def key(self) -> str:
        return self.gang.key

    @property
    def min_count(self) -> int:
        return self.gang.min_count

    @property
    def bound(self) -> list[MemberResult]:
        return [m for m in self.members.values() if m.outcome in ("bound", "bound-elsewhere")]

    @property
    def waited_for(self) -> list[MemberResult]:
        return [m for m in self.members.values() if m.planned is not None]


def preempt_gang(api: ClusterApi, gang: Gang, plans: list[Plan], options: PreemptOptions, report: Reporter,
                 confirm_changed: Callable[[list[Plan]], bool] = lambda p: False,
                 clock: Callable[[], float] = time.monotonic, result: GangResult | None = None,
                 recorder: Recorder = NO_RECORDER) -> GangResult:
    """Carry out `plans` (the gang's pending members, planned together; see the module docstring).
    `confirm_changed` is asked when re-validation gives a different plan. Pass `result` in to keep
    what was done when the run is interrupted (KeyboardInterrupt and `Terminated` propagate, after
    the reservations are released)."""
    started = clock()
    result = result if result is not None else GangResult(gang, plans)
    try:
        plans = _revalidate(api, result, options, report, confirm_changed)
        if result.outcome != "pending":
            return result
        try:
            _reserve_all(api, result, plans, report, recorder)
            if result.outcome != "pending":
                return result
            _evict_all(api, result, plans, options, report, recorder)
            if result.pdb_blocked:
                plans = _replan_without_blocked(api, result, plans, options, report, recorder)
                if result.outcome != "pending":
                    return result
            _wait_for_members(api, result, plans, options, report, clock, started, recorder)
        finally:
            if result.reserved:
                with _signals_blocked():
                    for node in list(result.reserved):
                        outcome, _ = release_outcome(api, node, report, pod_key=gang_reservation_ref(gang),
                                                     recorder=recorder)
                        if outcome == "released":
                            result.released.append(node)
    finally:
        result.seconds = clock() - started
    return result


def _evict_all(api: ClusterApi, result: GangResult, plans: list[Plan], options: PreemptOptions, report: Reporter,
               recorder: Recorder) -> None:
    """Every member's victims, member after member, each member's least important first (if the run
    is cut short, the most important victims are still running); each victim once."""
    for p in plans:
        if p.outcome != "evict" or p.blocked:
            continue
        for v in reversed(p.victims):
            if v.pod.key.endswith(REPLACEMENT):
                _leave_replacement(v, p, result, report)
            elif v.pod.key not in result.evicted and v.pod.key not in result.already_gone:
                _evict_one(api, v, p, options, report, result, recorder, gang=result.key)  # type: ignore[arg-type]


def _leave_replacement(v: Victim, p: Plan, result: GangResult, report: Reporter) -> None:
    """A victim that is the replacement of an earlier member's victim (its controller's new pod,
    which the plan lands on a node a later member needs): it does not exist yet, nothing to evict.
    The node's reservation keeps it off, unless it tolerates the taint (or the node is not
    reserved); then the scheduler's own preemption must make that room."""
    key = v.pod.key.removesuffix(REPLACEMENT)
    result.left.append(key)
    kept_off = v.node in result.reserved and not tolerations_tolerate_taint(v.pod.spec.tolerations,
                                                                            RESERVATION_TAINT)
    if kept_off:
        text = f"the replacement of {key} is kept off node {v.node} by the reservation: nothing to evict there for it"
    else:
        text = (f"the replacement of {key} does not exist yet: if it takes room on node {v.node}, only the scheduler's "
                f"own preemption can make it again for {p.key}")
    report(Event("left", text, {"pod": key, "node": v.node, "gang": result.key, "keptOff": kept_off},
                 "info" if kept_off else "warn"))


def _live_gang(state: ClusterState, gang: Gang) -> Gang | None:
    return state.gangs.gangs.get((gang.flavor, gang.namespace, gang.name))


def _plan_live(state: ClusterState, gang: Gang, options: PreemptOptions) -> list[Plan]:
    """The gang's pending members on `state`, planned together (as `plan` plans them)."""
    pending = gang_lookups(state)[1](gang)
    return plan_pending(state, pending, options.plan)


def _shape(plans: list[Plan]) -> list[tuple]:
    return [(p.key, p.outcome, p.node, p.blocked, [v.pod.key for v in p.victims]) for p in plans]


def _revalidate(api: ClusterApi, result: GangResult, options: PreemptOptions, report: Reporter,
                confirm_changed: Callable[[list[Plan]], bool]) -> list[Plan]:
    key = result.key
    state = api.read_state()
    live = _live_gang(state, result.gang)
    if live is None:
        result.outcome = "deleted"
        report(Event("gang-deleted", f"no member of {key} exists any more: nothing to do", {"gang": key}, "warn"))
        return result.plans
    result.gang = live
    result.running = len(live.running)
    if not live.pending:
        result.outcome = "nothing-to-do"
        report(Event("bound", f"every member of {key} is bound already: nothing to do",
                     {"gang": key, "running": result.running}, "ok"))
        return result.plans
    fresh = _plan_live(state, live, options)
    if _shape(fresh) == _shape(result.plans):
        placed = count(len(placed_members(fresh)), "member")
        report(Event("revalidated", f"plan still holds on the live state: {placed} of {key} placed, "
                                    f"{count(victims_of(fresh), 'victim')}",
                     {"gang": key, "nodes": sorted({p.node for p in placed_members(fresh) if p.node})}))
    else:
        info = fresh[0].gang
        report(Event("replanned", f"the cluster changed; new plan: {info.message if info else fresh[0].message}",
                     {"gang": key, "kept": info.kept if info else None}, "warn"))
        if info is not None and info.kept and victims_of(fresh) and not confirm_changed(fresh):
            result.set_plans(fresh)
            result.outcome = "blocked"
            report(Event("aborted", "the new plan was not confirmed: nothing was changed", {"gang": key}, "warn"))
            return fresh
    result.set_plans(fresh)
    info = fresh[0].gang
    if info is None or not info.kept:
        result.outcome = "infeasible"
        report(Event("infeasible", info.message if info else fresh[0].message, {"gang": key}, "error"))
    elif not victims_of(fresh):
        result.outcome = "nothing-to-do"
        report(Event("fits", f"{info.message}: no eviction needed, the scheduler should bind them", {"gang": key},
                     "ok"))
    return fresh


def _reserve_all(api: ClusterApi, result: GangResult, plans: list[Plan], report: Reporter,
                 recorder: Recorder) -> None:
    """Reserve every node a member is placed on (see the module docstring); a node reserved by
    another run stops the run (`blocked`) before anything is evicted."""
    ref = gang_reservation_ref(result.gang)
    by_node: dict[str, list[Plan]] = {}
    for p in placed_members(plans):
        by_node.setdefault(p.node or "", []).append(p)
    for node_name, members in sorted(by_node.items()):
        names = [p.key for p in members]
        refusal = foreign_taint_refusal(api.get_node(node_name))
        if refusal is not None:
            report(refusal)
            continue
        intolerant = [p.key for p in members if not p.taint]
        if intolerant:
            does = "does" if len(intolerant) == 1 else "do"
            report(Event("reserve-skipped", f"{', '.join(intolerant)} (of {result.key}) {does} not tolerate "
                                            f"CriticalAddonsOnly, so node {node_name} is not reserved: another pod may "
                                            "take the room first",
                         {"node": node_name, "gang": result.key, "pods": intolerant}, "warn"))
            continue
        result.reserved.append(node_name)  # before the write: an interrupted run still releases it
        try:
            patched = patch_node_with_retry(api, node_name,
                                            lambda n: reserve_patch(n, ref, datetime.now(UTC), add_taint=True))
        except ReservedByAnother as exc:
            result.reserved.remove(node_name)
            result.outcome = "blocked"
            report(Event("reserve-conflict", f"{exc.message}: nothing was evicted for {result.key} (a gang's room is "
                                             "made whole or not at all)", {"node": node_name, "gang": result.key},
                         "error"))
            return
        report(Event("reserved", f"reserved node {node_name} for {result.key} ({', '.join(names)}; taint "
                                 "CriticalAddonsOnly=kresched:NoSchedule)",
                     {"node": node_name, "gang": result.key, "pods": names}, "ok"))
        recorder.reserved_for_gang(patched or node_name, result.key, names)


def _replan_without_blocked(api: ClusterApi, result: GangResult, plans: list[Plan], options: PreemptOptions,
                            report: Reporter, recorder: Recorder) -> list[Plan]:
    """A PodDisruptionBudget kept refusing some victims: plan the gang again on the live state (the
    victims that did go are gone). When that keeps the gang on nodes already reserved (or needing no
    reservation) without the refused pods, evict what it needs (once) and go on; otherwise stop
    (`gave-up`) instead of waiting out bindings that cannot all come."""
    key = result.key
    refused = {k for k, _ in result.pdb_blocked}
    state = api.read_state()
    live = _live_gang(state, result.gang)
    if live is None or not live.pending:
        return plans  # the wait reports it
    fresh = _plan_live(state, live, options)
    info = fresh[0].gang
    needed = {p.node for p in placed_members(fresh) if p.taint} - {None}
    reservable = set(result.reserved) | {p.node for p in placed_members(plans)}
    victims = [(p, v) for p in fresh if p.outcome == "evict" and not p.blocked for v in p.victims]
    if info is not None and info.kept and needed <= reservable and not any(v.pod.key in refused for _, v in victims):
        report(Event("replanned", f"without the refused pods: {info.message}",
                     {"gang": key, "victims": [v.pod.key for _, v in victims]}, "warn"))
        _evict_all(api, result, fresh, options, report, recorder)
        if not any(k not in refused for k, _ in result.pdb_blocked):
            # The members bound meanwhile keep their plans: waiting for them finds them bound.
            again = {p.key for p in fresh}
            merged = [*fresh, *(p for p in placed_members(plans) if p.key not in again)]
            result.set_plans(merged)
            return merged
    result.outcome = "gave-up"
    why = info.message if info is not None and not info.kept else "its plan needs them, or other nodes"
    report(Event("no-room", f"no room for {key} without {', '.join(sorted(refused))}, which a PodDisruptionBudget "
                            f"keeps refusing ({why}): not waiting for the bindings",
                 {"gang": key, "refused": sorted(refused)}, "error"))
    return plans


def _wait_for_members(api: ClusterApi, result: GangResult, plans: list[Plan], options: PreemptOptions,
                      report: Reporter, clock: Callable[[], float], started: float, recorder: Recorder) -> None:
    """Until every member the plans place is bound, one deadline for them all; each member's end
    is reported as it is known, then the gang's outcome."""
    key = result.key
    placed = placed_members(plans)
    if not placed:  # (re-planned: its running members reach minCount, nothing left to place)
        result.outcome = "nothing-to-do"
        return
    where = ", ".join(f"{p.pod.name}→{p.node}" for p in placed)
    report(Event("waiting", f"waiting up to {options.timeout_seconds:.0f}s for the scheduler to bind "
                            f"{count(len(placed), 'member')} of {key} (planned: {where})",
                 {"gang": key, "pods": {p.key: p.node for p in placed}, "timeout": options.timeout_seconds}))
    deadline = clock() + options.timeout_seconds
    # The room is the gang's: alike members may take it in another order than planned.
    room = {p.node for p in placed}
    for p in placed:
        member = result.members[p.key]
        waited = api.wait_for_binding(p.pod, max(deadline - clock(), 0.0),
                                      lambda text, k=p.key: report(Event("watch", text, {"pod": k, "gang": key})),
                                      planned=p.node)
        member.node = waited.node
        data = {"pod": p.key, "gang": key, "node": waited.node}
        if waited.kind == "bound":
            member.outcome = "bound" if waited.node in room else "bound-elsewhere"
            if waited.node == p.node:
                report(Event("bound", f"{p.key} is bound to {waited.node}", data, "ok"))
            elif member.outcome == "bound":
                report(Event("bound", f"{p.key} is bound to {waited.node} (planned: {p.node}; either is room made for "
                                      f"{key})", {**data, "planned": p.node}, "ok"))
            else:
                report(Event("bound-elsewhere", f"{p.key} is bound to {waited.node}, not to the planned {p.node}",
                             {**data, "planned": p.node}, "warn"))
        elif waited.kind == "deleted":
            member.outcome = "deleted"
            report(Event("pod-deleted", f"{p.key} was deleted while waiting", data, "warn"))
        elif waited.kind == "simulated":
            member.outcome = "simulated"
        else:
            member.outcome = "timeout"
            report(Event("timeout", f"{p.key} is still Pending after the timeout", data, "error"))
        if waited.kind in ("bound", "timeout"):
            evicted = [v.pod.key for v in p.victims if v.pod.key in result.evicted]
            recorder.made_room(p.pod, p.node or "", evicted, waited.node if waited.kind == "bound" else None,
                               clock() - started, gang=key, room=room)
    outcomes = [result.members[p.key].outcome for p in placed]
    bound = len(result.bound)
    if all(o == "simulated" for o in outcomes):
        result.outcome = "simulated"
    elif bound == len(placed):
        result.outcome = "bound"
    elif all(o == "deleted" for o in outcomes):
        result.outcome = "deleted"
    else:
        result.outcome = "partial" if bound else "timeout"
    if result.outcome in ("partial", "timeout"):
        runs = result.running + bound
        verdict = "it runs" if runs >= result.min_count else "it does not run"
        report(Event(f"gang-{result.outcome}", f"{bound} of the {count(len(placed), 'member')} of {key} the plan "
                                               f"places bound by the timeout ({runs} running, minCount "
                                               f"{result.min_count}: {verdict})",
                     {"gang": key, "bound": [m.pod for m in result.bound],
                      "notBound": [m.pod for m in result.waited_for if m.outcome not in ("bound", "bound-elsewhere")]},
                     "error"))
