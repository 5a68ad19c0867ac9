"""What a rebalance plan is: its options (`RebalanceOptions`, checked together by
`validate_options`), the moves it makes, the proposals it refused and why, the limits that stopped
it, and the nodes' request-utilisation before and after — the data `plan_rebalance`
(`kresched.plan.rebalance`) returns and every renderer and executor reads. Frozen dataclasses. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kresched.model.objects import Pod
from kresched.plan.objectives import OBJECTIVES
from kresched.sched.profile import Profiles

__all__ = ["RESOURCES", "LimitHit", "Move", "RebalanceOptions", "RebalancePlan", "Skip", "validate_options"]

RESOURCES = ("cpu", "memory", "pods")


@dataclass(frozen=True)
class RebalanceOptions:
    objectives: tuple[str, ...] = OBJECTIVES
    #: Request-% per resource below which (every resource) a node is underutilised.
    thresholds: dict[str, int] = field(default_factory=lambda: {"cpu": 20, "memory": 20, "pods": 20})
    #: Request-% per resource above which (any resource) a node is overutilised.
    target_thresholds: dict[str, int] = field(default_factory=lambda: {"cpu": 50, "memory": 50, "pods": 50})
    #: Preference points (raw score units) a destination must gain over the pod's node.
    preference_margin: int = 10
    evict_local_storage: bool = False
    max_moves: int | None = None
    max_moves_per_node: int | None = None
    max_moves_per_namespace: int | None = None
    #: The cluster's scheduler profiles: a replacement is placed by its pod's; a pod of a scheduler
    #: no profile names is never moved (where it would land is not simulated).
    profiles: Profiles = field(default_factory=Profiles.default, compare=False)
    #: Disruptions a pod's PodDisruptionBudget must still allow once the move has spent one (the
    #: buffer a conservative policy leaves; 0: the last one may be spent).
    budget_buffer: int = 0
    #: Only pods of this namespace move (`-n`); None: any namespace.
    namespace: str | None = None


def validate_options(opts: RebalanceOptions) -> list[str]:
    """Every problem with `opts`, as one-line messages (empty: valid)."""
    errors = []
    for o in opts.objectives:
        if o not in OBJECTIVES:
            errors.append(f"unknown objective {o!r} (one of {', '.join(OBJECTIVES)})")
    for name, table in (("--thresholds", opts.thresholds), ("--target-thresholds", opts.target_thresholds)):
        for r, v in table.items():
            if r not in RESOURCES:
                errors.append(f"{name}: unknown resource {r!r} (one of {', '.join(RESOURCES)})")
            elif not 0 <= v <= 100:
                errors.append(f"{name}: {r}={v} is not a percentage (0..100)")
    for r in RESOURCES:
        low, high = opts.thresholds.get(r, 100), opts.target_thresholds.get(r, 100)
        if low > high:
            errors.append(f"--thresholds {r}={low} is above --target-thresholds {r}={high}")
    for name, v in (("--max-moves", opts.max_moves), ("--max-moves-per-node", opts.max_moves_per_node),
                    ("--max-moves-per-namespace", opts.max_moves_per_namespace), ("--margin", opts.preference_margin)):
        if v is not None and v < 0:
            errors.append(f"{name} must not be negative")
    return errors


@dataclass(frozen=True)
class Move:
    pod: Pod
    source: str
    #: Where the replacement lands (the first of `candidates`).
    to: str
    candidates: tuple[str, ...]
    objective: str
    reason: str
    pdb: str | None = None
    #: The scheduler would score only a sample of the feasible nodes: `to` is the likely one.
    likely: bool = False
    #: The label selector that finds the replacement (`ClusterState.replica_selector`).
    replicas: str = ""
    #: utilisation: the round's destinations when the move was planned (its landing is judged by
    #: them again when the move is re-derived before its eviction: `kresched.plan.rebalance_rederive`).
    destinations: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Skip:
    """A proposal the simulation refused, and why."""

    pod: Pod
    node: str
    objective: str
    reason: str


@dataclass(frozen=True)
class LimitHit:
    """A limit that stopped moves: `limit` is max-moves | max-moves-per-node | max-moves-per-namespace."""

    limit: str
    value: int
    scope: str | None = None


@dataclass(frozen=True)
class RebalancePlan:
    moves: tuple[Move, ...]
    skipped: tuple[Skip, ...]
    limits: tuple[LimitHit, ...]
    #: node → {"cpu": %, "memory": %, "pods": %} of requests against allocatable.
    before: dict[str, dict[str, int]]
    after: dict[str, dict[str, int]]
    #: What kresched could not simulate of the scheduler profiles that place the replacements.
    warnings: tuple[str, ...] = ()
    #: The options it was planned with: a move is re-derived with them before its eviction.
    options: RebalanceOptions = field(default_factory=RebalanceOptions, compare=False)
