"""Gangs: pods that run all together or not at all — the workers of a training job.

Owns the objects that declare them and `GangIndex`, which pod belongs to which gang. Four ways of
declaring one are read (design: "Gangs"):

1. v1.36's alpha Workload API (`scheduling.k8s.io/v1alpha2`, gate `GenericWorkload`): a pod names
   its `PodGroup` in `spec.schedulingGroup.podGroupName`; the PodGroup's
   `spec.schedulingPolicy.gang.minCount` makes it a gang (`basic` does not), `disruptionMode`
   (`Pod`, the default, or `PodGroup`) says whether losing one member costs the group. A
   `Workload` holds the templates PodGroups are made from.
2. scheduler-plugins' coscheduling: the label `scheduling.x-k8s.io/pod-group` names a PodGroup of
   `scheduling.x-k8s.io/v1alpha1` with `spec.minMember`.
3. Volcano: the annotation `scheduling.k8s.io/group-name` (newer Volcano also
   `scheduling.volcano.sh/group-name`) names a PodGroup of `scheduling.volcano.sh/v1beta1` with
   `spec.minMember`.
4. Kueue's pod groups: the label `kueue.x-k8s.io/pod-group-name`, with the annotation
   `kueue.x-k8s.io/pod-group-total-count`: the group runs when that many pods are admitted.

The three PodGroup kinds share one struct (`PodGroup`), told apart by `apiVersion`: their fields do
not collide, and a snapshot written back holds only the fields each was read with. Where a pod
names a PodGroup the source does not hold, its gang's minCount is unknown: it is taken to be every
member the state holds (the whole group, the safe reading for an all-or-nothing rule), and the
gang says so. Must not do I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from kresched.model.objects import Pod
from kresched.model.specs import Condition, ObjectMeta, ResourceList, _Base

__all__ = [
    "COSCHEDULING_API",
    "COSCHEDULING_LABEL",
    "GANG_GROUPS",
    "GANG_KINDS",
    "KUEUE_GROUP_LABEL",
    "KUEUE_TOTAL_ANNOTATION",
    "VOLCANO_ANNOTATIONS",
    "VOLCANO_API",
    "WORKLOAD_API",
    "Gang",
    "GangFlavor",
    "GangIndex",
    "PodGroup",
    "PodGroupSpec",
    "SchedulingWorkload",
    "is_gang_api",
]

#: The API groups/versions of the three PodGroup kinds, and of the Workload kind.
WORKLOAD_API = "scheduling.k8s.io/v1alpha2"
COSCHEDULING_API = "scheduling.x-k8s.io/v1alpha1"
VOLCANO_API = "scheduling.volcano.sh/v1beta1"

COSCHEDULING_LABEL = "scheduling.x-k8s.io/pod-group"
#: Volcano's annotation, then the one newer Volcano also writes.
VOLCANO_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")
KUEUE_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
KUEUE_TOTAL_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"

#: The kinds a source may hold (what `ClusterState.gang_kinds` names).
GANG_KINDS = ("PodGroup", "Workload")
#: The API groups each kind is read in. A PodGroup or Workload of another group (Kueue's
#: `kueue.x-k8s.io` Workload, another project's PodGroup) is another object of the same name: not read.
GANG_GROUPS: dict[str, tuple[str, ...]] = {
    "PodGroup": ("scheduling.k8s.io", "scheduling.x-k8s.io", "scheduling.volcano.sh"),
    "Workload": ("scheduling.k8s.io",),
}


def is_gang_api(kind: str, api_version: str) -> bool:
    """Whether an object of `kind` (`PodGroup` or `Workload`) in `api_version` is one kresched reads."""
    return api_version.partition("/")[0] in GANG_GROUPS.get(kind, ())


#: How a gang was declared.
GangFlavor = Literal["workload", "coscheduling", "volcano", "kueue", "what-if"]


# -- the objects ---------------------------------------------------------------------------------------


class GangSchedulingPolicy(msgspec.Struct, **_Base):
    min_count: int = 0


class BasicSchedulingPolicy(msgspec.Struct, **_Base):
    pass


class PodGroupSchedulingPolicy(msgspec.Struct, **_Base):
    """Exactly one is set (the API server's validation)."""

    basic: BasicSchedulingPolicy | None = None
    gang: GangSchedulingPolicy | None = None


class WorkloadPodGroupTemplateReference(msgspec.Struct, **_Base):
    workload_name: str = ""
    pod_group_template_name: str = ""


class PodGroupTemplateReference(msgspec.Struct, **_Base):
    workload: WorkloadPodGroupTemplateReference | None = None


class TopologyConstraint(msgspec.Struct, **_Base):
    key: str = ""


class PodGroupSchedulingConstraints(msgspec.Struct, **_Base):
    topology: tuple[TopologyConstraint, ...] = ()


class PodGroupResourceClaim(msgspec.Struct, **_Base):
    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodGroupSpec(msgspec.Struct, **_Base):
    # scheduling.k8s.io/v1alpha2
    pod_group_template_ref: PodGroupTemplateReference | None = None
    scheduling_policy: PodGroupSchedulingPolicy | None = None
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: tuple[PodGroupResourceClaim, ...] = ()
    disruption_mode: str | None = None
    #: v1alpha2 and Volcano.
    priority_class_name: str = ""
    priority: int | None = None
    # scheduling.x-k8s.io/v1alpha1 (coscheduling) and scheduling.volcano.sh/v1beta1 (Volcano)
    min_member: int | None = None
    min_resources: ResourceList | None = None
    # coscheduling
    schedule_timeout_seconds: int | None = None
    # Volcano
    min_task_member: dict[str, int] | None = None
    queue: str = ""


class PodGroupStatus(msgspec.Struct, **_Base):
    conditions: tuple[Condition, ...] = ()
    #: coscheduling and Volcano.
    phase: str = ""


class PodGroup(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="kind", tag="PodGroup"):
    """A PodGroup of any of the three APIs (`flavor` says which; `apiVersion` decides)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: PodGroupSpec = PodGroupSpec()
    status: PodGroupStatus = PodGroupStatus()
    api_version: str = ""

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def flavor(self) -> GangFlavor | None:
        """Which API it is of (None: a PodGroup of a group kresched does not read)."""
        group = self.api_version.partition("/")[0]
        return {"scheduling.k8s.io": "workload", "scheduling.x-k8s.io": "coscheduling",
                "scheduling.volcano.sh": "volcano"}.get(group)  # type: ignore[return-value]

    @property
    def min_count(self) -> int | None:
        """The gang's minCount (`gang.minCount`, or `minMember`); None where it is no gang (a
        v1alpha2 `basic` policy, or a minMember of 0 or less, which its scheduler treats as none)."""
        spec = self.spec
        if self.flavor == "workload":
            gang = spec.scheduling_policy.gang if spec.scheduling_policy is not None else None
            return gang.min_count if gang is not None and gang.min_count > 0 else None
        return spec.min_member if spec.min_member is not None and spec.min_member > 0 else None

    @property
    def disruption_mode(self) -> str:
        """`Pod` (the default) or `PodGroup`; only v1alpha2 says."""
        return self.spec.disruption_mode or "Pod"


class PodGroupTemplate(msgspec.Struct, **_Base):
    name: str = ""
    scheduling_policy: PodGroupSchedulingPolicy | None = None
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    resource_claims: tuple[PodGroupResourceClaim, ...] = ()
    disruption_mode: str | None = None
    priority_class_name: str = ""
    priority: int | None = None


class TypedLocalObjectReference(msgspec.Struct, **_Base):
    api_group: str = ""
    kind: str = ""
    name: str = ""


class WorkloadSpec(msgspec.Struct, **_Base):
    controller_ref: TypedLocalObjectReference | None = None
    pod_group_templates: tuple[PodGroupTemplate, ...] = ()


class SchedulingWorkload(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, tag_field="kind",
                         tag="Workload"):
    """`scheduling.k8s.io/v1alpha2` Workload: the templates its controller makes PodGroups from
    (named `SchedulingWorkload` here: kresched's `Workload` is the controllers spreading reads)."""

    metadata: ObjectMeta = ObjectMeta()
    spec: WorkloadSpec = WorkloadSpec()
    api_version: str = ""

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


# -- gangs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gang:
    """One gang: its members as the state holds them, its minCount and what losing a member costs.

    `name` is the group's name in its namespace (the PodGroup's, or Kueue's group name).
    `min_count` is how many members must run at once; `running` how many of `members` run now
    (bound, not terminating, not finished). `disruption_mode` is `PodGroup` when the group's own
    declaration says that evicting any member disrupts the whole group; every gang below its
    minCount stops anyway (`Gang.budget`). `declared_by` says where the minCount comes from, for
    messages; `assumed` says it is assumed (the PodGroup was not in the source).
    """

    flavor: GangFlavor
    namespace: str
    name: str
    min_count: int
    members: tuple[Pod, ...]
    disruption_mode: str = "Pod"
    declared_by: str = ""
    assumed: bool = False
    #: The PodGroup object, where there is one.
    pod_group: PodGroup | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        """`PodGroup ns/name` (a Kueue group: `pod group ns/name`): how plans name it."""
        kind = "pod group" if self.flavor in ("kueue", "what-if") else "PodGroup"
        return f"{kind} {self.namespace}/{self.name}"

    @property
    def running(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.members if p.spec.node_name and not p.is_terminating and not p.is_finished)

    @property
    def pending(self) -> tuple[Pod, ...]:
        return tuple(p for p in self.members if p.is_pending)

    @property
    def budget(self) -> int:
        """How many running members may go before the gang stops: running − minCount (below 0:
        it is stopped already). A `PodGroup` disruption mode allows none."""
        if self.disruption_mode == "PodGroup":
            return 0
        return len(self.running) - self.min_count

    @property
    def text(self) -> str:
        """`PodGroup ml/train (minCount 4, 4 running)`."""
        return f"{self.key} (minCount {self.min_count}{', assumed' if self.assumed else ''}, " \
               f"{len(self.running)} running)"


def declared_group(pod: Pod) -> tuple[GangFlavor, str] | None:
    """The group `pod` declares itself a member of, and how; None when none. A pod that declares
    several (it should not) belongs to the first: the Workload API, coscheduling, Volcano, Kueue."""
    group = pod.spec.scheduling_group
    if group is not None and group.pod_group_name:
        return "workload", group.pod_group_name
    labels = pod.metadata.labels
    if labels:
        name = labels.get(COSCHEDULING_LABEL)
        if name:
            return "coscheduling", name
    annotations = pod.metadata.annotations
    if annotations:
        for key in VOLCANO_ANNOTATIONS:
            name = annotations.get(key)
            if name:
                return "volcano", name
    if labels:
        name = labels.get(KUEUE_GROUP_LABEL)
        if name:
            return "kueue", name
    return None


class GangIndex:
    """Which gang each pod is a member of (`gang_of`), built from the pods and PodGroups of one
    state. A group whose declaration is no gang (a v1alpha2 `basic` PodGroup, minMember 0) gives
    its pods none."""

    def __init__(self, pods: Iterable[Pod], pod_groups: Iterable[PodGroup], kinds: frozenset[str]) -> None:
        groups = {(g.flavor, g.namespace, g.name): g for g in pod_groups if g.flavor is not None}
        members: dict[tuple[GangFlavor, str, str], list[Pod]] = {}
        for p in pods:
            declared = declared_group(p)
            if declared is not None:
                members.setdefault((declared[0], p.namespace, declared[1]), []).append(p)
        self._by_member: dict[str, Gang] = {}
        self.gangs: dict[tuple[str, str, str], Gang] = {}
        for (flavor, ns, name), pods_of in members.items():
            gang = _gang(flavor, ns, name, tuple(pods_of), groups.get((flavor, ns, name)), "PodGroup" in kinds)
            if gang is None:
                continue
            self.gangs[(flavor, ns, name)] = gang
            for p in pods_of:
                self._by_member[p.key] = gang

    def gang_of(self, pod: Pod) -> Gang | None:
        return self._by_member.get(pod.key)

    def find(self, namespace: str, name: str) -> list[Gang]:
        """The gangs named `name` in `namespace` (of any flavor; `podgroup/NAME`)."""
        return [g for (_, ns, n), g in self.gangs.items() if ns == namespace and n == name]


def _gang(flavor: GangFlavor, namespace: str, name: str, members: tuple[Pod, ...], group: PodGroup | None,
          groups_known: bool) -> Gang | None:
    if flavor == "kueue":
        total = next((p.metadata.annotations.get(KUEUE_TOTAL_ANNOTATION) for p in members
                      if p.metadata.annotations.get(KUEUE_TOTAL_ANNOTATION, "").isdigit()), None)
        if total is not None and int(total) > 0:
            return Gang(flavor, namespace, name, int(total), members,
                        declared_by=f"annotation {KUEUE_TOTAL_ANNOTATION}={total}")
        return Gang(flavor, namespace, name, len(members), members, assumed=True,
                    declared_by=f"label {KUEUE_GROUP_LABEL} without {KUEUE_TOTAL_ANNOTATION}: every member")
    if group is None:
        api = {"workload": WORKLOAD_API, "coscheduling": COSCHEDULING_API, "volcano": VOLCANO_API}[flavor]
        why = "not in the snapshot" if groups_known else "not read"
        return Gang(flavor, namespace, name, len(members), members, assumed=True,
                    declared_by=f"PodGroup {api} {namespace}/{name} {why}: every member")
    count = group.min_count
    if count is None:
        return None
    field_name = "gang.minCount" if flavor == "workload" else "minMember"
    return Gang(flavor, namespace, name, count, members, group.disruption_mode,
                declared_by=f"PodGroup {group.api_version} {group.key} {field_name} {count}", pod_group=group)
