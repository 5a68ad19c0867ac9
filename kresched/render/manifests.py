"""What an operator applies to run `kresched reconcile` in the cluster: a ServiceAccount, its
least-privilege RBAC, and a CronJob (and the Namespace, if asked).

Owns `API_CALLS`, the one table of every kind of API call kresched makes, as RBAC sees it; the
ClusterRole and the Role are derived from it and from nothing else. The table must list exactly
what `kresched.sources.live` and `kresched.execute.kube` call (tests/test_rbac_coverage.py checks
it both ways: against every `ApiCall` in the code, and against every request the real commands
send to the fake API server).

Pure: builds plain API dicts from `ManifestOptions`; never prints, never reads the cluster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from kresched import __version__
from kresched.model.lease import NODE_LEASE_NAMESPACE

if TYPE_CHECKING:
    from kresched.plan.policy import Policy

__all__ = [
    "API_CALLS",
    "DEFAULT_IMAGE",
    "apply_role_rules",
    "RUN_AS_USER",
    "ManifestOptions",
    "Permission",
    "build_manifests",
    "build_manifest_list",
    "cluster_role_rules",
    "lease_role_rules",
    "node_lease_role_rules",
    "manifest_errors",
    "reconcile_args",
]

DEFAULT_IMAGE = f"ghcr.io/kresched/kresched:{__version__}"
#: The image's non-root user and group (the Dockerfile's `USER`); the pod runs as it.
RUN_AS_USER = 65532
NAME = "kresched"


# -- what kresched calls -------------------------------------------------------------------------

@dataclass(frozen=True)
class Permission:
    """One kind of API call kresched makes: `verb` on `group`/`resource`[/`subresource`]."""

    verb: str
    resource: str
    group: str = ""
    subresource: str = ""
    #: "cluster": in any namespace or cluster-scoped (ClusterRole); "lock": only on the Lease used
    #: as `reconcile`'s lock, in its namespace (Role); "node-lease": in `kube-node-lease`, where the
    #: kubelets' heartbeats are (Role).
    scope: Literal["cluster", "lock", "node-lease"] = "cluster"
    #: Needed only when PodDisruptionBudget-violating deletions are allowed (`--allow-pdb-violation`).
    only_with_pdb_violation: bool = False
    #: Needed only by `preempt -f --apply`, which the CronJob never runs: the manifests never grant it
    #: (the operator running it needs it; `apply_role_rules` spells it out).
    only_with_apply: bool = False
    #: Who calls it, for the people reading the table and the role.
    why: str = ""

    @property
    def rbac_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


#: Every kind of API call kresched makes. A call added to `sources/live.py` or `execute/kube.py`
#: must be added here (or the RBAC tests fail), and then it is in the role.
API_CALLS: tuple[Permission, ...] = (
    Permission("list", "namespaces", why="read the state (namespace selectors of affinity terms)"),
    Permission("list", "priorityclasses", "scheduling.k8s.io", why="read the state"),
    Permission("list", "nodes", why="read the state"),
    Permission("get", "nodes", why="re-read a node before patching it"),
    Permission("patch", "nodes", why="reservation taint and annotations; cordon"),
    Permission("list", "poddisruptionbudgets", "policy", why="read the state"),
    Permission("list", "services", why="read the state (default spreading of the pods a Service selects)"),
    Permission("list", "replicationcontrollers", why="read the state (default spreading)"),
    Permission("list", "replicasets", "apps", why="read the state (default spreading)"),
    Permission("list", "statefulsets", "apps", why="read the state (default spreading)"),
    Permission("watch", "poddisruptionbudgets", "policy",
               why="drain, rebalance: evict again as soon as a PDB that refused an eviction allows it"),
    Permission("list", "persistentvolumes", why="read the state (volume filters)"),
    Permission("list", "persistentvolumeclaims", why="read the state (volume filters)"),
    Permission("list", "storageclasses", "storage.k8s.io", why="read the state (volume filters)"),
    Permission("list", "csinodes", "storage.k8s.io", why="read the state (CSI attach limits)"),
    *(Permission("list", resource, "resource.k8s.io", why="read the state (devices: Dynamic Resource Allocation)")
      for resource in ("deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates")),
    *(Permission("list", resource, group,
                 why="read the state (gangs: which pods run all together or not at all; read where served)")
      for resource, group in (("workloads", "scheduling.k8s.io"), ("podgroups", "scheduling.k8s.io"),
                              ("podgroups", "scheduling.x-k8s.io"), ("podgroups", "scheduling.volcano.sh"))),
    Permission("list", "pods", why="read the state; is the pending pod bound; drain: are the evicted pods gone; "
                                   "rebalance: is the replacement Ready"),
    Permission("watch", "pods", why="wait for the pending pod to be bound"),
    Permission("create", "pods", subresource="eviction", why="evict through the Eviction API (PDBs enforced)"),
    Permission("delete", "pods", only_with_pdb_violation=True,
               why="tier-3 victims whose eviction a PDB refuses (--allow-pdb-violation only)"),
    Permission("create", "events", "events.k8s.io",
               why="record Kubernetes Events of what kresched does (evictions, reservations, cordons)"),
    *(Permission(verb, resource, group, only_with_apply=True,
                 why="preempt -f --apply: server-side apply of the workload (an apply that creates is a create too)")
      for resource, group in (("pods", ""), ("replicationcontrollers", ""), ("deployments", "apps"),
                              ("replicasets", "apps"), ("statefulsets", "apps"), ("daemonsets", "apps"),
                              ("jobs", "batch"), ("cronjobs", "batch"))
      for verb in ("create", "patch")),
    Permission("list", "leases", "coordination.k8s.io", scope="node-lease",
               why="read the state: when each kubelet was last heard from (lost nodes)"),
    Permission("get", "leases", "coordination.k8s.io", scope="lock", why="reconcile's lock"),
    Permission("create", "leases", "coordination.k8s.io", scope="lock", why="reconcile's lock, first pass"),
    Permission("update", "leases", "coordination.k8s.io", scope="lock", why="take, renew and release the lock"),
)

_VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


def _rules(perms: list[Permission], resource_name: str | None = None) -> list[dict[str, Any]]:
    """PolicyRules, one per (group, resource), verbs in kubectl's usual order.

    With `resource_name`, verbs that name their object are restricted to it (`resourceNames`);
    `create` cannot be (the name is not known when the request is authorised), so it gets a rule of
    its own.
    """
    groups: dict[tuple[str, str, bool], set[str]] = {}
    for p in perms:
        named = resource_name is not None and p.verb not in ("create", "list", "watch", "deletecollection")
        groups.setdefault((p.group, p.rbac_resource, named), set()).add(p.verb)
    rules = []
    for (group, resource, named), verbs in sorted(groups.items()):
        rule: dict[str, Any] = {"apiGroups": [group], "resources": [resource]}
        if named:
            rule["resourceNames"] = [resource_name]
        rule["verbs"] = sorted(verbs, key=_VERB_ORDER.index)
        rules.append(rule)
    return rules


def cluster_role_rules(allow_pdb_violation: bool) -> list[dict[str, Any]]:
    """The ClusterRole's rules: every cluster-wide call in `API_CALLS` the CronJob may make (never
    `preempt -f --apply`'s)."""
    return _rules([p for p in API_CALLS if p.scope == "cluster" and not p.only_with_apply
                   and (allow_pdb_violation or not p.only_with_pdb_violation)])


