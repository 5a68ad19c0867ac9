"""Carrying a rebalance plan out: evict each moved pod, wait for its replacement, compare.

Owns `rebalance`. The plan (`kresched.plan.rebalance.plan_rebalance`) decides what moves and
where each replacement should land; this module acts on it through drain's eviction machinery
(`evict_until_allowed`: the Eviction API, a 429 waits for the PDB until the deadline):
1. the moves of one workload (controller) form one *lane*, in the plan's order: a lane evicts a pod,
   then waits until a new pod of that controller is bound and Ready before its next move — the
   workload never loses more than one replica to the rebalance at a time, and the PDB's unit is
   back before the next eviction asks for it; at most `parallel` lanes run at once;
2. each move ends `moved` (with the node the replacement actually landed on, next to the
   predicted one), `blocked` (its PDB still refused at the deadline; the lane's later moves are
   `not-started`), `failed`, `gone` (the pod was gone already), `timeout` (evicted, but no Ready
   replacement by the deadline) or, in a dry run, `simulated`;
3. on Ctrl-C / SIGTERM, no new eviction starts; `result` (pass one in) says what was done.
An RBAC refusal (`ClusterAccessError`) stops everything: every other eviction would meet it too.
Nothing is cordoned or tainted: the scheduler places the replacements.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from kresched.errors import ClusterAccessError
from kresched.execute.api import ApiFailure, ClusterApi, NotFound, TooManyRequests
from kresched.execute.drain import DrainOptions, DrainResult, EvictionRun, StopRequested, evict_until_allowed
from kresched.execute.events import Event, Reporter, count
from kresched.execute.recorder import NO_RECORDER, Recorder
from kresched.plan.drain import DrainPod
from kresched.plan.rebalance_plans import Move, RebalancePlan

__all__ = ["MoveOutcome", "RebalanceOptions", "RebalanceResult", "rebalance"]


@dataclass(frozen=True)
class RebalanceOptions:
    #: Lanes (workloads) moving at once.
    parallel: int = 5
    #: Give up (on budgets, on replacements) after this; None = no limit.
    timeout_seconds: float | None = None


@dataclass(frozen=True)
class MoveOutcome:
    pod: str
    predicted: str
    #: moved | blocked | failed | gone | timeout | not-started | simulated
    status: str
    landed_on: str | None = None
    message: str = ""


@dataclass
class RebalanceResult:
    outcomes: dict[str, MoveOutcome] = field(default_factory=dict)
    interrupted: bool = False
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return not self.interrupted and all(o.status in ("moved", "gone", "simulated")
                                            for o in self.outcomes.values())


def rebalance(api: ClusterApi, plan: RebalancePlan, options: RebalanceOptions, report: Reporter,
              clock: Callable[[], float] = time.monotonic, result: RebalanceResult | None = None,
              recorder: Recorder = NO_RECORDER) -> RebalanceResult:
    started = clock()
    deadline = None if options.timeout_seconds is None else started + options.timeout_seconds
    result = result if result is not None else RebalanceResult()
    run = EvictionRun(api, DrainOptions(options.parallel, None, options.timeout_seconds), deadline, report,
                      DrainResult(), clock, recorder=recorder)
    lanes = _lanes(list(plan.moves))
    try:
        if not lanes:
            return result
        workers = max(1, min(options.parallel, len(lanes)))
        report(Event("rebalance-start", f"moving {count(len(plan.moves), 'pod')} of {count(len(lanes), 'workload')}, "
                                        f"{workers} at a time", {"lanes": len(lanes), "parallel": workers}))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rebalance") as pool:
            futures = [pool.submit(_run_lane, run, lane, result) for lane in lanes]
            try:
                for f in futures:
                    f.result()
            except BaseException:
                run.stop.set()
                for f, lane in zip(futures, lanes, strict=True):
                    if f.cancel():
                        _record_rest(run, result, lane, "interrupted before its turn")
                raise
    except BaseException as exc:
        result.interrupted = not isinstance(exc, Exception)
        raise
    finally:
        result.seconds = clock() - started
    return result


def _lanes(moves: list[Move]) -> list[list[Move]]:
    """One lane per controller (namespace, kind, name), its moves in the plan's order."""
    by: dict[tuple[str, str], list[Move]] = {}
    for m in moves:
        by.setdefault((m.pod.namespace, m.pod.controller_ref or m.pod.key), []).append(m)
    return list(by.values())


