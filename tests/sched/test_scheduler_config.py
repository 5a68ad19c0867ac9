"""Reading a KubeSchedulerConfiguration as kube-scheduler v1.36 reads its `--config`: the merging
of a profile's plugins with the default set, the defaults of every plugin's args, the validation
and its words, and what the framework makes of a profile (extension points, order, weights),
against upstream's own test tables:

- pkg/scheduler/apis/config/v1/default_plugins_test.go `TestMergePlugins` (every case);
- pkg/scheduler/apis/config/v1/defaults_test.go `TestPluginArgsDefaults` and `TestSchedulerDefaults`
  (the cases that do not need a feature gate other than v1.36's defaults);
- pkg/scheduler/apis/config/validation/validation_test.go `TestValidateKubeSchedulerConfigurationV1`
  and validation_pluginargs_test.go (each `Validate*Args` table, the rows kresched can express as a
  file: a document is what an operator has, so each case is written as one);
- pkg/scheduler/framework/runtime/framework_test.go `TestNewFrameworkMultiPointExpansion` (with
  in-tree plugins in place of upstream's test plugin, which implements every extension point).

Ids are `<Go test name>/<upstream case name>` for ported cases. Left out, and why:
- TestSchedulerDefaults "Prallelism with no port", "set non default delayCacheUntilActive" and the
  leader-election/client-connection fields: kresched keeps only what validation reads of them.
- TestPluginArgsDefaults "VolumeBindingArgs empty, StorageCapacityScoring enabled" and "DynamicResourcesArgs
  defaults, DRADeviceBindingConditions enabled": those gates are off in v1.36 by default and
  kresched reads a file as a scheduler with the default gates does.
- TestValidateKubeSchedulerConfigurationV1 "one-empty-queue-sort" (a profile whose `Plugins` is
  nil cannot come out of defaulting a file), "invalid-plugin-args" (args of another type can
  only be built in Go; from a file, another `kind` is the decoder's error, tested below),
  "bad-resource-name-not-set" and "bad-resource-namespace-not-set" (upstream validates a struct
  that was never defaulted; from a file, an empty name or namespace is defaulted to
  kube-scheduler / kube-system, as kube-scheduler does, and is valid — tested below). Upstream
  runs the validation alone, without the framework: so does `_invalid` (the framework refuses the
  valid config itself, which enables CustomSort besides PrioritySort — tested below).
- validation_pluginargs_test.go: the cases that need StorageCapacityScoring or the DRA gates on.
"""

from __future__ import annotations

from typing import Any

import pytest

from kresched.model.specs import TopologySpreadConstraint
from kresched.sched.config import ConfigError, parse_scheduler_config
from kresched.sched.config.decode import decode_scheduler_config
from kresched.sched.config.defaults import DEFAULT_MULTI_POINT, merge_plugins, with_defaults
from kresched.sched.config.types import (
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginRef,
    PluginSet,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    VolumeBindingArgs,
)

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _doc(**fields: Any) -> dict[str, Any]:
    return {**API, **fields}


