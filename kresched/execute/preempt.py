"""Carrying a plan out (`kresched preempt`, and each pod of a `reconcile` pass).

Owns the flow of design "Carrying a plan out": re-read and re-validate, reserve the node,
evict the victims through the Eviction API (DELETE only for tier-3 PDB-violating victims with
`allow_pdb_violation`), wait for the scheduler to bind the pod, and ALWAYS release the
reservation — on success, failure, timeout, KeyboardInterrupt and SIGTERM (`Terminated`). The
release itself runs with SIGINT/SIGTERM deferred so a second Ctrl-C cannot cut it short; a signal
that arrives meanwhile is raised once the release is done.

The release only removes a reservation made for this run's pod: if the node's annotation names
another pod (another run reserved it since), it is left to that run.

Every API call goes through a `ClusterApi`; dry runs swap the client, not this code.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kresched.errors import ClusterAccessError
from kresched.execute.api import ApiFailure, ClusterApi, Conflict, NotFound, TooManyRequests, WaitResult
from kresched.execute.events import Event, Reporter, count
from kresched.execute.recorder import NO_RECORDER, Recorder
from kresched.execute.reservation import (
    RESERVED_FOR,
    ReservedByAnother,
    foreign_taint_refusal,
    release_patch,
    reserve_patch,
)
from kresched.execute.writes import EvictionGaveUp, evict_with_retry, patch_node_with_retry
from kresched.model.objects import Node
from kresched.plan.planner import plan_pod
from kresched.plan.plans import Plan, PlanOptions, Victim

__all__ = ["PreemptOptions", "PreemptResult", "Terminated", "preempt", "release_outcome", "release_reservation",
           "signals_as_exceptions"]


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that `finally` blocks run (like KeyboardInterrupt)."""


@dataclass(frozen=True)
class PreemptOptions:
    plan: PlanOptions = field(default_factory=PlanOptions)
    #: How long to wait for the scheduler to bind the pod.
    timeout_seconds: float = 300.0
    #: How long to keep retrying one victim's eviction while a PDB answers 429.
    eviction_deadline_seconds: float = 60.0


@dataclass
class PreemptResult:
    pod: str
    plan: Plan
    #: bound | bound-elsewhere | deleted | timeout | infeasible | unknown | blocked | nothing-to-do
    outcome: str = "pending"
    node: str | None = None
    evicted: list[str] = field(default_factory=list)
    already_gone: list[str] = field(default_factory=list)
    pdb_blocked: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    reserved: bool = False
    released: bool = False
    seconds: float = 0.0


@contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """SIGTERM raises `Terminated` while the block runs (SIGINT already raises KeyboardInterrupt)."""

    def _raise(signum: int, frame: object) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _signals_blocked() -> Iterator[None]:
    """Defer SIGINT/SIGTERM until the block is done, then raise what arrived meanwhile.

    In the main thread the Python handlers are swapped for ones that only take note: blocking the
    signals at the OS level alone would not stop one that already arrived (its Python handler runs
    at the next bytecode, inside the block). Elsewhere, the OS-level mask is all there is.
    """
    sigs = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        return
    arrived: list[int] = []
    previous = {s: signal.signal(s, lambda signum, frame: arrived.append(signum)) for s in sigs}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if arrived:
        handler = previous[arrived[0]]
        if callable(handler):
            handler(arrived[0], None)  # KeyboardInterrupt, or Terminated under signals_as_exceptions
        elif handler == signal.SIG_DFL and arrived[0] == signal.SIGINT:
            raise KeyboardInterrupt
        elif handler == signal.SIG_DFL:
            signal.raise_signal(arrived[0])


