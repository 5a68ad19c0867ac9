"""The facts kresched derives from API objects, table by table, against the upstream code that defines them:

- effective requests: component-helpers/resource/helpers.go `PodRequests` (cases ported from
  helpers_test.go), on the pod as the API server stores it (pkg/apis/core/v1/defaults.go);
- QoS class: pkg/apis/core/v1/helper/qos `GetPodQOS`/`ComputePodQOS` (cases ported from qos_test.go);
- priority: plugin/pkg/admission/priority `admitPod`;
- label and node selectors: apimachinery `LabelSelectorAsSelector`, `labels.Requirement.Matches`,
  component-helpers/scheduling/corev1/nodeaffinity;
- PodDisruptionBudget validation: pkg/apis/policy/validation `ValidatePodDisruptionBudgetSpec`.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kresched.model.objects import Node, Pod, PodDisruptionBudget
from kresched.model.resources import Resources
from kresched.model.selectors import label_selector_matches, node_requirement_matches, node_selector_term_matches
from kresched.model.specs import LabelSelector, NodeSelectorRequirement, NodeSelectorTerm
from tests.builders import make_node, make_pod, make_priority_class, make_state

GI = 2**30
MI = 2**20


def container(name: str = "c", *, req: dict[str, Any] | None = None, lim: dict[str, Any] | None = None,
              sidecar: bool = False, ports: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "resources": {}}
    if req is not None:
        c["resources"]["requests"] = req
    if lim is not None:
        c["resources"]["limits"] = lim
    if sidecar:
        c["restartPolicy"] = "Always"
    if ports:
        c["ports"] = ports
    return c


def pod(containers: list[dict[str, Any]] = (), init: list[dict[str, Any]] = (), *,
        overhead: dict[str, Any] | None = None, resources: dict[str, Any] | None = None,
        status: dict[str, Any] | None = None, **spec: Any) -> Pod:
    s: dict[str, Any] = {"containers": list(containers), "initContainers": list(init), **spec}
    if overhead is not None:
        s["overhead"] = overhead
    if resources is not None:
        s["resources"] = resources
    return msgspec.convert({"metadata": {"name": "p", "namespace": "ns"}, "spec": s, "status": status or {}}, Pod)


def res(cpu: int = 0, memory: int = 0, ephemeral: int = 0, **scalar: int) -> Resources:
    return Resources(cpu, memory, ephemeral, {k.replace("_", "/"): v for k, v in scalar.items()})


# -- effective requests (resourcehelper.PodRequests) -------------------------------------------------

REQUESTS = [
    pytest.param(pod(), res(), id="a pod that requests nothing requests zero of everything"),
    pytest.param(pod([container(lim={"cpu": "9"})]), res(9000),
                 id="a limit without a request is the request (API defaulting; upstream case just-limit-no-overhead)"),
    pytest.param(pod([container()], overhead={"cpu": "5", "memory": "5"}), res(5000, 5),
                 id="overhead alone is the request (just-overhead)"),
    pytest.param(pod([container(req={"cpu": "1", "memory": "10"})], overhead={"cpu": "5", "memory": "5"}),
                 res(6000, 15), id="overhead is added to the requests (req-and-overhead)"),
    pytest.param(pod([container(req={"cpu": "1", "memory": "10"}, lim={"cpu": "2", "memory": "12"})],
                     overhead={"cpu": "5", "memory": "5"}),
                 res(6000, 15), id="limits do not change requests that are set (all-req-lim-and-overhead)"),
    pytest.param(pod([container("a", req={"cpu": "1", "memory": "5"}, lim={"cpu": "2", "memory": "10"}),
                      container("b", req={"cpu": "4", "memory": "12"}, lim={"cpu": "8", "memory": "24"})]),
                 res(5000, 17), id="containers are summed (two container no overhead)"),
    pytest.param(pod([container("a", req={"cpu": "1", "memory": "5"}),
                      container("b", req={"cpu": "4", "memory": "12"})],
                     [container("small-init", req={"cpu": "1", "memory": "5"}),
                      container("big-init", req={"cpu": "40", "memory": "120"})],
                     overhead={"cpu": "3", "memory": "8"}),
                 res(43000, 128), id="the largest init container wins over the containers, then overhead"),
    pytest.param(pod([container(req={"cpu": "1"})], [container("i", req={"cpu": "4"})]), res(4000),
                 id="nil options, larger init container"),
    pytest.param(pod([container("a", req={"cpu": "2"}), container("b", req={"cpu": "3"})],
                     [container("i", req={"cpu": "2"})]), res(5000),
                 id="nil options, larger containers"),
    pytest.param(pod([container(req={"cpu": "1"})], [container("s", req={"cpu": "1"}, sidecar=True)]), res(2000),
                 id="a restartable init container (sidecar) runs alongside the containers"),
    pytest.param(pod([container(req={"cpu": "1"})],
                     [container("init-1", req={"cpu": "5"}),
                      container("r1", req={"cpu": "1"}, sidecar=True),
                      container("r2", req={"cpu": "2"}, sidecar=True),
                      container("r3", req={"cpu": "3"}, sidecar=True)]),
                 res(7000), id="multiple restartable init containers: max(5, 1+2+3 + 1)"),
    pytest.param(pod([container(req={"cpu": "1"})],
                     [container("init-1", req={"cpu": "5"}),
                      container("r1", req={"cpu": "1"}, sidecar=True),
                      container("r2", req={"cpu": "2"}, sidecar=True),
                      container("init-2", req={"cpu": "5"}),
                      container("r3", req={"cpu": "3"}, sidecar=True)]),
                 res(8000), id="an init container runs with the sidecars declared before it: 5 + 1+2"),
    pytest.param(pod([container(req={"cpu": "100"})],
                     [container("r1", req={"cpu": "10"}, sidecar=True), container("init-1", req={"cpu": "200"})]),
                 res(210000), id="restartable-init, init and regular: max(10+100, 200+10)"),
    pytest.param(pod([container(req={"cpu": "1"})], [container("i", lim={"cpu": "3"})]), res(3000),
                 id="an init container's limit defaults its request too"),
    pytest.param(pod([container(req={"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "1Gi",
                                     "nvidia.com/gpu": "1", "hugepages-2Mi": "4Mi"})]),
                 res(100, 64 * MI, GI, **{"nvidia.com_gpu": 1, "hugepages-2Mi": 4 * MI}),
                 id="every resource is converted: extended and hugepages are scalars"),
    pytest.param(pod([container(req={"cpu": "2", "memory": "2Gi", "ephemeral-storage": "1Gi"})],
                     resources={"requests": {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "5Gi"}}),
                 res(1000, GI, GI), id="pod-level requests replace cpu and memory, not ephemeral-storage"),
    pytest.param(pod([container(req={"cpu": "1", "hugepages-2Mi": "2Mi"})],
                     resources={"requests": {"hugepages-2Mi": "8Mi"}}),
                 res(1000, **{"hugepages-2Mi": 8 * MI}), id="pod-level requests replace hugepages"),
    pytest.param(pod([container(req={"cpu": "250m"})], resources={"limits": {"cpu": "2", "memory": "1Gi"}}),
                 res(2000, GI), id="pod-level limits without requests default the pod-level requests"),
    pytest.param(pod([container(req={"hugepages-2Mi": "2Mi"})], resources={"limits": {"hugepages-2Mi": "8Mi"}}),
                 res(**{"hugepages-2Mi": 2 * MI}),
                 id="pod-level hugepages requests default to what the containers request"),
    pytest.param(pod([container(req={"cpu": "1"})], resources={"requests": {"cpu": "2"}}, overhead={"cpu": "100m"}),
                 res(2100), id="overhead is added to pod-level requests"),
    pytest.param(pod([container(req={"cpu": "1"})], resources={}), res(1000),
                 id="empty pod-level resources change nothing"),
    pytest.param(pod([container(req={"cpu": 1, "memory": 0.5})]), res(1000, 1),
                 id="YAML numbers are quantities"),
]


@pytest.mark.parametrize(("p", "expected"), REQUESTS)
def test_effective_requests_are_the_schedulers_pod_requests(p, expected):
    assert p.requests == expected


# -- QoS (ComputePodQOS) -----------------------------------------------------------------------------

def rl(cpu: str = "", memory: str = "") -> dict[str, str]:
    """qos_test.go's getResourceList: an empty string leaves the resource out."""
    return {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}


