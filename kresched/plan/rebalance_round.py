"""What every rebalance objective shares: the cluster as it will be, and the simulation of one move.

Owns `Round`: the plan's state across its rounds (the snapshot with earlier moves applied, the
PDB ledger, the moves, the refusals with their reasons, the limits) and `try_move`, which decides
whether a move an objective proposes helps (through `judge`, which changes nothing: it decides again
before the eviction, `kresched.plan.rebalance_rederive`). For the proposed pod, on the cluster as it
will be, its replacement (`replacement_of`) is placed by `Placer` — the pod's scheduler profile's
filters, scores and tied candidates — and the move is kept only when:

1. the replacement lands somewhere (not Pending) and the pod's node is not among the tied
   candidates;
2. every tied candidate is the kind of node the objective wants (`Objective.refusal`: better by the
   margin; a destination of the round with room up to the target);
3. no other objective refuses the destination (`Objective.guard`: the utilisation objective keeps a
   node that is not above the target thresholds from being pushed above them);
4. the next pass would not move the replacement again (`Objective.again`: the objective re-run
   for it where it landed, on the predicted result);
5. one unit of its PodDisruptionBudget is left (`PdbLedger`, as the eviction API counts; plus the
   policy's `budget_buffer`), its eviction does not stop its gang (a running gang's members past
   its budget, running − minCount, never move), and the limits per node, per namespace and in
   total allow it.

Every refused proposal is kept with its reason (`skipped`); a pod moves at most once per plan.
Never moved (`eligible`): critical, DaemonSet, mirror, terminating, finished or bare pods (nothing
recreates them), pods with emptyDir unless `evict_local_storage`, and pods of a scheduler no
profile names. The objectives (`kresched.plan.violations`, `preferences`, `utilisation`) hold
their own memos and receive the round: the round holds them, never the other way round (no
reference cycles). Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.candidates import protected_reason
from kresched.plan.drain import pod_shape
from kresched.plan.lost import lost_nodes, without_lost
from kresched.plan.pdb import PdbCheck, PdbLedger
from kresched.plan.placement import Landing, Placer, bound_to, replacement_of
from kresched.plan.rebalance_plans import LimitHit, Move, RebalanceOptions, Skip
from kresched.sched.dra.inuse import cluster_snapshot
from kresched.sched.framework import Snapshot
from kresched.sched.node_info import NodeInfo
from kresched.sched.runner import FilterMemo, memo_of
from kresched.sched.static import StaticFilters

__all__ = ["Objective", "Round", "Simulated", "gang_refusal"]

#: `Round.land`'s answer: the replacement's landing, the snapshot without the pod, the replacement.
Simulated = tuple[Landing, Snapshot, Pod]


class Objective(Protocol):
    """One rebalance objective: a rule that proposes pods (`run`, one pass over the cluster as it
    is, returning how many moves it made) and what it asks of a move's simulation."""

    name: str
    #: The round's destinations (utilisation's underutilised nodes; the others have none): kept on
    #: each move, so that a re-derivation judges its landing as the round did.
    destinations: frozenset[str]

    def run(self, r: Round) -> int: ...

    def stale(self, r: Round, pod: Pod, node: str) -> str | None:
        """Why this objective would no longer propose `pod` on `node`, on the cluster as it is now
        (a re-derivation before the eviction then drops the move), or None."""
        ...

    def refusal(self, r: Round, pod: Pod, node: str, landing: Landing, without: Snapshot) -> str | None:
        """Why the landing of the pod's replacement (every tied candidate, none of them `node`) is
        not the kind of node this objective moves the pod for, or None."""
        ...

    def guard(self, r: Round, objective: str, before: NodeInfo, after: NodeInfo) -> str | None:
        """Why this objective refuses a move of `objective` whose destination goes from `before` to
        `after`, or None."""
        ...

    def again(self, r: Round, placed: Pod, node: str, after: Snapshot) -> str | None:
        """Why this objective would move `placed` off `node` again on the predicted result, or None."""
        ...


