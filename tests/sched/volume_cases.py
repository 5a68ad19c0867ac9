"""Shared runner for the volume plugin tables: PreFilter then Filter of one plugin on one node,
as upstream's tests run them, compared as (code, reasons)."""

from __future__ import annotations

from typing import Any

from kresched.model.objects import Node, Pod
from kresched.sched.framework import Code, CycleState, FilterPlugin, Snapshot
from tests.builders import make_state

#: (code, reasons) of a status; None for Success.
Outcome = tuple[Code, tuple[str, ...]] | None

SKIP: Outcome = (Code.SKIP, ())


def outcome(code: Code, *reasons: str) -> Outcome:
    return (code, reasons)


def unresolvable(*reasons: str) -> Outcome:
    return (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def unschedulable(*reasons: str) -> Outcome:
    return (Code.UNSCHEDULABLE, reasons)


def run_plugin(plugin: FilterPlugin, pod: Pod, node: Node, storage: list[Any], running: list[Pod] = (),
               other_nodes: list[Node] = ()) -> tuple[Outcome, Outcome]:
    """(PreFilter outcome, Filter outcome on `node`); Filter is not run after a PreFilter Skip or
    rejection (its outcome is then None)."""
    state = make_state([node, *other_nodes], list(running), storage=storage)
    snap = Snapshot.from_state(state)
    cycle = CycleState()
    pre = plugin.pre_filter(cycle, pod, snap)
    pre_out: Outcome = None if pre.status.is_success else (pre.status.code, pre.status.reasons)
    if pre_out is not None:
        return pre_out, None
    st = plugin.filter(cycle, pod, snap.by_name[node.name])
    return None, (None if st.is_success else (st.code, st.reasons))


