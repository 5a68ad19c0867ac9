"""The devices already allocated, as the scheduler gathers them once per pod attempt
(`GatherAllocatedState`, `pkg/scheduler/framework/plugins/dynamicresources/dra_manager.go`, from
`allocateddevices.go`'s `foreachAllocatedDevice`).

Owns: `AllocatedState`, built from every claim's `status.allocation` (whether or not its pods still
exist; in-flight allocations are the caller's to add with `with_results`):
- a result with `adminAccess: true` is never counted as allocated (it is remembered only so that
  `diagnose` can name who looks at a device);
- with ConsumableCapacity on, a result with a `shareID` is a share: it counts by share ID and adds
  its `consumedCapacity` to the device's aggregated consumption, and does not make the device
  dedicated; with it off, every result is dedicated;
- every other result makes its device dedicated.
Unlike upstream's informer-fed sets, each device remembers the claim keys (`namespace/name`) that
hold it, so `explain` can say who holds a GPU, and `without(keys)` frees a device only when no
other claim still holds it.

`without(claim_keys)` takes claims away (a victim's claims, deallocated); `with_results(...)` adds
allocations (in flight, or planned for the pods of a queue). Both return a new state; the old one is
unchanged. Must not do I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kresched.model.dra import AllocationResult, ResourceClaim, quantity_value
from kresched.sched.dra.pools import DeviceID
from kresched.sched.layered import Draft, Layered

__all__ = ["AllocatedState"]

#: (driver, pool, device, shareID).
SharedDeviceID = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class _Contribution:
    """What one claim's allocation adds to the state."""

    dedicated: tuple[DeviceID, ...] = ()
    shared: tuple[SharedDeviceID, ...] = ()
    capacity: tuple[tuple[DeviceID, tuple[tuple[str, Fraction], ...]], ...] = ()
    admin: tuple[DeviceID, ...] = ()


def _contribution(allocation: AllocationResult, consumable_capacity: bool) -> _Contribution:
    dedicated: list[DeviceID] = []
    shared: list[SharedDeviceID] = []
    capacity = []
    admin: list[DeviceID] = []
    for r in allocation.devices.results:
        device_id = (r.driver, r.pool, r.device)
        if r.admin_access:
            admin.append(device_id)
            continue
        if consumable_capacity and r.share_id is not None:
            shared.append((*device_id, r.share_id))
            if r.consumed_capacity:
                capacity.append((device_id, tuple((k, quantity_value(v)) for k, v in r.consumed_capacity.items())))
            continue
        dedicated.append(device_id)
    return _Contribution(tuple(dedicated), tuple(shared), tuple(capacity), tuple(admin))


