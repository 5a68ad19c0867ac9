"""`kresched preempt` of a gang against what it did on the real control plane, gates off (issue 43,
"Verified how"): a coscheduling gang of 3 on a cluster whose every node is full of lower-priority
pods gets room for all three at once and all bind; a gang of 4 that cannot fit evicts nothing.

Each `tests/fixtures/rig/preempt-gang-*.json` was recorded on the rig (see `test_rig_flows`), with
a kube-scheduler whose profile has no DefaultPreemption (`schedulerConfig`), so that every
eviction was kresched's. Here kresched plans the same gang on the same objects and must predict
what happened; the scheduler's messages are compared word for word.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
import yaml

from kresched.errors import ExitCode
from kresched.model.cluster import ClusterState
from kresched.plan.explain import explain_pod
from kresched.plan.placement import replacement_of
from kresched.plan.plans import RESERVATION_TAINT, PlanOptions
from kresched.plan.queue import gang_lookups, plan_pending
from kresched.sched.config import parse_scheduler_config
from kresched.sched.profile import Profiles, build_profiles
from tests.clirun import run_cli
from tests.test_rig_flows import scene


def profiles(data: dict) -> Profiles:
    return build_profiles(*parse_scheduler_config(data["schedulerConfig"]), "schedulerConfig")


def gang_plans(data: dict, state: ClusterState) -> list:
    ns, name = data["gang"].split("/")
    [gang] = state.gangs.find(ns, name)
    return plan_pending(state, gang_lookups(state)[1](gang), PlanOptions(profiles=profiles(data)))


def test_the_scheduler_could_not_place_a_member_and_said_so_as_kresched_does():
    data, state = scene("preempt-gang-of-3")
    member = state.pod(data["pods"][0])
    expl = explain_pod(state, member, profiles=profiles(data))
    assert data["schedulerMessage"].startswith(expl.message)
    assert expl.message == "0/3 nodes are available: 3 Insufficient cpu."


def test_the_gang_of_3_is_planned_whole_and_its_room_is_where_the_scheduler_bound_it():
    data, state = scene("preempt-gang-of-3")
    plans = gang_plans(data, state)
    assert sorted(p.pod.key for p in plans) == data["pods"]
    assert {p.outcome for p in plans} == {"evict"}
    assert plans[0].gang is not None
    assert plans[0].gang.kept
    assert plans[0].gang.min_count == data["minMember"]
    assert sorted(v.pod.key for p in plans for v in p.victims) == data["evicted"]
    # The room made is the nodes the workers were bound to (alike workers take it in any order).
    assert sorted(p.node for p in plans) == sorted(b["spec"]["nodeName"] for b in data["bound"])
    for b in data["bound"]:
        zone = state.node_by_name[b["spec"]["nodeName"]].labels["topology.kubernetes.io/zone"]
        assert b["metadata"]["labels"]["topology.kubernetes.io/zone"] == zone


def test_the_reservation_kept_the_room_from_the_victims_replacements_in_the_schedulers_words():
    # The cluster as the scheduler saw it once the victims were gone: every node reserved (kresched's
    # taint), the replacements Pending. kresched explains one as the scheduler did.
    data, state = scene("preempt-gang-of-3")
    gone = set(data["evicted"])
    nodes = [msgspec.structs.replace(n, spec=msgspec.structs.replace(n.spec, taints=(*n.spec.taints,
                                                                                      RESERVATION_TAINT)))
             for n in state.nodes]
    replacement = replacement_of(state.pod(data["evicted"][0]))
    reserved = ClusterState.build(nodes, [*(p for p in state.pods if p.key not in gone), replacement],
                                  state.pdbs, state.priority_classes, state.namespaces, state.workloads,
                                  state.storage, state.dra)
    expl = explain_pod(reserved, reserved.pod(replacement.key), profiles=profiles(data))
    assert expl.message == "0/3 nodes are available: 3 node(s) had untolerated taint(s)."
    assert data["replacementMessage"].startswith(expl.message)


def test_the_gang_that_cannot_start_is_given_up_whole_as_the_real_run_did():
    data, state = scene("preempt-gang-that-cannot-start")
    plans = gang_plans(data, state)
    assert sorted(p.pod.key for p in plans) == data["pods"]
    assert {p.outcome for p in plans} == {"infeasible"}
    assert not any(p.victims for p in plans)
    assert data["message"] == f"PodGroup {data['gang']} cannot start: {plans[0].gang.message}"
    # Nothing was evicted: every pod that ran before runs on after, where it was.
    before = {p.key: (p.uid, p.node_name) for p in state.pods if p.node_name}
    after = {a["pod"]: (a["uid"], a["nodeName"]) for a in data["after"] if a["nodeName"]}
    assert after == before
    assert data["evicted"] == []


@pytest.mark.parametrize("name", ["preempt-gang-of-3", "preempt-gang-that-cannot-start"])
def test_preempt_rehearsed_on_the_recorded_cluster_does_what_the_real_run_did(name, monkeypatch, tmp_path: Path):
    data, _ = scene(name)
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps(data["snapshot"]))
    config = tmp_path / "scheduler.yaml"
    config.write_text(yaml.safe_dump(data["schedulerConfig"]))
    run = run_cli(monkeypatch, "preempt", "podgroup/train", "-n", "ml", "--snapshot", str(snapshot),
                  "--scheduler-config", str(config), "--dry-run", "-o", "json")
    summary = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")][-1]
    assert sorted(summary["evicted"]) == data["evicted"]
    if data["evicted"]:
        assert run.exit_code == ExitCode.OK, run.stdout + run.stderr
        assert summary["outcome"] == "simulated"
        assert sorted(m["pod"] for m in summary["members"]) == data["pods"]
    else:
        assert run.exit_code == data["exitCode"]
        assert summary["message"] == f"{data['message']} (dry run)"
