"""kube-scheduler's validation of a defaulted KubeSchedulerConfiguration, after
`pkg/scheduler/apis/config/validation` (validation.go, validation_pluginargs.go), with
apimachinery's field errors (`field.Error.Error()`: `<path>: <type>[: <value>][: <detail>]`) and
their aggregate (one error as itself, several as `[a, b]`), so that a refused file is refused with
the words kube-scheduler uses.

Also validated as kube-scheduler does when it starts: NodeResourcesFit's args (upstream checks them
in `NewFit`; `validatePluginConfig` looks them up under the wrong name, `NodeResourcesFitArgs`, and
never runs them), with the same path prefix as the other plugins' here, `profiles[i].pluginConfig[j].args`.
Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kresched.model.specs import NodeSelectorTerm, TopologySpreadConstraint
from kresched.model.validation import check_node_selector_term
from kresched.sched.config.types import (
    API_VERSION,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ProfileConfig,
    ResourceSpec,
    SchedulerConfig,
    ShapePoint,
    VolumeBindingArgs,
)

__all__ = ["FieldError", "aggregate", "validate_config", "validate_plugin_args"]

#: Plugins removed before v1 (`invalidPluginsByVersion`): naming one is an error.
INVALID_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
#: `config.MaxCustomPriorityScore`: a shape point scores 0..10.
MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass(frozen=True, slots=True)
class FieldError:
    """`field.Error`: the path, the type (`Invalid value`, `Required value`, ...), the bad value
    (omitted when `has_value` is False) and a detail."""

    field: str
    type: str
    value: object = None
    detail: str = ""
    has_value: bool = True

    def __str__(self) -> str:
        if not self.type:  # a message already in field.Error's form (`raw`)
            return self.field
        body = self.type
        if self.type not in ("Required value", "Forbidden") and self.has_value:
            body += f": {_go_value(self.value)}"
        if self.detail:
            body += f": {self.detail}"
        return f"{self.field}: {body}"


class GoValue(str):
    """A bad value already in Go's `%#v` form (a struct): printed as it is."""


def _go_value(value: object) -> str:
    """A bad value as `field.Error` prints it: strings quoted, numbers and booleans bare, structs
    as Go's `%#v` (`GoValue`)."""
    if isinstance(value, GoValue):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def invalid(path: str, value: object, detail: str) -> FieldError:
    return FieldError(path, "Invalid value", value, detail)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, "Required value", None, detail, has_value=False)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, "Forbidden", None, detail, has_value=False)


def duplicate(path: str, value: object) -> FieldError:
    return FieldError(path, "Duplicate value", value)


def not_supported(path: str, value: object, supported: Iterable[str]) -> FieldError:
    return FieldError(path, "Unsupported value", value,
                      "supported values: " + ", ".join(f'"{s}"' for s in supported))


def aggregate(errors: Sequence[FieldError | str]) -> str:
    """`utilerrors.NewAggregate(errs).Error()`: one error as itself, several as `[a, b]` (repeats
    left out)."""
    texts = list(dict.fromkeys(str(e) for e in errors))
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


# -- the configuration (validation.go) ----------------------------------------------------------

