"""PodTopologySpread scoring (PreScore, Score, NormalizeScore) and `default_selector`, against upstream's
own test tables (kube-scheduler v1.36.2, pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go
and helper/spread_test.go).

Each parametrized upstream case keeps its id, `<Go test name>/<upstream case name>`. Upstream's pods and
Services in namespace "" are in "default" here (kresched's builders' namespace); only equality matters.
Upstream runs most cases with the NodeInclusionPolicy and MatchLabelKeys gates off (both GA and locked
on in 1.36, as kresched models them): the cases kept do not depend on it (no nodeSelector, affinity,
policy or matchLabelKeys unless the case turns the gate on).

Cases left out, and why (the rest of each table is here):
- TestPodTopologySpreadScore "matchLabelKeys ignored when feature gate disabled": the gate is locked on
  in 1.36; kresched always applies matchLabelKeys.
- BenchmarkTestPodTopologySpreadScore: a benchmark, no expectations.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.objects import Node, Pod, ReplicaSet, ReplicationController, Service, StatefulSet, Workload
from kresched.model.specs import LabelSelector, LabelSelectorRequirement, TopologySpreadConstraint
from kresched.sched.framework import MAX_NODE_SCORE, Code, CycleState, Snapshot
from kresched.sched.node_info import NodeInfo
from kresched.sched.pod_topology_spread import NAME, PodTopologySpread
from kresched.sched.pod_topology_spread_constraints import build_default_constraints, default_selector
from kresched.sched.pod_topology_spread_score import ScoreGainBound, go_log, go_round
from kresched.sched.score import ScoreMemo, prioritize_nodes, score_nodes
from kresched.sources.decode import Objects
from kresched.sources.snapshot import build_state
from tests.builders import make_pod

SKIP = "Skip"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
ANYWAY = "ScheduleAnyway"
DO_NOT = "DoNotSchedule"
#: `v1.TaintNodeUnschedulable:NoSchedule`, upstream's `taints`.
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
#: Upstream's `fooSelector` and `barSelector`.
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
NIL: Any = object()

# -- builders ---------------------------------------------------------------------------------------


def _node(name: str, labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None) -> Node:
    """`st.MakeNode().Name(name).Label(...)`: only the labels given (no automatic hostname label)."""
    return msgspec.convert({"metadata": {"name": name, "labels": labels or {}},
                            "spec": {"taints": taints or []},
                            "status": {"allocatable": {"pods": "110"}, "capacity": {"pods": "110"}}}, Node)


def _hz(name: str, zone: str | None = None, key: str = "zone", **labels: str) -> Node:
    """A node with the hostname label and, if given, `key=zone`."""
    extra = {key: zone} if zone is not None else {}
    return _node(name, {**extra, HOST: name, **labels})


def _sc(max_skew: int, key: str, when: str, selector: Any, min_domains: int | None = None,
        node_affinity_policy: str | None = None, node_taints_policy: str | None = None,
        match_label_keys: list[str] | None = None) -> dict[str, Any]:
    """`st.PodWrapper.SpreadConstraint(...)`, same argument order (selector None: no labelSelector)."""
    c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = selector
    if min_domains is not None:
        c["minDomains"] = min_domains
    if node_affinity_policy is not None:
        c["nodeAffinityPolicy"] = node_affinity_policy
    if node_taints_policy is not None:
        c["nodeTaintsPolicy"] = node_taints_policy
    if match_label_keys:
        c["matchLabelKeys"] = match_label_keys
    return c


def _pod(name: str = "p", *labels: str, node: str = "", ns: str = "default", spread: list[dict[str, Any]] = (),
         owner: tuple[str, str, str] | None = None, terminating: bool = False,
         node_selector: dict[str, str] | None = None, affinity: dict[str, Any] | None = None,
         label_values: dict[str, str] | None = None) -> Pod:
    """A pod labelled `label=""` for each of `labels` (upstream's `.Label("foo", "")`), plus
    `label_values`; `owner` is (apiVersion, kind, name) of its controller."""
    pod = make_pod(name, ns, node=node, labels={**dict.fromkeys(labels, ""), **(label_values or {})},
                   owner=None, spread=list(spread), node_selector=node_selector, affinity=affinity,
                   deletion_timestamp="2026-01-01T00:00:00Z" if terminating else None)
    if owner is not None:
        api_version, kind, oname = owner
        meta = msgspec.convert({"name": name, "namespace": ns, "labels": pod.metadata.labels,
                                "deletionTimestamp": pod.metadata.deletion_timestamp,
                                "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": oname,
                                                     "controller": True}]}, type(pod.metadata))
        pod = msgspec.structs.replace(pod, metadata=meta)
    return pod


def _on(node: str, n: int, *labels: str, prefix: str = "", **kw: Any) -> list[Pod]:
    """`n` pods on `node` with `labels`, named p-<node suffix><i> as upstream."""
    short = node.rsplit("-", 1)[-1]
    return [_pod(f"p-{prefix}{short}{i}", *labels, node=node, **kw) for i in range(1, n + 1)]


def _service(selector: dict[str, str] | None, ns: str = "default", name: str = "svc") -> Service:
    spec = {} if selector is None else {"selector": selector}
    return msgspec.convert({"kind": "Service", "metadata": {"name": name, "namespace": ns}, "spec": spec}, Service)


def _controller(kind: type, name: str, selector: Any, ns: str = "default") -> Workload:
    spec = {} if selector is None else {"selector": selector}
    return msgspec.convert({"kind": kind.__name__, "metadata": {"name": name, "namespace": ns}, "spec": spec}, kind)


def _snapshot(nodes: list[Node], pods: list[Pod] = (), workloads: list[Workload] = ()) -> Snapshot:
    return Snapshot.from_state(build_state(Objects(nodes=list(nodes), pods=list(pods), workloads=list(workloads))))


def _scores(pod: Pod, existing: list[Pod], nodes: list[Node], failed: list[Node] = (),
            workloads: list[Workload] = ()) -> dict[str, int] | str:
    """PreScore over `nodes` (the feasible ones; `failed` are in the cluster too), Score each, and
    NormalizeScore, as upstream's test loop does."""
    snap = _snapshot([*nodes, *failed], existing, workloads)
    infos = [snap.by_name[n.name] for n in nodes]
    plugin, cycle = PodTopologySpread(), CycleState()
    status = plugin.pre_score(cycle, pod, infos, snap)
    if status.code == Code.SKIP:
        return SKIP
    assert status.is_success
    scores = [plugin.score(cycle, pod, info) for info in infos]
    plugin.normalize_score(cycle, pod, scores)
    return {n.name: s for n, s in zip(nodes, scores, strict=True)}


# -- TestPodTopologySpreadScore ---------------------------------------------------------------------

_T = "TestPodTopologySpreadScore/"
_ABCD = [_hz("node-a"), _hz("node-b"), _hz("node-c"), _hz("node-d")]
_SPREAD_2103 = [*_on("node-a", 2, "foo"), *_on("node-b", 1, "foo"), *_on("node-d", 3, "foo")]
_SPREAD_4321 = [*_on("node-a", 4, "foo"), *_on("node-b", 3, "foo"), *_on("node-c", 2, "foo"),
                *_on("node-d", 1, "foo")]
_SPREAD_421_3 = [*_on("node-a", 4, "foo"), *_on("node-b", 2, "foo"), *_on("node-x", 1, "foo"),
                 *_on("node-y", 3, "foo")]
_NODE_ABC = [_node("node-a", {"node": "node-a", "foo": ""}), _node("node-b", {"node": "node-b", "foo": ""}),
             _node("node-c", {"node": "node-c"})]
_NODE_ABC_TAINTED = [_node("node-a", {"node": "node-a"}), _node("node-b", {"node": "node-b"}),
                     _node("node-c", {"node": "node-c"}, TAINTS)]
_P_2_1_1 = [*_on("node-a", 2, "foo"), *_on("node-b", 1, "foo"), *_on("node-c", 1, "foo")]
_ZONE_ABCD = [_hz("node-a", "zone1"), _hz("node-b", "zone1"), _hz("node-c", "zone2"), _hz("node-d", "zone2")]
_ZONE_ABXY = [_hz("node-a", "zone1"), _hz("node-b", "zone1"), _hz("node-x", "zone2"), _hz("node-y", "zone2")]
_FOO_ON_NODE = _sc(1, HOST, ANYWAY, FOO)
_NODE_AFFINITY_FOO = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "foo", "operator": "In", "values": [""]}]}]}}}


