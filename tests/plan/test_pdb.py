"""PdbLedger against the eviction API's rules (pkg/registry/core/pod/storage/eviction.go) and the
disruption controller's budget (pkg/controller/disruption/disruption.go).

The eviction API, for one pod: `canIgnorePDB` (Succeeded, Failed or Pending phase, or a deletion
timestamp) deletes without looking at PDBs; otherwise the PDBs of the namespace whose selector is
neither nil nor empty and matches the pod are found; more than one → 500; an unready pod is
deleted without spending under `unhealthyPodEvictionPolicy: AlwaysAllow`, or under IfHealthyBudget
(the default) when `currentHealthy >= desiredHealthy > 0`; otherwise `checkAndDecrement`: a
negative budget → 403, zero → 429, else one unit is spent.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.objects import Pod, PodDisruptionBudget
from kresched.plan.pdb import PdbCheck, PdbLedger, computed_status
from tests.builders import gang_member, make_node, make_pod, make_pod_group, make_state

WEB = {"app": "web"}
NS = "default"


def pod(name: str = "v", labels: dict[str, str] | None = None, **kw: Any) -> Pod:
    return make_pod(name, node="n", labels=WEB if labels is None else labels, **kw)


def pdb(name: str = "web", *, status: dict[str, Any] | None = None, spec: dict[str, Any] | None = None,
        namespace: str = NS) -> PodDisruptionBudget:
    """A PDB from API-shaped dicts: `spec` defaults to selecting app=web, `status` to none."""
    obj: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace},
                           "spec": {"selector": {"matchLabels": WEB}} if spec is None else spec}
    if status is not None:
        obj["status"] = status
    return msgspec.convert(obj, PodDisruptionBudget)


def budget(allowed: int, **status: Any) -> dict[str, Any]:
    return {"disruptionsAllowed": allowed, **status}


def ledger(pdbs: list[PodDisruptionBudget], pods: list[Pod] = ()) -> PdbLedger:  # type: ignore[assignment]
    return PdbLedger(make_state([make_node("n")], list(pods), pdbs))


def verdict(c: PdbCheck) -> str:
    """`none` (no PDB covers it), `free` (allowed without spending), `spends`, or `refused`."""
    if c.pdb is None:
        return "none"
    if not c.allowed:
        return "refused"
    return "spends" if c.spends else "free"


TERMINATING = "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(("pdbs", "victim", "want"), [
    pytest.param([], pod(), "none", id="a pod no PDB covers is evicted freely"),
    pytest.param([pdb(status=budget(2))], pod(), "spends", id="a covered pod spends one unit of a budget left"),
    pytest.param([pdb(status=budget(0))], pod(), "refused", id="a budget of zero refuses the eviction (429)"),
    pytest.param([pdb(status=budget(-1))], pod(), "refused", id="a negative budget refuses the eviction (403)"),
    pytest.param([pdb("a", status=budget(5)), pdb("b", status=budget(5))], pod(), "refused",
                 id="a pod covered by two PDBs is refused whatever their budgets (500)"),
    pytest.param([pdb("a", status=budget(0)), pdb("b", status=budget(0))], pod(phase="Succeeded"), "free",
                 id="a Succeeded pod ignores its PDBs, even two of them (canIgnorePDB)"),
    pytest.param([pdb(status=budget(0))], pod(phase="Failed"), "free", id="a Failed pod ignores its PDB"),
    pytest.param([pdb(status=budget(0))], pod(phase="Pending"), "free",
                 id="a pod in phase Pending ignores its PDB, though bound"),
    pytest.param([pdb(status=budget(0))], pod(deletion_timestamp=TERMINATING), "free",
                 id="a terminating pod ignores its PDB"),
    pytest.param([pdb(status=budget(0), spec={"selector": None})], pod(), "none",
                 id="a nil selector covers nothing"),
    pytest.param([pdb(status=budget(0), spec={"selector": {}})], pod(), "none",
                 id="an empty selector covers nothing for the eviction API (selector.Empty())"),
    pytest.param([pdb(status=budget(0), spec={"selector": {"matchLabels": {}, "matchExpressions": []}})], pod(),
                 "none", id="a selector with empty lists is empty too"),
    pytest.param([pdb(status=budget(0), spec={"selector": {"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["web", "api"]}]}})], pod(), "refused",
                 id="a selector of expressions only covers the pods it matches"),
    pytest.param([pdb(status=budget(0), spec={"selector": {"matchLabels": {"app": "db"}}})], pod(), "none",
                 id="a selector that does not match covers nothing"),
    pytest.param([pdb(status=budget(0), spec={"selector": {"matchLabels": {**WEB, "tier": "front"}}})], pod(), "none",
                 id="every pair of matchLabels must match, not only the first"),
    pytest.param([pdb(status=budget(0), spec={"selector": {"matchLabels": WEB, "matchExpressions": [
        {"key": "tier", "operator": "Exists"}]}})], pod(), "none",
                 id="matchLabels and matchExpressions must both match"),
    pytest.param([pdb(status=budget(0), spec={"selector": {"matchLabels": WEB, "matchExpressions": [
        {"key": "tier", "operator": "Exists"}]}})], pod(labels={**WEB, "tier": "x"}), "refused",
                 id="a pod matching both is covered"),
    pytest.param([pdb("db", status=budget(0), spec={"selector": {"matchLabels": {"app": "db"}}}),
                  pdb("front", status=budget(2), spec={"selector": {"matchLabels": {"tier": "front"}}})],
                 pod(labels={**WEB, "tier": "front"}), "spends",
                 id="PDBs selecting by different labels: the one whose label the pod has covers it"),
    pytest.param([pdb("db", status=budget(0), spec={"selector": {"matchLabels": {"app": "db"}}}),
                  pdb("web", status=budget(2))], pod(labels={"tier": "front"}), "none",
                 id="a pod without the label the namespace's PDBs select by is not covered"),
    pytest.param([pdb("db", status=budget(0), spec={"selector": {"matchLabels": {"app": "db"}}}),
                  pdb("web", status=budget(2))], pod(), "spends",
                 id="of PDBs selecting by one label, the one with the pod's value covers it"),
    pytest.param([pdb("all", status=budget(2)),
                  pdb("front", status=budget(5), spec={"selector": {"matchLabels": {**WEB, "tier": "front"}}})],
                 pod(labels={**WEB, "tier": "back"}), "spends",
                 id="a PDB sharing the pod's pair but selecting by more covers it only if the rest matches too"),
    pytest.param([pdb("all", status=budget(2)),
                  pdb("front", status=budget(5), spec={"selector": {"matchLabels": {**WEB, "tier": "front"}}})],
                 pod(labels={**WEB, "tier": "front"}), "refused",
                 id="and when it does, the pod is covered by both"),
    pytest.param([pdb(status=budget(0), namespace="other")], pod(), "none",
                 id="a PDB in another namespace covers nothing"),
    pytest.param([pdb(status=budget(0, disruptedPods={"v": TERMINATING}))], pod(), "free",
                 id="a pod already in disruptedPods spends nothing again"),
    pytest.param([pdb(status=budget(0, disruptedPods={"other": TERMINATING}))], pod(), "refused",
                 id="another pod in disruptedPods does not help"),
    pytest.param([pdb(status=budget(0), spec={"selector": {"matchLabels": WEB},
                                              "unhealthyPodEvictionPolicy": "AlwaysAllow"})],
                 pod(ready=False), "free", id="AlwaysAllow evicts an unready pod without spending"),
    pytest.param([pdb(status=budget(0), spec={"selector": {"matchLabels": WEB},
                                              "unhealthyPodEvictionPolicy": "AlwaysAllow"})],
                 pod(ready=True), "refused", id="AlwaysAllow does not let a ready pod through a spent budget"),
    pytest.param([pdb(status=budget(0, currentHealthy=3, desiredHealthy=3),
                      spec={"selector": {"matchLabels": WEB}, "unhealthyPodEvictionPolicy": "IfHealthyBudget"})],
                 pod(ready=False), "free",
                 id="IfHealthyBudget evicts an unready pod for free when the application is healthy"),
    pytest.param([pdb(status=budget(0, currentHealthy=3, desiredHealthy=3))], pod(ready=False), "free",
                 id="without a policy an unready pod is treated as under IfHealthyBudget"),
    pytest.param([pdb(status=budget(0, currentHealthy=2, desiredHealthy=3))], pod(ready=False), "refused",
                 id="IfHealthyBudget needs a budget for an unready pod when the application is disrupted"),
    pytest.param([pdb(status=budget(0, currentHealthy=0, desiredHealthy=0))], pod(ready=False), "refused",
                 id="IfHealthyBudget with nothing desired still goes through checkAndDecrement"),
    pytest.param([pdb(status=budget(1, currentHealthy=0, desiredHealthy=0))], pod(ready=False), "spends",
                 id="an unready pod that goes through checkAndDecrement spends a unit"),
    pytest.param([pdb("a", status=budget(5), spec={"selector": {"matchLabels": WEB},
                                                    "unhealthyPodEvictionPolicy": "AlwaysAllow"}),
                  pdb("b", status=budget(5))], pod(ready=False), "refused",
                 id="two PDBs refuse even an unready pod under AlwaysAllow (the 500 comes first)"),
])
def test_check(pdbs: list[PodDisruptionBudget], victim: Pod, want: str) -> None:
    assert verdict(ledger(pdbs, [victim]).check(victim)) == want


def test_a_refusal_says_why() -> None:
    one = ledger([pdb(status=budget(0, currentHealthy=2, desiredHealthy=2))]).check(pod())
    assert (one.pdb, one.remaining, one.violation) == ("default/web", 0, True)
    assert one.reason == "PodDisruptionBudget default/web allows no more disruptions (needs 2 healthy pods, has 2)"
    two = ledger([pdb("a", status=budget(5)), pdb("b", status=budget(5))]).check(pod())
    assert two.reason is not None
    assert "default/a, default/b" in two.reason
    assert "500" in two.reason


def test_evictions_spend_the_budget_in_order() -> None:
    led = ledger([pdb(status=budget(1))])
    first, second = led.check_all([pod("w1"), pod("w2")])
    assert (verdict(first), verdict(second)) == ("spends", "refused")
    assert (first.remaining, second.remaining) == (1, 0)
    # check_all does not change the ledger; each ordering starts from the whole budget.
    assert verdict(led.check(pod("w2"))) == "spends"


def test_free_evictions_leave_the_budget_to_the_others() -> None:
    led = ledger([pdb(status=budget(1, disruptedPods={"gone": TERMINATING}))])
    checks = led.check_all([pod("gone"), pod("unready", ready=False, phase="Pending"), pod("w1"), pod("w2")])
    assert [verdict(c) for c in checks] == ["free", "free", "spends", "refused"]


def test_split_violating_keeps_the_order_and_spends_in_it() -> None:
    led = ledger([pdb(status=budget(1))])
    pods = [pod("w1"), pod("free", labels={}), pod("w2")]
    bad, good = led.split_violating(pods)
    assert ([p.name for p in bad], [p.name for p in good]) == (["w2"], ["w1", "free"])
    bad, good = led.split_violating(list(reversed(pods)))
    assert ([p.name for p in bad], [p.name for p in good]) == (["w1"], ["w2", "free"])


def test_commit_spends_for_later_plans() -> None:
    led = ledger([pdb(status=budget(1))])
    assert verdict(led.check(pod("w2"))) == "spends"
    led.commit([pod("w1")])
    assert verdict(led.check(pod("w2"))) == "refused"
    led.commit([pod("free", labels={}), pod("gone", deletion_timestamp=TERMINATING)])
    assert led.remaining == {"default/web": 0}


# -- a PDB without status: the disruption controller's budget ----------------------------------------


def m(name: str, *, ready: bool = True, owner: str | None = "ReplicaSet/web", **kw: Any) -> Pod:
    """A pod the PDB matches."""
    return make_pod(name, node="n", labels=WEB, ready=ready, owner=owner, **kw)


THREE = [m("a"), m("b"), m("c")]


@pytest.mark.parametrize(("spec", "pods", "want"), [
    pytest.param({"minAvailable": 2}, THREE, (1, 3, 2, 3), id="minAvailable 2 of 3 ready pods"),
    pytest.param({"minAvailable": 3}, THREE, (0, 3, 3, 3), id="minAvailable 3 of 3 ready pods"),
    pytest.param({"minAvailable": 5}, THREE, (0, 3, 5, 3), id="minAvailable above the pod count gives no budget"),
    pytest.param({"minAvailable": 1}, [m("a"), m("b", ready=False), m("c", deletion_timestamp=TERMINATING)],
                 (0, 1, 1, 3), id="only ready pods not being deleted are healthy; an integer counts every pod"),
    pytest.param({"minAvailable": 0}, [], (0, 0, 0, 0), id="no pod expected gives no budget, even with minAvailable 0"),
    pytest.param({"minAvailable": 0}, THREE, (3, 3, 0, 3), id="minAvailable 0 lets every healthy pod go"),
    pytest.param({"minAvailable": "50%"}, THREE, (1, 3, 2, 3), id="a percentage of minAvailable rounds up"),
    pytest.param({"minAvailable": "100%"}, THREE, (0, 3, 3, 3), id="minAvailable 100% gives no budget"),
    pytest.param({"maxUnavailable": 1}, THREE, (1, 3, 2, 3), id="maxUnavailable 1 of 3"),
    pytest.param({"maxUnavailable": 0}, THREE, (0, 3, 3, 3), id="maxUnavailable 0"),
    pytest.param({"maxUnavailable": 5}, THREE, (3, 3, 0, 3), id="maxUnavailable above the count desires nothing"),
    pytest.param({"maxUnavailable": "50%"}, THREE, (2, 3, 1, 3), id="a percentage of maxUnavailable rounds up"),
    pytest.param({"maxUnavailable": "10%"}, THREE, (1, 3, 2, 3), id="10% of 3 rounds up to 1"),
    pytest.param({"maxUnavailable": 1}, [m("a", owner=None), m("b", owner=None)], (0, 2, 0, 0),
                 id="bare pods are unmanaged: no scale, so nothing is expected and nothing allowed"),
    pytest.param({"maxUnavailable": 1}, [m("a"), m("b"), m("c", owner=None)], (2, 3, 1, 2),
                 id="a bare pod counts as healthy but not in the expected scale"),
    pytest.param({"minAvailable": "50%"}, [m("a"), m("b"), m("c", phase="Succeeded", ready=False)], (1, 2, 1, 2),
                 id="finished pods are not part of the scale"),
    pytest.param({}, THREE, (0, 3, 0, 0), id="neither field set (policy/v1 has no default) allows nothing"),
])
def test_computed_status(spec: dict[str, Any], pods: list[Pod], want: tuple[int, int, int, int]) -> None:
    got = computed_status(pdb(spec={"selector": {"matchLabels": WEB}, **spec}), pods)
    assert got == want


def test_a_ledger_computes_the_budget_of_a_pdb_without_status_from_the_pods_it_selects() -> None:
    pods = [*THREE, m("elsewhere", namespace="other"), make_pod("db", node="n", labels={"app": "db"})]
    led = ledger([pdb(spec={"selector": {"matchLabels": WEB}, "minAvailable": 2})], pods)
    assert led.budget("default/web") == 1
    assert [verdict(c) for c in led.check_all([THREE[0], THREE[1]])] == ["spends", "refused"]


def test_a_status_is_taken_as_it_is_rather_than_recomputed() -> None:
    led = ledger([pdb(spec={"selector": {"matchLabels": WEB}, "minAvailable": 3}, status=budget(2))], THREE)
    assert led.budget("default/web") == 2


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["web", "db", "both", "none"]), st.booleans(), st.booleans(),
                          st.booleans()), min_size=1, max_size=8),
       st.integers(-1, 3), st.integers(-1, 3), st.integers(1, 5), st.integers(0, 5), st.randoms(use_true_random=False))
def test_split_violating_is_check_alls_verdicts_in_the_same_order(
        pods: list[tuple[str, bool, bool, bool]], web_budget: int, db_budget: int, gang_size: int, min_count: int,
        rnd: Any) -> None:
    # Pods under one PDB, two (refused), none; ready or not; members of a running gang or not. The
    # split spends the budgets (PDBs' and the gang's) in the order given, as `check_all` does.
    labels = {"web": WEB, "db": {"tier": "db"}, "both": {**WEB, "tier": "db"}, "none": {}}
    members = [make_pod(f"job-{i}", node="n", **gang_member("job")) for i in range(gang_size)]
    candidates = [make_pod(f"p{i}", node="n", labels=labels[which], ready=ready,
                           **(gang_member("job") if in_gang else {}))
                  for i, (which, ready, in_gang, _) in enumerate(pods)]
    pdbs = [pdb(status=budget(web_budget)),
            pdb("db", spec={"selector": {"matchLabels": {"tier": "db"}}}, status=budget(db_budget))]
    state = make_state([make_node("n")], [*members, *candidates], pdbs,
                       pod_groups=[make_pod_group("job", min_count=min_count)])
    order = [*candidates, *(m for m, (*_, take) in zip(members, pods, strict=False) if take)]
    rnd.shuffle(order)
    checks = PdbLedger(state).check_all(order)
    want = ([p.name for p, c in zip(order, checks, strict=True) if c.violation],
            [p.name for p, c in zip(order, checks, strict=True) if not c.violation])
    bad, good = PdbLedger(state).split_violating(order)
    assert ([p.name for p in bad], [p.name for p in good]) == want


def test_check_all_spends_a_running_gangs_budget_member_by_member() -> None:
    # 5 members running, minCount 4: the first member may go, the second then stops the gang.
    members = [make_pod(f"job-{i}", node="n", **gang_member("job")) for i in range(5)]
    state = make_state([make_node("n")], members, [], pod_groups=[make_pod_group("job", min_count=4)])
    checks = PdbLedger(state).check_all(members[:3])
    assert [c.stops_gang for c in checks] == [False, True, True]


def test_a_refused_eviction_spends_nothing_of_the_budget_the_next_pods_see() -> None:
    led = ledger([pdb(status=budget(1))])
    checks = led.check_all([pod("w1"), pod("w2"), pod("w3")])
    assert [(verdict(c), c.remaining) for c in checks] == [("spends", 1), ("refused", 0), ("refused", 0)]
