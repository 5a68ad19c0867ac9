"""The objects of Dynamic Resource Allocation (`resource.k8s.io`): DeviceClass, ResourceSlice,
ResourceClaim and ResourceClaimTemplate, plus `DraState`, their lookups for one run.

Owns: the shape of each in `resource.k8s.io/v1` (only the fields the scheduler's DynamicResources
plugin and its allocator read, named as in the API so a snapshot can be written back as valid
Kubernetes JSON), and the conversion of `v1beta1` objects (v1.32–v1.33 clusters) into that shape
as the API server converts them: a v1beta1 device's `basic` fields move up onto the device, a
v1beta1 request's flat fields move into `exactly` (`pkg/apis/resource/v1beta1/conversion.go`).
`v1beta2` has the v1 shape. Opaque driver configuration (`config`) is not kept: a free-form subtree
would be copied, kept and written back whatever it holds, and the scheduler never reads it.

Quantities stay as the API wrote them (`str | int | float`); `quantity_value` reads one exactly.
Must not do I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import msgspec

from kresched.model.quantity import parse_quantity
from kresched.model.specs import Condition, NodeSelector, ObjectMeta, Quantity, _Base

__all__ = [
    "ALLOCATION_MODE_ALL",
    "ALLOCATION_MODE_EXACT_COUNT",
    "API_VERSION",
    "DRA_KINDS",
    "AllocatedDeviceStatus",
    "AllocationResult",
    "CapacityRequestPolicy",
    "Device",
    "DeviceAttribute",
    "DeviceCapacity",
    "DeviceClass",
    "DeviceConstraint",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSubRequest",
    "DeviceTaint",
    "DeviceToleration",
    "DraState",
    "ExactDeviceRequest",
    "ResourceClaim",
    "ResourceClaimSpec",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "quantity_value",
]

API_VERSION = "resource.k8s.io/v1"
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"


def quantity_value(raw: Quantity) -> Fraction:
    """A quantity's exact value (`resource.Quantity` compares values, not texts)."""
    return parse_quantity(raw if isinstance(raw, str) else repr(raw))


def _to_v1(obj: Any) -> None:
    """Every served version is read into the v1 shape, and written back as v1."""
    if obj.api_version != API_VERSION:
        msgspec.structs.force_setattr(obj, "api_version", API_VERSION)


# -- DeviceClass ------------------------------------------------------------------------------------

class CELDeviceSelector(msgspec.Struct, **_Base):
    expression: str = ""


class DeviceSelector(msgspec.Struct, **_Base):
    cel: CELDeviceSelector | None = None


class DeviceClassSpec(msgspec.Struct, **_Base):
    selectors: tuple[DeviceSelector, ...] = ()
    extended_resource_name: str | None = None


class DeviceClass(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True,
                  tag_field="kind", tag="DeviceClass"):
    metadata: ObjectMeta = ObjectMeta()
    spec: DeviceClassSpec = DeviceClassSpec()
    api_version: str = ""

    def __post_init__(self) -> None:
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        _to_v1(self)

    @property
    def name(self) -> str:
        return self.metadata.name


# -- ResourceSlice ----------------------------------------------------------------------------------

class DeviceAttribute(msgspec.Struct, **_Base):
    """One of its fields is set (API validation); the list forms are alpha (DRAListTypeAttributes)."""

    int_: int | None = msgspec.field(default=None, name="int")
    bool_: bool | None = msgspec.field(default=None, name="bool")
    string: str | None = None
    version: str | None = None
    ints: tuple[int, ...] | None = None
    bools: tuple[bool, ...] | None = None
    strings: tuple[str, ...] | None = None
    versions: tuple[str, ...] | None = None

    @property
    def is_list(self) -> bool:
        return any(v is not None for v in (self.ints, self.bools, self.strings, self.versions))


class CapacityRequestPolicyRange(msgspec.Struct, **_Base):
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(msgspec.Struct, **_Base):
    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(msgspec.Struct, **_Base):
    value: Quantity = "0"
    request_policy: CapacityRequestPolicy | None = None


class Counter(msgspec.Struct, **_Base):
    value: Quantity = "0"


class CounterSet(msgspec.Struct, **_Base):
    name: str = ""
    counters: dict[str, Counter] = {}


class DeviceCounterConsumption(msgspec.Struct, **_Base):
    counter_set: str = ""
    counters: dict[str, Counter] = {}


class DeviceTaint(msgspec.Struct, **_Base):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class _BasicDevice(msgspec.Struct, **_Base):
    """v1beta1's `BasicDevice`: what v1 holds on the device itself."""

    attributes: dict[str, DeviceAttribute] = {}
    capacity: dict[str, DeviceCapacity] = {}
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: tuple[DeviceTaint, ...] = ()
    binds_to_node: bool | None = None
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    allow_multiple_allocations: bool | None = None


_BASIC_FIELDS = _BasicDevice.__struct_fields__


