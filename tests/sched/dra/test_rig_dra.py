"""kresched's DRA answers against what the real kube-scheduler v1.36.2 did on the rig.

Each `tests/fixtures/rig-dra/<scene>/` was recorded on the rig (a real control plane, a simulated
kubelet; a development aid only, never needed here) with the DeviceClass `gpu.example.com`
(CEL `device.driver == "gpu.example.com"`), ResourceSlices made by hand, and pods placed by the
real scheduler (so their claims were allocated by it). The pod under test was created with
`spec.schedulingGates` (its claim was generated while it was gated), the cluster dumped into
`snapshot.json` (`kubectl get nodes,pods,pdb,priorityclasses,deviceclasses,resourceslices,
resourceclaims,resourceclaimtemplates -A -o json`, managedFields stripped), then the gate removed
and `recorded.json` written:

* `boundTo` and `allocated`: where it was bound and its claim's `status.allocation` results
  (`[request, driver, pool, device]`);
* `message` (its PodScheduled condition, the same as its `FailedScheduling` event), `reason`
  when not `Unschedulable`, `nominated` (its nominatedNodeName) and `preempted` (the pods that got
  a `DisruptionTarget` condition);
* `afterEvicting`: kresched's own preemption carried out (by hand: the Eviction API on the
  `victims` kresched's plan names; or by `kresched preempt` itself, `"by"`, with the node and
  devices its plan named): what became of their claims, where the pod was then bound and what it
  was allocated (for a pod asking for an extended resource, the claim the scheduler made for it,
  with its `requestMappings`).

A what-if scene (`manifests`) holds the `-f` input too: it was created on the cluster of the
snapshot (`kubectl create -f`), and `recorded.json` says per workload where its pods were bound,
what their claims were allocated, and the PodScheduled message of those left Pending.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.explain import explain_pod
from kresched.plan.placement import bound_to
from kresched.plan.planner import Planner, plan_pod
from kresched.plan.plans import PlanOptions
from kresched.plan.whatif import plan_workloads
from kresched.sched.dra.inuse import allocated_claims
from kresched.sched.dynamic_resources import DraCycle, claims_to_allocate, prepare
from kresched.sources.manifests import read_manifests, workloads_of
from kresched.sources.snapshot import load_snapshot

FIXTURES = Path(__file__).parents[2] / "fixtures" / "rig-dra"
ALL = sorted(p.parent for p in FIXTURES.glob("*/recorded.json"))
WHAT_IFS = [p for p in ALL if (p / "manifests.yaml").exists()]
SCENES = [p for p in ALL if p not in WHAT_IFS]


def _scene(path: Path) -> tuple[dict[str, Any], ClusterState, Pod]:
    """The recorded facts, the snapshot loaded by kresched's own loader, and the pod ungated."""
    recorded = json.loads((path / "recorded.json").read_bytes())
    state = load_snapshot(str(path / "snapshot.json"))
    gated = state.pod(recorded["pod"])
    assert gated is not None, f"{recorded['pod']} is not in the snapshot"
    assert gated.spec.scheduling_gates, "the pod under test was recorded gated"
    pod = msgspec.structs.replace(gated, spec=msgspec.structs.replace(gated.spec, scheduling_gates=()))
    return recorded, state, pod


def _allocated(state: ClusterState, pod: Pod, node: str, gone: tuple[str, ...] = ()) -> list[list[str]]:
    """What kresched's allocator gives the pod's claims on `node` once the pods `gone` are off it:
    `[request, driver, pool, device]` per device, as a claim's `status.allocation` lists them."""
    snapshot = Planner(state, PlanOptions()).work.snapshot
    info = snapshot.by_name[node]
    work = info.clone()
    for p in info.pods:
        if p.key in gone:
            work.remove_pod(p)
    cycle = prepare(pod, snapshot.dra, allocated_claims(snapshot).replaced(info, work))
    assert isinstance(cycle, DraCycle)
    assert cycle.allocator is not None
    allocation = cycle.allocator.allocate(work.node, claims_to_allocate(cycle, pod, work.node))
    assert allocation is not None, f"kresched's allocator finds nothing on {node}"
    return [[r.request, r.driver, r.pool, r.device] for c in allocation.claim_results for r in c.devices.results]


PLACED = [p for p in SCENES if "boundTo" in json.loads((p / "recorded.json").read_bytes())]
REFUSED = [p for p in SCENES if "message" in json.loads((p / "recorded.json").read_bytes())]
FREED = [p for p in SCENES if "afterEvicting" in json.loads((p / "recorded.json").read_bytes())]


@pytest.mark.parametrize("path", PLACED, ids=[p.name for p in PLACED])
def test_the_pod_lands_where_the_scheduler_bound_it(path: Path) -> None:
    recorded, state, pod = _scene(path)
    plan = plan_pod(state, pod)
    assert (plan.outcome, plan.candidates) == ("fits", (recorded["boundTo"],)), plan.message


@pytest.mark.parametrize("path", [p for p in PLACED if "allocated" in json.loads((p / "recorded.json").read_bytes())],
                         ids=lambda p: p.name)
def test_kresched_allocates_the_devices_the_scheduler_allocated(path: Path) -> None:
    recorded, state, pod = _scene(path)
    assert _allocated(state, pod, recorded["boundTo"]) == recorded["allocated"]


