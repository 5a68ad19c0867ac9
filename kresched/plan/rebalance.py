"""Controlled rescheduling (seed 003): which running pods to move, and where their replacements land.

Owns `plan_rebalance`. Three objectives, tried in this order in each round (the most urgent
first), each a rule that proposes a pod, and one simulation that decides whether the move helps:

1. **violations** — a constraint of the pod no longer holds on its node: required node affinity or
   nodeSelector, an untolerated NoSchedule/NoExecute taint, its required pod anti-affinity, or a
   DoNotSchedule spread constraint (the scheduler's own filters, asked on the node without the
   pod). An unschedulable (cordoned) node is not a violation: that is drain's business.
2. **preferences** — another node satisfies more of the pod's preferred node affinity, preferred
   pod (anti-)affinity or ScheduleAnyway spread: the raw scores of NodeAffinity and
   InterPodAffinity (higher is better) minus PodTopologySpread's (lower is better), by at least
   `preference_margin` points. A pod that could not gain that much on any node — an exact bound
   per plugin (`preference_bound`), no node scored — is not simulated (nor listed in `skipped`).
3. **utilisation** — the descheduler's LowNodeUtilization: request-utilisation per resource
   (cpu, memory, pods) against allocatable; a node is *underutilised* when every resource is below
   `thresholds` (and it is schedulable), *overutilised* when any is above `target_thresholds`.
   Nothing moves when no node is underutilised. Pods leave an overutilised node, least important
   first (priority, then QoS BestEffort < Burstable < Guaranteed, as the descheduler sorts them),
   while the node is still overutilised.

The simulation, for every proposed pod on the cluster as it will be (earlier moves applied: the
evicted pod removed, its replacement bound where it lands): its replacement (`replacement_of`) is
placed by `Placer` — the scheduler's filters, scores and tied candidates — and the move is kept only
when every tied candidate is the intended kind of node (not the pod's node; better by the margin;
underutilised), the destination does not end above `target_thresholds`, the next pass would not
move the replacement again (its objective re-run on the predicted result), one PDB unit is left
for it (`PdbLedger`, as the eviction API counts), and the limits per node, per namespace and in
total allow it. Every refused proposal is kept with its reason (`skipped`).

Rounds repeat until one proposes nothing, so that a second plan over the predicted result proposes
nothing either; a pod moves at most once per plan.

Never moved: critical, DaemonSet, mirror, terminating, finished or bare pods (nothing recreates
them), and pods with emptyDir unless `evict_local_storage`.

Deliberate differences from the descheduler: every move is simulated (the descheduler's
NodeFit only asks whether *some* node fits, not where the replacement lands — descheduler#1584);
the utilisation objective stops on a source when its pods would land anywhere but on an
underutilised node, instead of counting the low nodes' headroom; default thresholds are
cpu/memory/pods 20 % and targets 50 % (the descheduler has none); unschedulable nodes are never
destinations. Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.model.selectors import label_selector_matches, node_selector_term_matches
from kresched.model.specs import LabelSelector, PreferredSchedulingTerm
from kresched.plan.candidates import protected_reason
from kresched.plan.drain import pod_shape
from kresched.plan.lost import lost_nodes, without_lost
from kresched.plan.objectives import OBJECTIVES
from kresched.plan.pdb import PdbLedger
from kresched.plan.placement import Landing, Placer, bound_to, replacement_of
from kresched.plan.plans import RESERVATION_TAINT
from kresched.sched import interpod_affinity, node_affinity, pod_topology_spread, taint_toleration
from kresched.sched.framework import Code, CycleState, FilterPlugin, NodeInfo, Snapshot, Status
from kresched.sched.profile import Profile, Profiles
from kresched.sched.runner import FilterMemo, memo_of
from kresched.sched.static import StaticFilters

__all__ = [
    "OBJECTIVES",
    "RESOURCES",
    "LimitHit",
    "Move",
    "RebalanceOptions",
    "RebalancePlan",
    "Skip",
    "node_utilisation",
    "plan_rebalance",
    "validate_options",
]

RESOURCES = ("cpu", "memory", "pods")

#: preferences: how many pods of one shape (the replicas of a workload) with the same preference
#: bound are simulated and found not worth moving before the others are left alone, until a move
#: changes their namespace.
#: A budget, not a proof: replicas on other nodes may differ (see the README, "How rebalance decides").
SHAPE_TRIES = 2

#: Upper bound on rounds (each round after the first only runs when the previous one moved a pod).
MAX_ROUNDS = 10


@dataclass(frozen=True)
class RebalanceOptions:
    objectives: tuple[str, ...] = OBJECTIVES
    #: Request-% per resource below which (every resource) a node is underutilised.
    thresholds: dict[str, int] = field(default_factory=lambda: {"cpu": 20, "memory": 20, "pods": 20})
    #: Request-% per resource above which (any resource) a node is overutilised.
    target_thresholds: dict[str, int] = field(default_factory=lambda: {"cpu": 50, "memory": 50, "pods": 50})
    #: Preference points (raw score units) a destination must gain over the pod's node.
    preference_margin: int = 10
    evict_local_storage: bool = False
    max_moves: int | None = None
    max_moves_per_node: int | None = None
    max_moves_per_namespace: int | None = None
    #: The cluster's scheduler profiles: a replacement is placed by its pod's; a pod of a scheduler
    #: no profile names is never moved (where it would land is not simulated).
    profiles: Profiles = field(default_factory=Profiles.default, compare=False)
    #: Disruptions a pod's PodDisruptionBudget must still allow once the move has spent one (the
    #: buffer a conservative policy leaves; 0: the last one may be spent).
    budget_buffer: int = 0
    #: Only pods of this namespace move (`-n`); None: any namespace.
    namespace: str | None = None


def validate_options(opts: RebalanceOptions) -> list[str]:
    """Every problem with `opts`, as one-line messages (empty: valid)."""
    errors = []
    for o in opts.objectives:
        if o not in OBJECTIVES:
            errors.append(f"unknown objective {o!r} (one of {', '.join(OBJECTIVES)})")
    for name, table in (("--thresholds", opts.thresholds), ("--target-thresholds", opts.target_thresholds)):
        for r, v in table.items():
            if r not in RESOURCES:
                errors.append(f"{name}: unknown resource {r!r} (one of {', '.join(RESOURCES)})")
            elif not 0 <= v <= 100:
                errors.append(f"{name}: {r}={v} is not a percentage (0..100)")
    for r in RESOURCES:
        low, high = opts.thresholds.get(r, 100), opts.target_thresholds.get(r, 100)
        if low > high:
            errors.append(f"--thresholds {r}={low} is above --target-thresholds {r}={high}")
    for name, v in (("--max-moves", opts.max_moves), ("--max-moves-per-node", opts.max_moves_per_node),
                    ("--max-moves-per-namespace", opts.max_moves_per_namespace), ("--margin", opts.preference_margin)):
        if v is not None and v < 0:
            errors.append(f"{name} must not be negative")
    return errors


@dataclass(frozen=True)
class Move:
    pod: Pod
    source: str
    #: Where the replacement lands (the first of `candidates`).
    to: str
    candidates: tuple[str, ...]
    objective: str
    reason: str
    pdb: str | None = None
    #: The scheduler would score only a sample of the feasible nodes: `to` is the likely one.
    likely: bool = False
    #: The label selector that finds the replacement (`ClusterState.replica_selector`).
    replicas: str = ""


@dataclass(frozen=True)
class Skip:
    """A proposal the simulation refused, and why."""

    pod: Pod
    node: str
    objective: str
    reason: str


@dataclass(frozen=True)
class LimitHit:
    """A limit that stopped moves: `limit` is max-moves | max-moves-per-node | max-moves-per-namespace."""

    limit: str
    value: int
    scope: str | None = None


@dataclass(frozen=True)
class RebalancePlan:
    moves: tuple[Move, ...]
    skipped: tuple[Skip, ...]
    limits: tuple[LimitHit, ...]
    #: node → {"cpu": %, "memory": %, "pods": %} of requests against allocatable.
    before: dict[str, dict[str, int]]
    after: dict[str, dict[str, int]]
    #: What kresched could not simulate of the scheduler profiles that place the replacements.
    warnings: tuple[str, ...] = ()


# -- utilisation ----------------------------------------------------------------------------------

def _used(info: NodeInfo, r: str) -> int:
    return len(info.pods) if r == "pods" else info.requested(r)


def _allocatable(info: NodeInfo, r: str) -> int:
    a = info.node.allocatable
    return a.allowed_pods if r == "pods" else a.milli_cpu if r == "cpu" else a.memory


def node_utilisation(info: NodeInfo) -> dict[str, int]:
    """Request-% per resource, rounded down (100 when the node has none of it allocatable)."""
    out = {}
    for r in RESOURCES:
        cap = _allocatable(info, r)
        out[r] = _used(info, r) * 100 // cap if cap > 0 else 100
    return out


def _above(info: NodeInfo, r: str, pct: int) -> bool:
    """used/allocatable > pct %, exactly (no rounding)."""
    cap = _allocatable(info, r)
    return _used(info, r) * 100 > pct * cap if cap > 0 else True


def _below(info: NodeInfo, r: str, pct: int) -> bool:
    cap = _allocatable(info, r)
    return _used(info, r) * 100 < pct * cap if cap > 0 else False


def is_overutilised(info: NodeInfo, opts: RebalanceOptions) -> bool:
    return any(_above(info, r, opts.target_thresholds.get(r, 100)) for r in RESOURCES)


def is_underutilised(info: NodeInfo, opts: RebalanceOptions) -> bool:
    return not info.node.unschedulable and all(_below(info, r, opts.thresholds.get(r, 100)) for r in RESOURCES)


def _eviction_order(pod: Pod) -> tuple[int, int, str]:
    """The descheduler's order on a source node: lowest priority first, then BestEffort, Burstable,
    Guaranteed; the key breaks ties (kresched is deterministic)."""
    return (pod.effective_priority, {"BestEffort": 0, "Burstable": 1}.get(pod.qos, 2), pod.key)


# -- violations -----------------------------------------------------------------------------------

_RESERVATION = (RESERVATION_TAINT.key, RESERVATION_TAINT.value, RESERVATION_TAINT.effect)

_VIOLATION_NAMES = ("NodeAffinity", "TaintToleration", "InterPodAffinity", "PodTopologySpread")
_VIOLATION_PLUGINS: tuple[FilterPlugin, ...] = (
    node_affinity.NodeAffinity(), taint_toleration.TaintToleration(), interpod_affinity.InterPodAffinity(),
    pod_topology_spread.PodTopologySpread())


def violation_plugins(profile: Profile | None) -> tuple[FilterPlugin, ...]:
    """The filters whose verdict on a running pod can stop holding, as the pod's scheduler profile
    runs them (in its order, with its args: an added affinity, hard default spreading; a filter
    the profile disables is no violation); the default profile's without one."""
    if profile is None or profile.builtin:
        return _VIOLATION_PLUGINS
    return tuple(pl for pl in profile.filters if pl.name in _VIOLATION_NAMES)


