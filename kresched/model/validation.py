"""The API server's validation rules for the fields kresched plans on, so that an object the API
server would refuse is refused here too — in a snapshot as a one-line error naming the object,
the field and the rule; from a live server as an object kresched will not act upon.

Ported from kubernetes `pkg/apis/core/validation/validation.go` (`validateTolerations`,
`ValidateNodeSelectorRequirement`, `ValidateNodeFieldSelectorRequirement`,
`validateTopologySpreadConstraints`, `validateContainerPorts`, `validatePodAffinityTerm`,
`validatePodResourceClaim`, `ValidatePodSpec`'s priority and grace period, `validateContainers`' first
rule), `pkg/apis/scheduling/validation` (`ValidatePriorityClass`), `pkg/apis/policy/validation`
(the PDB's selector) and apimachinery's `ValidateLabelSelectorRequirement`, with their wording.
Each check raises `ValueError("<field path>: <rule>")` on the first violation: the model's
`__post_init__` hooks call them, and the decoder turns the `ValueError` into the object's one-line error.

Only the rules of fields kresched reads are here (names, label keys and most of the pod spec are
not checked). Must not do I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from kresched.model.specs import (
    Affinity,
    Container,
    LabelSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinityTerm,
    PodResourceClaim,
    PodSpec,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)

__all__ = [
    "HIGHEST_USER_DEFINABLE_PRIORITY",
    "check_int32",
    "check_label_selector",
    "check_node_selector_term",
    "check_pod_spec",
    "check_stored_pod_spec",
    "check_priority_class",
    "check_taints",
]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: `scheduling.HighestUserDefinablePriority`; above it only the two system classes.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
_SYSTEM_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}

_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: kresched evaluates `Lt`/`Gt` tolerations (see `sched.taint_toleration`), so it accepts them.
_TOLERATION_OPERATORS = ("Equal", "Exists", "Lt", "Gt")
_PROTOCOLS = ("TCP", "UDP", "SCTP")
_INT = re.compile(r"[+-]?[0-9]+")


def _unsupported(path: str, value: str, supported: Iterable[str]) -> ValueError:
    """`field.NotSupported`'s wording."""
    values = ", ".join(f'"{v}"' for v in supported)
    return ValueError(f'{path}: Unsupported value: "{value}": supported values: {values}')


def _invalid_operator(path: str, operator: str) -> ValueError:
    """Node selector requirements say `field.Invalid`, label selectors `field.NotSupported`."""
    return ValueError(f'{path}.operator: Invalid value: "{operator}": not a valid selector operator')


def check_int32(path: str, value: int | None) -> None:
    """The API's `int32` fields: Go's JSON decoder refuses anything outside the range."""
    if value is not None and not INT32_MIN <= value <= INT32_MAX:
        raise ValueError(f"{path}: {value} is out of the int32 range ({INT32_MIN} to {INT32_MAX})")


def _is_int64(text: str) -> bool:
    return _INT.fullmatch(text) is not None and INT64_MIN <= int(text) <= INT64_MAX


# -- label selectors (apimachinery ValidateLabelSelectorRequirement) -------------------------------

def check_label_selector(path: str, selector: LabelSelector | None) -> None:
    if selector is None:
        return
    for i, req in enumerate(selector.match_expressions):
        where = f"{path}.matchExpressions[{i}]"
        if req.operator in ("In", "NotIn"):
            if not req.values:
                raise ValueError(f"{where}.values: Required value: must be specified when `operator` is 'In' "
                                 "or 'NotIn'")
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                raise ValueError(f"{where}.values: Forbidden: may not be specified when `operator` is 'Exists' "
                                 "or 'DoesNotExist'")
        else:
            raise _unsupported(f"{where}.operator", req.operator, _LABEL_OPERATORS)


# -- node selectors (ValidateNodeSelectorRequirement, ValidateNodeFieldSelectorRequirement) --------

def _check_node_requirement(path: str, req: NodeSelectorRequirement, parsed: bool = False) -> None:
    if req.operator in ("In", "NotIn"):
        if not req.values:
            raise ValueError(f"{path}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'")
    elif req.operator in ("Exists", "DoesNotExist"):
        if req.values:
            raise ValueError(f"{path}.values: Forbidden: may not be specified when `operator` is 'Exists' or "
                             "'DoesNotExist'")
    elif req.operator in ("Gt", "Lt"):
        if len(req.values) != 1:
            raise ValueError(f"{path}.values: Required value: must be specified single value when `operator` is "
                             "'Lt' or 'Gt'")
        # Any label value is legal in an object; one that is not an integer fails only where the
        # scheduler parses the term (`labels.NewRequirement`): in a pod it matches no node (see
        # `_unparsable_terms`), in a scheduler configuration (`parsed`) it is refused.
        if parsed and not _is_int64(req.values[0]):
            raise ValueError(f"{path}.values[0]: Invalid value: \"{req.values[0]}\": for 'Gt', 'Lt' operators, "
                             "the value must be an integer")
    else:
        raise _invalid_operator(path, req.operator)