def _error(doc: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as exc:
        parse_scheduler_config(doc)
    return exc.value.message


def _ps(*names: str | tuple[str, int], disabled: tuple[str, ...] = ()) -> PluginSet:
    refs = tuple(PluginRef(n) if isinstance(n, str) else PluginRef(*n) for n in names)
    return PluginSet(refs, disabled)


# -- TestMergePlugins ---------------------------------------------------------------------------------

_MP = "TestMergePlugins/"


@pytest.mark.parametrize(("custom", "default", "want"), [
    pytest.param({"filter": _ps("CustomPlugin")}, {"filter": _ps("DefaultPlugin1", "DefaultPlugin2")},
                 {"filter": _ps("DefaultPlugin1", "DefaultPlugin2", "CustomPlugin")}, id=_MP + "AppendCustomPlugin"),
    pytest.param({"filter": _ps("CustomPlugin", "DefaultPlugin2", disabled=("DefaultPlugin2",))},
                 {"filter": _ps("DefaultPlugin1", "DefaultPlugin2")},
                 {"filter": _ps("DefaultPlugin1", "CustomPlugin", "DefaultPlugin2", disabled=("DefaultPlugin2",))},
                 id=_MP + "InsertAfterDefaultPlugins2"),
    pytest.param({"filter": _ps("CustomPlugin", "DefaultPlugin1", "DefaultPlugin2", disabled=("*",))},
                 {"filter": _ps("DefaultPlugin1", "DefaultPlugin2")},
                 {"filter": _ps("CustomPlugin", "DefaultPlugin1", "DefaultPlugin2", disabled=("*",))},
                 id=_MP + "InsertBeforeAllPlugins"),
    pytest.param({"filter": _ps("DefaultPlugin2", "DefaultPlugin1", disabled=("*",))},
                 {"filter": _ps("DefaultPlugin1", "DefaultPlugin2")},
                 {"filter": _ps("DefaultPlugin2", "DefaultPlugin1", disabled=("*",))},
                 id=_MP + "ReorderDefaultPlugins"),
    pytest.param(None, {"filter": _ps("DefaultPlugin1", "DefaultPlugin2")},
                 {"filter": _ps("DefaultPlugin1", "DefaultPlugin2")}, id=_MP + "ApplyNilCustomPlugin"),
    pytest.param({"filter": _ps(("Plugin1", 2), ("Plugin3", 3))}, {"filter": _ps("Plugin1", "Plugin2", "Plugin3")},
                 {"filter": _ps(("Plugin1", 2), "Plugin2", ("Plugin3", 3))},
                 id=_MP + "CustomPluginOverrideDefaultPlugin"),
    pytest.param({"filter": _ps(("Plugin2", 2), ("Plugin1", 1))}, {"filter": _ps("Plugin1", "Plugin2", "Plugin3")},
                 {"filter": _ps(("Plugin1", 1), ("Plugin2", 2), "Plugin3")}, id=_MP + "OrderPreserveAfterOverride"),
    pytest.param({"filter": _ps("Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4))},
                 {"filter": _ps("Plugin1", "Plugin2", "Plugin3")},
                 {"filter": _ps("Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2))},
                 id=_MP + "RepeatedCustomPlugin"),
    pytest.param({"multiPoint": _ps("CustomPlugin")}, {"multiPoint": _ps("DefaultPlugin1", "DefaultPlugin2")},
                 {"multiPoint": _ps("DefaultPlugin1", "DefaultPlugin2", "CustomPlugin")},
                 id=_MP + "Append custom MultiPoint plugin"),
    pytest.param({"multiPoint": _ps("CustomPlugin", "CustomPlugin2", disabled=("DefaultPlugin2",)),
                  "score": _ps(disabled=("CustomPlugin2",))},
                 {"multiPoint": _ps("DefaultPlugin1", "DefaultPlugin2")},
                 {"multiPoint": _ps("DefaultPlugin1", "CustomPlugin", "CustomPlugin2", disabled=("DefaultPlugin2",)),
                  "score": _ps(disabled=("CustomPlugin2",))}, id=_MP + "Append disabled Multipoint plugins"),
    pytest.param({"multiPoint": _ps(("DefaultPlugin", 5))}, {"multiPoint": _ps("DefaultPlugin")},
                 {"multiPoint": _ps(("DefaultPlugin", 5))},
                 id=_MP + "override default MultiPoint plugins with custom value"),
    pytest.param({"multiPoint": _ps("CustomPlugin")},
                 {"multiPoint": _ps("DefaultPlugin", disabled=("DefaultPlugin2",))},
                 {"multiPoint": _ps("DefaultPlugin", "CustomPlugin", disabled=("DefaultPlugin2",))},
                 id=_MP + "disabled MultiPoint plugin in default set"),
    pytest.param({"multiPoint": _ps("CustomPlugin")},
                 {"multiPoint": _ps("DefaultPlugin"), "score": _ps(disabled=("DefaultPlugin2",))},
                 {"multiPoint": _ps("DefaultPlugin", "CustomPlugin"), "score": _ps(disabled=("DefaultPlugin2",))},
                 id=_MP + "disabled MultiPoint plugin in default set for specific extension point"),
    pytest.param({"multiPoint": _ps(disabled=("DefaultPlugin",))}, {"multiPoint": _ps("DefaultPlugin")},
                 {"multiPoint": _ps(disabled=("DefaultPlugin",))},
                 id=_MP + "multipoint with only disabled gets merged"),
])
def test_merge_plugins(custom: dict[str, PluginSet] | None, default: dict[str, PluginSet],
                       want: dict[str, PluginSet]) -> None:
    assert merge_plugins(custom, default) == want


# -- TestPluginArgsDefaults -------------------------------------------------------------------------

_PA = "TestPluginArgsDefaults/"
_CPU_MEM = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@pytest.mark.parametrize(("given", "want"), [
    pytest.param(DefaultPreemptionArgs(), DefaultPreemptionArgs(10, 100), id=_PA + "DefaultPreemptionArgs empty"),
    pytest.param(DefaultPreemptionArgs(50), DefaultPreemptionArgs(50, 100),
                 id=_PA + "DefaultPreemptionArgs with value"),
    pytest.param(InterPodAffinityArgs(), InterPodAffinityArgs(1), id=_PA + "InterPodAffinityArgs empty"),
    pytest.param(InterPodAffinityArgs(0), InterPodAffinityArgs(0), id=_PA + "InterPodAffinityArgs explicit 0"),
    pytest.param(InterPodAffinityArgs(5), InterPodAffinityArgs(5), id=_PA + "InterPodAffinityArgs with value"),
    pytest.param(NodeResourcesBalancedAllocationArgs(), NodeResourcesBalancedAllocationArgs(_CPU_MEM),
                 id=_PA + "NodeResourcesBalancedAllocationArgs resources empty"),
    pytest.param(NodeResourcesBalancedAllocationArgs((ResourceSpec("scalar.io/scalar1", 1),)),
                 NodeResourcesBalancedAllocationArgs((ResourceSpec("scalar.io/scalar1", 1),)),
                 id=_PA + "NodeResourcesBalancedAllocationArgs with scalar resource"),
    pytest.param(NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 1), ResourceSpec("scalar.io/scalar1", 1))),
                 NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 1), ResourceSpec("scalar.io/scalar1", 1))),
                 id=_PA + "NodeResourcesBalancedAllocationArgs with mixed resources"),
    pytest.param(NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu"), ResourceSpec("scalar.io/scalar0"),
                                                      ResourceSpec("scalar.io/scalar1", 1))),
                 NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 1), ResourceSpec("scalar.io/scalar0", 1),
                                                      ResourceSpec("scalar.io/scalar1", 1))),
                 id=_PA + "NodeResourcesBalancedAllocationArgs have resource no weight"),
    pytest.param(PodTopologySpreadArgs(), PodTopologySpreadArgs((), "System"),
                 id=_PA + "PodTopologySpreadArgs resources empty"),
    pytest.param(PodTopologySpreadArgs((TopologySpreadConstraint(2, "planet", "DoNotSchedule"),)),
                 PodTopologySpreadArgs((TopologySpreadConstraint(2, "planet", "DoNotSchedule"),), "System"),
                 id=_PA + "PodTopologySpreadArgs resources with value"),
    pytest.param(NodeResourcesFitArgs(),
                 NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("LeastAllocated", _CPU_MEM)),
                 id=_PA + "NodeResourcesFitArgs not set"),
    pytest.param(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("MostAllocated")),
                 NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("MostAllocated", _CPU_MEM)),
                 id=_PA + "NodeResourcesFitArgs Resources empty"),
    pytest.param(VolumeBindingArgs(), VolumeBindingArgs(600),
                 id=_PA + "VolumeBindingArgs empty, StorageCapacityScoring disabled"),
])
def test_plugin_args_defaults(given: object, want: object) -> None:
    assert with_defaults(given) == want


