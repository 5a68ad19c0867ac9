"""Synthetic but realistic clusters for the benchmark, written as one JSON `List` file.

Owns: the cluster sizes (`SIZES`), the shape of a generated cluster (instance types, DaemonSets,
namespaces of Deployments / StatefulSets / Jobs / bare pods, PriorityClasses, PDBs with a status
the disruption controller would compute), placing pods so that nodes are ~90% requested (memory, the
scarcer resource here), 100 Pending pods (critical add-ons that need evictions, higher-priority
apps of which some need evictions and some would fit, GPU pods that fit nowhere), and writing the
file streaming, a thousand objects at a time, so that 150,000 pods never sit in memory as dicts
(generating `large` peaks at ~350 MiB). Storage as `kubectl get storageclasses,csinodes,pv,pvc`
adds it: a gp3 class (EBS CSI, WaitForFirstConsumer), a CSINode per node with the driver's attach
limit (`drivers: null` on control-plane nodes, as a server serves a kubelet's empty list), and
claims with their zonal PVs — one per StatefulSet pod (unbound for a Pending one), topped up to
`ClusterSize.volumes` with the claims scaled-down StatefulSets leave behind. Objects come from
`benchmarks.kube`, the same builders as the demo cluster: `kubectl get -o json` shapes with
managedFields (3-4 KB a pod), annotations (last-applied-configuration, Istio sidecar status), full
status, and on every bound pod its node's zone and region labels (PodTopologyLabelsAdmission,
v1.35+); ~9 KB a pod in all.

Deterministic for a given size and `GENERATOR_VERSION` (seeded; no clock). Bump the version when
the output changes so that cached files under `--dir` are regenerated.
"""

from __future__ import annotations

import heapq
import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from benchmarks.kube import (
    SYSTEM_PRIORITY_CLASSES,
    Ids,
    NodeRef,
    Workload,
    container,
    make_controller,
    make_namespace,
    make_node,
    make_pdb,
    make_pod,
    make_priority_class,
    make_service,
)

__all__ = ["GENERATOR_VERSION", "SIZES", "ClusterSize", "cluster_path", "ensure_cluster", "generate"]

GENERATOR_VERSION = 5
DAY = 86_400
REGION = "eu-west-1"
ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
Obj = dict[str, Any]


@dataclass(frozen=True)
class ClusterSize:
    name: str
    nodes: int
    pods: int
    pending: int = 100
    control_planes: int = 3

    @property
    def volumes(self) -> int:
        """At least this many claims (a StatefulSet pod's claims always exist): 10,000 on the largest
        cluster, one for every 15 pods."""
        return self.pods // 15


SIZES = {
    "small": ClusterSize("small", 100, 3_000, control_planes=1),
    "medium": ClusterSize("medium", 1_000, 30_000),
    "large": ClusterSize("large", 5_000, 150_000),
}

PRIORITY = {**SYSTEM_PRIORITY_CLASSES, "platform-critical": 1_000_000, "high": 10_000, "standard": 1_000,
            "batch-low": 100}

#: (name, vCPU, GiB, weight)
#: One vCPU : 4 GiB shape, so that both cpu and memory can end up ~90% requested everywhere.
_INSTANCE_TYPES = (("m6i.2xlarge", 8, 32, 5), ("m6i.4xlarge", 16, 64, 3), ("m5.2xlarge", 8, 32, 2),
                   ("m7i.4xlarge", 16, 64, 1))
#: Requests of an application container before scaling to the cluster: (milli-CPU, MiB, weight).
_PROFILES = ((50, 64, 6), (100, 128, 10), (100, 256, 10), (200, 256, 8), (250, 512, 10), (250, 1024, 6),
             (500, 512, 5), (500, 1024, 6), (500, 2048, 4), (1000, 2048, 3), (1000, 4096, 2), (2000, 4096, 1),
             (2000, 8192, 1))
_TEAMS = ("payments", "checkout", "search", "catalog", "identity", "ads", "media", "growth", "data", "ml",
          "billing", "support", "risk", "logistics", "messaging", "maps", "pricing", "reviews", "inventory",
          "partners")
_SERVICES = ("api", "worker", "web", "gateway", "consumer", "scheduler", "indexer", "cache", "grpc", "sync",
             "exporter", "reconciler", "ingest", "renderer", "notifier", "router", "auth", "feed", "store",
             "query")
