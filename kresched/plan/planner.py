"""The planning engine: for a Pending pod, the node, the minimal victims and the tier — explained.

Owns `plan_pod` and `plan_pending` (design: "The plan"; seeds 000 and 001): the procedure below,
the victims on each node and the plan they make. Beside it, each in its own module: what a plan is
(`plans`), which pods a tier may evict as the budgets stand (`evictable`), the branch and bound
over the candidate nodes (`search`), the choice's key and its bounds (`choice`), and where the
victims' replacements land and what later plans see (`aftermath`). Pure: no I/O, no clock, no
randomness; the same state and options always give the same plan.

The procedure, for a pending pod P of effective priority p:
1. P fits on some node as things are → outcome `fits`, on the node the scheduler picks, with the
   nodes tied with it (`placement.Placer`: the scheduler's search order, scores and weights).
2. Otherwise only nodes where eviction can help are candidates: those whose filter status is
   Unschedulable, not UnschedulableAndUnresolvable (kube-scheduler's `NodesForStatusCode`), and
   that pass the node-static filters (taints, affinity, cordon, nodeName), which no eviction
   changes.
3. Victims come from pods with effective priority < p that are not mirror, DaemonSet,
   terminating or critical pods (`candidates.not_evictable_reason`).
4. Tiers (seed 000), the first tier with any feasible node wins:
   tier 1 — only pods whose eviction violates no PDB and whose grace period ≤ max_grace;
   tier 2 — only pods whose eviction violates no PDB; tier 3 — any candidate.
5. On each node the minimal victim set comes from `SelectVictimsOnNode`'s reprieve procedure
   (`sched.preemption.select_victims_on_node`) with all filters — on running totals where that
   gives the same (`sched.preemption.select_victims`).
6. The node is chosen by `option_key`: kube-scheduler's `pickOneNodeForPreemption`, with seed
   000's criteria where upstream has none or leaves a tie. In this order:
   1. fewest PDB violations (upstream);
   2. fewest grace periods shortened (kresched, seed 000: a shortened grace is a disruption the
      workload did not agree to; it never decides in tier 1, where no grace is shortened);
   3. lowest highest victim priority (upstream);
   4. lowest sum of victim priorities, each victim adding `MaxInt32 + 1` (upstream: with ordinary
      priorities fewer victims win before a lower raw sum);
   5. fewest victims (upstream);
   6. the latest start time among each node's highest-priority victims (upstream; a victim not yet
      started counts as starting now, after any recorded start);
   7. smallest victim requests, as a share of the node (kresched, seed 000: they are likelier to
      fit elsewhere) — upstream takes the first candidate here;
   8. victims all controller-managed (kresched, seed 000's "non-drainable" bare pods);
   9. node name (kresched: determinism; upstream's first candidate depends on a random offset).

Pruning, and what it guarantees: a node is skipped without simulation only when (a) even evicting
every tier-eligible pod cannot free the resources P requests (a necessary condition of fitting),
or (b) a lower bound of its `option_key` (count of victims ≥ what the largest eligible pods need to
free; priorities ≥ the smallest eligible ones) is already worse than the second-best option found.
Both are exact: the plan, and the runner-up its `decided_by` names, are the ones a full search over
every node would give.

Where kresched deliberately differs from kube-scheduler's `pickOneNodeForPreemption`: the tiers
(seed 000: a tier-1 node wins over a better-ranked tier-2 one); criterion 2 (before upstream's
priority criteria, so it can override them, but only between options that shorten graces, i.e. in
tiers 2 and 3); criteria 7–9, which only break ties upstream leaves to chance; QoS before start
time in the victim order (seed 001); every node searched (upstream's DefaultPreemption dry-runs a
random sample of at least 100 nodes, or 10 %, on large clusters); and never evicting DaemonSet,
mirror or critical pods.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace
from typing import NamedTuple

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.aftermath import Mark, Working, apply_plan, second_order
from kresched.plan.candidates import node_refusal, nominated_pods
from kresched.plan.choice import NOTHING_EVICTABLE, Reason, TierIndex, lost_because, option_key, pdb_violations
from kresched.plan.devices import (
    DEVICE_NOTE,
    asks_for_devices,
    device_grants,
    device_holders,
    device_state_notes,
    freeing_plugins,
    grant_notes,
    is_device_rejection,
    placed_grants,
    unknown_plan,
)
from kresched.plan.evictable import EvictablePods
from kresched.plan.gang_breaks import lowest_running_gang_priority, scheduler_choice
from kresched.plan.pdb import PdbLedger
from kresched.plan.placement import Landing, Placer, replacement_of
from kresched.plan.plans import RESERVATION_TAINT, NodeOption, Plan, PlanOptions, RunnerUp, Victim, fits_message
from kresched.plan.search import OPTIONS_SHOWN, OUT_SHOWN, NodeSearch, OptionFinder, tier_order
from kresched.plan.vetting import admitted_options, vet_options
from kresched.sched.dra.claims import missing_kinds
from kresched.sched.dra.inuse import cluster_snapshot
from kresched.sched.dynamic_resources import NAME as DRA
from kresched.sched.dynamic_resources import claims_read, post_filter_note
from kresched.sched.framework import SUCCESS, Code, CycleState, FilterPlugin, Snapshot, Status
from kresched.sched.interpod_affinity_terms import AffinityTerm
from kresched.sched.node_info import NodeInfo
from kresched.sched.preemption import (
    full_scheduler_message,
    importance_key,
    post_filter_error,
    preemption_message,
    removal_hazards,
    select_victims,
    select_victims_on_node,
)
from kresched.sched.profile import Profile
from kresched.sched.resume import cluster_shape
from kresched.sched.runner import (
    SCHEDULER_ERROR_NOTE,
    Diagnosis,
    FilterMemo,
    fit_error_message,
    node_local,
    processed_nodes,
    run_pre_filter,
    scheduler_error,
)
from kresched.sched.static import StaticFilters, fit_shape
from kresched.sched.taint_toleration import tolerations_tolerate_taint

__all__ = ["Planner", "plan_pod"]


def plan_pod(state: ClusterState, pod: Pod, options: PlanOptions = PlanOptions()) -> Plan:
    """The plan for one pod (`Planner.plan`)."""
    return Planner(state, options).plan(pod)


#: One pod's victim selections: `_selection_key` → the victims, or why there are none.
Selected = dict[tuple[str, tuple[int, ...]], tuple[Victim, ...] | Status]


def _selection_key(node: str, pods: Sequence[Pod]) -> tuple[str, tuple[int, ...]]:
    """A `Selected` key: the node and the pods taken off it, in order (a tier's: most important first)."""
    return node, tuple(map(id, pods))


class Cluster(NamedTuple):
    """The working cluster as it stands (its snapshot, the ledger's version): one object while
    nothing is committed (`Planner._now`), what `Planner._hopeless` entries hold for."""
    snapshot: Snapshot
    budgets: int


class _Engine:
    """What the planner keeps per scheduler profile: its plugins, the node-static ones' memo, its
    placer, and the filter memos and tier indexes of the pods it schedules (their verdicts are the
    profile's)."""

    __slots__ = ("dynamic", "filter_memo", "indexes", "placer", "plugins", "profile", "static")

    def __init__(self, profile: Profile, plugins: Sequence[FilterPlugin], memoize: bool) -> None:
        self.profile = profile
        self.plugins = list(plugins)
        self.static = StaticFilters(self.plugins)
        self.placer = Placer(self.plugins, self.static, profile.scores, memoize, profile.percentage_of_nodes_to_score,
                             profile.extenders)
        self.dynamic = [p for p in self.plugins if p.name not in self.static.names]
        #: The filter statuses of its pods, per what they read of themselves (`runner.verdict_keys`).
        self.filter_memo = FilterMemo()
        #: Per (pod shape, tier): its candidate nodes, kept across pods (`TierIndex`).
        self.indexes: dict[tuple[bytes, int], TierIndex] = {}


class Planner:
    """Plans pods one after another on a working copy of the cluster (see `plan_pending`)."""

    def __init__(self, state: ClusterState, options: PlanOptions = PlanOptions(),
                 plugins: Sequence[FilterPlugin] | None = None, memoize: bool = True, prune: bool = True,
                 rotate: bool = False, rank: bool = True) -> None:
        """`memoize=False` turns off the per-shape reuse, `prune=False` the branch and bound (every
        candidate node's option is found): the choices are the same; tests prove it. `plugins`
        (tests) replaces every profile's filter plugins. `rotate`: each pod's search for a node
        starts where the last one stopped, as the scheduler's `nextStartNodeIndex` does from one
        pod to the next (the first starts at the first node); without it every search starts at
        the first node. `rank=False`: each node's evictable pods are ranked when first needed, not
        as the cluster is read (the choices are the same)."""
        self.prune = prune
        self.rotate = rotate
        #: The scheduler's `nextStartNodeIndex` (with `rotate`).
        self.start = 0
        self.state = state
        self.options = options
        self.profiles = options.profiles
        self._plugins_override = list(plugins) if plugins is not None else None
        self._engines: dict[str, _Engine] = {}
        self.memoize = memoize
        first = self.profiles.by_name.get("default-scheduler") or next(iter(self.profiles.by_name.values()))
        self._use(self._engine(first))
        ledger = PdbLedger(state)
        #: Each node's evictable pods, and which of them a tier may evict as the budgets stand.
        evictable = self.evictable = EvictablePods(ledger, options.max_grace_seconds)
        # The cluster's nodes are ranked as they are built (`EvictablePods.rank`), while their pods
        # are in the CPU's caches: a third cheaper than a pass over every pod later, and planning is
        # for pods that need evictions. (Not with `rank=False`: a what-if's replicas mostly fit, and a
        # node is ranked when a pod first needs evictions there.)
        self.work = Working(cluster_snapshot(state, evictable.rank if rank else None), ledger, forget=evictable.forget)
        #: Pending pods the scheduler nominated to a node, by node (read once: the state is fixed).
        self._nominated = nominated_pods(state)
        self.search = NodeSearch(self.work, self.evictable, self._nominated, options.max_grace_seconds, prune)
        #: `_kept`'s: (profile, shape, tier, node) → (NodeInfo, budgets, eligible pods' ids, option or reason).
        self._options_kept: dict[tuple[str, bytes, int, str], tuple[NodeInfo, tuple[int, ...], tuple[int, ...],
                                                                   NodeOption | str]] = {}
        #: Per profile and `cluster_shape` of a pod no eviction helps: the cluster it was planned on, and
        #: what its plan said (message, runners-up).
        self._hopeless: dict[tuple[str, bytes], tuple[Cluster, str, tuple[RunnerUp, ...]]] = {}
        self._cluster: Cluster | None = None
        #: The lowest priority of a running gang member (`plan.gang_breaks`), found when first needed.
        self._gang_floor: tuple[int | None] | None = None

    # -- all or nothing ---------------------------------------------------------------------
    def checkpoint(self) -> tuple[Mark, int]:
        """What `rollback` takes the planner back to: the plans committed after it are given up."""
        return self.work.mark(), self.start

    def rollback(self, checkpoint: tuple[Mark, int]) -> None:
        """Give up every plan committed since `checkpoint` (a gang that would run short)."""
        mark, self.start = checkpoint
        self.work.restore(mark)

    def reachable_nodes(self, pod: Pod) -> int:
        """On how many nodes `pod` could run as the filters see it now, with evictions where they
        could help (the nodes its filters find feasible or Unschedulable, not Unresolvable): how
        constrained it is (`plan.gang` places the most constrained members first)."""
        profile = self.profiles.for_pod(pod)
        if profile is None:
            return 0
        self._use(self._engine(profile))
        planned = profile.planning_pod(pod)
        diag, _ = self.placer.filter(planned, self.work.snapshot, {}, self._memo_for(planned), start=0)
        resolvable = sum(1 for st in diag.node_to_status.values() if st.code == Code.UNSCHEDULABLE)
        return len(diag.feasible) + resolvable

    # -- the scheduler's pod-group cycle (`plan.pod_group`) ------------------------------------
    def placer_for(self, pod: Pod) -> tuple[Profile, Placer] | None:
        """The profile that schedules `pod` and its placer; None for another scheduler's pod."""
        profile = self.profiles.for_pod(pod)
        return None if profile is None else (profile, self._engine(profile).placer)

    def nominated_except(self, keys: Collection[str]) -> dict[str, list[Pod]]:
        """The pods nominated to each node that hold room there, but those placed by this run and `keys`."""
        placed = self.work.placed
        return {n: [p for p in ps if p.key not in placed and p.key not in keys] for n, ps in self._nominated.items()}

    def land_replacement(self, victim: Pod, sim: Snapshot,
                         nominated: dict[str, list[Pod]]) -> tuple[Pod, Landing] | str:
        """Where `victim`'s replacement lands on `sim` (`aftermath.Lander`)."""
        return self._land_replacement(victim, sim, nominated)

    # -- profiles ---------------------------------------------------------------------------
    def _engine(self, profile: Profile) -> _Engine:
        engine = self._engines.get(profile.name)
        if engine is None or engine.profile is not profile:
            plugins = self._plugins_override if self._plugins_override is not None else profile.filters
            engine = self._engines[profile.name] = _Engine(profile, plugins, self.memoize)
        return engine

    def _use(self, engine: _Engine) -> None:
        """Plan with `engine`'s profile from now on (the attributes the search reads)."""
        self.engine = engine
        self.plugins = engine.plugins
        self.static = engine.static
        self.placer = engine.placer
        self.dynamic = engine.dynamic
        self._filter_memo = engine.filter_memo
        self._indexes = engine.indexes

    # -- one pod ----------------------------------------------------------------------------
    def plan(self, pod: Pod, commit: bool = False, evict: bool = True) -> Plan:
        """The plan for `pod`, simulated with the profile its scheduler name selects; for a pod of a
        scheduler no profile names (and no fallback), an `infeasible` plan that says so. Without
        `evict`, a pod that does not fit is `infeasible` at once, with the scheduler's filter message
        (nothing is searched for victims)."""
        profile = self.profiles.for_pod(pod)
        if profile is None:
            return Plan(pod, pod.effective_priority, "infeasible",
                        taint=tolerations_tolerate_taint(pod.spec.tolerations, RESERVATION_TAINT),
                        message=self.profiles.other_scheduler_note(pod), notes=self._notes(pod), profile=None)
        self._use(self._engine(profile))
        planned = profile.planning_pod(pod)
        dra = self.work.snapshot.dra
        missing = missing_kinds(pod, dra) if pod.spec.resource_claims or pod.requests.scalar else ()
        before = self.work.snapshot
        plan = self._plan(planned, commit and not missing, evict)
        if plan.devices is None and asks_for_devices(pod, dra):
            plan = replace(plan, devices=())
        if missing:
            plan = unknown_plan(plan, missing)
        elif plan.outcome != "fits" and evict and self.profiles.gates.gang_scheduling:
            plan = self._scheduler_breaks(planned, plan, before)
        warnings = self.profiles.warnings_for(profile, pod)
        if planned is not pod or warnings or profile.name != "default-scheduler":
            plan = replace(plan, pod=pod, profile=profile.name, warnings=warnings)
        return plan

    def _plan(self, pod: Pod, commit: bool, evict: bool = True) -> Plan:
        snap = self.work.snapshot
        priority = pod.effective_priority
        taint = tolerations_tolerate_taint(pod.spec.tolerations, RESERVATION_TAINT)
        nominated = {n: [p for p in ps if p.key not in self.work.placed and p.key != pod.key]
                     for n, ps in self._nominated.items()}
        diag, cycle = self.placer.filter(pod, snap, nominated, self._memo_for(pod), start=self.start)
        if self.rotate and snap.node_infos:
            self.start = (self.start + processed_nodes(diag)) % len(snap.node_infos)
        notes = self._notes(pod) + diag.notes
        error = scheduler_error(diag)
        if error is not None:
            return Plan(pod, priority, "infeasible", taint=taint, notes=notes,
                        message=f"{error}; {SCHEDULER_ERROR_NOTE}")
        if diag.feasible:
            landing = self.placer.landing(pod, snap, diag, cycle)
            node = landing.node
            assert node is not None
            asks = asks_for_devices(pod, snap.dra)
            # Placed for good, its claims hold what the simulated cluster allocated them as it was
            # placed (the same first fit): read there rather than allocated once more.
            devices = device_grants(pod, snap, snap.by_name[node], (), cycle) if asks and not commit else None
            plan = Plan(pod, priority, "fits", node, None, taint, message=fits_message(node, diag, landing.candidates),
                        node_pods_before=tuple(snap.by_name[node].pods),
                        notes=self._notes(pod) + landing.notes + grant_notes(devices or ()),
                        candidates=landing.candidates, likely=landing.likely, devices=devices)
            if commit:
                apply_plan(self.work, plan)
                if asks:
                    devices = placed_grants(pod, self.work.snapshot)
                    plan = replace(plan, devices=devices, notes=plan.notes + grant_notes(devices))
            return plan
        if diag.error:
            return Plan(pod, priority, "infeasible", taint=taint, notes=notes,
                        message=f"{diag.error}; a scheduler extender failed: the scheduler fails the pod with this "
                                "error and retries it, without preempting, and kresched plans no eviction for it")
        if not evict:
            return Plan(pod, priority, "infeasible", taint=taint, notes=notes, message=fit_error_message(diag))
        if pod.spec.preemption_policy == "Never":
            return Plan(pod, priority, "infeasible", taint=taint, notes=notes,
                        message="preemptionPolicy is Never: the pod may not displace other pods, so kresched "
                                "does not evict for it")
        # In name order (the snapshot's). A node the filters found only Unschedulable passed the
        # node-static filters (they run first and reject as UnschedulableAndUnresolvable); after a
        # PreFilter's Unschedulable no node was filtered, so each is asked.
        unfiltered = diag.pre_filter_status is not None and diag.pre_filter_status.code == Code.UNSCHEDULABLE
        # Preempt extenders vet every option of a tier (`_vetted`): the search must find them all. A
        # filter extender's statuses are the pod's, not its shape's: no index kept across pods.
        exts = self.placer.extenders
        vetting = exts is not None and bool(exts.preempters_for(pod))
        shaped = exts is None or not (vetting or exts.filters_for(pod))
        if self.memoize and not unfiltered and shaped and node_local(self.plugins, cycle, self.static.names):
            return self._plan_indexed(pod, priority, taint, notes, commit, diag, cycle, nominated)
        # The replicas of a workload no eviction helps are planned on the same cluster one after
        # another (nothing is committed between them): what the first one's search found holds for
        # the next ones while the cluster is the same — where all their filters read of them is
        # equal (`cluster_shape`) and neither is nominated (each pod's nominated pods are the others).
        hopeless = None
        if self.memoize and shaped and not vetting and not pod.status.nominated_node_name:
            shape = cluster_shape(pod, cycle, self.plugins, self.static.names)
            hopeless = None if shape is None else (self.engine.profile.name, shape)  # (a profile's filters' args)
            hit = self._hopeless.get(hopeless) if hopeless is not None else None
            if hit is not None and hit[0] is self._now():
                return Plan(pod, priority, "infeasible", None, None, taint, message=hit[1], runners_up=hit[2],
                            notes=notes)
        if unfiltered:
            potential = list(snap.node_infos)
        else:
            statuses, unschedulable = diag.node_to_status, Code.UNSCHEDULABLE
            potential = [info for info in snap.node_infos
                         if (st := statuses.get(info.name)) is not None and st.code is unschedulable]
        #: Why a node is out whatever the tier (reasons no eviction changes, nothing evictable).
        infeasible: dict[str, Reason] = {}
        candidates: list[tuple[NodeInfo, list[Pod]]] = []
        evictable = self.evictable.by_node
        for info in potential:
            st = self.static.status(cycle, pod, info) if unfiltered else SUCCESS
            if st is not SUCCESS and not st.is_success:
                infeasible[info.name] = f"{', '.join(st.reasons)} (no eviction changes that)"
                continue
            hit = evictable.get(id(info))  # `candidates`, its kept answer read here (every node, every pod)
            cands = hit[4].get(priority) if hit is not None and hit[0] is info else None
            if cands is None:
                cands = self.evictable.candidates(info, priority)
            if not cands:
                infeasible[info.name] = node_refusal(info.node) or NOTHING_EVICTABLE
                continue
            candidates.append((info, cands))
        tier_reasons: dict[str, Reason] = {}
        # What each node's victim selection found for this pod, per its eligible pods: tiers that leave
        # a node the same eligible pods share it, and kresched's device freeing reads it (`_plan_devices`).
        selected: Selected = {}
        option = self._selecting(selected, None if unfiltered else diag.node_to_status)
        if self.memoize and shaped and not vetting and not unfiltered:
            option = self._kept(pod, cycle, self.plugins, option)
        # Where taking more pods off fails the pod only through pods its required affinity matches
        # (`removal_hazards`), tier 3 is searched before tier 2: when it finds nothing and took off no
        # such pod beyond tier 2's (`NodeSearch.settled`), tier 2's search is spared (the tier that
        # wins, and each tier's answer, are the same).
        hazards = removal_hazards(pod, self.plugins) if shaped and not vetting else None
        held: tuple[list[NodeOption], dict[str, Reason]] | None = None  # tier 3's, while tier 2 is searched
        # Tier 1 first; where it looks at `_GIVE_UP` nodes with no option, whether any tier has one:
        # where none has, tier 3's reasons are the answer's (as after every tier's search), not tier
        # 1's search of every node (their PDBs) nor tier 2's.
        first: tuple[list[NodeOption], dict[str, Reason]] | None = None
        alone: dict[str, Reason] | None = None  # tier 3's reasons, where no tier has an option
        if hazards is not None:
            found = self.search.tier_options(pod, cycle, candidates, 1, nominated, tier_reasons, option,
                                             give_up=_GIVE_UP)
            why: dict[str, Reason] = {}
            if found is not None:
                first = (found, tier_reasons)
            elif self.search.no_tier_has_one(pod, cycle, candidates, hazards, nominated, option, why):
                alone = why
        for tier in (3,) if alone is not None else tier_order(hazards):
            # Each tier says afresh why its candidate nodes are out: a runner-up's reason is the
            # winning tier's (or, when none wins, the most permissive tier's), never an earlier one's.
            tier_reasons = {}
            if tier == 1 and first is not None:
                options, tier_reasons = first
            elif alone is not None:
                options, tier_reasons = [], alone
            else:
                options = self.search.tier_options(pod, cycle, candidates, tier, nominated, tier_reasons, option,
                                                   prune=shaped)
                assert options is not None
            if options and vetting:
                options, error, skipped = self._vetted(pod, cycle, tier, options, nominated, tier_reasons)
                notes = tuple(dict.fromkeys((*notes, *skipped)))
                if error:
                    return Plan(pod, priority, "infeasible", taint=taint, notes=notes,
                                message=f"preemption: {error}; a scheduler extender failed to vet the victims: the "
                                        "scheduler does not preempt, and kresched evicts nothing the extenders have "
                                        "not agreed to")
            if options and not shaped:
                assert exts is not None
                options, error, skipped = admitted_options(exts, pod, snap, options, tier_reasons)
                notes = tuple(dict.fromkeys((*notes, *skipped)))
                if error:
                    return Plan(pod, priority, "infeasible", taint=taint, notes=notes,
                                message=f"{error}; a scheduler extender failed: the scheduler fails the pod with this "
                                        "error and retries it, and kresched plans no eviction for it")
            if hazards is not None and tier == 3:
                if not options and (alone is not None or self.search.settled(candidates, hazards)):
                    break  # nor in tiers 1 and 2; the reasons are tier 3's, as after a search of all three
                held = (options, tier_reasons)
                continue
            if options:
                out = heapq.nsmallest(OUT_SHOWN, {**infeasible, **tier_reasons}.items())
                return self._decide(pod, priority, taint, tier, options, out, notes, commit, nominated)
        if held is not None:  # tier 2 has no option either: tier 3's, and its reasons
            options, tier_reasons = held
            if options:
                out = heapq.nsmallest(OUT_SHOWN, {**infeasible, **tier_reasons}.items())
                return self._decide(pod, priority, taint, 3, options, out, notes, commit, nominated)
        if asks_for_devices(pod, snap.dra):
            plan = self._plan_devices(pod, priority, taint, notes, commit, diag, nominated, selected, hazards)
            if plan is not None:
                return plan
        reasons = {**infeasible, **tier_reasons}
        plan = self._infeasible(pod, priority, taint, heapq.nsmallest(10, reasons.items()), len(reasons), notes, diag,
                                cycle, nominated, selected)
        if hopeless is not None:
            if len(self._hopeless) > 1_000:  # a bound on memory, never on what is answered
                self._hopeless.clear()
            self._hopeless[hopeless] = (self._now(), plan.message, plan.runners_up)
        return plan

    def _plan_devices(self, pod: Pod, priority: int, taint: bool, notes: tuple[str, ...], commit: bool,
                      diag: Diagnosis, nominated: dict[str, list[Pod]],
                      selected: Selected, hazards: tuple[AffinityTerm, ...] | None) -> Plan | None:
        """Where the scheduler's own preemption cannot help a pod with ResourceClaims: the tiers
        again, on the nodes it failed as Unschedulable or DynamicResources rejected, where some
        pod that may be evicted holds devices, with victims' devices freed (`plan.devices`).
        `selected`: what the tiers' victim selection found on a node for the same eligible pods —
        where a filter before DynamicResources failed it with every one of them gone, freeing their
        devices changes nothing before that filter, which fails it alike. `hazards`: as `_plan`'s
        (freeing more devices never fails a pod), the tiers in the order it searches them."""
        snap = self.work.snapshot
        freeing = freeing_plugins(self.plugins)
        cycle, st, _ = run_pre_filter(freeing, pod, snap)
        if not st.is_success:
            return None
        dynamic = [pl for pl in freeing if pl.name not in self.static.names]
        candidates: list[tuple[NodeInfo, list[Pod]]] = []
        holders = device_holders(snap)  # evicting another pod frees no device
        for info in snap.node_infos:
            st = diag.node_to_status.get(info.name)
            if st is None or not (st.code == Code.UNSCHEDULABLE or is_device_rejection(st)):
                continue
            cands = self.evictable.candidates(info, priority)
            if cands and not holders.isdisjoint(p.key for p in cands):
                candidates.append((info, cands))

        ahead = set(itertools.takewhile(lambda name: name != DRA, (pl.name for pl in dynamic)))

        def freed(pod: Pod, cycle: CycleState, info: NodeInfo, eligible: list[Pod], tier: int,
                  held: Sequence[Pod]) -> NodeOption | str:
            before = None if held else selected.get(_selection_key(info.name, eligible))
            if isinstance(before, Status) and before.plugin in ahead:
                return _status_text(before)
            sel = select_victims_on_node(dynamic, cycle.clone(), pod, info.clone(), eligible,
                                         self.work.ledger.split_violating, held)
            return self._tiered(info, tier, self._victims(info, sel.victims) if sel.status.is_success else sel.status)

        find = self._kept(pod, cycle, freeing, freed, b"freeing devices") if self.memoize else freed
        held: list[NodeOption] = []  # tier 3's options, while tier 2 is searched (as `_plan`)

        def options_of(tier: int, nodes: list[tuple[NodeInfo, list[Pod]]]) -> Iterator[NodeOption]:
            """The options of `tier` on `nodes`, node by node as asked for."""
            for info, cands in nodes:
                opt = find(pod, cycle, info, self.evictable.eligible(info, cands, tier), tier,
                           nominated.get(info.name, ()))
                if isinstance(opt, NodeOption):
                    yield opt

        if hazards is not None and next(options_of(3, candidates), None) is None and not any(
                next(options_of(t, self.search.unsettled(candidates, hazards, t)), None) is not None for t in (1, 2)):
            return None  # no tier frees enough (see `NodeSearch.no_tier_has_one`)
        for tier in tier_order(hazards):
            options = list(options_of(tier, candidates))
            if hazards is not None and tier == 3:
                if not options and self.search.settled(candidates, hazards):
                    return None
                held = options
            elif options:
                return self._decide(pod, priority, taint, tier, options, [], (*notes, DEVICE_NOTE), commit,
                                    nominated, frees_devices=True)
        if held:
            return self._decide(pod, priority, taint, 3, held, [], (*notes, DEVICE_NOTE), commit, nominated,
                                frees_devices=True)
        return None

    def _scheduler_breaks(self, pod: Pod, plan: Plan, snapshot: Snapshot) -> Plan:
        """`plan`, with a note when, left to itself, the scheduler's own per-pod preemption would break
        a running gang (`plan.gang_breaks`; asked only with `GangScheduling` on — the gates-off path
        stays as it was — and where a gang member of lower priority runs)."""
        if self._gang_floor is None:
            self._gang_floor = (lowest_running_gang_priority(self.state),)
        floor = self._gang_floor[0]
        gates = self.profiles.gates
        if floor is None or pod.priority <= floor or not self.engine.profile.preempts \
                or (pod.spec.scheduling_group is not None and gates.workload_aware_preemption):
            return plan
        nominated = self.nominated_except({pod.key})
        diag, cycle = self.placer.filter(pod, snapshot, nominated)
        if diag.feasible or diag.error:
            return plan
        found = scheduler_choice(self.state, self.plugins, pod, snapshot, diag, cycle, nominated)
        if found is None or not found.breaks_gangs:
            return plan
        return replace(plan, notes=(*plan.notes, found.note))

    def _notes(self, pod: Pod) -> tuple[str, ...]:
        out = []
        if pod.spec.scheduling_gates:
            out.append("the pod is held by scheduling gates: the scheduler will not place it until they are removed")
        if pod.spec.node_name:
            out.append(f"the pod is already bound to node {pod.spec.node_name}")
        return (*out, *device_state_notes(pod, self.work.snapshot.dra))

    # -- the same search, kept across pods of one shape ---------------------------------------------
    def _plan_indexed(self, pod: Pod, priority: int, taint: bool, notes: tuple[str, ...], commit: bool,
                      diag: Diagnosis, cycle: CycleState, nominated: dict[str, list[Pod]]) -> Plan:
        """The tiers for a pod whose every filter reads the node alone (`node_local`: NodeResourcesFit
        the only pod-dependent one, or DynamicResources too where every device is on a node's own
        slice), over a `TierIndex` per (shape, tier): the search `NodeSearch.tier_options` makes, with
        what it knows of each node kept for the next pod of the shape, so a pod costs what changed
        since the last one (nodes whose NodeInfo `apply_plan` replaced, nodes under a PDB whose budget
        it spent, nodes something is nominated to) and the nodes it pops, not every node. Then, as
        `_plan`, freeing devices (`_plan_devices`) for a pod with claims no tier helps."""
        shape = fit_shape(pod, claims_read(cycle))
        statuses = diag.node_to_status
        hazards = removal_hazards(pod, self.plugins)
        monotone = hazards == ()  # (no required pod affinity: `node_local`)
        selected: Selected = {}  # as `_plan`'s, for `_plan_devices` and `_infeasible`
        option = self._selecting(selected)
        held = None  # tier 3's options, while tier 2 is searched (as `_plan`)
        for tier in tier_order(() if monotone else None):
            index = self.search.synced_index(self._indexes, shape, tier, pod, priority, statuses, nominated)
            options, out = self.search.indexed(index, pod, cycle, tier, nominated, option)
            if monotone and tier == 3:
                if not options:
                    break
                held = (options, out)
            elif options:
                return self._decide(pod, priority, taint, tier, options, out(OUT_SHOWN), notes, commit, nominated)
        if held is not None:
            options, out = held
            return self._decide(pod, priority, taint, 3, options, out(OUT_SHOWN), notes, commit, nominated)
        if asks_for_devices(pod, self.work.snapshot.dra):
            plan = self._plan_devices(pod, priority, taint, notes, commit, diag, nominated, selected, hazards)
            if plan is not None:
                return plan
        return self._infeasible(pod, priority, taint, out(10), len(index.entries), notes, diag, cycle, nominated,
                                selected)

    # -- victims on one node -------------------------------------------------------------------
    def _option(self, pod: Pod, cycle: CycleState, info: NodeInfo, eligible: list[Pod], tier: int,
                nominated: Sequence[Pod]) -> NodeOption | str:
        """The node's option in `tier`, or why it has none."""
        return self._tiered(info, tier, self._select_victims(pod, cycle, info, eligible, nominated))

    def _tiered(self, info: NodeInfo, tier: int, victims_or_status: tuple[Victim, ...] | Status) -> NodeOption | str:
        """The node's option in `tier` with these victims, or why it has none."""
        if isinstance(victims_or_status, Status):
            return _status_text(victims_or_status)
        if tier < 3 and any(v.pdb.violation for v in victims_or_status):
            return f"tier {tier}: the victims would overspend a PodDisruptionBudget"
        return NodeOption(info.name, tier, victims_or_status, option_key(victims_or_status, info))

    def _selecting(self, selected: Selected, statuses: dict[str, Status] | None = None) -> OptionFinder:
        """`_option` for one pod's tiers, the victims of a node selected once per eligible pods there
        (`selected`): the cluster is the same through them, and nominated pods too (and `statuses`)."""
        def option(pod: Pod, cycle: CycleState, info: NodeInfo, eligible: list[Pod], tier: int,
                   nominated: Sequence[Pod]) -> NodeOption | str:
            key = _selection_key(info.name, eligible)
            found = selected.get(key)
            if found is None:
                found = selected[key] = self._select_victims(pod, cycle, info, eligible, nominated,
                                                             statuses.get(info.name) if statuses else None)
            return self._tiered(info, tier, found)

        return option

    def _kept(self, pod: Pod, cycle: CycleState, plugins: Sequence[FilterPlugin], find: OptionFinder,
              tag: bytes = b"") -> OptionFinder:
        """`find` (a node's option for `pod` after `plugins`' PreFilter, `cycle`), with its answers kept
        per node for the next pods of its shape where every filter reads the node
        alone (`node_local`); else `find` itself. `tag` tells apart finders that answer differently."""
        if not node_local(plugins, cycle, self.static.names):
            return find
        profile, shape = self.engine.profile.name, tag + fit_shape(pod, claims_read(cycle))  # (a profile's args)
        kept = self._options_kept
        if len(kept) > 100_000:  # a bound on memory, never on what is answered
            kept.clear()

        def option(pod: Pod, cycle: CycleState, info: NodeInfo, eligible: list[Pod], tier: int,
                   nominated: Sequence[Pod]) -> NodeOption | str:
            """A node's option, or why it has none, kept per shape and tier while its NodeInfo, the
            budgets of its PDBs and its eligible pods are the same and nothing nominated there holds
            room — what `find` answers then (its victims and their PDB checks read nothing else). The
            next pods of a workload search the nodes again, but select victims only where something
            changed."""
            if nominated:
                return find(pod, cycle, info, eligible, tier, nominated)
            key = (profile, shape, tier, info.name)
            budgets = self.evictable.budget_state(info)
            ids = tuple(map(id, eligible))
            hit = kept.get(key)
            if hit is not None and hit[0] is info and hit[1] == budgets and hit[2] == ids:
                return hit[3]
            found = find(pod, cycle, info, eligible, tier, nominated)
            kept[key] = (info, budgets, ids, found)
            return found

        return option

    def _now(self) -> Cluster:
        """The working cluster as it stands: the same object until a plan is committed or given up."""
        work = self.work
        cluster = self._cluster
        if cluster is None or cluster.snapshot is not work.snapshot or cluster.budgets != work.ledger.version:
            cluster = self._cluster = Cluster(work.snapshot, work.ledger.version)
        return cluster

    def _vetted(self, pod: Pod, cycle: CycleState, tier: int, options: list[NodeOption],
                nominated: dict[str, list[Pod]], reasons: dict[str, Reason]
                ) -> tuple[list[NodeOption], str, tuple[str, ...]]:
        """`options` as the scheduler's preempt extenders leave them (`vetting.vet_options`): where
        they name other victims, the node's option among those of them `tier` may evict."""
        def among(node: str, agreed: set[str]) -> NodeOption | str:
            info = self.work.snapshot.by_name[node]
            cands = self.evictable.candidates(info, pod.effective_priority)
            eligible = [p for p in self.evictable.eligible(info, cands, tier) if p.uid in agreed]
            return self._option(pod, cycle, info, eligible, tier, nominated.get(node, ()))

        assert self.placer.extenders is not None
        return vet_options(self.placer.extenders, pod, self.work.snapshot, options, among, reasons)

    def _memo_for(self, pod: Pod, engine: _Engine | None = None) -> FilterMemo | None:
        return (self._filter_memo if engine is None else engine.filter_memo) if self.memoize else None

    def _select_victims(self, pod: Pod, cycle: CycleState, info: NodeInfo, eligible: list[Pod],
                        nominated: Sequence[Pod], failed: Status | None = None) -> tuple[Victim, ...] | Status:
        """The minimal victims among `eligible` on one node, most important first, each with what
        its eviction does to its PDB (budgets spent in that order); or why none can make room.

        The reprieve order is the design's (PDB-violating first, then by importance). When that
        set overspends a budget, the reprieve runs once more with every budget-spending pod first:
        a greedy reprieve keeps whatever it tries first, so the first order can evict two pods of
        a one-unit PDB where one of them and a pod without PDB would do. The set with fewer
        violations wins (the first one on a tie); both are minimal."""
        ledger = self.work.ledger
        best: tuple[Victim, ...] | None = None
        for split in (ledger.split_violating, self._split_spenders_first):
            sel = select_victims(self.dynamic, cycle, pod, info, eligible, split, nominated, failed)
            if not sel.status.is_success:
                return sel.status
            victims = self._victims(info, sel.victims)
            if best is None or pdb_violations(victims) < pdb_violations(best):
                best = victims
            if pdb_violations(best) == 0:
                break
        assert best is not None
        return best

    def _victims(self, info: NodeInfo, pods: Sequence[Pod]) -> tuple[Victim, ...]:
        """`pods`, to be evicted from `info`, most important first, each with what its eviction does
        to its PDB (budgets spent in that order)."""
        ordered = sorted(pods, key=importance_key)
        checks = self.work.ledger.check_all(ordered)
        return tuple(Victim(v, info.name, c, v.grace_seconds, min(v.grace_seconds, self.options.max_grace_seconds))
                     for v, c in zip(ordered, checks, strict=True))

    def _split_spenders_first(self, pods: Sequence[Pod]) -> tuple[list[Pod], list[Pod]]:
        """(pods whose eviction spends or overspends a PDB budget, the others), order kept."""
        first: list[Pod] = []
        rest: list[Pod] = []
        for pod, c in zip(pods, self.work.ledger.check_all(pods), strict=True):
            (first if c.spends or c.violation else rest).append(pod)
        return first, rest

    # -- the choice ---------------------------------------------------------------------------
    def _decide(self, pod: Pod, priority: int, taint: bool, tier: int, options: list[NodeOption],
                out: list[tuple[str, Reason]], notes: tuple[str, ...], commit: bool,
                nominated: dict[str, list[Pod]], frees_devices: bool = False) -> Plan:
        """The plan with the best of `options`; `out`: the first nodes by name that are out, and why.
        `frees_devices`: the victims are evicted to free devices (`_plan_devices`)."""
        options.sort(key=lambda o: o.key)
        best = options[0]
        runners = tuple(RunnerUp(o.node, tier, lost_because(o, best), len(o.victims)) for o in options[1:OPTIONS_SHOWN])
        runners += tuple(RunnerUp(n, None, str(r)) for n, r in out[:OUT_SHOWN])
        decided = f"{lost_because(options[1], best, winner_view=True)}" if len(options) > 1 else None
        info = self.work.snapshot.by_name[best.node]
        devices = device_grants(pod, self.work.snapshot, info, [v.pod for v in best.victims]) \
            if asks_for_devices(pod, self.work.snapshot.dra) else None
        notes = (*notes, *grant_notes(devices or ()))
        victims, after = second_order(self.work, self.state.storage, pod, best, taint, nominated,
                                      self._land_replacement)
        blocked = best.violations > 0 and not self.options.allow_pdb_violation
        tier_text = {1: f"tier 1: no PDB violated, every grace period ≤ {self.options.max_grace_seconds}s",
                     2: "tier 2: no PDB violated",
                     3: f"tier 3: {best.violations} PDB violation{'s' if best.violations != 1 else ''}"}[tier]
        msg = (f"evict {len(victims)} pod{'s' if len(victims) != 1 else ''} on node {best.node} ({tier_text})")
        if blocked:
            msg += "; blocked: evicting would violate a PodDisruptionBudget (use --allow-pdb-violation to go on)"
        plan = Plan(pod, priority, "evict", best.node, tier, taint, victims, msg, decided, runners, blocked,
                    tuple(info.pods), notes, devices=devices, frees_devices=frees_devices)
        if commit:
            apply_plan(self.work, plan, after)
        return plan

    def _infeasible(self, pod: Pod, priority: int, taint: bool, out: list[tuple[str, Reason]], count: int,
                    notes: tuple[str, ...], diag: Diagnosis, cycle: CycleState,
                    nominated: dict[str, list[Pod]], selected: Selected | None = None) -> Plan:
        """No tier has an option: `out`, the first nodes by name and why none helps, of `count`.
        `selected`: the tiers' victim selections, which the scheduler's preemption message reads."""
        # No node was feasible, so the search visited every node: the scheduler's own message,
        # with what its PostFilter (preemption) adds.
        post_filters = self.engine.profile.post_filters
        stopped = post_filter_error(diag, post_filters)
        known = None
        if selected:
            def known(info: NodeInfo, lower: list[Pod]) -> Status | None:
                found = selected.get(_selection_key(info.name, sorted(lower, key=importance_key)))
                return found if isinstance(found, Status) else None

        pmsg = None if stopped is not None or "DefaultPreemption" not in post_filters else \
            preemption_message(self.plugins, pod, self.work.snapshot, diag, cycle, nominated, known)[0]
        if pmsg is None and stopped is None and self.placer.extenders is not None:  # its preempt extenders vet
            from kresched.sched.extender import scheduler_preemption

            pmsg, stopped, _ = scheduler_preemption(self.placer.extenders, self.plugins, pod, self.work.snapshot, diag,
                                                    cycle, nominated, self.state.pdbs)
        parts = [full_scheduler_message(fit_error_message(diag), pmsg, stopped, post_filters, post_filter_note(cycle))]
        if count:
            parts.append(f"no eviction helps on any of {count} candidate node(s)")
        else:
            parts.append("no node is a candidate: every node fails for reasons no eviction changes")
        runners = tuple(RunnerUp(n, None, str(r)) for n, r in out[:10])
        # The scheduler's own message, then kresched's words as a sentence of their own (never `.;`).
        return Plan(pod, priority, "infeasible", None, None, taint,
                    message=f"{parts[0]} {parts[1][:1].upper()}{parts[1][1:]}.", runners_up=runners, notes=notes)

    # -- second-order effects --------------------------------------------------------------------
    def _land_replacement(self, victim: Pod, sim: Snapshot,
                          nominated: dict[str, list[Pod]]) -> tuple[Pod, Landing] | str:
        """Where `victim`'s replacement lands on `sim`, with the profile its scheduler name selects
        (`aftermath.second_order` asks); or why it is not simulated."""
        profile = self.profiles.for_pod(victim)
        if profile is None:
            return self.profiles.other_scheduler_note(victim)
        engine = self._engine(profile)
        replacement = profile.planning_pod(replacement_of(victim))
        return replacement, engine.placer.land(replacement, sim, nominated, self._memo_for(replacement, engine))


#: How many nodes tier 1's search of a pod whose filters read the cluster looks at with no option
#: found before asking whether any tier has one (`NodeSearch.no_tier_has_one`).
_GIVE_UP = 256


def _status_text(st: Status) -> str:
    return f"{', '.join(st.reasons)} even after evicting every eligible pod"
