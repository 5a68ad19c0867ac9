"""Every gang scene recorded on the real kube-scheduler v1.36.2 with the gates on, replayed through
kresched's plan and explain with the same gates (issue 43 item 2: "exact where the gates are on").

Each `tests/fixtures/rig-gang/<scene>/` holds the cluster as the scheduler saw it before the held
pods were released (`snapshot.json`: the pods still carry the recorder's scheduling gate) and what
the scheduler then did (`recorded.json`; the fixture README says how it was recorded). A replay
removes the gate from the pods `released` lists and gives them creation times in release order:
the recorder released them with the scheduler stopped so that its first pod-group cycle saw them
all, in that order — as when a controller creates them ungated one after the other. kresched then
plans every pending pod and explains each released one, with `--feature-gates
GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true`.

What is compared, for every scene:

* which pods bind — a gang all or none — and where: the nodes they were bound to (where the
  scheduler picked among tied nodes, the recorded node is one of the nodes kresched says tie);
* the scheduler's words: each pod's first `FailedScheduling` message (the first cycle's, on the
  cluster of the snapshot) is explain's scheduler message word for word, and a pod the scheduler
  wrote nothing for gets none; the PodGroup's first `PodGroupScheduled` condition and its last;
* workload-aware preemption's victims (the PodGroup's priority, units, PDBs as upstream weighs them);
* for a single pod, the victims of the scheduler's own per-pod preemption and the running gang it
  breaks, which kresched names.

A scene where the recording shows what no snapshot can tell (a PodGroup created later, the gates
removed seconds apart) is replayed in the steps the recording shows.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kresched.model.cluster import ClusterState
from kresched.plan.explain import Explanation, explain_pod
from kresched.plan.plans import Plan, PlanOptions
from kresched.plan.queue import pending_pods_to_plan, plan_pending
from kresched.sched.features import parse_feature_gates
from kresched.sched.profile import Profiles
from kresched.sources.snapshot import load_snapshot
from tests.clirun import Result, reset_env, run_cli

FIXTURES = Path(__file__).parents[1] / "fixtures" / "rig-gang"
SCENES = sorted(p.name for p in FIXTURES.iterdir() if (p / "recorded.json").is_file())
GATES = "GenericWorkload=true,GangScheduling=true,WorkloadAwarePreemption=true"

#: Replayed in steps below: what the scheduler did depends on when things happened.
STEPPED = {"slow-release", "missing-podgroup", "missing-podgroup-never-gated"}
#: Scenes whose preemptor is a single pod (per-pod preemption, a running gang its victim).
SINGLE_PREEMPTS = {"single-preempts-member-pod", "single-preempts-member-podgroup",
                   "single-prefers-member-over-older-pod-pod", "single-prefers-member-over-older-pod-podgroup"}
#: Where the recording says which victims the scheduler took is a tie: the victims must be that many
#: of these (README: "which two of the three members are preempted is a tie").
#: Where which victim goes first is a tie (equal priority and start time), and so which member lands where:
#: the members take the victims' nodes, in some order (README notes: "which low pod first and which member
#: to which node are ties").
PLACEMENT_TIES = {"basic-podgroup-preempts"}
VICTIM_TIES = {"wap-breaks-running-gang-pod": (2, {"default/train-a1", "default/train-a2", "default/train-b1"})}


@dataclass(frozen=True)
class Replay:
    name: str
    recorded: dict[str, Any]
    state: ClusterState
    profiles: Profiles

    def pod(self, key: str) -> dict[str, Any]:
        return self.recorded["pods"][key]

    @property
    def pending(self) -> list[str]:
        return [p.key for p in pending_pods_to_plan(self.state, all_pending=True)]

    def plans(self) -> list[Plan]:
        return plan_pending(self.state, pending_pods_to_plan(self.state, all_pending=True),
                            PlanOptions(profiles=self.profiles))

    def explain(self, key: str) -> Explanation:
        return explain_pod(self.state, self.state.pod(key), profiles=self.profiles)


def replayed(name: str, released: list[str] | None = None, extra: Sequence[dict[str, Any]] = ()
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scene's recording, and its snapshot with `released` (default: the recording's) ungated and
    created in that order after every other pod, `extra` objects added."""
    recorded = json.loads((FIXTURES / name / "recorded.json").read_bytes())
    snapshot = json.loads((FIXTURES / name / "snapshot.json").read_bytes())
    if released is None:
        released = recorded["released"]
    pods = {f"{i['metadata']['namespace']}/{i['metadata']['name']}": i for i in snapshot["items"] if i["kind"] == "Pod"}
    newest = max(datetime.fromisoformat(p["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
                 for p in pods.values())
    for i, key in enumerate(released, 1):
        pod = pods[key]
        del pod["spec"]["schedulingGates"]
        pod["metadata"]["creationTimestamp"] = (newest + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
    snapshot["items"] += extra
    return recorded, snapshot


def replay(name: str, released: list[str] | None = None, extra: Sequence[dict[str, Any]] = (),
           podgroups_listed: bool = False) -> Replay:
    """`replayed` as kresched reads it; `podgroups_listed`: the source says it listed PodGroups (as
    the live source does) even where it found none."""
    recorded, snapshot = replayed(name, released, extra)
    state = load_snapshot("-", io.BytesIO(json.dumps(snapshot).encode()))
    if podgroups_listed:
        state = replace(state, gang_kinds=state.gang_kinds | {"PodGroup"})
    return Replay(name, recorded, state, replace(Profiles.default(), gates=parse_feature_gates(GATES)))


def failed_scheduling(pod: dict[str, Any]) -> list[str]:
    return [e["message"] for e in pod["events"] if e["reason"] == "FailedScheduling"]


def condition(c: Any) -> dict[str, str] | None:
    return None if c is None else {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}


def placed(plans: list[Plan]) -> list[Plan]:
    return [p for p in plans if p.outcome != "infeasible"]


def tied(plan: Plan) -> set[str]:
    return {plan.node, *plan.candidates} if plan.node else set()


def assert_bound_where_recorded(r: Replay, plans: list[Plan]) -> None:
    """The pods that bind are those the scheduler bound (a gang all or none), on the nodes it bound
    them to. Once the scheduler picked among tied nodes, later pods may land elsewhere too: from the
    first tie on, each recorded node is one kresched says some pod of the scene ties on."""
    bound = {k for k in r.pending if r.pod(k)["boundTo"]}
    assert {p.pod.key for p in placed(plans)} == bound
    everywhere = set().union(*(tied(p) for p in placed(plans))) if bound else set()
    tie = r.name in PLACEMENT_TIES
    if tie:
        assert sorted(p.node for p in placed(plans)) == sorted(r.pod(k)["boundTo"] for k in bound)
    for p in placed(plans):
        recorded = r.pod(p.pod.key)["boundTo"]
        tie = tie or len(p.candidates) > 1
        if tie:
            assert recorded in everywhere, p.pod.key
        else:
            assert p.node == recorded, p.pod.key


# -- every scene -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(set(SCENES) - STEPPED - SINGLE_PREEMPTS))
def test_the_pods_that_bind_are_those_the_scheduler_bound_where_it_bound_them(name: str) -> None:
    r = replay(name)
    plans = r.plans()
    assert {p.pod.key for p in plans} == set(r.pending)
    assert_bound_where_recorded(r, plans)
    # A pod left Pending: its plan starts with what the scheduler wrote for it, word for word.
    for p in plans:
        said = failed_scheduling(r.pod(p.pod.key))
        if p.outcome == "infeasible" and said:
            assert p.message.startswith(said[0]), p.pod.key


@pytest.mark.parametrize("name", sorted(set(SCENES) - STEPPED))
def test_explain_writes_what_the_scheduler_wrote_word_for_word(name: str) -> None:
    r = replay(name)
    for key in r.recorded["released"] or r.pending:
        said = failed_scheduling(r.pod(key))
        expl = r.explain(key)
        if said:
            assert expl.scheduler_message == said[0], key
        else:
            assert expl.scheduler_message is None, key
            if not r.pod(key)["boundTo"]:  # nothing written and never bound: a silent wait, said in kresched's words
                assert expl.group is not None, key
                assert expl.group.wait is not None, key
            if r.pod(key)["boundTo"] and name not in SINGLE_PREEMPTS:
                group = expl.group.members if expl.group is not None else ()
                assert r.pod(key)["boundTo"] in {expl.predicted, *expl.candidates, *(n for _, n in group)}, key


@pytest.mark.parametrize("name", sorted(set(SCENES) - STEPPED))
def test_the_pod_groups_condition_is_the_one_the_scheduler_wrote(name: str) -> None:
    r = replay(name)
    for key in r.recorded["released"] or r.pending:
        group = r.explain(key).group
        pod = r.state.pod(key)
        if pod.spec.scheduling_group is None:
            assert group is None
            continue
        assert group is not None
        assert group.fallback is None
        recorded = r.recorded["podGroups"].get(group.key.removeprefix("PodGroup "),
                                               {"conditions": [], "conditionsSeen": []})
        seen, final = recorded["conditionsSeen"], recorded["conditions"]
        assert condition(group.condition) == (seen[0] if seen else None), key
        assert condition(group.final_condition) == (final[-1] if final else None), key


@pytest.mark.parametrize("name", sorted(set(SCENES) - STEPPED - SINGLE_PREEMPTS))
def test_the_victims_are_workload_aware_preemptions(name: str) -> None:
    r = replay(name)
    victims = [v.pod.key for p in r.plans() for v in p.victims]
    preempted = {p["pod"] for p in r.recorded["preempted"]}
    for p in r.recorded["preempted"]:
        assert p["by"].startswith("Preempted by podgroup ")
    assert len(victims) == len(set(victims))
    if name in VICTIM_TIES:
        count, among = VICTIM_TIES[name]
        assert len(victims) == count == len(preempted)
        assert set(victims) <= among
        assert preempted <= among
    else:
        assert set(victims) == preempted
    # explain sees the same victims in the group's turn.
    for key in r.recorded["released"]:
        group = r.explain(key).group
        if group is not None:
            assert {v.key for v in group.victims} == set(victims)


# -- per-pod preemption breaks a running gang ----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SINGLE_PREEMPTS))
def test_the_schedulers_own_preemption_takes_a_gang_member_and_kresched_names_the_gang_it_breaks(name: str) -> None:
    r = replay(name)
    [key] = r.recorded["released"]
    [victim] = [p["pod"] for p in r.recorded["preempted"]]
    assert r.recorded["preempted"][0]["by"].startswith("Preempted by pod ")
    gang = r.state.gangs.gang_of(r.state.pod(victim))
    assert gang is not None
    expl = r.explain(key)
    found = expl.scheduler_preemption
    assert found is not None
    assert found.breaks_gangs
    # The recorded victim is the scheduler's choice, or one of the tied choices, and each breaks the gang.
    choices = {tuple(v.key for v in c.victims): c.node for c in found.candidates}
    assert choices[(victim,)] == r.pod(key)["boundTo"] == r.pod(victim)["boundTo"]
    for breaks in found.breaks:
        assert [b.gang for b in breaks] == [gang.key]
    assert any(f"breaks {gang.key} (minCount {gang.min_count}" in n for n in expl.notes)
    [plan] = r.plans()
    assert any(f"breaks {gang.key} (minCount {gang.min_count}" in n for n in plan.notes)


@pytest.mark.parametrize(("name", "left"), [("wap-breaks-running-gang-pod", 1),
                                            ("wap-breaks-running-gang-podgroup", None)])
def test_workload_aware_preemption_leaving_a_running_gang_below_min_count_names_it(name: str, left: int | None) -> None:
    # disruptionMode Pod: two of train's three members go, one keeps running below minCount 3 (recorded:
    # its PodGroup stays PodGroupScheduled=True). disruptionMode PodGroup: the whole gang goes, nothing is left.
    r = replay(name)
    plans = r.plans()
    said = {p.gang.message for p in plans if p.gang is not None}
    expl = {r.explain(k).group.summary for k in r.recorded["released"]}  # type: ignore[union-attr]
    broken = f"breaks PodGroup default/train (minCount 3, 3 running): {left} would keep running, below its minCount"
    for text in said | expl:
        assert (broken in text) is (left is not None), text
        assert ("breaks PodGroup" in text) is (left is not None), text
    kept = [k for k, p in r.recorded["pods"].items() if k.startswith("default/train-") and not p.get("deleted")]
    assert len(kept) == (left or 0)


# -- scenes in steps ---------------------------------------------------------------------------------------


def test_slow_release_a_member_alone_waits_for_the_others_then_all_bind() -> None:
    # gang-0 released alone: its own cycle writes the Permit wait and a False condition.
    first = replay("slow-release", released=["default/gang-0"])
    recorded = first.recorded
    expl = first.explain("default/gang-0")
    assert expl.scheduler_message == failed_scheduling(recorded["pods"]["default/gang-0"])[0]
    assert expl.group is not None
    assert condition(expl.group.condition) == recorded["podGroups"]["default/gang"]["conditionsSeen"][0]
    assert placed(first.plans()) == []
    # Ten seconds later the others: all three bind.
    then = replay("slow-release")
    assert_bound_where_recorded(then, then.plans())
    group = then.explain("default/gang-1").group
    assert group is not None
    assert condition(group.final_condition) == recorded["podGroups"]["default/gang"]["conditions"][-1]


def ghost_pod_group() -> dict[str, Any]:
    """The PodGroup `missing-podgroup` created 15 s after the release (README: gang, minCount 1)."""
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": "ghost", "namespace": "default", "uid": "ghost-uid",
                         "creationTimestamp": "2026-12-02T05:00:00Z"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}}}


