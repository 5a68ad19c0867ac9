"""The cluster around the API server, just enough of it for execution tests: a scheduler, a
kubelet, the disruption (PDB) controller and a ReplicaSet-like controller, each a `step()` that
reads and writes the fake's store. Tests drive them one step at a time (`fake.controllers.settle()`,
`fake.advance(seconds)`) or run them in a background thread (`fake.controllers.start()`, stopped
with the server).

- `Scheduler`: binds pending pods (unbound, not terminating, not gated, default scheduler) in
  priority order once they fit — kresched's own filters (`find_nodes_that_fit` with
  `default_plugins()`) on the store's current objects, so a node's taints (kresched's
  reservation among them) stop pods that do not tolerate them, as the real scheduler does. What
  it does per pod is a `Policy`: `BIND` (default: bind to the best fitting node),
  `bind_to(node)` (bind to that node), `NEVER`, `DELETE` (delete the pod); each acts `when="fits"`
  (once the pod fits on some node) or `when="now"`. `scheduler.set("ns/name", policy)`;
  `scheduler.default` for every other pod. `scheduler.bindings` records what it did. Among the
  nodes tied at the top score, `BIND` takes the first in the search order, as kresched predicts;
  `scheduler.pick` (given the pod and its `Landing`) chooses otherwise — the other tied node, as
  the real scheduler's parallel filters sometimes do, or a node outside the tie.
- `Kubelet`: removes terminating pods whose grace is over (`PodLifecycle.finish_terminations`) and
  starts bound Pending pods (phase Running, Ready) when `start_pods` — except on its `dead_nodes`,
  whose kubelet died: nothing there starts, and a terminating pod there is never confirmed.
- `OutOfService` (off unless `enabled`): what the taint manager and the pod GC do for a node
  tainted `node.kubernetes.io/out-of-service:NoExecute` (the non-graceful node shutdown): every pod
  there that does not tolerate the taint is deleted, and a terminating pod on such a node whose
  Ready condition is not True is force-deleted.
- `PdbController` (off unless `enabled`): rewrites every PDB's status from the pods
  (`pods.compute_pdb_status`, remembering each controller's scale) — so a budget spent by an
  eviction comes back once a replacement is Ready, not before. `sync()` runs it once whatever
  `enabled` says.
- `ReplicaSets` (off unless `enabled`): when a pod owned by a ReplicaSet starts terminating or is
  deleted, creates a replacement (`<owner>-<5 letters>`, unbound, Pending) — the scheduler and the
  kubelet then place and start it.
- `StatefulSets` (off unless `enabled`): when a pod owned by a StatefulSet is gone, creates it again
  under the same name with a new UID (unbound, Pending).
- `Rollouts` (off unless `enabled`): the Deployment and ReplicaSet controllers for workloads created
  while it runs (`preempt -f --apply`): a Deployment's ReplicaSet, a ReplicaSet's missing pods.
"""

from __future__ import annotations

import copy
import json
import random
import string
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod
from kresched.plan.placement import Landing, Placer
from kresched.sched.framework import Snapshot
from kresched.sched.runner import default_plugins, find_nodes_that_fit
from kresched.sources.decode import decode_json
from kresched.sources.snapshot import build_state
from tests.fakeapi.pods import PodLifecycle, compute_pdb_status, rfc3339
from tests.fakeapi.served import TOPOLOGY_LABELS, admit_topology_labels
from tests.fakeapi.store import (
    DEPLOYMENTS,
    NAMESPACES,
    NODES,
    PDBS,
    PODS,
    PRIORITY_CLASSES,
    REPLICA_SETS,
    WORKLOADS,
    Change,
    Store,
)

if TYPE_CHECKING:
    from tests.fakeapi.server import FakeApiServer

__all__ = ["BIND", "DELETE", "NEVER", "Controllers", "Kubelet", "OutOfService", "PdbController", "Policy",
           "ReplicaSets", "Rollouts", "Scheduler", "StatefulSets", "bind_to", "cluster_state"]