def preempt(api: ClusterApi, plan: Plan, options: PreemptOptions, report: Reporter,
            confirm_changed: Callable[[Plan], bool] = lambda p: False,
            clock: Callable[[], float] = time.monotonic, result: PreemptResult | None = None,
            recorder: Recorder = NO_RECORDER) -> PreemptResult:
    """Carry out `plan` for its pod. `confirm_changed` is asked when re-validation gives a different
    plan (the CLI asks the operator, or says yes under --yes). Pass `result` in to keep what was
    done when the run is interrupted (KeyboardInterrupt and `Terminated` propagate, after the
    reservation is released). `recorder` records the Kubernetes Events of what was done."""
    started = clock()
    result = result if result is not None else PreemptResult(plan.pod.key, plan)
    try:
        plan = _revalidate(api, plan, options, report, confirm_changed, result)
        result.plan = plan
        if result.outcome != "pending":
            return result
        node = plan.node
        assert node is not None
        try:
            _reserve(api, plan, report, result, recorder)
            if result.outcome == "blocked":
                return result
            _evict_all(api, plan, options, report, result, recorder)
            if result.pdb_blocked and not _replan_without_blocked(api, plan, options, report, result, recorder):
                return result
            report(Event("waiting", f"waiting up to {options.timeout_seconds:.0f}s for the scheduler to bind "
                                    f"{plan.pod.key} (planned: {node})",
                         {"pod": plan.pod.key, "node": node, "timeout": options.timeout_seconds}))
            waited = api.wait_for_binding(plan.pod, options.timeout_seconds,
                                          lambda text: report(Event("watch", text, {"pod": plan.pod.key})),
                                          planned=plan.node)
            _record_wait(waited, plan, report, result)
            if waited.kind in ("bound", "timeout"):
                recorder.made_room(plan.pod, node, result.evicted, result.node, clock() - started)
        finally:
            if result.reserved:
                with _signals_blocked():
                    result.released = release_reservation(api, node, report, pod_key=plan.pod.key,
                                                          recorder=recorder)
    finally:
        result.seconds = clock() - started
    return result


def _revalidate(api: ClusterApi, plan: Plan, options: PreemptOptions, report: Reporter,
                confirm_changed: Callable[[Plan], bool], result: PreemptResult) -> Plan:
    state = api.read_state()
    pod = state.pod(plan.pod.key)
    if pod is None:
        result.outcome = "deleted"
        report(Event("pod-deleted", f"{plan.pod.key} no longer exists: nothing to do", {"pod": plan.pod.key}, "warn"))
        return plan
    if pod.spec.node_name:
        result.outcome, result.node = "bound", pod.spec.node_name
        report(Event("bound", f"{pod.key} is already bound to {pod.spec.node_name}: nothing to do",
                     {"pod": pod.key, "node": pod.spec.node_name}, "ok"))
        return plan
    fresh = plan_pod(state, pod, options.plan)
    if _same(fresh, plan):
        report(Event("revalidated", f"plan still holds on the live state: node {fresh.node}, "
                                    f"{count(len(fresh.victims), 'victim')}", {"pod": pod.key, "node": fresh.node}))
    else:
        report(Event("replanned", f"the cluster changed; new plan: {fresh.outcome} {fresh.message}",
                     {"pod": pod.key, "node": fresh.node, "outcome": fresh.outcome}, "warn"))
        if fresh.outcome == "evict" and not confirm_changed(fresh):
            result.outcome = "blocked"
            report(Event("aborted", "the new plan was not confirmed: nothing was changed", {"pod": pod.key}, "warn"))
            return fresh
    if fresh.outcome == "fits":
        result.outcome = "nothing-to-do"
        report(Event("fits", f"{pod.key} {fresh.message}", {"pod": pod.key, "node": fresh.node}, "ok"))
    elif fresh.outcome == "infeasible":
        result.outcome = "infeasible"
        report(Event("infeasible", fresh.message, {"pod": pod.key}, "error"))
    elif fresh.outcome == "unknown":
        result.outcome = "unknown"
        report(Event("unknown", fresh.message, {"pod": pod.key}, "error"))
    elif fresh.blocked:
        result.outcome = "blocked"
        report(Event("blocked", fresh.message, {"pod": pod.key, "node": fresh.node}, "error"))
    return fresh


def _same(a: Plan, b: Plan) -> bool:
    return (a.outcome, a.node, [v.pod.key for v in a.victims]) == (b.outcome, b.node, [v.pod.key for v in b.victims])


def _reserve(api: ClusterApi, plan: Plan, report: Reporter, result: PreemptResult, recorder: Recorder) -> None:
    node_name = plan.node or ""
    node = api.get_node(node_name)
    refusal = foreign_taint_refusal(node)
    if refusal is not None:
        report(refusal)
        return
    if not plan.taint:
        report(Event("reserve-skipped", f"{plan.pod.key} does not tolerate CriticalAddonsOnly, so node "
                                        f"{node_name} is not reserved: another pod may take the room first",
                     {"node": node_name}, "warn"))
        return
    # Marked before the write: if the run is interrupted while the patch is in flight, the release
    # still runs (it finds nothing to remove if the patch never landed).
    result.reserved = True
    try:
        reserved = patch_node_with_retry(api, node_name,
                                         lambda n: reserve_patch(n, plan.pod.key, datetime.now(UTC), add_taint=True))
    except ReservedByAnother as exc:
        result.reserved = False
        result.outcome = "blocked"
        report(Event("reserve-conflict", f"{exc.message}: nothing was evicted", {"node": node_name}, "error"))
        return
    report(Event("reserved", f"reserved node {node_name} for {plan.pod.key} (taint CriticalAddonsOnly=kresched:"
                             "NoSchedule)", {"node": node_name, "pod": plan.pod.key}, "ok"))
    recorder.reserved(reserved or node_name, plan.pod)


