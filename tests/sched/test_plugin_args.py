"""Every in-tree plugin as a scheduler profile configures it (its args, not the defaults), against
upstream's own test tables (kube-scheduler v1.36.2) — the rows `test_scores.py` and the other
plugin tests left out because they need non-default args:

- noderesources/most_allocated_test.go `TestMostAllocatedScoringStrategy`;
- noderesources/least_allocated_test.go `TestLeastAllocatedScoringStrategy` (the weighted and
  extended-resource rows);
- noderesources/requested_to_capacity_ratio_test.go `TestRequestedToCapacityRatioScoringStrategy`,
  `TestBrokenLinearFunction`, `TestResourceBinPackingSingleExtended`;
- noderesources/balanced_allocation_test.go `TestNodeResourcesBalancedAllocation` (the scalar rows,
  with their `resources`);
- noderesources/fit_test.go `TestEnoughRequests` (the ignored-resource rows);
- nodeaffinity/node_affinity_test.go `TestNodeAffinity` and `TestNodeAffinityPriority` (added
  affinity);
- podtopologyspread/filtering_test.go `TestPreFilterState` (default constraints, `List`).

Ids are `<Go test name>/<upstream case name>`. Left out, and why: the rows whose args upstream's
validation refuses (negative or zero weights, weights above 100, no resources): the plugin is
never built with them — `test_scheduler_config.py` has them as refused files.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kresched.model.objects import Node, Pod
from kresched.model.specs import TopologySpreadConstraint
from kresched.sched.framework import Code, CycleState, Snapshot, Status
from kresched.sched.node_affinity import ERR_REASON_ENFORCED, ERR_REASON_POD, NodeAffinity
from kresched.sched.node_info import NodeInfo
from kresched.sched.node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from kresched.sched.node_resources_fit import NodeResourcesFit, rejection
from kresched.sched.pod_topology_spread import PodTopologySpread
from kresched.sched.resource_allocation import broken_linear
from kresched.sources.decode import Objects
from kresched.sources.snapshot import build_state
from tests.builders import make_node, make_pod
from tests.sched.test_scores import _REQ_1_2, GPU, _c, _cm, _mnode, _node, _on, _pod, _scores

_MA = "TestMostAllocatedScoringStrategy/"
_LA = "TestLeastAllocatedScoringStrategy/"
_RC = "TestRequestedToCapacityRatioScoringStrategy/"
EXT = "abc.com/xyz"
CPU_MEM = (("cpu", 1), ("memory", 1))
CPU_MEM_EXT = (("cpu", 1), ("memory", 1), (EXT, 1))
_TWO = [_c({"cpu": "1000", "memory": "2000"}), _c({"cpu": "2000", "memory": "3000"})]


def _n(name: str, cpu: str, memory: str, ext: str | None = None) -> Node:
    """A node with `ext` of the extended resource abc.com/xyz, if given."""
    return _node(name, cpu=cpu, memory=memory, extra={EXT: ext} if ext is not None else None)


@pytest.mark.parametrize(("containers", "nodes", "existing", "resources", "want"), [
    pytest.param([], [_n("node1", "4000", "10000"), _n("node2", "4000", "10000")], [], CPU_MEM, [0, 0],
                 id=_MA + "nothing scheduled, nothing requested"),
    pytest.param(_TWO, [_n("node1", "4000", "10000"), _n("node2", "6000", "10000")], [], CPU_MEM, [62, 50],
                 id=_MA + "nothing scheduled, resources requested, differently sized nodes"),
    pytest.param([], [_n("node1", "10000", "20000"), _n("node2", "10000", "20000")],
                 [_on("node1", _c({"cpu": "3000", "memory": "0"}), name="a"),
                  _on("node1", _c({"cpu": "3000", "memory": "0"}), name="b"),
                  _on("node2", _c({"cpu": "3000", "memory": "0"}), name="c"),
                  _on("node2", _c({"cpu": "3000", "memory": "5000"}), name="d")], CPU_MEM, [30, 42],
                 id=_MA + "no resources requested, pods scheduled with resources"),
    pytest.param(_TWO, [_n("node1", "10000", "20000"), _n("node2", "10000", "20000")],
                 [_on("node1", _c({"cpu": "3000", "memory": "0"}), name="a"),
                  _on("node2", _c({"cpu": "3000", "memory": "5000"}), name="b")], CPU_MEM, [42, 55],
                 id=_MA + "resources requested, pods scheduled with resources"),
    pytest.param([_c({"cpu": "2000", "memory": "4000"}), _c({"cpu": "3000", "memory": "5000"})],
                 [_n("node1", "5000", "10000"), _n("node2", "10000", "9000")], [], CPU_MEM, [95, 75],
                 id=_MA + "resources requested equal node capacity"),
    pytest.param(_TWO, [_n("node1", "4000", "10000"), _n("node2", "6000", "10000")], [], (("memory", 2), ("cpu", 1)),
                 [58, 50], id=_MA + "nothing scheduled, resources requested, differently sized nodes (weighted)"),
    pytest.param([_c()], [_n("node1", "250m", "1000Mi"), _n("node2", "250m", "1000Mi")],
                 [_on("node1", _c(), name="a"), _on("node1", _c(), name="b")], CPU_MEM, [80, 30],
                 id=_MA + "no resources requested, pods scheduled, nonzero request for resource"),
    pytest.param(_TWO, [_n("node1", "6000", "10000"), _n("node2", "6000", "10000", ext="4")], [], CPU_MEM_EXT,
                 [50, 50], id=_MA + "bypass extended resource if the pod does not request"),
    pytest.param([_c({"cpu": "3000", "memory": "5000", EXT: "2"})],
                 [_n("node1", "6000", "10000", ext="4"), _n("node2", "6000", "10000", ext="10")], [],
                 CPU_MEM_EXT, [50, 40], id=_MA + "honor extended resource if the pod request"),
    pytest.param([_c({"cpu": "3000", "memory": "4000"})],
                 [_n("node1", "6000", "10000"), _n("node2", "6000", "10000", ext="4")], [],
                 ((EXT, 2), ("cpu", 1), ("memory", 1)), [45, 45], id=_MA + "if the node doesn't have a resource"),
])
def test_most_allocated(containers: list[dict[str, Any]], nodes: list[Node], existing: list[Pod],
                        resources: tuple[tuple[str, int], ...], want: list[int]) -> None:
    plugin = NodeResourcesFit("MostAllocated", resources)
    assert _scores(plugin, _pod(containers=containers), nodes, existing) == want


@pytest.mark.parametrize(("containers", "nodes", "resources", "want"), [
    pytest.param(_TWO, [_n("node1", "4000", "10000"), _n("node2", "6000", "10000")], (("memory", 2), ("cpu", 1)),
                 [41, 50], id=_LA + "nothing scheduled, resources requested with different weight on CPU and memory, "
                                    "differently sized nodes"),
    pytest.param(_TWO, [_n("node1", "6000", "10000"), _n("node2", "6000", "10000", ext="4")], CPU_MEM_EXT,
                 [50, 50], id=_LA + "bypass extended resource if the pod does not request"),
    pytest.param([_c({"cpu": "3000", "memory": "5000", EXT: "2"})],
                 [_n("node1", "6000", "10000", ext="4"), _n("node2", "6000", "10000", ext="10")],
                 CPU_MEM_EXT, [50, 60], id=_LA + "honor extended resource if the pod requests"),
    pytest.param([_c({"cpu": "3000", "memory": "4000"})],
                 [_n("node1", "6000", "10000"), _n("node2", "6000", "10000", ext="4")],
                 ((EXT, 2), ("cpu", 1), ("memory", 1)), [55, 55], id=_LA + "if the node doesn't have a resource"),
])
def test_least_allocated_with_the_profiles_resources(containers: list[dict[str, Any]], nodes: list[Node],
                                                     resources: tuple[tuple[str, int], ...], want: list[int]) -> None:
    plugin = NodeResourcesFit("LeastAllocated", resources)
    assert _scores(plugin, _pod(containers=containers), nodes) == want


_SHAPE = ((0, 10), (100, 0))


@pytest.mark.parametrize(("containers", "nodes", "existing", "want"), [
    pytest.param([], [_n("node1", "4000", "10000"), _n("node2", "4000", "10000")],
                 [_on("node1", name="a"), _on("node1", name="b")], [100, 100],
                 id=_RC + "nothing scheduled, nothing requested (default - least requested nodes have priority)"),
    pytest.param(_TWO, [_n("node1", "4000", "10000"), _n("node2", "6000", "10000")],
                 [_on("node1", name="a"), _on("node1", name="b")], [38, 50],
                 id=_RC + "nothing scheduled, resources requested, differently sized nodes (default - least requested "
                          "nodes have priority)"),
    pytest.param([], [_n("node1", "4000", "10000"), _n("node2", "6000", "10000")],
                 [_on("node1", _c({"cpu": "3000", "memory": "5000"}), name="a"),
                  _on("node2", _c({"cpu": "3000", "memory": "5000"}), name="b")], [38, 50],
                 id=_RC + "no resources requested, pods scheduled with resources (default - least requested nodes have "
                          "priority)"),
])
def test_requested_to_capacity_ratio(containers: list[dict[str, Any]], nodes: list[Node], existing: list[Pod],
                                     want: list[int]) -> None:
    plugin = NodeResourcesFit("RequestedToCapacityRatio", CPU_MEM, _SHAPE)
    assert _scores(plugin, _pod(containers=containers), nodes, existing) == want


@pytest.mark.parametrize(("points", "assertions"), [
    pytest.param(((10, 1), (90, 9)), [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9),
                                      (99, 9), (100, 9), (110, 9)], id="TestBrokenLinearFunction/case_0"),
    pytest.param(((0, 2), (40, 10), (100, 0)), [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0),
                                                (110, 0)], id="TestBrokenLinearFunction/case_1"),
    pytest.param(((0, 2), (40, 2), (100, 2)), [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2),
                                               (110, 2)], id="TestBrokenLinearFunction/case_2"),
])
def test_broken_linear_function(points: tuple[tuple[int, int], ...], assertions: list[tuple[int, int]]) -> None:
    f = broken_linear(points)
    assert [(p, f(p)) for p, _ in assertions] == assertions


_FOO = "intel.com/foo"


def _gb_node(name: str, foo: int) -> Node:
    """noderesources' `makeNode(name, 4000, 10000*1024*1024, {intel.com/foo: n})`."""
    return _node(name, cpu="4000m", memory=str(10000 * 1024 * 1024), extra={_FOO: str(foo)})


