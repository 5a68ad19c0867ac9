"""kubectl's command line, read before any verb parses it: the order options may come in and the
spellings kubectl (pflag) accepts that click does not.

- common options (--snapshot, --kubeconfig, --context, -n, -o, -A, --no-color) before the verb
  are moved after it; global options (--request-timeout, --max-input) after the verb are moved
  before it: both may come anywhere on the line, as with kubectl;
- a boolean flag takes pflag's `--flag=true|false` (and `-A=false`): true is the flag, false is no
  flag, anything else is kubectl's `invalid argument` usage error;
- a shorthand takes its value after `=` too (`-o=json`, `-n=kube-system`);
- a bare `--dry-run` is `--dry-run=client`, `--server-dry-run` is `--dry-run=server`, and asking for
  both is a usage error; `--dry-run client` (a space, as kubectl users type it) is `--dry-run=client`
  (likewise `server` and `none`: pflag would read the word as an argument, a node or pod named
  `client`, which no one means — `--dry-run=client client` still names one);
- `--gang [MINCOUNT]` (`plan`, `preempt` with `-f`): a count after it is its minCount, a bare
  `--gang` is `--gang=all` (every replica);
- `-f` is kubectl's: manifests (`--filename`), on the verbs that read them (`plan`, `preempt`); on any
  other verb, or before the verb, it is a usage error that points to `--snapshot` (kresched's `-f`
  used to be the snapshot's).
Nothing after `--` is touched.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

__all__ = ["BadArgument", "normalize_args"]

#: Options every reading command has, which kubectl lets come before the verb: those taking a value…
_LEADING_WITH_VALUE = {"--snapshot", "--kubeconfig", "--context", "--namespace", "-n", "--output", "-o"}
#: The verbs whose `-f` names manifests (kubectl's `-f, --filename`).
_MANIFEST_VERBS = {"plan", "preempt"}
#: …and flags.
_LEADING_FLAGS = {"--no-color", "--all-namespaces", "-A"}
#: The root's own options, which kubectl lets come after the verb.
_GLOBAL_WITH_VALUE = {"--request-timeout", "--max-input"}
#: pflag's `strconv.ParseBool`.
#: kubectl's `--dry-run` values.
_DRY_RUN_MODES = ("none", "client", "server")
_TRUE, _FALSE = {"1", "t", "T", "TRUE", "true", "True"}, {"0", "f", "F", "FALSE", "false", "False"}


class BadArgument(ValueError):
    """An argument kubectl would refuse: the message is kubectl's; `verb` the command it was given to."""

    def __init__(self, message: str, verb: str | None = None) -> None:
        super().__init__(message)
        self.verb = verb


def normalize_args(args: Sequence[str], commands: Mapping[str, Any] | Collection[str]) -> list[str]:
    """`args` as the verbs parse them (see the module docstring). `commands` are the verbs, by
    name; given as click commands, their boolean flags take `=true|false`."""
    out = list(args)
    end = out.index("--") if "--" in out else len(out)
    kept, head = _verb_first(out[:end], commands)
    tail = out[end:]
    verb = head[0] if head and head[0] in commands else None
    flags = set(_LEADING_FLAGS)
    if verb is not None and isinstance(commands, Mapping):
        flags |= _boolean_flags(commands[verb])
    new: list[str] = []
    moved: list[str] = []
    i = 0
    while i < len(head):
        a = head[i]
        if i > 0 and verb is not None and verb not in _MANIFEST_VERBS and _is_short_f(a):
            raise BadArgument(f"unknown shorthand flag: 'f' in {a}: {verb} reads no manifests (-f is plan's and "
                              "preempt's, as kubectl's); a snapshot is --snapshot PATH", verb)
        name, eq, value = a.partition("=")
        if eq and name in flags:
            if value in _TRUE:
                new.append(name)
            elif value not in _FALSE:
                raise BadArgument(f'invalid argument "{value}" for "{name}" flag: strconv.ParseBool: parsing '
                                  f'"{value}": invalid syntax', verb)
        elif eq and re.fullmatch(r"-[A-Za-z]", name):
            new += [name, value]  # pflag's -o=json
        elif verb is not None and i > 0 and name in _GLOBAL_WITH_VALUE:
            take = 1 if eq else 2
            moved += head[i:i + take]
            i += take
            continue
        elif a == "--dry-run":
            if i + 1 < len(head) and head[i + 1] in _DRY_RUN_MODES:
                new.append(f"--dry-run={head[i + 1]}")
                i += 2
                continue
            new.append("--dry-run=client")
        elif a == "--server-dry-run":
            new.append("--dry-run=server")
        elif a == "--gang" and verb in _MANIFEST_VERBS:
            if i + 1 < len(head) and head[i + 1].isdigit():
                new.append(f"--gang={head[i + 1]}")
                i += 2
                continue
            new.append("--gang=all")
        else:
            new.append(a)
        i += 1
    modes = {a.split("=", 1)[1] for a in new if a.startswith("--dry-run=")}
    if len(modes) > 1:
        # A client dry run sends nothing the server could check: asking for both is a mistake.
        raise BadArgument(f"--dry-run={' and --dry-run='.join(sorted(modes))} are exclusive", verb)
    return [*kept, *moved, *new, *tail]


def _is_short_f(arg: str) -> bool:
    """`-f`, `-fFILE`, `-f=FILE` (not `--filename`, which only the manifest verbs define)."""
    return arg.startswith("-f") and not arg.startswith("--")


def _verb_first(args: list[str], commands: Collection[str]) -> tuple[list[str], list[str]]:
    """(the global options before the verb, the verb and the rest): common options before the verb
    are moved after it."""
    i, moved, kept = 0, [], []
    while i < len(args):
        a = args[i]
        name = a.split("=", 1)[0]
        if _is_short_f(a) and any(x in commands for x in args[i + 1:]):
            raise BadArgument("-f names manifests and comes after the verb (kresched plan -f FILE); a snapshot "
                              "is --snapshot PATH")
        if name in _LEADING_WITH_VALUE or name in _GLOBAL_WITH_VALUE:
            step = 1 if "=" in a else 2
        elif a[:2] in ("-n", "-o") and len(a) > 2 and not a.startswith("--"):
            step = 1  # -ojson, -nkube-system
        elif name in _LEADING_FLAGS:
            step = 1
        else:
            break
        (kept if name in _GLOBAL_WITH_VALUE else moved).extend(args[i:i + step])
        i += step
    if i < len(args) and args[i] in commands:
        return kept, [args[i], *moved, *args[i + 1:]]
    return [], args


def _boolean_flags(command: Any) -> set[str]:
    """The names of a click command's boolean flags (`--yes`, `-y`, ...)."""
    return {opt for p in getattr(command, "params", ()) if getattr(p, "is_flag", False)
            and not getattr(p, "count", False) for opt in (*p.opts, *p.secondary_opts)}
