"""Timing on a shared, noisy machine: alternate the contenders, keep medians.

>>> a, b = alternate([lambda: f(x), lambda: g(x)], repeats=10)   # seconds, median each
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence


def alternate(fns: Sequence[Callable[[], object]], repeats: int = 10, warmup: int = 2) -> list[float]:
    """Median seconds of each function, run in alternating (forward, then reversed) rounds."""
    for _ in range(warmup):
        for f in fns:
            f()
    times: list[list[float]] = [[] for _ in fns]
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for r in range(repeats):
            order = range(len(fns)) if r % 2 == 0 else range(len(fns) - 1, -1, -1)
            for i in order:
                t = time.perf_counter()
                fns[i]()
                times[i].append(time.perf_counter() - t)
    finally:
        if gc_was:
            gc.enable()
    return [statistics.median(ts) for ts in times]
