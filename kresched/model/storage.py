"""The storage objects the scheduler's volume plugins read: PersistentVolume, PersistentVolumeClaim,
StorageClass and CSINode, plus `StorageState`, their lookups for one run.

Owns: the shape of each (only the fields VolumeRestrictions, VolumeBinding, VolumeZone and
NodeVolumeLimits read, named as in the API so a snapshot can be written back as valid Kubernetes
JSON), the facts derived once at construction (a claim's requested bytes, a volume's capacity, the
class each names, the binding mode after API defaulting), and the helpers upstream keeps in
`component-helpers/storage/volume` (`GetPersistentVolumeClaimClass`, `IsVolumeBoundToClaim`, ...).
Must not do I/O.

CSIDrivers are not read: in the v1.36 default configuration no filter needs them (the scheduler
reads a driver's `storageCapacity` only for CSIStorageCapacity checks, which kresched does not
simulate, and `preventPodSchedulingIfMissing` only behind the alpha VolumeLimitScaling gate).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from kresched.model.objects import fill_api_version
from kresched.model.quantity import InvalidQuantity, to_int
from kresched.model.specs import LabelSelector, NodeSelector, ObjectMeta, _Base
from kresched.model.volumes import (
    AWSElasticBlockStoreVolumeSource,
    AzureDiskVolumeSource,
    CinderVolumeSource,
    GCEPersistentDiskVolumeSource,
)

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_CLASS",
    "MIGRATED_PLUGINS_ANNOTATION",
    "NOT_SUPPORTED_PROVISIONER",
    "STORAGE_KINDS",
    "CSINode",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "StorageState",
]

#: `volume.AnnBindCompleted`: the PV controller finished binding the claim.
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
#: `volume.AnnSelectedNode`: the scheduler chose this node for provisioning the claim.
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: The beta annotation that still wins over `spec.storageClassName` (`GetPersistentVolumeClaimClass`).
ANN_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
#: `v1.MigratedPluginsAnnotationKey` on a CSINode.
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
#: `volume.NotSupportedProvisioner`: a class for statically provisioned (local) volumes.
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode")


def _bytes(raw: Any, where: str) -> int:
    if raw is None:
        return 0
    try:
        return to_int("storage", raw)
    except InvalidQuantity as exc:
        raise ValueError(f"{where}: {exc}") from None


# -- volume sources (in-tree types the scheduler still looks at, and CSI) ---------------------------

class CSIPersistentVolumeSource(msgspec.Struct, **_Base):
    driver: str = ""
    volume_handle: str = ""
    read_only: bool = False


class LocalVolumeSource(msgspec.Struct, **_Base):
    path: str = ""


# -- PersistentVolume -------------------------------------------------------------------------------

class ObjectReference(msgspec.Struct, **_Base):
    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""
    api_version: str = ""


class VolumeNodeAffinity(msgspec.Struct, **_Base):
    required: NodeSelector | None = None


class PersistentVolumeSpec(msgspec.Struct, **_Base):
    capacity: dict[str, str | int | float] = {}
    access_modes: tuple[str, ...] = ()
    claim_ref: ObjectReference | None = None
    storage_class_name: str = ""
    node_affinity: VolumeNodeAffinity | None = None
    volume_mode: str | None = None
    volume_attributes_class_name: str | None = None
    persistent_volume_reclaim_policy: str = ""
    csi: CSIPersistentVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    local: LocalVolumeSource | None = None
    host_path: dict[str, Any] | None = None


class PersistentVolumeStatus(msgspec.Struct, **_Base):
    phase: str = ""


class PersistentVolume(msgspec.Struct, frozen=True, dict=True, rename="camel", omit_defaults=True,
                       tag_field="kind", tag="PersistentVolume"):
    """A PersistentVolume; `capacity_bytes` and `storage_class` derived once."""

    metadata: ObjectMeta = ObjectMeta()
    spec: PersistentVolumeSpec = PersistentVolumeSpec()
    status: PersistentVolumeStatus = PersistentVolumeStatus()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "v1")
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        d = self.__dict__
        d["capacity_bytes"] = _bytes(self.spec.capacity.get("storage"), "spec.capacity.storage")
        # `GetPersistentVolumeClass`: the beta annotation first.
        d["storage_class"] = self.metadata.annotations.get(ANN_STORAGE_CLASS, self.spec.storage_class_name)

    if TYPE_CHECKING:
        capacity_bytes: int
        storage_class: str

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels


# -- PersistentVolumeClaim --------------------------------------------------------------------------

class VolumeResourceRequirements(msgspec.Struct, **_Base):
    requests: dict[str, str | int | float] = {}
    limits: dict[str, str | int | float] = {}


class PersistentVolumeClaimSpec(msgspec.Struct, **_Base):
    access_modes: tuple[str, ...] = ()
    resources: VolumeResourceRequirements = VolumeResourceRequirements()
    selector: LabelSelector | None = None
    #: None (not set) differs from "" (explicitly no class) only at creation, where the
    #: DefaultStorageClass admission fills it; stored claims already carry the result.
    storage_class_name: str | None = None
    volume_name: str = ""
    volume_mode: str | None = None
    volume_attributes_class_name: str | None = None


class PersistentVolumeClaimStatus(msgspec.Struct, **_Base):
    phase: str = ""
    access_modes: tuple[str, ...] = ()


class PersistentVolumeClaim(msgspec.Struct, frozen=True, dict=True, rename="camel", omit_defaults=True,
                            tag_field="kind", tag="PersistentVolumeClaim"):
    """A claim; `request_bytes`, `storage_class` and `key` derived once."""

    metadata: ObjectMeta = ObjectMeta()
    spec: PersistentVolumeClaimSpec = PersistentVolumeClaimSpec()
    status: PersistentVolumeClaimStatus = PersistentVolumeClaimStatus()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "v1")
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        d = self.__dict__
        d["request_bytes"] = _bytes(self.spec.resources.requests.get("storage"), "spec.resources.requests.storage")
        d["storage_class"] = self.metadata.annotations.get(ANN_STORAGE_CLASS, self.spec.storage_class_name or "")
        d["key"] = f"{self.metadata.namespace}/{self.metadata.name}"

    if TYPE_CHECKING:
        request_bytes: int
        storage_class: str
        key: str

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def is_fully_bound(self) -> bool:
        """`isPVCFullyBound`: a volume named and the PV controller's bind-completed annotation.

        Deliberate difference: a claim whose `status.phase` is Bound also counts (a hand-written
        snapshot may lack the annotation the PV controller always sets)."""
        return bool(self.spec.volume_name) and (
            ANN_BIND_COMPLETED in self.metadata.annotations or self.status.phase == "Bound")


# -- StorageClass -----------------------------------------------------------------------------------

class TopologySelectorLabelRequirement(msgspec.Struct, **_Base):
    key: str = ""
    values: tuple[str, ...] = ()


class TopologySelectorTerm(msgspec.Struct, **_Base):
    match_label_expressions: tuple[TopologySelectorLabelRequirement, ...] = ()


class StorageClass(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True,
                   tag_field="kind", tag="StorageClass"):
    metadata: ObjectMeta = ObjectMeta()
    provisioner: str = ""
    #: The API server defaults an unset mode to Immediate.
    volume_binding_mode: str = "Immediate"
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()
    reclaim_policy: str | None = None
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "storage.k8s.io/v1")
        if not self.metadata.name:
            raise ValueError("metadata.name is required")

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def is_wait_for_first_consumer(self) -> bool:
        return self.volume_binding_mode == "WaitForFirstConsumer"


# -- CSINode ----------------------------------------------------------------------------------------

class VolumeNodeResources(msgspec.Struct, **_Base):
    count: int | None = None


class CSINodeDriver(msgspec.Struct, **_Base):
    name: str = ""
    node_id: str = msgspec.field(default="", name="nodeID")
    #: No `omitempty` in Go: a driver without keys is served as `null`; `()` once decoded.
    topology_keys: tuple[str, ...] | None = ()
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(msgspec.Struct, **_Base):
    #: No `omitempty` in Go: the kubelet's CSINode with no driver is served as `null` (every node
    #: without a CSI driver); `()` once decoded.
    drivers: tuple[CSINodeDriver, ...] | None = ()


class CSINode(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="kind", tag="CSINode"):
    """A node's CSI drivers; `limits()` is `getVolumeLimits`."""

    metadata: ObjectMeta = ObjectMeta()
    spec: CSINodeSpec = CSINodeSpec()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "storage.k8s.io/v1")
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        spec = self.spec
        if spec.drivers is None:
            msgspec.structs.force_setattr(spec, "drivers", ())
        for driver in spec.drivers:
            if driver.topology_keys is None:
                msgspec.structs.force_setattr(driver, "topology_keys", ())

    @property
    def name(self) -> str:
        return self.metadata.name

    def limits(self) -> dict[str, int]:
        """Attach limit per driver name, from `spec.drivers[].allocatable.count`."""
        return {d.name: d.allocatable.count for d in self.spec.drivers
                if d.allocatable is not None and d.allocatable.count is not None}

    def migrated_plugins(self) -> frozenset[str]:
        raw = self.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
        return frozenset(raw.split(",")) if raw else frozenset()


