"""The scheduler's own words: the filter part (`FitError.Error()`), the preemption part
(DefaultPreemption's PostFilter) and the whole PodScheduled message, character for character.

Upstream references (kubernetes/kubernetes): pkg/scheduler/framework/types.go `FitError.Error`,
framework/runtime/framework.go `RunPreFilterPlugins` / `RunPostFilterPlugins`,
schedule_one.go `findNodesThatFitPod`, framework/preemption/preemption.go `Preempt` and
plugins/defaultpreemption `SelectVictimsOnNode` / `PodEligibleToPreemptOthers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest

from kresched.model.objects import Node, Pod
from kresched.model.specs import Condition
from kresched.sched.framework import Code, CycleState, FilterPlugin, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.preemption import (
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    full_scheduler_message,
    preemption_message,
)
from kresched.sched.runner import (
    NO_NODES_AVAILABLE,
    default_plugins,
    find_nodes_that_fit,
    fit_error_message,
    run_pre_filter,
)
from tests.builders import make_node, make_pod, make_state

TAINT = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
HIGH, MID, LOW = 1000, 100, 0


def running(name: str, node: str, cpu: str, priority: int = HIGH, **kw: Any) -> Pod:
    return make_pod(name, node=node, cpu=cpu, priority=priority, **kw)


def incoming(cpu: str = "2", priority: int = MID, **kw: Any) -> Pod:
    return make_pod("incoming", cpu=cpu, priority=priority, **kw)


def preempted(name: str, node: str, cpu: str, priority: int = LOW) -> Pod:
    """A victim of an earlier preemption, still in its grace period (DisruptionTarget set by the
    scheduler, deletionTimestamp set)."""
    p = make_pod(name, node=node, cpu=cpu, priority=priority, deletion_timestamp="2026-01-01T00:00:05Z")
    cond = Condition(type="DisruptionTarget", status="True", reason="PreemptionByScheduler")
    return msgspec.structs.replace(p, status=msgspec.structs.replace(p.status, conditions=(*p.status.conditions, cond)))


def match_fields(*names: str) -> dict[str, Any]:
    """Required node affinity naming nodes, one term per name (`matchFields metadata.name In` takes
    exactly one value)."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in names]}}}


@dataclass
class Fake:
    """A PreFilter-only plugin: returns `result` from PreFilter, records that it ran."""

    name: str  # type: ignore[misc]  # the FilterPlugin protocol's ClassVar, per instance here
    result: PreFilterResult = field(default_factory=PreFilterResult)
    ran: list[str] = field(default_factory=list)

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        self.ran.append(pod.name)
        return self.result

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status()

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None


def fake_prefilter(name: str, code: Code, *reasons: str) -> Fake:
    return Fake(name, PreFilterResult(Status(code, reasons)))


@dataclass
class Case:
    nodes: list[Node]
    pods: list[Pod]
    pod: Pod
    message: str
    preemption: str | None
    plugins: Sequence[FilterPlugin] | None = None


def messages(case: Case) -> tuple[str, str | None]:
    """The filter part and the preemption part, computed as `explain` does."""
    state = make_state(case.nodes, [*case.pods, case.pod])
    snapshot = Snapshot.from_state(state)
    plugins = list(case.plugins) if case.plugins is not None else default_plugins()
    nominated: dict[str, list[Pod]] = {}
    for p in state.pods:
        if p.status.nominated_node_name and p.is_pending and p.key != case.pod.key:
            nominated.setdefault(p.status.nominated_node_name, []).append(p)
    diag, cycle = find_nodes_that_fit(plugins, case.pod, snapshot, nominated)
    assert not diag.feasible, f"the pod fits on {diag.feasible}: not a message case"
    pmsg, _ = preemption_message(plugins, case.pod, snapshot, diag, cycle, nominated)
    return fit_error_message(diag), pmsg


# -- the filter part and the preemption part ------------------------------------------------------

