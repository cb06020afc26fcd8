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

from rewrite.frontends.aten import (
    ATEN_ROWS,
    a_addmm,
    a_batchnorm,
    a_cat,
    a_clamp,
    a_groupnorm,
    a_layernorm,
    a_log_softmax,
    a_mean,
    a_pad,
    a_pow,
    a_reduce,
    a_select,
    a_softmax,
    a_split,
    cast_to,
)
from rewrite.frontends.aten_base import training_converter
from rewrite.frontends.aten_indexing import a_full_like, a_where
from rewrite.frontends.aten_spatial import a_convolution, a_maxpool, a_maxpool3d
from rewrite.frontends.aten_spelled import RowTable
from rewrite.frontends.aten_state import ImportState, _Unsupported
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

# training-IR overload → (converter name, registry ops it produces), as in ``ATEN``; an overload whose converter
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


# One ``a_*`` converter per ``TRAINING_IR`` row (each a ``training_converter``: no ``ATEN`` row names it),
# each a core-ATen converter applied to the call torch's decomposition would make.


@training_converter
def a_linear(st: ImportState, x: Any, w: Any, b: Any = None) -> Value:
    """``x @ w.T + b`` as torch decomposes it: the rows of ``x`` merged into one matrix (a vector is one
    row), one GEMM with the transposed weight, the bias added, the leading axes restored."""
    v = st.tensor(x)
    s = st.shape(v)
    if not s:
        raise _Unsupported("linear of a 0-d tensor")
    rows = st.reshape(v, (math.prod(s[:-1]), s[-1]))
    wt = transposed_weight(st, w)
    if b is None:
        return st.reshape(st.b.matmul(rows, wt), st.out_shape())
    return a_addmm(st, b, rows, wt)


def transposed_weight(st: ImportState, w: Any) -> Value:
    """``w.t()``: a parameter becomes the weight stored transposed, named ``<param>_t``, as the importer
    folds core ATen's ``permute(w, [1, 0])``; a run-time weight (torch.compile passes parameters as
    inputs) is transposed by a node."""
    if not isinstance(w, torch.Tensor):
        wv = st.tensor(w, "weight")
        if len(st.shape(wv)) != 2:
            raise _Unsupported(f"linear weight of shape {st.shape(wv)} (only 2-d)")
        return st.b.transpose(wv, perm=(1, 0))
    if w.dim() != 2:
        raise _Unsupported(f"linear weight of shape {tuple(w.shape)} (only 2-d)")
    wt = w.t()
    st.keep_alive.append(wt)  # its id names the weight below: it must outlive the import
    if id(w) in st.param_names:
        st.param_names[id(wt)] = st.param_names[id(w)] + "_t"
    return st.tensor(wt, "weight")


@training_converter
def a_same(st: ImportState, x: Any, *rest: Any, **kw: Any) -> Any:
    """Its input's values: a constant stays a constant (GPT-2's empty key/value cache, ``detach_``-ed,
    is dropped by the ``cat`` it feeds), a run-time value stays that value."""
    return x if isinstance(x, torch.Tensor) else st.tensor(x)


@training_converter
def a_conv(
    st: ImportState,
    x: Any,
    w: Any,
    b: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: Any = 1,
) -> Value:
    """``conv1d`` / ``conv2d`` / ``conv3d`` with explicit padding (a string one is ``conv2d.padding``,
    another overload)."""
    return a_convolution(st, x, w, b, stride, padding, dilation, False, 0, groups)


@training_converter
def a_conv_transpose(
    st: ImportState,
    x: Any,
    w: Any,
    b: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: Any = 1,
    dilation: Any = 1,
) -> Value:
    return a_convolution(st, x, w, b, stride, padding, dilation, True, output_padding, groups)


