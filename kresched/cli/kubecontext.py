"""The kubeconfig context kubectl would use (`kube_context`): its name, namespace and server, for
the default namespace, completions and the prompts and summaries that name the cluster. Reads the
kubeconfig files leniently (never raises); connecting, and reporting what is wrong in a file, is
`sources.connection`'s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from kresched.errors import InputError

__all__ = ["KubeContext", "kube_context"]


@dataclass(frozen=True)
class KubeContext:
    """What the kubeconfig says about the context kubectl would use: its name, namespace and the
    cluster's server (all None where it says nothing; `name` None in a pod: the in-cluster
    service account)."""

    name: str | None = None
    namespace: str | None = None
    server: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """`{"context", "server"}`: the cluster a run talks to, in a summary."""
        return {"context": self.name, "server": self.server}

    def text(self) -> str:
        """`context "prod-eu" (https://10.0.0.1:6443)`, for prompts, status lines and summaries."""
        from kresched.render.common import cluster_text

        return cluster_text(self.as_dict()) or "the cluster"


_SA_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


def kube_context(kubeconfig: str | None, context: str | None) -> KubeContext:
    """The context kubectl would use, merging KUBECONFIG's files as kubectl does (the first file
    that sets a value wins); in a pod without a kubeconfig, the service account's namespace and the
    API server the environment names. Never raises: what is unreadable or malformed in a file
    (not UTF-8, too deep, not YAML, a field of the wrong kind) is left to `connect` to report, in
    one line naming the file and the field."""
    spec = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    current, contexts, clusters, found = context, {}, {}, False
    for path in (os.path.expanduser(p) for p in spec.split(os.pathsep) if p):
        doc = _kubeconfig_doc(path)
        if doc is None:
            continue
        found = True
        if not isinstance(current, str) or not current:
            current = doc.get("current-context")
        for key, into in (("contexts", contexts), ("clusters", clusters)):
            items = doc.get(key)
            for item in items if isinstance(items, list) else ():
                name = item.get("name") if isinstance(item, dict) else None
                if isinstance(name, str) and isinstance(item.get(key[:-1]), dict):
                    into.setdefault(name, item[key[:-1]])
    if found:
        ctx = contexts.get(current) or {} if isinstance(current, str) else {}
        cluster = ctx.get("cluster")
        entry = clusters.get(cluster) or {} if isinstance(cluster, str) else {}
        ns, server = ctx.get("namespace"), entry.get("server")
        return KubeContext(current if isinstance(current, str) and current else None,
                           ns if isinstance(ns, str) and ns else None,
                           server if isinstance(server, str) and server else None)
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    server = f"https://{host}:{port}" if host and port else None
    try:
        with open(_SA_NAMESPACE, encoding="utf-8") as f:
            return KubeContext(None, f.read().strip() or None, server)
    except OSError:
        return KubeContext(None, None, server)


def _kubeconfig_doc(path: str) -> dict[str, Any] | None:
    """The kubeconfig at `path` as a mapping, or None when it cannot be read as one."""
    import yaml

    from kresched.errors import ClusterAccessError
    from kresched.sources.config_file import read_kubeconfig
    from kresched.sources.decode import check_yaml_depth

    try:
        text = read_kubeconfig(path)
        check_yaml_depth(text, path)
        doc = yaml.safe_load(text) or {}
    except (ClusterAccessError, ValueError, InputError, yaml.YAMLError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None
