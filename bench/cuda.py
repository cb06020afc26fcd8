"""GPU benchmarks for the ``cuda`` target (needs a CUDA device and a CUDA build of torch).

    python -m bench.cuda [--out bench/results/cuda-<gpu>.json] [--models bert,resnet50] [--repeats 20]

* ``e2e``: every built-in model compiled for ``cuda`` (no rewriting), checked against torch and timed
  against torch eager on the same GPU; CUDA-event medians, the two sides alternated.
* ``kernels``: GEMM (M = N = K in 1024, 4096) through our kernels vs ``torch.matmul`` (cuBLAS), in
  TF32-off FP32, as GFLOP/s and the ratio ours / cuBLAS.

Results are written as JSON keyed by the GPU target (name, compute capability, driver, NVRTC).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

import torch

from bench.models import MODELS, load
from lower import compile_graph, parse_target
from rewrite.frontends import from_torch
from rewrite.ir.builder import GraphBuilder
from rewrite.progress import each


def _time_ms(fn: Callable[[], object], repeats: int) -> float:
    """Median of ``repeats`` CUDA-event timings of ``fn`` (after two warm-up calls)."""
    for _ in range(2):
        fn()
    times = []
    for _ in range(repeats):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def bench_e2e(models: list[str], repeats: int) -> dict[str, dict[str, float]]:
    out = {}
    for name in each(models, "bench cuda"):
        module, inputs = load(name)
        graph = from_torch(module, inputs)
        cg = compile_graph(graph, "cuda")
        feed = [t.cuda() for t in inputs]
        mod_gpu = module.cuda()
        with torch.no_grad():
            ref = mod_gpu(*feed)
            refs = [ref] if isinstance(ref, torch.Tensor) else list(ref)
            got = cg(feed)
            err = max(float((g - r).abs().max() / (r.abs().max() + 1e-12)) for g, r in zip(got, refs, strict=True))
            ours = _time_ms(functools.partial(cg, feed), repeats)
            eager = _time_ms(functools.partial(mod_gpu, *feed), repeats)
        out[name] = {"ours_ms": ours, "torch_eager_ms": eager, "speedup_vs_eager": eager / ours, "max_rel_err": err}
        print(f"{name:12s} ours {ours:8.3f} ms  eager {eager:8.3f} ms  x{eager / ours:5.2f}  err {err:.1e}", flush=True)
    return out


def bench_gemm(sizes: list[int], repeats: int) -> dict[str, dict[str, float]]:
    torch.backends.cuda.matmul.allow_tf32 = False
    out = {}
    for n in sizes:
        b = GraphBuilder(f"gemm{n}")
        g = b.build([b.matmul(b.input("a", (n, n)), b.input("b", (n, n)))])
        cg = compile_graph(g, "cuda")
        x, y = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
        ours = _time_ms(functools.partial(cg, [x, y]), repeats)
        cublas = _time_ms(functools.partial(torch.matmul, x, y), repeats)
        flops = 2.0 * n**3
        out[str(n)] = {
            "ours_gflops": flops / ours / 1e6,
            "cublas_gflops": flops / cublas / 1e6,
            "ratio_vs_cublas": cublas / ours,
        }
        print(f"gemm {n}: ours {flops / ours / 1e6:9.1f} GFLOP/s  cuBLAS {flops / cublas / 1e6:9.1f}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.cuda", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="JSON file (default bench/results/cuda-<gpu>.json)")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated built-in models")
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench.cuda: no CUDA device visible to torch", file=sys.stderr)
        return 2
    target = parse_target("cuda")
    result = {
        "target": target.cache_key,
        "e2e": bench_e2e([m for m in args.models.split(",") if m], args.repeats),
        "kernels": {"gemm": bench_gemm([1024, 4096], args.repeats)},
    }
    out = args.out or Path("bench/results") / f"{target.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
