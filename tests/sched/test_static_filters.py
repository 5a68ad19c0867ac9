"""`StaticFilters`: the node-static filters' verdicts, found once per pod signature and group of
nodes alike in what those filters read of them (`node_reads`: some labels, with the taints and
whether the node is cordoned), must be what the filters themselves say of every node — the same
code, reasons, plugin and details (`explain` prints the details: the label a node lacks, the taint
it has) — whatever order the nodes and pods come in, with a nodeSelector, required node affinity
(with `matchFields` on the node's name too), tolerations, `nodeName`, and the profile's
`addedAffinity`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.model.specs import NodeAffinity as NodeAffinitySpec
from kresched.sched.framework import SUCCESS, Code, CycleState, Status
from kresched.sched.node_affinity import NodeAffinity
from kresched.sched.node_info import NodeInfo
from kresched.sched.node_name import NodeName
from kresched.sched.node_unschedulable import NodeUnschedulable
from kresched.sched.static import StaticFilters
from kresched.sched.taint_toleration import TaintToleration
from tests.builders import make_node, make_pod

_KEYS = ("zone", "type", "pool")
_VALUES = ("a", "b")
_NAMES = tuple(f"n{i}" for i in range(12))

_taints = st.lists(st.fixed_dictionaries({
    "key": st.sampled_from(("gpu", "dedicated")), "value": st.sampled_from(("", "x")),
    "effect": st.sampled_from(("NoSchedule", "NoExecute", "PreferNoSchedule"))}), max_size=2)
_labels = st.dictionaries(st.sampled_from(_KEYS), st.sampled_from(_VALUES))
_tolerations = st.lists(st.sampled_from((
    {"key": "gpu", "operator": "Exists"}, {"key": "dedicated", "operator": "Equal", "value": "x"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
    {"operator": "Exists"})), max_size=2)
_expression = st.one_of(
    st.fixed_dictionaries({"key": st.sampled_from((*_KEYS, "kubernetes.io/hostname")),
                           "operator": st.sampled_from(("In", "NotIn")),
                           "values": st.lists(st.sampled_from((*_VALUES, *_NAMES)), min_size=1, max_size=2)}),
    st.fixed_dictionaries({"key": st.sampled_from(_KEYS), "operator": st.sampled_from(("Exists", "DoesNotExist"))}))
_field = st.fixed_dictionaries({"key": st.just("metadata.name"), "operator": st.sampled_from(("In", "NotIn")),
                                "values": st.lists(st.sampled_from(_NAMES), min_size=1, max_size=1)})
_term = st.one_of(
    st.fixed_dictionaries({"matchExpressions": st.lists(_expression, min_size=1, max_size=2)}),
    st.fixed_dictionaries({"matchExpressions": st.lists(_expression, max_size=1),
                           "matchFields": st.lists(_field, min_size=1, max_size=1)}))
_required = st.lists(_term, min_size=1, max_size=2)


@st.composite
def _pod_spec(draw: st.DrawFn) -> dict[str, Any]:
    required = draw(st.none() | _required)
    return {
        "node_selector": draw(st.none() | st.dictionaries(st.sampled_from(_KEYS), st.sampled_from(_VALUES),
                                                          max_size=2)),
        "affinity": None if required is None else {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": required}}},
        "tolerations": draw(_tolerations),
        "spec": {"nodeName": draw(st.sampled_from(_NAMES))} if draw(st.integers(0, 5)) == 0 else None,
    }


def _seen(status: Status) -> tuple:
    return status.code, status.reasons, status.plugin, status.details


@settings(derandomize=True, database=None, deadline=None, max_examples=150)
@given(nodes=st.lists(st.tuples(_labels, _taints, st.booleans()), min_size=len(_NAMES), max_size=len(_NAMES)),
       pods=st.lists(_pod_spec(), min_size=1, max_size=4),
       added=st.none() | _required,
       order=st.randoms(use_true_random=False))
def test_a_signatures_verdicts_are_the_filters_own_on_every_node(
        nodes: list[tuple[dict[str, str], list[dict[str, Any]], bool]], pods: list[dict[str, Any]],
        added: list[dict[str, Any]] | None, order: Any) -> None:
    infos = [NodeInfo(make_node(name, labels=labels, taints=taints, unschedulable=cordoned))
             for name, (labels, taints, cordoned) in zip(_NAMES, nodes, strict=True)]
    spec = None if added is None else msgspec.convert(
        {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": added}}, NodeAffinitySpec)
    plugins = [NodeUnschedulable(), NodeName(), TaintToleration(), NodeAffinity(spec)]
    static = StaticFilters(plugins)
    # Each pod twice (a copy shares its signature, so its verdicts come from the memo), nodes shuffled.
    asked = [make_pod(f"p{i}-{copy}", **kw) for i, kw in enumerate(pods) for copy in range(2)]
    order.shuffle(asked)
    for pod in asked:
        cycle = CycleState()
        for pl in plugins:
            if pl.pre_filter(cycle, pod, None).status.code == Code.SKIP:  # type: ignore[arg-type]
                cycle.skip.add(pl.name)
        for info in order.sample(infos, len(infos)):
            want = _seen(SUCCESS)
            for pl in plugins:
                if pl.name in cycle.skip:
                    continue
                got = pl.filter(cycle, pod, info)
                if not got.is_success:
                    want = _seen(got.with_plugin(pl.name))
                    break
            assert _seen(static.status(cycle, pod, info)) == want, (pod.name, info.name)
