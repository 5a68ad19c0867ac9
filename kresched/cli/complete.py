"""Shell completion of pod, node and namespace names: from the `--snapshot` on the command line
when there is one, else from the cluster (the kubeconfig and context on the command line, or the
defaults).

A shell waits for these, so they must answer within a second and never fail loudly: each cluster
request has a one-second timeout, and any error (no cluster, no kubeconfig, an unreadable
snapshot) completes nothing rather than printing into the operator's prompt.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["complete_namespaces", "complete_pods", "complete_nodes"]

#: Seconds a completion may wait for the API server (connect, read): with Python's start-up
#: (about half a second, measured), a silent server still gets an answer within about a second.
TIMEOUT = (0.4, 0.5)
#: Enough names to choose from; a shell shows no more anyway.
LIMIT = 500


class _Meta(msgspec.Struct, frozen=True):
    name: str = ""
    namespace: str = ""


class _Spec(msgspec.Struct, frozen=True, rename="camel"):
    node_name: str = ""


class _Item(msgspec.Struct):
    metadata: _Meta = _Meta()
    spec: _Spec = _Spec()


class _List(msgspec.Struct):
    items: list[_Item] = []


def _params(ctx: Any) -> dict[str, Any]:
    params: dict[str, Any] = {}
    while ctx is not None:  # the verb's own options, then the root's
        params = {**{k: v for k, v in (ctx.params or {}).items() if v is not None}, **params}
        ctx = ctx.parent
    return params


def _snapshot_names(spec: str, kind: str, namespace: str | None) -> list[str]:
    from kresched.sources.snapshot import load_snapshot

    state = load_snapshot(spec)
    if kind == "node":
        return sorted(n.name for n in state.nodes)
    if kind == "namespace":  # the Namespace objects, or where the pods are when it has none
        return sorted({n.name for n in state.namespaces} or {p.namespace for p in state.pods})
    # Pending pods first: those are the ones plan, explain and preempt are for.
    pods = sorted((p for p in state.pods if p.namespace == namespace), key=lambda p: (bool(p.spec.node_name), p.name))
    return [p.name for p in pods]


def _live_names(params: dict[str, Any], kind: str, namespace: str | None) -> list[str]:
    from kresched.sources.connection import connect

    with connect(params.get("kubeconfig"), params.get("context"), request_timeout=TIMEOUT) as client:
        if kind == "node":
            resp = client.core.list_node(limit=LIMIT, _preload_content=False, _request_timeout=TIMEOUT)
        elif kind == "namespace":
            resp = client.core.list_namespace(limit=LIMIT, _preload_content=False, _request_timeout=TIMEOUT)
        else:
            resp = client.core.list_namespaced_pod(namespace, limit=LIMIT, _preload_content=False,
                                                   _request_timeout=TIMEOUT)
        items = msgspec.json.decode(resp.data, type=_List).items
    if kind == "namespace":
        return sorted(i.metadata.name for i in items)
    return [i.metadata.name for i in sorted(items, key=lambda i: (bool(i.spec.node_name), i.metadata.name))]


def _names(ctx: Any, kind: str, namespace: str | None = None) -> list[str]:
    params = _params(ctx)
    snapshot = params.get("snapshot")
    if kind == "pod" and namespace is None:
        from kresched.cli.kubecontext import kube_context

        namespace = params.get("namespace") or (
            "default" if snapshot else kube_context(params.get("kubeconfig"), params.get("context")).namespace
            or "default")
    try:
        if snapshot:
            return _snapshot_names(snapshot, kind, namespace)
        return _live_names(params, kind, namespace)
    except Exception:  # a prompt is no place for an error: complete nothing
        return []


def complete_pods(ctx: Any, incomplete: str) -> list[str]:
    """Pod names in -n's namespace; `NS/` completes names in NS, `pod/` keeps its prefix."""
    prefix, sep, rest = incomplete.rpartition("/")
    if sep and prefix.lower() in ("pod", "pods", "po"):
        return [f"{prefix}/{n}" for n in _names(ctx, "pod") if n.startswith(rest)]
    if sep:
        return [f"{prefix}/{n}" for n in _names(ctx, "pod", prefix) if n.startswith(rest)]
    return [n for n in _names(ctx, "pod") if n.startswith(incomplete)]


def complete_namespaces(ctx: Any, incomplete: str) -> list[str]:
    """Namespace names (`-n kube-sys<TAB>`)."""
    return [n for n in _names(ctx, "namespace", "") if n.startswith(incomplete)]


def complete_nodes(ctx: Any, incomplete: str) -> list[str]:
    """Node names (`node/` keeps its prefix)."""
    prefix, sep, rest = incomplete.rpartition("/")
    if sep and prefix.lower() in ("node", "nodes", "no"):
        return [f"{prefix}/{n}" for n in _names(ctx, "node") if n.startswith(rest)]
    return [n for n in _names(ctx, "node") if n.startswith(incomplete)]