def _may_violate(pod: Pod, info: NodeInfo, plugins: tuple[FilterPlugin, ...] = _VIOLATION_PLUGINS) -> bool:
    """Cheap pre-check: does the pod have anything the violation filters could reject? (A profile's
    added affinity or hard default spreading applies to every pod: no shortcut then.)"""
    if plugins is not _VIOLATION_PLUGINS and any(
            getattr(pl, "added_affinity", None) is not None or getattr(pl, "hard_defaults", False)
            for pl in plugins):
        return True
    spec = pod.spec
    aff = spec.affinity
    return bool(
        spec.node_selector
        or (aff is not None and aff.node_affinity is not None
            and aff.node_affinity.required_during_scheduling_ignored_during_execution is not None)
        or any(t.effect in ("NoSchedule", "NoExecute") for t in info.node.taints)
        or (aff is not None and aff.pod_anti_affinity is not None
            and aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution)
        or any(c.when_unsatisfiable == "DoNotSchedule" for c in spec.topology_spread_constraints)
    )


def _depends_on_other_pods(pod: Pod) -> bool:
    """Whether the pod has required pod affinity or anti-affinity, or DoNotSchedule spreading."""
    aff = pod.spec.affinity
    return bool(
        (aff is not None and aff.pod_affinity is not None
         and aff.pod_affinity.required_during_scheduling_ignored_during_execution)
        or (aff is not None and aff.pod_anti_affinity is not None
            and aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution)
        or any(c.when_unsatisfiable == "DoNotSchedule" for c in pod.spec.topology_spread_constraints))