@pytest.mark.parametrize(("containers", "existing", "want"), [
    pytest.param([], [], [0, 0], id="TestResourceBinPackingSingleExtended/nothing scheduled, nothing requested"),
    pytest.param([_c({_FOO: "2"})], [_on("", name="a")], [2, 5],
                 id="TestResourceBinPackingSingleExtended/resources requested, pods scheduled with less resources"),
    pytest.param([_c({_FOO: "2"})], [_on("node2", _c({_FOO: "2"}), name="a")], [2, 10],
                 id="TestResourceBinPackingSingleExtended/resources requested, pods scheduled with resources, on node "
                    "with existing pod running "),
    pytest.param([_c({_FOO: "4"})], [_on("", name="a")], [5, 10],
                 id="TestResourceBinPackingSingleExtended/resources requested, pods scheduled with more resources"),
])
def test_resource_bin_packing_single_extended(containers: list[dict[str, Any]], existing: list[Pod],
                                              want: list[int]) -> None:
    plugin = NodeResourcesFit("RequestedToCapacityRatio", ((_FOO, 1),), ((0, 0), (100, 1)))
    nodes = [_gb_node("node1", 8), _gb_node("node2", 4)]
    assert _scores(plugin, _pod(containers=containers), nodes, existing) == want


_BA = "TestNodeResourcesBalancedAllocation/"
_GPU_RESOURCES = (("cpu", 1), ("memory", 1), (GPU, 1))


