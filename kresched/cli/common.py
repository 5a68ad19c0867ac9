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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from kresched.cli.complete import complete_namespaces
from kresched.cli.kubecontext import KubeContext, kube_context
from kresched.errors import ExitCode, InputError, KreschedError
from kresched.render.safe import escape_control

if TYPE_CHECKING:
    from rich.console import Console

    from kresched.plan.policy import Policy
    from kresched.sched.config.types import Extender
    from kresched.sched.profile import Profiles

__all__ = [
    "emit",
    "write_doc",
    "is_table",
    "at_least",
    "Output",
    "Options",
    "Env",
    "SnapshotOpt",
    "KubeconfigOpt",
    "ContextOpt",
    "OutputOpt",
    "NoColorOpt",
    "NamespaceOpt",
    "ReadOnlyDryRunOpt",
    "read_only_dry_run",
    "AllNamespacesOpt",
    "default_namespace",
    "KubeContext",
    "kube_context",
    "cluster_of",
    "make_options",
    "load_profiles",
    "SchedulerConfigOpt",
    "FeatureGatesOpt",
    "OtherSchedulersOpt",
    "ConfigOpt",
    "load_policy",
    "parse_duration",
    "command",
]


class Output(StrEnum):
    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"


SnapshotOpt = Annotated[
    str | None,
    typer.Option("--snapshot", metavar="PATH",
                 help="Read cluster state from a file, a directory, '-' (stdin) or 'demo' instead of the cluster. "
                      "(Its short form was -f, which is now kubectl's: the manifests of plan and preempt.)"),
]
KubeconfigOpt = Annotated[
    str | None, typer.Option("--kubeconfig", metavar="FILE", help="Path to the kubeconfig file.",
                             envvar="KUBECONFIG", show_envvar=False)
]
ContextOpt = Annotated[str | None, typer.Option("--context", metavar="NAME", help="The kubeconfig context to use.")]
OutputOpt = Annotated[Output, typer.Option("--output", "-o", metavar="FORMAT", case_sensitive=False,
                                           help="table (the default), wide (more columns), json or yaml.",
                                           show_default=False)]
NoColorOpt = Annotated[bool, typer.Option("--no-color", help="No colours (colour is only ever used on a terminal; "
                                                             "NO_COLOR=1 also turns it off).")]
NamespaceOpt = Annotated[str | None, typer.Option("--namespace", "-n", metavar="NAMESPACE",
                                                  autocompletion=complete_namespaces,
                                                  help="The pod's namespace (default: the kubeconfig context's, "
                                                       "'default' for a snapshot).", show_default=False)]
#: `--dry-run` on a verb that never writes (hidden: it changes nothing): a note says so, rather than an
#: unknown flag for a kubectl habit.
ReadOnlyDryRunOpt = Annotated[str | None, typer.Option("--dry-run", hidden=True, show_default=False)]
AllNamespacesOpt = Annotated[bool, typer.Option("--all-namespaces", "-A",
                                                help="Pods in every namespace (the default without -n).")]
SchedulerConfigOpt = Annotated[str | None, typer.Option(
    "--scheduler-config", metavar="FILE", envvar="KRESCHED_SCHEDULER_CONFIG", show_envvar=False,
    help="The cluster's KubeSchedulerConfiguration (kube-scheduler's --config file, or a ConfigMap holding it): "
         "simulate its profiles instead of the default one (also KRESCHED_SCHEDULER_CONFIG).")]
ConfigOpt = Annotated[str | None, typer.Option(
    "--config", metavar="FILE", envvar="KRESCHED_CONFIG", show_envvar=False,
    help="kresched's own KreschedConfiguration (kresched.io/v1alpha1; or a ConfigMap holding it): which policies "
         "run, their thresholds and budgets, the aggressiveness preset; flags override it (also KRESCHED_CONFIG).")]
FeatureGatesOpt = Annotated[str | None, typer.Option(
    "--feature-gates", metavar="A=true,B=false", envvar="KRESCHED_FEATURE_GATES", show_envvar=False,
    help="The cluster scheduler's --feature-gates (the configuration file has no field for them), e.g. "
         "GenericWorkload=true,GangScheduling=true: simulate v1.36's gang scheduling where it is on "
         "(also KRESCHED_FEATURE_GATES).")]
