"""VolumeBinding: a pod's claims must be bound to volumes the node can reach, or be bindable there.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/volumebinding` (volume_binding.go's
PreFilter and Filter, binder.go's `GetPodVolumeClaims`, `GetEligibleNodes`, `FindPodVolumes`):

1. PreFilter: a pod without claims (`persistentVolumeClaim` or generic ephemeral volumes) → Skip.
   A missing claim, a Lost one, one being deleted, or an ephemeral claim the pod does not own
   rejects the pod on every node (UnschedulableAndUnresolvable, upstream's texts). Claims are
   split into bound (volume named and binding completed), unbound with a WaitForFirstConsumer
   class (the scheduler binds them), and unbound otherwise — any of those rejects the pod:
   `pod has unbound immediate PersistentVolumeClaims` (a claim naming a class that does not
   exist counts as Immediate, as `IsDelayBindingMode` says). PreFilter does not narrow the nodes:
   a v1.36.2 scheduler reports a local PV on another node as a Filter failure on every node
   (recorded on a real control plane, tests/sched/rig_volumes.json), not as `didn't satisfy
   plugin(s) [VolumeBinding]`.
2. Filter (`FindPodVolumes`), every reason UnschedulableAndUnresolvable, in this order:
   - `node(s) didn't match PersistentVolume's node affinity`: a bound claim's PV node affinity does
     not match (v1.36's wording; older releases said `had volume node affinity conflict`);
   - `node(s) didn't find available persistent volumes to bind`: an unbound claim already
     provisioned for another node (`volume.kubernetes.io/selected-node`), or one that neither
     an available PV (`FindMatchingVolume`: class, size, access modes, volume mode, selector, node
     affinity; the smallest fits) nor its class's provisioner can serve on this node (no
     provisioner, `kubernetes.io/no-provisioner`, or `allowedTopologies` the node does not match);
   - `node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)`.
3. The volumes chosen per node are kept in the cycle state (`pod_volumes_by_node`): that is what
   VolumeBinding's Score reads (storage capacity scoring), when the Score phase lands.

Deliberate differences: CSIStorageCapacity is not read (`node(s) did not have enough free
storage` is never reported: capacity is assumed sufficient); in-tree PVs are not translated to
CSI before the node-affinity check (`tryTranslatePVToCSI`: only migrated in-tree PVs whose
topology labels the CSI driver rewrites are affected); a claim with `status.phase: Bound` counts
as bound without the PV controller's `bind-completed` annotation. Runs only when the source held
PersistentVolumeClaims. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from kresched.model.objects import Pod
from kresched.model.storage import (
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    StorageState,
)
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.volume_helpers import (
    check_node_affinity,
    claim_refs,
    find_matching_volume,
    matching_candidates,
    owned_by,
    pvc_not_found,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "NAME",
    "UNBOUND_IMMEDIATE",
    "PodVolumes",
    "VolumeBinding",
    "local_pv_node_names",
]

NAME = "VolumeBinding"

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

HOSTNAME_LABEL = "kubernetes.io/hostname"

_SKIP = PreFilterResult(Status(Code.SKIP))


@dataclass(frozen=True)
class PodVolumes:
    """What binding the pod on one node would do (`PodVolumes`): PVs chosen for claims, and claims
    left to their class's provisioner."""

    static_bindings: tuple[tuple[PersistentVolumeClaim, PersistentVolume], ...] = ()
    dynamic_provisions: tuple[PersistentVolumeClaim, ...] = ()


@dataclass
class _State:
    storage: StorageState
    bound: tuple[PersistentVolumeClaim, ...]
    delay: tuple[PersistentVolumeClaim, ...]
    #: Per delayed-binding claim (by key), the volumes of its class it could bind to on some node.
    candidates: dict[str, list[PersistentVolume]] = field(default_factory=dict)
    pod_volumes_by_node: dict[str, PodVolumes] = field(default_factory=dict)
    #: Where every claim is left to its class's provisioner (delayed binding, no volume to match,
    #: no node selected), the node labels Filter reads: the keys of the classes' allowedTopologies
    #: (None: Filter reads more of the node).
    topology_keys: tuple[str, ...] | None = None
    #: Filter's verdicts then, per the node's values of `topology_keys` (the same on every node with
    #: those values: a cache, shared by clones).
    by_topology: dict[tuple[str | None, ...], tuple[Status, PodVolumes]] = field(default_factory=dict)
    #: With `topology_keys`: Filter's verdict on a node is a function of its labels and
    #: `verdict_key` (`_provisioning_key`: the claims by class, not by name), so that a search may
    #: reuse it for another pod with the same key (`sched.resume`; `pod_volumes_by_node` then holds
    #: only the nodes filtered for this pod).
    node_local: bool = False
    verdict_key: bytes | None = None

    def clone(self) -> _State:
        return _State(self.storage, self.bound, self.delay, self.candidates, dict(self.pod_volumes_by_node),
                      self.topology_keys, self.by_topology, self.node_local, self.verdict_key)


