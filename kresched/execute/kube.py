"""`KubeApi`: the `ClusterApi` over the official `kubernetes` client — the only code that writes to
a cluster.

Every call sends and receives raw JSON (`_preload_content=False`) decoded by
`kresched.sources.decode`; 5xx answers, dropped connections and read timeouts are retried with
`TRANSIENT_RETRY`; 404/409/429 become `NotFound`/`Conflict`/`TooManyRequests` for the caller's own
rules (`kresched.execute.writes`); 401/403 and an unreachable server become `ClusterAccessError`
naming the verb and resource; any other answer becomes `ApiFailure`.

`server_dry_run=True` sends every write with `dryRun=All`, so the API server validates it (PDB
429s included) without acting; waiting for the binding is then only simulated. A DELETE carries it
in its DeleteOptions body too: the API server reads a DELETE's options from the body when there is
one and ignores the query string then.

Whether evicted pods are gone (`which_gone`, for drain) is one list of the pods on each node
(`fieldSelector=spec.nodeName=NODE`), compared by UID.

Waiting for the binding lists the pod by name (for its state and a current resourceVersion) and
watches it from there; a watch that breaks (cut stream, ERROR event such as 410 Gone, 5xx) is
started again after a backoff pause, and a watch RBAC forbids falls back to polling. Waiting for a
PodDisruptionBudget to allow a disruption again (`wait_for_pdb`, for evictions answered 429) does
the same with the PDB.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import msgspec
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from kresched.errors import ClusterAccessError, InputError
from kresched.execute.api import ApiFailure, Conflict, NotFound, TooManyRequests, WaitResult, same_controller
from kresched.model.cluster import ClusterState, template_selector
from kresched.model.lease import Lease
from kresched.model.objects import Node, Pod, PodDisruptionBudget
from kresched.model.selectors import label_selector_text
from kresched.model.specs import LabelSelector
from kresched.retry import TRANSIENT_RETRY, RetryPolicy
from kresched.sources.calls import ApiCall, access_error, is_transient, read_within, retry_after_seconds
from kresched.sources.connection import LiveClient
from kresched.sources.decode import Objects, decode_json, decode_object
from kresched.sources.live import load_live

__all__ = ["APPLY_CALLS", "FIELD_MANAGER", "KubeApi"]

#: The field manager of what kresched applies (`kubectl apply --server-side --field-manager`).
FIELD_MANAGER = "kresched"

#: Server-side apply of each workload kind: its API path and the call (the PATCH). An apply that
#: creates the object is authorised as a create too, so RBAC needs both (`APPLY_CALLS`).
_APPLY: dict[str, tuple[str, ApiCall]] = {
    "Pod": ("/api/v1", ApiCall("patch", "pods")),
    "ReplicationController": ("/api/v1", ApiCall("patch", "replicationcontrollers")),
    "Deployment": ("/apis/apps/v1", ApiCall("patch", "deployments", "apps")),
    "ReplicaSet": ("/apis/apps/v1", ApiCall("patch", "replicasets", "apps")),
    "StatefulSet": ("/apis/apps/v1", ApiCall("patch", "statefulsets", "apps")),
    "DaemonSet": ("/apis/apps/v1", ApiCall("patch", "daemonsets", "apps")),
    "Job": ("/apis/batch/v1", ApiCall("patch", "jobs", "batch")),
    "CronJob": ("/apis/batch/v1", ApiCall("patch", "cronjobs", "batch")),
}
#: Every call `--apply` makes, as RBAC sees it: the PATCH, and the create it is when the object is new.
APPLY_CALLS: tuple[ApiCall, ...] = (
    *(call for _, call in _APPLY.values()),
    ApiCall("create", "pods"), ApiCall("create", "replicationcontrollers"), ApiCall("create", "deployments", "apps"),
    ApiCall("create", "replicasets", "apps"), ApiCall("create", "statefulsets", "apps"),
    ApiCall("create", "daemonsets", "apps"), ApiCall("create", "jobs", "batch"), ApiCall("create", "cronjobs", "batch"),
)


class _Cause(msgspec.Struct):
    message: str = ""


class _Details(msgspec.Struct):
    causes: list[_Cause] = []


class _StatusBody(msgspec.Struct):
    message: str = ""
    reason: str = ""
    details: _Details | None = None


class _WatchEvent(msgspec.Struct):
    type: str = ""
    object: msgspec.Raw = msgspec.Raw(b"{}")


class _ListMeta(msgspec.Struct, frozen=True):
    resource_version: str = msgspec.field(default="", name="resourceVersion")


class _ListHead(msgspec.Struct):
    metadata: _ListMeta = _ListMeta()


_watch_event = msgspec.json.Decoder(_WatchEvent)
_status_body = msgspec.json.Decoder(_StatusBody)
_list_head = msgspec.json.Decoder(_ListHead)


class _WatchForbidden(Exception):
    """RBAC allows reading the pod but not watching it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _status_text(exc: ApiException) -> str:
    try:
        st = msgspec.json.decode(exc.body or b"{}", type=_StatusBody)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError, TypeError):
        return str(exc.reason or exc.status)  # not a Status (a proxy's HTML page, garbage)
    causes = [c.message for c in (st.details.causes if st.details else []) if c.message]
    return " ".join([st.message or str(exc.reason or exc.status), *causes])