# -- the lookups of one run -------------------------------------------------------------------------

#: `StorageState.derived` key (with a class name) of `bindable`'s index.
_BINDABLE = "bindable"


@dataclass(frozen=True, slots=True)
class StorageState:
    """The storage objects of one run, indexed as the scheduler's listers serve them.

    `kinds` names the storage kinds the source held (every one for a live cluster): with no
    PersistentVolumeClaims at all the volume filters are not run (a snapshot taken with
    `kubectl get nodes,pods,...` says nothing about volumes), and `explain` says so.
    """

    pvs: tuple[PersistentVolume, ...] = ()
    pvcs: tuple[PersistentVolumeClaim, ...] = ()
    classes: tuple[StorageClass, ...] = ()
    csi_nodes: tuple[CSINode, ...] = ()
    kinds: frozenset[str] = frozenset()
    pv_by_name: dict[str, PersistentVolume] = field(default_factory=dict, compare=False, repr=False)
    pvc_by_key: dict[str, PersistentVolumeClaim] = field(default_factory=dict, compare=False, repr=False)
    class_by_name: dict[str, StorageClass] = field(default_factory=dict, compare=False, repr=False)
    csi_node_by_name: dict[str, CSINode] = field(default_factory=dict, compare=False, repr=False)
    #: PVs by the class they name (`pvCache.ListPVs(class)`), in name order.
    pvs_by_class: dict[str, tuple[PersistentVolume, ...]] = field(default_factory=dict, compare=False, repr=False)
    #: For the volume plugins: what they derive from a running pod and these objects alone
    #: (NodeVolumeLimits' attachable volumes), by pod identity, filled as they go.
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, pvs: Any = (), pvcs: Any = (), classes: Any = (), csi_nodes: Any = (),
              kinds: frozenset[str] | None = None) -> StorageState:
        """Index; later duplicates replace earlier ones. `kinds` defaults to the kinds present."""
        pv_by_name = {p.name: p for p in pvs}
        pvc_by_key = {c.key: c for c in pvcs}
        class_by_name = {c.name: c for c in classes}
        csi_by_name = {c.name: c for c in csi_nodes}
        by_class: dict[str, list[PersistentVolume]] = {}
        for pv in sorted(pv_by_name.values(), key=lambda p: p.name):
            by_class.setdefault(pv.storage_class, []).append(pv)
        if kinds is None:
            kinds = frozenset(k for k, objs in zip(STORAGE_KINDS, (pv_by_name, pvc_by_key, class_by_name,
                                                                   csi_by_name), strict=True) if objs)
        return cls(tuple(pv_by_name.values()), tuple(pvc_by_key.values()), tuple(class_by_name.values()),
                   tuple(csi_by_name.values()), kinds, pv_by_name, pvc_by_key, class_by_name, csi_by_name,
                   {k: tuple(v) for k, v in by_class.items()})

    @property
    def has_claims(self) -> bool:
        """Whether the source held PersistentVolumeClaims: the volume filters run only then."""
        return "PersistentVolumeClaim" in self.kinds

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvc_by_key.get(f"{namespace}/{name}")

    def bindable(self, claim: PersistentVolumeClaim) -> list[PersistentVolume]:
        """The PVs of the claim's class (`pvs_by_class`, in its order) that are not bound to another
        claim: those without a claimRef and those whose claimRef names this claim (`FindMatchingVolume`
        skips every other one). A class of thousands of Bound volumes leaves a few; indexed on first use."""
        index = self.derived.get((_BINDABLE, claim.storage_class))
        if index is None:
            free: list[tuple[int, PersistentVolume]] = []
            by_claim: dict[tuple[str, str], list[tuple[int, PersistentVolume]]] = {}
            for i, pv in enumerate(self.pvs_by_class.get(claim.storage_class, ())):
                ref = pv.spec.claim_ref
                if ref is None:
                    free.append((i, pv))
                else:
                    by_claim.setdefault((ref.namespace, ref.name), []).append((i, pv))
            index = self.derived[(_BINDABLE, claim.storage_class)] = (free, by_claim)
        free, by_claim = index
        named = by_claim.get((claim.namespace, claim.name))
        return [pv for _, pv in (sorted([*free, *named]) if named else free)]

    def pv(self, name: str) -> PersistentVolume | None:
        return self.pv_by_name.get(name)

    def storage_class(self, name: str) -> StorageClass | None:
        return self.class_by_name.get(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self.csi_node_by_name.get(name)


def is_volume_bound_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """`IsVolumeBoundToClaim`: the PV's claimRef names the claim (and its UID, when set)."""
    ref = pv.spec.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
        return False
    return not ref.uid or ref.uid == claim.metadata.uid
