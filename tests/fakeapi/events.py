"""`events.k8s.io/v1` Events: what kresched records about what it did (issue 31). The fake accepts a
create as the API server does and keeps the Event in its store, where a test lists it (`GET
/apis/events.k8s.io/v1/namespaces/NS/events`, or `events(server)`).

Validation is the API server's for a create through events.k8s.io/v1
(pkg/apis/core/validation/events.go `ValidateEventCreate`, v1.36): the name a DNS subdomain,
`eventTime` set, `type` Normal or Warning, `reportingController` a qualified name,
`reportingInstance`, `action` and `reason` set and at most 128 characters, the note at most
1024; an Event about a cluster-scoped object (a Node) lives in `default` (or `kube-system`); the
deprecated core fields (`firstTimestamp`, `lastTimestamp`, `count`, `source`) unset. A refusal is a
422 naming every field, as the API server's.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tests.fakeapi.errors import ApiError
from tests.fakeapi.store import EVENTS

if TYPE_CHECKING:
    from tests.fakeapi.server import FakeApiServer, Request, Response

__all__ = ["EVENTS", "add_event_routes", "event_errors", "events"]

_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED = re.compile(r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                        r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


def event_errors(namespace: str, obj: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for every rule `ValidateEventCreate` finds broken."""
    errors: list[tuple[str, str]] = []
    meta = obj.get("metadata") or {}
    name = meta.get("name") or ""
    if not name:
        errors.append(("metadata.name", "Required value: name or generateName is required"))
    elif len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
        errors.append(("metadata.name", f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of '
                                        "lower case alphanumeric characters, '-' or '.'"))
    regarding = obj.get("regarding") or {}
    if not regarding.get("namespace") and namespace not in ("default", "kube-system"):
        errors.append(("involvedObject.namespace", 'Invalid value: "": does not match event.namespace'))
    if not obj.get("eventTime"):
        errors.append(("eventTime", "Required value"))
    if obj.get("type") not in ("Normal", "Warning"):
        errors.append(("type", f'Invalid value: "": has invalid value: {obj.get("type") or ""}'))
    controller = obj.get("reportingController") or ""
    if not controller:
        errors.append(("reportingController", "Required value"))
    elif len(controller) > 316 or not _QUALIFIED.fullmatch(controller):
        errors.append(("reportingController", f'Invalid value: "{controller}": must be a qualified name'))
    for field, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128)):
        value = obj.get(field) or ""
        if not value:
            errors.append((field, "Required value"))
        elif len(value) > limit:
            errors.append((field, f'Invalid value: "": can have at most {limit} characters'))
    if len(obj.get("note") or "") > 1024:
        errors.append(("message", 'Invalid value: "": can have at most 1024 characters'))
    for field in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount", "deprecatedSource"):
        if obj.get(field):
            errors.append((field.removeprefix("deprecated")[:1].lower() + field.removeprefix("deprecated")[1:],
                           'Invalid value: "": needs to be unset'))
    return errors


def add_event_routes(server: FakeApiServer) -> None:
    """POST events in a namespace (the list routes come with `store.RESOURCES`)."""
    from tests.fakeapi.server import Route

    def create(req: Request) -> Response:

        obj = req.json()
        if not isinstance(obj, dict):
            raise ApiError.bad_request("the body is not an Event")
        namespace = req.params["namespace"]
        meta = obj.setdefault("metadata", {})
        if meta.setdefault("namespace", namespace) != namespace:
            raise ApiError.bad_request("the namespace of the provided object does not match the namespace sent on "
                                       "the request")
        errors = event_errors(namespace, obj)
        if errors:
            name = meta.get("name") or ""
            text = "; ".join(f"{f}: {m}" for f, m in errors)
            raise ApiError(422, "Invalid", f'Event.events.k8s.io "{name}" is invalid: '
                           + (f"[{text}]" if len(errors) > 1 else text),
                           details={"name": name, "group": "events.k8s.io", "kind": "Event",
                                    "causes": [{"reason": "FieldValueInvalid", "field": f, "message": m}
                                               for f, m in errors]})
        return server._create(EVENTS, req)

    server.routes.append(Route("POST", f"{EVENTS.prefix}/namespaces/{{namespace}}/{EVENTS.plural}", create,
                               "create", EVENTS))


def events(server: FakeApiServer, reason: str | None = None) -> list[dict[str, Any]]:
    """The Events recorded, in the order they were created (with `reason`, those only)."""
    found = [e for e in server.store.list(EVENTS) if reason is None or e.get("reason") == reason]
    return sorted(found, key=lambda e: int(e["metadata"]["resourceVersion"]))
