"""What the volume plugins share, after upstream's `component-helpers/storage/volume`
(pv_helpers.go, helpers.go) and the listers' NotFound errors.

Owns: the NotFound texts the scheduler's listers produce (they reach `explain` verbatim, as in the
scheduler's message), `check_node_affinity` (`CheckNodeAffinity`), `find_matching_volume`
(`FindMatchingVolume` on the scheduler path, node given), `check_access_modes` and
`volume_mode_mismatch`. Pure.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from kresched.model.objects import Node
from kresched.model.selectors import label_selector_matches, node_selector_term_matches
from kresched.model.storage import PersistentVolume, PersistentVolumeClaim, is_volume_bound_to_claim

__all__ = [
    "check_access_modes",
    "check_node_affinity",
    "find_matching_volume",
    "pv_not_found",
    "pvc_not_found",
    "storage_class_not_found",
    "volume_mode_mismatch",
]


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


def find_matching_volume(claim: PersistentVolumeClaim, volumes: Sequence[PersistentVolume], node: Node,
                         excluded: Collection[str]) -> PersistentVolume | None:
    """`FindMatchingVolume` on the scheduler's path (a node, delayed binding, VolumeAttributesClass
    GA): a volume pre-bound to the claim wins if its node affinity fits the node (else nothing);
    otherwise the smallest Available volume of the claim's class that is big enough, of the same
    volume mode, not being deleted, matching the claim's selector, the node and the access modes,
    with the same VolumeAttributesClass. `excluded`: names already chosen for other claims."""
    smallest: PersistentVolume | None = None
    requested = claim.request_bytes
    requested_class = claim.storage_class
    selector = claim.spec.selector
    claim_vac = claim.spec.volume_attributes_class_name or ""
    for pv in volumes:
        if pv.name in excluded:
            continue
        bound_to_claim = is_volume_bound_to_claim(pv, claim)
        if pv.spec.claim_ref is not None and not bound_to_claim:
            continue
        if pv.capacity_bytes < requested:
            continue
        if volume_mode_mismatch(claim, pv):
            continue
        if pv.metadata.deletion_timestamp is not None:
            continue
        affinity_ok = check_node_affinity(pv, node.metadata.labels)
        if bound_to_claim:
            return pv if affinity_ok else None
        if pv.status.phase != "Available":
            continue
        if selector is not None and not label_selector_matches(selector, pv.labels):
            continue
        if pv.storage_class != requested_class:
            continue
        if not affinity_ok:
            continue
        if not check_access_modes(claim, pv):
            continue
        if claim_vac != (pv.spec.volume_attributes_class_name or ""):
            continue
        if smallest is None or smallest.capacity_bytes > pv.capacity_bytes:
            smallest = pv
    return smallest
