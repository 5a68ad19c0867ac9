"""The resource pools one node sees, as the v1.36 allocator gathers them (`GatherPools`,
`structured/internal/incubating/pools_incubating.go`).

Owns: the feature gates the allocator reads (`Features`); the cluster's slices indexed once per run
(`SliceIndex`: node-local slices without `sharedCounters` by node name, every other slice "shared"
and looked at for every node, and all slices by pool for the completeness check); and, per node,
the pools in search order with their candidate devices flattened in pool, slice and device order
(`NodePools`), cached in the index so that every pod of a run gathers a node's pools once.

Rules, in upstream's order:
1. A slice is relevant to a node if it has `sharedCounters`; else if it names the node
   (`nodeName`), `allNodes`, or a `nodeSelector` the node matches; else, with
   `perDeviceNodeSelection`, if any of its devices matches the node by its own fields. A slice with
   none of these is an unknown future form and ignored. Without PartitionableDevices, slices with
   `perDeviceNodeSelection` or `sharedCounters` are ignored.
2. Per pool (driver, pool name) only the slices of the highest `pool.generation` are kept.
3. If fewer slices than `resourceSliceCount` are kept, all of the pool's slices in the cluster are
   counted: a newer generation anywhere makes the pool obsolete (ignored); a count still short makes
   it incomplete (nothing allocated from it; an `All` request fails on it).
4. Duplicate device names, duplicate counter-set names, or counters that name an unknown set or
   counter make a pool invalid (skipped; `invalid resource pools were encountered` if nothing fits).
5. Pools sorted by driver then pool name; pools with any device that has binding conditions go
   after all others; slices in a pool sorted by name; devices in `spec.devices` order.

Must not do I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kresched.model.dra import CounterSet, Device, ResourceSlice, quantity_value
from kresched.model.selectors import node_selector_term_matches
from kresched.model.specs import NodeSelector

__all__ = ["DeviceEntry", "DeviceID", "Features", "NodePools", "Pool", "SliceIndex", "node_matches"]

#: (driver, pool, device), as upstream's `DeviceID`.
DeviceID = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class Features:
    """The allocator's feature switches (`structured.Features`); the defaults are what v1.36's
    default gates give the scheduler (`AllocatorFeatures`), which selects the incubating allocator.
    ListTypeAttributes is never set by the scheduler, so it is not here."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True


DEFAULT_FEATURES = Features()


@dataclass(slots=True)
class Pool:
    """One pool as a node sees it (`Pool` upstream)."""

    driver: str
    name: str
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""
    #: The slices with devices that target the node, sorted by name.
    slices: tuple[ResourceSlice, ...] = ()
    #: The pool's other slices (only when the pool spans nodes); their devices use the counters too.
    other_slices: tuple[ResourceSlice, ...] = ()
    counter_sets: dict[str, CounterSet] = field(default_factory=dict)
    has_binding_conditions: bool = False

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


class DeviceEntry:
    """A candidate device on a node: where it is, and what the search reads of it, derived once."""

    __slots__ = ("allow_multiple", "consumes", "device", "id", "node_ok", "pool", "slice")

    def __init__(self, device: Device, slice_: ResourceSlice, pool: Pool, node_ok: bool) -> None:
        self.device = device
        self.slice = slice_
        self.pool = pool
        self.id: DeviceID = (slice_.spec.driver, slice_.spec.pool.name, device.name)
        #: False for a device of a per-device-node-selection slice that does not select this node.
        self.node_ok = node_ok
        self.allow_multiple = bool(device.allow_multiple_allocations)
        self.consumes: tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...] = tuple(
            (c.counter_set, tuple((name, quantity_value(v.value)) for name, v in c.counters.items()))
            for c in device.consumes_counters)


