"""Manifests: the workloads a what-if plans for (`kresched plan -f FILE`, `preempt -f FILE`).

Owns reading `-f` as kubectl reads it — a file (JSON or YAML, several documents, `List`s), a
directory (its `*.json`, `*.yaml`, `*.yml` files in name order; with `-R` its subdirectories too),
`-` for stdin, and several `-f` — within the snapshot reader's limits (size, nesting, no FIFOs or
devices), and turning each workload into a `WorkloadSpec`: the workload's namespace (kubectl's
rule: the object's own, else `-n`, else the context's; an object's namespace that differs from an
explicit `-n` is kubectl's error), the API server's defaulting of the workload (`replicas: 1`,
`parallelism: 1`, a Job's generated selector, ...) and its validation where an operator's slip is
likely (the kind's apiVersion, a selector that does not match the template's labels, a Job's
restartPolicy), what the controller adds to every pod before it creates it (a Deployment's
`pod-template-hash`, a DaemonSet's tolerations, a Job's labels), and the API server's defaulting
and admission of that pod (`kresched.sources.admission`).

Services, PodDisruptionBudgets, PriorityClasses and Namespaces in the same files are kept too:
they change how the workloads are placed (default spreading, priority) and what may be evicted
later; so are the devices a workload brings (DeviceClasses, ResourceClaimTemplates and
ResourceClaims, in any served version of `resource.k8s.io`): its pods' claims are made from them;
and the PodGroups (of the three gang APIs) and `scheduling.k8s.io` Workloads, which make the
workloads' pods gangs (`kresched.model.gangs`). Other kinds (ConfigMaps, Secrets, a PodGroup or
Workload of another API group, ...) are named, not planned. Pure but for reading the files; no API
calls.
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from kresched.errors import InputError
from kresched.model.cluster import ClusterState
from kresched.model.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate
from kresched.model.gangs import (
    COSCHEDULING_API,
    GANG_KINDS,
    VOLCANO_API,
    WORKLOAD_API,
    PodGroup,
    SchedulingWorkload,
    is_gang_api,
)
from kresched.model.objects import Namespace, PodDisruptionBudget, PriorityClass, Service
from kresched.model.specs import LabelSelector
from kresched.model.storage import PersistentVolumeClaim
from kresched.model.workloads import CONTROLLER_API_VERSIONS, WORKLOAD_KINDS, WorkloadSpec
from kresched.sources.admission import Forbidden, stored_pod
from kresched.sources.decode import bad_byte, describe_error, json_error, yaml_documents
from kresched.sources.nulls import drop_nulls, is_null_error

__all__ = ["EXTENSIONS", "Document", "Manifests", "read_manifests", "safe_encode", "stable_digest", "stable_uid",
           "template_hash", "workloads_of"]

#: `-f demo`: the built-in demo manifests (kresched/demo/workloads.yaml), for `--snapshot demo`, unless
#: a file or directory of that name exists (then it is read, as kubectl would).
DEMO = "demo"
#: kubectl's `FileExtensions`: the files of a directory it reads.
EXTENSIONS = (".json", ".yaml", ".yml")

#: The API version each kind kresched reads from a manifest is served at (kubectl's REST mapping:
#: another version is `no matches for kind`).
API_VERSIONS: dict[str, str] = {
    **CONTROLLER_API_VERSIONS,
    "Service": "v1",
    "Namespace": "v1",
    "PodDisruptionBudget": "policy/v1",
    "PriorityClass": "scheduling.k8s.io/v1",
}
#: The versions of `resource.k8s.io` the API server serves (v1.34+); every one is read as v1.
DRA_API_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1")
_EXTRAS: dict[str, type] = {"Service": Service, "Namespace": Namespace, "PodDisruptionBudget": PodDisruptionBudget,
                            "PriorityClass": PriorityClass, "DeviceClass": DeviceClass,
                            "ResourceClaimTemplate": ResourceClaimTemplate, "ResourceClaim": ResourceClaim}
_CLUSTER_SCOPED = {"Namespace", "PriorityClass", "DeviceClass"}
_DRA_EXTRAS = frozenset({"DeviceClass", "ResourceClaimTemplate", "ResourceClaim"})
#: The version each gang kind is read in, by its API group (another group's is another kind: not
#: planned; another version of one of these groups is kubectl's `no matches for kind`).
_GANG_API_VERSIONS: dict[tuple[str, str], str] = {
    ("PodGroup", "scheduling.k8s.io"): WORKLOAD_API,
    ("PodGroup", "scheduling.x-k8s.io"): COSCHEDULING_API,
    ("PodGroup", "scheduling.volcano.sh"): VOLCANO_API,
    ("Workload", "scheduling.k8s.io"): WORKLOAD_API,
}


@dataclass(frozen=True)
class Document:
    """One object of the manifests: where it was read (`deploy.yaml (document 2)`, for messages),
    the object, generic, and the file it is in (`deploy.yaml`, `<stdin>`)."""

    origin: str
    obj: dict[str, Any]
    file: str = ""


@dataclass
class Manifests:
    """What `-f` held: the workloads, the other objects that change scheduling, and the kinds left out."""

    workloads: list[WorkloadSpec] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    namespaces: list[Namespace] = field(default_factory=list)
    #: The devices the workloads bring: their pods' claims are made from these.
    device_classes: list[DeviceClass] = field(default_factory=list)
    claim_templates: list[ResourceClaimTemplate] = field(default_factory=list)
    resource_claims: list[ResourceClaim] = field(default_factory=list)
    #: PodGroups of the three gang APIs and `scheduling.k8s.io/v1alpha2` Workloads (`kresched.model.gangs`).
    pod_groups: list[PodGroup] = field(default_factory=list)
    scheduling_workloads: list[SchedulingWorkload] = field(default_factory=list)
    #: `Kind ns/name` of the objects that are neither (ConfigMaps, Secrets, ...): not planned.
    ignored: list[str] = field(default_factory=list)


# -- reading ---------------------------------------------------------------------------------------


def read_manifests(paths: list[str], recursive: bool = False, stdin: BinaryIO | None = None) -> list[Document]:
    """Every object of the `-f` arguments, in order (a `List`'s items one by one)."""
    from kresched.sources.snapshot import _check_stdin, _read, _read_bounded, max_input_bytes

    limit = max_input_bytes()
    out: list[Document] = []
    read_stdin = False
    for spec in paths:
        if not spec:
            raise InputError("-f: an empty file name")
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", spec):
            raise InputError(f"-f {spec}: kresched does not fetch URLs; download the manifest and pass the file")
        if spec == "-":
            if read_stdin:
                raise InputError("-f -: standard input can be read only once")
            read_stdin = True
            import sys

            stream = stdin or sys.stdin.buffer
            _check_stdin(stream)
            out += _documents(_read_bounded(stream, "<stdin>", limit), "<stdin>")
            continue
        path = Path(spec)
        if spec == DEMO and not path.exists():
            from importlib import resources

            data = resources.files("kresched.demo").joinpath("workloads.yaml").read_bytes()
            out += _documents(data, "demo")
            continue
        if path.is_dir():
            files = _directory(path, recursive)
            if not files:
                raise InputError(f"-f {spec}: no *.json, *.yaml or *.yml files in this directory"
                                 + ("" if recursive else " (-R reads its subdirectories)"))
            for f in files:
                out += _documents(_read(f, limit), str(f))
            continue
        if not path.exists():
            raise InputError(f"-f {spec}: no such file or directory")
        out += _documents(_read(path, limit), spec)
    return out


def _directory(path: Path, recursive: bool) -> list[Path]:
    """kubectl's walk of a directory: regular files with its extensions, in lexical order; with `-R`,
    subdirectories too (symbolic links to directories are not followed, as `filepath.Walk`)."""
    found: list[Path] = []
    for entry in sorted(path.iterdir(), key=lambda p: p.name):
        if entry.is_dir() and not entry.is_symlink():
            if recursive:
                found += _directory(entry, recursive)
        elif entry.suffix in EXTENSIONS and entry.is_file():
            found.append(entry)
    return found


def _documents(data: Any, origin: str) -> list[Document]:
    text: str | bytes
    raw = bytes(data)
    if raw[:3] == b"\xef\xbb\xbf":
        raw = raw[3:]
    stripped = raw.lstrip()
    if not stripped:
        raise InputError(f"{origin}: empty input: expected Kubernetes objects (JSON or YAML)")
    if stripped[:1] in (b"{", b"["):
        try:
            docs = [msgspec.json.decode(raw)]
        except RecursionError:
            raise InputError(f"{origin}: objects and lists nested too deeply; no Kubernetes object is") from None
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{origin}: malformed JSON: {json_error(exc, raw)}") from None
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{origin}: not UTF-8 text (JSON or YAML expected): {bad_byte(raw, exc.start)}") from None
        docs = yaml_documents(text, origin)
    out: list[Document] = []
    several = len([d for d in docs if d is not None]) > 1
    for n, doc in enumerate(docs):
        if doc is None:
            continue
        where = f"{origin} (document {n + 1})" if several else origin
        if isinstance(doc, list):
            items = doc
        elif isinstance(doc, dict) and _is_list(doc.get("kind")):
            items = doc.get("items") or []
            if not isinstance(items, list):
                raise InputError(f"{where}: `items` of the {doc.get('kind')} is not a list")
        elif isinstance(doc, dict):
            items = [doc]
        else:
            raise InputError(f"{where}: not a Kubernetes object (it is a {type(doc).__name__})")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise InputError(f"{where}: item {i} is not an object")
            out.append(Document(where if len(items) == 1 and item is doc else f"{where} (item {i})", item, origin))
    return out


def _is_list(kind: Any) -> bool:
    return isinstance(kind, str) and (kind == "List" or kind.endswith("List"))


# -- workloads -------------------------------------------------------------------------------------


def workloads_of(docs: list[Document], state: ClusterState, namespace: str, enforce_namespace: bool = False,
                 replicas: int | None = None) -> Manifests:
    """The workloads of `docs` as their controllers will run them in `state`'s cluster (see the module
    docstring). `namespace` is where objects without one go (`-n`, else the context's);
    `enforce_namespace` (an explicit `-n`): an object in another namespace is kubectl's error.
    `replicas` overrides every workload's count (`--replicas`)."""
    out = Manifests()
    parsed: list[tuple[Document, str, str, str]] = []
    for doc in docs:
        kind, name, ns = _identify(doc, namespace, enforce_namespace)
        if kind in _EXTRAS:
            _add_extra(out, doc, kind, ns)
        elif kind in GANG_KINDS and is_gang_api(kind, doc.obj.get("apiVersion") or ""):
            _add_gang(out, doc, kind, ns)
        elif kind in WORKLOAD_KINDS:
            parsed.append((doc, kind, name, ns))
        else:
            out.ignored.append(f"{kind} {ns + '/' if ns else ''}{name}")
    classes = {c.name: c for c in state.priority_classes}
    classes.update({c.name: c for c in out.priority_classes})
    seen: set[tuple[str, str, str]] = set()
    for doc, kind, name, ns in parsed:
        if (kind, ns, name) in seen:
            raise InputError(f"{doc.origin}: {kind} {ns}/{name} is given twice")
        seen.add((kind, ns, name))
        out.workloads.append(_workload(doc, kind, name, ns, classes, replicas))
    return out


def _identify(doc: Document, namespace: str, enforce: bool) -> tuple[str, str, str]:
    obj = doc.obj
    kind = obj.get("kind")
    if not isinstance(kind, str) or not kind:
        raise InputError(f"{doc.origin}: not a Kubernetes object: it has no `kind`")
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = meta.get("name") or ""
    if not isinstance(name, str):
        raise InputError(f"{doc.origin}: {kind}: metadata.name is not a string")
    version = obj.get("apiVersion")
    want = API_VERSIONS.get(kind)
    if kind in _DRA_EXTRAS and version not in DRA_API_VERSIONS:
        raise InputError(f"{doc.origin}: {kind} {name!r}: no matches for kind {kind!r} in version {version!r} "
                         f"(kresched reads {', '.join(DRA_API_VERSIONS)})")
    if kind in GANG_KINDS:
        want = _gang_version(kind, version)
    if want is not None and version != want:
        raise InputError(f"{doc.origin}: {kind} {name!r}: no matches for kind {kind!r} in version {version!r} "
                         f"(kresched reads {want})")
    if not name and not (kind == "Pod" and meta.get("generateName")):
        raise InputError(f"{doc.origin}: {kind}: metadata.name is required")
    if kind in _CLUSTER_SCOPED:
        return kind, name, ""
    ns = meta.get("namespace") or ""
    if not isinstance(ns, str):
        raise InputError(f"{doc.origin}: {kind} {name}: metadata.namespace is not a string")
    if ns and enforce and ns != namespace:
        raise InputError(f"{doc.origin}: the namespace from the provided object {ns!r} does not match the namespace "
                         f"{namespace!r}. You must pass '--namespace={ns}' to perform this operation.")
    return kind, name, ns or namespace


def _gang_version(kind: str, version: Any) -> str | None:
    """The version a gang kind of `version`'s group is read in; None for another group's (not
    planned, whatever its version). Without an apiVersion: every version read."""
    if not isinstance(version, str) or not version:
        return " or ".join(v for (k, _), v in _GANG_API_VERSIONS.items() if k == kind)
    return _GANG_API_VERSIONS.get((kind, version.partition("/")[0]))


def _add_gang(out: Manifests, doc: Document, kind: str, ns: str) -> None:
    value = _convert(doc, kind, ns, PodGroup if kind == "PodGroup" else SchedulingWorkload)
    if isinstance(value, PodGroup):
        out.pod_groups.append(value)
    else:
        out.scheduling_workloads.append(value)


def _add_extra(out: Manifests, doc: Document, kind: str, ns: str) -> None:
    value = _convert(doc, kind, ns, _EXTRAS[kind])
    if kind == "ResourceClaim":  # the API server ignores a status on create: a new claim is not allocated
        value = msgspec.structs.replace(value, status=type(value.status)())
    {"Service": out.services, "Namespace": out.namespaces, "PodDisruptionBudget": out.pdbs,
     "PriorityClass": out.priority_classes, "DeviceClass": out.device_classes,
     "ResourceClaimTemplate": out.claim_templates, "ResourceClaim": out.resource_claims}[kind].append(value)


def _convert(doc: Document, kind: str, ns: str, typ: type) -> Any:
    """The object into the model, in namespace `ns` (none: cluster-scoped), `null`s read as Go reads them."""
    obj = copy.deepcopy(doc.obj)
    meta = obj.setdefault("metadata", {})
    if ns:
        meta["namespace"] = ns
    try:
        try:
            value = msgspec.convert(obj, typ)
        except msgspec.ValidationError as exc:
            if not is_null_error(exc):
                raise
            value = msgspec.convert(drop_nulls(obj, typ), typ)
    except msgspec.ValidationError as exc:
        raise InputError(f"{doc.origin}: {kind} {meta.get('name')}: {describe_error(exc, obj)}") from None
    return value


def _int(obj: dict[str, Any], key: str, where: str, default: int | None) -> int | None:
    """An integer field of the workload's spec; null or absent: `default`."""
    value = obj.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}.{key}: expected an integer, got {value!r}")
    if value < 0:
        raise InputError(f"{where}.{key}: Invalid value: {value}: must be greater than or equal to 0")
    return value