def violation_of(pod: Pod, node: str, snapshot: Snapshot,
                 plugins: tuple[FilterPlugin, ...] = _VIOLATION_PLUGINS) -> str | None:
    """What no longer holds for `pod` on `node` (the node's NodeInfo in `snapshot` without the pod),
    as the filter's reason with its details, or None. `plugins`: `violation_plugins` of the pod's
    scheduler profile."""
    info = snapshot.by_name[node]
    taints = info.node.spec.taints
    own = [t for t in taints if (t.key, t.value, t.effect) == _RESERVATION]
    if own:
        # kresched's own reservation taint is temporary (a preemption in progress, or a leftover
        # `kresched untaint` removes): pods under it are not in violation.
        info = info.clone()
        info.node = msgspec.structs.replace(info.node, spec=msgspec.structs.replace(
            info.node.spec, taints=tuple(t for t in taints if t not in own)))
    if not _may_violate(pod, info, plugins):
        return None
    without = info.clone()
    present = any(p.key == pod.key for p in without.pods)
    if present:
        without.remove_pod(pod)
    # PreFilter on the cluster as it is, then the pod taken away as preemption does (the plugins'
    # `remove_pod`, which keeps their state equal to a fresh PreFilter without it); a node whose
    # taints were edited above needs a snapshot of its own.
    snap = snapshot.with_node_info(without) if own else snapshot
    cycle = CycleState()
    for pl in plugins:
        res = pl.pre_filter(cycle, pod, snap)
        st = res.status
        if st.code == Code.SKIP:
            continue
        if not st.is_success:
            return _describe(pl.name, st)
        if res.node_names is not None and node not in res.node_names:
            return f"{pl.name}: {node} is not among the nodes the pod's terms allow"
        if present and not own:
            pl.remove_pod(cycle, pod, pod, info)
        st = pl.filter(cycle, pod, without)
        if not st.is_success:
            return _describe(pl.name, st)
    return None


def _describe(plugin: str, st: Status) -> str:
    text = ", ".join(st.reasons) or plugin
    return f"{text} ({'; '.join(st.details)})" if st.details else text


# -- preferences ----------------------------------------------------------------------------------

_PREFERENCE_PLUGINS = ((node_affinity.NodeAffinity(), 1), (interpod_affinity.InterPodAffinity(), 1),
                       (pod_topology_spread.PodTopologySpread(), -1))


def has_preferences(pod: Pod) -> bool:
    aff = pod.spec.affinity
    return bool(
        (aff is not None and aff.node_affinity is not None
         and aff.node_affinity.preferred_during_scheduling_ignored_during_execution)
        or (aff is not None and aff.pod_affinity is not None
            and aff.pod_affinity.preferred_during_scheduling_ignored_during_execution)
        or (aff is not None and aff.pod_anti_affinity is not None
            and aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution)
        or any(c.when_unsatisfiable == "ScheduleAnyway" for c in pod.spec.topology_spread_constraints)
    )


