"""The planning engine: for a Pending pod, the node, the minimal victims and the tier — explained.

Owns `plan_pod` and `plan_pending` (design: "The plan"; seeds 000 and 001). Pure: no I/O, no
clock, no randomness; the same state and options always give the same plan.

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
   (`sched.preemption.select_victims_on_node`) with all filters.
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
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.objects import Node, Pod
from kresched.plan.candidates import node_refusal
from kresched.plan.choice import (
    NOTHING_EVICTABLE,
    QUICK,
    REFINED,
    CannotBeat,
    Entry,
    PdbView,
    Reason,
    Suffixes,
    TierIndex,
    lost_because,
    lowerbound_to,
    min_victims,
    option_key,
    pdb_violations,
    quickbound_to,
    why_not_enough,
)
from kresched.plan.explain import nominated_pods
from kresched.plan.pdb import PdbLedger
from kresched.plan.placement import Placer, bound_to, held_by_volume, replacement_of
from kresched.plan.plans import RESERVATION_TAINT, NodeOption, Plan, PlanOptions, RunnerUp, Victim
from kresched.sched.framework import SUCCESS, Code, CycleState, FilterPlugin, NodeInfo, Snapshot, Status
from kresched.sched.preemption import (
    full_scheduler_message,
    importance_key,
    post_filter_error,
    preemption_message,
    select_victims_by_resources,
    select_victims_on_node,
)
from kresched.sched.profile import Profile
from kresched.sched.runner import (
    Diagnosis,
    FilterMemo,
    find_nodes_that_fit,
    fit_error_message,
    memo_of,
    processed_nodes,
    resources_only,
)
from kresched.sched.static import StaticFilters, fit_shape
from kresched.sched.taint_toleration import tolerations_tolerate_taint

__all__ = ["Planner", "pending_pods_to_plan", "queue_key", "plan_pending", "plan_pod"]


def pending_pods_to_plan(state: ClusterState, all_pending: bool = False) -> list[Pod]:
    """Pending pods in the order they are planned: critical only (or all), highest priority first
    (as the scheduling queue's PrioritySort), then oldest first."""
    pods = [p for p in state.pending_pods() if all_pending or p.is_critical]
    pods.sort(key=queue_key)
    return pods


def queue_key(pod: Pod) -> tuple[int, str, str]:
    """The scheduling queue's order (PrioritySort): higher priority first, then older first."""
    return (-pod.effective_priority, pod.metadata.creation_timestamp or "", pod.key)


def plan_pod(state: ClusterState, pod: Pod, options: PlanOptions = PlanOptions()) -> Plan:
    """The plan for one pod (`Planner.plan`)."""
    return Planner(state, options).plan(pod)


def plan_pending(state: ClusterState, pods: Iterable[Pod], options: PlanOptions = PlanOptions()) -> list[Plan]:
    """Plan `pods` in order; each later plan sees the earlier pods placed and their victims gone."""
    planner = Planner(state, options)
    return [planner.plan(p, commit=True) for p in pods]


@dataclass
class _Working:
    snapshot: Snapshot
    ledger: PdbLedger
    #: Pods placed by earlier plans of this run (by key), and victims removed.
    placed: set[str] = field(default_factory=set)
    evicted: set[str] = field(default_factory=set)
    #: The nodes whose NodeInfo `_apply` replaced, in order (with repeats): what changed since.
    changes: list[str] = field(default_factory=list)


class _Engine:
    """What the planner keeps per scheduler profile: its plugins, the node-static ones' memo, its
    placer, and the filter memos and tier indexes of the pods it schedules (their verdicts are the
    profile's)."""

    __slots__ = ("dynamic", "filter_memo", "indexes", "placer", "plugins", "profile", "static")

    def __init__(self, profile: Profile, plugins: Sequence[FilterPlugin], memoize: bool) -> None:
        self.profile = profile
        self.plugins = list(plugins)
        self.static = StaticFilters(self.plugins)
        self.placer = Placer(self.plugins, self.static, profile.scores, memoize, profile.percentage_of_nodes_to_score)
        self.dynamic = [p for p in self.plugins if p.name not in self.static.names]
        #: Per pod shape: node name → (NodeInfo, its filter status).
        self.filter_memo: dict[bytes, FilterMemo] = {}
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
        #: Per NodeInfo (by identity): its evictable pods (not mirror, DaemonSet, terminating or
        #: critical) with their effective priorities, lowest first. Which of them may go for a
        #: given pod only depends on its priority.
        #: The fourth item, the node's `PdbView`, is found on first use (`_budget_state`).
        self._evictable: dict[int, tuple[NodeInfo, list[int], list[Pod], PdbView | None,
                                         dict[int, list[Pod]]]] = {}
        #: Per NodeInfo (by identity): (it, `Suffixes` of its evictable pods).
        self._suffixes: dict[int, tuple[NodeInfo, Suffixes]] = {}
        # The cluster's nodes are ranked as they are built (`_rank`), while their pods are in the
        # CPU's caches: a third cheaper than a pass over every pod later, and planning is for pods
        # that need evictions. (Not with `rank=False`: a what-if's replicas mostly fit, and a node is
        # ranked when a pod first needs evictions there.)
        self.work = _Working(Snapshot.from_state(state, self._rank if rank else None), PdbLedger(state))
        #: Per NodeInfo (by identity) and tier: (it, its budgets, the positions of the eligible
        #: pods among its evictable ones, those pods, `_eligible` per candidate count).
        self._eligible_memo: dict[tuple[int, int], tuple[NodeInfo, tuple[int, ...], list[int], list[Pod],
                                                         dict[int, list[Pod]]]] = {}
        #: Per NodeInfo (by identity): (it, `_budget_state`), valid at the ledger's version
        #: `_budgets_version`; `_budget_users` finds the entries a PDB's change invalidates.
        self._budgets: dict[int, tuple[NodeInfo, tuple[int, ...]]] = {}
        self._budgets_version = 0
        self._budget_users: dict[str, set[int]] = {}
        self._stamps = itertools.count(1)
        #: Pending pods the scheduler nominated to a node, by node (read once: the state is fixed).
        self._nominated = nominated_pods(state)

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
        plan = self._plan(planned, commit, evict)
        warnings = self.profiles.warnings_for(profile)
        if planned is not pod or warnings or profile.name != "default-scheduler":
            plan = replace(plan, pod=pod, profile=profile.name, warnings=warnings)
        return plan

    def _plan(self, pod: Pod, commit: bool, evict: bool = True) -> Plan:
        snap = self.work.snapshot
        priority = pod.effective_priority
        taint = tolerations_tolerate_taint(pod.spec.tolerations, RESERVATION_TAINT)
        nominated = {n: [p for p in ps if p.key not in self.work.placed and p.key != pod.key]
                     for n, ps in self._nominated.items()}
        diag, cycle = find_nodes_that_fit(self.plugins, pod, snap, nominated, self.static, self._memo_for(pod),
                                          sample=True, percentage=self.placer.percentage, start=self.start)
        if self.rotate and snap.node_infos:
            self.start = (self.start + processed_nodes(diag)) % len(snap.node_infos)
        notes = self._notes(pod)
        if diag.feasible:
            landing = self.placer.landing(pod, snap, diag, cycle)
            node = landing.node
            assert node is not None
            plan = Plan(pod, priority, "fits", node, None, taint, message=_fits_message(node, diag, landing.candidates),
                        node_pods_before=tuple(snap.by_name[node].pods), notes=notes,
                        candidates=landing.candidates, likely=landing.likely)
            if commit:
                self._apply(plan)
            return plan
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
        if self.memoize and not unfiltered and resources_only(self.plugins, cycle, self.static.names):
            return self._plan_indexed(pod, priority, taint, notes, commit, diag, cycle, nominated)
        if unfiltered:
            potential = list(snap.node_infos)
        else:
            statuses, unschedulable = diag.node_to_status, Code.UNSCHEDULABLE
            potential = [info for info in snap.node_infos
                         if (st := statuses.get(info.name)) is not None and st.code is unschedulable]
        #: Why a node is out whatever the tier (reasons no eviction changes, nothing evictable).
        infeasible: dict[str, Reason] = {}
        candidates: list[tuple[NodeInfo, list[Pod]]] = []
        evictable = self._evictable
        for info in potential:
            st = self.static.status(cycle, pod, info) if unfiltered else SUCCESS
            if st is not SUCCESS and not st.is_success:
                infeasible[info.name] = f"{', '.join(st.reasons)} (no eviction changes that)"
                continue
            hit = evictable.get(id(info))  # `_candidates`, its kept answer read here (every node, every pod)
            cands = hit[4].get(priority) if hit is not None and hit[0] is info else None
            if cands is None:
                cands = self._candidates(info, priority)
            if not cands:
                infeasible[info.name] = node_refusal(info.node) or NOTHING_EVICTABLE
                continue
            candidates.append((info, cands))
        tier_reasons: dict[str, Reason] = {}
        for tier in (1, 2, 3):
            # Each tier says afresh why its candidate nodes are out: a runner-up's reason is the
            # winning tier's (or, when none wins, the most permissive tier's), never an earlier one's.
            tier_reasons = {}
            options = self._tier_options(pod, cycle, candidates, tier, nominated, tier_reasons)
            if options:
                return self._decide(pod, priority, taint, tier, options,
                                    heapq.nsmallest(5, {**infeasible, **tier_reasons}.items()), notes, commit,
                                    nominated)
        reasons = {**infeasible, **tier_reasons}
        return self._infeasible(pod, priority, taint, heapq.nsmallest(10, reasons.items()), len(reasons), notes, diag,
                                cycle, nominated)

    def _candidates(self, info: NodeInfo, priority: int) -> list[Pod]:
        """`info`'s pods that may be evicted for a pod of `priority` (`candidates.is_candidate_victim`),
        most important first. The node's evictable pods are kept in that order; since it is by
        priority first, the ones below `priority` are a suffix."""
        hit = self._evictable.get(id(info))
        if hit is None or hit[0] is not info:
            hit = self._rank(info)
        by_priority = hit[4]
        cands = by_priority.get(priority)
        if cands is None:
            cands = by_priority[priority] = hit[2][bisect_right(hit[1], -priority):]
        return cands

    def _rank(self, info: NodeInfo) -> tuple[NodeInfo, list[int], list[Pod], None, dict[int, list[Pod]]]:
        """`info`'s entries of `_evictable` and `_suffixes`, found together."""
        ranked = sorted([p for p in info.pods if p.protection is None], key=importance_key) \
            if node_refusal(info.node) is None else []  # (`protected_reason`; a lost node: none)
        hit = self._evictable[id(info)] = (info, [-p.effective_priority for p in ranked], ranked, None, {})
        self._suffixes[id(info)] = (info, Suffixes.of(ranked, self.options.max_grace_seconds))
        return hit

    def _notes(self, pod: Pod) -> tuple[str, ...]:
        out = []
        if pod.spec.scheduling_gates:
            out.append("the pod is held by scheduling gates: the scheduler will not place it until they are removed")
        if pod.spec.node_name:
            out.append(f"the pod is already bound to node {pod.spec.node_name}")
        return tuple(out)

    # -- tiers ----------------------------------------------------------------------------
    def _eligible(self, info: NodeInfo, cands: list[Pod], tier: int) -> list[Pod]:
        """The candidates `tier` may evict: tiers 1–2 none whose eviction the PDBs refuse, tier 1
        none with a grace period above the limit. Found once per node and tier for all its
        evictable pods while the budgets of its PDBs stay as they are: `cands` (those below one
        priority) is a suffix of them, so its eligible pods are a suffix of theirs."""
        if tier == 3:
            return cands
        budgets = self._budget_state(info)
        key = (id(info), tier)
        hit = self._eligible_memo.get(key)
        _, _, ranked, view, _ = self._evictable[id(info)]
        if hit is None or hit[0] is not info or hit[1] != budgets:
            assert view is not None  # (`_budget_state` found it)
            keep, pods = view.fixed[tier - 1], view.fixed_pods[tier - 1]
            remaining = self.work.ledger.remaining
            spent = {i for i, k in view.spenders if remaining.get(k, 0) <= 0}
            if spent:
                keep = [i for i in keep if i not in spent]
                pods = [ranked[i] for i in keep]
            hit = self._eligible_memo[key] = (info, budgets, keep, pods, {})
        by_count = hit[4]
        out = by_count.get(len(cands))
        if out is None:
            out = by_count[len(cands)] = hit[3][bisect_left(hit[2], len(ranked) - len(cands)):]
        return out

    def _tier_options(self, pod: Pod, cycle: CycleState, candidates: list[tuple[NodeInfo, list[Pod]]],
                      tier: int, nominated: dict[str, list[Pod]], infeasible: dict[str, Reason]) -> list[NodeOption]:
        """Every feasible option of `tier` that could be the best or the runner-up.

        Branch and bound, lazily: each node enters the heap with a quick bound (`quickbound_to`,
        from the node's `Suffixes`; a node where not even all the candidates the tier may evict,
        budgets aside, make room is out at once); when it reaches the top, its exact tier-eligible
        pods and bound (`lowerbound_to`) are computed and it goes back in; when it reaches the top
        again, its victims are selected. The search stops once no node left can beat the second
        best option, so both the chosen node and its runner-up (which `decided_by` names) are what
        a search of every node would find. (`_search` is the same search over a `TierIndex`.)"""
        heap: list[tuple[tuple, int, NodeInfo, list[Pod], int]] = []
        for i, (info, cands) in enumerate(candidates):
            quick = self._quick(pod, info, cands, tier)
            if quick is None:
                infeasible[info.name] = why_not_enough(tier, self.options.max_grace_seconds)
            else:
                heap.append((quick, i, info, cands, QUICK))
        heapq.heapify(heap)
        options: list[NodeOption] = []
        top: list[tuple] = []
        while heap:
            lb, i, info, pods, state = heapq.heappop(heap)
            if self.prune and len(top) == 2 and lb > top[1]:
                for rest_lb, _, rest, _, _ in [(lb, i, info, pods, state), *heap]:
                    infeasible[rest.name] = CannotBeat(rest_lb, top[0])  # worded only if shown
                break
            if state == QUICK:
                eligible = self._eligible(info, pods, tier)
                k_min = min_victims(pod, info, eligible)
                if k_min is None:
                    infeasible[info.name] = why_not_enough(tier, self.options.max_grace_seconds)
                else:
                    bound = lowerbound_to(pod, info, eligible, k_min, tier, self.options.max_grace_seconds)
                    heapq.heappush(heap, (bound, i, info, eligible, REFINED))
                continue
            opt = self._option(pod, cycle, info, pods, tier, nominated.get(info.name, ()))
            if isinstance(opt, str):
                infeasible[info.name] = opt
                continue
            options.append(opt)
            top = sorted([*top, opt.key])[:2]
        return options

    # -- the same search, kept across pods of one shape ---------------------------------------------
    def _plan_indexed(self, pod: Pod, priority: int, taint: bool, notes: tuple[str, ...], commit: bool,
                      diag: Diagnosis, cycle: CycleState, nominated: dict[str, list[Pod]]) -> Plan:
        """The tiers for a pod whose only pod-dependent filter is NodeResourcesFit (`resources_only`),
        over a `TierIndex` per (shape, tier): the search `_tier_options` makes, with what it knows
        of each node kept for the next pod of the shape, so a pod costs what changed since the last
        one (nodes whose NodeInfo `_apply` replaced, nodes under a PDB whose budget it spent, nodes
        something is nominated to) and the nodes it pops, not every node."""
        shape = fit_shape(pod)
        statuses = diag.node_to_status
        for tier in (1, 2, 3):
            index = self._synced_index(shape, tier, pod, priority, statuses, nominated)
            options, out = self._search(index, pod, cycle, tier, nominated)
            if options:
                return self._decide(pod, priority, taint, tier, options, out(5), notes, commit, nominated)
        return self._infeasible(pod, priority, taint, out(10), len(index.entries), notes, diag, cycle, nominated)

    def _synced_index(self, shape: bytes, tier: int, pod: Pod, priority: int, statuses: dict[str, Status],
                      nominated: dict[str, list[Pod]]) -> TierIndex:
        """The (shape, tier) index, brought up to date for `pod` (one of that shape; `statuses` its
        filter statuses): the nodes changed since it was last used are looked at again."""
        work = self.work
        ledger = work.ledger
        index = self._indexes.get((shape, tier))
        if index is None:  # every node where eviction may help, each with its quick bound
            index = self._indexes[(shape, tier)] = TierIndex()
            index.changes, index.ledger = len(work.changes), ledger.version
            for info in work.snapshot.node_infos:
                st = statuses.get(info.name)
                if st is not None and st.code is Code.UNSCHEDULABLE:
                    entry = index.entries[info.name] = Entry(info, self._candidates(info, priority))
                    entry.key, entry.stamp = self._first_key(entry, pod, tier), next(self._stamps)
                    if entry.key is not None:
                        index.heap.append((entry.key, info.name, entry.stamp))
            heapq.heapify(index.heap)
            return index
        changed = set(work.changes[index.changes:])
        if index.ledger != ledger.version:
            for key in ledger.changed_since(index.ledger):
                changed.update(index.budget_users.pop(key, ()))
        changed.update(self._nominated)  # what holds room there changes with every pod placed
        index.changes, index.ledger = len(work.changes), ledger.version
        for name in changed:
            self._refresh(index, name, pod, priority, tier, statuses, bool(nominated.get(name)))
        if len(index.heap) > 2 * len(index.entries) + 64:  # mostly stale items: start it afresh
            index.heap = [(e.key, n, e.stamp) for n, e in index.entries.items() if e.key is not None]
            heapq.heapify(index.heap)
        return index

    def _refresh(self, index: TierIndex, name: str, pod: Pod, priority: int, tier: int,
                 statuses: dict[str, Status], held: bool) -> None:
        """Node `name` as `pod` finds it now: out of the index unless its filter status is
        Unschedulable (eviction may help); else its candidates, and its kept option or reason while
        the NodeInfo and the budgets of its PDBs are the same (not while something nominated there
        holds room: then it is searched afresh, as `_tier_options` does) or its quick bound."""
        info = self.work.snapshot.by_name.get(name)
        st = statuses.get(name)
        if info is None or st is None or st.code is not Code.UNSCHEDULABLE:
            index.entries.pop(name, None)
            return
        entry = index.entries.get(name)
        if entry is None or entry.info is not info:
            entry = index.entries[name] = Entry(info, self._candidates(info, priority))
            key = self._first_key(entry, pod, tier)
        elif not entry.cands:
            key = None
        else:
            if (entry.result is not None or entry.refined is not None) and entry.budgets \
                    and entry.budgets != self._budget_state(info):
                entry.result = entry.refined = None  # budgets only go down: it never holds again
            if entry.result is not None and not held:
                key = entry.result.key if isinstance(entry.result, NodeOption) else None
            elif entry.refined is not None and not held:
                key = entry.refined[0]
            else:
                key = entry.quick if entry.quick is not None else self._first_key(entry, pod, tier)
        if key != entry.key or entry.stamp == 0:
            entry.key, entry.stamp = key, next(self._stamps)
            if key is not None:
                heapq.heappush(index.heap, (key, name, entry.stamp))

    def _search(self, index: TierIndex, pod: Pod, cycle: CycleState, tier: int,
                nominated: dict[str, list[Pod]]) -> tuple[list[NodeOption], Callable[[int], list[tuple[str, Reason]]]]:
        """`_tier_options` over the index: its heap holds every node's quick bound, kept refined
        bound or kept option, and what the search finds of a node (a refined bound, an option, why
        there is none) is kept there — unless something nominated there holds room: then its
        refined bound goes into a heap of this search's own and nothing is kept. Returns the
        options, and a function giving the first `k` nodes by name that are out, with why."""
        heap, entries = index.heap, index.entries
        mine: list[tuple[tuple, str, list[Pod]]] = []  # refined bounds, with the eligible pods
        options: list[NodeOption] = []
        top: list[tuple] = []
        back: list[tuple[tuple, str, int]] = []  # the index's items to put back once done
        refined: dict[str, tuple] = {}
        why: dict[str, str] = {}
        pruned = False
        while True:
            while heap and ((e := entries.get(heap[0][1])) is None or e.stamp != heap[0][2]):
                heapq.heappop(heap)  # stale: the node changed since
            if heap and (not mine or heap[0][0] < mine[0][0]):
                lb, name, stamp = heapq.heappop(heap)
                entry = entries[name]
                held = nominated.get(name, ())
                if self.prune and len(top) == 2 and lb > top[1]:
                    heapq.heappush(heap, (lb, name, stamp))
                    pruned = True
                    break
                if entry.key is not entry.quick and entry.result is not None:  # a kept option
                    back.append((lb, name, stamp))
                    assert isinstance(entry.result, NodeOption)
                    options.append(entry.result)
                    top = sorted([*top, lb])[:2]
                    continue
                if entry.key is not entry.quick:  # a kept refined bound: its turn to be selected
                    assert entry.refined is not None
                    back.append((lb, name, stamp))
                    heapq.heappush(mine, (lb, name, entry.refined[1]))
                    refined[name] = lb
                    continue
                eligible = self._eligible(entry.info, entry.cands, tier)
                k_min = min_victims(pod, entry.info, eligible)
                if k_min is None:
                    why[name] = reason = why_not_enough(tier, self.options.max_grace_seconds)
                    if not held:
                        self._keep(index, name, entry, reason)
                    else:
                        back.append((lb, name, stamp))
                    continue
                bound = lowerbound_to(pod, entry.info, eligible, k_min, tier, self.options.max_grace_seconds)
                if held:
                    back.append((lb, name, stamp))
                    heapq.heappush(mine, (bound, name, eligible))
                    refined[name] = bound
                else:  # kept, and back in the index's heap to compete with the rest
                    self._keep(index, name, entry, None, (bound, eligible))
                    heapq.heappush(heap, (bound, name, entry.stamp))
                continue
            if not mine:
                break
            lb, name, eligible = mine[0]
            if self.prune and len(top) == 2 and lb > top[1]:
                pruned = True
                break
            heapq.heappop(mine)
            refined.pop(name, None)
            entry = entries[name]
            held = nominated.get(name, ())
            opt = self._option(pod, cycle, entry.info, eligible, tier, held)
            if not held:
                self._keep(index, name, entry, opt)
                if isinstance(opt, NodeOption):
                    back.append((opt.key, name, entry.stamp))
            if isinstance(opt, str):
                why[name] = opt
                continue
            options.append(opt)
            top = sorted([*top, opt.key])[:2]
        for item in back:
            if entries[item[1]].stamp == item[2]:
                heapq.heappush(heap, item)
        chosen = {o.node for o in options}
        best = top[0] if top else None

        def out(k: int) -> list[tuple[str, Reason]]:
            found: list[tuple[str, Reason]] = []
            for info in self.work.snapshot.node_infos:
                name = info.name
                entry = entries.get(name)
                if entry is None or name in chosen:
                    continue
                reason: Reason
                if name in why:
                    reason = why[name]
                elif not entry.cands:
                    reason = node_refusal(info.node) or NOTHING_EVICTABLE
                elif isinstance(entry.result, str) and entry.key is None:
                    reason = entry.result
                else:
                    assert pruned, name  # else every node in the heaps was looked at
                    assert best is not None
                    reason = CannotBeat(refined.get(name, entry.key), best)
                found.append((name, reason))
                if len(found) == k:
                    break
            return found

        return options, out

    def _keep(self, index: TierIndex, name: str, entry: Entry, result: NodeOption | str | None,
              refined: tuple[tuple, list[Pod]] | None = None) -> None:
        """Keep what the search found of a node — its option or why it has none, or else its
        refined bound and eligible pods — valid while its NodeInfo and budgets are the same."""
        entry.result, entry.refined = result, refined
        entry.budgets = budgets = self._budget_state(entry.info)
        if budgets:
            view = self._evictable[id(entry.info)][3]
            for key in view.keys if view is not None else ():
                index.budget_users.setdefault(key, set()).add(name)
        entry.key = result.key if isinstance(result, NodeOption) else refined[0] if refined is not None else None
        entry.stamp = next(self._stamps)

    def _option(self, pod: Pod, cycle: CycleState, info: NodeInfo, eligible: list[Pod], tier: int,
                nominated: Sequence[Pod]) -> NodeOption | str:
        """The node's option in `tier`, or why it has none."""
        victims_or_status = self._select_victims(pod, cycle, info, eligible, nominated)
        if isinstance(victims_or_status, Status):
            return _status_text(victims_or_status)
        if tier < 3 and any(v.pdb.violation for v in victims_or_status):
            return f"tier {tier}: the victims would overspend a PodDisruptionBudget"
        return NodeOption(info.name, tier, victims_or_status, option_key(victims_or_status, info))

    def _first_key(self, entry: Entry, pod: Pod, tier: int) -> tuple | None:
        """A new entry's heap key: its quick bound; None where nothing may be evicted, or where not
        even all the tier's candidates, budgets aside, make room (then that is its kept reason)."""
        if not entry.cands:
            return None
        entry.quick = self._quick(pod, entry.info, entry.cands, tier)
        if entry.quick is None:
            entry.result, entry.budgets = why_not_enough(tier, self.options.max_grace_seconds), ()
        return entry.quick

    def _quick(self, pod: Pod, info: NodeInfo, cands: list[Pod], tier: int) -> tuple | None:
        """`quickbound_to` of `cands` (`info`'s candidates for some priority) in `tier`, from the
        node's `Suffixes`."""
        sfx = self._suffixes[id(info)][1]  # (`_candidates` ranked `info`: `_rank`)
        return quickbound_to(pod, info, sfx, len(sfx.all.count) - 1 - len(cands), tier)

    def _memo_for(self, pod: Pod, engine: _Engine | None = None) -> FilterMemo | None:
        memos = self._filter_memo if engine is None else engine.filter_memo
        return memo_of(memos, fit_shape(pod)) if self.memoize else None

    def _sync_budgets(self) -> None:
        """Drop the kept budget states of nodes covered by a PDB the ledger changed since."""
        ledger = self.work.ledger
        if ledger.version != self._budgets_version:
            for key in ledger.changed_since(self._budgets_version):
                for ident in self._budget_users.pop(key, ()):
                    self._budgets.pop(ident, None)
            self._budgets_version = ledger.version

    def _budget_state(self, info: NodeInfo) -> tuple[int, ...]:
        """The budgets left on the PDBs covering `info`'s evictable pods (what its options depend on
        besides the NodeInfo itself). Kept per NodeInfo; when the ledger changes, only the entries
        of nodes covered by a PDB that changed are dropped."""
        ledger = self.work.ledger
        self._sync_budgets()
        cached = self._budgets.get(id(info))
        if cached is not None and cached[0] is info:
            return cached[1]
        hit = self._evictable[id(info)]
        view = hit[3]
        if view is None:  # found on first use: most nodes never get this far
            view = PdbView.of(hit[2], ledger, self.options.max_grace_seconds)
            self._evictable[id(info)] = (*hit[:3], view, hit[4])
        keys = view.keys
        remaining = ledger.remaining
        state = tuple([remaining.get(k, 0) for k in keys])
        self._budgets[id(info)] = (info, state)
        for k in keys:
            self._budget_users.setdefault(k, set()).add(id(info))
        return state

    def _select_victims(self, pod: Pod, cycle: CycleState, info: NodeInfo, eligible: list[Pod],
                        nominated: Sequence[Pod]) -> tuple[Victim, ...] | Status:
        """The minimal victims among `eligible` on one node, most important first, each with what
        its eviction does to its PDB (budgets spent in that order); or why none can make room.

        The reprieve order is the design's (PDB-violating first, then by importance). When that
        set overspends a budget, the reprieve runs once more with every budget-spending pod first:
        a greedy reprieve keeps whatever it tries first, so the first order can evict two pods of
        a one-unit PDB where one of them and a pod without PDB would do. The set with fewer
        violations wins (the first one on a tie); both are minimal."""
        ledger = self.work.ledger
        best: tuple[Victim, ...] | None = None
        resources_only = not nominated and all(pl.name in cycle.skip for pl in self.dynamic
                                               if pl.name != "NodeResourcesFit")
        for split in (ledger.split_violating, self._split_spenders_first):
            if resources_only:
                sel = select_victims_by_resources(pod, info, eligible, split, ordered=True)
            else:
                sel = select_victims_on_node(self.dynamic, cycle.clone(), pod, info.clone(), eligible, split,
                                             nominated)
            if not sel.status.is_success:
                return sel.status
            ordered = sorted(sel.victims, key=importance_key)
            checks = ledger.check_all(ordered)
            victims = tuple(
                Victim(v, info.name, c, v.grace_seconds, min(v.grace_seconds, self.options.max_grace_seconds))
                for v, c in zip(ordered, checks, strict=True)
            )
            if best is None or pdb_violations(victims) < pdb_violations(best):
                best = victims
            if pdb_violations(best) == 0:
                break
        assert best is not None
        return best

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
                nominated: dict[str, list[Pod]]) -> Plan:
        """The plan with the best of `options`; `out`: the first nodes by name that are out, and why."""
        options.sort(key=lambda o: o.key)
        best = options[0]
        runners = tuple(RunnerUp(o.node, tier, lost_because(o, best), len(o.victims)) for o in options[1:6]) + \
            tuple(RunnerUp(n, None, str(r)) for n, r in out[:5])
        decided = f"{lost_because(options[1], best, winner_view=True)}" if len(options) > 1 else None
        info = self.work.snapshot.by_name[best.node]
        victims, after = self._second_order(pod, best, taint, nominated)
        blocked = best.violations > 0 and not self.options.allow_pdb_violation
        tier_text = {1: f"tier 1: no PDB violated, every grace period ≤ {self.options.max_grace_seconds}s",
                     2: "tier 2: no PDB violated",
                     3: f"tier 3: {best.violations} PDB violation{'s' if best.violations != 1 else ''}"}[tier]
        msg = (f"evict {len(victims)} pod{'s' if len(victims) != 1 else ''} on node {best.node} ({tier_text})")
        if blocked:
            msg += "; blocked: evicting would violate a PodDisruptionBudget (use --allow-pdb-violation to go on)"
        plan = Plan(pod, priority, "evict", best.node, tier, taint, victims, msg, decided, runners, blocked,
                    tuple(info.pods), notes)
        if commit:
            self._apply(plan, after)
        return plan

    def _infeasible(self, pod: Pod, priority: int, taint: bool, out: list[tuple[str, Reason]], count: int,
                    notes: tuple[str, ...], diag: Diagnosis, cycle: CycleState,
                    nominated: dict[str, list[Pod]]) -> Plan:
        """No tier has an option: `out`, the first nodes by name and why none helps, of `count`."""
        # No node was feasible, so the search visited every node: the scheduler's own message,
        # with what its PostFilter (preemption) adds.
        post_filters = self.engine.profile.post_filters
        stopped = post_filter_error(diag, post_filters)
        pmsg = None if stopped is not None or "DefaultPreemption" not in post_filters else \
            preemption_message(self.plugins, pod, self.work.snapshot, diag, cycle, nominated)[0]
        parts = [full_scheduler_message(fit_error_message(diag), pmsg, stopped, post_filters)]
        if count:
            parts.append(f"no eviction helps on any of {count} candidate node(s)")
        else:
            parts.append("no node is a candidate: every node fails for reasons no eviction changes")
        runners = tuple(RunnerUp(n, None, str(r)) for n, r in out[:10])
        return Plan(pod, priority, "infeasible", None, None, taint, message="; ".join(parts), runners_up=runners,
                    notes=notes)

    # -- second-order effects --------------------------------------------------------------------
    def _second_order(self, pod: Pod, best: NodeOption, taint: bool,
                      nominated: dict[str, list[Pod]]) -> tuple[tuple[Victim, ...], _After]:
        """Where each victim's replacement lands after P is placed, most important victim first,
        each seeing where the earlier ones went. During the operation the reserved node carries
        the reservation taint (when P tolerates it). Pods nominated to a node hold room there for
        replacements of lower or equal priority, as they do for P. Also the simulated cluster
        once they have landed (`_After`), which `_apply` makes the working one."""
        snap = self.work.snapshot
        node = snap.by_name[best.node].clone()
        for v in best.victims:
            node.remove_pod(v.pod)
        node.add_pod(bound_to(pod, node.node))
        if taint:
            tainted = msgspec.structs.replace(node.node, spec=msgspec.structs.replace(
                node.node.spec, taints=(*node.node.spec.taints, RESERVATION_TAINT)))
            node = _with_node(node, tainted)
        sim = snap.with_node_info(node)
        out = []
        storage = self.state.storage
        for v in best.victims:
            v = replace(v, held_by=held_by_volume(v.pod, storage))
            if v.is_bare:
                out.append(replace(v, lands_on=None, pending_reason="bare pod: no controller recreates it"))
                continue
            profile = self.profiles.for_pod(v.pod)
            if profile is None:
                out.append(replace(v, lands_on=None, pending_reason=self.profiles.other_scheduler_note(v.pod)))
                continue
            engine = self._engine(profile)
            replacement = profile.planning_pod(replacement_of(v.pod))
            landing = engine.placer.land(replacement, sim, nominated, self._memo_for(replacement, engine))
            if landing.node is None:
                out.append(replace(v, lands_on=None, pending_reason=landing.reason))
                continue
            info = sim.by_name[landing.node].clone()
            info.add_pod(bound_to(replacement, info.node))
            sim = sim.with_node_info(info)
            out.append(replace(v, lands_on=landing.node, candidates=landing.candidates, likely=landing.likely))
        return tuple(out), _After(sim, snap.by_name[best.node].node if taint else None)

    def _apply(self, plan: Plan, after: _After | None = None) -> None:
        """Later plans see this pod placed on its node, its victims gone (seed 001, ex. 1–4) and
        the victims' replacements where they land, taking room there: for a plan that evicts, the
        cluster `_second_order` simulated (`after`), without the reservation taint."""
        if plan.node is None:
            return
        w = self.work
        w.placed.add(plan.pod.key)
        w.evicted.update(v.pod.key for v in plan.victims)
        if after is not None:
            snap = after.snapshot
            if after.untainted is not None:
                snap = snap.with_node_info(_with_node(snap.by_name[plan.node], after.untainted))
            w.snapshot = snap
            w.changes.append(plan.node)
            w.changes.extend(v.lands_on for v in plan.victims if v.lands_on is not None)
        else:  # a pod that fits: nothing is evicted
            assert not plan.victims, "an evicting plan is applied with the cluster its simulation built"
            info = w.snapshot.by_name[plan.node].clone()
            info.add_pod(bound_to(plan.pod, info.node))
            w.snapshot = w.snapshot.with_node_info(info)
            w.changes.append(plan.node)
        w.ledger.commit(v.pod for v in plan.victims)


class _After(NamedTuple):
    """The cluster once a plan is carried out, as `_second_order` simulated it: its snapshot, and
    the reserved node's Node before the reservation taint (None: it was not tainted)."""
    snapshot: Snapshot
    untainted: Node | None


def _fits_message(node: str, diag: Diagnosis, candidates: tuple[str, ...]) -> str:
    others = len(diag.feasible) - 1
    where = f"fits on node {node} without evicting anything"
    if diag.nominated_fits:
        where += " (the node it is nominated to)"
    elif others:
        where += f" (and on {'at least ' if diag.sampled else ''}{others} other node{'s' if others != 1 else ''})"
    if len(candidates) > 1:
        where += f"; {len(candidates) - 1} other node(s) tie with it at the top score"
    if diag.sampled:
        where += ("; on a cluster this size the scheduler scores only a sample of the feasible nodes, so this is "
                  "the likely node")
    return where + "; the scheduler should bind it on its next attempt"


def _status_text(st: Status) -> str:
    return f"{', '.join(st.reasons)} even after evicting every eligible pod"


def _with_node(info: NodeInfo, node: Node) -> NodeInfo:
    out = info.clone()
    out.node = node
    return out
