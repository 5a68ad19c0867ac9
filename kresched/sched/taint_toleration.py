"""TaintToleration: a node's NoSchedule and NoExecute taints keep out pods that do not tolerate them.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`
(Filter on NoSchedule/NoExecute taints; Score on PreferNoSchedule taints: the count of those the
pod does not tolerate, normalized in reverse so that the node with the fewest scores 100) and the toleration
matching of `k8s.io/api/core/v1/toleration.go` (`Toleration.ToleratesTaint`) and
component-helpers' `FindMatchingUntoleratedTaint`.

Owns: the filter, and the public toleration helpers the rest of kresched reuses (the planner asks
`tolerations_tolerate_taint` whether a pod tolerates the reservation taint
`CriticalAddonsOnly=kresched:NoSchedule`; NodeUnschedulable asks it about
`node.kubernetes.io/unschedulable:NoSchedule`). Pure; stateless.

Upstream's reason no longer names the taint (older releases wrote `node(s) had untolerated taint
{key: value}`; current ones write `node(s) had untolerated taint(s)` and log the taint at V(4)), so
that the reasons of different nodes add up. kresched puts the first untolerated taint,
`key=value:effect`, into `Status.details` for `explain`; the message is unchanged by it.

Deliberate difference: the `Lt`/`Gt` toleration operators (feature gate
TaintTolerationComparisonOperators, alpha in 1.35) are always evaluated. The API server rejects
them unless the gate is on, so a pod that carries one comes from a cluster where it is on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar

from kresched.model.objects import Pod
from kresched.model.specs import Taint, Toleration
from kresched.sched.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    Code,
    CycleState,
    PreFilterResult,
    Snapshot,
    Status,
    default_normalize_score,
)
from kresched.sched.node_info import NodeInfo

__all__ = [
    "DO_NOT_SCHEDULE_EFFECTS",
    "ERR_REASON_UNTOLERATED",
    "NAME",
    "TaintToleration",
    "find_untolerated_taint",
    "format_taint",
    "tolerates",
    "tolerations_tolerate_taint",
]

NAME = "TaintToleration"

ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

#: The effects the filter looks at (`helper.DoNotScheduleTaintsFilterFunc`).
DO_NOT_SCHEDULE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


class TaintToleration:
    """Rejects a node with a NoSchedule/NoExecute taint no toleration of the pod matches.

    UnschedulableAndUnresolvable: evicting pods never removes a taint.
    """

    name: ClassVar[str] = NAME

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        # Upstream's PreFilter only skips pods whose in-place resize is deferred (bound pods).
        return PreFilterResult()

    def node_reads(self, pod: Pod) -> tuple[str, ...]:
        """The node labels Filter reads: none (only the node's taints)."""
        return ()

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        taint = find_untolerated_taint(node_info.node.spec.taints, pod.spec.tolerations)
        if taint is None:
            return SUCCESS
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNTOLERATED,), NAME,
                      details=(format_taint(taint),))

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        return None

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        return None

    # -- Score ------------------------------------------------------------------------------------
    def pre_score(self, cycle: CycleState, pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot) -> Status:
        """The pod's tolerations that can tolerate PreferNoSchedule (that effect, or any effect),
        and the names of the snapshot's nodes with such a taint (`nodes` are the snapshot's)."""
        cycle.write(_PRESCORE_KEY, tuple(t for t in pod.spec.tolerations
                                        if not t.effect or t.effect == "PreferNoSchedule"))
        cycle.write(_TAINTED_KEY, snapshot.index(_TAINTED_KEY, _PreferTainted.build).names)
        return SUCCESS

    def score(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """How many PreferNoSchedule taints of the node the pod does not tolerate."""
        taints = node_info.node.prefer_no_schedule_taints
        if not taints:
            return 0
        tolerations = cycle.read(_PRESCORE_KEY)
        if tolerations is None:
            tolerations = pod.spec.tolerations
        return sum(1 for t in taints if not tolerations_tolerate_taint(tolerations, t))

    def score_all(self, cycle: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        """`score` of each of `nodes` (most nodes have no PreferNoSchedule taint: 0; where no node
        of the snapshot has one, every score is 0, found without reading the nodes)."""
        tainted = cycle.read(_TAINTED_KEY)
        if tainted is not None and not tainted:
            return [0] * len(nodes)
        score = self.score
        return [score(cycle, pod, info) if info.node.prefer_no_schedule_taints else 0 for info in nodes]

    def normalize_score(self, cycle: CycleState, pod: Pod, scores: list[int]) -> None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)


_PRESCORE_KEY = f"PreScore{NAME}"
#: CycleState key, and `Snapshot.index` key, of the names of the nodes with a PreferNoSchedule taint.
_TAINTED_KEY = f"{NAME}/prefer-no-schedule"


class _PreferTainted:
    """`Snapshot.index`: the names of the nodes with a PreferNoSchedule taint (a simulation that
    changes a node, a cordon, replaces its Node)."""

    __slots__ = ("names",)

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    @classmethod
    def build(cls, snap: Snapshot) -> _PreferTainted:
        return cls(frozenset([i.name for i in snap.node_infos if i.node.prefer_no_schedule_taints]))

    def replaced(self, old: NodeInfo, new: NodeInfo) -> _PreferTainted:
        if old.node is new.node:
            return self
        has = bool(new.node.prefer_no_schedule_taints)
        if has == (new.name in self.names):
            return self
        return _PreferTainted(self.names | {new.name} if has else self.names - {new.name})


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """`Toleration.ToleratesTaint`, in upstream's order:

    1. a toleration with an effect matches only taints with that effect (empty: every effect);
    2. a toleration with a key matches only taints with that key (empty: every key);
    3. operator `Equal` (or empty) needs the same value, `Exists` matches any value;
    4. `Lt`/`Gt` compare the taint's value with the toleration's as canonical decimal int64s
       (`tolerates` when taint < toleration, resp. taint > toleration); a value that is not one
       never matches; any other operator never matches.
    """
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op in ("", "Equal"):
        return toleration.value == taint.value
    if op == "Exists":
        return True
    if op in ("Lt", "Gt"):
        want = _canonical_int64(toleration.value)
        have = _canonical_int64(taint.value)
        if want is None or have is None:
            return False
        return have < want if op == "Lt" else have > want
    return False


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """`TolerationsTolerateTaint`: some toleration tolerates the taint."""
    return any(tolerates(t, taint) for t in tolerations)


def find_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: Iterable[Toleration],
    include: Callable[[Taint], bool] | None = None,
) -> Taint | None:
    """`FindMatchingUntoleratedTaint`: the first taint, among those `include` keeps (by default
    NoSchedule and NoExecute ones), that no toleration tolerates; None if all are tolerated."""
    tols = tuple(tolerations)
    for taint in taints:
        if include is None:
            if taint.effect not in DO_NOT_SCHEDULE_EFFECTS:
                continue
        elif not include(taint):
            continue
        if not tolerations_tolerate_taint(tols, taint):
            return taint
    return None


def format_taint(taint: Taint) -> str:
    """`key=value:effect` as `kubectl taint` writes it (`key:effect` when the value is empty)."""
    if taint.value:
        return f"{taint.key}={taint.value}:{taint.effect}"
    return f"{taint.key}:{taint.effect}"


# `content.IsDecimalInteger`: "0", or an optional minus and digits without a leading zero.
_CANONICAL_INT = re.compile(r"0|-?[1-9][0-9]*")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _canonical_int64(text: str) -> int | None:
    if _CANONICAL_INT.fullmatch(text) is None:
        return None
    n = int(text)
    return n if _INT64_MIN <= n <= _INT64_MAX else None
