"""Realistic Kubernetes API objects as plain dicts, shaped like `kubectl get -o json|yaml` output.

Owns: building nodes, pods (of Deployments, StatefulSets, DaemonSets, Jobs, static and bare pods),
PodDisruptionBudgets with a consistent status, PriorityClasses and Namespaces, with what a real
API server and its controllers fill in: uids, resourceVersions, owner references with
`controller: true`, `pod-template-hash` / `controller-revision-hash` labels, admission defaults
(spec.priority, the default not-ready/unreachable tolerations, the DaemonSet tolerations and
node affinity), a kube-api-access projected volume, status with conditions and container
statuses, and optionally `managedFields` and `last-applied-configuration` blobs.

Shared by the demo cluster (`scripts/make_demo.py`) and the benchmark generator (`generate.py`).
Deterministic: every random choice comes from the `Ids` passed in, times are offsets from a
fixed epoch; no clock. Must not import kresched's model: it writes what the API server writes,
and kresched's loaders are what read it.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = [
    "DAEMONSET_TOLERATIONS",
    "DEFAULT_TOLERATIONS",
    "SYSTEM_PRIORITY_CLASSES",
    "Ids",
    "NodeRef",
    "Workload",
    "container",
    "fields_v1",
    "make_namespace",
    "make_node",
    "make_pdb",
    "make_pod",
    "make_priority_class",
    "pdb_status",
    "pod_requests",
]

Obj = dict[str, Any]

#: k8s.io/apimachinery/pkg/util/rand: the alphabet of generated name suffixes and template hashes.
_ALNUM = "bcdfghjklmnpqrstvwxz2456789"
#: "Now" for a generated cluster: objects are created at negative offsets from it.
EPOCH = datetime(2025, 9, 1, 6, 0, 0, tzinfo=UTC)
DAY = 86_400

#: Added by the DefaultTolerationSeconds admission plugin to every pod that lacks them.
DEFAULT_TOLERATIONS: list[Obj] = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
]
#: Added by the DaemonSet controller to every DaemonSet pod (pkg/controller/daemon/util).
DAEMONSET_TOLERATIONS: list[Obj] = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/pid-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
]
_DS_HOST_NETWORK_TOLERATION: Obj = {"effect": "NoSchedule", "key": "node.kubernetes.io/network-unavailable",
                                    "operator": "Exists"}

SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
_SYSTEM_DESCRIPTIONS = {
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, but can be moved "
                               "to another node if necessary.",
}


class Ids:
    """The one source of randomness and time of a generated cluster (seeded; no clock)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._rv = 4_711_000
        self._names: set[str] = set()

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choices(_ALNUM, k=n))

    def name(self, prefix: str) -> str:
        """`prefix` + a random 5-character suffix not handed out before (as generateName retries)."""
        while True:
            name = prefix + self.suffix()
            if name not in self._names:
                self._names.add(name)
                return name

    def hex(self, n: int) -> str:
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def rv(self) -> str:
        self._rv += self.rng.randint(1, 4000)
        return str(self._rv)

    @staticmethod
    def ts(seconds: float) -> str:
        """RFC 3339 time `seconds` after the fixed epoch."""
        return (EPOCH + timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class NodeRef:
    """What a pod needs to know about its node: name, host IP and the pod CIDR to take an IP from."""

    name: str
    ip: str
    pod_cidr: str  # "10.244.3.0/24"
    uid: str = ""
    created_s: int = 0  # set by `make_node`
    #: The node's zone and region labels (set by `make_node`): what the API server copies onto each
    #: pod bound to it (PodTopologyLabelsAdmission, v1.35+).
    topology: dict[str, str] | None = None
    _next: int = 2

    def pod_ip(self) -> str:
        """The next address of the node's /24 (110 pods at most, as the kubelet's default allows)."""
        base = self.pod_cidr.split("/")[0].rsplit(".", 1)[0]
        n, self._next = self._next, self._next + 1
        return f"{base}.{n % 254 + 1}"


# -- containers and resources ------------------------------------------------------------------

def container(name: str, image: str, *, requests: dict[str, str] | None = None,
              limits: dict[str, str] | None = None, ports: list[tuple[str, int]] | None = None,
              args: list[str] | None = None, env: dict[str, str] | None = None, probe_port: int | str | None = None,
              probe_path: str = "/healthz", probe_scheme: str = "HTTP", mounts: list[tuple[str, str]] | None = None,
              host_ports: bool = False, security: Obj | None = None) -> Obj:
    """A container as the API returns it (defaults filled in). `mounts` are (volume, path)."""
    c: Obj = {
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": name,
        "resources": {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    if requests:
        c["resources"]["requests"] = dict(requests)
    if limits:
        c["resources"]["limits"] = dict(limits)
    if args:
        c["args"] = list(args)
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if ports:
        c["ports"] = [{"containerPort": p, "name": n, "protocol": "TCP", **({"hostPort": p} if host_ports else {})}
                      for n, p in ports]
    if probe_port is not None:
        probe = {"failureThreshold": 3, "httpGet": {"path": probe_path, "port": probe_port, "scheme": probe_scheme},
                 "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1}
        c["readinessProbe"] = probe
        c["livenessProbe"] = {**probe, "failureThreshold": 5, "initialDelaySeconds": 10}
    if security:
        c["securityContext"] = security
    if mounts:
        c["volumeMounts"] = [{"mountPath": path, "name": vol} for vol, path in mounts]
    return c


_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9}


def _quantity(name: str, value: str) -> int:
    """Milli-CPU for cpu, units otherwise; only the forms this module writes (`250m`, `2`, `512Mi`)."""
    if name == "cpu":
        return int(value[:-1]) if value.endswith("m") else int(float(value) * 1000)
    for suffix, mult in _UNITS.items():
        if value.endswith(suffix):
            return int(value[: -len(suffix)]) * mult
    return int(value)


def pod_requests(spec: Obj) -> dict[str, int]:
    """Effective requests (max(sum of containers, largest init container)); limits default requests."""
    def own(c: Obj) -> dict[str, int]:
        res = c.get("resources", {})
        merged = {**res.get("limits", {}), **res.get("requests", {})}
        return {k: _quantity(k, v) for k, v in merged.items()}

    total: dict[str, int] = {}
    for c in spec["containers"]:
        for k, v in own(c).items():
            total[k] = total.get(k, 0) + v
    for c in spec.get("initContainers", ()):
        for k, v in own(c).items():
            total[k] = max(total.get(k, 0), v)
    return total


def _qos(containers: list[Obj]) -> str:
    reqs_any = lims_any = False
    guaranteed = True
    for c in containers:
        res = c.get("resources", {})
        lims = res.get("limits", {})
        reqs = {**lims, **res.get("requests", {})}
        reqs_any = reqs_any or any(k in reqs for k in ("cpu", "memory"))
        lims_any = lims_any or any(k in lims for k in ("cpu", "memory"))
        for k in ("cpu", "memory"):
            if k not in lims or reqs.get(k) != lims[k]:
                guaranteed = False
    if not reqs_any and not lims_any:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


# -- managedFields ------------------------------------------------------------------------------

_LIST_KEYS = {"containers": "name", "initContainers": "name", "volumes": "name", "env": "name",
              "volumeMounts": "mountPath", "ports": "containerPort", "ownerReferences": "uid",
              "conditions": "type", "podIPs": "ip", "hostIPs": "ip", "tolerations": None,
              "containerStatuses": None, "initContainerStatuses": None}


def fields_v1(obj: Any) -> Any:
    """The `fieldsV1` set a field manager owns for `obj` (structured-merge-diff's format)."""
    if isinstance(obj, dict):
        out: Obj = {}
        for k, v in obj.items():
            if isinstance(v, list) and v and isinstance(v[0], dict) and _LIST_KEYS.get(k):
                key = _LIST_KEYS[k]
                sub: Obj = {}
                for item in v:
                    if key in item:
                        ident = json.dumps({key: item[key]}, separators=(",", ":"))
                        sub[f"k:{ident}"] = {".": {}, **fields_v1(item)}
                out[f"f:{k}"] = sub
            elif isinstance(v, dict) and v:
                out[f"f:{k}"] = {".": {}, **fields_v1(v)} if k in ("labels", "annotations", "resources") \
                    else fields_v1(v)
            else:
                out[f"f:{k}"] = {}
        return out
    return {}


# -- workloads and pods -------------------------------------------------------------------------

@dataclass
class Workload:
    """A controller's pod template, and what its pods share (owner, hash, labels, spec)."""

    namespace: str
    kind: str  # Deployment, StatefulSet, DaemonSet, Job, Static, Bare
    name: str
    containers: list[Obj]
    ids: Ids
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    init_containers: list[Obj] = field(default_factory=list)
    volumes: list[Obj] = field(default_factory=list)
    priority_class: str = ""
    priority: int = 0
    preemption_policy: str = "PreemptLowerPriority"
    grace: int = 30
    service_account: str = "default"
    tolerations: list[Obj] = field(default_factory=list)
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: Obj | None = None
    topology_spread_constraints: list[Obj] = field(default_factory=list)
    host_network: bool = False
    restart_policy: str = "Always"
    #: StatefulSet: a PVC per pod, `(claim template name, mount path)`.
    claim_templates: list[tuple[str, str]] = field(default_factory=list)
    security_context: Obj = field(default_factory=dict)
    created_s: int = 0  # when the controller (and its first pods) were created

    def __post_init__(self) -> None:
        self.uid = self.ids.uid()
        self.hash = self.ids.suffix(self.ids.rng.choice((8, 9, 10)))
        self.owner: Obj | None = None
        if self.kind == "Deployment":
            self.owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{self.name}-{self.hash}"}
            self.labels = {**self.labels, "pod-template-hash": self.hash}
        elif self.kind == "StatefulSet":
            self.owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": self.name}
            self.labels = {**self.labels, "controller-revision-hash": f"{self.name}-{self.hash}"}
        elif self.kind == "DaemonSet":
            self.owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": self.name}
            self.labels = {**self.labels, "controller-revision-hash": self.hash, "pod-template-generation": "1"}
        elif self.kind == "Job":
            self.owner = {"apiVersion": "batch/v1", "kind": "Job", "name": self.name}
            self.labels = {**self.labels, "batch.kubernetes.io/controller-uid": self.uid,
                           "batch.kubernetes.io/job-name": self.name, "controller-uid": self.uid,
                           "job-name": self.name}
        if self.owner is not None:
            self.owner.update(blockOwnerDeletion=True, controller=True, uid=self.ids.uid())
        self._spec_fields: Obj | None = None

    def pod_name(self, index: int | None, node: NodeRef | None) -> str:
        if self.kind == "StatefulSet":
            return f"{self.name}-{index}"
        if self.kind == "Static":
            return f"{self.name}-{node.name if node else 'unknown'}"
        if self.kind == "Deployment":
            return self.ids.name(f"{self.name}-{self.hash}-")
        if self.kind in ("DaemonSet", "Job"):
            return self.ids.name(f"{self.name}-")
        return self.name if index is None else f"{self.name}-{index}"


def make_pod(w: Workload, *, node: NodeRef | None, index: int | None = None, age_s: int | None = None,
             pending_message: str = "", ready: bool = True, restarts: int = 0, managed_fields: bool = False,
             last_applied: bool = False, name: str | None = None, phase: str | None = None,
             extra_annotations: dict[str, str] | None = None) -> Obj:
    """One pod of `w`, running on `node` (or Pending and unscheduled when `node` is None)."""
    ids = w.ids
    name = name or w.pod_name(index, node)
    created = w.created_s if age_s is None else age_s
    labels = dict(w.labels)
    if w.kind == "StatefulSet":
        labels["apps.kubernetes.io/pod-index"] = str(index)
        labels["statefulset.kubernetes.io/pod-name"] = name
    if node is not None and node.topology:
        labels.update(node.topology)  # given at binding, or at creation for a mirror pod (created bound)
    meta: Obj = {"creationTimestamp": ids.ts(created), "labels": labels, "name": name,
                 "namespace": w.namespace, "resourceVersion": ids.rv(), "uid": ids.uid()}
    annotations = dict(w.annotations)
    if extra_annotations:
        annotations.update(extra_annotations)
    if w.kind in ("Deployment", "DaemonSet", "Job"):
        meta["generateName"] = name[: name.rfind("-") + 1]
    owner = w.owner
    if w.kind == "Static":
        config_hash = ids.hex(32)
        annotations.update({"kubernetes.io/config.hash": config_hash, "kubernetes.io/config.mirror": config_hash,
                            "kubernetes.io/config.seen": ids.ts(created).replace("Z", ".104251383Z"),
                            "kubernetes.io/config.source": "file"})
        owner = {"apiVersion": "v1", "controller": True, "kind": "Node", "name": node.name if node else "",
                 "uid": node.uid if node else ""}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    token = f"kube-api-access-{ids.suffix()}"
    volumes = [*w.volumes]
    for claim, _ in w.claim_templates:
        volumes.insert(0, {"name": claim, "persistentVolumeClaim": {"claimName": f"{claim}-{name}"}})
    if w.kind != "Static":
        volumes.append({"name": token, "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
            {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                        "path": "namespace"}]}},
        ]}})
    containers = [_with_mounts(c, w, token) for c in w.containers]
    init_containers = [_with_mounts(c, w, token) for c in w.init_containers]
    tolerations = [*w.tolerations]
    if w.kind == "DaemonSet":
        tolerations += DAEMONSET_TOLERATIONS
        if w.host_network:
            tolerations.append(_DS_HOST_NETWORK_TOLERATION)
    elif w.kind != "Static":
        have = {(t.get("key"), t.get("effect")) for t in tolerations}
        tolerations += [t for t in DEFAULT_TOLERATIONS if (t["key"], t["effect"]) not in have]
    spec: Obj = {
        "containers": containers,
        "dnsPolicy": "ClusterFirstWithHostNet" if w.host_network and w.kind != "Static" else "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": w.preemption_policy,
        "priority": w.priority,
        "restartPolicy": w.restart_policy,
        "schedulerName": "default-scheduler",
        "securityContext": dict(w.security_context),
        "terminationGracePeriodSeconds": w.grace,
        "tolerations": tolerations,
    }
    if volumes:
        spec["volumes"] = volumes
    if w.priority_class:
        spec["priorityClassName"] = w.priority_class
    if w.kind != "Static":
        spec["serviceAccount"] = w.service_account
        spec["serviceAccountName"] = w.service_account
    if init_containers:
        spec["initContainers"] = init_containers
    if w.host_network:
        spec["hostNetwork"] = True
    if w.node_selector:
        spec["nodeSelector"] = dict(w.node_selector)
    if w.kind == "DaemonSet" and node is not None:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                    "values": [node.name]}]}]}}}
    elif w.affinity:
        spec["affinity"] = w.affinity
    if w.topology_spread_constraints:
        spec["topologySpreadConstraints"] = w.topology_spread_constraints
    if w.kind == "StatefulSet":
        spec["hostname"] = name
        spec["subdomain"] = w.name
    if node is not None:
        spec["nodeName"] = node.name
    status = _running_status(w, spec, node, created, ready, restarts) if node is not None \
        else _pending_status(spec, created, pending_message, phase)
    if phase and node is not None:
        status["phase"] = phase
    if last_applied:
        applied = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"annotations": {}, "labels": {k: v for k, v in labels.items()
                                                              if "hash" not in k and "generation" not in k},
                                "name": name, "namespace": w.namespace},
                   "spec": {"containers": [{k: v for k, v in c.items() if k in ("name", "image", "args", "env",
                                                                                 "ports", "resources")}
                                           for c in w.containers],
                            **({"priorityClassName": w.priority_class} if w.priority_class else {}),
                            "terminationGracePeriodSeconds": w.grace}}
        annotations["kubectl.kubernetes.io/last-applied-configuration"] = \
            json.dumps(applied, separators=(",", ":"), sort_keys=True) + "\n"
    if annotations:
        meta["annotations"] = annotations
    if managed_fields:
        meta["managedFields"] = _managed_fields(w, meta, spec, status, created, last_applied)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _with_mounts(c: Obj, w: Workload, token: str) -> Obj:
    out = dict(c)
    mounts = list(c.get("volumeMounts", ()))
    for claim, path in w.claim_templates if c is w.containers[0] else ():
        if not any(m["name"] == claim for m in mounts):
            mounts.insert(0, {"mountPath": path, "name": claim})
    if w.kind != "Static":
        mounts.append({"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": token,
                       "readOnly": True})
    if mounts:
        out["volumeMounts"] = mounts
    return out


