"""`kubectl drain` against `kresched drain`: one node of 110 pods under PDBs that allow it, each
tool against a freshly seeded fake API server, median of `--repeat` runs.

    python -m tests.bench.drain_vs_kubectl                 # grace 0 s and 3 s, 3 runs each
    python -m tests.bench.drain_vs_kubectl --grace 0 --repeat 5 --json

Not a test (nothing here is timed against a threshold); it lives with the tests because it needs
the fake API server (tests/fakeapi), which the package does not ship. The pre-flight on a large
generated cluster is a case of `python -m benchmarks` (`drain.preflight`, `drain.preflight.all`).

The cluster: node `drain-me` runs 110 pods (its pod capacity) of 11 Deployments, 10 each; each
Deployment has 10 more pods on four other nodes and a PDB `minAvailable: 10`, so its budget allows
the 10 evictions at once and neither tool meets a 429. The other nodes have room for every
replacement (kresched's pre-flight places them; nothing recreates them here — neither tool waits
for replacements). Deleted pods terminate for their grace period on the fake's real-time clock: a
kubelet thread removes each one once its `deletionTimestamp` (whole seconds, as the API writes it)
has passed. Both commands run as they would for an operator:

    kubectl drain drain-me --ignore-daemonsets --delete-emptydir-data --force --kubeconfig K
    python -m kresched drain drain-me --ignore-daemonsets --delete-emptydir-data --force --yes --kubeconfig K

The fake runs without a bearer token: client-go does not send one over plain HTTP.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.builders import make_namespace, make_node, make_pdb, make_pod, make_state
from tests.fakeapi import PODS, FakeApiServer

ROOT = Path(__file__).resolve().parents[2]
NODE = "drain-me"
APPS = 11
PER_APP = 10
FLAGS = ["--ignore-daemonsets", "--delete-emptydir-data", "--force"]


def seed(fake: FakeApiServer, grace: int) -> None:
    nodes = [make_node(NODE, cpu="64", memory="256Gi", pods=110)]
    nodes += [make_node(f"node-{i}", cpu="64", memory="256Gi", pods=110) for i in range(4)]
    pods = []
    for a in range(APPS):
        app = f"app-{a:02d}"
        for i in range(2 * PER_APP):
            where = NODE if i < PER_APP else f"node-{i % 4}"
            pods.append(make_pod(f"{app}-{i:02d}", "shop", node=where, cpu="10m", memory="16Mi", grace=grace,
                                 labels={"app": app}, owner=f"ReplicaSet/{app}-5d8f"))
    pdbs = [make_pdb(f"app-{a:02d}", "shop", selector={"app": f"app-{a:02d}"}, min_available=PER_APP)
            for a in range(APPS)]
    fake.load(make_state(nodes, pods, pdbs, [], [make_namespace("shop")]))
    fake.controllers.pdbs.sync()  # each budget: 20 healthy, 10 desired -> 10 allowed
    fake.pods.termination = "graceful"


def _kubelet(fake: FakeApiServer, stop: threading.Event) -> None:
    while not stop.wait(0.005):
        fake.pods.finish_terminations()


def run_once(argv: Callable[[Path], list[str]], grace: int, env: dict[str, str]) -> dict[str, Any]:
    with FakeApiServer(token=None) as fake, tempfile.TemporaryDirectory() as tmp:
        seed(fake, grace)
        kubeconfig = fake.write_kubeconfig(Path(tmp) / "kubeconfig")
        stop = threading.Event()
        kubelet = threading.Thread(target=_kubelet, args=(fake, stop), daemon=True)
        kubelet.start()
        fake.clear_calls()
        t0 = time.perf_counter()
        proc = subprocess.run(argv(kubeconfig), cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - t0
        stop.set()
        kubelet.join()
        left = [p for p in fake.store.list(PODS) if p["spec"].get("nodeName") == NODE]
        calls = fake.calls()
        return {"seconds": seconds, "exit": proc.returncode, "left": len(left),
                "evictions": sum(1 for r in calls if r.path.endswith("/eviction")),
                "requests": len(calls), "stderr": proc.stderr.strip().splitlines()[-1:] if proc.returncode else []}


def kubectl(kubeconfig: Path) -> list[str]:
    return ["kubectl", "drain", NODE, *FLAGS, "--kubeconfig", str(kubeconfig)]


def kresched(kubeconfig: Path) -> list[str]:
    return [sys.executable, "-m", "kresched", "drain", NODE, *FLAGS, "--yes", "-o", "json",
            "--kubeconfig", str(kubeconfig)]


def measure(graces: list[int], repeat: int, log: Callable[[str], None]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KRESCHED_BACKOFF_SCALE", None)
    report: dict[str, Any] = {"pods": APPS * PER_APP, "repeat": repeat, "graces": {}}
    tools = {"kubectl": kubectl, "kresched": kresched}
    if shutil.which("kubectl") is None:
        tools.pop("kubectl")
        report["kubectl"] = "not found on PATH"
    for grace in graces:
        entry: dict[str, Any] = {}
        for name, argv in tools.items():
            runs = []
            for i in range(repeat):
                log(f"grace {grace}s: {name} run {i + 1}/{repeat}")
                runs.append(run_once(argv, grace, env))
            secs = [r["seconds"] for r in runs]
            entry[name] = {"median": statistics.median(secs), "seconds": secs,
                           "ok": all(r["exit"] == 0 and r["left"] == 0 for r in runs),
                           "evictions": runs[-1]["evictions"], "requests": runs[-1]["requests"],
                           "errors": [r["stderr"] for r in runs if r["stderr"]]}
        if "kubectl" in entry:
            entry["ratio"] = entry["kresched"]["median"] / entry["kubectl"]["median"]
        report["graces"][str(grace)] = entry
    return report


def render(report: dict[str, Any]) -> str:
    lines = [f"drain of one node with {report['pods']} pods under PDBs that allow it; median of "
             f"{report['repeat']} run(s), each against a freshly seeded fake API server"]
    for grace, entry in report["graces"].items():
        lines.append(f"  grace {grace}s:")
        for name in ("kubectl", "kresched"):
            if name in entry:
                e = entry[name]
                runs = ", ".join(f"{s:.2f}" for s in e["seconds"])
                lines.append(f"    {name:<9} {e['median']:6.2f} s  (runs {runs}; {e['requests']} requests, "
                             f"{e['evictions']} evictions){'' if e['ok'] else '  FAILED: ' + str(e['errors'])}")
        if "ratio" in entry:
            lines.append(f"    kresched / kubectl: {entry['ratio']:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.bench.drain_vs_kubectl", description=__doc__.split("\n\n")[0])
    p.add_argument("--grace", default="0,3", help="comma-separated grace periods (seconds) of the pods")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    graces = [int(g) for g in args.grace.split(",") if g]
    report = measure(graces, max(1, args.repeat), lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