class Round:
    def __init__(self, state: ClusterState, opts: RebalanceOptions, prune: bool = True) -> None:
        """`prune=False` turns off the exact shortcuts — per-shape filter memos here, the objectives'
        bounds and kept verdicts — (tests prove they change no plan)."""
        self.state = state
        self.opts = opts
        self.prune = prune
        #: Lost nodes take nothing (cordoned in the simulation) and give nothing: their evictions never complete.
        self.lost = lost_nodes(state)
        self.snap = without_lost(cluster_snapshot(state), self.lost)
        #: The objectives the plan runs, by name, in the order each round tries them.
        self.objectives: Mapping[str, Objective] = {}
        #: Per scheduler profile: its placer and, per replacement shape, the filter verdicts (`place`).
        self.placers: dict[str, tuple[Placer, dict[bytes, FilterMemo]]] = {}
        self.ledger = PdbLedger(state)
        self.moves: list[Move] = []
        self.skipped: list[Skip] = []
        self.limits: dict[tuple[str, str | None], LimitHit] = {}
        self.per_node: dict[str, int] = {}
        self.per_namespace: dict[str, int] = {}
        #: Per pod key: whether the pod may move at all (`eligible`, but for `moved`), and its
        #: replacement's shape (`shape`): pods never change in a plan, only where they run.
        self._eligible: dict[str, bool] = {}
        self.shapes: dict[str, bytes] = {}
        #: (objective, node) → (its NodeInfo, the pods on it `movable` last found).
        self.movable_on: dict[tuple[str, str], tuple[NodeInfo, list[Pod]]] = {}
        #: Pods already moved (or their replacements): moved at most once per plan.
        self.moved: set[str] = set()
        #: Refused proposals by (objective, pod): not proposed again in a later round unless
        #: the cluster changed since (`version`).
        self.refused: dict[tuple[str, str], int] = {}
        #: How many moves so far (the cluster's version), and per namespace (the stamp of what
        #: depends only on a namespace's pods).
        self.version = 0
        self.ns_version: dict[str, int] = {}

    def stamp(self, pod: Pod, required: bool = False) -> int:
        """The version of what the pod's preferred (`required`: required) pod (anti-)affinity and
        spreading read: its namespace's moves, or every move when a term selects pods of other
        namespaces. A verdict kept with it holds until it changes."""
        return self.version if _reaches_other_namespaces(pod, required) else self.ns_version.get(pod.namespace, 0)

    def movable(self, objective: str, wanted: Callable[[Pod, NodeInfo], bool]) -> Iterable[tuple[Pod, str]]:
        """The pods that may move at all and that `objective` may propose (`wanted`: a cheap test of
        the pod first, most pods have nothing for it), on the node they run on."""
        for info in self.snap.node_infos:
            key = (objective, info.name)
            cached = self.movable_on.get(key)
            if cached is None or cached[0] is not info:
                cached = self.movable_on[key] = (info, [p for p in info.pods if wanted(p, info) and self.eligible(p)])
            for pod in cached[1]:
                if pod.key not in self.moved:
                    yield pod, info.name

    def eligible(self, pod: Pod) -> bool:
        if pod.key in self.moved:
            return False
        ok = self._eligible.get(pod.key)
        if ok is None:
            ok = self._eligible[pod.key] = (
                (self.opts.namespace is None or pod.namespace == self.opts.namespace)
                and protected_reason(pod) is None
                and not (pod.is_bare or pod.is_finished or pod.status.phase != "Running")
                and pod.node_name not in self.lost
                and (self.opts.evict_local_storage or not pod.has_empty_dir)
                and self.opts.profiles.for_pod(pod) is not None)
        return ok

    def shape(self, pod: Pod) -> bytes:
        """`pod_shape` of the pod's replacement, computed once per pod."""
        shape = self.shapes.get(pod.key)
        if shape is None:
            shape = self.shapes[pod.key] = pod_shape(replacement_of(pod))
        return shape

    def limit_reached(self, pod: Pod, node: str) -> LimitHit | None:
        o = self.opts
        if o.max_moves is not None and len(self.moves) >= o.max_moves:
            return LimitHit("max-moves", o.max_moves)
        if o.max_moves_per_node is not None and self.per_node.get(node, 0) >= o.max_moves_per_node:
            return LimitHit("max-moves-per-node", o.max_moves_per_node, node)
        if o.max_moves_per_namespace is not None and \
                self.per_namespace.get(pod.namespace, 0) >= o.max_moves_per_namespace:
            return LimitHit("max-moves-per-namespace", o.max_moves_per_namespace, pod.namespace)
        return None

    def land(self, pod: Pod, node: str, snap: Snapshot | None = None) -> Simulated:
        """The replacement's landing with `pod` gone from `node` (on `snap`, default the plan's
        cluster as it is now), and that snapshot without it."""
        snap = self.snap if snap is None else snap
        info = snap.by_name[node].clone()
        info.remove_pod(pod)
        without = snap.with_node_info(info)
        replacement = replacement_of(pod)
        return self.place(replacement, without), without, replacement

    def place(self, replacement: Pod, snap: Snapshot) -> Landing:
        """`Placer.land`, by the replacement's scheduler profile, with the filter verdicts of its
        shape (replicas share them: each simulation filters only the nodes that changed since the
        last)."""
        profile = self.opts.profiles.for_pod(replacement)
        assert profile is not None, "a pod of a scheduler no profile names is never proposed"
        hit = self.placers.get(profile.name)
        if hit is None:
            hit = self.placers[profile.name] = (Placer.of(profile, StaticFilters(profile.filters), self.prune), {})
        placer, memos = hit
        replacement = profile.planning_pod(replacement)
        memo = memo_of(memos, pod_shape(replacement)) if self.prune else None
        return placer.land(replacement, snap, None, memo)

    def try_move(self, pod: Pod, node: str, objective: str, reason: str, simulated: Simulated | None = None) -> bool:
        """Simulate moving `pod` off `node` for `objective` (unless `simulated` is that simulation,
        `land`'s answer on the cluster as it is, made after `precheck` let it through); apply it
        when it helps (the rules of the module's docstring, in their order)."""
        if simulated is None:
            why = self.precheck(pod, node, objective)
            if why is not None:
                return why != "" and self.refuse(pod, node, objective, why)
        check = self.ledger.check(pod)
        simulated = simulated or self.land(pod, node)
        landing = simulated[0]
        why, after, placed = self.judge(pod, node, objective, simulated)
        if why is not None:
            return self.refuse(pod, node, objective, why)
        assert after is not None
        assert placed is not None
        assert landing.node is not None
        self.ledger.commit([pod])
        self.snap = after
        self.version += 1
        self.ns_version[pod.namespace] = self.ns_version.get(pod.namespace, 0) + 1
        self.moved.update((pod.key, placed.key))
        self.per_node[node] = self.per_node.get(node, 0) + 1
        self.per_namespace[pod.namespace] = self.per_namespace.get(pod.namespace, 0) + 1
        self.moves.append(Move(pod, node, landing.node, landing.candidates, objective, reason, check.pdb,
                               landing.likely, self.state.replica_selector(pod),
                               self.objectives[objective].destinations))
        return True

    def judge(self, pod: Pod, node: str, objective: str, simulated: Simulated,
              dest: str | None = None) -> tuple[str | None, Snapshot | None, Pod | None]:
        """Whether moving `pod` off `node` for `objective` helps, by rules 1-4 of the module's
        docstring (the PDB and the limits are `precheck`'s): (why not, or None; the cluster after
        the move; the replacement as placed). `simulated`: `land`'s answer; `dest`: the tied
        candidate the replacement takes (default the landing's node). Changes nothing."""
        landing, without, replacement = simulated
        if landing.node is None:
            return f"its replacement would stay Pending: {landing.reason}", None, None
        cands = landing.candidates or (landing.node,)
        if node in cands:
            return (f"its replacement would land back on {node}" if len(cands) == 1
                    else f"{node} is among the nodes tied for its replacement ({', '.join(cands)})"), None, None
        if lost := [c for c in cands if c in self.lost]:
            return (f"its replacement may land on {', '.join(lost)}, a lost node (its kubelet does not report)",
                    None, None)
        why_not = self.objectives[objective].refusal(self, pod, node, landing, without)
        if why_not is not None:
            return why_not, None, None
        to = dest or landing.node
        dest_info = without.by_name[to].clone()
        placed = bound_to(replacement, dest_info.node)
        dest_info.add_pod(placed)
        for other in self.objectives.values():
            why_not = other.guard(self, objective, without.by_name[to], dest_info)
            if why_not is not None:
                return why_not, None, None
        after = without.with_node_info(dest_info)
        flap = self.objectives[objective].again(self, placed, to, after)
        if flap is not None:
            return f"the next pass would move its replacement again: {flap}", None, None
        return None, after, placed

    def precheck(self, pod: Pod, node: str, objective: str) -> str | None:
        """What stops moving `pod` before any simulation: "" when it was refused since the cluster
        last changed or a limit is reached (recorded in `limits`), the PDB's refusal, or None."""
        if self.refused.get((objective, pod.key)) == self.version:
            return ""
        hit = self.limit_reached(pod, node)
        if hit is not None:
            self.limits[(hit.limit, hit.scope)] = hit
            return ""
        check = self.ledger.check(pod)
        if not check.allowed:
            return check.reason or "its PodDisruptionBudget refuses it"
        if check.stops_gang:
            return gang_refusal(check)
        buffer = self.opts.budget_buffer
        if buffer and check.spends and check.remaining is not None and check.remaining - 1 < buffer:
            return (f"its PodDisruptionBudget {check.pdb} allows {check.remaining} disruption(s): moving it would "
                    f"leave fewer than the {buffer} the policy keeps in reserve (budgetBuffer)")
        return None

    def refuse(self, pod: Pod, node: str, objective: str, reason: str) -> bool:
        """Record why the proposal was refused (the last reason per pod and objective); False."""
        self.refused[(objective, pod.key)] = self.version
        self.skipped = [s for s in self.skipped if not (s.pod.key == pod.key and s.objective == objective)]
        self.skipped.append(Skip(pod, node, objective, reason))
        return False


def gang_refusal(check: PdbCheck) -> str:
    """Why a move is refused whose eviction stops the pod's running gang (`check.stops_gang`)."""
    return (f"moving it stops its gang {check.gang} ({check.gang_running} running, minCount "
            f"{check.gang_min_count}: a gang runs all or nothing)")


def _reaches_other_namespaces(pod: Pod, required: bool = False) -> bool:
    """Whether a preferred (`required`: required) pod (anti-)affinity term of the pod selects pods
    of other namespaces."""
    aff = pod.spec.affinity
    if aff is None:
        return False
    for group in (aff.pod_affinity, aff.pod_anti_affinity):
        if group is None:
            continue
        terms = (group.required_during_scheduling_ignored_during_execution if required else
                 [t.pod_affinity_term for t in group.preferred_during_scheduling_ignored_during_execution])
        for term in terms:
            if term.namespace_selector is not None or any(ns != pod.namespace for ns in term.namespaces):
                return True
    return False
