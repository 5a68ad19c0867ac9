"""TaintToleration: NoSchedule/NoExecute taints reject pods that do not tolerate them."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kresched.model.specs import Taint, Toleration
from kresched.sched.framework import SUCCESS, Code, CycleState, PreFilterResult, Snapshot, Status
from kresched.sched.node_info import NodeInfo
from kresched.sched.runner import find_nodes_that_fit, fit_error_message
from kresched.sched.taint_toleration import (
    ERR_REASON_UNTOLERATED,
    NAME,
    TaintToleration,
    find_untolerated_taint,
    format_taint,
    tolerates,
    tolerations_tolerate_taint,
)
from tests.builders import make_node, make_pod, make_state


def _rejected(taint: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNTOLERATED,), NAME, details=(taint,))


def _taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def _tol(**fields: Any) -> Toleration:
    return msgspec.convert(fields, Toleration)


GPU = _taint("dedicated", "gpu")


@pytest.mark.parametrize(
    ("taints", "tolerations", "want"),
    [
        pytest.param([], [], SUCCESS, id="a node without taints takes a pod without tolerations"),
        pytest.param([GPU], [], _rejected("dedicated=gpu:NoSchedule"),
                     id="a pod without tolerations is rejected by a NoSchedule taint"),
        pytest.param([_taint("dedicated", "gpu", "NoExecute")], [], _rejected("dedicated=gpu:NoExecute"),
                     id="a pod without tolerations is rejected by a NoExecute taint"),
        pytest.param([_taint("dedicated", "gpu", "PreferNoSchedule")], [], SUCCESS,
                     id="a PreferNoSchedule taint never filters"),
        pytest.param([GPU], [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
                     SUCCESS, id="an Equal toleration with the same key, value and effect tolerates the taint"),
        pytest.param([GPU], [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}], SUCCESS,
                     id="an empty operator means Equal"),
        pytest.param([GPU], [{"key": "dedicated", "operator": "Equal", "value": "cpu", "effect": "NoSchedule"}],
                     _rejected("dedicated=gpu:NoSchedule"), id="an Equal toleration with another value does not"),
        pytest.param([GPU], [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}], SUCCESS,
                     id="an Exists toleration tolerates any value of its key"),
        pytest.param([GPU, _taint("zone", "a", "NoExecute")], [{"operator": "Exists"}], SUCCESS,
                     id="an empty key with Exists tolerates every taint"),
        pytest.param([GPU], [{"key": "dedicated", "operator": "Exists"}], SUCCESS,
                     id="an empty effect matches every effect"),
        pytest.param([_taint("dedicated", "gpu", "NoExecute")],
                     [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
                     _rejected("dedicated=gpu:NoExecute"),
                     id="a NoSchedule toleration does not tolerate a NoExecute taint"),
        pytest.param([_taint("a", "1"), _taint("b", "2")], [{"key": "a", "operator": "Exists"}],
                     _rejected("b=2:NoSchedule"), id="the details name the first taint that is not tolerated"),
        pytest.param([_taint("node-role.kubernetes.io/control-plane")], [],
                     _rejected("node-role.kubernetes.io/control-plane:NoSchedule"),
                     id="a taint without value is written key:effect"),
        pytest.param([_taint("dedicated", "gpu", "PreferNoSchedule"), GPU],
                     [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}], SUCCESS,
                     id="an untolerated PreferNoSchedule taint next to a tolerated NoSchedule one passes"),
    ],
)
def test_filter(taints: list[dict[str, str]], tolerations: list[dict[str, Any]], want: Status) -> None:
    pod = make_pod(tolerations=tolerations)
    node = make_node(taints=taints)
    assert TaintToleration().filter(CycleState(), pod, NodeInfo(node)) == want


@pytest.mark.parametrize(
    ("toleration", "taint", "want"),
    [
        pytest.param(_tol(key="k", operator="Gt", value="5"), Taint("k", "6", "NoSchedule"), True,
                     id="Gt tolerates a taint whose value is greater"),
        pytest.param(_tol(key="k", operator="Gt", value="5"), Taint("k", "5", "NoSchedule"), False,
                     id="Gt does not tolerate an equal value"),
        pytest.param(_tol(key="k", operator="Lt", value="5"), Taint("k", "-3", "NoSchedule"), True,
                     id="Lt tolerates a smaller, negative value"),
        pytest.param(_tol(key="k", operator="Lt", value="5"), Taint("k", "7", "NoSchedule"), False,
                     id="Lt does not tolerate a greater value"),
        pytest.param(_tol(key="k", operator="Lt", value="5"), Taint("k", "03", "NoSchedule"), False,
                     id="a taint value with a leading zero is not a canonical integer and is never tolerated"),
        pytest.param(_tol(key="k", operator="Gt", value="+1"), Taint("k", "2", "NoSchedule"), False,
                     id="a toleration value with a plus sign is not a canonical integer"),
        pytest.param(_tol(key="k", operator="Gt", value="1"), Taint("k", "high", "NoSchedule"), False,
                     id="a non-numeric taint value is never tolerated by Gt"),
        pytest.param(_tol(key="k", operator="Gt", value="1"), Taint("k", str(2**63), "NoSchedule"), False,
                     id="a taint value beyond int64 is never tolerated by Gt"),
        pytest.param(_tol(key="k", operator="In", value="v"), Taint("k", "v", "NoSchedule"), False,
                     id="an unknown operator tolerates nothing"),
        pytest.param(_tol(operator="Equal", value=""), Taint("any", "", "NoExecute"), True,
                     id="an empty key with Equal and an empty value tolerates any taint without value"),
        pytest.param(_tol(key="k", operator="Exists", effect="NoSchedule"), Taint("k", "v", "PreferNoSchedule"), False,
                     id="a toleration's effect must equal the taint's"),
    ],
)
def test_tolerates(toleration: Toleration, taint: Taint, want: bool) -> None:
    assert tolerates(toleration, taint) is want


RESERVATION = Taint(key="CriticalAddonsOnly", value="kresched", effect="NoSchedule")


@pytest.mark.parametrize(
    ("tolerations", "want"),
    [
        pytest.param([], False, id="a pod without tolerations does not tolerate the reservation taint"),
        pytest.param([{"key": "CriticalAddonsOnly", "operator": "Exists"}], True,
                     id="the usual CriticalAddonsOnly Exists toleration tolerates the reservation taint"),
        pytest.param([{"key": "CriticalAddonsOnly", "operator": "Equal", "value": "kresched",
                       "effect": "NoSchedule"}], True, id="an exact toleration tolerates the reservation taint"),
        pytest.param([{"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true"}], False,
                     id="a CriticalAddonsOnly toleration for another value does not"),
    ],
)
def test_reservation_taint(tolerations: list[dict[str, Any]], want: bool) -> None:
    pod = make_pod(tolerations=tolerations)
    assert tolerations_tolerate_taint(pod.spec.tolerations, RESERVATION) is want
    assert (find_untolerated_taint([RESERVATION], pod.spec.tolerations) is None) is want


def test_find_untolerated_taint_takes_another_effect_filter() -> None:
    prefer = Taint("k", "v", "PreferNoSchedule")
    assert find_untolerated_taint([prefer], ()) is None
    assert find_untolerated_taint([prefer], (), include=lambda t: t.effect == "PreferNoSchedule") == prefer


def test_format_taint() -> None:
    assert format_taint(RESERVATION) == "CriticalAddonsOnly=kresched:NoSchedule"


def test_pre_filter_keeps_every_node() -> None:
    snapshot = Snapshot.from_state(make_state([make_node()]))
    assert TaintToleration().pre_filter(CycleState(), make_pod(), snapshot) == PreFilterResult()


def test_the_scheduler_message_counts_tainted_nodes_once_whatever_the_taint() -> None:
    state = make_state([make_node("a", taints=[GPU]), make_node("b", taints=[_taint("zone", "x", "NoExecute")]),
                        make_node("c")])
    diag, _ = find_nodes_that_fit([TaintToleration()], make_pod(), Snapshot.from_state(state))
    assert diag.feasible == ["c"]
    assert fit_error_message(diag) == "0/3 nodes are available: 2 node(s) had untolerated taint(s)."
