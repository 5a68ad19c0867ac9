"""What every subcommand shares: the common options, the environment (consoles that escape
control characters in names from the cluster), loading the cluster state from the one source
chosen, parsing durations, and the single place that turns exceptions into exit codes and
libraries' warnings into kresched's own words.

Nothing below the CLI sees Typer: options become a frozen `Options` here.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.segment import Segment

from kresched.errors import ExitCode, InputError, KreschedError
from kresched.model.cluster import ClusterState

__all__ = [
    "emit",
    "Output",
    "Options",
    "Env",
    "SnapshotOpt",
    "KubeconfigOpt",
    "ContextOpt",
    "OutputOpt",
    "NoColorOpt",
    "make_options",
    "load_state",
    "parse_duration",
    "command",
]


class Output(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


SnapshotOpt = Annotated[
    str | None,
    typer.Option("--snapshot", "-f", metavar="PATH",
                 help="Read cluster state from a file, a directory, '-' (stdin) or 'demo' instead of the cluster."),
]
KubeconfigOpt = Annotated[
    str | None, typer.Option("--kubeconfig", metavar="FILE", help="Path to the kubeconfig file.",
                             envvar="KUBECONFIG", show_envvar=False)
]
ContextOpt = Annotated[str | None, typer.Option("--context", metavar="NAME", help="The kubeconfig context to use.")]
OutputOpt = Annotated[Output, typer.Option("--output", "-o", help="Output format.", case_sensitive=False)]
NoColorOpt = Annotated[bool, typer.Option("--no-color", help="Disable colours (also: NO_COLOR=1).")]


@dataclass(frozen=True)
class Options:
    """The common options, validated; what the layers below the CLI are given."""

    snapshot: str | None = None
    kubeconfig: str | None = None
    context: str | None = None
    output: Output = Output.table
    no_color: bool = False


def _control_table() -> dict[int, str]:
    table = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c not in (0x09, 0x0A)}
    # Bidirectional overrides and isolates reorder what the terminal shows (a name that reads
    # backwards): shown as escapes too.
    table.update({c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})
    return table


_CONTROL = _control_table()


def escape_control(text: str) -> str:
    """Control characters (ESC, BEL, CR, ...), C1 controls and bidi overrides as `\\xNN` escapes:
    names come from the cluster, and `ESC]0;...` in a pod name would retitle the terminal."""
    return text.translate(_CONTROL)


class SafeConsole(Console):
    """A rich Console that never writes a control character it did not produce itself.

    Strings are escaped before layout (so tables keep their widths); whatever reaches the output
    some other way (a `Text` built elsewhere) is escaped segment by segment on the way out —
    rich's own styles, links and cursor moves are not text segments and are left alone."""

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Any:
        return super().render_str(escape_control(text), *args, **kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control else Segment(escape_control(seg.text), seg.style, seg.control) for seg in buffer)


@dataclass
class Env:
    """Where output goes. Tests build one around string buffers; `main` uses the real streams."""

    stdout: Any = field(default_factory=lambda: sys.stdout)
    stderr: Any = field(default_factory=lambda: sys.stderr)
    stdin: Any = field(default_factory=lambda: sys.stdin)
    no_color: bool = False

    @functools.cached_property
    def out(self) -> Console:
        return SafeConsole(file=self.stdout, no_color=self._no_color, highlight=False, soft_wrap=False,
                           width=None if self.stdout_is_tty else 120)

    @functools.cached_property
    def err(self) -> Console:
        return SafeConsole(file=self.stderr, no_color=self._no_color, highlight=False, stderr=True)

    @property
    def _no_color(self) -> bool:
        return self.no_color or bool(os.environ.get("NO_COLOR"))

    @property
    def stdout_is_tty(self) -> bool:
        return bool(getattr(self.stdout, "isatty", lambda: False)())

    @property
    def stdin_is_tty(self) -> bool:
        return bool(getattr(self.stdin, "isatty", lambda: False)())

    def write(self, text: str) -> None:
        """Plain text to stdout (JSON, YAML): no rich markup, no wrapping."""
        self.stdout.write(text if text.endswith("\n") else text + "\n")
        self.stdout.flush()


#: The environment of the running command; `main()` and the tests set it.
ENV = Env()


def make_options(snapshot: str | None, kubeconfig: str | None, context: str | None,
                 output: Output, no_color: bool) -> Options:
    if snapshot is not None and context is not None:
        raise InputError("--snapshot and --context are exclusive: read state from one source")
    ENV.no_color = ENV.no_color or no_color
    return Options(snapshot, kubeconfig, context, output, no_color)


