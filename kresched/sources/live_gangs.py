"""The live source's gang kinds: which of the three PodGroup APIs and v1.36's Workload the API
server serves, and their lists, which `live.read_live` reads page by page like every other list.

Owns the discovery of `scheduling.k8s.io/v1alpha2` (PodGroups and Workloads: alpha, off unless the
API server runs with `--runtime-config` and the `GenericWorkload` gate, each resource on its own),
`scheduling.x-k8s.io/v1alpha1` (scheduler-plugins' coscheduling, a CRD) and
`scheduling.volcano.sh/v1beta1` (Volcano, a CRD): one GET of each group version's
`APIResourceList` (`/apis/GROUP/VERSION`, a non-resource URL every authenticated user may read),
whose `resources` name what it serves. Outcomes, for each group version:

1. served: the lists of the kinds it serves, read (a kind it does not serve has no objects there);
2. not served (404; almost every cluster): nothing listed and nothing said — a cluster without
   gangs is the normal case;
3. forbidden (403, on the discovery or on a list): that kind is left out of the state's
   `gang_kinds` and the run goes on. A cluster without gangs must never fail on lists it never
   needed, and a role written before kresched read these (`kresched manifests` grants the four
   lists now) must keep working. The plan stays safe without them: a pod still declares its gang
   itself (`spec.schedulingGroup`, the coscheduling label, Volcano's annotation), and a gang whose
   PodGroup was not read is taken to need every member it has (`kresched.model.gangs`), which the
   plan says. The devices (`live_dra`) are the other way round on purpose: a GPU pod placed as if
   it asked for nothing would be wrong, not merely cautious.

Any other failure (after the retries every call gets) stops the read with the one-line message
every list failure gets. Must not write to the API.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
from kubernetes.client.exceptions import ApiException

from kresched.errors import ClusterAccessError
from kresched.model.gangs import GANG_KINDS
from kresched.retry import RetryPolicy
from kresched.sources.calls import ApiCall, ListSpec, access_error, is_transient, read_within
from kresched.sources.connection import LiveClient
from kresched.sources.live_dra import discovery_document, get_unread

__all__ = ["GANG_APIS", "GangLists", "gang_lists"]


@dataclass(frozen=True)
class _Api:
    """One group version that serves gang kinds, and the list of each kind it may serve (by resource)."""

    group_version: str
    lists: tuple[tuple[str, ListSpec], ...]

    @property
    def path(self) -> str:
        return f"/apis/{self.group_version}"


def _list(group_version: str, kind: str, call: ApiCall) -> tuple[str, ListSpec]:
    return call.resource, ListSpec(kind, f"/apis/{group_version}/{call.resource}", call, optional=True)


#: The group versions kresched reads gang kinds in (`kresched.model.gangs`), in the order they are read.
GANG_APIS = (
    _Api("scheduling.k8s.io/v1alpha2", (
        _list("scheduling.k8s.io/v1alpha2", "Workload", ApiCall("list", "workloads", "scheduling.k8s.io")),
        _list("scheduling.k8s.io/v1alpha2", "PodGroup", ApiCall("list", "podgroups", "scheduling.k8s.io")),
    )),
    _Api("scheduling.x-k8s.io/v1alpha1", (
        _list("scheduling.x-k8s.io/v1alpha1", "PodGroup", ApiCall("list", "podgroups", "scheduling.x-k8s.io")),
    )),
    _Api("scheduling.volcano.sh/v1beta1", (
        _list("scheduling.volcano.sh/v1beta1", "PodGroup", ApiCall("list", "podgroups", "scheduling.volcano.sh")),
    )),
)


@dataclass(frozen=True)
class _Discovery(ApiCall):
    """The discovery request of one group version, for its error messages: no RBAC of kresched's
    grants it (the `system:discovery` ClusterRole lets every authenticated user read it)."""

    path: str = ""

    def describe(self) -> str:
        return f"get {self.path} (the discovery of the API group version {self.path.removeprefix('/apis/')})"

    def rbac_hint(self) -> str:
        return f'nonResourceURLs ["{self.path}"], verbs ["get"]'


@dataclass(frozen=True)
class GangLists:
    """The lists to read, and the kinds whose discovery was refused (unknown, however the lists go)."""

    lists: tuple[ListSpec, ...] = ()
    unknown: frozenset[str] = frozenset()

    def kinds_read(self, refused: set[str]) -> frozenset[str]:
        """The gang kinds the state knows in full once the lists were read, but for the kinds of
        `refused` lists (403)."""
        return frozenset(GANG_KINDS) - self.unknown - refused


class _Resource(msgspec.Struct):
    name: str = ""


class _APIResourceList(msgspec.Struct):
    kind: str = ""
    resources: list[_Resource] | None = None


def gang_lists(client: LiveClient, policy: RetryPolicy) -> GangLists:
    """The lists of every gang kind the server serves (see the module docstring)."""
    lists: list[ListSpec] = []
    unknown: set[str] = set()
    for api in GANG_APIS:
        served = _served_resources(client, policy, api)
        if served is None:  # forbidden
            unknown.update(spec.kind for _, spec in api.lists)
            continue
        lists += [spec for resource, spec in api.lists if resource in served]
    return GangLists(tuple(lists), frozenset(unknown))


def _served_resources(client: LiveClient, policy: RetryPolicy, api: _Api) -> frozenset[str] | None:
    """The resources `api`'s group version serves (none when it is not served); None when the
    discovery is forbidden."""
    call = _Discovery("get", "", path=api.path)
    try:
        for attempt in policy.retrying(is_transient):
            with attempt:
                data = read_within(client, call, lambda: get_unread(client, api.path))
    except ApiException as exc:
        if exc.status == 404:
            return frozenset()
        if exc.status == 403:
            return None
        err = access_error(exc, call, client)
        raise (err if err is not None else exc) from None
    except ClusterAccessError:
        raise
    except Exception as exc:
        err = access_error(exc, call, client)
        if err is None:
            raise
        raise err from None
    found = discovery_document(data, _APIResourceList, "APIResourceList", "API resource list",
                               f"{client.server}{api.path}")
    return frozenset(r.name for r in found.resources or ())
