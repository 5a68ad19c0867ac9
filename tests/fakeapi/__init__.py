"""A fake Kubernetes API server for live-path tests: real HTTP, the official client unmodified.

`FakeApiServer` (server.py) serves the objects in its `Store` (store.py) through the real REST
paths, with pagination, Status errors, a bearer token check, a 403 forbid list and scripted faults
(faults.py); it records every request. Writes answer as a real server does: PATCH in three formats
(patch.py), pod DELETE and the Eviction subresource with PodDisruptionBudgets and graceful
termination (pods.py), watches (watch.py). Around it, a scheduler, a kubelet, the disruption
controller and a ReplicaSet-like controller (controllers.py) that tests step or run in the
background. The pytest fixtures are in fixtures.py (`fake_api`, `fake_kubeconfig`,
`closed_port_url`), registered suite-wide by tests/conftest.py.
"""

from tests.fakeapi.controllers import BIND, DELETE, NEVER, Controllers, Policy, Scheduler, bind_to, cluster_state
from tests.fakeapi.errors import ApiError
from tests.fakeapi.faults import DROP, PASS, RESET, Cut, Fault, call, cut, delay, status
from tests.fakeapi.pods import Clock, PodLifecycle, compute_pdb_status
from tests.fakeapi.server import DEFAULT_USER, FakeApiServer, RecordedRequest, Request, Response, Route
from tests.fakeapi.store import (
    COSCHEDULING_POD_GROUPS,
    GANGS,
    NAMESPACES,
    NODES,
    PDBS,
    POD_GROUPS,
    PODS,
    PRIORITY_CLASSES,
    RESOURCES,
    SCHEDULING_WORKLOADS,
    VOLCANO_POD_GROUPS,
    Resource,
    Store,
)

__all__ = [
    "BIND",
    "COSCHEDULING_POD_GROUPS",
    "DEFAULT_USER",
    "DELETE",
    "DROP",
    "GANGS",
    "NAMESPACES",
    "NEVER",
    "NODES",
    "PASS",
    "PDBS",
    "PODS",
    "POD_GROUPS",
    "PRIORITY_CLASSES",
    "RESET",
    "RESOURCES",
    "SCHEDULING_WORKLOADS",
    "VOLCANO_POD_GROUPS",
    "ApiError",
    "Clock",
    "Controllers",
    "Cut",
    "FakeApiServer",
    "Fault",
    "PodLifecycle",
    "Policy",
    "RecordedRequest",
    "Request",
    "Resource",
    "Response",
    "Route",
    "Scheduler",
    "Store",
    "bind_to",
    "call",
    "cluster_state",
    "compute_pdb_status",
    "cut",
    "delay",
    "status",
]