def release_reservation(api: ClusterApi, node_name: str, report: Reporter, pod_key: str | None = None,
                        recorder: Recorder = NO_RECORDER) -> bool:
    """Remove kresched's taint and annotations from the node; True when nothing of ours is left.

    With `pod_key`, only a reservation made for that pod (or one that names no pod): a node another
    run has since reserved for another pod is left to that run."""
    return release_outcome(api, node_name, report, pod_key, recorder=recorder)[0] != "failed"


def release_outcome(api: ClusterApi, node_name: str, report: Reporter, pod_key: str | None = None,
                    why: str = "", recorder: Recorder = NO_RECORDER) -> tuple[str, str | None]:
    """`release_reservation`, saying what happened: ("released", None) — also when there was
    nothing to remove —, ("skipped", the pod the node is now reserved for) or ("failed", None).
    `why` is said in the Event recorded on the node."""
    def patch(node: Node) -> dict[str, Any] | None:
        holder = node.metadata.annotations.get(RESERVED_FOR)
        if pod_key is not None and holder is not None and holder != pod_key:
            skipped.append(holder)
            return None
        return release_patch(node)

    skipped: list[str] = []
    try:
        patched = patch_node_with_retry(api, node_name, patch)
    except NotFound:
        report(Event("released", f"node {node_name} is gone: nothing to release", {"node": node_name}))
        return "released", None
    except ClusterAccessError as exc:  # RBAC or an unreachable server: every other release would fail too
        report(Event("release-failed", f"could not remove the reservation from node {node_name}: {exc.message}; "
                                       f"run `kresched untaint {node_name}`", {"node": node_name}, "error"))
        raise ClusterAccessError(f"{exc.message}; node {node_name} keeps kresched's reservation (taint "
                                 f"CriticalAddonsOnly=kresched:NoSchedule): `kresched untaint {node_name}` removes "
                                 "it") from None
    except Exception as exc:  # the operator must hear about a reservation left behind
        report(Event("release-failed", f"could not remove the reservation from node {node_name}: {exc}; "
                                       f"run `kresched untaint {node_name}`", {"node": node_name}, "error"))
        return "failed", None
    if skipped:
        report(Event("release-skipped", f"node {node_name} is now reserved for {skipped[-1]}: leaving that "
                                        "reservation to its run", {"node": node_name, "pod": skipped[-1]}, "warn"))
        return "skipped", skipped[-1]
    if patched is not None:
        report(Event("released", f"released node {node_name}", {"node": node_name}, "ok"))
        recorder.released(patched, pod_key, why)
    return "released", None


def _replan_without_blocked(api: ClusterApi, plan: Plan, options: PreemptOptions, report: Reporter,
                            result: PreemptResult, recorder: Recorder) -> bool:
    """A PodDisruptionBudget kept refusing some victims: plan again on the live state (the victims
    that did go are gone). If that makes room on the same node without the refused pods, evict what
    it needs (once) and go on; otherwise stop instead of waiting out a binding that cannot come.
    Returns whether to wait for the binding."""
    state = api.read_state()
    pod = state.pod(plan.pod.key)
    if pod is None or pod.spec.node_name:
        return True  # the wait reports it
    fresh = plan_pod(state, pod, options.plan)
    refused = {k for k, _ in result.pdb_blocked}
    if fresh.outcome == "fits":
        report(Event("replanned", f"without the refused pods it fits now: {fresh.message}",
                     {"pod": pod.key, "node": fresh.node}))
        return True
    extra = [v for v in fresh.victims if v.pod.key not in refused]
    if fresh.outcome == "evict" and fresh.node == plan.node and not fresh.blocked and len(extra) == len(fresh.victims):
        report(Event("replanned", f"evicting {count(len(extra), 'other pod')} on {fresh.node} instead of the refused "
                                  "ones",
                     {"pod": pod.key, "node": fresh.node, "victims": [v.pod.key for v in extra]}, "warn"))
        for v in reversed(extra):
            _evict_one(api, v, fresh, options, report, result, recorder)
        return not any(k not in refused for k, _ in result.pdb_blocked)
    result.outcome = "gave-up"
    report(Event("no-room", f"no room for {pod.key} on {plan.node} without {', '.join(sorted(refused))}, which "
                            "a PodDisruptionBudget keeps refusing: not waiting for a binding",
                 {"pod": pod.key, "node": plan.node}, "error"))
    return False


