"""kresched's own configuration (seed 003: "The rescheduler will be configured using ConfigMap; the
cluster administrator can enable or disable policies and can tune the rescheduler's
aggressiveness"): a `kresched.io/v1alpha1` KreschedConfiguration for `reconcile` and `rebalance`.

Owns the document's decoding (strict: an unknown field or a value of the wrong type is an error
naming the field), its validation, and the three aggressiveness presets that set every knob
together:

- **conservative** (the default of a configuration file): acts only on particularly bad
  situations and leaves buffer in disruption budgets — a pending critical pod must have waited
  5 minutes, at most 5 evictions a pass; rebalance moves a pod only from a node above 80 % of its
  allocatable to one below 10 %, or for a preference gain of 50 points, at most 5 moves a pass, 1
  per node and 2 per namespace, and only where its PodDisruptionBudget keeps at least one
  disruption in reserve after the move (`budgetBuffer: 1`);
- **moderate**: kresched's built-in defaults (what the flags default to without a file);
- **aggressive**: a low threshold for triggering an eviction and no buffer: 30 s pending, 50
  evictions a pass, utilisation targets 40 % / 35 %, a gain of 1 point, no move limits.

Every field the file sets overrides its preset; a flag overrides the file. Which policies run:
`reconcile.criticalPods` (helping pending critical pods), `reconcile.rebalance` (the rebalance
pass after them), `rebalance.objectives`. Pure: the caller reads the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from kresched.errors import InputError
from kresched.plan.objectives import OBJECTIVES
from kresched.plan.rebalance_plans import RESOURCES, RebalanceOptions, validate_options

__all__ = [
    "API_VERSION",
    "KIND",
    "PRESETS",
    "Policy",
    "RebalancePolicy",
    "ReconcilePolicy",
    "decode_policy",
    "encode_policy",
    "preset",
]

API_VERSION = "kresched.io/v1alpha1"
KIND = "KreschedConfiguration"
PRESETS = ("conservative", "moderate", "aggressive")


@dataclass(frozen=True)
class ReconcilePolicy:
    """What one `reconcile` pass does (its flags of the same names)."""

    critical_pods: bool = True
    min_priority: int | None = None
    min_pending_seconds: float = 60.0
    max_evictions: int = 10
    max_grace_seconds: int = 10
    allow_pdb_violation: bool = False
    reservation_ttl_seconds: float = 600.0
    deadline_seconds: float = 240.0
    rebalance: bool = False


@dataclass(frozen=True)
class RebalancePolicy:
    """What `rebalance` (and reconcile's rebalance pass) moves."""

    objectives: tuple[str, ...] = OBJECTIVES
    thresholds: Mapping[str, int] = field(default_factory=lambda: {"cpu": 20, "memory": 20, "pods": 20})
    target_thresholds: Mapping[str, int] = field(default_factory=lambda: {"cpu": 50, "memory": 50, "pods": 50})
    margin: int = 10
    evict_local_storage: bool = False
    max_moves: int | None = None
    max_moves_per_node: int | None = None
    max_moves_per_namespace: int | None = None
    #: Disruptions a pod's PodDisruptionBudget must still allow after the move (0: any budget left).
    budget_buffer: int = 0

    def options(self) -> RebalanceOptions:
        return RebalanceOptions(self.objectives, dict(self.thresholds), dict(self.target_thresholds), self.margin,
                                self.evict_local_storage, self.max_moves, self.max_moves_per_node,
                                self.max_moves_per_namespace, budget_buffer=self.budget_buffer)


@dataclass(frozen=True)
class Policy:
    aggressiveness: str
    reconcile: ReconcilePolicy
    rebalance: RebalancePolicy
    #: The file it was read from (None: a preset, no file).
    source: str | None = None


def preset(name: str) -> Policy:
    """The preset `name` (`PRESETS`)."""
    if name == "moderate":
        return Policy(name, ReconcilePolicy(), RebalancePolicy())
    if name == "conservative":
        return Policy(name, ReconcilePolicy(min_pending_seconds=300.0, max_evictions=5),
                      RebalancePolicy(thresholds={"cpu": 10, "memory": 10, "pods": 10},
                                      target_thresholds={"cpu": 80, "memory": 80, "pods": 80}, margin=50,
                                      max_moves=5, max_moves_per_node=1, max_moves_per_namespace=2, budget_buffer=1))
    if name == "aggressive":
        return Policy(name, ReconcilePolicy(min_pending_seconds=30.0, max_evictions=50),
                      RebalancePolicy(thresholds={"cpu": 35, "memory": 35, "pods": 35},
                                      target_thresholds={"cpu": 40, "memory": 40, "pods": 40}, margin=1))
    raise ValueError(name)


# -- the document ------------------------------------------------------------------------------------

_RECONCILE_FIELDS = {"criticalPods": "critical_pods", "minPriority": "min_priority",
                     "minPending": "min_pending_seconds", "maxEvictions": "max_evictions",
                     "maxGraceSeconds": "max_grace_seconds",
                     "allowPDBViolation": "allow_pdb_violation", "reservationTTL": "reservation_ttl_seconds",
                     "deadline": "deadline_seconds", "rebalance": "rebalance"}
_REBALANCE_FIELDS = {"objectives": "objectives", "thresholds": "thresholds", "targetThresholds": "target_thresholds",
                     "margin": "margin", "evictLocalStoragePods": "evict_local_storage", "maxMoves": "max_moves",
                     "maxMovesPerNode": "max_moves_per_node", "maxMovesPerNamespace": "max_moves_per_namespace",
                     "budgetBuffer": "budget_buffer"}
_DURATIONS = {"min_pending_seconds", "reservation_ttl_seconds", "deadline_seconds"}
_BOOLS = {"critical_pods", "allow_pdb_violation", "rebalance", "evict_local_storage"}
#: Optional integers (null: no limit / not set) and their least value.
_OPTIONAL = {"min_priority": None, "max_moves": 0, "max_moves_per_node": 0, "max_moves_per_namespace": 0}
_INTS = {"max_evictions": 0, "max_grace_seconds": 0, "margin": 0, "budget_buffer": 0}


def decode_policy(doc: Any) -> Policy:
    """The policy a parsed KreschedConfiguration describes: its preset (`aggressiveness`, default
    conservative) with every field it sets on top. `InputError` naming the field otherwise."""
    if not isinstance(doc, dict):
        raise InputError("not a mapping")
    if doc.get("apiVersion") != API_VERSION or doc.get("kind") != KIND:
        raise InputError(f"not a {API_VERSION} {KIND} (got apiVersion {doc.get('apiVersion')!r}, "
                         f"kind {doc.get('kind')!r})")
    _known(doc, "", {"apiVersion", "kind", "metadata", "aggressiveness", "reconcile", "rebalance"})
    name = doc.get("aggressiveness", "conservative")
    if name not in PRESETS:
        raise InputError(f"aggressiveness: Unsupported value: {name!r}: supported values: "
                         f"{', '.join(repr(p) for p in PRESETS)}")
    base = preset(name)
    reconcile = _section(doc.get("reconcile"), "reconcile", _RECONCILE_FIELDS, base.reconcile)
    rebalance = _section(doc.get("rebalance"), "rebalance", _REBALANCE_FIELDS, base.rebalance)
    errors = validate_options(rebalance.options())
    if errors:
        raise InputError(f"rebalance: {errors[0]}".replace("--target-thresholds", "targetThresholds")
                         .replace("--thresholds", "thresholds"))
    return Policy(name, reconcile, rebalance)


def _known(obj: Mapping[str, Any], path: str, names: set[str]) -> None:
    for key in obj:
        if key not in names:
            where = f"{path}.{key}" if path else str(key)
            raise InputError(f"{where}: unknown field (expected one of {', '.join(sorted(names))})")


def _section(raw: Any, path: str, names: Mapping[str, str], base: Any) -> Any:
    if raw is None:
        return base
    if not isinstance(raw, dict):
        raise InputError(f"{path}: must be a mapping")
    _known(raw, path, set(names))
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        attr = names[key]
        where = f"{path}.{key}"
        changes[attr] = _value(attr, value, where)
        if attr in ("thresholds", "target_thresholds"):  # the resources it leaves out keep the preset's
            changes[attr] = {**getattr(base, attr), **changes[attr]}
    return replace(base, **changes)


def _value(attr: str, value: Any, where: str) -> Any:
    if attr in _BOOLS:
        if not isinstance(value, bool):
            raise InputError(f"{where}: must be true or false, got {value!r}")
        return value
    if attr in _DURATIONS:
        return _duration(value, where)
    if attr in _OPTIONAL or attr in _INTS:
        least = _OPTIONAL.get(attr, _INTS.get(attr))
        if value is None and attr in _OPTIONAL:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{where}: must be an integer, got {value!r}")
        if least is not None and value < least:
            raise InputError(f"{where}: Invalid value: {value}: must be at least {least}")
        return value
    if attr == "objectives":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError(f"{where}: must be a list of objectives ({', '.join(OBJECTIVES)})")
        unknown = [v for v in value if v not in OBJECTIVES]
        if unknown:
            raise InputError(f"{where}: unknown objective {unknown[0]!r} (one of {', '.join(OBJECTIVES)})")
        return tuple(dict.fromkeys(value))
    if attr in ("thresholds", "target_thresholds"):
        if not isinstance(value, dict):
            raise InputError(f"{where}: must be a mapping of resource to percent ({', '.join(RESOURCES)})")
        out = {}
        for r, pct in value.items():
            if r not in RESOURCES:
                raise InputError(f"{where}.{r}: unknown resource (one of {', '.join(RESOURCES)})")
            if isinstance(pct, bool) or not isinstance(pct, int) or not 0 <= pct <= 100:
                raise InputError(f"{where}.{r}: must be a percentage (0..100), got {pct!r}")
            out[r] = pct
        return out
    raise AssertionError(attr)


def _duration(value: Any, where: str) -> float:
    """`90`, `90s`, `5m`, `1h30m` (what the flags take), or a number of seconds."""
    from kresched.sched.config.decode import go_duration_seconds

    if isinstance(value, bool):
        raise InputError(f"{where}: must be a duration (90s, 5m), got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            seconds = float(value) if value.strip().replace(".", "", 1).isdigit() else go_duration_seconds(value)
        except ValueError:
            raise InputError(f"{where}: must be a duration (90s, 5m), got {value!r}") from None
    else:
        raise InputError(f"{where}: must be a duration (90s, 5m), got {value!r}")
    if seconds < 0:
        raise InputError(f"{where}: must not be negative, got {value!r}")
    return seconds


def encode_policy(policy: Policy) -> dict[str, Any]:
    """The policy as a complete KreschedConfiguration document (every field spelled out)."""

    def section(obj: Any, names: Mapping[str, str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        values = {f.name: getattr(obj, f.name) for f in fields(obj)}
        for key, attr in names.items():
            v = values[attr]
            if attr in _DURATIONS:
                v = _duration_text(v)
            elif attr == "objectives":
                v = list(v)
            elif attr in ("thresholds", "target_thresholds"):
                v = dict(v)
            out[key] = v
        return out

    return {"apiVersion": API_VERSION, "kind": KIND, "aggressiveness": policy.aggressiveness,
            "reconcile": section(policy.reconcile, _RECONCILE_FIELDS),
            "rebalance": section(policy.rebalance, _REBALANCE_FIELDS)}


def _duration_text(seconds: float) -> str:
    s = int(seconds)
    if s != seconds:
        return f"{seconds}s"
    if s and s % 3600 == 0:
        return f"{s // 3600}h"
    if s and s % 60 == 0:
        return f"{s // 60}m"
    return f"{s}s"