def validate_config(cfg: SchedulerConfig) -> list[FieldError]:
    """`ValidateKubeSchedulerConfiguration`, every error in upstream's order."""
    errs: list[FieldError] = []
    errs += _validate_client_connection(cfg)
    errs += _validate_leader_election(cfg)
    if cfg.parallelism <= 0:
        errs.append(invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"))
    if not cfg.profiles:
        errs.append(required("profiles"))
    else:
        seen: dict[str, int] = {}
        for i, profile in enumerate(cfg.profiles):
            path = f"profiles[{i}]"
            errs += _validate_profile(path, profile)
            if profile.scheduler_name in seen:
                first = seen[profile.scheduler_name]
                errs.append(duplicate(f"{path}.schedulerName", f"profiles[{first}].schedulerName"))
            seen[profile.scheduler_name] = i
        errs += _validate_common_queue_sort(cfg.profiles)
    errs += _validate_percentage("percentageOfNodesToScore", cfg.percentage_of_nodes_to_score)
    if cfg.pod_initial_backoff_seconds <= 0:
        errs.append(invalid("podInitialBackoffSeconds", cfg.pod_initial_backoff_seconds, "must be greater than 0"))
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        errs.append(invalid("podMaxBackoffSeconds", cfg.pod_max_backoff_seconds,
                            "must be greater than or equal to PodInitialBackoffSeconds"))
    errs += _validate_extenders(cfg)
    return errs


def _validate_client_connection(cfg: SchedulerConfig) -> list[FieldError]:
    if cfg.client_connection_burst < 0:
        return [invalid("clientConnection.burst", cfg.client_connection_burst, "must be non-negative")]
    return []


def _validate_leader_election(cfg: SchedulerConfig) -> list[FieldError]:
    """component-base's `ValidateLeaderElectionConfiguration`, then the scheduler's own rule that
    the lock is a Lease."""
    le = cfg.leader_election
    errs: list[FieldError] = []
    if not le.get("leaderElect", True):
        return errs
    lease, renew, retry = (float(le.get(k, 0.0)) for k in ("leaseDuration", "renewDeadline",  # type: ignore[arg-type]
                                                            "retryPeriod"))
    if lease <= 0:
        errs.append(invalid("leaderElection.leaseDuration", le.get("leaseDurationText", ""),
                            "must be greater than zero"))
    if renew <= 0:
        errs.append(invalid("leaderElection.renewDeadline", le.get("renewDeadlineText", ""),
                            "must be greater than zero"))
    if retry <= 0:
        errs.append(invalid("leaderElection.retryPeriod", le.get("retryPeriodText", ""),
                            "must be greater than zero"))
    if lease <= renew:
        errs.append(invalid("leaderElection.leaseDuration", le.get("renewDeadlineText", ""),
                            "LeaseDuration must be greater than RenewDeadline"))
    lock = str(le.get("resourceLock", ""))
    if not lock:
        errs.append(invalid("leaderElection.resourceLock", lock, "resourceLock is required"))
    if not le.get("resourceName"):
        errs.append(required("leaderElection.resourceName"))
    if not le.get("resourceNamespace"):
        errs.append(required("leaderElection.resourceNamespace"))
    if lock and lock != "leases":
        errs.append(invalid("leaderElection.resourceLock", lock, 'resourceLock value must be "leases"'))
    return errs


def _validate_percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _validate_profile(path: str, profile: ProfileConfig) -> list[FieldError]:
    errs: list[FieldError] = []
    if not profile.scheduler_name:
        errs.append(required(f"{path}.schedulerName"))
    errs += _validate_percentage(f"{path}.percentageOfNodesToScore", profile.percentage_of_nodes_to_score)
    for point in ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
                  "permit", "preBind", "bind", "postBind"):
        plugin_set = profile.plugins.get(point)
        if plugin_set is None:
            continue
        for i, p in enumerate(plugin_set.enabled):
            if p.name in INVALID_PLUGINS:
                errs.append(invalid(f"{path}.plugins.{point}.enabled[{i}]", p.name,
                                    f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version '
                                    f'"{API_VERSION}")'))
    seen: set[str] = set()
    for i, (name, args) in enumerate(profile.plugin_config):
        where = f"{path}.pluginConfig[{i}]"
        if name in seen:
            errs.append(duplicate(where, name))
        seen.add(name)
        if name in INVALID_PLUGINS:
            errs.append(invalid(where, name, f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is '
                                             f'version "{API_VERSION}")'))
            continue
        errs += validate_plugin_args(f"{where}.args", name, args)
    return errs


