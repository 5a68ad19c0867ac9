"""A signal that arrives while the reservation is being released waits for the release to finish,
then ends the run as it would have: KeyboardInterrupt for Ctrl-C, `Terminated` for SIGTERM."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest

from kresched.execute.api import DryRunApi, WaitResult
from kresched.execute.events import Collector
from kresched.execute.preempt import PreemptOptions, Terminated, preempt, signals_as_exceptions
from kresched.model.objects import Node
from kresched.plan.planner import plan_pod
from tests.execute.conftest import PENDING, seed_preemption
from tests.fakeapi import FakeApiServer, cluster_state


class SignalDuringRelease(DryRunApi):
    """A dry-run client that sends its own process `signum` when the release starts reading the node."""

    signum: int = signal.SIGINT
    waited: bool = False

    def wait_for_binding(self, pod: Any, timeout_seconds: float, progress: Any = None,
                         planned: Any = None) -> WaitResult:
        self.waited = True
        return WaitResult("timeout")

    def get_node(self, name: str) -> Node:
        if self.waited:
            self.waited = False
            os.kill(os.getpid(), self.signum)
        return super().get_node(name)


def setup_api(signum: int) -> tuple[SignalDuringRelease, Any]:
    fake = FakeApiServer()
    seed_preemption(fake)
    state = cluster_state(fake.store)
    api = SignalDuringRelease(state)
    api.signum = signum
    return api, plan_pod(state, state.pod(PENDING))


def released(api: DryRunApi) -> bool:
    patches = [patch for verb, _, patch in api.writes if verb == "patch"]
    return len(patches) == 2 and patches[1]["metadata"]["annotations"]["kresched.io/reserved-for"] is None


def test_ctrl_c_during_the_release_is_raised_once_the_release_is_done():
    api, plan = setup_api(signal.SIGINT)
    events = Collector()
    with pytest.raises(KeyboardInterrupt):
        preempt(api, plan, PreemptOptions(), events)
    assert released(api)
    assert events.actions()[-2:] == ["timeout", "released"]


def test_sigterm_during_the_release_is_raised_once_the_release_is_done():
    api, plan = setup_api(signal.SIGTERM)
    events = Collector()
    with signals_as_exceptions(), pytest.raises(Terminated):
        preempt(api, plan, PreemptOptions(), events)
    assert released(api)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handlers restored
