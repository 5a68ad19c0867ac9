"""Scheduler extenders as kube-scheduler v1.36 calls them (pkg/scheduler/extender.go `HTTPExtender`;
schedule_one.go `findNodesThatPassExtenders` and `prioritizeNodes`; framework/preemption
`callExtenders`; k8s.io/kube-scheduler/extender/v1 for the wire types).

Owns: which pods an extender manages (`is_interested`), the requests (`ExtenderArgs` with whole
`Nodes` or, for a `nodeCacheCapable` extender, `NodeNames`; `ExtenderPreemptionArgs` with
`NodeNameToVictims` or `NodeNameToMetaVictims`), reading the answers as Go's decoder reads them
(field names matched case-insensitively), and merging them the scheduler's way:

- filter (`pass_extenders`): after the filter plugins, only the feasible nodes are sent, extender
  after extender, each seeing what the last one kept; `FailedNodes` become Unschedulable statuses,
  `FailedAndUnresolvableNodes` UnschedulableAndUnresolvable ones (the latter win), so they count
  in the `0/N nodes are available` message and decide where preemption may help. An error of a
  non-ignorable extender fails the pod with that error (the scheduler then writes the error, not a
  FitError, and does not preempt); an ignorable one is skipped.
- prioritize (`extender_scores`): each score (0–10) × the extender's weight × 10 (`MaxNodeScore /
  MaxExtenderPriority`) is added to the node's total; errors are ignored, ignorable or not.
- preempt (`process_preemption`): the candidates (node → victims) go to every interested extender
  with a preempt verb in turn; what it answers replaces them.
- bind is never called: kresched never binds.

The HTTP call itself is a port (`ExtenderTransport`) the caller injects — `kresched.sources.
extenders.HttpTransport` in the CLI, a recording or failing one in tests — so this module stays
pure: no I/O of its own, no clock. So are the objects sent (`ServedLookup`): the scheduler sends
Pods and Nodes whole, as its informers hold them, every field an extender may read, and kresched's
models skip the fields kresched does not read; `kresched.sources.served.ServedObjects` keeps them
as the API server served them while extenders are configured. An object nothing served (a
what-if's pod, or without that store) is sent as kresched models it. The order is
`buildExtenders`': non-ignorable extenders first, then the ignorable ones, each group in the
configuration's order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import msgspec

from kresched.model.objects import Node, Pod, PodDisruptionBudget
from kresched.sched.config.types import Extender
from kresched.sched.diagnosis import Diagnosis
from kresched.sched.framework import Code, CycleState, FilterPlugin, Snapshot, Status
from kresched.sched.node_info import NodeInfo

__all__ = [
    "MAX_EXTENDER_PRIORITY",
    "NO_CANDIDATE",
    "ExtenderError",
    "ExtenderScores",
    "ExtenderTransport",
    "Extenders",
    "ServedLookup",
    "Preemption",
    "extender_scores",
    "is_interested",
    "pass_extenders",
    "process_preemption",
    "scheduler_preemption",
    "verbs",
]

#: `extenderv1.MaxExtenderPriority`: an extender scores 0..10; the scheduler scales by 100 / 10.
MAX_EXTENDER_PRIORITY = 10
_SCALE = 100 // MAX_EXTENDER_PRIORITY


class ExtenderError(Exception):
    """An extender call that failed, worded as kube-scheduler's error for it is."""


class ExtenderTransport(Protocol):
    """How an extender is reached: `HTTPExtender.send` without the encoding."""

    def post(self, extender: Extender, verb: str, body: bytes) -> bytes:
        """POST `body` (JSON) to `urlPrefix` (trailing slashes trimmed) + `/` + `verb`; the body
        of a 200 answer. Raises `ExtenderError` worded as Go's client words it."""
        ...


class ServedLookup(Protocol):
    """Pods and Nodes as the API server served them (`kresched.sources.served.ServedObjects`), as
    the scheduler would send them; None for an object that never was."""

    def pod(self, pod: Pod) -> msgspec.Raw | None: ...

    def node(self, node: Node) -> msgspec.Raw | None: ...


