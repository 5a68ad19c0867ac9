"""Pytest fixtures for the fake API server; registered for the whole suite in tests/conftest.py.

    def test_something(fake_api, fake_kubeconfig):
        fake_api.load(make_state(...))             # seed (ClusterState, model objects, dicts, files)
        fake_api.faults.script([500], path="/api/v1/pods")
        ... kresched code with --kubeconfig fake_kubeconfig ...
        assert fake_api.calls("/api/v1/pods")
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeapi.server import FakeApiServer


@pytest.fixture
def fake_api() -> Iterator[FakeApiServer]:
    """A started, empty fake API server on 127.0.0.1 (token `fake-token`, context `fake`). A test
    whose background controllers failed fails too."""
    with FakeApiServer() as server:
        yield server
    assert not server.controllers.errors, f"the fake's controllers failed: {server.controllers.errors!r}"


@pytest.fixture
def fake_kubeconfig(fake_api: FakeApiServer, tmp_path: Path) -> Path:
    """A kubeconfig file for `fake_api` whose current context is `fake_api.context`."""
    return fake_api.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def closed_port_url() -> str:
    """`http://127.0.0.1:PORT` where nothing listens (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
