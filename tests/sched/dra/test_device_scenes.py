"""Pods with ResourceClaims on small clusters, end to end: where they fit, the scheduler's message
when they do not, what a simulated placement allocates, and kresched's own preemption for devices
where the scheduler's gives up."""

from __future__ import annotations

from typing import Any

import msgspec

from kresched.model.specs import ResourceRequirements
from kresched.plan.devices import DEVICE_NOTE
from kresched.plan.drain import plan_drain
from kresched.plan.explain import explain_pod
from kresched.plan.planner import plan_pod
from kresched.plan.queue import plan_pending
from tests.builders import (
    make_claim,
    make_claim_template,
    make_device_class,
    make_node,
    make_pdb,
    make_pod,
    make_slice,
    make_state,
)

GPU = "gpu.example.com"
NODES = [make_node("node-a"), make_node("node-b")]
NOT_HELPFUL = "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."


def gpu_user(name: str, node: str, device: str, *, priority: int = 0, shared: str | None = None, **extra: Any):
    """A running pod on `node` whose generated claim holds `device` there (or, `shared`, a claim it
    shares, which the caller makes); `extra`: more of `make_pod`'s arguments."""
    if shared is not None:
        return make_pod(name, node=node, priority=priority, cpu="100m", claims={"gpu": shared}, **extra), None
    pod = make_pod(name, node=node, priority=priority, cpu="100m", claim_templates={"gpu": "one-gpu"},
                   generated={"gpu": f"{name}-gpu"}, **extra)
    claim = make_claim(f"{name}-gpu", owner_pod=pod, allocated=[(GPU, node, device)], node=node, reserved_for=[pod])
    return pod, claim


def pending_trainer(priority: int = 1000, count: int = 1):
    pod = make_pod("trainer", priority=priority, cpu="1", claim_templates={"gpu": "one-gpu"},
                   generated={"gpu": "trainer-gpu"})
    return pod, make_claim("trainer-gpu", owner_pod=pod,
                           requests=[{"name": "gpu", "exactly": {"deviceClassName": GPU, "count": count}}])


def state_with(pods, claims, *, slices=None, pdbs=()):
    dra = [make_device_class(), make_claim_template("one-gpu"), *(slices or [make_slice("node-a", 2),
                                                                          make_slice("node-b", 2)]), *claims]
    return make_state(NODES, pods, list(pdbs), dra=dra)


def test_a_pod_lands_where_a_device_of_its_class_is_free() -> None:
    a0, c0 = gpu_user("a0", "node-a", "gpu-0")
    a1, c1 = gpu_user("a1", "node-a", "gpu-1")
    trainer, claim = pending_trainer()
    state = state_with([a0, a1, trainer], [c0, c1, claim])
    e = explain_pod(state, state.pod(trainer.key))
    assert e.feasible == ["node-b"]
    assert {v.node: v.status.reasons for v in e.verdicts}["node-a"] == ("cannot allocate all claims",)
    plan = plan_pod(state, state.pod(trainer.key))
    assert (plan.outcome, plan.node) == ("fits", "node-b")


def test_with_every_device_held_the_scheduler_writes_that_preemption_is_not_helpful() -> None:
    users = [gpu_user(f"{n}{i}", f"node-{n}", f"gpu-{i}", priority=2000) for n in "ab" for i in (0, 1)]
    trainer, claim = pending_trainer()
    state = state_with([*(p for p, _ in users), trainer], [*(c for _, c in users), claim])
    e = explain_pod(state, state.pod(trainer.key))
    assert e.scheduler_message == ("0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
                                   f"{NOT_HELPFUL}")


