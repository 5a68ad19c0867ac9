"""Planning makes no reference cycles, so the CLI plans with the cyclic collector paused
(`sources.decode.paused_gc`): whatever a plan allocates is freed by reference counting alone.
A change that made a cycle per pod, node or simulated step would make a long queue's memory grow
for as long as the collector is paused; these tests find it first (no timing: they count what the
collector would have had to find)."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable

import pytest

import benchmarks.pending as pending
from benchmarks.generate import ClusterSize, generate
from kresched.model.cluster import ClusterState
from kresched.plan.drain import DrainOptions, plan_drain
from kresched.plan.explain import explain_pod
from kresched.plan.planner import plan_pod
from kresched.plan.queue import pending_pods_to_plan, plan_pending
from kresched.plan.rebalance import plan_rebalance
from kresched.sources.snapshot import load_snapshot


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> ClusterState:
    """A generated cluster with a natural queue: pods that fit, pods needing evictions (some
    under PDBs), pods that fit nowhere; claims with zonal volumes, DaemonSets, spread constraints."""
    directory = tmp_path_factory.mktemp("cycles")
    base = directory / "tiny.json"
    generate(ClusterSize("tiny", nodes=12, pods=400, pending=30, control_planes=1), base)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pending, "ensure_cluster", lambda directory, size, log: base)
        return load_snapshot(str(pending.ensure_natural(directory, "tiny", 25, lambda m: None)))


def _busiest(state: ClusterState) -> str:
    workers = [n for n in state.nodes if not n.taints]
    return max(workers, key=lambda n: (len(state.pods_on(n.name)), n.name)).name


def _first_critical(state: ClusterState):
    return next(p for p in state.pending_pods() if p.is_critical)


CASES: dict[str, Callable[[ClusterState], object]] = {
    "plan, the whole queue": lambda s: plan_pending(s, pending_pods_to_plan(s, all_pending=True)),
    "plan, one critical pod": lambda s: plan_pod(s, _first_critical(s)),
    "explain": lambda s: explain_pod(s, _first_critical(s)),
    "drain pre-flight": lambda s: plan_drain(s, [_busiest(s)], DrainOptions(True, True, True)),
    "rebalance": plan_rebalance,
}


@pytest.mark.parametrize("run", CASES.values(), ids=CASES.keys())
def test_planning_leaves_nothing_for_the_cyclic_collector(cluster: ClusterState, run: Callable) -> None:
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        result = run(cluster)
        gc.set_debug(gc.DEBUG_SAVEALL)
        found = gc.collect()
        kinds = Counter(type(o).__name__ for o in gc.garbage).most_common(5)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    assert result
    assert found == 0, f"planning left {found} objects in reference cycles: {kinds}"
