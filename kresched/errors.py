"""Exit codes and the small exception hierarchy every layer raises; the CLI maps them in one place.

A `KreschedError` carries a one-line, user-facing message and the exit code it deserves.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "ExitCode",
    "KreschedError",
    "InputError",
    "ClusterAccessError",
    "InfeasibleError",
]


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    INFEASIBLE = 3
    PARTIAL = 4
    CLUSTER_ACCESS = 5
    #: The answer depends on objects the input does not hold (a snapshot taken without the DRA
    #: kinds a pod's devices need): neither "fits" nor "cannot be placed" can be said.
    UNKNOWN = 6
    INTERRUPTED = 130


class KreschedError(Exception):
    """An error with a message meant for the operator; `exit_code` says how the run ends."""

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str, exit_code: ExitCode | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def message(self) -> str:
        return str(self.args[0])


class InputError(KreschedError):
    """Bad input from the operator: a missing or malformed snapshot, an unknown pod, a bad flag value."""

    exit_code = ExitCode.USAGE


class ClusterAccessError(KreschedError):
    """The API server is unreachable, or refused us (401/403), or the kubeconfig is unusable."""

    exit_code = ExitCode.CLUSTER_ACCESS


class InfeasibleError(KreschedError):
    exit_code = ExitCode.INFEASIBLE
