"""Scheduler profiles as kresched simulates them: for each profile of the cluster's
KubeSchedulerConfiguration (`sched.config`), its filter plugins in the order they run, its score
plugins with their weights, each built with the profile's args, its PostFilter plugins, its
`percentageOfNodesToScore`, and what kresched cannot simulate of it (`warnings`); and the pods
each profile schedules (`Profiles.for_pod`: by `spec.schedulerName`).

Without a configuration, `Profiles.default()`: the one profile of kube-scheduler v1.36 run without
`--config`, `default-scheduler`, built from the same default plugin set (its plugin objects are
those `runner.default_plugins` and `score.default_score_plugins` build, in the same order).

What is simulated of a profile, and what is said instead:
- Filter plugins run in the profile's Filter order; each one's PreFilter runs before any Filter,
  in that order (upstream runs PreFilters in their own extension point's order, which only an
  explicit reordering of one of the two makes differ). A plugin whose PreFilter is enabled and
  Filter disabled runs its PreFilter only (it can still reject the pod or narrow the nodes).
- Score plugins: the profile's, with its weights. VolumeBinding's score (StorageCapacityScoring,
  off by default) is not simulated, as without a configuration.
- PostFilter: which of DynamicResources and DefaultPreemption run, for the scheduler's message
  and for whether the scheduler itself would preempt.
- Extenders (`Profile.extenders`, `sched.extender`): called as the scheduler calls them once the
  CLI has given them a transport (`Profiles.with_extenders`); until then, and for those an offline
  run cannot reach, a warning says kresched does not call them.
- Warnings: out-of-tree plugins (a scheduler built with them runs them; kresched does not know
  what they do), scheduler extenders not called, a queue sort other than PrioritySort, an extension point
  split from its partner (a Filter without its PreFilter, a Score without its PreScore: kube-
  scheduler fails the pod with an error where kresched still runs both), in-tree plugins behind
  alpha feature gates. Each is named in every answer that profile's simulation gives.
Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import msgspec

from kresched.model.objects import Pod
from kresched.sched.features import FeatureGates
from kresched.sched.framework import SUCCESS, CycleState, FilterPlugin, PreFilterResult, ScorePlugin, Snapshot, Status
from kresched.sched.node_info import NodeInfo

if TYPE_CHECKING:  # a configuration is read only when a file is given: its modules load then
    from kresched.sched.config import ProfileSpec, SchedulerConfig
    from kresched.sched.config import types as cfg_types
    from kresched.sched.dynamic_resources import DynamicResources
    from kresched.sched.extender import Extenders, ExtenderTransport, ServedLookup

#: `v1.DefaultSchedulerName`.
DEFAULT_SCHEDULER_NAME = "default-scheduler"

__all__ = ["Profile", "Profiles", "PreFilterOnly", "build_profile"]

#: The filter plugins kresched simulates, by name.
_FILTERS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
            "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
            "InterPodAffinity", "DynamicResources")
#: The score plugins kresched simulates.
_SCORES = ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
           "DynamicResources", "NodeResourcesBalancedAllocation", "ImageLocality")
#: Upstream plugins whose Filter reads their PreFilter's state (an error without it).
_FILTER_NEEDS_PREFILTER = frozenset({"NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
                                     "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity"})
#: Upstream plugins whose Score reads their PreScore's state (an error without it).
_SCORE_NEEDS_PRESCORE = frozenset({"TaintToleration", "PodTopologySpread", "InterPodAffinity"})
#: In-tree plugins of alpha features, off in v1.36 by default: enabled by a profile, not simulated.
_ALPHA = ("NodeDeclaredFeatures", "GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount")


class PreFilterOnly:
    """A plugin whose PreFilter the profile runs but not its Filter: PreFilter as the plugin's,
    Filter passes every node."""

    __slots__ = ("name", "plugin")

    def __init__(self, plugin: FilterPlugin) -> None:
        self.plugin = plugin
        self.name = plugin.name

    def pre_filter(self, cycle: CycleState, pod: Pod, snapshot: Snapshot) -> PreFilterResult:
        return self.plugin.pre_filter(cycle, pod, snapshot)

    def filter(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS

    def add_pod(self, cycle: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> None:
        self.plugin.add_pod(cycle, pod, pod_to_add, node_info)

    def remove_pod(self, cycle: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> None:
        self.plugin.remove_pod(cycle, pod, pod_to_remove, node_info)


@dataclass(frozen=True)
class Profile:
    """One scheduler profile as kresched runs it."""

    name: str
    filters: tuple[FilterPlugin, ...]
    scores: tuple[tuple[ScorePlugin, int], ...]
    #: PostFilter plugins in order (kresched knows DynamicResources and DefaultPreemption).
    post_filters: tuple[str, ...] = ("DynamicResources", "DefaultPreemption")
    #: The percentage that decides `numFeasibleNodesToFind` (0: adaptive).
    percentage_of_nodes_to_score: int = 0
    #: What kresched cannot simulate of this profile, one sentence each.
    warnings: tuple[str, ...] = ()
    #: NodeResourcesFit's ignored extended resources (by name and by group).
    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    #: The built-in default profile (no configuration was given).
    builtin: bool = False
    #: The scheduler's extenders kresched calls for this profile's pods (the configuration's, shared
    #: by every profile), None when it calls none.
    extenders: Extenders | None = None
    #: The warning for a GangScheduling plugin the profile enables, said while its gate is off
    #: (`Profiles.warnings_for`; with `--feature-gates ...GangScheduling=true` it is simulated).
    gang_plugin: tuple[str, ...] = ()

    @property
    def preempts(self) -> bool:
        """The scheduler itself preempts for this profile's pods (DefaultPreemption runs)."""
        return "DefaultPreemption" in self.post_filters

    def planning_pod(self, pod: Pod) -> Pod:
        """`pod` as kresched plans it with this profile: without the extended resources
        NodeResourcesFit ignores (exact for its filter, and the planner's shortcuts then agree)."""
        if not (self.ignored_resources or self.ignored_resource_groups) or not pod.requests.scalar:
            return pod
        from kresched.sched.node_resources_fit import without_ignored

        stripped = without_ignored(pod.requests, self.ignored_resources, self.ignored_resource_groups)
        if stripped is pod.requests:
            return pod
        copy = msgspec.structs.replace(pod)
        copy.__dict__["requests"] = stripped
        return copy


