"""Function and ``Tensor`` method converters for :mod:`rewrite.frontends.torch_fx`.

The tables map a ``call_function`` target (``_FUNCTIONS``) or a ``call_method``
name (``_METHODS``) to an ``f_<kind>`` handler of :class:`_FunctionConverters`,
with the argument spec used to bind the call (``function_entry`` /
``method_entry`` also read the spellings of unary ops kept in the op registry,
``OpDef.torch_functions`` / ``torch_methods``, so a registered op imports); the ``_VIEW_*`` sets say which ops
may return a view of their input (used to check in-place ops).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.fx.passes.shape_prop import TensorMetadata

from rewrite.frontends.torch_modules import _DROPOUT_MODULES, _ModuleConverters, _Unsupported
from rewrite.ir.graph import Value
from rewrite.ir.ops import OPS, Shape

_REQ = object()  # marks a required argument in a spec


def _spec(*required: str, **optional: Any) -> tuple[tuple[str, Any], ...]:
    return tuple((n, _REQ) for n in required) + tuple(optional.items())


# call_function: target -> (handler method, argument spec or None for raw args, extra)
_FUNCTIONS: dict[Any, tuple[str, Any, Any]] = {}


def _fn(targets: Iterable[Any], handler: str, spec: Any = None, extra: Any = None) -> None:
    for t in targets:
        _FUNCTIONS[t] = (handler, spec, extra)


# unary ops without attributes are spelled in the registry (OpDef.torch_functions / torch_methods)
_fn([torch.relu_], "f_unary", _spec("input"), "relu")
_fn([F.gelu], "f_gelu", _spec("input", approximate="none"))
_fn([F.silu], "f_silu", _spec("input", inplace=False))
_fn([F.dropout], "f_dropout", _spec("input", p=0.5, training=True, inplace=False))
_fn([F.softmax], "f_softmax", _spec("input", dim=None, _stacklevel=3, dtype=None))
_fn([torch.softmax], "f_softmax", _spec("input", dim=None, dtype=None))
_fn([F.linear], "f_linear", _spec("input", "weight", bias=None))
_fn([F.conv2d], "f_conv2d", _spec("input", "weight", bias=None, stride=1, padding=0, dilation=1, groups=1))
_fn(
    [F.max_pool2d],
    "f_maxpool",
    _spec("input", "kernel_size", stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False),
)
_fn(
    [F.avg_pool2d],
    "f_avgpool",
    _spec(
        "input", "kernel_size", stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
    ),
)
_fn([F.adaptive_avg_pool2d], "f_adaptive_avgpool", _spec("input", "output_size"))
_fn([F.layer_norm], "f_layernorm", _spec("input", "normalized_shape", weight=None, bias=None, eps=1e-5))
_fn(
    [F.batch_norm],
    "f_batchnorm",
    _spec("input", "running_mean", "running_var", weight=None, bias=None, training=False, momentum=0.1, eps=1e-5),
)
_fn([torch.mean], "f_mean", _spec("input", dim=None, keepdim=False, dtype=None))
_fn([torch.matmul, operator.matmul], "f_matmul", _spec("input", "other"), "matmul")
_fn([torch.mm], "f_matmul", _spec("input", "mat2"), "mm")
_fn([torch.bmm], "f_matmul", _spec("input", "mat2"), "bmm")
_fn([operator.add], "f_arith", _spec("input", "other"), "add")
_fn([operator.sub], "f_arith", _spec("input", "other"), "sub")
_fn([operator.mul], "f_arith", _spec("input", "other"), "mul")
_fn([operator.truediv], "f_arith", _spec("input", "other"), "div")
_fn([torch.add], "f_arith", _spec("input", "other", alpha=1), "add")
_fn([torch.sub, torch.subtract], "f_arith", _spec("input", "other", alpha=1), "sub")
_fn([torch.mul, torch.multiply], "f_arith", _spec("input", "other"), "mul")
_fn([torch.div, torch.divide], "f_arith", _spec("input", "other", rounding_mode=None), "div")
_fn([torch.true_divide], "f_arith", _spec("input", "other"), "div")
_fn([torch.atan2, torch.arctan2], "f_arith", _spec("input", "other"), "atan2")
_fn([operator.neg, torch.neg, torch.negative], "f_neg", _spec("input"))
_fn([operator.pos], "f_passthrough", _spec("input"))
_fn([torch.cat, torch.concat], "f_cat", _spec("tensors", dim=0))
_fn([torch.concatenate], "f_cat", _spec("tensors", axis=0))
_fn([torch.split], "f_split", _spec("tensor", "split_size_or_sections", dim=0))
_fn([torch.chunk], "f_split", _spec("input", "chunks", dim=0))
_fn([torch.unbind], "f_unbind", _spec("input", dim=0))
_fn([torch.transpose, torch.swapaxes, torch.swapdims], "f_transpose", _spec("input", "dim0", "dim1"))
_fn([torch.permute], "f_permute", _spec("input", "dims"))
_fn([torch.t], "f_t", _spec("input"))
_fn([torch.reshape, torch.flatten, torch.squeeze, torch.unsqueeze], "f_reshape", None)
_fn([torch.clone], "f_passthrough", _spec("input", memory_format=None))
_fn([operator.getitem], "f_getitem", _spec("obj", "index"))
_fn([getattr], "f_getattr", _spec("obj", "name"))

# call_method: method name -> (handler method, spec, extra); ``self`` is the first argument
_METHODS: dict[str, tuple[str, Any, Any]] = {
    "softmax": ("f_softmax", _spec("input", "dim", dtype=None), None),
    "mean": ("f_mean", _spec("input", dim=None, keepdim=False, dtype=None), None),
    "matmul": ("f_matmul", _spec("input", "other"), "matmul"),
    "mm": ("f_matmul", _spec("input", "mat2"), "mm"),
    "bmm": ("f_matmul", _spec("input", "mat2"), "bmm"),
    "add": ("f_arith", _spec("input", "other", alpha=1), "add"),
    "sub": ("f_arith", _spec("input", "other", alpha=1), "sub"),
    "mul": ("f_arith", _spec("input", "other"), "mul"),
    "div": ("f_arith", _spec("input", "other", rounding_mode=None), "div"),
    "true_divide": ("f_arith", _spec("input", "other"), "div"),
    "neg": ("f_neg", _spec("input"), None),
    "split": ("f_split", _spec("input", "split_size", dim=0), None),
    "chunk": ("f_split", _spec("input", "chunks", dim=0), None),
    "unbind": ("f_unbind", _spec("input", dim=0), None),
    "transpose": ("f_transpose", _spec("input", "dim0", "dim1"), None),
    "swapaxes": ("f_transpose", _spec("input", "axis0", "axis1"), None),
    "swapdims": ("f_transpose", _spec("input", "dim0", "dim1"), None),
    "permute": ("f_permute", None, None),
    "t": ("f_t", _spec("input"), None),
    "reshape": ("f_reshape", None, None),
    "view": ("f_reshape", None, None),
    "flatten": ("f_reshape", None, None),
    "squeeze": ("f_reshape", None, None),
    "unsqueeze": ("f_reshape", None, None),
    "view_as": ("f_reshape", None, None),
    "reshape_as": ("f_reshape", None, None),
    "unflatten": ("f_reshape", None, None),
    # the value is unchanged (dtype and shape are checked against torch's after the node)
    "contiguous": ("f_passthrough", None, None),
    "clone": ("f_passthrough", None, None),
    "detach": ("f_passthrough", None, None),
    "float": ("f_passthrough", None, None),
    "to": ("f_passthrough", None, None),
    "type_as": ("f_passthrough", None, None),
    # shape queries give constants (shapes are static)
    "size": ("f_size", _spec("input", dim=None), None),
    "dim": ("f_ndim", _spec("input"), None),
    "ndimension": ("f_ndim", _spec("input"), None),
    "numel": ("f_numel", _spec("input"), None),
}
_UNARY_SPEC = _spec("input", inplace=False)

# activations, reductions, norms, resize
_fn([F.hardtanh], "f_clamp", _spec("input", min_val=-1.0, max_val=1.0, inplace=False))
_fn([F.relu6], "f_clamp", _spec("input", inplace=False), (0.0, 6.0))
_fn([torch.clamp, torch.clip], "f_clamp", _spec("input", min=None, max=None))
_fn([F.pad], "f_pad", _spec("input", "pad", mode="constant", value=None))
_fn([F.group_norm], "f_groupnorm", _spec("input", "num_groups", weight=None, bias=None, eps=1e-5))
_fn([F.rms_norm], "f_rmsnorm", _spec("input", "normalized_shape", weight=None, eps=None))
_fn(
    [F.interpolate],
    "f_interpolate",
    _spec(
        "input",
        size=None,
        scale_factor=None,
        mode="nearest",
        align_corners=None,
        recompute_scale_factor=None,
        antialias=False,
    ),
)
_fn([torch.sum], "f_reduce", _spec("input", dim=None, keepdim=False, dtype=None), "reduce_sum")
_fn([torch.amax], "f_reduce", _spec("input", dim=(), keepdim=False), "reduce_max")
_fn([torch.amin], "f_reduce", _spec("input", dim=(), keepdim=False), "reduce_min")
_fn([torch.prod], "f_reduce", _spec("input", dim=None, keepdim=False, dtype=None), "reduce_prod")
_fn([torch.var], "f_var", _spec("input", dim=None, unbiased=None, keepdim=False, correction=None))
_fn([torch.pow, operator.pow], "f_pow", _spec("input", "exponent"))
_fn([torch.rsqrt], "f_unary", _UNARY_SPEC, "rsqrt")
_METHODS.update(
    {
        "clamp": ("f_clamp", _spec("input", min=None, max=None), None),
        "clip": ("f_clamp", _spec("input", min=None, max=None), None),
        "sum": ("f_reduce", _spec("input", dim=None, keepdim=False, dtype=None), "reduce_sum"),
        "amax": ("f_reduce", _spec("input", dim=(), keepdim=False), "reduce_max"),
        "amin": ("f_reduce", _spec("input", dim=(), keepdim=False), "reduce_min"),
        "prod": ("f_reduce", _spec("input", dim=None, keepdim=False, dtype=None), "reduce_prod"),
        "var": ("f_var", _spec("input", dim=None, unbiased=None, keepdim=False, correction=None), None),
        "pow": ("f_pow", _spec("input", "exponent"), None),
        "expand": ("f_expand", None, None),
        "expand_as": ("f_expand", None, None),
        "rsqrt": ("f_unary", _UNARY_SPEC, "rsqrt"),
    }
)

# in-place variants of elementwise methods (x.relu_(), x.add_(y), ...): converted like the
# out-of-place method once precheck has shown nobody reads the old value afterwards


def function_entry(target: Any) -> tuple[str, Any, Any] | None:
    """The converter of a ``call_function`` target: the table above, else a registry op's spelling."""
    entry = _FUNCTIONS.get(target)
    if entry is None:
        for op in OPS.values():
            if any(target is f for f in op.torch_functions):
                return ("f_unary", _UNARY_SPEC, op.name)
    return entry


