"""What filtering found for one pod (`Diagnosis`, upstream's `framework.Diagnosis`), how far a
sampled search went (`processed_nodes`), and how the scheduler words it: the FitError message
(`FitError.Error()` in pkg/scheduler/framework/types.go: `fit_error_message`, `reasons_histogram`)
and a plugin's error (`scheduler_error`). Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter

from kresched.sched.framework import SUCCESS, Code, Status

__all__ = [
    "NO_NODES_AVAILABLE",
    "NO_NODE_AVAILABLE",
    "SCHEDULER_ERROR_NOTE",
    "Diagnosis",
    "fit_error_message",
    "processed_nodes",
    "reasons_histogram",
    "scheduler_error",
]

NO_NODE_AVAILABLE = "0/{} nodes are available"
#: `ErrNoNodesAvailable` (schedule_one.go): what the scheduler writes when the cluster has no node
#: at all; it then runs no PostFilter, so there is no preemption part.
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
#: What follows from a `scheduler_error`.
SCHEDULER_ERROR_NOTE = ("a plugin failed with an error, not a verdict: the scheduler stops this pod's attempt there "
                        "(reason SchedulerError) and retries it with backoff; it preempts nothing, and no eviction "
                        "helps until the cause (the claim's request, the DeviceClass, a device's attributes) changes")


@dataclass
class Diagnosis:
    """What filtering found for one pod (`framework.Diagnosis`)."""

    num_all_nodes: int
    #: Status of each node that was filtered and failed (explicit statuses).
    node_to_status: dict[str, Status] = field(default_factory=dict)
    #: Status of nodes a PreFilter excluded (absent from `node_to_status`), if any.
    absent_status: Status | None = None
    #: Set when a PreFilter rejected the pod for every node.
    pre_filter_msg: str = ""
    pre_filter_status: Status | None = None
    feasible: list[str] = field(default_factory=list)
    feasible_set: frozenset[str] = frozenset()
    #: Filtering stopped at `numFeasibleNodesToFind` feasible nodes (`sample=True`): other nodes
    #: may fit too, and which ones the scheduler looks at depends on where its rotating start
    #: index stands.
    sampled: bool = False
    #: The pod's nominated node passed the filters and was the only node filtered (`sample=True`).
    nominated_fits: bool = False
    #: How many nodes of `node_to_status` fail for each list of reasons, once counted
    #: (`fit_error_message` counts them; a search resumed from a walk carries its counts over).
    reason_counts: dict[tuple[str, ...], int] | None = None
    #: The first node status that is an error, not a verdict (`Code.ERROR`, e.g. a device
    #: selector's CEL runtime error): the scheduler's cycle stops there (`scheduler_error`).
    filter_error: Status | None = None
    #: What the scheduler's extenders made of the search (`sched.extender.pass_extenders`): the
    #: error of a non-ignorable one (the scheduler then fails the pod with it, not with a FitError,
    #: and does not preempt), the ignorable ones it skipped, and whether the feasible nodes came
    #: back as whole Nodes (the scheduler then scores NodeInfos made from them, without pods).
    error: str = ""
    notes: tuple[str, ...] = ()
    extender_nodes: bool = False

    def status_of(self, node: str) -> Status:
        if node in self.node_to_status:
            return self.node_to_status[node]
        if node in self.feasible_set:
            return SUCCESS
        if self.pre_filter_status is not None:
            return self.pre_filter_status
        return self.absent_status or SUCCESS


def processed_nodes(diag: Diagnosis) -> int:
    """How far a sampled search went (`processedNodes`: the feasible nodes and those with a status),
    what the scheduler advances its `nextStartNodeIndex` by; 0 when the nominated node was taken
    (the search never ran)."""
    if diag.nominated_fits:
        return 0
    return len(diag.feasible) + len(diag.node_to_status)


_REASONS = attrgetter("reasons")


def reasons_histogram(statuses: Iterable[Status], absent: Status | None = None, absent_count: int = 0) -> str:
    """`<count> <reason>` for every reason, sorted as strings (counts included), joined by `, `."""
    # Most nodes fail for one of a few reason lists: count those (in C), then their reasons.
    return _histogram(Counter(map(_REASONS, statuses)), absent, absent_count)


def _histogram(by_reasons: dict[tuple[str, ...], int], absent: Status | None, absent_count: int) -> str:
    """`reasons_histogram` from how many nodes fail for each list of reasons."""
    counts: dict[str, int] = {}
    for reasons, n in by_reasons.items():
        for r in reasons:
            counts[r] = counts.get(r, 0) + n
    if absent is not None and absent_count > 0:
        for r in absent.reasons:
            counts[r] = counts.get(r, 0) + absent_count
    return ", ".join(sorted(f"{v} {k}" for k, v in counts.items()))


def scheduler_error(diag: Diagnosis) -> str | None:
    """What the scheduler writes when a plugin returned an error instead of a verdict, or None.

    A PreFilter's error ends `RunPreFilterPlugins` (`running PreFilter plugin "X": ...`); a
    Filter's (`running "X" filter plugin: ...`, `RunFilterPlugins`) cancels
    `findNodesThatPassFilters` whether or not other nodes fit. Either way the cycle fails with
    that error (condition reason `SchedulerError`): no node is chosen, no PostFilter runs, and
    the pod is retried with backoff.
    """
    st = diag.pre_filter_status
    if st is not None and st.code == Code.ERROR:
        return f'running PreFilter plugin "{st.plugin}": {", ".join(st.reasons)}'
    st = diag.filter_error
    if st is not None:
        return f'running "{st.plugin}" filter plugin: {", ".join(st.reasons)}'
    return None


def fit_error_message(diag: Diagnosis) -> str:
    """The filter part of `FitError.Error()`: `0/N nodes are available: <histogram>.`, or
    `0/N nodes are available: <PreFilter message>.` when a PreFilter rejected the pod (the histogram
    is then left out, as upstream does); `ErrNoNodesAvailable`'s text for a cluster without nodes; an extender's
    error as it is (the scheduler writes that instead of a FitError)."""
    if diag.num_all_nodes == 0:
        return NO_NODES_AVAILABLE
    if diag.error:
        return diag.error
    msg = NO_NODE_AVAILABLE.format(diag.num_all_nodes) + ":"
    if diag.pre_filter_msg:
        return f"{msg} {diag.pre_filter_msg}."
    absent = diag.num_all_nodes - len(diag.node_to_status) - len(diag.feasible)
    by_reasons = diag.reason_counts
    if by_reasons is None:  # counted once, for this message and the searches resumed from this one
        by_reasons = diag.reason_counts = Counter(map(_REASONS, diag.node_to_status.values()))
    hist = _histogram(by_reasons, diag.absent_status, absent)
    if hist:
        msg += f" {hist}."
    return msg