@dataclass(frozen=True, slots=True)
class NodePools:
    """What the allocator needs of one node's pools."""

    pools: tuple[Pool, ...]
    #: The devices of the complete, valid pools in search order.
    entries: tuple[DeviceEntry, ...]

    @property
    def has_invalid(self) -> bool:
        return any(p.is_invalid for p in self.pools)


def node_matches(node_name: str, labels: dict[str, str], name_to_match: str | None, all_nodes: bool | None,
                 selector: NodeSelector | None) -> bool:
    """`NodeMatches`: a node name, all nodes, or a node selector whose terms are ORed."""
    if name_to_match:
        return node_name == name_to_match
    if all_nodes:
        return True
    if selector is not None:
        return any(node_selector_term_matches(t, node_name, labels) for t in selector.node_selector_terms)
    return False


class SliceIndex:
    """The cluster's slices, indexed once per run; a node's pools are gathered once and cached."""

    def __init__(self, slices: Iterable[ResourceSlice], features: Features = DEFAULT_FEATURES) -> None:
        self.slices = tuple(slices)
        self.features = features
        self.on_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        for s in self.slices:
            spec = s.spec
            if not spec.node_name or spec.shared_counters:
                self.shared.append(s)
            else:
                self.on_node.setdefault(spec.node_name, []).append(s)
            self.by_pool.setdefault((spec.driver, spec.pool.name), []).append(s)
        self._nodes: dict[Any, tuple[Any, NodePools]] = {}
        #: Shared by the pods of a run: the outcome of a list of selector expressions per what CEL reads
        #: of a device (`Allocator.signature`); keyed by object identity (the value keeps the object
        #: alive), each device's signature and the view CEL reads of it.
        self.selector_results: dict[tuple[bytes, tuple[str | None, ...]], Any] = {}
        self.signatures: dict[int, tuple[Device, bytes]] = {}
        self.views: dict[int, Any] = {}

    def pools_for(self, node_name: str, labels: dict[str, str]) -> NodePools:
        key = (node_name, id(labels))
        hit = self._nodes.get(key)
        if hit is not None and hit[0] is labels:
            return hit[1]
        pools = self._gather(node_name, labels)
        self._nodes[key] = (labels, pools)
        return pools

    def _gather(self, node_name: str, labels: dict[str, str]) -> NodePools:
        features = self.features
        by_id: dict[tuple[str, str], list[ResourceSlice]] = {}
        for s in (*self.on_node.get(node_name, ()), *self.shared):
            spec = s.spec
            if not features.partitionable_devices and (spec.per_device_node_selection is not None
                                                       or spec.shared_counters):
                continue
            if spec.shared_counters:
                relevant = True
            elif spec.node_name or spec.all_nodes or spec.node_selector is not None:
                relevant = node_matches(node_name, labels, spec.node_name, spec.all_nodes, spec.node_selector)
            elif spec.per_device_node_selection:
                relevant = any(node_matches(node_name, labels, d.node_name, d.all_nodes, d.node_selector)
                               for d in spec.devices)
            else:
                continue
            if relevant:
                _add_slice(by_id, s)

        plain: list[Pool] = []
        with_conditions: list[Pool] = []
        for (driver, name), kept in by_id.items():
            want = kept[0].spec.pool.resource_slice_count
            all_in_pool: list[ResourceSlice] | None = None
            if len(kept) != want:
                obsolete, all_in_pool = self._check_slices_in_pool(driver, name, kept[0].spec.pool.generation)
                if obsolete:
                    continue
                if len(all_in_pool) != want:
                    plain.append(Pool(driver, name, is_incomplete=True))
                    continue
            pool = _build_pool(driver, name, kept, features, all_in_pool)
            (with_conditions if pool.has_binding_conditions else plain).append(pool)
        plain.sort(key=lambda p: (p.driver, p.name))
        with_conditions.sort(key=lambda p: (p.driver, p.name))
        pools = (*plain, *with_conditions)
        entries = []
        for pool in pools:
            if pool.is_incomplete or pool.is_invalid:
                continue
            for s in pool.slices:
                per_device = bool(s.spec.per_device_node_selection)
                for d in s.spec.devices:
                    ok = (not per_device
                          or node_matches(node_name, labels, d.node_name, d.all_nodes, d.node_selector))
                    entries.append(DeviceEntry(d, s, pool, ok))
        return NodePools(pools, tuple(entries))

    def _check_slices_in_pool(self, driver: str, name: str,
                              generation: int) -> tuple[bool, list[ResourceSlice]]:
        """`checkSlicesInPool`: obsolete if any slice of the pool is newer; else that generation's slices."""
        same = []
        for s in self.by_pool.get((driver, name), ()):
            g = s.spec.pool.generation
            if g > generation:
                return True, []
            if g == generation:
                same.append(s)
        return False, same