class KubeApi:
    def __init__(self, client: LiveClient, server_dry_run: bool = False,
                 retry: RetryPolicy | None = None, watch_chunk_seconds: int = 60) -> None:
        self.client = client
        self.dry_run = "All" if server_dry_run else None
        self.mode = "server dry run" if server_dry_run else "cluster"
        # The default policy waits at least as long as a 429/503's Retry-After says.
        self.retry = retry if retry is not None else replace(TRANSIENT_RETRY, retry_after=retry_after_seconds)
        self.watch_chunk_seconds = watch_chunk_seconds
        #: RBAC refused a watch on PodDisruptionBudgets once: `wait_for_pdb` polls from then on.
        self._pdb_watch_forbidden = False

    # -- plumbing -------------------------------------------------------------------------------
    def _call(self, call: ApiCall, fn: Callable[[], Any]) -> bytes:
        try:
            return self.retry.call(lambda: read_within(self.client, call, fn),
                                   retry_on=lambda e: is_transient(e) and not _is_eviction_429(call, e))
        except ApiException as exc:
            self._raise(exc, call)
        except Exception as exc:
            err = access_error(exc, call, self.client)
            if err is not None:
                raise err from None
            raise
        raise AssertionError("unreachable")

    def _raise(self, exc: ApiException, call: ApiCall) -> None:
        text = _status_text(exc)
        if exc.status == 404:
            raise NotFound(text, 404, "NotFound") from None
        if exc.status == 409:
            raise Conflict(text, 409, "Conflict") from None
        if exc.status == 429:
            raise TooManyRequests(text, 429, "TooManyRequests", retry_after_seconds(exc)) from None
        if exc.status in (401, 403) or not exc.status:
            err = access_error(exc, call, self.client)
            raise (err or ClusterAccessError(text)) from None
        raise ApiFailure(f"cannot {call.describe()}: {exc.status} {text}", exc.status, str(exc.reason or "")) from None

    @property
    def _timeout(self) -> tuple[float, float]:
        return self.client.request_timeout

    # -- ClusterApi -----------------------------------------------------------------------------
    def read_state(self) -> ClusterState:
        return load_live(self.client)

    def get_node(self, name: str) -> Node:
        data = self._call(ApiCall("get", "nodes", name=name),
                          lambda: self.client.core.read_node(name, _preload_content=False,
                                                             _request_timeout=self._timeout))
        return _decoded(data, "Node", f"node {name}")

    def patch_node(self, name: str, patch: dict[str, Any]) -> Node:
        data = self._call(ApiCall("patch", "nodes", name=name),
                          lambda: self.client.core.patch_node(name, patch, dry_run=self.dry_run,
                                                              _content_type="application/merge-patch+json",
                                                              _preload_content=False, _request_timeout=self._timeout))
        return _decoded(data, "Node", f"node {name}")

    def evict_pod(self, pod: Pod, grace_seconds: int) -> None:
        body = k8s.V1Eviction(
            api_version="policy/v1", kind="Eviction",
            metadata=k8s.V1ObjectMeta(name=pod.name, namespace=pod.namespace),
            delete_options=k8s.V1DeleteOptions(grace_period_seconds=grace_seconds,
                                               preconditions=k8s.V1Preconditions(uid=pod.uid or None)),
        )
        self._call(ApiCall("create", "pods", subresource="eviction", namespace=pod.namespace, name=pod.name),
                   lambda: self.client.core.create_namespaced_pod_eviction(
                       pod.name, pod.namespace, body, dry_run=self.dry_run, _preload_content=False,
                       _request_timeout=self._timeout))

    def delete_pod(self, pod: Pod, grace_seconds: int) -> None:
        # dryRun goes in the body: with a body, the API server ignores the DELETE's query options.
        body = k8s.V1DeleteOptions(grace_period_seconds=grace_seconds,
                                   preconditions=k8s.V1Preconditions(uid=pod.uid or None),
                                   dry_run=[self.dry_run] if self.dry_run else None)
        self._call(ApiCall("delete", "pods", namespace=pod.namespace, name=pod.name),
                   lambda: self.client.core.delete_namespaced_pod(
                       pod.name, pod.namespace, body=body, grace_period_seconds=grace_seconds,
                       dry_run=self.dry_run, _preload_content=False, _request_timeout=self._timeout))

    def get_lease(self, namespace: str, name: str) -> Lease | None:
        try:
            data = self._call(ApiCall("get", "leases", group="coordination.k8s.io", namespace=namespace, name=name),
                              lambda: self._coordination.read_namespaced_lease(
                                  name, namespace, _preload_content=False, _request_timeout=self._timeout))
        except NotFound:
            return None
        return _decoded(data, "Lease", f"Lease {namespace}/{name}")

    def create_lease(self, namespace: str, name: str, spec: dict[str, Any]) -> Lease:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": namespace}, "spec": spec}
        data = self._call(ApiCall("create", "leases", group="coordination.k8s.io", namespace=namespace, name=name),
                          lambda: self._coordination.create_namespaced_lease(
                              namespace, body, dry_run=self.dry_run, _preload_content=False,
                              _request_timeout=self._timeout))
        return _decoded(data, "Lease", f"Lease {namespace}/{name}")

    def update_lease(self, lease: Lease, spec: dict[str, Any]) -> Lease:
        ns, name = lease.metadata.namespace, lease.metadata.name
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": ns, "resourceVersion": lease.metadata.resource_version},
                "spec": spec}
        data = self._call(ApiCall("update", "leases", group="coordination.k8s.io", namespace=ns, name=name),
                          lambda: self._coordination.replace_namespaced_lease(
                              name, ns, body, dry_run=self.dry_run, _preload_content=False,
                              _request_timeout=self._timeout))
        return _decoded(data, "Lease", f"Lease {ns}/{name}")

    @property
    def _coordination(self) -> k8s.CoordinationV1Api:
        return k8s.CoordinationV1Api(self.client.api_client)

    def is_gone(self, pod: Pod) -> bool:
        if self.dry_run:
            return True  # a dryRun=All eviction removes nothing: there is nothing to wait for
        current, _ = self._read_pod(pod)
        return current is None or bool(pod.uid and current.uid != pod.uid)

    def which_gone(self, pods: Sequence[Pod]) -> set[str]:
        """One list of the pods on each node (`spec.nodeName=NODE`) instead of a GET per pod; a pod
        is gone when no pod with its UID is there (a pod without a node is listed by name)."""
        if self.dry_run:
            return {p.key for p in pods}
        by_node: dict[str, list[Pod]] = {}
        for p in pods:
            by_node.setdefault(p.spec.node_name, []).append(p)
        gone = {p.key for p in by_node.pop("", []) if self.is_gone(p)}
        for node, group in by_node.items():
            data = self._call(ApiCall("list", "pods"),
                              lambda n=node: self.client.core.list_pod_for_all_namespaces(
                                  field_selector=f"spec.nodeName={n}", _preload_content=False,
                                  _request_timeout=self._timeout))
            present = _decoded_list(data, f"the pods on node {node}")
            uids = {p.uid for p in present}
            keys = {p.key for p in present}
            gone.update(p.key for p in group if (p.uid not in uids if p.uid else p.key not in keys))
        return gone

    def wait_for_binding(self, pod: Pod, timeout_seconds: float,
                         progress: Callable[[str], None] | None = None, planned: str | None = None) -> WaitResult:
        """Until the pod (this UID) is bound, deleted, or the timeout: read it, then watch from that
        read's resourceVersion; a watch that ends or breaks is started again from a fresh read."""
        if self.dry_run:
            return WaitResult("simulated")
        deadline = time.monotonic() + timeout_seconds
        failures = 0
        polling = False
        while True:
            current, version = self._read_pod(pod)
            if current is None or (pod.uid and current.uid != pod.uid):
                return WaitResult("deleted")
            if current.spec.node_name:
                return WaitResult("bound", current.spec.node_name)
            left = deadline - time.monotonic()
            if left <= 0:
                return WaitResult("timeout")
            if polling:
                time.sleep(min(self.retry.wait_seconds(3, None), left))  # about 2 s between GETs
                continue
            try:
                outcome = self._watch(pod, version, min(left, self.watch_chunk_seconds))
            except _WatchForbidden as exc:
                polling = True
                if progress:
                    progress(f"{exc.message}; polling the pod instead")
                continue
            except (ClusterAccessError, ApiFailure) as exc:
                outcome = exc.message
            if isinstance(outcome, WaitResult):
                return outcome
            if outcome is None:  # the watch ran its course: watch again
                failures = 0
                continue
            # Broken (cut, ERROR event, 5xx): pause — more each time in a row — then GET and watch again.
            failures += 1
            if progress:
                progress(f"watch interrupted ({outcome}); reading the pod again")
            time.sleep(min(self.retry.wait_seconds(failures, None), max(deadline - time.monotonic(), 0)))

    def replicas_of(self, pod: Pod, selector: str | None = None) -> list[Pod]:
        """One list of the namespace's pods that `selector` selects (the controller's selector;
        default `template_selector`, never the pod's own labels: v1.35+ gives each pod its node's
        zone), then the owner references."""
        if selector is None:
            selector = template_selector(pod)
        data = self._call(ApiCall("list", "pods", namespace=pod.namespace),
                          lambda: self.client.core.list_namespaced_pod(
                              pod.namespace, label_selector=selector or None, _preload_content=False,
                              _request_timeout=self._timeout))
        return same_controller(pod, decode_json(data, f"the pods of {pod.controller_ref or pod.key}",
                                                item_kind="Pod").pods)

    def wait_for_replacement(self, pod: Pod, known_uids: set[str], timeout_seconds: float,
                             planned: str | None = None, selector: str | None = None) -> WaitResult:
        """Poll the replicas (50 ms after the eviction, then less and less often, up to 2 s) until a
        new one is bound and Ready; a failed read is retried at the next poll."""
        if self.dry_run:
            return WaitResult("simulated", planned)
        deadline = time.monotonic() + timeout_seconds
        pause = 0.05
        bound: str | None = None
        while True:
            try:
                fresh = [p for p in self.replicas_of(pod, selector)
                         if p.uid not in known_uids and not p.is_terminating]
            except ApiFailure:
                fresh = []
            for p in fresh:
                if p.spec.node_name:
                    bound = p.spec.node_name
                    if p.is_ready:
                        return WaitResult("bound", p.spec.node_name)
            left = deadline - time.monotonic()
            if left <= 0:
                return WaitResult("timeout", bound)
            time.sleep(min(pause, left))
            pause = min(pause * 2, 2.0)

    def create_event(self, namespace: str, event: dict[str, Any]) -> None:
        """POST the Event (the generated EventsV1Api is not imported for one call: its models
        cost a tenth of a second to import)."""
        query = [("dryRun", self.dry_run)] if self.dry_run else []
        path = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
        self._call(ApiCall("create", "events", "events.k8s.io", namespace=namespace),
                   lambda: self._post(path, query, event))

    def apply_object(self, obj: dict[str, Any]) -> dict[str, Any]:
        """PATCH `application/apply-patch+yaml` (JSON is YAML), `fieldManager=kresched`, without
        `force`: a field another manager owns is a conflict (409), as `kubectl apply
        --server-side` without `--force-conflicts`."""
        kind = obj.get("kind", "")
        meta = obj.get("metadata") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        base, call = _APPLY[kind]
        plural = call.resource
        call = replace(call, namespace=namespace, name=name)
        path = f"{base}/namespaces/{namespace}/{plural}/{name}"
        query: list[tuple[str, Any]] = [("fieldManager", FIELD_MANAGER)]
        if self.dry_run:
            query.append(("dryRun", self.dry_run))
        try:
            data = self._call(call, lambda: self._request("PATCH", path, query, obj, "application/apply-patch+yaml"))
        except ClusterAccessError as exc:
            raise ClusterAccessError(f"{exc.message} (server-side apply creates with the create verb too: "
                                     f'apiGroups ["{call.group}"], resources ["{plural}"], verbs ["create", '
                                     '"patch"])') from None
        answer = msgspec.json.decode(data)
        return answer if isinstance(answer, dict) else {}

    def pods_matching(self, namespace: str, selector: LabelSelector) -> list[Pod]:
        text = label_selector_text(selector)
        data = self._call(ApiCall("list", "pods", namespace=namespace),
                          lambda: self.client.core.list_namespaced_pod(
                              namespace, label_selector=text or None, _preload_content=False,
                              _request_timeout=self._timeout))
        return decode_json(data, f"the pods of {namespace} selected by {text}", item_kind="Pod").pods

    def _post(self, path: str, query: list[tuple[str, Any]], body: Any) -> Any:
        """A raw POST (JSON in, JSON out), as the urllib3 response, unread; a non-2xx answer raises
        `ApiException` as the generated methods do."""
        return self._request("POST", path, query, body, "application/json")

    def _request(self, method: str, path: str, query: list[tuple[str, Any]], body: Any, content_type: str) -> Any:
        api = self.client.api_client
        request = api.param_serialize(method, path, query_params=query, body=body, auth_settings=["BearerToken"],
                                      header_params={"Content-Type": content_type, "Accept": "application/json"})
        response = api.call_api(*request, _request_timeout=self._timeout)
        if not 200 <= response.status <= 299:
            response.read()
            raise ApiException.from_response(http_resp=response, body=None, data=None)
        return response.response

    def _read_pod(self, pod: Pod) -> tuple[Pod | None, str]:
        """The pod (by name) and a resourceVersion to watch it from — the list's, which is current.

        Not the pod's own: a pod Pending for a while has not changed for longer than the API server
        keeps watch history, and a watch from its resourceVersion would only get 410 Gone."""
        data = self._call(ApiCall("list", "pods", namespace=pod.namespace, name=pod.name),
                          lambda: self.client.core.list_namespaced_pod(
                              pod.namespace, field_selector=f"metadata.name={pod.name}", _preload_content=False,
                              _request_timeout=self._timeout))
        pods, version = _one_listed(data, "Pod", f"pod {pod.key}")
        return (pods.pods[0] if pods.pods else None), version

    def _watch(self, pod: Pod, resource_version: str, seconds: float) -> WaitResult | str | None:
        """One watch of the pod: its verdict, or why it broke (a str), or None when it ended quietly."""
        def verdict(ev: _WatchEvent) -> WaitResult | None:
            obj = _decoded(bytes(ev.object), "Pod", f"pod {pod.key}")
            if (pod.uid and obj.uid != pod.uid) or ev.type == "DELETED":
                return WaitResult("deleted")
            return WaitResult("bound", obj.spec.node_name) if obj.spec.node_name else None

        return self._watch_one(
            ApiCall("watch", "pods", namespace=pod.namespace, name=pod.name), seconds, verdict,
            lambda: self.client.core.list_namespaced_pod(
                pod.namespace, field_selector=f"metadata.name={pod.name}", watch=True,
                resource_version=resource_version or None, timeout_seconds=max(1, int(seconds)),
                allow_watch_bookmarks=True, _preload_content=False,
                _request_timeout=(self._timeout[0], seconds + 10)))

    def _watch_one(self, call: ApiCall, seconds: float, verdict: Callable[[_WatchEvent], Any],
                   open_watch: Callable[[], Any]) -> Any:
        """One watch stream (`open_watch` starts it): the first verdict `verdict` gives for an event
        (ADDED, MODIFIED, DELETED), or why the watch broke (a str), or None when it ended quietly.
        `_WatchForbidden` when RBAC forbids the watch."""
        try:
            resp = open_watch()
        except ApiException as exc:
            if exc.status == 403:
                err = access_error(exc, call, self.client)
                raise _WatchForbidden(err.message if err else _status_text(exc)) from None
            self._raise(exc, call)
            raise
        except Exception as exc:
            err = access_error(exc, call, self.client)
            if err is not None:
                raise err from None
            raise
        try:
            for line in _event_lines(resp, time.monotonic() + seconds + 10):
                if not line.strip():
                    continue
                try:
                    ev = _watch_event.decode(line)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    return "the server sent an unreadable watch event"
                if ev.type == "ERROR":  # e.g. 410 Gone: start over from a fresh read
                    try:
                        return f"the server ended the watch: {_status_body.decode(ev.object).message}"
                    except (msgspec.DecodeError, msgspec.ValidationError):
                        return "the server ended the watch with an error"
                if ev.type == "BOOKMARK":
                    continue
                found = verdict(ev)
                if found is not None:
                    return found
        except Exception as exc:  # a stream cut mid-way: start over
            if access_error(exc, call, self.client) is None and not is_transient(exc):
                raise
            return "the connection was lost"
        finally:
            # Close, not just release: a watch left early would stream on (and hold a watch open on
            # the API server) until its timeout.
            resp.close()
            resp.release_conn()
        return None

    def wait_for_pdb(self, namespace: str, name: str, timeout_seconds: float) -> PodDisruptionBudget | None:
        """Until the PDB allows a disruption (`status.disruptionsAllowed > 0`), is gone (None), or
        the timeout (the PDB as last read): list it by name (its state and a current
        resourceVersion), then watch it from there, so that the disruption controller's update
        wakes kresched at once; a broken watch is started again from a fresh list, and one RBAC
        forbids falls back to reading the PDB about once a second."""
        deadline = time.monotonic() + timeout_seconds
        failures = 0
        while True:
            pdb, version = self._read_pdb(namespace, name)
            if pdb is None or pdb.status is None or pdb.status.disruptions_allowed > 0:
                return pdb
            left = deadline - time.monotonic()
            if left <= 0:
                return pdb
            if self._pdb_watch_forbidden:
                time.sleep(min(self.retry.wait_seconds(2, None), left))
                continue
            try:
                outcome = self._watch_one(
                    ApiCall("watch", "poddisruptionbudgets", group="policy", namespace=namespace, name=name), left,
                    lambda ev: _pdb_verdict(ev, f"PodDisruptionBudget {namespace}/{name}"),
                    lambda rv=version, secs=left: self.client.policy.list_namespaced_pod_disruption_budget(
                        namespace, field_selector=f"metadata.name={name}", watch=True,
                        resource_version=rv or None, timeout_seconds=max(1, int(secs)),
                        allow_watch_bookmarks=True, _preload_content=False,
                        _request_timeout=(self._timeout[0], secs + 10)))
            except _WatchForbidden:
                self._pdb_watch_forbidden = True
                continue
            except (ClusterAccessError, ApiFailure) as exc:
                outcome = exc.message
            if isinstance(outcome, tuple):
                return outcome[0]
            if outcome is None:  # the watch ran its course: read again, and watch again
                failures = 0
                continue
            failures += 1  # broken: pause, more each time in a row, then read and watch again
            time.sleep(min(self.retry.wait_seconds(failures, None), max(deadline - time.monotonic(), 0)))

    def _read_pdb(self, namespace: str, name: str) -> tuple[PodDisruptionBudget | None, str]:
        """The PDB (by name) and the list's resourceVersion to watch it from."""
        data = self._call(ApiCall("list", "poddisruptionbudgets", group="policy", namespace=namespace, name=name),
                          lambda: self.client.policy.list_namespaced_pod_disruption_budget(
                              namespace, field_selector=f"metadata.name={name}", _preload_content=False,
                              _request_timeout=self._timeout))
        pdbs, version = _one_listed(data, "PodDisruptionBudget", f"PodDisruptionBudget {namespace}/{name}")
        return (pdbs.pdbs[0] if pdbs.pdbs else None), version


