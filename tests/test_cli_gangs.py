"""Gangs on the command line (issue 43): the training job of the GPU example, as a new user tries it.

`examples/gpu-cluster.json` has four GPUs, each held by a priority-0 pod. A 5-worker training Job of
priority 1000 (one GPU each) cannot start there: without a gang, kresched evicts all four holders
to place four of the five workers — four jobs destroyed, and the training still cannot start. As a
gang (`--gang`, or a PodGroup in the same file) it evicts nothing and says why.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from kresched.errors import ExitCode
from kresched.sources.snapshot import encode_snapshot
from tests.builders import gang_member, make_node, make_pod, make_pod_group, make_state
from tests.clirun import Result, reset_env, run_cli

Run = Callable[..., Result]
GPU_CLUSTER = str(Path(__file__).parent.parent / "examples" / "gpu-cluster.json")

PRIORITY_CLASS = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "training"},
                  "value": 1000}


def _job(workers: int = 5, template: dict | None = None) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "default"},
            "spec": {"parallelism": workers, "completions": workers, "template": {
                "metadata": template or {},
                "spec": {"restartPolicy": "Never", "priorityClassName": "training",
                         "containers": [{"name": "worker", "image": "trainer:1",
                                         "resources": {"requests": {"cpu": "100m"}}}],
                         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}}}


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    yield lambda *args, **kw: run_cli(monkeypatch, *args, **kw)
    reset_env()


def _file(tmp_path: Path, *docs: dict) -> str:
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_without_a_gang_the_what_if_evicts_every_gpu_holder_for_four_of_five_workers(cli, tmp_path):
    # The harm the issue starts from, kept visible: a Job is no gang unless it says so.
    r = cli("plan", "-f", _file(tmp_path, PRIORITY_CLASS, _job()), "--snapshot", GPU_CLUSTER, "-o", "json")
    w = json.loads(r.stdout)["workloads"][0]
    assert sum(len(p["victims"]) for p in w["plans"]) == 4
    assert w["pending"] == 1
    assert "gang" not in w


@pytest.mark.parametrize("verb", ["plan", "preempt"])
def test_as_a_gang_the_training_job_evicts_nothing_and_says_how_many_would_fit(cli, tmp_path, verb):
    args = [verb, "-f", _file(tmp_path, PRIORITY_CLASS, _job()), "--gang", "--snapshot", GPU_CLUSTER]
    if verb == "preempt":
        args.append("--dry-run")
    r = cli(*args, width=80)
    assert r.exit_code == ExitCode.INFEASIBLE, r.stdout + r.stderr
    assert "4 of 5 members of pod group default/train fit after evictions (minCount 5); a gang runs all or " \
           "nothing: nothing evicted" in " ".join(r.stdout.split())
    out = cli(*args, "-o", "json").stdout
    lines = [json.loads(line) for line in out.splitlines()] if verb == "preempt" else [json.loads(out)]
    w = lines[0]["workloads"][0]
    assert w["gang"]["minCount"] == 5
    assert w["gang"]["kept"] is False
    assert all(p["outcome"] == "infeasible" and not p["victims"] for p in w["plans"])
    if verb == "preempt":
        assert lines[-1]["action"] == "summary"
        assert lines[-1]["evicted"] == []
        assert not any(e["action"] == "evict" for e in lines)


def test_a_gang_of_four_of_the_five_workers_is_made_room_for(cli, tmp_path):
    r = cli("plan", "-f", _file(tmp_path, PRIORITY_CLASS, _job()), "--gang", "4", "--snapshot", GPU_CLUSTER,
            "-o", "json")
    w = json.loads(r.stdout)["workloads"][0]
    assert w["gang"]["kept"] is True
    assert w["gang"]["placed"] == 4
    assert sum(len(p["victims"]) for p in w["plans"]) == 4


def test_a_pod_group_in_the_same_file_makes_the_job_a_gang(cli, tmp_path):
    group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
             "metadata": {"name": "train", "namespace": "default"}, "spec": {"minMember": 4}}
    template = {"labels": {"scheduling.x-k8s.io/pod-group": "train"}}
    r = cli("plan", "-f", _file(tmp_path, PRIORITY_CLASS, group, _job(template=template)), "--snapshot", GPU_CLUSTER,
            "--simulate-other-schedulers", "-o", "json")
    w = json.loads(r.stdout)["workloads"][0]
    assert w["gang"]["gang"] == "PodGroup default/train"
    assert w["gang"]["minCount"] == 4  # the PodGroup's minMember, read from the same file
    assert w["gang"]["kept"] is True
    assert w["gang"]["placed"] == 4


@pytest.mark.parametrize(("value", "error"), [
    ("0", "error: --gang 0: a minCount is a positive integer (or give --gang alone: every replica)"),
])
def test_a_gang_min_count_must_be_positive(cli, tmp_path, value, error):
    r = cli("plan", "-f", _file(tmp_path, PRIORITY_CLASS, _job()), "--gang", value, "--snapshot", GPU_CLUSTER)
    assert r.exit_code == ExitCode.USAGE
    assert r.stderr.strip() == error


def test_gang_without_manifests_is_a_usage_error(cli):
    r = cli("plan", "--gang", "--snapshot", "demo")
    assert r.exit_code == ExitCode.USAGE
    assert r.stderr.strip() == "error: --gang goes with -f FILE (the workloads to plan for)"


# -- a Pending gang in the cluster -------------------------------------------------------------------------


def _gang_cluster(tmp_path: Path, min_count: int, workers: int = 4) -> str:
    nodes = [make_node(n) for n in ("node-a", "node-b", "node-c")]
    holders = [make_pod(f"low-{n.name}", node=n.name, cpu="2", priority=100, grace=5, owner=None) for n in nodes]
    members = [make_pod(f"train-{i}", cpu="3", priority=1000, owner="Job/train", **gang_member("train"))
               for i in range(workers)]
    state = make_state(nodes, [*holders, *members], pod_groups=[make_pod_group("train", min_count=min_count)])
    path = tmp_path / "cluster.json"
    path.write_bytes(encode_snapshot(state))
    return str(path)


def test_plan_of_a_member_plans_its_whole_gang(cli, tmp_path):
    snapshot = _gang_cluster(tmp_path, min_count=3)
    r = cli("plan", "train-0", "--snapshot", snapshot, "-o", "json")
    assert r.exit_code == ExitCode.INFEASIBLE  # the fourth member stays Pending
    data = json.loads(r.stdout)
    assert sorted(p["pod"] for p in data["plans"]) == [f"default/train-{i}" for i in range(4)]
    assert data["gangs"][0]["gang"] == "PodGroup default/train"
    assert data["gangs"][0]["placed"] == 3
    assert data["gangs"][0]["kept"] is True


def test_explain_says_which_gang_a_pod_belongs_to_and_its_min_count(cli, tmp_path):
    snapshot = _gang_cluster(tmp_path, min_count=4)
    r = cli("explain", "train-0", "--snapshot", snapshot, width=100)
    assert ("member of PodGroup default/train: minCount 4 (PodGroup scheduling.k8s.io/v1alpha2 default/train "
            "gang.minCount 4); 4 members, 0 running, 4 pending") in " ".join(r.stdout.split())
    data = json.loads(cli("explain", "train-0", "--snapshot", snapshot, "-o", "json").stdout)
    assert data["gang"] == {"gang": "PodGroup default/train", "flavor": "workload", "minCount": 4, "members": 4,
                            "running": 0, "pending": 4, "disruptionMode": "Pod",
                            "declaredBy": "PodGroup scheduling.k8s.io/v1alpha2 default/train gang.minCount 4"}


@pytest.mark.parametrize(("mode", "completions", "is_gang"), [
    pytest.param("Indexed", 5, True, id="Indexed, completions == parallelism"),
    pytest.param("NonIndexed", 5, False, id="NonIndexed"),
    pytest.param("Indexed", 10, False, id="Indexed, completions above parallelism"),
])
def test_under_workload_with_job_only_an_indexed_job_of_completions_parallelism_is_a_gang(cli, tmp_path, mode,
                                                                                           completions, is_gang):
    # Recorded on the rig (tests/fixtures/rig-gang/job-*): the Job controller makes a Workload and a
    # PodGroup (gang minCount = parallelism) only for an Indexed Job whose completions equal its parallelism.
    job = _job()
    job["spec"].update(completionMode=mode, completions=completions)
    r = cli("plan", "-f", _file(tmp_path, PRIORITY_CLASS, job), "--snapshot", GPU_CLUSTER, "-o", "json",
            "--feature-gates", "GenericWorkload=true,WorkloadWithJob=true")
    w = json.loads(r.stdout)["workloads"][0]
    assert ("gang" in w) is is_gang
    if is_gang:
        assert w["gang"]["minCount"] == 5
        assert w["gang"]["kept"] is False
