"""The typed, immutable cluster objects kresched plans on: Pod, Node, Namespace, PodDisruptionBudget,
PriorityClass and the workloads whose selectors spreading reads.

Owns: each kind's top level (its nested types are `kresched.model.specs`', re-exported here) and
the facts derived from it once, at construction (a pod's effective requests and QoS class through
`kresched.model.resources`, its controller, ...), with the API server's validation
(`kresched.model.validation`). Must not do I/O: turning bytes into these objects is
`kresched.sources`' job.

Structs are msgspec `Struct`s: decoding JSON straight into them skips every field kresched does not
model (`managedFields`, container statuses, ...), which is what makes loading 150,000 pods fast.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from kresched.model.resources import (
    NON_MISSING,
    QOS_CLASSES,
    Resources,
    compute_qos,
    misses_cpu_or_memory,
    pod_requests,
    resource_amounts,
)
from kresched.model.specs import (
    Condition,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    OwnerReference,
    PodDisruptionBudgetSpec,
    PodDisruptionBudgetStatus,
    PodSpec,
    PodStatus,
    ReplicationControllerSpec,
    SelectorSpec,
    ServiceSpec,
    Taint,
)
from kresched.model.validation import check_label_selector, check_pod_spec, check_priority_class, check_taints

__all__ = [
    "CRITICAL_POD_ANNOTATION",
    "LEGACY_CRITICAL_PRIORITY",
    "MIRROR_POD_ANNOTATION",
    "POD_TOPOLOGY_LABELS",
    "SYSTEM_CRITICAL_PRIORITY",
    "Namespace",
    "Node",
    "Pod",
    "PodDisruptionBudget",
    "PriorityClass",
    "ReplicaSet",
    "ReplicationController",
    "Service",
    "StatefulSet",
    "Workload",
    "fill_api_version",
    "start_text",
    "time_seconds",
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


def _controller_of(meta: ObjectMeta) -> OwnerReference | None:
    """The owner reference that is the object's controller (`metav1.GetControllerOf`), or None."""
    for ref in meta.owner_references:
        if ref.controller:
            return ref
    return None


def _is_critical(spec: PodSpec, annotations: Mapping[str, str]) -> bool:
    """A critical pod: a critical priority class, the legacy annotation, or a system-critical priority."""
    return (spec.priority_class_name in CRITICAL_PRIORITY_CLASSES or CRITICAL_POD_ANNOTATION in annotations
            or (spec.priority or 0) >= SYSTEM_CRITICAL_PRIORITY)


def fill_api_version(obj: Any, api_version: str) -> None:
    """An object from an API list has no `apiVersion` (nor `kind`: the tag gives that back): give
    it its kind's, so that a snapshot written from it is a List kubectl reads back."""
    if not obj.api_version:
        msgspec.structs.force_setattr(obj, "api_version", api_version)


