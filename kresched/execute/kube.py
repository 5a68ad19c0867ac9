"""`KubeApi`: the `ClusterApi` over the official `kubernetes` client — the only code that writes to
a cluster.

Every call sends and receives raw JSON (`_preload_content=False`) decoded by
`kresched.sources.decode`; 5xx answers, dropped connections and read timeouts are retried with
`TRANSIENT_RETRY`; 404/409/429 become `NotFound`/`Conflict`/`TooManyRequests` for the caller's own
rules (`kresched.execute.writes`); 401/403 and an unreachable server become `ClusterAccessError`
naming the verb and resource; any other answer becomes `ApiFailure`.

`server_dry_run=True` sends every write with `dryRun=All`, so the API server validates it (PDB
429s included) without acting; waiting for the binding is then only simulated.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import msgspec
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from kresched.errors import ClusterAccessError
from kresched.execute.api import ApiFailure, Conflict, NotFound, TooManyRequests, WaitResult
from kresched.model.cluster import ClusterState
from kresched.model.lease import Lease
from kresched.model.objects import Node, Pod, PodDisruptionBudget
from kresched.retry import TRANSIENT_RETRY, RetryPolicy
from kresched.sources.decode import decode_object
from kresched.sources.live import ApiCall, LiveClient, access_error, is_transient, load_live

__all__ = ["KubeApi"]


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


_watch_event = msgspec.json.Decoder(_WatchEvent)


def _status_text(exc: ApiException) -> str:
    try:
        st = msgspec.json.decode(exc.body or b"{}", type=_StatusBody)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return str(exc.reason or exc.status)
    causes = [c.message for c in (st.details.causes if st.details else []) if c.message]
    return " ".join([st.message or str(exc.reason or exc.status), *causes])


class KubeApi:
    def __init__(self, client: LiveClient, server_dry_run: bool = False,
                 retry: RetryPolicy = TRANSIENT_RETRY, watch_chunk_seconds: int = 60) -> None:
        self.client = client
        self.dry_run = "All" if server_dry_run else None
        self.mode = "server dry run" if server_dry_run else "cluster"
        self.retry = retry
        self.watch_chunk_seconds = watch_chunk_seconds

    # -- plumbing -------------------------------------------------------------------------------
    def _call(self, call: ApiCall, fn: Callable[[], Any]) -> bytes:
        try:
            resp = self.retry.call(fn, retry_on=lambda e: is_transient(e) and not _is_eviction_429(call, e))
            return resp.data if hasattr(resp, "data") else b""
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
            raise TooManyRequests(text, 429, "TooManyRequests") from None
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
        return decode_object(data, "Node", f"node {name}")

    def patch_node(self, name: str, patch: dict[str, Any]) -> Node:
        data = self._call(ApiCall("patch", "nodes", name=name),
                          lambda: self.client.core.patch_node(name, patch, dry_run=self.dry_run,
                                                              _content_type="application/merge-patch+json",
                                                              _preload_content=False, _request_timeout=self._timeout))
        return decode_object(data, "Node", f"node {name}")

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
        body = k8s.V1DeleteOptions(grace_period_seconds=grace_seconds,
                                   preconditions=k8s.V1Preconditions(uid=pod.uid or None))
        self._call(ApiCall("delete", "pods", namespace=pod.namespace, name=pod.name),
                   lambda: self.client.core.delete_namespaced_pod(
                       pod.name, pod.namespace, body=body, grace_period_seconds=grace_seconds,
                       dry_run=self.dry_run, _preload_content=False, _request_timeout=self._timeout))

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        try:
            data = self._call(ApiCall("get", "pods", namespace=namespace, name=name),
                              lambda: self.client.core.read_namespaced_pod(name, namespace, _preload_content=False,
                                                                           _request_timeout=self._timeout))
        except NotFound:
            return None
        return decode_object(data, "Pod", f"pod {namespace}/{name}")

    def get_pdb(self, namespace: str, name: str) -> PodDisruptionBudget | None:
        try:
            data = self._call(ApiCall("get", "poddisruptionbudgets", group="policy", namespace=namespace, name=name),
                              lambda: self.client.policy.read_namespaced_pod_disruption_budget(
                                  name, namespace, _preload_content=False, _request_timeout=self._timeout))
        except NotFound:
            return None
        return decode_object(data, "PodDisruptionBudget", f"PodDisruptionBudget {namespace}/{name}")

    def get_lease(self, namespace: str, name: str) -> Lease | None:
        try:
            data = self._call(ApiCall("get", "leases", group="coordination.k8s.io", namespace=namespace, name=name),
                              lambda: self._coordination.read_namespaced_lease(
                                  name, namespace, _preload_content=False, _request_timeout=self._timeout))
        except NotFound:
            return None
        return decode_object(data, "Lease", f"Lease {namespace}/{name}")

    def create_lease(self, namespace: str, name: str, spec: dict[str, Any]) -> Lease:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": namespace}, "spec": spec}
        data = self._call(ApiCall("create", "leases", group="coordination.k8s.io", namespace=namespace, name=name),
                          lambda: self._coordination.create_namespaced_lease(
                              namespace, body, dry_run=self.dry_run, _preload_content=False,
                              _request_timeout=self._timeout))
        return decode_object(data, "Lease", f"Lease {namespace}/{name}")

    def update_lease(self, lease: Lease, spec: dict[str, Any]) -> Lease:
        ns, name = lease.metadata.namespace, lease.metadata.name
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": ns, "resourceVersion": lease.metadata.resource_version},
                "spec": spec}
        data = self._call(ApiCall("update", "leases", group="coordination.k8s.io", namespace=ns, name=name),
                          lambda: self._coordination.replace_namespaced_lease(
                              name, ns, body, dry_run=self.dry_run, _preload_content=False,
                              _request_timeout=self._timeout))
        return decode_object(data, "Lease", f"Lease {ns}/{name}")

    @property
    def _coordination(self) -> k8s.CoordinationV1Api:
        return k8s.CoordinationV1Api(self.client.api_client)

    def is_gone(self, pod: Pod) -> bool:
        if self.dry_run:
            return True  # a dryRun=All eviction removes nothing: there is nothing to wait for
        current = self.get_pod(pod.namespace, pod.name)
        return current is None or bool(pod.uid and current.uid != pod.uid)

    def wait_for_binding(self, pod: Pod, timeout_seconds: float,
                         progress: Callable[[str], None] | None = None) -> WaitResult:
        """Until the pod (this UID) is bound, deleted, or the timeout: GET, then watch from that
        resourceVersion; a watch that ends or breaks is simply started again from a fresh GET."""
        if self.dry_run:
            return WaitResult("simulated")
        deadline = time.monotonic() + timeout_seconds
        while True:
            current = self.get_pod(pod.namespace, pod.name)
            if current is None or (pod.uid and current.uid != pod.uid):
                return WaitResult("deleted")
            if current.spec.node_name:
                return WaitResult("bound", current.spec.node_name)
            left = deadline - time.monotonic()
            if left <= 0:
                return WaitResult("timeout")
            try:
                result = self._watch(pod, current.metadata.resource_version, min(left, self.watch_chunk_seconds))
            except (ClusterAccessError, ApiFailure) as exc:
                if progress:
                    progress(f"watch interrupted ({exc.message}); reading the pod again")
                time.sleep(min(1.0, max(deadline - time.monotonic(), 0)))
                continue
            if result is not None:
                return result

    def _watch(self, pod: Pod, resource_version: str, seconds: float) -> WaitResult | None:
        call = ApiCall("watch", "pods", namespace=pod.namespace, name=pod.name)
        try:
            resp = self.client.core.list_namespaced_pod(
                pod.namespace, field_selector=f"metadata.name={pod.name}", watch=True,
                resource_version=resource_version or None, timeout_seconds=max(1, int(seconds)),
                allow_watch_bookmarks=True, _preload_content=False,
                _request_timeout=(self._timeout[0], seconds + 10))
        except ApiException as exc:
            self._raise(exc, call)
            raise
        except Exception as exc:
            err = access_error(exc, call, self.client)
            if err is not None:
                raise err from None
            raise
        try:
            for line in resp:
                if not line.strip():
                    continue
                ev = _watch_event.decode(line)
                if ev.type == "ERROR":
                    return None  # e.g. 410 Gone: start over from a fresh GET
                if ev.type == "BOOKMARK":
                    continue
                obj = decode_object(bytes(ev.object), "Pod", f"pod {pod.key}")
                if pod.uid and obj.uid != pod.uid:
                    return WaitResult("deleted")
                if ev.type == "DELETED":
                    return WaitResult("deleted")
                if obj.spec.node_name:
                    return WaitResult("bound", obj.spec.node_name)
        except Exception as exc:  # a stream cut mid-way: start over
            if access_error(exc, call, self.client) is None and not is_transient(exc):
                raise
        finally:
            resp.release_conn()
        return None


def _is_eviction_429(call: ApiCall, exc: BaseException) -> bool:
    # A 429 from the eviction subresource is a PodDisruptionBudget's answer: EVICTION_RETRY's job.
    return call.subresource == "eviction" and isinstance(exc, ApiException) and exc.status == 429
