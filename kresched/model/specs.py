"""The API's nested types kresched decodes: metadata, selectors, affinity, tolerations and taints,
containers and volumes, the pod's and the node's spec and status, and the specs of the other kinds.

Owns their shape only (a subset of the Kubernetes API types, field names as in the API, so that a
snapshot can be written back as valid Kubernetes JSON); the objects built of them, and what is
derived from them, are `kresched.model.objects`'. Structs are msgspec `Struct`s, `gc=False` (they
hold no cycles), containers are tuples so they stay immutable. Must not do I/O.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kresched.model.volumes import (
    AWSElasticBlockStoreVolumeSource,
    AzureDiskVolumeSource,
    CinderVolumeSource,
    GCEPersistentDiskVolumeSource,
    ISCSIVolumeSource,
    PersistentVolumeClaimVolumeSource,
    RBDVolumeSource,
)

__all__ = [
    "Affinity",
    "Condition",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "EmptyDirVolumeSource",
    "HostPathVolumeSource",
    "ImageVolumeSource",
    "IntOrPercent",
    "LabelSelector",
    "LabelSelectorRequirement",
    "NodeAffinity",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "NodeSpec",
    "NodeStatus",
    "ObjectMeta",
    "OwnerReference",
    "PodAffinity",
    "PodAffinityTerm",
    "PodDisruptionBudgetSpec",
    "PodDisruptionBudgetStatus",
    "PodExtendedResourceClaimStatus",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "PodSchedulingGroup",
    "PodSpec",
    "PodStatus",
    "PreferredSchedulingTerm",
    "Quantity",
    "ReplicationControllerSpec",
    "ResourceList",
    "ResourceRequirements",
    "SchedulingGate",
    "SelectorSpec",
    "ServiceSpec",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "Volume",
    "VolumeSource",
    "WeightedPodAffinityTerm",
]

Quantity = str | int | float
ResourceList = dict[str, Quantity]

_Base: dict[str, Any] = {"frozen": True, "gc": False, "rename": "camel", "omit_defaults": True}


class OwnerReference(msgspec.Struct, **_Base):
    kind: str = ""
    name: str = ""
    api_version: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(msgspec.Struct, **_Base):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: tuple[OwnerReference, ...] = ()


class Condition(msgspec.Struct, **_Base):
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None


class LabelSelectorRequirement(msgspec.Struct, **_Base):
    key: str = ""
    operator: str = ""
    values: tuple[str, ...] = ()


class LabelSelector(msgspec.Struct, **_Base):
    match_labels: dict[str, str] = {}
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()


class NodeSelectorRequirement(msgspec.Struct, **_Base):
    key: str = ""
    operator: str = ""
    values: tuple[str, ...] = ()


class NodeSelectorTerm(msgspec.Struct, **_Base):
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


class NodeSelector(msgspec.Struct, **_Base):
    node_selector_terms: tuple[NodeSelectorTerm, ...] = ()


class PreferredSchedulingTerm(msgspec.Struct, **_Base):
    weight: int = 0
    preference: NodeSelectorTerm = NodeSelectorTerm()


class NodeAffinity(msgspec.Struct, **_Base):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: tuple[PreferredSchedulingTerm, ...] = ()


class PodAffinityTerm(msgspec.Struct, **_Base):
    topology_key: str = ""
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


class WeightedPodAffinityTerm(msgspec.Struct, **_Base):
    weight: int = 0
    pod_affinity_term: PodAffinityTerm = PodAffinityTerm()


class PodAffinity(msgspec.Struct, **_Base):
    required_during_scheduling_ignored_during_execution: tuple[PodAffinityTerm, ...] = ()
    preferred_during_scheduling_ignored_during_execution: tuple[WeightedPodAffinityTerm, ...] = ()


class Affinity(msgspec.Struct, **_Base):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class Toleration(msgspec.Struct, **_Base):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class Taint(msgspec.Struct, **_Base):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class TopologySpreadConstraint(msgspec.Struct, **_Base):
    max_skew: int = 1
    topology_key: str = ""
    when_unsatisfiable: str = "DoNotSchedule"
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


class ContainerPort(msgspec.Struct, **_Base):
    container_port: int = 0
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = msgspec.field(default="", name="hostIP")
    name: str = ""


class ResourceRequirements(msgspec.Struct, **_Base):
    requests: ResourceList = {}
    limits: ResourceList = {}


class Container(msgspec.Struct, **_Base):
    name: str = ""
    image: str = ""
    resources: ResourceRequirements = ResourceRequirements()
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None


class EmptyDirVolumeSource(msgspec.Struct, **_Base):
    medium: str = ""
    size_limit: Quantity | None = None


class HostPathVolumeSource(msgspec.Struct, **_Base):
    path: str = ""
    type: str | None = None


class ImageVolumeSource(msgspec.Struct, **_Base):
    """An OCI image mounted as a volume (GA in v1.36): ImageLocality counts its image."""

    reference: str = ""
    pull_policy: str = ""


class VolumeSource(msgspec.Struct, **_Base):
    """A volume source kresched only needs to know is there. Its fields are not kept: a free-form
    subtree would be copied, kept and written back whatever it holds (a YAML alias bomb)."""


class Volume(msgspec.Struct, **_Base):
    name: str = ""
    empty_dir: EmptyDirVolumeSource | None = None
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None
    config_map: VolumeSource | None = None
    secret: VolumeSource | None = None
    projected: VolumeSource | None = None
    ephemeral: VolumeSource | None = None
    image: ImageVolumeSource | None = None


class SchedulingGate(msgspec.Struct, **_Base):
    name: str = ""


class PodResourceClaim(msgspec.Struct, **_Base):
    """One entry of `spec.resourceClaims`: a claim by name, or one made from a template for the pod."""

    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodResourceClaimStatus(msgspec.Struct, **_Base):
    """The claim the resourceclaim controller generated for a template entry (None: none needed)."""

    name: str = ""
    resource_claim_name: str | None = None


class PodExtendedResourceClaimStatus(msgspec.Struct, **_Base):
    """The claim the scheduler created for extended resources backed by DRA."""

    resource_claim_name: str = ""


class PodSchedulingGroup(msgspec.Struct, **_Base):
    """`spec.schedulingGroup` (v1.36, gate GenericWorkload): the PodGroup the pod is a member of."""

    pod_group_name: str | None = None


class PodSpec(msgspec.Struct, **_Base):
    node_name: str = ""
    scheduler_name: str = ""
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: ResourceList = {}
    resources: ResourceRequirements | None = None
    node_selector: dict[str, str] = {}
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    volumes: tuple[Volume, ...] = ()
    scheduling_gates: tuple[SchedulingGate, ...] = ()
    scheduling_group: PodSchedulingGroup | None = None
    resource_claims: tuple[PodResourceClaim, ...] = ()
    termination_grace_period_seconds: int | None = None
    host_network: bool = False
    restart_policy: str = ""
    service_account_name: str = ""


class PodStatus(msgspec.Struct, **_Base):
    phase: str = ""
    conditions: tuple[Condition, ...] = ()
    nominated_node_name: str = ""
    start_time: str | None = None
    qos_class: str = ""
    reason: str = ""
    message: str = ""
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...] = ()
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None


class NodeSpec(msgspec.Struct, **_Base):
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    provider_id: str = msgspec.field(default="", name="providerID")
    pod_cidr: str = msgspec.field(default="", name="podCIDR")


class ContainerImage(msgspec.Struct, **_Base):
    """One image the kubelet reports on the node (`node.status.images`), for ImageLocality."""

    #: No `omitempty` in Go: an image without tag or digest is served as `null`; `()` once decoded.
    names: tuple[str, ...] | None = ()
    size_bytes: int = 0


class NodeStatus(msgspec.Struct, **_Base):
    capacity: ResourceList = {}
    allocatable: ResourceList = {}
    conditions: tuple[Condition, ...] = ()
    images: tuple[ContainerImage, ...] = ()


IntOrPercent = int | str


class PodDisruptionBudgetSpec(msgspec.Struct, **_Base):
    selector: LabelSelector | None = None
    min_available: IntOrPercent | None = None
    max_unavailable: IntOrPercent | None = None
    unhealthy_pod_eviction_policy: str | None = None


class PodDisruptionBudgetStatus(msgspec.Struct, **_Base):
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    #: Pod name → when the eviction was admitted; a zero `metav1.Time` is served as `null`.
    disrupted_pods: dict[str, str | None] = {}
    observed_generation: int | None = None


class ServiceSpec(msgspec.Struct, **_Base):
    #: None: the Service selects no pods (an empty map selects every pod of the namespace).
    selector: dict[str, str] | None = None


class ReplicationControllerSpec(msgspec.Struct, **_Base):
    selector: dict[str, str] | None = None


class SelectorSpec(msgspec.Struct, **_Base):
    selector: LabelSelector | None = None