def cluster_state(store: Store) -> ClusterState:
    """The store's objects as kresched's model (decoded the way the live source decodes them)."""
    with store.lock:
        items = [{"kind": r.kind, "apiVersion": r.api_version, **o}
                 for r in (NAMESPACES, PRIORITY_CLASSES, NODES, PDBS, *WORKLOADS, PODS) for o in store.list(r)]
    return build_state(decode_json(msgspec.json.encode({"kind": "List", "items": items}), "the fake's store"))


@dataclass(frozen=True)
class Policy:
    action: Literal["bind", "never", "delete"] = "bind"
    #: For "bind": the node to bind to (None: the best node the pod fits on).
    node: str | None = None
    #: "fits": act once the pod fits on some node; "now": act at the next step.
    when: Literal["fits", "now"] = "fits"


BIND = Policy()
NEVER = Policy("never")
DELETE = Policy("delete")


def bind_to(node: str, when: Literal["fits", "now"] = "fits") -> Policy:
    return Policy("bind", node, when)


class Scheduler:
    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        self.store = store
        self.clock = clock
        self.default: Policy = BIND
        self.policies: dict[str, Policy] = {}
        #: (pod, node) for each binding, ("ns/name", None) for each pod it deleted.
        self.bindings: list[tuple[str, str | None]] = []
        #: Chooses the node of a pod bound to the best node (None: the landing's node).
        self.pick: Callable[[Pod, Landing], str] | None = None
        self._seen_revision = -1

    def set(self, pod: str, policy: Policy) -> None:
        self.policies[pod] = policy
        self._seen_revision = -1

    def policy(self, pod: str) -> Policy:
        return self.policies.get(pod, self.default)

    def step(self) -> int:
        with self.store.lock:
            if self.store.revision == self._seen_revision:
                return 0
            self._seen_revision = self.store.revision
            state = cluster_state(self.store)
            pending = [p for p in state.pods if p.is_pending and p.spec.scheduler_name in ("", "default-scheduler")]
            pending.sort(key=lambda p: (-p.effective_priority, p.metadata.creation_timestamp or "", p.key))
            acted = 0
            for pod in pending:
                policy = self.policy(pod.key)
                if policy.action == "never":
                    continue
                snapshot = Snapshot.from_state(state)
                plugins = default_plugins()
                diag, cycle = find_nodes_that_fit(plugins, pod, snapshot, sample=True)
                if policy.when == "fits" and not diag.feasible:
                    continue
                if policy.action == "delete":
                    self.store.delete(PODS, pod.namespace, pod.name)
                    self.bindings.append((pod.key, None))
                else:
                    if policy.node is None and not diag.feasible:
                        continue
                    node = policy.node or self._choose(pod, Placer(plugins).landing(pod, snapshot, diag, cycle))
                    node_obj = self.store.get(NODES, "", node)
                    self.store.mutate(PODS, pod.namespace, pod.name,
                                      lambda p, n=node, o=node_obj: _bind(p, n, o, self.clock()))
                    self.bindings.append((pod.key, node))
                acted += 1
                state = cluster_state(self.store)
            self._seen_revision = self.store.revision
            return acted


    def _choose(self, pod: Pod, landing: Landing) -> str:
        assert landing.node is not None
        return landing.node if self.pick is None else self.pick(pod, landing)


def _bind(pod: dict[str, Any], node: str, node_obj: dict[str, Any] | None, now: float) -> None:
    """The Binding subresource: the node name, PodScheduled, and the node's topology labels."""
    pod["spec"]["nodeName"] = node
    admit_topology_labels(pod, node_obj)
    status = pod.setdefault("status", {})
    status.pop("nominatedNodeName", None)
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": rfc3339(now)})
    status["conditions"] = conditions


class Kubelet:
    def __init__(self, store: Store, lifecycle: PodLifecycle) -> None:
        self.store = store
        self.lifecycle = lifecycle
        #: Bound Pending pods become Running and Ready at the next step.
        self.start_pods = True
        #: Nodes whose kubelet died: it neither starts their pods nor confirms their terminations.
        self.dead_nodes: set[str] = set()

    def step(self) -> int:
        done = len(self.lifecycle.finish_terminations(self.dead_nodes))
        if not self.start_pods:
            return done
        now = self.lifecycle.clock.now()
        with self.store.lock:
            for pod in self.store.list(PODS):
                status = pod.get("status") or {}
                if (pod["spec"].get("nodeName") and pod["spec"]["nodeName"] not in self.dead_nodes
                        and status.get("phase", "Pending") == "Pending"
                        and not pod["metadata"].get("deletionTimestamp")):
                    self.store.mutate(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"],
                                      lambda p: _start(p, now))
                    done += 1
        return done


