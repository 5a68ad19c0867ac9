"""What-if: plan for workloads before they exist (`kresched plan -f FILE`).

Owns `plan_workloads`: the pods each workload's controller would create (`replicas_of`: names,
owner references and labels as the controllers give them; a StatefulSet's ordinals and claims; a
DaemonSet's pod per eligible node, bound there by `matchFields metadata.name` as its controller
binds it; a Job's active pods; a CronJob's one run), queued as the scheduler queues them (priority,
then creation: file order, then replica order), then planned one after another by the `Planner` on
one working copy of the cluster — each replica sees the ones before it placed (its own spreading
and anti-affinity included) and the pods evicted for them gone — with the scheduler's rotating
start index (`Planner(rotate=True)`). The answer per workload: how many replicas are placed and
where, how many stay Pending and the scheduler's message for them, the eviction plan of each
replica that needs one, and, for the first replica nothing can place, what each nearest node
lacks (`explain_pod` on the cluster as the earlier replicas left it). With `max`: how many
replicas of it fit at all (`max_replicas`: without evicting anything — cluster-capacity's
question —, and with evictions within the tiers).

The cluster is the one given, with the manifests' Services, PodDisruptionBudgets, PriorityClasses,
Namespaces, DeviceClasses, ResourceClaimTemplates and ResourceClaims added (a template or claim the
pods name and neither holds is named in the workload's notes: `device_notes`), the controllers' own
objects whose selectors default spreading reads (a Deployment's ReplicaSet, a StatefulSet), a
StatefulSet's new claims, and without the pods of a workload of the same kind and name that already
runs (a rollout replaces them: the plan is the cluster once it is done). Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.dra import DraState
from kresched.model.gangs import Gang, GangIndex, declared_group
from kresched.model.objects import Node, Pod, ReplicaSet, ReplicationController, StatefulSet
from kresched.model.specs import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    ReplicationControllerSpec,
    SelectorSpec,
    Volume,
)
from kresched.model.storage import ANN_STORAGE_CLASS, PersistentVolumeClaim, StorageState
from kresched.model.volumes import PersistentVolumeClaimVolumeSource
from kresched.model.workloads import WorkloadSpec
from kresched.plan.explain import Explanation, explain_pod
from kresched.plan.gang import plan_gang
from kresched.plan.planner import Planner
from kresched.plan.plans import GangOutcome, Plan, PlanOptions
from kresched.sched.dra.claims import with_new_claims
from kresched.sched.node_affinity import required_node_affinity_matches
from kresched.sched.taint_toleration import find_untolerated_taint
from kresched.sources.manifests import Manifests, safe_encode, stable_digest, stable_uid

__all__ = ["DEFAULT_MAX_LIMIT", "MaxResult", "WhatIf", "WhatIfOptions", "WorkloadPlan", "belongs_to", "device_notes",
           "max_replicas", "plan_workloads", "replicas_of", "runs_in", "simulated_state", "what_if_gangs"]

#: How many replicas `--max` simulates at most by default (cluster-capacity's `--max-limit`, whose
#: default is none: kresched's keeps a 5,000-node cluster's answer within seconds).
DEFAULT_MAX_LIMIT = 1000

#: The start of the API server's refusal of an object in a namespace that does not exist.
_NO_NAMESPACE = "namespaces "

DEFAULT_STORAGE_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"


@dataclass(frozen=True)
class WhatIfOptions:
    plan: PlanOptions = field(default_factory=PlanOptions)
    #: Also find the largest replica count that fits (`--max`), simulating at most `max_limit`.
    max: bool = False
    max_limit: int = DEFAULT_MAX_LIMIT
    #: `--gang [MINCOUNT]`: each workload that declares no gang is one of its replicas, with this
    #: minCount (0: every replica).
    gang: int | None = None
    #: The cluster runs the Job controller's `WorkloadWithJob`: a Job is a gang by itself
    #: (minCount: its parallelism), as the PodGroup the controller makes says.
    job_gangs: bool = False


@dataclass(frozen=True)
class MaxResult:
    """`--max`: the largest replica count the cluster takes without evicting anything (the first
    replica that does not fit stops it: cluster-capacity's answer), and with evictions within the
    tiers (a replica whose plan a PodDisruptionBudget blocks stops it, unless
    `--allow-pdb-violation`); where they go, and why it stopped."""

    without_evictions: int
    placed_without: dict[str, int]
    stopped_without: str
    with_evictions: int
    placed_with: dict[str, int]
    evictions: int
    stopped_with: str
    limit: int


@dataclass(frozen=True)
class WorkloadPlan:
    spec: WorkloadSpec
    #: How many pods its controller wants (a DaemonSet: the nodes it may run on).
    replicas: int
    #: Each replica's plan, in the order planned (those never created are not planned).
    plans: tuple[Plan, ...]
    #: Node → replicas the scheduler binds there, those that bind after evictions included.
    placed: dict[str, int]
    pending: int
    message: str
    #: The first replica nothing places: why, per node, nearest to fitting first.
    nearest: Explanation | None = None
    #: StatefulSet (OrderedReady): replicas never created, waiting on an earlier one Pending.
    not_created: int = 0
    notes: tuple[str, ...] = ()
    max: MaxResult | None = None
    #: Replicas whose answer cannot be known (`Plan.missing_kinds`): neither placed nor Pending.
    unknown: int = 0
    #: Its replicas are a gang (or members of one): what the gang's plan came to.
    gang: GangOutcome | None = None

    @property
    def evictions(self) -> int:
        return sum(len(p.victims) for p in self.plans if p.outcome == "evict")

    @property
    def blocked(self) -> int:
        return sum(1 for p in self.plans if p.blocked)


@dataclass(frozen=True)
class WhatIf:
    workloads: tuple[WorkloadPlan, ...]
    #: Kinds in the manifests that were not planned (`ConfigMap shop/cfg`).
    ignored: tuple[str, ...] = ()

    @property
    def plans(self) -> list[Plan]:
        return [p for w in self.workloads for p in w.plans]


# -- the cluster the workloads are created in ----------------------------------------------------------


def simulated_state(state: ClusterState, manifests: Manifests) -> tuple[ClusterState, dict[str, tuple[str, ...]]]:
    """`state` as it is once the manifests are applied and before any of their pods is scheduled
    (see the module docstring), and per workload (by key `Kind ns/name`) what that changed of it."""
    notes: dict[str, tuple[str, ...]] = {}
    replaced: set[str] = set()
    for spec in manifests.workloads:
        old = [p for p in state.pods if belongs_to(spec, p, state)]
        if old:
            replaced.update(p.key for p in old)
            bound = sum(1 for p in old if p.spec.node_name)
            notes[_key(spec)] = (f"{spec.kind.lower()} {spec.key} exists already ({_count(len(old), 'pod')}, {bound} "
                                 "running): planned as once rolled out, its pods replaced by the new ones",)
    controllers: list[ReplicaSet | StatefulSet | ReplicationController] = []
    for spec in manifests.workloads:
        meta = ObjectMeta(name=spec.template.controller.name if spec.template.controller else spec.name,
                          namespace=spec.namespace)
        if spec.kind in ("Deployment", "ReplicaSet"):
            controllers.append(ReplicaSet(metadata=meta, spec=SelectorSpec(selector=spec.selector)))
        elif spec.kind == "StatefulSet":
            controllers.append(StatefulSet(metadata=meta, spec=SelectorSpec(selector=spec.selector)))
        elif spec.kind == "ReplicationController" and spec.selector is not None:
            controllers.append(ReplicationController(metadata=meta, spec=ReplicationControllerSpec(
                selector=dict(spec.selector.match_labels))))
    workloads = [*state.workloads, *manifests.services, *controllers]
    pdbs = [*state.pdbs, *manifests.pdbs]
    classes = [*state.priority_classes, *manifests.priority_classes]
    namespaces = [*state.namespaces, *manifests.namespaces]
    dra = _with_devices(state.dra, manifests)
    pods: Iterable[Pod] = state.pods
    if replaced:
        pods = [p for p in state.pods if p.key not in replaced]
        out = ClusterState.build(state.nodes, pods, pdbs, classes, namespaces, workloads, state.storage, dra,
                                 state.node_leases)
        return dataclasses.replace(out, warnings=state.warnings), notes
    out = ClusterState.build((), (), pdbs, classes, namespaces, workloads)
    return dataclasses.replace(state, pdbs=out.pdbs, priority_classes=out.priority_classes,
                               namespaces=out.namespaces, workloads=out.workloads,
                               workload_by_key=out.workload_by_key, dra=dra), notes


#: The creation time of a DeviceClass the manifests create: now, after every class the cluster has
#: (when two classes name the same extended resource, the newer one backs it).
_CREATED_NOW = "9999-12-31T23:59:59Z"


def _with_devices(dra: DraState, manifests: Manifests) -> DraState:
    """`dra` with the manifests' DeviceClasses, ResourceClaimTemplates and ResourceClaims applied
    (one of the same name replaced), and their kinds known from then on."""
    given = (manifests.device_classes, manifests.resource_claims, manifests.claim_templates)
    if not any(given):
        return dra
    by_name = {c.name: c for c in dra.classes}
    for c in manifests.device_classes:
        old = by_name.get(c.name)
        created = old.metadata.creation_timestamp if old is not None else _CREATED_NOW
        by_name[c.name] = msgspec.structs.replace(c, metadata=msgspec.structs.replace(c.metadata,
                                                                                       creation_timestamp=created))
    kinds = dra.kinds | {k for k, objs in zip(("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"), given,
                                               strict=True) if objs}
    return DraState.build(by_name.values(), dra.slices, (*dra.claims, *manifests.resource_claims),
                          (*dra.templates, *manifests.claim_templates), frozenset(kinds))


def device_notes(spec: WorkloadSpec, dra: DraState) -> tuple[str, ...]:
    """The claims of `spec`'s pods that cannot be made or found: a ResourceClaimTemplate or a
    ResourceClaim named by the pod template and in neither the manifests nor the cluster (when the
    state holds that kind at all: else the answer is unknown, `claims.missing_kinds`)."""
    out = []
    for prc in spec.template.spec.resource_claims:
        if prc.resource_claim_template_name is not None:
            if "ResourceClaimTemplate" in dra.kinds and dra.template(spec.namespace,
                                                                      prc.resource_claim_template_name) is None:
                out.append(f"ResourceClaimTemplate {spec.namespace}/{prc.resource_claim_template_name} (its pods' "
                           f"claim {prc.name}) is in neither the manifests nor the cluster: the resourceclaim "
                           "controller cannot make the claim, so its pods stay Pending (ResourceClaim not created "
                           "yet); add the template to the manifests")
        elif prc.resource_claim_name is not None and "ResourceClaim" in dra.kinds \
                and dra.claim(spec.namespace, prc.resource_claim_name) is None:
            out.append(f"ResourceClaim {spec.namespace}/{prc.resource_claim_name} (its pods' claim {prc.name}) is in "
                       "neither the manifests nor the cluster: the scheduler cannot find it, so its pods stay Pending; "
                       "add the claim to the manifests")
    return tuple(out)


def belongs_to(spec: WorkloadSpec, pod: Pod, state: ClusterState | None = None) -> bool:
    """`pod` belongs to a workload of `spec`'s kind, namespace and name (`runs_in`)."""
    return runs_in(spec.kind, spec.namespace, spec.name, pod, state)


def runs_in(kind: str, namespace: str, name: str, pod: Pod, state: ClusterState | None = None) -> bool:
    """`pod` belongs to the workload `kind` `namespace/name` (through its owner references, as
    `kubectl`'s TYPE/NAME finds them; a Deployment's through the ReplicaSets `state` holds, else by
    the ReplicaSet's name, `<deployment>-<pod-template-hash>`; a CronJob's through its Jobs, named
    `<cronjob>-<minutes>`)."""
    if pod.namespace != namespace:
        return False
    if kind == "Pod":
        return pod.name == name
    owner = pod.controller
    if owner is None:
        return False
    if kind == "Deployment":
        if owner.kind != "ReplicaSet":
            return False
        rs = state.workload_by_key.get(("ReplicaSet", pod.namespace, owner.name)) if state is not None else None
        if rs is not None:
            return any(o.controller and o.kind == "Deployment" and o.name == name
                       for o in rs.metadata.owner_references)
        h = pod.labels.get("pod-template-hash")
        return bool(h) and owner.name == f"{name}-{h}"
    if kind == "CronJob":
        return owner.kind == "Job" and owner.name.startswith(f"{name}-") and owner.name[len(name) + 1:].isdigit()
    return (owner.kind, owner.name) == (kind, name)


def _in_namespace(state: ClusterState, manifests: Manifests, spec: WorkloadSpec) -> WorkloadSpec:
    """`spec`, refused as the API server refuses an object in a namespace that does not exist
    (NamespaceLifecycle: `namespaces "x" not found`) — unless the manifests create it, which a note
    then says. A state without Namespace objects cannot tell: a namespace none of its pods is in
    gets a note."""
    ns = spec.namespace
    if any(n.name == ns for n in manifests.namespaces):
        if any(n.name == ns for n in state.namespaces):
            return spec
        return dataclasses.replace(spec, notes=(*spec.notes, f"namespace {ns} does not exist yet: the manifests "
                                                             "create it (their Namespace)"))
    if state.namespaces:
        if any(n.name == ns for n in state.namespaces) or spec.refused is not None:
            return spec
        return dataclasses.replace(spec, refused=f'{_NO_NAMESPACE}"{ns}" not found: namespace {ns} does not exist '
                                                 f"(kubectl create namespace {ns} first, or add the Namespace to the "
                                                 "manifests)")
    if not any(p.namespace == ns for p in state.pods):
        return dataclasses.replace(spec, notes=(*spec.notes, f"namespace {ns}: the state holds no Namespace objects "
                                                             "and no pod in it; if it does not exist, the API server "
                                                             "refuses the workload"))
    return spec


def _key(spec: WorkloadSpec) -> str:
    return f"{spec.kind} {spec.key}"


# -- the pods the controllers create -------------------------------------------------------------------


def replicas_of(spec: WorkloadSpec, state: ClusterState, count: int | None = None) -> list[Pod]:
    """The pods `spec`'s controller creates in `state`'s cluster, in the order it creates them: a
    DaemonSet's one per node it should run on (`NodeShouldRunDaemonPod`: its nodeName, required
    node affinity and nodeSelector, and no untolerated NoSchedule/NoExecute taint), in node name
    order; `count` (else the workload's own) of any other kind."""
    if spec.kind == "DaemonSet":
        return [_daemon_pod(spec, node) for node in sorted(state.nodes, key=lambda n: n.name)
                if _should_run(spec.template, node)]
    n = spec.replicas if count is None else count
    assert n is not None
    if spec.kind == "Pod":
        # Its claims from templates are made for it when it is created, as a replica's are.
        return [with_new_claims(spec.template) if i == 0 else _named(spec, f"{spec.name}-{i + 1}", {})
                for i in range(n)]
    if spec.kind == "StatefulSet":
        return [_stateful_pod(spec, spec.ordinal_start + i, state.storage) for i in range(n)]
    owner = spec.template.metadata.name
    out = []
    for i in range(n):
        labels: dict[str, str] = {}
        prefix = f"{owner}-"
        if spec.indexed:
            prefix = f"{owner}-{i}-"
            labels["batch.kubernetes.io/job-completion-index"] = str(i)
        out.append(_named(spec, _generated(prefix, spec.key, i), labels))
    return out


def _generated(prefix: str, key: str, i: int) -> str:
    """`generateName`'s name: the prefix (cut to 58 characters) and five characters of the
    apimachinery alphabet — derived from the workload and the replica, so that a plan is the same
    every time (the API server's are random)."""
    return prefix[:58] + safe_encode(stable_digest(key, str(i)))[:5]


def _named(spec: WorkloadSpec, name: str, labels: dict[str, str], annotations: dict[str, str] | None = None,
           volumes: tuple[Volume, ...] | None = None, affinity: Affinity | None = None) -> Pod:
    t = spec.template
    meta = msgspec.structs.replace(t.metadata, name=name, generate_name="", uid=stable_uid("Pod", spec.namespace, name),
                                   labels={**t.labels, **labels} if labels else t.labels,
                                   annotations={**t.metadata.annotations, **(annotations or {})}
                                   if annotations else t.metadata.annotations)
    pod_spec = t.spec
    if volumes is not None or affinity is not None:
        pod_spec = msgspec.structs.replace(pod_spec, volumes=volumes if volumes is not None else pod_spec.volumes,
                                           affinity=affinity if affinity is not None else pod_spec.affinity)
    # Each replica's claims from templates are made for it when it is created (`with_new_claims`).
    return with_new_claims(Pod(metadata=meta, spec=pod_spec, status=t.status))


def _stateful_pod(spec: WorkloadSpec, ordinal: int, storage: StorageState) -> Pod:
    """`newStatefulSetPod`: `<set>-<ordinal>`, its pod-name and pod-index labels, and a volume per
    claim template naming the claim `<template>-<set>-<ordinal>` (replacing a volume of that name)."""
    name = f"{spec.name}-{ordinal}"
    labels = {"statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": str(ordinal)}
    volumes: tuple[Volume, ...] | None = None
    if spec.claim_templates:
        names = {c.name for c in spec.claim_templates}
        kept = [v for v in spec.template.spec.volumes if v.name not in names]
        volumes = (*kept, *(Volume(name=c.name, persistent_volume_claim=PersistentVolumeClaimVolumeSource(
            claim_name=f"{c.name}-{spec.name}-{ordinal}")) for c in spec.claim_templates))
    return _named(spec, name, labels, volumes=volumes)


def _daemon_pod(spec: WorkloadSpec, node: Node) -> Pod:
    """The DaemonSet controller's pod for `node`: its required node affinity replaced by
    `matchFields metadata.name In [node]` (`ReplaceDaemonSetPodNodeNameNodeAffinity`)."""
    aff = spec.template.spec.affinity or Affinity()
    term = NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", (node.name,)),))
    na = aff.node_affinity or NodeAffinity()
    na = msgspec.structs.replace(na, required_during_scheduling_ignored_during_execution=NodeSelector((term,)))
    affinity = msgspec.structs.replace(aff, node_affinity=na)
    return _named(spec, _generated(f"{spec.name}-", spec.key, hash_index(node.name)), {}, affinity=affinity)


def hash_index(text: str) -> int:
    return int(stable_digest(text)[:8], 16)


def _should_run(pod: Pod, node: Node) -> bool:
    """`NodeShouldRunDaemonPod`'s shouldRun: the template's nodeName (if any) is this node, its
    required node affinity and nodeSelector match, and it tolerates the node's NoSchedule and
    NoExecute taints (the DaemonSet's own tolerations are in the template already)."""
    if pod.spec.node_name and pod.spec.node_name != node.name:
        return False
    if not required_node_affinity_matches(pod, node.name, node.labels):
        return False
    return find_untolerated_taint(node.taints, pod.spec.tolerations) is None


# -- planning -------------------------------------------------------------------------------------------


def plan_workloads(state: ClusterState, manifests: Manifests, options: WhatIfOptions = WhatIfOptions()) -> WhatIf:
    """Plan every workload of `manifests` as if created now (see the module docstring)."""
    manifests = dataclasses.replace(manifests, workloads=[_in_namespace(state, manifests, s)
                                                          for s in manifests.workloads])
    sim, changed = simulated_state(state, manifests)
    storage_notes: dict[str, list[str]] = {}
    queue: list[tuple[tuple, WorkloadSpec, Pod]] = []
    wanted: dict[str, int] = {}
    for order, spec in enumerate(manifests.workloads):
        pods = replicas_of(spec, sim)
        wanted[_key(spec)] = len(pods)
        if spec.refused is not None:
            continue
        pods, sim, said = _with_claims(spec, pods, sim)
        storage_notes[_key(spec)] = said
        for i, pod in enumerate(pods):
            queue.append(((-pod.effective_priority, order, i), spec, pod))
    queue.sort(key=lambda q: q[0])
    gangs = what_if_gangs(manifests, sim, [(spec, pod) for _, spec, pod in queue], options)
    spec_of = {pod.key: spec for _, spec, pod in queue}
    planner = Planner(sim, options.plan, rotate=True, rank=False)
    plans: dict[str, list[Plan]] = {_key(s): [] for s in manifests.workloads}
    waiting: dict[str, int] = {}
    planned: set[str] = set()
    for _, spec, pod in queue:
        key = _key(spec)
        if key in waiting:  # OrderedReady: nothing after a replica that never runs is created
            waiting[key] += 1
            continue
        gang = gangs.get(pod.key)
        if gang is not None:  # a gang's replicas, planned as one where its first comes (`plan.gang`)
            if gang.key not in planned:
                planned.add(gang.key)
                for p in plan_gang(planner, gang, [m for m in gang.members if m.key in spec_of]).plans:
                    plans[_key(spec_of[p.pod.key])].append(p)
            continue
        plan = planner.plan(pod, commit=True)
        plans[key].append(plan)
        if plan.outcome == "infeasible" and spec.kind == "StatefulSet" and spec.pod_management == "OrderedReady":
            waiting[key] = 0
    out = []
    for spec in manifests.workloads:
        key = _key(spec)
        notes = (*changed.get(key, ()), *spec.notes, *storage_notes.get(key, ()), *device_notes(spec, sim.dra))
        out.append(_result(spec, wanted[key], plans[key], waiting.get(key, 0), planner, sim, options, notes))
    if options.max:
        out = [dataclasses.replace(w, max=max_replicas(sim, w.spec, options)) if w.spec.kind != "DaemonSet"
               and w.spec.refused is None else
               dataclasses.replace(w, notes=(*w.notes, "--max does not apply to a DaemonSet: it runs one pod on every "
                                                       "node it may run on")) if w.spec.kind == "DaemonSet" else w
               for w in out]
    return WhatIf(tuple(out), tuple(manifests.ignored))


def _result(spec: WorkloadSpec, wanted: int, plans: list[Plan], not_created: int, planner: Planner,
            sim: ClusterState, options: WhatIfOptions, notes: tuple[str, ...]) -> WorkloadPlan:
    if spec.refused is not None:
        what = "would refuse the workload itself" if spec.refused.startswith(_NO_NAMESPACE) else "refuses its pods"
        return WorkloadPlan(spec, wanted, (), {}, wanted, f"the API server {what}: {spec.refused}", notes=notes)
    placed: dict[str, int] = {}
    for p in plans:
        if p.node is not None and p.outcome in ("fits", "evict"):
            placed[p.node] = placed.get(p.node, 0) + 1
    bound = sum(placed.values())
    unknown = sum(1 for p in plans if p.outcome == "unknown")
    pending = wanted - bound - unknown
    nearest = None
    gang = next((p.gang for p in plans if p.gang is not None), None)
    first = next((p for p in plans if p.outcome == "infeasible"), None)
    if gang is not None and not gang.kept:  # each replica alone may fit: the gang's reason is the reason
        what = _count(wanted, "replica")
        return WorkloadPlan(spec, wanted, tuple(plans), {}, wanted, f"{what}: 0 placed, {wanted} stay Pending: "
                            f"{gang.message}", None, not_created, notes, gang=gang)
    if first is not None:
        nearest = explain_pod(sim, first.pod, snapshot=planner.work.snapshot, profiles=options.plan.profiles)
        if nearest.message is not None and nearest.preemption_message is None and nearest.post_filter_error is None \
                and "DefaultPreemption" in nearest.post_filters and first.pod.spec.preemption_policy != "Never":
            notes = (*notes, "the scheduler's own preemption would make room for the Pending replicas by evicting pods "
                             "kresched never evicts (DaemonSet, mirror or critical pods): kresched counts them Pending")
    message = _message(spec, wanted, plans, bound, pending, not_created, nearest, first)
    if unknown:
        said = next(p for p in plans if p.outcome == "unknown").message
        message += f"; {unknown} cannot be known: {said.removeprefix('cannot be known: ')}"
    return WorkloadPlan(spec, wanted, tuple(plans), dict(sorted(placed.items())), pending, message, nearest,
                        not_created, notes, gang=gang, unknown=unknown)


def _message(spec: WorkloadSpec, wanted: int, plans: list[Plan], bound: int, pending: int, not_created: int,
             nearest: Explanation | None, first: Plan | None) -> str:
    what = _count(wanted, "replica") if spec.kind != "DaemonSet" else \
        f"{_count(wanted, 'pod')} (one per node it may run on)"
    if wanted == 0:
        return f"{spec.kind.lower()} {spec.key} creates no pod" + \
            (": no node is one it may run on" if spec.kind == "DaemonSet" else "")
    fits = sum(1 for p in plans if p.outcome == "fits")
    evicting = [p for p in plans if p.outcome == "evict"]
    parts = []
    if fits:
        parts.append(f"{fits} without evicting anything")
    if evicting:
        victims = sum(len(p.victims) for p in evicting)
        blocked = sum(1 for p in evicting if p.blocked)
        text = f"{len(evicting)} after evicting {_count(victims, 'pod')}"
        if blocked:
            text += f" ({blocked} of them over a PodDisruptionBudget: --allow-pdb-violation)"
        parts.append(text)
    head = f"{what}: {bound} placed" + (f" ({', '.join(parts)})" if parts else "")
    if not pending:
        return head
    tail = f"{pending} stay{'s' if pending == 1 else ''} Pending"
    if not_created:
        tail += (f" ({not_created} never created: podManagementPolicy OrderedReady creates the next ordinal only once "
                 "the one before is Running and Ready)")
    if nearest is not None and nearest.scheduler_message:
        tail += f": {nearest.scheduler_message}"
    elif first is not None:
        tail += f": {first.message}"
    return f"{head}, {tail}"


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


# -- gangs ----------------------------------------------------------------------------------------------


def what_if_gangs(manifests: Manifests, state: ClusterState, replicas: Sequence[tuple[WorkloadSpec, Pod]],
                  options: WhatIfOptions) -> dict[str, Gang]:
    """Which of the new pods (`replicas`, each with its workload) are members of which gang, by pod
    key: those that declare a group (`model.gangs.declared_group`: its PodGroup from the manifests,
    else the cluster; Kueue's total count; else every member, assumed), then an Indexed Job of
    `completions == parallelism > 1` under `WorkloadWithJob` (`job_gangs`: minCount its parallelism, as
    the Job controller makes its PodGroup), then, with `--gang`, every other
    workload (minCount `options.gang`, 0: every replica). A group's members already in the cluster
    count (its running ones toward minCount)."""
    groups = {(g.flavor, g.namespace, g.name): g for g in (*state.pod_groups, *manifests.pod_groups)
              if g.flavor is not None}
    declared: dict[tuple[str, str, str], list[Pod]] = {}
    by_spec: dict[str, list[Pod]] = {}
    specs: dict[str, WorkloadSpec] = {}
    for spec, pod in replicas:
        group = declared_group(pod)
        if group is not None:
            declared.setdefault((group[0], pod.namespace, group[1]), []).append(pod)
        else:
            by_spec.setdefault(_key(spec), []).append(pod)
            specs[_key(spec)] = spec
    out: dict[str, Gang] = {}
    for (flavor, ns, name), pods in declared.items():
        known = state.gangs.gangs.get((flavor, ns, name))
        existing = known.members if known is not None else ()
        gang = GangIndex((*existing, *pods), [g for k, g in groups.items() if k == (flavor, ns, name)],
                         frozenset({"PodGroup"}) if groups else frozenset()).gangs.get((flavor, ns, name))
        for p in pods if gang is not None else ():
            out[p.key] = gang
    for key, pods in by_spec.items():
        spec = specs[key]
        if options.job_gangs and spec.gang_by_job:
            gang = Gang("workload", spec.namespace, spec.name, len(pods), tuple(pods),
                        declared_by=f"WorkloadWithJob: the Job controller's PodGroup for an Indexed Job, gang.minCount "
                                    f"{len(pods)} (its parallelism)")
        elif options.gang is not None and len(pods) > 1:
            count = options.gang or len(pods)
            gang = Gang("what-if", spec.namespace, spec.name, min(count, len(pods)), tuple(pods),
                        declared_by=f"--gang {options.gang}" if options.gang else "--gang (every replica)")
        else:
            continue
        for p in pods:
            out[p.key] = gang
    return out


# -- claims ---------------------------------------------------------------------------------------------


def _with_claims(spec: WorkloadSpec, pods: list[Pod], state: ClusterState
                 ) -> tuple[list[Pod], ClusterState, list[str]]:
    """The StatefulSet controller's claims for its pods (`<template>-<set>-<ordinal>`, reused when
    they exist; with the DefaultStorageClass admission's class when a template names none), and
    the ephemeral volume controller's (`<pod>-<volume>`, owned by the pod), added to the state's
    storage when it holds storage objects (else the volume filters do not run anyway). A new claim
    of a class that binds at once (`Immediate`) is provisioned before the pod is scheduled, where
    kresched cannot know: the pod is planned without it, and the plan says so."""
    storage = state.storage
    if not storage.has_claims or not (spec.claim_templates or spec.ephemeral_claims):
        return pods, state, []
    default_class = _default_class(storage)
    new: list[PersistentVolumeClaim] = []
    immediate: set[str] = set()
    out: list[Pod] = []
    for pod in pods:
        drop: set[str] = set()
        made = []
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is not None:
                template = next((c for c in spec.claim_templates if v.name == c.name), None)
                name = v.persistent_volume_claim.claim_name
                owner = None
            else:
                template = next((c for name_, c in spec.ephemeral_claims if name_ == v.name), None)
                name = f"{pod.name}-{v.name}"
                owner = pod
            if template is None or storage.pvc(pod.namespace, name) is not None:
                continue
            claim = _claim(template, name, pod.namespace, default_class, owner)
            cls = storage.storage_class(claim.storage_class) if claim.storage_class else None
            if cls is not None and not cls.is_wait_for_first_consumer:
                drop.add(v.name)
                immediate.add(cls.name)
                continue
            made.append(claim)
        new += made
        if drop:
            pod = msgspec.structs.replace(pod, spec=msgspec.structs.replace(
                pod.spec, volumes=tuple(v for v in pod.spec.volumes if v.name not in drop)))
        out.append(pod)
    notes = []
    if immediate:
        notes.append(f"its new claims of StorageClass {', '.join(sorted(immediate))} (volumeBindingMode Immediate) are "
                     "provisioned before the pods are scheduled, wherever the provisioner puts them: the pods are "
                     "planned as if their volumes could follow them")
    if new:
        storage = StorageState.build(storage.pvs, (*storage.pvcs, *new), storage.classes, storage.csi_nodes,
                                     storage.kinds)
        state = dataclasses.replace(state, storage=storage)
    return out, state, notes


def _claim(template: PersistentVolumeClaim, name: str, namespace: str, default_class: str | None,
           owner: Pod | None) -> PersistentVolumeClaim:
    meta = msgspec.structs.replace(template.metadata, name=name, namespace=namespace,
                                   uid=stable_uid("PersistentVolumeClaim", namespace, name))
    if owner is not None:
        meta = msgspec.structs.replace(meta, owner_references=(OwnerReference(
            kind="Pod", name=owner.name, api_version="v1", uid=owner.uid, controller=True),))
    spec = template.spec
    if spec.storage_class_name is None and ANN_STORAGE_CLASS not in meta.annotations and default_class is not None:
        spec = msgspec.structs.replace(spec, storage_class_name=default_class)
    return PersistentVolumeClaim(metadata=meta, spec=spec)


def _default_class(storage: StorageState) -> str | None:
    """The DefaultStorageClass admission's choice: the class annotated as default (the newest, then
    the first by name, if several)."""
    defaults = [c for c in storage.classes
                if c.metadata.annotations.get(DEFAULT_STORAGE_CLASS_ANNOTATION) == "true"]
    if not defaults:
        return None
    defaults.sort(key=lambda c: (c.metadata.creation_timestamp or "", c.name), reverse=True)
    return defaults[0].name


# -- --max ----------------------------------------------------------------------------------------------


def max_replicas(state: ClusterState, spec: WorkloadSpec, options: WhatIfOptions) -> MaxResult:
    """The largest number of `spec`'s replicas the cluster takes, each after the ones before:
    without evictions, until the first that does not fit (cluster-capacity's question); with
    evictions within the tiers, until the first nothing can place (or whose plan a
    PodDisruptionBudget blocks, without `--allow-pdb-violation`). At most `options.max_limit`."""
    limit = options.max_limit
    pods = replicas_of(spec, state, limit + 1)
    pods, state, _ = _with_claims(spec, pods, state)
    without, placed_without, stopped_without = _count_fitting(state, pods, limit, options, evict=False)
    with_, placed_with, stopped_with, evictions = _count_fitting(state, pods, limit, options, evict=True)
    return MaxResult(without, placed_without, stopped_without, with_, placed_with, evictions, stopped_with, limit)


def _count_fitting(state: ClusterState, pods: Sequence[Pod], limit: int, options: WhatIfOptions, evict: bool):
    planner = Planner(state, options.plan, rotate=True, rank=False)
    placed: dict[str, int] = {}
    evictions = 0
    n = 0
    stopped = f"the limit of {limit} replicas was reached (--max-limit)"
    for pod in pods[:limit]:
        plan = planner.plan(pod, commit=True, evict=evict)
        if plan.outcome == "infeasible" or plan.blocked:
            stopped = f"replica {n + 1}: {plan.message}"
            break
        assert plan.node is not None
        placed[plan.node] = placed.get(plan.node, 0) + 1
        evictions += len(plan.victims)
        n += 1
    placed = dict(sorted(placed.items()))
    if evict:
        return n, placed, stopped, evictions
    return n, placed, stopped