def preference_points(pod: Pod, nodes: Sequence[str], snapshot: Snapshot) -> dict[str, int]:
    """Per node, how much of the preferences the pod declares it satisfies: the raw scores of
    NodeAffinity (preferred node terms) and InterPodAffinity (preferred pod (anti-)affinity) minus
    PodTopologySpread's (explicit ScheduleAnyway constraints: fewer matching pods is better). The
    system default spreading is the scheduler's preference, not the pod's: not counted."""
    infos = [snapshot.by_name[n] for n in nodes]
    points = dict.fromkeys(nodes, 0)
    aff = pod.spec.affinity
    declared = (
        bool(aff is not None and aff.node_affinity is not None
             and aff.node_affinity.preferred_during_scheduling_ignored_during_execution),
        _has_pod_preferences(pod),
        any(c.when_unsatisfiable == "ScheduleAnyway" for c in pod.spec.topology_spread_constraints),
    )
    for (pl, sign), wanted in zip(_PREFERENCE_PLUGINS, declared, strict=True):
        if not wanted or not hasattr(pl, "pre_score"):
            continue
        cycle = CycleState()
        st = pl.pre_score(cycle, pod, infos, snapshot)  # type: ignore[attr-defined]
        if st.code == Code.SKIP or not st.is_success:
            continue
        for info in infos:
            points[info.name] += sign * pl.score(cycle, pod, info)  # type: ignore[attr-defined]
    return points


def landing_points(pod: Pod, landing: Landing, nodes: Sequence[str], snapshot: Snapshot,
                   default_profile: bool = True) -> dict[str, int]:
    """`preference_points`, read from the raw scores the landing already computed when it scored
    every one of `nodes` (the same cycle, so the same numbers); computed afresh otherwise, and
    when another profile than the default scored it (its plugins may carry args — an added
    affinity's weights — or be disabled: the points are the pod's own preferences, measured as
    the default plugins measure them)."""
    by_node = {s.node: s for s in landing.scores}
    if not default_profile or not all(n in by_node for n in nodes):
        return preference_points(pod, nodes, snapshot)
    aff = pod.spec.affinity
    declared = {
        "NodeAffinity": bool(aff is not None and aff.node_affinity is not None
                             and aff.node_affinity.preferred_during_scheduling_ignored_during_execution),
        "InterPodAffinity": _has_pod_preferences(pod),
        "PodTopologySpread": any(c.when_unsatisfiable == "ScheduleAnyway"
                                 for c in pod.spec.topology_spread_constraints),
    }
    signs = {pl.name: sign for pl, sign in _PREFERENCE_PLUGINS}
    return {n: sum(signs[ps.plugin] * ps.raw for ps in by_node[n].plugins if declared.get(ps.plugin)) for n in nodes}


def _node_affinity_points(terms: tuple[PreferredSchedulingTerm, ...], node: NodeInfo) -> int:
    n = node.node
    return sum(t.weight for t in terms if node_selector_term_matches(t.preference, n.name, n.labels))


def _has_pod_preferences(pod: Pod) -> bool:
    aff = pod.spec.affinity
    return bool(
        (aff is not None and aff.pod_affinity is not None
         and aff.pod_affinity.preferred_during_scheduling_ignored_during_execution)
        or (aff is not None and aff.pod_anti_affinity is not None
            and aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution))


HOSTNAME = "kubernetes.io/hostname"


def _others_terms(snapshot: Snapshot) -> list[tuple[bool, str, LabelSelector | None]]:
    """Every distinct (is it affinity, topology key, selector) among the scored pod-affinity terms
    of the pods in the cluster (preferred affinity and anti-affinity, required affinity)."""
    seen: dict[bytes, tuple[bool, str, LabelSelector | None]] = {}
    for info in snapshot.node_infos:
        for p in info.pods_with_affinity:
            aff = p.spec.affinity
            if aff is None:
                continue
            terms: list[tuple[bool, object]] = []
            if aff.pod_affinity is not None:
                terms += [(True, t.pod_affinity_term)
                          for t in aff.pod_affinity.preferred_during_scheduling_ignored_during_execution]
                terms += [(True, t) for t in aff.pod_affinity.required_during_scheduling_ignored_during_execution]
            if aff.pod_anti_affinity is not None:
                terms += [(False, t.pod_affinity_term)
                          for t in aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution]
            for is_affinity, t in terms:
                key = msgspec.json.encode((is_affinity, t.topology_key, t.label_selector))  # type: ignore[attr-defined]
                if key not in seen:
                    seen[key] = (is_affinity, t.topology_key, t.label_selector)  # type: ignore[attr-defined]
    return list(seen.values())


def _only_own_hostname_anti_affinity(pod: Pod) -> bool:
    """The pod's preferred pod (anti-)affinity is only anti-affinity by hostname in its own
    namespace (the usual "spread my replicas over nodes")."""
    aff = pod.spec.affinity
    if aff is None or aff.pod_anti_affinity is None:
        return False
    if aff.pod_affinity is not None and aff.pod_affinity.preferred_during_scheduling_ignored_during_execution:
        return False
    terms = aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
    return bool(terms) and all(t.pod_affinity_term.topology_key == HOSTNAME
                               and t.pod_affinity_term.namespace_selector is None
                               and set(t.pod_affinity_term.namespaces) <= {pod.namespace} for t in terms)


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