def _start(pod: dict[str, Any], now: float) -> None:
    status = pod.setdefault("status", {})
    status["phase"] = "Running"
    status.setdefault("startTime", rfc3339(now))
    kept = [c for c in status.get("conditions") or [] if c.get("type") not in ("Ready", "ContainersReady")]
    status["conditions"] = [*kept, {"type": "ContainersReady", "status": "True", "lastTransitionTime": rfc3339(now)},
                            {"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(now)}]


OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"


class OutOfService:
    """Off unless `enabled`: the taint manager and the pod GC on out-of-service nodes (see above)."""

    def __init__(self, store: Store, lifecycle: PodLifecycle) -> None:
        self.store = store
        self.lifecycle = lifecycle
        self.enabled = False
        #: `ns/name` of each pod it deleted, then of each it force-deleted, in order.
        self.deleted: list[str] = []
        self.force_deleted: list[str] = []

    def step(self) -> int:
        if not self.enabled:
            return 0
        done = 0
        with self.store.lock:
            nodes = {n["metadata"]["name"]: n for n in self.store.list(NODES)
                     if any(t.get("key") == OUT_OF_SERVICE and t.get("effect") == "NoExecute"
                            for t in (n.get("spec") or {}).get("taints") or [])}
            for pod in self.store.list(PODS):
                node = nodes.get((pod.get("spec") or {}).get("nodeName", ""))
                if node is None:
                    continue
                meta = pod["metadata"]
                key = f'{meta["namespace"]}/{meta["name"]}'
                if not meta.get("deletionTimestamp"):
                    if not any(t.get("operator") == "Exists" and t.get("key") in ("", None, OUT_OF_SERVICE)
                               for t in pod["spec"].get("tolerations") or []):
                        self.lifecycle.delete(meta["namespace"], meta["name"])
                        self.deleted.append(key)
                        done += 1
                elif not any(c.get("type") == "Ready" and c.get("status") == "True"
                             for c in (node.get("status") or {}).get("conditions") or []):
                    self.lifecycle.delete(meta["namespace"], meta["name"], {"gracePeriodSeconds": 0})
                    self.force_deleted.append(key)
                    done += 1
        return done


class PdbController:
    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        self.store = store
        self.clock = clock
        self.enabled = False
        #: Each PDB's controllers' scales, as `compute_pdb_status` remembers them.
        self.scales: dict[tuple[str, str, str], int] = {}

    def step(self) -> int:
        return self.sync() if self.enabled else 0

    def sync(self) -> int:
        """Recompute every PDB's status now; returns how many changed."""
        changed = 0
        now = self.clock()
        with self.store.lock:
            for pdb in self.store.list(PDBS):
                meta = pdb["metadata"]
                status = compute_pdb_status(pdb, self.store.list(PODS, meta["namespace"]), now, self.scales)
                if status != pdb.get("status"):
                    self.store.mutate(PDBS, meta["namespace"], meta["name"], lambda b, s=status: {**b, "status": s})
                    changed += 1
        return changed


class _FollowsHistory:
    """A controller that is off unless `enabled` and then reacts to the store's changes made
    since it was turned on (`_new_changes`)."""

    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        self.store = store
        self.clock = clock
        self._enabled = False
        self._position = 0

    @property
    def enabled(self) -> bool:
        return self._enabled

    @enabled.setter
    def enabled(self, on: bool) -> None:
        """Turning it on makes it react to what happens from now on, not to earlier changes."""
        with self.store.lock:
            if on and not self._enabled:
                self._position = len(self.store.history)
            self._enabled = on

    def _new_changes(self) -> list[Change]:
        """The changes since the last call (call with the store's lock held); none while off."""
        if not self._enabled:
            return []
        changes = self.store.history[self._position:]
        self._position = len(self.store.history)
        return changes


class ReplicaSets(_FollowsHistory):
    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        super().__init__(store, clock)
        #: Names (`ns/name`) of the replacements created, in order.
        self.created: list[str] = []
        self._replaced: set[str] = set()

    def step(self) -> int:
        with self.store.lock:
            changes = self._new_changes()
            made = 0
            for ch in changes:
                if ch.resource != PODS:
                    continue
                pod = ch.object
                meta = pod["metadata"]
                if ch.type != "DELETED" and not meta.get("deletionTimestamp"):
                    continue
                owner = next((o for o in meta.get("ownerReferences") or []
                              if o.get("controller") and o.get("kind") == "ReplicaSet"), None)
                uid = meta.get("uid") or f'{meta["namespace"]}/{meta["name"]}'
                if owner is None or uid in self._replaced:
                    continue
                self._replaced.add(uid)
                self.created.append(self._replace(pod, owner["name"]))
                made += 1
            return made

    def _replace(self, pod: dict[str, Any], owner: str) -> str:
        new = copy.deepcopy(pod)
        meta = new["metadata"]
        suffix = "".join(random.choices(string.ascii_lowercase + string.digits, k=5))
        meta["name"] = f"{meta.get('generateName') or owner + '-'}{suffix}"
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = rfc3339(self.clock())
        for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(k, None)
        new["spec"].pop("nodeName", None)
        new["status"] = {"phase": "Pending"}
        # From the template: not the labels the old pod's binding gave it.
        meta["labels"] = {k: v for k, v in (meta.get("labels") or {}).items() if k not in TOPOLOGY_LABELS}
        self.store.create(PODS, new)
        return f'{meta["namespace"]}/{meta["name"]}'


class StatefulSets(_FollowsHistory):
    """Off unless `enabled`. When a pod owned by a StatefulSet is gone (deleted, not merely
    terminating: a StatefulSet waits for the old pod before it creates the new one), creates it
    again under the same name with a new UID, unbound and Pending, as the StatefulSet controller
    does; the scheduler and the kubelet then place and start it."""

    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        super().__init__(store, clock)
        #: `ns/name` of each pod it created again, in order.
        self.recreated: list[str] = []

    def step(self) -> int:
        with self.store.lock:
            changes = self._new_changes()
            made = 0
            for ch in changes:
                if ch.resource != PODS or ch.type != "DELETED":
                    continue
                meta = ch.object["metadata"]
                owner = next((o for o in meta.get("ownerReferences") or []
                              if o.get("controller") and o.get("kind") == "StatefulSet"), None)
                if owner is None or self.store.get(PODS, meta["namespace"], meta["name"]) is not None:
                    continue
                new = copy.deepcopy(ch.object)
                m = new["metadata"]
                m["uid"] = str(uuid.uuid4())
                m["creationTimestamp"] = rfc3339(self.clock())
                for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
                    m.pop(k, None)
                new["spec"].pop("nodeName", None)
                new["status"] = {"phase": "Pending"}
                self.store.create(PODS, new)
                self.recreated.append(f'{m["namespace"]}/{m["name"]}')
                made += 1
            return made


class Rollouts:
    """Off unless `enabled`. The Deployment and ReplicaSet controllers, for workloads created while
    the fake runs (`preempt -f --apply`): a Deployment without a ReplicaSet gets one
    (`<deployment>-<pod-template-hash>`, owned by it, with the hash in its selector and template), and
    a ReplicaSet with fewer pods than `replicas` gets new ones (`<replicaset>-<5 letters>`, owned by
    it, unbound and Pending); the scheduler and the kubelet then place and start them."""

    def __init__(self, store: Store, clock: Callable[[], float]) -> None:
        self.store = store
        self.clock = clock
        self.enabled = False
        #: `ns/name` of each pod it created, in order.
        self.created: list[str] = []

    def step(self) -> int:
        if not self.enabled:
            return 0
        made = 0
        with self.store.lock:
            sets = self.store.list(REPLICA_SETS)
            for d in self.store.list(DEPLOYMENTS):
                meta = d["metadata"]
                if any(o.get("uid") == meta["uid"] for rs in sets for o in rs["metadata"].get("ownerReferences") or []):
                    continue
                template = copy.deepcopy(d["spec"]["template"])
                h = f"{abs(hash(json.dumps(template, sort_keys=True))) % 10**10:010d}"
                template.setdefault("metadata", {}).setdefault("labels", {})["pod-template-hash"] = h
                selector = copy.deepcopy(d["spec"]["selector"])
                selector.setdefault("matchLabels", {})["pod-template-hash"] = h
                rs = {"metadata": {"name": f"{meta['name']}-{h}", "namespace": meta["namespace"],
                                   "uid": str(uuid.uuid4()), "creationTimestamp": rfc3339(self.clock()),
                                   "labels": dict(template["metadata"]["labels"]),
                                   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                        "name": meta["name"], "uid": meta["uid"], "controller": True}]},
                      "spec": {"replicas": d["spec"].get("replicas", 1), "selector": selector, "template": template}}
                self.store.create(REPLICA_SETS, rs)
                made += 1
            pods = self.store.list(PODS)
            for rs in self.store.list(REPLICA_SETS):
                meta = rs["metadata"]
                if "template" not in rs.get("spec", {}):
                    continue
                owned = [p for p in pods if not p["metadata"].get("deletionTimestamp")
                         and any(o.get("uid") == meta.get("uid") for o in p["metadata"].get("ownerReferences") or [])]
                for _ in range(rs["spec"].get("replicas", 1) - len(owned)):
                    suffix = "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=5))
                    template = rs["spec"]["template"]
                    pod = {"metadata": {"name": f"{meta['name']}-{suffix}", "namespace": meta["namespace"],
                                        "generateName": f"{meta['name']}-", "uid": str(uuid.uuid4()),
                                        "creationTimestamp": rfc3339(self.clock()),
                                        "labels": dict((template.get("metadata") or {}).get("labels") or {}),
                                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                             "name": meta["name"], "uid": meta["uid"],
                                                             "controller": True}]},
                           "spec": copy.deepcopy(template["spec"]), "status": {"phase": "Pending"}}
                    self.store.create(PODS, pod)
                    self.created.append(f"{meta['namespace']}/{pod['metadata']['name']}")
                    made += 1
        return made