FILTER_CASES = [
    pytest.param(Case(
        nodes=[make_node(f"t-{i:02}", taints=TAINT) for i in range(12)]
        + [make_node(f"s-{i}", cpu="2") for i in range(3)] + [make_node("c-0", unschedulable=True)],
        pods=[running(f"big-{i}", f"s-{i}", "1") for i in range(3)],
        pod=incoming("1500m"),
        message="0/16 nodes are available: 1 node(s) were unschedulable, 12 node(s) had untolerated taint(s), "
                "3 Insufficient cpu.",
        preemption="0/16 nodes are available: 13 Preemption is not helpful for scheduling, "
                   "3 No preemption victims found for incoming pod."),
        id="reasons are sorted as strings with their counts, so 1 < 12 < 3 and not by reason or by number"),
    pytest.param(Case(
        nodes=[make_node("node-a", cpu="2", memory="4Gi"), make_node("node-b", cpu="8", memory="4Gi")],
        pods=[running("a", "node-a", "1500m", memory="3Gi"), running("b", "node-b", "1", memory="3Gi")],
        pod=incoming("1", memory="2Gi"),
        message="0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory.",
        preemption="0/2 nodes are available: 2 No preemption victims found for incoming pod."),
        id="a node short of several resources counts once under each of them"),
    pytest.param(Case(
        nodes=[make_node("node-a", cpu="4", pods=1)],
        pods=[running("a", "node-a", "3", priority=HIGH)],
        pod=incoming("2"),
        message="0/1 nodes are available: 1 Insufficient cpu, 1 Too many pods.",
        preemption="0/1 nodes are available: 1 No preemption victims found for incoming pod."),
        id="a full node reports Too many pods next to the resources it lacks"),
    pytest.param(Case(
        nodes=[make_node("node-a"), make_node("node-b", extra={"nvidia.com/gpu": "1"})],
        pods=[running("trainer", "node-b", "1", priority=LOW, extra_requests={"nvidia.com/gpu": "1"})],
        pod=incoming("1", extra_requests={"nvidia.com/gpu": "2"}),
        message="0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
        preemption="0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
        id="an extended resource beyond what a node has at all is unresolvable, evictions or not"),
    pytest.param(Case(
        nodes=[make_node("node-a", cpu="4")],
        pods=[running("high", "node-a", "3", priority=HIGH), running("low", "node-a", "500m", priority=LOW)],
        pod=incoming("2"),
        message="0/1 nodes are available: 1 Insufficient cpu.",
        preemption="0/1 nodes are available: 1 Insufficient cpu."),
        id="a node where evicting every lower-priority pod is not enough keeps the filter's own reason"),
    pytest.param(Case(
        nodes=[make_node("node-h", cpu="4"), make_node("node-l", cpu="4"), make_node("node-t", taints=TAINT)],
        pods=[running("high-h", "node-h", "3"), running("high-l", "node-l", "3"),
              running("low-l", "node-l", "500m", priority=LOW), running("low-t", "node-t", "3", priority=LOW)],
        pod=incoming("2"),
        message="0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.",
        preemption="0/3 nodes are available: 1 Insufficient cpu, 1 No preemption victims found for incoming pod, "
                   "1 Preemption is not helpful for scheduling."),
        id="one node of each preemption outcome: filter reason, no victims, not helpful"),
    pytest.param(Case(
        nodes=[make_node("node-a", cpu="4"), make_node("node-t", taints=TAINT)],
        pods=[running("high", "node-a", "1"), running("low", "node-a", "2", priority=LOW)],
        pod=incoming("2"),
        message="0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).",
        preemption=None),
        id="when evicting lower-priority pods makes room the scheduler preempts and writes no preemption message"),
    pytest.param(Case(
        nodes=[make_node("node-a", cpu="4")],
        pods=[running("low", "node-a", "3", priority=LOW)],
        pod=incoming("2", preemption_policy="Never"),
        message="0/1 nodes are available: 1 Insufficient cpu.",
        preemption=NOT_ELIGIBLE_NEVER),
        id="preemptionPolicy Never is not eligible to preempt, even where victims would be found"),
    pytest.param(Case(
        nodes=[make_node("node-a", cpu="4"), make_node("node-b", cpu="4")],
        pods=[running("high", "node-a", "1"), preempted("victim", "node-a", "2"),
              running("low-b", "node-b", "3", priority=LOW)],
        pod=incoming("2", nominated_node="node-a"),
        message="0/2 nodes are available: 2 Insufficient cpu.",
        preemption=NOT_ELIGIBLE_TERMINATING),
        id="a pod whose nominated node still has a lower-priority victim terminating waits instead of preempting"),
    pytest.param(Case(
        nodes=[make_node("node-a", cpu="4")],
        pods=[running("high", "node-a", "1"),
              running("deleted", "node-a", "2", priority=LOW, deletion_timestamp="2026-01-01T00:00:05Z")],
        pod=incoming("2", nominated_node="node-a"),
        message="0/1 nodes are available: 1 Insufficient cpu.",
        preemption=None),
        id="a terminating pod the scheduler did not preempt does not make the pod ineligible"),
    pytest.param(Case(
        nodes=[make_node("node-a", cpu="4"), make_node("node-b", cpu="4")],
        pods=[preempted("victim", "node-a", "2", priority=HIGH), running("more", "node-a", "1"),
              running("high-b", "node-b", "3")],
        pod=incoming("2", nominated_node="node-a"),
        message="0/2 nodes are available: 2 Insufficient cpu.",
        preemption="0/2 nodes are available: 2 No preemption victims found for incoming pod."),
        id="a terminating pod of higher priority on the nominated node does not make the pod ineligible"),
    pytest.param(Case(
        nodes=[make_node("node-a", cpu="4", taints=TAINT), make_node("node-b", cpu="4")],
        pods=[preempted("victim", "node-a", "2"), running("high", "node-a", "1"),
              running("high-b", "node-b", "3")],
        pod=incoming("2", nominated_node="node-a"),
        message="0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).",
        preemption="0/2 nodes are available: 1 No preemption victims found for incoming pod, "
                   "1 Preemption is not helpful for scheduling."),
        id="a nominated node that became unresolvable lets the pod preempt elsewhere despite its terminating victim"),
]


@pytest.mark.parametrize("case", FILTER_CASES)
def test_filter_and_preemption_messages(case: Case) -> None:
    assert messages(case) == (case.message, case.preemption)


# -- PreFilter --------------------------------------------------------------------------------------

PREFILTER_CASES = [
    pytest.param(Case(
        nodes=[make_node("node-a"), make_node("node-b")], pods=[],
        pod=incoming(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["node-a"]},
                {"key": "metadata.name", "operator": "In", "values": ["node-b"]}]}]}}}),
        message="0/2 nodes are available: pod affinity terms conflict.",
        preemption="0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
        id="NodeAffinity terms naming no common node reject the pod in PreFilter, without a histogram"),
    pytest.param(Case(
        nodes=[make_node("node-a", cpu="2"), make_node("node-b"), make_node("node-c")],
        pods=[running("high", "node-a", "1")],
        pod=incoming("2", affinity=match_fields("node-a", "node-z")),
        message="0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
        preemption="0/3 nodes are available: 1 No preemption victims found for incoming pod, "
                   "2 Preemption is not helpful for scheduling."),
        id="nodes a PreFilter left out count as didn't satisfy plugin(s) and preemption skips them"),
    pytest.param(Case(
        nodes=[make_node("node-a"), make_node("node-b"), make_node("node-c")], pods=[],
        pod=make_pod("incoming", node="node-a", phase="Pending", affinity=match_fields("node-b")),
        message="0/3 nodes are available: node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously.",
        preemption="0/3 nodes are available: 3 Preemption is not helpful for scheduling."),
        id="disjoint PreFilter node sets name every narrowing plugin, in name order not plugin order"),
    pytest.param(Case(
        nodes=[make_node("node-a"), make_node("node-b")], pods=[],
        pod=incoming(), plugins=[Fake("Zoned", PreFilterResult(node_names=frozenset()))],
        message="0/2 nodes are available: node(s) didn't satisfy plugin Zoned.",
        preemption="0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
        id="a single plugin narrowing to no node is named alone"),
    pytest.param(Case(
        nodes=[make_node("node-a"), make_node("node-b")], pods=[running("low", "node-a", "1", priority=LOW)],
        pod=incoming(), plugins=[fake_prefilter("A", Code.UNSCHEDULABLE, "a says no"),
                                 fake_prefilter("B", Code.UNSCHEDULABLE, "b says no", "and more")],
        message="0/2 nodes are available: b says no, and more.",
        preemption=None),
        id="the last Unschedulable PreFilter is reported, its reasons joined, and preemption may run on every node"),
    pytest.param(Case(
        nodes=[make_node("node-a"), make_node("node-b")], pods=[running("high", "node-a", "1")],
        pod=incoming(), plugins=[fake_prefilter("A", Code.UNSCHEDULABLE, "a says no")],
        message="0/2 nodes are available: a says no.",
        preemption="0/2 nodes are available: 2 No preemption victims found for incoming pod."),
        id="after an Unschedulable PreFilter nodes without lower-priority pods have no victims"),
    pytest.param(Case(
        nodes=[make_node("node-a"), make_node("node-b")], pods=[running("low", "node-a", "1", priority=LOW)],
        pod=incoming(), plugins=[fake_prefilter("A", Code.UNSCHEDULABLE, "a says no"),
                                 fake_prefilter("B", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "b never")],
        message="0/2 nodes are available: b never.",
        preemption="0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
        id="an UnschedulableAndUnresolvable PreFilter wins over an earlier Unschedulable one"),
]


@pytest.mark.parametrize("case", PREFILTER_CASES)
def test_prefilter_messages(case: Case) -> None:
    assert messages(case) == (case.message, case.preemption)


def test_an_unschedulable_prefilter_does_not_stop_the_prefilters_after_it() -> None:
    later, skipped = Fake("Later"), fake_prefilter("Skipper", Code.SKIP)
    plugins = [fake_prefilter("A", Code.UNSCHEDULABLE, "a says no"), later, skipped]
    cycle, st, _ = run_pre_filter(plugins, incoming(), Snapshot.from_state(make_state([make_node()])))
    assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE, ("a says no",), "A")
    assert later.ran == ["incoming"]
    assert cycle.skip == {"Skipper"}


