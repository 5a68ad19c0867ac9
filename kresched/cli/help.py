"""`kresched help [COMMAND]`: kubectl's `help` — the help of kresched, or of one command, exactly as
`--help` prints it."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from kresched.cli.common import ENV
from kresched.cli.common import command as as_command
from kresched.errors import InputError

__all__ = ["help_command"]


def _complete_commands(ctx: Any, incomplete: str) -> list[str]:
    root = ctx.find_root()
    return [name for name in root.command.list_commands(root) if name.startswith(incomplete)]


@as_command
def help_command(
    ctx: typer.Context,
    command: Annotated[str | None, typer.Argument(metavar="[COMMAND]", show_default=False,
                                                  autocompletion=_complete_commands,
                                                  help="The command to show the help of.")] = None,
) -> None:
    """Help about any command: `kresched help plan` is `kresched plan --help`.

    Examples:

    \b
      kresched help
      kresched help drain
    """
    import difflib

    root = ctx.find_root()
    group = root.command
    if command is None:
        ENV.write(root.get_help())
        return
    sub = group.get_command(root, command)  # type: ignore[attr-defined]
    if sub is None:
        names = group.list_commands(root)  # type: ignore[attr-defined]
        close = difflib.get_close_matches(command, names, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise InputError(f"unknown command {command!r}{hint} (see '{root.command_path} --help')")
    ENV.write(type(ctx)(sub, info_name=command, parent=root).get_help())
