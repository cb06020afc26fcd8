"""``bench.e2e --target cuda``: each model optimized for the GPU, compiled for ``cuda``, checked in exact FP32
(TF32 tolerance) and timed against PyTorch eager CUDA and ``torch.compile`` with CUDA events (``bench.gpu_timing``);
see ``bench.e2e``'s docstring.  The model loading and the peers' runners are ``bench.e2e``'s.
"""

from __future__ import annotations

import copy
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from bench.gpu_timing import Timer, cuda_event_ms, geomean, interleaved_ms, torch_tf32
from costs.analytical import AnalyticalCost
from costs.compiled import CompiledCost
from lower import parse_target
from lower.cuda import TF32_REL_TOL
from rewrite import config
from rewrite.frontends import from_torch
from rewrite.ir.errors import EqsatError
from rewrite.ir.target import HALF_REL_TOL
from rewrite.pipeline import compile, compiled_cost, optimize
from rewrite.progress import each
from rewrite.verification.numeric import max_normwise_rel_err

# on the GPU: eager CUDA, torch.compile's default mode, and its mode="max-autotune" (Triton GEMM templates tuned per
# shape, CUDA graphs); onnxruntime is CPU-only here
CUDA_PEERS = ("eager", "inductor", "max-autotune")
DEVICE = "cuda"  # where the module and its inputs go (the tests' seam: "cpu")
TF32_TOLERANCE = TF32_REL_TOL  # max|ours - ref| <= this * max|ref|: TF32 (10-bit mantissa) products, FP32 sums


def _cuda_cost_model(cost: str) -> CompiledCost | AnalyticalCost:
    return compiled_cost("cuda") if cost == "compiled" else AnalyticalCost()


def run_model_cuda(
    name: str,
    peers: Sequence[str],
    repeats: int,
    cost: str = "compiled",
    imported: bool = False,
    timer: Timer = cuda_event_ms,
    dtype: str = "float32",
) -> dict[str, Any]:
    """One row: ``name`` optimized for the GPU, compiled for ``cuda``, checked, and timed against the peers
    (and, with ``imported``, against its graph compiled as imported), interleaved.  ``dtype`` (bfloat16,
    float16): the model and its floating inputs converted to it first, every contender run in it."""
    from bench import e2e  # deferred: bench.e2e imports this module

    module, inputs = e2e.load_model(name)
    # --dtype: the model in exact float32 is the reference; correct when eqsat's normwise error against it is at most
    # twice torch eager's own in that dtype, or within the dtype's tolerance (HALF_REL_TOL) when torch's is smaller
    module32, inputs32 = None, inputs
    if dtype != "float32":
        module32, inputs32 = copy.deepcopy(module).to(DEVICE).eval(), tuple(t.to(DEVICE) for t in inputs)
        tdt = getattr(torch, dtype)
        module = module.to(tdt)
        inputs = tuple(t.to(tdt) if t.is_floating_point() else t for t in inputs)
    graph = from_torch(module, inputs, name=name)
    row: dict[str, Any] = {"model": e2e.short_name(name), "cost": cost, "dtype": dtype, "error": None}
    for k in CUDA_COLS:
        row[f"ms_{k}"] = row[f"iqr_{k}"] = None
    row["verified"], row["max_rel_err"] = False, None
    model = _cuda_cost_model(cost)
    t0 = time.perf_counter()
    try:
        res = optimize(graph, cost_model=model, target="cuda")  # the cuda target's default rules
    except EqsatError as e:  # one model failing is a row saying why; the others still run
        row["error"] = f"optimize: {e2e._error_line(e)}"
        print(f"  {name}: {row['error']}", file=sys.stderr)
        return row
    row.update(
        optimize_seconds=time.perf_counter() - t0,
        ops_before=graph.op_count(),
        ops_after=res.graph.op_count(),
        cost_stats=model.stats if isinstance(model, CompiledCost) else None,
    )
    gpu_module = module.to(DEVICE).eval()
    gpu_inputs = tuple(t.to(DEVICE) for t in inputs)
    names = [n.attrs["name"] for n in res.graph.inputs]  # decode keeps the original input order
    feed = dict(zip(names, gpu_inputs, strict=False))
    with torch.no_grad(), torch_tf32(False):  # the reference in exact FP32 (of the float32 model: --dtype)
        ref = gpu_module(*gpu_inputs) if module32 is None else module32(*inputs32)
    refs = [ref] if isinstance(ref, torch.Tensor) else list(ref)
    tol = TF32_TOLERANCE
    if module32 is not None:
        with torch.no_grad():
            own = gpu_module(*gpu_inputs)
        row["torch_rel_err"] = torch_err = max_normwise_rel_err(e2e._tensors(own), [r.cpu() for r in refs])
        tol = max(2 * torch_err, HALF_REL_TOL[dtype])
        del module32
    tf32 = not config.CUDA_EXACT_FP32.flag()  # the peers in the precision our contractions use
    contenders: dict[str, Callable[[], object]] = {}
    graphs = [("eqsat", res.graph)] + ([("imported", graph)] if imported else [])
    for label, g in graphs:
        suffix = "" if label == "eqsat" else f"_{label}"
        try:
            t0 = time.perf_counter()
            run = compile(g, target="cuda")
            row[f"compile_seconds{suffix}"] = time.perf_counter() - t0
            row[f"kernels{suffix}"] = run.kernels
            with torch.no_grad():
                err = max_normwise_rel_err(run(feed), refs)
        except EqsatError as e:  # a kernel the cuda target cannot build yet: a row that says so, not a crash
            row["error"] = f"{label}: {e2e._error_line(e)}"
            print(f"  {name}: {row['error']}", file=sys.stderr)
            row[f"verified{suffix}"], row[f"max_rel_err{suffix}"] = False, None
            continue
        row[f"verified{suffix}"], row[f"max_rel_err{suffix}"] = err <= tol, err
        if err > tol:
            print(f"  {name} ({label}): max rel err {err:.2e} over {tol:g}", file=sys.stderr)
        contenders[label] = e2e._bound(run, feed)
    with torch_tf32(tf32):
        contenders["eager"] = e2e._eager(gpu_module, gpu_inputs)
        if "inductor" in peers and (ind := e2e.inductor_runner(gpu_module, gpu_inputs)) is not None:
            contenders["inductor"] = ind
        if "max-autotune" in peers and (mx := e2e.inductor_runner(gpu_module, gpu_inputs, "max-autotune")) is not None:
            contenders["max-autotune"] = mx
        keys = list(contenders)
        timed = interleaved_ms([contenders[k] for k in keys], repeats, timer=timer)
    for k, t in zip(keys, timed, strict=True):
        row[f"ms_{k}"], row[f"iqr_{k}"] = t.median, list(t.quartiles)
    row["torch_tf32"] = tf32
    cells = ", ".join(f"{k} {row[f'ms_{k}']:.3f} ms" for k in CUDA_COLS if row.get(f"ms_{k}") is not None)
    err = row["max_rel_err"]
    print(f"  {name}: {cells}; max rel err {err:.1e}" if err is not None else f"  {name}: {cells}", file=sys.stderr)
    return row


