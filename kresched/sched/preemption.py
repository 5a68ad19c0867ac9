"""The scheduler's DefaultPreemption, as far as kresched needs it (pkg/scheduler/framework/
plugins/defaultpreemption and framework/preemption).

Owns: who may preempt (`pod_eligible_to_preempt_others`), the victim order (`more_important`),
the scheduler's own PDB grouping (`filter_pods_with_pdb_violation`), the minimal victim set on one
node (`select_victims_on_node`, `SelectVictimsOnNode`), and the text the scheduler writes after
`preemption: ` (`preemption_message`). Pure.

Deliberate difference: `more_important` breaks priority ties by QoS class before start time, as
seed 001 ("Preemption order") specifies; upstream's `MoreImportantPod` uses start time only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter

from kresched.model.objects import Pod, PodDisruptionBudget
from kresched.model.selectors import label_selector_matches
from kresched.sched.framework import SUCCESS, Code, CycleState, FilterPlugin, Snapshot, Status
from kresched.sched.interpod_affinity_terms import AffinityTerm, required_terms
from kresched.sched.node_info import NodeInfo
from kresched.sched.node_resources_fit import fits_usage, rejection
from kresched.sched.runner import (
    NO_NODES_AVAILABLE,
    Diagnosis,
    add_pod,
    fit_error_message,
    remove_pods,
    run_filters,
    run_filters_with_nominated,
    take_back,
)

__all__ = [
    "DEFAULT_POST_FILTERS",
    "DRA_POSTFILTER_NOTE",
    "NOT_ELIGIBLE_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "NOT_HELPFUL",
    "NO_VICTIMS",
    "Candidate",
    "VictimSelection",
    "filter_pods_with_pdb_violation",
    "full_scheduler_message",
    "post_filter_error",
    "importance_key",
    "more_important",
    "pod_eligible_to_preempt_others",
    "potential_nodes",
    "removal_hazards",
    "preemption_message",
    "select_candidates",
    "select_victims",
    "select_victims_on_node",
    "select_victims_by_resources",
]

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
#: kube-scheduler ≥ 1.34 runs DynamicResources' PostFilter before DefaultPreemption; for a pod
#: without ResourceClaims it says this, and RunPostFilterPlugins joins the reasons with ", ".
DRA_POSTFILTER_NOTE = "no new claims to deallocate"
#: DynamicResources' PostFilter error when its PreFilter never ran (`fwk.ErrNotFound`'s text).
POST_FILTER_NOT_FOUND = "not found"

#: Sort key, most important first: higher priority, better QoS, earlier start (then the key);
#: `Pod.importance`, found once per pod.
importance_key: Callable[[Pod], tuple[int, int, str, str]] = attrgetter("importance")


def more_important(a: Pod, b: Pod) -> bool:
    return importance_key(a) < importance_key(b)


def pod_eligible_to_preempt_others(pod: Pod, snapshot: Snapshot, nominated_status: Status | None) -> tuple[bool, str]:
    """`PodEligibleToPreemptOthers`."""
    if pod.spec.preemption_policy == "Never":
        return False, NOT_ELIGIBLE_NEVER
    nom = pod.status.nominated_node_name
    if nom:
        if nominated_status is not None and nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        info = snapshot.by_name.get(nom)
        if info is not None:
            for p in info.pods:
                if p.priority < pod.priority and _terminating_by_preemption(p):
                    return False, NOT_ELIGIBLE_TERMINATING
    return True, ""


def _terminating_by_preemption(p: Pod) -> bool:
    if p.metadata.deletion_timestamp is None:
        return False
    c = p.condition("DisruptionTarget")
    return c is not None and c.status == "True" and c.reason == "PreemptionByScheduler"


def filter_pods_with_pdb_violation(pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
                                   ) -> tuple[list[Pod], list[Pod]]:
    """The scheduler's own grouping (`filterPodsWithPDBViolation`): budgets from
    `status.disruptionsAllowed` spent in the order given; an empty selector matches nothing;
    pods already in `status.disruptedPods` spend nothing. Stable."""
    allowed = [pdb.status.disruptions_allowed if pdb.status else 0 for pdb in pdbs]
    violating: list[Pod] = []
    ok: list[Pod] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace:
                    continue
                sel = pdb.spec.selector
                if sel is None or (not sel.match_labels and not sel.match_expressions):
                    continue
                if not label_selector_matches(sel, pod.labels):
                    continue
                if pdb.status is not None and pod.name in pdb.status.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else ok).append(pod)
    return violating, ok


@dataclass(frozen=True, slots=True)
class VictimSelection:
    """The result of `select_victims_on_node`: victims most important first, how many of them
    violate a PDB, and the status (Success, or why the pod cannot fit even with evictions)."""

    victims: tuple[Pod, ...]
    num_violating: int
    status: Status


def select_victims_on_node(
    plugins: Sequence[FilterPlugin],
    cycle: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    potential: Iterable[Pod],
    violating: Callable[[Sequence[Pod]], tuple[list[Pod], list[Pod]]],
    nominated: Sequence[Pod] = (),
) -> VictimSelection:
    """`SelectVictimsOnNode`: remove every potential victim, check the pod fits, then reprieve
    victims — PDB-violating ones first, each group from most to least important — keeping each
    one whose return still lets the pod fit. `cycle` and `node_info` are changed: pass clones.

    `violating` splits the ordered potential victims into (PDB-violating, non-violating).
    """
    victims_in = sorted(potential, key=importance_key)
    if not victims_in:
        return VictimSelection((), 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,)))
    remove_pods(plugins, cycle, pod, victims_in, node_info)
    st = run_filters_with_nominated(plugins, cycle, pod, node_info, nominated)
    if not st.is_success:
        return VictimSelection((), 0, st)
    bad, good = violating(victims_in)
    victims: list[Pod] = []
    num_violating = 0
    for group, counts in ((bad, True), (good, False)):
        for v in group:
            add_pod(plugins, cycle, pod, v, node_info)
            if run_filters_with_nominated(plugins, cycle, pod, node_info, nominated).is_success:
                continue
            take_back(plugins, cycle, pod, v, node_info)
            victims.append(v)
            num_violating += counts
    if bad and good:
        victims.sort(key=importance_key)
    return VictimSelection(tuple(victims), num_violating, SUCCESS)


def select_victims_by_resources(
    pod: Pod,
    node_info: NodeInfo,
    potential: Iterable[Pod],
    violating: Callable[[Sequence[Pod]], tuple[list[Pod], list[Pod]]],
    ordered: bool = False,
) -> VictimSelection:
    """`select_victims_on_node` for the common case where NodeResourcesFit is the only filter
    whose verdict depends on the pods on the node (every other pod-dependent plugin returned Skip
    at PreFilter, and no pod is nominated to the node): the same procedure in the same order,
    with the fit check done on running totals instead of on a cloned NodeInfo. Same result,
    a hundred times cheaper — planning on a 5,000-node cluster runs it thousands of times.
    `ordered`: `potential` is already most important first."""
    victims_in = list(potential) if ordered else sorted(potential, key=importance_key)
    if not victims_in:
        return VictimSelection((), 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,)))
    req = pod.requests
    alloc = node_info.node.allocatable
    n, cpu, mem, eph, scalar = _usage_without(node_info, victims_in)
    if not fits_usage(req, alloc, n, cpu, mem, eph, scalar):
        # Rare: build the real status (its reasons feed messages) the slow way.
        info = node_info.clone()
        for v in victims_in:
            info.remove_pod(v)
        return VictimSelection((), 0, rejection(req, info))
    bad, good = violating(victims_in)
    victims: list[Pod] = []
    num_violating = 0
    for group, counts in ((bad, True), (good, False)):
        for v in group:
            r = v.requests
            back = {k: scalar.get(k, 0) + x for k, x in r.scalar.items()}
            if fits_usage(req, alloc, n + 1, cpu + r.milli_cpu, mem + r.memory, eph + r.ephemeral_storage,
                          {**scalar, **back}):
                n += 1
                cpu += r.milli_cpu
                mem += r.memory
                eph += r.ephemeral_storage
                scalar.update(back)
                continue
            victims.append(v)
            num_violating += counts
    if bad and good:
        victims.sort(key=importance_key)
    return VictimSelection(tuple(victims), num_violating, SUCCESS)


def select_victims(
    plugins: Sequence[FilterPlugin],
    cycle: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    potential: Sequence[Pod],
    violating: Callable[[Sequence[Pod]], tuple[list[Pod], list[Pod]]],
    nominated: Sequence[Pod] = (),
    failed: Status | None = None,
) -> VictimSelection:
    """`select_victims_on_node` of `potential` (most important first) after PreFilter (`cycle`;
    `plugins` those after the node-static ones), on clones of `cycle` and `node_info` — or on running
    totals where that gives the same: nothing nominated to the node holds room, and NodeResourcesFit
    is the only filter whose verdict taking some of `potential` off changes (`_resources_decide`),
    but for DynamicResources, the last filter, which reads the node and the devices allocated when
    PreFilter ran (it has no RemovePod), so its verdict is the same whichever pods are taken off:
    where the pod fits with every one of them gone, that verdict is the answer where it fails.

    `failed`: the node's filter status for the pod with nothing taken off (nothing nominated
    there), if it was Unschedulable: where taking `potential` off leaves the pod failing in a way
    told without taking them off (`_removal_keeps`), that is the answer, found without a clone."""
    active = [pl for pl in plugins if pl.name not in cycle.skip]
    if failed is not None and potential and not nominated:
        known = _removal_keeps(active, cycle, pod, potential, node_info, failed)
        if known is not None:
            return VictimSelection((), 0, known)
    devices = active[-1:] if active and active[-1].name == "DynamicResources" else []
    if nominated or not _resources_decide(active[:len(active) - len(devices)], cycle, pod, potential, node_info):
        return select_victims_on_node(plugins, cycle.clone(), pod, node_info.clone(), potential, violating, nominated)
    sel = select_victims_by_resources(pod, node_info, potential, violating, ordered=True)
    if devices and sel.status.is_success:
        st = run_filters(devices, cycle, pod, node_info)
        if not st.is_success:
            return VictimSelection((), 0, st)
    return sel


def _removal_keeps(active: Sequence[FilterPlugin], cycle: CycleState, pod: Pod, potential: Sequence[Pod],
                   node_info: NodeInfo, failed: Status) -> Status | None:
    """The filters' status for the pod on `node_info` with `potential` taken off, where it can be
    told without taking them off (None where it cannot); `failed` (Unschedulable) is their status
    with nothing taken off. Every filter before the one that failed it only gains from removals
    (`_REMOVAL_MONOTONE`; not pod affinity, whose pods to be near may go), so it passes them again;
    then either that one reads nothing the removals change (`removal_changes_nothing`): it fails
    alike, `failed` is the answer; or it is NodeResourcesFit, whose verdict with them off the
    running totals tell (`fits_usage`, for a pod without extended resources, as its Filter reads
    them): where they make room, and the filters after it read nothing the removals change, the
    first of them that fails the pod now fails it alike then — its status is the answer."""
    if failed.code != Code.UNSCHEDULABLE:
        return None
    at = next((i for i, pl in enumerate(active) if pl.name == failed.plugin), None)
    if at is None or any(pl.name not in _REMOVAL_MONOTONE or pl.name == "InterPodAffinity" for pl in active[:at]):
        return None
    pl = active[at]
    keeps = getattr(pl, "removal_changes_nothing", None)
    if keeps is not None:
        return failed if keeps(cycle, potential, node_info) else None
    if pl.name != "NodeResourcesFit" or pod.requests.scalar or \
            not fits_usage(pod.requests, node_info.node.allocatable, *_usage_without(node_info, potential)):
        return None
    for after in active[at + 1:]:
        keeps = getattr(after, "removal_changes_nothing", None)
        if keeps is None or not keeps(cycle, potential, node_info):
            return None
        st = after.filter(cycle, pod, node_info)
        if st.code:
            return st.with_plugin(after.name) if st.code != Code.ERROR else None
    return None


def _resources_decide(plugins: Sequence[FilterPlugin], cycle: CycleState, pod: Pod, potential: Sequence[Pod],
                      node_info: NodeInfo) -> bool:
    """Whether NodeResourcesFit alone of `plugins` tells which of `potential` must go from
    `node_info`: it is one of them (a profile may disable it), and each other one reads nothing
    taking any of them off (or putting them back) changes (`removal_changes_nothing`) and passes the
    pod there now, so it passes it with any of them off."""
    fit = False
    for pl in plugins:
        if pl.name == "NodeResourcesFit":
            fit = True
            continue
        keeps = getattr(pl, "removal_changes_nothing", None)
        if keeps is None or not keeps(cycle, potential, node_info) or pl.filter(cycle, pod, node_info).code:
            return False
    return fit


def _usage_without(node_info: NodeInfo, pods: Sequence[Pod]) -> tuple[int, int, int, int, dict[str, int]]:
    """What `fits_usage` reads of `node_info` (its pod count and requests) with `pods` taken off."""
    n = len(node_info.pods) - len(pods)
    cpu = node_info.requested_milli_cpu
    mem = node_info.requested_memory
    eph = node_info.requested_ephemeral_storage
    scalar = dict(node_info.requested_scalar)
    for v in pods:
        r = v.requests
        cpu -= r.milli_cpu
        mem -= r.memory
        eph -= r.ephemeral_storage
        for k, x in r.scalar.items():
            scalar[k] = scalar.get(k, 0) - x
    return n, cpu, mem, eph, scalar


#: The filters under which taking pods off a node never fails a pod there that passed before: the
#: node-static ones (they read no pod on the node), those that count what the node's pods use
#: (resources, host ports, volumes, a ReadWriteOncePod volume's user), those whose removal changes
#: nothing (DynamicResources and VolumeBinding have no RemovePod), and PodTopologySpread (a
#: removal lowers its node's domain's count by as much as, or more than, the least-filled domain's,
#: so the skew never grows). InterPodAffinity too but for the pod's required pod affinity (the pods
#: it must be near may be the ones taken off); its anti-affinity only gains.
_REMOVAL_MONOTONE = frozenset({
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
    "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
    "DynamicResources", "InterPodAffinity",
})


def removal_hazards(pod: Pod, plugins: Sequence[FilterPlugin]) -> tuple[AffinityTerm, ...] | None:
    """What may fail `pod` on a node because more of its pods were taken off: None where a filter
    kresched does not know may; else the pod's required pod-affinity terms — taking off pods none of
    them matches never fails it where taking off fewer did not (empty: taking off any pods can
    only help). So where every pod a tier may evict, taken off, leaves no room, no smaller set does,
    but for pods these terms match (a later tier's eligible pods include an earlier one's:
    `plan.search.tier_order`)."""
    if not all(pl.name in _REMOVAL_MONOTONE for pl in plugins):
        return None
    if not any(pl.name == "InterPodAffinity" for pl in plugins):
        return ()
    return required_terms(pod)[0]


def potential_nodes(diag: Diagnosis, snapshot: Snapshot) -> list[NodeInfo]:
    """Nodes whose failure eviction might fix: status code Unschedulable (`NodesForStatusCode`)."""
    if diag.pre_filter_status is not None:
        if diag.pre_filter_status.code != Code.UNSCHEDULABLE:
            return []
        return list(snapshot.node_infos)
    return [snapshot.by_name[n] for n, st in diag.node_to_status.items() if st.code == Code.UNSCHEDULABLE]


def preemption_message(
    plugins: Sequence[FilterPlugin],
    pod: Pod,
    snapshot: Snapshot,
    diag: Diagnosis,
    cycle: CycleState,
    nominated: dict[str, list[Pod]] | None = None,
    known: Callable[[NodeInfo, list[Pod]], Status | None] | None = None,
) -> tuple[str | None, dict[str, Status]]:
    """What DefaultPreemption's PostFilter reports after `preemption: `, and each evaluated node's
    preemption status. None as message when the scheduler would find a candidate and preempt.

    Whether a node is a candidate does not depend on which victims the reprieve keeps (removing
    every lower-priority pod either lets the pod fit or not), so this checks that once per node.
    `known(node, its lower-priority pods)`: where the caller already filtered the node with those
    pods taken off (`select_victims_on_node`), the failure it found; None where it did not.
    """
    ok, msg = pod_eligible_to_preempt_others(pod, snapshot, diag.status_of(pod.status.nominated_node_name)
                                             if pod.status.nominated_node_name else None)
    if not ok:
        return msg, {}
    nominated = nominated or {}
    statuses: dict[str, Status] = {}
    priority = pod.priority
    for info in potential_nodes(diag, snapshot):
        # (`Pod.priority` inline: every pod of the cluster is read)
        lower = [p for p in info.pods if (p.spec.priority or 0) < priority]
        if not lower:
            statuses[info.name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))
            continue
        st = known(info, lower) if known is not None else None
        if st is None:
            work, state = info.clone(), cycle.clone()
            remove_pods(plugins, state, pod, lower, work)
            st = run_filters_with_nominated(plugins, state, pod, work, nominated.get(info.name, ()))
        if st.is_success:
            return None, statuses
        statuses[info.name] = st
    fit = Diagnosis(num_all_nodes=diag.num_all_nodes, node_to_status=statuses,
                    absent_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL,)))
    return fit_error_message(fit), statuses


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node DefaultPreemption's dry run found, with its victims (most important first)."""

    node: str
    victims: tuple[Pod, ...]
    num_violating: int