def load_state(opts: Options) -> ClusterState:
    """The cluster state from the snapshot, or from the live cluster."""
    if opts.snapshot is not None:
        from kresched.sources.snapshot import load_snapshot

        stdin = getattr(ENV.stdin, "buffer", ENV.stdin)
        return load_snapshot(opts.snapshot, stdin=stdin)
    from kresched.sources.live import connect, load_live

    return load_live(connect(opts.kubeconfig, opts.context))


_DURATION = re.compile(r"(?:[0-9]+(?:\.[0-9]+)?(?:ms|h|m|s))+")
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|h|m|s)")
_SECONDS_PER_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str, option: str) -> float:
    """Seconds from `90` (plain seconds), `90s`, `5m`, `1h`, `1h30m`, `500ms`, `1.5h`.

    As Go's `time.ParseDuration` for non-negative durations with the units h, m, s and ms, plus a
    bare number of seconds. Anything else is an `InputError` naming the option.
    """
    value = text.strip()
    if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", value):
        return float(value)
    if _DURATION.fullmatch(value):
        return sum(float(n) * _SECONDS_PER_UNIT[unit] for n, unit in _DURATION_PART.findall(value))
    raise InputError(f"{option}: invalid duration {text!r} (use e.g. 90, 90s, 5m, 1h30m, 500ms)")


F = TypeVar("F", bound=Callable[..., Any])


def command(fn: F) -> F:
    """Run a command body with the one mapping from exceptions to exit codes (cf. httpie's core)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with _own_warnings():
                code = fn(*args, **kwargs)
        except KreschedError as exc:
            # One line, whatever the message holds: scripts and log lines read errors line by line.
            ENV.err.print(f"error: {_one_line(exc.message)}", markup=False, highlight=False, emoji=False,
                          soft_wrap=True)
            raise typer.Exit(int(exc.exit_code)) from None
        except KeyboardInterrupt:
            ENV.err.print("interrupted", markup=False)
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
        except BrokenPipeError:
            raise typer.Exit(int(ExitCode.OK)) from None
        except OSError as exc:
            if exc.errno not in _OUTPUT_FULL:
                raise
            # stdout on a full disk: say so once, and keep the interpreter's final flush quiet.
            _silence_stdout()
            ENV.err.print(f"error: cannot write the output: {exc.strerror}", markup=False, highlight=False,
                          emoji=False, soft_wrap=True)
            raise typer.Exit(int(ExitCode.ERROR)) from None
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as exc:
            if os.environ.get("KRESCHED_TRACEBACK"):
                raise
            ENV.err.print(f"error: unexpected {type(exc).__name__}: {_one_line(str(exc))} "
                          "(set KRESCHED_TRACEBACK=1 for details)", markup=False, highlight=False, emoji=False,
                          soft_wrap=True)
            raise typer.Exit(int(ExitCode.ERROR)) from None
        if code:
            raise typer.Exit(int(code))
        return None

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def _own_warnings() -> Iterator[None]:
    """Libraries' warnings in kresched's words: urllib3's `InsecureRequestWarning` on every request
    to a server whose kubeconfig says `insecure-skip-tls-verify` is dropped (kubectl says nothing
    either: the operator chose it); any other warning is one `warning: ...` line, once."""
    shown: set[str] = set()

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        text = _one_line(str(message))
        if text not in shown:
            shown.add(text)
            ENV.err.print(f"warning: {text}", markup=False, highlight=False, emoji=False, soft_wrap=True)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.filterwarnings("ignore", category=_insecure_request_warning())
        warnings.showwarning = show
        yield


def _insecure_request_warning() -> type[Warning]:
    try:
        from urllib3.exceptions import InsecureRequestWarning
    except ImportError:  # pragma: no cover - urllib3 comes with the kubernetes client
        return UserWarning
    return InsecureRequestWarning


_OUTPUT_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _one_line(text: str) -> str:
    return " ".join(text.split())


def emit(output: Output, data: Any, view: Callable[[], Any]) -> None:
    """The result as JSON or YAML (`data`, the contract), or as the readable `view()` for a table."""
    from kresched.render.common import to_json, to_yaml

    if output is Output.json:
        ENV.write(to_json(data))
    elif output is Output.yaml:
        ENV.write(to_yaml(data))
    else:
        ENV.out.print(view())
