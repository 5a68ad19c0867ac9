"""The typed, immutable cluster objects kresched plans on: Node, Pod, PodDisruptionBudget, PriorityClass.

Owns: the shape of each object (a subset of the Kubernetes API types, field names as in the API so
that a snapshot can be written back as valid Kubernetes JSON) and the facts derived from it once,
at construction (a pod's effective requests, QoS class, controller, ...). Must not do I/O: turning
bytes into these objects is `kresched.sources`' job.

Structs are msgspec `Struct`s: decoding JSON straight into them skips every field kresched does not
model (`managedFields`, container statuses, ...), which is what makes loading 150,000 pods fast.
Nested structs are `gc=False` (they hold no cycles); containers are tuples so they stay immutable.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from kresched.model.quantity import InvalidQuantity, to_int, to_nano
from kresched.model.validation import check_label_selector, check_pod_spec, check_priority_class, check_taints
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
    "CRITICAL_POD_ANNOTATION",
    "LEGACY_CRITICAL_PRIORITY",
    "MIRROR_POD_ANNOTATION",
    "POD_TOPOLOGY_LABELS",
    "QOS_CLASSES",
    "SYSTEM_CRITICAL_PRIORITY",
    "Affinity",
    "Condition",
    "Container",
    "ContainerImage",
    "EmptyDirVolumeSource",
    "HostPathVolumeSource",
    "ImageVolumeSource",
    "PersistentVolumeClaimVolumeSource",
    "ContainerPort",
    "LabelSelector",
    "LabelSelectorRequirement",
    "Namespace",
    "Node",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "ObjectMeta",
    "OwnerReference",
    "Pod",
    "PodAffinityTerm",
    "PodDisruptionBudget",
    "PriorityClass",
    "ReplicaSet",
    "ReplicationController",
    "Resources",
    "Service",
    "StatefulSet",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "Volume",
    "VolumeSource",
    "Workload",
    "fill_api_version",
    "start_text",
]


if TYPE_CHECKING:
    from functools import cached_property
else:
    class cached_property:
        """`functools.cached_property` without its lock (Python 3.11 takes an RLock on every first
        read; kresched's objects are read from one thread, and hundreds of thousands of pods each
        compute a few of these). The value goes into the instance's `__dict__`, so later reads never
        reach the descriptor."""

        def __init__(self, func: Callable[[Any], Any]) -> None:
            self.func = func
            self.attrname = func.__name__
            self.__doc__ = func.__doc__

        def __set_name__(self, owner: type, name: str) -> None:
            self.attrname = name

        def __get__(self, instance: Any, owner: type | None = None) -> Any:
            if instance is None:
                return self
            value = instance.__dict__[self.attrname] = self.func(instance)
            return value


#: The node labels the API server copies onto a pod when it is bound (the PodTopologyLabelsAdmission
#: plugin, beta and on by default since v1.35), overwriting any the pod had: a bound pod's zone is
#: its node's, not its template's.
POD_TOPOLOGY_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region")
CRITICAL_POD_ANNOTATION = "scheduler.alpha.kubernetes.io/critical-pod"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
#: The legacy annotation makes a pod count as at least this important (design: "The plan").
LEGACY_CRITICAL_PRIORITY = SYSTEM_CRITICAL_PRIORITY
CRITICAL_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
#: QoS classes in the preemption order, the better first (`Pod.importance`).
_QOS_RANK = {"Guaranteed": 2, "Burstable": 1, "BestEffort": 0}

Quantity = str | int | float
ResourceList = dict[str, Quantity]

_Base: dict[str, Any] = {"frozen": True, "gc": False, "rename": "camel", "omit_defaults": True}


def fill_api_version(obj: Any, api_version: str) -> None:
    """An object from an API list has no `apiVersion` (nor `kind`: the tag gives that back): give
    it its kind's, so that a snapshot written from it is a List kubectl reads back."""
    if not obj.api_version:
        msgspec.structs.force_setattr(obj, "api_version", api_version)


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


