"""End to end: each benchmark model optimized by eqsat and compiled to LLVM, vs PyTorch eager.

    python -m bench.e2e [--models a,b] [--threads 2] [--json OUT]      # or: eqsat bench e2e

Both sides run with the same thread count, interleaved in one process
(``costs.timing``): the speedup is the median of per-round ratios, printed
with their interquartile range, and a warning when the timing was noisy.
Also reports onnxruntime when it is installed and the model exports, and the
compile time with a cold and a warm kernel cache.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from bench.models import MODELS, load
from costs.timing import format_ratio, interleaved
from rewrite.frontends import from_torch
from rewrite.pipeline import compile, compile_and_compare, optimize


def onnxruntime_ms(
    module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], threads: int, repeats: int
) -> float | None:
    """Median ms under onnxruntime, or None when it is not installed or the model does not export."""
    try:
        import onnxruntime as ort  # optional (bench extra): imported here so e2e runs without it
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        try:
            torch.onnx.export(module, inputs, path, dynamo=False)
        except Exception:
            return None
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        feed = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs)}
        return interleaved([lambda: sess.run(None, feed)], repeats=repeats, threads=threads).timings[0].median * 1e3


def run_model(name: str, threads: int, repeats: int) -> dict[str, Any]:
    module, inputs = load(name)
    graph = from_torch(module, inputs, name=name)
    res = optimize(graph)
    os.environ["EQSAT_NO_CACHE"] = "1"  # cold: every kernel compiled, none read from the disk cache
    try:
        cold = compile(res.graph).compile_seconds
    finally:
        del os.environ["EQSAT_NO_CACHE"]
    row = {"model": name, **compile_and_compare(res.graph, module, inputs, repeats=repeats).to_json()}
    row.pop("compile_seconds")
    row["compile_seconds_cold"] = cold
    row["compile_seconds_warm"] = compile(res.graph).compile_seconds  # the disk cache is filled now
    row["onnxruntime_ms"] = onnxruntime_ms(module, inputs, threads, repeats)
    return row


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.e2e", description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--json")
    args = p.parse_args(argv)
    names = [m for m in args.models.split(",") if m]
    bad = [m for m in names if m not in MODELS]
    if bad:
        print(f"unknown model(s) {bad}; known: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    os.environ.setdefault("EQSAT_THREADS", str(args.threads))
    rows = []
    for i, name in enumerate(names, 1):
        print(f"[{i}/{len(names)}] {name} ...", file=sys.stderr, flush=True)
        rows.append(run_model(name, args.threads, args.repeats))
    print(
        f"{'model':<12} {'eqsat ms':>9} {'eager ms':>9} {'speedup (IQR)':>19} {'ort ms':>8} "
        f"{'cold s':>7} {'warm s':>7} {'rel err':>8}"
    )
    for r in rows:
        ort = f"{r['onnxruntime_ms']:.2f}" if r["onnxruntime_ms"] is not None else "-"
        print(
            f"{r['model']:<12} {r['latency_ms']:9.2f} {r['torch_eager_ms']:9.2f} "
            f"{format_ratio(r['speedup_vs_eager'], *r['speedup_vs_eager_iqr']):>19} "
            f"{ort:>8} {r['compile_seconds_cold']:7.2f} {r['compile_seconds_warm']:7.2f} {r['max_rel_err']:8.1e}"
        )
    for r in rows:
        for note in r["timing_notes"]:
            print(f"warning: {r['model']}: {note}", file=sys.stderr)
    geo = math.exp(sum(math.log(r["speedup_vs_eager"]) for r in rows) / len(rows))
    geo_lo = math.exp(sum(math.log(r["speedup_vs_eager_iqr"][0]) for r in rows) / len(rows))
    geo_hi = math.exp(sum(math.log(r["speedup_vs_eager_iqr"][1]) for r in rows) / len(rows))
    print(
        f"geometric mean speedup vs PyTorch eager: {format_ratio(geo, geo_lo, geo_hi)} "
        f"({args.threads} thread(s) each; in brackets: the same mean of each model's quartiles)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "geomean_speedup_vs_eager": geo}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
