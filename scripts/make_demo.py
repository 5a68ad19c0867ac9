#!/usr/bin/env python3
"""Generate kresched's built-in demo cluster, `kresched/demo/cluster.yaml` (`--snapshot demo`).

    python scripts/make_demo.py            # rewrite the file
    python scripts/make_demo.py --check    # exit 1 if the file differs from what this script writes
    python scripts/make_demo.py --table    # print each node's requests, free room and tiers

The cluster reads like `kubectl get nodes,pods,pdb,priorityclasses,namespaces -A -o yaml` of a
self-managed (kubeadm + Cilium) cluster on AWS: 8 nodes in 3 zones, ~90 pods. Deterministic (a
fixed seed, times as offsets from a fixed epoch, no clock): the same script writes the same bytes.
Before writing, `check_scenarios` proves with plain arithmetic (requests against allocatable,
PDB budgets, grace periods) that the scenarios named in the file's header hold.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.kube import (
    SYSTEM_PRIORITY_CLASSES,
    Ids,
    NodeRef,
    Workload,
    container,
    make_namespace,
    make_node,
    make_pdb,
    make_pod,
    make_priority_class,
    pod_requests,
)

OUT = Path(__file__).resolve().parent.parent / "kresched" / "demo" / "cluster.yaml"
SEED = 20250901
REGION = "eu-west-1"
DAY = 86_400
MAX_GRACE = 10  # design.md: tier 1 takes only victims with a grace period of at most 10 s

Obj = dict[str, Any]

PRIORITY = {
    **SYSTEM_PRIORITY_CLASSES,
    "platform-critical": 1_000_000,
    "standard": 1_000,
    "batch-low": 100,
}

# -- nodes ----------------------------------------------------------------------------------------

_WORKER_CAPACITY = {"cpu": "4", "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                    "memory": "16073348Ki", "pods": "110"}
_WORKER_ALLOCATABLE = {"cpu": "3900m", "ephemeral-storage": "95551679124", "hugepages-1Gi": "0",
                       "hugepages-2Mi": "0", "memory": "14922372Ki", "pods": "110"}
_CP_CAPACITY = {"cpu": "2", "ephemeral-storage": "52416492Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                "memory": "7970264Ki", "pods": "110"}
_CP_ALLOCATABLE = {"cpu": "2", "ephemeral-storage": "48307982799", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                   "memory": "7867864Ki", "pods": "110"}
_NEW_KERNEL = "6.1.141-155.222.amzn2023.x86_64"
_OLD_KERNEL = "5.10.236-227.928.amzn2.x86_64"


@dataclass
class NodeSpec:
    name: str
    zone: str
    ip: str
    instance_type: str = "m6i.xlarge"
    age_days: int = 41
    control_plane: bool = False
    old_ami: bool = False


NODES = [
    NodeSpec("cp-1", "eu-west-1a", "10.0.1.10", "m6i.large", age_days=182, control_plane=True),
    NodeSpec("worker-a1", "eu-west-1a", "10.0.1.21"),
    NodeSpec("worker-a2", "eu-west-1a", "10.0.1.37"),
    NodeSpec("worker-b1", "eu-west-1b", "10.0.2.14"),
    NodeSpec("worker-b2", "eu-west-1b", "10.0.2.45"),
    NodeSpec("worker-b3", "eu-west-1b", "10.0.2.88", "m5.xlarge", age_days=176, old_ami=True),
    NodeSpec("worker-c1", "eu-west-1c", "10.0.3.19"),
    NodeSpec("worker-c2", "eu-west-1c", "10.0.3.52"),
]
WORKERS = [n.name for n in NODES if not n.control_plane]
ALL = [n.name for n in NODES]

#: The scenarios' protagonists (pod names get generated suffixes; these are the stable parts).
CRITICAL_NODE = "worker-c1"  # scenario 1: the only node where tier 1 works
DRAIN_NODE = "worker-b3"     # scenario 3
#: Scenario 4: a reservation a killed `kresched preempt` left behind (for a replica since replaced).
RESERVED_NODE = "worker-a2"
RESERVED_FOR = "kube-system/metrics-server-5p9lfwkgvh-q7w2d"


def _node(ids: Ids, spec: NodeSpec, ref: NodeRef) -> Obj:
    kernel = _OLD_KERNEL if spec.old_ami else _NEW_KERNEL
    labels = {"feature.node.kubernetes.io/kernel-version.full": kernel,
              "feature.node.kubernetes.io/kernel-version.major": kernel.split(".")[0],
              "node.kubernetes.io/ami-family": "AmazonLinux2" if spec.old_ami else "AmazonLinux2023"}
    extra_conditions: list[Obj] = []
    annotations: dict[str, str] = {}
    if spec.old_ami:
        # node-problem-detector's story: the container runtime keeps restarting on the old AMI.
        now = ids.ts(-30)
        extra_conditions = [
            {"lastHeartbeatTime": now, "lastTransitionTime": ids.ts(-2 * DAY - 3127),
             "message": "Found 7 matching logs, which meets the threshold of 5", "reason": "FrequentContainerdRestart",
             "status": "True", "type": "FrequentContainerdRestart"},
            {"lastHeartbeatTime": now, "lastTransitionTime": ids.ts(-spec.age_days * DAY),
             "message": "kernel has no deadlock", "reason": "KernelHasNoDeadlock", "status": "False",
             "type": "KernelDeadlock"},
        ]
        annotations["ops.acme.io/maintenance"] = "replace: last node on the Amazon Linux 2 AMI (kernel 5.10)"
    taints = [{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}] if spec.control_plane \
        else None
    if spec.name == RESERVED_NODE:
        # What `kresched preempt` puts on a node while it makes room, left there by a SIGKILL.
        annotations["kresched.io/reserved-for"] = RESERVED_FOR
        annotations["kresched.io/reserved-at"] = ids.ts(-3 * 3600 - 1_412)
        taints = [{"effect": "NoSchedule", "key": "CriticalAddonsOnly", "value": "kresched"}]
    return make_node(
        ids, ref, zone=spec.zone, region=REGION, instance_type=spec.instance_type,
        capacity=_CP_CAPACITY if spec.control_plane else _WORKER_CAPACITY,
        allocatable=_CP_ALLOCATABLE if spec.control_plane else _WORKER_ALLOCATABLE,
        age_s=-spec.age_days * DAY - ids.rng.randint(0, 20_000), control_plane=spec.control_plane, taints=taints,
        labels=labels, annotations=annotations, extra_conditions=extra_conditions, kernel=kernel,
        os_image="Amazon Linux 2" if spec.old_ami else "Amazon Linux 2023.7.20250623",
        kubelet="v1.33.4" if spec.old_ami else "v1.34.0",
        runtime="containerd://1.7.23" if spec.old_ami else "containerd://1.7.27",
        images=[("registry.k8s.io/kube-proxy:v1.34.0", 30_851_118), ("quay.io/cilium/cilium:v1.17.6", 223_411_760),
                ("quay.io/prometheus/node-exporter:v1.9.1", 12_651_230),
                ("cr.fluentbit.io/fluent/fluent-bit:4.0.3", 33_217_466), ("registry.k8s.io/pause:3.10", 320_368)],
    )


# -- workloads ------------------------------------------------------------------------------------

CRITICAL_ADDONS = {"key": "CriticalAddonsOnly", "operator": "Exists"}
CONTROL_PLANE_NOSCHEDULE = {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}
TOLERATE_ALL = {"operator": "Exists"}


def _app(name: str, part_of: str, component: str = "", version: str = "") -> dict[str, str]:
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": part_of}
    if component:
        labels["app.kubernetes.io/component"] = component
    if version:
        labels["app.kubernetes.io/version"] = version
    return labels


@dataclass
class Spec:
    """A workload of the demo and where its pods run (`None`: Pending)."""

    workload: Workload
    nodes: list[str | None]
    pdb: Obj | None = None  # {"name", "minAvailable" | "maxUnavailable"}
    pod_kwargs: dict[str, Any] = field(default_factory=dict)
    pending_message: str = ""


def _r(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


def workloads(ids: Ids) -> list[Spec]:
    def w(namespace: str, kind: str, name: str, containers: list[Obj], *, priority_class: str = "standard",
          age_days: float = 30, **kw: Any) -> Workload:
        return Workload(namespace, kind, name, containers, ids, priority_class=priority_class,
                        priority=PRIORITY[priority_class], created_s=int(-age_days * DAY) - ids.rng.randint(0, 9999),
                        **kw)

    specs: list[Spec] = []

    def add(workload: Workload, nodes: list[str | None], pdb: Obj | None = None, **pod_kwargs: Any) -> None:
        specs.append(Spec(workload, nodes, pdb, pod_kwargs))

    # kube-system: control plane (static pods), CNI, kube-proxy, DNS, metrics-server
    for name, cpu, mem, port, path, scheme in (
            ("etcd", "100m", "100Mi", 2381, "/livez", "HTTP"), ("kube-apiserver", "250m", "", 6443, "/livez", "HTTPS"),
            ("kube-controller-manager", "200m", "", 10257, "/healthz", "HTTPS"),
            ("kube-scheduler", "100m", "", 10259, "/livez", "HTTPS")):
        add(w("kube-system", "Static", name,
              [container(name, f"registry.k8s.io/{name}:{'3.6.4-0' if name == 'etcd' else 'v1.34.0'}",
                         requests={"cpu": cpu, **({"memory": mem} if mem else {})}, probe_port=port,
                         probe_path=path, probe_scheme=scheme,
                         mounts=[("k8s-certs", "/etc/kubernetes/pki")] if name != "etcd"
                         else [("etcd-data", "/var/lib/etcd"), ("etcd-certs", "/etc/kubernetes/pki/etcd")])],
              volumes=[{"hostPath": {"path": "/etc/kubernetes/pki", "type": "DirectoryOrCreate"}, "name": "k8s-certs"}]
              if name != "etcd" else
              [{"hostPath": {"path": "/etc/kubernetes/pki/etcd", "type": "DirectoryOrCreate"}, "name": "etcd-certs"},
               {"hostPath": {"path": "/var/lib/etcd", "type": "DirectoryOrCreate"}, "name": "etcd-data"}],
              priority_class="system-node-critical", age_days=2, host_network=True,
              labels={"component": name, "tier": "control-plane"},
              tolerations=[{"effect": "NoExecute", "operator": "Exists"}],
              security_context={"seccompProfile": {"type": "RuntimeDefault"}}), ["cp-1"])
    add(w("kube-system", "DaemonSet", "kube-proxy",
          [container("kube-proxy", "registry.k8s.io/kube-proxy:v1.34.0", requests={"cpu": "100m"},
                     args=["--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"],
                     mounts=[("kube-proxy", "/var/lib/kube-proxy"), ("xtables-lock", "/run/xtables.lock"),
                             ("lib-modules", "/lib/modules")], security={"privileged": True})],
          priority_class="system-node-critical", age_days=180, host_network=True, service_account="kube-proxy",
          labels={"k8s-app": "kube-proxy"}, tolerations=[CRITICAL_ADDONS, TOLERATE_ALL],
          volumes=[{"configMap": {"defaultMode": 420, "name": "kube-proxy"}, "name": "kube-proxy"},
                   {"hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}, "name": "xtables-lock"},
                   {"hostPath": {"path": "/lib/modules", "type": ""}, "name": "lib-modules"}]), ALL)
    add(w("kube-system", "DaemonSet", "cilium",
          [container("cilium-agent", "quay.io/cilium/cilium:v1.17.6", requests=_r("100m", "128Mi"),
                     args=["--config-dir=/tmp/cilium/config-map"], probe_port=9879, probe_path="/healthz",
                     mounts=[("cilium-run", "/var/run/cilium"), ("bpf-maps", "/sys/fs/bpf")],
                     security={"privileged": True})],
          init_containers=[container("config", "quay.io/cilium/cilium:v1.17.6", args=["cilium-dbg", "build-config"]),
                           container("mount-cgroup", "quay.io/cilium/cilium:v1.17.6",
                                     mounts=[("hostproc", "/hostproc")], security={"privileged": True})],
          priority_class="system-node-critical", age_days=180, host_network=True, service_account="cilium",
          labels={**_app("cilium-agent", "cilium"), "k8s-app": "cilium"}, tolerations=[TOLERATE_ALL],
          volumes=[{"hostPath": {"path": "/var/run/cilium", "type": "DirectoryOrCreate"}, "name": "cilium-run"},
                   {"hostPath": {"path": "/sys/fs/bpf", "type": "DirectoryOrCreate"}, "name": "bpf-maps"},
                   {"hostPath": {"path": "/proc", "type": "Directory"}, "name": "hostproc"}]), ALL)
    add(w("kube-system", "Deployment", "cilium-operator",
          [container("cilium-operator", "quay.io/cilium/operator-generic:v1.17.6", requests=_r("25m", "64Mi"),
                     probe_port=9234)],
          priority_class="system-cluster-critical", age_days=180, host_network=True,
          service_account="cilium-operator", labels={**_app("cilium-operator", "cilium"), "io.cilium/app": "operator"},
          tolerations=[TOLERATE_ALL], node_selector={"kubernetes.io/os": "linux"}), ["cp-1"])
    add(w("kube-system", "Deployment", "coredns",
          [container("coredns", "registry.k8s.io/coredns/coredns:v1.12.0", requests=_r("100m", "70Mi"),
                     limits={"memory": "170Mi"}, args=["-conf", "/etc/coredns/Corefile"],
                     ports=[("dns", 53), ("metrics", 9153)], probe_port=8181, probe_path="/ready",
                     mounts=[("config-volume", "/etc/coredns")])],
          priority_class="system-cluster-critical", age_days=180, service_account="coredns",
          labels={"k8s-app": "kube-dns"}, tolerations=[CRITICAL_ADDONS, CONTROL_PLANE_NOSCHEDULE],
          volumes=[{"configMap": {"defaultMode": 420, "items": [{"key": "Corefile", "path": "Corefile"}],
                                  "name": "coredns"}, "name": "config-volume"}]),
        ["worker-a1", "worker-b1"], {"name": "coredns", "maxUnavailable": 1})
    # Scenario 1: recreated by a rollout 47 minutes ago; since then no room anywhere.
    metrics = w("kube-system", "Deployment", "metrics-server",
                [container("metrics-server", "registry.k8s.io/metrics-server/metrics-server:v0.8.0",
                           requests=_r("500m", "1Gi"), ports=[("https", 10250)], probe_port="https",
                           probe_path="/readyz",
                           args=["--cert-dir=/tmp", "--secure-port=10250", "--kubelet-use-node-status-port",
                                 "--metric-resolution=15s"], mounts=[("tmp-dir", "/tmp")])],
                priority_class="system-cluster-critical", age_days=180, service_account="metrics-server",
                labels={"k8s-app": "metrics-server"}, tolerations=[CRITICAL_ADDONS],
                node_selector={"kubernetes.io/os": "linux"}, volumes=[{"emptyDir": {}, "name": "tmp-dir"}])
    add(metrics, [None], age_s=-47 * 60)

    # monitoring, logging, ingress, cert-manager: the platform
    add(w("monitoring", "DaemonSet", "node-exporter",
          [container("node-exporter", "quay.io/prometheus/node-exporter:v1.9.1", requests=_r("100m", "180Mi"),
                     limits={"memory": "180Mi"}, args=["--path.rootfs=/host/root"],
                     mounts=[("root", "/host/root")]),
           container("kube-rbac-proxy", "quay.io/brancz/kube-rbac-proxy:v0.19.1", requests=_r("10m", "20Mi"),
                     limits={"memory": "40Mi"}, ports=[("https", 9100)], host_ports=True)],
          priority_class="platform-critical", age_days=150, host_network=True, service_account="node-exporter",
          labels=_app("node-exporter", "kube-prometheus", "exporter", "1.9.1"), tolerations=[TOLERATE_ALL],
          volumes=[{"hostPath": {"path": "/", "type": ""}, "name": "root"}]), ALL)
    add(w("logging", "DaemonSet", "fluent-bit",
          [container("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:4.0.3", requests=_r("100m", "128Mi"),
                     limits={"memory": "256Mi"}, ports=[("http", 2020)], probe_port="http", probe_path="/",
                     mounts=[("varlog", "/var/log"), ("config", "/fluent-bit/etc/conf")])],
          priority_class="platform-critical", age_days=150, service_account="fluent-bit",
          labels=_app("fluent-bit", "logging"), tolerations=[TOLERATE_ALL],
          volumes=[{"hostPath": {"path": "/var/log", "type": ""}, "name": "varlog"},
                   {"configMap": {"defaultMode": 420, "name": "fluent-bit"}, "name": "config"}]), ALL)
    prom = w("monitoring", "StatefulSet", "prometheus-k8s",
             [container("prometheus", "quay.io/prometheus/prometheus:v3.5.0", requests=_r("500m", "3Gi"),
                        limits={"memory": "4Gi"}, ports=[("web", 9090)], probe_port="web", probe_path="/-/ready",
                        args=["--storage.tsdb.retention.time=15d", "--web.enable-lifecycle"]),
              container("config-reloader", "quay.io/prometheus-operator/prometheus-config-reloader:v0.84.0",
                        requests=_r("10m", "50Mi"), limits=_r("10m", "50Mi"))],
             priority_class="platform-critical", age_days=150, grace=600, service_account="prometheus-k8s",
             labels={**_app("prometheus", "kube-prometheus", "prometheus", "3.5.0"), "prometheus": "k8s"},
             claim_templates=[("prometheus-k8s-db", "/prometheus")],
             volumes=[{"name": "config", "secret": {"defaultMode": 420, "secretName": "prometheus-k8s"}}])
    add(prom, ["worker-a2", "worker-c2"], {"name": "prometheus-k8s", "minAvailable": 1})
    add(w("monitoring", "StatefulSet", "alertmanager-main",
          [container("alertmanager", "quay.io/prometheus/alertmanager:v0.28.1", requests=_r("100m", "256Mi"),
                     limits={"memory": "512Mi"}, ports=[("web", 9093)], probe_port="web", probe_path="/-/ready"),
           container("config-reloader", "quay.io/prometheus-operator/prometheus-config-reloader:v0.84.0",
                     requests=_r("10m", "50Mi"), limits=_r("10m", "50Mi"))],
          priority_class="platform-critical", age_days=150, grace=120, service_account="alertmanager-main",
          labels={**_app("alertmanager", "kube-prometheus", "alert-router", "0.28.1"), "alertmanager": "main"},
          volumes=[{"emptyDir": {}, "name": "alertmanager-main-db"}]),
        ["worker-b1", "worker-c1"], {"name": "alertmanager-main", "maxUnavailable": 1})
    add(w("monitoring", "Deployment", "kube-state-metrics",
          [container("kube-state-metrics", "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.16.0",
                     requests=_r("100m", "256Mi"), limits={"memory": "512Mi"}, ports=[("http-metrics", 8080)],
                     probe_port=8081, probe_path="/readyz")],
          priority_class="platform-critical", age_days=150, service_account="kube-state-metrics",
          labels=_app("kube-state-metrics", "kube-prometheus", "exporter", "2.16.0")), ["worker-b1"])
    add(w("monitoring", "Deployment", "prometheus-operator",
          [container("prometheus-operator", "quay.io/prometheus-operator/prometheus-operator:v0.84.0",
                     requests=_r("100m", "128Mi"), limits={"memory": "256Mi"}, ports=[("http", 8080)])],
          priority_class="platform-critical", age_days=150, service_account="prometheus-operator",
          labels=_app("prometheus-operator", "kube-prometheus", "controller", "0.84.0")), ["worker-a2"])
    add(w("monitoring", "Deployment", "grafana",
          [container("grafana", "grafana/grafana:12.0.2", requests=_r("250m", "768Mi"), limits={"memory": "1Gi"},
                     ports=[("http", 3000)], probe_port="http", probe_path="/api/health",
                     mounts=[("grafana-storage", "/var/lib/grafana")])],
          age_days=150, service_account="grafana", labels=_app("grafana", "kube-prometheus", "grafana", "12.0.2"),
          volumes=[{"emptyDir": {}, "name": "grafana-storage"}]), ["worker-b2"])
    add(w("logging", "StatefulSet", "loki",
          [container("loki", "grafana/loki:3.5.3", requests=_r("500m", "2Gi"), limits={"memory": "3Gi"},
                     ports=[("http-metrics", 3100), ("grpc", 9095)], probe_port="http-metrics", probe_path="/ready",
                     args=["-config.file=/etc/loki/config/config.yaml", "-target=all"])],
          priority_class="platform-critical", age_days=150, service_account="loki",
          labels=_app("loki", "logging", "single-binary", "3.5.3"), claim_templates=[("storage", "/var/loki")]),
        ["worker-b1"])
    add(w("ingress-nginx", "Deployment", "ingress-nginx-controller",
          [container("controller", "registry.k8s.io/ingress-nginx/controller:v1.13.0", requests=_r("250m", "512Mi"),
                     ports=[("http", 80), ("https", 443), ("webhook", 8443)], probe_port=10254,
                     args=["/nginx-ingress-controller", "--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller",
                           "--election-id=ingress-nginx-leader", "--controller-class=k8s.io/ingress-nginx"])],
          priority_class="platform-critical", age_days=120, grace=300, service_account="ingress-nginx",
          labels=_app("ingress-nginx", "ingress-nginx", "controller", "1.13.0")),
        ["worker-a2", "worker-b1"], {"name": "ingress-nginx-controller", "minAvailable": 1})
    for name, node in (("cert-manager", "worker-b1"), ("cert-manager-cainjector", "worker-b2"),
                       ("cert-manager-webhook", "worker-a1")):
        component = {"cert-manager": "controller"}.get(name, name.removeprefix("cert-manager-"))
        add(w("cert-manager", "Deployment", name,
              [container(name.replace("cert-manager", "cert-manager-controller") if name == "cert-manager" else name,
                         f"quay.io/jetstack/{name if name != 'cert-manager' else 'cert-manager-controller'}:v1.18.2",
                         requests=_r("10m", "64Mi"), ports=[("http-metrics", 9402)])],
              age_days=120, service_account=name, labels=_app(component, "cert-manager", component, "v1.18.2"),
              security_context={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}), [node])

    # shop: the product
    def shop(name: str, image_version: str, requests: dict[str, str], limits: dict[str, str] | None,
             nodes: list[str | None], pdb: Obj | None = None, **kw: Any) -> None:
        add(w("shop", "Deployment", name,
              [container(name, f"ghcr.io/acme/shop-{name}:{image_version}", requests=requests, limits=limits,
                         ports=[("http", 8080)], probe_port="http", env={"OTEL_SERVICE_NAME": name},
                         mounts=kw.pop("mounts", None))],
              age_days=kw.pop("age_days", 9), service_account="shop",
              labels=_app(name, "shop", "backend" if name != "frontend" else "frontend", image_version),
              annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "8080"}, **kw), nodes, pdb)

    shop("frontend", "2.14.1", _r("200m", "384Mi"), {"memory": "512Mi"},
         ["worker-a1", "worker-a2", "worker-b3", "worker-c2"], {"name": "frontend", "maxUnavailable": 1})
    shop("cart", "1.9.4", _r("250m", "512Mi"), {"memory": "768Mi"}, ["worker-b2", "worker-b3"],
         {"name": "cart", "minAvailable": 1})
    shop("checkout", "3.2.0", _r("300m", "768Mi"), {"memory": "1Gi"}, ["worker-a2", "worker-c1"],
         {"name": "checkout", "maxUnavailable": 1})
    shop("catalog", "5.0.3", _r("250m", "1Gi"), {"memory": "1536Mi"}, ["worker-b1", "worker-c1", "worker-c2"])
    shop("recommendations", "0.31.0", _r("500m", "4608Mi"), {"memory": "6Gi"}, ["worker-a1", "worker-b2"],
         {"name": "recommendations", "maxUnavailable": 1})
    shop("payments", "2.2.8", _r("200m", "1Gi"), {"memory": "1536Mi"}, ["worker-a1", "worker-b1", "worker-c2"],
         {"name": "payments", "maxUnavailable": 1})
    shop("notifications", "1.12.0", _r("100m", "640Mi"), {"memory": "1Gi"}, ["worker-a2", "worker-c2"])
    shop("orders", "4.7.0", _r("300m", "1536Mi"), {"memory": "2Gi"}, ["worker-a2", "worker-b1", "worker-b3"],
         {"name": "orders", "maxUnavailable": 1})
    shop("search-indexer", "1.4.2", _r("1", "4Gi"), {"memory": "6Gi"}, [DRAIN_NODE],
         mounts=[("index-cache", "/var/cache/index")],
         volumes=[{"emptyDir": {"sizeLimit": "10Gi"}, "name": "index-cache"}])

    # data: stateful services behind PodDisruptionBudgets
    add(w("data", "StatefulSet", "postgres",
          [container("postgres", "postgres:16.9", requests=_r("1", "6Gi"), limits=_r("2", "6Gi"),
                     ports=[("tcp-postgresql", 5432)], env={"PGDATA": "/var/lib/postgresql/data/pgdata"})],
          age_days=170, service_account="postgres", labels=_app("postgres", "shop", "primary", "16.9"),
          claim_templates=[("data", "/var/lib/postgresql/data")],
          security_context={"fsGroup": 999, "runAsUser": 999}),
        ["worker-a1", DRAIN_NODE], {"name": "postgres", "minAvailable": 1})
    add(w("data", "StatefulSet", "zookeeper",
          [container("zookeeper", "bitnami/zookeeper:3.9.3", requests=_r("250m", "1Gi"), limits={"memory": "1Gi"},
                     ports=[("client", 2181), ("follower", 2888), ("election", 3888)])],
          age_days=170, service_account="zookeeper", labels=_app("zookeeper", "kafka", "zookeeper", "3.9.3"),
          claim_templates=[("data", "/bitnami/zookeeper")], security_context={"fsGroup": 1001}),
        ["worker-b2", DRAIN_NODE, "worker-c2"], {"name": "zookeeper", "minAvailable": 3})
    add(w("data", "StatefulSet", "opensearch",
          [container("opensearch", "opensearchproject/opensearch:2.19.2", requests=_r("1", "4Gi"),
                     limits={"memory": "4Gi"}, ports=[("http", 9200), ("transport", 9300)],
                     env={"OPENSEARCH_JAVA_OPTS": "-Xms2g -Xmx2g"})],
          init_containers=[container("fsgroup-volume", "busybox:1.37", args=["chown", "-R", "1000:1000",
                                                                             "/usr/share/opensearch/data"])],
          age_days=160, grace=120, service_account="opensearch", labels=_app("opensearch", "search", "master"),
          claim_templates=[("opensearch", "/usr/share/opensearch/data")], security_context={"fsGroup": 1000}),
        ["worker-a2", "worker-b1", CRITICAL_NODE], {"name": "opensearch", "maxUnavailable": 1})
    add(w("data", "StatefulSet", "redis",
          [container("redis", "redis:7.4.5", requests=_r("250m", "2Gi"), limits={"memory": "2Gi"},
                     ports=[("redis", 6379)], args=["redis-server", "/etc/redis/redis.conf"])],
          age_days=160, service_account="redis", labels=_app("redis", "shop", "cache", "7.4.5"),
          claim_templates=[("data", "/data")]),
        ["worker-a2", "worker-b2", "worker-c2"], {"name": "redis", "minAvailable": 2})
    add(w("data", "StatefulSet", "kafka",
          [container("kafka", "bitnami/kafka:3.9.0", requests=_r("500m", "3Gi"), limits={"memory": "4Gi"},
                     ports=[("client", 9092), ("internal", 9094)])],
          age_days=170, grace=60, service_account="kafka", labels=_app("kafka", "kafka", "broker", "3.9.0"),
          claim_templates=[("data", "/bitnami/kafka")], security_context={"fsGroup": 1001}),
        ["worker-b1", "worker-c1", "worker-c2"], {"name": "kafka", "maxUnavailable": 1})

    add(w("data", "StatefulSet", "clickhouse",
          [container("clickhouse", "clickhouse/clickhouse-server:25.6", requests=_r("1", "4Gi"),
                     limits={"memory": "6Gi"}, ports=[("http", 8123), ("tcp", 9000)])],
          age_days=90, service_account="clickhouse", labels=_app("clickhouse", "analytics", "server", "25.6"),
          claim_templates=[("data", "/var/lib/clickhouse")]), ["worker-b2"])
    add(w("analytics", "Deployment", "metabase",
          [container("metabase", "metabase/metabase:v0.55.9", requests=_r("500m", "3Gi"), limits={"memory": "4Gi"},
                     ports=[("http", 3000)], probe_port="http", probe_path="/api/health",
                     env={"JAVA_OPTS": "-Xmx2g", "MB_DB_TYPE": "postgres"})],
          age_days=90, service_account="metabase", labels=_app("metabase", "analytics", "bi", "0.55.9")),
        [CRITICAL_NODE])

    add(w("ml", "Deployment", "feature-server",
          [container("feature-server", "ghcr.io/acme/feature-server:0.9.3", requests=_r("750m", "1536Mi"),
                     limits={"memory": "2Gi"}, ports=[("grpc", 6566)], env={"FEAST_USAGE": "False"})],
          age_days=20, service_account="feature-server", labels=_app("feature-server", "recommendations")),
        ["worker-c2"])

    # batch: low priority, short grace periods (queue workers finish or requeue within 10 s)
    add(w("batch", "Deployment", "image-resizer",
          [container("worker", "ghcr.io/acme/image-resizer:1.8.0", requests=_r("250m", "512Mi"),
                     limits={"memory": "1Gi"}, env={"QUEUE": "resize-jobs", "DRAIN_TIMEOUT": "8s"})],
          priority_class="batch-low", preemption_policy="Never", age_days=3, grace=MAX_GRACE,
          service_account="image-resizer", labels=_app("image-resizer", "media", "worker", "1.8.0")),
        [CRITICAL_NODE, CRITICAL_NODE, "worker-a2"])
    nightly = w("batch", "Job", "report-nightly-29277600",
                [container("report", "ghcr.io/acme/reports:2025.8.3", requests=_r("500m", "1Gi"),
                           args=["--since=24h", "--out=s3://acme-reports/nightly/"])],
                priority_class="batch-low", preemption_policy="Never", age_days=0.2, restart_policy="Never",
                service_account="reports", labels=_app("report-nightly", "reports"))
    add(nightly, ["worker-a1"])

    # bare pods: an operator's one-offs
    add(w("ops", "Bare", "pg-dump-manual",
          [container("pg-dump", "postgres:16.9", requests=_r("200m", "256Mi"),
                     args=["pg_dump", "-h", "postgres-0.postgres.data", "-f", "/backup/shop.sql"],
                     mounts=[("backup", "/backup")])],
          age_days=0.5, restart_policy="Never", labels={"app": "pg-dump-manual"},
          volumes=[{"emptyDir": {}, "name": "backup"}]), ["worker-a1"], last_applied=True)
    add(w("default", "Bare", "debug-shell",
          [container("debug-shell", "nicolaka/netshoot:v0.13", args=["sleep", "infinity"])],
          age_days=1.2, labels={"run": "debug-shell"}), [DRAIN_NODE])

    # Scenario 2: wants a GPU node; the cluster has none.
    train = w("ml", "Job", "train-ranker-v7",
              [container("trainer", "nvcr.io/nvidia/pytorch:25.06-py3",
                         requests={"cpu": "4", "memory": "24Gi", "nvidia.com/gpu": "1"},
                         limits={"memory": "24Gi", "nvidia.com/gpu": "1"},
                         args=["python", "train.py", "--epochs=30"])],
              age_days=0.05, restart_policy="Never", service_account="trainer",
              labels=_app("train-ranker", "recommendations", "training"),
              node_selector={"nvidia.com/gpu.present": "true"},
              tolerations=[{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}])
    add(train, [None], age_s=-71 * 60)
    return specs


# -- assembling the List ---------------------------------------------------------------------------

@dataclass
class Demo:
    items: list[Obj]
    nodes: list[Obj]
    pods: list[Obj]
    pdbs: list[Obj]
    critical_pod: str = ""
    infeasible_pod: str = ""


def build() -> Demo:
    ids = Ids(SEED)
    refs = {n.name: NodeRef(n.name, n.ip, f"10.244.{i}.0/24") for i, n in enumerate(NODES)}
    nodes = [_node(ids, n, refs[n.name]) for n in NODES]
    specs = workloads(ids)
    pods: list[Obj] = []
    pending: list[tuple[Spec, Obj]] = []
    pdbs: list[Obj] = []
    for spec in specs:
        own: list[Obj] = []
        for i, node in enumerate(spec.nodes):
            index = i if spec.workload.kind in ("StatefulSet",) else None
            kwargs = dict(spec.pod_kwargs)
            if node is not None:  # pods were (re)created when their node joined, if it is newer
                base = max(spec.workload.created_s, refs[node].created_s)
                kwargs.setdefault("age_s", base + ids.rng.randint(5, max(6, min(3 * DAY // 2, -base - 600))))
            if spec.workload.kind == "Bare":
                kwargs.setdefault("name", spec.workload.name)
            pod = make_pod(spec.workload, node=refs[node] if node else None, index=index,
                           restarts=ids.rng.choice((0, 0, 0, 0, 1, 2)), **kwargs)
            own.append(pod)
            if node is None:
                pending.append((spec, pod))
        pods += own
        if spec.pdb:
            pdbs.append(_pdb(ids, spec, own))
    # Added with their own randomness, so that every name and time above stays as it was.
    storage_ids = Ids(SEED + 11)
    nats = _nats(storage_ids)
    for i, node in enumerate(NATS_NODES):
        base = max(nats.created_s, refs[node].created_s)
        pods.append(make_pod(nats, node=refs[node], index=i, age_s=base + storage_ids.rng.randint(600, DAY)))
    pdbs.append(_pdb(storage_ids, Spec(nats, list(NATS_NODES), {"name": "nats", "minAvailable": 2}),
                     [p for p in pods if p["metadata"]["name"].startswith("nats-")]))
    storage = storage_objects(storage_ids, pods, {n["metadata"]["name"]: n for n in nodes})
    for _, pod in pending:
        pod["status"]["conditions"][0]["message"] = scheduler_message(pod, nodes, pods)
    demo = Demo([], nodes, pods, pdbs)
    demo.critical_pod = _key(next(p for s, p in pending if s.workload.name == "metrics-server"))
    demo.infeasible_pod = _key(next(p for s, p in pending if s.workload.name == "train-ranker-v7"))
    classes = [
        make_priority_class(ids, "system-cluster-critical", PRIORITY["system-cluster-critical"], age_s=-182 * DAY),
        make_priority_class(ids, "system-node-critical", PRIORITY["system-node-critical"], age_s=-182 * DAY),
        make_priority_class(ids, "platform-critical", PRIORITY["platform-critical"], age_s=-176 * DAY,
                            description="Cluster platform: ingress, monitoring, logging. Preempts applications."),
        make_priority_class(ids, "standard", PRIORITY["standard"], global_default=True, age_s=-176 * DAY,
                            description="Default for every pod without a priorityClassName."),
        make_priority_class(ids, "batch-low", PRIORITY["batch-low"], preemption_policy="Never", age_s=-176 * DAY,
                            description="Batch and queue workers: first to go, never preempt others."),
    ]
    namespaces = [make_namespace(ids, ns, age_s=-182 * DAY if ns.startswith(("kube", "default")) else -176 * DAY,
                                 labels={"pod-security.kubernetes.io/enforce": "baseline"}
                                 if ns in ("shop", "batch", "ml") else None)
                  for ns in ("analytics", "batch", "cert-manager", "data", "default", "ingress-nginx",
                             "kube-node-lease", "kube-public", "kube-system", "logging", "ml", "monitoring", "ops",
                             "shop")]
    # kubectl lists kinds in the order asked for, each sorted by namespace and name.
    pods.sort(key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))
    pdbs.sort(key=lambda b: (b["metadata"]["namespace"], b["metadata"]["name"]))
    demo.items = [*nodes, *pods, *pdbs, *sorted(classes, key=lambda c: c["metadata"]["name"]), *namespaces,
                  *storage]
    scale_up(ids, demo, specs, refs)
    return demo


# -- storage: EBS volumes of the StatefulSets, the class, the nodes' CSI attach limits ----------------

STORAGE_CLASS = "gp3"
EBS_DRIVER = "ebs.csi.aws.com"
#: Nitro instances share 28 attachment slots between ENIs, NVMe instance store and EBS volumes;
#: the EBS CSI node plugin reports what is left for volumes.
EBS_ATTACH_LIMIT = 25
#: scenario 3's stranded pod: NATS JetStream, one replica per node (required anti-affinity), each
#: with a gp3 volume in its node's zone. nats-1 runs on the node to drain; the only other node
#: in eu-west-1b with room, worker-b2, already runs nats-0, and its disk cannot follow it to
#: another zone.
NATS_NODES = ("worker-b2", DRAIN_NODE, "worker-a1")


def _nats(ids: Ids) -> Workload:
    labels = _app("nats", "messaging", "jetstream", "2.11.6")
    selector = {"app.kubernetes.io/name": "nats", "app.kubernetes.io/component": "jetstream"}
    return Workload("data", "StatefulSet", "nats",
                    [container("nats", "nats:2.11.6-alpine", requests=_r("100m", "128Mi"),
                               limits={"memory": "512Mi"}, ports=[("client", 4222), ("cluster", 6222)],
                               args=["--config", "/etc/nats-config/nats.conf"])],
                    ids, labels=labels, priority_class="standard", priority=PRIORITY["standard"],
                    created_s=-120 * DAY - ids.rng.randint(0, 9999), grace=60, service_account="nats",
                    claim_templates=[("data", "/data")],
                    affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": selector}, "topologyKey": "kubernetes.io/hostname"}]}})


def storage_objects(ids: Ids, pods: list[Obj], nodes: dict[str, Obj]) -> list[Obj]:
    """What `kubectl get storageclasses,csinodes,pv,pvc -A -o yaml` adds: the gp3 class
    (WaitForFirstConsumer), a CSINode per node with the EBS driver's attach limit, and for every
    StatefulSet pod's claim a bound claim and its dynamically provisioned PV, pinned (node
    affinity) to the zone of the node the pod runs on."""
    out: list[Obj] = [{
        "allowVolumeExpansion": True, "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
                     "creationTimestamp": Ids.ts(-176 * DAY), "name": STORAGE_CLASS, "resourceVersion": ids.rv(),
                     "uid": ids.uid()},
        "parameters": {"encrypted": "true", "type": "gp3"}, "provisioner": EBS_DRIVER, "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer"}]
    for name, node in sorted(nodes.items()):
        instance = json.loads(node["metadata"]["annotations"]["csi.volume.kubernetes.io/nodeid"])[EBS_DRIVER]
        out.append({
            "apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"annotations": {"storage.alpha.kubernetes.io/migrated-plugins":
                                         "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,"
                                         "kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/portworx-volume,"
                                         "kubernetes.io/vsphere-volume"},
                         "creationTimestamp": node["metadata"]["creationTimestamp"], "name": name,
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name,
                                              "uid": node["metadata"]["uid"]}],
                         "resourceVersion": ids.rv(), "uid": ids.uid()},
            "spec": {"drivers": [{"allocatable": {"count": EBS_ATTACH_LIMIT}, "name": EBS_DRIVER,
                                  "nodeID": instance, "topologyKeys": ["kubernetes.io/os",
                                                                       "topology.ebs.csi.aws.com/zone",
                                                                       "topology.kubernetes.io/zone"]}]}})
    pvs: list[Obj] = []
    pvcs: list[Obj] = []
    for pod in pods:
        node = pod["spec"].get("nodeName")
        claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["spec"].get("volumes", ())
                  if "persistentVolumeClaim" in v]
        if not node or not claims:
            continue
        zone = nodes[node]["metadata"]["labels"]["topology.kubernetes.io/zone"]
        ns = pod["metadata"]["namespace"]
        created = pod["metadata"]["creationTimestamp"]
        for claim in claims:
            claim_uid = ids.uid()
            pv_name = f"pvc-{claim_uid}"
            size = "50Gi" if ns == "data" else "20Gi"
            labels = {k: v for k, v in pod["metadata"]["labels"].items() if k.startswith("app.kubernetes.io/")}
            pvcs.append({
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                             "pv.kubernetes.io/bound-by-controller": "yes",
                                             "volume.beta.kubernetes.io/storage-provisioner": EBS_DRIVER,
                                             "volume.kubernetes.io/selected-node": node,
                                             "volume.kubernetes.io/storage-provisioner": EBS_DRIVER},
                             "creationTimestamp": created, "finalizers": ["kubernetes.io/pvc-protection"],
                             "labels": labels, "name": claim, "namespace": ns, "resourceVersion": ids.rv(),
                             "uid": claim_uid},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                         "storageClassName": STORAGE_CLASS, "volumeMode": "Filesystem", "volumeName": pv_name},
                "status": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}, "phase": "Bound"}})
            pvs.append({
                "apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"annotations": {"pv.kubernetes.io/provisioned-by": EBS_DRIVER,
                                             "volume.kubernetes.io/provisioner-deletion-secret-name": "",
                                             "volume.kubernetes.io/provisioner-deletion-secret-namespace": ""},
                             "creationTimestamp": created,
                             "finalizers": ["external-provisioner.volume.kubernetes.io/finalizer",
                                            "kubernetes.io/pv-protection"],
                             "name": pv_name, "resourceVersion": ids.rv(), "uid": ids.uid()},
                "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": size},
                         "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": claim,
                                      "namespace": ns, "uid": claim_uid},
                         "csi": {"driver": EBS_DRIVER, "fsType": "ext4",
                                 "volumeAttributes": {"storage.kubernetes.io/csiProvisionerIdentity":
                                                      "1740978241147-9917-ebs.csi.aws.com"},
                                 "volumeHandle": f"vol-{ids.hex(17)}"},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}},
                         "persistentVolumeReclaimPolicy": "Delete", "storageClassName": STORAGE_CLASS,
                         "volumeMode": "Filesystem"},
                "status": {"lastPhaseTransitionTime": created, "phase": "Bound"}})
    # kubectl lists kinds in the order asked for, each sorted by namespace and name.
    pvs.sort(key=lambda v: v["metadata"]["name"])
    pvcs.sort(key=lambda c: (c["metadata"]["namespace"], c["metadata"]["name"]))
    return [*out, *pvs, *pvcs]


def _key(pod: Obj) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def _pdb(ids: Ids, spec: Spec, pods: list[Obj]) -> Obj:
    selector = {k: v for k, v in spec.workload.labels.items()
                if k in ("app.kubernetes.io/name", "k8s-app", "app.kubernetes.io/component")}
    healthy = sum(1 for p in pods if _is_ready(p))
    return make_pdb(ids, spec.workload.namespace, spec.pdb["name"], selector, expected=len(pods), healthy=healthy,
                    min_available=spec.pdb.get("minAvailable"), max_unavailable=spec.pdb.get("maxUnavailable"),
                    age_s=spec.workload.created_s + 60)


def _is_ready(pod: Obj) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", ()))


# -- arithmetic: what the scheduler would say, and the scenarios' proof -----------------------------

def _tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator") == "Exists" and not t.get("key"):
            return True
        if t.get("key") == taint["key"] and (t.get("operator") == "Exists" or t.get("value", "") ==
                                              taint.get("value", "")):
            return True
    return False


def untolerated(pod: Obj, node: Obj) -> bool:
    return any(t["effect"] in ("NoSchedule", "NoExecute") and not _tolerates(pod["spec"].get("tolerations", []), t)
               for t in node["spec"].get("taints", ()))


def allocatable(node: Obj) -> dict[str, int]:
    return pod_requests({"containers": [{"resources": {"requests": node["status"]["allocatable"]}}]})


def free_on(node: Obj, pods: list[Obj]) -> dict[str, int]:
    """allocatable − the requests of the pods bound to the node (pods counted as one each)."""
    free = allocatable(node)
    for p in pods:
        if p["spec"].get("nodeName") == node["metadata"]["name"] and p["status"]["phase"] not in ("Succeeded",
                                                                                                 "Failed"):
            for k, v in pod_requests(p["spec"]).items():
                free[k] = free.get(k, 0) - v
            free["pods"] -= 1
    return free


def _short(pod: Obj) -> dict[str, int]:
    return {**pod_requests(pod["spec"]), "pods": 1}


def scheduler_message(pod: Obj, nodes: list[Obj], pods: list[Obj]) -> str:
    """The scheduler's `0/N nodes are available: ...` for the filters this demo exercises."""
    counts: dict[str, int] = {}
    unresolvable = 0
    for node in nodes:
        reasons: list[str] = []
        labels = node["metadata"]["labels"]
        if untolerated(pod, node):
            reasons, unresolvable = ["node(s) had untolerated taint(s)"], unresolvable + 1
        elif any(labels.get(k) != v for k, v in pod["spec"].get("nodeSelector", {}).items()):
            reasons, unresolvable = ["node(s) didn't match Pod's node affinity/selector"], unresolvable + 1
        else:
            free = free_on(node, pods)
            need = _short(pod)
            if need["pods"] > free["pods"]:
                reasons.append("Too many pods")
            for name in ("cpu", "memory", *sorted(k for k in need if k not in ("cpu", "memory", "pods"))):
                if need.get(name, 0) > free.get(name, 0):
                    reasons.append(f"Insufficient {name}")
        for r in reasons:
            counts[r] = counts.get(r, 0) + 1
    n = len(nodes)
    msg = f"0/{n} nodes are available: " + ", ".join(sorted(f"{v} {k}" for k, v in counts.items())) + "."
    if unresolvable == n:
        # kube-scheduler >= 1.34 runs DynamicResources' PostFilter before preemption; its reason comes first.
        msg += f" no new claims to deallocate, preemption: 0/{n} nodes are available: {n} Preemption is not " \
               "helpful for scheduling."
    return msg


