"""The pipeline as readable functions of named stages: optimize, compile, compare.

import → saturate → extract (greedy, ILP) → choose → verify     (``optimize``)
graph → fused kernels → LLVM → a callable                       (``compile``)

Each stage is a small function that checks what it promises: an extracted graph is well-formed
(``Graph.validate``) and keeps the original's inputs and output shapes; the chosen graph costs no
more than the input; the result computes what the input computes (``verify``).

>>> from bench.models import load
>>> from rewrite.frontends import from_torch
>>> result = optimize(from_torch(*load("nasrnn")))
>>> result.stats.verified, result.stats.cost_after < result.stats.cost_before
(True, True)
"""

from __future__ import annotations

import functools
import hashlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

import lower
from costs.analytical import AnalyticalCost
from costs.compiled import FUSED, CompiledCost, base_target
from costs.measured import Measurement, egraph_configs, register_runner
from costs.model import CostModel, graph_cost
from costs.timing import BUSY_CORES, free_threads, speedup
from lower import CompiledGraph, compile_graph, parse_target
from lower.cuda import graph_ptx
from lower.cuda.measure import run_cuda_op
from rewrite.egraph.limits import Limits
from rewrite.egraph.saturate import IterationStat, SaturationResult, saturate
from rewrite.extract.decode import to_graph
from rewrite.extract.egraph_data import EGraphData, ENode, read_serialized
from rewrite.extract.greedy import dag_cost, greedy_choice, node_costs, select
from rewrite.extract.ilp import ilp_extract
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import ExtractionError, UsageError, VerificationError
from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import OPS, Shape
from rewrite.ir.target import Target
from rewrite.progress import close, counter, iterations, stage
from rewrite.results import IlpStats, LimitStats, OptimizeStats, RunStats, SaturationStats, SearchStats, Timings
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import Rule
from rewrite.search import SearchResult, backtrack
from rewrite.verify.numeric import REL_TOL, VerifyResult, compare_all, verify

EXTRACTORS = ("greedy", "ilp")
SEARCHES = ("eqsat", "backtrack")


# ------------------------------------------------------------------ optimize


@dataclass
class OptimizeResult:
    graph: Graph
    original: Graph
    stats: OptimizeStats


@dataclass(frozen=True)
class _Candidates:
    """What extraction found: the greedy graph, the ILP's (if asked for), and the figures around them."""

    greedy: Graph
    greedy_cost: float
    ilp: Graph | None
    ilp_stats: IlpStats | None
    cost_before: float
    greedy_dag_cost: float
    dropped: int
    greedy_seconds: float
    ilp_seconds: float  # 0 without the ILP


def _rule_list(rules: Sequence[Rule] | Sequence[str] | None) -> list[Rule]:
    """Parsed rules as given, or the rule files/families named (None: every shipped rule)."""
    if rules and isinstance(next(iter(rules)), Rule):
        return list(rules)  # type: ignore[arg-type]
    return load_rules(rules)  # type: ignore[arg-type]


def _signature(g: Graph) -> list[tuple[str, Shape]]:
    """The inputs callers feed, by name and shape, in order (positional callers rely on the order)."""
    return [(n.attrs["name"], n.shape) for n in g.inputs]


def _decoded(data: EGraphData, sel: dict[str, ENode], original: Graph) -> Graph:
    """The graph a selection spells, checked: well-formed, same inputs in order, same output shapes."""
    g = to_graph(data, sel, original)
    g.validate()
    inputs, want_inputs = _signature(g), _signature(original)
    if inputs != want_inputs:
        raise ExtractionError(f"extracted graph of '{original.name}' has inputs {inputs}, expected {want_inputs}")
    shapes, want = [g.shape_of(v) for v in g.outputs], [original.shape_of(v) for v in original.outputs]
    if shapes != want:
        raise ExtractionError(f"extracted graph of '{original.name}' has output shapes {shapes}, expected {want}")
    return g


