"""Objects the API server's validation would refuse are refused in snapshots too: one line naming
the file, the object, the field and the rule, exit 2 — and from a live server they are never acted
upon (exit 5). Rules and wording from kubernetes `pkg/apis/core/validation` (validateTolerations,
ValidateNodeSelectorRequirement, ValidateNodeFieldSelectorRequirement,
validateTopologySpreadConstraints, validateContainerPorts), `pkg/apis/scheduling/validation`
(ValidatePriorityClass) and apimachinery's ValidateLabelSelectorRequirement.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kresched.errors import ExitCode
from kresched.sources.decode import decode_json
from tests.clirun import run_cli


def pod(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "web", "namespace": "shop"},
                            "spec": {"containers": [{"name": "main", "image": "nginx"}]}}
    base["spec"].update(copy.deepcopy(spec))
    return base


def node_term(*exprs: dict[str, Any], fields: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = list(exprs)
    if fields:
        term["matchFields"] = list(fields)
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


NA = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"

CASES = [
    pytest.param(pod(priority=2**31), "Pod shop/web: spec.priority: 2147483648 is out of the int32 range "
                 "(-2147483648 to 2147483647)", id="a pod priority beyond int32"),
    pytest.param(pod(terminationGracePeriodSeconds=2**63), "Pod shop/web: spec.terminationGracePeriodSeconds: "
                 "9223372036854775808 is out of the int64 range", id="a grace period beyond int64"),
    pytest.param(pod(affinity=node_term({"key": "zone", "operator": "Near", "values": ["a"]})),
                 f'Pod shop/web: {NA}.matchExpressions[0].operator: Invalid value: "Near": not a valid selector '
                 "operator", id="an unknown node affinity operator"),
    pytest.param(pod(affinity=node_term({"key": "cores", "operator": "Lt", "values": ["1", "2"]})),
                 f"Pod shop/web: {NA}.matchExpressions[0].values: Required value: must be specified single value "
                 "when `operator` is 'Lt' or 'Gt'", id="Lt with two values"),
    pytest.param(pod(affinity=node_term({"key": "zone", "operator": "In"})),
                 f"Pod shop/web: {NA}.matchExpressions[0].values: Required value: must be specified when "
                 "`operator` is 'In' or 'NotIn'", id="In without values"),
    pytest.param(pod(affinity=node_term(fields=({"key": "metadata.name", "operator": "In", "values": ["a", "b"]},))),
                 f"Pod shop/web: {NA}.matchFields[0].values: Required value: must be only one value when "
                 "`operator` is 'In' or 'NotIn' for node field selector", id="matchFields with two names"),
    pytest.param(pod(affinity=node_term(fields=({"key": "metadata.uid", "operator": "In", "values": ["a"]},))),
                 f'Pod shop/web: {NA}.matchFields[0].key: Invalid value: "metadata.uid": not a valid field '
                 "selector key", id="matchFields on another field"),
    pytest.param(pod(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "zone", "labelSelector": {"matchExpressions": [
            {"key": "app", "operator": "Exists", "values": ["web"]}]}}]}}),
        "Pod shop/web: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".labelSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' "
        "or 'DoesNotExist'", id="a pod anti-affinity selector with Exists and values"),
    pytest.param(pod(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}}]}}),
        "Pod shop/web: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: "
        "Required value: can not be empty", id="a pod affinity term without a topology key"),
    pytest.param(pod(tolerations=[{"key": "gpu", "operator": "Matches", "value": "x"}]),
                 'Pod shop/web: spec.tolerations[0].operator: Unsupported value: "Matches": supported values: '
                 '"Equal", "Exists", "Lt", "Gt"', id="an unknown toleration operator"),
    pytest.param(pod(tolerations=[{"key": "gpu", "operator": "Exists", "value": "x"}]),
                 "Pod shop/web: spec.tolerations[0].operator: Invalid value: \"x\": value must be empty when "
                 "`operator` is 'Exists'", id="an Exists toleration with a value"),
    pytest.param(pod(tolerations=[{"operator": "Equal", "value": "x"}]),
                 'Pod shop/web: spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when '
                 '`key` is empty, which means "match all values and all keys"', id="a keyless Equal toleration"),
    pytest.param(pod(tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule",
                                   "tolerationSeconds": 30}]),
                 "Pod shop/web: spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be "
                 "'NoExecute' when `tolerationSeconds` is set", id="tolerationSeconds without NoExecute"),
    pytest.param(pod(topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "zone",
                                                 "whenUnsatisfiable": "DoNotSchedule"}]),
                 "Pod shop/web: spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than "
                 "zero", id="maxSkew zero"),
    pytest.param(pod(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone",
                                                 "whenUnsatisfiable": "Sometimes"}]),
                 'Pod shop/web: spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: '
                 '"Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"', id="an unknown whenUnsatisfiable"),
    pytest.param(pod(containers=[{"name": "main", "ports": [{"containerPort": 80, "hostPort": 70000}]}]),
                 "Pod shop/web: spec.containers[main].ports[0].hostPort: Invalid value: 70000: must be between 1 "
                 "and 65535, inclusive", id="a host port out of range"),
    pytest.param(pod(containers=[{"name": "main", "ports": [{"containerPort": 0}]}]),
                 "Pod shop/web: spec.containers[main].ports[0].containerPort: Invalid value: 0: must be between 1 "
                 "and 65535, inclusive", id="a container port of zero"),
    pytest.param(pod(hostNetwork=True, containers=[{"name": "main", "ports": [{"containerPort": 80,
                                                                              "hostPort": 8080}]}]),
                 "Pod shop/web: spec.containers[main].ports[0].hostPort: Invalid value: 8080: must match "
                 "`containerPort` when `hostNetwork` is true", id="hostNetwork with a different host port"),
    pytest.param(pod(containers=[]), "Pod shop/web: spec.containers: Required value",
                 id="a pod without containers (it would fit anywhere, requesting nothing)"),
    pytest.param({**pod(), "spec": None}, "Pod shop/web: spec.containers: Required value",
                 id="a pod with spec: null (Go reads an empty spec: no containers)"),
    pytest.param({k: v for k, v in pod().items() if k != "spec"}, "Pod shop/web: spec.containers: Required value",
                 id="a pod without spec"),
    pytest.param(pod(containers=None), "Pod shop/web: spec.containers: Required value",
                 id="a pod with containers: null"),
    pytest.param({"kind": "PriorityClass", "metadata": {"name": "huge"}, "value": 2_000_000_000},
                 "PriorityClass huge: value: Forbidden: maximum allowed value of a user defined priority is "
                 "1000000000", id="a user PriorityClass above one billion"),
    pytest.param({"kind": "PriorityClass", "metadata": {"name": "system-custom"}, "value": 5},
                 "PriorityClass system-custom: metadata.name: Forbidden: priority class names with 'system-' prefix "
                 "are reserved for system use only. error: system-custom is not a known system priority class",
                 id="a system- PriorityClass that is not one of the two"),
    pytest.param({"kind": "PriorityClass", "metadata": {"name": "low"}, "value": -(2**31) - 1},
                 "PriorityClass low: value: -2147483649 is out of the int32 range (-2147483648 to 2147483647)",
                 id="a PriorityClass value beyond int32"),
    pytest.param({"kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "shop"},
                  "spec": {"minAvailable": 1, "selector": {"matchExpressions": [
                      {"key": "app", "operator": "Is", "values": ["web"]}]}}},
                 'PodDisruptionBudget shop/web: spec.selector.matchExpressions[0].operator: Unsupported value: '
                 '"Is": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
                 id="a PDB selector with an unknown operator (it would match nothing: pods look unprotected)"),
    pytest.param({"kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "shop"},
                  "spec": {"minAvailable": 1, "selector": {"matchExpressions": [
                      {"key": "app", "operator": "Exists", "values": ["web"]}]}}},
                 "PodDisruptionBudget shop/web: spec.selector.matchExpressions[0].values: Forbidden: may not be "
                 "specified when `operator` is 'Exists' or 'DoesNotExist'", id="a PDB selector with Exists and values"),
    pytest.param(pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "c", "resourceClaimTemplateName": "t"}]),
                 'Pod shop/web: spec.resourceClaims[0]: Invalid value: {"Name":"gpu","ResourceClaimName":"c",'
                 '"ResourceClaimTemplateName":"t"}: at most one of `resourceClaimName` or `resourceClaimTemplateName` '
                 "may be specified", id="a pod claim naming both a claim and a template"),
    pytest.param(pod(resourceClaims=[{"name": "gpu"}]),
                 'Pod shop/web: spec.resourceClaims[0]: Invalid value: {"Name":"gpu","ResourceClaimName":null,'
                 '"ResourceClaimTemplateName":null}: must specify one of: `resourceClaimName`, '
                 "`resourceClaimTemplateName`", id="a pod claim naming neither"),
    pytest.param(pod(resourceClaims=[{"resourceClaimName": "c"}]),
                 "Pod shop/web: spec.resourceClaims[0].name: Required value", id="a pod claim without a name"),
    pytest.param(pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "c"},
                                     {"name": "gpu", "resourceClaimTemplateName": "t"}]),
                 'Pod shop/web: spec.resourceClaims[1].name: Duplicate value: "gpu"', id="two pod claims of one name"),
    pytest.param({"kind": "Node", "metadata": {"name": "n1"}, "spec": {"taints": [{"key": "gpu",
                                                                                   "effect": "Sometimes"}]}},
                 'Node n1: spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
                 '"PreferNoSchedule", "NoExecute"', id="a node taint with an unknown effect"),
]


@pytest.mark.parametrize(("obj", "expected"), CASES)
def test_an_object_the_api_server_would_refuse_is_refused_in_one_line(monkeypatch, tmp_path, obj, expected):
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [obj]}))
    result = run_cli(monkeypatch, "plan", "--snapshot", str(path), "-o", "json")
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr.splitlines() == [f"error: {path}: {expected}"]


def test_the_same_objects_in_yaml_are_refused_the_same_way(monkeypatch, tmp_path):
    path = tmp_path / "snapshot.yaml"
    path.write_text("kind: Pod\nmetadata: {name: web, namespace: shop}\nspec:\n  priority: 2147483648\n")
    result = run_cli(monkeypatch, "plan", "--snapshot", str(path), "-o", "json")
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr.splitlines() == [f"error: {path}: Pod shop/web: spec.priority: 2147483648 is out of the "
                                          "int32 range (-2147483648 to 2147483647)"]


def test_an_object_a_live_server_returns_that_fails_validation_is_never_acted_upon(fake_api, fake_kubeconfig,
                                                                                   monkeypatch):
    fake_api.load(pod(tolerations=[{"key": "gpu", "operator": "Matches"}]))
    result = run_cli(monkeypatch, "preempt", "--pod", "shop/web", "--yes", "--kubeconfig", str(fake_kubeconfig))
    assert result.exit_code == ExitCode.CLUSTER_ACCESS
    assert result.stderr.startswith("error: the API server sent an object kresched cannot use: ")
    assert "Pod shop/web: spec.tolerations[0].operator: Unsupported value" in result.stderr
    assert not fake_api.calls(method="PATCH")
    assert not fake_api.calls(method="POST")


def test_a_pod_without_containers_from_a_live_server_is_never_acted_upon(fake_api, fake_kubeconfig, monkeypatch):
    """No API server stores one; should something serve it, kresched does not plan it as a pod that
    fits anywhere (it would request nothing)."""
    fake_api.load({**pod(), "spec": None})
    result = run_cli(monkeypatch, "explain", "--pod", "shop/web", "--kubeconfig", str(fake_kubeconfig))
    assert result.exit_code == ExitCode.CLUSTER_ACCESS
    assert result.stderr.startswith("error: the API server sent an object kresched cannot use: ")
    assert result.stderr.rstrip().endswith("Pod shop/web: spec.containers: Required value")


def test_a_pod_without_containers_in_yaml_is_refused_the_same_way(monkeypatch, tmp_path):
    path = tmp_path / "snapshot.yaml"
    path.write_text("kind: Pod\nmetadata: {name: web, namespace: shop}\nspec: null\n")
    for command in (("plan", "--pod", "shop/web"), ("explain", "--pod", "shop/web")):
        result = run_cli(monkeypatch, *command, "--snapshot", str(path))
        assert result.exit_code == ExitCode.USAGE
        assert result.stderr.splitlines() == [f"error: {path}: Pod shop/web: spec.containers: Required value"]


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


#: Legal objects (the API server accepts them, with a warning at most): never refused; where they make
#: no sense to plan with, kresched plans around them and says so on stderr, once.
LEGAL = [
    pytest.param(pod(terminationGracePeriodSeconds=-1),
                 ["warning: Pod shop/web: spec.terminationGracePeriodSeconds: -1 is negative; the API server treats "
                  "it as 1"], id="a negative grace period (pkg/api/pod/warnings.go: treated as 1)"),
    pytest.param(pod(affinity=node_term({"key": "cores", "operator": "Gt", "values": ["many"]})),
                 [f'warning: Pod shop/web: {NA}.matchExpressions[0]'
                  '.values[0]: "many" is not an integer, so kube-scheduler matches no node with this term'],
                 id="Gt with a label value that is not an integer (ValidateNodeSelectorRequirement: one label value)"),
    pytest.param(pod(hostNetwork=True, initContainers=[{"name": "init", "ports": [{"containerPort": 80,
                                                                                   "hostPort": 8080}]}]),
                 [], id="hostNetwork with a different host port on an init container (the rule is for containers)"),
    pytest.param(pod(containers=[{"name": "main", "ports": [{"containerPort": 80, "protocol": ""}]}]),
                 [], id="an empty port protocol (defaulted to TCP)"),
]


@pytest.mark.parametrize(("obj", "warnings"), LEGAL)
def test_an_object_the_api_server_accepts_is_never_refused(monkeypatch, tmp_path, obj, warnings):
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("n1"), obj]}))
    result = run_cli(monkeypatch, "explain", "shop/web", "--snapshot", str(path), "-o", "json")
    assert result.exit_code == ExitCode.OK, result.stderr
    assert result.stderr.splitlines() == warnings
    json.loads(result.stdout)


@pytest.mark.parametrize("claims", [
    [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
    [{"name": "gpu", "resourceClaimName": "shared-gpu"}],
    [{"name": "gpu", "resourceClaimName": None, "resourceClaimTemplateName": "one-gpu"}],  # null: not set
    [{"name": "gpu", "resourceClaimName": ""}],  # set: the server refuses it for the syntax kresched never checks
    [{"name": "a", "resourceClaimName": "c"}, {"name": "b", "resourceClaimTemplateName": "t"}],
], ids=["from a template", "a claim by name", "a null claim name beside a template", "an empty claim name",
        "two entries"])
def test_pod_claims_the_api_server_accepts_are_read(claims):
    obj = pod(resourceClaims=claims)
    (read,) = decode_json(json.dumps(obj).encode(), "t").pods
    assert [c.name for c in read.spec.resource_claims] == [c["name"] for c in claims]


def test_a_required_term_the_scheduler_cannot_parse_matches_no_node(monkeypatch, tmp_path):
    """`LazyErrorNodeSelector`: the term with `Gt many` never matches; the other term still can."""
    bad = {"key": "cores", "operator": "Gt", "values": ["many"]}
    good = {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n2"]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [bad]}, {"matchExpressions": [good]}]}}}
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": [node("n1", cores="8"), node("n2", cores="8"), pod(affinity=affinity)]}))
    result = run_cli(monkeypatch, "explain", "shop/web", "--snapshot", str(path), "-o", "json")
    out = json.loads(result.stdout)
    assert out["nodes"] == {"n1": ["node(s) didn't match Pod's node affinity/selector"], "n2": []}
    assert len(result.stderr.splitlines()) == 1


def test_warnings_for_many_objects_are_counted_not_listed(monkeypatch, tmp_path):
    pods = []
    for i in range(8):
        p = pod(terminationGracePeriodSeconds=-5)
        p["metadata"]["name"] = f"web-{i}"
        pods.append(p)
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("n1"), *pods]}))
    result = run_cli(monkeypatch, "explain", "shop/web-0", "--snapshot", str(path), "-o", "json")
    assert result.exit_code == ExitCode.OK
    lines = result.stderr.splitlines()
    assert len(lines) == 6
    assert lines[-1] == "warning: and 3 more such objects"