QOS = [
    pytest.param(pod([container(req=rl("100m", "100Mi"), lim=rl("100m", "100Mi"))]), "Guaranteed", id="guaranteed"),
    pytest.param(pod([container("a", req=rl("100m", "100Mi"), lim=rl("100m", "100Mi")),
                      container("b", req=rl("100m", "100Mi"), lim=rl("100m", "100Mi"))]), "Guaranteed",
                 id="guaranteed-guaranteed"),
    pytest.param(pod([container("a", req=rl(), lim=rl()), container("b", req=rl(), lim=rl())]), "BestEffort",
                 id="best-effort-best-effort"),
    pytest.param(pod([container(req=rl(), lim=rl())]), "BestEffort", id="best-effort"),
    pytest.param(pod([container("a", req=rl(), lim=rl()), container("b", req=rl("1"), lim=rl("2"))]), "Burstable",
                 id="best-effort-burstable"),
    pytest.param(pod([container("a", req=rl(), lim=rl()), container("b", req=rl("10m", "100Mi"),
                                                                    lim=rl("10m", "100Mi"))]),
                 "Burstable", id="best-effort-guaranteed"),
    pytest.param(pod([container(req=rl("", "100Mi"), lim=rl("", "100Mi"))]), "Burstable",
                 id="burstable-cpu-guaranteed-memory"),
    pytest.param(pod([container(req=rl("100m", "100Mi"), lim=rl())]), "Burstable", id="burstable-no-limits"),
    pytest.param(pod([container("a", req=rl("1", "100Mi"), lim=rl("2", "100Mi")),
                      container("b", req=rl("100m", "100Mi"), lim=rl("100m", "100Mi"))]), "Burstable",
                 id="burstable-guaranteed"),
    pytest.param(pod([container("a", req=rl("100m", "100Mi"), lim=rl("200m", "200Mi")),
                      container("b", req=rl("100m", "100Mi"), lim=rl())]), "Burstable",
                 id="burstable-unbounded-but-requests-match-limits"),
    pytest.param(pod([container(req=rl("10m", "100Mi"), lim=rl("100m", "200Mi"))]), "Burstable", id="burstable-1"),
    pytest.param(pod([container(req=rl("0", "0"), lim=rl("100m", "200Mi"))]), "Burstable", id="burstable-2"),
    pytest.param(pod([container(req={**rl("0", "0"), "hugepages-2Mi": "1Gi"},
                                lim={**rl("0", "0"), "hugepages-2Mi": "1Gi"})]),
                 "BestEffort", id="best-effort-hugepages: only cpu and memory count"),
    pytest.param(pod([container(req=rl(), lim=rl())],
                     [container("i", req=rl("10m", "100Mi"), lim=rl("100m", "200Mi"))]),
                 "Burstable", id="init-container"),
    pytest.param(pod([container(req=rl(), lim=rl())], resources={"requests": rl("10m", "100Mi"),
                                                               "limits": rl("10m", "100Mi")}),
                 "Guaranteed", id="guaranteed-with-pod-level-resources"),
    pytest.param(pod([container(req=rl("3m", "10Mi"), lim=rl("5m", "20Mi"))],
                     resources={"requests": rl("10m", "100Mi"), "limits": rl("10m", "100Mi")}),
                 "Guaranteed", id="guaranteed-with-pod-and-container-level-resources"),
    pytest.param(pod([container(req=rl(), lim=rl())], resources={"requests": rl("10m", "10Mi"),
                                                               "limits": rl("20m", "50Mi")}),
                 "Burstable", id="burstable-with-pod-level-resources"),
    pytest.param(pod([container(req=rl("5m", "10Mi"), lim=rl("5m", "10Mi"))],
                     resources={"requests": rl("10m", "10Mi"), "limits": rl("20m", "50Mi")}),
                 "Burstable", id="burstable-with-pod-and-container-level-resources"),
    pytest.param(pod([container(req=rl("5m", "10Mi"), lim=rl())], resources={"requests": rl("10m", "10Mi")}),
                 "Burstable", id="burstable-with-pod-and-container-level-requests"),
    pytest.param(pod([container("a", req=rl("5m", "10Mi"), lim=rl()),
                      container("b", req=rl("5m", "10Mi"), lim=rl("5m", "10Mi"))],
                     resources={"requests": rl("10m", "10Mi"), "limits": rl("5m")}),
                 "Burstable", id="burstable-with-pod-and-container-level-resources-2"),
    # on the pod as stored: defaulting fills requests from limits before the class is computed
    pytest.param(pod([container(lim=rl("1", "1Gi"))]), "Guaranteed",
                 id="limits alone make a Guaranteed pod (requests default to limits)"),
    pytest.param(pod([container(req=rl("1"), lim=rl("1", "1Gi"))]), "Guaranteed",
                 id="a missing memory request defaults to the memory limit"),
    pytest.param(pod([container()], resources={"limits": rl("1", "1Gi")}), "Guaranteed",
                 id="pod-level limits alone make a Guaranteed pod"),
    pytest.param(pod([container(req=rl("1", "1Gi"), lim=rl("1", "1Gi"))], resources={}), "BestEffort",
                 id="empty pod-level resources are pod-level resources: nothing is requested"),
    pytest.param(pod([container(req=rl("1.5m", "1Gi"), lim=rl("2m", "1Gi"))]), "Burstable",
                 id="requests and limits are compared exactly, not in rounded millicores"),
    pytest.param(pod([container(req=rl("1", "1Gi"), lim=rl("1000m", "1024Mi"))]), "Guaranteed",
                 id="equal amounts in different units are equal"),
    pytest.param(pod([container(req=rl("1"), lim=rl("2"))], status={"qosClass": "Guaranteed"}), "Guaranteed",
                 id="the class the API server recorded in status.qosClass wins (GetPodQOS)"),
]