@pytest.mark.parametrize(("containers", "nodes", "existing", "want"), [
    pytest.param([_c({"cpu": "0", "memory": "0", GPU: "1"})],
                 [_mnode("node1", 3500, 40000, gpu=8), _mnode("node2", 3500, 40000, gpu=8)],
                 [_on("node1", _cm("1000m", "2000"), _c({"cpu": "2000m", "memory": "3000", GPU: "3"}), name="a"),
                  _on("node2", *_REQ_1_2, name="b")], [75, 76],
                 id=_BA + "scalar resource is included in the score computation if pod requests the scalar resource"),
    pytest.param(_REQ_1_2, [_mnode("node1", 3500, 40000, gpu=8), _mnode("node2", 3500, 40000)], [], [56, 56],
                 id=_BA + "scalar resource is not included in the score computation if pod doesn't request the "
                          "scalar resource"),
])
def test_balanced_allocation_with_the_profiles_resources(containers: list[dict[str, Any]], nodes: list[Node],
                                                         existing: list[Pod], want: list[int]) -> None:
    plugin = NodeResourcesBalancedAllocation(_GPU_RESOURCES)
    assert _scores(plugin, _pod(containers=containers), nodes, existing) == want


def test_balanced_allocation_skips_a_pod_requesting_none_of_the_profiles_resources() -> None:
    pod = _pod(containers=[_c({"memory": "1Gi"})])
    assert _scores(NodeResourcesBalancedAllocation((("cpu", 1), (GPU, 1))), pod, [_mnode("node1", 3500, 40000)]) \
        == "Skip"


# -- TestEnoughRequests: ignored resources ------------------------------------------------------------

_B = "example.com/bbb"
_K8S = "kubernetes.io/something"