def _full_image(image: str) -> str:
    """The image reference as the kubelet reports it (`nginx:1` → `docker.io/library/nginx:1`)."""
    first = image.split("/", 1)[0]
    if "/" not in image:
        return f"docker.io/library/{image}"
    if "." not in first and ":" not in first and first != "localhost":
        return f"docker.io/{image}"
    return image


def _container_status(c: Obj, ids: Ids, started: str, ready: bool, restarts: int, init: bool = False,
                      restarted: str = "") -> Obj:
    image = _full_image(c["image"])
    cid = f"containerd://{ids.hex(64)}"
    st: Obj = {"containerID": cid, "image": image, "imageID": f"{image.rsplit(':', 1)[0]}@sha256:{ids.hex(64)}",
               "lastState": {},
               "name": c["name"], "ready": ready if not init else True, "restartCount": restarts,
               "started": not init}
    if c.get("volumeMounts"):
        st["volumeMounts"] = [{"mountPath": m["mountPath"], "name": m["name"],
                               **({"readOnly": True, "recursiveReadOnly": "Disabled"} if m.get("readOnly") else {})}
                              for m in c["volumeMounts"]]
    if c.get("resources"):
        st["resources"] = c["resources"]
    if init:
        st["state"] = {"terminated": {"containerID": cid, "exitCode": 0, "finishedAt": started,
                                      "reason": "Completed", "startedAt": started}}
    else:
        st["state"] = {"running": {"startedAt": restarted or started}}
        if restarts:
            oom = "memory" in c.get("resources", {}).get("limits", {})
            st["lastState"] = {"terminated": {"containerID": f"containerd://{ids.hex(64)}",
                                              "exitCode": 137 if oom else 1, "finishedAt": restarted,
                                              "reason": "OOMKilled" if oom else "Error", "startedAt": started}}
    return st


