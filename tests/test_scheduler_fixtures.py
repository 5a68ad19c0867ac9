"""kresched's predictions against what the real kube-scheduler v1.36.2 did.

Each `tests/fixtures/scheduler/<scene>.json` was recorded on the rig (a real control plane with a
simulated kubelet; a development aid only, never needed here): the existing objects were created
and Running, the pod under test was created with `spec.schedulingGates`, the cluster was dumped
(`kubectl get nodes,pods,pdb,priorityclasses,namespaces,services,replicasets,statefulsets,
replicationcontrollers -A -o json`, managedFields stripped) into `snapshot`, then the gate was
removed and the scheduler's answer recorded:

* `boundTo`: the node it was bound to (the same node on every repetition), or `boundToAny`: every
  node it was bound to across the repetitions, where the top score was a tie;
* `nominated` and `victims`: for a pod that had to preempt, the node it was nominated to and the
  pods that got a `DisruptionTarget` condition (`PreemptionByScheduler`);
* `scores` (placements): what the scheduler logged at -v=10 for the first placement, per node the
  weighted score of each score plugin that scored ("Plugin scored node for pod"; plugins that
  skipped in PreScore log nothing, DynamicResources' constant 0 is left out) and the `total`
  ("Calculated node's final score for pod").

Here kresched plans the same pod (as it was in the snapshot, without its scheduling gates) on
the same snapshot and must give the same answer.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.planner import Planner, plan_pod
from kresched.sources.snapshot import load_snapshot

FIXTURES = Path(__file__).parent / "fixtures" / "scheduler"
SCENES = sorted(FIXTURES.glob("*.json"))


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_bytes())


def _scene(path: Path) -> tuple[dict[str, Any], ClusterState, Pod]:
    """The fixture, its snapshot loaded by kresched's own loader, and the pod under test ungated."""
    scene = _load(path)
    state = load_snapshot("-", io.BytesIO(json.dumps(scene["snapshot"]).encode()))
    recorded = state.pod(scene["pod"])
    assert recorded is not None, f"{scene['pod']} is not in the snapshot"
    assert recorded.spec.scheduling_gates, "the pod under test was recorded gated"
    pod = msgspec.structs.replace(recorded, spec=msgspec.structs.replace(recorded.spec, scheduling_gates=()))
    return scene, state, pod


@pytest.mark.parametrize("path", SCENES, ids=[p.stem for p in SCENES])
def test_kresched_agrees_with_the_real_scheduler(path: Path) -> None:
    scene, state, pod = _scene(path)
    plan = plan_pod(state, pod)

    if scene.get("nominated"):
        got = (plan.outcome, plan.node, sorted(v.pod.key for v in plan.victims))
        want = ("evict", scene["nominated"], sorted(scene["victims"]))
        assert got == want, f"{scene['scene']}: kresched {got}, the scheduler {want}; {plan.message}"
        return
    assert plan.outcome == "fits", f"{scene['scene']}: kresched says {plan.outcome}: {plan.message}"
    if scene.get("boundToAny"):
        seen = set(scene["boundToAny"])
        assert seen <= set(plan.candidates), (
            f"{scene['scene']}: the scheduler bound it to {sorted(seen)}; kresched's tied candidates "
            f"are {list(plan.candidates)}")
    else:
        assert plan.node == scene["boundTo"], (
            f"{scene['scene']}: the scheduler bound it to {scene['boundTo']}; kresched says {plan.node} "
            f"(candidates {list(plan.candidates)}): {plan.message}")


SCORED = [p for p in SCENES if _load(p).get("scores")]


@pytest.mark.parametrize("path", SCORED, ids=[p.stem for p in SCORED])
def test_kresched_scores_each_node_as_the_real_scheduler_did(path: Path) -> None:
    """Per node and plugin, the weighted score (zeros left out: a skipped plugin logs nothing), and the total."""
    scene, state, pod = _scene(path)
    planner = Planner(state)
    landing = planner.placer.land(pod, planner.work.snapshot)
    got = {s.node: {**{p.plugin: p.weighted for p in s.plugins if p.weighted}, "total": s.total}
           for s in landing.scores}
    want = {node: {k: v for k, v in by.items() if v or k == "total"} for node, by in scene["scores"].items()}
    assert got == want


def test_every_fixture_records_an_answer() -> None:
    assert SCENES, f"no fixtures in {FIXTURES}"
    for path in SCENES:
        scene = _load(path)
        assert scene["scene"] == path.stem
        answers = [bool(scene.get("boundTo")), bool(scene.get("boundToAny")), bool(scene.get("nominated"))]
        assert answers.count(True) >= 1, f"{path.name}: no recorded answer"
        if scene.get("boundToAny"):
            assert scene.get("boundTo") is None
            assert len(scene["boundToAny"]) > 1