def time_seconds(text: str | None) -> float | None:
    """An API time (RFC 3339: `Z` or an offset, with or without fractions) in seconds since the
    epoch; None when absent or unreadable."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def start_text(seconds: float) -> str:
    """A start in seconds since the epoch (`Pod.start_seconds`, finite) as the API writes times:
    RFC 3339 in UTC, to the second."""
    return f"{datetime.fromtimestamp(seconds, UTC):%Y-%m-%dT%H:%M:%SZ}"


#: What `Pod.__post_init__` keeps in a pod's `__dict__` (`Pod.bound` carries them over).
_POST_INIT = ("warnings", "requests", "nonzero_milli_cpu", "nonzero_memory", "qos", "key")


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
        reqs = pod_requests(self.spec)
        d["requests"] = Resources(reqs.pop("cpu", 0), reqs.pop("memory", 0), reqs.pop("ephemeral-storage", 0),
                                  {k: v for k, v in reqs.items() if k != "pods"})
        # What the scoring plugins count (`NonZeroRequested`): the defaults for containers that
        # request no cpu or memory. The same object when the pod requests both everywhere.
        nz = pod_requests(self.spec, NON_MISSING) if misses_cpu_or_memory(self.spec) else None
        r = d["requests"]
        d["nonzero_milli_cpu"] = nz.get("cpu", 0) if nz is not None else r.milli_cpu
        d["nonzero_memory"] = nz.get("memory", 0) if nz is not None else r.memory
        # `GetPodQOS`: the class the API server recorded, else computed from the spec.
        qos = self.status.qos_class
        d["qos"] = qos if qos in QOS_CLASSES else compute_qos(self.spec)
        d["key"] = f"{self.metadata.namespace}/{self.metadata.name}"

    if TYPE_CHECKING:  # set in __post_init__; not fields, so never serialised
        requests: Resources
        nonzero_milli_cpu: int
        nonzero_memory: int
        qos: Literal["Guaranteed", "Burstable", "BestEffort"]
        key: str

    def bound(self, node_name: str, labels: Mapping[str, str] | None = None) -> Pod:
        """This pod as binding leaves it: on `node_name`, Running, nominated to no node, and with
        `labels` where given (what the API server adds at binding: `placement.bound_to`). None of
        that is read by what `__post_init__` finds (the spec's validation, requests, QoS, key): the
        pod's are carried over rather than found again — a simulation binds every pod it places."""
        out = copy.copy(self)  # (a copy runs no `__post_init__`, and its `__dict__` starts empty)
        msgspec.structs.force_setattr(out, "spec", msgspec.structs.replace(self.spec, node_name=node_name))
        msgspec.structs.force_setattr(out, "status", msgspec.structs.replace(self.status, phase="Running",
                                                                             nominated_node_name=""))
        if labels is not None:
            msgspec.structs.force_setattr(out, "metadata", msgspec.structs.replace(self.metadata, labels=labels))
        found, d = self.__dict__, out.__dict__
        for k in _POST_INIT:
            if k in found:
                d[k] = found[k]
        return out

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
        return _controller_of(self.metadata)

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
        return _is_critical(self.spec, self.metadata.annotations)

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
        (`plan.candidates.protected_reason`). Found once — for every pod on a node a planner ranks,
        so the properties it asks (`is_mirror`, `is_daemonset_pod`, ...) are asked of the objects
        they read, without caching the controller on the way."""
        meta = self.metadata
        annotations = meta.annotations
        if MIRROR_POD_ANNOTATION in annotations:
            return "mirror (static) pod"
        c = _controller_of(meta)
        if c is not None and c.kind == "DaemonSet":
            return "DaemonSet pod"
        if meta.deletion_timestamp is not None:
            return "already terminating"
        if _is_critical(self.spec, annotations):
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
        return self._unbound_waiting and not self.spec.scheduling_gates

    @property
    def is_gated(self) -> bool:
        """Pending but held by scheduling gates: the scheduler does not try it until they are removed."""
        return self._unbound_waiting and bool(self.spec.scheduling_gates)

    @property
    def _unbound_waiting(self) -> bool:
        return self.status.phase in ("Pending", "") and not self.spec.node_name and not self.is_terminating

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
        capacity = resource_amounts(self.status.capacity, "status.capacity")
        # The scheduler reads allocatable only; a hand-written node may give capacity alone.
        allocatable = (resource_amounts(self.status.allocatable, "status.allocatable") if self.status.allocatable
                       else capacity)
        self.__dict__["allocatable"] = allocatable
        self.__dict__["capacity"] = capacity

    if TYPE_CHECKING:  # set in __post_init__
        allocatable: Resources
        capacity: Resources

    @property
    def name(self) -> str:
        return self.metadata.name

    @cached_property
    def prefer_no_schedule_taints(self) -> tuple[Taint, ...]:
        """Its PreferNoSchedule taints: all TaintToleration's Score reads of it (most nodes have none,
        tainted GPU nodes' taints are NoSchedule)."""
        return tuple(t for t in self.spec.taints if t.effect == "PreferNoSchedule")

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


class Service(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="kind", tag="Service"):
    """Only its selector matters: pods a Service selects are spread by the default constraints."""

    metadata: ObjectMeta = ObjectMeta()
    spec: ServiceSpec = ServiceSpec()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "v1")


class ReplicationController(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="kind",
                            tag="ReplicationController"):
    metadata: ObjectMeta = ObjectMeta()
    spec: ReplicationControllerSpec = ReplicationControllerSpec()
    api_version: str = ""

    def __post_init__(self) -> None:
        fill_api_version(self, "v1")


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
