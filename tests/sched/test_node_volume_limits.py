"""NodeVolumeLimits: CSI attach limits from CSINode, unique volumes counted once.

Ported from kubernetes/kubernetes pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go
(TestCSILimits: the pod-based cases; VolumeAttachment cases are left out, kresched does not read
VolumeAttachments), with this file's own fixtures standing for upstream's fake listers.
"""

from __future__ import annotations

from typing import Any

import pytest

from kresched.model.objects import Pod
from kresched.sched.framework import Code, CycleState, Snapshot
from kresched.sched.node_info import NodeInfo
from kresched.sched.node_volume_limits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits
from kresched.sched.preemption import preemption_message
from kresched.sched.runner import default_plugins, find_nodes_that_fit, fit_error_message
from tests.builders import (
    make_csinode,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_state,
    make_storage_class,
    pvc_volume,
)
from tests.sched.volume_cases import SKIP, Outcome, run_plugin, unresolvable, unschedulable

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EXCEEDED = unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)

STORAGE: list[Any] = [
    make_storage_class("csi-sc", provisioner=EBS),
    make_storage_class("intree-sc", provisioner="kubernetes.io/aws-ebs"),
    *(make_pv(f"csi-ebs-{i}", csi=(EBS, f"csi-ebs-{i}"), claim=f"default/csi-ebs-{i}") for i in range(4)),
    *(make_pvc(f"csi-ebs-{i}", volume=f"csi-ebs-{i}") for i in range(4)),
    *(make_pv(f"csi-gce-{i}", csi=(GCE, f"csi-gce-{i}"), claim=f"default/csi-gce-{i}") for i in range(2)),
    *(make_pvc(f"csi-gce-{i}", volume=f"csi-gce-{i}") for i in range(2)),
    *(make_pv(f"intree-{i}", spec={"awsElasticBlockStore": {"volumeID": f"aws://us-east-1a/vol-{i}"}},
              claim=f"default/intree-{i}") for i in range(3)),
    *(make_pvc(f"intree-{i}", volume=f"intree-{i}") for i in range(3)),
    make_pvc("pending", storage_class="csi-sc"),
    make_pvc("missing-pv", storage_class="csi-sc", volume="no-such-pv"),
    make_pvc("no-sc", storage_class="no-such-class"),
    make_pvc("abc-xyz", "test", storage_class="csi-sc", owner_uid="12345"),
    make_pvc("other-xyz", "test", storage_class="csi-sc"),
]


def _pod(name: str, *claims: str, node: str = "", inline: list[dict[str, Any]] = ()) -> Pod:
    return make_pod(name, node=node, volumes=[*(pvc_volume(c) for c in claims), *inline] or None)


def _ebs_inline(volume_id: str) -> dict[str, Any]:
    return {"name": f"inline-{volume_id}", "awsElasticBlockStore": {"volumeID": volume_id}}


ONE_VOL = _pod("one", "csi-ebs-0")
TWO_VOL = _pod("two", "csi-ebs-1", "csi-ebs-2", node="host1")
RUNNING = _pod("running", "csi-ebs-3", node="host1")
PENDING_VOL = _pod("pending-vol", "pending", node="host1")
PENDING_VOL_2 = _pod("pending-vol-2", "pending", node="host1")
MISSING_PV = _pod("missing-pv", "missing-pv", node="host1")
NO_SC = _pod("no-sc", "no-sc", node="host1")
GCE_TWO = _pod("gce-two", "csi-gce-0", "csi-gce-1", node="host1")
INTREE_ONE = _pod("intree-one", "intree-0")
INTREE_TWO = _pod("intree-two", "intree-1", "intree-2", node="host1")
INLINE = _pod("inline", inline=[_ebs_inline("aws-inline1")])
INLINE_SAME_AS_CSI = _pod("inline-same", inline=[_ebs_inline("csi-ebs-1")])
HOSTPATH = make_pod("hostpath", volumes=[{"name": "h", "hostPath": {"path": "/data"}}])
CONFIG_ONLY = make_pod("config", volumes=[{"name": "c", "configMap": {"name": "c"}}, {"name": "s", "secret": {}}])
EPHEMERAL = make_pod("abc", "test", uid="12345", volumes=[{"name": "xyz", "ephemeral": {}}])
EPHEMERAL_NOT_OWNED = make_pod("other", "test", uid="999", volumes=[{"name": "xyz", "ephemeral": {}}])


