"""float16 / bfloat16 on the cuda target: 16-bit buffers widened to float32 registers and rounded as torch
rounds, the half tensor-core tiles; emulated on the CPU, PTX through ptxas, and on a device where one is present."""

from __future__ import annotations

import ctypes
import re

import pytest
import torch

from lower import compile_graph
from lower.cuda import graph_kernels, kernel_module, nvrtc
from lower.ir import (
    BF16,
    F16,
    I64,
    Allocate,
    Buffer,
    FloatImm,
    IntImm,
    Kernel,
    Stage,
    Store,
    Var,
    emax,
    loops,
    seq,
)
from lower.schedule import BlockRows, Schedule, ScheduleError, TileGemm
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.dtypes import HALF, TORCH_DTYPE
from rewrite.ir.errors import CodegenError
from rewrite.ir.graph import Graph
from rewrite.verification.numeric import normwise_rel_err
from tests.lower.cuda_testutil import (
    LOAD16,
    LOOP_HALF,
    STORE16,
    TARGET,
    emulate,
    emulated_backend,
    gpu,
    needs_gpu,
    needs_gxx,
    needs_ptx,
)
from tests.tiers import rotated

# ------------------------------------------------------------ float16 / bfloat16: 16-bit buffers, f32 registers
# torch's .to(float16 / bfloat16) of these: ties both ways, overflow (65520 -> inf in float16, 3.39e38 -> inf in
# bfloat16), subnormals of both, infinities and NaN
EDGES = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 65504.0, 65519.0, 65520.0, 1e5, -3.4e38]
EDGES += [6e-8, 2.9e-8, 3e-8, 1e-40, -1e-40, 1e-45, 2.0**-126, 2.0**-133, 0.1, 1 / 3, 3.3895313892515355e38, 3.39e38]
EDGES += [1.0009765625, 1.00048828125, 1.000732421875, 1.00390625, 1.001953125, 1.005859375]


