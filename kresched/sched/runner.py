"""Running the filter plugins the way kube-scheduler's framework does.

Owns: the plugin order (`default_plugins`, upstream's `getDefaultPlugins`), `run_pre_filter`,
`run_filters` (stop at the first failing plugin per node, `RunFilterPlugins`), the nominated-pods
pass (`RunFilterPluginsWithNominatedPods`), and `find_nodes_that_fit` with what it keeps across
pods (`FilterMemo`: verdicts, walks resumed, columns). What a search found and the FitError message
are `sched.diagnosis`' (re-exported here). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import compress, islice, repeat
from operator import is_, is_not
from typing import Any

import msgspec

from kresched.model.objects import Pod
from kresched.sched.diagnosis import (
    NO_NODE_AVAILABLE,
    NO_NODES_AVAILABLE,
    SCHEDULER_ERROR_NOTE,
    Diagnosis,
    fit_error_message,
    processed_nodes,
    reasons_histogram,
    scheduler_error,
)
from kresched.sched.framework import SUCCESS, Code, CycleState, FilterPlugin, Snapshot, Status, recent
from kresched.sched.node_info import NodeInfo
from kresched.sched.resume import WALKS_KEPT, Walked, affected_positions, kept_states, walk_key
from kresched.sched.score import num_feasible_nodes_to_find
from kresched.sched.static import NODE_STATIC_PLUGINS, StaticFilters, labels_read

__all__ = [
    "NO_NODES_AVAILABLE",
    "NO_NODE_AVAILABLE",
    "Diagnosis",
    "FilterMemo",
    "Verdicts",
    "default_plugins",
    "find_nodes_that_fit",
    "fit_error_message",
    "holding_room",
    "memo_of",
    "node_local",
    "processed_nodes",
    "reasons_histogram",
    "run_filters",
    "run_filters_with_nominated",
    "add_pod",
    "remove_pod",
    "remove_pods",
    "run_pre_filter",
    "scheduler_error",
    "take_back",
    "verdict_keys",
    "SCHEDULER_ERROR_NOTE",
]

#: CycleState key: the PreFilter plugins that narrowed the nodes to filter.
NARROWING_PLUGINS = "kresched/narrowing-prefilter-plugins"


def default_plugins() -> list[FilterPlugin]:
    """The filter plugins in kube-scheduler's default order (apis/config/v1/default_plugins.go).

    The volume plugins run only when the state holds PersistentVolumeClaims (their PreFilters
    return Skip otherwise); DynamicResources only for a pod with ResourceClaims.
    """
    from kresched.sched import (
        interpod_affinity,
        node_affinity,
        node_name,
        node_ports,
        node_resources_fit,
        node_unschedulable,
        node_volume_limits,
        pod_topology_spread,
        taint_toleration,
        volume_binding,
        volume_restrictions,
        volume_zone,
    )
    from kresched.sched.dynamic_resources import DynamicResources

    return [
        node_unschedulable.NodeUnschedulable(),
        node_name.NodeName(),
        taint_toleration.TaintToleration(),
        node_affinity.NodeAffinity(),
        node_ports.NodePorts(),
        node_resources_fit.NodeResourcesFit(),
        volume_restrictions.VolumeRestrictions(),
        node_volume_limits.NodeVolumeLimits(),
        volume_binding.VolumeBinding(),
        volume_zone.VolumeZone(),
        pod_topology_spread.PodTopologySpread(),
        interpod_affinity.InterPodAffinity(),
        DynamicResources(),
    ]


def run_pre_filter(plugins: Sequence[FilterPlugin], pod: Pod, snapshot: Snapshot
                   ) -> tuple[CycleState, Status, frozenset[str] | None]:
    """Run every PreFilter (`RunPreFilterPlugins`): the cycle state, the rejection (or SUCCESS),
    and the intersection of the node names PreFilters narrowed the search to.

    As upstream (since kubernetes#119770): an UnschedulableAndUnresolvable PreFilter stops the
    run at once; an Unschedulable one is remembered and the remaining PreFilters still run (their
    state is needed by preemption), the last such status being the one returned; an empty
    intersection of narrowed node sets rejects the pod on every node, naming the narrowing plugins
    in name order (`sets.List`).
    """
    cycle = CycleState()
    names: frozenset[str] | None = None
    narrowing: list[str] = []
    rejected: Status | None = None
    for pl in plugins:
        result = pl.pre_filter(cycle, pod, snapshot)
        st = result.status
        if st.code == Code.SKIP:
            cycle.skip.add(pl.name)
            continue
        if not st.is_success:
            st = st.with_plugin(pl.name)
            if st.code == Code.UNSCHEDULABLE:
                rejected = st
                continue
            return cycle, st, names
        if result.node_names is not None:
            names = result.node_names if names is None else names & result.node_names
            narrowing.append(pl.name)
            if not names:
                plugs = sorted(set(narrowing))
                msg = (f"node(s) didn't satisfy plugin {plugs[0]}" if len(plugs) == 1
                       else f"node(s) didn't satisfy plugin(s) [{' '.join(plugs)}] simultaneously")
                # Upstream's status here names no plugin (NewStatus, not SetPlugin).
                return cycle, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,)), names
    cycle.write(NARROWING_PLUGINS, tuple(narrowing))
    return cycle, rejected or SUCCESS, names


def run_filters(plugins: Sequence[FilterPlugin], cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
    """`RunFilterPlugins`: the first failing plugin's status, or SUCCESS."""
    skip = cycle.skip
    for pl in plugins:
        if pl.name in skip:
            continue
        st = pl.filter(cycle, pod, node_info)
        if not st.is_success:
            return st.with_plugin(pl.name)
    return SUCCESS


def add_pod(plugins: Sequence[FilterPlugin], cycle: CycleState, pod: Pod, pod_to_add: Pod, info: NodeInfo) -> None:
    """Put `pod_to_add` on `info` and tell the plugins (`RunPreFilterExtensionAddPod`), skipping
    those whose PreFilter returned Skip for `pod`."""
    info.add_pod(pod_to_add)
    for pl in plugins:
        if pl.name not in cycle.skip:
            pl.add_pod(cycle, pod, pod_to_add, info)


def remove_pod(plugins: Sequence[FilterPlugin], cycle: CycleState, pod: Pod, pod_to_remove: Pod,
               info: NodeInfo) -> None:
    """Take `pod_to_remove` off `info` and tell the plugins (`RunPreFilterExtensionRemovePod`)."""
    info.remove_pod(pod_to_remove)
    for pl in plugins:
        if pl.name not in cycle.skip:
            pl.remove_pod(cycle, pod, pod_to_remove, info)


def remove_pods(plugins: Sequence[FilterPlugin], cycle: CycleState, pod: Pod, pods_to_remove: Sequence[Pod],
                info: NodeInfo) -> None:
    """`remove_pod` of each of `pods_to_remove`, in order: the node's pods in one pass (no
    plugin's RemovePod reads them), then each plugin told of each pod (in one call where it takes
    them all, `remove_pods`: a plugin's RemovePod changes its own state alone)."""
    info.remove_pods(pods_to_remove)
    for pl in plugins:
        if pl.name in cycle.skip:
            continue
        many = getattr(pl, "remove_pods", None)
        if many is not None:
            many(cycle, pod, pods_to_remove, info)
            continue
        for p in pods_to_remove:
            pl.remove_pod(cycle, pod, p, info)


def take_back(plugins: Sequence[FilterPlugin], cycle: CycleState, pod: Pod, pod_added: Pod, info: NodeInfo) -> None:
    """`remove_pod` of the pod `add_pod` just put on `info` (`NodeInfo.take_back`)."""
    info.take_back(pod_added)
    for pl in plugins:
        if pl.name not in cycle.skip:
            pl.remove_pod(cycle, pod, pod_added, info)


def holding_room(pod: Pod, nominated: Iterable[Pod]) -> list[Pod]:
    """The pods of `nominated` (nominated to one node) that hold room there against `pod`: the
    others at least as important."""
    return [p for p in nominated if p.key != pod.key and p.priority >= pod.priority]


def run_filters_with_nominated(plugins: Sequence[FilterPlugin], cycle: CycleState, pod: Pod,
                               node_info: NodeInfo, nominated: Iterable[Pod] = ()) -> Status:
    """`RunFilterPluginsWithNominatedPods`: pods nominated to this node with priority ≥ the pod's
    count as if already running; the pod must fit both with and without them."""
    others = holding_room(pod, nominated)
    if others:
        info = node_info.clone()
        state = cycle.clone()
        for p in others:
            add_pod(plugins, state, pod, p, info)
        st = run_filters(plugins, state, pod, info)
        if not st.is_success:
            return st
    return run_filters(plugins, cycle, pod, node_info)


class Verdicts(dict[str, tuple[NodeInfo, Status]]):
    """The filter statuses of pods that read the same of themselves (`FilterMemo`'s key): node
    name → (NodeInfo, its status), and the last sampled search (`walk`), which the next one
    starts from."""

    __slots__ = ("walk",)

    def __init__(self) -> None:
        super().__init__()
        self.walk: _Walk | None = None


class FilterMemo:
    """`find_nodes_that_fit`'s memo across pods, kept by the caller (one per scheduler profile, or
    per any finer grouping of pods it likes): per *verdict key* — exactly what the filters that
    ran for a pod read of it (`verdict_keys`) — the statuses a later pod with the same key reuses
    while a node's NodeInfo is the same object (simulations replace a NodeInfo, never change it):
    `full` for pods whose every status is a function of the NodeInfo alone (`node_local`; kept by
    searches the next one does not resume from their walk),
    `fit` for NodeResourcesFit's (per the pod's requests: the pods of many shapes ask for the same
    resources), where the node-static filters pass and it is the first of the others, and `tail`
    for DynamicResources' part of theirs where its verdict on a node is a function of the NodeInfo
    (`DraCycle.node_local`; per the specs of the claims to allocate: its last filter, run where
    the others pass)."""

    __slots__ = ("columns", "fit", "full", "tail", "walks")

    def __init__(self) -> None:
        self.full: dict[bytes, Verdicts] = {}
        self.fit: dict[bytes, dict[str, tuple[NodeInfo, Status]]] = {}
        self.tail: dict[bytes, dict[str, tuple[NodeInfo, Status]]] = {}
        #: The searches of the others, where they can be resumed (`sched.resume`), per walk key.
        self.walks: dict[bytes, Walked] = {}
        #: The node-static filters' and NodeResourcesFit's verdicts in the search order, per
        #: (static signature, fit key): where searches from the first node start (`_Column`).
        self.columns: dict[tuple[bytes, bytes], _Column] = {}


def memo_of(memos: dict[bytes, FilterMemo], shape: bytes) -> FilterMemo:
    """The `FilterMemo` of pod shape `shape` in `memos`, added if missing."""
    memo = memos.get(shape)
    if memo is None:
        memo = memos[shape] = FilterMemo()
    return memo


def verdict_keys(pod: Pod, cycle: CycleState, active: Sequence[FilterPlugin], static: StaticFilters
                 ) -> tuple[bytes, bytes]:
    """(the full key, the fit key) of `pod` after PreFilter: its requests (all NodeResourcesFit
    reads of it: the fit key), and for the full key what the node-static filters read
    (`StaticFilters.signature`), the filters that did not return Skip, and the `verdict_key` of
    each whose state has one (node-local verdicts: DynamicResources' `DraCycle.verdict_key`, the
    specs of the claims to allocate; the volume filters' classes of new claims — not their names).
    Not its name, labels, namespace or priority: no filter whose statuses are kept reads them."""
    r = pod.requests
    fit = msgspec.json.encode((r.milli_cpu, r.memory, r.ephemeral_storage, r.scalar))
    keys = [(pl.name, key) for pl in active if (key := getattr(cycle.read(pl.name), "verdict_key", None)) is not None]
    full = msgspec.json.encode(([pl.name for pl in active], keys))
    return static.signature(pod) + fit + full, fit


class _Walk:
    """A sampled search of one pod shape (`find_nodes_that_fit(sample=True)` with a `FilterMemo`):
    the NodeInfos it visited, in the search order; what it found feasible (in that order) and
    each failed node's status; whether it stopped before the last node; and the positions it
    filtered with nominated pods holding room (looked at again whatever changed); and its
    Diagnosis."""

    __slots__ = ("diag", "facts", "failed", "feasible", "held", "infos", "limit", "sampled", "total")

    def __init__(self, facts: object, infos: list[NodeInfo], feasible: list[str], failed: dict[str, Status],
                 held: set[int], limit: int, total: int, sampled: bool, diag: Diagnosis) -> None:
        self.facts = facts
        self.infos = infos
        self.feasible = feasible
        self.failed = failed
        self.held = held
        self.limit = limit
        self.total = total
        self.sampled = sampled
        #: The search's Diagnosis, whose `node_to_status` is `failed` (and `feasible` the walk's, and
        #: neither is changed after): its `reason_counts`, once counted, count `failed` too.
        self.diag = diag


#: How many (static signature, fit key) pairs keep their `_Column`: each holds two lists as long as
#: the searches went (at most 80 KB at 5,000 nodes). A queue's workloads come back to a pair after
#: others (at 64, a third of the 5k-node GPU queue's columns were filled again); the bound keeps
#: memory flat however many shapes a queue has.
COLUMNS_KEPT = 256


class _Column:
    """What the filters that read the node alone (the node-static ones, then NodeResourcesFit) say
    of each node in the search order for pods that read the same of themselves: per position, the
    NodeInfo and its failing status (None: they pass), found up to where the searches went. A
    sampled search from the first node (`search`) filters again only the positions whose NodeInfo
    changed, runs the other filters only where these pass, and writes the statuses of the nodes
    failing here in bulk, in C: for most nodes of a full cluster these filters decide."""

    __slots__ = ("facts", "infos", "statuses")

    def __init__(self) -> None:
        self.facts: object = None
        self.infos: list[NodeInfo] = []
        self.statuses: list[Status | None] = []

    def search(self, facts: object, infos: list[NodeInfo], names: Sequence[str], limit: int,
               local: Callable[[NodeInfo], Status], beyond: Callable[[NodeInfo], Status], diag: Diagnosis) -> int:
        """Fill `diag` as the search loop over `infos` (named `names`) from the first node would,
        `local` being the status of the filters this column keeps and `beyond` that of the others
        where those pass, stopping at `limit` feasible nodes; -1. Or 0, `diag` untouched, where
        `local` meets an error (the search loop then reports it)."""
        if facts is not self.facts:
            self.facts, self.infos, self.statuses = facts, [], []
        seen, statuses, error = self.infos, self.statuses, Code.ERROR
        for j in _replaced_at(infos, seen):
            st = local(infos[j])
            if st.code == error:
                return 0
            seen[j], statuses[j] = infos[j], st if st.code else None
        n, done, pos = len(infos), len(seen), 0
        feasible: list[int] = []
        others: dict[int, Status] = {}  # positions where these filters pass and another fails
        cut = n
        while cut == n:
            if pos == done:
                if done == n:
                    break
                # (As many more as there are feasible nodes still to find, at least 16: few past its stop.)
                for info in islice(infos, done, min(n, done + max(limit - len(feasible), 16))):
                    st = local(info)
                    if st.code == error:
                        return 0
                    seen.append(info)
                    statuses.append(st if st.code else None)
                done = len(seen)
            for j in compress(range(pos, done), map(is_, islice(statuses, pos, done), repeat(None))):
                st = beyond(infos[j])
                if st.code:
                    others[j] = st
                else:
                    feasible.append(j)
                    if len(feasible) >= limit:
                        cut = j + 1
                        break
            pos = done
        final = statuses[:cut]
        for j, st in others.items():
            final[j] = st
        diag.feasible = [names[j] for j in feasible]
        diag.node_to_status = dict(compress(zip(names[:cut], final, strict=True), map(is_not, final, repeat(None))))
        if len(feasible) >= limit:
            diag.sampled = cut < n
        if any(st.code == error for st in others.values()):
            diag.filter_error = next(st for st in diag.node_to_status.values() if st.code == error)
        return -1


def node_local(plugins: Sequence[FilterPlugin], cycle: CycleState, static: frozenset[str] = NODE_STATIC_PLUGINS
               ) -> bool:
    """After PreFilter: NodeResourcesFit is the only filter whose verdict depends on the pods on a
    node (every other pod-dependent plugin returned Skip) but for DynamicResources where its verdict
    on a node is a function of that NodeInfo (`DraCycle.node_local`: every device is on one node's
    own slice, so only pods placed on or taken off that node change what is allocated there), and
    the node-static ones (`static`: those a `StaticFilters` runs first) come before it. Then a node's
    verdict for this pod is a function of that NodeInfo alone: its status may be kept while its
    NodeInfo is the same object. (The volume filters' node-local states serve resumed searches
    only, `sched.resume`: what the planner keeps per pod shape, `fit_shape`, does not read volumes.)"""
    for pl in plugins:
        name = pl.name
        if name in static or name == "NodeResourcesFit" or name in cycle.skip:
            continue
        if name == "DynamicResources" and getattr(cycle.read(name), "node_local", False):
            continue
        return False
    return True


def find_nodes_that_fit(plugins: Sequence[FilterPlugin], pod: Pod, snapshot: Snapshot,
                        nominated: dict[str, list[Pod]] | None = None,
                        static: StaticFilters | None = None,
                        memo: FilterMemo | None = None,
                        sample: bool = False, percentage: int = 0, start: int = 0) -> tuple[Diagnosis, CycleState]:
    """Filter the nodes (`findNodesThatFitPod`).

    By default every node, in name order: whether the pod fits, and every node's reason, do not
    depend on how far the scheduler searches. With `sample`, the way the scheduler searches before
    it scores: the pod's nominated node first (if it passes, it is the only feasible node); else
    the nodes in the zone-interleaved order of its node tree, stopping once
    `numFeasibleNodesToFind` feasible nodes are found (`percentage`: the profile's
    percentageOfNodesToScore, 0 adaptive; from the first node: kresched cannot know the
    scheduler's rotating start index, so `Diagnosis.sampled` says when it mattered). `start`: where
    the search starts in that order (the scheduler's `nextStartNodeIndex`, which a simulation of
    several pods advances by each search's `processed_nodes`); the search wraps around.

    With `static` (built from the same `plugins`), the node-static plugins' verdicts come from its
    memo; they are upstream's first four filters, so the statuses are the same either way.
    With `memo` (a `FilterMemo`, kept by the caller across pods) and `static`, a node's status is
    reused for a later pod with the same verdict key while it is the same NodeInfo object, when
    the pod is `node_local` and nothing is nominated there; and a sampled search starts where
    the last one with that key stopped (`_resume`) — such a search keeps its statuses in its walk
    alone, not per node."""
    diag = Diagnosis(num_all_nodes=len(snapshot.node_infos))
    cycle, st, names = run_pre_filter(plugins, pod, snapshot)
    if not st.is_success:
        diag.pre_filter_status = st
        diag.pre_filter_msg = ", ".join(st.reasons)
        return diag, cycle
    infos = snapshot.node_infos
    if sample:
        infos = snapshot.in_scheduling_order()
    if names is not None:
        infos = [i for i in infos if i.name in names]
        plugs = cycle.read(NARROWING_PLUGINS) or ()
        diag.absent_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                    (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugs))}]",))
    if sample and start and infos:
        k = start % len(infos)
        infos = [*infos[k:], *infos[:k]]
    nominated = nominated or {}
    limit = len(infos)
    if sample:
        limit = num_feasible_nodes_to_find(len(infos), percentage)
        nom = snapshot.by_name.get(pod.status.nominated_node_name) if pod.status.nominated_node_name else None
        if nom is not None and (names is None or nom.name in names):
            others = holding_room(pod, nominated.get(nom.name, ()))
            if run_filters_with_nominated(plugins, cycle, pod, nom, others).is_success:
                diag.feasible = [nom.name]
                diag.feasible_set = frozenset(diag.feasible)
                diag.nominated_fits = True
                return diag, cycle
    dynamic = [pl for pl in plugins if pl.name not in static.names] if static is not None else plugins
    active = [pl for pl in dynamic if pl.name not in cycle.skip]  # `run_filters` without the skipped
    # For a pod whose first filter after the node-static ones is NodeResourcesFit, the memo holds
    # what it says of a node for the pod's requests (`fitted`: all it reads of the pod is in its
    # fit key): where the node-static filters pass and it fails, that is the node's status; only
    # where it passes do the other filters (`rest`) run.
    verdicts: Verdicts | None = None
    fitted: dict[str, tuple[NodeInfo, Status]] | None = None
    tail: dict[str, tuple[NodeInfo, Status]] | None = None
    fit: list[FilterPlugin] = []
    rest: list[FilterPlugin] = []
    last: list[FilterPlugin] = []
    head = active  # the filters after the node-static ones, but a `last` whose verdicts `tail` keeps
    if memo is not None and static is not None:
        full_key, fit_key = verdict_keys(pod, cycle, active, static)
        dra = cycle.read("DynamicResources") if active and active[-1].name == "DynamicResources" else None
        if dra is not None and dra.node_local:
            tail = memo.tail.setdefault(dra.verdict_key, {})
            head, last = active[:-1], active[-1:]
        if node_local(plugins, cycle, static.names):
            verdicts = memo.full.get(full_key)
            if verdicts is None:
                verdicts = memo.full[full_key] = Verdicts()
        if active and active[0].name == "NodeResourcesFit":
            fitted = memo.fit.setdefault(fit_key, {})
            fit, rest = head[:1], head[1:]
    # Only nominated pods at least as important as this one hold room against it.
    held = {n: others for n, ps in nominated.items()
            if (others := holding_room(pod, ps))}
    memo_get = verdicts.get if verdicts is not None else None
    # A sampled search of a node-local shape from the first node is resumed from its walk by the
    # next one: what it finds of each node is in the walk, and the next search filters only nodes
    # the walk did not see or whose NodeInfo changed — kept per node too, its verdicts would never
    # be read (none is, over the 5k-node GPU queue's 614,000 nodes walked). Other searches keep them.
    walked = sample and names is None and verdicts is not None and not start
    keep = verdicts if not walked else None

    # A plugin's status object → it with the plugin named: plugins hand out the same rejection for
    # many nodes (kept per reasons, or per domain), named once here (the object is held, so its id
    # is not reused).
    named: dict[int, tuple[Status, Status]] = {}

    def first_failing(info: NodeInfo, plugs: list[FilterPlugin]) -> Status:
        for pl in plugs:
            st = pl.filter(cycle, pod, info)
            if st.code:  # not Code.SUCCESS
                if st.plugin == pl.name:
                    return st
                hit = named.get(id(st))
                if hit is None or hit[1].plugin != pl.name:
                    hit = named[id(st)] = (st, st.with_plugin(pl.name))
                return hit[1]
        return SUCCESS

    # Where every filter of `rest` reads of a node only some of its labels (`label_keys`), their
    # first failing status is one per combination of those labels' values: found once here.
    keys = labels_read(rest, "label_keys", cycle) if rest else None
    single = keys is not None and len(keys) == 1
    by_labels: dict[object, Status] = {}

    def ending(info: NodeInfo, plugs: list[FilterPlugin]) -> Status:
        """`first_failing` of `plugs` then `last`, whose status `tail` keeps."""
        if keys is not None and plugs is rest:
            labels = info.node.metadata.labels
            values: object = labels.get(keys[0]) if single else tuple(map(labels.get, keys))
            st = by_labels.get(values)
            if st is None:
                st = first_failing(info, plugs)
                if st.code != Code.ERROR:
                    by_labels[values] = st
        else:
            st = first_failing(info, plugs)
        if st.code or tail is None:
            return st
        hit = tail.get(info.name)
        if hit is not None and hit[0] is info:
            return hit[1]
        st = first_failing(info, last)
        if st.code != Code.ERROR:
            tail[info.name] = (info, st)
        return st

    # The node-static verdicts of the pod's signature, read here before asking `static` (a node
    # costs a lookup, not a call).
    fixed = static.memo_for(pod) if static is not None else {}
    error = Code.ERROR

    def local(info: NodeInfo) -> Status:
        """The first failing node-static filter's status (with `static`), else NodeResourcesFit's
        where `fitted` keeps its verdicts: what the filters that read the node alone say."""
        assert static is not None
        name = info.name
        hit = fixed.get(name)
        st = hit[1] if hit is not None and hit[0] is info.node else static.status(cycle, pod, info)
        if st.code or fitted is None:
            return st
        hit = fitted.get(name)
        if hit is not None and hit[0] is info:
            return hit[1]
        st = first_failing(info, fit)
        if st.code != error:
            fitted[name] = (info, st)
        return st

    def after_local(info: NodeInfo) -> Status:
        """The status of the filters after NodeResourcesFit, where `local` passes."""
        return ending(info, rest)

    def kept_last(info: NodeInfo) -> Status:
        """`after_local` where only `last` comes after NodeResourcesFit: its kept status read here."""
        hit = tail.get(info.name)  # type: ignore[union-attr]
        if hit is not None and hit[0] is info:
            return hit[1]
        return ending(info, rest)

    beyond = kept_last if tail is not None and not rest else after_local

    def status(info: NodeInfo, others: list[Pod] | None) -> Status:
        """The node's status, but for a memo hit (which the loop below reads itself)."""
        if others:
            return run_filters_with_nominated(plugins, cycle, pod, info, others)
        if static is None:
            return run_filters(plugins, cycle, pod, info)
        st = local(info)
        if not st.code:
            st = ending(info, head if fitted is None else rest)
        # An error names the pod's own objects (a claim, its request): never another pod's answer.
        if keep is not None and st.code != error:
            keep[info.name] = (info, st)
        return st

    # A pod whose filters read the cluster too: its shape's last search, and what changed since.
    kept: dict[str, Any] | None = None
    if verdicts is None and fitted is not None and sample and names is None and not start:
        kept = kept_states(plugins, cycle)
    start = 0
    then: _Walk | None = None  # the walk a search resumed from
    if walked:
        assert verdicts is not None
        then = verdicts.walk
        start = _resume(then, snapshot, infos, held, limit, status, diag)
    elif kept is not None:
        assert memo is not None
        slot = recent(memo.walks, walk_key(pod, full_key, cycle), WALKS_KEPT, Walked)
        also = affected_positions(plugins, slot.states, kept, snapshot) if slot.walk is not None else None
        if also is not None:
            # A node the walk found failing at a node-static filter or NodeResourcesFit (the
            # filters before any that reads the cluster) fails alike while it is the same NodeInfo.
            then = slot.walk
            start = _resume(then, snapshot, infos, held, limit, status, diag, also,
                            static.names | {"NodeResourcesFit"} if static is not None else frozenset(),
                            beyond if static is not None and fit else None)
    if start == 0 and fitted is not None and (walked or kept is not None) and not held \
            and len(order := snapshot.cluster.scheduling_order) == len(infos):
        # A search from the first node: the verdicts of the filters that read the node alone come
        # from a column kept per what they read of the pod (`_Column`), the others run where those pass.
        assert memo is not None
        assert static is not None
        column = recent(memo.columns, (static.signature(pod), fit_key), COLUMNS_KEPT, _Column)
        start = column.search(snapshot.facts, infos, order, limit, local, beyond, diag)
    if start >= 0:
        feasible, failed = diag.feasible, diag.node_to_status  # (`_resume` may have handed over its own)
        for info in islice(infos, start, None):  # the hot loop of every plan: a memo hit is two lookups
            name = info.name
            others = held.get(name) if held else None
            hit = memo_get(name) if memo_get is not None and not others else None
            st = hit[1] if hit is not None and hit[0] is info else status(info, others)
            if not st.code:  # Code.SUCCESS
                feasible.append(name)
                if len(feasible) >= limit:
                    diag.sampled = len(feasible) + len(failed) < len(infos)
                    break
            else:
                failed[name] = st
                if st.code == Code.ERROR and diag.filter_error is None:
                    diag.filter_error = st
    if not diag.feasible_set:
        diag.feasible_set = frozenset(diag.feasible)
    if walked or kept is not None:
        feasible, failed = diag.feasible, diag.node_to_status  # (a settled resume handed over the walk's)
        cut = len(feasible) + len(failed)
        positions = snapshot.cluster.order_positions
        # Positions are the search order's only when every node of the cluster is in the snapshot;
        # a search that met an error is not one to resume (the error is the pod's own). The walk
        # holds the Diagnosis' lists, not copies: neither is changed after (a caller only reads a
        # Diagnosis; `_resume` copies what it changes); the NodeInfos visited are its own list.
        # (`_resume` brought the walk's NodeInfos up to date: where it settled the search at the
        # walk's cut, they are the ones visited.)
        visited = then.infos if then is not None and start < 0 and len(then.infos) == cut else infos[:cut]
        walk = None if len(positions) != len(infos) or diag.filter_error is not None else _Walk(
            snapshot.facts, visited, feasible, failed,
            {j for n in held if (j := positions.get(n, cut)) < cut}, limit, len(infos), diag.sampled, diag)
        if verdicts is not None:
            verdicts.walk = walk
        elif kept is not None:
            slot.walk, slot.states = walk, kept
    return diag, cycle