def _on_host1(p: Pod) -> Pod:
    return make_pod(p.name, p.namespace, node="host1", uid=p.uid,
                    volumes=[{"name": v.name, "ephemeral": {}} for v in p.spec.volumes])


@pytest.mark.parametrize(("pod", "running", "limits", "want_pre", "want_filter"), [
    pytest.param(CONFIG_ONLY, [], {EBS: 2}, SKIP, None, id="a pod with only configMap and secret volumes skips"),
    pytest.param(HOSTPATH, [], {EBS: 2}, SKIP, None, id="a non-migratable in-tree volume skips"),
    pytest.param(ONE_VOL, [RUNNING, TWO_VOL], {EBS: 4}, None, None,
                 id="fits when node volume limit >= new pods CSI volume"),
    pytest.param(ONE_VOL, [RUNNING, TWO_VOL], {EBS: 2}, None, EXCEEDED,
                 id="doesn't when node volume limit <= pods CSI volume"),
    pytest.param(ONE_VOL, [RUNNING, TWO_VOL], {EBS: None}, None, None,
                 id="fits when the driver does not report a limit"),
    pytest.param(ONE_VOL, [RUNNING, TWO_VOL], None, None, None, id="fits on a node without a CSINode"),
    pytest.param(_pod("shares", "csi-ebs-3"), [RUNNING, TWO_VOL], {EBS: 3}, None, None,
                 id="a volume already attached to the node costs nothing"),
    pytest.param(ONE_VOL, [PENDING_VOL, TWO_VOL], {EBS: 2}, None, EXCEEDED,
                 id="count pending PVCs towards volume limit"),
    pytest.param(ONE_VOL, [PENDING_VOL, PENDING_VOL_2, TWO_VOL], {EBS: 4}, None, None,
                 id="two pods with the same pending PVC count it once"),
    pytest.param(ONE_VOL, [MISSING_PV, TWO_VOL], {EBS: 2}, None, EXCEEDED,
                 id="should count PVCs with invalid PV name but valid SC"),
    pytest.param(ONE_VOL, [RUNNING, NO_SC], {EBS: 2}, None, None,
                 id="don't count pvcs with missing SC towards volume limit"),
    pytest.param(ONE_VOL, [GCE_TWO, TWO_VOL], {EBS: 2, GCE: 2}, None, EXCEEDED,
                 id="count pvcs with the same type towards volume limit"),
    pytest.param(_pod("gce-new", "csi-gce-0", "csi-gce-1"), [TWO_VOL, RUNNING], {EBS: 2, GCE: 2}, None, None,
                 id="don't count pvcs with different type towards volume limit"),
    pytest.param(INTREE_ONE, [INTREE_TWO], {EBS: 2}, None, EXCEEDED,
                 id="should count in-tree volumes (migration is always on in v1.36)"),
    pytest.param(INLINE, [INTREE_TWO], None, None, None, id="nil csi node"),
    pytest.param(INTREE_ONE, [INTREE_TWO], {EBS: None}, None, None,
                 id="should not limit pod if volume used does not report limits"),
    pytest.param(INLINE, [INTREE_TWO], {EBS: 2}, None, EXCEEDED,
                 id="should count in-tree inline volumes"),
    pytest.param(INTREE_ONE, [TWO_VOL], {EBS: 2}, None, EXCEEDED,
                 id="should count in-tree and csi volumes (when scheduling in-tree volumes)"),
    pytest.param(INLINE, [TWO_VOL, _pod("intree-running", "intree-0", node="host1")], {EBS: 3}, None, EXCEEDED,
                 id="should count in-tree, inline and csi volumes"),
    pytest.param(INLINE_SAME_AS_CSI, [TWO_VOL, _pod("intree-running", "intree-0", node="host1")], {EBS: 3}, None,
                 None, id="an inline volume with the same CSI handle as an attached one is not counted again"),
    pytest.param(ONE_VOL, [INTREE_TWO], {EBS: 2}, None, EXCEEDED,
                 id="should count in-tree and csi volumes (when scheduling csi volumes)"),
    pytest.param(make_pod("abc", "test", uid="12345", volumes=[{"name": "nope", "ephemeral": {}}]), [], {EBS: None},
                 None, unresolvable('looking up PVC test/abc-nope: persistentvolumeclaim "abc-nope" not found'),
                 id="ephemeral volume missing"),
    pytest.param(EPHEMERAL, [], {EBS: None}, None, None, id="ephemeral volume unbound"),
    pytest.param(EPHEMERAL, [RUNNING, TWO_VOL], {EBS: 2}, None, EXCEEDED,
                 id="ephemeral doesn't when node volume limit <= pods CSI volume"),
    pytest.param(ONE_VOL, [RUNNING, _on_host1(EPHEMERAL)], {EBS: 2}, None, EXCEEDED,
                 id="ephemeral doesn't when node volume limit <= pods ephemeral CSI volume"),
    pytest.param(ONE_VOL, [RUNNING, _on_host1(EPHEMERAL_NOT_OWNED)], {EBS: 2}, None, None,
                 id="an ephemeral claim a running pod does not own is not counted"),
])
def test_csi_limits(pod: Pod, running: list[Pod], limits: dict[str, int | None] | None, want_pre: Outcome,
                    want_filter: Outcome) -> None:
    csinode = [make_csinode("host1", limits)] if limits is not None else []
    assert run_plugin(NodeVolumeLimits(), pod, make_node("host1"), STORAGE + csinode, running) == (want_pre,
                                                                                                   want_filter)


