"""Writes with kresched's retry rules applied (policies themselves: `kresched.retry`).

- eviction answered 429 (a PodDisruptionBudget says no, for now) → back off (at least the
  answer's Retry-After) and retry until the eviction deadline, then give up on that victim
  (`EvictionGaveUp`);
- 404 → the pod is already gone (the caller treats it as done);
- 409 on a node write → re-read the node, recompute the patch, retry;
- 5xx, dropped connections, timeouts → retried inside the client (`kresched.execute.kube`);
- 401/403 → `ClusterAccessError` from the client, never retried; other 4xx → `ApiFailure`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kresched.errors import KreschedError
from kresched.execute.api import ClusterApi, Conflict, TooManyRequests
from kresched.model.objects import Node, Pod
from kresched.retry import CONFLICT_RETRY, EVICTION_RETRY, RetryPolicy

__all__ = ["EvictionGaveUp", "evict_with_retry", "patch_node_with_retry"]


class EvictionGaveUp(KreschedError):
    """A PodDisruptionBudget kept refusing the eviction until the deadline."""


def evict_with_retry(api: ClusterApi, pod: Pod, grace_seconds: int, deadline_seconds: float,
                     on_blocked: Callable[[str], None] = lambda msg: None,
                     policy: RetryPolicy = EVICTION_RETRY) -> None:
    """Evict `pod`; NotFound (already gone) and Conflict (a new pod with that name) propagate."""
    blocked: list[str] = []

    def attempt() -> None:
        try:
            api.evict_pod(pod, grace_seconds)
        except TooManyRequests as exc:
            blocked.append(exc.message)
            on_blocked(exc.message)
            raise

    # A 429 may say when to come back (e.g. a PDB its controller has not processed yet: 10 s).
    policy = replace(policy, retry_after=lambda e: getattr(e, "retry_after", None))
    try:
        policy.with_deadline(deadline_seconds).call(attempt, retry_on=lambda e: isinstance(e, TooManyRequests))
    except TooManyRequests:
        raise EvictionGaveUp(f"still refused after {deadline_seconds:.0f}s: {blocked[-1]}") from None


def patch_node_with_retry(api: ClusterApi, name: str, make_patch: Callable[[Node], dict[str, Any] | None],
                          policy: RetryPolicy = CONFLICT_RETRY) -> Node | None:
    """Read the node, compute the patch from what was read, send it; on 409 read again and retry.
    Returns the patched node, or None when `make_patch` found nothing to change."""

    def attempt() -> Node | None:
        node = api.get_node(name)
        patch = make_patch(node)
        if patch is None:
            return None
        return api.patch_node(name, patch)

    return policy.call(attempt, retry_on=lambda e: isinstance(e, Conflict))
