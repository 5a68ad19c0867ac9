"""`kresched preempt` of a gang end to end (issue 43, items 3 and 6): the real command, the official
client and real HTTP against the fake API server, whose scheduler binds each pod once it fits (the
gates off: no gang scheduling, pod by pod, as a default scheduler does), honouring kresched's
reservation taint.

The scenario (`seed_gang`): three 4-CPU nodes, each full of one 3-CPU low-priority pod (priority
100, grace 5 s, a ReplicaSet's). The Pending training job `ml/train` (a Job's workers, 3 CPU each,
priority 1000, tolerating CriticalAddonsOnly) is a coscheduling gang: each worker carries the
label `scheduling.x-k8s.io/pod-group: train` (the PodGroup object is not read: its minCount is
taken as every member). Three workers fit, one on each node, once each node's pod goes; a fourth
cannot fit anywhere.
"""

from __future__ import annotations

import re

import pytest

from kresched.errors import ExitCode
from tests.builders import gang_member, make_namespace, make_node, make_pdb, make_pod, make_state
from tests.clirun import DURATION
from tests.execute.conftest import body, kresched_annotations, pod, taints, writes
from tests.fakeapi import NODES as NODE_OBJECTS
from tests.fakeapi import PDBS, FakeApiServer, call, status
from tests.fakeapi import PODS as PODS_OBJECTS
from tests.fakeapi.controllers import NEVER
from tests.fakeapi.events import events

OURS = {"key": "CriticalAddonsOnly", "value": "kresched", "effect": "NoSchedule"}
TOLERATES = [{"key": "CriticalAddonsOnly", "operator": "Exists"}]
NODES = ["node-a", "node-b", "node-c"]
GANG = "PodGroup ml/train"
REF = "podgroup/ml/train"


def worker(i: int, *, tolerations: list | None = TOLERATES, **kw) -> object:
    return make_pod(f"train-{i}", "ml", cpu="3", priority=1000, owner="Job/train", tolerations=tolerations,
                    **gang_member("train", flavor="coscheduling"), **kw)


def seed_gang(fake: FakeApiServer, workers: int = 3, *, holders: list[str] = NODES, extra: list | None = None,
              tolerations: list | None = TOLERATES, extra_nodes: list | None = None, pdbs: list | None = None) -> None:
    nodes = [make_node(n, cpu="4") for n in NODES] + (extra_nodes or [])
    running = [make_pod(f"low-{n[-1]}", "batch", node=n, cpu="3", priority=100, grace=5, owner="ReplicaSet/low-7d",
                        labels={"app": f"low-{n[-1]}"}) for n in holders]
    pending = [worker(i, tolerations=tolerations) for i in range(workers)]
    fake.load(make_state(nodes, [*running, *pending, *(extra or [])], pdbs or [], [],
                         [make_namespace("ml"), make_namespace("batch")]))


@pytest.fixture
def gang3(fake_api: FakeApiServer) -> FakeApiServer:
    seed_gang(fake_api)
    fake_api.controllers.start()
    return fake_api


def preempt(cli, target: str = "ml/train-0", *extra: str):
    return cli("preempt", target, "--yes", "-o", "json", "--timeout", "20s", *extra)


def no_reservations(fake: FakeApiServer) -> bool:
    return all(OURS not in taints(fake, n) and not kresched_annotations(fake, n) for n in NODES)


# -- the whole gang --------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["ml/train-1", "podgroup/train -n ml", "pg.scheduling.x-k8s.io/train -n ml",
                                    "job/train -n ml"])
