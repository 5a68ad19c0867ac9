"""Decoding a `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration (the YAML or JSON
document kube-scheduler's `--config` reads, already parsed into Python values) into
`types.SchedulerConfig`, defaulted (`defaults.py`) and validated (`validation.py`), as kube-scheduler
does before it starts: strictly (an unknown field, a value of the wrong type, another apiVersion
or kind is an error, as its strict decoder says), every plugin's args decoded into their type and
defaulted, out-of-tree plugins' args kept as they are. Every refusal is one `ConfigError` line that
names the field. Pure: no I/O (the caller reads the file).
"""

from __future__ import annotations

import binascii
import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from kresched.errors import InputError
from kresched.model.specs import NodeAffinity, TopologySpreadConstraint
from kresched.sched.config.defaults import (
    DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
    default_args,
    merge_plugins,
    with_defaults,
)
from kresched.sched.config.types import (
    API_VERSION,
    ARGS_TYPES,
    DEFAULT_EXTENDER_TIMEOUT_SECONDS,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KIND,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    Extender,
    ExtenderTLS,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginRef,
    PluginSet,
    PodTopologySpreadArgs,
    ProfileConfig,
    ResourceSpec,
    SchedulerConfig,
    ScoringStrategy,
    ShapePoint,
    VolumeBindingArgs,
)
from kresched.sched.config.validation import aggregate, validate_config

__all__ = ["ConfigError", "decode_scheduler_config", "go_duration_seconds"]


class ConfigError(InputError):
    """A scheduler configuration kube-scheduler would refuse (exit 2, one line)."""


_TOP = {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
        "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds",
        "profiles", "extenders", "delayCacheUntilActive"}
_LEADER = {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock", "resourceName",
           "resourceNamespace"}
