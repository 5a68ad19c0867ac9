"""Which of a node's pods a pending pod may evict, per priority and tier, as the PDB budgets stand.

Owns `EvictablePods`: per NodeInfo, its evictable pods (not mirror, DaemonSet, terminating or
critical) ranked most important first, summed up once for the quick bound (`choice.Suffixes`);
the candidates for a priority (a suffix of them); the ones a tier may evict (`choice.PdbView`:
tiers 1–2 none the PDBs refuse, tier 1 none beyond the grace limit); and the budgets left on the
PDBs covering them. Everything is kept per NodeInfo (by identity) and found again only when the
NodeInfo or a budget it depends on changes. It reads the run's `PdbLedger`, never changes it.
It does not search nodes or select victims (`kresched.plan.search`, `kresched.plan.planner`).
Pure: no I/O, no clock.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any

from kresched.model.objects import Pod
from kresched.plan.candidates import node_refusal
from kresched.plan.choice import PdbView, Suffixes, quickbound_to
from kresched.plan.pdb import PdbLedger
from kresched.sched.node_info import NodeInfo
from kresched.sched.preemption import importance_key

__all__ = ["EvictablePods"]

#: `EvictablePods.quick_all`: no bound kept yet.
_UNKNOWN: Any = object()


class EvictablePods:
    """The evictable pods of every node the planner looked at, and what each tier may evict."""

    __slots__ = ("_budget_users", "_budgets", "_budgets_version", "_eligible_memo", "_suffixes", "by_node",
                 "ledger", "max_grace_seconds")

    def __init__(self, ledger: PdbLedger, max_grace_seconds: int) -> None:
        self.ledger = ledger
        self.max_grace_seconds = max_grace_seconds
        #: Per NodeInfo (by identity): its evictable pods (not mirror, DaemonSet, terminating or
        #: critical) with their effective priorities, lowest first. Which of them may go for a
        #: given pod only depends on its priority.
        #: The fourth item, the node's `PdbView`, is found on first use (`budget_state`); the
        #: fifth, `candidates` per priority. (The planner reads the fifth directly for every node
        #: of every pod, before calling `candidates`.)
        self.by_node: dict[int, tuple[NodeInfo, list[int], list[Pod], PdbView | None, dict[int, list[Pod]]]] = {}
        #: Per NodeInfo (by identity): (it, `Suffixes` of its evictable pods, `quick_all`'s bounds kept,
        #: how many evictable pods it has).
        self._suffixes: dict[int, tuple[NodeInfo, Suffixes, dict[tuple[int, int, int, int], tuple | None], int]] = {}
        #: Per NodeInfo (by identity) and tier: (it, its budgets, the positions of the eligible
        #: pods among its evictable ones, those pods, `eligible` per candidate count).
        self._eligible_memo: dict[tuple[int, int], tuple[NodeInfo, tuple[int, ...], list[int], list[Pod],
                                                         dict[int, list[Pod]]]] = {}
        #: Per NodeInfo (by identity): (it, `budget_state`), valid at the ledger's version
        #: `_budgets_version`; `_budget_users` finds the entries a PDB's change invalidates.
        self._budgets: dict[int, tuple[NodeInfo, tuple[int, ...]]] = {}
        self._budgets_version = 0
        self._budget_users: dict[str, set[int]] = {}

    def candidates(self, info: NodeInfo, priority: int) -> list[Pod]:
        """`info`'s pods that may be evicted for a pod of `priority` (`candidates.is_candidate_victim`),
        most important first. The node's evictable pods are kept in that order; since it is by
        priority first, the ones below `priority` are a suffix."""
        hit = self.by_node.get(id(info))
        if hit is None or hit[0] is not info:
            hit = self.rank(info)
        by_priority = hit[4]
        cands = by_priority.get(priority)
        if cands is None:
            cands = by_priority[priority] = hit[2][bisect_right(hit[1], -priority):]
        return cands

    def rank(self, info: NodeInfo) -> tuple[NodeInfo, list[int], list[Pod], None, dict[int, list[Pod]]]:
        """`info`'s entries of `by_node` and its `Suffixes`, found together."""
        ranked = sorted([p for p in info.pods if p.protection is None], key=importance_key) \
            if node_refusal(info.node) is None else []  # (`protected_reason`; a lost node: none)
        hit = self.by_node[id(info)] = (info, [-p.effective_priority for p in ranked], ranked, None, {})
        self._suffixes[id(info)] = (info, Suffixes.of(ranked, self.max_grace_seconds), {}, len(ranked))
        return hit

    def quick_all(self, pod: Pod, candidates: list[tuple[NodeInfo, list[Pod]]], tier: int) -> list[tuple | None]:
        """`quickbound_to` of each (node, its candidates for some priority) of `candidates` in `tier`,
        from the node's `Suffixes`; in one pass (a tier's search asks it of every candidate node).
        All it reads of the pod is its cpu and memory requests: kept per those, the candidates and
        the tier, with the node's ranking (the next pods of a workload ask the same of every node)."""
        suffixes, unknown = self._suffixes, _UNKNOWN  # (`candidates` ranked each node: `rank`)
        req = pod.requests
        cpu, memory = req.milli_cpu, req.memory
        out: list[tuple | None] = []
        for info, cands in candidates:
            _, sfx, kept, n = suffixes[id(info)]
            cut = n - len(cands)
            key = (cpu, memory, cut, tier)
            found = kept.get(key, unknown)
            if found is unknown:
                found = kept[key] = quickbound_to(pod, info, sfx, cut, tier)
            out.append(found)
        return out

    def eligible(self, info: NodeInfo, cands: list[Pod], tier: int) -> list[Pod]:
        """The candidates `tier` may evict: tiers 1–2 none whose eviction the PDBs refuse, tier 1
        none with a grace period above the limit. Found once per node and tier for all its
        evictable pods while the budgets of its PDBs stay as they are: `cands` (those below one
        priority) is a suffix of them, so its eligible pods are a suffix of theirs."""
        if tier == 3:
            return cands
        budgets = self.budget_state(info)
        key = (id(info), tier)
        hit = self._eligible_memo.get(key)
        _, _, ranked, view, _ = self.by_node[id(info)]
        if hit is None or hit[0] is not info or hit[1] != budgets:
            assert view is not None  # (`budget_state` found it)
            keep, pods = view.fixed[tier - 1], view.fixed_pods[tier - 1]
            remaining = self.ledger.remaining
            spent = {i for i, k in view.spenders if remaining.get(k, 0) <= 0}
            if spent:
                keep = [i for i in keep if i not in spent]
                pods = [ranked[i] for i in keep]
            hit = self._eligible_memo[key] = (info, budgets, keep, pods, {})
        by_count = hit[4]
        out = by_count.get(len(cands))
        if out is None:
            out = by_count[len(cands)] = hit[3][bisect_left(hit[2], len(ranked) - len(cands)):]
        return out

    def pdb_keys(self, info: NodeInfo) -> tuple[str, ...]:
        """The PDBs covering `info`'s evictable pods, once `budget_state` has looked at it."""
        view = self.by_node[id(info)][3]
        return view.keys if view is not None else ()

    def _sync_budgets(self) -> None:
        """Drop the kept budget states of nodes covered by a PDB the ledger changed since."""
        ledger = self.ledger
        if ledger.version != self._budgets_version:
            for key in ledger.changed_since(self._budgets_version):
                for ident in self._budget_users.pop(key, ()):
                    self._budgets.pop(ident, None)
            self._budgets_version = ledger.version

    def budget_state(self, info: NodeInfo) -> tuple[int, ...]:
        """The budgets left on the PDBs covering `info`'s evictable pods (what its options depend on
        besides the NodeInfo itself). Kept per NodeInfo; when the ledger changes, only the entries
        of nodes covered by a PDB that changed are dropped."""
        ledger = self.ledger
        self._sync_budgets()
        cached = self._budgets.get(id(info))
        if cached is not None and cached[0] is info:
            return cached[1]
        hit = self.by_node[id(info)]
        view = hit[3]
        if view is None:  # found on first use: most nodes never get this far
            view = PdbView.of(hit[2], ledger, self.max_grace_seconds)
            self.by_node[id(info)] = (*hit[:3], view, hit[4])
        keys = view.keys
        remaining = ledger.remaining
        state = tuple([remaining.get(k, 0) for k in keys])
        self._budgets[id(info)] = (info, state)
        for k in keys:
            self._budget_users.setdefault(k, set()).add(id(info))
        return state
