"""The activation, reduction, norm and resize ops, each compiled alone against its torch reference
(odd sizes, both keepdim settings, edge attributes)."""

from __future__ import annotations

import pytest
import torch
from lower_testutil import check_graph

from lower.ir.nodes import TRIG_FUNCS
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.dtypes import FLOAT
from rewrite.ir.ops import OPS, Group
from rewrite.pipeline import compile

POSITIVE = ["log", "sqrt", "log1p"]  # defined on x > 0 (log1p on x > -1)
# defined on part of the line (NaN elsewhere): op -> a unit normal sample moved into the domain
DOMAIN = {
    "asin": lambda x: torch.tanh(x),  # |x| <= 1
    "acos": lambda x: torch.tanh(x),
    "atanh": lambda x: torch.tanh(x) * 0.999,  # |x| < 1 (+-inf at +-1)
    "acosh": lambda x: x.abs() * 4 + 1,  # x >= 1
}
# the other unary float ops of the registry (hardswish, mish, erf, the steps, ...): a new one is tested without
# a change here; relu, sigmoid, tanh, gelu, exp and identity are test_lower_ops' own
UNARY = [
    n
    for n, d in OPS.items()
    if d.group is Group.ELEMENTWISE
    and d.arity == 1
    and not d.attrs
    and d.dtype_rule is FLOAT
    and n not in POSITIVE
    and n not in DOMAIN
    and n not in ("relu", "sigmoid", "tanh", "gelu", "exp", "identity")
]
REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_var"]
OTHERS = ["clamp", "pow", "expand", "pad", "resize", "adaptive_avgpool", "groupnorm", "rmsnorm", "mod", "idiv"]
TESTED = set(UNARY + POSITIVE + [*DOMAIN] + REDUCTIONS + OTHERS)  # test_lower_ops checks the registry is covered


def _one(op: str, shapes: list[tuple[int, ...]], **attrs):
    b = GraphBuilder(op)
    xs = [b.input(f"x{i}", s) for i, s in enumerate(shapes)]
    return b.build([b.op(op, *xs, **attrs)])


@pytest.mark.parametrize("op", UNARY + POSITIVE + [*DOMAIN])
@pytest.mark.parametrize("shape", [(7,), (3, 13)])
def test_unary(op, shape):
    g = _one(op, [shape])
    x = torch.randn(shape) * 4
    if op in POSITIVE:
        x = x.abs() + 0.05
    if op in DOMAIN:
        x = DOMAIN[op](x / 4)
    if op == "reciprocal":
        x = x.sign() * (x.abs() + 0.1)
    check_graph(g, {"x0": x}, tol=1e-5)


INF, NAN = float("inf"), float("nan")
EDGES = [-INF, -100.0, -3.0, -1.5707964, -1.0001, -1.0, -0.999, -0.5, -1e-6, -0.0, 0.0, 1e-6, 0.3, 0.999, 1.0]
EDGES += [1.0001, 1.5, 1.5707964, 2.0, 10.0, 80.0, 100.0, 1e4, INF, NAN]


@pytest.mark.parametrize("op", TRIG_FUNCS)
def test_trig_and_hyperbolic_match_torch_at_the_edges_and_are_nan_outside_the_domain(op):
    """libm's float functions (LLVM's intrinsics or the C names) against torch's, each value to a few ulp:
    the domain's ends (asin(+-1), atanh(+-1) = +-inf, acosh(1) = 0), overflow (cosh(100) = inf), tiny x (asinh's
    relative accuracy), and NaN outside the domain (asin(1.0001), acosh(0.3)) as torch."""
    x = torch.tensor(EDGES)
    got = compile(_one(op, [(len(EDGES),)]))([x])[0]
    want = getattr(torch, op)(x)
    assert torch.equal(got.isnan(), want.isnan()), (op, x[got.isnan() != want.isnan()])
    torch.testing.assert_close(got, want, rtol=2e-6, atol=0, equal_nan=True)  # libm's and torch's: a few ulp