@pytest.mark.parametrize("name", ["missing-podgroup", "missing-podgroup-never-gated"])
def test_a_pod_whose_pod_group_is_missing_waits_silently(name: str) -> None:
    r = replay(name, podgroups_listed=True)
    recorded = r.recorded
    before = recorded.get("beforePodGroupCreated", {"events": []})
    assert before["events"] == []
    assert failed_scheduling(r.pod("default/orphan")) == []
    expl = r.explain("default/orphan")
    assert expl.scheduler_message is None
    assert expl.group is not None
    assert expl.group.wait is not None
    assert "PodGroup default/ghost, which does not exist" in expl.group.wait
    assert placed(r.plans()) == []


def test_a_snapshot_without_pod_groups_cannot_say_the_pod_group_is_missing() -> None:
    # A kubectl list holds no trace of a kind it listed empty: kresched says it does not know and plans
    # by its own rule (docs/differences.md).
    r = replay("missing-podgroup")
    expl = r.explain("default/orphan")
    assert expl.group is not None
    assert expl.group.fallback is not None
    assert "whether PodGroup default/ghost exists is unknown" in expl.group.fallback


def test_once_the_missing_pod_group_exists_the_pod_binds() -> None:
    r = replay("missing-podgroup", extra=[ghost_pod_group()])
    plans = r.plans()
    assert_bound_where_recorded(r, plans)
    group = r.explain("default/orphan").group
    assert group is not None
    assert group.fallback is None
    assert condition(group.final_condition) == r.recorded["podGroups"]["default/ghost"]["conditions"][-1]