@dataclass
class Controllers:
    """All of the above, stepped together in a fixed order, by hand or from a background thread."""

    server: FakeApiServer
    errors: list[BaseException] = field(default_factory=list)

    def __post_init__(self) -> None:
        store, clock = self.server.store, self.server.clock.now
        self.scheduler = Scheduler(store, clock)
        self.kubelet = Kubelet(store, self.server.pods)
        self.out_of_service = OutOfService(store, self.server.pods)
        self.pdbs = PdbController(store, clock)
        self.replicasets = ReplicaSets(store, clock)
        self.statefulsets = StatefulSets(store, clock)
        self.rollouts = Rollouts(store, clock)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def step(self) -> int:
        """One pass of every controller; the number of things they did."""
        return (self.kubelet.step() + self.out_of_service.step() + self.rollouts.step() + self.replicasets.step()
                + self.statefulsets.step()
                + self.scheduler.step() + self.kubelet.step() + self.pdbs.step())

    def settle(self, max_passes: int = 20) -> int:
        """Step until nothing more happens (bounded); the total number of things done."""
        total = 0
        for _ in range(max_passes):
            did = self.step()
            total += did
            if not did:
                break
        return total

    def start(self, interval: float = 0.01) -> Controllers:
        """Run `step` in a background thread (after each store change, at least every `interval`)."""
        if self._thread is not None:
            return self
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(interval,), name="fake-controllers", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self.server.store.changed:
            self.server.store.changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self, interval: float) -> None:
        store = self.server.store
        while not self._stop.is_set():
            try:
                self.step()
            except Exception as exc:  # keep running; a test asserts `errors` is empty
                self.errors.append(exc)
            with store.changed:
                if not self._stop.is_set():
                    store.changed.wait(interval)
