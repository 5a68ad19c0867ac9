"""Pods going away as a real cluster makes them: DELETE, the Eviction subresource, graceful
termination, and the PodDisruptionBudget arithmetic both the eviction handler and the disruption
controller use.

`PodLifecycle.evict` decides exactly as kube-apiserver's EvictionREST.Create
(pkg/registry/core/pod/storage/eviction.go), in the same order:
1. the pod is read: gone → 404 `pods "NAME" not found`;
2. a pod that is Succeeded, Failed, Pending or already terminating is deleted without looking at
   any PDB (`canIgnorePDB`);
3. the PDBs of the pod's namespace whose selector matches its labels (an empty selector matches
   nothing): more than one → HTTP 500 with the Status message "This pod has more than one
   PodDisruptionBudget, which the eviction subresource does not support."; none → delete;
4. with one PDB: an unready pod is deleted without spending the budget when the PDB says
   `unhealthyPodEvictionPolicy: AlwaysAllow`, or when `currentHealthy >= desiredHealthy > 0`;
5. otherwise `checkAndDecrement`: `observedGeneration < generation` → 429 "... is still being
   processed by the server." (Retry-After: 10); `disruptionsAllowed < 0` → 403; 0 → 429 "Cannot
   evict pod as it would violate the pod's disruption budget." with the cause (reason
   DisruptionBudget) "The disruption budget NAME needs N healthy pods and has M currently";
   else `disruptionsAllowed` goes down by one and (unless dry run) the pod is recorded in
   `status.disruptedPods`;
6. the pod is deleted with the eviction's deleteOptions — a UID (or resourceVersion)
   precondition that does not hold is 409 Conflict *after* the budget was spent, as upstream;
7. 201 with `{"kind": "Status", "status": "Success", "code": 201}`.
`dryRun=All` (query or deleteOptions.dryRun) runs every check and changes nothing.

Deletion (`PodLifecycle.delete`) follows the pod registry: the grace period is the request's
`gracePeriodSeconds`, else the pod's `terminationGracePeriodSeconds`, else 30; a pod not bound to
a node, or Succeeded/Failed, goes at once. With `termination = "immediate"` (the default) every
pod goes at once; with `"graceful"` a pod with a grace period gets `metadata.deletionTimestamp`
(now + grace) and `deletionGracePeriodSeconds` and stays (Terminating) until the clock passes
that time and `finish_terminations` runs (the fake's kubelet does, see controllers.py); deleting
it again can only shorten its grace. `on_deleted` callbacks hear about every pod that goes.
"""

from __future__ import annotations

import calendar
import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakeapi.errors import ApiError
from tests.fakeapi.store import PDBS, PODS, Store

__all__ = [
    "DISRUPTED_POD_TIMEOUT_SECONDS",
    "MULTIPLE_PDBS_MESSAGE",
    "VIOLATION_MESSAGE",
    "Clock",
    "PodLifecycle",
    "compute_pdb_status",
    "dry_run_option",
    "is_pod_ready",
    "pdbs_for_pod",
    "rfc3339",
    "selector_matches",
]

MULTIPLE_PDBS_MESSAGE = ("This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
                         "support.")
VIOLATION_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."
#: How long the disruption controller trusts a `disruptedPods` entry (upstream `DeletionTimeout`).
DISRUPTED_POD_TIMEOUT_SECONDS = 120.0
#: Upstream `MaxDisruptedPodSize`.
MAX_DISRUPTED_PODS = 2000


@dataclass
class Clock:
    """Wall-clock time plus an offset tests move forward with `advance` (the fake never sleeps)."""

    offset: float = 0.0

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


