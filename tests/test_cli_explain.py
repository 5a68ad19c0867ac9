"""`kresched explain`, run in-process on snapshot files and on the built-in demo: the JSON/YAML
contract, the exit codes, and the table an operator reads (the scheduler's message, the counts
per reason, the nearest nodes first, what would make the pod fit, why a schedulable pod may still
be Pending). The demo's tables are golden files: `pytest --update-golden` rewrites them.

The command runs in-process through `tests.clirun.run_cli`, its output captured.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from kresched.errors import ExitCode
from kresched.model.cluster import ClusterState
from kresched.model.objects import Node, Pod
from kresched.sources.snapshot import encode_snapshot, load_snapshot
from tests.builders import make_node, make_pod, make_state
from tests.clirun import Result, reset_env, run_cli

HIGH, MID, LOW = 1000, 100, 0
SSD = {"disktype": "ssd"}
TAINT_KV = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
TERMINATING = "2026-01-01T00:00:05Z"


Run = Callable[..., Result]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    """`cli(*args, width=None)`: 120 columns without colour, as on a pipe; `width=` gives a wider
    console so that table cells hold their text on one line."""

    def run(*args: str, width: int | None = None) -> Result:
        return run_cli(monkeypatch, *args, width=width)

    yield run
    reset_env()


def write(tmp_path: Path, nodes: Sequence[Node], pods: Sequence[Pod], name: str = "cluster.json") -> str:
    path = tmp_path / name
    path.write_bytes(encode_snapshot(make_state(list(nodes), list(pods))))
    return str(path)


def explain_json(cli: Run, source: str, pod: str) -> dict[str, Any]:
    res = cli("explain", "--pod", pod, "--snapshot", source, "-o", "json")
    assert (res.exit_code, res.stderr) == (0, "")
    return json.loads(res.stdout)


def one_line(text: str) -> str:
    return " ".join(text.split())


def table_rows(text: str) -> list[list[str]]:
    """The rows of the `-o wide` nodes table (NODE, VERDICT, PLUGIN, REASONS), each with the hints
    printed under it (`    → ...`) joined by a space as a fifth cell ("-" for none)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["NODE", "VERDICT", "PLUGIN"])
    rows: list[list[str]] = []
    for line in lines[start + 1:]:
        if not line.strip() or line.startswith("…"):
            break
        if line.startswith("    → "):
            hint = line.removeprefix("    → ").strip()
            rows[-1][4] = hint if rows[-1][4] == "-" else f"{rows[-1][4]} {hint}"
        else:
            rows.append([*re.split(r" {3,}", line.strip()), "-"])
    return rows


