"""What the benchmark measures: a registry of cases, each run in a fresh process.

Owns: the `Case` registry (`CASES`, filled by the `@case` decorator, in report order) and the child
entry point `python -m benchmarks.cases NAME PATH`, which runs one case once in its own
process and prints one JSON line: `{"seconds": ..., "peakKiB": ..., "baseKiB": ...}` (peak resident
memory of that process, from `getrusage(RUSAGE_SELF)`, so runs never mix their peaks), or
`{"unavailable": "why"}`.

A case function receives the cluster file and returns the seconds its measured part took (it
does its own untimed setup first), optionally with extra numbers: `(seconds, {"key": value})`.
Raise `Unavailable` when the cluster lacks what it measures (e.g. no pending pod).

Adding a case (as "explain one pod", "plan --pod", "plan 100 pending" and "drain pre-flight"
were added once the planner landed) is one function here::

    @case("plan.pending.critical", "plan (pending critical pods only)")
    def _plan_critical(path: Path) -> float:
        from kresched.plan.queue import pending_pods_to_plan, plan_pending

        state, _, _ = setup(path)      # untimed: load, first pending critical pod, Snapshot
        pods = pending_pods_to_plan(state)
        t0 = time.perf_counter()
        plan_pending(state, pods)
        return time.perf_counter() - t0

The report picks it up by itself (`python -m benchmarks --cases reconcile` runs it alone).
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CASES", "Case", "Unavailable", "case", "run_child", "setup"]

Result = float | tuple[float, dict[str, Any]]


class Unavailable(Exception):
    """What the case measures is not there (yet): reported as n/a, not as a failure."""


@dataclass(frozen=True)
class Case:
    name: str
    title: str
    run: Callable[[Path], Result]
    #: Too slow (or too big) for large clusters: run only on the smallest size requested, and only
    #: if that size has at most this many pods (0: no limit, run on every size).
    max_pods: int = 0


CASES: dict[str, Case] = {}


def case(name: str, title: str, *, max_pods: int = 0) -> Callable[[Callable[[Path], Result]],
                                                                   Callable[[Path], Result]]:
    def register(fn: Callable[[Path], Result]) -> Callable[[Path], Result]:
        CASES[name] = Case(name, title, fn, max_pods)
        return fn
    return register


def setup(path: Path) -> tuple[Any, Any, Any]:
    """Untimed setup shared by the planning cases: (ClusterState, first pending critical pod, sched Snapshot)."""
    from kresched.sched.dra.inuse import cluster_snapshot
    from kresched.sources.snapshot import load_snapshot

    state = load_snapshot(str(path))
    pending = state.pending_pods()
    pod = next((p for p in pending if p.is_critical), pending[0] if pending else None)
    return state, pod, cluster_snapshot(state)


# -- loading --------------------------------------------------------------------------------------
# Every load case times reading the file too: that is what `load_snapshot` does, and the page
# cache makes it a memory copy after the first run.

@case("json.loads", "json.loads (stdlib, plain dicts)")
def _json_loads(path: Path) -> Result:
    import json as stdlib_json

    t0 = time.perf_counter()
    stdlib_json.loads(path.read_bytes())
    return time.perf_counter() - t0


@case("msgspec.typed", "msgspec typed decode (_TypedList, GC paused)")
def _msgspec_typed(path: Path) -> Result:
    import msgspec

    from kresched.sources.decode import _TypedList, paused_gc

    decoder = msgspec.json.Decoder(_TypedList)
    t0 = time.perf_counter()
    with paused_gc():
        out = decoder.decode(path.read_bytes())
    seconds = time.perf_counter() - t0
    return seconds, {"items": len(out.items)}


@case("msgspec.typed.raw", "  same, without Pod/Node __post_init__")
def _msgspec_typed_raw(path: Path) -> Result:
    """The cost of the typed decode alone, without deriving requests/QoS/keys: shows what
    `__post_init__` adds inside the baseline."""
    import msgspec

    from kresched.model.objects import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
    from kresched.model.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
    from kresched.sources.decode import paused_gc

    def no_post_init(self: Any) -> None:
        pass

    try:
        # Built with real types, not annotations: msgspec cannot resolve names local to a function.
        raw_pod = type("RawPod", (Pod,), {"__post_init__": no_post_init}, tag="Pod")
        raw_node = type("RawNode", (Node,), {"__post_init__": no_post_init}, tag="Node")
        item = (raw_pod | raw_node | PodDisruptionBudget | PriorityClass | Namespace | PersistentVolume
                | PersistentVolumeClaim | StorageClass | CSINode)
        raw_list = msgspec.defstruct("RawList", [("kind", str, ""), ("items", list[item], [])])
        decoder = msgspec.json.Decoder(raw_list)
    except (TypeError, ValueError) as exc:
        raise Unavailable(f"cannot derive structs without __post_init__: {exc}") from None
    t0 = time.perf_counter()
    with paused_gc():
        decoder.decode(path.read_bytes())
    return time.perf_counter() - t0


@case("kresched.load", "kresched load_snapshot (the product)")
def _kresched_load(path: Path) -> Result:
    from kresched.sources.snapshot import load_snapshot

    t0 = time.perf_counter()
    state = load_snapshot(str(path))
    seconds = time.perf_counter() - t0
    return seconds, {"nodes": len(state.nodes), "pods": len(state.pods), "pdbs": len(state.pdbs),
                     "pending": len(state.pending_pods())}


# The official client's models cost ~1 ms and ~100 KiB a pod: 3,000 pods make the point; 150,000
# would need ~15 GB and minutes.
@case("k8s.client", "kubernetes client ApiClient.deserialize(V1PodList)", max_pods=3_000)
def _kubernetes_client(path: Path) -> Result:
    import inspect

    import msgspec
    from kubernetes.client import ApiClient
    items = msgspec.json.decode(path.read_bytes())["items"]
    pods = [i for i in items if i.get("kind") == "Pod"]
    text = msgspec.json.encode({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": pods}).decode()
    del items, pods
    client = ApiClient()
    params = list(inspect.signature(client.deserialize).parameters)

    class _Response:  # what older clients read: `response.data`
        data = text

    t0 = time.perf_counter()
    if params and params[0] == "response_text":  # kubernetes >= 33: deserialize(text, type, content_type)
        out = client.deserialize(text, "V1PodList", "application/json")
    else:
        out = client.deserialize(_Response(), "V1PodList")
    seconds = time.perf_counter() - t0
    return seconds, {"pods": len(out.items)}


# -- scheduling -----------------------------------

@case("sched.snapshot", "cluster_snapshot (NodeInfos, devices in use)")
def _sched_snapshot(path: Path) -> Result:
    from kresched.sched.dra.inuse import cluster_snapshot
    from kresched.sources.snapshot import load_snapshot
    state = load_snapshot(str(path))
    t0 = time.perf_counter()
    cluster_snapshot(state)
    return time.perf_counter() - t0


@case("sched.filters", "filters: 1 critical pod x all nodes")
def _sched_filters(path: Path) -> Result:
    from kresched.sched.runner import default_plugins, find_nodes_that_fit
    plugins = default_plugins()
    _, pod, snapshot = setup(path)
    if pod is None:
        raise Unavailable("no pending pod")
    t0 = time.perf_counter()
    diagnosis, _ = find_nodes_that_fit(plugins, pod, snapshot)
    seconds = time.perf_counter() - t0
    return seconds, {"feasible": len(diagnosis.feasible), "pod": pod.key}


# -- planning ------------------------------------------------------------------

@case("explain.pod", "explain --pod (1 critical pod)")
def _explain_pod(path: Path) -> Result:
    from kresched.plan.explain import explain_pod
    state, pod, _ = setup(path)
    t0 = time.perf_counter()
    explain_pod(state, pod)
    return time.perf_counter() - t0


@case("plan.pod", "plan --pod (1 critical pod)")
def _plan_pod(path: Path) -> Result:
    from kresched.plan.planner import plan_pod
    state, pod, _ = setup(path)
    t0 = time.perf_counter()
    plan = plan_pod(state, pod)
    seconds = time.perf_counter() - t0
    return seconds, {"outcome": plan.outcome, "node": plan.node, "tier": plan.tier, "victims": len(plan.victims)}


@case("plan.pending", "plan (all ~100 pending pods, in priority order)")
def _plan_pending(path: Path) -> Result:
    from kresched.plan.queue import pending_pods_to_plan, plan_pending
    state, _, _ = setup(path)
    pods = pending_pods_to_plan(state, all_pending=True)
    t0 = time.perf_counter()
    plans = plan_pending(state, pods)
    seconds = time.perf_counter() - t0
    outcomes: dict[str, int] = {}
    for plan in plans:
        outcomes[plan.outcome] = outcomes.get(plan.outcome, 0) + 1
    return seconds, {"pods": len(pods), "outcomes": outcomes}


@case("plan.whatif", "plan -f (a Deployment of 1,000 replicas, one after another)")
def _plan_whatif(path: Path) -> Result:
    from benchmarks.whatif import whatif_manifest
    from kresched.plan.whatif import plan_workloads
    from kresched.sources.decode import paused_gc
    from kresched.sources.manifests import Document, workloads_of
    from kresched.sources.snapshot import load_snapshot

    state = load_snapshot(str(path))
    docs = [Document("bench", d, "bench") for d in whatif_manifest()]
    t0 = time.perf_counter()
    with paused_gc():
        result = plan_workloads(state, workloads_of(docs, state, "default"))
    seconds = time.perf_counter() - t0
    [w] = result.workloads
    return seconds, {"placed": sum(w.placed.values()), "evicting": sum(1 for p in w.plans if p.outcome == "evict"),
                     "pending": w.pending}


@case("plan.gpu", "plan (1,000 GPU pods queued, 8 GPUs a node, 6 held; DRA)")
def _plan_gpu(path: Path) -> Result:
    """Untimed: the GPU variant of the cluster (`benchmarks.devices`), loaded once to time the load
    (reported as `load`: the issue's yardstick is planning within 3x of it) and once more to plan.
    Timed: planning the 1,000 GPU pods one after another."""
    from benchmarks.devices import ensure_gpu_cluster
    from kresched.plan.queue import pending_pods_to_plan
    from kresched.sources.snapshot import load_snapshot

    gpu = ensure_gpu_cluster(path, lambda _: None)
    t0 = time.perf_counter()
    state = load_snapshot(str(gpu))
    load = time.perf_counter() - t0
    pods = [p for p in pending_pods_to_plan(state, all_pending=True) if p.spec.resource_claims]
    if not pods:
        raise Unavailable("no GPU pod")
    return _plan_in_order(state, pods, load)


@case("plan.queue", "plan --all-pending (a GPU cluster's queue of its own pod shapes)")
def _plan_queue(path: Path) -> Result:
    """Untimed: the queue variant of the cluster (`benchmarks.queue`), loaded (the load reported as
    `load`). Timed: planning its whole queue in order, as `plan --all-pending` does."""
    from benchmarks.queue import ensure_queue
    from kresched.plan.queue import pending_pods_to_plan
    from kresched.sources.snapshot import load_snapshot

    queue = ensure_queue(path.parent, _size_of(path), lambda _: None)
    t0 = time.perf_counter()
    state = load_snapshot(str(queue))
    load = time.perf_counter() - t0
    pods = pending_pods_to_plan(state, all_pending=True)
    return _plan_in_order(state, pods, load)


def _plan_in_order(state: Any, pods: list[Any], load: float) -> Result:
    """Timed: `pods` planned in order, as `plan --all-pending` plans them; the outcomes counted."""
    from kresched.plan.queue import plan_pending
    from kresched.sources.decode import paused_gc

    t0 = time.perf_counter()
    with paused_gc():
        plans = plan_pending(state, pods)
    seconds = time.perf_counter() - t0
    outcomes: dict[str, int] = {}
    for plan in plans:
        outcomes[plan.outcome] = outcomes.get(plan.outcome, 0) + 1
    return seconds, {"load": round(load, 3), "pods": len(pods), "outcomes": outcomes}


def _size_of(path: Path) -> str:
    """The size a generated cluster's file is of (`<size>-v<version>.json`)."""
    return path.name.split("-v", 1)[0]


@case("drain.preflight", "drain --dry-run (1 busy node: PDBs, where pods land)")
def _drain_preflight(path: Path) -> Result:
    from kresched.plan.drain import plan_drain
    state, _, _ = setup(path)
    workers = [n for n in state.nodes if not n.taints]
    node = max(workers, key=lambda n: (len(state.pods_on(n.name)), n.name))
    t0 = time.perf_counter()
    plan_drain(state, [node.name])
    seconds = time.perf_counter() - t0
    return seconds, {"node": node.name, "pods": len(state.pods_on(node.name))}


@case("rebalance.plan", "rebalance --dry-run (every objective, the whole cluster)")
def _rebalance_plan(path: Path) -> Result:
    """Untimed: load. Timed: the whole plan, Snapshot included (what the command adds to loading)."""
    from kresched.plan.rebalance import plan_rebalance
    from kresched.sources.snapshot import load_snapshot

    state = load_snapshot(str(path))
    t0 = time.perf_counter()
    plan = plan_rebalance(state)
    seconds = time.perf_counter() - t0
    by: dict[str, int] = {}
    for m in plan.moves:
        by[m.objective] = by.get(m.objective, 0) + 1
    return seconds, {"moves": len(plan.moves), "refused": len(plan.skipped), **by}


# More drain cases live in their own module (registered here, into this module's registry).
from benchmarks import drain as _drain  # noqa: E402

_drain.register(case)


# -- the child process --------------------------------------------------------------------------

def _rss_kib() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_child(name: str, path: Path) -> dict[str, Any]:
    """Run case `name` once in this process: seconds, extras, peak and baseline RSS (KiB)."""
    gc.collect()
    base = _rss_kib()
    try:
        result = CASES[name].run(path)
    except Unavailable as exc:
        return {"unavailable": str(exc)}
    seconds, extra = result if isinstance(result, tuple) else (result, {})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"seconds": seconds, "peakKiB": peak, "baseKiB": base, **extra}


if __name__ == "__main__":
    print(json.dumps(run_child(sys.argv[1], Path(sys.argv[2]))))

