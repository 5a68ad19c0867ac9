"""Discovery, as `kubectl` needs it to talk to the fake at all: `/version`, `/api`, `/apis` and one
`APIResourceList` per group version, generated from `store.RESOURCES` (the legacy, unaggregated
documents: kubectl asks for the aggregated v2 form first and reads the plain JSON it gets back).

The core v1 list names `pods/eviction` (kind Eviction, group policy, version v1): that is how
`kubectl drain` decides that the server supports the Eviction API (`CheckEvictionSupport`).
The official Python client never asks for any of this; kresched's tests do not depend on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.fakeapi.store import PODS, RESOURCES, Resource

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


def discovery_routes(server_url: Any) -> list[Route]:
    """The routes; `server_url()` gives the address to advertise (known once the server started)."""
    from tests.fakeapi.server import Response, Route

    lists = _group_versions()
    groups = sorted({r.group for r in RESOURCES if r.group})

    def version(req: Request) -> Response:
        return Response(200, {"major": "1", "minor": "32", "gitVersion": "v1.32.0-fake", "platform": "linux/amd64"})

    def core(req: Request) -> Response:
        return Response(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_url().removeprefix("http://")}]})

    def group_list(req: Request) -> Response:
        items = []
        for g in groups:
            gv = {"groupVersion": f"{g}/v1", "version": "v1"}
            items.append({"name": g, "versions": [gv], "preferredVersion": gv})
        return Response(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": items})

    def resource_list(req: Request) -> Response:
        gv = f'{req.params["group"]}/{req.params["version"]}' if "group" in req.params else "v1"
        if gv not in lists:
            from tests.fakeapi.errors import ApiError

            raise ApiError.path_not_found()
        return Response(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                              "resources": lists[gv]})

    return [Route("GET", "/version", version), Route("GET", "/api", core), Route("GET", "/apis", group_list),
            Route("GET", "/api/v1", resource_list), Route("GET", "/apis/{group}/{version}", resource_list)]