def _running_status(w: Workload, spec: Obj, node: NodeRef, created: int, ready: bool, restarts: int) -> Obj:
    ids = w.ids
    t0 = ids.ts(created)
    t1 = ids.ts(created + 2)
    t_ready = ids.ts(created + 2 + ids.rng.randint(3, 40))
    # A restarted container has been running since its last restart, some time after the pod started.
    restarted = ids.ts(min(created + ids.rng.randint(3_600, 20 * DAY), -120)) if restarts else ""
    ready_s = "True" if ready else "False"
    pod_ip = node.ip if w.host_network else node.pod_ip()
    conds = [
        {"lastProbeTime": None, "lastTransitionTime": t1, "status": "True", "type": "PodReadyToStartContainers"},
        {"lastProbeTime": None, "lastTransitionTime": t1, "status": "True", "type": "Initialized"},
        {"lastProbeTime": None, "lastTransitionTime": t_ready, "status": ready_s, "type": "Ready"},
        {"lastProbeTime": None, "lastTransitionTime": t_ready, "status": ready_s, "type": "ContainersReady"},
        {"lastProbeTime": None, "lastTransitionTime": t0, "status": "True", "type": "PodScheduled"},
    ]
    if not ready:
        for c in conds[2:4]:
            c["reason"] = "ContainersNotReady"
            c["message"] = f"containers with unready status: [{spec['containers'][0]['name']}]"
    status: Obj = {
        "conditions": conds,
        "containerStatuses": [_container_status(c, ids, t1, ready, restarts, restarted=restarted)
                              for c in spec["containers"]],
        "hostIP": node.ip,
        "hostIPs": [{"ip": node.ip}],
        "phase": "Running",
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "qosClass": _qos(spec["containers"] + spec.get("initContainers", [])),
        "startTime": t0,
    }
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [_container_status(c, ids, t1, True, 0, init=True)
                                           for c in spec["initContainers"]]
    return status


