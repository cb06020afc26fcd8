"""Lower one graph node to loop IR: one function per op group, looked up by op name.

Each lowering gets the node, its input and output buffers and a ``LowerCtx``
and returns a statement made of ``Stage``s.  The result is a plain, correct
loop nest (no schedule); ``lower.schedule`` makes it fast.

Contractions (matmul, linear, conv2d) all lower to one *batch-GEMM form* so
that one schedule recipe serves them all::

    // stage conv3.init
    for n, g, i, j:       C(n, g, i, j) = init
    // stage conv3
    for n, g, i, j, k:    C(...) = C(...) + A(n, g, i, k) * B(n, g, k, j)

(i: output rows, j: output columns, k: reduction); ``LowerCtx.gemm`` records
which loops play which role.  conv2d is an implicit im2col: ``B`` indexes the
input through ``k -> (c, kh, kw)`` and ``j -> (oh, ow)`` with bounds checks
for padding.

Anything that cannot be lowered raises ``LoweringError`` naming the node.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from lower.ir import (
    BOOL,
    F32,
    I64,
    Allocate,
    Bin,
    Buffer,
    Cast,
    Expr,
    FloatImm,
    For,
    IntImm,
    Select,
    Stage,
    Stmt,
    Store,
    Var,
    call,
    const,
    emax,
    emin,
    eq,
    ge,
    gt,
    land,
    le,
    loops,
    lt,
    ne,
    seq,
    simplify,
    simplify_stmt,
)
from rewrite.ir.errors import LoweringError
from rewrite.ir.graph import Node
from rewrite.ir.ops import OPS, Group

NEG_INF = float("-inf")


class Namer:
    """Unique loop-variable and buffer names within one kernel."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def name(self, base: str) -> str:
        if base not in self.used:
            self.used.add(base)
            return base
        k = 1
        while f"{base}_{k}" in self.used:
            k += 1
        self.used.add(f"{base}_{k}")
        return f"{base}_{k}"

    def var(self, base: str) -> Var:
        return Var(self.name(base))


@dataclass
class GemmInfo:
    """Roles of the loops of a contraction stage (see module docstring)."""

    stage: str
    init_stage: str
    batch: list[str]
    i: str
    j: str
    k: str
    out: str  # output buffer name
    m: int
    n: int
    kdim: int
    a_buf: str  # buffer the A operand loads (for packing decisions)
    b_buf: str
    init_vars: list[Var] = field(default_factory=list)  # loops of the init stage: batch..., i, j
    init_extents: list[int] = field(default_factory=list)
    c_index: tuple[Expr, ...] = ()  # output index over init_vars
    post: list[str] = field(default_factory=list)  # stages in (batch, i, j) coordinates run after the update
    direct: bool = False  # a direct convolution (see lower_conv2d), not the batch-GEMM form


@dataclass
class LowerCtx:
    node: Node
    namer: Namer = field(default_factory=Namer)
    consts: dict[str, torch.Tensor] = field(default_factory=dict)  # known constant buffers, by buffer name
    new_consts: dict[str, torch.Tensor] = field(default_factory=dict)  # constants derived while lowering
    gemm: GemmInfo | None = None

    @property
    def tag(self) -> str:
        return f"{self.node.op}{self.node.id}"

    def var(self, base: str) -> Var:
        return self.namer.var(base)

    def error(self, msg: str) -> LoweringError:
        return LoweringError(f"{self.node.describe()}: {msg}")


LowerFn = Callable[[Node, list[Buffer], list[Buffer], LowerCtx], Stmt]
LOWERINGS: dict[str, LowerFn] = {}


def lowering(*ops: str) -> Callable[[LowerFn], LowerFn]:
    def deco(fn: LowerFn) -> LowerFn:
        for op in ops:
            LOWERINGS[op] = fn
        return fn

    return deco


def lower_node(node: Node, ins: Sequence[Buffer], outs: Sequence[Buffer], ctx: LowerCtx) -> Stmt:
    """The loop nest computing ``node``'s outputs from its inputs."""
    fn = LOWERINGS.get(node.op)
    if fn is None:
        raise LoweringError(f"{node.describe()}: no lowering for op '{node.op}'")
    for b, s in zip(list(ins) + list(outs), [None] * len(ins) + list(node.shapes), strict=False):
        if s is not None and tuple(b.shape) != tuple(s):
            raise LoweringError(f"{node.describe()}: buffer {b.name}{list(b.shape)} does not match shape {s}")
    try:
        return simplify_stmt(fn(node, list(ins), list(outs), ctx))
    except LoweringError as e:
        if node.describe() in str(e):
            raise
        raise LoweringError(f"{node.describe()}: {e}") from None


def loop_vars(ctx: LowerCtx, shape: Sequence[int], base: str = "i") -> list[Var]:
    return [ctx.var(f"{base}{d}") for d in range(len(shape))]


def bcast_index(in_shape: Sequence[int], out_shape: Sequence[int], vs: Sequence[Expr]) -> tuple[Expr, ...]:
    """Index of an input broadcast (equal ranks) to ``out_shape``."""
    return tuple(IntImm(0) if s == 1 and o != 1 else v for s, o, v in zip(in_shape, out_shape, vs, strict=False))


# ============================================================== elementwise
def _gelu(x: Expr) -> Expr:
    return call("gelu_tanh", x)


