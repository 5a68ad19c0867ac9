"""NodePorts: a pod's host ports must be free on the node, with 0.0.0.0 as the only wildcard."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.objects import Pod
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.node_ports import ERR_REASON, NAME, NodePorts
from kresched.sched.runner import find_nodes_that_fit, fit_error_message
from tests.builders import make_node, make_pod, make_state

SKIP = PreFilterResult(Status(Code.SKIP))


def _port(host_port: int, protocol: str = "TCP", host_ip: str = "", container_port: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {"containerPort": container_port or host_port, "hostPort": host_port,
                           "protocol": protocol}
    if host_ip:
        out["hostIP"] = host_ip
    return out


def _taken(*ports: str) -> Status:
    return Status(Code.UNSCHEDULABLE, (ERR_REASON,), NAME, details=tuple(f"hostPort {p} is in use" for p in ports))


def _running(name: str, ports: list[dict[str, Any]], **kw: Any) -> Pod:
    return make_pod(name, node="node-a", ports=ports, **kw)


def _sidecar(ports: list[dict[str, Any]], restart_policy: str | None = "Always") -> list[dict[str, Any]]:
    c: dict[str, Any] = {"name": "side", "ports": ports}
    if restart_policy:
        c["restartPolicy"] = restart_policy
    return [c]


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod(), SKIP, id="a pod without ports skips the filter"),
        pytest.param(make_pod(ports=[{"containerPort": 8080}]), SKIP,
                     id="a container port without hostPort skips the filter"),
        pytest.param(make_pod(ports=[_port(80)]), PreFilterResult(), id="a pod with a hostPort is filtered"),
        pytest.param(make_pod(init_containers=_sidecar([_port(80)])), PreFilterResult(),
                     id="a sidecar's hostPort counts"),
        pytest.param(make_pod(init_containers=_sidecar([_port(80)], restart_policy=None)), SKIP,
                     id="a plain init container's hostPort does not count"),
        pytest.param(make_pod(ports=[{"containerPort": 9100}], spec={"hostNetwork": True}), PreFilterResult(),
                     id="with hostNetwork a container port is a host port"),
    ],
)
def test_pre_filter(pod: Pod, want: PreFilterResult) -> None:
    snapshot = Snapshot.from_state(make_state([make_node("node-a")]))
    assert NodePorts().pre_filter(CycleState(), pod, snapshot) == want


@pytest.mark.parametrize(
    ("wanted", "running", "want"),
    [
        pytest.param([_port(80)], [], SUCCESS, id="a free port fits"),
        pytest.param([_port(80)], [_running("web", [_port(80)])], _taken("0.0.0.0:80/TCP"),
                     id="the same port and protocol on the wildcard IP conflicts, resolvably"),
        pytest.param([_port(80, "UDP")], [_running("web", [_port(80)])], SUCCESS,
                     id="the same port with another protocol fits"),
        pytest.param([_port(81)], [_running("web", [_port(80)])], SUCCESS, id="another port fits"),
        pytest.param([_port(80, host_ip="10.0.0.1")], [_running("web", [_port(80, host_ip="10.0.0.1")])],
                     _taken("10.0.0.1:80/TCP"), id="the same IP, port and protocol conflicts"),
        pytest.param([_port(80, host_ip="10.0.0.1")], [_running("web", [_port(80, host_ip="10.0.0.2")])],
                     SUCCESS, id="the same port on two specific IPs fits"),
        pytest.param([_port(80)], [_running("web", [_port(80, host_ip="10.0.0.2")])], _taken("0.0.0.0:80/TCP"),
                     id="a wanted 0.0.0.0 conflicts with the port on any IP"),
        pytest.param([_port(80, host_ip="10.0.0.1")], [_running("web", [_port(80)])], _taken("10.0.0.1:80/TCP"),
                     id="a wanted specific IP conflicts with the port in use on 0.0.0.0"),
        pytest.param([_port(80, host_ip="0.0.0.0")], [_running("web", [_port(80)])], _taken("0.0.0.0:80/TCP"),
                     id="an explicit 0.0.0.0 equals an empty hostIP"),
        pytest.param([_port(80, host_ip="::")], [_running("web", [_port(80, host_ip="10.0.0.2")])], SUCCESS,
                     id="the IPv6 any address is not a wildcard, as upstream"),
        pytest.param([_port(53, "UDP"), _port(53, "TCP")], [_running("dns", [_port(53, "UDP")])],
                     _taken("0.0.0.0:53/UDP"), id="the details list only the ports in use"),
        pytest.param([_port(80)], [make_pod("side", node="node-a", init_containers=_sidecar([_port(80)]))],
                     _taken("0.0.0.0:80/TCP"), id="a running pod's sidecar holds its hostPort"),
        pytest.param([_port(9100)], [make_pod("exp", node="node-a", ports=[{"containerPort": 9100}],
                                              spec={"hostNetwork": True})],
                     _taken("0.0.0.0:9100/TCP"), id="a running hostNetwork pod holds its container ports"),
        pytest.param([_port(80)], [_running("done", [_port(80)], phase="Succeeded")], SUCCESS,
                     id="a finished pod holds no port"),
    ],
)
def test_filter(wanted: list[dict[str, Any]], running: list[Pod], want: Status) -> None:
    pod = make_pod("new", ports=wanted)
    assert NodePorts().filter(CycleState(), pod, NodeInfo(make_node("node-a"), running)) == want


def test_evicting_the_pod_holding_the_port_frees_it() -> None:
    holder = _running("web", [_port(80)])
    info = NodeInfo(make_node("node-a"), [holder])
    pod = make_pod("new", ports=[_port(80)])
    assert NodePorts().filter(CycleState(), pod, info).code == Code.UNSCHEDULABLE
    simulated = info.clone()
    simulated.remove_pod(holder)
    assert NodePorts().filter(CycleState(), pod, simulated) == SUCCESS


def test_host_ports_are_upstreams_get_host_ports() -> None:
    pod = make_pod(ports=[_port(80), {"containerPort": 8080}, _port(53, "UDP", "10.0.0.1")],
                   init_containers=[*_sidecar([_port(9000)]), {"name": "setup", "ports": [_port(9001)]}])
    assert pod.host_ports == (("0.0.0.0", "TCP", 9000), ("0.0.0.0", "TCP", 80), ("10.0.0.1", "UDP", 53))


def test_the_scheduler_message_counts_nodes_with_the_port_taken() -> None:
    state = make_state([make_node("node-a"), make_node("node-b")], [_running("web", [_port(80)])])
    diag, _ = find_nodes_that_fit([NodePorts()], make_pod("new", ports=[_port(80)]), Snapshot.from_state(state))
    assert diag.feasible == ["node-b"]
    assert fit_error_message(diag) == (
        "0/2 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.")


_PORTS = [_port(80), _port(80, "UDP"), _port(53, host_ip="10.0.0.1"), _port(9100)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(range(len(_PORTS))), max_size=2), min_size=1, max_size=6),
       st.lists(st.tuples(st.sampled_from(("add", "remove", "clone", "read")), st.integers(0, 5)), max_size=12))
def test_the_ports_in_use_are_the_pods_ports_however_often_they_were_read(
        holders: list[list[int]], steps: list[tuple[str, int]]) -> None:
    # The ports in use are counted on first use, then kept up to date: reading them early or late,
    # before or after pods come and go on clones, gives what counting the pods there gives.
    pods = [_running(f"p{i}", [_PORTS[j] for j in dict.fromkeys(ports)]) for i, ports in enumerate(holders)]
    info = NodeInfo(make_node("node-a"), pods[: len(pods) // 2])
    seen = [info]
    for op, i in steps:
        pod = pods[i % len(pods)]
        here = any(p.key == pod.key for p in info.pods)
        if op == "add" and not here:
            info.add_pod(pod)
        elif op == "remove" and here:
            info.remove_pod(pod)
        elif op == "clone":
            info = info.clone()
            seen.append(info)
        elif op == "read":
            assert info.used_ports == Counter(port for p in info.pods for port in p.host_ports)
    for each in seen:  # a clone's changes are its own
        assert each.used_ports == Counter(port for p in each.pods for port in p.host_ports)