def _labels(meta: Any) -> dict[str, str]:
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return {k: v for k, v in labels.items() if isinstance(v, str)} if isinstance(labels, dict) else {}


def _selector(spec: dict[str, Any], where: str) -> LabelSelector | None:
    raw = spec.get("selector")
    if raw is None:
        return None
    try:
        return msgspec.convert(raw, LabelSelector)
    except msgspec.ValidationError as exc:
        raise InputError(f"{where}.selector: {describe_error(exc, raw)}") from None


def _matches(selector: LabelSelector, labels: dict[str, str]) -> bool:
    from kresched.model.selectors import label_selector_matches

    return label_selector_matches(selector, labels)


def _workload(doc: Document, kind: str, name: str, ns: str, classes: dict[str, PriorityClass],
              replicas_override: int | None) -> WorkloadSpec:
    obj = doc.obj
    what = f"{kind} {ns}/{name}"
    where = f"{doc.origin}: {what}"
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    notes: list[str] = []
    if kind == "Pod":
        return _bare_pod(doc, name, ns, classes, replicas_override)
    if kind == "CronJob":
        job_template = spec.get("jobTemplate") if isinstance(spec.get("jobTemplate"), dict) else {}
        job_spec = job_template.get("spec") if isinstance(job_template.get("spec"), dict) else {}
        if spec.get("suspend") is True:
            notes.append("the CronJob is suspended: it starts no run until it is resumed (planned: one run)")
        spec_for_pods, where_spec = job_spec, "spec.jobTemplate.spec"
        job_name = f"{name}-{_cron_minutes(name)}"
    else:
        spec_for_pods, where_spec, job_name = spec, "spec", name
    template = spec_for_pods.get("template") if isinstance(spec_for_pods.get("template"), dict) else None
    if template is None:
        raise InputError(f"{where}: {where_spec}.template: Required value")
    template = copy.deepcopy(template)
    tmeta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
    labels = _labels(tmeta)
    selector = _selector(spec_for_pods, f"{where}: {where_spec}")
    pod_spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    restart = pod_spec.get("restartPolicy") or ""
    owner_name, owner_kind = name, kind
    replicas: int | None
    extra_labels: dict[str, str] = {}
    if kind in ("Job", "CronJob"):
        if restart not in ("OnFailure", "Never"):
            raise InputError(f"{where}: {where_spec}.template.spec.restartPolicy: Required value: valid values: "
                             '"OnFailure", "Never"')
        job_uid = stable_uid("Job", ns, job_name)
        manual = spec_for_pods.get("manualSelector") is True
        if not manual:
            extra_labels = {"job-name": job_name, "batch.kubernetes.io/job-name": job_name,
                            "controller-uid": job_uid, "batch.kubernetes.io/controller-uid": job_uid}
            sel = selector or LabelSelector()
            selector = msgspec.structs.replace(sel, match_labels={**sel.match_labels,
                                                                  "batch.kubernetes.io/controller-uid": job_uid})
        elif selector is None:
            raise InputError(f"{where}: {where_spec}.selector: Required value")
        parallelism = _int(spec_for_pods, "parallelism", f"{where}: {where_spec}", None)
        completions = _int(spec_for_pods, "completions", f"{where}: {where_spec}", None)
        if parallelism is None and completions is None:
            parallelism = completions = 1
        elif parallelism is None:
            parallelism = 1
        if replicas_override is not None:
            parallelism = replicas_override
        replicas = parallelism if completions is None else min(parallelism, completions)
        if spec_for_pods.get("suspend") is True:
            notes.append("the Job is suspended: it creates no pod until it is resumed (planned as if it were not)")
        owner_name, owner_kind = job_name, "Job"
        indexed = spec_for_pods.get("completionMode") == "Indexed"
        if indexed and completions is None:
            raise InputError(f"{where}: {where_spec}.completions: Required value: when completion mode is Indexed")
        gang_by_job = indexed and completions == parallelism and parallelism > 1
    else:
        indexed = gang_by_job = False
        if kind != "ReplicationController" and selector is None:
            raise InputError(f"{where}: spec.selector: Required value")
        if restart not in ("", "Always"):
            raise InputError(f"{where}: spec.template.spec.restartPolicy: Unsupported value: {restart!r}: "
                             'supported values: "Always"')
        if kind == "DaemonSet":
            replicas = None
            if replicas_override is not None:
                raise InputError(f"{what}: --replicas does not apply to a DaemonSet: it runs one pod on every "
                                 "node it may run on")
        else:
            replicas = _int(spec, "replicas", f"{where}: spec", 1) if replicas_override is None else replicas_override
    if kind == "ReplicationController":
        rc_selector = spec.get("selector")
        if isinstance(rc_selector, dict) and rc_selector:
            selector = LabelSelector(match_labels={k: v for k, v in rc_selector.items() if isinstance(v, str)})
        else:  # defaulted from the template's labels
            selector = LabelSelector(match_labels=labels)
    if selector is not None and not (selector.match_labels or selector.match_expressions):
        raise InputError(f"{where}: spec.selector: Invalid value: empty selector is invalid for deployment")
    if selector is not None and not _matches(selector, {**labels, **extra_labels}):
        raise InputError(f"{where} is invalid: {where_spec}.template.metadata.labels: Invalid value: "
                         f"{_go_map(labels)}: `selector` does not match template `labels`")
    if kind == "Deployment":
        pod_template_hash = template_hash(template)
        extra_labels["pod-template-hash"] = pod_template_hash
        owner_name, owner_kind = f"{name}-{pod_template_hash}", "ReplicaSet"
        if selector is not None:
            selector = msgspec.structs.replace(selector, match_labels={**selector.match_labels,
                                                                       "pod-template-hash": pod_template_hash})
    elif kind in ("DaemonSet", "StatefulSet"):
        extra_labels["controller-revision-hash"] = f"{name}-{template_hash(template)}" \
            if kind == "StatefulSet" else template_hash(template)
        if kind == "DaemonSet":
            # A new DaemonSet's template generation (the deprecated annotation its strategy sets) is 1.
            extra_labels["pod-template-generation"] = "1"
    if kind == "DaemonSet":
        _daemon_tolerations(pod_spec)
    tmeta = dict(tmeta)
    tmeta["labels"] = {**labels, **extra_labels}
    tmeta["namespace"] = ns
    tmeta["name"] = owner_name
    tmeta.pop("generateName", None)
    tmeta["ownerReferences"] = [{"apiVersion": CONTROLLER_API_VERSIONS[owner_kind], "kind": owner_kind,
                                 "name": owner_name, "uid": stable_uid(owner_kind, ns, owner_name), "controller": True,
                                 "blockOwnerDeletion": True}]
    pod_doc = {"apiVersion": "v1", "kind": "Pod", "metadata": tmeta, "spec": pod_spec}
    first = f"{name}-{_int(spec.get('ordinals') or {}, 'start', where, 0) or 0}" if kind == "StatefulSet" \
        else f"{owner_name}-"
    refused, pod = _admitted(pod_doc, classes, where, first, f"{where_spec}.template.")
    claims: tuple[PersistentVolumeClaim, ...] = ()
    management, start, service = "OrderedReady", 0, ""
    if kind == "StatefulSet":
        claims = _claim_templates(spec, ns, where)
        management = spec.get("podManagementPolicy") or "OrderedReady"
        if management not in ("OrderedReady", "Parallel"):
            raise InputError(f"{where}: spec.podManagementPolicy: Unsupported value: {management!r}: supported "
                             'values: "OrderedReady", "Parallel"')
        ordinals = spec.get("ordinals") if isinstance(spec.get("ordinals"), dict) else {}
        start = _int(ordinals, "start", f"{where}: spec.ordinals", 0) or 0
        service = spec.get("serviceName") or ""
    return WorkloadSpec(kind, ns, name, replicas, pod, selector, pod_management=management, ordinal_start=start,
                        service_name=service, claim_templates=claims,
                        ephemeral_claims=_ephemeral_claims(pod_spec, ns, where), indexed=indexed,
                        gang_by_job=gang_by_job, job_name=job_name if kind in ("Job", "CronJob") else "",
                        refused=refused, notes=tuple(notes), raw=obj, origin=doc.file or doc.origin)


