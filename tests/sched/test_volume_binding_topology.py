"""VolumeBinding's verdicts for claims left to provisioners, kept per the node's values of the keys
the classes' allowedTopologies read, are the verdicts found node by node (hypothesis).

Where every claim of a pod is a delayed-binding one with no volume to match and no node selected,
Filter reads of a node only the labels of its claims' classes' allowedTopologies; a StatefulSet's
pods filter thousands of nodes each, so the verdict is found once per those values. Generated
classes (with or without allowedTopologies, on the zone or another key, a provisioner or none),
claims (some with an available volume to match, some with a node selected), and nodes with or
without those labels: on every node the status and what binding would do are those of
`_find_pod_volumes` itself.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kresched.sched.framework import CycleState, Snapshot
from kresched.sched.volume_binding import NAME, VolumeBinding, _find_pod_volumes, _verdict
from tests.builders import make_node, make_pod, make_pv, make_pvc, make_state, make_storage_class, pvc_volume

ZONE = "topology.kubernetes.io/zone"
RACK = "example.com/rack"


@st.composite
def scenes(draw: st.DrawFn) -> tuple:
    storage: list[Any] = []
    classes = []
    for i in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from((ZONE, RACK)))
        allowed = draw(st.one_of(st.none(), st.lists(st.sampled_from("abc"), min_size=1, max_size=2, unique=True)))
        provisioner = draw(st.sampled_from(("csi.example.com", "kubernetes.io/no-provisioner")))
        storage.append(make_storage_class(f"sc-{i}", provisioner=provisioner, allowed_zones=allowed, zone_key=key))
        classes.append(f"sc-{i}")
    claims = []
    for j in range(draw(st.integers(1, 3))):
        sc = draw(st.sampled_from(classes))
        selected = draw(st.sampled_from((None, None, None, "n0")))
        storage.append(make_pvc(f"c{j}", storage_class=sc, request=draw(st.sampled_from(("1Gi", "5Gi"))),
                                annotations={"volume.kubernetes.io/selected-node": selected} if selected else None))
        if draw(st.integers(0, 4)) == 0:  # an available volume of the class, on one node
            storage.append(make_pv(f"pv{j}", storage_class=sc, hosts=[draw(st.sampled_from(("n0", "n1", "n2")))]))
        claims.append(f"c{j}")
    nodes = []
    for i in range(draw(st.integers(1, 6))):
        labels = {}
        for key in (ZONE, RACK):
            value = draw(st.sampled_from((None, "a", "b", "c")))
            if value is not None:
                labels[key] = value
        nodes.append(make_node(f"n{i}", labels=labels))
    pod = make_pod("p", volumes=[pvc_volume(c) for c in claims])
    return make_state(nodes, [pod], storage=storage), pod


@settings(derandomize=True, database=None, deadline=None, max_examples=300,
          suppress_health_check=[HealthCheck.too_slow])
@given(scenes())
def test_verdicts_kept_per_topology_are_those_of_each_node(scene: tuple) -> None:
    state, pod = scene
    snap = Snapshot.from_state(state)
    plugin = VolumeBinding()
    cycle = CycleState()
    if not plugin.pre_filter(cycle, pod, snap).status.is_success:
        return
    vb = cycle.read(NAME)
    for info in snap.node_infos:
        want_st, want_volumes = _verdict(*_find_pod_volumes(vb, info))
        got = plugin.filter(cycle, pod, info)
        assert (got.code, got.reasons, got.details) == (want_st.code, want_st.reasons, want_st.details), info.name
        if got.is_success:
            assert vb.pod_volumes_by_node[info.name] == want_volumes, info.name