@pytest.mark.parametrize(("p", "expected"), QOS)
def test_qos_class_is_computepodqos(p, expected):
    assert p.qos == expected


# -- priority (the Priority admission plugin, applied by build_state) --------------------------------

def _priority(p: Pod, *classes) -> Pod:
    return make_state(pods=[p], priority_classes=list(classes)).pods[0]


CLASSES = (make_priority_class("high", 1000), make_priority_class("never", 500, preemption_policy="Never"),
           make_priority_class("default-a", 100, global_default=True),
           make_priority_class("default-b", 50, global_default=True))


@pytest.mark.parametrize(
    ("p", "classes", "priority", "class_name", "policy"),
    [
        pytest.param(make_pod(priority=7, priority_class="high"), CLASSES, 7, "high", None,
                     id="spec.priority wins over the class it names"),
        pytest.param(make_pod(priority=None, priority_class="high"), CLASSES, 1000, "high", "PreemptLowerPriority",
                     id="without spec.priority, the named PriorityClass gives it"),
        pytest.param(make_pod(priority=None, priority_class="never"), CLASSES, 500, "never", "Never",
                     id="the class's preemptionPolicy comes with it"),
        pytest.param(make_pod(priority=None, priority_class="never", preemption_policy="PreemptLowerPriority"),
                     CLASSES, 500, "never", "PreemptLowerPriority", id="a pod's own preemptionPolicy is kept"),
        pytest.param(make_pod(priority=None), CLASSES, 50, "default-b", "PreemptLowerPriority",
                     id="without a class, the globalDefault class (the lowest of several) names and gives it"),
        pytest.param(make_pod(priority=None), CLASSES[:2], 0, "", "PreemptLowerPriority",
                     id="without a class nor a globalDefault, priority is 0"),
        pytest.param(make_pod(priority=None, priority_class="system-node-critical"), (), 2_000_001_000,
                     "system-node-critical", "PreemptLowerPriority",
                     id="system-node-critical has its built-in value when the snapshot lacks the class"),
        pytest.param(make_pod(priority=None, priority_class="system-cluster-critical"), (), 2_000_000_000,
                     "system-cluster-critical", "PreemptLowerPriority", id="so has system-cluster-critical"),
        pytest.param(make_pod(priority=None, priority_class="gone"), CLASSES, 50, "gone", "PreemptLowerPriority",
                     id="a class missing from the snapshot falls back to the globalDefault's value"),
        pytest.param(make_pod(priority=None, priority_class="gone"), (), 0, "gone", "PreemptLowerPriority",
                     id="and to 0 without one"),
    ],
)
def test_priority_is_resolved_as_the_admission_plugin_does(p, classes, priority, class_name, policy):
    got = _priority(p, *classes)
    assert (got.priority, got.spec.priority_class_name, got.spec.preemption_policy) == (priority, class_name, policy)


