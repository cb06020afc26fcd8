"""The reference interpreter (``Graph.run``) and the compiled LLVM kernels agree on every op (issue 46).

``verify`` checks a rewritten graph with ``Graph.run``: if the interpreter and the kernels disagreed, a
rewrite could pass the verifier and still compute something else once compiled.  Every registry op with a
CPU lowering is built here in one or a few small cases; the cases are grouped into a few multi-output graphs
(one compile each, the compile being the cost) and both sides run on the same float32 inputs, compared
with ``compare_all`` (the project's one tolerance rule), op by op.

Two sweeps:

* ordinary random inputs (``Graph.random_inputs``) for every op, fast tier;
* extreme inputs (±1e30 .. ±1e4, values near 0, denormals, -0.0, inf and NaN for the elementwise ops;
  large-magnitude rows for softmax, the norms, reductions and pools), compared position by position for
  elementwise ops so that a huge value elsewhere in the tensor does not hide an error on a small one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

from rewrite.ir.builder import GraphBuilder
from rewrite.ir.dtypes import HALF, STORED_INT
from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import ACTS, OPS, Group
from rewrite.pipeline import compile as compile_graph
from rewrite.verification.numeric import compare, compare_all

# Registry ops with no CPU lowering, each with the reason; the test below asserts this is exactly the set.
NO_LOWERING = {
    "input": "source: a graph input, a buffer the caller passes, no kernel",
    "weight": "source: a constant buffer, no kernel",
    "fill": "source: folded to a constant before lowering, no kernel",
    "eye": "source: folded to a constant before lowering, no kernel",
    "identity_kernel": "source: folded to a constant before lowering, no kernel",
    "avg_kernel": "source: folded to a constant before lowering, no kernel",
}

Case = Callable[[GraphBuilder, str], list[Value]]

UNARY_FLOAT = [
    "relu", "sigmoid", "tanh", "gelu", "exp", "identity", "hardswish", "hardsigmoid", "silu", "mish",
    "gelu_erf", "erf", "floor", "ceil", "round", "sign", "log", "log1p", "expm1", "sqrt", "neg", "abs",
    "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "selu", "rsqrt",
]  # fmt: skip
BINARY_FLOAT = ["add", "sub", "mul", "div", "maximum", "minimum", "atan2", "power"]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]
REDUCE = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_var"]


def _w(b: GraphBuilder, name: str, t: torch.Tensor) -> Value:
    return b.weight(name, t)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _unary(op: str) -> Case:
    return lambda b, p: [b.op(op, b.input(f"{p}x", (3, 7)))]


def _binary(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        x, y = b.input(f"{p}x", (3, 1, 7)), b.input(f"{p}y", (1, 4, 7))
        return [b.op(op, x, y)]

    return build


def _int_binary(op: str) -> Case:
    """The int64 form: an input against nonzero constants (torch raises on an int division by 0)."""

    def build(b: GraphBuilder, p: str) -> list[Value]:
        x = b.input(f"{p}i", (3, 5), dtype="int64")
        d = _w(b, f"{p}d", torch.tensor([[-3, -2, 1, 2, 3]]))
        if op in ("mod", "idiv"):
            xm = b.op("sub", x, _w(b, f"{p}o", torch.tensor([[2]])))  # negative dividends too
            return [b.op("cast", b.op(op, xm, d, mode=m), dtype="float32") for m in ("floor", "trunc")]
        return [b.op("cast", b.op(op, x, d), dtype="float32"), b.op("cast", b.op(op, d, x), dtype="float32")]

    return build


def _compare(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        x, y = b.input(f"{p}x", (3, 7)), b.input(f"{p}y", (1, 7))
        i, j = b.input(f"{p}i", (3, 7), dtype="int64"), b.input(f"{p}j", (3, 7), dtype="int64")
        return [b.op(op, x, y), b.op(op, x, x), b.op(op, i, j)]

    return build


def _reduce(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        x = b.input(f"{p}x", (3, 4, 5))
        outs = [
            b.op(op, x, axes=(1,), keepdim=0),
            b.op(op, x, axes=(0, 2), keepdim=1),
            b.op(op, x, axes=(0, 1, 2), keepdim=0),
        ]
        if op == "reduce_var":
            outs.append(b.op(op, x, axes=(2,), keepdim=0, correction=0))
        if op != "reduce_mean" and op != "reduce_var":  # the int64 forms
            i = b.input(f"{p}i", (3, 5), dtype="int64")
            outs.append(b.op("cast", b.op(op, i, axes=(1,), keepdim=0), dtype="float32"))
        return outs

    return build


def _conv_w(b: GraphBuilder, p: str, shape: tuple[int, ...], seed: int) -> Value:
    return _w(b, p, torch.randn(shape, generator=_gen(seed)) / math.sqrt(math.prod(shape[1:])))


def _conv(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        x = b.input(f"{p}x", (2, 6, 9, 8))
        outs = []
        for k, (stride, pad, dil, groups) in enumerate(
            [((1, 1), (1, 1), (1, 1), 1), ((2, 1), (0, 2), (1, 2), 2), ((1, 1), (1, 1), (1, 1), 6)]
        ):
            cout = 6 if groups == 6 else 4
            w = _conv_w(b, f"{p}w{k}", (cout, 6 // groups, 3, 3), k)
            attrs = {"stride": stride, "padding": pad, "dilation": dil, "groups": groups}
            if op in ("conv2d", "conv2d_im2col"):
                outs.append(b.op(op, x, w, **attrs))
            else:
                bias = _w(b, f"{p}b{k}", torch.randn(cout, generator=_gen(10 + k)))
                outs += [b.op(op, x, w, bias, act=act, **attrs) for act in ACTS]
        return outs

    return build


def _matmul_bias_act(b: GraphBuilder, p: str) -> list[Value]:
    x = b.input(f"{p}x", (5, 7))
    w, bias = _w(b, f"{p}w", torch.randn(7, 6, generator=_gen(1))), _w(b, f"{p}b", torch.randn(6, generator=_gen(2)))
    return [b.op("matmul_bias_act", x, w, bias, act=act) for act in ACTS]


def _pool(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        x = b.input(f"{p}x", (2, 3, 9, 8))
        outs = []
        for kernel, stride, pad, ceil in [
            ((3, 3), (2, 2), (1, 1), 0),
            ((2, 3), (2, 2), (0, 1), 1),
            ((3, 3), (1, 1), (0, 0), 0),
        ]:
            attrs = {"kernel": kernel, "stride": stride, "padding": pad, "ceil_mode": ceil}
            if op == "avgpool2d":
                outs += [b.op(op, x, count_include_pad=c, **attrs) for c in (0, 1)]
            else:
                outs.append(b.op(op, x, **attrs))
        return outs

    return build


def _blocked_pool(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        x = b.input(f"{p}x", (1, 5, 9, 8))
        xb = b.op("to_blocked", x, block=16)
        attrs = {"kernel": (3, 3), "stride": (2, 2), "padding": (1, 1), "ceil_mode": 1}
        extra = {"count_include_pad": 0} if op.startswith("avg") else {}
        return [b.op("from_blocked", b.op(op, xb, **attrs, **extra), channels=5)]

    return build


def _blocked_conv(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        x = b.input(f"{p}x", (1, 5, 9, 8))
        w = _conv_w(b, f"{p}w", (7, 5, 3, 3), 3)
        xb, wb = b.op("to_blocked", x, block=16), b.op("blocked_weight", w, block=16)
        attrs = {"stride": (1, 2), "padding": (1, 1)}
        if op == "conv2d_blocked":
            return [b.op("from_blocked", b.op(op, xb, wb, **attrs), channels=7)]
        bias = _w(b, f"{p}b", torch.randn(7, generator=_gen(4)))
        return [b.op("from_blocked", b.op(op, xb, wb, bias, act=act, **attrs), channels=7) for act in ACTS]

    return build


def _blocked_layout(b: GraphBuilder, p: str) -> list[Value]:
    x = b.input(f"{p}x", (2, 5, 3, 4))
    xb = b.op("to_blocked", x, block=16)
    wb = b.op("blocked_weight", b.input(f"{p}w", (7, 5, 3, 3)), block=16)
    return [xb, b.op("from_blocked", xb, channels=5), wb]


def _winograd(b: GraphBuilder, p: str) -> list[Value]:
    x = b.input(f"{p}x", (2, 3, 7, 6))
    w = _conv_w(b, f"{p}w", (4, 3, 3, 3), 5)
    u = b.op("winograd_weight", w)
    outs = [u, b.op("winograd_weight", b.input(f"{p}wi", (4, 3, 3, 3)))]
    for pad in (0, 1):
        vi = b.op("winograd_input", x, padding=(pad, pad))
        vt = b.op("winograd_input_t", x, padding=(pad, pad))
        out = (7 + 2 * pad - 2, 6 + 2 * pad - 2)
        m = b.op("matmul", vi, u)
        mt = b.op("matmul_at", vt, u)
        bias = _w(b, f"{p}b{pad}", torch.randn(4, generator=_gen(6 + pad)))
        outs += [vi, vt, b.op("winograd_output", m, out=out), b.op("winograd_output", mt, out=out)]
        outs += [b.op("winograd_output_bias_act", m, bias, out=out, act=act) for act in ACTS]
    return outs


def _norm(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        g = _gen(len(op))
        if op == "batchnorm":
            x = b.input(f"{p}x", (2, 5, 3, 4))
            consts = [_w(b, f"{p}{k}", torch.randn(5, generator=g)) for k in "wbm"]
            var = _w(b, f"{p}v", torch.rand(5, generator=g) + 0.5)
            ins = [b.input(f"{p}i{k}", (5,)) for k in "wbm"]
            return [b.op(op, x, *consts, var, eps=1e-5), b.op(op, x, *ins, var, eps=1e-3)]
        if op == "layernorm":
            x = b.input(f"{p}x", (3, 4, 9))
            return [
                b.op(op, x, _w(b, f"{p}w", torch.randn(9, generator=g)), _w(b, f"{p}b", torch.randn(9, generator=g)))
            ]
        if op == "rmsnorm":
            x = b.input(f"{p}x", (3, 4, 9))
            return [b.op(op, x, _w(b, f"{p}w", torch.randn(9, generator=g)), eps=1e-6)]
        if op == "lrn":  # odd and even windows, one wider than the channels; rank 4 and 3
            x, y = b.input(f"{p}x", (2, 7, 3, 5)), b.input(f"{p}y", (1, 4, 9))
            return [
                b.op(op, x, size=5, alpha=1e-2, beta=0.75, bias=2.0),
                b.op(op, x, size=4, alpha=0.5, beta=0.5, bias=1.0),
                b.op(op, y, size=9, alpha=1e-4, beta=0.75, bias=1.0),
            ]
        if op == "groupnorm":
            x = b.input(f"{p}x", (2, 6, 3, 4))
            w, bb = _w(b, f"{p}w", torch.randn(6, generator=g)), _w(b, f"{p}b", torch.randn(6, generator=g))
            return [b.op(op, x, w, bb, num_groups=n, eps=1e-5) for n in (1, 3, 6)]
        assert op == "softmax"
        x = b.input(f"{p}x", (3, 4, 9))
        return [b.op(op, x, axis=a) for a in (0, 1, 2, -1)]

    return build


def _layout(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        x = b.input(f"{p}x", (2, 3, 4, 5))
        if op == "transpose":
            return [b.op(op, x, perm=(0, 2, 3, 1)), b.op(op, x, perm=(3, 2, 1, 0))]
        if op == "reshape":
            return [b.op(op, x, shape=(6, 20)), b.op(op, x, shape=(120,))]
        if op == "concat":
            y = b.input(f"{p}y", (2, 1, 4, 5))
            return [b.op(op, x, y, x, axis=1), b.op(op, x, x, axis=3)]
        if op == "split":
            return b.split(x, 2, (1, 3))
        if op == "slice":
            return [b.op(op, x, axis=3, start=1, end=4), b.op(op, x, axis=0, start=1, end=2)]
        if op == "expand":
            y = b.input(f"{p}y", (1, 3, 1, 5))
            return [b.op(op, y, shape=(2, 3, 4, 5))]
        if op == "pad":
            return [b.op(op, x, pads=(0, 1, 2, 0, 1, 0, 0, 2), value=v) for v in (0.0, -1.5)]
        if op == "pad2d":
            return [b.op(op, x, pads=(1, 0, 2, 1))]
        assert op == "resize"
        outs = []
        for size in ((7, 3), (4, 10)):
            for mode in ("nearest", "bilinear"):
                outs += [b.op(op, x, size=size, mode=mode, align_corners=a) for a in (0, 1)]
            for coord in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"):
                outs.append(b.op(op, x, size=size, mode="bilinear", coord=coord))
            for nm in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
                outs.append(b.op(op, x, size=size, mode="nearest", coord="asymmetric", nearest_mode=nm))
        return outs

    return build


def _indexing(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        if op == "embedding":
            return [b.op(op, b.input(f"{p}t", (7, 5)), b.input(f"{p}i", (2, 3), dtype="int64"))]
        x = b.input(f"{p}x", (4, 5, 3))
        if op == "index_select":
            return [b.op(op, x, b.input(f"{p}i{a}", (6,), dtype="int64"), axis=a) for a in (0, 1, 2)]
        return [b.op(op, x, b.input(f"{p}i{a}", (3, 4, 2), dtype="int64"), axis=a) for a in (0, 1, 2)]

    return build


def _select(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        x, y = b.input(f"{p}x", (3, 7)), b.input(f"{p}y", (1, 7))
        m, n = b.input(f"{p}m", (3, 7), dtype="bool"), b.input(f"{p}n", (3, 1), dtype="bool")
        if op == "where":
            i = b.input(f"{p}i", (3, 7), dtype="int64")
            return [b.op(op, m, x, y), b.op(op, n, x, y), b.op("cast", b.op(op, m, i, i), dtype="float32")]
        if op == "masked_fill":
            return [b.op(op, x, m, value=v) for v in (0.0, -1e9, float("-inf"))] + [b.op(op, x, n, value=2.5)]
        if op == "logical_not":
            return [b.op(op, m)]
        if op in ("logical_and", "logical_or"):
            return [b.op(op, m, n)]
        assert op == "cast"
        i = b.input(f"{p}i", (3, 7), dtype="int64")
        big = b.op("smul", x, scalar=200.0)
        return [
            b.op(op, x, dtype="int64"),
            b.op(op, x, dtype="bool"),
            b.op(op, m, dtype="float32"),
            b.op(op, i, dtype="float32"),
            b.op(op, m, dtype="int64"),
            b.op(op, i, dtype="bool"),
            b.op(op, x, dtype="float32"),
            *(b.op(op, b.op(op, v, dtype=h), dtype="float32") for h in HALF for v in (x, i, m)),
            *(b.op(op, b.op("transpose", b.op(op, x, dtype=h), perm=(1, 0)), dtype=h) for h in HALF),
            # the stored integers: saturated (x * 200 reaches past a byte's range), read back exactly
            *(b.op(op, b.op(op, v, dtype=d), dtype="float32") for d in STORED_INT for v in (big, i, m)),
            *(b.op(op, b.op("transpose", b.op(op, big, dtype=d), perm=(1, 0)), dtype=d) for d in STORED_INT),
        ]

    return build


def _contraction(op: str) -> Case:
    def build(b: GraphBuilder, p: str) -> list[Value]:
        if op == "matmul":
            a, c = b.input(f"{p}a", (2, 5, 7)), b.input(f"{p}c", (1, 7, 6))
            return [
                b.op(op, a, c),
                b.op(op, b.input(f"{p}m", (5, 7)), _w(b, f"{p}w", torch.randn(7, 3, generator=_gen(8)))),
            ]
        if op == "matmul_at":
            return [b.op(op, b.input(f"{p}a", (2, 7, 5)), b.input(f"{p}c", (1, 7, 6)))]
        if op == "matmul_integer":  # packed constant weights (K a multiple of 4), and the plain loop
            q = b.input(f"{p}q", (2, 5, 12), dtype="uint8")
            w = _w(b, f"{p}w", torch.randint(-128, 128, (1, 12, 50), generator=_gen(11)).to(torch.int8))
            r = b.input(f"{p}r", (1, 12, 3), dtype="int8")
            return [b.op(op, q, w, a_zero_point=131), b.op(op, q, r), b.op(op, q, r, a_zero_point=255)]
        if op == "conv2d_integer":  # im2col panels (constant weights, one group), and the plain loop
            x = b.input(f"{p}x", (1, 5, 7, 6), dtype="uint8")
            w = _w(b, f"{p}w", torch.randint(-128, 128, (6, 5, 3, 3), generator=_gen(12)).to(torch.int8))
            d = _w(b, f"{p}d", torch.randint(-128, 128, (5, 1, 3, 3), generator=_gen(13)).to(torch.int8))
            return [
                b.op(op, x, w, padding=(1, 1), stride=(2, 1), a_zero_point=97),
                b.op(op, x, d, padding=(1, 0), groups=5, a_zero_point=3),
            ]
        assert op == "linear"
        x = b.input(f"{p}x", (2, 3, 7))
        return [
            b.op(
                op,
                x,
                _w(b, f"{p}w", torch.randn(5, 7, generator=_gen(9))),
                _w(b, f"{p}b", torch.randn(5, generator=_gen(10))),
            )
        ]

    return build


CASES: dict[str, Case] = {
    **{op: _unary(op) for op in UNARY_FLOAT},
    "smul": lambda b, p: [b.op("smul", x, scalar=s) for x in [b.input(f"{p}x", (3, 7))] for s in (-2.5, 0.0, 1e-3)],
    "clamp": lambda b, p: [
        b.op("clamp", x, min=lo, max=hi) for x in [b.input(f"{p}x", (3, 7))] for lo, hi in ((-0.5, 1.0), (0.0, 0.0))
    ],
    "pow": lambda b, p: [
        b.op("pow", x, exponent=e)
        for x in [b.input(f"{p}x", (3, 7))]
        for e in (2.0, 3.0, 0.5, -0.5, -1.0, 1.5, -2.0, 5.0, -5.0, 0.0)
    ],
    **{op: _binary(op) for op in BINARY_FLOAT},
    "mod": lambda b, p: (
        [
            b.op("mod", x, y, mode=m)
            for x, y in [(b.input(f"{p}x", (3, 7)), b.input(f"{p}y", (3, 7)))]
            for m in ("floor", "trunc")
        ]
        + _int_binary("mod")(b, p + "i")
    ),
    "idiv": _int_binary("idiv"),
    **{op: _compare(op) for op in COMPARE},
    **{op: _select(op) for op in ("where", "masked_fill", "logical_not", "logical_and", "logical_or", "cast")},
    **{
        op: _layout(op)
        for op in ("transpose", "reshape", "concat", "split", "slice", "expand", "pad", "pad2d", "resize")
    },
    **{op: _contraction(op) for op in ("matmul", "matmul_at", "matmul_integer", "conv2d_integer", "linear")},
    "conv2d": _conv("conv2d"),
    "conv2d_bias_act": _conv("conv2d_bias_act"),
    "conv2d_im2col": _conv("conv2d_im2col"),
    "conv2d_im2col_bias_act": _conv("conv2d_im2col_bias_act"),
    "matmul_bias_act": _matmul_bias_act,
    **{op: _pool(op) for op in ("maxpool2d", "avgpool2d")},
    "global_avgpool": lambda b, p: [b.op("global_avgpool", b.input(f"{p}x", (2, 3, 5, 7)))],
    "adaptive_avgpool": lambda b, p: [
        b.op("adaptive_avgpool", x, output_size=s)
        for x in [b.input(f"{p}x", (2, 3, 7, 5))]
        for s in ((3, 2), (1, 1), (7, 5), (4, 8))
    ],
    **{op: _norm(op) for op in ("batchnorm", "layernorm", "softmax", "groupnorm", "rmsnorm", "lrn")},
    **{op: _reduce(op) for op in REDUCE},
    **{op: _indexing(op) for op in ("embedding", "index_select", "gather")},
    **{
        op: _winograd
        for op in (
            "winograd_weight",
            "winograd_input",
            "winograd_input_t",
            "winograd_output",
            "winograd_output_bias_act",
        )
    },
    **{op: _blocked_layout for op in ("to_blocked", "from_blocked", "blocked_weight")},
    **{op: _blocked_conv(op) for op in ("conv2d_blocked", "conv2d_blocked_bias_act")},
    **{op: _blocked_pool(op) for op in ("maxpool2d_blocked", "avgpool2d_blocked")},
}

# int64 "add"/"sub"/... and the comparisons' int forms ride along with their float cases
for _op in ("add", "sub", "mul", "maximum", "minimum"):
    _float = CASES[_op]
    CASES[_op] = lambda b, p, f=_float, o=_op: f(b, p) + _int_binary(o)(b, p + "i")


def _group(op: str) -> str:
    """Which graph an op's cases are compiled in: a few graphs, one compile each."""
    g = OPS[op].group
    if g is Group.ELEMENTWISE:
        return "elementwise"
    if g in (Group.CONTRACTION, Group.POOLING) or op.startswith(("winograd", "to_blocked", "from_blocked", "blocked")):
        return "contraction"
    return "other"