def method_entry(name: str) -> tuple[str, Any, Any] | None:
    """The converter of a ``call_method`` name: the table above, else a registry op's spelling."""
    entry = _METHODS.get(name)
    if entry is None:
        for op in OPS.values():
            if name in op.torch_methods:
                return ("f_unary", _UNARY_SPEC, op.name)
    return entry


_INPLACE_METHODS = {f"{m}_" for m in ("relu", "sigmoid", "tanh", "exp", "add", "sub", "mul", "div")}

# ops whose result may share storage with an input (used to check in-place ops)
_VIEW_METHODS = {
    "view",
    "reshape",
    "flatten",
    "squeeze",
    "unsqueeze",
    "view_as",
    "reshape_as",
    "unflatten",
    "transpose",
    "swapaxes",
    "swapdims",
    "permute",
    "t",
    "contiguous",
    "detach",
    "float",
    "to",
    "type_as",
    "split",
    "chunk",
    "unbind",
    "expand",
    "expand_as",
    "narrow",
    "select",
    "as_strided",
    "diagonal",
    "unfold",
    "movedim",
    "moveaxis",
    "view_as_real",
} | _INPLACE_METHODS
_VIEW_FUNCTIONS = {
    operator.getitem,
    getattr,
    operator.pos,
    torch.reshape,
    torch.flatten,
    torch.squeeze,
    torch.unsqueeze,
    torch.transpose,
    torch.swapaxes,
    torch.swapdims,
    torch.permute,
    torch.t,
    torch.split,
    torch.chunk,
    torch.unbind,
    torch.narrow,
    torch.select,
    torch.movedim,
    torch.detach,
    F.dropout,
    torch.relu_,
}
_VIEW_MODULES = {nn.Identity, nn.Flatten, nn.Unflatten} | _DROPOUT_MODULES