# -- pod facts -----------------------------------------------------------------------------------------

def _owned(*refs: dict[str, Any], annotations: dict[str, str] | None = None, **meta: Any) -> Pod:
    return msgspec.convert({"metadata": {"name": "p", "namespace": "ns", "ownerReferences": list(refs),
                                         "annotations": annotations or {}, **meta}}, Pod)


RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9", "uid": "u1", "controller": True}
DS = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "fluentd", "uid": "u2", "controller": True}
NODE_OWNER = {"apiVersion": "v1", "kind": "Node", "name": "node-a", "uid": "u3", "controller": True}


@pytest.mark.parametrize(
    ("p", "controller", "bare", "daemonset", "mirror"),
    [
        pytest.param(_owned(RS), "ReplicaSet/web-7d9", False, False, False, id="a ReplicaSet pod"),
        pytest.param(_owned(DS), "DaemonSet/fluentd", False, True, False, id="a DaemonSet pod"),
        pytest.param(_owned(), None, True, False, False, id="a bare pod has no controller"),
        pytest.param(_owned({**RS, "controller": False}), None, True, False, False,
                     id="an owner that is not the controller does not count"),
        pytest.param(_owned({**RS, "controller": None}, DS), "DaemonSet/fluentd", False, True, False,
                     id="the controlling owner is found among several"),
        pytest.param(_owned(NODE_OWNER, annotations={"kubernetes.io/config.mirror": "abc"}), "Node/node-a", False,
                     False, True, id="a mirror pod carries the config.mirror annotation"),
    ],
)
def test_controller_and_kind_of_pod(p, controller, bare, daemonset, mirror):
    assert (p.controller_ref, p.is_bare, p.is_daemonset_pod, p.is_mirror) == (controller, bare, daemonset, mirror)


@pytest.mark.parametrize(
    ("p", "critical", "effective"),
    [
        pytest.param(make_pod(priority=0), False, 0, id="an ordinary pod is not critical"),
        pytest.param(make_pod(priority=2_000_000_000, priority_class="system-cluster-critical"), True, 2_000_000_000,
                     id="system-cluster-critical"),
        pytest.param(make_pod(priority=2_000_001_000, priority_class="system-node-critical"), True, 2_000_001_000,
                     id="system-node-critical"),
        pytest.param(make_pod(priority=0, priority_class="system-node-critical"), True, 0,
                     id="the class name alone makes it critical"),
        pytest.param(make_pod(priority=2_000_000_000), True, 2_000_000_000,
                     id="a system-critical priority alone makes it critical"),
        pytest.param(make_pod(priority=10, annotations={"scheduler.alpha.kubernetes.io/critical-pod": ""}), True,
                     2_000_000_000, id="the legacy critical-pod annotation counts as system-cluster-critical"),
        pytest.param(make_pod(priority=1_999_999_999), False, 1_999_999_999, id="just below is not critical"),
    ],
)
def test_critical_pods_and_effective_priority(p, critical, effective):
    assert (p.is_critical, p.effective_priority) == (critical, effective)