def _w(*pairs: tuple[str, int]) -> dict[str, int]:
    return dict(pairs)


SCORE_CASES = [
    pytest.param(_pod("p", "foo", spread=[_FOO_ON_NODE]), [], [_hz("node-a"), _hz("node-b")], [], [],
                 _w(("node-a", 100), ("node-b", 100)), id=_T + "one constraint on node, no existing pods"),
    pytest.param(_pod("p", "foo", spread=[_FOO_ON_NODE]),
                 [*_on("node-a", 2, "foo"), *_on("node-b", 1, "foo")], [_hz("node-a")], [_hz("node-b")], [],
                 _w(("node-a", 100)), id=_T + "one constraint on node, only one node is candidate"),
    pytest.param(_pod("p", "foo", spread=[_FOO_ON_NODE]),
                 [*_on("node-a", 1, "foo"), *_on("node-b", 1, "foo")], [_hz("node-a"), _hz("node-b")], [], [],
                 _w(("node-a", 100), ("node-b", 100)),
                 id=_T + "one constraint on node, all nodes have the same number of matching pods"),
    pytest.param(_pod("p", "foo", spread=[_FOO_ON_NODE]), _SPREAD_2103, _ABCD, [], [],
                 _w(("node-a", 20), ("node-b", 60), ("node-c", 100), ("node-d", 0)),
                 id=_T + "one constraint on node, all 4 nodes are candidates"),
    pytest.param(_pod("p", "foo", spread=[_sc(1, HOST, ANYWAY, None)]), _SPREAD_2103, _ABCD, [], [],
                 _w(("node-a", 100), ("node-b", 100), ("node-c", 100), ("node-d", 100)),
                 id=_T + "one constraint on node, null selector"),
    pytest.param(_pod("p", "foo", spread=[_sc(2, HOST, ANYWAY, FOO)]), _SPREAD_2103, _ABCD, [], [],
                 _w(("node-a", 33), ("node-b", 66), ("node-c", 100), ("node-d", 16)),
                 id=_T + "one constraint on node, all 4 nodes are candidates, maxSkew=2"),
    pytest.param(_pod("p", "foo", spread=[_sc(3, HOST, ANYWAY, FOO)]), _SPREAD_4321, _ABCD, [], [],
                 _w(("node-a", 44), ("node-b", 66), ("node-c", 77), ("node-d", 100)),
                 id=_T + "one constraint on node, all 4 nodes are candidates, maxSkew=3"),
    pytest.param(_pod("p", "foo"), _SPREAD_4321, _ABCD, [], [_service({"foo": ""})],
                 _w(("node-a", 44), ("node-b", 66), ("node-c", 77), ("node-d", 100)),
                 id=_T + "system defaulting, nodes don't have zone, pods match service"),
    pytest.param(_pod("p", "foo", spread=[_FOO_ON_NODE]), _SPREAD_421_3,
                 [_hz("node-a"), _hz("node-b"), _hz("node-x")], [_hz("node-y")], [],
                 _w(("node-a", 33), ("node-b", 83), ("node-x", 100)),
                 id=_T + "one constraint on node, 3 out of 4 nodes are candidates"),
    pytest.param(_pod("p", "foo", spread=[_FOO_ON_NODE]), _SPREAD_421_3,
                 [_hz("node-a"), _node("node-b", {"n": "node-b"}), _hz("node-x")], [_hz("node-y")], [],
                 _w(("node-a", 16), ("node-b", 0), ("node-x", 100)),
                 id=_T + "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match "
                         "topology key"),
    pytest.param(_pod("p", "foo", spread=[_sc(1, "zone", ANYWAY, FOO)]), _SPREAD_421_3,
                 [_hz("node-a", "zone1"), _hz("node-b", "zone1"), _hz("node-x", "zone2")], [_hz("node-y", "zone2")],
                 [], _w(("node-a", 75), ("node-b", 75), ("node-x", 100)),
                 id=_T + "one constraint on zone, 3 out of 4 nodes are candidates"),
    pytest.param(_pod("p", "foo", spread=[_sc(1, "zone", ANYWAY, FOO), _sc(1, HOST, ANYWAY, FOO)]),
                 [*_on("node-a", 2, "foo"), *_on("node-b", 1, "foo"), *_on("node-x", 2, "foo"),
                  *_on("node-y", 4, "foo")],
                 [_hz("node-a", "zone1"), _hz("node-x", "zone2")], [_hz("node-b", "zone1"), _hz("node-y", "zone2")],
                 [], _w(("node-a", 100), ("node-x", 63)),
                 id=_T + "two Constraints on zone and node, 2 out of 4 nodes are candidates"),
    pytest.param(_pod("p", "foo", "bar", spread=[_sc(1, "zone", ANYWAY, FOO), _sc(1, "zone", ANYWAY, BAR)]),
                 [_pod("p-a1", "foo", "bar", node="node-a"), _pod("p-a2", "foo", node="node-a"),
                  _pod("p-b1", "foo", "bar", node="node-b"), _pod("p-y1", "foo", node="node-y"),
                  _pod("p-y2", "foo", "bar", node="node-y"), _pod("p-y3", "foo", node="node-y")],
                 [_node("node-a", {"zone": "zone1"}), _node("node-x", {"zone": "zone2"})],
                 [_node("node-b", {"zone": "zone1"}), _node("node-y", {"zone": "zone2"})], [],
                 _w(("node-a", 85), ("node-x", 100)),
                 id=_T + "two Constraints on zone, 2 out of 4 nodes are candidates"),
    pytest.param(_pod("p", "foo", "bar", spread=[_sc(1, "zone", ANYWAY, FOO), _sc(1, HOST, ANYWAY, BAR)]),
                 [_pod("p-a1", "foo", node="node-a"), _pod("p-b1", "foo", "bar", node="node-b"),
                  _pod("p-y1", "foo", node="node-y"), _pod("p-y2", "bar", node="node-y")],
                 _ZONE_ABXY, [], [], _w(("node-a", 60), ("node-b", 20), ("node-x", 100), ("node-y", 60)),
                 id=_T + "two Constraints on zone and node, with different labelSelectors"),
    pytest.param(_pod("p", "foo", "bar", spread=[_sc(1, "zone", ANYWAY, FOO), _sc(1, HOST, ANYWAY, BAR)]),
                 [_pod("p-b1", "bar", node="node-b"), _pod("p-x1", "foo", node="node-x"),
                  _pod("p-y1", "foo", "bar", node="node-y")],
                 _ZONE_ABXY, [], [], _w(("node-a", 100), ("node-b", 60), ("node-x", 40), ("node-y", 0)),
                 id=_T + "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods"),
    pytest.param(_pod("p", "foo", "bar", spread=[_sc(1, "zone", ANYWAY, FOO), _sc(1, HOST, ANYWAY, BAR)]),
                 [_pod("p-a1", "foo", node="node-a"), _pod("p-b1", "foo", "bar", node="node-b"),
                  _pod("p-y1", "foo", node="node-y"), _pod("p-y2", "bar", node="node-y")],
                 _ZONE_ABXY[:3], _ZONE_ABXY[3:], [], _w(("node-a", 50), ("node-b", 25), ("node-x", 100)),
                 id=_T + "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are "
                         "candidates"),
    pytest.param(_pod("p", "foo", spread=[_FOO_ON_NODE]),
                 [_pod("p-a1", "foo", node="node-a", ns="ns1"), _pod("p-a2", "foo", node="node-a"),
                  *_on("node-b", 2, "foo")],
                 [_hz("node-a"), _hz("node-b")], [], [], _w(("node-a", 100), ("node-b", 33)),
                 id=_T + "existing pods in a different namespace do not count"),
    pytest.param(_pod("p", "foo", spread=[_FOO_ON_NODE]),
                 [_pod("p-a", "foo", node="node-a", terminating=True), _pod("p-b", "foo", node="node-b")],
                 [_hz("node-a"), _hz("node-b")], [], [], _w(("node-a", 100), ("node-b", 0)),
                 id=_T + "terminating Pods should be excluded"),
    pytest.param(_pod("p", "foo", spread=[_sc(2, "node", ANYWAY, FOO, min_domains=10)]),
                 [*_on("node-a", 2, "foo"), *_on("node-b", 2, "foo"), *_on("node-c", 1, "foo")],
                 [_node("node-a", {"node": "node-a"}), _node("node-b", {"node": "node-b"}),
                  _node("node-c", {"node": "node-c"})], [], [],
                 _w(("node-a", 75), ("node-b", 75), ("node-c", 100)),
                 id=_T + "minDomains has no effect when ScheduleAnyway"),
    pytest.param(_pod("p", "foo", node_selector={"foo": ""}, spread=[_sc(1, "node", ANYWAY, FOO)]),
                 _P_2_1_1, _NODE_ABC, [], [], _w(("node-a", 0), ("node-b", 33), ("node-c", 100)),
                 id=_T + "NodeAffinityPolicy honoed with labelSelectors"),
    pytest.param(_pod("p", "foo", node_selector={"foo": ""}, spread=[_sc(1, "node", ANYWAY, FOO, None, "Ignore")]),
                 _P_2_1_1, _NODE_ABC, [], [], _w(("node-a", 66), ("node-b", 100), ("node-c", 100)),
                 id=_T + "NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(_pod("p", "foo", affinity=_NODE_AFFINITY_FOO, spread=[_sc(1, "node", ANYWAY, FOO)]),
                 _P_2_1_1, _NODE_ABC, [], [], _w(("node-a", 0), ("node-b", 33), ("node-c", 100)),
                 id=_T + "NodeAffinityPolicy honoed with nodeAffinity"),
    pytest.param(_pod("p", "foo", affinity=_NODE_AFFINITY_FOO, spread=[_sc(1, "node", ANYWAY, FOO, None, "Ignore")]),
                 _P_2_1_1, _NODE_ABC, [], [], _w(("node-a", 66), ("node-b", 100), ("node-c", 100)),
                 id=_T + "NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(_pod("p", "foo", spread=[_sc(1, "node", ANYWAY, FOO, None, None, "Honor")]),
                 _P_2_1_1, _NODE_ABC_TAINTED, [], [], _w(("node-a", 0), ("node-b", 33), ("node-c", 100)),
                 id=_T + "NodeTaintsPolicy honored"),
    pytest.param(_pod("p", "foo", spread=[_sc(1, "node", ANYWAY, FOO)]),
                 _P_2_1_1, _NODE_ABC_TAINTED, [], [], _w(("node-a", 66), ("node-b", 100), ("node-c", 100)),
                 id=_T + "NodeTaintsPolicy ignored"),
    pytest.param(_pod("p", "foo", "bar", spread=[_sc(1, "zone", ANYWAY, {}, match_label_keys=["foo"]),
                                                 _sc(1, HOST, ANYWAY, {}, match_label_keys=["bar"])]),
                 [_pod("p-a1", "foo", node="node-a"), _pod("p-b1", "foo", "bar", node="node-b"),
                  _pod("p-y1", "foo", node="node-c"), _pod("p-y2", "bar", node="node-c")],
                 _ZONE_ABCD, [], [], _w(("node-a", 60), ("node-b", 20), ("node-c", 60), ("node-d", 100)),
                 id=_T + "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty"),
    pytest.param(_pod("p", "foo", "bar", "baz", spread=[_sc(1, "zone", ANYWAY, FOO),
                                                        _sc(1, HOST, ANYWAY, BAR, match_label_keys=["baz"])]),
                 [_pod("p-a1", "foo", node="node-a"), _pod("p-b1", "foo", "bar", "baz", node="node-b"),
                  _pod("p-c1", "foo", node="node-c"), _pod("p-c2", "bar", node="node-c"),
                  _pod("p-d3", "bar", "baz", node="node-c")],
                 _ZONE_ABCD, [], [], _w(("node-a", 60), ("node-b", 20), ("node-c", 60), ("node-d", 100)),
                 id=_T + "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty"),
]