def select_candidates(
    plugins: Sequence[FilterPlugin],
    pod: Pod,
    snapshot: Snapshot,
    diag: Diagnosis,
    cycle: CycleState,
    pdbs: Sequence[PodDisruptionBudget],
    nominated: dict[str, list[Pod]] | None = None,
) -> tuple[Candidate, ...]:
    """What the scheduler's own DefaultPreemption would do for `pod` (it fits nowhere, `diag`): the
    candidates of its dry run (`SelectVictimsOnNode` on every node eviction could help, the victims
    every pod of lower priority, its own PDB split) and then `pickOneNodeForPreemption`'s choice —
    the best candidate and every one tied with it (upstream takes the first of a list whose order
    a random offset decides). Empty when it would not preempt. Every potential node is dry-run
    (upstream: a sample of at least 100, or 10 %, on large clusters)."""
    ok, _ = pod_eligible_to_preempt_others(pod, snapshot, diag.status_of(pod.status.nominated_node_name)
                                           if pod.status.nominated_node_name else None)
    if not ok:
        return ()
    nominated = nominated or {}
    found: list[Candidate] = []
    for info in potential_nodes(diag, snapshot):
        lower = [p for p in info.pods if p.priority < pod.priority]
        if not lower:
            continue
        sel = select_victims_on_node(plugins, cycle.clone(), pod, info.clone(), lower,
                                     lambda ps: filter_pods_with_pdb_violation(ps, pdbs), nominated.get(info.name, ()))
        if sel.status.is_success and sel.victims:
            found.append(Candidate(info.name, sel.victims, sel.num_violating))
    return pick_one_node_for_preemption(found)