def test_where_the_scheduler_gives_up_kresched_evicts_the_lower_priority_pod_that_holds_the_device() -> None:
    users = [gpu_user(f"{n}{i}", f"node-{n}", f"gpu-{i}") for n in "ab" for i in (0, 1)]
    trainer, claim = pending_trainer()
    state = state_with([*(p for p, _ in users), trainer], [*(c for _, c in users), claim])
    e = explain_pod(state, state.pod(trainer.key))
    assert e.preemption_message == "0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    plan = plan_pod(state, state.pod(trainer.key))
    assert plan.outcome == "evict"
    assert [v.pod.name for v in plan.victims] == ["a1"]  # one victim; node-a by name; a1 started with a0
    assert DEVICE_NOTE in plan.notes
    assert f"claim default/trainer-gpu would get {GPU}/node-a/gpu-1" in plan.notes


def test_where_the_device_holders_also_fill_the_cpu_kresched_still_evicts_one_to_free_its_device() -> None:
    # The nodes are full on cpu too: the scheduler's preemption, taking the holders off, makes room
    # for the cpu but not the devices (their claims stay allocated) — DynamicResources fails the
    # node after every eligible pod is gone. Freeing the devices, one holder makes room for both.
    users = []
    for n in "ab":
        for i in (0, 1):
            pod, claim = gpu_user(f"{n}{i}", f"node-{n}", f"gpu-{i}")
            users.append((msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, containers=(
                msgspec.structs.replace(pod.spec.containers[0], resources=ResourceRequirements(
                    requests={"cpu": "1900m"})),))), claim))
    trainer, claim = pending_trainer()
    state = state_with([*(p for p, _ in users), trainer], [*(c for _, c in users), claim])
    e = explain_pod(state, state.pod(trainer.key))
    assert e.scheduler_message.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    plan = plan_pod(state, state.pod(trainer.key))
    assert plan.outcome == "evict"
    assert plan.frees_devices
    assert [v.pod.name for v in plan.victims] == ["a1"]
    assert DEVICE_NOTE in plan.notes


def test_a_pod_on_a_claim_another_pod_still_shares_frees_nothing() -> None:
    keeper = make_pod("keeper", node="node-a", priority=5000, claims={"gpu": "team-gpus"})
    borrower = make_pod("borrower", node="node-a", priority=0, claims={"gpu": "team-gpus"})
    team = make_claim("team-gpus", allocated=[(GPU, "node-a", "gpu-0"), (GPU, "node-a", "gpu-1")], node="node-a",
                      reserved_for=[keeper, borrower])
    b = [gpu_user(f"b{i}", "node-b", f"gpu-{i}") for i in (0, 1)]
    trainer, claim = pending_trainer()
    state = state_with([keeper, borrower, *(p for p, _ in b), trainer], [team, *(c for _, c in b), claim])
    plan = plan_pod(state, state.pod(trainer.key))
    assert plan.node == "node-b"
    assert all(v.node == "node-b" for v in plan.victims)


def test_where_the_schedulers_preemption_helps_its_choice_stands() -> None:
    busy = make_pod("busy", node="node-a", priority=0, cpu="3500m")
    other = make_pod("other", node="node-b", priority=0, cpu="3500m")
    trainer, claim = pending_trainer()
    state = state_with([busy, other, trainer], [claim])
    plan = plan_pod(state, state.pod(trainer.key))
    assert plan.outcome == "evict"
    assert [v.pod.name for v in plan.victims] == ["busy"]
    assert DEVICE_NOTE not in plan.notes


def test_pods_planned_one_after_another_take_devices_one_by_one() -> None:
    first, c1 = pending_trainer()
    second = make_pod("second", priority=900, cpu="1", claim_templates={"gpu": "one-gpu"},
                      generated={"gpu": "second-gpu"})
    c2 = make_claim("second-gpu", owner_pod=second)
    state = state_with([first, second], [c1, c2], slices=[make_slice("node-a", 1), make_slice("node-b", 0)])
    plans = plan_pending(state, [state.pod(first.key), state.pod(second.key)])
    assert [(p.pod.name, p.outcome, p.node) for p in plans] == [("trainer", "fits", "node-a"),
                                                               ("second", "infeasible", None)]


