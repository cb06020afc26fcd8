"""End to end: each benchmark model compiled by eqsat, against PyTorch eager and the peers.

    python -m bench.e2e [--models a,b] [--peers ort,inductor] [--threads 1,2] [--json OUT]   # or: eqsat bench e2e

For each model and thread count, every contender runs in one process, interleaved round by round
(``costs.timing.interleaved``) on the same thread count:

* ``eager``: the PyTorch module under ``torch.no_grad``;
* ``ort``: onnxruntime on the model's ONNX export, ``ORT_ENABLE_ALL``, ``intra_op_num_threads`` set;
* ``inductor``: ``torch.compile`` (Inductor, ``freezing=True`` so weights are constants it can fold);
* ``eqsat``: the graph ``optimize`` chose, compiled to LLVM kernels on that many threads.

Each column is a median with its interquartile range; ratios are ``peer / eqsat`` (above 1: eqsat
is faster), and the geometric means of those ratios close the table.  eqsat's outputs are checked
against eager first (``verified``); a peer that cannot run a model gets ``None``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch

from bench.models import MODELS, load
from costs.timing import Timing, interleaved
from rewrite.frontends import from_torch
from rewrite.ir.graph import Graph
from rewrite.pipeline import compile, optimize
from rewrite.progress import each
from rewrite.verify.numeric import REL_TOL, compare_all

PEERS = ("ort", "inductor")

Runner = Callable[[], object]


def ort_runner(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], threads: int, tmp: str) -> Runner | None:
    """onnxruntime on the model's ONNX export, or None when it is not installed or the model does not export."""
    try:
        import onnxruntime as ort  # optional (bench extra): imported here so e2e runs without it
    except ImportError:
        return None
    path = os.path.join(tmp, f"m{threads}.onnx")
    try:
        torch.onnx.export(module, inputs, path, dynamo=False)
    except Exception as e:  # any exporter failure only means "no ort column" for this model
        print(f"  ort: export failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return None
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    feed = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs, strict=False)}
    return lambda: sess.run(None, feed)


@contextlib.contextmanager
def _freezing() -> Iterator[None]:
    import torch._inductor.config as inductor_config  # deferred: importing Inductor is slow and e2e may skip it

    before = inductor_config.freezing
    inductor_config.freezing = True
    try:
        yield
    finally:
        inductor_config.freezing = before


