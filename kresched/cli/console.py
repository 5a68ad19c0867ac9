"""The CLI's consoles: rich's, made safe for names that come from the cluster.

Imported on first output through a console (`cli.common.ENV`): a command whose output is JSON or
YAML starts without rich (`tests/test_startup.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.segment import Segment

from kresched.render.safe import escape_control

__all__ = ["SafeConsole"]


class SafeConsole(Console):
    """A rich Console that never writes a control character it did not produce itself.

    Strings are escaped before layout (so tables keep their widths); whatever reaches the output
    some other way (a `Text` built elsewhere) is escaped segment by segment on the way out —
    rich's own styles, links and cursor moves are not text segments and are left alone."""

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Any:
        return super().render_str(escape_control(text), *args, **kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control else Segment(escape_control(seg.text), seg.style, seg.control) for seg in buffer)