def _pending_status(spec: Obj, created: int, message: str, phase: str | None) -> Obj:
    return {
        "conditions": [{"lastProbeTime": None, "lastTransitionTime": Ids.ts(created + 1),
                        "message": message, "reason": "Unschedulable", "status": "False",
                        "type": "PodScheduled"}],
        "phase": phase or "Pending",
        "qosClass": _qos(spec["containers"] + spec.get("initContainers", [])),
    }


def _managed_fields(w: Workload, meta: Obj, spec: Obj, status: Obj, created: int, last_applied: bool) -> list[Obj]:
    """What the creator (controller or kubectl) and the kubelet own, as a real pod shows them."""
    if w._spec_fields is None:
        spec_only = {k: v for k, v in spec.items() if k not in ("nodeName", "priority", "volumes", "affinity")}
        w._spec_fields = fields_v1(spec_only)
    meta_owned = {k: meta[k] for k in ("generateName", "labels", "ownerReferences") if k in meta}
    if "annotations" in meta:
        meta_owned["annotations"] = meta["annotations"]
    manager = {"Deployment": "kube-controller-manager", "StatefulSet": "kube-controller-manager",
               "DaemonSet": "kube-controller-manager", "Job": "kube-controller-manager",
               "Static": "kubelet"}.get(w.kind, "kubectl-client-side-apply" if last_applied else "kubectl-run")
    spec_fields = dict(w._spec_fields)
    if "volumes" in spec:
        spec_fields["f:volumes"] = fields_v1({"volumes": spec["volumes"]})["f:volumes"]
    if "affinity" in spec:
        spec_fields["f:affinity"] = fields_v1(spec["affinity"])
    out = [{"apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": fields_v1(meta_owned), "f:spec": spec_fields},
            "manager": manager, "operation": "Update", "time": Ids.ts(created)}]
    if spec.get("nodeName") is None:
        out.append({"apiVersion": "v1", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:status": {"f:conditions": {".": {}, 'k:{"type":"PodScheduled"}': {
                        ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:message": {},
                        "f:reason": {}, "f:status": {}, "f:type": {}}}}},
                    "manager": "kube-scheduler", "operation": "Update", "subresource": "status",
                    "time": Ids.ts(created + 1)})
        return out
    status_fields = {
        "f:conditions": {f'k:{{"type":"{c["type"]}"}}': {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {},
                                                         "f:status": {}, "f:type": {}}
                         for c in status["conditions"] if c["type"] != "PodScheduled"},
        "f:containerStatuses": {},
        "f:hostIP": {},
        "f:hostIPs": {},
        "f:phase": {},
        "f:podIP": {},
        "f:podIPs": {".": {}, f'k:{{"ip":"{status["podIP"]}"}}': {".": {}, "f:ip": {}}},
        "f:startTime": {},
    }
    if "initContainerStatuses" in status:
        status_fields["f:initContainerStatuses"] = {}
    out.append({"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": status_fields},
                "manager": "kubelet", "operation": "Update", "subresource": "status",
                "time": status["conditions"][2]["lastTransitionTime"]})
    return out


