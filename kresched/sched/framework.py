"""The scheduling framework kresched's filter plugins plug into, after kube-scheduler's
`pkg/scheduler/framework` (interface.go, types.go, cycle_state.go).

Owns: `Status` and its codes, `Snapshot` (all NodeInfos of one run — `kresched.sched.node_info`'s —
plus the cluster-wide lists the affinity plugins need, and plugins' indexes — `Snapshot.index` —
derived once per `with_node_info` lineage),
`CycleState` (per-pod PreFilter and PreScore results, cloned for preemption simulations),
`FilterPlugin` and `ScorePlugin`, the interfaces each plugin module implements, and the score
arithmetic they share (`MAX_NODE_SCORE`, `default_normalize_score`, `go_div`). Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from itertools import compress
from operator import is_, is_not
from typing import Any, ClassVar, Protocol

from kresched.model.cluster import ClusterState
from kresched.model.dra import DraState
from kresched.model.objects import Node, Pod
from kresched.model.specs import LabelSelector
from kresched.model.storage import StorageState
from kresched.sched.layered import Layered
from kresched.sched.node_info import NodeInfo

__all__ = [
    "MAX_NODE_SCORE",
    "NODE_LABELS",
    "PODS_BY_NAMESPACE",
    "SUCCESS",
    "Code",
    "CycleState",
    "FilterPlugin",
    "InsufficientResource",
    "NodeLabels",
    "PreFilterResult",
    "ScorePlugin",
    "Snapshot",
    "SnapshotIndex",
    "Status",
    "StatusCode",
    "default_normalize_score",
    "go_div",
    "node_labels",
    "recent",
    "regrouped",
    "zone_key",
]

#: `framework.MaxNodeScore`: every score plugin's normalized score is within 0..100.
MAX_NODE_SCORE = 100


class StatusCode(IntEnum):
    """`framework.Code`; the numbers are upstream's. Spelt `Code.X` (below)."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5

    @property
    def is_rejected(self) -> bool:
        return self in (StatusCode.UNSCHEDULABLE, StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE)