# -- TestSchedulerDefaults ----------------------------------------------------------------------------

_SD = "TestSchedulerDefaults/"


def test_an_empty_config_is_the_default_profile_with_every_default_plugin() -> None:
    """TestSchedulerDefaults/empty config: one profile, `default-scheduler`, the default plugins
    through multiPoint (v1.36's default gates: DynamicResources before DefaultPreemption), every
    in-tree plugin that takes args with its defaults, and the adaptive percentage."""
    cfg, (spec,) = parse_scheduler_config(_doc())
    (profile,) = cfg.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.plugins == {"multiPoint": PluginSet(DEFAULT_MULTI_POINT)}
    assert [p.name for p in DEFAULT_MULTI_POINT][13:16] == ["InterPodAffinity", "DynamicResources", "DefaultPreemption"]
    assert sorted(profile.args) == sorted(["DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity",
                                           "NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread",
                                           "VolumeBinding"])
    assert (cfg.percentage_of_nodes_to_score, cfg.parallelism, cfg.pod_initial_backoff_seconds,
            cfg.pod_max_backoff_seconds) == (0, 16, 1, 10)
    assert spec.percentage_of_nodes_to_score is None


@pytest.mark.parametrize(("fields", "want_names", "want_global", "want_profile"), [
    pytest.param({"profiles": [{"pluginConfig": [{"name": "PodTopologySpread"}]}]}, ["default-scheduler"], 0, [None],
                 id=_SD + "no scheduler name"),
    pytest.param({"parallelism": 8}, ["default-scheduler"], 0, [None], id=_SD + "set non default parallelism"),
    pytest.param({"percentageOfNodesToScore": 50}, ["default-scheduler"], 50, [None],
                 id=_SD + "set non default global percentageOfNodesToScore"),
    pytest.param({"profiles": [{"percentageOfNodesToScore": 50}]}, ["default-scheduler"], 0, [50],
                 id=_SD + "set non default profile percentageOfNodesToScore"),
    pytest.param({"percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]},
                 ["default-scheduler"], 10, [50],
                 id=_SD + "set non default global and profile percentageOfNodesToScore"),
    pytest.param({"profiles": [{"pluginConfig": [{"name": "foo", "args": {"bar": "baz"}}]}]}, ["default-scheduler"], 0,
                 [None], id=_SD + "unknown plugin config"),
])
def test_scheduler_defaults(fields: dict[str, Any], want_names: list[str], want_global: int,
                            want_profile: list[int | None]) -> None:
    cfg, specs = parse_scheduler_config(_doc(**fields))
    assert [p.scheduler_name for p in cfg.profiles] == want_names
    assert cfg.percentage_of_nodes_to_score == want_global
    assert [s.percentage_of_nodes_to_score for s in specs] == want_profile


def test_two_profiles_get_no_default_name_and_must_name_themselves() -> None:
    """TestSchedulerDefaults/two profiles: only a lone profile is named `default-scheduler`; with
    two, a nameless one is refused by validation."""
    assert _error(_doc(profiles=[{}, {"schedulerName": "custom-scheduler"}])) == \
        "profiles[0].schedulerName: Required value"
    cfg, _ = parse_scheduler_config(_doc(profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}]))
    assert [p.scheduler_name for p in cfg.profiles] == ["a", "b"]


def test_unknown_plugin_args_are_kept_as_given() -> None:
    cfg, _ = parse_scheduler_config(_doc(profiles=[{"pluginConfig": [{"name": "foo", "args": {"bar": "baz"}}]}]))
    assert cfg.profiles[0].plugin_config == (("foo", {"bar": "baz"}),)


# -- TestValidateKubeSchedulerConfigurationV1 ---------------------------------------------------------

_V = "TestValidateKubeSchedulerConfigurationV1/"
_LE = {"resourceLock": "leases", "leaderElect": True, "leaseDuration": "30s", "renewDeadline": "15s",
       "retryPeriod": "5s", "resourceNamespace": "name", "resourceName": "name"}


