"""A drain's pre-flight names the running gangs it stops (issue 43, item 4): a gang is a budget
(running members less minCount), and the members a drain evicts past it stop the whole gang. The
eviction API does not refuse them, so kresched does: a drain that stops a training job is refused,
nothing touched, unless `--allow-gang-disruption` accepts it — as a disruption a
PodDisruptionBudget would refuse. Pure (`plan_drain`), then the real command over real HTTP."""

from __future__ import annotations

import msgspec
import pytest

from kresched.errors import ExitCode
from kresched.plan.drain import GangStop, plan_drain
from tests.builders import gang_member, make_node, make_pod, make_pod_group, make_state
from tests.execute.conftest import writes
from tests.execute.test_drain import cordoned, drain, seed

GANG = "PodGroup default/job"


def members(on: dict[str, int], flavor: str = "workload") -> list:
    """A running gang's members, `count` on each node, 1 CPU each, owned by Job/job."""
    out = []
    for node, n in on.items():
        out += [make_pod(f"job-{node[-1]}{i}", node=node, cpu="1", owner="Job/job", **gang_member("job", flavor=flavor))
                for i in range(n)]
    return out


NODES = [make_node("node-a", cpu="8"), make_node("node-b", cpu="8"), make_node("node-c", cpu="8")]


@pytest.mark.parametrize(("on", "min_count", "stopping", "stops"), [
    pytest.param({"node-a": 2, "node-b": 2}, 4, ["default/job-a0", "default/job-a1"], True,
                 id="at its minCount: the first member evicted stops it"),
    pytest.param({"node-a": 1, "node-b": 4}, 4, [], False, id="one member to spare: within its budget"),
    pytest.param({"node-a": 3, "node-b": 3}, 4, ["default/job-a2"], True,
                 id="two to spare: the third member evicted stops it"),
])
def test_a_drain_stops_a_gang_only_when_it_evicts_members_past_its_budget(on, min_count, stopping, stops):
    state = make_state(NODES, members(on), pod_groups=[make_pod_group("job", min_count=min_count)])
    plan = plan_drain(state, ["node-a"])
    evicted = plan.nodes[0].evict
    assert {d.gang for d in evicted} == {GANG}
    assert [d.pod.key for d in evicted if d.stops_gang] == stopping
    if stops:
        running = sum(on.values())
        assert plan.stopped_gangs == (GangStop(GANG, running, min_count, tuple(d.pod.key for d in evicted)),)
    else:
        assert plan.stopped_gangs == ()


def test_a_gang_drained_across_two_nodes_is_counted_once_against_its_budget():
    state = make_state(NODES, members({"node-a": 1, "node-b": 1, "node-c": 3}),
                       pod_groups=[make_pod_group("job", min_count=4)])
    plan = plan_drain(state, ["node-a", "node-b"])
    assert [d.stops_gang for n in plan.nodes for d in n.evict] == [False, True]
    [stop] = plan.stopped_gangs
    assert stop.evicted == ("default/job-a0", "default/job-b0")


def test_a_gang_in_podgroup_disruption_mode_stops_at_its_first_member():
    state = make_state(NODES, members({"node-a": 1, "node-b": 4}),
                       pod_groups=[make_pod_group("job", min_count=2, disruption_mode="PodGroup")])
    assert [g.gang for g in plan_drain(state, ["node-a"]).stopped_gangs] == [GANG]


# -- the command -----------------------------------------------------------------------------------

@pytest.fixture
def running_gang(fake_api):
    # The coscheduling label without a PodGroup object: every member is needed (minCount 4).
    seed(fake_api, members({"node-a": 2, "node-b": 2}, flavor="coscheduling"), nodes=NODES)
    return fake_api


def test_the_dry_run_names_the_gang_it_stops_and_fails_the_gate(running_gang, cli):
    run = cli("drain", "node-a", "--dry-run", "-o", "json")
    assert run.code == ExitCode.INFEASIBLE
    doc = msgspec.json.decode(run.stdout)
    assert doc["gangsStopped"] == [{"gang": GANG, "running": 4, "minCount": 4,
                                    "evicted": ["default/job-a0", "default/job-a1"]}]
    assert [(e["pod"], e["gang"], e["stopsGang"]) for e in doc["evict"]] == [
        ("default/job-a0", GANG, True), ("default/job-a1", GANG, True)]
    assert "it would stop PodGroup default/job (4 running, minCount 4): a gang runs all or nothing " \
           "(--allow-gang-disruption drains anyway)" in run.stderr
    assert cli("drain", "node-a", "--dry-run", "-o", "json", "--allow-gang-disruption").code == ExitCode.OK


def test_the_table_says_which_gang_stops_and_why(running_gang, cli):
    run = cli("drain", "node-a", "--dry-run")
    assert "! stops its gang PodGroup default/job (below its minCount)" in run.stdout
    assert ("Stops PodGroup default/job: evicting default/job-a0, default/job-a1 leaves it below its minCount 4, so "
            "all 4 running members stop (a gang runs all or nothing)") in " ".join(run.stdout.split())


def test_a_drain_that_stops_a_gang_is_refused_untouched_unless_accepted(running_gang, cli):
    run = drain(cli, "node-a", "--yes")
    assert run.code == ExitCode.INFEASIBLE
    [refused] = run.events("refused")
    assert refused["gangs"] == [GANG]
    assert refused["message"] == ("it would stop PodGroup default/job (4 running, minCount 4) (above); nothing was "
                                  "changed: --allow-gang-disruption drains anyway")
    assert writes(running_gang) == []
    assert not cordoned(running_gang)
    run = drain(cli, "node-a", "--yes", "--allow-gang-disruption", "--timeout", "30s")
    assert run.code == ExitCode.OK, run.stdout + run.stderr
    assert sorted(run.summary["evicted"]) == ["default/job-a0", "default/job-a1"]
    assert cordoned(running_gang)
