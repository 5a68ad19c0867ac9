"""The names of rebalance's objectives, in the order each round tries them (`plan.rebalance`).

On their own so that the command line can list them in its help without importing the planner
they name."""

from __future__ import annotations

__all__ = ["OBJECTIVES"]

OBJECTIVES = ("violations", "preferences", "utilisation")
