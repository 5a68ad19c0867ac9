"""The built-in demo cluster (`--snapshot demo`): it loads, it is consistent, and its scenarios hold.

The scenarios are checked with plain arithmetic on the loaded model (requests against allocatable,
PDB budgets, grace periods), not with the scheduling engine: the demo is what the engine's own
demos and tests rely on, so it must not be validated by the code it is meant to exercise. This
works because the critical pod has no affinity and no node selector beyond `kubernetes.io/os`, and
tolerates every taint of the nodes it is planned on: resources alone decide.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from kresched.model.cluster import ClusterState
from kresched.model.objects import Node, Pod, PodDisruptionBudget
from kresched.model.specs import Taint
from kresched.sources.snapshot import load_snapshot

ROOT = Path(__file__).resolve().parent.parent
CRITICAL_NODE = "worker-c1"
DRAIN_NODE = "worker-b3"
RESERVED_NODE = "worker-a2"
#: kresched's reservation taint (execute.reservation), which came after the pods: NoSchedule evicts nothing.
RESERVATION = ("CriticalAddonsOnly", "kresched", "NoSchedule")
MAX_GRACE = 10
DIMENSIONS = ("cpu", "memory", "pods")


@pytest.fixture(scope="module")
def state() -> ClusterState:
    return load_snapshot("demo")


def _pending(state: ClusterState, prefix: str) -> Pod:
    [pod] = [p for p in state.pending_pods() if p.key.startswith(prefix)]
    return pod


@pytest.fixture(scope="module")
def critical(state: ClusterState) -> Pod:
    return _pending(state, "kube-system/metrics-server-")


@pytest.fixture(scope="module")
def trainer(state: ClusterState) -> Pod:
    return _pending(state, "ml/train-ranker-")


# -- the arithmetic -------------------------------------------------------------------------------

def tolerates(pod: Pod, taint: Taint) -> bool:
    for t in pod.spec.tolerations:
        if t.effect and t.effect != taint.effect:
            continue
        if t.operator == "Exists" and (not t.key or t.key == taint.key):
            return True
        if t.key == taint.key and t.operator in ("", "Equal") and t.value == taint.value:
            return True
    return False


def usable(pod: Pod, node: Node) -> bool:
    """No untolerated NoSchedule/NoExecute taint, and the node selector matches."""
    return (all(tolerates(pod, t) for t in node.taints if t.effect in ("NoSchedule", "NoExecute"))
            and all(node.labels.get(k) == v for k, v in pod.spec.node_selector.items()))


def need(pod: Pod) -> dict[str, int]:
    return {"cpu": pod.requests.milli_cpu, "memory": pod.requests.memory, "pods": 1, **pod.requests.scalar}


def free(state: ClusterState, node: Node) -> dict[str, int]:
    a = node.allocatable
    out = {"cpu": a.milli_cpu, "memory": a.memory, "pods": a.allowed_pods, **a.scalar}
    for p in state.pods_on(node.name):
        if p.status.phase in ("Succeeded", "Failed"):
            continue
        for k, v in need(p).items():
            out[k] = out.get(k, 0) - v
    return out


def fits(want: dict[str, int], room: dict[str, int]) -> bool:
    return all(room.get(k, 0) >= v for k, v in want.items())


def pdbs_of(state: ClusterState, pod: Pod) -> list[PodDisruptionBudget]:
    out = []
    for b in state.pdbs:
        sel = b.spec.selector
        assert sel is not None
        assert not sel.match_expressions, "the demo's PDBs use matchLabels only"
        if b.namespace == pod.namespace and all(pod.labels.get(k) == v for k, v in sel.match_labels.items()):
            out.append(b)
    return out


def allowed(b: PodDisruptionBudget) -> int:
    assert b.status is not None
    return b.status.disruptions_allowed


def candidates(state: ClusterState, pod: Pod, node: Node) -> list[Pod]:
    """design.md, "The plan", step 2: lower priority; not mirror, DaemonSet, terminating or critical."""
    return [p for p in state.pods_on(node.name)
            if p.priority < pod.priority and not p.is_mirror and not p.is_daemonset_pod
            and not p.is_terminating and not p.is_critical]


def room(state: ClusterState, pod: Pod, node: Node, tier: int, *, optimistic: bool = False) -> dict[str, int]:
    """Free room on `node` once every candidate the tier allows is gone.

    A victim violates no PDB if it is under no PDB, or under exactly one whose budget covers every
    candidate of that PDB on this node (`optimistic`: a budget of at least one is enough). Feasible
    with the conservative count means feasible for any victim order; infeasible with the
    optimistic one means infeasible whatever the planner does.
    """
    cands = candidates(state, pod, node)
    out = free(state, node)
    for p in cands:
        if tier <= 2:
            under = pdbs_of(state, p)
            if len(under) > 1:
                continue
            if under and allowed(under[0]) < (1 if optimistic else sum(under[0] in pdbs_of(state, q) for q in cands)):
                continue
        if tier == 1 and p.grace_seconds > MAX_GRACE:
            continue
        for k, v in need(p).items():
            out[k] = out.get(k, 0) + v
    return out


def tier_feasible(state: ClusterState, pod: Pod, tier: int, *, optimistic: bool) -> list[str]:
    return [n.name for n in state.nodes
            if usable(pod, n) and fits(need(pod), room(state, pod, n, tier, optimistic=optimistic))]


# -- the cluster looks like a real one --------------------------------------------------------------

def test_the_demo_is_a_small_real_looking_cluster(state: ClusterState) -> None:
    assert 6 <= len(state.nodes) <= 10
    assert 60 <= len(state.pods) <= 120
    zones = {n.labels["topology.kubernetes.io/zone"] for n in state.nodes}
    assert 2 <= len(zones) <= 3
    control = [n for n in state.nodes if "node-role.kubernetes.io/control-plane" in n.labels]
    assert len(control) == 1
    assert [(t.key, t.effect) for t in control[0].taints] == [("node-role.kubernetes.io/control-plane", "NoSchedule")]
    for n in state.nodes:
        assert {"kubernetes.io/hostname", "node.kubernetes.io/instance-type"} <= n.labels.keys()
        assert n.metadata.uid
        assert n.metadata.resource_version
        assert n.is_ready
    classes = {c.name: c for c in state.priority_classes}
    assert classes["system-cluster-critical"].value == 2_000_000_000
    assert classes["system-node-critical"].value == 2_000_001_000
    assert [c.name for c in classes.values() if c.global_default] == ["standard"]
    assert {p.namespace for p in state.pods} <= {ns.name for ns in state.namespaces}


@pytest.mark.parametrize("daemonset", ["kube-system/kube-proxy", "kube-system/cilium", "monitoring/node-exporter"])
def test_node_agents_run_on_every_node(state: ClusterState, daemonset: str) -> None:
    ns, name = daemonset.split("/")
    on = sorted(p.node_name for p in state.pods
                if p.namespace == ns and p.controller_ref == f"DaemonSet/{name}")
    assert on == sorted(n.name for n in state.nodes)


def test_every_pod_carries_what_admission_and_its_controller_set(state: ClusterState) -> None:
    values = {c.name: c.value for c in state.priority_classes}
    for p in state.pods:
        assert p.spec.priority == values[p.spec.priority_class_name], p.key
        assert all((p.metadata.uid, p.metadata.resource_version, p.metadata.creation_timestamp)), p.key
        assert p.spec.termination_grace_period_seconds is not None, p.key
        keys = {(t.key, t.effect) for t in p.spec.tolerations}
        if not p.is_mirror:
            assert {("node.kubernetes.io/not-ready", "NoExecute"),
                    ("node.kubernetes.io/unreachable", "NoExecute")} <= keys, p.key
            assert any(v.projected is not None and v.name.startswith("kube-api-access-") for v in p.spec.volumes)
        refs = p.metadata.owner_references
        assert all(r.controller for r in refs), p.key
        if p.is_daemonset_pod:
            [term] = p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution \
                .node_selector_terms
            assert term.match_fields[0].values == (p.node_name,)
    kinds = {p.controller.kind if p.controller else None for p in state.pods}
    assert kinds == {"ReplicaSet", "StatefulSet", "DaemonSet", "Job", "Node", None}


def test_every_running_pod_fits_its_node(state: ClusterState) -> None:
    for n in state.nodes:
        assert all(v >= 0 for v in free(state, n).values()), n.name
        for p in state.pods_on(n.name):
            assert p.is_mirror or all(tolerates(p, t) for t in n.taints if t.effect != "PreferNoSchedule"
                                      and (t.key, t.value, t.effect) != RESERVATION), p.key


def test_the_cluster_is_nearly_full(state: ClusterState) -> None:
    for n in state.nodes:
        if not n.taints or n.name == RESERVED_NODE:
            assert free(state, n)["memory"] < 0.1 * n.allocatable.memory, n.name


def test_pdb_status_is_what_the_disruption_controller_computes(state: ClusterState) -> None:
    for b in state.pdbs:
        pods = [p for p in state.pods if b in pdbs_of(state, p)]
        healthy = sum(p.is_ready for p in pods)
        desired = b.spec.min_available if b.spec.min_available is not None else len(pods) - b.spec.max_unavailable
        assert b.status is not None
        assert (b.status.expected_pods, b.status.current_healthy, b.status.desired_healthy) == \
            (len(pods), healthy, desired), b.key
        assert b.status.disruptions_allowed == max(0, healthy - desired), b.key
    assert any(allowed(b) == 0 and b.spec.min_available == b.status.expected_pods for b in state.pdbs)


def test_pending_pods_carry_the_schedulers_condition(state: ClusterState) -> None:
    pending = state.pending_pods()
    assert len(pending) == 2
    for p in pending:
        assert p.status.phase == "Pending"
        assert not p.node_name
        cond = p.condition("PodScheduled")
        assert cond is not None
        assert (cond.status, cond.reason) == ("False", "Unschedulable")
        assert cond.message.startswith(f"0/{len(state.nodes)} nodes are available: ")


# -- scenario 1: tier 1 is feasible on one node, not the obvious one ---------------------------------

def test_the_critical_pod_is_decided_by_resources_alone(state: ClusterState, critical: Pod) -> None:
    assert critical.is_critical
    assert critical.spec.priority_class_name == "system-cluster-critical"
    assert any(t.key == "CriticalAddonsOnly" and t.operator == "Exists" for t in critical.spec.tolerations)
    assert critical.spec.affinity is None
    assert not critical.spec.topology_spread_constraints
    assert not critical.host_ports
    tainted = [n.name for n in state.nodes if not usable(critical, n)]
    assert tainted == ["cp-1", "worker-d1", "worker-d2"]  # the control plane; the new pool (scenario 4)


def test_the_critical_pod_fits_nowhere_without_evictions(state: ClusterState, critical: Pod) -> None:
    assert [n.name for n in state.nodes if usable(critical, n) and fits(need(critical), free(state, n))] == []


def test_tier_1_is_feasible_only_on_the_intended_node(state: ClusterState, critical: Pod) -> None:
    assert tier_feasible(state, critical, 1, optimistic=True) == [CRITICAL_NODE]
    assert tier_feasible(state, critical, 1, optimistic=False) == [CRITICAL_NODE]


def test_one_batch_pod_is_enough_on_the_intended_node(state: ClusterState, critical: Pod) -> None:
    node = state.node_by_name[CRITICAL_NODE]
    tier1 = [p for p in candidates(state, critical, node) if p.grace_seconds <= MAX_GRACE and not pdbs_of(state, p)]
    assert [p.controller_ref.split("-")[0] for p in tier1] == ["ReplicaSet/image", "ReplicaSet/image"]
    room_one = free(state, node)
    for k, v in need(tier1[0]).items():
        room_one[k] += v
    assert fits(need(critical), room_one)


def test_the_intended_node_is_neither_first_by_name_nor_the_emptiest(state: ClusterState, critical: Pod) -> None:
    names = sorted(n.name for n in state.nodes)
    candidates_ = [n for n in state.nodes if usable(critical, n)]
    assert CRITICAL_NODE not in (names[0], min(n.name for n in candidates_))
    frees = {n.name: free(state, n) for n in candidates_}
    by_memory = max(frees, key=lambda n: frees[n]["memory"])
    by_cpu = max(frees, key=lambda n: frees[n]["cpu"])
    assert CRITICAL_NODE not in (by_memory, by_cpu)
    assert by_memory == by_cpu == "worker-b2"


@pytest.mark.parametrize("node", ["worker-a1", "worker-b2"])
def test_the_obvious_nodes_need_tier_2(state: ClusterState, critical: Pod, node: str) -> None:
    n = state.node_by_name[node]
    assert not fits(need(critical), room(state, critical, n, 1, optimistic=True))
    assert fits(need(critical), room(state, critical, n, 2))


def test_the_emptiest_node_holds_a_pod_under_an_exhausted_budget(state: ClusterState, critical: Pod) -> None:
    node = state.node_by_name["worker-b2"]
    blocked = [p.key for p in candidates(state, critical, node) if any(allowed(b) == 0 for b in pdbs_of(state, p))]
    assert blocked == ["data/zookeeper-0"]


# -- scenario 2: infeasible whatever is evicted --------------------------------------------------

def test_the_gpu_pod_fits_nowhere_even_with_every_eviction(state: ClusterState, trainer: Pod) -> None:
    assert trainer.spec.node_selector == {"nvidia.com/gpu.present": "true"}
    assert trainer.requests.scalar == {"nvidia.com/gpu": 1}
    assert [n.name for n in state.nodes if usable(trainer, n)] == []
    assert [n.name for n in state.nodes if fits(need(trainer), room(state, trainer, n, 3))] == []
    assert "Preemption is not helpful for scheduling" in trainer.condition("PodScheduled").message


# -- scenario 3: a node to drain ----------------------------------------------------------------

def test_the_drain_node_has_every_kind_of_pod_a_pre_flight_sorts_out(state: ClusterState) -> None:
    pods = state.pods_on(DRAIN_NODE)
    assert {p.controller.kind if p.controller else None for p in pods} == \
        {"DaemonSet", "ReplicaSet", "StatefulSet", None}
    assert [p.key for p in pods if any(allowed(b) == 0 for b in pdbs_of(state, p))] == ["data/zookeeper-1"]
    assert len([p for p in pods if any(allowed(b) > 0 for b in pdbs_of(state, p))]) >= 3
    assert [p.key for p in pods if p.is_bare] == ["default/debug-shell"]
    assert any(p.has_empty_dir and not p.is_daemonset_pod for p in pods)
    node = state.node_by_name[DRAIN_NODE]
    assert node.labels["feature.node.kubernetes.io/kernel-version.major"] == "5"


# -- scenario 4: a reservation left behind --------------------------------------------------------

def test_one_node_carries_a_leftover_reservation_for_a_pod_that_is_gone(state: ClusterState) -> None:
    reserved = [n for n in state.nodes if "kresched.io/reserved-for" in n.metadata.annotations]
    assert [n.name for n in reserved] == [RESERVED_NODE]
    node = reserved[0]
    assert [(t.key, t.value, t.effect) for t in node.taints] == [RESERVATION]
    assert state.pod(node.metadata.annotations["kresched.io/reserved-for"]) is None  # gone: the reservation is stale
    assert node.metadata.annotations["kresched.io/reserved-at"].endswith("Z")


def test_the_reservation_changes_no_scenario(state: ClusterState, critical: Pod) -> None:
    # The critical add-on tolerates CriticalAddonsOnly, so the reserved node is as usable to it as before.
    assert usable(critical, state.node_by_name[RESERVED_NODE])


# -- the file is what the script writes -----------------------------------------------------------

def test_the_demo_file_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("make_demo", ROOT / "scripts" / "make_demo.py")
    assert spec is not None
    assert spec.loader is not None
    make_demo = importlib.util.module_from_spec(spec)
    sys.modules["make_demo"] = make_demo  # dataclasses look their module up there
    try:
        spec.loader.exec_module(make_demo)
    finally:
        del sys.modules["make_demo"]
    assert make_demo.main(["--check"]) == 0


# -- the benchmark's generator shares the demo's builders: keep it loadable ----------------------

def test_the_benchmark_generator_writes_a_cluster_kresched_loads(tmp_path: Path) -> None:
    from benchmarks.generate import ClusterSize, generate

    size = ClusterSize("tiny", nodes=12, pods=400, pending=10, control_planes=1)
    path = tmp_path / "tiny.json"
    generate(size, path)
    state = load_snapshot(str(path))
    assert (len(state.nodes), len(state.pods)) == (12, 400)
    assert len(state.pending_pods()) >= 10
    assert any(p.is_critical for p in state.pending_pods())
    for n in state.nodes:
        assert all(v >= 0 for v in free(state, n).values()), n.name
    for b in state.pdbs:
        assert b.status is not None
        assert b.status.expected_pods == sum(b in pdbs_of(state, p) for p in state.pods), b.key
