"""Kubernetes Events for what kresched does to a cluster: after a preemption, a drain or a
rebalance, `kubectl describe pod`, `kubectl describe node` and `kubectl get events` say who was
evicted, by which kresched command, for which pod or node.

Owns `Recorder`: one `events.k8s.io/v1` Event per eviction, reservation (and its release), cordon,
and per pod kresched made room for, built as client-go's event recorder builds them (`tools/events`:
name `<regarding>.<unix nanoseconds, hex>`, `eventTime`, reportingController `kresched`,
reportingInstance `kresched-<hostname>`; an Event about a Node lives in `default`), with the
reasons and actions of kube-scheduler's preemption (`Preempted`/`Preempting`, regarding the victim,
related the preemptor) and the descheduler's evictions as models. Events are sent in the
background, one after another, as client-go's broadcaster sends them, so that recording never
slows an eviction; `close()` waits a little for the last ones.

A cluster that refuses Events (RBAC: 403) does not fail the run: one warning, and no more attempts;
any other failure is one warning too (later Events are still tried). Never prints: warnings go to
the `warn` callback.

Kinds of Event (regarding, related: type reason/action):
- a victim evicted for a pending pod (preempt, reconcile): the victim, the pod: Normal
  Preempted/Preempting (Warning Preempted/Deleting when deleted over its PodDisruptionBudget;
  Warning Preempted/Preempting when its eviction stops its gang); for a gang's member the note
  names the gang;
- the pod made room for, once its wait ends: the pod, the node: Normal MadeRoom/Preempting when it
  was bound, Warning MadeRoom/Preempting when it was not (each member of a gang, naming it);
- a reservation placed or removed: the node, the pod (or gang) it is for: Normal Reserved/Reserving,
  Normal Released/Releasing;
- a drain: the node: Normal Cordoned/Cordoning; each pod: the pod, the node: Normal
  NodeDrain/Evicting (Warning NodeDrain/Deleting with --disable-eviction);
- a rebalance: the pod, the node its replacement should land on: Normal Rebalance/Evicting.
"""

from __future__ import annotations

import queue
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kresched.errors import ClusterAccessError, KreschedError
from kresched.execute.api import ClusterApi
from kresched.execute.events import count
from kresched.model.objects import Node, Pod

__all__ = ["CONTROLLER", "NO_RECORDER", "Recorder", "event_body"]

#: The reportingController of every Event kresched records.
CONTROLLER = "kresched"
#: How long `close()` waits for Events still queued (client-go's broadcaster waits too, briefly).
CLOSE_SECONDS = 5.0
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_STOP = object()


def _reference(obj: Pod | Node | str) -> dict[str, Any]:
    """An ObjectReference; a node named without its object gets its name as UID, as the kubelet's
    Events have it (`kubectl describe node` looks for both)."""
    if isinstance(obj, Pod):
        return {"apiVersion": "v1", "kind": "Pod", "namespace": obj.namespace, "name": obj.name,
                **({"uid": obj.uid} if obj.uid else {})}
    name, uid = (obj.name, obj.metadata.uid) if isinstance(obj, Node) else (obj, "")
    return {"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid or name}


def event_body(regarding: Pod | Node | str, related: Pod | Node | str | None, type_: str, reason: str, action: str,
               note: str, instance: str, now: float) -> dict[str, Any]:
    """An `events.k8s.io/v1` Event as client-go's recorder makes one (`makeEvent`)."""
    ref = _reference(regarding)
    name = f"{ref['name']}.{int(now * 1e9):x}"
    if len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
        name = str(uuid.uuid4())
    stamp = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    body = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": name, "namespace": ref.get("namespace") or "default"},
            "eventTime": stamp, "reportingController": CONTROLLER, "reportingInstance": instance[:128],
            "action": action[:128], "reason": reason[:128], "note": note[:1024], "type": type_,
            "regarding": ref}
    if related is not None:
        body["related"] = _reference(related)
    return body


