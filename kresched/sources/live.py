"""The live source: read the cluster state a plan needs from the API server, list by list.

Owns `load_live` and `read_live`: listing Nodes, Pods, PodDisruptionBudgets (policy/v1),
PriorityClasses (scheduling.k8s.io/v1), Namespaces, the workloads the default spreading needs,
PersistentVolumes, PersistentVolumeClaims, StorageClasses and CSINodes (storage.k8s.io/v1), the
kubelets' Leases in `kube-node-lease` (coordination.k8s.io/v1; left out when RBAC forbids them),
DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates (resource.k8s.io, in the
version `live_dra` finds served), and the PodGroups and Workloads of the gang APIs the server serves
(`live_gangs`; left out when RBAC forbids them) page by page (`limit`/`continue`, a list restarted once when its
continue token expires), within the list deadline, retrying what is transient, and turning every
way that can fail into a one-line `ClusterAccessError`. Pages are fetched with
`_preload_content=False` and decoded by `kresched.sources.decode` straight into the model structs:
the client's own model deserialisation costs seconds per few thousand pods. The connection is
`kresched.sources.connection`'s, a call's deadline and failures `kresched.sources.calls`'. Must
not write to the API (that is `kresched.execute`'s job).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import msgspec
from kubernetes.client.exceptions import ApiException

from kresched.errors import ClusterAccessError, InputError
from kresched.model.cluster import ClusterState
from kresched.model.dra import DRA_KINDS
from kresched.model.lease import NODE_LEASE_NAMESPACE
from kresched.model.storage import STORAGE_KINDS
from kresched.retry import LIST_RETRY, RetryPolicy
from kresched.sources.calls import (
    ApiCall,
    ListSpec,
    RequestDeadline,
    access_error,
    api_status,
    is_transient,
    read_within,
    retry_after_seconds,
)
from kresched.sources.connection import LIST_TIMEOUT_ENV, LiveClient
from kresched.sources.decode import Objects, decode_json, paused_gc
from kresched.sources.live_dra import dra_lists
from kresched.sources.live_gangs import gang_lists
from kresched.sources.snapshot import build_state

__all__ = ["DEFAULT_PAGE_SIZE", "OnPage", "load_live", "read_live"]

DEFAULT_PAGE_SIZE = 500

# -- listing --------------------------------------------------------------------------------------

#: What a plan needs, in the order it is read (small and cluster-scoped first; the pods last, after
#: the DRA lists of `live_dra`).
_LISTS = (
    ListSpec("Namespace", "/api/v1/namespaces", ApiCall("list", "namespaces")),
    ListSpec("PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses",
              ApiCall("list", "priorityclasses", "scheduling.k8s.io")),
    ListSpec("Node", "/api/v1/nodes", ApiCall("list", "nodes")),
    ListSpec("PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets",
              ApiCall("list", "poddisruptionbudgets", "policy")),
    # What scoring needs: the selectors of the system default spreading constraints.
    ListSpec("Service", "/api/v1/services", ApiCall("list", "services")),
    ListSpec("ReplicationController", "/api/v1/replicationcontrollers", ApiCall("list", "replicationcontrollers")),
    ListSpec("ReplicaSet", "/apis/apps/v1/replicasets", ApiCall("list", "replicasets", "apps")),
    ListSpec("StatefulSet", "/apis/apps/v1/statefulsets", ApiCall("list", "statefulsets", "apps")),
    ListSpec("StorageClass", "/apis/storage.k8s.io/v1/storageclasses",
              ApiCall("list", "storageclasses", "storage.k8s.io")),
    ListSpec("CSINode", "/apis/storage.k8s.io/v1/csinodes",
              ApiCall("list", "csinodes", "storage.k8s.io")),
    ListSpec("PersistentVolume", "/api/v1/persistentvolumes", ApiCall("list", "persistentvolumes")),
    ListSpec("PersistentVolumeClaim", "/api/v1/persistentvolumeclaims", ApiCall("list", "persistentvolumeclaims")),
    # The kubelets' heartbeats: when each node was last heard from (a lost node's Lease stops).
    ListSpec("Lease", f"/apis/coordination.k8s.io/v1/namespaces/{NODE_LEASE_NAMESPACE}/leases",
             ApiCall("list", "leases", "coordination.k8s.io", namespace=NODE_LEASE_NAMESPACE), optional=True),
    ListSpec("Pod", "/api/v1/pods", ApiCall("list", "pods")),
)


class _ListMeta(msgspec.Struct, frozen=True):
    continue_: str = msgspec.field(default="", name="continue")


class _ListHead(msgspec.Struct):
    kind: str = ""
    metadata: _ListMeta = _ListMeta()


_list_head = msgspec.json.Decoder(_ListHead)
_ITEMS_KEY = b'"items":'


def _decode_list_head(data: bytes) -> _ListHead:
    """The list's kind and continue token, without scanning the items a second time.

    The API server writes `kind`, `apiVersion` and `metadata` before `items`; when the bytes before
    the first `"items":` hold the metadata, decoding just that prefix is enough (and saves about a
    fifth of the decoding time). Anything else falls back to reading the whole page.
    """
    i = data.find(_ITEMS_KEY)
    if i > 0 and b'"metadata":' in data[:i]:
        try:
            return _list_head.decode(data[:i] + b'"items":null}')
        except msgspec.DecodeError:
            pass
    return _list_head.decode(data)


#: Told after each page: the kind being listed, how many of it so far, and the bytes read in all.
OnPage = Callable[[str, int, int], None]


def load_live(client: LiveClient, page_size: int = DEFAULT_PAGE_SIZE, *,
              retry: RetryPolicy | None = None, on_page: OnPage | None = None) -> ClusterState:
    """Read the cluster state from the API server (see `read_live`) and index it."""
    with paused_gc():
        return build_state(read_live(client, page_size, retry=retry, on_page=on_page))


def read_live(client: LiveClient, page_size: int = DEFAULT_PAGE_SIZE, *,
              retry: RetryPolicy | None = None, on_page: OnPage | None = None) -> Objects:
    """List every kind a plan needs, `page_size` objects a request, retrying transient failures
    with `retry` (default `LIST_RETRY`); every failure left is a `ClusterAccessError`. `on_page`
    (progress on a terminal) is told after every page.
    """
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    policy = replace(retry if retry is not None else LIST_RETRY, retry_after=retry_after_seconds)
    out = Objects()
    read = [0]

    def list_into(spec: ListSpec) -> bool:
        """Whether the list was read (an optional one refused with 403 or 404 is not)."""
        try:
            out.extend(_list_all(client, spec, page_size, policy, on_page, read))
            return True
        except ApiException as exc:
            if spec.optional and exc.status in (403, 404):
                return False
            err = access_error(exc, spec.call, client)
            if err is None:
                raise
            raise err from None
        except Exception as exc:
            err = access_error(exc, spec.call, client)
            if err is None:
                raise
            raise err from None

    *first, pods = _LISTS  # the pods last: the longest list, what progress shows until planning starts
    for spec in first:
        list_into(spec)
    dra = dra_lists(client, policy)  # the version of resource.k8s.io served, if any
    for spec in dra or ():
        list_into(spec)
    gangs = gang_lists(client, policy)  # the gang APIs served, if any (almost never: nothing said)
    refused = {spec.kind for spec in gangs.lists if not list_into(spec)}
    list_into(pods)
    # Every storage kind was listed: an empty list means the cluster has none, not "unknown".
    out.storage_kinds = frozenset(STORAGE_KINDS)
    if dra is not None:  # listed, or the server has no resource.k8s.io: no devices
        out.dra_kinds = frozenset(DRA_KINDS)
    # Listed, or not served (no such objects): known. Forbidden: unknown, and the gangs say so.
    out.gang_kinds = gangs.kinds_read(refused)
    return out


def _list_all(client: LiveClient, spec: ListSpec, page_size: int, policy: RetryPolicy,
              on_page: OnPage | None = None, read: list[int] | None = None) -> Objects:
    """All pages of one list. A 410 Gone on a continue token (the list took longer than the server
    keeps its snapshot) restarts the list once from the beginning: mixing pages of two snapshots
    could show a pod twice or not at all.
    """
    started = time.monotonic()
    for restart in (False, True):
        objects = Objects()
        token: str | None = None
        seen: set[str] = set()
        page = 0
        try:
            while True:
                page += 1
                left = client.list_deadline - (time.monotonic() - started)
                try:
                    if left <= 0:
                        raise RequestDeadline("")
                    data = _fetch(client, spec, page_size, token, policy.with_deadline(left), left)
                except RequestDeadline:
                    if time.monotonic() - started < client.list_deadline:
                        raise
                    raise ClusterAccessError(
                        f"cannot {spec.call.describe()}: the list was not read within {client.list_deadline:g}s "
                        f"(stopped on page {page}; set {LIST_TIMEOUT_ENV} to allow longer)") from None
                origin = f"{client.server}{spec.path} (page {page})"
                try:
                    head = _decode_list_head(data)
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    raise ClusterAccessError(f"{origin}: the API server sent an unreadable list: {exc}") from None
                if head.kind != f"{spec.kind}List":
                    raise ClusterAccessError(f"{origin}: expected a {spec.kind}List from the API server, "
                                             f"got {head.kind or 'something without a kind'}")
                try:
                    page_objects = decode_json(data, origin, item_kind=spec.kind)
                except InputError as exc:
                    # Not the operator's input: the server's answer. Nothing is acted upon.
                    raise ClusterAccessError(f"the API server sent an object kresched cannot use: {exc.message}") \
                        from None
                objects.extend(page_objects)
                if on_page is not None:
                    if read is not None:
                        read[0] += len(data)
                    on_page(spec.kind, objects.count(), read[0] if read is not None else len(data))
                token = head.metadata.continue_ or None
                if token is None:
                    return objects
                if token in seen:
                    raise ClusterAccessError(
                        f"cannot {spec.call.describe()}: the API server at {client.server} sent the same continue "
                        f"token again on page {page}: the list would never end")
                seen.add(token)
        except ApiException as exc:
            if exc.status == 410 and token is not None and not restart:
                continue
            if exc.status == 410 and token is not None:
                raise ClusterAccessError(
                    f"cannot {spec.call.describe()}: the list expired twice while being read page by page "
                    f"(410 {api_status(exc).reason or 'Gone'}); try again, or with a larger page size") from None
            raise
    raise AssertionError("unreachable")


def _fetch(client: LiveClient, spec: ListSpec, page_size: int, token: str | None, policy: RetryPolicy,
           left: float) -> bytes:
    """One page's raw bytes, retried while the failure is transient, within what is `left` of the
    list's deadline."""
    started = time.monotonic()
    for attempt in policy.retrying(is_transient):
        with attempt:
            remaining = left - (time.monotonic() - started)
            return read_within(client, spec.call, lambda: client.list_page(spec.path, page_size, token),
                               min(client.request_deadline, max(remaining, 0.0)))
    raise AssertionError("unreachable")