@dataclass(frozen=True)
class Profiles:
    """The profiles of the cluster's scheduler, by `schedulerName`, and what a pod no profile
    names is simulated with (`fallback`: None, it is left to its own scheduler)."""

    by_name: Mapping[str, Profile]
    #: The configuration file, for messages (None: the built-in default profile).
    source: str | None = None
    fallback: Profile | None = None
    #: Configuration-wide warnings (scheduler extenders), said with every profile's.
    warnings: tuple[str, ...] = field(default=())
    #: Of `warnings`, those about an extender, with it: said of a pod only when it manages the pod.
    extender_warnings: Mapping[str, cfg_types.Extender] = field(default_factory=dict)
    #: The scheduler's `--feature-gates` (`sched.features`): v1.36's defaults unless given.
    gates: FeatureGates = field(default_factory=FeatureGates)

    @classmethod
    def default(cls) -> Profiles:
        """kube-scheduler v1.36 without `--config`. Its plugins are built when a pod first asks for
        its profile: options made at import time (`PlanOptions()` as a default argument) cost a
        command that never simulates (untaint, snapshot, a shell completion) nothing."""
        return cls(_DefaultProfile())

    @property
    def builtin(self) -> bool:
        return self.source is None

    def for_pod(self, pod: Pod) -> Profile | None:
        """The profile that schedules `pod`, or the fallback (None when there is none)."""
        return self.by_name.get(scheduler_name(pod), self.fallback)

    def named(self, pod: Pod) -> Profile | None:
        """The profile `pod`'s schedulerName names (no fallback)."""
        return self.by_name.get(scheduler_name(pod))

    def warnings_for(self, profile: Profile, pod: Pod | None = None) -> tuple[str, ...]:
        """What kresched cannot simulate of `profile`; for `pod`, without the extenders that do
        not manage it (they change nothing of its answer)."""
        own = profile.warnings if self.gates.gang_scheduling else (*profile.warnings, *profile.gang_plugin)
        if pod is None or not self.extender_warnings:
            return (*self.warnings, *own)
        from kresched.sched.extender import is_interested

        ext = self.extender_warnings
        return (*(w for w in self.warnings if w not in ext or is_interested(ext[w], pod)), *own)

    def with_fallback(self) -> Profiles:
        """The same profiles, with pods of other schedulers simulated by the `default-scheduler`
        profile (or, when no profile has that name, the first one)."""
        fallback = self.by_name.get(DEFAULT_SCHEDULER_NAME) or next(iter(self.by_name.values()))
        return replace(self, fallback=fallback)

    def with_extenders(self, extenders: Sequence[cfg_types.Extender], transport: ExtenderTransport,
                       unreachable: Mapping[str, str], served: ServedLookup | None = None) -> Profiles:
        """The same profiles, calling `extenders` (the configuration's) through `transport`, but for
        those in `unreachable` (URL prefix → why: an offline run that could not reach them), which
        keep their warning. The configuration-wide warnings become those. `served`: the objects as
        the API server served them, sent instead of kresched's models (`sched.extender`)."""
        from kresched.sched.extender import Extenders

        called = [e for e in extenders if e.url_prefix not in unreachable]
        exts = Extenders.of(called, transport, served) if called else None
        warned = {_extender_warning(i, e, unreachable[e.url_prefix]): e for i, e in enumerate(extenders)
                  if e.url_prefix in unreachable}
        by_name = {n: replace(p, extenders=exts) for n, p in self.by_name.items()}
        fallback = None if self.fallback is None else replace(self.fallback, extenders=exts)
        return replace(self, by_name=by_name, fallback=fallback, warnings=tuple(warned), extender_warnings=warned)

    def other_scheduler_note(self, pod: Pod) -> str:
        """What is said of a pod of a scheduler no profile names."""
        name = scheduler_name(pod)
        where = f"the scheduler configuration {self.source}" if self.source else "kresched's default profile"
        return (f"scheduled by another scheduler: its schedulerName {name!r} is not a profile of {where}, so "
                "kresched does not simulate where it lands (--simulate-other-schedulers simulates it with the "
                f"{DEFAULT_SCHEDULER_NAME if DEFAULT_SCHEDULER_NAME in self.by_name else 'first'} profile)")


