"""``eqsat optimize MODEL``: import, saturate, extract, verify; optionally compile and time against PyTorch.

eqsat optimize bert --json out.json
eqsat optimize my_model.py:make --iters 8 --nodes 20000 --seconds 10
eqsat optimize model.onnx -o optimized.onnx     # write the optimized model (.onnx: standard; .eqsat: exact)
eqsat optimize squeezenet --run llvm          # priced by compiled kernels (--cost compiled), then compiled
eqsat optimize bert --run cuda                # priced by kernels compiled and timed on the GPU, then run there
eqsat optimize nasrnn --search backtrack --alpha 1.05 --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx
import torch

from bench.models import MODELS
from costs.analytical import AnalyticalCost
from costs.compiled import CompiledCost
from costs.measured import MeasuredCost
from rewrite import config
from rewrite.cli.args import (
    MODEL_SHAPE_HELP,
    add_limits,
    add_rules,
    add_shapes,
    json_output,
    limits_of,
    load_rule_args,
    model_output,
    nonneg_int,
    positive_float,
    positive_int,
    shapes_of,
)
from rewrite.cli.main import Parser
from rewrite.cli.report import before_after, run_table
from rewrite.cli.sources import check_model_spec, onnx_output_names, read_source
from rewrite.egraph.saturate import IterationStat
from rewrite.frontends.onnx import save, to_onnx
from rewrite.ir.errors import FrontendError, UsageError
from rewrite.ir.graph import Graph
from rewrite.ir.target import compiled_kinds
from rewrite.pipeline import SEARCHES, compile_and_compare, compiled_cost, optimize
from rewrite.progress import say


def parser(prog: str) -> argparse.ArgumentParser:
    p = Parser(prog=prog, description="Optimize a model and print a before/after table.")
    p.add_argument("model", help=f"one of {', '.join(MODELS)}, FILE.py:FACTORY, FILE.onnx or FILE.eqsat")
    add_rules(p)
    add_limits(p)
    p.add_argument(
        "--extractor",
        default=None,
        choices=("greedy", "ilp"),
        help="with --search eqsat: exact ILP (HiGHS), warm-started from and falling back to greedy (default); "
        "or greedy DAG-aware only",
    )
    p.add_argument(
        "--ilp-seconds", type=positive_float, default=None, help="time limit of the ILP extraction (default: 10)"
    )
    p.add_argument(
        "--search",
        default="eqsat",
        choices=SEARCHES,
        help="equality saturation + extraction (default), or TASO's backtracking search over concrete graphs "
        "(same rules and cost model; --seconds is its time limit)",
    )
    p.add_argument(
        "--alpha",
        type=alpha_value,
        default=None,
        help="with --search backtrack: queue rewrites costing under alpha times the best (1.0: greedy descent; "
        "default: 1.05)",
    )
    p.add_argument(
        "--cost",
        choices=("analytical", "measured", "compiled"),
        help="cost model: roofline from measured peaks (default), per-operator torch measurements "
        "(every candidate op must be measured: `eqsat costs profile MODEL --egraph`, or --measure-missing), "
        "or compiled kernels as fused, on the --run target (llvm without --run; the default with --run llvm "
        "or --run cuda; uncached kernels are measured first)",
    )
    p.add_argument(
        "--threads",
        type=nonneg_int,
        default=0,
        help="torch threads (measured costs are cached per thread count; 0: leave as is)",
    )
    p.add_argument("--measure-missing", action="store_true", help="with --cost measured: measure uncached ops now")
    p.add_argument("--no-verify", action="store_true", help="skip the numerical check (not recommended)")
    p.add_argument(
        "--run",
        choices=compiled_kinds(),
        help="compile the optimized graph, run it, check it against PyTorch and time it against PyTorch eager",
    )
    p.add_argument("--repeats", type=positive_int, default=10, help="timing repeats for --run")
    p.add_argument(
        "--json",
        type=json_output,
        metavar="FILE",
        help="write the statistics as JSON to FILE; '-': to stdout, with the table on stderr",
    )
    p.add_argument(
        "-o",
        "--output",
        type=model_output,
        metavar="OUT",
        help="write the optimized model to OUT: OUT.onnx, a standard ONNX model onnxruntime runs (an ONNX "
        "model's input and output names kept), or OUT.eqsat, eqsat's exact format (rewrite.load reads it)",
    )
    add_shapes(p, MODEL_SHAPE_HELP)
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print each iteration's rule matches, the cost model's counters and the optimized graph "
        "(or set EQSAT_TRACE=1)",
    )
    return p


def progress(verbose: bool) -> Callable[[IterationStat], None]:
    def report(stat: IterationStat) -> None:
        say(f"  iteration {stat.index}: {stat.enodes} e-nodes, {stat.eclasses} e-classes, {stat.seconds:.2f}s")
        if verbose:
            for name, n in sorted(stat.matches.items(), key=lambda kv: -kv[1]):
                applied = stat.applied.get(name, 0)
                held = "" if applied == n else f", {applied} applied"  # a rule over its match budget applies none
                print(f"    {name}: {n} match(es){held}", file=sys.stderr)

    return report


def alpha_value(text: str) -> float:
    """``--alpha``: a relaxation factor of at least 1."""
    v = positive_float(text)
    if v < 1.0:
        raise argparse.ArgumentTypeError(f"must be at least 1.0, got {text}")
    return v


def _search_options(args: argparse.Namespace) -> None:
    """Refuse an option the chosen search does not read (its default is None: set means the user set it)."""
    unused = (
        [("--alpha", args.alpha)]
        if args.search == "eqsat"
        else [("--extractor", args.extractor), ("--ilp-seconds", args.ilp_seconds)]
    )
    for flag, value in unused:
        if value is not None:
            other = "backtrack" if args.search == "eqsat" else "eqsat"
            raise UsageError(f"{flag} applies to --search {other} only, not --search {args.search}: drop {flag}")
    if args.extractor == "greedy" and args.ilp_seconds is not None:
        raise UsageError("--ilp-seconds applies to --extractor ilp only, not --extractor greedy: drop --ilp-seconds")


COLLECT_WEIGHT_BYTES = 64 << 20  # a let-go module's weights worth a garbage collection (VGG-19's: 575 MB)


def _weight_bytes(module: Any) -> int:
    """The bytes of a torch module's parameters and buffers (0 for anything else)."""
    if not isinstance(module, torch.nn.Module):
        return 0
    return sum(t.numel() * t.element_size() for t in (*module.parameters(), *module.buffers()))


