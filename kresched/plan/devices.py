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
anything at all), `freeing_nodes` (where such freeing makes room: what `explain` offers), the words
for such a plan (`DEVICE_NOTE`); which devices a plan's claims get (`device_grants`, and
`placed_grants` for a pod the simulated cluster has placed; `grant_notes` their lines); `asks_for_devices`;
`device_hints`: explain's facts for a node DynamicResources rejected (`DeviceHint`, with who holds
each device); and the words for a pod whose devices the state cannot answer for
(`device_state_notes`, `unknown_message`). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from kresched.model.dra import DraState
from kresched.model.objects import Pod
from kresched.model.selectors import node_selector_term_matches
from kresched.plan.candidates import is_candidate_victim, node_refusal
from kresched.plan.plans import DeviceGrant, Plan
from kresched.sched.dra.claims import ClaimLookupError, missing_kinds, pod_claims
from kresched.sched.dra.extended import CLASS_PREFIX, SPECIAL_CLAIM, delegated, request_resource
from kresched.sched.dra.inuse import AllocatedClaims, allocated_claims
from kresched.sched.dynamic_resources import NAME, DraCycle, DynamicResources, claims_to_allocate, prepare
from kresched.sched.framework import SUCCESS, Code, CycleState, FilterPlugin, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.runner import remove_pod, run_filters_with_nominated, run_pre_filter

__all__ = ["DEVICE_NOTE", "KUBECTL_KINDS", "DeviceFreeing", "DeviceHint", "DeviceHolder", "asks_for_devices",
           "device_grants", "device_holders", "device_hints", "device_state_notes", "freeing_nodes", "freeing_plugins",
           "grant_notes", "is_device_rejection", "missing_text", "placed_grants", "unknown_message", "unknown_plan"]

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


def asks_for_devices(pod: Pod, dra: DraState) -> bool:
    """The pod has ResourceClaims, or extended requests a DeviceClass backs (`sched.dra.extended`)."""
    return bool(pod.spec.resource_claims) or bool(delegated(pod, dra))


def freeing_plugins(plugins: Sequence[FilterPlugin]) -> list[FilterPlugin]:
    """`plugins` with DynamicResources replaced by `DeviceFreeing`."""
    return [DeviceFreeing() if pl.name == NAME and isinstance(pl, DynamicResources) else pl for pl in plugins]


def freeing_nodes(pod: Pod, snapshot: Snapshot, plugins: Sequence[FilterPlugin], statuses: dict[str, Status],
                  nominated: dict[str, list[Pod]]) -> tuple[str, ...]:
    """The nodes where kresched's own device freeing makes room for `pod` (what `Planner` finds
    after the scheduler's preemption gave nothing): those the filters (`statuses`) found
    Unschedulable or DynamicResources rejected, where some pod it may evict holds devices, and
    where the pod passes every filter once all such pods are gone (their devices freed) — so some
    tier's victims there make it fit."""
    freeing = freeing_plugins(plugins)
    cycle, st, _ = run_pre_filter(freeing, pod, snapshot)
    if not st.is_success:
        return ()
    priority = pod.effective_priority
    holders = device_holders(snapshot)
    out = []
    for info in snapshot.node_infos:
        status = statuses.get(info.name)
        if status is None or not (status.code == Code.UNSCHEDULABLE or is_device_rejection(status)) \
                or node_refusal(info.node) is not None:
            continue
        victims = [p for p in info.pods if is_candidate_victim(p, priority)]
        if holders.isdisjoint(v.key for v in victims):
            continue
        work = info.clone()
        own = cycle.clone()
        for v in victims:
            remove_pod(freeing, own, pod, v, work)
        if run_filters_with_nominated(freeing, own, pod, work, nominated.get(info.name, ())).is_success:
            out.append(info.name)
    return tuple(out)


def device_holders(snapshot: Snapshot) -> frozenset[str]:
    """The keys of the pods that reserve an allocated claim: evicting one of them can free devices.
    Gathered once per search, not once per node (a node's pods are looked up in it): at 5k nodes a
    scan of every claim for every node was most of a GPU queue's time."""
    inuse = allocated_claims(snapshot)
    claims = inuse.claims
    return frozenset(k for key, holders in inuse.reservers.items() if key in claims for k in holders)


