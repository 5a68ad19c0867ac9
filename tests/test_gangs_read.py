"""Gangs read from snapshots and `-f` manifests: the PodGroups of the three gang APIs (v1.36's
`scheduling.k8s.io/v1alpha2`, scheduler-plugins' coscheduling, Volcano), v1alpha2 Workloads and a
pod's `spec.schedulingGroup`, in every input shape (kubectl's `List` in JSON and YAML, multi-document
YAML, an API server's typed `PodGroupList`, kresched's own snapshot); a PodGroup or Workload of
another API group (Kueue's Workload) is skipped silently; which kinds a snapshot held. Live reading
is tests/test_gangs_live.py's."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from kresched.errors import InputError
from kresched.model.cluster import ClusterState
from kresched.model.gangs import COSCHEDULING_API, VOLCANO_API, WORKLOAD_API
from kresched.sources.admission import stored_pod
from kresched.sources.decode import Objects, decode_json, decode_yaml
from kresched.sources.manifests import Document, workloads_of
from kresched.sources.snapshot import build_state, encode_snapshot, load_snapshot
from tests.builders import make_state

#: Recorded on the v1.36.2 rig with the gates on (tests/fixtures/gang-objects/README.md).
RECORDED = Path(__file__).parent / "fixtures" / "gang-objects"


# A PodGroup of each API, shaped as their servers serve them (a v1alpha2 PodGroup's
# `podGroupTemplateRef: null`, a Workload template's `schedulingConstraints: null`, a condition's
# `observedGeneration`; the recorded ones below), with every field kresched reads.
WORKLOAD_POD_GROUP = {
    "apiVersion": WORKLOAD_API, "kind": "PodGroup",
    "metadata": {"name": "train", "namespace": "ml", "uid": "u-pg-train"},
    "spec": {"podGroupTemplateRef": None, "schedulingPolicy": {"gang": {"minCount": 4}}, "disruptionMode": "PodGroup",
             "priorityClassName": "high", "priority": 1000},
    "status": {"conditions": [{"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
                               "message": "0/3 nodes are available", "lastTransitionTime": "2026-12-02T03:00:00Z",
                               "observedGeneration": 1}]},
}
COSCHEDULING_POD_GROUP = {
    "apiVersion": COSCHEDULING_API, "kind": "PodGroup",
    "metadata": {"name": "nginx", "namespace": "ml"},
    "spec": {"minMember": 3, "scheduleTimeoutSeconds": 10, "minResources": {"cpu": "3"}},
    "status": {"phase": "Running", "running": 3, "occupiedBy": "ml/nginx"},
}
VOLCANO_POD_GROUP = {
    "apiVersion": VOLCANO_API, "kind": "PodGroup",
    "metadata": {"name": "job-1", "namespace": "ml"},
    "spec": {"minMember": 2, "minTaskMember": {"worker": 2}, "queue": "default", "priorityClassName": "high",
             "minResources": {"cpu": 2, "nvidia.com/gpu": "2"}},
    "status": {"phase": "Inqueue", "conditions": [{"type": "Scheduled", "status": "True", "transitionID": "t-1",
                                                   "lastTransitionTime": "2026-12-02T03:00:00Z"}]},
}
WORKLOAD = {
    "apiVersion": WORKLOAD_API, "kind": "Workload",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
             "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
                                    "schedulingConstraints": None}]},
}
#: Other projects' objects of the same kinds: another object of the same name, never read. Their
#: fields would not decode as a gang's (`minMember` a string, `podGroupTemplates` an object).
OTHER_POD_GROUP = {"apiVersion": "example.com/v1", "kind": "PodGroup", "metadata": {"name": "x", "namespace": "ml"},
                   "spec": {"minMember": "three", "podGroupTemplateRef": []}}
KUEUE_WORKLOAD = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
                  "metadata": {"name": "job-train-1a2b3", "namespace": "ml"},
                  "spec": {"queueName": "user-queue", "podGroupTemplates": {"not": "a list"},
                           "podSets": [{"name": "main", "count": 4, "template": {"spec": {"containers": []}}}]}}
GANG_OBJECTS = [WORKLOAD_POD_GROUP, COSCHEDULING_POD_GROUP, VOLCANO_POD_GROUP, WORKLOAD]
MEMBER = {"apiVersion": "v1", "kind": "Pod",
          "metadata": {"name": "train-0", "namespace": "ml"},
          "spec": {"schedulingGroup": {"podGroupName": "train"}, "priority": 1000,
                   "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]},
          "status": {"phase": "Pending"}}


def kubectl_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": copy.deepcopy(items)}


def read(items: list[dict[str, Any]], form: str) -> Any:
    """The objects of `items` as one input of `form`."""
    if form == "json":
        return decode_json(json.dumps(kubectl_list(items)).encode(), "dump.json")
    if form == "yaml":
        return decode_yaml(yaml.safe_dump(kubectl_list(items)), "dump.yaml")
    return decode_yaml(yaml.safe_dump_all(copy.deepcopy(items)), "objects.yaml")


def groups(objs: Any) -> list[tuple[str, str, str | None, int | None]]:
    return [(g.api_version, g.key, g.flavor, g.min_count) for g in objs.pod_groups]


FORMS = ["json", "yaml", "multi-document yaml"]


# -- every input shape ------------------------------------------------------------------------------

@pytest.mark.parametrize("form", FORMS)
def test_the_pod_groups_of_every_api_and_the_workload_are_read(form):
    objs = read([*GANG_OBJECTS, MEMBER], form)
    assert groups(objs) == [(WORKLOAD_API, "ml/train", "workload", 4),
                            (COSCHEDULING_API, "ml/nginx", "coscheduling", 3), (VOLCANO_API, "ml/job-1", "volcano", 2)]
    train, nginx, job = objs.pod_groups
    assert (train.disruption_mode, train.spec.priority_class_name, train.spec.priority) == ("PodGroup", "high", 1000)
    assert train.status.conditions[0].reason == "Unschedulable"
    assert (nginx.spec.schedule_timeout_seconds, nginx.spec.min_resources, nginx.status.phase) == \
        (10, {"cpu": "3"}, "Running")
    assert (job.spec.queue, job.spec.min_task_member, job.disruption_mode) == ("default", {"worker": 2}, "Pod")
    (workload,) = objs.scheduling_workloads
    assert workload.key == "ml/train"
    assert workload.spec.controller_ref.kind == "Job"
    (template,) = workload.spec.pod_group_templates
    assert (template.name, template.scheduling_policy.gang.min_count, template.scheduling_constraints) == \
        ("workers", 4, None)
    assert objs.pods[0].spec.scheduling_group.pod_group_name == "train"


@pytest.mark.parametrize("form", FORMS)
def test_a_pod_group_or_workload_of_another_api_group_is_skipped_silently(form):
    objs = read([OTHER_POD_GROUP, KUEUE_WORKLOAD, COSCHEDULING_POD_GROUP, MEMBER], form)
    assert groups(objs) == [(COSCHEDULING_API, "ml/nginx", "coscheduling", 3)]
    assert objs.scheduling_workloads == []
    assert [p.key for p in objs.pods] == ["ml/train-0"]


@pytest.mark.parametrize("form", FORMS)
def test_alone_in_its_input_another_groups_pod_group_is_an_empty_input(form):
    objs = read([OTHER_POD_GROUP], form) if form != "json" else decode_json(json.dumps(OTHER_POD_GROUP).encode(), "t")
    assert objs.count() == 0


def test_another_groups_objects_that_decode_are_dropped_all_the_same():
    """Fields that happen to decode (the List stays one typed decode) do not make it one of ours."""
    other = {"apiVersion": "example.com/v1", "kind": "PodGroup", "metadata": {"name": "y", "namespace": "ml"},
             "spec": {"minMember": 2}}
    kueue = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": "w", "namespace": "ml"}}
    objs = read([other, kueue, WORKLOAD_POD_GROUP], "json")
    assert [g.key for g in objs.pod_groups] == ["ml/train"]
    assert objs.scheduling_workloads == []


def typed_list(kind: str, api_version: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    """An API server's list answer (`kubectl get --raw`): the items carry no kind nor apiVersion."""
    bare = [{k: v for k, v in i.items() if k not in ("kind", "apiVersion")} for i in copy.deepcopy(items)]
    return {"apiVersion": api_version, "kind": f"{kind}List", "metadata": {"resourceVersion": "42"}, "items": bare}


