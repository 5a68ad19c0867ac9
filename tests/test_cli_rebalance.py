"""`kresched rebalance --snapshot demo`: the demo's scale-up scenario (scenario 4), planned offline,
in every output format; bad options are one-line errors."""

from __future__ import annotations

import msgspec
import pytest
import yaml

from kresched.sources.snapshot import load_snapshot
from tests.clirun import run_cli

NEW_POOL = {"worker-d1", "worker-d2"}
POOL_WORKLOADS = ("shop/catalog-", "shop/payments-", "shop/recommendations-")


def plan_json(monkeypatch: pytest.MonkeyPatch, *args: str) -> dict:
    result = run_cli(monkeypatch, "rebalance", "--snapshot", "demo", "--dry-run", "-o", "json", *args)
    assert result.exit_code == 0, result.stderr
    return msgspec.json.decode(result.stdout)


def test_the_scale_up_moves_the_pools_workloads_onto_the_new_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = plan_json(monkeypatch)
    assert doc["moves"]
    for m in doc["moves"]:
        assert m["pod"].startswith(POOL_WORKLOADS), m
        assert {m["to"], *m["candidates"]} <= NEW_POOL, m
        assert m["objective"] == "utilisation"
        assert m["landedOn"] is None  # a dry run carries nothing out
    # The sources got emptier; the new nodes stay below the 50 % target.
    for m in doc["moves"]:
        assert doc["after"][m["from"]]["memory"] < doc["before"][m["from"]]["memory"]
    for node in NEW_POOL:
        assert all(v <= 50 for v in doc["after"][node].values())
    # Within every PodDisruptionBudget, one unit per move.
    budgets = {b.key: b.status.disruptions_allowed for b in load_snapshot("demo").pdbs if b.status}
    spent: dict[str, int] = {}
    for m in doc["moves"]:
        if m["pdb"]:
            spent[m["pdb"]] = spent.get(m["pdb"], 0) + 1
    assert all(n <= budgets[k] for k, n in spent.items())


def test_yaml_is_the_same_document(monkeypatch: pytest.MonkeyPatch) -> None:
    as_json = plan_json(monkeypatch)
    result = run_cli(monkeypatch, "rebalance", "--snapshot", "demo", "--dry-run", "-o", "yaml")
    assert yaml.safe_load(result.stdout) == as_json


def test_the_table_shows_the_diff_per_node_and_each_move(monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_cli(monkeypatch, "rebalance", "--snapshot", "demo", "--dry-run", width=200)
    assert result.exit_code == 0
    assert "Requests / allocatable, before → after" in result.stdout
    d1 = next(line for line in result.stdout.splitlines() if "worker-d1" in line and "→" in line)
    assert "+" in d1
    assert "utilisation" in result.stdout


def test_limits_are_typed_and_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = plan_json(monkeypatch, "--max-moves", "1")
    assert len(doc["moves"]) == 1
    assert doc["limits"] == [{"limit": "max-moves", "value": 1, "scope": None}]


def test_only_the_objectives_asked_for_run(monkeypatch: pytest.MonkeyPatch) -> None:
    assert plan_json(monkeypatch, "--objective", "violations,preferences")["moves"] == []


@pytest.mark.parametrize(("args", "message"), [
    (["--objective", "tidy"], "error: unknown objective 'tidy'"),
    (["--thresholds", "cpu=80", "--target-thresholds", "cpu=50"], "error: --thresholds cpu=80 is above"),
    (["--thresholds", "gpu=5"], "error: --thresholds: unknown resource 'gpu'"),
    (["--timeout", "soon"], "error: --timeout"),
])
def test_bad_options_are_one_line_errors(monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    result = run_cli(monkeypatch, "rebalance", "--snapshot", "demo", "--dry-run", *args)
    assert result.exit_code == 2
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1


def test_acting_on_a_snapshot_needs_dry_run(monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_cli(monkeypatch, "rebalance", "--snapshot", "demo", "--yes")
    assert result.exit_code == 2
    assert "--snapshot is a file, not a cluster" in result.stderr