def _extract(graph: Graph, sat: SaturationResult, model: CostModel, extractor: str, ilp_seconds: float) -> _Candidates:
    """Greedy DAG-aware extraction, then (for ``"ilp"``) the exact ILP warm-started from it."""
    data = read_serialized(sat.serialized())
    _measure_candidates(data, model)
    t0 = time.perf_counter()
    ncost = node_costs(data, model)
    sel = select(data, greedy_choice(data, ncost), ncost)
    greedy_seconds = time.perf_counter() - t0
    greedy = _decoded(data, sel, graph)
    cost_before = graph_cost(graph, model)
    ilp_graph, ilp_stats, greedy_cost = None, None, graph_cost(greedy, model)
    if extractor == "ilp":
        res = ilp_extract(data, ncost, time_limit=ilp_seconds, warm_start=sel)
        ilp_graph = _decoded(data, res.selection, graph)
        ilp_stats = IlpStats(
            res.status,
            res.source,
            res.gap,
            res.objective,
            res.bound,
            res.greedy_objective,
            res.seconds,
            cost_after_greedy=min(greedy_cost, cost_before),
        )
    return _Candidates(
        greedy,
        greedy_cost,
        ilp_graph,
        ilp_stats,
        cost_before,
        dag_cost(sel, ncost),
        len(data.dropped),
        greedy_seconds,
        ilp_stats.seconds if ilp_stats is not None else 0.0,
    )


def _measure_candidates(data: EGraphData, model: CostModel) -> None:
    """A compiled cost model that measures what is missing measures every e-node extraction may pick first,
    under a progress bar (once per configuration and target: the rows are cached)."""
    if not isinstance(model, CompiledCost) or not model.measure_missing:
        return
    configs = model.missing(egraph_configs(data))
    if configs:
        model.profile(configs, counter(f"measure {len(configs)} kernels ({model.target.name})"))


def _trace(found: _Candidates, t_extract: float, best_cost: float) -> tuple[tuple[float, float], ...]:
    """When saturation + extraction had a best graph, and its cost: the input at 0, greedy's graph when
    greedy finished, the ILP's when the ILP finished (only the points that improved)."""
    points = [(0.0, found.cost_before), (t_extract + found.greedy_seconds, min(found.greedy_cost, found.cost_before))]
    if found.ilp is not None:
        points.append((t_extract + found.greedy_seconds + found.ilp_seconds, best_cost))
    out: list[tuple[float, float]] = []
    for t, c in points:
        if not out or c < out[-1][1]:
            out.append((t, c))
    return tuple(out)


def _choose(graph: Graph, found: _Candidates, model: CostModel) -> tuple[Graph, float]:
    """The cheapest of the ILP's graph, the greedy graph and the input, with its cost.

    Decoding can price the ILP's answer slightly above greedy's: keep the cheaper.  Extraction never
    makes a graph more expensive than the input.
    """
    best = found.greedy
    if found.ilp is not None and graph_cost(found.ilp, model) <= found.greedy_cost:
        best = found.ilp
    cost = graph_cost(best, model)
    if cost > found.cost_before:
        best, cost = graph, found.cost_before
    assert cost <= found.cost_before, "the chosen graph must not cost more than the input"
    return best, cost


def _verify(graph: Graph, best: Graph, check: bool, fired: dict[str, int]) -> VerifyResult | None:
    """Run both graphs on random inputs; a difference is a ``VerificationError`` naming the rules that fired."""
    if not check:
        return None
    v = verify(graph, best)
    if not v.ok:
        raise VerificationError(
            f"optimized graph of '{graph.name}' differs from the original: max abs error {v.max_abs_err:.3g} "
            f"(relative {v.max_rel_err:.3g}); rules fired: {dict(sorted(fired.items()))}"
        )
    return v


