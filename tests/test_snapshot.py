"""Loading cluster state from snapshots: every input shape the design promises, and kresched's own
snapshot format round-tripping. Bad input is tests/test_bad_input.py's business."""

from __future__ import annotations

import copy
import errno
import gzip
import io
import json
import mmap
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

import kresched.sources.decode as decode
import kresched.sources.snapshot as snapshot
from kresched.errors import InputError
from kresched.model.cluster import ClusterState
from kresched.sources.snapshot import encode_snapshot, load_snapshot, write_snapshot

MANAGED_FIELDS = [{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubelet", "operation": "Update",
                   "fieldsV1": {"f:status": {"f:conditions": {}}}, "time": "2025-03-03T05:43:35Z"}]

NODE = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a", "topology.kubernetes.io/zone": "a"},
                 "creationTimestamp": "2025-03-03T05:43:35Z", "managedFields": MANAGED_FIELDS, "resourceVersion": "7"},
    "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}], "providerID": "aws:///i-1"},
    "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
               "allocatable": {"cpu": "3920m", "memory": "15Gi", "pods": "110", "ephemeral-storage": "95Gi"},
               "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
               "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320368}],
               "nodeInfo": {"kubeletVersion": "v1.35.0"}},
}
POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-web-1", "labels": {"app": "web"},
                 "creationTimestamp": "2025-03-03T05:43:35Z", "managedFields": MANAGED_FIELDS,
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9", "uid": "u-rs",
                                      "controller": True, "blockOwnerDeletion": True}]},
    "spec": {"nodeName": "node-a", "priority": 1000, "priorityClassName": "standard",
             "schedulerName": "default-scheduler",
             "containers": [{"name": "main", "image": "nginx",
                             "resources": {"requests": {"cpu": "250m", "memory": "256Mi"},
                                           "limits": {"memory": "256Mi"}},
                             "ports": [{"containerPort": 80, "protocol": "TCP"}],
                             "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}],
             "volumes": [{"name": "cache", "emptyDir": {}}], "terminationGracePeriodSeconds": 30,
             "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                              "tolerationSeconds": 300}]},
    "status": {"phase": "Running", "qosClass": "Burstable", "startTime": "2025-03-03T05:44:00Z",
               "conditions": [{"type": "Ready", "status": "True"}],
               "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0, "image": "nginx",
                                      "state": {"running": {"startedAt": "2025-03-03T05:44:01Z"}}}]},
}
PENDING = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "critical-addon", "namespace": "kube-system"},
    "spec": {"priorityClassName": "system-cluster-critical",
             "containers": [{"name": "main", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]},
    "status": {"phase": "Pending"},
}
PDB = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "shop"},
       "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
       "status": {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2}}
PRIORITY_CLASS = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "standard"},
                  "value": 1000, "globalDefault": True, "preemptionPolicy": "PreemptLowerPriority"}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "web"}}}
OTHERS = [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "shop"}, "data": {"a": "b"}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
     "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
     "spec": {"replicas": 2,
              "template": {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "x"}}}]}}}},
]
KNOWN = [NODE, POD, PENDING, PDB, PRIORITY_CLASS, NAMESPACE]


def kubectl_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": copy.deepcopy(items)}


def write(path: Path, data: str | bytes) -> str:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def summary(state: ClusterState) -> dict[str, list[str]]:
    return {"nodes": [n.name for n in state.nodes], "pods": [p.key for p in state.pods],
            "pdbs": [b.key for b in state.pdbs], "priority_classes": [c.name for c in state.priority_classes],
            "namespaces": [n.name for n in state.namespaces]}


EXPECTED = {"nodes": ["node-a"], "pods": ["shop/web-1", "kube-system/critical-addon"], "pdbs": ["shop/web"],
            "priority_classes": ["standard"], "namespaces": ["shop"]}


@pytest.fixture
def no_slow_path(monkeypatch):
    """Fail if decoding falls back from one typed decode of the whole document to item by item."""
    def forbidden(*args, **kwargs):
        raise AssertionError("the JSON fast path was left")

    monkeypatch.setattr(decode, "_decode_items", forbidden)


