"""A newcomer's first hour (issue 40), on the demo cluster at 80 columns, as the 80-column suite
(`test_operator_output`) reads it: answers that agree with themselves, hints that would make the pod
fit, what a default costs said up front, plan and explain telling one story, drain naming every
blocker at once, workloads found as pods are, kubectl's habits, and words for people.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.clirun import Result, documents, drained, run_cli

Run = Callable[..., Result]

CRITICAL = "kube-system/metrics-server-5p9lfwkgvh-mkd72"
COLUMNS = {"COLUMNS": "80"}

#: The issue's deploy.yaml: 4 replicas of 2 CPU / 4Gi, more than any untainted demo node has free.
DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
spec:
  replicas: 4
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: registry.acme.io/shop/api:1.0
        resources:
          requests: {cpu: "2", memory: 4Gi}
"""


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Run:
    def run(*args: str, **kwargs: object) -> Result:
        kwargs.setdefault("env", COLUMNS)
        return run_cli(monkeypatch, *args, **kwargs)  # type: ignore[arg-type]

    return run


@pytest.fixture
def deploy(tmp_path: Path) -> str:
    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOY)
    return str(path)


def flat(text: str) -> str:
    """Output with its wrapping undone: words separated by single spaces."""
    return " ".join(text.split())


def moved(r: Result) -> list[str]:
    assert r.exit_code == 0, r.stderr
    return [m["pod"] for m in json.loads(r.stdout)["moves"]]


# -- 8. kubectl habits -----------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", [("--dry-run", "client"), ("--dry-run=client",), ("--dry-run",)],
                         ids=["--dry-run client (a space)", "--dry-run=client", "a bare --dry-run"])
def test_dry_run_client_with_a_space_is_a_client_dry_run_not_a_node(cli: Run, spelling: tuple[str, ...]) -> None:
    r = cli("drain", "worker-b3", *spelling, "--snapshot", "demo", "-o", "json")
    assert "not found" not in r.stderr
    assert drained(r.stdout)["node"] == "worker-b3"


def test_plan_with_dry_run_says_that_plan_never_changes_anything(cli: Run) -> None:
    plain = cli("plan", CRITICAL, "--snapshot", "demo", "-o", "json")
    for spelling in (("--dry-run=client",), ("--dry-run",), ("--dry-run", "client")):
        r = cli("plan", CRITICAL, *spelling, "--snapshot", "demo", "-o", "json")
        assert (r.exit_code, r.stdout) == (plain.exit_code, plain.stdout)
        assert r.stderr == "note: plan never changes anything (it is a dry run already): --dry-run is not needed\n"
    bad = cli("explain", CRITICAL, "--dry-run=maybe", "--snapshot", "demo")
    assert (bad.exit_code, bad.stderr) == (2, 'error: invalid dry-run value (maybe): must be "none", "server", or '
                                              '"client"\n')


def test_snapshot_help_offers_only_the_formats_it_writes(cli: Run) -> None:
    r = cli("snapshot", "--help")
    line = next(x for x in r.stdout.splitlines() if "--output" in x)
    assert ("wide" in line, "table" in line, "json" in line, "yaml" in line) == (False, False, True, True)


def test_rebalance_takes_n_and_moves_only_that_namespaces_pods(cli: Run) -> None:
    every = moved(cli("rebalance", "--dry-run", "--snapshot", "demo", "-o", "json"))
    assert every
    assert {k.split("/")[0] for k in every} == {"shop"}
    assert moved(cli("rebalance", "-n", "shop", "--dry-run", "--snapshot", "demo", "-o", "json")) == every
    assert moved(cli("rebalance", "-n", "data", "--dry-run", "--snapshot", "demo", "-o", "json")) == []
    r = cli("rebalance", "-n", "shopp", "--dry-run", "--snapshot", "demo")
    assert (r.exit_code, r.stderr) == (2, "error: namespace shopp not found in the snapshot; did you mean shop?\n")


def test_objective_utilization_is_the_american_spelling_of_utilisation(cli: Run) -> None:
    american = cli("rebalance", "--objective", "utilization", "--dry-run", "--snapshot", "demo", "-o", "json")
    british = cli("rebalance", "--objective", "utilisation", "--dry-run", "--snapshot", "demo", "-o", "json")
    assert (american.exit_code, american.stdout) == (british.exit_code, british.stdout)
    assert moved(american)


# -- 7. workloads are found as pods are -------------------------------------------------------------------