OtherSchedulersOpt = Annotated[bool, typer.Option(
    "--simulate-other-schedulers",
    help="Simulate pods whose schedulerName no profile names with the default-scheduler profile (without it, "
         "kresched leaves them to their own scheduler).")]


@dataclass(frozen=True)
class Options:
    """The common options, validated; what the layers below the CLI are given."""

    snapshot: str | None = None
    kubeconfig: str | None = None
    context: str | None = None
    output: Output = Output.table
    no_color: bool = False
    #: -n as typed (None: the context's namespace, see `default_namespace`).
    namespace: str | None = None
    all_namespaces: bool = False

    @property
    def source(self) -> str:
        """Where the state came from, for messages."""
        return "the snapshot" if self.snapshot == "demo" else (self.snapshot or "the cluster")

    @property
    def source_args(self) -> str:
        """The options that name the same source again, for a command kresched suggests:
        `--snapshot demo`, `--context prod --kubeconfig ~/k`."""
        import shlex

        if self.snapshot is not None:
            return f"--snapshot {shlex.quote(self.snapshot)}"
        kubeconfig = None if self.kubeconfig == os.environ.get("KUBECONFIG") else self.kubeconfig  # set for all
        return " ".join(f"{flag} {shlex.quote(value)}" for flag, value in
                        (("--context", self.context), ("--kubeconfig", kubeconfig)) if value)


@dataclass
class Env:
    """Where output goes. Tests build one around string buffers; `main` uses the real streams."""

    stdout: Any = field(default_factory=lambda: sys.stdout)
    stderr: Any = field(default_factory=lambda: sys.stderr)
    stdin: Any = field(default_factory=lambda: sys.stdin)
    no_color: bool = False

    #: Documents written by `write_doc` so far (YAML streams put `---` between them).
    docs: int = 0
    #: How the operator runs kresched (`kubectl kresched` as a plugin), for the commands it suggests.
    prog: str = "kresched"

    @functools.cached_property
    def out(self) -> Console:
        from kresched.cli.console import SafeConsole

        # kubectl's rule: the width follows the terminal; a pipe is never cut (COLUMNS still wins,
        # for the scripts that set it). Colour only on a terminal — rich decides that from isatty.
        width = None if self.stdout_is_tty else _columns() or PIPE_WIDTH
        # --no-color/NO_COLOR: no escape codes at all (rich alone would still print bold and italics).
        return SafeConsole(file=self.stdout, no_color=self._no_color, highlight=False, soft_wrap=False, width=width,
                           force_terminal=self.stdout_is_tty or None,
                           **({"color_system": None} if self._no_color else {}))

    @functools.cached_property
    def err(self) -> Console:
        from kresched.cli.console import SafeConsole

        tty = bool(getattr(self.stderr, "isatty", lambda: False)())
        # As `out`: --no-color/NO_COLOR (https://no-color.org) means no escape codes that style text,
        # not even the status line's dim clock (rich's no_color alone keeps bold and dim).
        return SafeConsole(file=self.stderr, no_color=self._no_color, highlight=False, stderr=True,
                           width=None if tty else _columns() or PIPE_WIDTH,
                           **({"color_system": None} if self._no_color else {}))

    def say(self, line: str) -> None:
        """One plain line on stderr (an error, a warning, a note): what `err.print(line,
        markup=False, highlight=False, emoji=False, soft_wrap=True)` writes, control characters
        escaped and tabs expanded, without loading rich for it."""
        self.stderr.write(escape_control(line).expandtabs(8) + "\n")
        self.stderr.flush()

    @property
    def stderr_is_tty(self) -> bool:
        return bool(getattr(self.stderr, "isatty", lambda: False)())

    @property
    def _no_color(self) -> bool:
        return self.no_color or bool(os.environ.get("NO_COLOR"))

    @property
    def colourless(self) -> bool:
        """--no-color or NO_COLOR (https://no-color.org): no escape codes at all, not even the
        cursor moves of a transient status line (`cli.progress` draws it with carriage returns)."""
        return self._no_color

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


#: Width of output on a pipe without COLUMNS: in effect unlimited, so nothing is cut or wrapped.
PIPE_WIDTH = 10_000


def _columns() -> int | None:
    try:
        value = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return value if value > 0 else None


#: The environment of the running command; `main()` and the tests set it.
ENV = Env()