def _valid(**changes: Any) -> dict[str, Any]:
    """upstream's `validConfig`, as a file."""
    doc: dict[str, Any] = _doc(
        parallelism=8,
        clientConnection={"acceptContentTypes": "application/json", "contentType": "application/json", "qps": 10,
                          "burst": 10},
        leaderElection=dict(_LE),
        podInitialBackoffSeconds=1, podMaxBackoffSeconds=1,
        profiles=[
            {"schedulerName": "me", "percentageOfNodesToScore": 35,
             "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}, "score": {"disabled": [{"name": "*"}]}},
             "pluginConfig": [{"name": "DefaultPreemption",
                               "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}}]},
            {"schedulerName": "other", "percentageOfNodesToScore": 35,
             "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]},
                         "bind": {"enabled": [{"name": "CustomBind"}]}}},
        ],
        extenders=[{"prioritizeVerb": "prioritize", "weight": 1}],
    )
    for path, value in changes.items():
        target: Any = doc
        keys = path.split(".")
        for k in keys[:-1]:
            target = target[int(k)] if k.isdigit() else target[k]
        last = keys[-1]
        if value is _DELETE:
            del target[last]
        elif last.isdigit():
            target[int(last)] = value
        else:
            target[last] = value
    return doc


_DELETE = object()


def _invalid(doc: dict[str, Any]) -> str:
    """The validation's refusal alone (upstream's test runs no framework)."""
    with pytest.raises(ConfigError) as exc:
        decode_scheduler_config(doc)
    return exc.value.message


def test_the_valid_config_is_valid() -> None:
    """TestValidateKubeSchedulerConfigurationV1/good (and valid-plugins)."""
    decode_scheduler_config(_valid())
    doc = _valid()
    doc["profiles"][0]["plugins"]["score"]["enabled"] = [{"name": "PodTopologySpread", "weight": 2}]
    decode_scheduler_config(doc)


def test_the_valid_config_still_fails_to_build_a_framework_with_two_queue_sorts() -> None:
    """Its CustomSort comes on top of the default PrioritySort (multiPoint): kube-scheduler refuses
    to start with it, and so does kresched."""
    assert _error(_valid()) == ('creating profile for scheduler name "me": only one queue sort plugin required for '
                                'profile with scheduler name "me", but got 2')


@pytest.mark.parametrize("key", ["resourceName", "resourceNamespace", "resourceLock"])
def test_an_empty_leader_election_name_is_defaulted_from_a_file(key: str) -> None:
    cfg = decode_scheduler_config(_valid(**{f"leaderElection.{key}": ""}))
    assert cfg.leader_election[key] == {"resourceName": "kube-scheduler", "resourceNamespace": "kube-system",
                                        "resourceLock": "leases"}[key]


@pytest.mark.parametrize(("changes", "want"), [
    pytest.param({"parallelism": 0}, "parallelism: Invalid value: 0: should be an integer value greater than zero",
                 id=_V + "bad-parallelism-invalid-value"),
    pytest.param({"leaderElection.resourceLock": "configmap"},
                 'leaderElection.resourceLock: Invalid value: "configmap": resourceLock value must be "leases"',
                 id=_V + "bad-resource-lock-not-leases"),
    pytest.param({"percentageOfNodesToScore": 101},
                 "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
                 id=_V + "bad-percentage-of-nodes-to-score"),
    pytest.param({"percentageOfNodesToScore": -1},
                 "percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
                 id=_V + "negative-percentage-of-nodes-to-score"),
    pytest.param({"profiles.1.schedulerName": ""}, "profiles[1].schedulerName: Required value",
                 id=_V + "scheduler-name-not-set"),
    pytest.param({"profiles.0.schedulerName": "other"},
                 'profiles[1].schedulerName: Duplicate value: "profiles[0].schedulerName"',
                 id=_V + "repeated-scheduler-name"),
    pytest.param({"profiles.1.percentageOfNodesToScore": 101},
                 "profiles[1].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
                 id=_V + "greater-than-100-profile-percentage-of-nodes-to-score"),
    pytest.param({"profiles.1.percentageOfNodesToScore": -1},
                 "profiles[1].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
                 id=_V + "negative-profile-percentage-of-nodes-to-score"),
    pytest.param({"profiles.1.plugins.queueSort.enabled.0.name": "AnotherSort"},
                 'profiles[1].plugins.queueSort: Invalid value: config.PluginSet{Enabled:[]config.Plugin{config.Plugin{'
                 'Name:"AnotherSort", Weight:0}}, Disabled:[]config.Plugin(nil)}: must be the same for all profiles',
                 id=_V + "different-queue-sort"),
    pytest.param({"extenders.0.weight": -1},
                 "extenders[0].weight: Invalid value: -1: must have a positive weight applied to it",
                 id=_V + "extender-negative-weight"),
    pytest.param({"extenders.0.managedResources": [{"name": "example.com/foo"}, {"name": "example.com/foo"}]},
                 'extenders[0].managedResources[1].name: Invalid value: "example.com/foo": duplicate extender managed '
                 "resource name", id=_V + "extender-duplicate-managed-resources"),
    pytest.param({"extenders": [{"prioritizeVerb": "prioritize", "weight": 1, "bindVerb": "foo"},
                                {"prioritizeVerb": "prioritize", "bindVerb": "bar", "weight": 1}]},
                 'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can '
                 'implement bind',
                 id=_V + "extender-duplicate-bind"),
    pytest.param({"profiles.0.pluginConfig": [{"name": "DefaultPreemption", "args": {
        "minCandidateNodesPercentage": 200, "minCandidateNodesAbsolute": 100}}]},
                 "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 200: not in valid range "
                 "[0, 100]", id=_V + "invalid-node-percentage"),
    pytest.param({"profiles.0.pluginConfig": [{"name": "config"}, {"name": "config"}]},
                 'profiles[0].pluginConfig[1]: Duplicate value: "config"', id=_V + "duplicated-plugin-config"),
    pytest.param({"profiles": [
        {"schedulerName": "me", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
         "pluginConfig": [{"name": "PrioritySort"}]},
        {"schedulerName": "other", "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
         "pluginConfig": [{"name": "CustomSort"}]}]},
        'profiles[1].plugins.queueSort: Invalid value: config.PluginSet{Enabled:[]config.Plugin{config.Plugin{'
        'Name:"CustomSort", Weight:0}}, Disabled:[]config.Plugin(nil)}: must be the same for all profiles',
        id=_V + "mismatch-queue-sort"),
    pytest.param({"profiles.0.plugins.score.enabled": [{"name": "AzureDiskLimits"}, {"name": "CinderLimits"},
                                                       {"name": "EBSLimits"}, {"name": "GCEPDLimits"}]},
                 '[profiles[0].plugins.score.enabled[0]: Invalid value: "AzureDiskLimits": was invalid in version '
                 '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
                 '"kubescheduler.config.k8s.io/v1"), '
                 'profiles[0].plugins.score.enabled[1]: Invalid value: "CinderLimits": was invalid in version '
                 '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
                 '"kubescheduler.config.k8s.io/v1"), '
                 'profiles[0].plugins.score.enabled[2]: Invalid value: "EBSLimits": was invalid in version '
                 '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
                 '"kubescheduler.config.k8s.io/v1"), '
                 'profiles[0].plugins.score.enabled[3]: Invalid value: "GCEPDLimits": was invalid in version '
                 '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
                 '"kubescheduler.config.k8s.io/v1")]',
                 id=_V + "invalid-plugins"),
])
def test_validate_kube_scheduler_configuration(changes: dict[str, Any], want: str) -> None:
    assert _invalid(_valid(**changes)) == want


# -- validation_pluginargs_test.go --------------------------------------------------------------------


def _args(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return _doc(profiles=[{"pluginConfig": [{"name": name, "args": args}]}])


_A = "profiles[0].pluginConfig[0].args"


@pytest.mark.parametrize(("name", "args", "want"), [
    pytest.param("DefaultPreemption", {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
                 f"{_A}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
                 id="TestValidateDefaultPreemptionArgs/negative minCandidateNodesPercentage"),
    pytest.param("DefaultPreemption", {"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
                 f"{_A}.minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]",
                 id="TestValidateDefaultPreemptionArgs/minCandidateNodesPercentage over 100"),
    pytest.param("DefaultPreemption", {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
                 f"{_A}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
                 id="TestValidateDefaultPreemptionArgs/negative minCandidateNodesAbsolute"),
    pytest.param("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
                 f"[{_A}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                 f"minCandidateNodesAbsolute, {_A}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the "
                 "same time as minCandidateNodesPercentage]", id="TestValidateDefaultPreemptionArgs/all zero"),
    pytest.param("DefaultPreemption", {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
                 f"[{_A}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100], "
                 f"{_A}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)]",
                 id="TestValidateDefaultPreemptionArgs/both negative"),
    pytest.param("InterPodAffinity", {"hardPodAffinityWeight": -1},
                 f"{_A}.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]",
                 id="TestValidateInterPodAffinityArgs/hardPodAffinityWeight less than min"),
    pytest.param("InterPodAffinity", {"hardPodAffinityWeight": 101},
                 f"{_A}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
                 id="TestValidateInterPodAffinityArgs/hardPodAffinityWeight more than max"),
    pytest.param("PodTopologySpread", {"defaultConstraints": [
        {"maxSkew": -1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}], "defaultingType": "List"},
        f"{_A}.defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)",
        id="TestValidatePodTopologySpreadArgs/maxSkew less than zero"),
    pytest.param("PodTopologySpread", {"defaultConstraints": [
        {"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}], "defaultingType": "List"},
        f"{_A}.defaultConstraints[0].topologyKey: Required value: can not be empty",
        id="TestValidatePodTopologySpreadArgs/empty topology key"),
    pytest.param("PodTopologySpread", {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "node"}],
                                       "defaultingType": "List"},
                 f"{_A}.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty",
                 id="TestValidatePodTopologySpreadArgs/whenUnsatisfiable is empty"),
    pytest.param("PodTopologySpread", {"defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "Unknown"}], "defaultingType": "List"},
        f'{_A}.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Unknown": supported values: '
        '"DoNotSchedule", "ScheduleAnyway"', id="TestValidatePodTopologySpreadArgs/whenUnsatisfiable contains "
                                                "unsupported action"),
    pytest.param("PodTopologySpread", {"defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}], "defaultingType": "List"},
        f'{_A}.defaultConstraints[1]: Duplicate value: "{{node, DoNotSchedule}}"',
        id="TestValidatePodTopologySpreadArgs/duplicated constraints"),
    pytest.param("PodTopologySpread", {"defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"foo": "bar"}}}], "defaultingType": "List"},
        f"{_A}.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they "
        "deduced for each pod", id="TestValidatePodTopologySpreadArgs/label selector present"),
    pytest.param("PodTopologySpread", {"defaultingType": "Unknown"},
                 f'{_A}.defaultingType: Unsupported value: "Unknown": supported values: "System", "List"',
                 id="TestValidatePodTopologySpreadArgs/wrong constraints"),
    pytest.param("PodTopologySpread", {"defaultConstraints": [
        {"maxSkew": 3, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}],
        "defaultingType": "System"},
        f'{_A}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
        id="TestValidatePodTopologySpreadArgs/system default constraints, but has constraints"),
    pytest.param("NodeResourcesBalancedAllocation", {"resources": [{"name": "memory", "weight": 2},
                                                                   {"name": "scalar", "weight": 1}]},
                 f"{_A}.resources[0].weight: Invalid value: 2: must be 1",
                 id="TestValidateNodeResourcesBalancedAllocationArgs/invalid config"),
    pytest.param("NodeResourcesBalancedAllocation", {"resources": [{"name": "memory", "weight": 1},
                                                                   {"name": "memory", "weight": 1}]},
                 f'{_A}.resources[1].name: Duplicate value: "memory"',
                 id="TestValidateNodeResourcesBalancedAllocationArgs/repeated resources"),
    pytest.param("NodeAffinity", {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "label-1", "operator": "In"}]}]}}},
        f"{_A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
        ".values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        id="TestValidateNodeAffinityArgs/invalid added affinity"),
    pytest.param("NodeAffinity", {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["many"]}]}]}}},
        f"{_A}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
        ".values[0]: Invalid value: \"many\": for 'Gt', 'Lt' operators, the value must be an integer",
        id="a Gt value that is not an integer: legal in a pod, refused where NewNodeSelector parses it"),
    pytest.param("VolumeBinding", {"bindTimeoutSeconds": -10},
                 f"{_A}.bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative "
                 "value", id="TestValidateVolumeBindingArgs/negative value is invalid config "),
    pytest.param("VolumeBinding", {"bindTimeoutSeconds": 10, "shape": [{"utilization": 0, "score": 0},
                                                                       {"utilization": 100, "score": 10}]},
                 f'{_A}.shape: Invalid value: "[{{Utilization:0 Score:0}} {{Utilization:100 Score:10}}]": unexpected '
                 "field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
                 id="TestValidateVolumeBindingArgs/[StorageCapacityScoring=off] error if the shape is not nil when the "
                    "feature is off"),
    pytest.param("NodeResourcesFit", {"ignoredResources": ["a" * 64]},
                 f'{_A}.ignoredResources[0]: Invalid value: "{"a" * 64}": name part must be no more than 63 characters',
                 id="TestValidateFitArgs/IgnoredResources: too long value"),
    pytest.param("NodeResourcesFit", {"ignoredResources": ["example.com/aaa/bbb"]},
                 f'{_A}.ignoredResources[0]: Invalid value: "example.com/aaa/bbb": a qualified name must consist of '
                 "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
                 "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                 "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
                 "'example.com/MyName')", id="TestValidateFitArgs/IgnoredResources: name has too many slash"),
    pytest.param("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/aa"]},
                 f"{_A}.ignoredResourceGroups[0]: Invalid value: \"example.com/aa\": resource group name can't "
                 "contain '/'", id="TestValidateFitArgs/IgnoredResourceGroups: name cannot be contain slash"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "Invalid"}},
                 f'{_A}.scoringStrategy.type: Unsupported value: "Invalid": supported values: "LeastAllocated", '
                 '"MostAllocated", "RequestedToCapacityRatio"',
                 id="TestValidateFitArgs/ScoringStrategy: type is unsupported"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
                 f"{_A}.scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is "
                 "RequestedToCapacityRatio", id="TestValidateFitArgs/ScoringStrategy: requestedToCapacityRatio field "
                                                "is missing"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated",
                                                          "resources": [{"name": "cpu", "weight": -1}]}},
                 f"{_A}.scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of cpu not in valid "
                 "range (0, 100]", id="TestValidateLeastAllocatedScoringStrategy/weight less than min"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated",
                                                          "resources": [{"name": "cpu", "weight": 101}]}},
                 f"{_A}.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid "
                 "range (0, 100]", id="TestValidateMostAllocatedScoringStrategy/weight greater than max"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                                          "requestedToCapacityRatio": {"shape": []}}},
                 f"{_A}.scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be "
                 "specified", id="TestValidateRequestedToCapacityRatioScoringStrategy/no shapes"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                                          "requestedToCapacityRatio": {"shape": [
                                                              {"utilization": -10, "score": 1}]}}},
                 f"{_A}.scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: -10: "
                 "not in valid "
                 "range [0, 100]", id="TestValidateRequestedToCapacityRatioScoringStrategy/utilization less than min"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                                          "requestedToCapacityRatio": {"shape": [
                                                              {"utilization": 10, "score": 1},
                                                              {"utilization": 10, "score": 2}]}}},
                 f"{_A}.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: "
                 "values must be "
                 "sorted in increasing order",
                 id="TestValidateRequestedToCapacityRatioScoringStrategy/duplicated utilization values"),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                                          "requestedToCapacityRatio": {"shape": [
                                                              {"utilization": 10, "score": 11}]}}},
                 f"{_A}.scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range "
                 "[0, 10]", id="TestValidateRequestedToCapacityRatioScoringStrategy/score greater than max"),
    pytest.param("DynamicResources", {"filterTimeout": "-1s"},
                 f"{_A}.filterTimeout: Invalid value: -1.0: must be zero or positive",
                 id="TestValidateDynamicResourcesArgs/negative FilterTimeout"),
    pytest.param("DynamicResources", {"bindingTimeout": "30s"},
                 f"{_A}.bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature "
                 "gate is disabled", id="TestValidateDynamicResourcesArgs/BindingTimeout set but "
                                        "DRADeviceBindingConditions disabled"),
])
def test_validate_plugin_args(name: str, args: dict[str, Any], want: str) -> None:
    assert _error(_args(name, args)) == want


