"""What an operator sees in an 80-column terminal (issue 31), on the demo cluster:

- every table of every command fits the width — the terminal's, or COLUMNS on a pipe — without
  splitting a name; the columns that do not fit move under their row, so nothing is lost (and the
  same holds on a cluster whose node names are an EKS's, 42 characters long);
- a plan of several pods ends with a tally and the commands that come next, each pod's plan only
  under -o wide; a plan of one pod ends with its next command;
- nothing is left out silently: what a command skips is named with the flag that includes it, and
  an unknown namespace, pod or workload is named as what it is;
- kubectl's TYPE/NAME names a workload, resolved to its pods through their owner references;
  kubectl's spellings of flags (`--flag=false`, `-o=json`, global flags after the verb) and its
  `version` command work; `--help` does not cut its own lines.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from rich.console import Console
from rich.text import Text

from kresched.model.cluster import ClusterState
from kresched.render.table import Columns, Command, wrap_words
from kresched.sources.snapshot import encode_snapshot, load_snapshot
from tests.builders import make_node, make_pod, make_state
from tests.clirun import DURATION, Result, run_cli

DEMO_FILE = Path(__file__).resolve().parent.parent / "kresched" / "demo" / "cluster.yaml"
CRITICAL = "kube-system/metrics-server-5p9lfwkgvh-mkd72"
TRAINER = "ml/train-ranker-v7-95mf5"
RUNNING = "shop/catalog-hkjg49km7-wj9sl"

Run = Callable[..., Result]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Run:
    def run(*args: str, **kwargs: object) -> Result:
        return run_cli(monkeypatch, *args, **kwargs)  # type: ignore[arg-type]

    return run


@pytest.fixture(scope="module")
def demo() -> ClusterState:
    return load_snapshot("demo")


def eks_names(text: str) -> str:
    """The demo with its nodes named as an EKS names them (`ip-10-0-16-195.eu-west-1.compute.internal`)."""
    def name(m: re.Match[str]) -> str:
        n = sum(ord(c) for c in m.group(0))
        return f"ip-10-0-{n % 200}-{n % 97 + 100}.eu-west-1.compute.internal"

    return re.sub(r"\b(?:worker-[a-d][0-9]|cp-1)\b", name, text)


@pytest.fixture(scope="module")
def eks(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("eks") / "cluster.yaml"
    path.write_text(eks_names(DEMO_FILE.read_text()))
    return str(path)


# -- 1. every table fits 80 columns ------------------------------------------------------------------

TABLES = [
    pytest.param(("drain", "worker-b1", "--ignore-daemonsets", "--delete-emptydir-data", "--dry-run"),
                 id="drain --dry-run (the busiest node)"),
    pytest.param(("drain", "worker-b3", "--ignore-daemonsets", "--dry-run", "-o", "wide"),
                 id="drain --dry-run -o wide"),
    pytest.param(("rebalance", "--dry-run"), id="rebalance --dry-run"),
    pytest.param(("rebalance", "--dry-run", "-o", "wide"), id="rebalance --dry-run -o wide"),
    pytest.param(("plan",), id="plan"),
    pytest.param(("plan", "--all-pending"), id="plan --all-pending"),
    pytest.param(("plan", "--all-pending", "-o", "wide"), id="plan --all-pending -o wide"),
    pytest.param(("plan", CRITICAL, "-o", "wide"), id="plan POD -o wide"),
    pytest.param(("plan", TRAINER), id="plan of an infeasible pod"),
    pytest.param(("explain", CRITICAL), id="explain"),
    pytest.param(("explain", TRAINER, "--all-nodes", "-o", "wide"), id="explain --all-nodes -o wide"),
    pytest.param(("explain", RUNNING, "-o", "wide"), id="explain of a running pod -o wide (every score)"),
    pytest.param(("preempt", CRITICAL, "--dry-run", "-o", "wide"), id="preempt --dry-run"),
    pytest.param(("reconcile", "--dry-run", "--min-pending", "0", "--rebalance"), id="reconcile --dry-run --rebalance"),
    pytest.param(("untaint", "--dry-run"), id="untaint --dry-run"),
]


def known_names(state: ClusterState) -> set[str]:
    return {n.name for n in state.nodes} | {p.key for p in state.pods} | {p.name for p in state.pods} | {
        f"{c.kind}/{c.name}" for p in state.pods if (c := p.controller) is not None} | {b.key for b in state.pdbs}


def words(text: str) -> set[str]:
    return {w.strip(",;:()·") for w in text.split()}


def check_fits(narrow: str, wide: str, names: set[str], width: int = 80) -> None:
    lines = narrow.splitlines()
    assert max(len(line) for line in lines) <= width, next(line for line in lines if len(line) > width)
    # A name cut at the end of a line would continue at the start of the next one.
    for here, after in itertools.pairwise(line.split() for line in lines):
        if here and after:
            assert here[-1] + after[0] not in names, (here[-1], after[0])
    # What left a column is under its row: every name the wide output shows, the narrow one shows.
    assert words(wide) & names <= words(narrow) & names, (words(wide) & names) - words(narrow)


@pytest.mark.parametrize("args", TABLES)
def test_every_table_of_the_demo_fits_80_columns_without_splitting_a_name(cli: Run, demo: ClusterState,
                                                                           args: tuple[str, ...]) -> None:
    narrow = cli(*args, "--snapshot", "demo", width=80)
    wide = cli(*args, "--snapshot", "demo", width=400)
    assert narrow.exit_code == wide.exit_code
    check_fits(narrow.stdout, wide.stdout, known_names(demo))
    # Piped, COLUMNS is the width: the same lines (but for what depends on time).
    piped = cli(*args, "--snapshot", "demo", env={"COLUMNS": "80"})
    assert timeless(piped.stdout) == timeless(narrow.stdout)


#: How long a run took, after "in" (`done in 0.1s`, `moved in 2m03s`).
_DURATION = re.compile(rf"(?<=\bin ){DURATION}")


def timeless(text: str) -> list[str]:
    """What of a run's output does not depend on time: how long it took masked, and its lines
    taken as a multiset of entries (each line with the indented lines that continue it) — workers
    that act in parallel (a rebalance's workloads) report in the order the threads ran."""
    entries: list[str] = []
    for line in _DURATION.sub("…", text).splitlines():
        if entries and line.startswith(" "):
            entries[-1] += "\n" + line
        else:
            entries.append(line)
    return sorted(entries)


def test_what_depends_on_time_is_not_compared() -> None:
    one = "· moved shop/a: n1 → n2\n  (as predicted)\n· moved shop/b: n1 → n3\npass done in 0.0s: 2 pods\n"
    two = "· moved shop/b: n1 → n3\n· moved shop/a: n1 → n2\n  (as predicted)\npass done in 1m02s: 2 pods\n"
    assert timeless(one) == timeless(two)
    assert timeless(one) != timeless(one.replace("n3", "n4"))
    assert timeless("bound in 10.5s (1 pod evicted)") == ["bound in … (1 pod evicted)"]


@pytest.mark.parametrize("args", TABLES)
def test_the_tables_fit_80_columns_with_an_eks_clusters_node_names_too(cli: Run, eks: str,
                                                                        args: tuple[str, ...]) -> None:
    names = known_names(load_snapshot(eks))
    args = tuple(eks_names(a) for a in args)
    narrow = cli(*args, "--snapshot", eks, width=80)
    wide = cli(*args, "--snapshot", eks, width=400)
    assert narrow.exit_code == wide.exit_code, narrow.stderr
    # The suggested commands name the snapshot's path: the one line allowed to run long.
    keep = [line for line in narrow.stdout.splitlines() if eks not in line]
    check_fits("\n".join(keep), wide.stdout, names)


def test_a_column_that_does_not_fit_moves_under_its_row_and_says_what_it_was(cli: Run) -> None:
    out = cli("drain", "worker-b1", "--ignore-daemonsets", "--delete-emptydir-data", "--dry-run", "--snapshot", "demo",
              width=80).stdout
    lines = out.splitlines()
    assert lines[1].split() == ["POD", "EVICTION", "LANDS", "ON"]
    row = next(i for i, line in enumerate(lines) if line.startswith("ingress-nginx/ingress-nginx-controller-"))
    assert lines[row].split()[1:] == ["allowed", "worker-b2"]
    assert lines[row + 1] == "    pdb: ingress-nginx/ingress-nginx-controller"
    # A pod without a PDB gets no empty note.
    row = next(i for i, line in enumerate(lines) if line.startswith("shop/catalog-"))
    assert not lines[row + 1].startswith("    pdb:")


def render(renderable: object, width: int) -> list[str]:
    console = Console(width=width, file=None, color_system=None, legacy_windows=False)
    with console.capture() as cap:
        console.print(renderable, crop=False)
    return cap.get().splitlines()


def table() -> Columns:
    t = Columns("POD", "PDB", "STATUS", "NODE", movable=("PDB", "NODE"))
    t.add_row("shop/web-7d9f-abcde", "shop/web-budget", "allowed", "node-a")
    t.add_row("shop/api-0", "-", "blocked", "node-b")
    return t


@pytest.mark.parametrize(("width", "header", "notes"), [
    pytest.param(80, "POD PDB STATUS NODE", [], id="a table that fits keeps every column"),
    pytest.param(45, "POD STATUS NODE", ["pdb: shop/web-budget"],
                 id="the first movable column leaves first, its cells under their rows"),
    pytest.param(32, "POD STATUS", ["pdb: shop/web-budget · node: node-a", "node: node-b"],
                 id="then the next, on the same note line; an empty cell makes no note"),
    pytest.param(10, "POD STATUS", ["pdb: shop/web-budget · node: node-a", "node: node-b"],
                 id="what must stay runs long rather than break a name"),
])
def test_movable_columns_leave_in_order_until_the_table_fits(width: int, header: str, notes: list[str]) -> None:
    lines = render(table(), width)
    assert " ".join(lines[0].split()) == header
    found: list[str] = []
    for line in lines:
        if line.startswith("      "):  # a note's continuation
            found[-1] += " " + line.strip()
        elif line.startswith("    "):
            found.append(line.strip())
    assert found == notes
    assert any(line.startswith("shop/web-7d9f-abcde ") for line in lines)


@pytest.mark.parametrize(("text", "width", "lines"), [
    pytest.param("a b c", 80, ["a b c"], id="what fits is one line"),
    pytest.param("one two three four", 9, ["one two", "three", "four"], id="breaks fall on spaces"),
    pytest.param("see ip-10-0-16-195.eu-west-1.compute.internal now", 20,
                 ["see", "ip-10-0-16-195.eu-west-1.compute.internal", "now"],
                 id="a word longer than the width keeps a line of its own, whole"),
])
def test_text_is_wrapped_only_at_spaces(text: str, width: int, lines: list[str]) -> None:
    assert [t.plain for t in wrap_words(Text(text), width)] == lines


def test_a_command_too_long_for_the_screen_breaks_before_its_options_as_a_shell_reads_it() -> None:
    command = "kresched preempt kube-system/metrics-server-5p9lfwkgvh-mkd72 --snapshot demo --dry-run"
    assert render(Command(command), 100) == [f"  {command}"]
    assert render(Command(command), 80) == [
        "  kresched preempt kube-system/metrics-server-5p9lfwkgvh-mkd72 --snapshot demo \\",
        "      --dry-run"]


# -- 2. a plan ends with a tally and what comes next ---------------------------------------------------

def test_a_plan_of_several_pods_is_a_table_a_tally_and_the_next_commands(cli: Run) -> None:
    r = cli("plan", "--all-pending", "--snapshot", "demo", width=200)
    assert r.exit_code == 3
    assert r.stdout.splitlines() == [
        "2 pending pods, planned in priority order:",
        "POD                                           OUTCOME      NODE        VICTIMS",
        f"{CRITICAL}   evict        worker-c1         1",
        f"{TRAINER}                      infeasible   -                 0",
        "2 pods: 1 needs evictions, 1 cannot be placed (-o wide: each pod's plan)",
        "next (rehearse it):",
        f"  kresched preempt {CRITICAL} --snapshot demo --dry-run",
        "next (why no node works):",
        f"  kresched explain {TRAINER} --snapshot demo",
    ]
    wide = cli("plan", "--all-pending", "--snapshot", "demo", "-o", "wide", width=200).stdout
    assert "Victims, most important first:" in wide
    assert "INFEASIBLE" in wide


@pytest.mark.parametrize(("pod", "last"), [
    pytest.param(CRITICAL, f"  kresched preempt {CRITICAL} --snapshot demo --dry-run", id="evict: rehearse it"),
    pytest.param(TRAINER, f"  kresched explain {TRAINER} --snapshot demo", id="infeasible: explain it"),
])
def test_a_plan_of_one_pod_ends_with_the_command_that_comes_next(cli: Run, pod: str, last: str) -> None:
    assert cli("plan", pod, "--snapshot", "demo", width=200).stdout.splitlines()[-1] == last


def test_the_next_command_names_the_cluster_as_the_plan_did_and_acts_on_it() -> None:
    from kresched.plan.planner import plan_pod
    from kresched.render.common import Source
    from kresched.render.plan import next_steps

    state = load_snapshot("demo")
    plan = plan_pod(state, state.pod(CRITICAL))  # type: ignore[arg-type]
    assert next_steps([plan], Source("kubectl kresched", "--context prod")) == [
        ("carry it out (--dry-run rehearses it)", f"kubectl kresched preempt {CRITICAL} --context prod")]


def test_explain_of_a_pod_evictions_could_help_points_to_plan(cli: Run) -> None:
    lines = cli("explain", CRITICAL, "--snapshot", "demo", width=200).stdout.splitlines()
    assert lines[-2:] == ["next (what must move for it to fit; its tiers evict what costs least first, so it may "
                          "pick another node than the nearest: plan --help):",
                          f"  kresched plan {CRITICAL} --snapshot demo"]
    assert "kresched plan" not in cli("explain", TRAINER, "--snapshot", "demo").stdout


# -- 3. nothing left out silently --------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "said"), [
    pytest.param(("plan",), "1 other pending pod is not critical: --all-pending plans it too",
                 id="plan names the pending pods it does not plan, and the flag"),
    pytest.param(("plan", "-n", "ml"), "No pending critical pods in namespace ml to plan for. 1 pending pod in "
                 "namespace ml is not critical: --all-pending plans it too", id="so does plan -n"),
    pytest.param(("plan", "--all-pending"), "2 pending pods, planned", id="--all-pending leaves nothing out"),
])
def test_what_a_plan_leaves_out_is_named_with_the_flag_that_includes_it(cli: Run, args: tuple[str, ...],
                                                                         said: str) -> None:
    r = cli(*args, "--snapshot", "demo")
    assert said in " ".join(r.stdout.split())
    if args == ("plan",):
        as_json = cli(*args, "--snapshot", "demo", "-o", "json")
        assert as_json.stderr == f"note: {said}\n"
        assert [p["pod"] for p in json.loads(as_json.stdout)["plans"]] == [CRITICAL]