def test_an_unresolvable_prefilter_stops_the_prefilters_after_it() -> None:
    later = Fake("Later")
    plugins = [fake_prefilter("A", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "never"), later]
    _, st, _ = run_pre_filter(plugins, incoming(), Snapshot.from_state(make_state([make_node()])))
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("never",))
    assert later.ran == []


# -- the whole PodScheduled message -----------------------------------------------------------------

#: Written by kube-scheduler 1.35/1.36 into PodScheduled (and the FailedScheduling event).
REAL_UNTOLERATED_AND_CPU = (
    "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. no new claims to deallocate, "
    "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found "
    "for incoming pod.")


def _full(case: Case) -> str:
    message, preemption = messages(case)
    return full_scheduler_message(message, preemption)


def test_the_full_message_equals_a_real_clusters_character_for_character() -> None:
    case = Case(
        nodes=[make_node("cp-1", taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
               make_node("worker-1", cpu="4"), make_node("worker-2", cpu="4")],
        pods=[running("web-1", "worker-1", "3", priority=MID), running("web-2", "worker-2", "3500m", priority=MID)],
        pod=incoming("2", priority=MID), message="", preemption="")
    assert _full(case) == REAL_UNTOLERATED_AND_CPU


def test_the_full_message_for_preemption_policy_never() -> None:
    case = Case(nodes=[make_node(f"node-{c}", cpu="2") for c in "abc"], pods=[],
                pod=incoming("4", preemption_policy="Never"), message="", preemption="")
    assert _full(case) == ("0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, "
                           "preemption: not eligible due to preemptionPolicy=Never.")


def test_the_full_message_is_the_filter_part_alone_when_preemption_would_nominate_a_node() -> None:
    case = Case(nodes=[make_node("node-a", cpu="4")], pods=[running("low", "node-a", "3", priority=LOW)],
                pod=incoming("2"), message="", preemption="")
    assert _full(case) == "0/1 nodes are available: 1 Insufficient cpu."


def test_the_full_message_ends_with_one_period_not_two_as_older_releases_wrote() -> None:
    case = Case(nodes=[make_node("node-a", taints=TAINT)], pods=[], pod=incoming(), message="", preemption="")
    full = _full(case)
    assert full.endswith("1 Preemption is not helpful for scheduling.")
    assert not full.endswith("..")


def test_a_cluster_without_nodes_fails_before_filtering_and_runs_no_postfilter() -> None:
    pod = incoming()
    diag, _ = find_nodes_that_fit(default_plugins(), pod, Snapshot.from_state(make_state([], [pod])))
    assert fit_error_message(diag) == NO_NODES_AVAILABLE == "no nodes available to schedule pods"
    assert full_scheduler_message(fit_error_message(diag), "anything") == "no nodes available to schedule pods"

