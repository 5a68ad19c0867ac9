"""The drain benchmark case: the pre-flight (`plan_drain`) of one node of a generated cluster.

Owns the `drain.preflight.all` case, registered by `benchmarks.cases` through `register(case)`
(a function, not a decorator at import time: the child process runs `benchmarks.cases` as
`__main__`, and its registry is that module's, not a second import's).

The node is the one `drain.preflight` drains (the untainted node that runs the most pods), here
with `--ignore-daemonsets --delete-emptydir-data --force`, so that every pod kubectl would evict
is checked and placed (without the flags, the pods they cover are refused, not placed). The timed
part is `plan_drain` alone; loading the file is untimed setup (the load cases report it).
Target: under 5 s on `large` (5,000 nodes, 150,000 pods).

`kubectl drain` against the same server is compared by `tests/bench/drain_vs_kubectl.py` (it
needs the fake API server, which lives with the tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["PREFLIGHT_TARGET_SECONDS", "preflight", "register"]

PREFLIGHT_TARGET_SECONDS = 5.0


def preflight(path: Path) -> tuple[float, dict[str, Any]]:
    from kresched.plan.drain import DrainOptions, plan_drain
    from kresched.sources.snapshot import load_snapshot

    state = load_snapshot(str(path))
    workers = [n for n in state.nodes if not n.taints]
    node = max(workers, key=lambda n: (len(state.pods_on(n.name)), n.name))
    opts = DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True)
    t0 = time.perf_counter()
    plan = plan_drain(state, [node.name], opts)
    seconds = time.perf_counter() - t0
    [n] = plan.nodes
    return seconds, {"node": node.name, "podsOnNode": len(state.pods_on(node.name)), "evict": len(n.evict),
                     "skip": len(n.skip), "landed": sum(1 for p in n.evict if p.lands_on),
                     "pending": len(plan.pending), "blocked": len(plan.blocked),
                     "targetSeconds": PREFLIGHT_TARGET_SECONDS}


def register(case: Callable[..., Any]) -> None:
    """Add the drain cases to the registry `case` (the `benchmarks.cases.case` decorator)."""
    case("drain.preflight.all", "  same, all of kubectl's flags (every pod placed)")(preflight)