@dataclass(frozen=True)
class Extenders:
    """The configuration's extenders that kresched calls, in the scheduler's order, the transport
    to them, and the objects as served (None: every object is sent as kresched models it)."""

    items: tuple[Extender, ...]
    transport: ExtenderTransport
    served: ServedLookup | None = None

    @classmethod
    def of(cls, extenders: Sequence[Extender], transport: ExtenderTransport,
           served: ServedLookup | None = None) -> Extenders:
        """`buildExtenders`' order: the ignorable extenders go to the tail."""
        return cls((*[e for e in extenders if not e.ignorable], *[e for e in extenders if e.ignorable]), transport,
                   served)

    def filters_for(self, pod: Pod) -> list[Extender]:
        return [e for e in self.items if e.filter_verb and is_interested(e, pod)]

    def prioritizers_for(self, pod: Pod) -> list[Extender]:
        return [e for e in self.items if e.prioritize_verb and is_interested(e, pod)]

    def preempters_for(self, pod: Pod) -> list[Extender]:
        return [e for e in self.items if e.preempt_verb and is_interested(e, pod)]


def verbs(ext: Extender) -> list[str]:
    """The verbs `ext` names, for messages."""
    return [v for v, on in (("filter", ext.filter_verb), ("prioritize", ext.prioritize_verb),
                            ("preempt", ext.preempt_verb), ("bind", ext.bind_verb)) if on]


def is_interested(ext: Extender, pod: Pod) -> bool:
    """`IsInterested`: an extender without managed resources manages every pod; else a pod one of
    whose containers or init containers requests or limits one of them."""
    if not ext.managed_resources:
        return True
    managed = set(ext.managed_resources)
    for c in (*pod.spec.containers, *pod.spec.init_containers):
        if managed.intersection(c.resources.requests) or managed.intersection(c.resources.limits):
            return True
    return False


# -- wire --------------------------------------------------------------------------------------
def _object(obj: Pod | Node, served: ServedLookup | None) -> msgspec.Raw:
    """A Pod or Node as the scheduler sends it: the object from its informer, whole, whose `kind`
    is empty — as it was served when `served` has it, else as kresched models it (its structs write
    their kind first: it is cut)."""
    if served is not None:
        whole = served.pod(obj) if isinstance(obj, Pod) else served.node(obj)
        if whole is not None:
            return whole
    data = msgspec.json.encode(obj)
    head = b'{"kind":"' + type(obj).__name__.encode() + b'",'
    return msgspec.Raw(b"{" + data[len(head):] if data.startswith(head) else data)


def _nodes_args(ext: Extender, pod: Pod, nodes: Sequence[NodeInfo], served: ServedLookup | None) -> bytes:
    """`ExtenderArgs` (Go field names, no JSON tags): the pod, and the nodes whole or by name."""
    enc = msgspec.json.encode
    if ext.node_cache_capable:
        return enc({"Pod": _object(pod, served), "Nodes": None, "NodeNames": [n.name for n in nodes]})
    items = [_object(n.node, served) for n in nodes]
    return enc({"Pod": _object(pod, served), "Nodes": {"metadata": {}, "items": items}, "NodeNames": None})


def _call(transport: ExtenderTransport, ext: Extender, verb: str, body: bytes) -> Any:
    answer = transport.post(ext, verb, body)
    try:
        return msgspec.json.decode(answer)
    except msgspec.DecodeError as e:
        raise ExtenderError(f"invalid JSON from extender {ext.url_prefix} ({verb}): {e}") from None


def _get(obj: Any, name: str) -> Any:
    """`obj[name]` as Go's decoder finds a struct field: the exact key, else any key equal to it
    ignoring case (the last one, as Go keeps the last value it decodes)."""
    if not isinstance(obj, dict):
        return None
    if name in obj:
        return obj[name]
    lower = name.lower()
    found = None
    for k, v in obj.items():
        if isinstance(k, str) and k.lower() == lower:
            found = v
    return found


def _type_error(ext: Extender, verb: str, what: str, value: Any) -> ExtenderError:
    return ExtenderError(f"json: cannot unmarshal {type(value).__name__} into {what} "
                         f"(extender {ext.url_prefix}, {verb})")


