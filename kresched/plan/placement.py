"""Where the scheduler puts a pod: kresched's one placement engine.

Owns `Placer`, used everywhere a landing is predicted — the `fits` node of a plan, where each
victim's replacement lands, drain's pre-flight, reconcile — so that they all give the scheduler's
answer the scheduler's way (`schedulePod`):

1. filter as the scheduler searches (`find_nodes_that_fit(sample=True)`): the nominated node
   first; else the zone-interleaved node order, stopping at `numFeasibleNodesToFind`;
2. one feasible node: that node, unscored (as upstream);
3. else PreScore, Score, NormalizeScore and weights of the profile's score plugins
   (`sched.score`; the default profile's unless a scheduler configuration says otherwise), and the
   nodes sharing the top total: the scheduler takes the first of them its filters found
   (`select_host`), an order its parallel filters can shuffle, so a landing is that node plus
   every tied one (`candidates`).

With the scheduler's extenders (`sched.extender`, the profile's), as `schedulePod` calls them:
after step 1 the feasible nodes go through the filter extenders (an error of a non-ignorable one
is why the pod stays Pending), and in step 3 the prioritizing ones add their weighted scores.

Node-local raw scores are kept per pod shape (`ScoreMemos`) while a node's NodeInfo is the same
object. Also `bound_to` and `replacement_of`, the simulated pod copies. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import msgspec

from kresched.model.objects import POD_TOPOLOGY_LABELS, Node, Pod
from kresched.model.storage import StorageState
from kresched.sched.diagnosis import Diagnosis, fit_error_message, scheduler_error
from kresched.sched.dra.claims import with_new_claims
from kresched.sched.framework import CycleState, FilterPlugin, ScorePlugin, Snapshot
from kresched.sched.node_info import NodeInfo
from kresched.sched.profile import Profile
from kresched.sched.runner import FilterMemo, find_nodes_that_fit
from kresched.sched.score import (
    NodeScore,
    ScoreMemos,
    ScoreTable,
    Selection,
    default_score_plugins,
    score_nodes,
    select_host,
)
from kresched.sched.static import StaticFilters
from kresched.sched.volume_binding import local_pv_node_names
from kresched.sched.volume_zone import pv_topologies

if TYPE_CHECKING:
    from kresched.sched.extender import Extenders

__all__ = ["Landing", "Placer", "bound_to", "held_by_volume", "replacement_of"]


@dataclass(frozen=True, slots=True)
class Landing:
    """Where a pod lands: `node` (None: it stays Pending, for `reason`), every node tied with it
    at the top score (`candidates`), the scores, and whether the scheduler would have scored only
    a sample of the feasible nodes (`likely`: then it is the likely node, not a certainty)."""

    node: str | None
    candidates: tuple[str, ...] = ()
    likely: bool = False
    reason: str | None = None
    #: Every scored node's scores (none when one node was feasible): `scores`.
    table: ScoreTable | None = None
    #: What the scheduler's extenders did that the answer should say (an ignorable one skipped, a
    #: prioritize call that failed).
    notes: tuple[str, ...] = ()

    @property
    def scores(self) -> tuple[NodeScore, ...]:
        return self.table.rows() if self.table is not None else ()


class Placer:
    """The scheduler's node choice for one pod at a time (see the module docstring)."""

    def __init__(self, plugins: Sequence[FilterPlugin], static: StaticFilters | None = None,
                 score_plugins: Sequence[tuple[ScorePlugin, int]] | None = None, memoize: bool = True,
                 percentage: int = 0, extenders: Extenders | None = None) -> None:
        """`memoize=False` scores every node afresh (the results are the same; tests prove it).
        `percentage`: the profile's percentageOfNodesToScore (0: adaptive). `extenders`: the
        scheduler's, called after the filters and with the scores."""
        self.plugins = list(plugins)
        self.extenders = extenders
        self.static = static if static is not None else StaticFilters(self.plugins)
        self.score_plugins = list(score_plugins) if score_plugins is not None else default_score_plugins()
        self.percentage = percentage
        #: Node-local raw scores per pod shape, reused while a node's NodeInfo is the same object
        #: (snapshots never change a NodeInfo in place): replicas, and the replacements of one
        #: workload, score only the nodes that changed.
        self.score_memos = ScoreMemos() if memoize else None

    def land(self, pod: Pod, snapshot: Snapshot, nominated: dict[str, list[Pod]] | None = None,
             memo: FilterMemo | None = None) -> Landing:
        """Filter as the scheduler searches, then choose (`select`). `memo` (filter verdicts, per
        pod shape): see `find_nodes_that_fit`."""
        diag, cycle = self.filter(pod, snapshot, nominated, memo)
        error = scheduler_error(diag)
        if error is not None:
            return Landing(None, reason=error)
        if not diag.feasible:
            return Landing(None, reason=fit_error_message(diag), notes=diag.notes)
        return self.landing(pod, snapshot, diag, cycle)

    def filter(self, pod: Pod, snapshot: Snapshot, nominated: dict[str, list[Pod]] | None = None,
               memo: FilterMemo | None = None, start: int = 0) -> tuple[Diagnosis, CycleState]:
        """`findNodesThatFitPod`: the filter plugins as the scheduler searches, then the extenders."""
        diag, cycle = find_nodes_that_fit(self.plugins, pod, snapshot, nominated, self.static, memo, sample=True,
                                          percentage=self.percentage, start=start)
        if self.extenders is None or not diag.feasible:
            return diag, cycle
        from kresched.sched.extender import pass_extenders

        passed = pass_extenders(self.extenders, pod, snapshot, diag)
        if passed.feasible or passed.error or not diag.nominated_fits:
            return passed, cycle
        # The nominated node passed the plugins but not the extenders: the scheduler searches every
        # node as for a pod nominated nowhere (`evaluateNominatedNode` found nothing).
        status = msgspec.structs.replace(pod.status, nominated_node_name="")
        diag, cycle = find_nodes_that_fit(self.plugins, msgspec.structs.replace(pod, status=status), snapshot,
                                          nominated, self.static, None, sample=True, percentage=self.percentage,
                                          start=start)
        again = pass_extenders(self.extenders, pod, snapshot, diag)
        if not again.feasible and not again.error:  # upstream's statuses are one map across both searches
            again = replace(again, node_to_status={**passed.node_to_status, **again.node_to_status}, reason_counts=None)
        return again, cycle

    @classmethod
    def of(cls, profile: Profile, static: StaticFilters | None = None, memoize: bool = True) -> Placer:
        """The placer of a scheduler profile: its filters, scores, percentageOfNodesToScore and the
        scheduler's extenders."""
        return cls(profile.filters, static, profile.scores, memoize, profile.percentage_of_nodes_to_score,
                   profile.extenders)

    def landing(self, pod: Pod, snapshot: Snapshot, diag: Diagnosis, cycle: CycleState) -> Landing:
        """The choice among `diag.feasible` (non-empty) for a pod filtered with `cycle`."""
        sel = self.select(pod, snapshot, diag.feasible, cycle, diag.sampled, diag.extender_nodes)
        return Landing(sel.node, sel.candidates, sel.sampled, None, sel.table, (*diag.notes, *sel.notes))

    def select(self, pod: Pod, snapshot: Snapshot, feasible: Sequence[str], cycle: CycleState,
               sampled: bool = False, podless: bool = False) -> Selection:
        """Score `feasible` (unless it is one node) and take the top. `podless`: a filter extender
        answered with whole Nodes, and the scheduler scores the NodeInfos it makes of them, which
        hold no pods (`HTTPExtender.Filter`)."""
        if len(feasible) == 1:
            return Selection(feasible[0], (feasible[0],), None, sampled)
        infos = list(map(snapshot.by_name.__getitem__, feasible))
        memo = self.score_memos.for_pod(pod) if self.score_memos is not None else None
        names: list[str] | None = list(feasible)  # (the snapshot's NodeInfos of those names)
        if podless:
            infos, memo, names = [NodeInfo(i.node) for i in infos], None, None
        table = score_nodes(self.score_plugins, cycle, pod, infos, snapshot, memo, names)
        if self.extenders is None:
            return select_host(table, sampled)
        from kresched.sched.extender import extender_scores

        added = extender_scores(self.extenders, pod, infos)
        return replace(select_host(table.with_extenders(added.columns), sampled), notes=added.notes)