def test_room_is_made_for_every_member_at_once_and_each_is_bound(gang3, cli, target):
    run = preempt(cli, *target.split())
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    s = run.summary
    assert (s["gang"], s["outcome"], s["minCount"], s["bound"]) == (GANG, "bound", 3, 3)
    assert sorted(s["evicted"]) == ["batch/low-a", "batch/low-b", "batch/low-c"]
    assert [m["pod"] for m in s["members"]] == ["ml/train-0", "ml/train-1", "ml/train-2"]
    assert all(m["outcome"] == "bound" and m["node"] == m["plannedNode"] for m in s["members"])
    assert sorted(m["node"] for m in s["members"]) == NODES
    assert re.fullmatch(rf"PodGroup ml/train: all 3 members bound in {DURATION} after evicting 3 pods", s["message"])
    # Every node reserved for the gang before the first eviction, every reservation gone at the end.
    actions = [a for a in run.actions() if a not in ("plan", "watch")]
    assert actions[:4] == ["revalidated", "reserved", "reserved", "reserved"]
    assert actions[4:7] == ["evicted"] * 3
    assert actions[7] == "waiting"
    assert sorted(s["reserved"]) == NODES
    assert sorted(s["released"]) == NODES
    assert s["reservationsRemoved"] is True
    assert no_reservations(gang3)
    reserve = [body(r) for r in gang3.requests if r.method == "PATCH"][:3]
    assert {p["metadata"]["annotations"]["kresched.io/reserved-for"] for p in reserve} == {REF}
    assert all(p["spec"]["taints"] == [OURS] for p in reserve)
    assert sorted(n for _, n in gang3.scheduler.bindings) == NODES


def test_the_plan_shows_the_gang_and_how_many_of_its_members_run(gang3, cli):
    run = preempt(cli)
    [plan] = run.events("plan")
    [gang] = plan["gangs"]
    assert (gang["gang"], gang["kept"], gang["minCount"], gang["placed"]) == (GANG, True, 3, 3)
    assert gang["pods"] == ["ml/train-0", "ml/train-1", "ml/train-2"]
    assert gang["message"] == "all 3 members of PodGroup ml/train would run (minCount 3): 3 after evicting 3 pods"


def test_a_gang_that_cannot_start_evicts_nothing_and_exits_3_with_the_gangs_reason(fake_api, cli):
    seed_gang(fake_api, workers=4)
    fake_api.controllers.start()
    run = preempt(cli)
    assert run.code == ExitCode.INFEASIBLE
    assert writes(fake_api) == []
    assert run.summary["outcome"] == "infeasible"
    assert run.summary["evicted"] == []
    assert run.summary["message"] == (
        "PodGroup ml/train cannot start: 3 of 4 members of PodGroup ml/train fit after evictions (minCount 4); a "
        "gang runs all or nothing: nothing evicted")
    assert all(pod(fake_api, f"batch/low-{n}") is not None for n in "abc")


def test_a_dry_run_rehearses_the_whole_gang_and_changes_nothing(gang3, cli):
    run = preempt(cli, "ml/train-0", "--dry-run")
    assert run.code == ExitCode.OK, run.stderr
    assert writes(gang3) == []
    assert run.summary["outcome"] == "simulated"
    assert run.summary["message"] == "PodGroup ml/train: 3 members would be bound after evicting 3 pods (dry run)"
    assert [m["outcome"] for m in run.summary["members"]] == ["simulated"] * 3


# -- some members do not bind --------------------------------------------------------------------------

def test_a_member_that_never_binds_is_partly_done_exit_4_naming_it_and_every_reservation_goes(gang3, cli):
    gang3.scheduler.set("ml/train-2", NEVER)
    run = preempt(cli, "ml/train-0", "--timeout", "2s")
    assert run.code == ExitCode.PARTIAL
    s = run.summary
    assert (s["outcome"], s["bound"]) == ("partial", 2)
    outcomes = {m["pod"]: m["outcome"] for m in s["members"]}
    assert outcomes == {"ml/train-0": "bound", "ml/train-1": "bound", "ml/train-2": "timeout"}
    assert re.fullmatch(rf"PodGroup ml/train: only 2 of 3 members bound after {DURATION} after evicting 3 pods; not "
                        r"bound: ml/train-2 \(2 running, minCount 3: the gang does not run\)", s["message"])
    [partial] = run.events("gang-partial")
    assert partial["notBound"] == ["ml/train-2"]
    assert no_reservations(gang3)
    assert s["reservationsRemoved"] is True


def test_no_member_bound_by_the_timeout_is_exit_4_too(gang3, cli):
    for i in range(3):
        gang3.scheduler.set(f"ml/train-{i}", NEVER)
    run = preempt(cli, "ml/train-0", "--timeout", "1s")
    assert run.code == ExitCode.PARTIAL
    assert run.summary["outcome"] == "timeout"
    assert run.summary["message"].startswith("PodGroup ml/train: no member bound after ")
    assert no_reservations(gang3)


# -- faults -------------------------------------------------------------------------------------------

