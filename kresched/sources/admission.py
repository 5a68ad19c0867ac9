"""What the API server does to a new pod before anyone sees it: defaulting and the admission plugins
that change how it is scheduled.

A what-if (`kresched plan -f FILE`) plans pods that do not exist yet; the scheduler will see them as
the API server stores them. This module turns a pod object (a generic document, as a controller
sends it) into the pod the API server stores, on the document itself, then into the model:

1. defaulting (`pkg/apis/core/v1/defaults.go`): what the scheduler or kresched reads of it —
   `SetDefaults_PodSpec` (`schedulerName: default-scheduler`, `terminationGracePeriodSeconds: 30`,
   `restartPolicy: Always`, `dnsPolicy`), `SetDefaults_Pod` (a container's limits default its
   requests; with `hostNetwork` a port's `hostPort` defaults to its `containerPort`;
   `enableServiceLinks`), `SetDefaults_ContainerPort`'s `protocol: TCP`, `SetDefaults_Volume`'s
   emptyDir for a volume without a source;
2. the Priority admission plugin (`plugin/pkg/admission/priority`, `admitPod` on create):
   `priorityClassName` resolved to `priority` and `preemptionPolicy` — a class that does not exist,
   or a `priority`/`preemptionPolicy` written in the pod that differs from the class's, refuses the
   pod (`Forbidden`, upstream's words); no class: the `globalDefault` one (the lowest value if
   several), else priority 0 and `PreemptLowerPriority`. The two system classes exist in every
   cluster, listed or not;
3. the DefaultTolerationSeconds plugin: tolerations of `node.kubernetes.io/not-ready` and
   `node.kubernetes.io/unreachable` (`NoExecute`, 300 s) unless the pod tolerates them already.

What a real API server may also do and kresched does not (`NOT_SIMULATED`, said in every what-if):
LimitRange defaults (LimitRanger), ResourceQuota refusals, RuntimeClass overhead and scheduling
(RuntimeClass admission), Pod Security admission refusals, and webhooks. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kresched.errors import InputError
from kresched.model.objects import Pod, PriorityClass
from kresched.model.validation import check_stored_pod_spec
from kresched.sources.nulls import drop_nulls, is_null_error

__all__ = [
    "NOT_SIMULATED",
    "SYSTEM_PRIORITY_CLASSES",
    "Forbidden",
    "admit_default_tolerations",
    "admit_priority",
    "default_pod",
    "stored_pod",
]

#: Created by the API server in every cluster (`scheduling.SystemPriorityClasses`).
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}

#: The admission a real API server may run that changes how a pod is scheduled, and that kresched
#: does not simulate (one sentence, said with every what-if).
NOT_SIMULATED = ("not simulated: LimitRange defaults, ResourceQuota, RuntimeClass overhead, Pod Security "
                 "admission and admission webhooks")

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
#: `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds`' default.
DEFAULT_TOLERATION_SECONDS = 300


class Forbidden(Exception):
    """An admission plugin refused the pod: the API server's `Forbidden` message."""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """`parent[key]` as a dict, made one when absent or null (as Go reads a nil struct pointer it fills)."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = parent[key] = {}
    return value


def default_pod(doc: dict[str, Any]) -> dict[str, Any]:
    """Apply the API server's defaulting of a new pod (see the module docstring) to `doc`, in place."""
    spec = _dict(doc, "spec")
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    host_network = spec.get("hostNetwork") is True
    for group in ("containers", "initContainers"):
        for c in _list(spec.get(group)):
            if not isinstance(c, dict):
                continue
            res = c.get("resources")
            if isinstance(res, dict) and isinstance(res.get("limits"), dict) and res["limits"]:
                requests = res.get("requests")
                if not isinstance(requests, dict):
                    requests = res["requests"] = {}
                for name, value in res["limits"].items():
                    requests.setdefault(name, value)
            for port in _list(c.get("ports")):
                if not isinstance(port, dict):
                    continue
                if not port.get("protocol"):
                    port["protocol"] = "TCP"
                if host_network and not port.get("hostPort"):
                    port["hostPort"] = port.get("containerPort", 0)
    for volume in _list(spec.get("volumes")):
        if isinstance(volume, dict) and not any(k != "name" and v is not None for k, v in volume.items()):
            volume["emptyDir"] = {}
    return doc


