"""Turning what the operator typed into objects of the loaded state, the way kubectl reads it:
a pod as `NAME` (in -n, else the context's namespace), `pod/NAME` or `NS/NAME`; a node as `NODE`
or `node/NODE`. An unknown name is an `InputError` (exit 2) with the closest names as a suggestion.
"""

from __future__ import annotations

import difflib

from kresched.errors import InputError
from kresched.model.cluster import ClusterState
from kresched.model.objects import Node, Pod

__all__ = ["pod_key", "resolve_pod", "resolve_nodes", "pick_pod_ref"]

#: kubectl's spellings of the resource in `TYPE/NAME`.
_POD_TYPES = {"pod", "pods", "po"}
_NODE_TYPES = {"node", "nodes", "no"}


def pick_pod_ref(positional: str | None, option: str | None, required: bool) -> str | None:
    """The pod named either positionally (kubectl's way) or with --pod (kresched's first spelling)."""
    if positional and option and positional != option:
        raise InputError(f"two pods named: {positional} and --pod {option}; name one")
    if (positional is not None and not positional.strip()) or (option is not None and not option.strip()):
        # `--pod "$POD"` with an empty variable must not mean "every pending pod".
        raise InputError("the pod name is empty: POD, pod/NAME or NAMESPACE/NAME")
    ref = positional or option
    if ref is None and required:
        raise InputError("a pod is required: POD, pod/NAME or NAMESPACE/NAME (e.g. -n kube-system POD)")
    return ref


def pod_key(ref: str, namespace: str, namespace_given: bool = False) -> str:
    """`NAME`, `pod/NAME`, `NS/NAME` → `ns/name`. `NS/NAME` with a different -n is refused rather
    than guessed."""
    parts = ref.split("/")
    if len(parts) == 1 and parts[0]:
        return f"{namespace}/{parts[0]}"
    if len(parts) == 2 and all(parts):
        kind, name = parts
        if kind.lower() in _POD_TYPES:
            return f"{namespace}/{name}"
        if namespace_given and kind != namespace:
            raise InputError(f"pod {ref} is in namespace {kind}, but -n says {namespace}")
        return ref
    raise InputError(f"invalid pod {ref!r}: expected NAME, pod/NAME or NAMESPACE/NAME")


def resolve_pod(state: ClusterState, ref: str, source: str, namespace: str = "default",
                namespace_given: bool = False) -> Pod:
    """The pod `ref` names; an `InputError` naming close matches when there is none."""
    key = pod_key(ref, namespace, namespace_given)
    pod = state.pod(key)
    if pod is not None:
        return pod
    name = key.split("/", 1)[1]
    elsewhere = sorted(p.key for p in state.pods if p.name == name)
    if elsewhere:
        hint = f"; did you mean {', '.join(elsewhere[:3])}?"
    else:
        close = difflib.get_close_matches(key, list(state.pod_by_key), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(f"pod {key} not found in {source}{hint}")


def node_name(ref: str) -> str:
    kind, sep, name = ref.partition("/")
    if sep and kind.lower() in _NODE_TYPES and name:
        return name
    if sep:
        raise InputError(f"invalid node {ref!r}: expected NODE or node/NODE")
    return ref


def resolve_nodes(state: ClusterState, refs: list[str]) -> list[Node]:
    """The nodes `refs` name, in order, without repeats; unknown ones are one `InputError`."""
    names = list(dict.fromkeys(node_name(r) for r in refs))
    unknown = [n for n in names if n not in state.node_by_name]
    if unknown:
        hints = []
        for n in unknown:
            close = difflib.get_close_matches(n, list(state.node_by_name), n=1, cutoff=0.6)
            if close:
                hints.append(close[0])
        hint = f"; did you mean {', '.join(hints)}?" if hints else ""
        raise InputError(f"node{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} not found{hint}")
    return [state.node_by_name[n] for n in names]
