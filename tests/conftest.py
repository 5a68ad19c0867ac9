"""Shared pytest configuration. Fixtures live next to what they serve (e.g. tests/fakeapi)."""

pytest_plugins = ["tests.fakeapi.fixtures"]