def _string_map(ext: Extender, verb: str, value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _type_error(ext, verb, what, value)
    return value


# -- filter ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Filtered:
    names: list[str]
    failed: dict[str, str]
    unresolvable: dict[str, str]
    #: Whole Nodes came back (not names): the scheduler scores NodeInfos made from them, podless.
    whole_nodes: bool


def _filter(transport: ExtenderTransport, ext: Extender, pod: Pod, nodes: Sequence[NodeInfo],
            served: ServedLookup | None) -> _Filtered:
    """`HTTPExtender.Filter`."""
    verb = ext.filter_verb
    result = _call(transport, ext, verb, _nodes_args(ext, pod, nodes, served))
    if result is not None and not isinstance(result, dict):
        raise _type_error(ext, verb, "Go value of type v1.ExtenderFilterResult", result)
    error = _get(result, "Error")
    if error:
        raise ExtenderError(str(error))
    failed = _string_map(ext, verb, _get(result, "FailedNodes"), "v1.FailedNodesMap")
    unresolvable = _string_map(ext, verb, _get(result, "FailedAndUnresolvableNodes"), "v1.FailedNodesMap")
    names_raw, nodes_raw = _get(result, "NodeNames"), _get(result, "Nodes")
    if ext.node_cache_capable and names_raw is not None:
        if not isinstance(names_raw, list) or not all(isinstance(n, str) for n in names_raw):
            raise _type_error(ext, verb, "Go struct field ExtenderFilterResult.NodeNames of type []string", names_raw)
        given = {n.name for n in nodes}
        for name in names_raw:
            if name not in given:
                raise ExtenderError(f"extender {_q(ext.url_prefix)} claims a filtered node {_q(name)} which is not "
                                    "found in the input node list")
        return _Filtered(list(names_raw), failed, unresolvable, False)
    if nodes_raw is not None:
        items = _get(nodes_raw, "items")
        if items is not None and not isinstance(items, list):
            raise _type_error(ext, verb, "Go struct field NodeList.items of type []v1.Node", items)
        names = []
        for item in items or ():
            name = _get(_get(item, "metadata"), "name")
            names.append(name if isinstance(name, str) else "")
        return _Filtered(names, failed, unresolvable, True)
    return _Filtered([], failed, unresolvable, False)


def pass_extenders(exts: Extenders | None, pod: Pod, snapshot: Snapshot, diag: Diagnosis) -> Diagnosis:
    """`findNodesThatPassExtenders` on what the filter plugins found (`diag`): a new Diagnosis
    (`diag` is left as it is: a filter memo may hold it) with the nodes the extenders kept, in
    the order the last one answered, and their rejections among the statuses. When a
    non-ignorable extender fails, the Diagnosis carries its error (`error`) and no feasible node;
    a skipped ignorable one is named in `notes`.

    Names the scheduler has no node for are left out: it would set a status for them, but such a
    status only adds a count to its message for a node that does not exist."""
    if exts is None or not diag.feasible:
        return diag
    filters = exts.filters_for(pod)
    if not filters:
        return diag
    feasible = list(diag.feasible)
    statuses = dict(diag.node_to_status)
    notes = list(diag.notes)
    bare = diag.extender_nodes
    for ext in filters:
        if not feasible:
            break
        try:
            got = _filter(exts.transport, ext, pod, [snapshot.by_name[n] for n in feasible if n in snapshot.by_name],
                          exts.served)
        except ExtenderError as e:
            if ext.ignorable:
                notes.append(f"extender {ext.url_prefix} ({ext.filter_verb}) failed and is ignorable, so the scheduler "
                             f"skips it: {e}")
                continue
            return replace(diag, feasible=[], feasible_set=frozenset(), node_to_status=statuses, reason_counts=None,
                           notes=tuple(notes), error=str(e))
        for name, msg in got.unresolvable.items():
            if name in snapshot.by_name:
                statuses[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,), _plugin(ext))
        for name, msg in got.failed.items():
            if name in snapshot.by_name and name not in got.unresolvable:
                statuses[name] = Status(Code.UNSCHEDULABLE, (msg,), _plugin(ext))
        feasible = [n for n in got.names if n in snapshot.by_name]
        bare = got.whole_nodes
    return replace(diag, feasible=feasible, feasible_set=frozenset(feasible), node_to_status=statuses,
                   reason_counts=None, notes=tuple(notes), extender_nodes=bare)


def _q(text: str) -> str:
    """Go's `%q` for the strings these messages quote (JSON's escapes are Go's for them)."""
    return msgspec.json.encode(text).decode()


def _plugin(ext: Extender) -> str:
    """The name a node's status is said to come from (upstream's status names no plugin; the
    extender's `Name()` is its URL prefix)."""
    return f"extender {ext.url_prefix}"