_DAEMONSETS = (
    # namespace, name, image, cpu, memory, priority class, hostNetwork
    ("kube-system", "kube-proxy", "registry.k8s.io/kube-proxy:v1.34.0", "100m", "", "system-node-critical", True),
    ("kube-system", "cilium", "quay.io/cilium/cilium:v1.17.6", "100m", "128Mi", "system-node-critical", True),
    ("monitoring", "node-exporter", "quay.io/prometheus/node-exporter:v1.9.1", "110m", "200Mi", "platform-critical",
     True),
    ("logging", "fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:4.0.3", "100m", "128Mi", "platform-critical", False),
)
_SIDECAR_CPU, _SIDECAR_MEMORY = 100, 128  # istio-proxy's requests
#: Share of what the DaemonSets leave on workers that application pods request.
_FILL_CPU, _FILL_MEMORY = 0.85, 0.90
_CRITICAL_ADDONS = ("metrics-server", "cluster-autoscaler", "ebs-csi-controller", "aws-load-balancer-controller",
                    "external-dns", "coredns", "karpenter", "snapshot-controller", "cert-manager-webhook",
                    "kyverno-admission-controller")


def cluster_path(directory: Path, size: str) -> Path:
    return directory / f"{size}-v{GENERATOR_VERSION}.json"


def ensure_cluster(directory: Path, size: str, log: Callable[[str], None] = print) -> Path:
    """The cached file for `size`, generated first if missing."""
    path = cluster_path(directory, size)
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        log(f"generating {size} cluster into {path} ...")
        generate(SIZES[size], path)
    return path


# -- the plan of a cluster: nodes, workloads, which pod goes where -----------------------------------

@dataclass
class _NodePlan:
    ref: NodeRef
    zone: str
    instance_type: str
    cpu: int  # allocatable, milli-CPU
    memory: int  # allocatable, MiB
    capacity: dict[str, str]
    allocatable: dict[str, str]
    control_plane: bool
    free_cpu: int = 0
    free_memory: int = 0
    free_pods: int = 110


@dataclass
class _WorkloadPlan:
    workload: Workload
    #: (node index or -1 for Pending, ready) per pod
    pods: list[tuple[int, bool]] = field(default_factory=list)
    pdb: Obj | None = None
    replicas: int = 0
    cpu: int = 0
    memory: int = 0
    last_applied: bool = False
    pending_message: str = ""


def _alloc_memory_ki(gib: int) -> tuple[int, int]:
    capacity = gib * 1024 * 1024 - 620_000 - gib * 2_300  # what the kernel leaves for the kubelet to report
    return capacity, capacity - (1465 + 100) * 1024  # EKS: 255Mi + 11Mi x 110 pods reserved, 100Mi eviction