def test_power_follows_torch_at_its_special_values():
    """x ** y of two tensors is C's powf, as torch.pow: 0 ** negative is inf, a negative base to a fractional
    power NaN, to an integer power signed, anything ** 0 one (NaN included), 1 ** anything one."""
    xs = torch.tensor([0.0, -0.0, -2.0, -2.0, -2.0, float("nan"), 1.0, float("inf"), 0.5, 3.0])
    ys = torch.tensor([-1.0, -3.0, 0.5, 3.0, 2.0, 0.0, float("nan"), -1.0, float("inf"), -2.5])
    got = compile(_one("power", [(1, 10), (1, 10)]))({"x0": xs[None], "x1": ys[None]})[0][0]
    want = torch.pow(xs, ys)
    assert torch.equal(got.isnan(), want.isnan())
    ok = ~want.isnan()
    assert torch.allclose(got[ok], want[ok], rtol=1e-6) and torch.equal(got[ok].signbit(), want[ok].signbit())


def test_atan2_follows_the_signs_of_zero_and_infinity_as_torch():
    """atan2(y, x) is C's atan2f: the quadrant from both signs (-0 included), +-pi/4 and +-3pi/4 for two
    infinities, NaN for a NaN operand; broadcast over a size-1 dimension."""
    ys = [1.0, 1.0, -1.0, -1.0, 0.0, -0.0, 0.0, -0.0, 1.0, -1.0, INF, INF, -INF, 3.0, NAN, 2.0, 1e-30, -5.0]
    xs = [1.0, -1.0, 1.0, -1.0, 0.0, 0.0, -0.0, -0.0, 0.0, -0.0, INF, -INF, -INF, -INF, 1.0, NAN, -1e30, 1e-3]
    y, x = torch.tensor(ys).reshape(1, -1), torch.tensor(xs).reshape(1, -1)
    g = _one("atan2", [(1, len(ys)), (1, len(xs))])
    got = compile(g)([y, x])[0]
    want = torch.atan2(y, x)
    torch.testing.assert_close(got, want, rtol=2e-6, atol=0, equal_nan=True)
    assert torch.equal(got.signbit()[~want.isnan()], want.signbit()[~want.isnan()])
    y2, x2 = torch.randn(3, 1), torch.randn(3, 5)
    check_graph(_one("atan2", [(3, 1), (3, 5)]), {"x0": y2, "x1": x2}, tol=1e-6)


def test_unary_extremes():
    """The erf GELU, mish and silu stay close at the ends of the range (the tails saturate)."""
    x = torch.tensor([-60.0, -20.0, -8.0, -3.0, -1e-3, 0.0, 1e-3, 0.5, 3.0, 8.0, 20.0, 60.0])
    for op in ("gelu_erf", "erf", "mish", "silu", "hardswish", "hardsigmoid"):
        check_graph(_one(op, [(12,)]), {"x0": x}, tol=1e-5)


def test_log1p_and_expm1_keep_their_relative_accuracy_near_zero():
    """Where log(1 + x) and exp(x) - 1 return 0 or one rounding of 1 (softplus's and ELU's tails)."""
    x = torch.tensor([1e-8, -1e-7, 1e-30, 0.0, 3e-5, -0.5, 2.0, -0.99])
    for op, ref in (("log1p", torch.log1p), ("expm1", torch.expm1)):
        got = compile(_one(op, [(8,)]))([x])[0]
        assert torch.allclose(got, ref(x), rtol=1e-6, atol=0), (op, got, ref(x))


@pytest.mark.parametrize("lo,hi", [(0.0, 6.0), (-1.0, 1.0), (-0.5, -0.5)])
def test_clamp(lo, hi):
    check_graph(_one("clamp", [(4, 9)], min=lo, max=hi), {"x0": torch.randn(4, 9) * 5}, tol=0)