def device_grants(pod: Pod, snapshot: Snapshot, info: NodeInfo, victims: Sequence[Pod] = (),
                  cycle: CycleState | None = None) -> tuple[DeviceGrant, ...]:
    """The devices each claim of the pod gets on `info`'s node once `victims` are gone, as the
    allocator chooses them there: a claim allocated already keeps its devices, the others are
    allocated in the pod's order, the claim for its extended resources last. `cycle`: the pod's
    own filter cycle, whose allocation on the node (if its Filter ran there) is taken as it is."""
    state: DraCycle | None = cycle.read(NAME) if cycle is not None and not victims else None
    allocation = state.node_allocations.get(info.name) if state is not None else None
    if state is not None and allocation is None and (state.to_allocate or state.extended):
        # Its Filter was not run on the node (a verdict kept from an earlier pod): run it with the
        # cycle's own state (its allocation memo answers at once for the same claims and pools).
        own = CycleState()
        own.write(NAME, state)
        if not DynamicResources().filter(own, pod, info).is_success:
            return ()
        allocation = state.node_allocations.get(info.name)
    if state is None:
        work = info
        if victims:
            work = info.clone()
            for v in victims:
                work.remove_pod(v)
        found = prepare(pod, snapshot.dra, allocated_claims(snapshot).replaced(info, work))
        if not isinstance(found, DraCycle):
            return ()
        state = found
        own = CycleState()
        own.write(NAME, state)
        if not DynamicResources().filter(own, pod, work).is_success:
            return ()
        allocation = state.node_allocations.get(work.name)
    new = iter(allocation.claim_results if allocation is not None else ())
    out: list[DeviceGrant] = []
    for claim in state.current:
        result = claim.status.allocation if claim.status.allocation is not None else next(new, None)
        if result is not None:
            out += (DeviceGrant(claim.key, r.request, r.driver, r.pool, r.device) for r in result.devices.results)
    special = next(new, None)  # the claim for its extended resources, allocated last
    if special is not None:
        for r in special.devices.results:
            container, resource = request_resource(pod, r.request) or (None, None)
            out.append(DeviceGrant(None, r.request, r.driver, r.pool, r.device, resource, container))
    return tuple(out)


def placed_grants(pod: Pod, snapshot: Snapshot) -> tuple[DeviceGrant, ...]:
    """The devices the pod's claims hold in `snapshot`, where it is placed already (what
    `sched.dra.inuse` allocated for it as it was placed: the Filter's first fit on its node)."""
    inuse = allocated_claims(snapshot)
    try:
        found = pod_claims(pod, snapshot.dra)
    except ClaimLookupError:
        return ()
    out: list[DeviceGrant] = []
    for pc in found:
        claim = inuse.claims.get(pc.claim.key)
        if claim is not None and claim.status.allocation is not None:
            out += (DeviceGrant(claim.key, r.request, r.driver, r.pool, r.device)
                    for r in claim.status.allocation.devices.results)
    special = inuse.claims.get(f"{pod.namespace}/{pod.name}-extended-resources")
    if special is not None and special.status.allocation is not None:
        for r in special.status.allocation.devices.results:
            container, resource = request_resource(pod, r.request) or (None, None)
            out.append(DeviceGrant(None, r.request, r.driver, r.pool, r.device, resource, container))
    return tuple(out)


def grant_notes(grants: Sequence[DeviceGrant]) -> tuple[str, ...]:
    """`claim ns/name would get driver/pool/device, ...`, one line per claim; the claim the
    scheduler makes for extended resources as `extended resource R (container C) would get ...`."""
    lines: dict[str, list[str]] = {}
    for g in grants:
        who = f"claim {g.claim}" if g.claim is not None else \
            f"extended resource {g.resource or g.request} (container {g.container or '?'})"
        lines.setdefault(who, []).append(g.device_text)
    return tuple(f"{who} would get {', '.join(devices)}" for who, devices in lines.items())


def is_device_rejection(st: Status) -> bool:
    return st.plugin == NAME and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@dataclass(frozen=True)
class DeviceHolder:
    """A device allocated already: to which claims, reserved by which pods."""

    device: str
    claims: tuple[str, ...]
    pods: tuple[str, ...]


@dataclass(frozen=True)
class DeviceHint:
    """One of explain's facts for a node DynamicResources rejected: the line the table shows
    (`message`) and what it is made of. `kind`: the allocator's `DeviceFact.kind`
    (`all-allocated`, `no-class-devices`, `selector-mismatch`, ...), `allocated-elsewhere` (an
    allocated claim available only on other nodes) or `error` (the allocator's error). `claim`
    None: the claim the scheduler makes for the extended resources (`resource`, `container`), or
    a fact about the node's pools."""

    message: str
    kind: str
    claim: str | None = None
    request: str = ""
    resource: str | None = None
    container: str | None = None
    holders: tuple[DeviceHolder, ...] = ()