def apply_role_rules() -> list[dict[str, Any]]:
    """What an operator's role needs beyond the CronJob's to run `preempt -f --apply`."""
    return _rules([p for p in API_CALLS if p.only_with_apply])


def node_lease_role_rules() -> list[dict[str, Any]]:
    """The Role's rules in `kube-node-lease`: reading the kubelets' heartbeats."""
    return _rules([p for p in API_CALLS if p.scope == "node-lease"])


def lease_role_rules(lease_name: str) -> list[dict[str, Any]]:
    """The Role's rules, in the lock's namespace: the Lease calls, restricted to the lock by name."""
    return _rules([p for p in API_CALLS if p.scope == "lock"], resource_name=lease_name)


# -- options -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ManifestOptions:
    """What `kresched manifests` is told; the reconcile defaults are `kresched reconcile`'s own."""

    namespace: str = "kube-system"
    create_namespace: bool = False
    schedule: str = "*/5 * * * *"
    image: str = DEFAULT_IMAGE
    #: `NS/NAME` of the Lease used as the lock; None: `kresched` in `namespace`.
    lease: str | None = None
    #: The reconcile settings: None where not given, which means the `config`'s (the file decides,
    #: in its ConfigMap) or, without one, kresched's defaults (spelled out in the arguments).
    min_priority: int | None = None
    max_evictions: int | None = None
    allow_pdb_violation: bool = False
    #: `reconcile --rebalance`: one bounded rebalance pass after the pending pods (no new permission:
    #: it lists pods, reads PDBs and evicts, as the rest of the pass does).
    rebalance: bool = False
    deadline_seconds: int | None = None
    min_pending_seconds: int | None = None
    reservation_ttl_seconds: int | None = None
    max_grace_seconds: int | None = None
    #: kresched's own KreschedConfiguration (the file's text, checked) and what it decides; the CronJob
    #: mounts it from a ConfigMap and runs `reconcile --config` with it.
    config: str | None = None
    policy: Policy = field(default_factory=lambda: _moderate())
    #: The cluster's KubeSchedulerConfiguration (the file's text, checked): mounted from a ConfigMap,
    #: `reconcile --scheduler-config`.
    scheduler_config: str | None = None
    #: The CronJob's pods run at this priority, so that the rescheduler itself gets scheduled on a
    #: full cluster; "" for none.
    priority_class: str = "system-cluster-critical"
    memory_limit: str = "1Gi"
    #: A run that could not start within this is skipped (and does not count as missed forever:
    #: without it, a CronJob that missed 100 schedules stops starting jobs).
    starting_deadline_seconds: int = 120

    @property
    def lease_namespace(self) -> str:
        return self.lease.partition("/")[0] if self.lease and "/" in self.lease else self.namespace

    @property
    def lease_name(self) -> str:
        if not self.lease:
            return NAME
        return self.lease.partition("/")[2] if "/" in self.lease else self.lease

    @property
    def active_deadline_seconds(self) -> int:
        """The job is killed a minute after reconcile's own deadline: room to start, and to release
        reservations and the Lease on the way out."""
        return self.effective_deadline_seconds + 60

    @property
    def effective_deadline_seconds(self) -> int:
        return self.deadline_seconds if self.deadline_seconds is not None \
            else int(self.policy.reconcile.deadline_seconds)


