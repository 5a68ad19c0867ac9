"""A first fit kept across allocations (`inuse.still_first_fit`): the allocator's answer for the same
claim specs on a node is found again only where devices it holds were taken or any was freed.

DynamicResources keeps each node's first fit per claim specs with the versions of the node's pools.
Where only other devices were allocated since, the answer is the same (the search over the devices
is in a fixed order, and devices taken only prune it): kept. Here: generated GPU queues planned with
the kept answers and without them give the same plans; the examples where it must not be kept; and
`still_first_fit`'s own table over one pool's history.
"""

from __future__ import annotations

import contextlib
from unittest import mock

import pytest
from hypothesis import given

from kresched.model.cluster import ClusterState
from kresched.model.dra import AllocationResult, DeviceAllocationResult, DeviceRequestAllocationResult
from kresched.model.objects import Pod
from kresched.plan.gang import plan_queue
from kresched.plan.planner import Planner
from kresched.plan.plans import PlanOptions
from kresched.plan.queue import gang_lookups, pending_pods_to_plan, plan_pending
from kresched.sched import dynamic_resources
from kresched.sched.dra.allocator import NodeAllocation
from kresched.sched.dra.inuse import still_first_fit
from kresched.sched.framework import Code, Status
from tests.builders import (
    device_request,
    make_claim,
    make_claim_template,
    make_device,
    make_device_class,
    make_node,
    make_pod,
    make_slice,
    make_state,
)
from tests.plan.test_queue_cache import PROFILE, decision, queues

GPU = "gpu.example.com"
MODEL_A = device_request(selectors=[f'device.attributes["{GPU}"].model == "A"'])


def planned_with(state: ClusterState, pods: list[Pod], name: str | None = None, stand_in: object = None
                 ) -> list[tuple]:
    """The queue's decisions, planned afresh, with `dynamic_resources.<name>` replaced by `stand_in`
    (no name: as it is)."""
    state.dra.derived.clear()  # (what an earlier run kept, not this one's)
    with mock.patch.object(dynamic_resources, name, stand_in) if name else contextlib.nullcontext():
        return [decision(p) for p in plan_queue(Planner(state, PlanOptions()), pods, *gang_lookups(state))]


def _never(*_: object) -> bool:
    return False


@PROFILE
@given(queues())
def test_a_queue_plans_the_same_keeping_first_fits_across_allocations_as_allocating_again(
        queue: tuple[ClusterState, list[Pod]]) -> None:
    state, pods = queue
    assert planned_with(state, pods) == planned_with(state, pods, "still_first_fit", _never)


def _model_a_pod(name: str) -> tuple[Pod, object]:
    pod = make_pod(name, cpu="100m", priority=100, claim_templates={"gpu": "model-a"}, generated={"gpu": f"{name}-gpu"})
    return pod, make_claim(f"{name}-gpu", owner_pod=pod, requests=[MODEL_A])


def _cluster(devices: list[dict], queue: list[tuple[Pod, object]], running: tuple[Pod, ...] = (),
             held: tuple[object, ...] = ()) -> ClusterState:
    return make_state([make_node("n0", cpu="8", memory="16Gi")], [*running, *(p for p, _ in queue)], [],
                      dra=[make_device_class(), make_claim_template("model-a", requests=[MODEL_A]),
                           make_slice("n0", devices), *held, *(c for _, c in queue)])


def _granted(state: ClusterState) -> list[str]:
    return [g.device for plan in plan_pending(state, pending_pods_to_plan(state, all_pending=True))
            for g in plan.devices or ()]


def test_the_device_a_first_fit_held_taken_since_the_next_pod_of_its_specs_gets_the_next_one():
    # Each pod of the same specs is told of a device of its own: the first fit kept for the first
    # pod (gpu-1) is taken by it, so it is not the second pod's answer.
    devices = [make_device("gpu-0", attributes={"model": "B"}), make_device("gpu-1", attributes={"model": "A"}),
               make_device("gpu-2", attributes={"model": "A"})]
    state = _cluster(devices, [_model_a_pod("p1"), _model_a_pod("p2")])
    assert _granted(state) == ["gpu-1", "gpu-2"]


def test_a_node_no_first_fit_was_found_on_fits_once_a_device_is_freed():
    # A running pod holds the only model-A device; an evicting plan frees it (the pod's claim is
    # deallocated with it): the next pod's answer on that node is found again, not kept as "none".
    devices = [make_device("gpu-0", attributes={"model": "A"})]
    low = make_pod("low", node="n0", cpu="100m", priority=0, claim_templates={"gpu": "model-a"},
                   generated={"gpu": "low-gpu"})
    held = make_claim("low-gpu", owner_pod=low, allocated=[(GPU, "n0", "gpu-0")], node="n0", reserved_for=[low])
    state = _cluster(devices, [_model_a_pod("p1")], running=(low,), held=(held,))
    [plan] = plan_pending(state, pending_pods_to_plan(state, all_pending=True))
    assert plan.outcome == "evict"
    assert [v.pod.name for v in plan.victims] == ["low"]
    assert [g.device for g in plan.devices or ()] == ["gpu-0"]


def _fit(*devices: str) -> NodeAllocation:
    results = tuple(DeviceRequestAllocationResult(request="gpu", driver=GPU, pool="n0", device=d) for d in devices)
    return NodeAllocation((AllocationResult(DeviceAllocationResult(results)),))


# The pool's history: 0 → 1 (gpu-0 taken) → 2 (gpu-1 taken) → 3 (gpu-0 freed); 0 → 5 (gpu-2 taken),
# another lineage from the state as loaded.
CHANGES = {1: (0, (GPU, "n0", "gpu-0")), 2: (1, (GPU, "n0", "gpu-1")), 3: (2, None), 5: (0, (GPU, "n0", "gpu-2"))}


@pytest.mark.parametrize(("result", "then", "now", "counters", "kept"), [
    (None, (0,), (2,), False, True),  # nothing fit; devices only taken since: nothing fits
    (None, (0,), (3,), False, False),  # one was freed since
    (_fit("gpu-2"), (0,), (2,), False, True),  # other devices taken
    (_fit("gpu-1"), (0,), (2,), False, False),  # its own device taken
    (_fit("gpu-1"), (1,), (2,), False, False),
    (_fit("gpu-2"), (1,), (2,), False, True),  # from a version between
    (_fit("gpu-2"), (0,), (2,), True, False),  # devices share counters: a fit is not kept
    (None, (0,), (2,), True, True),  # (but no fit stays no fit)
    (_fit("gpu-2"), (2,), (5,), False, False),  # another lineage's versions
    (_fit("gpu-0"), (5,), (2,), False, False),
    (None, (0,), (4,), False, False),  # a version whose history is not known
    (Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("no",)), (0,), (2,), False, False),  # a Status: found again
])
def test_a_first_fit_is_kept_only_across_allocations_of_devices_it_does_not_hold(result, then, now, counters, kept):
    assert still_first_fit(result, then, now, CHANGES, counters) is kept