def test_a_drained_pods_replacement_gets_a_new_claim_and_lands_where_a_device_is_free() -> None:
    a0, c0 = gpu_user("a0", "node-a", "gpu-0")
    state = state_with([a0], [c0], slices=[make_slice("node-a", 1), make_slice("node-b", 1)])
    drain = plan_drain(state, ["node-a"])
    assert {d.pod.key: d.lands_on for n in drain.nodes for d in n.evict} == {"default/a0": "node-b"}


def test_explain_names_who_holds_the_devices_on_each_node() -> None:
    users = [gpu_user(f"{n}{i}", f"node-{n}", f"gpu-{i}", priority=2000) for n in "ab" for i in (0, 1)]
    trainer, claim = pending_trainer()
    state = state_with([*(p for p, _ in users), trainer], [*(c for _, c in users), claim])
    e = explain_pod(state, state.pod(trainer.key))
    hints = {v.node: v.hints for v in e.verdicts}
    assert any("already allocated" in h and "default/a0-gpu" in h and "default/a0" in h for h in hints["node-a"])
    assert any("default/b1" in h for h in hints["node-b"])


def test_without_dra_objects_the_answer_says_the_devices_were_not_looked_at_and_cannot_be_known() -> None:
    trainer, _ = pending_trainer()
    state = make_state(NODES, [trainer])
    e = explain_pod(state, state.pod(trainer.key))
    assert any("its devices were not looked at" in n for n in e.notes)
    assert e.unknown
    plan = plan_pod(state, state.pod(trainer.key))
    assert any("its devices were not looked at" in n for n in plan.notes)
    assert (plan.outcome, plan.node, plan.missing_kinds) == ("unknown", None,
                                                             ("DeviceClass", "ResourceSlice", "ResourceClaim"))


def test_a_what_if_gives_each_replica_its_own_claim_and_consumes_devices_replica_by_replica() -> None:
    from pathlib import Path

    from kresched.plan.whatif import plan_workloads
    from kresched.sources.manifests import read_manifests, workloads_of

    a0, c0 = gpu_user("a0", "node-a", "gpu-0")
    state = state_with([a0], [c0])  # three of the four GPUs are free
    docs = read_manifests([str(Path(__file__).parents[2] / "fixtures/dra/deployment-4-gpus.yaml")])
    result = plan_workloads(state, workloads_of(docs, state, "default", False, None))
    (w,) = result.workloads
    assert (w.placed, w.pending) == ({"node-b": 2, "node-a": 1}, 1)


def test_two_pods_sharing_a_claim_follow_it_to_where_the_first_was_placed() -> None:
    first = make_pod("first", priority=1000, cpu="1", claims={"gpu": "team-gpu"})
    second = make_pod("second", priority=900, cpu="1", claims={"gpu": "team-gpu"})
    state = state_with([first, second], [make_claim("team-gpu")])
    plans = plan_pending(state, [state.pod(first.key), state.pod(second.key)])
    assert [p.outcome for p in plans] == ["fits", "fits"]
    assert plans[1].node == plans[0].node
    assert plans[1].candidates == (plans[0].node,)  # the other node has free devices, but not the claim


