"""Kernel benchmarks: our compiled kernels against torch (and numpy), as ratios measured in one process.

    python -m bench.kernels [--json OUT] [--quick]
    python -m bench.kernels --target cuda [--json OUT] [--quick]      # or: eqsat bench kernels --target cuda

* this CPU's single-thread FMA peak, measured by a JIT-compiled loop of
  independent ``<W x float>`` FMA chains (W = the target's vector width):
  ``fma_peak_gflops_1t``.
* GEMM 1024^3 fp32, 1 and 2 threads, vs ``torch.matmul`` with the same
  ``torch.set_num_threads``: ``gemm_ratio_1t`` / ``gemm_ratio_2t`` are our
  GFLOP/s over torch's; ``gemm_pct_peak_1t`` is ours at 1 thread as a
  percent of the FMA peak.
* int8 GEMM 1024^3 (``matmul_integer``: uint8 A less a zero point, int8 B, int32 sums), 1 and 2 threads,
  against this CPU's single-thread dot-product peak (``vnni_peak_gops_1t``: independent chains of AVX-512
  VNNI ``vpdpbusd``, 64 multiply-adds each; absent without VNNI), where the GEMM runs on AMX tiles against
  the AMX peak instead (``amx_peak_gops_1t``: independent chains of ``tdpbusd``, 16 384 each;
  ``igemm_peak`` names the one used), and onnxruntime's MatMulInteger in the
  same process: ``igemm_pct_peak_1t`` (ours at 1 thread, percent of the peak), ``igemm_ratio_ort_1t`` /
  ``_2t`` (onnxruntime time / ours).  Operations count a multiply and an add each (2 n^3).
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

``--target cuda`` (a CUDA device and torch built with CUDA), CUDA-event medians interleaved
(``bench.gpu_timing``):

* GEMM M = N = K in 1024, 2048, 4096: our TF32 tensor-core tiles (the default) against
  ``torch.matmul`` with ``allow_tf32`` (cuBLAS TF32), and the exact FP32 pair
  (``EQSAT_CUDA_EXACT_FP32=1`` against ``allow_tf32 = False``): TFLOP/s and
  ``ratio_vs_cublas`` (cuBLAS time / ours: 1 is cuBLAS's speed); and in bfloat16 and float16 (operands of
  that type, FP32 accumulation and a float32 result: our ``mma.sync.m16n8k16`` tiles) against ``torch.matmul``
  on the same operands (cuBLAS, its result in their type);
* a chain of 8 elementwise ops on 2^26 floats, one fused kernel in our lowering, against
  the device's copy bandwidth (a torch device-to-device copy of the same tensor) in GB/s
  and percent, and against the 8 ops in torch eager.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from bench.gpu_timing import (
    Timer,
    back_to_back_ms,
    cuda_event_ms,
    cuda_missing,
    interleaved_ms,
    torch_tf32,
)
from costs.timing import SETTLE_S, interleaved
from lower.llvm.igemm import amx_tile_config, has_amx, has_vnni
from lower.llvm.jit import PLACEHOLDER, cfunc, load_function
from lower.target import parse_target
from rewrite import config
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import Graph
from rewrite.pipeline import compile
from rewrite.verification.numeric import max_normwise_rel_err, normwise_rel_err


def alternate(
    a: Callable[[], object], b: Callable[[], object], repeats: int, warmup: int = 2, threads: int = 1
) -> tuple[float, float]:
    """Median times of ``a`` and ``b``, interleaved (``costs.timing``); on several threads each call is
    followed by the settle (torch's OpenMP workers spin after its kernels)."""
    settle = SETTLE_S if threads > 1 else 0.0
    ta, tb = interleaved([a, b], repeats, warmup, settle_s=settle).timings
    return ta.median, tb.median


FMA_CHAINS = 12  # independent accumulators: > 2 FMA ports x 4 cycles latency, fewer than the 16/32 registers


def peak_ir(vtype: str, decl: str, step: str, combine: str, chains: int = FMA_CHAINS) -> str:
    """A kernel ``f(out, lo, hi)`` running ``hi - lo`` iterations of ``chains`` independent chains of
    ``step`` (``{a}`` the chain's value) on ``vtype`` vectors, combined with ``combine`` and stored to ``out``
    so nothing is dead."""
    L = [
        decl,
        f"define void @{PLACEHOLDER}(ptr %out, i64 %lo, i64 %hi) {{",
        "entry:",
        "  %any = icmp slt i64 %lo, %hi",
        "  br i1 %any, label %loop, label %done",
        "loop:",
        "  %i = phi i64 [ %lo, %entry ], [ %i1, %loop ]",
    ]
    L += [f"  %a{c} = phi {vtype} [ zeroinitializer, %entry ], [ %n{c}, %loop ]" for c in range(chains)]
    L += [f"  %n{c} = {step.format(a=f'%a{c}')}" for c in range(chains)]
    L += ["  %i1 = add i64 %i, 1", "  %more = icmp slt i64 %i1, %hi", "  br i1 %more, label %loop, label %done"]
    L.append("done:")
    L += [f"  %r{c} = phi {vtype} [ zeroinitializer, %entry ], [ %n{c}, %loop ]" for c in range(chains)]
    acc = "%r0"
    for c in range(1, chains):
        L.append(f"  %s{c} = {combine} {vtype} {acc}, %r{c}")
        acc = f"%s{c}"
    L += [f"  store {vtype} {acc}, ptr %out, align 4", "  ret void", "}"]
    return "\n".join(L) + "\n"


def fma_peak_ir(width: int, chains: int = FMA_CHAINS) -> str:
    """``chains`` independent ``<width x float>`` FMA chains (``peak_ir``)."""
    VF = f"<{width} x float>"
    half = "<" + ", ".join(["float 5.000000e-01"] * width) + ">"  # a = a/2 + 1/2: stays finite and normal
    fma = f"llvm.fma.v{width}f32"
    return peak_ir(
        VF, f"declare {VF} @{fma}({VF}, {VF}, {VF})", f"call {VF} @{fma}({VF} {{a}}, {VF} {half}, {VF} {half})",
        "fadd", chains,
    )  # fmt: skip


def vnni_peak_ir(chains: int = FMA_CHAINS) -> str:
    """``chains`` independent ``<16 x i32>`` ``vpdpbusd`` chains (each lane: four byte products added)."""
    V = "<16 x i32>"
    ones = "<" + ", ".join(["i32 16843009"] * 16) + ">"  # four bytes of 1 per lane
    dp = "llvm.x86.avx512.vpdpbusd.512"
    return peak_ir(
        V, f"declare {V} @{dp}({V}, {V}, {V})", f"call {V} @{dp}({V} {{a}}, {V} {ones}, {V} {ones})", "add", chains
    )


AMX_CHAINS = 4  # C tiles accumulated independently (tiles 0-3), from A tile 4 and B tiles 5 and 6


def amx_peak_ir(chains: int = AMX_CHAINS) -> str:
    """``f(out, lo, hi)``: ``hi - lo`` iterations of ``chains`` independent AMX ``tdpbusd`` (16 x 16 int32 += 16 x 64
    uint8 by 64 x 16 int8: 16 384 multiply-adds each) on tiles loaded once from ``out`` (zeros), then one C
    tile stored back so nothing is dead."""
    L = [
        "declare void @llvm.x86.ldtilecfg(ptr)",
        "declare void @llvm.x86.tilerelease()",
        "declare void @llvm.x86.tilezero(i8 immarg)",
        "declare void @llvm.x86.tileloadd64(i8 immarg, ptr, i64)",
        "declare void @llvm.x86.tilestored64(i8 immarg, ptr, i64)",
        "declare void @llvm.x86.tdpbusd(i8 immarg, i8 immarg, i8 immarg)",
        "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)",
        f"define void @{PLACEHOLDER}(ptr %out, i64 %lo, i64 %hi) {{",
        "entry:",
        *amx_tile_config(range(8)),
    ]
    L += [f"  call void @llvm.x86.tilezero(i8 {t})" for t in range(chains)]
    L += [f"  call void @llvm.x86.tileloadd64(i8 {t}, ptr %out, i64 64)" for t in (4, 5, 6)]
    L += ["  %any = icmp slt i64 %lo, %hi", "  br i1 %any, label %loop, label %done", "loop:"]
    L.append("  %i = phi i64 [ %lo, %entry ], [ %i1, %loop ]")
    L += [f"  call void @llvm.x86.tdpbusd(i8 {t}, i8 4, i8 {5 + t % 2})" for t in range(chains)]
    L += ["  %i1 = add i64 %i, 1", "  %more = icmp slt i64 %i1, %hi", "  br i1 %more, label %loop, label %done"]
    L += ["done:", "  call void @llvm.x86.tilestored64(i8 0, ptr %out, i64 64)", "  call void @llvm.x86.tilerelease()"]
    return "\n".join([*L, "  ret void", "}"]) + "\n"


def _best_run(ir: str, name: str, lanes: torch.Tensor, repeats: int, iters: int) -> float:
    """The best of ``repeats`` timed runs of ``iters`` iterations of a ``peak_ir`` kernel (a peak is what the
    core does when nothing else runs on it), after a warm-up (clock, page)."""
    _, addr = load_function(ir, parse_target("llvm", threads=1), name)
    fn = cfunc(addr)
    fn(lanes.data_ptr(), 0, 1 << 16)
    best = math.inf
    for _ in range(max(3, repeats)):
        t0 = time.perf_counter()
        fn(lanes.data_ptr(), 0, iters)
        best = min(best, time.perf_counter() - t0)
    return best


def vnni_peak(repeats: int, iters: int = 1 << 22) -> dict | None:
    """This CPU's single-thread int8 dot-product peak (GOP/s: a multiply and an add per byte pair), measured
    as ``fma_peak``; None when the CPU has no AVX-512 VNNI."""
    if not has_vnni(parse_target("llvm", threads=1)):
        return None
    best = _best_run(vnni_peak_ir(), "vnni_peak", torch.zeros(16, dtype=torch.int32), repeats, iters)
    return {"gops": 2.0 * 64 * FMA_CHAINS * iters / best / 1e9, "chains": FMA_CHAINS}


def amx_peak(repeats: int, iters: int = 1 << 18) -> dict | None:
    """This CPU's single-thread AMX int8 peak (GOP/s), measured as ``vnni_peak``; None without AMX int8 (or
    where this process was not granted the tiles)."""
    if not has_amx(parse_target("llvm", threads=1)):
        return None
    best = _best_run(amx_peak_ir(), "amx_peak", torch.zeros(256, dtype=torch.int32), repeats, iters)
    return {"gops": 2.0 * 16384 * AMX_CHAINS * iters / best / 1e9, "chains": AMX_CHAINS}


def bench_igemm(n: int, threads: int, repeats: int) -> dict:
    """``matmul_integer`` n^3 (B a constant: packed at compile time, as a quantized model's weights) against
    onnxruntime's MatMulInteger (its weights an initializer) on the same integers; results must be equal."""
    gen = torch.Generator().manual_seed(0)
    A = torch.randint(0, 256, (n, n), generator=gen).to(torch.uint8)
    B = torch.randint(-128, 128, (n, n), generator=gen).to(torch.int8)
    zp = 128
    b = GraphBuilder("igemm")
    g = b.build([b.op("matmul_integer", b.input("a", (n, n), "uint8"), b.weight("b", B), a_zero_point=zp)])
    cg = compile(g, threads=threads)
    ref = torch.matmul(A.long() - zp, B.long()).to(torch.int32)
    if not torch.equal(cg([A])[0], ref):
        raise AssertionError("int8 GEMM: our result differs from the exact one")
    out: dict[str, Any] = {}
    peer: Callable[[], object] | None = None
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper

        node = helper.make_node("MatMulInteger", ["a", "b", "zp"], ["y"])
        inits = [numpy_helper.from_array(B.numpy(), "b"), numpy_helper.from_array(np.array(zp, np.uint8), "zp")]
        graph = helper.make_graph(
            [node],
            "igemm",
            [helper.make_tensor_value_info("a", TensorProto.UINT8, [n, n])],
            [helper.make_tensor_value_info("y", TensorProto.INT32, [n, n])],
            inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        feed = {"a": A.numpy()}
        if not np.array_equal(sess.run(None, feed)[0], ref.numpy()):
            raise AssertionError("int8 GEMM: onnxruntime's result differs from the exact one")
        peer = functools.partial(sess.run, None, feed)
    except ImportError:
        out["onnxruntime"] = "not installed"
    ops = 2.0 * n**3
    if peer is None:
        ours = interleaved([lambda: cg([A])], repeats, threads=threads).timings[0].median
        out.update(ours_gops=ops / ours / 1e9)
        return out
    ours, theirs = alternate(lambda: cg([A]), peer, repeats, threads=threads)
    out.update(ours_gops=ops / ours / 1e9, ort_gops=ops / theirs / 1e9, ratio_ort=theirs / ours)
    return out


def fma_peak(repeats: int, iters: int = 1 << 22) -> dict:
    """This CPU's single-thread FMA peak (GFLOP/s), measured: ``FMA_CHAINS`` independent FMA chains of the
    target's vector width, the best of ``repeats`` timed runs of ``iters`` iterations."""
    w = parse_target("llvm", threads=1).vector_width
    best = _best_run(fma_peak_ir(w), "fma_peak", torch.zeros(w), repeats, iters)
    return {"gflops": 2.0 * w * FMA_CHAINS * iters / best / 1e9, "vector_width": w, "chains": FMA_CHAINS}


def bench_gemm(n: int, threads: int, repeats: int) -> dict:
    b = GraphBuilder("gemm")
    g = b.build([b.matmul(b.input("a", (n, n)), b.input("b", (n, n)))])
    cg = compile(g, threads=threads)
    gen = torch.Generator().manual_seed(0)
    A, B = torch.randn(n, n, generator=gen), torch.randn(n, n, generator=gen)
    inputs = [A, B]
    ref = torch.matmul(A, B)
    err = normwise_rel_err(cg(inputs)[0], ref)
    prev = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        ours, theirs = alternate(lambda: cg(inputs), lambda: torch.matmul(A, B), repeats, threads=threads)
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
        ours, eager = alternate(lambda: cg(inputs), lambda: torch.relu(a * bb + c), repeats, threads=threads)
        ours2, npy = alternate(
            lambda: cg(inputs), lambda: np.maximum(na * nb + nc, 0.0), max(3, repeats // 2), threads=threads
        )
        t1, t2 = torch.empty(n), torch.empty(n)

        def eager_out() -> None:  # kernels only: no allocation, like ours when outputs are recycled
            torch.mul(a, bb, out=t1)
            torch.add(t1, c, out=t2)
            torch.relu_(t2)

        ours3, eager_pre = alternate(lambda: cg(inputs), eager_out, max(3, repeats // 2), threads=threads)
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
    err = normwise_rel_err(cg(inputs)[0], ref)
    prev = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        ours, theirs = alternate(lambda: cg(inputs), ref_fn, repeats, threads=threads)
    finally:
        torch.set_num_threads(prev)
    return {"ours_ms": ours * 1e3, "torch_ms": theirs * 1e3, "ratio": theirs / ours, "rel_err": err}


# ------------------------------------------------------------------ the cuda target

DEVICE = "cuda"  # where the operands live (the tests' seam: "cpu")
CUDA_GEMM_SIZES = (1024, 2048, 4096)
LOOP_ROUNDS = 5  # GEMMs are also timed 30 calls back to back, this many blocks each (bench.gpu_timing.back_to_back_ms)
CHAIN_LOG2 = 26  # 2^26 floats: 256 MiB in, 256 MiB out, far past L2
# the fused chain: 8 elementwise ops, each (op, attrs, what torch computes); values stay finite and normal
CHAIN: tuple[tuple[str, dict[str, float], Callable[[torch.Tensor], torch.Tensor]], ...] = (
    ("smul", {"scalar": 1.5}, lambda x: x * 1.5),
    ("sigmoid", {}, torch.sigmoid),
    ("smul", {"scalar": 2.0}, lambda x: x * 2.0),
    ("tanh", {}, torch.tanh),
    ("abs", {}, torch.abs),
    ("sqrt", {}, torch.sqrt),
    ("neg", {}, torch.neg),
    ("exp", {}, torch.exp),
)


@contextlib.contextmanager
def exact_fp32(on: bool) -> Iterator[None]:
    """``EQSAT_CUDA_EXACT_FP32`` set while kernels are compiled (it picks the contraction tiles), restored after."""
    name, before = config.CUDA_EXACT_FP32.name, os.environ.get(config.CUDA_EXACT_FP32.name)
    os.environ[name] = "1" if on else "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def gemm_graph(n: int, dtype: str = "float32") -> Graph:
    """``a @ b`` on n x n inputs; of a half ``dtype``: the inputs in it, the product summed in float32."""
    b = GraphBuilder(f"gemm{n}")
    a, c = b.input("a", (n, n), dtype), b.input("b", (n, n), dtype)
    if dtype != "float32":
        a, c = b.cast(a, dtype="float32"), b.cast(c, dtype="float32")
    return b.build([b.matmul(a, c)])


HALF_GEMMS = ("bfloat16", "float16")
GEMM_PRECISIONS = ("tf32", "fp32", *HALF_GEMMS)


def chain_graph(n: int) -> Graph:
    b = GraphBuilder("chain")
    v = b.input("x", (n,))
    for op, attrs, _ in CHAIN:
        v = b.op(op, v, **attrs)
    return b.build([v])


def bench_gemm_cuda(n: int, precision: str, repeats: int, timer: Timer = cuda_event_ms) -> dict[str, Any]:
    """Ours against cuBLAS (``torch.matmul``) at one size in ``precision``: ``tf32`` or exact ``fp32`` on float32
    operands (both sides alike), or operands in a half type (``HALF_GEMMS``; ours sums into a float32 result,
    cuBLAS into one of their type)."""
    half = precision in HALF_GEMMS
    with exact_fp32(precision == "fp32"):
        cg = compile(gemm_graph(n, precision if half else "float32"), target="cuda")
    gen = torch.Generator(device=DEVICE).manual_seed(0)
    tdt = getattr(torch, precision) if half else torch.float32
    x, y = (torch.randn(n, n, device=DEVICE, generator=gen).to(tdt) for _ in range(2))
    with torch_tf32(False):
        ref = torch.matmul(x.float(), y.float())
    err = max_normwise_rel_err(cg([x, y]), [ref])
    contenders: list[Callable[[], object]] = [functools.partial(cg, [x, y]), functools.partial(torch.matmul, x, y)]
    with torch_tf32(precision == "tf32"):
        ours, cublas = interleaved_ms(contenders, repeats, timer=timer)
        ours_loop, cublas_loop = back_to_back_ms(contenders, LOOP_ROUNDS, timer=timer)
    flops = 2.0 * n**3
    tiles = [str(bk.schedule).splitlines()[0] for bk in cg.built if "tilegemm" in str(bk.schedule)]
    return {
        "n": n,
        "precision": precision,
        "tile": tiles[0] if tiles else None,
        "ours_ms": ours.median,
        "cublas_ms": cublas.median,
        "ours_tflops": flops / ours.median / 1e9,
        "cublas_tflops": flops / cublas.median / 1e9,
        "ratio_vs_cublas": cublas.median / ours.median,
        "ours_loop_ms": ours_loop.median,  # 30 calls back to back (no host gap, sustained clock)
        "cublas_loop_ms": cublas_loop.median,
        "ratio_vs_cublas_loop": cublas_loop.median / ours_loop.median,
        "max_rel_err": err,
    }


def bench_chain_cuda(log2n: int, repeats: int, timer: Timer = cuda_event_ms) -> dict[str, Any]:
    """The fused elementwise chain against the device-to-device copy bandwidth and torch eager."""
    n = 1 << log2n
    cg = compile(chain_graph(n), target="cuda")
    x = torch.rand(n, device=DEVICE, generator=torch.Generator(device=DEVICE).manual_seed(1)) * 2 - 1
    dst = torch.empty_like(x)

    def eager() -> torch.Tensor:
        v = x
        for _, _, f in CHAIN:
            v = f(v)
        return v

    err = max_normwise_rel_err(cg([x]), [eager()])
    ours, copy, torch_ms = interleaved_ms(
        [functools.partial(cg, [x]), functools.partial(dst.copy_, x), eager], repeats, timer=timer
    )
    moved = 2.0 * 4 * n  # one read, one write of n floats: the same traffic as the copy
    return {
        "n": n,
        "ops": len(CHAIN),
        "kernels": cg.kernels,
        "ours_ms": ours.median,
        "copy_ms": copy.median,
        "torch_eager_ms": torch_ms.median,
        "ours_gbps": moved / ours.median / 1e6,
        "copy_gbps": moved / copy.median / 1e6,
        "pct_of_copy": 100.0 * copy.median / ours.median,
        "speedup_vs_torch_eager": torch_ms.median / ours.median,
        "max_rel_err": err,
    }


def run_cuda(quick: bool = False, repeats: int | None = None, timer: Timer = cuda_event_ms) -> dict[str, Any]:
    """Every ``--target cuda`` kernel benchmark as one JSON-able record (the GPU target's key first)."""
    target = parse_target("cuda")
    reps = repeats or (5 if quick else 20)
    sizes = CUDA_GEMM_SIZES[:1] if quick else CUDA_GEMM_SIZES
    res: dict[str, Any] = {"target": target.cache_key, "gpu": target.name, "repeats": reps}
    gemm: dict[str, dict[str, Any]] = {}
    for precision in GEMM_PRECISIONS:
        for n in sizes:
            r = bench_gemm_cuda(n, precision, reps, timer)
            gemm[f"{precision}_{n}"] = r
            print(
                f"gemm {n}^3 {precision}: ours {r['ours_tflops']:.1f} TFLOP/s, cuBLAS {r['cublas_tflops']:.1f} "
                f"TFLOP/s, ours/cuBLAS {r['ratio_vs_cublas']:.2f} (back to back {r['ratio_vs_cublas_loop']:.2f}; "
                f"rel err {r['max_rel_err']:.1e}; {r['tile']})",
                flush=True,
            )
    res["gemm"] = gemm
    chain = bench_chain_cuda(20 if quick else CHAIN_LOG2, reps, timer)
    res["elementwise_chain"] = chain
    print(
        f"{chain['ops']} fused elementwise ops on {chain['n']} floats ({chain['kernels']} kernel(s)): ours "
        f"{chain['ours_gbps']:.0f} GB/s, {chain['pct_of_copy']:.0f}% of the copy's {chain['copy_gbps']:.0f} GB/s; "
        f"{chain['speedup_vs_torch_eager']:.2f}x torch eager (rel err {chain['max_rel_err']:.1e})",
        flush=True,
    )
    big = max(sizes)
    res["summary"] = {
        f"gemm{big}_tf32_ratio_vs_cublas": gemm[f"tf32_{big}"]["ratio_vs_cublas"],
        f"gemm{big}_tf32_ratio_vs_cublas_loop": gemm[f"tf32_{big}"]["ratio_vs_cublas_loop"],
        f"gemm{big}_fp32_ratio_vs_cublas": gemm[f"fp32_{big}"]["ratio_vs_cublas"],
        **{f"gemm{big}_{d}_ratio_vs_cublas": gemm[f"{d}_{big}"]["ratio_vs_cublas"] for d in HALF_GEMMS},
        "chain_pct_of_copy": chain["pct_of_copy"],
    }
    return res


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.kernels", description=__doc__.splitlines()[0])
    p.add_argument("--target", default="llvm", choices=("llvm", "cuda"), help="where our kernels run")
    p.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    p.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (smoke test)")
    p.add_argument("--threads", type=int, default=2, help="llvm: threads for the multi-threaded rows (default 2)")
    p.add_argument("--repeats", type=int, help="cuda: timed rounds per benchmark (default 20, --quick 5)")
    return p


def main(argv: list[str] | None = None, timer: Timer = cuda_event_ms) -> int:
    args = parser().parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        print(f"--repeats wants a positive integer, got {args.repeats}", file=sys.stderr)
        return 2
    if args.target == "cuda":
        if (missing := cuda_missing("bench kernels --target cuda")) is not None:
            print(missing, file=sys.stderr)
            return 2
        record = run_cuda(args.quick, args.repeats, timer)
        print(json.dumps(record["summary"], indent=2))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(record, f, indent=2)
        return 0
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
    vpeak, apeak = vnni_peak(reps), amx_peak(reps)
    res["vnni_peak"], res["amx_peak"] = vpeak, apeak
    if vpeak is not None:
        print(f"VNNI peak {vpeak['gops']:.0f} GOP/s (1 thread, measured: {vpeak['chains']} chains of vpdpbusd)")
    if apeak is not None:  # the int8 GEMM runs on AMX tiles here: its peak is the one that bounds it
        print(f"AMX peak {apeak['gops']:.0f} GOP/s (1 thread, measured: {apeak['chains']} chains of tdpbusd)")
    ipeak, iname = (apeak, "AMX") if apeak is not None else (vpeak, "VNNI")
    for t in (1, args.threads):
        r = bench_igemm(n_gemm, t, reps)
        res[f"igemm_{t}t"] = r
        pct = f", {100 * r['ours_gops'] / (t * ipeak['gops']):.0f}% of {t} x the {iname} peak" if ipeak else ""
        if apeak is not None and vpeak is not None:
            pct += f" ({100 * r['ours_gops'] / (t * vpeak['gops']):.0f}% of {t} x the VNNI peak)"
        ort = (
            f", onnxruntime MatMulInteger {r['ort_gops']:.0f} GOP/s, ratio {r['ratio_ort']:.2f}"
            if "ort_gops" in r
            else ""
        )
        print(f"int8 gemm {n_gemm}^3 {t} thread(s): ours {r['ours_gops']:.0f} GOP/s{pct}{ort}", flush=True)
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
        "vnni_peak_gops_1t": vpeak["gops"] if vpeak else None,
        "amx_peak_gops_1t": apeak["gops"] if apeak else None,
        "igemm_pct_peak_1t": 100 * res["igemm_1t"]["ours_gops"] / ipeak["gops"] if ipeak else None,
        "igemm_peak": iname if ipeak else None,
        "igemm_ratio_ort_1t": res["igemm_1t"].get("ratio_ort"),
        "igemm_ratio_ort_2t": res[f"igemm_{args.threads}t"].get("ratio_ort"),
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
