"""Feature gates: kube-scheduler's `--feature-gates`, for the gates that change what kresched
simulates.

A KubeSchedulerConfiguration has no field for gates: a scheduler runs with the gates its command
line sets. kresched takes the same flag (`--feature-gates A=true,B=false`) and reads it as
component-base's `featureGate.Set` does: comma-separated `name=bool` pairs, the bool as Go's
`strconv.ParseBool`; a gate it does not know is accepted with a warning (kube-scheduler v1.36 only
warns, "unrecognized feature gate"), a gate enabled without the gates it depends on is an error
(`... is enabled, but depends on features that are disabled: [...]`).

The gates kresched reads are v1.36's gang-scheduling ones, all alpha and off by default
(`pkg/features/kube_features.go`): GenericWorkload (the Workload and PodGroup API, a pod's
`schedulingGroup`), GangScheduling (the pod-group cycle and the GangScheduling plugin),
WorkloadAwarePreemption (a pod group preempts as one, and disruptionMode), WorkloadWithJob (the
Job controller makes a Workload and PodGroup per Job), DRAWorkloadResourceClaims and
TopologyAwareWorkloadScheduling (read, not simulated). Must not do I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from kresched.errors import InputError

__all__ = ["GANG_GATES", "FeatureGates", "parse_feature_gates"]

#: The gates kresched reads, each with the gates it depends on (`defaultKubernetesFeatureGateDependencies`).
GANG_GATES: dict[str, tuple[str, ...]] = {
    "GenericWorkload": (),
    "GangScheduling": ("GenericWorkload",),
    "WorkloadAwarePreemption": ("GangScheduling",),
    "WorkloadWithJob": ("GenericWorkload",),
    "DRAWorkloadResourceClaims": ("GenericWorkload",),
    "TopologyAwareWorkloadScheduling": ("GenericWorkload",),
}

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


@dataclass(frozen=True)
class FeatureGates:
    """The gates set to true (every gate kresched reads is off by default in v1.36), and the
    names set that kresched does not know (`unknown`, said once as a warning)."""

    enabled: frozenset[str] = frozenset()
    unknown: tuple[str, ...] = ()
    #: As given (`--feature-gates`), for messages; "" when not given.
    text: str = ""

    def __contains__(self, gate: str) -> bool:
        return gate in self.enabled

    @property
    def gang_scheduling(self) -> bool:
        """The scheduler places a v1.36 PodGroup's gang as one (the pod-group cycle)."""
        return "GangScheduling" in self.enabled

    @property
    def workload_aware_preemption(self) -> bool:
        return "WorkloadAwarePreemption" in self.enabled

    @property
    def workload_with_job(self) -> bool:
        return "WorkloadWithJob" in self.enabled


def parse_feature_gates(text: str | None) -> FeatureGates:
    """`--feature-gates`' value (see the module docstring); an `InputError` as kube-scheduler fails."""
    if not text:
        return FeatureGates()
    values: dict[str, bool] = {}
    for part in text.split(","):
        if not part:
            continue
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq:
            raise InputError(f"--feature-gates {text}: missing bool value for {key}")
        if value not in _TRUE and value not in _FALSE:
            raise InputError(f'--feature-gates {text}: invalid value of {key}={value}, err: strconv.ParseBool: '
                             f'parsing "{value}": invalid syntax')
        values[key] = value in _TRUE
    enabled = frozenset(k for k, v in values.items() if v and k in GANG_GATES)
    for gate in sorted(enabled):
        missing = [d for d in GANG_GATES[gate] if d not in enabled]
        if missing:
            raise InputError(f"--feature-gates {text}: {gate} is enabled, but depends on features that are disabled: "
                             f"[{' '.join(missing)}]")
    return FeatureGates(enabled, tuple(sorted(k for k in values if k not in GANG_GATES)), text)
