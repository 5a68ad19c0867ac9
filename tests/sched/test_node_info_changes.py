"""Taking pods off a NodeInfo in one pass (`remove_pods`) or taking back the pod just added
(`take_back`) leaves it as `remove_pod` one at a time does: the pods in their order, the requests,
the pods with affinity, the ports, the pods with volumes, the namespace groups."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.sched.node_info import NodeInfo
from tests.builders import make_node, make_pod, pvc_volume

ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}]}}


def _pod(i: int, kind: int) -> object:
    return make_pod(f"p{i}", namespace=("a", "b")[i % 2], node="n", cpu=f"{100 + i}m", memory=f"{i + 1}Mi",
                    labels={"app": "a"}, affinity=ANTI if kind == 1 else None,
                    ports=[{"containerPort": 80 + i, "hostPort": 8000 + i}] if kind == 2 else None,
                    volumes=[pvc_volume(f"c{i}")] if kind == 3 else None, extra_requests={"gpu.example/x": "1"}
                    if kind == 4 else None)


def _seen(info: NodeInfo) -> tuple:
    return ([p.key for p in info.pods], info.requested_milli_cpu, info.requested_memory, info.nonzero_milli_cpu,
            info.nonzero_memory, info.requested_scalar, [p.key for p in info.pods_with_affinity],
            [p.key for p in info.pods_with_required_anti_affinity], dict(info.used_ports),
            [p.key for p in info.pods_with_volumes()],
            {ns: [p.key for p in pods] for ns, pods in info.namespace_groups().items()})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=12), st.data())
def test_removing_pods_in_one_pass_is_removing_them_one_at_a_time(kinds, data):
    pods = [_pod(i, k) for i, k in enumerate(kinds)]
    gone = data.draw(st.lists(st.sampled_from(pods), unique_by=lambda p: p.key))
    warm = data.draw(st.booleans())  # the kept groups and volume pods found before, or not
    one, batch = NodeInfo(make_node("n"), pods), NodeInfo(make_node("n"), pods)
    if warm:
        for info in (one, batch):
            info.pods_with_volumes(), info.namespace_groups(), info.used_ports
    for p in gone:
        one.remove_pod(p)
    batch.remove_pods(gone)
    assert _seen(batch) == _seen(one)
    # A pod put back, then taken back: as removing it again.
    for p in gone[:2]:
        one.add_pod(p)
        batch.add_pod(p)
        one.remove_pod(p)
        batch.take_back(p)
        assert _seen(batch) == _seen(one)


def test_a_pod_not_on_the_node_is_an_error_and_nothing_is_removed():
    pods = [_pod(0, 0), _pod(1, 0)]
    info = NodeInfo(make_node("n"), pods)
    with pytest.raises(ValueError, match="default/elsewhere is not on node n"):
        info.remove_pods([pods[0], make_pod("elsewhere", node="m")])
    assert [p.key for p in info.pods] == ["a/p0", "b/p1"]
