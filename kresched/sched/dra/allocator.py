"""The device allocator kube-scheduler v1.36 runs with its default feature gates: the "incubating"
variant (`structured/internal/incubating/allocator_incubating.go`), ported step by step.

Owns: `Allocator` (one per pod attempt, as PreFilter builds one; `allocate(node, claims)` per node)
and its outcome: a `NodeAllocation` (one `AllocationResult` per claim, in claim order, with the
results and node selector upstream records), `None` for "cannot allocate all claims", or an
`AllocationError` with upstream's text (fatal: the Filter's Error status), of which
`AllocationFailedOnNode` is the one kind that only rejects that node (`ErrFailedAllocationOnNode`:
"invalid resource pools were encountered").

The search (`allocateOne`), in upstream's order:
1. Claims in the given order, requests in `spec.devices.requests` order; a `firstAvailable`
   request tries its subrequests in order and keeps the first that lets everything after it fit.
2. For each device a request needs: devices in pool, slice and device order (`pools`), only
   combinations within one request (the next device starts after the previous one); the first
   complete solution wins, and a dead end backtracks into earlier devices, requests and claims.
3. A device is skipped if in use (allocated in `AllocatedState`, or picked in this attempt; an
   admin-access request only skips devices picked for the same claim), if not selectable (binding
   conditions with that feature off; the class's selectors, then the request's, all CEL; a
   per-device node selection that misses the node), or if the request's capacity does not fit.
4. Then `allocateDevice`: counters of partitionable devices must stay non-negative, taints with
   effect NoSchedule/NoExecute must be tolerated by the request, and the claim's constraints hold.
5. `All` lists every selectable device first (every pool the node sees must be complete and valid,
   else a fatal error) and needs at least one, all of them free. At most 32 devices per claim: a
   claim whose minimum is larger is a fatal error, and the search backtracks past the limit.

Upstream's counter bookkeeping is replicated, bugs included: available and consumed counters are
keyed by *pool name only* (two drivers' pools of one name share them), and a device's counters are
added before its taints and constraints are checked and not taken back when those reject it (nor
when a device that allows multiple allocations is rolled back) — consumption leaks within one
`allocate` call. Share IDs, random UUIDs upstream, are derived from the claim, request and device
here, so that a run is deterministic. Must not do I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import msgspec

from kresched.model.dra import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    AllocationResult,
    Device,
    DeviceAllocationResult,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceTaint,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
    quantity_value,
)
from kresched.model.objects import Node
from kresched.model.specs import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kresched.sched.dra import capacity as cap
from kresched.sched.dra.allocated import AllocatedState
from kresched.sched.dra.constraints import DistinctAttribute, MatchAttribute
from kresched.sched.dra.pools import DEFAULT_FEATURES, DeviceEntry, DeviceID, Features, NodePools, SliceIndex

__all__ = ["ALLOCATION_RESULTS_MAX_SIZE", "AllocationError", "AllocationFailedOnNode", "Allocator", "Features",
           "NodeAllocation", "Picks", "claim_ref", "taint_prevents_allocation"]

#: `resourceapi.AllocationResultsMaxSize`.
ALLOCATION_RESULTS_MAX_SIZE = 32
INVALID_POOLS = "invalid resource pools were encountered"

_FAIL, _DONE, _EXCEEDED = 0, 1, 2


class AllocationError(Exception):
    """A fatal allocation error: the scheduler's Filter returns Error and the cycle stops."""


class AllocationFailedOnNode(AllocationError):
    """`ErrFailedAllocationOnNode`: Unschedulable(AndUnresolvable) on this node only."""


@dataclass(frozen=True, slots=True)
class NodeAllocation:
    """What allocation on one node gives: one result per claim, in claim order."""

    claim_results: tuple[AllocationResult, ...]


def claim_ref(claim: ResourceClaim) -> str:
    """`klog.KObj(claim)`: `namespace/name`, or the name alone when there is no namespace."""
    return f"{claim.namespace}/{claim.name}" if claim.namespace else claim.name


def _tolerates(t: DeviceToleration, taint: DeviceTaint) -> bool:
    """`resourceclaim.ToleratesTaint`."""
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    if t.operator in ("", "Equal"):
        return t.value == taint.value
    return t.operator == "Exists"


