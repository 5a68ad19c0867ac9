"""kresched reads and prints as kubectl does (issue 12), in-process on the demo cluster and over
the fake API server:

- `-o` alone decides the format, never whether stdout is a terminal; tables are plain columns
  that never break a name; pipes are not cut; colour only on a terminal, NO_COLOR honoured;
- kubectl's addressing: positional POD with -n, pod/NAME, NS/NAME, the context's namespace,
  node/NODE, drain -l, options before the verb, --dry-run=none|client|server;
- usage errors are one line with a suggestion; drain --dry-run fails on a blocker nothing clears;
- every --help example runs as written on the demo; dry runs say "would" and show no Python values;
- progress only on a terminal's stderr; completion of pod and node names.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
import yaml

from kresched.cli import app, normalize_args
from kresched.model.cluster import ClusterState
from kresched.sources.snapshot import load_snapshot
from tests.builders import make_node, make_pdb, make_pod
from tests.clirun import DURATION, Result, drained, run_cli
from tests.fakeapi.server import FakeApiServer

CRITICAL = "kube-system/metrics-server-5p9lfwkgvh-mkd72"
CRITICAL_NAME = CRITICAL.split("/")[1]
TRAINER = "ml/train-ranker-v7-95mf5"
COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
ANSI = "\x1b["

Run = Callable[..., Result]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Run:
    def run(*args: str, **kwargs: object) -> Result:
        return run_cli(monkeypatch, *args, **kwargs)  # type: ignore[arg-type]

    return run


@pytest.fixture(scope="module")
def demo() -> ClusterState:
    return load_snapshot("demo")


def test_the_demo_names_these_tests_use_exist(demo: ClusterState) -> None:
    assert demo.pod(CRITICAL) is not None
    assert demo.pod(TRAINER) is not None


# -- 1. one output rule ---------------------------------------------------------------------------

@pytest.mark.parametrize("tty", [False, True], ids=["piped", "on a terminal"])
@pytest.mark.parametrize("args", [
    pytest.param(("plan", "--snapshot", "demo"), id="plan"),
    pytest.param(("explain", CRITICAL, "--snapshot", "demo"), id="explain"),
    pytest.param(("snapshot", "--snapshot", "demo"), id="snapshot"),
    pytest.param(("manifests",), id="manifests"),
])
def test_json_and_yaml_are_the_same_document_whether_or_not_stdout_is_a_terminal(cli: Run, tty: bool,
                                                                                   args: tuple[str, ...]) -> None:
    as_json = cli(*args, "-o", "json", tty=tty)
    as_yaml = cli(*args, "-o", "yaml", tty=tty)
    assert as_json.exit_code == as_yaml.exit_code
    assert ANSI not in as_json.stdout + as_yaml.stdout
    docs = list(yaml.safe_load_all(as_yaml.stdout))
    as_list = json.loads(as_json.stdout)
    assert (as_list if len(docs) == 1 else as_list["items"]) == (docs[0] if len(docs) == 1 else docs)


@pytest.mark.parametrize("args", [
    pytest.param(("preempt", CRITICAL, "--dry-run", "--snapshot", "demo"), id="preempt"),
    pytest.param(("reconcile", "--dry-run", "--snapshot", "demo", "--min-pending", "0"), id="reconcile"),
    pytest.param(("untaint", "--dry-run", "--snapshot", "demo"), id="untaint"),
    pytest.param(("drain", "worker-c1", "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--allow-pending",
                  "--dry-run", "--snapshot", "demo"), id="drain (its pre-flight, then the summary)"),
])
def test_streams_print_one_document_per_event_in_json_and_yaml_and_lines_in_a_table(cli: Run,
                                                                                    args: tuple[str, ...]) -> None:
    lines = cli(*args, "-o", "json").stdout.splitlines()
    events = [json.loads(line) for line in lines]
    assert events[-1]["action"] == "summary"
    docs = list(yaml.safe_load_all(cli(*args, "-o", "yaml").stdout))
    assert [d["action"] for d in docs] == [e["action"] for e in events]
    # Piped, without -o: readable lines, not JSON (kubectl's rule: -o alone decides).
    table = cli(*args).stdout
    assert not any(line.startswith("{") for line in table.splitlines())
    # The closing line, last, says it as kubectl does, and it is the summary document's message.
    assert table.splitlines()[-1].endswith("(dry run)")
    # (how long it took differs from run to run: matched, not compared)
    assert re.sub(DURATION, "T", " ".join(table.splitlines()[-1].split())) == re.sub(DURATION, "T",
                                                                                       events[-1]["message"])


def test_a_format_that_cannot_apply_is_refused_in_one_line(cli: Run) -> None:
    for args in (("manifests", "-o", "table"), ("snapshot", "--snapshot", "demo", "-o", "wide")):
        r = cli(*args)
        assert r.exit_code == 2
        assert r.stdout == ""
        assert re.fullmatch(r"error: -o (table|wide): .*; use -o (json|yaml).*\n", r.stderr)


def test_piped_tables_are_not_cut_and_columns_sets_their_width(cli: Run, demo: ClusterState) -> None:
    piped = cli("plan", "--snapshot", "demo", "--all-pending", "-o", "wide")
    # The runner-up reasons run long: piped, every line is whole, however wide.
    assert max(len(line) for line in piped.stdout.splitlines()) > 100
    assert "…" not in "".join(line for line in piped.stdout.splitlines() if "tier 1:" in line)
    narrow = cli("explain", CRITICAL, "--snapshot", "demo", env={"COLUMNS": "80"})
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80


@pytest.mark.parametrize("width", [60, 80, 200])
def test_names_and_keys_are_never_broken_at_any_width(cli: Run, demo: ClusterState, width: int) -> None:
    known = {n.name for n in demo.nodes} | {p.key for p in demo.pods} | {p.name for p in demo.pods} | {
        "node-role.kubernetes.io/control-plane:NoSchedule", "CriticalAddonsOnly=kresched:NoSchedule", "Burstable"}
    for args in (("explain", TRAINER, "-o", "wide"), ("explain", CRITICAL, "-o", "wide"), ("plan", "--all-pending"),
                 ("plan", "--all-pending", "-o", "wide"), ("drain", "worker-b3", "--dry-run", "--ignore-daemonsets")):
        lines = [line.split() for line in cli(*args, "--snapshot", "demo", width=width).stdout.splitlines()]
        # A name cut at the end of a line would continue at the start of the next one.
        for here, after in itertools.pairwise(lines):
            if here and after:
                assert here[-1] + after[0] not in known, (args, width, here[-1], after[0])
        words = {w.strip(",;:()") for line in lines for w in line}
        if args[:2] == ("explain", CRITICAL):  # a toleration that would make it fit (the trainer's would not)
            assert "node-role.kubernetes.io/control-plane:NoSchedule" in words
        assert not any("┃" in w or "│" in w for w in words)


def test_colour_only_on_a_terminal_and_never_with_no_color(cli: Run) -> None:
    args = ("explain", CRITICAL, "--snapshot", "demo")
    assert ANSI in cli(*args, tty=True).stdout
    assert ANSI not in cli(*args).stdout
    assert ANSI not in cli(*args, tty=True, env={"NO_COLOR": "1"}).stdout
    assert ANSI not in cli(*args, "--no-color", tty=True).stdout


# -- 2. kubectl's addressing ------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    pytest.param(("explain", CRITICAL_NAME, "-n", "kube-system"), id="NAME -n NS"),
    pytest.param(("explain", f"pod/{CRITICAL_NAME}", "--namespace", "kube-system"), id="pod/NAME --namespace NS"),
    pytest.param(("explain", CRITICAL), id="NS/NAME"),
    pytest.param(("explain", "--pod", CRITICAL), id="--pod NS/NAME (the first spelling)"),
    pytest.param(("-n", "kube-system", "explain", CRITICAL_NAME), id="-n before the verb"),
    pytest.param(("--snapshot", "demo", "-ojson", "explain", CRITICAL), id="--snapshot and -o before the verb"),
    pytest.param(("explain", CRITICAL, "-n", "kube-system"), id="NS/NAME agreeing with -n"),
])
def test_every_kubectl_spelling_of_a_pod_names_the_same_pod(cli: Run, args: tuple[str, ...]) -> None:
    extra = () if "--snapshot" in args else ("--snapshot", "demo", "-o", "json")
    r = cli(*args, *extra)
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["pod"] == CRITICAL


def test_a_bare_name_is_looked_up_in_the_default_namespace_of_a_snapshot(cli: Run) -> None:
    r = cli("explain", CRITICAL_NAME, "--snapshot", "demo")
    assert r.exit_code == 2
    assert r.stderr == (f"error: pod default/{CRITICAL_NAME} not found in the snapshot; did you mean {CRITICAL}?\n")


def test_a_namespace_that_contradicts_the_reference_is_refused(cli: Run) -> None:
    r = cli("plan", CRITICAL, "-n", "shop", "--snapshot", "demo")
    assert (r.exit_code, r.stderr) == (2, f"error: pod {CRITICAL} is in namespace kube-system, but -n says shop\n")


def test_plan_and_preempt_take_the_pod_positionally(cli: Run) -> None:
    plan = json.loads(cli("plan", CRITICAL_NAME, "-n", "kube-system", "--snapshot", "demo", "-o", "json").stdout)
    assert (plan["pod"], plan["node"]) == (CRITICAL, "worker-c1")
    events = cli("preempt", f"pod/{CRITICAL_NAME}", "-n", "kube-system", "--dry-run", "--snapshot", "demo",
                 "-o", "json").stdout.splitlines()
    assert json.loads(events[0])["pod"] == CRITICAL


def test_plan_with_a_namespace_plans_only_its_pending_pods(cli: Run) -> None:
    every = json.loads(cli("plan", "--all-pending", "-A", "--snapshot", "demo", "-o", "json").stdout)["plans"]
    ml = json.loads(cli("plan", "--all-pending", "-n", "ml", "--snapshot", "demo", "-o", "json").stdout)["plans"]
    assert {p["pod"] for p in every} == {CRITICAL, TRAINER}
    assert [p["pod"] for p in ml] == [TRAINER]


@pytest.mark.parametrize("nodes", [
    pytest.param(("worker-b3",), id="NODE"),
    pytest.param(("node/worker-b3",), id="node/NODE"),
    pytest.param(("-l", "kubernetes.io/hostname=worker-b3"), id="-l SELECTOR"),
    pytest.param(("--selector", "node.kubernetes.io/ami-family=AmazonLinux2"), id="--selector SELECTOR"),
])
def test_drain_names_nodes_as_kubectl_does(cli: Run, nodes: tuple[str, ...]) -> None:
    r = cli("drain", *nodes, "--ignore-daemonsets", "--dry-run", "--snapshot", "demo", "-o", "json")
    assert drained(r.stdout)["node"] == "worker-b3"


@pytest.mark.parametrize(("spelling", "mode"), [
    pytest.param(("--dry-run",), "dry run", id="bare --dry-run is client"),
    pytest.param(("--dry-run=client",), "dry run", id="--dry-run=client"),
    pytest.param(("--dry-run", "--yes"), "dry run", id="bare --dry-run before another flag"),
])
def test_dry_run_is_spelt_as_kubectl_spells_it(cli: Run, spelling: tuple[str, ...], mode: str) -> None:
    r = cli("preempt", CRITICAL, *spelling, "--snapshot", "demo", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["mode"] == mode


@pytest.mark.parametrize("spelling", ["--dry-run=server", "--server-dry-run", "--dry-run=none"])
def test_only_a_client_dry_run_can_act_on_a_snapshot(cli: Run, spelling: str) -> None:
    r = cli("preempt", CRITICAL, spelling, "--yes", "--snapshot", "demo")
    assert (r.exit_code, r.stderr) == (2, "error: --snapshot is a file, not a cluster: add --dry-run (=client) to "
                                          "rehearse on it\n")


@pytest.mark.parametrize("command", ["reconcile", "untaint"])
@pytest.mark.parametrize("spelling", ["--dry-run=server", "--server-dry-run"])
def test_a_server_dry_run_where_there_is_none_is_refused_not_run_for_real(cli: Run, command: str,
                                                                          spelling: str) -> None:
    r = cli(command, spelling, "--snapshot", "demo")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (f"error: {command} has no --dry-run=server (its writes are not all dry-run-able); use "
                        "--dry-run (=client)\n")


def test_normalize_args_moves_common_options_after_the_verb_and_leaves_the_rest() -> None:
    verbs = ["plan", "drain"]
    assert normalize_args(["-n", "a", "--snapshot=demo", "-ojson", "plan", "x"], verbs) == [
        "plan", "-n", "a", "--snapshot=demo", "-ojson", "x"]
    assert normalize_args(["drain", "n1", "--dry-run", "--", "--dry-run"], verbs) == [
        "drain", "n1", "--dry-run=client", "--", "--dry-run"]
    assert normalize_args(["--server-dry-run"], verbs) == ["--dry-run=server"]
    assert normalize_args(["--version"], verbs) == ["--version"]
    # Global options after the verb go before it; kubectl's `-o=json`.
    assert normalize_args(["plan", "x", "--request-timeout", "3", "-o=json"], verbs) == [
        "--request-timeout", "3", "plan", "x", "-o", "json"]
    assert normalize_args(["--max-input=1Gi", "-n", "a", "plan"], verbs) == ["--max-input=1Gi", "plan", "-n", "a"]


def test_the_default_namespace_is_the_kubeconfig_contexts(cli: Run, fake_api: FakeApiServer, tmp_path: Path) -> None:
    fake_api.load(load_snapshot("demo"))
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kc", namespace="kube-system")
    r = cli("explain", CRITICAL_NAME, "--kubeconfig", str(kubeconfig), "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["pod"] == CRITICAL
    elsewhere = fake_api.write_kubeconfig(tmp_path / "kc2", namespace="shop")
    r = cli("plan", CRITICAL_NAME, "--kubeconfig", str(elsewhere))
    assert r.exit_code == 2
    assert f"pod shop/{CRITICAL_NAME} not found in the cluster; did you mean {CRITICAL}?" in r.stderr


# -- 5. errors ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "expected"), [
    pytest.param(("plna",), "error: unknown command 'plna'; did you mean 'plan'? (see 'kresched --help')",
                 id="an unknown command"),
    pytest.param(("plan", "--pdo", "x"), "error: unknown flag: --pdo; did you mean --pod? (see 'kresched plan --help')",
                 id="an unknown flag"),
    pytest.param(("drain", "worker-b3", "--ignore-daemonset"), "error: unknown flag: --ignore-daemonset; did you "
                 "mean --ignore-daemonsets? (see 'kresched drain --help')", id="a flag one letter short"),
    pytest.param(("plan", "--snapshot", "Demo"), "error: --snapshot Demo: no such file or directory; did you mean "
                 "--snapshot demo?", id="a snapshot name in the wrong case"),
    pytest.param(("explain", "kube-system/metrics-server", "--snapshot", "demo"), "error: pod "
                 f"kube-system/metrics-server not found in the snapshot; did you mean {CRITICAL}", id="a pod"),
    pytest.param(("drain", "worker-b4", "--snapshot", "demo", "--dry-run"), "error: node worker-b4 not found; did "
                 "you mean worker-b1, worker-b2, worker-b3?", id="a node (each one edit away)"),
    pytest.param(("drain", "--snapshot", "demo"), "error: a node is required: NODE..., node/NODE or -l SELECTOR",
                 id="no node"),
    pytest.param(("explain", "--snapshot", "demo"), "error: a pod is required: POD, pod/NAME or NAMESPACE/NAME (e.g. "
                 "-n kube-system POD)", id="no pod"),
    pytest.param(("preempt", CRITICAL, "--dry-run=maybe", "--snapshot", "demo"), "error: invalid value for "
                 "'--dry-run'", id="a --dry-run value kubectl does not know"),
    pytest.param(("plan", "-o", "xml"), "error: invalid value for '--output' / '-o'", id="an unknown format"),
    pytest.param(("drain", "worker-b3", "--parallel", "0"), "error: invalid value for '--parallel': 0 is less than 1 "
                 "(see 'kresched drain --help')", id="a number out of range"),
])
def test_usage_errors_are_one_line_with_a_suggestion_and_exit_2(cli: Run, args: tuple[str, ...],
                                                                expected: str) -> None:
    r = cli(*args)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.startswith(expected)
    assert r.stderr.count("\n") == 1
    assert "Traceback" not in r.stderr


def _drain_snapshot(tmp_path: Path, disruptions_allowed: int) -> str:
    from tests.test_cli_plan import write

    nodes = [make_node("node-a", cpu="4"), make_node("node-b", cpu="4")]
    pods = [make_pod("web-0", "shop", node="node-a", cpu="1", labels={"app": "web"}, owner="ReplicaSet/web-1"),
            make_pod("web-1", "shop", node="node-b", cpu="1", labels={"app": "web"}, owner="ReplicaSet/web-1")]
    pdb = make_pdb("web", "shop", selector={"app": "web"}, disruptions_allowed=disruptions_allowed)
    return write(tmp_path, nodes, pods, [pdb])


def test_drain_dry_run_fails_when_a_budget_nothing_gives_back_blocks_it(cli: Run, tmp_path: Path) -> None:
    source = _drain_snapshot(tmp_path, disruptions_allowed=0)
    r = cli("drain", "node-a", "--dry-run", "--snapshot", source, "-o", "json")
    assert r.exit_code == 3
    assert drained(r.stdout)["evict"][0]["blocked"]
    assert r.stderr == ("error: the drain would not finish: 1 eviction would be refused by a PodDisruptionBudget "
                        "that nothing the drain does gives back (shop/web-0), so the drain would stop unfinished at "
                        "--timeout 10m\n")
    forever = cli("drain", "node-a", "--dry-run", "--timeout", "0", "--snapshot", source)
    assert forever.exit_code == 3
    assert "would wait forever (--timeout 0)" in forever.stderr


def test_drain_dry_run_passes_when_the_budget_allows_it(cli: Run, tmp_path: Path) -> None:
    r = cli("drain", "node-a", "--dry-run", "--snapshot", _drain_snapshot(tmp_path, disruptions_allowed=1))
    assert (r.exit_code, r.stderr) == (0, "")
    assert "allowed" in r.stdout


# -- 6. help and narration ------------------------------------------------------------------------------

def _help(cli: Run, command: str) -> str:
    r = cli(command, "--help")
    assert r.exit_code == 0
    return r.stdout


def _examples(text: str) -> list[str]:
    block = text.split("Examples:", 1)[1] if "Examples:" in text else ""
    return [line.strip() for line in block.splitlines() if line.strip().startswith("kresched ")]


def _docstring_examples() -> list[str]:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    return [e for name in COMMANDS for e in _examples(commands[name].help or "")]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_reads_as_kubectls_and_has_examples_on_the_demo(cli: Run, command: str) -> None:
    text = _help(cli, command)
    assert not re.search(r"<[a-z\[\]]+>", text), "a type in angle brackets (<bool>, <str>, <list[str]>)"
    assert "x>=" not in text
    assert "╭" not in text
    examples = _examples(text)
    assert examples, f"kresched {command} --help has no examples"
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert examples == _examples(commands[command].help or "")  # shown as written, not rewrapped
    for example in examples:
        assert "--snapshot demo" in example or command in ("manifests", "version", "help"), example


@pytest.mark.parametrize("example", [pytest.param(e, id=e) for e in _docstring_examples()])
def test_every_help_example_runs_as_written(cli: Run, example: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # `snapshot --file` writes here
    r = cli(*shlex.split(example)[1:])
    assert "Traceback" not in r.stderr
    # 3: the demo's drain would not finish and its trainer pod fits nowhere, as documented.
    assert r.exit_code in (0, 3), f"{example}: exit {r.exit_code}: {r.stderr}"
    assert r.stdout.strip() or Path(tmp_path).iterdir(), example


@pytest.mark.parametrize("args", [
    pytest.param(("preempt", CRITICAL, "--dry-run"), id="preempt"),
    pytest.param(("reconcile", "--dry-run", "--min-pending", "0"), id="reconcile"),
    pytest.param(("untaint", "--dry-run"), id="untaint"),
])
def test_dry_runs_say_would_and_show_no_python_values(cli: Run, args: tuple[str, ...]) -> None:
    out = cli(*args, "--snapshot", "demo").stdout
    for python in ("None", "True", "False", "✓"):
        assert python not in out, python
    for past in ("· (dry run) evicted", "· (dry run) reserved", "· (dry run) released", "live state"):
        assert past not in out
    assert "would " in out


def test_untaint_dry_run_on_the_demo_would_remove_its_leftover_reservation(cli: Run) -> None:
    r = cli("untaint", "--dry-run", "--snapshot", "demo")
    assert r.exit_code == 0
    assert "(dry run) would release node worker-a2" in r.stdout
    assert r.stdout.splitlines()[-1] == "node/worker-a2 untainted (dry run)"


# -- 4. progress ----------------------------------------------------------------------------------------

def test_progress_while_listing_a_cluster_counts_the_objects_read(cli: Run, fake_api: FakeApiServer,
                                                                   fake_kubeconfig: Path) -> None:
    fake_api.load(load_snapshot("demo"))
    args = ("plan", "--all-pending", "--kubeconfig", str(fake_kubeconfig))
    on_terminal = cli(*args, stderr_tty=True)
    assert on_terminal.exit_code in (0, 3), on_terminal.stderr
    # One status per page (the terminal shows the latest at each refresh); the pods are listed last.
    assert f"listing Pods from \"{fake_api.context}\": 110 so far" in on_terminal.stderr
    assert cli(*args).stderr == ""


def test_progress_is_shown_on_a_terminals_stderr_only_and_never_with_json(cli: Run) -> None:
    args = ("plan", "--all-pending", "--snapshot", "demo")
    on_terminal = cli(*args, stderr_tty=True)
    assert "reading the demo cluster" in on_terminal.stderr
    assert "read 10 nodes, 110 pods" in on_terminal.stderr  # a status line is cut at the width
    assert "planning pending pods: 1 of 2 done" in on_terminal.stderr
    assert "reading" not in on_terminal.stdout
    assert cli(*args).stderr == ""
    assert cli(*args, "-o", "json", stderr_tty=True).stderr == ""
    drain = cli("drain", "worker-b3", "--dry-run", "--ignore-daemonsets", "--snapshot", "demo", "--allow-pending",
                stderr_tty=True)
    assert "simulating the drain of worker-b3" in drain.stderr


# -- 7. completion ---------------------------------------------------------------------------------------

def _complete(cli_env: dict[str, str], words: str) -> list[str]:
    from typer.testing import CliRunner

    parts = words.split(" ")
    env = {"_KRESCHED_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1), **cli_env}
    r = CliRunner().invoke(app, [], env=env, prog_name="kresched")
    assert r.exit_code == 0, r.output
    return [line.split(",", 1)[-1] for line in r.output.splitlines() if line]


@pytest.mark.parametrize(("words", "expected"), [
    pytest.param("kresched explain --snapshot demo -n kube-system metrics-", [CRITICAL_NAME], id="a pod in -n"),
    pytest.param("kresched -n ml --snapshot demo plan train", [TRAINER.split("/")[1]], id="options before the verb"),
    pytest.param("kresched preempt --snapshot demo ml/", [TRAINER, "ml/feature-server-t5d789jgpp-689rs"],
                 id="NS/ completes that namespace, pending pods first"),
    pytest.param("kresched drain --snapshot demo worker-b", ["worker-b1", "worker-b2", "worker-b3"], id="nodes"),
    pytest.param("kresched untaint --snapshot demo node/worker-a", ["node/worker-a1", "node/worker-a2"],
                 id="node/ keeps its prefix"),
    pytest.param("kresched drain --snapshot nowhere.json worker-", [], id="an unreadable snapshot completes nothing"),
])
def test_pod_and_node_names_complete_from_the_snapshot(words: str, expected: list[str]) -> None:
    assert _complete({}, words) == expected


def test_pod_and_node_names_complete_from_the_cluster(fake_api: FakeApiServer, fake_kubeconfig: Path) -> None:
    fake_api.load(load_snapshot("demo"))
    env = {"KUBECONFIG": str(fake_kubeconfig)}
    assert _complete(env, "kresched drain worker-c") == ["worker-c1", "worker-c2"]
    assert _complete(env, "kresched explain -n ml train") == [TRAINER.split("/")[1]]
    assert _complete(env, "kresched plan ml/train") == [TRAINER]
    # One namespaced pod list, not the whole cluster's.
    assert fake_api.calls("/api/v1/namespaces/ml/pods")
    assert not fake_api.calls("/api/v1/pods")


def test_completion_against_an_unreachable_cluster_completes_nothing(closed_port_url: str, fake_api: FakeApiServer,
                                                                     tmp_path: Path) -> None:
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kc", server=closed_port_url)
    assert _complete({"KUBECONFIG": str(kubeconfig)}, "kresched drain worker-") == []


# -- 8. what an 80-column terminal shows ------------------------------------------------------------

@pytest.mark.parametrize(("name", "args"), [
    pytest.param("plan_demo_80.txt", ("plan", "--all-pending"), id="plan"),
    pytest.param("explain_demo_critical_addon.txt", ("explain", CRITICAL), id="explain"),
    pytest.param("drain_demo_dry_run_80.txt", ("drain", "worker-b3", "--ignore-daemonsets", "--dry-run"),
                 id="drain --dry-run"),
])
def test_the_demo_at_80_columns_matches_the_golden_files(cli: Run, golden: Callable[[str, str], None], name: str,
                                                          args: tuple[str, ...]) -> None:
    r = cli(*args, "--snapshot", "demo", width=80)
    assert r.exit_code in (0, 3)
    # Every line fits: the demo's names are short enough that nothing needs to run long.
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
    # Trailing blanks where rich wraps prose are not compared (editors strip them from golden files).
    golden(name, "".join(line.rstrip() + "\n" for line in r.stdout.splitlines()))


def test_completion_against_a_server_that_never_answers_gives_up_and_completes_nothing(fake_api: FakeApiServer,
                                                                                      tmp_path: Path) -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections are queued, never answered
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        kubeconfig = fake_api.write_kubeconfig(tmp_path / "kc", server=url)
        assert _complete({"KUBECONFIG": str(kubeconfig)}, "kresched drain worker-") == []