def bound_to(pod: Pod, node: Node) -> Pod:
    """The pod as it is once the scheduler has bound it to `node` (simulations place it so): with
    the node's zone and region labels, as the API server's PodTopologyLabelsAdmission copies them
    onto a pod at binding (v1.35+), so that the selectors of later pods see what they will see."""
    topology = {k: v for k in POD_TOPOLOGY_LABELS if (v := node.labels.get(k)) is not None}
    if any(pod.labels.get(k) != v for k, v in topology.items()):
        return pod.bound(node.name, {**pod.labels, **topology})
    return pod.bound(node.name)


def replacement_of(pod: Pod) -> Pod:
    """The pod its controller creates after it is evicted: same spec, unbound, Pending, another name.

    Its labels are the template's: the zone and region labels the API server put on the old pod
    when it was bound (`POD_TOPOLOGY_LABELS`) are not carried over; the replacement gets those of
    the node it lands on (`bound_to`). (Deliberately: a template that sets such a label itself is
    taken as one the admission plugin overwrites, which it does on every node carrying it.)

    It keeps its `persistentVolumeClaim` volumes, so its claims are the same claims (a
    StatefulSet's pod is recreated with the same claims, bound to the same PersistentVolumes) and
    the volume filters place it only where those volumes can follow. A generic ephemeral volume is
    left out: the ephemeral volume controller makes the new pod a new claim from the template,
    which kresched assumes can be provisioned wherever the pod lands (the old claim goes with the
    old pod)."""
    volumes = tuple(v for v in pod.spec.volumes if v.ephemeral is None)
    spec = msgspec.structs.replace(pod.spec, node_name="", volumes=volumes)
    status = msgspec.structs.replace(pod.status, phase="Pending", conditions=(), start_time=None,
                                     nominated_node_name="")
    labels = pod.labels
    if any(k in labels for k in POD_TOPOLOGY_LABELS):
        labels = {k: v for k, v in labels.items() if k not in POD_TOPOLOGY_LABELS}
    # A new pod: never Terminating, even when the old one is (a StatefulSet pod force-deleted).
    meta = msgspec.structs.replace(pod.metadata, name=pod.metadata.name + "~replacement", labels=labels,
                                   deletion_timestamp=None, deletion_grace_period_seconds=None)
    # Its ResourceClaims from templates are made anew for it (the old ones go with the old pod);
    # a claim it names directly is the same claim, and holds it where that is allocated.
    return with_new_claims(msgspec.structs.replace(pod, spec=spec, status=status, metadata=meta))


