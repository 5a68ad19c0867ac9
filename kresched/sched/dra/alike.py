"""The allocator's first fit, found once for the nodes whose devices its search reads alike.

The first fit on a node (`Allocator.allocate`) is a search over the node's devices in a fixed order,
which reads of each device what the selectors and the claims' constraints read of it
(`Allocator.signature`: its driver, attributes and capacity), its taints, whether it has binding
conditions, whether its slice selects the node and whether it is in use, and which pool it is in;
and of the node's pools whether each is incomplete or invalid. Two nodes alike in all of that
(`node_facts`) get the same answer for the same claims: no fit on either, or a fit that takes the
devices at the same places — `Allocator.replay` builds it with the other node's devices (their pool
and device names, its own node selector). A GPU cluster's nodes fall into a few such groups: the 5k
GPU queue's 24,213 allocations past DynamicResources' kept verdicts, 75.

Not compared (`node_facts` None): a node with a device that consumes counters or allows multiple
allocations, or with capacity or a share of a device in use (what the search reads of those is
more than whether it is in use). An answer that is an error is never shared (it names the node's
objects). Pure.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from kresched.model.dra import ResourceClaim
from kresched.model.objects import Node

__all__ = ["ALIKE_FACTS", "ALIKE_FITS", "KeptFacts", "first_fit", "node_facts"]

#: `DraState.derived` key of the run's `KeptFacts`.
ALIKE_FACTS = "alike-facts"
#: `DraState.derived` key: per (claims' specs, `node_facts`), where the first fit took
#: the devices (`Picks`), or None where nothing fits.
ALIKE_FITS = "alike-fits"


class KeptFacts:
    """What `node_facts` keeps in a run: per node name, the labels and slice index its facts were
    found for, what of them is fixed all run, and its pools' versions (`pools_stamp`) with its facts
    then (`nodes`); and the numbers given to distinct facts (`numbers`) and to their fixed parts
    (`fixed`)."""

    __slots__ = ("fixed", "nodes", "numbers")

    def __init__(self) -> None:
        self.nodes: dict[str, tuple[Any, Any, tuple[tuple, int] | None, tuple[tuple[int, ...], int | None]]] = {}
        self.fixed: dict[tuple, int] = {}
        self.numbers: dict[tuple, int] = {}


def node_facts(allocator: Any, node: Node, stamp: tuple[int, ...], kept: KeptFacts) -> int | None:
    """All the allocator's search reads of `node`'s devices and pools (see the module), as a number
    equal for nodes alike (and the same allocator features); None where nodes are not compared.
    Kept per node (`kept`): what does not change in a run once (per the node's labels, which select
    its slices, and the run's slice index), and what is in use while its pools' versions are `stamp`
    (it changes only with them)."""
    name = node.metadata.name
    labels, index = node.metadata.labels, allocator.index
    hit = kept.nodes.get(name)
    if hit is not None and hit[0] is labels and hit[1] is index:
        if hit[3][0] == stamp:
            return hit[3][1]
        fixed = hit[2]
    else:
        fixed = _fixed(allocator, allocator.pools_for(node), kept)
    facts = None
    if fixed is not None:
        ids, allocated = fixed[0], allocator.allocated
        if not ((allocated.capacity or allocated.shared_devices)
                and any(d in allocated.capacity or d in allocated.shared_devices for d in ids)):
            numbers = kept.numbers
            facts = numbers.setdefault((allocator.features, fixed[1], tuple(map(allocated.is_dedicated, ids))),
                                       len(numbers))
    kept.nodes[name] = (labels, index, fixed, (stamp, facts))
    return facts


def _fixed(allocator: Any, pools: Any, kept: KeptFacts) -> tuple[tuple, int] | None:
    """The devices' ids, and what the search reads of the node's devices and pools but whether a
    device is in use (the same all run), as a number equal for nodes alike in it; None where a device
    consumes counters or allows multiple allocations."""
    if any(e.consumes or e.allow_multiple for e in pools.entries):
        return None
    place = {id(p): k for k, p in enumerate(pools.pools)}
    devices = tuple((allocator.signature(e.id[0], e.device), e.device.taints, bool(e.device.binding_conditions),
                     e.node_ok, place[id(e.pool)]) for e in pools.entries)
    numbers = kept.fixed
    fixed = (devices, tuple((p.is_incomplete, p.is_invalid) for p in pools.pools), pools.has_invalid)
    return tuple(e.id for e in pools.entries), numbers.setdefault(fixed, len(numbers))


def first_fit(allocator: Any, node: Node, claims: Sequence[ResourceClaim], signature: bytes,
              stamp: tuple[int, ...], derived: dict[str, Any]) -> Any:
    """`allocator.allocate(node, claims)` (`signature`: the claims' specs, `stamp`: the versions of
    the node's pools), from the answer found on a node alike where there is one; raises as it."""
    kept = derived.get(ALIKE_FACTS)
    if kept is None:
        kept = derived[ALIKE_FACTS] = KeptFacts()
    facts = node_facts(allocator, node, stamp, kept)
    if facts is None:
        return allocator.allocate(node, claims)
    fits: dict[Hashable, Any] = derived.setdefault(ALIKE_FITS, {})
    key = (signature, facts)
    picks = fits.get(key, _UNKNOWN)
    if picks is None:
        return None
    if picks is not _UNKNOWN:
        return allocator.replay(node, claims, picks)
    result, picks = allocator.allocate_picks(node, claims)
    fits[key] = picks if result is not None else None
    return result


_UNKNOWN = object()
