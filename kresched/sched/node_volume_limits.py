"""NodeVolumeLimits: a node's CSI drivers attach at most `CSINode.spec.drivers[].allocatable.count`
volumes each.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/nodevolumelimits/csi.go` (`CSILimits`):

1. PreFilter: Skip unless the pod has a claim (`persistentVolumeClaim`, generic ephemeral) or an
   inline in-tree volume CSI migration covers (AWS EBS, GCE PD, Azure Disk, Cinder).
2. Filter, per node: the pod's attachable volumes as `driver/volumeHandle` — a bound claim's CSI
   PV; an in-tree PV or inline volume translated to its CSI driver (`csi-translation-lib`) when the
   node has a CSINode (migration of those four plugins is always on in v1.36); an unbound claim
   counts against its class's provisioner (a claim-unique handle). A claim of the new pod that is
   missing rejects the node (`looking up PVC NS/NAME: persistentvolumeclaim "NAME" not found`,
   UnschedulableAndUnresolvable); missing claims of running pods are not counted. Volumes already
   used by pods on the node count once and cost the pod nothing. If, for some driver with a limit,
   attached + new > limit → `node(s) exceed max volume count`, Unschedulable: evicting pods on the
   node frees their attachments (the filter reads the node's pods, so a preemption simulation
   that removes them frees them with no PreFilter extension, as upstream).

Deliberate differences: VolumeAttachment objects are not read (upstream ≥ 1.35 also counts
attachments no pod on the node accounts for, e.g. of pods still detaching); the alpha
VolumeLimitScaling check (`preventPodSchedulingIfMissing`) is not simulated; the handle of an
unbound claim uses a fixed prefix where upstream draws a random one (no randomness in kresched); a
generic ephemeral claim the new pod does not own is UnschedulableAndUnresolvable here, an Error
(which aborts the scheduling attempt) upstream.
Runs only when the source held PersistentVolumeClaims. Pure.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from kresched.model.objects import Pod
from kresched.model.specs import Volume
from kresched.model.storage import CSINode, PersistentVolume, PersistentVolumeClaim, PersistentVolumeSpec, StorageState
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.volume_helpers import claim_refs, owned_by, pvc_not_found

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "IN_TREE_TO_CSI", "NAME", "NodeVolumeLimits", "attachable_volumes"]

NAME = "NodeVolumeLimits"

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

AWS_EBS = "kubernetes.io/aws-ebs"
GCE_PD = "kubernetes.io/gce-pd"
AZURE_DISK = "kubernetes.io/azure-disk"
CINDER = "kubernetes.io/cinder"
#: In-tree plugin → the CSI driver it migrated to (csi-translation-lib), for the plugins whose
#: migration v1.36's `isCSIMigrationOn` treats as always on.
IN_TREE_TO_CSI = {
    AWS_EBS: "ebs.csi.aws.com",
    GCE_PD: "pd.csi.storage.gke.io",
    AZURE_DISK: "disk.csi.azure.com",
    CINDER: "cinder.csi.openstack.org",
}
#: Stands in for upstream's per-process random prefix of unbound claims' handles.
UNBOUND_PREFIX = "kresched-unbound-claim"
_GCE_UNSPECIFIED = "UNSPECIFIED"
_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")

_SKIP = PreFilterResult(Status(Code.SKIP))


class _MissingClaim(Exception):
    pass


class _State(NamedTuple):
    """PreFilter's state: the cluster's storage, and the pod's attachable volumes (or why a claim
    is missing) per whether the node has a CSINode — all `attachable_volumes` reads of the node —
    found on the first node of each kind."""
    storage: StorageState
    new: dict[bool, dict[str, str] | Status]
    #: `new`'s volumes counted per driver (`_per_driver`), per whether the node has a CSINode.
    counts: dict[bool, list[tuple[str, int]]]
    #: The run's `_NodeView`s by node name (kept in the storage's `derived`).
    nodes: dict[str, _NodeView]
    #: Whether Filter's verdict on a node is a function of its NodeInfo and `verdict_key` (the
    #: pod's claims by class, not by name: `_local_key`), so that a search may reuse it for
    #: another pod with the same key (`sched.resume`).
    node_local: bool = False
    verdict_key: bytes | None = None


class _NodeView(NamedTuple):
    """What Filter reads of a node, kept per node name across pods: its CSINode's limits (while it
    is the same CSINode object), and what the pods there attach and how many volumes per driver
    (while its pods with volumes are the same tuple: `NodeInfo.pods_with_volumes` is a new one
    whenever one is added or taken off, in place or not). Every pod with claims filters the nodes
    it visits, most of them unchanged: one lookup by name finds all of it."""
    csi_node: CSINode
    limits: dict[str, int]
    volume_pods: tuple[Pod, ...] | None
    attached: dict[str, str]
    count: dict[str, int]


class NodeVolumeLimits:
    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        storage = snapshot.storage
        if not storage.has_claims:
            return _SKIP
        if pod.claim_names or any(_in_tree_plugin(v) for v in pod.spec.volumes):
            nodes = storage.derived.get(_NODE_VIEWS)
            if nodes is None:
                nodes = storage.derived[_NODE_VIEWS] = {}
            key = _local_key(pod, storage, snapshot)
            cycle.write(NAME, _State(storage, {}, {}, nodes, key is not None, key))
            return PreFilterResult()
        return _SKIP

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        state: _State | None = cycle.read(NAME)
        if state is None or not pod.spec.volumes:
            return SUCCESS
        storage = state.storage
        csi_node = storage.csi_node(node_info.name)
        has_csi_node = csi_node is not None
        found = state.new.get(has_csi_node)
        if found is None:
            try:
                found = attachable_volumes(pod, storage, csi_node, new_pod=True)
            except _MissingClaim as exc:
                found = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(exc),), NAME)
            state.new[has_csi_node] = found
        if isinstance(found, Status):
            return found
        if not found or csi_node is None:
            return SUCCESS
        name = node_info.name
        view = state.nodes.get(name)
        if view is None or view.csi_node is not csi_node:
            view = state.nodes[name] = _NodeView(csi_node, csi_node.limits(), None, {}, {})
        if not view.limits:
            return SUCCESS
        volume_pods = node_info.pods_with_volumes()
        if view.volume_pods is not volume_pods:
            view = state.nodes[name] = _NodeView(csi_node, view.limits, volume_pods,
                                                 *_attached(volume_pods, storage, csi_node))
        limits, attached, attached_count = view.limits, view.attached, view.count
        if attached.keys().isdisjoint(found):  # (the pod's volumes are new here: counted once per pod)
            new_count = state.counts.get(has_csi_node)
            if new_count is None:
                new_count = state.counts[has_csi_node] = _per_driver(found)
        else:
            new_count = _per_driver({u: d for u, d in found.items() if u not in attached})
        for driver, count in new_count:
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,), NAME, details=(
                    f"{driver}: {attached_count.get(driver, 0)} of {limit} volumes attached, the pod adds {count}",))
        return SUCCESS

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None


def _local_key(pod: Pod, storage: StorageState, snapshot: Snapshot) -> bytes | None:
    """The classes of the pod's claims (sorted) where Filter's verdict on a node reads no more of
    the pod: every volume it attaches is a claim not bound yet, which counts against its class's
    driver under a handle made of its name — and no pod on a node uses one of them, so no node has
    one attached already (the replicas of a StatefulSet, each with its own new claim, then get the
    same verdicts). Else None. (A volume handle someone chose to spell as an unbound claim's,
    `UNBOUND_PREFIX`, is not guarded against: upstream draws its prefix at random for that.)"""
    if any(_in_tree_plugin(v) for v in pod.spec.volumes):
        return None
    classes: list[str] = []
    for name, ephemeral in claim_refs(pod):
        pvc = storage.pvc(pod.namespace, name)
        if pvc is None or pvc.spec.volume_name or not pvc.storage_class or (ephemeral and not owned_by(pvc, pod)):
            return None
        classes.append(pvc.storage_class)
    wanted = set(pod.claim_names)
    for pods in snapshot.pods_by_namespace().get(pod.namespace, {}).values():
        for p in pods:
            if p.spec.volumes and not wanted.isdisjoint(p.claim_names):
                return None
    return repr(sorted(classes)).encode()


def _per_driver(volumes: dict[str, str]) -> list[tuple[str, int]]:
    """How many of `volumes` (unique name → driver) each driver attaches, by driver name."""
    count: dict[str, int] = {}
    for driver in volumes.values():
        count[driver] = count.get(driver, 0) + 1
    return sorted(count.items())


#: `StorageState.derived` key of the run's `_NodeView`s.
_NODE_VIEWS = (NAME, "nodes")


def _attached(volume_pods: tuple[Pod, ...], storage: StorageState, csi_node: CSINode | None
              ) -> tuple[dict[str, str], dict[str, int]]:
    """What `volume_pods` (a node's pods with volumes) attach (`attachable_volumes` of each) and how
    many volumes per driver. What a running pod attaches depends only on the pod, the storage
    objects and whether the node has a CSINode: kept per pod."""
    cache = storage.derived
    has_csi_node = csi_node is not None
    attached: dict[str, str] = {}
    for existing in volume_pods:
        key = (NAME, id(existing), has_csi_node)
        found = cache.get(key)
        if found is None or found[0] is not existing:
            found = cache[key] = (existing, attachable_volumes(existing, storage, csi_node, new_pod=False))
        attached.update(found[1])
    count: dict[str, int] = {}
    for driver in attached.values():
        count[driver] = count.get(driver, 0) + 1
    return attached, count


def attachable_volumes(pod: Pod, storage: StorageState, csi_node: CSINode | None, new_pod: bool) -> dict[str, str]:
    """`filterAttachableVolumes`: `driver/volumeHandle` → driver for each volume of `pod` that a
    CSI driver attaches to the node. For the new pod a missing claim raises `_MissingClaim`."""
    out: dict[str, str] = {}
    if not pod.claim_names and not any(_in_tree_plugin(v) for v in pod.spec.volumes):
        return out
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None:
            name, ephemeral = v.persistent_volume_claim.claim_name, False
        elif v.ephemeral is not None:
            name, ephemeral = f"{pod.name}-{v.name}", True
        else:
            found = _inline(v, csi_node)
            if found is not None:
                out[f"{found[0]}/{found[1]}"] = found[0]
            continue
        pvc = storage.pvc(pod.namespace, name)
        if pvc is None:
            if new_pod:
                raise _MissingClaim(f"looking up PVC {pod.namespace}/{name}: {pvc_not_found(name)}")
            continue
        if ephemeral and not owned_by(pvc, pod):
            if new_pod:
                raise _MissingClaim(f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                                    f"{pod.namespace}/{pod.name} (pod is not owner)")
            continue
        driver, handle = _driver_info(pvc, storage, csi_node)
        if driver and handle:
            out[f"{driver}/{handle}"] = driver
    return out


def _driver_info(pvc: PersistentVolumeClaim, storage: StorageState, csi_node: CSINode | None) -> tuple[str, str]:
    """`getCSIDriverInfo`: the bound PV's CSI driver and handle (translated when in-tree), else
    the class's (`getCSIDriverInfoFromSC`)."""
    pv = storage.pv(pvc.spec.volume_name) if pvc.spec.volume_name else None
    if pv is None:
        return _driver_info_from_class(pvc, storage, csi_node)
    if pv.spec.csi is not None:
        return pv.spec.csi.driver, pv.spec.csi.volume_handle
    plugin = _in_tree_plugin(pv.spec)
    if plugin is None or csi_node is None:
        return "", ""
    return IN_TREE_TO_CSI[plugin], _pv_handle(pv, plugin)


def _driver_info_from_class(pvc: PersistentVolumeClaim, storage: StorageState,
                            csi_node: CSINode | None) -> tuple[str, str]:
    if not pvc.storage_class:
        return "", ""
    sc = storage.storage_class(pvc.storage_class)
    if sc is None:
        return "", ""
    handle = f"{UNBOUND_PREFIX}-{pvc.namespace}/{pvc.name}"
    if sc.provisioner in IN_TREE_TO_CSI:
        if csi_node is None:
            return "", ""
        return IN_TREE_TO_CSI[sc.provisioner], handle
    return sc.provisioner, handle


def _in_tree_plugin(source: Volume | PersistentVolumeSpec) -> str | None:
    """The migratable in-tree plugin of a pod's inline volume (`IsInlineMigratable`) or of a PV's
    source (`IsPVMigratable`): both carry the same fields."""
    if source.aws_elastic_block_store is not None:
        return AWS_EBS
    if source.gce_persistent_disk is not None:
        return GCE_PD
    if source.azure_disk is not None:
        return AZURE_DISK
    if source.cinder is not None:
        return CINDER
    return None


def _inline(v: Volume, csi_node: CSINode | None) -> tuple[str, str] | None:
    """`checkAttachableInlineVolume`: (driver, handle) of a migratable inline volume."""
    plugin = _in_tree_plugin(v)
    if plugin is None or csi_node is None:
        return None
    if v.aws_elastic_block_store is not None:
        handle = _ebs_volume_id(v.aws_elastic_block_store.volume_id)
    elif v.gce_persistent_disk is not None:
        handle = f"projects/{_GCE_UNSPECIFIED}/zones/{_GCE_UNSPECIFIED}/disks/{v.gce_persistent_disk.pd_name}"
    elif v.azure_disk is not None:
        handle = v.azure_disk.disk_uri
    else:
        assert v.cinder is not None
        handle = v.cinder.volume_id
    return IN_TREE_TO_CSI[plugin], handle


def _pv_handle(pv: PersistentVolume, plugin: str) -> str:
    """The volume handle `TranslateInTreePVToCSI` gives."""
    s = pv.spec
    if plugin == AWS_EBS:
        assert s.aws_elastic_block_store is not None
        return _ebs_volume_id(s.aws_elastic_block_store.volume_id)
    if plugin == GCE_PD:
        assert s.gce_persistent_disk is not None
        zone = next((pv.labels[k] for k in _ZONE_LABELS if k in pv.labels), _GCE_UNSPECIFIED)
        if "__" in zone:  # a regional disk: projects/UNSPECIFIED/regions/REGION/disks/NAME
            region = zone.split("__")[0].rsplit("-", 1)[0]
            return f"projects/{_GCE_UNSPECIFIED}/regions/{region}/disks/{s.gce_persistent_disk.pd_name}"
        return f"projects/{_GCE_UNSPECIFIED}/zones/{zone}/disks/{s.gce_persistent_disk.pd_name}"
    if plugin == AZURE_DISK:
        assert s.azure_disk is not None
        return s.azure_disk.disk_uri
    assert s.cinder is not None
    return s.cinder.volume_id


def _ebs_volume_id(kubernetes_id: str) -> str:
    """`KubernetesVolumeIDToEBSVolumeID`: `aws://ZONE/vol-123` → `vol-123`."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    return kubernetes_id.removeprefix("aws://").split("/", 1)[-1].strip("/")
