"""How well does a cost model rank real candidates?  Spearman correlation against measured run times.

For each candidate graph, the model's prediction is ``costs.model.graph_cost``: the sum of its costs
over run-time nodes (weight-only nodes are precomputed); the measurement is the
median wall time of ``Graph.run`` on the graph with its weight-only sub-graphs folded into
weights first (``Graph.folded``), so neither side pays for precomputation.  Graphs are timed in
alternating rounds (forward, then backward order) so drift on a shared machine hits every
candidate alike.

    >>> # from rewrite.extract.sample import sample_graphs
    >>> # fidelity(sample_graphs(data, graph, 20), AnalyticalCost())["spearman"]
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from costs.model import CostModel, graph_cost
from rewrite.ir.graph import Graph


def ranks(xs: Sequence[float]) -> list[float]:
    """1-based ranks; tied values share the average of their ranks."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    n = len(xs)
    if n != len(ys):
        raise ValueError(f"need equally long sequences, got {n} and {len(ys)}")
    if n < 2:
        return math.nan
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return math.nan
    return sxy / math.sqrt(sxx * syy)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (Pearson on average ranks); NaN if either side is constant."""
    return pearson(ranks(xs), ranks(ys))


def measure_graphs(
    graphs: Sequence[Graph],
    repeats: int = 10,
    warmup: int = 2,
    seed: int = 0,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[float]:
    """Median run time of each graph (weight-only sub-graphs folded first), timed in alternating rounds."""
    folded = [g.folded() for g in graphs]
    inputs = [g.random_inputs(seed) for g in folded]
    times: list[list[float]] = [[] for _ in folded]
    gc_was = gc.isenabled()
    gc.disable()
    try:
        with torch.no_grad():
            for _ in range(warmup):
                for g, x in zip(folded, inputs):
                    g.run(x)
            for r in range(repeats):
                order = range(len(folded)) if r % 2 == 0 else range(len(folded) - 1, -1, -1)
                for i in order:
                    t = time.perf_counter()
                    folded[i].run(inputs[i])
                    times[i].append(time.perf_counter() - t)
                if on_progress is not None:
                    on_progress(r + 1, repeats)
    finally:
        if gc_was:
            gc.enable()
    return [statistics.median(ts) for ts in times]


def fidelity(
    graphs: Sequence[Graph],
    model: CostModel,
    repeats: int = 10,
    warmup: int = 2,
    seed: int = 0,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Rank agreement between ``model`` and measured run times over candidate ``graphs``.

    Returns ``spearman``, ``median_rel_err`` (median of |predicted - measured| / measured),
    ``candidates`` and the two lists ``predicted`` and ``measured`` (seconds).
    """
    if not graphs:
        raise ValueError("fidelity needs at least one candidate graph")
    predicted = [graph_cost(g, model) for g in graphs]
    return agreement(predicted, measure_graphs(graphs, repeats, warmup, seed, on_progress))


def agreement(predicted: Sequence[float], measured: Sequence[float]) -> dict[str, Any]:
    """How well ``predicted`` seconds rank and match ``measured`` ones (see ``fidelity`` for the keys).

    >>> agreement([1.0, 2.0, 3.0], [0.1, 0.3, 0.2])["spearman"]
    0.5
    """
    rel = [abs(p - m) / m for p, m in zip(predicted, measured) if m > 0]
    return {
        "spearman": spearman(predicted, measured),
        "median_rel_err": statistics.median(rel) if rel else math.nan,
        "candidates": len(predicted),
        "predicted": list(predicted),
        "measured": list(measured),
    }
