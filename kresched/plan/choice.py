"""How the planner chooses the node among the feasible ones, and how it knows, without simulating
a node, that the node cannot win.

Owns `option_key`: kube-scheduler's `pickOneNodeForPreemption` with seed 000's criteria (`CRITERIA`,
the order `kresched.plan.planner`'s docstring gives), and the words for why a node lost
(`lost_because`, `cannot_beat`). Beside the rule, what bounds it (each exact against it; tests/plan/
test_properties.py holds them to it): per node, its evictable pods in the preemption order with
suffix sums (`Suffixes`, `Pool`, `PdbView`), the fewest victims that can free what the pod lacks
(`min_victims`) and the lower bounds of its key (`quickbound_to`, `lowerbound_to`, and
`one_victim_bound`, which tests/plan/test_put_off.py holds to it); per tier and pod shape, the
candidate nodes the branch and bound keeps across pods (`TierIndex`, `Entry`).
Pure: no I/O, no clock.
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter, mul
from typing import NamedTuple

from kresched.model.objects import Pod, start_text
from kresched.model.resources import Resources
from kresched.plan.pdb import NO_PDB, PdbLedger
from kresched.plan.plans import CRITERIA, NodeOption, Victim
from kresched.sched.node_info import NodeInfo

#: `math.MaxInt32 + 1`: what each victim adds to the priority sum, so that every term is ≥ 0.
PRIORITY_OFFSET = 2**31


def option_key(victims: Sequence[Victim], info: NodeInfo) -> tuple:
    """The node-choice key, compared lexicographically (smaller wins); see `CRITERIA`."""
    alloc = info.node.allocatable
    share = 0.0
    for v in victims:
        r = v.pod.requests
        if alloc.milli_cpu:
            share += r.milli_cpu / alloc.milli_cpu
        if alloc.memory:
            share += r.memory / alloc.memory
    highest = max((v.pod.effective_priority for v in victims), default=0)
    earliest = min((v.pod.start_seconds for v in victims if v.pod.effective_priority == highest), default=-math.inf)
    return (
        sum(1 for v in victims if v.pdb.violation),
        sum(1 for v in victims if v.grace_shortened),
        highest,
        sum(v.pod.effective_priority + PRIORITY_OFFSET for v in victims),
        len(victims),
        -earliest,
        round(share, 9),
        0 if all(not v.is_bare for v in victims) else 1,
        info.name,
    )


def pdb_violations(victims: Sequence[Victim]) -> int:
    return sum(1 for v in victims if v.pdb.violation)


def requests_share_short(pod: Pod, info: NodeInfo) -> float:
    """What P lacks on the node, as a share of its allocatable cpu plus memory: victims must free
    at least that, so their requests share is no smaller."""
    alloc = info.node.allocatable
    req = pod.requests
    share = 0.0
    if alloc.milli_cpu:
        share += max(0, req.milli_cpu - (alloc.milli_cpu - info.requested_milli_cpu)) / alloc.milli_cpu
    if alloc.memory:
        share += max(0, req.memory - (alloc.memory - info.requested_memory)) / alloc.memory
    return max(0.0, round(share, 9) - 1e-9)


QUICK, REFINED = 0, 1

NOTHING_EVICTABLE = ("no pod here may be evicted for it (none of lower priority that is not DaemonSet, mirror, "
                      "terminating or critical)")


class Entry:
    """A candidate node of a `TierIndex`: its NodeInfo and candidates (empty: nothing may be
    evicted), its quick bound, what a search found (`result`, an option or why there is none; or
    `refined`, its refined bound and eligible pods) with the budgets it saw, and its heap item's
    key and `stamp` (key None: not in the heap); `put_off`: a search put off selecting its victims
    at its kept refined bound (`search.best_of_later`), so that what it has is not known yet."""

    __slots__ = ("budgets", "cands", "info", "key", "put_off", "quick", "refined", "result", "stamp")

    def __init__(self, info: NodeInfo, cands: list[Pod]) -> None:
        self.info = info
        self.cands = cands
        self.quick: tuple | None = None
        self.result: NodeOption | str | None = None
        #: The refined bound and the tier's eligible pods, while no option is found yet, and the
        #: refined bound a kept option was found at (where it waits in the heap).
        self.refined: tuple[tuple, list[Pod]] | None = None
        self.budgets: tuple[int, ...] = ()
        self.key: tuple | None = None
        self.stamp = 0
        self.put_off = False


class TierIndex:
    """What the branch and bound of one tier knows of the nodes for pods of one fit shape: every
    node where eviction may help (`entries`, by name), a heap of their keys (items `(key, name,
    stamp)`, stale when the stamp is not the entry's), where it stopped in the working snapshot's
    change log and the ledger's, and which nodes a PDB's budget concerns (`budget_users`)."""

    __slots__ = ("budget_users", "changes", "entries", "heap", "ledger")

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.heap: list[tuple[tuple, str, int]] = []
        self.changes = 0
        self.ledger = 0
        self.budget_users: dict[str, set[str]] = {}


class Pool(NamedTuple):
    """Some of a node's evictable pods (all of them, or those within the grace limit), most
    important first — so the candidates for any priority are a suffix, from position `cut` on —
    summed up once for `quickbound_to`, for every suffix: the lowest priority and the latest start
    among pods of it (the same in every suffix: its pods are in all of them); the positions of its
    pods by cpu and by memory request, largest first, and each position's requests (`cpus`,
    `memories`: the node's columns, which this pool reads only at its own positions); and the
    totals and count from `cut` on (lists indexed by `cut`, one past the last pod included)."""
    lowest: int
    latest: float
    by_cpu: list[int]
    by_memory: list[int]
    cpus: list[int]
    memories: list[int]
    cpu: list[int]
    memory: list[int]
    count: list[int]

    @classmethod
    def of(cls, ranked: list[Pod], cpus: list[int], memories: list[int], keep: list[bool] | None) -> Pool:
        """The pool of the pods of `ranked` that `keep` marks (None: all of them; positions are
        `ranked`'s), whose requests are `cpus` and `memories`. The sums from every position on are
        the running totals of the columns reversed (in C: this runs for every node)."""
        n = len(ranked)
        at: Sequence[int]
        if keep is None:
            pods, count, at = ranked, list(range(n, -1, -1)), range(n)
            cpu, memory = suffix_sums(cpus), suffix_sums(memories)
        else:
            pods, count = list(itertools.compress(ranked, keep)), suffix_sums(keep)
            at = list(itertools.compress(range(n), keep))
            cpu, memory = suffix_sums(list(map(mul, cpus, keep))), suffix_sums(list(map(mul, memories, keep)))
        # (Positions of equal requests in either order: `fewest` counts the same.)
        by_cpu = sorted(at, key=cpus.__getitem__, reverse=True)
        by_memory = sorted(at, key=memories.__getitem__, reverse=True)
        lowest, latest = (pods[-1].effective_priority, latest_start_of_lowest(pods)) if pods else (0, 0.0)
        return cls(lowest, latest, by_cpu, by_memory, cpus, memories, cpu, memory, count)


def suffix_sums(column: Sequence[int]) -> list[int]:
    """`[sum(column[i:]) for i in range(len(column) + 1)]`, in one pass."""
    out = list(itertools.accumulate(reversed(column), initial=0))
    out.reverse()
    return out


class PdbView(NamedTuple):
    """What the eviction API makes of a node's evictable pods (`ranked`) whatever the budgets
    (`PdbLedger.kind`): the PDBs covering any of them (`keys`); per tier (1, 2), the positions of
    those it lets go while their PDB has a disruption left (tier 1: only those within the grace
    limit), and those pods; and the pods among them that spend a budget, with its PDB. A tier's
    eligible pods (`EvictablePods.eligible`) are its `fixed` ones but the spenders whose budget is spent."""
    keys: tuple[str, ...]
    fixed: tuple[list[int], list[int]]
    fixed_pods: tuple[list[Pod], list[Pod]]
    spenders: tuple[tuple[int, str], ...]

    @classmethod
    def of(cls, ranked: list[Pod], ledger: PdbLedger, max_grace: int) -> PdbView:
        kinds = ledger.kinds(ranked)
        gangs = ledger.gang_members(ranked)
        ok = [p.grace_seconds <= max_grace for p in ranked]
        if kinds.count(NO_PDB) == len(kinds) and gangs.count(None) == len(gangs):  # no budget covers any of them
            every = list(range(len(ranked)))
            within = every if all(ok) else list(itertools.compress(every, ok))
            return cls((), (within, every), ([ranked[i] for i in within], ranked), ())
        keys: set[str] = set()
        fixed: tuple[list[int], list[int]] = ([], [])
        spenders: list[tuple[int, str]] = []
        for i, g in enumerate(gangs):
            if g is not None:  # a running gang's member spends the gang's budget (a PDB's beside)
                keys.add(g)
                spenders.append((i, g))
        for i, (pdb, kind) in enumerate(kinds):
            if pdb is not None:
                if kind == "spends":  # (one PDB covers it)
                    keys.add(pdb)
                    spenders.append((i, pdb))
                else:
                    keys.update(ledger.covering(ranked[i]))
                    if kind == "refused":
                        continue
            fixed[1].append(i)
            if ok[i]:
                fixed[0].append(i)
        return cls(tuple(sorted(keys)), fixed, ([ranked[i] for i in fixed[0]], [ranked[i] for i in fixed[1]]),
                   tuple(spenders))


class Suffixes(NamedTuple):
    """A node's evictable pods summed up for `quickbound_to`: every one (`all`), and those whose
    grace period is within the limit (`ok`, what tier 1 may evict)."""
    all: Pool
    ok: Pool

    @classmethod
    def of(cls, ranked: list[Pod], cpus: list[int], memories: list[int], ok: list[bool]) -> Suffixes:
        """The pools of a node's ranked evictable pods, given each one's cpu and memory requests and
        whether its grace period is within the limit (`evictable.Ranking`'s columns)."""
        every = Pool.of(ranked, cpus, memories, None)
        return cls(every, every if all(ok) else Pool.of(ranked, cpus, memories, ok))


def fewest(by_size: list[int], sizes: list[int], cut: int, short: int) -> int:
    """How many of the pods from position `cut` on, the largest first (`by_size`: positions, by
    their `sizes`), it takes for their sizes to reach `short` (> 0, no more than their total)."""
    got = k = 0
    for pos in by_size:
        if pos >= cut:
            got += sizes[pos]
            k += 1
            if got >= short:
                return k
    return k


def quickbound_to(pod: Pod, info: NodeInfo, sfx: Suffixes, cut: int, tier: int) -> tuple | None:
    """A bound of `option_key` valid for any victims among the node's candidates the tier may evict
    (its evictable pods from `cut` on, `sfx`; in tier 1 only those within the grace limit), in
    O(victims): no lower a highest priority than the lowest of theirs; at least `k`
    victims, where `k` is the fewest of them whose cpu requests cover what P lacks of it on the
    node (the largest first, as `min_victims` counts), the same for memory, and the pod slots it
    lacks; a priority sum no lower than `k` victims of the lowest priority (every term is ≥ 0);
    and no earlier a start of the most important victims than the latest start among the pods of
    the lowest priority (see `lowerbound_to`: where the key ties up to the victims' count, they
    all have the lowest priority). In tiers 2 and 3, at least one grace period shortened where the
    pods within the limit, all evicted, would not make room (tier 1 evicts no other). None where
    not even all those candidates, all evicted, make room for P's cpu, memory or pod slot (then no
    victims of the tier do: `min_victims` finds the same, with the budgets)."""
    pool = sfx.ok if tier == 1 else sfx.all
    n = pool.count[cut]
    if tier == 1 and not n:
        return None  # no candidate within the grace limit
    alloc = info.node.allocatable
    req = pod.requests
    k = 1
    shortened = False
    short = req.milli_cpu - (alloc.milli_cpu - info.requested_milli_cpu)
    if short > 0:
        if short > pool.cpu[cut]:
            return None
        k = max(k, fewest(pool.by_cpu, pool.cpus, cut, short))
        shortened = short > sfx.ok.cpu[cut]
    short = req.memory - (alloc.memory - info.requested_memory)
    if short > 0:
        if short > pool.memory[cut]:
            return None
        k = max(k, fewest(pool.by_memory, pool.memories, cut, short))
        shortened |= short > sfx.ok.memory[cut]
    if alloc.allowed_pods:
        over = len(info.pods) + 1 - alloc.allowed_pods
        if over > n:
            return None
        k = max(k, over)
        shortened |= over > sfx.ok.count[cut]
    lowest = pool.lowest
    return (0, int(shortened) if tier > 1 else 0, lowest, k * (lowest + PRIORITY_OFFSET), k, -pool.latest,
            requests_share_short(pod, info), 0, info.name)


def lowerbound_to(pod: Pod, info: NodeInfo, eligible: list[Pod], k_min: int, tier: int, max_grace: int) -> tuple:
    """A key no victim set on this node can beat (component by component, so lexicographically):
    no fewer than 0 violations; no fewer shortened graces than `min_shortened`; a highest priority
    no lower than the lowest eligible one; a priority sum no lower than that of the `k_min` lowest
    (every offset term is ≥ 0, so more victims never lower it); at least `k_min` victims; any start
    time; a requests share no smaller than what P lacks on the node.

    The start: where a victim set's key equals this bound up to the victims' count, all its
    victims have the lowest eligible priority (its highest is that, its sum the least), so its most
    important victims' earliest start is no later than the latest start among the eligible pods of
    that priority: the bound's `-start` component is that one's."""
    prios = sorted(p.effective_priority for p in eligible)
    low = sum(prios[:k_min]) + k_min * PRIORITY_OFFSET
    shortened = min_shortened(pod, info, eligible, max_grace) if tier > 1 else 0
    return (0, shortened, prios[0], low, k_min, -latest_start_of_lowest(eligible), requests_share_short(pod, info),
            0, info.name)


def min_shortened(pod: Pod, info: NodeInfo, eligible: list[Pod], max_grace: int) -> int:
    """A lower bound on how many victims among `eligible` have a grace period above `max_grace`
    (each one's is shortened): what the others cannot free even all evicted, the fewest of those
    pods must (`min_victims` with the others gone first). In tier 1 there are none; in tiers 2 and
    3, on the nodes where tier 1 found nothing, at least one, so the search does not select victims
    on every node before one with fewer shortened graces is ruled out."""
    long = [p for p in eligible if p.grace_seconds > max_grace]
    if not long:
        return 0
    return min_victims(pod, info, long, [p for p in eligible if p.grace_seconds <= max_grace], least=0) or 0


def latest_start_of_lowest(pods: Sequence[Pod]) -> float:
    """The latest start (`start_seconds`) among `pods` (in preemption order) of their lowest priority."""
    return max(map(_START_SECONDS, lowest_of(pods)))


def lowest_of(pods: Sequence[Pod]) -> Sequence[Pod]:
    """The pods of the lowest priority among `pods` (in preemption order: priority descending, so
    they are a suffix)."""
    return pods[bisect_left(pods, -pods[-1].effective_priority, key=negated_priority):]


_START_SECONDS: Callable[[Pod], float] = attrgetter("start_seconds")


def negated_priority(pod: Pod) -> int:
    return -pod.effective_priority


_MILLI_CPU: Callable[[Resources], int] = attrgetter("milli_cpu")
_MEMORY: Callable[[Resources], int] = attrgetter("memory")
_EPHEMERAL_STORAGE: Callable[[Resources], int] = attrgetter("ephemeral_storage")


def min_victims(pod: Pod, info: NodeInfo, eligible: list[Pod], gone: Sequence[Pod] = (),
                 least: int = 1) -> int | None:
    """A lower bound (at least `least`) on how many of `eligible` must go for P's requests to fit,
    `gone` (other pods of the node) evicted too; None when even all of them are not enough (then no
    victim set on this node can work)."""
    if not eligible:
        return None
    alloc = info.node.allocatable
    need = least
    requests: list[Resources] | None = None
    for want, free, get in _requests_and_room(pod, info):
        if want <= 0:
            continue
        if gone:
            free += sum(map(get, [p.requests for p in gone]))
        if want <= free:
            continue
        if requests is None:
            requests = [p.requests for p in eligible]
        sizes = sorted(map(get, requests), reverse=True)
        gained, count = 0, 0
        for s in sizes:
            if free + gained >= want or s <= 0:
                break
            gained += s
            count += 1
        if free + gained < want:
            return None
        need = max(need, count)
    if alloc.allowed_pods and len(info.pods) - len(gone) + 1 > alloc.allowed_pods:
        over = len(info.pods) - len(gone) + 1 - alloc.allowed_pods
        if over > len(eligible):
            return None
        need = max(need, over)
    return need


def _requests_and_room(pod: Pod, info: NodeInfo) -> list[tuple[int, int, Callable[[Resources], int]]]:
    """Per resource NodeResourcesFit weighs (cpu, memory, ephemeral storage, each extended one):
    what P requests, what the node has left of it, and how to read it from a pod's requests."""
    alloc = info.node.allocatable
    req = pod.requests
    out: list[tuple[int, int, Callable[[Resources], int]]] = [
        (req.milli_cpu, alloc.milli_cpu - info.requested_milli_cpu, _MILLI_CPU),
        (req.memory, alloc.memory - info.requested_memory, _MEMORY),
        (req.ephemeral_storage, alloc.ephemeral_storage - info.requested_ephemeral_storage, _EPHEMERAL_STORAGE),
    ]
    for name, amount in req.scalar.items():
        out.append((amount, alloc.scalar.get(name, 0) - info.requested_scalar.get(name, 0),
                    lambda r, n=name: r.scalar.get(n, 0)))
    return out


def one_victim_bound(pod: Pod, info: NodeInfo, eligible: list[Pod], bound: tuple) -> tuple:
    """`bound` (`lowerbound_to`'s for these eligible pods), raised where it counts one victim: a
    victim set whose key equals it up to the victims' count is then one pod of the lowest eligible
    priority that alone makes room for P's requests (as `min_victims` weighs them), so its start is
    no later than the latest among those pods — and where no such pod makes room alone, no set
    ties the bound that far, and any start bounds the key (the component is +inf). Tighter than
    `lowerbound_to`, which takes the latest start among every pod of that priority; the search
    uses it to put off selecting victims on a node that cannot be among the options shown."""
    if bound[_COUNT] != 1:
        return bound
    lacking = [(want - free, get) for want, free, get in _requests_and_room(pod, info) if want > 0 and want > free]
    latest = -math.inf
    for p in lowest_of(eligible):
        if p.start_seconds > latest and all(get(p.requests) >= short for short, get in lacking):
            latest = p.start_seconds
    return (*bound[:_START], -latest, *bound[_START + 1:])


def why_not_enough(tier: int, max_grace: int) -> str:
    """Why the tier ruled the node out, in words a newcomer follows (`plan --help` says what the tiers are)."""
    if tier == 1:
        return (f"tier 1 evicts only pods that stop within {max_grace}s and whose PDB allows it: those here hold "
                "too little (a node where they do is chosen first)")
    if tier == 2:
        return "tier 2 evicts only pods whose PDB allows it: those here hold too little"
    return "even evicting every lower-priority pod here frees too little"


def lost_because(option: NodeOption, best: NodeOption, winner_view: bool = False) -> str:
    for i, (a, b) in enumerate(zip(option.key, best.key, strict=True)):
        if a != b:
            name, better = CRITERIA[i]
            if i == _NAME:  # a tie on everything the choice weighs: only the name is left
                if winner_view:
                    return (f"it ties with {option.node} on every criterion and comes first by name (the scheduler "
                            "may take either)")
                return f"it ties with {best.node} on every criterion; {best.node} comes first by name"
            counted = i == _SUM and option.key[_COUNT] != best.key[_COUNT]
            if winner_view:
                won = best.key[_COUNT]
                return f"{better} than {option.node}" + (
                    f" (2^31 a victim: {won} victim{'' if won == 1 else 's'} against {option.key[_COUNT]})"
                    if counted else "")
            return f"{name}: {fmt_component(i, option.key, best.key)} vs {fmt_component(i, best.key, option.key)} " \
                   f"on {best.node}"
    return "identical"


@dataclass(frozen=True, slots=True)
class CannotBeat:
    """A pruned node's reason, worded by `str()` only for the few runner-ups shown."""

    lower_bound: tuple
    best: tuple

    def __str__(self) -> str:
        return cannot_beat(self.lower_bound, self.best)


#: Why a node is not chosen: words, or a pruned node's bound, worded when shown.
Reason = str | CannotBeat


def cannot_beat(lower_bound: tuple, best: tuple) -> str:
    """Why a node pruned by its lower bound loses: the first criterion where even its best case is
    worse than the chosen node (an earlier one may be worse still)."""
    for i, (a, b) in enumerate(zip(lower_bound, best, strict=True)):
        if a != b:
            if i == _START:  # no bound on start times: "at least" has no value to show
                return f"{CRITERIA[i][0]}: no later than on {best[-1]}"
            if i == _NAME:
                return f"at best it ties with {best[-1]} on every criterion; {best[-1]} comes first by name"
            at_least, chosen = fmt_component(i, lower_bound, best), fmt_component(i, best, lower_bound)
            return f"{CRITERIA[i][0]}: at least {at_least} vs {chosen} on {best[-1]}"
    return "identical"


#: Positions in `option_key` worded specially: the offset priority sum and the negated start time.
_SUM, _COUNT, _START = 3, 4, 5
#: The last component: the node's name, kresched's tie-break (upstream's is the candidates' order).
_NAME = len(CRITERIA) - 1


def fmt_component(i: int, key: tuple, other: tuple) -> str:
    """Component `i` of an option key, as operators read it beside the same of `other`. The priority
    sum is the victims' own where both have as many victims; else with the 2^31 each victim adds
    (what decides: the raw sums alone could read backwards)."""
    x = key[i]
    if i == _SUM:
        raw = x - key[_COUNT] * PRIORITY_OFFSET
        return str(raw) if key[_COUNT] == other[_COUNT] else f"{raw} + {key[_COUNT]}×2^31"
    if i == _START:
        return "not started" if x == -math.inf else f"started {start_text(-x)}"
    return f"{x:.2f}" if isinstance(x, float) else str(x)
