"""VolumeRestrictions: disks that cannot be shared, and ReadWriteOncePod claims already in use.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go`:

1. PreFilter looks up every `persistentVolumeClaim` volume's claim (a missing one rejects the pod
   on every node: `persistentvolumeclaim "NAME" not found`, UnschedulableAndUnresolvable — generic
   ephemeral volumes are not looked at here) and keeps those with the ReadWriteOncePod access mode;
   it counts how many of them a pod on some node already uses (`conflictingPVCRefCount`). It
   returns Skip when the pod has no in-tree disk to check (GCE PD, AWS EBS, RBD, iSCSI) and no
   such conflict.
2. Filter, per node: an in-tree disk also mounted by a pod on the node, unless both mount it
   read-only (GCE PD, iSCSI, RBD; EBS never shares) → `node(s) had no available disk`; then any
   ReadWriteOncePod conflict, wherever the other pod runs → `node(s) unavailable due to
   PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod` (v1.36's
   wording, recorded on a real control plane). Both Unschedulable:
   evicting the pod that holds the disk or the claim fixes it.
3. AddPod/RemovePod (preemption) change the conflict count by the number of the pod's volumes
   that name one of those claims — by claim name alone, as upstream counts them.

With no PersistentVolumeClaims in the source at all (a snapshot without storage kinds) the claim
part is not run; the in-tree disk check needs nothing but the pods. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kresched.model.objects import Pod
from kresched.model.specs import Volume
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.volume_helpers import pvc_not_found

__all__ = ["ERR_REASON_DISK_CONFLICT", "ERR_REASON_RWOP_CONFLICT", "NAME", "VolumeRestrictions"]

NAME = "VolumeRestrictions"

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
                            "already in-use by another pod")

_SKIP = PreFilterResult(Status(Code.SKIP))


@dataclass
class _State:
    """`preFilterState`: the pod's ReadWriteOncePod claim names and how many pods use them."""

    rwop_claims: frozenset[str]
    conflicting: int

    def clone(self) -> _State:
        return _State(self.rwop_claims, self.conflicting)

    def count_for(self, pod: Pod) -> int:
        claims = self.rwop_claims
        return sum(1 for v in pod.spec.volumes
                   if v.persistent_volume_claim is not None and v.persistent_volume_claim.claim_name in claims)


def _needs_restrictions_check(v: Volume) -> bool:
    return v.gce_persistent_disk is not None or v.aws_elastic_block_store is not None or v.rbd is not None \
        or v.iscsi is not None


class VolumeRestrictions:
    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        needs_check = any(_needs_restrictions_check(v) for v in pod.spec.volumes)
        rwop: set[str] = set()
        storage = snapshot.storage
        if storage.has_claims:
            for v in pod.spec.volumes:
                if v.persistent_volume_claim is None:
                    continue
                name = v.persistent_volume_claim.claim_name
                pvc = storage.pvc(pod.namespace, name)
                if pvc is None:
                    return PreFilterResult(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (pvc_not_found(name),)))
                if "ReadWriteOncePod" in pvc.spec.access_modes:
                    rwop.add(pvc.name)
        conflicting = sum(1 for c in rwop if snapshot.is_pvc_used_by_pods(f"{pod.namespace}/{c}"))
        if not needs_check and conflicting == 0:
            return _SKIP
        cycle.write(NAME, _State(frozenset(rwop), conflicting))
        return PreFilterResult()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        conflicts = _disk_conflicts(pod, node_info)
        if conflicts:
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,), NAME,
                          details=tuple(f"volume {v} is mounted by {p}" for v, p in conflicts))
        state: _State | None = cycle.read(NAME)
        if state is not None and state.conflicting > 0:
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_RWOP_CONFLICT,), NAME,
                          details=tuple(f"claim {c} (ReadWriteOncePod) is in use" for c in sorted(state.rwop_claims)))
        return SUCCESS

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        state: _State | None = cycle.read(NAME)
        if state is not None:
            state.conflicting += state.count_for(pod_to_add)

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        state: _State | None = cycle.read(NAME)
        if state is not None:
            state.conflicting -= state.count_for(pod_to_remove)


def _disk_conflicts(pod: Pod, node_info: NodeInfo) -> list[tuple[str, str]]:
    """`satisfyVolumeConflicts`: (volume name, pod) for the first pod on the node each in-tree
    disk of `pod` conflicts with."""
    out = []
    for v in pod.spec.volumes:
        if not _needs_restrictions_check(v):
            continue
        for existing in node_info.pods:
            if _is_volume_conflict(v, existing):
                out.append((v.name, existing.key))
                break
    return out


def _is_volume_conflict(v: Volume, pod: Pod) -> bool:
    """`isVolumeConflict`."""
    for e in pod.spec.volumes:
        if v.gce_persistent_disk is not None and e.gce_persistent_disk is not None:
            a, b = v.gce_persistent_disk, e.gce_persistent_disk
            if a.pd_name == b.pd_name and not (a.read_only and b.read_only):
                return True
        if (v.aws_elastic_block_store is not None and e.aws_elastic_block_store is not None
                and v.aws_elastic_block_store.volume_id == e.aws_elastic_block_store.volume_id):
            return True
        if (v.iscsi is not None and e.iscsi is not None and v.iscsi.iqn == e.iscsi.iqn
                and not (v.iscsi.read_only and e.iscsi.read_only)):
            return True
        if v.rbd is not None and e.rbd is not None:
            a2, b2 = v.rbd, e.rbd
            if (set(a2.monitors) & set(b2.monitors) and a2.pool == b2.pool and a2.image == b2.image
                    and not (a2.read_only and b2.read_only)):
                return True
    return False