@pytest.mark.parametrize("form", ["json", "yaml"])
def test_the_items_of_a_typed_list_are_of_the_lists_api(form):
    docs = [typed_list("PodGroup", WORKLOAD_API, [WORKLOAD_POD_GROUP]),
            typed_list("PodGroup", VOLCANO_API, [VOLCANO_POD_GROUP]),
            typed_list("Workload", WORKLOAD_API, [WORKLOAD])]
    if form == "json":
        objs = decode_json(json.dumps(docs[0]).encode(), "t")
        for doc in docs[1:]:
            objs.extend(decode_json(json.dumps(doc).encode(), "t"))
    else:
        objs = decode_yaml(yaml.safe_dump_all(docs), "t")
    assert [(g.api_version, g.flavor) for g in objs.pod_groups] == [(WORKLOAD_API, "workload"),
                                                                    (VOLCANO_API, "volcano")]
    assert [w.api_version for w in objs.scheduling_workloads] == [WORKLOAD_API]


def test_a_typed_list_of_another_groups_pod_groups_is_skipped():
    doc = typed_list("PodGroup", "example.com/v1", [OTHER_POD_GROUP])
    assert decode_json(json.dumps(doc).encode(), "t").count() == 0
    assert decode_yaml(yaml.safe_dump(doc), "t").count() == 0


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("obj", "message"), [
    (WORKLOAD_POD_GROUP, "PodGroup ml/train: apiVersion is required: scheduling.k8s.io/v1alpha2, "
                         "scheduling.x-k8s.io/v1alpha1 or scheduling.volcano.sh/v1beta1"),
    (WORKLOAD, "Workload ml/train: apiVersion is required: scheduling.k8s.io/v1alpha2; Kueue's Workload is "
               "another kind, of kueue.x-k8s.io"),
])
def test_a_gang_object_without_an_api_version_is_refused_naming_it(form, obj, message):
    """Which of the three PodGroup APIs it is of decides what it means; no API server serves one without."""
    bare = {k: v for k, v in obj.items() if k != "apiVersion"}
    with pytest.raises(InputError) as err:
        read([bare], form)
    assert err.value.message.endswith(f": {message}")


