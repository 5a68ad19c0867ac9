"""The live footer a drain shows on a terminal: counts, and which PDBs pods are waiting for."""

from __future__ import annotations

from kresched.execute.events import Event
from kresched.render.events import Progress, progress_text


def ev(action: str, pod: str, pdb: str | None = None) -> Event:
    return Event(action, action, {"pod": pod, "pdb": pdb})


def test_the_footer_counts_evictions_and_shows_the_pdbs_pods_wait_for_until_they_go() -> None:
    p = Progress(started=100.0)
    for e in (ev("evicted", "shop/a"), ev("pdb-blocked", "shop/b", "shop/web"), ev("pdb-blocked", "shop/c", "shop/web"),
              ev("pdb-blocked", "data/z", "data/zk"), ev("gone", "shop/a")):
        p.update(e)
    assert progress_text(p, 112.4).plain == (
        "⏱ 12s · evicted 1 · gone 1 · refused by a PDB 3 · waiting for data/zk (1), shop/web (2)")
    p.update(ev("evicted", "shop/b", "shop/web"))
    p.update(ev("gave-up", "data/z", "data/zk"))
    assert progress_text(p, 130.0).plain == (
        "⏱ 30s · evicted 2 · gone 1 · refused by a PDB 3 · given up 1 · waiting for shop/web (1)")


def test_the_status_lines_clock_is_read_when_it_is_drawn_not_when_it_was_last_set(monkeypatch) -> None:
    """Issue 31: a list or a bind wait of a minute showed `(0s)`: the time was written into the
    text at the last update. It is now the time since the start whenever rich draws the line."""
    import time

    from rich.console import Console

    from kresched.cli.progress import Ticking

    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    status = Ticking("listing Pods from \"prod\": 110 so far")
    console = Console(width=80, color_system=None, file=None)

    def drawn() -> str:
        with console.capture() as cap:
            console.print(status)
        return cap.get().strip()

    assert drawn() == 'listing Pods from "prod": 110 so far (0s)'
    now[0] += 65  # nothing updated the text meanwhile
    assert drawn() == 'listing Pods from "prod": 110 so far (1m05s)'
