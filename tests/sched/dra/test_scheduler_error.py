"""A plugin's error, not a verdict, stops the scheduler's cycle (a device selector's CEL runtime
error, recorded on the rig as rig-dra/cel-runtime-error)."""

from __future__ import annotations

from kresched.plan.explain import explain_pod
from kresched.plan.planner import plan_pod
from kresched.sched.runner import SCHEDULER_ERROR_NOTE
from tests.builders import device_request, make_claim, make_device, make_pod, make_slice
from tests.sched.dra.test_device_scenes import state_with


def test_a_cel_runtime_error_on_one_node_stops_the_schedulers_cycle_though_another_node_fits() -> None:
    """A Filter error cancels findNodesThatPassFilters: the condition (reason SchedulerError) is
    the error alone, no node is chosen, no PostFilter runs (recorded on the rig: rig-dra/cel-runtime-error)."""
    typo = make_pod("typo", priority=1000, cpu="1", claim_templates={"gpu": "one-gpu"}, generated={"gpu": "typo-gpu"})
    claim = make_claim("typo-gpu", owner_pod=typo, requests=[
        device_request(selectors=['device.attributes["gpu.example.com"].vendor == "acme"'])])
    slices = [make_slice("node-a", [make_device("gpu-0")]),
              make_slice("node-b", [make_device("gpu-0", attributes={"vendor": "acme"})])]
    state = state_with([typo], [claim], slices=slices)
    e = explain_pod(state, state.pod(typo.key))
    want = ('running "DynamicResources" filter plugin: claim default/typo-gpu: selector #0: '
            "CEL runtime error: no such key: vendor")
    assert (e.schedulable, e.scheduler_message, e.preemption_message, e.predicted) == (False, want, None, None)
    assert SCHEDULER_ERROR_NOTE in e.notes
    assert {v.node: v.verdict for v in e.verdicts} == {"node-a": "error", "node-b": "fits"}
    plan = plan_pod(state, state.pod(typo.key))
    assert (plan.outcome, plan.node, plan.victims) == ("infeasible", None, ())
    assert plan.message == f"{want}; {SCHEDULER_ERROR_NOTE}"
