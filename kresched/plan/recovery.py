"""The recovery timeline of a lost node (`kresched.plan.lost`): what happens next, and when.

`recovery_timeline` follows upstream's rules:
1. the taint manager (pkg/controller/tainteviction) deletes each pod once its tolerations of the
   node's NoExecute taints run out: at once when one is not tolerated, never when every one is
   tolerated without `tolerationSeconds` (DaemonSet pods), else the smallest `tolerationSeconds`
   after the taint was added (the DefaultTolerationSeconds admission gives every other pod 300 s
   on `not-ready` and `unreachable`; a value <= 0 means at once);
2. a deleted pod stays Terminating: no kubelet confirms it. It goes only when the Node object is
   deleted (the pod GC removes orphans after 40 s), when it is force-deleted, or — the non-graceful
   node shutdown — when the node carries `node.kubernetes.io/out-of-service` (the pod GC
   force-deletes terminating pods on a not-ready node with that taint);
3. a ReplicaSet, ReplicationController or Job replaces its pod as soon as it is Terminating; a
   StatefulSet creates the same pod again only once the old one is gone; nothing recreates a bare
   pod; a DaemonSet or static pod comes back with the node; another controller decides for itself;
4. a replacement that mounts a single-node attachable volume (ReadWriteOnce/ReadWriteOncePod CSI
   or in-tree disk) cannot start while the volume is attached to the lost node: the attach/detach
   controller keeps it there while the old pod exists, then waits `maxWaitForUnmountDuration`
   (6 min) before it force-detaches from an unhealthy node — at once with the out-of-service taint.
Replacements are placed by the drain pre-flight's simulation (`plan.drain.simulate_replacements`),
never on a lost node, in the order they are made (a ReplicaSet's when its pod is evicted, a
StatefulSet's a pod-GC period after the out-of-service taint: the rig showed the earlier ones take
the room). Pure: the "now" is an argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kresched.model.cluster import ClusterState
from kresched.model.objects import Pod, start_text
from kresched.model.specs import Taint, Toleration
from kresched.plan.drain import simulate_replacements
from kresched.plan.lost import (
    DEFAULT_TOLERATION_SECONDS,
    MAX_WAIT_FOR_UNMOUNT_SECONDS,
    NOT_READY_TAINT,
    OUT_OF_SERVICE_TAINT,
    OUT_OF_SERVICE_VALUE,
    POD_GC_PERIOD_SECONDS,
    UNREACHABLE_TAINT,
    NodeLoss,
    duration_text,
    lost_nodes,
    node_loss,
    seconds_of,
)
from kresched.sched.profile import Profiles
from kresched.sched.taint_toleration import tolerates

__all__ = ["PodFate", "Recovery", "admitted_tolerations", "recovery_timeline", "single_node_volumes",
           "toleration_seconds"]

#: Controllers that create a new pod as soon as the old one is Terminating.
_REPLACED_AT_ONCE = frozenset({"ReplicaSet", "ReplicationController", "Job"})
_SINGLE_NODE_MODES = frozenset({"ReadWriteOnce", "ReadWriteOncePod"})


# -- the taint manager's clock --------------------------------------------------------------------

def admitted_tolerations(pod: Pod) -> tuple[Toleration, ...]:
    """The pod's tolerations as the DefaultTolerationSeconds admission plugin leaves them: a
    `not-ready` and an `unreachable` NoExecute toleration of 300 s each, unless one with that key
    (or no key) and that effect (or none) is already there. A real pod has them already."""
    tolerations = pod.spec.tolerations
    out = list(tolerations)
    for key in (NOT_READY_TAINT, UNREACHABLE_TAINT):
        if not any(t.key in (key, "") and t.effect in ("NoExecute", "") for t in tolerations):
            out.append(Toleration(key=key, operator="Exists", effect="NoExecute",
                                  toleration_seconds=DEFAULT_TOLERATION_SECONDS))
    return tuple(out)


def toleration_seconds(pod: Pod, taints: tuple[Taint, ...]) -> int | None:
    """How long the pod stays on a node with these NoExecute taints (`GetMatchingTolerations` and
    `getMinTolerationTime`): 0 when one is not tolerated (or a matching toleration's seconds are
    ≤ 0), None when every one is tolerated for ever, else the smallest `tolerationSeconds` among
    the first matching toleration of each taint."""
    tolerations = admitted_tolerations(pod)
    smallest: int | None = None
    for taint in taints:
        if taint.effect != "NoExecute":
            continue
        used = next((t for t in tolerations if tolerates(t, taint)), None)
        if used is None:
            return 0
        if used.toleration_seconds is not None:
            if used.toleration_seconds <= 0:
                return 0
            smallest = used.toleration_seconds if smallest is None else min(smallest, used.toleration_seconds)
    return smallest


# -- the timeline -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PodFate:
    """What becomes of one pod of a lost node."""

    pod: Pod
    #: When the taint manager deletes it (seconds since the epoch); None: never (tolerated for
    #: ever) or not known (no `timeAdded` on the taint). For a pod already Terminating: when it was.
    evicted_at: float | None
    #: Already deleted (Terminating) at `now`.
    evicted: bool
    #: The toleration that decides (`toleration_seconds`): 0 at once, None for ever.
    tolerates_seconds: int | None
    #: "replaced" (a new pod at once), "recreated" (the same pod once the old one is gone), "gone"
    #: (nothing recreates it), "with-node" (a DaemonSet or static pod: back with the node), "stays"
    #: (never evicted), "controller" (a controller kresched does not simulate decides).
    outcome: str
    #: Where the new pod lands (simulated) and the nodes tied with it, or why it stays Pending.
    lands_on: str | None = None
    candidates: tuple[str, ...] = ()
    pending_reason: str | None = None
    #: Pods its controller already made to replace it (`ns/name` → node, or None while Pending).
    replacements: dict[str, str | None] = field(default_factory=dict)
    #: Why it will not come back by itself (empty: it will).
    waits_for: tuple[str, ...] = ()
    #: Its single-node attachable volumes (`pv` names, else claims): its replacement waits for them.
    volumes: tuple[str, ...] = ()

    @property
    def comes_back(self) -> bool:
        return not self.waits_for and self.outcome in ("replaced", "recreated", "stays")


@dataclass(frozen=True)
class Recovery:
    loss: NodeLoss
    #: The moment the timeline is told from.
    now: float
    #: Every pod bound to the node, by eviction time (never last), then key.
    pods: tuple[PodFate, ...]
    #: The same pods once `node.kubernetes.io/out-of-service` is added (None when it already is).
    out_of_service: tuple[PodFate, ...] | None
    #: What would speed it up, most useful first.
    speed_up: tuple[str, ...]
    #: What kresched could not simulate of the scheduler profiles placing the replacements.
    warnings: tuple[str, ...] = ()

    @property
    def stuck(self) -> list[PodFate]:
        return [f for f in self.pods if f.waits_for]


def single_node_volumes(pod: Pod, state: ClusterState) -> tuple[str, ...]:
    """The pod's volumes that attach to one node at a time (CSI or in-tree disks, ReadWriteOnce or
    ReadWriteOncePod): the attach/detach controller must detach them from the lost node before
    a replacement elsewhere can start."""
    out = []
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None:
            pvc = state.storage.pvc(pod.namespace, v.persistent_volume_claim.claim_name)
            pv = state.storage.pv(pvc.spec.volume_name) if pvc is not None and pvc.spec.volume_name else None
            if pv is None:
                continue
            modes = set(pv.spec.access_modes or (pvc.spec.access_modes if pvc is not None else ()))
            s = pv.spec
            attachable = (s.csi is not None or s.aws_elastic_block_store is not None
                          or s.gce_persistent_disk is not None or s.azure_disk is not None or s.cinder is not None)
            if attachable and modes and modes <= _SINGLE_NODE_MODES:
                out.append(pv.name)
        elif (v.gce_persistent_disk is not None or v.aws_elastic_block_store is not None
              or v.azure_disk is not None or v.cinder is not None):
            out.append(f"{v.name} (inline)")
    return tuple(out)


def _replacements(state: ClusterState, pod: Pod, node: str, since: float | None) -> list[Pod]:
    """The pods of `pod`'s controller, not on the lost node and not Terminating, created at or after
    `since` (a second's slack: the API's times are whole seconds): what its controller made to
    replace it and its siblings, oldest first."""
    owner = pod.controller
    if owner is None or since is None:
        return []
    out = []
    for p in state.pods:
        c = p.controller
        if (c is None or p.namespace != pod.namespace or (c.kind, c.name) != (owner.kind, owner.name)
                or p.node_name == node or p.is_terminating):
            continue
        created = seconds_of(p.metadata.creation_timestamp)
        if created is not None and created >= since - 1:
            out.append((created, p.key, p))
    return [p for _, _, p in sorted(out, key=lambda x: (x[0], x[1]))]


def _pair_replacements(state: ClusterState, node: str, evicted: list[PodFate]) -> dict[str, dict[str, str | None]]:
    """Each evicted pod's replacement: per controller, its evicted pods in eviction order take its new
    pods in creation order, one each (which new pod replaced which old one is not recorded; the
    count and the nodes are what matter)."""
    out: dict[str, dict[str, str | None]] = {}
    taken: set[str] = set()
    for f in sorted(evicted, key=lambda f: (f.evicted_at or 0.0, f.pod.key)):
        new = next((p for p in _replacements(state, f.pod, node, f.evicted_at) if p.key not in taken), None)
        if new is not None:
            taken.add(new.key)
            out[f.pod.key] = {new.key: new.node_name or None}
    return out


def _eviction_time(pod: Pod, taints: tuple[Taint, ...], seconds: int) -> float | None:
    """When the taint manager deletes the pod: when the first taint it does not tolerate was added,
    else `seconds` after the first NoExecute taint was (None: a taint without `timeAdded`)."""
    tolerations = admitted_tolerations(pod)
    untolerated = [t for t in taints if t.effect == "NoExecute" and not any(tolerates(x, t) for x in tolerations)]
    times = [seconds_of(t.time_added) for t in (untolerated or [t for t in taints if t.effect == "NoExecute"])]
    if not times or any(t is None for t in times):
        return None
    return min(t for t in times if t is not None) + (0 if untolerated else seconds)


def _outcome(pod: Pod) -> str:
    kind = pod.controller.kind if pod.controller is not None else None
    if pod.is_mirror or kind == "DaemonSet":
        return "with-node"
    if kind in _REPLACED_AT_ONCE:
        return "replaced"
    if kind == "StatefulSet":
        return "recreated"
    return "gone" if kind is None else "controller"


def _fate(state: ClusterState, pod: Pod, loss: NodeLoss, taints: tuple[Taint, ...], hangs: bool) -> PodFate:
    """`hangs`: a deleted pod stays Terminating (no kubelet confirms it, no out-of-service taint)."""
    seconds = toleration_seconds(pod, taints)
    volumes = single_node_volumes(pod, state)
    evicted = pod.is_terminating
    if evicted:
        deleted = seconds_of(pod.metadata.deletion_timestamp)
        at = deleted - (pod.metadata.deletion_grace_period_seconds or 0) if deleted is not None else None
    elif seconds is None:
        return PodFate(pod, None, False, None, "stays", volumes=volumes)
    else:
        at = _eviction_time(pod, taints, seconds)
    outcome = _outcome(pod)
    kind = pod.controller.kind if pod.controller is not None else ""
    waits: list[str] = []
    if outcome == "gone":
        waits.append("no controller owns it: once deleted, nothing recreates it")
    elif outcome == "with-node":
        waits.append("a static pod comes back with its kubelet" if pod.is_mirror
                     else f"its DaemonSet runs it on {loss.node} only: it comes back with the node")
    elif outcome == "controller":
        waits.append(f"its {kind} decides whether to replace it (kresched does not simulate that controller)")
    elif hangs and outcome == "recreated":
        waits.append(f"its StatefulSet creates {pod.name} again only once the old pod is gone, and the old pod "
                     "stays Terminating while no kubelet confirms it (until the Node is deleted, the pod is "
                     "force-deleted, or the node is out of service)")
    elif hangs and outcome == "replaced" and volumes:
        waits.append(f"its replacement cannot start while {', '.join(volumes)} stays attached to {loss.node}: the "
                     "attach/detach controller keeps it there while the old pod is Terminating, then waits "
                     f"{duration_text(MAX_WAIT_FOR_UNMOUNT_SECONDS)} more before it force-detaches")
    return PodFate(pod, at, evicted, seconds, outcome, waits_for=tuple(waits), volumes=volumes)


def _placed(state: ClusterState, name: str, fates: list[PodFate], recreate: bool, oos_at: float,
            profiles: Profiles | None) -> tuple[list[PodFate], tuple[str, ...]]:
    """Where the new pods land: those a controller replaces once they are evicted (already
    evicted: their replacements exist, and are named instead), and with `recreate` the StatefulSet
    pods recreated once force-deleted. Never on a lost node."""
    moving = [f.pod for f in fates if (f.outcome == "replaced" and not f.evicted)
              or (recreate and f.outcome == "recreated")]
    recreated = frozenset(f.pod.key for f in fates if recreate and f.outcome == "recreated" and f.evicted)
    # The new pods come in waves, and the earlier ones take the room: a replacement when its pod is
    # evicted, a StatefulSet's pod only once the pod GC has force-deleted the old one (next period).
    waves = {f.pod.key: max(f.evicted_at or 0.0, oos_at) + POD_GC_PERIOD_SECONDS if f.outcome == "recreated"
             else f.evicted_at or 0.0 for f in fates}
    landed, warnings = simulate_replacements(state, lost_nodes(state) | {name}, moving, profiles, recreated, waves)
    paired = _pair_replacements(state, name, [f for f in fates if f.evicted and f.outcome == "replaced"])
    out = []
    for f in fates:
        if f.pod.key in paired:
            f = replace(f, replacements=paired[f.pod.key])
        d = landed.get(f.pod.key)
        if d is not None:
            f = replace(f, lands_on=d.lands_on, candidates=d.candidates, pending_reason=d.pending_reason)
        out.append(f)
    out.sort(key=lambda f: (f.outcome == "stays", f.evicted_at is None, f.evicted_at or 0.0, f.pod.key))
    return out, warnings


def recovery_timeline(state: ClusterState, name: str, now: float, profiles: Profiles | None = None) -> Recovery:
    """What happens next to the pods of node `name` (see the module docstring), told at `now`."""
    loss = node_loss(state, name, now)
    if not loss.is_lost and not loss.not_ready:
        return Recovery(loss, now, (), None, ())
    taints = tuple(t for t in state.node_by_name[name].spec.taints if t.effect == "NoExecute")
    if loss.is_lost and not any(t.key == UNREACHABLE_TAINT for t in taints):
        # Silent but not tainted yet: the controller adds this once its grace period is over.
        taints = (*taints, Taint(UNREACHABLE_TAINT, "", "NoExecute"))
    pods = [p for p in state.pods_on(name) if not p.is_finished]
    oos_since = min((t for x in taints if x.key == OUT_OF_SERVICE_TAINT and (t := seconds_of(x.time_added))),
                    default=now)
    hangs = loss.is_lost and not loss.out_of_service
    timeline, warnings = _placed(state, name, [_fate(state, p, loss, taints, hangs) for p in pods],
                                 not hangs, oos_since, profiles)
    after = None
    if loss.is_lost and not loss.out_of_service:  # (the taint is only for a lost node)
        oos = (*taints, Taint(OUT_OF_SERVICE_TAINT, OUT_OF_SERVICE_VALUE, "NoExecute", start_text(now)))
        after, _ = _placed(state, name, [_fate(state, p, loss, oos, False) for p in pods], True, now, profiles)
    return Recovery(loss, now, tuple(timeline), tuple(after) if after is not None else None,
                    _speed_up(loss, timeline, after), warnings)


def _speed_up(loss: NodeLoss, timeline: list[PodFate], after: list[PodFate] | None) -> tuple[str, ...]:
    if not loss.is_lost:
        return ()
    out = []
    stuck = {f.pod.key for f in timeline if f.waits_for and f.outcome in ("replaced", "recreated")}
    if after is not None:
        freed = [f for f in after if f.pod.key in stuck and not f.waits_for]
        gain = f"; {len(freed)} pod(s) that would not come back by themselves then do" if freed else ""
        out.append(f"if the machine is really off (powered down, not just cut off): `kresched drain {loss.node} "
                   f"--out-of-service` adds {OUT_OF_SERVICE_TAINT}={OUT_OF_SERVICE_VALUE}:NoExecute: its pods are "
                   f"deleted at once and force-deleted within {POD_GC_PERIOD_SECONDS}s, its volumes detached "
                   f"without the {duration_text(MAX_WAIT_FOR_UNMOUNT_SECONDS)} wait{gain}")
    else:
        out.append(f"{loss.node} is out of service already: remove {OUT_OF_SERVICE_TAINT} once the machine is back "
                   f"(`kresched untaint {loss.node} --out-of-service`)")
    out.append(f"if the machine is gone for good: `kubectl delete node {loss.node}`: the pod GC deletes its pods "
               "40s later (volumes may still wait for the force detach)")
    waiting = [f for f in timeline if not f.evicted and f.tolerates_seconds]
    if waiting:
        longest = max(f.tolerates_seconds or 0 for f in waiting)
        out.append(f"{len(waiting)} pod(s) wait out their toleration of {UNREACHABLE_TAINT} (up to "
                   f"{duration_text(longest)}) before they are evicted: a shorter tolerationSeconds in their "
                   "templates, or the API server's --default-unreachable-toleration-seconds (default "
                   f"{DEFAULT_TOLERATION_SECONDS}), makes the next loss shorter")
    return tuple(out)