def taint_prevents_allocation(device: Device, tolerations: Sequence[DeviceToleration]) -> bool:
    """A NoSchedule or NoExecute taint no toleration tolerates; other effects are ignored."""
    return any(taint.effect in ("NoSchedule", "NoExecute") and not any(_tolerates(t, taint) for t in tolerations)
               for taint in device.taints)


class _Request:
    """One request, or one subrequest of a `firstAvailable` request (`requestData`)."""

    __slots__ = ("admin", "all_devices", "capacity", "class_", "class_name", "full_name", "has_admin", "mode",
                 "name", "num_devices", "parent", "selectors", "tolerations")

    def __init__(self, name: str, parent: str | None, spec: Any) -> None:
        self.name = name
        self.parent = parent
        self.full_name = f"{parent}/{name}" if parent is not None else name
        self.class_name: str = spec.device_class_name
        self.mode: str = spec.mode
        self.num_devices: int = spec.exact_count if self.mode == ALLOCATION_MODE_EXACT_COUNT else 0
        self.admin = bool(spec.admin_access)
        self.has_admin = spec.admin_access is not None
        self.selectors = spec.selectors
        self.tolerations: tuple[DeviceToleration, ...] = spec.tolerations
        self.capacity = spec.capacity.requests if spec.capacity is not None else None
        self.class_: DeviceClass | None = None
        self.all_devices: list[DeviceEntry] = []

    @property
    def base_and_sub(self) -> tuple[str, str]:
        return (self.parent, self.name) if self.parent is not None else (self.name, "")


#: Where a first fit took the devices: per claim, (request, subrequest, place among the node's
#: devices) per device of its result (`Allocator.allocate_picks`).
Picks = tuple[tuple[tuple[int, int, int], ...], ...]


class _Picked:
    __slots__ = ("consumed", "entry", "request", "share_id")

    def __init__(self, request: _Request, entry: DeviceEntry, share_id: str | None,
                 consumed: dict[str, cap.Amount] | None) -> None:
        self.request = request
        self.entry = entry
        self.share_id = share_id
        self.consumed = consumed


def _default_cel() -> tuple[Callable[[str], Any], Callable[[str, Device], Any], type[Exception]]:
    """The real CEL layer, imported only when the caller gives no compiler of its own."""
    from kresched.sched.dra import cel

    def view(driver: str, device: Device) -> Any:
        capacity: dict[str, dict[str, Any]] = {}
        for name, c in device.capacity.items():
            domain, slash, ident = name.partition("/")
            if not slash:
                domain, ident = driver, name
            capacity.setdefault(domain, {})[ident] = c.value
        return cel.DeviceView(driver=driver, attributes=cel.qualify_attributes(driver, device.attributes),
                              capacity=capacity, allow_multiple_allocations=bool(device.allow_multiple_allocations))

    return cel.compile_selector, view, cel.CelError