# -- the CLI -------------------------------------------------------------------------------------------------


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Result]]:
    yield lambda *args: run_cli(monkeypatch, *args)
    reset_env()


def test_plan_and_explain_json_say_what_the_schedulers_cycle_does(cli: Callable[..., Result], tmp_path: Path) -> None:
    recorded, snapshot = replayed("wap-breaks-running-gang-pod")
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot))
    r = cli("plan", "--all-pending", "--snapshot", str(path), "--feature-gates", GATES, "-o", "json")
    out = json.loads(r.stdout)
    [gang] = out["gangs"]
    assert gang["gang"] == "PodGroup default/big"
    assert gang["scheduler"] is True
    final = recorded["podGroups"]["default/big"]["conditions"][-1]
    assert gang["condition"] == final
    assert sorted(v["pod"] for p in out["plans"] for v in p["victims"]) == sorted(
        p["pod"] for p in recorded["preempted"])
    assert "breaks PodGroup default/train" in gang["message"]
    r = cli("explain", "default/big-0", "--snapshot", str(path), "--feature-gates", GATES, "-o", "json")
    out = json.loads(r.stdout)
    assert out["schedulerMessage"] == failed_scheduling(recorded["pods"]["default/big-0"])[0]
    group = out["podGroup"]
    assert group["simulated"] is True
    assert group["condition"] == recorded["podGroups"]["default/big"]["conditionsSeen"][0]
    assert group["finalCondition"] == final
    assert sorted(group["victims"]) == sorted(p["pod"] for p in recorded["preempted"])
    # Without the gates, kresched's own rule: no podGroup, no scheduler's condition.
    r = cli("explain", "default/big-0", "--snapshot", str(path), "-o", "json")
    assert "podGroup" not in json.loads(r.stdout)


