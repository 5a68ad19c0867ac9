"""Making room for workloads that do not exist yet (`kresched preempt -f FILE`).

Owns the flow, after `preempt`'s (design "Carrying a plan out"), for a what-if plan
(`kresched.plan.whatif`):
1. re-read the live state and plan the what-if again; a different plan is confirmed again;
2. reserve every node a replica's plan evicts on (the reservation taint only when the workload's
   pods tolerate it; the annotation names the workload, `deployment/shop/web`), then evict each
   plan's victims, least important first, replica after replica, through the Eviction API (429
   retried until `--eviction-timeout`; DELETE only over a budget with `--allow-pdb-violation`).
   A victim that is the replacement of an earlier one (its controller's new pod, named by it) is
   left to the scheduler's own preemption;
3. wait until the evicted pods are gone (the room is made), then with `apply` create the workloads
   through the API (server-side apply, field manager `kresched`) — without it, the operator does;
4. wait until as many of the workloads' pods as the plan places are bound (or `--timeout`);
5. ALWAYS release the reservations — on success, failure, timeout, Ctrl-C and SIGTERM.

Every API call goes through a `ClusterApi`; a dry run swaps the client, not this code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kresched.errors import ClusterAccessError
from kresched.execute.api import ApiFailure, ClusterApi, Conflict
from kresched.execute.events import Event, Reporter, count
from kresched.execute.preempt import PreemptOptions, _evict_one, _signals_blocked, release_outcome
from kresched.execute.recorder import NO_RECORDER, Recorder
from kresched.execute.reservation import ReservedByAnother, foreign_taint_refusal, reserve_patch
from kresched.execute.writes import patch_node_with_retry
from kresched.model.objects import Pod
from kresched.model.specs import LabelSelector
from kresched.model.workloads import WorkloadSpec
from kresched.plan.plans import Plan
from kresched.plan.whatif import WhatIf, WhatIfOptions, belongs_to, plan_workloads
from kresched.sources.manifests import Manifests

__all__ = ["WhatIfRunOptions", "WhatIfRunResult", "reservation_ref", "make_room"]


@dataclass(frozen=True)
class WhatIfRunOptions:
    preempt: PreemptOptions = field(default_factory=PreemptOptions)
    #: Create the workloads once the room is made (`--apply`).
    apply: bool = False


@dataclass
class WhatIfRunResult:
    """What a `preempt -f` run did (the lists are `_evict_one`'s, as `PreemptResult`'s)."""

    workloads: list[str]
    plan: WhatIf | None = None
    #: done | nothing-to-do | infeasible | unknown | blocked | aborted | timeout | gave-up | interrupted | simulated
    outcome: str = "pending"
    evicted: list[str] = field(default_factory=list)
    already_gone: list[str] = field(default_factory=list)
    pdb_blocked: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    #: Replicas whose plan a PodDisruptionBudget blocks (without --allow-pdb-violation): not carried out.
    blocked: list[str] = field(default_factory=list)
    #: Victims left to the scheduler: replacements of earlier victims, named by their controller.
    left: list[str] = field(default_factory=list)
    #: The nodes reserved, each for the workload (`reservation_ref`) it was reserved for.
    reserved: dict[str, str] = field(default_factory=dict)
    released: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    #: The workloads' pods bound, by node, and how many the plan places.
    bound: dict[str, int] = field(default_factory=dict)
    expected: int = 0
    seconds: float = 0.0


def reservation_ref(spec: WorkloadSpec) -> str:
    """What a reservation for a workload records (`kresched.io/reserved-for`): kubectl's TYPE/NAME
    with its namespace, `deployment/shop/web` (a pod's is `shop/web-1`)."""
    return f"{spec.kind.lower()}/{spec.namespace}/{spec.name}"


def make_room(api: ClusterApi, manifests: Manifests, whatif: WhatIf, options: WhatIfRunOptions, report: Reporter,
              confirm_changed: Callable[[WhatIf], bool] = lambda w: False, clock: Callable[[], float] = time.monotonic,
              result: WhatIfRunResult | None = None, recorder: Recorder = NO_RECORDER,
              whatif_options: WhatIfOptions | None = None) -> WhatIfRunResult:
    """Carry out `whatif` (see the module docstring). Pass `result` in to keep what was done when the
    run is interrupted (KeyboardInterrupt and `Terminated` propagate, after the reservations are
    released)."""
    started = clock()
    result = result if result is not None else WhatIfRunResult([reservation_ref(s) for s in manifests.workloads])
    plan_options = whatif_options or WhatIfOptions(options.preempt.plan)
    try:
        whatif = _revalidate(api, manifests, whatif, plan_options, report, confirm_changed, result)
        result.plan = whatif
        if result.outcome != "pending":
            return result
        todo = [(w.spec, p) for w in whatif.workloads for p in w.plans if p.outcome == "evict"]
        allow = options.preempt.plan.allow_pdb_violation
        for spec, p in todo:
            if p.blocked and not allow:
                result.blocked.append(p.pod.key)
                report(Event("blocked", f"{spec.kind.lower()} {spec.key}: replica {p.pod.name}'s room on {p.node} "
                                        "needs evictions a PodDisruptionBudget forbids (--allow-pdb-violation): not "
                                        "carried out", {"workload": spec.key, "node": p.node}, "warn"))
        todo = [(spec, p) for spec, p in todo if allow or not p.blocked]
        result.expected = sum(sum(w.placed.values()) for w in whatif.workloads)
        # The workloads' pods that run already (a rollout's old ones): not counted as bound later.
        known = {spec.key: {p.uid for p in _pods_of(api, spec)} for spec in manifests.workloads} \
            if api.mode == "cluster" else {}
        seen: set[str] = set()
        try:
            for spec, p in todo:
                if p.node not in seen:
                    seen.add(p.node or "")
                    _reserve(api, spec, p, report, result, recorder)
            for spec, p in todo:
                _evict_for(api, spec, p, options.preempt, report, result, recorder)
            if options.apply or todo:
                _room_made(api, [v.pod for _, p in todo for v in p.victims if v.pod.key in result.evicted],
                           options.preempt.eviction_deadline_seconds, report)
            if options.apply:
                _apply(api, manifests, report, result)
            _wait_for_pods(api, manifests, known, options, report, result, clock)
        finally:
            if result.reserved:
                with _signals_blocked():
                    _release_all(api, result, report, recorder)
    finally:
        result.seconds = clock() - started
    return result


def _revalidate(api: ClusterApi, manifests: Manifests, whatif: WhatIf, options: WhatIfOptions, report: Reporter,
                confirm_changed: Callable[[WhatIf], bool], result: WhatIfRunResult) -> WhatIf:
    fresh = plan_workloads(api.read_state(), manifests, options)
    if _same(fresh, whatif):
        report(Event("revalidated", f"the plan still holds on the live state: {_summary(fresh)}", {}))
    else:
        report(Event("replanned", f"the cluster changed; new plan: {_summary(fresh)}", {}, "warn"))
        if any(p.outcome == "evict" for p in fresh.plans) and not confirm_changed(fresh):
            result.outcome = "aborted"
            report(Event("aborted", "the new plan was not confirmed: nothing was changed", {}, "warn"))
            return fresh
    return fresh


def _same(a: WhatIf, b: WhatIf) -> bool:
    def shape(w: WhatIf) -> list:
        return [(p.outcome, p.node, [v.pod.key for v in p.victims]) for p in w.plans]

    return shape(a) == shape(b)


def _summary(w: WhatIf) -> str:
    evict = [p for p in w.plans if p.outcome == "evict"]
    placed = sum(sum(x.placed.values()) for x in w.workloads)
    wanted = sum(x.replicas for x in w.workloads)
    return f"{placed} of {count(wanted, 'replica')} placed, {len(evict)} after evicting " \
           f"{count(sum(len(p.victims) for p in evict), 'pod')}"


def _reserve(api: ClusterApi, spec: WorkloadSpec, p: Plan, report: Reporter, result: WhatIfRunResult,
             recorder: Recorder) -> None:
    node_name = p.node or ""
    ref = reservation_ref(spec)
    node = api.get_node(node_name)
    refusal = foreign_taint_refusal(node)
    if refusal is not None:
        report(refusal)
        return
    if not p.taint:
        report(Event("reserve-skipped", f"the pods of {spec.kind.lower()} {spec.key} do not tolerate "
                                        f"CriticalAddonsOnly, so node {node_name} is not reserved: another pod may "
                                        "take the room first",
                     {"node": node_name}, "warn"))
        return
    result.reserved[node_name] = ref  # before the write: an interrupted run still releases it
    try:
        patched = patch_node_with_retry(api, node_name,
                                        lambda n: reserve_patch(n, ref, datetime.now(UTC), add_taint=True))
    except ReservedByAnother as exc:
        del result.reserved[node_name]
        report(Event("reserve-conflict", f"{exc.message}: its evictions are left out", {"node": node_name}, "error"))
        return
    report(Event("reserved", f"reserved node {node_name} for {ref} (taint CriticalAddonsOnly=kresched:NoSchedule)",
                 {"node": node_name, "workload": ref}, "ok"))
    recorder.reserved(patched or node_name, ref)


def _evict_for(api: ClusterApi, spec: WorkloadSpec, p: Plan, options: PreemptOptions, report: Reporter,
               result: WhatIfRunResult, recorder: Recorder) -> None:
    for v in reversed(p.victims):
        if v.pod.key.endswith("~replacement"):
            key = v.pod.key.removesuffix("~replacement")
            result.left.append(key)
            report(Event("left", f"the replacement of {key} (its controller names it) is left to the scheduler's own "
                                 "preemption", {"pod": key, "node": v.node}, "warn"))
            continue
        if v.pod.key in result.evicted or v.pod.key in result.already_gone:
            continue
        _evict_one(api, v, p, options, report, result, _ForWorkload(recorder, reservation_ref(spec)))


class _ForWorkload:
    """The recorder, for evictions made for a workload that does not exist yet: the Event names it
    in its note (it has no object to relate to)."""

    def __init__(self, recorder: Recorder, ref: str) -> None:
        self.recorder = recorder
        self.ref = ref

    def preempted(self, victim: Pod, for_pod: Pod, node: str, grace: int, over_pdb: str | None = None,
                  gang: str | None = None, stops_gang: str | None = None) -> None:
        self.recorder.preempted(victim, self.ref, node, grace, over_pdb, stops_gang=stops_gang)


def _room_made(api: ClusterApi, evicted: list[Pod], timeout: float, report: Reporter) -> None:
    """Until the evicted pods are gone (their grace is at most --max-grace), so that the room is there."""
    if not evicted:
        return
    deadline = time.monotonic() + max(timeout, 1.0)
    pause = 0.1
    while True:
        left = [p for p in evicted if p.key not in api.which_gone(evicted)]
        if not left:
            report(Event("room-made", f"the {count(len(evicted), 'evicted pod')} are gone: the room is made", {}))
            return
        if time.monotonic() >= deadline:
            report(Event("still-terminating", f"{count(len(left), 'evicted pod')} still terminating: "
                                              f"{', '.join(p.key for p in left)}", {}, "warn"))
            return
        time.sleep(pause)
        pause = min(pause * 2, 2.0)


def _apply(api: ClusterApi, manifests: Manifests, report: Reporter, result: WhatIfRunResult) -> None:
    for spec in manifests.workloads:
        obj = dict(spec.raw)
        obj["metadata"] = {**(obj.get("metadata") or {}), "namespace": spec.namespace, "name": spec.name}
        try:
            answer = api.apply_object(obj)
        except Conflict as exc:
            result.failed.append((reservation_ref(spec), exc.message))
            report(Event("apply-conflict", f"could not apply {spec.kind.lower()} {spec.key}: {exc.message} (another "
                                           "field manager owns some of its fields)", {"workload": spec.key}, "error"))
            continue
        except ClusterAccessError:
            raise
        except ApiFailure as exc:
            result.failed.append((reservation_ref(spec), exc.message))
            report(Event("apply-failed", f"could not apply {spec.kind.lower()} {spec.key}: {exc.message}",
                         {"workload": spec.key}, "error"))
            continue
        result.applied.append(reservation_ref(spec))
        uid = (answer.get("metadata") or {}).get("uid")
        report(Event("applied", f"applied {spec.kind.lower()} {spec.key} (server-side, field manager kresched)",
                     {"workload": spec.key, "uid": uid}, "ok"))


def _wait_for_pods(api: ClusterApi, manifests: Manifests, known: dict[str, set[str]], options: WhatIfRunOptions,
                   report: Reporter, result: WhatIfRunResult, clock: Callable[[], float]) -> None:
    """Until as many of the workloads' pods as the plan places are bound (those in `known`, which ran
    before the run, are not counted: a rollout's old ones), or the timeout."""
    if api.mode != "cluster":
        result.outcome = "simulated"
        return
    if result.expected == 0:
        result.outcome = "nothing-to-do" if not options.apply else "done"
        return
    how = "" if options.apply else " (apply them now: kresched does not create them without --apply)"
    report(Event("waiting", f"waiting up to {options.preempt.timeout_seconds:.0f}s for "
                            f"{count(result.expected, 'pod')} of the workloads to be bound{how}",
                 {"expected": result.expected, "timeout": options.preempt.timeout_seconds}))
    deadline = clock() + options.preempt.timeout_seconds
    pause = 0.1
    while True:
        bound: dict[str, int] = {}
        for spec in manifests.workloads:
            for p in _pods_of(api, spec):
                if p.uid in known.get(spec.key, ()) or not p.spec.node_name or p.is_terminating:
                    continue
                bound[p.spec.node_name] = bound.get(p.spec.node_name, 0) + 1
        result.bound = dict(sorted(bound.items()))
        n = sum(bound.values())
        if n >= result.expected:
            result.outcome = "done"
            report(Event("bound", f"{count(n, 'pod')} of the workloads bound: "
                                  + ", ".join(f"{k} {v}" for k, v in result.bound.items()), {"bound": result.bound},
                         "ok"))
            return
        if clock() >= deadline:
            result.outcome = "timeout"
            report(Event("timeout", f"only {n} of the {count(result.expected, 'pod')} the plan places are bound "
                                    "after the timeout", {"bound": result.bound}, "error"))
            return
        time.sleep(pause)
        pause = min(pause * 2, 2.0)


def _pods_of(api: ClusterApi, spec: WorkloadSpec) -> list[Pod]:
    """The workload's pods in the cluster: those its template's labels (as the manifest writes them:
    what the controller adds, kresched can only guess) select, owned by it (`belongs_to`)."""
    raw = spec.raw
    if spec.kind == "Pod":
        labels = (raw.get("metadata") or {}).get("labels") or {}
    else:
        spec_ = raw.get("spec") or {}
        if spec.kind == "CronJob":
            spec_ = ((spec_.get("jobTemplate") or {}).get("spec")) or {}
        labels = ((spec_.get("template") or {}).get("metadata") or {}).get("labels") or {}
    selector = LabelSelector(match_labels={k: v for k, v in labels.items() if isinstance(v, str)})
    return [p for p in api.pods_matching(spec.namespace, selector) if belongs_to(spec, p)]


def _release_all(api: ClusterApi, result: WhatIfRunResult, report: Reporter, recorder: Recorder) -> None:
    for node, ref in list(result.reserved.items()):
        outcome, _ = release_outcome(api, node, report, pod_key=ref, recorder=recorder)
        if outcome == "released":
            result.released.append(node)
