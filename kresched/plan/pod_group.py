"""What a plan makes of the scheduler's own gang scheduling, where the cluster's scheduler does it
(`--feature-gates ...GangScheduling=true`; `sched.pod_group_cycle`).

Where the gate is on, a v1.36 pod group (`spec.schedulingGroup`, a `gang` or a `basic` policy) is
not placed by kresched's own all-or-nothing rule (`plan.gang`) but as kube-scheduler places it:

1. the silent waits of GangScheduling's PreEnqueue — the PodGroup does not exist, or fewer than
   minCount of a gang's pods do: the members never reach a cycle, nothing is written; the plan
   says so in kresched's words and plans nothing;
2. one pod-group cycle on the planner's working cluster: the members placed in the scheduler's
   order, each on the node its filters and scores pick with the earlier ones assumed (`fits`
   plans, the nodes tied with each), bound together when Permit lets the group through;
3. when the group is Unschedulable and `WorkloadAwarePreemption` is on: workload-aware
   preemption's victims are the plan's — the scheduler's choice stands (as for devices in
   `plan.devices`: kresched does not choose other victims for it), PodGroup priorities, units and
   PDBs as upstream weighs them — and the members go where the next cycle, without the victims,
   puts them (`evict` plans; each victim on the plan of the member that lands on its node, the
   others on the first member's); when it finds none, every member is `infeasible` with the
   scheduler's own words;
4. every member plan of a gang carries `plan.gang` (`GangOutcome`, `scheduler=True`) with the
   PodGroup's predicted `PodGroupScheduled` condition.

`run_group_cycle` (1–2, and 3's victims) is shared with `explain`. With `WorkloadAwarePreemption`
off, a member that fits nowhere runs the scheduler's per-pod preemption inside the cycle, which
is not simulated: where it would nominate a node, `simulate_group` says so and kresched's own rule
plans the gang (`plan.gang`). Coscheduling, Volcano and Kueue gangs never come here. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.gangs import WORKLOAD_API, Gang, PodGroup
from kresched.model.objects import Pod
from kresched.plan.aftermath import apply_cluster
from kresched.plan.gang_breaks import GangBreak, gang_breaks
from kresched.plan.placement import Landing, Placer, bound_to
from kresched.plan.plans import RESERVATION_TAINT, GangOutcome, Outcome, Plan, Victim
from kresched.sched.diagnosis import fit_error_message, scheduler_error
from kresched.sched.dynamic_resources import post_filter_note
from kresched.sched.features import FeatureGates
from kresched.sched.framework import Code, Snapshot
from kresched.sched.gang_scheduling import (
    ERR_MIN_COUNT_NOT_CREATED,
    PodGroupState,
    is_gang,
    pod_group_state,
    pre_enqueue,
)
from kresched.sched.pod_group_cycle import (
    ERR_MIXED_SCHEDULERS,
    NOT_ELIGIBLE_WAP,
    AlgorithmResult,
    Attempt,
    CycleResult,
    MemberResult,
    PodGroupCondition,
    WorkloadPreemption,
    member_order_key,
    pod_group_cycle,
    snapshot_without,
)
from kresched.sched.pod_group_preemption import NO_VICTIMS_FOR_PREEMPTOR, domain_victims, pod_group_priority
from kresched.sched.preemption import NOT_ELIGIBLE_NEVER, full_scheduler_message, post_filter_error, preemption_message
from kresched.sched.profile import Profile, Profiles, scheduler_name
from kresched.sched.taint_toleration import tolerations_tolerate_taint

if TYPE_CHECKING:  # (the planner plans with this module: it is handed in)
    from kresched.plan.planner import Planner

__all__ = ["GroupRun", "GroupUnit", "GroupVerdict", "Round", "SimulatedGroup", "basic_group_of", "group_verdict",
           "run_group_cycle", "simulate_group", "simulates_groups", "unit_of_gang", "unit_of_pod"]


@dataclass(frozen=True)
class GroupUnit:
    """A v1.36 pod group as the scheduler takes it: its PodGroup (None: missing, or unknown when the
    source held no PodGroups — `known`), every member it knows (bound, pending, gated), and the gang
    kresched's index made of it (None for a `basic` group)."""

    namespace: str
    name: str
    pod_group: PodGroup | None
    members: tuple[Pod, ...]
    gang: Gang | None = None
    known: bool = True

    @property
    def key(self) -> str:
        return f"PodGroup {self.namespace}/{self.name}"