def scheduler_name(pod: Pod) -> str:
    return pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME


_DEFAULT: list[Profile] = []


class _DefaultProfile(Mapping[str, Profile]):
    """`{"default-scheduler": default_profile()}`, built on first use."""

    def __getitem__(self, name: str) -> Profile:
        if name != DEFAULT_SCHEDULER_NAME:
            raise KeyError(name)
        return default_profile()

    def __iter__(self) -> Iterator[str]:
        return iter((DEFAULT_SCHEDULER_NAME,))

    def __len__(self) -> int:
        return 1

    def __contains__(self, name: object) -> bool:
        return name == DEFAULT_SCHEDULER_NAME


def default_profile() -> Profile:
    """kube-scheduler v1.36's profile without `--config` (built once; its plugins are stateless)."""
    if not _DEFAULT:
        from kresched.sched.runner import default_plugins
        from kresched.sched.score import default_score_plugins

        _DEFAULT.append(Profile(DEFAULT_SCHEDULER_NAME, tuple(default_plugins()), tuple(default_score_plugins()),
                                builtin=True))
    return _DEFAULT[0]


def build_profiles(cfg: SchedulerConfig, specs: Sequence[ProfileSpec], source: str) -> Profiles:
    profiles = {s.scheduler_name: build_profile(s, cfg.percentage_of_nodes_to_score) for s in specs}
    warnings = tuple(_extender_warning(i, e) for i, e in enumerate(cfg.extenders))
    return Profiles(profiles, source, None, warnings)


