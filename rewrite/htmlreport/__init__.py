"""The before/after HTML report of one optimization: ``report(result, "report.html")``.

One self-contained file (inline CSS, SVG and a few lines of JS; nothing is fetched): a summary,
both graphs drawn with the changed regions marked, each region with the rules credited for it,
the e-graph's growth and per-rule time as plots, the modelled cost per op type, and, when given,
the kernel plan with per-kernel times and several searches side by side.

The package is named ``htmlreport`` rather than ``report`` so that ``rewrite.report`` stays the
function: importing a submodule ``rewrite.report`` would rebind that attribute to the package.

    >>> from rewrite.pipeline import optimize                     # doctest: +SKIP
    >>> report(optimize(graph), "report.html")                    # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costs.analytical import AnalyticalCost
from costs.model import CostModel
from rewrite.htmlreport.html import Page, SearchSummary, page
from rewrite.htmlreport.provenance import Provenance, provenance
from rewrite.ir.diff import diff
from rewrite.pipeline import OptimizeResult
from rewrite.results import RunStats
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import Rule

__all__ = ["Page", "Provenance", "SearchSummary", "build", "provenance", "report"]


def build(
    result: OptimizeResult,
    rules: Sequence[Rule] | None = None,
    cost_model: CostModel | None = None,
    runs: Mapping[str, RunStats] | None = None,
    kernels: Sequence[Mapping[str, Any]] = (),
    searches: Sequence[SearchSummary] = (),
    notes: Sequence[str] = (),
) -> Page:
    """What the page shows, computed: the diff, the rules credited with each region, and the given extras.

    ``rules``: the rules the optimization used (default: every shipped rule, as ``optimize`` uses);
    ``cost_model``: the one it priced with (default ``AnalyticalCost``); ``runs``: ``RunStats`` of the
    ``"before"`` and ``"after"`` graphs; ``kernels``: ``CompiledGraph.profile()`` of the result.
    """
    d = diff(result.original, result.graph)
    prov = provenance(d, rules if rules is not None else load_rules(None), result.stats.rules_fired)
    model = cost_model if cost_model is not None else AnalyticalCost()
    return Page(result.stats, d, prov, model, dict(runs or {}), list(kernels), list(searches), list(notes))


def report(result: OptimizeResult, path: str | Path, **extras: Any) -> Page:
    """Write the HTML report of ``result`` to ``path``; ``extras`` as for ``build``.  Returns what it showed."""
    p = build(result, **extras)
    Path(path).write_text(page(p), encoding="utf-8")
    return p