class Allocator:
    """One pod attempt's allocator: the classes, slices and allocated state frozen at PreFilter.

    `index` (a `SliceIndex` of the same slices, shared by every pod of a run) keeps the pools of each
    node and whether a device passes a class's selectors; without one, this allocator makes its own.
    `compile_selector(expression)` returns an object with `matches(view) -> bool` and raises the CEL
    layer's `CelError` (`cel_error`); `device_view(driver, device)` builds the view it reads. All three
    default to `kresched.sched.dra.cel`.
    """

    def __init__(self, classes: Iterable[DeviceClass] | Mapping[str, DeviceClass], slices: Iterable[ResourceSlice],
                 allocated: AllocatedState, *, compile_selector: Callable[[str], Any] | None = None,
                 device_view: Callable[[str, Device], Any] | None = None,
                 cel_error: type[Exception] | None = None, features: Features = DEFAULT_FEATURES,
                 index: SliceIndex | None = None) -> None:
        self.classes = dict(classes) if isinstance(classes, Mapping) else {c.name: c for c in classes}
        if index is None or index.features != features:
            index = SliceIndex(slices, features)
        self.index = index
        self.allocated = allocated
        self.features = features
        if compile_selector is None or device_view is None or cel_error is None:
            default_compile, default_view, default_error = _default_cel()
            compile_selector = compile_selector or default_compile
            device_view = device_view or default_view
            cel_error = cel_error or default_error
        self._compile = compile_selector
        self._view = device_view
        self._cel_error = cel_error
        #: Available counters per pool *name* (upstream's keying), from the allocated state.
        self._available: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.num_allocate_one_invocations = 0

    def allocate(self, node: Node, claims: Sequence[ResourceClaim]) -> NodeAllocation | None:
        """Allocate every claim on `node`, or None ("cannot allocate all claims"); raises
        `AllocationError` (fatal) or `AllocationFailedOnNode`."""
        return _Attempt(self, node, claims).run()

    def allocate_picks(self, node: Node, claims: Sequence[ResourceClaim]) -> tuple[NodeAllocation | None, Picks]:
        """`allocate`, and where its first fit took the devices (`Picks`; () where none fits)."""
        attempt = _Attempt(self, node, claims)
        result = attempt.run()
        return result, attempt.picks() if result is not None else ()

    def replay(self, node: Node, claims: Sequence[ResourceClaim], picks: Picks) -> NodeAllocation:
        """The allocation that takes the devices at `picks` among `node`'s (what `allocate_picks`
        found on a node whose devices the search reads alike: its first fit here too)."""
        return _Attempt(self, node, claims).replayed(picks)

    # -- shared between attempts ---------------------------------------------------------------------

    def pools_for(self, node: Node) -> NodePools:
        return self.index.pools_for(node.name, node.metadata.labels)

    def selector_failure(self, device: Device, driver: str,
                         selectors: Sequence[Any]) -> tuple[int, str, str] | bool | None:
        """Evaluate selectors on a device, cached per run for every device alike (`signature`): True
        if all match, False if one does not, or (index, "compile"|"runtime", detail) for a CEL error."""
        key = (self.signature(driver, device), tuple(s.cel.expression if s.cel is not None else None
                                                     for s in selectors))
        results = self.index.selector_results
        outcome = results.get(key)
        if outcome is None:
            outcome = results[key] = self._evaluate(device, driver, selectors)
        return outcome

    def signature(self, driver: str, device: Device) -> bytes:
        """All a selector reads of a device (`DeviceView`: its driver, attributes, capacity and whether
        it allows multiple allocations; not its name): devices with equal signatures — a model's GPUs
        on every node, but for their index — get the same outcome of every selector."""
        kept = self.index.signatures
        hit = kept.get(id(device))
        if hit is not None and hit[0] is device:
            return hit[1]
        sig = msgspec.json.encode((driver, device.attributes, device.capacity, device.allow_multiple_allocations))
        kept[id(device)] = (device, sig)
        return sig

    def _evaluate(self, device: Device, driver: str, selectors: Sequence[Any]) -> Any:
        from_cel = self._cel_error
        view = None
        for i, selector in enumerate(selectors):
            try:
                compiled = self._compile(selector.cel.expression)
            except from_cel as e:
                return i, "compile", str(e)
            if view is None:
                view = self.index.views.get(id(device))
                if view is None:
                    view = self._view(driver, device)
                    self.index.views[id(device)] = view
            try:
                ok = compiled.matches(view)
            except from_cel as e:
                return i, "runtime", str(e)
            if not ok:
                return False
        return True

    def available_counters(self, entry: DeviceEntry) -> dict[str, dict[str, Fraction]]:
        """The pool's counters less what allocated devices anywhere in the pool consume (per pool name)."""
        pool = entry.pool
        hit = self._available.get(pool.name)
        if hit is not None:
            return hit
        available = {name: {c: quantity_value(v.value) for c, v in cs.counters.items()}
                     for name, cs in pool.counter_sets.items()}
        for s in (*pool.slices, *pool.other_slices):
            for d in s.spec.devices:
                if not self.allocated.is_allocated((s.spec.driver, s.spec.pool.name, d.name)):
                    continue
                for c in d.consumes_counters:
                    counters = available.get(c.counter_set)
                    if counters is None:
                        continue
                    for name, v in c.counters.items():
                        if name in counters:
                            counters[name] -= quantity_value(v.value)
        self._available[pool.name] = available
        return available