def _alloc_node() -> NodeInfo:
    """fit_test.go's node: `makeAllocatableResources(10, 20, 32, 5, 20, 5)` (example.com/aaa 5)."""
    node = make_node("node", cpu="10m", memory="20", pods=32, extra={"example.com/aaa": "5", "hugepages-2Mi": "5"})
    return NodeInfo(node, [])


@pytest.mark.parametrize(("requests", "args", "want"), [
    pytest.param({"cpu": "1m", "memory": "1", _B: "1"}, {"ignored_resources": [_B]}, (),
                 id="TestEnoughRequests/skip checking ignored extended resource"),
    pytest.param({"cpu": "1m", "memory": "1", _B: "1", _K8S: "1"}, {"ignored_resource_groups": ["example.com"]},
                 (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"Insufficient {_K8S}",)),
                 id="TestEnoughRequests/skip checking ignored extended resource via resource groups"),
    pytest.param({"cpu": "1m", "memory": "1", _B: "1"}, {},
                 (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"Insufficient {_B}",)),
                 id="without the args, the extended resource is checked"),
    pytest.param({"cpu": "1m", "memory": "1", "hugepages-2Mi": "9"}, {"ignored_resources": ["hugepages-2Mi"]},
                 (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Insufficient hugepages-2Mi",)),
                 id="only extended resources can be ignored: hugepages are native"),
])
def test_ignored_resources(requests: dict[str, str], args: dict[str, Any], want: tuple) -> None:
    pod = _pod(containers=[_c(requests)])
    st = NodeResourcesFit(**args).filter(CycleState(), pod, _alloc_node())
    assert ((st.code, st.reasons) if not st.is_success else ()) == want


def test_without_the_ignored_resources_the_module_check_agrees_with_the_plugin() -> None:
    """The planner's shortcuts read `rejection(planning_pod.requests)`: what the profile strips is
    what the plugin skips."""
    from kresched.sched.profile import Profile

    pod = _pod(containers=[_c({"cpu": "1m", "memory": "1", _B: "1", _K8S: "1"})])
    plugin = NodeResourcesFit(ignored_resource_groups=["example.com"])
    profile = Profile("p", (plugin,), (), ignored_resource_groups=frozenset({"example.com"}))
    planned = profile.planning_pod(pod)
    assert _B not in planned.requests.scalar
    assert _K8S in planned.requests.scalar
    assert rejection(planned.requests, _alloc_node()).reasons == plugin.filter(CycleState(), pod, _alloc_node()).reasons
    assert planned.key == pod.key


# -- NodeAffinity: addedAffinity ----------------------------------------------------------------------

def _na(required: list[dict[str, Any]] | None = None, preferred: list[dict[str, Any]] | None = None) -> Any:
    from kresched.model.specs import NodeAffinity as Spec

    raw: dict[str, Any] = {}
    if required is not None:
        raw["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        raw["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return msgspec.convert(raw, Spec)


_ZONE_BAR = [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["bar"]}]}]
_NODE2 = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node2"]}]}]


@pytest.mark.parametrize(("pod_affinity", "added", "want_prefilter", "want"), [
    pytest.param({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": _ZONE_BAR}}},
                 _na(_NODE2), Code.SUCCESS, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_POD,)),
                 id="TestNodeAffinity/Matches added affinity but not Pod's node affinity"),
    pytest.param(None, _na(_ZONE_BAR), Code.SUCCESS, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_ENFORCED,)),
                 id="TestNodeAffinity/Doesn't match added affinity"),
    pytest.param(None, None, Code.SKIP, None, id="without added affinity a pod without affinity is skipped"),
])
def test_node_affinity_added_affinity_filter(pod_affinity: dict[str, Any] | None, added: Any, want_prefilter: Code,
                                             want: tuple | None) -> None:
    node = make_node("node2", labels={"zone": "foo"})
    pod = make_pod(affinity=pod_affinity)
    plugin = NodeAffinity(added)
    info = NodeInfo(node, [])
    snap = Snapshot([info], {"node2": info})
    cycle = CycleState()
    assert plugin.pre_filter(cycle, pod, snap).status.code == want_prefilter
    if want is not None:
        st: Status = plugin.filter(cycle, pod, info)
        assert (st.code, st.reasons) == want


_AFF1 = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 2, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}}]}}
_LABEL1, _LABEL2, _LABEL5 = {"foo": "bar"}, {"key": "value"}, {"foo": "bar", "key": "value", "az": "az1"}