def main(argv: list[str], prog: str = "eqsat optimize") -> int:
    args = parser(prog).parse_args(argv)
    _search_options(args)
    limits = limits_of(args)
    check_model_spec(args.model)  # a missing, empty or folder model fails before any work
    # a missing, malformed or empty rule file fails before any model work; none given: the target's default set
    rules = load_rule_args(args.rules) if args.rules else None
    if args.cost is None:  # price e-nodes as they will run: compiled kernels when the result is compiled
        args.cost = "compiled" if args.run else "analytical"
    if args.measure_missing and args.cost != "measured":
        raise UsageError("--measure-missing needs --cost measured")
    if args.threads:
        torch.set_num_threads(args.threads)
    cost_model: MeasuredCost | CompiledCost | AnalyticalCost = AnalyticalCost()
    if args.cost == "compiled":  # measures the e-graph's uncached kernels before extraction, where it will run
        cost_model = compiled_cost(args.run or "llvm", threads=args.threads or None)
    elif args.cost == "measured":  # every op the extractor prices must be measured: no estimates mixed in
        cost_model = MeasuredCost(
            measure_missing=args.measure_missing,
            strict=True,
            hint=f"measure every candidate first: `eqsat costs profile {args.model} --egraph"
            f"{f' --threads {args.threads}' if args.threads else ''}` with the same --rules/--iters/--nodes/--seconds, "
            "or add --measure-missing",
        )
    say(f"loading {args.model} ...")
    src = read_source(args.model, shapes_of(args))
    graph, inputs = src.graph, src.inputs
    # the ONNX file's output names, for the optimized model written back (read now: its proto is let go at once)
    names = onnx_output_names(args.model) if args.output and args.output.lower().endswith(".onnx") else None
    # the module is needed again only to check the compiled graph against (--run); without it, its parameters
    # (a second copy of the weights the import folded: VGG-19's 575 MB) are let go before saturation
    module = src.module if args.run else None
    # torch.export's program holds the module in reference cycles: collected at once where its weights are worth
    # it (a collection walks every object of the process: half a second in a long-lived one, a test session)
    collect = module is None and _weight_bytes(src.module) >= COLLECT_WEIGHT_BYTES
    del src
    if collect:
        gc.collect()
    say(f"{'saturating' if args.search == 'eqsat' else 'searching'} {graph.op_count()} operators ...")
    result = optimize(
        graph,
        rules=rules,
        limits=limits,
        extractor=args.extractor or "ilp",
        cost_model=cost_model,
        check=not args.no_verify,
        ilp_seconds=args.ilp_seconds or 10.0,
        search=args.search,
        alpha=args.alpha or 1.05,
        on_iteration=progress(args.verbose or config.TRACE.flag()),
        target=args.run or ("llvm" if args.cost == "compiled" else "torch"),  # picks the default rules
    )
    record = result.stats.to_json()
    out = sys.stderr if args.json == "-" else sys.stdout  # --json -: stdout is the JSON alone
    if not isinstance(cost_model, AnalyticalCost):
        record["cost_model"] = {"kind": args.cost, "target": cost_model.fingerprint, **cost_model.stats}
        if args.verbose:
            print(f"{args.cost} cost model: {cost_model.stats}", file=sys.stderr)
    print(before_after(result.stats, graph.summary(), result.graph.summary()), file=out)
    if args.verbose:
        print("optimized graph:", file=out)
        print(result.graph.pretty(), file=out)
    if args.output:  # written before --run compiles: a failure there loses no optimized model
        write_model(result.graph, args.output, names)
        print(f"wrote the optimized model to {args.output}", file=sys.stderr)
    if args.run:
        say(f"compiling for {args.run} ...")
        assert module is not None  # kept for --run
        run = compile_and_compare(result.graph, module, inputs, target=args.run, repeats=args.repeats)
        record.update(run.to_json())
        if args.verbose:
            print(run.plan, file=out)
        print(run_table(run), file=out)
    if args.json:
        text = json.dumps(finite(record), indent=1, allow_nan=False)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text)
            print(f"wrote {args.json}")
    return 0


