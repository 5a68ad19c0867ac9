"""Running `kresched ...` in-process with the output captured, for the CLI tests.

The command writes through `kresched.cli.common.ENV`; `run_cli` points it at string buffers, as
`main()` points it at the real streams, and builds the consoles afresh around them: 120 columns
without colour (what a pipe gets), or a wider console when a test reads table cells.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest
from rich.console import Console
from typer.testing import CliRunner

from kresched.cli import app
from kresched.cli.common import ENV

__all__ = ["DURATION", "Result", "documents", "drained", "reset_env", "run_cli"]

#: How long a run took, in every form `kresched.render.common.duration_text` writes it (`0.0s`,
#: `10.5s`, `2m03s`, `1h02m`): a test matches it, never compares it (a slow machine takes longer).
DURATION = r"(?:[0-9]+\.[0-9]s|[0-9]+m[0-9]{2}s|[0-9]+h[0-9]{2}m)"

#: Variables that change how rich renders (colour forced on, terminal size).
_RICH_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES", "NO_COLOR")


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(monkeypatch: pytest.MonkeyPatch, *args: str, width: int | None = None,
            env: dict[str, str] | None = None, tty: bool = False, stderr_tty: bool = False) -> Result:
    """`env` sets variables after the rich ones are cleared (e.g. COLUMNS, NO_COLOR); `tty` and
    `stderr_tty` make stdout/stderr look like a terminal, as `main()` sees one."""
    for var in _RICH_ENV:
        monkeypatch.delenv(var, raising=False)
    for var, value in (env or {}).items():
        monkeypatch.setenv(var, value)
    out, err = (_Terminal() if tty else io.StringIO()), (_Terminal() if stderr_tty else io.StringIO())
    monkeypatch.setattr(ENV, "stdout", out)
    monkeypatch.setattr(ENV, "stderr", err)
    monkeypatch.setattr(ENV, "no_color", False)
    monkeypatch.setattr(ENV, "docs", 0)
    reset_env()
    if width is not None:
        ENV.__dict__["out"] = Console(file=out, width=width, no_color=True, highlight=False, soft_wrap=False)
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return Result(result.exit_code, out.getvalue() + result.stdout, err.getvalue())


def documents(stdout: str) -> list[dict]:
    """The documents of a stream under -o json: one JSON object a line."""
    import json

    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def drained(stdout: str, node: str | None = None) -> dict:
    """One node's object in the pre-flight of `drain -o json` (`{"action": "preflight", "nodes":
    [...]}`, the stream's first document): `node`'s, or the only one's."""
    (preflight,) = [d for d in documents(stdout) if d["action"] == "preflight"]
    nodes = preflight["nodes"]
    if node is None:
        (one,) = nodes
        return one
    return next(n for n in nodes if n["node"] == node)


class _Terminal(io.StringIO):
    """A captured stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def reset_env() -> None:
    """Drop the cached consoles (`Env.out`/`Env.err` are cached properties)."""
    for console in ("out", "err"):
        ENV.__dict__.pop(console, None)
