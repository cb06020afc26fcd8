"""Core ATen ops → eqsat registry ops: one table, one converter per row.

``ATEN`` maps each ATen overload that :mod:`rewrite.frontends.torch_export` accepts to the
converter (a function of the ``ImportState``, in ``aten_base.CONVERTER_FNS``) that builds it
from EXISTING registry ops (the right-hand comment says which).  An overload not in the table
raises ``FrontendError`` naming it; so does a row whose arguments the registry cannot express
(``gelu`` in its exact erf form, ``mean`` over an axis other than H and W).

    aten.addmm(b, x, w)           → add(matmul(x, w), b)
    aten.convolution(x, w, b, …)  → add(conv2d(x, w), reshape(b, [1, C, 1, 1]))
    aten.expand(x, shape)         → mul(x, ones)     (exact: x * 1 == x for every float)

The rows of the overloads the registry spells are not written here: each ``OpDef.aten`` overload is a row
of the converter its spelling names (``a_unary`` for a unary op's, ``a_arith`` for ``aten.add.Tensor``...;
:mod:`rewrite.frontends.aten_spelled`), derived from the registry when it changes; the converter reads the
op and the attributes the overload implies from the registry (``spelled``).

Values computed only from constants never reach this table: the importer evaluates them
with torch first (causal masks, ``arange`` position ids, transposed weights).
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import torch

from rewrite.frontends import aten_indexing, aten_spatial  # noqa: F401  (their converters enter CONVERTER_FNS)
from rewrite.frontends.aten_base import converter
from rewrite.frontends.aten_spatial import NotComputed
from rewrite.frontends.aten_spelled import KeepWhole, RowTable, spelled
from rewrite.frontends.aten_state import ImportState, _Unsupported
from rewrite.frontends.compose import round_half
from rewrite.ir.dtypes import HALF, INT32_NOTE, TORCH_DTYPE, dtype_name, exact_reciprocal
from rewrite.ir.graph import Value

aten = torch.ops.aten


# ATen overload → (converter name, registry ops it produces); the rows of the overloads the registry spells
# (``OpDef.aten``: every overload whose converter builds one registry op: the elementwise ops, reshape,
# transpose, matmul, softmax, the norms and poolings, concat, split, slice, the reductions...) are derived
# from it (``registry_rows``: converter and op) and joined to these in ``ATEN`` below.  The rows here compose
# several ops, pick among ops by argument (``mean.dim``, ``clamp``, ``gelu``), or compute nothing (copies)
ATEN_ROWS: dict[Any, tuple[str, str]] = {
    aten.repeat.default: ("a_repeat", "reshape, expand"),
    aten.clone.default: ("a_copy", "-"),
    aten.alias.default: ("a_copy", "-"),
    aten.detach.default: ("a_copy", "-"),
    aten.lift_fresh_copy.default: ("a_copy", "-"),
    aten._to_copy.default: ("a_copy", "-"),
    aten.neg.default: ("a_neg", "smul"),
    aten.gelu.default: ("a_gelu", "gelu|gelu_erf"),
    aten.pow.Tensor_Scalar: ("a_pow", "mul|rsqrt|pow"),
    aten.addmm.default: ("a_addmm", "matmul, add"),
    aten.convolution.default: ("a_convolution", "conv2d, add"),
    # 3-d pooling (video, volumetric models): 2-d poolings over frames and over depth (compose.pool3d)
    aten.max_pool3d_with_indices.default: ("a_maxpool3d", "reshape, maxpool2d|pad, slice, index_select, maximum"),
    aten.avg_pool3d.default: ("a_avgpool3d", "reshape, avgpool2d|pad, slice, index_select, add, smul, mul"),
    aten._adaptive_avg_pool3d.default: ("a_adaptive_avgpool3d", "reshape, avgpool2d"),
    aten.mean.dim: ("a_mean", "global_avgpool|reduce_mean"),
    aten.select.int: ("a_select", "slice, reshape"),
    operator.getitem: ("a_getitem", "-"),
}
# attention, decomposed into registry ops: aten_indexing.py
ATEN_ROWS.update(
    {
        aten.scaled_dot_product_attention.default: ("a_sdpa", "matmul, smul, masked_fill|add, softmax"),
        # a run-time dtype/device assertion (transformers' ``.to(device)``): ``check`` already pins
        # every imported value's dtype and shape to torch's, so it computes nothing
        aten._assert_tensor_metadata.default: ("a_assert_metadata", "-"),
    }
)
# activations, reductions, norms, resize
ATEN_ROWS.update(
    {
        aten.clamp.default: ("a_clamp", "clamp|relu"),
        aten._upsample_bilinear2d_aa.default: ("a_upsample_aa", "index_select, mul, add"),
        aten._upsample_bicubic2d_aa.default: ("a_upsample_aa", "index_select, mul, add"),
        aten._adaptive_avg_pool2d.default: ("a_adaptive_avgpool", "global_avgpool|avgpool2d|adaptive_avgpool"),
        aten.adaptive_avg_pool1d.default: ("a_adaptive_avgpool1d", "global_avgpool|avgpool2d|adaptive_avgpool"),
        aten.clamp.Tensor: ("a_clamp_tensor", "maximum, minimum"),
        aten.index.Tensor: ("a_index", "index_select, reshape, transpose"),
        aten.index_put.default: ("a_index_put", "concat, index_select, add|where, eq, reduce_max, gather"),
        aten.index_copy.default: ("a_index_copy", "concat, index_select, where, eq, reduce_max, gather"),
        aten.scatter.src: ("a_scatter", "eq, where, reduce_max, gather"),
        aten.scatter.value: ("a_scatter", "eq, where, reduce_max, gather"),
        aten.scatter.reduce: ("a_scatter", "eq, where, reduce_sum|reduce_prod, add|mul"),
        aten.scatter_add.default: ("a_scatter", "eq, where, reduce_sum, add"),
        aten.scatter_reduce.two: ("a_scatter", "eq, where, reduce_sum|reduce_prod|reduce_max|reduce_min"),
        aten.slice_scatter.default: ("a_slice_scatter", "slice, concat|index_select, where"),
        aten.linalg_vector_norm.default: ("a_vector_norm", "mul, reduce_sum, sqrt|abs, reduce_sum|abs, reduce_max"),
        aten.leaky_relu.default: ("a_leaky_relu", "gt, smul, where"),
        aten.elu.default: ("a_elu", "gt, smul, expm1, where"),
        aten._native_batch_norm_legit.no_stats: ("a_instancenorm", "reshape, groupnorm"),
        aten._log_softmax.default: ("a_log_softmax", "reduce_max, sub, exp, reduce_sum, log"),
        aten.any.dim: ("a_any", "cast, reduce_max, gt"),
        aten.any.dims: ("a_any", "cast, reduce_max, gt"),
        aten.any.default: ("a_any", "cast, reduce_max, gt"),
        aten.all.dim: ("a_any", "logical_not, cast, reduce_max, gt"),
        aten.all.dims: ("a_any", "logical_not, cast, reduce_max, gt"),
        aten.all.default: ("a_any", "logical_not, cast, reduce_max, gt"),
        aten.full_like.default: ("a_full_like", "expand"),
        aten.flip.default: ("a_flip", "index_select"),
        aten.cumsum.default: ("a_cumsum", "slice, pad, add"),
        aten.cumprod.default: ("a_cumsum", "slice, pad, mul"),
        aten.argmax.default: ("a_argmax", "reduce_max, eq, ne, where, reduce_min, cast"),
        aten.argmin.default: ("a_argmax", "reduce_min, eq, ne, where, reduce_min, cast"),
        aten.max.dim: ("a_max_dim", "reduce_max, eq, ne, where, reduce_min, cast"),
        aten.min.dim: ("a_max_dim", "reduce_min, eq, ne, where, reduce_min, cast"),
        aten.topk.default: (
            "a_topk",
            "reduce_max|reduce_min, reduce_min, eq, ne, lt, where, logical_and, logical_or, logical_not, concat, cast",
        ),
        **{
            op: (
                "a_grid_sample",
                "slice, smul, add, sub, floor|round, abs, mod, div, eq, clamp, ge, le, logical_and, where, "
                "concat, cast, pad, expand, gather, mul, reduce_sum",
            )
            for op in (aten.grid_sampler.default, aten.grid_sampler_2d.default, aten.grid_sampler_3d.default)
        },
    }
)
# the rows of the overloads the registry spells, derived from ``OpDef.aten`` (``a_unary``, ``a_arith``,
# ``a_compare``...): an op registered at run time has its rows too.  torch.export keeps the ``a_unary``
# overloads whole: its default decompositions would split some (hardswish into clamps, mish into softplus).
ATEN = RowTable(ATEN_ROWS)
KEEP_WHOLE = KeepWhole(aten.adaptive_avg_pool1d.default)  # decomposed, it is an as_strided view


# One ``a_*`` converter per ``ATEN`` row (indexing, comparison and selection in ``aten_indexing``, the spatial
# ops in ``aten_spatial``; the shared helpers on ``ImportState``).


# ------------------------------------------------------------ layout
@converter
def a_reshape(st: ImportState, x: Any, *rest: Any, **kw: Any) -> Value:
    return st.reshape(st.tensor(x), st.out_shape())


@converter
def a_permute(st: ImportState, x: Any, *dims: Any) -> Value:
    v = st.tensor(x)
    r = len(st.shape(v))
    if st.current is aten.permute.default:
        perm = [st.axis(d, r) for d in dims[0]]
    else:
        perm = list(range(r))
        if st.current is aten.transpose.int:
            a, b = st.axis(dims[0], r), st.axis(dims[1], r)
            perm[a], perm[b] = perm[b], perm[a]
        elif r == 2:
            perm = [1, 0]
    if perm == list(range(r)):
        return v
    return st.b.transpose(v, perm=tuple(perm))


@converter
def a_expand(st: ImportState, x: Any, size: Sequence[int], implicit: bool = False) -> Value:
    v = st.tensor(x)
    out = st.out_shape()
    v = st.reshape(v, (1,) * (len(out) - len(st.shape(v))) + st.shape(v))
    if st.shape(v) == out:
        return v
    return st.b.op("expand", v, shape=tuple(out))


@converter
def a_repeat(st: ImportState, x: Any, repeats: Sequence[int]) -> Value:
    """``x.repeat(r0, r1, …)``: each repeated axis gets a size-1 axis before it, expanded to its count,
    and the two merged (``(s,) -> (1, s) -> (r, s) -> (r*s,)``): the copies follow one another."""
    v = st.tensor(x)
    reps = [int(r) for r in repeats]
    if any(r < 1 for r in reps):
        raise _Unsupported(f"repeat by {reps}: a zero count makes an empty tensor")
    s = st.shape(v)
    s = (1,) * (len(reps) - len(s)) + s
    v = st.reshape(v, s)
    if all(r == 1 for r in reps):
        return v
    split: list[int] = []
    wide: list[int] = []
    for n, r in zip(s, reps, strict=True):
        split += [1, n] if r > 1 else [n]
        wide += [r, n] if r > 1 else [n]
    y = st.b.op("expand", st.reshape(v, split), shape=tuple(wide))
    return st.reshape(y, tuple(n * r for n, r in zip(s, reps, strict=True)))


def empty(st: ImportState, shape: Sequence[int]) -> torch.Tensor:
    """An empty result (a slice ``[k:k]``, a split's size-0 piece) as an empty constant: ``cat`` drops
    it (Phi-3's rotary ``q[..., rot:]`` with every channel rotated) and any op computing with it refuses."""
    val = st.meta_val()
    return torch.empty(tuple(shape), dtype=val.dtype if isinstance(val, torch.Tensor) else torch.float32)


@converter
def a_copy(st: ImportState, x: Any, *rest: Any, **kw: Any) -> Value:
    v = st.tensor(x)
    dtype = kw.get("dtype")
    return v if dtype is None else cast_to(st, v, dtype)


def cast_to(st: ImportState, v: Value, dtype: torch.dtype) -> Value:
    """``v`` converted to torch dtype ``dtype`` (itself when it already is one); to float16 or bfloat16: rounded
    to it and computed on as float32 (``round_half``)."""
    name = dtype_name(dtype)
    if dtype == torch.int32:  # RoBERTa's and CLIP's position arithmetic: computed as int64 (see INT32_NOTE)
        warnings.warn(INT32_NOTE.format(where=st.node_name()), stacklevel=2)
        name = "int64"
    if name is None:
        raise _Unsupported(f"conversion to {dtype}; eqsat takes float32, int64, bool, float16 and bfloat16")
    if name in HALF:
        return round_half(st.emit(), cast_to(st, v, torch.float32), name)
    return v if name == st.b.graph.dtype_of(v) else st.b.cast(v, dtype=name)


@converter
def a_cat(st: ImportState, tensors: Sequence[Any], dim: int = 0) -> Value:
    # an empty operand adds nothing (torch skips a legacy (0,) one too): a KV cache's first step
    kept = [t for t in tensors if not (isinstance(t, torch.Tensor) and t.numel() == 0)]
    if not kept:
        raise _Unsupported("cat of empty tensors only: the result is empty")
    xs = [st.tensor(t, "cat operand") for t in kept]
    if len(xs) == 1:
        return xs[0]
    return st.b.concat(*xs, axis=st.axis(dim, len(st.shape(xs[0]))))


@converter
def a_split(st: ImportState, x: Any, sizes: Any, dim: int = 0) -> tuple[Any, ...]:
    v = st.tensor(x)
    s = st.shape(v)
    ax = st.axis(dim, len(s))
    if isinstance(sizes, int):
        parts = [min(sizes, s[ax] - i) for i in range(0, s[ax], sizes)]
    else:
        parts = list(sizes)
    if any(p < 0 for p in parts):
        raise _Unsupported(f"split into pieces of sizes {parts}")
    kept = [p for p in parts if p > 0]
    if len(kept) == 1:
        pieces: list[Any] = [v]
    else:
        pieces = list(st.b.split(v, ax, kept))
    out: list[Any] = []
    for p in parts:
        out.append(pieces.pop(0) if p > 0 else empty(st, s[:ax] + (0,) + s[ax + 1 :]))
    return tuple(out)


@converter
def a_slice(
    st: ImportState, x: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1
) -> Value | torch.Tensor:
    v = st.tensor(x)
    s = st.shape(v)
    ax = st.axis(dim, len(s))
    lo, hi, stp = slice(start, end, step).indices(s[ax])
    if len(range(lo, hi, stp)) == 0:
        return empty(st, s[:ax] + (0,) + s[ax + 1 :])
    if (lo, hi, stp) == (0, s[ax], 1):
        return v
    if stp != 1:  # every stp-th position from lo: an index_select (the registry's slice is contiguous)
        idx = st.const(("arange", lo, hi, stp), f"const.{st.node_name()}", lambda: torch.arange(lo, hi, stp))
        return st.b.index_select(v, idx, axis=ax)
    return st.b.slice(v, axis=ax, start=lo, end=hi)


@converter
def a_select(st: ImportState, x: Any, dim: int, index: int) -> Value:
    v = st.tensor(x)
    s = st.shape(v)
    ax = st.axis(dim, len(s))
    i = index % s[ax]
    y = v if s[ax] == 1 else st.b.slice(v, axis=ax, start=i, end=i + 1)
    return st.reshape(y, s[:ax] + s[ax + 1 :])


@converter
def a_getitem(st: ImportState, obj: Any, index: int) -> Any:
    item = obj[index]
    if isinstance(item, NotComputed):
        raise _Unsupported(f"reads {item.what}, which eqsat does not compute")
    return item


# ------------------------------------------------------------ elementwise
@converter
def a_unary(st: ImportState, x: Any) -> Value:
    """A registry op one ATen overload computes (``OpDef.aten``): the row names it."""
    return st.b.op(ATEN[st.current][1], st.tensor(x))


@converter
def a_gelu(st: ImportState, x: Any, approximate: str = "none") -> Value:
    return st.gelu(st.tensor(x), approximate)


@converter
def a_neg(st: ImportState, x: Any) -> Value:
    return st.b.smul(st.tensor(x), scalar=-1.0)


@converter
def a_pow(st: ImportState, x: Any, exponent: Any) -> Value:
    v = st.tensor(x)
    if exponent == 1:
        return v
    if exponent == 2:  # torch computes x ** 2 as x * x
        return st.b.mul(v, v)
    if exponent == 3:  # and x ** 3 as x * x * x (GPT-2's tanh-GELU)
        return st.b.mul(st.b.mul(v, v), v)
    if exponent == -0.5:  # and x ** -0.5 as rsqrt(x)
        return st.b.rsqrt(v)
    if isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
        raise _Unsupported(f"power with exponent {exponent!r} (only a constant number)")
    return st.b.op("pow", v, exponent=float(exponent))


@converter
def a_arith(st: ImportState, a: Any, b: Any, alpha: Any = 1, rounding_mode: Any = None) -> Value:
    d, spelling = spelled(st.current)  # add, sub, mul, div; mod and idiv with their rounding
    op, attrs = d.name, dict(spelling.attrs)
    if "mode" in d.attr_names:  # remainder, fmod, floor_divide, div(rounding_mode=...)
        mode = attrs.get("mode") or rounding_mode
        if mode not in ("floor", "trunc"):
            raise _Unsupported(f"division with rounding_mode={rounding_mode!r}")
        if op == "idiv" and st.meta_dtype() not in ("int64", "float32"):
            raise _Unsupported(f"{mode} division of {st.meta_dtype()} values (int64 or float32)")
        attrs, rounding_mode = {"mode": mode}, None
    if rounding_mode is not None:
        raise _Unsupported(f"division with rounding_mode={rounding_mode!r}")
    if st.current is aten.rsub.Scalar:  # rsub(x, s, alpha) = s - alpha * x
        a, b = b, a
        if alpha != 1:
            raise _Unsupported(f"rsub with alpha={alpha!r}")
    elif alpha != 1:
        if isinstance(b, (int, float)):
            b = b * alpha
        else:
            b = st.b.smul(st.tensor(b), scalar=float(alpha))
    sa, sb = st.scalar_of(a), st.scalar_of(b)
    want = st.meta_dtype()
    if op == "mul" and (sa is not None or sb is not None) and want == "float32":
        # the tensor times the number (both may read as scalars: a one-element constant times 2)
        x, s = (a, sb) if sb is not None and not isinstance(a, (int, float)) else (b, sa)
        assert s is not None
        t = st.tensor(x)
        if st.b.graph.dtype_of(t) == "float32":  # an int64 tensor times 0.5 is cast below instead
            return st.reshape(st.b.smul(t, scalar=s), st.out_shape())
    inv = exact_reciprocal(sb) if op == "div" and sb is not None and sa is None else None
    if inv is not None and st.b.graph.dtype_of(st.tensor(a)) == "float32":
        # x / 2^k is exactly x * 2^-k: a scale (attention's 1/sqrt(d)), which the rules move and fold
        return st.reshape(st.b.smul(st.tensor(a), scalar=inv), st.out_shape())
    r = len(st.out_shape())

    if want not in ("float32", "int64"):
        for v in (a, b):  # an operand eqsat cannot hold (a float64 input) says so by name
            if not isinstance(v, (int, float)):
                st.tensor(v)
        val = st.meta_val()
        raise _Unsupported(f"arithmetic with a {getattr(val, 'dtype', want)} result (float32 or int64)")
    tdt = TORCH_DTYPE[want]

    def operand(v: Any, s: float | None) -> Value:
        if s is None:
            t = st.tensor(v)
            # torch's type promotion: a bool (or int64) operand of an int64 (float) result is cast first
            if st.b.graph.dtype_of(t) != want:
                t = st.b.cast(t, dtype=want)
            return t
        if want == "int64" and s != int(s):
            raise _Unsupported(f"scalar {s!r} in int64 arithmetic")
        # x + s, x - s, x / s, s / x: the scalar is a one-element constant (exact, unlike * 1/s)
        key = ("scalar", s, r, want)
        return st.const(key, f"const.{st.node_name()}", lambda: torch.full((1,) * r, s, dtype=tdt))

    if op == "idiv" and want == "float32":
        return st.reshape(float_division(st, operand(a, sa), operand(b, sb), attrs["mode"]), st.out_shape())
    return st.reshape(st.binary(op, operand(a, sa), operand(b, sb), **attrs), st.out_shape())


def float_division(st: ImportState, a: Value, b: Value, mode: str) -> Value:
    """float32 ``a / b`` rounded as torch rounds it. trunc: the quotient truncated. floor: torch's
    ``div_floor_floating``: (a - fmod(a, b)) / b, one less where the remainder's sign differs from b's,
    rounded to the nearest integer (floor, plus one past a half); a zero keeps the quotient's sign (q * 0,
    q finite there); b == 0 gives a / b."""
    q = st.binary("div", a, b)
    r = len(st.shape(q))

    def c(v: float) -> Value:
        return st.const(("scalar", v, r, "float32"), f"const.{st.node_name()}", lambda: torch.full((1,) * r, v))

    if mode == "trunc":
        return st.b.where(st.b.lt(q, c(0.0)), st.b.op("ceil", q), st.b.op("floor", q))
    mod = st.binary("mod", a, b, mode="trunc")
    div = st.binary("div", st.binary("sub", a, mod), b)
    neg_b, neg_mod = st.b.lt(b, c(0.0)), st.b.lt(mod, c(0.0))
    either = st.b.op("logical_or", neg_b, neg_mod)
    signs_differ = st.b.op("logical_and", either, st.b.op("logical_not", st.b.op("logical_and", neg_b, neg_mod)))
    flip = st.b.op("logical_and", st.b.ne(mod, c(0.0)), signs_differ)
    div = st.b.where(flip, st.binary("sub", div, c(1.0)), div)
    fl = st.b.op("floor", div)
    fl = st.b.where(st.b.gt(st.binary("sub", div, fl), c(0.5)), st.binary("add", fl, c(1.0)), fl)
    fl = st.b.where(st.b.eq(div, c(0.0)), st.binary("mul", q, c(0.0)), fl)
    return st.b.where(st.b.eq(b, c(0.0)), q, fl)


# ------------------------------------------------------------ contraction
@converter
def a_matmul(st: ImportState, a: Any, b: Any) -> Value:
    """``torch.matmul``'s rules (``mm`` and ``bmm`` are its 2-d and 3-d cases): a 1-d left operand is a row
    [1, K], a 1-d right one a column [K, 1], and the result drops that axis; a left operand of rank >= 3
    times a matrix is one GEMM over its rows merged, as torch folds it; other batch axes broadcast."""
    x, y = st.tensor(a), st.tensor(b)
    sx, sy = st.shape(x), st.shape(y)
    if not sx or not sy:
        raise _Unsupported(f"matmul of shapes {sx} and {sy}: both operands need rank >= 1")
    if len(sx) == 1:
        x = st.reshape(x, (1, sx[0]))
    elif len(sx) >= 3 and len(sy) <= 2:
        x = st.reshape(x, (math.prod(sx[:-1]), sx[-1]))
    if len(sy) == 1:
        y = st.reshape(y, (sy[0], 1))
    return st.reshape(st.b.matmul(*st.align(x, y)), st.out_shape())


@converter
def a_addmm(st: ImportState, bias: Any, a: Any, b: Any, beta: Any = 1, alpha: Any = 1) -> Value:
    if beta != 1 or alpha != 1:
        raise _Unsupported(f"addmm with beta={beta!r}, alpha={alpha!r} (only 1, 1)")
    y = st.b.matmul(st.tensor(a), st.tensor(b))
    return st.reshape(st.binary("add", y, st.tensor(bias, "bias")), st.out_shape())


# ------------------------------------------------------------ normalization (pools: aten_spatial)
def affine(st: ImportState, w: Any, b: Any, c: int) -> tuple[Value, Value]:
    """A normalization's scale and shift, ones and zeros where the module has none."""
    wv = st.tensor(w) if w is not None else st.const(("ones", c), "const.ones", lambda: torch.ones(c))
    bv = st.tensor(b) if b is not None else st.const(("zeros", c), "const.zeros", lambda: torch.zeros(c))
    return wv, bv


@converter
def a_batchnorm(
    st: ImportState, x: Any, w: Any, b: Any, mean: Any, var: Any, momentum: Any, eps: float
) -> tuple[Any, ...]:
    v = st.tensor(x)
    c = st.shape(v)[1]
    wv, bv = affine(st, w, b, c)
    y = st.b.batchnorm(v, wv, bv, st.tensor(mean), st.tensor(var), eps=float(eps))
    return (y, NotComputed("batch-norm's saved mean"), NotComputed("batch-norm's saved rstd"))


@converter
def a_layernorm(st: ImportState, x: Any, shape: Any, w: Any, b: Any, eps: float) -> tuple[Any, ...]:
    wv = None if w is None else st.tensor(w)
    bv = None if b is None else st.tensor(b)
    y = st.layernorm(st.tensor(x), shape, wv, bv, eps, f"const.{st.node_name()}")
    return (y, NotComputed("layer-norm's mean"), NotComputed("layer-norm's rstd"))


@converter
def a_softmax(st: ImportState, x: Any, dim: int, half_to_float: bool = False) -> Value:
    if half_to_float:
        raise _Unsupported("softmax with half_to_float=True")
    return st.softmax(st.tensor(x), dim)


@converter
def a_binary(st: ImportState, a: Any, b: Any) -> Value:
    """The registry op this overload spells, of two tensors with broadcasting (maximum, logical_and...)."""
    op = spelled(st.current)[0].name
    return st.reshape(st.binary(op, st.tensor(a), st.tensor(b)), st.out_shape())


@converter
def a_power(st: ImportState, x: Any, y: Any) -> Value:
    """x ** y with a tensor exponent (or a number raised to a tensor), float32 as torch computes it: an
    int64 or bool operand is cast first, as torch promotes it; an int64 result is refused."""
    if st.meta_dtype() not in (None, "float32"):
        raise _Unsupported(f"power with a {st.meta_dtype()} result (float32 only)")
    like = st.tensor(y if isinstance(x, (int, float)) else x)
    xs, ys = (st.tensor(v) if not isinstance(v, (int, float)) else st.scalar_like(float(v), like) for v in (x, y))
    xs, ys = (v if st.b.graph.dtype_of(v) == "float32" else st.b.cast(v, dtype="float32") for v in (xs, ys))
    return st.reshape(st.binary("power", xs, ys), st.out_shape())


@converter
def a_atan2(st: ImportState, y: Any, x: Any) -> Value:
    """atan2(y, x); an int64 or bool operand is cast to float32 first, as torch promotes it."""
    if st.meta_dtype() not in (None, "float32"):
        raise _Unsupported(f"atan2 with a {st.meta_dtype()} result (float32 only)")
    ys, xs = (st.tensor(v) for v in (y, x))
    ys, xs = (v if st.b.graph.dtype_of(v) == "float32" else st.b.cast(v, dtype="float32") for v in (ys, xs))
    return st.reshape(st.binary("atan2", ys, xs), st.out_shape())


@converter
def a_clamp_tensor(st: ImportState, x: Any, lo: Any = None, hi: Any = None) -> Value:
    """clamp with tensor bounds: minimum(maximum(x, lo), hi)."""
    v = st.tensor(x)
    for op, bound in (("maximum", lo), ("minimum", hi)):
        if bound is not None:
            b = st.tensor(bound) if not isinstance(bound, (int, float)) else st.scalar_like(bound, v)
            v = st.binary(op, v, b)
    return st.reshape(v, st.out_shape())


@converter
def a_vector_norm(
    st: ImportState, x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Value:
    """The 2-norm sqrt(sum(x * x)), the 1-norm sum(|x|), the inf-norm max(|x|) over ``dim`` (weight norm,
    F.normalize)."""
    if dtype not in (None, torch.float32):
        raise _Unsupported(f"vector norm with dtype={dtype}")
    v = st.tensor(x)
    r = len(st.shape(v))
    axes = st.reduce_axes(dim, r)
    kd = int(bool(keepdim))
    if ord == 2:
        y = st.b.op("sqrt", st.b.op("reduce_sum", st.b.mul(v, v), axes=axes, keepdim=kd))
    elif ord == 1:
        y = st.b.op("reduce_sum", st.b.op("abs", v), axes=axes, keepdim=kd)
    elif ord == float("inf"):
        y = st.b.op("reduce_max", st.b.op("abs", v), axes=axes, keepdim=kd)
    else:
        raise _Unsupported(f"vector norm of order {ord!r} (only 1, 2 and inf)")
    return st.reshape(y, st.out_shape())


@converter
def a_leaky_relu(st: ImportState, x: Any, slope: Any = 0.01) -> Value:
    v = st.tensor(x)
    return st.b.where(st.binary("gt", v, st.scalar_like(0.0, v)), v, st.b.smul(v, scalar=float(slope)))


@converter
def a_elu(st: ImportState, x: Any, alpha: Any = 1.0, scale: Any = 1.0, input_scale: Any = 1.0) -> Value:
    """elu, selu: scale * x where x > 0, else scale * alpha * expm1(input_scale * x)."""
    v = st.tensor(x)
    e = st.b.op("expm1", v if float(input_scale) == 1.0 else st.b.smul(v, scalar=float(input_scale)))
    pos = v if float(scale) == 1.0 else st.b.smul(v, scalar=float(scale))
    neg = st.b.smul(e, scalar=float(scale) * float(alpha))
    return st.b.where(st.binary("gt", v, st.scalar_like(0.0, v)), pos, neg)


@converter
def a_instancenorm(
    st: ImportState, x: Any, w: Any, b: Any, training: bool, momentum: Any, eps: float
) -> tuple[Any, ...]:
    """Batch statistics per channel: torch's instance norm, which folds the batch into the channels
    first (a batch of one), so a group norm with one channel a group."""
    v = st.tensor(x)
    s = st.shape(v)
    if len(s) < 3 or s[0] != 1:
        raise _Unsupported(f"batch normalization with batch statistics over shape {s} (training mode)")
    c = s[1]
    wv, bv = affine(st, w, b, c)
    x4 = st.reshape(v, (1, c, 1, math.prod(s[2:])))
    y = st.reshape(st.b.op("groupnorm", x4, wv, bv, num_groups=c, eps=float(eps)), s)
    return (y, NotComputed("batch-norm's saved mean"), NotComputed("batch-norm's saved rstd"))


@converter
def a_log_softmax(st: ImportState, x: Any, dim: int, half_to_float: bool = False) -> Value:
    """x - max - log(sum(exp(x - max))) along ``dim``: finite wherever torch's is (log(softmax(x)) is
    -inf once a probability underflows)."""
    if half_to_float:
        raise _Unsupported("log_softmax with half_to_float=True")
    v = st.tensor(x)
    axes = (st.axis(dim, len(st.shape(v))),)
    y = st.binary("sub", v, st.b.op("reduce_max", v, axes=axes, keepdim=1))
    total = st.b.op("reduce_sum", st.b.op("exp", y), axes=axes, keepdim=1)
    return st.binary("sub", y, st.b.op("log", total))


@converter
def a_mean(st: ImportState, x: Any, dims: Any, keepdim: bool = False, dtype: Any = None) -> Value:
    v = st.tensor(x)
    s = st.shape(v)
    axes = sorted(st.axis(d, len(s)) for d in (dims or range(len(s))))
    if dtype not in (None, torch.float32):
        raise _Unsupported(f"mean with dtype={dtype}")
    if len(s) == 4 and axes == [2, 3]:
        return st.reshape(st.b.global_avgpool(v), st.out_shape())
    return st.b.op("reduce_mean", v, axes=tuple(axes), keepdim=int(bool(keepdim)))


# ------------------------------------------------------------ activations, reductions, norms
@converter
def a_clamp(st: ImportState, x: Any, lo: Any = None, hi: Any = None) -> Value:
    if st.current is aten.hardtanh.default:
        lo, hi = (-1.0 if lo is None else lo), (1.0 if hi is None else hi)
    if isinstance(lo, torch.Tensor) or isinstance(hi, torch.Tensor):
        raise _Unsupported("clamp with tensor bounds")
    return st.clamp(st.tensor(x), lo, hi)


@converter
def a_reduce(st: ImportState, x: Any, dims: Any = None, keepdim: bool = False, dtype: Any = None) -> Value:
    v = st.tensor(x)
    s = st.shape(v)
    if dtype not in (None, torch.float32):
        raise _Unsupported(f"reduction with dtype={dtype}")
    axes = st.reduce_axes(dims, len(s))
    return st.b.op(spelled(st.current)[0].name, v, axes=axes, keepdim=int(bool(keepdim)))


@converter
def a_prod(st: ImportState, x: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Value:
    """torch.prod over one dim, or all of them (``prod.default``, whose second argument is the dtype)."""
    if st.current is aten.prod.default:
        dim, keepdim, dtype = None, False, dim if dtype is None else dtype
    v = st.tensor(x)
    have = TORCH_DTYPE[st.b.graph.dtype_of(v)]
    if have not in (torch.float32, torch.int64) or dtype not in (None, have):
        raise _Unsupported(f"prod of {have} with dtype={dtype} (float32 or int64, unchanged)")
    return st.b.op("reduce_prod", v, axes=st.reduce_axes(dim, len(st.shape(v))), keepdim=int(bool(keepdim)))


@converter
def a_var(st: ImportState, x: Any, dims: Any = None, *, correction: Any = None, keepdim: bool = False) -> Value:
    v = st.tensor(x)
    s = st.shape(v)
    axes = st.reduce_axes(dims, len(s))
    corr = 1 if correction is None else correction
    if corr != int(corr):
        raise _Unsupported(f"variance with correction {corr!r} (only integers)")
    return st.b.op("reduce_var", v, axes=axes, keepdim=int(bool(keepdim)), correction=int(corr))


@converter
def a_pad(st: ImportState, x: Any, pads: Sequence[int], value: Any = 0.0) -> Value:
    return st.pad(st.tensor(x), pads, value)


@converter
def a_groupnorm(
    st: ImportState, x: Any, w: Any, b: Any, n: int, c: int, hw: int, groups: int, eps: float
) -> tuple[Any, ...]:
    v = st.tensor(x)
    wv, bv = affine(st, w, b, c)
    y = st.b.op("groupnorm", v, wv, bv, num_groups=int(groups), eps=float(eps))
    return (y, NotComputed("group-norm's mean"), NotComputed("group-norm's rstd"))
