"""Showing names that come from the cluster without letting them drive the terminal.

Owns `escape_control`: the render layer escapes strings before layout (tables keep their widths,
and rich's `Text` would silently drop some control characters), the CLI's consoles escape again on
the way out. Never prints.
"""

from __future__ import annotations

__all__ = ["escape_control"]


def _control_table() -> dict[int, str]:
    table = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if c not in (0x09, 0x0A)}
    # Bidirectional overrides and isolates reorder what the terminal shows (a name that reads
    # backwards): shown as escapes too.
    table.update({c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})
    return table


_CONTROL = _control_table()


def escape_control(text: str) -> str:
    """Control characters (ESC, BEL, CR, ...), C1 controls and bidi overrides as `\\xNN` escapes:
    names come from the cluster, and `ESC]0;...` in a pod name would retitle the terminal."""
    return text.translate(_CONTROL)
