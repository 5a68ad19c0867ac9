"""A queue recorded on the real kube-scheduler v1.36.2, replayed through `plan --all-pending`.

Each `tests/fixtures/rig-queue/<scene>/` holds the cluster as the scheduler saw it before the queue
was released (`snapshot.json`: the queued pods still carry the recorder's scheduling gate) and what
the scheduler then did (`recorded.json`; the fixture README says how it was recorded). The recorder
released the pods one at a time in the scheduling queue's order (priority, then age), each once the
one before was bound or marked Unschedulable (a preemptor: bound where it preempted): the scheduler
took them in that order, each seeing the ones before it bound — what `plan --all-pending`
simulates. A replay removes the gates and gives the pods creation times in release order.

What is compared, pod by pod: the order kresched plans the queue in is the release order; a pod
lands on the node the scheduler bound it to, its claims getting the devices the scheduler allocated
them, or, where kresched says the top score is a tie, the scheduler's node is one of the tied nodes;
a preemptor evicts what the scheduler preempted, on its node or on one that ties with it on every
criterion of upstream's `pickOneNodeForPreemption` (the ones after are kresched's own, `CRITERIA`);
a pod the scheduler left Unschedulable fits nowhere and its plan's message starts with the
scheduler's. Where the scheduler broke a tie otherwise than kresched's first node, the rest of the
queue is replayed from what it did (the pods before bound where it bound them, with their devices,
its victims gone, those it left Pending out of the queue), so that every later pod is compared
exactly too. The same through the command
line, and through a planner without its memos.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kresched.model.cluster import ClusterState
from kresched.plan.gang import plan_queue
from kresched.plan.planner import Planner
from kresched.plan.plans import CRITERIA, Plan
from kresched.plan.queue import gang_lookups, pending_pods_to_plan, plan_pending
from kresched.sources.snapshot import load_snapshot
from tests.clirun import reset_env, run_cli

FIXTURES = Path(__file__).parents[1] / "fixtures" / "rig-queue"
SCENES = sorted(p.name for p in FIXTURES.iterdir() if (p / "recorded.json").is_file())
#: The criteria after upstream's: nodes that differ only in these (or in none, "it ties with ...") tie for
#: the scheduler.
KRESCHED_ONLY = {name for name, _ in CRITERIA[[name for name, _ in CRITERIA].index("victim requests"):]}
#: How many times each scene's queue is planned: once, and once more after each tie the scheduler broke
#: otherwise than kresched's first node. `mixed-queue`: the fifth trainer's preemption, among three GPU
#: nodes upstream's criteria cannot tell apart; `mixed-queue-other-ties` (the same scene recorded again):
#: that preemption on another of the three, and `batch-6`, on the second of two nodes tied at the top;
#: `gpu-queue`: `train-pair-3`, on the second of two nodes tied at the top (its devices then the
#: scheduler's, and the next pair's on the other node the ones it allocated there).
#: `gpu-queue-alike-nodes`: four pods (`infer-7`, `bigmem-5`, `cache-1`, `web-1`), each on another of the
#: nodes tied at the top (alike nodes of one type tie often); `preempting-queue`: `urgent-5`'s preemption,
#: on node-6, which ties with kresched's node-1 on every criterion.
REPLAYS = {"mixed-queue": 2, "mixed-queue-other-ties": 3, "gpu-queue": 2, "gpu-queue-alike-nodes": 5,
           "preempting-queue": 2}


def replayed(name: str, settled: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scene's recording, and its snapshot with the released pods ungated and created in release
    order after every other pod; the first `settled` of them bound where the scheduler bound them
    (Running) and the pods it preempted for them gone, or, where it left them Pending, still gated
    (out of the queue: nothing the later pods did let them in)."""
    recorded = json.loads((FIXTURES / name / "recorded.json").read_bytes())
    snapshot = json.loads((FIXTURES / name / "snapshot.json").read_bytes())
    pods = {f"{i['metadata']['namespace']}/{i['metadata']['name']}": i for i in snapshot["items"] if i["kind"] == "Pod"}
    newest = max(datetime.fromisoformat(p["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
                 for p in pods.values())
    claims = {(c["metadata"]["namespace"], o["name"]): c for c in snapshot["items"] if c["kind"] == "ResourceClaim"
              for o in c["metadata"].get("ownerReferences") or () if o["kind"] == "Pod"}
    gone: set[str] = set()
    for i, key in enumerate(recorded["released"], 1):
        pod, at = pods[key], (newest + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        rec = recorded["pods"][key]
        if i > settled or rec["boundTo"]:
            del pod["spec"]["schedulingGates"]
        pod["metadata"]["creationTimestamp"] = at
        if i <= settled and rec["boundTo"]:
            pod["spec"]["nodeName"] = rec["boundTo"]
            pod["status"] = {"phase": "Running", "startTime": at,
                             "conditions": [{"type": "PodScheduled", "status": "True"}]}
            if rec.get("allocated"):  # (one claim a pod in these scenes)
                claim = claims[(pod["metadata"]["namespace"], pod["metadata"]["name"])]
                claim["status"] = {"allocation": {
                    "devices": {"results": [dict(zip(("request", "driver", "pool", "device"), r, strict=True))
                                            for r in rec["allocated"]]},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [rec["boundTo"]]}]}]}},
                    "reservedFor": [{"resource": "pods", "name": pod["metadata"]["name"],
                                     "uid": pod["metadata"]["uid"]}]}
        if i <= settled:
            gone.update(rec["preempted"])
    snapshot["items"] = [i for i in snapshot["items"]
                         if i["kind"] != "Pod" or f"{i['metadata']['namespace']}/{i['metadata']['name']}" not in gone]
    return recorded, snapshot