def simulates_groups(gates: FeatureGates) -> bool:
    """Whether the cluster's scheduler runs pod-group cycles kresched simulates: `GangScheduling`."""
    return gates.gang_scheduling


def unit_of_gang(gang: Gang, state: ClusterState) -> GroupUnit:
    """A Workload-API gang as the scheduler takes it. A what-if gang made by `WorkloadWithJob` has no
    PodGroup object yet: the one the Job controller makes (gang minCount, disruptionMode Pod, no
    priorityClassName: priority 0, recorded)."""
    group = gang.pod_group
    if group is None and not gang.assumed:
        meta = {"name": gang.name, "namespace": gang.namespace}
        spec = {"schedulingPolicy": {"gang": {"minCount": gang.min_count}}, "disruptionMode": "Pod", "priority": 0}
        group = msgspec.convert({"apiVersion": WORKLOAD_API, "metadata": meta, "spec": spec}, PodGroup)
    known = not gang.assumed or "PodGroup" in state.gang_kinds
    return GroupUnit(gang.namespace, gang.name, group, gang.members, gang, known)


def unit_of_pod(state: ClusterState, pod: Pod) -> GroupUnit | None:
    """The pod group `pod` names as the scheduler takes it (None: it names none)."""
    groups = state.scheduling_groups
    key = groups.key_of(pod)
    if key is None:
        return None
    gang = state.gangs.gang_of(pod)
    return GroupUnit(key[0], key[1], groups.pod_group(*key), groups.members(*key),
                     gang if gang is not None and gang.flavor == "workload" else None, groups.known)


def basic_group_of(state: ClusterState, gates: FeatureGates) -> Callable[[Pod], GroupUnit | None] | None:
    """For `plan.gang.queue_units`: the `basic` pod group of a pod, where the scheduler runs pod-group
    cycles (None when it does not); a gang's members are `gang_of`'s."""
    if not simulates_groups(gates):
        return None

    def of(pod: Pod) -> GroupUnit | None:
        unit = unit_of_pod(state, pod)
        return unit if unit is not None and unit.pod_group is not None and not is_gang(unit.pod_group) else None

    return of


# -- one cycle ---------------------------------------------------------------------------------------------


class _Members:
    """`sched.pod_group_cycle.MemberScheduler` with kresched's placer: the scheduling algorithm of
    one member, with the PostFilters' words for one that fits nowhere."""

    __slots__ = ("nominated", "placer", "profile", "wap")

    def __init__(self, profile: Profile, placer: Placer, nominated: dict[str, list[Pod]], wap: bool) -> None:
        self.profile, self.placer, self.nominated, self.wap = profile, placer, nominated, wap

    def schedule(self, pod: Pod, snapshot: Snapshot, post_filters: bool) -> Attempt:
        planned = self.profile.planning_pod(pod)
        diag, cycle = self.placer.filter(planned, snapshot, self.nominated)
        error = scheduler_error(diag) or diag.error
        if error:
            return Attempt(None, message=error, error=True)
        if diag.feasible:
            landing = self.placer.landing(planned, snapshot, diag, cycle)
            return Attempt(landing.node, landing.candidates, landing.likely, detail=landing)
        message = fit_error_message(diag)
        if not post_filters:
            return Attempt(None, message=message)
        posts = self.profile.post_filters
        stopped = post_filter_error(diag, posts)
        needs = False
        if self.wap or stopped is not None or not self.profile.preempts:
            preemption: str | None = NOT_ELIGIBLE_WAP
        else:
            preemption = preemption_message(list(self.placer.plugins), planned, snapshot, diag, cycle,
                                            self.nominated)[0]
            needs = preemption is None
        text = full_scheduler_message(message, preemption, stopped, posts, post_filter_note(cycle))
        return Attempt(None, message=text, needs_preemption=needs)

    def assume(self, pod: Pod, node: str, snapshot: Snapshot) -> Snapshot:
        info = snapshot.by_name[node].clone()
        info.add_pod(bound_to(pod, info.node))
        return snapshot.with_node_info(info)


