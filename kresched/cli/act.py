"""What the acting commands (`preempt`, `untaint`, `drain`, `reconcile`) share: the client they
act through (the cluster, the cluster with dryRun=All, or nothing at all), the event reporter,
and the confirmation rule."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import msgspec
import typer
from rich.console import RenderableType
from rich.live import Live

from kresched.cli.common import ENV, Options, Output
from kresched.errors import InputError
from kresched.execute.api import ClusterApi, DryRunApi
from kresched.execute.events import Event, Reporter
from kresched.model.cluster import ClusterState
from kresched.render.events import Progress, event_dict, event_text, progress_text

__all__ = ["YesOpt", "DryRunOpt", "ServerDryRunOpt", "make_api", "make_reporter", "live_reporting", "json_lines",
           "write_json_line", "confirm"]

YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Run the whole flow against nothing: print each step, "
                                                           "change nothing.")]
ServerDryRunOpt = Annotated[bool, typer.Option("--server-dry-run", help="Send every write with dryRun=All: the API "
                                                                        "server validates it without acting.")]


def make_api(opts: Options, state: ClusterState | None, dry_run: bool, server_dry_run: bool) -> ClusterApi:
    """The client to act through: `--dry-run` acts on `state` (already loaded) and changes nothing;
    acting on a snapshot is only possible as a dry run."""
    if dry_run and server_dry_run:
        raise InputError("--dry-run and --server-dry-run are exclusive")
    if dry_run:
        assert state is not None
        return DryRunApi(state)
    if opts.snapshot is not None:
        raise InputError("--snapshot is a file, not a cluster: add --dry-run to rehearse on it")
    from kresched.execute.kube import KubeApi
    from kresched.sources.live import connect

    return KubeApi(connect(opts.kubeconfig, opts.context), server_dry_run=server_dry_run)


def json_lines(opts: Options) -> bool:
    return opts.output is Output.json or not ENV.stdout_is_tty


def write_json_line(data: dict) -> None:
    ENV.write(msgspec.json.encode(data).decode())


def make_reporter(opts: Options, mode: str) -> Reporter:
    """One JSON object per line under -o json or when stdout is not a terminal; else coloured lines."""
    if json_lines(opts):
        def report(event: Event) -> None:
            write_json_line(event_dict(event, mode))
            if event.action in LEFT_BEHIND:
                # stdout is a machine stream here: what stays behind is also said where people look.
                ENV.err.print(f"warning: {event.text}", markup=False, highlight=False, emoji=False, soft_wrap=True)

        return report

    def show(event: Event) -> None:
        # What stays behind goes where errors go, so that `kresched ... > report.txt` still shows it.
        (ENV.err if event.action in LEFT_BEHIND else ENV.out).print(event_text(event, mode))

    return show


#: Events saying that something kresched placed stays behind (a reservation, a cordon, the Lease),
#: each with the command that removes it.
LEFT_BEHIND = frozenset({"release-failed", "lease-release-failed", "incomplete", "interrupted"})


@contextmanager
def live_reporting(opts: Options, mode: str) -> Iterator[Reporter]:
    """`make_reporter`, plus on a terminal a live footer of what is in progress (counts, the PDBs
    pods wait for). Thread-safe: drain reports from its lanes. Nothing may prompt meanwhile."""
    if json_lines(opts):
        yield make_reporter(opts, mode)
        return
    progress = Progress(time.monotonic())
    lock = threading.Lock()

    class Footer:  # drawn by Live several times a second, so its clock runs between events
        def __rich__(self) -> RenderableType:
            with lock:
                return progress_text(progress, time.monotonic())

    with Live(Footer(), console=ENV.out, refresh_per_second=4, transient=True) as live:

        def report(event: Event) -> None:
            with lock:
                progress.update(event)
            live.console.print(event_text(event, mode))

        yield report


def confirm(question: str, yes: bool) -> bool:
    """--yes, or the operator's answer on a terminal; without a terminal, refuse (exit 2)."""
    if yes:
        return True
    if not ENV.stdin_is_tty:
        raise InputError("refusing to act without confirmation: standard input is not a terminal (pass --yes)")
    return typer.confirm(question, default=False, err=True)
