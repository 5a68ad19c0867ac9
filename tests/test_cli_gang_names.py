"""Naming a gang on the command line (issue 43: "a user names a gang by any member pod, or
`podgroup/NAME`, `job/NAME`"): kubectl's TYPE/NAME for the three PodGroup APIs, resolved to the
gang's members; `plan` and `preempt --dry-run` of a gang on a snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kresched.cli.resolve import Workload, parse_target
from kresched.errors import ExitCode, InputError
from kresched.sources.snapshot import encode_snapshot
from tests.builders import gang_member, make_node, make_pod, make_state
from tests.clirun import run_cli


@pytest.mark.parametrize(("ref", "want"), [
    ("podgroup/train", Workload("PodGroup", "ml", "train")),
    ("pg/train", Workload("PodGroup", "ml", "train")),
    ("pgs/train", Workload("PodGroup", "ml", "train")),
    ("podgroups/train", Workload("PodGroup", "ml", "train")),
    ("podgroup.scheduling.k8s.io/train", Workload("PodGroup", "ml", "train", "workload")),
    ("podgroups.v1alpha2.scheduling.k8s.io/train", Workload("PodGroup", "ml", "train", "workload")),
    ("pg.scheduling.x-k8s.io/train", Workload("PodGroup", "ml", "train", "coscheduling")),
    ("podgroups.v1alpha1.scheduling.x-k8s.io/train", Workload("PodGroup", "ml", "train", "coscheduling")),
    ("podgroup.scheduling.volcano.sh/train", Workload("PodGroup", "ml", "train", "volcano")),
    ("job/train", Workload("Job", "ml", "train")),
    ("train-0", "ml/train-0"),
])
def test_a_gang_is_named_as_kubectl_names_a_pod_group_of_each_api(ref, want):
    assert parse_target(ref, "ml") == want


@pytest.mark.parametrize(("ref", "error"), [
    ("podgroup.example.com/train", 'the server doesn\'t have a resource type "podgroup.example.com" (PodGroups '
                                   "kresched reads: podgroup.scheduling.k8s.io, podgroup.scheduling.x-k8s.io, "
                                   "podgroup.scheduling.volcano.sh)"),
    ("podgroups.v1.scheduling.x-k8s.io/train", 'the server doesn\'t have a resource type '
                                               '"podgroups.v1.scheduling.x-k8s.io"'),
])
def test_a_pod_group_of_another_group_or_version_is_refused_as_kubectl_refuses_it(ref, error):
    with pytest.raises(InputError) as exc:
        parse_target(ref, "ml")
    assert exc.value.message.startswith(error)


def _snapshot(tmp_path: Path, workers: int = 3, flavor: str = "coscheduling", extra: list | None = None) -> str:
    nodes = [make_node(f"node-{c}", cpu="4") for c in "abc"]
    low = [make_pod(f"low-{c}", "batch", node=f"node-{c}", cpu="3", priority=100, grace=5, owner="ReplicaSet/low-7d")
           for c in "abc"]
    gang = [make_pod(f"train-{i}", "ml", cpu="3", priority=1000, owner="Job/train",
                     tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}],
                     **gang_member("train", flavor=flavor)) for i in range(workers)]
    path = tmp_path / "cluster.json"
    path.write_bytes(encode_snapshot(make_state(nodes, [*low, *gang, *(extra or [])])))
    return str(path)


def test_plan_of_a_pod_group_plans_its_members_as_one(monkeypatch, tmp_path):
    run = run_cli(monkeypatch, "plan", "podgroup/train", "-n", "ml", "--snapshot", _snapshot(tmp_path), "-o", "json")
    assert run.exit_code == ExitCode.OK, run.stderr
    out = json.loads(run.stdout)
    assert [p["pod"] for p in out["plans"]] == ["ml/train-0", "ml/train-1", "ml/train-2"]
    [gang] = out["gangs"]
    assert (gang["gang"], gang["kept"]) == ("PodGroup ml/train", True)


@pytest.mark.parametrize("spelling", ["ml/train-2", "podgroup/train -n ml", "job/train -n ml",
                                      "podgroup.scheduling.x-k8s.io/train -n ml"])
def test_preempt_dry_run_of_a_gang_by_any_name_rehearses_the_whole_gang(monkeypatch, tmp_path, spelling):
    run = run_cli(monkeypatch, "preempt", *spelling.split(), "--snapshot", _snapshot(tmp_path), "--dry-run",
                  "-o", "json")
    assert run.exit_code == ExitCode.OK, run.stderr
    summary = [json.loads(line) for line in run.stdout.splitlines()][-1]
    assert summary["gang"] == "PodGroup ml/train"
    assert summary["message"] == "PodGroup ml/train: 3 members would be bound after evicting 3 pods (dry run)"


def test_the_table_shows_the_gangs_plan_each_step_and_a_closing_line(monkeypatch, tmp_path):
    run = run_cli(monkeypatch, "preempt", "podgroup/train", "-n", "ml", "--snapshot", _snapshot(tmp_path),
                  "--dry-run")
    assert run.exit_code == ExitCode.OK, run.stderr
    out = run.stdout
    assert "3 Pending members of PodGroup ml/train, planned in priority order:" in out
    assert "all 3 members of PodGroup ml/train would run (minCount 3): 3 after evicting 3 pods" in out
    assert "(dry run) would reserve node node-a for PodGroup ml/train (ml/train-0; taint" in out
    assert "members: ml/train-0 → node-a, ml/train-1 → node-b, ml/train-2 → node-c" in out
    assert "(dry run) would evict batch/low-a (grace 5s)" in out
    assert out.rstrip().endswith("PodGroup ml/train: 3 members would be bound after evicting 3 pods (dry run)")


def test_a_gang_that_cannot_start_is_exit_3_on_a_snapshot_too(monkeypatch, tmp_path):
    run = run_cli(monkeypatch, "preempt", "podgroup/train", "-n", "ml", "--snapshot", _snapshot(tmp_path, 4),
                  "--dry-run", "-o", "json")
    assert run.exit_code == ExitCode.INFEASIBLE
    summary = [json.loads(line) for line in run.stdout.splitlines()][-1]
    assert summary["outcome"] == "infeasible"
    assert [m["outcome"] for m in summary["members"]] == ["not-placed"] * 4


def test_a_name_two_apis_declare_must_say_which(monkeypatch, tmp_path):
    volcano = make_pod("train-v", "ml", cpu="1", priority=1000, **gang_member("train", flavor="volcano"))
    snapshot = _snapshot(tmp_path, extra=[volcano])
    run = run_cli(monkeypatch, "preempt", "podgroup/train", "-n", "ml", "--snapshot", snapshot, "--dry-run")
    assert run.exit_code == ExitCode.USAGE
    assert ("names 2 gangs (PodGroup ml/train of coscheduling, PodGroup ml/train of volcano): name one, "
            "podgroup.scheduling.x-k8s.io/train or podgroup.scheduling.volcano.sh/train") in run.stderr
    run = run_cli(monkeypatch, "preempt", "podgroup.scheduling.volcano.sh/train", "-n", "ml", "--snapshot", snapshot,
                  "--dry-run", "-o", "json")
    assert [json.loads(line) for line in run.stdout.splitlines()][-1]["flavor"] == "volcano"