@dataclass(frozen=True)
class Round:
    """One pod-group cycle of the group's turn: what it writes (`cycle`), where it places members
    (`result`: the cycle's own, or after workload-aware preemption the next cycle's, once its
    `victims` are gone; None when it places none)."""

    cycle: CycleResult
    result: AlgorithmResult | None
    victims: tuple[Pod, ...] = ()

    @property
    def placed(self) -> tuple[MemberResult, ...]:
        return self.result.placed if self.result is not None else ()


@dataclass(frozen=True)
class GroupRun:
    """A pod group's turn in the scheduler, on one cluster: a silent wait (`wait`, kresched's words:
    the scheduler writes nothing), an error the scheduler writes for every member (`error`), or its
    cycles (`rounds`: the first on the cluster as it is, with its members in the scheduler's order
    `order`; then, as long as one places members and some are left, the next one for those left,
    as the scheduler retries them at once). `fallback`: why it is not simulated (kresched's own rule
    plans it)."""

    unit: GroupUnit
    order: tuple[Pod, ...] = ()
    state: PodGroupState | None = None
    rounds: tuple[Round, ...] = ()
    wait: str | None = None
    error: str | None = None
    fallback: str | None = None
    profile: Profile | None = field(default=None, compare=False)

    @property
    def cycle(self) -> CycleResult | None:
        """The first cycle: what the scheduler writes now."""
        return self.rounds[0].cycle if self.rounds else None

    @property
    def placed(self) -> tuple[MemberResult, ...]:
        return tuple(m for r in self.rounds for m in r.placed)

    @property
    def condition(self) -> PodGroupCondition | None:
        """The PodGroup's condition once the turn has played out."""
        return self.rounds[-1].cycle.final_condition if self.rounds else None


def run_group_cycle(state: ClusterState, snapshot: Snapshot, unit: GroupUnit, pods: Sequence[Pod],
                    profiles: Profiles, placer_for: Callable[[Pod], tuple[Profile, Placer] | None],
                    nominated: dict[str, list[Pod]]) -> GroupRun:
    """The scheduler's turn for `unit`'s queued members `pods` on `snapshot` (see the module docstring);
    `placer_for(pod)`: the profile and placer that schedule it."""
    gates = profiles.gates
    if unit.pod_group is None and not unit.known:
        return GroupRun(unit, fallback=f"the source holds no PodGroups, so whether {unit.key} exists is unknown: "
                                       "the scheduler's pod-group cycle is not simulated")
    placers = [placer_for(p) for p in pods]
    if not pods or any(p is None for p in placers):
        return GroupRun(unit, fallback="a member is another scheduler's: the pod-group cycle is not simulated")
    names = sorted({scheduler_name(p) for p in pods})
    if len(names) > 1:
        return GroupRun(unit, error=ERR_MIXED_SCHEDULERS.format(names[1], names[0]))
    group_state = pod_group_state(unit.members)
    waiting = pre_enqueue(pods[0], unit.pod_group, group_state)
    if not waiting.is_success:
        return GroupRun(unit, state=group_state, wait=_wait_text(unit, group_state, waiting.reasons[0]))
    profile, placer = placers[0]  # type: ignore[misc]
    order = tuple(sorted(pods, key=member_order_key))
    members = _Members(profile, placer, nominated, gates.workload_aware_preemption)
    wap = gates.workload_aware_preemption and unit.pod_group is not None
    rounds: list[Round] = []
    pending, snap, counts = order, snapshot, group_state
    existing = None
    while pending:
        cycle = pod_group_cycle(unit.pod_group, pending, counts, snap, members,
                                _preemption(state, snap, profile) if wap else None, existing)
        if cycle.algorithm.needs_preemption and not cycle.scheduled:
            return GroupRun(unit, order, group_state, tuple(rounds), profile=profile,
                            fallback="WorkloadAwarePreemption is off: a member fits nowhere and the scheduler's "
                                     "per-pod preemption inside its pod-group cycle (not simulated) would nominate "
                                     "a node")
        if cycle.scheduled:
            rounds.append(Round(cycle, cycle.algorithm))
        elif cycle.waiting_on_preemption and cycle.after is not None and cycle.after.code == Code.SUCCESS:
            assert cycle.preemption is not None
            rounds.append(Round(cycle, cycle.after, cycle.preemption.pods))
        else:
            rounds.append(Round(cycle, None))
        placed = rounds[-1].placed
        if not placed:
            break
        done = {m.pod.key for m in placed}
        pending = tuple(p for p in pending if p.key not in done)
        assert rounds[-1].result is not None
        snap = rounds[-1].result.snapshot
        counts = PodGroupState(counts.all_pods, counts.assigned + len(placed))
        existing = cycle.final_condition
    return GroupRun(unit, order, group_state, tuple(rounds), profile=profile)