def admit_priority(doc: dict[str, Any], classes: dict[str, PriorityClass]) -> None:
    """The Priority admission plugin's `admitPod` on create; `Forbidden` when it refuses the pod.
    `classes` are the cluster's PriorityClasses by name (the system ones may be missing)."""
    spec = _dict(doc, "spec")
    name = spec.get("priorityClassName") or ""
    if not name:
        default = min((c for c in classes.values() if c.global_default), key=lambda c: c.value, default=None)
        if default is not None:
            name, value, policy = default.name, default.value, default.preemption_policy or "PreemptLowerPriority"
        else:
            value, policy = 0, "PreemptLowerPriority"
    else:
        cls = classes.get(name)
        if cls is not None:
            # The API server defaults a class's preemptionPolicy (`SetDefaults_PriorityClass`).
            value, policy = cls.value, cls.preemption_policy or "PreemptLowerPriority"
        elif name in SYSTEM_PRIORITY_CLASSES:
            value, policy = SYSTEM_PRIORITY_CLASSES[name], "PreemptLowerPriority"
        else:
            raise Forbidden(f"no PriorityClass with name {name} was found")
    spec["priorityClassName"] = name
    given = spec.get("priority")
    if given is not None and given != value:
        raise Forbidden(f"the integer value of priority ({given}) must not be provided in pod spec; priority "
                        f"admission controller computed {value} from the given PriorityClass name")
    spec["priority"] = value
    given = spec.get("preemptionPolicy")
    if given is not None and given != policy:
        raise Forbidden(f"the string value of PreemptionPolicy ({given}) must not be provided in pod spec; "
                        f"priority admission controller computed {policy} from the given PriorityClass name")
    spec["preemptionPolicy"] = policy


def admit_default_tolerations(doc: dict[str, Any]) -> None:
    """The DefaultTolerationSeconds plugin: tolerate not-ready and unreachable (NoExecute) for 300 s,
    unless a toleration already covers them (an empty key or effect covers every one)."""
    spec = _dict(doc, "spec")
    tolerations = list(_list(spec.get("tolerations")))
    not_ready = unreachable = False
    for t in tolerations:
        if not isinstance(t, dict):
            continue
        key, effect = t.get("key") or "", t.get("effect") or ""
        if key in (NOT_READY, "") and effect in ("NoExecute", ""):
            not_ready = True
        if key in (UNREACHABLE, "") and effect in ("NoExecute", ""):
            unreachable = True
    for present, key in ((not_ready, NOT_READY), (unreachable, UNREACHABLE)):
        if not present:
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
    spec["tolerations"] = tolerations


def stored_pod(doc: dict[str, Any], classes: dict[str, PriorityClass], where: str, prefix: str = "") -> Pod:
    """The pod `doc` becomes once the API server stored it: defaulted, through the Priority and
    DefaultTolerationSeconds admission plugins (`Forbidden` when refused), decoded into the model
    (an `InputError` naming `where` and the field when the model refuses it)."""
    default_pod(doc)
    admit_priority(doc, classes)
    admit_default_tolerations(doc)
    return decode_pod(doc, where, prefix)


def decode_pod(doc: dict[str, Any], where: str, prefix: str = "") -> Pod:
    """`doc` into the model, `null`s read as Go reads them; an `InputError` naming `where` and the
    field (after `prefix`: `spec.template.` for a workload's template)."""
    from kresched.sources.decode import describe_error

    try:
        try:
            pod = msgspec.convert(doc, Pod)
        except msgspec.ValidationError as exc:
            if not is_null_error(exc):
                raise
            pod = msgspec.convert(drop_nulls(doc, Pod), Pod)
        check_stored_pod_spec(pod.spec)
    except msgspec.ValidationError as exc:
        raise InputError(f"{where}: {prefix}{describe_error(exc, doc)}") from None
    except ValueError as exc:
        raise InputError(f"{where}: {prefix}{exc}") from None
    return pod
