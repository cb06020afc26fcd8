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

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from numbers import Real

import torch

from costs.analytical import AnalyticalCost
from costs.compiled import CompiledCost
from costs.measured import egraph_configs
from costs.model import CostModel, graph_cost
from costs.timing import BUSY_CORES, free_threads, speedup
from lower import CompiledGraph, compile_graph, parse_target
from lower.cuda import graph_ptx
from rewrite import result_cache, runcheck
from rewrite.egraph.limits import Limits
from rewrite.egraph.saturate import IterationStat, SaturationResult, saturate
from rewrite.extract.decode import to_graph
from rewrite.extract.egraph_data import EGraphData, ENode, read_serialized
from rewrite.extract.greedy import dag_cost, greedy_choice, node_costs, select
from rewrite.extract.ilp import ilp_extract
from rewrite.ir.errors import ExtractionError, UsageError, VerificationError
from rewrite.ir.graph import Graph, expect_graph
from rewrite.ir.ops import Shape
from rewrite.ir.target import Target, kind_of
from rewrite.progress import close, counter, iterations, stage
from rewrite.results import (
    IlpStats,
    LimitStats,
    OptimizeStats,
    RunCheck,
    RunStats,
    SaturationStats,
    SearchStats,
    Timings,
)
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import Rule
from rewrite.search import SearchResult, backtrack
from rewrite.verification.numeric import VerifyResult, compare_all, verify

EXTRACTORS = ("greedy", "ilp")
SEARCHES = ("eqsat", "backtrack")
# what a graph compiled for a compiled kind (``TargetKind.compiled``) is priced by when extracted: that target's
# compiled kernels (the default), or the analytical model (eager PyTorch's roofline, nothing measured)
COSTS = ("compiled", "analytical")


def priced_for(target: str | Target, cost: str) -> str | Target:
    """The target ``optimize`` prices a graph for when it will run on ``target``, by ``cost`` (one of ``COSTS``):
    ``target`` itself (its compiled kernels' costs and its rules) or ``"torch"`` (the analytical model)."""
    return target if cost == "compiled" else "torch"


# ------------------------------------------------------------------ optimize


@dataclass
class OptimizeResult:
    graph: Graph
    original: Graph
    stats: OptimizeStats
    # ``graph`` compiled for the target, when the run check compiled it (``compile`` would do the same work again)
    compiled: CompiledGraph | None = None


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
    measured: int = 0  # kernel configurations measured before extraction
    measure_seconds: float = 0.0
    interpolated: int = 0  # fused increments priced between measured sizes of their family instead


def _rule_list(rules: Sequence[Rule] | Sequence[str] | None) -> list[Rule]:
    """Parsed rules as given, or the rule files/families named (None: every shipped rule)."""
    if rules and isinstance(next(iter(rules)), Rule):
        return list(rules)  # type: ignore[arg-type]
    return load_rules(rules)  # type: ignore[arg-type]


def default_rules(target: str | Target = "torch") -> list[Rule]:
    """Every shipped rule, less the families the target's kind leaves out (``TargetKind.skips_families``:
    eager PyTorch and the cuda kind run no Winograd)."""
    skip = kind_of(target).skips_families
    return [r for r in load_rules(None) if r.family not in skip]


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
    measured, measure_seconds, interpolated = _measure_candidates(data, model)
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
        measured,
        measure_seconds,
        interpolated,
    )


def _measure_candidates(data: EGraphData, model: CostModel) -> tuple[int, float, int]:
    """A compiled cost model that measures what is missing prices every e-node extraction may pick first,
    measuring under a progress bar (once per configuration and target: the rows are cached) or, for fused
    increments between measured sizes, interpolating (``CompiledCost.plan``); how many it measured, in what
    seconds, and how many it interpolated."""
    if not isinstance(model, CompiledCost) or not model.measure_missing:
        return 0, 0.0, 0
    t0 = time.perf_counter()
    configs = egraph_configs(data)
    todo, derive = model.plan(configs)
    if todo or derive:
        bar = counter(f"measure {len(todo)} kernels ({model.target.name})") if todo else None
        model.profile(configs, bar, (todo, derive))
    return len(todo), time.perf_counter() - t0, len(derive)


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


