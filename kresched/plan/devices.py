"""Making room for devices where the scheduler's own preemption gives up (seed 000, for DRA).

Every DynamicResources rejection is UnschedulableAndUnresolvable, and the scheduler's preemption
keeps the allocated devices of its PreFilter through its dry run: it never evicts to free a
device. kresched does, when no node can be helped otherwise (`Planner` tries this only after the
scheduler's own candidates gave nothing): it selects victims on a node as `SelectVictimsOnNode`
does, with the tiers and criteria of every plan, but with `DeviceFreeing` in place of the
DynamicResources plugin: a victim taken off the node gives its devices back as the cluster would
(`sched.dra.inuse`: a claim generated for it is deleted with it; a shared claim stays allocated
while another pod still reserves it), so the pod's claims are allocated anew on what is left.

Owns: `DeviceFreeing`, `freeing_plugins`, `device_holders` (the pods whose eviction can free
anything at all), the words for such a plan (`DEVICE_NOTE`, `device_allocation_text`), and
`device_hints`: explain's words for a node DynamicResources rejected. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kresched.model.dra import DraState
from kresched.model.objects import Pod
from kresched.model.selectors import node_selector_term_matches
from kresched.sched.dra.inuse import AllocatedClaims, allocated_claims
from kresched.sched.dynamic_resources import NAME, DraCycle, DynamicResources, prepare
from kresched.sched.framework import (
    SUCCESS,
    Code,
    CycleState,
    FilterPlugin,
    NodeInfo,
    PreFilterResult,
    Snapshot,
    Status,
)

__all__ = ["DEVICE_NOTE", "DeviceFreeing", "device_allocation_text", "device_hints", "device_state_notes",
           "device_holders", "freeing_plugins", "is_device_rejection"]

DEVICE_NOTE = ("the scheduler's own preemption never frees devices (a node DynamicResources rejects is never its "
               "candidate): kresched evicts the lower-priority pods that hold them; once their claims are "
               "deallocated the scheduler binds the pod")

_FREEING = "kresched/dra-freeing"


@dataclass
class _Freeing:
    snapshot: Snapshot
    inuse: AllocatedClaims
    #: (node, the keys of the pods with claims left on it) → DynamicResources' state there.
    states: dict[tuple[str, frozenset[str]], DraCycle | Status | None] = field(default_factory=dict)

    def clone(self) -> _Freeing:
        return self


class DeviceFreeing(DynamicResources):
    """DynamicResources as the cluster sees it once the pods taken off a node are gone: their
    claims freed, the pod's claims allocated on what is left."""

    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        result = super().pre_filter(cycle, pod, snapshot)
        if result.status.is_success and cycle.read(NAME) is not None:
            cycle.write(_FREEING, _Freeing(snapshot, allocated_claims(snapshot)))
        return result

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        free: _Freeing | None = cycle.read(_FREEING)
        if free is None:
            return super().filter(cycle, pod, node_info)
        key = (node_info.name, frozenset(p.key for p in node_info.pods if free.inuse.uses_devices(p)))
        state = free.states.get(key, _MISSING)
        if state is _MISSING:
            before = free.snapshot.by_name[node_info.name]
            state = free.states[key] = prepare(pod, free.snapshot.dra, free.inuse.replaced(before, node_info))
        if state is None:
            return SUCCESS
        if isinstance(state, Status):
            return state
        own = CycleState()
        own.write(NAME, state)
        return super().filter(own, pod, node_info)


_MISSING: Any = object()


def freeing_plugins(plugins: Sequence[FilterPlugin]) -> list[FilterPlugin]:
    """`plugins` with DynamicResources replaced by `DeviceFreeing`."""
    return [DeviceFreeing() if pl.name == NAME and isinstance(pl, DynamicResources) else pl for pl in plugins]


def device_holders(snapshot: Snapshot) -> frozenset[str]:
    """The keys of the pods that reserve an allocated claim: evicting one of them can free devices.
    Gathered once per search, not once per node (a node's pods are looked up in it): at 5k nodes a
    scan of every claim for every node was most of a GPU queue's time."""
    inuse = allocated_claims(snapshot)
    claims = inuse.claims
    return frozenset(k for key, holders in inuse.reservers.items() if key in claims for k in holders)


def device_allocation_text(pod: Pod, snapshot: Snapshot, info: NodeInfo, victims: Sequence[Pod]) -> tuple[str, ...]:
    """Which devices each claim of the pod gets on `info`'s node once `victims` are gone, as the
    allocator chooses them there."""
    work = info.clone()
    for v in victims:
        work.remove_pod(v)
    state = prepare(pod, snapshot.dra, allocated_claims(snapshot).replaced(info, work))
    if not isinstance(state, DraCycle):
        return ()
    cycle = CycleState()
    cycle.write(NAME, state)
    allocation = state.node_allocations.get(work.name) \
        if DynamicResources().filter(cycle, pod, work).is_success else None
    if allocation is None:
        return ()
    # The claims it allocated, in its order: the pod's own, then the one for its extended resources.
    names = [c.key for c in state.to_allocate] + ["for its extended resources"]
    out = []
    for name, result in zip(names, allocation.claim_results, strict=False):
        devices = ", ".join(f"{r.driver}/{r.pool}/{r.device}" for r in result.devices.results)
        out.append(f"claim {name} would get {devices or 'no device'}")
    return tuple(out)


def is_device_rejection(st: Status) -> bool:
    return st.plugin == NAME and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def device_hints(cycle: CycleState, info: NodeInfo, snapshot: Snapshot) -> tuple[str, ...]:
    """For a node DynamicResources rejected: which claim and request could not be met there and
    why (the allocator's `diagnose`), who holds the devices (claims and the pods that reserve
    them), or where an allocated claim is available instead."""
    state: DraCycle | None = cycle.read(NAME)
    if state is None:
        return ()
    node = info.node
    out: list[str] = []
    for claim in state.current:
        alloc = claim.status.allocation
        if alloc is not None and alloc.node_selector is not None and not any(
                node_selector_term_matches(t, node.metadata.name, node.metadata.labels)
                for t in alloc.node_selector.node_selector_terms):
            devices = ", ".join(f"{r.driver}/{r.pool}/{r.device}" for r in alloc.devices.results)
            out.append(f"claim {claim.key} is already allocated ({devices or 'no device'}), available only where "
                       f"its allocation's node selector matches: the pod can only run there")
    if state.allocator is not None:
        from kresched.sched.dra.allocator import AllocationError
        from kresched.sched.dra.diagnose import diagnose

        try:
            facts = diagnose(state.allocator, node, state.to_allocate)
        except AllocationError as exc:
            facts = []
            out.append(str(exc))
        inuse = allocated_claims(snapshot)
        for f in facts:
            text = f.message
            users = sorted({p for _, keys in f.holders for k in keys for p in inuse.reservers.get(k, ())})
            if users:
                text += f" (used by pod{'s' if len(users) > 1 else ''} {', '.join(users)})"
            out.append(text)
    return tuple(out)


def device_state_notes(pod: Pod, dra: DraState) -> tuple[str, ...]:
    """What the state cannot say about the pod's devices — never a silent guess."""
    if pod.spec.resource_claims and not dra.is_known:
        return ("the pod asks for devices (ResourceClaims), but the state holds no DeviceClasses, ResourceSlices "
                "or ResourceClaims: its claims were not looked at (take the snapshot with `kresched snapshot`, "
                "or add `deviceclasses,resourceslices,resourceclaims,resourceclaimtemplates` to `kubectl get`)",)
    return ()
