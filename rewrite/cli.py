"""The ``eqsat`` command line.

eqsat optimize bert --json out.json
eqsat optimize path/to/model.py:factory --iters 8 --nodes 20000 --seconds 10
eqsat rules list [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from costs.cache import CacheError
from lower.loop_ir import LoweringError
from rewrite.egraph.saturate import IterationStat, Limits, SaturationError
from rewrite.graph import Graph, GraphError
from rewrite.ops import ShapeError
from rewrite.rulelang.syntax import RuleError

BUILTIN_MODELS = ("bert", "nasrnn", "resnext50", "nasneta", "squeezenet", "vgg19", "inceptionv3", "resnet50")


class CliError(Exception):
    pass


def load_module(spec: str) -> tuple[str, Any, tuple[Any, ...]]:
    """``(name, module, example_inputs)`` for a built-in model name or ``file.py:factory``."""
    if spec in BUILTIN_MODELS:
        from bench.models import load

        module, inputs = load(spec)
        return spec, module, tuple(inputs)
    if ":" not in spec:
        raise CliError(f"unknown model '{spec}': use one of {', '.join(BUILTIN_MODELS)} or FILE.py:FACTORY")
    path, factory = spec.rsplit(":", 1)
    if not Path(path).is_file():
        raise CliError(f"model file '{path}' does not exist")
    mod_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    assert mod_spec and mod_spec.loader
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    fn = getattr(mod, factory, None)
    if not callable(fn):
        raise CliError(f"'{path}' has no callable '{factory}'")
    out = fn()
    if not (isinstance(out, tuple) and len(out) == 2):
        raise CliError(f"{spec} must return (module, example_inputs), got {type(out).__name__}")
    module, inputs = out
    return Path(path).stem, module, tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)


def load_model(spec: str) -> Graph:
    """A built-in model name, or ``file.py:factory`` returning ``(module, example_inputs)``."""
    from rewrite.frontends import from_torch

    name, module, inputs = load_module(spec)
    return from_torch(module, inputs, name=name)


def _progress(verbose: bool):  # type: ignore[no-untyped-def]
    def report(stat: IterationStat) -> None:
        print(
            f"  iteration {stat.index}: {stat.enodes} e-nodes, {stat.eclasses} e-classes, {stat.seconds:.2f}s",
            file=sys.stderr,
            flush=True,
        )
        if verbose:
            for name, n in sorted(stat.matches.items(), key=lambda kv: -kv[1]):
                print(f"    {name}: {n} match(es)", file=sys.stderr)

    return report


def _relative(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


def cmd_optimize(args: argparse.Namespace) -> int:
    from rewrite.api import optimize
    from rewrite.report import before_after

    limits = Limits(iterations=args.iters, nodes=args.nodes, seconds=args.seconds)
    limits.check()
    print(f"loading {args.model} ...", file=sys.stderr, flush=True)
    from rewrite.frontends import from_torch

    name, module, inputs = load_module(args.model)
    graph = from_torch(module, inputs, name=name)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    cost_model = None
    if args.cost == "measured":
        from costs.measured import MeasuredCost

        cost_model = MeasuredCost(measure_missing=args.measure_missing)
    print(f"saturating {graph.op_count()} operators ...", file=sys.stderr, flush=True)
    result = optimize(
        graph,
        rules=args.rules,
        limits=limits,
        extractor=args.extractor,
        cost_model=cost_model,
        check=not args.no_verify,
        ilp_seconds=args.ilp_seconds,
        on_iteration=_progress(args.verbose or bool(os.environ.get("EQSAT_TRACE"))),
    )
    if cost_model is not None:
        result.stats["cost_model"] = {"kind": "measured", **cost_model.stats}
        print(f"measured cost model: {cost_model.stats}", file=sys.stderr)
    print(before_after(result.stats, graph.summary(), result.graph.summary()))
    if args.verbose:
        print("optimized graph:")
        print(result.graph.pretty())
    if args.run:
        from rewrite.execute import compile_and_compare, run_table

        print(f"compiling for {args.run} ...", file=sys.stderr, flush=True)
        run = compile_and_compare(result.graph, module, inputs, target=args.run, repeats=args.repeats)
        plan = run.pop("plan")
        result.stats.update(run)
        if args.verbose:
            print(plan)
        print(run_table(result.stats))
    if args.json:
        Path(args.json).write_text(json.dumps(result.stats, indent=1))
        print(f"wrote {args.json}")
    return 0


def cmd_rules_list(args: argparse.Namespace) -> int:
    from rewrite.api import load_rules

    rows: list[dict[str, Any]] = []
    for r in load_rules(args.rules):
        for d in r.directions():
            path = _relative(d.loc.path)
            rows.append(
                {"name": d.name, "family": d.family, "file": path, "line": d.loc.line, "where": f"{path}:{d.loc.line}"}
            )
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        w = max(len(r["name"]) for r in rows)
        for r in rows:
            print(f"{r['name']:<{w}}  {r['family']:<10}  {r['where']}")
        print(f"{len(rows)} rules")
    return 0


def cmd_bench(rest: list[str]) -> int:
    """``eqsat bench [fidelity|kernels] ...``: hands the rest of the line to the bench script."""
    if rest and rest[0] == "fidelity":
        from bench.fidelity import main as run

        rest = rest[1:]
    elif rest and rest[0] == "e2e":
        from bench.e2e import main as run  # type: ignore[no-redef]

        rest = rest[1:]
    elif rest and rest[0] == "kernels":
        from bench.kernels import main as run  # type: ignore[no-redef]

        rest = rest[1:]
    else:
        from bench.tensat_table import main as run  # type: ignore[no-redef]
    return int(run(rest))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="eqsat", description="Equality-saturation optimizer for DL graphs")
    sub = p.add_subparsers(dest="command", required=True)
    o = sub.add_parser("optimize", help="optimize a model and print a before/after table")
    o.add_argument("model", help=f"one of {', '.join(BUILTIN_MODELS)}, or FILE.py:FACTORY")
    o.add_argument("--rules", action="append", help="rule family name or file (repeatable; default: all)")
    o.add_argument("--iters", type=int, default=Limits.iterations, help="iteration limit")
    o.add_argument("--nodes", type=int, default=Limits.nodes, help="e-node limit")
    o.add_argument("--seconds", type=float, default=Limits.seconds, help="saturation time limit")
    o.add_argument(
        "--extractor",
        default="ilp",
        choices=("greedy", "ilp"),
        help="exact ILP (HiGHS), warm-started from and falling back to greedy (default); or greedy DAG-aware only",
    )
    o.add_argument("--ilp-seconds", type=float, default=10.0, help="time limit of the ILP extraction")
    o.add_argument(
        "--cost",
        choices=("analytical", "measured"),
        default="analytical",
        help="cost model: roofline from measured peaks, or per-operator measurements "
        "(see `eqsat costs profile`; unmeasured ops fall back to analytical)",
    )
    o.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch threads (measured costs are cached per thread count; 0: leave as is)",
    )
    o.add_argument("--measure-missing", action="store_true", help="with --cost measured: measure uncached ops now")
    o.add_argument("--no-verify", action="store_true", help="skip the numerical check (not recommended)")
    o.add_argument(
        "--run",
        choices=("llvm",),
        help="compile the optimized graph, run it, check it against PyTorch and time it against PyTorch eager",
    )
    o.add_argument("--repeats", type=int, default=10, help="timing repeats for --run")
    o.add_argument("--json", help="write the statistics as JSON to this file")
    o.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print each iteration's rule matches and the optimized graph (or set EQSAT_TRACE=1)",
    )
    o.set_defaults(fn=cmd_optimize)
    r = sub.add_parser("rules", help="inspect rule files")
    rsub = r.add_subparsers(dest="rules_command", required=True)
    rl = rsub.add_parser("list", help="list every rule with its family and file:line")
    rl.add_argument("--rules", action="append", help="rule family name or file (default: all)")
    rl.add_argument("--json", action="store_true")
    rl.set_defaults(fn=cmd_rules_list)
    from rewrite.cli_rules import add_rules_commands

    add_rules_commands(rsub)
    from rewrite.cli_costs import add_costs_commands

    add_costs_commands(sub)
    # `eqsat bench ...` is handed whole to the bench scripts (see main), listed here for --help
    sub.add_parser("bench", help="benchmarks: the Tensat table (default), 'fidelity', 'kernels' or 'e2e'")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:
        return cmd_bench(argv[1:])
    args = parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except (
        CliError,
        RuleError,
        GraphError,
        ShapeError,
        SaturationError,
        FileNotFoundError,
        ValueError,
        CacheError,
        LoweringError,
    ) as e:
        print(f"eqsat: error: {e}", file=sys.stderr)
        return 2
    except AssertionError as e:  # VerificationError: the optimized graph is wrong
        print(f"eqsat: verification failed: {e}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