def test_a_429_on_one_victim_is_retried_and_the_gang_still_binds(gang3, cli):
    gang3.faults.script([status(429, "Too many requests")], path="/api/v1/namespaces/batch/pods/low-b/eviction",
                        method="POST")
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stdout
    assert [r.status for r in gang3.calls("/api/v1/namespaces/batch/pods/low-b/eviction")] == [429, 201]
    assert run.summary["outcome"] == "bound"
    assert no_reservations(gang3)


def test_a_budget_that_keeps_refusing_one_victim_re_plans_the_gang_and_stops_without_waiting(fake_api, cli):
    # low-b's PodDisruptionBudget allows one disruption when planned, none once the run evicts: the
    # run gives up on low-b, plans the gang again (low-a and low-c are gone), finds that without
    # low-b the gang cannot start, and stops instead of waiting out bindings that cannot all come.
    seed_gang(fake_api, pdbs=[make_pdb("low-b", "batch", selector={"app": "low-b"}, max_unavailable=1,
                                       disruptions_allowed=1)])
    fake_api.controllers.start()
    path = "/api/v1/namespaces/batch/pods/low-b/eviction"
    fake_api.faults.script([call(lambda r: fake_api.store.mutate(
        PDBS, "batch", "low-b", lambda b: b["status"].update(disruptionsAllowed=0)))], path=path, method="POST")
    run = preempt(cli, "ml/train-0", "--eviction-timeout", "1s", "--timeout", "5m")
    assert run.code == ExitCode.PARTIAL, run.stdout
    assert {r.status for r in fake_api.calls(path)} == {429}
    assert run.summary["outcome"] == "gave-up"
    assert run.summary["pdbBlocked"] == [{"pod": "batch/low-b", "pdb": "batch/low-b"}]
    [no_room] = run.events("no-room")
    assert no_room["refused"] == ["batch/low-b"]
    assert "waiting" not in run.actions()
    assert run.summary["message"] == ("PodGroup ml/train not bound: PodDisruptionBudgets kept refusing batch/low-b "
                                      "after evicting 2 pods")
    assert no_reservations(fake_api)


def test_a_budget_that_keeps_refusing_one_victim_is_planned_around_on_the_reserved_node(fake_api, cli):
    # node-b holds two 1-CPU pods: low-b (priority 50, its budget allows one disruption when planned,
    # none once the run evicts) and low-b2 (priority 60). The plan evicts low-b; refused, the run
    # plans the gang again: low-b2 makes the same room on node-b, already reserved, so it goes on.
    extra = [make_pod("low-b", "batch", node="node-b", cpu="1", priority=50, grace=5, owner="ReplicaSet/low-b1",
                      labels={"app": "low-b"}),
             make_pod("low-b2", "batch", node="node-b", cpu="1", priority=60, grace=5, owner="ReplicaSet/low-b1")]
    seed_gang(fake_api, holders=["node-a", "node-c"], extra=extra,
              pdbs=[make_pdb("low-b", "batch", selector={"app": "low-b"}, max_unavailable=1, disruptions_allowed=1)])
    fake_api.controllers.start()
    path = "/api/v1/namespaces/batch/pods/low-b/eviction"
    fake_api.faults.script([call(lambda r: fake_api.store.mutate(
        PDBS, "batch", "low-b", lambda b: b["status"].update(disruptionsAllowed=0)))], path=path, method="POST")
    run = preempt(cli, "ml/train-0", "--eviction-timeout", "1s")
    assert run.code == ExitCode.OK, run.stdout
    [replanned] = run.events("replanned")
    assert replanned["victims"] == ["batch/low-b2"]
    s = run.summary
    assert (s["outcome"], s["bound"]) == ("bound", 3)
    assert sorted(s["evicted"]) == ["batch/low-a", "batch/low-b2", "batch/low-c"]
    assert s["pdbBlocked"] == [{"pod": "batch/low-b", "pdb": "batch/low-b"}]
    assert pod(fake_api, "batch/low-b") is not None
    assert no_reservations(fake_api)