def _check_node_field_requirement(path: str, req: NodeSelectorRequirement) -> None:
    if req.operator in ("In", "NotIn"):
        if len(req.values) != 1:
            raise ValueError(f"{path}.values: Required value: must be only one value when `operator` is 'In' or "
                             "'NotIn' for node field selector")
    else:
        raise _invalid_operator(path, req.operator)
    if req.key != "metadata.name":
        raise ValueError(f'{path}.key: Invalid value: "{req.key}": not a valid field selector key')


def check_node_selector_term(path: str, term: NodeSelectorTerm, parsed: bool = False) -> None:
    """`ValidateNodeSelectorTerm`: each requirement's operator and values. `parsed`: as the
    scheduler's `nodeaffinity.NewNodeSelector` parses a term (a scheduler configuration's
    addedAffinity), where a `Gt`/`Lt` value must be an integer too."""
    for i, req in enumerate(term.match_expressions):
        _check_node_requirement(f"{path}.matchExpressions[{i}]", req, parsed)
    for i, req in enumerate(term.match_fields):
        _check_node_field_requirement(f"{path}.matchFields[{i}]", req)


# -- the pod spec ------------------------------------------------------------------------------

def _check_pod_affinity_term(path: str, term: PodAffinityTerm) -> None:
    if not term.topology_key:
        raise ValueError(f"{path}.topologyKey: Required value: can not be empty")
    check_label_selector(f"{path}.labelSelector", term.label_selector)
    check_label_selector(f"{path}.namespaceSelector", term.namespace_selector)


def _check_affinity(path: str, affinity: Affinity | None) -> None:
    if affinity is None:
        return
    na = affinity.node_affinity
    if na is not None:
        where = f"{path}.nodeAffinity"
        required = na.required_during_scheduling_ignored_during_execution
        if required is not None:
            for i, term in enumerate(required.node_selector_terms):
                check_node_selector_term(f"{where}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]",
                                 term)
        for i, pref in enumerate(na.preferred_during_scheduling_ignored_during_execution):
            p = f"{where}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            check_node_selector_term(f"{p}.preference", pref.preference)
    for name, pa in (("podAffinity", affinity.pod_affinity), ("podAntiAffinity", affinity.pod_anti_affinity)):
        if pa is None:
            continue
        where = f"{path}.{name}"
        for i, term in enumerate(pa.required_during_scheduling_ignored_during_execution):
            _check_pod_affinity_term(f"{where}.requiredDuringSchedulingIgnoredDuringExecution[{i}]", term)
        for i, weighted in enumerate(pa.preferred_during_scheduling_ignored_during_execution):
            p = f"{where}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            _check_pod_affinity_term(f"{p}.podAffinityTerm", weighted.pod_affinity_term)


def _check_tolerations(path: str, tolerations: tuple[Toleration, ...]) -> None:
    """`validateTolerations`."""
    for i, t in enumerate(tolerations):
        where = f"{path}[{i}]"
        if not t.key and t.operator != "Exists":
            raise ValueError(f'{where}.operator: Invalid value: "{t.operator}": operator must be Exists when `key` '
                             'is empty, which means "match all values and all keys"')
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            raise ValueError(f'{where}.effect: Invalid value: "{t.effect}": effect must be \'NoExecute\' when '
                             "`tolerationSeconds` is set")
        if t.operator in ("", "Equal"):
            pass  # any value the taint may carry
        elif t.operator == "Exists":
            if t.value:
                raise ValueError(f'{where}.operator: Invalid value: "{t.value}": value must be empty when '
                                 "`operator` is 'Exists'")
        elif t.operator in ("Lt", "Gt"):
            if not _is_int64(t.value):
                raise ValueError(f'{where}.value: Invalid value: "{t.value}": value must be an integer when '
                                 "`operator` is 'Lt' or 'Gt'")
        else:
            raise _unsupported(f"{where}.operator", t.operator, _TOLERATION_OPERATORS)
        if t.effect and t.effect not in _TAINT_EFFECTS:
            raise _unsupported(f"{where}.effect", t.effect, _TAINT_EFFECTS)


