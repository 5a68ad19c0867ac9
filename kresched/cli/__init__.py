"""The `kresched` command line: one module per verb, registered on one Typer app.

Owns what kubectl users expect of the whole command line, before any verb runs: options may come
anywhere on the line and are spelt as kubectl (pflag) spells them (`cli.args`), and every usage
error is one line on stderr, `error: ...`, exit 2, with a suggestion where one exists.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

import typer
import typer.core
from typer.core import TyperArgument, TyperCommand, TyperGroup

from kresched import __version__
from kresched.cli import drain as _drain
from kresched.cli import explain as _explain
from kresched.cli import help as _help
from kresched.cli import load as _load
from kresched.cli import manifests as _manifests
from kresched.cli import plan as _plan
from kresched.cli import preempt as _preempt
from kresched.cli import rebalance as _rebalance
from kresched.cli import reconcile as _reconcile
from kresched.cli import snapshot as _snapshot
from kresched.cli import untaint as _untaint
from kresched.cli import version as _version_cmd
from kresched.cli.args import BadArgument, normalize_args
from kresched.cli.common import ENV
from kresched.errors import ExitCode

__all__ = ["app", "main", "kubectl_main", "kubectl_complete_main", "normalize_args"]

# The click Typer runs on: its own vendored copy in recent releases, the click package before.
click: Any = getattr(typer.core, "_click", None) or importlib.import_module("click")


def _typer_abort() -> Any:
    """Ctrl-C at a prompt: Typer's own `Abort` where it has one (0.28+), else click's."""
    try:
        from typer.exceptions import Abort
    except ImportError:
        return getattr(click.exceptions, "Abort", KeyboardInterrupt)
    return Abort


_ABORT: Any = _typer_abort()

class KubectlGroup(TyperGroup):
    """The root command: kubectl's argument order and one-line usage errors."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] in _COMPLETION_OPTIONS:
            _completion(ctx, args)
        try:
            normal = normalize_args(args, self.commands)
        except BadArgument as exc:
            err = click.exceptions.UsageError(str(exc), ctx)
            err.command_path = f"{ctx.command_path} {exc.verb}" if exc.verb else None  # type: ignore[attr-defined]
            raise err from None
        return super().parse_args(ctx, normal)

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        for p in params:  # Typer's options, whose parsing `_completion` takes over: their help says so
            if p.name in _COMPLETION_HELP:
                p.help = _COMPLETION_HELP[p.name]
        return params

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False,
                              **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            # As `kubectl` alone: the help on stdout, and success.
            ENV.write(exc.ctx.get_help() if exc.ctx else "")
            sys.exit(int(ExitCode.OK))
        except click.exceptions.UsageError as exc:
            _stderr(f"error: {usage_message(exc)}")
            sys.exit(int(ExitCode.USAGE))
        except click.exceptions.ClickException as exc:
            _stderr(f"error: {' '.join(exc.format_message().split())}")
            sys.exit(exc.exit_code)
        except _ABORT:
            _stderr("interrupted")
            sys.exit(int(ExitCode.INTERRUPTED))
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


#: Typer's completion options, which take the shell as kubectl's `completion SHELL` does.
_COMPLETION_OPTIONS = ("--install-completion", "--show-completion")
_COMPLETION_HELP = {
    "install_completion": "Install completion for the current shell, or for SHELL (bash, zsh, fish): "
                          "--install-completion zsh.",
    "show_completion": "Show completion for the current shell, or for SHELL (bash, zsh, fish), to copy it "
                       "or customize the installation.",
}


def _completion(ctx: Any, args: list[str]) -> None:
    """`--install-completion [SHELL]` and `--show-completion [SHELL]` (Typer's take no shell: they
    detect it, and would take `zsh` for a command): the script of `cli.shells`, shown or
    installed where the docs say; exits."""
    from kresched.cli.shells import SCRIPTS, completion_script, current_shell, install

    option, rest = args[0], args[1:]
    if len(rest) > 1:
        raise click.exceptions.UsageError(f"{option} takes one shell, got {' '.join(rest)}", ctx)
    shell = rest[0] if rest else current_shell()
    if shell not in SCRIPTS:
        what = f"shell {shell!r} is not supported" if shell else "cannot tell which shell this is"
        raise click.exceptions.UsageError(f"{option}: {what}: name one of {', '.join(SCRIPTS)} "
                                          f"({option} {next(iter(SCRIPTS))})", ctx)
    if option == "--show-completion":
        ENV.write(completion_script(shell))
    else:
        try:
            lines = install(shell)
        except OSError as exc:
            _stderr(f"error: cannot install the {shell} completion: {exc.strerror or exc}: {exc.filename or ''}")
            ctx.exit(int(ExitCode.ERROR))
        for line in lines:
            ENV.write(line)
    ctx.exit(int(ExitCode.OK))


def _stderr(line: str) -> None:
    ENV.stderr.write(line + "\n")
    ENV.stderr.flush()


def usage_message(exc: Any) -> str:
    """click's message on one line, in kubectl's words where it has some, with the suggestion and
    where to read more."""
    if isinstance(exc, click.exceptions.NoSuchOption):
        text = f"unknown flag: {exc.option_name}"
        if exc.possibilities:
            close = difflib.get_close_matches(exc.option_name, list(exc.possibilities), n=3, cutoff=0.5) \
                or sorted(exc.possibilities)[:3]
            text += f"; did you mean {' or '.join(close)}?"
    else:
        text = " ".join(exc.format_message().split())
        if text.startswith("No such command"):
            text = "unknown command" + text.removeprefix("No such command").replace(". Did you mean", "; did you mean")
        text = text[:1].lower() + text[1:]
    ctx = exc.ctx
    path = getattr(exc, "command_path", None) or (ctx.command_path if ctx is not None else "kresched")
    return f"{text} (see '{path} --help')"


