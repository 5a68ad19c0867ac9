"""NodeResourcesFit: one reason per short resource; unresolvable when the node is too small."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.objects import Pod
from kresched.sched.framework import SUCCESS, Code, CycleState, InsufficientResource, PreFilterResult, Snapshot, Status
from kresched.sched.node_affinity import NodeAffinity
from kresched.sched.node_info import NodeInfo
from kresched.sched.node_name import NodeName
from kresched.sched.node_ports import NodePorts
from kresched.sched.node_resources_fit import (
    ERR_REASON_INSUFFICIENT,
    ERR_REASON_TOO_MANY_PODS,
    NAME,
    NodeResourcesFit,
    fits_request,
    rejection,
)
from kresched.sched.node_unschedulable import NodeUnschedulable
from kresched.sched.runner import find_nodes_that_fit, fit_error_message
from kresched.sched.taint_toleration import TaintToleration
from tests.builders import make_node, make_pod, make_state

GI = 2**30
FOO = "example.com/foo"


def _short(code: Code, *insufficient: InsufficientResource) -> tuple[Code, tuple[InsufficientResource, ...]]:
    """A rejection: its code, and what `fits_request` finds short (the Status has the reasons)."""
    return code, insufficient


def _running(name: str, **kw: Any) -> Pod:
    return make_pod(name, node="node-a", **kw)


@pytest.mark.parametrize(
    ("node_kw", "running", "pod", "want"),
    [
        pytest.param({}, [], make_pod(cpu="1", memory="1Gi"), SUCCESS, id="a pod that fits passes"),
        pytest.param({}, [_running("a", cpu="3")], make_pod(cpu="1"), SUCCESS,
                     id="a request equal to what is left fits"),
        pytest.param({}, [_running("a", cpu="3")], make_pod(cpu="1500m"),
                     _short(Code.UNSCHEDULABLE, InsufficientResource("cpu", 1500, 3000, 4000)),
                     id="cpu short on a node big enough is resolvable by eviction"),
        pytest.param({}, [], make_pod(cpu="5"),
                     _short(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                            InsufficientResource("cpu", 5000, 0, 4000, unresolvable=True)),
                     id="a cpu request above the node's allocatable is unresolvable"),
        pytest.param({}, [_running("a", cpu="3", memory="7Gi")], make_pod(cpu="2", memory="9Gi"),
                     _short(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                            InsufficientResource("cpu", 2000, 3000, 4000),
                            InsufficientResource("memory", 9 * GI, 7 * GI, 8 * GI, unresolvable=True)),
                     id="each short resource is a reason, and one unresolvable makes the node unresolvable"),
        pytest.param({"pods": 1}, [_running("a")], make_pod(cpu="1"),
                     _short(Code.UNSCHEDULABLE, InsufficientResource("pods", 1, 1, 1)),
                     id="a full node gives Too many pods, resolvably"),
        pytest.param({"pods": 0}, [], make_pod(),
                     _short(Code.UNSCHEDULABLE, InsufficientResource("pods", 1, 0, 0)),
                     id="Too many pods is never unresolvable, even on a node admitting no pods"),
        pytest.param({"pods": 1}, [_running("a", cpu="4")], make_pod(cpu="1"),
                     _short(Code.UNSCHEDULABLE, InsufficientResource("pods", 1, 1, 1),
                            InsufficientResource("cpu", 1000, 4000, 4000)),
                     id="Too many pods comes before the resources"),
        pytest.param({}, [_running("a", cpu="4", memory="8Gi")], make_pod(), SUCCESS,
                     id="a pod requesting nothing fits a node with no cpu or memory left"),
        pytest.param({}, [], make_pod(extra_requests={FOO: "1"}),
                     _short(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                            InsufficientResource(FOO, 1, 0, 0, unresolvable=True)),
                     id="an extended resource the node does not have is unresolvable"),
        pytest.param({"extra": {FOO: "2"}}, [_running("a", extra_requests={FOO: "2"})],
                     make_pod(extra_requests={FOO: "1"}),
                     _short(Code.UNSCHEDULABLE, InsufficientResource(FOO, 1, 2, 2)),
                     id="an extended resource in use is resolvable"),
        pytest.param({"extra": {FOO: "2"}}, [], make_pod(extra_requests={FOO: "2"}), SUCCESS,
                     id="an extended resource the node has fits"),
        pytest.param({}, [], make_pod(cpu="1", extra_requests={FOO: "0"}), SUCCESS,
                     id="a zero request for a resource the node lacks is ignored"),
        pytest.param({"extra": {FOO: "1"}}, [_running("a", extra_requests={FOO: "2"})],
                     make_pod(cpu="1", extra_requests={FOO: "0"}), SUCCESS,
                     id="a zero request is ignored even on a node whose use exceeds its allocatable"),
        pytest.param({"cpu": "1"}, [_running("a", cpu="2")], make_pod(memory="1Gi"), SUCCESS,
                     id="a pod requesting no cpu passes a node overcommitted in cpu"),
        pytest.param({}, [_running("a", cpu="1")], make_pod(cpu="4"),
                     _short(Code.UNSCHEDULABLE, InsufficientResource("cpu", 4000, 1000, 4000)),
                     id="a request equal to the node's whole allocatable is resolvable"),
        pytest.param({}, [], make_pod(extra_requests={"ephemeral-storage": "200Gi"}),
                     _short(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                            InsufficientResource("ephemeral-storage", 200 * GI, 0, 100 * GI, unresolvable=True)),
                     id="ephemeral-storage is checked"),
        pytest.param({"extra": {"hugepages-2Mi": "1Gi"}}, [], make_pod(extra_requests={"hugepages-2Mi": "2Gi"}),
                     _short(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                            InsufficientResource("hugepages-2Mi", 2 * GI, 0, GI, unresolvable=True)),
                     id="hugepages are checked as scalar resources"),
        pytest.param({}, [], make_pod(extra_requests={"vendor.io/b": "1", "vendor.io/a": "1"}),
                     _short(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                            InsufficientResource("vendor.io/a", 1, 0, 0, unresolvable=True),
                            InsufficientResource("vendor.io/b", 1, 0, 0, unresolvable=True)),
                     id="scalar resources are reported in name order"),
        pytest.param({}, [_running("a", cpu="3")], make_pod(limits={"cpu": "2"}),
                     _short(Code.UNSCHEDULABLE, InsufficientResource("cpu", 2000, 3000, 4000)),
                     id="a limit without a request counts as the request"),
        pytest.param({}, [_running("done", cpu="4", phase="Succeeded")], make_pod(cpu="1"), SUCCESS,
                     id="a finished pod holds no resources"),
    ],
)
def test_filter(node_kw: dict[str, Any], running: list[Pod], pod: Pod,
                want: Status | tuple[Code, tuple[InsufficientResource, ...]]) -> None:
    info = NodeInfo(make_node("node-a", **node_kw), running)
    got = NodeResourcesFit().filter(CycleState(), pod, info)
    if want is SUCCESS:
        assert got == SUCCESS
        assert fits_request(pod.requests, info) == []
    else:
        code, short = want
        assert got == Status(code, tuple(r.reason for r in short), NAME)
        assert fits_request(pod.requests, info) == list(short)


def test_reasons_are_upstreams_strings() -> None:
    info = NodeInfo(make_node("node-a", pods=0), [])
    got = fits_request(make_pod(cpu="5", memory="9Gi", extra_requests={FOO: "1"}).requests, info)
    assert [r.reason for r in got] == [ERR_REASON_TOO_MANY_PODS, "Insufficient cpu", "Insufficient memory",
                                       f"Insufficient {FOO}"]
    assert [ERR_REASON_INSUFFICIENT.format(r.resource) for r in got[1:]] == [r.reason for r in got[1:]]


def test_evicting_a_pod_makes_room() -> None:
    holder = _running("a", cpu="3")
    info = NodeInfo(make_node("node-a"), [holder])
    pod = make_pod(cpu="2")
    assert NodeResourcesFit().filter(CycleState(), pod, info).code == Code.UNSCHEDULABLE
    simulated = info.clone()
    simulated.remove_pod(holder)
    assert NodeResourcesFit().filter(CycleState(), pod, simulated) == SUCCESS


def test_pre_filter_never_skips() -> None:
    snapshot = Snapshot.from_state(make_state([make_node()]))
    assert NodeResourcesFit().pre_filter(CycleState(), make_pod(), snapshot) == PreFilterResult()


def test_the_six_filters_give_the_schedulers_message() -> None:
    """Each node fails on a different filter; the first failing filter's reasons are counted."""
    nodes = [
        make_node("a-cordoned", unschedulable=True),
        make_node("b-tainted", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
        make_node("c-wrong-zone", labels={"zone": "b"}),
        make_node("d-port", labels={"zone": "a"}),
        make_node("e-full", labels={"zone": "a"}, cpu="1"),
        make_node("f-fits", labels={"zone": "a"}),
    ]
    running = [make_pod("web", node="d-port", ports=[{"containerPort": 80, "hostPort": 80}])]
    pod = make_pod("new", cpu="2", memory="9Gi", node_selector={"zone": "a"},
                   ports=[{"containerPort": 80, "hostPort": 80}])
    plugins = [NodeUnschedulable(), NodeName(), TaintToleration(), NodeAffinity(), NodePorts(), NodeResourcesFit()]
    diag, _ = find_nodes_that_fit(plugins, pod, Snapshot.from_state(make_state(nodes, running)))
    assert diag.feasible == []
    assert {n: st.plugin for n, st in diag.node_to_status.items()} == {
        "a-cordoned": "NodeUnschedulable", "b-tainted": "TaintToleration", "c-wrong-zone": "NodeAffinity",
        "d-port": "NodePorts", "e-full": "NodeResourcesFit", "f-fits": "NodeResourcesFit",
    }
    assert fit_error_message(diag) == (
        "0/6 nodes are available: 1 Insufficient cpu, 1 node(s) didn't have free ports for the requested pod ports, "
        "1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint(s), "
        "1 node(s) were unschedulable, 2 Insufficient memory."
    )


_CPU = st.integers(0, 6)
_GIB = st.integers(0, 10)


@settings(max_examples=300, deadline=None)
@given(node_cpu=_CPU, node_mem=_GIB, node_pods=st.integers(0, 3), used=st.lists(st.tuples(_CPU, _GIB), max_size=3),
       cpu=_CPU, mem=_GIB, eph=st.sampled_from([None, "50Gi", "150Gi"]))
def test_the_short_rejection_of_a_pod_without_extended_resources_is_the_general_one(
        node_cpu: int, node_mem: int, node_pods: int, used: list[tuple[int, int]], cpu: int, mem: int,
        eph: str | None) -> None:
    """Where a pod requests no extended resource, the filter names what is short from its own
    comparisons (and keeps one Status per answer): the same Status as the general rule's."""
    running = [_running(f"r{i}", cpu=str(c), memory=f"{m}Gi", extra_requests={"ephemeral-storage": "60Gi"})
               for i, (c, m) in enumerate(used)]
    info = NodeInfo(make_node("node-a", cpu=node_cpu, memory=f"{node_mem}Gi", pods=node_pods), running)
    pod = make_pod(cpu=str(cpu), memory=f"{mem}Gi", extra_requests={"ephemeral-storage": eph} if eph else None)
    assert not pod.requests.scalar
    assert NodeResourcesFit().filter(CycleState(), pod, info) == rejection(pod.requests, info)