def test_a_kubectl_list_in_json_is_one_typed_decode(tmp_path, no_slow_path):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    assert summary(state) == EXPECTED


def test_a_kubectl_list_in_yaml_gives_the_same_state_as_in_json(tmp_path):
    from_yaml = load_snapshot(write(tmp_path / "dump.yaml", yaml.safe_dump(kubectl_list(KNOWN))))
    from_json = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    assert summary(from_yaml) == EXPECTED
    assert from_yaml == from_json


def test_what_the_model_reads_from_a_real_looking_dump(tmp_path):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    web = state.pod("shop/web-1")
    assert (web.requests.milli_cpu, web.requests.memory, web.qos, web.controller_ref) == (
        250, 256 * 2**20, "Burstable", "ReplicaSet/web-7d9")
    assert web.has_empty_dir
    assert web.is_ready
    assert not web.is_pending
    assert [p.key for p in state.pods_on("node-a")] == ["shop/web-1"]
    assert state.node_by_name["node-a"].allocatable.milli_cpu == 3920
    pending = state.pod("kube-system/critical-addon")
    assert pending.is_pending
    assert pending.is_critical
    assert pending.priority == 2_000_000_000  # resolved as the Priority admission plugin does
    assert state.pdbs[0].status.disruptions_allowed == 1
    assert state.namespace_labels == {"shop": {"team": "web"}}


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_other_kinds_are_ignored(tmp_path, fmt):
    doc = kubectl_list(OTHERS[:1] + KNOWN + OTHERS[1:])
    text = json.dumps(doc) if fmt == "json" else yaml.safe_dump(doc)
    assert summary(load_snapshot(write(tmp_path / f"dump.{fmt}", text))) == EXPECTED


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_single_object_of_another_kind_is_an_empty_cluster_not_an_error(tmp_path, fmt):
    text = json.dumps(OTHERS[2]) if fmt == "json" else yaml.safe_dump(OTHERS[2])
    assert summary(load_snapshot(write(tmp_path / f"deploy.{fmt}", text))) == {k: [] for k in EXPECTED}


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_single_object(tmp_path, fmt):
    text = json.dumps(NODE) if fmt == "json" else yaml.safe_dump(NODE)
    assert [n.name for n in load_snapshot(write(tmp_path / f"node.{fmt}", text)).nodes] == ["node-a"]


def test_multi_document_yaml_of_single_objects(tmp_path):
    text = "---\n" + "\n---\n".join(yaml.safe_dump(o) for o in [*OTHERS[:1], *KNOWN]) + "\n---\n# the end\n"
    assert summary(load_snapshot(write(tmp_path / "objects.yaml", text))) == EXPECTED


def test_multi_document_yaml_mixing_lists_and_objects(tmp_path):
    text = yaml.safe_dump(kubectl_list([NODE, POD])) + "---\n" + yaml.safe_dump_all([PENDING, PDB, PRIORITY_CLASS,
                                                                                       NAMESPACE])
    assert summary(load_snapshot(write(tmp_path / "mixed.yml", text))) == EXPECTED


def _api_list(kind: str, objects: list[dict[str, Any]]) -> dict[str, Any]:
    """What the API server answers a list call with: `PodList`, items without kind/apiVersion."""
    items = [{k: v for k, v in copy.deepcopy(o).items() if k not in ("kind", "apiVersion")} for o in objects]
    return {"kind": f"{kind}List", "apiVersion": "v1", "metadata": {"resourceVersion": "123"}, "items": items}


def test_items_without_kind_inside_a_podlist_in_json_are_pods(tmp_path, no_slow_path):
    state = load_snapshot(write(tmp_path / "pods.json", json.dumps(_api_list("Pod", [POD, PENDING]))))
    assert [p.key for p in state.pods] == EXPECTED["pods"]


def test_items_without_kind_inside_a_nodelist_in_yaml_are_nodes(tmp_path):
    state = load_snapshot(write(tmp_path / "nodes.yaml", yaml.safe_dump(_api_list("Node", [NODE]))))
    assert [n.name for n in state.nodes] == ["node-a"]