# -- nodes ----------------------------------------------------------------------------------------

def make_node(ids: Ids, ref: NodeRef, *, zone: str, region: str, instance_type: str, capacity: dict[str, str],
              allocatable: dict[str, str], age_s: int, control_plane: bool = False, taints: list[Obj] | None = None,
              labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
              extra_conditions: list[Obj] | None = None, kernel: str = "6.1.134-152.225.amzn2023.x86_64",
              os_image: str = "Amazon Linux 2023.7.20250512", kubelet: str = "v1.34.0",
              runtime: str = "containerd://1.7.27", images: list[tuple[str, int]] | None = None,
              unschedulable: bool = False, managed_fields: bool = False) -> Obj:
    """A node as `kubectl get node -o json` shows it; `ref.uid` is set here."""
    ref.uid = ids.uid()
    ref.created_s = age_s
    instance = f"i-0{ids.hex(16)}"
    node_labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": instance_type,
        "beta.kubernetes.io/os": "linux",
        "failure-domain.beta.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": ref.name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance_type,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
        **(labels or {}),
    }
    ref.topology = {"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": region}
    if control_plane:
        node_labels["node-role.kubernetes.io/control-plane"] = ""
        node_labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
    node_annotations = {
        "csi.volume.kubernetes.io/nodeid": json.dumps({"ebs.csi.aws.com": instance}, separators=(",", ":")),
        "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///var/run/containerd/containerd.sock",
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        **(annotations or {}),
    }
    created = ids.ts(age_s)
    heartbeat = ids.ts(-ids.rng.randint(3, 40))  # the snapshot is taken at the epoch

    def cond(type_: str, status: str, reason: str, message: str) -> Obj:
        return {"lastHeartbeatTime": heartbeat, "lastTransitionTime": created, "message": message,
                "reason": reason, "status": status, "type": type_}

    conditions = [
        *(extra_conditions or []),
        cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    spec: Obj = {"podCIDR": ref.pod_cidr, "podCIDRs": [ref.pod_cidr],
                 "providerID": f"aws:///{zone}/{instance}"}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    meta: Obj = {"annotations": node_annotations, "creationTimestamp": created, "labels": node_labels,
                 "name": ref.name, "resourceVersion": ids.rv(), "uid": ref.uid}
    node: Obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": spec,
        "status": {
            "addresses": [{"address": ref.ip, "type": "InternalIP"},
                          {"address": ref.name, "type": "Hostname"},
                          {"address": f"ip-{ref.ip.replace('.', '-')}.{region}.compute.internal",
                           "type": "InternalDNS"}],
            "allocatable": allocatable,
            "capacity": capacity,
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": [{"names": [f"{img.rsplit(':', 1)[0]}@sha256:{ids.hex(64)}", img], "sizeBytes": size}
                       for img, size in (images or [])],
            "nodeInfo": {"architecture": "amd64", "bootID": ids.uid(), "containerRuntimeVersion": runtime,
                         "kernelVersion": kernel, "kubeProxyVersion": "", "kubeletVersion": kubelet,
                         "machineID": ids.hex(32), "operatingSystem": "linux", "osImage": os_image,
                         "systemUUID": f"ec2{ids.hex(5)}-{ids.hex(4)}-{ids.hex(4)}-{ids.hex(4)}-{ids.hex(12)}"},
        },
    }
    if managed_fields:
        meta["managedFields"] = [
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": fields_v1(
                {"annotations": node_annotations, "labels": node_labels})}, "manager": "kubelet",
             "operation": "Update", "time": created},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": fields_v1(spec)},
             "manager": "kube-controller-manager", "operation": "Update", "time": created},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": fields_v1(
                {k: v for k, v in node["status"].items() if k != "images"}) | {"f:images": {}}},
             "manager": "kubelet", "operation": "Update", "subresource": "status", "time": heartbeat},
        ]
    return node