class KubectlCommand(TyperCommand):
    """A verb whose help reads as kubectl's: arguments by their name only, no `<list[str]>`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperArgument):
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]


app = typer.Typer(
    name="kresched",
    cls=KubectlGroup,
    help="An important pod is Pending: kresched says what must move so that it runs, "
    "whether that is safe, and can carry it out.",
    no_args_is_help=True,
    # --install-completion/--show-completion, and the _KRESCHED_COMPLETE protocol the scripts in
    # completions/ (python -m kresched.completions) call back into.
    add_completion=True,
    pretty_exceptions_enable=False,
    # Plain help, as kubectl's: no boxes, no `<bool>` type noise; `\b` keeps example blocks as written.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kresched {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
    max_input: str | None = typer.Option(None, "--max-input", metavar="SIZE",
                                         help="Largest snapshot input read, once decompressed (default: half "
                                              "the memory, at least 2Gi; also KRESCHED_MAX_INPUT)."),
    request_timeout: str | None = typer.Option(None, "--request-timeout", metavar="SECONDS",
                                               help="Longest wait for one API request, all of it (default 60; "
                                                    "also KRESCHED_REQUEST_TIMEOUT)."),
) -> None:
    """An important pod is Pending: kresched says what must move so that it runs, whether that is
    safe, and can carry it out.

    Common options (--snapshot, --kubeconfig, --context, -n, -A, -o, --no-color) may come before or
    after the command, as with kubectl. Also runs as a kubectl plugin: `kubectl kresched ...`.
    """
    # Read where the snapshot is read (`sources.snapshot.max_input_bytes`) and by `sources.connection.connect`,
    # and checked there; set for this command only (a test running several in one process sees none
    # of another's).
    for name, value in (("KRESCHED_MAX_INPUT", max_input), ("KRESCHED_REQUEST_TIMEOUT", request_timeout)):
        if value is not None:
            ctx.call_on_close(functools.partial(_restore_env, name, os.environ.get(name)))
            os.environ[name] = value


def _restore_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


#: Each verb's line in `kresched --help`: written to fit 80 columns, never cut (click would cut
#: the docstring's first sentence at 45 characters).
_COMMANDS = (
    ("plan", _plan.plan, "Dry run: which node, which victims, where they land"),
    ("preempt", _preempt.preempt_command, "Carry a plan out: reserve, evict, wait for the binding"),
    ("drain", _drain.drain_command, "Drain nodes, with a pre-flight of where every pod lands"),
    ("explain", _explain.explain, "Why a pod is Pending, per node and filter"),
    ("untaint", _untaint.untaint_command, "Remove the reservations kresched left behind"),
    ("rebalance", _rebalance.rebalance_command, "Move running pods where the scheduler now puts them better"),
    ("reconcile", _reconcile.reconcile_command, "One pass of the critical-pod rescheduler (a CronJob)"),
    ("snapshot", _snapshot.snapshot, "Capture the cluster state a plan needs into one file"),
    ("manifests", _manifests.manifests_command, "Print the RBAC and CronJob that run reconcile"),
    ("version", _version_cmd.version_command, "Print the version"),
    ("help", _help.help_command, "Help about any command"),
)
for _name, _fn, _short in _COMMANDS:
    app.command(_name, cls=KubectlCommand, short_help=_short)(_fn)


def main() -> None:
    _run("kresched")


def kubectl_main() -> None:
    """`kubectl kresched ...`: kubectl runs the `kubectl-kresched` executable on PATH."""
    _run("kubectl kresched")


#: The cyclic GC's thresholds for a run (CPython's default is 700, 10, 10). Loading and planning
#: run with the collector paused and what they built frozen (`sources.decode.paused_gc`: they
#: make no cycles); these thresholds are for the rest (rendering, acting, waiting on the API
#: server), which allocates many short-lived objects and few cycles, next to a large long-lived
#: heap: with the defaults, collections were a fifth of a queue's plan on a 5k-node cluster.
GC_THRESHOLDS = (50_000, 10, 100)


def _run(prog_name: str) -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    _load.KEEP_LOADED = []
    ENV.prog = prog_name
    try:
        app(prog_name=prog_name)
    except SystemExit as exc:
        if not isinstance(exc.code, (int, type(None))):
            raise  # a message for the interpreter to print
        code = exc.code or 0
        flushed = True
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # said by the interpreter's own exit, as ever
                flushed = False
        live = sys.modules.get("kresched.sources.calls")
        # Everything is said and flushed: leave, without the interpreter's teardown of what was
        # loaded (`load.KEEP_LOADED`). And a request abandoned at its deadline may still block
        # in a daemon thread: finalising the interpreter under it can abort the process.
        if flushed or (live is not None and live.requests_still_running()):
            os._exit(code)
        raise


def kubectl_complete_main(argv: Sequence[str] | None = None) -> None:
    """`kubectl kresched <TAB>` (kubectl 1.26+): kubectl runs `kubectl_complete-kresched ARGS... WORD`
    and reads one candidate per line, then cobra's `:DIRECTIVE` line (4: no file completion). The
    candidates are those of kresched's own shell completion."""
    import io

    from kresched.cli.shells import environment

    words = list(sys.argv[1:] if argv is None else argv) or [""]
    env = {"_KRESCHED_COMPLETE": "complete_bash", "COMP_WORDS": " ".join(["kresched", *words]),
           "COMP_CWORD": str(len(words))}
    out = io.StringIO()
    with environment(**env), contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        app(args=[], prog_name="kresched")
    for line in out.getvalue().splitlines():
        if line:
            print(line)
    print(":4")
