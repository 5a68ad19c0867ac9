"""kube-scheduler v1.36's defaults for a KubeSchedulerConfiguration, after
`pkg/scheduler/apis/config/v1` (default_plugins.go: `getDefaultPlugins`, `mergePlugins`,
`mergePluginSet`; defaults.go: `SetDefaults_*`).

The default feature gates of v1.36 decide what is in: DynamicResourceAllocation is GA (its plugin
is in the default set, before DefaultPreemption), StorageCapacityScoring, NodeDeclaredFeatures,
GangScheduling and TopologyAwareWorkloadScheduling are alpha and off (their plugins are not
added, VolumeBinding gets no default `shape`), DRASchedulerFilterTimeout is beta and on
(DynamicResources' `filterTimeout` defaults to 10 s). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

from kresched.sched.config.types import (
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginRef,
    PluginSet,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    VolumeBindingArgs,
)

__all__ = [
    "DEFAULT_MULTI_POINT",
    "DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE",
    "default_args",
    "default_plugins",
    "merge_plugin_set",
    "merge_plugins",
    "with_defaults",
]

#: `config.DefaultPercentageOfNodesToScore`: 0 means the adaptive percentage.
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0

#: `getDefaultPlugins().MultiPoint.Enabled` with v1.36's default feature gates (DynamicResources
#: is inserted before DefaultPreemption by `applyDynamicResources`).
DEFAULT_MULTI_POINT: tuple[PluginRef, ...] = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DynamicResources", 2),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
)

_DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def default_plugins() -> dict[str, PluginSet]:
    """`getDefaultPlugins`: every default plugin through multiPoint, nothing else."""
    return {"multiPoint": PluginSet(DEFAULT_MULTI_POINT)}


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """`mergePluginSet`: the default plugins not disabled (none with `*`), each replaced in place by
    the custom entry of the same name, then the custom plugins that replaced none (duplicates
    included: the framework refuses them later). Disabled: the custom ones, then the default's."""
    disabled = [*custom.disabled, *default.disabled]
    off = set(disabled)
    custom_at = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in off:
        for p in default.enabled:
            if p.name in off:
                continue
            hit = custom_at.get(p.name)
            if hit is not None:
                p = hit[1]
                replaced.add(hit[0])
            enabled.append(p)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(tuple(enabled), tuple(disabled))


def merge_plugins(custom: Mapping[str, PluginSet] | None,
                  default: Mapping[str, PluginSet] | None = None) -> dict[str, PluginSet]:
    """`mergePlugins`: the default plugins (`default`; v1.36's without) with a profile's `plugins`
    merged in, per extension point."""
    merged = default_plugins() if default is None else dict(default)
    if custom is None:
        return merged
    for point, custom_set in custom.items():
        merged[point] = merge_plugin_set(merged.get(point, PluginSet()), custom_set)
    return merged


def with_defaults(args: object) -> object:
    """The args of an in-tree plugin with upstream's `SetDefaults_<Kind>` applied."""
    if isinstance(args, NodeResourcesFitArgs):
        strategy = args.scoring_strategy or ScoringStrategy("LeastAllocated", _DEFAULT_RESOURCES)
        resources = strategy.resources or _DEFAULT_RESOURCES
        resources = tuple(r if r.weight != 0 else ResourceSpec(r.name, 1) for r in resources)
        return NodeResourcesFitArgs(args.ignored_resources, args.ignored_resource_groups,
                                    ScoringStrategy(strategy.type, resources, strategy.shape))
    if isinstance(args, NodeResourcesBalancedAllocationArgs):
        if not args.resources:
            return NodeResourcesBalancedAllocationArgs(_DEFAULT_RESOURCES)
        return NodeResourcesBalancedAllocationArgs(
            tuple(r if r.weight != 0 else ResourceSpec(r.name, 1) for r in args.resources))
    if isinstance(args, PodTopologySpreadArgs):
        return PodTopologySpreadArgs(args.default_constraints, args.defaulting_type or "System")
    if isinstance(args, InterPodAffinityArgs):
        weight = 1 if args.hard_pod_affinity_weight is None else args.hard_pod_affinity_weight
        return InterPodAffinityArgs(weight, args.ignore_preferred_terms_of_existing_pods)
    if isinstance(args, VolumeBindingArgs):
        # No default shape: StorageCapacityScoring is off by default in v1.36.
        return VolumeBindingArgs(600 if args.bind_timeout_seconds is None else args.bind_timeout_seconds, args.shape)
    if isinstance(args, DefaultPreemptionArgs):
        return DefaultPreemptionArgs(
            10 if args.min_candidate_nodes_percentage is None else args.min_candidate_nodes_percentage,
            100 if args.min_candidate_nodes_absolute is None else args.min_candidate_nodes_absolute)
    if isinstance(args, DynamicResourcesArgs):
        # DRASchedulerFilterTimeout is on (10 s); DRADeviceBindingConditions is off (no default).
        timeout = 10.0 if args.filter_timeout_seconds is None else args.filter_timeout_seconds
        return DynamicResourcesArgs(timeout, args.binding_timeout_seconds)
    return args


def default_args(name: str) -> object | None:
    """The defaulted args of the in-tree plugin `name` when the file gives none (None: it takes none)."""
    blank: dict[str, object] = {
        "NodeResourcesFit": NodeResourcesFitArgs(),
        "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs(),
        "PodTopologySpread": PodTopologySpreadArgs(),
        "InterPodAffinity": InterPodAffinityArgs(),
        "NodeAffinity": NodeAffinityArgs(),
        "VolumeBinding": VolumeBindingArgs(),
        "DefaultPreemption": DefaultPreemptionArgs(),
        "DynamicResources": DynamicResourcesArgs(),
    }
    args = blank.get(name)
    return None if args is None else with_defaults(args)
