"""What the volume plugins share, after upstream's `component-helpers/storage/volume`
(pv_helpers.go, helpers.go) and the listers' NotFound errors.

Owns: the NotFound texts the scheduler's listers produce (they reach `explain` verbatim, as in the
scheduler's message), `check_node_affinity` (`CheckNodeAffinity`), `find_matching_volume`
(`FindMatchingVolume` on the scheduler path, node given), `check_access_modes` and
`volume_mode_mismatch`; the claims a pod's volumes use (`claim_refs`) and whether an ephemeral
one is the pod's own (`owned_by`). Pure.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

from kresched.model.objects import Node, Pod
from kresched.model.selectors import label_selector_matches, node_selector_term_matches
from kresched.model.storage import PersistentVolume, PersistentVolumeClaim, is_volume_bound_to_claim

__all__ = [
    "check_access_modes",
    "check_node_affinity",
    "claim_refs",
    "find_matching_volume",
    "matching_candidates",
    "owned_by",
    "pv_not_found",
    "pvc_not_found",
    "storage_class_not_found",
    "volume_mode_mismatch",
]


def claim_refs(pod: Pod) -> Iterator[tuple[str, bool]]:
    """The claims the pod's volumes use, in their order: (name, whether a generic ephemeral
    volume's — then `<pod>-<volume>`, `ephemeral.VolumeClaimName`)."""
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None:
            yield v.persistent_volume_claim.claim_name, False
        elif v.ephemeral is not None:
            yield f"{pod.name}-{v.name}", True


def owned_by(pvc: PersistentVolumeClaim, pod: Pod) -> bool:
    """`ephemeral.VolumeIsForPod`: the claim's controller is the pod."""
    return any(r.controller and r.uid == pod.uid for r in pvc.metadata.owner_references)


def pvc_not_found(name: str) -> str:
    """`errors.NewNotFound(v1.Resource("persistentvolumeclaim"), name).Error()`."""
    return f'persistentvolumeclaim "{name}" not found'


def pv_not_found(name: str) -> str:
    return f'persistentvolume "{name}" not found'


def storage_class_not_found(name: str) -> str:
    return f'storageclass.storage.k8s.io "{name}" not found'


def check_node_affinity(pv: PersistentVolume, node_labels: dict[str, str]) -> bool:
    """`CheckNodeAffinity`: the PV's required node affinity matches a node with these labels.

    Upstream builds a node with the labels only, so a `matchFields` term (metadata.name) never
    matches; the terms are ORed."""
    aff = pv.spec.node_affinity
    if aff is None or aff.required is None:
        return True
    return any(node_selector_term_matches(t, "", node_labels) for t in aff.required.node_selector_terms)


def check_access_modes(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """`CheckAccessModes`: every mode the claim asks for is one the volume offers."""
    return all(m in pv.spec.access_modes for m in claim.spec.access_modes)


def volume_mode_mismatch(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """`CheckVolumeModeMismatches`: an unset mode is Filesystem on both sides."""
    return (claim.spec.volume_mode or "Filesystem") != (pv.spec.volume_mode or "Filesystem")


def matching_candidates(claim: PersistentVolumeClaim, volumes: Sequence[PersistentVolume]) -> list[PersistentVolume]:
    """The volumes `find_matching_volume` can pick for `claim` on some node, in their order: those
    passing every check that does not depend on the node. Computed once per pod (PreFilter): a
    class of thousands of Bound volumes leaves only the few that could bind."""
    out = []
    requested = claim.request_bytes
    requested_class = claim.storage_class
    selector = claim.spec.selector
    claim_vac = claim.spec.volume_attributes_class_name or ""
    for pv in volumes:
        bound_to_claim = is_volume_bound_to_claim(pv, claim)
        if pv.spec.claim_ref is not None and not bound_to_claim:
            continue
        if pv.capacity_bytes < requested or volume_mode_mismatch(claim, pv) or pv.metadata.deletion_timestamp:
            continue
        if not bound_to_claim and (
                pv.status.phase != "Available"
                or (selector is not None and not label_selector_matches(selector, pv.labels))
                or pv.storage_class != requested_class
                or not check_access_modes(claim, pv)
                or claim_vac != (pv.spec.volume_attributes_class_name or "")):
            continue
        out.append(pv)
    return out


def find_matching_volume(claim: PersistentVolumeClaim, candidates: Sequence[PersistentVolume], node: Node,
                         excluded: Collection[str]) -> PersistentVolume | None:
    """`FindMatchingVolume` on the scheduler's path (a node, delayed binding, VolumeAttributesClass
    GA), over `candidates` = `matching_candidates(claim, storage.bindable(claim))`: a volume
    pre-bound to the claim wins if its node affinity fits the node (else nothing); otherwise the
    smallest candidate whose node affinity fits. `excluded`: names already chosen for other claims
    of the pod."""
    smallest: PersistentVolume | None = None
    labels = node.metadata.labels
    for pv in candidates:
        if pv.name in excluded:
            continue
        affinity_ok = check_node_affinity(pv, labels)
        if is_volume_bound_to_claim(pv, claim):
            return pv if affinity_ok else None
        if affinity_ok and (smallest is None or smallest.capacity_bytes > pv.capacity_bytes):
            smallest = pv
    return smallest
