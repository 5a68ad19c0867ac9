"""What kube-scheduler's framework makes of a defaulted profile (`NewFramework` in
pkg/scheduler/framework/runtime/framework.go): for each extension point, the plugins that run
there and in which order (`updatePluginList`, then `expandMultiPointPlugins`), the Score weights
(`getValidScoreWeights`), and the refusals it starts with (a plugin enabled where it does not
extend, registered twice, no queue sort or bind plugin, weights that could overflow).

kresched knows the in-tree plugins of v1.36 and the extension points each implements
(`IN_TREE`). A plugin it does not know is out of tree: a scheduler built with it runs it; kresched
keeps where it is enabled (`ProfileSpec.unknown`) so that every answer it could change says so,
and never guesses what it does. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

from kresched.sched.config.decode import ConfigError
from kresched.sched.config.types import ProfileConfig, ProfileSpec, SchedulerConfig

__all__ = ["IN_TREE", "POINTS", "expand_profile", "expand_profiles"]

#: The extension points a profile expands to (`getExtensionPoints`), JSON name → Go plugin type.
POINTS: Mapping[str, str] = {
    "preFilter": "PreFilterPlugin", "filter": "FilterPlugin", "postFilter": "PostFilterPlugin",
    "reserve": "ReservePlugin", "preScore": "PreScorePlugin", "score": "ScorePlugin", "preBind": "PreBindPlugin",
    "bind": "BindPlugin", "postBind": "PostBindPlugin", "permit": "PermitPlugin", "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin", "placementGenerate": "PlacementGeneratePlugin",
    "placementScore": "PlacementScorePlugin",
}

#: The in-tree registry of v1.36 (`NewInTreeRegistry`): each plugin and the extension points it
#: implements. (NodeDeclaredFeatures, GangScheduling, TopologyPlacementGenerator and
#: PodGroupPodsCount are registered whatever their feature gates say; the gates only decide
#: whether the default profile enables them, and they are off by default.)
IN_TREE: Mapping[str, frozenset[str]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score", "placementScore"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "DynamicResources": frozenset({"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind", "score"}),
    "DefaultPreemption": frozenset({"preEnqueue", "postFilter"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
    "NodeDeclaredFeatures": frozenset({"preFilter", "filter"}),
    "GangScheduling": frozenset({"preEnqueue", "permit"}),
    "TopologyPlacementGenerator": frozenset({"placementGenerate"}),
    "PodGroupPodsCount": frozenset({"placementScore"}),
}

#: `fwk.MaxScore`, `fwk.MaxTotalScore` (math.MaxInt64): the weights' sum times 100 must fit.
_MAX_SCORE = 100
_MAX_TOTAL_SCORE = 2**63 - 1


def expand_profiles(cfg: SchedulerConfig) -> tuple[ProfileSpec, ...]:
    return tuple(expand_profile(p) for p in cfg.profiles)


def expand_profile(profile: ProfileConfig) -> ProfileSpec:
    """The profile as the framework runs it; `ConfigError` where `NewFramework` fails."""
    name = profile.scheduler_name
    plugins = profile.plugins
    unknown: dict[str, list[str]] = {}
    points: dict[str, tuple[str, ...]] = {}
    multi = plugins.get("multiPoint")
    multi_enabled = multi.enabled if multi is not None else ()
    for ref in multi_enabled:
        if ref.name not in IN_TREE:
            unknown.setdefault(ref.name, []).append("multiPoint")
    for point, go_type in POINTS.items():
        ps = plugins.get(point)
        enabled_refs = ps.enabled if ps is not None else ()
        disabled = set(ps.disabled) if ps is not None else set()
        # updatePluginList
        enabled: list[str] = []
        for ref in enabled_refs:
            implements = IN_TREE.get(ref.name)
            if implements is None:
                unknown.setdefault(ref.name, []).append(point)
            elif point not in implements:
                raise _fail(name, f'plugin "{ref.name}" does not extend {go_type} plugin')
            if ref.name in enabled:
                raise _fail(name, f'plugin "{ref.name}" already registered as "{go_type}"')
            enabled.append(ref.name)
        if "*" in disabled or not multi_enabled:
            points[point] = tuple(enabled)
            continue
        # expandMultiPointPlugins
        overrides: list[str] = []
        from_multi: list[str] = []
        for ref in multi_enabled:
            implements = IN_TREE.get(ref.name)
            if implements is None or point not in implements:
                continue  # out of tree: unknown where it runs (kept in `unknown`)
            if ref.name in disabled:
                continue
            if ref.name in enabled:
                if ref.name not in overrides:
                    overrides.append(ref.name)
                continue
            if ref.name in from_multi:
                raise _fail(name, f'plugin "{ref.name}" already registered as "{go_type}"')
            from_multi.append(ref.name)
        first = [n for n in enabled if n in overrides]
        rest = [n for n in enabled if n not in overrides]
        points[point] = (*first, *from_multi, *rest)
    if not points["queueSort"] and not _maybe_elsewhere(unknown, "queueSort"):
        raise _fail(name, f'only one queue sort plugin required for profile with scheduler name "{name}", but got 0')
    if len(points["queueSort"]) > 1:
        raise _fail(name, f'only one queue sort plugin required for profile with scheduler name "{name}", '
                          f'but got {len(points["queueSort"])}')
    if not points["bind"] and not _maybe_elsewhere(unknown, "bind"):
        raise _fail(name, f'at least one bind plugin is needed for profile with scheduler name "{name}"')
    weights = _score_weights(name, plugins, points["score"])
    return ProfileSpec(name, profile.percentage_of_nodes_to_score, points, weights, dict(profile.args),
                       {k: tuple(dict.fromkeys(v)) for k, v in unknown.items()})


def _maybe_elsewhere(unknown: Mapping[str, list[str]], point: str) -> bool:
    """An out-of-tree plugin enabled at `point` or through multiPoint may be the one it needs."""
    return any(point in where or "multiPoint" in where for where in unknown.values())


def _score_weights(name: str, plugins: Mapping[str, object], scored: tuple[str, ...]) -> dict[str, int]:
    """`getValidScoreWeights` over Score's enabled plugins, then multiPoint's: the first mention
    wins (a Score entry over the multiPoint one), a weight unset or 0 counts 1."""
    refs = []
    for point in ("score", "multiPoint"):
        ps = plugins.get(point)
        if ps is not None:
            refs.extend(ps.enabled)  # type: ignore[attr-defined]
    weights: dict[str, int] = {}
    total = 0
    for ref in refs:
        implements = IN_TREE.get(ref.name)
        if implements is not None and "score" not in implements:
            continue
        if ref.name in weights:
            continue
        w = ref.weight or 1
        if w * _MAX_SCORE > _MAX_TOTAL_SCORE - total:
            raise _fail(name, "score plugins: total score of Score plugins could overflow")
        weights[ref.name] = w
        total += w * _MAX_SCORE
    return {n: weights.get(n, 1) for n in scored} | {n: w for n, w in weights.items() if n not in IN_TREE}


def _fail(profile: str, msg: str) -> ConfigError:
    return ConfigError(f'creating profile for scheduler name "{profile}": {msg}')