def write_model(graph: Graph, path: str, output_names: list[str] | None = None) -> None:
    """``graph`` to ``path``: ``.onnx`` by ``to_onnx`` (its outputs renamed to ``output_names`` where given),
    ``.eqsat`` by ``save``."""
    if not path.lower().endswith(".onnx"):
        save(graph, path)
        return
    try:
        model = to_onnx(graph)
    except FrontendError as e:
        raise FrontendError(
            str(e), hint=f"write eqsat's exact format instead: -o {Path(path).with_suffix('.eqsat')}"
        ) from None
    if output_names:
        keep_output_names(model, output_names)
    onnx.save(model, path)


def keep_output_names(model: onnx.ModelProto, names: list[str]) -> None:
    """Rename ``model``'s graph outputs (``to_onnx``'s ``output0``, ``output1``...) to ``names``, the input model's,
    in order; an output whose name another value of the model already has (an output that is an input passed
    through) keeps its own.  Nothing is renamed when the counts differ."""
    g = model.graph
    current = [vi.name for vi in g.output]
    if len(names) != len(current) or len(set(names)) != len(names):
        return
    others = {vi.name for vi in g.input} | {t.name for t in g.initializer} | {o for n in g.node for o in n.output}
    others -= set(current)
    kept: set[str] = set()  # outputs that cannot take their name: they keep theirs, which is then taken too
    while stuck := {old for old, new in zip(current, names) if old not in kept and (not new or new in others)}:
        kept |= stuck
        others |= stuck
    rename = {old: new for old, new in zip(current, names) if old not in kept}
    for n in g.node:
        n.output[:] = [rename.get(o, o) for o in n.output]
        n.input[:] = [rename.get(i, i) for i in n.input]
    for vi in g.output:
        vi.name = rename.get(vi.name, vi.name)


def finite(value: Any) -> Any:
    """``value`` with every infinite or NaN float replaced by ``None`` (JSON ``null``: JSON has no inf/nan)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value
