"""A node and the pods the scheduler counts on it: `NodeInfo` (upstream's `framework.NodeInfo`).

Owns the sums the filters and scores read (requests, the non-zero requests the scores count, host
ports in use, pods with pod affinity, pods with volumes, the pods by namespace) and their upkeep as
pods are added and removed — one at a time, many at once (`remove_pods`), or the pod just added
taken back (`take_back`). Simulations never change a NodeInfo another snapshot holds: they clone
it (`clone`) and change the clone. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import repeat
from operator import attrgetter, is_

from kresched.model.objects import Node, Pod

__all__ = ["NodeInfo"]


#: The scheduler's cache drops terminal pods: they hold no resources or ports.
_TERMINAL = frozenset(("Succeeded", "Failed"))


class NodeInfo:
    """A node and the pods the scheduler counts on it (`framework.NodeInfo`).

    Mutable on purpose: preemption simulations remove and add pods on a `clone()`, as upstream does.
    `requested_*` are the summed effective requests of the pods; `used_ports` counts
    (hostIP, protocol, port) triples, found on first use (only a pod asking for host ports reads
    them: a pod's ports are a walk of its containers, two fifths of building a NodeInfo when done
    for every pod) and kept up to date from then on.
    """

    __slots__ = (
        "_by_namespace",
        "_used_ports",
        "_volume_pods",
        "node",
        "name",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "nonzero_memory",
        "nonzero_milli_cpu",
        "requested_ephemeral_storage",
        "requested_memory",
        "requested_milli_cpu",
        "requested_scalar",
    )

    def __init__(self, node: Node, pods: Iterable[Pod] = ()) -> None:
        self.node = node
        #: The node's name (a plain attribute: it is read millions of times when planning).
        self.name: str = node.metadata.name
        self.pods: list[Pod] = []
        self.requested_milli_cpu = 0
        self.requested_memory = 0
        self.requested_ephemeral_storage = 0
        self.requested_scalar: dict[str, int] = {}
        self._used_ports: Counter[tuple[str, str, int]] | None = None  # `used_ports`
        self.pods_with_affinity: list[Pod] = []
        self.pods_with_required_anti_affinity: list[Pod] = []
        self._volume_pods: tuple[Pod, ...] | None = None
        self._by_namespace: dict[str, tuple[Pod, ...]] | None = None  # `namespace_groups`, kept
        #: `NonZeroRequested`: what the scoring plugins count, with the defaults for containers
        #: that request no cpu or memory (`Pod.nonzero_milli_cpu`).
        self.nonzero_milli_cpu = 0
        self.nonzero_memory = 0
        # The bulk of Snapshot.from_state: 150,000 pods on a large cluster, so sums are kept in
        # locals; pods with extended resources or pod affinity terms (few) take the general path.
        cpu = mem = eph = nz_cpu = nz_mem = 0
        for p in pods:
            if p.status.phase in _TERMINAL:
                continue
            r = p.requests
            if r.scalar or (p.spec.affinity is not None and p.pod_affinity_kinds[0]):
                self.add_pod(p)
                continue
            self.pods.append(p)
            cpu += r.milli_cpu
            mem += r.memory
            eph += r.ephemeral_storage
            nz_cpu += p.nonzero_milli_cpu
            nz_mem += p.nonzero_memory
        self.requested_milli_cpu += cpu
        self.requested_memory += mem
        self.requested_ephemeral_storage += eph
        self.nonzero_milli_cpu += nz_cpu
        self.nonzero_memory += nz_mem


    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)
        # What was found of the pods is carried over (new objects: a clone shares the old ones).
        if self._volume_pods is not None and _uses_volumes(pod):
            self._volume_pods = (*self._volume_pods, pod)
        if self._by_namespace is not None:
            groups = dict(self._by_namespace)
            ns = pod.metadata.namespace
            groups[ns] = (*groups.get(ns, ()), pod)
            self._by_namespace = groups
        self._account(pod, 1)

    def remove_pod(self, pod: Pod) -> None:
        """Remove by identity (namespace/name: the first pod here with its key); ValueError if the
        pod is not here. Victim selection removes and adds back every pod of a node, so the search
        is in C, and the namespace groups are regrouped only when next asked for."""
        try:
            i = list(map(_KEY, self.pods)).index(pod.key)
        except ValueError:
            raise ValueError(f"pod {pod.key} is not on node {self.name}") from None
        p = self.pods.pop(i)
        vp = self._volume_pods
        if vp and any(map(is_, vp, repeat(p))):
            self._volume_pods = tuple([v for v in vp if v is not p])
        self._by_namespace = None
        self._account(p, -1)

    def remove_pods(self, pods: Sequence[Pod]) -> None:
        """`remove_pod` of each of `pods`, in order, in one pass over the node's pods (the same
        NodeInfo after); ValueError, and nothing removed, if one is not here."""
        want: dict[str, int] = {}  # key → how many pods of that key to take off (one, unless given twice)
        for p in pods:
            want[p.key] = want.get(p.key, 0) + 1
        kept: list[Pod] = []
        gone: list[Pod] = []
        for p in self.pods:
            n = want.get(p.key)
            if n:
                want[p.key] = n - 1
                gone.append(p)
            else:
                kept.append(p)
        if len(gone) != len(pods):
            missing = next(k for k, n in want.items() if n > 0)
            raise ValueError(f"pod {missing} is not on node {self.name}")
        self.pods = kept
        vp = self._volume_pods
        if vp:
            ids = {id(p) for p in gone}
            self._volume_pods = tuple([v for v in vp if id(v) not in ids])
        self._by_namespace = None
        # `_account(p, -1)` of each, the sums every pod has kept in locals (as `__init__` does).
        cpu = mem = eph = nz_cpu = nz_mem = 0
        for p in gone:
            r = p.requests
            cpu += r.milli_cpu
            mem += r.memory
            eph += r.ephemeral_storage
            nz_cpu += p.nonzero_milli_cpu
            nz_mem += p.nonzero_memory
            if r.scalar or p.spec.affinity is not None or (self._used_ports is not None and p.host_ports):
                self._account(p, -1, sums=False)
        self.requested_milli_cpu -= cpu
        self.requested_memory -= mem
        self.requested_ephemeral_storage -= eph
        self.nonzero_milli_cpu -= nz_cpu
        self.nonzero_memory -= nz_mem

    def take_back(self, pod: Pod) -> None:
        """`remove_pod` of `pod` just added (`add_pod`: the last pod here), without a search: the
        same where no other pod here has its key, as on every node of a simulation (a state holds
        one pod per key, and each pod a simulation makes has a key of its own)."""
        if not self.pods or self.pods[-1] is not pod:
            self.remove_pod(pod)
            return
        self.pods.pop()
        vp = self._volume_pods
        if vp and vp[-1] is pod:
            self._volume_pods = vp[:-1]
        self._by_namespace = None
        self._account(pod, -1)

    def _account(self, pod: Pod, sign: int, sums: bool = True) -> None:
        """Count `pod` in (+1) or out (−1); without `sums`, all but its cpu, memory and ephemeral
        storage (and their non-zero counterparts), which the caller adds up."""
        r = pod.requests
        if sums:
            self.requested_milli_cpu += sign * r.milli_cpu
            self.requested_memory += sign * r.memory
            self.requested_ephemeral_storage += sign * r.ephemeral_storage
            self.nonzero_milli_cpu += sign * pod.nonzero_milli_cpu
            self.nonzero_memory += sign * pod.nonzero_memory
        for k, v in r.scalar.items():
            self.requested_scalar[k] = self.requested_scalar.get(k, 0) + sign * v
        used = self._used_ports
        if used is not None:
            for port in pod.host_ports:
                used[port] += sign
                if used[port] <= 0:
                    del used[port]
        if pod.spec.affinity is not None:
            has_affinity, required_anti = pod.pod_affinity_kinds
            if has_affinity:
                _update(self.pods_with_affinity, pod, sign)
            if required_anti:
                _update(self.pods_with_required_anti_affinity, pod, sign)

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.pods = list(self.pods)
        c.requested_milli_cpu = self.requested_milli_cpu
        c.requested_memory = self.requested_memory
        c.requested_ephemeral_storage = self.requested_ephemeral_storage
        c.nonzero_milli_cpu = self.nonzero_milli_cpu
        c.nonzero_memory = self.nonzero_memory
        c.requested_scalar = dict(self.requested_scalar)
        c._used_ports = None if self._used_ports is None else Counter(self._used_ports)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c._volume_pods = self._volume_pods
        c._by_namespace = self._by_namespace
        return c

    @property
    def used_ports(self) -> Counter[tuple[str, str, int]]:
        """How many pods here use each (hostIP, protocol, port) (`NodeInfo.UsedPorts`). Do not
        change it: add and remove pods."""
        if self._used_ports is None:
            self._used_ports = Counter(port for p in self.pods for port in p.host_ports)
        return self._used_ports

    def pods_with_volumes(self) -> tuple[Pod, ...]:
        """The pods here that use a PersistentVolumeClaim (or a generic ephemeral volume) or an
        in-tree disk: all NodeVolumeLimits has to count (cf. upstream's `NodeInfo.PVCRefCounts`).
        Built on first use and carried through a pod added or removed: most pods use neither, and
        planning asks about the same node many times."""
        if self._volume_pods is None:
            self._volume_pods = tuple(p for p in self.pods if _uses_volumes(p))
        return self._volume_pods

    def requested(self, resource: str) -> int:
        if resource == "cpu":
            return self.requested_milli_cpu
        if resource == "memory":
            return self.requested_memory
        if resource == "ephemeral-storage":
            return self.requested_ephemeral_storage
        if resource == "pods":
            return len(self.pods)
        return self.requested_scalar.get(resource, 0)

    def namespace_groups(self) -> dict[str, tuple[Pod, ...]]:
        """The pods here by namespace, in the node's order; kept until a pod is removed (one added
        is appended to its group). Do not change it."""
        found = self._by_namespace
        if found is None:
            groups: dict[str, list[Pod]] = {}
            for p in self.pods:
                groups.setdefault(p.metadata.namespace, []).append(p)
            found = self._by_namespace = {ns: tuple(pods) for ns, pods in groups.items()}
        return found

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)})"


def _uses_volumes(pod: Pod) -> bool:
    """A claim (`Pod.claim_names`: a `persistentVolumeClaim` or generic ephemeral volume) or an
    in-tree disk. A plain loop over the volumes, without finding the claims' names: it runs on
    every pod of every node a volume filter visits."""
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None or v.ephemeral is not None or v.gce_persistent_disk is not None \
                or v.aws_elastic_block_store is not None or v.azure_disk is not None or v.cinder is not None:
            return True
    return False


#: A pod's `namespace/name`.
_KEY = attrgetter("key")


def _update(pods: list[Pod], pod: Pod, sign: int) -> None:
    if sign > 0:
        pods.append(pod)
        return
    for i, p in enumerate(pods):
        if p.key == pod.key:
            del pods[i]
            return
