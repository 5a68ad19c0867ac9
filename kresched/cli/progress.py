"""Progress on long work: a transient status line on stderr while loading, planning and
simulating drains — on a terminal only. Nothing on a pipe, nothing under -o json|yaml, and nothing
left behind: the line is erased when the work is done.

The planner stays pure: the CLI drives it pod by pod and updates the status in between.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from kresched.cli.common import ENV, Options, is_table

if TYPE_CHECKING:
    from rich.status import Status

__all__ = ["Progress", "progress", "size_text"]


class Progress:
    """What the CLI calls while it works; does nothing when there is no terminal to show it on."""

    def __init__(self, status: Status | None) -> None:
        self._status = status
        self._started = time.monotonic()

    @property
    def shown(self) -> bool:
        return self._status is not None

    def update(self, text: str) -> None:
        if self._status is not None:
            self._status.update(f"{text} [dim]({time.monotonic() - self._started:.0f}s)[/]")


@contextmanager
def progress(opts: Options, text: str) -> Iterator[Progress]:
    """A status line on stderr for the duration of the block, when stderr is a terminal and the
    output is a table (kubectl's `-o json` users are scripts)."""
    if not (ENV.stderr_is_tty and is_table(opts.output)) or os.environ.get("KRESCHED_NO_PROGRESS"):
        yield Progress(None)
        return
    with ENV.err.status(text, spinner="dots") as status:
        p = Progress(status)
        p.update(text)
        yield p


def size_text(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"