@pytest.mark.parametrize(("name", "args"), [
    pytest.param("DefaultPreemption", {}, id="TestValidateDefaultPreemptionArgs/valid args (default)"),
    pytest.param("InterPodAffinity", {"hardPodAffinityWeight": 10}, id="TestValidateInterPodAffinityArgs/valid args"),
    pytest.param("PodTopologySpread", {"defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}], "defaultingType": "List"},
        id="TestValidatePodTopologySpreadArgs/valid config"),
    pytest.param("PodTopologySpread", {"defaultingType": "List"},
                 id="TestValidatePodTopologySpreadArgs/list default constraints, no constraints"),
    pytest.param("PodTopologySpread", {"defaultingType": "System"},
                 id="TestValidatePodTopologySpreadArgs/system default constraints"),
    pytest.param("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 1},
                                                                   {"name": "memory", "weight": 1}]},
                 id="TestValidateNodeResourcesBalancedAllocationArgs/valid config"),
    pytest.param("NodeAffinity", {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "label-1", "operator": "In", "values": ["label-1-val"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}}]}},
        id="TestValidateNodeAffinityArgs/valid added affinity"),
    pytest.param("VolumeBinding", {"bindTimeoutSeconds": 0}, id="TestValidateVolumeBindingArgs/zero is a valid config"),
    pytest.param("NodeResourcesFit", {"ignoredResources": ["example.com"]},
                 id="TestValidateFitArgs/IgnoredResources: valid args"),
    pytest.param("NodeResourcesFit", {"ignoredResourceGroups": ["example.com"]},
                 id="TestValidateFitArgs/IgnoredResourceGroups: valid args "),
    pytest.param("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                                          "requestedToCapacityRatio": {"shape": [
                                                              {"utilization": 30, "score": 3},
                                                              {"utilization": 50, "score": 2}]}}},
                 id="TestValidateRequestedToCapacityRatioScoringStrategy/valid shapes"),
])
def test_valid_plugin_args_are_accepted(name: str, args: dict[str, Any]) -> None:
    parse_scheduler_config(_args(name, args))


