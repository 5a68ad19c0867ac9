"""Helpers every renderer shares: JSON/YAML text, pod summaries, resource bars. Never prints."""

from __future__ import annotations

from typing import Any

import msgspec

from kresched.model.objects import Pod
from kresched.model.quantity import format_bytes, format_cpu

__all__ = ["to_json", "to_yaml", "pod_requests_text", "priority_text", "bar"]


def to_json(data: Any) -> str:
    return msgspec.json.format(msgspec.json.encode(data), indent=2).decode()


def to_yaml(data: Any) -> str:
    """YAML that kubectl and other Go tools read back as `data` (`y`, `08`, `0o17` quoted)."""
    from kresched.sources.goyaml import dump  # only `-o yaml` needs PyYAML

    return dump(data)


def pod_requests_text(pod: Pod) -> str:
    r = pod.requests
    parts = []
    if r.milli_cpu:
        parts.append(f"cpu {format_cpu(r.milli_cpu)}")
    if r.memory:
        parts.append(f"memory {format_bytes(r.memory)}")
    if r.ephemeral_storage:
        parts.append(f"ephemeral-storage {format_bytes(r.ephemeral_storage)}")
    parts.extend(f"{k} {v}" for k, v in sorted(r.scalar.items()))
    return ", ".join(parts) or "no requests"


def priority_text(pod: Pod) -> str:
    cls = pod.spec.priority_class_name
    return f"{pod.priority}" + (f" ({cls})" if cls else "")


def bar(used: int, capacity: int, width: int = 20, style: str = "cyan") -> str:
    """A rich-markup bar of `used`/`capacity`, red when over capacity."""
    if capacity <= 0:
        return "[dim]" + "·" * width + "[/]"
    frac = used / capacity
    filled = min(width, round(frac * width))
    color = "red" if frac > 1 else style
    return f"[{color}]" + "█" * filled + "[/][dim]" + "░" * (width - filled) + f"[/] {frac * 100:4.0f}%"
