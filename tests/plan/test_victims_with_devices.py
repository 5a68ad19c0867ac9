"""The victims of a pod with claims on one node: running totals give what the framework's own
procedure gives (hypothesis).

Where NodeResourcesFit is the only filter that reads the pods on a node and DynamicResources the
only other one left, `select_victims` selects victims on running totals
(`select_victims_by_resources`) and asks DynamicResources once: it has no RemovePod upstream and
reads the node and the cycle's allocated devices alone, so its verdict is the same whichever pods
are taken off. Here generated nodes with GPUs of two models (some held by running pods) and a
pending pod whose claim comes from a template (any GPU, or one model by CEL): on every node, the
victims — or the reason when there are none — are `select_victims_on_node`'s, which removes the
pods from a clone and runs every filter after each step.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kresched.plan.planner import Planner
from kresched.plan.plans import PlanOptions
from kresched.sched.preemption import select_victims, select_victims_on_node
from kresched.sched.runner import run_pre_filter
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

GPU = "gpu.example.com"
TEMPLATES = {"any": device_request(),
             "model-A": device_request(selectors=[f'device.attributes["{GPU}"].model == "A"'])}


@st.composite
def scenes(draw: st.DrawFn) -> tuple:
    nodes, pods, dra = [], [], []
    for i in range(draw(st.integers(1, 4))):
        name = f"n{i}"
        nodes.append(make_node(name, cpu="4", memory="8Gi"))
        models = draw(st.lists(st.sampled_from(("A", "B")), max_size=2))
        dra.append(make_slice(name, [make_device(f"gpu-{k}", attributes={"model": m}) for k, m in enumerate(models)]))
        free = [f"gpu-{k}" for k in range(len(models))]
        used = 0
        for j in range(draw(st.integers(0, 4))):
            cpu = draw(st.sampled_from((500, 1000, 1500, 2000)))
            if used + cpu > 4000:
                break
            used += cpu
            pname = f"{name}-r{j}"
            holds = bool(free) and draw(st.booleans())
            pod = make_pod(pname, node=name, cpu=f"{cpu}m", priority=draw(st.sampled_from((0, 100, 5000))), grace=5,
                           claim_templates={"gpu": "any"} if holds else None,
                           generated={"gpu": f"{pname}-gpu"} if holds else None,
                           start_time=f"2026-01-0{draw(st.integers(1, 4))}T00:00:00Z")
            pods.append(pod)
            if holds:
                dra.append(make_claim(f"{pname}-gpu", owner_pod=pod, allocated=[(GPU, name, free.pop(0))], node=name,
                                      reserved_for=[pod]))
    template = draw(st.sampled_from(sorted(TEMPLATES)))
    pending = make_pod("p", cpu=draw(st.sampled_from(("500m", "1", "2", "3"))), priority=1000, start_time=None,
                       claim_templates={"gpu": template}, generated={"gpu": "p-gpu"})
    dra += [make_device_class(), *(make_claim_template(t, requests=[r]) for t, r in TEMPLATES.items())]
    dra.append(make_claim("p-gpu", owner_pod=pending, requests=[TEMPLATES[template]]))  # made, not allocated
    return make_state(nodes, [*pods, pending], dra=dra), pending


@settings(derandomize=True, database=None, deadline=None, max_examples=150,
          suppress_health_check=[HealthCheck.too_slow])
@given(scenes())
def test_victims_of_a_pod_with_claims_on_running_totals_are_the_framework_s(scene: tuple) -> None:
    state, pod = scene
    planner = Planner(state, PlanOptions())
    snap = planner.work.snapshot
    cycle, st_, _ = run_pre_filter(planner.plugins, pod, snap)
    assert st_.is_success
    assert "DynamicResources" not in cycle.skip
    for info in snap.node_infos:
        eligible = planner.evictable.eligible(info, planner.evictable.candidates(info, pod.priority), 3)
        split = planner.work.ledger.split_violating
        got = select_victims(planner.dynamic, cycle, pod, info, eligible, split)
        want = select_victims_on_node(planner.dynamic, cycle.clone(), pod, info.clone(), eligible, split)
        st, want_st = got.status, want.status
        assert (st.code, st.reasons, st.plugin) == (want_st.code, want_st.reasons, want_st.plugin), info.name
        assert [p.key for p in got.victims] == [p.key for p in want.victims], info.name
