"""Helpers every renderer shares: JSON/YAML text, pod summaries, resource bars. Never prints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from kresched.execute.events import count
from kresched.model.objects import Pod
from kresched.model.quantity import format_bytes, format_cpu

__all__ = ["Source", "to_json", "to_yaml", "pod_requests_text", "requests_text", "claims_text", "priority_text",
           "bar", "cluster_text", "count", "duration_text"]


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


def requests_text(pod: Pod, per: str = "") -> str:
    """What a pod asks of a node, for its header: `requests cpu 500m, memory 1Gi` (`per` after the
    amounts: ` per replica`), or `no requests`. Devices it asks for through ResourceClaims are not
    among them: `claims_text` says those."""
    amounts = pod_requests_text(pod)
    return "no requests" if amounts == "no requests" else f"requests {amounts}{per}"


def claims_text(pod: Pod) -> str:
    """`ResourceClaims: gpu (ResourceClaim shared-gpu), nic (trainer-nic, from template one-nic)`:
    each entry of `spec.resourceClaims` and the claim it names, or the claim made for the pod from
    its template (`status.resourceClaimStatuses`; not made yet, or not for a what-if's replicas); ""
    for a pod without claims: a header's line after its requests."""
    made = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    parts = []
    for c in pod.spec.resource_claims:
        if c.resource_claim_name:
            parts.append(f"{c.name} (ResourceClaim {c.resource_claim_name})")
        elif c.resource_claim_template_name:
            claim = made.get(c.name)
            source = f"from template {c.resource_claim_template_name}"
            parts.append(f"{c.name} ({claim}, {source})" if claim else f"{c.name} ({source})")
        else:
            parts.append(c.name)
    return f"ResourceClaims: {', '.join(parts)}" if parts else ""


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


def duration_text(seconds: float) -> str:
    """`0.4s`, `10.5s`, `2m03s`, `1h02m`: how long a run took."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    s = int(seconds)
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def cluster_text(cluster: dict[str, Any] | None) -> str | None:
    """`context "prod-eu" (https://10.0.0.1:6443)` for a summary's `cluster`; None for a snapshot."""
    if not cluster:
        return None
    where = f" ({cluster['server']})" if cluster.get("server") else ""
    return f'context "{cluster["context"]}"{where}' if cluster.get("context") else \
        f"the in-cluster service account{where}"


@dataclass(frozen=True)
class Source:
    """How the command that comes next is spelt: the program (`kresched`, or `kubectl kresched`
    for the plugin) and the options that name the cluster or the snapshot as the plan's own
    command line did (`--snapshot demo`, `--context prod`)."""

    prog: str = "kresched"
    args: str = ""

    @property
    def on_snapshot(self) -> bool:
        return "--snapshot" in self.args.split()