def _build(ops: list[str], name: str, lite: bool = False) -> tuple[Graph, dict[str, slice]]:
    """One graph holding every case of ``ops``; ``lite``: only each case's first output (one configuration
    per op: the fast tier; unused nodes are not compiled)."""
    b = GraphBuilder(name)
    outs: list[Value] = []
    where: dict[str, slice] = {}
    done: set[int] = set()
    for op in ops:
        fn = CASES[op]
        if id(fn) in done:  # one builder shared by several ops (winograd, blocked layout)
            continue
        done.add(id(fn))
        start = len(outs)
        made = fn(b, f"{op}_")
        outs += made[:1] if lite else made
        where[op] = slice(start, len(outs))
    return b.build(outs), where


def test_cases_cover_every_lowered_op():
    from lower.ops_to_loops import LOWERINGS

    lowered = {op for op in OPS if op in LOWERINGS}
    assert {op for op in OPS if op not in LOWERINGS} == set(NO_LOWERING)
    assert all(OPS[op].group is Group.SOURCE for op in NO_LOWERING)
    assert set(CASES) == lowered, (sorted(lowered - set(CASES)), sorted(set(CASES) - lowered))


GROUPS = sorted({_group(op) for op in CASES})


def _check(g: Graph, where: dict[str, slice], inputs: dict[str, torch.Tensor]) -> list[str]:
    run = compile_graph(g, "llvm", threads=1)
    got = [t.cpu() for t in run(inputs)]
    ref = g.run(inputs)
    bad = []
    for op, sl in where.items():
        c = compare_all(ref[sl], got[sl])
        if not c.close:
            bad.append(f"{op}: {c.why}")
    return bad