def _record(run: EvictionRun, result: RebalanceResult, outcome: MoveOutcome) -> None:
    with run.lock:
        result.outcomes[outcome.pod] = outcome


def _record_rest(run: EvictionRun, result: RebalanceResult, lane: list[Move], why: str) -> None:
    for m in lane:
        if m.pod.key not in result.outcomes:
            _record(run, result, MoveOutcome(m.pod.key, m.to, "not-started", None, why))


def _run_lane(run: EvictionRun, lane: list[Move], result: RebalanceResult) -> None:
    api = run.api
    for i, m in enumerate(lane):
        key = m.pod.key
        if run.stop.is_set() or run.past_deadline():
            if not run.stop.is_set():
                run.report(Event("not-started", f"the timeout passed before the turn of "
                                                f"{', '.join(x.pod.key for x in lane[i:])}",
                                 {"pods": [x.pod.key for x in lane[i:]]}, "error"))
            _record_rest(run, result, lane[i:], "the timeout passed before its turn")
            return
        try:
            known = {p.uid for p in api.replicas_of(m.pod, m.replicas or None)} | {m.pod.uid}
            evict_until_allowed(run, DrainPod(m.pod, m.source, m.pdb))
            run.recorder.rebalanced(m.pod, m.to, m.objective, m.reason)
        except StopRequested:
            _record_rest(run, result, lane[i:], "interrupted before its turn")
            return
        except NotFound:
            _record(run, result, MoveOutcome(key, m.to, "gone", None, "the pod was already gone"))
            run.report(Event("already-gone", f"{key} was already gone", {"pod": key}))
            continue
        except TooManyRequests as exc:
            _record(run, result, MoveOutcome(key, m.to, "blocked", None, exc.message))
            run.report(Event("gave-up", f"{key}: still refused at the timeout: {exc.message}",
                             {"pod": key, "pdb": m.pdb, "reason": exc.message}, "error"))
            _record_rest(run, result, lane[i + 1:], f"queued behind {key}")
            return
        except ClusterAccessError:
            raise
        except ApiFailure as exc:
            _record(run, result, MoveOutcome(key, m.to, "failed", None, exc.message))
            run.report(Event("failed", f"could not evict {key}: {exc.message}", {"pod": key}, "error"))
            continue
        left = 24 * 3600.0 if run.deadline is None else max(0.0, run.deadline - run.clock())
        waited = api.wait_for_replacement(m.pod, known, left, planned=m.to, selector=m.replicas or None)
        landed = waited.node
        data = {"pod": key, "from": m.source, "predicted": m.to, "candidates": list(m.candidates),
                "landedOn": landed}
        if waited.kind == "timeout":
            _record(run, result, MoveOutcome(key, m.to, "timeout", landed,
                                             "no Ready replacement by the timeout"
                                             + (f" (one is bound to {landed})" if landed else "")))
            run.report(Event("replacement-late", f"{key}: no Ready replacement by the timeout", data, "error"))
            _record_rest(run, result, lane[i + 1:], f"waits for the replacement of {key}")
            return
        status = "simulated" if waited.kind == "simulated" else "moved"
        as_planned = landed is not None and (landed == m.to or landed in m.candidates)
        _record(run, result, MoveOutcome(key, m.to, status, landed,
                                         "" if as_planned or landed is None else f"predicted {m.to}"))
        verdict = "as predicted" if as_planned else f"predicted {m.to}"
        run.report(Event("moved", f"{key}: {m.source} → {landed} ({verdict})", data,
                         "ok" if as_planned else "warn"))
