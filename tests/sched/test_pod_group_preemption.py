"""Workload-aware preemption's victim search (`kresched.sched.pod_group_preemption`), ported from
upstream's `TestPodGroupEvaluator_SelectVictimsOnDomain` and `TestMoreImportantVictim`
(pkg/scheduler/framework/preemption/podgrouppreemption_test.go, v1.36).

Upstream mocks the pod-group scheduling function with "blocking rules": a node gives the preemptor
`capacity` slots once every pod of `blocking` is gone, and the group schedules when the slots add up
to its member count. `schedulable` below is that mock over the keys of the pods removed.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kresched.model.gangs import PodGroup
from kresched.model.objects import PodDisruptionBudget
from kresched.sched.framework import SUCCESS, Code, Snapshot, Status
from kresched.sched.pod_group_preemption import (
    NO_VICTIMS_FOR_PREEMPTOR,
    PreemptionVictim,
    domain_victims,
    more_important_victim,
    preemptor_preemption_policy,
    select_victims_on_domain,
)
from tests.builders import gang_member, make_node, make_pod, make_state

LOW, MID, HIGH = 10, 100, 1000


def pod(name: str, node: str = "", priority: int = LOW, group: str | None = None, start: int | None = None,
        labels: dict[str, str] | None = None, never: bool = False):
    extra: dict[str, Any] = gang_member(group) if group else {}
    started = None if start is None else f"1970-01-01T00:00:{start:02d}Z"
    return make_pod(name, node=node, priority=priority, start_time=started, labels=labels,
                    preemption_policy="Never" if never else None, **extra)


def pod_group(name: str, mode: str = "Pod", priority: int | None = None) -> PodGroup:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}}, "disruptionMode": mode}
    if priority is not None:
        spec["priority"] = priority
    return msgspec.convert({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                            "metadata": {"name": name, "namespace": "default"}, "spec": spec}, PodGroup)


def pdb_foo() -> PodDisruptionBudget:
    return msgspec.convert({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                            "metadata": {"name": "foo", "namespace": "default"},
                            "spec": {"selector": {"matchLabels": {"app": "foo"}}},
                            "status": {"disruptionsAllowed": 0}}, PodDisruptionBudget)


FOO = {"app": "foo"}

# (name, nodes, pods, pod groups, (preemptor PodGroup priority, preemptor pods), pdbs,
#  blocking rules (node, capacity, blocking pods), expected victims, expected code)
CASES = [
    ("Mix of no-group and single-pod-groups", 3,
     [pod("p1", "node1"), pod("p2", "node2", group="pg1"), pod("p3", "node3", group="pg2")],
     [pod_group("pg1"), pod_group("pg2")], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})], {"p1"}, Code.SUCCESS),
    ("Priority: Shared group vs no group", 3,
     [pod("p1", "node1", group="pg1", start=1), pod("p2", "node2", group="pg1", start=0),
      pod("p3", "node3", priority=MID)],
     [pod_group("pg1")], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})], {"p1"}, Code.SUCCESS),
    ("Shared Group: Preempt separately", 2,
     [pod("p1", "node1", group="pg1", start=1), pod("p2", "node2", group="pg1", start=0)],
     [pod_group("pg1")], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"p1"}), ("node2", 1, {"p2"})], {"p1"}, Code.SUCCESS),
    ("Complex Mixed: Shared, different, and no groups", 5,
     [pod("p1", "node1", group="pg1", start=2), pod("p2", "node2", group="pg1", start=1),
      pod("p3", "node3", group="pg2", start=0), pod("p4", "node4", priority=MID),
      pod("p5", "node5", priority=HIGH, group="pg3", start=0)],
     [pod_group("pg1"), pod_group("pg2"), pod_group("pg3")],
     (HIGH, [pod("p-1", priority=HIGH), pod("p-2", priority=HIGH), pod("p-3", priority=HIGH)]), [],
     [(f"node{i}", 1, {f"p{i}"}) for i in range(1, 6)], {"p1", "p2", "p3"}, Code.SUCCESS),
    ("PDB: Mixed groups", 2,
     [pod("victim-pdb", "node1", group="pg1", labels=FOO), pod("victim-no-pdb", "node2", group="pg1")],
     [], (HIGH, [pod("p", priority=HIGH)]), [pdb_foo()],
     [("node1", 1, {"victim-pdb"}), ("node2", 1, {"victim-no-pdb"})], {"victim-no-pdb"}, Code.SUCCESS),
    ("PodGroup with PreemptNever does not perform preemption", 3,
     [pod("p1", "node1"), pod("p2", "node2", group="pg1"), pod("p3", "node3", group="pg2")],
     [], (HIGH, [pod("p-1", priority=HIGH, never=True), pod("p-2", priority=HIGH)]), [],
     [("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})], set(), Code.UNSCHEDULABLE),
    ("Preempt single lower priority pod", 1, [pod("p1", "node1")], [], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"p1"})], {"p1"}, Code.SUCCESS),
    ("Priority: Prefer lower priority victim", 1,
     [pod("p1", "node1"), pod("p2", "node1", priority=MID), pod("p3", "node1", priority=HIGH)],
     [], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"p1"}), ("node1", 1, {"p2"}), ("node1", 1, {"p3"})], {"p1"}, Code.SUCCESS),
    ("Efficiency: Preempt minimum number of victims", 1,
     [pod(f"p{i}", "node1") for i in range(1, 5)], [], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"p1", "p2"}), ("node1", 1, {"p1"})], {"p1"}, Code.SUCCESS),
    ("PDB: Prefer non-violating victim", 1,
     [pod("victim-pdb", "node1", labels=FOO), pod("victim-no-pdb", "node1")],
     [], (HIGH, [pod("p", priority=HIGH)]), [pdb_foo()],
     [("node1", 1, {"victim-pdb"}), ("node1", 1, {"victim-no-pdb"})], {"victim-no-pdb"}, Code.SUCCESS),
    ("PodGroup with PreemptNever does not perform preemption (groups of low priority)", 3,
     [pod("p1", "node1"), pod("p2", "node2", group="pg1"), pod("p3", "node3", group="pg2")],
     [pod_group("pg1", priority=LOW), pod_group("pg2", priority=LOW)],
     (HIGH, [pod("p-1", priority=HIGH, never=True), pod("p-2", priority=HIGH)]), [],
     [("node1", 1, {"p1"}), ("node2", 1, {"p2"}), ("node3", 1, {"p3"})], set(), Code.UNSCHEDULABLE),
    ("PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible", 1,
     [pod("p1", "node1", labels=FOO), pod("p2", "node1", priority=MID, labels=FOO)],
     [], (HIGH, [pod("p", priority=HIGH)]), [pdb_foo()],
     [("node1", 1, {"p1"}), ("node1", 1, {"p2"})], {"p1"}, Code.SUCCESS),
    ("PodGroup: Preempt group as a whole", 2,
     [pod("p1", "node1", group="pg1"), pod("p2", "node2", group="pg1")],
     [pod_group("pg1", "PodGroup", LOW)], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"p1"})], {"p1", "p2"}, Code.SUCCESS),
    ("PodGroup: Prefer single pod over podGroup for preemption candidate", 1,
     [pod("p1", "node1"), pod("g1-1", "node1", group="pg1"), pod("g1-2", "node1", group="pg1")],
     [pod_group("pg1", "PodGroup", LOW)], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"g1-1", "g1-2"}), ("node1", 1, {"p1"})], {"p1"}, Code.SUCCESS),
    ("PodGroup: Preempt group as a whole on single node", 1,
     [pod("g1-1", "node1", group="pg1"), pod("g1-2", "node1", group="pg1"), pod("p1", "node1", priority=MID)],
     [pod_group("pg1", "PodGroup", LOW)], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"g1-1"})], {"g1-1", "g1-2"}, Code.SUCCESS),
    ("PDB: Unit violation if any member violates", 1,
     [pod("g1-1", "node1", group="pg1", labels=FOO), pod("g1-2", "node1", group="pg1"), pod("p1", "node1")],
     [pod_group("pg1", "PodGroup", LOW)], (HIGH, [pod("p", priority=HIGH)]), [pdb_foo()],
     [("node1", 1, {"g1-1"}), ("node1", 1, {"p1"})], {"p1"}, Code.SUCCESS),
    ("PodGroup: Prefer preempting single pod over group of same priority", 1,
     [pod("p1", "node1"), pod("g1-1", "node1", group="pg1"), pod("g1-2", "node1", group="pg1")],
     [pod_group("pg1", "PodGroup", LOW)], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"g1-1", "g1-2"}), ("node1", 1, {"p1"})], {"p1"}, Code.SUCCESS),
    ("Failure: Cannot preempt the victim with higher priority", 1, [pod("p1", "node1", priority=HIGH)],
     [], (MID, [pod("p", priority=MID)]), [], [("node1", 0, {"p1"})], set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ("Failure: Cannot preempt if node is empty", 1, [], [], (MID, [pod("p", priority=MID)]), [], [], set(),
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ("Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group", 2,
     [pod("p1", "node1", priority=HIGH, group="pg1"), pod("p2", "node2", priority=HIGH, group="pg1")],
     [pod_group("pg1", "PodGroup", MID)], (HIGH, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"p1"})], {"p1", "p2"}, Code.SUCCESS),
    ("Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group", 2,
     [pod("p1", "node1", group="pg1"), pod("p2", "node2", group="pg1")],
     [pod_group("pg1", "PodGroup", MID)], (MID, [pod("p", priority=MID)]), [],
     [("node1", 1, {"p1"})], set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ("Priority divergence: preemptor PodGroup has higher priority than the Pod from preemptor PodGroup", 2,
     [pod("p1", "node1", priority=MID, group="pg1"), pod("p2", "node2", priority=MID, group="pg1")],
     [pod_group("pg1", "PodGroup", MID)], (HIGH, [pod("p", priority=LOW)]), [],
     [("node1", 1, {"p1"})], {"p1", "p2"}, Code.SUCCESS),
    ("Priority divergence: preemptor PodGroup has lower priority than the Pod from preemptor PodGroup", 2,
     [pod("p1", "node1", priority=MID, group="pg1"), pod("p2", "node2", priority=MID, group="pg1")],
     [pod_group("pg1", "PodGroup", MID)], (LOW, [pod("p", priority=HIGH)]), [],
     [("node1", 1, {"p1"})], set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
]


@pytest.mark.parametrize(("nodes", "pods", "groups", "preemptor", "pdbs", "rules", "want", "code"),
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_select_victims_on_domain(nodes, pods, groups, preemptor, pdbs, rules, want, code) -> None:
    snapshot = Snapshot.from_state(make_state([make_node(f"node{i}") for i in range(1, nodes + 1)], pods))
    by_name = {g.metadata.name: g for g in groups}

    def group_of(p):
        return by_name.get(p.spec.scheduling_group.pod_group_name) if p.spec.scheduling_group else None

    names = {p.key: p.name for p in pods}
    priority, members = preemptor

    def schedulable(removed: frozenset[str]) -> Status:
        gone = {names[k] for k in removed}
        slots = sum(capacity for _, capacity, blocking in rules if blocking <= gone)
        return SUCCESS if slots >= len(members) else Status(Code.UNSCHEDULABLE)

    found = select_victims_on_domain(priority, preemptor_preemption_policy(members),
                                     domain_victims(snapshot.node_infos, group_of), pdbs, schedulable)
    assert found.status.code == code
    assert {p.name for p in found.pods} == want
    if code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        assert found.status.reasons == (NO_VICTIMS_FOR_PREEMPTOR,)


def unit(priority: int, n: int = 1, group: bool = False, start: int | None = None) -> PreemptionVictim:
    return PreemptionVictim(tuple(pod(f"v{i}", "node1", group="pg" if group else None, start=start)
                                  for i in range(n)), priority)


@pytest.mark.parametrize(("a", "b", "want"), [
    pytest.param(unit(20), unit(10), True, id="vi1 has higher priority"),
    pytest.param(unit(10), unit(20), False, id="vi2 has higher priority"),
    pytest.param(unit(10, group=True), unit(10), True, id="vi1 is PG, vi2 is Pod, same priority"),
    pytest.param(unit(10), unit(10, group=True), False, id="vi1 is Pod, vi2 is PG, same priority"),
    pytest.param(unit(10, start=5), unit(10, start=10), True, id="both Pods, vi1 older"),
    pytest.param(unit(10, start=10), unit(10, start=5), False, id="both Pods, vi2 older"),
    pytest.param(unit(10, 2, True), unit(10, 1, True), True, id="both PGs, vi1 larger"),
    pytest.param(unit(10, 1, True), unit(10, 2, True), False, id="both PGs, vi2 larger"),
    pytest.param(unit(10, 2, True, 5), unit(10, 2, True, 10), True, id="both PGs, same size, vi1 older"),
    pytest.param(unit(10, 2, True, 10), unit(10, 2, True, 5), False, id="both PGs, same size, vi2 older"),
])
def test_more_important_victim(a: PreemptionVictim, b: PreemptionVictim, want: bool) -> None:
    assert more_important_victim(a, b) is want