# Not upstream cases: the default selector's sources, and the system defaults on zoned clusters.
_K = "kresched/"
_RS_WEB = _controller(ReplicaSet, "rs1", {"matchLabels": {"app": "web"}})
_WEB_ZONED = [_hz("n1", "a", ZONE), _hz("n2", "a", ZONE), _hz("n3", "b", ZONE), _hz("n4")]
_WEB_PODS = [*_on("n1", 3, label_values={"app": "web"}, prefix="w"), *_on("n3", 1, label_values={"app": "web"}),
             *_on("n2", 2, label_values={"app": "api"}, prefix="x")]
_W_SYSTEM = {"n1": 12, "n2": 43, "n3": 56, "n4": 100}
OWN_CASES = [
    pytest.param(_pod("p", label_values={"app": "web"}, owner=("apps/v1", "ReplicaSet", "rs1")), _WEB_PODS,
                 _WEB_ZONED, [], [_RS_WEB],
                 # hostname weight log 6 (4 nodes), zone weight log 5 (domains a, b and ""): n1 has 3 pods and
                 # zone a 3: round(3 log 6 + 2 + 3 log 5 + 4) = 16; n2 round(2 + 3 log 5 + 4) = 11; n3
                 # round(log 6 + 2 + log 5 + 4) = 9; n4 2 (no zone term of its own). 100 (16 + 2 − s) / 16.
                 _W_SYSTEM,
                 id=_K + "system defaults with a ReplicaSet: zone and hostname, a node without a zone spreads by "
                         "hostname only"),
    pytest.param(_pod("p", label_values={"app": "web"}, owner=("apps/v1", "StatefulSet", "ss1")), _WEB_PODS,
                 _WEB_ZONED, [], [_controller(StatefulSet, "ss1", {"matchLabels": {"app": "web"}})],
                 _W_SYSTEM,
                 id=_K + "system defaults with a StatefulSet"),
    pytest.param(_pod("p", label_values={"app": "web"}, owner=("v1", "ReplicationController", "rc1")), _WEB_PODS,
                 _WEB_ZONED, [], [_controller(ReplicationController, "rc1", {"app": "web"})],
                 _W_SYSTEM,
                 id=_K + "system defaults with a ReplicationController"),
    pytest.param(_pod("p", label_values={"app": "web"}, owner=("apps/v1", "ReplicationController", "rc1")),
                 _WEB_PODS, _WEB_ZONED, [], [_controller(ReplicationController, "rc1", {"app": "web"})], SKIP,
                 id=_K + "a ReplicationController owner reference must be core v1"),
    pytest.param(_pod("p", label_values={"app": "web"}, owner=("apps/v1beta2", "ReplicaSet", "rs1")), _WEB_PODS,
                 _WEB_ZONED, [], [_RS_WEB], SKIP, id=_K + "a ReplicaSet owner reference must be apps/v1"),
    pytest.param(_pod("p", label_values={"app": "web"}, owner=("apps/v1", "Deployment", "rs1")), _WEB_PODS,
                 _WEB_ZONED, [], [_RS_WEB], SKIP, id=_K + "other controllers add nothing"),
    pytest.param(_pod("p", label_values={"app": "web"}, owner=("apps/v1", "ReplicaSet", "rs1"), ns="other"),
                 _WEB_PODS, _WEB_ZONED, [], [_RS_WEB], SKIP,
                 id=_K + "the controller is looked up in the pod's namespace"),
    pytest.param(_pod("p", label_values={"app": "web"}), _WEB_PODS, _WEB_ZONED, [], [_service({})], SKIP,
                 id=_K + "a Service with an empty selector selects the pod but adds no requirement"),
    pytest.param(_pod("p", label_values={"app": "web"}), _WEB_PODS, _WEB_ZONED, [], [_service(None)], SKIP,
                 id=_K + "a Service without selector selects nothing"),
    pytest.param(_pod("p", label_values={"app": "web"}), _WEB_PODS, _WEB_ZONED, [],
                 [_service({"app": "web", "tier": "x"})], SKIP,
                 id=_K + "a Service whose selector the pod does not match adds nothing"),
    pytest.param(_pod("p", label_values={"app": "web"}), _WEB_PODS, _WEB_ZONED, [], [_service({"app": "web"})],
                 _W_SYSTEM, id=_K + "system defaults with a Service"),
    pytest.param(_pod("p", label_values={"app": "web"}, spread=[_sc(1, ZONE, DO_NOT, {"matchLabels": {"app": "web"}})]),
                 _WEB_PODS, _WEB_ZONED, [], [_service({"app": "web"})], SKIP,
                 id=_K + "a pod with only DoNotSchedule constraints gets no default constraints"),
    pytest.param(_pod("p", label_values={"app": "web"}, spread=[_sc(1, ZONE, ANYWAY, {"matchLabels": {"app": "web"}})]),
                 _WEB_PODS, _WEB_ZONED, [], [],
                 # zone a 3, zone b 1, two domains (weight log 4): round(3 log 4) = 4, round(log 4) = 1;
                 # 100 (4 + 1 − s) / 4. n4 lacks the key: ignored, 0.
                 _w(("n1", 25), ("n2", 25), ("n3", 100), ("n4", 0)),
                 id=_K + "own constraints ignore feasible nodes without the key"),
    pytest.param(_pod("p", label_values={"app": "web"}, spread=[_sc(1, ZONE, ANYWAY, {"matchLabels": {"app": "web"}})]),
                 [*_WEB_PODS, *_on("n4", 5, label_values={"app": "web"}, prefix="z"),
                  *_on("n5", 5, label_values={"app": "web"}, prefix="v")],
                 [_hz("n2", "a", ZONE), _hz("n3", "b", ZONE)], [_hz("n1", "a", ZONE), _hz("n4"), _hz("n5", "c", ZONE)],
                 # Domains a and b only: zone a counts n1's 3 pods, zone c (n5) and n4 (no zone) count nowhere.
                 [], _w(("n2", 25), ("n3", 100)),
                 id=_K + "pods of infeasible nodes count in feasible domains only"),
    pytest.param(_pod("p", label_values={"app": "web"}, spread=[_sc(1, ZONE, ANYWAY, {"matchLabels": {"app": "web"}})]),
                 _WEB_PODS, [_hz("n4")], [], [], _w(("n4", 0)), id=_K + "every feasible node ignored scores 0"),
]


