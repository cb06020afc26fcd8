"""CUDA backend without a GPU: generated CUDA C (snapshots), binding-step legality, numerics of the
generated code run on the CPU (compiled as C++ with a tiny CUDA prelude, every block and thread in
turn), NVRTC -> PTX -> ptxas for sm_80 and sm_90 with zero spills; ``gpu`` tests run on a device.

Regenerate snapshots (tests/lower/snapshots/*.cu) after an intended change with

    EQSAT_UPDATE_SNAPSHOTS=1 python -m pytest tests/lower/test_cuda_codegen.py
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
import torch

from lower import compile_graph
from lower.cuda import cuda_target, graph_kernels, graph_ptx, kernel_module, kernel_to_cuda, nvrtc
from lower.cuda import driver as cuda_driver
from lower.ir import (
    Allocate,
    Buffer,
    FloatImm,
    IntImm,
    Kernel,
    LoopKind,
    Stage,
    Store,
    Var,
    loops,
    seq,
)
from lower.llvm.codegen import kernel_to_llvm
from lower.schedule import BindBlocks, BindThreads, BlockRows, Schedule, ScheduleError, TileGemm
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.dtypes import HALF, TORCH_DTYPE
from rewrite.ir.errors import CodegenError
from rewrite.ir.target import KINDS
from rewrite.verification.numeric import normwise_rel_err
from tests.lower.cuda_testutil import LOAD16, STORE16, TARGET, emulated_backend, gpu, needs_gpu, needs_gxx, needs_ptx
from tests.tiers import rotated

SNAP = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("EQSAT_UPDATE_SNAPSHOTS") == "1"
TF32_TOL = 1e-2  # unit-normal inputs, reductions of <= 100 terms: TF32 products err ~2^-11 each


def _graphs() -> dict:
    out = {}
    b = GraphBuilder("ew")
    a, c, d = (b.input(n, (1000,)) for n in "acd")
    out["fused_elementwise"] = b.build([b.relu(b.add(b.mul(a, c), d))])
    b = GraphBuilder("softmax")
    out["softmax"] = b.build([b.softmax(b.input("x", (16, 100)), axis=-1)])
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
    b = GraphBuilder("bmm")
    x, y = b.input("x", (2, 70, 20)), b.input("y", (2, 20, 130))  # 2 x 2 x 3 tiles, partial at both edges
    out["bmm"] = b.build([b.matmul(x, y)])
    b = GraphBuilder("splitk")  # one 64 x 64 tile, 13 steps deep: the reduction is split in 3 (atomics)
    mm = b.matmul(b.input("x", (5, 200)), b.weight("w", torch.randn(200, 40, generator=g)))
    out["gemm_splitk"] = b.build([b.relu(b.add(mm, b.weight("bias", torch.randn(40, generator=g))))])
    b = GraphBuilder("depthwise")  # a grouped conv: batched GEMMs per group on a GPU (not the CPU's direct form)
    dw = b.conv2d(
        b.input("x", (1, 8, 10, 10)), b.weight("k", torch.randn(8, 1, 3, 3, generator=g)), padding=(1, 1), groups=8
    )
    out["depthwise_conv"] = b.build([b.relu(dw)])
    b = GraphBuilder("winograd")  # F(4x4, 3x3); 7 x 9 outputs: cropped tiles at both edges
    wino = b.op("winograd_input", b.input("x", (1, 3, 7, 9)), padding=(1, 1))
    wm = b.op("matmul", wino, b.op("winograd_weight", b.weight("k", torch.randn(5, 3, 3, 3, generator=g))))
    bias = b.weight("b", torch.randn(5, generator=g))
    out["winograd_conv"] = b.build([b.op("winograd_output_bias_act", wm, bias, out=(7, 9), act="relu")])
    b = GraphBuilder("ints")  # bool -> int64, int64 add and mul (position ids), back to float; float -> bool
    x = b.input("x", (50,))
    m = b.cast(b.gt(x, b.weight("zero", torch.zeros(1))), dtype="int64")
    ints = b.mul(b.add(m, b.weight("three", torch.full((1,), 3, dtype=torch.int64))), m)
    out["int_arith"] = b.build([b.cast(ints, dtype="float32"), b.cast(b.cast(x, dtype="bool"), dtype="float32")])
    return out


# graphs with a contraction, where TF32 differs from FP32 (Winograd only in FP32: TF32 is too coarse for its
# transforms, the reason the cuda target's default rules leave Winograd out)
CONTRACTIONS = ("gemm_bias_relu", "conv_maxpool", "bmm", "gemm_splitk", "depthwise_conv")


CASES = _graphs()


# ------------------------------------------------------------ snapshots
@pytest.mark.parametrize("name", ["fused_elementwise", "gemm_bias_relu", "softmax", "wgmma_gemm"])
def test_snapshot(name):
    """``wgmma_gemm``: the sm_90 tile (checked and unchecked copies, ragged K, a fused epilogue) as it ran on an
    H200 against torch; it cannot run without one, so a change to its text shows here first."""
    bk = graph_kernels(CASES[name] if name in CASES else _big_gemm(), TARGET)[-1]
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


def test_contraction_is_one_tiled_grid_with_init_and_epilogue_fused():
    bk = graph_kernels(CASES["gemm_bias_relu"], TARGET)[-1]
    mod = kernel_module(bk.kernel, TARGET)
    # bias init, the 33 x 24 x 40 update and the relu epilogue: one launch of one 64 x 64 tile
    assert [(ln.grid, ln.block) for ln in mod.launches] == [(1, 128)]
    assert [type(s).__name__ for s in bk.schedule.steps] == ["TileGemm"]
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in mod.text and "__syncthreads();" in mod.text
    bmm = kernel_module(graph_kernels(CASES["bmm"], TARGET)[-1].kernel, TARGET)
    assert [(ln.grid, ln.block) for ln in bmm.launches] == [(2 * 2 * 3, 128)]


def test_non_contraction_stages_are_grids_bound_to_blocks_and_threads():
    bk = graph_kernels(CASES["conv_maxpool"], TARGET)[-1]
    kinds = [str(s) for s in bk.schedule.steps if isinstance(s, (BindBlocks, BindThreads))]
    assert len(kinds) == 2 and [ln.block for ln in kernel_module(bk.kernel, TARGET).launches] == [36]


def _gemm_kernel() -> Kernel:
    i, j, kk, i2, j2 = Var("i"), Var("j"), Var("k"), Var("i2"), Var("j2")
    a, b, c = Buffer("a", (5, 3)), Buffer("b", (3, 7)), Buffer("c", (5, 7))
    return Kernel(
        "mm",
        [c, a, b],
        seq(
            Stage("mm.init", loops([(i2, 5), (j2, 7)], Store(c, (i2, j2), FloatImm(0.0)))),
            Stage("mm", loops([(i, 5), (j, 7), (kk, 3)], Store(c, (i, j), c[i, j] + a[i, kk] * b[kk, j]))),
        ),
    )


def test_tile_gemm_step_is_recorded_and_refuses_illegal_tiles():
    k = _gemm_kernel()
    s = Schedule(k).apply(TileGemm("mm", "mm.init"))
    assert str(s) == "tilegemm('mm', 'mm.init', (), 64, 64, 16, 'tf32', 1)"
    assert "gemm_tile(64, 64, 16, 0, 1)" in str(s.kernel) and "stage mm.init" not in str(s.kernel)
    assert Schedule(k).apply(s.steps[0]).kernel == s.kernel  # replayable
    with pytest.raises(ScheduleError, match="precision"):
        TileGemm("mm", precision="fp16").apply(k)
    with pytest.raises(ScheduleError, match="no top-level stage"):
        TileGemm("nope").apply(k)
    with pytest.raises(ScheduleError, match="perfect nest"):
        TileGemm("mm.init").apply(k)
    # an epilogue reading a neighbouring output element cannot be fused (another thread owns it)
    i, j = Var("ie"), Var("je")
    c = k.params[0]
    shift = Stage("mm.epi", loops([(i, 5), (j, 7)], Store(c, (i, j), c[i, j] + c[(i + 1) % 5, j])))
    k2 = Kernel(k.name, k.params, seq(k.body, shift))
    with pytest.raises(ScheduleError, match="cannot be computed by different threads"):
        TileGemm("mm", "mm.init", ("mm.epi",)).apply(k2)


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


def test_exact_fp32_contraction_runs_fma_tiles():
    exact = dataclasses.replace(TARGET, precision="fp32")
    bk = graph_kernels(CASES["gemm_bias_relu"], exact)[-1]
    text = kernel_to_cuda(bk.kernel, exact)
    assert "'fp32', 1)" in str(bk.schedule) and "fmaf(" in text and "mma.sync" not in text


def test_softmax_and_layernorm_run_one_block_per_row_with_shuffle_reductions():
    for name, rows, threads in (("softmax", 16, 128), ("layernorm", 8, 96)):
        bk = graph_kernels(CASES[name], TARGET)[-1]
        mod = kernel_module(bk.kernel, TARGET)
        assert [(ln.grid, ln.block) for ln in mod.launches] == [(rows, threads)]
        assert str(bk.schedule) == f"blockrows('i0', {threads})"
        assert "__shfl_xor_sync(0xffffffffu" in mod.text and f"+= {threads})" in mod.text


def _row_kernel(col_body) -> Kernel:
    i, j = Var("i"), Var("j")
    x, y, acc = Buffer("x", (4, 64)), Buffer("y", (4, 64)), Buffer("acc", (1,), scope="local")
    body = seq(Store(acc, (IntImm(0),), FloatImm(0.0)), loops([(j, 64)], col_body(i, j, x, y, acc)))
    return Kernel("rows", [y, x], Stage("rows", loops([(i, 4)], Allocate(acc, body))))


def test_block_rows_step_is_recorded_and_refuses_illegal_rows():
    ok = _row_kernel(lambda i, j, x, y, acc: seq(Store(y, (i, j), x[i, j]), Store(acc, (0,), acc[0] + x[i, j])))
    s = Schedule(ok).apply(BlockRows("i", 64))
    assert str(s) == "blockrows('i', 64)" and "block_rows(64)" in str(s.kernel) and "blocks for i" in str(s.kernel)
    assert Schedule(ok).apply(s.steps[0]).kernel == s.kernel  # replayable
    with pytest.raises(ScheduleError, match="multiple of 32"):
        BlockRows("i", 100).apply(ok)
    with pytest.raises(ScheduleError, match="outermost loop of a top-level stage"):
        BlockRows("j").apply(ok)
    with pytest.raises(ScheduleError, match="not a reduction"):  # a scalar overwritten by every column
        BlockRows("i").apply(_row_kernel(lambda i, j, x, y, acc: Store(acc, (0,), x[i, j])))
    with pytest.raises(ScheduleError, match="while reducing it"):  # a running (prefix) sum is no reduction
        BlockRows("i").apply(
            _row_kernel(lambda i, j, x, y, acc: seq(Store(acc, (0,), acc[0] + x[i, j]), Store(y, (i, j), acc[0])))
        )
    with pytest.raises(ScheduleError, match="cannot run concurrently"):  # columns read a neighbour's write
        BlockRows("i").apply(_row_kernel(lambda i, j, x, y, acc: Store(y, (i, j), y[i, (j + 1) % 64])))
    with pytest.raises(ScheduleError, match="cannot run concurrently"):  # every row writes row 0
        BlockRows("i").apply(_row_kernel(lambda i, j, x, y, acc: Store(y, (0, j), x[i, j])))


def test_loop_kinds_of_gpu_are_printed():
    assert LoopKind("blocks") is LoopKind.BLOCKS and LoopKind("threads") is LoopKind.THREADS


# ------------------------------------------------------------ numerics: the CUDA C run on the CPU
@needs_gxx
# every case, emulated on the CPU: in the fast tier each in one precision (in turn), in the slow tier both;
# Winograd's unrolled transforms, int_arith and conv_maxpool take g++ seconds (4-4.5 s each in the fast tier): slow
# tier only
@pytest.mark.parametrize(
    "name, precision", rotated(sorted(CASES), ("fp32", "tf32"), slow=("winograd_conv", "int_arith", "conv_maxpool"))
)
def test_generated_cuda_computes_the_graph(name, precision, tmp_path, monkeypatch):
    """Exact-FP32 tiles to 1e-4; TF32 tensor-core tiles (operands keep 10 mantissa bits) to 5e-3 — a
    wrong fragment layout or staging index is off by O(1)."""
    if precision == "tf32" and name not in CONTRACTIONS:
        pytest.skip("no contraction (the precision does not matter) or Winograd (FP32 only)")
    target = dataclasses.replace(TARGET, precision=precision)
    emulated = dataclasses.replace(KINDS["cuda"], host=lambda threads: target, backend=emulated_backend(tmp_path))
    monkeypatch.setitem(KINDS, "cuda", emulated)
    graph = CASES[name]
    cg = compile_graph(graph, target)
    g = torch.Generator().manual_seed(1)
    inputs = {n.attrs["name"]: torch.randn(n.shapes[0], generator=g) for n in graph.inputs}
    got, ref = cg(inputs), graph.run(inputs)
    tol = 1e-4 if precision == "fp32" else 5e-3
    for a, b in zip(got, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=tol, atol=tol)


@pytest.mark.slow  # 13 s emulated; the small tiles stay in the fast tier
@needs_gxx
def test_generated_cuda_large_tf32_tiles_split_and_edges(tmp_path, monkeypatch):
    """128 x 128 x 32 TF32 tiles (8 warps of 64 x 32), partial at both edges, reduction split in 2."""
    import lower.schedule.gpu_recipes as recipes

    monkeypatch.setattr(recipes, "LARGE_TILE_MIN_BLOCKS", 1)
    monkeypatch.setenv("EQSAT_NO_CACHE", "1")  # a schedule built with the constant as shipped is not reused
    emulated = dataclasses.replace(KINDS["cuda"], host=lambda threads: TARGET, backend=emulated_backend(tmp_path))
    monkeypatch.setitem(KINDS, "cuda", emulated)
    g = torch.Generator().manual_seed(4)
    b = GraphBuilder("big")
    mm = b.matmul(b.input("x", (130, 300)), b.weight("w", torch.randn(300, 140, generator=g)))
    graph = b.build([b.relu(mm)])
    cg = compile_graph(graph, TARGET)
    assert "128, 128, 32, 'tf32', 2)" in str(cg.built[0].schedule)
    x = torch.randn(130, 300, generator=g)
    torch.testing.assert_close(cg({"x": x})[0], graph.run({"x": x})[0], rtol=2e-2, atol=2e-2)


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
@pytest.mark.parametrize("dtype", ["float32", *HALF])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_kernel_of_every_model_assembles_without_spills(arch, dtype):
    """The CI criterion: PTX for every kernel of the eight built-in models passes ptxas, zero spills; in float32
    and as ``model.half()`` / ``model.bfloat16()`` (16-bit buffers, computed in float32)."""
    import rewrite
    from bench.models import MODELS, load
    from lower.cuda import _module_ptx

    dt, target = TORCH_DTYPE[dtype], cuda_target(arch)
    for model in MODELS:
        module, inputs = load(model)
        if dtype != "float32":
            module = module.to(dt)
            inputs = tuple(x.to(dt) if x.is_floating_point() else x for x in inputs)
        graph = rewrite.from_torch(module, inputs)
        # graph_ptx's kernels, each distinct one compiled once: a model's repeated blocks are one kernel under
        # several names (605 kernels of the float16 models are 228), and a name changes no register
        kernels = [bk.kernel for bk in graph_kernels(graph, target)]
        ptx = [_module_ptx(text, arch) for text in sorted({kernel_module(k, target, "k").text for k in kernels})]
        if dtype != "float32":  # the model's inputs and outputs are moved in 16 bits
            assert any(LOAD16.search(p) for p in ptx) and any(STORE16.search(p) for p in ptx), model
        for p in ptx:
            for fn, r in nvrtc.ptxas_report(p, arch).items():
                assert r["spill_stores"] == r["spill_loads"] == 0, (model, dtype, fn, r)


# ------------------------------------------------------------ on a device
@gpu
@needs_gpu
@pytest.mark.parametrize("precision", ["tf32", "fp32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_target_matches_graph_run(name, precision, monkeypatch):
    """TF32 tensor cores (the default) round operands to 10 mantissa bits: within TF32_TOL; exact FP32
    tiles (EQSAT_CUDA_EXACT_FP32=1) within 1e-4."""
    if precision == "tf32" and name == "winograd_conv":
        pytest.skip("Winograd runs in exact FP32 only (see CONTRACTIONS)")
    monkeypatch.setenv("EQSAT_CUDA_EXACT_FP32", "1" if precision == "fp32" else "0")
    tol = TF32_TOL if precision == "tf32" else 1e-4
    graph = CASES[name]
    cg = compile_graph(graph, "cuda")
    g = torch.Generator().manual_seed(1)
    inputs = {n.attrs["name"]: torch.randn(n.shapes[0], generator=g) for n in graph.inputs}  # host: copied
    got = cg(inputs)
    assert all(t.device.type == "cuda" for t in got)
    for a, b in zip(got, graph.run(inputs), strict=True):
        torch.testing.assert_close(a.cpu(), b, rtol=tol, atol=tol)


def test_runtime_replays_all_launches_at_once_keyed_by_patched_addresses(tmp_path, monkeypatch):
    """The seam a CUDA graph plugs into, without a GPU: the runtime hands the backend's ``sequence``
    every launch once, then per call patches inputs/outputs and replays them all under one key."""

    emu = emulated_backend(tmp_path)
    seen: list[tuple[int, ...]] = []

    def sequence(items):
        def replay(key):
            seen.append(key)
            for fn, args, *_ in items:
                fn(args, 0, 0)

        return replay

    backend = dataclasses.replace(emu, sequence=sequence)
    monkeypatch.setitem(KINDS, "cuda", dataclasses.replace(KINDS["cuda"], host=lambda threads: TARGET, backend=backend))
    graph = CASES["gemm_bias_relu"]
    cg = compile_graph(graph, TARGET)
    x = torch.randn(33, 40, generator=torch.Generator().manual_seed(2))
    (a,) = cg({"x": x})
    (b,) = cg({"x": x})
    torch.testing.assert_close(a, graph.run({"x": x})[0], rtol=5e-3, atol=5e-3)
    torch.testing.assert_close(a, b)
    assert len(seen) == 2 and x.data_ptr() in seen[0] and a.data_ptr() in seen[0]
    cg({"x": x.clone()})
    assert seen[2] != seen[0]  # a new input address: another key (another captured graph)


def test_cuda_graph_can_be_turned_off(monkeypatch):
    import lower.cuda as cuda_pkg

    monkeypatch.setenv("EQSAT_CUDA_GRAPH", "0")
    assert cuda_pkg.sequence([(object(), None)]) is None  # launched one by one; no driver touched


@gpu
@needs_gpu
def test_cuda_graph_replays_the_model(monkeypatch):
    monkeypatch.setenv("EQSAT_CUDA_GRAPH", "1")
    graph = CASES["conv_maxpool"]
    cg = compile_graph(graph, "cuda")
    x = torch.randn(1, 3, 9, 9, generator=torch.Generator().manual_seed(3)).cuda()
    ref = graph.run({"x": x.cpu()})[0]
    for _ in range(3):
        (got,) = cg({"x": x})
        torch.testing.assert_close(got.cpu(), ref, rtol=TF32_TOL, atol=TF32_TOL)
    assert cg._replay is not None and 1 <= cg._replay.captures <= 3


def test_gpu_cost_cache_key_names_the_gpu_its_capability_and_driver(monkeypatch):
    """Measured GPU costs are keyed per GPU: device name, compute capability, driver (and NVRTC)."""
    import lower.cuda as cuda_pkg

    def host(name: str, major: int, drv: int) -> str:
        info = cuda_driver.DeviceInfo(0, name, major, 0, drv, 132)
        monkeypatch.setattr(cuda_pkg.driver, "device_count", lambda: 1)
        monkeypatch.setattr(cuda_pkg.driver, "device_info", lambda ordinal=0: info)
        monkeypatch.setattr(cuda_pkg.nvrtc, "nvrtc_version", lambda: "13.0")
        return cuda_pkg.cuda_host(1).cache_key

    h100 = host("NVIDIA H100 80GB HBM3", 9, 13000)
    assert "nvidia-h100-80gb-hbm3" in h100 and "sm_90" in h100 and "13000" in h100
    assert len({h100, host("NVIDIA H200", 9, 13000), host("NVIDIA H100 80GB HBM3", 9, 12080)}) == 3
    assert host("NVIDIA A100-SXM4-40GB", 8, 13000) != h100


def test_default_rules_leave_winograd_to_the_llvm_target():
    """Winograd pays where its kernels are compiled for a CPU; eager PyTorch runs its reference einsums and
    TF32 tensor cores are too coarse for its transforms."""
    from rewrite.pipeline import default_rules

    assert {r.family for r in default_rules("llvm")} >= {"winograd", "algebra"}
    for target in ("cuda", "torch"):
        fams = {r.family for r in default_rules(target)}
        assert "winograd" not in fams and "algebra" in fams, target


# ------------------------------------------------------------ the sm_90 wgmma tile
def _big_gemm(m: int = 2100, n: int = 2044, k: int = 1000):
    """9 x 16 tiles of 256 x 128 (partial at both edges), a reduction that is not a multiple of 32."""
    b = GraphBuilder("wgmma")
    mm = b.matmul(b.input("x", (m, k)), b.input("y", (k, n)))
    return b.build([b.relu(b.add(mm, b.input("c", (n,))))])


@needs_ptx
def test_big_plain_contractions_take_the_wgmma_tile_on_sm_90_only():
    graph = _big_gemm()
    (hopper,) = graph_kernels(graph, cuda_target("sm_90"))
    assert "256, 128, 32, 'tf32', 1)" in str(hopper.schedule)
    text = kernel_module(hopper.kernel, cuda_target("sm_90")).text
    assert "wgmma.mma_async" in text and "cp.async.cg" in text
    (ampere,) = graph_kernels(graph, cuda_target("sm_80"))
    assert "256, 128" not in str(ampere.schedule)
    (ptx,) = graph_ptx(graph, "sm_90")
    assert ".target sm_90a" in ptx  # wgmma is arch-specific
    for fn, r in nvrtc.ptxas_report(ptx, "sm_90").items():
        assert r["spill_stores"] == r["spill_loads"] == 0 and r["wgmma_serialized"] == 0, (fn, r)


def test_wgmma_tile_refuses_operands_it_cannot_copy_in_rows(monkeypatch):
    (k,) = graph_kernels(_big_gemm(k=1001), cuda_target("sm_90"))  # rows of 1001 floats: not 16-byte copies
    assert "256, 128" not in str(k.schedule) and "128, 128, 32" in str(k.schedule)
    monkeypatch.setenv("EQSAT_NO_SCHEDULE", "1")
    (k,) = graph_kernels(_big_gemm(k=1001), cuda_target("sm_90"))
    with pytest.raises(ScheduleError, match="copies rows of its operands: A .* not in rows of 4"):
        TileGemm(k.gemm.stage, k.gemm.init_stage, tuple(k.gemm.post), 256, 128, 32, "tf32", 1).apply(k.kernel)
    with pytest.raises(ScheduleError, match="does not split"):
        TileGemm(k.gemm.stage, None, (), 256, 128, 32, "tf32", 2).apply(k.kernel)


@gpu
@needs_gpu
@pytest.mark.parametrize("misaligned", [False, True])
def test_wgmma_tile_matches_torch(misaligned, monkeypatch):
    """Big enough for the wgmma tile; ``misaligned``: an input 4 bytes off a 16-byte boundary (4-byte copies)."""
    monkeypatch.setenv("EQSAT_CUDA_EXACT_FP32", "0")
    graph = _big_gemm()
    cg = compile_graph(graph, "cuda")
    assert "256, 128, 32" in str(cg.built[0].schedule)
    g = torch.Generator(device="cuda").manual_seed(5)
    x = torch.randn(2100, 1000, device="cuda", generator=g)
    if misaligned:
        x = torch.empty(x.numel() + 1, device="cuda")[1:].view_as(x).copy_(x)
    y, c = torch.randn(1000, 2044, device="cuda", generator=g), torch.randn(2044, device="cuda", generator=g)
    ref = torch.relu(x.double() @ y.double() + c.double())
    (got,) = cg({"x": x, "y": y, "c": c})
    assert normwise_rel_err(got, ref) < 5e-3


@gpu
@needs_gpu
def test_wgmma_tile_matches_torch_on_a_batch_of_whole_tiles(monkeypatch):
    """3 x (1024 x 512 @ 512 x 1408): every block's tile inside C, so every block takes the unchecked copies
    from one address per operand and step, the batch index in both operands' offsets."""
    monkeypatch.setenv("EQSAT_CUDA_EXACT_FP32", "0")
    b = GraphBuilder("wgmma_batch")
    graph = b.build([b.matmul(b.input("x", (3, 1024, 512)), b.input("y", (3, 512, 1408)))])
    cg = compile_graph(graph, "cuda")
    assert "256, 128, 32" in str(cg.built[0].schedule)
    g = torch.Generator(device="cuda").manual_seed(6)
    x, y = torch.randn(3, 1024, 512, device="cuda", generator=g), torch.randn(3, 512, 1408, device="cuda", generator=g)
    ref = x.double() @ y.double()
    (got,) = cg({"x": x, "y": y})
    assert normwise_rel_err(got, ref) < 5e-3


@needs_ptx
@pytest.mark.parametrize(
    "op", ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "atan2", "power"]
)
def test_math_functions_compile_to_ptx(op):
    """The CUDA target spells each with CUDA's math functions (tanf, asinhf, atan2f, powf, ...): NVRTC compiles them."""
    from rewrite import compile_ptx

    b = GraphBuilder(op)
    ins = [b.input("x0", (4, 33))] + ([b.input("x1", (1, 33))] if op in ("atan2", "power") else [])
    ptx = compile_ptx(b.build([b.op(op, *ins)]), arch="sm_90")
    assert ptx and all(".target sm_90" in p for p in ptx)
