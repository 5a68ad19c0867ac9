"""Progress on long work: a transient status line on stderr while loading, planning and
simulating drains — on a terminal only. Nothing on a pipe, nothing under -o json|yaml, and nothing
left behind: the line is erased when the work is done.

The line's clock ticks on its own (rich redraws it several times a second): a list or a wait of a
minute shows the minute passing, not the second of the last update.

The planner stays pure: the CLI drives it pod by pod and updates the status in between.
"""

from __future__ import annotations

import os
import shutil
import threading
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

    def plain(self) -> str:
        return f"{self.text} ({elapsed_text(time.monotonic() - self.started)})"


class Progress:
    """What the CLI calls while it works; does nothing when there is no terminal to show it on."""

    def __init__(self, ticking: Ticking | None, status: Status | _PlainStatus | None = None) -> None:
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
    if ENV.colourless:
        with _PlainStatus(ENV.stderr, ticking) as plain:
            yield Progress(ticking, plain)
        return
    with ENV.err.status(ticking, spinner="dots") as status:
        yield Progress(ticking, status)


class _PlainStatus:
    """The status line without a single escape code (--no-color, NO_COLOR): drawn over itself with
    a carriage return and blanked the same way at the end, one line cut at the terminal's width, its
    clock redrawn every half second."""

    def __init__(self, stream: object, ticking: Ticking) -> None:
        self._stream = stream
        self._ticking = ticking
        self._drawn = 0
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def __enter__(self) -> _PlainStatus:
        self.update(self._ticking)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        with self._lock:
            self._write("\r" + " " * self._drawn + "\r")

    def update(self, ticking: Ticking) -> None:
        from kresched.render.safe import escape_control

        width = shutil.get_terminal_size((80, 24)).columns
        with self._lock:
            line = escape_control(ticking.plain())[:max(width - 1, 1)]
            self._write("\r" + line + " " * max(self._drawn - len(line), 0))
            self._drawn = len(line)

    def _tick(self) -> None:
        while not self._done.wait(0.5):
            self.update(self._ticking)

    def _write(self, text: str) -> None:
        self._stream.write(text)  # type: ignore[attr-defined]
        self._stream.flush()  # type: ignore[attr-defined]


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
