"""The quantized GEMM (``matmul_integer``) and the stored integer dtypes on the CPU (issue 47).

Results are integers: the compiled kernels must equal the exact sums, bit for bit, on every shape the
packed form handles (rows and columns past a tile, K in several blocks, batch dimensions, zero points at
the ends of the byte) and on the plain loop's (a run-time B, K not a multiple of 4); the micro-kernel is
checked in each of its forms (AMX tiles and AVX-512 VNNI's ``vpdpbusd`` where this CPU has them, and the
portable one); on an AMX host the lowered kernels are checked for both tile heights (16 rows on AMX, 8 on a
target without it).
"""

from __future__ import annotations

import ctypes
import dataclasses
import math

import numpy as np
import pytest
import torch

from lower.ir import format_kernel
from lower.llvm.igemm import amx_conv_module, amx_mm_module, has_amx, has_vnni, igemm_module, igemm_symbol
from lower.llvm.jit import PLACEHOLDER, _jit, assembly, load_library
from lower.ops_to_loops.quantized import (
    AMX_MR,
    IGEMM_MR,
    IGEMM_NR,
    KC_GROUPS,
    amx_conv_name,
    amx_conv_pays,
    amx_int8,
    amx_mm_name,
    igemm_name,
    pack_weights,
)
from lower.target import parse_target
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import GraphError
from rewrite.pipeline import compile as compile_graph


def _exact(a: torch.Tensor, b: torch.Tensor, zp: int) -> torch.Tensor:
    return torch.matmul(a.long() - zp, b.long()).to(torch.int32)


def _targets() -> list:
    """This host's llvm target, and on an AMX host the same without AMX (the VNNI tile of 8 rows)."""
    host = parse_target("llvm", threads=2)
    if not has_amx(host):
        return [pytest.param(host, id="host")]
    plain = tuple("-" + f[1:] if f.startswith("+amx-") else f for f in host.features)
    return [pytest.param(host, id="amx"), pytest.param(dataclasses.replace(host, features=plain), id="no-amx")]


TARGETS = _targets()


def _gemm(a_shape, b_shape, zp, const_b=True, seed=0, target=None):
    gen = torch.Generator().manual_seed(seed)
    A = torch.randint(0, 256, a_shape, generator=gen).to(torch.uint8)
    B = torch.randint(-128, 128, b_shape, generator=gen).to(torch.int8)
    b = GraphBuilder("igemm")
    bv = b.weight("b", B) if const_b else b.input("b", b_shape, dtype="int8")
    g = b.build([b.op("matmul_integer", b.input("a", a_shape, dtype="uint8"), bv, a_zero_point=zp)])
    run = compile_graph(g, target or "llvm", threads=2)
    feed = {"a": A} if const_b else {"a": A, "b": B}
    return run, run(feed)[0], _exact(A, B, zp), g.run(feed)[0]


@pytest.mark.parametrize(
    "a_shape,b_shape,zp",
    [
        ((1, 4), (4, 1), 0),  # one row, one column, one group of four k
        ((37, 1024), (1024, 300), 128),  # partial row tile and panel, K in two blocks
        ((9, 4 * KC_GROUPS + 8), (4 * KC_GROUPS + 8, IGEMM_NR), 255),  # K one group past a block
        ((2, 9, 64), (1, 64, 100), 3),  # batch dimensions flattened into rows
        ((IGEMM_MR, 16), (16, 2 * IGEMM_NR + 1), 1),  # a panel of one column
        ((AMX_MR + 3, 4 * KC_GROUPS + 68), (4 * KC_GROUPS + 68, 40), 250),  # AMX: K's last step overlaps
        ((33, 256), (256, 64), 17),  # whole steps only, the last block of rows overlapping the one before
        ((AMX_MR + 9, 40), (40, 20), 5),  # K under one AMX step: the VNNI form
        ((2, 8, 100), (1, 100, 96), 0),  # two whole panels, 16 rows, K = 100
    ],
)
@pytest.mark.parametrize("target", TARGETS)
def test_packed_form_equals_the_exact_sums(a_shape, b_shape, zp, target):
    run, got, exact, ref = _gemm(a_shape, b_shape, zp, target=target)
    assert got.dtype == torch.int32 and torch.equal(ref, exact)
    assert torch.equal(got, exact)
    rows, k = math.prod(a_shape[:-1]), a_shape[-1]
    amx = amx_int8(target.features) and rows >= AMX_MR and k >= 64  # one AMX call a panel
    form = amx_mm_name(IGEMM_NR) if amx else igemm_name(IGEMM_MR, IGEMM_NR)
    assert f"{form}(" in format_kernel(run._launches[0].kernel)  # the packed form ran