class Device(msgspec.Struct, **_Base):
    name: str = ""
    attributes: dict[str, DeviceAttribute] = {}
    capacity: dict[str, DeviceCapacity] = {}
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: tuple[DeviceTaint, ...] = ()
    binds_to_node: bool | None = None
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    allow_multiple_allocations: bool | None = None
    #: v1beta1 only; moved up by `__post_init__`.
    basic: _BasicDevice | None = None

    def __post_init__(self) -> None:
        if self.basic is not None:
            for name in _BASIC_FIELDS:
                msgspec.structs.force_setattr(self, name, getattr(self.basic, name))
            msgspec.structs.force_setattr(self, "basic", None)


class ResourcePool(msgspec.Struct, **_Base):
    name: str = ""
    generation: int = 0
    resource_slice_count: int = 0


class ResourceSliceSpec(msgspec.Struct, **_Base):
    driver: str = ""
    pool: ResourcePool = ResourcePool()
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    devices: tuple[Device, ...] = ()
    per_device_node_selection: bool | None = None
    shared_counters: tuple[CounterSet, ...] = ()

    def __post_init__(self) -> None:
        # v1beta1 has `nodeName: string` and `allNodes: bool`; the API server converts "" and false
        # to unset (`Convert_v1beta1_ResourceSliceSpec_To_resource_ResourceSliceSpec`).
        if self.node_name == "":
            msgspec.structs.force_setattr(self, "node_name", None)
        if self.all_nodes is False:
            msgspec.structs.force_setattr(self, "all_nodes", None)


class ResourceSlice(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True,
                    tag_field="kind", tag="ResourceSlice"):
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceSliceSpec = ResourceSliceSpec()
    api_version: str = ""

    def __post_init__(self) -> None:
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        _to_v1(self)

    @property
    def name(self) -> str:
        return self.metadata.name


# -- ResourceClaim ----------------------------------------------------------------------------------

class DeviceToleration(msgspec.Struct, **_Base):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class CapacityRequirements(msgspec.Struct, **_Base):
    requests: dict[str, Quantity] = {}


class ExactDeviceRequest(msgspec.Struct, **_Base):
    device_class_name: str = ""
    selectors: tuple[DeviceSelector, ...] = ()
    #: "" reads as ExactCount, and `count` 0 as 1 (`pkg/apis/resource/v1/defaults.go`).
    allocation_mode: str = ""
    count: int = 0
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: CapacityRequirements | None = None

    @property
    def mode(self) -> str:
        return self.allocation_mode or ALLOCATION_MODE_EXACT_COUNT

    @property
    def exact_count(self) -> int:
        return self.count or 1


class DeviceSubRequest(msgspec.Struct, **_Base):
    name: str = ""
    device_class_name: str = ""
    selectors: tuple[DeviceSelector, ...] = ()
    allocation_mode: str = ""
    count: int = 0
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: CapacityRequirements | None = None
    #: A subrequest never asks for admin access (the API has no field for it).
    admin_access: None = None

    @property
    def mode(self) -> str:
        return self.allocation_mode or ALLOCATION_MODE_EXACT_COUNT

    @property
    def exact_count(self) -> int:
        return self.count or 1


_EXACT_FIELDS = ExactDeviceRequest.__struct_fields__


class DeviceRequest(msgspec.Struct, **_Base):
    name: str = ""
    exactly: ExactDeviceRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()
    # v1beta1's flat request: moved into `exactly` by `__post_init__` (when it names a class).
    device_class_name: str | None = None
    selectors: tuple[DeviceSelector, ...] | None = None
    allocation_mode: str | None = None
    count: int | None = None
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] | None = None
    capacity: CapacityRequirements | None = None

    def __post_init__(self) -> None:
        flat = {name: getattr(self, name) for name in _EXACT_FIELDS if getattr(self, name, None) is not None}
        if not flat:
            return
        if self.exactly is None and not self.first_available:
            msgspec.structs.force_setattr(self, "exactly", ExactDeviceRequest(**flat))
        for name in flat:
            msgspec.structs.force_setattr(self, name, None)


class DeviceConstraint(msgspec.Struct, **_Base):
    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaim(msgspec.Struct, **_Base):
    #: No `omitempty` in Go: a claim without requests is served as `null` (read as `()`; nullable
    #: here so that a served list's typed decode keeps its fast path).
    requests: tuple[DeviceRequest, ...] | None = ()
    constraints: tuple[DeviceConstraint, ...] = ()

    def __post_init__(self) -> None:
        if self.requests is None:
            msgspec.structs.force_setattr(self, "requests", ())


class ResourceClaimSpec(msgspec.Struct, **_Base):
    devices: DeviceClaim = DeviceClaim()


class ResourceClaimConsumerReference(msgspec.Struct, **_Base):
    api_group: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


class DeviceRequestAllocationResult(msgspec.Struct, **_Base):
    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    share_id: str | None = msgspec.field(default=None, name="shareID")
    consumed_capacity: dict[str, Quantity] = {}

    @property
    def device_id(self) -> tuple[str, str, str]:
        return self.driver, self.pool, self.device