@pytest.mark.parametrize("form", FORMS)
def test_a_bad_field_of_a_gang_object_is_named(form):
    bad = copy.deepcopy(COSCHEDULING_POD_GROUP)
    bad["spec"]["minMember"] = "three"
    with pytest.raises(InputError, match=r"PodGroup ml/nginx: spec\.minMember: expected `int \| null`, got `str`"):
        read([bad], form)


# -- as recorded ------------------------------------------------------------------------------------

def recorded_state(name: str) -> ClusterState:
    return load_snapshot(str(RECORDED / name))


@pytest.mark.parametrize("name", ["kubectl-list.json", "kubectl-list.yaml"])
def test_a_recorded_kubectl_dump_of_every_gang_api_is_read(name):
    state = recorded_state(name)
    assert state.gang_kinds == {"PodGroup", "Workload"}
    job_group = "trainer-75fcbf87db-trainer-pgt-0-b675f9d9c"
    assert sorted((g.flavor, g.name, g.min_count, g.disruption_mode) for g in state.pod_groups) == [
        ("coscheduling", "nginx", 3, "Pod"), ("coscheduling", "nulls", 2, "Pod"),
        ("volcano", "job-1", 2, "Pod"), ("volcano", "job-2", 1, "Pod"),
        ("workload", "basic", None, "Pod"), ("workload", "standalone", 2, "Pod"),
        ("workload", "train-workers", 4, "PodGroup"), ("workload", job_group, 2, "Pod")]
    assert sorted((w.name, w.spec.controller_ref.kind if w.spec.controller_ref else None)
                  for w in state.scheduling_workloads) == [("train", None), ("trainer-75fcbf87db", "Job")]
    gangs = {p.name: state.gangs.gang_of(p) for p in state.pods}
    assert {name: g.text for name, g in gangs.items() if g is not None} == {
        **{f"train-{i}": "PodGroup ml/train-workers (minCount 4, 0 running)" for i in range(4)},
        **{f"cos-{i}": "PodGroup ml/nginx (minCount 3, 0 running)" for i in range(3)},
        "vol-0": "PodGroup ml/job-1 (minCount 2, 0 running)",
        "trainer-0-488g6": f"PodGroup ml/{job_group} (minCount 2, 2 running)",
        "trainer-1-cpx4v": f"PodGroup ml/{job_group} (minCount 2, 2 running)"}
    train = next(g for g in state.pod_groups if g.name == "train-workers")
    assert (train.spec.priority_class_name, train.spec.priority) == ("high", 1000)  # the admission's
    assert [(c.type, c.status, c.reason) for c in train.status.conditions] == [
        ("PodGroupScheduled", "False", "Unschedulable")]


