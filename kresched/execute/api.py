"""The one small client interface the execution layer writes through, and the failures it raises.

Owns: `ClusterApi` (what `preempt`, `untaint`, `drain` and `reconcile` may ask of a cluster), the
exceptions an API answer becomes (`NotFound`, `Conflict`, `TooManyRequests`, `ApiFailure`;
401/403 and unreachable servers are `ClusterAccessError`s), and `DryRunApi`, the client
`--dry-run` swaps in: it reads from the loaded state and records every write instead of sending
it. The official-client implementation is `kresched.execute.kube.KubeApi`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import msgspec

from kresched.errors import KreschedError
from kresched.model.cluster import ClusterState
from kresched.model.lease import Lease
from kresched.model.objects import Node, Pod, PodDisruptionBudget
from kresched.model.selectors import label_selector_matches
from kresched.model.specs import LabelSelector

__all__ = [
    "ApiFailure",
    "NotFound",
    "Conflict",
    "TooManyRequests",
    "WaitResult",
    "ClusterApi",
    "DryRunApi",
    "apply_merge_patch",
    "same_controller",
]


class ApiFailure(KreschedError):
    """An API answer kresched cannot use (4xx other than the ones below, or 5xx after retries)."""

    def __init__(self, message: str, status: int = 0, reason: str = "", retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        #: The server's Retry-After, in seconds, when it sent one (a 429 may).
        self.retry_after = retry_after


class NotFound(ApiFailure):
    """404: the object is gone (for an eviction or a delete: already done)."""


class Conflict(ApiFailure):
    """409: the object changed since it was read (resourceVersion or UID precondition)."""


class TooManyRequests(ApiFailure):
    """429 on an eviction: a PodDisruptionBudget does not allow it now (message says which)."""


@dataclass(frozen=True)
class WaitResult:
    """How waiting for the pending pod ended."""

    kind: Literal["bound", "deleted", "timeout", "simulated"]
    node: str | None = None


class ClusterApi(Protocol):
    """What the execution layer may ask of a cluster. Reads return model objects."""

    #: Shown in reports: "cluster", "dry run", "server dry run".
    mode: str

    def read_state(self) -> ClusterState: ...

    def get_node(self, name: str) -> Node: ...

    def patch_node(self, name: str, patch: dict[str, Any]) -> Node: ...

    def evict_pod(self, pod: Pod, grace_seconds: int) -> None: ...

    def delete_pod(self, pod: Pod, grace_seconds: int) -> None: ...

    def wait_for_pdb(self, namespace: str, name: str, timeout_seconds: float) -> PodDisruptionBudget | None:
        """Until the PDB allows a disruption (`status.disruptionsAllowed > 0`, or no status to judge
        by), is gone (None), or the timeout (the PDB as last read). A live cluster's is watched, so
        that it returns as soon as the disruption controller gives the budget back."""
        ...

    def is_gone(self, pod: Pod) -> bool:
        """The pod with this UID no longer exists (a same-name pod with another UID is a new pod)."""
        ...

    def which_gone(self, pods: Sequence[Pod]) -> set[str]:
        """Keys of those `pods` that no longer exist, by UID as `is_gone`, in one read per node."""
        ...

    def get_lease(self, namespace: str, name: str) -> Lease | None: ...

    def create_lease(self, namespace: str, name: str, spec: dict[str, Any]) -> Lease: ...

    def update_lease(self, lease: Lease, spec: dict[str, Any]) -> Lease:
        """Replace the Lease's spec, conditional on its resourceVersion (409 `Conflict` if it moved)."""
        ...

    def wait_for_binding(self, pod: Pod, timeout_seconds: float,
                         progress: Callable[[str], None] | None = None, planned: str | None = None) -> WaitResult:
        """Until the pod is bound, deleted or the timeout. `planned` is where the plan expects it
        (a dry run pretends it went there)."""
        ...

    def replicas_of(self, pod: Pod, selector: str | None = None) -> list[Pod]:
        """The pods of `pod`'s namespace that share its controller (by owner UID), itself included:
        those `selector` selects (its controller's selector, `ClusterState.replica_selector`;
        default `template_selector`), filtered by their owner references."""
        ...

    def wait_for_replacement(self, pod: Pod, known_uids: set[str], timeout_seconds: float,
                             planned: str | None = None, selector: str | None = None) -> WaitResult:
        """Until a pod of `pod`'s controller (`replicas_of`) that is none of `known_uids` is bound
        and Ready (`bound`, with its node), or the timeout (`timeout`, with its node if it was bound
        but not Ready). A dry run pretends it landed on `planned` (`simulated`)."""
        ...

    def create_event(self, namespace: str, event: dict[str, Any]) -> None:
        """Record an `events.k8s.io/v1` Event (`kresched.execute.recorder` builds it)."""
        ...

    def apply_object(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply `obj` (a workload of `model.workloads.WORKLOAD_KINDS`, its namespace set),
        field manager `kresched`: created when it does not exist, else the fields it sets are
        kresched's. Returns the object as the API server answered (with its UID)."""
        ...

    def pods_matching(self, namespace: str, selector: LabelSelector) -> list[Pod]:
        """The pods of `namespace` that `selector` selects."""
        ...


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (what `application/merge-patch+json` means to the API server)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = apply_merge_patch(out.get(k), v)
    return out


@dataclass
class DryRunApi:
    """`--dry-run`: reads from `state`, records writes in `writes`, changes nothing anywhere.

    Node patches are applied to an in-memory copy so a flow that re-reads a node sees its own
    (pretend) writes; evictions and deletes succeed; waiting ends at once as `simulated`.
    """

    state: ClusterState
    writes: list[tuple[str, str, Any]] = field(default_factory=list)
    mode: str = "dry run"
    _nodes: dict[str, Node] = field(default_factory=dict)
    _leases: dict[tuple[str, str], Lease] = field(default_factory=dict)
    _bound: dict[str, str] = field(default_factory=dict)

    def read_state(self) -> ClusterState:
        """The state as this dry run left it: evicted pods gone, pods it pretended were bound on
        their planned nodes, patched nodes patched — so a rehearsal of several steps (a reconcile
        pass) plans each step on what the earlier ones would have done."""
        if not self.writes and not self._bound:
            return self.state
        gone = {key for verb, key, _ in self.writes if verb in ("evict", "delete")}
        pods = []
        for p in self.state.pods:
            if p.key in gone:
                continue
            node = self._bound.get(p.key)
            if node and not p.spec.node_name:
                p = msgspec.structs.replace(p, spec=msgspec.structs.replace(p.spec, node_name=node),
                                            status=msgspec.structs.replace(p.status, phase="Running"))
            pods.append(p)
        nodes = [self._nodes.get(n.name, n) for n in self.state.nodes]
        s = self.state
        return ClusterState.build(nodes, pods, s.pdbs, s.priority_classes, s.namespaces, s.workloads, s.storage, s.dra,
                                  s.node_leases, s.pod_groups, s.scheduling_workloads, s.gang_kinds)

    def get_node(self, name: str) -> Node:
        node = self._nodes.get(name) or self.state.node_by_name.get(name)
        if node is None:
            raise NotFound(f"node {name} not found", 404, "NotFound")
        return node

    def patch_node(self, name: str, patch: dict[str, Any]) -> Node:
        node = self.get_node(name)
        merged = apply_merge_patch(msgspec.to_builtins(node), patch)
        merged.pop("kind", None)
        patched = msgspec.convert(merged, Node)
        self._nodes[name] = patched
        self.writes.append(("patch", f"node/{name}", patch))
        return patched

    def evict_pod(self, pod: Pod, grace_seconds: int) -> None:
        self.writes.append(("evict", pod.key, grace_seconds))

    def delete_pod(self, pod: Pod, grace_seconds: int) -> None:
        self.writes.append(("delete", pod.key, grace_seconds))

    def get_lease(self, namespace: str, name: str) -> Lease | None:
        return self._leases.get((namespace, name))

    def create_lease(self, namespace: str, name: str, spec: dict[str, Any]) -> Lease:
        lease = msgspec.convert({"metadata": {"name": name, "namespace": namespace, "resourceVersion": "1"},
                                 "spec": spec}, Lease)
        self._leases[(namespace, name)] = lease
        self.writes.append(("create", f"lease/{namespace}/{name}", spec))
        return lease

    def update_lease(self, lease: Lease, spec: dict[str, Any]) -> Lease:
        key = (lease.metadata.namespace, lease.metadata.name)
        rv = str(int(lease.metadata.resource_version or "0") + 1)
        new = msgspec.convert({"metadata": {"name": key[1], "namespace": key[0], "resourceVersion": rv},
                               "spec": spec}, Lease)
        self._leases[key] = new
        self.writes.append(("update", f"lease/{key[0]}/{key[1]}", spec))
        return new

    def is_gone(self, pod: Pod) -> bool:
        return any(verb in ("evict", "delete") and key == pod.key for verb, key, _ in self.writes) \
            or self.state.pod(pod.key) is None

    def which_gone(self, pods: Sequence[Pod]) -> set[str]:
        return {p.key for p in pods if self.is_gone(p)}

    def wait_for_pdb(self, namespace: str, name: str, timeout_seconds: float) -> PodDisruptionBudget | None:
        # Nothing changes a snapshot: no waiting.
        return next((b for b in self.state.pdbs if b.namespace == namespace and b.name == name), None)

    def wait_for_binding(self, pod: Pod, timeout_seconds: float,
                         progress: Callable[[str], None] | None = None, planned: str | None = None) -> WaitResult:
        if planned:
            self._bound[pod.key] = planned
        return WaitResult("simulated")

    def replicas_of(self, pod: Pod, selector: str | None = None) -> list[Pod]:
        return same_controller(pod, self.state.pods)

    def create_event(self, namespace: str, event: dict[str, Any]) -> None:
        self.writes.append(("event", f"{namespace}/{event['metadata']['name']}", event))

    def wait_for_replacement(self, pod: Pod, known_uids: set[str], timeout_seconds: float,
                             planned: str | None = None, selector: str | None = None) -> WaitResult:
        return WaitResult("simulated", planned)

    def apply_object(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        ref = f"{obj.get('kind', '').lower()}/{meta.get('namespace', '')}/{meta.get('name', '')}"
        self.writes.append(("apply", ref, obj))
        return obj

    def pods_matching(self, namespace: str, selector: LabelSelector) -> list[Pod]:
        return [p for p in self.state.pods if p.namespace == namespace and label_selector_matches(selector, p.labels)]


def same_controller(pod: Pod, pods: Sequence[Pod]) -> list[Pod]:
    """Those of `pods` in `pod`'s namespace whose controller is `pod`'s (by UID when it has one)."""
    c = pod.controller
    if c is None:
        return [p for p in pods if p.key == pod.key]
    out = []
    for p in pods:
        pc = p.controller
        if p.namespace == pod.namespace and pc is not None and pc.kind == c.kind and pc.name == c.name \
                and (not c.uid or not pc.uid or pc.uid == c.uid):
            out.append(p)
    return out