def _preemption(state: ClusterState, snapshot: Snapshot, profile: Profile) -> WorkloadPreemption:
    """Workload-aware preemption's view of `snapshot`: its units, the PDBs, the cluster without some pods."""
    units = domain_victims(snapshot.node_infos, state.scheduling_groups.pod_group_of)
    by_key = {p.key: p for v in units for p in v.pods}

    def without(keys: frozenset[str]) -> Snapshot:
        return snapshot_without(snapshot, [by_key[k] for k in sorted(keys)])

    return WorkloadPreemption(True, profile.preempts, units, state.pdbs, without)


def _wait_text(unit: GroupUnit, state: PodGroupState, reason: str) -> str:
    """kresched's words for a PreEnqueue wait, which the scheduler never writes anywhere."""
    silent = ("; the scheduler keeps its members out of its queue and writes nothing: no event, no condition "
              f"(GangScheduling's PreEnqueue: \"{reason}\")")
    if reason == ERR_MIN_COUNT_NOT_CREATED:
        assert unit.pod_group is not None
        policy = unit.pod_group.spec.scheduling_policy
        need = policy.gang.min_count if policy is not None and policy.gang is not None else 0
        have = f"{state.all_pods} {'does' if state.all_pods == 1 else 'do'}"
        return f"waiting for minCount pods: {unit.key} needs {need} members to exist and {have}" + silent
    return f"waiting for its {unit.key}, which does not exist" + silent


# -- the plan ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimulatedGroup:
    """A pod group's pending members planned as the scheduler places them."""

    unit: GroupUnit
    plans: tuple[Plan, ...]
    #: Members these plans place.
    placed: int
    outcome: Outcome
    #: What the group's plan came to (kresched's words).
    message: str
    run: GroupRun
    #: The gang's outcome on every member plan (None for a basic group).
    info: GangOutcome | None = None


def simulate_group(planner: Planner, unit: GroupUnit, pods: Sequence[Pod]) -> SimulatedGroup | str:
    """`pods` (the group's pending members) planned as the scheduler's pod-group cycles place them,
    committed on the planner's working cluster; or why that is not simulated (a sentence: the caller
    plans them by kresched's own rule)."""
    keys = {p.key for p in unit.members} | {p.key for p in pods}
    run = run_group_cycle(planner.state, planner.work.snapshot, unit, pods, planner.profiles, planner.placer_for,
                          planner.nominated_except(keys))
    if run.fallback is not None:
        return run.fallback
    if run.wait is not None or run.error is not None:
        return _given_up(unit, pods, run.wait or run.error or "", run, None)
    if not run.placed:
        return _given_up(unit, pods, _unscheduled_text(unit, run), run, run.condition)
    return _placed(planner, unit, run)