@pytest.mark.parametrize(("pod", "existing", "nodes", "failed", "workloads", "want"), [*SCORE_CASES, *OWN_CASES])
def test_score(pod: Pod, existing: list[Pod], nodes: list[Node], failed: list[Node], workloads: list[Workload],
               want: dict[str, int] | str) -> None:
    assert _scores(pod, existing, nodes, failed, workloads) == want


# -- TestPreScoreSkip -------------------------------------------------------------------------------

#: `defaultingType: List` with these default constraints (PodTopologySpreadArgs).
_PLANET = (TopologySpreadConstraint(max_skew=2, topology_key="planet", when_unsatisfiable=ANYWAY),)


@pytest.mark.parametrize(("pod", "nodes", "workloads", "defaults"), [
    pytest.param(_pod("p"), [_hz("node-a"), _hz("node-b")], [], (),
                 id="TestPreScoreSkip/the pod doesn't have soft topology spread Constraints"),
    pytest.param(_pod("p", label_values={"foo": "bar", "baz": "sup"}, owner=("apps/v1", "ReplicaSet", "rs2")),
                 [_node("node-a", {"planet": "mars"})],
                 [_controller(ReplicaSet, "rs1", {"matchExpressions": [{"key": "tar", "operator": "Exists"}]})],
                 _PLANET, id="TestPreScoreSkip/default constraints and a replicaset that doesn't match"),
    pytest.param(_pod("p"), [_hz("node-a"), _hz("node-b")], [], None,
                 id=_K + "the system defaults, for a pod nothing selects"),
    pytest.param(_pod("p", "foo", spread=[_FOO_ON_NODE]), [], [], None, id=_K + "a snapshot without nodes"),
    pytest.param(_pod("p", "foo", spread=[_sc(1, HOST, DO_NOT, FOO)]), [_hz("node-a")], [], None,
                 id=_K + "only DoNotSchedule constraints"),
])
def test_pre_score_skip(pod: Pod, nodes: list[Node], workloads: list[Workload],
                        defaults: tuple[TopologySpreadConstraint, ...] | None) -> None:
    snap = _snapshot(nodes, [], workloads)
    cycle = CycleState()
    assert PodTopologySpread(defaults).pre_score(cycle, pod, list(snap.node_infos), snap).code == Code.SKIP
    assert cycle.read(f"PreScore{NAME}") is None


# -- TestPreScoreStateEmptyNodes --------------------------------------------------------------------

_S = "TestPreScoreStateEmptyNodes/"
_HONOR_IGNORE = (True, False)
_ZXN = [_hz("node-a", "zone1"), _hz("node-b", "zone1"), _hz("node-x", "zone2")]
_ZXN_FOO = [_hz("node-a", "zone1", foo=""), _hz("node-b", "zone1", foo=""), _hz("node-x", "zone2")]
_ZXN_TAINT = [*_ZXN_FOO[:2], _node("node-x", {"zone": "zone2", HOST: "node-x"}, TAINTS)]


#: TestPreScoreStateEmptyNodes/default constraints and a replicaset: `defaultingType: List`.
_RS_DEFAULTS = (TopologySpreadConstraint(max_skew=1, topology_key=HOST, when_unsatisfiable=ANYWAY),
                TopologySpreadConstraint(max_skew=2, topology_key="rack", when_unsatisfiable=DO_NOT),
                TopologySpreadConstraint(max_skew=2, topology_key="planet", when_unsatisfiable=ANYWAY))