@pytest.mark.parametrize(
    ("p", "pending"),
    [
        pytest.param(make_pod(phase="Pending"), True, id="an unbound Pending pod is waiting for the scheduler"),
        pytest.param(make_pod(phase=None, spec={}), True, id="a pod without a phase is pending"),
        pytest.param(make_pod(node="node-a", phase="Pending"), False,
                     id="a bound pod is not (it is starting on its node)"),
        pytest.param(make_pod(phase="Pending", deletion_timestamp="2026-01-01T00:00:00Z"), False,
                     id="a terminating pod is not"),
        pytest.param(make_pod(phase="Pending", spec={"schedulingGates": [{"name": "wait"}]}), False,
                     id="a scheduling-gated pod is not"),
        pytest.param(make_pod(node="node-a"), False, id="a running pod is not"),
        pytest.param(make_pod(phase="Failed"), False, id="a failed pod is not"),
    ],
)
def test_is_pending(p, pending):
    assert p.is_pending is pending


def test_a_clusters_pending_pods_are_its_pending_pods_in_order_bound_ones_never_among_them():
    pods = [make_pod("a", phase="Pending"), make_pod("b", node="node-a", phase="Pending"),
            make_pod("c", phase="Pending", nominated_node="node-a"), make_pod("d", node="node-a"),
            make_pod("e", phase="Failed"), make_pod("f", phase=None, spec={})]
    state = make_state([make_node("node-a")], pods)
    assert [p.name for p in state.pending_pods()] == ["a", "c", "f"]
    assert [p.name for p in state.unbound_pods] == ["a", "c", "e", "f"]


def test_make_pod_without_a_phase_really_has_none():
    p = msgspec.convert({"metadata": {"name": "p"}}, Pod)
    assert p.status.phase == ""
    assert p.is_pending


@pytest.mark.parametrize(
    ("p", "terminating", "grace"),
    [
        pytest.param(make_pod(), False, 30, id="the default grace period is 30 s"),
        pytest.param(make_pod(grace=0), False, 0, id="a zero grace period is kept"),
        pytest.param(make_pod(grace=5, deletion_timestamp="2026-01-01T00:00:00Z"), True, 5,
                     id="a deletionTimestamp means terminating"),
    ],
)
def test_terminating_and_grace(p, terminating, grace):
    assert (p.is_terminating, p.grace_seconds) == (terminating, grace)


@pytest.mark.parametrize(
    ("p", "ports"),
    [
        pytest.param(pod([container(ports=[{"containerPort": 80}])]), (), id="a container port is no host port"),
        pytest.param(pod([container(ports=[{"containerPort": 80, "hostPort": 8080}])]), (("0.0.0.0", "TCP", 8080),),
                     id="a host port binds all addresses over TCP by default"),
        pytest.param(pod([container(ports=[{"containerPort": 53, "hostPort": 53, "protocol": "UDP",
                                            "hostIP": "10.0.0.1"}])]),
                     (("10.0.0.1", "UDP", 53),), id="host IP and protocol are kept"),
        pytest.param(pod([container(ports=[{"containerPort": 9100}])], hostNetwork=True), (("0.0.0.0", "TCP", 9100),),
                     id="with hostNetwork, the container port is the host port (API defaulting)"),
        pytest.param(pod([container("main", ports=[{"containerPort": 1, "hostPort": 81}])],
                         [container("proxy", sidecar=True, ports=[{"containerPort": 2, "hostPort": 82}]),
                          container("setup", ports=[{"containerPort": 3, "hostPort": 83}])]),
                     (("0.0.0.0", "TCP", 82), ("0.0.0.0", "TCP", 81)),
                     id="sidecars' host ports count, plain init containers' do not (GetHostPorts)"),
    ],
)
def test_host_ports(p, ports):
    assert p.host_ports == ports


def test_pod_facts_in_one_place():
    p = make_pod("web", "shop", node="node-a", volumes=[{"name": "cache", "emptyDir": {}}], ready=False)
    assert (p.key, p.name, p.namespace, p.node_name) == ("shop/web", "web", "shop", "node-a")
    assert p.has_empty_dir
    assert not p.is_ready
    assert not p.is_finished
    assert make_pod(node="node-a").is_ready
    assert not make_pod().has_empty_dir


