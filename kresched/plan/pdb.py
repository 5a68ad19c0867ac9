"""PodDisruptionBudget accounting, as the eviction API (pkg/registry/core/pod/storage/eviction.go)
and the disruption controller do it.

Owns: which PDBs cover a pod for the eviction API (`getPodDisruptionBudgets`: same namespace,
selector matches; a nil *or empty* selector covers nothing — "If a PDB with a nil or empty
selector creeps in, it should match nothing, not everything", even though the disruption
controller counts every pod of the namespace for an empty policy/v1 selector), each PDB's budget
(`status.disruptionsAllowed`, or computed as the disruption controller would when a snapshot has
no status, `computed_status`), and what one eviction would do to it (`PdbLedger.check`): allowed
and spending one unit, allowed for free (terminal/pending/terminating pods — `canIgnorePDB`;
unhealthy pods under `unhealthyPodEvictionPolicy`; pods already in `disruptedPods`), refused
with 429 (budget spent) or 403 (negative budget), or refused with 500 (the pod is covered by more
than one PDB, which the eviction subresource does not support). Pure.

Gangs (`kresched.model.gangs`) are budgets too, kept beside the PDBs under their own keys
(`gang_key`): a gang's budget is its running members less its minCount (none under
`disruptionMode: PodGroup`), and an eviction past it stops the whole gang. The eviction API does
not refuse it (`PdbCheck.allowed` stays true); kresched counts it as a violation for the tiers and
the choice (`PdbCheck.stops_gang`), as it counts a PDB's (design: "Gangs").

Deliberate differences from eviction.go: a pod already in `status.disruptedPods` spends nothing
(as the scheduler's `filterPodsWithPDBViolation` and the design say: its eviction was approved
and counted; the API itself would decrement again if it were evicted a second time before
terminating); `status.observedGeneration < metadata.generation` (429 until the controller
catches up) is not modelled.
"""

from __future__ import annotations

from collections import ChainMap, defaultdict
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter

from kresched.model.cluster import ClusterState
from kresched.model.gangs import Gang, declared_group
from kresched.model.objects import Pod, PodDisruptionBudget
from kresched.model.selectors import label_selector_matches
from kresched.model.specs import LabelSelector

__all__ = ["NO_PDB", "PdbCheck", "PdbLedger", "computed_status", "gang_key"]


def gang_key(gang: Gang) -> str:
    """A gang's key among the ledger's budgets: `Gang.key` (`PodGroup ns/name`), never a PDB's
    (`ns/name`, without a space)."""
    return gang.key


@dataclass(frozen=True, slots=True)
class PdbCheck:
    """What evicting one pod does to its budget, given the budgets left at that point."""

    pdb: str | None = None
    #: Budget left on `pdb` before this eviction (None when no PDB covers the pod).
    remaining: int | None = None
    spends: bool = False
    allowed: bool = True
    reason: str | None = None
    #: The running gang the pod is a member of (its `Gang.key`), and whether evicting it takes the
    #: gang below its minCount (or disrupts a `PodGroup`-mode group): the whole gang stops. Its
    #: running members and minCount, for what a plan says of it.
    gang: str | None = None
    stops_gang: bool = False
    gang_running: int = 0
    gang_min_count: int = 0

    @property
    def violation(self) -> bool:
        return not self.allowed or self.stops_gang


@dataclass(frozen=True, slots=True)
class _Budget:
    pdb: PodDisruptionBudget
    allowed: int
    desired_healthy: int
    current_healthy: int


def computed_status(pdb: PodDisruptionBudget, matching: Sequence[Pod]) -> tuple[int, int, int, int]:
    """(disruptionsAllowed, currentHealthy, desiredHealthy, expectedPods) as the disruption
    controller computes them (`getExpectedPodCount`, `countHealthyPods`, `updatePdbStatus`).

    `matching` is every pod the selector matches, whatever its state. expectedPods: for an integer
    `minAvailable`, the number of matching pods; for `maxUnavailable` and a percentage
    `minAvailable`, the controllers' scale (`getExpectedScale`), which kresched does not read and
    takes as the number of live controller-managed matching pods — bare pods are "unmanaged" and
    count for nothing there. With neither field set (policy/v1 has no default) nothing is expected
    and nothing desired. currentHealthy: matching pods not being deleted and Ready. The budget is
    currentHealthy - desiredHealthy, and 0 when that is negative or no pod is expected.
    """
    healthy = sum(1 for p in matching if not p.is_terminating and p.is_ready)
    spec = pdb.spec
    scale = sum(1 for p in matching if not p.is_terminating and not p.is_finished and not p.is_bare)
    if spec.max_unavailable is not None:
        expected = scale
        desired = max(0, expected - _scaled(spec.max_unavailable, expected))
    elif spec.min_available is not None:
        if isinstance(spec.min_available, int):
            expected = len(matching)
            desired = spec.min_available
        else:
            expected = scale
            desired = _scaled(spec.min_available, expected)
    else:
        expected = desired = 0
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    return allowed, healthy, desired, expected


