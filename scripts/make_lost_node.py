#!/usr/bin/env python3
"""Generate `examples/lost-node.yaml`: a small cluster with a lost node, to try the lost-node guide
(docs/guide/lost-node.md) offline: `kresched explain node/worker-c2 --snapshot examples/lost-node.yaml`.

    python scripts/make_lost_node.py            # rewrite the file
    python scripts/make_lost_node.py --check    # exit 1 if the file differs from what this script writes

Four workers in three zones, as `kubectl get nodes,pods,pdb,namespaces,leases,storageclasses,csinodes,
pv,pvc -A -o yaml` shows them; the kubelet of `worker-c2` stopped reporting 100 s before the snapshot
was taken (its Lease in kube-node-lease was last renewed then), so the node-lifecycle controller has
set its Ready condition to Unknown, tainted it `node.kubernetes.io/unreachable` (NoSchedule and
NoExecute) and marked its pods not ready. Its pods, one of each fate: Deployment pods (replaced once
the taint manager deletes them, 300 s after the taint by the default toleration, one of them after
120 s by its own), a StatefulSet pod with a ReadWriteOnce volume (not back by itself: its controller
waits for the old pod to be gone, and no kubelet confirms that), a Deployment pod with a ReadWriteOnce
volume (its replacement waits for the volume to be detached), a Job's pod, a bare pod (gone for good)
and the DaemonSet pods (they stay). Deterministic, built with the demo's builders
(`benchmarks.kube`, `scripts/make_demo.py`): the same script writes the same bytes.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.kube import Ids, NodeRef, Workload, container, make_namespace, make_pod  # noqa: E402

OUT = ROOT / "examples" / "lost-node.yaml"
SEED = 20251128
LOST = "worker-c2"
#: Seconds before the snapshot (taken at the builders' epoch): the kubelet's last Lease renewal, and
#: when the node-lifecycle controller marked the node (nodeMonitorGracePeriod, 50 s, later).
LAST_RENEWAL = -100
MARKED = LAST_RENEWAL + 50

Obj = dict[str, Any]


def _demo() -> Any:
    """scripts/make_demo.py as a module: its node and storage builders."""
    spec = importlib.util.spec_from_file_location("make_demo", ROOT / "scripts" / "make_demo.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_demo"] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["make_demo"]
    return module


def build() -> list[Obj]:
    demo = _demo()
    ids = Ids(SEED)
    specs = [demo.NodeSpec("worker-a1", "eu-west-1a", "10.0.1.21"), demo.NodeSpec("worker-b1", "eu-west-1b",
                                                                                "10.0.2.14"),
             demo.NodeSpec("worker-c1", "eu-west-1c", "10.0.3.19"), demo.NodeSpec(LOST, "eu-west-1c", "10.0.3.52")]
    refs = {s.name: NodeRef(s.name, s.ip, f"10.244.{i}.0/24") for i, s in enumerate(specs)}
    nodes = [demo._node(ids, s, refs[s.name]) for s in specs]
    _lose(ids, next(n for n in nodes if n["metadata"]["name"] == LOST))

    def w(namespace: str, kind: str, name: str, requests: dict[str, str], **kw: Any) -> Workload:
        return Workload(namespace, kind, name, [container(name, f"ghcr.io/acme/{name}:1.0", requests=requests)], ids,
                        labels={"app.kubernetes.io/name": name}, priority_class="", priority=0,
                        created_s=-30 * 86_400 - ids.rng.randint(0, 9999), **kw)

    r = demo._r
    placed: list[tuple[Workload, list[str]]] = [
        (w("kube-system", "DaemonSet", "kube-proxy", {"cpu": "100m"}, host_network=True), [s.name for s in specs]),
        (w("shop", "Deployment", "frontend", r("500m", "512Mi")), ["worker-a1", "worker-b1", LOST]),
        (w("shop", "Deployment", "cart", r("500m", "1Gi")), ["worker-c1", LOST]),
        # Its own toleration of the unreachable taint: deleted 120 s after the taint, not 300 s.
        (w("ml", "Deployment", "feature-server", r("1", "2Gi"), tolerations=[
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
             "tolerationSeconds": 120}]), [LOST]),
        (w("shop", "Deployment", "uploads", r("250m", "512Mi"), volumes=[
            {"name": "files", "persistentVolumeClaim": {"claimName": "uploads-files"}}]), [LOST]),
        (w("data", "StatefulSet", "postgres", r("1", "4Gi"), claim_templates=[("data", "/var/lib/postgresql/data")],
           grace=60), ["worker-a1", LOST]),
        (w("batch", "Job", "report-nightly-29320800", r("500m", "1Gi"), restart_policy="Never"), [LOST]),
        (w("default", "Bare", "debug-shell", {}), [LOST]),
    ]
    pods: list[Obj] = []
    for workload, where in placed:
        for i, node in enumerate(where):
            index = i if workload.kind == "StatefulSet" else None
            base = max(workload.created_s, refs[node].created_s)
            pod = make_pod(workload, node=refs[node], index=index, age_s=base + ids.rng.randint(600, 86_400),
                           name=workload.name if workload.kind == "Bare" else None, ready=node != LOST)
            if node == LOST:
                _mark_not_ready(ids, pod)
            pods.append(pod)
    pdbs = [demo._pdb(ids, demo.Spec(workload, where, pdb), [p for p in pods if _owned(p, workload)])
            for workload, where, pdb in ((placed[1][0], placed[1][1], {"name": "frontend", "maxUnavailable": 1}),
                                         (placed[5][0], placed[5][1], {"name": "postgres", "minAvailable": 1}))]
    storage = demo.storage_objects(ids, pods, {n["metadata"]["name"]: n for n in nodes})
    namespaces = [make_namespace(ids, ns, age_s=-182 * 86_400) for ns in
                  ("batch", "data", "default", "kube-node-lease", "kube-system", "ml", "shop")]
    leases = [_lease(ids, n, LAST_RENEWAL if n == LOST else -ids.rng.randint(1, 9)) for n in refs]
    pods.sort(key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))
    return [*nodes, *pods, *pdbs, *namespaces, *leases, *storage]


def _owned(pod: Obj, workload: Workload) -> bool:
    return pod["metadata"]["labels"].get("app.kubernetes.io/name") == workload.name


def _lose(ids: Ids, node: Obj) -> None:
    """What the node-lifecycle controller does to a node whose kubelet went silent: every condition
    Unknown (NodeStatusUnknown), the unreachable taints with the time it added them."""
    marked = ids.ts(MARKED)
    for c in node["status"]["conditions"]:
        c.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.",
                 lastTransitionTime=marked, lastHeartbeatTime=ids.ts(LAST_RENEWAL))
    node["spec"]["taints"] = [{"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable", "timeAdded": marked},
                              {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "timeAdded": marked}]


def _mark_not_ready(ids: Ids, pod: Obj) -> None:
    """`MarkPodsNotReady`: the Ready condition of each pod on the node False from the moment it was marked."""
    for c in pod["status"].get("conditions", ()):
        if c["type"] in ("Ready", "ContainersReady"):
            c.update(status="False", lastTransitionTime=ids.ts(MARKED))


def _lease(ids: Ids, node: str, renewed: int) -> Obj:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"creationTimestamp": ids.ts(-41 * 86_400), "name": node, "namespace": "kube-node-lease",
                         "resourceVersion": ids.rv(), "uid": ids.uid()},
            "spec": {"holderIdentity": node, "leaseDurationSeconds": 40,
                     "renewTime": ids.ts(renewed).replace("Z", ".000000Z")}}


HEADER = """\
# An example cluster with a lost node, for docs/guide/lost-node.md:
#   kresched explain node/worker-c2 --snapshot examples/lost-node.yaml
#   kresched drain worker-c2 --out-of-service --dry-run --snapshot examples/lost-node.yaml
# Generated by scripts/make_lost_node.py (deterministic; do not edit by hand, edit the script and rerun it).
#
# The kubelet of worker-c2 stopped reporting 100 s before this snapshot was taken: its Lease was last
# renewed then, the node-lifecycle controller set its Ready condition to Unknown 50 s later and tainted
# it node.kubernetes.io/unreachable (NoSchedule, NoExecute). Its pods: shop/frontend and shop/cart
# (Deployments), ml/feature-server (tolerates the taint 120 s, not the default 300 s), shop/uploads (a
# Deployment with a ReadWriteOnce volume), data/postgres-1 (a StatefulSet pod with its volume),
# batch/report-nightly (a Job's pod), default/debug-shell (a bare pod) and kube-proxy (a DaemonSet's).
#
"""


def render(items: list[Obj]) -> str:
    demo = _demo()
    body = yaml.dump({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
                     Dumper=demo.KubectlDumper, sort_keys=True, default_flow_style=False, width=1 << 20,
                     allow_unicode=True)
    return HEADER + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not up to date")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        if not args.out.exists() or args.out.read_text() != text:
            print(f"{args.out} is not up to date: run scripts/make_lost_node.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