def optimize(
    graph: Graph,
    rules: Sequence[Rule] | Sequence[str] | None = None,
    limits: Limits = Limits(),
    extractor: str = "ilp",
    cost_model: CostModel | None = None,
    check: bool = True,
    on_iteration: Callable[[IterationStat], None] | None = None,
    ilp_seconds: float = 10.0,
    search: str = "eqsat",
    alpha: float = 1.05,
    max_expansions: int | None = None,
    target: str | Target = "torch",
) -> OptimizeResult:
    """Saturate ``graph`` with ``rules`` under ``limits``, extract the cheapest graph, verify it.

    ``target`` is where the result will run, and picks the default cost model: ``"torch"`` (eager
    PyTorch) the analytical one; ``"llvm"`` (or an llvm ``Target``: compiled kernels, its thread count)
    ``compiled_cost``: every e-node priced as it runs after lowering and fusion, measured through
    compiled kernels — what is not cached yet is measured before extraction, under a progress bar.
    An explicit ``cost_model`` wins.

    ``extractor="ilp"`` (the default) solves extraction exactly with HiGHS within ``ilp_seconds``,
    warm-started from, and never worse than, the greedy answer, which it falls back to when it
    cannot finish; its status and optimality gap land in ``stats.ilp``.  ``"greedy"`` skips the ILP.

    ``search="backtrack"`` replaces saturation and extraction by the backtracking search over concrete
    graphs (``rewrite.search.backtrack``, TASO's) with the same rules and cost model: ``alpha`` is its
    relaxation, ``limits.seconds`` its wall time and ``max_expansions`` its expansion budget (None:
    time only).  Its result is chosen and verified like saturation's; ``stats.trace`` holds
    (seconds, best cost) whenever the best improved, for either search.
    """
    if extractor not in EXTRACTORS:
        raise UsageError(f"unknown extractor '{extractor}'; choose from {', '.join(EXTRACTORS)}")
    if search not in SEARCHES:
        raise UsageError(f"unknown search '{search}'; choose from {', '.join(SEARCHES)}")
    limits.check()
    graph.validate()
    model = cost_model if cost_model is not None else default_cost_model(target)
    rule_list = _rule_list(rules)
    if search == "backtrack":
        return _optimize_backtrack(graph, rule_list, limits, model, check, alpha, max_expansions)
    t0 = time.perf_counter()
    tick = iterations(limits.iterations)

    def each(stat: IterationStat) -> None:  # the progress bar, then the caller's callback
        tick(f"{stat.enodes} e-nodes")
        if on_iteration is not None:
            on_iteration(stat)

    try:
        sat = saturate(graph, rule_list, limits, each)
    finally:
        close(tick)
    t1 = time.perf_counter()
    with stage(f"extract ({extractor})"):
        found = _extract(graph, sat, model, extractor, ilp_seconds)
    best, cost_after = _choose(graph, found, model)
    t2 = time.perf_counter()
    with stage("verify"):
        checked = _verify(graph, best, check, sat.rules_fired)
    t3 = time.perf_counter()
    stats = OptimizeStats(
        model=graph.name,
        ops_before=graph.op_count(),
        ops_after=best.op_count(),
        cost_before=found.cost_before,
        cost_after=cost_after,
        extracted_dag_cost=found.greedy_dag_cost,
        extractor=extractor,
        saturation=SaturationStats.of(sat),
        seconds=Timings(sat.seconds_load, sat.seconds_saturate, t2 - t1, found.greedy_seconds, t3 - t2, t3 - t0),
        verified=bool(checked.ok) if checked else None,
        max_abs_err=checked.max_abs_err if checked else None,
        dropped_enodes=found.dropped,
        limits=LimitStats(limits.iterations, limits.nodes, limits.seconds, sat.match_limit),
        ilp=found.ilp_stats,
        search="eqsat",
        trace=_trace(found, t1 - t0, cost_after),
    )
    return OptimizeResult(best, graph, stats)


def default_cost_model(target: str | Target = "torch") -> CostModel:
    """The cost model for graphs that run on ``target``: analytical for torch, compiled costs for llvm."""
    kind = target.kind if isinstance(target, Target) else target
    if kind == "torch":
        return AnalyticalCost()
    if kind == "llvm":
        return compiled_cost(target)
    raise UsageError(f"no default cost model for target '{kind}'; choose 'torch' or 'llvm', or pass cost_model")