def _placed(planner: Planner, unit: GroupUnit, run: GroupRun) -> SimulatedGroup:
    """The members bind where the cycles place them, once workload-aware preemption's victims are gone."""
    work = planner.work
    options = planner.options
    snap = work.snapshot
    placed = run.placed
    victims = [v for r in run.rounds for v in r.victims]
    sim = next(r.result.snapshot for r in reversed(run.rounds) if r.result is not None and r.placed)
    out, sim = _landed(planner, unit, victims, sim)
    # Each victim on the plan of the first member its round lands on its node; the others on its round's first.
    owner: dict[str, str] = {}
    for r in run.rounds:
        first_on: dict[str, str] = {}
        for m in r.placed:
            first_on.setdefault(m.attempt.node or "", m.pod.key)
        for v in r.victims:
            owner[v.key] = first_on.get(v.spec.node_name, r.placed[0].pod.key)
    share: dict[str, list[Victim]] = {}
    for v in out:
        share.setdefault(owner[v.pod.key], []).append(v)
    tier, blocked = _tier(out, options.max_grace_seconds, options.allow_pdb_violation)
    message = _placed_text(unit, run, len(victims), blocked, gang_breaks(planner.state, victims))
    info = _outcome(unit, len(placed), True, message, run.condition)
    by_key = {m.pod.key: m for m in placed}
    left = {p.key: msg for r in run.rounds for p in run.order if (msg := r.cycle.messages.get(p.key)) is not None}
    plans: list[Plan] = []
    for pod in run.order:
        taint = tolerations_tolerate_taint(pod.spec.tolerations, RESERVATION_TAINT)
        m = by_key.get(pod.key)
        if m is None:
            plans.append(Plan(pod, pod.effective_priority, "infeasible", taint=taint, gang=info,
                              message=f"{left.get(pod.key, '')} It stays Pending: {message}.".lstrip()))
            continue
        node = m.attempt.node
        assert node is not None
        mine = tuple(share.get(pod.key, ()))
        landing = m.attempt.detail if isinstance(m.attempt.detail, Landing) else None
        ties = f"; {len(m.attempt.candidates) - 1} other node(s) tie with it at the top score" \
            if len(m.attempt.candidates) > 1 else ""
        notes = landing.notes if landing is not None else ()
        if mine:
            text = (f"evict {_count(len(mine), 'pod')} (workload-aware preemption: the scheduler's own victims for "
                    f"{unit.key}), then it binds to node {node}{ties}")
            if blocked:
                text += "; blocked: evicting would violate a PodDisruptionBudget (use --allow-pdb-violation to go on)"
            plans.append(Plan(pod, pod.effective_priority, "evict", node, tier, taint, mine, text, None, (), blocked,
                              tuple(snap.by_name[node].pods), notes, m.attempt.candidates, m.attempt.likely,
                              gang=info))
        else:
            text = f"the scheduler's pod-group cycle places it on node {node} and binds it with its group{ties}"
            plans.append(Plan(pod, pod.effective_priority, "fits", node, None, taint, (), text,
                              node_pods_before=tuple(snap.by_name[node].pods), notes=notes,
                              candidates=m.attempt.candidates, likely=m.attempt.likely, gang=info))
    changed = [m.attempt.node for m in placed if m.attempt.node] + [v.node for v in out] + \
              [v.lands_on for v in out if v.lands_on is not None]
    apply_cluster(work, sim, [m.pod for m in placed], victims, changed)
    outcome: Outcome = "evict" if victims else "fits"
    return SimulatedGroup(unit, tuple(plans), len(placed), outcome, message, run, info)


def _landed(planner: Planner, unit: GroupUnit, victims: Sequence[Pod], sim: Snapshot
            ) -> tuple[list[Victim], Snapshot]:
    """The victims, each with what its eviction does to its budgets and where its replacement lands
    on `sim` (the cluster once the group is placed), most important first; and the cluster then."""
    options = planner.options
    nominated = planner.nominated_except({p.key for p in unit.members})
    out: list[Victim] = []
    for v, check in zip(victims, planner.work.ledger.check_all(victims), strict=True):
        victim = Victim(v, v.spec.node_name, check, v.grace_seconds, min(v.grace_seconds, options.max_grace_seconds))
        if v.is_bare:
            out.append(replace(victim, pending_reason="bare pod: no controller recreates it"))
            continue
        landed = planner.land_replacement(v, sim, nominated)
        if isinstance(landed, str):
            out.append(replace(victim, pending_reason=landed))
            continue
        replacement, landing = landed
        if landing.node is None:
            out.append(replace(victim, pending_reason=landing.reason))
            continue
        info = sim.by_name[landing.node].clone()
        info.add_pod(bound_to(replacement, info.node))
        sim = sim.with_node_info(info)
        out.append(replace(victim, lands_on=landing.node, candidates=landing.candidates, likely=landing.likely))
    return out, sim


