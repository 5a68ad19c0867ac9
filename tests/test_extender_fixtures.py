"""kresched against kube-scheduler v1.36.2 with extenders, on what the rig recorded
(`tests/fixtures/extenders/`): the same KubeSchedulerConfiguration, the same extender
(`tests.extender_server` with the recorded policies, now on ports of the test's own), the cluster
as the scheduler saw it, and where the scheduler put each pod, what it wrote when it could not, and
whom it preempted. kresched calls the extenders as the CLI does for a live cluster (an extender
nobody listens on is an error for its pods, or skipped when ignorable).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kresched.plan.explain import explain_pod
from kresched.plan.planner import plan_pod
from kresched.plan.plans import PlanOptions
from kresched.plan.queue import plan_pending
from kresched.sched.config import parse_scheduler_config
from kresched.sched.extender import ExtenderError
from kresched.sched.profile import Profiles, build_profiles
from kresched.sources.extenders import HttpTransport
from kresched.sources.snapshot import load_snapshot
from tests.extender_server import FakeExtender, Policy, closed_port

FIXTURES = Path(__file__).parent / "fixtures" / "extenders"
OBSERVED = json.loads((FIXTURES / "rig_observed.json").read_text())
#: The recorded configuration's extenders by port, and the policy each served.
SERVED = {9471: "a", 9472: "b", 9475: "e", 9476: "f"}
SILENT = (9473, 9474)


@pytest.fixture(scope="module")
def rig() -> Iterator[tuple[Profiles, dict[int, int], dict[str, FakeExtender]]]:
    """The recorded configuration with its extenders on ports of this run: (profiles, recorded
    port → this run's, the servers by policy name)."""
    servers = {name: FakeExtender(Policy.of(OBSERVED["policies"][name])).start() for name in SERVED.values()}
    ports = {p: servers[name].port for p, name in SERVED.items()} | {p: closed_port() for p in SILENT}
    text = re.sub(r"127\.0\.0\.1:(\d+)", lambda m: f"127.0.0.1:{ports[int(m.group(1))]}",
                  (FIXTURES / "sched.yaml").read_text())
    cfg, specs = parse_scheduler_config(yaml.safe_load(text))
    profiles = build_profiles(cfg, specs, "sched.yaml").with_extenders(cfg.extenders, HttpTransport(ExtenderError), {})
    try:
        yield profiles, ports, servers
    finally:
        for s in servers.values():
            s.stop()


def _state(n: int):
    return load_snapshot(str(FIXTURES / f"rig_snapshot{n}.json"))


def test_placements_and_messages_are_the_schedulers(rig) -> None:
    profiles, ports, servers = rig
    state = _state(1)
    seen = OBSERVED["snapshot1"]
    pods = [state.pod(f"default/{name}") for name in seen["order"]]
    plans = {p.pod.name: p for p in plan_pending(state, pods, PlanOptions(profiles=profiles))}
    # Extender A denies node-1 and scores node-3 10, node-2 4 (weight 2): node-3, no tie.
    assert (plans["pod-a"].node, plans["pod-a"].candidates) == (seen["pod-a"]["node"], ("node-3",))
    # Extender B (nodeCacheCapable) is sent the names of the nodes the plugins kept; its failed and
    # unresolvable nodes are in the message, word for word the scheduler's.
    assert plans["pod-b"].outcome == "infeasible"
    assert plans["pod-b"].message.startswith(seen["pod-b"]["message"] + " No eviction helps")
    assert explain_pod(state, state.pod("default/pod-b"), profiles=profiles).message == \
        seen["pod-b"]["message"].split(" no new claims")[0]
    asked = [b["NodeNames"] for v, b in servers["b"].requests if v == "filter"]
    assert sorted(asked[0]) == seen["pod-b"]["filterNodeNames"]
    # C is ignorable and unreachable: skipped, said so; the pod lands where the plugins put it.
    assert seen["pod-c"]["node"] in plans["pod-c"].candidates
    assert plans["pod-c"].notes[-1].startswith(f"extender http://127.0.0.1:{ports[9473]}/scheduler (filter) failed "
                                               "and is ignorable, so the scheduler skips it: Post ")
    # D is not ignorable and unreachable: the scheduler's error, word for word (its port aside).
    error = seen["pod-d"]["message"].replace("9474", str(ports[9474]))
    assert plans["pod-d"].outcome == "infeasible"
    assert plans["pod-d"].message.startswith(error + "; ")
    assert explain_pod(state, state.pod("default/pod-d"), profiles=profiles).message == error


def test_nodes_answered_whole_tie_as_the_scheduler_found_them_tied(rig) -> None:
    """Extender F answers with whole Nodes: the scheduler scores them without their pods, so the
    3/4-full node-3 ties with the empty ones (a model counting the pods would never pick it); the
    scheduler put pods on it."""
    profiles, _, _ = rig
    state = _state(2)
    plan = plan_pod(state, state.pod("default/pod-f-1"), PlanOptions(profiles=profiles))
    landed = set(OBSERVED["snapshot2"]["placements"].values())
    assert "node-3" in landed
    assert landed <= set(plan.candidates) == {"node-1", "node-2", "node-3"}


def test_preemption_vetted_by_the_extender_is_the_schedulers(rig) -> None:
    profiles, _, servers = rig
    state = _state(3)
    seen = OBSERVED["snapshot3"]["pod-e"]
    plan = plan_pod(state, state.pod("default/pod-e"), PlanOptions(profiles=profiles))
    assert (plan.outcome, plan.node, [v.pod.key for v in plan.victims]) == ("evict", seen["node"], seen["preempted"])
    # The candidates kresched sent are those the scheduler sent (extender E leaves node-1 out).
    body = next(b for v, b in servers["e"].requests if v == "preempt")
    assert {n: [p["metadata"]["name"] for p in v["Pods"]] for n, v in body["NodeNameToVictims"].items()} == \
        seen["preemptVictims"]
    exp = explain_pod(state, state.pod("default/pod-e"), profiles=profiles)
    assert (exp.message, exp.preemption_message) == (seen["message"], None)  # it preempts: nothing follows