def test_a_directory_of_mixed_files(tmp_path):
    write(tmp_path / "1-nodes.yaml", yaml.safe_dump(NODE))
    write(tmp_path / "2-pods.json.gz", gzip.compress(json.dumps(_api_list("Pod", [POD, PENDING])).encode()))
    write(tmp_path / "3-policy.yml", yaml.safe_dump_all([PDB, PRIORITY_CLASS]))
    write(tmp_path / "4-namespaces.json", json.dumps(kubectl_list([NAMESPACE, *OTHERS])))
    write(tmp_path / "README.md", "# not a snapshot {")
    write(tmp_path / "notes.txt", "kind: Pod")
    write(tmp_path / "backup.yaml~", "garbage: [")
    (tmp_path / "sub.yaml").mkdir()  # a directory named like a file is not read
    assert summary(load_snapshot(str(tmp_path))) == EXPECTED


def test_in_a_directory_a_later_file_replaces_an_object_of_an_earlier_one(tmp_path):
    newer = copy.deepcopy(POD)
    newer["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"
    write(tmp_path / "a.yaml", yaml.safe_dump(POD))
    write(tmp_path / "b.yaml", yaml.safe_dump(newer))
    state = load_snapshot(str(tmp_path))
    assert [p.requests.milli_cpu for p in state.pods] == [1000]


@pytest.mark.parametrize("name", ["dump.json", "dump.yaml", "dump", "dump.json.gz", "dump.gz"])
def test_gzip_is_detected_by_its_magic_bytes_whatever_the_name(tmp_path, name):
    data = gzip.compress(json.dumps(kubectl_list(KNOWN)).encode())
    assert summary(load_snapshot(write(tmp_path / name, data))) == EXPECTED


def test_a_gz_name_on_plain_text_is_read_as_plain_text(tmp_path):
    assert summary(load_snapshot(write(tmp_path / "dump.yaml.gz", yaml.safe_dump(kubectl_list(KNOWN))))) == EXPECTED


@pytest.mark.parametrize("fmt", ["json", "yaml", "json.gz"])
def test_stdin(fmt):
    text = yaml.safe_dump(kubectl_list(KNOWN)).encode() if fmt == "yaml" else json.dumps(kubectl_list(KNOWN)).encode()
    data = gzip.compress(text) if fmt.endswith(".gz") else text
    assert summary(load_snapshot("-", stdin=io.BytesIO(data))) == EXPECTED


def test_a_utf8_byte_order_mark_is_ignored(tmp_path):
    data = b"\xef\xbb\xbf" + json.dumps(kubectl_list(KNOWN)).encode()
    assert summary(load_snapshot(write(tmp_path / "dump.json", data))) == EXPECTED


@pytest.mark.parametrize("shape", ["json", "yaml", "json.gz", "json with a byte order mark",
                                   "yaml with a byte order mark", "json after blank lines"])
def test_a_file_mapped_into_memory_loads_as_the_same_state_as_one_read(tmp_path, monkeypatch, shape):
    # Large files are mapped, not copied (snapshot._MAP_AT): here every file is.
    text = (yaml.safe_dump if shape.startswith("yaml") else json.dumps)(kubectl_list(KNOWN)).encode()
    data = gzip.compress(text) if shape.endswith(".gz") else \
        b"\xef\xbb\xbf" + text if "byte order mark" in shape else b"\n \t\n" + text if "blank" in shape else text
    path = write(tmp_path / "dump", data)
    read = load_snapshot(path)
    monkeypatch.setattr(snapshot, "_MAP_AT", 1)
    mapped = load_snapshot(path)
    assert summary(mapped) == summary(read) == EXPECTED
    assert encode_snapshot(mapped) == encode_snapshot(read)


@pytest.fixture
def decoded_by_item(monkeypatch):
    """Each decode asked to go an item at a time, in order: True where it did (a mapped List)."""
    done = []
    real = decode._decoded_by_item

    def counted(*args, **kwargs):
        found = real(*args, **kwargs)
        done.append(found is not None)
        return found

    monkeypatch.setattr(decode, "_decoded_by_item", counted)
    return done


@pytest.fixture
def by_item(monkeypatch, decoded_by_item):
    """Every file mapped into memory and, beyond its share of the input limit (here: any), decoded
    an item at a time (`snapshot._BY_ITEM_SHARE`); gives `decoded_by_item`."""
    monkeypatch.setattr(snapshot, "_MAP_AT", 1)
    monkeypatch.setattr(snapshot, "_BY_ITEM_SHARE", 1 << 62)
    return decoded_by_item


def test_a_mapped_file_beyond_half_the_input_limit_or_2_gib_is_decoded_an_item_at_a_time(tmp_path, monkeypatch,
                                                                                         decoded_by_item):
    path = write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN)))
    size = Path(path).stat().st_size
    monkeypatch.setattr(snapshot, "_MAP_AT", 1)
    monkeypatch.setenv(snapshot.MAX_INPUT_ENV, str(2 * size + 2))  # within half the limit: whole
    assert summary(load_snapshot(path)) == EXPECTED
    assert decoded_by_item == []
    monkeypatch.setenv(snapshot.MAX_INPUT_ENV, str(2 * size - 2))  # beyond it
    assert summary(load_snapshot(path)) == EXPECTED
    monkeypatch.setenv(snapshot.MAX_INPUT_ENV, "8Gi")
    monkeypatch.setattr(snapshot, "DEFAULT_MAX_INPUT_BYTES", size - 1)  # (2 GiB, scaled down) whatever the limit
    assert summary(load_snapshot(path)) == EXPECTED
    monkeypatch.setattr(snapshot, "_MAP_AT", size + 1)  # read into memory, not mapped: whole
    assert summary(load_snapshot(path)) == EXPECTED
    assert decoded_by_item == [True, True, False]


