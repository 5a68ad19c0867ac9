"""Carrying a drain out: cordon, evict with bounded parallelism, let budgets recover, wait until
the evicted pods are gone.

Owns `drain`. The pre-flight (`kresched.plan.drain.plan_drain`) decides what to evict; this
module acts on it:
1. cordon every node (`spec.unschedulable: true`), as `kubectl drain` does;
2. evict in *lanes*: the pods of one PodDisruptionBudget form one lane, evicted one after another
   (each waits for the budget to allow it), every other pod is a lane of its own; at most
   `parallel` lanes run at once;
3. a 429 does not hammer the API: the lane polls the PDB with backoff until
   `disruptionsAllowed > 0`, then retries, until `timeout_seconds`;
4. wait until each evicted pod is gone — by UID, so a StatefulSet pod recreated under the same
   name does not count as the old one still running;
5. on Ctrl-C / SIGTERM, stop starting new evictions, let running ones finish, and report what was
   done. Nodes stay cordoned (as with kubectl); the summary says how to uncordon.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from kresched.errors import ClusterAccessError
from kresched.execute.api import ApiFailure, ClusterApi, Conflict, NotFound, TooManyRequests
from kresched.execute.events import Event, Reporter
from kresched.execute.writes import patch_node_with_retry
from kresched.plan.drain import DrainPlan, DrainPod
from kresched.retry import EVICTION_RETRY

__all__ = ["DrainOptions", "DrainResult", "drain"]


@dataclass(frozen=True)
class DrainOptions:
    parallel: int = 5
    #: Grace period for every pod; None = each pod's own (kubectl's --grace-period -1).
    grace_period: int | None = None
    #: Give up waiting (for budgets and for pods to go) after this; None = no limit.
    timeout_seconds: float | None = None
    disable_eviction: bool = False
    poll_seconds: float = 2.0


@dataclass
class DrainResult:
    cordoned: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    already_gone: list[str] = field(default_factory=list)
    blocked: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    not_started: list[str] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return not (self.blocked or self.failed or self.not_started or self.interrupted)


class _Stop(Exception):
    pass


def drain(api: ClusterApi, plan: DrainPlan, options: DrainOptions, report: Reporter,
          clock: Callable[[], float] = time.monotonic) -> DrainResult:
    started = clock()
    deadline = None if options.timeout_seconds is None else started + options.timeout_seconds
    result = DrainResult()
    stop = threading.Event()
    lock = threading.Lock()
    try:
        for n in plan.nodes:
            _cordon(api, n.node, report)
            result.cordoned.append(n.node)
        lanes = _lanes([p for n in plan.nodes for p in n.evict])
        report(Event("drain-start", f"evicting {sum(len(lane) for lane in lanes)} pod(s) in {len(lanes)} lane(s), "
                                    f"{options.parallel} at a time", {"lanes": len(lanes)}))
        with ThreadPoolExecutor(max_workers=max(1, options.parallel), thread_name_prefix="drain") as pool:
            futures: dict[Future[None], list[DrainPod]] = {
                pool.submit(_run_lane, api, lane, options, deadline, stop, report, result, lock, clock): lane
                for lane in lanes
            }
            try:
                pending = set(futures)
                while pending:
                    done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                    for f in done:
                        f.result()
            except BaseException:
                stop.set()
                result.interrupted = True
                for f in futures:
                    f.cancel()
                raise
    finally:
        result.seconds = clock() - started
    return result


def _cordon(api: ClusterApi, node: str, report: Reporter) -> None:
    def patch(n):  # type: ignore[no-untyped-def]
        if n.spec.unschedulable:
            return None
        return {"metadata": {"resourceVersion": n.metadata.resource_version}, "spec": {"unschedulable": True}}

    changed = patch_node_with_retry(api, node, patch)
    report(Event("cordoned", f"cordoned {node}" if changed is not None else f"{node} was already cordoned",
                 {"node": node}, "ok"))


def _lanes(pods: list[DrainPod]) -> list[list[DrainPod]]:
    """One lane per PDB (its pods in order), one lane per pod without a PDB; blocked lanes last."""
    by_pdb: dict[str, list[DrainPod]] = {}
    singles: list[list[DrainPod]] = []
    for p in pods:
        if p.pdb is None:
            singles.append([p])
        else:
            by_pdb.setdefault(p.pdb, []).append(p)
    lanes = singles + [sorted(v, key=lambda d: d.queued_behind) for _, v in sorted(by_pdb.items())]
    return sorted(lanes, key=lambda lane: any(p.blocked for p in lane))


def _run_lane(api: ClusterApi, lane: list[DrainPod], options: DrainOptions, deadline: float | None,
              stop: threading.Event, report: Reporter, result: DrainResult, lock: threading.Lock,
              clock: Callable[[], float]) -> None:
    for i, d in enumerate(lane):
        if stop.is_set():
            with lock:
                result.not_started.extend(p.pod.key for p in lane[i:])
            return
        try:
            _evict_until_allowed(api, d, options, deadline, stop, report, clock)
        except _Stop:
            with lock:
                result.not_started.extend(p.pod.key for p in lane[i:])
            return
        except NotFound:
            with lock:
                result.already_gone.append(d.pod.key)
            report(Event("already-gone", f"{d.pod.key} was already gone", {"pod": d.pod.key}))
            continue
        except TooManyRequests as exc:
            with lock:
                result.blocked[d.pod.key] = exc.message
                result.not_started.extend(p.pod.key for p in lane[i + 1:])
            report(Event("gave-up", f"{d.pod.key}: still blocked at the timeout: {exc.message}",
                         {"pod": d.pod.key, "pdb": d.pdb}, "error"))
            return
        except (ApiFailure, ClusterAccessError) as exc:
            with lock:
                result.failed[d.pod.key] = exc.message
            report(Event("failed", f"could not evict {d.pod.key}: {exc.message}", {"pod": d.pod.key}, "error"))
            continue
        with lock:
            result.evicted.append(d.pod.key)
        if _wait_gone(api, d, deadline, stop, report, clock):
            with lock:
                result.gone.append(d.pod.key)


def _grace(d: DrainPod, options: DrainOptions) -> int:
    return d.pod.grace_seconds if options.grace_period is None or options.grace_period < 0 else options.grace_period


def _evict_until_allowed(api: ClusterApi, d: DrainPod, options: DrainOptions, deadline: float | None,
                         stop: threading.Event, report: Reporter, clock: Callable[[], float]) -> None:
    key = d.pod.key
    grace = _grace(d, options)
    data = {"pod": key, "node": d.node, "pdb": d.pdb, "gracePeriodSeconds": grace}
    if options.disable_eviction:
        try:
            api.delete_pod(d.pod, grace)
        except Conflict:
            raise NotFound(f"{key} was replaced", 404) from None
        report(Event("deleted", f"deleted {key} (grace {grace}s)", data, "ok"))
        return
    attempt = 0
    while True:
        try:
            api.evict_pod(d.pod, grace)
            report(Event("evicted", f"evicted {key} (grace {grace}s)", data, "ok"))
            return
        except Conflict:
            raise NotFound(f"{key} was replaced by a new pod", 404) from None
        except TooManyRequests as exc:
            attempt += 1
            if attempt == 1:
                report(Event("pdb-blocked", f"{key}: {exc.message}; waiting for {d.pdb or 'the budget'} to allow it",
                             data, "warn"))
            _wait_for_budget(api, d, deadline, stop, clock, exc, attempt)


def _wait_for_budget(api: ClusterApi, d: DrainPod, deadline: float | None, stop: threading.Event,
                     clock: Callable[[], float], exc: TooManyRequests, attempt: int) -> None:
    """Poll the PDB (with backoff) until it allows a disruption; raise `exc` at the deadline."""
    n = attempt
    while True:
        pause = EVICTION_RETRY.wait_seconds(n, None)
        if deadline is not None and clock() + pause > deadline:
            raise exc
        if stop.wait(pause):
            raise _Stop()
        n += 1
        if d.pdb is None:
            return
        ns, _, name = d.pdb.partition("/")
        pdb = api.get_pdb(ns, name)
        if pdb is None or pdb.status is None or pdb.status.disruptions_allowed > 0:
            return


def _wait_gone(api: ClusterApi, d: DrainPod, deadline: float | None, stop: threading.Event, report: Reporter,
               clock: Callable[[], float]) -> bool:
    """Until the pod with this UID is gone (a same-name pod with a new UID is a replacement)."""
    while True:
        if api.is_gone(d.pod):
            report(Event("gone", f"{d.pod.key} is gone", {"pod": d.pod.key}, "ok"))
            return True
        if deadline is not None and clock() >= deadline:
            report(Event("still-terminating", f"{d.pod.key} is still terminating at the timeout",
                         {"pod": d.pod.key}, "warn"))
            return False
        if stop.wait(min(1.0, EVICTION_RETRY.wait_seconds(1, None))):
            return False
