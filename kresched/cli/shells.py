"""Shell completion scripts, as Typer's protocol writes them for `kresched`, and installing one
where docs/guide/ci-and-cluster.md says: `kresched --install-completion [SHELL]` and
`--show-completion [SHELL]` (`cli.KubectlGroup`), and `python -m kresched.completions`, which
writes the committed `completions/`.

The scripts are Typer's own: each calls `kresched` back with `_KRESCHED_COMPLETE=complete_<shell>`
to get the candidates, so they follow the installed kresched's commands and options.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["COMPLETE_VAR", "PROG", "SCRIPTS", "completion_script", "current_shell", "environment", "install",
           "install_path"]

PROG = "kresched"
#: The environment variable Typer's completion protocol uses for a program named `kresched`.
COMPLETE_VAR = "_KRESCHED_COMPLETE"
#: Shell → file name, as each shell's completion loader looks for it.
SCRIPTS = {"bash": "kresched.bash", "zsh": "_kresched", "fish": "kresched.fish"}


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """`values` set in os.environ for the block, what was there before put back after."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def completion_script(shell: str) -> str:
    """The script for `shell`, as `_KRESCHED_COMPLETE=source_<shell> kresched` prints it."""
    from kresched.cli import app

    if shell not in SCRIPTS:
        raise ValueError(f"unsupported shell {shell!r} (supported: {', '.join(SCRIPTS)})")
    out = io.StringIO()
    with environment(**{COMPLETE_VAR: f"source_{shell}"}), contextlib.redirect_stdout(out):
        try:
            app(args=[], prog_name=PROG)
        except SystemExit as exit_:
            if exit_.code:
                raise RuntimeError(f"the {shell} completion script could not be generated "
                                   f"(exit {exit_.code})") from None
    # Stripped as Typer's own `--show-completion` does: zsh reads `#compdef` from the first line.
    script = out.getvalue().strip()
    if not script:
        raise RuntimeError(f"the {shell} completion script came out empty")
    return script + "\n"


def install_path(shell: str, home: Path | None = None) -> Path:
    """Where `install` puts `shell`'s script: where each shell's own loader looks for it (bash:
    bash-completion's per-user directory, which it loads on demand; fish: its completions
    directory) or, for zsh, a file ~/.zshrc sources."""
    home = home or Path.home()
    env = os.environ
    if shell == "bash":
        data = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local" / "share"
        user_dir = Path(env["BASH_COMPLETION_USER_DIR"]) if env.get("BASH_COMPLETION_USER_DIR") \
            else data / "bash-completion"
        return user_dir / "completions" / PROG
    if shell == "zsh":
        return home / ".zsh" / SCRIPTS["zsh"]
    if shell == "fish":
        config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        return config / "fish" / "completions" / SCRIPTS["fish"]
    raise ValueError(f"unsupported shell {shell!r} (supported: {', '.join(SCRIPTS)})")


def install(shell: str, home: Path | None = None) -> list[str]:
    """Write `shell`'s script to `install_path` (and, for zsh, a `source` line at the end of
    ~/.zshrc, once): what the docs' commands do. The lines to tell the operator."""
    path = install_path(shell, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(completion_script(shell))
    said = [f"{shell} completion installed in {path}"]
    if shell == "bash":
        said.append(f"bash-completion loads it in new shells (without bash-completion: add `source {path}` to "
                     "~/.bashrc)")
    elif shell == "zsh":
        rc = (home or Path.home()) / ".zshrc"
        line = f"source {path}"
        text = rc.read_text() if rc.is_file() else ""
        if line not in text.splitlines():
            rc.write_text(text + ("" if not text or text.endswith("\n") else "\n") + line + "\n")
            said.append(f"added `{line}` to {rc} (it must come after compinit)")
        said.append("new shells complete kresched")
    else:
        said.append("new shells complete kresched")
    return said


def current_shell() -> str | None:
    """The shell kresched runs under (as Typer detects it), else $SHELL's; None if neither says."""
    try:
        import shellingham

        name = str(shellingham.detect_shell()[0])
    except Exception:  # not installed, or not detectable: $SHELL
        name = Path(os.environ.get("SHELL", "")).name
    return name or None
