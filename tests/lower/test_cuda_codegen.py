"""CUDA backend without a GPU: generated CUDA C (snapshots), binding-step legality, numerics of the
generated code run on the CPU (compiled as C++ with a tiny CUDA prelude, every block and thread in
turn), NVRTC -> PTX -> ptxas for sm_80 and sm_90 with zero spills; ``gpu`` tests run on a device.

Regenerate snapshots (tests/lower/snapshots/*.cu) after an intended change with

    EQSAT_UPDATE_SNAPSHOTS=1 python -m pytest tests/lower/test_cuda_codegen.py
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from lower import compile_graph
from lower.backend import Backend
from lower.cuda import cuda_target, graph_kernels, graph_ptx, kernel_module, kernel_to_cuda, nvrtc
from lower.cuda import driver as cuda_driver
from lower.ir import Buffer, Kernel, LoopKind, Store, Var, loops, seq
from lower.llvm.codegen import kernel_to_llvm
from lower.schedule import BindBlocks, BindThreads, Schedule, ScheduleError
from lower.target import KINDS, TargetKind
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import CodegenError

SNAP = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("EQSAT_UPDATE_SNAPSHOTS") == "1"
HAS_PTX = nvrtc.available() and nvrtc.ptxas_path() is not None
needs_ptx = pytest.mark.skipif(not HAS_PTX, reason="needs NVRTC (the 'cuda' extra) and ptxas")
gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(cuda_driver.device_count() == 0, reason="needs a CUDA device")


def _graphs() -> dict:
    out = {}
    b = GraphBuilder("ew")
    a, c, d = (b.input(n, (1000,)) for n in "acd")
    out["fused_elementwise"] = b.build([b.relu(b.add(b.mul(a, c), d))])
    b = GraphBuilder("softmax")
    out["softmax"] = b.build([b.softmax(b.input("x", (64, 100)), axis=-1)])
    b = GraphBuilder("layernorm")
    w, bias = b.weight("w", torch.linspace(0.5, 1.5, 96)), b.weight("b", torch.linspace(-1, 1, 96))
    out["layernorm"] = b.build([b.layernorm(b.input("x", (8, 96)), w, bias)])
    b = GraphBuilder("gemm")
    g = torch.Generator().manual_seed(0)
    mm = b.matmul(b.input("x", (33, 40)), b.weight("w", torch.randn(40, 24, generator=g)))
    out["gemm_bias_relu"] = b.build([b.relu(b.add(mm, b.weight("bias", torch.randn(24, generator=g))))])
    b = GraphBuilder("conv")
    x = b.input("x", (1, 3, 9, 9))
    conv = b.conv2d(x, b.weight("k", torch.randn(4, 3, 3, 3, generator=g)), stride=(2, 2), padding=(1, 1))
    out["conv_maxpool"] = b.build([b.maxpool2d(b.relu(conv), kernel=(3, 3), stride=(2, 2), padding=(1, 1))])
    return out


CASES = _graphs()
TARGET = cuda_target("sm_90")


# ------------------------------------------------------------ snapshots
@pytest.mark.parametrize("name", ["fused_elementwise", "gemm_bias_relu", "softmax"])
def test_snapshot(name):
    bk = graph_kernels(CASES[name], TARGET)[-1]
    got = (
        kernel_to_cuda(bk.kernel, TARGET, name) + "\n// schedule\n// " + str(bk.schedule).replace("\n", "\n// ") + "\n"
    )
    path = SNAP / f"{name}.cu"
    if UPDATE or not path.exists():
        SNAP.mkdir(exist_ok=True)
        path.write_text(got)
        if not UPDATE:
            pytest.skip(f"wrote new snapshot {path.name}")
        return
    assert got == path.read_text(), f"{path.name} changed; if intended, regenerate with EQSAT_UPDATE_SNAPSHOTS=1"


def test_every_stage_is_one_grid_bound_to_blocks_and_threads():
    bk = graph_kernels(CASES["gemm_bias_relu"], TARGET)[-1]
    mod = kernel_module(bk.kernel, TARGET)
    # init (bias), update (k serial in each thread), relu epilogue: three launches, each over all 33 x 24 outputs
    assert [(ln.grid, ln.block) for ln in mod.launches] == [(4, 256), (7, 128), (4, 256)]
    kinds = [str(s) for s in bk.schedule.steps if isinstance(s, (BindBlocks, BindThreads))]
    assert len(kinds) == 6


# ------------------------------------------------------------ legality of the binding steps
def _copy_kernel() -> Kernel:
    i, j = Var("i"), Var("j")
    x, y = Buffer("x", (8, 16)), Buffer("y", (8, 16))
    return Kernel("copy", [x, y], loops([(i, 8), (j, 16)], Store(y, (i, j), x[i, j] * 2.0)))


def test_bind_steps_refuse_illegal_bindings():
    k = _copy_kernel()
    with pytest.raises(ScheduleError, match="outermost loop of a top-level stage"):
        BindBlocks("j").apply(k)
    with pytest.raises(ScheduleError, match="directly|whole body of a loop bound to blocks"):
        BindThreads("j").apply(k)
    s = Schedule(k).apply(BindBlocks("i")).apply(BindThreads("j"))
    assert "blocks for i" in str(s.kernel) and "threads for j" in str(s.kernel)
    with pytest.raises(ScheduleError, match="already blocks"):
        BindBlocks("i").apply(s.kernel)
    with pytest.raises(CodegenError, match="bound to GPU blocks"):
        kernel_to_llvm(s.kernel, cuda_target(), "copy")
    # a reduction: every iteration of i writes acc[0]
    i, acc, x = Var("i"), Buffer("acc", (1,)), Buffer("x", (64,))
    red = Kernel("sum", [x, acc], loops([(i, 64)], Store(acc, (0,), acc[0] + x[i])))
    with pytest.raises(ScheduleError, match="cannot run concurrently"):
        BindBlocks("i").apply(red)
    # a stencil reading what a neighbouring thread writes
    y = Buffer("y", (64,))
    sh = Kernel("shift", [y], seq(loops([(i, 63)], Store(y, (i,), y[i + 1]))))
    with pytest.raises(ScheduleError, match="cannot run concurrently"):
        BindBlocks("i").apply(sh)


def test_gemm_reduction_loop_stays_serial_in_each_thread():
    bk = graph_kernels(CASES["gemm_bias_relu"], TARGET)[-1]
    text = str(bk.kernel)
    assert text.count("blocks for") == 3 and text.count("threads for") == 3
    k_loops = [ln for ln in text.splitlines() if "for k" in ln]
    assert k_loops and all("threads" not in ln and "blocks" not in ln for ln in k_loops)


def test_loop_kinds_of_gpu_are_printed():
    assert LoopKind("blocks") is LoopKind.BLOCKS and LoopKind("threads") is LoopKind.THREADS


# ------------------------------------------------------------ numerics: the CUDA C run on the CPU
PRELUDE = r"""
#include <cmath>
#include <cstring>
struct eqsat_dim3 { unsigned x, y, z; };
static eqsat_dim3 blockIdx, threadIdx;
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(n)
static inline float __int_as_float(unsigned v) { float f; std::memcpy(&f, &v, 4); return f; }
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
"""


def _emulated_backend(tmp_path: Path) -> Backend:
    """The CUDA walker's output compiled by g++ and run block by block, thread by thread (no
    ``__syncthreads`` is ever generated, so running threads one after another is a valid schedule)."""
    keep = []

    def compile_(kernel, target, hint):
        mod = kernel_module(kernel, target)
        n = len(kernel.params)
        casts = ", ".join(f"(float*)a[{i}]" for i in range(n))
        runs = "\n".join(
            f"  for (unsigned b = 0; b < {ln.grid}u; ++b) for (unsigned t = 0; t < {ln.block}u; ++t) "
            f"{{ blockIdx.x = b; threadIdx.x = t; {ln.name}({casts}); }}"
            for ln in mod.launches
        )
        src = PRELUDE + mod.text + f'\nextern "C" void eqsat_run(void** a) {{\n{runs}\n}}\n'
        d = tmp_path / f"k{len(keep)}"
        d.mkdir()
        (d / "k.cpp").write_text(src)
        r = subprocess.run(
            ["g++", "-O1", "-shared", "-fPIC", "-o", str(d / "k.so"), str(d / "k.cpp")], capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr[:4000]
        lib = ctypes.CDLL(str(d / "k.so"))
        keep.append(lib)
        run = lib.eqsat_run
        run.argtypes = [ctypes.c_void_p]
        return lambda args, lo, hi: run(args)

    return Backend("cuda", compile_, lambda fn, args, extent, threads: lambda: fn(args, 0, 0), kernel_to_cuda)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_cuda_computes_the_graph(name, tmp_path, monkeypatch):
    monkeypatch.setitem(KINDS, "cuda", TargetKind("cuda", lambda threads: TARGET, _emulated_backend(tmp_path)))
    graph = CASES[name]
    cg = compile_graph(graph, TARGET)
    g = torch.Generator().manual_seed(1)
    inputs = {n.attrs["name"]: torch.randn(n.shapes[0], generator=g) for n in graph.inputs}
    got, ref = cg(inputs), graph.run(inputs)
    for a, b in zip(got, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------ PTX, no GPU
@needs_ptx
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptx_of_small_graphs_assembles_without_spills(arch):
    for name in ("gemm_bias_relu", "softmax", "conv_maxpool"):
        ptx = graph_ptx(CASES[name], arch)
        assert ptx and all(f".target {arch}" in p for p in ptx)
        for p in ptx:
            for fn, r in nvrtc.ptxas_report(p, arch).items():
                assert r["spill_stores"] == r["spill_loads"] == 0, (name, fn, r)
                assert 0 < r["registers"] <= 255


@needs_ptx
def test_nvrtc_errors_carry_the_log():
    with pytest.raises(CodegenError, match="NVRTC compile"):
        nvrtc.compile_ptx('extern "C" __global__ void f() { undefined_name; }', "sm_90")
    with pytest.raises(CodegenError, match="look like 'sm_90'"):
        nvrtc.compile_ptx("", "hopper")


@needs_ptx
@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_kernel_of_every_model_assembles_without_spills(arch):
    """The CI criterion: PTX for every kernel of the eight built-in models passes ptxas, zero spills."""
    import rewrite
    from bench.models import MODELS, load

    for model in MODELS:
        module, inputs = load(model)
        graph = rewrite.from_torch(module, inputs)
        for p in graph_ptx(graph, arch):
            for fn, r in nvrtc.ptxas_report(p, arch).items():
                assert r["spill_stores"] == r["spill_loads"] == 0, (model, fn, r)


# ------------------------------------------------------------ on a device
@gpu
@needs_gpu
@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_target_matches_graph_run(name):
    graph = CASES[name]
    cg = compile_graph(graph, "cuda")
    g = torch.Generator().manual_seed(1)
    inputs = {n.attrs["name"]: torch.randn(n.shapes[0], generator=g) for n in graph.inputs}  # host: copied
    got = cg(inputs)
    assert all(t.device.type == "cuda" for t in got)
    for a, b in zip(got, graph.run(inputs), strict=True):
        torch.testing.assert_close(a.cpu(), b, rtol=1e-4, atol=1e-4)