@pytest.mark.parametrize(("args", "error"), [
    pytest.param(("explain", "web", "-n", "shopp"), "error: namespace shopp not found in the snapshot; did you mean "
                 "shop?", id="an unknown namespace is named as a namespace"),
    pytest.param(("plan", "-n", "kube-sytem"), "error: namespace kube-sytem not found in the snapshot; did you mean "
                 "kube-system?", id="plan -n of an unknown namespace"),
    pytest.param(("explain", "shop/cartt"), "error: pod shop/cartt not found in the snapshot", id="an unknown pod"),
    pytest.param(("plan", "deploy/cartt", "-n", "shop"), "error: deployment shop/cartt not found in the snapshot: no "
                 "pods of it there; did you mean deployment/cart?", id="an unknown workload is named as a workload"),
    pytest.param(("explain", "sts/nope", "-n", "data"), "error: statefulset data/nope not found in the snapshot: no "
                 "pods of it there", id="an unknown StatefulSet"),
    pytest.param(("drain", "worker-x9"), "error: node worker-x9 not found", id="an unknown node"),
])
def test_what_does_not_exist_is_named_as_what_it_is(cli: Run, args: tuple[str, ...], error: str) -> None:
    r = cli(*args, "--snapshot", "demo")
    assert r.exit_code == 2
    assert r.stderr.startswith(error), r.stderr
    assert r.stderr.count("\n") == 1