def _plan_nodes(ids: Ids, size: ClusterSize) -> list[_NodePlan]:
    rng = ids.rng
    weights = [t[3] for t in _INSTANCE_TYPES]
    out: list[_NodePlan] = []
    for i in range(size.nodes):
        zone = ZONES[i % len(ZONES)]
        cp = i < size.control_planes
        name, cpu, gib, _ = ("m6i.xlarge", 4, 16, 0) if cp else rng.choices(_INSTANCE_TYPES, weights)[0]
        third = 32 * (i % 3) + 16 + (i // 3) // 250
        ip = f"10.0.{third}.{(i // 3) % 250 + 4}"
        ref = NodeRef(f"ip-{ip.replace('.', '-')}.{REGION}.compute.internal", ip,
                      f"10.{64 + i // 256}.{i % 256}.0/24")
        cap_ki, alloc_ki = _alloc_memory_ki(gib)
        cpu_m = cpu * 1000 - (90 if cpu <= 8 else 130)
        capacity = {"cpu": str(cpu), "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                    "memory": f"{cap_ki}Ki", "pods": "110"}
        allocatable = {"cpu": f"{cpu_m}m", "ephemeral-storage": "95551679124", "hugepages-1Gi": "0",
                       "hugepages-2Mi": "0", "memory": f"{alloc_ki}Ki", "pods": "110"}
        out.append(_NodePlan(ref, zone, name, cpu_m, alloc_ki // 1024, capacity, allocatable, cp,
                             cpu_m, alloc_ki // 1024))
    return out


def _mi(value: int) -> str:
    return f"{value // 1024}Gi" if value % 1024 == 0 else f"{value}Mi"


def _cpu(value: int) -> str:
    return f"{value // 1000}" if value % 1000 == 0 else f"{value}m"


def _plan(size: ClusterSize, seed: int) -> tuple[Ids, list[_NodePlan], list[_WorkloadPlan], list[str]]:
    ids = Ids(seed)
    rng = ids.rng
    nodes = _plan_nodes(ids, size)
    workers = [i for i, n in enumerate(nodes) if not n.control_plane]
    plans: list[_WorkloadPlan] = []
    namespaces: list[str] = ["default", "kube-node-lease", "kube-public", "kube-system", "logging", "monitoring"]

    # DaemonSets and static pods: on every node, requested first.
    for ns, name, image, cpu, mem, pc, host in _DAEMONSETS:
        requests = {"cpu": cpu, **({"memory": mem} if mem else {})}
        w = Workload(ns, "DaemonSet", name, [container(name, image, requests=requests,
                                                       limits={"memory": mem} if mem else None,
                                                       probe_port=9100 if name == "node-exporter" else None)],
                     ids, labels={"app.kubernetes.io/name": name, "k8s-app": name}, priority_class=pc,
                     priority=PRIORITY[pc], host_network=host, tolerations=[{"operator": "Exists"}],
                     service_account=name, created_s=-400 * DAY)
        plan = _WorkloadPlan(w, cpu=int(cpu[:-1]), memory=int(mem[:-2]) if mem else 0)
        for i, n in enumerate(nodes):
            plan.pods.append((i, True))
            _take(n, plan.cpu, plan.memory)
        plans.append(plan)
    for name, cpu in (("etcd", 100), ("kube-apiserver", 250), ("kube-controller-manager", 200),
                      ("kube-scheduler", 100)):
        w = Workload("kube-system", "Static", name, [container(name, f"registry.k8s.io/{name}:v1.34.0",
                                                               requests={"cpu": _cpu(cpu)})],
                     ids, labels={"component": name, "tier": "control-plane"}, priority_class="system-node-critical",
                     priority=PRIORITY["system-node-critical"], host_network=True,
                     tolerations=[{"effect": "NoExecute", "operator": "Exists"}], created_s=-3 * DAY)
        plan = _WorkloadPlan(w, cpu=cpu)
        for i, n in enumerate(nodes[: size.control_planes]):
            plan.pods.append((i, True))
            _take(n, cpu, 0)
        plans.append(plan)

    # Application workloads, sized so that requests fill ~90% of what the DaemonSets leave.
    budget = size.pods - sum(len(p.pods) for p in plans) - size.pending
    specs: list[tuple[str, str, str, int, int, int, str, int]] = []  # ns, kind, name, replicas, cpu, mem, pc, grace
    profile_weights = [p[2] for p in _PROFILES]
    n_ns = 0
    while budget > 0:
        team = _TEAMS[n_ns % len(_TEAMS)]
        ns = f"{team}-{n_ns // len(_TEAMS):02d}" if n_ns >= len(_TEAMS) else team
        n_ns += 1
        namespaces.append(ns)
        for s in rng.sample(_SERVICES, rng.randint(3, 12)):
            if budget <= 0:
                break
            kind = rng.choices(("Deployment", "StatefulSet", "Job", "Bare"), (80, 12, 5, 3))[0]
            replicas = {"Deployment": rng.choice((1, 2, 2, 3, 3, 3, 4, 5, 6, 8, 10, 12, 16, 20, 30, 50)),
                        "StatefulSet": rng.choice((1, 3, 3, 5)), "Job": rng.randint(1, 4), "Bare": 1}[kind]
            replicas = min(replicas, budget)
            budget -= replicas
            cpu, mem, _ = rng.choices(_PROFILES, profile_weights)[0]
            pc = rng.choices(("platform-critical", "high", "standard", "batch-low"), (5, 15, 65, 15))[0]
            if kind == "Job":
                pc = "batch-low"
            grace = 30
            if pc == "batch-low":
                grace = rng.choice((0, 5, 10, 10, 30))
            elif rng.random() < 0.12:
                grace = rng.choice((0, 5, 10, 60, 120, 300, 600))
            specs.append((ns, kind, s, replicas, cpu, mem, pc, grace))
    istio = {ns for ns in namespaces[6:] if rng.random() < 0.3}
    sidecars = sum(r for ns, _, _, r, *_ in specs if ns in istio)
    free_cpu = sum(nodes[i].free_cpu for i in workers) - sidecars * _SIDECAR_CPU
    free_mem = sum(nodes[i].free_memory for i in workers) - sidecars * _SIDECAR_MEMORY
    want_cpu = sum(r * c for _, _, _, r, c, _, _, _ in specs)
    want_mem = sum(r * m for _, _, _, r, _, m, _, _ in specs)
    f_cpu, f_mem = _FILL_CPU * free_cpu / want_cpu, _FILL_MEMORY * free_mem / want_mem
    apps: list[_WorkloadPlan] = []
    for ns, kind, s, replicas, cpu, mem, pc, grace in specs:
        cpu = max(10, round(cpu * f_cpu / 10) * 10)
        mem = max(32, round(mem * f_mem / 16) * 16)
        apps.append(_app_workload(ids, ns, kind, s, replicas, cpu, mem, pc, grace, ns in istio))
    # Biggest first: the same trick as first-fit-decreasing, so few pods are left without a node.
    placer = _Placer(nodes, workers)
    for plan in sorted(apps, key=lambda p: -p.memory):
        used: set[int] = set()
        avoid = used if plan.workload.kind == "StatefulSet" else None  # required anti-affinity on hostname
        for _ in range(plan.replicas):
            i = placer.place(plan.cpu, plan.memory, avoid)
            used.add(i)
            plan.pods.append((i, i < 0 or rng.random() > 0.02))
    plans += apps
    plans += _pending_workloads(ids, size, nodes, workers)
    for plan in plans:
        for i, _ in plan.pods:
            if i < 0 and not plan.pending_message:
                plan.pending_message = _message(nodes, plan)
    return ids, nodes, plans, namespaces


def _take(n: _NodePlan, cpu: int, memory: int) -> None:
    n.free_cpu -= cpu
    n.free_memory -= memory
    n.free_pods -= 1


def _fits(n: _NodePlan, cpu: int, memory: int) -> bool:
    return n.free_cpu >= cpu and n.free_memory >= memory and n.free_pods > 0


class _Placer:
    """The scheduler's LeastAllocated spreading, on memory (the resource that runs out first here):
    each pod goes to the worker with the most free memory that fits it. A heap with lazy updates."""

    def __init__(self, nodes: list[_NodePlan], workers: list[int]) -> None:
        self.nodes = nodes
        self.workers = workers
        self.heap = [(-nodes[i].free_memory, i) for i in workers]
        heapq.heapify(self.heap)

    def place(self, cpu: int, memory: int, avoid: set[int] | None = None) -> int:
        """The chosen node's index (its free room updated), or -1 if no worker has room."""
        nodes, heap = self.nodes, self.heap
        skipped: list[tuple[int, int]] = []
        found = -1
        while heap and len(skipped) < 64:
            key, i = heapq.heappop(heap)
            if -key != nodes[i].free_memory:
                continue  # stale: the node was updated and pushed again
            if (avoid and i in avoid) or not _fits(nodes[i], cpu, memory):
                skipped.append((key, i))
                continue
            found = i
            break
        for entry in skipped:
            heapq.heappush(heap, entry)
        if found < 0 and len(skipped) >= 64:
            fitting = [i for i in self.workers if _fits(nodes[i], cpu, memory) and not (avoid and i in avoid)]
            found = max(fitting, key=lambda i: nodes[i].free_memory, default=-1)
        if found >= 0:
            _take(nodes[found], cpu, memory)
            heapq.heappush(heap, (-nodes[found].free_memory, found))
        return found


def _app_workload(ids: Ids, ns: str, kind: str, service: str, replicas: int, cpu: int, mem: int, pc: str,
                  grace: int, istio: bool) -> _WorkloadPlan:
    rng = ids.rng
    name = f"{ns.split('-')[0]}-{service}"
    version = f"{rng.randint(0, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}"
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": f"{name}-prod",
              "app.kubernetes.io/part-of": ns.split("-")[0], "app.kubernetes.io/version": version,
              "app.kubernetes.io/managed-by": "Helm", "team": ns.split("-")[0]}
    if kind == "Bare":
        labels = {"run": name}
    image = f"123456789012.dkr.ecr.{REGION}.amazonaws.com/{ns.split('-')[0]}/{service}:{version}"
    limits = {"memory": _mi(mem * 3 // 2 // 16 * 16)}
    if rng.random() < 0.2:
        limits = {"cpu": _cpu(cpu), "memory": _mi(mem)}  # Guaranteed
    env = {"SERVICE_NAME": name, "LOG_LEVEL": "info", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector:4317"}
    main = container(service, image, requests={"cpu": _cpu(cpu), "memory": _mi(mem)}, limits=limits,
                     ports=[("http", 8080), ("metrics", 9090)], probe_port="http", env=env,
                     args=[f"--config=/etc/{service}/config.yaml"], mounts=[("config", f"/etc/{service}")])
    containers = [main]
    init: list[Obj] = []
    annotations = {"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
                   "checksum/config": ids.hex(64)}
    if istio:
        containers.append(container("istio-proxy", "docker.io/istio/proxyv2:1.26.2",
                                    requests={"cpu": "100m", "memory": "128Mi"},
                                    limits={"cpu": "2", "memory": "1Gi"}, ports=[("http-envoy-prom", 15090)],
                                    probe_port=15021, probe_path="/healthz/ready",
                                    args=["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local"]))
        init.append(container("istio-init", "docker.io/istio/proxyv2:1.26.2",
                              requests={"cpu": "10m", "memory": "40Mi"}, limits={"cpu": "2", "memory": "1Gi"},
                              args=["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337"]))
        annotations.update({
            "istio.io/rev": "default",
            "kubectl.kubernetes.io/default-container": service,
            "kubectl.kubernetes.io/default-logs-container": service,
            "sidecar.istio.io/status": msgspec.json.encode({
                "initContainers": ["istio-init"], "containers": ["istio-proxy"],
                "volumes": ["workload-socket", "credential-socket", "workload-certs", "istio-envoy", "istio-data",
                            "istio-podinfo", "istio-token", "istiod-ca-cert"],
                "imagePullSecrets": None, "revision": "default"}).decode(),
        })
        labels = {**labels, "security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": name,
                  "service.istio.io/canonical-revision": version}
        cpu += _SIDECAR_CPU
        mem += _SIDECAR_MEMORY
    volumes: list[Obj] = [{"configMap": {"defaultMode": 420, "name": f"{name}-config"}, "name": "config"}]
    if rng.random() < 0.3:
        volumes.append({"emptyDir": {}, "name": "tmp"})
        main["volumeMounts"].append({"mountPath": "/tmp", "name": "tmp"})
    affinity = None
    spread: list[Obj] = []
    if kind == "Deployment" and rng.random() < 0.3:
        affinity = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"podAffinityTerm": {"labelSelector": {"matchLabels": {"app.kubernetes.io/name": name}},
                                 "topologyKey": "kubernetes.io/hostname"}, "weight": 100}]}}
    if kind == "StatefulSet":
        affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app.kubernetes.io/name": name}},
             "topologyKey": "kubernetes.io/hostname"}]}}
    elif kind == "Deployment" and rng.random() < 0.15:
        spread = [{"labelSelector": {"matchLabels": {"app.kubernetes.io/name": name}}, "maxSkew": 1,
                   "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}]
    w = Workload(ns, kind, name, containers, ids, labels=labels, annotations=annotations if kind != "Bare" else {},
                 init_containers=init, volumes=volumes, priority_class=pc, priority=PRIORITY[pc],
                 preemption_policy="Never" if pc == "batch-low" else "PreemptLowerPriority", grace=grace,
                 service_account=name if rng.random() < 0.6 else "default", affinity=affinity,
                 topology_spread_constraints=spread,
                 restart_policy="OnFailure" if kind == "Job" else "Always",
                 claim_templates=[("data", "/var/lib/data")] if kind == "StatefulSet" else [],
                 created_s=-rng.randint(2 * DAY, 300 * DAY) if kind != "Job" else -rng.randint(600, DAY),
                 security_context={"runAsNonRoot": True, "runAsUser": 10001, "fsGroup": 10001})
    plan = _WorkloadPlan(w, replicas=replicas, cpu=cpu, memory=mem,
                         last_applied=kind == "Bare" or rng.random() < 0.03)
    if (kind == "StatefulSet" and replicas > 1) or (kind == "Deployment" and replicas >= 2 and rng.random() < 0.5):
        choice = rng.random()
        if choice < 0.1:
            pdb: Obj = {"minAvailable": replicas}  # budget 0: nothing may be evicted
        elif choice < 0.6:
            pdb = {"maxUnavailable": 1}
        elif choice < 0.8:
            pdb = {"minAvailable": max(1, replicas - 1)}
        else:
            pdb = {"minAvailable": "50%"}
        plan.pdb = pdb
    return plan


def _pending_workloads(ids: Ids, size: ClusterSize, nodes: list[_NodePlan], workers: list[int]
                       ) -> list[_WorkloadPlan]:
    """Pending pods: critical add-ons needing evictions, higher-priority apps, GPU pods that fit nowhere."""
    rng = ids.rng
    max_free_mem = max(nodes[i].free_memory for i in workers)
    # Critical: a little more memory than any worker has free, so each needs evictions somewhere.
    crit_mem = (max_free_mem + 128) // 64 * 64
    crit_cpu = 500
    n_critical = max(3, size.pending // 10)
    n_gpu = max(2, size.pending // 10)
    n_apps = size.pending - n_critical - n_gpu
    out: list[_WorkloadPlan] = []
    for k in range(n_critical):
        name = _CRITICAL_ADDONS[k % len(_CRITICAL_ADDONS)] + ("" if k < len(_CRITICAL_ADDONS) else f"-{k}")
        w = Workload("kube-system", "Deployment", name,
                     [container(name.split("-")[0], f"registry.k8s.io/{name}/{name}:v0.8.0",
                                requests={"cpu": _cpu(crit_cpu), "memory": _mi(crit_mem)},
                                limits={"memory": _mi(crit_mem)}, probe_port=8080)],
                     ids, labels={"k8s-app": name, "app.kubernetes.io/name": name},
                     priority_class="system-cluster-critical", priority=PRIORITY["system-cluster-critical"],
                     tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}], service_account=name,
                     created_s=-rng.randint(60, 3600))
        out.append(_WorkloadPlan(w, [(-1, False)], cpu=crit_cpu, memory=crit_mem))
    per = 10
    for k in range(0, n_apps, per):
        n = min(per, n_apps - k)
        # Most need evictions; some would fit (the scheduler has not got to them yet).
        mem = int(max_free_mem * rng.choice((0.5, 1.1, 1.3, 1.6, 2.0))) // 64 * 64
        cpu = mem // 4 // 10 * 10
        pc = rng.choice(("high", "high", "platform-critical", "standard"))
        name = f"surge-{k // per:02d}-api"
        w = Workload("growth", "Deployment", name,
                     [container("api", f"123456789012.dkr.ecr.{REGION}.amazonaws.com/growth/api:3.{k}.0",
                                requests={"cpu": _cpu(cpu), "memory": _mi(mem)}, limits={"memory": _mi(mem)},
                                probe_port=8080)],
                     ids, labels={"app.kubernetes.io/name": name}, priority_class=pc, priority=PRIORITY[pc],
                     created_s=-rng.randint(60, 3600))
        out.append(_WorkloadPlan(w, [(-1, False)] * n, cpu=cpu, memory=mem))
    w = Workload("ml", "Job", "train-ranker", [container(
        "trainer", "nvcr.io/nvidia/pytorch:25.06-py3", requests={"cpu": "4", "memory": "24Gi", "nvidia.com/gpu": "1"},
        limits={"memory": "24Gi", "nvidia.com/gpu": "1"})], ids, labels={"app.kubernetes.io/name": "train-ranker"},
        priority_class="standard", priority=PRIORITY["standard"], restart_policy="Never",
        node_selector={"nvidia.com/gpu.present": "true"},
        tolerations=[{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}], created_s=-5400)
    out.append(_WorkloadPlan(w, [(-1, False)] * n_gpu, cpu=4000, memory=24 * 1024))
    return out


def _message(nodes: list[_NodePlan], plan: _WorkloadPlan) -> str:
    n = len(nodes)
    taint = sum(1 for x in nodes if x.control_plane)
    workers = [x for x in nodes if not x.control_plane]
    if plan.workload.node_selector:
        return (f"0/{n} nodes are available: {taint} node(s) had untolerated taint(s), {n - taint} node(s) didn't "
                f"match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/{n} nodes are "
                f"available: {n} Preemption is not helpful for scheduling.")
    counts = {"Insufficient cpu": sum(1 for x in workers if x.free_cpu < plan.cpu),
              "Insufficient memory": sum(1 for x in workers if x.free_memory < plan.memory),
              "Too many pods": sum(1 for x in workers if x.free_pods < 1),
              "node(s) had untolerated taint(s)": taint}
    return f"0/{n} nodes are available: " + ", ".join(sorted(f"{v} {k}" for k, v in counts.items() if v)) + "."


# -- writing ----------------------------------------------------------------------------------------

def _objects(size: ClusterSize, seed: int) -> Iterator[Obj]:
    ids, nodes, plans, namespaces = _plan(size, seed)
    refs = [n.ref for n in nodes]
    images = [("registry.k8s.io/kube-proxy:v1.34.0", 30_851_118), ("quay.io/cilium/cilium:v1.17.6", 223_411_760),
              ("quay.io/prometheus/node-exporter:v1.9.1", 12_651_230),
              ("cr.fluentbit.io/fluent/fluent-bit:4.0.3", 33_217_466), ("docker.io/istio/proxyv2:1.26.2", 92_112_443),
              ("registry.k8s.io/pause:3.10", 320_368)]
    for n in nodes:
        yield make_node(ids, n.ref, zone=n.zone, region=REGION, instance_type=n.instance_type,
                        capacity=n.capacity, allocatable=n.allocatable, age_s=-ids.rng.randint(3 * DAY, 200 * DAY),
                        control_plane=n.control_plane,
                        taints=[{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}]
                        if n.control_plane else None, images=images, managed_fields=True)
    pdbs: list[Obj] = []
    for plan in plans:
        w = plan.workload
        controller = make_controller(w, len(plan.pods))
        if controller is not None:
            yield controller
            yield make_service(w, {"app.kubernetes.io/name": w.labels["app.kubernetes.io/name"]}
                               if "app.kubernetes.io/name" in w.labels else dict(w.labels))
        for index, (i, ready) in enumerate(plan.pods):
            node = refs[i] if i >= 0 else None
            base = max(w.created_s, node.created_s) if node is not None else w.created_s
            age = base + ids.rng.randint(5, max(6, min(30 * DAY, -base - 120)))
            yield make_pod(w, node=node, index=index if w.kind == "StatefulSet" else None, age_s=min(age, -60),
                           ready=ready, restarts=ids.rng.choice((0, 0, 0, 0, 0, 1, 3)), managed_fields=True,
                           last_applied=plan.last_applied, pending_message=plan.pending_message,
                           name=ids.name(f"{w.name}-") if w.kind == "Bare" else None)
        if plan.pdb is not None:
            expected = len(plan.pods)
            healthy = sum(1 for i, r in plan.pods if i >= 0 and r)
            selector = {"app.kubernetes.io/name": w.labels["app.kubernetes.io/name"]}
            min_available = plan.pdb.get("minAvailable")
            if isinstance(min_available, str):
                min_available = math.ceil(expected * int(min_available[:-1]) / 100)
            pdb = make_pdb(ids, w.namespace, w.name, selector, expected=expected, healthy=healthy,
                           min_available=min_available, max_unavailable=plan.pdb.get("maxUnavailable"),
                           age_s=w.created_s, managed_fields=True)
            if isinstance(plan.pdb.get("minAvailable"), str):
                pdb["spec"]["minAvailable"] = plan.pdb["minAvailable"]
            pdbs.append(pdb)
    yield from pdbs
    yield from _storage(ids, size, nodes, plans)
    classes = [("system-cluster-critical", False, "PreemptLowerPriority", ""),
               ("system-node-critical", False, "PreemptLowerPriority", ""),
               ("platform-critical", False, "PreemptLowerPriority", "Cluster platform services."),
               ("high", False, "PreemptLowerPriority", "Customer-facing services."),
               ("standard", True, "PreemptLowerPriority", "Default for pods without a priorityClassName."),
               ("batch-low", False, "Never", "Batch work: evicted first, never preempts.")]
    for name, default, policy, description in classes:
        yield make_priority_class(ids, name, PRIORITY[name], global_default=default, preemption_policy=policy,
                                  description=description, age_s=-400 * DAY)
    for ns in sorted(set(namespaces)):
        yield make_namespace(ids, ns, age_s=-400 * DAY)


_EBS = "ebs.csi.aws.com"
_EBS_ATTACH_LIMIT = 25
_STORAGE_CLASS = "gp3"


def _storage(ids: Ids, size: ClusterSize, nodes: list[_NodePlan], plans: list[_WorkloadPlan]) -> Iterator[Obj]:
    """The class, a CSINode per node, and `size.volumes` claims with their PVs (see the module doc)."""
    yield {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
           "metadata": {"annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
                        "name": _STORAGE_CLASS, "resourceVersion": ids.rv(), "uid": ids.uid()},
           "parameters": {"type": "gp3"}, "provisioner": _EBS, "reclaimPolicy": "Delete",
           "volumeBindingMode": "WaitForFirstConsumer"}
    for n in nodes:
        # The kubelet's CSINode: the EBS driver registered on workers; none on the control plane,
        # served as the API server serves an empty driver list, `null`.
        drivers = None if n.control_plane else [
            {"allocatable": {"count": _EBS_ATTACH_LIMIT}, "name": _EBS, "nodeID": f"i-{ids.hex(17)}",
             "topologyKeys": ["topology.kubernetes.io/zone"]}]
        yield {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
               "metadata": {"name": n.ref.name, "ownerReferences": [
                   {"apiVersion": "v1", "kind": "Node", "name": n.ref.name, "uid": n.ref.uid}],
                   "resourceVersion": ids.rv(), "uid": ids.uid()},
               "spec": {"drivers": drivers}}
    # (namespace, claim name, node index or -1)
    claims: list[tuple[str, str, int]] = []
    for plan in plans:
        w = plan.workload
        for index, (i, _) in enumerate(plan.pods):
            claims.extend((w.namespace, f"{claim}-{w.name}-{index}", i) for claim, _ in w.claim_templates)
    statefulsets = [p for p in plans if p.workload.claim_templates]
    extra = 0
    while len(claims) < size.volumes and statefulsets:
        # Left behind by a scale-down: bound, its volume in the zone of some worker, no pod using it.
        w = statefulsets[extra % len(statefulsets)].workload
        claims.append((w.namespace, f"data-{w.name}-{len(w.name) + 100 + extra}", -2 - extra % len(nodes)))
        extra += 1
    pvs: list[Obj] = []
    for ns, name, i in claims:
        uid = ids.uid()
        spec: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}},
                     "storageClassName": _STORAGE_CLASS, "volumeMode": "Filesystem"}
        meta: Obj = {"name": name, "namespace": ns, "resourceVersion": ids.rv(), "uid": uid}
        if i == -1:  # a Pending StatefulSet pod's claim waits for the scheduler (WaitForFirstConsumer)
            yield {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
                   "status": {"phase": "Pending"}}
            continue
        zone = nodes[i if i >= 0 else -2 - i].zone
        pv = f"pvc-{uid}"
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
        yield {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
               "spec": {**spec, "volumeName": pv}, "status": {"phase": "Bound", "capacity": {"storage": "20Gi"}}}
        pvs.append({"apiVersion": "v1", "kind": "PersistentVolume",
                    "metadata": {"name": pv, "resourceVersion": ids.rv(), "uid": ids.uid()},
                    "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "20Gi"},
                             "claimRef": {"kind": "PersistentVolumeClaim", "namespace": ns, "name": name, "uid": uid},
                             "csi": {"driver": _EBS, "fsType": "ext4", "volumeHandle": f"vol-{ids.hex(17)}"},
                             "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                                 {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}},
                             "persistentVolumeReclaimPolicy": "Delete", "storageClassName": _STORAGE_CLASS,
                             "volumeMode": "Filesystem"},
                    "status": {"phase": "Bound"}})
    yield from pvs


def generate(size: ClusterSize, path: Path, seed: int | None = None, chunk: int = 1000) -> None:
    """Write the cluster to `path` as one compact JSON `List`, `chunk` objects at a time."""
    seed = _seed(size.name) if seed is None else seed
    encoder = msgspec.json.Encoder(order="sorted")
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    try:
        with tmp.open("wb") as f:
            f.write(b'{"apiVersion":"v1","items":[')
            batch: list[Obj] = []
            first = True
            for obj in _objects(size, seed):
                batch.append(obj)
                if len(batch) >= chunk:
                    f.write((b"" if first else b",") + encoder.encode(batch)[1:-1])
                    first, batch = False, []
            if batch:
                f.write((b"" if first else b",") + encoder.encode(batch)[1:-1])
            f.write(b'],"kind":"List","metadata":{"resourceVersion":""}}\n')
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _seed(name: str) -> int:
    return sum(ord(c) * 131**i for i, c in enumerate(name)) % 2**31
