"""kubectl-style tables: plain columns separated by three spaces, upper-case headers, no box
drawing. Never prints.

The rule every table follows (issues 12 and 31): it fits the screen, and a name, a key or a number
is never broken.
- A column is as wide as its longest cell. When the columns together are wider than the screen,
  the columns a table names as `movable` leave it, one after another in that order, until the rest
  fits: their cells go under their row on one note line (`pdb: data/kafka · controller: ...`),
  so nothing is lost. Where even the columns that stay are wider than the screen (names longer
  than the screen), the line runs long, as `kubectl get`'s do, so it can still be copied whole.
- Only the last column may hold free text; it wraps at spaces under its own column when at least
  `MIN_WRAP` cells and its longest word fit there, and otherwise moves under its row.
- Text is only ever broken at spaces (`wrap_words`): a word longer than the screen keeps a line of
  its own, whole.
Detail lines (`add_row(..., details=[...])`) are printed under their row, indented, wrapped to the
width. The width is the console's: the terminal's on a terminal, `COLUMNS` or unlimited on a pipe
(kresched's consoles are built that way in `cli.common`).
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

__all__ = ["Columns", "Command", "Hanging", "GAP", "MIN_WRAP", "markup_lines", "wrap_words"]

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
    """A kubectl-style table. `wrap_last=True` makes the last column free text; `right` names the
    columns aligned right (counts); `movable` names the columns that leave the table for a note
    under each row when it does not fit the screen, the first named first (see the module
    docstring)."""

    def __init__(self, *headers: str, wrap_last: bool = False, right: Iterable[str] = (),
                 movable: Iterable[str] = ()) -> None:
        self.headers = list(headers)
        self.wrap_last = wrap_last
        self.right = {self.headers.index(h) for h in right}
        self.movable = [self.headers.index(h) for h in movable]
        if wrap_last and len(self.headers) - 1 in self.movable:
            raise ValueError("the free-text column moves under its row by itself")
        self.rows: list[_Row] = []

    def add_row(self, *cells: str | Text, details: Iterable[str | Text] = ()) -> None:
        if len(cells) != len(self.headers):
            raise ValueError(f"{len(cells)} cells for {len(self.headers)} columns")
        self.rows.append(_Row([_text(c) for c in cells], [_text(d) for d in details]))

    def __bool__(self) -> bool:
        return bool(self.rows)

    def columns_shown(self, width: int) -> list[int]:
        """The columns that stay in the table on a screen `width` cells wide (the others go under
        their rows)."""
        widths = self._widths()
        shown = list(range(len(self.headers)))
        for i in self.movable:
            if self._fits(shown, widths, width):
                break
            shown.remove(i)
        return shown

    def _widths(self) -> list[int]:
        return [max([len(h)] + [r.cells[i].cell_len for r in self.rows]) for i, h in enumerate(self.headers)]

    def _fits(self, shown: list[int], widths: list[int], width: int) -> bool:
        fixed = sum(widths[i] for i in shown[:-1]) + GAP * (len(shown) - 1)
        last = shown[-1]
        if widths[last] <= width - fixed:
            return True
        if not (self.wrap_last and last == len(self.headers) - 1):
            return False
        longest_word = max((_longest_word(r.cells[last]) for r in self.rows), default=0)
        return width - fixed >= max(MIN_WRAP, longest_word)

    def lines(self, width: int) -> list[Text]:
        """The table as lines for a screen `width` cells wide."""
        from rich.text import Text

        widths = self._widths()
        shown = self.columns_shown(width)
        moved = [i for i in range(len(self.headers)) if i not in shown]
        free = self.wrap_last and shown[-1] == len(self.headers) - 1
        start_last = sum(widths[i] for i in shown[:-1]) + GAP * (len(shown) - 1)
        room = width - start_last
        last_fits = widths[shown[-1]] <= room
        # Free text too long for the room left: wrap it in its column, or move it under the row.
        wrap_in_column = free and not last_fits and room >= max(
            [MIN_WRAP] + [_longest_word(r.cells[shown[-1]]) for r in self.rows])
        out: list[Text] = []
        header = Text()
        for k, i in enumerate(shown):
            header.append(self._pad(Text(self.headers[i]), widths[i], i, last=k == len(shown) - 1))
            if k < len(shown) - 1:
                header.append(" " * GAP)
        out.append(_rstrip(header))
        detail_width = max(width - DETAIL_INDENT, MIN_WRAP)
        for row in self.rows:
            line = Text()
            below: list[Text] = []
            for k, i in enumerate(shown):
                cell = row.cells[i]
                is_last = k == len(shown) - 1
                if is_last and free and not last_fits and cell.cell_len > room:
                    if wrap_in_column:
                        first, *rest = wrap_words(cell, room) if cell.plain else [cell]
                        line.append(first)
                        out.append(_rstrip(line))
                        out.extend(_rstrip(Text(" " * start_last) + r) for r in rest)
                        line = Text()
                        break
                    below = [Text(" " * DETAIL_INDENT) + part for part in wrap_words(cell, detail_width)]
                    break
                line.append(self._pad(cell, widths[i], i, last=is_last))
                if not is_last:
                    line.append(" " * GAP)
            if line.plain or line.spans:
                out.append(_rstrip(line))
            out.extend(below)
            note = self._moved_note(row, moved)
            for d in ([note] if note is not None else []) + row.details:
                out.extend(_hanging(d, width))
        return out

    def _moved_note(self, row: _Row, moved: list[int]) -> Text | None:
        """The cells of the columns that left the table, as one line: `pdb: data/kafka · qos: ...`;
        None when they are all empty (`-`)."""
        from rich.text import Text

        parts = []
        for i in moved:
            cell = row.cells[i]
            if cell.plain.strip() in ("", "-"):
                continue
            head = self.headers[i]
            parts.append(Text(f"{head.lower() if head.isupper() else head}: ", style="dim") + cell)
        return Text(" · ").join(parts) if parts else None

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


def _hanging(text: Text, width: int) -> list[Text]:
    """A detail line under a row: indented, wrapped, its continuation two cells further in."""
    from rich.text import Text

    first, rest = " " * DETAIL_INDENT, " " * (DETAIL_INDENT + 2)
    parts = wrap_words(text, max(width - len(rest), MIN_WRAP), max(width - len(first), MIN_WRAP))
    return [Text(first if i == 0 else rest) + part for i, part in enumerate(parts)]


def _longest_word(cell: Text) -> int:
    from rich.cells import cell_len

    return max((cell_len(w) for w in cell.plain.split()), default=0)


def wrap_words(text: Text, width: int, first: int | None = None) -> list[Text]:
    """`text` in lines of at most `width` cells (the first line `first`, when given), broken only
    at spaces (and at its own newlines); a word longer than the room keeps a line of its own, whole
    — a name is never broken. Lines keep their styles; the spaces a break falls on are dropped."""
    import re

    from rich.cells import cell_len

    out: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        plain = line.plain.expandtabs(8) if "\t" in line.plain else line.plain
        if "\t" in line.plain:
            line = line.copy()
            line.expand_tabs(8)
        offsets: list[int] = []
        start = 0
        room = width if first is None or out else first
        for m in re.finditer(r"\S+", plain):
            if m.start() > start and cell_len(plain[start:m.end()]) > room:
                offsets.append(m.start())
                start = m.start()
                room = width
        for part in line.divide(offsets):
            out.append(_rstrip(part))
    return out


def _rstrip(t: Text) -> Text:
    t.rstrip()
    return t


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
        first = max(options.max_width - len(self.first), MIN_WRAP)
        for i, part in enumerate(wrap_words(self.text, room, first)):
            line = Text(self.first if i == 0 else self.rest) + _rstrip(part)
            yield from line.render(console)
            yield Segment.line()


class Command:
    """A command to copy and run, indented: on one line when it fits the screen, else broken
    before its options with the shell's ` \\` continuation, so that it still runs as pasted. Its
    words are never broken (a long pod name runs long)."""

    def __init__(self, command: str, indent: int = 2) -> None:
        self.command = command
        self.indent = indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        from rich.cells import cell_len
        from rich.segment import Segment

        width = options.max_width
        pad = " " * self.indent
        lines = [pad + self.command]
        if cell_len(lines[0]) > width:
            words = self.command.split(" ")
            lines, line = [], pad
            for i, word in enumerate(words):
                if line.strip() and word.startswith("-") and cell_len(line + " " + word) + 2 > width:
                    lines.append(line + " \\")
                    line = pad + "    " + word
                else:
                    line = (line + " " + word) if line.strip() else line + word
                if i == len(words) - 1:
                    lines.append(line)
        for line in lines:
            yield Segment(escape_control(line))
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
