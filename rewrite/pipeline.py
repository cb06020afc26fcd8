"""The pipeline as readable functions of named stages: optimize, compile, compare.

import → saturate → extract → verify          (``optimize``)
graph → fused kernels → LLVM → a callable     (``compile``)

>>> from bench.models import load
>>> from rewrite.frontends import from_torch
>>> result = optimize(from_torch(*load("nasrnn")))
>>> result.stats["verified"], result.stats["cost_after"] < result.stats["cost_before"]
(True, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from costs.analytical import AnalyticalCost
from costs.measured import register_runner
from costs.model import graph_cost
from costs.timing import alternate
from lower import CompiledGraph, compile_graph
from lower.cuda import graph_ptx
from lower.cuda.measure import run_cuda_op
from rewrite.egraph.saturate import IterationStat, Limits, saturate
from rewrite.extract.decode import to_graph
from rewrite.extract.egraph_data import EGraphData, read_serialized
from rewrite.extract.greedy import dag_cost, greedy_choice, node_costs, select
from rewrite.extract.ilp import ilp_extract
from rewrite.ir.errors import UsageError, VerificationError
from rewrite.ir.graph import Graph
from rewrite.ir.target import Target
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import Rule
from rewrite.verify.numeric import REL_TOL, compare_all, verify

EXTRACTORS = ("greedy", "ilp")


# ------------------------------------------------------------------ optimize


@dataclass
class OptimizeResult:
    graph: Graph
    original: Graph
    stats: dict[str, Any] = field(default_factory=dict)


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
        raise UsageError(f"unknown extractor '{extractor}'; choose from {', '.join(EXTRACTORS)}")
    limits.check()
    graph.validate()
    if cost_model is None:
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


def compile(graph: Graph, target: str | Target = "llvm", threads: int | None = None) -> CompiledGraph:
    """Lower ``graph`` to kernels for ``target`` (a kind name or a ``Target``) and return a callable like ``graph.run``.

    >>> run = compile(result.graph)           # doctest: +SKIP
    >>> outputs = run({"x": x})               # doctest: +SKIP
    """
    return compile_graph(graph, target=target, threads=threads)


# MeasuredCost(target=<a cuda Target>) times ops with the CUDA backend's kernels, keyed by the GPU target
register_runner("cuda", run_cuda_op)


def compile_ptx(graph: Graph, arch: str = "sm_90") -> list[str]:
    """PTX (one text per kernel, launch order) that the ``cuda`` target generates for ``graph``, compiled by
    NVRTC for ``arch``; needs no GPU (the ``cuda`` extra for NVRTC).

    >>> ptx = compile_ptx(graph, arch="sm_90")    # doctest: +SKIP
    """
    return graph_ptx(graph, arch)


def compile_and_compare(
    graph: Graph,
    module: torch.nn.Module,
    inputs: tuple[torch.Tensor, ...],
    target: str | Target = "llvm",
    repeats: int = 10,
) -> dict[str, Any]:
    """Compile ``graph``, check its outputs against ``module`` and time both, alternated.

    Raises ``VerificationError`` when the compiled graph's outputs differ from PyTorch's.
    """
    run = compile(graph, target=target)
    names = [n.attrs["name"] for n in graph.inputs]  # decode keeps the original input order
    feed = dict(zip(names, inputs, strict=False))
    with torch.no_grad():
        ref = module(*inputs)
        refs = [ref] if isinstance(ref, torch.Tensor) else list(ref)
        outs = run(feed)
        cmp = compare_all(refs, [o.cpu() for o in outs], REL_TOL)  # a GPU target returns device tensors
        if not cmp.close:
            raise VerificationError(f"compiled graph '{graph.name}' differs from PyTorch: {cmp.why}")
        t_ours, t_eager = alternate([lambda: run(feed), lambda: module(*inputs)], repeats=repeats)
    return {
        "target": run.target.name,
        "compile_seconds": run.compile_seconds,
        "kernels": run.kernels,
        "latency_ms": t_ours * 1e3,
        "torch_eager_ms": t_eager * 1e3,
        "speedup_vs_eager": t_eager / t_ours,
        "max_rel_err": cmp.rel_err,
        "torch_threads": torch.get_num_threads(),
        "plan": str(run.plan),
    }


def saturated_egraph(graph: Graph, rules: Sequence[Rule], limits: Limits = Limits()) -> EGraphData:
    """Saturate ``graph`` and read the e-graph back as extraction sees it (every candidate e-node)."""
    return read_serialized(saturate(graph, list(rules), limits).serialized())