#: Per objective that walks every pod: whether it may propose the pod at all (cheap, exact).
_PROPOSABLE = {
    "violations": _may_violate,
    "preferences": lambda pod, info: has_preferences(pod),
}


# -- the plan -------------------------------------------------------------------------------------

class _Planner:
    def __init__(self, state: ClusterState, opts: RebalanceOptions, prune: bool = True,
                 shape_tries: int | None = SHAPE_TRIES) -> None:
        """`prune=False` turns off the exact shortcuts — preference bounds, per-shape memos,
        violation verdicts kept across rounds — (tests prove they change no plan); `shape_tries`
        None turns off the per-shape budget, which is not exact."""
        self.state = state
        self.opts = opts
        self.prune = prune
        self.shape_tries = shape_tries
        #: Lost nodes take nothing (cordoned in the simulation) and give nothing: their evictions never complete.
        self.lost = lost_nodes(state)
        self.snap = without_lost(Snapshot.from_state(state), self.lost)
        #: Per scheduler profile: its placer and, per replacement shape, the filter verdicts (`_land`).
        self.placers: dict[str, tuple[Placer, dict[bytes, FilterMemo]]] = {}
        self.ledger = PdbLedger(state)
        self.moves: list[Move] = []
        self.skipped: list[Skip] = []
        self.limits: dict[tuple[str, str | None], LimitHit] = {}
        self.per_node: dict[str, int] = {}
        self.per_namespace: dict[str, int] = {}
        #: Per pod key: whether the pod may move at all (`_eligible`, but for `moved`), and its
        #: replacement's shape (`shape`): pods never change in a plan, only where they run.
        self.eligible: dict[str, bool] = {}
        self.shapes: dict[str, bytes] = {}
        #: (objective, node) → (its NodeInfo, the pods on it `movable` last found).
        self.movable_on: dict[tuple[str, str], tuple[NodeInfo, list[Pod]]] = {}
        #: Pod key → (the stamp it was checked at, `violation_of`): see `violations`.
        self.violation_seen: dict[str, tuple[int, str | None]] = {}
        #: Pods already moved (or their replacements): moved at most once per plan.
        self.moved: set[str] = set()
        #: Refused proposals by (objective, pod): not proposed again in a later round unless
        #: the cluster changed since (`version`).
        self.refused: dict[tuple[str, str], int] = {}
        self.version = 0
        #: Preferred node-affinity terms → the most points any node gives them (node labels never
        #: change in a plan): a pod already on such a node cannot gain on NodeAffinity.
        self.best_points: dict[bytes, int] = {}
        #: (pod shape, node) → the version at which such a pod there was found not worth moving.
        self.not_worth: dict[tuple[bytes, str], int] = {}
        #: (pod shape, preference bound) → (stamp, how many of such pods the simulation found not
        #: worth moving): after `SHAPE_TRIES` refusals, the others are not simulated until a move
        #: changes their namespace.
        self.shape_refusals: dict[tuple[bytes, int | None], tuple[int, int]] = {}
        #: The scored pod-affinity terms of every pod (`_others_terms`), built on first use: moves
        #: change where pods run, not which terms exist (a replacement has its original's).
        self.others_terms: list[tuple[bool, str, LabelSelector | None]] | None = None
        #: Pod key → (its node's NodeInfo, its namespace's stamp, `preference_bound`): a bound reads
        #: only the pod's node and, for spreading, its namespace's pods.
        self.bounds: dict[str, tuple[NodeInfo, int, int | None]] = {}
        #: Pod shape → (namespace stamp, its `ScoreGainBound`).
        self.spread_bounds: dict[bytes, tuple[int, pod_topology_spread.ScoreGainBound]] = {}
        #: Pod labels → whether some pod's term other than anti-affinity by hostname selects them.
        self.attracted: dict[bytes, bool] = {}
        #: Moves per namespace so far (the stamp of shapes whose preferences stay in their namespace).
        self.ns_version: dict[str, int] = {}

    # The pods that may move at all, on the node they run on.
    def movable(self, objective: str) -> Iterable[tuple[Pod, str]]:
        """The pods that may move at all and that `objective` may propose (a cheap test of the
        pod first: most pods have nothing for it), on the node they run on."""
        wanted = _PROPOSABLE[objective]
        if objective == "violations" and not self.opts.profiles.builtin:
            def wanted(p: Pod, info: NodeInfo) -> bool:
                return _may_violate(p, info, self.violation_plugins(p))
        for info in self.snap.node_infos:
            key = (objective, info.name)
            cached = self.movable_on.get(key)
            if cached is None or cached[0] is not info:
                cached = self.movable_on[key] = (info, [p for p in info.pods if wanted(p, info) and self._eligible(p)])
            for pod in cached[1]:
                if pod.key not in self.moved:
                    yield pod, info.name

    def _eligible(self, pod: Pod) -> bool:
        if pod.key in self.moved:
            return False
        ok = self.eligible.get(pod.key)
        if ok is None:
            ok = self.eligible[pod.key] = (
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

    def land(self, pod: Pod, node: str, snap: Snapshot | None = None) -> tuple[Landing, Snapshot, Pod]:
        """The replacement's landing with `pod` gone from `node` (on `snap`, default the plan's
        cluster as it is now), and that snapshot without it."""
        snap = self.snap if snap is None else snap
        info = snap.by_name[node].clone()
        info.remove_pod(pod)
        without = snap.with_node_info(info)
        replacement = replacement_of(pod)
        return self._land(replacement, without), without, replacement

    def _land(self, replacement: Pod, snap: Snapshot) -> Landing:
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

    def try_move(self, pod: Pod, node: str, objective: str, reason: str,
                 simulated: tuple[Landing, Snapshot, Pod] | None = None) -> bool:
        """Simulate moving `pod` off `node` for `objective` (unless `simulated` is that simulation,
        `land`'s answer on the cluster as it is, made after `precheck` let it through); apply it
        when it helps."""
        if simulated is None:
            why = self.precheck(pod, node, objective)
            if why is not None:
                return why != "" and self._refuse(pod, node, objective, why)
        check = self.ledger.check(pod)
        landing, without, replacement = simulated or self.land(pod, node)
        if landing.node is None:
            return self._refuse(pod, node, objective, f"its replacement would stay Pending: {landing.reason}")
        why_not = self._unacceptable(pod, node, objective, landing, without)
        if why_not is not None:
            return self._refuse(pod, node, objective, why_not)
        dest = without.by_name[landing.node].clone()
        placed = bound_to(replacement, dest.node)
        dest.add_pod(placed)
        after = without.with_node_info(dest)
        if objective != "violations" and "utilisation" in self.opts.objectives \
                and is_overutilised(dest, self.opts) and not is_overutilised(without.by_name[landing.node], self.opts):
            return self._refuse(pod, node, objective, f"it would push {landing.node} above the target thresholds")
        flap = self._would_move_again(placed, landing.node, objective, after)
        if flap is not None:
            return self._refuse(pod, node, objective, f"the next pass would move its replacement again: {flap}")
        self.ledger.commit([pod])
        self.snap = after
        self.version += 1
        self.ns_version[pod.namespace] = self.ns_version.get(pod.namespace, 0) + 1
        self.moved.update((pod.key, placed.key))
        self.per_node[node] = self.per_node.get(node, 0) + 1
        self.per_namespace[pod.namespace] = self.per_namespace.get(pod.namespace, 0) + 1
        self.moves.append(Move(pod, node, landing.node, landing.candidates, objective, reason, check.pdb,
                               landing.likely, self.state.replica_selector(pod)))
        return True

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
        buffer = self.opts.budget_buffer
        if buffer and check.spends and check.remaining is not None and check.remaining - 1 < buffer:
            return (f"its PodDisruptionBudget {check.pdb} allows {check.remaining} disruption(s): moving it would "
                    f"leave fewer than the {buffer} the policy keeps in reserve (budgetBuffer)")
        return None

    def _refuse(self, pod: Pod, node: str, objective: str, reason: str) -> bool:
        self.refused[(objective, pod.key)] = self.version
        self.skipped = [s for s in self.skipped if not (s.pod.key == pod.key and s.objective == objective)]
        self.skipped.append(Skip(pod, node, objective, reason))
        return False

    def _unacceptable(self, pod: Pod, node: str, objective: str, landing: Landing, without: Snapshot) -> str | None:
        cands = landing.candidates or ((landing.node,) if landing.node else ())
        if node in cands:
            return (f"its replacement would land back on {node}" if len(cands) == 1 else
                    f"{node} is among the nodes tied for its replacement ({', '.join(cands)})")
        if lost := [c for c in cands if c in self.lost]:
            return f"its replacement may land on {', '.join(lost)}, a lost node (its kubelet does not report)"
        if objective == "utilisation":
            bad = [c for c in cands if not is_underutilised(without.by_name[c], self.opts)]
            if bad:
                return (f"its replacement would land on {', '.join(bad)}, not underutilised"
                        + (f" (tied: {', '.join(cands)})" if len(cands) > 1 else ""))
        elif objective == "preferences":
            points = landing_points(replacement_of(pod), landing, [node, *cands], without, self.by_default(pod))
            short = [c for c in cands if points[c] - points[node] < self.opts.preference_margin]
            if short:
                c = short[0]
                return (f"{c} satisfies its preferences by {points[c] - points[node]} point(s) more than {node}, "
                        f"less than the margin {self.opts.preference_margin}"
                        + (f" (tied: {', '.join(cands)})" if len(cands) > 1 else ""))
        return None

    def _would_move_again(self, placed: Pod, node: str, objective: str, after: Snapshot) -> str | None:
        """Re-run `objective` for the replacement where it landed, on the predicted result."""
        if objective == "violations":
            return violation_of(placed, node, after, self.violation_plugins(placed))
        if objective == "preferences":
            return self._preference_gain(placed, node, after)
        return "its new node would be overutilised" if is_overutilised(after.by_name[node], self.opts) else None

    def _preference_gain(self, pod: Pod, node: str, snap: Snapshot) -> str | None:
        """Why `pod` should move for its preferences (the landing of its replacement gains the
        margin on every tied candidate), or None."""
        landing, without, replacement = self.land(pod, node, snap)
        if landing.node is None or node in landing.candidates:
            return None
        points = landing_points(replacement, landing, [node, *landing.candidates], without, self.by_default(pod))
        gain = min(points[c] - points[node] for c in landing.candidates)
        if gain >= self.opts.preference_margin:
            return f"{landing.node} satisfies its preferences by {gain} point(s) more than {node}"
        return None

    def violation_plugins(self, pod: Pod) -> tuple[FilterPlugin, ...]:
        """`violation_plugins` of the pod's scheduler profile."""
        return violation_plugins(self.opts.profiles.for_pod(pod))

    def by_default(self, pod: Pod) -> bool:
        """Whether the built-in default profile places the pod's replacement (its landing's raw
        scores are then the preference points' own)."""
        profile = self.opts.profiles.for_pod(pod)
        return profile is None or profile.builtin

    # -- the objectives ---------------------------------------------------------------------------
    def violations(self) -> int:
        made = 0
        for pod, node in list(self.movable("violations")):
            if pod.key in self.moved:
                continue
            # A pod's node-local constraints (node affinity, nodeSelector, taints) never change in
            # a plan, and no move puts a pod with required anti-affinity next to one it repels (the
            # scheduler's filter refuses it): only a pod with its own required pod (anti-)affinity
            # or DoNotSchedule spreading can be in violation after a move that was not before.
            # Those look at their own namespace's pods, unless a pod affinity term names others.
            stamp = (-1 if not _depends_on_other_pods(pod) else
                     self.version if _reaches_other_namespaces(pod, required=True) else
                     self.ns_version.get(pod.namespace, 0))
            seen = self.violation_seen.get(pod.key) if self.prune else None
            if seen is not None and seen[0] == stamp:
                why = seen[1]
            else:
                why = violation_of(pod, node, self.snap, self.violation_plugins(pod))
                self.violation_seen[pod.key] = (stamp, why)
            if why is not None and self.try_move(pod, node, "violations", f"no longer holds on {node}: {why}"):
                made += 1
        return made

    def preference_bound(self, pod: Pod, node: str) -> int | None:
        """At most how many preference points the pod could gain by moving, whatever node its
        replacement lands on (None: no cheap bound; the pod is simulated). The sum of one bound per
        plugin (`preference_points` is their sum): NodeAffinity's, InterPodAffinity's
        (`_pod_affinity_bound`) and PodTopologySpread's (`ScoreGainBound`)."""
        info = self.snap.by_name[node]
        stamp = self.ns_version.get(pod.namespace, 0)
        cached = self.bounds.get(pod.key)
        if cached is not None and cached[0] is info and cached[1] == stamp:
            return cached[2]
        ipa = self._pod_affinity_bound(pod, node) if _has_pod_preferences(pod) else 0
        bound = None if ipa is None else self._node_affinity_bound(pod, node) + ipa + self._spread_bound(pod, node)
        self.bounds[pod.key] = (info, stamp, bound)
        return bound

    def _node_affinity_bound(self, pod: Pod, node: str) -> int:
        """The best node's points minus the pod's node's (node labels never change in a plan)."""
        terms = node_affinity.preferred_terms(pod)
        if not terms:
            return 0
        key = msgspec.json.encode(terms)
        best = self.best_points.get(key)
        if best is None:
            best = self.best_points[key] = max((_node_affinity_points(terms, i) for i in self.snap.node_infos),
                                               default=0)
        return best - _node_affinity_points(terms, self.snap.by_name[node])

    def _spread_bound(self, pod: Pod, node: str) -> int:
        """`ScoreGainBound` for the pod's explicit ScheduleAnyway constraints, the pod gone from its
        node; one PreScore per pod shape until a move changes its namespace."""
        if not any(c.when_unsatisfiable == "ScheduleAnyway" for c in pod.spec.topology_spread_constraints):
            return 0
        shape = self.shape(pod)
        stamp = self.ns_version.get(pod.namespace, 0)
        cached = self.spread_bounds.get(shape)
        if cached is None or cached[0] != stamp:
            bound = pod_topology_spread.ScoreGainBound(replacement_of(pod), self.snap)
            cached = self.spread_bounds[shape] = (stamp, bound)
        return cached[1].gain(self.snap.by_name[node], pod)

    def _pod_affinity_bound(self, pod: Pod, node: str) -> int | None:
        """For a pod whose only preferred pod (anti-)affinity is anti-affinity by hostname in its own
        namespace (`_only_own_hostname_anti_affinity`), when no pod anywhere has a scored term that
        matches it other than anti-affinity by hostname: every node's InterPodAffinity raw score is
        at most 0 for it, so it gains at most what its own node takes away: the weights of its
        terms matching the other pods there, and of their preferred anti-affinity terms matching
        it. None for any other pod (its score depends on the other pods' places)."""
        if not _only_own_hostname_anti_affinity(pod):
            return None
        if self.others_terms is None:
            self.others_terms = _others_terms(self.snap)
        key = msgspec.json.encode(pod.labels)
        hit = self.attracted.get(key)
        if hit is None:
            hit = self.attracted[key] = any(
                (is_affinity or topology != HOSTNAME) and sel is not None and label_selector_matches(sel, pod.labels)
                for is_affinity, topology, sel in self.others_terms)
        if hit:
            return None
        info = self.snap.by_name[node]
        aff = pod.spec.affinity
        assert aff is not None
        assert aff.pod_anti_affinity is not None
        own = [(t.weight, t.pod_affinity_term.label_selector)
               for t in aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution]
        neighbours = self.snap.pods_by_namespace()[pod.namespace][node]  # the pod itself is there
        taken = sum(w for p in neighbours if p is not pod
                    for w, sel in own if sel is not None and label_selector_matches(sel, p.metadata.labels))
        for other in info.pods_with_affinity:
            anti = other.spec.affinity.pod_anti_affinity if other.spec.affinity is not None else None
            if other is not pod and anti is not None:
                taken += sum(t.weight for t in anti.preferred_during_scheduling_ignored_during_execution
                             if t.pod_affinity_term.label_selector is not None
                             and label_selector_matches(t.pod_affinity_term.label_selector, pod.labels))
        return max(0, taken)

    def preferences(self) -> int:
        made = 0
        for pod, node in list(self.movable("preferences")):
            if pod.key in self.moved:
                continue
            if self.refused.get(("preferences", pod.key)) == self.version:
                continue
            bound = self.preference_bound(pod, node) if self.prune else None
            if bound is not None and bound < max(1, self.opts.preference_margin):
                continue
            shape = self.shape(pod)
            twin = (shape, node)
            if self.not_worth.get(twin) == self.version:
                continue
            # Replicas that could gain alike (same shape, same bound) share a budget of tries.
            alike = (shape, bound)
            stamp = self.version if _reaches_other_namespaces(pod) else self.ns_version.get(pod.namespace, 0)
            tried = self.shape_refusals.get(alike)
            if self.shape_tries is not None and tried is not None and tried[0] == stamp \
                    and tried[1] >= self.shape_tries:
                continue
            made_before = len(self.moves)
            self._preference_move(pod, node)
            if len(self.moves) > made_before:
                made += 1
            else:
                self.not_worth[twin] = self.version
                n = tried[1] if tried is not None and tried[0] == stamp else 0
                self.shape_refusals[alike] = (stamp, n + 1)
        return made

    def _preference_move(self, pod: Pod, node: str) -> None:
        why = self.precheck(pod, node, "preferences")
        if why is not None:
            if why:
                self._refuse(pod, node, "preferences", why)
            return
        simulated = self.land(pod, node)
        landing, without, replacement = simulated
        if landing.node is None or node in landing.candidates:
            return
        points = landing_points(replacement, landing, [node, landing.node], without, self.by_default(pod))
        gain = points[landing.node] - points[node]
        if gain <= 0:
            return
        reason = (f"{landing.node} satisfies more of its preferences than {node} "
                  f"({points[landing.node]} vs {points[node]} point(s))")
        self.try_move(pod, node, "preferences", reason, simulated)

    def utilisation(self) -> int:
        opts = self.opts
        if not any(is_underutilised(i, opts) for i in self.snap.node_infos):
            return 0
        made = 0
        sources = [i.name for i in self.snap.node_infos if is_overutilised(i, opts)]
        for node in sources:
            # The shapes whose replacement was refused since the last move: their twins would be too.
            failed: dict[bytes, str] = {}
            seen_version = self.version
            pods = sorted((p for p in self.snap.by_name[node].pods if self._eligible(p)), key=_eviction_order)
            for pod in pods:
                info = self.snap.by_name[node]
                if not is_overutilised(info, opts):
                    break
                if self.version != seen_version:
                    failed.clear()
                    seen_version = self.version
                shape = self.shape(pod)
                if shape in failed:
                    self._refuse(pod, node, "utilisation", failed[shape])
                    continue
                over = ", ".join(f"{r} {v}%" for r, v in node_utilisation(info).items()
                                 if _above(info, r, opts.target_thresholds.get(r, 100)))
                if self.try_move(pod, node, "utilisation", f"{node} is above the target thresholds ({over})"):
                    made += 1
                else:
                    last = self.skipped[-1] if self.skipped and self.skipped[-1].pod.key == pod.key else None
                    if last is not None:
                        failed[shape] = last.reason
                    if self.limits and self.limit_reached(pod, node) is not None:
                        break
        return made


def plan_rebalance(state: ClusterState, opts: RebalanceOptions = RebalanceOptions()) -> RebalancePlan:
    return _plan(_Planner(state, opts))


def _plan(p: _Planner) -> RebalancePlan:
    opts = p.opts
    before = {i.name: node_utilisation(i) for i in p.snap.node_infos}
    for _ in range(MAX_ROUNDS):
        made = 0
        for objective in OBJECTIVES:
            if objective in opts.objectives:
                made += getattr(p, objective)()
        if made == 0:
            break
    after = {i.name: node_utilisation(i) for i in p.snap.node_infos}
    moved = {m.pod.key for m in p.moves}
    skipped = tuple(s for s in p.skipped if s.pod.key not in moved)
    profiles = opts.profiles
    warnings = tuple(dict.fromkeys(w for name in p.placers for w in profiles.warnings_for(profiles.by_name[name])
                                   if name in profiles.by_name))
    return RebalancePlan(tuple(p.moves), skipped, tuple(p.limits.values()), before, after, warnings)