@pytest.mark.parametrize("e", [2.0, 3.0, 0.5, -1.0, -0.5, 1.7])
def test_pow(e):
    x = torch.rand(5, 7) * 3 + 0.1
    check_graph(_one("pow", [(5, 7)], exponent=e), {"x0": x}, tol=1e-5)


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("axes", [(0,), (1,), (2,), (0, 2), (0, 1, 2)])
@pytest.mark.parametrize("keepdim", [0, 1])
def test_reductions(op, axes, keepdim):
    check_graph(_one(op, [(3, 5, 7)], axes=axes, keepdim=keepdim), tol=1e-5)


def test_var_correction():
    for c in (0, 1, 2):
        check_graph(_one("reduce_var", [(4, 11)], axes=(1,), correction=c), tol=1e-5)


@pytest.mark.parametrize("src,dst", [((1, 5), (3, 5)), ((4, 1, 1), (4, 3, 2)), ((1,), (7,)), ((2, 3), (2, 3))])
def test_expand(src, dst):
    check_graph(_one("expand", [src], shape=dst), tol=0)


@pytest.mark.parametrize("pads,value", [((0, 0, 1, 2), 0.0), ((1, 0, 0, 3), -2.5), ((0, 0, 0, 0, 2, 1, 1, 1), 1.0)])
def test_pad(pads, value):
    rank = len(pads) // 2
    check_graph(_one("pad", [(2, 3, 4, 5)[:rank]], pads=pads, value=value), tol=0)


@pytest.mark.parametrize("mode,align", [("nearest", 0), ("bilinear", 0), ("bilinear", 1)])
@pytest.mark.parametrize("size", [(10, 14), (3, 4), (7, 9)])
def test_resize(mode, align, size):
    check_graph(_one("resize", [(1, 2, 5, 7)], size=size, mode=mode, align_corners=align), tol=1e-5)


ONNX_COORDS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"]


@pytest.mark.parametrize("coord", [*ONNX_COORDS, "tf_half_pixel_for_nn"])
@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("size,scales", [((10, 3), (0.0, 0.0)), ((8, 11), (1.7, 1.6)), ((1, 2), (0.25, 0.3))])
def test_resize_onnx_nearest(coord, nearest_mode, size, scales):
    """ONNX coordinate modes (float64 taps as constant tables) against the op's reference: exact."""
    g = _one(
        "resize",
        [(1, 2, 5, 7)],
        size=size,
        mode="nearest",
        coord=coord,
        nearest_mode=nearest_mode,
        scale_h=scales[0],
        scale_w=scales[1],
    )
    check_graph(g, tol=0)


@pytest.mark.parametrize("coord", ONNX_COORDS)
@pytest.mark.parametrize("size,scales", [((10, 3), (0.0, 0.0)), ((8, 11), (1.7, 1.6)), ((1, 2), (0.25, 0.3))])
def test_resize_onnx_linear(coord, size, scales):
    g = _one("resize", [(1, 2, 5, 7)], size=size, mode="bilinear", coord=coord, scale_h=scales[0], scale_w=scales[1])
    check_graph(g, tol=1e-6)


@pytest.mark.parametrize("out", [(1, 1), (2, 3), (3, 5), (7, 9)])
def test_adaptive_avgpool(out):
    check_graph(_one("adaptive_avgpool", [(2, 3, 7, 9)], output_size=out), tol=1e-5)


@pytest.mark.parametrize(
    "shape,groups",
    # last: one element a group; then positions over three dims, and none (the statistics' flat index folds to a
    # unit stride however many dims it unflattens over)
    [((2, 6, 5, 3), 3), ((1, 4, 7), 1), ((2, 8, 3, 3), 8), ((1, 5, 1), 5), ((2, 4, 3, 5, 2), 2), ((3, 6), 2)],
)
def test_groupnorm(shape, groups):
    c = shape[1]
    g = _one("groupnorm", [shape, (c,), (c,)], num_groups=groups, eps=1e-5)
    check_graph(g, tol=1e-5)


