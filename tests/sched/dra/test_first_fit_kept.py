"""A first fit kept across allocations (`inuse.still_first_fit`): the allocator's answer for the same
claim specs on a node is found again only where devices it holds were taken or any was freed.

DynamicResources keeps each node's first fit per claim specs with the versions of the node's pools.
Where only other devices were allocated since, the answer is the same (the search over the devices
is in a fixed order, and devices taken only prune it): kept. Here: generated GPU queues planned with
the kept answers and without them give the same plans; and the examples where it must not be kept.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.gang import plan_queue
from kresched.plan.planner import Planner
from kresched.plan.plans import PlanOptions
from kresched.plan.queue import gang_lookups, pending_pods_to_plan, plan_pending
from kresched.sched import dynamic_resources
from kresched.sched.dra import inuse
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


def _plans(state: ClusterState, pods: list[Pod], keep: bool) -> list[tuple]:
    state.dra.derived.clear()  # (what an earlier run kept, not this one's)
    with mock.patch.object(dynamic_resources, "still_first_fit", inuse.still_first_fit if keep else _never):
        return [decision(p) for p in plan_queue(Planner(state, PlanOptions()), pods, *gang_lookups(state))]


def _never(*_: object) -> bool:
    return False


@PROFILE
@given(queues())
def test_a_queue_plans_the_same_keeping_first_fits_across_allocations_as_allocating_again(
        queue: tuple[ClusterState, list[Pod]]) -> None:
    state, pods = queue
    assert _plans(state, pods, keep=True) == _plans(state, pods, keep=False)


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