# -- PDBs, PriorityClasses, Namespaces ------------------------------------------------------------

def pdb_status(*, expected: int, healthy: int, min_available: int | None = None,
               max_unavailable: int | None = None) -> tuple[int, int]:
    """(desiredHealthy, disruptionsAllowed) as the disruption controller computes them (integers)."""
    desired = min_available if min_available is not None else max(0, expected - (max_unavailable or 0))
    return desired, max(0, healthy - desired)


def make_pdb(ids: Ids, namespace: str, name: str, selector: dict[str, str], *, expected: int, healthy: int,
             min_available: int | None = None, max_unavailable: int | None = None, age_s: int = 0,
             managed_fields: bool = False) -> Obj:
    desired, allowed = pdb_status(expected=expected, healthy=healthy, min_available=min_available,
                                  max_unavailable=max_unavailable)
    spec: Obj = {"selector": {"matchLabels": selector}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    else:
        spec["maxUnavailable"] = max_unavailable
    created = ids.ts(age_s)
    meta: Obj = {"creationTimestamp": created, "generation": 1, "name": name, "namespace": namespace,
                 "resourceVersion": ids.rv(), "uid": ids.uid()}
    if managed_fields:
        meta["managedFields"] = [
            {"apiVersion": "policy/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": fields_v1(spec)},
             "manager": "helm", "operation": "Update", "time": created},
            {"apiVersion": "policy/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {
                "f:conditions": {".": {}, 'k:{"type":"DisruptionAllowed"}': {
                    ".": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:observedGeneration": {},
                    "f:reason": {}, "f:status": {}, "f:type": {}}},
                "f:currentHealthy": {}, "f:desiredHealthy": {}, "f:disruptionsAllowed": {}, "f:expectedPods": {},
                "f:observedGeneration": {}}},
             "manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
             "time": created},
        ]
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta,
        "spec": spec,
        "status": {
            "conditions": [{"lastTransitionTime": created, "message": "", "observedGeneration": 1,
                            "reason": "SufficientPods" if allowed else "InsufficientPods",
                            "status": "True" if allowed else "False", "type": "DisruptionAllowed"}],
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "disruptionsAllowed": allowed,
            "expectedPods": expected,
            "observedGeneration": 1,
        },
    }


