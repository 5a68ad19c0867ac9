"""One pass of the critical-pod rescheduler (seed 000, "Rescheduler control loop"), for a CronJob.

Owns `reconcile`:
1. take the Lease lock; if another live holder has it, say so and stop (exit 0);
2. clean stale reservations (as `untaint` does: pod bound or gone, or older than the TTL);
3. find the pending critical pods — system-node-critical / system-cluster-critical, the legacy
   annotation, or priority ≥ `min_priority` — that the scheduler has marked Unschedulable for at
   least `min_pending_seconds` (its own preemption gets the first chance), optionally in one
   namespace;
4. plan them together in priority order and carry out each feasible plan as `preempt` does,
   within an eviction budget (`max_evictions`) and the pass's deadline. The first pod the budget
   or the deadline cannot cover stops the acting: it and every later pod that needs evictions
   are left to the next pass (a lower-priority pod does not jump the queue, and nothing is
   half-done: a pod is acted on only when all of its evictions fit in the budget). A gang is one
   unit (design "Gangs"): its pending members are planned together where its first member comes
   (every pending member, not only those ready), carried out together (`execute.gang`) only when
   the evictions of all of them fit in what is left of the budget — else it is skipped whole and
   listed (`gangs`) — and a gang that cannot start (fewer than minCount members would run) is
   listed with why, nothing evicted for it;
5. with `rebalance` (`reconcile --rebalance`), when nothing stopped the acting: one bounded
   rebalance pass on the state as it is now (`plan_rebalance`, at most the evictions left of
   `max_evictions`), carried out as `kresched rebalance --yes` does, within the pass's deadline;
6. report every pod it could not help, with the reason — also the ones it did not reach because
   the pass failed or was interrupted. Nothing is remembered between passes, so a pod left
   Pending is simply found again by the next one (seed 002's warning about control loops that
   lose work).
Always releases the Lease (and, through `preempt`, every reservation it made) — on success,
failure, Ctrl-C and SIGTERM; a failed release is a failed action. Errors that stop the pass
(the cluster unreachable or refusing access) are kept in the result, not raised, so that the
caller can still report what was done; the caller decides the exit code.

Must not: print, or keep state between passes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from kresched.errors import KreschedError
from kresched.execute.api import ApiFailure, ClusterApi
from kresched.execute.events import Event, Reporter, count
from kresched.execute.gang import GangResult, placed_members, preempt_gang, stopped_by, victims_of
from kresched.execute.lease import acquire, holder_identity, release
from kresched.execute.preempt import PreemptOptions, PreemptResult, _signals_blocked, preempt
from kresched.execute.rebalance import RebalanceOptions as RebalanceExecOptions
from kresched.execute.rebalance import RebalanceResult, rebalance
from kresched.execute.recorder import NO_RECORDER, Recorder
from kresched.execute.reservation import parse_time
from kresched.execute.untaint import untaint
from kresched.model.cluster import ClusterState
from kresched.model.lease import Lease
from kresched.model.objects import Pod
from kresched.plan.plans import Plan, PlanOptions
from kresched.plan.queue import plan_pending, queue_key
from kresched.plan.rebalance import plan_rebalance
from kresched.plan.rebalance_plans import RebalanceOptions

__all__ = ["GangTurn", "ReconcileOptions", "ReconcileResult", "reconcile", "select_pending"]


@dataclass(frozen=True)
class ReconcileOptions:
    lease_namespace: str = "kube-system"
    lease_name: str = "kresched"
    identity: str = field(default_factory=holder_identity)
    #: The whole pass must end within this; the Lease lasts a minute longer.
    deadline_seconds: float = 240.0
    reservation_ttl_seconds: float = 600.0
    min_priority: int | None = None
    min_pending_seconds: float = 60.0
    namespace: str | None = None
    max_evictions: int = 10
    plan: PlanOptions = field(default_factory=PlanOptions)
    #: Per pod: how long to wait for the binding (never past the pass's deadline).
    bind_timeout_seconds: float = 120.0
    #: Per victim: how long to keep retrying an eviction a PodDisruptionBudget refuses.
    eviction_deadline_seconds: float = 30.0
    #: Kept free at the end of the deadline to remove a reservation and release the Lease.
    margin_seconds: float = 5.0
    #: A pod is acted on only if at least this much of the deadline (after the margin) is left:
    #: evicting with no time to see the pod bound only disrupts.
    min_act_seconds: float = 10.0
    #: `--rebalance`: after the pending pods, one rebalance pass with these options (None: off).
    rebalance: RebalanceOptions | None = None
    #: The critical-pods policy (KreschedConfiguration `reconcile.criticalPods`): off, pending
    #: critical pods are left to the scheduler and listed as such.
    critical_pods: bool = True
    #: Workloads moving at once in the rebalance pass.
    rebalance_parallel: int = 5

    @property
    def lease_seconds(self) -> int:
        return int(self.deadline_seconds) + 60


@dataclass(frozen=True)
class GangTurn:
    """What a pass did with one gang: its pending members, how it ended, and why."""

    gang: str
    members: tuple[str, ...]
    #: bound | partial | timeout | simulated | deleted | gave-up | blocked | infeasible (it cannot
    #: start: nothing evicted) | nothing-to-do | skipped (the budget or the deadline: nothing evicted)
    outcome: str
    reason: str
    min_count: int = 0
    #: Members bound by the pass.
    bound: int = 0


@dataclass
class ReconcileResult:
    locked: bool = False
    lock_holder: str | None = None
    lease_released: bool = False
    #: Nodes whose stale reservation was removed.
    cleaned: list[str] = field(default_factory=list)
    #: Pods kresched acted for (reserved a node or evicted for), in the order it did.
    helped: list[str] = field(default_factory=list)
    #: (pod, node) for each pod seen bound at the end of its turn.
    bound: list[tuple[str, str]] = field(default_factory=list)
    #: (pod, why) for each pending critical pod left Pending by this pass.
    still_pending: list[tuple[str, str]] = field(default_factory=list)
    evictions: int = 0
    #: (pod, from, predicted node, landed on, status) for each move of the rebalance pass.
    moves: list[tuple[str, str, str, str | None, str]] = field(default_factory=list)
    #: Why the rebalance pass did not run or stopped early (None: it ran, or was not asked for).
    rebalance_skipped: str | None = None
    #: Each gang the pass planned, in the order planned (`GangTurn`).
    gangs: list[GangTurn] = field(default_factory=list)
    #: The running gangs its evictions stopped (`execute.gang.stopped_by`; only over a budget, with
    #: --allow-pdb-violation).
    gangs_stopped: list[tuple[str, int, int, tuple[str, ...]]] = field(default_factory=list)
    #: One line per action that failed ("evict shop/web-1: ...", "release the Lease ...").
    failed_actions: list[str] = field(default_factory=list)
    #: What stopped the pass early (the cluster unreachable, access refused), if anything.
    error: KreschedError | None = None
    seconds: float = 0.0


def select_pending(state: ClusterState, now: datetime, options: ReconcileOptions) -> tuple[list[Pod], list[Pod]]:
    """(ready to help, too young): pending critical pods, highest priority first."""
    ready: list[Pod] = []
    young: list[Pod] = []
    for p in state.pods:
        if not p.is_pending or (options.namespace and p.namespace != options.namespace):
            continue
        if not (p.is_critical or (options.min_priority is not None and p.priority >= options.min_priority)):
            continue
        since = _unschedulable_since(p)
        if since is None:
            young.append(p)  # the scheduler has not (yet) said it cannot place it
            continue
        (ready if (now - since).total_seconds() >= options.min_pending_seconds else young).append(p)
    return sorted(ready, key=queue_key), sorted(young, key=queue_key)


def _unschedulable_since(p: Pod) -> datetime | None:
    cond = p.condition("PodScheduled")
    if cond is None or cond.status != "False" or cond.reason != "Unschedulable":
        return None
    return parse_time(cond.last_transition_time)


def _why_young(p: Pod, now: datetime, options: ReconcileOptions) -> str:
    since = _unschedulable_since(p)
    if since is None:
        return "the scheduler has not marked it Unschedulable (yet): nothing to do until it has tried"
    return (f"Unschedulable for {_dur((now - since).total_seconds())}, less than --min-pending "
            f"({_dur(options.min_pending_seconds)}): left to the scheduler's own preemption for now")


def _dur(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    if seconds < 120:
        return f"{seconds:.0f}s" if seconds >= 10 or seconds == int(seconds) else f"{seconds:.1f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def reconcile(api: ClusterApi, options: ReconcileOptions, report: Reporter,
              now: Callable[[], datetime] = lambda: datetime.now(UTC),
              clock: Callable[[], float] = time.monotonic,
              result: ReconcileResult | None = None, recorder: Recorder = NO_RECORDER) -> ReconcileResult:
    """One pass. Fills and returns `result` (pass one in to keep what was done when the pass is
    interrupted: KeyboardInterrupt and `Terminated` propagate, after the Lease is released).
    `recorder` records the Kubernetes Events of every eviction and reservation."""
    started = clock()
    result = result if result is not None else ReconcileResult()
    try:
        lock = acquire(api, options.lease_namespace, options.lease_name, options.identity, options.lease_seconds,
                       now())
    except KreschedError as exc:
        result.error = exc
        result.seconds = clock() - started
        return result
    if not lock.acquired:
        result.lock_holder = lock.holder
        until = f" until {lock.expires:%H:%M:%SZ}" if lock.expires else ""
        report(Event("lock-held", f"another pass holds the Lease {options.lease_namespace}/{options.lease_name} "
                                  f"({lock.holder}{until}): nothing to do", {"holder": lock.holder}))
        result.seconds = clock() - started
        return result
    result.locked = True
    if lock.taken_over_from:
        report(Event("lock-taken-over", f"took over the expired Lease from {lock.taken_over_from}",
                     {"previous": lock.taken_over_from}, "warn"))
    assert lock.lease is not None
    try:
        _Pass(api, options, report, now, clock, started, result, recorder).run()
    except KreschedError as exc:
        result.error = exc
    finally:
        # A second Ctrl-C or a SIGTERM must not cut the release short (it is raised afterwards).
        with _signals_blocked():
            _release_lease(api, lock.lease, options, report, now, result)
        result.seconds = clock() - started
    return result


def _release_lease(api: ClusterApi, lease: Lease, options: ReconcileOptions, report: Reporter,
                   now: Callable[[], datetime], result: ReconcileResult) -> None:
    name = f"{options.lease_namespace}/{options.lease_name}"
    try:
        released = release(api, lease, now())
    except KreschedError as exc:
        result.failed_actions.append(f"release the Lease {name}: {exc.message}")
        report(Event("lease-release-failed", f"could not release the Lease {name}: {exc.message} (it expires "
                                             f"{options.lease_seconds}s after it was taken)", {"lease": name}, "error"))
        return
    result.lease_released = True
    if not released:
        report(Event("lease-lost", f"the Lease {name} was taken over by another pass before this one ended",
                     {"lease": name}, "warn"))


@dataclass
class _Pass:
    api: ClusterApi
    options: ReconcileOptions
    report: Reporter
    now: Callable[[], datetime]
    clock: Callable[[], float]
    started: float
    result: ReconcileResult
    recorder: Recorder = NO_RECORDER
    #: Why acting stopped (the budget or the deadline): every later pod needing evictions waits.
    stopped: str | None = None

    def run(self) -> None:
        api, options, result = self.api, self.options, self.result
        state = api.read_state()
        cleaned = untaint(api, state, self.now(), options.reservation_ttl_seconds,
                          lambda e: self.report(e) if e.action != "kept" else None, recorder=self.recorder)
        result.cleaned = [d.reservation.node for d in cleaned.removed]
        result.failed_actions.extend(f"release the reservation on {d.reservation.node}" for d in cleaned.failed)
        if cleaned.removed:
            state = api.read_state()
        ready, young = select_pending(state, self.now(), options)
        if not options.critical_pods:
            result.still_pending.extend((p.key, "the critical-pods policy is off (reconcile.criticalPods: false)")
                                        for p in (*ready, *young))
            ready, young = [], []
        result.still_pending.extend((p.key, _why_young(p, self.now(), options)) for p in young)
        if ready:
            self.help_pending(state, ready)
        if options.rebalance is not None:
            self.rebalance_pass(options.rebalance)

    def rebalance_pass(self, ropts: RebalanceOptions) -> None:
        """One rebalance pass within what is left of the eviction budget and the deadline."""
        options, result = self.options, self.result
        if self.stopped is not None:
            result.rebalance_skipped = f"not run: {self.stopped}"
            return
        budget_left = options.max_evictions - result.evictions
        left = options.deadline_seconds - (self.clock() - self.started) - options.margin_seconds
        if budget_left <= 0 or left < options.min_act_seconds:
            result.rebalance_skipped = ("not run: the eviction budget of this pass is used up" if budget_left <= 0
                                        else "not run: too little of the pass's deadline is left")
            self.report(Event("rebalance-skipped", f"rebalance {result.rebalance_skipped}", {}, "warn"))
            return
        cap = budget_left if ropts.max_moves is None else min(ropts.max_moves, budget_left)
        state = self.api.read_state()
        plan = plan_rebalance(state, replace(ropts, max_moves=cap))
        self.report(Event("rebalance-plan", f"rebalance: {len(plan.moves)} move(s) planned",
                          {"moves": [{"pod": m.pod.key, "from": m.source, "to": m.to, "candidates": list(m.candidates),
                                      "objective": m.objective, "reason": m.reason, "pdb": m.pdb}
                                     for m in plan.moves]}))
        if not plan.moves:
            return
        done = RebalanceResult()
        try:
            rebalance(self.api, plan, RebalanceExecOptions(options.rebalance_parallel, left), self.report,
                      self.clock, done, recorder=self.recorder, state=state)
        finally:
            for m in plan.moves:
                o = done.outcomes.get(m.pod.key)
                status = o.status if o is not None else "not-started"
                result.moves.append((m.pod.key, m.source, o.predicted if o else m.to, o.landed_on if o else None,
                                     status))
                if status in ("moved", "timeout", "simulated"):
                    result.evictions += 1
                if status in ("blocked", "failed", "timeout"):
                    result.failed_actions.append(f"move {m.pod.key}: {o.message if o else status}")

    def help_pending(self, state: ClusterState, ready: list[Pod]) -> None:
        units = _units(plan_pending(state, ready, self.options.plan))
        for i, unit in enumerate(units):
            try:
                if unit[0].gang is not None:
                    self.help_gang(state, unit)
                else:
                    self.help(unit[0])
            except BaseException as exc:
                # Lose no pod (seed 002): the one being helped and every later one are reported.
                why = "stopped" if isinstance(exc, Exception) else "was interrupted"
                for plan in unit:
                    self._left(plan.key, f"the pass {why} while acting for it; the next pass picks it up")
                for later in units[i + 1:]:
                    for plan in later:
                        self._left(plan.key, f"not reached: the pass {why}; the next pass picks it up")
                raise

    def help_gang(self, state: ClusterState, plans: list[Plan]) -> None:
        """A gang's pending members, planned together: carried out together when the gang would run
        and all of its evictions fit in what is left of the budget, else listed whole."""
        options, result = self.options, self.result
        info = plans[0].gang
        gang = state.gangs.gang_of(plans[0].pod)
        assert info is not None
        assert gang is not None
        keys = tuple(p.key for p in plans)
        # Members the scheduler has not marked yet (listed as such) are the gang's now: one unit.
        result.still_pending = [(k, why) for k, why in result.still_pending if k not in keys]

        def listed(outcome: str, why: str, each: bool = True) -> None:
            if each:
                result.still_pending.extend((k, why) for k in keys)
            result.gangs.append(GangTurn(info.key, keys, outcome, why, info.min_count))

        if not info.kept:
            listed("infeasible", info.message)
            self.report(Event("cannot-help", f"{info.key}: {info.message}", {"gang": info.key, "pods": list(keys)},
                              "warn"))
            return
        needs = victims_of(plans)
        if not needs:
            result.still_pending.extend((p.key, p.message) for p in plans)
            listed("nothing-to-do", info.message, each=False)
            return
        if self.stopped is not None:
            listed("skipped", self.stopped)
            return
        left = options.deadline_seconds - (self.clock() - self.started) - options.margin_seconds
        if left < options.min_act_seconds:
            self.stopped = (f"the pass's deadline ({_dur(options.deadline_seconds)}) was reached; the next pass "
                            "picks it up")
            listed("skipped", self.stopped)
            self.report(Event("deadline-reached", f"{info.key}: too little of the pass's deadline is left to help it; "
                                                  "the next pass picks it up", {"gang": info.key}, "warn"))
            return
        budget_left = options.max_evictions - result.evictions
        if needs > budget_left:
            self.stopped = (f"the eviction budget of this pass is used up (--max-evictions {options.max_evictions}); "
                            "the next pass picks it up")
            why = (f"its gang {info.key} needs {count(needs, 'eviction')} for "
                   f"{count(len(placed_members(plans)), 'member')} but only {budget_left} of --max-evictions "
                   f"{options.max_evictions} are left in this pass: a gang is helped whole or not at all; the next "
                   "pass picks it up")
            listed("skipped", why)
            self.report(Event("gang-skipped", f"{info.key}: {why}", {"gang": info.key, "pods": list(keys),
                                                                     "needs": needs, "left": budget_left}, "warn"))
            return
        # One deadline for the gang: every victim's PDB refusing until its deadline, then the
        # bindings, within what is left.
        evict_seconds = math.floor(min(options.eviction_deadline_seconds, left / (2 * needs)) * 10) / 10
        bind_seconds = math.floor(min(options.bind_timeout_seconds, left - evict_seconds * needs) * 10) / 10
        done = GangResult(gang, plans)
        try:
            preempt_gang(self.api, gang, plans, PreemptOptions(options.plan, bind_seconds, evict_seconds), self.report,
                         confirm_changed=lambda new, b=budget_left: victims_of(new) <= b, result=done,
                         recorder=self.recorder)
        except ApiFailure as exc:  # a write or read that kept failing (5xx): this gang only
            result.failed_actions.append(f"act for {info.key}: {exc.message}")
            listed("failed", f"could not act for its gang {info.key} ({exc.message}); the next pass tries again")
            self.report(Event("failed", f"could not act for {info.key}: {exc.message}", {"gang": info.key}, "error"))
            return
        finally:
            result.evictions += len(done.evicted)
        self._record_gang(done, bind_seconds, budget_left)

    def _record_gang(self, done: GangResult, bind_seconds: float, budget_left: int) -> None:
        result, key = self.result, done.key
        if done.reserved or done.evicted or done.already_gone or done.failed or done.pdb_blocked:
            result.helped.extend(m.pod for m in done.waited_for)
        result.gangs_stopped.extend(stopped_by(done.plans, done.evicted))
        result.failed_actions.extend(f"evict {pod}: {why}" for pod, why in done.failed)
        result.failed_actions.extend(f"evict {pod}: PodDisruptionBudget {pdb} kept refusing" for pod, pdb
                                     in done.pdb_blocked)
        result.failed_actions.extend(f"release the reservation on {n}" for n in done.reserved
                                     if n not in done.released)
        messages = {p.key: p.message for p in done.plans}
        info = done.plans[0].gang if done.plans else None
        for m in done.members.values():
            if m.outcome in ("bound", "bound-elsewhere"):
                result.bound.append((m.pod, m.node or ""))
            elif m.outcome == "deleted" or done.outcome == "deleted":
                continue
            elif m.outcome == "timeout":
                result.still_pending.append((m.pod, f"{count(len(done.evicted), 'pod')} evicted for its gang {key} "
                                                    f"but it was not bound within {_dur(bind_seconds)}; the next pass "
                                                    "looks again"))
            elif m.outcome == "simulated":
                result.still_pending.append((m.pod, f"dry run: would wait for the scheduler to bind it to {m.planned} "
                                                    f"(with its gang {key})"))
            elif m.outcome == "not-placed" or done.outcome == "nothing-to-do":
                result.still_pending.append((m.pod, messages.get(m.pod) or done.outcome))
            elif done.outcome == "gave-up":
                refused = ", ".join(k for k, _ in done.pdb_blocked)
                result.still_pending.append((m.pod, f"a PodDisruptionBudget kept refusing {refused}, and without them "
                                                    f"there is no room for its gang {key}; the next pass looks again"))
            elif done.outcome == "blocked" and victims_of(done.plans) > budget_left:
                result.still_pending.append((m.pod, f"the cluster changed and its gang {key} now needs "
                                                    f"{count(victims_of(done.plans), 'eviction')}, more than the "
                                                    f"{budget_left} left in this pass; the next pass picks it up"))
            elif done.outcome == "blocked":
                result.still_pending.append((m.pod, f"a node of its gang {key}'s room is reserved by kresched for "
                                                    "another pod; the next pass looks again (`kresched untaint` "
                                                    "removes a reservation whose run is gone)"))
            else:  # infeasible now (the gang cannot start)
                result.still_pending.append((m.pod, info.message if info is not None else done.outcome))
        bound = len(done.bound)
        placed = len(done.waited_for)
        if done.outcome in ("bound", "partial", "timeout"):
            runs = done.running + bound
            why = f"{bound} of {count(placed, 'member')} bound ({runs} running, minCount {done.min_count}: " \
                  f"{'it runs' if runs >= done.min_count else 'it does not run'})"
        elif done.outcome == "simulated":
            why = f"dry run: {count(placed, 'member')} would be bound after evicting {count(len(done.evicted), 'pod')}"
        else:
            why = next((w for k, w in reversed(result.still_pending) if k in done.members), done.outcome)
        result.gangs.append(GangTurn(key, tuple(done.members), done.outcome, why, done.min_count, bound))

    def _left(self, key: str, why: str) -> None:
        if key not in {k for k, _ in self.result.still_pending} and key not in {k for k, _ in self.result.bound}:
            self.result.still_pending.append((key, why))

    def help(self, plan: Plan) -> None:
        options, result, key = self.options, self.result, plan.key
        if plan.outcome == "fits":
            result.still_pending.append((key, plan.message))
            return
        if plan.outcome in ("infeasible", "unknown") or plan.blocked:
            result.still_pending.append((key, plan.message))
            self.report(Event("cannot-help", f"{key}: {plan.message}", {"pod": key, "outcome": plan.outcome}, "warn"))
            return
        if self.stopped is not None:
            result.still_pending.append((key, self.stopped))
            return
        left = options.deadline_seconds - (self.clock() - self.started) - options.margin_seconds
        if left < options.min_act_seconds:
            self.stopped = (f"the pass's deadline ({_dur(options.deadline_seconds)}) was reached; the next pass "
                            "picks it up")
            result.still_pending.append((key, self.stopped))
            self.report(Event("deadline-reached", f"{key}: too little of the pass's deadline is left to help it; "
                                                  "the next pass picks it up", {"pod": key}, "warn"))
            return
        budget_left = options.max_evictions - result.evictions
        if len(plan.victims) > budget_left:
            self.stopped = (f"the eviction budget of this pass is used up (--max-evictions {options.max_evictions}); "
                            "the next pass picks it up")
            result.still_pending.append((key, f"needs {len(plan.victims)} eviction(s) but only {budget_left} of "
                                              f"--max-evictions {options.max_evictions} left in this pass; the next "
                                              "pass picks it up"))
            self.report(Event("budget-exhausted", f"{key}: the eviction budget of this pass is used up",
                              {"pod": key, "needs": len(plan.victims), "left": budget_left}, "warn"))
            return
        # Worst case, every victim's PDB refuses until its deadline and then the binding takes
        # the rest: the pod's turn still ends within what is left.
        victims = max(1, len(plan.victims))
        evict_seconds = math.floor(min(options.eviction_deadline_seconds, left / (2 * victims)) * 10) / 10
        bind_seconds = math.floor(min(options.bind_timeout_seconds, left - evict_seconds * victims) * 10) / 10
        popts = PreemptOptions(options.plan, bind_seconds, evict_seconds)
        try:
            done = preempt(self.api, plan, popts, self.report,
                           confirm_changed=lambda p, b=budget_left: len(p.victims) <= b, recorder=self.recorder)
        except ApiFailure as exc:  # a write or read that kept failing (5xx): this pod only
            result.failed_actions.append(f"act for {key}: {exc.message}")
            result.still_pending.append((key, f"could not act for it ({exc.message}); the next pass tries again"))
            self.report(Event("failed", f"could not act for {key}: {exc.message}", {"pod": key}, "error"))
            return
        self._record(done, bind_seconds, budget_left)

    def _record(self, done: PreemptResult, bind_seconds: float, budget_left: int) -> None:
        result, key = self.result, done.pod
        acted = bool(done.reserved or done.evicted or done.already_gone or done.failed or done.pdb_blocked)
        if acted:
            result.helped.append(key)
        result.evictions += len(done.evicted)
        result.gangs_stopped.extend(stopped_by([done.plan], done.evicted))
        result.failed_actions.extend(f"evict {pod}: {why}" for pod, why in done.failed)
        result.failed_actions.extend(f"evict {pod}: PodDisruptionBudget {pdb} kept refusing" for pod, pdb
                                     in done.pdb_blocked)
        if done.reserved and not done.released:
            result.failed_actions.append(f"release the reservation on {done.plan.node}")
        outcome = done.outcome
        if outcome in ("bound", "bound-elsewhere"):
            result.bound.append((key, done.node or ""))
        elif outcome == "deleted":
            pass  # no longer pending: nothing to help (preempt reported it)
        elif outcome == "timeout":
            result.still_pending.append((key, f"evicted {len(done.evicted)} pod(s) but it was not bound within "
                                              f"{_dur(bind_seconds)}; the next pass looks again"))
        elif outcome == "gave-up":
            refused = ", ".join(k for k, _ in done.pdb_blocked)
            result.still_pending.append((key, f"a PodDisruptionBudget kept refusing {refused}, and without them "
                                              "there is no room; the next pass looks again"))
        elif outcome == "simulated":
            result.still_pending.append((key, f"dry run: would wait for the scheduler to bind it to {done.plan.node}"))
        elif outcome == "blocked" and done.plan.outcome == "evict" and not done.plan.blocked:
            if len(done.plan.victims) > budget_left:
                why = (f"the cluster changed and it now needs {len(done.plan.victims)} eviction(s), more than the "
                       f"{budget_left} left in this pass; the next pass picks it up")
            else:
                why = (f"node {done.plan.node} is reserved by kresched for another pod; the next pass looks again "
                       "(`kresched untaint` removes a reservation whose run is gone)")
            result.still_pending.append((key, why))
        else:  # nothing-to-do (fits now), infeasible, blocked (tier 3, or the node reserved for another pod)
            result.still_pending.append((key, done.plan.message or outcome))


def _units(plans: list[Plan]) -> list[list[Plan]]:
    """The plans as the pass takes them: one pod's alone, a gang's members together (`plan_queue`
    yields them one after another)."""
    out: list[list[Plan]] = []
    for p in plans:
        if p.gang is not None and out and out[-1][0].gang is not None and out[-1][0].gang.key == p.gang.key:
            out[-1].append(p)
        else:
            out.append([p])
    return out