def test_without_namespace_objects_a_pod_in_an_empty_namespace_says_so(cli: Run, tmp_path: Path) -> None:
    from kresched.sources.snapshot import encode_snapshot
    from tests.builders import make_state

    path = tmp_path / "cluster.json"
    path.write_bytes(encode_snapshot(make_state([make_node()], [make_pod("web", "shop", cpu="1")])))
    r = cli("explain", "kube-system/coredns", "--snapshot", str(path))
    assert r.stderr == f"error: pod kube-system/coredns not found in {path} (it has no pods in namespace kube-system)\n"


# -- 4. kubectl's TYPE/NAME for workloads ------------------------------------------------------------------

@pytest.mark.parametrize("ref", ["deploy/metrics-server", "deployment/metrics-server", "deployments/metrics-server",
                                 "rs/metrics-server-5p9lfwkgvh", "replicaset/metrics-server-5p9lfwkgvh",
                                 "replicasets/metrics-server-5p9lfwkgvh"])
def test_a_deployment_or_its_replicaset_plans_its_pending_pods(cli: Run, ref: str) -> None:
    r = cli("plan", ref, "-n", "kube-system", "--snapshot", "demo", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [p["pod"] for p in json.loads(r.stdout)["plans"]] == [CRITICAL]


@pytest.mark.parametrize("ref", ["job/train-ranker-v7", "jobs/train-ranker-v7"])
def test_a_job_is_explained_and_planned_through_its_pending_pod(cli: Run, ref: str) -> None:
    explained = cli("explain", ref, "-n", "ml", "--snapshot", "demo", "-o", "json")
    assert [e["pod"] for e in json.loads(explained.stdout)["explanations"]] == [TRAINER]
    planned = cli("plan", ref, "-n", "ml", "--snapshot", "demo")
    assert planned.exit_code == 3
    assert "1 Pending pod of job ml/train-ranker-v7, planned in priority order:" in planned.stdout


@pytest.mark.parametrize(("ref", "namespace", "said"), [
    pytest.param("cronjob/report-nightly", "batch", "cronjob batch/report-nightly has 1 pod, none Pending (1 "
                 "Running)", id="a CronJob, through its Job"),
    pytest.param("cj/report-nightly", "batch", "cronjob batch/report-nightly has 1 pod", id="cj"),
    pytest.param("sts/kafka", "data", "statefulset data/kafka has 3 pods, none Pending (3 Running)",
                 id="a StatefulSet"),
    pytest.param("ds/cilium", "kube-system", "daemonset kube-system/cilium has 10 pods, none Pending (10 Running)",
                 id="a DaemonSet"),
])
def test_a_workload_without_pending_pods_says_so(cli: Run, ref: str, namespace: str, said: str) -> None:
    r = cli("plan", ref, "-n", namespace, "--snapshot", "demo", "-o", "json")
    assert (r.exit_code, json.loads(r.stdout)) == (0, {"plans": []})
    assert r.stderr.startswith(f"note: {said}")
    assert said in " ".join(cli("explain", ref, "-n", namespace, "--snapshot", "demo").stdout.split())


def test_a_deployment_is_found_through_the_replicasets_it_owns(cli: Run, tmp_path: Path) -> None:
    """With ReplicaSet objects in the snapshot, their owner references decide (not the naming rule)."""
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "web-legacy", "namespace": "shop", "uid": "uid-rs",
                       "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                            "uid": "uid-deploy", "controller": True}]},
          "spec": {"selector": {"matchLabels": {"app": "web"}}}}
    pods = [make_pod("web-legacy-x1", "shop", cpu="1", owner="ReplicaSet/web-legacy"),
            make_pod("web-other-x2", "shop", cpu="1", owner="ReplicaSet/web-other")]
    items = [{"apiVersion": "v1", "kind": "Node", **msgspec.to_builtins(make_node())},
             *({"apiVersion": "v1", "kind": "Pod", **msgspec.to_builtins(p)} for p in pods), rs]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    r = cli("plan", "deploy/web", "-n", "shop", "--snapshot", str(path), "-o", "json")
    assert [p["pod"] for p in json.loads(r.stdout)["plans"]] == ["shop/web-legacy-x1"]


