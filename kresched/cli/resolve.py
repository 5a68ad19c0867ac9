"""Turning what the operator typed (`--pod ns/name`) into objects of the loaded state."""

from __future__ import annotations

import difflib

from kresched.errors import InputError
from kresched.model.cluster import ClusterState, parse_pod_ref
from kresched.model.objects import Pod

__all__ = ["resolve_pod"]


def resolve_pod(state: ClusterState, ref: str, source: str) -> Pod:
    """The pod `ref` names; an `InputError` (exit 2) naming close matches when there is none."""
    try:
        key = parse_pod_ref(ref)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    pod = state.pod(key)
    if pod is not None:
        return pod
    close = difflib.get_close_matches(key, list(state.pod_by_key), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(f"pod {key} not found in {source}{hint}")