def test_explain_json_names_the_gang_the_schedulers_per_pod_preemption_breaks(cli: Callable[..., Result],
                                                                               tmp_path: Path) -> None:
    recorded, snapshot = replayed("single-preempts-member-pod")
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot))
    r = cli("explain", "default/urgent", "--snapshot", str(path), "--feature-gates", GATES, "-o", "json")
    out = json.loads(r.stdout)
    [victim] = [p["pod"] for p in recorded["preempted"]]
    assert out["schedulerPreemption"]["nodes"] == [
        {"node": recorded["pods"][victim]["boundTo"], "victims": [victim],
         "gangsBroken": [{"gang": "PodGroup default/train", "minCount": 3, "running": 3, "evicted": [victim]}]}]


@pytest.mark.parametrize("name", ["job-indexed-gang", "job-indexed-gang-too-big", "job-indexed-gang-preempts",
                                  "job-nonindexed"])
def test_a_what_if_of_the_scenes_job_comes_to_what_its_controller_and_scheduler_did(
        cli: Callable[..., Result], tmp_path: Path, name: str) -> None:
    # The cluster before the Job existed (the scene's snapshot without the Job, what its controller made
    # and its pods), and the Job itself without the recorder's gate: `plan -f` with the gates the rig ran.
    recorded, snapshot = replayed(name, released=[])
    [job] = [i for i in snapshot["items"] if i["kind"] == "Job"]
    made = {i["metadata"].get("uid") for i in snapshot["items"] if i["kind"] in ("Workload", "PodGroup")}
    snapshot["items"] = [i for i in snapshot["items"] if i["kind"] not in ("Job", "Workload", "PodGroup")
                         and not (i["kind"] == "Pod" and f"default/{i['metadata']['name']}" in recorded["released"])
                         and i["metadata"].get("uid") not in made]
    job["spec"]["template"]["spec"].pop("schedulingGates", None)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": job["metadata"]["name"],
                                                                   "namespace": job["metadata"]["namespace"]},
           "spec": {k: job["spec"][k] for k in ("parallelism", "completions", "completionMode", "template")}}
    (tmp_path / "cluster.json").write_text(json.dumps(snapshot))
    (tmp_path / "job.json").write_text(json.dumps(job))
    r = cli("plan", "-f", str(tmp_path / "job.json"), "--snapshot", str(tmp_path / "cluster.json"), "-o", "json",
            "--feature-gates", GATES + ",WorkloadWithJob=true")
    [w] = json.loads(r.stdout)["workloads"]
    bound = [p for k, p in recorded["pods"].items() if k in recorded["released"] and p["boundTo"]]
    assert w["pending"] == len(recorded["released"]) - len(bound)
    assert sorted(n for n, c in w["placed"].items() for _ in range(c)) == sorted(p["boundTo"] for p in bound)
    assert [v for p in w["plans"] for v in p["victims"]] == recorded["preempted"] == []
    groups = list(recorded["podGroups"].values())
    if groups:  # an Indexed Job of completions == parallelism: the controller's gang, as the scheduler left it
        assert w["gang"]["scheduler"] is True
        assert w["gang"]["condition"] == groups[0]["conditions"][-1]
    else:
        assert "gang" not in w