def test_derived_facts_are_not_serialised():
    p = make_pod(cpu="1", memory="1Gi")
    encoded = msgspec.json.decode(msgspec.json.encode(p))
    assert encoded["kind"] == "Pod"
    for derived in ("requests", "qos", "key", "effectivePriority", "controller"):
        assert derived not in encoded
    assert msgspec.json.decode(msgspec.json.encode(p), type=Pod) == p


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param({"metadata": {}}, "metadata.name is required", id="a pod without a name"),
        pytest.param({"metadata": {"name": "p"},
                      "spec": {"containers": [container("main", req={"cpu": "lots"})]}},
                     "spec.containers[main].resources.requests.cpu: invalid quantity 'lots'",
                     id="an invalid request names the container and the field"),
        pytest.param({"metadata": {"name": "p"},
                      "spec": {"initContainers": [container("setup", lim={"memory": "1GB"})]}},
                     "spec.initContainers[setup].resources.limits.memory: invalid quantity '1GB'",
                     id="an invalid init container limit"),
        pytest.param({"metadata": {"name": "p"}, "spec": {"overhead": {"cpu": "x"}}}, "spec.overhead.cpu",
                     id="an invalid overhead"),
        pytest.param({"metadata": {"name": "p"}, "spec": {"resources": {"limits": {"memory": "-1Gi"}}}},
                     "spec.resources.limits.memory: must be greater than or equal to 0",
                     id="a negative amount fails as API validation fails it"),
    ],
)
def test_invalid_pods_are_rejected_with_the_field(raw, message):
    with pytest.raises(msgspec.ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        msgspec.convert(raw, Pod)


# -- nodes ---------------------------------------------------------------------------------------------

def _node(status: dict[str, Any]) -> Node:
    return msgspec.convert({"metadata": {"name": "n"}, "status": status}, Node)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        pytest.param({"allocatable": {"cpu": "3920m", "memory": "15Gi", "pods": "110", "ephemeral-storage": "95Gi",
                                      "hugepages-1Gi": "0", "nvidia.com/gpu": "4"}},
                     Resources(3920, 15 * GI, 95 * GI, {"hugepages-1Gi": 0, "nvidia.com/gpu": 4}, 110),
                     id="allocatable in the scheduler's units"),
        pytest.param({"allocatable": {"cpu": "1926227828m", "memory": "16159576Ki"}},
                     Resources(1926227828, 16159576 * 1024), id="kubelet-style odd amounts"),
        pytest.param({"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}, Resources(4000, 16 * GI, 0, {}, 110),
                     id="without allocatable, capacity is used"),
        pytest.param({"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3500m"}}, Resources(3500),
                     id="allocatable wins over capacity"),
        pytest.param({}, Resources(), id="a node with no resources has none"),
    ],
)
def test_node_allocatable(status, expected):
    assert _node(status).allocatable == expected


def test_make_node_builder_agrees():
    n = make_node(cpu="2", memory="4Gi", pods=10)
    assert (n.allocatable.milli_cpu, n.allocatable.memory, n.allocatable.allowed_pods) == (2000, 4 * GI, 10)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        pytest.param({"allocatable": {"cpu": "four"}}, r"status\.allocatable\.cpu: invalid quantity 'four'",
                     id="an invalid allocatable"),
        pytest.param({"capacity": {"memory": "1Gi", "pods": "-1"}}, r"status\.capacity\.pods: must be greater",
                     id="a negative capacity"),
    ],
)
def test_invalid_nodes_are_rejected_with_the_field(status, message):
    with pytest.raises(msgspec.ValidationError, match=message):
        _node(status)


# -- PodDisruptionBudget validation ----------------------------------------------------------------------

def _pdb(**spec: Any) -> PodDisruptionBudget:
    return msgspec.convert({"metadata": {"name": "b", "namespace": "ns"}, "spec": spec}, PodDisruptionBudget)


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"minAvailable": 0}, id="minAvailable 0"),
        pytest.param({"minAvailable": 3}, id="minAvailable 3"),
        pytest.param({"minAvailable": "50%"}, id="minAvailable 50%"),
        pytest.param({"maxUnavailable": "0%"}, id="maxUnavailable 0%"),
        pytest.param({"maxUnavailable": "100%"}, id="maxUnavailable 100%"),
        pytest.param({}, id="neither"),
    ],
)
def test_valid_pdb_budgets(spec):
    assert _pdb(**spec).spec.min_available == spec.get("minAvailable")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param({"minAvailable": "50"}, "must be an integer or a percentage", id="a number in a string"),
        pytest.param({"minAvailable": "half"}, "must be an integer or a percentage", id="a word"),
        pytest.param({"minAvailable": "５０%"}, "must be an integer or a percentage", id="non-ASCII digits"),
        pytest.param({"maxUnavailable": "-1%"}, "must be an integer or a percentage", id="a negative percentage"),
        pytest.param({"maxUnavailable": "101%"}, "must not be greater than 100%", id="more than 100%"),
        pytest.param({"minAvailable": -1}, "must be greater than or equal to 0", id="a negative integer"),
        pytest.param({"minAvailable": 1, "maxUnavailable": 1}, "cannot be both set", id="both set"),
        pytest.param({"minAvailable": True}, "Expected `int | str | null`, got `bool`", id="a boolean"),
    ],
)
def test_invalid_pdb_budgets_are_rejected(spec, message):
    with pytest.raises(msgspec.ValidationError, match=message.replace("|", r"\|")):
        _pdb(**spec)