def reason_counts(text: str) -> list[tuple[int, str]]:
    """The NODES/REASON table, in the order printed."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split() == ["NODES", "REASON"])
    out = []
    for line in lines[start + 1:]:
        m = re.fullmatch(r"\s*(\d+)\s+(.*?)\s*", line)
        if m is None:
            break
        out.append((int(m.group(1)), m.group(2)))
    return out


# -- the scenario -------------------------------------------------------------------------------------
#
# Five nodes, each failing shop/checkout (2 CPU, priority 100, nodeSelector disktype=ssd) for a
# different reason:
#   node-a  ssd, 4 CPU: db-0 (priority 1000, 1 CPU) and two batch pods (priority 0, 2.5 CPU): 0.5 free,
#           evicting the batch pods frees enough;
#   node-b  ssd, 8 CPU: db-1 (priority 1000, 7 CPU): 1 free, nothing lower-priority to evict;
#   node-c  ssd, cordoned;   node-l  no disktype label;   node-t  ssd, tainted k=v:NoSchedule.

NODES = [
    make_node("node-a", cpu="4", labels=SSD),
    make_node("node-b", cpu="8", labels=SSD),
    make_node("node-c", cpu="8", labels=SSD, unschedulable=True),
    make_node("node-l", cpu="4"),
    make_node("node-t", cpu="8", labels=SSD, taints=TAINT_KV),
]
RUNNING = [
    make_pod("db-0", "shop", node="node-a", cpu="1", priority=HIGH, owner="StatefulSet/db"),
    make_pod("batch-0", "batch", node="node-a", cpu="1500m", priority=LOW),
    make_pod("batch-1", "batch", node="node-a", cpu="1", priority=LOW),
    make_pod("db-1", "shop", node="node-b", cpu="7", priority=HIGH, owner="StatefulSet/db"),
]
PENDING = [
    make_pod("checkout", "shop", cpu="2", priority=MID, node_selector=SSD),
    make_pod("nightly", "shop", cpu="2", priority=MID, node_selector=SSD, preemption_policy="Never"),
    make_pod("huge", "shop", cpu="6", priority=MID),
    make_pod("small", "shop", cpu="100m", priority=MID),
]
CHECKOUT_MESSAGE = ("0/5 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                    "1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 2 Insufficient cpu.")
CHECKOUT_NODES = {
    "node-a": ["Insufficient cpu"],
    "node-b": ["Insufficient cpu"],
    "node-c": ["node(s) were unschedulable"],
    "node-l": ["node(s) didn't match Pod's node affinity/selector"],
    "node-t": ["node(s) had untolerated taint(s)"],
}


@pytest.fixture
def snapshot(tmp_path: Path) -> str:
    return write(tmp_path, NODES, RUNNING + PENDING)


# -- -o json: the contract ----------------------------------------------------------------------------

@pytest.mark.parametrize(("pod", "expected"), [
    pytest.param("shop/checkout", {
        "pod": "shop/checkout", "profile": "default-scheduler", "schedulable": False, "message": CHECKOUT_MESSAGE,
        "preemptionMessage": None,
        "nodes": CHECKOUT_NODES,
    }, id="unschedulable, and the scheduler's preemption would make room: no preemption message"),
    pytest.param("shop/nightly", {
        "pod": "shop/nightly", "profile": "default-scheduler", "schedulable": False, "message": CHECKOUT_MESSAGE,
        "preemptionMessage": "not eligible due to preemptionPolicy=Never.", "nodes": CHECKOUT_NODES,
    }, id="preemptionPolicy Never"),
    pytest.param("shop/huge", {
        "pod": "shop/huge", "profile": "default-scheduler", "schedulable": False,
        "message": "0/5 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, "
                   "3 Insufficient cpu.",
        "preemptionMessage": "0/5 nodes are available: 1 No preemption victims found for incoming pod, "
                             "4 Preemption is not helpful for scheduling.",
        "nodes": {"node-a": ["Insufficient cpu"], "node-b": ["Insufficient cpu"],
                  "node-c": ["node(s) were unschedulable"], "node-l": ["Insufficient cpu"],
                  "node-t": ["node(s) had untolerated taint(s)"]},
    }, id="unschedulable, and preemption fails too: the preemption part as the scheduler writes it"),
    pytest.param("shop/small", {
        "pod": "shop/small", "profile": "default-scheduler", "schedulable": True, "message": None,
        "preemptionMessage": None,
        "nodes": {"node-a": [], "node-b": [], "node-c": ["node(s) were unschedulable"], "node-l": [],
                  "node-t": ["node(s) had untolerated taint(s)"]},
        # The empty 4-CPU node-l: LeastAllocated (97: 3.9 of 4 CPU and 8Gi-200Mi of 8Gi left) beats
        # node-b's 53 and node-a's 50; BalancedAllocation is 50 + (50 + 98 - 100) / 2 = 74 on each.
        "node": "node-l", "candidates": ["node-l"], "likely": False,
        "scores": {
            "node-a": {"TaintToleration": 300, "NodeResourcesFit": 50, "NodeResourcesBalancedAllocation": 74,
                       "ImageLocality": 0, "total": 424},
            "node-b": {"TaintToleration": 300, "NodeResourcesFit": 53, "NodeResourcesBalancedAllocation": 74,
                       "ImageLocality": 0, "total": 427},
            "node-l": {"TaintToleration": 300, "NodeResourcesFit": 97, "NodeResourcesBalancedAllocation": 74,
                       "ImageLocality": 0, "total": 471}},
    }, id="schedulable: fitting nodes map to an empty list, with the scheduler's scores and pick"),
])
def test_json_is_exactly_the_contract(cli: Run, snapshot: str, pod: str, expected: dict[str, Any]) -> None:
    res = cli("explain", "--pod", pod, "--snapshot", snapshot, "-o", "json")
    assert (res.exit_code, res.stderr) == (0, "")
    doc = json.loads(res.stdout)
    assert doc == expected
    assert list(doc) == ["pod", "profile", "schedulable", "message", "preemptionMessage", "nodes",
                         *(["node", "candidates", "likely", "scores"] if doc["schedulable"] else [])]
    assert list(doc["nodes"]) == sorted(doc["nodes"])


def test_json_types_and_every_node_listed(cli: Run, snapshot: str) -> None:
    for pod in ("shop/checkout", "shop/nightly", "shop/huge", "shop/small"):
        doc = explain_json(cli, snapshot, pod)
        assert isinstance(doc["pod"], str)
        assert isinstance(doc["schedulable"], bool)
        assert doc["message"] is None or isinstance(doc["message"], str)
        assert doc["preemptionMessage"] is None or isinstance(doc["preemptionMessage"], str)
        assert set(doc["nodes"]) == {n.name for n in NODES}
        assert all(isinstance(r, list) and all(isinstance(x, str) for x in r) for r in doc["nodes"].values())
        assert doc["schedulable"] == any(r == [] for r in doc["nodes"].values())


@pytest.mark.parametrize("pod", ["shop/checkout", "shop/nightly", "shop/huge", "shop/small"])
def test_yaml_carries_the_same_data_as_json(cli: Run, snapshot: str, pod: str) -> None:
    res = cli("explain", "--pod", pod, "--snapshot", snapshot, "-o", "yaml")
    assert (res.exit_code, res.stderr) == (0, "")
    assert yaml.safe_load(res.stdout) == explain_json(cli, snapshot, pod)
    assert res.stdout.startswith(f"pod: {pod}\nprofile: default-scheduler\nschedulable: ")


def test_a_bound_pod_says_where_it_runs_and_where_it_would_land_now(cli: Run, snapshot: str) -> None:
    data = explain_json(cli, snapshot, "shop/db-0")
    assert (data["schedulable"], data["message"], data["boundTo"]) == (True, None, "node-a")
    # Scheduled again now, on the cluster without it, the empty node-l scores best: "why there" says
    # the cluster has changed since it was placed.
    assert (data["node"], data["candidates"]) == ("node-l", ["node-l"])
    assert set(data["scores"]) == {"node-a", "node-b", "node-l"}
    assert all(s["total"] == sum(v for k, v in s.items() if k != "total") for s in data["scores"].values())
    res = cli("explain", "--pod", "shop/db-0", "--snapshot", snapshot, width=250)
    assert res.exit_code == 0
    assert "runs on node node-a (phase Running)" in res.stdout
    assert "it would land on node-l, not node-a" in one_line(res.stdout)


# -- exit codes and errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("pod", ["shop/checkout", "shop/small"])
@pytest.mark.parametrize("output", ["table", "json", "yaml"])
def test_explaining_is_a_success_whether_or_not_the_pod_fits(cli: Run, snapshot: str, pod: str, output: str) -> None:
    res = cli("explain", "--pod", pod, "--snapshot", snapshot, "-o", output)
    assert (res.exit_code, res.stderr) == (0, "")
    assert res.stdout


def test_an_unknown_pod_is_a_one_line_usage_error_with_suggestions(cli: Run, snapshot: str) -> None:
    res = cli("explain", "--pod", "shop/chekout", "--snapshot", snapshot, "-o", "json")
    assert (res.exit_code, res.stdout) == (ExitCode.USAGE, "")
    assert res.stderr.startswith(f"error: pod shop/chekout not found in {snapshot}; did you mean shop/checkout")
    assert res.stderr.endswith("?\n")
    assert res.stderr.count("\n") == 1


def test_an_unknown_pod_without_close_names_gets_no_suggestion(cli: Run, snapshot: str) -> None:
    res = cli("explain", "--pod", "shop/coredns", "--snapshot", snapshot)
    assert (res.exit_code, res.stdout) == (ExitCode.USAGE, "")
    assert res.stderr == f"error: pod shop/coredns not found in {snapshot}\n"


@pytest.mark.parametrize("ref", ["shop/checkout/0", "/checkout", "shop/"])
def test_a_malformed_pod_reference_is_a_one_line_usage_error(cli: Run, snapshot: str, ref: str) -> None:
    res = cli("explain", "--pod", ref, "--snapshot", snapshot)
    assert (res.exit_code, res.stdout) == (ExitCode.USAGE, "")
    assert res.stderr == (f"error: invalid pod {ref!r}: expected NAME, pod/NAME, NAMESPACE/NAME or TYPE/NAME "
                          "(deploy/NAME, ...)\n")


def test_a_name_without_namespace_means_the_default_namespace(cli: Run, tmp_path: Path) -> None:
    source = write(tmp_path, [make_node("node-a")], [make_pod("web", cpu="100m")])
    assert explain_json(cli, source, "web")["pod"] == "default/web"


# -- the table ----------------------------------------------------------------------------------------

def test_the_table_shows_the_scheduler_message_the_counts_and_the_nearest_nodes_first(cli: Run,
                                                                                      snapshot: str) -> None:
    res = cli("explain", "--pod", "shop/checkout", "--snapshot", snapshot, "--no-color", "-o", "wide",
              width=250)
    assert res.exit_code == 0
    assert CHECKOUT_MESSAGE in one_line(res.stdout)
    assert "the scheduler's own preemption can make room" in res.stdout
    assert reason_counts(res.stdout) == [
        (2, "Insufficient cpu"),
        (1, "node(s) didn't match Pod's node affinity/selector"),
        (1, "node(s) had untolerated taint(s)"),
        (1, "node(s) were unschedulable"),
    ]
    # One change each: evictions free it on node-a; an uncordon, a label, a toleration (each then fits)
    # come before node-b, where the CPU it lacks is held by no pod kresched may evict.
    assert table_rows(res.stdout) == [
        ["node-a", "unschedulable", "NodeResourcesFit", "Insufficient cpu",
         "needs 1.5 more CPU: evicting lower-priority pods could free 2.5 CPU"],
        ["node-c", "unresolvable", "NodeUnschedulable", "node(s) were unschedulable",
         "node is cordoned: uncordon it (kubectl uncordon node-c) then it fits"],
        ["node-l", "unresolvable", "NodeAffinity", "node(s) didn't match Pod's node affinity/selector",
         "node label disktype=ssd missing then it fits"],
        ["node-t", "unresolvable", "TaintToleration", "node(s) had untolerated taint(s)",
         "tolerate taint k=v:NoSchedule then it fits"],
        ["node-b", "unschedulable", "NodeResourcesFit", "Insufficient cpu",
         "needs 1 more CPU: no lower-priority pod here holds any"],
    ]


def test_the_table_shows_the_whole_message_when_preemption_fails_too(cli: Run, snapshot: str) -> None:
    res = cli("explain", "--pod", "shop/huge", "--snapshot", snapshot, "--no-color", "-o", "wide",
              width=250)
    assert ("0/5 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, "
            "3 Insufficient cpu. no new claims to deallocate, preemption: 0/5 nodes are available: "
            "1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling."
            ) in one_line(res.stdout)
    rows = {r[0]: r for r in table_rows(res.stdout)}
    assert rows["node-a"][4] == "nothing makes it fit here: requests 6 CPU but the node has only 4 CPU allocatable"
    assert rows["node-b"][4] == "needs 5 more CPU: no lower-priority pod here holds any"
    # The least change first: an uncordon or a toleration, then room on node-b; where 6 CPU is more
    # than the node has, last (no hint: nothing makes it fit there).
    assert [r[0] for r in table_rows(res.stdout)] == ["node-c", "node-t", "node-b", "node-l", "node-a"]


def test_nodes_whose_lower_priority_pods_hold_enough_come_before_those_that_hold_only_some(cli: Run,
                                                                                         tmp_path: Path) -> None:
    # Both nodes lack 2 CPU for `app`. On node-a its lower-priority pods hold 1 CPU (not enough),
    # on node-z 3 CPU: node-z is nearer to fitting, although its name sorts last.
    source = write(tmp_path, [make_node("node-a", cpu="4"), make_node("node-z", cpu="4")], [
        make_pod("low-a", "ml", node="node-a", cpu="1", priority=LOW),
        make_pod("mid-a", "ml", node="node-a", cpu="2", priority=MID),
        make_pod("low-z", "ml", node="node-z", cpu="3", priority=LOW),
        make_pod("app", "ml", cpu="3", priority=MID),
    ])
    res = cli("explain", "--pod", "ml/app", "--snapshot", source, "--no-color", "-o", "wide", width=250)
    assert [[r[0], r[4]] for r in table_rows(res.stdout)] == [
        ["node-z", "needs 2 more CPU: evicting lower-priority pods could free 3 CPU"],
        ["node-a", "needs 2 more CPU: lower-priority pods hold only 1 CPU"],
    ]


def test_extended_resources_and_the_pod_limit_get_their_own_hints(cli: Run, tmp_path: Path) -> None:
    source = write(tmp_path, [make_node("node-g", cpu="4", pods=2)], [
        make_pod("low-0", "ml", node="node-g", cpu="100m", priority=LOW),
        make_pod("low-1", "ml", node="node-g", cpu="100m", priority=LOW),
        make_pod("gpu-job", "ml", cpu="1", priority=MID, extra_requests={"nvidia.com/gpu": "1"}),
        make_pod("web", "ml", cpu="1", priority=MID),
    ])
    gpu = cli("explain", "--pod", "ml/gpu-job", "--snapshot", source, "--no-color", "-o", "wide",
              width=250)
    # Only why not: room for one more pod would not give it a GPU.
    assert table_rows(gpu.stdout) == [[
        "node-g", "unresolvable", "NodeResourcesFit", "Too many pods, Insufficient nvidia.com/gpu",
        "nothing makes it fit here: node has no nvidia.com/gpu (the pod requests 1 nvidia.com/gpu)"]]
    assert "0/1 nodes are available: 1 Insufficient nvidia.com/gpu, 1 Too many pods." in one_line(gpu.stdout)
    web = cli("explain", "--pod", "ml/web", "--snapshot", source, "-o", "json")
    assert json.loads(web.stdout)["preemptionMessage"] is None  # evicting one pod makes room
    table = cli("explain", "--pod", "ml/web", "--snapshot", source, "--no-color", "-o", "wide", width=250)
    assert table_rows(table.stdout) == [[
        "node-g", "unschedulable", "NodeResourcesFit", "Too many pods",
        "node is at its limit of 2 pods: evicting 1 of its 2 lower-priority pods makes room"]]


def test_a_pod_nominated_to_a_node_counts_in_its_hints_as_it_does_in_the_filter(cli: Run, tmp_path: Path) -> None:
    # node-n: 1 CPU used by a low-priority pod, 2 CPU held by a more important pod nominated there.
    # The 2-CPU pod fits the node alone, but not with the nominated pod: 1 CPU short.
    source = write(tmp_path, [make_node("node-n", cpu="4")], [
        make_pod("low", "shop", node="node-n", cpu="1", priority=LOW),
        make_pod("first", "shop", cpu="2", priority=HIGH, nominated_node="node-n"),
        make_pod("web", "shop", cpu="2", priority=MID),
    ])
    res = cli("explain", "--pod", "shop/web", "--snapshot", source, "--no-color", "-o", "wide", width=250)
    assert table_rows(res.stdout) == [[
        "node-n", "unschedulable", "NodeResourcesFit", "Insufficient cpu",
        "needs 1 more CPU: evicting lower-priority pods could free 1 CPU"]]


def test_top_and_all_nodes_choose_how_many_nodes_are_listed(cli: Run, tmp_path: Path) -> None:
    source = write(tmp_path, [make_node(f"node-{i:02}", cpu="1") for i in range(12)],
                   [make_pod("big", cpu="2", priority=MID)])
    default = cli("explain", "--pod", "default/big", "--snapshot", source, "--no-color", "-o", "wide",
              width=250)
    assert [r[0] for r in table_rows(default.stdout)] == [f"node-{i:02}" for i in range(10)]
    assert "Nearest 10 of 12 nodes" in default.stdout
    assert "… 2 more nodes not shown (--all-nodes lists them)." in default.stdout
    top = cli("explain", "--pod", "default/big", "--snapshot", source, "--top", "3", "--no-color", "-o", "wide",
              width=250)
    assert [r[0] for r in table_rows(top.stdout)] == ["node-00", "node-01", "node-02"]
    assert "… 9 more nodes not shown" in top.stdout
    every = cli("explain", "--pod", "default/big", "--snapshot", source, "--all-nodes", "--no-color", "-o", "wide",
              width=250)
    assert [r[0] for r in table_rows(every.stdout)] == [f"node-{i:02}" for i in range(12)]
    assert "more nodes not shown" not in every.stdout
    assert "Nearest" not in every.stdout
    assert "0/12 nodes are available: 12 Insufficient cpu." in one_line(every.stdout)


def test_prefilter_rejections_and_left_out_nodes_are_explained(cli: Run, tmp_path: Path) -> None:
    def names(*nodes: str) -> dict[str, Any]:
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]} for n in nodes]}]}}}

    source = write(tmp_path, [make_node("node-a", cpu="1"), make_node("node-b")], [
        make_pod("pinned", cpu="2", affinity=names("node-a")),
        make_pod("contradictory", cpu="2", affinity=names("node-a", "node-b")),
    ])
    pinned = cli("explain", "--pod", "default/pinned", "--snapshot", source, "--no-color", "-o", "wide",
              width=250)
    assert ("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeAffinity]."
            in one_line(pinned.stdout))
    assert {r[0]: r for r in table_rows(pinned.stdout)}["node-b"] == [
        "node-b", "unresolvable", "-", "node(s) didn't satisfy plugin(s) [NodeAffinity]",
        "left out before filtering: the pod's spec.nodeName or node affinity (matchFields metadata.name) names "
        "other nodes"]
    conflict = cli("explain", "--pod", "default/contradictory", "--snapshot", source, "--no-color", "-o", "wide",
                   width=250)
    # An UnschedulableAndUnresolvable PreFilter stops PostFilter at DynamicResources' error, before
    # preemption (as a v1.36.2 scheduler does for VolumeBinding's, tests/sched/rig_volumes.json).
    assert "0/2 nodes are available: pod affinity terms conflict. not found" in one_line(conflict.stdout)
    assert {tuple(r[2:]) for r in table_rows(conflict.stdout)} == {(
        "NodeAffinity", "pod affinity terms conflict",
        "the pod's required node affinity terms name no node in common (matchFields metadata.name)")}


def test_a_snapshot_without_nodes_is_an_input_error_naming_what_is_missing(cli: Run, tmp_path: Path) -> None:
    # `kubectl get pods -A -o yaml` alone (a pod bound to a node it does not hold, one Pending):
    # nothing can be planned or explained on it.
    source = write(tmp_path, [], [make_pod("web", cpu="100m"), make_pod("api", cpu="100m", node="node-a")])
    for output in ("table", "json"):
        res = cli("explain", "--pod", "default/web", "--snapshot", source, "-o", output)
        assert res.exit_code == 2
        assert res.stdout == ""
        assert res.stderr.startswith(f"error: snapshot {source} has no nodes (2 pods): a plan needs the nodes too")
        assert res.stderr.count("\n") == 1


# -- a schedulable pod: why it may still be Pending ---------------------------------------------------

def _notes(cli: Run, source: str, pod: str) -> str:
    res = cli("explain", "--pod", pod, "--snapshot", source, "--no-color", "-o", "wide",
              width=250)
    assert res.exit_code == 0
    assert "Schedulable: fits on" in res.stdout
    text = res.stdout.split("Why it may still be Pending:", 1)[1]
    return one_line(text.split("The scheduler picks ", 1)[0].split("Nearest ", 1)[0])


@pytest.mark.parametrize(("extra", "note"), [
    pytest.param({"spec": {"schedulingGates": [{"name": "example.com/quota"}]}},
                 "• held by scheduling gates (example.com/quota): the scheduler ignores it until they are removed",
                 id="scheduling gates hold it back"),
    pytest.param({"spec": {"schedulerName": "volcano"}},
                 "• uses schedulerName 'volcano': only that scheduler places it",
                 id="another scheduler is in charge"),
    pytest.param({"nominated_node": "node-b"},
                 "• nominated to node node-b, where 1 pod(s) are still terminating (preemption victims in their "
                 "grace period)", id="its nominated node still has victims terminating"),
    pytest.param({}, "• it fits now: the scheduler has probably not retried yet (backoff after a failed attempt, "
                     "or its queue is long); it will bind the pod on its next attempt",
                 id="nothing holds it: the scheduler has not retried yet"),
])
def test_a_schedulable_pod_says_why_it_may_still_be_pending(cli: Run, tmp_path: Path, extra: dict[str, Any],
                                                            note: str) -> None:
    source = write(tmp_path, [make_node("node-a"), make_node("node-b")], [
        make_pod("victim", "batch", node="node-b", priority=LOW, deletion_timestamp=TERMINATING),
        make_pod("web", "shop", cpu="100m", priority=MID, **extra),
    ])
    assert _notes(cli, source, "shop/web") == note


# -- the built-in demo --------------------------------------------------------------------------------
#
# Its pods' names carry generated suffixes that change when the demo is regenerated, so the two
# Pending pods of its scenarios are found by what they are (kresched/demo/cluster.yaml's header).

@pytest.fixture(scope="module")
def demo() -> ClusterState:
    return load_snapshot("demo")


def _demo_critical(state: ClusterState) -> Pod:
    [pod] = [p for p in state.pending_pods() if p.namespace == "kube-system" and p.priority >= 2_000_000_000]
    return pod


def _demo_trainer(state: ClusterState) -> Pod:
    [pod] = [p for p in state.pending_pods() if p.namespace == "ml" and "nvidia.com/gpu" in p.requests.scalar]
    return pod


def _histogram(nodes: dict[str, list[str]]) -> str:
    counts = Counter(r for reasons in nodes.values() for r in reasons)
    return ", ".join(sorted(f"{n} {r}" for r, n in counts.items()))


def test_demo_critical_addon_json(cli: Run, demo: ClusterState) -> None:
    pod = _demo_critical(demo)
    doc = explain_json(cli, "demo", pod.key)
    n = len(demo.nodes)
    assert (doc["pod"], doc["schedulable"], doc["preemptionMessage"]) == (pod.key, False, None)
    assert set(doc["nodes"]) == {node.name for node in demo.nodes}
    assert all(doc["nodes"].values())
    assert doc["message"] == f"0/{n} nodes are available: {_histogram(doc['nodes'])}."
    # The control plane and the new pool; the add-on tolerates CriticalAddonsOnly (worker-a2's leftover
    # reservation), so there it fails on resources like the other workers.
    tainted = {node.name for node in demo.nodes if any(t.key != "CriticalAddonsOnly" for t in node.taints)}
    for name in tainted:
        assert doc["nodes"][name] == ["node(s) had untolerated taint(s)"]
    assert all(set(r) <= {"Insufficient cpu", "Insufficient memory"}
               for name, r in doc["nodes"].items() if name not in tainted)


def test_demo_trainer_json(cli: Run, demo: ClusterState) -> None:
    pod = _demo_trainer(demo)
    doc = explain_json(cli, "demo", pod.key)
    n = len(demo.nodes)
    assert (doc["pod"], doc["schedulable"]) == (pod.key, False)
    assert doc["message"] == f"0/{n} nodes are available: {_histogram(doc['nodes'])}."
    assert doc["preemptionMessage"] == f"0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
    # cp-1 (control plane), worker-a2 (kresched's leftover reservation) and the new pool's nodes fail
    # on their taints first (TaintToleration filters before NodeAffinity).
    tainted = {node.name for node in demo.nodes if node.taints}
    assert {"cp-1", "worker-a2"} <= tainted
    assert {name: r for name, r in doc["nodes"].items() if name in tainted} == {
        name: ["node(s) had untolerated taint(s)"] for name in tainted}
    assert {name: r for name, r in doc["nodes"].items() if name not in tainted} == {
        node.name: ["node(s) didn't match Pod's node affinity/selector"] for node in demo.nodes
        if node.name not in tainted}


@pytest.mark.parametrize(("which", "args"), [
    pytest.param(_demo_critical, (), id="explain_demo_critical_addon.txt"),
    pytest.param(_demo_trainer, (), id="explain_demo_trainer.txt"),
    pytest.param(_demo_critical, ("--top", "3"), id="explain_demo_critical_addon_top3.txt"),
])
def test_demo_tables_match_the_golden_files(cli: Run, demo: ClusterState, golden: Callable[[str, str], None],
                                            request: pytest.FixtureRequest, which: Callable[[ClusterState], Pod],
                                            args: tuple[str, ...]) -> None:
    res = cli("explain", "--snapshot", "demo", "--pod", which(demo).key, "--no-color", *args, width=80)
    assert (res.exit_code, res.stderr) == (0, "")
    assert max(len(line) for line in res.stdout.splitlines()) <= 80
    assert "\x1b[" not in res.stdout
    # Trailing blanks (rich pads titles and cells) are not part of what is compared: editors and
    # pre-commit hooks strip them from the golden files.
    golden(request.node.callspec.id, "".join(line.rstrip() + "\n" for line in res.stdout.splitlines()))