def _bare_pod(doc: Document, name: str, ns: str, classes: dict[str, PriorityClass],
              replicas_override: int | None) -> WorkloadSpec:
    obj = copy.deepcopy(doc.obj)
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise InputError(f"{doc.origin}: Pod: metadata is not an object")
    if replicas_override is not None:
        raise InputError(f"Pod {ns}/{name or meta.get('generateName')}: --replicas does not apply to a Pod (it is "
                         "one pod); --max counts how many copies of it fit")
    if not name:
        name = f"{meta['generateName']}{safe_encode(stable_digest(ns, meta['generateName'])[:5])}"
    meta["name"], meta["namespace"] = name, ns
    obj.pop("status", None)
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if spec.get("nodeName"):
        note = (f"the pod names its node (spec.nodeName {spec['nodeName']}): the scheduler never sees it, the kubelet "
                "admits it or not")
    else:
        note = ""
    refused, pod = _admitted(obj, classes, f"{doc.origin}: Pod {ns}/{name}", name)
    return WorkloadSpec("Pod", ns, name, 1, pod, None, ephemeral_claims=_ephemeral_claims(spec, ns, doc.origin),
                        refused=refused, notes=(note,) if note else (), raw=doc.obj,
                        origin=doc.file or doc.origin)


def _admitted(pod_doc: dict[str, Any], classes: dict[str, PriorityClass], where: str, name: str, prefix: str = ""
              ) -> tuple[str | None, Any]:
    """(None, the stored pod), or (the API server's refusal, the pod decoded as it was sent).
    `prefix`: where the pod is in the manifest (`spec.template.`), for the field an error names."""
    from kresched.sources.admission import decode_pod

    try:
        return None, stored_pod(pod_doc, classes, where, prefix)
    except Forbidden as exc:
        return f'pods "{name}" is forbidden: {exc}', decode_pod(pod_doc, where, prefix)