def _unresolvable(msg: str) -> PreFilterResult:
    return PreFilterResult(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,)))


class VolumeBinding:
    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        storage = snapshot.storage
        if not storage.has_claims or not pod.claim_names:
            return _SKIP
        claims: list[PersistentVolumeClaim] = []
        for name, ephemeral in claim_refs(pod):
            pvc = storage.pvc(pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    return _unresolvable(f'waiting for ephemeral volume controller to create the '
                                         f'persistentvolumeclaim "{name}"')
                return _unresolvable(pvc_not_found(name))
            if pvc.status.phase == "Lost":
                return _unresolvable(f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume '
                                     f'"{pvc.spec.volume_name}"')
            if pvc.metadata.deletion_timestamp is not None:
                return _unresolvable(f'persistentvolumeclaim "{pvc.name}" is being deleted')
            if ephemeral and not owned_by(pvc, pod):
                return _unresolvable(f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                                     f"{pod.namespace}/{pod.name} (pod is not owner)")
            claims.append(pvc)
        bound: list[PersistentVolumeClaim] = []
        delay: list[PersistentVolumeClaim] = []
        immediate: list[PersistentVolumeClaim] = []
        for pvc in claims:
            if pvc.is_fully_bound:
                bound.append(pvc)
            elif _is_delay_binding(pvc, storage) and not pvc.spec.volume_name:
                delay.append(pvc)
            else:
                immediate.append(pvc)
        if immediate:
            return PreFilterResult(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (UNBOUND_IMMEDIATE,),
                                          details=tuple(f"claim {c.name} is not bound" for c in immediate)))
        # The node-independent half of FindMatchingVolume, once per pod instead of once per node.
        candidates = {c.key: matching_candidates(c, storage.bindable(c))
                      for c in delay if ANN_SELECTED_NODE not in c.metadata.annotations}
        provisioned = not bound and len(candidates) == len(delay) and not any(candidates.values())
        keys = _topology_keys(delay, storage) if provisioned else None
        cycle.write(NAME, _State(storage, tuple(bound), tuple(delay), candidates, topology_keys=keys,
                                 node_local=keys is not None,
                                 verdict_key=_provisioning_key(delay, storage) if keys is not None else None))
        return PreFilterResult()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        state: _State | None = cycle.read(NAME)
        if state is None:
            return SUCCESS
        keys = state.topology_keys
        if keys is None:
            st, volumes = _verdict(*_find_pod_volumes(state, node_info))
        else:
            labels = node_info.node.metadata.labels
            values = tuple([labels.get(k) for k in keys])
            hit = state.by_topology.get(values)
            if hit is None:
                hit = state.by_topology[values] = _verdict(*_find_pod_volumes(state, node_info))
            st, volumes = hit
        if st.code:
            return st
        state.pod_volumes_by_node[node_info.name] = volumes
        return SUCCESS

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None


def _is_delay_binding(pvc: PersistentVolumeClaim, storage: StorageState) -> bool:
    """`IsDelayBindingMode`: no class, or a class that does not exist, is Immediate."""
    if not pvc.storage_class:
        return False
    sc = storage.storage_class(pvc.storage_class)
    return sc is not None and sc.is_wait_for_first_consumer


def local_pv_node_names(pv: PersistentVolume) -> set[str]:
    """`GetLocalPersistentVolumeNodeNames`: per required term, the intersection of its
    `kubernetes.io/hostname In [...]` values; the union over the terms. (Planning uses it to say
    which node a victim's local volume holds it to.)"""
    aff = pv.spec.node_affinity
    if aff is None or aff.required is None:
        return set()
    out: set[str] = set()
    for term in aff.required.node_selector_terms:
        nodes: set[str] | None = None
        for req in term.match_expressions:
            if req.key == HOSTNAME_LABEL and req.operator == "In":
                nodes = set(req.values) if nodes is None else nodes & set(req.values)
        out |= nodes or set()
    return out


def _verdict(reasons: list[str], details: list[str], volumes: PodVolumes) -> tuple[Status, PodVolumes]:
    """Filter's status from `_find_pod_volumes`' answer, with what binding would do."""
    if reasons:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons), NAME, details=tuple(details)), volumes
    return SUCCESS, volumes


def _topology_keys(claims: Sequence[PersistentVolumeClaim], storage: StorageState) -> tuple[str, ...]:
    """The node labels `_check_provisions` reads for `claims`: the keys of their classes'
    allowedTopologies."""
    keys: dict[str, None] = {}
    for pvc in claims:
        sc = storage.storage_class(pvc.storage_class)
        if sc is None:
            continue
        for term in sc.allowed_topologies or ():
            for req in term.match_label_expressions or ():
                keys[req.key] = None
    return tuple(keys)


