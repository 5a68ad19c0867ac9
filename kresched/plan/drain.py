"""The drain pre-flight: before anything is touched, what draining these nodes will do.

Owns `plan_drain`: kubectl's pod classes (staging/src/k8s.io/kubectl/pkg/drain/filters.go, same
order and the same messages: mirror pods skipped; DaemonSet pods an error unless
--ignore-daemonsets; pods with emptyDir an error unless --delete-emptydir-data; pods without a
controller an error unless --force; finished pods always removable), which PodDisruptionBudget
covers each pod and whether it allows the eviction now, an eviction order that lets budgets
recover (per PDB one pod at a time, the rest queued behind it), and where each evicted pod would
land on the remaining nodes (drained nodes cordoned and excluded), or why it would stay Pending —
in `explain`'s words. Pure.

Deliberate differences from kubectl: DaemonSets are not looked up (kresched has no DaemonSet
objects), so an orphaned DaemonSet pod is treated like any DaemonSet pod; pods already terminating
are skipped (kubectl waits for them only with --skip-wait-for-delete-timeout unset).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.objects import LabelSelector, Pod
from kresched.model.selectors import label_selector_matches
from kresched.plan.pdb import PdbLedger
from kresched.plan.placement import pick_node
from kresched.sched.framework import NodeInfo, Snapshot
from kresched.sched.runner import default_plugins, find_nodes_that_fit, fit_error_message

__all__ = [
    "DAEMONSET_FATAL",
    "DAEMONSET_WARNING",
    "LOCAL_STORAGE_FATAL",
    "LOCAL_STORAGE_WARNING",
    "UNMANAGED_FATAL",
    "UNMANAGED_WARNING",
    "DrainOptions",
    "DrainPod",
    "NodeDrain",
    "DrainPlan",
    "plan_drain",
    "parse_selector",
]

DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"


@dataclass(frozen=True)
class DrainOptions:
    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False
    force: bool = False
    disable_eviction: bool = False
    pod_selector: LabelSelector | None = None


@dataclass(frozen=True)
class DrainPod:
    pod: Pod
    node: str
    #: PodDisruptionBudget covering it, if any.
    pdb: str | None = None
    #: Why the eviction API would refuse it now (budget spent, several PDBs), or None.
    blocked: str | None = None
    #: Pods of the same PDB that go before it (it waits for the budget to recover after each).
    queued_behind: int = 0
    lands_on: str | None = None
    pending_reason: str | None = None
    warning: str | None = None


@dataclass(frozen=True)
class Skipped:
    pod: Pod
    node: str
    reason: str


@dataclass(frozen=True)
class NodeDrain:
    node: str
    evict: tuple[DrainPod, ...]
    skip: tuple[Skipped, ...]
    errors: tuple[Skipped, ...]


@dataclass(frozen=True)
class DrainPlan:
    nodes: tuple[NodeDrain, ...]

    @property
    def errors(self) -> list[Skipped]:
        return [e for n in self.nodes for e in n.errors]

    @property
    def pending(self) -> list[DrainPod]:
        """Evicted pods that would find no node (bare pods are not counted: nothing recreates them)."""
        return [p for n in self.nodes for p in n.evict if p.lands_on is None and p.pending_reason is not None
                and not p.pod.is_bare]

    @property
    def blocked(self) -> list[DrainPod]:
        return [p for n in self.nodes for p in n.evict if p.blocked]

    def kubectl_errors(self) -> list[str]:
        """kubectl's error lines: `cannot delete <what>: ns/a, ns/b` (one per kind of problem)."""
        by_msg: dict[str, list[str]] = {}
        for e in self.errors:
            by_msg.setdefault(e.reason, []).append(e.pod.key)
        out = []
        for msg, pods in by_msg.items():
            prefix = "" if msg.lower().startswith("cannot delete") else "cannot delete "
            out.append(f"{prefix}{msg}: {', '.join(pods)}")
        return out


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


def _classify(pod: Pod, opts: DrainOptions) -> tuple[str, str | None]:
    """("evict" | "skip" | "error", message), kubectl's filters in kubectl's order."""
    finished = pod.is_finished
    warning = None
    if pod.is_terminating:
        return "skip", "already terminating"
    if pod.is_daemonset_pod and not finished:
        if not opts.ignore_daemonsets:
            return "error", DAEMONSET_FATAL
        return "skip", DAEMONSET_WARNING
    if pod.is_mirror:
        return "skip", "mirror pod (static pod managed by the kubelet)"
    if pod.has_empty_dir and not finished:
        if not opts.delete_emptydir_data:
            return "error", LOCAL_STORAGE_FATAL
        warning = LOCAL_STORAGE_WARNING
    if pod.controller is None and not finished:
        if not opts.force:
            return "error", UNMANAGED_FATAL
        warning = UNMANAGED_WARNING
    return "evict", warning