def _placed_text(unit: GroupUnit, run: GroupRun, victims: int, blocked: bool,
                 breaks: Sequence[GangBreak] = ()) -> str:
    gang = unit.gang
    total = len(unit.members)
    running = len(gang.running) if gang is not None else 0
    placed = len(run.placed)
    what = f"all {total} members" if placed + running == total else f"{placed + running} of {total} members"
    quorum = f" (minCount {gang.min_count}{f', {running} running already' if running else ''})" if gang else ""
    together = " together" if gang is not None else ""
    cycles = f" in {len(run.rounds)} cycles" if len([r for r in run.rounds if r.placed]) > 1 else ""
    if victims:
        prio = pod_group_priority(unit.pod_group) if unit.pod_group is not None else 0
        text = (f"workload-aware preemption evicts {_count(victims, 'pod')} for {unit.key} (the scheduler's own "
                f"choice, at the PodGroup's priority {prio}); its pod-group cycles then bind {what}{together}"
                f"{quorum}{cycles}")
        if blocked:
            text += ("; kresched carries it out only with --allow-pdb-violation, but the scheduler does not wait: it "
                     "deletes them itself, PodDisruptionBudgets or not")
        # A running gang whose members are taken one by one (disruptionMode Pod) and left below minCount.
        for b in breaks:
            if b.left > 0:
                text += (f"; that breaks {b.text} (its disruptionMode {b.disruption_mode} lets workload-aware "
                         "preemption take its members one by one)")
    else:
        text = f"the scheduler's pod-group cycle binds {what} of {unit.key}{together}{quorum}{cycles}"
    left = len(run.order) - placed
    if left:
        text += f"; {left} stay{'s' if left == 1 else ''} Pending"
    return text


def _given_up(unit: GroupUnit, pods: Sequence[Pod], why: str, run: GroupRun,
              condition: PodGroupCondition | None) -> SimulatedGroup:
    """Nothing binds and nothing is evicted: every member `infeasible`, with what the scheduler
    writes for it (none for a silent wait) and then kresched's sentence."""
    info = _outcome(unit, 0, False, why, condition)
    messages = run.cycle.messages if run.cycle is not None else {}
    plans = []
    for pod in pods:
        said = messages.get(pod.key) or (run.error if run.error is not None else None)
        text = f"{said} {why[:1].upper()}{why[1:]}." if said and said != why else f"{why[:1].upper()}{why[1:]}."
        plans.append(Plan(pod, pod.effective_priority, "infeasible",
                          taint=tolerations_tolerate_taint(pod.spec.tolerations, RESERVATION_TAINT), message=text,
                          gang=info))
    return SimulatedGroup(unit, tuple(plans), 0, "infeasible", why, run, info)


def _unscheduled_text(unit: GroupUnit, run: GroupRun) -> str:
    """Why the group does not schedule, and what workload-aware preemption made of it."""
    cycle = run.cycle
    assert cycle is not None
    placed = len(cycle.algorithm.placed)
    gang = unit.gang
    total = len(unit.members)
    running = len(gang.running) if gang is not None else 0
    quorum = f" (minCount {gang.min_count}{f', {running} running' if running else ''})" if gang else ""
    text = f"{unit.key} does not schedule: {placed} of {total - running} pending members fit{quorum}"
    wap = cycle.preemption
    if wap is None:
        if run.profile is not None and not run.profile.preempts:
            text += "; its profile runs no DefaultPreemption"
        elif cycle.code != Code.ERROR:
            text += "; WorkloadAwarePreemption is off and no member's own preemption helps"
    elif wap.status.reasons == (NO_VICTIMS_FOR_PREEMPTOR,):
        text += f"; workload-aware preemption finds no pod below the PodGroup's priority {wap.priority}"
    elif wap.status.reasons == (NOT_ELIGIBLE_NEVER,):
        text += "; a member's preemptionPolicy is Never: the group preempts nothing"
    elif wap.potential:
        text += (f"; even evicting everything below the PodGroup's priority {wap.priority} "
                 f"({_count(wap.potential, 'victim')}: a pod, or a disruptionMode PodGroup group whole) would not "
                 "make room")
    else:
        text += f"; workload-aware preemption: {', '.join(wap.status.reasons)}"
    return text + "; nothing is evicted"


def _outcome(unit: GroupUnit, placed: int, kept: bool, message: str,
             condition: PodGroupCondition | None) -> GangOutcome | None:
    gang = unit.gang
    if gang is None:
        return None
    return GangOutcome(gang.key, gang.flavor, gang.min_count, len(gang.members), len(gang.running), placed, kept,
                       message, gang.declared_by, True, condition)