class Resources(msgspec.Struct, frozen=True, gc=False):
    """Resource amounts in the scheduler's integer units (cf. `framework.Resource`)."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    #: Extended and other scalar resources (`nvidia.com/gpu`, `hugepages-2Mi`, ...), whole units.
    scalar: dict[str, int] = {}
    #: Only meaningful for node allocatable: how many pods the node admits.
    allowed_pods: int = 0

    def get(self, name: str) -> int:
        if name == "cpu":
            return self.milli_cpu
        if name == "memory":
            return self.memory
        if name == "ephemeral-storage":
            return self.ephemeral_storage
        if name == "pods":
            return self.allowed_pods
        return self.scalar.get(name, 0)

    def names(self) -> list[str]:
        """Names of the resources with a non-zero amount, in the scheduler's order."""
        out = [n for n, v in (("cpu", self.milli_cpu), ("memory", self.memory),
                              ("ephemeral-storage", self.ephemeral_storage)) if v]
        out.extend(sorted(k for k, v in self.scalar.items() if v))
        return out


def _amounts(raw: ResourceList, where: str) -> dict[str, int]:
    """Each quantity in the scheduler's integer unit. A negative amount fails the API server's
    validation (`ValidateResourceQuantityValue`), so it cannot be in a real object."""
    out: dict[str, int] = {}
    for name, value in raw.items():
        try:
            amount = to_int(name, value)
        except InvalidQuantity as exc:
            raise ValueError(f"{where}.{name}: {exc}") from None
        if amount < 0:
            raise ValueError(f"{where}.{name}: must be greater than or equal to 0, got {value!r}")
        out[name] = amount
    return out


def _resources(raw: ResourceList, where: str) -> Resources:
    amounts = _amounts(raw, where)
    cpu = amounts.pop("cpu", 0)
    memory = amounts.pop("memory", 0)
    ephemeral = amounts.pop("ephemeral-storage", 0)
    pods = amounts.pop("pods", 0)
    return Resources(cpu, memory, ephemeral, amounts, pods)


def _add(acc: dict[str, int], res: dict[str, int]) -> None:
    for k, v in res.items():
        acc[k] = acc.get(k, 0) + v


def _max(acc: dict[str, int], res: dict[str, int]) -> None:
    for k, v in res.items():
        if v > acc.get(k, 0):
            acc[k] = v


#: `schedutil.DefaultMilliCPURequest` and `DefaultMemoryRequest`: what the scoring plugins count for
#: a container that requests no cpu or no memory (`NonMissingContainerRequests`), so that pods
#: without requests still spread instead of piling onto one node.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
_NON_MISSING = {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST}


def _container_requests(c: Container, where: str, non_missing: dict[str, int] | None = None) -> dict[str, int]:
    """A container's requests after API defaulting (`SetDefaults_Pod`: a resource with a limit and
    no request gets the limit as its request). Limits are parsed too, so a bad one is reported.
    With `non_missing`, a resource the container does not request at all counts as that amount
    (an explicit zero stays zero, as upstream's `applyNonMissing`)."""
    res = c.resources
    reqs = _amounts(res.requests, f"{where}[{c.name}].resources.requests") if res.requests else {}
    if res.limits:
        for name, amount in _amounts(res.limits, f"{where}[{c.name}].resources.limits").items():
            reqs.setdefault(name, amount)
    if non_missing:
        for name, amount in non_missing.items():
            reqs.setdefault(name, amount)
    return reqs


