"""``eqsat report MODEL -o report.html``: optimize a model and write the before/after HTML page.

eqsat report bert -o report.html --run llvm
eqsat report model.onnx -o r.html --search eqsat,backtrack

The page is one self-contained file (``rewrite.htmlreport``); the text diff is ``eqsat diff``.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from rewrite.cli.args import (
    MODEL_SHAPE_HELP,
    add_limits,
    add_rules,
    add_shapes,
    limits_of,
    load_rule_args,
    output_file,
    positive_float,
    positive_int,
    shapes_of,
)
from rewrite.cli.main import Parser
from rewrite.cli.sources import check_model_spec, read_source
from rewrite.htmlreport import SearchSummary, report
from rewrite.ir.errors import UsageError
from rewrite.ir.target import compiled_kinds
from rewrite.pipeline import compile, compile_and_compare, optimize
from rewrite.progress import stage
from rewrite.results import RunStats
from rewrite.search import backtrack

SEARCHES = ("eqsat", "backtrack")


def _searches(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in names if s not in SEARCHES]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown search {bad or text!r}; choose from {', '.join(SEARCHES)}")
    return names


def parser(prog: str) -> argparse.ArgumentParser:
    p = Parser(prog=prog, description="Optimize a model and write a before/after HTML report.")
    p.add_argument("model", help="a built-in model name, FILE.py:FACTORY, an .onnx file or a saved graph")
    p.add_argument("-o", "--output", type=output_file, required=True, help="the HTML file to write")
    add_rules(p)
    add_limits(p)
    p.add_argument("--extractor", default="ilp", choices=("greedy", "ilp"), help="extraction (default: ilp)")
    p.add_argument("--ilp-seconds", type=positive_float, default=10.0, help="time limit of the ILP extraction")
    p.add_argument("--no-verify", action="store_true", help="skip the numerical check (not recommended)")
    p.add_argument(
        "--run",
        choices=compiled_kinds(),
        help="optimize for this target (e-nodes priced by its compiled kernels), compile the graph before and "
        "after, time both against PyTorch eager, and profile the kernels",
    )
    p.add_argument("--repeats", type=positive_int, default=10, help="timing repeats for --run")
    p.add_argument(
        "--search",
        type=_searches,
        default=["eqsat"],
        help="comma-separated searches to show side by side: eqsat, backtrack (default: eqsat)",
    )
    p.add_argument("--backtrack-seconds", type=positive_float, default=30.0, help="time limit of the backtracking")
    add_shapes(p, MODEL_SHAPE_HELP)
    return p


def main(argv: list[str], prog: str = "eqsat report") -> int:
    args = parser(prog).parse_args(argv)
    if "eqsat" not in args.search:
        raise UsageError("--search must include eqsat: the report shows its result")
    check_model_spec(args.model)  # a missing, empty or folder model fails before any work
    rules = load_rule_args(args.rules)
    with stage(f"import {args.model}"):
        src = read_source(args.model, shapes_of(args))
    result = optimize(
        src.graph,
        rules=rules,
        limits=limits_of(args),
        extractor=args.extractor,
        check=not args.no_verify,
        ilp_seconds=args.ilp_seconds,
        target=args.run or "torch",  # where it runs prices it (compiled costs), as `eqsat optimize --run` does
    )
    t0 = time.perf_counter()
    runs: dict[str, RunStats] = {}
    kernels: list[dict] = []
    if args.run:
        for side, g in (("before", result.original), ("after", result.graph)):
            runs[side] = compile_and_compare(g, src.module, src.inputs, target=args.run, repeats=args.repeats)
        with stage("profile kernels"):
            feed = dict(zip([n.attrs["name"] for n in result.graph.inputs], src.inputs))
            with torch.no_grad():
                kernels = compile(result.graph, target=args.run).profile(feed, repeats=5)
    s = result.stats
    searches = [
        SearchSummary(
            "eqsat",
            s.ops_after,
            s.cost_before,
            s.cost_after,
            s.seconds.total,
            s.stop_reason,
            s.rules_fired,
        )
    ]
    if "backtrack" in args.search:
        with stage("backtracking search"):
            bt = backtrack(src.graph, rules, seconds=args.backtrack_seconds)
        searches.append(
            SearchSummary(
                "backtrack",
                bt.graph.op_count(),
                bt.cost_before,
                bt.cost_after,
                bt.seconds,
                bt.stop_reason.value,
                dict(bt.rules_applied),
            )
        )
    t1 = time.perf_counter()
    page = report(
        result, args.output, rules=rules, runs=runs, kernels=kernels, searches=searches if len(searches) > 1 else ()
    )
    t2 = time.perf_counter()
    used = ", ".join(f"{n} (regions {','.join(map(str, r))})" for n, r in page.provenance.where.items())
    print(f"{s.model}: {s.ops_before} -> {s.ops_after} ops, {len(page.diff.regions)} changed region(s)")
    print(f"rules in the result: {used or 'none'}")
    print(f"wrote {args.output} (page built in {t2 - t1:.2f}s; --run/--search took {t1 - t0:.2f}s)")
    print(f"optimize took {s.seconds.total:.2f}s", file=sys.stderr)
    return 0