def _claim_templates(spec: dict[str, Any], ns: str, where: str) -> tuple[PersistentVolumeClaim, ...]:
    out = []
    for i, raw in enumerate(spec.get("volumeClaimTemplates") or []):
        if not isinstance(raw, dict):
            raise InputError(f"{where}: spec.volumeClaimTemplates[{i}]: not an object")
        doc = copy.deepcopy(raw)
        meta = doc.setdefault("metadata", {})
        if not meta.get("name"):
            raise InputError(f"{where}: spec.volumeClaimTemplates[{i}].metadata.name: Required value")
        meta["namespace"] = ns
        doc.pop("status", None)
        try:
            out.append(msgspec.convert(drop_nulls(doc, PersistentVolumeClaim), PersistentVolumeClaim))
        except msgspec.ValidationError as exc:
            raise InputError(f"{where}: spec.volumeClaimTemplates[{i}]: {describe_error(exc, doc)}") from None
    return tuple(out)


def _ephemeral_claims(pod_spec: dict[str, Any], ns: str, where: str) -> tuple[tuple[str, PersistentVolumeClaim], ...]:
    """Each generic ephemeral volume's claim, from its `volumeClaimTemplate` (named per pod later)."""
    out = []
    for i, v in enumerate(pod_spec.get("volumes") or []):
        eph = v.get("ephemeral") if isinstance(v, dict) else None
        template = eph.get("volumeClaimTemplate") if isinstance(eph, dict) else None
        if not isinstance(template, dict):
            continue
        doc = {"metadata": {**(template.get("metadata") or {}), "name": str(v.get("name") or ""), "namespace": ns},
               "spec": template.get("spec") or {}}
        try:
            claim = msgspec.convert(drop_nulls(doc, PersistentVolumeClaim), PersistentVolumeClaim)
        except msgspec.ValidationError as exc:
            raise InputError(f"{where}: spec.volumes[{i}].ephemeral.volumeClaimTemplate: "
                             f"{describe_error(exc, doc)}") from None
        out.append((claim.name, claim))
    return tuple(out)


