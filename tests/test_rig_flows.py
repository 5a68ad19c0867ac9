"""kresched's flows against what they did on the real control plane.

Each `tests/fixtures/rig/<scene>.json` was recorded on the rig (kube-apiserver, kube-scheduler and
kube-controller-manager v1.36.2, a simulated kubelet that creates a CSINode per node; a development
aid only, never needed here): the cluster as `kubectl get ... -o json` served it before the flow —
real objects, with `drivers: null` CSINodes and the zone labels the API server puts on every bound
pod — then what kresched's `rebalance`, `preempt`, `drain` or `reconcile` did when it ran for real,
and where the real scheduler placed the pods. Each fixture says how it was made (`how`).

Here kresched plans the same flow on the same objects and must predict what happened.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kresched.execute.api import same_controller
from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.drain import DrainOptions, plan_drain
from kresched.plan.explain import explain_pod
from kresched.plan.planner import pending_pods_to_plan, plan_pending, plan_pod
from kresched.plan.rebalance import plan_rebalance
from kresched.plan.rebalance_plans import RebalanceOptions
from kresched.sources.decode import decode_object
from kresched.sources.snapshot import load_snapshot
from tests.fakeapi.store import label_selector_matches

FIXTURES = Path(__file__).parent / "fixtures" / "rig"
ZONE = "topology.kubernetes.io/zone"


def scene(name: str) -> tuple[dict[str, Any], ClusterState]:
    data = json.loads((FIXTURES / f"{name}.json").read_bytes())
    return data, load_snapshot("-", io.BytesIO(json.dumps(data["snapshot"]).encode()))


def ungated(pod: Pod) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, scheduling_gates=()))


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_a_real_servers_objects_are_read_whole(name: str) -> None:
    """Every kubelet's CSINode (`drivers: null`), every bound pod with its node's zone: nothing refused."""
    data, state = scene(name)
    items = data["snapshot"]["items"]
    assert len(state.nodes) == sum(1 for i in items if i["kind"] == "Node")
    assert len(state.pods) == sum(1 for i in items if i["kind"] == "Pod")
    assert [c.spec.drivers for c in state.storage.csi_nodes] == [()] * len(state.nodes)
    assert any(i["kind"] == "CSINode" and i["spec"]["drivers"] is None for i in items)
    for pod in state.pods:
        if pod.node_name:
            assert pod.labels[ZONE] == state.node_by_name[pod.node_name].labels[ZONE]


def test_rebalance_moves_the_pod_the_real_run_moved_and_finds_its_replacement_in_the_other_zone() -> None:
    data, state = scene("rebalance-across-zones")
    move = data["move"]
    plan = plan_rebalance(state, RebalanceOptions(objectives=("utilisation",)))
    # The recorded run moved one pod (the rule then: node-b1, at 25 % after it, was no longer
    # underutilised); node-b1 now stays a destination of the round up to the target, so node-a2,
    # at 75 % too, gives it one as well: each node ends at 50 %.
    assert [(m.pod.key, m.source, m.to) for m in plan.moves][:1] == [(move["pod"], move["from"], move["landedOn"])]
    assert [(m.source, m.to) for m in plan.moves[1:]] == [("node-a2", "node-b1")]
    assert {u["cpu"] for u in plan.after.values()} == {50}
    planned = plan.moves[0]
    # The replacement, as the API server served it once bound to node-b1: zone-b, where the old pod
    # said zone-a. The selector kresched waits with selects it, and its owner is the old pod's.
    replacement = decode_object(json.dumps(data["replacement"]).encode(), "Pod", "replacement")
    assert replacement.labels[ZONE] != planned.pod.labels[ZONE]
    assert label_selector_matches(planned.replicas, replacement.labels)
    assert same_controller(planned.pod, [replacement]) == [replacement]


def test_preempt_plans_the_node_and_the_victims_the_real_run_evicted() -> None:
    data, state = scene("preempt-critical-addon")
    plan = plan_pod(state, ungated(state.pod(data["pod"])))
    assert (plan.outcome, plan.node) == ("evict", data["node"])
    assert sorted(v.pod.key for v in plan.victims) == data["evicted"]
    assert data["bound"]["spec"]["nodeName"] == plan.node
    assert data["bound"]["metadata"]["labels"][ZONE] == state.node_by_name[plan.node].labels[ZONE]


def test_drain_predicts_where_the_real_scheduler_put_each_replacement() -> None:
    data, state = scene("drain-with-pdb-and-daemonset")
    [node] = plan_drain(state, [data["node"]], DrainOptions(ignore_daemonsets=True)).nodes
    assert sorted(d.pod.key for d in node.evict) == data["evicted"]
    assert [d.blocked for d in node.evict] == [None] * len(node.evict)
    landed = sorted(r["nodeName"] for r in data["replacements"])
    assert sorted(d.lands_on for d in node.evict) == landed
    assert all(r["nodeName"] in d.candidates for d, r in zip(node.evict, data["replacements"], strict=True))
    assert data["cordoned"]


def test_reconcile_helps_the_legacy_critical_pod_the_scheduler_could_not() -> None:
    data, state = scene("reconcile-legacy-critical-addon")
    pod = state.pod(data["pod"])
    expl = explain_pod(state, pod)
    filters, _, preemption = data["schedulerMessage"].partition(" preemption: ")
    assert filters.startswith(expl.message)
    assert preemption == expl.preemption_message
    [plan] = plan_pending(state, pending_pods_to_plan(state))
    assert (plan.pod.key, plan.outcome) == (data["pod"], "evict")
    assert sorted(v.pod.key for v in plan.victims) == data["evicted"]
    assert data["bound"] == [{"pod": data["pod"], "node": plan.node}]