def device_hints(pod: Pod, cycle: CycleState, info: NodeInfo, snapshot: Snapshot) -> tuple[DeviceHint, ...]:
    """For a node DynamicResources rejected: which claim and request could not be met there and
    why (the allocator's `diagnose`), who holds the devices (claims and the pods that reserve
    them), or where an allocated claim is available instead."""
    state: DraCycle | None = cycle.read(NAME)
    if state is None:
        return ()
    node = info.node
    out: list[DeviceHint] = []
    for claim in state.current:
        alloc = claim.status.allocation
        if alloc is not None and alloc.node_selector is not None and not any(
                node_selector_term_matches(t, node.metadata.name, node.metadata.labels)
                for t in alloc.node_selector.node_selector_terms):
            devices = ", ".join(f"{r.driver}/{r.pool}/{r.device}" for r in alloc.devices.results)
            out.append(DeviceHint(f"claim {claim.key} is already allocated ({devices or 'no device'}), available "
                                  "only where its allocation's node selector matches: the pod can only run there",
                                  "allocated-elsewhere", claim.key))
    if state.allocator is not None:
        from kresched.sched.dra.allocator import AllocationError
        from kresched.sched.dra.diagnose import diagnose

        claims = claims_to_allocate(state, pod, node)
        try:
            facts = diagnose(state.allocator, node, claims)
        except AllocationError as exc:
            facts = []
            out.append(DeviceHint(str(exc), "error"))
        inuse = allocated_claims(snapshot)
        for f in facts:
            holders = tuple(DeviceHolder("/".join(d), keys,
                                         tuple(sorted({p for k in keys for p in inuse.reservers.get(k, ())})))
                            for d, keys in f.holders)
            text = f.message
            users = sorted({p for h in holders for p in h.pods})
            if users:
                text += f" (used by pod{'s' if len(users) > 1 else ''} {', '.join(users)})"
            claim: str | None = f.claim or None
            resource = container = None
            if f.claim.endswith("/" + SPECIAL_CLAIM):
                claim = None
                container, resource = request_resource(pod, f.request) or (None, None)
                what = f"extended resource {resource or f.request} (container {container or '?'})" if f.request \
                    else "the claim for its extended resources"
                text = text.replace(f"claim {f.claim}, request {f.request}" if f.request else f"claim {f.claim}",
                                    what, 1)
            out.append(DeviceHint(text, f.kind, claim, f.request, resource, container, holders))
    return tuple(out)


_PLURALS = {"DeviceClass": "DeviceClasses", "ResourceSlice": "ResourceSlices", "ResourceClaim": "ResourceClaims",
            "ResourceClaimTemplate": "ResourceClaimTemplates"}
#: What to add to `kubectl get` for a snapshot that holds every DRA kind.
KUBECTL_KINDS = "deviceclasses,resourceslices,resourceclaims,resourceclaimtemplates"


def missing_text(missing: Sequence[str]) -> str:
    """`no ResourceClaims or ResourceSlices`."""
    names = [_PLURALS.get(k, k) for k in missing]
    return "no " + (", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0])


def unknown_message(missing: Sequence[str]) -> str:
    """Why a pod's answer cannot be known (`Plan.missing_kinds`, `Explanation.missing_kinds`)."""
    return (f"cannot be known: the state holds {missing_text(missing)}, and the pod's devices depend on them "
            "(a snapshot taken without them)")


def device_state_notes(pod: Pod, dra: DraState) -> tuple[str, ...]:
    """What the state cannot say about the pod's devices — never a silent guess: the kinds its
    answer depends on that the state does not hold (`sched.dra.claims.missing_kinds`)."""
    missing = missing_kinds(pod, dra)
    if not missing:
        return ()
    return (f"the pod asks for devices, but the state holds {missing_text(missing)}: its devices were not looked at "
            f"(take the snapshot with `kresched snapshot`, or add `{KUBECTL_KINDS}` to `kubectl get`; live, every "
            "list is read)",)


def unknown_plan(plan: Plan, missing: tuple[str, ...]) -> Plan:
    """A plan made without the pod's devices (the state lacks the `missing` kinds they depend on):
    `unknown`, with what it would be without them; `infeasible` stays, since devices only add to
    what stops a pod — unless an extended resource named after a DeviceClass is what stopped it
    (without the classes, nothing maps it)."""
    named = "DeviceClass" in missing and any(r.startswith(CLASS_PREFIX) for r in plan.pod.requests.scalar)
    if plan.outcome == "infeasible" and not named:
        return replace(plan, missing_kinds=missing)
    if plan.outcome == "fits":
        blind = f"without its devices it would fit on node {plan.node}"
    elif plan.outcome == "evict":
        blind = f"without its devices it would need evicting {len(plan.victims)} pod(s) on node {plan.node}"
    else:
        blind = f"without its devices: {plan.message}"
    return Plan(plan.pod, plan.priority, "unknown", taint=plan.taint, message=f"{unknown_message(missing)}; {blind}",
                notes=plan.notes, profile=plan.profile, warnings=plan.warnings, devices=(), missing_kinds=missing)
