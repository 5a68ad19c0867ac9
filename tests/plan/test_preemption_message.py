"""The scheduler's own message in a plan that no eviction helps: its `preemption: ` part reads each
node's failure with every lower-priority pod gone from the tiers' victim selections where it can
(`Planner._infeasible`); it is the message `explain` finds filtering every node afresh."""

from __future__ import annotations

from typing import Any

from hypothesis import given

from kresched.model.cluster import ClusterState
from kresched.plan.explain import explain_pod
from kresched.plan.planner import Planner
from kresched.plan.plans import PlanOptions
from tests.plan.test_properties import OPTIONS, PROFILE
from tests.plan.test_tier_order import pods_with_terms


@PROFILE
@given(pods_with_terms(), OPTIONS)
def test_a_plan_no_eviction_helps_quotes_the_schedulers_preemption_message(cluster: tuple[ClusterState, Any],
                                                                            options: PlanOptions) -> None:
    state, pod = cluster
    plan = Planner(state, options).plan(pod)
    if plan.outcome != "infeasible":
        return
    explained = explain_pod(state, pod)
    assert explained.scheduler_message is not None
    assert plan.message.startswith(explained.scheduler_message)
