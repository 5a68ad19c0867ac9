"""VolumeZone: a pod's bound volumes carry zone/region labels the node must have.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/volumezone/volume_zone.go`:

1. PreFilter collects the topology labels (`topology.kubernetes.io/zone|region` and their
   `failure-domain.beta.kubernetes.io/` forms; a value may list several zones joined by `__`) of
   the PVs bound to the pod's claims (`persistentVolumeClaim` and generic ephemeral volumes). A
   missing claim, PV or StorageClass rejects the pod on every node (UnschedulableAndUnresolvable,
   the lister's NotFound text); so does an unbound claim without a class (`PersistentVolumeClaim
   had no pv name and storageClass name`) or with an Immediate class (`PersistentVolume had no
   name`); an unbound WaitForFirstConsumer claim is left to VolumeBinding. No topology labels →
   Skip.
2. Filter: a node without any of those four labels passes (single-zone clusters); otherwise each
   PV label's key — a beta key falling back to the node's GA label — must be on the node with one
   of the PV's values, else `node(s) had no available volume zone`, UnschedulableAndUnresolvable:
   no eviction moves a disk to another zone.

Runs only when the source held PersistentVolumeClaims. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kresched.model.objects import Pod
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.volume_helpers import pv_not_found, pvc_not_found, storage_class_not_found

__all__ = ["ERR_REASON_CONFLICT", "NAME", "TOPOLOGY_LABELS", "VolumeZone", "pv_topologies"]

NAME = "VolumeZone"

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"
#: `topologyLabels`, in upstream's order.
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)
_TO_GA = {BETA_ZONE: GA_ZONE, BETA_REGION: GA_REGION}

_SKIP = PreFilterResult(Status(Code.SKIP))


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def _unresolvable(msg: str) -> PreFilterResult:
    return PreFilterResult(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,)))


class VolumeZone:
    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        storage = snapshot.storage
        if not storage.has_claims or not pod.claim_names:
            return _SKIP
        topologies: list[PVTopology] = []
        for claim_name in pod.claim_names:
            if not claim_name:
                return _unresolvable("PersistentVolumeClaim had no name")
            pvc = storage.pvc(pod.namespace, claim_name)
            if pvc is None:
                return _unresolvable(pvc_not_found(claim_name))
            if not pvc.spec.volume_name:
                sc_name = pvc.storage_class
                if not sc_name:
                    return _unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                sc = storage.storage_class(sc_name)
                if sc is None:
                    return _unresolvable(storage_class_not_found(sc_name))
                if sc.is_wait_for_first_consumer:
                    continue
                return _unresolvable("PersistentVolume had no name")
            pv = storage.pv(pvc.spec.volume_name)
            if pv is None:
                return _unresolvable(pv_not_found(pvc.spec.volume_name))
            topologies.extend(pv_topologies(pv.name, pv.labels))
        if not topologies:
            return _SKIP
        cycle.write(NAME, tuple(topologies))
        return PreFilterResult()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        topologies: tuple[PVTopology, ...] = cycle.read(NAME) or ()
        labels = node_info.node.metadata.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return SUCCESS
        for t in topologies:
            value = labels.get(t.key)
            if value is None:
                value = labels.get(_TO_GA.get(t.key, t.key))
            if value is None or value not in t.values:
                have = f"the node has {value!r}" if value is not None else "the node has no such label"
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,), NAME,
                              details=(f"volume {t.pv_name} is in {t.key}={'|'.join(sorted(t.values))}; {have}",))
        return SUCCESS

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None


def pv_topologies(pv_name: str, labels: dict[str, str]) -> list[PVTopology]:
    """`getPVTopologies`: one entry per topology label on the PV, its value split on `__`
    (`LabelZonesToSet`); a value with an empty zone in it is ignored, as upstream does."""
    out = []
    for key in TOPOLOGY_LABELS:
        if key not in labels:
            continue
        zones = [z.strip() for z in labels[key].split("__")]
        if all(zones):
            out.append(PVTopology(pv_name, key, frozenset(zones)))
    return out