@pytest.mark.parametrize(("affinity", "added", "nodes", "want"), [
    pytest.param(None, _na(preferred=_AFF1["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]),
                 [("node1", _LABEL1), ("node2", _LABEL2)], [100, 0], id="TestNodeAffinityPriority/added affinity"),
    pytest.param(_AFF1, _na(preferred=[{"weight": 3, "preference": {"matchExpressions": [
        {"key": "key", "operator": "In", "values": ["value"]}]}}]),
                 [("node1", _LABEL1), ("node2", _LABEL2), ("node3", _LABEL5)], [40, 60, 100],
                 id="TestNodeAffinityPriority/added affinity and pod has default affinity"),
])
def test_node_affinity_added_affinity_score(affinity: dict[str, Any] | None, added: Any,
                                            nodes: list[tuple[str, dict[str, str]]], want: list[int]) -> None:
    pod = make_pod(affinity=affinity)
    assert _scores(NodeAffinity(added), pod, [_node(n, labels=labels) for n, labels in nodes]) == want


# -- PodTopologySpread: List default constraints ------------------------------------------------------

_PF = "TestPreFilterState/"


def _svc(selector: dict[str, str]) -> Any:
    from kresched.model.objects import Service

    return msgspec.convert({"kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
                            "spec": {"selector": selector}}, Service)


def _tsc(skew: int, key: str, when: str) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(max_skew=skew, topology_key=key, when_unsatisfiable=when)


@pytest.mark.parametrize(("pod", "defaults", "service", "want"), [
    pytest.param(make_pod("p", labels={"foo": "bar", "baz": "kar"}),
                 (_tsc(3, "node", "DoNotSchedule"), _tsc(2, "node", "ScheduleAnyway"),
                  _tsc(5, "rack", "DoNotSchedule")),
                 {"foo": "bar"}, [(3, "node"), (5, "rack")], id=_PF + "default constraints and a service"),
    pytest.param(make_pod("p", labels={"foo": "bar"}), (_tsc(3, "node", "DoNotSchedule"),), {"baz": "kep"}, "Skip",
                 id=_PF + "default constraints and a service that doesn't match"),
    pytest.param(make_pod("p", labels={"foo": "bar", "baz": "tar"}, spread=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"baz": "tar"}}},
        {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": {"fot": "rok"}}}]),
                 (_tsc(2, "node", "DoNotSchedule"),), {"foo": "bar"}, [(1, "zone")],
                 id=_PF + "default constraints and a service, but pod has constraints"),
    pytest.param(make_pod("p", labels={"foo": "bar"}), (_tsc(2, "node", "ScheduleAnyway"),), {"foo": "bar"}, "Skip",
                 id=_PF + "default soft constraints and a service"),
])
def test_pre_filter_with_list_default_constraints(pod: Pod, defaults: tuple[TopologySpreadConstraint, ...],
                                                  service: dict[str, str], want: list[tuple[int, str]] | str) -> None:
    state = build_state(Objects(nodes=[make_node("n1")], pods=[], workloads=[_svc(service)]))
    snap = Snapshot.from_state(state)
    cycle = CycleState()
    result = PodTopologySpread(defaults).pre_filter(cycle, pod, snap)
    if want == "Skip":
        assert result.status.code == Code.SKIP
        return
    assert result.status.is_success
    constraints = cycle.read("PreFilterPodTopologySpread").constraints
    assert [(c.max_skew, c.topology_key) for c in constraints] == want
    if not pod.spec.topology_spread_constraints:  # the default selector: the Service's
        assert all(c.selector({"foo": "bar"}) and not c.selector({"foo": "baz"}) for c in constraints)


def test_a_list_default_do_not_schedule_constraint_filters_a_pod_without_constraints() -> None:
    """With `defaultingType: List` and a DoNotSchedule default, a replica without constraints of
    its own is refused where its Service's pods are already crowded (the system defaults never filter)."""
    nodes = [make_node("n1", labels={"zone": "a"}), make_node("n2", labels={"zone": "b"})]
    running = [make_pod(f"web-{i}", node="n1", labels={"app": "web"}) for i in range(2)]
    state = build_state(Objects(nodes=nodes, pods=running, workloads=[_svc({"app": "web"})]))
    snap = Snapshot.from_state(state)
    pod = make_pod("web-new", labels={"app": "web"})
    for plugin, want in ((PodTopologySpread((_tsc(1, "zone", "DoNotSchedule"),)), [False, True]),
                         (PodTopologySpread(), [True, True])):
        cycle = CycleState()
        skipped = plugin.pre_filter(cycle, pod, snap).status.code == Code.SKIP
        got = [skipped or plugin.filter(cycle, pod, snap.by_name[n]).is_success for n in ("n1", "n2")]
        assert got == want