class DeviceAllocationResult(msgspec.Struct, **_Base):
    results: tuple[DeviceRequestAllocationResult, ...] = ()


class AllocationResult(msgspec.Struct, **_Base):
    devices: DeviceAllocationResult = DeviceAllocationResult()
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class AllocatedDeviceStatus(msgspec.Struct, **_Base):
    """What a driver reports about an allocated device; its `conditions` are what binding
    conditions wait for. Its opaque `data` and `networkData` are not kept."""

    driver: str = ""
    pool: str = ""
    device: str = ""
    share_id: str | None = msgspec.field(default=None, name="shareID")
    #: No `omitempty` in Go: served as `null` when the driver reported none (read as `()`).
    conditions: tuple[Condition, ...] | None = ()

    def __post_init__(self) -> None:
        if self.conditions is None:
            msgspec.structs.force_setattr(self, "conditions", ())


class ResourceClaimStatus(msgspec.Struct, **_Base):
    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()
    devices: tuple[AllocatedDeviceStatus, ...] = ()


class ResourceClaim(msgspec.Struct, frozen=True, dict=True, rename="camel", omit_defaults=True,
                    tag_field="kind", tag="ResourceClaim"):
    """A claim; `key` derived once."""

    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceClaimSpec = ResourceClaimSpec()
    status: ResourceClaimStatus = ResourceClaimStatus()
    api_version: str = ""

    def __post_init__(self) -> None:
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        _to_v1(self)
        self.__dict__["key"] = f"{self.metadata.namespace}/{self.metadata.name}"

    if TYPE_CHECKING:
        key: str

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def requests(self) -> tuple[DeviceRequest, ...]:
        return self.spec.devices.requests or ()

    @property
    def reserved_pod_uids(self) -> frozenset[str]:
        return frozenset(r.uid for r in self.status.reserved_for if r.resource == "pods" and not r.api_group)


# -- ResourceClaimTemplate --------------------------------------------------------------------------

class ResourceClaimTemplateSpec(msgspec.Struct, **_Base):
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceClaimSpec = ResourceClaimSpec()


class ResourceClaimTemplate(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True,
                            tag_field="kind", tag="ResourceClaimTemplate"):
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceClaimTemplateSpec = ResourceClaimTemplateSpec()
    api_version: str = ""

    def __post_init__(self) -> None:
        if not self.metadata.name:
            raise ValueError("metadata.name is required")
        _to_v1(self)

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


# -- the lookups of one run -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DraState:
    """The DRA objects of one run, indexed as the scheduler's listers serve them.

    `kinds` names the kinds the source held (every one for a live cluster that serves the API):
    a snapshot taken with `kubectl get nodes,pods,...` says nothing about devices, and a pod with
    claims is then said to be unknowable rather than placed as if it asked for nothing.
    """

    classes: tuple[DeviceClass, ...] = ()
    slices: tuple[ResourceSlice, ...] = ()
    claims: tuple[ResourceClaim, ...] = ()
    templates: tuple[ResourceClaimTemplate, ...] = ()
    kinds: frozenset[str] = frozenset()
    class_by_name: dict[str, DeviceClass] = field(default_factory=dict, compare=False, repr=False)
    claim_by_key: dict[str, ResourceClaim] = field(default_factory=dict, compare=False, repr=False)
    template_by_key: dict[str, ResourceClaimTemplate] = field(default_factory=dict, compare=False, repr=False)
    #: What the allocator derives from these objects alone (pools, compiled selectors), filled as it goes.
    derived: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, classes: Any = (), slices: Any = (), claims: Any = (), templates: Any = (),
              kinds: frozenset[str] | None = None) -> DraState:
        """Index; later duplicates replace earlier ones. `kinds` defaults to the kinds present."""
        class_by_name = {c.name: c for c in classes}
        slice_by_name = {s.name: s for s in slices}
        claim_by_key = {c.key: c for c in claims}
        template_by_key = {t.key: t for t in templates}
        if kinds is None:
            kinds = frozenset(k for k, objs in zip(DRA_KINDS, (class_by_name, slice_by_name, claim_by_key,
                                                               template_by_key), strict=True) if objs)
        return cls(tuple(class_by_name.values()), tuple(slice_by_name.values()), tuple(claim_by_key.values()),
                   tuple(template_by_key.values()), kinds, class_by_name, claim_by_key, template_by_key)

    @property
    def is_known(self) -> bool:
        """Whether the source said anything about devices (any DRA kind, even an empty list)."""
        return bool(self.kinds)

    def device_class(self, name: str) -> DeviceClass | None:
        return self.class_by_name.get(name)

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claim_by_key.get(f"{namespace}/{name}")

    def template(self, namespace: str, name: str) -> ResourceClaimTemplate | None:
        return self.template_by_key.get(f"{namespace}/{name}")