def _add_slice(by_id: dict[tuple[str, str], list[ResourceSlice]], s: ResourceSlice) -> None:
    key = (s.spec.driver, s.spec.pool.name)
    kept = by_id.get(key)
    if kept is None or s.spec.pool.generation > kept[0].spec.pool.generation:
        by_id[key] = [s]
    elif s.spec.pool.generation == kept[0].spec.pool.generation:
        kept.append(s)


def _build_pool(driver: str, name: str, kept: list[ResourceSlice], features: Features,
                all_in_pool: Sequence[ResourceSlice] | None) -> Pool:
    """`buildPool`: sort, validate, split off the counter-set slices and the slices on other nodes."""
    kept = sorted(kept, key=lambda s: s.name)
    if features.partitionable_devices:
        device_slices = [s for s in kept if not s.spec.shared_counters]
        counter_slices = [s for s in kept if s.spec.shared_counters]
    else:
        device_slices, counter_slices = kept, []
    reason = _duplicate_device_name(device_slices)
    if reason:
        return Pool(driver, name, is_invalid=True, invalid_reason=reason)
    has_conditions = any(d.binding_conditions for s in device_slices for d in s.spec.devices)
    if not features.partitionable_devices:
        return Pool(driver, name, slices=tuple(device_slices), has_binding_conditions=has_conditions)
    counter_sets: dict[str, CounterSet] = {}
    for s in counter_slices:
        for cs in s.spec.shared_counters:
            if cs.name in counter_sets:
                return Pool(driver, name, is_invalid=True, invalid_reason=f"duplicate counter set name {cs.name}")
            counter_sets[cs.name] = cs
    reason = _bad_counter_reference(counter_sets, kept)
    if reason:
        return Pool(driver, name, is_invalid=True, invalid_reason=reason)
    others: tuple[ResourceSlice, ...] = ()
    if all_in_pool is not None and len(kept) != len(all_in_pool):
        names = {s.name for s in kept}
        others = tuple(s for s in all_in_pool if s.name not in names)
        reason = _bad_counter_reference(counter_sets, others)
        if reason:
            return Pool(driver, name, is_invalid=True, invalid_reason=reason)
    return Pool(driver, name, slices=tuple(device_slices), other_slices=others, counter_sets=counter_sets,
                has_binding_conditions=has_conditions)


def _duplicate_device_name(slices: Sequence[ResourceSlice]) -> str:
    seen: set[str] = set()
    for s in slices:
        for d in s.spec.devices:
            if d.name in seen:
                return f"duplicate device name {d.name}"
            seen.add(d.name)
    return ""


def _bad_counter_reference(counter_sets: dict[str, CounterSet], slices: Iterable[ResourceSlice]) -> str:
    for s in slices:
        for d in s.spec.devices:
            for c in d.consumes_counters:
                cs = counter_sets.get(c.counter_set)
                if cs is None:
                    return f"counter set {c.counter_set} not found"
                for counter in c.counters:
                    if counter not in cs.counters:
                        return f"counter {counter} not found in counter set {cs.name}"
    return ""
