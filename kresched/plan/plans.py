"""What a plan is: the pod, its outcome, the node, the tier, the victims and why this node — the
data `plan_pod` returns and every renderer and executor reads (`kresched.plan.planner` makes it).
Frozen dataclasses; no logic but what each reads of itself. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kresched.model.objects import Pod
from kresched.model.specs import Taint
from kresched.plan.pdb import PdbCheck
from kresched.sched.pod_group_cycle import PodGroupCondition
from kresched.sched.profile import Profiles

if TYPE_CHECKING:
    from kresched.sched.diagnosis import Diagnosis

__all__ = ["CRITERIA", "RESERVATION_TAINT", "RESERVED_FOR", "DeviceGrant", "GangOutcome", "NodeOption", "Outcome",
           "Plan", "PlanOptions", "RunnerUp", "Victim", "fits_message"]

RESERVATION_TAINT = Taint(key="CriticalAddonsOnly", value="kresched", effect="NoSchedule")
#: The annotation that names the pod (or workload) a reservation is for.
RESERVED_FOR = "kresched.io/reserved-for"

#: `unknown`: the answer depends on objects the state does not hold (`Plan.missing_kinds`).
Outcome = Literal["fits", "evict", "infeasible", "unknown"]


@dataclass(frozen=True)
class PlanOptions:
    max_grace_seconds: int = 10
    allow_pdb_violation: bool = False
    #: The cluster's scheduler profiles (`--scheduler-config`; the v1.36 default profile without).
    profiles: Profiles = field(default_factory=Profiles.default, compare=False)


@dataclass(frozen=True)
class DeviceGrant:
    """One device a claim of the pod would get on the plan's node (its allocation result): of one
    of the pod's ResourceClaims, or of the claim the scheduler makes for its extended resources
    backed by a DeviceClass (`claim` None; `resource` and `container` say which request it is)."""

    claim: str | None
    request: str
    driver: str
    pool: str
    device: str
    resource: str | None = None
    container: str | None = None

    @property
    def device_text(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True)
class Victim:
    pod: Pod
    node: str
    pdb: PdbCheck
    grace_seconds: int
    eviction_grace_seconds: int
    #: Where its replacement would land once P is placed; None = it would stay Pending (or, for a
    #: bare pod, nothing replaces it).
    lands_on: str | None = None
    #: Why it would stay Pending (explain's words), when it would.
    pending_reason: str | None = None
    #: Every node tied with `lands_on` at the top score (the scheduler takes the first it found; see `select_host`).
    candidates: tuple[str, ...] = ()
    #: The scheduler would score only a sample of the feasible nodes: `lands_on` is the likely one.
    likely: bool = False
    #: How its volumes hold it to its node or zone (`placement.held_by_volume`), if they do.
    held_by: str | None = None

    @property
    def is_bare(self) -> bool:
        return self.pod.is_bare

    @property
    def has_empty_dir(self) -> bool:
        return self.pod.has_empty_dir

    @property
    def grace_shortened(self) -> bool:
        return self.eviction_grace_seconds < self.grace_seconds

    @property
    def flags(self) -> tuple[str, ...]:
        out = []
        if self.is_bare:
            out.append("bare pod: gone for good")
        if self.has_empty_dir:
            out.append("emptyDir data lost")
        if self.grace_shortened:
            out.append(f"grace shortened {self.grace_seconds}s→{self.eviction_grace_seconds}s")
        if not self.pdb.allowed:
            out.append("violates PDB")
        if self.pdb.stops_gang:
            out.append(f"stops its gang ({self.pdb.gang})")
        if self.held_by:
            out.append(f"held by volume: {self.held_by}")
        return tuple(out)


#: (name shown to operators, how to phrase "better") for each component of `option_key`.
CRITERIA: tuple[tuple[str, str], ...] = (
    ("PDB violations", "fewer PDB violations"),
    ("grace periods shortened", "fewer grace periods shortened"),
    ("highest victim priority", "a lower highest victim priority"),
    ("sum of victim priorities", "a lower sum of victim priorities"),
    ("victims", "fewer victims"),
    ("start of the most important victims", "a later start of its most important victims"),
    ("victim requests", "smaller victim requests"),
    ("bare-pod victims", "fewer bare-pod victims"),
    ("node name", "an earlier node name"),
)


@dataclass(frozen=True)
class NodeOption:
    """A feasible node in a tier: the minimal victims and the key the choice compares."""

    node: str
    tier: int
    victims: tuple[Victim, ...]
    key: tuple

    @property
    def violations(self) -> int:
        return self.key[0]


@dataclass(frozen=True)
class RunnerUp:
    node: str
    tier: int | None
    #: Why it lost against the chosen node, or why it was not feasible.
    reason: str
    victims: int = 0


@dataclass(frozen=True)
class GangOutcome:
    """What the plan of a pod's gang came to (`plan.gang`), on each member's plan."""

    #: `PodGroup ns/name` (`Gang.key`), how it was declared (`Gang.flavor`).
    key: str
    flavor: str
    min_count: int
    members: int
    running: int
    #: Members these plans place.
    placed: int
    #: Whether the gang's plans are carried out (False: it would run short, nothing is evicted).
    kept: bool
    message: str
    #: Where its minCount comes from (`PodGroup ... gang.minCount 4`).
    declared_by: str = ""
    #: The cluster's scheduler places it (GangScheduling on: its pod-group cycle and workload-aware
    #: preemption simulated, `plan.pod_group`), not kresched's own all-or-nothing rule.
    scheduler: bool = False
    #: The `PodGroupScheduled` condition the scheduler writes on the PodGroup (with `scheduler`;
    #: None where it writes none: a member count or a PodGroup it silently waits for).
    condition: PodGroupCondition | None = None


@dataclass(frozen=True)
class Plan:
    pod: Pod
    priority: int
    outcome: Outcome
    node: str | None = None
    tier: int | None = None
    taint: bool = False
    victims: tuple[Victim, ...] = ()
    message: str = ""
    #: For `evict`: the criterion that decided against the runner-up, e.g. "fewer victims than node-b".
    decided_by: str | None = None
    runners_up: tuple[RunnerUp, ...] = ()
    #: Tier 3 with PDB violations and no --allow-pdb-violation: planned, but not to be carried out.
    blocked: bool = False
    #: The node's pods before (for the before/after diff).
    node_pods_before: tuple[Pod, ...] = ()
    notes: tuple[str, ...] = ()
    #: For `fits`: every node tied with `node` at the top score (see `score.select_host`).
    candidates: tuple[str, ...] = ()
    #: For `fits`: the scheduler would score only a sample of the feasible nodes, so `node` is the
    #: likely one (large clusters, `numFeasibleNodesToFind`).
    likely: bool = False
    #: The scheduler profile simulated (None: the pod's scheduler is no profile's, nothing was).
    profile: str | None = "default-scheduler"
    #: What kresched could not simulate of that profile (out-of-tree plugins, extenders, ...).
    warnings: tuple[str, ...] = ()
    #: For a pod that asks for devices (None: it asks for none): the devices its claims get on
    #: `node` (`fits`, `evict`), in the order the allocator gives them.
    devices: tuple[DeviceGrant, ...] | None = None
    #: The victims are evicted to free devices: kresched's own device freeing (`plan.devices`),
    #: which the scheduler's preemption never does.
    frees_devices: bool = False
    #: The DRA kinds the pod's answer depends on that the state does not hold (a snapshot taken
    #: without them, `sched.dra.claims.missing_kinds`): the outcome is `unknown`, or `infeasible`
    #: when it cannot be placed whatever its devices.
    missing_kinds: tuple[str, ...] = ()
    #: The pod is a member of a gang, planned with it (`plan.gang`).
    gang: GangOutcome | None = None

    @property
    def stopped_gangs(self) -> dict[str, list[Victim]]:
        """The running gangs its victims stop (evicted past their budget), with their victims."""
        out: dict[str, list[Victim]] = {}
        for v in self.victims:
            if v.pdb.gang is not None:
                out.setdefault(v.pdb.gang, []).append(v)
        return {k: vs for k, vs in out.items() if any(v.pdb.stops_gang for v in vs)}

    @property
    def key(self) -> str:
        return self.pod.key


def fits_message(node: str, diag: Diagnosis, candidates: tuple[str, ...]) -> str:
    """A `fits` plan's message: the node, how many others fit (and tie), whether it is the likely one."""
    others = len(diag.feasible) - 1
    where = f"fits on node {node} without evicting anything"
    if diag.nominated_fits:
        where += " (the node it is nominated to)"
    elif others:
        where += f" (and on {'at least ' if diag.sampled else ''}{others} other node{'s' if others != 1 else ''})"
    if len(candidates) > 1:
        where += f"; {len(candidates) - 1} other node(s) tie with it at the top score"
    if diag.sampled:
        where += ("; on a cluster this size the scheduler scores only a sample of the feasible nodes, so this is "
                  "the likely node")
    return where + "; the scheduler should bind it on its next attempt"
