"""Every way an operator asks for a GPU gets the same answer, run in-process on the GPU example
(`examples/gpu-cluster.json`: two nodes with two GPUs each, every GPU held by a pod of priority 0;
its DeviceClass `gpu.example.com` names the extended resource `example.com/gpu`; `default/trainer`
asks for a GPU through a claim, `default/trainer-ext` as the extended resource):

1. an extended resource backed by a DeviceClass (its `extendedResourceName`, or the implicit
   `deviceclass.resource.kubernetes.io/<class>`) gets room as a claim does — `plan`, `plan -f`,
   `preempt -f` — and `explain` names who holds each device for it;
2. a bare Pod in `-f` gets its claims from their templates;
3. the ResourceClaimTemplates, ResourceClaims and DeviceClasses of the `-f` input are part of the
   what-if, and a template the pods name that neither holds is named;
4. `explain` says when kresched's own device freeing makes room, and gives the command;
5. every device fact the table shows is in the JSON and YAML;
6. a snapshot without a DRA kind a pod's answer depends on gives "cannot be known" (exit code 6,
   `missingKinds`), never "fits"; live, an empty list is the truth.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kresched.cli.common import ENV
from kresched.errors import ExitCode
from tests.clirun import Result, reset_env, run_cli

EXAMPLE = Path(__file__).parents[1] / "examples" / "gpu-cluster.json"
IMPLICIT = "deviceclass.resource.kubernetes.io/gpu.example.com"
EXPLICIT = "example.com/gpu"

Run = Callable[..., Result]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    def run(*args: str, stdin: bytes | None = None, width: int | None = None) -> Result:
        if stdin is not None:
            monkeypatch.setattr(ENV, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        return run_cli(monkeypatch, *args, width=width)

    yield run
    reset_env()


def example_items() -> list[dict[str, Any]]:
    return json.loads(EXAMPLE.read_bytes())["items"]


def write_snapshot(tmp_path: Path, items: list[dict[str, Any]], name: str = "cluster.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


def with_trainer_asking(tmp_path: Path, resource: str) -> str:
    """The example with `default/trainer` asking for `resource: 1` instead of its claim."""
    items = []
    for o in example_items():
        if o["kind"] == "ResourceClaim" and o["metadata"]["name"] == "trainer-gpu":
            continue
        if o["kind"] == "Pod" and o["metadata"]["name"] == "trainer":
            o["spec"].pop("resourceClaims")
            o["status"].pop("resourceClaimStatuses")
            o["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1", resource: "1"},
                                                       "limits": {resource: "1"}}
        items.append(o)
    return write_snapshot(tmp_path, items)


HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}


def bare_pod(name: str = "solo", resource: str | None = None, template: str | None = "one-gpu") -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "100m"}}}
    spec: dict[str, Any] = {"priorityClassName": "high", "containers": [container]}
    if resource is not None:
        container["resources"]["requests"][resource] = "1"
        container["resources"]["limits"] = {resource: "1"}
    if template is not None:
        container["resources"]["claims"] = [{"name": "gpu"}]
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def deployment(template: str, replicas: int = 2) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "train", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "train"}},
                     "template": {"metadata": {"labels": {"app": "train"}}, "spec": {
                         "priorityClassName": "high",
                         "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                         "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpu"}]}}],
                         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}]}}}}


def two_gpus(name: str = "two-gpus") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                "deviceClassName": "gpu.example.com", "count": 2}}]}}}}


def manifests(tmp_path: Path, *docs: dict[str, Any], name: str = "gpu.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def devices_of(plan: dict[str, Any]) -> list[str]:
    return [f"{d['driver']}/{d['pool']}/{d['device']}" for d in plan["devices"]]


# -- 1. an extended resource gets room as a claim does ----------------------------------------------

def test_the_claim_the_implicit_name_and_the_extended_resource_name_get_the_same_eviction_plan(cli, tmp_path):
    claim = json.loads(cli("plan", "default/trainer", "--snapshot", str(EXAMPLE), "-o", "json").stdout)
    implicit = json.loads(cli("plan", "default/trainer", "--snapshot", with_trainer_asking(tmp_path, IMPLICIT),
                              "-o", "json").stdout)
    explicit = json.loads(cli("plan", "default/trainer-ext", "--snapshot", str(EXAMPLE), "-o", "json").stdout)
    for plan in (claim, implicit, explicit):
        assert (plan["outcome"], plan["node"], [v["pod"] for v in plan["victims"]]) == ("evict", "node-a",
                                                                                         ["default/a1"])
        assert devices_of(plan) == ["gpu.example.com/node-a/gpu-1"]
        assert plan["freesDevices"] is True
    assert claim["devices"][0]["claim"] == "default/trainer-gpu"
    assert (implicit["devices"][0]["claim"], implicit["devices"][0]["resource"], implicit["devices"][0]["container"]) \
        == (None, IMPLICIT, "main")
    assert explicit["devices"][0]["resource"] == EXPLICIT


def test_the_table_names_the_holder_and_the_device_for_an_extended_resource(cli):
    r = cli("plan", "default/trainer-ext", "--snapshot", str(EXAMPLE), width=200)
    assert r.exit_code == ExitCode.OK
    assert "EVICT on node-a" in r.stdout
    assert "Note: extended resource example.com/gpu (container main) would get gpu.example.com/node-a/gpu-1" \
        in r.stdout
    assert "- default/a1" in r.stdout
    assert "every node fails for reasons no eviction changes" not in r.stdout


@pytest.mark.parametrize("resource", [IMPLICIT, EXPLICIT])
def test_plan_f_and_preempt_f_make_room_for_a_pod_asking_for_the_extended_resource(cli, tmp_path, resource):
    f = manifests(tmp_path, HIGH, bare_pod(resource=resource, template=None))
    planned = json.loads(cli("plan", "-f", f, "--snapshot", str(EXAMPLE), "-o", "json").stdout)
    [w] = planned["workloads"]
    [plan] = w["plans"]
    assert (w["placed"], w["pending"], plan["outcome"], [v["pod"] for v in plan["victims"]]) == (
        {"node-a": 1}, 0, "evict", ["default/a1"])
    assert devices_of(plan) == ["gpu.example.com/node-a/gpu-1"]
    assert plan["devices"][0]["resource"] == resource
    r = cli("preempt", "-f", f, "--snapshot", str(EXAMPLE), "--dry-run", "-o", "json")
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.exit_code == ExitCode.OK
    assert docs[0]["action"] == "plan"
    assert devices_of(docs[0]["workloads"][0]["plans"][0]) == [
        "gpu.example.com/node-a/gpu-1"]
    assert [d["pod"] for d in docs if d["action"] == "evicted"] == ["default/a1"]
    assert docs[-1]["outcome"] == "simulated"


def test_preempt_of_a_pod_asking_for_the_extended_resource_evicts_the_holder_its_plan_names(cli):
    r = cli("preempt", "default/trainer-ext", "--snapshot", str(EXAMPLE), "--dry-run", "-o", "json")
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.exit_code == ExitCode.OK
    assert (docs[0]["action"], docs[0]["outcome"], docs[0]["node"]) == ("plan", "evict", "node-a")
    assert devices_of(docs[0]) == ["gpu.example.com/node-a/gpu-1"]
    assert [d["pod"] for d in docs if d["action"] == "evicted"] == ["default/a1"]


def test_explain_names_who_holds_each_device_for_an_extended_resource(cli):
    r = cli("explain", "default/trainer-ext", "--snapshot", str(EXAMPLE), width=250)
    assert ("→ extended resource example.com/gpu (container main): all 2 matching device(s) already allocated: "
            "gpu.example.com/node-a/gpu-0 by default/a0-gpu; gpu.example.com/node-a/gpu-1 by default/a1-gpu (used by "
            "pods default/a0, default/a1)") in r.stdout
    data = json.loads(cli("explain", "default/trainer-ext", "--snapshot", str(EXAMPLE), "-o", "json").stdout)
    [fact] = data["devices"]["node-b"]
    assert (fact["kind"], fact["claim"], fact["resource"], fact["container"], fact["request"]) == (
        "all-allocated", None, EXPLICIT, "main", "container-0-request-1")
    assert [(h["device"], h["claims"], h["pods"]) for h in fact["holders"]] == [
        ("gpu.example.com/node-b/gpu-0", ["default/b0-gpu"], ["default/b0"]),
        ("gpu.example.com/node-b/gpu-1", ["default/b1-gpu"], ["default/b1"])]


# -- 2. a bare Pod gets its claims from its templates ------------------------------------------------

def test_a_bare_pod_in_f_gets_its_claim_from_the_template(cli, tmp_path):
    r = cli("plan", "-f", manifests(tmp_path, HIGH, bare_pod()), "--snapshot", str(EXAMPLE), "-o", "json")
    [w] = json.loads(r.stdout)["workloads"]
    [plan] = w["plans"]
    assert "not created yet" not in w["message"]
    assert (r.exit_code, w["placed"], plan["outcome"]) == (ExitCode.OK, {"node-a": 1}, "evict")
    assert [(d["claim"], d["request"]) for d in plan["devices"]] == [("default/solo-gpu", "gpu")]
    assert devices_of(plan) == ["gpu.example.com/node-a/gpu-1"]


def test_preempt_f_of_a_bare_pod_with_its_template_in_the_file_evicts_for_its_claim(cli, tmp_path):
    f = manifests(tmp_path, HIGH, two_gpus(), bare_pod(template="two-gpus"))
    r = cli("preempt", "-f", f, "--snapshot", str(EXAMPLE), "--dry-run", "-o", "json")
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.exit_code == ExitCode.OK
    [plan] = docs[0]["workloads"][0]["plans"]
    assert [d["claim"] for d in plan["devices"]] == ["default/solo-gpu", "default/solo-gpu"]
    assert sorted(devices_of(plan)) == ["gpu.example.com/node-a/gpu-0", "gpu.example.com/node-a/gpu-1"]
    assert sorted(d["pod"] for d in docs if d["action"] == "evicted") == ["default/a0", "default/a1"]


# -- 3. the devices that come with the workload -----------------------------------------------------

def test_a_template_in_the_same_file_is_taken_into_the_what_if(cli, tmp_path):
    f = manifests(tmp_path, HIGH, two_gpus(), deployment("two-gpus"))
    r = cli("plan", "-f", f, "--snapshot", str(EXAMPLE), width=200)
    assert "not planned" not in r.stdout
    assert "not created yet" not in r.stdout
    assert "2 replicas: 2 placed (2 after evicting 4 pods)" in r.stdout
    data = json.loads(cli("plan", "-f", f, "--snapshot", str(EXAMPLE), "-o", "json").stdout)
    [w] = data["workloads"]
    assert w["placed"] == {"node-a": 1, "node-b": 1}
    assert [sorted(devices_of(p)) for p in w["plans"]] == [
        ["gpu.example.com/node-a/gpu-0", "gpu.example.com/node-a/gpu-1"],
        ["gpu.example.com/node-b/gpu-0", "gpu.example.com/node-b/gpu-1"]]


def test_a_device_class_in_the_file_backs_the_extended_resource_it_names(cli, tmp_path):
    """A new class naming `example.com/tpu`, selecting the example's devices: a pod asking for
    `example.com/tpu` gets them; without the class in the file nothing backs it."""
    tpu = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "tpu.example.com"},
           "spec": {"extendedResourceName": "example.com/tpu"}}
    pod = bare_pod(resource="example.com/tpu", template=None)
    r = cli("plan", "-f", manifests(tmp_path, HIGH, tpu, pod), "--snapshot", str(EXAMPLE), "-o", "json")
    [plan] = json.loads(r.stdout)["workloads"][0]["plans"]
    assert (r.exit_code, plan["outcome"], devices_of(plan)) == (ExitCode.OK, "evict", ["gpu.example.com/node-a/gpu-1"])
    r = cli("plan", "-f", manifests(tmp_path, HIGH, pod, name="alone.yaml"), "--snapshot", str(EXAMPLE), "-o", "json")
    [w] = json.loads(r.stdout)["workloads"]
    assert r.exit_code == ExitCode.INFEASIBLE
    assert "Insufficient example.com/tpu" in w["message"]


def test_a_claim_in_the_file_is_made_unallocated_and_the_pod_that_names_it_uses_it(cli, tmp_path):
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "shared-gpu", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": "gpu.example.com", "pool": "node-b", "device": "gpu-0"}]}}}}
    pod = bare_pod(template=None)
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared-gpu"}]
    r = cli("plan", "-f", manifests(tmp_path, HIGH, claim, pod), "--snapshot", str(EXAMPLE), "-o", "json")
    [plan] = json.loads(r.stdout)["workloads"][0]["plans"]
    assert (plan["outcome"], plan["node"]) == ("evict", "node-a")
    assert [(d["claim"], d["pool"], d["device"]) for d in plan["devices"]] == [
        ("default/shared-gpu", "node-a", "gpu-1")]


def test_a_template_in_neither_the_file_nor_the_cluster_is_named(cli, tmp_path):
    r = cli("plan", "-f", manifests(tmp_path, HIGH, deployment("three-gpus")), "--snapshot", str(EXAMPLE),
            "-o", "json")
    [w] = json.loads(r.stdout)["workloads"]
    assert (r.exit_code, w["pending"]) == (ExitCode.INFEASIBLE, 2)
    assert any(n.startswith("ResourceClaimTemplate default/three-gpus (its pods' claim gpu) is in neither the "
                            "manifests nor the cluster") for n in w["notes"])


@pytest.mark.parametrize("version", ["resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2"])
def test_a_template_of_an_older_served_version_is_read_as_v1(cli, tmp_path, version):
    old = two_gpus()
    old["apiVersion"] = version
    if version.endswith("v1beta1"):  # v1beta1's flat request
        old["spec"]["spec"]["devices"]["requests"] = [{"name": "gpus", "deviceClassName": "gpu.example.com",
                                                        "count": 2}]
    r = cli("plan", "-f", manifests(tmp_path, HIGH, old, deployment("two-gpus")), "--snapshot", str(EXAMPLE),
            "-o", "json")
    assert json.loads(r.stdout)["workloads"][0]["placed"] == {"node-a": 1, "node-b": 1}


def test_a_template_of_an_unserved_version_is_refused(cli, tmp_path):
    old = two_gpus()
    old["apiVersion"] = "resource.k8s.io/v1alpha3"
    r = cli("plan", "-f", manifests(tmp_path, HIGH, old, deployment("two-gpus")), "--snapshot", str(EXAMPLE))
    assert r.exit_code == ExitCode.USAGE
    assert "ResourceClaimTemplate 'two-gpus': no matches for kind 'ResourceClaimTemplate' in version " \
           "'resource.k8s.io/v1alpha3'" in r.stderr


# -- 4. explain says when kresched can make room -----------------------------------------------------

@pytest.mark.parametrize("pod", ["default/trainer", "default/trainer-ext"])
def test_explain_says_kresched_can_make_room_and_gives_the_command(cli, pod):
    r = cli("explain", pod, "--snapshot", str(EXAMPLE), width=250)
    assert r.exit_code == ExitCode.OK
    assert "2 Preemption is not helpful for scheduling." in r.stdout
    assert ("kresched can make room where the scheduler's preemption cannot: evicting lower-priority pods that hold "
            "devices frees enough for it on node-a, node-b") in r.stdout
    assert r.stdout.rstrip().endswith(f"kresched plan {pod} --snapshot {EXAMPLE}")
    assert json.loads(cli("explain", pod, "--snapshot", str(EXAMPLE), "-o", "json").stdout)["deviceFreeing"] == [
        "node-a", "node-b"]


def test_explain_offers_no_device_freeing_where_no_lower_priority_pod_holds_one(cli, tmp_path):
    items = example_items()
    for o in items:
        if o["kind"] == "Pod" and o["metadata"]["name"] in ("a0", "a1", "b0", "b1"):
            o["spec"]["priority"] = 1000
    r = cli("explain", "default/trainer", "--snapshot", write_snapshot(tmp_path, items), "-o", "json")
    data = json.loads(r.stdout)
    assert "deviceFreeing" not in data
    assert cli("plan", "default/trainer", "--snapshot", str(tmp_path / "cluster.json")).exit_code == \
        ExitCode.INFEASIBLE


# -- 5. devices in JSON and YAML ---------------------------------------------------------------------

def test_explain_yaml_keeps_who_holds_each_device_per_node(cli):
    data = yaml.safe_load(cli("explain", "default/trainer", "--snapshot", str(EXAMPLE), "-o", "yaml").stdout)
    assert sorted(data["devices"]) == ["node-a", "node-b"]
    [fact] = data["devices"]["node-a"]
    assert (fact["claim"], fact["request"], fact["kind"]) == ("default/trainer-gpu", "gpu", "all-allocated")
    assert [(h["device"], h["pods"]) for h in fact["holders"]] == [
        ("gpu.example.com/node-a/gpu-0", ["default/a0"]), ("gpu.example.com/node-a/gpu-1", ["default/a1"])]
    assert fact["message"].startswith("claim default/trainer-gpu, request gpu: all 2 matching device(s) already "
                                      "allocated")


def test_a_plan_that_fits_names_the_devices_in_its_table_and_its_json(cli, tmp_path):
    items = [o for o in example_items() if not (o["kind"] == "Pod" and o["metadata"]["name"] == "b1")]
    items = [o for o in items if not (o["kind"] == "ResourceClaim" and o["metadata"]["name"] == "b1-gpu")]
    snap = write_snapshot(tmp_path, items)
    plan = json.loads(cli("plan", "default/trainer", "--snapshot", snap, "-o", "json").stdout)
    assert (plan["outcome"], plan["node"], devices_of(plan), plan["freesDevices"]) == (
        "fits", "node-b", ["gpu.example.com/node-b/gpu-1"], False)
    assert "Note: claim default/trainer-gpu would get gpu.example.com/node-b/gpu-1" in \
        cli("plan", "default/trainer", "--snapshot", snap, width=200).stdout


def test_a_plan_without_devices_has_no_device_keys(cli, tmp_path):
    items = example_items()
    for o in items:
        if o["kind"] == "Pod" and o["metadata"]["name"] == "trainer":
            o["spec"].pop("resourceClaims")
            o["status"].pop("resourceClaimStatuses")
    plan = json.loads(cli("plan", "default/trainer", "--snapshot", write_snapshot(tmp_path, items), "-o",
                          "json").stdout)
    assert plan["outcome"] == "fits"
    assert not {"devices", "freesDevices", "missingKinds"} & set(plan)


def test_the_what_if_json_has_the_devices_of_each_replica_and_where_nothing_is_free(cli, tmp_path):
    low = deployment("one-gpu", replicas=1)
    low["spec"]["template"]["spec"].pop("priorityClassName")
    data = json.loads(cli("plan", "-f", manifests(tmp_path, low), "--snapshot", str(EXAMPLE), "-o", "json").stdout)
    [w] = data["workloads"]
    assert w["plans"][0]["devices"] == []
    [fact] = w["nearest"][0]["devices"]
    assert fact["kind"] == "all-allocated"
    assert fact["holders"][0]["pods"] == ["default/a0"]


# -- 6. missing device data is not "fits" -------------------------------------------------------------

def without(kinds: set[str]) -> list[dict[str, Any]]:
    return [o for o in example_items() if o["kind"] not in kinds]


NO_DRA = {"DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"}


@pytest.mark.parametrize(("left_out", "missing"), [
    (NO_DRA, ["DeviceClass", "ResourceSlice", "ResourceClaim"]),
    ({"ResourceClaim"}, ["ResourceClaim"]),
    ({"ResourceSlice"}, ["ResourceSlice"]),
], ids=["no-dra-objects", "no-claims", "claims-but-no-slices"])
def test_a_snapshot_without_a_kind_the_answer_depends_on_cannot_be_known(cli, tmp_path, left_out, missing):
    snap = write_snapshot(tmp_path, without(left_out))
    r = cli("plan", "default/trainer", "--snapshot", snap, "-o", "json")
    plan = json.loads(r.stdout)
    assert (r.exit_code, plan["outcome"], plan["node"], plan["victims"], plan["missingKinds"]) == (
        ExitCode.UNKNOWN, "unknown", None, [], missing)
    assert plan["message"].startswith("cannot be known: the state holds no ")
    table = cli("plan", "default/trainer", "--snapshot", snap, width=200)
    assert table.exit_code == ExitCode.UNKNOWN
    assert "UNKNOWN" in table.stdout
    assert "FITS" not in table.stdout
    r = cli("explain", "default/trainer", "--snapshot", snap, width=200)
    assert r.exit_code == ExitCode.UNKNOWN
    assert "Cannot be known: without its devices it fits on 2/2 nodes" in r.stdout
    assert "Schedulable" not in r.stdout
    data = json.loads(cli("explain", "default/trainer", "--snapshot", snap, "-o", "json").stdout)
    assert (data["schedulable"], data["message"], data["missingKinds"]) == (False, None, missing)
    assert "node" not in data
    assert "scores" not in data


def test_plan_of_every_pending_pod_exits_6_when_one_cannot_be_known_and_3_when_one_cannot_be_placed(cli, tmp_path):
    items = without(NO_DRA)
    r = cli("plan", "--all-pending", "--snapshot", write_snapshot(tmp_path, items), "-o", "json")
    plans = json.loads(r.stdout)["plans"]
    # trainer-ext: without DeviceClasses nothing is known to back example.com/gpu (a device plugin
    # could): no node has any, so it cannot be placed as the snapshot stands — a definite answer.
    assert sorted((p["pod"], p["outcome"]) for p in plans) == [("default/trainer", "unknown"),
                                                                 ("default/trainer-ext", "infeasible")]
    assert r.exit_code == ExitCode.INFEASIBLE
    rest = [o for o in items if o["metadata"]["name"] != "trainer-ext"]
    r = cli("plan", "--all-pending", "--snapshot", write_snapshot(tmp_path, rest, "rest.json"), "-o", "json")
    assert r.exit_code == ExitCode.UNKNOWN
    assert [p["outcome"] for p in json.loads(r.stdout)["plans"]] == ["unknown"]


def test_a_what_if_without_device_data_cannot_be_known(cli, tmp_path):
    r = cli("plan", "-f", manifests(tmp_path, HIGH, bare_pod()), "--snapshot",
            write_snapshot(tmp_path, without(NO_DRA)), "-o", "json")
    [w] = json.loads(r.stdout)["workloads"]
    assert (r.exit_code, w["placed"], w["pending"], w["unknown"]) == (ExitCode.UNKNOWN, {}, 0, 1)
    assert w["plans"][0]["missingKinds"] == ["DeviceClass", "ResourceSlice", "ResourceClaimTemplate"]
    r = cli("preempt", "-f", str(tmp_path / "gpu.yaml"), "--snapshot", str(tmp_path / "cluster.json"), "--dry-run",
            "-o", "json")
    assert r.exit_code == ExitCode.UNKNOWN
    assert json.loads(r.stdout.splitlines()[-1])["outcome"] == "unknown"


def test_preempt_of_a_pod_whose_answer_cannot_be_known_does_nothing_and_exits_6(cli, tmp_path):
    r = cli("preempt", "default/trainer", "--snapshot", write_snapshot(tmp_path, without(NO_DRA)), "--dry-run",
            "-o", "json")
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.exit_code == ExitCode.UNKNOWN
    assert docs[0]["outcome"] == "unknown"
    assert (docs[-1]["action"], docs[-1]["outcome"], docs[-1]["evicted"]) == ("summary", "unknown", [])


def test_live_an_empty_list_is_the_truth(fake_api, tmp_path, monkeypatch):
    """The fake API server serves resource.k8s.io: no ResourceSlice is no device, not missing data."""
    fake_api.load(write_snapshot(tmp_path, without({"ResourceSlice"})))
    kubeconfig = str(fake_api.write_kubeconfig(tmp_path / "kc"))
    r = run_cli(monkeypatch, "plan", "default/trainer", "--kubeconfig", kubeconfig, "-o", "json")
    plan = json.loads(r.stdout)
    assert (r.exit_code, plan["outcome"]) == (ExitCode.INFEASIBLE, "infeasible")
    assert "missingKinds" not in plan
    assert plan["message"].startswith("0/2 nodes are available: 2 cannot allocate all claims.")


def test_an_extended_resource_named_after_a_class_the_snapshot_lacks_cannot_be_known(cli, tmp_path):
    items = [o for o in json.loads(Path(with_trainer_asking(tmp_path, IMPLICIT)).read_bytes())["items"]
             if o["kind"] not in NO_DRA]
    r = cli("plan", "default/trainer", "--snapshot", write_snapshot(tmp_path, items, "implicit.json"), "-o", "json")
    plan = json.loads(r.stdout)
    assert (r.exit_code, plan["outcome"], plan["missingKinds"]) == (ExitCode.UNKNOWN, "unknown",
                                                                    ["DeviceClass", "ResourceSlice"])
