"""``eqsat rules synthesize`` and ``eqsat rules effect``: rules found by enumeration, and what they change.

    eqsat rules synthesize --ops matmul,add,relu --max-ops 3 -o found.rules
    eqsat rules synthesize --ops maximum,relu,add --shapes ew --minutes 5 -o max.rules
    eqsat rules effect found.rules --models bert,nasrnn
    eqsat rules effect found.rules --replace algebra --replace layout     # instead of those families

``synthesize`` exits 0 when the file is written (even with no rules: the summary says so), 2 on errors.
``effect`` prints, per model, the modelled cost after optimizing with the shipped rules and with the
file, and which of the file's rules fired; it exits 0, or 2 on errors.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from rewrite.cli.args import add_limits, json_output, limits_of, output_file, positive_float, positive_int
from rewrite.cli.sources import read_source
from rewrite.ir.errors import UsageError
from rewrite.rulelang.loader import rule_files
from rewrite.rulelang.syntax import load_rule_file
from rewrite.synthesis import WORLDS, synthesize

DEFAULT_MODELS = ("bert", "nasrnn", "resnext50", "nasneta", "squeezenet", "vgg19", "inceptionv3", "resnet50")


def _list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


# ------------------------------------------------------------------ synthesize


def _n(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def cmd_synthesize(args: argparse.Namespace) -> int:
    res = synthesize(
        _list(args.ops),
        max_ops=args.max_ops,
        worlds=args.shapes,
        minutes=args.minutes,
        workers=args.workers,
    )
    command = "eqsat rules " + " ".join(shlex.quote(a) for a in args.argv)
    Path(args.output).write_text(res.text(command))
    if args.json:
        report = json.dumps(res.to_json(), indent=1)
        if args.json == "-":
            print(report)
        else:
            Path(args.json).write_text(report + "\n")
    out = sys.stderr if args.json == "-" else sys.stdout
    for s in res.stages:
        print(f"{s.name:<11} {s.into:>7} -> {s.out:<7} {s.seconds:7.1f}s", file=out)
    note = "" if res.complete else " (the time budget ran out: raise --minutes for an exhaustive run)"
    print(
        f"{len(res.rules)} rules from {sum(res.enumerated.values())} graphs in {_n(len(res.worlds), 'world')} "
        f"({res.unsound} candidates refused by the checker) -> {args.output}, {res.seconds:.0f}s{note}",
        file=out,
    )
    return 0


# ------------------------------------------------------------------ effect


def _model(spec: str) -> tuple[str, Any]:
    """A built-in model, FILE.py:FACTORY, FILE.onnx / FILE.eqsat, or a zoo model (``bench.zoo``: a name,
    or ``full:NAME`` at deployment size)."""
    from bench.models import MODELS
    from bench.zoo import zoo_builder
    from rewrite.frontends import from_torch

    build = None if spec in MODELS else zoo_builder(spec)  # a built-in name wins (bert is both)
    if build is None:
        src = read_source(spec)
        return src.name, src.graph
    module, inputs = build()
    return spec, from_torch(module, tuple(inputs), name=spec.replace(":", "-"), share_weights=True)


def cmd_effect(args: argparse.Namespace) -> int:
    import rewrite  # the pipeline: loaded only for this command
    from rewrite.pipeline import default_rules

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"rule file '{args.file}' does not exist")
    added = load_rule_file(path)
    if not added:
        raise UsageError(f"{args.file}: the file has no rules in it")
    families = sorted(rule_files())
    for f in args.replace or []:
        if f not in families:
            raise UsageError(f"--replace {f}: not a shipped family", hint=f"families: {', '.join(families)}")
    target: Any = "torch"  # the analytical model's target, what optimize() uses by default
    if args.run:
        from lower import parse_target

        target = parse_target(args.run, args.threads or None)
    shipped = default_rules(target)
    kept = [r for r in shipped if r.family not in (args.replace or [])]
    names = {d.name for r in added for d in r.directions()}
    models = _list(args.models) if args.models else list(DEFAULT_MODELS)
    limits = limits_of(args)
    rows: list[dict[str, Any]] = []
    label = "shipped" + "".join(f" - {f}" for f in args.replace or []) + f" + {path.name}"
    out = sys.stderr if args.json == "-" else sys.stdout
    ran = f"  {'ran: shipped':>12} {'with file':>10} {'speedup':>8}" if args.run else ""
    print(
        f"{'model':<14} {'before':>10} {'shipped':>10} {'with file':>10} {'change':>8}{ran}  new rules fired",
        file=out,
    )
    for spec in models:
        name, graph = _model(spec)
        # with --run the graph the file gives is verified (a synthesized rule must not change a result)
        base = rewrite.optimize(graph, rules=shipped, limits=limits, check=False, target=target, run_check=False)
        new = rewrite.optimize(
            graph, rules=kept + added, limits=limits, check=bool(args.run), target=target, run_check=False
        )
        fired = {k: v for k, v in new.stats.rules_fired.items() if k in names and v}
        b, a, w = base.stats.cost_before, base.stats.cost_after, new.stats.cost_after
        row: dict[str, Any] = {
            "model": name,
            "cost_before": b,
            "cost_shipped": a,
            "cost_with_file": w,
            "cut_shipped": 1 - a / b if b else 0.0,
            "cut_with_file": 1 - w / b if b else 0.0,
            "change": w / a - 1 if a else 0.0,
            "fired": fired,
        }
        ran_row = _ran(base.graph, new.graph, target) if args.run else None
        if ran_row is not None:
            row["ran"] = ran_row
        rows.append(row)
        shown = ", ".join(f"{k} x{v}" for k, v in sorted(fired.items(), key=lambda kv: -kv[1])[:6])
        more = f" (+{len(fired) - 6})" if len(fired) > 6 else ""
        print(
            f"{name:<14} {b * 1e3:>8.3f}ms {a * 1e3:>8.3f}ms {w * 1e3:>8.3f}ms {row['change']:>+7.1%}"
            + (_ran_text(ran_row) if ran_row is not None else "")
            + f"  {shown or '-'}{more}",
            file=out,
            flush=True,
        )
    model = f"the {args.run} target's compiled kernels" if args.run else "the analytical model"
    print(f"with file = {label}; cost is modelled ({model}), lower is better", file=out)
    if args.run:
        print(
            f"ran: both graphs compiled for {target.name} ({target.threads} thread(s)) and timed interleaved, median "
            "ms; speedup = shipped / with file, per round",
            file=out,
        )
    if args.json:
        report = json.dumps({"file": str(path), "variant": label, "models": rows}, indent=1)
        if args.json == "-":
            print(report)
        else:
            Path(args.json).write_text(report + "\n")
    return 0


def _ran(base: Any, new: Any, target: Any) -> dict[str, float]:
    """Both chosen graphs compiled for ``target`` and timed as the run check times its pair
    (``rewrite.runcheck.time_pair``, on one random feed): their median times (ms) and the median per-round
    speedup of the file's graph (1.0 where they are one graph)."""
    from rewrite.pipeline import compile as compile_graph
    from rewrite.runcheck import time_pair

    a = compile_graph(base, target=target)
    same = new.pretty() == base.pretty()
    b = a if same else compile_graph(new, target=target)
    sp = time_pair(b, a, base.random_inputs(0), target)
    shipped = sp.baseline.median * 1e3
    with_file = shipped if same else sp.ours.median * 1e3
    return {"shipped_ms": shipped, "with_file_ms": with_file, "speedup": 1.0 if same else sp.ratio}