@training_converter
def a_batch_norm(
    st: ImportState,
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
    return a_batchnorm(st, x, w, b, mean, var, momentum, eps)[0]


@training_converter
def a_layer_norm(
    st: ImportState, x: Any, shape: Any, w: Any = None, b: Any = None, eps: float = 1e-5, cudnn_enable: bool = True
) -> Value:
    return a_layernorm(st, x, shape, w, b, eps)[0]


@training_converter
def a_group_norm(
    st: ImportState, x: Any, groups: int, w: Any = None, b: Any = None, eps: float = 1e-5, cudnn_enabled: bool = True
) -> Value:
    s = st.shape(st.tensor(x))
    if len(s) < 2:
        raise _Unsupported(f"group norm of shape {s} (needs (N, C, ...))")
    return a_groupnorm(st, x, w, b, s[0], s[1], math.prod(s[2:]), groups, eps)[0]


@training_converter
def a_dropout(st: ImportState, x: Any, p: float, train: bool) -> Value:
    """Off (``train=False``, or p = 0, which torch returns unchanged too), dropout is its input."""
    if train and p != 0:
        raise _Unsupported(f"dropout in training mode (p={p}) is random; call module.eval()")
    return st.tensor(x)


@training_converter
def a_softmax_int(st: ImportState, x: Any, dim: int, dtype: Any = None) -> Value:
    same_dtype(st, x, dtype, "softmax")
    return a_softmax(st, x, dim)


@training_converter
def a_log_softmax_int(st: ImportState, x: Any, dim: int, dtype: Any = None) -> Value:
    same_dtype(st, x, dtype, "log_softmax")
    return a_log_softmax(st, x, dim)


def same_dtype(st: ImportState, x: Any, dtype: Any, what: str) -> None:
    """A ``dtype`` argument that converts the input first: accepted only when it is the input's own."""
    have = TORCH_DTYPE[st.b.graph.dtype_of(st.tensor(x))]
    if dtype is not None and dtype != have:
        raise _Unsupported(f"{what} of a {have} tensor with dtype={dtype}")


@training_converter
def a_chunk(st: ImportState, x: Any, chunks: int, dim: int = 0) -> tuple[Any, ...]:
    """torch.chunk: pieces of ceil(n / chunks) along ``dim`` (fewer pieces when they run out), which is
    how torch decomposes it, into ``split``."""
    s = st.shape(st.tensor(x))
    n = s[st.axis(dim, len(s))]
    if chunks < 1 or n == 0:
        raise _Unsupported(f"chunk of {n} elements into {chunks}")
    return a_split(st, x, -(-n // chunks), dim)


@training_converter
def a_to(st: ImportState, x: Any, *args: Any, **kw: Any) -> Value:
    """``to(dtype)``, ``to(dtype=..., device=...)``, ``type_as(other)``: the dtype torch computed for the
    node, so every overload reads it the same way; layouts other than strided are refused."""
    if kw.get("layout") not in (None, torch.strided):
        raise _Unsupported(f"conversion to layout {kw['layout']}")
    val = st.meta_val()
    if not isinstance(val, torch.Tensor):
        raise _Unsupported("torch did not produce a single tensor here")
    return cast_to(st, st.tensor(x), val.dtype)


@training_converter
def a_max_pool(
    st: ImportState, x: Any, kernel: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False
) -> Value:
    """``max_pool2d`` / ``max_pool3d``: their ``_with_indices`` forms' values."""
    pool = a_maxpool if st.current is aten.max_pool2d.default else a_maxpool3d
    return pool(st, x, kernel, stride, padding, dilation, ceil_mode)[0]


@training_converter
def a_relu6(st: ImportState, x: Any) -> Value:
    return st.clamp(st.tensor(x), 0.0, 6.0)


@training_converter
def a_pad_mode(st: ImportState, x: Any, pad: Any, mode: str = "constant", value: Any = None) -> Value:
    """F.pad's ATen form; only the constant mode (reflect, replicate and circular decompose to indexing)."""
    if mode != "constant":
        raise _Unsupported(f"padding mode {mode!r}")
    return a_pad(st, x, pad, 0.0 if value is None else value)


@training_converter
def a_unbind(st: ImportState, x: Any, dim: int = 0) -> tuple[Value, ...]:
    """The slices along ``dim``, that axis dropped: one ``select`` each."""
    s = st.shape(st.tensor(x))
    return tuple(a_select(st, x, dim, i) for i in range(s[st.axis(dim, len(s))]))


@training_converter
def a_stack(st: ImportState, tensors: Any, dim: int = 0) -> Value:
    """Each tensor with a new axis of one at ``dim``, concatenated along it."""
    xs = [st.tensor(t, "stack operand") for t in tensors]
    s = st.shape(xs[0])
    d = st.axis(dim, len(s) + 1)
    return a_cat(st, [st.reshape(v, s[:d] + (1,) + s[d:]) for v in xs], d)


@training_converter
def a_square(st: ImportState, x: Any) -> Value:
    return a_pow(st, x, 2)


@training_converter
def a_clamp_min(st: ImportState, x: Any, lo: Any) -> Value:
    return a_clamp(st, x, lo, None)


@training_converter
def a_clamp_max(st: ImportState, x: Any, hi: Any) -> Value:
    return a_clamp(st, x, None, hi)


@training_converter
def a_where_scalar(st: ImportState, cond: Any, x: Any, y: Any) -> Value:
    """``where`` with a number for either branch: the number as a 0-d constant of the result's dtype,
    which is what torch converts it to (and its decomposition builds with ``scalar_tensor``)."""
    val = st.meta_val()
    if not isinstance(val, torch.Tensor):
        raise _Unsupported("torch did not produce a single tensor here")

    def branch(v: Any) -> Any:
        if not isinstance(v, (bool, int, float)):
            return v
        t = torch.tensor(v, dtype=val.dtype)
        if not val.dtype.is_floating_point and t.item() != v:
            raise _Unsupported(f"where with {v!r} in a {val.dtype} result")
        st.keep_alive.append(t)
        return t

    return a_where(st, cond, branch(x), branch(y))


@training_converter
def a_reduce_all(st: ImportState, x: Any, dtype: Any = None) -> Value:
    """``sum`` / ``mean`` over every axis: core ATen's ``sum.dim_IntList(x, [])``, ``mean.dim(x, [])``."""
    if st.current is aten.mean.default:
        return a_mean(st, x, None, False, dtype)
    return a_reduce(st, x, None, False, dtype)


@training_converter
def a_fill_like(st: ImportState, x: Any, **kw: Any) -> Value:
    """``zeros_like`` / ``ones_like``: ``full_like`` with 0 or 1."""
    return a_full_like(st, x, 1 if st.current is aten.ones_like.default else 0, **kw)


__all__ = [
    "CONVERTERS",
    "TRAINING_IR",
    "a_batch_norm",
    "a_chunk",
    "a_clamp_max",
    "a_clamp_min",
    "a_conv",
    "a_conv_transpose",
    "a_dropout",
    "a_fill_like",
    "a_group_norm",
    "a_layer_norm",
    "a_linear",
    "a_log_softmax_int",
    "a_max_pool",
    "a_pad_mode",
    "a_reduce_all",
    "a_relu6",
    "a_same",
    "a_softmax_int",
    "a_square",
    "a_stack",
    "a_to",
    "a_unbind",
    "a_where_scalar",
]