def held_by_volume(pod: Pod, storage: StorageState) -> str | None:
    """Why the pod's volumes tie it to a place, if they do: a claim bound to a local PV (node
    affinity naming hostnames), or to a PV in one zone (node affinity or topology labels), or any
    other PV node affinity. Only `persistentVolumeClaim` volumes: a generic ephemeral volume's
    replacement gets a new claim."""
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is None:
            continue
        pvc = storage.pvc(pod.namespace, v.persistent_volume_claim.claim_name)
        if pvc is None or not pvc.spec.volume_name:
            continue
        pv = storage.pv(pvc.spec.volume_name)
        if pv is None:
            continue
        hosts = local_pv_node_names(pv)
        if hosts:
            return f"its volume {pv.name} (claim {pvc.name}) is local to {', '.join(sorted(hosts))}"
        zones = sorted({z for t in pv_topologies(pv.name, pv.labels) if t.key.endswith("/zone") for z in t.values})
        aff = pv.spec.node_affinity
        if not zones and aff is not None and aff.required is not None:
            zones = sorted({val for term in aff.required.node_selector_terms for r in term.match_expressions
                            if r.key.endswith("/zone") and r.operator == "In" for val in r.values})
        if zones:
            return f"its volume {pv.name} (claim {pvc.name}) is in zone {', '.join(zones)}"
        if aff is not None and aff.required is not None:
            return f"its volume {pv.name} (claim {pvc.name}) attaches only to nodes matching its node affinity"
    return None