@pytest.mark.parametrize(("pod", "nodes", "workloads", "want_constraints", "want_ignored", "want_counts",
                          "want_sizes"), [

    pytest.param(_pod("p", "foo", ns="", spread=[_sc(1, "zone", ANYWAY, FOO), _sc(1, HOST, ANYWAY, FOO)]), _ZXN, [],
                 [(1, "zone", _HONOR_IGNORE), (1, HOST, _HONOR_IGNORE)], set(),
                 [{"zone1": 0, "zone2": 0}, {}], [2, 3], id=_S + "normal case"),
    pytest.param(_pod("p", "foo", spread=[_sc(1, "zone", ANYWAY, None)]), _ZXN, [],
                 [(1, "zone", _HONOR_IGNORE)], set(), [{"zone1": 0, "zone2": 0}], [2], id=_S + "null selector"),
    pytest.param(_pod("p", "foo", spread=[_sc(1, "zone", ANYWAY, FOO), _sc(1, HOST, ANYWAY, BAR)]),
                 [*_ZXN[:2], _hz("node-x")], [],
                 [(1, "zone", _HONOR_IGNORE), (1, HOST, _HONOR_IGNORE)], {"node-x"},
                 [{"zone1": 0}, {}], [1, 2], id=_S + "node-x doesn't have label zone"),
    pytest.param(_pod("p", label_values={"foo": "tar", "baz": "sup"}, owner=("apps/v1", "ReplicaSet", "rs1")),
                 [_hz("node-a", "mars", ZONE), _hz("node-b", "mars", ZONE), _hz("node-c"), _hz("node-d")],
                 [_controller(ReplicaSet, "rs1", FOO)],
                 [(3, HOST, _HONOR_IGNORE), (5, ZONE, _HONOR_IGNORE)], set(),
                 [{}, {"mars": 0, "": 0}], [4, 2], id=_S + "system default constraints and a replicaset"),
    pytest.param(_pod("p", label_values={"foo": "bar", "baz": "sup"}, owner=("apps/v1", "ReplicaSet", "rs1"),
                      spread=[_sc(1, "zone", DO_NOT, BAR),
                              _sc(2, "planet", ANYWAY, {"matchLabels": {"baz": "sup"}})]),
                 [_node("node-a", {"planet": "mars", "galaxy": "andromeda"})], [_controller(ReplicaSet, "rs1", FOO)],
                 [(2, "planet", _HONOR_IGNORE)], set(), [{"mars": 0}], [1],
                 id=_S + "default constraints and a replicaset, but pod has constraints"),
    pytest.param(_pod("p", "foo", node_selector={"foo": ""}, spread=[_sc(1, "zone", ANYWAY, BAR)]), _ZXN_FOO, [],
                 [(1, "zone", _HONOR_IGNORE)], set(), [{"zone1": 0, "zone2": 0}], [2],
                 id=_S + "NodeAffinityPolicy honored with labelSelectors"),
    pytest.param(_pod("p", "foo", node_selector={"foo": ""}, spread=[_sc(1, "zone", ANYWAY, BAR, None, "Ignore")]),
                 _ZXN_FOO, [], [(1, "zone", (False, False))], set(), [{"zone1": 0, "zone2": 0}], [2],
                 id=_S + "NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(_pod("p", "foo", affinity=_NODE_AFFINITY_FOO, spread=[_sc(1, "zone", ANYWAY, BAR)]), _ZXN_FOO, [],
                 [(1, "zone", _HONOR_IGNORE)], set(), [{"zone1": 0, "zone2": 0}], [2],
                 id=_S + "NodeAffinityPolicy honored with nodeAffinity"),
    pytest.param(_pod("p", "foo", affinity=_NODE_AFFINITY_FOO, spread=[_sc(1, "zone", ANYWAY, BAR, None, "Ignore")]),
                 _ZXN_FOO, [], [(1, "zone", (False, False))], set(), [{"zone1": 0, "zone2": 0}], [2],
                 id=_S + "NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(_pod("p", "foo", spread=[_sc(1, "zone", ANYWAY, BAR, None, None, "Honor")]), _ZXN_TAINT, [],
                 [(1, "zone", (True, True))], set(), [{"zone1": 0, "zone2": 0}], [2],
                 id=_S + "NodeTaintsPolicy honored"),
    pytest.param(_pod("p", "foo", spread=[_sc(1, "zone", ANYWAY, BAR)]), _ZXN_TAINT, [],
                 [(1, "zone", _HONOR_IGNORE)], set(), [{"zone1": 0, "zone2": 0}], [2],
                 id=_S + "NodeTaintsPolicy ignored"),
])
def test_pre_score_state(pod: Pod, nodes: list[Node], workloads: list[Workload],
                         want_constraints: list[tuple[int, str, tuple[bool, bool]]], want_ignored: set[str],
                         want_counts: list[dict[str, int]], want_sizes: list[int]) -> None:
    _check_pre_score_state(pod, nodes, workloads, want_constraints, want_ignored, want_counts, want_sizes, None)


def _check_pre_score_state(pod: Pod, nodes: list[Node], workloads: list[Workload],
                           want_constraints: list[tuple[int, str, tuple[bool, bool]]], want_ignored: set[str],
                           want_counts: list[dict[str, int]], want_sizes: list[int],
                           defaults: tuple[TopologySpreadConstraint, ...] | None) -> None:
    snap = _snapshot(nodes, [], workloads)
    cycle = CycleState()
    assert PodTopologySpread(defaults).pre_score(cycle, pod, list(snap.node_infos), snap).is_success
    state = cycle.read(f"PreScore{NAME}")
    assert [(c.max_skew, c.topology_key, (c.honor_node_affinity, c.honor_node_taints))
            for c in state.constraints] == want_constraints
    assert all(c.min_domains == 1 for c in state.constraints)
    assert state.ignored == want_ignored
    assert state.counts == want_counts
    assert state.weights == tuple(go_log(float(n + 2)) for n in want_sizes)


def test_pre_score_state_with_list_default_constraints() -> None:
    """TestPreScoreStateEmptyNodes/default constraints and a replicaset: with `defaultingType: List`
    the ScheduleAnyway default constraints score (the DoNotSchedule `rack` one only filters), each
    with the ReplicaSet's selector, and a node must have every key (`requireAllTopologies`)."""
    pod = _pod("p", label_values={"foo": "tar", "baz": "sup"}, owner=("apps/v1", "ReplicaSet", "rs1"))
    _check_pre_score_state(pod, [_node("node-a", {"rack": "rack1", HOST: "node-a", "planet": "mars"})],
                           [_controller(ReplicaSet, "rs1", FOO)],
                           [(1, HOST, _HONOR_IGNORE), (2, "planet", _HONOR_IGNORE)], set(), [{}, {"mars": 0}], [1, 1],
                           _RS_DEFAULTS)


def test_pre_score_state_keeps_the_constraint_selectors() -> None:
    # TestPreScoreStateEmptyNodes compares the parsed selectors: fooSelector (Exists foo), barSelector, and
    # for the system defaults the ReplicaSet's selector.
    snap = _snapshot(_ZXN, [], [_controller(ReplicaSet, "rs1", FOO)])
    for pod, wants in [
        (_pod("p", "foo", spread=[_sc(1, "zone", ANYWAY, FOO), _sc(1, HOST, ANYWAY, BAR)]), ["foo", "bar"]),
        (_pod("p", label_values={"foo": "tar"}, owner=("apps/v1", "ReplicaSet", "rs1")), ["foo", "foo"]),
    ]:
        cycle = CycleState()
        PodTopologySpread().pre_score(cycle, pod, list(snap.node_infos), snap)
        state = cycle.read(f"PreScore{NAME}")
        for c, key in zip(state.constraints, wants, strict=True):
            assert c.selector({key: "x"})
            assert not c.selector({"other": "x"})


def test_pre_score_writes_its_own_key_and_leaves_the_filter_state_alone() -> None:
    pod = _pod("p", "foo", spread=[_sc(1, HOST, DO_NOT, FOO), _FOO_ON_NODE])
    snap = _snapshot([_hz("node-a"), _hz("node-b")], _on("node-a", 1, "foo"))
    plugin, cycle = PodTopologySpread(), CycleState()
    assert plugin.pre_filter(cycle, pod, snap).status.is_success
    before = cycle.read(f"PreFilter{NAME}")
    assert plugin.pre_score(cycle, pod, list(snap.node_infos), snap).is_success
    assert cycle.read(f"PreFilter{NAME}") is before
    assert cycle.clone().read(f"PreScore{NAME}") is cycle.read(f"PreScore{NAME}")


# -- helper/spread_test.go --------------------------------------------------------------------------

def _as_set(selector: LabelSelector) -> dict[str, str]:
    """The selector as upstream's `labels.Set` (its requirements are all `key=value`)."""
    out = dict(selector.match_labels)
    for r in selector.match_expressions:
        assert (r.operator, len(r.values)) == ("In", 1)
        out[r.key] = r.values[0]
    return out