def _is_empty(selector: LabelSelector | None) -> bool:
    """`selector.Empty()` after `LabelSelectorAsSelector`: nil, or no requirement at all."""
    return selector is None or (not selector.match_labels and not selector.match_expressions)


def _scaled(value: int | str, total: int) -> int:
    """`intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)`."""
    if isinstance(value, int):
        return value
    return -(-int(value[:-1]) * total // 100)


#: Per namespace (`PdbLedger._index`): its PDBs by their first `matchLabels` pair, those with
#: only `matchExpressions`, those selecting by that pair alone, the pairs' one key (or None), and
#: with that one key and no PDB to scan, each value's covering PDBs where that value settles it
#: (None where they must be checked; a value absent covers nothing).
_LabelIndex = tuple[dict[tuple[str, str], list[int]], list[int], frozenset[int], str | None,
                    dict[str, tuple[str, ...] | None] | None]


_KEY = attrgetter("key")

#: `PdbLedger.kind` of a pod no PDB covers (one object: compare with `is`).
NO_PDB: tuple[str | None, str] = (None, "none")


class PdbLedger:
    """The budgets of every PDB, and their remaining units as a plan spends them.

    `remaining` is the only mutable state.
    """

    def __init__(self, state: ClusterState) -> None:
        by_ns: defaultdict[str, list[PodDisruptionBudget]] = defaultdict(list)
        for pdb in state.pdbs:
            by_ns[pdb.namespace].append(pdb)
        self._by_ns = dict(by_ns)
        self._label_index: dict[str, _LabelIndex] = {}
        self._kinds: dict[str, tuple[str | None, str]] = {}
        budgets: dict[str, _Budget] = {}
        pods_by_ns: defaultdict[str, list[Pod]] = defaultdict(list)
        if any(p.status is None for p in state.pdbs):
            for pod in state.pods:
                if pod.namespace in self._by_ns:
                    pods_by_ns[pod.namespace].append(pod)
        for pdb in state.pdbs:
            st = pdb.status
            if st is None:
                matching = [p for p in pods_by_ns.get(pdb.namespace, ()) if label_selector_matches(pdb.spec.selector,
                                                                                                    p.labels)]
                allowed, healthy, desired, _ = computed_status(pdb, matching)
                budgets[pdb.key] = _Budget(pdb, allowed, desired, healthy)
            else:
                budgets[pdb.key] = _Budget(pdb, st.disruptions_allowed, st.desired_healthy, st.current_healthy)
        self._budgets = budgets
        self.remaining: dict[str, int] = {k: b.allowed for k, b in budgets.items()}
        #: How many times `commit` changed `remaining` (what depends on budgets can be kept until then).
        self.version = 0
        #: The PDB each of those changes spent from, in order (`changed_since`).
        self._log: list[str] = []
        self._state = state
        #: Pod key → the key of the running gang it is a member of (None: none), found on first ask.
        self._gang_of: dict[str, str | None] = {}
        #: Gang key → the gang.
        self.gangs: dict[str, Gang] = {}


    def covering(self, pod: Pod) -> tuple[str, ...]:
        """Keys of the PDBs the eviction API finds for the pod: same namespace, a non-empty selector
        that matches its labels (in the namespace's PDB order)."""
        namespace = pod.metadata.namespace
        if namespace not in self._by_ns:  # (most namespaces have no PDB)
            return ()
        by_label, scan, whole, one_key, direct = self._label_index.get(namespace) or self._index(namespace)
        labels = pod.metadata.labels
        if direct is not None:  # (one key, nothing to scan) the pod's value of the key finds them
            value = labels.get(one_key)  # type: ignore[arg-type]
            if value is None:
                return ()
            hit = direct.get(value, ())
            if hit is not None:
                return hit
            maybe = list(by_label[(one_key, value)])  # type: ignore[index]
        elif one_key is not None:
            value = labels.get(one_key)
            maybe = list(by_label.get((one_key, value), ())) if value is not None else []
        else:
            # A namespace has a few PDBs and a pod many labels: look the PDBs' pairs up in the labels.
            maybe = [i for (k, v), found in by_label.items() if labels.get(k) == v for i in found]
        if scan:
            maybe += scan
        if not maybe:
            return ()
        pdbs = self._by_ns[namespace]
        if len(maybe) == 1 and maybe[0] in whole:  # the one pair of its selector matched
            return (pdbs[maybe[0]].key,)
        return tuple(pdbs[i].key for i in sorted(set(maybe)) if label_selector_matches(pdbs[i].spec.selector, labels))

    def _index(self, namespace: str) -> _LabelIndex:
        """The namespace's PDBs (by position) under one `matchLabels` pair each — a pod lacking that
        label cannot match — and those with only `matchExpressions`, which must be checked; the
        PDBs whose selector is that one pair alone (a pod with it is selected, nothing to check);
        the key of those pairs when they all have the same one (`app`, most often); and then, when
        no PDB must be scanned, the PDBs each value of that key finds when all of them select by
        that pair alone."""
        hit = self._label_index.get(namespace)
        if hit is None:
            by_label: dict[tuple[str, str], list[int]] = {}
            scan: list[int] = []
            whole: set[int] = set()
            pdbs = self._by_ns[namespace]  # (`covering` asks only of namespaces with PDBs)
            for i, b in enumerate(pdbs):
                sel = b.spec.selector
                if _is_empty(sel):
                    continue
                assert sel is not None
                if sel.match_labels:
                    by_label.setdefault(min(sel.match_labels.items()), []).append(i)
                    if len(sel.match_labels) == 1 and not sel.match_expressions:
                        whole.add(i)
                else:
                    scan.append(i)
            keys = {k for k, _ in by_label}
            one_key = next(iter(keys)) if len(keys) == 1 else None
            direct = None if one_key is None or scan else {
                v: tuple(pdbs[i].key for i in found) if whole.issuperset(found) else None
                for (_, v), found in by_label.items()}
            hit = self._label_index[namespace] = (by_label, scan, frozenset(whole), one_key, direct)
        return hit

    def budget(self, key: str) -> int:
        b = self._budgets.get(key)
        return b.allowed if b is not None else self.gangs[key].budget

    def gang(self, pod: Pod) -> str | None:
        """The key of the running gang `pod` is a running member of (None: none). A pod that
        declares no group costs one lookup; the cluster's gangs are indexed on the first that does."""
        key = pod.key
        if key in self._gang_of:
            return self._gang_of[key]
        out = None
        if declared_group(pod) is not None and pod.spec.node_name and not pod.is_terminating:
            g = self._state.gangs.gang_of(pod)
            if g is not None:
                out = gang_key(g)
                if out not in self.gangs:
                    self.gangs[out] = g
                    self.remaining[out] = g.budget
        self._gang_of[key] = out
        return out

    def gang_members(self, pods: Sequence[Pod]) -> list[str | None]:
        """`gang` of each of `pods`."""
        return [self.gang(p) for p in pods]

    def kind(self, pod: Pod) -> tuple[str | None, str]:
        """What the eviction API does with `pod` whatever the budgets say: (first covering PDB,
        "none" | "free" | "refused" | "spends"). Depends on the pod only, so it is memoised."""
        key = pod.key
        hit = self._kinds.get(key)
        if hit is not None:
            return hit
        keys = self.covering(pod)
        if not keys:
            kind: tuple[str | None, str] = NO_PDB
        elif pod.status.phase in ("Succeeded", "Failed", "Pending") or pod.metadata.deletion_timestamp is not None:
            kind = (keys[0], "free")  # canIgnorePDB: no budget is checked
        elif len(keys) > 1:
            kind = (keys[0], "refused")
        else:
            b = self._budgets[keys[0]]
            st = b.pdb.status
            if st is not None and pod.metadata.name in st.disrupted_pods:
                kind = (keys[0], "free")  # already counted by the API server
            elif ((b.pdb.spec.unhealthy_pod_eviction_policy == "AlwaysAllow"
                   or b.current_healthy >= b.desired_healthy > 0) and not pod.is_ready):
                kind = (keys[0], "free")  # an unhealthy pod the policy lets go
            else:
                kind = (keys[0], "spends")
        self._kinds[key] = kind
        return kind

    def kinds(self, pods: Sequence[Pod]) -> list[tuple[str | None, str]]:
        """`kind` of each of `pods` (the memo read in one pass)."""
        out = list(map(self._kinds.get, map(_KEY, pods)))
        if None in out:
            for i, hit in enumerate(out):
                if hit is None:
                    out[i] = self.kind(pods[i])
        return out  # type: ignore[return-value]

    def would_violate(self, pod: Pod, remaining: Mapping[str, int] | None = None) -> bool:
        """`check(pod, remaining).violation`, without building the check."""
        remaining = self.remaining if remaining is None else remaining
        key, kind = self.kind(pod)
        if kind == "refused" or (kind == "spends" and remaining.get(key or "", 0) <= 0):
            return True
        g = self.gang(pod)
        return g is not None and remaining[g] <= 0

    def check(self, pod: Pod, remaining: Mapping[str, int] | None = None) -> PdbCheck:
        """The eviction API's decision for `pod` with the budgets `remaining` (default: current),
        and what it does to the pod's gang."""
        remaining = self.remaining if remaining is None else remaining
        g = self.gang(pod)
        out = self._check_pdb(pod, remaining)
        if g is None:
            return out
        gang = self.gangs[g]
        return replace(out, gang=g, stops_gang=remaining[g] <= 0, gang_running=len(gang.running),
                       gang_min_count=gang.min_count)

    def _check_pdb(self, pod: Pod, remaining: Mapping[str, int]) -> PdbCheck:
        key, kind = self.kind(pod)
        if key is None:
            return PdbCheck()
        left = remaining.get(key, 0)
        if kind == "free":
            return PdbCheck(key, left)
        if kind == "refused":
            keys = self.covering(pod)
            return PdbCheck(key, left, allowed=False,
                            reason=f"covered by {len(keys)} PodDisruptionBudgets ({', '.join(keys)}): "
                                   "the eviction API refuses it (500)")
        if left <= 0:
            b = self._budgets[key]
            return PdbCheck(key, left, spends=True, allowed=False,
                            reason=f"PodDisruptionBudget {key} allows no more disruptions (needs "
                                   f"{b.desired_healthy} healthy pods, has {b.current_healthy})")
        return PdbCheck(key, left, spends=True)

    def check_all(self, pods: Iterable[Pod]) -> list[PdbCheck]:
        """Checks for evicting `pods` one after another, each spending from what the earlier left."""
        pods = list(pods)
        self.gang_members(pods)  # a gang met first here has its budget in `remaining` before any is read
        # What these pods spend, over the budgets left (a cluster has thousands of PDBs, a node's
        # victims a few: the budgets are read through, not copied; nothing else writes them meanwhile).
        remaining: MutableMapping[str, int] = ChainMap({}, self.remaining)
        out = []
        for pod in pods:
            out.append(self.check(pod, remaining))
            self._spend(pod, remaining)
        return out

    def _spend(self, pod: Pod, remaining: MutableMapping[str, int]) -> None:
        """What evicting `pod` takes from `remaining`, as `check` decides it: a unit of its PDB's
        budget where it spends one and one is left, and a unit of its gang's."""
        key, kind = self.kind(pod)
        if kind == "spends" and key is not None and remaining.get(key, 0) > 0:
            remaining[key] -= 1
        g = self.gang(pod)
        if g is not None:
            remaining[g] -= 1

    def split_violating(self, pods: Sequence[Pod]) -> tuple[list[Pod], list[Pod]]:
        """(violating, non-violating), spending budgets in the order given (cf. the scheduler's
        `filterPodsWithPDBViolation`, but with the eviction API's rules)."""
        if not any(self.kind(p)[0] or self.gang(p) for p in pods):
            return [], list(pods)  # no PDB covers any of them, none is a running gang's
        # `check_all`'s verdicts without its checks (`would_violate`): victim selection asks this of
        # every node it simulates.
        self.gang_members(pods)
        remaining: MutableMapping[str, int] = ChainMap({}, self.remaining)
        bad: list[Pod] = []
        good: list[Pod] = []
        for pod in pods:
            (bad if self.would_violate(pod, remaining) else good).append(pod)
            self._spend(pod, remaining)
        return bad, good

    def commit(self, pods: Iterable[Pod]) -> None:
        """Spend the budgets for `pods` (victims of a chosen plan), as the API server would."""
        for pod in pods:
            c = self.check(pod)
            if c.spends and c.pdb is not None:
                self.remaining[c.pdb] = self.remaining.get(c.pdb, 0) - 1
                self.version += 1
                self._log.append(c.pdb)
            if c.gang is not None:
                self.remaining[c.gang] -= 1
                self.version += 1
                self._log.append(c.gang)

    def mark(self) -> tuple[int, dict[str, int]]:
        """What `restore` takes back to."""
        return self.version, dict(self.remaining)

    def restore(self, mark: tuple[int, dict[str, int]]) -> None:
        """The budgets as they were at `mark` (a plan given up: a gang that would run short). The
        budgets restored count as changed again, so what was kept per budget is looked at anew."""
        version, remaining = mark
        for key in dict.fromkeys(self._log[version:]):
            self.remaining[key] = remaining[key] if key in remaining else self.gangs[key].budget
            self.version += 1
            self._log.append(key)

    def changed_since(self, version: int) -> list[str]:
        """The PDBs whose budgets changed after `version` (with repeats)."""
        return self._log[version:]