# -- reading the file (strict decoding) ---------------------------------------------------------------


@pytest.mark.parametrize(("doc", "want"), [
    pytest.param({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
                 "not a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration (got "
                 "kubescheduler.config.k8s.io/v1beta3, Kind=KubeSchedulerConfiguration): kube-scheduler v1.36 reads "
                 "only that; older versions (v1beta2, v1beta3) are no longer served", id="an old version is refused"),
    pytest.param(_doc(profile=[]), "profile: unknown field (strict decoding, as kube-scheduler reads its --config): "
                 "expected one of apiVersion, clientConnection, delayCacheUntilActive, enableContentionProfiling, "
                 "enableProfiling, extenders, kind, leaderElection, parallelism, percentageOfNodesToScore, "
                 "podInitialBackoffSeconds, podMaxBackoffSeconds, profiles", id="an unknown field is named"),
    pytest.param(_doc(percentageOfNodesToScore="50"), "percentageOfNodesToScore: must be an integer, got a string '50'",
                 id="a value of the wrong type is named"),
    pytest.param(_doc(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "MostAllocated", "resource": []}}}]}]),
        "profiles[0].pluginConfig[0].args.scoringStrategy.resource: unknown field (strict decoding, as kube-scheduler "
        "reads its --config): expected one of requestedToCapacityRatio, resources, type",
        id="an unknown field of plugin args is named"),
    pytest.param(_doc(profiles=[{"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerm": []}}}}]}]),
        "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerm: "
        "unknown field (strict decoding): expected one of nodeSelectorTerms",
        id="an unknown field of a core type inside plugin args is named"),
    pytest.param(_doc(profiles=[{"pluginConfig": [{"name": "InterPodAffinity", "args": {
        "kind": "NodeAffinityArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"}}]}]),
        "profiles[0].pluginConfig[0]: args for plugin InterPodAffinity were not of type "
        "InterPodAffinityArgs.kubescheduler.config.k8s.io, got NodeAffinityArgs.kubescheduler.config.k8s.io",
        id="args of another kind are refused"),
    pytest.param(_doc(leaderElection={"leaseDuration": "15 seconds"}),
                 "leaderElection.leaseDuration: time: invalid duration '15 seconds' (a Go duration: 15s, 1m30s, 500ms)",
                 id="a duration kube-scheduler cannot parse is named"),
])
def test_a_file_kube_scheduler_would_not_read_is_refused_naming_the_field(doc: dict[str, Any], want: str) -> None:
    assert _error(doc) == want


