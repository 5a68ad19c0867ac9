"""A fake Kubernetes API server for live-path tests: real HTTP, the official client unmodified.

`FakeApiServer` (server.py) serves the objects in its `Store` (store.py) through the real REST
paths, with pagination, Status errors, a bearer token check, a 403 forbid list and scripted faults
(faults.py); it records every request. The pytest fixtures are in fixtures.py (`fake_api`,
`fake_kubeconfig`, `closed_port_url`), registered suite-wide by tests/conftest.py.
"""

from tests.fakeapi.errors import ApiError
from tests.fakeapi.faults import DROP, PASS, RESET, Fault, call, delay, status
from tests.fakeapi.server import DEFAULT_USER, FakeApiServer, RecordedRequest, Request, Response, Route
from tests.fakeapi.store import NAMESPACES, NODES, PDBS, PODS, PRIORITY_CLASSES, RESOURCES, Resource, Store

__all__ = [
    "DEFAULT_USER",
    "DROP",
    "NAMESPACES",
    "NODES",
    "PASS",
    "PDBS",
    "PODS",
    "PRIORITY_CLASSES",
    "RESET",
    "RESOURCES",
    "ApiError",
    "FakeApiServer",
    "Fault",
    "RecordedRequest",
    "Request",
    "Resource",
    "Response",
    "Route",
    "Store",
    "call",
    "delay",
    "status",
]
