"""The `reconcile` lock: a `coordination.k8s.io/v1` Lease, taken like client-go's leader election
takes one (a holder, a duration, renewTime; an expired Lease may be taken over; every write is
conditional on the resourceVersion read, so two passes racing for it cannot both win).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kresched.execute.api import ClusterApi, Conflict, NotFound
from kresched.execute.reservation import parse_time
from kresched.model.lease import Lease

__all__ = ["LockResult", "holder_identity", "acquire", "release"]


def holder_identity() -> str:
    """The pod's name in a cluster (POD_NAME, else HOSTNAME, which Kubernetes sets to it), plus the pid."""
    host = os.environ.get("POD_NAME") or os.environ.get("HOSTNAME") or socket.gethostname()
    return f"{host}_{os.getpid()}"


def _micro(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LockResult:
    acquired: bool
    lease: Lease | None
    #: When not acquired: who holds it and until when.
    holder: str | None = None
    expires: datetime | None = None
    taken_over_from: str | None = None


def acquire(api: ClusterApi, namespace: str, name: str, identity: str, duration_seconds: int,
            now: datetime) -> LockResult:
    spec = {"holderIdentity": identity, "leaseDurationSeconds": duration_seconds,
            "acquireTime": _micro(now), "renewTime": _micro(now)}
    lease = api.get_lease(namespace, name)
    if lease is None:
        try:
            return LockResult(True, api.create_lease(namespace, name, {**spec, "leaseTransitions": 0}))
        except Conflict:  # 409 AlreadyExists: another pass created it first
            lease = api.get_lease(namespace, name)
            if lease is None:
                raise
    holder = lease.spec.holder_identity or ""
    renewed = parse_time(lease.spec.renew_time) or parse_time(lease.spec.acquire_time)
    expires = renewed + timedelta(seconds=lease.spec.lease_duration_seconds or 0) if renewed else None
    if holder and holder != identity and expires is not None and expires > now:
        return LockResult(False, lease, holder, expires)
    transitions = (lease.spec.lease_transitions or 0) + (1 if holder != identity else 0)
    try:
        taken = api.update_lease(lease, {**spec, "leaseTransitions": transitions})
    except Conflict:
        current = api.get_lease(namespace, name)
        who = current.spec.holder_identity if current else None
        return LockResult(False, current, who, None)
    return LockResult(True, taken, taken_over_from=holder if holder and holder != identity else None)


def release(api: ClusterApi, lease: Lease, now: datetime) -> bool:
    """Give the lock up at once (client-go's ReleaseOnCancel: empty holder, 1 s duration).

    True when released (or when the Lease is gone: nothing to release); False when another holder
    has taken it since (this pass outlived its Lease). A Lease changed meanwhile but still ours
    (someone edited it) is read again and released. Other failures raise."""
    holder = lease.spec.holder_identity
    for _ in range(3):
        spec = {"holderIdentity": "", "leaseDurationSeconds": 1, "renewTime": _micro(now),
                "acquireTime": lease.spec.acquire_time, "leaseTransitions": lease.spec.lease_transitions}
        try:
            api.update_lease(lease, {k: v for k, v in spec.items() if v is not None})
            return True
        except NotFound:
            return True
        except Conflict:
            current = api.get_lease(lease.metadata.namespace, lease.metadata.name)
            if current is None:
                return True
            if current.spec.holder_identity != holder:
                return False
            lease = current
    raise Conflict(f"Lease {lease.metadata.namespace}/{lease.metadata.name} kept changing while being released",
                   409, "Conflict")
