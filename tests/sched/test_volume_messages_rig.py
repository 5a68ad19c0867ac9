"""The volume filters' messages equal a real kube-scheduler's, word for word.

`rig_volumes.json` was recorded on a v1.36.2 control plane (etcd, kube-apiserver,
kube-controller-manager, kube-scheduler built from source; a simulated kubelet) with
`kubectl get nodes,csinodes,storageclasses,priorityclasses,pv -o json` and `kubectl get
pods,pvc,namespaces -n issue11-vol -o json` (managedFields dropped): three nodes (zone-a ×2,
zone-b), CSINodes with an attach limit of 1 for `csi.issue11.example.com`, and one Pending pod per
volume scene, each carrying the PodScheduled message the scheduler wrote. A plain fixture: the
tests need no control plane.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kresched.plan.explain import explain_pod
from kresched.plan.planner import plan_pod
from kresched.sources.snapshot import load_snapshot

FIXTURE = Path(__file__).with_name("rig_volumes.json")
STATE = load_snapshot(str(FIXTURE))
SCENES = {
    "p-zonal": "a claim bound to a PV whose node affinity names a zone without nodes",
    "p-immediate": "an unbound claim whose class does not exist (Immediate): PreFilter rejects, PostFilter errs",
    "p-wffc": "a WaitForFirstConsumer claim no available PV fits and no provisioner serves",
    "p-missing": "a claim that does not exist",
    "p-local": "a claim bound to a local PV on another node than the pod's nodeSelector",
    "p-label": "a PV labelled with a zone no node is in (VolumeZone)",
    "p-csi": "a node at its CSI attach limit, the holder not preemptible",
    "p-rwop": "a ReadWriteOncePod claim in use by a higher-priority pod",
    "p-topo": "a provisioner whose allowedTopologies exclude every node, and a node at its attach limit",
    "p-gce": "an inline GCE PD mounted read-write by a pod on the only node the pod may use",
}


def test_the_fixture_holds_every_scene() -> None:
    pending = sorted(p.name for p in STATE.pending_pods())
    assert pending == sorted(SCENES)


@pytest.mark.parametrize("name", sorted(SCENES), ids=[f"{n}: {d}" for n, d in sorted(SCENES.items())])
def test_the_message_is_the_schedulers(name: str) -> None:
    pod = STATE.pod(f"issue11-vol/{name}")
    recorded = pod.condition("PodScheduled").message
    assert explain_pod(STATE, pod).scheduler_message == recorded


# -- preemption with volumes ------------------------------------------------------------------------

#: Recorded the same way (namespace issue11-pre; the two incoming pods were created with a
#: scheduling gate, the state read, then the gates removed — the fixture holds them released):
#: the real scheduler preempted the lower-priority pod holding the only CSI attachment slot of
#: node-a2 and the one using the ReadWriteOncePod claim on node-b1, and wrote these
#: FailedScheduling messages first (no preemption part: preemption found a candidate).
PREEMPTION = load_snapshot(str(Path(__file__).with_name("rig_volume_preemption.json")))
PREEMPTED = {
    "hi-csi": ("node-a2", ["issue11-pre/low-csi"],
               "0/3 nodes are available: 1 node(s) exceed max volume count, 2 node(s) didn't match Pod's node "
               "affinity/selector."),
    "hi-rwop": ("node-b1", ["issue11-pre/low-rwop"],
                "0/3 nodes are available: 3 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod "
                "access mode already in-use by another pod."),
}


@pytest.mark.parametrize("name", sorted(PREEMPTED), ids=["evicting the holder of a node's last CSI attachment slot",
                                                       "evicting the pod using a ReadWriteOncePod claim"])
def test_the_scheduler_preempts_the_same_pod_and_writes_the_same_message(name: str) -> None:
    node, victims, message = PREEMPTED[name]
    pod = PREEMPTION.pod(f"issue11-pre/{name}")
    expl = explain_pod(PREEMPTION, pod)
    assert (expl.scheduler_message, expl.preemption_message) == (message, None)
    plan = plan_pod(PREEMPTION, pod)
    assert (plan.outcome, plan.node, [v.pod.key for v in plan.victims]) == ("evict", node, victims)