def _is_pod_level_resource(name: str) -> bool:
    """`resourcehelper.IsSupportedPodLevelResource`: cpu, memory and hugepages-*."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def _pod_requests(spec: PodSpec, non_missing: dict[str, int] | None = None) -> dict[str, int]:
    """kube-scheduler's `resourcehelper.PodRequests` (component-helpers/resource/helpers.go),
    on the pod as the API server stores it (requests defaulted from limits):

    1. the sum of the containers, plus the restartable init containers (sidecars, KEP-753);
    2. at least each init container's use: its own request plus the sidecars declared before it
       (a sidecar declared after it is not running yet);
    3. pod-level requests (`spec.resources`), where set, replace 1-2 for cpu, memory and
       hugepages; pod-level limits without requests default them (`defaultPodRequests`);
    4. plus `spec.overhead`.

    `non_missing` is `PodResourcesOptions.NonMissingContainerRequests` (see `_container_requests`).
    """
    reqs: dict[str, int] = {}
    for c in spec.containers:
        _add(reqs, _container_requests(c, "spec.containers", non_missing))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.init_containers:
        own = _container_requests(c, "spec.initContainers", non_missing)
        if c.restart_policy == "Always":
            _add(reqs, own)
            _add(sidecars, own)
            use = sidecars
        else:
            use = dict(own)
            _add(use, sidecars)
        _max(init_max, use)
    _max(reqs, init_max)
    level = spec.resources
    if level is not None:
        pod_reqs = _amounts(level.requests, "spec.resources.requests") if level.requests else {}
        if level.limits:
            for name, amount in _amounts(level.limits, "spec.resources.limits").items():
                if name not in pod_reqs and _is_pod_level_resource(name):
                    # Hugepages default from the containers' aggregate; cpu and memory from the limit.
                    hugepages_from_containers = name.startswith("hugepages-") and name in reqs
                    pod_reqs[name] = reqs[name] if hugepages_from_containers else amount
        for name, amount in pod_reqs.items():
            if _is_pod_level_resource(name):
                reqs[name] = amount
    if spec.overhead:
        _add(reqs, _amounts(spec.overhead, "spec.overhead"))
    return reqs


def _misses_cpu_or_memory(spec: PodSpec) -> bool:
    """Some container does not state a cpu or a memory request (nor a limit that defaults it)."""
    for c in (*spec.containers, *spec.init_containers):
        res = c.resources
        for name in ("cpu", "memory"):
            if name not in res.requests and name not in res.limits:
                return True
    return False


QOS_CLASSES = ("Guaranteed", "Burstable", "BestEffort")


def _qos_amounts(raw: ResourceList) -> dict[str, int]:
    """cpu and memory amounts above zero, exactly (nano-units), as `ComputePodQOS` collects them."""
    out: dict[str, int] = {}
    for name in ("cpu", "memory"):
        value = raw.get(name)
        if value is not None and (amount := to_nano(value)) > 0:
            out[name] = amount
    return out


def _compute_qos(spec: PodSpec) -> str:
    """`ComputePodQOS` (pkg/apis/core/v1/helper/qos) on the pod as the API server stores it
    (requests defaulted from limits, pod-level requests from pod-level limits):

    - with pod-level resources (`spec.resources` set), only they count, and Guaranteed needs
      pod-level cpu and memory limits;
    - otherwise the containers and init containers' cpu and memory are summed, and Guaranteed
      needs every one of them to have both a cpu and a memory limit;
    - BestEffort: nothing above zero requested or limited; Guaranteed: the summed requests equal
      the summed limits, resource by resource; Burstable: anything else.
    """
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    level = spec.resources
    if level is not None:
        requests = _qos_amounts({**level.limits, **level.requests} if level.limits else level.requests)
        limits = _qos_amounts(level.limits)
        guaranteed = len(limits) == 2
    else:
        for c in (*spec.containers, *spec.init_containers):
            res = c.resources
            own_limits = _qos_amounts(res.limits)
            _add(requests, _qos_amounts({**res.limits, **res.requests} if res.limits else res.requests))
            _add(limits, own_limits)
            if len(own_limits) != 2:
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"


def start_text(seconds: float) -> str:
    """A start in seconds since the epoch (`Pod.start_seconds`, finite) as the API writes times:
    RFC 3339 in UTC, to the second."""
    return f"{datetime.fromtimestamp(seconds, UTC):%Y-%m-%dT%H:%M:%SZ}"


class Pod(msgspec.Struct, frozen=True, dict=True, rename="camel", omit_defaults=True,
          tag_field="kind", tag="Pod"):
    """A pod, with the facts the scheduler derives from it computed once at construction.

    Derived (not serialised): `requests` (effective requests, `Resources`), `qos`, `key`.
    `priority` is `spec.priority`; `kresched.sources` fills it from the PriorityClass as the
    API server's Priority admission plugin does when a snapshot lacks it.
    """

    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()
    api_version: str = ""

    def __post_init__(self) -> None:
        d = self.__dict__
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        if not self.api_version:  # `fill_api_version`, inline: this runs for every pod
            msgspec.structs.force_setattr(self, "api_version", "v1")
        if warnings := check_pod_spec(self.spec):
            d["warnings"] = warnings
        reqs = _pod_requests(self.spec)
        d["requests"] = Resources(reqs.pop("cpu", 0), reqs.pop("memory", 0), reqs.pop("ephemeral-storage", 0),
                                  {k: v for k, v in reqs.items() if k != "pods"})
        # What the scoring plugins count (`NonZeroRequested`): the defaults for containers that
        # request no cpu or memory. The same object when the pod requests both everywhere.
        nz = _pod_requests(self.spec, _NON_MISSING) if _misses_cpu_or_memory(self.spec) else None
        r = d["requests"]
        d["nonzero_milli_cpu"] = nz.get("cpu", 0) if nz is not None else r.milli_cpu
        d["nonzero_memory"] = nz.get("memory", 0) if nz is not None else r.memory
        # `GetPodQOS`: the class the API server recorded, else computed from the spec.
        qos = self.status.qos_class
        d["qos"] = qos if qos in QOS_CLASSES else _compute_qos(self.spec)
        d["key"] = f"{self.metadata.namespace}/{self.metadata.name}"

    if TYPE_CHECKING:  # set in __post_init__; not fields, so never serialised
        requests: Resources
        nonzero_milli_cpu: int
        nonzero_memory: int
        qos: Literal["Guaranteed", "Burstable", "BestEffort"]
        key: str

    # -- identity -----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def uid(self) -> str:
        return self.metadata.uid

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels

    @property
    def node_name(self) -> str:
        return self.spec.node_name

    @property
    def priority(self) -> int:
        return self.spec.priority or 0

    # -- derived facts ------------------------------------------------------------------------
    @cached_property
    def effective_priority(self) -> int:
        """Priority for preemption: the legacy critical-pod annotation counts as system-critical."""
        if CRITICAL_POD_ANNOTATION in self.metadata.annotations:
            return max(self.priority, LEGACY_CRITICAL_PRIORITY)
        return self.priority

    @cached_property
    def controller(self) -> OwnerReference | None:
        for ref in self.metadata.owner_references:
            if ref.controller:
                return ref
        return None

    @property
    def controller_ref(self) -> str | None:
        """`Kind/name` of the controlling owner, e.g. `ReplicaSet/web-7d9`."""
        c = self.controller
        return f"{c.kind}/{c.name}" if c else None

    @property
    def is_mirror(self) -> bool:
        return MIRROR_POD_ANNOTATION in self.metadata.annotations

    @property
    def is_daemonset_pod(self) -> bool:
        c = self.controller
        return c is not None and c.kind == "DaemonSet"

    @property
    def is_terminating(self) -> bool:
        return self.metadata.deletion_timestamp is not None

    @property
    def is_critical(self) -> bool:
        return (
            self.spec.priority_class_name in CRITICAL_PRIORITY_CLASSES
            or CRITICAL_POD_ANNOTATION in self.metadata.annotations
            or self.priority >= SYSTEM_CRITICAL_PRIORITY
        )

    @property
    def is_finished(self) -> bool:
        return self.status.phase in ("Succeeded", "Failed")

    @property
    def is_bare(self) -> bool:
        """No controller owns it: once evicted it is gone for good."""
        return self.controller is None

    @cached_property
    def claim_names(self) -> tuple[str, ...]:
        """Names of the PersistentVolumeClaims its volumes use: `persistentVolumeClaim.claimName`,
        and `<pod>-<volume>` for a generic ephemeral volume (`ephemeral.VolumeClaimName`)."""
        out = []
        for v in self.spec.volumes:
            if v.persistent_volume_claim is not None:
                out.append(v.persistent_volume_claim.claim_name)
            elif v.ephemeral is not None:
                out.append(f"{self.metadata.name}-{v.name}")
        return tuple(out)

    @cached_property
    def has_empty_dir(self) -> bool:
        return any(v.empty_dir is not None for v in self.spec.volumes)

    @cached_property
    def start_seconds(self) -> float:
        """`status.startTime` in seconds since the epoch; infinity when the pod has not started
        (upstream's `GetPodStartTime` takes "now" for it: later than any recorded start)."""
        text = self.status.start_time
        if not text:
            return math.inf
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            return math.inf
        # The API writes UTC ("Z"); a hand-written time without a zone is taken as UTC too.
        return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()

    @cached_property
    def importance(self) -> tuple[int, int, str, str]:
        """The preemption order's sort key, most important first: higher priority, better QoS
        class, earlier start, then the key (`sched.preemption.importance_key`). Found once."""
        return (-self.priority, -_QOS_RANK[self.qos], self.status.start_time or "\uffff", self.key)

    @cached_property
    def protection(self) -> str | None:
        """Why the pod is never evicted whatever the pending pod's priority, or None
        (`plan.candidates.protected_reason`). Found once."""
        if self.is_mirror:
            return "mirror (static) pod"
        if self.is_daemonset_pod:
            return "DaemonSet pod"
        if self.is_terminating:
            return "already terminating"
        if self.is_critical:
            return "critical pod"
        return None

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the API server accepted in this pod but makes no sense (`check_pod_spec`), each
        `<field path>: <what happens instead>`; usually none."""
        return self.__dict__.get("warnings", ())

    @cached_property
    def grace_seconds(self) -> int:
        """`terminationGracePeriodSeconds` after defaulting (30); a negative one, which the API
        server accepts with a warning, is 1 s when the pod is deleted (`CheckGracefulDelete`)."""
        g = self.spec.termination_grace_period_seconds
        return 30 if g is None else 1 if g < 0 else g

    @property
    def is_ready(self) -> bool:
        # A loop, not any() over a generator: asked of every pod a PDB covers.
        for c in self.status.conditions:  # noqa: SIM110
            if c.type == "Ready" and c.status == "True":
                return True
        return False


    @property
    def is_pending(self) -> bool:
        """Waiting for the scheduler: phase Pending, unbound, not terminating, not gated."""
        return (
            self.status.phase in ("Pending", "")
            and not self.spec.node_name
            and not self.is_terminating
            and not self.spec.scheduling_gates
        )

    @cached_property
    def pod_affinity_kinds(self) -> tuple[bool, bool]:
        """(has pod affinity or anti-affinity terms, required or preferred; has required
        anti-affinity terms): what puts it in `NodeInfo.PodsWithAffinity` and
        `PodsWithRequiredAntiAffinity`."""
        aff = self.spec.affinity
        if aff is None:
            return False, False
        pa, anti = aff.pod_affinity, aff.pod_anti_affinity
        required_anti = bool(anti and anti.required_during_scheduling_ignored_during_execution)
        has = bool((pa and (pa.required_during_scheduling_ignored_during_execution
                            or pa.preferred_during_scheduling_ignored_during_execution))
                   or (anti and (anti.required_during_scheduling_ignored_during_execution
                                 or anti.preferred_during_scheduling_ignored_during_execution)))
        return has, required_anti

    @cached_property
    def host_ports(self) -> tuple[tuple[str, str, int], ...]:
        """(hostIP, protocol, hostPort) the pod needs; hostNetwork makes containerPort a host port."""
        spec = self.spec
        containers = spec.containers
        if spec.init_containers:
            containers = (*[c for c in spec.init_containers if c.restart_policy == "Always"], *containers)
        host_network = spec.host_network
        out = []
        for c in containers:
            for p in c.ports:  # usually none, or container ports only (read for every pod of a cluster)
                port = p.host_port or (p.container_port if host_network else 0)
                if port > 0:
                    out.append((p.host_ip or "0.0.0.0", p.protocol or "TCP", port))
        return tuple(out)

    def condition(self, type_: str) -> Condition | None:
        for c in self.status.conditions:
            if c.type == type_:
                return c
        return None


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


class Node(msgspec.Struct, frozen=True, dict=True, rename="camel", omit_defaults=True,
           tag_field="kind", tag="Node"):
    """A node; `allocatable` and `capacity` parsed once into `Resources`."""

    metadata: ObjectMeta = ObjectMeta()
    spec: NodeSpec = NodeSpec()
    status: NodeStatus = NodeStatus()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "v1")
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        check_taints(self.spec.taints)
        for image in self.status.images:
            if image.names is None:
                msgspec.structs.force_setattr(image, "names", ())
        capacity = _resources(self.status.capacity, "status.capacity")
        # The scheduler reads allocatable only; a hand-written node may give capacity alone.
        allocatable = _resources(self.status.allocatable, "status.allocatable") if self.status.allocatable else capacity
        self.__dict__["allocatable"] = allocatable
        self.__dict__["capacity"] = capacity

    if TYPE_CHECKING:  # set in __post_init__
        allocatable: Resources
        capacity: Resources

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels

    @property
    def taints(self) -> tuple[Taint, ...]:
        return self.spec.taints

    @property
    def unschedulable(self) -> bool:
        return self.spec.unschedulable

    @property
    def is_ready(self) -> bool:
        return any(c.type == "Ready" and c.status == "True" for c in self.status.conditions)


class Namespace(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True,
                tag_field="kind", tag="Namespace"):
    """Only its labels matter: `namespaceSelector` in pod affinity terms selects on them."""

    metadata: ObjectMeta = ObjectMeta()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "v1")

    @property
    def name(self) -> str:
        return self.metadata.name


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


class PodDisruptionBudget(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True,
                          tag_field="kind", tag="PodDisruptionBudget"):
    metadata: ObjectMeta = ObjectMeta()
    spec: PodDisruptionBudgetSpec = PodDisruptionBudgetSpec()
    status: PodDisruptionBudgetStatus | None = None
    api_version: str = ""

    def __post_init__(self) -> None:
        """`ValidatePodDisruptionBudgetSpec`: an int >= 0 or a percentage `[0-9]+%` up to 100%,
        and not both minAvailable and maxUnavailable."""
        fill_api_version(self, "policy/v1")
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        spec = self.spec
        if spec.min_available is not None and spec.max_unavailable is not None:
            raise ValueError("spec: minAvailable and maxUnavailable cannot be both set")
        for field, value in (("minAvailable", spec.min_available), ("maxUnavailable", spec.max_unavailable)):
            if isinstance(value, str):
                if _PERCENT.fullmatch(value) is None:
                    raise ValueError(f"spec.{field}: {value!r} must be an integer or a percentage such as '50%'")
                if int(value[:-1]) > 100:
                    raise ValueError(f"spec.{field}: {value!r} must not be greater than 100%")
            elif value is not None and value < 0:
                raise ValueError(f"spec.{field}: {value} must be greater than or equal to 0")
        check_label_selector("spec.selector", spec.selector)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


_PERCENT = re.compile(r"[0-9]+%")


class PriorityClass(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True,
                    tag_field="kind", tag="PriorityClass"):
    metadata: ObjectMeta = ObjectMeta()
    value: int = 0
    global_default: bool = False
    preemption_policy: str | None = None
    description: str = ""
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "scheduling.k8s.io/v1")
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        check_priority_class(self.metadata.name, self.value, self.global_default, self.preemption_policy)

    @property
    def name(self) -> str:
        return self.metadata.name


# -- what the system default spreading selects on (PodTopologySpread's `helper.DefaultSelector`) ----

class ServiceSpec(msgspec.Struct, **_Base):
    #: None: the Service selects no pods (an empty map selects every pod of the namespace).
    selector: dict[str, str] | None = None


class Service(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="kind", tag="Service"):
    """Only its selector matters: pods a Service selects are spread by the default constraints."""

    metadata: ObjectMeta = ObjectMeta()
    spec: ServiceSpec = ServiceSpec()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "v1")


class ReplicationControllerSpec(msgspec.Struct, **_Base):
    selector: dict[str, str] | None = None


class ReplicationController(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="kind",
                            tag="ReplicationController"):
    metadata: ObjectMeta = ObjectMeta()
    spec: ReplicationControllerSpec = ReplicationControllerSpec()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "v1")


class SelectorSpec(msgspec.Struct, **_Base):
    selector: LabelSelector | None = None


class ReplicaSet(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="kind",
                 tag="ReplicaSet"):
    metadata: ObjectMeta = ObjectMeta()
    spec: SelectorSpec = SelectorSpec()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "apps/v1")


class StatefulSet(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="kind",
                  tag="StatefulSet"):
    metadata: ObjectMeta = ObjectMeta()
    spec: SelectorSpec = SelectorSpec()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "apps/v1")


#: The kinds whose selectors make up a pod's default spreading selector.
Workload = Service | ReplicationController | ReplicaSet | StatefulSet