# An extracted graph replaces the input only when the model prices it at least this much cheaper (a fraction of
# the input's cost).  Below it the model cannot tell the two apart: the rewritten graph differs in ops it prices as
# free or nearly so (transposes, reshapes moved around), and measured, those ran no faster.  On 14 models (zoo and
# wide sweep, 1 thread, main at 526333e) the seven whose extracted graph was priced exactly as the input's (BERT,
# ViT, GPT-2, Llama, ShuffleNetV2, T5, DeiT) had it run 0.95-1.00x the input in the run check; the three priced
# 0.5-0.7% cheaper (ALBERT, MPNet, DeBERTa-v2) 0.97-1.01x, within the check's noise; the ones priced 1.5% or more
# cheaper 0.98-1.45x (MobileNetV2 1.5%: 1.035x; EfficientNet-B0 2.2%: 0.98x; ConvNeXt 6%: 1.02x; ResNet 24%:
# 1.23x).  Keeping the input there is what the run check would do at best, and costs nothing to compile or time.
MIN_GAIN = 0.01


def worth_replacing(cost_before: float, cost_after: float) -> bool:
    """Whether a graph priced ``cost_after`` is cheap enough to replace an input priced ``cost_before``
    (``MIN_GAIN``); the CLI's summary says so when it was not."""
    return cost_after <= cost_before * (1.0 - MIN_GAIN)


def _choose(graph: Graph, found: _Candidates, model: CostModel) -> tuple[Graph, float, float]:
    """The cheapest of the ILP's graph, the greedy graph and the input, with its cost, and the extracted
    graph's cost (the ILP's or greedy's, whether or not it was kept).

    Decoding can price the ILP's answer slightly above greedy's: keep the cheaper.  Extraction never
    makes a graph more expensive than the input, and keeps the input unless the other is ``MIN_GAIN``
    cheaper.
    """
    best = found.greedy
    if found.ilp is not None and graph_cost(found.ilp, model) <= found.greedy_cost:
        best = found.ilp
    cost = extracted = graph_cost(best, model)
    if not worth_replacing(found.cost_before, cost):
        best, cost = graph, found.cost_before
    assert cost <= found.cost_before, "the chosen graph must not cost more than the input"
    return best, cost, extracted


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


