"""One pass of the critical-pod rescheduler (seed 000, "Rescheduler control loop"), for a CronJob.

Owns `reconcile`:
1. take the Lease lock; if another live holder has it, say so and stop (exit 0);
2. clean stale reservations (as `untaint` does: pod bound or gone, or older than the TTL);
3. find the pending critical pods — system-node-critical / system-cluster-critical, the legacy
   annotation, or priority ≥ `min_priority` — that the scheduler has marked Unschedulable for at
   least `min_pending_seconds` (its own preemption gets the first chance), optionally in one
   namespace;
4. plan them together in priority order and carry out each feasible plan as `preempt` does,
   within an eviction budget (`max_evictions`) and the pass's deadline;
5. report every pod it could not help, with the reason. Nothing is remembered between passes, so
   a pod left Pending is simply found again by the next one (seed 002's warning about control
   loops that lose work).
Always releases the Lease (and, through `preempt`, every reservation it made).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kresched.execute.api import ClusterApi
from kresched.execute.events import Event, Reporter
from kresched.execute.lease import acquire, holder_identity, release
from kresched.execute.preempt import PreemptOptions, preempt
from kresched.execute.reservation import parse_time
from kresched.execute.untaint import untaint
from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.planner import PlanOptions, plan_pending, queue_key

__all__ = ["ReconcileOptions", "ReconcileResult", "reconcile", "select_pending"]


@dataclass(frozen=True)
class ReconcileOptions:
    lease_namespace: str = "kube-system"
    lease_name: str = "kresched"
    identity: str = field(default_factory=holder_identity)
    #: The whole pass must end within this; the Lease lasts a little longer.
    deadline_seconds: float = 240.0
    reservation_ttl_seconds: float = 600.0
    min_priority: int | None = None
    min_pending_seconds: float = 60.0
    namespace: str | None = None
    max_evictions: int = 10
    plan: PlanOptions = field(default_factory=PlanOptions)
    #: Per pod: how long to wait for the binding (never past the pass's deadline).
    bind_timeout_seconds: float = 120.0
    eviction_deadline_seconds: float = 30.0

    @property
    def lease_seconds(self) -> int:
        return int(self.deadline_seconds) + 60


@dataclass
class ReconcileResult:
    locked: bool = False
    lock_holder: str | None = None
    cleaned: list[str] = field(default_factory=list)
    helped: list[str] = field(default_factory=list)
    bound: list[tuple[str, str]] = field(default_factory=list)
    still_pending: list[tuple[str, str]] = field(default_factory=list)
    evictions: int = 0
    failed_actions: list[str] = field(default_factory=list)
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
        cond = p.condition("PodScheduled")
        since = parse_time(cond.last_transition_time) if cond and cond.status == "False" else None
        if cond is None or cond.reason != "Unschedulable" or since is None:
            young.append(p)  # the scheduler has not (yet) said it cannot place it
            continue
        (ready if (now - since).total_seconds() >= options.min_pending_seconds else young).append(p)
    return sorted(ready, key=queue_key), sorted(young, key=queue_key)


def reconcile(api: ClusterApi, options: ReconcileOptions, report: Reporter,
              now: Callable[[], datetime] = lambda: datetime.now(UTC),
              clock: Callable[[], float] = time.monotonic) -> ReconcileResult:
    started = clock()
    result = ReconcileResult()
    lock = acquire(api, options.lease_namespace, options.lease_name, options.identity, options.lease_seconds, now())
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
        _pass(api, options, report, now, clock, started, result)
    finally:
        release(api, lock.lease, now())
        result.seconds = clock() - started
    return result


def _pass(api: ClusterApi, options: ReconcileOptions, report: Reporter, now: Callable[[], datetime],
          clock: Callable[[], float], started: float, result: ReconcileResult) -> None:
    state = api.read_state()
    cleaned = untaint(api, state, now(), options.reservation_ttl_seconds,
                      lambda e: report(e) if e.action != "kept" else None)
    result.cleaned = [d.reservation.node for d in cleaned.removed]
    if cleaned.failed:
        result.failed_actions.extend(f"release {d.reservation.node}" for d in cleaned.failed)
    if cleaned.removed:
        state = api.read_state()
    ready, young = select_pending(state, now(), options)
    for p in young:
        result.still_pending.append((p.key, "the scheduler has not marked it Unschedulable for "
                                            f"{options.min_pending_seconds:.0f}s yet"))
    if not ready:
        return
    plans = plan_pending(state, ready, options.plan)
    for plan in plans:
        key = plan.pod.key
        if plan.outcome == "fits":
            result.still_pending.append((key, plan.message))
            continue
        if plan.outcome == "infeasible" or plan.blocked:
            result.still_pending.append((key, plan.message))
            report(Event("cannot-help", f"{key}: {plan.message}", {"pod": key, "outcome": plan.outcome}, "warn"))
            continue
        left = options.deadline_seconds - (clock() - started)
        if left <= 5:
            result.still_pending.append((key, "the pass's deadline was reached; the next pass picks it up"))
            continue
        if result.evictions + len(plan.victims) > options.max_evictions:
            result.still_pending.append((key, f"needs {len(plan.victims)} eviction(s) but only "
                                              f"{options.max_evictions - result.evictions} are left in this "
                                              "pass's budget (--max-evictions); the next pass picks it up"))
            report(Event("budget-exhausted", f"{key}: eviction budget of this pass exhausted", {"pod": key}, "warn"))
            continue
        budget_left = options.max_evictions - result.evictions
        popts = PreemptOptions(options.plan, min(options.bind_timeout_seconds, left),
                               min(options.eviction_deadline_seconds, left))
        done = preempt(api, plan, popts, report, confirm_changed=lambda p, b=budget_left: len(p.victims) <= b)
        result.helped.append(key)
        result.evictions += len(done.evicted)
        if done.outcome in ("bound", "bound-elsewhere"):
            result.bound.append((key, done.node or ""))
        else:
            result.still_pending.append((key, f"{done.outcome} after acting"))
        if done.failed or done.pdb_blocked or (done.reserved and not done.released):
            result.failed_actions.append(key)
