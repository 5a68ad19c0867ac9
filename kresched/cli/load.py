"""Loading the cluster state a command works on, from the one source chosen: a snapshot file (or
the demo) or the live cluster, with a status line on a terminal while it loads.

Owns `load_state` and what it keeps loaded to the end of the process (`KEEP_LOADED`, `keep_to_the_end`).
"""

from __future__ import annotations

import os

from kresched.cli.common import ENV, Options
from kresched.cli.kubecontext import kube_context
from kresched.cli.progress import progress, size_text
from kresched.errors import InputError
from kresched.model.cluster import ClusterState

__all__ = ["KEEP_LOADED", "keep_to_the_end", "load_state"]


#: Set by `cli._run` for a whole process: the states `load_state` loaded (and what a command built
#: on them, `keep_to_the_end`), kept to its end. The process leaves with `os._exit` once its output
#: is flushed, and the operating system takes a loaded cluster back at once — the interpreter would
#: free its millions of objects one by one when the command returns (a tenth of a one-pod command's
#: CPU at 1k nodes).
KEEP_LOADED: list[object] | None = None


def keep_to_the_end(built: object) -> None:
    """Keep `built` (a planner and the simulated clusters it carries) to the process's end, as a
    loaded state is: freeing a 5,000-pod queue's planner object by object costs 0.3 s of CPU at
    5k nodes, for nothing."""
    if KEEP_LOADED is not None:
        KEEP_LOADED.append(built)


def load_state(opts: Options) -> ClusterState:
    """The cluster state from the snapshot, or from the live cluster, with a status line on a
    terminal. A snapshot without nodes is an input error: nothing can be planned on it."""
    state = _load_state(opts)
    keep_to_the_end(state)
    _say_warnings(state.warnings)
    return state


#: How many of the objects' warnings are printed one by one; the rest are counted.
_MAX_WARNINGS = 5


def _say_warnings(warnings: tuple[str, ...]) -> None:
    """What the API server accepted but makes no sense to plan with (`ClusterState.warnings`), as
    kubectl prints a server's warnings: one line each, on stderr, never in the output."""
    for text in warnings[:_MAX_WARNINGS]:
        ENV.say(f"warning: {text}")
    if len(warnings) > _MAX_WARNINGS:
        ENV.say(f"warning: and {len(warnings) - _MAX_WARNINGS} more such objects")


def _load_state(opts: Options) -> ClusterState:
    if opts.snapshot is not None:
        from kresched.sources.decode import paused_gc
        from kresched.sources.snapshot import build_state, load_snapshot, read_source

        _check_snapshot_exists(opts.snapshot)
        try:
            size = os.path.getsize(opts.snapshot) if os.path.isfile(opts.snapshot) else 0
        except OSError:
            size = 0
        what = "the demo cluster" if opts.snapshot == "demo" else opts.snapshot
        with progress(opts, f"reading {what}" + (f" ({size_text(size)})" if size else "")) as p:
            stdin = getattr(ENV.stdin, "buffer", ENV.stdin)
            if p.shown:  # the same steps as `load_snapshot`, with what was read shown in between
                with paused_gc():
                    objects = read_source(opts.snapshot, stdin)
                    p.update(f"read {len(objects.nodes)} nodes, {len(objects.pods)} pods, {len(objects.pdbs)} "
                             f"PodDisruptionBudgets from {what}; indexing them")
                    state = build_state(objects)
            else:
                state = load_snapshot(opts.snapshot, stdin=stdin)
        if not state.nodes:
            from kresched.render.common import count

            manifest = _manifest_workloads(opts.snapshot, state)
            if manifest:
                raise InputError(f"snapshot {opts.snapshot} has no nodes, only {manifest}: is it a manifest? -f names "
                                 f"the manifests of workloads to plan for ({ENV.prog} plan -f {opts.snapshot}, with "
                                 "--snapshot for the cluster's state, or none for the cluster itself)")
            kinds = count(len(state.pods), "pod") if state.pods else "no pods either"
            raise InputError(f"snapshot {opts.snapshot} has no nodes ({kinds}): a plan needs the nodes too, e.g. "
                             "kubectl get nodes,pods,pdb,priorityclasses,namespaces -A -o yaml")
        return state
    from kresched.sources.connection import connect
    from kresched.sources.live import load_live

    cluster = kube_context(opts.kubeconfig, opts.context)
    where = f'"{cluster.name}"' if cluster.name else "the cluster"
    with progress(opts, f"listing nodes, pods, PodDisruptionBudgets and PriorityClasses from {cluster.text()}") as p:
        def on_page(kind: str, count: int, read: int) -> None:
            plural = f"{kind}es" if kind.endswith("s") else f"{kind}s"  # PriorityClasses, DeviceClasses
            p.update(f"listing {plural} from {where}: {count} so far ({size_text(read)} read)")

        return load_live(connect(opts.kubeconfig, opts.context), on_page=on_page if p.shown else None)


#: The kinds `plan -f` plans for (`sources.manifests`).
_WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job", "CronJob")


def _manifest_workloads(spec: str, state: ClusterState) -> str:
    """What a `--snapshot` without nodes holds that `-f` would plan for — workloads, or pods bound to
    no node — as `a Deployment (shop/web)`, `2 Deployments and a Pod`; "" when it holds none (or
    cannot be read again: standard input)."""
    if spec in ("-", "demo") or any(p.spec.node_name for p in state.pods):
        return ""
    from kresched.sources.manifests import read_manifests

    try:
        docs = read_manifests([spec])
    except InputError:
        return ""
    found = [(d.obj.get("kind"), d.obj.get("metadata") or {}) for d in docs
             if d.obj.get("kind") in (*_WORKLOAD_KINDS, "Pod")]
    if not found:
        return ""
    if len(found) == 1:
        kind, meta = found[0]
        name = meta.get("name") if isinstance(meta, dict) else None
        where = f"{meta.get('namespace') or 'default'}/{name}" if isinstance(name, str) else ""
        return f"a {kind}" + (f" ({where})" if where else "")
    from collections import Counter

    kinds = Counter(str(k) for k, _ in found)
    parts = [f"{n} {k}s" if n > 1 else f"a {k}" for k, n in kinds.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _check_snapshot_exists(spec: str) -> None:
    """A missing snapshot is a usage error naming what the operator probably meant: `demo` for
    `Demo`, or a file of a close name next to it."""
    if spec in ("-", "demo") or os.path.exists(spec):
        return
    import difflib

    folder = os.path.dirname(spec) or "."
    try:
        near = [os.path.join(os.path.dirname(spec), f) for f in sorted(os.listdir(folder))]
    except OSError:
        near = []
    close = difflib.get_close_matches(spec, ["demo", *near], n=1, cutoff=0.6) or [
        c for c in ["demo"] if spec.lower() == c]
    hint = f"; did you mean --snapshot {close[0]}?" if close else ""
    raise InputError(f"--snapshot {spec}: no such file or directory{hint}")