def _tier(victims: Sequence[Victim], max_grace: int, allow: bool) -> tuple[int | None, bool]:
    """Seed 000's tier the scheduler's victims fall in, and whether kresched would be blocked."""
    if not victims:
        return None, False
    if any(v.pdb.violation for v in victims):
        return 3, not allow
    return (2 if any(v.grace_seconds > max_grace for v in victims) else 1), False


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


# -- explain -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupVerdict:
    """What the scheduler's pod-group cycles do with one member (`explain`)."""

    #: `PodGroup ns/name`.
    key: str
    #: What the scheduler writes on the pod's PodScheduled condition after its group's cycle on the
    #: cluster as it is (None: it binds, or it writes nothing at all — `wait`).
    message: str | None = None
    #: Where the pod binds (None: not in this turn), its tied nodes, and whether the scheduler
    #: would score only a sample; `after_preemption`: only once workload-aware preemption's
    #: victims are gone (or in a later cycle of the turn).
    node: str | None = None
    candidates: tuple[str, ...] = ()
    likely: bool = False
    after_preemption: bool = False
    #: The PodGroup's condition after the cycle, and once the turn has played out.
    condition: PodGroupCondition | None = None
    final_condition: PodGroupCondition | None = None
    #: Workload-aware preemption's victims, most important first.
    victims: tuple[Pod, ...] = ()
    #: The queued members in the cycle's order, each with the node it binds to (None: stays Pending).
    members: tuple[tuple[str, str | None], ...] = ()
    #: A silent wait, in kresched's words (the scheduler writes nothing).
    wait: str | None = None
    #: What the turn comes to, in kresched's words.
    summary: str = ""
    #: Why the cycle is not simulated (then the rest is empty).
    fallback: str | None = None
    #: The landing of the pod at its turn in the cycle (its scores), where it lands.
    landing: Landing | None = field(default=None, compare=False)

    @property
    def binds_now(self) -> bool:
        return self.node is not None and not self.after_preemption and self.message is None and self.wait is None


def group_verdict(state: ClusterState, pod: Pod, profiles: Profiles, snapshot: Snapshot,
                  nominated: dict[str, list[Pod]]) -> GroupVerdict | None:
    """The scheduler's turn for the pod group `pod` (Pending) names, seen from `pod`; None when it
    names none or the cluster's scheduler runs no pod-group cycles."""
    if not simulates_groups(profiles.gates) or not pod.is_pending:
        return None
    unit = unit_of_pod(state, pod)
    if unit is None:
        return None
    pending = [p for p in unit.members if p.is_pending]
    keys = {p.key for p in unit.members}
    held = {n: [p for p in ps if p.key not in keys] for n, ps in nominated.items()}

    def placer_for(p: Pod) -> tuple[Profile, Placer] | None:
        profile = profiles.for_pod(p)
        return None if profile is None else (profile, Placer.of(profile))

    run = run_group_cycle(state, snapshot, unit, pending, profiles, placer_for, held)
    if run.fallback is not None:
        return GroupVerdict(unit.key, fallback=run.fallback)
    if run.wait is not None:
        return GroupVerdict(unit.key, wait=run.wait, summary=run.wait)
    if run.error is not None:
        return GroupVerdict(unit.key, message=run.error, summary=run.error)
    cycle = run.cycle
    assert cycle is not None
    lands: dict[str, tuple[MemberResult, int]] = {m.pod.key: (m, i) for i, r in enumerate(run.rounds) for m in r.placed}
    mine = lands.get(pod.key)
    victims = [v for r in run.rounds for v in r.victims]
    summary = _placed_text(unit, run, len(victims), False, gang_breaks(state, victims)) if run.placed \
        else _unscheduled_text(unit, run)
    verdict = GroupVerdict(unit.key, cycle.messages.get(pod.key), condition=cycle.condition,
                           final_condition=run.condition, victims=tuple(victims),
                           members=tuple((p.key, lands[p.key][0].attempt.node if p.key in lands else None)
                                         for p in run.order), summary=summary)
    if mine is None:
        return verdict
    m, i = mine
    landing = m.attempt.detail if isinstance(m.attempt.detail, Landing) else None
    return replace(verdict, node=m.attempt.node, candidates=m.attempt.candidates, likely=m.attempt.likely,
                   after_preemption=i > 0 or bool(run.rounds[0].victims), landing=landing)
