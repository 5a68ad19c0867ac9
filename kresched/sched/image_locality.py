"""ImageLocality: favour nodes that already hold the pod's container images.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/imagelocality/image_locality.go`. A score
plugin only; no PreScore, no NormalizeScore.

1. Each image of the pod's init containers, containers and image volumes (`spec.volumes[].image
   .reference`, `sumImageScores`) that the node reports in `status.images` (names compared after
   `normalizedImageName`: `:latest` added to a name without a tag) adds `int64(size *
   nodes_with_it / all_nodes)` — an image present everywhere counts fully, one on few nodes
   little, so that pods do not pile onto the one node that has it.
2. The sum is clamped to `[23 MiB, 1000 MiB × containers]` (init containers and containers: image
   volumes add to the sum, not to the count) and scaled to 0..100.
Pure; stateless.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from kresched.model.objects import Pod
from kresched.sched.framework import MAX_NODE_SCORE, SUCCESS, CycleState, Snapshot, Status
from kresched.sched.node_info import NodeInfo

__all__ = ["MAX_CONTAINER_THRESHOLD", "MIN_THRESHOLD", "NAME", "ImageLocality", "normalized_image_name"]

NAME = "ImageLocality"

_MB = 1024 * 1024
MIN_THRESHOLD = 23 * _MB
MAX_CONTAINER_THRESHOLD = 1000 * _MB
_STATE_KEY = f"PreScore{NAME}"


class ImageLocality:
    name: ClassVar[str] = NAME

    def pre_score(self, cycle: CycleState, pod: Pod, nodes: list[NodeInfo], snapshot: Snapshot) -> Status:
        # Upstream has no PreScore; what Score reads of the cluster and the pod is kept here: the
        # cluster's facts, how many containers, per image its normalized name and spread
        # (`nodes with it / all nodes`), and the nodes holding any of them (elsewhere it is 0).
        # The spreads and holders of a list of images read only the nodes: kept per list (the pods
        # of a workload ask the same, and an image on every node has thousands of holders). An
        # image no node holds adds `int(size × 0.0)`, nothing, wherever a node reports it: it is
        # left out, so that workloads whose own images no node holds yet and which share the
        # others (a sidecar on every node) share the scores kept per image set too.
        cluster = snapshot.cluster
        containers = (*pod.spec.init_containers, *pod.spec.containers)
        references = [c.image for c in containers]
        references += [v.image.reference for v in pod.spec.volumes if v.image is not None]
        names = tuple([normalized_image_name(r) for r in references])
        kept = cluster.memo("ImageLocality/images")
        found = kept.get(names)
        if found is None:
            images = []
            held = []
            # The least and the most any node's sum can be: an image on every node adds at least
            # its smallest size there, one on some nodes at least nothing; at most its largest.
            least = most = 0
            for name in names:
                have = cluster.image_holders(name)
                if have:
                    held.append(have)
                    spread = float(len(have)) / float(cluster.num_nodes)
                    images.append((name, spread))
                    smallest, largest = cluster.image_size_range(name)
                    low, high = int(float(smallest) * spread), int(float(largest) * spread)
                    everywhere = len(have) == cluster.num_nodes
                    least += low if everywhere else min(0, low)
                    most += high if everywhere else max(0, high)
            # An image on every node has them all as holders (a base or sidecar image often is):
            # then that set is the union, not copied.
            every = next((h for h in held if len(h) == cluster.num_nodes), None)
            found = kept[names] = (tuple(images), every if every is not None else frozenset().union(*held),
                                   (least, most))
        images, holders, (least, most) = found
        n = len(containers)
        # Where both ends give one score, every node scores it (the score never falls as the sum
        # grows): a sidecar on every node, the pod's own images on few, whose spread scales them
        # down; or images adding up to no more than the lower threshold, 0 everywhere.
        same = calculate_priority(least, n) if n else 0
        if n and calculate_priority(most, n) != same:
            same = None
        cycle.write(_STATE_KEY, (cluster, n, images, holders, same))
        return SUCCESS

    def score(self, cycle: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        state = cycle.read(_STATE_KEY)
        if state is None:
            return 0
        cluster, num_containers, images, _, _ = state
        if not num_containers:
            return 0
        sizes = cluster.image_sizes(node_info.node)
        total = 0
        if sizes:
            for name, spread in images:
                size = sizes.get(name)
                if size is not None:
                    total += int(float(size) * spread)
        return calculate_priority(total, num_containers)

    def score_all(self, cycle: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        """`score` of each of `nodes`: 0 without computing it on a node that has none of the images
        (the sum is then 0, below the lower threshold)."""
        state = cycle.read(_STATE_KEY)
        if state is None or not state[1]:
            return [0] * len(nodes)
        holders, same = state[3], state[4]
        if same is not None:  # every node scores the same
            return [same] * len(nodes)
        if not holders:
            return [0] * len(nodes)
        # A node's score reads only its images (its Node's status) and the cluster's spread of
        # them: kept per image set and node while it is the same Node (a placement changes the
        # NodeInfo, not the Node; the Node itself is not read here).
        kept = state[0].image_scores(state[1:3])
        out = []
        for info in nodes:
            name = info.name
            if name not in holders:
                out.append(0)
                continue
            node = info.node
            hit = kept.get(name)
            if hit is None or hit[0] is not node:
                hit = kept[name] = (node, self.score(cycle, pod, info))
            out.append(hit[1])
        return out

    def normalize_score(self, cycle: CycleState, pod: Pod, scores: list[int]) -> None:
        return None


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """`calculatePriority`: the clamped sum scaled to 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    sum_scores = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def normalized_image_name(name: str) -> str:
    """`normalizedImageName`: `:latest` appended when the name has no tag after its last `/`."""
    if name.rfind(":") <= name.rfind("/"):
        name = name + ":latest"
    return name
