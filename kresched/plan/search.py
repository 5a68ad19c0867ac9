"""The branch and bound over a tier's candidate nodes: which nodes could hold the best option or
the runner-up, and which need not be simulated at all.

Owns `NodeSearch`: a tier's search over the candidate nodes of one pod (`tier_options`), and the
same search over a `choice.TierIndex` kept per (pod shape, tier) across the pods of a run
(`synced_index`, `indexed`), so that a pod costs what changed since the last pod of its shape;
and the order the tiers are searched in (`tier_order`), with when a tier 3 that found nothing
settles that tier 2 has nothing either (`settled`), and whether any tier has an option, asked
without a search of every node (`no_tier_has_one`, where tier 1's search finds none for long).
Both searches put off selecting victims on a node that can be neither the best option nor the
runner-up, and select them only where a plan could show them (`best_of_later`, `first_out_of_later`,
`OPTIONS_SHOWN`, `OUT_SHOWN`): what a plan shows is what selecting them everywhere shows.
The bounds and the rule they bound are `kresched.plan.choice`'s; which pods a tier may evict is
`kresched.plan.evictable`'s; a node's option (its victims) comes from the planner (`option`). It
never changes the working cluster or the ledger, and never decides which option wins.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import heapq
import itertools
from bisect import insort
from collections.abc import Callable, Sequence
from operator import itemgetter

from kresched.model.objects import Pod
from kresched.plan.aftermath import Working
from kresched.plan.candidates import node_refusal
from kresched.plan.choice import (
    NOTHING_EVICTABLE,
    QUICK,
    REFINED,
    CannotBeat,
    Entry,
    Reason,
    TierIndex,
    lowerbound_to,
    min_victims,
    one_victim_bound,
    why_not_enough,
)
from kresched.plan.evictable import EvictablePods
from kresched.plan.plans import NodeOption
from kresched.sched.framework import Code, CycleState, Status
from kresched.sched.interpod_affinity_terms import NO_LABELS, AffinityTerm
from kresched.sched.node_info import NodeInfo

__all__ = ["NodeSearch", "OptionFinder"]

#: The order a pod's tiers are searched in (the first with an option wins).
_TIERS = (1, 2, 3)
#: Where taking more pods off a node fails the pod only through known pods (`removal_hazards`):
#: tier 3 before tier 2, whose search a tier 3 with no option may settle (`NodeSearch.settled`).
_TIERS_SETTLING = (1, 3, 2)


def tier_order(hazards: Sequence[AffinityTerm] | None) -> tuple[int, ...]:
    """The tiers in the order a pod with these `preemption.removal_hazards` has them searched."""
    return _TIERS if hazards is None else _TIERS_SETTLING


#: A node's option in a tier, or why it has none: `(pod, cycle, info, eligible, tier, nominated there)`.
OptionFinder = Callable[[Pod, CycleState, NodeInfo, list[Pod], int, Sequence[Pod]], NodeOption | str]


#: How many of a tier's options a plan shows (the chosen one and its runners-up), and how many of
#: the nodes that are out, the first by name (`Planner._decide`).
OPTIONS_SHOWN, OUT_SHOWN = 6, 5


#: A node the search put off (`NodeSearch.tier_options`, `NodeSearch.indexed`): its bound from
#: `one_victim_bound`, the bound it was searched at, its NodeInfo and eligible pods.
Later = tuple[tuple, tuple, NodeInfo, list[Pod]]


def best_of_later(later: list[Later], options: list[NodeOption], reasons: dict[str, Reason],
                  option: Callable[[Later], NodeOption | str]) -> list[Later]:
    """Of the nodes a search put off — nodes whose `one_victim_bound` (tighter than the bound that
    orders the search) was above the runner-up's key when their turn came, so that neither the best
    option nor the runner-up can be theirs, though the search would have selected their victims —
    those whose options a plan may show (up to `OPTIONS_SHOWN`, by key): their victims selected
    (`option`), by bound, while one is below the `OPTIONS_SHOWN`-th best key, each option found
    into `options` and each reason into `reasons`. Returns the others, in name order: each has an
    option beyond those shown, or why it has none, which a plan shows only among the first
    `OUT_SHOWN` nodes out by name."""
    later.sort(key=itemgetter(0))
    keys = sorted(o.key for o in options)[:OPTIONS_SHOWN]
    for i, item in enumerate(later):
        if len(keys) == OPTIONS_SHOWN and item[0] > keys[-1]:
            return sorted(later[i:], key=lambda it: it[2].name)
        opt = option(item)
        if isinstance(opt, str):
            reasons[item[2].name] = opt
        else:
            options.append(opt)
            insort(keys, opt.key)
            del keys[OPTIONS_SHOWN:]
    return []


def first_out_of_later(rest: list[Later], reasons: dict[str, Reason],
                       option: Callable[[Later], NodeOption | str]) -> None:
    """Why each node of `rest` (`best_of_later`'s, in name order) has no option, into `reasons`,
    while one comes before the `OUT_SHOWN`-th node of `reasons` by name — as far as a plan shows."""
    first = heapq.nsmallest(OUT_SHOWN, reasons)
    for item in rest:
        if len(first) == OUT_SHOWN and item[2].name > first[-1]:
            break
        opt = option(item)
        if isinstance(opt, str):
            reasons[item[2].name] = opt
            first = heapq.nsmallest(OUT_SHOWN, [*first, item[2].name])


class NodeSearch:
    """The search for the options of one tier, with what it keeps of each node between pods."""

    __slots__ = ("_near", "evictable", "max_grace_seconds", "nominated_by_node", "prune", "stamps", "work")

    def __init__(self, work: Working, evictable: EvictablePods, nominated_by_node: dict[str, list[Pod]],
                 max_grace_seconds: int, prune: bool) -> None:
        """`nominated_by_node`: the pending pods the scheduler nominated to each node; `prune=False`:
        every candidate node's option is found (the choices are the same). Each search is given
        `option`, which finds a node's option (the planner selects the victims)."""
        self.work = work
        self.evictable = evictable
        self.nominated_by_node = nominated_by_node
        self.max_grace_seconds = max_grace_seconds
        self.prune = prune
        self.stamps = itertools.count(1)
        #: `unsettled`'s candidates that some required affinity term matches, per candidate list (by
        #: identity: a node's candidates for a priority are kept lists), for the terms and the
        #: namespaces' labels it was last asked with (a pod no tier helps asks it of every node, per
        #: tier and again when freeing devices).
        self._near: tuple[object, object, dict[int, tuple[list[Pod], list[Pod]]]] | None = None

    def tier_options(self, pod: Pod, cycle: CycleState, candidates: list[tuple[NodeInfo, list[Pod]]],
                     tier: int, nominated: dict[str, list[Pod]], infeasible: dict[str, Reason],
                     option: OptionFinder, prune: bool = True, give_up: int = 0) -> list[NodeOption] | None:
        """Every feasible option of `tier` that could be the best or the runner-up (`give_up`: None
        once that many nodes are looked at with no option found, for a caller to ask first whether
        any tier has one, `no_tier_has_one`).

        Branch and bound, lazily: each node enters the heap with a quick bound (`quickbound_to`,
        from the node's `Suffixes`; a node where not even all the candidates the tier may evict,
        budgets aside, make room is out at once); when it reaches the top, its exact tier-eligible
        pods and bound (`lowerbound_to`) are computed and it goes back in; when it reaches the top
        again, its victims are selected. The search stops once no node left can beat the second
        best option, so both the chosen node and its runner-up (which `decided_by` names) are what
        a search of every node would find. (`indexed` is the same search over a `TierIndex`.)"""
        heap: list[tuple[tuple, int, NodeInfo, list[Pod], int]] = []
        short = why_not_enough(tier, self.max_grace_seconds)
        bounds = self.evictable.quick_all(pod, candidates, tier)
        for i, ((info, cands), quick) in enumerate(zip(candidates, bounds, strict=True)):
            if quick is None:
                infeasible[info.name] = short
            else:
                heap.append((quick, i, info, cands, QUICK))
        heapq.heapify(heap)
        options: list[NodeOption] = []
        top: list[tuple] = []
        looked = 0
        pruning = prune and self.prune
        later: list[Later] = []  # put off (`best_of_later`)
        while heap:
            if give_up and not options:
                if looked == give_up:
                    return None
                looked += 1
            lb, i, info, pods, state = heapq.heappop(heap)
            if pruning and len(top) == 2 and lb > top[1]:
                for rest_lb, _, rest, _, _ in [(lb, i, info, pods, state), *heap]:
                    infeasible[rest.name] = CannotBeat(rest_lb, top[0])  # worded only if shown
                break
            if state == QUICK:
                eligible = self.evictable.eligible(info, pods, tier)
                k_min = min_victims(pod, info, eligible)
                if k_min is None:
                    infeasible[info.name] = why_not_enough(tier, self.max_grace_seconds)
                else:
                    bound = lowerbound_to(pod, info, eligible, k_min, tier, self.max_grace_seconds)
                    heapq.heappush(heap, (bound, i, info, eligible, REFINED))
                continue
            if pruning and len(top) == 2 and (tight := one_victim_bound(pod, info, pods, lb)) > top[1]:
                later.append((tight, lb, info, pods))  # it can be neither the best nor the runner-up
                continue
            opt = option(pod, cycle, info, pods, tier, nominated.get(info.name, ()))
            if isinstance(opt, str):
                infeasible[info.name] = opt
                continue
            options.append(opt)
            top = sorted([*top, opt.key])[:2]
        if later:
            def select(item: Later) -> NodeOption | str:
                return option(pod, cycle, item[2], item[3], tier, nominated.get(item[2].name, ()))

            first_out_of_later(best_of_later(later, options, infeasible, select), infeasible, select)
        return options

    def settled(self, candidates: list[tuple[NodeInfo, list[Pod]]], hazards: Sequence[AffinityTerm]) -> bool:
        """Whether no candidate node may have a tier-2 option where tier 3 has none (`unsettled`)."""
        return not self.unsettled(candidates, hazards, 2, first=True)

    def unsettled(self, candidates: list[tuple[NodeInfo, list[Pod]]], hazards: Sequence[AffinityTerm], tier: int,
                  first: bool = False) -> list[tuple[NodeInfo, list[Pod]]]:
        """The candidate nodes where `tier` (1 or 2) may have an option where tier 3 has none (`first`:
        the first of them). The tier evicts a subset of tier 3's pods, so only where tier 3 also takes
        off a pod one of the pod's required affinity terms (`hazards`) matches could it (tier 3 may
        leave it nothing to be near). The tier's eligible pods are found only where a candidate matches."""
        out: list[tuple[NodeInfo, list[Pod]]] = []
        if not hazards:
            return out
        labels = self.work.snapshot.namespace_labels
        if self._near is None or self._near[0] is not hazards or self._near[1] is not labels:
            self._near = (hazards, labels, {})
        found = self._near[2]
        # A term without a namespace selector matches pods of its own namespaces alone: where every
        # term is one, a candidate of another namespace is passed over without asking each term.
        spaces = None if any(t.namespace_selector is not None for t in hazards) else \
            frozenset().union(*(t.namespaces for t in hazards))
        for info, cands in candidates:
            hit = found.get(id(cands))
            if hit is not None and hit[0] is cands:
                near = hit[1]
            else:
                near = [p for p in cands if (spaces is None or p.metadata.namespace in spaces)
                        and any(t.matches(p, labels.get(p.namespace, NO_LABELS)) for t in hazards)]
                found[id(cands)] = (cands, near)
            if near:
                kept = set(map(id, self.evictable.eligible(info, cands, tier)))
                if any(id(p) not in kept for p in near):
                    out.append((info, cands))
                    if first:
                        break
        return out

    def no_tier_has_one(self, pod: Pod, cycle: CycleState, candidates: list[tuple[NodeInfo, list[Pod]]],
                        hazards: Sequence[AffinityTerm], nominated: dict[str, list[Pod]], option: OptionFinder,
                        reasons: dict[str, Reason]) -> bool:
        """Whether no tier has an option: tier 3 none (then `reasons` holds why, node by node, as its
        search says), nor tiers 1 and 2 on the nodes where they may have one tier 3 has not
        (`unsettled`) — found without their searches of every node."""
        return not self.any_option(pod, cycle, candidates, 3, nominated, option, reasons) and not any(
            self.any_option(pod, cycle, self.unsettled(candidates, hazards, t), t, nominated, option) for t in (1, 2))

    def any_option(self, pod: Pod, cycle: CycleState, candidates: list[tuple[NodeInfo, list[Pod]]], tier: int,
                   nominated: dict[str, list[Pod]], option: OptionFinder,
                   reasons: dict[str, Reason] | None = None) -> bool:
        """Whether `tier_options` of `tier` finds an option: a node has one where its quick bound and
        its fewest victims leave room and `option` finds one — the nodes in turn, to the first. Until
        then, `reasons` gets why each node has none, as `tier_options` words it."""
        quick_all, eligible_of = self.evictable.quick_all, self.evictable.eligible
        short = why_not_enough(tier, self.max_grace_seconds)
        why = reasons if reasons is not None else {}
        for info, cands in candidates:
            if quick_all(pod, [(info, cands)], tier)[0] is None:
                why[info.name] = short
                continue
            eligible = eligible_of(info, cands, tier)
            if min_victims(pod, info, eligible) is None:
                why[info.name] = short
                continue
            opt = option(pod, cycle, info, eligible, tier, nominated.get(info.name, ()))
            if not isinstance(opt, str):
                return True
            why[info.name] = opt
        return False

    def synced_index(self, indexes: dict[tuple[bytes, int], TierIndex], shape: bytes, tier: int, pod: Pod,
                     priority: int, statuses: dict[str, Status], nominated: dict[str, list[Pod]]) -> TierIndex:
        """The (shape, tier) index, brought up to date for `pod` (one of that shape; `statuses` its
        filter statuses): the nodes changed since it was last used are looked at again."""
        work = self.work
        ledger = work.ledger
        index = indexes.get((shape, tier))
        if index is None:  # every node where eviction may help, each with its quick bound
            index = indexes[(shape, tier)] = TierIndex()
            index.changes, index.ledger = len(work.changes), ledger.version
            by_node, candidates, unschedulable = self.evictable.by_node, self.evictable.candidates, Code.UNSCHEDULABLE
            for info in work.snapshot.node_infos:
                name = info.name
                st = statuses.get(name)
                if st is not None and st.code is unschedulable:
                    hit = by_node.get(id(info))  # `candidates`' kept answer, read here (every node)
                    cands = hit[4].get(priority) if hit is not None and hit[0] is info else None
                    index.entries[name] = Entry(info, cands if cands is not None else candidates(info, priority))
            entries = list(index.entries.values())
            for entry, key in zip(entries, self._first_keys(entries, pod, tier), strict=True):
                entry.key, entry.stamp = key, next(self.stamps)
                if key is not None:
                    index.heap.append((key, entry.info.name, entry.stamp))
            heapq.heapify(index.heap)
            return index
        changed = set(work.changes[index.changes:])
        if index.ledger != ledger.version:
            for key in ledger.changed_since(index.ledger):
                changed.update(index.budget_users.pop(key, ()))
        changed.update(self.nominated_by_node)  # what holds room there changes with every pod placed
        index.changes, index.ledger = len(work.changes), ledger.version
        for name in changed:
            self._refresh(index, name, pod, priority, tier, statuses, bool(nominated.get(name)))
        if len(index.heap) > 2 * len(index.entries) + 64:  # mostly stale items: start it afresh
            index.heap = [(e.key, n, e.stamp) for n, e in index.entries.items() if e.key is not None]
            heapq.heapify(index.heap)
        return index

    def _refresh(self, index: TierIndex, name: str, pod: Pod, priority: int, tier: int,
                 statuses: dict[str, Status], held: bool) -> None:
        """Node `name` as `pod` finds it now: out of the index unless its filter status is
        Unschedulable (eviction may help); else its candidates, and its kept option or reason while
        the NodeInfo and the budgets of its PDBs are the same (not while something nominated there
        holds room: then it is searched afresh, as `tier_options` does) or its quick bound."""
        info = self.work.snapshot.by_name.get(name)
        st = statuses.get(name)
        if info is None or st is None or st.code is not Code.UNSCHEDULABLE:
            index.entries.pop(name, None)
            return
        entry = index.entries.get(name)
        if entry is None or entry.info is not info:
            entry = index.entries[name] = Entry(info, self.evictable.candidates(info, priority))
            key = self._first_key(entry, pod, tier)
        elif not entry.cands:
            key = None
        else:
            if (entry.result is not None or entry.refined is not None) and entry.budgets \
                    and entry.budgets != self.evictable.budget_state(info):
                entry.result = entry.refined = None  # budgets only go down: it never holds again
            if not held and (entry.result is not None or entry.refined is not None):
                # A kept option or refined bound waits at its refined bound; a kept reason is out.
                key = entry.refined[0] if entry.refined is not None else None
            else:
                key = entry.quick if entry.quick is not None else self._first_key(entry, pod, tier)
        if key is not entry.key or entry.stamp == 0:  # (by identity: a kept bound may equal the quick one)
            entry.key, entry.stamp = key, next(self.stamps)
            if key is not None:
                heapq.heappush(index.heap, (key, name, entry.stamp))

    def indexed(self, index: TierIndex, pod: Pod, cycle: CycleState, tier: int, nominated: dict[str, list[Pod]],
                option: OptionFinder) -> tuple[list[NodeOption], Callable[[int], list[tuple[str, Reason]]]]:
        """`tier_options` over the index: its heap holds every node's quick bound, kept refined
        bound or kept option, and what the search finds of a node (a refined bound, an option, why
        there is none) is kept there — unless something nominated there holds room: then its
        refined bound goes into a heap of this search's own and nothing is kept. Returns the
        options, and a function giving the first `k` nodes by name that are out, with why."""
        heap, entries = index.heap, index.entries

        def select(item: Later) -> NodeOption | str:
            """The node's option, or why it has none, kept in the index unless something nominated
            there holds room (its item for the heap, with an option, into `back`)."""
            _, lb, info, eligible = item
            name = info.name
            held = nominated.get(name, ())
            opt = option(pod, cycle, info, eligible, tier, held)
            if not held:
                entry = entries[name]
                found = isinstance(opt, NodeOption)
                self._keep(index, name, entry, opt, (lb, eligible) if found else None)
                if found:
                    back.append((lb, name, entry.stamp))
            return opt

        mine: list[tuple[tuple, str, list[Pod]]] = []  # refined bounds, with the eligible pods
        options: list[NodeOption] = []
        top: list[tuple] = []
        back: list[tuple[tuple, str, int]] = []  # the index's items to put back once done
        refined: dict[str, tuple] = {}
        why: dict[str, str] = {}
        pruned = False
        later: list[Later] = []  # put off (`best_of_later`)
        while True:
            while heap and ((e := entries.get(heap[0][1])) is None or e.stamp != heap[0][2]):
                heapq.heappop(heap)  # stale: the node changed since
            if heap and (not mine or heap[0][0] < mine[0][0]):
                lb, name, stamp = heapq.heappop(heap)
                entry = entries[name]
                held = nominated.get(name, ())
                if self.prune and len(top) == 2 and lb > top[1]:
                    heapq.heappush(heap, (lb, name, stamp))
                    pruned = True
                    break
                if entry.key is not entry.quick and entry.result is not None:  # a kept option
                    back.append((lb, name, stamp))
                    assert isinstance(entry.result, NodeOption)
                    options.append(entry.result)
                    top = sorted([*top, entry.result.key])[:2]
                    continue
                if entry.key is not entry.quick:  # a kept refined bound: its turn to be selected
                    assert entry.refined is not None
                    back.append((lb, name, stamp))
                    heapq.heappush(mine, (lb, name, entry.refined[1]))
                    refined[name] = lb
                    continue
                eligible = self.evictable.eligible(entry.info, entry.cands, tier)
                k_min = min_victims(pod, entry.info, eligible)
                if k_min is None:
                    why[name] = reason = why_not_enough(tier, self.max_grace_seconds)
                    if not held:
                        self._keep(index, name, entry, reason)
                    else:
                        back.append((lb, name, stamp))
                    continue
                bound = lowerbound_to(pod, entry.info, eligible, k_min, tier, self.max_grace_seconds)
                if held:
                    back.append((lb, name, stamp))
                    heapq.heappush(mine, (bound, name, eligible))
                    refined[name] = bound
                else:  # kept, and back in the index's heap to compete with the rest
                    self._keep(index, name, entry, None, (bound, eligible))
                    heapq.heappush(heap, (bound, name, entry.stamp))
                continue
            if not mine:
                break
            lb, name, eligible = mine[0]
            if self.prune and len(top) == 2 and lb > top[1]:
                pruned = True
                break
            heapq.heappop(mine)
            refined.pop(name, None)
            entry = entries[name]
            if self.prune and len(top) == 2 and (tight := one_victim_bound(pod, entry.info, eligible, lb)) > top[1]:
                later.append((tight, lb, entry.info, eligible))  # it can be neither the best nor the runner-up
                if not nominated.get(name):  # (at its kept refined bound, its item in `back`; else nothing kept)
                    entry.put_off = True
                continue
            opt = select((lb, lb, entry.info, eligible))
            if isinstance(opt, str):
                why[name] = opt
                continue
            options.append(opt)
            top = sorted([*top, opt.key])[:2]
        rest = {item[2].name: item for item in best_of_later(later, options, why, select)} if later else {}

        def put_back() -> None:
            for item in back:
                if entries[item[1]].stamp == item[2]:
                    heapq.heappush(heap, item)
            back.clear()

        put_back()
        chosen = {o.node for o in options}
        best = top[0] if top else None

        def out(k: int) -> list[tuple[str, Reason]]:
            """The first `k` nodes by name that are out, with why: a node put off (by this search or,
            at its kept refined bound, an earlier one) has its victims selected here if it comes
            before the `k`-th — one put off by this search is out unless it has an option; one put
            off earlier and pruned now shows the reason it has none, or, with an option, that it
            cannot beat the best, as what a search that had selected them keeps would show."""
            found: list[tuple[str, Reason]] = []
            for info in self.work.snapshot.node_infos:
                name = info.name
                entry = entries.get(name)
                if entry is None or name in chosen:
                    continue
                reason: Reason
                if name in rest:
                    opt = select(rest.pop(name))
                    put_back()
                    if not isinstance(opt, str):
                        chosen.add(name)
                        continue
                    reason = opt
                elif name in why:
                    reason = why[name]
                elif not entry.cands:
                    reason = node_refusal(info.node) or NOTHING_EVICTABLE
                elif isinstance(entry.result, str) and entry.key is None:
                    reason = entry.result
                else:
                    assert pruned, name  # else every node in the heaps was looked at
                    assert best is not None
                    opt = None
                    if entry.put_off and entry.result is None and entry.refined is not None \
                            and not nominated.get(name):  # at its kept refined bound
                        opt = select((entry.refined[0], entry.refined[0], info, entry.refined[1]))
                        put_back()
                    reason = opt if isinstance(opt, str) else CannotBeat(refined.get(name, entry.key), best)
                found.append((name, reason))
                if len(found) == k:
                    break
            return found

        return options, out

    def _keep(self, index: TierIndex, name: str, entry: Entry, result: NodeOption | str | None,
              refined: tuple[tuple, list[Pod]] | None = None) -> None:
        """Keep what the search found of a node — its option (with the refined bound it was found
        at), why it has none, or its refined bound alone — and its eligible pods, valid while its
        NodeInfo and budgets are the same. Its heap key is the refined bound (none where it has no
        option): a search takes a kept option where `tier_options` would find it, so both return
        the same options."""
        entry.result, entry.refined, entry.put_off = result, refined, False
        entry.budgets = budgets = self.evictable.budget_state(entry.info)
        if budgets:
            for key in self.evictable.pdb_keys(entry.info):
                index.budget_users.setdefault(key, set()).add(name)
        entry.key = refined[0] if refined is not None else None
        entry.stamp = next(self.stamps)

    def _first_key(self, entry: Entry, pod: Pod, tier: int) -> tuple | None:
        """A new entry's heap key: its quick bound; None where nothing may be evicted, or where not
        even all the tier's candidates, budgets aside, make room (then that is its kept reason)."""
        return self._first_keys([entry], pod, tier)[0]

    def _first_keys(self, entries: list[Entry], pod: Pod, tier: int) -> list[tuple | None]:
        """`_first_key` of each of `entries`, their quick bounds found in one pass (`quick_all`: a new
        index asks it of every node)."""
        some = [e for e in entries if e.cands]
        short = why_not_enough(tier, self.max_grace_seconds)
        for entry, quick in zip(some, self.evictable.quick_all(pod, [(e.info, e.cands) for e in some], tier),
                                strict=True):
            entry.quick = quick
            if quick is None:
                entry.result, entry.budgets = short, ()
        return [e.quick if e.cands else None for e in entries]