def read_only_dry_run(value: str | None, verb: str) -> None:
    """`--dry-run[=client|server|none]` given to `verb`, which changes nothing anyway: a note on
    stderr; another value is kubectl's error for it."""
    if value is None:
        return
    if value not in ("none", "client", "server"):
        raise InputError(f'invalid dry-run value ({value}): must be "none", "server", or "client"')
    if value != "none":
        ENV.say(f"note: {verb} never changes anything (it is a dry run already): --dry-run is not needed")


def make_options(snapshot: str | None, kubeconfig: str | None, context: str | None,
                 output: Output, no_color: bool, namespace: str | None = None,
                 all_namespaces: bool = False) -> Options:
    if snapshot is not None and context is not None:
        raise InputError("--snapshot and --context are exclusive: read state from one source")
    if namespace is not None and all_namespaces:
        raise InputError("-n/--namespace and -A/--all-namespaces are exclusive")
    ENV.no_color = ENV.no_color or no_color
    ENV.docs = 0  # a new command, a new stream
    from kresched.sources import served

    served.record_into(None)  # a new command keeps no served objects unless it calls extenders (`load_profiles`)
    return Options(snapshot, kubeconfig, context, output, no_color, namespace, all_namespaces)


def simulation_args(scheduler_config: str | None, simulate_other: bool, feature_gates: str | None) -> str:
    """The options that simulate the same scheduler again, for a command kresched suggests: a plan
    made under `--scheduler-config` is carried out under it too."""
    import shlex

    return " ".join([f"--scheduler-config {shlex.quote(scheduler_config)}"] * bool(scheduler_config)
                    + [f"--feature-gates {shlex.quote(feature_gates)}"] * bool(feature_gates)
                    + ["--simulate-other-schedulers"] * simulate_other)


def load_profiles(path: str | None, simulate_other: bool = False, offline: bool | None = None,
                  feature_gates: str | None = None) -> Profiles:
    """The scheduler profiles to simulate: those of `--scheduler-config`'s file, read and validated
    as kube-scheduler reads its `--config` (a bad file is one `error:` line, exit 2, before
    anything is loaded or touched), else the v1.36 default profile. `simulate_other`: pods of a
    scheduler no profile names are simulated by the default-scheduler profile.

    The file's extenders are called over HTTP (`sources.extenders`) by a command that simulates
    (`offline` given): against a live cluster as the scheduler calls them, an unreachable one
    being an error for the pod (or skipped when ignorable); offline (`--snapshot`) only those
    whose address answers now, the others keeping the warning that kresched does not call them.
    While some extender is called, the Pods and Nodes loaded from then on are kept as served too
    (`sources.served`): extenders are sent the full objects; otherwise nothing more is kept."""
    from kresched.sched.profile import Profiles, build_profiles
    from kresched.sources import served

    served.record_into(None)
    if not path:
        profiles = Profiles.default()
    else:
        from kresched.sched.config import parse_scheduler_config
        from kresched.sources.config_file import read_config_document

        doc = read_config_document(path, "--scheduler-config", key="config.yaml")
        try:
            cfg, specs = parse_scheduler_config(doc)
        except InputError as exc:
            raise InputError(f"--scheduler-config {path}: {exc.message}") from None
        profiles = build_profiles(cfg, specs, path)
        if offline is not None and cfg.extenders:
            try:
                profiles = _with_extenders(profiles, cfg.extenders, offline)
            except InputError as exc:
                raise InputError(f"--scheduler-config {path}: {exc.message}") from None
    if feature_gates:
        from kresched.sched.features import parse_feature_gates

        gates = parse_feature_gates(feature_gates)
        profiles = replace(profiles, gates=gates)
        if gates.unknown:
            ENV.say(f"warning: --feature-gates: kresched simulates v1.36's default for {', '.join(gates.unknown)}; "
                    "it reads only the gang-scheduling gates (GenericWorkload, GangScheduling, "
                    "WorkloadAwarePreemption, WorkloadWithJob)")
    return profiles.with_fallback() if simulate_other else profiles


def _with_extenders(profiles: Profiles, extenders: Sequence[Extender], offline: bool) -> Profiles:
    from kresched.sched.extender import ExtenderError, verbs
    from kresched.sources.extenders import HttpTransport, probe
    from kresched.sources.served import ServedObjects, record_into

    unreachable: dict[str, str] = {}
    transport = HttpTransport(ExtenderError)
    called = 0
    for i, ext in enumerate(extenders):
        if not [v for v in verbs(ext) if v != "bind"]:
            continue
        try:
            transport.prepare(ext)
        except InputError as exc:
            raise InputError(f"extenders[{i}].{exc.message}") from None
        if offline and (why := probe(ext)) is not None:
            unreachable[ext.url_prefix] = why
        else:
            called += 1
    store = ServedObjects() if called else None
    record_into(store)
    return profiles.with_extenders(extenders, transport, unreachable, store)


