"""Which claims hold devices in a simulated cluster: a `Snapshot.index` carried down simulations.

The scheduler reads the allocated devices from every ResourceClaim's `status.allocation`
(`GatherAllocatedState`). kresched's simulations change the cluster: a pod placed there gets its
claims allocated (as the scheduler's Reserve and PreBind would: the first-fit allocation on the
node it lands on, what its Filter found), a pod taken away gives them back as the cluster would —
a claim is deallocated by the resourceclaim controller once no pod reserves it any more, and a
claim generated for the pod is deleted with it; a shared claim stays allocated while another pod
still reserves it. `AllocatedClaims` follows that, NodeInfo by NodeInfo (`replaced`).

What it must not do: the scheduler's own preemption never frees devices (its dry run keeps the
allocated state of PreFilter); the DynamicResources plugin reads this index in PreFilter only, so
a preemption simulation that removes victims from a cloned NodeInfo does not free theirs. Pure.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

import msgspec

from kresched.model.dra import AllocationResult, DraState, ResourceClaim, ResourceClaimConsumerReference
from kresched.model.objects import Pod
from kresched.sched.dra.claims import ClaimLookupError, pod_claims
from kresched.sched.dra.extended import delegated, special_claim
from kresched.sched.framework import Snapshot
from kresched.sched.layered import Layered
from kresched.sched.node_info import NodeInfo

if TYPE_CHECKING:
    from kresched.model.cluster import ClusterState

__all__ = ["ALLOCATION_MEMO", "DRA_ALLOCATED", "POOL_CHANGES", "POOL_KEYS", "AllocatedClaims", "allocated_claims",
           "allocator_for", "claims_signature", "cluster_snapshot", "pools_stamp", "still_first_fit", "with_allocation"]

#: `Snapshot.index` key.
DRA_ALLOCATED = "kresched/dra-allocated"


def with_allocation(claim: ResourceClaim, allocation: AllocationResult | None,
                    reserved_for: tuple = ()) -> ResourceClaim:
    status = msgspec.structs.replace(claim.status, allocation=allocation, reserved_for=reserved_for)
    return msgspec.structs.replace(claim, status=status)


def _pod_ref(pod: Pod) -> ResourceClaimConsumerReference:
    return ResourceClaimConsumerReference(resource="pods", name=pod.name, uid=pod.uid)


class AllocatedClaims:
    """The allocated claims of one simulated cluster (key → claim, its allocation in its status)
    and, per claim, the pods (keys) that reserve it."""

    __slots__ = ("_state", "claims", "dra", "reservers", "versions")

    def __init__(self, dra: DraState, claims: Layered[str, ResourceClaim], reservers: Layered[str, frozenset[str]],
                 versions: Layered[tuple[str, str], int] | None = None) -> None:
        self.dra = dra
        #: Both as large as the claims of the cluster: `Layered`, so that a cluster derived a pod
        #: at a time copies only what changed.
        self.claims = claims
        self.reservers = reservers
        #: Per pool (driver, name): a number unique to its last change of allocations in this
        #: lineage (0: as the state held it). An allocation on a node whose pools' numbers are
        #: the same is the same (`DynamicResources.filter` memoizes on them).
        self.versions = versions if versions is not None else Layered()
        self._state: Any = None

    @classmethod
    def build(cls, snap: Snapshot) -> AllocatedClaims:
        claims: dict[str, ResourceClaim] = {}
        reservers: dict[str, frozenset[str]] = {}
        for c in snap.dra.claims:
            if c.status.allocation is not None:
                claims[c.key] = c
                reservers[c.key] = frozenset(f"{c.namespace}/{r.name}" for r in c.status.reserved_for
                                             if r.resource == "pods" and not r.api_group)
        return cls(snap.dra, Layered(claims), Layered(reservers))

    def current(self, claim: ResourceClaim) -> ResourceClaim:
        """`claim` as this simulated cluster holds it: allocated here, or deallocated once no pod
        reserved it any more."""
        held = self.claims.get(claim.key)
        if held is not None:
            return held
        if claim.status.allocation is not None:
            return with_allocation(claim, None)
        return claim

    def allocated_state(self) -> Any:
        """What the allocator counts as in use (built once per simulated cluster)."""
        if self._state is None:
            from kresched.sched.dra.allocated import AllocatedState

            self._state = AllocatedState.from_claims(self.claims.values())
        return self._state

    def replaced(self, old: NodeInfo, new: NodeInfo) -> AllocatedClaims:
        gone, came = self._changed(old, new)
        if not gone and not came:
            return self
        if gone:
            out = self._without(gone)
        else:  # a pod placed, the common change: nothing freed
            out = AllocatedClaims(self.dra, self.claims, self.reservers, self.versions)
            out._state = self._state
        for p in came:
            out._place(p, new)
        return out

    def _without(self, gone: list[Pod]) -> AllocatedClaims:
        """These claims with the pods `gone` taken away (their claims freed where no pod is left
        to reserve them)."""
        claims = self.claims.draft()
        reservers = self.reservers.draft()
        freed: list[str] = []
        for p in gone:
            for pc in _claims_or_none(p, self.dra):
                key = pc.claim.key
                if key not in claims:
                    continue
                left = reservers.get(key, frozenset()) - {p.key}
                if left or (not pc.is_new and not self.reservers.get(key)):
                    # Still reserved by another pod; or allocated without ever being reserved
                    # (nothing deallocates it when a pod goes).
                    reservers[key] = left
                    continue
                freed.append(key)
                del claims[key]
                reservers.pop(key, None)
            for key in _extended_claim_keys(p):  # the scheduler's claim for its extended resources: the pod's own
                if key in claims:
                    freed.append(key)
                    del claims[key]
                    reservers.pop(key, None)
        versions = self.versions
        if freed:
            versions = versions.draft()
            _touch(versions, (self.claims[k] for k in freed), self._pool_changes(), allocated=False)
            versions = versions.done()
        out = AllocatedClaims(self.dra, claims.done(), reservers.done(), versions)
        if self._state is not None:  # carried over, not gathered again from every claim
            out._state = self._state.without(freed) if freed else self._state
        return out

    def _changed(self, old: NodeInfo, new: NodeInfo) -> tuple[list[Pod], list[Pod]]:
        """The pods that use devices on `old`'s node and not on `new`'s (by key), and the other way
        round. A pod placed is the common change (`NodeInfo.add_pod` appends it): then only the
        appended pods are looked at, in C up to them."""
        uses = self.uses_devices
        before_pods, after_pods = old.pods, new.pods
        n = len(before_pods)
        if len(after_pods) > n and after_pods[:n] == before_pods:  # `==` by identity first: the same objects
            added = [p for p in after_pods[n:] if uses(p)]
            if not added:
                return [], []
            names = {p.metadata.name for p in added}  # (a node's other pods asked only where a name repeats)
            before_keys = {p.key for p in before_pods if p.metadata.name in names and uses(p)}
            return [], list({p.key: p for p in added if p.key not in before_keys}.values())
        before = {p.key: p for p in before_pods if uses(p)}
        after = {p.key: p for p in after_pods if uses(p)}
        return [p for k, p in before.items() if k not in after], [p for k, p in after.items() if k not in before]

    def uses_devices(self, pod: Pod) -> bool:
        """Claims, or extended requests a DeviceClass backs."""
        return bool(pod.spec.resource_claims) or bool(pod.requests.scalar and self.dra.classes
                                                       and delegated(pod, self.dra))

    def _place(self, pod: Pod, info: NodeInfo) -> None:
        """Reserve (and where needed allocate, on `info`'s node) the claims of `pod`, placed there."""
        found = _claims_or_none(pod, self.dra)
        todo: list[ResourceClaim] = []
        held: list[str] = []  # allocated already (shared with other pods): reserved for this one too
        for pc in found:
            key = pc.claim.key
            if key in self.claims:
                held.append(key)
            else:
                todo.append(pc.claim if pc.claim.status.allocation is None else with_allocation(pc.claim, None))
        if held:
            self.reservers = self.reservers.changed([(k, self.reservers.get(k, frozenset()) | {pod.key}) for k in held])
        extended = delegated(pod, self.dra, info.node)
        if extended:  # allocated with the pod's claims, last (what PreBind creates as a claim of its own)
            special = special_claim(pod, self.dra, extended)
            meta = msgspec.structs.replace(special.metadata, name=f"{pod.name}-extended-resources")
            todo.append(msgspec.structs.replace(special, metadata=meta))
        if not todo:
            return
        # What Filter found there for the same claim specs, while the node's pools are as they were.
        result = None if extended else self._found(info.name, todo)
        if result is None:
            from kresched.sched.dra.allocator import AllocationError

            try:
                result = allocator_for(self.dra, self.allocated_state()).allocate(info.node, todo)
            except AllocationError:
                result = None
        if result is None:
            return  # it passed the filter, so this cannot happen; nothing to record if it does
        claims, reservers, versions = self.claims.draft(), self.reservers.draft(), self.versions.draft()
        for claim, allocation in zip(todo, result.claim_results, strict=True):
            claims[claim.key] = with_allocation(claim, allocation, (_pod_ref(pod),))
            reservers[claim.key] = frozenset({pod.key})
        _touch(versions, (claims[c.key] for c in todo), self._pool_changes(), allocated=True)
        self.claims, self.reservers, self.versions = claims.done(), reservers.done(), versions.done()
        self._state = self.allocated_state().with_results(
            (claim.key, allocation) for claim, allocation in zip(todo, result.claim_results, strict=True))

    def _pool_changes(self) -> dict[int, tuple[int, tuple[str, str, str] | None]]:
        return self.dra.derived.setdefault(POOL_CHANGES, {})

    def _found(self, node: str, claims: list[ResourceClaim]) -> Any:
        """The allocation of `claims` on `node` the run's allocation memo holds for this cluster's
        pools there (`DynamicResources.filter` found it), or None."""
        memo = self.dra.derived.get(ALLOCATION_MEMO)
        pool_keys = self.dra.derived.get(POOL_KEYS, {}).get(node)
        if memo is None or pool_keys is None:
            return None
        hit = memo.get((node, claims_signature(claims)))
        if hit is None or hit[0] != pools_stamp(self.versions, pool_keys):
            return None
        return hit[1] if getattr(hit[1], "claim_results", None) is not None else None


#: `DraState.derived` key of the run's allocation memo: (node, `claims_signature`) → (`pools_stamp`
#: of the node's pools, the allocation there or why not). The first fit is deterministic: the same
#: for the same claim specs on the same devices, allocated alike.
ALLOCATION_MEMO = "allocation-memo"
#: `DraState.derived` key: per node, the (driver, pool) of the pools it sees (the same all run).
POOL_KEYS = "pool-keys"
#: `DraState.derived` key: per version a pool was given (`_touch`), the version it had before and
#: the device the change allocated (None: it freed one) — how a pool came to be as it is.
POOL_CHANGES = "pool-changes"


def claims_signature(claims: list[ResourceClaim]) -> bytes:
    """What allocating `claims` reads of them: their specs (not their names)."""
    return msgspec.json.encode([c.spec for c in claims])


def pools_stamp(versions: dict[tuple[str, str], int], pool_keys: tuple[tuple[str, str], ...]) -> tuple[int, ...]:
    """The versions (`AllocatedClaims.versions`) of the pools `pool_keys`."""
    return tuple([versions.get(k, 0) for k in pool_keys])


_changes = itertools.count(1)


def _touch(versions: MutableMapping[tuple[str, str], int], claims: Any,
           changes: dict[int, tuple[int, tuple[str, str, str] | None]], allocated: bool) -> None:
    """Give the pools of the claims' allocations a new number for each of their devices, the claims
    `allocated` there (or freed), and record each change in `changes`."""
    for c in claims:
        if c.status.allocation is not None:
            for r in c.status.allocation.devices.results:
                pool = (r.driver, r.pool)
                version = next(_changes)
                changes[version] = (versions.get(pool, 0), (r.driver, r.pool, r.device) if allocated else None)
                versions[pool] = version


def still_first_fit(result: Any, then: tuple[int, ...], now: tuple[int, ...],
                    changes: Mapping[int, tuple[int, tuple[str, str, str] | None]], counters: bool) -> bool:
    """Whether `result` — the allocator's first fit for some claims on a node (a `NodeAllocation`),
    or None where they did not fit, found when the node's pools were at the versions `then` — is
    its answer at the versions `now` too, without allocating again.

    So it is where every pool came from its version then to its version now by allocations alone
    (`changes`; none freed a device) and none of them took a device `result` holds: the first fit
    is the first solution of a search over the devices in a fixed order, and devices taken since
    only prune that search — every branch that failed then fails now, the solution found then is
    still there, so it is still the first (and where there was none, there is none). Not where
    devices share counters (`counters`): taking one device may then leave another short of them."""
    if result is None:
        held: frozenset[tuple[str, str, str]] = frozenset()
    elif counters or getattr(result, "claim_results", None) is None:
        return False  # (a Status: its words may read the devices in use)
    else:
        held = frozenset(r.device_id for c in result.claim_results for r in c.devices.results)
    for version, target in zip(now, then, strict=True):
        while version != target:
            if version < target:  # (versions only grow along a lineage: another lineage's)
                return False
            step = changes.get(version)
            if step is None:
                return False
            version, device = step
            if device is None or device in held:
                return False
    return True


def allocator_for(dra: DraState, allocated: Any) -> Any:
    """An allocator of one pod attempt over `dra`'s classes and slices, sharing the run's slice
    index (pools per node, class selector verdicts per device) kept in `dra.derived`."""
    from kresched.sched.dra.allocator import Allocator

    allocator = Allocator(dra.class_by_name, dra.slices, allocated, index=dra.derived.get(_SLICE_INDEX))
    dra.derived[_SLICE_INDEX] = allocator.index
    return allocator


_SLICE_INDEX = "slice-index"


def _extended_claim_keys(pod: Pod) -> tuple[str, ...]:
    """The keys of the claim the scheduler made for the pod's extended resources: the one its
    status names (a real pod), and the one `_place` made (a simulated one)."""
    status = pod.status.extended_resource_claim_status
    made = f"{pod.namespace}/{pod.name}-extended-resources"
    if status is not None and status.resource_claim_name:
        return (f"{pod.namespace}/{status.resource_claim_name}", made)
    return (made,)


def _claims_or_none(pod: Pod, dra: DraState) -> list:
    try:
        return pod_claims(pod, dra)
    except ClaimLookupError:
        return []


def allocated_claims(snapshot: Snapshot) -> AllocatedClaims:
    return snapshot.index(DRA_ALLOCATED, AllocatedClaims.build)


def cluster_snapshot(state: ClusterState, visit: Callable[[NodeInfo], object] | None = None) -> Snapshot:
    """`Snapshot.from_state`, with the devices in use indexed at once where the state knows its
    DRA objects: they are read from the claims as the state holds them, so built on a snapshot a
    simulation derived, that index would forget what the simulation allocated and freed. Built
    here, `Snapshot.with_node_info` carries it down every simulation. Every snapshot a simulation
    starts from is made here."""
    snap = Snapshot.from_state(state, visit)
    if state.dra.is_known:
        allocated_claims(snap)
    return snap
