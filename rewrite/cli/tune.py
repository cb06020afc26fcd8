"""``eqsat tune MODEL...``: search each kernel's schedule, measure, keep the fastest as a tuning record.

    eqsat tune bert --trials 200                    # this machine, 200 candidates over bert's kernels
    eqsat tune full:resnet50 --minutes 10 --threads 1
    eqsat tune bert,full:gpt2 --ray auto            # measured on every node of a running Ray cluster
    eqsat tune bert --ray 10.0.0.5:6379 --json tune.json

Each model is imported and optimized for the llvm target (as ``eqsat bench e2e`` does; ``--imported``:
the graph as imported), its distinct kernels found, and ``lower.tune`` searches them: candidates drawn
from each recipe's decisions, ranked by a LightGBM cost model trained as measurements arrive, measured
beside the default schedule (and checked against its output).  A kernel's fastest schedule, when
confirmed faster, is kept in the cache folder (``tuning/records.jsonl``); ``compile`` and the compiled cost
model use it from then on (``EQSAT_TUNING=0``: they do not).  Every candidate measured is logged too
(``tuning/trials.jsonl``): a second run with the same budget measures nothing it measured before.

Each kernel's candidates are timed alone; the model then runs them together: unless ``--no-check``, the
compiled model is timed with and without the records (interleaved), and when it runs 2% slower or more with
them the run's new records are taken back (replaced by the kernels' default decisions).

Prints a table per model (kernel, uses, default and tuned time, speedup, trials) and the model check on
stdout; exits 0, or 2 on errors.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rewrite import config
from rewrite.cli.args import json_output, positive_float, positive_int
from rewrite.cli.main import Parser
from rewrite.ir.errors import UsageError
from rewrite.progress import counter, say

if TYPE_CHECKING:
    from lower.tune.search import TuneReport
    from rewrite.ir.graph import Graph


def parser(prog: str) -> argparse.ArgumentParser:
    p = Parser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", help="comma-separated: built-in or zoo names (full:NAME), FILE.py:FACTORY, FILE.onnx")
    p.add_argument("--trials", type=positive_int, default=1000, help="candidates measured per model (default 1000)")
    p.add_argument("--minutes", type=positive_float, help="stop each model's search after this long")
    p.add_argument("--threads", type=positive_int, help="threads the kernels run on (default: this machine's cores)")
    p.add_argument("--batch", type=positive_int, default=8, help="candidates per measured batch (default 8)")
    p.add_argument("--seed", type=int, default=0, help="the search's random seed")
    p.add_argument(
        "--ray",
        metavar="auto|ADDRESS|local",
        help="measure on a Ray cluster's nodes: auto (the running one), HOST:PORT, or local (start one here)",
    )
    p.add_argument("--pin-cores", action="store_true", help="with --ray: pin each node's worker to its own core")
    p.add_argument("--imported", action="store_true", help="tune the graph as imported, not optimize's result")
    p.add_argument(
        "--no-check", action="store_true", help="skip timing the whole model with and without the new records"
    )
    p.add_argument(
        "--json", type=json_output, metavar="FILE", help="write the reports as JSON (-: stdout, tables on stderr)"
    )
    return p


# A model whose compiled graph runs this much slower with the run's new records than without (median of
# interleaved rounds) gets them taken back: each kernel's measurements were alone, the model runs them together.
CHECK_SLOWER = 0.98
CHECK_REPEATS = 20


@dataclass
class ModelCheck:
    """The whole model timed with every record (``tuned``) against every kernel on its default schedule."""

    speedup: float  # untuned / tuned, median of per-round ratios
    lo: float
    hi: float
    reverted: int  # records of this run taken back (the model ran slower with them)

    @property
    def line(self) -> str:
        verdict = f"; slower: the run's {self.reverted} record(s) taken back" if self.reverted else ""
        return f"model check: tuned {self.speedup:.3f}x ({self.lo:.3f}-{self.hi:.3f}) the untuned compile{verdict}"

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def model_check(graph: Graph, threads: int, report: TuneReport) -> ModelCheck | None:
    """Time ``graph`` compiled with the tuning records against it compiled without (``EQSAT_TUNING=0``),
    interleaved; when it runs ``CHECK_SLOWER`` or slower with them, the records this run kept are taken back
    (each replaced by one holding its kernel's default decisions: the last record of a key wins).  None when
    the run kept no record."""
    from costs.timing import speedup
    from lower.tune import records
    from rewrite.pipeline import compile

    kept = [k for k in report.kernels if k.status == "tuned"]
    if not kept:
        return None
    say(f"timing the model with and without {len(kept)} new record(s) ...")
    feed = graph.random_inputs(0)
    with config.TUNING.set("0"):
        base = compile(graph, threads=threads)
    tuned = compile(graph, threads=threads)
    sp = speedup(lambda: tuned(feed), lambda: base(feed), repeats=CHECK_REPEATS, threads=threads)
    reverted = 0
    if sp.ratio < CHECK_SLOWER:
        store = records.store()
        for k in kept:
            rec = store.get(k.key)
            if rec is not None:
                store.add(dataclasses.replace(rec, decisions=dict(k.default_decisions), seconds=rec.default_seconds))
                k.status = "reverted"
                reverted += 1
    return ModelCheck(sp.ratio, sp.lo, sp.hi, reverted)


def main(argv: list[str], prog: str = "eqsat tune") -> int:
    args = parser(prog).parse_args(argv)
    from bench.e2e import load_model, model_args, optimize_for
    from lower.target import parse_target
    from lower.tune.runners import make_runner
    from lower.tune.search import TuneOptions, tune
    from lower.tune.space import tasks_of
    from rewrite.frontends import from_torch

    try:
        models = model_args(args.models)
    except ValueError as e:
        raise UsageError(str(e)) from None
    target = parse_target("llvm", args.threads)
    runner = make_runner(args.ray, target.threads, args.pin_cores)
    out = []
    try:
        for spec in models:
            say(f"loading {spec} ...")
            module, inputs = load_model(spec)
            graph = from_torch(module, inputs, name=spec)
            if not args.imported:
                say(f"optimizing {spec} for {target.name} on {target.threads} thread(s) ...")
                graph, _, _ = optimize_for(graph, target.threads)
            tasks = tasks_of(graph, target, spec)
            say(f"tuning {len(tasks)} distinct kernels of {spec} ({args.trials} trials) ...")
            opts = TuneOptions(trials=args.trials, minutes=args.minutes, batch=args.batch, seed=args.seed)
            report = tune(tasks, opts, runner, progress=counter(f"tune {spec}", unit="trial"))
            check = model_check(graph, target.threads, report) if not args.no_check else None
            table = sys.stderr if args.json == "-" else sys.stdout
            print(f"{spec} ({target.threads} thread(s)):", file=table)
            print(report.table(), file=table)
            if check is not None:
                print(check.line, file=table)
            out.append(
                {
                    "model": spec,
                    "threads": target.threads,
                    **report.to_json(),
                    "model_check": check.to_json() if check is not None else None,
                }
            )
    finally:
        runner.close()
    if args.json:
        text = json.dumps(out, indent=1)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text)
            print(f"wrote {args.json}", file=sys.stderr)
    return 0