class _Attempt:
    """One `Allocate` call: the search's state (`allocator` upstream)."""

    def __init__(self, owner: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> None:
        self.owner = owner
        self.features = owner.features
        self.node = node
        self.claims = claims
        self.requests: list[list[list[_Request]]] = []
        self.selected: list[list[int]] = []
        self.constraints: list[list[MatchAttribute | DistinctAttribute]] = []
        self.results: list[list[_Picked]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.matches: dict[tuple[int, int], bool] = {}

    # -- setup ---------------------------------------------------------------------------------------

    def _prepare(self) -> None:
        """The node's pools and devices, and the claims' requests."""
        self.node_pools = self.owner.pools_for(self.node)
        self.entries = self.node_pools.entries
        for ci, claim in enumerate(self.claims):
            self._prepare_claim(ci, claim)

    def run(self) -> NodeAllocation | None:
        self._prepare()
        outcome = self._one(0, 0, 0, 0, False, 0)
        if outcome != _DONE:
            if self.node_pools.has_invalid:
                raise AllocationFailedOnNode(INVALID_POOLS)
            return None
        return NodeAllocation(tuple(self._result(ci, claim) for ci, claim in enumerate(self.claims)))

    def picks(self) -> Picks:
        """Per claim, each device the search took: (request, subrequest, its place in the node's
        devices), in the order of the result."""
        place = {id(e): k for k, e in enumerate(self.entries)}
        out = []
        for ci, picked in enumerate(self.results):
            which = {id(r): (ri, si) for ri, alts in enumerate(self.requests[ci]) for si, r in enumerate(alts)}
            out.append(tuple((*which[id(p.request)], place[id(p.entry)]) for p in picked))
        return tuple(out)

    def replayed(self, picks: Picks) -> NodeAllocation:
        """`run`'s result where the search took the devices at `picks` (nothing shared or consumed)."""
        self._prepare()
        for ci, taken in enumerate(picks):
            self.results[ci] = [_Picked(self.requests[ci][ri][si], self.entries[k], None, None) for ri, si, k in taken]
        return NodeAllocation(tuple(self._result(ci, claim) for ci, claim in enumerate(self.claims)))

    def _prepare_claim(self, ci: int, claim: ResourceClaim) -> None:
        ref = claim_ref(claim)
        per_claim: list[list[_Request]] = []
        minimum = 0
        for ri, request in enumerate(claim.requests):
            if request.first_available and not self.features.prioritized_list:
                raise AllocationError(f"claim {ref}, request {request.name}: has subrequests, "
                                      "but the DRAPrioritizedList feature is disabled")
            if not self.features.consumable_capacity:
                if request.exactly is not None and request.exactly.capacity is not None:
                    raise AllocationError(f"claim {ref}, request {request.name}: has capacity requests, "
                                          "but the DRAConsumableCapacity feature is disabled")
                for sub in request.first_available:
                    if sub.capacity is not None:
                        raise AllocationError(f"claim {ref}, subrequest {sub.name}: has capacity requests, "
                                              "but the DRAConsumableCapacity feature is disabled")
            if request.first_available:
                alts = [self._validate(ci, ri, si, claim, _Request(sub.name, request.name, sub))
                        for si, sub in enumerate(request.first_available)]
                minimum += min(r.num_devices for r in alts)
            else:
                spec = request.exactly
                if spec is None:
                    raise AllocationError(f"claim {ref}, request {request.name}: missing device class name "
                                          "(unsupported request type?)")
                alts = [self._validate(ci, ri, 0, claim, _Request(request.name, None, spec))]
                minimum += alts[0].num_devices
            per_claim.append(alts)
        if minimum > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocationError(f"claim {ref}: number of requested devices {minimum} exceeds the claim limit "
                                  f"of {ALLOCATION_RESULTS_MAX_SIZE}")
        constraints: list[MatchAttribute | DistinctAttribute] = []
        for i, c in enumerate(claim.spec.devices.constraints):
            if c.match_attribute is not None:
                constraints.append(MatchAttribute(c.match_attribute, c.requests))
            elif c.distinct_attribute is not None:
                constraints.append(DistinctAttribute(c.distinct_attribute, c.requests))
            else:
                raise AllocationError(f"claim {ref}, constraint #{i}: empty constraint (unsupported constraint type?)")
        self.requests.append(per_claim)
        self.selected.append([0] * len(per_claim))
        self.constraints.append(constraints)

    def _validate(self, ci: int, ri: int, si: int, claim: ResourceClaim, req: _Request) -> _Request:
        """`validateDeviceRequest`."""
        ref = claim_ref(claim)
        for i, selector in enumerate(req.selectors):
            if selector.cel is None:
                raise AllocationError(f"claim {ref}, request {req.name}, selector #{i}: CEL expression empty "
                                      "(unsupported selector type?)")
        if not self.features.admin_access and req.has_admin:
            raise AllocationError(f"claim {ref}, request {req.name}: admin access is requested, "
                                  "but the feature is disabled")
        if not req.class_name:
            raise AllocationError(f"claim {ref}, request {req.name}: missing device class name "
                                  "(unsupported request type?)")
        cls = self.owner.classes.get(req.class_name)
        if cls is None:
            raise AllocationError(f"claim {ref}, request {req.name}: could not retrieve device class "
                                  f'{req.class_name}: deviceclass.resource.k8s.io "{req.class_name}" not found')
        req.class_ = cls
        if req.mode == ALLOCATION_MODE_EXACT_COUNT:
            return req
        if req.mode != ALLOCATION_MODE_ALL:
            raise AllocationError(f"claim {ref}, request {req.name}: unsupported count mode {req.mode}")
        for pool in self.node_pools.pools:
            if pool.is_incomplete:
                raise AllocationError(f"claim {ref}, request {req.name}: asks for all devices, but resource pool "
                                      f"{pool.pool_id} is currently being updated")
            if pool.is_invalid:
                raise AllocationError(f"claim {ref}, request {req.name}: asks for all devices, but resource pool "
                                      f"{pool.pool_id} is currently invalid")
            for entry in self.entries:
                if entry.pool is not pool:
                    continue
                if not self._selectable(ci, ri, si, req, entry):
                    continue
                if self.features.consumable_capacity and not self._capacity_fits(req, entry):
                    continue
                req.all_devices.append(entry)
        req.num_devices = len(req.all_devices)
        return req

    # -- the search ----------------------------------------------------------------------------------

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> int:
        """`allocateOne`: DONE when everything from here on is allocated."""
        self.owner.num_allocate_one_invocations += 1
        if ci >= len(self.claims):
            return _DONE
        per_claim = self.requests[ci]
        if ri >= len(per_claim):
            outcome = self._one(ci + 1, 0, 0, 0, False, 0)
            return _FAIL if outcome == _EXCEEDED else outcome
        alts = per_claim[ri]
        req = alts[si]
        if not in_sub and req.parent is not None:
            all_exceeded = True
            for sub in range(len(alts)):
                outcome = self._one(ci, ri, sub, di, True, 0)
                if outcome == _EXCEEDED:
                    continue
                all_exceeded = False
                if outcome == _DONE:
                    self.selected[ci][ri] = sub
                    return _DONE
            return _EXCEEDED if all_exceeded else _FAIL
        do_all = req.mode == ALLOCATION_MODE_ALL
        if do_all and not req.all_devices:
            return _FAIL
        if di >= req.num_devices:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + req.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            return _EXCEEDED
        if do_all:
            undo = self._allocate_device(ci, req, req.all_devices[di], must=True)
            if undo is None:
                return _FAIL
            outcome = self._one(ci, ri, si, di + 1, in_sub, 0)
            if outcome != _DONE:
                undo()
            return outcome
        entries = self.entries
        for idx in range(start, len(entries)):
            entry = entries[idx]
            if req.admin:
                if ci in self.allocating.get(entry.id, ()):
                    continue
            elif self._in_use(entry.id):
                continue
            if not self._selectable(ci, ri, si, req, entry):
                continue
            if self.features.consumable_capacity and not self._capacity_fits(req, entry):
                continue
            undo = self._allocate_device(ci, req, entry, must=False)
            if undo is None:
                continue
            outcome = self._one(ci, ri, si, di + 1, in_sub, idx + 1)
            if outcome == _DONE:
                return _DONE
            undo()
            if outcome == _EXCEEDED:
                return _EXCEEDED
        return _FAIL

    def _in_use(self, device_id: DeviceID) -> bool:
        return self.owner.allocated.is_dedicated(device_id) or bool(self.allocating.get(device_id))

    def _selectable(self, ci: int, ri: int, si: int, req: _Request, entry: DeviceEntry) -> bool:
        """`isSelectable`: class selectors, then the request's, then a per-device node selection."""
        device = entry.device
        if not self.features.device_binding_and_status and device.binding_conditions:
            return False
        key = (id(entry), id(req))
        hit = self.matches.get(key)
        if hit is not None:
            return hit
        ok = self._selectors_match(ci, entry, req.class_, req.class_.spec.selectors if req.class_ else ())
        ok = ok and self._selectors_match(ci, entry, None, req.selectors)
        ok = ok and entry.node_ok
        self.matches[key] = ok
        return ok

    def _selectors_match(self, ci: int, entry: DeviceEntry, cls: DeviceClass | None, selectors: Sequence[Any]) -> bool:
        if not selectors:
            return True
        outcome = self.owner.selector_failure(entry.device, entry.id[0], selectors)
        if isinstance(outcome, tuple):
            i, kind, detail = outcome
            who = f"class {cls.name}" if cls is not None else f"claim {claim_ref(self.claims[ci])}"
            raise AllocationError(f"{who}: selector #{i}: CEL {kind} error: {detail}")
        return bool(outcome)

    def _capacity_fits(self, req: _Request, entry: DeviceEntry) -> bool:
        return cap.fits(req.capacity, entry.device.capacity, self.owner.allocated.capacity.get(entry.id),
                        self.allocating_capacity.get(entry.id))

    def _allocate_device(self, ci: int, req: _Request, entry: DeviceEntry, must: bool) -> Callable[[], None] | None:
        """`allocateDevice`: the device's availability, counters, taints and the claim's constraints;
        on success the attempt's state holds the device and the returned function takes it back."""
        device_id = entry.id
        multi = self.features.consumable_capacity and entry.allow_multiple
        if not multi and req.admin and ci in self.allocating.get(device_id, ()):
            return None
        if not req.admin and self._in_use(device_id):
            return None
        if not self.features.partitionable_devices and entry.consumes:
            return None
        skip_counters = multi and (device_id in self.owner.allocated.capacity
                                   or device_id in self.allocating_capacity)
        if not skip_counters and entry.consumes and not self._take_counters(entry):
            return None
        base, sub = req.base_and_sub
        if self.features.device_taints and taint_prevents_allocation(entry.device, req.tolerations):
            return None
        constraints = self.constraints[ci]
        driver = device_id[0]
        for i, constraint in enumerate(constraints):
            if not constraint.add(base, sub, entry.device, driver):
                if must:
                    raise AllocationError(f"claim {claim_ref(self.claims[ci])}, request {req.name}: cannot add device "
                                          f"{'/'.join(device_id)} because a claim constraint would not be satisfied")
                for earlier in constraints[:i]:
                    earlier.remove(base, sub, entry.device, driver)
                return None
        holders = self.allocating.setdefault(device_id, set())
        if not multi:
            holders.add(ci)
        consumed: dict[str, cap.Amount] | None = None
        share_id = None
        if self.features.consumable_capacity:
            if not self._capacity_fits(req, entry):
                return None
            if multi:
                consumed = cap.consumed_capacity(req.capacity, entry.device.capacity)
                share_id = self._share_id(ci, req, device_id)
                total = self.allocating_capacity.setdefault(device_id, {})
                for name, (value, _) in consumed.items():
                    total[name] = total.get(name, Fraction(0)) + value
        picked = self.results[ci]
        picked.append(_Picked(req, entry, share_id, consumed or None))
        mark = len(picked) - 1

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(base, sub, entry.device, driver)
            holders.discard(ci)
            if multi:
                if consumed:
                    self._release_capacity(device_id, consumed)
            elif self.features.partitionable_devices and entry.consumes:
                self._release_counters(entry)
            del picked[mark:]

        return undo

    def _release_capacity(self, device_id: DeviceID, consumed: dict[str, cap.Amount]) -> None:
        total = self.allocating_capacity.get(device_id)
        if total is None:
            return
        for name, (value, _) in consumed.items():
            if name in total:
                total[name] -= value
        if all(v == 0 for v in total.values()):
            del self.allocating_capacity[device_id]

    def _share_id(self, ci: int, req: _Request, device_id: DeviceID) -> str:
        seed = "\0".join((claim_ref(self.claims[ci]), req.full_name, *device_id, str(len(self.results[ci]))))
        h = hashlib.sha256(seed.encode()).hexdigest()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"

    def _take_counters(self, entry: DeviceEntry) -> bool:
        """`checkAvailableCounters`: add the device's consumption; undo it and fail if any counter
        of the pool would go below zero."""
        available = self.owner.available_counters(entry)
        consumed = self.consumed_counters.setdefault(entry.pool.name, {})
        for set_name, counters in entry.consumes:
            into = consumed.setdefault(set_name, {})
            for name, value in counters:
                into[name] = into.get(name, Fraction(0)) + value
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for name, value in counters.items():
                if value < used.get(name, 0):
                    self._release_counters(entry)
                    return False
        return True

    def _release_counters(self, entry: DeviceEntry) -> None:
        consumed = self.consumed_counters.get(entry.pool.name, {})
        for set_name, counters in entry.consumes:
            into = consumed.setdefault(set_name, {})
            for name, value in counters:
                into[name] = into.get(name, Fraction(0)) - value

    # -- the result ----------------------------------------------------------------------------------

    def _result(self, ci: int, claim: ResourceClaim) -> AllocationResult:
        with_conditions = self.features.device_binding_and_status
        results = tuple(
            DeviceRequestAllocationResult(
                request=p.request.full_name, driver=p.entry.id[0], pool=p.entry.id[1], device=p.entry.id[2],
                admin_access=True if p.request.admin else None, tolerations=p.request.tolerations,
                binding_conditions=p.entry.device.binding_conditions if with_conditions else (),
                binding_failure_conditions=p.entry.device.binding_failure_conditions if with_conditions else (),
                share_id=p.share_id,
                consumed_capacity={k: text for k, (_, text) in p.consumed.items()} if p.consumed else {})
            for p in self.results[ci])
        return AllocationResult(devices=DeviceAllocationResult(results=results),
                                node_selector=self._node_selector(claim, self.results[ci]))

    def _node_selector(self, claim: ResourceClaim, picked: list[_Picked]) -> NodeSelector | None:
        """`createNodeSelector`: the node itself if any device is node-local or binds to the node;
        else the merged single terms of the slices' (or devices') node selectors; else None."""
        fields: list[NodeSelectorRequirement] = []
        expressions: list[NodeSelectorRequirement] = []
        for p in picked:
            spec = p.entry.slice.spec
            device = p.entry.device
            if spec.per_device_node_selection:
                node_name, selector = device.node_name, device.node_selector
            else:
                node_name, selector = spec.node_name, spec.node_selector
            if node_name is not None or device.binds_to_node:
                return _local_selector(self.node.name)
            if selector is None:
                continue
            terms = selector.node_selector_terms
            if len(terms) > 1:
                raise AllocationError(f"create NodeSelector for claim {claim.name}: unsupported "
                                      f"ResourceSlice.NodeSelector with {len(terms)} terms")
            if terms:
                _add_requirements(terms[0].match_fields, fields)
                _add_requirements(terms[0].match_expressions, expressions)
        if fields or expressions:
            return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_expressions=tuple(expressions),
                                                                      match_fields=tuple(fields)),))
        return None


def _local_selector(node_name: str) -> NodeSelector:
    return NodeSelector(node_selector_terms=(NodeSelectorTerm(match_fields=(
        NodeSelectorRequirement(key="metadata.name", operator="In", values=(node_name,)),)),))


def _add_requirements(new: Iterable[NodeSelectorRequirement], into: list[NodeSelectorRequirement]) -> None:
    for r in new:
        if not any(e.key == r.key and e.operator == r.operator and set(e.values) == set(r.values) for e in into):
            into.append(r)
