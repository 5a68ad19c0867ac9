"""The GangScheduling plugin's PreEnqueue and Permit (`kresched.sched.gang_scheduling`), ported from
upstream's `TestGangSchedulingFlow` (pkg/scheduler/framework/plugins/gangscheduling/
gangscheduling_test.go, v1.36): the statuses and their words, as the scheduler returns them."""

from __future__ import annotations

import pytest

from kresched.sched.framework import Code
from kresched.sched.gang_scheduling import (
    ERR_MIN_COUNT_NOT_CREATED,
    WAIT_MIN_COUNT,
    PodGroupState,
    permit,
    pod_group_state,
    pre_enqueue,
)
from tests.builders import gang_member, make_pod, make_pod_group

PG1 = make_pod_group("pg1", "ns1", min_count=3)
PG2 = make_pod_group("pg2", "ns1", min_count=4)
BASIC = make_pod_group("pg3", "ns1", basic=True)
GROUPS = {g.metadata.name: g for g in (PG1, PG2, BASIC)}


def member(name: str, group: str | None, node: str = ""):
    extra = gang_member(group) if group else {}
    return make_pod(name, "ns1", node=node, **extra)


P1, P2, P3 = (member(n, "pg1") for n in ("p1", "p2", "p3"))
P4, P5 = (member(n, "pg2") for n in ("p4", "p5"))
BASIC_POD = member("basic-pod", "pg3")
NON_GANG = member("non-gang", None)


def group_of(pod, groups):
    g = pod.spec.scheduling_group
    return groups.get(g.pod_group_name) if g is not None else None


def state_of(pod, pods):
    """The cache's count of `pod`'s group among `pods` (the pod itself included)."""
    name = pod.spec.scheduling_group.pod_group_name if pod.spec.scheduling_group else None
    return pod_group_state(p for p in (*pods, pod)
                           if p.spec.scheduling_group and p.spec.scheduling_group.pod_group_name == name)


@pytest.mark.parametrize(("pod", "pods", "groups", "want"), [
    pytest.param(NON_GANG, (), GROUPS, None, id="non-gang pod succeeds immediately"),
    pytest.param(BASIC_POD, (), GROUPS, None, id="basic policy pod succeeds immediately"),
    pytest.param(P1, (P2, P3, P4, P5), {}, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                           'waiting for pods\'s pod group "pg1" to appear in scheduling queue'),
                 id="gang pod fails PreEnqueue when pod group is not yet created"),
    pytest.param(P1, (P2, P4, P5), GROUPS, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_MIN_COUNT_NOT_CREATED),
                 id="gang pod fails PreEnqueue when quorum is not met"),
    pytest.param(P1, (P2, P3, P4, P5), GROUPS, None, id="gang pod passes PreEnqueue"),
])
def test_pre_enqueue(pod, pods, groups, want) -> None:
    st = pre_enqueue(pod, group_of(pod, groups), state_of(pod, pods))
    if want is None:
        assert st.is_success
    else:
        assert (st.code, st.reasons) == (want[0], (want[1],))
        assert st.plugin == "GangScheduling"


def test_the_quorum_counts_gated_and_bound_members_not_finished_ones() -> None:
    # AllPodsCount: every member the cache knows, bound or not; finished pods leave the cache.
    running = member("p2", "pg1", node="n1")
    done = make_pod("p3", "ns1", phase="Succeeded", **gang_member("pg1"))
    assert pod_group_state([P1, running, done]) == PodGroupState(all_pods=2, assigned=1)
    assert not pre_enqueue(P1, PG1, pod_group_state([P1, running, done])).is_success
    assert pre_enqueue(P1, PG1, pod_group_state([P1, running, P3])).is_success


@pytest.mark.parametrize(("scheduled", "want"), [
    pytest.param(1, (Code.WAIT, WAIT_MIN_COUNT), id="gang pod passes PreEnqueue, but waits at Permit"),
    pytest.param(2, (Code.WAIT, WAIT_MIN_COUNT), id="the second of three still waits"),
    pytest.param(3, None, id="final gang pod arrives at Permit and allows all waiting pods from a gang"),
])
def test_permit(scheduled: int, want) -> None:
    # `scheduled`: members bound or assumed in this cycle, the one being permitted included.
    st = permit(P1, PG1, PodGroupState(all_pods=3, assigned=0, assumed=scheduled))
    if want is None:
        assert st.is_success
    else:
        assert (st.code, st.reasons) == (want[0], (want[1],))


def test_bound_members_count_toward_the_quorum_at_permit() -> None:
    assert permit(P1, PG1, PodGroupState(all_pods=3, assigned=2).assume()).is_success
    assert permit(BASIC_POD, BASIC, PodGroupState(all_pods=1, assigned=0).assume()).is_success
    assert permit(NON_GANG, None, PodGroupState(0, 0)).is_success