class _FunctionConverters(_ModuleConverters):
    """Function and method converters (a mixin of ``torch_fx._Importer``)."""

    # ------------------------------------------------------------ functions and methods
    def f_unary(self, input: Any, extra: str, inplace: bool = False) -> Value:
        return self.b.op(extra, self.tensor(input))

    def f_gelu(self, input: Any, approximate: str, extra: Any) -> Value:
        return self.gelu(self.tensor(input), approximate)

    def f_silu(self, input: Any, inplace: bool, extra: Any) -> Value:
        return self.b.op("silu", self.tensor(input))

    def f_dropout(self, input: Any, p: Any, training: Any, inplace: Any, extra: Any) -> Value:
        if training and p > 0:
            raise _Unsupported(
                f"dropout with training=True (p={p}) is random; pass training=self.training and call module.eval()"
            )
        return self.tensor(input)

    def f_softmax(self, input: Any, dim: Any, dtype: Any, extra: Any, _stacklevel: Any = 3) -> Value:
        if dtype is not None:
            raise _Unsupported(f"softmax with dtype={dtype} is not supported")
        return self.softmax(self.tensor(input), dim)

    def f_linear(self, input: Any, weight: Any, bias: Any, extra: Any) -> Value:
        w = self.tensor(weight, "weight")
        if len(self.shape(w)) != 2:
            raise _Unsupported(f"weight must be 2-D, got shape {self.shape(w)}")
        b = self.tensor(bias, "bias") if bias is not None else None
        return self.linear_t(self.tensor(input), self.transposed(w), b)

    def f_conv2d(
        self, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: Any, extra: Any
    ) -> Value:
        b = self.tensor(bias, "bias") if bias is not None else None
        return self.conv2d(self.tensor(input), self.tensor(weight, "weight"), b, stride, padding, dilation, groups)

    def f_maxpool(
        self,
        input: Any,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        ceil_mode: Any,
        return_indices: Any,
        extra: Any,
    ) -> Value:
        return self.maxpool(self.tensor(input), kernel_size, stride, padding, dilation, ceil_mode, return_indices)

    def f_avgpool(
        self,
        input: Any,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        ceil_mode: Any,
        count_include_pad: Any,
        divisor_override: Any,
        extra: Any,
    ) -> Value:
        return self.avgpool(
            self.tensor(input), kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        )

    def f_adaptive_avgpool(self, input: Any, output_size: Any, extra: Any) -> Value:
        return self.adaptive_avgpool(self.tensor(input), output_size)

    def f_layernorm(self, input: Any, normalized_shape: Any, weight: Any, bias: Any, eps: Any, extra: Any) -> Value:
        w = self.tensor(weight, "weight") if weight is not None else None
        b = self.tensor(bias, "bias") if bias is not None else None
        assert self.node is not None
        return self.layernorm(self.tensor(input), normalized_shape, w, b, eps, self.node.name)

    def f_batchnorm(
        self,
        input: Any,
        running_mean: Any,
        running_var: Any,
        weight: Any,
        bias: Any,
        training: Any,
        momentum: Any,
        eps: Any,
        extra: Any,
    ) -> Value:
        if training or running_mean is None or running_var is None:
            raise _Unsupported("batch norm with batch statistics (training=True or no running stats)")
        x = self.tensor(input)
        c = self.shape(x)[1]
        assert self.node is not None
        name = self.node.name
        w = (
            self.tensor(weight, "weight")
            if weight is not None
            else self.const((name, "ones"), f"{name}.weight", lambda: torch.ones(c))
        )
        b = (
            self.tensor(bias, "bias")
            if bias is not None
            else self.const((name, "zeros"), f"{name}.bias", lambda: torch.zeros(c))
        )
        return self.b.batchnorm(
            x, w, b, self.tensor(running_mean, "running_mean"), self.tensor(running_var, "running_var"), eps=float(eps)
        )

    def f_mean(self, input: Any, dim: Any, keepdim: Any, dtype: Any, extra: Any) -> Value:
        x = self.tensor(input)
        r = len(self.shape(x))
        dims = None if dim is None else ({dim} if isinstance(dim, int) else set(dim))
        if dtype is None and r == 4 and dims is not None and {self.axis(d, r) for d in dims} == {2, 3}:
            return self.to_meta_shape(self.b.global_avgpool(x))
        if dtype is None:
            return self.f_reduce(x, dim, keepdim, "reduce_mean")
        raise _Unsupported(
            f"mean over dim={dim} of a rank-{r} tensor is not expressible (only the spatial "
            "mean over dims (2, 3) of an NCHW tensor, as global_avgpool)"
        )

    def f_matmul(self, extra: str, **kw: Any) -> Value:
        a = self.tensor(kw["input"], "input")
        b = self.tensor(kw["other"] if "other" in kw else kw["mat2"], "other")
        sa, sb = self.shape(a), self.shape(b)
        if extra == "mm" and (len(sa) != 2 or len(sb) != 2):
            raise _Unsupported(f"mm needs 2-D operands, got {sa} and {sb}")
        if extra == "bmm" and (len(sa) != 3 or len(sb) != 3):
            raise _Unsupported(f"bmm needs 3-D operands, got {sa} and {sb}")
        if not sa or not sb:
            raise _Unsupported("matmul of a 0-d tensor")
        if len(sa) == 1:
            a = self.reshape(a, (1,) + sa)
        if len(sb) == 1:
            b = self.reshape(b, sb + (1,))
        return self.to_meta_shape(self.b.matmul(*self.align(a, b)))

    def f_arith(self, input: Any, other: Any, extra: str, alpha: Any = 1, rounding_mode: Any = None) -> Value:
        op = extra
        if rounding_mode is not None:
            raise _Unsupported(f"division with rounding_mode={rounding_mode!r} is not supported")
        for v in (input, other):
            if not isinstance(v, (Value, int, float)):
                raise _Unsupported(f"operand of type {type(v).__name__} is not supported")
        if not isinstance(input, Value) and not isinstance(other, Value):
            raise _Unsupported("neither operand is a tensor")
        if alpha != 1:  # torch.add(x, y, alpha=a) = x + a * y
            if not isinstance(alpha, (int, float)):
                raise _Unsupported(f"alpha must be a number, got {alpha!r}")
            other = self.b.smul(other, scalar=float(alpha)) if isinstance(other, Value) else other * alpha
        if isinstance(input, Value) and isinstance(other, Value):
            return self.to_meta_shape(self.binary(op, input, other))
        x, s = (input, other) if isinstance(input, Value) else (other, input)
        s = float(s)
        if op == "mul":
            return self.b.smul(x, scalar=s)
        if op == "div" and x is input:
            if s == 0.0:
                raise _Unsupported("division by the constant 0")
            return self.b.smul(x, scalar=1.0 / s)
        # x + s, x - s, s - x, s / x: the scalar becomes a one-element constant weight
        r = len(self.shape(x))
        assert self.node is not None
        c = self.const(
            ("scalar", s, r), f"const.{self.node.name}", lambda: torch.full((1,) * r, s, dtype=torch.float32)
        )
        a, b = (x, c) if x is input else (c, x)
        return self.to_meta_shape(self.binary(op, a, b))

    def f_neg(self, input: Any, extra: Any) -> Value:
        return self.b.smul(self.tensor(input), scalar=-1.0)

    def f_passthrough(self, *args: Any, **kwargs: Any) -> Value:
        x = args[0][0] if args and isinstance(args[0], tuple) else kwargs.get("input")
        return self.tensor(x)

    def f_cat(self, extra: Any, dim: Any = 0, axis: Any = None, **kw: Any) -> Value:
        tensors = kw["tensors"]
        if axis is not None:
            dim = axis
        if not isinstance(tensors, (tuple, list)) or not tensors:
            raise _Unsupported("cat needs a non-empty list of tensors")
        xs = [self.tensor(t, "cat operand") for t in tensors]
        if len(xs) == 1:
            return xs[0]
        return self.b.concat(*xs, axis=self.axis(dim, len(self.shape(xs[0]))))

    def split_metas(self) -> list[Shape]:
        assert self.node is not None
        meta = self.node.meta.get("tensor_meta")
        if not isinstance(meta, (tuple, list)) or not all(isinstance(m, TensorMetadata) for m in meta):
            raise _Unsupported("torch did not produce a list of tensors here")
        return [tuple(m.shape) for m in meta]

    def f_split(self, dim: Any, extra: Any, **kw: Any) -> tuple[Value, ...]:
        x = self.tensor(kw["tensor"] if "tensor" in kw else kw["input"])
        ax = self.axis(dim, len(self.shape(x)))
        sizes = [s[ax] for s in self.split_metas()]
        if any(s == 0 for s in sizes):
            raise _Unsupported(f"split into pieces of sizes {sizes}: empty pieces are not supported")
        if len(sizes) == 1:
            return (x,)
        return tuple(self.b.split(x, ax, sizes))

    def f_unbind(self, input: Any, dim: Any, extra: Any) -> tuple[Value, ...]:
        x = self.tensor(input)
        sx = self.shape(x)
        ax = self.axis(dim, len(sx))
        parts = self.b.split(x, ax, [1] * sx[ax]) if sx[ax] > 1 else [x]
        return tuple(self.reshape(p, sx[:ax] + sx[ax + 1 :]) for p in parts)

    def permute(self, x: Value, perm: Sequence[int]) -> Value:
        r = len(self.shape(x))
        perm = tuple(self.axis(p, r) for p in perm)
        if sorted(perm) != list(range(r)):
            raise _Unsupported(f"{list(perm)} is not a permutation of {r} dimensions")
        if perm == tuple(range(r)):
            return x
        return self.b.transpose(x, perm=perm)

    def f_transpose(self, input: Any, extra: Any, **kw: Any) -> Value:
        x = self.tensor(input)
        r = len(self.shape(x))
        pair = (kw["dim0"], kw["dim1"]) if "dim0" in kw else (kw["axis0"], kw["axis1"])
        d0, d1 = (self.axis(d, r) for d in pair)
        perm = list(range(r))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return self.permute(x, perm)

    def f_permute(self, *args: Any, **kwargs: Any) -> Value:
        if len(args) == 3 and isinstance(args[0], tuple):  # raw (args, kwargs, extra) from a method call
            margs, mkw, _ = args
            x = self.tensor(margs[0])
            dims = mkw.get("dims", margs[1] if len(margs) == 2 and isinstance(margs[1], (tuple, list)) else margs[1:])
            return self.permute(x, dims)
        return self.permute(self.tensor(kwargs["input"]), kwargs["dims"])

    def f_t(self, input: Any, extra: Any) -> Value:
        x = self.tensor(input)
        r = len(self.shape(x))
        if r > 2:
            raise _Unsupported(f"t() needs at most 2 dimensions, got {r}")
        return self.permute(x, tuple(reversed(range(r))))

    def f_reshape(self, args: tuple, kwargs: dict, extra: Any) -> Value:
        """reshape/view/flatten/squeeze/unsqueeze/...: the result shape is torch's (resolves -1)."""
        x = args[0] if args else kwargs.get("input")
        return self.to_meta_shape(self.tensor(x))

    def f_size(self, input: Any, dim: Any, extra: Any) -> Any:
        s = self.shape(self.tensor(input))
        return torch.Size(s) if dim is None else s[self.axis(dim, len(s))]

    def f_ndim(self, input: Any, extra: Any) -> int:
        return len(self.shape(self.tensor(input)))

    def f_numel(self, input: Any, extra: Any) -> int:
        n = 1
        for d in self.shape(self.tensor(input)):
            n *= d
        return n

    def f_getattr(self, obj: Any, name: Any, extra: Any) -> Any:
        if not isinstance(obj, Value):
            return getattr(obj, name)
        s = self.shape(obj)
        if name == "shape":
            return torch.Size(s)
        if name == "ndim":
            return len(s)
        if name == "dtype":
            return torch.float32
        if name == "T":
            return self.permute(obj, tuple(reversed(range(len(s)))))
        if name == "mT":
            if len(s) < 2:
                raise _Unsupported("mT needs at least 2 dimensions")
            return self.permute(obj, tuple(range(len(s) - 2)) + (len(s) - 1, len(s) - 2))
        raise _Unsupported(f"unsupported Tensor attribute 'Tensor.{name}'")

    def f_getitem(self, obj: Any, index: Any, extra: Any) -> Any:
        if not isinstance(obj, Value):
            if isinstance(obj, (tuple, list, torch.Size)):
                return obj[index]
            raise _Unsupported(f"indexing a {type(obj).__name__}")
        return self.index(obj, index)

    def index(self, x: Value, index: Any) -> Value:
        """Basic indexing with ints, unit-step slices, None and Ellipsis: one slice op per
        narrowed axis, then a reshape that drops integer-indexed axes and adds None axes."""
        items = list(index) if isinstance(index, tuple) else [index]
        for it in items:
            if isinstance(it, bool) or not (it is None or it is Ellipsis or isinstance(it, (int, slice))):
                raise _Unsupported(
                    f"index {it!r} is not supported (only ints, slices with step 1, None and ...; "
                    "no tensor/list/bool indexing)"
                )
        s = self.shape(x)
        used = sum(1 for it in items if it is not None and it is not Ellipsis)
        if sum(1 for it in items if it is Ellipsis) > 1:
            raise _Unsupported("more than one Ellipsis in an index")
        if used > len(s):
            raise _Unsupported(f"too many indices ({used}) for a rank-{len(s)} tensor")
        if Ellipsis in items:
            i = items.index(Ellipsis)
            items[i : i + 1] = [slice(None)] * (len(s) - used)
        else:
            items += [slice(None)] * (len(s) - used)
        y, dim = x, 0
        for it in items:
            if it is None:
                continue
            n = s[dim]
            if isinstance(it, int):
                if not -n <= it < n:
                    raise _Unsupported(f"index {it} is out of range for dimension {dim} of size {n}")
                start, stop = it % n, it % n + 1
            else:
                for part in (it.start, it.stop, it.step):
                    if part is not None and (not isinstance(part, int) or isinstance(part, bool)):
                        raise _Unsupported(f"slice {it} has a non-constant or non-int bound")
                if it.step not in (None, 1):
                    raise _Unsupported(f"slice with step {it.step} is not supported (only step 1)")
                start, stop, _ = it.indices(n)
                if stop <= start:
                    raise _Unsupported(f"slice {it} of a dimension of size {n} is empty")
            if (start, stop) != (0, n):
                y = self.b.slice(y, axis=dim, start=start, end=stop)
            dim += 1
        return self.to_meta_shape(y)

    # ------------------------------------------------------------ activations, reductions, norms, resize
    def f_clamp(self, input: Any, extra: Any, inplace: Any = False, **bounds: Any) -> Value:
        """torch.clamp / clip (min, max), F.hardtanh (min_val, max_val), F.relu6 (extra)."""
        lo, hi = (
            extra
            if extra is not None
            else (bounds.get("min", bounds.get("min_val")), bounds.get("max", bounds.get("max_val")))
        )
        if isinstance(lo, torch.Tensor) or isinstance(hi, torch.Tensor):
            raise _Unsupported("clamp with tensor bounds")
        return self.clamp(self.tensor(input), lo, hi)

    def f_pad(self, input: Any, pad: Any, mode: Any, value: Any, extra: Any) -> Value:
        if mode != "constant":
            raise _Unsupported(f"pad mode {mode!r} (only 'constant')")
        return self.pad(self.tensor(input), pad, 0.0 if value is None else value)

    def f_groupnorm(self, input: Any, num_groups: Any, weight: Any, bias: Any, eps: Any, extra: Any) -> Value:
        x = self.tensor(input)
        c = self.shape(x)[1]
        w = self.tensor(weight, "weight") if weight is not None else None
        b = self.tensor(bias, "bias") if bias is not None else None
        w = w if w is not None else self.const(("ones", c), "const.ones", lambda: torch.ones(c))
        b = b if b is not None else self.const(("zeros", c), "const.zeros", lambda: torch.zeros(c))
        return self.b.op("groupnorm", x, w, b, num_groups=int(num_groups), eps=float(eps))

    def f_rmsnorm(self, input: Any, normalized_shape: Any, weight: Any, eps: Any, extra: Any) -> Value:
        x = self.tensor(input)
        d = self.shape(x)[-1]
        ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if ns != (d,):
            raise _Unsupported(f"rms_norm over {ns} (only the last axis)")
        if eps is None:
            raise _Unsupported("rms_norm with eps=None (dtype-dependent)")
        w = self.tensor(weight, "weight") if weight is not None else None
        w = w if w is not None else self.const(("ones", d), "const.ones", lambda: torch.ones(d))
        return self.b.op("rmsnorm", x, w, eps=float(eps))

    def f_interpolate(
        self,
        input: Any,
        size: Any,
        scale_factor: Any,
        mode: Any,
        align_corners: Any,
        recompute_scale_factor: Any,
        antialias: Any,
        extra: Any,
    ) -> Value:
        if antialias:
            raise _Unsupported("interpolate with antialias=True")
        scales = None if recompute_scale_factor else scale_factor
        return self.resize(self.tensor(input), mode, align_corners, scales)

    def f_reduce(self, input: Any, dim: Any, keepdim: Any, extra: Any, dtype: Any = None) -> Value:
        op = extra
        if dtype is not None:
            raise _Unsupported(f"{op} with dtype={dtype}")
        x = self.tensor(input)
        r = len(self.shape(x))
        dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
        axes = sorted({self.axis(d, r) for d in (dims or range(r))})
        return self.b.op(op, x, axes=tuple(axes), keepdim=int(bool(keepdim)))

    def f_var(self, input: Any, dim: Any, unbiased: Any, keepdim: Any, correction: Any, extra: Any) -> Value:
        x = self.tensor(input)
        r = len(self.shape(x))
        corr = correction if correction is not None else (0 if unbiased is False else 1)
        if corr != int(corr):
            raise _Unsupported(f"var with correction {corr!r} (only integers)")
        dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
        axes = sorted({self.axis(d, r) for d in (dims or range(r))})
        return self.b.op("reduce_var", x, axes=tuple(axes), keepdim=int(bool(keepdim)), correction=int(corr))

    def f_pow(self, input: Any, exponent: Any, extra: Any) -> Value:
        if isinstance(exponent, Value) or isinstance(input, (int, float)):  # a tensor exponent: binary power
            return self.f_arith(input, exponent, "power")
        if isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
            raise _Unsupported(f"power with exponent {exponent!r} (only a constant number or a tensor)")
        x = self.tensor(input)
        if exponent == 1:
            return x
        if exponent == 2:
            return self.b.mul(x, x)
        if exponent == -0.5:
            return self.b.rsqrt(x)
        return self.b.op("pow", x, exponent=float(exponent))

    def f_expand(self, args: tuple, kwargs: dict, extra: Any) -> Value:
        x = self.tensor(args[0] if args else kwargs.get("input"))
        out = self.meta_shape()
        x = self.b.reshape(x, shape=(1,) * (len(out) - len(self.shape(x))) + self.shape(x))
        if self.shape(x) == out:
            return x
        return self.b.op("expand", x, shape=tuple(out))