# -- label selectors (LabelSelectorAsSelector + Matches) -------------------------------------------------

def sel(match_labels: dict[str, str] | None = None, *exprs: tuple[str, str, list[str]]) -> LabelSelector:
    return msgspec.convert({"matchLabels": match_labels or {},
                            "matchExpressions": [{"key": k, "operator": op, "values": v} for k, op, v in exprs]},
                           LabelSelector)


LABELS = {"app": "web", "tier": "frontend"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        pytest.param(None, False, id="a nil selector matches nothing"),
        pytest.param(sel(), True, id="an empty selector matches everything"),
        pytest.param(sel({"app": "web"}), True, id="matchLabels equal"),
        pytest.param(sel({"app": "db"}), False, id="matchLabels differ"),
        pytest.param(sel({"zone": ""}), False, id="matchLabels with an absent key"),
        pytest.param(sel(None, ("tier", "In", ["frontend", "backend"])), True, id="In"),
        pytest.param(sel(None, ("tier", "In", ["backend"])), False, id="In, other value"),
        pytest.param(sel(None, ("zone", "In", ["a"])), False, id="In, absent key"),
        pytest.param(sel(None, ("tier", "NotIn", ["backend"])), True, id="NotIn"),
        pytest.param(sel(None, ("tier", "NotIn", ["frontend"])), False, id="NotIn, listed value"),
        pytest.param(sel(None, ("zone", "NotIn", ["a"])), True, id="NotIn matches an absent key"),
        pytest.param(sel(None, ("app", "Exists", [])), True, id="Exists"),
        pytest.param(sel(None, ("zone", "Exists", [])), False, id="Exists, absent key"),
        pytest.param(sel(None, ("zone", "DoesNotExist", [])), True, id="DoesNotExist"),
        pytest.param(sel(None, ("app", "DoesNotExist", [])), False, id="DoesNotExist, present key"),
        pytest.param(sel({"app": "web"}, ("tier", "In", ["frontend"]), ("zone", "DoesNotExist", [])), True,
                     id="everything is ANDed"),
        pytest.param(sel({"app": "web"}, ("tier", "In", ["backend"])), False, id="one failing requirement fails all"),
        pytest.param(sel(None, ("tier", "In", [])), False, id="In without values is invalid: nothing"),
        pytest.param(sel(None, ("zone", "NotIn", [])), False, id="NotIn without values is invalid: nothing"),
        pytest.param(sel(None, ("app", "Exists", ["web"])), False, id="Exists with values is invalid: nothing"),
        pytest.param(sel(None, ("zone", "DoesNotExist", ["x"])), False, id="DoesNotExist with values is invalid"),
        pytest.param(sel(None, ("zone", "NotIn", ["not a label value"])), False,
                     id="a value that is not a valid label value is invalid"),
        pytest.param(sel(None, ("tier", "Gt", ["1"])), False, id="Gt is no label selector operator"),
        pytest.param(sel(None, ("tier", "in", ["frontend"])), False, id="operators are case-sensitive"),
    ],
)
def test_label_selectors(selector, matches):
    assert label_selector_matches(selector, LABELS) is matches


# -- node selector requirements and terms (nodeaffinity) -------------------------------------------------

def req(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=op, values=tuple(values))