def state_of(snapshot: dict[str, Any]) -> ClusterState:
    return load_snapshot("-", io.BytesIO(json.dumps(snapshot).encode()))


def queue_plans(state: ClusterState) -> list[Plan]:
    return plan_pending(state, pending_pods_to_plan(state, all_pending=True))


def memo_free_plans(state: ClusterState) -> list[Plan]:
    planner = Planner(state, memoize=False, prune=False)
    return list(plan_queue(planner, pending_pods_to_plan(state, all_pending=True), *gang_lookups(state)))


def as_recorded(plan: Plan, rec: dict[str, Any], running_on: dict[str, str]) -> bool:
    """Asserts `plan` is what the scheduler did (`rec`), or one of the answers it ties with; whether it
    is the very one (else the queue is replayed on from what the scheduler did)."""
    key, bound = plan.pod.key, rec["boundTo"]
    if bound is None:
        assert plan.outcome == "infeasible", key
        assert plan.message.startswith(rec["podScheduled"]["message"]), key
        return True
    if rec["preempted"]:
        assert plan.outcome == "evict", key
        if plan.node == bound:
            assert sorted(v.pod.key for v in plan.victims) == rec["preempted"], key
            return True
        runner = next(r for r in plan.runners_up if r.node == bound)
        assert runner.tier == plan.tier, (key, runner)
        assert runner.reason.startswith("it ties with") or runner.reason.split(":")[0] in KRESCHED_ONLY, \
            (key, runner)
        assert runner.victims == len(rec["preempted"]), key
        assert {running_on[v] for v in rec["preempted"]} == {bound}, key
        return False
    assert plan.outcome == "fits", key
    if plan.node == bound:
        devices = [[g.request, g.driver, g.pool, g.device] for g in plan.devices or ()]
        assert devices == rec.get("allocated", []), key
        return True
    assert bound in plan.candidates, (key, plan.node, plan.candidates, bound)
    return False


def assert_queue_as_recorded(name: str, plans_of: Callable[[ClusterState], list[Plan]]) -> int:
    """Every pod of the scene's queue planned as the scheduler placed it (`as_recorded`), replaying the
    queue on from what the scheduler did after each tie it broke otherwise; how many replays."""
    settled, replays = 0, 0
    recorded = json.loads((FIXTURES / name / "recorded.json").read_bytes())
    while settled < len(recorded["released"]):
        _, snapshot = replayed(name, settled)
        running_on = {f"{i['metadata']['namespace']}/{i['metadata']['name']}": i["spec"].get("nodeName")
                      for i in snapshot["items"] if i["kind"] == "Pod"}
        plans = plans_of(state_of(snapshot))
        replays += 1
        assert [p.pod.key for p in plans] == recorded["released"][settled:]
        for plan in plans:
            settled += 1
            if not as_recorded(plan, recorded["pods"][plan.pod.key], running_on):
                break
    return replays


@pytest.mark.parametrize("name", SCENES)
def test_every_pod_is_planned_as_the_scheduler_placed_it(name: str) -> None:
    assert assert_queue_as_recorded(name, queue_plans) == REPLAYS[name]


@pytest.mark.parametrize("name", SCENES)
def test_a_planner_without_its_memos_agrees_too(name: str) -> None:
    assert assert_queue_as_recorded(name, memo_free_plans) == REPLAYS[name]


@pytest.mark.parametrize("name", SCENES)
def test_plan_all_pending_on_the_command_line_plans_the_same(name: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _, snapshot = replayed(name)
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot))
    try:
        r = run_cli(monkeypatch, "plan", "--all-pending", "--snapshot", str(path), "-o", "json")
    finally:
        reset_env()
    plans = queue_plans(state_of(snapshot))
    assert r.exit_code == (3 if any(p.outcome == "infeasible" for p in plans) else 0), r.stderr
    assert [(p["pod"], p["outcome"], p["node"], p["candidates"], [v["pod"] for v in p["victims"]])
            for p in json.loads(r.stdout)["plans"]] == \
        [(p.pod.key, p.outcome, p.node, list(p.candidates), [v.pod.key for v in p.victims]) for p in plans]