def _one_listed(data: bytes, kind: str, what: str) -> tuple[Objects, str]:
    """A list by name (`fieldSelector=metadata.name=...`): its objects and its resourceVersion, the
    current one to watch from."""
    try:
        head = _list_head.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ApiFailure(f"cannot read {what}: unreadable list from the API server: {exc}") from None
    try:
        objects = decode_json(data, what, item_kind=kind)
    except InputError as exc:
        raise ClusterAccessError(f"the API server sent an object kresched cannot use: {exc.message}") from None
    return objects, head.metadata.resource_version


def _pdb_verdict(ev: _WatchEvent, what: str) -> tuple[PodDisruptionBudget | None] | None:
    """A PDB watch event's verdict for `wait_for_pdb`: (None,) gone, (the PDB,) allowing a
    disruption (or without a status to judge by), None to keep watching."""
    if ev.type == "DELETED":
        return (None,)
    pdb = _decoded(bytes(ev.object), "PodDisruptionBudget", what)
    return (pdb,) if pdb.status is None or pdb.status.disruptions_allowed > 0 else None


#: A watch event is one object: etcd keeps objects under 1.5 MiB, so 16 MiB without a newline is no
#: event, only a server streaming garbage into kresched's memory.
MAX_EVENT_BYTES = 16 << 20