def _edge_values() -> torch.Tensor:
    """The edges, 2048 random bit patterns (NaNs, infinities, subnormals) and 500 normal values of all scales."""
    gen = torch.Generator().manual_seed(1)
    bits = torch.randint(-(2**31), 2**31 - 1, (2048,), generator=gen, dtype=torch.int64).to(torch.int32)
    return torch.cat([torch.tensor(EDGES), bits.view(torch.float32), torch.randn(500, generator=gen) * 1000])


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal 16-bit patterns, or both NaN (the payload is the hardware's: cvt.rn.f16.f32 makes every NaN 0x7fff)."""
    nan = torch.isnan(a.float()) & torch.isnan(b.float())
    return bool(((a.view(torch.int16) == b.view(torch.int16)) | nan).all())


def _rounding_graph(half: str, n: int) -> Graph:
    """float32 -> half -> float32, and a half value moved by a layout op and read by float ops."""
    b = GraphBuilder("round")
    h = b.cast(b.input("x", (n,)), dtype=half)
    y = b.input("y", (4, 37), half)
    mid = b.cast(b.cast(b.op("exp", b.op("relu", b.cast(y, dtype="float32"))), dtype=half), dtype="float32")
    return b.build([h, b.cast(h, dtype="float32"), b.op("transpose", y, perm=(1, 0)), b.cast(mid, dtype=half)])


def _half_kernels(half: str, precision: str = "tf32") -> tuple[Kernel, Kernel]:
    """A GEMM reading half operands (70 x 40 @ 40 x 130: partial tiles at both edges) with a half output stored by
    its fused epilogue, tiled in ``precision``, and a row kernel (one block per row) reading a half row, writing it
    doubled and summing it."""
    t = LOOP_HALF[half]
    i, j, kk, i2, j2, i3, j3 = (Var(n) for n in ("i", "j", "k", "i2", "j2", "i3", "j3"))
    a, b, c, o = Buffer("a", (70, 40), t), Buffer("b", (40, 130), t), Buffer("c", (70, 130)), Buffer("o", (70, 130), t)
    gemm = Kernel(
        "hmm",
        [c, o, a, b],
        seq(
            Stage("mm.init", loops([(i2, 70), (j2, 130)], Store(c, (i2, j2), FloatImm(0.0)))),
            Stage("mm", loops([(i, 70), (j, 130), (kk, 40)], Store(c, (i, j), c[i, j] + a[i, kk] * b[kk, j]))),
            Stage("mm.post", loops([(i3, 70), (j3, 130)], Store(o, (i3, j3), emax(c[i3, j3], 0.0)))),
        ),
    )
    x, y, s, acc = (
        Buffer("x", (4, 96), t),
        Buffer("y", (4, 96), t),
        Buffer("s", (4,)),
        Buffer("acc", (1,), scope="local"),
    )
    body = seq(
        Store(acc, (IntImm(0),), FloatImm(0.0)),
        loops([(j, 96)], seq(Store(y, (i, j), x[i, j] * 2.0), Store(acc, (IntImm(0),), acc[0] + x[i, j]))),
        Store(s, (i,), acc[0]),
    )
    rows = Kernel("hrows", [y, s, x], Stage("rows", loops([(i, 4)], Allocate(acc, body))))
    return (
        Schedule(gemm).apply(TileGemm("mm", "mm.init", ("mm.post",), precision=precision)).kernel,
        Schedule(rows).apply(BlockRows("i", 64)).kernel,
    )


@needs_ptx
@pytest.mark.parametrize("half", HALF)
def test_half_buffers_are_loaded_widened_and_stored_rounded_in_16_bits(half):
    """Half operands staged into a tensor-core tile (widened as they are read), a half output of its fused
    epilogue, a half row of a block-per-row kernel, and a graph's casts: 16-bit loads and stores, every
    conversion a helper, and the PTX assembles for sm_80 and sm_90 without spills."""
    t = LOOP_HALF[half]
    gemm, rows = _half_kernels(half)
    texts = [kernel_module(k, TARGET).text for k in (gemm, rows)]
    texts += [kernel_module(bk.kernel, TARGET).text for bk in graph_kernels(_rounding_graph(half, 64), TARGET)]
    widen, narrow = f"eqsat_{t}_to_f32(", f"eqsat_f32_to_{t}("
    assert "mma.sync" in texts[0] and f"val = {widen}b_a[" in texts[0] and "b_o[" in texts[0]
    assert "const unsigned short* __restrict__ b_a" in texts[0] and narrow in texts[0]
    assert "eqsat_block_add" in texts[1] and f"{widen}b_x[" in texts[1] and narrow in texts[1]
    # a half value moved as it is (the transpose) is copied as its 16 bits, not widened and rounded again
    assert any(re.search(r"b_\w+\[[^\]]+\] = b_\w+\[[^\]]+\];", x) and widen not in x for x in texts[2:])
    for arch in ("sm_80", "sm_90"):
        for text in texts:
            ptx = nvrtc.compile_ptx(text, arch)
            assert LOAD16.search(ptx) or STORE16.search(ptx)
            for fn, r in nvrtc.ptxas_report(ptx, arch).items():
                assert r["spill_stores"] == r["spill_loads"] == 0, (fn, r)
    if half == "float16":  # the device rounds with PTX's own conversion: to nearest even, overflow to inf
        assert "cvt.rn.f16.f32" in texts[0] and "cvt.f32.f16" in texts[0]


def test_half_values_are_refused_where_a_tile_would_change_their_meaning():
    """The wgmma tile copies float32 bits (a half operand would need widening on the way); a tile accumulates in
    float registers and a block sums its row in float, where the loop IR rounds a half accumulator at every step."""
    i, j, kk = Var("i"), Var("j"), Var("k")
    a, b = Buffer("a", (512, 64), F16), Buffer("b", (64, 512), F16)
    c = Buffer("c", (512, 512))
    mm = Kernel(
        "mm",
        [c, a, b],
        Stage("mm", loops([(i, 512), (j, 512), (kk, 64)], Store(c, (i, j), c[i, j] + a[i, kk] * b[kk, j]))),
    )
    with pytest.raises(ScheduleError, match=r"wgmma.*A \(a\) holds f16, not f32"):
        TileGemm("mm", None, (), 256, 128, 32, "tf32", 1).apply(mm)
    assert "gemm_tile" in str(TileGemm("mm").apply(mm))  # the mma.sync tile widens them as it stages them
    ch = Buffer("ch", (512, 512), BF16)
    half_c = Kernel(
        "mm",
        [ch, a, b],
        Stage("mm", loops([(i, 512), (j, 512), (kk, 64)], Store(ch, (i, j), ch[i, j] + a[i, kk] * b[kk, j]))),
    )
    with pytest.raises(ScheduleError, match="the output ch holds bf16, not f32"):
        TileGemm("mm").apply(half_c)
    x, acc = Buffer("x", (4, 64)), Buffer("acc", (1,), BF16, scope="local")
    row_sum = Kernel(
        "rows",
        [x],
        Stage("rows", loops([(i, 4)], Allocate(acc, loops([(j, 64)], Store(acc, (IntImm(0),), acc[0] + x[i, j]))))),
    )
    with pytest.raises(ScheduleError, match=r"acc \(bf16\) sums column loop j rounding every term"):
        BlockRows("i").apply(row_sum)
    xi, ai = Buffer("xi", (4, 64), I64), Buffer("ai", (1,), I64, scope="local")
    int_sum = Kernel(
        "rows",
        [xi],
        Stage("rows", loops([(i, 4)], Allocate(ai, loops([(j, 64)], Store(ai, (IntImm(0),), ai[0] + xi[i, j]))))),
    )
    with pytest.raises(ScheduleError, match=r"ai \(i64\) is reduced; a block reduces floats"):  # not in float partials
        BlockRows("i").apply(int_sum)
    row_max = Kernel(
        "rows",
        [x],
        Stage(
            "rows", loops([(i, 4)], Allocate(acc, loops([(j, 64)], Store(acc, (IntImm(0),), emax(acc[0], x[i, j])))))
        ),
    )
    assert "block_rows" in str(BlockRows("i").apply(row_max))  # a max rounds the same once or every step
    odd = Kernel("odd", [Buffer("q", (4,), "f64")], loops([(i, 4)], Store(Buffer("q", (4,), "f64"), (i,), 1.0)))
    with pytest.raises(CodegenError, match="buffer q holds f64; the cuda target stores f32, i64, bool, f16, bf16"):
        kernel_module(odd, TARGET)


@needs_gxx
@pytest.mark.parametrize("half", HALF)
def test_generated_cuda_rounds_half_values_as_torch(half, tmp_path, monkeypatch):
    """The generated CUDA C run on the CPU: float32 -> half as torch's ``.to(dtype)`` bit for bit (ties to even,
    overflow to inf, subnormals, NaN stays NaN), back exactly, a half value moved as its 16 bits.  bfloat16's
    rounding here is the device's own code; float16's is the emulation's ``_Float16`` standing in for
    ``cvt.rn.f16.f32`` (the same rounding, NaN payloads aside), so this checks what surrounds it."""
    emulate(monkeypatch, tmp_path)
    xs = _edge_values()
    graph = _rounding_graph(half, len(xs))
    y = torch.randn(4, 37, generator=torch.Generator().manual_seed(2)).to(TORCH_DTYPE[half])
    got = compile_graph(graph, TARGET)({"x": xs, "y": y})
    ref = graph.run({"x": xs, "y": y})
    want = xs.to(TORCH_DTYPE[half])
    assert got[0].dtype == want.dtype and _same_bits(got[0], want)
    assert torch.equal(torch.nan_to_num(got[1], 7.0), torch.nan_to_num(want.float(), 7.0))
    assert torch.equal(got[2], y.t())
    assert got[3].dtype == ref[3].dtype and torch.equal(got[3], ref[3])


@needs_gxx
@pytest.mark.parametrize("half, frags", rotated(HALF, ("tf32", "own")))  # fast tier: each type once, in turn
def test_generated_cuda_half_tile_and_rows_compute(half, frags, tmp_path):
    """``_half_kernels`` run on the CPU: half operands in TF32 tensor-core fragments, or (``own``) in their own
    type's m16n8k16 fragments, are exact (float16 has TF32's 10 mantissa bits, bfloat16 7), so the GEMM equals
    float32's up to summation order; the epilogue's half output is its float result rounded; the rows are doubled
    (exact) and summed."""
    dt = TORCH_DTYPE[half]
    g = torch.Generator().manual_seed(3)
    gemm, rows = _half_kernels(half, LOOP_HALF[half] if frags == "own" else "tf32")
    backend = emulated_backend(tmp_path)

    def run(kernel: Kernel, *tensors: torch.Tensor) -> None:
        args = (ctypes.c_void_p * len(tensors))(*(t.data_ptr() for t in tensors))
        backend.compile(kernel, TARGET, "k")(ctypes.cast(args, ctypes.c_void_p), 0, 0)

    a, b = torch.randn(70, 40, generator=g).to(dt), torch.randn(40, 130, generator=g).to(dt)
    c, o = torch.full((70, 130), float("nan")), torch.zeros(70, 130, dtype=dt)
    run(gemm, c, o, a, b)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-5, atol=1e-5)
    assert torch.equal(o, c.relu().to(dt))
    x = (torch.randn(4, 96, generator=g) * 100).to(dt)
    y, s = torch.zeros(4, 96, dtype=dt), torch.zeros(4)
    run(rows, y, s, x)
    assert torch.equal(y, x * 2)
    torch.testing.assert_close(s, x.float().sum(1), rtol=1e-5, atol=1e-4)


