"""The scheduler's pod-group cycle (`kresched.sched.pod_group_cycle`), after upstream's
`TestPodGroupSchedulingAlgorithm`, `TestSubmitPodGroupAlgorithmResult` and `TestUpdatePodGroupCondition`
(pkg/scheduler/schedule_one_podgroup_test.go, v1.36). Upstream fakes Filter and Permit per pod;
here a fake member scheduler says where each pod fits, and Permit is GangScheduling's own, so a
gang's minCount decides who waits."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from kresched.sched.framework import Code, Snapshot
from kresched.sched.gang_scheduling import PodGroupState
from kresched.sched.pod_group_cycle import (
    ERR_MIXED_SCHEDULERS,
    Attempt,
    PodGroupCondition,
    member_order_key,
    pod_group_algorithm,
    pod_group_cycle,
)
from tests.builders import gang_member, make_node, make_pod, make_pod_group, make_state

WAITING = ("pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, one or more "
           "plugins asked to wait and no plugin rejected pod")
NO_FIT = "0/1 nodes are available: 1 Insufficient cpu."


class FakeMembers:
    """Each pod fits where `fits` says (None: nowhere, with NO_FIT); `error` pods fail with an error."""

    def __init__(self, fits: Mapping[str, str | None], error: frozenset[str] = frozenset()) -> None:
        self.fits, self.error, self.tried = fits, error, []

    def schedule(self, pod, snapshot, post_filters):
        self.tried.append(pod.name)
        if pod.name in self.error:
            return Attempt(None, message="plugin X failed", error=True)
        node = self.fits.get(pod.name)
        return Attempt(node, (node,) if node else (), message="" if node else NO_FIT)

    def assume(self, pod, node, snapshot):
        return snapshot


SNAP = Snapshot.from_state(make_state([make_node("node1")]))
PODS = [make_pod(n, **gang_member("pg")) for n in ("p1", "p2", "p3")]


def run(min_count: int | None, fits: Mapping[str, str | None], all_pods: int = 3, assigned: int = 0,
        error: frozenset[str] = frozenset(), existing: PodGroupCondition | None = None):
    group = make_pod_group("pg", basic=True) if min_count is None else make_pod_group("pg", min_count=min_count)
    members = FakeMembers(fits, error)
    cycle = pod_group_cycle(group, PODS, PodGroupState(all_pods, assigned), SNAP, members, existing=existing)
    return cycle, members


def by_name(messages: Mapping[str, str | None]) -> dict[str, str | None]:
    return {k.partition("/")[2]: v for k, v in messages.items()}


@pytest.mark.parametrize(("min_count", "fits", "all_pods", "code", "messages"), [
    pytest.param(3, {"p1": "node1", "p2": "node1", "p3": "node1"}, 3, Code.SUCCESS,
                 {"p1": None, "p2": None, "p3": None}, id="All pods feasible"),
    pytest.param(4, {"p1": "node1", "p2": "node1", "p3": "node1"}, 4, Code.UNSCHEDULABLE,
                 {"p1": WAITING, "p2": WAITING, "p3": WAITING}, id="All pods feasible, but all waiting"),
    pytest.param(2, {"p1": "node1", "p2": None, "p3": "node1"}, 3, Code.SUCCESS,
                 {"p1": None, "p2": NO_FIT, "p3": None}, id="All pods feasible, one waiting, one unschedulable"),
    pytest.param(3, {"p1": "node1", "p2": None, "p3": "node1"}, 3, Code.UNSCHEDULABLE,
                 {"p1": WAITING, "p2": NO_FIT, "p3": WAITING}, id="one infeasible, the gang short of minCount"),
    pytest.param(None, {"p1": None, "p2": "node1", "p3": None}, 3, Code.SUCCESS,
                 {"p1": NO_FIT, "p2": None, "p3": NO_FIT}, id="a basic group binds whatever fits"),
    pytest.param(None, {}, 3, Code.UNSCHEDULABLE, {"p1": NO_FIT, "p2": NO_FIT, "p3": NO_FIT},
                 id="a basic group of which nothing fits"),
])
def test_the_algorithm_and_what_it_writes(min_count, fits, all_pods, code, messages) -> None:
    cycle, members = run(min_count, fits, all_pods)
    assert cycle.code == code
    assert by_name(cycle.messages) == messages
    assert members.tried == ["p1", "p2", "p3"]  # greedy: every member once, in order, no backtracking
    if code == Code.SUCCESS:
        assert cycle.condition == PodGroupCondition("True", "Scheduled", "")
    else:
        assert cycle.condition == PodGroupCondition("False", "Unschedulable", "pod group is unschedulable")


def test_running_members_count_toward_min_count() -> None:
    cycle, _ = run(3, {"p1": "node1", "p2": None, "p3": None}, all_pods=5, assigned=2)
    assert cycle.code == Code.SUCCESS
    assert by_name(cycle.messages)["p1"] is None


def test_a_plugin_error_stops_the_cycle_and_every_member_gets_it() -> None:
    cycle, members = run(3, {"p1": "node1", "p2": "node1", "p3": "node1"}, error=frozenset({"p2"}))
    assert cycle.code == Code.ERROR
    assert members.tried == ["p1", "p2"]
    assert by_name(cycle.messages) == {"p1": "failed to schedule other pod from a pod group: plugin X failed",
                              "p2": "plugin X failed",
                              "p3": "failed to schedule other pod from a pod group: plugin X failed"}
    assert cycle.condition.reason == "SchedulerError"


@pytest.mark.parametrize(("existing", "fits", "want"), [
    pytest.param(None, {}, PodGroupCondition("False", "Unschedulable", "pod group is unschedulable"),
                 id="set Scheduled condition to False with Unschedulable reason"),
    pytest.param(PodGroupCondition("False", "Unschedulable", "previously unschedulable"),
                 {"p1": "node1", "p2": "node1", "p3": "node1"}, PodGroupCondition("True", "Scheduled", ""),
                 id="transition from Unschedulable to Scheduled"),
    pytest.param(PodGroupCondition("True", "Scheduled", ""), {},
                 PodGroupCondition("True", "Scheduled", ""), id="never back to False once True"),
])
def test_the_pod_groups_condition(existing, fits, want) -> None:
    cycle, _ = run(3, fits, existing=existing)
    assert cycle.condition == want


def test_members_are_tried_higher_priority_first_then_first_queued() -> None:
    # (kresched's "entered the queue": created; equal times by name)
    pods = [make_pod(n, priority=p, **gang_member("pg")) for n, p in (("x", 0), ("y", 1000), ("z", 0))]
    assert [p.name for p in sorted(pods, key=member_order_key)] == ["y", "x", "z"]


def test_members_of_different_schedulers_is_upstreams_error() -> None:
    assert ERR_MIXED_SCHEDULERS.format("b", "a") == (
        "all pods in a single pod group should have the same .spec.schedulerName set, got: 'b' and 'a'")


def test_without_post_filters_the_algorithm_is_the_preemption_check() -> None:
    result = pod_group_algorithm(make_pod_group("pg", min_count=3), PODS, PodGroupState(3, 0), SNAP,
                                 FakeMembers({"p1": "node1", "p2": "node1", "p3": "node1"}), post_filters=False)
    assert result.code == Code.SUCCESS
    assert [m.pod.name for m in result.placed] == ["p1", "p2", "p3"]