def _check_spread(path: str, constraints: tuple[TopologySpreadConstraint, ...]) -> None:
    """`validateTopologySpreadConstraints`."""
    for i, c in enumerate(constraints):
        where = f"{path}[{i}]"
        check_int32(f"{where}.maxSkew", c.max_skew)
        if c.max_skew <= 0:
            raise ValueError(f"{where}.maxSkew: Invalid value: {c.max_skew}: must be greater than zero")
        if not c.topology_key:
            raise ValueError(f"{where}.topologyKey: Required value: can not be empty")
        if c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            raise _unsupported(f"{where}.whenUnsatisfiable", c.when_unsatisfiable, ("DoNotSchedule",
                                                                                    "ScheduleAnyway"))
        if c.min_domains is not None:
            check_int32(f"{where}.minDomains", c.min_domains)
            if c.min_domains <= 0:
                raise ValueError(f"{where}.minDomains: Invalid value: {c.min_domains}: must be greater than zero")
            # Upstream also refuses minDomains with ScheduleAnyway; the scheduler ignores it there
            # (upstream's TestPodTopologySpreadScore has such a pod), so kresched lets it through.
        for name, value in (("nodeAffinityPolicy", c.node_affinity_policy), ("nodeTaintsPolicy", c.node_taints_policy)):
            if value is not None and value not in ("Honor", "Ignore"):
                raise _unsupported(f"{where}.{name}", value, ("Honor", "Ignore"))
        check_label_selector(f"{where}.labelSelector", c.label_selector)


def _check_ports(path: str, containers: tuple[Container, ...], host_network: bool) -> None:
    """`validateContainerPorts` and, with hostNetwork, `validatePodHostNetworkDeps` (which upstream
    applies to `spec.containers` only: pass `host_network=False` for init containers). An empty
    protocol is the API's default, TCP (`SetDefaults_ContainerPort`)."""
    for c in containers:
        for i, p in enumerate(c.ports):
            where = f"{path}[{c.name}].ports[{i}]"
            if not 1 <= p.container_port <= 65535:
                raise ValueError(f"{where}.containerPort: Invalid value: {p.container_port}: must be between 1 and "
                                 "65535, inclusive")
            if p.host_port and not 1 <= p.host_port <= 65535:
                raise ValueError(f"{where}.hostPort: Invalid value: {p.host_port}: must be between 1 and 65535, "
                                 "inclusive")
            if p.protocol and p.protocol not in _PROTOCOLS:
                raise _unsupported(f"{where}.protocol", p.protocol, _PROTOCOLS)
            if host_network and p.host_port and p.host_port != p.container_port:
                raise ValueError(f"{where}.hostPort: Invalid value: {p.host_port}: must match `containerPort` when "
                                 "`hostNetwork` is true")


def check_pod_spec(spec: PodSpec) -> tuple[str, ...]:
    """Raises on what the API server refuses; returns warnings for what it accepts but what makes
    no sense (`pkg/api/pod/warnings.go`'s kind), each `<field path>: <what happens>`."""
    check_int32("spec.priority", spec.priority)
    warnings: tuple[str, ...] = ()
    grace = spec.termination_grace_period_seconds
    if grace is not None and grace > INT64_MAX:
        raise ValueError(f"spec.terminationGracePeriodSeconds: {grace} is out of the int64 range")
    if grace is not None and grace < 0:
        # The API server warns and stores it; a deletion then takes 1 s (pod strategy's CheckGracefulDelete).
        warnings += (f"spec.terminationGracePeriodSeconds: {grace} is negative; the API server treats it as 1",)
    if spec.preemption_policy is not None and spec.preemption_policy not in ("Never", "PreemptLowerPriority"):
        raise _unsupported("spec.preemptionPolicy", spec.preemption_policy, ("Never", "PreemptLowerPriority"))
    if spec.affinity is not None:
        _check_affinity("spec.affinity", spec.affinity)
        warnings += _unparsable_terms("spec.affinity.nodeAffinity", spec.affinity)
    if spec.tolerations:
        _check_tolerations("spec.tolerations", spec.tolerations)
    if spec.topology_spread_constraints:
        _check_spread("spec.topologySpreadConstraints", spec.topology_spread_constraints)
    if spec.resource_claims:
        _check_resource_claims("spec.resourceClaims", spec.resource_claims)
    _check_ports("spec.containers", spec.containers, spec.host_network)
    if spec.init_containers:
        _check_ports("spec.initContainers", spec.init_containers, False)
    return warnings


