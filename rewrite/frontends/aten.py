"""Core ATen ops → eqsat registry ops: one table, one converter per row.

``ATEN`` maps each ATen overload that :mod:`rewrite.frontends.torch_export` accepts to the
:class:`AtenConverters` method that builds it from EXISTING registry ops (the right-hand
comment says which).  An overload not in the table raises ``FrontendError`` naming it; so
does a row whose arguments the registry cannot express (``gelu`` in its exact erf form,
``mean`` over an axis other than H and W).

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

from rewrite.frontends.aten_spatial import AtenSpatial, NotComputed
from rewrite.frontends.aten_spelled import KeepWhole, RowTable, spelled
from rewrite.frontends.aten_state import _Unsupported
from rewrite.ir.dtypes import INT32_NOTE, TORCH_DTYPE, dtype_name, exact_reciprocal
from rewrite.ir.graph import Value

aten = torch.ops.aten


# ATen overload → (converter method, registry ops it produces); the rows of the overloads the registry spells
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


class AtenConverters(AtenSpatial):
    """One ``a_*`` method per ``ATEN`` row (indexing, comparison and selection in ``AtenIndexing``;
    the shared helpers in ``AtenBase``)."""

    # ------------------------------------------------------------ layout
    def a_reshape(self, x: Any, *rest: Any, **kw: Any) -> Value:
        return self.reshape(self.tensor(x), self.out_shape())

    def a_permute(self, x: Any, *dims: Any) -> Value:
        v = self.tensor(x)
        r = len(self.shape(v))
        if self.current is aten.permute.default:
            perm = [self.axis(d, r) for d in dims[0]]
        else:
            perm = list(range(r))
            if self.current is aten.transpose.int:
                a, b = self.axis(dims[0], r), self.axis(dims[1], r)
                perm[a], perm[b] = perm[b], perm[a]
            elif r == 2:
                perm = [1, 0]
        if perm == list(range(r)):
            return v
        return self.b.transpose(v, perm=tuple(perm))

    def a_expand(self, x: Any, size: Sequence[int], implicit: bool = False) -> Value:
        v = self.tensor(x)
        out = self.out_shape()
        v = self.reshape(v, (1,) * (len(out) - len(self.shape(v))) + self.shape(v))
        if self.shape(v) == out:
            return v
        return self.b.op("expand", v, shape=tuple(out))

    def a_repeat(self, x: Any, repeats: Sequence[int]) -> Value:
        """``x.repeat(r0, r1, …)``: each repeated axis gets a size-1 axis before it, expanded to its count,
        and the two merged (``(s,) -> (1, s) -> (r, s) -> (r*s,)``): the copies follow one another."""
        v = self.tensor(x)
        reps = [int(r) for r in repeats]
        if any(r < 1 for r in reps):
            raise _Unsupported(f"repeat by {reps}: a zero count makes an empty tensor")
        s = self.shape(v)
        s = (1,) * (len(reps) - len(s)) + s
        v = self.reshape(v, s)
        if all(r == 1 for r in reps):
            return v
        split: list[int] = []
        wide: list[int] = []
        for n, r in zip(s, reps, strict=True):
            split += [1, n] if r > 1 else [n]
            wide += [r, n] if r > 1 else [n]
        y = self.b.op("expand", self.reshape(v, split), shape=tuple(wide))
        return self.reshape(y, tuple(n * r for n, r in zip(s, reps, strict=True)))

    def empty(self, shape: Sequence[int]) -> torch.Tensor:
        """An empty result (a slice ``[k:k]``, a split's size-0 piece) as an empty constant: ``cat`` drops
        it (Phi-3's rotary ``q[..., rot:]`` with every channel rotated) and any op computing with it refuses."""
        val = self.meta_val()
        return torch.empty(tuple(shape), dtype=val.dtype if isinstance(val, torch.Tensor) else torch.float32)

    def a_copy(self, x: Any, *rest: Any, **kw: Any) -> Value:
        v = self.tensor(x)
        dtype = kw.get("dtype")
        return v if dtype is None else self.cast_to(v, dtype)

    def cast_to(self, v: Value, dtype: torch.dtype) -> Value:
        """``v`` converted to torch dtype ``dtype`` (itself when it already is one)."""
        name = dtype_name(dtype)
        if dtype == torch.int32:  # RoBERTa's and CLIP's position arithmetic: computed as int64 (see INT32_NOTE)
            warnings.warn(INT32_NOTE.format(where=self.node_name()), stacklevel=2)
            name = "int64"
        if name is None:
            raise _Unsupported(f"conversion to {dtype}; eqsat takes float32, int64 and bool")
        return v if name == self.b.graph.dtype_of(v) else self.b.cast(v, dtype=name)

    def a_cat(self, tensors: Sequence[Any], dim: int = 0) -> Value:
        # an empty operand adds nothing (torch skips a legacy (0,) one too): a KV cache's first step
        kept = [t for t in tensors if not (isinstance(t, torch.Tensor) and t.numel() == 0)]
        if not kept:
            raise _Unsupported("cat of empty tensors only: the result is empty")
        xs = [self.tensor(t, "cat operand") for t in kept]
        if len(xs) == 1:
            return xs[0]
        return self.b.concat(*xs, axis=self.axis(dim, len(self.shape(xs[0]))))

    def a_split(self, x: Any, sizes: Any, dim: int = 0) -> tuple[Any, ...]:
        v = self.tensor(x)
        s = self.shape(v)
        ax = self.axis(dim, len(s))
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
            pieces = list(self.b.split(v, ax, kept))
        out: list[Any] = []
        for p in parts:
            out.append(pieces.pop(0) if p > 0 else self.empty(s[:ax] + (0,) + s[ax + 1 :]))
        return tuple(out)

    def a_slice(self, x: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Value | torch.Tensor:
        v = self.tensor(x)
        s = self.shape(v)
        ax = self.axis(dim, len(s))
        lo, hi, st = slice(start, end, step).indices(s[ax])
        if len(range(lo, hi, st)) == 0:
            return self.empty(s[:ax] + (0,) + s[ax + 1 :])
        if (lo, hi, st) == (0, s[ax], 1):
            return v
        if st != 1:  # every st-th position from lo: an index_select (the registry's slice is contiguous)
            idx = self.const(("arange", lo, hi, st), f"const.{self.node_name()}", lambda: torch.arange(lo, hi, st))
            return self.b.index_select(v, idx, axis=ax)
        return self.b.slice(v, axis=ax, start=lo, end=hi)

    def a_select(self, x: Any, dim: int, index: int) -> Value:
        v = self.tensor(x)
        s = self.shape(v)
        ax = self.axis(dim, len(s))
        i = index % s[ax]
        y = v if s[ax] == 1 else self.b.slice(v, axis=ax, start=i, end=i + 1)
        return self.reshape(y, s[:ax] + s[ax + 1 :])

    def a_getitem(self, obj: Any, index: int) -> Any:
        item = obj[index]
        if isinstance(item, NotComputed):
            raise _Unsupported(f"reads {item.what}, which eqsat does not compute")
        return item

    # ------------------------------------------------------------ elementwise
    def a_unary(self, x: Any) -> Value:
        """A registry op one ATen overload computes (``OpDef.aten``): the row names it."""
        return self.b.op(ATEN[self.current][1], self.tensor(x))

    def a_gelu(self, x: Any, approximate: str = "none") -> Value:
        return self.gelu(self.tensor(x), approximate)

    def a_neg(self, x: Any) -> Value:
        return self.b.smul(self.tensor(x), scalar=-1.0)

    def a_pow(self, x: Any, exponent: Any) -> Value:
        v = self.tensor(x)
        if exponent == 1:
            return v
        if exponent == 2:  # torch computes x ** 2 as x * x
            return self.b.mul(v, v)
        if exponent == 3:  # and x ** 3 as x * x * x (GPT-2's tanh-GELU)
            return self.b.mul(self.b.mul(v, v), v)
        if exponent == -0.5:  # and x ** -0.5 as rsqrt(x)
            return self.b.rsqrt(v)
        if isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
            raise _Unsupported(f"power with exponent {exponent!r} (only a constant number)")
        return self.b.op("pow", v, exponent=float(exponent))

    def a_arith(self, a: Any, b: Any, alpha: Any = 1, rounding_mode: Any = None) -> Value:
        d, spelling = spelled(self.current)  # add, sub, mul, div; mod and idiv with their rounding
        op, attrs = d.name, dict(spelling.attrs)
        if "mode" in d.attr_names:  # remainder, fmod, floor_divide, div(rounding_mode=...)
            mode = attrs.get("mode") or rounding_mode
            if mode not in ("floor", "trunc"):
                raise _Unsupported(f"division with rounding_mode={rounding_mode!r}")
            if op == "idiv" and self.meta_dtype() not in ("int64", "float32"):
                raise _Unsupported(f"{mode} division of {self.meta_dtype()} values (int64 or float32)")
            attrs, rounding_mode = {"mode": mode}, None
        if rounding_mode is not None:
            raise _Unsupported(f"division with rounding_mode={rounding_mode!r}")
        if self.current is aten.rsub.Scalar:  # rsub(x, s, alpha) = s - alpha * x
            a, b = b, a
            if alpha != 1:
                raise _Unsupported(f"rsub with alpha={alpha!r}")
        elif alpha != 1:
            if isinstance(b, (int, float)):
                b = b * alpha
            else:
                b = self.b.smul(self.tensor(b), scalar=float(alpha))
        sa, sb = self.scalar_of(a), self.scalar_of(b)
        want = self.meta_dtype()
        if op == "mul" and (sa is not None or sb is not None) and want == "float32":
            # the tensor times the number (both may read as scalars: a one-element constant times 2)
            x, s = (a, sb) if sb is not None and not isinstance(a, (int, float)) else (b, sa)
            assert s is not None
            t = self.tensor(x)
            if self.b.graph.dtype_of(t) == "float32":  # an int64 tensor times 0.5 is cast below instead
                return self.reshape(self.b.smul(t, scalar=s), self.out_shape())
        inv = exact_reciprocal(sb) if op == "div" and sb is not None and sa is None else None
        if inv is not None and self.b.graph.dtype_of(self.tensor(a)) == "float32":
            # x / 2^k is exactly x * 2^-k: a scale (attention's 1/sqrt(d)), which the rules move and fold
            return self.reshape(self.b.smul(self.tensor(a), scalar=inv), self.out_shape())
        r = len(self.out_shape())

        if want not in ("float32", "int64"):
            raise _Unsupported(f"arithmetic with a {want} result (float32 or int64)")
        tdt = TORCH_DTYPE[want]

        def operand(v: Any, s: float | None) -> Value:
            if s is None:
                t = self.tensor(v)
                # torch's type promotion: a bool (or int64) operand of an int64 (float) result is cast first
                if self.b.graph.dtype_of(t) != want:
                    t = self.b.cast(t, dtype=want)
                return t
            if want == "int64" and s != int(s):
                raise _Unsupported(f"scalar {s!r} in int64 arithmetic")
            # x + s, x - s, x / s, s / x: the scalar is a one-element constant (exact, unlike * 1/s)
            key = ("scalar", s, r, want)
            return self.const(key, f"const.{self.node_name()}", lambda: torch.full((1,) * r, s, dtype=tdt))

        if op == "idiv" and want == "float32":
            return self.reshape(self.float_division(operand(a, sa), operand(b, sb), attrs["mode"]), self.out_shape())
        return self.reshape(self.binary(op, operand(a, sa), operand(b, sb), **attrs), self.out_shape())

    def float_division(self, a: Value, b: Value, mode: str) -> Value:
        """float32 ``a / b`` rounded as torch rounds it. trunc: the quotient truncated. floor: torch's
        ``div_floor_floating``: (a - fmod(a, b)) / b, one less where the remainder's sign differs from b's,
        rounded to the nearest integer (floor, plus one past a half); a zero keeps the quotient's sign (q * 0,
        q finite there); b == 0 gives a / b."""
        q = self.binary("div", a, b)
        r = len(self.shape(q))

        def c(v: float) -> Value:
            return self.const(("scalar", v, r, "float32"), f"const.{self.node_name()}", lambda: torch.full((1,) * r, v))

        if mode == "trunc":
            return self.b.where(self.b.lt(q, c(0.0)), self.b.op("ceil", q), self.b.op("floor", q))
        mod = self.binary("mod", a, b, mode="trunc")
        div = self.binary("div", self.binary("sub", a, mod), b)
        neg_b, neg_mod = self.b.lt(b, c(0.0)), self.b.lt(mod, c(0.0))
        either = self.b.op("logical_or", neg_b, neg_mod)
        signs_differ = self.b.op(
            "logical_and", either, self.b.op("logical_not", self.b.op("logical_and", neg_b, neg_mod))
        )
        flip = self.b.op("logical_and", self.b.ne(mod, c(0.0)), signs_differ)
        div = self.b.where(flip, self.binary("sub", div, c(1.0)), div)
        fl = self.b.op("floor", div)
        fl = self.b.where(self.b.gt(self.binary("sub", div, fl), c(0.5)), self.binary("add", fl, c(1.0)), fl)
        fl = self.b.where(self.b.eq(div, c(0.0)), self.binary("mul", q, c(0.0)), fl)
        return self.b.where(self.b.eq(b, c(0.0)), q, fl)

    # ------------------------------------------------------------ contraction
    def a_matmul(self, a: Any, b: Any) -> Value:
        """``torch.matmul``'s rules (``mm`` and ``bmm`` are its 2-d and 3-d cases): a 1-d left operand is a row
        [1, K], a 1-d right one a column [K, 1], and the result drops that axis; a left operand of rank >= 3
        times a matrix is one GEMM over its rows merged, as torch folds it; other batch axes broadcast."""
        x, y = self.tensor(a), self.tensor(b)
        sx, sy = self.shape(x), self.shape(y)
        if not sx or not sy:
            raise _Unsupported(f"matmul of shapes {sx} and {sy}: both operands need rank >= 1")
        if len(sx) == 1:
            x = self.reshape(x, (1, sx[0]))
        elif len(sx) >= 3 and len(sy) <= 2:
            x = self.reshape(x, (math.prod(sx[:-1]), sx[-1]))
        if len(sy) == 1:
            y = self.reshape(y, (sy[0], 1))
        return self.reshape(self.b.matmul(*self.align(x, y)), self.out_shape())

    def a_addmm(self, bias: Any, a: Any, b: Any, beta: Any = 1, alpha: Any = 1) -> Value:
        if beta != 1 or alpha != 1:
            raise _Unsupported(f"addmm with beta={beta!r}, alpha={alpha!r} (only 1, 1)")
        y = self.b.matmul(self.tensor(a), self.tensor(b))
        return self.reshape(self.binary("add", y, self.tensor(bias, "bias")), self.out_shape())

    # ------------------------------------------------------------ normalization (pools: aten_spatial)
    def affine(self, w: Any, b: Any, c: int) -> tuple[Value, Value]:
        """A normalization's scale and shift, ones and zeros where the module has none."""
        wv = self.tensor(w) if w is not None else self.const(("ones", c), "const.ones", lambda: torch.ones(c))
        bv = self.tensor(b) if b is not None else self.const(("zeros", c), "const.zeros", lambda: torch.zeros(c))
        return wv, bv

    def a_batchnorm(self, x: Any, w: Any, b: Any, mean: Any, var: Any, momentum: Any, eps: float) -> tuple[Any, ...]:
        v = self.tensor(x)
        c = self.shape(v)[1]
        wv, bv = self.affine(w, b, c)
        y = self.b.batchnorm(v, wv, bv, self.tensor(mean), self.tensor(var), eps=float(eps))
        return (y, NotComputed("batch-norm's saved mean"), NotComputed("batch-norm's saved rstd"))

    def a_layernorm(self, x: Any, shape: Any, w: Any, b: Any, eps: float) -> tuple[Any, ...]:
        wv = None if w is None else self.tensor(w)
        bv = None if b is None else self.tensor(b)
        y = self.layernorm(self.tensor(x), shape, wv, bv, eps, f"const.{self.node_name()}")
        return (y, NotComputed("layer-norm's mean"), NotComputed("layer-norm's rstd"))

    def a_softmax(self, x: Any, dim: int, half_to_float: bool = False) -> Value:
        if half_to_float:
            raise _Unsupported("softmax with half_to_float=True")
        return self.softmax(self.tensor(x), dim)

    def a_binary(self, a: Any, b: Any) -> Value:
        """The registry op this overload spells, of two tensors with broadcasting (maximum, logical_and...)."""
        op = spelled(self.current)[0].name
        return self.reshape(self.binary(op, self.tensor(a), self.tensor(b)), self.out_shape())

    def a_power(self, x: Any, y: Any) -> Value:
        """x ** y with a tensor exponent (or a number raised to a tensor), float32 as torch computes it: an
        int64 or bool operand is cast first, as torch promotes it; an int64 result is refused."""
        if self.meta_dtype() not in (None, "float32"):
            raise _Unsupported(f"power with a {self.meta_dtype()} result (float32 only)")
        like = self.tensor(y if isinstance(x, (int, float)) else x)
        xs, ys = (
            self.tensor(v) if not isinstance(v, (int, float)) else self.scalar_like(float(v), like) for v in (x, y)
        )
        xs, ys = (v if self.b.graph.dtype_of(v) == "float32" else self.b.cast(v, dtype="float32") for v in (xs, ys))
        return self.reshape(self.binary("power", xs, ys), self.out_shape())

    def a_atan2(self, y: Any, x: Any) -> Value:
        """atan2(y, x); an int64 or bool operand is cast to float32 first, as torch promotes it."""
        if self.meta_dtype() not in (None, "float32"):
            raise _Unsupported(f"atan2 with a {self.meta_dtype()} result (float32 only)")
        ys, xs = (self.tensor(v) for v in (y, x))
        ys, xs = (v if self.b.graph.dtype_of(v) == "float32" else self.b.cast(v, dtype="float32") for v in (ys, xs))
        return self.reshape(self.binary("atan2", ys, xs), self.out_shape())

    def a_clamp_tensor(self, x: Any, lo: Any = None, hi: Any = None) -> Value:
        """clamp with tensor bounds: minimum(maximum(x, lo), hi)."""
        v = self.tensor(x)
        for op, bound in (("maximum", lo), ("minimum", hi)):
            if bound is not None:
                b = self.tensor(bound) if not isinstance(bound, (int, float)) else self.scalar_like(bound, v)
                v = self.binary(op, v, b)
        return self.reshape(v, self.out_shape())

    def a_vector_norm(self, x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Value:
        """The 2-norm sqrt(sum(x * x)), the 1-norm sum(|x|), the inf-norm max(|x|) over ``dim`` (weight norm,
        F.normalize)."""
        if dtype not in (None, torch.float32):
            raise _Unsupported(f"vector norm with dtype={dtype}")
        v = self.tensor(x)
        r = len(self.shape(v))
        axes = self.reduce_axes(dim, r)
        kd = int(bool(keepdim))
        if ord == 2:
            y = self.b.op("sqrt", self.b.op("reduce_sum", self.b.mul(v, v), axes=axes, keepdim=kd))
        elif ord == 1:
            y = self.b.op("reduce_sum", self.b.op("abs", v), axes=axes, keepdim=kd)
        elif ord == float("inf"):
            y = self.b.op("reduce_max", self.b.op("abs", v), axes=axes, keepdim=kd)
        else:
            raise _Unsupported(f"vector norm of order {ord!r} (only 1, 2 and inf)")
        return self.reshape(y, self.out_shape())

    def a_leaky_relu(self, x: Any, slope: Any = 0.01) -> Value:
        v = self.tensor(x)
        return self.b.where(self.binary("gt", v, self.scalar_like(0.0, v)), v, self.b.smul(v, scalar=float(slope)))

    def a_elu(self, x: Any, alpha: Any = 1.0, scale: Any = 1.0, input_scale: Any = 1.0) -> Value:
        """elu, selu: scale * x where x > 0, else scale * alpha * expm1(input_scale * x)."""
        v = self.tensor(x)
        e = self.b.op("expm1", v if float(input_scale) == 1.0 else self.b.smul(v, scalar=float(input_scale)))
        pos = v if float(scale) == 1.0 else self.b.smul(v, scalar=float(scale))
        neg = self.b.smul(e, scalar=float(scale) * float(alpha))
        return self.b.where(self.binary("gt", v, self.scalar_like(0.0, v)), pos, neg)

    def a_instancenorm(self, x: Any, w: Any, b: Any, training: bool, momentum: Any, eps: float) -> tuple[Any, ...]:
        """Batch statistics per channel: torch's instance norm, which folds the batch into the channels
        first (a batch of one), so a group norm with one channel a group."""
        v = self.tensor(x)
        s = self.shape(v)
        if len(s) < 3 or s[0] != 1:
            raise _Unsupported(f"batch normalization with batch statistics over shape {s} (training mode)")
        c = s[1]
        wv, bv = self.affine(w, b, c)
        x4 = self.reshape(v, (1, c, 1, math.prod(s[2:])))
        y = self.reshape(self.b.op("groupnorm", x4, wv, bv, num_groups=c, eps=float(eps)), s)
        return (y, NotComputed("batch-norm's saved mean"), NotComputed("batch-norm's saved rstd"))

    def a_log_softmax(self, x: Any, dim: int, half_to_float: bool = False) -> Value:
        """x - max - log(sum(exp(x - max))) along ``dim``: finite wherever torch's is (log(softmax(x)) is
        -inf once a probability underflows)."""
        if half_to_float:
            raise _Unsupported("log_softmax with half_to_float=True")
        v = self.tensor(x)
        axes = (self.axis(dim, len(self.shape(v))),)
        y = self.binary("sub", v, self.b.op("reduce_max", v, axes=axes, keepdim=1))
        total = self.b.op("reduce_sum", self.b.op("exp", y), axes=axes, keepdim=1)
        return self.binary("sub", y, self.b.op("log", total))

    def a_mean(self, x: Any, dims: Any, keepdim: bool = False, dtype: Any = None) -> Value:
        v = self.tensor(x)
        s = self.shape(v)
        axes = sorted(self.axis(d, len(s)) for d in (dims or range(len(s))))
        if dtype not in (None, torch.float32):
            raise _Unsupported(f"mean with dtype={dtype}")
        if len(s) == 4 and axes == [2, 3]:
            return self.reshape(self.b.global_avgpool(v), self.out_shape())
        return self.b.op("reduce_mean", v, axes=tuple(axes), keepdim=int(bool(keepdim)))

    # ------------------------------------------------------------ activations, reductions, norms
    def a_clamp(self, x: Any, lo: Any = None, hi: Any = None) -> Value:
        if self.current is aten.hardtanh.default:
            lo, hi = (-1.0 if lo is None else lo), (1.0 if hi is None else hi)
        if isinstance(lo, torch.Tensor) or isinstance(hi, torch.Tensor):
            raise _Unsupported("clamp with tensor bounds")
        return self.clamp(self.tensor(x), lo, hi)

    def a_reduce(self, x: Any, dims: Any = None, keepdim: bool = False, dtype: Any = None) -> Value:
        v = self.tensor(x)
        s = self.shape(v)
        if dtype not in (None, torch.float32):
            raise _Unsupported(f"reduction with dtype={dtype}")
        axes = self.reduce_axes(dims, len(s))
        return self.b.op(spelled(self.current)[0].name, v, axes=axes, keepdim=int(bool(keepdim)))

    def a_prod(self, x: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Value:
        """torch.prod over one dim, or all of them (``prod.default``, whose second argument is the dtype)."""
        if self.current is aten.prod.default:
            dim, keepdim, dtype = None, False, dim if dtype is None else dtype
        v = self.tensor(x)
        have = TORCH_DTYPE[self.b.graph.dtype_of(v)]
        if have not in (torch.float32, torch.int64) or dtype not in (None, have):
            raise _Unsupported(f"prod of {have} with dtype={dtype} (float32 or int64, unchanged)")
        return self.b.op("reduce_prod", v, axes=self.reduce_axes(dim, len(self.shape(v))), keepdim=int(bool(keepdim)))

    def a_var(self, x: Any, dims: Any = None, *, correction: Any = None, keepdim: bool = False) -> Value:
        v = self.tensor(x)
        s = self.shape(v)
        axes = self.reduce_axes(dims, len(s))
        corr = 1 if correction is None else correction
        if corr != int(corr):
            raise _Unsupported(f"variance with correction {corr!r} (only integers)")
        return self.b.op("reduce_var", v, axes=axes, keepdim=int(bool(keepdim)), correction=int(corr))

    def a_pad(self, x: Any, pads: Sequence[int], value: Any = 0.0) -> Value:
        return self.pad(self.tensor(x), pads, value)

    def a_groupnorm(self, x: Any, w: Any, b: Any, n: int, c: int, hw: int, groups: int, eps: float) -> tuple[Any, ...]:
        v = self.tensor(x)
        wv, bv = self.affine(w, b, c)
        y = self.b.op("groupnorm", v, wv, bv, num_groups=int(groups), eps=float(eps))
        return (y, NotComputed("group-norm's mean"), NotComputed("group-norm's rstd"))
