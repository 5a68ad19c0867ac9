"""What-ifs against what the real control plane did when the workload was then created.

Each `tests/fixtures/whatif/<scene>.json` was recorded on the rig (kube-apiserver, kube-scheduler
and kube-controller-manager v1.36.2, a simulated kubelet; a development aid only, never needed
here): the cluster as `kubectl get ... -o json` served it (`snapshot`, managedFields removed), then
the workload in `manifests` created for real (`kubectl create -f`, or `kresched preempt -f --apply`
itself for `preempt-f-apply`), and what happened: each of its pods (`pods`: where it was bound, or
its PodScheduled message while Pending), the pods the scheduler preempted (`preempted`, `gone`), its
`FailedScheduling` messages, and the first pods as the API server stored them (`stored`). Each
fixture says how it was made (`how`).

Here kresched plans the same manifests on the same snapshot (`plan -f`) and must predict it: how
many replicas are bound on each node, how many stay Pending and the scheduler's message for them,
which pods are evicted for them — and the pod the API server stores from the template, as far as
scheduling reads it (priority, preemption policy, scheduler name, tolerations, node affinity).
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kresched.model.cluster import ClusterState
from kresched.model.objects import POD_TOPOLOGY_LABELS, Pod
from kresched.plan.whatif import WhatIf, plan_workloads, replicas_of
from kresched.sources.decode import decode_object
from kresched.sources.manifests import Document, workloads_of
from kresched.sources.snapshot import load_snapshot

FIXTURES = Path(__file__).parent / "fixtures" / "whatif"
SCENES = sorted(p.stem for p in FIXTURES.glob("*.json"))
CREATED = [s for s in SCENES if s != "preempt-f-apply"]
#: Labels whose value only the real controller can know (hashes, UIDs) or that binding adds.
_UNKNOWABLE = {"pod-template-hash", "controller-revision-hash", "batch.kubernetes.io/controller-uid",
               "controller-uid", *POD_TOPOLOGY_LABELS}


def scene(name: str) -> tuple[dict[str, Any], ClusterState, WhatIf]:
    data = json.loads((FIXTURES / f"{name}.json").read_bytes())
    state = load_snapshot("-", io.BytesIO(json.dumps(data["snapshot"]).encode()))
    manifests = workloads_of([Document(name, m, name) for m in data["manifests"]], state, "default")
    return data, state, plan_workloads(state, manifests)


@pytest.mark.parametrize("name", CREATED)
def test_the_replicas_land_where_the_scheduler_bound_them(name: str) -> None:
    data, _, result = scene(name)
    [w] = result.workloads
    real = Counter(p["node"] for p in data["pods"] if p["node"])
    assert w.placed == dict(sorted(real.items()))
    # Pending: those that exist unbound, and (OrderedReady) those never created.
    created_pending = sum(1 for p in data["pods"] if not p["node"])
    assert w.pending - w.not_created == created_pending


@pytest.mark.parametrize("name", [s for s in CREATED if any(not p["node"] for p in json.loads(
    (FIXTURES / f"{s}.json").read_bytes())["pods"])])
def test_the_pending_replicas_get_the_schedulers_own_message(name: str) -> None:
    data, _, result = scene(name)
    [w] = result.workloads
    messages = {p["message"] for p in data["pods"] if not p["node"]}
    assert len(messages) == 1
    [message] = messages
    assert w.nearest is not None
    assert w.nearest.scheduler_message == message
    assert w.message.endswith(f": {message}")


def test_the_pods_the_scheduler_preempted_are_the_victims_kresched_plans() -> None:
    data, _, result = scene("deployment-needs-preemption")
    [w] = result.workloads
    victims = sorted(v.pod.key for p in w.plans for v in p.victims)
    assert victims == data["preempted"] == data["gone"]
    assert all(p.outcome == "evict" for p in w.plans)


def test_preempt_f_apply_evicted_what_the_plan_said_and_the_pods_landed_there() -> None:
    """`kresched preempt -f --apply` ran for real: the same evictions, the Deployment applied by
    server-side apply, its pods bound where planned, and the scheduler had nothing left to preempt."""
    data, _, result = scene("preempt-f-apply")
    [w] = result.workloads
    assert sorted(v.pod.key for p in w.plans for v in p.victims) == sorted(data["evicted"])
    assert dict(sorted(Counter(p["node"] for p in data["pods"]).items())) == w.placed == data["summary"]["bound"]
    assert data["summary"]["outcome"] == "done"
    assert data["schedulerPreempted"] == []


def _daemon_node(pod: Pod) -> str:
    """The node a DaemonSet pod is bound to by its node affinity (`matchFields metadata.name`)."""
    assert pod.spec.affinity is not None
    assert pod.spec.affinity.node_affinity is not None
    required = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert required is not None
    return required.node_selector_terms[0].match_fields[0].values[0]


def _scheduling_view(pod: Pod) -> dict[str, Any]:
    """What scheduling reads of a pod kresched builds from a template, and the API server stores."""
    spec = pod.spec
    owner = pod.controller
    return {
        "priority": spec.priority,
        "priorityClassName": spec.priority_class_name,
        "preemptionPolicy": spec.preemption_policy,
        "schedulerName": spec.scheduler_name,
        "grace": spec.termination_grace_period_seconds,
        "tolerations": sorted(msgspec.to_builtins(spec.tolerations), key=json.dumps),
        "affinity": msgspec.to_builtins(spec.affinity) if spec.affinity is not None else None,
        "labels": {k: v for k, v in pod.labels.items() if k not in _UNKNOWABLE},
        "owner": owner.kind if owner is not None else None,
        "requests": pod.requests,
        "qos": pod.qos,
    }


@pytest.mark.parametrize("name", CREATED)
def test_the_pod_kresched_makes_from_the_template_is_the_one_the_api_server_stored(name: str) -> None:
    """Defaulting and admission (priority, preemptionPolicy, schedulerName, the grace period, the
    DefaultTolerationSeconds tolerations, a DaemonSet's tolerations and node affinity), the
    controller's labels and owner: as the real pod, the values only the controller knows aside."""
    data, state, result = scene(name)
    [w] = result.workloads
    stored = decode_object(json.dumps(data["stored"][0]).encode(), "Pod", "stored")
    ours = {p.name: p for p in replicas_of(w.spec, state)}
    if w.spec.kind == "DaemonSet":  # the real pod for the same node
        [mine] = [p for p in ours.values() if _daemon_node(p) == _daemon_node(stored)]
    elif w.spec.kind == "StatefulSet":
        mine = ours[stored.name]
    else:
        mine = next(iter(ours.values()))
    assert _scheduling_view(mine) == _scheduling_view(stored)


@pytest.mark.parametrize("name", ["deployment-partly-fits", "deployment-anti-affinity-partly-fits"])
def test_max_without_evictions_is_how_many_replicas_the_scheduler_bound(name: str) -> None:
    """cluster-capacity's question on a scene where the real scheduler left replicas Pending: the
    largest count that fits without evicting anything is the number it bound."""
    from kresched.plan.plans import PlanOptions
    from kresched.plan.whatif import WhatIfOptions, max_replicas

    data, state, result = scene(name)
    [w] = result.workloads
    m = max_replicas(state, w.spec, WhatIfOptions(PlanOptions(), max=True, max_limit=50))
    assert m.without_evictions == sum(1 for p in data["pods"] if p["node"])
    assert m.stopped_without.endswith(next(p["message"] for p in data["pods"] if not p["node"]).split(" no new")[0])
