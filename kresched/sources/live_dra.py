"""The live source's Dynamic Resource Allocation kinds: which version of `resource.k8s.io` the API
server serves, and the lists of DeviceClasses, ResourceSlices, ResourceClaims and
ResourceClaimTemplates in it, which `live.read_live` reads page by page like every other list (the
same retries, deadlines and errors).

Owns the choice of version, made as kubectl's discovery makes it but among the versions kresched
reads: the group's `APIGroup` (GET /apis/resource.k8s.io) names those served, and v1 (v1.34 on) is
taken first, then v1beta2 (v1.33), then v1beta1 (v1.32); `kresched.model.dra` reads the betas into
v1's shape. Three outcomes:

1. a version kresched reads: its four lists;
2. no such group (404; DRA is off by default before v1.34): a cluster without devices — the four
   kinds known and empty, and nothing said about it;
3. the group without any of those versions (v1.31's v1alpha3 only): nothing listed, the kinds
   left unknown, so that a pod with claims is never placed as if it asked for nothing.

Any other failure of the discovery, a 403 included, stops the read with the message every list
failure gets: a plan made without the devices would place GPU pods where they cannot run, so a role
that cannot see them is a configuration to fix (`kresched manifests` grants the four lists), not a
detail to skip. Must not write to the API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import msgspec
from kubernetes.client.exceptions import ApiException

from kresched.errors import ClusterAccessError
from kresched.retry import RetryPolicy
from kresched.sources.calls import ApiCall, ListSpec, access_error, is_transient, read_within
from kresched.sources.connection import LiveClient

__all__ = ["GROUP", "VERSIONS", "discovery_document", "dra_lists", "get_unread"]

GROUP = "resource.k8s.io"
#: The versions kresched reads, most preferred first.
VERSIONS = ("v1", "v1beta2", "v1beta1")
_GROUP_PATH = f"/apis/{GROUP}"


@dataclass(frozen=True)
class _Discovery(ApiCall):
    """The discovery request, for its error messages: a non-resource URL every authenticated user
    may read (the `system:discovery` ClusterRole), so no RBAC of kresched's grants it."""

    def describe(self) -> str:
        return f"get {_GROUP_PATH} (the discovery of the API group {GROUP})"

    def rbac_hint(self) -> str:
        return f'nonResourceURLs ["{_GROUP_PATH}"], verbs ["get"]'


_DISCOVERY = _Discovery("get", "")


def _specs(version: str) -> tuple[ListSpec, ...]:
    base = f"{_GROUP_PATH}/{version}"
    return (
        ListSpec("DeviceClass", f"{base}/deviceclasses", ApiCall("list", "deviceclasses", "resource.k8s.io")),
        ListSpec("ResourceSlice", f"{base}/resourceslices", ApiCall("list", "resourceslices", "resource.k8s.io")),
        ListSpec("ResourceClaim", f"{base}/resourceclaims", ApiCall("list", "resourceclaims", "resource.k8s.io")),
        ListSpec("ResourceClaimTemplate", f"{base}/resourceclaimtemplates",
                  ApiCall("list", "resourceclaimtemplates", "resource.k8s.io")),
    )


class _GroupVersion(msgspec.Struct):
    version: str = ""


class _APIGroup(msgspec.Struct):
    kind: str = ""
    versions: list[_GroupVersion] | None = None


def dra_lists(client: LiveClient, policy: RetryPolicy) -> tuple[ListSpec, ...] | None:
    """The four lists at the version to read; `()` when the server has no such group (a cluster
    without devices), None when it serves none of the versions kresched reads (unknown)."""
    served = _served_versions(client, policy)
    if served is None:
        return ()
    version = next((v for v in VERSIONS if v in served), None)
    return _specs(version) if version is not None else None


def _served_versions(client: LiveClient, policy: RetryPolicy) -> frozenset[str] | None:
    """The versions of the group the server serves; None when it has no such group."""
    try:
        for attempt in policy.retrying(is_transient):
            with attempt:
                data = read_within(client, _DISCOVERY, lambda: get_unread(client, _GROUP_PATH))
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise _access_error(exc, client) from None
    except ClusterAccessError:
        raise
    except Exception as exc:
        raise _access_error(exc, client) from None
    group = discovery_document(data, _APIGroup, "APIGroup", "API group", f"{client.server}{_GROUP_PATH}")
    return frozenset(v.version for v in group.versions or ())


class _Kinded(Protocol):
    kind: str


D = TypeVar("D", bound=_Kinded)


def discovery_document(data: bytes, type_: type[D], kind: str, what: str, where: str) -> D:
    """A discovery answer (`kind`: APIGroup, APIResourceList) read as `type_`: one
    `ClusterAccessError` naming `where` when it is unreadable or of another kind."""
    try:
        doc = msgspec.json.decode(data, type=type_)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ClusterAccessError(f"{where}: the API server sent an unreadable {what}: {exc}") from None
    if doc.kind != kind:
        raise ClusterAccessError(f"{where}: expected an {kind} from the API server, got "
                                 f"{doc.kind or 'something without a kind'}")
    return doc


def _access_error(exc: BaseException, client: LiveClient) -> BaseException:
    err = access_error(exc, _DISCOVERY, client)
    return err if err is not None else exc


def get_unread(client: LiveClient, path: str) -> Any:
    """GET `path` (JSON) as `LiveClient.list_page` lists: the urllib3 response, unread (for
    `read_within`); a status other than 2xx is raised as the client's `ApiException`."""
    api = client.api_client
    request = api.param_serialize("GET", path, header_params={"Accept": "application/json"},
                                  auth_settings=["BearerToken"])
    response = api.call_api(*request, _request_timeout=client.request_timeout)
    if not 200 <= response.status <= 299:
        response.read()
        raise ApiException.from_response(http_resp=response, body=None, data=None)
    return response.response