# -- prioritize --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExtenderScores:
    """What the prioritizing extenders added: per extender (its URL prefix, weight, and each
    node's score as answered, 0 where it gave none), and what failed (the scheduler ignores it)."""

    columns: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    notes: tuple[str, ...] = ()

    def totals(self, n: int) -> list[int]:
        """Each node's extender total: score × weight × 10, summed."""
        out = [0] * n
        for _, weight, scores in self.columns:
            out = [t + s * weight * _SCALE for t, s in zip(out, scores, strict=True)]
        return out


def extender_scores(exts: Extenders | None, pod: Pod, nodes: Sequence[NodeInfo]) -> ExtenderScores:
    """`prioritizeNodes`' extender part (the scheduler runs it only for two or more feasible
    nodes): each interested extender with a prioritize verb scores `nodes`; a node's score counts
    once per entry of the answer that names it (as the scheduler adds them up), a name not among
    `nodes` counts nowhere. An error only costs that extender's scores."""
    if exts is None:
        return ExtenderScores()
    columns = []
    notes = []
    index = {info.name: i for i, info in enumerate(nodes)}
    for ext in exts.prioritizers_for(pod):
        verb = ext.prioritize_verb
        try:
            result = _call(exts.transport, ext, verb, _nodes_args(ext, pod, nodes, exts.served))
            if result is not None and not isinstance(result, list):
                raise _type_error(ext, verb, "Go value of type v1.HostPriorityList", result)
            scores = [0] * len(nodes)
            for entry in result or ():
                host, score = _get(entry, "Host"), _get(entry, "Score")
                if score is None:
                    score = 0
                if isinstance(score, bool) or not isinstance(score, int) or (host is not None
                                                                             and not isinstance(host, str)):
                    raise _type_error(ext, verb, "Go struct field HostPriority of type v1.HostPriority", entry)
                if host in index:
                    scores[index[host]] += score
        except ExtenderError as e:
            notes.append(f"extender {ext.url_prefix} ({verb}) failed, so the scheduler scores without it: {e}")
            continue
        columns.append((ext.url_prefix, ext.weight, tuple(scores)))
    return ExtenderScores(tuple(columns), tuple(notes))


# -- preempt -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Preemption:
    """What the preempting extenders made of the candidates: node → (victims, PDB violations)
    they keep (`victims`), or the error that stops preemption (`error`), and the ignorable
    extenders skipped (`notes`). `vetted`: some extender was asked."""

    victims: dict[str, tuple[tuple[Pod, ...], int]] = field(default_factory=dict)
    error: str = ""
    notes: tuple[str, ...] = ()
    vetted: bool = False


def process_preemption(exts: Extenders | None, pod: Pod, candidates: Mapping[str, tuple[Sequence[Pod], int]],
                       snapshot: Snapshot) -> Preemption:
    """`callExtenders`: `candidates` (node → its victims and how many PDBs their eviction
    violates) go to each interested extender with a preempt verb (`ProcessPreemption`), whole
    pods, or only their UIDs to a `nodeCacheCapable` one; its answer (`NodeNameToMetaVictims`,
    UIDs of pods on those nodes) replaces them for the next. An answer naming a node without
    victims is an error, or that node is dropped for an ignorable extender; an error of a
    non-ignorable extender stops preemption, an ignorable one is skipped."""
    current = {n: (tuple(v), k) for n, (v, k) in candidates.items()}
    if exts is None or not current:
        return Preemption(current)
    notes: list[str] = []
    vetted = False
    for ext in exts.preempters_for(pod):
        vetted = True
        try:
            answer = _preempt(exts.transport, ext, pod, current, snapshot, exts.served)
        except ExtenderError as e:
            if ext.ignorable:
                notes.append(f"extender {ext.url_prefix} ({ext.preempt_verb}) failed and is ignorable, so the "
                             f"scheduler skips it: {e}")
                continue
            return Preemption({}, str(e), tuple(notes), True)
        for name in list(answer):
            if not answer[name][0]:
                if ext.ignorable:
                    notes.append(f"extender {ext.url_prefix} ({ext.preempt_verb}) named node {name} without "
                                 "victims; it is ignorable, so the scheduler drops that node")
                    del answer[name]
                    continue
                return Preemption({}, f"expected at least one victim pod on node {_q(name)}", tuple(notes), True)
        current = answer
        if not current:
            break
    return Preemption(current, "", tuple(notes), vetted)


