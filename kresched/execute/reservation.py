"""Node reservations: the taint `CriticalAddonsOnly=kresched:NoSchedule` that keeps the scheduler
from giving the room kresched frees to another pod (seed 000, "Interaction with Scheduler"), and
the annotations that record that kresched placed it.

Owns: reading a node's reservation, and the merge patches that add and remove one. The patches
carry the node's `resourceVersion`, so the API server refuses them (409) if the node changed
since it was read; the caller re-reads and tries again. Never touches a `CriticalAddonsOnly`
taint kresched did not place: managed clouds put one on system node pools on purpose, and its
value is never `kresched`. Computing a patch is pure; sending it is `kresched.execute.api`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kresched.errors import KreschedError
from kresched.execute.events import Event
from kresched.model.objects import Node
from kresched.model.specs import Taint
from kresched.plan.plans import RESERVATION_TAINT, RESERVED_FOR

__all__ = [
    "foreign_taint_refusal",
    "RESERVED_FOR",
    "RESERVED_AT",
    "Reservation",
    "ReservedByAnother",
    "reservation_of",
    "reserve_patch",
    "release_patch",
    "foreign_critical_taint",
    "parse_time",
]

RESERVED_AT = "kresched.io/reserved-at"


def _is_ours(t: Taint) -> bool:
    return (t.key, t.value, t.effect) == (RESERVATION_TAINT.key, RESERVATION_TAINT.value, RESERVATION_TAINT.effect)


@dataclass(frozen=True)
class Reservation:
    """kresched's reservation on a node: for which pod, since when, and whether the taint is there."""

    node: str
    pod: str | None
    reserved_at: datetime | None
    has_taint: bool
    #: The `reserved-at` annotation as written, when it is there but not a time kresched can read
    #: (edited by hand, no time zone): such a reservation is reported and treated as stale.
    unreadable_time: str | None = None


def reservation_of(node: Node) -> Reservation | None:
    """The node's kresched reservation, or None when it has neither our annotation nor our taint."""
    ann = node.metadata.annotations
    has_taint = any(_is_ours(t) for t in node.spec.taints)
    if RESERVED_FOR not in ann and not has_taint:
        return None
    text = ann.get(RESERVED_AT)
    at = parse_time(text)
    return Reservation(node.name, ann.get(RESERVED_FOR), at, has_taint, text if text and at is None else None)


def foreign_critical_taint(node: Node) -> Taint | None:
    """A `CriticalAddonsOnly` NoSchedule taint that is not kresched's (taints are unique per key and
    effect, so kresched cannot add its own next to it — and must never replace it)."""
    for t in node.spec.taints:
        if t.key == RESERVATION_TAINT.key and t.effect == RESERVATION_TAINT.effect and not _is_ours(t):
            return t
    return None


def foreign_taint_refusal(node: Node) -> Event | None:
    """The event that says a node is left unreserved because another's `CriticalAddonsOnly` taint
    is on it (`foreign_critical_taint`), or None."""
    foreign = foreign_critical_taint(node)
    if foreign is None:
        return None
    return Event("reserve-skipped", f"node {node.name} already carries {foreign.key}={foreign.value}:"
                                    f"{foreign.effect} (not kresched's): leaving it as it is",
                 {"node": node.name}, "warn")


def _taint_dict(t: Taint) -> dict[str, Any]:
    d: dict[str, Any] = {"key": t.key, "effect": t.effect}
    if t.value:
        d["value"] = t.value
    if t.time_added:
        d["timeAdded"] = t.time_added
    return d


class ReservedByAnother(KreschedError):
    """The node carries a kresched reservation for another pod: another run is using it (or died
    and left it; `kresched untaint` removes stale ones)."""


def reserve_patch(node: Node, pod_key: str, now: datetime, add_taint: bool) -> dict[str, Any]:
    """A JSON merge patch recording the reservation (and adding the taint when `add_taint`);
    `ReservedByAnother` when the node is already reserved for another pod.

    Merge patches replace lists whole, so `spec.taints` is the node's list plus ours — safe only
    because `metadata.resourceVersion` makes the write conditional on the node being unchanged.
    """
    current = reservation_of(node)
    if current is not None and current.pod and current.pod != pod_key:
        since = f" since {current.reserved_at:%Y-%m-%dT%H:%M:%SZ}" if current.reserved_at else ""
        raise ReservedByAnother(f"node {node.name} is reserved by kresched for {current.pod}{since} (another run?); "
                                f"if that run is gone, `kresched untaint {node.name}` removes it")
    patch: dict[str, Any] = {
        "metadata": {
            "resourceVersion": node.metadata.resource_version,
            "annotations": {RESERVED_FOR: pod_key, RESERVED_AT: now.strftime("%Y-%m-%dT%H:%M:%SZ")},
        }
    }
    if add_taint and not any(_is_ours(t) for t in node.spec.taints):
        patch["spec"] = {"taints": [*(_taint_dict(t) for t in node.spec.taints), _taint_dict(RESERVATION_TAINT)]}
    return patch


def release_patch(node: Node) -> dict[str, Any] | None:
    """A merge patch removing kresched's taint and annotations, or None when there is nothing of
    ours on the node. Other taints, `CriticalAddonsOnly` ones included, are kept as they are."""
    res = reservation_of(node)
    if res is None:
        return None
    patch: dict[str, Any] = {"metadata": {"resourceVersion": node.metadata.resource_version}}
    ann = {k: None for k in (RESERVED_FOR, RESERVED_AT) if k in node.metadata.annotations}
    if ann:
        patch["metadata"]["annotations"] = ann
    if res.has_taint:
        patch["spec"] = {"taints": [_taint_dict(t) for t in node.spec.taints if not _is_ours(t)]}
    return patch


def parse_time(text: str | None) -> datetime | None:
    """RFC 3339 (`2026-01-02T03:04:05Z`) → aware datetime; None when absent or unreadable.

    A time without a zone (`2025-01-01T00:00:00`, written by hand) is unreadable too: RFC 3339
    requires the offset, and a naive datetime cannot be compared with the clock's aware one."""
    if not text or not isinstance(text, str):
        return None
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return at if at.tzinfo is not None else None