#: `math.MaxInt32 + 1`, added to every victim's priority in `pickOneNodeForPreemption`'s sum.
_PRIORITY_OFFSET = 2**31


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> tuple[Candidate, ...]:
    """`pickOneNodeForPreemption`'s score functions, in order, each keeping the candidates at its
    best score: fewest PDB violations, lowest highest victim priority, lowest sum of priorities
    (each plus MaxInt32+1), fewest victims, the latest earliest start among the highest-priority
    victims. Returns the candidates still tied (upstream takes the first)."""
    def earliest_of_highest(c: Candidate) -> float:
        top = max(v.priority for v in c.victims)
        return min(v.start_seconds for v in c.victims if v.priority == top)

    scores: tuple[Callable[[Candidate], float], ...] = (
        lambda c: -c.num_violating,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + _PRIORITY_OFFSET for v in c.victims),
        lambda c: -len(c.victims),
        earliest_of_highest,
    )
    left = list(candidates)
    for score in scores:
        if len(left) <= 1:
            break
        best = max(score(c) for c in left)
        left = [c for c in left if score(c) == best]
    return tuple(left)


#: The default profile's PostFilter plugins, in order.
DEFAULT_POST_FILTERS = ("DynamicResources", "DefaultPreemption")


def post_filter_error(diag: Diagnosis, post_filters: Sequence[str] = DEFAULT_POST_FILTERS) -> str | None:
    """What the scheduler appends instead of the preemption part when PostFilter fails with an
    error: `not found`, when a PreFilter rejected the pod as UnschedulableAndUnresolvable (the
    PreFilter loop stops there, before DynamicResources' PreFilter — default_plugins.go puts
    DynamicResources just before DefaultPreemption — so its PostFilter finds no cycle state,
    returns an Error, and RunPostFilterPlugins stops: DefaultPreemption never runs). Recorded on a
    v1.36.2 control plane for VolumeBinding's and VolumeRestrictions' PreFilter rejections
    (`... pod has unbound immediate PersistentVolumeClaims. not found`,
    tests/sched/rig_volumes.json); NodeAffinity's and an empty intersection of PreFilter node sets
    take the same path. None otherwise, and for a profile without DynamicResources' PostFilter
    (`post_filters`)."""
    st = diag.pre_filter_status
    if "DynamicResources" not in post_filters:
        return None
    # DynamicResources writes its state before it looks at the claims: its own rejection leaves
    # its PostFilter something to read.
    if st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.plugin != "DynamicResources":
        return POST_FILTER_NOT_FOUND
    return None