def _matches(pdb: Obj, pod: Obj) -> bool:
    sel = pdb["spec"]["selector"]["matchLabels"]
    labels = pod["metadata"].get("labels", {})
    return pdb["metadata"]["namespace"] == pod["metadata"]["namespace"] and \
        all(labels.get(k) == v for k, v in sel.items())


def candidates(pod: Obj, node: Obj, pods: list[Obj]) -> list[Obj]:
    """Pods on `node` the plan may evict for `pod` (design.md, "The plan", step 2)."""
    out = []
    for p in pods:
        if p["spec"].get("nodeName") != node["metadata"]["name"]:
            continue
        owner = (p["metadata"].get("ownerReferences") or [{}])[0]
        if (p["spec"]["priority"] >= pod["spec"]["priority"] or owner.get("kind") in ("DaemonSet", "Node")
                or p["spec"].get("priorityClassName") in SYSTEM_PRIORITY_CLASSES
                or "deletionTimestamp" in p["metadata"]):
            continue
        out.append(p)
    return out


def tier_room(pod: Obj, node: Obj, pods: list[Obj], pdbs: list[Obj], tier: int, optimistic: bool = False
              ) -> dict[str, int]:
    """Room on `node` after evicting every candidate allowed in `tier`.

    PDB accounting is conservative unless `optimistic`: a victim is PDB-safe only if its (single)
    PDB allows as many disruptions as the node has candidates under it; optimistic: at least one.
    """
    cands = candidates(pod, node, pods)
    room = free_on(node, pods)
    for p in cands:
        if tier <= 2:
            under = [b for b in pdbs if _matches(b, p)]
            if len(under) > 1:
                continue
            if under:
                on_node = sum(1 for q in cands if _matches(under[0], q))
                if under[0]["status"]["disruptionsAllowed"] < (1 if optimistic else on_node):
                    continue
        if tier == 1 and p["spec"]["terminationGracePeriodSeconds"] > MAX_GRACE:
            continue
        for k, v in _short(p).items():
            room[k] = room.get(k, 0) + v
    return room


