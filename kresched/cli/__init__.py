"""The `kresched` command line: one module per verb, registered on one Typer app."""

from __future__ import annotations

import contextlib
import os
import sys

import typer

from kresched import __version__
from kresched.cli import drain as _drain
from kresched.cli import explain as _explain
from kresched.cli import manifests as _manifests
from kresched.cli import plan as _plan
from kresched.cli import preempt as _preempt
from kresched.cli import reconcile as _reconcile
from kresched.cli import snapshot as _snapshot
from kresched.cli import untaint as _untaint

app = typer.Typer(
    name="kresched",
    help="An important pod is Pending: kresched says what must move so that it runs, "
    "whether that is safe, and can carry it out.",
    no_args_is_help=True,
    # --install-completion/--show-completion, and the _KRESCHED_COMPLETE protocol the scripts in
    # completions/ (python -m kresched.completions) call back into.
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kresched {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
    max_input: str | None = typer.Option(None, "--max-input", metavar="SIZE",
                                         help="Largest snapshot input read, once decompressed (default 2Gi; "
                                              "also KRESCHED_MAX_INPUT)."),
    request_timeout: str | None = typer.Option(None, "--request-timeout", metavar="SECONDS",
                                               help="Longest wait for one API request, all of it (default 60; "
                                                    "also KRESCHED_REQUEST_TIMEOUT)."),
) -> None:
    """An important pod is Pending: kresched says what must move so that it runs, whether that is
    safe, and can carry it out."""
    if max_input is not None:
        # Read where the snapshot is read (`sources.snapshot.max_input_bytes`), checked there.
        os.environ["KRESCHED_MAX_INPUT"] = max_input
    if request_timeout is not None:
        # Read by `sources.live.connect`, checked there.
        os.environ["KRESCHED_REQUEST_TIMEOUT"] = request_timeout


app.command("plan")(_plan.plan)
app.command("preempt")(_preempt.preempt_command)
app.command("drain")(_drain.drain_command)
app.command("explain")(_explain.explain)
app.command("untaint")(_untaint.untaint_command)
app.command("reconcile")(_reconcile.reconcile_command)
app.command("snapshot")(_snapshot.snapshot)
app.command("manifests")(_manifests.manifests_command)


def main() -> None:
    try:
        app(prog_name="kresched")
    except SystemExit as exc:
        live = sys.modules.get("kresched.sources.live")
        if live is not None and live.requests_still_running():
            # A request abandoned at its deadline still blocks in a daemon thread: finalising the
            # interpreter under it can abort the process. Everything is said and flushed: leave.
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(code)
        raise
