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

Scenes named `profile-*` were recorded with kube-scheduler started with a KubeSchedulerConfiguration
(`--config`; the rig's `SCHED_CONFIG`), kept in the fixture as `schedulerConfig` (the YAML, without
the rig's `clientConnection`): kresched reads it as `--scheduler-config` does and simulates the
profile the pod's schedulerName selects. Each was built so that the default profile answers
differently (a test below holds every one to that). A scene where the pod stayed Pending records
the scheduler's `message` (its PodScheduled condition) and that it nominated no node.
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
from kresched.plan.explain import explain_pod
from kresched.plan.planner import Planner, plan_pod
from kresched.plan.plans import PlanOptions
from kresched.sched.config import parse_scheduler_config
from kresched.sched.profile import Profiles, build_profiles
from kresched.sources.config_file import parse_document
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


def _profiles(scene: dict[str, Any]) -> Profiles:
    """The scene's scheduler configuration as `--scheduler-config` reads it (the default profile
    without one)."""
    text = scene.get("schedulerConfig")
    if text is None:
        return Profiles.default()
    cfg, specs = parse_scheduler_config(parse_document(text.encode(), scene["scene"]))
    return build_profiles(cfg, specs, f"{scene['scene']}.schedulerConfig")


@pytest.mark.parametrize("path", SCENES, ids=[p.stem for p in SCENES])
def test_kresched_agrees_with_the_real_scheduler(path: Path) -> None:
    scene, state, pod = _scene(path)
    profiles = _profiles(scene)
    plan = plan_pod(state, pod, PlanOptions(profiles=profiles))

    if scene.get("message"):
        explained = explain_pod(state, pod, profiles=profiles)
        assert explained.scheduler_message == scene["message"]
        assert not scene.get("nominatedAny"), "the scheduler nominated a node"
        return

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
    profiles = _profiles(scene)
    planner = Planner(state, PlanOptions(profiles=profiles))
    profile = profiles.for_pod(pod)
    assert profile is not None
    placer = planner._engine(profile).placer
    landing = placer.land(pod, planner.work.snapshot)
    got = {s.node: {**{p.plugin: p.weighted for p in s.plugins if p.weighted}, "total": s.total}
           for s in landing.scores}
    want = {node: {k: v for k, v in by.items() if v or k == "total"} for node, by in scene["scores"].items()}
    assert got == want


def test_every_fixture_records_an_answer() -> None:
    assert SCENES, f"no fixtures in {FIXTURES}"
    for path in SCENES:
        scene = _load(path)
        assert scene["scene"] == path.stem
        answers = [bool(scene.get("boundTo")), bool(scene.get("boundToAny")), bool(scene.get("nominated")),
                   bool(scene.get("message"))]
        assert answers.count(True) >= 1, f"{path.name}: no recorded answer"
        if scene.get("boundToAny"):
            assert scene.get("boundTo") is None
            assert len(scene["boundToAny"]) > 1


CONFIGURED = [p for p in SCENES if _load(p).get("schedulerConfig")]


@pytest.mark.parametrize("path", CONFIGURED, ids=[p.stem for p in CONFIGURED])
def test_the_default_profile_would_answer_differently(path: Path) -> None:
    """Each configured scene shows its configuration at work: the v1.36 default profile, on the same
    cluster, predicts another node (or a pod that fits, or one the scheduler would preempt for)."""
    scene, state, pod = _scene(path)
    default = plan_pod(state, msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, scheduler_name="")))
    if scene.get("message"):
        explained = explain_pod(state, pod)
        assert explained.scheduler_message != scene["message"]
        return
    recorded = set(scene.get("boundToAny") or [scene["boundTo"]])
    assert default.outcome != "fits" or set(default.candidates) != recorded, (
        f"{scene['scene']}: the default profile predicts {default.outcome} {list(default.candidates)} too")
