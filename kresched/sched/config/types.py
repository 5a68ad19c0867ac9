"""A kube-scheduler configuration as data: what `kubescheduler.config.k8s.io/v1`
KubeSchedulerConfiguration holds once decoded and defaulted, and the profiles it describes once
expanded to extension points (what kube-scheduler's `NewFramework` builds from a profile).

Frozen dataclasses, no behaviour: decoding and defaulting are `decode.py`, upstream's validation
`validation.py`, the expansion `framework.py`. Field names are upstream's, snake_cased.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kresched.model.specs import NodeAffinity, TopologySpreadConstraint

__all__ = [
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KIND",
    "DefaultPreemptionArgs",
    "DynamicResourcesArgs",
    "DEFAULT_EXTENDER_TIMEOUT_SECONDS",
    "Extender",
    "ExtenderTLS",
    "InterPodAffinityArgs",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "PluginRef",
    "PluginSet",
    "PodTopologySpreadArgs",
    "ProfileConfig",
    "ProfileSpec",
    "ResourceSpec",
    "SchedulerConfig",
    "ScoringStrategy",
    "ShapePoint",
    "VolumeBindingArgs",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
#: `v1.DefaultSchedulerName`: what a pod without `spec.schedulerName` gets from the API server.
DEFAULT_SCHEDULER_NAME = "default-scheduler"

#: The extension points of `Plugins`, by their JSON names, in upstream's field order.
EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
                    "permit", "preBind", "bind", "postBind", "multiPoint", "placementGenerate", "placementScore")


@dataclass(frozen=True, slots=True)
class PluginRef:
    """`Plugin`: a name and, for Score, an optional weight (None: not set)."""

    name: str
    weight: int | None = None


@dataclass(frozen=True, slots=True)
class PluginSet:
    """`PluginSet`: plugins enabled (in order) and disabled (`*`: every default one) at one point."""

    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int = 0


@dataclass(frozen=True, slots=True)
class ShapePoint:
    """`UtilizationShapePoint`: utilization 0..100 → score 0..10."""

    utilization: int
    score: int


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    type: str = "LeastAllocated"
    resources: tuple[ResourceSpec, ...] = ()
    #: `requestedToCapacityRatio.shape`; None when `requestedToCapacityRatio` is not set.
    shape: tuple[ShapePoint, ...] | None = None


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy | None = None


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    #: "System" (the built-in defaults) or "List" (`default_constraints`).
    defaulting_type: str = ""


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int | None = None
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    added_affinity: NodeAffinity | None = None


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int | None = None
    shape: tuple[ShapePoint, ...] | None = None


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int | None = None
    min_candidate_nodes_absolute: int | None = None


@dataclass(frozen=True, slots=True)
class DynamicResourcesArgs:
    #: Seconds (a Go duration in the file); None: not set.
    filter_timeout_seconds: float | None = None
    binding_timeout_seconds: float | None = None


#: Args types of the in-tree plugins that take any, by plugin name (upstream's `<Name>Args` kinds).
ARGS_TYPES: Mapping[str, type] = MappingProxyType({
    "NodeResourcesFit": NodeResourcesFitArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "NodeAffinity": NodeAffinityArgs,
    "VolumeBinding": VolumeBindingArgs,
    "DefaultPreemption": DefaultPreemptionArgs,
    "DynamicResources": DynamicResourcesArgs,
})


@dataclass(frozen=True, slots=True)
class ExtenderTLS:
    """`ExtenderTLSConfig` (the byte fields decoded from base64, as Go reads `[]byte`)."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


#: `DefaultExtenderTimeout` (pkg/scheduler/extender.go): an unset or zero `httpTimeout`.
DEFAULT_EXTENDER_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class Extender:
    """`Extender`, after `NewHTTPExtender`'s defaulting (a zero `httpTimeout` is 5 s)."""

    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    managed_resources: tuple[str, ...] = ()
    #: The managed resources marked `ignoredByScheduler`: NodeResourcesFit ignores them.
    ignored_by_scheduler: tuple[str, ...] = ()
    ignorable: bool = False
    node_cache_capable: bool = False
    enable_https: bool = False
    tls: ExtenderTLS | None = None
    http_timeout_seconds: float = DEFAULT_EXTENDER_TIMEOUT_SECONDS


@dataclass(frozen=True)
class ProfileConfig:
    """`KubeSchedulerProfile` after defaulting: its plugins merged with the default ones
    (`mergePlugins`) and every plugin's args defaulted."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    #: Extension point (JSON name) → its plugin set, merged.
    plugins: Mapping[str, PluginSet]
    #: The file's `pluginConfig`, in order (plugin name, args: an args type of `ARGS_TYPES`, or the
    #: raw mapping of a plugin kresched does not know).
    plugin_config: tuple[tuple[str, object], ...]
    #: Each in-tree plugin's args as it runs with them: the file's, defaulted, or the defaults.
    args: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class SchedulerConfig:
    """`KubeSchedulerConfiguration` after defaulting (the fields kresched reads or validates)."""

    profiles: tuple[ProfileConfig, ...]
    percentage_of_nodes_to_score: int = 0
    parallelism: int = 16
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    extenders: tuple[Extender, ...] = ()
    #: `leaderElection`, what validation reads: leaderElect, resourceLock, resourceName,
    #: resourceNamespace, and the durations in seconds.
    leader_election: Mapping[str, object] = field(default_factory=dict)
    client_connection_burst: int = 100


@dataclass(frozen=True)
class ProfileSpec:
    """A profile as kube-scheduler's framework runs it: for each extension point the plugins in
    the order they run (`expandMultiPointPlugins`), the Score weights, each plugin's args, and the
    plugins enabled somewhere that are not in-tree (kresched cannot know what they do)."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    #: Extension point (JSON name, not multiPoint) → plugin names in run order.
    points: Mapping[str, tuple[str, ...]]
    #: Score plugin → its weight (unset or 0 counts 1).
    weights: Mapping[str, int]
    args: Mapping[str, object]
    #: Out-of-tree plugin → the extension points it is enabled at (`multiPoint` when through it).
    unknown: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