def test_a_device_an_earlier_plan_freed_is_free_for_a_later_pod_however_many_placements_came_between() -> None:
    """The devices in use follow the queue: a GPU holder one plan evicts gives its device back for
    the pods planned after it, also when the first pod that asks about devices comes after more
    placements than a simulation keeps its ancestors for (the index is then not rebuilt from the
    claims as the snapshot file holds them)."""
    holder = make_pod("holder", node="node-a", priority=0, cpu="3500m", owner=None,
                      claim_templates={"gpu": "one-gpu"}, generated={"gpu": "holder-gpu"})
    held = make_claim("holder-gpu", owner_pod=holder, allocated=[(GPU, "node-a", "gpu-0")], node="node-a",
                      reserved_for=[holder])
    keeper = make_pod("keeper", node="node-b", priority=5000, cpu="3500m", claim_templates={"gpu": "one-gpu"},
                      generated={"gpu": "keeper-gpu"})
    kept = make_claim("keeper-gpu", owner_pod=keeper, allocated=[(GPU, "node-b", "gpu-0")], node="node-b",
                      reserved_for=[keeper])
    big = make_pod("big", priority=2000, cpu="2500m")  # evicts the holder: node-b's pods outrank it
    small = [make_pod(f"small-{i:02d}", priority=1500, cpu="1m") for i in range(80)]
    trainer, claim = pending_trainer()
    state = state_with([holder, keeper, big, *small, trainer], [held, kept, claim],
                       slices=[make_slice("node-a", 1), make_slice("node-b", 1)])
    plans = plan_pending(state, [state.pod(p.key) for p in (big, *small, trainer)])
    assert (plans[0].outcome, plans[0].node, [v.pod.name for v in plans[0].victims]) == ("evict", "node-a", ["holder"])
    assert all(p.outcome == "fits" for p in plans[1:-1])
    assert (plans[-1].outcome, plans[-1].node) == ("fits", "node-a")


def test_freeing_a_device_only_tier_3_may_take_is_planned_in_tier_3() -> None:
    # Every holder is under a PDB that allows no disruption: tiers 1 and 2 may evict none of them.
    users = [gpu_user(f"{n}{i}", f"node-{n}", f"gpu-{i}", labels={"app": "held"}) for n in "ab" for i in (0, 1)]
    trainer, claim = pending_trainer()
    state = state_with([*(p for p, _ in users), trainer], [*(c for _, c in users), claim],
                       pdbs=[make_pdb("held", selector={"app": "held"}, disruptions_allowed=0)])
    plan = plan_pod(state, state.pod(trainer.key))
    assert (plan.outcome, plan.tier, plan.frees_devices, len(plan.victims)) == ("evict", 3, True, 1)


def test_freeing_a_device_tier_2_may_take_wins_over_tier_3() -> None:
    # node-a's holders stop too slowly for tier 1; node-b's are under a PDB: only tier 3 takes them.
    slow = [gpu_user(f"a{i}", "node-a", f"gpu-{i}", grace=60) for i in (0, 1)]
    held = [gpu_user(f"b{i}", "node-b", f"gpu-{i}", labels={"app": "held"}) for i in (0, 1)]
    trainer, claim = pending_trainer()
    state = state_with([*(p for p, _ in slow + held), trainer], [*(c for _, c in slow + held), claim],
                       pdbs=[make_pdb("held", selector={"app": "held"}, disruptions_allowed=0)])
    plan = plan_pod(state, state.pod(trainer.key))
    assert (plan.outcome, plan.node, plan.tier, plan.frees_devices) == ("evict", "node-a", 2, True)


def test_freeing_a_device_in_tier_1_where_tier_3_would_take_off_the_pod_it_must_be_near() -> None:
    # The trainer must share a node with db (on node-a). Tier 3 frees a device by taking off every
    # lower-priority pod there, db too, which leaves the trainer nothing to be near; db stops in
    # 600s, beyond tier 1's grace limit, so tier 1 takes off a holder alone — an option tier 3 has not.
    users = [gpu_user(f"{n}{i}", f"node-{n}", f"gpu-{i}", grace=5) for n in "ab" for i in (0, 1)]
    db = make_pod("db", node="node-a", cpu="100m", priority=0, labels={"app": "db"}, grace=600)
    trainer, claim = pending_trainer()
    near_db = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    trainer = msgspec.structs.replace(trainer, spec=msgspec.structs.replace(
        trainer.spec, affinity=make_pod("x", affinity=near_db).spec.affinity))
    state = state_with([*(p for p, _ in users), db, trainer], [*(c for _, c in users), claim])
    plan = plan_pod(state, state.pod(trainer.key))
    assert (plan.outcome, plan.node, plan.tier, plan.frees_devices) == ("evict", "node-a", 1, True), plan.message
    assert [v.pod.name for v in plan.victims] == ["a1"]