def _event_lines(resp: Any, deadline: float) -> Iterator[bytes]:
    """The watch stream's lines, each at most `MAX_EVENT_BYTES`, until `deadline` (monotonic): the
    read timeout is per read, so a server trickling bytes would keep a watch open past it."""
    buf = bytearray()
    for chunk in resp.stream(65536, decode_content=True):
        start = 0
        buf += chunk
        while (i := buf.find(b"\n", start)) >= 0:
            yield bytes(buf[start:i])
            start = i + 1
        del buf[:start]
        if len(buf) > MAX_EVENT_BYTES:
            raise ApiFailure(f"the API server sent a watch event larger than {MAX_EVENT_BYTES >> 20} MiB")
        if time.monotonic() > deadline:
            return
    if buf:
        yield bytes(buf)


def _decoded(data: bytes, kind: str, origin: str) -> Any:
    """An object from the server's answer; one kresched cannot use is never acted upon, and it is
    the cluster's fault (exit 5), not the operator's input (exit 2)."""
    try:
        return decode_object(data, kind, origin)
    except InputError as exc:
        raise ClusterAccessError(f"the API server sent an object kresched cannot use: {exc.message}") from None


def _decoded_list(data: bytes, origin: str) -> list[Pod]:
    try:
        return decode_json(data, origin, item_kind="Pod").pods
    except InputError as exc:
        raise ClusterAccessError(f"the API server sent an object kresched cannot use: {exc.message}") from None


def _is_eviction_429(call: ApiCall, exc: BaseException) -> bool:
    # A 429 from the eviction subresource is a PodDisruptionBudget's answer: EVICTION_RETRY's job.
    return call.subresource == "eviction" and isinstance(exc, ApiException) and exc.status == 429