@pytest.mark.parametrize("shape", [(5, 16), (2, 3, 7)])
def test_rmsnorm(shape):
    check_graph(_one("rmsnorm", [shape, shape[-1:]], eps=1e-6), tol=1e-5)


I64_MIN = -(2**63)
INT_A = [7, -7, 7, -7, 0, 5, -5, I64_MIN, I64_MIN, 3, -3, 2**62 + 1, 9, -9]
INT_B = [2, 2, -2, -2, 3, 0, 0, -1, 2, 1, 7, 3, -1, 4]


@pytest.mark.parametrize("op", ["mod", "idiv"])
@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_integer_division_and_remainder_are_exact_and_never_trap(op, mode):
    """int64 floor (Python's) and trunc (C's) division and remainder against torch: signs mixed, a zero divisor
    (quotient 0, remainder the dividend: torch raises) and INT64_MIN / -1 (wraps: x86's idiv would trap)."""
    a, b = torch.tensor(INT_A), torch.tensor(INT_B)
    gb = GraphBuilder(op)
    g = gb.build([gb.op(op, gb.input("x0", (14,), dtype="int64"), gb.input("x1", (14,), dtype="int64"), mode=mode)])
    got = compile(g)({"x0": a, "x1": b})[0]
    ok = (b != 0) & ~((a == I64_MIN) & (b == -1))
    if op == "mod":
        want = torch.remainder(a[ok], b[ok]) if mode == "floor" else torch.fmod(a[ok], b[ok])
    else:
        want = torch.div(a[ok], b[ok], rounding_mode=mode)
    assert torch.equal(got[ok], want)
    assert torch.equal(got[b == 0], a[b == 0] if op == "mod" else torch.zeros(2, dtype=torch.int64))
    assert int(got[7]) == (0 if op == "mod" else I64_MIN)  # INT64_MIN / -1
    check_graph(g, {"x0": a, "x1": b}, tol=0)


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_float_remainder_follows_torch(mode):
    """float32 mod: C's exact fmod (trunc), and torch.remainder's sign fix (floor); inf and 0 give NaN."""
    a = torch.tensor([5.5, -5.5, 5.5, -5.5, 0.0, 1.0, float("inf"), 3.0, -3.0, 1e30, 7.25])
    b = torch.tensor([2.0, 2.0, -2.0, -2.0, 3.0, 0.0, 2.0, float("inf"), 1.5, 7.0, 0.5])
    gb = GraphBuilder("fmod")
    g = gb.build([gb.op("mod", gb.input("x0", (11,)), gb.input("x1", (11,)), mode=mode)])
    got = compile(g)({"x0": a, "x1": b})[0]
    want = torch.remainder(a, b) if mode == "floor" else torch.fmod(a, b)
    assert torch.equal(got.isnan(), want.isnan())
    assert torch.equal(got[~want.isnan()], want[~want.isnan()])


def _prod(x, axes, keepdim):
    for ax in sorted(axes, reverse=True):
        x = torch.prod(x, ax, keepdim=keepdim)
    return x


@pytest.mark.parametrize("op", ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"])
@pytest.mark.parametrize("axes,keep", [((1,), 0), ((0, 2), 1)])
def test_int64_reductions_are_exact(op, axes, keep):
    """int64 sum and product (wrapping, as torch's), max and min, the extremes of int64 among the values."""
    x = torch.randint(-50, 50, (3, 7, 5))
    x[0, 0, 0], x[1, 1, 1] = -(2**63), 2**63 - 1
    gb = GraphBuilder(op)
    g = gb.build([gb.op(op, gb.input("x0", (3, 7, 5), dtype="int64"), axes=axes, keepdim=keep)])
    assert torch.equal(compile(g)({"x0": x})[0], g.run({"x0": x})[0])
    assert torch.equal(
        g.run({"x0": x})[0],
        {"reduce_sum": torch.sum, "reduce_max": torch.amax, "reduce_min": torch.amin, "reduce_prod": _prod}[op](
            x, list(axes), keepdim=bool(keep)
        ),
    )
