"""kresched's own configuration (seed 003: "configured using ConfigMap; the cluster administrator
can enable or disable policies and can tune the rescheduler's aggressiveness"): the
KreschedConfiguration document, its presets, what each setting does to `rebalance` and `reconcile`,
and the flags that override it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kresched.errors import InputError
from kresched.plan.policy import decode_policy, encode_policy, preset
from kresched.plan.rebalance import plan_rebalance
from kresched.plan.rebalance_plans import RebalanceOptions
from tests.builders import make_node, make_pdb, make_pod, make_state
from tests.clirun import Result, reset_env, run_cli
from tests.plan.test_rebalance import cpu_pods
from tests.test_cli_plan import write

HEAD = {"apiVersion": "kresched.io/v1alpha1", "kind": "KreschedConfiguration"}


def test_a_file_without_aggressiveness_is_conservative() -> None:
    """Seed 003: "the rescheduler should only act when it sees particularly bad situations" and
    "try to leave plenty of buffer in disruption budgets"."""
    policy = decode_policy(dict(HEAD))
    assert policy == preset("conservative")
    rb, rc = policy.rebalance, policy.reconcile
    assert (rb.target_thresholds["cpu"], rb.thresholds["cpu"], rb.margin, rb.budget_buffer) == (80, 10, 50, 1)
    assert (rb.max_moves, rb.max_moves_per_node, rb.max_moves_per_namespace) == (5, 1, 2)
    assert (rc.min_pending_seconds, rc.max_evictions, rc.critical_pods, rc.rebalance) == (300.0, 5, True, False)


def test_the_presets_go_from_cautious_to_eager() -> None:
    """A lower threshold for triggering an eviction, more of the budget used, as aggressiveness rises."""
    c, m, a = (preset(n) for n in ("conservative", "moderate", "aggressive"))
    for key in ("cpu", "memory", "pods"):
        assert c.rebalance.target_thresholds[key] > m.rebalance.target_thresholds[key] > \
            a.rebalance.target_thresholds[key]
        assert c.rebalance.thresholds[key] < m.rebalance.thresholds[key] < a.rebalance.thresholds[key]
    assert c.rebalance.margin > m.rebalance.margin > a.rebalance.margin
    assert c.rebalance.budget_buffer > m.rebalance.budget_buffer == a.rebalance.budget_buffer == 0
    assert c.reconcile.max_evictions < m.reconcile.max_evictions < a.reconcile.max_evictions
    assert c.reconcile.min_pending_seconds > m.reconcile.min_pending_seconds > a.reconcile.min_pending_seconds


def test_moderate_is_what_the_flags_default_to() -> None:
    m = preset("moderate")
    assert m.rebalance.options() == RebalanceOptions()
    assert (m.reconcile.max_evictions, m.reconcile.min_pending_seconds, m.reconcile.deadline_seconds,
            m.reconcile.reservation_ttl_seconds, m.reconcile.max_grace_seconds) == (10, 60.0, 240.0, 600.0, 10)


def test_a_setting_overrides_its_preset_and_leaves_the_rest() -> None:
    policy = decode_policy({**HEAD, "aggressiveness": "aggressive",
                            "reconcile": {"criticalPods": False, "minPending": "2m", "maxEvictions": 7},
                            "rebalance": {"objectives": ["utilisation"], "targetThresholds": {"cpu": 90},
                                          "budgetBuffer": 2, "maxMoves": None}})
    assert (policy.reconcile.critical_pods, policy.reconcile.min_pending_seconds, policy.reconcile.max_evictions) \
        == (False, 120.0, 7)
    assert policy.rebalance.objectives == ("utilisation",)
    assert policy.rebalance.target_thresholds == {"cpu": 90, "memory": 40, "pods": 40}
    assert (policy.rebalance.budget_buffer, policy.rebalance.margin) == (2, 1)


def test_a_policy_reads_back_as_itself() -> None:
    for name in ("conservative", "moderate", "aggressive"):
        assert decode_policy(encode_policy(preset(name))) == preset(name)


@pytest.mark.parametrize(("doc", "want"), [
    pytest.param({"apiVersion": "kresched.io/v1", "kind": "KreschedConfiguration"},
                 "not a kresched.io/v1alpha1 KreschedConfiguration (got apiVersion 'kresched.io/v1', kind "
                 "'KreschedConfiguration')", id="another version"),
    pytest.param({**HEAD, "aggressivenes": "aggressive"}, "aggressivenes: unknown field", id="a misspelt field"),
    pytest.param({**HEAD, "aggressiveness": "reckless"},
                 "aggressiveness: Unsupported value: 'reckless': supported values: 'conservative', 'moderate', "
                 "'aggressive'", id="an unknown preset"),
    pytest.param({**HEAD, "reconcile": {"maxEvictions": "5"}}, "reconcile.maxEvictions: must be an integer, got '5'",
                 id="a value of the wrong type"),
    pytest.param({**HEAD, "reconcile": {"maxEvictions": -1}},
                 "reconcile.maxEvictions: Invalid value: -1: must be at least 0", id="a negative count"),
    pytest.param({**HEAD, "reconcile": {"minPending": "soon"}},
                 "reconcile.minPending: must be a duration (90s, 5m), got 'soon'", id="not a duration"),
    pytest.param({**HEAD, "rebalance": {"objectives": ["tidiness"]}},
                 "rebalance.objectives: unknown objective 'tidiness' (one of violations, preferences, utilisation)",
                 id="an unknown objective"),
    pytest.param({**HEAD, "rebalance": {"thresholds": {"gpu": 20}}},
                 "rebalance.thresholds.gpu: unknown resource (one of cpu, memory, pods)", id="an unknown resource"),
    pytest.param({**HEAD, "rebalance": {"thresholds": {"cpu": 90}}},
                 "rebalance: thresholds cpu=90 is above targetThresholds cpu=80", id="thresholds above targets"),
])
def test_a_bad_document_is_one_error_naming_the_field(doc: dict[str, Any], want: str) -> None:
    with pytest.raises(InputError) as exc:
        decode_policy(doc)
    assert exc.value.message.startswith(want)


# -- what the settings do ------------------------------------------------------------------------


def test_the_budget_buffer_keeps_disruptions_in_reserve() -> None:
    """A conservative policy moves a pod only where its PodDisruptionBudget still allows a
    disruption after the move; moderate spends the last one."""
    state = make_state([make_node("busy"), make_node("idle")],
                       cpu_pods("busy", 3, cpu="1"),
                       [make_pdb("web", selector={"app": "web"}, disruptions_allowed=1)])
    moderate = plan_rebalance(state, RebalanceOptions(objectives=("utilisation",)))
    buffered = plan_rebalance(state, RebalanceOptions(objectives=("utilisation",), budget_buffer=1))
    assert [m.pdb for m in moderate.moves] == ["default/web"]
    assert buffered.moves == ()
    assert {s.reason for s in buffered.skipped} == {
        "its PodDisruptionBudget default/web allows 1 disruption(s): moving it would leave fewer than the 1 the "
        "policy keeps in reserve (budgetBuffer)"}


# -- the commands ----------------------------------------------------------------------------------

Run = Callable[..., Result]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    def run(*args: str, env: dict[str, str] | None = None) -> Result:
        return run_cli(monkeypatch, *args, env=env)

    yield run
    reset_env()


@pytest.fixture
def cluster(tmp_path: Path) -> str:
    """node `busy` at 75 % cpu, `idle` empty: above moderate's target (50 %), below conservative's (80 %)."""
    return write(tmp_path, [make_node("busy"), make_node("idle")], cpu_pods("busy", 3, cpu="1"))


def _config(tmp_path: Path, doc: dict[str, Any]) -> str:
    path = tmp_path / "kresched.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _moves(cli: Run, cluster: str, *args: str, env: dict[str, str] | None = None) -> int:
    res = cli("rebalance", "--snapshot", cluster, "--dry-run", "-o", "json", *args, env=env)
    assert res.exit_code == 0, res.stderr
    return len(json.loads(res.stdout)["moves"])


def test_rebalance_acts_on_the_files_thresholds_and_flags_override_them(cli: Run, cluster: str,
                                                                       tmp_path: Path) -> None:
    conservative = _config(tmp_path, dict(HEAD))
    assert _moves(cli, cluster) > 0  # no file: the moderate defaults (busy is above 50 %)
    assert _moves(cli, cluster, "--config", conservative) == 0  # 75 % is not "particularly bad"
    assert _moves(cli, cluster, env={"KRESCHED_CONFIG": conservative}) == 0
    assert _moves(cli, cluster, "--config", conservative, "--target-thresholds", "cpu=50,memory=50,pods=50") > 0


def test_a_disabled_objective_does_not_run(cli: Run, cluster: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, {**HEAD, "aggressiveness": "moderate", "rebalance": {"objectives": ["violations"]}})
    assert _moves(cli, cluster, "--config", cfg) == 0
    assert _moves(cli, cluster, "--config", cfg, "--objective", "utilisation") > 0


def test_reconcile_leaves_critical_pods_alone_when_the_policy_is_off(cli: Run, tmp_path: Path) -> None:
    path = write(tmp_path, [make_node("node-a")], [
        make_pod("low", node="node-a", cpu="2", grace=5),
        make_pod("dns", "kube-system", cpu="3", priority=2_000_000_000, priority_class="system-cluster-critical"),
    ])
    off = _config(tmp_path, {**HEAD, "aggressiveness": "moderate",
                             "reconcile": {"criticalPods": False, "minPending": 0}})
    res = cli("reconcile", "--snapshot", path, "--dry-run", "-o", "json", "--config", off)
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert res.exit_code == 0, res.stderr
    assert summary["evictions"] == 0
    assert summary["stillPending"] == [
        {"pod": "kube-system/dns", "reason": "the critical-pods policy is off (reconcile.criticalPods: false)"}]


@pytest.mark.parametrize("command", ["rebalance", "reconcile", "manifests"])
def test_a_bad_file_is_one_error_line_and_exit_2(cli: Run, tmp_path: Path, command: str) -> None:
    cfg = _config(tmp_path, {**HEAD, "reconcile": {"maxEvictions": "lots"}})
    args = {"rebalance": ["rebalance", "--dry-run", "--snapshot", str(tmp_path / "missing.json")],
            "reconcile": ["reconcile", "--dry-run", "--snapshot", str(tmp_path / "missing.json")],
            "manifests": ["manifests"]}[command]
    res = cli(*args, "--config", cfg)
    assert (res.exit_code, res.stderr) == (
        2, f"error: --config {cfg}: reconcile.maxEvictions: must be an integer, got 'lots'\n")


def test_manifests_put_the_files_into_config_maps_the_cronjob_mounts(cli: Run, tmp_path: Path) -> None:
    cfg = _config(tmp_path, {**HEAD, "reconcile": {"maxEvictions": 3}})
    sched = tmp_path / "sched.yaml"
    sched.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    res = cli("manifests", "--config", cfg, "--scheduler-config", str(sched), "--max-grace", "5", "-o", "json")
    assert res.exit_code == 0, res.stderr
    items = {(o["kind"], o["metadata"]["name"]): o for o in json.loads(res.stdout)["items"]}
    own = yaml.safe_load(items[("ConfigMap", "kresched-config")]["data"]["config.yaml"])
    assert decode_policy(own).reconcile.max_evictions == 3
    assert yaml.safe_load(items[("ConfigMap", "kresched-scheduler-config")]["data"]["config.yaml"])["kind"] \
        == "KubeSchedulerConfiguration"
    pod = items[("CronJob", "kresched")]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["args"] == ["reconcile", "--lease", "kube-system/kresched",
                                 "--config", "/etc/kresched/config/config.yaml",
                                 "--scheduler-config", "/etc/kresched/scheduler/config.yaml",
                                 "--max-grace", "5", "--output", "json"]
    assert container["volumeMounts"] == [
        {"name": "config", "mountPath": "/etc/kresched/config", "readOnly": True},
        {"name": "scheduler-config", "mountPath": "/etc/kresched/scheduler", "readOnly": True}]
    assert pod["volumes"] == [{"name": "config", "configMap": {"name": "kresched-config"}},
                              {"name": "scheduler-config", "configMap": {"name": "kresched-scheduler-config"}}]
    # The Job stops a minute after the policy's deadline (conservative: 4m).
    assert items[("CronJob", "kresched")]["spec"]["jobTemplate"]["spec"]["activeDeadlineSeconds"] == 300
    # No new permission: a pod reads the ConfigMaps it mounts without any.
    assert not any("configmaps" in r["resources"] for r in items[("ClusterRole", "kresched")]["rules"])