def _moderate() -> Policy:
    from kresched.plan.policy import preset

    return preset("moderate")


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")


def manifest_errors(o: ManifestOptions) -> list[str]:
    """Every problem with `o`, all at once (empty when the manifests can be built)."""
    errors = []
    if not _DNS_LABEL.match(o.namespace):
        errors.append(f"--namespace {o.namespace!r}: not a valid namespace name")
    if o.lease is not None:
        ns, sep, name = o.lease.partition("/")
        if not sep or not _DNS_LABEL.match(ns) or not _DNS_SUBDOMAIN.match(name):
            errors.append(f"--lease {o.lease!r}: expected NAMESPACE/NAME")
    if len(o.schedule.split()) != 5 and not o.schedule.startswith("@"):
        errors.append(f"--schedule {o.schedule!r}: expected a cron schedule of five fields, e.g. '*/5 * * * *'")
    if not o.image.strip() or any(c.isspace() for c in o.image):
        errors.append(f"--image {o.image!r}: not an image reference")
    if o.effective_deadline_seconds < 10:
        errors.append("--deadline: at least 10s")
    if o.priority_class and not _DNS_SUBDOMAIN.match(o.priority_class):
        errors.append(f"--priority-class {o.priority_class!r}: not a valid PriorityClass name")
    if not _QUANTITY.match(o.memory_limit):
        errors.append(f"--memory-limit {o.memory_limit!r}: not a quantity (e.g. 1Gi)")
    return errors


# -- the objects ---------------------------------------------------------------------------------

def _duration_text(seconds: int) -> str:
    """240 → `4m`, 3600 → `1h`, 90 → `90s`: what `kresched reconcile` parses."""
    if seconds and seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    if seconds and seconds % 60 == 0:
        return f"{seconds // 60}m"
    return f"{seconds}s"


def reconcile_args(o: ManifestOptions) -> list[str]:
    """The container's arguments (the image's entrypoint is `kresched`): every setting spelled
    out, so the CronJob does not depend on the defaults of the image's version — but with a
    `config`, only the settings given here: the rest is the file's, read from its ConfigMap."""
    own = o.policy.reconcile
    args = ["reconcile", "--lease", f"{o.lease_namespace}/{o.lease_name}"]
    if o.config is not None:
        args += ["--config", f"{CONFIG_DIR}/{CONFIG_KEY}"]
    if o.scheduler_config is not None:
        args += ["--scheduler-config", f"{SCHEDULER_CONFIG_DIR}/{CONFIG_KEY}"]
    for flag, given, default in (("--deadline", o.deadline_seconds, own.deadline_seconds),
                                 ("--min-pending", o.min_pending_seconds, own.min_pending_seconds),
                                 ("--reservation-ttl", o.reservation_ttl_seconds, own.reservation_ttl_seconds)):
        if given is not None or o.config is None:
            args += [flag, _duration_text(int(default if given is None else given))]
    for flag, count, fallback in (("--max-evictions", o.max_evictions, own.max_evictions),
                                  ("--max-grace", o.max_grace_seconds, own.max_grace_seconds)):
        if count is not None or o.config is None:
            args += [flag, str(fallback if count is None else count)]
    if o.min_priority is not None:
        args += ["--min-priority", str(o.min_priority)]
    if o.allow_pdb_violation:
        args.append("--allow-pdb-violation")
    if o.rebalance:
        args.append("--rebalance")
    args += ["--output", "json"]
    return args


