"""`coordination.k8s.io/v1` Lease: the lock that keeps two `reconcile` passes from running at once,
and the heartbeat every kubelet renews in the `kube-node-lease` namespace (one Lease per node,
named after it). Only the fields a lock and a heartbeat need. No I/O."""

from __future__ import annotations

import msgspec

from kresched.model.specs import ObjectMeta

__all__ = ["NODE_LEASE_NAMESPACE", "Lease", "LeaseSpec"]

#: Where each kubelet renews its node's Lease (`v1.NamespaceNodeLease`).
NODE_LEASE_NAMESPACE = "kube-node-lease"


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

    def __post_init__(self) -> None:
        # An API list's items carry no apiVersion: give it back, so a snapshot written from it reads back.
        if not self.api_version:
            msgspec.structs.force_setattr(self, "api_version", "coordination.k8s.io/v1")

    @property
    def is_node_lease(self) -> bool:
        return self.metadata.namespace == NODE_LEASE_NAMESPACE
