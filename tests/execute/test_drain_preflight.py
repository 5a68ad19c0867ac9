"""The drain pre-flight (`plan_drain`), pure: kubectl's pod classes with kubectl's own messages
(staging/src/k8s.io/kubectl/pkg/drain/filters.go and cmd/drain/drain.go), the order evictions go in
under a PodDisruptionBudget, and where the evicted pods' replacements land."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kresched.model.objects import Pod
from kresched.plan.drain import DrainOptions, plan_drain
from tests.builders import make_node, make_pdb, make_pod, make_state

EMPTY_DIR = [{"name": "scratch", "emptyDir": {}}]
MIRROR = {"kubernetes.io/config.mirror": "abc123"}


# -- kubectl's pod classes -------------------------------------------------------------------------

@dataclass
class Case:
    name: str
    pod: dict[str, Any]
    opts: dict[str, bool] = field(default_factory=dict)
    #: ("evict" | "skip" | "error", the message kubectl has for it, or our warning).
    want: tuple[str, str | None] = ("evict", None)


CLASSES = [
    Case("a ReplicaSet pod is evicted", {}),
    Case("a mirror pod is skipped", {"annotations": MIRROR, "owner": "Node/node-a"},
         want=("skip", "mirror pod (a static pod the kubelet runs; the API cannot delete it)")),
    Case("a mirror pod is skipped even without a controller and with emptyDir",
         {"annotations": MIRROR, "owner": None, "volumes": EMPTY_DIR},
         want=("skip", "mirror pod (a static pod the kubelet runs; the API cannot delete it)")),
    Case("a DaemonSet pod is an error without --ignore-daemonsets", {"owner": "DaemonSet/fluent-bit"},
         want=("error", "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)")),
    Case("a DaemonSet pod is skipped with --ignore-daemonsets", {"owner": "DaemonSet/fluent-bit"},
         {"ignore_daemonsets": True}, want=("skip", "ignoring DaemonSet-managed Pods")),
    Case("a DaemonSet pod with emptyDir is refused for being a DaemonSet pod (the first filter decides)",
         {"owner": "DaemonSet/fluent-bit", "volumes": EMPTY_DIR},
         want=("error", "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)")),
    Case("a finished DaemonSet pod is removed", {"owner": "DaemonSet/fluent-bit", "phase": "Failed"}),
    Case("a pod with emptyDir is an error without --delete-emptydir-data", {"volumes": EMPTY_DIR},
         want=("error", "Pods with local storage (use --delete-emptydir-data to override)")),
    Case("a pod with emptyDir is evicted with --delete-emptydir-data", {"volumes": EMPTY_DIR},
         {"delete_emptydir_data": True}, want=("evict", "deleting Pods with local storage")),
    Case("a bare pod is an error without --force", {"owner": None},
         want=("error", "cannot delete Pods that declare no controller (use --force to override)")),
    Case("a bare pod is evicted with --force", {"owner": None}, {"force": True},
         want=("evict", "deleting Pods that declare no controller")),
    Case("a bare pod with emptyDir is refused for its local storage only (the first filter decides)",
         {"owner": None, "volumes": EMPTY_DIR},
         want=("error", "Pods with local storage (use --delete-emptydir-data to override)")),
    Case("a bare pod with emptyDir needs both flags", {"owner": None, "volumes": EMPTY_DIR},
         {"delete_emptydir_data": True},
         want=("error", "cannot delete Pods that declare no controller (use --force to override)")),
    Case("a finished bare pod with emptyDir is always removable", {"owner": None, "volumes": EMPTY_DIR,
                                                                    "phase": "Succeeded"}),
    Case("a pod already terminating is evicted again and waited for, as kubectl does",
         {"deletion_timestamp": "2026-01-01T00:00:00Z"}, want=("evict", "already terminating")),
    Case("a terminating bare pod still needs --force, as in kubectl",
         {"deletion_timestamp": "2026-01-01T00:00:00Z", "owner": None},
         want=("error", "cannot delete Pods that declare no controller (use --force to override)")),
]


def _classified(pod: Pod, opts: DrainOptions) -> tuple[str, str | None]:
    nodes = [make_node("node-a"), make_node("node-b")]
    [n] = plan_drain(make_state(nodes, [pod]), ["node-a"], opts).nodes
    if n.evict:
        return "evict", n.evict[0].warning
    if n.skip:
        return "skip", n.skip[0].reason
    return "error", n.errors[0].reason


@pytest.mark.parametrize("case", CLASSES, ids=lambda c: c.name)
def test_kubectl_pod_classes(case: Case) -> None:
    kwargs = {"owner": "ReplicaSet/web-7d9", **case.pod}
    pod = make_pod("p", "shop", node="node-a", cpu="100m", **kwargs)
    assert _classified(pod, DrainOptions(**case.opts)) == case.want


def _refused_node_state():
    pods = [
        make_pod("web-1", "shop", node="node-a", owner="ReplicaSet/web-7d9"),
        make_pod("fluent-bit-x2", "logging", node="node-a", owner="DaemonSet/fluent-bit"),
        make_pod("cache-0", "shop", node="node-a", owner="StatefulSet/cache", volumes=EMPTY_DIR),
        make_pod("debug", "default", node="node-a", owner=None),
        make_pod("debug-2", "default", node="node-a", owner=None),
        make_pod("kube-proxy-node-a", "kube-system", node="node-a", owner="Node/node-a", annotations=MIRROR),
    ]
    return make_state([make_node("node-a"), make_node("node-b")], pods)


def test_errors_are_grouped_per_message_in_kubectls_words_and_the_node_refused_as_kubectl_says():
    plan = plan_drain(_refused_node_state(), ["node-a"])
    assert plan.kubectl_errors() == [
        "cannot delete Pods that declare no controller (use --force to override): default/debug, default/debug-2",
        "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): logging/fluent-bit-x2",
        "cannot delete Pods with local storage (use --delete-emptydir-data to override): shop/cache-0",
    ]
    # kubectl's utilerrors aggregate: several errors in brackets, joined by ", ".
    assert plan.refusals() == [
        'unable to drain node "node-a" due to error: [cannot delete Pods that declare no controller '
        "(use --force to override): default/debug, default/debug-2, cannot delete DaemonSet-managed Pods (use "
        "--ignore-daemonsets to ignore): logging/fluent-bit-x2, cannot delete Pods with local storage (use "
        '--delete-emptydir-data to override): shop/cache-0]']
    [node] = plan.nodes
    assert [p.pod.key for p in node.evict] == ["shop/web-1"]
    assert [s.pod.key for s in node.skip] == ["kube-system/kube-proxy-node-a"]


def test_one_error_is_kubectls_message_alone():
    plan = plan_drain(_refused_node_state(), ["node-a"], DrainOptions(ignore_daemonsets=True, force=True))
    assert plan.refusals() == ['unable to drain node "node-a" due to error: cannot delete Pods with local storage '
                               "(use --delete-emptydir-data to override): shop/cache-0"]


def test_with_every_flag_nothing_is_refused_and_daemonset_and_mirror_pods_stay():
    plan = plan_drain(_refused_node_state(), ["node-a"],
                      DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True))
    [node] = plan.nodes
    assert plan.refusals() == []
    assert [p.pod.key for p in node.evict] == ["default/debug", "default/debug-2", "shop/cache-0", "shop/web-1"]
    assert {s.pod.key: s.reason for s in node.skip} == {
        "logging/fluent-bit-x2": "ignoring DaemonSet-managed Pods",
        "kube-system/kube-proxy-node-a": "mirror pod (a static pod the kubelet runs; the API cannot delete it)"}
    bare = [p for p in node.evict if p.pod.is_bare]
    assert {p.pending_reason for p in bare} == {"nothing recreates it"}
    assert plan.pending == []  # bare pods are gone for good, not Pending


# -- PodDisruptionBudgets: the order evictions go in ---------------------------------------------------

def _web(budget_spec: dict[str, Any], *, room: str = "8", replicas: int = 3, status: int | None = None):
    nodes = [make_node("node-a", cpu="8"), make_node("node-b", cpu=room)]
    pods = [make_pod(f"web-{i}", "shop", node="node-a", cpu="1", labels={"app": "web"}, owner="ReplicaSet/web-7d9")
            for i in range(replicas)]
    pdb = make_pdb("web", "shop", selector={"app": "web"}, disruptions_allowed=status, **budget_spec)
    return make_state(nodes, pods, [pdb])


def _order(state, **opts: Any) -> list[tuple[str, int, str | None]]:
    [node] = plan_drain(state, ["node-a"], DrainOptions(**opts)).nodes
    return [(p.pod.name, p.queued_behind, p.blocked) for p in node.evict]


def test_a_budget_of_one_lets_one_go_now_and_queues_the_others_behind_it():
    assert _order(_web({"max_unavailable": 1})) == [("web-0", 0, None), ("web-1", 1, None), ("web-2", 2, None)]


def test_a_budget_of_two_lets_two_go_now():
    assert _order(_web({"max_unavailable": 2})) == [("web-0", 0, None), ("web-1", 0, None), ("web-2", 2, None)]


def test_a_budget_that_allows_nothing_blocks_every_pod_with_the_reason():
    order = _order(_web({"min_available": 3}))
    reason = "PodDisruptionBudget shop/web allows no more disruptions (needs 3 healthy pods, has 3)"
    assert order == [("web-0", 0, reason), ("web-1", 0, reason), ("web-2", 0, reason)]


def test_when_the_replacements_would_stay_pending_the_budget_never_recovers():
    # node-b has room for one replacement: web-0's lands and gives the budget back to web-1,
    # whose replacement finds no room; web-2 then waits for a budget nothing gives back.
    plan = plan_drain(_web({"max_unavailable": 1}, room="1"), ["node-a"])
    [node] = plan.nodes
    assert [(p.pod.name, p.lands_on, p.queued_behind) for p in node.evict] == [
        ("web-0", "node-b", 0), ("web-1", None, 1), ("web-2", None, 0)]
    assert node.evict[2].blocked == (
        "PodDisruptionBudget shop/web allows 1 disruption(s), taken by the 2 pod(s) of it evicted before this "
        "one; it recovers only when their replacements are Ready, and none of them would run")
    assert [p.pod.name for p in plan.pending] == ["web-1", "web-2"]
    assert node.evict[1].pending_reason == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable."


def test_with_disable_eviction_no_budget_is_asked():
    assert _order(_web({"min_available": 3}), disable_eviction=True) == [
        ("web-0", 0, None), ("web-1", 0, None), ("web-2", 0, None)]


def test_a_pod_covered_by_two_pdbs_is_blocked_as_the_eviction_api_refuses_it():
    state = _web({"max_unavailable": 1}, replicas=1)
    other = make_pdb("all", "shop", selector={"app": "web"}, max_unavailable=5)
    state = make_state(state.nodes, state.pods, [*state.pdbs, other])
    [(_, _, reason)] = _order(state)
    assert reason == ("covered by 2 PodDisruptionBudgets (shop/web, shop/all): the eviction API refuses it (500)")


def test_finished_pods_spend_no_budget():
    state = _web({"min_available": 2}, replicas=2)  # budget 0
    done = make_pod("web-done", "shop", node="node-a", labels={"app": "web"}, phase="Succeeded", ready=False)
    state = make_state(state.nodes, [*state.pods, done], state.pdbs)
    order = {name: blocked for name, _, blocked in _order(state)}
    assert order["web-done"] is None
    assert order["web-0"] is not None


# -- where the replacements land ------------------------------------------------------------------

def test_drained_nodes_are_excluded_and_the_most_important_pod_takes_the_last_room():
    nodes = [make_node("node-a", cpu="4"), make_node("node-b", cpu="4"), make_node("node-c", cpu="2")]
    pods = [make_pod("low", "shop", node="node-a", cpu="2", priority=10),
            make_pod("high", "shop", node="node-b", cpu="2", priority=1000)]
    plan = plan_drain(make_state(nodes, pods), ["node-a", "node-b"])
    by_pod = {p.pod.name: p for n in plan.nodes for p in n.evict}
    assert by_pod["high"].lands_on == "node-c"
    assert by_pod["low"].lands_on is None
    assert by_pod["low"].pending_reason == "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable."
    assert [n.node for n in plan.nodes] == ["node-a", "node-b"]


def test_pod_selector_limits_the_drain_to_the_pods_it_matches():
    from kresched.plan.drain import parse_selector

    nodes = [make_node("node-a"), make_node("node-b")]
    pods = [make_pod("web-1", "shop", node="node-a", labels={"app": "web"}),
            make_pod("db-1", "shop", node="node-a", labels={"app": "db"}),
            make_pod("bare", "shop", node="node-a", owner=None, labels={"app": "debug"})]
    plan = plan_drain(make_state(nodes, pods), ["node-a"], DrainOptions(pod_selector=parse_selector("app in (web,db)")))
    [node] = plan.nodes
    assert [p.pod.name for p in node.evict] == ["db-1", "web-1"]
    assert node.errors == ()  # the bare pod is not selected: not refused either


@pytest.mark.parametrize(("text", "labels", "matches"), [
    ("app=web", {"app": "web"}, True),
    ("app==web,tier!=db", {"app": "web", "tier": "db"}, False),
    ("app notin (db, cache)", {"app": "web"}, True),
    ("gpu,!spot", {"gpu": "1"}, True),
    ("gpu,!spot", {"gpu": "1", "spot": "yes"}, False),
])
def test_pod_selector_syntax(text: str, labels: dict[str, str], matches: bool) -> None:
    from kresched.model.selectors import label_selector_matches
    from kresched.plan.drain import parse_selector

    assert label_selector_matches(parse_selector(text), labels) is matches