_CLIENT = {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"}
_PROFILE = {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}
_EXTENDER = {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS",
             "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable"}
_TLS = {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


def decode_scheduler_config(doc: Any) -> SchedulerConfig:
    """The configuration `doc` describes, defaulted; `ConfigError` if kube-scheduler would not
    start with it (decoding or validation)."""
    d = _Decoder()
    cfg = d.config(doc)
    errors = validate_config(cfg)
    if errors:
        raise ConfigError(aggregate(errors))
    return cfg


class _Decoder:
    """Strict decoding, path by path (the paths are the ones kube-scheduler's errors name)."""

    def config(self, doc: Any) -> SchedulerConfig:
        obj = self.mapping(doc, "", _TOP)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if kind != KIND or api_version != API_VERSION:
            got = f"{api_version or '(no apiVersion)'}, Kind={kind or '(no kind)'}"
            raise ConfigError(f"not a {API_VERSION} {KIND} (got {got}): kube-scheduler v1.36 reads only that; "
                              "older versions (v1beta2, v1beta3) are no longer served")
        leader = self.mapping(obj.get("leaderElection"), "leaderElection", _LEADER)
        client = self.mapping(obj.get("clientConnection"), "clientConnection", _CLIENT)
        leader_election = {
            "leaderElect": self.boolean(leader.get("leaderElect"), "leaderElection.leaderElect", default=True),
            "resourceLock": self.string(leader.get("resourceLock"), "leaderElection.resourceLock") or "leases",
            "resourceName": self.string(leader.get("resourceName"), "leaderElection.resourceName") or "kube-scheduler",
            "resourceNamespace": self.string(leader.get("resourceNamespace"), "leaderElection.resourceNamespace")
            or "kube-system",
        }
        for key, default in (("leaseDuration", "15s"), ("renewDeadline", "10s"), ("retryPeriod", "2s")):
            text = self.string(leader.get(key), f"leaderElection.{key}") or default
            leader_election[key] = self.duration(text, f"leaderElection.{key}")
            leader_election[key + "Text"] = text
        self.string(client.get("kubeconfig"), "clientConnection.kubeconfig")
        self.string(client.get("acceptContentTypes"), "clientConnection.acceptContentTypes")
        self.string(client.get("contentType"), "clientConnection.contentType")
        self.number(client.get("qps"), "clientConnection.qps")
        burst = self.integer(client.get("burst"), "clientConnection.burst", INT32)
        for key in ("enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"):
            self.boolean(obj.get(key), key)
        profiles_raw = self.sequence(obj.get("profiles"), "profiles")
        if not profiles_raw:
            profiles_raw = [{}]
        profiles = tuple(self.profile(p, f"profiles[{i}]", single=len(profiles_raw) == 1)
                         for i, p in enumerate(profiles_raw))
        pct = self.integer(obj.get("percentageOfNodesToScore"), "percentageOfNodesToScore", INT32)
        extenders = tuple(self.extender(e, f"extenders[{i}]")
                          for i, e in enumerate(self.sequence(obj.get("extenders"), "extenders")))
        ignored = tuple(name for e in extenders for name in e.ignored_by_scheduler)
        if ignored:
            profiles = tuple(_ignoring(p, ignored) for p in profiles)
        return SchedulerConfig(
            profiles=profiles,
            percentage_of_nodes_to_score=DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE if pct is None else pct,
            parallelism=_or(self.integer(obj.get("parallelism"), "parallelism", INT32), 16),
            pod_initial_backoff_seconds=_or(self.integer(obj.get("podInitialBackoffSeconds"),
                                                         "podInitialBackoffSeconds", INT64), 1),
            pod_max_backoff_seconds=_or(self.integer(obj.get("podMaxBackoffSeconds"), "podMaxBackoffSeconds",
                                                     INT64), 10),
            extenders=extenders,
            leader_election=leader_election,
            client_connection_burst=burst or 100,
        )

    # -- profiles --------------------------------------------------------------------------------
    def profile(self, raw: Any, path: str, single: bool) -> ProfileConfig:
        obj = self.mapping(raw, path, _PROFILE)
        name = self.string(obj.get("schedulerName"), f"{path}.schedulerName")
        if name is None and single:
            name = DEFAULT_SCHEDULER_NAME  # only a lone profile gets the default name
        pct = self.integer(obj.get("percentageOfNodesToScore"), f"{path}.percentageOfNodesToScore", INT32)
        plugins_raw = obj.get("plugins")
        custom = None if plugins_raw is None else self.plugins(plugins_raw, f"{path}.plugins")
        merged = merge_plugins(custom)
        plugin_config = tuple(self.plugin_config(c, f"{path}.pluginConfig[{i}]")
                              for i, c in enumerate(self.sequence(obj.get("pluginConfig"), f"{path}.pluginConfig")))
        args: dict[str, object] = {}
        for point in merged.values():
            for p in point.enabled:
                default = default_args(p.name)
                if default is not None:
                    args[p.name] = default
        for plugin, given in plugin_config:
            if plugin in ARGS_TYPES:
                args[plugin] = given
        return ProfileConfig(name or "", pct, merged, plugin_config, args)

    def plugins(self, raw: Any, path: str) -> dict[str, PluginSet]:
        obj = self.mapping(raw, path, set(EXTENSION_POINTS))
        out: dict[str, PluginSet] = {}
        for point in EXTENSION_POINTS:
            if obj.get(point) is None:
                continue
            where = f"{path}.{point}"
            ps = self.mapping(obj[point], where, {"enabled", "disabled"})
            enabled = tuple(self.plugin(p, f"{where}.enabled[{i}]")
                            for i, p in enumerate(self.sequence(ps.get("enabled"), f"{where}.enabled")))
            disabled = tuple(self.plugin(p, f"{where}.disabled[{i}]").name
                             for i, p in enumerate(self.sequence(ps.get("disabled"), f"{where}.disabled")))
            out[point] = PluginSet(enabled, disabled)
        return out

    def plugin(self, raw: Any, path: str) -> PluginRef:
        obj = self.mapping(raw, path, {"name", "weight"})
        return PluginRef(self.string(obj.get("name"), f"{path}.name") or "",
                         self.integer(obj.get("weight"), f"{path}.weight", INT32))

    def plugin_config(self, raw: Any, path: str) -> tuple[str, object]:
        obj = self.mapping(raw, path, {"name", "args"})
        name = self.string(obj.get("name"), f"{path}.name") or ""
        raw_args = obj.get("args")
        kind = ARGS_TYPES.get(name)
        if kind is None:  # out of tree (or no args): kept as given, never validated
            return name, raw_args
        args = self.args(name, raw_args, f"{path}.args")
        return name, with_defaults(args)

    def args(self, name: str, raw: Any, path: str) -> object:
        decoders: dict[str, Callable[[dict[str, Any], str], object]] = {
            "NodeResourcesFit": self._fit_args,
            "NodeResourcesBalancedAllocation": self._balanced_args,
            "PodTopologySpread": self._spread_args,
            "InterPodAffinity": self._inter_pod_args,
            "NodeAffinity": self._node_affinity_args,
            "VolumeBinding": self._volume_binding_args,
            "DefaultPreemption": self._preemption_args,
            "DynamicResources": self._dra_args,
        }
        obj = self.mapping(raw, path, None)
        kind = obj.get("kind")
        if kind is not None and kind != f"{name}Args":
            raise ConfigError(f"{path.rsplit('.', 1)[0]}: args for plugin {name} were not of type {name}Args."
                              f"kubescheduler.config.k8s.io, got {kind}.{obj.get('apiVersion', '').split('/')[0]}")
        version = obj.get("apiVersion")
        if version is not None and version != API_VERSION:
            raise ConfigError(f"{path}.apiVersion: {name}Args must be {API_VERSION}, got {version!r}")
        body = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
        return decoders[name](body, path)

    def _fit_args(self, obj: dict[str, Any], path: str) -> NodeResourcesFitArgs:
        self.known(obj, path, {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"})
        strategy = None
        if obj.get("scoringStrategy") is not None:
            spath = f"{path}.scoringStrategy"
            s = self.mapping(obj["scoringStrategy"], spath, {"type", "resources", "requestedToCapacityRatio"})
            shape = None
            if s.get("requestedToCapacityRatio") is not None:
                rpath = f"{spath}.requestedToCapacityRatio"
                r = self.mapping(s["requestedToCapacityRatio"], rpath, {"shape"})
                shape = self.shape(r.get("shape"), f"{rpath}.shape")
            strategy = ScoringStrategy(self.string(s.get("type"), f"{spath}.type") or "",
                                       self.resources(s.get("resources"), f"{spath}.resources"), shape)
        return NodeResourcesFitArgs(self.strings(obj.get("ignoredResources"), f"{path}.ignoredResources"),
                                    self.strings(obj.get("ignoredResourceGroups"), f"{path}.ignoredResourceGroups"),
                                    strategy)

    def _balanced_args(self, obj: dict[str, Any], path: str) -> NodeResourcesBalancedAllocationArgs:
        self.known(obj, path, {"resources"})
        return NodeResourcesBalancedAllocationArgs(self.resources(obj.get("resources"), f"{path}.resources"))

    def _spread_args(self, obj: dict[str, Any], path: str) -> PodTopologySpreadArgs:
        self.known(obj, path, {"defaultConstraints", "defaultingType"})
        constraints = tuple(self.core(c, f"{path}.defaultConstraints[{i}]", TopologySpreadConstraint)
                            for i, c in enumerate(self.sequence(obj.get("defaultConstraints"),
                                                                f"{path}.defaultConstraints")))
        # The core type's defaults are the API server's; a default constraint has none of them.
        for i, c in enumerate(self.sequence(obj.get("defaultConstraints"), f"{path}.defaultConstraints")):
            c = c or {}
            fixed = constraints[i]
            if "whenUnsatisfiable" not in c:
                fixed = msgspec.structs.replace(fixed, when_unsatisfiable="")
            if "maxSkew" not in c:
                fixed = msgspec.structs.replace(fixed, max_skew=0)
            constraints = (*constraints[:i], fixed, *constraints[i + 1:])
        defaulting = self.string(obj.get("defaultingType"), f"{path}.defaultingType") or ""
        return PodTopologySpreadArgs(constraints, defaulting)

    def _inter_pod_args(self, obj: dict[str, Any], path: str) -> InterPodAffinityArgs:
        self.known(obj, path, {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"})
        return InterPodAffinityArgs(
            self.integer(obj.get("hardPodAffinityWeight"), f"{path}.hardPodAffinityWeight", INT32),
            self.boolean(obj.get("ignorePreferredTermsOfExistingPods"), f"{path}.ignorePreferredTermsOfExistingPods"))

    def _node_affinity_args(self, obj: dict[str, Any], path: str) -> NodeAffinityArgs:
        self.known(obj, path, {"addedAffinity"})
        raw = obj.get("addedAffinity")
        return NodeAffinityArgs(None if raw is None else self.core(raw, f"{path}.addedAffinity", NodeAffinity))

    def _volume_binding_args(self, obj: dict[str, Any], path: str) -> VolumeBindingArgs:
        self.known(obj, path, {"bindTimeoutSeconds", "shape"})
        shape = None if obj.get("shape") is None else self.shape(obj["shape"], f"{path}.shape")
        return VolumeBindingArgs(self.integer(obj.get("bindTimeoutSeconds"), f"{path}.bindTimeoutSeconds", INT64),
                                 shape)

    def _preemption_args(self, obj: dict[str, Any], path: str) -> DefaultPreemptionArgs:
        self.known(obj, path, {"minCandidateNodesPercentage", "minCandidateNodesAbsolute"})
        return DefaultPreemptionArgs(
            self.integer(obj.get("minCandidateNodesPercentage"), f"{path}.minCandidateNodesPercentage", INT32),
            self.integer(obj.get("minCandidateNodesAbsolute"), f"{path}.minCandidateNodesAbsolute", INT32))

    def _dra_args(self, obj: dict[str, Any], path: str) -> DynamicResourcesArgs:
        self.known(obj, path, {"filterTimeout", "bindingTimeout"})
        out = []
        for key in ("filterTimeout", "bindingTimeout"):
            text = self.string(obj.get(key), f"{path}.{key}")
            out.append(None if text is None else self.duration(text, f"{path}.{key}"))
        return DynamicResourcesArgs(out[0], out[1])

    def extender(self, raw: Any, path: str) -> Extender:
        obj = self.mapping(raw, path, _EXTENDER)
        tls = None if obj.get("tlsConfig") is None else self.tls(obj["tlsConfig"], f"{path}.tlsConfig")
        timeout = self.string(obj.get("httpTimeout"), f"{path}.httpTimeout")
        seconds = 0.0 if timeout is None else self.duration(timeout, f"{path}.httpTimeout")
        resources = []
        ignored = []
        for i, r in enumerate(self.sequence(obj.get("managedResources"), f"{path}.managedResources")):
            rr = self.mapping(r, f"{path}.managedResources[{i}]", {"name", "ignoredByScheduler"})
            resources.append(self.string(rr.get("name"), f"{path}.managedResources[{i}].name") or "")
            if self.boolean(rr.get("ignoredByScheduler"), f"{path}.managedResources[{i}].ignoredByScheduler"):
                ignored.append(resources[-1])
        return Extender(
            url_prefix=self.string(obj.get("urlPrefix"), f"{path}.urlPrefix") or "",
            filter_verb=self.string(obj.get("filterVerb"), f"{path}.filterVerb") or "",
            preempt_verb=self.string(obj.get("preemptVerb"), f"{path}.preemptVerb") or "",
            prioritize_verb=self.string(obj.get("prioritizeVerb"), f"{path}.prioritizeVerb") or "",
            bind_verb=self.string(obj.get("bindVerb"), f"{path}.bindVerb") or "",
            weight=_or(self.integer(obj.get("weight"), f"{path}.weight", INT64), 0),
            managed_resources=tuple(resources),
            ignored_by_scheduler=tuple(ignored),
            ignorable=self.boolean(obj.get("ignorable"), f"{path}.ignorable"),
            node_cache_capable=self.boolean(obj.get("nodeCacheCapable"), f"{path}.nodeCacheCapable"),
            enable_https=self.boolean(obj.get("enableHTTPS"), f"{path}.enableHTTPS"),
            tls=tls,
            http_timeout_seconds=seconds or DEFAULT_EXTENDER_TIMEOUT_SECONDS,
        )

    def tls(self, raw: Any, path: str) -> ExtenderTLS:
        obj = self.mapping(raw, path, _TLS)
        return ExtenderTLS(
            insecure=self.boolean(obj.get("insecure"), f"{path}.insecure"),
            server_name=self.string(obj.get("serverName"), f"{path}.serverName") or "",
            cert_file=self.string(obj.get("certFile"), f"{path}.certFile") or "",
            key_file=self.string(obj.get("keyFile"), f"{path}.keyFile") or "",
            ca_file=self.string(obj.get("caFile"), f"{path}.caFile") or "",
            cert_data=self.base64(obj.get("certData"), f"{path}.certData"),
            key_data=self.base64(obj.get("keyData"), f"{path}.keyData"),
            ca_data=self.base64(obj.get("caData"), f"{path}.caData"),
        )

    def base64(self, raw: Any, path: str) -> bytes:
        """A Go `[]byte` field: standard base64 in JSON and YAML."""
        text = self.string(raw, path)
        if not text:
            return b""
        try:
            return binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raise ConfigError(f"{path}: illegal base64 data (a []byte field is standard base64)") from None

    # -- values ----------------------------------------------------------------------------------
    def resources(self, raw: Any, path: str) -> tuple[ResourceSpec, ...]:
        out = []
        for i, r in enumerate(self.sequence(raw, path)):
            obj = self.mapping(r, f"{path}[{i}]", {"name", "weight"})
            out.append(ResourceSpec(self.string(obj.get("name"), f"{path}[{i}].name") or "",
                                    _or(self.integer(obj.get("weight"), f"{path}[{i}].weight", INT64), 0)))
        return tuple(out)

    def shape(self, raw: Any, path: str) -> tuple[ShapePoint, ...]:
        out = []
        for i, p in enumerate(self.sequence(raw, path)):
            obj = self.mapping(p, f"{path}[{i}]", {"utilization", "score"})
            out.append(ShapePoint(_or(self.integer(obj.get("utilization"), f"{path}[{i}].utilization", INT32), 0),
                                  _or(self.integer(obj.get("score"), f"{path}[{i}].score", INT32), 0)))
        return tuple(out)

    def core(self, raw: Any, path: str, kind: type) -> Any:
        """A core/v1 value (`NodeAffinity`, `TopologySpreadConstraint`), strictly: every key must
        be one of the type's fields, at every level."""
        _strict(raw, kind, path)
        try:
            return msgspec.convert(raw, kind)
        except msgspec.ValidationError as exc:
            where, _, msg = _msgspec_where(str(exc))
            raise ConfigError(f"{path}{where}: {msg}") from None

    def known(self, obj: Mapping[str, Any], path: str, fields: set[str]) -> None:
        for key in obj:
            if key not in fields:
                raise ConfigError(f"{_join(path, key)}: unknown field (strict decoding, as kube-scheduler reads "
                                  f"its --config): expected one of {', '.join(sorted(fields))}")

    def mapping(self, raw: Any, path: str, fields: set[str] | None) -> dict[str, Any]:
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            raise ConfigError(f"{path or 'the document'}: must be a mapping, got {_type_name(raw)}")
        for key in raw:
            if not isinstance(key, str):
                raise ConfigError(f"{path or 'the document'}: keys must be strings, got {key!r}")
        if fields is not None:
            self.known(raw, path, fields)
        return raw

    def sequence(self, raw: Any, path: str) -> list[Any]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise ConfigError(f"{path}: must be a list, got {_type_name(raw)}")
        return raw

    def string(self, raw: Any, path: str) -> str | None:
        if raw is None:
            return None
        if not isinstance(raw, str):
            raise ConfigError(f"{path}: must be a string, got {_type_name(raw)} {raw!r}")
        return raw

    def strings(self, raw: Any, path: str) -> tuple[str, ...]:
        return tuple(self.string(v, f"{path}[{i}]") or "" for i, v in enumerate(self.sequence(raw, path)))

    def boolean(self, raw: Any, path: str, default: bool = False) -> bool:
        if raw is None:
            return default
        if not isinstance(raw, bool):
            raise ConfigError(f"{path}: must be true or false, got {_type_name(raw)} {raw!r}")
        return raw

    def integer(self, raw: Any, path: str, bounds: tuple[int, int]) -> int | None:
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, int):
            if isinstance(raw, float) and raw.is_integer() and math.isfinite(raw):
                raw = int(raw)  # Go's JSON decoder reads 3.0 into an integer field as 3
            else:
                raise ConfigError(f"{path}: must be an integer, got {_type_name(raw)} {raw!r}")
        lo, hi = bounds
        if not lo <= raw <= hi:
            bits = 32 if bounds == INT32 else 64
            raise ConfigError(f"{path}: {raw} does not fit in a {bits}-bit integer")
        return raw

    def number(self, raw: Any, path: str) -> float | None:
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise ConfigError(f"{path}: must be a number, got {_type_name(raw)} {raw!r}")
        return float(raw)

    def duration(self, text: str, path: str) -> float:
        try:
            return go_duration_seconds(text)
        except ValueError:
            raise ConfigError(f"{path}: time: invalid duration {text!r} (a Go duration: 15s, 1m30s, 500ms)") from None


def _ignoring(profile: ProfileConfig, ignored: tuple[str, ...]) -> ProfileConfig:
    """`buildExtenders`: the extenders' `ignoredByScheduler` resources replace NodeResourcesFit's
    `ignoredResources` in every profile (they take precedence over the profile's own)."""
    fit = profile.args.get("NodeResourcesFit")
    if not isinstance(fit, NodeResourcesFitArgs):
        return profile
    return dataclasses.replace(profile, args={**profile.args,
                                              "NodeResourcesFit": dataclasses.replace(fit, ignored_resources=ignored)})


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _strict(raw: Any, kind: Any, path: str) -> None:
    """Every key of `raw`, at every level, is a field of the msgspec type `kind` (its JSON name)."""
    info = msgspec.inspect.type_info(kind)
    _strict_info(raw, info, path)


def _strict_info(raw: Any, info: Any, path: str) -> None:
    if isinstance(info, msgspec.inspect.UnionType):
        for t in info.types:
            if not isinstance(t, msgspec.inspect.NoneType):
                _strict_info(raw, t, path)
        return
    if isinstance(info, msgspec.inspect.StructType):
        if not isinstance(raw, dict):
            return  # msgspec.convert reports the type
        fields = {f.encode_name: f for f in info.fields}
        for key, value in raw.items():
            f = fields.get(key)
            if f is None:
                raise ConfigError(f"{_join(path, str(key))}: unknown field (strict decoding): expected one of "
                                  f"{', '.join(sorted(fields))}")
            _strict_info(value, f.type, _join(path, key))
        return
    if isinstance(info, (msgspec.inspect.ListType, msgspec.inspect.VarTupleType)) and isinstance(raw, list):
        for i, item in enumerate(raw):
            _strict_info(item, info.item_type, f"{path}[{i}]")


def _msgspec_where(text: str) -> tuple[str, str, str]:
    """msgspec's `Expected ..., got ... - at `$.a[0].b`` as (`.a[0].b`, _, `expected ...`)."""
    msg, sep, where = text.partition(" - at `$")
    if not sep:
        return "", "", text[:1].lower() + text[1:]
    return where.rstrip("`"), "", msg[:1].lower() + msg[1:]


_DURATION = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration_seconds(text: str) -> float:
    """Go's `time.ParseDuration`, in seconds: `15s`, `1m30s`, `-1.5h`, `0`."""
    s = text
    sign = 1.0
    if s[:1] in ("+", "-"):
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(text)
    total, pos = 0.0, 0
    while pos < len(s):
        m = _DURATION.match(s, pos)
        if m is None or m.group(1) in ("", "."):
            raise ValueError(text)
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
    return sign * total
