"""Why a pod is Pending, node by node, in the scheduler's own words — and what would make it fit.

Owns `explain_pod`: runs the filters for one pod on every node, builds the scheduler's
`PodScheduled` message (filter part and preemption part, exactly as kube-scheduler 1.35/1.36
writes them), ranks nodes by how close they are to fitting, and turns each failure's structured
data into a hint an operator can act on. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.model.quantity import format_bytes, format_cpu
from kresched.plan.candidates import is_candidate_victim
from kresched.sched.framework import Code, FilterPlugin, InsufficientResource, NodeInfo, Snapshot, Status
from kresched.sched.preemption import full_scheduler_message, preemption_message
from kresched.sched.runner import default_plugins, find_nodes_that_fit, fit_error_message

__all__ = ["NodeVerdict", "Explanation", "explain_pod", "nominated_pods", "format_amount"]

DEFAULT_SCHEDULER = "default-scheduler"


@dataclass(frozen=True)
class NodeVerdict:
    """One node's answer for the pod: SUCCESS, or the first failing plugin's status."""

    node: str
    status: Status
    hints: tuple[str, ...] = ()

    @property
    def fits(self) -> bool:
        return self.status.is_success

    @property
    def verdict(self) -> str:
        if self.status.is_success:
            return "fits"
        return "unresolvable" if self.status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE else "unschedulable"


@dataclass(frozen=True)
class Explanation:
    pod: Pod
    num_nodes: int
    schedulable: bool
    #: The filter part, `0/N nodes are available: ... .`; None when the pod fits somewhere.
    message: str | None
    #: What the scheduler writes after `preemption: `; None when it fits, or when the scheduler's
    #: own preemption would find victims (it then nominates a node instead of failing).
    preemption_message: str | None
    #: Nodes nearest to fitting first (fitting nodes first of all).
    verdicts: tuple[NodeVerdict, ...]
    #: When schedulable: why the pod may still be Pending. When bound: where it runs.
    notes: tuple[str, ...] = ()
    reason_counts: dict[str, int] = field(default_factory=dict)

    @property
    def scheduler_message(self) -> str | None:
        if self.message is None:
            return None
        return full_scheduler_message(self.message, self.preemption_message)

    @property
    def feasible(self) -> list[str]:
        return [v.node for v in self.verdicts if v.fits]


def nominated_pods(state: ClusterState, exclude: Pod | None = None) -> dict[str, list[Pod]]:
    """Pending pods the scheduler has nominated to a node, by node (they hold room there)."""
    out: dict[str, list[Pod]] = {}
    for p in state.pods:
        nom = p.status.nominated_node_name
        if nom and p.is_pending and (exclude is None or p.key != exclude.key):
            out.setdefault(nom, []).append(p)
    return out


def explain_pod(state: ClusterState, pod: Pod, plugins: Sequence[FilterPlugin] | None = None,
                snapshot: Snapshot | None = None) -> Explanation:
    plugins = list(plugins) if plugins is not None else default_plugins()
    if pod.spec.node_name:
        notes = (f"already bound to node {pod.spec.node_name} (phase {pod.status.phase or 'unknown'})",)
        return Explanation(pod, len(state.nodes), True, None, None, (), notes)
    snapshot = snapshot or Snapshot.from_state(state)
    nominated = nominated_pods(state, exclude=pod)
    diag, cycle = find_nodes_that_fit(plugins, pod, snapshot, nominated)
    verdicts = [NodeVerdict(i.name, diag.status_of(i.name), _hints(pod, i, diag.status_of(i.name)))
                for i in snapshot.node_infos]
    verdicts.sort(key=lambda v: _distance(v, snapshot.by_name[v.node]))
    counts: dict[str, int] = {}
    for v in verdicts:
        for r in v.status.reasons:
            counts[r] = counts.get(r, 0) + 1
    if diag.feasible:
        return Explanation(pod, diag.num_all_nodes, True, None, None, tuple(verdicts),
                           _why_still_pending(pod, state), counts)
    message = fit_error_message(diag)
    pmsg, _ = preemption_message(plugins, pod, snapshot, diag, cycle, nominated)
    notes: tuple[str, ...] = ()
    if pmsg is None:
        notes = ("the scheduler's own preemption can make room: it will evict lower-priority pods "
                 "and nominate a node on its next attempt",)
    return Explanation(pod, diag.num_all_nodes, False, message, pmsg, tuple(verdicts), notes, counts)


def _why_still_pending(pod: Pod, state: ClusterState) -> tuple[str, ...]:
    out: list[str] = []
    if pod.spec.scheduling_gates:
        gates = ", ".join(g.name for g in pod.spec.scheduling_gates)
        out.append(f"held by scheduling gates ({gates}): the scheduler ignores it until they are removed")
    name = pod.spec.scheduler_name or DEFAULT_SCHEDULER
    if name != DEFAULT_SCHEDULER:
        out.append(f"uses schedulerName {name!r}: only that scheduler places it")
    if pod.is_terminating:
        out.append("is being deleted")
    nom = pod.status.nominated_node_name
    if nom:
        waiting = [p for p in state.pods_on(nom) if p.is_terminating]
        if waiting:
            out.append(f"nominated to node {nom}, where {len(waiting)} pod(s) are still terminating "
                       "(preemption victims in their grace period)")
        else:
            out.append(f"nominated to node {nom}: the scheduler should bind it on its next attempt")
    cond = pod.condition("PodScheduled")
    if cond is not None and cond.status == "False" and cond.message:
        out.append(f"the scheduler's last word (may be stale): {cond.message}")
    if not out:
        out.append("it fits now: the scheduler has probably not retried yet (backoff after a failed "
                   "attempt, or its queue is long); it will bind the pod on its next attempt")
    return tuple(out)


# -- ranking and hints --------------------------------------------------------------------------


def _distance(v: NodeVerdict, info: NodeInfo) -> tuple[int, int, float, str]:
    """Fits < can be fixed by evictions < cannot; fewer reasons; smaller resource shortfall."""
    st = v.status
    rank = 0 if st.is_success else (1 if st.code == Code.UNSCHEDULABLE else 2)
    shortfall = 0.0
    for ir in st.insufficient:
        cap = ir.capacity or 1
        shortfall += max(ir.missing, 0) / cap
    return (rank, len(st.reasons), shortfall, v.node)


def format_amount(resource: str, amount: int) -> str:
    if resource == "cpu":
        return format_cpu(amount)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return format_bytes(amount)
    return str(amount)


def _unit(resource: str) -> str:
    return "CPU" if resource == "cpu" else resource


def _hints(pod: Pod, info: NodeInfo, st: Status) -> tuple[str, ...]:
    if st.is_success:
        return ()
    plugin = st.plugin
    if plugin == "NodeResourcesFit":
        return tuple(_resource_hint(pod, info, ir) for ir in st.insufficient)
    if plugin == "TaintToleration":
        return tuple(f"tolerate taint {d}" for d in st.details) or ("tolerate the node's NoSchedule/NoExecute taints",)
    if plugin == "NodeAffinity":
        return _affinity_hints(pod, info)
    if plugin == "NodeUnschedulable":
        return ("node is cordoned: uncordon it (kubectl uncordon " + info.name + ")",)
    if plugin == "NodeName":
        return (f"the pod asks for node {pod.spec.node_name or '(another node)'} by spec.nodeName",)
    if st.details:
        return st.details
    if st.code == Code.UNSCHEDULABLE and plugin in ("NodePorts", "InterPodAffinity", "PodTopologySpread"):
        return ("evicting lower-priority pods on this node could help",)
    return ()


def _resource_hint(pod: Pod, info: NodeInfo, ir: InsufficientResource) -> str:
    name = ir.resource
    if name == "pods":
        lower = [p for p in info.pods if is_candidate_victim(p, pod.effective_priority)]
        if lower:
            return f"node is at its limit of {ir.capacity} pods: evicting 1 of {len(lower)} lower-priority pods would make room"
        return f"node is at its limit of {ir.capacity} pods and has no lower-priority pod to evict"
    if ir.unresolvable or ir.requested > ir.capacity:
        return (f"requests {format_amount(name, ir.requested)} {_unit(name)} but the node has only "
                f"{format_amount(name, ir.capacity)} allocatable: no eviction helps")
    missing = ir.missing
    freeable = sum(p.requests.get(name) for p in info.pods if is_candidate_victim(p, pod.effective_priority))
    text = f"needs {format_amount(name, missing)} more {_unit(name)}"
    if freeable >= missing:
        return f"{text}: evicting lower-priority pods could free {format_amount(name, freeable)}"
    if freeable > 0:
        return f"{text}: lower-priority pods hold only {format_amount(name, freeable)}"
    return f"{text}: no lower-priority pod here holds any"


def _affinity_hints(pod: Pod, info: NodeInfo) -> tuple[str, ...]:
    labels = info.node.labels
    out = []
    for k, v in pod.spec.node_selector.items():
        have = labels.get(k)
        if have is None:
            out.append(f"node label {k}={v} missing")
        elif have != v:
            out.append(f"node label {k} is {have!r}, the pod's nodeSelector wants {v!r}")
    aff = pod.spec.affinity
    na = aff.node_affinity if aff else None
    req = na.required_during_scheduling_ignored_during_execution if na else None
    if not out and req is not None:
        n = len(req.node_selector_terms)
        out.append(f"node matches none of the pod's {n} required node affinity term{'s' if n != 1 else ''}")
    return tuple(out)

