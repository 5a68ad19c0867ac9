"""Turning what the operator typed into objects of the loaded state, the way kubectl reads it:
a pod as `NAME` (in -n, else the context's namespace), `pod/NAME` or `NS/NAME`; a workload as
kubectl's `TYPE/NAME` (`deploy/web`, `sts/db`, `job/train`, ... in -n), resolved to its pods by
their owner references; a gang as `podgroup/NAME` (`pg`, `podgroups`; with the group of one of the
three PodGroup APIs, `podgroup.scheduling.x-k8s.io/NAME`, only that API's), resolved to its members
(`ClusterState.gangs`), and the gang a pod or workload belongs to (`gang_of_target`); a node as
`NODE` or `node/NODE`. What is unknown is named as what it is — a namespace, a pod, a workload, a
gang, a node — in an `InputError` (exit 2), with the closest names as a suggestion.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from kresched.errors import InputError
from kresched.model.cluster import ClusterState
from kresched.model.gangs import Gang, declared_group
from kresched.model.objects import Node, Pod

__all__ = ["Workload", "check_namespace", "close_names", "gang_of_target", "is_resource_type", "none_pending",
           "parse_target", "pod_key", "resolve_pod", "resolve_nodes", "pick_pod_ref", "workload_pods"]

#: kubectl's spellings of the resource in `TYPE/NAME`.
_POD_TYPES = {"pod", "pods", "po"}
_NODE_TYPES = {"node", "nodes", "no"}
#: The workload kinds kubectl names in `TYPE/NAME`, by every spelling `kubectl api-resources` lists.
WORKLOAD_TYPES = {
    **dict.fromkeys(("deployment", "deployments", "deploy"), "Deployment"),
    **dict.fromkeys(("replicaset", "replicasets", "rs"), "ReplicaSet"),
    **dict.fromkeys(("statefulset", "statefulsets", "sts"), "StatefulSet"),
    **dict.fromkeys(("daemonset", "daemonsets", "ds"), "DaemonSet"),
    **dict.fromkeys(("job", "jobs"), "Job"),
    **dict.fromkeys(("cronjob", "cronjobs", "cj"), "CronJob"),
    **dict.fromkeys(("replicationcontroller", "replicationcontrollers", "rc"), "ReplicationController"),
}


#: kubectl's spellings of a PodGroup (each of the three APIs names its resource `podgroups`, short `pg`;
#: coscheduling's CRD also `pgs`).
_GANG_TYPES = {"podgroup", "podgroups", "pg", "pgs"}
#: The three PodGroup APIs by group: (version, `Gang.flavor`).
_GANG_GROUPS = {"scheduling.k8s.io": ("v1alpha2", "workload"), "scheduling.x-k8s.io": ("v1alpha1", "coscheduling"),
                "scheduling.volcano.sh": ("v1beta1", "volcano")}


@dataclass(frozen=True)
class Workload:
    """A workload named as kubectl names one (`deploy/web` in -n shop); a gang (`podgroup/train`:
    kind `PodGroup`, with `flavor` when the group was given, `podgroup.scheduling.x-k8s.io/train`)."""

    kind: str
    namespace: str
    name: str
    #: For a PodGroup named with its group: the one API it may be of (`Gang.flavor`); "" any.
    flavor: str = ""

    def __str__(self) -> str:
        return f"{self.kind.lower()} {self.namespace}/{self.name}"


#: The API group of each kind kresched names in `TYPE.GROUP/NAME` ("" the core group); every one is at v1.
_GROUPS = {"Pod": "", "Node": "", "ReplicationController": "", "Deployment": "apps", "ReplicaSet": "apps",
           "StatefulSet": "apps", "DaemonSet": "apps", "Job": "batch", "CronJob": "batch"}


def _kind_of(resource: str) -> str | None:
    """The kind `resource` (as typed, any spelling) names: a workload's, `Pod`, `Node`, or None."""
    low = resource.lower()
    if low in WORKLOAD_TYPES:
        return WORKLOAD_TYPES[low]
    return "Pod" if low in _POD_TYPES else "Node" if low in _NODE_TYPES else None


