"""Planning a queue with every cache on gives the plans it gives with them off (hypothesis).

The planner keeps what it found across the pods of a queue: each filter's verdict on a node per
what the pod's filters read of it (`runner.verdict_keys`: pods of other workloads, namespaces and
priorities share them), the search of a shape started where the last one stopped, the allocation
of the same claim specs on the same devices, the tier indexes, the node-local scores. Each is valid
while a node's NodeInfo is the same object; placements, evictions and the replacements of victims
replace the NodeInfos they change. Here generated clusters — zones, GPUs of two models held by
running pods, pods with required (anti-)affinity, a PDB, a zonal storage class — and generated
queues of mixed shapes (claims by template, a quarter of them selecting a model by CEL, pod
affinity and anti-affinity, spreading, node selectors, volumes to provision, nominated pods, pods
of one shape in other workloads, gangs of one or two shapes that can start or cannot: a gang
given up is rolled back, and planned again the most constrained first, so the caches meet again
NodeInfos they saw before; claims of one spec from templates of other names, in other
namespaces) are planned twice as `plan --all-pending` plans them
(`plan.gang.plan_queue`), with `Planner(memoize=False)` (nothing kept across pods) and with the
planner as every command runs it, and each plan must be the same: outcome, node, tier, victims
and where their replacements land, the tied candidates, the message, the runners-up (the
other options a tier found and the nodes that are out, with why), the notes, the gang's verdict.

Runs derandomized (the same examples every run), so CI is deterministic.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.gang import plan_queue
from kresched.plan.planner import Planner
from kresched.plan.plans import Plan, PlanOptions
from kresched.plan.queue import gang_lookups, pending_pods_to_plan
from kresched.render.plan import plan_dict
from tests.builders import (
    device_request,
    gang_member,
    make_claim,
    make_claim_template,
    make_csinode,
    make_device,
    make_device_class,
    make_node,
    make_pdb,
    make_pod,
    make_pod_group,
    make_pvc,
    make_slice,
    make_state,
    make_storage_class,
    pvc_volume,
)

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=120,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

GPU = "gpu.example.com"
ZONE = "topology.kubernetes.io/zone"
APPS = ("a", "b", "c")
MODELS = ("A", "B")
#: The templates a pending pod's claim comes from: any GPU, or one of a model (a CEL selector); and
#: another template of the same spec as "any" (the claims of two workloads, read by spec).
TEMPLATES = {"any": device_request(), "any-copy": device_request(),
             **{f"model-{m}": device_request(selectors=[f'device.attributes["{GPU}"].model == "{m}"']) for m in MODELS}}
#: Each template is in both namespaces: a workload's pods may be in the other one.
NAMESPACES = ("default", "team")


@st.composite
def shapes(draw: st.DrawFn) -> dict[str, Any]:
    """What the pods of one group of the queue share."""
    return {
        "cpu": draw(st.sampled_from(("500m", "1", "2", "250m"))),
        # Shapes with the same CPU and another memory request (the verdicts kept per request).
        "memory": draw(st.sampled_from((None, None, "3Gi", "6Gi"))),
        "priority": draw(st.sampled_from((500, 2000, 50))),
        "claim": draw(st.sampled_from((None, "any", "any", "any", "model-A", "model-B"))),
        "anti": draw(st.sampled_from((False, False, False, True))),
        "affinity": draw(st.sampled_from((None, None, None, "a", "b"))),
        "spread": draw(st.sampled_from((False, False, False, True))),
        "zone": draw(st.sampled_from((None, None, None, "z0", "z1"))),
        "volume": draw(st.sampled_from((False, False, False, False, True))),
        # Its pods are members of a gang (two groups may share one: members of two shapes).
        "gang": draw(st.sampled_from((None, None, "g0", "g1"))),
    }


@st.composite
def queues(draw: st.DrawFn) -> tuple[ClusterState, list[Pod]]:
    nodes, pods, claims, devices_by_node = [], [], [], {}
    for i in range(draw(st.integers(3, 6))):
        name = f"n{i}"
        nodes.append(make_node(name, cpu="4", memory="8Gi", labels={ZONE: f"z{i % 2}"}))
        models = draw(st.lists(st.sampled_from(MODELS), max_size=2))
        devices_by_node[name] = [f"gpu-{k}" for k in range(len(models))]
        claims.append(make_slice(name, [make_device(f"gpu-{k}", attributes={"model": m})
                                        for k, m in enumerate(models)]))
        free = list(devices_by_node[name])
        used = used_memory = 0
        for j in range(draw(st.integers(0, 4))):
            cpu = draw(st.sampled_from((500, 1000, 1500)))
            memory = draw(st.sampled_from((0, 0, 2, 4)))  # Gi
            if used + cpu > 4000 or used_memory + memory > 8:
                continue
            used += cpu
            used_memory += memory
            app = draw(st.sampled_from(APPS))
            pname = f"{name}-r{j}"
            holds = bool(free) and draw(st.booleans())
            anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}} \
                if draw(st.sampled_from((False, False, False, True))) else None
            pod = make_pod(pname, node=name, cpu=f"{cpu}m", memory=f"{memory}Gi" if memory else None,
                           priority=draw(st.sampled_from((0, 100, 1000))), labels={"app": app, ZONE: f"z{i % 2}"},
                           affinity=anti, grace=draw(st.sampled_from((5, 30))),
                           claim_templates={"gpu": "any"} if holds else None,
                           generated={"gpu": f"{pname}-gpu"} if holds else None,
                           start_time=f"2026-01-0{1 + j}T00:00:00Z")
            pods.append(pod)
            if holds:
                claims.append(make_claim(f"{pname}-gpu", owner_pod=pod, allocated=[(GPU, name, free.pop(0))],
                                         node=name, reserved_for=[pod]))
    pdbs = [make_pdb("pdb-a", selector={"app": "a"}, disruptions_allowed=draw(st.sampled_from((0, 1))))] \
        if draw(st.booleans()) else []
    storage = [make_storage_class("zonal", allowed_zones=["z0"]),
               *(make_csinode(n.metadata.name, {"csi.example.com": 8}) for n in nodes)]
    queue: list[Pod] = []
    members: dict[str, int] = {}  # gang → its pending members
    node_names = [n.metadata.name for n in nodes]
    for g, shape in enumerate(draw(st.lists(shapes(), min_size=1, max_size=4))):
        for k in range(draw(st.integers(1, 3))):
            name = f"q{g}-{k}"
            # The same shape in another workload now and then: other labels, another spread selector.
            app = draw(st.sampled_from(APPS))
            affinity: dict[str, Any] = {}
            if shape["anti"]:
                affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}
            if shape["affinity"]:
                affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": shape["affinity"]}}, "topologyKey": ZONE}]}
            spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                       "labelSelector": {"matchLabels": {"app": app}}}] if shape["spread"] else None
            volumes = [pvc_volume(f"{name}-data", "data")] if shape["volume"] else None
            if shape["volume"]:
                storage.append(make_pvc(f"{name}-data", storage_class="zonal"))
            template = shape["claim"]
            namespace = "default"
            if template == "any" and draw(st.booleans()):
                template = "any-copy"  # the same spec by another name
            if template and not shape["volume"] and not shape["gang"]:
                namespace = draw(st.sampled_from(NAMESPACES))
            member = gang_member(shape["gang"]) if shape["gang"] else {}
            if shape["gang"]:
                members[shape["gang"]] = members.get(shape["gang"], 0) + 1
            pod = make_pod(name, namespace, cpu=shape["cpu"], memory=shape["memory"], priority=shape["priority"],
                           labels={"app": app}, affinity=affinity or None, spread=spread, volumes=volumes,
                           node_selector={ZONE: shape["zone"]} if shape["zone"] else None,
                           claim_templates={"gpu": template} if template else None,
                           generated={"gpu": f"{name}-gpu"} if template else None,
                           nominated_node=draw(st.sampled_from(("",) * 5 + tuple(node_names))),
                           start_time=None, **member)
            if template:
                claims.append(make_claim(f"{name}-gpu", namespace, owner_pod=pod, requests=[TEMPLATES[template]]))
            queue.append(pod)
    dra = [make_device_class(), *(make_claim_template(t, ns, requests=[r]) for ns in NAMESPACES
                                  for t, r in TEMPLATES.items()), *claims]
    # minCount up to one more than a gang's members: some gangs cannot start and are given up.
    gangs = [make_pod_group(g, min_count=draw(st.integers(1, 1 + n))) for g, n in members.items()]
    state = make_state(nodes, [*pods, *queue], pdbs, storage=storage, dra=dra, pod_groups=gangs)
    return state, pending_pods_to_plan(state, all_pending=True)


def decision(plan: Plan) -> tuple:
    """What a plan says, as every output shows it, and its runners-up as the text shows them."""
    runners = tuple((r.node, r.tier, str(r.reason), r.victims) for r in plan.runners_up)
    return (plan_dict(plan), plan.decided_by, runners, plan.notes,
            [(v.pending_reason, v.held_by) for v in plan.victims], [p.key for p in plan.node_pods_before])


@PROFILE
@given(queues(), st.booleans())
def test_a_queue_plans_the_same_with_every_cache_on_as_with_them_off(queue: tuple[ClusterState, list[Pod]],
                                                                     rotate: bool) -> None:
    assert_same_with_caches_off(*queue, rotate)


def assert_same_with_caches_off(state: ClusterState, pods: list[Pod], rotate: bool) -> None:
    """The queue `pods` plans as a planner that keeps nothing plans it, pod by pod (`decision`)."""
    cached = plan_queue(Planner(state, PlanOptions(), rotate=rotate), pods, *gang_lookups(state))
    plain = plan_queue(Planner(state, PlanOptions(), memoize=False, rotate=rotate), pods, *gang_lookups(state))
    for a, b in zip(cached, plain, strict=True):
        assert decision(a) == decision(b), a.pod.key


def test_a_gang_given_up_leaves_what_the_caches_kept_as_it_was_before_the_gang():
    # Three full nodes; a pod that evicts, a gang of two that would evict on the other two nodes but
    # cannot start (minCount 3) and is rolled back, then a pod of the same shape as all of them:
    # what the search kept across pods while the gang was planned must not outlive its rollback.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(3)]
    holders = [make_pod(f"low-{i}", node=f"n{i}", cpu="3", priority=0, grace=5, owner=None) for i in range(3)]
    queue = [make_pod("first", cpu="3", priority=1000, start_time="2026-01-01T00:00:00Z"),
             *(make_pod(f"train-{i}", cpu="3", priority=1000, start_time="2026-01-02T00:00:00Z", owner="Job/train",
                        **gang_member("train")) for i in range(2)),
             make_pod("z-last", cpu="3", priority=1000, start_time="2026-01-03T00:00:00Z")]  # queue order: names
    state = make_state(nodes, [*holders, *queue], pod_groups=[make_pod_group("train", min_count=3)])
    pods = pending_pods_to_plan(state, all_pending=True)
    cached = list(plan_queue(Planner(state, PlanOptions()), pods, *gang_lookups(state)))
    plain = list(plan_queue(Planner(state, PlanOptions(), memoize=False), pods, *gang_lookups(state)))
    assert [(p.pod.name, p.outcome) for p in cached] == [
        ("first", "evict"), ("train-0", "infeasible"), ("train-1", "infeasible"), ("z-last", "evict")]
    assert [decision(p) for p in cached] == [decision(p) for p in plain]


def test_what_was_kept_of_a_node_goes_once_its_nodeinfo_is_replaced():
    # Pods that evict, one after another, on full nodes: each plan replaces the NodeInfos of the
    # nodes it changes. What the planner keeps of a node's evictable pods is kept per NodeInfo; it
    # is kept for the NodeInfos the working cluster holds, not for those replaced (each would
    # otherwise stay alive for the rest of the run: at 5,000 nodes, 45 MB over a queue).
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(3)]
    holders = [make_pod(f"low-{i}-{j}", node=f"n{i}", cpu="1", priority=0, grace=5) for i in range(3) for j in range(4)]
    queue = [make_pod(f"high-{k}", cpu="2", priority=1000) for k in range(4)]
    state = make_state(nodes, [*holders, *queue])
    planner = Planner(state, PlanOptions())
    plans = list(plan_queue(planner, pending_pods_to_plan(state, all_pending=True), *gang_lookups(state)))
    assert [p.outcome for p in plans] == ["evict"] * 4
    live = {id(info) for info in planner.work.snapshot.node_infos}
    assert planner.evictable.by_node
    assert set(planner.evictable.by_node) <= live


def test_pods_whose_claims_differ_in_spec_keep_their_own_searches_and_share_them_by_spec():
    # Two full nodes, n0 with two GPUs of model A, n1 one of model B. Pods that need evictions, alike
    # but for their claims: the claims' specs, not their names or namespaces, tell their searches
    # apart (each kept per what its filters read of it): "p1" evicts on n1, then "p2" on n0, where
    # "p1"'s search has no node; "p3" (model A by a template of another name, in another namespace)
    # reads the same as "p2" and evicts on n0 again.
    nodes = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(2)]
    slices = [make_slice("n0", [make_device(f"gpu-{k}", attributes={"model": "A"}) for k in range(2)]),
              make_slice("n1", [make_device("gpu-0", attributes={"model": "B"})])]
    holders = [make_pod(f"low-{i}", node=f"n{i}", cpu="3", priority=0, grace=5, owner=None) for i in range(2)]
    holders += [make_pod(f"low-{i}b", node=f"n{i}", cpu="1", priority=0, grace=5, owner=None) for i in range(2)]
    queue, claims = [], []
    for name, model, namespace, template in (("p1", "B", "default", "model-B"), ("p2", "A", "default", "model-A"),
                                             ("p3", "A", "team", "gpu-a")):
        pod = make_pod(name, namespace, cpu="2", priority=1000, start_time=None,
                       claim_templates={"gpu": template}, generated={"gpu": f"{name}-gpu"})
        queue.append(pod)
        claims.append(make_claim(f"{name}-gpu", namespace, owner_pod=pod, requests=[TEMPLATES[f"model-{model}"]]))
    dra = [make_device_class(), *slices, *claims,
           *(make_claim_template(t, requests=[r]) for t, r in TEMPLATES.items()),
           make_claim_template("gpu-a", "team", requests=[TEMPLATES["model-A"]])]
    state = make_state(nodes, [*holders, *queue], dra=dra)
    pods = pending_pods_to_plan(state, all_pending=True)
    cached = list(plan_queue(Planner(state, PlanOptions()), pods, *gang_lookups(state)))
    plain = list(plan_queue(Planner(state, PlanOptions(), memoize=False), pods, *gang_lookups(state)))
    assert [(p.pod.name, p.outcome, p.node) for p in cached] == [("p1", "evict", "n1"), ("p2", "evict", "n0"),
                                                                 ("p3", "evict", "n0")]
    assert [decision(p) for p in cached] == [decision(p) for p in plain]

@st.composite
def tied_queues(draw: st.DrawFn) -> tuple[ClusterState, list[Pod]]:
    """Full nodes whose evictable pods tie on priority and differ in start time, and a queue of
    pods of one shape that needs evictions: many options tie but for the victims' start, so what
    the tier index keeps of each node (an option found for an earlier pod) meets the bounds a
    search of every node meets."""
    nodes, pods = [], []
    for i in range(draw(st.integers(4, 9))):
        name = f"n{i}"
        nodes.append(make_node(name, cpu="4", memory="8Gi"))
        used = 0
        for j in range(draw(st.integers(1, 4))):
            cpu = draw(st.sampled_from((500, 1000, 1500, 2000)))
            if used + cpu > 4000:
                break
            used += cpu
            pods.append(make_pod(f"{name}-r{j}", node=name, cpu=f"{cpu}m", priority=draw(st.sampled_from((0, 0, 100))),
                                 grace=5, start_time=f"2026-01-0{draw(st.integers(1, 4))}T00:00:00Z"))
    queue = [make_pod(f"q-{k}", cpu=draw(st.sampled_from(("500m", "1"))), priority=1000, start_time=None)
             for k in range(draw(st.integers(2, 6)))]
    state = make_state(nodes, [*pods, *queue])
    return state, pending_pods_to_plan(state, all_pending=True)


@PROFILE
@given(tied_queues())
def test_kept_options_show_the_runners_up_a_search_of_every_node_shows(queue: tuple[ClusterState, list[Pod]]) -> None:
    assert_same_with_caches_off(*queue, False)