def _evict_all(api: ClusterApi, plan: Plan, options: PreemptOptions, report: Reporter, result: PreemptResult,
               recorder: Recorder) -> None:
    # Least important first: if the run is cut short, the most important victims are still running.
    for v in reversed(plan.victims):
        _evict_one(api, v, plan, options, report, result, recorder)


def _evict_one(api: ClusterApi, v: Victim, plan: Plan, options: PreemptOptions, report: Reporter,
               result: PreemptResult, recorder: Recorder, gang: str | None = None) -> None:
    """Evict (or, over its PDB, delete) one victim; what happened goes into `result`'s lists.
    `gang`: the gang the pending pod is a member of (named in the Event)."""
    key = v.pod.key
    grace = v.eviction_grace_seconds
    data = {"pod": key, "node": v.node, "gracePeriodSeconds": grace, "pdb": v.pdb.pdb}
    stops = ""
    if v.pdb.gang is not None:
        data.update(gang=v.pdb.gang, stopsGang=v.pdb.stops_gang)
        if v.pdb.stops_gang:
            stops = (f": it stops {v.pdb.gang} ({v.pdb.gang_running} running, minCount {v.pdb.gang_min_count}: "
                     "a gang runs all or nothing)")
    stopped = v.pdb.gang if v.pdb.stops_gang else None
    try:
        if not v.pdb.allowed:
            # Tier 3: only reached with allow_pdb_violation (blocked plans stop in _revalidate). A
            # victim that only stops its gang is evicted: the eviction API allows it.
            api.delete_pod(v.pod, grace)
            result.evicted.append(key)
            report(Event("deleted", f"deleted {key} (bypassing PodDisruptionBudget {v.pdb.pdb}, grace {grace}s){stops}",
                         data, "warn"))
            recorder.preempted(v.pod, plan.pod, v.node, grace, over_pdb=v.pdb.pdb or "", gang=gang,
                               stops_gang=stopped)
            return
        evict_with_retry(api, v.pod, grace, options.eviction_deadline_seconds,
                         on_blocked=lambda msg: report(Event("pdb-blocked", f"{key}: {msg}; retrying", data, "warn")))
        result.evicted.append(key)
        report(Event("evicted", f"evicted {key} (grace {grace}s){stops}", data, "warn" if stops else "ok"))
        recorder.preempted(v.pod, plan.pod, v.node, grace, gang=gang, stops_gang=stopped)
    except NotFound:
        result.already_gone.append(key)
        report(Event("already-gone", f"{key} was already gone", data))
    except EvictionGaveUp as exc:
        result.pdb_blocked.append((key, v.pdb.pdb or ""))
        report(Event("gave-up", f"gave up evicting {key}: {exc.message}", data, "error"))
    except Conflict as exc:
        result.already_gone.append(key)
        report(Event("already-gone", f"{key} was replaced by a new pod of the same name: {exc.message}", data))
    except TooManyRequests as exc:  # a DELETE cannot get 429 from a PDB, but a server may throttle
        result.failed.append((key, exc.message))
        report(Event("failed", f"could not delete {key}: {exc.message}", data, "error"))
    except ApiFailure as exc:
        # 5xx after the retries, or an answer no retry fixes (e.g. the eviction API's 500 for a pod
        # with two PDBs): this victim failed; the others are still worth trying.
        result.failed.append((key, exc.message))
        report(Event("failed", f"could not evict {key}: {exc.message}", data, "error"))


def _record_wait(waited: WaitResult, plan: Plan, report: Reporter, result: PreemptResult) -> None:
    key = plan.pod.key
    if waited.kind == "bound":
        result.node = waited.node
        if waited.node == plan.node:
            result.outcome = "bound"
            report(Event("bound", f"{key} is bound to {waited.node}", {"pod": key, "node": waited.node}, "ok"))
        else:
            result.outcome = "bound-elsewhere"
            report(Event("bound-elsewhere", f"{key} is bound to {waited.node}, not to the planned {plan.node}",
                         {"pod": key, "node": waited.node, "planned": plan.node}, "warn"))
    elif waited.kind == "deleted":
        result.outcome = "deleted"
        report(Event("pod-deleted", f"{key} was deleted while waiting", {"pod": key}, "warn"))
    elif waited.kind == "simulated":
        result.outcome = "simulated"  # the "waiting" event said where it would go
    else:
        result.outcome = "timeout"
        report(Event("timeout", f"{key} is still Pending after the timeout", {"pod": key}, "error"))
