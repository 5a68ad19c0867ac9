"""`kresched reconcile` with a gang (issue 43, item 3): the gang is one unit of the pass — helped
whole when all of its evictions fit in what is left of `--max-evictions`, skipped whole and listed
otherwise, never half of it; a gang that cannot start is listed with why and nothing is evicted.
Over real HTTP against the fake API server (the scenario of `test_gang_preempt`: three full 4-CPU
nodes, the 3-CPU workers of `ml/train` at priority 1000, helped with `--min-priority 1000`)."""

from __future__ import annotations

import pytest

from kresched.errors import ExitCode
from tests.builders import make_node, make_pod
from tests.execute.test_gang_preempt import GANG, NODES, TOLERATES, no_reservations, running_gang, seed_gang
from tests.execute.test_reconcile import lease, unschedulable
from tests.fakeapi import FakeApiServer

HELP_GANGS = ["--min-priority", "1000"]
MEMBERS = ["ml/train-0", "ml/train-1", "ml/train-2"]


def reconcile(cli, *extra: str):
    return cli("reconcile", "-o", "json", "--deadline", "120s", *HELP_GANGS, *extra)


def evictions(fake: FakeApiServer) -> list[str]:
    return [r.path for r in fake.requests if r.method == "POST" and r.path.endswith("/eviction")]


def mark(fake: FakeApiServer, keys: list[str]) -> None:
    for key in keys:
        unschedulable(fake, key)


@pytest.fixture
def gang3(fake_api: FakeApiServer) -> FakeApiServer:
    seed_gang(fake_api)
    mark(fake_api, MEMBERS)
    fake_api.controllers.start()
    return fake_api


def test_a_gang_is_helped_whole_in_one_turn_of_the_pass(gang3, cli):
    run = reconcile(cli)
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    s = run.summary
    assert sorted(b["pod"] for b in s["bound"]) == MEMBERS
    assert sorted(b["node"] for b in s["bound"]) == NODES
    assert s["evictions"] == 3
    assert s["podsHelped"] == 3
    [g] = s["gangs"]
    assert (g["gang"], g["outcome"], g["bound"], g["minCount"]) == (GANG, "bound", 3, 3)
    assert g["members"] == MEMBERS
    assert g["reason"] == "3 of 3 members bound (3 running, minCount 3: it runs)"
    assert no_reservations(gang3)
    assert not lease(gang3)["holderIdentity"]  # released


def test_a_gang_whose_evictions_exceed_the_budget_is_skipped_whole_and_listed(gang3, cli):
    run = reconcile(cli, "--max-evictions", "2")
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    assert evictions(gang3) == []
    s = run.summary
    assert s["evictions"] == 0
    [g] = s["gangs"]
    assert g["outcome"] == "skipped"
    why = ("its gang PodGroup ml/train needs 3 evictions for 3 members but only 2 of --max-evictions 2 are left in "
           "this pass: a gang is helped whole or not at all; the next pass picks it up")
    assert g["reason"] == why
    assert {p["pod"]: p["reason"] for p in s["stillPending"]} == dict.fromkeys(MEMBERS, why)
    [skipped] = run.events("gang-skipped")
    assert (skipped["needs"], skipped["left"], skipped["pods"]) == (3, 2, MEMBERS)


def test_what_an_earlier_pod_spent_of_the_budget_is_not_there_for_the_gang(fake_api, cli):
    # A higher-priority pod, first in the queue, takes one of the three evictions on node-d: two
    # are left, the gang needs three.
    first = make_pod("first", "ml", cpu="3", priority=2000, tolerations=TOLERATES, node_selector={"pool": "d"})
    seed_gang(fake_api, extra=[first, make_pod("low-d", "batch", node="node-d", cpu="3", priority=100, grace=5,
                                               owner="ReplicaSet/low-7d")],
              extra_nodes=[make_node("node-d", cpu="4", labels={"pool": "d"})])
    mark(fake_api, [*MEMBERS, "ml/first"])
    fake_api.controllers.start()
    run = reconcile(cli, "--max-evictions", "3")
    assert run.code == ExitCode.OK, run.stdout
    assert evictions(fake_api) == ["/api/v1/namespaces/batch/pods/low-d/eviction"]
    assert run.summary["bound"] == [{"pod": "ml/first", "node": "node-d"}]
    [g] = run.summary["gangs"]
    assert g["outcome"] == "skipped"
    assert "needs 3 evictions for 3 members but only 2 of --max-evictions 3 are left" in g["reason"]


def test_a_gang_that_cannot_start_is_listed_with_why_and_nothing_is_evicted(fake_api, cli):
    seed_gang(fake_api, workers=4)
    mark(fake_api, [*MEMBERS, "ml/train-3"])
    fake_api.controllers.start()
    run = reconcile(cli)
    assert run.code == ExitCode.OK, run.stdout
    assert evictions(fake_api) == []
    [g] = run.summary["gangs"]
    assert g["outcome"] == "infeasible"
    assert g["reason"] == ("3 of 4 members of PodGroup ml/train fit after evictions (minCount 4); a gang runs all or "
                           "nothing: nothing evicted")
    assert len(run.summary["stillPending"]) == 4
    [cannot] = run.events("cannot-help")
    assert cannot["gang"] == GANG


def test_members_the_scheduler_has_not_marked_yet_are_helped_with_the_one_it_has(fake_api, cli):
    seed_gang(fake_api)
    mark(fake_api, ["ml/train-0"])
    fake_api.controllers.start()
    run = reconcile(cli)
    assert run.code == ExitCode.OK, run.stdout
    assert sorted(b["pod"] for b in run.summary["bound"]) == MEMBERS
    assert run.summary["stillPending"] == []


def test_a_dry_run_rehearses_the_gang_and_writes_nothing(gang3, cli):
    run = reconcile(cli, "--dry-run")
    assert run.code == ExitCode.OK, run.stdout
    assert [r for r in gang3.requests if r.method != "GET"] == []
    [g] = run.summary["gangs"]
    assert (g["outcome"], g["reason"]) == ("simulated", "dry run: 3 members would be bound after evicting 3 pods")


def test_a_gang_a_pass_stops_over_the_flag_is_listed(fake_api, cli):
    running_gang(fake_api)
    mark(fake_api, ["ml/urgent"])
    fake_api.controllers.start()
    run = reconcile(cli, "--allow-pdb-violation")
    assert run.code == ExitCode.OK, run.stdout
    assert run.summary["bound"] == [{"pod": "ml/urgent", "node": "node-a"}]
    assert run.summary["gangsStopped"] == [{"gang": "PodGroup ml/job", "running": 3, "minCount": 3,
                                            "evicted": ["ml/job-2"]}]