@pytest.mark.parametrize("a_shape,b_shape,const_b", [((5, 7), (7, 9), True), ((6, 16), (16, 5), False)])
def test_plain_form_equals_the_exact_sums(a_shape, b_shape, const_b):
    run, got, exact, _ = _gemm(a_shape, b_shape, 77, const_b)
    assert torch.equal(got, exact)
    assert "igemm_" not in format_kernel(run._launches[0].kernel)


@pytest.mark.parametrize("vnni", [False, True])
def test_micro_kernel_forms_compute_the_same_tile(vnni):
    """The routine called directly: C overwritten less the zero point's share (beta 0), then accumulated
    (beta 1), rows and columns past m and n untouched."""
    target = parse_target("llvm", threads=1)
    if vnni and not has_vnni(target):
        pytest.skip("this CPU has no AVX-512 VNNI")
    load_library(f"test_igemm_{vnni}", igemm_module(IGEMM_MR, IGEMM_NR, vnni), target)
    addr = _jit(target).engine.get_function_address(igemm_symbol(IGEMM_MR, IGEMM_NR, vnni))
    args = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, *[ctypes.c_int64] * 4]
    fn = ctypes.CFUNCTYPE(None, *args, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(addr)
    gen = torch.Generator().manual_seed(1)
    m, n, k, zp = IGEMM_MR - 3, IGEMM_NR - 5, 40, 200
    A = torch.randint(0, 256, (IGEMM_MR, k), generator=gen).to(torch.uint8)
    B = torch.randint(-128, 128, (k, n), generator=gen).to(torch.int8)
    packed, sums = pack_weights(B)
    C = torch.full((IGEMM_MR, IGEMM_NR), -7, dtype=torch.int32)
    fn(A.data_ptr(), k, packed.data_ptr(), C.data_ptr(), IGEMM_NR, k // 4, m, n, sums.data_ptr(), zp, 0)
    want = _exact(A[:m], B, zp)
    assert torch.equal(C[:m, :n], want)
    assert (C[m:] == -7).all() and (C[:, n:] == -7).all()
    fn(A.data_ptr(), k, packed.data_ptr(), C.data_ptr(), IGEMM_NR, k // 4, m, n, sums.data_ptr(), zp, 1)
    assert torch.equal(C[:m, :n], want + _exact(A[:m], B, 0))


@pytest.mark.parametrize("module,dot", [(amx_mm_module, "tdpbusd"), (amx_conv_module, "tdpbsud")])
@pytest.mark.parametrize("nr", [16, 32, IGEMM_NR])
def test_amx_routines_assemble_for_an_amx_cpu_on_any_host(module, dot, nr):
    """LLVM takes the AMX panel routines for a Sapphire Rapids target wherever the tests run (code generation
    only: a host without AMX checks them here, an AMX host also runs them in the tests above)."""
    host = parse_target("llvm", threads=1)
    feats = ("+avx512f", "+avx512bw", "+avx512vl", "+avx512vnni", "+amx-tile", "+amx-int8")
    spr = dataclasses.replace(host, name="spr", cpu="sapphirerapids", features=feats)
    asm = assembly(module(nr), spr)
    assert dot in asm and "ldtilecfg" in asm and "tilerelease" in asm


def test_stored_integers_take_no_arithmetic_and_refuse_other_operands():
    b = GraphBuilder("q")
    q = b.input("q", (2, 4), dtype="uint8")
    with pytest.raises(GraphError, match="uint8 values are stored, not computed on: cast to float32 first"):
        b.op("relu", q)
    with pytest.raises(GraphError, match="input 1 is uint8; it takes int8"):
        b.op("matmul_integer", q, b.input("r", (4, 3), dtype="uint8"))


def test_saturating_casts_match_the_reference_at_the_edges():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 255.9, 256.0, -0.9, -128.5, 127.99, 3e9, -3e9])
    b = GraphBuilder("c")
    v = b.input("x", (x.numel(),))
    g = b.build([b.op("cast", v, dtype=d) for d in ("uint8", "int8", "int32")])
    got = compile_graph(g, "llvm", threads=1)({"x": x})
    ref = g.run({"x": x})
    assert [r.tolist() for r in ref] == [
        [0, 255, 0, 255, 255, 0, 0, 127, 255, 0],
        [0, 127, -128, 127, 127, 0, -128, 127, 127, -128],
        [0, 2**31 - 1, -(2**31), 255, 256, 0, -128, 127, 2**31 - 1, -(2**31)],
    ]
    for r, c in zip(ref, got, strict=True):
        assert c.dtype == r.dtype and torch.equal(c, r)


def test_onnx_export_runs_in_onnxruntime_with_the_same_integers():
    ort = pytest.importorskip("onnxruntime")
    from rewrite.frontends.onnx.export import to_onnx

    gen = torch.Generator().manual_seed(2)
    b = GraphBuilder("q")
    a = b.input("a", (6, 8), dtype="uint8")
    x = b.input("x", (6, 5))
    w = b.weight("w", torch.randint(-128, 128, (8, 5), generator=gen).to(torch.int8))
    y = b.op("mul", b.op("cast", b.op("matmul_integer", a, w, a_zero_point=9), dtype="float32"), x)
    c = b.input("c", (1, 4, 5, 5), dtype="uint8")
    k = b.weight("k", torch.randint(-128, 128, (3, 4, 3, 3), generator=gen).to(torch.int8))
    conv = b.op("conv2d_integer", c, k, padding=(1, 1), stride=(2, 1), a_zero_point=200)
    g = b.build([y, b.op("cast", b.op("smul", x, scalar=100.0), dtype="int8"), conv])
    # uint8 activations below 128: without AVX-512 VNNI onnxruntime's u8 x s8 kernels (vpmaddubsw) saturate
    # a pair of products at int16 (255 * -128 twice), where eqsat's sums are exact
    feed = {**g.random_inputs(), "a": torch.randint(0, 128, (6, 8), generator=gen).to(torch.uint8)}
    feed["c"] = torch.randint(0, 128, (1, 4, 5, 5), generator=gen).to(torch.uint8)
    sess = ort.InferenceSession(to_onnx(g).SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {k: t.numpy() for k, t in feed.items()})
    for r, o in zip(g.run(feed), got, strict=True):
        assert np.array_equal(r.numpy(), o)


@pytest.mark.parametrize(
    "x_shape,w_shape,stride,padding,dilation,zp",
    [
        ((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 7),  # K = 27: padded to 28
        ((1, 16, 10, 9), (20, 16, 1, 1), (1, 1), (0, 0), (1, 1), 0),  # a GEMM: 90 pixels, 2 panels
        ((2, 5, 11, 7), (9, 5, 3, 2), (2, 1), (1, 0), (1, 2), 255),  # batch, strides, dilation
        ((1, 80, 9, 9), (10, 80, 3, 3), (1, 1), (1, 1), (1, 1), 128),  # K = 720: two blocks of k
        ((1, 8, 7, 7), (12, 8, 3, 3), (1, 1), (1, 1), (1, 1), 9),  # 49 pixels: two panels of 32
        ((1, 8, 14, 14), (12, 8, 1, 1), (1, 1), (0, 0), (1, 1), 9),  # 196 pixels: four of 48 and one of 16
        ((1, 64, 9, 9), (40, 64, 3, 3), (1, 1), (1, 1), (1, 1), 3),  # K = 576: 16-group steps, 40 channels
        ((1, 32, 7, 7), (48, 32, 3, 3), (1, 1), (1, 1), (1, 1), 250),  # K = 288 (AMX: 320), panels of 32 and 16
        ((2, 16, 12, 10), (33, 16, 2, 2), (2, 2), (1, 0), (1, 1), 0),  # K = 64, 33 channels: a block of one
    ],
)
@pytest.mark.parametrize("target", TARGETS)
def test_convolution_panels_equal_the_exact_sums(x_shape, w_shape, stride, padding, dilation, zp, target):
    """conv2d_integer of constant weights: im2col panels through the weights-as-A micro-kernel, C written in
    NCHW; the padding is the zero point (it contributes nothing)."""
    gen = torch.Generator().manual_seed(3)
    x = torch.randint(0, 256, x_shape, generator=gen).to(torch.uint8)
    w = torch.randint(-128, 128, w_shape, generator=gen).to(torch.int8)
    b = GraphBuilder("qconv")
    y = b.op(
        "conv2d_integer",
        b.input("x", x_shape, dtype="uint8"),
        b.weight("w", w),
        stride=stride,
        padding=padding,
        dilation=dilation,
        a_zero_point=zp,
    )
    g = b.build([y])
    run = compile_graph(g, target, threads=2)
    exact = torch.nn.functional.conv2d(x.double() - zp, w.double(), None, stride, padding, dilation).to(torch.int32)
    assert torch.equal(g.run({"x": x})[0], exact)
    assert torch.equal(run({"x": x})[0], exact)
    text = format_kernel(run._launches[0].kernel)
    k = w_shape[2] * w_shape[3] * -(-w_shape[1] // 4) * 4
    amx = amx_int8(target.features) and amx_conv_pays(k, w_shape[0])  # one AMX call a panel
    call = amx_conv_name if amx else (lambda nr: igemm_name(IGEMM_MR, nr, "igemmw"))
    widths = {nr for nr in (16, 32, IGEMM_NR) if f"{call(nr)}(" in text}
    pixels = g.shape_of(y)[2] * g.shape_of(y)[3]
    step = IGEMM_NR if pixels >= 3 * IGEMM_NR + 1 else 32  # 32-pixel panels on a small map
    full, rest = divmod(pixels, step)
    # panels of ``step`` pixels, the last as wide as its pixels need
    assert widths == ({step} if full else set()) | ({-(-rest // 16) * 16} if rest else set())


def _requantized_conv(x_shape, w_shape, groups=1, residual=False, seed=4, stride=(1, 1)):
    """conv2d_integer and the requantization a QDQ model's importer writes after it: the int32 sums to float32,
    times a scale per channel, plus a bias, divided by the output scale, rounded, plus the output zero point,
    clamped to the byte and cast to uint8 (with ``residual``, a float32 input added before the division)."""
    gen = torch.Generator().manual_seed(seed)
    co = w_shape[0]
    b = GraphBuilder("qconv_requant")
    x = b.input("x", x_shape, dtype="uint8")
    w = b.weight("w", torch.randint(-128, 128, w_shape, generator=gen).to(torch.int8))
    y = b.op("conv2d_integer", x, w, padding=(1, 1), stride=stride, groups=groups, a_zero_point=7)
    oh, ow = g_hw = ((x_shape[2] - 1) // stride[0] + 1, (x_shape[3] - 1) // stride[1] + 1)
    y = b.op("cast", y, dtype="float32")
    y = b.op("mul", y, b.weight("scale", torch.rand(1, co, 1, 1, generator=gen) * 1e-3))
    y = b.op("add", y, b.weight("bias", torch.randn(1, co, 1, 1, generator=gen)))
    if residual:
        y = b.op("add", y, b.input("r", (x_shape[0], co, *g_hw)))
    y = b.op("div", y, b.weight("oscale", torch.full((1, 1, 1, 1), 0.05)))
    y = b.op("add", b.op("round", y), b.weight("ozp", torch.full((1, 1, 1, 1), 100.0)))
    y = b.op("cast", b.op("clamp", y, min=0.0, max=255.0), dtype="uint8")
    g = b.build([y])
    feed = {"x": torch.randint(0, 256, x_shape, generator=gen).to(torch.uint8)}
    if residual:
        feed["r"] = torch.randn(x_shape[0], co, oh, ow, generator=gen)
    return g, feed


@pytest.mark.parametrize(
    "x_shape,w_shape,groups,residual",
    [
        ((1, 64, 9, 9), (48, 64, 3, 3), 1, False),  # AMX where there is AMX: K = 576, 48 channels
        ((2, 8, 10, 7), (12, 8, 3, 3), 1, True),  # the VNNI micro-kernel (12 channels), batch 2, a residual
        ((1, 8, 6, 6), (8, 2, 3, 3), 4, False),  # grouped: the plain loop applies the ops as it stores
        ((2, 16, 9, 37), (16, 1, 3, 3), 16, True),  # depthwise: rows of 37 in vectors of 16, the last overlapping
        ((1, 8, 7, 7), (8, 1, 3, 3), 8, False),  # depthwise, rows under one vector
    ],
)
@pytest.mark.parametrize("target", TARGETS)
def test_requantization_is_applied_as_the_convolution_stores(x_shape, w_shape, groups, residual, target):
    """The ops after conv2d_integer up to the uint8 cast run inside its kernel (one kernel, the int32 sums never
    stored whole) and give the reference's bytes: the same float32 steps, so at most one step apart where a
    fused multiply-add rounds a value lying on a half."""
    g, feed = _requantized_conv(x_shape, w_shape, groups, residual)
    run = compile_graph(g, target, threads=2)
    got, want = run(feed)[0], g.run(feed)[0]
    assert got.dtype == torch.uint8 and got.shape == want.shape
    diff = (got.int() - want.int()).abs()
    assert diff.max() <= 1 and (diff == 0).float().mean() >= 0.999
    assert len(run._launches) == 1  # the convolution's kernel wrote the bytes


@pytest.mark.parametrize("target", TARGETS)
def test_a_dequantized_residual_is_stored_narrow_and_widened_where_it_is_added(target):
    """A QDQ residual block's shape: a convolution's requantized uint8 result, dequantized (to float32, less its
    zero point, times its scale), is added in another convolution's requantization.  The first kernel stores the
    bytes and the second widens them as it loads them (the dequantization in its epilogue): the float32 tensor
    is never written.  The bytes are the reference's, one step apart at most where a fused multiply-add rounds a
    value lying on a half."""
    gen = torch.Generator().manual_seed(6)
    b = GraphBuilder("qdq_residual")
    names = iter(f"c{i}" for i in range(99))

    def const(t: torch.Tensor):
        return b.weight(next(names), t)

    def requantized(y, co: int):
        y = b.op("mul", b.op("cast", y, dtype="float32"), const(torch.rand(1, co, 1, 1, generator=gen) * 1e-3))
        return y

    def to_bytes(y):
        y = b.op(
            "add",
            b.op("round", b.op("div", y, const(torch.full((1, 1, 1, 1), 0.05)))),
            const(torch.full((1, 1, 1, 1), 100.0)),
        )
        return b.op("cast", b.op("clamp", y, min=0.0, max=255.0), dtype="uint8")

    x = b.input("x", (1, 16, 12, 12), dtype="uint8")
    w1 = b.weight("w1", torch.randint(-128, 128, (32, 16, 1, 1), generator=gen).to(torch.int8))
    w2 = b.weight("w2", torch.randint(-128, 128, (32, 16, 3, 3), generator=gen).to(torch.int8))
    # the main path first, then the shortcut (torchvision's order; the add goes to the first chain that reaches it)
    y = requantized(b.op("conv2d_integer", x, w2, padding=(1, 1), a_zero_point=3), 32)
    q1 = to_bytes(requantized(b.op("conv2d_integer", x, w1, a_zero_point=3), 32))
    widened = b.op("cast", q1, dtype="float32")
    residual = b.op(
        "mul",
        b.op("sub", widened, const(torch.full((1, 1, 1, 1), 100.0))),
        const(torch.full((1, 1, 1, 1), 0.05)),
    )
    g = b.build([to_bytes(b.op("add", y, residual))])
    run = compile_graph(g, target, threads=2)
    feed = {"x": torch.randint(0, 256, (1, 16, 12, 12), generator=gen).to(torch.uint8)}
    got, want = run(feed)[0], g.run(feed)[0]
    diff = (got.int() - want.int()).abs()
    assert diff.max() <= 1 and (diff == 0).float().mean() >= 0.999
    groups = [ln.kernel.meta["group"] for ln in run._launches]
    assert len(groups) == 2
    first = next(grp for grp in groups if q1.node in grp.nodes)
    assert first.epilogue[-1] == q1.node  # the bytes are what it stores
    second = next(grp for grp in groups if grp is not first)
    assert {widened.node, residual.node} <= set(second.epilogue)


@pytest.mark.parametrize("target", TARGETS)
def test_an_identity_shortcut_is_dequantized_in_the_epilogue_that_adds_it(target):
    """The block's input bytes, read by the convolution and dequantized for its residual add: the dequantization
    (cast, less the zero point, times the scale) runs in the convolution's epilogue on the bytes it loads, not as
    a kernel of its own writing float32.  One kernel; the reference's bytes (one step apart at most)."""
    gen = torch.Generator().manual_seed(7)
    b = GraphBuilder("qdq_identity")
    x = b.input("x", (1, 16, 12, 12), dtype="uint8")
    w = b.weight("w", torch.randint(-128, 128, (16, 16, 3, 3), generator=gen).to(torch.int8))
    y = b.op("cast", b.op("conv2d_integer", x, w, padding=(1, 1), a_zero_point=3), dtype="float32")
    y = b.op("mul", y, b.weight("s", torch.rand(1, 16, 1, 1, generator=gen) * 1e-3))
    shortcut = b.op("cast", x, dtype="float32")
    shortcut = b.op(
        "mul",
        b.op("sub", shortcut, b.weight("zp", torch.full((1, 1, 1, 1), 3.0))),
        b.weight("xs", torch.full((1, 1, 1, 1), 0.02)),
    )
    y = b.op("div", b.op("add", y, shortcut), b.weight("os", torch.full((1, 1, 1, 1), 0.05)))
    y = b.op("add", b.op("round", y), b.weight("ozp", torch.full((1, 1, 1, 1), 100.0)))
    g = b.build([b.op("cast", b.op("clamp", y, min=0.0, max=255.0), dtype="uint8")])
    run = compile_graph(g, target, threads=2)
    feed = {"x": torch.randint(0, 256, (1, 16, 12, 12), generator=gen).to(torch.uint8)}
    got, want = run(feed)[0], g.run(feed)[0]
    diff = (got.int() - want.int()).abs()
    assert diff.max() <= 1 and (diff == 0).float().mean() >= 0.999
    assert len(run._launches) == 1


def test_a_dequantized_input_of_a_depthwise_convolution_is_read_as_bytes():
    """A quantized convolution's bytes dequantized for a float32 depthwise convolution (a QDQ MobileNet keeps those
    float32): the first kernel stores the bytes, the depthwise convolution dequantizes them as it copies its input
    into its padded slice (once per element), and the float32 tensor is never written."""
    gen = torch.Generator().manual_seed(8)
    b = GraphBuilder("qdq_depthwise")
    x = b.input("x", (1, 16, 12, 12), dtype="uint8")
    w = b.weight("w", torch.randint(-128, 128, (32, 16, 1, 1), generator=gen).to(torch.int8))
    y = b.op("cast", b.op("conv2d_integer", x, w, a_zero_point=3), dtype="float32")
    y = b.op(
        "div",
        b.op("mul", y, b.weight("s", torch.rand(1, 32, 1, 1, generator=gen) * 1e-3)),
        b.weight("os", torch.full((1, 1, 1, 1), 0.05)),
    )
    q = b.op("cast", b.op("clamp", b.op("round", y), min=0.0, max=255.0), dtype="uint8")
    widened = b.op("mul", b.op("cast", q, dtype="float32"), b.weight("qs", torch.full((1, 1, 1, 1), 0.05)))
    dw = b.op("conv2d", widened, b.weight("dw", torch.randn(32, 1, 3, 3, generator=gen)), padding=(1, 1), groups=32)
    g = b.build([dw])
    run = compile_graph(g, "llvm", threads=2)
    feed = {"x": torch.randint(0, 256, (1, 16, 12, 12), generator=gen).to(torch.uint8)}
    torch.testing.assert_close(run(feed)[0], g.run(feed)[0], rtol=1e-5, atol=1e-5)
    groups = {ln.kernel.meta["group"].anchor: ln.kernel.meta["group"] for ln in run._launches}
    assert len(groups) == 2
    assert groups[dw.node].prologue and widened.node in groups[dw.node].prologue
    (first,) = (grp for a, grp in groups.items() if a != dw.node)
    assert first.epilogue[-1] == q.node  # it stores the bytes


def test_bench_kernels_amx_peak_loop_assembles_and_on_amx_measures_above_the_vnni_peak():
    """``bench kernels`` bounds the int8 GEMM by the AMX peak where the GEMM runs on tiles: its loop is four
    independent tile dot products; on an AMX host it measures more than the VNNI peak (16 384 multiply-adds
    an instruction against 64)."""
    from bench.kernels import amx_peak, amx_peak_ir, vnni_peak

    host = parse_target("llvm", threads=1)
    feats = ("+avx512f", "+avx512bw", "+avx512vl", "+avx512vnni", "+amx-tile", "+amx-int8")
    spr = dataclasses.replace(host, name="spr", cpu="sapphirerapids", features=feats)
    assert assembly(amx_peak_ir().replace(PLACEHOLDER, "amx_peak"), spr).count("tdpbusd") >= 4
    if not has_amx(host):
        assert amx_peak(1) is None
        return
    assert amx_peak(3, iters=1 << 14)["gops"] > vnni_peak(3, iters=1 << 16)["gops"]


@pytest.mark.parametrize("stride,dilation,kernel", [((1, 1), (1, 1), 3), ((2, 2), (1, 1), 3), ((1, 2), (2, 1), 5)])
def test_depthwise_sums_are_exact(stride, dilation, kernel):
    """conv2d_integer with one input channel per output channel (the depthwise form: a zero-bordered float32
    plane, exact for whole numbers under 2**24) equals the exact int32 sums: strides, dilations, a 5x5 window,
    the byte's extremes."""
    gen = torch.Generator().manual_seed(5)
    x = torch.randint(0, 256, (2, 6, 19, 23), generator=gen).to(torch.uint8)
    x[0, 0] = 255
    w = torch.randint(-128, 128, (6, 1, kernel, kernel), generator=gen).to(torch.int8)
    w[0] = -128
    pad = (kernel // 2, kernel // 2)
    b = GraphBuilder("dw")
    y = b.op("conv2d_integer", b.input("x", x.shape, dtype="uint8"), b.weight("w", w), stride=stride,
             padding=pad, dilation=dilation, groups=6, a_zero_point=0)  # fmt: skip
    g = b.build([y])
    run = compile_graph(g, "llvm", threads=2)
    exact = torch.nn.functional.conv2d(x.double(), w.double(), None, stride, pad, dilation, 6).to(torch.int32)
    assert torch.equal(run({"x": x})[0], exact)
    assert "_plane" in format_kernel(run._launches[0].kernel)  # the depthwise form ran