class Recorder:
    """Records Events through `api` for what `command` (`preempt`, `drain`, ...) does."""

    def __init__(self, api: ClusterApi | None, command: str, warn: Callable[[str], None] = lambda text: None,
                 clock: Callable[[], float] = time.time) -> None:
        self.api = api
        self.command = command
        self.warn = warn
        self.clock = clock
        self.instance = f"{CONTROLLER}-{socket.gethostname()}"
        self._queue: queue.Queue[Any] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._refused = False
        self._warned = False
        self._lock = threading.Lock()

    # -- what kresched did ------------------------------------------------------------------------
    def preempted(self, victim: Pod, for_pod: Pod | str, node: str, grace: int, over_pdb: str | None = None,
                  gang: str | None = None, stops_gang: str | None = None) -> None:
        """`for_pod`: the pending pod, or a workload that does not exist yet (`deployment/shop/web`,
        `preempt -f`): named in the note, with no object to relate the Event to. `gang`: the gang
        the pending pod is a member of (`PodGroup ml/train`); `stops_gang`: the running gang the
        victim's eviction stops (its members fall below minCount)."""
        by = f"kresched {self.command}"
        related = for_pod if isinstance(for_pod, Pod) else None
        what = f"pod {for_pod.key}" if isinstance(for_pod, Pod) else for_pod
        if gang:
            what += f" (a member of {gang})"
        stops = f"; it stops its gang {stops_gang} (below its minCount)" if stops_gang else ""
        if over_pdb:
            self.record(victim, related, "Warning", "Preempted", "Deleting",
                        f"Deleted by {by}, bypassing PodDisruptionBudget {over_pdb} (grace {grace}s), to make room "
                        f"for {what} on node {node}{stops}")
        else:
            self.record(victim, related, "Warning" if stops_gang else "Normal", "Preempted", "Preempting",
                        f"Evicted by {by} (grace {grace}s) to make room for {what} on node {node}{stops}")

    def made_room(self, pod: Pod, node: str, evicted: list[str], bound_to: str | None, seconds: float,
                  gang: str | None = None, room: set[str | None] | None = None) -> None:
        """`gang`: the gang `pod` is a member of, its room made with its other members' on the
        nodes `room` (a member bound to any of them is where the plan made room for it)."""
        what = f"kresched {self.command} evicted {count(len(evicted), 'pod')} on node {node} for this pod"
        what += f" ({', '.join(evicted)})" if evicted else ""
        what += f", a member of {gang} (room made for its members together)" if gang else ""
        if bound_to is not None:
            where = "" if bound_to == node else f", in the room made for {gang}" if room and bound_to in room \
                else f", not on {node}"
            self.record(pod, node, "Normal", "MadeRoom", "Preempting",
                        f"{what}; it was bound to {bound_to}{where} {seconds:.1f}s after kresched started")
        else:
            self.record(pod, node, "Warning", "MadeRoom", "Preempting",
                        f"{what}; it was still Pending {seconds:.1f}s after kresched started")

    def reserved(self, node: Node | str, for_pod: Pod | str) -> None:
        """`for_pod`: the pod (or its key), or a workload's `kind/ns/name` (`preempt -f`)."""
        what = f"pod {_key(for_pod)}" if isinstance(for_pod, Pod) or for_pod.count("/") < 2 else for_pod
        self.record(node, for_pod if isinstance(for_pod, Pod) else None, "Normal", "Reserved", "Reserving",
                    f"kresched {self.command} reserved the node for {what} (taint "
                    "CriticalAddonsOnly=kresched:NoSchedule)")

    def reserved_for_gang(self, node: Node | str, gang: str, members: list[str]) -> None:
        """A node reserved for a gang's members (`preempt` of a gang): `gang` is `PodGroup ml/train`."""
        self.record(node, None, "Normal", "Reserved", "Reserving",
                    f"kresched {self.command} reserved the node for {gang} (its members {', '.join(members)}; taint "
                    "CriticalAddonsOnly=kresched:NoSchedule)")

    def released(self, node: Node | str, for_pod: str | None, why: str = "") -> None:
        self.record(node, None, "Normal", "Released", "Releasing",
                    f"kresched {self.command} removed its reservation"
                    + (f" for pod {for_pod}" if for_pod else "") + (f": {why}" if why else ""))

    def cordoned(self, node: Node | str) -> None:
        self.record(node, None, "Normal", "Cordoned", "Cordoning", f"Cordoned by kresched {self.command}")

    def drained(self, pod: Pod, node: str, grace: int, deleted: bool = False) -> None:
        if deleted:
            self.record(pod, node, "Warning", "NodeDrain", "Deleting",
                        f"Deleted by kresched {self.command} of node {node} (grace {grace}s; --disable-eviction: no "
                        "PodDisruptionBudget was asked)")
        else:
            self.record(pod, node, "Normal", "NodeDrain", "Evicting",
                        f"Evicted by kresched {self.command} of node {node} (grace {grace}s)")

    def rebalanced(self, pod: Pod, to: str, objective: str, why: str) -> None:
        self.record(pod, to, "Normal", "Rebalance", "Evicting",
                    f"Evicted by kresched {self.command} ({objective}): {why}; its replacement should land on {to}")

    # -- the machinery -----------------------------------------------------------------------------
    def record(self, regarding: Pod | Node | str, related: Pod | Node | str | None, type_: str, reason: str,
               action: str, note: str) -> None:
        """Queue one Event; sent in the background."""
        if self.api is None or self._refused:
            return
        body = event_body(regarding, related, type_, reason, action, note, self.instance, self.clock())
        with self._lock:
            if self._worker is None:
                self._worker = threading.Thread(target=self._send_all, name="kresched-events", daemon=True)
                self._worker.start()
        self._queue.put(body)

    def close(self, timeout: float = CLOSE_SECONDS) -> None:
        """Wait (at most `timeout`) for the Events still queued to be sent."""
        with self._lock:
            worker = self._worker
        if worker is None:
            return
        self._queue.put(_STOP)
        worker.join(timeout)

    def _send_all(self) -> None:
        assert self.api is not None
        while True:
            body = self._queue.get()
            if body is _STOP:
                return
            if self._refused:
                continue
            try:
                self.api.create_event(body["metadata"]["namespace"], body)
            except ClusterAccessError as exc:
                self._refused = True
                self._warn_once(f"kresched's Events are not recorded: {exc.message}; the run goes on without them")
            except KreschedError as exc:
                self._warn_once(f"could not record an Event about {body['regarding']['name']}: {exc.message}")
            except Exception as exc:  # an Event is worth a warning, never the run
                self._warn_once(f"could not record an Event about {body['regarding']['name']}: {exc}")

    def _warn_once(self, text: str) -> None:
        if not self._warned:
            self._warned = True
            self.warn(text)


def _key(pod: Pod | str) -> str:
    return pod.key if isinstance(pod, Pod) else pod


#: Records nothing: for the flows run without a cluster to tell (tests, library use).
NO_RECORDER = Recorder(None, "")