@pytest.mark.parametrize(
    ("requirement", "value", "matches"),
    [
        pytest.param(req("zone", "In", "a", "b"), "a", True, id="In"),
        pytest.param(req("zone", "In", "a"), None, False, id="In, absent"),
        pytest.param(req("zone", "NotIn", "a"), "b", True, id="NotIn"),
        pytest.param(req("zone", "NotIn", "a"), None, True, id="NotIn, absent"),
        pytest.param(req("zone", "NotIn", "a"), "a", False, id="NotIn, listed"),
        pytest.param(req("zone", "Exists"), "", True, id="Exists, empty value"),
        pytest.param(req("zone", "Exists"), None, False, id="Exists, absent"),
        pytest.param(req("zone", "DoesNotExist"), None, True, id="DoesNotExist"),
        pytest.param(req("zone", "DoesNotExist"), "a", False, id="DoesNotExist, present"),
        pytest.param(req("cores", "Gt", "4"), "8", True, id="Gt"),
        pytest.param(req("cores", "Gt", "8"), "8", False, id="Gt is strict"),
        pytest.param(req("cores", "Lt", "8"), "4", True, id="Lt"),
        pytest.param(req("cores", "Lt", "4"), "8", False, id="Lt, larger"),
        pytest.param(req("cores", "Gt", "4"), None, False, id="Gt, absent"),
        pytest.param(req("cores", "Gt", "4"), "eight", False, id="Gt, not an integer"),
        pytest.param(req("cores", "Gt", "4"), "+8", True, id="Gt, a signed integer parses (strconv.ParseInt)"),
        pytest.param(req("cores", "Gt", "4"), " 8", False, id="Gt, whitespace does not parse"),
        pytest.param(req("cores", "Gt", "4"), "８", False, id="Gt, non-ASCII digits do not parse"),
        pytest.param(req("cores", "Gt", "4"), "1_000", False, id="Gt, underscores do not parse"),
        pytest.param(req("cores", "Gt", "4"), "9223372036854775808", False, id="Gt, beyond int64 does not parse"),
        pytest.param(req("cores", "Gt", "4", "5"), "8", False, id="Gt needs exactly one value"),
        pytest.param(req("cores", "Gt", "four"), "8", False, id="Gt with a value that is no integer"),
        pytest.param(req("zone", "In"), "a", False, id="In without values is invalid"),
        pytest.param(req("zone", "NotIn"), "a", False, id="NotIn without values is invalid"),
        pytest.param(req("zone", "Exists", "a"), "a", False, id="Exists with values is invalid"),
        pytest.param(req("zone", "Equals", "a"), "a", False, id="an unknown operator matches nothing"),
    ],
)
def test_node_selector_requirements(requirement, value, matches):
    assert node_requirement_matches(requirement, value) is matches


def term(exprs: tuple[NodeSelectorRequirement, ...] = (), fields: tuple[NodeSelectorRequirement, ...] = ()):
    return NodeSelectorTerm(match_expressions=exprs, match_fields=fields)


NODE_LABELS = {"zone": "a", "disk": "ssd"}


@pytest.mark.parametrize(
    ("t", "matches"),
    [
        pytest.param(term(), False, id="an empty term matches no node"),
        pytest.param(term((req("zone", "In", "a"), req("disk", "In", "ssd"))), True, id="expressions are ANDed"),
        pytest.param(term((req("zone", "In", "a"), req("disk", "In", "hdd"))), False, id="one failing fails the term"),
        pytest.param(term(fields=(req("metadata.name", "In", "node-a"),)), True, id="matchFields metadata.name In"),
        pytest.param(term(fields=(req("metadata.name", "NotIn", "node-a"),)), False, id="matchFields NotIn"),
        pytest.param(term(fields=(req("metadata.name", "In", "node-a", "node-b"),)), False,
                     id="matchFields needs exactly one value"),
        pytest.param(term(fields=(req("metadata.name", "Exists"),)), False, id="matchFields allows In/NotIn only"),
        pytest.param(term((req("zone", "In", "a"),), (req("metadata.name", "In", "node-a"),)), True,
                     id="expressions and fields together"),
    ],
)
def test_node_selector_terms(t, matches):
    assert node_selector_term_matches(t, "node-a", NODE_LABELS) is matches


@pytest.mark.parametrize("source", ["demo", "tests/fixtures/rig-gang/gang-3-preempts-three/snapshot.json",
                                    "tests/fixtures/rig-dra/shared-claim/snapshot.json"])
def test_a_pod_bound_is_the_pod_built_again_with_its_node_phase_and_labels(source):
    """`Pod.bound` carries over what `__post_init__` found instead of finding it again: every
    recorded pod, bound, is what building it with the same changes gives — fields and derived
    facts alike — and facts found later (cached on first use) are found again for the bound pod."""
    from kresched.sources.snapshot import load_snapshot

    warned = msgspec.convert({"metadata": {"name": "w", "namespace": "ns"},
                              "spec": {"terminationGracePeriodSeconds": -5, "containers": [{"name": "c"}]}}, Pod)
    assert warned.warnings  # (kept by `__post_init__` only where there are some)
    pods = [*load_snapshot(source).pods, warned]
    for p in pods:
        _ = p.importance  # cached on the pod: not the bound pod's until it asks
        for labels in (None, {**p.labels, "topology.kubernetes.io/zone": "z9"}):
            got = p.bound("node-z", labels)
            meta = p.metadata if labels is None else msgspec.structs.replace(p.metadata, labels=labels)
            want = msgspec.structs.replace(p, metadata=meta, spec=msgspec.structs.replace(p.spec, node_name="node-z"),
                                           status=msgspec.structs.replace(p.status, phase="Running",
                                                                          nominated_node_name=""))
            assert got == want
            assert got.__dict__ == want.__dict__  # (the derived facts; nothing cached yet)
            assert (got.node_name, got.status.phase, got.importance) == ("node-z", "Running", want.importance)