def test_default_selector() -> None:
    # TestDefaultSelector: the fake resources accumulate from case to case, as upstream's informer store.
    def cluster(*workloads: Workload) -> Any:
        return _snapshot([_hz("n")], [], list(workloads)).cluster

    def pod(owner: tuple[str, str, str] | None = None) -> Pod:
        return _pod("test-pod", ns="test", label_values={"podLabelKey": "podLabelVal"}, owner=owner)

    svc = _service({"podLabelKey": "podLabelVal"}, ns="test", name="test-service")
    rs = _controller(ReplicaSet, "test-replicaset", {"matchLabels": {"replicaSetLabelKey": "replicaSetLabelVal"}},
                     ns="test")
    rc = _controller(ReplicationController, "test-replicationcontroller",
                     {"replicationLabelKey": "replicationLabelVal"}, ns="test")
    ss = _controller(StatefulSet, "test-statefulset", {"matchLabels": {"statefulSetLabelKey": "statefulSetLabelVal"}},
                     ns="test")
    assert _as_set(default_selector(pod(), cluster())) == {}  # "DefaultSelector for default case"
    # "DefaultSelector for no OwnerReference pod case"
    assert _as_set(default_selector(pod(), cluster(svc))) == {"podLabelKey": "podLabelVal"}
    # "DefaultSelector for ReplicaSet OwnerReference pod case"
    assert _as_set(default_selector(pod(("apps/v1", "ReplicaSet", "test-replicaset")), cluster(svc, rs))) == {
        "podLabelKey": "podLabelVal", "replicaSetLabelKey": "replicaSetLabelVal"}
    # "DefaultSelector for ReplicationController OwnerReference pod case"
    assert _as_set(default_selector(pod(("v1", "ReplicationController", "test-replicationcontroller")),
                                    cluster(svc, rs, rc))) == {
        "podLabelKey": "podLabelVal", "replicationLabelKey": "replicationLabelVal"}
    # "DefaultSelector for StatefulSet OwnerReference pod case"
    assert _as_set(default_selector(pod(("apps/v1", "StatefulSet", "test-statefulset")),
                                    cluster(svc, rs, rc, ss))) == {
        "podLabelKey": "podLabelVal", "statefulSetLabelKey": "statefulSetLabelVal"}


@pytest.mark.parametrize(("i", "want"), [
    pytest.param(i, {"app": f"test-{i}"} if i < 3 else {}, id=f"TestGetPodServices/GetPodServices for pod-{i}")
    for i in range(5)])
def test_get_pod_services(i: int, want: dict[str, str]) -> None:
    # Upstream lists the Services selecting the pod; kresched merges their selectors into the default selector.
    services = [_service({"app": f"test-{j}"}, ns="test", name=f"service-{j}") for j in range(3)]
    pod = _pod(f"test-pod-{i}", ns="test", label_values={"app": f"test-{i}", "label": f"label-{i}"})
    assert _as_set(default_selector(pod, _snapshot([_hz("n")], [], services).cluster)) == want


def test_default_selector_ands_a_conflicting_replica_set_selector_and_lets_a_replication_controller_win() -> None:
    # labels.Merge (services, RC) lets the later map win; ReplicaSet requirements are added (Selector.Add).
    svc = _service({"app": "web"})
    rs = _controller(ReplicaSet, "rs", {"matchLabels": {"app": "api"},
                                        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]})
    rc = _controller(ReplicationController, "rc", {"app": "api"})
    web = {"app": "web"}
    got = default_selector(_pod("p", label_values=web, owner=("apps/v1", "ReplicaSet", "rs")), _snapshot(
        [_hz("n")], [], [svc, rs]).cluster)
    assert got.match_labels == web
    assert [r.operator for r in got.match_expressions] == ["In", "NotIn"]
    got = default_selector(_pod("p", label_values=web, owner=("v1", "ReplicationController", "rc")), _snapshot(
        [_hz("n")], [], [svc, rc]).cluster)
    assert got == LabelSelector(match_labels={"app": "api"})


# -- Go's arithmetic --------------------------------------------------------------------------------

def _f64(bits: int) -> float:
    return struct.unpack("<d", bits.to_bytes(8, "little"))[0]


@pytest.mark.parametrize(("x", "bits"), [
    # Go 1.27 `math.Float64bits(math.Log(float64(x)))` on amd64; 3, 14, 48 and 74 differ from glibc's log
    # in the last bit.
    (3, 0x3FF193EA7AAD030A), (5, 0x3FF9C041F7ED8D33), (6, 0x3FFCAB0BFA2A2002), (7, 0x3FFF2272AE325A57),
    (14, 0x40051CCA16D7BBA8), (48, 0x400EF8383C50BB74), (74, 0x4011375CD6FCAB1C), (1002, 0x401BA3965D405F5F),
    (5002, 0x40210901F6DC84B9),
])
def test_go_log_is_gos_math_log_bit_for_bit(x: int, bits: int) -> None:
    assert go_log(float(x)) == _f64(bits)


def test_go_log_differs_from_the_c_library_where_go_does() -> None:
    assert go_log(3.0) != math.log(3.0)


@pytest.mark.parametrize(("x", "want"), [
    (0.0, 0), (0.5, 1), (1.5, 2), (2.5, 3), (2.4999999999999996, 2), (0.49999999999999994, 0), (-0.5, -1),
    (-2.5, -3), (7.0, 7)])
def test_go_round_rounds_half_away_from_zero(x: float, want: int) -> None:
    assert go_round(x) == want


# -- through the framework --------------------------------------------------------------------------

def test_prioritize_nodes_weights_the_normalized_score() -> None:
    pod = _pod("p", "foo", spread=[_FOO_ON_NODE])
    snap = _snapshot(_ABCD, _SPREAD_2103)
    got = prioritize_nodes([(PodTopologySpread(), 2)], CycleState(), pod, list(snap.node_infos), snap)
    assert [(s.node, s.plugins[0].normalized, s.total) for s in got] == [
        ("node-a", 20, 40), ("node-b", 60, 120), ("node-c", 100, 200), ("node-d", 0, 0)]


def test_prioritize_nodes_skips_a_pod_without_spreading() -> None:
    snap = _snapshot(_ABCD, _SPREAD_2103)
    cycle = CycleState()
    got = prioritize_nodes([(PodTopologySpread(), 2)], cycle, _pod("p", "foo"), list(snap.node_infos), snap)
    assert NAME in cycle.skip_score
    assert all(s.plugins == () and s.total == 0 for s in got)


# -- properties -------------------------------------------------------------------------------------

def _reference(pod: Pod, snap: Snapshot, feasible: list[str]) -> dict[str, int] | str:
    """scoring.go transcribed literally (every node, every pod; no index), for the property test."""
    from kresched.model.selectors import label_selector_matches
    from kresched.sched.node_affinity import required_node_affinity_matches
    from kresched.sched.pod_topology_spread_constraints import SYSTEM_DEFAULT_CONSTRAINTS
    from kresched.sched.taint_toleration import find_untolerated_taint

    if not snap.node_infos:
        return SKIP
    own = bool(pod.spec.topology_spread_constraints)
    cons: list[tuple[Any, LabelSelector | None]] = []
    if own:
        for c in pod.spec.topology_spread_constraints:
            if c.when_unsatisfiable == ANYWAY:
                sel = c.label_selector
                if sel is not None and c.match_label_keys:
                    add = {k: pod.metadata.labels[k] for k in c.match_label_keys if k in pod.metadata.labels}
                    if add:
                        sel = LabelSelector(match_labels=add, match_expressions=(
                            *sel.match_expressions,
                            *(LabelSelectorRequirement(key=k, operator="In", values=(v,))
                              for k, v in sel.match_labels.items())))
                cons.append((c, sel))
    else:
        sel = default_selector(pod, snap.cluster)
        if sel.match_labels or sel.match_expressions:
            cons = [(c, sel) for c in SYSTEM_DEFAULT_CONSTRAINTS]
    if not cons:
        return SKIP

    def empty(sel: LabelSelector | None) -> bool:
        return sel is not None and not sel.match_labels and not sel.match_expressions

    def count(pods: list[Pod], sel: LabelSelector | None) -> int:
        if empty(sel):
            return 0
        return sum(1 for p in pods if p.metadata.deletion_timestamp is None
                   and p.metadata.namespace == pod.metadata.namespace
                   and label_selector_matches(sel, p.metadata.labels))

    keys = [c.topology_key for c, _ in cons]
    ignored = {n for n in feasible if own and not all(k in snap.by_name[n].node.metadata.labels for k in keys)}
    counts: list[dict[str, int]] = [{} for _ in cons]
    for n in feasible:
        if n in ignored:
            continue
        for i, (c, _) in enumerate(cons):
            if c.topology_key != HOST:
                counts[i].setdefault(snap.by_name[n].node.metadata.labels.get(c.topology_key, ""), 0)
    weights = [go_log(float((len(feasible) - len(ignored) if c.topology_key == HOST else len(counts[i])) + 2))
               for i, (c, _) in enumerate(cons)]
    for info in snap.node_infos:
        labels = info.node.metadata.labels
        if own and not all(k in labels for k in keys):
            continue
        for i, (c, sel) in enumerate(cons):
            if (c.node_affinity_policy or "Honor") == "Honor" and not required_node_affinity_matches(
                    pod, info.name, labels):
                continue
            if c.node_taints_policy == "Honor" and find_untolerated_taint(info.node.spec.taints,
                                                                          pod.spec.tolerations) is not None:
                continue
            v = labels.get(c.topology_key, "")
            if v in counts[i]:
                counts[i][v] += count(info.pods, sel)
    raw: dict[str, int] = {}
    for n in feasible:
        if n in ignored:
            raw[n] = 0
            continue
        labels = snap.by_name[n].node.metadata.labels
        total = 0.0
        for i, (c, sel) in enumerate(cons):
            if c.topology_key in labels:
                cnt = count(snap.by_name[n].pods, sel) if c.topology_key == HOST else counts[i][labels[c.topology_key]]
                total += float(cnt) * weights[i] + float(c.max_skew - 1)
        raw[n] = go_round(total)
    valid = [raw[n] for n in feasible if n not in ignored]
    lo, hi = (min(valid), max(0, *valid)) if valid else (0, 0)
    return {n: 0 if n in ignored else MAX_NODE_SCORE if hi == 0 else MAX_NODE_SCORE * (hi + lo - raw[n]) // hi
            for n in feasible}