@dataclass(frozen=True, slots=True)
class AllocatedState:
    """Devices in use by claims other than the ones being allocated.

    `dedicated` maps a device to the claim keys holding it exclusively; `shared_ids` holds the
    (device, shareID) pairs of shares; `capacity` the device's aggregated consumed capacity by
    name; `shared_holders` and `admin_holders` the claim keys behind shares and admin access.
    """

    dedicated: Mapping[DeviceID, tuple[str, ...]] = field(default_factory=dict)
    shared_ids: frozenset[SharedDeviceID] = frozenset()
    capacity: Mapping[DeviceID, Mapping[str, Fraction]] = field(default_factory=dict)
    shared_holders: Mapping[DeviceID, tuple[str, ...]] = field(default_factory=dict)
    admin_holders: Mapping[DeviceID, tuple[str, ...]] = field(default_factory=dict)
    consumable_capacity: bool = True
    _by_claim: Mapping[str, _Contribution] = field(default_factory=dict, repr=False, compare=False)
    shared_devices: frozenset[DeviceID] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shared_devices", frozenset(s[:3] for s in self.shared_ids))

    @classmethod
    def from_claims(cls, claims: Iterable[ResourceClaim], *, consumable_capacity: bool = True) -> AllocatedState:
        """The state every claim's `status.allocation` gives (`GatherAllocatedState`)."""
        return cls(consumable_capacity=consumable_capacity).with_results(
            (c.key, c.status.allocation) for c in claims if c.status.allocation is not None)

    @classmethod
    def from_ids(cls, devices: Iterable[DeviceID] = (), shared_ids: Iterable[SharedDeviceID] = (),
                 capacity: Mapping[DeviceID, Mapping[str, Fraction]] | None = None) -> AllocatedState:
        """A state given as upstream's tests give it: device IDs held by no named claim."""
        return cls(dedicated=dict.fromkeys(devices, ()), shared_ids=frozenset(shared_ids),
                   capacity={d: dict(c) for d, c in (capacity or {}).items()})

    # -- what the allocator asks ---------------------------------------------------------------------

    def is_dedicated(self, device_id: DeviceID) -> bool:
        return device_id in self.dedicated

    def is_allocated(self, device_id: DeviceID) -> bool:
        """`IsDeviceAllocated`: dedicated, shared under some share ID, or with consumed capacity."""
        return device_id in self.dedicated or device_id in self.capacity or device_id in self.shared_devices

    def holders(self, device_id: DeviceID) -> tuple[str, ...]:
        """The keys of the claims that hold the device, dedicated or shared (not admin access)."""
        return (*self.dedicated.get(device_id, ()), *self.shared_holders.get(device_id, ()))

    # -- changes -------------------------------------------------------------------------------------

    def with_results(self, allocations: Iterable[tuple[str, AllocationResult]]) -> AllocatedState:
        """This state plus the given claims' allocations (claim key, result); a key already present
        is replaced."""
        pairs = list(allocations)
        replaced = [key for key, _ in pairs if key in self._by_claim]
        base = self.without(replaced) if replaced else self
        dedicated = _draft(base.dedicated)
        shared_holders = _draft(base.shared_holders)
        admin_holders = _draft(base.admin_holders)
        shared_ids = set(base.shared_ids)
        capacity = {k: dict(v) for k, v in base.capacity.items()}
        by_claim = _draft(base._by_claim)
        for key, allocation in pairs:
            c = _contribution(allocation, self.consumable_capacity)
            by_claim[key] = c
            for d in c.dedicated:
                dedicated[d] = (*dedicated.get(d, ()), key)
            for s in c.shared:
                shared_ids.add(s)
                shared_holders[s[:3]] = (*shared_holders.get(s[:3], ()), key)
            for d, amounts in c.capacity:
                total = capacity.setdefault(d, {})
                for name, value in amounts:
                    total[name] = total.get(name, Fraction(0)) + value
            for d in c.admin:
                admin_holders[d] = (*admin_holders.get(d, ()), key)
        return AllocatedState(dedicated.done(), frozenset(shared_ids), capacity, shared_holders.done(),
                              admin_holders.done(), self.consumable_capacity, by_claim.done())

    def without(self, claim_keys: Iterable[str]) -> AllocatedState:
        """This state with the given claims deallocated; unknown keys are ignored."""
        gone = {k for k in claim_keys if k in self._by_claim}
        if not gone:
            return self
        dedicated = _draft(self.dedicated)
        shared_holders = _draft(self.shared_holders)
        admin_holders = _draft(self.admin_holders)
        shared_ids = set(self.shared_ids)
        capacity = {k: dict(v) for k, v in self.capacity.items()}
        for key in gone:
            c = self._by_claim[key]
            for d in c.dedicated:
                _drop_holder(dedicated, d, key)
            for s in c.shared:
                shared_ids.discard(s)
                _drop_holder(shared_holders, s[:3], key)
            for d, amounts in c.capacity:
                total = capacity.get(d)
                if total is None:
                    continue
                for name, value in amounts:
                    if name in total:
                        total[name] -= value
                # ConsumedCapacityCollection.Remove: the device is dropped once nothing is consumed.
                if all(v == 0 for v in total.values()):
                    del capacity[d]
            for d in c.admin:
                _drop_holder(admin_holders, d, key)
        return AllocatedState(dedicated.done(), frozenset(shared_ids), capacity, shared_holders.done(),
                              admin_holders.done(), self.consumable_capacity,
                              _layered(self._by_claim).changed(gone=gone))


def _layered(m: Mapping[Any, Any]) -> Layered[Any, Any]:
    """`m` as a `Layered` (a state built from plain dicts, as upstream's tests give it, has them)."""
    return m if isinstance(m, Layered) else Layered(m)


def _draft(m: Mapping[Any, Any]) -> Draft[Any, Any]:
    """A draft of `m`: a derived state holds only what changed (the maps are as large as the claims)."""
    return _layered(m).draft()


def _drop_holder(holders: Draft[DeviceID, tuple[str, ...]], device_id: DeviceID, key: str) -> None:
    rest = list(holders.get(device_id, ()))
    if key in rest:
        rest.remove(key)
    if rest:
        holders[device_id] = tuple(rest)
    else:
        holders.pop(device_id, None)
