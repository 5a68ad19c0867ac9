"""`--scheduler-config FILE` (and `KRESCHED_SCHEDULER_CONFIG`) on the commands that simulate the
scheduler, run in-process on snapshot files: the cluster's profiles decide where pods land, a pod
of a scheduler no profile names is left to it (or simulated with `--simulate-other-schedulers`), a
file kube-scheduler would refuse is one `error:` line and exit 2 before anything is read, and what
kresched cannot simulate is said in every answer it could change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import make_node, make_pod
from tests.clirun import Result, reset_env, run_cli
from tests.extender_server import closed_port
from tests.test_cli_plan import write

Run = Callable[..., Result]

MOST_ALLOCATED = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
- schedulerName: spreader
"""


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    def run(*args: str, env: dict[str, str] | None = None) -> Result:
        return run_cli(monkeypatch, *args, env=env)

    yield run
    reset_env()


@pytest.fixture
def cluster(tmp_path: Path) -> str:
    """node-a half full, node-b and node-c empty; a pending pod of each scheduler."""
    return write(tmp_path, [make_node("node-a"), make_node("node-b"), make_node("node-c")], [
        make_pod("half", node="node-a", cpu="2", memory="1Gi"),
        make_pod("p", "shop", cpu="500m", memory="512Mi", priority=2_000_000_000),
        make_pod("other", "shop", cpu="500m", memory="512Mi", priority=2_000_000_000,
                 spec={"schedulerName": "volcano"}),
        make_pod("spread", "shop", cpu="500m", memory="512Mi", priority=2_000_000_000,
                 spec={"schedulerName": "spreader"}),
    ])


