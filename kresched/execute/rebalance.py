"""Carrying a rebalance plan out: evict the moved pods wave by wave, wait for their replacements, compare.

Owns `rebalance`. The plan (`kresched.plan.rebalance.plan_rebalance`) decides what moves and
where each replacement should land; this module acts on it through drain's eviction machinery
(`evict_until_allowed`: the Eviction API, a 429 waits for the PDB until the deadline):
1. the moves of one workload (controller) form one *lane*, in the plan's order: a lane's next move
   waits until a new pod of that controller is bound and Ready after its last one — the workload
   never loses more than one replica to the rebalance at a time, and the PDB's unit is back
   before the next eviction asks for it;
2. the moves go in *waves*: before each, the cluster is read again (the first wave uses the one
   the plan was made on) and `kresched.plan.rebalance_rederive.plan_wave` re-derives, from where
   the earlier replacements really landed, which of the lanes' next moves (at most `parallel`, in
   the plan's order) to evict now — at once, only moves whose predictions hold together in any
   order the scheduler places their replacements — and where each may land. A move that no longer
   helps is *dropped*, one whose predicted set changed is *retargeted*, each with a report; the
   wave's evictions go out together and the next wave starts when every replacement of this one
   is Ready (or the move ended otherwise). A dry run re-derives nothing: nothing lands;
3. each move ends `moved` (with the node the replacement actually landed on, next to the
   predicted set: outside it is *elsewhere*), `dropped`, `blocked` (its PDB still refused at the
   deadline; the lane's later moves are `not-started`), `failed`, `gone` (the pod was gone
   already), `timeout` (evicted, but no Ready replacement by the deadline) or, in a dry run,
   `simulated`;
4. on Ctrl-C / SIGTERM, no new eviction starts; `result` (pass one in) says what was done.
An RBAC refusal (`ClusterAccessError`) stops everything: every other eviction would meet it too.
Nothing is cordoned or tainted: the scheduler places the replacements.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from kresched.errors import ClusterAccessError
from kresched.execute.api import ApiFailure, ClusterApi, NotFound, TooManyRequests
from kresched.execute.drain import DrainOptions, DrainResult, EvictionRun, StopRequested, evict_until_allowed
from kresched.execute.events import Event, Reporter, count
from kresched.execute.recorder import NO_RECORDER, Recorder
from kresched.model.cluster import ClusterState
from kresched.plan.drain import DrainPod
from kresched.plan.rebalance_plans import Move, RebalancePlan
from kresched.plan.rebalance_rederive import Prediction, Wave, as_planned, ends_as_planned, plan_wave

__all__ = ["MoveOutcome", "RebalanceOptions", "RebalanceResult", "nodes_text", "rebalance"]


@dataclass(frozen=True)
class RebalanceOptions:
    #: Lanes (workloads) moving at once.
    parallel: int = 5
    #: Give up (on budgets, on replacements) after this; None = no limit.
    timeout_seconds: float | None = None


@dataclass(frozen=True)
class MoveOutcome:
    pod: str
    #: The node predicted right before the eviction (re-derived; the plan's when nothing was).
    predicted: str
    #: moved | dropped | blocked | failed | gone | timeout | not-started | simulated
    status: str
    landed_on: str | None = None
    message: str = ""
    #: Every node the replacement may land on, as predicted right before the eviction.
    candidates: tuple[str, ...] = ()
    #: The prediction re-derived before the eviction is not the plan's.
    retargeted: bool = False
    #: The wave that evicted it (1, 2, ...; 0: none did).
    wave: int = 0

    @property
    def as_predicted(self) -> bool:
        return self.landed_on is not None and (self.landed_on == self.predicted or self.landed_on in self.candidates)


@dataclass
class RebalanceResult:
    outcomes: dict[str, MoveOutcome] = field(default_factory=dict)
    interrupted: bool = False
    seconds: float = 0.0
    #: The round ended in a state the plan predicted (`kresched.plan.rebalance_rederive.ends_as_planned`).
    end_as_planned: bool = False

    @property
    def complete(self) -> bool:
        return not self.interrupted and all(o.status in ("moved", "gone", "simulated", "dropped")
                                            for o in self.outcomes.values())


def nodes_text(nodes: tuple[str, ...] | list[str]) -> str:
    """`n4`, `n4 or n5`, `n3, n4 or n5`."""
    return nodes[0] if len(nodes) == 1 else f"{', '.join(nodes[:-1])} or {nodes[-1]}"


def rebalance(api: ClusterApi, plan: RebalancePlan, options: RebalanceOptions, report: Reporter,
              clock: Callable[[], float] = time.monotonic, result: RebalanceResult | None = None,
              recorder: Recorder = NO_RECORDER, state: ClusterState | None = None) -> RebalanceResult:
    """`state`: the cluster the plan was made on (the first wave is re-derived on it rather than on
    a second read); None: read it again."""
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
        waves = _Waves(run, plan, lanes, workers, result, state)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rebalance") as pool:
            waves.carry_out(pool)
        result.end_as_planned = waves.ended_as_planned()
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


class _Waves:
    """Step 2 of the module's docstring: the lanes' next moves, wave after wave."""

    def __init__(self, run: EvictionRun, plan: RebalancePlan, lanes: list[list[Move]], parallel: int,
                 result: RebalanceResult, state: ClusterState | None) -> None:
        self.run = run
        self.plan = plan
        self.lanes = [list(lane) for lane in lanes]
        self.parallel = parallel
        self.result = result
        self.state = state
        #: The cluster the plan was made on (or as first read): what `ended_as_planned` replays.
        self.initial = state
        self.order = {m.pod.key: i for i, m in enumerate(plan.moves)}
        self.lane_of = {m.pod.key: i for i, lane in enumerate(lanes) for m in lane}
        #: Only a cluster really moves pods; a dry run's replacements land nowhere to re-derive from.
        self.rederive = run.api.mode == "cluster"
        self.number = 0

    def carry_out(self, pool: ThreadPoolExecutor) -> None:
        run = self.run
        while True:
            if not any(self.lanes):
                return
            if run.stop.is_set():
                self._rest("interrupted before its turn")
                return
            if run.past_deadline():
                rest = [m.pod.key for lane in self.lanes for m in lane]
                run.report(Event("not-started", f"the timeout passed before the turn of {', '.join(rest)}",
                                 {"pods": rest}, "error"))
                self._rest("the timeout passed before its turn")
                return
            wave = self._next_wave()
            for p in wave.dropped:
                self._drop(p)
            if not wave.run:
                continue
            self.number += 1
            for p in wave.run:
                self._advance(p.move)
                if p.retargeted:
                    self._report_retarget(p)
            futures: list[Future[None]] = [pool.submit(self._move, p) for p in wave.run]
            try:
                for f in futures:
                    f.result()
            except BaseException:
                run.stop.set()
                for f, p in zip(futures, wave.run, strict=True):
                    if f.cancel():
                        self._not_started(p.move, "interrupted before its turn")
                self._rest("interrupted before its turn")
                raise
            for p in wave.run:
                o = self.result.outcomes.get(p.move.pod.key)
                if o is not None and o.status in ("blocked", "timeout"):
                    why = f"queued behind {o.pod}" if o.status == "blocked" else f"waits for the replacement of {o.pod}"
                    lane = self.lanes[self.lane_of[p.move.pod.key]]
                    for m in lane:
                        self._not_started(m, why)
                    lane.clear()

    def _next_wave(self) -> Wave:
        ready = sorted((lane[0] for lane in self.lanes if lane), key=lambda m: self.order[m.pod.key])[:self.parallel]
        if not self.rederive:
            keys = [m.pod.key for m in ready]
            return Wave(tuple(as_planned(m, tuple(k for k in keys if k != m.pod.key)) for m in ready))
        state = self.state if self.state is not None and self.number == 0 else self.run.api.read_state()
        self.state = None
        if self.initial is None:
            self.initial = state
        return plan_wave(state, self.plan, ready)

    def ended_as_planned(self) -> bool:
        outcomes = self.result.outcomes
        if not self.rederive:
            return all(o.status == "simulated" for o in outcomes.values())
        landed = {k: o.landed_on for k, o in outcomes.items() if o.status == "moved" and o.landed_on is not None}
        return self.initial is not None and len(landed) == len(self.plan.moves) and \
            ends_as_planned(self.initial, self.plan, landed)

    def _advance(self, move: Move) -> None:
        """Take `move`, its lane's next, off its lane."""
        lane = self.lanes[self.lane_of[move.pod.key]]
        assert lane[0] is move
        lane.pop(0)

    def _drop(self, p: Prediction) -> None:
        m = p.move
        self._advance(m)
        key = m.pod.key
        if p.gone:
            _record(self.run, self.result, MoveOutcome(key, m.to, "gone", None, "the pod was already gone",
                                                       m.candidates or (m.to,)))
            self.run.report(Event("already-gone", f"{key} was already gone", {"pod": key}))
            return
        _record(self.run, self.result, MoveOutcome(key, m.to, "dropped", None, f"not moved: {p.dropped}",
                                                   m.candidates or (m.to,)))
        self.run.report(Event("dropped", f"{key}: not moved, re-derived on the cluster as it is now: {p.dropped}",
                              {"pod": key, "from": m.source, "planned": m.to, "reason": p.dropped}, "warn"))

    def _report_retarget(self, p: Prediction) -> None:
        m = p.move
        planned = m.candidates or (m.to,)
        with_others = f", evicted at once with {', '.join(p.together)}" if p.together else ""
        self.run.report(Event(
            "retargeted", f"{m.pod.key}: now predicted {nodes_text(p.candidates)} (the plan said "
                          f"{nodes_text(planned)}){with_others}",
            {"pod": m.pod.key, "from": m.source, "predicted": p.to, "candidates": list(p.candidates),
             "planned": m.to, "plannedCandidates": list(planned), "together": list(p.together)}))

    def _not_started(self, m: Move, why: str) -> None:
        if m.pod.key not in self.result.outcomes:
            _record(self.run, self.result, MoveOutcome(m.pod.key, m.to, "not-started", None, why,
                                                       m.candidates or (m.to,)))

    def _rest(self, why: str) -> None:
        for lane in self.lanes:
            for m in lane:
                self._not_started(m, why)
            lane.clear()

    def _move(self, p: Prediction) -> None:
        """One move of the wave: evict, wait for the replacement, compare (runs in the pool)."""
        run, result, m = self.run, self.result, p.move
        api = run.api
        key = m.pod.key
        to = p.to or m.to

        def outcome(status: str, landed: str | None = None, message: str = "") -> MoveOutcome:
            return MoveOutcome(key, to, status, landed, message, p.candidates, p.retargeted, self.number)

        if run.stop.is_set():
            self._not_started(m, "interrupted before its turn")
            return
        try:
            known = {x.uid for x in api.replicas_of(m.pod, m.replicas or None)} | {m.pod.uid}
            evict_until_allowed(run, DrainPod(m.pod, m.source, m.pdb))
            run.recorder.rebalanced(m.pod, to, m.objective, m.reason)
        except StopRequested:
            self._not_started(m, "interrupted before its turn")
            return
        except NotFound:
            _record(run, result, outcome("gone", None, "the pod was already gone"))
            run.report(Event("already-gone", f"{key} was already gone", {"pod": key}))
            return
        except TooManyRequests as exc:
            _record(run, result, outcome("blocked", None, exc.message))
            run.report(Event("gave-up", f"{key}: still refused at the timeout: {exc.message}",
                             {"pod": key, "pdb": m.pdb, "reason": exc.message}, "error"))
            return
        except ClusterAccessError:
            raise
        except ApiFailure as exc:
            _record(run, result, outcome("failed", None, exc.message))
            run.report(Event("failed", f"could not evict {key}: {exc.message}", {"pod": key}, "error"))
            return
        left = 24 * 3600.0 if run.deadline is None else max(0.0, run.deadline - run.clock())
        waited = api.wait_for_replacement(m.pod, known, left, planned=to, selector=m.replicas or None)
        landed = waited.node
        data = {"pod": key, "from": m.source, "predicted": to, "candidates": list(p.candidates),
                "landedOn": landed, "retargeted": p.retargeted, "wave": self.number}
        if waited.kind == "timeout":
            _record(run, result, outcome("timeout", landed, "no Ready replacement by the timeout"
                                         + (f" (one is bound to {landed})" if landed else "")))
            run.report(Event("replacement-late", f"{key}: no Ready replacement by the timeout", data, "error"))
            return
        status = "simulated" if waited.kind == "simulated" else "moved"
        done = outcome(status, landed)
        notes = []
        if p.retargeted:
            notes.append(f"retargeted before its eviction: the plan said {nodes_text(m.candidates or (m.to,))}")
        if landed is not None and not done.as_predicted:
            notes.append(f"predicted {nodes_text(p.candidates)}")
        _record(run, result, outcome(status, landed, "; ".join(notes)))
        verdict = "as predicted" if done.as_predicted else f"predicted {nodes_text(p.candidates)}"
        if done.as_predicted and p.retargeted:
            verdict += ", retargeted"
        run.report(Event("moved", f"{key}: {m.source} → {landed} ({verdict})", data,
                         "ok" if done.as_predicted else "warn"))
