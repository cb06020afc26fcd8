"""Saturation limits and why saturation stopped: light types the CLI and the API share.

egglog has no limits of its own; ``rewrite.egraph.saturate`` checks these between iterations.

    >>> Limits(iterations=5, nodes=10_000, seconds=5).check()
    >>> Limits(nodes=0).check()
    Traceback (most recent call last):
    ...
    rewrite.ir.errors.UsageError: node limit must be >= 1, got 0
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum
from numbers import Integral, Real

from rewrite.ir.errors import UsageError


class StopReason(str, Enum):
    GOAL = "goal"  # the caller's ``until`` condition held (e.g. two terms became equal)
    SATURATED = "saturated"
    ITERATION_LIMIT = "iteration_limit"
    NODE_LIMIT = "node_limit"
    TIME_LIMIT = "time_limit"


_EXAMPLE = {
    "iterations": "iterations=12",
    "nodes": "nodes=50_000",
    "seconds": "seconds=20",
    "match_limit": "match_limit=15_000",
}


@dataclass(frozen=True)
class Limits:
    """Saturation limits. ``match_limit`` is matches per rule per iteration (None: scale with the graph)."""

    iterations: int = 12
    nodes: int = 50_000
    seconds: float = 20.0
    match_limit: int | None = None

    def __post_init__(self) -> None:
        """Refuse a wrong type when the limits are made, not later inside saturation (values: ``check``, so
        that impossible limits can still be made and shown); numpy numbers become Python ones (the limits
        land in ``stats.to_json()``)."""
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.name == "match_limit":
                continue
            number = f.name == "seconds"
            if not isinstance(value, bool):  # a bool is an int to Python, never a limit
                if number and isinstance(value, Real):
                    object.__setattr__(self, f.name, float(value))
                    continue
                if not number and isinstance(value, Integral):
                    object.__setattr__(self, f.name, int(value))
                    continue
            given = repr(value) if value is None or isinstance(value, (str, bool)) else f"a {type(value).__name__}"
            raise UsageError(
                f"Limits: {f.name} must be {'a number' if number else 'an int'}, got {given}; "
                f"e.g. Limits({_EXAMPLE[f.name]})"
            )

    def check(self) -> None:
        if self.iterations < 0:
            raise UsageError(f"iteration limit must be >= 0, got {self.iterations}")
        if self.nodes < 1:
            raise UsageError(f"node limit must be >= 1, got {self.nodes}")
        if not self.seconds > 0:
            raise UsageError(f"time limit must be > 0 seconds, got {self.seconds}")
        if self.match_limit is not None and self.match_limit < 1:
            raise UsageError(f"match limit must be >= 1, got {self.match_limit}")
