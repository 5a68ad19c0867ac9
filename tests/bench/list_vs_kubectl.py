"""Listing a whole cluster from an API server: kresched against `kubectl get -o json` and the official
Python client, each a process of its own, against a fake API server seeded with a generated cluster.

    python -m tests.bench.list_vs_kubectl                    # small (100 nodes / 3k pods), best of 3
    python -m tests.bench.list_vs_kubectl --size medium --repeat 2 --json
    python -m tests.bench.list_vs_kubectl --size large --repeat 1 --skip client --skip kubectl

Not a test (nothing here is timed against a threshold); it lives with the tests because it needs the
fake API server (tests/fakeapi), which the package does not ship. The API server runs in this
process; every client runs in a child process, and only the child's CPU (user + system, from
`wait4`) is counted, so the server's own work is left out. Each row lists what `kresched` lists
for a plan (namespaces, priority classes, nodes, PDBs, Services, RCs, ReplicaSets, StatefulSets,
storage classes, CSINodes, PVs, PVCs, pods), in pages of 500 as kresched and kubectl both ask:

- the floor: reading the generated file and decoding it into kresched's typed structs, GC off
  (`python -m benchmarks.process floor`) — the same objects, from a file; the best of at least
  `FLOOR_RUNS` runs, as in the process table (its CPU varies most);
- `kresched`: `sources.live.load_live` and the cluster state built from it, as every live command
  starts;
- `kubectl get <those kinds> -A -o json --chunk-size 500`, its output thrown away;
- the official client: `list_*` of each kind, paged, deserialised into its models (what a Python
  tool built on it does) — but ReplicaSets, StatefulSets and ReplicationControllers, whose
  generated objects lack the pod template its models require (a few hundred small objects).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("namespaces", "priorityclasses.scheduling.k8s.io", "nodes", "poddisruptionbudgets.policy", "services",
         "replicationcontrollers", "replicasets.apps", "statefulsets.apps", "storageclasses.storage.k8s.io",
         "csinodes.storage.k8s.io", "persistentvolumes", "persistentvolumeclaims", "pods")


def run(argv: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `argv` once: its CPU (user + system) and wall seconds and exit code."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.stderr.close()
    rc = os.waitstatus_to_exitcode(status)
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": time.perf_counter() - t0, "rc": rc,
            "error": err.decode(errors="replace").strip().splitlines()[-1:] if rc else []}


def clients(path: Path, kubeconfig: Path, skip: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    py = [sys.executable, "-m", "tests.bench.list_vs_kubectl"]
    out = {
        "floor: the same objects decoded from the file (typed, GC off)":
            [sys.executable, "-m", "benchmarks.process", "floor", str(path)],
        "kresched: load_live and the cluster state": [*py, "--child", "kresched", "--kubeconfig", str(kubeconfig)],
    }
    if "client" not in skip:
        out["official client: list_* into its models"] = [*py, "--child", "client", "--kubeconfig", str(kubeconfig)]
    if "kubectl" not in skip and shutil.which("kubectl"):
        out["kubectl get -A -o json"] = ["kubectl", "get", ",".join(KINDS), "-A", "-o", "json", "--chunk-size",
                                         "500", "--kubeconfig", str(kubeconfig)]
    return out


def measure(size: str, repeat: int, directory: Path, log: Any, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    from benchmarks.generate import SIZES, ensure_cluster
    from benchmarks.process import FLOOR_RUNS
    from tests.fakeapi import FakeApiServer

    path = ensure_cluster(directory, size, log)
    spec = SIZES[size]
    with FakeApiServer(token=None) as fake, tempfile.TemporaryDirectory() as tmp:
        log(f"loading {path.name} into the fake API server ...")
        fake.load(path)
        kubeconfig = fake.write_kubeconfig(Path(tmp) / "kubeconfig")
        rows: dict[str, Any] = {}
        for n, (title, argv) in enumerate(clients(path, kubeconfig, skip).items()):
            runs = []
            times = max(repeat, FLOOR_RUNS) if n == 0 else repeat  # the floor: as the process table's
            for i in range(times):
                log(f"{title} run {i + 1}/{times}")
                runs.append(run(argv, {"PYTHONHASHSEED": "0"}))
            rows[title] = min(runs, key=lambda r: r["cpu"])
    return {"size": size, "nodes": spec.nodes, "pods": spec.pods, "repeat": repeat, "rows": rows}


def render(report: dict[str, Any]) -> str:
    rows = report["rows"]
    floor = next(iter(rows.values()))
    out = [f"| {report['nodes']:,} nodes / {report['pods']:,} pods | CPU s (× floor) | wall s |",
           "| --- | --- | --- |"]
    for title, r in rows.items():
        if r["rc"] != 0:
            out.append(f"| {title} | failed (exit {r['rc']}: {' '.join(r['error'])}) | |")
            continue
        out.append(f"| {title} | {r['cpu']:.2f} ({r['cpu'] / floor['cpu']:.1f}×) | {r['wall']:.2f} |")
    return "\n".join(out)


#: What a child read, kept to its end (see `main`).
_KEEP: list[object] = []


def _child(which: str, kubeconfig: str) -> None:
    """One client's whole listing, in this (child) process."""
    if which == "kresched":
        from kresched.sources.connection import connect
        from kresched.sources.live import load_live

        state = load_live(connect(kubeconfig))
        assert state.pods
        _KEEP.append(state)
        return
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=kubeconfig)
    core = client.CoreV1Api(api)
    lists = [core.list_namespace, client.SchedulingV1Api(api).list_priority_class, core.list_node,
             client.PolicyV1Api(api).list_pod_disruption_budget_for_all_namespaces,
             core.list_service_for_all_namespaces, client.StorageV1Api(api).list_storage_class,
             client.StorageV1Api(api).list_csi_node,
             core.list_persistent_volume, core.list_persistent_volume_claim_for_all_namespaces,
             core.list_pod_for_all_namespaces]
    for fn in lists:
        token = None
        while True:
            page = fn(limit=500, _continue=token)
            _KEEP.append(page)
            token = page.metadata._continue
            if not token:
                break


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.bench.list_vs_kubectl", description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="small", choices=("small", "medium", "large"))
    p.add_argument("--repeat", type=int, default=3, help="runs per client (the best is reported)")
    p.add_argument("--dir", type=Path, default=Path("bench-out"), help="where generated clusters are cached")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--skip", action="append", default=[], choices=("client", "kubectl"),
                   help="leave a client out (at 5k nodes, the official client's models of 150k pods and the "
                        "fake server's store need more than 24 GB together)")
    p.add_argument("--child", choices=("kresched", "client"), help=argparse.SUPPRESS)
    p.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(args.child, args.kubeconfig)
        # As a kresched command and the floor leave (`cli._run`): without freeing what was read.
        sys.stdout.flush()
        os._exit(0)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    report = measure(args.size, args.repeat, args.dir, lambda m: print(m, file=sys.stderr, flush=True),
                     frozenset(args.skip))
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