def test_a_node_reserved_by_another_run_stops_the_gang_before_anything_is_evicted(gang3, cli):
    gang3.store.mutate(NODE_OBJECTS, "", "node-b", lambda n: n["metadata"].setdefault("annotations", {}).update(
        {"kresched.io/reserved-for": "kube-system/other", "kresched.io/reserved-at": "2099-01-01T00:00:00Z"}))
    run = preempt(cli)
    assert run.code == ExitCode.INFEASIBLE
    assert run.summary["outcome"] == "blocked"
    assert run.summary["evicted"] == []
    assert not [r for r in gang3.requests if r.path.endswith("/eviction")]
    # The node reserved before the conflict was released; the other run's reservation is untouched.
    assert OURS not in taints(gang3, "node-a")
    assert kresched_annotations(gang3, "node-b")["kresched.io/reserved-for"] == "kube-system/other"


def test_members_that_do_not_tolerate_the_taint_are_not_reserved_for_and_it_says_so(fake_api, cli):
    seed_gang(fake_api, tolerations=None)
    fake_api.controllers.start()
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stdout
    skipped = run.events("reserve-skipped")
    assert len(skipped) == 3
    assert "does not tolerate CriticalAddonsOnly" in skipped[0]["message"]
    assert [r for r in fake_api.requests if r.method == "PATCH"] == []
    assert run.summary["reserved"] == []
    assert run.summary["reservationsRemoved"] is None


def test_the_events_name_the_gang(gang3, cli):
    run = preempt(cli)
    assert run.code == ExitCode.OK
    assert run.stderr == ""  # every Event was accepted
    seen = events(gang3)
    preempted = [e for e in seen if e["reason"] == "Preempted"]
    assert len(preempted) == 3
    assert all("(a member of PodGroup ml/train)" in e["note"] for e in preempted)
    reserved = [e for e in seen if e["reason"] == "Reserved"]
    assert {e["regarding"]["name"] for e in reserved} == set(NODES)
    assert all(e["note"].startswith("kresched preempt reserved the node for PodGroup ml/train (its members ")
               for e in reserved)
    made = [e for e in seen if e["reason"] == "MadeRoom"]
    assert sorted(e["regarding"]["name"] for e in made) == ["train-0", "train-1", "train-2"]
    assert all("a member of PodGroup ml/train" in e["note"] for e in made)


def test_a_pod_group_nobody_declares_is_a_usage_error_with_the_names_it_knows(gang3, cli):
    run = cli("preempt", "podgroup/trian", "-n", "ml", "--yes", "-o", "json")
    assert run.code == ExitCode.USAGE
    assert "podgroup ml/trian not found" in run.stderr
    assert "did you mean podgroup/train?" in run.stderr


def test_a_job_whose_pods_are_no_gang_is_refused_with_what_to_do_instead(fake_api, cli):
    seed_gang(fake_api, workers=0, extra=[make_pod("solo-0", "ml", cpu="1", priority=1000, owner="Job/solo")])
    run = cli("preempt", "job/solo", "-n", "ml", "--yes", "-o", "json")
    assert run.code == ExitCode.USAGE
    assert "the pods of job ml/solo are no gang's members" in run.stderr


def test_a_gang_whose_members_all_run_has_nothing_to_make_room_for(fake_api, cli):
    seed_gang(fake_api, workers=0, holders=[], extra=[
        make_pod(f"train-{i}", "ml", node=n, cpu="3", priority=1000, owner="Job/train",
                 **gang_member("train", flavor="coscheduling")) for i, n in enumerate(NODES)])
    run = cli("preempt", "ml/train-0", "--yes", "-o", "json")
    assert run.code == ExitCode.USAGE
    assert "PodGroup ml/train has no Pending member (3 of 3 members running)" in run.stderr


# -- the re-plan on the live state keeps the rule -------------------------------------------------------

def test_a_gang_that_can_no_longer_start_when_the_run_re_plans_evicts_nothing(gang3, cli):
    # Between the plan and the run a fourth worker is created: the gang (every member needed) can no
    # longer start, so the run, re-planning the gang on the live state, gives it up whole.
    def add_worker(_request):
        gang3.load(make_state([], [worker(3)]))

    gang3.faults.script([None, call(add_worker)], path="/api/v1/pods", method="GET")
    run = preempt(cli)
    assert run.code == ExitCode.INFEASIBLE, run.stdout
    [replanned] = run.events("replanned")
    assert replanned["kept"] is False
    assert "3 of 4 members of PodGroup ml/train fit after evictions (minCount 4)" in replanned["message"]
    assert run.summary["outcome"] == "infeasible"
    assert writes(gang3) == []


