"""What the acting commands (`preempt`, `untaint`, `drain`, `reconcile`) share: the client they
act through (the cluster, the cluster with dryRun=All, or nothing at all), the event reporter,
and the confirmation rule."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kresched.cli.common import ENV, Options, cluster_of, is_table, write_doc
from kresched.errors import InputError
from kresched.execute.api import ClusterApi, DryRunApi
from kresched.execute.events import Event, Reporter
from kresched.model.cluster import ClusterState
from kresched.render.events import Progress, event_dict, event_text, progress_text

if TYPE_CHECKING:
    from rich.console import RenderableType

    from kresched.execute.recorder import Recorder

__all__ = ["YesOpt", "DryRun", "DryRunOpt", "ClientDryRunOpt", "client_dry_run", "make_api", "make_recorder",
           "make_reporter", "live_reporting", "write_event", "write_summary", "confirm", "cluster_dict", "in_cluster"]


class DryRun(StrEnum):
    """kubectl's `--dry-run` values (a bare `--dry-run` is `client`, see `cli.normalize_args`)."""

    none = "none"
    client = "client"
    server = "server"


YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
DryRunOpt = Annotated[DryRun, typer.Option(
    "--dry-run", metavar="[none|client|server]", case_sensitive=False, show_default=False,
    help="client (or bare --dry-run): run the whole flow against nothing, print each step, change nothing; "
         "server: send every write with dryRun=All, the API server validates it without acting "
         "(also --server-dry-run).")]
ClientDryRunOpt = Annotated[DryRun, typer.Option(
    "--dry-run", metavar="[none|client]", case_sensitive=False, show_default=False,
    help="client (or bare --dry-run): run the whole flow against nothing, print each step, change nothing.")]


def client_dry_run(dry_run: DryRun, command: str) -> bool:
    """For the commands that rehearse only on the client: `--dry-run=server` is refused, never
    taken for a real run."""
    if dry_run is DryRun.server:
        raise InputError(f"{command} has no --dry-run=server (its writes are not all dry-run-able); "
                         "use --dry-run (=client)")
    return dry_run is DryRun.client


def make_api(opts: Options, state: ClusterState | None, dry_run: DryRun | bool,
             server_dry_run: bool = False) -> ClusterApi:
    """The client to act through: `--dry-run=client` acts on `state` (already loaded) and changes
    nothing; acting on a snapshot is only possible as a client dry run."""
    if isinstance(dry_run, DryRun):
        server_dry_run = dry_run is DryRun.server
        dry_run = dry_run is DryRun.client
    if dry_run:
        assert state is not None
        return DryRunApi(state)
    if opts.snapshot is not None:
        raise InputError("--snapshot is a file, not a cluster: add --dry-run (=client) to rehearse on it")
    from kresched.execute.kube import KubeApi
    from kresched.sources.connection import connect

    return KubeApi(connect(opts.kubeconfig, opts.context), server_dry_run=server_dry_run)


@contextmanager
def make_recorder(api: ClusterApi, command: str) -> Iterator[Recorder]:
    """The Kubernetes Events of what `command` does, recorded through `api` (a client dry run's
    are only noted by its client); the last ones are sent before the block ends. A cluster that
    refuses them is one warning on stderr, not a failure."""
    from kresched.execute.recorder import Recorder

    recorder = Recorder(api, command, warn=lambda text: ENV.say(f"warning: {text}"))
    try:
        yield recorder
    finally:
        recorder.close()


def write_event(opts: Options, data: dict, view: Callable[[], RenderableType]) -> None:
    """One step of a run: a document of the stream under -o json|yaml, else the readable `view()`."""
    if is_table(opts.output):
        ENV.out.print(view(), crop=False)
    else:
        write_doc(opts.output, data)


def make_reporter(opts: Options, mode: str) -> Reporter:
    """One document per event under -o json (a JSON line) or -o yaml (a YAML document); else a
    readable line. `-o` alone decides, never whether stdout is a terminal. What stays behind
    (`LEFT_BEHIND`) is also said on stderr, where people look when stdout is a file or a stream."""
    if not is_table(opts.output):
        def report(event: Event) -> None:
            write_doc(opts.output, event_dict(event, mode))
            if event.action in LEFT_BEHIND:
                ENV.say(f"warning: {event.text}")

        return report

    def show(event: Event) -> None:
        # What stays behind goes where errors go, so that `kresched ... > report.txt` still shows it.
        (ENV.err if event.action in LEFT_BEHIND else ENV.out).print(event_text(event, mode), crop=False)

    return show


#: Events saying that something kresched placed stays behind (a reservation, a cordon, the Lease),
#: each with the command that removes it.
LEFT_BEHIND = frozenset({"release-failed", "lease-release-failed", "incomplete", "interrupted"})


@contextmanager
def live_reporting(opts: Options, mode: str) -> Iterator[Reporter]:
    """`make_reporter`, plus on a terminal a live footer of what is in progress (counts, the PDBs
    pods wait for). Thread-safe: drain reports from its lanes. Nothing may prompt meanwhile."""
    if not is_table(opts.output) or not ENV.stdout_is_tty or ENV.colourless:
        # (the footer is redrawn with cursor moves: none with NO_COLOR)
        yield make_reporter(opts, mode)
        return
    from rich.live import Live

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
            live.console.print(event_text(event, mode), crop=False)

        yield report


def write_summary(opts: Options, report: Reporter, summary: dict[str, Any], view: Callable[[], RenderableType],
                  left_behind: Sequence[Event] = (), documents: Sequence[Event] = ()) -> None:
    """A run's last word. Under -o json|yaml: `documents` (events a table says in its closing line,
    such as a refusal), what stays behind (`left_behind`: each a document, and a warning on stderr),
    then the `summary` document, always the stream's last. In a table: the summary, its closing
    line last on stdout, then what stays behind on stderr, where it is seen even when stdout goes to
    a file. `view` makes the table's renderable, only for a table (rich loads only then)."""
    if is_table(opts.output):
        ENV.out.print(view(), crop=False)
        for e in left_behind:
            report(e)
        return
    for e in (*documents, *left_behind):
        report(e)
    write_doc(opts.output, {"action": "summary", **summary})


def cluster_dict(opts: Options) -> dict[str, str | None] | None:
    """A summary's `cluster`: `{"context", "server"}` of the cluster the run talks to; None for a
    snapshot."""
    cluster = cluster_of(opts)
    return cluster.as_dict() if cluster is not None else None


def in_cluster(opts: Options) -> str:
    """` in context "prod-eu" (https://10.0.0.1:6443)` for a question about a cluster; "" for a
    snapshot."""
    cluster = cluster_of(opts)
    return f" in {cluster.text()}" if cluster is not None else ""


def confirm(question: str, yes: bool) -> bool:
    """--yes, or the operator's answer on a terminal; without a terminal, refuse (exit 2)."""
    if yes:
        return True
    if not ENV.stdin_is_tty:
        raise InputError("refusing to act without confirmation: standard input is not a terminal (pass --yes)")
    return typer.confirm(question, default=False, err=True)