PODGROUPS = [{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
              "metadata": {"name": "train", "namespace": "shop"}, "spec": {"minMember": 2}}]


@pytest.mark.parametrize("shape", [
    "a List of known kinds", "a List with other kinds", "a PodList without kinds", "a PodList with kinds",
    "a List with nulls", "a PodGroupList of coscheduling", "a PodGroupList of another group", "an empty List",
    "a single object"])
def test_a_large_file_decoded_an_item_at_a_time_is_the_same_state_as_decoded_whole(tmp_path, monkeypatch, by_item,
                                                                                    shape):
    doc: dict[str, Any]
    if shape == "a List of known kinds":
        doc = kubectl_list(KNOWN)
    elif shape == "a List with other kinds":
        doc = kubectl_list([OTHERS[0], *KNOWN, *OTHERS[1:]])
    elif shape.startswith("a PodList"):
        pods = copy.deepcopy([POD, PENDING])
        if "without" in shape:
            for p in pods:
                del p["kind"], p["apiVersion"]
        doc = {"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "9"}, "items": pods}
    elif shape == "a List with nulls":
        doc = kubectl_list(KNOWN)
        doc["items"][1]["spec"]["tolerations"] = None
        doc["items"][1]["metadata"]["labels"] = None
    elif shape.startswith("a PodGroupList"):
        groups = copy.deepcopy(PODGROUPS)
        version = "scheduling.x-k8s.io/v1alpha1" if "coscheduling" in shape else "example.com/v1"
        for g in groups:
            del g["kind"], g["apiVersion"]
        doc = {"apiVersion": version, "kind": "PodGroupList", "items": groups}
    elif shape == "an empty List":
        doc = kubectl_list([])
    else:
        doc = copy.deepcopy(POD)
    path = write(tmp_path / "dump.json", json.dumps(doc))
    with monkeypatch.context() as whole:
        whole.setattr(snapshot, "_BY_ITEM_SHARE", 1)
        read = load_snapshot(path)
    items = load_snapshot(path)
    assert by_item == [bool(doc.get("items"))]  # (a List with items is decoded an item at a time)
    assert encode_snapshot(items) == encode_snapshot(read)
    assert summary(items) == summary(read)


def test_where_the_system_keeps_a_files_pages_the_items_are_read_all_the_same(tmp_path, decoded_by_item):
    class Refusing(mmap.mmap):
        def madvise(self, *args: int) -> None:
            raise OSError(errno.EINVAL, "Invalid argument")

    path = write(tmp_path / "dump.json", json.dumps(kubectl_list([OTHERS[0], *KNOWN])))
    with open(path, "rb") as f, Refusing(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        items = decode.decode_json(mapped, path, by_item=True)
        assert decoded_by_item == [True]
        assert items == decode.decode_json(mapped, path)


def test_every_recorded_json_fixture_reads_the_same_an_item_at_a_time(by_item, monkeypatch):
    fixtures = sorted(Path(__file__).parent.joinpath("fixtures").rglob("*.json"))
    assert len(fixtures) > 100
    for path in fixtures:
        with monkeypatch.context() as whole:
            whole.setattr(snapshot, "_BY_ITEM_SHARE", 1)
            try:
                read: ClusterState | str = load_snapshot(str(path))
            except InputError as exc:
                read = str(exc)
        try:
            items: ClusterState | str = load_snapshot(str(path))
        except InputError as exc:
            items = str(exc)
        if isinstance(read, str):
            assert items == read, path
        else:
            assert not isinstance(items, str), path
            assert encode_snapshot(items) == encode_snapshot(read), path
    assert sum(by_item) > 50


def test_unquoted_yaml_timestamps_stay_strings(tmp_path):
    text = """
kind: Pod
metadata:
  name: p
  namespace: default
  creationTimestamp: 2025-03-03T05:43:35Z
  deletionTimestamp: 2025-03-04 10:00:00
spec:
  containers: [{name: c}]
status:
  startTime: 2025-03-03
"""
    pod = load_snapshot(write(tmp_path / "pod.yaml", text)).pods[0]
    assert pod.metadata.creation_timestamp == "2025-03-03T05:43:35Z"
    assert pod.metadata.deletion_timestamp == "2025-03-04 10:00:00"
    assert pod.status.start_time == "2025-03-03"
    assert pod.is_terminating


def test_yaml_numbers_where_kubernetes_takes_quantities(tmp_path):
    text = """
kind: Node
metadata: {name: node-n}
status: {allocatable: {cpu: 4, memory: 16Gi, pods: 110, nvidia.com/gpu: 1}}
"""
    node = load_snapshot(write(tmp_path / "node.yaml", text)).nodes[0]
    assert (node.allocatable.milli_cpu, node.allocatable.allowed_pods, node.allocatable.scalar) == (
        4000, 110, {"nvidia.com/gpu": 1})


# -- kresched's own snapshot format ---------------------------------------------------------------------

def test_encode_snapshot_round_trips_to_an_equal_state(tmp_path):
    state = load_snapshot(write(tmp_path / "dump.yaml", yaml.safe_dump(kubectl_list(KNOWN + OTHERS))))
    again = load_snapshot(write(tmp_path / "snapshot.json", encode_snapshot(state)))
    assert again == state
    assert summary(again) == summary(state)
    assert [p.requests for p in again.pods] == [p.requests for p in state.pods]
    assert [p.qos for p in again.pods] == [p.qos for p in state.pods]


def test_the_snapshot_is_a_kubernetes_list_without_managed_fields_nor_derived_facts(tmp_path):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    doc = json.loads(encode_snapshot(state))
    assert (doc["apiVersion"], doc["kind"]) == ("v1", "List")
    kinds = [item["kind"] for item in doc["items"]]
    assert sorted(kinds) == sorted(["Namespace", "PriorityClass", "Node", "PodDisruptionBudget", "Pod", "Pod"])
    text = json.dumps(doc)
    assert "managedFields" not in text
    assert "containerStatuses" not in text
    for item in doc["items"]:
        # node images are kept for ImageLocality's score, with nothing but their names and sizes
        for image in item.get("status", {}).get("images", ()):
            assert set(image) <= {"names", "sizeBytes"}
        assert not {"requests", "qos", "key", "allocatable", "effectivePriority"} & set(item)
    pod = next(i for i in doc["items"] if i["metadata"]["name"] == "web-1")
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "250m", "memory": "256Mi"}
    assert pod["status"]["startTime"] == "2025-03-03T05:44:00Z"


def test_write_snapshot_gzips_a_gz_file_and_it_loads_back(tmp_path):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    out = tmp_path / "snap.json.gz"
    write_snapshot(state, str(out))
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    assert load_snapshot(str(out)) == state


def test_write_snapshot_replaces_a_file_so_that_a_reader_of_the_old_one_keeps_it_whole(tmp_path):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    out = tmp_path / "snap.json"
    out.write_bytes(b'{"kind": "List", "items": []}')
    out.chmod(0o600)
    with out.open("rb") as reader:  # opened (or mapped) before the new snapshot is written
        write_snapshot(state, str(out))
        assert reader.read() == b'{"kind": "List", "items": []}'
    assert load_snapshot(str(out)) == state
    assert out.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump.json", "snap.json"]


def test_a_failed_write_leaves_the_old_snapshot_and_no_stray_file(tmp_path, monkeypatch):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    out = tmp_path / "snap.json"
    out.write_bytes(b"old")

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshot.os, "replace", full)
    with pytest.raises(InputError, match=r"snap\.json: cannot write: No space left on device"):
        write_snapshot(state, str(out))
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump.json", "snap.json"]