def _ran_text(r: dict[str, float]) -> str:
    return f"  {r['shipped_ms']:>10.3f}ms {r['with_file_ms']:>8.3f}ms {r['speedup']:>7.3f}x"


# ------------------------------------------------------------------ parsers


def add_parsers(sub: Any) -> None:
    s = sub.add_parser(
        "synthesize",
        help="find rules by enumerating graphs over a set of ops",
        description="Enumerate graphs of up to --max-ops ops over --ops in each shape world, group those equal on "
        "random inputs at several sizes, and write the candidates that pass the rule checker and are not derivable "
        "from the others (with their guards and provenance) to -o FILE.",
    )
    s.add_argument(
        "--ops",
        required=True,
        help="comma-separated op names (pooling: avgpool2d and maxpool2d; split: slices of a concat)",
    )
    s.add_argument("--max-ops", type=positive_int, default=3, help="ops per enumerated graph (1 to 4; default 3)")
    s.add_argument(
        "--shapes",
        action="append",
        metavar="WORLD",
        help=f"a shape world to enumerate in (repeatable): one of {', '.join(WORLDS)}, or 'a=n,m b=m,k' "
        "(variables and symbolic shapes; digits are literal sizes); default: every named world",
    )
    s.add_argument("--minutes", type=positive_float, default=30.0, help="time budget (default 30)")
    s.add_argument("--workers", type=positive_int, default=None, help="processes (default: the machine's cores)")
    s.add_argument("-o", "--output", required=True, type=output_file, metavar="FILE.rules")
    s.add_argument("--json", type=json_output, metavar="FILE", help="the run as JSON ('-': stdout)")
    s.set_defaults(fn=cmd_synthesize)

    e = sub.add_parser(
        "effect",
        help="optimize models with and without a rule file; print the cost change and the file's rules that fired",
    )
    e.add_argument("file", metavar="FILE", help="a .rules file")
    e.add_argument(
        "--models",
        help=f"comma-separated models: built-in, FILE.py:FACTORY, FILE.onnx, zoo names or full:NAME "
        f"(default: {','.join(DEFAULT_MODELS)})",
    )
    e.add_argument(
        "--replace",
        action="append",
        metavar="FAMILY",
        help="leave this shipped family out when the file is used (repeatable): the file instead of it",
    )
    e.add_argument(
        "--run",
        choices=("llvm",),
        help="optimize for this target (its compiled kernels as the cost model), verify the file's graph, and "
        "compile and time both chosen graphs interleaved",
    )
    e.add_argument("--threads", type=positive_int, help="with --run: threads the kernels run on (default: the cores)")
    add_limits(e)
    e.add_argument("--json", type=json_output, metavar="FILE", help="the table as JSON ('-': stdout)")
    e.set_defaults(fn=cmd_effect)