_APPS = ["web", "api", "db"]
_node_st = st.tuples(st.sampled_from([None, "a", "b", "c"]), st.booleans(), st.booleans(), st.booleans())
_pod_st = st.tuples(st.integers(0, 7), st.sampled_from(_APPS), st.sampled_from(["default", "other"]), st.booleans(),
                    st.sampled_from([None, "v1", "v2"]))
_constraint_st = st.tuples(st.integers(1, 6), st.sampled_from([ZONE, HOST, "rack"]), st.sampled_from([ANYWAY, DO_NOT]),
                           st.sampled_from(["app", "empty", "nil", "expr"]), st.sampled_from([None, "Honor", "Ignore"]),
                           st.sampled_from([None, "Honor", "Ignore"]), st.booleans())


@settings(max_examples=150, deadline=None)
@given(nodes=st.lists(_node_st, min_size=1, max_size=8), pods=st.lists(_pod_st, max_size=25),
       constraints=st.lists(_constraint_st, max_size=3), feasible=st.sets(st.integers(0, 7), min_size=1),
       app=st.sampled_from(_APPS), version=st.sampled_from([None, "v1", "v2"]),
       workload=st.sampled_from(["none", "service", "rs", "ss", "rc", "missing-rs"]), selector_node=st.booleans())
def test_normalized_scores_are_within_0_to_100_and_agree_with_a_literal_transcription(
        nodes: list[tuple[Any, ...]], pods: list[tuple[Any, ...]], constraints: list[tuple[Any, ...]],
        feasible: set[int], app: str, version: str | None, workload: str, selector_node: bool) -> None:
    node_objs = []
    for i, (zone, has_host, rack, tainted) in enumerate(nodes):
        labels: dict[str, str] = {}
        if zone is not None:
            labels[ZONE] = zone
        if has_host:
            labels[HOST] = f"n{i}"
        if rack:
            labels["rack"] = f"r{i % 2}"
            labels["big"] = "yes"
        node_objs.append(_node(f"n{i}", labels, TAINTS if tainted else None))
    pod_objs = []
    for j, (at, papp, ns, terminating, ver) in enumerate(pods):
        if at < len(nodes):
            lv = {"app": papp, **({"version": ver} if ver else {})}
            pod_objs.append(_pod(f"e{j}", node=f"n{at}", ns=ns, terminating=terminating, label_values=lv))
    spread = []
    for max_skew, key, when, sel_kind, aff, taint, mlk in constraints:
        selector = {"app": {"matchLabels": {"app": app}}, "empty": {}, "nil": None,
                    "expr": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}}[sel_kind]
        spread.append(_sc(max_skew, key, when, selector, None, aff, taint, ["version"] if mlk else None))
    workloads: list[Workload] = []
    owner = None
    if workload == "service":
        workloads.append(_service({"app": app}))
    elif workload in ("rs", "ss"):
        kind = ReplicaSet if workload == "rs" else StatefulSet
        workloads.append(_controller(kind, "c", {"matchLabels": {"app": app}}))
        owner = ("apps/v1", kind.__name__, "c")
    elif workload == "rc":
        workloads.append(_controller(ReplicationController, "c", {"app": app}))
        owner = ("v1", "ReplicationController", "c")
    elif workload == "missing-rs":
        owner = ("apps/v1", "ReplicaSet", "gone")
    pod = _pod("incoming", label_values={"app": app, **({"version": version} if version else {})}, spread=spread,
               owner=owner, node_selector={"big": "yes"} if selector_node else None)
    names = [f"n{i}" for i in sorted(feasible) if i < len(nodes)] or ["n0"]
    snap = _snapshot(node_objs, pod_objs, workloads)
    got = _scores(pod, pod_objs, [snap.by_name[n].node for n in names], [n for n in node_objs if n.name not in names],
                  workloads)
    assert got == _reference(pod, snap, names)
    if got != SKIP:
        assert all(0 <= s <= MAX_NODE_SCORE for s in got.values())


def _with_node_c_cloned_holding_3_more(snap: Snapshot) -> list[NodeInfo]:
    """The snapshot's NodeInfos, node-c's a clone (a simulation's) with 3 more foo pods."""
    clone = snap.by_name["node-c"].clone()
    for extra in _on("node-c", 3, "foo"):
        clone.add_pod(extra)
    return [clone if i.name == "node-c" else i for i in snap.node_infos]


def test_hostname_counts_come_from_the_node_info_scored() -> None:
    # Score counts the pods of the NodeInfo it is given (upstream: `nodeInfo.GetPods()`), also when that is
    # not the snapshot's own (a simulation's clone): here node-c's clone holds 3 more matching pods.
    pod = _pod("p", "foo", spread=[_FOO_ON_NODE])
    snap = _snapshot(_ABCD, _SPREAD_2103)
    infos = _with_node_c_cloned_holding_3_more(snap)
    plugin, cycle = PodTopologySpread(), CycleState()
    assert plugin.pre_score(cycle, pod, infos, snap).is_success
    scores = [plugin.score(cycle, pod, i) for i in infos]
    plugin.normalize_score(cycle, pod, scores)
    assert scores == list(_scores(pod, [*_SPREAD_2103, *_on("node-c", 3, "foo")], _ABCD).values())


def test_hostname_counts_come_from_the_node_info_scored_with_a_zone_constraint_too() -> None:
    # The same with the hostname and zone constraints together (as the system defaults): the zone
    # counts are the snapshot's (PreScore), the hostname count the clone's. Zones z1 = a, b (3 foo
    # pods), z2 = c, d (3); weights log 6 (four hosts) and log 4 (two zones); the zone skew adds 1:
    # a 2·log 6 + 3·log 4 + 1 = 8.74 → 9; b 6.95 → 7; c (its clone: 3) and d 10.53 → 11.
    # Normalized 100·(11 + 7 − s) / 11.
    pod = _pod("p", "foo", spread=[_FOO_ON_NODE, _sc(2, ZONE, ANYWAY, FOO)])
    nodes = [_hz(name, zone, ZONE)
             for name, zone in (("node-a", "z1"), ("node-b", "z1"), ("node-c", "z2"), ("node-d", "z2"))]
    snap = _snapshot(nodes, _SPREAD_2103)
    infos = _with_node_c_cloned_holding_3_more(snap)
    plugin, cycle = PodTopologySpread(), CycleState()
    assert plugin.pre_score(cycle, pod, infos, snap).is_success
    scores = plugin.score_all(cycle, pod, infos)
    assert scores == [9, 7, 11, 11]
    plugin.normalize_score(cycle, pod, scores)
    assert scores == [81, 100, 63, 63]