def load_policy(path: str | None) -> Policy:
    """kresched's policy: the `--config` file's (read and checked before anything else is; a bad
    file is one `error:` line, exit 2), else the moderate preset — the flags' own defaults."""
    from kresched.plan.policy import decode_policy, preset

    if not path:
        return preset("moderate")
    from dataclasses import replace

    from kresched.sources.config_file import read_config_document

    doc = read_config_document(path, "--config", key="config.yaml")
    try:
        policy = decode_policy(doc)
    except InputError as exc:
        raise InputError(f"--config {path}: {exc.message}") from None
    return replace(policy, source=path)


def default_namespace(opts: Options) -> str:
    """-n, else the kubeconfig context's namespace (kubectl's rule), else the in-cluster service
    account's, else `default`. A snapshot has no context: `default`."""
    if opts.namespace:
        return opts.namespace
    if opts.snapshot is not None:
        return "default"
    return kube_context(opts.kubeconfig, opts.context).namespace or "default"


def cluster_of(opts: Options) -> KubeContext | None:
    """The cluster a command talks to (None: it reads a snapshot)."""
    return None if opts.snapshot is not None else kube_context(opts.kubeconfig, opts.context)


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
            ENV.say(f"error: {_one_line(exc.message)}")
            raise typer.Exit(int(exc.exit_code)) from None
        except KeyboardInterrupt:
            ENV.say("interrupted")
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
        except BrokenPipeError:
            raise typer.Exit(int(ExitCode.OK)) from None
        except OSError as exc:
            if exc.errno not in _OUTPUT_FULL:
                raise
            # stdout on a full disk: say so once, and keep the interpreter's final flush quiet.
            _silence_stdout()
            ENV.say(f"error: cannot write the output: {exc.strerror}")
            raise typer.Exit(int(ExitCode.ERROR)) from None
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as exc:
            if os.environ.get("KRESCHED_TRACEBACK"):
                raise
            ENV.say(f"error: unexpected {type(exc).__name__}: {_one_line(str(exc))} "
                    "(set KRESCHED_TRACEBACK=1 for details)")
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
        if _insecure_request(category):
            return
        text = _one_line(str(message))
        if text not in shown:
            shown.add(text)
            ENV.say(f"warning: {text}")

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = show
        yield


def _insecure_request(category: type[Warning]) -> bool:
    """urllib3's `InsecureRequestWarning`, told by name: importing urllib3 to compare classes would
    load the HTTP stack into every snapshot run."""
    return category.__name__ == "InsecureRequestWarning" and category.__module__.startswith("urllib3")


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


def at_least(minimum: int) -> Callable[[int], int]:
    """An option callback refusing values below `minimum` (a usage error, exit 2) — instead of
    click's ranges, which print `x>=0` into the help where kubectl prints nothing."""

    def check(value: int) -> int:
        if value is not None and value < minimum:
            raise typer.BadParameter(f"{value} is less than {minimum}")
        return value

    return check


def is_table(output: Output) -> bool:
    return output in (Output.table, Output.wide)


def emit(output: Output, data: Any, view: Callable[[], Any]) -> None:
    """The result as JSON or YAML (`data`, the contract), or as the readable `view()` for a table.
    `-o` alone decides which (kubectl's rule), never whether stdout is a terminal."""
    from kresched.render.common import to_json, to_yaml

    if output is Output.json:
        ENV.write(to_json(data))
    elif output is Output.yaml:
        ENV.write(to_yaml(data))
    else:
        ENV.out.print(view(), crop=False)


def write_doc(output: Output, data: Any) -> None:
    """One document of a stream (an event, a summary): a JSON line under -o json, a YAML document
    under -o yaml (`---` between documents)."""
    import msgspec

    from kresched.render.common import to_yaml

    if output is Output.json:
        ENV.write(msgspec.json.encode(data).decode())
    else:
        ENV.write(("---\n" if ENV.docs else "") + to_yaml(data))
    ENV.docs += 1
