"""Node-static filters, evaluated once per pod signature and group of nodes alike in what they read.

NodeUnschedulable, NodeName, TaintToleration and NodeAffinity answer from the pod's spec and the
node object alone — never from the pods running on the node — so their verdict for a node does not
change when pods are added or removed, and pods with the same nodeName, tolerations, nodeSelector
and node affinity get the same verdict; so do nodes with the same taints, cordon and values of the
labels those read (`node_reads`). They are also the first four filters in upstream's order, so when
one of them fails, its status is the node's status. Planning many pods on a large cluster asks this
question millions of times; `StaticFilters` answers it from a memo. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from kresched.model.objects import Node, Pod
from kresched.sched.framework import SUCCESS, CycleState, FilterPlugin, Status
from kresched.sched.node_info import NodeInfo

__all__ = ["NODE_STATIC_PLUGINS", "StaticFilters", "fit_shape", "labels_read"]

#: Plugins whose verdict depends only on the pod and the node object.
NODE_STATIC_PLUGINS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"})


def fit_shape(pod: Pod, claims: bytes | None = None) -> bytes:
    """What a node's verdict (and planning option) depends on for a pod whose filters read the node
    alone (`runner.node_local`): its priorities, preemption policy and requests, what the
    node-static filters read, and its claims where it has any — what DynamicResources reads of
    them where its verdict is node-local (`claims`: `DraCycle.verdict_key`, the specs of the
    claims to allocate), else their names and namespace. Labels, ports, affinity to pods and
    spreading are left out on purpose: for such a pod the plugins that read them returned Skip.
    Pods of different workloads with equal requests (and claims of equal specs) share it — and
    the memos keyed by it."""
    spec = pod.spec
    r = pod.requests
    aff = spec.affinity
    shape = (pod.priority, pod.effective_priority, spec.preemption_policy,
             (r.milli_cpu, r.memory, r.ephemeral_storage, r.scalar), spec.node_name,
             spec.tolerations, spec.node_selector, aff.node_affinity if aff else None)
    if claims is not None:
        return msgspec.json.encode((*shape, claims))
    if spec.resource_claims:  # which claims and templates
        return msgspec.json.encode((*shape, pod.namespace, spec.resource_claims))
    return msgspec.json.encode(shape)


def labels_read(plugins: Iterable[object], method: str, arg: object) -> tuple[str, ...] | None:
    """The node labels each of `plugins` says it reads (its `method(arg)`), in order, where each
    says so; None where one has no such method or answers None (it reads more of a node)."""
    keys: dict[str, None] = {}
    for pl in plugins:
        ask = getattr(pl, method, None)
        found = ask(arg) if ask is not None else None
        if found is None:
            return None
        keys.update(dict.fromkeys(found))
    return tuple(keys)


def _signature(pod: Pod) -> bytes:
    aff = pod.spec.affinity
    return msgspec.json.encode((pod.spec.node_name, pod.spec.tolerations, pod.spec.node_selector,
                                aff.node_affinity if aff else None))


class StaticFilters:
    """The node-static plugins that lead a plugin list, with a memo of their verdicts.

    Only the leading ones: their verdict is the node's whenever they fail, because nothing runs
    before them. (A profile may order its filters otherwise; a node-static plugin after another one
    is then filtered in its place, like the others. Upstream's order puts all four first.)

    Nodes alike in all the plugins read of them for a signature (`node_reads`: some labels, with
    the taints and whether the node is cordoned) get one verdict, found once: a cluster's nodes
    fall in a few such groups, so a new signature's first pass over thousands of nodes runs the
    plugins a few dozen times."""

    def __init__(self, plugins: Sequence[FilterPlugin]) -> None:
        self.plugins: list[FilterPlugin] = []
        for p in plugins:
            if p.name not in NODE_STATIC_PLUGINS:
                break
            self.plugins.append(p)
        #: Their names: what callers leave out when they run the other filters.
        self.names = frozenset(p.name for p in self.plugins)
        #: Per signature: node name → (the Node it was found for, the verdict), and the group memo.
        self._memo: dict[bytes, _Memo] = {}
        #: The last pod asked about and its signature's memo (filtering asks about one pod, node
        #: after node).
        self._last: tuple[Pod | None, _Memo] = (None, _Memo(b"", None))

    def _of(self, pod: Pod) -> _Memo:
        last = self._last
        if last[0] is not pod:
            sig = _signature(pod)
            memo = self._memo.get(sig)
            if memo is None:
                memo = self._memo[sig] = _Memo(sig, self._reads(pod))
            last = self._last = (pod, memo)
        return last[1]

    def _reads(self, pod: Pod) -> tuple[str, ...] | None:
        """The node labels the plugins read for pods of `pod`'s signature (besides taints and
        whether the node is cordoned); None where one reads more (the node's name)."""
        return labels_read(self.plugins, "node_reads", pod)

    def signature(self, pod: Pod) -> bytes:
        """Everything the node-static plugins read of `pod`: pods with equal signatures get the
        same verdict on a node."""
        return self._of(pod).signature

    def memo_for(self, pod: Pod) -> dict[str, tuple[Node, Status]]:
        """The verdicts found for pods of `pod`'s signature: node name → (the Node, the verdict),
        valid while the node's object is that Node (`status` reads it so; a caller filtering many
        nodes may read it first and call `status` on a miss)."""
        return self._of(pod).nodes

    def status(self, cycle: CycleState, pod: Pod, info: NodeInfo) -> Status:
        """What the static plugins say about `info` (first failure, or SUCCESS), from the memo when
        the same pod shape met the same node object, or a node alike in what they read, before."""
        memo = self._of(pod)
        node = info.node
        hit = memo.nodes.get(info.name)
        if hit is not None and hit[0] is node:
            return hit[1]
        keys = memo.reads
        if keys is None:
            st = self._run(cycle, pod, info)
        else:
            labels = node.metadata.labels
            group = (node.spec.unschedulable, node.spec.taints, *[labels.get(k) for k in keys])
            st = memo.groups.get(group)
            if st is None:
                st = memo.groups[group] = self._run(cycle, pod, info)
        memo.nodes[info.name] = (node, st)
        return st

    def _run(self, cycle: CycleState, pod: Pod, info: NodeInfo) -> Status:
        for pl in self.plugins:
            if pl.name in cycle.skip:
                continue
            st = pl.filter(cycle, pod, info)
            if not st.is_success:
                return st.with_plugin(pl.name)
        return SUCCESS


class _Memo:
    """One signature's verdicts: per node (`nodes`), and per group of nodes alike in what the
    plugins read of them (`groups`; none where `reads` is None)."""

    __slots__ = ("groups", "nodes", "reads", "signature")

    def __init__(self, signature: bytes, reads: tuple[str, ...] | None) -> None:
        self.signature = signature
        self.reads = reads
        self.nodes: dict[str, tuple[Node, Status]] = {}
        self.groups: dict[tuple, Status] = {}