def _provisioning_key(claims: Sequence[PersistentVolumeClaim], storage: StorageState) -> bytes:
    """What Filter reads of `claims`, each left to its class to provision (`topology_keys`): per
    claim, in the order Filter checks them (by size), its class — and its name where the class may
    refuse a node (the status names the claim), else not: the replicas of a StatefulSet, each with
    its own new claim of one class, then get the same verdicts."""
    out = []
    for pvc in sorted(claims, key=lambda c: c.request_bytes):
        sc = storage.storage_class(pvc.storage_class)
        refuses = sc is None or not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER \
            or bool(sc.allowed_topologies)
        out.append((pvc.storage_class, pvc.name if refuses else None))
    return repr(out).encode()


def _find_pod_volumes(state: _State, node_info: NodeInfo) -> tuple[list[str], list[str], PodVolumes]:
    """`FindPodVolumes`: (reasons, details, what would be bound)."""
    node = node_info.node
    labels = node.metadata.labels
    storage = state.storage
    bound_ok = unbound_ok = pvs_found = True
    details: list[str] = []
    static: list[tuple[PersistentVolumeClaim, PersistentVolume]] = []
    dynamic: list[PersistentVolumeClaim] = []
    for pvc in state.bound:  # checkBoundClaims: stops at the first failure
        pv = storage.pv(pvc.spec.volume_name)
        if pv is None:
            pvs_found = False
            details.append(f"claim {pvc.name} is bound to {pvc.spec.volume_name}, which does not exist")
            break
        if not check_node_affinity(pv, labels):
            bound_ok = False
            details.append(f"claim {pvc.name} is bound to {pv.name}, whose node affinity this node does not match")
            break
    if state.delay:
        to_match: list[PersistentVolumeClaim] = []
        to_provision: list[PersistentVolumeClaim] = []
        mismatch = None
        for pvc in state.delay:
            selected = pvc.metadata.annotations.get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node_info.name:
                    mismatch = pvc
                    break
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        if mismatch is not None:
            unbound_ok = False
            details.append(f"claim {mismatch.name} is being provisioned for node "
                           f"{mismatch.metadata.annotations[ANN_SELECTED_NODE]}")
        else:
            if to_match:
                chosen: set[str] = set()
                for pvc in sorted(to_match, key=lambda c: c.request_bytes):
                    pv = find_matching_volume(pvc, state.candidates.get(pvc.key, ()), node, chosen)
                    if pv is None:
                        unbound_ok = False
                        to_provision.append(pvc)
                        continue
                    chosen.add(pv.name)
                    static.append((pvc, pv))
            if to_provision:
                unbound_ok, why = _check_provisions(to_provision, storage, labels)
                if why:
                    details.append(why)
                else:
                    dynamic.extend(to_provision)
    reasons = []
    if not bound_ok:
        reasons.append(ERR_REASON_NODE_CONFLICT)
    if not unbound_ok:
        reasons.append(ERR_REASON_BIND_CONFLICT)
    if not pvs_found:
        reasons.append(ERR_REASON_PV_NOT_EXIST)
    return reasons, details, PodVolumes(tuple(static), tuple(dynamic))


def _check_provisions(claims: list[PersistentVolumeClaim], storage: StorageState,
                      labels: dict[str, str]) -> tuple[bool, str | None]:
    """`checkVolumeProvisions` (storage capacity not checked): whether every claim's class can
    provision a volume reachable from a node with these labels, and why not."""
    for pvc in claims:
        sc = storage.storage_class(pvc.storage_class)
        if sc is None:  # delayed binding needs the class: cannot happen, but say so if it does
            return False, f"claim {pvc.name}: StorageClass {pvc.storage_class} does not exist"
        if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
            return False, (f"claim {pvc.name}: no available PersistentVolume matches it here, and StorageClass "
                           f"{sc.name} cannot provision one")
        if not match_topology_selector_terms(sc, labels):
            return False, (f"claim {pvc.name}: no available PersistentVolume matches it here, and StorageClass "
                           f"{sc.name} provisions only in its allowedTopologies")
    return True, None


def match_topology_selector_terms(sc: StorageClass, labels: dict[str, str]) -> bool:
    """`MatchTopologySelectorTerms`: no terms match everything; an empty term nothing; a term
    matches when each of its keys has one of its values."""
    terms = sc.allowed_topologies
    if not terms:
        return True
    for term in terms:
        if not term.match_label_expressions:
            continue
        if all(req.values and labels.get(req.key) in req.values for req in term.match_label_expressions):
            return True
    return False