def _labels() -> dict[str, str]:
    return {"app.kubernetes.io/name": NAME, "app.kubernetes.io/version": __version__}


def _meta(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = _labels()
    return meta


def _cron_job(o: ManifestOptions) -> dict[str, Any]:
    container_security = {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS_USER,
        "runAsGroup": RUN_AS_USER,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    container: dict[str, Any] = {
        "name": NAME,
        "image": o.image,
        "imagePullPolicy": "IfNotPresent",
        "args": reconcile_args(o),
        # lease.py's holder identity: which pod holds the lock.
        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"},
                      "limits": {"cpu": "1", "memory": o.memory_limit}},
        "securityContext": container_security,
    }
    mounts = _config_mounts(o)
    if mounts:
        container["volumeMounts"] = [{"name": v, "mountPath": path, "readOnly": True} for v, _, path in mounts]
    pod_spec: dict[str, Any] = {
        "serviceAccountName": NAME,
        # Exit 4 (partly done) is not worth an immediate retry: the next scheduled pass finds the
        # pod again.
        "restartPolicy": "Never",
        # SIGTERM makes reconcile remove its reservations and release the Lease: give it the time.
        "terminationGracePeriodSeconds": 30,
    }
    if o.priority_class:
        pod_spec["priorityClassName"] = o.priority_class
    pod_spec |= {
        "nodeSelector": {"kubernetes.io/os": "linux"},
        # Like the critical add-ons it reschedules, it may run on a node reserved for them.
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
        "securityContext": {"runAsNonRoot": True, "runAsUser": RUN_AS_USER, "runAsGroup": RUN_AS_USER,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [container],
    }
    if mounts:
        pod_spec["volumes"] = [{"name": v, "configMap": {"name": cm}} for v, cm, _ in mounts]
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": _meta(NAME, o.namespace),
        "spec": {
            "schedule": o.schedule,
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": o.starting_deadline_seconds,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 3,
            "jobTemplate": {
                "metadata": {"labels": _labels()},
                "spec": {
                    "backoffLimit": 0,
                    "activeDeadlineSeconds": o.active_deadline_seconds,
                    "template": {"metadata": {"labels": _labels()}, "spec": pod_spec},
                },
            },
        },
    }


#: Where the CronJob's pod finds the configuration files (each a ConfigMap's `config.yaml`).
CONFIG_DIR = "/etc/kresched/config"
SCHEDULER_CONFIG_DIR = "/etc/kresched/scheduler"
CONFIG_KEY = "config.yaml"
CONFIG_MAP = f"{NAME}-config"
SCHEDULER_CONFIG_MAP = f"{NAME}-scheduler-config"


def _config_mounts(o: ManifestOptions) -> list[tuple[str, str, str]]:
    """(volume, ConfigMap, mount path) of each configuration file the CronJob reads."""
    out = []
    if o.config is not None:
        out.append(("config", CONFIG_MAP, CONFIG_DIR))
    if o.scheduler_config is not None:
        out.append(("scheduler-config", SCHEDULER_CONFIG_MAP, SCHEDULER_CONFIG_DIR))
    return out


def _config_map(name: str, namespace: str, text: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(name, namespace), "data": {CONFIG_KEY: text}}


def build_manifests(o: ManifestOptions) -> list[dict[str, Any]]:
    """The objects, in the order they can be applied (namespace, identity, RBAC, configuration,
    workload)."""
    subject = [{"kind": "ServiceAccount", "name": NAME, "namespace": o.namespace}]
    objects: list[dict[str, Any]] = []
    if o.create_namespace:
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(o.namespace)})
    objects += [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME, o.namespace)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta(NAME),
         "rules": cluster_role_rules(o.allow_pdb_violation)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": _meta(NAME),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
         "subjects": subject},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": _meta(f"{NAME}-lease", o.lease_namespace), "rules": lease_role_rules(o.lease_name)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": _meta(f"{NAME}-lease", o.lease_namespace),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{NAME}-lease"},
         "subjects": subject},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": _meta(f"{NAME}-node-leases", NODE_LEASE_NAMESPACE), "rules": node_lease_role_rules()},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": _meta(f"{NAME}-node-leases", NODE_LEASE_NAMESPACE),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{NAME}-node-leases"},
         "subjects": subject},
    ]
    if o.config is not None:
        objects.append(_config_map(CONFIG_MAP, o.namespace, o.config))
    if o.scheduler_config is not None:
        objects.append(_config_map(SCHEDULER_CONFIG_MAP, o.namespace, o.scheduler_config))
    objects.append(_cron_job(o))
    return objects


def build_manifest_list(o: ManifestOptions) -> dict[str, Any]:
    """The objects as one `v1` List, as `kubectl get -o json` prints several."""
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": build_manifests(o)}
