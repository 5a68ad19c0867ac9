"""The architecture is part of correctness: each layer imports only those below it.

model → sources → sched → plan → execute → render → cli (design: "Architecture"). `errors` and
`retry` are shared by every layer. The planner is pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "kresched"
ORDER = ["model", "sources", "sched", "plan", "execute", "render", "cli"]
SHARED = {"errors", "retry", "__init__"}
#: Packages outside the layers: the demo data and the completion generator may use anything.
OUTSIDE = {"demo", "completions", "__main__"}
#: What lives beside the package in a checkout and is not installed with it.
CHECKOUT_ONLY = {"benchmarks", "tests", "scripts"}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "kresched" or len(parts) < 2:
        return None
    return parts[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
    return out


def _files():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        top = rel.parts[0].removesuffix(".py")
        if top in OUTSIDE or top in SHARED:
            continue
        yield pytest.param(path, top, id=str(rel))


@pytest.mark.parametrize(("path", "layer"), list(_files()))
def test_a_module_imports_only_its_own_layer_and_those_below(path: Path, layer: str) -> None:
    allowed = set(ORDER[: ORDER.index(layer) + 1]) | SHARED
    bad = [f"line {n}: {m}" for n, m in _imports(path) if (lay := _layer(m)) is not None and lay not in allowed]
    assert not bad, f"{path.relative_to(ROOT)} ({layer}) imports from a higher layer: {bad}"


def test_the_tool_never_imports_what_only_a_checkout_has() -> None:
    """The benchmark, the tests and the scripts are not in the wheel: an installed kresched that
    imported one would fail where it was never tried."""
    bad = [f"{p.relative_to(ROOT)} line {n}: {m}" for p in sorted(ROOT.rglob("*.py"))
           for n, m in _imports(p) if m.split(".")[0] in CHECKOUT_ONLY]
    assert not bad, bad


IMPURE = {"time", "datetime", "random", "socket", "os", "subprocess", "requests", "urllib3", "kubernetes",
          "threading", "signal", "pathlib", "io", "sys"}


@pytest.mark.parametrize("path", sorted((ROOT / "plan").rglob("*.py")), ids=lambda p: p.name)
def test_the_planner_is_pure_no_io_clock_or_randomness(path: Path) -> None:
    bad = [f"line {n}: {m}" for n, m in _imports(path) if m.split(".")[0] in IMPURE]
    assert not bad, f"plan/{path.name} imports {bad}"
    assert "open(" not in path.read_text(), f"plan/{path.name} opens files"


def test_only_the_execution_layer_and_sources_talk_to_the_api() -> None:
    users = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                   if p.relative_to(ROOT).parts[0] not in OUTSIDE
                   and any(m.split(".")[0] == "kubernetes" for _, m in _imports(p)))
    assert all(u.startswith(("execute/", "sources/")) for u in users), users


#: What reaching another process over the network takes.
NETWORK = {"socket", "ssl", "http", "urllib", "urllib3", "requests", "kubernetes"}


@pytest.mark.parametrize("path", sorted((ROOT / "sched").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_scheduler_simulation_opens_no_connection_extenders_are_an_injected_port(path: Path) -> None:
    """sched calls the scheduler's extenders only through `sched.extender.ExtenderTransport`, a
    port the CLI fills with `sources.extenders.HttpTransport` (sources sit below sched, so the HTTP
    half imports nothing of sched: it reads the extender's fields by name)."""
    bad = [f"line {n}: {m}" for n, m in _imports(path) if m.split(".")[0] in NETWORK]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"
