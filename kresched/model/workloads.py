"""Workloads that do not exist yet: what a what-if plans for (`kresched plan -f FILE`).

Owns `WorkloadSpec`: one workload read from a manifest — a Pod, Deployment, ReplicaSet,
ReplicationController, StatefulSet, DaemonSet, Job or CronJob — as the controllers that run it see
it once the API server stored it: how many pods it wants, and the pod its controller creates from
the template, already through the API server's defaulting and admission (`kresched.sources.
admission`). What the controller does per pod (its name, its owner reference, a StatefulSet's
claims and ordinals, a DaemonSet's node) is `kresched.plan.whatif`'s. Must not do I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from kresched.model.objects import Pod
from kresched.model.specs import LabelSelector
from kresched.model.storage import PersistentVolumeClaim

__all__ = ["CONTROLLER_API_VERSIONS", "WORKLOAD_KINDS", "WorkloadSpec"]

#: The kinds a what-if plans for, with the API group/version their controllers write in pods'
#: owner references (a Deployment's pods are owned by its ReplicaSet; a CronJob's by its Job).
CONTROLLER_API_VERSIONS: dict[str, str] = {
    "Pod": "v1",
    "ReplicationController": "v1",
    "ReplicaSet": "apps/v1",
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
}
WORKLOAD_KINDS = frozenset(CONTROLLER_API_VERSIONS)

Kind = Literal["Pod", "ReplicationController", "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job",
               "CronJob"]


@dataclass(frozen=True)
class WorkloadSpec:
    """One workload of a manifest, as its controller will run it.

    `template` is the pod the controller creates (for a bare Pod, the pod itself), defaulted and
    admitted as the API server stores a new pod: priority from its PriorityClass, the default
    tolerations, `schedulerName`, ...; its name is the workload's (each replica gets its own from
    `kresched.plan.whatif`). `replicas` is how many pods the controller wants running at once: a
    Deployment's, ReplicaSet's, ReplicationController's or StatefulSet's `replicas`, a Job's active
    pods (`parallelism`, at most what `completions` leaves), a CronJob's one run, 1 for a Pod; None
    for a DaemonSet (one per eligible node). `refused` is the API server's answer when it refuses
    the pods (admission): none of them is created.
    """

    kind: Kind
    namespace: str
    name: str
    replicas: int | None
    template: Pod
    #: The workload's label selector (apps/v1 kinds; a Job's as the API server generates it).
    selector: LabelSelector | None = None
    #: StatefulSet: `podManagementPolicy`, `ordinals.start`, `serviceName`, and the claims its
    #: volumeClaimTemplates make (unnamed: `<template>-<set>-<ordinal>` per pod).
    pod_management: str = "OrderedReady"
    ordinal_start: int = 0
    service_name: str = ""
    claim_templates: tuple[PersistentVolumeClaim, ...] = ()
    #: The template's generic ephemeral volumes: (volume name, the claim its template makes; the
    #: ephemeral volume controller names it `<pod>-<volume>`).
    ephemeral_claims: tuple[tuple[str, PersistentVolumeClaim], ...] = ()
    #: Job: `completionMode: Indexed` (pods named `<job>-<index>-`); a CronJob's Job name.
    indexed: bool = False
    job_name: str = ""
    #: Job: what the Job controller makes a gang of under `WorkloadWithJob` (v1.36, recorded on the
    #: rig): an Indexed Job with `completions == parallelism > 1` (its PodGroup: gang minCount =
    #: parallelism, disruptionMode Pod, no priority class).
    gang_by_job: bool = False
    #: Why the API server refuses every pod of it, in its words (`pods "web-" is forbidden: ...`).
    refused: str | None = None
    #: What the defaulting and admission did, or kresched does not simulate, that an operator
    #: should know about this workload (one sentence each).
    notes: tuple[str, ...] = ()
    #: The manifest as read (for `--apply`), and where it was read (`deploy.yaml`, `-`).
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    origin: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def type_name(self) -> str:
        """kubectl's `TYPE/NAME`: `deployment/web`."""
        return f"{self.kind.lower()}/{self.name}"

    @property
    def controller_kind(self) -> str:
        """The kind that owns the pods: a Deployment's ReplicaSet, a CronJob's Job, the workload's own
        kind otherwise (None for a bare Pod: see `is_bare`)."""
        return {"Deployment": "ReplicaSet", "CronJob": "Job"}.get(self.kind, self.kind)

    @property
    def is_bare(self) -> bool:
        return self.kind == "Pod"