def test_a_snapshot_file_in_a_directory_that_refuses_new_files_is_written_in_place(tmp_path, monkeypatch):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    out = tmp_path / "snap.json"
    out.write_bytes(b"old")

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("tempfile.mkstemp", refused)
    write_snapshot(state, str(out))
    assert load_snapshot(str(out)) == state
    with pytest.raises(InputError, match=r"new\.json: cannot write: Permission denied"):
        write_snapshot(state, str(tmp_path / "new.json"))


def test_write_snapshot_writes_through_a_symlink(tmp_path):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    target = tmp_path / "real.json"
    target.write_bytes(b"old")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    write_snapshot(state, str(link))
    assert link.is_symlink()
    assert load_snapshot(str(target)) == state


def test_write_snapshot_to_stdout():
    state = load_snapshot("-", stdin=io.BytesIO(json.dumps(kubectl_list(KNOWN)).encode()))
    buf = io.BytesIO()
    write_snapshot(state, None, stdout=buf)
    assert buf.getvalue().endswith(b"\n")
    assert load_snapshot("-", stdin=io.BytesIO(buf.getvalue())) == state


def test_the_snapshot_json_decodes_with_the_typed_fast_path(tmp_path, no_slow_path):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    assert load_snapshot(write(tmp_path / "snap.json", encode_snapshot(state))) == state


