"""torch.export's training IR → registry ops: rows for the ATen overloads ``torch.export.export`` leaves in
a graph and ``run_decompositions`` would split into core ATen (``linear``, ``conv2d``, ``batch_norm``,
``layer_norm``, ``dropout``, ``softmax.int``, ``chunk``, ``to.dtype`` ...).

Each row builds what the core-ATen rows of :data:`rewrite.frontends.aten.ATEN` build for torch's own
decomposition of the call, by calling those rows' converters, so every op's meaning is written once:

    aten.linear(x, w, b)           → addmm(b, x.view(-1, K), w.t()).view(..., N)      (a_addmm)
    aten.conv2d(x, w, b, s, p, d, g) → convolution(x, w, b, s, p, d, False, 0, g)     (a_convolution)
    aten.batch_norm(..., training=False, ...) → _native_batch_norm_legit_no_training(...)[0]  (a_batchnorm)
    aten.dropout(x, p, train=False) → x

A call the core rows do not express that way (batch norm in training mode, dropout that is on, a padding
mode other than constant) raises ``_Unsupported``: ``torch_export.capture`` then converts the program
through ``run_decompositions`` instead, as for an overload with no row at all.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from rewrite.frontends.aten import ATEN_ROWS, AtenConverters
from rewrite.frontends.aten_spelled import RowTable
from rewrite.frontends.aten_state import _Unsupported
from rewrite.ir.dtypes import TORCH_DTYPE
from rewrite.ir.graph import Value

aten = torch.ops.aten

_DROPOUTS = (
    aten.dropout.default,
    aten.feature_dropout.default,
    aten.alpha_dropout.default,
    aten.feature_alpha_dropout.default,
)
_CONVS = (aten.conv1d.default, aten.conv2d.default, aten.conv3d.default)
_CONV_TRANSPOSES = (aten.conv_transpose1d.default, aten.conv_transpose2d.input, aten.conv_transpose3d.input)

# training-IR overload → (converter method, registry ops it produces), as in ``ATEN``; an overload whose converter
# builds one registry op (``softmax.int``, ``layer_norm``, ``chunk``, ``to.dtype``, ``where.Scalar``...) is a
# ``training_only`` spelling of that op (``OpDef.aten``) instead
TRAINING_IR: dict[Any, tuple[str, str]] = {
    aten.linear.default: ("a_linear", "matmul, add"),
    **{op: ("a_conv", "conv2d, add") for op in _CONVS},
    **{op: ("a_conv_transpose", "conv2d, add") for op in _CONV_TRANSPOSES},
    **{op: ("a_dropout", "-") for op in _DROPOUTS},
    aten.log_softmax.int: ("a_log_softmax_int", "reduce_max, sub, exp, reduce_sum, log"),
    aten.contiguous.default: ("a_same", "-"),
    # ``detach_`` is in place, but it changes only autograd's record of a tensor, never its values
    aten.detach_.default: ("a_same", "-"),
    aten.max_pool3d.default: ("a_max_pool", "reshape, maxpool2d|pad, slice, index_select, maximum"),
    aten.adaptive_avg_pool2d.default: ("a_adaptive_avgpool", "global_avgpool|avgpool2d|adaptive_avgpool"),
    aten.adaptive_avg_pool3d.default: ("a_adaptive_avgpool3d", "reshape, avgpool2d"),
    # layout and elementwise calls that build several ops, or pick among ops by argument
    aten.unbind.int: ("a_unbind", "slice, reshape"),
    aten.stack.default: ("a_stack", "reshape, concat"),
    aten.clamp_min.default: ("a_clamp_min", "clamp|relu"),
    aten.zeros_like.default: ("a_fill_like", "expand"),
    aten.ones_like.default: ("a_fill_like", "expand"),
}

# every overload the export importer converts: core ATen's rows, then the training IR's, and the registry's
# (``OpDef.aten``, looked up when converting: an op registered at run time has its row)
CONVERTERS = RowTable({**ATEN_ROWS, **TRAINING_IR}, training=True)


class AtenTrainingIR(AtenConverters):
    """One ``a_*`` method per ``TRAINING_IR`` row, each a core-ATen converter applied to the call torch's
    decomposition would make."""

    def a_linear(self, x: Any, w: Any, b: Any = None) -> Value:
        """``x @ w.T + b`` as torch decomposes it: the rows of ``x`` merged into one matrix (a vector is one
        row), one GEMM with the transposed weight, the bias added, the leading axes restored."""
        v = self.tensor(x)
        s = self.shape(v)
        if not s:
            raise _Unsupported("linear of a 0-d tensor")
        rows = self.reshape(v, (math.prod(s[:-1]), s[-1]))
        wt = self.transposed_weight(w)
        if b is None:
            return self.reshape(self.b.matmul(rows, wt), self.out_shape())
        return self.a_addmm(b, rows, wt)

    def transposed_weight(self, w: Any) -> Value:
        """``w.t()``: a parameter becomes the weight stored transposed, named ``<param>_t``, as the importer
        folds core ATen's ``permute(w, [1, 0])``; a run-time weight (torch.compile passes parameters as
        inputs) is transposed by a node."""
        if not isinstance(w, torch.Tensor):
            wv = self.tensor(w, "weight")
            if len(self.shape(wv)) != 2:
                raise _Unsupported(f"linear weight of shape {self.shape(wv)} (only 2-d)")
            return self.b.transpose(wv, perm=(1, 0))
        if w.dim() != 2:
            raise _Unsupported(f"linear weight of shape {tuple(w.shape)} (only 2-d)")
        wt = w.t()
        self.keep_alive.append(wt)  # its id names the weight below: it must outlive the import
        if id(w) in self.param_names:
            self.param_names[id(wt)] = self.param_names[id(w)] + "_t"
        return self.tensor(wt, "weight")

    def a_same(self, x: Any, *rest: Any, **kw: Any) -> Any:
        """Its input's values: a constant stays a constant (GPT-2's empty key/value cache, ``detach_``-ed,
        is dropped by the ``cat`` it feeds), a run-time value stays that value."""
        return x if isinstance(x, torch.Tensor) else self.tensor(x)

    def a_conv(
        self, x: Any, w: Any, b: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: Any = 1
    ) -> Value:
        """``conv1d`` / ``conv2d`` / ``conv3d`` with explicit padding (a string one is ``conv2d.padding``,
        another overload)."""
        return self.a_convolution(x, w, b, stride, padding, dilation, False, 0, groups)

    def a_conv_transpose(
        self,
        x: Any,
        w: Any,
        b: Any = None,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: Any = 1,
        dilation: Any = 1,
    ) -> Value:
        return self.a_convolution(x, w, b, stride, padding, dilation, True, output_padding, groups)

    def a_batch_norm(
        self,
        x: Any,
        w: Any,
        b: Any,
        mean: Any,
        var: Any,
        training: bool,
        momentum: Any,
        eps: float,
        cudnn_enabled: bool = True,
    ) -> Value:
        """Inference only: in training mode (or without running statistics, which forces it) batch norm
        normalizes by the batch's statistics and updates the running ones in place."""
        if training or mean is None or var is None:
            raise _Unsupported("batch norm with batch statistics (training mode or no running statistics)")
        return self.a_batchnorm(x, w, b, mean, var, momentum, eps)[0]

    def a_layer_norm(
        self, x: Any, shape: Any, w: Any = None, b: Any = None, eps: float = 1e-5, cudnn_enable: bool = True
    ) -> Value:
        return self.a_layernorm(x, shape, w, b, eps)[0]

    def a_group_norm(
        self, x: Any, groups: int, w: Any = None, b: Any = None, eps: float = 1e-5, cudnn_enabled: bool = True
    ) -> Value:
        s = self.shape(self.tensor(x))
        if len(s) < 2:
            raise _Unsupported(f"group norm of shape {s} (needs (N, C, ...))")
        return self.a_groupnorm(x, w, b, s[0], s[1], math.prod(s[2:]), groups, eps)[0]

    def a_dropout(self, x: Any, p: float, train: bool) -> Value:
        """Off (``train=False``, or p = 0, which torch returns unchanged too), dropout is its input."""
        if train and p != 0:
            raise _Unsupported(f"dropout in training mode (p={p}) is random; call module.eval()")
        return self.tensor(x)

    def a_softmax_int(self, x: Any, dim: int, dtype: Any = None) -> Value:
        self.same_dtype(x, dtype, "softmax")
        return self.a_softmax(x, dim)

    def a_log_softmax_int(self, x: Any, dim: int, dtype: Any = None) -> Value:
        self.same_dtype(x, dtype, "log_softmax")
        return self.a_log_softmax(x, dim)

    def same_dtype(self, x: Any, dtype: Any, what: str) -> None:
        """A ``dtype`` argument that converts the input first: accepted only when it is the input's own."""
        have = TORCH_DTYPE[self.b.graph.dtype_of(self.tensor(x))]
        if dtype is not None and dtype != have:
            raise _Unsupported(f"{what} of a {have} tensor with dtype={dtype}")

    def a_chunk(self, x: Any, chunks: int, dim: int = 0) -> tuple[Any, ...]:
        """torch.chunk: pieces of ceil(n / chunks) along ``dim`` (fewer pieces when they run out), which is
        how torch decomposes it, into ``split``."""
        s = self.shape(self.tensor(x))
        n = s[self.axis(dim, len(s))]
        if chunks < 1 or n == 0:
            raise _Unsupported(f"chunk of {n} elements into {chunks}")
        return self.a_split(x, -(-n // chunks), dim)

    def a_to(self, x: Any, *args: Any, **kw: Any) -> Value:
        """``to(dtype)``, ``to(dtype=..., device=...)``, ``type_as(other)``: the dtype torch computed for the
        node, so every overload reads it the same way; layouts other than strided are refused."""
        if kw.get("layout") not in (None, torch.strided):
            raise _Unsupported(f"conversion to layout {kw['layout']}")
        val = self.meta_val()
        if not isinstance(val, torch.Tensor):
            raise _Unsupported("torch did not produce a single tensor here")
        return self.cast_to(self.tensor(x), val.dtype)

    def a_max_pool(
        self, x: Any, kernel: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False
    ) -> Value:
        """``max_pool2d`` / ``max_pool3d``: their ``_with_indices`` forms' values."""
        pool = self.a_maxpool if self.current is aten.max_pool2d.default else self.a_maxpool3d
        return pool(x, kernel, stride, padding, dilation, ceil_mode)[0]

    def a_relu6(self, x: Any) -> Value:
        return self.clamp(self.tensor(x), 0.0, 6.0)

    def a_pad_mode(self, x: Any, pad: Any, mode: str = "constant", value: Any = None) -> Value:
        """F.pad's ATen form; only the constant mode (reflect, replicate and circular decompose to indexing)."""
        if mode != "constant":
            raise _Unsupported(f"padding mode {mode!r}")
        return self.a_pad(x, pad, 0.0 if value is None else value)

    def a_unbind(self, x: Any, dim: int = 0) -> tuple[Value, ...]:
        """The slices along ``dim``, that axis dropped: one ``select`` each."""
        s = self.shape(self.tensor(x))
        return tuple(self.a_select(x, dim, i) for i in range(s[self.axis(dim, len(s))]))

    def a_stack(self, tensors: Any, dim: int = 0) -> Value:
        """Each tensor with a new axis of one at ``dim``, concatenated along it."""
        xs = [self.tensor(t, "stack operand") for t in tensors]
        s = self.shape(xs[0])
        d = self.axis(dim, len(s) + 1)
        return self.a_cat([self.reshape(v, s[:d] + (1,) + s[d:]) for v in xs], d)

    def a_square(self, x: Any) -> Value:
        return self.a_pow(x, 2)

    def a_clamp_min(self, x: Any, lo: Any) -> Value:
        return self.a_clamp(x, lo, None)

    def a_clamp_max(self, x: Any, hi: Any) -> Value:
        return self.a_clamp(x, None, hi)

    def a_where_scalar(self, cond: Any, x: Any, y: Any) -> Value:
        """``where`` with a number for either branch: the number as a 0-d constant of the result's dtype,
        which is what torch converts it to (and its decomposition builds with ``scalar_tensor``)."""
        val = self.meta_val()
        if not isinstance(val, torch.Tensor):
            raise _Unsupported("torch did not produce a single tensor here")

        def branch(v: Any) -> Any:
            if not isinstance(v, (bool, int, float)):
                return v
            t = torch.tensor(v, dtype=val.dtype)
            if not val.dtype.is_floating_point and t.item() != v:
                raise _Unsupported(f"where with {v!r} in a {val.dtype} result")
            self.keep_alive.append(t)
            return t

        return self.a_where(cond, branch(x), branch(y))

    def a_reduce_all(self, x: Any, dtype: Any = None) -> Value:
        """``sum`` / ``mean`` over every axis: core ATen's ``sum.dim_IntList(x, [])``, ``mean.dim(x, [])``."""
        if self.current is aten.mean.default:
            return self.a_mean(x, None, False, dtype)
        return self.a_reduce(x, None, False, dtype)

    def a_fill_like(self, x: Any, **kw: Any) -> Value:
        """``zeros_like`` / ``ones_like``: ``full_like`` with 0 or 1."""
        return self.a_full_like(x, 1 if self.current is aten.ones_like.default else 0, **kw)


__all__ = ["CONVERTERS", "TRAINING_IR", "AtenTrainingIR"]