def build_profile(spec: ProfileSpec, global_percentage: int = 0) -> Profile:
    """kresched's plugins for `spec`, each with the profile's args."""
    from kresched.sched.config import types as cfg_types

    points = spec.points
    args = spec.args
    pre_filter, filters = points.get("preFilter", ()), points.get("filter", ())
    warnings: list[str] = []
    chosen: list[FilterPlugin] = []
    for name in filters:
        if name in _FILTERS:
            chosen.append(_filter_plugin(name, args))
            if name in _FILTER_NEEDS_PREFILTER and name not in pre_filter:
                warnings.append(f"{name}'s Filter is enabled without its PreFilter: kube-scheduler fails every pod "
                                "there with an error; kresched runs both")
    for name in pre_filter:
        if name in _FILTERS and name not in filters:
            chosen.append(PreFilterOnly(_filter_plugin(name, args)))
    pre_score, scored = points.get("preScore", ()), points.get("score", ())
    scores: list[tuple[ScorePlugin, int]] = []
    for name in scored:
        if name in _SCORES:
            scores.append((_score_plugin(name, args), spec.weights.get(name, 1)))
            if name in _SCORE_NEEDS_PRESCORE and name not in pre_score:
                warnings.append(f"{name}'s Score is enabled without its PreScore: kube-scheduler fails every pod "
                                "there with an error; kresched runs both")
    sort = points.get("queueSort", ())
    if sort and sort != ("PrioritySort",):
        warnings.append(f"queue sort plugin {', '.join(sort)}: kresched plans pending pods in priority order, as "
                        "PrioritySort sorts them")
    gang_plugin: tuple[str, ...] = ()
    for name in _ALPHA:
        where = [p for p, names in points.items() if name in names]
        if where and name == "GangScheduling":
            gang_plugin = (f"plugin {name} ({', '.join(where)}) belongs to an alpha feature that is off by default: "
                           "kresched simulates it only with --feature-gates GenericWorkload=true,GangScheduling=true",)
        elif where:
            warnings.append(f"plugin {name} ({', '.join(where)}) belongs to an alpha feature that is off by "
                            "default: kresched does not simulate it")
    for name, where in spec.unknown.items():
        warnings.append(f"out-of-tree plugin {name!r} ({', '.join(where)}): kresched cannot simulate it; the "
                        "scheduler may filter, score or bind differently from what is shown")
    fit_args = args.get("NodeResourcesFit")
    ignored: Iterable[str] = ()
    groups: Iterable[str] = ()
    if isinstance(fit_args, cfg_types.NodeResourcesFitArgs) and "NodeResourcesFit" in filters:
        ignored, groups = fit_args.ignored_resources, fit_args.ignored_resource_groups
    pct = spec.percentage_of_nodes_to_score
    return Profile(spec.scheduler_name, tuple(chosen), tuple(scores), tuple(points.get("postFilter", ())),
                   global_percentage if pct is None else pct, tuple(warnings), frozenset(ignored), frozenset(groups),
                   gang_plugin=gang_plugin)


def _extender_warning(i: int, ext: cfg_types.Extender, why: str = "") -> str:
    verbs = [v for v, on in (("filter", ext.filter_verb), ("prioritize", ext.prioritize_verb),
                             ("preempt", ext.preempt_verb), ("bind", ext.bind_verb)) if on]
    name = f"scheduler extender {ext.url_prefix or f'extenders[{i}]'} ({', '.join(verbs) or 'no verbs'})"
    if why:
        return (f"{name}: kresched could not reach it ({why}), so it does not call it; the scheduler may answer "
                "differently")
    return f"{name}: kresched does not call extenders; the scheduler may answer differently"


