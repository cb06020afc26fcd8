"""Saturation limits and why saturation stopped: light types the CLI and the API share.

egglog has no limits of its own; ``rewrite.egraph.saturate`` checks these between iterations.

    >>> Limits(iterations=5, nodes=10_000, seconds=5).check()
    >>> Limits(nodes=0).check()
    Traceback (most recent call last):
    ...
    rewrite.ir.errors.UsageError: node limit must be >= 1, got 0
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rewrite.ir.errors import UsageError


class StopReason(str, Enum):
    GOAL = "goal"  # the caller's ``until`` condition held (e.g. two terms became equal)
    SATURATED = "saturated"
    ITERATION_LIMIT = "iteration_limit"
    NODE_LIMIT = "node_limit"
    TIME_LIMIT = "time_limit"


@dataclass(frozen=True)
class Limits:
    """Saturation limits. ``match_limit`` is matches per rule per iteration (None: scale with the graph)."""

    iterations: int = 12
    nodes: int = 50_000
    seconds: float = 20.0
    match_limit: int | None = None

    def check(self) -> None:
        if self.iterations < 0:
            raise UsageError(f"iteration limit must be >= 0, got {self.iterations}")
        if self.nodes < 1:
            raise UsageError(f"node limit must be >= 1, got {self.nodes}")
        if not self.seconds > 0:
            raise UsageError(f"time limit must be > 0 seconds, got {self.seconds}")
        if self.match_limit is not None and self.match_limit < 1:
            raise UsageError(f"match limit must be >= 1, got {self.match_limit}")