def test_a_node_at_its_attach_limit_is_a_preemption_candidate() -> None:
    """Unschedulable, not unresolvable: evicting a pod with attachments frees them, so the
    scheduler's message ends in a preemption candidate (no preemption part)."""
    low = make_pod("low", node="host1", priority=0, volumes=[pvc_volume("csi-ebs-1")])
    high = make_pod("high", priority=100, volumes=[pvc_volume("csi-ebs-0")])
    state = make_state([make_node("host1")], [low], storage=[*STORAGE, make_csinode("host1", {EBS: 1})])
    snap = Snapshot.from_state(state)
    plugins = default_plugins()
    diag, cycle = find_nodes_that_fit(plugins, high, snap)
    assert fit_error_message(diag) == f"0/1 nodes are available: 1 {ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED}."
    assert diag.node_to_status["host1"].code == Code.UNSCHEDULABLE
    message, _ = preemption_message(plugins, high, snap, diag, cycle)
    assert message is None
    lower = make_pod("high", priority=0, volumes=[pvc_volume("csi-ebs-0")])
    diag, cycle = find_nodes_that_fit(plugins, lower, snap)
    message, _ = preemption_message(plugins, lower, snap, diag, cycle)
    assert message == "0/1 nodes are available: 1 No preemption victims found for incoming pod."



def test_one_pod_is_counted_for_each_node_as_that_node_attaches_it() -> None:
    """An in-tree inline volume attaches through CSI only where the node has a CSINode: filtering
    the same pod over a node without one (it fits: nothing counts) and then a node with one at its
    limit (exceeded) gives each node its own answer, though the pod's volumes are found once."""
    running = [_pod("intree-two-0", "intree-1", "intree-2", node="host0"), INTREE_TWO]
    state = make_state([make_node("host0"), make_node("host1")], running,
                       storage=[*STORAGE, make_csinode("host1", {EBS: 2})])
    diag, _ = find_nodes_that_fit(default_plugins(), INLINE, Snapshot.from_state(state))
    assert diag.feasible == ["host0"]
    assert diag.node_to_status["host1"].reasons == (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,)


def test_a_node_is_counted_again_once_a_pod_with_volumes_is_taken_off_or_put_back() -> None:
    """Victim selection takes a node's pods off a copy of its NodeInfo and puts them back one by
    one, filtering in between: each filter counts the attachments of the pods there at that moment,
    though what a node attaches is kept between filters and pods."""
    state = make_state([make_node("host1")], [RUNNING, TWO_VOL], storage=[*STORAGE, make_csinode("host1", {EBS: 3})])
    snap = Snapshot.from_state(state)
    plugin = NodeVolumeLimits()

    def verdict(pod: Pod, info: NodeInfo) -> Outcome:
        cycle = CycleState()
        assert plugin.pre_filter(cycle, pod, snap).status.is_success
        st = plugin.filter(cycle, pod, info)
        return None if st.is_success else (st.code, st.reasons)

    info = snap.by_name["host1"].clone()
    assert verdict(ONE_VOL, info) == EXCEEDED
    assert verdict(_pod("shares", "csi-ebs-3"), info) is None
    info.remove_pod(TWO_VOL)
    assert verdict(ONE_VOL, info) is None
    info.add_pod(TWO_VOL)
    assert verdict(ONE_VOL, info) == EXCEEDED
    assert verdict(ONE_VOL, snap.by_name["host1"]) == EXCEEDED