def _resume(walk: _Walk | None, snapshot: Snapshot, infos: list[NodeInfo], held: dict[str, list[Pod]], limit: int,
            status: Callable[[NodeInfo, list[Pod] | None], Status], diag: Diagnosis,
            also: set[int] | frozenset[int] = frozenset(), local: frozenset[str] = frozenset(),
            beyond: Callable[[NodeInfo], Status] | None = None) -> int:
    """Start a sampled search where the last one of the pod's shape (`walk`, on this cluster)
    left off: only the nodes it visited whose NodeInfo is not the same object now, those
    filtered with nominated pods (then or now), and those at the positions `also` (where the
    filters' cluster-wide state changed, `sched.resume`) are filtered again — but those of `also`
    the walk found failing at a plugin of `local`, filters that come before any that reads the
    cluster and read the NodeInfo alone. Where only `also` brings a node back (the same NodeInfo,
    nothing nominated there then or now), the walk's pod passed every filter of `local` there, and
    `beyond` (when given) runs the filters after those. Fills `diag` and returns -1
    when that settles it; else the position to search on from (0: from the first node, when
    there is nothing to start from), with `diag` holding what comes before it."""
    positions = snapshot.cluster.order_positions
    if walk is None or walk.facts is not snapshot.facts or walk.total != len(infos) or walk.limit != limit \
            or len(positions) != len(infos):
        return 0
    visited = walk.infos
    cut = len(visited)
    again = _replaced_at(infos, visited)
    again |= walk.held
    brought: set[int] = set()  # the positions only `also` brings back (`beyond` filters them)
    if also:
        failed_then = walk.failed
        brought = {j for j in also if j < cut and (
            (st := failed_then.get(visited[j].name)) is None or st.plugin not in local)} - again
        again |= brought
    for name in held:
        j = positions.get(name, cut)
        if j < cut:
            again.add(j)
            brought.discard(j)
    later = brought if beyond is not None else frozenset()
    # The walk's statuses and their reason lists' counts (when the walk's were counted) are its
    # Diagnosis' too, which a caller may hold: copied before the first change (`changed`).
    failed = walk.failed
    counts = walk.diag.reason_counts
    changed = False
    lost: set[str] = set()  # feasible then, not now
    gained: list[str] = []  # the other way round
    errored = walk.diag.filter_error is not None
    for j in again:
        info = infos[j]
        name = info.name
        st = beyond(info) if j in later else status(info, held.get(name))  # type: ignore[misc]
        errored = errored or st.code == Code.ERROR
        visited[j] = info
        was = failed.get(name)
        if was is st or (was is None and not st.code):
            continue  # the same status object, or feasible then and now
        if not changed:
            # (`copy`, not `dict()`: a dict nodes were taken out of is copied whole, in C)
            failed, changed = failed.copy(), True
            counts = dict(counts) if counts is not None else None
        if counts is not None:
            if was is not None:
                if (n := counts[was.reasons] - 1) > 0:
                    counts[was.reasons] = n
                else:
                    del counts[was.reasons]
            if st.code:
                counts[st.reasons] = counts.get(st.reasons, 0) + 1
        if st.code:
            if was is None:
                lost.add(name)
            failed[name] = st
        else:
            del failed[name]
            gained.append(name)
    if not lost and not gained:
        # Nothing feasible changed: the walk's lists are this search's (never changed after: the
        # next search copies what it changes), and so is its set of feasible nodes.
        diag.feasible, diag.node_to_status = walk.feasible, failed
        if walk.diag.feasible is walk.feasible:
            diag.feasible_set = walk.diag.feasible_set
        diag.sampled = walk.sampled
        diag.reason_counts = counts
        return _errors_of(diag, errored, -1)
    # The visited nodes not failed now, in the search order: every visited node was feasible or
    # failed, so these are the walk's feasible ones but those lost, and those gained.
    ok = [n for n in walk.feasible if n not in lost] if lost else list(walk.feasible)
    if gained:
        ok += gained
        ok.sort(key=positions.__getitem__)
    # (`ok` and, something having changed, `failed` are this search's own copies: handed over.)
    if len(ok) < limit:
        diag.feasible, diag.node_to_status = ok, failed
        return _errors_of(diag, errored, cut)
    end = positions[ok[limit - 1]] + 1
    del ok[limit:]
    diag.feasible = ok
    diag.node_to_status = failed if end == cut else {n: st for n, st in failed.items() if positions[n] < end}
    diag.sampled = end < len(infos)
    return _errors_of(diag, errored, -1)


def _errors_of(diag: Diagnosis, errored: bool, ret: int) -> int:
    """`diag.filter_error` from its statuses when the walk or a node filtered again had one (rare); `ret`."""
    if errored:
        diag.filter_error = next((st for st in diag.node_to_status.values() if st.code == Code.ERROR), None)
    return ret


def _replaced_at(now: list[NodeInfo], then: list[NodeInfo]) -> set[int]:
    """The positions of `then` where `now` holds another NodeInfo. A slice at a time, each
    compared whole first (in C, by identity: NodeInfos have no `==`): a search resumes with a few
    nodes changed among thousands."""
    out: set[int] = set()
    cut = len(then)
    for start in range(0, cut, _SLICE):
        end = min(start + _SLICE, cut)
        a, b = now[start:end], then[start:end]
        if a != b:
            out.update(compress(range(start, end), map(is_not, a, b)))
    return out


_SLICE = 256