def full_scheduler_message(message: str, preemption: str | None, post_filter: str | None = None,
                           post_filters: Sequence[str] = DEFAULT_POST_FILTERS,
                           dra_note: str = DRA_POSTFILTER_NOTE) -> str:
    """The PodScheduled condition's message as kube-scheduler 1.35/1.36 writes it.

    `FitError.Error()` appends the PostFilter message after a space, with no period of its own
    (older releases added one, hence their `..`). `RunPostFilterPlugins` joins the
    Unschedulable reasons of DynamicResources (first: default_plugins.go puts it before
    DefaultPreemption) and DefaultPreemption with `, `; DefaultPreemption prefixes its own with
    `preemption: `. When preemption finds a candidate it returns Success, the reasons gathered so
    far are dropped and nothing follows the filter part (`preemption` None). A cluster without
    nodes fails before filtering and runs no PostFilter. When PostFilter stops at an error
    (`post_filter`, see `post_filter_error`), that error's text follows instead.

    `post_filters`: the profile's PostFilter plugins, in order (the default profile's: those two).
    Without any, the scheduler runs none and nothing follows the filter part; without
    DefaultPreemption, no preemption part. `dra_note`: what DynamicResources' PostFilter says
    (`dynamic_resources.post_filter_note`; for a pod without claims, `no new claims to deallocate`).
    """
    if message == NO_NODES_AVAILABLE or not post_filters:
        return message
    if post_filter is not None:
        return f"{message} {post_filter}"
    reasons = []
    for name in post_filters:
        if name == "DynamicResources":
            reasons.append(dra_note)
        elif name == "DefaultPreemption":
            if preemption is None:
                return message  # it found a candidate: Success drops the reasons gathered so far
            reasons.append(f"preemption: {preemption}")
    return f"{message} {', '.join(reasons)}" if reasons else message
