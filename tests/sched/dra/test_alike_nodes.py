"""The allocator's first fit found once for nodes whose devices its search reads alike
(`sched.dra.alike`).

Two nodes with equal `node_facts` must get, for the same claims, what the allocator finds on each of
them: no fit on both, or on the second the fit `Allocator.replay` builds from where the first one's
took its devices — over generated devices (models, memory sizes, taints, binding conditions, some
in use), with the features that make the search read taints and binding conditions on and off, and
claims (counts, selectors, `All`, a constraint, tolerations, subrequests, admin access); the second
node a copy of the first's devices, or one with a single difference, both maybe reaching a
network-attached pool too. And a generated GPU
queue plans the same with the answers shared as with every node allocated on its own.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from kresched.model.cluster import ClusterState
from kresched.model.dra import DeviceClass, ResourceClaim
from kresched.model.objects import Pod
from kresched.sched.dra.alike import KeptFacts, node_facts
from kresched.sched.dra.allocated import AllocatedState
from kresched.sched.dra.allocator import AllocationError, Allocator, Features
from tests.builders import make_claim, make_device, make_device_class, make_node, make_slice
from tests.plan.test_queue_cache import PROFILE, queues
from tests.sched.dra.test_first_fit_kept import planned_with

GPU = "gpu.example.com"
_SIZE = 4

_device = st.fixed_dictionaries({
    "model": st.sampled_from(("A", "B")),
    "memory": st.sampled_from((8, 16)),
    "taint": st.sampled_from((None, None, "broken")),
    "binding": st.sampled_from(((), (), ("attached",))),
    "used": st.sampled_from((False, False, True)),
})
_request = st.fixed_dictionaries({
    "selector": st.sampled_from((None, 'device.attributes["gpu.example.com"].model == "A"',
                                 'device.attributes["gpu.example.com"].memory >= 16')),
    "count": st.sampled_from((1, 1, 2)),
    "all": st.sampled_from((False, False, False, True)),
    "tolerate": st.booleans(),
    "admin": st.sampled_from((False, False, False, True)),
    "alternatives": st.sampled_from((False, False, True)),
})


def _slice_device(i: int, d: dict[str, Any]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if d["taint"]:
        extra["taints"] = [{"key": d["taint"], "effect": "NoSchedule"}]
    if d["binding"]:
        extra["bindingConditions"] = list(d["binding"])
        extra["bindingFailureConditions"] = ["failed"]
    return make_device(f"gpu-{i}", attributes={"model": d["model"], "memory": d["memory"]}, **extra)


def _exactly(r: dict[str, Any], selector: str | None, sub: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"deviceClassName": GPU}
    if r["all"]:
        out["allocationMode"] = "All"
    else:
        out["count"] = r["count"]
    if selector:
        out["selectors"] = [{"cel": {"expression": selector}}]
    if r["tolerate"]:
        out["tolerations"] = [{"key": "broken", "operator": "Exists", "effect": "NoSchedule"}]
    if r["admin"] and not sub:  # (a subrequest has no adminAccess)
        out["adminAccess"] = True
    return out


def _claim(k: int, requests: list[dict[str, Any]], constrained: bool) -> ResourceClaim:
    spec_requests = []
    for i, r in enumerate(requests):
        if r["alternatives"]:
            spec_requests.append({"name": f"r{i}", "firstAvailable": [
                {"name": "a", **_exactly(r, 'device.attributes["gpu.example.com"].model == "B"', sub=True)},
                {"name": "b", **_exactly(r, r["selector"], sub=True)}]})
        else:
            spec_requests.append({"name": f"r{i}", "exactly": _exactly(r, r["selector"])})
    claim = make_claim(f"c{k}", requests=[])
    spec: dict[str, Any] = {"devices": {"requests": spec_requests}}
    if constrained and len(requests) > 1:
        spec["devices"]["constraints"] = [{"matchAttribute": f"{GPU}/model"}]
    return msgspec.structs.replace(claim, spec=msgspec.convert(spec, type(claim.spec)))


@settings(derandomize=True, database=None, deadline=None, max_examples=500)
@given(first=st.lists(_device, min_size=1, max_size=_SIZE), change=st.sampled_from(
           (None, None, None, "model", "memory", "taint", "binding", "used", "fewer")),
       at=st.integers(0, _SIZE - 1),
       claims=st.lists(st.tuples(st.lists(_request, min_size=1, max_size=2), st.booleans()), min_size=1, max_size=2),
       features=st.sampled_from((Features(), Features(), Features(device_binding_and_status=False),
                                 Features(device_taints=False))),
       shared=st.lists(_device, max_size=2))
def test_nodes_alike_in_what_the_search_reads_get_the_same_first_fit(
        first: list[dict[str, Any]], change: str | None, at: int,
        claims: list[tuple[list[dict[str, Any]], bool]], features: Features, shared: list[dict[str, Any]]) -> None:
    second = [dict(d) for d in first]
    k = at % len(second)
    if change == "fewer" and len(second) > 1:
        second.pop(k)
    elif change in ("model", "memory", "taint", "binding", "used"):
        options = {"model": ("A", "B"), "memory": (8, 16), "taint": (None, "broken"),
                   "binding": ((), ("attached",)), "used": (False, True)}[change]
        second[k][change] = options[1] if second[k][change] == options[0] else options[0]
    nodes = [make_node("n0"), make_node("n1")]
    slices = [make_slice(n.metadata.name, [_slice_device(i, d) for i, d in enumerate(devices)])
              for n, devices in zip(nodes, (first, second), strict=True)]
    held = [make_claim(f"held-{n.metadata.name}-{i}", allocated=[(GPU, n.metadata.name, f"gpu-{i}")],
                       node=n.metadata.name)
            for n, devices in zip(nodes, (first, second), strict=True) for i, d in enumerate(devices) if d["used"]]
    # Devices every node reaches (a network-attached pool), some in use: the same for both nodes.
    if shared:
        slices.append(make_slice(None, [{**_slice_device(i, d), "name": f"net-{i}"} for i, d in enumerate(shared)],
                                 pool="shared", allNodes=True))
        held += [make_claim(f"held-net-{i}", allocated=[(GPU, "shared", f"net-{i}")])
                 for i, d in enumerate(shared) if d["used"]]
    classes: list[DeviceClass] = [make_device_class()]
    allocator = Allocator(classes, slices, AllocatedState.from_claims(held), features=features)
    wanted = [_claim(i, requests, constrained) for i, (requests, constrained) in enumerate(claims)]
    kept = KeptFacts()
    alike = node_facts(allocator, nodes[0], (0,), kept) == node_facts(allocator, nodes[1], (0,), kept) is not None
    event(f"alike: {alike}")
    if not alike:
        return
    try:
        found, picks = allocator.allocate_picks(nodes[0], wanted)
    except AllocationError:
        event("an error: never shared")
        return
    own = allocator.allocate(nodes[1], wanted)
    event(f"fits: {found is not None}")
    if found is None:
        assert own is None
    else:
        assert allocator.replay(nodes[1], wanted, picks) == own


def _alone(allocator: Any, node: Any, claims: Any, *_: object) -> Any:
    return allocator.allocate(node, claims)


@PROFILE
@given(queues())
def test_a_gpu_queue_plans_the_same_with_first_fits_shared_among_alike_nodes(
        queue: tuple[ClusterState, list[Pod]]) -> None:
    state, pods = queue
    assert planned_with(state, pods) == planned_with(state, pods, "first_fit", _alone)


_PLAIN = {"model": "A", "memory": 8, "taint": None, "binding": (), "used": False}


@pytest.mark.parametrize(("change", "features", "alike"), [
    ({}, Features(), True),  # the same devices under other names (node, pool, device)
    ({"model": "B"}, Features(), False),  # what a selector reads
    ({"taint": "broken"}, Features(), False),
    ({"binding": ("attached",)}, Features(device_binding_and_status=False), False),  # (then not selectable)
    ({"used": True}, Features(), False),
])
def test_nodes_are_alike_only_where_the_search_reads_their_devices_alike(change: dict[str, Any], features: Features,
                                                                        alike: bool) -> None:
    nodes = [make_node("n0"), make_node("n1")]
    devices = ([_PLAIN, _PLAIN], [{**_PLAIN, **change}, _PLAIN])
    slices = [make_slice(n.metadata.name, [_slice_device(i, d) for i, d in enumerate(ds)], name=f"s-{n.metadata.name}")
              for n, ds in zip(nodes, devices, strict=True)]
    held = [make_claim("held", allocated=[(GPU, "n1", "gpu-0")], node="n1")] if change.get("used") else []
    allocator = Allocator([make_device_class()], slices, AllocatedState.from_claims(held), features=features)
    kept = KeptFacts()
    assert (node_facts(allocator, nodes[0], (0,), kept) == node_facts(allocator, nodes[1], (0,), kept)) is alike
    one = _claim(0, [{"selector": 'device.attributes["gpu.example.com"].model == "A"', "count": 1, "all": False,
                      "tolerate": False, "admin": False, "alternatives": False}], False)
    found, picks = allocator.allocate_picks(nodes[0], [one])
    own = allocator.allocate(nodes[1], [one])
    # (Where they are not alike, the first fits differ here: the first node's first device is passed over.)
    assert found is not None
    assert (allocator.replay(nodes[1], [one], picks) == own) is alike