def test_the_recorded_json_dump_is_one_typed_decode(monkeypatch):
    from kresched.sources import decode

    def forbidden(*args: Any) -> None:
        raise AssertionError("the JSON fast path was left")

    monkeypatch.setattr(decode, "_decode_items", forbidden)
    assert len(recorded_state("kubectl-list.json").pod_groups) == 8


def api_answer(name: str) -> bytes:
    return (RECORDED / "api" / f"{name}.json").read_bytes()


API_LISTS = {"scheduling.k8s.io_v1alpha2_podgroups": "PodGroup", "scheduling.k8s.io_v1alpha2_workloads": "Workload",
             "scheduling.x-k8s.io_v1alpha1_podgroups": "PodGroup",
             "scheduling.volcano.sh_v1beta1_podgroups": "PodGroup"}


def comparable(objs: Any) -> list[bytes]:
    return sorted(msgspec.json.encode(o) for o in (*objs.pod_groups, *objs.scheduling_workloads))


def test_the_recorded_api_answers_read_as_the_kubectl_dump():
    """As the live source decodes a page (`item_kind`: a built-in list's items carry no kind nor
    apiVersion), and as a file (`kubectl get --raw` output saved)."""
    dump = recorded_state("kubectl-list.json")
    as_pages = Objects()
    as_files = Objects()
    for name, kind in API_LISTS.items():
        as_pages.extend(decode_json(api_answer(name), name, item_kind=kind))
        as_files.extend(decode_json(api_answer(name), name))
    assert comparable(as_pages) == comparable(as_files) == comparable(dump)


# -- the state ------------------------------------------------------------------------------------

def test_the_state_holds_them_and_knows_the_kinds_a_snapshot_held():
    state = build_state(read([*GANG_OBJECTS, MEMBER], "json"))
    assert [g.key for g in state.pod_groups] == ["ml/train", "ml/nginx", "ml/job-1"]
    assert [w.key for w in state.scheduling_workloads] == ["ml/train"]
    assert state.gang_kinds == {"PodGroup", "Workload"}
    gang = state.gangs.gang_of(state.pod("ml/train-0"))
    assert (gang.key, gang.min_count, gang.disruption_mode, gang.assumed) == ("PodGroup ml/train", 4, "PodGroup", False)