# -- the built-in demo ------------------------------------------------------------------------------------

def _demo_exists() -> bool:
    return resources.files("kresched.demo").joinpath("cluster.yaml").is_file()


@pytest.mark.skipif(not _demo_exists(), reason="kresched/demo/cluster.yaml (the built-in demo) is not written yet")
def test_the_demo_keyword_loads_the_built_in_demo_cluster():
    state = load_snapshot("demo")
    assert len(state.nodes) >= 3
    assert len(state.pods) >= 10
    assert state.pending_pods(), "the demo shows Pending pods to plan for"
    text = resources.files("kresched.demo").joinpath("cluster.yaml").read_text(encoding="utf-8")
    assert summary(state) == summary(load_snapshot("-", stdin=io.BytesIO(text.encode())))
    assert msgspec.json.decode(encode_snapshot(state))["kind"] == "List"


# -- storage kinds (the volume filters' input) ---------------------------------------------------------

STORAGE_CLASS = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "gp3"},
                 "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer",
                 "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone",
                                                                    "values": ["a", "b"]}]}]}
PV = {"apiVersion": "v1", "kind": "PersistentVolume",
      "metadata": {"name": "pv-1", "labels": {"topology.kubernetes.io/zone": "a"}, "managedFields": MANAGED_FIELDS},
      "spec": {"capacity": {"storage": "50Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
               "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "shop", "name": "data-web-1", "uid": "u-c"},
               "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1", "fsType": "ext4"},
               "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                   {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}}},
      "status": {"phase": "Bound"}}
PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
       "metadata": {"name": "data-web-1", "namespace": "shop", "uid": "u-c",
                    "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "50Gi"}},
                "storageClassName": "gp3", "volumeName": "pv-1", "volumeMode": "Filesystem"},
       "status": {"phase": "Bound", "capacity": {"storage": "50Gi"}}}
CSI_NODE = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-a"},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25},
                                  "topologyKeys": ["topology.kubernetes.io/zone"]}]}}
STORAGE = [STORAGE_CLASS, PV, PVC, CSI_NODE]


