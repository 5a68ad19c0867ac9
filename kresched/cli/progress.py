"""Progress on long work: a transient status line on stderr while loading, planning and
simulating drains — on a terminal only. Nothing on a pipe, nothing under -o json|yaml, and nothing
left behind: the line is erased when the work is done.

The line's clock ticks on its own (rich redraws it several times a second): a list or a wait of a
minute shows the minute passing, not the second of the last update.

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
    from rich.console import RenderableType
    from rich.status import Status

__all__ = ["Progress", "Ticking", "progress", "size_text", "elapsed_text"]


class Ticking:
    """A status text with the time since `started`, computed whenever it is drawn."""

    def __init__(self, text: str, started: float | None = None) -> None:
        self.text = text
        self.started = time.monotonic() if started is None else started

    def __rich__(self) -> RenderableType:
        from rich.markup import escape
        from rich.text import Text

        return Text.from_markup(f"{escape(self.text)} [dim]({elapsed_text(time.monotonic() - self.started)})[/]")


class Progress:
    """What the CLI calls while it works; does nothing when there is no terminal to show it on."""

    def __init__(self, ticking: Ticking | None, status: Status | None = None) -> None:
        self._ticking = ticking
        self._status = status

    @property
    def shown(self) -> bool:
        return self._ticking is not None

    def update(self, text: str) -> None:
        if self._ticking is not None:
            self._ticking.text = text
        if self._status is not None:
            self._status.update(self._ticking)  # drawn now, not at the next tick


@contextmanager
def progress(opts: Options, text: str) -> Iterator[Progress]:
    """A status line on stderr for the duration of the block, when stderr is a terminal and the
    output is a table (kubectl's `-o json` users are scripts)."""
    if not (ENV.stderr_is_tty and is_table(opts.output)) or os.environ.get("KRESCHED_NO_PROGRESS"):
        yield Progress(None)
        return
    ticking = Ticking(text)
    with ENV.err.status(ticking, spinner="dots") as status:
        yield Progress(ticking, status)


def elapsed_text(seconds: float) -> str:
    """`7s`, `1m05s`, `1h02m`: a clock that reads at a glance."""
    s = int(max(seconds, 0))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def size_text(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"
