"""``eqsat bench zoo [--models a,b] [--json OUT]``: every zoo model through the whole pipeline.

Per model: import (torch.export), optimize (saturate, extract, verify), compile to LLVM and
compare with eager PyTorch (max relative error), the op counts and modelled costs before and
after, and the compiled latency against eager, interleaved (``costs.timing.speedup``).  A model
that fails at any stage is a row with that stage and the later ones false and the one-line
error; the suite never stops on one model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from bench.zoo import ZOO, zoo_builder, zoo_names
from costs.timing import format_ratio, speedup
from rewrite.egraph.limits import Limits
from rewrite.frontends import from_torch
from rewrite.pipeline import compile, optimize
from rewrite.progress import each
from rewrite.verification.numeric import REL_TOL, normwise_rel_err

ZOO_LIMITS = Limits(iterations=6, nodes=30_000, seconds=20.0)


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def run_model(name: str, repeats: int = 5, ilp_seconds: float = 5.0, time_it: bool = True) -> dict[str, Any]:
    """One zoo row; never raises for a model's failure (the error is in ``row['error']``)."""
    row: dict[str, Any] = {
        "model": name,
        "imported": False,
        "verified": False,
        "compiled": False,
        "max_rel_err": None,
        "ops_before": None,
        "ops_after": None,
        "cost_before": None,
        "cost_after": None,
        "ms_eager": None,
        "ms_eqsat": None,
        "speedup": None,
        "seconds": None,
        "stage": "build",
        "error": None,
    }
    t0 = time.perf_counter()
    try:
        build = zoo_builder(name)
        if build is None:
            raise ValueError(f"unknown zoo model {name!r}")
        module, inputs = build()
        row["stage"] = "import"
        graph = from_torch(module, inputs, name=name)
        row["imported"] = True
        row["ops_before"] = sum(1 for n in graph if n.op not in ("input", "weight"))
        row["stage"] = "optimize"
        res = optimize(graph, limits=ZOO_LIMITS, ilp_seconds=ilp_seconds)
        st = res.stats
        row.update(
            ops_before=st.ops_before,
            ops_after=st.ops_after,
            cost_before=st.cost_before,
            cost_after=st.cost_after,
            verified=bool(st.verified),
        )
        row["stage"] = "compile"
        run = compile(res.graph)
        names = [n.attrs["name"] for n in res.graph.inputs]
        feed = dict(zip(names, inputs, strict=False))
        with torch.no_grad():
            ref = module(*inputs)
            out = run(feed)[0]
            err = normwise_rel_err(out.float(), ref.float())
            row["max_rel_err"] = err
            row["compiled"] = err <= REL_TOL
            if not row["compiled"]:
                raise RuntimeError(f"compiled output differs from eager: max relative error {err:.2e} > {REL_TOL}")
            row["stage"] = "time"
            if time_it:
                sp = speedup(lambda: run(feed), lambda: module(*inputs), repeats=repeats, threads=run.threads)
                row.update(ms_eqsat=sp.ours.median * 1e3, ms_eager=sp.baseline.median * 1e3, speedup=sp.ratio)
        row["stage"] = "done"
    except Exception as e:  # one model's failure is its row, never the suite's
        row["error"] = _one_line(e)
    row["seconds"] = time.perf_counter() - t0
    return row


def _fmt(v: Any, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    print(
        f"{'model':<16} {'imp':>3} {'ver':>3} {'cmp':>3} {'ops':>9} {'cost cut':>8} {'rel err':>8} "
        f"{'eager ms':>8} {'eqsat ms':>8} {'speedup':>8}  error"
    )
    for r in rows:
        ops = "-" if r["ops_before"] is None else f"{r['ops_before']}>{_fmt(r['ops_after'], 'd')}"
        cut = "-"
        if r["cost_before"] and r["cost_after"] is not None:
            cut = f"{1 - r['cost_after'] / r['cost_before']:.0%}"
        sp = "-" if r["speedup"] is None else format_ratio(r["speedup"], r["speedup"], r["speedup"]).split(" ")[0]
        flags = ["y" if r[k] else "n" for k in ("imported", "verified", "compiled")]
        print(
            f"{r['model']:<16} {flags[0]:>3} {flags[1]:>3} {flags[2]:>3} {ops:>9} {cut:>8} "
            f"{_fmt(r['max_rel_err'], '.1e'):>8} {_fmt(r['ms_eager'], '.2f'):>8} {_fmt(r['ms_eqsat'], '.2f'):>8} "
            f"{sp:>8}  {r['error'] or ''}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="eqsat bench zoo", description=__doc__.splitlines()[0])
    known = zoo_names()  # and full:NAME, the architecture at deployment size
    p.add_argument("--models", default=",".join(ZOO), help=f"comma-separated, from: {', '.join(known)}")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-timing", action="store_true", help="skip the eager-vs-compiled timing")
    p.add_argument("--json", help="write the rows as a JSON list to this file")
    args = p.parse_args(argv)
    names = [m for m in args.models.split(",") if m]
    bad = [m for m in names if m not in known]
    if bad:
        print(f"unknown model(s) {bad}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    rows = []
    for name in each(names, "bench zoo"):
        rows.append(run_model(name, args.repeats, time_it=not args.no_timing))
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