def _random_agree(group: str, lite: bool) -> None:
    ops = [op for op in CASES if _group(op) == group]
    g, where = _build(ops, f"interp_vs_compiled_{group}", lite)
    bad: list[str] = []
    for seed in (0, 1):
        bad += [f"seed {seed}: {m}" for m in _check(g, where, g.random_inputs(seed))]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("group", GROUPS)
def test_random_inputs_agree(group):
    """Every lowered op in one configuration, ordinary random inputs (normal floats, in-range indices,
    random masks)."""
    _random_agree(group, lite=True)


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS)
def test_random_inputs_agree_every_configuration(group):
    """Every case of every lowered op (strides, groups, dilations, activations, modes, axes)."""
    _random_agree(group, lite=False)


# ---------------------------------------------------------------- extreme values
TINY = 1e-40  # a float32 denormal
EXTREMES = [
    0.0, -0.0, TINY, -TINY, 1e-30, -1e-30, 1e-7, -1e-7, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 10.0, -10.0, 88.0, -88.0,
    89.0, -89.0, 1e4, -1e4, 1e10, -1e10, 1e30, -1e30, 3e38, -3e38, math.inf, -math.inf, math.nan,
]  # fmt: skip


def _per_position(
    op: str, ref: torch.Tensor, got: torch.Tensor, xs: list[torch.Tensor], exact: torch.Tensor | None = None
) -> list[str]:
    """compare's rule applied to each position alone: relative for large values, absolute near 0.

    ``exact``: the op evaluated in float64 and rounded to float32.  Where the interpreter's float32 kernel
    overflows and the compiled one does not, the compiled value may be that one instead: torch's AVX-512
    GELU gives inf for gelu_erf(3e38) and NaN for gelu_erf(inf) (its AVX2 path and the AVX2 kernels agreed
    on those), the AVX-512 kernels give 3e38 and inf, which are right.
    """
    bad = []
    for idx in range(ref.numel()):
        a, c = ref.reshape(-1)[idx : idx + 1], got.reshape(-1)[idx : idx + 1]
        r = compare(a, c)
        if not r.close and exact is not None and not torch.isfinite(a).all():
            r = compare(exact.reshape(-1)[idx : idx + 1], c)
        if not r.close:
            args = ", ".join(f"{float(x.reshape(-1)[idx]):g}" for x in xs)
            bad.append(f"{op}({args}): interpreter {float(a):g}, compiled {float(c):g}")
    return bad


