"""DynamicResources: a pod's ResourceClaims must be allocatable on the node, or already allocated
where the node is. Mirrors kube-scheduler v1.36's `pkg/scheduler/framework/plugins/dynamicresources`
(dynamicresources.go) with its default feature gates:

1. PreFilter: a pod without claims → Skip. Its claims are found as PreEnqueue and PreFilter find
   them (`sched.dra.claims.pod_claims`; a claim not created yet, missing, being deleted or not the
   pod's rejects it on every node with upstream's text). For each claim not allocated yet, each
   request's device class must exist (`request <r>: device class <c> does not exist`); a request
   with neither `exactly` nor `firstAvailable` is an `unknown request type`; an empty class name an
   Error. An allocated claim is available only where its `status.allocation.nodeSelector` matches.
   When some claim needs allocation, one allocator is built from the allocated state of the
   simulated cluster (`sched.dra.inuse`) and every ResourceSlice, for all nodes.
2. Filter: the allocator's first fit for the unallocated claims on the node
   (`cannot allocate all claims`; `invalid resource pools were encountered`; a CEL or validation
   failure is an Error, as upstream, which aborts the scheduling cycle), then the allocated
   claims' node selectors and binding failure conditions (a device's `status.devices` condition
   named in its result's `bindingFailureConditions` True): `resourceclaim not available on the
   node`. Every rejection is UnschedulableAndUnresolvable (`statusUnschedulable`): the
   scheduler's preemption never tries a node this plugin rejected.
3. PostFilter's note in the scheduler's message (`post_filter_note`): `no new claims to
   deallocate` for a pod without claims, `deallocation of ResourceClaim completed` when an
   unavailable claim reserved by no other pod would be deallocated, else `still not schedulable`.
4. Score: per claim, `8 - i` for each `firstAvailable` request whose subrequest `i` was chosen;
   normalized by the highest (weight 2 in the default profile).

PreFilterExtensions are nil upstream: adding or removing pods in a preemption simulation changes
nothing here (victims' devices stay allocated in the scheduler's dry run).

Extended resources backed by a DeviceClass (`extendedResourceName`, or the implicit
`deviceclass.resource.kubernetes.io/<class>`) on a node whose allocatable lacks them are allocated
through the special claim upstream makes for them (`sched.dra.extended`), with the pod's claims.

A special claim an earlier cycle created for the pod and did not bind (`sched.dra.extended.
leftover_claim`) makes Filter refuse every node (`cannot schedule extended resource claim`), and
PostFilter deletes it (`deletion of ResourceClaim completed`): the pod can be placed in a later
cycle only.

Deliberate differences: the binding-conditions timeout (a wall clock) is not applied; a claim
being allocated by another pod in flight cannot be seen in a snapshot. A snapshot that lacks a DRA
kind the pod's answer depends on (`sched.dra.claims.missing_kinds`) says nothing about its devices:
the plugin is skipped for it, and the planner and explain say the answer cannot be known. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import msgspec

from kresched.model.dra import DraState, ResourceClaim
from kresched.model.objects import Node, Pod
from kresched.model.selectors import node_selector_term_matches
from kresched.model.specs import NodeSelector
from kresched.sched.dra.alike import first_fit
from kresched.sched.dra.claims import ClaimLookupError, PodClaim, missing_kinds, pod_claims
from kresched.sched.dra.extended import delegated, leftover_claim, special_claim
from kresched.sched.dra.inuse import (
    ALLOCATION_MEMO,
    POOL_CHANGES,
    POOL_KEYS,
    AllocatedClaims,
    allocated_claims,
    allocator_for,
    claims_signature,
    pools_stamp,
    still_first_fit,
)
from kresched.sched.framework import (
    SUCCESS,
    Code,
    CycleState,
    PreFilterResult,
    Snapshot,
    Status,
    default_normalize_score,
)
from kresched.sched.node_info import NodeInfo

__all__ = [
    "CANNOT_ALLOCATE",
    "NAME",
    "NOT_AVAILABLE",
    "DynamicResources",
    "DraCycle",
    "claims_read",
    "claims_to_allocate",
    "extended_on",
    "post_filter_note",
    "prepare",
]

NAME = "DynamicResources"

CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
NO_CLAIMS = "no new claims to deallocate"
STILL_NOT_SCHEDULABLE = "still not schedulable"
DEALLOCATED = "deallocation of ResourceClaim completed"
DELETED = "deletion of ResourceClaim completed"
LEFTOVER = "cannot schedule extended resource claim"
#: `resourceapi.FirstAvailableDeviceRequestMaxSize`.
FIRST_AVAILABLE_MAX = 8

_SKIP = PreFilterResult(Status(Code.SKIP))


@dataclass
class DraCycle:
    """What PreFilter found for the pod (upstream's `stateData`), shared by every node's Filter.

    Like upstream's (whose `Clone` returns the same pointer), it is not copied for preemption
    simulations."""

    claims: list[PodClaim]
    #: The claims as the simulated cluster holds them (allocated, or not), in pod order.
    current: list[ResourceClaim]
    #: By claim index: where an allocated claim is available (None: everywhere).
    available_on: dict[int, NodeSelector | None]
    to_allocate: list[ResourceClaim]
    allocator: Any = None
    #: Per node that passed: the allocation of `to_allocate` there (Reserve would use it).
    node_allocations: dict[str, Any] = field(default_factory=dict)
    #: Indices of allocated claims some node could not use (PostFilter's candidates).
    unavailable: set[int] = field(default_factory=set)
    pod_uid: str = ""
    #: Indices of allocated claims a device's binding failure condition makes unavailable everywhere.
    binding_failed: set[int] = field(default_factory=set)
    #: The pod's extended requests a DeviceClass backs (`sched.dra.extended.delegated`), and the
    #: objects the special claim for them is made from.
    extended: dict[str, int] = field(default_factory=dict)
    dra: DraState | None = None
    #: The special claim an earlier cycle left for the pod (`leftover_claim`): every node refused.
    leftover: ResourceClaim | None = None
    #: What the claims to allocate ask for (their specs, encoded): with the node and its pools'
    #: versions, the key of the run's allocation memo (`memo`, shared through `DraState.derived`).
    signature: bytes = b""
    versions: dict[tuple[str, str], int] = field(default_factory=dict)
    memo: dict[Any, Any] = field(default_factory=dict)
    #: How the pools came to their versions (`inuse.still_first_fit`), and whether some slice
    #: shares counters among its devices (then a first fit is not kept across allocations).
    changes: dict[int, Any] = field(default_factory=dict)
    counters: bool = True
    #: Per node: the (driver, pool) of the pools it sees (the same all run: `DraState.derived`).
    pool_keys: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    #: Every device is on a slice of one node (`nodeName`, no shared counters) and no request
    #: scores: a node's verdict depends on the pods on it alone (`runner.node_local`).
    node_local: bool = False
    #: With `node_local`: everything Filter reads of the pod (pods with equal keys get the same
    #: verdict on a node: `runner.verdict_keys`).
    verdict_key: bytes | None = None

    def clone(self) -> DraCycle:
        return self


def _unresolvable(msg: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,))


# Filter's rejections, one object each (a filter pass over a thousand nodes returns them often).
_LEFTOVER = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (LEFTOVER,), NAME)
_CANNOT_ALLOCATE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (CANNOT_ALLOCATE,), NAME)
_NOT_AVAILABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_AVAILABLE,), NAME)


def claims_read(cycle: CycleState) -> bytes | None:
    """Everything DynamicResources' Filter reads of the pod's claims after its PreFilter (`cycle`),
    where its verdict is node-local (`DraCycle.verdict_key`: the specs of the claims to allocate,
    not their names); else None."""
    state: DraCycle | None = cycle.read(NAME)
    return state.verdict_key if state is not None and state.node_local else None


def _allocate(state: DraCycle, node: Node, claims: list[ResourceClaim], signature: bytes,
              stamp: tuple[int, ...]) -> Any:
    """The allocator's first fit for `claims` (`signature`: their specs) on `node` (its pools at the
    versions `stamp`): a `NodeAllocation`, None where they do not fit, or the Status of its failure
    (`AllocationFailedOnNode` rejects the node, another `AllocationError` is an Error). Found once
    for the nodes whose devices the search reads alike (`sched.dra.alike`)."""
    from kresched.sched.dra.allocator import AllocationError, AllocationFailedOnNode

    assert state.dra is not None
    try:
        return first_fit(state.allocator, node, claims, signature, stamp, state.dra.derived)
    except AllocationFailedOnNode as exc:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(exc),), NAME)
    except AllocationError as exc:
        return Status(Code.ERROR, (str(exc),), NAME)


class DynamicResources:
    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        if not snapshot.dra.is_known or not (pod.spec.resource_claims or delegated(pod, snapshot.dra)) \
                or missing_kinds(pod, snapshot.dra):
            return _SKIP
        state = prepare(pod, snapshot.dra, allocated_claims(snapshot))
        if state is None:
            return _SKIP
        if isinstance(state, Status):
            return PreFilterResult(state)
        cycle.write(NAME, state)
        return PreFilterResult()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        state: DraCycle | None = cycle.read(NAME)
        if state is None:
            return SUCCESS
        if state.leftover is not None:  # `filterExtendedResources`, before anything else
            return _LEFTOVER
        node = node_info.node
        unavailable = [i for i, sel in state.available_on.items()
                       if i in state.binding_failed
                       or (sel is not None and not _selector_matches(sel, node.metadata.name, node.metadata.labels))
                       ] if state.available_on else None
        allocation = None
        claims = state.to_allocate
        signature = state.signature
        if state.extended:  # its extended resources this node leaves to DRA: the special claim
            on_node = extended_on(state, node)
            if on_node:
                claims = [*claims, special_claim(pod, state.dra, on_node)]
                signature += msgspec.json.encode(sorted(on_node.items()))
        if state.allocator is not None and claims:
            # The first fit is the same for the same claim specs on the same devices: kept per node
            # and specs while the versions of the node's pools are the same (every pod of the run).
            name = node_info.name
            key = (name, signature)
            pool_keys = state.pool_keys.get(name)
            if pool_keys is None:
                pool_keys = state.pool_keys[name] = tuple([(p.driver, p.name)
                                                           for p in state.allocator.pools_for(node).pools])
            stamp = pools_stamp(state.versions, pool_keys)
            hit = state.memo.get(key)
            if hit is not None and hit[0] == stamp:
                allocation = hit[1]
            elif hit is not None and still_first_fit(hit[1], hit[0], stamp, state.changes, state.counters):
                # Only devices it does not hold were taken since: the first fit then is the first now.
                allocation = hit[1]
                state.memo[key] = (stamp, allocation)
            else:
                allocation = _allocate(state, node, claims, signature, stamp)
                # An error names the claim and request it is about: never another pod's answer.
                if allocation is None or not isinstance(allocation, Status) or allocation.code != Code.ERROR:
                    state.memo[key] = (stamp, allocation)
            if allocation is None:
                return _CANNOT_ALLOCATE
            if isinstance(allocation, Status):
                return allocation
        if unavailable:
            state.unavailable.update(unavailable)
            return _NOT_AVAILABLE
        if allocation is not None:
            state.node_allocations[node_info.name] = allocation
        return SUCCESS

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None  # PreFilterExtensions() is nil upstream

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None

    # -- Score ---------------------------------------------------------------------------------
    def pre_score(self, cycle: CycleState, pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot) -> Status:
        state: DraCycle | None = cycle.read(NAME)
        # Only `firstAvailable` requests score; without any, every node scores 0 (as Skip does).
        if state is None or not any(r.first_available for c in state.current for r in c.requests):
            return Status(Code.SKIP)
        return SUCCESS

    def score(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        state: DraCycle | None = cycle.read(NAME)
        if state is None:
            return 0
        allocation = state.node_allocations.get(node_info.name)
        if allocation is None and state.to_allocate:
            return 0
        new = iter(allocation.claim_results if allocation is not None else ())
        score = 0
        for claim in state.current:
            result = claim.status.allocation if claim.status.allocation is not None else next(new, None)
            if result is None:
                continue
            chosen = {r.request for r in result.devices.results if "/" in r.request}
            for req in claim.requests:
                if req.exactly is not None:
                    continue
                for i, sub in enumerate(req.first_available):
                    if f"{req.name}/{sub.name}" in chosen:
                        score += FIRST_AVAILABLE_MAX - i
        return score

    def normalize_score(self, cycle: CycleState, pod: Pod, scores: list[int]) -> None:
        default_normalize_score(100, False, scores)


def prepare(pod: Pod, dra: DraState, inuse: AllocatedClaims) -> DraCycle | Status | None:
    """PreFilter's work for a pod with claims, against the claims in use in `inuse` (a simulated
    cluster): its state, or its rejection, or None when it uses no claim after all."""
    try:
        found = pod_claims(pod, dra)
    except ClaimLookupError as exc:
        return _unresolvable(str(exc))
    extended = delegated(pod, dra)
    if not found and not extended:
        return None
    current = [inuse.current(pc.claim) for pc in found]
    available_on: dict[int, NodeSelector | None] = {}
    to_allocate: list[ResourceClaim] = []
    binding_failed: set[int] = set()
    for i, claim in enumerate(current):
        if claim.status.allocation is not None:
            available_on[i] = claim.status.allocation.node_selector
            if _binding_failed(claim):
                binding_failed.add(i)
            continue
        to_allocate.append(claim)
        for request in claim.requests:
            if request.exactly is not None:
                st = _validate_class(dra, request.exactly.device_class_name, request.name)
            elif request.first_available:
                st = None
                for sub in request.first_available:
                    st = _validate_class(dra, sub.device_class_name, f"{request.name}/{sub.name}")
                    if st is not None:
                        break
            else:
                st = _unresolvable(f"resource claim {claim.key}, request {request.name}: unknown request type")
            if st is not None:
                return st
    state = DraCycle([*found], current, available_on, to_allocate, pod_uid=pod.uid, extended=extended, dra=dra,
                     binding_failed=binding_failed, leftover=leftover_claim(pod, dra) if extended else None)
    if to_allocate or extended:
        state.allocator = allocator_for(dra, inuse.allocated_state())
        state.signature = claims_signature(to_allocate)
        state.versions = inuse.versions
        state.memo = dra.derived.setdefault(ALLOCATION_MEMO, {})
        state.changes = dra.derived.setdefault(POOL_CHANGES, {})
        counters = dra.derived.get(_COUNTERS)
        if counters is None:
            counters = dra.derived[_COUNTERS] = any(s.spec.shared_counters for s in dra.slices)
        state.counters = counters
        state.pool_keys = dra.derived.setdefault(POOL_KEYS, {})
    local = dra.derived.get(_NODE_LOCAL)
    if local is None:
        local = dra.derived[_NODE_LOCAL] = all(
            s.spec.node_name and not s.spec.shared_counters and not s.spec.per_device_node_selection
            for s in dra.slices)
    # A claim the pod shares by name is allocated wherever another pod takes it first: only claims
    # made for the pod alone (from templates) keep the verdict local. And only where all Filter
    # reads of the pod is the specs of the claims to allocate (`verdict_key`): not an allocated
    # claim (whose Filter records where it is unavailable, for PostFilter), not the special claim
    # for extended resources (made from the pod's containers), not one left from an earlier cycle.
    state.node_local = (local and all(prc.resource_claim_template_name is not None for prc in pod.spec.resource_claims)
                        and not any(r.first_available for c in current for r in c.requests)
                        and not available_on and not extended and state.leftover is None)
    if state.node_local:
        state.verdict_key = state.signature
    return state


_NODE_LOCAL = "node-local"
#: `DraState.derived` key: whether some ResourceSlice shares counters among its devices.
_COUNTERS = "shared-counters"


def _validate_class(dra: DraState, class_name: str, request: str) -> Status | None:
    if not class_name:
        return Status(Code.ERROR, (f"request {request}: unsupported request type",))
    if dra.device_class(class_name) is None:
        return _unresolvable(f"request {request}: device class {class_name} does not exist")
    return None


def _binding_failed(claim: ResourceClaim) -> bool:
    """`isClaimReadyForBinding`'s error: some device with binding conditions has a binding failure
    condition True in `status.devices` (looked at in result order, stopping at the first device
    without a status or not ready yet, as upstream does)."""
    statuses: dict[tuple[str, str, str], Any] = {}
    for d in claim.status.devices:  # `getAllocatedDeviceStatus`: the first one listed
        statuses.setdefault((d.driver, d.pool, d.device), d)
    for result in claim.status.allocation.devices.results:
        if not result.binding_conditions:
            continue
        status = statuses.get(result.device_id)
        if status is None:
            return False
        true = {c.type for c in status.conditions if c.status == "True"}
        if any(c in true for c in result.binding_failure_conditions):
            return True
        if not all(c in true for c in result.binding_conditions):
            return False
    return False


def _selector_matches(sel: NodeSelector, name: str, labels: dict[str, str]) -> bool:
    """`nodeaffinity.NewNodeSelector(...).Match`: any term matches (no terms: none)."""
    return any(node_selector_term_matches(t, name, labels) for t in sel.node_selector_terms)


def extended_on(state: DraCycle, node: Node) -> dict[str, int]:
    """The pod's extended resources backed by a DeviceClass that `node` leaves to DRA (its
    allocatable lacks them): what the special claim asks for there."""
    return {r: q for r, q in state.extended.items() if not node.allocatable.scalar.get(r, 0)}


def claims_to_allocate(state: DraCycle, pod: Pod, node: Node) -> list[ResourceClaim]:
    """What Filter allocates on `node`: the claims not allocated yet, then the special claim."""
    on_node = extended_on(state, node) if state.extended else None
    return [*state.to_allocate, special_claim(pod, state.dra, on_node)] if on_node else list(state.to_allocate)


def post_filter_note(cycle: CycleState) -> str:
    """What DynamicResources' PostFilter adds to the scheduler's message when no node fits."""
    state: DraCycle | None = cycle.read(NAME)
    if state is None:
        return NO_CLAIMS
    for i in sorted(state.unavailable):  # upstream picks one at random: any one gives this text
        claim = state.current[i]
        refs = claim.status.reserved_for
        if not refs or (len(refs) == 1 and refs[0].uid == state.pod_uid):
            return DEALLOCATED
    if state.leftover is not None:
        return DELETED
    return STILL_NOT_SCHEDULABLE