def fits(need: dict[str, int], room: dict[str, int]) -> bool:
    return all(room.get(k, 0) >= v for k, v in need.items())


def check_scenarios(demo: Demo) -> list[str]:
    """Every scenario of the header, by arithmetic; returns the problems (empty when all hold)."""
    problems: list[str] = []
    by_key = {_key(p): p for p in demo.pods}
    names = [n["metadata"]["name"] for n in demo.nodes]
    for node in demo.nodes:
        free = free_on(node, demo.pods)
        if any(v < 0 for v in free.values()):
            problems.append(f"{node['metadata']['name']} is over-committed: {free}")
        for p in demo.pods:
            static = (p["metadata"].get("ownerReferences") or [{}])[0].get("kind") == "Node"  # kubelet's own
            # kresched's reservation came after the pods (NoSchedule never evicts): it does not count.
            before = {**node, "spec": {**node["spec"], "taints": [
                t for t in node["spec"].get("taints", ()) if t.get("value") != "kresched"]}}
            if p["spec"].get("nodeName") == node["metadata"]["name"] and untolerated(p, before) and not static:
                problems.append(f"{_key(p)} runs on {node['metadata']['name']} without tolerating its taints")
    # 1. the critical pod: fits nowhere; tier 1 only on CRITICAL_NODE, which is not the obvious node
    crit = by_key[demo.critical_pod]
    need = _short(crit)
    usable = [n for n in demo.nodes if not untolerated(crit, n)]
    for node in demo.nodes:
        if fits(need, free_on(node, demo.pods)) and node in usable:
            problems.append(f"{demo.critical_pod} already fits on {node['metadata']['name']}")
    tier1 = [n["metadata"]["name"] for n in usable if fits(need, tier_room(crit, n, demo.pods, demo.pdbs, 1, True))]
    if tier1 != [CRITICAL_NODE]:
        problems.append(f"tier 1 is feasible on {tier1}, expected only {CRITICAL_NODE}")
    node = next(n for n in demo.nodes if n["metadata"]["name"] == CRITICAL_NODE)
    if not fits(need, tier_room(crit, node, demo.pods, demo.pdbs, 1)):
        problems.append(f"tier 1 does not hold on {CRITICAL_NODE} with conservative PDB accounting")
    usable_names = [n["metadata"]["name"] for n in usable]
    if CRITICAL_NODE in (names[0], min(usable_names)):
        problems.append(f"{CRITICAL_NODE} is the first node by name")
    emptiest = emptiest_node(usable, demo.pods)
    if emptiest == CRITICAL_NODE:
        problems.append(f"{CRITICAL_NODE} is the emptiest node")
    # 2. fits nowhere, whatever is evicted
    train = by_key[demo.infeasible_pod]
    for n in demo.nodes:
        if not untolerated(train, n) and fits(_short(train), tier_room(train, n, demo.pods, demo.pdbs, 3)) and \
                all(n["metadata"]["labels"].get(k) == v for k, v in train["spec"]["nodeSelector"].items()):
            problems.append(f"{demo.infeasible_pod} could run on {n['metadata']['name']}")
    # 3. the node to drain has every kind of pod the drain pre-flight must sort out
    on_drain = [p for p in demo.pods if p["spec"].get("nodeName") == DRAIN_NODE]
    kinds = {(p["metadata"].get("ownerReferences") or [{"kind": "None"}])[0]["kind"] for p in on_drain}
    blocked = [p for p in on_drain for b in demo.pdbs if _matches(b, p) and b["status"]["disruptionsAllowed"] == 0]
    allowed = [p for p in on_drain for b in demo.pdbs if _matches(b, p) and b["status"]["disruptionsAllowed"] > 0]
    empty_dir = [p for p in on_drain if any("emptyDir" in v for v in p["spec"].get("volumes", ()))
                 and (p["metadata"].get("ownerReferences") or [{}])[0].get("kind") != "DaemonSet"]
    if not ({"DaemonSet", "StatefulSet", "ReplicaSet", "None"} <= kinds and blocked and allowed and empty_dir):
        problems.append(f"{DRAIN_NODE} lacks a drain story: kinds={kinds} blocked={len(blocked)} "
                        f"allowed={len(allowed)} emptyDir={len(empty_dir)}")
    return problems