def is_resource_type(text: str) -> bool:
    """Whether `text` names a type kresched knows (`pod`, `deploy`, `deployments.apps`, `node`, `pg`, ...),
    in any of kubectl's spellings, whatever group it names (`resource_type` checks that)."""
    resource = text.partition(".")[0]
    return _kind_of(resource) is not None or resource.lower() in _GANG_TYPES


def resource_type(text: str) -> str:
    """kubectl's `TYPE`, `TYPE.GROUP` or `TYPE.VERSION.GROUP` (`deployment.apps`,
    `deployments.v1.apps`; apimachinery's `ParseResourceArg`) → the `TYPE` alone, when the group
    (and version) are the kind's; `text` unchanged when it names no kind kresched knows (a
    namespace, in `NS/NAME`). An `InputError` for a known type in another group."""
    resource, dot, rest = text.partition(".")
    if not dot:
        return text
    kind = _kind_of(resource)
    if kind is None:
        return text
    version, dot, group = rest.partition(".")
    if not dot:
        version, group = "v1", rest
    if group == _GROUPS[kind] and version == "v1":
        return resource
    where = f"{resource}.{_GROUPS[kind]}" if _GROUPS[kind] else resource
    raise InputError(f'the server doesn\'t have a resource type "{text}" ({kind} is {where})')


def _gang_type(text: str) -> str | None:
    """The flavor (`Gang.flavor`, "" for any) a PodGroup `TYPE`, `TYPE.GROUP` or
    `TYPE.VERSION.GROUP` names; None when `text` names no PodGroup. An `InputError` for a PodGroup
    of a group kresched does not read, or of a version its group does not serve."""
    resource, dot, rest = text.partition(".")
    if resource.lower() not in _GANG_TYPES:
        return None
    if not dot:
        return ""
    version, dot, group = rest.partition(".")
    if not dot or (group not in _GANG_GROUPS and rest in _GANG_GROUPS):
        version, group = "", rest
    served = _GANG_GROUPS.get(group)
    if served is None or version not in ("", served[0]):
        known = ", ".join(f"{resource}.{g}" for g in _GANG_GROUPS)
        raise InputError(f'the server doesn\'t have a resource type "{text}" (PodGroups kresched reads: {known})')
    return served[1]


def parse_target(ref: str, namespace: str, namespace_given: bool = False) -> str | Workload:
    """A pod's key (`ns/name`) or the `Workload` that `TYPE/NAME` names (in `namespace`); `TYPE` may
    carry its group as kubectl's does (`deployment.apps/web`, `podgroup.scheduling.x-k8s.io/train`).
    A namespace never has a dot."""
    kind, sep, name = ref.partition("/")
    flavor = _gang_type(kind) if sep else None
    if flavor is not None and name and "/" not in name:
        return Workload("PodGroup", namespace, name, flavor)
    if sep:
        kind = resource_type(kind)
        ref = f"{kind}/{name}"
    if sep and name and "/" not in name and kind.lower() in WORKLOAD_TYPES:
        return Workload(WORKLOAD_TYPES[kind.lower()], namespace, name)
    return pod_key(ref, namespace, namespace_given)