@pytest.mark.slow  # ~4 s: the full 31x31 grid for every binary op; the fast tier keeps the random and row checks
def test_extreme_elementwise_agree():
    """Unary and binary float elementwise ops on ±1e30 .. ±1e4, denormals, -0.0, inf and NaN."""
    n = len(EXTREMES)
    xs = torch.tensor(EXTREMES, dtype=torch.float32)
    b = GraphBuilder("extreme_elementwise")
    x, xr, yc = b.input("x", (n,)), b.input("xr", (1, n)), b.input("yc", (n, 1))
    outs: list[Value] = []
    names: list[tuple[str, int]] = []  # (op, arity)
    for op in UNARY_FLOAT:
        outs.append(b.op(op, x))
        names.append((op, 1))
    for label, attrs in [
        ("smul", {"scalar": -2.5}),
        ("clamp", {"min": -1.0, "max": 6.0}),
        *[("pow", {"exponent": e}) for e in (2.0, 3.0, 0.5, -0.5, -1.0, 1.5, -1.5, 5.0, -5.0, 0.0)],
    ]:
        outs.append(b.op(label, x, **attrs))
        names.append((f"{label}{attrs}", 1))
    for op in BINARY_FLOAT + COMPARE:
        outs.append(b.op(op, xr, yc))
        names.append((op, 2))
    for mode in ("floor", "trunc"):
        outs.append(b.op("mod", xr, yc, mode=mode))
        names.append((f"mod[{mode}]", 2))
    outs.append(b.op("masked_fill", xr, b.op("gt", yc, xr), value=-1e9))
    names.append(("masked_fill", 2))
    outs.append(b.op("where", b.op("le", yc, xr), xr, yc))
    names.append(("where", 2))
    outs.append(b.op("cast", x, dtype="bool"))
    names.append(("cast[bool]", 1))
    for h in HALF:  # rounded to each half type and read back: overflow to inf, subnormals, NaN, ties to even
        outs.append(b.op("cast", b.op("cast", x, dtype=h), dtype="float32"))
        names.append((f"cast[{h}]", 1))
    for d in STORED_INT:  # saturated to each stored integer and read back: NaN to 0, +-inf to the bounds
        outs.append(b.op("cast", b.op("cast", x, dtype=d), dtype="float32"))
        names.append((f"cast[{d}]", 1))
    g = b.build(outs)
    inputs = {"x": xs, "xr": xs.reshape(1, n), "yc": xs.reshape(n, 1)}
    run = compile_graph(g, "llvm", threads=1)
    got = run(inputs)
    ref = g.run(inputs)
    bad: list[str] = []
    for (op, arity), r, c in zip(names, ref, got, strict=True):
        if arity == 1:
            d = OPS[op] if op in UNARY_FLOAT else None
            exact = d.ref([xs.double()], d.normalize_attrs({}))[0].float() if d is not None else None
            bad += _per_position(op, r, c, [xs], exact)
        else:
            grid = torch.broadcast_tensors(inputs["xr"], inputs["yc"])
            bad += _per_position(op, r, c, list(grid))
    assert not bad, f"{len(bad)} disagreements:\n" + "\n".join(bad[:60])