def _config(tmp_path: Path, text: str, name: str = "sched.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _plan(cli: Run, cluster: str, pod: str, *extra: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    res = cli("plan", pod, "--snapshot", cluster, "-o", "json", *extra, env=env)
    return res.exit_code, json.loads(res.stdout)


def test_a_profile_decides_where_the_pod_lands(cli: Run, cluster: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, MOST_ALLOCATED)
    code, default = _plan(cli, cluster, "shop/p")
    assert (code, default["node"], "profile" in default) == (0, "node-b", False)
    code, packed = _plan(cli, cluster, "shop/p", "--scheduler-config", cfg)
    assert (code, packed["node"]) == (0, "node-a")


def test_the_environment_variable_names_the_file_too(cli: Run, cluster: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, MOST_ALLOCATED)
    code, packed = _plan(cli, cluster, "shop/p", env={"KRESCHED_SCHEDULER_CONFIG": cfg})
    assert (code, packed["node"]) == (0, "node-a")


def test_each_pod_is_simulated_with_its_schedulers_profile(cli: Run, cluster: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, MOST_ALLOCATED)
    code, plan = _plan(cli, cluster, "shop/spread", "--scheduler-config", cfg)
    assert (code, plan["node"], plan["profile"]) == (0, "node-b", "spreader")


def test_a_pod_of_another_scheduler_is_left_to_it(cli: Run, cluster: str, tmp_path: Path) -> None:
    code, plan = _plan(cli, cluster, "shop/other")
    assert (code, plan["outcome"], plan["node"], plan["profile"]) == (3, "infeasible", None, None)
    assert plan["message"].startswith("scheduled by another scheduler: its schedulerName 'volcano' is not a profile "
                                      "of kresched's default profile")
    code, plan = _plan(cli, cluster, "shop/other", "--simulate-other-schedulers")
    assert (code, plan["outcome"], plan["node"]) == (0, "fits", "node-b")


def test_explain_says_which_profile_it_simulated(cli: Run, cluster: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, MOST_ALLOCATED)
    res = cli("explain", "shop/p", "--snapshot", cluster, "--scheduler-config", cfg, "-o", "json")
    doc = json.loads(res.stdout)
    assert (res.exit_code, doc["profile"], doc["node"]) == (0, "default-scheduler", "node-a")
    res = cli("explain", "shop/spread", "--snapshot", cluster, "--scheduler-config", cfg)
    assert res.exit_code == 0
    assert "simulated with scheduler profile spreader" in res.stdout


def test_explain_of_a_pod_of_another_scheduler_says_so(cli: Run, cluster: str) -> None:
    res = cli("explain", "shop/other", "--snapshot", cluster, "-o", "json")
    doc = json.loads(res.stdout)
    assert (res.exit_code, doc["profile"], doc["otherScheduler"]) == (0, "default-scheduler", "volcano")
    assert doc["warnings"][0].startswith("scheduled by another scheduler ('volcano')")


def test_out_of_tree_plugins_and_unreachable_extenders_are_named_in_the_answers(cli: Run, cluster: str,
                                                                               tmp_path: Path) -> None:
    port = closed_port()
    cfg = _config(tmp_path, f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      enabled: [{{name: Coscheduling}}]
extenders:
- urlPrefix: http://127.0.0.1:{port}/scheduler
  filterVerb: filter
""")
    code, plan = _plan(cli, cluster, "shop/p", "--scheduler-config", cfg)
    assert code == 0
    assert plan["warnings"] == [
        f"scheduler extender http://127.0.0.1:{port}/scheduler (filter): kresched could not reach it (dial tcp "
        f"127.0.0.1:{port}: connect: connection refused), so it does not call it; the scheduler may answer "
        "differently",
        "out-of-tree plugin 'Coscheduling' (multiPoint): kresched cannot simulate it; the scheduler may filter, score "
        "or bind differently from what is shown"]
    res = cli("explain", "shop/p", "--snapshot", cluster, "--scheduler-config", cfg)
    assert "warning: out-of-tree plugin 'Coscheduling'" in res.stdout


def test_a_configmap_holding_the_file_is_read_too(cli: Run, cluster: str, tmp_path: Path) -> None:
    body = "\n".join("    " + line for line in MOST_ALLOCATED.splitlines())
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: sched}}\ndata:\n  config.yaml: |\n{body}\n"
    cfg = _config(tmp_path, text)
    code, packed = _plan(cli, cluster, "shop/p", "--scheduler-config", cfg)
    assert (code, packed["node"]) == (0, "node-a")


@pytest.mark.parametrize(("text", "want"), [
    pytest.param("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
                 "- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 200}\n",
                 "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 200: not in valid range "
                 "[0, 100]", id="a value upstream's validation refuses"),
    pytest.param("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofile: []\n",
                 "profile: unknown field", id="an unknown field"),
    pytest.param("kind: [", "malformed YAML", id="not YAML"),
    pytest.param("apiVersion: v1\nkind: Pod\n", "not a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration",
                 id="another kind"),
])
@pytest.mark.parametrize("command", ["plan", "explain", "preempt", "drain", "rebalance", "reconcile"])
def test_a_bad_file_is_one_error_line_and_exit_2_before_anything_is_read(cli: Run, tmp_path: Path, text: str,
                                                                         want: str, command: str) -> None:
    cfg = _config(tmp_path, text)
    args = {"plan": ["plan"], "explain": ["explain", "shop/p"], "preempt": ["preempt", "shop/p", "--dry-run"],
            "drain": ["drain", "node-a", "--dry-run"], "rebalance": ["rebalance", "--dry-run"],
            "reconcile": ["reconcile", "--dry-run"]}[command]
    # The snapshot does not exist: the configuration is refused before any state is read.
    res = cli(*args, "--snapshot", str(tmp_path / "missing.json"), "--scheduler-config", cfg)
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: --scheduler-config {cfg}: ")
    assert want in res.stderr
    assert res.stderr.count("\n") == 1


def test_a_missing_file_is_named(cli: Run, cluster: str, tmp_path: Path) -> None:
    res = cli("plan", "shop/p", "--snapshot", cluster, "--scheduler-config", str(tmp_path / "nope.yaml"))
    assert (res.exit_code, res.stderr) == (2, f"error: --scheduler-config {tmp_path / 'nope.yaml'}: no such file\n")


def test_drain_places_each_replacement_with_its_profile_and_leaves_other_schedulers_pods_alone(
        cli: Run, tmp_path: Path) -> None:
    path = write(tmp_path, [make_node("node-a"), make_node("node-b"), make_node("node-c")], [
        make_pod("half", node="node-b", cpu="2", memory="1Gi"),
        make_pod("web", node="node-a", cpu="500m", memory="512Mi"),
        make_pod("job", node="node-a", cpu="500m", memory="512Mi", spec={"schedulerName": "volcano"}),
    ])
    cfg = _config(tmp_path, MOST_ALLOCATED)
    res = cli("drain", "node-a", "--snapshot", path, "--dry-run", "-o", "json", "--scheduler-config", cfg)
    doc = json.loads(res.stdout)
    evict = {e["pod"]: e for e in doc["evict"]}
    assert res.exit_code == 0, res.stderr
    assert evict["default/web"]["landsOn"] == "node-b"
    assert (evict["default/job"]["landsOn"], evict["default/job"]["otherScheduler"]) == (None, "volcano")


def test_reconcile_says_once_per_pass_what_it_cannot_simulate(cli: Run, cluster: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                            "profiles:\n- plugins:\n    filter:\n      enabled: [{name: GpuTopology}]\n")
    res = cli("reconcile", "--snapshot", cluster, "--dry-run", "-o", "json", "--scheduler-config", cfg)
    events = [json.loads(line) for line in res.stdout.splitlines()]
    warned = [e for e in events if e["action"] == "simulation-warning"]
    assert res.exit_code == 0, res.stderr
    assert [e["warning"] for e in warned] == [
        "out-of-tree plugin 'GpuTopology' (filter): kresched cannot simulate it; the scheduler may filter, score "
        "or bind differently from what is shown"]


@pytest.mark.parametrize(("make", "want"), [
    pytest.param(lambda p: p.mkdir(), "not a regular file", id="a directory"),
    pytest.param(lambda p: p.write_bytes(b"\x00\x01kind"), "binary data (a NUL byte)", id="binary data"),
    pytest.param(lambda p: p.write_text("a: [" * 600 + "]" * 600), "nested more than", id="nested too deep"),
    pytest.param(lambda p: p.write_text("---\nkind: A\n---\nkind: B\n"), "2 documents", id="two documents"),
    pytest.param(lambda p: p.write_text(""), "empty", id="an empty file"),
])
def test_a_file_that_is_no_configuration_is_refused(cli: Run, cluster: str, tmp_path: Path, make: Any,
                                                    want: str) -> None:
    path = tmp_path / "sched.yaml"
    make(path)
    res = cli("plan", "shop/p", "--snapshot", cluster, "--scheduler-config", str(path))
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: --scheduler-config {path}: ")
    assert want in res.stderr
    assert res.stderr.count("\n") == 1


def test_the_next_command_simulates_the_same_scheduler(cli: Run, tmp_path: Path) -> None:
    """A plan made under a configuration is carried out under it: the command kresched suggests
    next keeps --scheduler-config, --feature-gates and --simulate-other-schedulers (and, after a
    what-if, the manifests' --replicas and --gang)."""
    cluster = write(tmp_path, [make_node("node-a", cpu="2")], [
        make_pod("low", node="node-a", cpu="2", memory="1Gi"),
        make_pod("p", "shop", cpu="1", memory="512Mi", priority=2_000_000_000),
    ])
    cfg = _config(tmp_path, MOST_ALLOCATED)
    gates = "GenericWorkload=true,GangScheduling=true"
    same = f"--scheduler-config {cfg} --feature-gates {gates} --simulate-other-schedulers"
    flags = ("--scheduler-config", cfg, "--feature-gates", gates, "--simulate-other-schedulers")
    plan = cli("plan", "shop/p", "--snapshot", cluster, *flags)
    assert f"kresched preempt shop/p --snapshot {cluster} {same} --dry-run" in plan.stdout
    explain = cli("explain", "shop/p", "--snapshot", cluster, *flags)
    assert f"kresched plan shop/p --snapshot {cluster} {same}" in explain.stdout
    job = tmp_path / "job.yaml"
    job.write_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n"
                   "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: shop}\nspec:\n"
                   "  parallelism: 2\n  completions: 2\n  template:\n    spec:\n      priorityClassName: high\n"
                   "      restartPolicy: Never\n      containers:\n"
                   "      - {name: c, image: busybox, resources: {requests: {cpu: 500m}}}\n")
    what_if = cli("plan", "-f", str(job), "--snapshot", cluster, "--replicas", "2", "--gang", *flags)
    assert (f"kresched preempt -f {job} --snapshot {cluster} --replicas 2 --gang {same} --dry-run"
            in " ".join(what_if.stdout.split())), what_if.stdout