def emptiest_node(nodes: list[Obj], pods: list[Obj]) -> str:
    """The node with the most free memory (ties: most free cpu)."""
    return max(nodes, key=lambda n: (free_on(n, pods)["memory"], free_on(n, pods)["cpu"]))["metadata"]["name"]


def table(demo: Demo) -> str:
    crit = next(p for p in demo.pods if _key(p) == demo.critical_pod)
    need = _short(crit)
    lines = [f"{demo.critical_pod} needs cpu={need['cpu']}m memory={need['memory'] // 2**20}Mi",
             f"{'node':<11} {'pods':>4} {'free cpu':>9} {'free mem':>9}  {'tier1':>12} {'tier2':>12} {'tier3':>12}"]
    for n in demo.nodes:
        free = free_on(n, demo.pods)
        count = sum(1 for p in demo.pods if p["spec"].get("nodeName") == n["metadata"]["name"])
        cells = []
        for tier in (1, 2, 3):
            room = tier_room(crit, n, demo.pods, demo.pdbs, tier)
            ok = "ok" if fits(need, room) and not untolerated(crit, n) else "--"
            cells.append(f"{room['cpu']:>4}/{room['memory'] // 2**20:>5}{ok:>3}")
        lines.append(f"{n['metadata']['name']:<11} {count:>4} {free['cpu']:>8}m {free['memory'] // 2**20:>7}Mi  "
                     + " ".join(f"{c:>12}" for c in cells))
    return "\n".join(lines)


