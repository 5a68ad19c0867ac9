"""`ClusterState`: one consistent view of the objects a plan needs, with the lookups every layer uses.

Built once per run by `kresched.sources`; immutable afterwards. Holds no I/O and no clock.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from kresched.model.dra import DraState
from kresched.model.gangs import GangIndex, PodGroup, SchedulingGroups, SchedulingWorkload
from kresched.model.lease import Lease
from kresched.model.objects import (
    POD_TOPOLOGY_LABELS,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    Workload,
)
from kresched.model.selectors import label_selector_text
from kresched.model.specs import LabelSelector
from kresched.model.storage import StorageState

__all__ = ["ClusterState", "parse_pod_ref", "template_selector"]

#: Labels that differ between the replicas of one controller (a StatefulSet's pod name and index,
#: the revision of a StatefulSet or DaemonSet), and those the API server gives a pod when it is
#: bound (its node's zone and region): none of them tell a pod's replicas apart from others.
_PER_POD_LABELS = frozenset({"statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index",
                             "controller-revision-hash", "pod-template-generation", *POD_TOPOLOGY_LABELS})


def template_selector(pod: Pod) -> str:
    """A label selector for the pods of `pod`'s template: its labels but those that differ from
    replica to replica or come from the node it was bound to. (With the owner references, that
    finds its replicas when its controller's own selector is not known.)"""
    return ",".join(f"{k}={v}" for k, v in sorted(pod.labels.items()) if k not in _PER_POD_LABELS)


@dataclass(frozen=True, slots=True)
class ClusterState:
    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    pdbs: tuple[PodDisruptionBudget, ...] = ()
    priority_classes: tuple[PriorityClass, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    #: Services, ReplicationControllers, ReplicaSets and StatefulSets: their selectors make up
    #: the default spreading selector of the pods they select (scoring only).
    workloads: tuple[Workload, ...] = ()
    #: PersistentVolumes, claims, StorageClasses and CSINodes (kresched.model.storage).
    storage: StorageState = field(default_factory=StorageState)
    #: DeviceClasses, ResourceSlices, ResourceClaims and their templates (kresched.model.dra).
    dra: DraState = field(default_factory=DraState)
    node_by_name: dict[str, Node] = field(default_factory=dict, compare=False, repr=False)
    pod_by_key: dict[str, Pod] = field(default_factory=dict, compare=False, repr=False)
    pods_by_node: dict[str, tuple[Pod, ...]] = field(default_factory=dict, compare=False, repr=False)
    #: The pods bound to no node, in `pods` order: the only ones that can be pending (a walk of
    #: them instead of every pod, whose status is far from the CPU's caches by then).
    unbound_pods: tuple[Pod, ...] = field(default=(), compare=False, repr=False)
    #: What the API server accepted but makes no sense to plan with, each `Pod ns/name: <field>:
    #: <what happens instead>` (`Pod.warnings`); kresched plans around it and says so.
    warnings: tuple[str, ...] = field(default=(), compare=False, repr=False)
    #: `workloads` by (kind, namespace, name).
    workload_by_key: dict[tuple[str, str, str], Workload] = field(default_factory=dict, compare=False, repr=False)
    #: The kubelets' heartbeats: the Leases of the `kube-node-lease` namespace (others are not kept).
    node_leases: tuple[Lease, ...] = ()
    #: `node_leases` by name (the node's).
    lease_by_node: dict[str, Lease] = field(default_factory=dict, compare=False, repr=False)
    #: The PodGroups of every gang API (`kresched.model.gangs`) and v1alpha2 Workloads.
    pod_groups: tuple[PodGroup, ...] = ()
    scheduling_workloads: tuple[SchedulingWorkload, ...] = ()
    #: Which of `PodGroup`, `Workload` the source held (a live cluster: those it serves).
    gang_kinds: frozenset[str] = frozenset()
    #: Built on first use (`gangs`): most runs never ask.
    _derived: dict[str, object] = field(default_factory=dict, init=False, compare=False, repr=False)

    @classmethod
    def build(
        cls,
        nodes: Iterable[Node] = (),
        pods: Iterable[Pod] = (),
        pdbs: Iterable[PodDisruptionBudget] = (),
        priority_classes: Iterable[PriorityClass] = (),
        namespaces: Iterable[Namespace] = (),
        workloads: Iterable[Workload] = (),
        storage: StorageState | None = None,
        dra: DraState | None = None,
        leases: Iterable[Lease] = (),
        pod_groups: Iterable[PodGroup] = (),
        scheduling_workloads: Iterable[SchedulingWorkload] = (),
        gang_kinds: frozenset[str] | None = None,
    ) -> ClusterState:
        """Index the objects; later duplicates (same namespace/name) replace earlier ones."""
        node_by_name = {n.name: n for n in nodes}
        pod_by_key = {p.key: p for p in pods}
        by_node: defaultdict[str, list[Pod]] = defaultdict(list)
        unbound: list[Pod] = []
        warnings: list[str] = []
        for p in pod_by_key.values():
            if p.spec.node_name:
                by_node[p.spec.node_name].append(p)
            else:
                unbound.append(p)
            if "warnings" in p.__dict__:
                warnings += (f"Pod {p.key}: {w}" for w in p.warnings)
        pdb_by_key = {b.key: b for b in pdbs}
        pc_by_name = {c.name: c for c in priority_classes}
        ns_by_name = {n.name: n for n in namespaces}
        workload_by_key = {(w.__struct_config__.tag, w.metadata.namespace, w.metadata.name): w for w in workloads}
        lease_by_node = {le.metadata.name: le for le in leases if le.is_node_lease}
        group_by_key = {(g.api_version.partition("/")[0], g.key): g for g in pod_groups}
        workload_objects = {w.key: w for w in scheduling_workloads}
        if gang_kinds is None:
            gang_kinds = frozenset(k for k, objs in (("PodGroup", group_by_key), ("Workload", workload_objects))
                                   if objs)
        return cls(
            nodes=tuple(node_by_name.values()),
            pods=tuple(pod_by_key.values()),
            pdbs=tuple(pdb_by_key.values()),
            priority_classes=tuple(pc_by_name.values()),
            namespaces=tuple(ns_by_name.values()),
            workloads=tuple(workload_by_key.values()),
            storage=storage if storage is not None else StorageState(),
            dra=dra if dra is not None else DraState(),
            node_by_name=node_by_name,
            pod_by_key=pod_by_key,
            pods_by_node={k: tuple(v) for k, v in by_node.items()},
            unbound_pods=tuple(unbound),
            warnings=tuple(warnings),
            workload_by_key=workload_by_key,
            node_leases=tuple(lease_by_node.values()),
            lease_by_node=lease_by_node,
            pod_groups=tuple(group_by_key.values()),
            scheduling_workloads=tuple(workload_objects.values()),
            gang_kinds=gang_kinds,
        )

    @property
    def gangs(self) -> GangIndex:
        """Which gang each pod is a member of (`kresched.model.gangs`), built on first use."""
        index = self._derived.get("gangs")
        if index is None:
            index = self._derived["gangs"] = GangIndex(self.pods, self.pod_groups, self.gang_kinds)
        return index  # type: ignore[return-value]

    @property
    def scheduling_groups(self) -> SchedulingGroups:
        """The v1.36 pod groups as kube-scheduler sees them, basic ones too (`kresched.model.gangs`),
        built on first use."""
        index = self._derived.get("scheduling_groups")
        if index is None:
            index = self._derived["scheduling_groups"] = SchedulingGroups(self.pods, self.pod_groups,
                                                                          self.gang_kinds)
        return index  # type: ignore[return-value]

    def pods_on(self, node_name: str) -> tuple[Pod, ...]:
        return self.pods_by_node.get(node_name, ())

    def pod(self, ref: str) -> Pod | None:
        return self.pod_by_key.get(ref)

    @property
    def namespace_labels(self) -> dict[str, dict[str, str]]:
        return {n.name: n.metadata.labels for n in self.namespaces}

    def priority_class(self, name: str) -> PriorityClass | None:
        for c in self.priority_classes:
            if c.name == name:
                return c
        return None

    def replica_selector(self, pod: Pod) -> str:
        """The label selector of `pod`'s controller, where the state has it (a ReplicaSet, a
        StatefulSet, a ReplicationController), else `template_selector`: what finds the pods that
        replace it — never the pod's own labels, which carry its node's zone (v1.35+) and would
        miss a replacement that lands in another zone."""
        owner = pod.controller
        workload = self.workload_by_key.get((owner.kind, pod.namespace, owner.name)) if owner is not None else None
        if isinstance(workload, ReplicaSet | StatefulSet) and isinstance(workload.spec.selector, LabelSelector):
            return label_selector_text(workload.spec.selector)
        if isinstance(workload, ReplicationController) and workload.spec.selector:
            return ",".join(f"{k}={v}" for k, v in sorted(workload.spec.selector.items()))
        return template_selector(pod)

    def pending_pods(self) -> list[Pod]:
        return [p for p in self.unbound_pods if p.is_pending]


def parse_pod_ref(ref: str, default_namespace: str = "default") -> str:
    """`ns/name` or `name` (in `default_namespace`) → `ns/name`; ValueError when malformed."""
    parts = ref.split("/")
    if len(parts) == 1 and parts[0]:
        return f"{default_namespace}/{parts[0]}"
    if len(parts) == 2 and all(parts):
        return ref
    raise ValueError(f"invalid pod reference {ref!r}: expected NAMESPACE/NAME")
