"""VolumeZone: a bound volume's zone/region labels against the node's.

Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/volumezone/volume_zone_test.go
(TestSingleZone, TestMultiZone, TestWithBinding), PreFilter then Filter as upstream runs them.
"""

from __future__ import annotations

import pytest

from kresched.model.objects import Pod
from kresched.sched.volume_zone import ERR_REASON_CONFLICT, VolumeZone
from tests.builders import make_node, make_pod, make_pv, make_pvc, make_storage_class, pvc_volume
from tests.sched.volume_cases import SKIP, Outcome, run_plugin, unresolvable

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

STORAGE = [
    make_pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    make_pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    make_pv("Vol_3", labels={BETA_REGION: "us-west1"}),
    make_pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    make_pv("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    make_pv("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    make_pv("Vol_Multi_3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
    make_pv("Vol_Multi_Stable_2", labels={ZONE: "us-west1-c__us-west1-a"}),
    *(make_pvc(f"PVC_{n}", volume=f"Vol_{n}") for n in ("1", "2", "3", "Stable_1", "Stable_2", "Stable_3",
                                                           "Multi_3", "Multi_Stable_2")),
    make_pvc("PVC_4", volume="Vol_not_exist"),
    make_pvc("PVC_NoSC", storage_class="Class_0"),
    make_pvc("PVC_EmptySC"),
    make_pvc("PVC_WaitSC", storage_class="Class_Wait"),
    make_pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
    make_storage_class("Class_Immediate", wait=False),
    make_storage_class("Class_Wait"),
]


def _pod(claim: str | None) -> Pod:
    return make_pod("pod_1", volumes=[pvc_volume(claim)] if claim else None)


CONFLICT = unresolvable(ERR_REASON_CONFLICT)


@pytest.mark.parametrize(("claim", "labels", "want_pre", "want_filter"), [
    # TestSingleZone
    pytest.param(None, {BETA_ZONE: "us-west1-a"}, SKIP, None, id="a pod without volumes skips the filter"),
    pytest.param("PVC_1", {}, None, None, id="a node without topology labels accepts any volume"),
    pytest.param("PVC_1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None, None,
                 id="beta zone label matched"),
    pytest.param("PVC_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}, None, None,
                 id="beta region label matched"),
    pytest.param("PVC_2", {BETA_REGION: "no_us-west1", "uselessLabel": "none"}, None, CONFLICT,
                 id="beta region label doesn't match"),
    pytest.param("PVC_1", {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}, None, CONFLICT,
                 id="beta zone label doesn't match"),
    pytest.param("PVC_Stable_1", {ZONE: "us-west1-a", "uselessLabel": "none"}, None, None, id="zone label matched"),
    pytest.param("PVC_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}, None, None,
                 id="region label matched"),
    pytest.param("PVC_Stable_2", {REGION: "no_us-west1", "uselessLabel": "none"}, None, CONFLICT,
                 id="region label doesn't match"),
    pytest.param("PVC_Stable_1", {ZONE: "no_us-west1-a", "uselessLabel": "none"}, None, CONFLICT,
                 id="zone label doesn't match"),
    pytest.param("PVC_Stable_3", {ZONE: "us-west1-a"}, None, CONFLICT,
                 id="a pv with zone and region rejects a node with only the zone"),
    pytest.param("PVC_Stable_1", {BETA_ZONE: "us-west1-a"}, None, CONFLICT,
                 id="a pv's GA zone label is not matched by the node's beta label"),
    pytest.param("PVC_1", {ZONE: "us-west1-a"}, None, None,
                 id="a pv's beta zone label is matched by the node's GA label"),
    pytest.param("PVC_1", {ZONE: "us-west1-b"}, None, CONFLICT,
                 id="a pv's beta zone label against another GA zone doesn't match"),
    # TestMultiZone
    pytest.param("PVC_Multi_3", {}, None, None, id="a multi-zone pv on a node without labels"),
    pytest.param("PVC_Multi_3", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None, None,
                 id="a multi-zone beta label matches one of its zones"),
    pytest.param("PVC_1", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}, None, CONFLICT,
                 id="multi-zone cluster: beta zone label doesn't match"),
    pytest.param("PVC_Multi_Stable_2", {ZONE: "us-west1-a", "uselessLabel": "none"}, None, None,
                 id="a multi-zone GA label matches one of its zones"),
    pytest.param("PVC_Stable_1", {ZONE: "us-west1-b", "uselessLabel": "none"}, None, CONFLICT,
                 id="multi-zone cluster: zone label doesn't match"),
    # TestWithBinding
    pytest.param("PVC_1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None, None,
                 id="label zone failure domain matched"),
    pytest.param("PVC_EmptySC", {BETA_ZONE: "us-west1-a"},
                 unresolvable("PersistentVolumeClaim had no pv name and storageClass name"), None,
                 id="an unbound claim without a class rejects the pod"),
    # Upstream's fake lister says `storageclasses.storage.k8s.io`; the scheduler's informer lister
    # (and so a real cluster) says `storageclass.storage.k8s.io`.
    pytest.param("PVC_NoSC", {BETA_ZONE: "us-west1-a"},
                 unresolvable('storageclass.storage.k8s.io "Class_0" not found'), None,
                 id="an unbound claim of a missing class rejects the pod"),
    # Upstream's table has the class without a mode (`VolumeBindingMode not set`); the API server
    # defaults it to Immediate, which is what a real class carries.
    pytest.param("PVC_ImmediateSC", {BETA_ZONE: "us-west1-a"}, unresolvable("PersistentVolume had no name"), None,
                 id="an unbound claim of an Immediate class rejects the pod"),
    pytest.param("PVC_WaitSC", {BETA_ZONE: "us-west1-a"}, SKIP, None,
                 id="an unbound WaitForFirstConsumer claim is left to VolumeBinding"),
    pytest.param("PVC_4", {ZONE: "us-west1-a"}, unresolvable('persistentvolume "Vol_not_exist" not found'), None,
                 id="a claim bound to a missing pv rejects the pod"),
    pytest.param("PVC_missing", {ZONE: "us-west1-a"}, unresolvable('persistentvolumeclaim "PVC_missing" not found'),
                 None, id="a missing claim rejects the pod"),
])
def test_volume_zone(claim: str | None, labels: dict[str, str], want_pre: Outcome, want_filter: Outcome) -> None:
    node = make_node("host1", labels=labels)
    assert run_plugin(VolumeZone(), _pod(claim), node, STORAGE) == (want_pre, want_filter)


def test_a_snapshot_without_claims_skips_the_filter() -> None:
    from kresched.sched.framework import Code, CycleState, Snapshot
    from tests.builders import make_state
    state = make_state([make_node("host1", labels={ZONE: "b"})], [])
    pre = VolumeZone().pre_filter(CycleState(), _pod("PVC_1"), Snapshot.from_state(state))
    assert pre.status.code == Code.SKIP