def plan_drain(state: ClusterState, node_names: Sequence[str], opts: DrainOptions = DrainOptions()) -> DrainPlan:
    drained = set(node_names)
    ledger = PdbLedger(state)
    remaining = dict(ledger.remaining)
    queued: dict[str, int] = {}
    per_node: list[tuple[str, list[DrainPod], list[Skipped], list[Skipped]]] = []
    for name in node_names:
        evict: list[DrainPod] = []
        skip: list[Skipped] = []
        errors: list[Skipped] = []
        pods = sorted(state.pods_on(name), key=lambda p: p.key)
        for pod in pods:
            if opts.pod_selector is not None and not label_selector_matches(opts.pod_selector, pod.labels):
                continue
            kind, msg = _classify(pod, opts)
            if kind == "skip":
                skip.append(Skipped(pod, name, msg or ""))
                continue
            if kind == "error":
                errors.append(Skipped(pod, name, msg or ""))
                continue
            check = ledger.check(pod, remaining)
            blocked = None
            behind = 0
            if not opts.disable_eviction and check.pdb is not None:
                if check.violation:
                    blocked = check.reason
                elif check.spends:
                    behind = queued.get(check.pdb, 0)
                    queued[check.pdb] = behind + 1
                    if remaining.get(check.pdb, 0) > 0:
                        remaining[check.pdb] -= 1
            evict.append(DrainPod(pod, name, check.pdb, blocked, behind, warning=msg))
        per_node.append((name, evict, skip, errors))
    landed = _simulate_landing(state, drained, [p for _, ev, _, _ in per_node for p in ev])
    return DrainPlan(tuple(
        NodeDrain(name, tuple(landed.get(p.pod.key, p) for p in ev), tuple(sk), tuple(er))
        for name, ev, sk, er in per_node
    ))


def _simulate_landing(state: ClusterState, drained: set[str], evicted: list[DrainPod]) -> dict[str, DrainPod]:
    """Place the evicted pods' replacements, most important first, on the nodes that stay; each
    placement takes room from the later ones. Drained nodes are cordoned, so nothing lands there."""
    from dataclasses import replace

    snap = Snapshot.from_state(state)
    infos = []
    gone = {p.pod.key for p in evicted}
    for info in snap.node_infos:
        if info.name in drained:
            node = info.node
            cordoned = msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, unschedulable=True))
            fresh = NodeInfo(cordoned, [p for p in info.pods if p.key not in gone])
            infos.append(fresh)
        else:
            infos.append(info)
    sim = Snapshot(infos, {i.name: i for i in infos}, snap.namespace_labels)
    plugins = default_plugins()
    out: dict[str, DrainPod] = {}
    order = sorted(evicted, key=lambda d: (-d.pod.effective_priority, d.pod.key))
    for d in order:
        if d.pod.is_bare or d.pod.is_finished:
            out[d.pod.key] = replace(d, pending_reason="nothing recreates it" if d.pod.is_bare else None)
            continue
        replacement = _unbound(d.pod)
        diag, _ = find_nodes_that_fit(plugins, replacement, sim)
        if not diag.feasible:
            out[d.pod.key] = replace(d, pending_reason=fit_error_message(diag))
            continue
        target = pick_node(replacement, [sim.by_name[n] for n in diag.feasible])
        assert target is not None
        info = sim.by_name[target].clone()
        info.add_pod(_bound(replacement, target))
        sim = sim.with_node_info(info)
        out[d.pod.key] = replace(d, lands_on=target)
    return out


def _unbound(pod: Pod) -> Pod:
    spec = msgspec.structs.replace(pod.spec, node_name="")
    status = msgspec.structs.replace(pod.status, phase="Pending", conditions=(), start_time=None)
    meta = msgspec.structs.replace(pod.metadata, name=pod.metadata.name + "~replacement")
    return msgspec.structs.replace(pod, spec=spec, status=status, metadata=meta)


def _bound(pod: Pod, node: str) -> Pod:
    spec = msgspec.structs.replace(pod.spec, node_name=node)
    status = msgspec.structs.replace(pod.status, phase="Running")
    return msgspec.structs.replace(pod, spec=spec, status=status)