UNARY: dict[str, Callable[[Expr, dict], Expr]] = {
    "relu": lambda x, a: emax(x, 0.0),
    "sigmoid": lambda x, a: call("sigmoid", x),
    "tanh": lambda x, a: call("tanh", x),
    "gelu": lambda x, a: _gelu(x),
    "exp": lambda x, a: call("exp", x),
    "identity": lambda x, a: x,
    "smul": lambda x, a: x * const(a["scalar"]),
    "rsqrt": lambda x, a: call("rsqrt", x + const(a.get("eps", 0.0))),
}
ACTIVATIONS: dict[str, Callable[[Expr], Expr]] = {
    "none": lambda x: x,
    "relu": lambda x: emax(x, 0.0),
    "sigmoid": lambda x: call("sigmoid", x),
    "tanh": lambda x: call("tanh", x),
    "gelu": _gelu,
}
BINARY: dict[str, Callable[[Expr, Expr], Expr]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y,
}


def elementwise_expr(op: str, args: Sequence[Expr], attrs: dict) -> Expr:
    if op in UNARY:
        return UNARY[op](args[0], attrs)
    if op in BINARY:
        return BINARY[op](args[0], args[1])
    raise LoweringError(f"'{op}' is not an elementwise op")


@lowering(*UNARY, *BINARY)
def lower_elementwise(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    out = outs[0]
    vs = loop_vars(ctx, out.shape)
    args = [x[bcast_index(x.shape, out.shape, vs)] for x in ins]
    val = elementwise_expr(node.op, args, dict(node.attrs))
    return Stage(ctx.tag, loops(list(zip(vs, out.shape, strict=False)), Store(out, tuple(vs), val)))


def register_unary(op: str, expr: Callable[[Expr, dict], Expr]) -> None:
    """Lower a unary elementwise op added with ``register_op``: ``expr(x, attrs)`` is its value.

    One entry serves its own kernel and fusion (epilogues and prologues inline it).
    """
    if op in LOWERINGS:
        raise LoweringError(f"op '{op}' already has a lowering")
    UNARY[op] = expr
    LOWERINGS[op] = lower_elementwise


def unregister_lowering(op: str) -> None:
    """Remove a lowering added at run time (tests clean up their toy ops)."""
    UNARY.pop(op, None)
    LOWERINGS.pop(op, None)


# ============================================================== normalization
@lowering("batchnorm")
def lower_batchnorm(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, w, b, mean, var = ins
    out = outs[0]
    eps = node.attrs["eps"]
    vs = loop_vars(ctx, out.shape)
    c = vs[1]
    if all(p.name in ctx.consts for p in (w, b, mean, var)):
        # inference BN is an affine map per channel: fold it into two constants once
        tw, tb, tm, tv = (ctx.consts[p.name].double() for p in (w, b, mean, var))
        scale = tw / torch.sqrt(tv + eps)
        shift = tb - tm * scale
        sb = Buffer(ctx.namer.name(f"{ctx.tag}_scale"), (out.shape[1],))
        tb_ = Buffer(ctx.namer.name(f"{ctx.tag}_shift"), (out.shape[1],))
        ctx.new_consts[sb.name] = scale.float()
        ctx.new_consts[tb_.name] = shift.float()
        val = x[tuple(vs)] * sb[c] + tb_[c]
    else:
        val = (x[tuple(vs)] - mean[c]) * call("rsqrt", var[c] + const(eps)) * w[c] + b[c]
    return Stage(ctx.tag, loops(list(zip(vs, out.shape, strict=False)), Store(out, tuple(vs), val)))


def _rows(ctx: LowerCtx, shape: Sequence[int], axis: int) -> tuple[list[Var], Callable[[Expr], tuple[Expr, ...]]]:
    """Loop vars over every dim but ``axis`` and a function building a full index."""
    outer = [ctx.var(f"i{d}") for d in range(len(shape)) if d != axis]

    def index(j: Expr) -> tuple[Expr, ...]:
        it = iter(outer)
        return tuple(j if d == axis else next(it) for d in range(len(shape)))

    return outer, index


def _local(ctx: LowerCtx, base: str) -> Buffer:
    return Buffer(ctx.namer.name(base), (1,), scope="local")


@lowering("softmax")
def lower_softmax(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, out = ins[0], outs[0]
    axis = node.attrs["axis"] % x.rank
    n = x.shape[axis]
    outer, index = _rows(ctx, x.shape, axis)
    mx, sm = _local(ctx, "maxv"), _local(ctx, "sumv")
    j1, j2, j3 = ctx.var("j"), ctx.var("j"), ctx.var("j")
    z = IntImm(0)
    body = seq(
        Store(mx, (z,), const(NEG_INF)),
        For(j1, IntImm(n), Store(mx, (z,), emax(mx[z], x[index(j1)]))),
        Store(sm, (z,), const(0.0)),
        For(
            j2,
            IntImm(n),
            seq(Store(out, index(j2), call("exp", x[index(j2)] - mx[z])), Store(sm, (z,), sm[z] + out[index(j2)])),
        ),
        Store(sm, (z,), const(1.0) / sm[z]),
        For(j3, IntImm(n), Store(out, index(j3), out[index(j3)] * sm[z])),
    )
    body = Allocate(mx, Allocate(sm, body))
    return Stage(
        ctx.tag,
        loops([(v, x.shape[d]) for v, d in zip(outer, [d for d in range(x.rank) if d != axis], strict=False)], body),
    )


@lowering("layernorm")
def lower_layernorm(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, w, b = ins
    out = outs[0]
    axis = x.rank - 1
    n = x.shape[axis]
    outer, index = _rows(ctx, x.shape, axis)
    mean, var = _local(ctx, "mean"), _local(ctx, "rstd")
    j1, j2, j3 = ctx.var("j"), ctx.var("j"), ctx.var("j")
    z = IntImm(0)
    inv_n = const(1.0 / n)
    body = seq(
        Store(mean, (z,), const(0.0)),
        For(j1, IntImm(n), Store(mean, (z,), mean[z] + x[index(j1)])),
        Store(mean, (z,), mean[z] * inv_n),
        Store(var, (z,), const(0.0)),
        For(j2, IntImm(n), Store(var, (z,), var[z] + (x[index(j2)] - mean[z]) * (x[index(j2)] - mean[z]))),
        Store(var, (z,), call("rsqrt", var[z] * inv_n + const(node.attrs["eps"]))),
        For(j3, IntImm(n), Store(out, index(j3), (x[index(j3)] - mean[z]) * var[z] * w[j3] + b[j3])),
    )
    body = Allocate(mean, Allocate(var, body))
    return Stage(ctx.tag, loops([(v, x.shape[d]) for v, d in zip(outer, range(axis), strict=False)], body))


# ============================================================== pooling
def _window(o: Expr, k: Expr, size: int, kern: int, stride: int, pad: int) -> tuple[Expr, Expr]:
    """Input coordinate of window tap ``k`` of output ``o`` and whether it lies inside the input."""
    pos = o * stride - pad + k
    return pos, land(ge(pos, 0), lt(pos, size))


def _clamp(e: Expr, hi: int) -> Expr:
    return emin(emax(e, 0), hi)


@lowering("maxpool2d", "avgpool2d")
def lower_pool(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, out = ins[0], outs[0]
    a = node.attrs
    N, C, H, W = x.shape
    _, _, OH, OW = out.shape
    (KH, KW), (SH, SW), (PH, PW) = a["kernel"], a["stride"], a["padding"]
    n, c, oh, ow, kh, kw = (ctx.var(s) for s in ("n", "c", "oh", "ow", "kh", "kw"))
    ih, okh = _window(oh, kh, H, KH, SH, PH)
    iw, okw = _window(ow, kw, W, KW, SW, PW)
    inside = land(okh, okw)
    tap = x[n, c, _clamp(ih, H - 1), _clamp(iw, W - 1)]
    o = out[n, c, oh, ow]
    if node.op == "maxpool2d":
        init, upd, fin = const(NEG_INF), emax(o, Select(inside, tap, const(NEG_INF))), None
    else:
        init, upd = const(0.0), o + Select(inside, tap, const(0.0))
        hs, ws = oh * SH - PH, ow * SW - PW
        he, we = emin(hs + KH, H + PH), emin(ws + KW, W + PW)
        if not a["count_include_pad"]:
            hs, ws, he, we = emax(hs, 0), emax(ws, 0), emin(he, H), emin(we, W)
        count = Cast(F32, (he - hs) * (we - ws))
        fin = Store(out, (n, c, oh, ow), o / count)
    body = seq(
        Store(out, (n, c, oh, ow), init), For(kh, IntImm(KH), For(kw, IntImm(KW), Store(out, (n, c, oh, ow), upd))), fin
    )
    return Stage(ctx.tag, loops([(n, N), (c, C), (oh, OH), (ow, OW)], body))


@lowering("global_avgpool")
def lower_global_avgpool(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, out = ins[0], outs[0]
    N, C, H, W = x.shape
    n, c, h, w = (ctx.var(s) for s in ("n", "c", "h", "w"))
    z = IntImm(0)
    o = out[n, c, z, z]
    body = seq(
        Store(out, (n, c, z, z), const(0.0)),
        For(h, IntImm(H), For(w, IntImm(W), Store(out, (n, c, z, z), o + x[n, c, h, w]))),
        Store(out, (n, c, z, z), o * const(1.0 / (H * W))),
    )
    return Stage(ctx.tag, loops([(n, N), (c, C)], body))


# ============================================================== layout
def _copy(ctx: LowerCtx, name: str, out: Buffer, src: Callable[[list[Var]], Expr]) -> Stmt:
    vs = loop_vars(ctx, out.shape)
    return Stage(name, loops(list(zip(vs, out.shape, strict=False)), Store(out, tuple(vs), src(vs))))


@lowering("transpose")
def lower_transpose(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    perm = node.attrs["perm"]
    inv = [perm.index(d) for d in range(len(perm))]
    return _copy(ctx, ctx.tag, outs[0], lambda vs: ins[0][tuple(vs[inv[d]] for d in range(len(perm)))])


def unflatten(flat: Expr, shape: Sequence[int]) -> tuple[Expr, ...]:
    """Row-major multi-index of a flat offset."""
    idx = []
    for d in range(len(shape)):
        inner = math.prod(shape[d + 1 :])
        e = flat // inner if inner != 1 else flat
        idx.append(e % shape[d] if d > 0 else e)
    return tuple(idx)


def reshape_index(vs: Sequence[Expr], out_shape: Sequence[int], in_shape: Sequence[int]) -> tuple[Expr, ...]:
    flat: Expr = IntImm(0)
    stride = 1
    for v, s in zip(reversed(list(vs)), reversed(list(out_shape)), strict=False):
        flat = flat + v * stride
        stride *= s
    ranges = {v.name: (0, s - 1) for v, s in zip(vs, out_shape, strict=False) if isinstance(v, Var)}
    return tuple(simplify(e, ranges) for e in unflatten(simplify(flat, ranges), in_shape))


@lowering("reshape")
def lower_reshape(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    return _copy(ctx, ctx.tag, outs[0], lambda vs: ins[0][reshape_index(vs, outs[0].shape, ins[0].shape)])


def _shifted(vs: Sequence[Expr], axis: int, off: int) -> tuple[Expr, ...]:
    return tuple(v + off if d == axis and off else v for d, v in enumerate(vs))


def _shifted_load(src: Buffer, axis: int, off: int) -> Callable[[list[Var]], Expr]:
    """``vs -> src[vs, shifted by off along axis]``: the reads of one slice of ``src``."""
    return lambda vs: src[_shifted(vs, axis, off)]


@lowering("slice")
def lower_slice(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    ax = node.attrs["axis"] % ins[0].rank
    return _copy(ctx, ctx.tag, outs[0], _shifted_load(ins[0], ax, node.attrs["start"]))


@lowering("pad2d")
def lower_pad2d(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, out = ins[0], outs[0]
    top, _, left, _ = node.attrs["pads"]
    H, W = x.shape[-2], x.shape[-1]

    def src(vs):
        h, w = vs[-2] - top, vs[-1] - left
        ok = land(ge(h, 0), lt(h, H), ge(w, 0), lt(w, W))
        return Select(ok, x[(*vs[:-2], _clamp(h, H - 1), _clamp(w, W - 1))], const(0.0))

    return _copy(ctx, ctx.tag, out, src)


@lowering("split")
def lower_split(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    ax = node.attrs["axis"] % ins[0].rank
    parts, off = [], 0
    for k, out in enumerate(outs):
        parts.append(_copy(ctx, f"{ctx.tag}.{k}", out, _shifted_load(ins[0], ax, off)))
        off += out.shape[ax]
    return seq(*parts)


@lowering("concat")
def lower_concat(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    out = outs[0]
    ax = node.attrs["axis"] % out.rank
    parts, off = [], 0
    for k, x in enumerate(ins):
        vs = loop_vars(ctx, x.shape)
        parts.append(
            Stage(
                f"{ctx.tag}.{k}",
                loops(list(zip(vs, x.shape, strict=False)), Store(out, _shifted(vs, ax, off), x[tuple(vs)])),
            )
        )
        off += x.shape[ax]
    return seq(*parts)


# ============================================================== contraction
def _gemm(
    ctx: LowerCtx,
    out: Buffer,
    batch: list[tuple[Var, int]],
    m: int,
    n: int,
    kdim: int,
    c_idx: Callable[[list[Var], Var, Var], tuple[Expr, ...]],
    a_val: Callable[[list[Var], Var, Var], Expr],
    b_val: Callable[[list[Var], Var, Var], Expr],
    init: Callable[[list[Var], Var, Var], Expr],
    a_buf: str,
    b_buf: str,
    act: str = "none",
) -> Stmt:
    bv = [v for v, _ in batch]
    i0, j0 = ctx.var("i"), ctx.var("j")
    iv, jv, kv = ctx.var("i"), ctx.var("j"), ctx.var("k")
    init_name = f"{ctx.tag}.init"
    bv0 = [ctx.var(v.name) for v in bv]
    init_stage = Stage(
        init_name,
        loops(
            [*zip(bv0, [e for _, e in batch], strict=False), (i0, m), (j0, n)],
            Store(out, c_idx(bv0, i0, j0), init(bv0, i0, j0)),
        ),
    )
    cidx = c_idx(bv, iv, jv)
    upd = Store(out, cidx, out[cidx] + a_val(bv, iv, kv) * b_val(bv, kv, jv))
    main = Stage(ctx.tag, loops([*batch, (iv, m), (jv, n), (kv, kdim)], upd))
    ctx.gemm = GemmInfo(
        ctx.tag,
        init_name,
        [v.name for v in bv],
        iv.name,
        jv.name,
        kv.name,
        out.name,
        m,
        n,
        kdim,
        a_buf,
        b_buf,
        [*bv0, i0, j0],
        [*(e for _, e in batch), m, n],
        c_idx(bv0, i0, j0),
    )
    if act == "none":
        return seq(init_stage, main)
    if act not in ACTIVATIONS:
        raise ctx.error(f"unknown activation {act!r}")
    bv1 = [ctx.var(v.name) for v in bv]
    i1, j1 = ctx.var("i"), ctx.var("j")
    ci = c_idx(bv1, i1, j1)
    act_stage = Stage(
        f"{ctx.tag}.act",
        loops(
            [*zip(bv1, [e for _, e in batch], strict=False), (i1, m), (j1, n)],
            Store(out, ci, ACTIVATIONS[act](out[ci])),
        ),
    )
    ctx.gemm.post.append(act_stage.name)
    return seq(init_stage, main, act_stage)


@lowering("matmul", "matmul_bias_act")
def lower_matmul(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, y = ins[:2]
    out = outs[0]
    r = out.rank
    M, K, N = x.shape[-2], x.shape[-1], y.shape[-1]
    batch = [(ctx.var(f"b{d}"), out.shape[d]) for d in range(r - 2)]
    init: Callable[[list[Var], Var, Var], Expr]
    if node.op == "matmul_bias_act":
        bias = ins[2]
        init = lambda bv, i, j: bias[j]
    else:
        init = lambda bv, i, j: const(0.0)
    return _gemm(
        ctx,
        out,
        batch,
        M,
        N,
        K,
        lambda bv, i, j: (*bv, i, j),
        lambda bv, i, k: x[(*bcast_index(x.shape[:-2], out.shape[:-2], bv), i, k)],
        lambda bv, k, j: y[(*bcast_index(y.shape[:-2], out.shape[:-2], bv), k, j)],
        init,
        x.name,
        y.name,
        node.attrs.get("act", "none"),
    )


@lowering("linear")
def lower_linear(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, w, bias = ins
    out = outs[0]
    N, K = w.shape
    if x.rank == 1:
        return _gemm(
            ctx,
            out,
            [],
            1,
            N,
            K,
            lambda bv, i, j: (j,),
            lambda bv, i, k: x[k],
            lambda bv, k, j: w[j, k],
            lambda bv, i, j: bias[j],
            x.name,
            w.name,
        )
    batch = [(ctx.var(f"b{d}"), out.shape[d]) for d in range(out.rank - 2)]
    return _gemm(
        ctx,
        out,
        batch,
        x.shape[-2],
        N,
        K,
        lambda bv, i, j: (*bv, i, j),
        lambda bv, i, k: x[(*bv, i, k)],
        lambda bv, k, j: w[j, k],
        lambda bv, i, j: bias[j],
        x.name,
        w.name,
    )


DIRECT_CONV_MAX_OG = 4  # grouped convs with at most this many output channels per group go direct
DIRECT_CONV_MAX_SLICE = 2 << 20  # bytes of the padded input slice kept on the stack


@lowering("conv2d", "conv2d_bias_act")
def lower_conv2d(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, w = ins[:2]
    out = outs[0]
    a = node.attrs
    N, _, H, W = x.shape
    OC, Cg, KH, KW = w.shape
    _, _, OH, OW = out.shape
    G = a["groups"]
    Og = OC // G
    (SH, SW), (PH, PW), (DH, DW) = a["stride"], a["padding"], a["dilation"]
    HP, WP = (OH - 1) * SH + (KH - 1) * DH + 1, (OW - 1) * SW + (KW - 1) * DW + 1
    if G > 1 and Og <= DIRECT_CONV_MAX_OG and 4 * Cg * HP * WP <= DIRECT_CONV_MAX_SLICE:
        return _direct_conv(node, ins, outs, ctx)
    n, g = ctx.var("n"), ctx.var("g")

    def c_idx(bv, i, j):
        return (bv[0], bv[1] * Og + i, j // OW, j % OW)

    def kdecomp(k):
        return (k // KW) // KH, (k // KW) % KH, k % KW

    def a_val(bv, i, k):
        c, kh, kw = kdecomp(k)
        return w[bv[1] * Og + i, c, kh, kw]

    def b_val(bv, k, j):
        c, kh, kw = kdecomp(k)
        ih = (j // OW) * SH - PH + kh * DH
        iw = (j % OW) * SW - PW + kw * DW
        ok = land(ge(ih, 0), lt(ih, H), ge(iw, 0), lt(iw, W))
        tap = x[bv[0], bv[1] * Cg + c, _clamp(ih, H - 1), _clamp(iw, W - 1)]
        return Select(ok, tap, const(0.0))

    init: Callable[[list[Var], Var, Var], Expr]
    if node.op == "conv2d_bias_act":
        bias = ins[2]
        init = lambda bv, i, j: bias[bv[1] * Og + i]
    else:
        init = lambda bv, i, j: const(0.0)
    return _gemm(
        ctx,
        out,
        [(n, N), (g, G)],
        Og,
        OH * OW,
        Cg * KH * KW,
        c_idx,
        a_val,
        b_val,
        init,
        w.name,
        x.name,
        node.attrs.get("act", "none"),
    )


def _direct_conv(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Grouped convolution with few channels per group (depthwise, ResNeXt): a GEMM per group would be
    tiny and dominated by packing.  Per (n, group): copy the group's input channels into a zero-padded
    local slice (no bounds checks in the hot loop), then for every output row accumulate
    ``out[ow] += w[c, kh, kw] * xp[c, oh*s + kh*d, ow*s + kw*d]``::

        // stage conv.init: out = 0 (or bias)        for n0, g0, i0, oh0, ow0
        // stage conv:                               for n, g {
        //   stage conv.pad: xp[c, hp, wp] = x or 0      for c, hp, wp
        //   for i, oh, c, ow, kh, kw: out[...] += w[...] * xp[...]  }
    """
    x, w = ins[:2]
    out = outs[0]
    a = node.attrs
    N, _, H, W = x.shape
    OC, Cg, KH, KW = w.shape
    _, _, OH, OW = out.shape
    G = a["groups"]
    Og = OC // G
    (SH, SW), (PH, PW), (DH, DW) = a["stride"], a["padding"], a["dilation"]
    HP, WP = (OH - 1) * SH + (KH - 1) * DH + 1, (OW - 1) * SW + (KW - 1) * DW + 1
    xp = Buffer(ctx.namer.name(f"{ctx.tag}_xpad"), (Cg, HP, WP), scope="local")
    n, g, c0, hp, wp = (ctx.var(s) for s in ("n", "g", "c", "hp", "wp"))
    i, oh, c, ow, kh, kw = (ctx.var(s) for s in ("i", "oh", "c", "ow", "kh", "kw"))
    ih, iw = hp - PH, wp - PW
    ok = land(ge(ih, 0), lt(ih, H), ge(iw, 0), lt(iw, W))
    pad = Stage(
        f"{ctx.tag}.pad",
        loops(
            [(c0, Cg), (hp, HP), (wp, WP)],
            Store(xp, (c0, hp, wp), Select(ok, x[n, g * Cg + c0, _clamp(ih, H - 1), _clamp(iw, W - 1)], const(0.0))),
        ),
    )
    o = (n, g * Og + i, oh, ow)
    upd = Store(out, o, out[o] + w[g * Og + i, c, kh, kw] * xp[c, oh * SH + kh * DH, ow * SW + kw * DW])
    main = loops([(i, Og), (oh, OH), (c, Cg), (ow, OW), (kh, KH), (kw, KW)], upd)
    body = Stage(ctx.tag, loops([(n, N), (g, G)], Allocate(xp, seq(pad, main))))
    init_v: Callable[[Var, Var, Var], Expr]  # (n, group, i) -> the init value
    if node.op == "conv2d_bias_act":
        bias = ins[2]
        init_v = lambda nn, gg, ii: bias[gg * Og + ii]
    else:
        init_v = lambda nn, gg, ii: const(0.0)
    n0, g0, i0, oh0, ow0 = (ctx.var(s) for s in ("n", "g", "i", "oh", "ow"))
    cidx0 = (n0, g0 * Og + i0, oh0, ow0)
    init_name = f"{ctx.tag}.init"
    init = Stage(
        init_name, loops([(n0, N), (g0, G), (i0, Og), (oh0, OH), (ow0, OW)], Store(out, cidx0, init_v(n0, g0, i0)))
    )
    ctx.gemm = GemmInfo(
        ctx.tag,
        init_name,
        [n.name, g.name],
        i.name,
        ow.name,
        c.name,
        out.name,
        Og,
        OH * OW,
        Cg * KH * KW,
        w.name,
        x.name,
        [n0, g0, i0, oh0, ow0],
        [N, G, Og, OH, OW],
        cidx0,
        direct=True,
    )
    stages = [init, body]
    act = node.attrs.get("act", "none")
    if act != "none":
        if act not in ACTIVATIONS:
            raise ctx.error(f"unknown activation {act!r}")
        v1 = [ctx.var(s) for s in ("n", "g", "i", "oh", "ow")]
        ci = (v1[0], v1[1] * Og + v1[2], v1[3], v1[4])
        act_stage = Stage(
            f"{ctx.tag}.act",
            loops(list(zip(v1, [N, G, Og, OH, OW], strict=False)), Store(out, ci, ACTIVATIONS[act](out[ci]))),
        )
        ctx.gemm.post.append(act_stage.name)
        stages.append(act_stage)
    return seq(*stages)


# ============================================================== indexing, comparison, selection
# Value dtypes map onto the loop IR's: float32 -> f32, int64 -> i64, bool -> bool.
LOOP_DTYPE = {"float32": F32, "int64": I64, "bool": BOOL}
COMPARE: dict[str, Callable[[Expr, Expr], Expr]] = {"eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge}
LOGICAL: dict[str, Callable[..., Expr]] = {
    "logical_not": lambda x: eq(Cast(I64, x), IntImm(0)),
    "logical_and": lambda x, y: Bin("and", x, y),
    "logical_or": lambda x, y: Bin("or", x, y),
    "where": lambda c, x, y: Select(c, x, y),
}


@lowering(*COMPARE, *LOGICAL, "masked_fill", "cast")
def lower_select_ops(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Comparisons, boolean logic, where, masked_fill and cast: elementwise, so they fuse like add."""
    out = outs[0]
    vs = loop_vars(ctx, out.shape)
    args = [x[bcast_index(x.shape, out.shape, vs)] for x in ins]
    op = node.op
    if op in COMPARE:
        val = COMPARE[op](args[0], args[1])
    elif op in LOGICAL:
        val = LOGICAL[op](*args)
    elif op == "masked_fill":
        val = Select(args[1], const(node.attrs["value"]), args[0])
    else:
        val = Cast(LOOP_DTYPE[node.attrs["dtype"]], args[0])
    return Stage(ctx.tag, loops(list(zip(vs, out.shape, strict=False)), Store(out, tuple(vs), val)))


def _index(ix: Expr, size: int) -> Expr:
    """An int64 index clamped into [0, size): an index torch would reject never reads outside a buffer."""
    return _clamp(ix, size - 1)


@lowering("embedding", "index_select", "gather")
def lower_indexing(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, idx = ins
    out = outs[0]
    if node.op == "embedding":  # out[i..., d] = table[ids[i...], d]
        return _copy(ctx, ctx.tag, out, lambda vs: x[_index(idx[tuple(vs[:-1])], x.shape[0]), vs[-1]])
    ax = node.attrs["axis"] % x.rank
    if node.op == "index_select":  # out[.., j, ..] = x[.., idx[j], ..]
        pick = lambda vs: idx[vs[ax]]
    else:  # gather: out[i..] = x[i.. with idx[i..] along axis]
        pick = lambda vs: idx[tuple(vs)]
    return _copy(
        ctx,
        ctx.tag,
        out,
        lambda vs: x[tuple(_index(pick(vs), x.shape[ax]) if d == ax else v for d, v in enumerate(vs))],
    )


def check_coverage() -> list[str]:
    """Registry ops (other than sources) without a lowering: should be empty."""
    return [op for op, d in OPS.items() if d.group is not Group.SOURCE and op not in LOWERINGS]


# ============================================================== activations, reductions, norms, resize
def _hardsig(x: Expr) -> Expr:
    return emin(emax(x + const(3.0), 0.0), 6.0) / const(6.0)


def _erfc_pos(z: Expr) -> Expr:
    """erfc(z) for z >= 0 with relative error below 1.2e-7 (the Chebyshev fit of Numerical Recipes'
    ``erfcc``), so GELU keeps its relative accuracy in the negative tail."""
    t = const(1.0) / (const(1.0) + const(0.5) * z)
    coef = (
        -1.26551223,
        1.00002368,
        0.37409196,
        0.09678418,
        -0.18628806,
        0.27886807,
        -1.13520398,
        1.48851587,
        -0.82215223,
        0.17087277,
    )
    poly: Expr = const(coef[-1])
    for c in reversed(coef[:-1]):
        poly = const(c) + t * poly
    return t * call("exp", poly - z * z)


def _gelu_erf(x: Expr) -> Expr:
    """0.5 x (1 + erf(x / sqrt 2)) = x (1 - erfc(z) / 2) for x >= 0, x erfc(z) / 2 below (z = |x| / sqrt 2)."""
    c = _erfc_pos(call("abs", x) * const(1.0 / math.sqrt(2.0)))
    half = const(0.5)
    return Select(lt(x, const(0.0)), x * (half * c), x * (const(1.0) - half * c))


def _softplus(x: Expr) -> Expr:
    """log(1 + e^x), x itself above 20 (torch's threshold)."""
    return Select(gt(x, const(20.0)), x, call("log", const(1.0) + call("exp", x)))


def _pow(x: Expr, e: float) -> Expr:
    """Small integer exponents multiply (as torch's pow does for 2 and 3); 0.5 and -0.5 are roots."""
    if e == 0.5:
        return call("sqrt", x)
    if e == -0.5:
        return call("rsqrt", x)
    if e == int(e) and 0 <= e <= 4:
        out: Expr = const(1.0)
        for _ in range(int(e)):
            out = x if isinstance(out, FloatImm) else out * x
        return out
    if e == int(e) and -4 <= e < 0:
        return const(1.0) / _pow(x, -e)
    return call("exp", const(e) * call("log", x))  # NaN below zero, as torch for a fractional exponent


_MORE_UNARY: dict[str, Callable[[Expr, dict], Expr]] = {
    "hardswish": lambda x, a: x * _hardsig(x),
    "hardsigmoid": lambda x, a: _hardsig(x),
    "silu": lambda x, a: x * call("sigmoid", x),
    "mish": lambda x, a: x * call("tanh", _softplus(x)),
    "gelu_erf": lambda x, a: _gelu_erf(x),
    "log": lambda x, a: call("log", x),
    "sqrt": lambda x, a: call("sqrt", x),
    "neg": lambda x, a: x * const(-1.0),  # exact, and keeps the sign of zero
    "abs": lambda x, a: call("abs", x),
    "reciprocal": lambda x, a: const(1.0) / x,
    "sin": lambda x, a: call("sin", x),
    "cos": lambda x, a: call("cos", x),
    "clamp": lambda x, a: emin(emax(x, const(a["min"])), const(a["max"])),
    "pow": lambda x, a: _pow(x, a["exponent"]),
}
for _op, _fn in _MORE_UNARY.items():
    register_unary(_op, _fn)
ACTIVATIONS["silu"] = lambda x: x * call("sigmoid", x)


def _out_index(axes: Sequence[int], keep: bool, in_rank: int, vs: Sequence[Expr]) -> tuple[Expr, ...]:
    """The output index of input index ``vs`` of a reduction (the reduced axes at 0 or dropped)."""
    if keep:
        return tuple(IntImm(0) if d in axes else v for d, v in enumerate(vs))
    return tuple(v for d, v in enumerate(vs) if d not in axes)


@lowering("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_var")
def lower_reduce(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Per output element: accumulate in the output over the reduced axes (two passes for var)."""
    x, out = ins[0], outs[0]
    axes, keep = tuple(node.attrs["axes"]), bool(node.attrs["keepdim"])
    kept = [d for d in range(x.rank) if d not in axes]
    ov = {d: ctx.var(f"i{d}") for d in kept}
    count = math.prod(x.shape[d] for d in axes)

    def sweep(upd: Callable[[Expr, Expr], Expr], acc: Buffer, acc_idx: tuple[Expr, ...]) -> Stmt:
        rv = {d: ctx.var(f"r{d}") for d in axes}
        idx = tuple(ov[d] if d in ov else rv[d] for d in range(x.rank))
        return loops([(rv[d], x.shape[d]) for d in axes], Store(acc, acc_idx, upd(acc[acc_idx], x[idx])))

    oidx = _out_index(axes, keep, x.rank, [ov.get(d, IntImm(0)) for d in range(x.rank)])
    o = out[oidx]
    op = node.op
    if op == "reduce_var":
        mean = _local(ctx, "mean")
        z = IntImm(0)
        rv = {d: ctx.var(f"r{d}") for d in axes}
        idx = tuple(ov[d] if d in ov else rv[d] for d in range(x.rank))
        dev = x[idx] - mean[z]
        body: Stmt = Allocate(
            mean,
            seq(
                Store(mean, (z,), const(0.0)),
                sweep(lambda a, v: a + v, mean, (z,)),
                Store(mean, (z,), mean[z] * const(1.0 / count)),
                Store(out, oidx, const(0.0)),
                loops([(rv[d], x.shape[d]) for d in axes], Store(out, oidx, o + dev * dev)),
                Store(out, oidx, o / const(float(max(count - node.attrs["correction"], 0)))),
            ),
        )
    else:
        init = {"reduce_max": NEG_INF, "reduce_min": float("inf")}.get(op, 0.0)
        upd: Callable[[Expr, Expr], Expr] = {
            "reduce_max": lambda a, v: emax(a, v),
            "reduce_min": lambda a, v: emin(a, v),
        }.get(op, lambda a, v: a + v)
        fin = Store(out, oidx, o * const(1.0 / count)) if op == "reduce_mean" else None
        body = seq(Store(out, oidx, const(init)), sweep(upd, out, oidx), fin)
    return Stage(ctx.tag, loops([(ov[d], x.shape[d]) for d in kept], body))


@lowering("expand")
def lower_expand(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    return _copy(ctx, ctx.tag, outs[0], lambda vs: ins[0][bcast_index(ins[0].shape, outs[0].shape, vs)])


@lowering("pad")
def lower_pad(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, p = ins[0], node.attrs["pads"]

    def src(vs: list[Var]) -> Expr:
        pos = [v - p[2 * d] for d, v in enumerate(vs)]
        conds = [land(ge(q, 0), lt(q, n)) for q, n, d in zip(pos, x.shape, range(x.rank)) if p[2 * d] or p[2 * d + 1]]
        tap = x[
            tuple(_clamp(q, n - 1) if (p[2 * d] or p[2 * d + 1]) else q for d, (q, n) in enumerate(zip(pos, x.shape)))
        ]
        return Select(land(*conds), tap, const(node.attrs["value"])) if conds else tap

    return _copy(ctx, ctx.tag, outs[0], src)


def _src_coord(o: Expr, n_in: int, n_out: int, align: bool) -> Expr:
    """torch's ``area_pixel_compute_source_index`` for bilinear (float32, clamped at 0)."""
    of = Cast(F32, o)
    if align:
        return of * const((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    return emax((of + const(0.5)) * const(n_in / n_out) - const(0.5), 0.0)


@lowering("resize")
def lower_resize(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, out = ins[0], outs[0]
    _, _, H, W = x.shape
    _, _, OH, OW = out.shape
    if node.attrs["mode"] == "nearest":
        # torch: src = min(floor(dst * (in / out)), in - 1) in float32
        def near(o: Expr, n_in: int, n_out: int) -> Expr:
            return emin(Cast(I64, Cast(F32, o) * const(n_in / n_out)), n_in - 1)

        return _copy(ctx, ctx.tag, out, lambda vs: x[vs[0], vs[1], near(vs[2], H, OH), near(vs[3], W, OW)])
    align = bool(node.attrs["align_corners"])

    def bil(vs: list[Var]) -> Expr:
        sh, sw = _src_coord(vs[2], H, OH, align), _src_coord(vs[3], W, OW, align)
        h0, w0 = Cast(I64, sh), Cast(I64, sw)  # sh, sw >= 0: truncation is floor
        h1, w1 = emin(h0 + 1, H - 1), emin(w0 + 1, W - 1)
        lh, lw = sh - Cast(F32, h0), sw - Cast(F32, w0)
        one = const(1.0)
        n, c = vs[0], vs[1]
        return (one - lh) * ((one - lw) * x[n, c, h0, w0] + lw * x[n, c, h0, w1]) + lh * (
            (one - lw) * x[n, c, h1, w0] + lw * x[n, c, h1, w1]
        )

    return _copy(ctx, ctx.tag, out, bil)


@lowering("adaptive_avgpool")
def lower_adaptive_avgpool(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Window of output o: [floor(o * H / OH), ceil((o + 1) * H / OH)); loops run over the widest window
    with the taps past a narrower one masked."""
    x, out = ins[0], outs[0]
    N, C, H, W = x.shape
    _, _, OH, OW = out.shape
    KH = max(-(-((o + 1) * H) // OH) - (o * H) // OH for o in range(OH))
    KW = max(-(-((o + 1) * W) // OW) - (o * W) // OW for o in range(OW))
    n, c, oh, ow, kh, kw = (ctx.var(s) for s in ("n", "c", "oh", "ow", "kh", "kw"))
    hs, ws = (oh * H) // OH, (ow * W) // OW
    he, we = ((oh + 1) * H + OH - 1) // OH, ((ow + 1) * W + OW - 1) // OW
    ih, iw = hs + kh, ws + kw
    inside = land(lt(ih, he), lt(iw, we))
    o = out[n, c, oh, ow]
    tap = Select(inside, x[n, c, emin(ih, H - 1), emin(iw, W - 1)], const(0.0))
    body = seq(
        Store(out, (n, c, oh, ow), const(0.0)),
        For(kh, IntImm(KH), For(kw, IntImm(KW), Store(out, (n, c, oh, ow), o + tap))),
        Store(out, (n, c, oh, ow), o / Cast(F32, (he - hs) * (we - ws))),
    )
    return Stage(ctx.tag, loops([(n, N), (c, C), (oh, OH), (ow, OW)], body))


@lowering("groupnorm")
def lower_groupnorm(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Per (n, group): mean and variance over the group's channels and positions, then the affine map."""
    x, w, b = ins
    out = outs[0]
    G, eps = node.attrs["num_groups"], node.attrs["eps"]
    N, C = x.shape[:2]
    rest = x.shape[2:]
    Cg = C // G
    m = Cg * math.prod(rest)
    n, g = ctx.var("n"), ctx.var("g")
    mean, rstd = _local(ctx, "mean"), _local(ctx, "rstd")
    z = IntImm(0)

    def at(j: Var) -> tuple[Expr, ...]:
        flat = unflatten(j, (Cg, *rest))
        return (n, g * Cg + flat[0], *flat[1:])

    j1, j2, j3 = ctx.var("j"), ctx.var("j"), ctx.var("j")
    inv = const(1.0 / m)
    body = seq(
        Store(mean, (z,), const(0.0)),
        For(j1, IntImm(m), Store(mean, (z,), mean[z] + x[at(j1)])),
        Store(mean, (z,), mean[z] * inv),
        Store(rstd, (z,), const(0.0)),
        For(j2, IntImm(m), Store(rstd, (z,), rstd[z] + (x[at(j2)] - mean[z]) * (x[at(j2)] - mean[z]))),
        Store(rstd, (z,), call("rsqrt", rstd[z] * inv + const(eps))),
        For(
            j3,
            IntImm(m),
            Store(out, at(j3), (x[at(j3)] - mean[z]) * rstd[z] * w[at(j3)[1]] + b[at(j3)[1]]),
        ),
    )
    return Stage(ctx.tag, loops([(n, N), (g, G)], Allocate(mean, Allocate(rstd, body))))


@lowering("rmsnorm")
def lower_rmsnorm(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, w = ins
    out = outs[0]
    axis = x.rank - 1
    n = x.shape[axis]
    outer, index = _rows(ctx, x.shape, axis)
    ms = _local(ctx, "rms")
    j1, j2 = ctx.var("j"), ctx.var("j")
    z = IntImm(0)
    body = seq(
        Store(ms, (z,), const(0.0)),
        For(j1, IntImm(n), Store(ms, (z,), ms[z] + x[index(j1)] * x[index(j1)])),
        Store(ms, (z,), call("rsqrt", ms[z] * const(1.0 / n) + const(node.attrs["eps"]))),
        For(j2, IntImm(n), Store(out, index(j2), x[index(j2)] * ms[z] * w[j2])),
    )
    return Stage(
        ctx.tag, loops([(v, x.shape[d]) for v, d in zip(outer, range(axis), strict=False)], Allocate(ms, body))
    )
