"""Extended resources backed by DRA (DRAExtendedResource, beta and on in v1.36): a pod asking for
`example.com/gpu: 1` gets devices of the DeviceClass that names it, on a node without a device
plugin for it.

Owns, after upstream (`pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go`,
`dynamic-resource-allocation/deviceclass/extendedresourcecache`):
- `resource_classes`: which class backs which resource name — a class's `extendedResourceName`
  (when two name the same, the newer class wins, the lower name on a tie) and the implicit
  `deviceclass.resource.kubernetes.io/<class>` of every class;
- `delegated`: the pod's requests NodeResourcesFit leaves to DRA on a node (backed by a class, and
  the node's allocatable of it 0 or absent: `shouldDelegateResourceToDRA`);
- `leftover_claim`: the special claim an earlier cycle created and did not bind;
- `special_claim`: the claim the scheduler makes for them on a node (`createRequestsAndMappings`):
  per container an ExactCount request `container-<i>-request-<k>` of the quantity (init containers
  first; `k` the resource's place among the container's sorted request names), a non-sidecar init
  container reusing the later long-lived containers' requests first and only the largest of those
  short-lived requests kept; requests sorted by name.
Must not do I/O.
"""

from __future__ import annotations

from kresched.model.dra import (
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    DraState,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
)
from kresched.model.objects import Node, Pod
from kresched.model.quantity import InvalidQuantity, to_int
from kresched.model.specs import Container, ObjectMeta, OwnerReference

__all__ = ["CLASS_PREFIX", "SPECIAL_CLAIM", "delegated", "leftover_claim", "request_resource", "resource_classes",
           "special_claim"]

#: `resourceapi.ResourceDeviceClassPrefix`.
CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
#: `specialClaimInMemName`: the claim's name until PreBind creates it.
SPECIAL_CLAIM = "<extended-resources>"
#: `resourceapi.ExtendedResourceClaimAnnotation`.
ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
_KEY = "extended-resource-classes"
_LEFTOVERS = "extended-resource-leftovers"


def resource_classes(dra: DraState) -> dict[str, DeviceClass]:
    """Resource name → the class backing it (kept in `dra.derived`)."""
    found = dra.derived.get(_KEY)
    if found is None:
        found = {}
        explicit: dict[str, DeviceClass] = {}
        for c in dra.classes:
            found[CLASS_PREFIX + c.name] = c
            name = c.spec.extended_resource_name
            if name:
                other = explicit.get(name)
                if other is None or _newer(c, other):
                    explicit[name] = c
        found.update(explicit)
        dra.derived[_KEY] = found
    return found


def _newer(a: DeviceClass, b: DeviceClass) -> bool:
    ta, tb = a.metadata.creation_timestamp or "", b.metadata.creation_timestamp or ""
    return ta > tb or (ta == tb and a.name < b.name)


def delegated(pod: Pod, dra: DraState, node: Node | None = None) -> dict[str, int]:
    """The pod's extended requests a class backs (name → amount); on `node`, only those its
    allocatable lacks (NodeResourcesFit leaves them to DRA there)."""
    scalar = pod.requests.scalar
    if not scalar or not dra.classes:
        return {}
    classes = resource_classes(dra)
    out = {r: q for r, q in scalar.items() if q > 0 and r in classes}
    if node is not None and out:
        allocatable = node.allocatable.scalar
        out = {r: q for r, q in out.items() if not allocatable.get(r, 0)}
    return out


def leftover_claim(pod: Pod, dra: DraState) -> ResourceClaim | None:
    """`findExtendedResourceClaim`: the special claim an earlier scheduling cycle created for the
    pod (annotated, the pod its controller), which upstream's Filter refuses on every node and its
    PostFilter deletes. Indexed by owner (name, UID) in `dra.derived`; the first claim listed wins."""
    found = dra.derived.get(_LEFTOVERS)
    if found is None:
        found = {}
        for c in dra.claims:
            if c.metadata.annotations.get(ANNOTATION) == "true":
                for ref in c.metadata.owner_references:
                    if ref.controller:
                        found.setdefault((ref.name, ref.uid), c)
        dra.derived[_LEFTOVERS] = found
    return found.get((pod.name, pod.uid)) if found else None


def special_claim(pod: Pod, dra: DraState, resources: dict[str, int]) -> ResourceClaim:
    """The claim the scheduler allocates on a node for `resources` (`delegated` there)."""
    classes = resource_classes(dra)
    spec = pod.spec
    containers = [*spec.init_containers, *spec.containers]
    n_init = len(spec.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= n_init or c.restart_policy == "Always"]
    short_lived = [i for i in range(n_init) if i not in long_lived]
    requests: list[DeviceRequest] = []
    for resource in sorted(resources):
        cls = classes[resource].name
        long_requests: list[DeviceRequest | None] = [None] * len(containers)
        for i in long_lived:
            long_requests[i] = _container_request(i, containers[i], resource, cls, [])
        biggest: DeviceRequest | None = None
        for i in short_lived:
            req = _container_request(i, containers[i], resource, cls, long_requests[i:])
            if req is not None and (biggest is None or _count(biggest) < _count(req)):
                biggest = req
        if biggest is not None:
            requests.append(biggest)
        requests += [r for r in long_requests if r is not None]
    requests.sort(key=lambda r: r.name)
    meta = ObjectMeta(name=SPECIAL_CLAIM, namespace=pod.namespace, generate_name=f"{pod.name}-extended-resources-",
                      annotations={ANNOTATION: "true"},
                      owner_references=(OwnerReference(kind="Pod", name=pod.name, api_version="v1", uid=pod.uid,
                                                       controller=True),))
    return ResourceClaim(metadata=meta, spec=ResourceClaimSpec(devices=DeviceClaim(requests=tuple(requests))))


def request_resource(pod: Pod, request: str) -> tuple[str, str] | None:
    """Which container and extended resource a request of the special claim serves (upstream's
    `requestMappings`): `container-<i>-request-<k>` is the `k`-th of container `i`'s sorted request
    names (init containers first). None for a name of another form."""
    parts = request.split("-")
    if len(parts) != 4 or parts[0] != "container" or parts[2] != "request" \
            or not parts[1].isdigit() or not parts[3].isdigit():
        return None
    containers = [*pod.spec.init_containers, *pod.spec.containers]
    i, k = int(parts[1]), int(parts[3])
    if i >= len(containers):
        return None
    names = sorted(containers[i].resources.requests)
    return (containers[i].name, names[k]) if k < len(names) else None


def _count(r: DeviceRequest) -> int:
    return r.exactly.count if r.exactly is not None else 0


def _container_request(index: int, container: Container, resource: str, class_name: str,
                       reusable: list[DeviceRequest | None]) -> DeviceRequest | None:
    """`createResourceRequestAndMappings`: the request container `index` adds for `resource`
    beyond what the `reusable` requests give it, or None."""
    requests = container.resources.requests
    raw = requests.get(resource)
    if raw is None:
        return None
    try:
        want = to_int(resource, raw)
    except InvalidQuantity:
        return None
    if want == 0:
        return None
    have = 0
    for r in reusable:
        if r is not None:
            have += _count(r)
            if have >= want:
                return None
    k = sorted(requests).index(resource)
    return DeviceRequest(name=f"container-{index}-request-{k}",
                         exactly=ExactDeviceRequest(device_class_name=class_name, allocation_mode="ExactCount",
                                                    count=want - have))
