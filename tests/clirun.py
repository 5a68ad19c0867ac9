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

__all__ = ["Result", "reset_env", "run_cli"]

#: Variables that change how rich renders (colour forced on, terminal size).
_RICH_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES", "NO_COLOR")


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(monkeypatch: pytest.MonkeyPatch, *args: str, width: int | None = None) -> Result:
    for var in _RICH_ENV:
        monkeypatch.delenv(var, raising=False)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(ENV, "stdout", out)
    monkeypatch.setattr(ENV, "stderr", err)
    monkeypatch.setattr(ENV, "no_color", False)
    reset_env()
    if width is not None:
        ENV.__dict__["out"] = Console(file=out, width=width, no_color=True, highlight=False, soft_wrap=False)
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return Result(result.exit_code, out.getvalue() + result.stdout, err.getvalue())


def reset_env() -> None:
    """Drop the cached consoles (`Env.out`/`Env.err` are cached properties)."""
    for console in ("out", "err"):
        ENV.__dict__.pop(console, None)
