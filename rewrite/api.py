"""The pipeline as one readable function: load → saturate → extract → verify.

>>> from bench.models import load
>>> from rewrite.frontends import from_torch
>>> result = optimize(from_torch(*load("nasrnn")))
>>> result.stats["verified"], result.stats["cost_after"] < result.stats["cost_before"]
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from rewrite.egraph.saturate import IterationStat, Limits, saturate
from rewrite.extract.decode import to_graph
from rewrite.extract.egraph_data import read_serialized
from rewrite.extract.greedy import dag_cost, greedy_choice, node_costs, select
from rewrite.graph import Graph
from rewrite.rulelang.syntax import Rule, RuleError, load_rule_file

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
EXTRACTORS = ("greedy", "ilp")


class VerificationError(AssertionError):
    """The optimized graph computes something else: the worst bug we can ship."""


def rule_files() -> dict[str, Path]:
    """Shipped rule families: name → file."""
    return {p.stem: p for p in sorted(RULES_DIR.glob("*.rules"))}


def load_rules(spec: Sequence[str | Path] | None = None) -> list[Rule]:
    """Rules from family names (``algebra``) and/or file paths; ``None`` loads every shipped family."""
    families = rule_files()
    paths: list[Path] = []
    for item in spec if spec is not None else list(families):
        s = str(item)
        if s in families:
            paths.append(families[s])
        elif Path(s).exists():
            paths.append(Path(s))
        else:
            raise FileNotFoundError(f"no rule family or file '{s}'; families: {', '.join(families)}")
    rules: list[Rule] = []
    seen: dict[str, Rule] = {}
    for p in paths:
        for r in load_rule_file(p):
            if r.name in seen:
                raise RuleError(r.loc, f"rule '{r.name}' is also defined at {seen[r.name].loc}")
            seen[r.name] = r
            rules.append(r)
    return rules


# ------------------------------------------------------------------ verification


@dataclass
class VerifyResult:
    ok: bool
    max_abs_err: float
    max_rel_err: float
    trials: int


def verify(original: Graph, optimized: Graph, trials: int = 2, rtol: float = 1e-4) -> VerifyResult:
    """Run both graphs on random inputs and compare every output.

    An output matches when ``max|a - b| <= rtol * max(1, max|a|)``.
    """
    worst_abs, worst_rel, ok = 0.0, 0.0, True
    if len(original.outputs) != len(optimized.outputs):
        return VerifyResult(False, float("inf"), float("inf"), 0)
    for seed in range(trials):
        inputs = original.random_inputs(seed)
        for a, b in zip(original.run(inputs), optimized.run(inputs)):
            if a.shape != b.shape:
                return VerifyResult(False, float("inf"), float("inf"), seed + 1)
            err = (a - b).abs().max().item() if a.numel() else 0.0
            scale = max(1.0, a.abs().max().item() if a.numel() else 0.0)
            if not torch.isfinite(b).all() and torch.isfinite(a).all():
                err = float("inf")
            worst_abs, worst_rel = max(worst_abs, err), max(worst_rel, err / scale)
            ok = ok and err <= rtol * scale
    return VerifyResult(ok, worst_abs, worst_rel, trials)


# ------------------------------------------------------------------ optimize


@dataclass
class OptimizeResult:
    graph: Graph
    original: Graph
    stats: dict[str, Any] = field(default_factory=dict)


def graph_cost(graph: Graph, cost: Callable[..., float]) -> float:
    """Modelled seconds of a graph; weight-only nodes are precomputed, so free."""
    const = graph.weight_only()
    return sum(
        cost(n.op, n.attrs, [graph.shape_of(v) for v in n.inputs]) for n in graph.compute_nodes() if n.id not in const
    )


def optimize(
    graph: Graph,
    rules: Sequence[Rule] | Sequence[str] | None = None,
    limits: Limits = Limits(),
    extractor: str = "ilp",
    cost_model: Callable[..., float] | None = None,
    check: bool = True,
    on_iteration: Callable[[IterationStat], None] | None = None,
    ilp_seconds: float = 10.0,
) -> OptimizeResult:
    """Saturate ``graph`` with ``rules`` under ``limits``, extract the cheapest graph, verify it.

    ``extractor="ilp"`` (the default) solves extraction exactly with HiGHS within ``ilp_seconds``,
    warm-started from, and never worse than, the greedy answer, which it falls back to when it
    cannot finish; its status and optimality gap land in the stats.  ``"greedy"`` skips the ILP.
    """
    if extractor not in EXTRACTORS:
        raise ValueError(f"unknown extractor '{extractor}'; choose from {', '.join(EXTRACTORS)}")
    limits.check()
    graph.validate()
    if cost_model is None:
        from costs.analytical import AnalyticalCost

        cost_model = AnalyticalCost()
    rule_list = list(rules) if rules and isinstance(next(iter(rules)), Rule) else load_rules(rules)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    sat = saturate(graph, rule_list, limits, on_iteration)  # type: ignore[arg-type]
    t1 = time.perf_counter()
    data = read_serialized(sat.serialized())
    ncost = node_costs(data, cost_model)
    sel = select(data, greedy_choice(data, ncost), ncost)
    t_greedy = time.perf_counter() - t1
    best = to_graph(data, sel, graph)
    cost_before = graph_cost(graph, cost_model)
    ilp_info: dict[str, Any] = {}
    if extractor == "ilp":
        from rewrite.extract.ilp import ilp_extract

        res = ilp_extract(data, ncost, time_limit=ilp_seconds, warm_start=sel)
        greedy_graph, greedy_cost = best, graph_cost(best, cost_model)
        best = to_graph(data, res.selection, graph)
        if graph_cost(best, cost_model) > greedy_cost:  # decoding can differ slightly: keep the cheaper
            best = greedy_graph
        ilp_info = {
            "ilp_status": res.status,
            "ilp_source": res.source,
            "ilp_gap": res.gap,
            "ilp_objective": res.objective,
            "ilp_bound": res.bound,
            "greedy_objective": res.greedy_objective,
            "ilp_seconds": res.seconds,
            "cost_after_greedy": min(greedy_cost, cost_before),
        }
    t2 = time.perf_counter()
    cost_after = graph_cost(best, cost_model)
    if cost_after > cost_before:  # extraction never makes things worse than the input
        best, cost_after = graph, cost_before
    v = verify(graph, best) if check else None
    t3 = time.perf_counter()
    stats: dict[str, Any] = {
        "model": graph.name,
        "ops_before": graph.op_count(),
        "ops_after": best.op_count(),
        "cost_before": cost_before,
        "cost_after": cost_after,
        "extracted_dag_cost": dag_cost(sel, ncost),
        "extractor": extractor,
        **ilp_info,
        "stop_reason": sat.stop_reason.value,
        "iterations": len(sat.iterations),
        "enodes": sat.enodes,
        "eclasses": sat.eclasses,
        "per_iteration": [
            {"iteration": s.index, "enodes": s.enodes, "eclasses": s.eclasses, "seconds": round(s.seconds, 4)}
            for s in sat.iterations
        ],
        "seconds": {
            "load": sat.seconds_load,
            "saturate": sat.seconds_saturate,
            "extract": t2 - t1,
            "extract_greedy": t_greedy,
            "verify": t3 - t2,
            "total": t3 - t0,
        },
        "verified": bool(v.ok) if v else None,
        "max_abs_err": v.max_abs_err if v else None,
        "rules_fired": dict(sorted(sat.rules_fired.items())),
        "dropped_enodes": len(data.dropped),
        "limits": {
            "iterations": limits.iterations,
            "nodes": limits.nodes,
            "seconds": limits.seconds,
            "match_limit": sat.stats["match_limit"],
        },
    }
    if v is not None and not v.ok:
        raise VerificationError(
            f"optimized graph of '{graph.name}' differs from the original: max abs error {v.max_abs_err:.3g} "
            f"(relative {v.max_rel_err:.3g}); rules fired: {stats['rules_fired']}"
        )
    return OptimizeResult(best, graph, stats)


# ------------------------------------------------------------------ compile


def compile(graph: Graph, target: str = "llvm", threads: int | None = None) -> Any:  # noqa: A001
    """Lower ``graph`` to kernels for ``target`` and return a callable like ``graph.run``.

    >>> run = compile(result.graph)           # doctest: +SKIP
    >>> outputs = run({"x": x})               # doctest: +SKIP
    """
    from lower import compile_graph

    return compile_graph(graph, target=target, threads=threads)
