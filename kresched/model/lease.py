"""`coordination.k8s.io/v1` Lease: the lock that keeps two `reconcile` passes from running at once.
Only the fields a lock needs. No I/O."""

from __future__ import annotations

import msgspec

from kresched.model.specs import ObjectMeta

__all__ = ["Lease", "LeaseSpec"]


class LeaseSpec(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: int | None = None


class Lease(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="kind", tag="Lease"):
    metadata: ObjectMeta = ObjectMeta()
    spec: LeaseSpec = LeaseSpec()
    api_version: str = ""
