"""The API server's treatment of a new pod, as a what-if needs it (`kresched.sources.admission`).

Upstream's own tables: the Priority admission plugin's `TestPodAdmission` and `TestDefaultPriority`
(plugin/pkg/admission/priority/admission_test.go, the rows about creating a pod), the
DefaultTolerationSeconds plugin's `TestForgivenessAdmission`
(plugin/pkg/admission/defaulttolerationseconds/admission_test.go), and the v1 defaulting tests that
decide what the scheduler reads (pkg/apis/core/v1/defaults_test.go: `TestSetDefaultRequestsPod`,
`TestPodHostNetworkDefaults`, `TestSetDefaultSchedulerName`, `TestSetDefaults_Volume`, the protocol
and grace-period defaults of `TestPodDefaults`).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kresched.model.objects import PriorityClass
from kresched.sources.admission import (
    Forbidden,
    admit_default_tolerations,
    admit_priority,
    default_pod,
    stored_pod,
)
from tests.builders import make_priority_class

DEFAULT1 = make_priority_class("default1", 1000, global_default=True)
DEFAULT2 = make_priority_class("default2", 2000, global_default=True)
NONDEFAULT1 = make_priority_class("nondefault1", 2000)
#: Upstream's fixture also marks it globalDefault, which the API server's validation refuses (and
#: kresched's model with it); no row below depends on it.
SYSTEM_CLUSTER_CRITICAL = make_priority_class("system-cluster-critical", 2_000_000_000)
NEVER_CLASS = make_priority_class("nopreemptionpolicy", 2000, global_default=True, preemption_policy="Never")
LOWER_CLASS = make_priority_class("nopreemptionpolicy", 2000, global_default=True,
                                  preemption_policy="PreemptLowerPriority")


def _pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "namespace"},
            "spec": {"containers": [{"name": "container"}], **spec}}


def _classes(*cs: PriorityClass) -> dict[str, PriorityClass]:
    return {c.name: c for c in cs}


# -- Priority ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "classes", "spec", "priority", "policy"), [
    ("Pod with priority class", [DEFAULT1, NONDEFAULT1], {"priorityClassName": "default1"}, 1000, None),
    ("Pod without priority class", [DEFAULT1], {}, 1000, None),
    ("pod without priority class and no existing priority class", [], {}, 0, "PreemptLowerPriority"),
    ("pod without priority class and no default class", [NONDEFAULT1], {}, 0, "PreemptLowerPriority"),
    ("pod with a system priority class", [SYSTEM_CLUSTER_CRITICAL], {"priorityClassName": "system-cluster-critical"},
     2_000_000_000, None),
    ("pod with system critical priority in non-system namespace", [SYSTEM_CLUSTER_CRITICAL],
     {"priorityClassName": "system-cluster-critical"}, 2_000_000_000, None),
    ("pod with priority that matches computed priority", [NONDEFAULT1], {"priority": 0}, 0, None),
    ("pod with priority that matches default priority", [DEFAULT2], {"priority": 2000}, 2000, None),
    ("pod with priority that matches resolved priority", [SYSTEM_CLUSTER_CRITICAL],
     {"priorityClassName": "system-cluster-critical", "priority": 2_000_000_000}, 2_000_000_000, None),
    ("pod with nil preemtpion policy", [NEVER_CLASS], {"priorityClassName": "nopreemptionpolicy", "priority": 2000},
     2000, "Never"),
    ("pod with preemtpion policy that matches resolved preemtpion policy", [LOWER_CLASS],
     {"priorityClassName": "nopreemptionpolicy", "priority": 2000, "preemptionPolicy": "PreemptLowerPriority"},
     2000, "PreemptLowerPriority"),
    # kresched: the system classes exist in every cluster even when a snapshot does not list them.
    ("a system class the snapshot does not list still resolves", [], {"priorityClassName": "system-node-critical"},
     2_000_001_000, "PreemptLowerPriority"),
])
def test_the_priority_admission_plugin_resolves_the_pods_priority(name, classes, spec, priority, policy):
    doc = _pod(**spec)
    admit_priority(doc, _classes(*classes))
    assert doc["spec"]["priority"] == priority
    if policy is not None:
        assert doc["spec"]["preemptionPolicy"] == policy


@pytest.mark.parametrize(("name", "classes", "spec", "error"), [
    ("Pod with non-existing priority class", [DEFAULT1, NONDEFAULT1], {"priorityClassName": "non-existing"},
     "no PriorityClass with name non-existing was found"),
    ("pod with integer priority", [], {"priorityClassName": "default1", "priority": 1000},
     "no PriorityClass with name default1 was found"),
    ("a priority the class does not give", [DEFAULT1], {"priorityClassName": "default1", "priority": 1001},
     "the integer value of priority (1001) must not be provided in pod spec; priority admission controller "
     "computed 1000 from the given PriorityClass name"),
    ("pod with preemtpion policy that does't matches resolved preemtpion policy", [LOWER_CLASS],
     {"priorityClassName": "nopreemptionpolicy", "priority": 2000, "preemptionPolicy": "Never"},
     "the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller "
     "computed PreemptLowerPriority from the given PriorityClass name"),
])
def test_the_priority_admission_plugin_refuses_the_pod(name, classes, spec, error):
    with pytest.raises(Forbidden) as exc:
        admit_priority(_pod(**spec), _classes(*classes))
    assert str(exc.value) == error


@pytest.mark.parametrize(("name", "classes", "priority", "class_name"), [
    ("simple resolution with a default class", [DEFAULT1], 1000, "default1"),
    ("multiple default classes resolves to the minimum value among them", [DEFAULT1, DEFAULT2], 1000, "default1"),
    ("no default class", [NONDEFAULT1], 0, ""),
])
def test_a_pod_without_a_class_gets_the_global_default(name, classes, priority, class_name):
    doc = _pod()
    admit_priority(doc, _classes(*classes))
    assert (doc["spec"]["priority"], doc["spec"]["priorityClassName"]) == (priority, class_name)


# -- DefaultTolerationSeconds --------------------------------------------------------------------------

NOT_READY_300 = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                 "tolerationSeconds": 300}
UNREACHABLE_300 = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                   "tolerationSeconds": 300}


@pytest.mark.parametrize(("description", "tolerations", "expected"), [
    ("pod has no tolerations, expect add tolerations for `not-ready:NoExecute` and `unreachable:NoExecute`",
     [], [NOT_READY_300, UNREACHABLE_300]),
    ("pod has tolerations, but none is for taint `not-ready:NoExecute` or `unreachable:NoExecute`, expect add "
     "tolerations for `not-ready:NoExecute` and `unreachable:NoExecute`",
     [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule", "tolerationSeconds": 700}],
     [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule", "tolerationSeconds": 700},
      NOT_READY_300, UNREACHABLE_300]),
    ("pod specified a toleration for taint `not-ready:NoExecute`, expect add toleration for `unreachable:NoExecute`",
     [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 700}],
     [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 700},
      UNREACHABLE_300]),
    ("pod specified a toleration for taint `unreachable:NoExecute`, expect add toleration for `not-ready:NoExecute`",
     [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 700}],
     [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 700}, NOT_READY_300]),
    ("pod specified tolerations for both `not-ready:NoExecute` and `unreachable:NoExecute`, expect no change",
     [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 700},
      {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 700}],
     [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 700},
      {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 700}]),
    ("pod specified toleration for taint `unreachable`, expect add toleration for `not-ready:NoExecute`",
     [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 700}],
     [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 700}, NOT_READY_300]),
    ("pod has wildcard toleration for all kind of taints, expect no change",
     [{"operator": "Exists", "tolerationSeconds": 700}], [{"operator": "Exists", "tolerationSeconds": 700}]),
])
def test_default_toleration_seconds_adds_what_the_pod_does_not_tolerate(description, tolerations, expected):
    doc = _pod(tolerations=copy.deepcopy(tolerations))
    admit_default_tolerations(doc)
    assert doc["spec"]["tolerations"] == expected


# -- defaulting ------------------------------------------------------------------------------------------

def test_limits_default_the_requests_and_an_explicit_zero_request_is_kept():
    """TestSetDefaultRequestsPod: containers and init containers alike."""
    resources = {"requests": {"memory": "0"}, "limits": {"cpu": "100m", "memory": "1Gi"}}
    doc = default_pod(_pod(containers=[{"name": "c", "resources": copy.deepcopy(resources)}],
                           initContainers=[{"name": "i", "resources": copy.deepcopy(resources)}]))
    for group in ("containers", "initContainers"):
        assert doc["spec"][group][0]["resources"]["requests"] == {"memory": "0", "cpu": "100m"}


def test_without_limits_no_request_is_made_up():
    doc = default_pod(_pod(containers=[{"name": "c"}]))
    assert "resources" not in doc["spec"]["containers"][0]


@pytest.mark.parametrize(("host_network", "host_port"), [(False, None), (True, 12345)])
def test_with_host_network_a_ports_host_port_is_its_container_port(host_network, host_port):
    """TestPodHostNetworkDefaults."""
    doc = default_pod(_pod(hostNetwork=host_network,
                           containers=[{"name": "c", "ports": [{"containerPort": 12345, "protocol": "TCP"}]}]))
    assert doc["spec"]["containers"][0]["ports"][0].get("hostPort") == host_port


@pytest.mark.parametrize(("field", "given", "expected"), [
    ("schedulerName", None, "default-scheduler"),
    ("schedulerName", "my-scheduler", "my-scheduler"),
    ("terminationGracePeriodSeconds", None, 30),
    ("terminationGracePeriodSeconds", 0, 0),
    ("restartPolicy", None, "Always"),
    ("dnsPolicy", None, "ClusterFirst"),
    ("enableServiceLinks", None, True),
])
def test_the_pod_spec_defaults(field, given, expected):
    spec = {field: given} if given is not None else {}
    assert default_pod(_pod(**spec))["spec"][field] == expected


def test_a_port_without_protocol_is_tcp_and_a_volume_without_source_an_empty_dir():
    doc = default_pod(_pod(containers=[{"name": "c", "ports": [{"containerPort": 53}, {"containerPort": 53,
                                                                                      "protocol": "UDP"}]}],
                           volumes=[{"name": "scratch"}, {"name": "cfg", "configMap": {"name": "x"}}]))
    assert [p["protocol"] for p in doc["spec"]["containers"][0]["ports"]] == ["TCP", "UDP"]
    assert doc["spec"]["volumes"] == [{"name": "scratch", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "x"}}]


def test_the_stored_pod_is_what_the_scheduler_sees():
    pod = stored_pod(_pod(containers=[{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
                          volumes=[{"name": "scratch"}]), _classes(DEFAULT1), "test")
    assert (pod.priority, pod.spec.preemption_policy, pod.spec.scheduler_name) == (1000, "PreemptLowerPriority",
                                                                                    "default-scheduler")
    assert (pod.requests.milli_cpu, pod.requests.memory, pod.qos) == (1000, 1 << 30, "Guaranteed")
    assert pod.has_empty_dir
    assert [t.key for t in pod.spec.tolerations] == ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