# -- a running gang as a victim --------------------------------------------------------------------------

def running_gang(fake: FakeApiServer) -> None:
    """node-a runs a gang of 3 (1 CPU each, every member needed), 1 CPU free; node-b and node-c are
    full of higher-priority pods. `ml/urgent` (2 CPU) fits only where one member goes."""
    nodes = [make_node(n, cpu="4") for n in NODES]
    gang = [make_pod(f"job-{i}", "ml", node="node-a", cpu="1", priority=10, grace=5, owner="Job/job",
                     **gang_member("job", flavor="coscheduling")) for i in range(3)]
    full = [make_pod(f"sys-{n[-1]}", "batch", node=n, cpu="4", priority=5000, owner="ReplicaSet/sys-1")
            for n in NODES[1:]]
    urgent = make_pod("urgent", "ml", cpu="2", priority=1000, tolerations=TOLERATES, owner="ReplicaSet/urgent-1")
    fake.load(make_state(nodes, [*gang, *full, urgent], [], [], [make_namespace("ml"), make_namespace("batch")]))


def test_a_victim_that_stops_a_running_gang_is_refused_without_the_flag_and_counted_with_it(fake_api, cli):
    running_gang(fake_api)
    fake_api.controllers.start()
    run = preempt(cli, "ml/urgent")
    assert run.code == ExitCode.INFEASIBLE
    [plan] = run.events("plan")
    assert plan["gangsStopped"] == [{"gang": "PodGroup ml/job", "running": 3, "minCount": 3,
                                     "evicted": ["ml/job-2"]}]
    assert writes(fake_api) == []
    run = preempt(cli, "ml/urgent", "--allow-pdb-violation")
    assert run.code == ExitCode.OK, run.stdout
    [evicted] = run.events("evicted")  # through the Eviction API: no PodDisruptionBudget refuses it
    assert (evicted["pod"], evicted["gang"], evicted["stopsGang"]) == ("ml/job-2", "PodGroup ml/job", True)
    assert evicted["message"] == ("evicted ml/job-2 (grace 5s): it stops PodGroup ml/job (3 running, minCount 3: a "
                                  "gang runs all or nothing)")
    assert run.summary["gangsStopped"] == [{"gang": "PodGroup ml/job", "running": 3, "minCount": 3,
                                            "evicted": ["ml/job-2"]}]
    assert [r.path for r in fake_api.requests if r.method == "DELETE"] == []
    [event] = [e for e in events(fake_api) if e["reason"] == "Preempted"]
    assert event["type"] == "Warning"
    assert event["note"].endswith("; it stops its gang PodGroup ml/job (below its minCount)")


def test_a_victim_that_is_an_earlier_victims_replacement_is_left_to_the_reservation(fake_api, cli):
    # Two 4-CPU nodes: node-a holds low-a (3 CPU), node-b low-b (1 CPU). The first worker takes one
    # node; the replacement of its victim lands, in the plan, on the other node, which the second
    # worker needs: that replacement is a victim of the second worker's plan. It does not exist when
    # the run evicts; the reservation of that node keeps it off.
    nodes = [make_node(n, cpu="4") for n in NODES[:2]]
    low = [make_pod("low-a", "batch", node="node-a", cpu="3", priority=0, grace=5, owner="ReplicaSet/low-a1"),
           make_pod("low-b", "batch", node="node-b", cpu="1", priority=0, grace=5, owner="ReplicaSet/low-b1")]
    workers = [make_pod(f"train-{i}", "ml", cpu="4", priority=1000, owner="Job/train", tolerations=TOLERATES,
                        **gang_member("train", flavor="coscheduling")) for i in range(2)]
    fake_api.load(make_state(nodes, [*low, *workers], [], [], [make_namespace("ml"), make_namespace("batch")]))
    fake_api.controllers.replicasets.enabled = True
    fake_api.controllers.start()
    run = preempt(cli)
    assert run.code == ExitCode.OK, run.stdout
    [left] = run.events("left")
    assert left["keptOff"] is True
    assert run.summary["leftToTheScheduler"] == [left["pod"]]
    assert sorted(run.summary["evicted"]) == ["batch/low-a", "batch/low-b"]
    assert run.summary["outcome"] == "bound"
    assert all(not p["metadata"]["name"].endswith("~replacement") for p in fake_api.store.list(PODS_OBJECTS))