def inductor_runner(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> Runner | None:
    """``torch.compile`` with Inductor and freezing, compiled (and warmed) here; None when it fails."""
    try:
        with _freezing(), torch.no_grad():
            compiled = torch.compile(module, backend="inductor")
            compiled(*inputs)  # compile now, not inside the timed rounds
    except Exception as e:  # a missing C++ compiler or an unsupported op only means "no inductor column"
        print(f"  inductor: failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return None

    def run() -> object:
        with torch.no_grad():
            return compiled(*inputs)

    return run


def _eager(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> Runner:
    def run() -> object:
        with torch.no_grad():
            return module(*inputs)

    return run


def _verified(
    graph: Graph,
    run: Callable[[dict[str, torch.Tensor]], list[torch.Tensor]],
    feed: dict[str, torch.Tensor],
    ref: object,
) -> tuple[bool, float]:
    refs = [ref] if isinstance(ref, torch.Tensor) else list(ref)  # type: ignore[call-overload]
    cmp = compare_all(refs, [o.cpu() for o in run(feed)], REL_TOL)
    if not cmp.close:
        print(f"  eqsat: '{graph.name}' differs from PyTorch: {cmp.why}", file=sys.stderr)
    return cmp.close, cmp.rel_err


def _bound(run: Callable[[dict[str, torch.Tensor]], object], feed: dict[str, torch.Tensor]) -> Runner:
    return lambda: run(feed)


def _ms(t: Timing | None) -> float | None:
    return None if t is None else t.median * 1e3


def _iqr_ms(t: Timing | None) -> list[float] | None:
    return None if t is None else [q * 1e3 for q in t.quartiles]


def run_model(name: str, threads_list: Sequence[int], peers: Sequence[str], repeats: int) -> list[dict[str, Any]]:
    """One row per thread count: every contender's median ms and spread, timed interleaved."""
    module, inputs = load(name)
    graph = from_torch(module, inputs, name=name)
    t0 = time.perf_counter()
    res = optimize(graph)
    optimize_s = time.perf_counter() - t0
    names = [n.attrs["name"] for n in res.graph.inputs]  # decode keeps the original input order
    feed = dict(zip(names, inputs, strict=False))
    with torch.no_grad():
        ref = module(*inputs)
    inductor = inductor_runner(module, inputs) if "inductor" in peers else None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for threads in threads_list:
            torch.set_num_threads(threads)  # Inductor's kernels read the OpenMP count torch set
            t0 = time.perf_counter()
            run = compile(res.graph, threads=threads)
            compile_s = time.perf_counter() - t0
            ok, rel_err = _verified(res.graph, run, feed, ref)
            contenders: dict[str, Runner] = {"eager": _eager(module, inputs), "eqsat": _bound(run, feed)}
            if "ort" in peers and (ort := ort_runner(module, inputs, threads, tmp)) is not None:
                contenders["ort"] = ort
            if inductor is not None:
                contenders["inductor"] = inductor
            keys = list(contenders)
            timed = interleaved([contenders[k] for k in keys], repeats=repeats, threads=threads, names=keys)
            by = dict(zip(keys, timed.timings, strict=True))
            row: dict[str, Any] = {"model": name, "threads": threads}
            for k in ("eager", "ort", "inductor", "eqsat"):
                row[f"ms_{k}"] = _ms(by.get(k))
                row[f"iqr_{k}"] = _iqr_ms(by.get(k))
            row.update(
                verified=ok,
                max_rel_err=rel_err,
                optimize_seconds=optimize_s,
                compile_seconds=compile_s,
                kernels=run.kernels,
                notes=list(timed.notes),
            )
            rows.append(row)
    return rows


def _ratio(r: dict[str, Any], peer: str) -> float | None:
    return r[f"ms_{peer}"] / r["ms_eqsat"] if r[f"ms_{peer}"] is not None and r["ms_eqsat"] > 0 else None


def _cell(r: dict[str, Any], k: str) -> str:
    if r[f"ms_{k}"] is None:
        return "-"
    lo, hi = r[f"iqr_{k}"]
    return f"{r[f'ms_{k}']:.2f} ({lo:.2f}–{hi:.2f})"


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    cols = ("eager", "ort", "inductor", "eqsat")
    print(f"{'model':<12} {'thr':>3} " + " ".join(f"{c + ' ms (IQR)':>24}" for c in cols) + "   ort/eq  ind/eq  ok")
    for r in rows:
        ratios = " ".join(f"{x:7.2f}" if (x := _ratio(r, p)) is not None else f"{'-':>7}" for p in PEERS)
        print(
            f"{r['model']:<12} {r['threads']:>3} "
            + " ".join(f"{_cell(r, c):>24}" for c in cols)
            + f" {ratios}  {'yes' if r['verified'] else 'NO'}"
        )
    for threads in sorted({r["threads"] for r in rows}):
        sub = [r for r in rows if r["threads"] == threads]
        parts = []
        for p in ("eager", *PEERS):
            rs = [x for r in sub if (x := _ratio(r, p)) is not None]
            if rs:
                geo = math.exp(sum(math.log(x) for x in rs) / len(rs))
                wins = sum(x > 1 for x in rs)
                parts.append(f"vs {p} {geo:.2f}× (faster on {wins}/{len(rs)})")
        worst = [
            (r["model"], r["ms_eqsat"] / best)
            for r in sub
            if (best := min((r[f"ms_{p}"] for p in PEERS if r[f"ms_{p}"] is not None), default=None)) is not None
        ]
        over = [f"{m} {x:.2f}×" for m, x in worst if x > 1.2]
        print(
            f"{threads} thread(s): geomean eqsat speedup "
            + "; ".join(parts)
            + (f"; over 1.2× the best peer: {', '.join(over)}" if over else "")
        )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.e2e", description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument(
        "--peers", default=",".join(PEERS), help=f"comma-separated subset of {','.join(PEERS)} ('' for none)"
    )
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts, each timed separately")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--json", help="write the rows (a JSON list of objects) to this file")
    args = p.parse_args(argv)
    names = [m for m in args.models.split(",") if m]
    bad = [m for m in names if m not in MODELS]
    if bad:
        print(f"unknown model(s) {bad}; known: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    peers = [x for x in args.peers.split(",") if x]
    if unknown := [x for x in peers if x not in PEERS]:
        print(f"unknown peer(s) {unknown}; known: {', '.join(PEERS)}", file=sys.stderr)
        return 2
    try:
        threads = [int(x) for x in args.threads.split(",") if x]
    except ValueError:
        print(f"--threads wants comma-separated integers, got {args.threads!r}", file=sys.stderr)
        return 2
    if not threads or min(threads) < 1:
        print(f"--threads wants positive integers, got {args.threads!r}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    for name in each(names, "bench e2e"):
        rows.extend(run_model(name, threads, peers, args.repeats))
    print_table(rows)
    for r in rows:
        for note in r["notes"]:
            print(f"warning: {r['model']} ({r['threads']} thr): {note}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if all(r["verified"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
