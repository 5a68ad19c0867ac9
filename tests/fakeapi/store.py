"""The fake API server's state: the resources it serves and one object store for all of them.

Objects are plain API dicts keyed by (resource key, namespace, name) — `("pods", "default", "web-1")`,
`("poddisruptionbudgets.policy", "default", "web")`, `("nodes", "", "node-a")` — stored without
`kind`/`apiVersion` (lists serve them that way, single-object reads add them back). Stored dicts are
never mutated in place: every write stores a new dict with a new `metadata.resourceVersion` from one
cluster-wide counter, and appends a `Change` to `history` (what watches will stream from) under
`lock`, whose `changed` condition wakes waiters (watch streams, the controllers' loop).

A `Change` keeps the object before the write too (`old`), so a watch with a selector can turn a
MODIFIED that leaves (or enters) the selection into DELETED (or ADDED), as a real server does.
A deleted object is recorded with the resourceVersion of its deletion, as in a real DELETED event.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import yaml

from tests.fakeapi.errors import ApiError
from tests.fakeapi.served import admit_topology_labels, dra_stored, kubelet_csinode, nil_as_null, prune_nulls

__all__ = [
    "APPLIED",
    "COSCHEDULING_POD_GROUPS",
    "CRD_GANGS",
    "DEPLOYMENTS",
    "DRA",
    "DRA_GROUP",
    "DRA_VERSIONS",
    "EVENTS",
    "GANGS",
    "LEASES",
    "NAMESPACES",
    "NODES",
    "PDBS",
    "PODS",
    "POD_GROUPS",
    "PRIORITY_CLASSES",
    "RESOURCES",
    "SCHEDULING_WORKLOADS",
    "VOLCANO_POD_GROUPS",
    "Change",
    "Resource",
    "Store",
    "api_objects",
    "resource_of",
]


@dataclass(frozen=True)
class Resource:
    """One API resource (`pods`, `poddisruptionbudgets.policy`, ...), enough to route and to name it."""

    kind: str
    plural: str
    group: str = ""
    version: str = "v1"
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def prefix(self) -> str:
        """`/api/v1` or `/apis/GROUP/VERSION`."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    @property
    def key(self) -> str:
        """The store key and `GroupResource` string: `pods`, `poddisruptionbudgets.policy`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"


NODES = Resource("Node", "nodes", namespaced=False)
PODS = Resource("Pod", "pods")
NAMESPACES = Resource("Namespace", "namespaces", namespaced=False)
PDBS = Resource("PodDisruptionBudget", "poddisruptionbudgets", group="policy")
PRIORITY_CLASSES = Resource("PriorityClass", "priorityclasses", group="scheduling.k8s.io", namespaced=False)
LEASES = Resource("Lease", "leases", group="coordination.k8s.io")
SERVICES = Resource("Service", "services")
REPLICATION_CONTROLLERS = Resource("ReplicationController", "replicationcontrollers")
REPLICA_SETS = Resource("ReplicaSet", "replicasets", group="apps")
STATEFUL_SETS = Resource("StatefulSet", "statefulsets", group="apps")
#: What a kresched state holds besides the kinds above (default spreading selectors).
WORKLOADS: tuple[Resource, ...] = (SERVICES, REPLICATION_CONTROLLERS, REPLICA_SETS, STATEFUL_SETS)
DEPLOYMENTS = Resource("Deployment", "deployments", group="apps")
DAEMON_SETS = Resource("DaemonSet", "daemonsets", group="apps")
JOBS = Resource("Job", "jobs", group="batch")
CRON_JOBS = Resource("CronJob", "cronjobs", group="batch")
#: What `preempt -f --apply` creates (server-side apply): every workload kind and pods.
APPLIED: tuple[Resource, ...] = (PODS, REPLICATION_CONTROLLERS, DEPLOYMENTS, REPLICA_SETS, STATEFUL_SETS, DAEMON_SETS,
                                 JOBS, CRON_JOBS)
PVS = Resource("PersistentVolume", "persistentvolumes", namespaced=False)
PVCS = Resource("PersistentVolumeClaim", "persistentvolumeclaims")
STORAGE_CLASSES = Resource("StorageClass", "storageclasses", group="storage.k8s.io", namespaced=False)
CSI_NODES = Resource("CSINode", "csinodes", group="storage.k8s.io", namespaced=False)
#: The storage kinds (the volume filters' input).
STORAGE: tuple[Resource, ...] = (PVS, PVCS, STORAGE_CLASSES, CSI_NODES)

#: Dynamic Resource Allocation, stored in v1; which versions are served is the server's
#: `dra_versions` (server.py), each listed with the items converted (served.py).
DRA_GROUP = "resource.k8s.io"
#: Every version kresched reads, most preferred first (as a v1.36 server lists them in discovery).
DRA_VERSIONS = ("v1", "v1beta2", "v1beta1")
DEVICE_CLASSES = Resource("DeviceClass", "deviceclasses", group=DRA_GROUP, namespaced=False)
RESOURCE_SLICES = Resource("ResourceSlice", "resourceslices", group=DRA_GROUP, namespaced=False)
RESOURCE_CLAIMS = Resource("ResourceClaim", "resourceclaims", group=DRA_GROUP)
CLAIM_TEMPLATES = Resource("ResourceClaimTemplate", "resourceclaimtemplates", group=DRA_GROUP)
DRA: tuple[Resource, ...] = (DEVICE_CLASSES, RESOURCE_SLICES, RESOURCE_CLAIMS, CLAIM_TEMPLATES)

#: Gangs: v1.36's alpha Workload API (built in, off by default), scheduler-plugins' coscheduling
#: and Volcano (CustomResourceDefinitions). Which are served is the server's `gangs_served`
#: (server.py; none by default, as on almost every cluster).
SCHEDULING_WORKLOADS = Resource("Workload", "workloads", group="scheduling.k8s.io", version="v1alpha2")
POD_GROUPS = Resource("PodGroup", "podgroups", group="scheduling.k8s.io", version="v1alpha2")
COSCHEDULING_POD_GROUPS = Resource("PodGroup", "podgroups", group="scheduling.x-k8s.io", version="v1alpha1")
VOLCANO_POD_GROUPS = Resource("PodGroup", "podgroups", group="scheduling.volcano.sh", version="v1beta1")
GANGS: tuple[Resource, ...] = (SCHEDULING_WORKLOADS, POD_GROUPS, COSCHEDULING_POD_GROUPS, VOLCANO_POD_GROUPS)
#: The gang resources served from a CustomResourceDefinition: stored as written (JSON, a `null`
#: of a field its schema does not make nullable pruned), listed with each item's kind and apiVersion.
CRD_GANGS: tuple[Resource, ...] = (COSCHEDULING_POD_GROUPS, VOLCANO_POD_GROUPS)

#: What kresched records about what it did (tests/fakeapi/events.py routes their creation).
EVENTS = Resource("Event", "events", group="events.k8s.io")
#: Every resource the server routes (list and get; writes are routed per resource in server.py).
RESOURCES: tuple[Resource, ...] = (NODES, PODS, NAMESPACES, PDBS, PRIORITY_CLASSES, LEASES, *WORKLOADS, *STORAGE,
                                   EVENTS, DEPLOYMENTS, DAEMON_SETS, JOBS, CRON_JOBS)
_BY_KIND = {r.kind: r for r in (*RESOURCES, *DRA)}
_BY_API = {(r.kind, r.group): r for r in GANGS}


def resource_of(kind: str, api_version: str | None) -> Resource | None:
    """The resource an object of `kind` is stored in: a gang kind's by its apiVersion's group (a
    PodGroup of another group is none of the fake's); every other kind's by its kind."""
    if any(r.kind == kind for r in GANGS):
        return _BY_API.get((kind, (api_version or "").partition("/")[0]))
    return _BY_KIND.get(kind)


@dataclass(frozen=True)
class Change:
    """One write, in revision order: `type` is ADDED, MODIFIED or DELETED (watch event types)."""

    revision: int
    type: str
    resource: Resource
    object: dict[str, Any]
    #: The object before this write (None for ADDED).
    old: dict[str, Any] | None = None


@dataclass
class Store:
    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    #: The last resourceVersion handed out (etcd's revision).
    revision: int = 0
    #: Continue tokens issued before this revision are expired (410), as after an etcd compaction.
    compacted: int = 0
    history: list[Change] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self.changed = threading.Condition(self.lock)

    # -- reads ----------------------------------------------------------------------------------
    def get(self, resource: Resource, namespace: str, name: str) -> dict[str, Any] | None:
        return self.objects.get((resource.key, namespace if resource.namespaced else "", name))

    def require(self, resource: Resource, namespace: str, name: str) -> dict[str, Any]:
        obj = self.get(resource, namespace, name)
        if obj is None:
            raise ApiError.not_found(resource, name)
        return obj

    def list(self, resource: Resource, namespace: str | None = None) -> list[dict[str, Any]]:
        """Objects of `resource` (in `namespace` if given) in etcd key order (`ns/name`)."""
        with self.lock:
            found = [(storage_key(resource, o), o) for (res, ns, _), o in self.objects.items()
                     if res == resource.key and (namespace is None or ns == namespace)]
        found.sort(key=lambda pair: pair[0])
        return [o for _, o in found]

    # -- writes ---------------------------------------------------------------------------------
    def put(self, resource: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace without checks (seeding); returns the stored object."""
        with self.lock:
            key = self._key(resource, obj)
            return self._store(resource, key, obj, "MODIFIED" if key in self.objects else "ADDED")

    def create(self, resource: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            key = self._key(resource, obj)
            if key in self.objects:
                raise ApiError.already_exists(resource, key[2])
            return self._store(resource, key, obj, "ADDED")

    def replace(self, resource: Resource, obj: dict[str, Any], *, expect_version: str | None = None) -> dict[str, Any]:
        """Update an existing object; 409 Conflict when `expect_version` is not the stored version."""
        with self.lock:
            key = self._key(resource, obj)
            current = self.objects.get(key)
            if current is None:
                raise ApiError.not_found(resource, key[2])
            if expect_version and current["metadata"].get("resourceVersion") != expect_version:
                raise ApiError.conflict(resource, key[2])
            return self._store(resource, key, obj, "MODIFIED")

    def mutate(self, resource: Resource, namespace: str, name: str,
               change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> dict[str, Any]:
        """Apply `change` to a copy of the stored object (it may edit it in place or return a new
        one) and store the result: how tests and the fake's controllers write, as a client would."""
        with self.lock:
            current = self.require(resource, namespace, name)
            draft = copy.deepcopy(current)
            new = change(draft)
            return self.replace(resource, draft if new is None else new,
                                expect_version=current["metadata"].get("resourceVersion"))

    def delete(self, resource: Resource, namespace: str, name: str) -> dict[str, Any]:
        """Remove the object; returns it as last seen (with the deletion's resourceVersion)."""
        with self.lock:
            key = (resource.key, namespace if resource.namespaced else "", name)
            obj = self.objects.pop(key, None)
            if obj is None:
                raise ApiError.not_found(resource, name)
            self.revision += 1
            gone = copy.deepcopy(obj)
            gone["metadata"]["resourceVersion"] = str(self.revision)
            self.history.append(Change(self.revision, "DELETED", resource, gone, obj))
            if resource is NODES and self.get(CSI_NODES, "", name) is not None:
                self.delete(CSI_NODES, "", name)  # the garbage collector: the node owns it
            self.changed.notify_all()
            return gone

    def compact(self) -> None:
        """Expire every continue token issued so far (the next page request gets 410 Expired), and
        every resourceVersion handed out so far for watches (a watch from one gets 410 Gone).

        Like an etcd compaction while writes go on: the revision moves past every issued token and
        everything older than it is gone; lists started from now on are served normally.
        """
        with self.lock:
            self.revision += 1
            self.compacted = self.revision

    def load(self, *sources: Any) -> None:
        """Seed from ClusterStates, model objects, API dicts (objects or Lists), files, or iterables of them."""
        for kind, obj in api_objects(sources):
            resource = resource_of(kind, obj.get("apiVersion"))
            if resource is not None:
                self.put(resource, obj)

    # -- helpers --------------------------------------------------------------------------------
    def _key(self, resource: Resource, obj: dict[str, Any]) -> tuple[str, str, str]:
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not name:
            raise ApiError(422, "Invalid", f"{resource.kind} is invalid: metadata.name: Required value")
        return resource.key, (meta.get("namespace") or "default") if resource.namespaced else "", name

    def _store(self, resource: Resource, key: tuple[str, str, str], obj: dict[str, Any],
               change: str) -> dict[str, Any]:
        self.revision += 1
        # A JSON round trip: a deep copy that also turns tuples (model objects) into lists, as JSON has them.
        stored = msgspec.json.decode(msgspec.json.encode(obj))
        if resource.group == DRA_GROUP:
            dra_stored(resource.kind, stored)
        stored.pop("kind", None)
        stored.pop("apiVersion", None)
        meta = stored.setdefault("metadata", {})
        if resource.namespaced:
            meta["namespace"] = key[1]
        meta["resourceVersion"] = str(self.revision)
        if resource in CRD_GANGS:
            prune_nulls(stored)
        else:
            nil_as_null(resource.kind, stored)
        if resource is PODS and change == "ADDED" and (stored.get("spec") or {}).get("nodeName"):
            admit_topology_labels(stored, self.get(NODES, "", stored["spec"]["nodeName"]))
        old = self.objects.get(key)
        self.objects[key] = stored
        self.history.append(Change(self.revision, change, resource, stored, old))
        if resource is NODES and change == "ADDED" and self.get(CSI_NODES, "", key[2]) is None:
            self._store(CSI_NODES, (CSI_NODES.key, "", key[2]), kubelet_csinode(stored), "ADDED")
        self.changed.notify_all()
        return stored


def storage_key(resource: Resource, obj: dict[str, Any]) -> str:
    """The etcd key suffix the real server orders lists (and continue tokens) by."""
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if resource.namespaced else meta["name"]


def api_objects(sources: Iterable[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(kind, API dict) for everything in `sources` (see `Store.load`)."""
    for src in sources:
        if isinstance(src, dict):
            yield from _from_dict(src)
        elif isinstance(src, (str, Path)):
            yield from _from_file(Path(src))
        elif isinstance(src, msgspec.Struct):  # a kresched model object; its `kind` tag comes along
            yield from _from_dict(msgspec.to_builtins(src))
        elif _is_cluster_state(src):
            st = getattr(src, "storage", None)
            storage = (st.classes, st.csi_nodes, st.pvs, st.pvcs) if st is not None else ()
            dra = getattr(src, "dra", None)
            devices = (dra.classes, dra.slices, dra.claims, dra.templates) if dra is not None else ()
            gangs = (getattr(src, "scheduling_workloads", ()), getattr(src, "pod_groups", ()))
            yield from api_objects((src.namespaces, src.priority_classes, src.nodes, src.pdbs, src.workloads,
                                    src.pods, *storage, *devices, getattr(src, "node_leases", ()), *gangs))
        elif isinstance(src, Iterable):
            yield from api_objects(src)
        else:
            raise TypeError(f"cannot load {type(src).__name__} into the fake API server")


def _is_cluster_state(src: Any) -> bool:
    return all(hasattr(src, a) for a in ("nodes", "pods", "pdbs", "priority_classes", "namespaces"))


def _from_dict(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    kind = doc.get("kind") or ""
    if kind.endswith("List"):
        default = kind[:-4] if kind != "List" else ""
        for item in doc.get("items") or []:
            if not item.get("kind"):  # an API list answer's item: the list's kind (and apiVersion)
                item = {"kind": default, **({"apiVersion": doc["apiVersion"]} if doc.get("apiVersion") else {}),
                        **item}
            yield from _from_dict(item)
        return
    if not kind:
        raise ValueError(f"object without kind: {str(doc)[:80]}")
    yield kind, doc


def _from_file(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    text = path.read_text()
    try:  # a snapshot is JSON: pure-Python YAML would take minutes over a generated cluster
        docs: Iterable[Any] = [json.loads(text)]
    except ValueError:
        docs = yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for doc in docs:
        if doc:
            yield from _from_dict(doc)


# -- selectors (`labelSelector`, `fieldSelector` query parameters) ------------------------------

_SET_EXPR = re.compile(r"^\s*(!?)\s*([^\s!=(),]+)\s*(?:(in|notin)\s*\(([^)]*)\)|(==|=|!=)\s*([^\s,]*))?\s*$")


def _split_selector(text: str) -> list[str]:
    """Split on commas outside parentheses (`a in (x,y),b=c`)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def label_selector_matches(selector: str, labels: dict[str, str]) -> bool:
    for term in _split_selector(selector):
        m = _SET_EXPR.match(term)
        if not m:
            raise ApiError.bad_request(f"unable to parse requirement: {term!r}")
        negate, key, set_op, values, op, value = m.groups()
        if set_op:
            members = {v.strip() for v in values.split(",") if v.strip()}
            ok = labels.get(key) in members if set_op == "in" else labels.get(key) not in members
        elif op:
            ok = labels.get(key) == value if op in ("=", "==") else labels.get(key) != value
        else:
            ok = (key in labels) != bool(negate)
        if not ok:
            return False
    return True


def field_selector_matches(selector: str, obj: dict[str, Any]) -> bool:
    for term in _split_selector(selector):
        m = re.match(r"^\s*([\w.]+)\s*(==|=|!=)\s*(.*?)\s*$", term)
        if not m:
            raise ApiError.bad_request(f"invalid field selector: {term!r}")
        path, op, want = m.groups()
        value: Any = obj
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        have = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        if (have == want) != (op in ("=", "==")):
            return False
    return True
