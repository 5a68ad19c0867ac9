"""The execution layer's retried writes through `KubeApi`, against the fake API server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kresched.execute.kube import KubeApi
from kresched.execute.writes import EvictionGaveUp, evict_with_retry
from kresched.retry import RetryPolicy
from kresched.sources.connection import connect
from tests.execute.conftest import EVICTION_PATH, VICTIM, pod, seed_preemption
from tests.fakeapi import PDBS, FakeApiServer, call


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def api(fake_api: FakeApiServer, fake_kubeconfig: Path) -> Iterator[KubeApi]:
    seed_preemption(fake_api)
    with connect(str(fake_kubeconfig)) as client:
        yield KubeApi(client)


def policy(sleeps: Sleeps) -> RetryPolicy:
    return RetryPolicy(attempts=None, initial_seconds=0.001, max_seconds=15, jitter_seconds=0, sleep=sleeps)


def test_an_eviction_429_waits_at_least_its_retry_after(api, fake_api, monkeypatch):
    monkeypatch.setenv("KRESCHED_BACKOFF_SCALE", "1")  # the pauses are recorded, not slept
    # A PDB its controller has not processed yet: 429 with Retry-After: 10, until the controller catches up.
    fake_api.store.mutate(PDBS, "shop", "web", lambda b: b["metadata"].update(generation=2))
    fake_api.faults.script([None, call(lambda r: fake_api.store.mutate(
        PDBS, "shop", "web", lambda b: b["status"].update(observedGeneration=2)))], path=EVICTION_PATH, method="POST")
    sleeps = Sleeps()
    victim = api.read_state().pod(VICTIM)
    evict_with_retry(api, victim, 5, deadline_seconds=60, policy=policy(sleeps))
    assert [r.status for r in fake_api.calls(EVICTION_PATH)] == [429, 201]
    assert sleeps == [10.0]
    assert pod(fake_api, VICTIM) is None


def test_an_eviction_refused_past_its_deadline_gives_up_with_the_pdbs_words(api, fake_api):
    fake_api.store.mutate(PDBS, "shop", "web", lambda b: b["status"].update(disruptionsAllowed=0))
    victim = api.read_state().pod(VICTIM)
    blocked: list[str] = []
    with pytest.raises(EvictionGaveUp) as err:
        evict_with_retry(api, victim, 5, deadline_seconds=1, on_blocked=blocked.append,
                         policy=RetryPolicy(attempts=None, initial_seconds=0.05, max_seconds=0.05, jitter_seconds=0))
    assert err.value.message == ("still refused after 1s: Cannot evict pod as it would violate the pod's disruption "
                                 "budget. The disruption budget web needs 0 healthy pods and has 1 currently")
    assert len(blocked) == len(fake_api.calls(EVICTION_PATH)) >= 2
