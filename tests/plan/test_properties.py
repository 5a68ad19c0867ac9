"""Properties of every plan, on random small clusters (hypothesis; design: "Testing").

Clusters: 2–5 nodes, 0–8 running pods each (random priorities, CPU/memory requests, grace periods,
readiness, bare or controller-managed, a few DaemonSet, terminating and critical pods), 0–3 PDBs
(with a status, or without one so that the disruption controller's budget is computed), and one
random pending pod. Filters involved are resources and pod counts only. Those are monotone — a pod
that does not fit next to a set of pods does not fit next to a superset — which is what makes the
minimality property below exact rather than approximate.

Runs derandomized (same examples on every run, no example database), so CI is deterministic.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.candidates import is_candidate_victim
from kresched.plan.pdb import PdbLedger
from kresched.plan.planner import Planner, plan_pod
from kresched.plan.plans import Plan, PlanOptions
from kresched.render.plan import plan_dict
from kresched.sched.framework import Snapshot
from kresched.sched.runner import default_plugins, find_nodes_that_fit
from tests.builders import make_node, make_pdb, make_pod, make_state

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=200,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

APPS = ("a", "b", "c")
PRIORITIES = (5, 0, 1, 10, 50, 100, 1000)
CPU_M = (1000, 0, 250, 500, 1000, 2000)
MEM_MI = (0, 256, 1024, 2048)
GRACE = (5, 0, 10, 30, 60)


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterState, Pod]:
    nodes, pods = [], []
    for i in range(draw(st.integers(2, 5))):
        name = f"n{i}"
        cpu_m = draw(st.sampled_from((2000, 3000, 4000)))
        mem_mi = draw(st.sampled_from((2048, 4096, 8192)))
        max_pods = draw(st.sampled_from((4, 6, 110)))
        nodes.append(make_node(name, cpu=f"{cpu_m}m", memory=f"{mem_mi}Mi", pods=max_pods))
        used_cpu = used_mem = 0
        for j in range(min(max_pods, draw(st.sampled_from((8, 0, 3, 4, 5, 6, 7))))):
            # Draws that do not fit are skipped, so the first pods fill the node and a pending
            # pod usually needs evictions somewhere.
            cpu, mem = draw(st.sampled_from(CPU_M)), draw(st.sampled_from(MEM_MI))
            if used_cpu + cpu > cpu_m or used_mem + mem > mem_mi:
                continue  # a consistent snapshot: what runs fits where it runs
            used_cpu, used_mem = used_cpu + cpu, used_mem + mem
            kind = draw(st.sampled_from(("rs",) * 8 + ("bare", "bare", "daemonset", "terminating", "critical")))
            pods.append(make_pod(
                f"{name}-p{j}", node=name, cpu=f"{cpu}m" if cpu else None, memory=f"{mem}Mi" if mem else None,
                priority=draw(st.sampled_from(PRIORITIES)), grace=draw(st.sampled_from(GRACE)),
                labels={"app": draw(st.sampled_from(APPS))}, ready=draw(st.sampled_from((True, True, True, False))),
                owner={"bare": None, "daemonset": "DaemonSet/ds"}.get(kind, "ReplicaSet/rs"),
                deletion_timestamp="2026-01-01T00:00:00Z" if kind == "terminating" else None,
                priority_class="system-cluster-critical" if kind == "critical" else "",
                start_time=f"2026-01-0{1 + j % 9}T00:00:00Z"))
    pdbs = []
    for k, app in enumerate(draw(st.lists(st.sampled_from(APPS), max_size=3, unique=True))):
        how = draw(st.sampled_from(("status", "status", "min", "max", "min%", "max%")))
        spec: dict[str, Any] = {
            "status": {"disruptions_allowed": draw(st.sampled_from((0, 1, 2))),
                       "policy": draw(st.sampled_from((None, "AlwaysAllow")))},
            "min": {"min_available": draw(st.integers(0, 3))},
            "max": {"max_unavailable": draw(st.integers(0, 2))},
            "min%": {"min_available": f"{draw(st.sampled_from((25, 50, 75)))}%"},
            "max%": {"max_unavailable": f"{draw(st.sampled_from((25, 50)))}%"},
        }[how]
        pdbs.append(make_pdb(f"pdb-{k}", selector={"app": app}, **spec))
    # Mostly a pod that fits nowhere as things are (it asks for more CPU than any node has free),
    # sometimes one that may fit somewhere.
    free = max(n.allocatable.milli_cpu - sum(p.requests.milli_cpu for p in pods if p.node_name == n.name)
               for n in nodes)
    cpu = draw(st.sampled_from((free + 250, free + 500, free + 1000, 500, 1000, 2000)))
    pending = make_pod("pending", cpu=f"{cpu}m", memory=f"{draw(st.sampled_from((512, 0, 2048)))}Mi",
                       priority=draw(st.sampled_from((500, 100, 2000, 10))))
    return make_state(nodes, [*pods, pending], pdbs), pending


OPTIONS = st.builds(PlanOptions, max_grace_seconds=st.sampled_from((5, 10, 30)),
                    allow_pdb_violation=st.booleans())


def without(state: ClusterState, gone: Iterable[Pod]) -> ClusterState:
    keys = {p.key for p in gone}
    return ClusterState.build(state.nodes, [p for p in state.pods if p.key not in keys], state.pdbs,
                              state.priority_classes, state.namespaces)


def fits_on(state: ClusterState, pod: Pod, node: str) -> bool:
    diag, _ = find_nodes_that_fit(default_plugins(), pod, Snapshot.from_state(state))
    return node in diag.feasible


@PROFILE
@given(clusters(), OPTIONS)
def test_every_plan_holds_what_it_promises(cluster: tuple[ClusterState, Pod], options: PlanOptions) -> None:
    state, pod = cluster
    plan = plan_pod(state, pod, options)
    victims = [v.pod for v in plan.victims]

    # The outcome and its fields agree.
    if plan.outcome == "fits":
        assert plan.node is not None
        assert plan.tier is None
        assert not victims
        assert fits_on(state, pod, plan.node)
        return
    if plan.outcome == "infeasible":
        assert plan.node is None
        assert plan.tier is None
        assert not victims
        # Nothing helps: on no node does P fit even with every pod it may evict gone.
        for node in state.nodes:
            candidates = [p for p in state.pods_on(node.name) if is_candidate_victim(p, pod.effective_priority)]
            assert not fits_on(without(state, candidates), pod, node.name)
        return
    assert plan.node is not None
    assert plan.tier in (1, 2, 3)
    assert victims

    # After evicting the plan's victims, P fits on the chosen node.
    assert fits_on(without(state, victims), pod, plan.node)

    # Victims are on that node, strictly less important than P, and never protected pods.
    for v in victims:
        assert v.node_name == plan.node
        assert v.effective_priority < pod.effective_priority
        assert is_candidate_victim(v, pod.effective_priority)

    # What the plan says about PDBs is what the eviction API would do, evicting in the plan's order.
    checks = PdbLedger(state).check_all(victims)
    assert [c.violation for c in checks] == [v.pdb.violation for v in plan.victims]
    assert plan.blocked == (any(c.violation for c in checks) and not options.allow_pdb_violation)
    # Tiers 1 and 2 violate no PDB; tier 1 shortens no grace period.
    if plan.tier < 3:
        assert not any(c.violation for c in checks)
    if plan.tier == 1:
        assert all(v.grace_seconds <= options.max_grace_seconds for v in victims)
    assert all(v.eviction_grace_seconds == min(v.grace_seconds, options.max_grace_seconds) for v in plan.victims)

    # Minimal: keeping any single victim (evicting only the others) leaves P without room.
    # This is the strong form of "no victim can be reprieved". The reprieve procedure decides each
    # candidate with only the candidates reprieved *before* it back on the node; the final kept set
    # is a superset of those, so with monotone filters (these clusters use only resource and pod
    # count filters) a victim that could not come back then cannot come back at the end either.
    # With non-monotone filters (required pod affinity, where a kept pod can be what P needs) the
    # right property would be the weaker "each victim could not be reprieved when it was tried".
    for v in victims:
        assert not fits_on(without(state, [o for o in victims if o.key != v.key]), pod, plan.node), \
            f"{v.key} could stay"


@PROFILE
@given(clusters(), OPTIONS)
def test_an_easier_tier_is_never_missed(cluster: tuple[ClusterState, Pod], options: PlanOptions) -> None:
    """If on some node P fits with *every* tier-t candidate gone, and evicting all of those at once
    would spend within every PDB budget, the plan's tier is t or better. (With a budget too small
    for all of them, whether a smaller set exists within it is a packing problem the greedy reprieve
    may miss; this property does not claim it.)"""
    state, pod = cluster
    plan = plan_pod(state, pod, options)
    if plan.outcome == "fits":
        return
    ledger = PdbLedger(state)
    for node in state.nodes:
        candidates = [p for p in state.pods_on(node.name) if is_candidate_victim(p, pod.effective_priority)]
        for tier in (1, 2):
            eligible = [p for p in candidates if not ledger.check(p).violation
                        and (tier == 2 or p.grace_seconds <= options.max_grace_seconds)]
            if not eligible or any(c.violation for c in ledger.check_all(eligible)):
                continue
            if fits_on(without(state, eligible), pod, node.name):
                assert plan.outcome == "evict", (node.name, tier, plan.message)
                assert plan.tier is not None
                assert plan.tier <= tier, (node.name, tier, plan.message)


@PROFILE
@given(clusters(), OPTIONS, st.randoms(use_true_random=False))
def test_the_same_state_gives_the_same_plan(cluster: tuple[ClusterState, Pod], options: PlanOptions,
                                            rng: random.Random) -> None:
    state, pod = cluster
    plan = plan_pod(state, pod, options)
    assert plan_pod(state, pod, options) == plan
    nodes, pods, pdbs = list(state.nodes), list(state.pods), list(state.pdbs)
    rng.shuffle(nodes)
    rng.shuffle(pods)
    rng.shuffle(pdbs)
    assert plan_dict(plan_pod(make_state(nodes, pods, pdbs), pod, options)) == plan_dict(plan)


PLAN_KEYS = {"pod", "priority", "outcome", "node", "tier", "taint", "victims", "candidates", "likely", "message"}
VICTIM_KEYS = {"pod", "node", "priority", "qos", "pdb", "pdbViolation", "gracePeriodSeconds",
               "evictionGracePeriodSeconds", "controller", "landsOn", "candidates", "likely"}


def _is_optional_str(x: object) -> bool:
    return x is None or isinstance(x, str)


def assert_contract(d: dict[str, Any], plan: Plan) -> None:
    assert set(d) == PLAN_KEYS
    assert d["pod"] == plan.pod.key
    assert isinstance(d["priority"], int)
    assert not isinstance(d["priority"], bool)
    assert d["outcome"] in ("fits", "evict", "infeasible")
    assert _is_optional_str(d["node"])
    assert d["tier"] in (1, 2, 3, None)
    assert isinstance(d["taint"], bool)
    assert isinstance(d["message"], str)
    assert d["message"]
    assert isinstance(d["victims"], list)
    # A fitting pod's node is one of the nodes tied at the top score, named in order.
    assert (d["node"] in d["candidates"]) if d["outcome"] == "fits" else d["candidates"] == []
    assert d["candidates"] == sorted(d["candidates"])
    assert isinstance(d["likely"], bool)
    for v in d["victims"]:
        assert set(v) == VICTIM_KEYS
        assert isinstance(v["pod"], str)
        assert v["node"] == d["node"]
        assert isinstance(v["priority"], int)
        assert v["qos"] in ("BestEffort", "Burstable", "Guaranteed")
        assert _is_optional_str(v["pdb"])
        assert isinstance(v["pdbViolation"], bool)
        assert isinstance(v["gracePeriodSeconds"], int)
        assert isinstance(v["evictionGracePeriodSeconds"], int)
        assert _is_optional_str(v["controller"])
        assert _is_optional_str(v["landsOn"])
        assert (v["landsOn"] in v["candidates"]) if v["landsOn"] else v["candidates"] == []
        assert v["landsOn"] != d["node"] or not d["taint"]


@PROFILE
@given(clusters(), OPTIONS)
def test_plan_dict_always_has_exactly_the_contracts_keys(cluster: tuple[ClusterState, Pod],
                                                        options: PlanOptions) -> None:
    state, pod = cluster
    plan = plan_pod(state, pod, options)
    assert_contract(plan_dict(plan), plan)


def _with_copies(state: ClusterState, pod: Pod, n: int,
                 other_workloads: bool = False) -> tuple[ClusterState, list[Pod]]:
    """`pod` and `n - 1` pending copies of it (of other workloads alternately: other labels), and
    the state with the copies added."""
    copies = [pod] + [msgspec.structs.replace(pod, metadata=msgspec.structs.replace(
        pod.metadata, name=f"pending-{i}", uid=f"uid-pending-{i}",
        labels={"app": f"other-{i % 2}"} if other_workloads else pod.metadata.labels)) for i in range(1, n)]
    return ClusterState.build(state.nodes, [*state.pods, *copies[1:]], state.pdbs, state.priority_classes,
                              state.namespaces), copies


@PROFILE
@given(clusters(), OPTIONS, st.integers(2, 4))
def test_reusing_results_across_replicas_changes_no_plan(cluster: tuple[ClusterState, Pod], options: PlanOptions,
                                                          replicas: int) -> None:
    """The planner reuses a node's filter verdict and option for the next pod of the same shape
    while the node and its PDB budgets are unchanged; planning replicas one after another must give
    exactly the plans a planner that recomputes everything gives."""
    # Replicas, and pods of other workloads with the same requests (other labels): both share a
    # fit shape, so the second and later ones plan from reused results.
    state, copies = _with_copies(*cluster, replicas, other_workloads=True)
    fast = Planner(state, options)
    slow = Planner(state, options, memoize=False)
    for p in copies:
        assert plan_dict(fast.plan(p, commit=True)) == plan_dict(slow.plan(p, commit=True))


@PROFILE
@given(clusters(), OPTIONS, st.integers(2, 4))
def test_ranking_the_nodes_when_first_needed_changes_no_plan(cluster: tuple[ClusterState, Pod],
                                                             options: PlanOptions, replicas: int) -> None:
    """A what-if's planner (`rank=False`, `rotate=True`) ranks a node's evictable pods when a pod
    first needs evictions there, not as the cluster is read: the same plans as ranking them all
    first (and as recomputing everything), replica after replica."""
    state, copies = _with_copies(*cluster, replicas, other_workloads=True)
    lazy = Planner(state, options, rank=False, rotate=True)
    eager = Planner(state, options, rotate=True)
    slow = Planner(state, options, memoize=False, rotate=True)
    for p in copies:
        a, b, c = (plan_dict(x.plan(p, commit=True)) for x in (lazy, eager, slow))
        assert a == b == c


@PROFILE
@given(clusters(), OPTIONS, st.lists(st.tuples(st.sampled_from((None, "n0", "n1")), st.sampled_from((0, 250, 1000)),
                                               st.sampled_from((0, 0, 1000))), min_size=2, max_size=6))
def test_the_search_kept_per_shape_follows_nominations_spent_budgets_and_other_shapes(
        cluster: tuple[ClusterState, Pod], options: PlanOptions, queue: list[tuple[str | None, int, int]]) -> None:
    """The planner keeps its search per pod shape and tier across pods and looks again only at the
    nodes that changed: nodes a plan placed pods on, nodes under a PDB whose budget a plan spent,
    and nodes a pending pod is nominated to (whose room it holds until it is placed). A queue of
    copies — some nominated to a node, some asking for more CPU or of a higher priority (other
    shapes) — plans as a
    planner that recomputes everything plans it."""
    state, pod = cluster
    copies = [make_pod(f"q-{i}", cpu=f"{pod.requests.milli_cpu + more_cpu}m", memory=str(pod.requests.memory),
                       priority=pod.priority + more_priority, nominated_node=node or "")
              for i, (node, more_cpu, more_priority) in enumerate(queue)]
    state = ClusterState.build(state.nodes, [*state.pods, *copies], state.pdbs, state.priority_classes,
                               state.namespaces)
    fast = Planner(state, options)
    slow = Planner(state, options, memoize=False)
    for p in copies:
        assert plan_dict(fast.plan(p, commit=True)) == plan_dict(slow.plan(p, commit=True))


def _decision(plan: Plan) -> tuple:
    """What the branch and bound must find exactly: the node, tier and victims, and the runner-up
    that decided it (the first runner-up with a tier)."""
    runner = next(((r.node, r.tier, r.reason, r.victims) for r in plan.runners_up if r.tier is not None), None)
    return plan.outcome, plan.node, plan.tier, [v.pod.key for v in plan.victims], plan.decided_by, runner


@PROFILE
@given(clusters(), OPTIONS, st.integers(1, 3))
def test_the_branch_and_bound_decides_as_a_search_of_every_node(cluster: tuple[ClusterState, Pod],
                                                                 options: PlanOptions, replicas: int) -> None:
    """Pruning nodes whose bound cannot beat the second-best option (`_quickbound_to`,
    `_lowerbound_to`) changes neither the choice nor the runner-up that decided it, also for
    replicas planned one after another."""
    state, copies = _with_copies(*cluster, replicas)
    pruned = Planner(state, options)
    full = Planner(state, options, prune=False)
    for p in copies:
        assert _decision(pruned.plan(p, commit=True)) == _decision(full.plan(p, commit=True))


def _sorted_quickbound(pod: Pod, info: Any, cands: list[Pod], tier: int, max_grace: int) -> tuple | None:
    """The quick bound the plain way, for the test below: the tier's pool of candidates (tier 1:
    those within the grace limit), its requests sorted largest first and summed; None where the
    whole pool cannot make room (`min_victims` of the pool)."""
    from bisect import bisect_left
    from itertools import accumulate

    from kresched.plan.choice import PRIORITY_OFFSET, min_victims, requests_share_short

    within = [p for p in cands if p.grace_seconds <= max_grace]
    pool = within if tier == 1 else cands
    if min_victims(pod, info, pool) is None:
        return None
    cpu = list(accumulate(sorted((p.requests.milli_cpu for p in pool), reverse=True)))
    memory = list(accumulate(sorted((p.requests.memory for p in pool), reverse=True)))
    alloc, req = info.node.allocatable, pod.requests
    k, shortened = 1, 0
    short = req.milli_cpu - (alloc.milli_cpu - info.requested_milli_cpu)
    if short > 0:
        k = max(k, bisect_left(cpu, short) + 1)
        shortened |= short > sum(p.requests.milli_cpu for p in within)
    short = req.memory - (alloc.memory - info.requested_memory)
    if short > 0:
        k = max(k, bisect_left(memory, short) + 1)
        shortened |= short > sum(p.requests.memory for p in within)
    if alloc.allowed_pods:
        over = len(info.pods) + 1 - alloc.allowed_pods
        k = max(k, over)
        shortened |= over > len(within)
    lowest = min(p.effective_priority for p in pool)
    latest = max(p.start_seconds for p in pool if p.effective_priority == lowest)
    return (0, shortened if tier > 1 else 0, lowest, k * (lowest + PRIORITY_OFFSET), k,
            -latest, requests_share_short(pod, info), 0, info.name)


@PROFILE
@given(clusters(), OPTIONS)
def test_the_quick_bound_from_a_nodes_suffix_sums_is_the_one_of_its_sorted_candidates(
        cluster: tuple[ClusterState, Pod], options: PlanOptions) -> None:
    """`EvictablePods.quick_all` (the node's evictable pods summed up once for all priorities) gives the
    bound the tier's candidates give sorted and summed up, and says None exactly where they cannot
    make room at all, for every priority and tier."""
    state, pending = cluster
    planner = Planner(state, options)
    for info in planner.work.snapshot.node_infos:
        for priority in (*PRIORITIES, 500, 2000):
            cands = planner.evictable.candidates(info, priority)
            if not cands:
                continue
            for tier in (1, 2, 3):
                assert planner.evictable.quick_all(pending, [(info, cands)], tier) == \
                    [_sorted_quickbound(pending, info, cands, tier, options.max_grace_seconds)]


@pytest.mark.parametrize("tier", [1, 2, 3])
def test_the_quick_bounds_of_a_long_list_asked_again_are_each_nodes_own_where_nodes_or_candidates_changed(
        tier: int) -> None:
    """`EvictablePods.quick_all` compares a long list with the last one of the same requests and tier,
    and looks again only where a node's NodeInfo or its candidates are other objects: a list with
    some NodeInfos replaced (a pod placed there) and some nodes' candidates for another priority
    gets, node by node, the bound each node asked alone gets."""
    rng = random.Random(tier)
    nodes = [make_node(f"n{i:03d}", cpu="8", memory="16Gi") for i in range(80)]
    running = [make_pod(f"r{i:03d}-{k}", node=f"n{i:03d}", cpu=str(rng.choice((1, 2, 3))), memory="1Gi",
                        priority=rng.choice((0, 10, 50)), grace=rng.choice((5, 60)))
               for i in range(80) for k in range(rng.randint(1, 3))]
    pending = make_pod("p", cpu="5", memory="2Gi", priority=100)
    planner = Planner(make_state(nodes, [*running, pending]), PlanOptions(max_grace_seconds=30))
    evictable = planner.evictable
    infos = list(planner.work.snapshot.node_infos)
    first = [(info, evictable.candidates(info, 100)) for info in infos]
    assert len(first) >= 64  # (a long list)
    evictable.quick_all(pending, first, tier)
    again = list(first)
    for j in range(0, len(infos), 7):  # a pod placed there: another NodeInfo
        info = infos[j].clone()
        info.add_pod(make_pod(f"placed-{j}", node=info.name, cpu="1", memory="1Gi", priority=0, grace=5))
        again[j] = (info, evictable.candidates(info, 100))
    for j in range(3, len(infos), 11):  # the same node, the candidates for a lower priority
        again[j] = (infos[j], evictable.candidates(infos[j], 10))
    assert any(again[j][1] != first[j][1] for j in range(3, len(infos), 11))
    for j in range(5, len(infos), 13):  # another NodeInfo (more requested) with the same list of candidates
        info = infos[j].clone()
        info.add_pod(make_pod(f"unevictable-{j}", node=info.name, cpu="2", memory="1Gi", priority=1000))
        evictable.candidates(info, 100)  # (ranked)
        again[j] = (info, first[j][1])
    want = [evictable.quick_all(pending, [pair], tier)[0] for pair in again]
    assert evictable.quick_all(pending, again, tier) == want
    assert want != evictable.quick_all(pending, first, tier)  # (the changes change bounds)


@PROFILE
@given(clusters(), OPTIONS, st.lists(st.integers(0, 40), max_size=6), st.sampled_from((None, *APPS)))
def test_a_tiers_eligible_pods_are_the_candidates_the_eviction_api_lets_go_as_budgets_are_spent(
        cluster: tuple[ClusterState, Pod], options: PlanOptions, spent: list[int], twice: str | None) -> None:
    """`EvictablePods.eligible` (each node's pods sorted once into those the PDBs never refuse and those
    that spend a budget) gives, for every priority and tier 1–2, the candidates whose eviction no
    PDB refuses now (`PdbLedger.would_violate`), in tier 1 only those within the grace limit —
    also after victims of earlier plans spent budgets (then only the spenders are looked at again),
    and with a second PDB over one app's pods (the eviction API refuses those)."""
    state, _ = cluster
    if twice is not None:
        state = ClusterState.build(state.nodes, state.pods, [*state.pdbs, make_pdb("again", selector={"app": twice},
                                                                                   disruptions_allowed=5)],
                                   state.priority_classes, state.namespaces)
    planner = Planner(state, options)
    ledger = planner.work.ledger
    running = [p for p in state.pods if p.node_name]
    for round_ in range(len(spent) + 1):
        if round_:
            ledger.commit([running[spent[round_ - 1] % len(running)]] if running else [])
        for info in planner.work.snapshot.node_infos:
            for priority in (*PRIORITIES, 500, 2000):
                cands = planner.evictable.candidates(info, priority)
                for tier in (1, 2):
                    want = [p for p in cands if not (tier == 1 and p.grace_seconds > options.max_grace_seconds)
                            and not ledger.would_violate(p)]
                    assert planner.evictable.eligible(info, cands, tier) == want