# -- 5. kubectl's spellings of flags -------------------------------------------------------------------------

DRAIN = ("drain", "worker-b3", "--dry-run", "--snapshot", "demo", "-o", "json")


@pytest.mark.parametrize(("flag", "same_as"), [
    pytest.param("--ignore-daemonsets=true", ("--ignore-daemonsets",), id="--flag=true is the flag"),
    pytest.param("--ignore-daemonsets=false", (), id="--flag=false is no flag"),
    pytest.param("--ignore-daemonsets=1", ("--ignore-daemonsets",), id="as Go's ParseBool reads 1"),
    pytest.param("--ignore-daemonsets=False", (), id="and False"),
])
def test_a_boolean_flag_takes_true_or_false_as_kubectl_does(cli: Run, flag: str, same_as: tuple[str, ...]) -> None:
    spelt = cli(*DRAIN, flag)
    plain = cli(*DRAIN, *same_as)
    assert (spelt.exit_code, spelt.stdout, spelt.stderr) == (plain.exit_code, plain.stdout, plain.stderr)


def test_a_boolean_flag_with_another_value_is_kubectls_usage_error(cli: Run) -> None:
    r = cli(*DRAIN, "--ignore-daemonsets=maybe")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == ('error: invalid argument "maybe" for "--ignore-daemonsets" flag: strconv.ParseBool: parsing '
                        "\"maybe\": invalid syntax (see 'kresched drain --help')\n")


