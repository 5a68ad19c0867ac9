"""`kresched untaint` (and the cleaning step of `reconcile`): remove kresched's reservations that
are no longer needed — and only kresched's.

A reservation is stale when the pod it was made for is bound, or gone, or when it is older than
the TTL (`older_than_seconds`); one made for a workload (`preempt -f`, reserved-for
`deployment/shop/web`) when the workload's pods are all bound, or after the TTL (it may never be
created); one made for a gang (`preempt` of a gang, reserved-for `podgroup/ml/train`) when no
member is Pending any more (or none is left), or after the TTL; `all_` takes every kresched
reservation. A `CriticalAddonsOnly`
taint kresched did not place is never touched (`reservation.release_patch` keeps it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from kresched.execute.api import ClusterApi
from kresched.execute.events import Event, Reporter
from kresched.execute.preempt import release_outcome
from kresched.execute.recorder import NO_RECORDER, Recorder
from kresched.execute.reservation import RESERVED_AT, Reservation, reservation_of
from kresched.model.cluster import ClusterState
from kresched.model.workloads import WORKLOAD_KINDS
from kresched.plan.whatif import runs_in

__all__ = ["Decision", "UntaintResult", "gang_of_reservation", "select_stale", "untaint", "workload_of_reservation"]


@dataclass(frozen=True)
class Decision:
    reservation: Reservation
    remove: bool
    reason: str


@dataclass
class UntaintResult:
    removed: list[Decision] = field(default_factory=list)
    kept: list[Decision] = field(default_factory=list)
    failed: list[Decision] = field(default_factory=list)


def select_stale(state: ClusterState, now: datetime, older_than_seconds: float, all_: bool = False,
                 nodes: list[str] | None = None) -> list[Decision]:
    """A decision for every kresched reservation (on `nodes`, if given), in node-name order."""
    out = []
    for node in sorted(state.nodes, key=lambda n: n.name):
        if nodes and node.name not in nodes:
            continue
        res = reservation_of(node)
        if res is None:
            continue
        out.append(Decision(res, *_stale(res, state, now, older_than_seconds, all_)))
    return out


def _stale(res: Reservation, state: ClusterState, now: datetime, ttl: float, all_: bool) -> tuple[bool, str]:
    if all_:
        return True, "--all"
    if res.pod is None:
        return True, "kresched's taint without a record of the pod it was for"
    gang = gang_of_reservation(res.pod)
    if gang is not None:
        return _gang_stale(res, gang, state, now, ttl)
    workload = workload_of_reservation(res.pod)
    if workload is not None:
        return _workload_stale(res, workload, state, now, ttl)
    pod = state.pod(res.pod)
    if pod is None:
        return True, f"{res.pod} is gone"
    if pod.spec.node_name:
        return True, f"{res.pod} is bound to {pod.spec.node_name}"
    if res.unreadable_time is not None:
        return True, (f"its {RESERVED_AT} annotation {res.unreadable_time!r} is not an RFC 3339 time with a zone "
                      "(e.g. 2025-01-01T00:00:00Z)")
    if res.reserved_at is None:
        return True, "no readable reservation time"
    age = (now - res.reserved_at).total_seconds()
    if age > ttl:
        return True, f"reserved {_age(age)} ago, longer than {_age(ttl)}"
    return False, f"{res.pod} is still Pending; reserved {_age(age)} ago"


def workload_of_reservation(value: str) -> tuple[str, str, str] | None:
    """(kind, namespace, name) of a reservation made for a workload (`preempt -f`, reserved-for
    `deployment/shop/web`); None for a pod's (`shop/web-1`)."""
    parts = value.split("/")
    if len(parts) != 3:
        return None
    kind = _WORKLOAD_KINDS.get(parts[0])
    return (kind, parts[1], parts[2]) if kind is not None else None


_WORKLOAD_KINDS = {k.lower(): k for k in WORKLOAD_KINDS}


def gang_of_reservation(value: str) -> tuple[str, str] | None:
    """(namespace, name) of a reservation made for a gang (reserved-for `podgroup/ml/train`)."""
    parts = value.split("/")
    return (parts[1], parts[2]) if len(parts) == 3 and parts[0] == "podgroup" else None


def _gang_stale(res: Reservation, gang: tuple[str, str], state: ClusterState, now: datetime,
                ttl: float) -> tuple[bool, str]:
    """A gang's reservation is stale once no member of it is Pending (they are bound, or gone), or
    after the TTL."""
    members = [p for g in state.gangs.find(*gang) for p in g.members if not p.is_terminating]
    pending = sum(1 for p in members if p.is_pending)
    if not members:
        return True, f"no member of {res.pod} is left"
    if not pending:
        return True, f"the members of {res.pod} are bound"
    if res.unreadable_time is not None or res.reserved_at is None:
        return True, "no readable reservation time"
    age = (now - res.reserved_at).total_seconds()
    if age > ttl:
        return True, f"reserved {_age(age)} ago, longer than {_age(ttl)}"
    return False, f"{res.pod}: {pending} of its members still Pending; reserved {_age(age)} ago"


def _workload_stale(res: Reservation, workload: tuple[str, str, str], state: ClusterState, now: datetime,
                    ttl: float) -> tuple[bool, str]:
    """A workload's reservation is stale once the workload has pods and none of them is Pending (they
    are bound), or after the TTL (it may never be created)."""
    kind, namespace, name = workload
    ref = res.pod
    pods = [p for p in state.pods if runs_in(kind, namespace, name, p, state) and not p.is_terminating]
    if pods and not any(p.is_pending for p in pods):
        return True, f"the pods of {ref} are bound"
    if res.unreadable_time is not None or res.reserved_at is None:
        return True, "no readable reservation time"
    age = (now - res.reserved_at).total_seconds()
    if age > ttl:
        return True, f"reserved {_age(age)} ago, longer than {_age(ttl)}"
    waiting = "not created yet" if not pods else f"{sum(1 for p in pods if p.is_pending)} of its pods still Pending"
    return False, f"{ref}: {waiting}; reserved {_age(age)} ago"


def _age(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"


def untaint(api: ClusterApi, state: ClusterState, now: datetime, older_than_seconds: float, report: Reporter,
            all_: bool = False, nodes: list[str] | None = None, recorder: Recorder = NO_RECORDER) -> UntaintResult:
    result = UntaintResult()
    for d in select_stale(state, now, older_than_seconds, all_, nodes):
        node = d.reservation.node
        if not d.remove:
            result.kept.append(d)
            report(Event("kept", f"kept the reservation on {node}: {d.reason}", {"node": node, "reason": d.reason}))
            continue
        report(Event("stale", f"reservation on {node} is stale: {d.reason}", {"node": node, "reason": d.reason}))
        outcome, holder = release_outcome(api, node, report, pod_key=d.reservation.pod, why=f"stale: {d.reason}",
                                          recorder=recorder)
        if outcome == "skipped":  # reserved again for another pod since it was read: not stale
            result.kept.append(Decision(d.reservation, False, f"reserved again for {holder} meanwhile"))
        else:
            (result.removed if outcome == "released" else result.failed).append(d)
    return result
