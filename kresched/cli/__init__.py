"""The `kresched` command line: one module per verb, registered on one Typer app."""

from __future__ import annotations

import typer

from kresched import __version__
from kresched.cli import drain as _drain
from kresched.cli import explain as _explain
from kresched.cli import manifests as _manifests
from kresched.cli import plan as _plan
from kresched.cli import preempt as _preempt
from kresched.cli import rebalance as _rebalance
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
) -> None:
    """An important pod is Pending: kresched says what must move so that it runs, whether that is
    safe, and can carry it out."""


app.command("plan")(_plan.plan)
app.command("preempt")(_preempt.preempt_command)
app.command("drain")(_drain.drain_command)
app.command("explain")(_explain.explain)
app.command("untaint")(_untaint.untaint_command)
app.command("rebalance")(_rebalance.rebalance_command)
app.command("reconcile")(_reconcile.reconcile_command)
app.command("snapshot")(_snapshot.snapshot)
app.command("manifests")(_manifests.manifests_command)


def main() -> None:
    app(prog_name="kresched")