def _optimize_backtrack(
    graph: Graph,
    rules: list[Rule],
    limits: Limits,
    model: CostModel,
    check: bool,
    alpha: float,
    max_expansions: int | None,
) -> OptimizeResult:
    """``optimize(search="backtrack")``: TASO's search within ``limits.seconds``, then the same checks."""
    t0 = time.perf_counter()
    found: SearchResult = backtrack(
        graph,
        rules,
        cost_model=model,
        alpha=alpha,
        max_expansions=max_expansions if max_expansions is not None else 2**62,
        seconds=limits.seconds,
    )
    t1 = time.perf_counter()
    best = found.graph
    if best is not graph:
        best.validate()
        if _signature(best) != _signature(graph):
            raise ExtractionError(
                f"backtracking search on '{graph.name}' changed the inputs to {_signature(best)}, "
                f"expected {_signature(graph)}"
            )
    cost_before, cost_after = graph_cost(graph, model), graph_cost(best, model)
    if cost_after > cost_before:
        best, cost_after = graph, cost_before
    checked = _verify(graph, best, check, found.rules_applied)
    t2 = time.perf_counter()
    stats = OptimizeStats(
        model=graph.name,
        ops_before=graph.op_count(),
        ops_after=best.op_count(),
        cost_before=cost_before,
        cost_after=cost_after,
        extracted_dag_cost=cost_after,
        extractor="none",
        saturation=None,
        seconds=Timings(0.0, 0.0, 0.0, 0.0, t2 - t1, t2 - t0, search=t1 - t0),
        verified=bool(checked.ok) if checked else None,
        max_abs_err=checked.max_abs_err if checked else None,
        dropped_enodes=0,
        limits=LimitStats(limits.iterations, limits.nodes, limits.seconds, 0),
        search="backtrack",
        trace=tuple((t, c) for t, c in found.trace),
        backtrack=SearchStats(found.stop_reason.value, found.expansions, found.graphs_seen, alpha, found.rules_applied),
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


# ------------------------------------------------------------------ compiled-kernel costs (the llvm target)

# inputs of an op that a real graph feeds from weights (constants, pre-packed at compile time); matmul's
# B only when shared by all batches (a layer's weight; batched attention products multiply two activations)
_CONST_FROM = {
    "conv2d": 1,
    "conv2d_bias_act": 1,
    "linear": 1,
    "matmul_bias_act": 1,
    "batchnorm": 1,
    "layernorm": 1,
    "groupnorm": 1,
    "rmsnorm": 1,
    "embedding": 0,
}


def _const_inputs(op: str, in_shapes: Sequence[Shape]) -> set[int]:
    if op == "matmul":  # B shared by every batch (2-D, or batch dims all 1) is a layer's weight
        return {1} if len(in_shapes) == 2 and math.prod(in_shapes[1][:-2]) == 1 else set()
    first = _CONST_FROM.get(op)
    if first is None:
        return set()
    return {k for k in range(first, len(in_shapes)) if not (op == "embedding" and k > 0)}


def _op_inputs(b: GraphBuilder, op: str, in_shapes: Sequence[Shape], dtype: str) -> list[Value]:
    """Graph inputs (and weights, where a real graph has them) for one configuration of ``op``."""
    ins = OPS[op].dtype_rule.ins
    consts = _const_inputs(op, in_shapes)
    gen = torch.Generator().manual_seed(0)
    vals = []
    for k, s in enumerate(in_shapes):
        want = ins[min(k, len(ins) - 1)] if ins else dtype
        dt = dtype if want == "T" else want
        if k in consts and dt == "float32":
            vals.append(b.weight(f"w{k}", torch.rand(tuple(s), generator=gen) + 0.5))
        else:
            vals.append(b.input(f"x{k}", tuple(s), dtype=dt))
    return vals


def _one_op(op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str, fused: bool) -> list[Graph]:
    """``[op alone]``, or (``fused``) ``[consumer(op(...)), consumer alone on op's output]``: ``op`` inlined
    into an elementwise consumer's loads, and the consumer's own cost to subtract."""
    norm = OPS[op].normalize_attrs(attrs)
    b = GraphBuilder(f"cost_{op}")
    out = b.op(op, *_op_inputs(b, op, in_shapes, dtype), **norm)
    if not fused:
        return [b.build([out])]
    g = b.build([out])
    shape, odt = g.shape_of(out), g.dtype_of(out)

    def consumer(bb: GraphBuilder, v: Value) -> Value:  # relu on floats; a cast to float32 otherwise
        return bb.op("relu", v) if odt == "float32" else bb.op("cast", v, dtype="float32")

    b2 = GraphBuilder(f"cost_{op}_fused")
    fused_graph = b2.build([consumer(b2, b2.op(op, *_op_inputs(b2, op, in_shapes, dtype), **norm))])
    b3 = GraphBuilder(f"cost_{op}_consumer")
    return [fused_graph, b3.build([consumer(b3, b3.input("y", shape, dtype=odt))])]


# Bytes written between timed runs so the weights are not in the core's caches, as in a real graph where
# the other kernels' weights and activations pass through in between: a (1,512)x(512,512) matmul runs 10 us
# with its 1 MiB weight in L2, 70-90 us in nasrnn and after a flush.  How far out of cache a weight is in a
# real graph depends on the graph's whole footprint (L3 here is large and shared): (1,512)x(512,2048) runs
# 150 us hot, 180-250 us after 16 MiB, 280 after 64, 344 after 160, 290-335 inside nasrnn.  The smaller
# flush ranked candidates better (nasrnn 0.84 against 0.64 within-model Spearman; bert, squeezenet alike).
FLUSH_BYTES = 16 << 20


@functools.cache
def _flush_buffer() -> torch.Tensor:
    return torch.zeros(FLUSH_BYTES // 4)


def _kernel_seconds(target: Target, graphs: Sequence[Graph], warmup: int, repeats: int) -> list[list[float]]:
    """Each compiled graph's summed kernel time per round, the graphs alternating round by round; before each
    timed run the caches are flushed and the activation inputs read back in (a producer just wrote them)."""
    host = base_target(target)
    host = replace(host, versions=tuple(v for v in host.versions if v[0] not in (LOWER_VERSION, RUNNER_VERSION[0])))
    cgs = [compile_graph(g, host) for g in graphs]
    feeds = [g.random_inputs(0) for g in graphs]
    flush = _flush_buffer()
    with torch.no_grad():
        for _ in range(warmup):
            for cg, x in zip(cgs, feeds, strict=True):
                cg(x)
        out: list[list[float]] = [[] for _ in cgs]
        for r in range(repeats):
            order = range(len(cgs)) if r % 2 == 0 else range(len(cgs) - 1, -1, -1)
            for i in order:
                flush.add_(1.0)
                for t in feeds[i].values():
                    t.sum()
                out[i].append(sum(k["seconds"] for k in cgs[i].profile(feeds[i], repeats=1)))
    return out


def _measurement(samples: Sequence[float]) -> Measurement:
    """The fastest of the rounds: a kernel's uncontended time.  On a shared machine the median of a few
    rounds caught other processes' time slices (a 1.2 ms matmul cached at 13.8 ms), and a cached row is
    kept for good."""
    ts = sorted(samples)
    q = len(ts) // 4
    return Measurement(ts[0], len(ts), ts[-1 - q] - ts[q])


def run_llvm_op(
    target: Target,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[Shape],
    dtype: str = "float32",
    warmup: int = 3,
    repeats: int = 15,
) -> Measurement:
    """Compile ``op`` alone for ``target`` (contraction weights as constants) and time its kernels."""
    return _measurement(_kernel_seconds(target, _one_op(op, attrs, in_shapes, dtype, False), warmup, repeats)[0])


def run_llvm_fused(
    target: Target,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[Shape],
    dtype: str = "float32",
    warmup: int = 3,
    repeats: int = 15,
) -> Measurement:
    """What an injective ``op`` adds fused into a neighbour's kernel: ``relu(op(x))`` minus ``relu`` alone
    (interleaved, the fastest round of each), never below 5% of the consumer's own time (measurement noise)."""
    both, alone = _kernel_seconds(target, _one_op(op, attrs, in_shapes, dtype, True), warmup, repeats)
    m = _measurement([max(f - a, 0.0) for f, a in zip(both, alone, strict=True)])
    return replace(m, seconds=max(min(both) - min(alone), 0.05 * min(alone)))


register_runner("llvm", run_llvm_op)
register_runner("llvm" + FUSED, run_llvm_fused)

LOWER_VERSION = "lower"  # the versions entry of a cost target that fingerprints the lowering's source
RUNNER_VERSION = ("runner", "3")  # bump when the llvm runners measure differently (2: cold caches, 3: fastest round)


@functools.cache
def _lower_digest() -> str:
    """A digest of ``lower``'s source: kernels (and so their measured costs) change when it does."""
    root = Path(lower.__file__).parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def cost_target(target: str | Target = "llvm", threads: int | None = None) -> Target:
    """The Target compiled costs are measured on and keyed by: ``target`` for this host, its key extended with
    a digest of the lowering's source, so an edit to the code generator never reads stale measurements."""
    host = parse_target(target, threads)
    if host.kind != "llvm":
        raise UsageError(f"compiled costs are measured on an 'llvm' target, not '{host.kind}'")
    return replace(host, versions=(*host.versions, (LOWER_VERSION, _lower_digest()), RUNNER_VERSION))


def compiled_cost(
    target: str | Target = "llvm", threads: int | None = None, measure_missing: bool = True
) -> CompiledCost:
    """The cost model of compiled kernels on ``target`` (see ``costs.compiled``)."""
    return CompiledCost(cost_target(target, threads), measure_missing=measure_missing)


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
) -> RunStats:
    """Compile ``graph``, check its outputs against ``module`` and time both, alternated.

    Raises ``VerificationError`` when the compiled graph's outputs differ from PyTorch's.
    """
    host = parse_target(target)
    wanted = host.threads
    threads, others = free_threads(wanted) if host.kind == "llvm" else (wanted, None)  # a GPU is not shared
    if others is not None and others >= BUSY_CORES:  # busy: time-slicing noise needs more rounds
        repeats *= 3
    with stage(f"compile ({target})"):
        run = compile(graph, target=target, threads=threads)
    names = [n.attrs["name"] for n in graph.inputs]  # decode keeps the original input order
    feed = dict(zip(names, inputs, strict=False))
    with torch.no_grad():
        ref = module(*inputs)
        refs = [ref] if isinstance(ref, torch.Tensor) else list(ref)
        outs = run(feed)
        cmp = compare_all(refs, [o.cpu() for o in outs], REL_TOL)  # a GPU target returns device tensors
        if not cmp.close:
            raise VerificationError(f"compiled graph '{graph.name}' differs from PyTorch: {cmp.why}")
        # interleaved, torch on the compiled graph's thread count: both sides get the same cores
        with stage(f"time against eager ({repeats} rounds)"):
            sp = speedup(lambda: run(feed), lambda: module(*inputs), repeats=repeats, threads=run.threads)
    busy = (
        ()
        if threads >= wanted
        else (f"machine busy (others used {others or 0:.1f} cores): timed on {threads} thread(s), {repeats} rounds",)
    )
    return RunStats(
        target=run.target.name,
        compile_seconds=run.compile_seconds,
        kernels=run.kernels,
        latency_ms=sp.ours.median * 1e3,
        torch_eager_ms=sp.baseline.median * 1e3,
        speedup_vs_eager=sp.ratio,
        speedup_vs_eager_iqr=(sp.lo, sp.hi),
        timing_notes=tuple(sp.notes) + busy,
        max_rel_err=cmp.rel_err,
        torch_threads=sp.threads,
        plan=str(run.plan),
    )


def saturated_egraph(graph: Graph, rules: Sequence[Rule], limits: Limits = Limits()) -> EGraphData:
    """Saturate ``graph`` and read the e-graph back as extraction sees it (every candidate e-node)."""
    return read_serialized(saturate(graph, list(rules), limits).serialized())