@pytest.mark.slow  # 13 s emulated, as the float32 one
@needs_gxx
@pytest.mark.parametrize("half", HALF)
def test_half_operands_take_their_own_tensor_cores_in_large_split_tiles(half, tmp_path, monkeypatch):
    """A GEMM of two half inputs takes the m16n8k16 tile of their type (128 x 128 x 32, partial at both edges,
    reduction split in 2); products of half values are exact, so it equals float32's up to summation order.
    An operand computed in float32 keeps TF32's tile: its values are no half type's."""
    import lower.schedule.gpu_recipes as recipes

    monkeypatch.setattr(recipes, "LARGE_TILE_MIN_BLOCKS", 1)
    monkeypatch.setenv("EQSAT_NO_CACHE", "1")
    emulate(monkeypatch, tmp_path)
    dt, g = TORCH_DTYPE[half], torch.Generator().manual_seed(5)
    b = GraphBuilder("bighalf")
    x, y, z = b.input("x", (130, 300), half), b.input("y", (130, 300), half), b.input("z", (300, 140), half)
    mm = b.matmul(b.cast(x, dtype="float32"), b.cast(z, dtype="float32"))
    w = b.cast(b.weight("w", torch.randn(300, 140, generator=g).to(dt)), dtype="float32")  # folded: float32
    graph = b.build([b.relu(mm), b.matmul(b.op("exp", b.cast(y, dtype="float32")), w)])
    cg = compile_graph(graph, TARGET)
    scheds = [str(bk.schedule) for bk in cg.built if "tilegemm" in str(bk.schedule)]
    assert any(f"128, 128, 32, '{LOOP_HALF[half]}', 2)" in x for x in scheds), scheds
    assert any("'tf32'" in x for x in scheds), scheds
    feed = {n.attrs["name"]: torch.randn(n.shapes[0], generator=g).to(dt) for n in graph.inputs}
    got, ref = cg(feed), graph.run(feed)
    torch.testing.assert_close(got[0], ref[0], rtol=1e-4, atol=1e-4)
    assert normwise_rel_err(got[1], ref[1]) < 5e-3  # TF32 products of float32 values