#: `util.AddOrUpdateDaemonPodTolerations`: what every DaemonSet pod tolerates.
_DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)


def _daemon_tolerations(spec: dict[str, Any]) -> None:
    """The DaemonSet controller's tolerations (`AddOrUpdateDaemonPodTolerations`): each replaces a
    toleration of the same key and effect, or is added; `network-unavailable` for hostNetwork."""
    wanted = list(_DAEMON_TOLERATIONS)
    if spec.get("hostNetwork") is True:
        wanted.append(("node.kubernetes.io/network-unavailable", "NoSchedule"))
    tolerations = [t for t in (spec.get("tolerations") or []) if isinstance(t, dict)]
    for key, effect in wanted:
        new = {"key": key, "operator": "Exists", "effect": effect}
        for i, t in enumerate(tolerations):
            if t.get("key") == key and t.get("effect") == effect:
                tolerations[i] = new
                break
        else:
            tolerations.append(new)
    spec["tolerations"] = tolerations


# -- names, as the controllers make them -------------------------------------------------------------

#: `k8s.io/apimachinery/pkg/util/rand`'s alphabet: no vowels, no look-alikes.
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode(text: str) -> str:
    """`rand.SafeEncodeString`: each character mapped into the alphabet above."""
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in text)


def template_hash(template: dict[str, Any]) -> str:
    """A `pod-template-hash`-like value for `template`, stable for the same template: FNV-32a of its
    canonical JSON, encoded as `controller.ComputeHash` encodes its hash. (The Deployment controller
    hashes the Go struct with its defaults, which kresched cannot reproduce: the value differs from
    the one the real ReplicaSet will have, its shape does not.)"""
    h = 0x811C9DC5
    for b in msgspec.json.encode(template, order="sorted"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return safe_encode(str(h))


def stable_digest(*parts: str) -> str:
    """A hex digest of `parts`: what kresched derives names and UIDs of what-if objects from."""
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def stable_uid(kind: str, ns: str, name: str) -> str:
    """A stable stand-in for the UID the API server will give the object (what-if objects only)."""
    d = stable_digest(kind, ns, name)
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:32]}"


def _cron_minutes(name: str) -> int:
    """The minute a CronJob's planned run is named after (`getJobName`: the scheduled time in minutes
    since the epoch): stable for a name, not the time of a real run."""
    return 29_000_000 + int(stable_digest("CronJob", name)[:6], 16) % 1_000_000


def _go_map(labels: dict[str, str]) -> str:
    """`map[string]string{"app":"web"}`, as the API server prints a label map in an error."""
    return "map[string]string{" + ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items())) + "}"

