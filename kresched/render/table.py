"""kubectl-style tables: plain columns separated by three spaces, upper-case headers, no box
drawing. Never prints.

The rule every table follows (issue 12): a name, a key or a number is never broken — its column is
as wide as its longest cell, and if the columns together are wider than the screen the line runs
long, as `kubectl get` does, so it can still be copied whole. Only the last column may hold free
text; it wraps at word boundaries under its own column when at least `MIN_WRAP` cells are left
there, and otherwise moves under its row. Detail lines (`add_row(..., details=[...])`) are
printed under their row, indented, wrapped to the width. The width is the console's: the terminal's
on a terminal, unlimited on a pipe (kresched's consoles are built that way in `cli.common`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kresched.render.safe import escape_control

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, Group
    from rich.segment import Segment
    from rich.text import Text

__all__ = ["Columns", "Hanging", "GAP", "MIN_WRAP", "markup_lines"]

#: kubectl's printers use a tabwriter with padding 3.
GAP = 3
#: Fewer cells than this left for the last column: its text moves under the row instead.
MIN_WRAP = 24
#: Indent of what is printed under a row.
DETAIL_INDENT = 4


def _text(cell: str | Text) -> Text:
    # Escaped before rich sees it: `Text` would drop BEL, BS, CR and keep ESC (names come from the cluster).
    from rich.text import Text

    return cell if isinstance(cell, Text) else Text(escape_control(cell))


@dataclass
class _Row:
    cells: list[Text]
    details: list[Text] = field(default_factory=list)


class Columns:
    """A kubectl-style table. `wrap_last=True` makes the last column free text (see the module
    docstring); `right` names the columns aligned right (counts)."""

    def __init__(self, *headers: str, wrap_last: bool = False, right: Iterable[str] = ()) -> None:
        self.headers = list(headers)
        self.wrap_last = wrap_last
        self.right = {self.headers.index(h) for h in right}
        self.rows: list[_Row] = []

    def add_row(self, *cells: str | Text, details: Iterable[str | Text] = ()) -> None:
        if len(cells) != len(self.headers):
            raise ValueError(f"{len(cells)} cells for {len(self.headers)} columns")
        self.rows.append(_Row([_text(c) for c in cells], [_text(d) for d in details]))

    def __bool__(self) -> bool:
        return bool(self.rows)

    def lines(self, width: int) -> list[Text]:
        """The table as lines for a screen `width` cells wide."""
        from rich.text import Text

        n = len(self.headers)
        widths = [max([len(h)] + [r.cells[i].cell_len for r in self.rows]) for i, h in enumerate(self.headers)]
        start_last = sum(widths[:-1]) + GAP * (n - 1)
        room = width - start_last
        last_fits = widths[-1] <= room
        # Free text too long for the room left: wrap it in its column, or move it under the row.
        wrap_in_column = self.wrap_last and not last_fits and room >= MIN_WRAP
        out: list[Text] = []
        header = Text()
        for i, h in enumerate(self.headers):
            header.append(self._pad(Text(h), widths[i], i, last=i == n - 1))
            if i < n - 1:
                header.append(" " * GAP)
        out.append(header)
        for row in self.rows:
            line = Text()
            below: list[Text] = []
            for i, cell in enumerate(row.cells):
                is_last = i == n - 1
                if is_last and self.wrap_last and not last_fits and cell.cell_len > room:
                    if wrap_in_column:
                        first, *rest = cell.wrap(_console(), room) if cell.plain else [cell]
                        line.append(first)
                        out.append(_rstrip(line))
                        out.extend(_rstrip(Text(" " * start_last) + r) for r in rest)
                        line = Text()
                        break
                    line.append("")
                    below = [Text(" " * DETAIL_INDENT) + part
                             for part in cell.wrap(_console(), max(width - DETAIL_INDENT, MIN_WRAP))]
                    break
                line.append(self._pad(cell, widths[i], i, last=is_last))
                if not is_last:
                    line.append(" " * GAP)
            if line.plain or line.spans:
                out.append(_rstrip(line))
            out.extend(below)
            for d in row.details:
                out.extend(Text(" " * DETAIL_INDENT) + part
                           for part in d.wrap(_console(), max(width - DETAIL_INDENT, MIN_WRAP)))
        return out

    def _pad(self, cell: Text, width: int, i: int, last: bool) -> Text:
        from rich.text import Text

        gap = width - cell.cell_len
        if i in self.right:
            return Text(" " * gap) + cell
        return cell if last else cell + Text(" " * gap)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        # Segments, not Text: the console would wrap a Text at its width and break a long name.
        from rich.segment import Segment

        for line in self.lines(options.max_width):
            yield from line.render(console)
            yield Segment.line()


def _rstrip(t: Text) -> Text:
    t.rstrip()
    return t


_WRAP_CONSOLE: Console | None = None


def _console() -> Console:
    """`Text.wrap` needs a console only for its tab size and cell widths: one quiet instance."""
    from rich.console import Console

    global _WRAP_CONSOLE
    if _WRAP_CONSOLE is None:
        _WRAP_CONSOLE = Console(width=80, file=None, color_system=None)
    return _WRAP_CONSOLE


class Hanging:
    """Text wrapped to the screen at word boundaries, its first line after `first` and the others
    indented under it (`  • a note that goes on` / `    and on`). No trailing padding."""

    def __init__(self, text: str | Text, first: str = "  • ", rest: str | None = None) -> None:
        self.text = _text(text)
        self.first = first
        self.rest = rest if rest is not None else " " * len(first)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        from rich.segment import Segment
        from rich.text import Text

        room = max(options.max_width - len(self.rest), MIN_WRAP)
        for i, part in enumerate(self.text.wrap(_console(), room)):
            line = Text(self.first if i == 0 else self.rest) + _rstrip(part)
            yield from line.render(console)
            yield Segment.line()


def markup_lines(lines: Iterable[str]) -> Group:
    """Lines of rich markup, each wrapped with its continuation indented two cells past its own
    indent (`  ! pod: a reason that goes on` / `    and on`)."""
    from rich.console import Group
    from rich.text import Text

    out = []
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        out.append(Hanging(Text.from_markup(line[indent:]), first=" " * indent, rest=" " * (indent + 2)))
    return Group(*out)