def _big_rows(scale: float, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    return torch.randn(shape, generator=_gen(seed)) * scale


@pytest.mark.parametrize("scale", [1e4, 1e15, 1e30])
def test_extreme_rows_agree(scale):
    """Softmax (large logits: the max subtraction), the norms, reductions and pools on large magnitudes,
    a row holding -inf, and rows of tiny values."""
    b = GraphBuilder("extreme_rows")
    x = b.input("x", (2, 3, 5, 9))
    t = b.input("t", (2, 3, 5, 9))  # tiny values
    g_ = _gen(3)
    lw, lb = _w(b, "lw", torch.randn(9, generator=g_)), _w(b, "lb", torch.randn(9, generator=g_))
    gw, gb = _w(b, "gw", torch.randn(3, generator=g_)), _w(b, "gb", torch.randn(3, generator=g_))
    outs: dict[str, list[Value]] = {
        "softmax": [b.op("softmax", v, axis=a) for v in (x, t) for a in (1, 3)],
        "layernorm": [b.op("layernorm", v, lw, lb, eps=1e-5) for v in (x, t)],
        "rmsnorm": [b.op("rmsnorm", v, lw, eps=1e-6) for v in (x, t)],
        "groupnorm": [b.op("groupnorm", v, gw, gb, num_groups=3, eps=1e-5) for v in (x, t)],
        "maxpool2d": [b.op("maxpool2d", x, kernel=(3, 3), stride=(2, 2), padding=(1, 1))],
        "avgpool2d": [b.op("avgpool2d", x, kernel=(3, 3), stride=(2, 2), padding=(1, 1), count_include_pad=0)],
        "global_avgpool": [b.op("global_avgpool", x)],
        **{op: [b.op(op, x, axes=(3,), keepdim=0)] for op in REDUCE if op != "reduce_prod"},
        "reduce_prod": [b.op("reduce_prod", t, axes=(3,), keepdim=0)],
    }
    flat = [v for vs in outs.values() for v in vs]
    g = b.build(flat)
    xv = _big_rows(scale, (2, 3, 5, 9), 0)
    xv[0, 0, 0, 3] = -math.inf  # a masked logit
    xv[1, 2, 4] = scale  # a constant row: softmax uniform, variance 0
    tv = _big_rows(1e-20, (2, 3, 5, 9), 1)
    inputs = {"x": xv, "t": tv}
    run = compile_graph(g, "llvm", threads=1)
    got = run(inputs)
    ref = g.run(inputs)
    bad, k = [], 0
    for op, vs in outs.items():
        c = compare_all(ref[k : k + len(vs)], got[k : k + len(vs)])
        if not c.close:
            bad.append(f"{op}: {c.why}")
        k += len(vs)
    assert not bad, "\n".join(bad)