def test_a_workload_in_another_namespace_gets_the_namespace_suggested_as_a_pod_does(cli: Run) -> None:
    r = cli("plan", "deploy/metrics-server", "--snapshot", "demo")
    assert r.exit_code == 2
    assert r.stderr == ("error: deployment default/metrics-server not found in the snapshot: no pods of it there; did "
                        "you mean deployment/metrics-server -n kube-system?\n")


@pytest.mark.parametrize("ref", ["deployment.apps/metrics-server", "deployments.apps/metrics-server",
                                 "deployments.v1.apps/metrics-server", "rs.apps/metrics-server-5p9lfwkgvh"])
def test_kubectls_type_dot_group_names_the_workload(cli: Run, ref: str) -> None:
    r = cli("plan", ref, "-n", "kube-system", "--snapshot", "demo", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [p["pod"] for p in json.loads(r.stdout)["plans"]] == [CRITICAL]


@pytest.mark.parametrize(("args", "error"), [
    pytest.param(("plan", "deployment.batch/metrics-server", "-n", "kube-system"),
                 "error: the server doesn't have a resource type \"deployment.batch\" (Deployment is deployment.apps)",
                 id="a known type in another group"),
    pytest.param(("explain", "widgets.acme.io/w1", "-n", "shop"),
                 "error: the server doesn't have a resource type \"widgets.acme.io\"",
                 id="a type kresched does not know, never a namespace"),
])
def test_a_type_dot_group_that_names_nothing_is_said_so(cli: Run, args: tuple[str, ...], error: str) -> None:
    r = cli(*args, "--snapshot", "demo")
    assert (r.exit_code, r.stderr) == (2, error + "\n")


def test_pods_and_nodes_take_their_group_and_version_too(cli: Run) -> None:
    pod = cli("explain", "pods.v1./metrics-server-5p9lfwkgvh-mkd72", "-n", "kube-system", "--snapshot", "demo",
              "-o", "json")
    assert json.loads(pod.stdout)["pod"] == CRITICAL
    node = cli("drain", "nodes.v1./worker-b3", "--dry-run", "--snapshot", "demo", "-o", "json")
    assert drained(node.stdout)["node"] == "worker-b3"


# -- 1. preempt -f agrees with itself ----------------------------------------------------------------------


def test_preempt_f_that_places_nothing_ends_as_its_plan_does_and_exits_3(cli: Run, deploy: str) -> None:
    r = cli("preempt", "-f", deploy, "--snapshot", "demo", "--dry-run")
    out = flat(r.stdout)
    assert "0 of 4 replicas placed, 4 Pending" in out
    assert "nothing to do" not in out
    assert out.endswith("deployment/shop/api: no eviction makes room: 4 of 4 replicas would stay Pending (dry run)")
    assert r.exit_code == 3
    summary = json.loads(cli("preempt", "-f", deploy, "--snapshot", "demo", "--dry-run", "-o",
                             "json").stdout.splitlines()[-1])
    assert (summary["outcome"], summary["expected"]) == ("infeasible", 0)


# -- 9. words for people ------------------------------------------------------------------------------------


def test_max_says_kresched_words_then_the_schedulers_never_glued(cli: Run, deploy: str) -> None:
    out = flat(cli("plan", "-f", deploy, "--snapshot", "demo", "--max").stdout)
    assert ".;" not in out
    assert ("4 Preemption is not helpful for scheduling. No eviction helps on any of 6 candidate node(s).)\n"
            in cli("plan", "-f", deploy, "--snapshot", "demo", "--max", env={"COLUMNS": "1000"}).stdout)


def test_a_dry_run_says_what_would_be_bound_not_what_was(cli: Run) -> None:
    r = cli("preempt", CRITICAL, "--snapshot", "demo", "--dry-run")
    assert flat(r.stdout).endswith(f"pod {CRITICAL} would be bound to worker-c1 after evicting 1 pod (dry run)")
    room = cli("preempt", "-f", "demo", "--snapshot", "demo", "--dry-run")
    assert "room would be made for" in flat(room.stdout)


def test_a_what_if_in_a_namespace_that_does_not_exist_says_it_would_be_refused(cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOY.replace("namespace: shop", "namespace: nosuch"))
    r = cli("plan", "-f", str(path), "--snapshot", "demo")
    assert r.exit_code == 3
    said = ('the API server would refuse the workload itself: namespaces "nosuch" not found: namespace nosuch does '
            "not exist (kubectl create namespace nosuch first, or add the Namespace to the manifests)")
    assert said in flat(r.stdout)
    path.write_text(path.read_text() + "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: nosuch\n")
    created = cli("plan", "-f", str(path), "--snapshot", "demo")
    assert "namespace nosuch does not exist yet: the manifests create it (their Namespace)" in flat(created.stdout)
    assert "would refuse" not in created.stdout


# -- 2. hints that would make the pod fit, and kresched's own reservation named --------------------------


def nearest(r: Result) -> dict[str, str]:
    """The what-if's nearest-nodes table: node → WHY NOT (its wrapped lines joined)."""
    lines = r.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Nearest nodes")) + 2
    out: dict[str, str] = {}
    last = ""
    for line in lines[start:]:
        if not line.strip() or line.startswith("…"):
            break
        if line.startswith("    scheduler says:"):
            continue
        if line.startswith(" "):
            out[last] += " " + line.strip()
        else:
            last, _, why = line.partition(" ")
            out[last] = why.strip()
    return out


def test_no_toleration_is_suggested_where_the_pod_would_still_not_fit(cli: Run) -> None:
    """The demo job of 6 CPU: no node has 6 CPU allocatable, so no taint is worth tolerating."""
    r = cli("plan", "-f", "demo", "--snapshot", "demo")
    rows = nearest(r)
    assert rows
    assert all(why.startswith("nothing makes it fit here: requests 6 CPU but the node has only") for why in
               rows.values()), rows
    table = flat(cli("explain", "job/train-ranker-v7", "-n", "ml", "--snapshot", "demo").stdout)
    assert "tolerate taint" not in table
    assert "nvidia.com/gpu.present=true missing" not in table


def test_a_stale_kresched_reservation_is_named_as_such(cli: Run, deploy: str) -> None:
    rows = nearest(cli("plan", "-f", deploy, "--snapshot", "demo", "-o", "wide"))
    assert rows["worker-a2"].startswith(
        "a stale kresched reservation (made for kube-system/metrics-server-5p9lfwkgvh-q7w2d, gone): `kresched "
        "untaint` removes its taint CriticalAddonsOnly=kresched:NoSchedule; needs 1.77 more CPU")
    assert "tolerate taint CriticalAddonsOnly" not in rows["worker-a2"]


# -- 3. the nearest nodes are those that need the least change ----------------------------------------------


def test_a_missing_toleration_counts_as_one_change_like_missing_cpu(cli: Run, deploy: str) -> None:
    rows = nearest(cli("plan", "-f", deploy, "--snapshot", "demo"))
    assert list(rows)[:2] == ["worker-d1", "worker-d2"]
    assert rows["worker-d1"] == "tolerate taint node.acme.io/pool=general-v2:NoSchedule; then it fits"


def test_wide_lists_every_node_with_the_schedulers_reason_the_table_the_nearest_five(cli: Run, deploy: str) -> None:
    table = cli("plan", "-f", deploy, "--snapshot", "demo")
    wide = cli("plan", "-f", deploy, "--snapshot", "demo", "-o", "wide")
    assert len(nearest(table)) == 5
    assert "… and 5 more (-o wide lists every node)" in table.stdout
    assert len(nearest(wide)) == 10
    assert "scheduler says: node(s) had untolerated taint(s)" in wide.stdout


# -- 4. what a default costs a victim is said up front --------------------------------------------------------


def test_the_headline_says_grace_periods_shortened_and_bare_pods_gone_for_good(cli: Run, tmp_path: Path) -> None:
    from kresched.sources.snapshot import encode_snapshot
    from tests.builders import make_node, make_pod, make_state

    path = tmp_path / "cluster.json"
    path.write_bytes(encode_snapshot(make_state([make_node("node-a", cpu="2")], [
        make_pod("batch", "ops", node="node-a", cpu="1", owner=None, grace=60),
        make_pod("web", "ops", node="node-a", cpu="1", grace=30),
        make_pod("dns", "kube-system", cpu="2", priority=2_000_000_000),
    ])))
    r = cli("plan", "kube-system/dns", "--snapshot", str(path))
    head = flat(r.stdout).split("EVICT on ", 1)[1].split(" evict ", 1)[0]
    assert head == ("node-a · tier 2 · reservation taint: no (the pod does not tolerate CriticalAddonsOnly) · 2 grace "
                    "periods shortened to 10s · 1 bare pod gone for good")


def test_a_what_if_says_what_its_evictions_cost_under_its_headline(cli: Run) -> None:
    lines = cli("plan", "-f", "demo", "--snapshot", "demo").stdout.split("\n\n")[0]
    assert flat(lines).endswith("4 replicas: 4 placed (4 after evicting 7 pods) The evictions' cost: 5 grace periods "
                                "shortened to 10s, emptyDir data of 1 pod lost")


# -- 5. plan and explain tell one story about the tiers --------------------------------------------------------


def test_plan_help_says_what_the_tiers_are(cli: Run) -> None:
    text = flat(cli("plan", "--help").stdout)
    assert ("tier 1 evicts only pods that stop within --max-grace seconds (10) and whose PodDisruptionBudget allows "
            "the eviction; tier 2 also pods with a longer grace period (shortened to --max-grace); tier 3 any "
            "lower-priority pod, even over a PDB (carried out only with --allow-pdb-violation)") in text


def test_the_node_explain_finds_nearest_is_ruled_out_by_the_plan_in_words_of_the_tiers(cli: Run) -> None:
    explained = json.loads(cli("explain", CRITICAL, "--snapshot", "demo", "-o", "json").stdout)
    assert explained["nodes"]["worker-b2"] == ["Insufficient memory"]
    plan = cli("plan", CRITICAL, "--snapshot", "demo", "-o", "wide")
    assert "EVICT on worker-c1 · tier 1" in plan.stdout
    runner = flat(plan.stdout.split("Runner-up nodes:", 1)[1])
    assert ("worker-b2 - tier 1 evicts only pods that stop within 10s and whose PDB allows it: those here hold too "
            "little (a node where they do is chosen first)") in runner
    assert "plan --help" in flat(cli("explain", CRITICAL, "--snapshot", "demo").stdout)


# -- 6. drain names every blocker at once ------------------------------------------------------------------------


def test_drain_names_every_refusal_and_every_flag_in_one_pre_flight(cli: Run) -> None:
    first = cli("drain", "worker-a1", "--dry-run", "--snapshot", "demo")
    out = flat(first.stdout)
    assert ("cannot delete Pods that declare no controller (use --force to override): ops/pg-dump-manual") in out
    assert "the flags that lift every refusal: --ignore-daemonsets --delete-emptydir-data --force" in out
    assert "once evicted, ops/pg-dump-manual would be gone for good (no controller recreates it)" in out
    assert first.stderr.startswith("error: the drain would not finish: kubectl would refuse 5 pods without "
                                   "--ignore-daemonsets --delete-emptydir-data --force; 3 pods would stay Pending "
                                   "(batch/report-nightly-29277600-729sx, data/nats-2, data/postgres-0: what holds "
                                   "each is above; --allow-pending drains anyway)")
    stream = documents(cli("drain", "worker-a1", "--dry-run", "--snapshot", "demo", "-o", "json").stdout)
    assert stream[0]["flags"] == ["--ignore-daemonsets", "--delete-emptydir-data", "--force"]
    assert {"pod": "ops/pg-dump-manual", "reason": "Pods with local storage (use --delete-emptydir-data to override)",
            "also": ["cannot delete Pods that declare no controller (use --force to override)"]} in \
        stream[0]["nodes"][0]["errors"]
    # The flags it named are all it takes: no refusal is left to find.
    then = cli("drain", "worker-a1", "--dry-run", "--snapshot", "demo", "--ignore-daemonsets",
               "--delete-emptydir-data", "--force")
    assert "kubectl would refuse" not in then.stdout
    assert "kubectl would refuse" not in then.stderr


def test_a_refused_pod_that_would_stay_pending_once_evicted_is_named_before_the_flags_are_given(cli: Run) -> None:
    r = cli("drain", "worker-b3", "--ignore-daemonsets", "--dry-run", "--snapshot", "demo")
    assert "once evicted, shop/search-indexer-7ggrl7gzs-jssw7 would stay Pending: 0/10 nodes are available" in \
        flat(r.stdout)
    assert "shop/search-indexer-7ggrl7gzs-jssw7" in r.stderr.split("would stay Pending", 1)[1]
    lifted = cli("drain", "worker-b3", "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--dry-run",
                 "--snapshot", "demo", "-o", "json")
    pending = [p["pod"] for p in drained(lifted.stdout)["evict"] if p["landsOn"] is None]
    assert "shop/search-indexer-7ggrl7gzs-jssw7" in pending
