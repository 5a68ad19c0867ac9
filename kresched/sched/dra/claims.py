"""Which ResourceClaims a pod uses, found as the DynamicResources plugin finds them.

Owns: `missing_kinds` (the DRA kinds a pod's answer depends on that the state does not hold),
`pod_claims` (upstream's `foreachPodResourceClaim` with `resourceclaim.Name` and
`resourceclaim.IsForPod`, and their error texts, which the scheduler reports verbatim), and the
claims kresched makes for pods that do not exist yet (`with_new_claims`): a replacement of an
evicted pod or a replica of a what-if gets a new claim from each of its templates, as the
resourceclaim controller would make it, unallocated. Must not do I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from kresched.model.dra import DRA_KINDS, DraState, ResourceClaim
from kresched.model.objects import Pod
from kresched.model.specs import ObjectMeta, OwnerReference
from kresched.sched.dra.extended import CLASS_PREFIX, delegated

__all__ = [
    "NEW_CLAIMS_ANNOTATION",
    "ClaimLookupError",
    "PodClaim",
    "missing_kinds",
    "pod_claims",
    "with_new_claims",
]

#: On a pod kresched simulates before it exists (a replacement, a what-if replica): its template
#: claims are made anew, as the resourceclaim controller will make them once the pod is created.
#: An annotation because it must survive every copy a simulation makes of the pod.
NEW_CLAIMS_ANNOTATION = "kresched.io/new-resource-claims"


class ClaimLookupError(Exception):
    """Why the scheduler cannot look at the pod's claims (PreEnqueue / PreFilter), upstream's text."""


@dataclass(frozen=True, slots=True)
class PodClaim:
    """One claim of the pod: the entry of `spec.resourceClaims` it comes from, and the claim."""

    pod_claim_name: str
    claim: ResourceClaim
    #: Made by kresched from a template for a pod that does not exist yet (`with_new_claims`).
    is_new: bool = False


def with_new_claims(pod: Pod) -> Pod:
    """`pod` as its controller will create it again: no claims generated for it yet (they are made
    from the templates when it is created)."""
    if not pod.spec.resource_claims:
        return pod
    meta = msgspec.structs.replace(pod.metadata, annotations={**pod.metadata.annotations,
                                                              NEW_CLAIMS_ANNOTATION: "true"})
    status = msgspec.structs.replace(pod.status, resource_claim_statuses=())
    return msgspec.structs.replace(pod, metadata=meta, status=status)


def _generated_claim(pod: Pod, pod_claim_name: str, template_name: str, dra: DraState) -> ResourceClaim:
    template = dra.template(pod.namespace, template_name)
    if template is None:
        # The controller cannot make the claim: the pod waits, as any whose claim is not made yet.
        raise ClaimLookupError(f'pod "{pod.key}": ResourceClaim not created yet')
    meta = ObjectMeta(name=f"{pod.name}-{pod_claim_name}", namespace=pod.namespace,
                      labels=dict(template.spec.metadata.labels), annotations=dict(template.spec.metadata.annotations),
                      owner_references=(OwnerReference(kind="Pod", name=pod.name, api_version="v1", uid=pod.uid,
                                                       controller=True, block_owner_deletion=True),))
    return ResourceClaim(metadata=meta, spec=template.spec.spec)


def pod_claims(pod: Pod, dra: DraState) -> list[PodClaim]:
    """The pod's claims in `spec.resourceClaims` order; a `ClaimLookupError` with the scheduler's
    text when one cannot be used (not created yet, missing, being deleted, not the pod's)."""
    out: list[PodClaim] = []
    new = pod.metadata.annotations.get(NEW_CLAIMS_ANNOTATION) == "true"
    statuses = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    for prc in pod.spec.resource_claims:
        must_check_owner = False
        if prc.resource_claim_name is not None:
            name: str | None = prc.resource_claim_name
        elif prc.resource_claim_template_name is not None:
            if prc.name not in statuses:
                if new:
                    out.append(PodClaim(prc.name, _generated_claim(pod, prc.name, prc.resource_claim_template_name,
                                                                   dra), is_new=True))
                    continue
                raise ClaimLookupError(f'pod "{pod.key}": ResourceClaim not created yet')
            name, must_check_owner = statuses[prc.name], True
        else:
            raise ClaimLookupError(f'pod "{pod.key}", spec.resourceClaim "{prc.name}": '
                                   "none of the supported fields are set")
        if name is None:
            continue  # no claim was needed for this entry
        claim = dra.claim(pod.namespace, name)
        if claim is None:
            raise ClaimLookupError(f'could not find ResourceClaim "{pod.namespace}/{name}"')
        if claim.metadata.deletion_timestamp is not None:
            raise ClaimLookupError(f'resourceclaim "{claim.name}" is being deleted')
        if must_check_owner and not _is_for_pod(pod, claim):
            raise ClaimLookupError(f"ResourceClaim {claim.key} was not created for Pod {pod.key} (Pod is not owner)")
        out.append(PodClaim(prc.name, claim))
    return out


def _is_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    """`resourceclaim.IsForPod`: the claim's controller is the pod (by UID)."""
    return any(r.controller and r.uid == pod.uid for r in claim.metadata.owner_references)


def missing_kinds(pod: Pod, dra: DraState) -> tuple[str, ...]:
    """The DRA kinds the pod's answer depends on that the state does not hold (a snapshot taken
    without them; a live cluster lists every kind, and an empty list is the truth): ResourceClaims
    for a claim it names or that was made for it; ResourceClaimTemplates for a claim still to be
    made from one (a what-if replica, a replacement); and, for a claim not allocated yet (or not
    known) or an extended resource a class backs or is named after, the DeviceClasses and
    ResourceSlices it is allocated from. A template claim not made yet
    of a pod that exists needs nothing: the scheduler waits for it whatever the state holds."""
    if len(dra.kinds) == len(DRA_KINDS):
        return ()
    needed: set[str] = set()
    allocating = False
    new = pod.metadata.annotations.get(NEW_CLAIMS_ANNOTATION) == "true"
    statuses = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    for prc in pod.spec.resource_claims:
        if prc.resource_claim_name is not None:
            name: str | None = prc.resource_claim_name
        elif prc.resource_claim_template_name is not None and prc.name in statuses:
            name = statuses[prc.name]
        elif prc.resource_claim_template_name is not None and new:
            needed.add("ResourceClaimTemplate")
            allocating = True
            continue
        else:
            continue
        if name is None:
            continue
        needed.add("ResourceClaim")
        claim = dra.claim(pod.namespace, name)
        if claim is None or claim.status.allocation is None:
            allocating = True
    scalar = pod.requests.scalar
    if scalar:
        # Named after a class: whatever the state holds, it is allocated from devices.
        allocating = allocating or any(r.startswith(CLASS_PREFIX) and q > 0 for r, q in scalar.items()) \
            or bool(delegated(pod, dra))
    if allocating:
        needed |= {"DeviceClass", "ResourceSlice"}
    return tuple(k for k in DRA_KINDS if k in needed and k not in dra.kinds)
