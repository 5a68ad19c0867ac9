"""Discovery, as `kubectl` needs it to talk to the fake at all: `/version`, `/api`, `/apis` and one
`APIResourceList` per group version, generated from `store.RESOURCES` (the legacy, unaggregated
documents: kubectl asks for the aggregated v2 form first and reads the plain JSON it gets back).

`resource.k8s.io` is listed in the versions the server serves (`FakeApiServer.dra_versions`), with
its `APIGroup` at `/apis/resource.k8s.io` (what kresched reads to choose the version it lists): a
server without the group answers 404 there, as a real one does. The gang resources
(`FakeApiServer.gangs_served`) are listed in their group versions only when served: a group
version serving none of them answers 404 (`scheduling.k8s.io` itself is always there, for v1).

The core v1 list names `pods/eviction` (kind Eviction, group policy, version v1): that is how
`kubectl drain` decides that the server supports the Eviction API (`CheckEvictionSupport`).
The official Python client never asks for any of this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.fakeapi.errors import ApiError
from tests.fakeapi.store import DRA, DRA_GROUP, GANGS, PODS, RESOURCES, Resource

if TYPE_CHECKING:
    from tests.fakeapi.server import Request, Response, Route

__all__ = ["discovery_routes"]

_READ = ["get", "list", "watch"]
_VERBS = {"pods": [*_READ, "create", "delete", "patch"], "nodes": [*_READ, "patch"],
          "namespaces": [*_READ, "patch"], "poddisruptionbudgets": [*_READ, "patch"],
          "leases": [*_READ, "create", "update"], "priorityclasses": _READ, "events": [*_READ, "create"]}


def _resource(res: Resource) -> dict[str, Any]:
    return {"name": res.plural, "singularName": res.kind.lower(), "namespaced": res.namespaced, "kind": res.kind,
            "verbs": _VERBS.get(res.plural, _READ)}


def _group_versions() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for res in RESOURCES:
        out.setdefault(res.api_version, []).append(_resource(res))
    out["v1"].append({"name": f"{PODS.plural}/eviction", "singularName": "", "namespaced": True, "group": "policy",
                      "version": "v1", "kind": "Eviction", "verbs": ["create"]})
    return out


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def discovery_routes(server_url: Any, dra_versions: Any = lambda: ("v1",), gangs_served: Any = lambda: ()
                     ) -> list[Route]:
    """The routes; `server_url()` gives the address to advertise (known once the server started),
    `dra_versions()` the versions of resource.k8s.io served now, most preferred first,
    `gangs_served()` the gang resources served now (of `store.GANGS`)."""
    from tests.fakeapi.server import Response, Route

    lists = _group_versions()
    dra_list = [_resource(r) for r in DRA]
    groups = sorted({r.group for r in RESOURCES if r.group})

    def gang_lists() -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for res in GANGS:
            if res in gangs_served():
                out.setdefault(res.api_version, []).append(_resource(res))
        return out

    def served_groups() -> list[dict[str, Any]]:
        versions: dict[str, list[str]] = {g: ["v1"] for g in groups}
        if dra_versions():
            versions[DRA_GROUP] = list(dra_versions())
        for gv in gang_lists():
            group, _, version = gv.partition("/")
            versions.setdefault(group, []).append(version)
        return [_group(g, v) for g, v in versions.items()]

    def version(req: Request) -> Response:
        return Response(200, {"major": "1", "minor": "32", "gitVersion": "v1.32.0-fake", "platform": "linux/amd64"})

    def core(req: Request) -> Response:
        return Response(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_url().removeprefix("http://")}]})

    def group_list(req: Request) -> Response:
        return Response(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": served_groups()})

    def group(req: Request) -> Response:
        found = [g for g in served_groups() if g["name"] == req.params["group"]]
        if not found:
            raise ApiError.path_not_found()
        return Response(200, {"kind": "APIGroup", "apiVersion": "v1", **found[0]})

    def resource_list(req: Request) -> Response:
        gv = f'{req.params["group"]}/{req.params["version"]}' if "group" in req.params else "v1"
        if req.params.get("group") == DRA_GROUP and req.params["version"] in dra_versions():
            return Response(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                                  "resources": dra_list})
        if gv in gang_lists():
            return Response(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                                  "resources": [*lists.get(gv, []), *gang_lists()[gv]]})
        if gv not in lists:
            raise ApiError.path_not_found()
        return Response(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                              "resources": lists[gv]})

    return [Route("GET", "/version", version), Route("GET", "/api", core), Route("GET", "/apis", group_list),
            Route("GET", "/api/v1", resource_list), Route("GET", "/apis/{group}/{version}", resource_list),
            Route("GET", "/apis/{group}", group)]