def _check_resource_claims(path: str, claims: tuple[PodResourceClaim, ...]) -> None:
    """`validatePodResourceClaim`'s rules that say which claim an entry is: a name, unique, and
    exactly one source (a claim or a template, `""` counting as set). The names' syntax is not
    checked: kresched only looks them up."""
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        where = f"{path}[{i}]"
        if not claim.name:
            raise ValueError(f"{where}.name: Required value")
        if claim.name in seen:
            raise ValueError(f'{where}.name: Duplicate value: "{claim.name}"')
        seen.add(claim.name)
        both = claim.resource_claim_name is not None and claim.resource_claim_template_name is not None
        if both or (claim.resource_claim_name is None and claim.resource_claim_template_name is None):
            value = json.dumps({"Name": claim.name, "ResourceClaimName": claim.resource_claim_name,
                                "ResourceClaimTemplateName": claim.resource_claim_template_name},
                               separators=(",", ":"))
            rule = ("at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified" if both
                    else "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
            raise ValueError(f"{where}: Invalid value: {value}: {rule}")


def check_stored_pod_spec(spec: PodSpec) -> None:
    """What the API server refuses to store that the model still builds: a pod without containers
    (`validateContainers`: `spec.containers: Required value`; `spec: null` reads as an empty spec).
    Checked where input becomes models (`kresched.sources`), not in `Pod.__post_init__`: the
    scheduler's own code places such a pod (it requests nothing), and the tables kresched ports
    from its tests build them (`st.MakePod().Obj()` has no containers)."""
    if not spec.containers:
        raise ValueError("spec.containers: Required value")


def _unparsable_terms(path: str, affinity: Affinity) -> tuple[str, ...]:
    """Node affinity terms with a `Gt`/`Lt` value that is not an integer: legal (any label value
    is), but the scheduler cannot parse them (`nodeaffinity.newNodeSelectorTerm`). A required term
    then matches no node (`LazyErrorNodeSelector`); a preferred one fails NodeAffinity's PreScore,
    so the scheduler can place the pod only where a single node passes the filters."""
    na = affinity.node_affinity
    if na is None:
        return ()
    out: list[str] = []
    required = na.required_during_scheduling_ignored_during_execution
    for i, term in enumerate(required.node_selector_terms if required is not None else ()):
        for j, req in enumerate(term.match_expressions):
            if req.operator in ("Gt", "Lt") and not _is_int64(req.values[0]):
                out.append(f'{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]'
                           f'.matchExpressions[{j}].values[0]: "{req.values[0]}" is not an integer, so '
                           "kube-scheduler matches no node with this term")
    for i, pref in enumerate(na.preferred_during_scheduling_ignored_during_execution):
        for j, req in enumerate(pref.preference.match_expressions):
            if req.operator in ("Gt", "Lt") and not _is_int64(req.values[0]) and pref.weight:
                out.append(f'{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference'
                           f'.matchExpressions[{j}].values[0]: "{req.values[0]}" is not an integer, so '
                           "kube-scheduler's NodeAffinity fails to score the pod (PreScore error) wherever more "
                           "than one node fits; kresched scores the term as matching no node")
    return tuple(out)


# -- PriorityClass, Node ------------------------------------------------------------------------

def check_priority_class(name: str, value: int, global_default: bool, preemption_policy: str | None) -> None:
    """`ValidatePriorityClass`: `system-` names are reserved for the two system classes (with their
    values, not global default); every other class is at most `HIGHEST_USER_DEFINABLE_PRIORITY`."""
    check_int32("value", value)
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        known = _SYSTEM_CLASSES.get(name)
        if known is None or known != value or global_default:
            why = (f"{name} is not a known system priority class" if known is None else
                   f"value of {name} must be {known}" if known != value else f"{name} cannot be the global default")
            raise ValueError(f"metadata.name: Forbidden: priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' "
                             f"prefix are reserved for system use only. error: {why}")
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        raise ValueError(f"value: Forbidden: maximum allowed value of a user defined priority is "
                         f"{HIGHEST_USER_DEFINABLE_PRIORITY}")
    if preemption_policy is not None and preemption_policy not in ("Never", "PreemptLowerPriority"):
        raise _unsupported("preemptionPolicy", preemption_policy, ("Never", "PreemptLowerPriority"))


def check_taints(taints: tuple[Taint, ...]) -> None:
    """`validateNodeTaints`: every taint has a key and one of the three effects."""
    for i, t in enumerate(taints):
        if not t.key:
            raise ValueError(f"spec.taints[{i}].key: Required value")
        if t.effect not in _TAINT_EFFECTS:
            raise _unsupported(f"spec.taints[{i}].effect", t.effect, _TAINT_EFFECTS)