# -- TestNewFrameworkMultiPointExpansion --------------------------------------------------------------

_FW = "TestNewFrameworkMultiPointExpansion/"


def _points(plugins: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    _, (spec,) = parse_scheduler_config(_doc(profiles=[{"plugins": plugins}]))
    return dict(spec.points)


def test_disabling_a_multipoint_plugin_at_some_extension_points() -> None:
    """"disable MultiPoint plugin at some extension points": TaintToleration stays a Filter plugin
    when its Score is disabled, and loses both with `filter` disabled too."""
    pts = _points({"score": {"disabled": [{"name": "TaintToleration"}]}})
    assert "TaintToleration" in pts["filter"]
    assert "TaintToleration" not in pts["score"]
    assert "TaintToleration" in pts["preScore"]
    off = {"disabled": [{"name": "TaintToleration"}]}
    pts = _points({"filter": off, "score": off})
    assert "TaintToleration" not in pts["filter"] + pts["score"]


def test_disabling_an_extension_point_with_star_keeps_only_what_it_enables() -> None:
    """"disable MultiPoint extension" and "disable and enable MultiPoint plugins with '*'"."""
    pts = _points({"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality"}]}})
    assert pts["score"] == ("ImageLocality",)
    assert "ImageLocality" in _points({})["score"]