# ------------------------------------------------------------ on a device
@gpu
@needs_gpu
@pytest.mark.parametrize("half", HALF)
def test_half_rounding_on_the_device_matches_torch(half):
    """``_rounding_graph`` on the GPU: ``cvt.rn.f16.f32`` and bfloat16's integer rounding give torch's
    ``.to(dtype)`` bit for bit (a NaN is a NaN), half values move as their 16 bits."""
    dt = TORCH_DTYPE[half]
    xs = _edge_values()
    y = torch.randn(4, 37, generator=torch.Generator().manual_seed(2)).to(dt)
    graph = _rounding_graph(half, len(xs))
    got = [t.cpu() for t in compile_graph(graph, "cuda")({"x": xs, "y": y})]
    ref = graph.run({"x": xs, "y": y})
    want = xs.to(dt)
    assert got[0].dtype == dt and _same_bits(got[0], want)
    assert torch.equal(torch.nan_to_num(got[1], 7.0), torch.nan_to_num(want.float(), 7.0))
    assert torch.equal(got[2], y.t())
    rtol = {"float16": 1e-3, "bfloat16": 1.6e-2}[half]  # the device's expf may round a last bit the other way
    torch.testing.assert_close(got[3], ref[3], rtol=rtol, atol=0)


class _HalfBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1, self.ln, self.l2 = torch.nn.Linear(64, 128), torch.nn.LayerNorm(128), torch.nn.Linear(128, 96)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.l2(self.ln(torch.nn.functional.gelu(self.l1(x)))), dim=-1)


@gpu
@needs_gpu
@pytest.mark.parametrize("half", HALF)
def test_half_model_on_the_device_matches_torch_in_its_dtype(half):
    """``model.half()`` / ``model.bfloat16()`` (GEMM tiles, a layernorm, a softmax, every op's result rounded)
    on the GPU against torch in that dtype on the CPU, within the dtype's tolerance at the output's scale.  TF32
    loses nothing here: every operand is a half value (bfloat16 keeps 7 mantissa bits, float16 TF32's 10)."""
    import rewrite

    torch.manual_seed(0)
    dt = TORCH_DTYPE[half]
    m = _HalfBlock().eval().to(dt)
    x = torch.randn(8, 64).to(dt)
    graph = rewrite.from_torch(m, (x,))
    (got,) = compile_graph(graph, "cuda")({graph.inputs[0].attrs["name"]: x})
    with torch.no_grad():
        want = m(x)
    assert got.dtype == dt
    rtol = {"float16": 1e-3, "bfloat16": 1.6e-2}[half]  # torch.testing's own for the two dtypes
    torch.testing.assert_close(got.cpu(), want, rtol=rtol, atol=rtol * float(want.abs().max()))