def _shown(value: object) -> str:
    """``value`` for an error line: its repr on one line, cut short."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _number(call: str, arg: str, value: object, ok: Callable[[float], bool], want: str) -> None:
    if isinstance(value, bool) or not isinstance(value, Real) or not ok(float(value)):
        raise UsageError(f"{call}: {arg} must be {want}, got {_shown(value)}")


def _flag(call: str, arg: str, value: object, none_means: str = "") -> None:
    if not (isinstance(value, bool) or (none_means and value is None)):
        also = f", or None ({none_means})" if none_means else ""
        raise UsageError(f"{call}: {arg} must be True or False{also}, got {_shown(value)}")


def _target_arg(call: str, target: object) -> None:
    """A kind name or ``Target`` of a declared kind (``kind_of``), checked before anything is built for it."""
    if not isinstance(target, (str, Target)):
        raise UsageError(f"{call}: target must be a kind name like 'llvm' or a Target, got {_shown(target)}")
    try:
        kind_of(target)
    except UsageError as e:
        raise UsageError(f"{call}: target: {e}") from None


def _rules_arg(rules: object) -> Sequence[Rule] | Sequence[str] | None:
    """``optimize``'s ``rules`` as ``_rule_list`` takes them: one family name or rule-file path is a list of one
    (a string is not iterated letter by letter); Rule objects and names are not mixed."""
    if rules is None:
        return None
    if isinstance(rules, (str, os.PathLike)):
        return [os.fspath(rules)]
    items = list(rules) if isinstance(rules, Iterable) and not isinstance(rules, (bytes, dict)) else None
    if items is not None and all(isinstance(r, Rule) for r in items):
        return items
    if items is not None and all(isinstance(r, (str, os.PathLike)) for r in items):
        return [os.fspath(r) for r in items]
    raise UsageError(
        "optimize: rules must be a family name or .rules file path ('algebra'), a list of them, a list of Rule "
        f"objects (rewrite.load_rules), or None for every shipped rule; got {_shown(rules)}"
    )


def _check_optimize_args(
    limits: object,
    extractor: object,
    cost_model: object,
    check: object,
    on_iteration: object,
    ilp_seconds: object,
    search: object,
    alpha: object,
    max_expansions: object,
    target: object,
    run_check: object,
) -> None:
    """Every argument of ``optimize`` but the graph and rules, checked before any rule is loaded: a misuse
    found after saturation would cost the caller the whole saturation first."""
    if not isinstance(limits, Limits):
        raise UsageError(
            f"optimize: limits must be a rewrite.Limits, got {_shown(limits)}; "
            "e.g. limits=rewrite.Limits(iterations=12, nodes=50_000, seconds=20)"
        )
    limits.check()
    if extractor not in EXTRACTORS:
        raise UsageError(f"optimize: unknown extractor {_shown(extractor)}; choose from {', '.join(EXTRACTORS)}")
    if search not in SEARCHES:
        raise UsageError(f"optimize: unknown search {_shown(search)}; choose from {', '.join(SEARCHES)}")
    if cost_model is not None and not callable(cost_model):
        raise UsageError(
            "optimize: cost_model must be a callable (op, attrs, in_shapes, dtype) -> seconds, such as "
            f"rewrite.pipeline.compiled_cost('llvm'), or None for the target's; got {_shown(cost_model)}"
        )
    if on_iteration is not None and not callable(on_iteration):
        raise UsageError(
            f"optimize: on_iteration must be a callable taking an IterationStat, got {_shown(on_iteration)}"
        )
    _flag("optimize", "check", check)
    _flag("optimize", "run_check", run_check, "EQSAT_RUN_CHECK decides")
    _number("optimize", "ilp_seconds", ilp_seconds, lambda v: v > 0, "a number of seconds > 0 (default 10)")
    _number("optimize", "alpha", alpha, lambda v: v >= 1.0, "a number >= 1.0 (1.0: greedy descent; default 1.05)")
    if max_expansions is not None and (
        isinstance(max_expansions, bool) or not isinstance(max_expansions, int) or max_expansions < 0
    ):
        raise UsageError(
            f"optimize: max_expansions must be an int >= 0, or None (time only), got {_shown(max_expansions)}"
        )
    _target_arg("optimize", target)


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
    run_check: bool | None = None,
) -> OptimizeResult:
    """Saturate ``graph`` with ``rules`` under ``limits``, extract the cheapest graph, verify it.

    ``target`` is where the result will run, and picks the default cost model: ``"torch"`` (eager
    PyTorch) the analytical one; ``"llvm"`` (or an llvm ``Target``: compiled kernels, its thread count)
    and ``"cuda"`` (the first GPU) ``compiled_cost``: every e-node priced as it runs after lowering and
    fusion, measured through that target's compiled kernels — what is not cached yet is measured before
    extraction, under a progress bar.
    An explicit ``cost_model`` wins.

    ``extractor="ilp"`` (the default) solves extraction exactly with HiGHS within ``ilp_seconds``,
    warm-started from, and never worse than, the greedy answer, which it falls back to when it
    cannot finish; its status and optimality gap land in ``stats.ilp``.  ``"greedy"`` skips the ILP.

    ``search="backtrack"`` replaces saturation and extraction by the backtracking search over concrete
    graphs (``rewrite.search.backtrack``, TASO's) with the same rules and cost model: ``alpha`` is its
    relaxation, ``limits.seconds`` its wall time and ``max_expansions`` its expansion budget (None:
    time only).  Its result is chosen and verified like saturation's; ``stats.trace`` holds
    (seconds, best cost) whenever the best improved, for either search.

    ``run_check`` (None: ``EQSAT_RUN_CHECK``, on by default): for a compiled target (llvm, cuda) the chosen graph
    is compiled and timed against the imported graph, interleaved, and the input is returned when it ran faster
    in the median round: ``stats.run_check`` has both times and which
    graph was kept, and ``result.compiled`` the kept graph compiled (``compile`` of it would redo that work).

    ``rules``: rule family names and/or ``.rules`` file paths (one name or path alone is a list of one:
    ``rules="algebra"``), or parsed ``Rule`` objects; None: every shipped rule the target runs.
    Every argument is checked before any work: a misuse is a one-line ``UsageError`` naming it.
    """
    expect_graph(graph, "optimize")
    rules = _rules_arg(rules)
    _check_optimize_args(
        limits,
        extractor,
        cost_model,
        check,
        on_iteration,
        ilp_seconds,
        search,
        alpha,
        max_expansions,
        target,
        run_check,
    )
    graph.validate()
    model = cost_model if cost_model is not None else default_cost_model(target)
    rule_list = _rule_list(rules) if rules is not None else default_rules(target)
    if search == "backtrack":
        return _optimize_backtrack(graph, rule_list, limits, model, check, alpha, max_expansions)
    t0 = time.perf_counter()
    rkey = (
        result_cache.key(graph, rule_list, limits, extractor, ilp_seconds, target, model)
        if result_cache.enabled()
        else None
    )
    kept = result_cache.lookup(rkey, graph) if rkey is not None else None
    if kept is not None:
        figures, best = kept
        if on_iteration is not None:  # the caller sees the iterations of the run that found it
            for stat in figures.saturation.iterations:
                on_iteration(stat)
        seconds_load = seconds_saturate = greedy_seconds = measure_seconds = 0.0
        measured = interpolated = 0
        t1 = time.perf_counter()
    else:
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
        best, chosen_cost, extracted_cost = _choose(graph, found, model)
        seconds_load, seconds_saturate = sat.seconds_load, sat.seconds_saturate
        greedy_seconds, measure_seconds = found.greedy_seconds, found.measure_seconds
        measured, interpolated = found.measured, found.interpolated
        figures = result_cache.Stored(
            None if best is graph else tuple(best.nodes.values()),
            tuple(best.outputs),
            SaturationStats.of(sat),
            found.cost_before,
            chosen_cost,
            extracted_cost,
            found.greedy_dag_cost,
            found.dropped,
            found.ilp_stats,
            _trace(found, t1 - t0, chosen_cost),
        )
    sat_stats, cost_after = figures.saturation, figures.cost_after
    t2 = time.perf_counter()
    with stage("verify"):
        checked = _verify(graph, best, check, sat_stats.rules_fired)
    if rkey is not None and kept is None:
        result_cache.write(rkey, figures)  # verified (a graph that failed raised above and is not kept)
    t3 = time.perf_counter()
    compiled, ran = None, None
    host = runcheck.host_for(target, run_check)
    if isinstance(host, RunCheck):
        ran = host
    elif host is not None:
        with stage(f"run check ({host.name})"):
            best, compiled, ran = runcheck.check(graph, best, host)
        if ran is not None and ran.kept != "extracted":
            # the input came back: its price is the one extraction computed (pricing it again here measured, in a
            # process answered from results/, the fused increments the first run had interpolated in-process:
            # EfficientNet-B0's warm optimize 7.0 s against 0.7 s where the check had kept the extracted graph)
            assert best is graph
            cost_after = figures.cost_before
    t4 = time.perf_counter()
    stats = OptimizeStats(
        model=graph.name,
        ops_before=graph.op_count(),
        ops_after=best.op_count(),
        cost_before=figures.cost_before,
        cost_after=cost_after,
        extracted_dag_cost=figures.extracted_dag_cost,
        extractor=extractor,
        saturation=sat_stats,
        seconds=Timings(
            seconds_load,
            seconds_saturate,
            t2 - t1,
            greedy_seconds,
            t3 - t2,
            t4 - t0,
            measure=measure_seconds,
            run_check=t4 - t3,
        ),
        verified=bool(checked.ok) if checked else None,
        max_abs_err=checked.max_abs_err if checked else None,
        dropped_enodes=figures.dropped,
        limits=LimitStats(limits.iterations, limits.nodes, limits.seconds, sat_stats.match_limit),
        ilp=figures.ilp,
        search="eqsat",
        trace=figures.trace,
        measured_kernels=measured,
        interpolated_kernels=interpolated,
        run_check=ran,
        cost_extracted=figures.cost_extracted,
        cached=kept is not None,
    )
    return OptimizeResult(best, graph, stats, compiled)


def default_cost_model(target: str | Target = "torch") -> CostModel:
    """The cost model for graphs that run on ``target``: compiled costs for a kind that compiles kernels (llvm:
    this CPU; cuda: the first GPU, ``LoweringError`` without one), else the analytical model (torch)."""
    try:
        kind = kind_of(target)
    except UsageError as e:
        raise UsageError(f"no default cost model: {e}", hint="pass cost_model") from None
    return compiled_cost(target) if kind.compiled else AnalyticalCost()


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
    cost_found = cost_after
    if not worth_replacing(cost_before, cost_after):
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
        cost_extracted=cost_found,
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
    expect_graph(graph, "compile")
    _target_arg("compile", target)
    _threads_arg("compile", threads)
    return compile_graph(graph, target=target, threads=threads)


def _threads_arg(call: str, threads: object) -> None:
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise UsageError(f"{call}: threads must be an int >= 1, or None (the target's default), got {_shown(threads)}")


def compiled_cost(
    target: str | Target = "llvm", threads: int | None = None, measure_missing: bool = True
) -> CompiledCost:
    """The cost model of compiled kernels on ``target`` (see ``costs.compiled``), keyed by its kind's
    ``cost_key``: an llvm target on ``threads`` threads, or a cuda one (the first GPU for ``"cuda"``;
    ``threads`` does not apply)."""
    return CompiledCost(kind_of(target).make_cost_key(target, threads), measure_missing=measure_missing)


def compile_ptx(graph: Graph, arch: str = "sm_90") -> list[str]:
    """PTX (one text per kernel, launch order) that the ``cuda`` target generates for ``graph``, compiled by
    NVRTC for ``arch``; needs no GPU (the ``cuda`` extra for NVRTC).

    >>> ptx = compile_ptx(graph, arch="sm_90")    # doctest: +SKIP
    """
    expect_graph(graph, "compile_ptx")
    if not isinstance(arch, str) or not arch.startswith("sm_"):
        raise UsageError(f"compile_ptx: arch must be a GPU architecture like 'sm_90', got {_shown(arch)}")
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
    expect_graph(graph, "compile_and_compare")
    if not isinstance(module, torch.nn.Module):
        raise UsageError(f"compile_and_compare: module must be a torch.nn.Module, got {_shown(module)}")
    if not isinstance(inputs, (tuple, list)) or not all(isinstance(t, torch.Tensor) for t in inputs):
        raise UsageError(f"compile_and_compare: inputs must be a tuple of tensors (module's), got {_shown(inputs)}")
    _target_arg("compile_and_compare", target)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise UsageError(f"compile_and_compare: repeats must be an int >= 1, got {_shown(repeats)}")
    host = parse_target(target)
    wanted = host.threads
    threads, others = free_threads(wanted) if host.kind_info.threaded else (wanted, None)  # a GPU is not shared
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
        tol = host.kind_info.tolerance(host.precision)  # TF32 tensor cores: TF32's tolerance
        cmp = compare_all(refs, [o.cpu() for o in outs], tol)  # GPU: device tensors
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