def check_namespace(state: ClusterState, namespace: str, source: str) -> None:
    """An `InputError` naming the namespace when the state's Namespace objects do not have it, with
    the closest names (a state without Namespace objects cannot tell: nothing is said)."""
    known = {n.name for n in state.namespaces}
    if not known or namespace in known:
        return
    close = difflib.get_close_matches(namespace, sorted(known), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(f"namespace {namespace} not found in {source}{hint}")


def workload_pods(state: ClusterState, w: Workload, source: str) -> list[Pod]:
    """The pods `w` runs, found through their owner references as the controllers set them: a
    Deployment's through the ReplicaSets it owns (in a state without ReplicaSet objects, those
    named `<deployment>-<pod-template-hash>`, as the Deployment controller names them); a CronJob's
    through its Jobs (named `<cronjob>-<scheduled time>`); every other kind's directly. An
    `InputError` naming the workload when it has no pods in the state."""
    check_namespace(state, w.namespace, source)
    if w.kind == "PodGroup":
        return list(_gang(state, w, source).members)
    owned: list[tuple[str, str, Pod]] = [(c.kind, c.name, p) for p in state.pods
                                          if p.namespace == w.namespace and (c := p.controller) is not None]
    if w.kind == "Deployment":
        sets = {r.metadata.name for r in state.workloads if type(r).__name__ == "ReplicaSet"
                and r.metadata.namespace == w.namespace
                and any(o.controller and o.kind == "Deployment" and o.name == w.name
                        for o in r.metadata.owner_references)}
        found = [p for kind, name, p in owned if kind == "ReplicaSet"
                 and (name in sets or name == f"{w.name}-{p.labels.get('pod-template-hash', '')}")]
    elif w.kind == "CronJob":
        job = re.compile(re.escape(w.name) + r"-[0-9]+")
        found = [p for kind, name, p in owned if kind == "Job" and job.fullmatch(name)]
    else:
        found = [p for kind, name, p in owned if (kind, name) == (w.kind, w.name)]
    if found:
        return found
    names = sorted({n for _, _, p in owned if (n := _owner_name(p, w.kind)) is not None})
    close = difflib.get_close_matches(w.name, names, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(f'{w.kind.lower()}/{c}' for c in close)}?" if close else ""
    if not close:
        # As a pod's: the same name in another namespace.
        elsewhere = sorted({p.namespace for p in state.pods if p.namespace != w.namespace
                            and _owner_name(p, w.kind) == w.name})
        if elsewhere:
            hint = "; did you mean " + " or ".join(f"{w.kind.lower()}/{w.name} -n {ns}" for ns in elsewhere[:3]) + "?"
    raise InputError(f"{w} not found in {source}: no pods of it there{hint}")


def _gang(state: ClusterState, w: Workload, source: str) -> Gang:
    """The gang `podgroup/NAME` names: the group its members declare (of any API, or of the one its
    group names). An `InputError` when no pod declares it, or when pods of two APIs declare groups
    of that name (the group tells them apart)."""
    found = [g for g in state.gangs.find(w.namespace, w.name) if not w.flavor or g.flavor == w.flavor]
    if len(found) == 1:
        return found[0]
    if found:
        groups = {f: g for g, (_, f) in _GANG_GROUPS.items()}
        spelt = " or ".join(f"podgroup.{groups[g.flavor]}/{w.name}" for g in found if g.flavor in groups)
        raise InputError(f"{w} names {len(found)} gangs ({', '.join(g.key + ' of ' + g.flavor for g in found)}): "
                         f"name one{', ' + spelt if spelt else ''}")
    names = sorted({name for (_, ns, name) in state.gangs.gangs if ns == w.namespace})
    close = close_names(w.name, names)
    hint = f"; did you mean {', '.join(f'podgroup/{c}' for c in close)}?" if close else ""
    if not close:
        elsewhere = sorted({ns for (_, ns, name) in state.gangs.gangs if ns != w.namespace and name == w.name})
        if elsewhere:
            hint = "; did you mean " + " or ".join(f"podgroup/{w.name} -n {ns}" for ns in elsewhere[:3]) + "?"
    raise InputError(f"{w} not found in {source}: no pod declares itself a member of it{hint}")


def gang_of_target(state: ClusterState, target: Pod | Workload, source: str) -> Gang | None:
    """The gang `target` names or belongs to: a pod's (None when it is no gang's member); a
    PodGroup's; a workload's (`job/train`) when its pods are one gang's members (None when none
    is; an `InputError` when they are members of several)."""
    if isinstance(target, Pod):
        return state.gangs.gang_of(target) if declared_group(target) is not None else None
    if target.kind == "PodGroup":
        check_namespace(state, target.namespace, source)
        return _gang(state, target, source)
    gangs = {g.key: g for p in workload_pods(state, target, source)
             if declared_group(p) is not None and (g := state.gangs.gang_of(p)) is not None}
    if len(gangs) > 1:
        raise InputError(f"the pods of {target} are members of {len(gangs)} gangs ({', '.join(sorted(gangs))}): "
                         "name one, podgroup/NAME")
    return next(iter(gangs.values()), None)


def none_pending(w: Workload, pods: list[Pod]) -> str:
    """`deployment shop/cart has 2 pods, none Pending (2 Running)`."""
    from collections import Counter

    phases = Counter("held by scheduling gates" if p.is_gated else p.status.phase or "Unknown" for p in pods)
    n = len(pods)
    return (f"{w} has {n} pod{'' if n == 1 else 's'}, none Pending ("
            + ", ".join(f"{k} {phase}" for phase, k in phases.items()) + ")")


def _owner_name(pod: Pod, kind: str) -> str | None:
    """The name of the workload of `kind` that runs `pod`, as far as its owner reference tells."""
    c = pod.controller
    if c is None:
        return None
    if kind == "Deployment" and c.kind == "ReplicaSet":
        h = pod.labels.get("pod-template-hash")
        return c.name.removesuffix(f"-{h}") if h and c.name.endswith(f"-{h}") else None
    if kind == "CronJob" and c.kind == "Job":
        m = re.fullmatch(r"(.+)-[0-9]+", c.name)
        return m.group(1) if m else None
    return c.name if c.kind == kind else None


def pick_pod_ref(positional: str | None, option: str | None, required: bool) -> str | None:
    """The pod named either positionally (kubectl's way) or with --pod (kresched's first spelling)."""
    if positional and option and positional != option:
        raise InputError(f"two pods named: {positional} and --pod {option}; name one")
    if (positional is not None and not positional.strip()) or (option is not None and not option.strip()):
        # `--pod "$POD"` with an empty variable must not mean "every pending pod".
        raise InputError("the pod name is empty: POD, pod/NAME or NAMESPACE/NAME")
    ref = positional or option
    if ref is None and required:
        raise InputError("a pod is required: POD, pod/NAME or NAMESPACE/NAME (e.g. -n kube-system POD)")
    return ref


def pod_key(ref: str, namespace: str, namespace_given: bool = False) -> str:
    """`NAME`, `pod/NAME`, `NS/NAME` → `ns/name`. `NS/NAME` with a different -n is refused rather
    than guessed (`TYPE/NAME` of a workload is `parse_target`'s)."""
    parts = ref.split("/")
    if len(parts) == 1 and parts[0]:
        return f"{namespace}/{parts[0]}"
    if len(parts) == 2 and all(parts):
        kind, name = parts
        kind = resource_type(kind)
        if kind.lower() in _POD_TYPES:
            return f"{namespace}/{name}"
        if "." in kind:  # a namespace has no dot: a TYPE.GROUP kresched does not know
            raise InputError(f'the server doesn\'t have a resource type "{kind}"')
        if namespace_given and kind != namespace:
            raise InputError(f"pod {ref} is in namespace {kind}, but -n says {namespace}")
        return ref
    raise InputError(f"invalid pod {ref!r}: expected NAME, pod/NAME, NAMESPACE/NAME or TYPE/NAME (deploy/NAME, ...)")


def resolve_pod(state: ClusterState, ref: str, source: str, namespace: str = "default",
                namespace_given: bool = False) -> Pod:
    """The pod `ref` names; an `InputError` naming close matches when there is none (or naming the
    namespace, when that is what does not exist): a pod of that name in another namespace; the
    pods whose name begins with it (`metrics-server` of a Deployment's `metrics-server-5p9lfwkgvh-
    mkd72`: in the namespace first, else in any), with the workload of that name; else the closest
    names (`close_names`) in the namespace, else in any."""
    key = pod_key(ref, namespace, namespace_given)
    pod = state.pod(key)
    if pod is not None:
        return pod
    check_namespace(state, key.split("/", 1)[0], source)
    ns, name = key.split("/", 1)
    if is_resource_type(name):  # `explain pod`: kubectl's TYPE without its NAME
        raise InputError(f"pod {key} not found in {source}; {_type_not_name(name)}")
    elsewhere = sorted(p.key for p in state.pods if p.name == name)
    here = [p for p in state.pods if p.namespace == ns and p.name.startswith(name)]
    stem = here or [p for p in state.pods if p.name.startswith(name)]
    if elsewhere:
        hint = f"; did you mean {', '.join(elsewhere[:3])}?"
    elif stem:
        keys = sorted(p.key for p in stem)
        more = f" ({len(keys) - 3} more)" if len(keys) > 3 else ""
        hint = f"; did you mean {', '.join(keys[:3])}{more}{_workload_named(name, stem, ns)}?"
    else:
        close = [f"{ns}/{c}" for c in close_names(name, [p.name for p in state.pods if p.namespace == ns])]
        if not close:
            near = set(close_names(name, [p.name for p in state.pods]))
            close = sorted(p.key for p in state.pods if p.name in near)[:3]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        if not close and not any(p.namespace == ns for p in state.pods):
            hint = f" (it has no pods in namespace {ns})"
    raise InputError(f"pod {key} not found in {source}{hint}")


def _type_not_name(typed: str) -> str:
    """What to say of kubectl's TYPE typed where a name was expected (`explain pod`)."""
    return f"{typed} is a type, not a name: give the name too ({typed} NAME, or {typed}/NAME)"


def _workload_named(name: str, pods: list[Pod], namespace: str) -> str:
    """` (or deployment/NAME -n NS)` when `name` is the name of the workload that runs some of
    `pods` (the name the operator typed was the workload's); "" otherwise."""
    for kind in ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet", "ReplicationController"):
        owned = sorted({p.namespace for p in pods if _owner_name(p, kind) == name})
        if owned:
            where = "" if owned[0] == namespace else f" -n {owned[0]}"
            return f" (or {kind.lower()}/{name}{where})"
    return ""


def close_names(typed: str, names: list[str], n: int = 3) -> list[str]:
    """The names `typed` most likely meant, closest first: those it begins (`worker-b` of
    `worker-b1`, `worker-b2`, `worker-b3`; `metrics-server` of `metrics-server-5p9lfwkgvh-mkd72`: a
    prefix is far closer than any edit distance), else those whose name or beginning is a few edits
    away (`metrics-servre`), never one much further than the closest."""
    pool = sorted(set(names))
    prefixed = [x for x in pool if x.startswith(typed)]
    if prefixed:
        return prefixed[:n]
    scored = sorted(((max(_ratio(typed, x), _ratio(typed, x[:len(typed)])), x) for x in pool), key=lambda t: -t[0])
    best = scored[0][0] if scored else 0.0
    return [x for score, x in scored if score >= max(0.6, best - 0.15)][:n]


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def node_name(ref: str) -> str:
    kind, sep, name = ref.partition("/")
    kind = resource_type(kind) if sep else kind
    if sep and kind.lower() in _NODE_TYPES and name:
        return name
    if sep:
        raise InputError(f"invalid node {ref!r}: expected NODE or node/NODE")
    return ref


def resolve_nodes(state: ClusterState, refs: list[str]) -> list[Node]:
    """The nodes `refs` name, in order, without repeats; unknown ones are one `InputError`, with
    the close names of each (`close_names`). kubectl's `TYPE NAME...` (`drain node worker-b3`,
    as `kubectl get node worker-b3` reads it) names the nodes after the type, unless a node is
    called so."""
    if len(refs) > 1 and refs[0].lower() in _NODE_TYPES and refs[0] not in state.node_by_name:
        refs = refs[1:]
    names = list(dict.fromkeys(node_name(r) for r in refs))
    unknown = [n for n in names if n not in state.node_by_name]
    if len(unknown) == 1 and unknown[0].lower() in _NODE_TYPES:  # `drain node`: the TYPE without a NAME
        raise InputError(f"node {unknown[0]} not found; {_type_not_name(unknown[0])}")
    if unknown:
        hints = list(dict.fromkeys(c for n in unknown for c in close_names(n, list(state.node_by_name))))
        hint = f"; did you mean {', '.join(hints)}?" if hints else ""
        raise InputError(f"node{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} not found{hint}")
    return [state.node_by_name[n] for n in names]