def _filter_plugin(name: str, args: Mapping[str, object]) -> FilterPlugin:
    from kresched.sched import (
        node_name,
        node_ports,
        node_unschedulable,
        node_volume_limits,
        taint_toleration,
        volume_binding,
        volume_restrictions,
        volume_zone,
    )

    if name == "NodeUnschedulable":
        return node_unschedulable.NodeUnschedulable()
    if name == "NodeName":
        return node_name.NodeName()
    if name == "TaintToleration":
        return taint_toleration.TaintToleration()
    if name == "NodeAffinity":
        return _node_affinity(args)
    if name == "NodePorts":
        return node_ports.NodePorts()
    if name == "NodeResourcesFit":
        return _node_resources_fit(args)
    if name == "VolumeRestrictions":
        return volume_restrictions.VolumeRestrictions()
    if name == "NodeVolumeLimits":
        return node_volume_limits.NodeVolumeLimits()
    if name == "VolumeBinding":
        return volume_binding.VolumeBinding()
    if name == "VolumeZone":
        return volume_zone.VolumeZone()
    if name == "PodTopologySpread":
        return _pod_topology_spread(args)
    if name == "InterPodAffinity":
        return _inter_pod_affinity(args)
    if name == "DynamicResources":
        return _dynamic_resources()
    raise ValueError(f"no filter plugin {name}")


def _dynamic_resources() -> DynamicResources:
    from kresched.sched.dynamic_resources import DynamicResources

    return DynamicResources()


def _score_plugin(name: str, args: Mapping[str, object]) -> ScorePlugin:
    from kresched.sched import image_locality, node_resources_balanced_allocation, taint_toleration
    from kresched.sched.config import types as cfg_types

    if name == "TaintToleration":
        return taint_toleration.TaintToleration()
    if name == "NodeAffinity":
        return _node_affinity(args)
    if name == "NodeResourcesFit":
        return _node_resources_fit(args)
    if name == "DynamicResources":
        return _dynamic_resources()
    if name == "PodTopologySpread":
        return _pod_topology_spread(args)
    if name == "InterPodAffinity":
        return _inter_pod_affinity(args)
    if name == "NodeResourcesBalancedAllocation":
        a = args.get(name)
        resources = tuple((r.name, r.weight) for r in a.resources) \
            if isinstance(a, cfg_types.NodeResourcesBalancedAllocationArgs) else \
            node_resources_balanced_allocation.DEFAULT_RESOURCES
        return node_resources_balanced_allocation.NodeResourcesBalancedAllocation(resources)
    if name == "ImageLocality":
        return image_locality.ImageLocality()
    raise ValueError(f"no score plugin {name}")


def _node_affinity(args: Mapping[str, object]) -> FilterPlugin:
    from kresched.sched import node_affinity
    from kresched.sched.config import types as cfg_types

    a = args.get("NodeAffinity")
    return node_affinity.NodeAffinity(a.added_affinity if isinstance(a, cfg_types.NodeAffinityArgs) else None)


def _node_resources_fit(args: Mapping[str, object]) -> FilterPlugin:
    from kresched.sched import node_resources_fit
    from kresched.sched.config import types as cfg_types

    a = args.get("NodeResourcesFit")
    if not isinstance(a, cfg_types.NodeResourcesFitArgs) or a.scoring_strategy is None:
        return node_resources_fit.NodeResourcesFit()
    s = a.scoring_strategy
    return node_resources_fit.NodeResourcesFit(
        s.type, tuple((r.name, r.weight) for r in s.resources),
        tuple((p.utilization, p.score) for p in s.shape or ()), a.ignored_resources, a.ignored_resource_groups)


def _pod_topology_spread(args: Mapping[str, object]) -> FilterPlugin:
    from kresched.sched import pod_topology_spread
    from kresched.sched.config import types as cfg_types

    a = args.get("PodTopologySpread")
    if isinstance(a, cfg_types.PodTopologySpreadArgs) and a.defaulting_type == "List":
        return pod_topology_spread.PodTopologySpread(a.default_constraints)
    return pod_topology_spread.PodTopologySpread()


def _inter_pod_affinity(args: Mapping[str, object]) -> FilterPlugin:
    from kresched.sched import interpod_affinity
    from kresched.sched.config import types as cfg_types

    a = args.get("InterPodAffinity")
    if not isinstance(a, cfg_types.InterPodAffinityArgs):
        return interpod_affinity.InterPodAffinity()
    return interpod_affinity.InterPodAffinity(
        interpod_affinity.DEFAULT_HARD_POD_AFFINITY_WEIGHT if a.hard_pod_affinity_weight is None
        else a.hard_pod_affinity_weight, a.ignore_preferred_terms_of_existing_pods)
