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
from itertools import compress
from operator import is_, is_not, itemgetter, or_
from typing import Any, NamedTuple

from kresched.model.objects import Node, Pod
from kresched.plan.candidates import node_refusal
from kresched.plan.choice import PdbView, Suffixes, quickbound_to
from kresched.plan.pdb import PdbLedger
from kresched.sched.framework import recent
from kresched.sched.node_info import NodeInfo
from kresched.sched.preemption import importance_key

__all__ = ["EvictablePods", "Ranking"]

#: `EvictablePods.quick_all`: no bound kept yet.
_UNKNOWN: Any = object()
#: `EvictablePods.quick_all`: lists of candidates at least this long are compared with the last one
#: of the same requests and tier; the last ones of `_LISTS` (requests, tier) pairs are kept.
_LISTED, _LISTS = 64, 8


class EvictablePods:
    """The evictable pods of every node the planner looked at, and what each tier may evict."""

    __slots__ = ("_budget_users", "_budgets", "_budgets_version", "_eligible_memo", "_lists", "_ranked",
                 "_suffixes", "by_node", "ledger", "max_grace_seconds")

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
        #: Per node name: its last ranking (`rank` ranks the pods placed since into it).
        self._ranked: dict[str, Ranking] = {}
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
        #: `quick_all`'s last long list per (cpu, memory, tier): [NodeInfos, candidate lists, bounds].
        self._lists: dict[tuple[int, int, int], list[list[Any]]] = {}

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

    def forget(self, info: NodeInfo) -> None:
        """Let go of what is kept of `info`, a NodeInfo the working cluster replaced (kept by
        identity, it would stay alive; should it come back, it is looked at afresh)."""
        ident = id(info)
        for memo in (self.by_node, self._suffixes, self._budgets):
            hit = memo.get(ident)
            if hit is not None and hit[0] is info:
                del memo[ident]
        for tier in (1, 2):
            found = self._eligible_memo.get((ident, tier))
            if found is not None and found[0] is info:
                del self._eligible_memo[(ident, tier)]

    def rank(self, info: NodeInfo) -> tuple[NodeInfo, list[int], list[Pod], None, dict[int, list[Pod]]]:
        """`info`'s entries of `by_node` and its `Suffixes`, found together. Where the node (the
        same Node) holds the pods it held when last ranked and more — pods placed there since —
        the new ones are ranked into the last ranking (`Ranking.grown`), the others not read again."""
        last = self._ranked.get(info.name)
        grown = last.grown(info, self.max_grace_seconds) if last is not None else None
        r = self._ranked[info.name] = grown if grown is not None else Ranking.of(info, self.max_grace_seconds)
        hit = self.by_node[id(info)] = (info, r.negs, r.ranked, None, {})
        self._suffixes[id(info)] = (info, Suffixes.of(r.ranked, r.cpus, r.memories, r.ok), {}, len(r.ranked))
        return hit

    def quick_all(self, pod: Pod, candidates: list[tuple[NodeInfo, list[Pod]]], tier: int) -> list[tuple | None]:
        """`quickbound_to` of each (node, its candidates for some priority) of `candidates` in `tier`,
        from the node's `Suffixes`; in one pass (a tier's search asks it of every candidate node).
        All it reads of the pod is its cpu and memory requests: kept per those, the candidates and
        the tier, with the node's ranking (the next pods of a workload ask the same of every node).

        A long list is compared with the last one asked for the same requests and tier (`_lists`):
        the replicas of a workload ask of the same nodes, all but the few the last placement changed
        the same objects at the same positions, so only the positions whose NodeInfo or candidates
        are not the same objects are looked up (in C up to them)."""
        req = pod.requests
        cpu, memory = req.milli_cpu, req.memory
        if len(candidates) < _LISTED:
            return [self._quick(pod, info, cands, cpu, memory, tier) for info, cands in candidates]
        infos = list(map(itemgetter(0), candidates))
        lists = list(map(itemgetter(1), candidates))
        last = recent(self._lists, (cpu, memory, tier), _LISTS, list)
        if last and len(last[0]) == len(infos):
            out = list(last[2])
            redo = compress(range(len(infos)), map(or_, map(is_not, infos, last[0]), map(is_not, lists, last[1])))
        else:
            out = [None] * len(infos)
            redo = range(len(infos))
        for j in redo:
            out[j] = self._quick(pod, infos[j], lists[j], cpu, memory, tier)
        last[:] = infos, lists, out
        return out

    def _quick(self, pod: Pod, info: NodeInfo, cands: list[Pod], cpu: int, memory: int, tier: int) -> tuple | None:
        """`quickbound_to` of one node (`candidates` ranked it: `rank`), kept per request and cut."""
        _, sfx, kept, n = self._suffixes[id(info)]
        cut = n - len(cands)
        key = (cpu, memory, cut, tier)
        found = kept.get(key, _UNKNOWN)
        if found is _UNKNOWN:
            found = kept[key] = quickbound_to(pod, info, sfx, cut, tier)
        return found

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


class Ranking(NamedTuple):
    """A node's evictable pods (not mirror, DaemonSet, terminating or critical; none on a lost
    node) most important first (`importance_key`), with the columns `Suffixes` sums up: each one's
    key, negated priority, cpu and memory requests, and whether its grace period is within the
    limit. `node` and `pods`: the Node and the pods it was found for; `lost`: the node is lost."""

    node: Node
    pods: tuple[Pod, ...]
    lost: bool
    keys: list[tuple[int, int, str, str]]
    ranked: list[Pod]
    negs: list[int]
    cpus: list[int]
    memories: list[int]
    ok: list[bool]

    @classmethod
    def of(cls, info: NodeInfo, max_grace: int) -> Ranking:
        lost = node_refusal(info.node) is not None
        ranked = [] if lost else sorted([p for p in info.pods if p.protection is None], key=importance_key)
        requests = [p.requests for p in ranked]
        return cls(info.node, tuple(info.pods), lost, list(map(importance_key, ranked)), ranked,
                   [-p.effective_priority for p in ranked], [r.milli_cpu for r in requests],
                   [r.memory for r in requests], [p.grace_seconds <= max_grace for p in ranked])

    def grown(self, info: NodeInfo, max_grace: int) -> Ranking | None:
        """The ranking of `info`, where it is this one's node with the same pods and more after them
        (pods placed there since); else None. Each new pod goes where sorting them all puts it
        (after any with an equal key — the keys end with the pod's namespace/name, so there is
        none — as the sort is stable and the new pods come last)."""
        before, now = self.pods, info.pods
        n = len(before)
        if info.node is not self.node or len(now) < n or not all(map(is_, before, now)):
            return None
        added = [] if self.lost else [p for p in now[n:] if p.protection is None]
        if not added:
            return self._replace(pods=tuple(now))
        keys, ranked, negs, cpus, memories, ok = (list(c) for c in self[3:])
        for p in added:
            key = importance_key(p)
            i = bisect_right(keys, key)
            keys.insert(i, key)
            ranked.insert(i, p)
            negs.insert(i, -p.effective_priority)
            cpus.insert(i, p.requests.milli_cpu)
            memories.insert(i, p.requests.memory)
            ok.insert(i, p.grace_seconds <= max_grace)
        return Ranking(self.node, tuple(now), False, keys, ranked, negs, cpus, memories, ok)