@pytest.mark.parametrize("path", REFUSED, ids=[p.name for p in REFUSED])
def test_the_schedulers_message_word_for_word_and_no_preemption(path: Path) -> None:
    recorded, state, pod = _scene(path)
    explained = explain_pod(state, pod)
    assert explained.scheduler_message == recorded["message"]
    assert recorded["nominated"] is None
    assert recorded["preempted"] == []
    assert explained.predicted is None
    if recorded.get("reason") == "SchedulerError":
        # The cycle stopped at the plugin's error: no PostFilter ran, nothing to evict for.
        assert explained.preemption_message is None
        plan = plan_pod(state, pod)
        assert (plan.outcome, plan.victims) == ("infeasible", ())
        assert plan.message.startswith(recorded["message"])
    else:
        # The scheduler's own preemption would find nothing (it then nominates no node).
        assert explained.preemption_message is not None
        assert recorded["message"].endswith("Preemption is not helpful for scheduling.")


@pytest.mark.parametrize("path", FREED, ids=[p.name for p in FREED])
def test_kresched_evicts_the_pods_whose_eviction_let_the_scheduler_bind_the_pod(path: Path) -> None:
    recorded, state, pod = _scene(path)
    after = recorded["afterEvicting"]
    plan = plan_pod(state, pod)
    assert (plan.outcome, plan.node, sorted(v.pod.key for v in plan.victims)) == (
        "evict", after["boundTo"], sorted(after["victims"])), plan.message
    assert _allocated(state, pod, plan.node, tuple(after["victims"])) == after["allocated"]
    devices = ", ".join("/".join(d[1:]) for d in after["allocated"])
    assert any(n.endswith(f" would get {devices}") for n in plan.notes), plan.notes
    assert [[g.request, g.driver, g.pool, g.device] for g in plan.devices] == after["allocated"]
    if "by" in after:  # `kresched preempt` on the rig: its plan named that node and those devices
        assert (after["exitCode"], after["outcome"]) == (0, "bound")
        assert (after["plannedNode"], after["plannedDevices"]) == (after["boundTo"], after["allocated"])
    # explain says kresched can make room there, where the scheduler's preemption cannot.
    assert after["boundTo"] in explain_pod(state, pod).device_freeing


@pytest.mark.parametrize("path", WHAT_IFS, ids=[p.name for p in WHAT_IFS])
def test_the_what_if_places_the_pods_where_the_scheduler_bound_them_with_the_same_devices(path: Path) -> None:
    recorded = json.loads((path / "recorded.json").read_bytes())
    state = load_snapshot(str(path / "snapshot.json"))
    docs = read_manifests([str(path / recorded["manifests"])])
    result = plan_workloads(state, workloads_of(docs, state, "default"))
    assert len(result.workloads) == len(recorded["workloads"])
    for w, want in zip(result.workloads, recorded["workloads"], strict=True):
        assert (w.spec.key, w.spec.kind, w.placed, w.pending) == (want["workload"], want["kind"], want["placed"],
                                                                  want["pending"]), w.message
        placed = sorted(([p.node, [[g.request, g.driver, g.pool, g.device] for g in p.devices]]
                         for p in w.plans if p.outcome == "fits"), key=lambda x: (x[0], x[1]))
        bound = sorted([p["boundTo"], p["allocated"]] for p in want["pods"] if "boundTo" in p)
        assert placed == bound
        refused = [p["message"] for p in want["pods"] if "message" in p]
        if refused:
            assert w.nearest is not None
            assert {w.nearest.scheduler_message} == set(refused)


def test_a_shared_claim_stays_allocated_while_one_pod_still_reserves_it_and_is_freed_with_the_last() -> None:
    recorded, state, _ = _scene(FIXTURES / "shared-claim-one-left")
    team = next(c for c in state.dra.claims if c.metadata.name == "team-gpu")
    left = recorded["afterDeletingOne"]
    assert [[r.request, r.driver, r.pool, r.device] for r in team.status.allocation.devices.results] == \
        left["allocation"]
    assert [r.name for r in team.status.reserved_for] == left["reservedFor"] == ["p2"]
    # Evicting p2, the last pod on it, deallocated it (the claim itself stays).
    assert recorded["afterEvicting"]["claim"]["allocation"] is None


def test_a_shared_claim_a_simulated_placement_reserves_is_freed_only_with_its_last_pod() -> None:
    """The real scheduler bound p2 to p1's node and reserved p1's claim for both (`shared-claim`).
    A simulation does the same: with p2 placed there, taking p1 away leaves the claim allocated
    to p2 alone, and taking p2 away too frees it, as the resourceclaim controller would."""
    recorded, state, pod = _scene(FIXTURES / "shared-claim")
    key = "default/team-gpu"
    snapshot = Planner(state, PlanOptions()).work.snapshot
    node = snapshot.by_name[recorded["boundTo"]].clone()
    node.add_pod(bound_to(pod, node.node))
    snapshot = snapshot.with_node_info(node)
    assert allocated_claims(snapshot).reservers[key] == {f"default/{n}" for n in recorded["reservedFor"]}
    for gone, left in (("p1", {"default/p2"}), ("p2", None)):
        node = snapshot.by_name[recorded["boundTo"]].clone()
        node.remove_pod(next(p for p in node.pods if p.name == gone))
        snapshot = snapshot.with_node_info(node)
        held = allocated_claims(snapshot)
        assert (held.reservers.get(key), key in held.claims) == (left, left is not None)


def test_every_scene_records_an_answer() -> None:
    assert SCENES, f"no scenes in {FIXTURES}"
    assert WHAT_IFS, f"no what-if scenes in {FIXTURES}"
    for path in SCENES:
        recorded = json.loads((path / "recorded.json").read_bytes())
        assert recorded["scene"] == path.name
        assert ("boundTo" in recorded) != ("message" in recorded), path.name
    for path in WHAT_IFS:
        recorded = json.loads((path / "recorded.json").read_bytes())
        assert recorded["scene"] == path.name
        assert all(("boundTo" in p) != ("message" in p) for w in recorded["workloads"] for p in w["pods"]), path.name