def _storage_summary(state: ClusterState) -> dict[str, Any]:
    st = state.storage
    return {"pvs": [(p.name, p.capacity_bytes, p.storage_class) for p in st.pvs],
            "pvcs": [(c.key, c.request_bytes, c.storage_class, c.is_fully_bound) for c in st.pvcs],
            "classes": [(c.name, c.volume_binding_mode) for c in st.classes],
            "csiNodes": [(n.name, n.limits()) for n in st.csi_nodes], "kinds": sorted(st.kinds)}


STORAGE_EXPECTED = {"pvs": [("pv-1", 50 * 2**30, "gp3")], "pvcs": [("shop/data-web-1", 50 * 2**30, "gp3", True)],
                    "classes": [("gp3", "WaitForFirstConsumer")], "csiNodes": [("node-a", {"ebs.csi.aws.com": 25})],
                    "kinds": ["CSINode", "PersistentVolume", "PersistentVolumeClaim", "StorageClass"]}


@pytest.mark.parametrize("fmt", ["json", "yaml", "multi-doc yaml"])
def test_storage_kinds_are_read_from_every_input_shape(tmp_path, fmt):
    if fmt == "json":
        path = write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN + STORAGE)))
    elif fmt == "yaml":
        path = write(tmp_path / "dump.yaml", yaml.safe_dump(kubectl_list(KNOWN + STORAGE)))
    else:
        path = write(tmp_path / "dump.yaml", yaml.safe_dump_all(copy.deepcopy(KNOWN + STORAGE)))
    state = load_snapshot(path)
    assert _storage_summary(state) == STORAGE_EXPECTED
    assert summary(state) == EXPECTED


def test_a_kubectl_list_with_storage_kinds_is_still_one_typed_decode(tmp_path, no_slow_path):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN + STORAGE))))
    assert _storage_summary(state) == STORAGE_EXPECTED


def test_storage_kinds_round_trip_through_the_kresched_snapshot(tmp_path):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN + STORAGE + OTHERS))))
    doc = json.loads(encode_snapshot(state))
    assert "managedFields" not in json.dumps(doc)
    again = load_snapshot(write(tmp_path / "snapshot.json", json.dumps(doc)))
    assert again == state
    assert _storage_summary(again) == STORAGE_EXPECTED


def test_a_storage_class_without_a_binding_mode_is_immediate_as_the_api_server_defaults_it(tmp_path):
    sc = {"kind": "StorageClass", "metadata": {"name": "old"}, "provisioner": "kubernetes.io/aws-ebs"}
    state = load_snapshot(write(tmp_path / "sc.json", json.dumps(sc)))
    assert [(c.name, c.volume_binding_mode) for c in state.storage.classes] == [("old", "Immediate")]


def test_a_snapshot_without_storage_kinds_knows_it_has_none(tmp_path):
    state = load_snapshot(write(tmp_path / "dump.json", json.dumps(kubectl_list(KNOWN))))
    assert not state.storage.has_claims
    assert state.storage.kinds == frozenset()


def test_without_a_limit_set_an_input_may_be_half_the_memory_and_never_less_than_2_gib(monkeypatch) -> None:
    """Reading a dump takes about 1.5 times its size at the peak: the default limit lets the
    largest cluster Kubernetes supports (a 2.4 GB dump) read on a machine of 8 GiB, and stops an
    input the memory cannot hold with one line instead of the OOM killer."""
    gib = 1 << 30
    assert snapshot.default_max_input(24 * gib) == 12 * gib
    assert snapshot.default_max_input(8 * gib) == 4 * gib
    assert snapshot.default_max_input(int(7.5 * gib)) == 3 * gib  # whole GiB
    assert snapshot.default_max_input(3 * gib) == 2 * gib
    assert snapshot.default_max_input(0) == 2 * gib  # memory unknown
    monkeypatch.delenv(snapshot.MAX_INPUT_ENV, raising=False)
    assert snapshot.max_input_bytes() == snapshot.default_max_input() >= 2 * gib
    monkeypatch.setenv(snapshot.MAX_INPUT_ENV, "3Gi")
    assert snapshot.max_input_bytes() == 3 * gib