def _preempt(transport: ExtenderTransport, ext: Extender, pod: Pod,
             victims: Mapping[str, tuple[tuple[Pod, ...], int]], snapshot: Snapshot, served: ServedLookup | None
             ) -> dict[str, tuple[tuple[Pod, ...], int]]:
    """`HTTPExtender.ProcessPreemption` and `convertToVictims`."""
    enc = msgspec.json.encode
    verb = ext.preempt_verb
    if ext.node_cache_capable:
        meta = {n: {"Pods": [{"UID": p.uid} for p in pods], "NumPDBViolations": k} for n, (pods, k) in victims.items()}
        body = enc({"Pod": _object(pod, served), "NodeNameToVictims": None, "NodeNameToMetaVictims": meta})
    else:
        whole = {n: {"Pods": [_object(p, served) for p in pods], "NumPDBViolations": k}
                 for n, (pods, k) in victims.items()}
        body = enc({"Pod": _object(pod, served), "NodeNameToVictims": whole, "NodeNameToMetaVictims": None})
    result = _call(transport, ext, verb, body)
    if result is not None and not isinstance(result, dict):
        raise _type_error(ext, verb, "Go value of type v1.ExtenderPreemptionResult", result)
    meta_out = _get(result, "NodeNameToMetaVictims")
    if meta_out is not None and not isinstance(meta_out, dict):
        raise _type_error(ext, verb, "Go struct field ExtenderPreemptionResult.NodeNameToMetaVictims", meta_out)
    out: dict[str, tuple[tuple[Pod, ...], int]] = {}
    for name, mv in (meta_out or {}).items():
        info = snapshot.by_name.get(name)
        if info is None:
            raise ExtenderError(f"nodeinfo not found for node name {_q(name)}")
        if mv is None:
            out[name] = ((), 0)
            continue
        pods_raw = _get(mv, "Pods")
        count = _get(mv, "NumPDBViolations") or 0
        if (pods_raw is not None and not isinstance(pods_raw, list)) or isinstance(count, bool) \
                or not isinstance(count, int):
            raise _type_error(ext, verb, "Go value of type v1.MetaVictims", mv)
        by_uid = {p.uid: p for p in info.pods}
        pods = []
        for mp in pods_raw or ():
            uid = _get(mp, "UID")
            found = by_uid.get(uid) if isinstance(uid, str) else None
            if found is None:
                raise ExtenderError(f"extender: {ext.url_prefix} claims to preempt pod (UID: &{{{uid}}}) on node: "
                                    f"{name}, but the pod is not found on that node")
            pods.append(found)
        out[name] = (tuple(pods), count)
    return out


#: `Preempt`'s words when no candidate is left (after the extenders, here).
NO_CANDIDATE = "no candidate node for preemption"


def scheduler_preemption(exts: Extenders | None, plugins: Sequence[FilterPlugin], pod: Pod, snapshot: Snapshot,
                         diag: Diagnosis, cycle: CycleState, nominated: Mapping[str, Sequence[Pod]],
                         pdbs: Sequence[PodDisruptionBudget]) -> tuple[str | None, str | None, tuple[str, ...]]:
    """What the scheduler's own preemption does once its preempt extenders have vetted its
    candidates, for a pod `preemption_message` found candidates for: (the text after
    `preemption: ` — None when a candidate is left and it preempts, `no candidate node for
    preemption` when none is —, the error that stops PostFilter instead — its message then ends
    with `preemption: <error>` alone —, the ignorable extenders skipped). The candidates are every
    node where evicting lower-priority pods makes room (`DryRunPreemption`, all of them: kresched
    cannot know the random offset a cluster above 100 candidate nodes samples from), each with the
    victims `SelectVictimsOnNode` keeps, PDBs counted the scheduler's way."""
    from kresched.sched.preemption import filter_pods_with_pdb_violation, potential_nodes, select_victims_on_node

    if exts is None or not exts.preempters_for(pod):
        return None, None, ()
    candidates: dict[str, tuple[Sequence[Pod], int]] = {}
    for info in potential_nodes(diag, snapshot):
        lower = [p for p in info.pods if p.priority < pod.priority]
        if not lower:
            continue
        sel = select_victims_on_node(plugins, cycle.clone(), pod, info.clone(), lower,
                                     lambda ps: filter_pods_with_pdb_violation(ps, pdbs),
                                     nominated.get(info.name, ()))
        if sel.status.is_success and sel.victims:
            candidates[info.name] = (sel.victims, sel.num_violating)
    answer = process_preemption(exts, pod, candidates, snapshot)
    if answer.error:
        return None, f"preemption: {answer.error}", answer.notes
    return (None if answer.victims else NO_CANDIDATE), None, answer.notes