def test_a_snapshot_without_gang_kinds_says_nothing_of_them():
    state = build_state(read([MEMBER], "json"))
    assert state.gang_kinds == frozenset()
    assert state.pod_groups == ()
    assert state.scheduling_workloads == ()
    gang = state.gangs.gang_of(state.pod("ml/train-0"))
    assert gang.assumed
    assert "not read" in gang.declared_by


def test_only_the_kinds_a_snapshot_holds_are_known():
    assert build_state(read([VOLCANO_POD_GROUP], "json")).gang_kinds == {"PodGroup"}
    assert build_state(read([WORKLOAD], "json")).gang_kinds == {"Workload"}


def test_the_same_name_in_two_apis_is_two_pod_groups():
    same = copy.deepcopy(VOLCANO_POD_GROUP)
    same["metadata"]["name"] = "train"
    state = build_state(read([WORKLOAD_POD_GROUP, same], "json"))
    assert sorted((g.flavor, g.key) for g in state.pod_groups) == [("volcano", "ml/train"), ("workload", "ml/train")]


# -- kresched's own snapshot ------------------------------------------------------------------------

def test_the_snapshot_round_trips_every_gang_object_and_the_pods_scheduling_group(tmp_path):
    state = build_state(read([*GANG_OBJECTS, MEMBER], "json"))
    path = tmp_path / "snap.json"
    path.write_bytes(encode_snapshot(state))
    again = load_snapshot(str(path))
    assert again == state
    assert again.pod("ml/train-0").spec.scheduling_group.pod_group_name == "train"
    written = msgspec.json.decode(path.read_bytes())["items"]
    assert [(i["apiVersion"], i["kind"], i["metadata"]["name"]) for i in written if i["kind"] != "Pod"] == [
        (WORKLOAD_API, "Workload", "train"), (WORKLOAD_API, "PodGroup", "train"),
        (COSCHEDULING_API, "PodGroup", "nginx"), (VOLCANO_API, "PodGroup", "job-1")]
    pod = next(i for i in written if i["kind"] == "Pod")
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": "train"}


def test_each_pod_group_is_written_with_only_the_fields_of_its_api(tmp_path):
    state = build_state(read(GANG_OBJECTS, "json"))
    written = {i["metadata"]["name"]: i for i in msgspec.json.decode(encode_snapshot(state))["items"]
               if i["kind"] == "PodGroup"}
    assert set(written["train"]["spec"]) == {"schedulingPolicy", "disruptionMode", "priorityClassName", "priority"}
    assert set(written["nginx"]["spec"]) == {"minMember", "scheduleTimeoutSeconds", "minResources"}
    assert set(written["job-1"]["spec"]) == {"minMember", "minTaskMember", "queue", "priorityClassName",
                                             "minResources"}


def test_a_list_with_gang_objects_is_still_one_typed_decode(monkeypatch):
    """kubectl's List and kresched's snapshot: no item-by-item retry for the gang kinds."""
    from kresched.sources import decode

    def forbidden(*args: Any) -> None:
        raise AssertionError("the JSON fast path was left")

    monkeypatch.setattr(decode, "_decode_items", forbidden)
    objs = decode_json(json.dumps(kubectl_list([*GANG_OBJECTS, MEMBER])).encode(), "t")
    assert (len(objs.pod_groups), len(objs.scheduling_workloads), len(objs.pods)) == (3, 1, 1)
    assert decode_json(encode_snapshot(build_state(objs)), "t").count() == 5


# -- a new pod keeps its group ----------------------------------------------------------------------

def test_admission_keeps_a_new_pods_scheduling_group():
    doc = {"metadata": {"name": "train-0", "namespace": "ml"},
           "spec": {"schedulingGroup": {"podGroupName": "train"}, "containers": [{"name": "c"}]}}
    pod = stored_pod(doc, {}, "train.yaml")
    assert pod.spec.scheduling_group.pod_group_name == "train"
    assert msgspec.json.decode(msgspec.json.encode(pod))["spec"]["schedulingGroup"] == {"podGroupName": "train"}


# -- -f manifests -----------------------------------------------------------------------------------

JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
       "spec": {"parallelism": 4, "completions": 4,
                "template": {"spec": {"restartPolicy": "Never", "schedulingGroup": {"podGroupName": "train"},
                                      "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}}}}


def docs(*objs: dict[str, Any]) -> list[Document]:
    return [Document(f"train.yaml (document {i + 1})", copy.deepcopy(o), "train.yaml") for i, o in enumerate(objs)]


def bare(obj: dict[str, Any]) -> dict[str, Any]:
    """As an operator writes it: no namespace (it comes from -n), no status."""
    out = copy.deepcopy(obj)
    out["metadata"].pop("namespace", None)
    out["metadata"].pop("uid", None)
    out.pop("status", None)
    return out


def test_pod_groups_and_workloads_in_the_same_file_are_read_not_ignored():
    manifests = workloads_of(docs(JOB, *(bare(o) for o in GANG_OBJECTS)), make_state(), "ml")
    assert [w.name for w in manifests.workloads] == ["train"]
    assert [(g.api_version, g.key, g.min_count) for g in manifests.pod_groups] == [
        (WORKLOAD_API, "ml/train", 4), (COSCHEDULING_API, "ml/nginx", 3), (VOLCANO_API, "ml/job-1", 2)]
    assert [w.key for w in manifests.scheduling_workloads] == ["ml/train"]
    assert manifests.ignored == []
    pod = manifests.workloads[0].template
    assert pod.spec.scheduling_group.pod_group_name == "train"


def test_a_pod_group_or_workload_of_another_group_in_a_manifest_is_not_planned():
    manifests = workloads_of(docs(JOB, bare(OTHER_POD_GROUP), bare(KUEUE_WORKLOAD)), make_state(), "ml")
    assert manifests.pod_groups == []
    assert manifests.scheduling_workloads == []
    assert manifests.ignored == ["PodGroup ml/x", "Workload ml/job-train-1a2b3"]


@pytest.mark.parametrize(("api_version", "message"), [
    ("scheduling.k8s.io/v1alpha1", "no matches for kind 'PodGroup' in version 'scheduling.k8s.io/v1alpha1' "
                                   "(kresched reads scheduling.k8s.io/v1alpha2)"),
    ("scheduling.volcano.sh/v1alpha1", "no matches for kind 'PodGroup' in version 'scheduling.volcano.sh/v1alpha1' "
                                       "(kresched reads scheduling.volcano.sh/v1beta1)"),
    (None, "no matches for kind 'PodGroup' in version None (kresched reads scheduling.k8s.io/v1alpha2 or "
           "scheduling.x-k8s.io/v1alpha1 or scheduling.volcano.sh/v1beta1)"),
])
def test_a_pod_group_of_a_version_kresched_does_not_read_is_kubectls_error(api_version, message):
    group = bare(WORKLOAD_POD_GROUP)
    group["apiVersion"] = api_version
    with pytest.raises(InputError) as err:
        workloads_of(docs(JOB, group), make_state(), "ml")
    assert err.value.message == f"train.yaml (document 2): PodGroup 'train': {message}"


def test_a_bad_field_of_a_pod_group_in_a_manifest_is_named():
    group = bare(WORKLOAD_POD_GROUP)
    group["spec"]["schedulingPolicy"]["gang"]["minCount"] = "4"
    with pytest.raises(InputError, match=r"^train\.yaml \(document 2\): PodGroup train: "
                                         r"spec\.schedulingPolicy\.gang\.minCount: expected `int`, got `str`$"):
        workloads_of(docs(JOB, group), make_state(), "ml")


def test_a_null_in_a_manifests_pod_group_is_read_as_go_reads_it():
    group = bare(WORKLOAD_POD_GROUP)
    group["spec"]["resourceClaims"] = None
    group["status"] = None
    (read_group,) = workloads_of(docs(JOB, group), make_state(), "ml").pod_groups
    assert read_group.spec.resource_claims == ()
    assert read_group.min_count == 4