# -- YAML as kubectl writes it -------------------------------------------------------------------

class KubectlDumper(yaml.SafeDumper):
    """Block style, sorted keys, sequences not indented under their key, `"..."` where quoting is
    needed (sigs.k8s.io/yaml's look), `|` for multi-line strings, no line folding."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def choose_scalar_style(self) -> str | None:
        style = super().choose_scalar_style()
        return '"' if style == "'" else style


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


KubectlDumper.add_representer(str, _str)


def render(demo: Demo) -> str:
    header = HEADER.format(critical=demo.critical_pod, infeasible=demo.infeasible_pod, node=CRITICAL_NODE,
                           drain=DRAIN_NODE, pods=len(demo.pods), nodes=len(demo.nodes), reserved=RESERVED_NODE,
                           reserved_for=RESERVED_FOR)
    body = yaml.dump({"apiVersion": "v1", "items": demo.items, "kind": "List", "metadata": {"resourceVersion": ""}},
                     Dumper=KubectlDumper, sort_keys=True, default_flow_style=False, width=1 << 20,
                     allow_unicode=True)
    return header + body


HEADER = """\
# kresched's built-in demo cluster: `kresched ... --snapshot demo`.
# Generated by scripts/make_demo.py (deterministic; do not edit by hand, edit the script and rerun it).
#
# A self-managed cluster (kubeadm, Cilium) on AWS as `kubectl get nodes,pods,pdb,priorityclasses,namespaces,
# storageclasses,csinodes,pv,pvc -A -o yaml` shows it: {nodes} nodes in eu-west-1a/b/c (cp-1 is the control
# plane, tainted node-role.kubernetes.io/control-plane:NoSchedule), {pods} pods, nearly full on memory.
# PriorityClasses: system-node-critical, system-cluster-critical, platform-critical (1000000),
# standard (1000, globalDefault), batch-low (100, preemptionPolicy Never).
#
# Scenarios -- what to try:
#
# 1. A critical add-on that fits nowhere:  {critical}
#    (system-cluster-critical, tolerates CriticalAddonsOnly, requests 500m CPU / 1Gi memory).
#      kresched explain --snapshot demo --pod {critical}
#      kresched plan    --snapshot demo --pod {critical}
#    Expected: tier 1 on {node} -- evict one batch/image-resizer pod (batch-low, grace 10 s, no PDB).
#    Not on the obvious nodes: worker-a1 (first by name) and worker-b2 (the emptiest) can make room
#    only by evicting pods with a 30 s grace period or under a PDB with no disruptions left
#    (data/zookeeper: minAvailable 3 of 3), i.e. tier 2 or 3; worker-a2 has one image-resizer pod,
#    but evicting it frees 512Mi where 1Gi is missing.
#
# 2. A pod that fits nowhere, whatever is evicted:  {infeasible}
#    (nodeSelector nvidia.com/gpu.present=true and nvidia.com/gpu: 1; the cluster has no GPU node).
#      kresched plan --snapshot demo --pod {infeasible}        # infeasible, exit code 3
#
# 3. A node to drain:  {drain}  (the last node on the old AMI, kernel 5.10; node-problem-detector
#    reports FrequentContainerdRestart). Its pods: DaemonSet pods (skipped), shop/frontend, shop/cart
#    and data/postgres-1 (PDBs allow one disruption each), data/zookeeper-1 (PDB minAvailable 3 of 3:
#    blocked), shop/search-indexer (emptyDir: its index cache is lost), default/debug-shell (a bare
#    pod: gone for good once evicted), data/nats-1 (its gp3 volume is in eu-west-1b, where the only
#    node with room already runs nats-0: its replacement would stay Pending).
#      kresched drain {drain} --snapshot demo --dry-run
#
# 4. A reservation left behind:  {reserved} carries kresched's taint CriticalAddonsOnly=kresched:NoSchedule
#    and its kresched.io/reserved-for ({reserved_for}, long gone) and kresched.io/reserved-at
#    annotations, as a `kresched preempt` killed with SIGKILL leaves them.
#      kresched untaint --snapshot demo --dry-run
#
# 5. A scale-up to rebalance:  worker-d1 and worker-d2 (a new pool, tainted node.acme.io/pool=general-v2:NoSchedule,
#    joined an hour ago, empty but for the node agents); shop/catalog, payments and recommendations
#    tolerate the pool. Every worker is above the 50 % request target, the new nodes below 20 %:
#      kresched rebalance --snapshot demo --dry-run
#    Expected: pods of those three Deployments move to the new nodes, each move simulated, within
#    their PodDisruptionBudgets; nothing else can land there.
#
# The pending critical pods (the add-on):  kresched plan --snapshot demo
# Both Pending pods at once, in priority order:  kresched plan --snapshot demo --all-pending
#
"""


# -- scenario 4: a scale-up (rebalance) -----------------------------------------------------------
# Built last, so that it takes its random numbers and UIDs after everything else: the objects of the
# other scenarios are the same with or without it.

#: Two nodes of a new pool, joined an hour ago, empty but for the node agents. Tainted while the
#: platform team moves workloads over: only the shop's stateless, replicated Deployments tolerate it.
SCALE_UP_NODES = [
    NodeSpec("worker-d1", "eu-west-1a", "10.0.1.64", "m7i.xlarge", age_days=0),
    NodeSpec("worker-d2", "eu-west-1c", "10.0.3.71", "m7i.xlarge", age_days=0),
]
POOL_TAINT = {"effect": "NoSchedule", "key": "node.acme.io/pool", "value": "general-v2"}
POOL_TOLERATION = {"effect": "NoSchedule", "key": "node.acme.io/pool", "operator": "Equal", "value": "general-v2"}
#: The workloads that tolerate the new pool (none runs on the drain node or is Pending).
POOL_WORKLOADS = ("catalog", "payments", "recommendations")


def scale_up(ids: Ids, demo: Demo, specs: list[Spec], refs: dict[str, NodeRef]) -> None:
    """Add the new pool's nodes with their DaemonSet pods, let the pool's workloads tolerate it, and
    write the pending pods' scheduler message again for the larger cluster."""
    new_nodes, new_pods = [], []
    for i, spec in enumerate(SCALE_UP_NODES, start=len(NODES)):
        ref = refs[spec.name] = NodeRef(spec.name, spec.ip, f"10.244.{i}.0/24")
        node = _node(ids, spec, ref)
        node["spec"]["taints"] = [POOL_TAINT]
        node["metadata"]["creationTimestamp"] = ids.ts(-3600)
        node["metadata"]["labels"]["node.acme.io/pool"] = "general-v2"
        new_nodes.append(node)
        for s in specs:
            if s.workload.kind == "DaemonSet" and set(ALL) <= set(s.nodes):
                new_pods.append(make_pod(s.workload, node=ref, age_s=-3600 + ids.rng.randint(20, 90)))
    for pod in demo.pods:
        owner = (pod["metadata"].get("ownerReferences") or [{}])[0]
        if pod["metadata"]["namespace"] == "shop" and owner.get("kind") == "ReplicaSet" \
                and owner["name"].rsplit("-", 1)[0] in POOL_WORKLOADS:
            pod["spec"]["tolerations"] = [POOL_TOLERATION, *pod["spec"]["tolerations"]]
    demo.nodes += new_nodes
    demo.pods += new_pods
    demo.pods.sort(key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))
    for pod in demo.pods:
        if not pod["spec"].get("nodeName"):
            pod["status"]["conditions"][0]["message"] = scheduler_message(pod, demo.nodes, demo.pods)
    rest = demo.items[len(NODES):]
    pods_end = next(i for i, o in enumerate(rest) if o["kind"] != "Pod")
    demo.items = [*demo.nodes, *demo.pods, *rest[pods_end:]]
    # Their kubelets made their CSINodes; no CSI node plugin runs on the tainted pool yet, so no
    # driver is registered: the API server serves the empty list as `null`, as on real clusters.
    last = max(i for i, o in enumerate(demo.items) if o["kind"] == "CSINode")
    demo.items[last + 1:last + 1] = [{
        "apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
        "metadata": {"creationTimestamp": node["metadata"]["creationTimestamp"], "name": node["metadata"]["name"],
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node["metadata"]["name"],
                                          "uid": node["metadata"]["uid"]}],
                     "resourceVersion": ids.rv(), "uid": ids.uid()},
        "spec": {"drivers": None}} for node in new_nodes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not up to date")
    parser.add_argument("--table", action="store_true", help="print the per-node arithmetic")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    demo = build()
    if args.table:
        print(table(demo))
    problems = check_scenarios(demo)
    if problems:
        for p in problems:
            print(f"scenario check failed: {p}", file=sys.stderr)
        return 1
    text = render(demo)
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is not up to date: run scripts/make_demo.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text)
    print(f"wrote {args.out}: {len(demo.nodes)} nodes, {len(demo.pods)} pods, {len(demo.pdbs)} PDBs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
