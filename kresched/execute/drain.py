"""Carrying a drain out: cordon, evict with bounded parallelism, let budgets recover, wait until
the evicted pods are gone.

Owns `drain`. The pre-flight (`kresched.plan.drain.plan_drain`) decides what to evict and in which
order; this module acts on it:
1. cordon every node (`spec.unschedulable: true`), as `kubectl drain` does;
2. evict in *lanes*: the pods of one PodDisruptionBudget form one lane, evicted one after another
   in the pre-flight's order; every other pod is a lane of its own; at most `parallel` evictions
   are in flight at once. A lane does not wait for a pod to be gone before the next eviction: the
   budget, not termination, is what may make it wait;
3. a 429 does not hammer the API: the lane watches the PDB (`ClusterApi.wait_for_pdb`; polling
   where RBAC forbids the watch) until it allows a disruption (`disruptionsAllowed > 0`), then
   sends the eviction again at once — until the timeout;
4. meanwhile the evicted pods are watched go, by UID (a StatefulSet pod recreated under the same
   name is a new pod, the old one counts as gone), with one list of the pods on each node per
   check rather than a GET per pod: checks start 50 ms apart and back off to `poll_seconds` while
   nothing goes, so a drain ends as soon as its last pod is gone, whatever the pod count;
5. on Ctrl-C / SIGTERM, stop starting new evictions, let the requests in flight finish, and
   re-raise; `result` (pass one in) says what was done — the pods evicted but not yet seen gone
   are `terminating`, as at a timeout. Nodes stay cordoned, as with kubectl.
An RBAC refusal (`ClusterAccessError`) stops the drain: every other eviction would meet it too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from kresched.errors import ClusterAccessError
from kresched.execute.api import ApiFailure, ClusterApi, Conflict, NotFound, TooManyRequests
from kresched.execute.events import Event, Reporter, count
from kresched.execute.recorder import NO_RECORDER, Recorder
from kresched.execute.writes import patch_node_with_retry
from kresched.plan.drain import DrainPlan, DrainPod
from kresched.retry import EVICTION_RETRY

__all__ = ["DrainOptions", "DrainResult", "EvictionRun", "StopRequested", "drain", "evict_until_allowed"]

#: The first pause between two checks for evicted pods being gone; it doubles up to `poll_seconds`.
FIRST_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class DrainOptions:
    #: Evictions in flight at once (lanes running at once).
    parallel: int = 10
    #: Grace period for every pod; None = each pod's own (kubectl's --grace-period -1).
    grace_period: int | None = None
    #: Give up waiting (for budgets and for pods to go) after this; None = no limit.
    timeout_seconds: float | None = None
    disable_eviction: bool = False
    #: The longest pause between two checks for evicted pods being gone.
    poll_seconds: float = 0.5


@dataclass
class DrainResult:
    cordoned: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    already_gone: list[str] = field(default_factory=list)
    #: Pod → why it was not evicted by the timeout (its PDB's answer, or the pod it queued behind).
    blocked: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    not_started: list[str] = field(default_factory=list)
    #: Evicted, but still there at the timeout.
    terminating: list[str] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return not (self.blocked or self.failed or self.not_started or self.terminating or self.interrupted)


class StopRequested(Exception):
    pass


@dataclass
class EvictionRun:
    """What the lanes and the watcher share."""

    api: ClusterApi
    options: DrainOptions
    deadline: float | None
    report: Reporter
    result: DrainResult
    clock: Callable[[], float]
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Evicted pods not yet seen gone, by key.
    waiting: dict[str, DrainPod] = field(default_factory=dict)
    #: Set when a lane evicted something: the watcher checks soon.
    evicted_now: threading.Event = field(default_factory=threading.Event)
    #: Records the Kubernetes Events of what was done.
    recorder: Recorder = NO_RECORDER

    def past_deadline(self) -> bool:
        return self.deadline is not None and self.clock() >= self.deadline


def drain(api: ClusterApi, plan: DrainPlan, options: DrainOptions, report: Reporter,
          clock: Callable[[], float] = time.monotonic, result: DrainResult | None = None,
          recorder: Recorder = NO_RECORDER) -> DrainResult:
    started = clock()
    deadline = None if options.timeout_seconds is None else started + options.timeout_seconds
    run = EvictionRun(api, options, deadline, report, result if result is not None else DrainResult(), clock,
                      recorder=recorder)
    evict = [p for n in plan.nodes for p in n.evict]
    lanes_started = False
    try:
        for n in plan.nodes:
            _cordon(api, n.node, report, recorder)
            run.result.cordoned.append(n.node)
        lanes = _lanes(evict)
        workers = max(1, min(options.parallel, len(lanes)))
        report(Event("drain-start", f"evicting {count(len(evict), 'pod')} in {count(len(lanes), 'lane')}, "
                                    f"{workers} at a time",
                     {"lanes": len(lanes), "parallel": workers}))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="drain")
        futures: dict[Future[None], list[DrainPod]] = {}
        try:
            lanes_started = True
            futures = {pool.submit(_run_lane, run, lane): lane for lane in lanes}
            _watch(run, futures)
        except BaseException:
            run.stop.set()
            for f, lane in futures.items():
                if f.cancel():
                    run.result.not_started.extend(p.pod.key for p in lane)
            raise
        finally:
            pool.shutdown(wait=True)
    except BaseException as exc:
        run.result.interrupted = not isinstance(exc, Exception)
        if not lanes_started:
            run.result.not_started = [p.pod.key for p in evict]
        with run.lock:  # evicted, and not seen gone when the run stopped
            run.result.terminating.extend(k for k in run.waiting if k not in run.result.terminating)
        raise
    finally:
        run.result.seconds = clock() - started
    return run.result


def _cordon(api: ClusterApi, node: str, report: Reporter, recorder: Recorder) -> None:
    def patch(n):  # type: ignore[no-untyped-def]
        if n.spec.unschedulable:
            return None
        return {"metadata": {"resourceVersion": n.metadata.resource_version}, "spec": {"unschedulable": True}}

    changed = patch_node_with_retry(api, node, patch)
    report(Event("cordoned", f"cordoned {node}" if changed is not None else f"{node} was already cordoned",
                 {"node": node}, "ok"))
    if changed is not None:
        recorder.cordoned(changed)


def _lanes(pods: list[DrainPod]) -> list[list[DrainPod]]:
    """One lane per PDB (its pods in the pre-flight's order), one per pod without a PDB. The longest
    lanes start first (they take longest); lanes the pre-flight found blocked start last."""
    by_pdb: dict[str, list[DrainPod]] = {}
    lanes: list[list[DrainPod]] = []
    for p in pods:
        if p.pdb is None:
            lanes.append([p])
        else:
            lane = by_pdb.get(p.pdb)
            if lane is None:
                lane = by_pdb[p.pdb] = []
                lanes.append(lane)
            lane.append(p)
    return sorted(lanes, key=lambda lane: (any(p.blocked for p in lane), -len(lane)))


def _watch(run: EvictionRun, futures: dict[Future[None], list[DrainPod]]) -> None:
    """Until every lane is done and every evicted pod is gone (or the deadline): check which are
    gone, 50 ms after an eviction and then less and less often while nothing goes."""
    pause = FIRST_POLL_SECONDS
    while True:
        lanes_done = all(f.done() for f in futures)
        for f in futures:
            if f.done() and not f.cancelled() and f.exception() is not None:
                raise f.exception()  # type: ignore[misc]
        with run.lock:
            waiting = list(run.waiting.values())
        if waiting:
            run.evicted_now.clear()
            if _check_gone(run, waiting):
                pause = FIRST_POLL_SECONDS
            else:
                pause = min(pause * 2, run.options.poll_seconds)
        with run.lock:
            left = list(run.waiting.values())
        if lanes_done and not left:
            return
        if lanes_done and run.past_deadline():
            keys = [p.pod.key for p in left]
            run.result.terminating.extend(keys)
            run.report(Event("still-terminating", f"{count(len(keys), 'evicted pod')} still terminating at the "
                                                  f"timeout: {', '.join(keys)}", {"pods": keys}, "warn"))
            return
        # Wake early when a lane evicts something (its pod may be gone at once), else after `pause`.
        if run.evicted_now.wait(pause):
            time.sleep(FIRST_POLL_SECONDS)
            pause = FIRST_POLL_SECONDS


def _check_gone(run: EvictionRun, waiting: list[DrainPod]) -> bool:
    """Mark the pods that are gone; whether any was. A failed read is retried at the next check."""
    try:
        gone = run.api.which_gone([d.pod for d in waiting])
    except ApiFailure as exc:
        run.report(Event("check-failed", f"could not check which pods are gone: {exc.message}; checking again",
                         {}, "warn"))
        return False
    for d in waiting:
        if d.pod.key in gone:
            with run.lock:
                run.waiting.pop(d.pod.key, None)
                run.result.gone.append(d.pod.key)
            run.report(Event("gone", f"{d.pod.key} is gone", {"pod": d.pod.key, "node": d.node}, "ok"))
    return bool(gone)


def _run_lane(run: EvictionRun, lane: list[DrainPod]) -> None:
    result = run.result
    for i, d in enumerate(lane):
        if run.stop.is_set() or run.past_deadline():
            rest = [p.pod.key for p in lane[i:]]
            with run.lock:
                result.not_started.extend(rest)
            if not run.stop.is_set():
                run.report(Event("not-started", f"the timeout passed before the turn of {', '.join(rest)}",
                                 {"pods": rest}, "error"))
            return
        try:
            how = evict_until_allowed(run, d)
        except StopRequested:
            with run.lock:
                result.not_started.extend(p.pod.key for p in lane[i:])
            return
        except NotFound:
            with run.lock:
                result.already_gone.append(d.pod.key)
            run.report(Event("already-gone", f"{d.pod.key} was already gone", {"pod": d.pod.key}))
            continue
        except TooManyRequests as exc:
            with run.lock:
                result.blocked[d.pod.key] = exc.message
                for p in lane[i + 1:]:
                    result.blocked[p.pod.key] = f"queued behind {d.pod.key} for PodDisruptionBudget {d.pdb}"
            run.report(Event("gave-up", f"{d.pod.key}: still refused at the timeout: {exc.message}"
                             + (f" ({len(lane) - i - 1} more of {d.pdb} queued behind it)" if i + 1 < len(lane)
                                else ""),
                             {"pod": d.pod.key, "pdb": d.pdb, "reason": exc.message,
                              "queued": [p.pod.key for p in lane[i + 1:]]}, "error"))
            return
        except ClusterAccessError:
            raise
        except ApiFailure as exc:
            with run.lock:
                result.failed[d.pod.key] = exc.message
            run.report(Event("failed", f"could not evict {d.pod.key}: {exc.message}", {"pod": d.pod.key}, "error"))
            continue
        with run.lock:
            result.evicted.append(d.pod.key)
            run.waiting[d.pod.key] = d
        run.evicted_now.set()
        run.recorder.drained(d.pod, d.node, _grace(d, run.options), deleted=how == "deleted")


def _grace(d: DrainPod, options: DrainOptions) -> int:
    return d.pod.grace_seconds if options.grace_period is None or options.grace_period < 0 else options.grace_period


def evict_until_allowed(run: EvictionRun, d: DrainPod) -> str:
    """Evict (or delete) `d`; on 429, wait for its PDB to allow a disruption and try again. Returns
    how it went (`evicted`, or `deleted` with `disable_eviction`).
    NotFound: already gone (a 409 on the UID precondition too: a new pod has its name);
    TooManyRequests: still refused at the deadline; StopRequested: interrupted while waiting."""
    api, options = run.api, run.options
    key = d.pod.key
    grace = _grace(d, options)
    data = {"pod": key, "node": d.node, "pdb": d.pdb, "gracePeriodSeconds": grace}
    if options.disable_eviction:
        try:
            api.delete_pod(d.pod, grace)
        except Conflict:
            raise NotFound(f"{key} was replaced by a new pod", 404) from None
        run.report(Event("deleted", f"deleted {key} (grace {grace}s)", data, "ok"))
        return "deleted"
    attempt = 0
    while True:
        try:
            api.evict_pod(d.pod, grace)
            run.report(Event("evicted", f"evicted {key} (grace {grace}s)", data, "ok"))
            return "evicted"
        except Conflict:
            raise NotFound(f"{key} was replaced by a new pod", 404) from None
        except TooManyRequests as exc:
            attempt += 1
            if attempt == 1:
                run.report(Event("pdb-blocked", f"{key}: {exc.message}; waiting for {d.pdb or 'the budget'} to "
                                                "allow it", {**data, "reason": exc.message}, "warn"))
            attempt = _wait_for_budget(run, d, exc, attempt)
            run.report(Event("pdb-allows", f"{d.pdb or 'the budget'} allows a disruption again: evicting {key}",
                             data))


_POLICY = replace(EVICTION_RETRY, retry_after=lambda e: getattr(e, "retry_after", None))


#: The longest one wait for a PDB lasts before the lane checks for a stop (Ctrl-C) and waits again.
PDB_WAIT_SLICE_SECONDS = 2.0


def _wait_for_budget(run: EvictionRun, d: DrainPod, exc: TooManyRequests, attempt: int) -> int:
    """Wait until the pod's PDB allows a disruption again — watched (`ClusterApi.wait_for_pdb`), so
    the eviction is sent again as soon as the disruption controller gives the budget back, not
    after a fixed pause (kubectl drain retries every 5 s) — and raise `exc` at the deadline.
    Without a known PDB (a 429 for another reason), pause with backoff, at least the 429's
    Retry-After at first. Returns the attempt count reached."""
    if d.pdb is None:
        pause = _POLICY.wait_seconds(attempt, exc)
        if run.deadline is not None:
            left = run.deadline - run.clock()
            if left <= 0:
                raise exc
            pause = min(pause, left)
        if run.stop.wait(pause):
            raise StopRequested()
        return attempt + 1
    ns, _, name = d.pdb.partition("/")
    while True:
        if run.stop.is_set():
            raise StopRequested()
        slice_ = PDB_WAIT_SLICE_SECONDS
        if run.deadline is not None:
            left = run.deadline - run.clock()
            if left <= 0:
                raise exc
            slice_ = min(slice_, left)
        pdb = run.api.wait_for_pdb(ns, name, slice_)
        attempt += 1
        if run.stop.is_set():
            raise StopRequested()
        if pdb is None or pdb.status is None or pdb.status.disruptions_allowed > 0:
            return attempt