class Code:
    """`StatusCode`'s members as plain class attributes. Python 3.11's enum metaclass defines
    `__getattr__`, which makes every `StatusCode.X` a lookup four times as slow as this one — and
    filtering compares codes for every node of every pod."""

    SUCCESS = StatusCode.SUCCESS
    ERROR = StatusCode.ERROR
    UNSCHEDULABLE = StatusCode.UNSCHEDULABLE
    UNSCHEDULABLE_AND_UNRESOLVABLE = StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE
    WAIT = StatusCode.WAIT
    SKIP = StatusCode.SKIP


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """One resource a node lacks, in integer units (milli-CPU, bytes, count)."""

    resource: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False

    @property
    def reason(self) -> str:
        return "Too many pods" if self.resource == "pods" else f"Insufficient {self.resource}"

    @property
    def missing(self) -> int:
        """How much more would have to be free for the request to fit."""
        return self.requested - (self.capacity - self.used)


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's answer for one node: a code, node-independent reasons, and structured details.

    `reasons` are the strings the scheduler counts into `0/N nodes are available: ...`.
    `details` (e.g. the taint not tolerated, the label missing) let `explain` say what would make
    the pod fit; they never change the message. (NodeResourcesFit's numbers are not kept here:
    its rejections are one object per code and reasons, and `explain` reads the numbers from
    `node_resources_fit.fits_request`.)
    """

    code: StatusCode = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    details: tuple[str, ...] = ()

    @property
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def is_rejected(self) -> bool:
        return self.code.is_rejected


    def with_plugin(self, plugin: str) -> Status:
        if self.plugin == plugin:
            return self
        return Status(self.code, self.reasons, plugin, self.details)


SUCCESS = Status()


def unschedulable(*reasons: str, details: Iterable[str] = ()) -> Status:
    return Status(Code.UNSCHEDULABLE, tuple(reasons), details=tuple(details))


def unresolvable(*reasons: str, details: Iterable[str] = ()) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons), details=tuple(details))


def _visited(info: NodeInfo, visit: Callable[[NodeInfo], object] | None) -> NodeInfo:
    if visit is not None:
        visit(info)
    return info


def zone_key(node: Node) -> str:
    """`utilnode.GetZoneKey`: region and zone, "" when neither. As upstream, the deprecated beta label
    wins whenever it is present (even empty), the GA label only stands in for a missing one."""
    labels = node.metadata.labels
    region = labels.get("failure-domain.beta.kubernetes.io/region")
    if region is None:
        region = labels.get("topology.kubernetes.io/region", "")
    zone = labels.get("failure-domain.beta.kubernetes.io/zone")
    if zone is None:
        zone = labels.get("topology.kubernetes.io/zone", "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


_NO_NODES: frozenset[str] = frozenset()


class ClusterFacts:
    """What a run's simulations never change: node order, image spread and the selectors of the
    default spreading constraints. Shared by every Snapshot derived from the first one."""

    __slots__ = ("_image_holders", "_image_range", "_image_scores", "_image_sizes", "_memos", "controllers",
                 "nodes", "num_nodes", "order_positions", "positions", "scheduling_order", "services")

    def __init__(self, state: ClusterState, infos: list[NodeInfo]) -> None:
        self.num_nodes = len(infos)
        self.scheduling_order = _zone_interleaved(infos)
        #: Node name → its place in `scheduling_order`.
        self.order_positions = {n: k for k, n in enumerate(self.scheduling_order)}
        self._image_holders: dict[str, set[str]] | None = None
        self._image_range: dict[str, tuple[int, int]] = {}
        self._image_sizes: dict[str, tuple[Node, dict[str, int]]] = {}
        self._image_scores: dict[object, dict[str, tuple[object, int]]] = {}
        #: The nodes, in the snapshot's order (a snapshot whose NodeInfos hold these same objects
        #: has the nodes these facts were gathered from).
        self.nodes = [i.node for i in infos]
        self._memos: dict[str, dict[Any, Any]] = {}
        #: Node name → its place in the snapshot's NodeInfos (simulations replace, never reorder).
        self.positions = {i.name: k for k, i in enumerate(infos)}
        #: Service selectors by namespace (None selectors left out, as `GetPodServices` skips them).
        self.services: dict[str, list[dict[str, str]]] = {}
        #: (kind, namespace, name) → the selector of a ReplicationController (a map), ReplicaSet or
        #: StatefulSet (a LabelSelector).
        self.controllers: dict[tuple[str, str, str], dict[str, str] | LabelSelector | None] = {}
        for w in state.workloads:
            kind = type(w).__name__
            ns, name = w.metadata.namespace, w.metadata.name
            if kind == "Service":
                if w.spec.selector is not None:
                    self.services.setdefault(ns, []).append(w.spec.selector)
            else:
                self.controllers[(kind, ns, name)] = w.spec.selector

    def memo(self, name: str) -> dict[Any, Any]:
        """A plugin's memo (`name`) of answers that read only the nodes, which no simulation changes
        (valid for a snapshot whose nodes are `nodes`). Emptied past 256 entries: a bound on memory,
        never on what is answered."""
        found = self._memos.get(name)
        if found is None or len(found) > 256:
            found = self._memos[name] = {}
        return found

    def image_nodes(self, name: str) -> int:
        """On how many nodes `name` is present (`ImageStateSummary.NumNodes`)."""
        return len(self.image_holders(name))

    def image_holders(self, name: str) -> set[str] | frozenset[str]:
        """The names of the nodes that report image `name` (do not change the set)."""
        if self._image_holders is None:
            holders: dict[str, set[str]] = {}
            sizes = self._image_range
            for node in self.nodes:
                for image in node.status.images:
                    size = image.size_bytes
                    for n in image.names:
                        holders.setdefault(n, set()).add(node.metadata.name)
                        low, high = sizes.get(n, (size, size))
                        sizes[n] = (min(low, size), max(high, size))
            self._image_holders = holders
        return self._image_holders.get(name, _NO_NODES)

    def image_size_range(self, name: str) -> tuple[int, int]:
        """The smallest and the largest size the nodes report for image `name` ((0, 0) where none does)."""
        self.image_holders(name)
        return self._image_range.get(name, (0, 0))

    def image_scores(self, key: object) -> dict[str, tuple[object, int]]:
        """Where ImageLocality keeps, per pod image set (`key`), each node's score (by name, with
        the Node it read), for the 64 most recently used sets."""
        return recent(self._image_scores, key, 64, dict)

    def image_sizes(self, node: Node) -> dict[str, int]:
        """The images `node` reports, name → size in bytes (a later entry's size wins for a name
        listed twice, as ImageLocality's map does); kept per node while it is the same object."""
        hit = self._image_sizes.get(node.metadata.name)
        if hit is not None and hit[0] is node:
            return hit[1]
        sizes: dict[str, int] = {}
        for image in node.status.images:
            for n in image.names:
                sizes[n] = image.size_bytes
        self._image_sizes[node.metadata.name] = (node, sizes)
        return sizes


def recent(cache: dict[Any, Any], key: Any, limit: int, make: Callable[[], Any]) -> Any:
    """`cache[key]` (made by `make` where missing), now the most recently used of at most `limit`
    entries: a memo kept per shape for the shapes a run met last (the bound keeps memory flat)."""
    found = cache.pop(key, _MISSING)
    if found is _MISSING:
        found = make()
        if len(cache) >= limit:
            del cache[next(iter(cache))]  # the least recently used
    cache[key] = found
    return found


_MISSING: Any = object()


def _zone_interleaved(infos: list[NodeInfo]) -> tuple[str, ...]:
    """`nodeTree.list()`: one node of each zone in turn, zones in the order their first node was
    added, nodes in the order they were added — for an informer's initial list, name order."""
    zones: dict[str, list[str]] = {}
    for info in infos:
        zones.setdefault(zone_key(info.node), []).append(info.name)
    out: list[str] = []
    lists = list(zones.values())
    for i in range(max((len(z) for z in lists), default=0)):
        out.extend(z[i] for z in lists if i < len(z))
    return tuple(out)


@dataclass
class Snapshot:
    """All NodeInfos of one run (`framework.SharedLister`), in node-name order.

    Built once per run from a `ClusterState`; planning clones the NodeInfos it changes.
    `namespace_labels` serves `namespaceSelector` in pod affinity terms; `facts` what no
    simulation changes (see `ClusterFacts`); `storage` the volume plugins (the scheduler's PV,
    PVC, StorageClass and CSINode listers).
    """

    node_infos: list[NodeInfo]
    by_name: dict[str, NodeInfo]
    namespace_labels: dict[str, dict[str, str]] = field(default_factory=dict)
    facts: ClusterFacts | None = None
    storage: StorageState = field(default_factory=StorageState)
    #: The DynamicResources plugin's listers: DeviceClasses, ResourceSlices, ResourceClaims (as the
    #: state held them; `sched.dra.inuse` follows what simulations allocate and free).
    dra: DraState = field(default_factory=DraState)
    _indexes: dict[str, SnapshotIndex] = field(default_factory=dict, init=False, repr=False, compare=False)
    #: (the snapshot this one was derived from, the NodeInfo replaced, its replacement) while some
    #: index is not carried over yet: `index` derives it from the nearest ancestor that has it.
    _parent: tuple[Snapshot, NodeInfo, NodeInfo] | None = field(default=None, init=False, repr=False,
                                                                 compare=False)
    #: How many linked ancestors this snapshot keeps alive (bounded by `_MAX_LINEAGE`).
    _depth: int = field(default=0, init=False, repr=False, compare=False)
    _ordered: list[NodeInfo] | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def from_state(cls, state: ClusterState, visit: Callable[[NodeInfo], object] | None = None) -> Snapshot:
        """`visit`, if given, sees each NodeInfo as soon as it is built: work on a node's pods done
        then finds them in the CPU's caches (a later pass over 30k pods waits on memory)."""
        infos = [_visited(NodeInfo(n, state.pods_on(n.name)), visit) for n in sorted(state.nodes, key=lambda n: n.name)]
        return cls(infos, {i.name: i for i in infos}, state.namespace_labels, ClusterFacts(state, infos),
                   state.storage, state.dra)

    @property
    def cluster(self) -> ClusterFacts:
        if self.facts is None:  # a hand-built snapshot (tests)
            self.facts = ClusterFacts(ClusterState(), self.node_infos)
        return self.facts

    def in_scheduling_order(self) -> list[NodeInfo]:
        """The NodeInfos in the scheduler's search order (`ClusterFacts.scheduling_order`); built
        on first use, carried over by `with_node_info`. Do not change the list."""
        if self._ordered is None:
            by_name = self.by_name
            self._ordered = [by_name[n] for n in self.cluster.scheduling_order if n in by_name]
        return self._ordered

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """`StorageInfos().IsPVCUsedByPods`: a pod on some node uses the claim `namespace/name`
        (`NodeInfo.PVCRefCounts`, summed over nodes) — looked up among the pods of its namespace
        (`pods_by_namespace`, carried down a simulation: not a walk over every pod per snapshot)."""
        namespace, _, name = key.partition("/")
        for pods in self.pods_by_namespace().get(namespace, {}).values():
            for p in pods:
                for v in p.spec.volumes:
                    if v.persistent_volume_claim is not None and v.persistent_volume_claim.claim_name == name:
                        return True
        return False

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        return [n for n in self.node_infos if n.pods_with_required_anti_affinity]

    def label_column(self, key: str) -> dict[str, str]:
        """Node name → the node's value of label `key`, for the nodes that have it: one lookup
        where reading a node's labels is three steps through objects spread over memory (the
        scorers read a label of hundreds of nodes for every pod). Built once per lineage, on first
        use; do not change it."""
        return self.index(LABEL_COLUMNS, _LabelColumns.build).column(self, key)

    def pods_by_namespace(self) -> Mapping[str, dict[str, tuple[Pod, ...]]]:
        """Each namespace's pods, grouped by node (node name → its pods of the namespace; the
        NodeInfo is `by_name[name]`); built once, on first use.

        Lets the InterPodAffinity and PodTopologySpread PreFilters visit only the namespaces their
        terms select instead of every pod. Valid as long as the NodeInfos of this snapshot are not
        changed in place (clone them, and use `with_node_info`, which carries the index over).
        """
        return self.index(PODS_BY_NAMESPACE, _PodsByNamespace.build).groups

    def index(self, key: str, build: Callable[[Snapshot], SnapshotIndex]) -> Any:
        """A plugin's index over this snapshot's NodeInfos, computed once per lineage: built
        (`build`) on the root of the `with_node_info` chain this snapshot comes from (or the nearest
        ancestor that has it), then carried down the chain (`SnapshotIndex.replaced`), each step
        cached. The same validity rule as `pods_by_namespace`: NodeInfos are never changed in place
        (a simulation clones the NodeInfo it changes and uses `with_node_info`)."""
        idx = self._indexes.get(key)
        if idx is not None:
            return idx
        chain: list[Snapshot] = []
        snap = self
        while key not in snap._indexes and snap._parent is not None:
            chain.append(snap)
            snap = snap._parent[0]
        idx = snap._indexes.get(key)
        if idx is None:
            idx = snap._indexes[key] = build(snap)
            _INDEX_KEYS.add(key)
            snap._drop_parent()
        for s in reversed(chain):
            assert s._parent is not None
            _, old, new = s._parent
            idx = s._indexes[key] = idx.replaced(old, new)
            s._drop_parent()
        return idx

    def _drop_parent(self) -> None:
        if all(k in self._indexes for k in _INDEX_KEYS):
            self._parent = None
            self._depth = 0

    def with_node_info(self, info: NodeInfo) -> Snapshot:
        """A snapshot where `info` replaces the NodeInfo of the same node (others shared)."""
        k = self.facts.positions.get(info.name) if self.facts is not None else None
        if k is not None and k < len(self.node_infos) and self.node_infos[k].name == info.name:
            infos = list(self.node_infos)
            infos[k] = info
        else:
            infos = [info if n.name == info.name else n for n in self.node_infos]
        by_name = dict(self.by_name)
        by_name[info.name] = info
        snap = Snapshot(infos, by_name, self.namespace_labels, self.facts, self.storage, self.dra)
        old = self.by_name.get(info.name)
        if self._ordered is not None and old is not None and self.facts is not None:
            j = self.facts.order_positions.get(info.name)
            if j is not None and j < len(self._ordered) and self._ordered[j] is old:
                snap._ordered = list(self._ordered)
                snap._ordered[j] = info
        if old is not None:
            snap._indexes = {k: idx.replaced(old, info) for k, idx in self._indexes.items()}
            if self._depth < _MAX_LINEAGE and (not _INDEX_KEYS or any(k not in snap._indexes for k in _INDEX_KEYS)):
                snap._parent = (self, old, info)
                snap._depth = self._depth + 1 if self._parent is not None else 1
        return snap


#: Every `Snapshot.index` key asked for so far (a snapshot that has them all needs no parent).
_INDEX_KEYS: set[str] = set()
#: The longest chain of ancestors a snapshot keeps for deriving indexes (memory bound; past it an
#: index is built afresh, with the same result).
_MAX_LINEAGE = 64


class NodeLabels:
    """Some nodes' values of the labels a scorer reads (PreScore's, then Score's, for the nodes
    scored): a column per key aligned with `nodes` (None where a node lacks the key), from the
    snapshot's `label_column` — one lookup a node — but for NodeInfos not the snapshot's (`own`),
    read from their Node; without a snapshot, from every node's Node.

    `names`, when given, are the nodes' names and the nodes the snapshot's NodeInfos of those
    names (none is `own`). `memo` (the caller's, kept across pods: `ScoreMemo.labels`) keeps the
    last columns found for the same names: the replicas of a workload score the same nodes, on
    snapshots whose labels are the same (the snapshot's column is the same object)."""

    __slots__ = ("_columns", "_memo", "_snapshot", "names", "nodes", "own")

    def __init__(self, nodes: Sequence[NodeInfo], by_name: Mapping[str, NodeInfo],
                 snapshot: Snapshot | None = None, names: list[str] | None = None,
                 memo: dict[str, Any] | None = None) -> None:
        self.nodes = nodes
        if names is None:
            self.names = names = [info.name for info in nodes]
            #: Positions of the NodeInfos that are not the snapshot's of their name.
            self.own = list(compress(range(len(nodes)), map(is_not, nodes, map(by_name.get, names))))
        else:
            self.names, self.own = names, []
        self._snapshot = snapshot
        self._columns: dict[str, list[str | None]] = {}
        self._memo = memo if memo is not None and snapshot is not None and not self.own else None
        if self._memo is not None and self._memo.get(_NAMES) != names:  # (a list compared in C)
            self._memo.clear()
            self._memo[_NAMES] = names

    def positions(self) -> dict[str, int]:
        """Node name → its place in `names` (shared: do not change it); kept in the memo with the
        columns, for the same names."""
        memo = self._memo
        found = memo.get(_POSITIONS) if memo is not None else None
        if found is None:
            found = dict(zip(self.names, range(len(self.names)), strict=True))
            if memo is not None:
                memo[_POSITIONS] = found
        return found

    def values(self, key: str) -> list[str | None]:
        """The column of `key` (shared: do not change it)."""
        col = self._columns.get(key)
        if col is None:
            if self._snapshot is None:
                col = [info.node.metadata.labels.get(key) for info in self.nodes]
            else:
                column = self._snapshot.label_column(key)
                hit = self._memo.get(key) if self._memo is not None else None
                if hit is not None and hit[0] is column:
                    col = hit[1]
                else:
                    col = list(map(column.get, self.names))
                    for j in self.own:
                        col[j] = self.nodes[j].node.metadata.labels.get(key)
                    if self._memo is not None:
                        self._memo[key] = (column, col)
            self._columns[key] = col
        return col


#: `NodeLabels`' memo key of the names its columns are of (label keys are never empty).
_NAMES = ""
#: Its memo key of `positions` (no label key: not a string).
_POSITIONS: Any = object()


#: CycleState key of the `NodeLabels` of the nodes being scored (every scorer reads the one view).
NODE_LABELS = "kresched/node-labels"


def node_labels(cycle: CycleState, nodes: Sequence[NodeInfo], snapshot: Snapshot) -> NodeLabels:
    """The `NodeLabels` of `nodes` (the list being scored) on `snapshot`: the cycle's, which the
    framework writes before PreScore, when it is of these; else one of their own."""
    held: NodeLabels | None = cycle.read(NODE_LABELS)
    if held is not None and held.nodes is nodes and held._snapshot is snapshot:
        return held
    return NodeLabels(nodes, snapshot.by_name, snapshot)


#: `Snapshot.index` key of `label_column`.
LABEL_COLUMNS = "kresched/label-columns"


class _LabelColumns:
    """`Snapshot.label_column` as a `SnapshotIndex`: per label key asked for, node name → value.
    Shared by every snapshot derived without a change of some node's labels (their columns are
    the same), so a column is built from whichever of them asks first."""

    __slots__ = ("columns",)

    def __init__(self, columns: dict[str, dict[str, str]]) -> None:
        self.columns = columns

    @classmethod
    def build(cls, snap: Snapshot) -> _LabelColumns:
        return cls({})

    def column(self, snap: Snapshot, key: str) -> dict[str, str]:
        col = self.columns.get(key)
        if col is None:
            col = self.columns[key] = {i.name: v for i in snap.node_infos
                                       if (v := i.node.metadata.labels.get(key)) is not None}
        return col

    def replaced(self, old: NodeInfo, new: NodeInfo) -> _LabelColumns:
        if old.node is new.node or old.node.metadata.labels == new.node.metadata.labels:
            return self
        labels, name = new.node.metadata.labels, new.name
        columns: dict[str, dict[str, str]] = {}
        for key, col in self.columns.items():
            col = dict(col)
            col.pop(name, None)
            if (v := labels.get(key)) is not None:
                col[name] = v
            columns[key] = col
        return _LabelColumns(columns)


#: `Snapshot.index` key of `pods_by_namespace`.
PODS_BY_NAMESPACE = "kresched/pods-by-namespace"


class _PodsByNamespace:
    """`Snapshot.pods_by_namespace` as a `SnapshotIndex`: carried down simulations like the plugins'.
    Per namespace, node name → its pods of the namespace, in the order nodes were added (a node
    whose pods of the namespace changed goes last). The namespaces are a `Layered` mapping: a
    placement changes one or two of a cluster's thousands, and copying them all was most of what
    carrying the index cost."""

    __slots__ = ("groups",)

    def __init__(self, groups: Layered[str, dict[str, tuple[Pod, ...]]]) -> None:
        self.groups = groups

    @classmethod
    def build(cls, snap: Snapshot) -> _PodsByNamespace:
        groups: dict[str, dict[str, tuple[Pod, ...]]] = {}
        for info in snap.node_infos:
            for ns, pods in info.namespace_groups().items():
                groups.setdefault(ns, {})[info.name] = pods
        return cls(Layered(groups))

    def replaced(self, old: NodeInfo, new: NodeInfo) -> _PodsByNamespace:
        changed, _, after = regrouped(old, new)
        if not changed:
            return self
        # Only the namespaces whose pods on the node changed are re-grouped (each a dict copy, not a
        # walk over its nodes).
        index = self.groups.draft()
        name = new.name
        for ns in changed:
            entries = index.get(ns)
            entries = entries.copy() if entries is not None else {}
            entries.pop(name, None)
            if ns in after:
                entries[name] = after[ns]
            if entries:
                index[ns] = entries
            else:
                index.pop(ns, None)
        return _PodsByNamespace(index.done())


def regrouped(old: NodeInfo, new: NodeInfo
              ) -> tuple[list[str], dict[str, tuple[Pod, ...]], dict[str, tuple[Pod, ...]]]:
    """For an index carried from `old` to `new` (`SnapshotIndex.replaced`): the namespaces whose pods
    on the node are not the same objects in the same order, and `old`'s and `new`'s pods by
    namespace (each NodeInfo groups its pods once). The last answer is kept: every index carried
    down one `with_node_info` asks for the same pair (it is the answer while both NodeInfos keep
    their groups: adding or removing a pod drops a NodeInfo's)."""
    last = _last_regrouped[0]  # one read of one tuple: consistent whatever another thread stores
    if last is not None and last[0] is old and last[1] is new and old._by_namespace is last[2][1] \
            and new._by_namespace is last[2][2]:
        return last[2]
    before = old.namespace_groups()
    after = new.namespace_groups()
    n = len(old.pods)
    if len(new.pods) > n and all(map(is_, old.pods, new.pods)):  # pods placed (appended): their namespaces
        changed = list(dict.fromkeys(p.metadata.namespace for p in new.pods[n:]))
    else:
        changed = [ns for ns in before.keys() | after.keys() if not _same_pods(before.get(ns), after.get(ns))]
    found = changed, before, after
    _last_regrouped[0] = (old, new, found)
    return found


#: `regrouped`'s last (old, new, answer).
_last_regrouped: list[tuple[NodeInfo, NodeInfo, tuple[list[str], dict[str, tuple[Pod, ...]],
                                                      dict[str, tuple[Pod, ...]]]] | None] = [None]


def _same_pods(a: tuple[Pod, ...] | None, b: tuple[Pod, ...] | None) -> bool:
    return a is not None and b is not None and len(a) == len(b) and all(map(is_, a, b))  # (by identity, in C)


class SnapshotIndex(Protocol):
    """A derived index a plugin keeps on a `Snapshot` (`Snapshot.index`)."""

    def replaced(self, old: NodeInfo, new: NodeInfo) -> SnapshotIndex:
        """The index of a snapshot where `new` replaces `old` (self stays valid for the old one)."""
        ...


class PluginState(Protocol):
    def clone(self) -> PluginState: ...


class CycleState:
    """Per-pod PreFilter and PreScore results by plugin name (`framework.CycleState`)."""

    __slots__ = ("_data", "skip", "skip_score")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        #: Plugins whose PreFilter returned Skip: their Filter is not run for this pod.
        self.skip: set[str] = set()
        #: Plugins whose PreScore returned Skip: they do not score this pod.
        self.skip_score: set[str] = set()

    def read(self, plugin: str) -> Any:
        return self._data.get(plugin)

    def write(self, plugin: str, value: Any) -> None:
        self._data[plugin] = value

    def clone(self) -> CycleState:
        c = CycleState()
        c._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        c.skip = set(self.skip)
        c.skip_score = set(self.skip_score)
        return c


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """What a PreFilter returns: its status, and optionally the only node names worth filtering
    (`framework.PreFilterResult.NodeNames`; None means all nodes)."""

    status: Status = SUCCESS
    node_names: frozenset[str] | None = None


class FilterPlugin(Protocol):
    """One kube-scheduler filter plugin. Every plugin module defines one, named as upstream.

    `pre_filter` runs once per pod (it may write per-pod state into `cycle`, or return a
    Skip status so that `filter` is not called, or a rejection that applies to every node);
    `filter` answers for one node; `add_pod` / `remove_pod` keep the PreFilter state right when a
    preemption simulation adds or removes a pod on `node_info` (PreFilterExtensions).
    """

    name: ClassVar[str]

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult: ...

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None: ...

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None: ...


class ScorePlugin(Protocol):
    """One kube-scheduler score plugin (PreScore, Score and its ScoreExtensions).

    `pre_score` runs once per pod with the nodes that passed the filters (it may write state into
    `cycle`, or return a Skip status so that the plugin does not score this pod); `score` answers for
    one node; `normalize_score` rewrites the scores of all nodes in place (a no-op for plugins
    without ScoreExtensions). Normalized scores are within 0..MAX_NODE_SCORE; the framework then
    multiplies them by the plugin's weight. A plugin may also have `score_all(cycle, pod, nodes)`,
    `score` of each node in one call (`sched.score.score_nodes` uses it when there).
    """

    name: ClassVar[str]

    def pre_score(self, cycle: CycleState, pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot) -> Status: ...

    def score(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> int: ...

    def normalize_score(self, cycle: CycleState, pod: Pod, scores: list[int]) -> None: ...


def go_div(a: int, b: int) -> int:
    """Go's integer division, which truncates toward zero (Python's `//` floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[int]) -> None:
    """`helper.DefaultNormalizeScore`: scale to 0..max_priority by the highest score (reversed:
    max_priority minus that); all zero → all zero, or all max_priority when reversed."""
    highest = max(scores, default=0)
    if highest <= 0:
        if reverse:
            scores[:] = [max_priority] * len(scores)
        return
    for i, s in enumerate(scores):
        s = go_div(max_priority * s, highest)
        scores[i] = max_priority - s if reverse else s
