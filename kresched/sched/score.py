"""Running the score plugins the way kube-scheduler's framework does, and choosing the node.

Owns: the score plugins of the v1.36 default profile with their default weights
(`default_score_plugins`, apis/config/v1/default_plugins.go), `prioritize_nodes` (`RunPreScorePlugins`
then `RunScorePlugins`: Score per node, NormalizeScore per plugin, times the plugin's weight, summed),
`select_host` (the highest total; among nodes that share it the scheduler takes the first it
found, an order its parallel filters can shuffle, so kresched names all of them) and
`num_feasible_nodes_to_find` (how many feasible nodes the scheduler
looks for before it stops filtering; schedule_one.go). Pure.

VolumeBinding's score is left out on purpose: it scores only with the StorageCapacityScoring feature
gate (alpha, off by default in v1.36), and a plugin that scores every node 0 changes no choice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import add, is_not, mul
from typing import Any

import msgspec

from kresched.model.objects import Pod
from kresched.sched.framework import (
    MAX_NODE_SCORE,
    NODE_LABELS,
    Code,
    CycleState,
    NodeLabels,
    ScorePlugin,
    Snapshot,
    recent,
)
from kresched.sched.node_info import NodeInfo

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "NodeScore",
    "PluginScore",
    "ScoreMemo",
    "ScoreMemos",
    "ScoreTable",
    "Selection",
    "default_score_plugins",
    "num_feasible_nodes_to_find",
    "prioritize_nodes",
    "score_nodes",
    "score_shape",
    "select_host",
]

#: schedule_one.go: below this many nodes every node is filtered; never fewer are looked for.
MIN_FEASIBLE_NODES_TO_FIND = 100
#: schedule_one.go: the adaptive percentage never goes below 5 %.
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def default_score_plugins() -> list[tuple[ScorePlugin, int]]:
    """The default profile's score plugins, in its order, with their default weights."""
    from kresched.sched import (
        image_locality,
        interpod_affinity,
        node_affinity,
        node_resources_balanced_allocation,
        node_resources_fit,
        pod_topology_spread,
        taint_toleration,
    )
    from kresched.sched.dynamic_resources import DynamicResources

    return [
        (taint_toleration.TaintToleration(), 3),
        (node_affinity.NodeAffinity(), 2),
        (node_resources_fit.NodeResourcesFit(), 1),
        (pod_topology_spread.PodTopologySpread(), 2),
        (interpod_affinity.InterPodAffinity(), 2),
        (DynamicResources(), 2),
        (node_resources_balanced_allocation.NodeResourcesBalancedAllocation(), 1),
        (image_locality.ImageLocality(), 1),
    ]


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """`numFeasibleNodesToFind`: all nodes below 100; else `percentage` of them (0: adaptive,
    50 % − 1 % per 125 nodes, at least 5 %), and never fewer than 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(frozen=True, slots=True)
class PluginScore:
    plugin: str
    #: What Score returned.
    raw: int
    #: After NormalizeScore (0..100).
    normalized: int
    #: normalized × the plugin's weight: what adds up to the node's total.
    weighted: int


@dataclass(frozen=True, slots=True)
class NodeScore:
    node: str
    plugins: tuple[PluginScore, ...]
    total: int


class ScoreTable:
    """What `prioritize_nodes` found, per node in the order scored: the total, and the columns
    behind it (per plugin, raw and normalized scores and the weight). The `NodeScore` rows are
    built on first use: choosing a node needs only the totals."""

    __slots__ = ("_columns", "_rows", "names", "totals")

    def __init__(self, names: list[str], totals: list[int],
                 columns: list[tuple[str, int, Sequence[int], list[int]]]) -> None:
        self.names = names
        self.totals = totals
        self._columns = columns
        self._rows: tuple[NodeScore, ...] | None = None

    def with_extenders(self, columns: Sequence[tuple[str, int, Sequence[int]]]) -> ScoreTable:
        """This table with the scheduler's extenders' scores added (`prioritizeNodes`): a column
        per extender (named by its URL prefix; its weight; each node's score as answered), whose
        normalized score is the answer × 10 (`MaxNodeScore / MaxExtenderPriority`)."""
        if not columns:
            return self
        totals = list(self.totals)
        cols = list(self._columns)
        for name, weight, raw in columns:
            normalized = [r * (MAX_NODE_SCORE // 10) for r in raw]
            totals = [t + n * weight for t, n in zip(totals, normalized, strict=True)]
            cols.append((name, weight, list(raw), normalized))
        return ScoreTable(self.names, totals, cols)

    def rows(self) -> tuple[NodeScore, ...]:
        if self._rows is None:
            # Equal PluginScores (most nodes share a few values per plugin) are one object.
            interned: dict[tuple[str, int, int, int], PluginScore] = {}
            per_plugin: list[list[PluginScore]] = []
            for name, weight, raw, norm in self._columns:
                column = []
                for r, n in zip(raw, norm, strict=True):
                    key = (name, r, n, n * weight)
                    ps = interned.get(key)
                    if ps is None:
                        ps = interned[key] = PluginScore(*key)
                    column.append(ps)
                per_plugin.append(column)
            rows = zip(*per_plugin, strict=True) if per_plugin else ((),) * len(self.names)
            self._rows = tuple(NodeScore(n, tuple(row), t)
                               for n, row, t in zip(self.names, rows, self.totals, strict=True))
        return self._rows


@dataclass(frozen=True, slots=True)
class Selection:
    """Where the scheduler puts a pod that fits: `node` (the first tied node in its search order),
    every node tied with it at the top score (`candidates`, by name; see `select_host`),
    the scores of every node it scored (`table`; none when one node was feasible), and whether it
    would have scored only a sample of the feasible nodes (`sampled`: then the answer is the likely
    one, not a certainty)."""

    node: str
    candidates: tuple[str, ...]
    table: ScoreTable | None = None
    sampled: bool = False
    #: What the scheduler's extenders did that the answer should say (a failed prioritize call).
    notes: tuple[str, ...] = ()

    @property
    def scores(self) -> tuple[NodeScore, ...]:
        return self.table.rows() if self.table is not None else ()


class ScoreMemo:
    """The raw scores of the node-local plugins (`node_local = True`: Score reads only the pod and
    the NodeInfo) for pods of one shape — everything those plugins read of a pod — per node, each
    valid while the node's NodeInfo is the same object (simulations never change a NodeInfo in
    place: they replace it). Replicas simulated one after another then score only the nodes that
    changed. Holds the NodeInfos it saw: keep it no longer than the simulations that use it.

    Kept in columns: each node has a place (its place in the cluster's search order, for a node
    the cluster's facts know), and per list of plugins one column holds the NodeInfo scored at
    each place and one per plugin its raw score there — so that the scores of a list of nodes are
    gathered in C, no node's row read as an object of its own."""

    __slots__ = ("_columns", "_extra", "_facts", "_places", "labels")

    def __init__(self) -> None:
        #: Node name → its place in the columns: the facts' `order_positions`, and after those
        #: places the nodes they do not know (`_extra`).
        self._places: Mapping[str, int] = {}
        self._extra: dict[str, int] = {}
        #: Per list of plugins (by name): the NodeInfo scored at each place (None: none yet), and
        #: per plugin its raw score there.
        self._columns: dict[tuple[str, ...], tuple[list[NodeInfo | None], list[list[int]]]] = {}
        self._facts: object = None
        #: The last label columns of the nodes scored (`NodeLabels`' memo).
        self.labels: dict[str, Any] = {}

    def raw(self, plugins: Sequence[ScorePlugin], cycle: CycleState, pod: Pod, nodes: list[NodeInfo],
            snapshot: Snapshot, names: list[str]) -> list[Sequence[int]]:
        """Per plugin of `plugins` (node-local ones), its raw scores of `nodes` (`names`: theirs):
        only the nodes whose NodeInfo is not the one last scored at their place are scored (the
        replicas of a workload score much the same nodes but the one the last one took)."""
        if snapshot.facts is not self._facts:  # another cluster's snapshot: start over
            self._facts = snapshot.facts
            self._places = snapshot.facts.order_positions if snapshot.facts is not None else {}
            self._extra.clear()
            self._columns.clear()
        places = self._places_of(names)
        size = len(self._places) + len(self._extra)
        key = tuple(pl.name for pl in plugins)
        found = self._columns.get(key)
        if found is None:
            found = self._columns[key] = ([], [[] for _ in plugins])
        scored, values = found
        if len(scored) < size:  # places new to the columns
            grow = size - len(scored)
            scored += [None] * grow
            for column in values:
                column += [0] * grow
        for j in compress(range(len(nodes)), map(is_not, nodes, map(scored.__getitem__, places))):
            info, k = nodes[j], places[j]
            for column, value in zip(values, [pl.score(cycle, pod, info) for pl in plugins], strict=True):
                column[k] = value
            scored[k] = info
        return [list(map(column.__getitem__, places)) for column in values]

    def _places_of(self, names: list[str]) -> list[int]:
        known, extra = self._places, self._extra
        if not extra:
            try:
                return list(map(known.__getitem__, names))  # (in C)
            except KeyError:
                pass
        return [k if (k := known.get(name)) is not None else extra.setdefault(name, len(known) + len(extra))
                for name in names]


def score_shape(pod: Pod) -> bytes:
    """Everything the node-local score plugins (and their PreScore) read of a pod: its preferred
    node affinity terms and requests (as given and with the non-zero defaults). Pods with equal shapes
    may share a `ScoreMemo` — pods of different workloads with the same requests do. (TaintToleration
    and ImageLocality, node-local too, score every node in one call instead, `score_all`: 0 on
    most nodes, found without a per-node call.)"""
    aff = pod.spec.affinity
    node_affinity = aff.node_affinity if aff is not None else None
    r = pod.requests
    return msgspec.json.encode((
        # (NodeAffinity scores the preferred terms alone: pods of workloads pinned to other nodes by
        # required terms, or without any, share a shape.)
        (node_affinity.preferred_during_scheduling_ignored_during_execution if node_affinity is not None else None)
        or None,
        (r.milli_cpu, r.memory, r.ephemeral_storage, r.scalar), pod.nonzero_milli_cpu, pod.nonzero_memory,
    ))


class ScoreMemos:
    """A `ScoreMemo` per `score_shape`, for the most recently used `limit` shapes (each holds up to
    a few entries per node: the bound keeps memory flat however many shapes a run meets)."""

    __slots__ = ("_limit", "_memos")

    def __init__(self, limit: int = 64) -> None:
        self._limit = limit
        self._memos: dict[bytes, ScoreMemo] = {}

    def for_pod(self, pod: Pod) -> ScoreMemo:
        return recent(self._memos, score_shape(pod), self._limit, ScoreMemo)


def prioritize_nodes(plugins: Sequence[tuple[ScorePlugin, int]], cycle: CycleState, pod: Pod,
                     nodes: list[NodeInfo], snapshot: Snapshot, memo: ScoreMemo | None = None) -> list[NodeScore]:
    """`prioritizeNodes`: PreScore (plugins returning Skip sit out), Score each node, NormalizeScore
    each plugin's list, multiply by the weight, add up. `cycle` is the pod's filtering cycle state;
    PreScore writes its own keys into it. With `memo` (for pods of one shape only), node-local
    plugins' raw scores are reused where the NodeInfo did not change."""
    return list(score_nodes(plugins, cycle, pod, nodes, snapshot, memo).rows())


def score_nodes(plugins: Sequence[tuple[ScorePlugin, int]], cycle: CycleState, pod: Pod,
                nodes: list[NodeInfo], snapshot: Snapshot, memo: ScoreMemo | None = None,
                names: list[str] | None = None) -> ScoreTable:
    """`prioritize_nodes` as a `ScoreTable` (the totals now, the per-node rows when asked for).
    `names`: the nodes' names, when they are the snapshot's NodeInfos of those names."""
    view = NodeLabels(nodes, snapshot.by_name, snapshot, names, memo.labels if memo is not None else None)
    names = view.names
    cycle.write(NODE_LABELS, view)  # (the scorers that read labels share it)
    active: list[tuple[ScorePlugin, int]] = []
    for pl, weight in plugins:
        st = pl.pre_score(cycle, pod, nodes, snapshot)
        if st.code == Code.SKIP:
            cycle.skip_score.add(pl.name)
            continue
        active.append((pl, weight))
    raws: dict[str, Sequence[int]] = {}
    if memo is not None:
        local = [pl for pl, _ in active if getattr(pl, "node_local", False)]
        if local:
            raws = dict(zip([pl.name for pl in local], memo.raw(local, cycle, pod, nodes, snapshot, names),
                            strict=True))
    columns: list[tuple[str, int, Sequence[int], list[int]]] = []
    summed: Iterable[int] | None = None  # the weighted columns so far, summed node by node (lazily)
    same = 0  # the weighted scores of the columns that give every node one score, summed once
    for pl, weight in active:
        raw = raws.get(pl.name)
        if raw is None:
            score_all = getattr(pl, "score_all", None)  # a plugin may score every node in one call
            raw = score_all(cycle, pod, nodes) if score_all is not None else \
                [pl.score(cycle, pod, info) for info in nodes]
        normalized = list(raw)
        pl.normalize_score(cycle, pod, normalized)
        first = normalized[0] if normalized else 0
        uniform = normalized.count(first) == len(normalized)  # (in C; a node-independent plugin's column)
        if not (first in _NORMALIZED if uniform else _NORMALIZED.issuperset(normalized)) \
                and (min(normalized) < 0 or max(normalized) > MAX_NODE_SCORE):
            bad = next(s for s in normalized if not 0 <= s <= MAX_NODE_SCORE)
            raise AssertionError(f"plugin {pl.name} returned the normalized score {bad}, outside 0..{MAX_NODE_SCORE}")
        if len(normalized) != len(nodes):
            raise AssertionError(f"plugin {pl.name} scored {len(normalized)} of {len(nodes)} nodes")
        columns.append((pl.name, weight, raw, normalized))
        if uniform:
            same += first * weight
        else:
            weighted: Iterable[int] = normalized if weight == 1 else map(mul, normalized, repeat(weight))
            summed = weighted if summed is None else map(add, summed, weighted)
    # Each node's total of normalized × weight, in C, one list in all (the columns are as long as
    # `nodes`, checked above).
    if summed is None:
        totals = [same] * len(nodes)
    else:
        totals = list(map(add, summed, repeat(same)) if same else summed)
    return ScoreTable(names, totals, columns)


#: The integer scores a plugin may give once normalized (`MinNodeScore`..`MaxNodeScore`): a column
#: of them is checked in one pass in C (min and max are two, and compare object by object).
_NORMALIZED = frozenset(range(MAX_NODE_SCORE + 1))


def select_host(scores: Sequence[NodeScore] | ScoreTable, sampled: bool = False) -> Selection:
    """The nodes with the highest total, and the one the scheduler takes.

    v1.36 pops the top of a heap whose tie-breaker (`Randomizer`) is set only when extenders
    score; without them, the first tied node in the order the filters found the feasible nodes
    wins. That order is the search order, but the filters run in parallel and can swap
    neighbours, so the node is the likely one and every tied node is a candidate. `scores` must
    be in the search order (`find_nodes_that_fit(sample=True)` gives it)."""
    if isinstance(scores, ScoreTable):
        table = scores
    else:
        table = ScoreTable([s.node for s in scores], [s.total for s in scores], [])
        table._rows = tuple(scores)
    if not table.names:
        raise ValueError("no node to select")
    totals = table.totals
    best = max(totals)
    first = table.names[totals.index(best)]
    tied = tuple(sorted(n for n, t in zip(table.names, totals, strict=True) if t == best))
    return Selection(first, tied, table, sampled)