def _validate_common_queue_sort(profiles: Sequence[ProfileConfig]) -> list[FieldError]:
    """Every profile sorts its queue alike (the scheduler has one queue)."""
    errs: list[FieldError] = []
    canon = profiles[0].plugins.get("queueSort")
    canon_names = [p.name for p in canon.enabled] if canon is not None else []
    if len(canon_names) > 1:
        errs.append(invalid("profiles[0].plugins.queueSort.Enabled", len(canon_names),
                            "only one queue sort plugin can be enabled"))
    sort_name = canon_names[0] if canon_names else ""
    sort_args = next((a for n, a in profiles[0].plugin_config if sort_name and n == sort_name), None)
    for i in range(1, len(profiles)):
        cur = profiles[i].plugins.get("queueSort")
        if _plugin_set_key(cur) != _plugin_set_key(canon):
            errs.append(invalid(f"profiles[{i}].plugins.queueSort", _plugin_set_text(cur),
                                "must be the same for all profiles"))
        for name, args in profiles[i].plugin_config:
            if name == sort_name and args != sort_args:
                errs.append(invalid(f"profiles[{i}].pluginConfig.args", str(args),
                                    "queueSort must be the same for all profiles"))
    return errs


def _plugin_set_key(s: object) -> tuple:
    if s is None:
        return ((), ())
    return (tuple((p.name, p.weight) for p in s.enabled), tuple(s.disabled))  # type: ignore[attr-defined]


def _plugin_set_text(s: object) -> GoValue:
    """The internal `config.PluginSet` as Go's `%#v` prints it (what upstream's error shows)."""
    enabled, disabled = _plugin_set_key(s)

    def plugins(items: list[tuple[str, int]]) -> str:
        if not items:
            return "[]config.Plugin(nil)"
        return "[]config.Plugin{" + ", ".join(f'config.Plugin{{Name:"{n}", Weight:{w}}}' for n, w in items) + "}"

    return GoValue(f"config.PluginSet{{Enabled:{plugins([(n, w or 0) for n, w in enabled])}, "
                   f"Disabled:{plugins([(n, 0) for n in disabled])}}}")


_QUALIFIED = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _validate_extenders(cfg: SchedulerConfig) -> list[FieldError]:
    errs: list[FieldError] = []
    binders = 0
    seen: set[str] = set()
    for i, ext in enumerate(cfg.extenders):
        path = f"extenders[{i}]"
        if ext.prioritize_verb and ext.weight <= 0:
            errs.append(invalid(f"{path}.weight", ext.weight, "must have a positive weight applied to it"))
        if ext.bind_verb:
            binders += 1
        for j, name in enumerate(ext.managed_resources):
            where = f"{path}.managedResources[{j}].name"
            problem = label_name_problem(name)
            if problem:
                errs.append(invalid(where, name, problem))
            elif "/" not in name or name.startswith(("kubernetes.io/", "requests.")) or ".kubernetes.io/" in name:
                errs.append(invalid(where, name, "is an invalid extended resource name"))
            if name in seen:
                errs.append(invalid(where, name, "duplicate extender managed resource name"))
            seen.add(name)
    if binders > 1:
        errs.append(invalid("extenders", f"found {binders} extenders implementing bind",
                            "only one extender can implement bind"))
    return errs


