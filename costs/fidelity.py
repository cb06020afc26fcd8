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

import functools
import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import torch

from costs.model import CostModel, graph_cost
from costs.timing import Speedup, interleaved, speedup
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
    with torch.no_grad():
        fns = [functools.partial(g.run, x) for g, x in zip(folded, inputs, strict=True)]
        run = interleaved(fns, repeats, warmup, on_round=on_progress)
    return [t.median for t in run.timings]


def graph_speedup(original: Graph, optimized: Graph, repeats: int = 10, warmup: int = 2, seed: int = 0) -> Speedup:
    """How many times faster ``optimized`` runs than ``original`` under ``Graph.run`` (weight-only
    sub-graphs folded first), interleaved on torch's current thread count."""
    a, b = original.folded(), optimized.folded()
    xa, xb = a.random_inputs(seed), b.random_inputs(seed)
    with torch.no_grad():
        return speedup(functools.partial(b.run, xb), functools.partial(a.run, xa), repeats, warmup)


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