def make_priority_class(ids: Ids, name: str, value: int, *, description: str = "", global_default: bool = False,
                        preemption_policy: str = "PreemptLowerPriority", age_s: int = 0) -> Obj:
    obj: Obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "description": description or _SYSTEM_DESCRIPTIONS.get(name, ""),
        "kind": "PriorityClass",
        "metadata": {"creationTimestamp": ids.ts(age_s), "generation": 1, "name": name,
                     "resourceVersion": ids.rv(), "uid": ids.uid()},
        "preemptionPolicy": preemption_policy,
        "value": value,
    }
    if global_default:
        obj["globalDefault"] = True
    return obj


def make_namespace(ids: Ids, name: str, *, labels: dict[str, str] | None = None, age_s: int = 0) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"creationTimestamp": ids.ts(age_s),
                     "labels": {"kubernetes.io/metadata.name": name, **(labels or {})},
                     "name": name, "resourceVersion": ids.rv(), "uid": ids.uid()},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def make_controller(w: Workload, replicas: int) -> Obj | None:
    """The ReplicaSet or StatefulSet that owns `w`'s pods (selector: the pods' labels), as the API
    lists it; None for other kinds. Their selectors feed the scheduler's default spreading."""
    if w.owner is None or w.owner["kind"] not in ("ReplicaSet", "StatefulSet"):
        return None
    return {
        "apiVersion": "apps/v1",
        "kind": w.owner["kind"],
        "metadata": {"creationTimestamp": w.ids.ts(w.created_s), "generation": 1, "labels": dict(w.labels),
                     "name": w.owner["name"], "namespace": w.namespace, "resourceVersion": w.ids.rv(),
                     "uid": w.owner["uid"]},
        "spec": {"replicas": replicas, "selector": {"matchLabels": dict(w.labels)}},
        "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas},
    }


def make_service(w: Workload, selector: dict[str, str]) -> Obj:
    """A ClusterIP Service selecting `w`'s pods by `selector`."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"creationTimestamp": w.ids.ts(w.created_s), "name": w.name, "namespace": w.namespace,
                     "resourceVersion": w.ids.rv(), "uid": w.ids.uid()},
        "spec": {"clusterIP": "10.96.0.10", "ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}],
                 "selector": dict(selector), "type": "ClusterIP"},
        "status": {"loadBalancer": {}},
    }
