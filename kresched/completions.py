"""Shell completion scripts for bash, zsh and fish, generated from the Typer app.

`python -m kresched.completions [DIR]` writes `kresched.bash`, `_kresched` (zsh) and
`kresched.fish` into DIR (default: the repository's `completions/`, when run from a checkout).
`kresched --install-completion [SHELL]` (`cli.shells.install`) writes the same script where
docs/guide/ci-and-cluster.md says, for SHELL or the shell it runs under.
The scripts are Typer's own: each calls `kresched` back with `_KRESCHED_COMPLETE=complete_<shell>`
to get the candidates, so they follow the installed kresched's commands and options and only
change when Typer's protocol does (tests/test_completions.py fails when the committed ones are
stale).

Outside the layers: it runs the whole CLI, as a shell would.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kresched.cli.shells import COMPLETE_VAR, PROG, SCRIPTS, completion_script

__all__ = ["COMPLETE_VAR", "PROG", "SCRIPTS", "completion_script", "write_completions"]

#: The repository's `completions/` (when kresched runs from a checkout, not from an installed wheel).
_REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = _REPO / "completions" if (_REPO / "pyproject.toml").is_file() else None


def write_completions(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for shell, name in SCRIPTS.items():
        path = directory / name
        path.write_text(completion_script(shell))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m kresched.completions [DIR]", file=sys.stderr)
        return 2
    directory = Path(args[0]) if args else DEFAULT_DIR
    if directory is None:
        print("not running from a kresched checkout: pass the directory to write to", file=sys.stderr)
        return 2
    for path in write_completions(directory):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