def rfc3339(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


# -- selectors and readiness -------------------------------------------------------------------

def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """`metav1.LabelSelector` semantics; a nil or empty selector matches nothing (as for PDBs)."""
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for req in selector.get("matchExpressions") or []:
        key, op, values = req.get("key"), req.get("operator"), set(req.get("values") or [])
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False  # an invalid selector matches nothing
    return True


def is_pod_ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _is_terminating(pod: dict[str, Any]) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def _phase(pod: dict[str, Any]) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def pdbs_for_pod(store: Store, pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The PDBs of the pod's namespace whose selector matches it (`getPodDisruptionBudgets`)."""
    labels = pod["metadata"].get("labels") or {}
    return [b for b in store.list(PDBS, pod["metadata"]["namespace"])
            if selector_matches((b.get("spec") or {}).get("selector"), labels)]


# -- the disruption controller's arithmetic ------------------------------------------------------

def _scaled(value: int | str, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        share = int(value[:-1]) * total / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(value)


def compute_pdb_status(pdb: dict[str, Any], pods: list[dict[str, Any]], now: float,
                       scales: dict[tuple[str, str, str], int] | None = None) -> dict[str, Any]:
    """The status the disruption controller would write (pkg/controller/disruption), given the pods
    of the PDB's namespace.

    expectedPods: for an integer `minAvailable`, the number of matching pods; for `maxUnavailable`
    or a percentage, the sum of the scales of the matching pods' controllers — upstream reads the
    ReplicaSets' replicas; the fake has no ReplicaSet objects, so a controller's scale is the most
    live (not terminating, not finished) pods it has been seen with, remembered in `scales` (keyed
    by (PDB ns/name, controller kind, controller name)) — an eviction does not shrink it. Pods
    without a controller are unmanaged and expected by no one.
    """
    spec = pdb.get("spec") or {}
    old = pdb.get("status") or {}
    selected = [p for p in pods if selector_matches(spec.get("selector"), p["metadata"].get("labels") or {})]
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    if max_unavailable is not None or isinstance(min_available, str):
        pdb_key = f'{pdb["metadata"].get("namespace", "")}/{pdb["metadata"]["name"]}'
        live: dict[tuple[str, str, str], int] = {}
        for p in selected:
            owner = next((o for o in p["metadata"].get("ownerReferences") or [] if o.get("controller")), None)
            if owner is None:
                continue
            key = (pdb_key, owner.get("kind", ""), owner.get("name", ""))
            running = not _is_terminating(p) and _phase(p) not in ("Succeeded", "Failed")
            live[key] = live.get(key, 0) + running
        if scales is None:
            expected = sum(live.values())
        else:
            for key, count in live.items():
                scales[key] = max(scales.get(key, 0), count)
            expected = sum(n for key, n in scales.items() if key[0] == pdb_key)
    else:
        expected = len(selected)
    if max_unavailable is not None:
        desired = max(0, expected - _scaled(max_unavailable, expected, round_up=True))
    elif min_available is not None:
        desired = _scaled(min_available, expected, round_up=True)
    else:
        desired = 0
    disrupted_before = old.get("disruptedPods") or {}
    disrupted: dict[str, str] = {}
    healthy = 0
    for p in selected:
        name = p["metadata"]["name"]
        if _is_terminating(p):
            continue
        since = disrupted_before.get(name)
        if since is not None and _parse(since) + DISRUPTED_POD_TIMEOUT_SECONDS > now:
            disrupted[name] = since
            continue
        if is_pod_ready(p):
            healthy += 1
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    status = {
        "observedGeneration": pdb["metadata"].get("generation", 0),
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "conditions": [_allowed_condition(allowed, old, now)],
    }
    if disrupted:
        status["disruptedPods"] = disrupted
    return status


def _allowed_condition(allowed: int, old: dict[str, Any], now: float) -> dict[str, Any]:
    ok = allowed > 0
    previous = next((c for c in old.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
    status = "True" if ok else "False"
    since = previous["lastTransitionTime"] if previous and previous.get("status") == status else rfc3339(now)
    return {"type": "DisruptionAllowed", "status": status, "reason": "SufficientPods" if ok else "InsufficientPods",
            "message": "", "lastTransitionTime": since, "observedGeneration": 0}


def _parse(text: str) -> float:
    try:
        return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))
    except (ValueError, TypeError):
        return 0.0


# -- deletion and eviction -------------------------------------------------------------------------

def _too_many_requests(cause: str, retry_after: int = 0) -> ApiError:
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after:
        details = {"retryAfterSeconds": retry_after, **details}
    return ApiError(429, "TooManyRequests", VIOLATION_MESSAGE, details=details,
                    headers={"Retry-After": str(retry_after)} if retry_after else None)


def _pdb_forbidden(name: str, why: str) -> ApiError:
    return ApiError(403, "Forbidden", f'poddisruptionbudget.policy "{name}" is forbidden: {why}',
                    details={"name": name, "group": "policy", "kind": "poddisruptionbudget"})


@dataclass
class PodLifecycle:
    store: Store
    clock: Clock
    #: "immediate": a deleted pod is gone at once; "graceful": it terminates for its grace period.
    termination: str = "immediate"
    #: Called with each pod dict that was removed from the store.
    on_deleted: list[Callable[[dict[str, Any]], None]] = field(default_factory=list)

    # -- DELETE -------------------------------------------------------------------------------
    def delete(self, namespace: str, name: str, options: dict[str, Any] | None = None, *,
               dry_run: bool = False) -> dict[str, Any]:
        """DELETE a pod (see the module docstring); returns the pod as the API answers it."""
        options = options or {}
        with self.store.lock:
            pod = self.store.require(PODS, namespace, name)
            self._check_preconditions(pod, options.get("preconditions") or {})
            grace = self._grace(pod, options.get("gracePeriodSeconds"))
            if grace == 0 or self.termination == "immediate":
                if dry_run:
                    return copy.deepcopy(pod)
                return self._remove(pod)
            deadline = self.clock.now() + grace
            current = pod["metadata"].get("deletionTimestamp")
            if current and _parse(current) <= deadline:
                return copy.deepcopy(pod)  # already terminating, at least as soon
            terminating = copy.deepcopy(pod)
            terminating["metadata"]["deletionTimestamp"] = rfc3339(deadline)
            terminating["metadata"]["deletionGracePeriodSeconds"] = grace
            if dry_run:
                return terminating
            return self.store.replace(PODS, terminating)

    def _check_preconditions(self, pod: dict[str, Any], pre: dict[str, Any]) -> None:
        meta = pod["metadata"]
        failed = None
        if pre.get("uid") and pre["uid"] != meta.get("uid"):
            failed = f'UID in precondition: {pre["uid"]}, UID in object meta: {meta.get("uid", "")}'
        elif pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
            failed = (f'ResourceVersion in precondition: {pre["resourceVersion"]}, ResourceVersion in object meta: '
                      f'{meta.get("resourceVersion")}')
        if failed:
            raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on pods "{meta["name"]}": Precondition '
                           f"failed: {failed}", details={"name": meta["name"], "kind": "pods"})

    def _grace(self, pod: dict[str, Any], requested: Any) -> int:
        if not (pod.get("spec") or {}).get("nodeName") or _phase(pod) in ("Succeeded", "Failed"):
            return 0
        if requested is not None:
            return max(int(requested), 0)
        configured = pod["spec"].get("terminationGracePeriodSeconds")
        return 30 if configured is None else int(configured)

    def _remove(self, pod: dict[str, Any]) -> dict[str, Any]:
        meta = pod["metadata"]
        gone = self.store.delete(PODS, meta["namespace"], meta["name"])
        for callback in self.on_deleted:
            callback(gone)
        return gone

    def finish_terminations(self, dead_nodes: frozenset[str] | set[str] = frozenset()) -> list[str]:
        """Remove the terminating pods whose deletionTimestamp has passed (what the kubelet and the
        pod GC do) — but those on `dead_nodes`, whose kubelet never confirms; returns their `ns/name`."""
        now = self.clock.now()
        done = []
        with self.store.lock:
            for pod in self.store.list(PODS):
                ts = pod["metadata"].get("deletionTimestamp")
                if ts and _parse(ts) <= now and (pod.get("spec") or {}).get("nodeName") not in dead_nodes:
                    self._remove(pod)
                    done.append(f'{pod["metadata"]["namespace"]}/{pod["metadata"]["name"]}')
        return done

    # -- POST pods/NAME/eviction ---------------------------------------------------------------
    def evict(self, namespace: str, name: str, eviction: Any, *, dry_run_query: str | None = None
              ) -> tuple[int, dict[str, Any]]:
        """The Eviction subresource; returns (HTTP status, Status body) or raises `ApiError`."""
        if not isinstance(eviction, dict):
            raise ApiError.bad_request("not a Eviction object")
        if (eviction.get("metadata") or {}).get("name") != name:
            raise ApiError.bad_request("name in URL does not match name in Eviction object")
        options = dict(eviction.get("deleteOptions") or {})
        dry_run = dry_run_option(dry_run_query, options.get("dryRun"))
        with self.store.lock:
            pod = self.store.require(PODS, namespace, name)
            if _phase(pod) in ("Succeeded", "Failed", "Pending") or _is_terminating(pod):
                self.delete(namespace, name, options, dry_run=dry_run)
                return 201, _success()
            pdbs = pdbs_for_pod(self.store, pod)
            if len(pdbs) > 1:
                return 500, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                             "message": MULTIPLE_PDBS_MESSAGE, "code": 500}
            if pdbs:
                pdb = pdbs[0]
                status = pdb.get("status") or {}
                spec = pdb.get("spec") or {}
                spare_budget = not is_pod_ready(pod) and (
                    spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
                    or (status.get("currentHealthy", 0) >= status.get("desiredHealthy", 0) > 0))
                if not spare_budget:
                    self._check_and_decrement(pdb, name, dry_run)
            self.delete(namespace, name, options, dry_run=dry_run)
            return 201, _success()

    def _check_and_decrement(self, pdb: dict[str, Any], pod_name: str, dry_run: bool) -> None:
        name = pdb["metadata"]["name"]
        status = pdb.get("status") or {}
        if status.get("observedGeneration", 0) < pdb["metadata"].get("generation", 0):
            raise _too_many_requests(f"The disruption budget {name} is still being processed by the server.", 10)
        allowed = status.get("disruptionsAllowed", 0)
        if allowed < 0:
            raise _pdb_forbidden(name, "pdb disruptions allowed is negative")
        if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
            raise _pdb_forbidden(name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
        if allowed == 0:
            raise _too_many_requests(f"The disruption budget {name} needs {status.get('desiredHealthy', 0)} healthy "
                                     f"pods and has {status.get('currentHealthy', 0)} currently")
        if dry_run:
            return
        updated = copy.deepcopy(pdb)
        st = updated.setdefault("status", {})
        st["disruptionsAllowed"] = allowed - 1
        if allowed - 1 == 0:
            st["conditions"] = [c for c in st.get("conditions") or [] if c.get("type") != "DisruptionAllowed"]
            st["conditions"].append({"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods",
                                     "message": "", "lastTransitionTime": rfc3339(self.clock.now()),
                                     "observedGeneration": 0})
        st.setdefault("disruptedPods", {})[pod_name] = rfc3339(self.clock.now())
        self.store.replace(PDBS, updated)


def _success() -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def dry_run_option(query: str | None, in_body: Any = None) -> bool:
    """`dryRun=All` in the query or `deleteOptions.dryRun: ["All"]`; anything else is a 400."""
    values = ([query] if query else []) + list(in_body or [])
    for v in values:
        if v != "All":
            raise ApiError(400, "BadRequest", f'dryRun: Unsupported value: "{v}": supported values: "All"')
    return bool(values)
