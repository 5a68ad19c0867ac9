"""The non-graceful node shutdown, carried out: `kresched drain NODE --out-of-service`.

Kubernetes' documented procedure for a node whose machine is off and will not come back on its
own: add `node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`. The taint manager then deletes
every pod that does not tolerate it, the pod GC force-deletes the terminating pods of a not-ready
node with that taint (no kubelet is there to confirm them), and the attach/detach controller
detaches its volumes without waiting for them to be unmounted. So the ReplicaSets' replacements
start and the StatefulSets create their pods again, elsewhere.

Owns `out_of_service`: add the taint (a merge patch conditional on the node's resourceVersion,
re-read and retried on a conflict), then watch what the cluster does — the old pods go, and for
each controller as many new pods are bound as the recovery timeline predicted — until all is done
or the timeout; each landing is reported against the prediction. The taint is the operator's to
remove once the machine is back (`kresched untaint NODE --out-of-service`): kresched never removes
it by itself. Also `in_service_patch`, which `untaint` uses.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kresched.execute.api import ClusterApi
from kresched.execute.events import Event, Reporter
from kresched.execute.writes import patch_node_with_retry
from kresched.model.objects import Node, Pod
from kresched.model.specs import Taint
from kresched.plan.lost import OUT_OF_SERVICE_TAINT, OUT_OF_SERVICE_VALUE
from kresched.plan.recovery import PodFate

__all__ = ["OutOfServiceResult", "back_in_service", "in_service_patch", "out_of_service", "out_of_service_patch"]


def _taint_dict(t: Taint) -> dict[str, Any]:
    d: dict[str, Any] = {"key": t.key, "effect": t.effect}
    if t.value:
        d["value"] = t.value
    if t.time_added:
        d["timeAdded"] = t.time_added
    return d


def out_of_service_patch(node: Node, now: datetime) -> dict[str, Any] | None:
    """A merge patch adding the out-of-service taint (with `timeAdded`, as NoExecute taints carry
    it); None when the node has one already. Conditional on the resourceVersion read: a merge patch
    replaces the taint list whole."""
    if any(t.key == OUT_OF_SERVICE_TAINT for t in node.spec.taints):
        return None
    ours = {"key": OUT_OF_SERVICE_TAINT, "value": OUT_OF_SERVICE_VALUE, "effect": "NoExecute",
            "timeAdded": now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    return {"metadata": {"resourceVersion": node.metadata.resource_version},
            "spec": {"taints": [*(_taint_dict(t) for t in node.spec.taints), ours]}}


def in_service_patch(node: Node) -> dict[str, Any] | None:
    """A merge patch removing every out-of-service taint, or None when there is none."""
    if not any(t.key == OUT_OF_SERVICE_TAINT for t in node.spec.taints):
        return None
    return {"metadata": {"resourceVersion": node.metadata.resource_version},
            "spec": {"taints": [_taint_dict(t) for t in node.spec.taints if t.key != OUT_OF_SERVICE_TAINT]}}


@dataclass
class OutOfServiceResult:
    node: str
    tainted: bool = False
    #: The taint was there already (added by someone else, or an earlier run).
    already: bool = False
    #: Old pod → gone from the node (force-deleted) by the end.
    gone: list[str] = field(default_factory=list)
    #: Per controller (`Kind/name` in its namespace, `ns/Kind/name`): where its new pods were bound,
    #: and where the recovery timeline predicted them.
    landed: dict[str, list[str]] = field(default_factory=dict)
    predicted: dict[str, list[str | None]] = field(default_factory=dict)
    #: What had not happened by the timeout.
    waiting: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return self.tainted and not self.waiting

    @property
    def surprises(self) -> dict[str, list[str]]:
        """Controllers whose new pods went elsewhere than predicted (as multisets of nodes)."""
        return {k: v for k, v in self.landed.items()
                if Counter(v) != Counter(n for n in self.predicted.get(k, []) if n is not None)}


def _group(pod: Pod) -> str:
    c = pod.controller
    return f"{pod.namespace}/{c.kind}/{c.name}" if c is not None else pod.key


def out_of_service(api: ClusterApi, node: str, fates: tuple[PodFate, ...], selectors: dict[str, str],
                   timeout_seconds: float, report: Reporter, poll_seconds: float = 0.5) -> OutOfServiceResult:
    """Taint `node` out of service and watch its pods (`fates`: the recovery timeline's prediction
    with the taint) go and come back elsewhere. `selectors`: per pod key, its controller's selector
    (`ClusterState.replica_selector`), to find the new pods."""
    started = time.monotonic()
    result = OutOfServiceResult(node)
    # The new pods to wait for: not those of a ReplicaSet pod evicted already (they exist).
    moving = [f for f in fates if f.outcome == "recreated" or (f.outcome == "replaced" and not f.evicted)]
    groups: dict[str, list[PodFate]] = {}
    for f in moving:
        groups.setdefault(_group(f.pod), []).append(f)
    # The pods each controller has before the taint: a new pod is one that is none of them.
    known = {g: {p.uid for p in api.replicas_of(fs[0].pod, selectors.get(fs[0].pod.key))} for g, fs in groups.items()}
    result.predicted = {g: [f.lands_on for f in fs] for g, fs in groups.items()}
    # A new pod predicted to stay Pending is not waited for (it is reported if it binds meanwhile).
    expected = {g: sum(1 for n in ns if n is not None) for g, ns in result.predicted.items()}
    patched = patch_node_with_retry(api, node, lambda n: out_of_service_patch(n, datetime.now(UTC)))
    result.tainted = True
    result.already = patched is None
    taint = f"{OUT_OF_SERVICE_TAINT}={OUT_OF_SERVICE_VALUE}:NoExecute"
    report(Event("out-of-service", f"{node} already carries {OUT_OF_SERVICE_TAINT}" if result.already
                 else f"tainted {node} {taint}", {"node": node, "taint": taint, "already": result.already}, "ok"))
    if api.mode != "cluster":
        result.landed = {g: [n for n in ns if n is not None] for g, ns in result.predicted.items()}
        result.seconds = time.monotonic() - started
        return result
    old = [f.pod for f in fates if f.outcome != "stays"]
    pause = 0.05
    while True:
        gone = api.which_gone(old) if old else set()
        for p in old:
            if p.key in gone and p.key not in result.gone:
                result.gone.append(p.key)
                report(Event("gone", f"{p.key} is gone from {node}", {"pod": p.key, "node": node}, "ok"))
        for g, fs in groups.items():
            if len(result.landed.get(g, [])) >= len(fs):
                continue  # (every pod of it bound: nothing more to find)
            new = [p for p in api.replicas_of(fs[0].pod, selectors.get(fs[0].pod.key))
                   if p.uid not in known[g] and p.node_name and not p.is_terminating]
            for p in new[len(result.landed.get(g, [])):len(fs)]:
                result.landed.setdefault(g, []).append(p.node_name)
                predicted = result.predicted[g]
                as_predicted = p.node_name in predicted
                note = "" if as_predicted else f" (predicted: {', '.join(n or 'Pending' for n in predicted)})"
                report(Event("bound", f"{p.key} bound to {p.node_name}{note}",
                             {"pod": p.key, "node": p.node_name, "predicted": predicted},
                             "ok" if as_predicted else "warn"))
        waiting = [p.key for p in old if p.key not in result.gone]
        waiting += [f"{g}: {n - len(result.landed.get(g, []))} new pod(s) not bound"
                    for g, n in expected.items() if len(result.landed.get(g, [])) < n]
        result.waiting = waiting
        elapsed = time.monotonic() - started
        if not waiting or elapsed >= timeout_seconds:
            break
        time.sleep(min(pause, poll_seconds, max(timeout_seconds - elapsed, 0)))
        pause = min(pause * 2, poll_seconds)
    result.seconds = time.monotonic() - started
    return result


def back_in_service(api: ClusterApi, nodes: list[str], remove: bool, report: Reporter) -> tuple[list[str], list[str]]:
    """For `untaint`: the `nodes` carrying the out-of-service taint, each named; the taint removed
    only when `remove` (the operator says the machine is back). (removed, kept)."""
    removed: list[str] = []
    kept: list[str] = []
    for name in nodes:
        if not remove:
            kept.append(name)
            report(Event("out-of-service-kept", f"kept {OUT_OF_SERVICE_TAINT} on {name}: the operator's taint of a "
                         "non-graceful node shutdown; --out-of-service removes it once the machine is back",
                         {"node": name}, "warn"))
            continue
        patch_node_with_retry(api, name, in_service_patch)
        removed.append(name)
        report(Event("in-service", f"removed {OUT_OF_SERVICE_TAINT} from {name}", {"node": name}, "ok"))
    return removed, kept