def test_a_plugin_enabled_at_an_extension_point_runs_first_there() -> None:
    """"Reorder MultiPoint plugins (specified extension takes precedence)": a multiPoint plugin also
    enabled at a specific point is an override, and overrides run first, in their order there."""
    pts = _points({"filter": {"enabled": [{"name": "NodeResourcesFit"}, {"name": "TaintToleration"}]}})
    assert pts["filter"][:3] == ("NodeResourcesFit", "TaintToleration", "NodeUnschedulable")
    assert pts["filter"].count("NodeResourcesFit") == 1


def test_a_plugin_enabled_only_at_an_extension_point_runs_after_the_multipoint_ones() -> None:
    """"Reorder MultiPoint plugins (specified extension only takes precedence when it exists in
    MultiPoint)": a plugin enabled at a point but not through multiPoint comes after them."""
    pts = _points({"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]},
                   "filter": {"enabled": [{"name": "NodeResourcesFit"}]}})
    assert pts["filter"][-1] == "NodeResourcesFit"
    assert "NodeResourcesFit" not in pts["score"]


@pytest.mark.parametrize(("plugins", "want"), [
    pytest.param({"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}, 5,
                 id=_FW + "Override MultiPoint plugins weights"),
    pytest.param({"multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 7}]}}, 7,
                 id="a multiPoint entry replaces the default one, weight included (mergePluginSet)"),
    pytest.param({"score": {"enabled": [{"name": "NodeResourcesFit"}]}}, 1,
                 id="a Score entry without a weight counts 1, whatever multiPoint says (getValidScoreWeights)"),
    pytest.param({"score": {"enabled": [{"name": "TaintToleration", "weight": 0}]}}, None,
                 id="a weight of 0 counts 1"),
])
def test_score_weights(plugins: dict[str, Any], want: int | None) -> None:
    _, (spec,) = parse_scheduler_config(_doc(profiles=[{"plugins": plugins}]))
    if want is None:
        assert spec.weights["TaintToleration"] == 1
    else:
        assert spec.weights["NodeResourcesFit"] == want


@pytest.mark.parametrize(("plugins", "want"), [
    pytest.param({"score": {"enabled": [{"name": "NodePorts"}]}},
                 'creating profile for scheduler name "default-scheduler": plugin "NodePorts" does not extend '
                 "ScorePlugin plugin", id="a plugin enabled where it does not extend (updatePluginList)"),
    pytest.param({"filter": {"enabled": [{"name": "NodePorts"}, {"name": "NodePorts"}]}},
                 'creating profile for scheduler name "default-scheduler": plugin "NodePorts" already registered as '
                 '"FilterPlugin"', id="a plugin enabled twice at a point (updatePluginList)"),
    pytest.param({"multiPoint": {"enabled": [{"name": "NodePorts"}, {"name": "NodePorts"}],
                                 "disabled": [{"name": "NodePorts"}]}},
                 'creating profile for scheduler name "default-scheduler": plugin "NodePorts" already registered as '
                 '"PreFilterPlugin"', id=_FW + "Expect 'already registered' error"),
    pytest.param({"multiPoint": {"disabled": [{"name": "*"}]}},
                 'creating profile for scheduler name "default-scheduler": only one queue sort plugin required for '
                 'profile with scheduler name "default-scheduler", but got 0',
                 id="no queue sort plugin is left (NewFramework)"),
    pytest.param({"multiPoint": {"disabled": [{"name": "*"}]}, "queueSort": {"enabled": [{"name": "PrioritySort"}]}},
                 'creating profile for scheduler name "default-scheduler": at least one bind plugin is needed for '
                 'profile with scheduler name "default-scheduler"', id="no bind plugin is left (NewFramework)"),
])
def test_a_profile_the_framework_would_not_build_is_refused(plugins: dict[str, Any], want: str) -> None:
    assert _error(_doc(profiles=[{"plugins": plugins}])) == want


def test_out_of_tree_plugins_are_kept_with_where_they_are_enabled() -> None:
    _, (spec,) = parse_scheduler_config(_doc(profiles=[{"plugins": {
        "multiPoint": {"enabled": [{"name": "Coscheduling"}]}, "filter": {"enabled": [{"name": "GpuTopology"}]}}}]))
    assert dict(spec.unknown) == {"Coscheduling": ("multiPoint",), "GpuTopology": ("filter",)}
    assert "GpuTopology" in spec.points["filter"]