def test_labels_come_from_the_node_info_scored() -> None:
    # Score reads the labels of the Node of the NodeInfo it is given, also when that NodeInfo is
    # not the snapshot's and its Node has other labels (here node-c has lost its zone label, and
    # node-e, unknown to the snapshot, is in z2): scoring all the nodes at once (PreScore reads
    # their labels from the snapshot's columns) gives each node what scoring it alone gives.
    pod = _pod("p", "foo", spread=[_FOO_ON_NODE, _sc(2, ZONE, ANYWAY, FOO)])
    nodes = [_hz(name, zone, ZONE)
             for name, zone in (("node-a", "z1"), ("node-b", "z1"), ("node-c", "z2"), ("node-d", "z2"))]
    snap = _snapshot(nodes, _SPREAD_2103)
    moved = NodeInfo(_hz("node-c"), snap.by_name["node-c"].pods)
    infos = [moved if i.name == "node-c" else i for i in snap.node_infos] + [NodeInfo(_hz("node-e", "z2", ZONE))]
    plugin, cycle = PodTopologySpread(), CycleState()
    assert plugin.pre_score(cycle, pod, infos, snap).is_success
    together = plugin.score_all(cycle, pod, infos)
    assert together == [plugin.score(cycle, pod, i) for i in infos]
    assert together[2] == 0  # ignored: it lacks a key of the pod's own constraints
    assert together[4] > 0


def test_a_score_memo_kept_across_snapshots_reads_each_snapshots_labels() -> None:
    # The replicas of a workload share a score memo, which keeps the label columns of the nodes
    # last scored. Scored again on a snapshot where node-d moved to zone z1, the same nodes score
    # as without the memo: the columns kept were another snapshot's.
    pod = _pod("p", "foo", spread=[_FOO_ON_NODE, _sc(2, ZONE, ANYWAY, FOO)])
    nodes = [_hz(name, zone, ZONE)
             for name, zone in (("node-a", "z1"), ("node-b", "z1"), ("node-c", "z2"), ("node-d", "z2"))]
    first = _snapshot(nodes, _SPREAD_2103)
    moved = first.with_node_info(NodeInfo(_hz("node-d", "z1", ZONE), first.by_name["node-d"].pods))
    plugins = [(PodTopologySpread(), 2)]
    memo = ScoreMemo()
    for snap, skip in ((first, 0), (first, 1), (moved, 0), (first, 0)):  # (skip: fewer nodes scored)
        infos = list(snap.node_infos)[skip:]
        kept = score_nodes(plugins, CycleState(), pod, infos, snap, memo, [i.name for i in infos])
        fresh = score_nodes(plugins, CycleState(), pod, infos, snap)
        assert kept.totals == fresh.totals
    assert kept.totals != score_nodes(plugins, CycleState(), pod, list(moved.node_infos), moved).totals


# -- ScoreGainBound: what moving a pod could gain on its spreading, without scoring every node ------

@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["z1", "z2", "z3", None]), min_size=2, max_size=6),
       st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["web", "db"]), st.sampled_from(["default", "other"])),
                min_size=1, max_size=14),
       st.lists(st.tuples(st.integers(1, 3), st.sampled_from([HOST, ZONE])), min_size=1, max_size=2),
       st.integers(0, 13), st.sets(st.integers(0, 5)), st.booleans())
def test_the_gain_bound_is_never_below_what_a_move_gains(
        zones: list[str | None], placed: list[tuple[int, str, str]], constraints: list[tuple[int, str]],
        which: int, feasible: set[int], selector_node: bool) -> None:
    # Whichever pod leaves whichever node, and whichever nodes are then feasible (the weights and
    # domains depend on them), no node scores lower than the pod's node by more than the bound; a
    # bound of 0 means no node scores lower at all.
    nodes = [_hz(f"n{i}", z, ZONE, **({"big": "yes"} if i % 2 else {})) for i, z in enumerate(zones)]
    pods = [_pod(f"p{j}", label_values={"app": app}, node=f"n{i % len(nodes)}", ns=ns)
            for j, (i, app, ns) in enumerate(placed)]
    removed = pods[which % len(pods)]
    spread = [_sc(skew, key, ANYWAY, {"matchLabels": {"app": "web"}}) for skew, key in constraints]
    incoming = _pod("incoming", label_values={"app": "web"}, spread=spread, ns=removed.metadata.namespace,
                    node_selector={"big": "yes"} if selector_node else None)
    snap = _snapshot(nodes, pods)
    node = snap.by_name[removed.spec.node_name]
    bound = ScoreGainBound(incoming, snap).gain(node, removed)
    assert bound >= 0

    without = node.clone()
    without.remove_pod(removed)
    after = snap.with_node_info(without)
    names = sorted({node.name, *(f"n{i}" for i in feasible if i < len(nodes))})
    infos = [after.by_name[n] for n in names]
    plugin, cycle = PodTopologySpread(), CycleState()
    if plugin.pre_score(cycle, incoming, infos, after).code == Code.SKIP:
        return
    raw = {i.name: plugin.score(cycle, incoming, i) for i in infos}
    assert max(raw[node.name] - r for r in raw.values()) <= bound


def test_the_gain_bound_of_an_even_spread_is_zero_and_of_a_crowded_zone_is_not() -> None:
    nodes = [_hz("a1", "a", ZONE), _hz("b1", "b", ZONE), _hz("c1", "c", ZONE)]
    spread = [_sc(1, ZONE, ANYWAY, {"matchLabels": {"app": "web"}})]
    web = {"app": "web"}
    even = [_pod(f"w{i}", label_values=web, node=n.metadata.name, spread=spread) for i, n in enumerate(nodes)]
    snap = _snapshot(nodes, even)
    assert ScoreGainBound(even[0], snap).gain(snap.by_name["a1"], even[0]) == 0
    crowded = [*even, *(_pod(f"x{i}", label_values=web, node="a1", spread=spread) for i in range(8))]
    snap = _snapshot(nodes, crowded)
    # a holds 9 matching pods, b and c 1 each: leaving a, 8 − 1 = 7 more than the least, × log(3 + 2).
    assert ScoreGainBound(crowded[0], snap).gain(snap.by_name["a1"], crowded[0]) == int(7 * go_log(5.0)) + 1


def test_pods_of_other_workloads_get_their_own_default_constraints_from_one_cluster() -> None:
    """The default constraints are kept per what the default selector reads of a pod (its namespace,
    labels and controller): asked about pods of one cluster in turn, each gets its own."""
    svc = _service({"app": "web"}, ns="a", name="web")
    rs = _controller(ReplicaSet, "rs", {"matchLabels": {"tier": "front"}}, ns="a")
    ss = _controller(StatefulSet, "ss", {"matchLabels": {"tier": "db"}}, ns="a")
    cluster = _snapshot([_hz("n")], [], [svc, rs, ss]).cluster
    web = {"app": "web", "tier": "front"}

    def selector(ns: str, labels: dict[str, str], owner: tuple[str, str, str] | None) -> dict[str, str]:
        got = build_default_constraints(_pod("p", ns=ns, label_values=labels, owner=owner), cluster)
        if not got:
            return {}
        assert len({c.selector_key for c in got}) == 1  # (zone and hostname: one selector)
        return _as_set(msgspec.json.decode(got[0].selector_key, type=LabelSelector))

    for _ in range(2):  # the second time from what is kept
        assert selector("a", web, ("apps/v1", "ReplicaSet", "rs")) == {"app": "web", "tier": "front"}
        assert selector("a", web, ("apps/v1", "StatefulSet", "ss")) == {"app": "web", "tier": "db"}
        assert selector("a", web, None) == {"app": "web"}
        assert selector("a", {"tier": "front"}, ("apps/v1", "ReplicaSet", "rs")) == {"tier": "front"}
        assert selector("b", web, ("apps/v1", "ReplicaSet", "rs")) == {}
