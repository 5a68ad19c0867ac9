"""VolumeRestrictions: shared in-tree disks and ReadWriteOncePod claims in use.

Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/volumerestrictions/
volume_restrictions_test.go (TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts,
TestISCSIDiskConflicts, TestAccessModeConflicts — the latter as v1.27+ has it: the conflict is
found at Filter, Unschedulable, so that preemption can help), plus the preemption extensions.
"""

from __future__ import annotations

from typing import Any

import pytest

from kresched.model.objects import Pod
from kresched.sched.framework import Code, CycleState, Snapshot
from kresched.sched.runner import default_plugins, find_nodes_that_fit, fit_error_message
from kresched.sched.volume_restrictions import ERR_REASON_DISK_CONFLICT, ERR_REASON_RWOP_CONFLICT, VolumeRestrictions
from tests.builders import make_node, make_pod, make_pv, make_pvc, make_state, pvc_volume
from tests.sched.volume_cases import SKIP, Outcome, run_plugin, unresolvable, unschedulable

GCE = {"name": "d", "gcePersistentDisk": {"pdName": "foo"}}
GCE_2 = {"name": "d", "gcePersistentDisk": {"pdName": "bar"}}
GCE_RO = {"name": "d", "gcePersistentDisk": {"pdName": "foo", "readOnly": True}}
AWS = {"name": "d", "awsElasticBlockStore": {"volumeID": "foo"}}
AWS_2 = {"name": "d", "awsElasticBlockStore": {"volumeID": "bar"}}
AWS_RO = {"name": "d", "awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}
RBD = {"name": "d", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD_2 = {"name": "d", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD_OVERLAP = {"name": "d", "rbd": {"monitors": ["b", "c"], "pool": "foo", "image": "bar"}}
ISCSI = {"name": "d", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                                "fsType": "ext4", "lun": 0}}
ISCSI_2 = {"name": "d", "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                                  "fsType": "ext4", "lun": 0}}
CONFLICT = unschedulable(ERR_REASON_DISK_CONFLICT)


def _pod(*volumes: dict[str, Any], name: str = "pod", node: str = "") -> Pod:
    return make_pod(name, node=node, volumes=list(volumes) or None)


@pytest.mark.parametrize(("pod", "running", "want_pre", "want_filter"), [
    pytest.param(_pod(), [], SKIP, None, id="a pod without volumes skips the filter"),
    pytest.param(_pod(), [_pod(GCE, name="r", node="host1")], SKIP, None,
                 id="a pod without volumes ignores a disk in use"),
    pytest.param(_pod(GCE), [], None, None, id="gce: a disk nobody uses"),
    pytest.param(_pod(GCE), [_pod(GCE, name="r", node="host1")], None, CONFLICT, id="gce: the same disk conflicts"),
    pytest.param(_pod(GCE_2), [_pod(GCE, name="r", node="host1")], None, None,
                 id="gce: a different disk does not conflict"),
    pytest.param(_pod(GCE_RO), [_pod(GCE_RO, name="r", node="host1")], None, None,
                 id="gce: the same disk read-only by both does not conflict"),
    pytest.param(_pod(GCE_RO), [_pod(GCE, name="r", node="host1")], None, CONFLICT,
                 id="gce: read-only against read-write conflicts"),
    pytest.param(_pod(AWS), [_pod(AWS, name="r", node="host1")], None, CONFLICT, id="aws: the same volume conflicts"),
    pytest.param(_pod(AWS_2), [_pod(AWS, name="r", node="host1")], None, None,
                 id="aws: a different volume does not conflict"),
    pytest.param(_pod(AWS_RO), [_pod(AWS_RO, name="r", node="host1")], None, CONFLICT,
                 id="aws: the same volume conflicts even read-only"),
    pytest.param(_pod(RBD), [_pod(RBD, name="r", node="host1")], None, CONFLICT, id="rbd: the same image conflicts"),
    pytest.param(_pod(RBD_2), [_pod(RBD, name="r", node="host1")], None, None,
                 id="rbd: the same image through other monitors does not conflict"),
    pytest.param(_pod(RBD_OVERLAP), [_pod(RBD, name="r", node="host1")], None, CONFLICT,
                 id="rbd: one shared monitor is the same cluster"),
    pytest.param(_pod(ISCSI), [_pod(ISCSI, name="r", node="host1")], None, CONFLICT,
                 id="iscsi: the same iqn conflicts"),
    pytest.param(_pod(ISCSI_2), [_pod(ISCSI, name="r", node="host1")], None, None,
                 id="iscsi: a different iqn does not conflict"),
])
def test_disk_conflicts(pod: Pod, running: list[Pod], want_pre: Outcome, want_filter: Outcome) -> None:
    assert run_plugin(VolumeRestrictions(), pod, make_node("host1"), [], running) == (want_pre, want_filter)


RWOP_CLAIM = make_pvc("claim-with-rwop", access_modes=("ReadWriteOncePod",))
RWX_CLAIM = make_pvc("claim-with-rwx", access_modes=("ReadWriteMany",))
WITH_RWOP = make_pod("pod-with-rwop", volumes=[pvc_volume("claim-with-rwop")])
RUNNING_RWOP = make_pod("running-rwop", node="node-1", volumes=[pvc_volume("claim-with-rwop")])
RUNNING_RWX = make_pod("running-rwx", node="node-1", volumes=[pvc_volume("claim-with-rwx")])


@pytest.mark.parametrize(("pod", "running", "claims", "want_pre", "want_filter"), [
    pytest.param(make_pod("p"), [], [], SKIP, None, id="nothing"),
    pytest.param(WITH_RWOP, [], [], unresolvable('persistentvolumeclaim "claim-with-rwop" not found'), None,
                 id="a missing claim rejects the pod at PreFilter"),
    pytest.param(WITH_RWOP, [RUNNING_RWX], [RWOP_CLAIM, RWX_CLAIM], SKIP, None,
                 id="no access mode conflict: the filter is skipped"),
    pytest.param(WITH_RWOP, [RUNNING_RWOP, RUNNING_RWX], [RWOP_CLAIM, RWX_CLAIM], None,
                 unschedulable(ERR_REASON_RWOP_CONFLICT), id="access mode conflict"),
])
def test_access_mode_conflicts(pod: Pod, running: list[Pod], claims: list[Any], want_pre: Outcome,
                               want_filter: Outcome) -> None:
    assert run_plugin(VolumeRestrictions(), pod, make_node("node-1"), claims, running) == (want_pre, want_filter)


def test_removing_the_pod_that_holds_a_read_write_once_pod_claim_releases_it() -> None:
    """RemovePod/AddPod (upstream's PreFilterExtensions) move the conflict count, so preemption
    can evict the holder."""
    state = make_state([make_node("node-1")], [RUNNING_RWOP], storage=[RWOP_CLAIM])
    snap = Snapshot.from_state(state)
    plugin = VolumeRestrictions()
    cycle = CycleState()
    assert plugin.pre_filter(cycle, WITH_RWOP, snap).status.is_success
    info = snap.by_name["node-1"].clone()
    assert plugin.filter(cycle, WITH_RWOP, info).code == Code.UNSCHEDULABLE
    plugin.remove_pod(cycle, WITH_RWOP, RUNNING_RWOP, info)
    assert plugin.filter(cycle, WITH_RWOP, info).is_success
    plugin.add_pod(cycle, WITH_RWOP, RUNNING_RWOP, info)
    assert plugin.filter(cycle, WITH_RWOP, info).code == Code.UNSCHEDULABLE


def test_a_read_write_once_pod_conflict_is_reported_on_every_node() -> None:
    """The claim is in use somewhere: every node fails, with upstream's message."""
    claim = make_pvc("claim-with-rwop", access_modes=("ReadWriteOncePod",), volume="pv-rwop")
    pv = make_pv("pv-rwop", claim="default/claim-with-rwop", access_modes=("ReadWriteOncePod",))
    state = make_state([make_node("node-1"), make_node("node-2")], [RUNNING_RWOP], storage=[claim, pv])
    diag, _ = find_nodes_that_fit(default_plugins(), WITH_RWOP, Snapshot.from_state(state))
    assert fit_error_message(diag) == f"0/2 nodes are available: 2 {ERR_REASON_RWOP_CONFLICT}."
