"""Why the allocator cannot allocate a pod's claims on a node, in facts `explain` can print: the
scheduler says only "cannot allocate all claims".

Owns: `diagnose(allocator, node, claims)`, which looks at each request (each subrequest of a
`firstAvailable` request) on its own, against the allocated state, and narrows its candidates step by
step, reporting the first step that leaves too few:
1. the node's pools: an incomplete or invalid pool is a fact of its own (its devices are not used);
2. devices of the request's class on the node (the class's selectors): none is `no-class-devices`;
3. the request's own selectors, in order: the first that no remaining device passes is
   `selector-mismatch` (with its index and expression);
4. devices already allocated (dedicated, to which claims): all taken is `all-allocated`;
5. devices whose NoSchedule/NoExecute taints the request does not tolerate: `tainted`;
6. devices whose consumable capacity does not fit the request: `capacity`;
7. fewer free devices than the count asks for: `too-few`;
and when every request fits on its own, `combination`: the claim's constraints, counters of
partitionable devices, or the claims competing for the same devices rule out every combination.
A CEL error is a fact too (`cel-error`), as is a class that does not exist. Must not do I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kresched.model.dra import ALLOCATION_MODE_ALL, DeviceClass, ResourceClaim
from kresched.model.objects import Node
from kresched.sched.dra import capacity as cap
from kresched.sched.dra.allocator import taint_prevents_allocation
from kresched.sched.dra.pools import DeviceEntry, DeviceID

if TYPE_CHECKING:
    from kresched.sched.dra.allocator import Allocator

__all__ = ["DeviceFact", "diagnose"]


@dataclass(frozen=True, slots=True)
class DeviceFact:
    """One reason, for one claim's request (or for the node's pools when `request` is "")."""

    claim: str
    request: str
    kind: str
    message: str
    class_name: str = ""
    #: Devices of the class on the node, and how many passed every step before the failing one.
    candidates: int = 0
    selector_index: int | None = None
    expression: str = ""
    #: For `all-allocated`: each device with the claim keys holding it.
    holders: tuple[tuple[DeviceID, tuple[str, ...]], ...] = ()


def _device_text(device_id: DeviceID) -> str:
    return "/".join(device_id)


def diagnose(allocator: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> list[DeviceFact]:
    pools = allocator.pools_for(node)
    facts: list[DeviceFact] = []
    for pool in pools.pools:
        if pool.is_incomplete:
            facts.append(DeviceFact("", "", "pool-incomplete", f"resource pool {pool.pool_id} is currently being "
                                    "updated (fewer slices than resourceSliceCount); no device of it is used"))
        elif pool.is_invalid:
            facts.append(DeviceFact("", "", "pool-invalid",
                                    f"resource pool {pool.pool_id} is invalid ({pool.invalid_reason}); no device "
                                    "of it is used"))
    for claim in claims:
        all_fit = True
        for request in claim.requests:
            alternatives = ([(f"{request.name}/{s.name}", s) for s in request.first_available]
                            if request.first_available else [(request.name, request.exactly)])
            request_facts = [_request_fact(allocator, pools.entries, claim, name, spec)
                             for name, spec in alternatives if spec is not None]
            if request_facts and all(f is not None for f in request_facts):
                facts.extend(f for f in request_facts if f is not None)
                all_fit = False
        if all_fit:
            facts.append(_combination(claim))
    return facts


def _combination(claim: ResourceClaim) -> DeviceFact:
    if claim.spec.devices.constraints:
        why = "the claim's constraints (matchAttribute/distinctAttribute) rule out every combination of them"
        kind = "constraint"
    else:
        why = "not all together: the requests and claims compete for the same devices, or counters run out"
        kind = "combination"
    return DeviceFact(claim.key, "", kind, f"claim {claim.key}: every request has enough devices on its own, {why}")


def _request_fact(allocator: Allocator, entries: Sequence[DeviceEntry], claim: ResourceClaim, name: str,
                  spec: object) -> DeviceFact | None:
    """The first step that leaves the request too few devices, or None if it fits on its own."""
    class_name: str = getattr(spec, "device_class_name", "")
    cls: DeviceClass | None = allocator.classes.get(class_name)
    where = f"claim {claim.key}, request {name}"
    if cls is None:
        return DeviceFact(claim.key, name, "no-class", f"{where}: device class {class_name} does not exist",
                          class_name)
    needed = getattr(spec, "exact_count", 1) if getattr(spec, "mode", "") != ALLOCATION_MODE_ALL else 1
    of_class = []
    for e in entries:
        outcome = allocator.selector_failure(e.device, e.id[0], cls.spec.selectors)
        if isinstance(outcome, tuple):
            return _cel_fact(claim, name, class_name, f"class {class_name}", outcome, cls.spec.selectors)
        if outcome and e.node_ok:
            of_class.append(e)
    if not of_class:
        return DeviceFact(claim.key, name, "no-class-devices", f"{where}: no device of class {class_name} on the node",
                          class_name)
    remaining = of_class
    selectors = getattr(spec, "selectors", ())
    for i, selector in enumerate(selectors):
        passing = []
        for e in remaining:
            outcome = allocator.selector_failure(e.device, e.id[0], (selector,))
            if isinstance(outcome, tuple):
                return _cel_fact(claim, name, class_name, f"claim {claim.key}", (i, *outcome[1:]), selectors)
            if outcome:
                passing.append(e)
        if not passing:
            expression = selector.cel.expression if selector.cel is not None else ""
            return DeviceFact(claim.key, name, "selector-mismatch",
                              f"{where}: {len(of_class)} device(s) of class {class_name}, none passes selector #{i}: "
                              f"{expression}", class_name, len(remaining), i, expression)
        remaining = passing
    admin = bool(getattr(spec, "admin_access", None))
    state = allocator.allocated
    free = remaining if admin else [e for e in remaining if not state.is_dedicated(e.id)]
    if not free:
        holders = tuple((e.id, state.holders(e.id)) for e in remaining)
        held = "; ".join(f"{_device_text(d)} by {', '.join(k) or 'an unnamed claim'}" for d, k in holders)
        return DeviceFact(claim.key, name, "all-allocated",
                          f"{where}: all {len(remaining)} matching device(s) already allocated: {held}",
                          class_name, len(remaining), holders=holders)
    tolerations = getattr(spec, "tolerations", ())
    untainted = ([e for e in free if not taint_prevents_allocation(e.device, tolerations)]
                 if allocator.features.device_taints else free)
    if not untainted:
        return DeviceFact(claim.key, name, "tainted",
                          f"{where}: {len(free)} free matching device(s), all with taints the request does not "
                          "tolerate (NoSchedule/NoExecute)", class_name, len(free))
    requests = spec.capacity.requests if getattr(spec, "capacity", None) is not None else None
    fitting = [e for e in untainted if cap.fits(requests, e.device.capacity, state.capacity.get(e.id), None)]
    if not fitting:
        return DeviceFact(claim.key, name, "capacity",
                          f"{where}: {len(untainted)} free matching device(s), none with enough capacity left",
                          class_name, len(untainted))
    if len(fitting) < needed:
        return DeviceFact(claim.key, name, "too-few",
                          f"{where}: needs {needed} device(s) of class {class_name}, only {len(fitting)} free",
                          class_name, len(fitting))
    return None


def _cel_fact(claim: ResourceClaim, name: str, class_name: str, who: str, outcome: tuple[int, str, str],
              selectors: Sequence[object]) -> DeviceFact:
    i, kind, detail = outcome
    selector = selectors[i]
    expression = selector.cel.expression if getattr(selector, "cel", None) is not None else ""  # type: ignore[attr-defined]
    return DeviceFact(claim.key, name, "cel-error", f"{who}: selector #{i}: CEL {kind} error: {detail}", class_name,
                      selector_index=i, expression=expression)