CUDA_COLS = ("eager", "inductor", "max-autotune", "imported", "eqsat")
CUDA_RATIOS = ("eager", "inductor", "max-autotune", "imported")  # each as peer ms / eqsat ms: above 1, eqsat faster


def _ratio_cuda(r: dict[str, Any], peer: str) -> float | None:
    a, b = r.get(f"ms_{peer}"), r.get("ms_eqsat")
    return a / b if a is not None and b else None


def cuda_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Geometric-mean speedups of eqsat over each peer (models where both ran), and how many are correct."""
    out: dict[str, Any] = {"models": len(rows), "verified": sum(bool(r.get("verified")) for r in rows)}
    for p in CUDA_RATIOS:
        rs = [x for r in rows if (x := _ratio_cuda(r, p)) is not None]
        out[f"geomean_speedup_vs_{p}"] = geomean(rs)
        out[f"faster_than_{p}"] = f"{sum(x > 1 for x in rs)}/{len(rs)}"
    return out


def print_cuda_table(rows: Sequence[dict[str, Any]], target: str) -> None:
    cols = [c for c in CUDA_COLS if any(r.get(f"ms_{c}") is not None for r in rows)]
    ratios = [p for p in CUDA_RATIOS if p in cols]
    print(f"e2e on {target} (CUDA-event medians, ms; ratios are peer / eqsat: above 1, eqsat is faster)")
    print(
        f"{'model':<12} "
        + " ".join(f"{c:>12}" for c in cols)
        + " ".join(f" {p[:3] + '/eq':>7}" for p in ratios)
        + f" {'rel err':>8}  ok"
    )
    for r in rows:
        err = r.get("max_rel_err")
        print(
            f"{r['model']:<12} "
            + " ".join(f"{r[f'ms_{c}']:>12.3f}" if r.get(f"ms_{c}") is not None else f"{'-':>12}" for c in cols)
            + " ".join(f" {x:7.2f}" if (x := _ratio_cuda(r, p)) is not None else f" {'-':>7}" for p in ratios)
            + (f" {err:8.1e}" if err is not None else f" {'-':>8}")
            + f"  {'yes' if r.get('verified') else 'NO'}"
            + (f"  ({r['error']})" if r.get("error") else "")
        )
    s = cuda_summary(rows)
    parts = [
        f"vs {p} {s[f'geomean_speedup_vs_{p}']:.2f}x (faster on {s[f'faster_than_{p}']})"
        for p in ratios
        if s[f"geomean_speedup_vs_{p}"] is not None
    ]
    print(f"correct {s['verified']}/{s['models']}; geomean eqsat speedup " + "; ".join(parts))


def run_cuda(
    names: Sequence[str],
    peers: Sequence[str],
    repeats: int,
    cost: str = "compiled",
    imported: bool = False,
    timer: Timer = cuda_event_ms,
    dtype: str = "float32",
) -> dict[str, Any]:
    """The ``--target cuda`` table as one JSON-able record: the GPU target's key, the rows, the summary."""
    target = parse_target("cuda")
    rows = [run_model_cuda(n, peers, repeats, cost, imported, timer, dtype) for n in each(names, "bench e2e (cuda)")]
    settings = {"exact_fp32": config.CUDA_EXACT_FP32.flag(), "cuda_graph": config.CUDA_GRAPH.flag()}
    return {
        "target": target.cache_key,
        "gpu": target.name,
        "settings": {**settings, "tolerance": TF32_TOLERANCE, "repeats": repeats, "cost": cost, "dtype": dtype},
        "rows": rows,
        "summary": cuda_summary(rows),
    }
