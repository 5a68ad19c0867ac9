"""The drain pre-flight: before anything is touched, what draining these nodes will do.

Owns `plan_drain`:
1. kubectl's pod classes (staging/src/k8s.io/kubectl/pkg/drain/filters.go, the same filters in
   the same order, with kubectl's messages): DaemonSet pods an error unless --ignore-daemonsets
   (then skipped); mirror pods skipped; pods with emptyDir an error unless --delete-emptydir-data;
   pods without a controller an error unless --force; finished (Succeeded/Failed) pods always
   removable. As kubectl, the first filter that refuses or skips a pod decides; errors are grouped
   per message into kubectl's `cannot delete ...: ns/a, ns/b` lines, and a node with errors is
   refused as a whole (`unable to drain node "NAME" due to error: ...`).
2. which PodDisruptionBudget covers each evicted pod and the order the evictions go in: per PDB one
   after another, in the plan's order. A PDB's budget lets the first ones go at once; each later one
   waits for the budget to recover, which happens when the replacement of an earlier one is Ready
   — so it is `queued_behind` those, or `blocked` (with the reason) when nothing would give the
   budget back: it allows nothing now, or the earlier pods' replacements would not run. Pods the
   eviction API lets go without a budget (finished, not yet running, already terminating,
   unhealthy under the PDB's policy) spend nothing; a pod covered by several PDBs is refused (500).
   A running gang (`kresched.model.gangs`) is a budget too (`PdbLedger`): its running members less
   its minCount may go; the members past it stop the whole gang (`stops_gang`, and
   `DrainPlan.stopped_gangs` lists each gang the drain stops, with every member it evicts). The
   eviction API does not refuse them: whether that blocks the drain is the caller's (a drain that
   stops a training job is refused unless the operator accepts it).
3. where each evicted pod's replacement would land on the nodes that stay (the drained nodes are
   cordoned first, so nothing lands there), most important first, each placement taking room from
   the later ones — or why it would stay Pending, in `explain`'s words. Bare pods have no
   replacement (gone for good); finished pods need none; an already-terminating pod's replacement
   exists already where its controller makes it at once (a ReplicaSet, a ReplicationController, a
   Job by default: a terminating pod no longer counts), but a StatefulSet makes the pod again, under
   its name, only once it is gone: that one is placed (`terminating_replacement` says which is
   which, in words). Nothing lands on a lost node
   (`plan.lost.is_lost`) either. `simulate_replacements` is this step on its own (the recovery
   timeline of a lost node uses it).
Pure.

Deliberate difference from kubectl: DaemonSets are not looked up (kresched reads no DaemonSet
objects), so an orphaned DaemonSet pod is treated like any DaemonSet pod, where kubectl removes it
with --force.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.model.selectors import label_selector_matches
from kresched.model.specs import LabelSelector, Volume
from kresched.plan.candidates import nominated_pods
from kresched.plan.lost import lost_nodes
from kresched.plan.pdb import PdbCheck, PdbLedger
from kresched.plan.placement import Placer, bound_to, held_by_volume, replacement_of
from kresched.sched.dra.inuse import cluster_snapshot
from kresched.sched.node_info import NodeInfo
from kresched.sched.profile import Profiles, scheduler_name
from kresched.sched.runner import FilterMemo, memo_of
from kresched.sched.static import StaticFilters

__all__ = [
    "DAEMONSET_FATAL",
    "DAEMONSET_WARNING",
    "LOCAL_STORAGE_FATAL",
    "LOCAL_STORAGE_WARNING",
    "UNMANAGED_FATAL",
    "UNMANAGED_WARNING",
    "MIRROR_SKIP",
    "TERMINATING_WARNING",
    "DrainOptions",
    "DrainPod",
    "GangStop",
    "Skipped",
    "NodeDrain",
    "DrainPlan",
    "plan_drain",
    "parse_selector",
    "simulate_replacements",
    "terminating_replacement",
    "pod_shape",
]

DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"
#: kubectl skips mirror pods without a message; this is kresched's.
MIRROR_SKIP = "mirror pod (a static pod the kubelet runs; the API cannot delete it)"
TERMINATING_WARNING = "already terminating"


@dataclass(frozen=True)
class DrainOptions:
    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False
    force: bool = False
    disable_eviction: bool = False
    pod_selector: LabelSelector | None = None
    #: The cluster's scheduler profiles: each replacement is placed by its pod's.
    profiles: Profiles = field(default_factory=Profiles.default, compare=False)


@dataclass(frozen=True)
class DrainPod:
    pod: Pod
    node: str
    #: PodDisruptionBudget covering it, if any.
    pdb: str | None = None
    #: Why the eviction would be refused until the timeout (nothing gives its budget back), or None.
    blocked: str | None = None
    #: Pods of the same PDB evicted before it whose recovery it waits for (0: the budget allows it now).
    queued_behind: int = 0
    lands_on: str | None = None
    #: Why its replacement would stay Pending (None when it lands, or needs no replacement).
    pending_reason: str | None = None
    warning: str | None = None
    #: Every node tied with `lands_on` at the top score (the scheduler takes the first it found; see `select_host`).
    candidates: tuple[str, ...] = ()
    #: The scheduler would score only a sample of the feasible nodes: `lands_on` is the likely one.
    likely: bool = False
    #: How its volumes hold it to its node or zone (`placement.held_by_volume`), if they do.
    held_by: str | None = None
    #: Its schedulerName, when no scheduler profile names it: where it lands is not simulated.
    other_scheduler: str | None = None
    #: The running gang it is a member of (`Gang.key`), and whether its eviction, after the drain's
    #: earlier ones, takes the gang below its minCount (the whole gang stops).
    gang: str | None = None
    stops_gang: bool = False


@dataclass(frozen=True)
class GangStop:
    """A running gang a drain stops: its running members and minCount, and every member the drain
    evicts (those past its budget stop it)."""

    gang: str
    running: int
    min_count: int
    evicted: tuple[str, ...]


@dataclass(frozen=True)
class Skipped:
    pod: Pod
    node: str
    reason: str
    #: A refused pod: kubectl's refusals after the first (`reason`), which the flag for it would
    #: only bring to light one run later.
    also: tuple[str, ...] = ()
    #: A refused pod the flags would have evicted: where it would go then (its landing, or why it
    #: would stay Pending), simulated with the others.
    then: DrainPod | None = None

    @property
    def refusals(self) -> tuple[str, ...]:
        return (self.reason, *self.also)


@dataclass(frozen=True)
class NodeDrain:
    node: str
    evict: tuple[DrainPod, ...]
    skip: tuple[Skipped, ...]
    errors: tuple[Skipped, ...]

    def kubectl_errors(self) -> list[str]:
        """kubectl's error lines for this node (`PodDeleteList.errors`): `cannot delete <what>:
        ns/a, ns/b`, one per message, in the order the messages first occur."""
        by_msg: dict[str, list[str]] = {}
        for e in self.errors:
            by_msg.setdefault(e.reason, []).append(e.pod.key)
        out = []
        for msg, pods in by_msg.items():
            prefix = "" if msg.lower().startswith("cannot delete") else "cannot delete "
            out.append(f"{prefix}{msg}: {', '.join(pods)}")
        return out

    def blockers(self) -> list[str]:
        """Every refusal of every pod, not only the first kubectl would name (its filters stop at
        one, so each flag given brings the next to light): kubectl's `cannot delete ...: ns/a`
        lines, a pod under each of its refusals."""
        by_msg: dict[str, list[str]] = {}
        for e in self.errors:
            for msg in e.refusals:
                by_msg.setdefault(msg, []).append(e.pod.key)
        out = []
        for msg in (m for m in _FATAL_ORDER if m in by_msg):
            prefix = "" if msg.lower().startswith("cannot delete") else "cannot delete "
            out.append(f"{prefix}{msg}: {', '.join(by_msg[msg])}")
        return out

    def refusal(self) -> str | None:
        """kubectl's `unable to drain node "NAME" due to error: <error>` (cmd/drain `RunDrain`) when it
        would refuse the node; the error is its aggregate: one message as is, several as `[a, b]`.
        (kubectl goes on with `, continuing command...` to the other nodes; kresched refuses them all.)"""
        errors = self.kubectl_errors()
        if not errors:
            return None
        text = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
        return f'unable to drain node "{self.node}" due to error: {text}'


@dataclass(frozen=True)
class DrainPlan:
    nodes: tuple[NodeDrain, ...]
    #: What kresched could not simulate of the scheduler profiles that place the replacements.
    warnings: tuple[str, ...] = ()
    #: The running gangs the drain stops, in the order their first member is evicted.
    stopped_gangs: tuple[GangStop, ...] = ()

    @property
    def errors(self) -> list[Skipped]:
        return [e for n in self.nodes for e in n.errors]

    @property
    def pending(self) -> list[DrainPod]:
        """Evicted pods whose replacement would find no node (bare pods have none: not counted)."""
        return [p for n in self.nodes for p in n.evict
                if p.pending_reason is not None and not p.pod.is_bare and p.other_scheduler is None]

    @property
    def blocked(self) -> list[DrainPod]:
        return [p for n in self.nodes for p in n.evict if p.blocked]

    def kubectl_errors(self) -> list[str]:
        """Every node's kubectl error lines, node after node."""
        return [e for n in self.nodes for e in n.kubectl_errors()]

    def refusals(self) -> list[str]:
        """One `unable to drain node ...` line per node kubectl would refuse."""
        return [r for n in self.nodes if (r := n.refusal()) is not None]

    def flags(self) -> list[str]:
        """The flags that lift every refusal, in kubectl's order."""
        given = {m for e in self.errors for m in e.refusals}
        return [flag for msg, flag in FLAGS.items() if msg in given]

    @property
    def pending_once_lifted(self) -> list[Skipped]:
        """Refused pods that, once the flags evict them, would find no node (bare pods: none)."""
        return [e for e in self.errors if e.then is not None and e.then.pending_reason is not None
                and not e.pod.is_bare and e.then.other_scheduler is None]


def parse_selector(text: str) -> LabelSelector:
    """kubectl's `--pod-selector` syntax for the forms operators use: `a=b,c!=d,e,!f`,
    `k in (x,y)`, `k notin (x)`. ValueError for anything else."""
    labels: dict[str, str] = {}
    exprs: list[dict[str, object]] = []
    for part in _split(text):
        part = part.strip()
        if not part:
            continue
        low = part.replace(" ", "")
        if " in " in part or " notin " in part:
            key, op, rest = part.partition(" notin ") if " notin " in part else part.partition(" in ")
            vals = rest.strip()
            if not (vals.startswith("(") and vals.endswith(")")):
                raise ValueError(f"invalid selector {text!r}: expected values in parentheses")
            values = [v.strip() for v in vals[1:-1].split(",") if v.strip()]
            exprs.append({"key": key.strip(), "operator": "NotIn" if "notin" in op else "In", "values": values})
        elif "!=" in low:
            k, v = low.split("!=", 1)
            exprs.append({"key": k, "operator": "NotIn", "values": [v]})
        elif "==" in low or "=" in low:
            k, v = low.split("==", 1) if "==" in low else low.split("=", 1)
            labels[k] = v
        elif low.startswith("!"):
            exprs.append({"key": low[1:], "operator": "DoesNotExist"})
        else:
            exprs.append({"key": low, "operator": "Exists"})
        if any(not e.get("key") for e in exprs) or any(not k for k in labels):
            raise ValueError(f"invalid selector {text!r}")
    return msgspec.convert({"matchLabels": labels, "matchExpressions": exprs}, LabelSelector)


def _split(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


#: kubectl's refusals, in its filters' order, and the flag that lifts each.
FLAGS = {DAEMONSET_FATAL: "--ignore-daemonsets", LOCAL_STORAGE_FATAL: "--delete-emptydir-data",
         UNMANAGED_FATAL: "--force"}
_FATAL_ORDER = tuple(FLAGS)


def _refusals(pod: Pod, opts: DrainOptions) -> tuple[str, ...]:
    """Every kubectl filter that would refuse the pod with these flags, in kubectl's order (a
    DaemonSet pod's only: the flag for it skips it)."""
    if pod.is_finished or pod.is_mirror:
        return ()
    if pod.is_daemonset_pod:
        return () if opts.ignore_daemonsets else (DAEMONSET_FATAL,)
    out = []
    if pod.has_empty_dir and not opts.delete_emptydir_data:
        out.append(LOCAL_STORAGE_FATAL)
    if pod.controller is None and not opts.force:
        out.append(UNMANAGED_FATAL)
    return tuple(out)


def _classify(pod: Pod, opts: DrainOptions) -> tuple[str, str | None]:
    """("evict" | "skip" | "error", message): kubectl's filters in kubectl's order (daemonSet,
    mirrorPod, localStorage, unreplicated), the first that does not delete the pod deciding."""
    finished = pod.is_finished
    warning = TERMINATING_WARNING if pod.is_terminating else None
    if pod.is_daemonset_pod and not finished:
        if not opts.ignore_daemonsets:
            return "error", DAEMONSET_FATAL
        return "skip", DAEMONSET_WARNING
    if pod.is_mirror:
        return "skip", MIRROR_SKIP
    if pod.has_empty_dir and not finished:
        if not opts.delete_emptydir_data:
            return "error", LOCAL_STORAGE_FATAL
        warning = warning or LOCAL_STORAGE_WARNING
    if pod.controller is None and not finished:
        if not opts.force:
            return "error", UNMANAGED_FATAL
        warning = warning or UNMANAGED_WARNING
    return "evict", warning


def plan_drain(state: ClusterState, node_names: Sequence[str], opts: DrainOptions = DrainOptions()) -> DrainPlan:
    drained = set(node_names)
    ledger = PdbLedger(state)
    checks: dict[str, PdbCheck] = {}
    per_node: list[tuple[str, list[DrainPod], list[Skipped], list[Skipped]]] = []
    for name in node_names:
        evict: list[DrainPod] = []
        skip: list[Skipped] = []
        errors: list[Skipped] = []
        for pod in sorted(state.pods_on(name), key=lambda p: p.key):
            if opts.pod_selector is not None and not label_selector_matches(opts.pod_selector, pod.labels):
                continue
            kind, msg = _classify(pod, opts)
            if kind == "skip":
                skip.append(Skipped(pod, name, msg or ""))
            elif kind == "error":
                errors.append(Skipped(pod, name, msg or "", _refusals(pod, opts)[1:]))
            else:
                check = ledger.check(pod)
                checks[pod.key] = check
                evict.append(DrainPod(pod, name, check.pdb, warning=msg))
        per_node.append((name, evict, skip, errors))
    evicted = [p for _, ev, _, _ in per_node for p in ev]
    # The pods refused now that their flags would evict (not DaemonSet pods: skipped) are placed
    # with the others: the pre-flight is the drain as it goes once the flags lift every refusal.
    lifted = [DrainPod(e.pod, name) for name, _, _, er in per_node for e in er if not e.pod.is_daemonset_pod]
    # A terminating StatefulSet pod is made again once it is gone: where it lands is the drain's question too.
    again = frozenset(p.pod.key for p in [*evicted, *lifted] if p.pod.is_terminating and _made_again(p.pod))
    landed, warnings = _simulate_landing(state, drained | lost_nodes(state), [*evicted, *lifted], opts.profiles,
                                         recreate=again)
    ordered = _order_by_budget([landed[p.pod.key] for p in evicted], checks, ledger, opts.disable_eviction)
    ordered, stopped = _gang_budgets(ordered, [p.pod.key for p in evicted], checks, ledger)
    return DrainPlan(tuple(
        NodeDrain(name, tuple(ordered[p.pod.key] for p in ev), tuple(sk),
                  tuple(replace(e, then=landed.get(e.pod.key)) for e in er))
        for name, ev, sk, er in per_node
    ), warnings, stopped)


def _gang_budgets(pods: dict[str, DrainPod], order: list[str], checks: dict[str, PdbCheck],
                  ledger: PdbLedger) -> tuple[dict[str, DrainPod], tuple[GangStop, ...]]:
    """Walk each running gang's members in the drain's order: its budget (running − minCount) lets
    the first go; each later one stops the gang. The gangs stopped, with every member evicted."""
    left = dict(ledger.remaining)
    members: dict[str, list[str]] = {}
    stops: set[str] = set()
    out = dict(pods)
    for key in order:
        check = checks[key]
        gang = check.gang
        if gang is None:
            continue
        members.setdefault(gang, []).append(key)
        stop = left[gang] <= 0
        left[gang] -= 1
        if stop:
            stops.add(gang)
        out[key] = replace(out[key], gang=gang, stops_gang=stop)
    stopped = tuple(GangStop(g, checks[ks[0]].gang_running, checks[ks[0]].gang_min_count, tuple(ks))
                    for g, ks in members.items() if g in stops)
    return out, stopped


def _order_by_budget(evicted: list[DrainPod], checks: dict[str, PdbCheck], ledger: PdbLedger,
                     disable_eviction: bool) -> dict[str, DrainPod]:
    """Walk each PDB's pods in order: the budget lets the first go now; each later one waits for
    an earlier one's replacement to be Ready (one unit back each), or is blocked when none would
    run. With --disable-eviction nothing asks the budgets."""
    left = dict(ledger.remaining)
    recovering: dict[str, int] = {}
    spent: dict[str, int] = {}
    out: dict[str, DrainPod] = {}
    for d in evicted:
        check = checks[d.pod.key]
        key = check.pdb
        if disable_eviction or key is None:
            out[d.pod.key] = d
            continue
        if not check.spends:
            out[d.pod.key] = replace(d, blocked=None if check.allowed else check.reason)
            continue
        before = spent.get(key, 0)
        blocked = None
        behind = 0
        if left.get(key, 0) > 0:
            left[key] -= 1
        elif recovering.get(key, 0) > 0:
            recovering[key] -= 1
            behind = before
        elif before == 0:
            blocked = check.reason
        else:
            blocked = (f"PodDisruptionBudget {key} allows {ledger.budget(key)} disruption(s), taken by the "
                       f"{before} pod(s) of it evicted before this one; it recovers only when their "
                       "replacements are Ready, and none of them would run")
        if blocked is None:
            spent[key] = before + 1
            if d.lands_on is not None:
                recovering[key] = recovering.get(key, 0) + 1
        out[d.pod.key] = replace(d, blocked=blocked, queued_behind=behind)
    return out


def simulate_replacements(state: ClusterState, excluded: frozenset[str] | set[str], pods: Sequence[Pod],
                          profiles: Profiles | None = None, recreate: frozenset[str] = frozenset(),
                          waves: dict[str, float] | None = None) -> tuple[dict[str, DrainPod], tuple[str, ...]]:
    """Where the replacements of `pods` (bound to nodes of `excluded`, which take nothing) land,
    most important first (step 3) — or, with `waves` (pod key → when its new pod is created), in
    that order first. A terminating pod is placed only when its key is in `recreate` (a
    StatefulSet pod force-deleted: its controller makes it again). By pod key, with the warnings of
    the profiles that placed any."""
    return _simulate_landing(state, set(excluded), [DrainPod(p, p.node_name) for p in pods], profiles, recreate,
                             waves)


def _simulate_landing(state: ClusterState, drained: set[str], evicted: list[DrainPod],
                      profiles: Profiles | None = None, recreate: frozenset[str] = frozenset(),
                      waves: dict[str, float] | None = None) -> tuple[dict[str, DrainPod], tuple[str, ...]]:
    """Place the evicted pods' replacements, most important first, on the nodes that stay; each
    placement takes room from the later ones. Drained nodes are cordoned, so nothing lands there.
    Each replacement is placed by its pod's scheduler profile; one of a scheduler no profile names
    is not placed (`other_scheduler`). Also the warnings of the profiles that placed any.

    Replicas of one workload share their filter verdicts (`find_nodes_that_fit`'s memo, one per
    pod shape): a placement replaces one NodeInfo, and only that node is filtered again."""
    profiles = profiles or Profiles.default()
    snap = cluster_snapshot(state)
    gone = {p.pod.key for p in evicted}
    # Derived node by node (not built anew): the indexes carried down see the evicted pods go (the
    # devices their claims held are freed as the cluster frees them: `sched.dra.inuse`).
    sim = snap
    for info in snap.node_infos:
        if info.name in drained:
            node = info.node
            cordoned = msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, unschedulable=True))
            sim = sim.with_node_info(NodeInfo(cordoned, [p for p in info.pods if p.key not in gone]))
    placers: dict[str, tuple[Placer, dict[bytes, FilterMemo]]] = {}
    nominated = nominated_pods(state)
    out: dict[str, DrainPod] = {}
    warnings: dict[str, None] = {}
    waves = waves or {}
    for d in sorted(evicted, key=lambda d: (waves.get(d.pod.key, 0.0), -d.pod.effective_priority, d.pod.key)):
        d = replace(d, held_by=held_by_volume(d.pod, state.storage))
        if d.pod.is_bare and not d.pod.is_finished:
            out[d.pod.key] = replace(d, pending_reason="nothing recreates it")
            continue
        if d.pod.is_finished or (d.pod.is_terminating and d.pod.key not in recreate):
            out[d.pod.key] = d
            continue
        profile = profiles.for_pod(d.pod)
        if profile is None:
            out[d.pod.key] = replace(d, other_scheduler=scheduler_name(d.pod),
                                     pending_reason=profiles.other_scheduler_note(d.pod))
            continue
        warnings.update(dict.fromkeys(profiles.warnings_for(profile)))
        if profile.name not in placers:
            placers[profile.name] = (Placer.of(profile, StaticFilters(profile.filters)), {})
        placer, memos = placers[profile.name]
        replacement = profile.planning_pod(replacement_of(d.pod))
        memo = memo_of(memos, pod_shape(replacement))
        landing = placer.land(replacement, sim, nominated, memo)
        if landing.node is None:
            out[d.pod.key] = replace(d, pending_reason=landing.reason)
            continue
        info = sim.by_name[landing.node].clone()
        info.add_pod(bound_to(replacement, info.node))
        sim = sim.with_node_info(info)
        out[d.pod.key] = replace(d, lands_on=landing.node, candidates=landing.candidates, likely=landing.likely)
    return out, tuple(warnings)


def _made_again(pod: Pod) -> bool:
    """Its controller makes the pod again, under its name, only once the old one is gone (a
    StatefulSet: `processReplica` waits for a terminating replica, and the name is taken until then)."""
    c = pod.controller
    return c is not None and c.kind == "StatefulSet"


def terminating_replacement(pod: Pod) -> str | None:
    """What becomes of an already-terminating pod, as its controller plays it (pkg/controller): None
    for a pod no controller manages (said as a bare pod)."""
    c = pod.controller
    if c is None:
        return None
    if c.kind in ("ReplicaSet", "ReplicationController"):
        return f"its {c.kind} has made its replacement already (a terminating pod no longer counts)"
    if c.kind == "StatefulSet":
        return "its StatefulSet makes it again, under the same name, only once it is gone"
    if c.kind == "Job":
        return ("its Job replaces it at once (podReplacementPolicy TerminatingOrFailed, the default without a "
                "podFailurePolicy), or once it is gone (Failed)")
    return f"when {c.kind} {c.name} replaces it is that controller's choice"


def pod_shape(pod: Pod) -> bytes:
    """Everything filtering reads from a pod but its name and UID: replicas of one workload share
    it, and share a verdict on every node (a superset of what `find_nodes_that_fit`'s memo needs).
    Volumes no filter reads (configMap, secret, projected — the per-pod `kube-api-access-*` —,
    emptyDir, hostPath) are left out; a generic ephemeral volume's claim is named after the pod,
    so such a pod's name is part of its shape."""
    spec = pod.spec
    r = pod.requests
    volumes = tuple(v for v in spec.volumes if _filtered_volume(v))
    return msgspec.json.encode((
        pod.namespace, pod.labels, pod.priority, pod.effective_priority, spec.preemption_policy,
        (r.milli_cpu, r.memory, r.ephemeral_storage, r.scalar), pod.host_ports, spec.node_name,
        spec.tolerations, spec.node_selector, spec.affinity, spec.topology_spread_constraints, volumes,
        pod.name if any(v.ephemeral is not None for v in volumes) else None,
    ))


def _filtered_volume(v: Volume) -> bool:
    """A volume some filter reads: claims (bound, ephemeral) and in-tree disks."""
    return (v.persistent_volume_claim is not None or v.ephemeral is not None or v.gce_persistent_disk is not None
            or v.aws_elastic_block_store is not None or v.azure_disk is not None or v.cinder is not None
            or v.iscsi is not None or v.rbd is not None)