def label_name_problem(name: str) -> str:
    """apimachinery's `ValidateLabelName` (`IsQualifiedName`): the first problem, or ""."""
    prefix, _, rest = name.rpartition("/")
    if "/" in rest or name.count("/") > 1:
        return ("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
                "'/' (e.g. 'example.com/MyName')")
    if "/" in name:
        if not prefix:
            return "prefix part must be non-empty"
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            return ("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
                    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    if not rest:
        return "name part must be non-empty"
    if len(rest) > 63:
        return "name part must be no more than 63 characters"
    if not _QUALIFIED.fullmatch(rest):
        return ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
    return ""


# -- plugin args (validation_pluginargs.go) -------------------------------------------------------

def validate_plugin_args(path: str, name: str, args: object) -> list[FieldError]:
    """The `Validate<Kind>` of plugin `name`'s args at `path` (`.../args`). Args of another kind
    than the plugin's are `has to match plugin args`; a plugin kresched does not know is not
    validated (out-of-tree: kube-scheduler hands its args to it)."""
    checks = {
        "DefaultPreemption": (DefaultPreemptionArgs, _default_preemption),
        "InterPodAffinity": (InterPodAffinityArgs, _inter_pod_affinity),
        "NodeAffinity": (NodeAffinityArgs, _node_affinity),
        "NodeResourcesBalancedAllocation": (NodeResourcesBalancedAllocationArgs, _balanced_allocation),
        "NodeResourcesFit": (NodeResourcesFitArgs, _node_resources_fit),
        "PodTopologySpread": (PodTopologySpreadArgs, _pod_topology_spread),
        "VolumeBinding": (VolumeBindingArgs, _volume_binding),
        "DynamicResources": (DynamicResourcesArgs, _dynamic_resources),
    }
    check = checks.get(name)
    if check is None:
        return []
    kind, fn = check
    if not isinstance(args, kind):
        return [invalid(path, type(args).__name__, "has to match plugin args")]
    return fn(path, args)


def _default_preemption(path: str, args: DefaultPreemptionArgs) -> list[FieldError]:
    pct, absolute = args.min_candidate_nodes_percentage or 0, args.min_candidate_nodes_absolute or 0
    errs = []
    if not 0 <= pct <= 100:
        errs.append(invalid(f"{path}.minCandidateNodesPercentage", pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(f"{path}.minCandidateNodesAbsolute", absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(invalid(f"{path}.minCandidateNodesPercentage", pct,
                            "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(invalid(f"{path}.minCandidateNodesAbsolute", absolute,
                            "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


def _inter_pod_affinity(path: str, args: InterPodAffinityArgs) -> list[FieldError]:
    w = args.hard_pod_affinity_weight or 0
    if not 0 <= w <= 100:
        return [invalid(f"{path}.hardPodAffinityWeight", w, "not in valid range [0, 100]")]
    return []


def _pod_topology_spread(path: str, args: PodTopologySpreadArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    kind = args.defaulting_type
    if kind not in ("System", "List"):
        errs.append(not_supported(f"{path}.defaultingType", kind, ("System", "List")))
    elif kind == "System" and args.default_constraints:
        errs.append(invalid(f"{path}.defaultingType", kind, "when .defaultConstraints are not empty"))
    base = f"{path}.defaultConstraints"
    for i, c in enumerate(args.default_constraints):
        p = f"{base}[{i}]"
        if c.max_skew <= 0:
            errs.append(invalid(f"{p}.maxSkew", c.max_skew, "not in valid range (0, inf)"))
        if not c.topology_key:
            errs.append(required(f"{p}.topologyKey", "can not be empty"))
        elif problem := label_name_problem(c.topology_key):
            errs.append(invalid(f"{p}.topologyKey", c.topology_key, problem))
        if not c.when_unsatisfiable:
            errs.append(required(f"{p}.whenUnsatisfiable", "can not be empty"))
        elif c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{p}.whenUnsatisfiable", c.when_unsatisfiable,
                                      ("DoNotSchedule", "ScheduleAnyway")))
        if c.label_selector is not None:
            errs.append(forbidden(f"{p}.labelSelector",
                                  "constraint must not define a selector, as they deduced for each pod"))
        errs += _constraint_not_repeated(base, args.default_constraints, i)
    return errs


def _constraint_not_repeated(path: str, constraints: Sequence[TopologySpreadConstraint], i: int) -> list[FieldError]:
    c = constraints[i]
    for other in constraints[:i]:
        if c.topology_key == other.topology_key and c.when_unsatisfiable == other.when_unsatisfiable:
            return [duplicate(f"{path}[{i}]", f"{{{c.topology_key}, {c.when_unsatisfiable}}}")]
    return []


def _function_shape(path: str, shape: Sequence[ShapePoint]) -> list[FieldError]:
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(invalid(f"{path}[{i}].utilization", shape[i].utilization,
                                "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(invalid(f"{path}[{i}].utilization", point.utilization, "not in valid range [0, 100]"))
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(invalid(f"{path}[{i}].score", point.score,
                                f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs


def _resources(path: str, resources: Sequence[ResourceSpec]) -> list[FieldError]:
    return [invalid(f"{path}[{i}].weight", r.weight, f"resource weight of {r.name} not in valid range (0, 100]")
            for i, r in enumerate(resources) if r.weight <= 0 or r.weight > 100]


def _balanced_allocation(path: str, args: NodeResourcesBalancedAllocationArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, r in enumerate(args.resources):
        if r.name in seen:
            errs.append(duplicate(f"{path}.resources[{i}].name", r.name))
        seen.add(r.name)
        if r.weight != 1:
            errs.append(invalid(f"{path}.resources[{i}].weight", r.weight, "must be 1"))
    return errs


def _node_affinity(path: str, args: NodeAffinityArgs) -> list[FieldError]:
    """`ValidateNodeAffinityArgs`: the added affinity must parse as a node selector (operators,
    values, label keys; matchFields only `metadata.name`)."""
    aff = args.added_affinity
    if aff is None:
        return []
    errs: list[FieldError] = []
    req = aff.required_during_scheduling_ignored_during_execution
    if req is not None:
        base = f"{path}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(req.node_selector_terms):
            errs += _term(f"{base}.nodeSelectorTerms[{i}]", term)
    base = f"{path}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    for i, pref in enumerate(aff.preferred_during_scheduling_ignored_during_execution):
        errs += _term(f"{base}[{i}].preference", pref.preference)
    return errs


def _term(path: str, term: NodeSelectorTerm) -> list[FieldError]:
    try:
        check_node_selector_term(path, term, parsed=True)  # nodeaffinity.NewNodeSelector parses it
    except ValueError as exc:  # already `<path>: <type>: <detail>`, as field.Error prints it
        return [FieldError(str(exc), "")]
    return []


def _volume_binding(path: str, args: VolumeBindingArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    if (args.bind_timeout_seconds or 0) < 0:
        errs.append(invalid(f"{path}.bindTimeoutSeconds", args.bind_timeout_seconds,
                            "invalid BindTimeoutSeconds, should not be a negative value"))
    if args.shape is not None:  # StorageCapacityScoring is off by default in v1.36
        errs.append(invalid(f"{path}.shape", _shape_text(args.shape),
                            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
    return errs


def _shape_text(shape: Sequence[ShapePoint]) -> str:
    return "[" + " ".join(f"{{Utilization:{p.utilization} Score:{p.score}}}" for p in shape) + "]"


def _node_resources_fit(path: str, args: NodeResourcesFitArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, res in enumerate(args.ignored_resources):
        if problem := label_name_problem(res):
            errs.append(invalid(f"{path}.ignoredResources[{i}]", res, problem))
    for i, group in enumerate(args.ignored_resource_groups):
        where = f"{path}.ignoredResourceGroups[{i}]"
        if "/" in group:
            errs.append(invalid(where, group, "resource group name can't contain '/'"))
        if problem := label_name_problem(group):
            errs.append(invalid(where, group, problem))
    strategy = args.scoring_strategy
    spath = f"{path}.scoringStrategy"
    if strategy is None:
        errs.append(required(spath, "ScoringStrategy field is required"))
        return errs
    if strategy.type not in SCORING_STRATEGIES:
        errs.append(not_supported(f"{spath}.type", strategy.type, sorted(SCORING_STRATEGIES)))
    errs += _resources(f"{spath}.resources", strategy.resources)
    if strategy.type == "RequestedToCapacityRatio":
        if strategy.shape is None:
            errs.append(required(f"{spath}.requestedToCapacityRatio", "must be specified when type is "
                                                                      "RequestedToCapacityRatio"))
        else:
            errs += _function_shape(f"{spath}.requestedToCapacityRatio.shape", strategy.shape)
    elif strategy.shape is not None:
        errs.append(forbidden(f"{spath}.requestedToCapacityRatio",
                              "must be nil when type is not RequestedToCapacityRatio"))
    return errs


def _dynamic_resources(path: str, args: DynamicResourcesArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    if args.filter_timeout_seconds is not None and args.filter_timeout_seconds < 0:
        errs.append(invalid(f"{path}.filterTimeout", args.filter_timeout_seconds, "must be zero or positive"))
    if args.binding_timeout_seconds is not None:  # DRADeviceBindingConditions is off by default
        errs.append(forbidden(f"{path}.bindingTimeout",
                              "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"))
    return errs
