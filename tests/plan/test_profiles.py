"""The planner with the cluster's scheduler profiles: each pod (and each victim's replacement) is
simulated with its schedulerName's profile, within one queue; a filter the profile disables is not
run; `percentageOfNodesToScore` decides how far the scheduler searches; a pod of another
scheduler is left to it."""

from __future__ import annotations

from typing import Any

import yaml

from kresched.plan.planner import Planner, plan_pod
from kresched.plan.plans import PlanOptions
from kresched.plan.queue import plan_pending
from kresched.sched.config import parse_scheduler_config
from kresched.sched.profile import Profiles, build_profiles
from tests.builders import make_node, make_pod, make_state

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
BIN_PACKER = HEAD + """profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packer
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""


def _profiles(text: str) -> Profiles:
    cfg, specs = parse_scheduler_config(yaml.safe_load(text))
    return build_profiles(cfg, specs, "test.yaml")


def _opts(text: str, **kw: Any) -> PlanOptions:
    return PlanOptions(profiles=_profiles(text), **kw)


def test_two_profiles_in_one_queue_each_place_their_own_pods() -> None:
    state = make_state([make_node("a"), make_node("b")], [
        make_pod("half", node="a", cpu="2"),
        make_pod("spread", cpu="500m", priority=10),
        make_pod("packed", cpu="500m", priority=5, spec={"schedulerName": "bin-packer"}),
    ])
    plans = plan_pending(state, [state.pod("default/spread"), state.pod("default/packed")], _opts(BIN_PACKER))
    assert [(p.pod.name, p.node, p.profile) for p in plans] == [("spread", "b", "default-scheduler"),
                                                               ("packed", "a", "bin-packer")]


def test_a_disabled_filter_is_not_run() -> None:
    state = make_state([make_node("a")], [
        make_pod("web", node="a", ports=[{"containerPort": 80, "hostPort": 80}]),
        make_pod("p", priority=100, ports=[{"containerPort": 80, "hostPort": 80}]),
    ])
    pod = state.pod("default/p")
    assert plan_pod(state, pod).outcome == "evict"
    no_ports = HEAD + "profiles:\n- plugins:\n    filter:\n      disabled: [{name: NodePorts}]\n"
    plan = plan_pod(state, pod, _opts(no_ports))
    assert (plan.outcome, plan.node) == ("fits", "a")


def test_percentage_of_nodes_to_score_decides_how_far_the_scheduler_searches() -> None:
    """150 feasible nodes: the adaptive percentage (49 %) stops at 100 of them, a profile's 100 %
    looks at all; the profile's value wins over the file's."""
    state = make_state([make_node(f"n{i:03d}") for i in range(150)], [make_pod("p", cpu="100m")])
    pod = state.pod("default/p")
    assert plan_pod(state, pod).likely is True
    everything = HEAD + "percentageOfNodesToScore: 10\nprofiles:\n- percentageOfNodesToScore: 100\n"
    assert plan_pod(state, pod, _opts(everything)).likely is False
    planner = Planner(state, _opts(everything))
    assert planner.placer.percentage == 100


def test_a_victims_replacement_of_another_scheduler_is_not_placed() -> None:
    """The victim on `a` belongs to volcano: where its replacement lands is volcano's business,
    not stated (and not counted as staying Pending); `b` holds a pod nothing may evict."""
    state = make_state([make_node("a", cpu="2"), make_node("b", cpu="2")], [
        make_pod("job", node="a", cpu="2", spec={"schedulerName": "volcano"}),
        make_pod("system", "kube-system", node="b", cpu="2", priority=2_000_001_000),
        make_pod("crit", "kube-system", cpu="2", priority=2_000_000_000),
    ])
    plan = plan_pod(state, state.pod("kube-system/crit"))
    (victim,) = plan.victims
    assert (plan.node, victim.pod.name, victim.lands_on) == ("a", "job", None)
    assert victim.pending_reason is not None
    assert victim.pending_reason.startswith("scheduled by another scheduler: its schedulerName 'volcano'")
    simulated = plan_pod(state, state.pod("kube-system/crit"), PlanOptions(profiles=Profiles.default().with_fallback()))
    assert simulated.victims[0].pending_reason is not None
    assert simulated.victims[0].pending_reason.startswith("0/2 nodes are available")


def test_replicas_of_two_profiles_are_not_answered_by_each_others_plans() -> None:
    """Two pods alike but for their schedulerName, each profile's NodeAffinity adding a node of its
    own: on `a` nothing may be evicted for them, on `b` the filler may. The same filters run for
    both, and read the same of the pods: what one pod's search found says nothing of the other's."""
    def profile(name: str, node: str) -> str:
        return (f"- schedulerName: {name}\n  pluginConfig:\n  - name: NodeAffinity\n    args:\n"
                "      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
                "          nodeSelectorTerms:\n          - matchExpressions:\n"
                f"            - {{key: kubernetes.io/hostname, operator: In, values: [{node}]}}\n")
    two = HEAD + "profiles:\n" + profile("to-a", "a") + profile("to-b", "b")
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "other"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    state = make_state([make_node("a", cpu="4"), make_node("b", cpu="4")], [
        make_pod("keeper", node="a", cpu="4", priority=1000),
        make_pod("filler", node="b", cpu="4", priority=0),
        *(make_pod(name, cpu="1", priority=100, affinity=anti, spec={"schedulerName": f"to-{node}"})
          for name, node in (("p1", "a"), ("p2", "b"))),
    ])
    for memoize in (True, False):
        planner = Planner(state, _opts(two), memoize=memoize)
        plans = [planner.plan(state.pod(f"default/{name}"), commit=True) for name in ("p1", "p2")]
        assert [(p.outcome, p.node, p.profile) for p in plans] == [("infeasible", None, "to-a"),
                                                                   ("evict", "b", "to-b")]


def test_victims_are_selected_without_the_resources_the_profile_ignores() -> None:
    """NodeResourcesFit's `ignoredResources`: no node has example.com/foo, which the pod asks for;
    the filter does not check it, so the scheduler makes room for the cpu alone — and so does
    victim selection (its running totals read the request the filter reads)."""
    state = make_state([make_node("a", cpu="2")], [
        make_pod("low", node="a", cpu="2"),
        make_pod("p", cpu="1", priority=100, extra_requests={"example.com/foo": "1"}),
    ])
    pod = state.pod("default/p")
    ignoring = HEAD + ("profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
                       "    args: {ignoredResources: [example.com/foo]}\n")
    assert plan_pod(state, pod).outcome == "infeasible"
    plan = plan_pod(state, pod, _opts(ignoring))
    assert (plan.outcome, plan.node, [v.pod.name for v in plan.victims]) == ("evict", "a", ["low"])