@pytest.mark.parametrize("args", [
    pytest.param(("plan", CRITICAL, "--snapshot", "demo", "-o=json"), id="-o=json"),
    pytest.param(("plan", "metrics-server-5p9lfwkgvh-mkd72", "-n=kube-system", "--snapshot=demo", "-o", "json"),
                 id="-n=NAMESPACE"),
    pytest.param(("plan", CRITICAL, "--snapshot", "demo", "--request-timeout", "3", "-o", "json"),
                 id="a global flag after the verb"),
    pytest.param(("--request-timeout=3", "-o", "json", "plan", CRITICAL, "--snapshot", "demo"),
                 id="global and common flags before the verb"),
])
def test_flags_are_read_where_and_as_kubectl_reads_them(cli: Run, args: tuple[str, ...]) -> None:
    r = cli(*args)
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["pod"] == CRITICAL


def test_a_global_flag_after_the_verb_is_applied(cli: Run, tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(DEMO_FILE.read_text())
    r = cli("plan", "--snapshot", str(snapshot), "--max-input", "1Ki")
    assert r.exit_code == 2
    assert "--max-input" in r.stderr, r.stderr
    # For that command only: the next one in the same process reads the file.
    assert "KRESCHED_MAX_INPUT" not in os.environ
    assert cli("plan", "--snapshot", str(snapshot), "-o", "json").exit_code == 0


def test_version_prints_what_runs_and_what_it_simulates(cli: Run) -> None:
    import platform

    from kresched import KUBERNETES_VERSION, __version__

    table = cli("version")
    assert table.stdout.splitlines() == [f"kresched: {__version__}", f"simulates: kube-scheduler {KUBERNETES_VERSION}",
                                         f"Python: {platform.python_version()}"]
    assert json.loads(cli("version", "-o", "json").stdout) == {
        "version": __version__, "kubernetes": KUBERNETES_VERSION, "python": platform.python_version()}


def test_help_does_not_cut_its_own_lines_at_80_columns(cli: Run) -> None:
    r = cli("--help", env={"COLUMNS": "80"})
    commands = r.stdout.split("Commands:", 1)[1].splitlines()[1:]
    assert len(commands) >= 10
    assert all(len(line) <= 80 and not line.endswith("...") for line in commands), commands


# -- pods held by scheduling gates (Kueue's admission gate, a recorder's hold) ---------------------------------

GATED = {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]}


