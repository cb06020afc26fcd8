"""Kernel benchmarks: our compiled kernels against torch (and numpy), as ratios measured in one process.

    python -m bench.kernels [--json OUT] [--quick]

* this CPU's single-thread FMA peak, measured by a JIT-compiled loop of
  independent ``<W x float>`` FMA chains (W = the target's vector width):
  ``fma_peak_gflops_1t``.
* GEMM 1024^3 fp32, 1 and 2 threads, vs ``torch.matmul`` with the same
  ``torch.set_num_threads``: ``gemm_ratio_1t`` / ``gemm_ratio_2t`` are our
  GFLOP/s over torch's; ``gemm_pct_peak_1t`` is ours at 1 thread as a
  percent of the FMA peak.
* fused ``relu(a * b + c)`` on 16M floats vs torch eager (three ops) and numpy:
  ``elementwise_speedup_vs_torch`` (torch time / ours) and ``elementwise_gbps``
  (ours, counting 3 reads + 1 write).  Our runtime recycles an output buffer
  the caller has dropped, while torch eager allocates (and page-faults) its
  temporaries each call; ``details.elementwise.speedup_vs_torch_preallocated``
  compares against torch writing into preallocated ``out=`` tensors instead
  (kernels only).
* softmax and layernorm over 4096 x 1024 rows: ``softmax_ratio``,
  ``layernorm_ratio`` (torch time / ours).

The machine is shared and noisy: each measurement alternates the two sides
and reports the median of the repeats.  Compilation (and the kernel cache)
is outside the timed region.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import torch

from costs.timing import interleaved
from lower.llvm.jit import PLACEHOLDER, cfunc, load_function
from lower.target import parse_target
from rewrite.ir.builder import GraphBuilder
from rewrite.pipeline import compile


def alternate(a: Callable[[], object], b: Callable[[], object], repeats: int, warmup: int = 2) -> tuple[float, float]:
    """Median times of ``a`` and ``b``, interleaved (``costs.timing``)."""
    ta, tb = interleaved([a, b], repeats, warmup).timings
    return ta.median, tb.median


FMA_CHAINS = 12  # independent accumulators: > 2 FMA ports x 4 cycles latency, fewer than the 16/32 registers


def fma_peak_ir(width: int, chains: int = FMA_CHAINS) -> str:
    """A kernel ``f(out, lo, hi)`` running ``hi - lo`` iterations of ``chains`` independent ``<width x float>``
    FMA chains (the results stored to ``out`` so nothing is dead)."""
    VF = f"<{width} x float>"
    half = "<" + ", ".join(["float 5.000000e-01"] * width) + ">"  # a = a/2 + 1/2: stays finite and normal
    L = [
        f"declare {VF} @llvm.fma.v{width}f32({VF}, {VF}, {VF})",
        f"define void @{PLACEHOLDER}(ptr %out, i64 %lo, i64 %hi) {{",
        "entry:",
        "  %any = icmp slt i64 %lo, %hi",
        "  br i1 %any, label %loop, label %done",
        "loop:",
        "  %i = phi i64 [ %lo, %entry ], [ %i1, %loop ]",
    ]
    for c in range(chains):
        L.append(f"  %a{c} = phi {VF} [ zeroinitializer, %entry ], [ %n{c}, %loop ]")
    for c in range(chains):
        L.append(f"  %n{c} = call {VF} @llvm.fma.v{width}f32({VF} %a{c}, {VF} {half}, {VF} {half})")
    L += ["  %i1 = add i64 %i, 1", "  %more = icmp slt i64 %i1, %hi", "  br i1 %more, label %loop, label %done"]
    L.append("done:")
    for c in range(chains):
        L.append(f"  %r{c} = phi {VF} [ zeroinitializer, %entry ], [ %n{c}, %loop ]")
    acc = "%r0"
    for c in range(1, chains):
        L.append(f"  %s{c} = fadd {VF} {acc}, %r{c}")
        acc = f"%s{c}"
    L += [f"  store {VF} {acc}, ptr %out, align 4", "  ret void", "}"]
    return "\n".join(L) + "\n"


def fma_peak(repeats: int, iters: int = 1 << 22) -> dict:
    """This CPU's single-thread FMA peak (GFLOP/s), measured: ``FMA_CHAINS`` independent FMA chains of the
    target's vector width, the best of ``repeats`` timed runs of ``iters`` iterations (the best, not the
    median: a peak is what the core can do when nothing else runs on it)."""
    t = parse_target("llvm", threads=1)
    w = t.vector_width
    _, addr = load_function(fma_peak_ir(w), t, "fma_peak")
    fn = cfunc(addr)
    out = torch.zeros(w)
    ptr = out.data_ptr()
    fn(ptr, 0, 1 << 16)  # warm up (clock, page)
    best = math.inf
    for _ in range(max(3, repeats)):
        t0 = time.perf_counter()
        fn(ptr, 0, iters)
        best = min(best, time.perf_counter() - t0)
    return {"gflops": 2.0 * w * FMA_CHAINS * iters / best / 1e9, "vector_width": w, "chains": FMA_CHAINS}


def bench_gemm(n: int, threads: int, repeats: int) -> dict:
    b = GraphBuilder("gemm")
    g = b.build([b.matmul(b.input("a", (n, n)), b.input("b", (n, n)))])
    cg = compile(g, threads=threads)
    gen = torch.Generator().manual_seed(0)
    A, B = torch.randn(n, n, generator=gen), torch.randn(n, n, generator=gen)
    inputs = [A, B]
    ref = torch.matmul(A, B)
    err = ((cg(inputs)[0] - ref).abs().max() / ref.abs().max()).item()
    prev = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        ours, theirs = alternate(lambda: cg(inputs), lambda: torch.matmul(A, B), repeats)
    finally:
        torch.set_num_threads(prev)
    flops = 2.0 * n**3
    return {
        "ours_gflops": flops / ours / 1e9,
        "torch_gflops": flops / theirs / 1e9,
        "ratio": theirs / ours,
        "rel_err": err,
    }


def bench_elementwise(n: int, threads: int, repeats: int) -> dict:
    b = GraphBuilder("ew")
    x, y, z = (b.input(k, (n,)) for k in "abc")
    g = b.build([b.relu(b.add(b.mul(x, y), z))])
    cg = compile(g, threads=threads)
    gen = torch.Generator().manual_seed(1)
    a, bb, c = (torch.randn(n, generator=gen) for _ in range(3))
    inputs = [a, bb, c]
    assert torch.allclose(cg(inputs)[0], torch.relu(a * bb + c), rtol=1e-6, atol=1e-6)  # FMA contraction
    na, nb, nc = a.numpy(), bb.numpy(), c.numpy()
    prev = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        ours, eager = alternate(lambda: cg(inputs), lambda: torch.relu(a * bb + c), repeats)
        ours2, npy = alternate(lambda: cg(inputs), lambda: np.maximum(na * nb + nc, 0.0), max(3, repeats // 2))
        t1, t2 = torch.empty(n), torch.empty(n)

        def eager_out() -> None:  # kernels only: no allocation, like ours when outputs are recycled
            torch.mul(a, bb, out=t1)
            torch.add(t1, c, out=t2)
            torch.relu_(t2)

        ours3, eager_pre = alternate(lambda: cg(inputs), eager_out, max(3, repeats // 2))
    finally:
        torch.set_num_threads(prev)
    ours = statistics.median([ours, ours2, ours3])
    moved = 4.0 * 4 * n  # three inputs read, one output written
    return {
        "ours_gbps": moved / ours / 1e9,
        "torch_eager_gbps": moved / eager / 1e9,
        "torch_preallocated_gbps": moved / eager_pre / 1e9,
        "numpy_gbps": moved / npy / 1e9,
        "speedup_vs_torch": eager / ours,
        "speedup_vs_torch_preallocated": eager_pre / ours3,
        "speedup_vs_numpy": npy / ours,
    }


def bench_rows(op: str, rows: int, cols: int, threads: int, repeats: int) -> dict:
    b = GraphBuilder(op)
    x = b.input("x", (rows, cols))
    gen = torch.Generator().manual_seed(2)
    if op == "softmax":
        g = b.build([b.softmax(x, axis=-1)])
        w = bias = None
    else:
        w, bias = torch.randn(cols, generator=gen), torch.randn(cols, generator=gen)
        g = b.build([b.layernorm(x, b.weight("w", w), b.weight("b", bias))])
    cg = compile(g, threads=threads)
    t = torch.randn(rows, cols, generator=gen) * 3
    inputs = [t]
    if op == "softmax":
        ref_fn = lambda: torch.softmax(t, -1)
    else:
        ref_fn = lambda: torch.nn.functional.layer_norm(t, (cols,), w, bias, 1e-5)
    ref = ref_fn()
    err = ((cg(inputs)[0] - ref).abs().max() / ref.abs().max()).item()
    prev = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        ours, theirs = alternate(lambda: cg(inputs), ref_fn, repeats)
    finally:
        torch.set_num_threads(prev)
    return {"ours_ms": ours * 1e3, "torch_ms": theirs * 1e3, "ratio": theirs / ours, "rel_err": err}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    p.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (smoke test)")
    p.add_argument("--threads", type=int, default=2, help="threads for the multi-threaded rows (default 2)")
    args = p.parse_args(argv)
    q = args.quick
    n_gemm = 256 if q else 1024
    n_ew = 1 << (20 if q else 24)
    rows = 256 if q else 4096
    reps = 3 if q else 9
    res: dict = {"host": _host()}
    peak = fma_peak(reps)
    res["fma_peak"] = peak
    print(
        f"FMA peak {peak['gflops']:.1f} GFLOP/s (1 thread, measured: {peak['chains']} chains of "
        f"<{peak['vector_width']} x float> FMAs)",
        flush=True,
    )
    for t in (1, args.threads):
        r = bench_gemm(n_gemm, t, reps)
        res[f"gemm_{t}t"] = r
        print(
            f"gemm {n_gemm}^3 {t} thread(s): ours {r['ours_gflops']:.1f} GFLOP/s, torch {r['torch_gflops']:.1f} "
            f"GFLOP/s, ratio {r['ratio']:.2f}, ours {100 * r['ours_gflops'] / (t * peak['gflops']):.0f}% of "
            f"{t} x the FMA peak (rel err {r['rel_err']:.1e})",
            flush=True,
        )
    ew = bench_elementwise(n_ew, args.threads, reps)
    res["elementwise"] = ew
    print(
        f"relu(a*b+c) {n_ew} floats: ours {ew['ours_gbps']:.1f} GB/s, torch eager {ew['torch_eager_gbps']:.1f}, "
        f"torch eager into preallocated out= {ew['torch_preallocated_gbps']:.1f}, numpy {ew['numpy_gbps']:.1f}; "
        f"speedup vs torch {ew['speedup_vs_torch']:.2f}x (vs preallocated "
        f"{ew['speedup_vs_torch_preallocated']:.2f}x), vs numpy {ew['speedup_vs_numpy']:.2f}x",
        flush=True,
    )
    for op in ("softmax", "layernorm"):
        r = bench_rows(op, rows, 1024, args.threads, reps)
        res[op] = r
        print(
            f"{op} {rows}x1024: ours {r['ours_ms']:.2f} ms, torch {r['torch_ms']:.2f} ms, "
            f"ratio {r['ratio']:.2f} (rel err {r['rel_err']:.1e})",
            flush=True,
        )
    summary = {
        "gemm_ratio_1t": res["gemm_1t"]["ratio"],
        "gemm_ratio_2t": res[f"gemm_{args.threads}t"]["ratio"],
        "fma_peak_gflops_1t": peak["gflops"],
        "gemm_pct_peak_1t": 100 * res["gemm_1t"]["ours_gflops"] / peak["gflops"],
        "elementwise_speedup_vs_torch": ew["speedup_vs_torch"],
        "elementwise_gbps": ew["ours_gbps"],
        "softmax_ratio": res["softmax"]["ratio"],
        "layernorm_ratio": res["layernorm"]["ratio"],
    }
    out = {**summary, "details": res}
    print(json.dumps(summary, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


def _host() -> str:
    try:
        return parse_target("llvm").cpu
    except Exception:  # pragma: no cover
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
