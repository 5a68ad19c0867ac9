"""What a pod asks of a node and what a node offers, in the scheduler's integer units: `Resources`,
a pod's effective requests (`pod_requests`, upstream's `resourcehelper.PodRequests`), its QoS class
(`compute_qos`) and a node's capacity (`resource_amounts`). Pure; no I/O.
"""

from __future__ import annotations

import msgspec

from kresched.model.quantity import InvalidQuantity, to_int, to_nano
from kresched.model.specs import Container, PodSpec, ResourceList

__all__ = ["DEFAULT_MEMORY_REQUEST", "DEFAULT_MILLI_CPU_REQUEST", "NON_MISSING", "QOS_CLASSES", "Resources", "amounts",
           "compute_qos", "misses_cpu_or_memory", "pod_requests", "resource_amounts"]


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


def amounts(raw: ResourceList, where: str) -> dict[str, int]:
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


def resource_amounts(raw: ResourceList, where: str) -> Resources:
    found = amounts(raw, where)
    cpu = found.pop("cpu", 0)
    memory = found.pop("memory", 0)
    ephemeral = found.pop("ephemeral-storage", 0)
    pods = found.pop("pods", 0)
    return Resources(cpu, memory, ephemeral, found, pods)


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
NON_MISSING = {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST}


def _container_requests(c: Container, where: str, non_missing: dict[str, int] | None = None) -> dict[str, int]:
    """A container's requests after API defaulting (`SetDefaults_Pod`: a resource with a limit and
    no request gets the limit as its request). Limits are parsed too, so a bad one is reported.
    With `non_missing`, a resource the container does not request at all counts as that amount
    (an explicit zero stays zero, as upstream's `applyNonMissing`)."""
    res = c.resources
    reqs = amounts(res.requests, f"{where}[{c.name}].resources.requests") if res.requests else {}
    if res.limits:
        for name, amount in amounts(res.limits, f"{where}[{c.name}].resources.limits").items():
            reqs.setdefault(name, amount)
    if non_missing:
        for name, amount in non_missing.items():
            reqs.setdefault(name, amount)
    return reqs


def _is_pod_level_resource(name: str) -> bool:
    """`resourcehelper.IsSupportedPodLevelResource`: cpu, memory and hugepages-*."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def pod_requests(spec: PodSpec, non_missing: dict[str, int] | None = None) -> dict[str, int]:
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
        pod_reqs = amounts(level.requests, "spec.resources.requests") if level.requests else {}
        if level.limits:
            for name, amount in amounts(level.limits, "spec.resources.limits").items():
                if name not in pod_reqs and _is_pod_level_resource(name):
                    # Hugepages default from the containers' aggregate; cpu and memory from the limit.
                    hugepages_from_containers = name.startswith("hugepages-") and name in reqs
                    pod_reqs[name] = reqs[name] if hugepages_from_containers else amount
        for name, amount in pod_reqs.items():
            if _is_pod_level_resource(name):
                reqs[name] = amount
    if spec.overhead:
        _add(reqs, amounts(spec.overhead, "spec.overhead"))
    return reqs


def misses_cpu_or_memory(spec: PodSpec) -> bool:
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


def compute_qos(spec: PodSpec) -> str:
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