def _gated_cluster(tmp_path: Path, free: bool) -> str:
    pods = [make_pod("train-0", cpu="1", spec=GATED, owner="ReplicaSet/train"),
            make_pod("train-1", cpu="1", spec=GATED, owner="ReplicaSet/train")]
    if free:
        pods.append(make_pod("web-0", cpu="1", owner="ReplicaSet/web"))
    path = tmp_path / "cluster.json"
    path.write_bytes(encode_snapshot(make_state([make_node("node-a", cpu="4", memory="8Gi")], pods)))
    return str(path)


@pytest.mark.parametrize(("free", "planned", "note"), [
    pytest.param(True, ["default/web-0"], "2 other pending pods are held by scheduling gates: the scheduler does not "
                 "try them until the gates are removed (kresched explain POD names its gates)",
                 id="beside a pod planned"),
    pytest.param(False, [], "2 pending pods are held by scheduling gates: the scheduler does not try them until the "
                 "gates are removed (kresched explain POD names its gates)", id="alone"),
])
def test_pods_held_by_scheduling_gates_are_said_not_planned(cli: Run, tmp_path: Path, free: bool,
                                                           planned: list[str], note: str) -> None:
    snapshot = _gated_cluster(tmp_path, free)
    r = cli("plan", "--all-pending", "--snapshot", snapshot, "-o", "json")
    assert (r.exit_code, [p["pod"] for p in json.loads(r.stdout)["plans"]]) == (0, planned)
    assert r.stderr == f"note: {note}\n"
    table = cli("plan", "--all-pending", "--snapshot", snapshot)
    assert note in " ".join(table.stdout.split())
    if not free:
        assert table.stdout.startswith("No pending pods to plan for.")


def test_a_workload_whose_pods_are_all_gated_says_they_are_held(cli: Run, tmp_path: Path) -> None:
    r = cli("plan", "rs/train", "--snapshot", _gated_cluster(tmp_path, free=True), "-o", "json")
    assert (r.exit_code, json.loads(r.stdout)) == (0, {"plans": []})
    assert r.stderr == "note: replicaset default/train has 2 pods, none Pending (2 held by scheduling gates): " \
                       "nothing to plan.\n"
