"""Consumable capacity, as the v1.36 allocator checks and consumes it
(`structured/internal/incubating/consumable_capacity.go`).

Owns: how much of each capacity a request consumes on a device (the requested amount rounded up
per the capacity's `requestPolicy`: `validRange` min/step, or the next of `validValues`; without a
request, the policy's `default`, else the *entire* capacity), whether that violates the policy,
and whether it fits what is left (`fits`: a request naming a capacity the device lacks never fits).
Amounts are exact `Fraction`s; `quantity_text` writes a computed amount back as a quantity.
Must not do I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from kresched.model.dra import CapacityRequestPolicy, DeviceCapacity, quantity_value
from kresched.model.specs import Quantity

__all__ = ["consumed_capacity", "fits", "quantity_text"]

#: A consumed amount: its exact value and how it is written in the result.
Amount = tuple[Fraction, Quantity]


def _q(raw: Quantity | None) -> Fraction | None:
    return None if raw is None else quantity_value(raw)


def _consumed(requested: Quantity | None, cap: DeviceCapacity) -> Amount:
    """`calculateConsumedCapacity`."""
    policy = cap.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return quantity_value(policy.default), policy.default
        return quantity_value(cap.value), cap.value
    value = quantity_value(requested)
    if policy is None:
        return value, requested
    rng = policy.valid_range
    if rng is not None and rng.min is not None:
        low = quantity_value(rng.min)
        if value < low:
            return low, rng.min
        if rng.step is None:
            return value, requested
        # Value() rounds up to whole units; the result is a new BinarySI quantity.
        step, start = math.ceil(quantity_value(rng.step)), math.ceil(low)
        added = math.ceil(value) - start
        n = int(added / step) if step else 0  # Go's integer division truncates toward zero
        if step and added - n * step != 0:
            n += 1
        rounded = start + step * n
        return Fraction(rounded), quantity_text(Fraction(rounded))
    if policy.valid_values:
        for v in policy.valid_values:
            if value <= quantity_value(v):
                return quantity_value(v), v
    return value, requested


def _violates(value: Fraction, policy: CapacityRequestPolicy | None) -> bool:
    """`violatesPolicy`: the default is always fine; else outside the range/step or not a valid value."""
    if policy is None:
        return False
    if policy.default is not None and value == quantity_value(policy.default):
        return False
    rng = policy.valid_range
    if rng is not None:
        if rng.max is not None and value > quantity_value(rng.max):
            return True
        if rng.step is not None:
            step = math.ceil(quantity_value(rng.step))
            start = math.ceil(quantity_value(rng.min)) if rng.min is not None else 0
            added = math.ceil(value) - start
            return bool(step) and math.fmod(added, step) != 0
        return False
    if policy.valid_values:
        return all(value != quantity_value(v) for v in policy.valid_values)
    return False


def consumed_capacity(requests: Mapping[str, Quantity] | None,
                      capacity: Mapping[str, DeviceCapacity]) -> dict[str, Amount]:
    """`GetConsumedCapacityFromRequest`: what a request consumes of each of the device's capacities."""
    return {name: _consumed((requests or {}).get(name), cap) for name, cap in capacity.items()}


def fits(requests: Mapping[str, Quantity] | None, capacity: Mapping[str, DeviceCapacity],
         allocated: Mapping[str, Fraction] | None, allocating: Mapping[str, Fraction] | None) -> bool:
    """`CmpRequestOverCapacity`: the request's consumption of every capacity, plus what is allocated
    and being allocated, stays within the capacity, and no consumption violates its policy."""
    if not capacity:
        return not requests
    if requests and any(name not in capacity for name in requests):
        return False
    for name, cap in capacity.items():
        value, _ = _consumed((requests or {}).get(name), cap)
        if _violates(value, cap.request_policy):
            return False
        total = value
        for taken in (allocated, allocating):
            if taken and (more := taken.get(name)):  # (a Fraction's sum costs a microsecond: none with 0)
                total += more
        if total > quantity_value(cap.value):
            return False
    return True


_BINARY = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))


def quantity_text(value: Fraction) -> str:
    """A whole amount as `resource.NewQuantity(v, BinarySI).String()` writes it."""
    n = int(value)
    if n != value:
        return str(float(value))
    for suffix, shift in _BINARY:
        if n and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)
