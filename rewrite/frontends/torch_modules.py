"""nn.Module converters for :mod:`rewrite.frontends.torch_fx`.

:class:`_ModuleConverters` holds the value-building helpers every converter uses
(weights, reshapes, broadcasting), one ``m_<kind>`` handler per supported module
type (dispatched through ``_MODULES``) and the layer converters (``conv2d``,
``maxpool``, ``layernorm``, ...) that the functional forms in
:mod:`rewrite.frontends.torch_functions` reuse.  It is a mixin: the state it
reads (``self.b``, ``self.node``, ``self.cache``, ``self.param_names``, ...) is
set up by ``torch_fx._Importer``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.fx
from torch import nn
from torch.fx.passes.shape_prop import TensorMetadata

from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import Value
from rewrite.ir.ops import Shape

# call_module: exact module type -> handler method
_MODULES: dict[type, str] = {
    nn.Linear: "m_linear",
    nn.Conv2d: "m_conv2d",
    nn.BatchNorm1d: "m_batchnorm",
    nn.BatchNorm2d: "m_batchnorm",
    nn.BatchNorm3d: "m_batchnorm",
    nn.LayerNorm: "m_layernorm",
    nn.ReLU: "m_relu",
    nn.Sigmoid: "m_unary",
    nn.Tanh: "m_unary",
    nn.GELU: "m_gelu",
    nn.SiLU: "m_silu",
    nn.Softmax: "m_softmax",
    nn.Identity: "m_passthrough",
    nn.Dropout: "m_dropout",
    nn.Dropout1d: "m_dropout",
    nn.Dropout2d: "m_dropout",
    nn.Dropout3d: "m_dropout",
    nn.AlphaDropout: "m_dropout",
    nn.FeatureAlphaDropout: "m_dropout",
    nn.MaxPool2d: "m_maxpool",
    nn.AvgPool2d: "m_avgpool",
    nn.AdaptiveAvgPool2d: "m_adaptive_avgpool",
    nn.Flatten: "m_reshape",
    nn.Unflatten: "m_reshape",
    # activations, reductions, norms, resize
    nn.ReLU6: "m_clamp",
    nn.Hardtanh: "m_clamp",
    nn.Hardswish: "m_unary",
    nn.Hardsigmoid: "m_unary",
    nn.Mish: "m_unary",
    nn.ZeroPad2d: "m_pad",
    nn.ConstantPad2d: "m_pad",
    nn.GroupNorm: "m_groupnorm",
    nn.RMSNorm: "m_rmsnorm",
    nn.Upsample: "m_upsample",
}
_UNARY_MODULES = {
    nn.Sigmoid: "sigmoid",
    nn.Tanh: "tanh",
    nn.Hardswish: "hardswish",
    nn.Hardsigmoid: "hardsigmoid",
    nn.Mish: "mish",
}
_DROPOUT_MODULES = {t for t, h in _MODULES.items() if h == "m_dropout"}


def _ints(v: Any, n: int, what: str, name: str) -> tuple[int, ...]:
    """A convolution's per-axis argument: one int for all ``n`` axes (alone or in a one-element list), or
    ``n`` ints."""
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,) * n
    if isinstance(v, (tuple, list)) and all(isinstance(i, int) for i in v) and len(v) in (1, n):
        return tuple(v) * (n // len(v))
    raise _Unsupported(f"{what} must be an int or {name} ints, got {v!r}")


def _pair(v: Any, what: str) -> tuple[int, int]:
    a, b = _ints(v, 2, what, "a pair of")
    return (a, b)


def _triple(v: Any, what: str) -> tuple[int, int, int]:
    a, b, c = _ints(v, 3, what, "three")
    return (a, b, c)


class _Unsupported(Exception):
    """Raised by handlers; turned into a FrontendError naming the current node."""


class _ModuleConverters:
    """Value helpers and ``nn.Module`` converters (a mixin of ``torch_fx._Importer``)."""

    # the state the importer that mixes this in sets up
    b: GraphBuilder
    node: torch.fx.Node | None
    cache: dict[tuple, Value]
    keep_alive: list[torch.Tensor]
    param_names: dict[int, str]
    param_of: dict[Value, torch.Tensor]

    # ------------------------------------------------------------ helpers
    def tensor(self, v: Any, what: str = "input") -> Value:
        if not isinstance(v, Value):
            raise _Unsupported(f"{what} must be a tensor, got {type(v).__name__} {v!r}")
        return v

    def shape(self, v: Value) -> Shape:
        return self.b.shape(v)

    def meta_shape(self) -> Shape:
        assert self.node is not None
        meta = self.node.meta.get("tensor_meta")
        if not isinstance(meta, TensorMetadata):
            raise _Unsupported("torch did not produce a single tensor here")
        return tuple(meta.shape)

    def axis(self, d: Any, rank: int, what: str = "dim") -> int:
        if not isinstance(d, int) or isinstance(d, bool):
            raise _Unsupported(f"{what} must be an int, got {d!r}")
        if not -rank <= d < max(rank, 1):
            raise _Unsupported(f"{what} {d} is out of range for rank {rank}")
        return d % rank if rank else 0

    def reshape(self, v: Value, shape: Sequence[int]) -> Value:
        """``v`` reshaped (no node if the shape is already right; one node per value and shape)."""
        shape = tuple(int(s) for s in shape)
        if shape == self.shape(v):
            return v
        key = ("reshape", v, shape)
        if key not in self.cache:
            self.cache[key] = self.b.reshape(v, shape=shape)
        return self.cache[key]

    def to_meta_shape(self, v: Value) -> Value:
        return self.reshape(v, self.meta_shape())

    def align(self, a: Value, b: Value) -> tuple[Value, Value]:
        sa, sb = self.shape(a), self.shape(b)
        if len(sa) < len(sb):
            a = self.reshape(a, (1,) * (len(sb) - len(sa)) + sa)
        elif len(sb) < len(sa):
            b = self.reshape(b, (1,) * (len(sa) - len(sb)) + sb)
        return a, b

    def binary(self, op: str, a: Value, b: Value, **attrs: Any) -> Value:
        return self.b.op(op, *self.align(a, b), **attrs)

    def weight(self, name: str, tensor: torch.Tensor) -> Value:
        base, k = name, 1
        while name in self.b.graph.weights:
            k += 1
            name = f"{base}.{k}"
        return self.b.weight(name, tensor.detach().clone(memory_format=torch.contiguous_format))

    def param(self, t: torch.Tensor, fallback: str) -> Value:
        """The weight node of a parameter/buffer: one per tensor, named by its qualified name."""
        key = ("param", id(t))
        if key not in self.cache:
            if t.dtype != torch.float32:
                raise _Unsupported(f"tensor '{fallback}' has dtype {t.dtype}; eqsat graphs are float32")
            self.keep_alive.append(t)
            self.cache[key] = self.weight(self.param_names.get(id(t), fallback), t)
            self.param_of[self.cache[key]] = t
        return self.cache[key]

    def param_t(self, t: torch.Tensor, fallback: str) -> Value:
        """A 2-D parameter transposed at import, stored as ``<name>_t``."""
        key = ("param_t", id(t))
        if key not in self.cache:
            if t.dtype != torch.float32:
                raise _Unsupported(f"tensor '{fallback}' has dtype {t.dtype}; eqsat graphs are float32")
            self.keep_alive.append(t)
            self.cache[key] = self.weight(self.param_names.get(id(t), fallback) + "_t", t.detach().t())
        return self.cache[key]

    def transposed(self, w: Value) -> Value:
        """``w.T`` for a 2-D value: a new weight if ``w`` is a weight, else a transpose node."""
        if w in self.param_of:  # same weight node as nn.Linear would make for this parameter
            return self.param_t(self.param_of[w], self.b.graph.nodes[w.node].attrs["name"])
        node = self.b.graph.nodes[w.node]
        if node.op == "weight":
            name = node.attrs["name"]
            key = ("weight_t", name)
            if key not in self.cache:
                self.cache[key] = self.weight(name + "_t", self.b.graph.weights[name].t())
            return self.cache[key]
        return self.b.transpose(w, perm=(1, 0))

    def const(self, key: Any, name: str, make: Callable[[], torch.Tensor]) -> Value:
        key = ("const", key)
        if key not in self.cache:
            self.cache[key] = self.weight(name, make())
        return self.cache[key]

    def batched4(self, x: Value, what: str) -> Value:
        s = self.shape(x)
        if len(s) == 3:
            return self.reshape(x, (1,) + s)
        if len(s) != 4:
            raise _Unsupported(f"{what} needs a 3-D or 4-D (NCHW) input, got shape {s}")
        return x

    # ------------------------------------------------------------ modules
    def m_linear(self, m: nn.Linear, path: str, x: Value) -> Value:
        wt = self.param_t(m.weight, f"{path}.weight")
        b = self.param(m.bias, f"{path}.bias") if m.bias is not None else None
        return self.linear_t(x, wt, b)

    def linear_t(self, x: Value, wt: Value, b: Value | None) -> Value:
        """``x @ wt (+ b)`` for a pre-transposed 2-D weight ``wt`` [in, out]."""
        sx, sw = self.shape(x), self.shape(wt)
        if len(sw) != 2:
            raise _Unsupported(f"weight must be 2-D, got shape {sw}")
        if len(sx) == 0:
            raise _Unsupported("input must have at least one dimension")
        if len(sx) == 1:
            y = self.reshape(self.b.matmul(self.reshape(x, (1,) + sx), wt), (sw[1],))
        else:
            y = self.b.matmul(x, self.reshape(wt, (1,) * (len(sx) - 2) + sw))
        if b is not None:
            y = self.binary("add", y, b)
        return y

    def m_conv2d(self, m: nn.Conv2d, path: str, x: Value) -> Value:
        if isinstance(m.padding, str):
            raise _Unsupported(f"string padding {m.padding!r} is not supported; give explicit int/tuple padding")
        if m.padding_mode != "zeros":
            raise _Unsupported(f"padding_mode={m.padding_mode!r} is not supported (only 'zeros')")
        w = self.param(m.weight, f"{path}.weight")
        b = self.param(m.bias, f"{path}.bias") if m.bias is not None else None
        return self.conv2d(x, w, b, m.stride, m.padding, m.dilation, m.groups)

    def conv2d(
        self, x: Value, w: Value, b: Value | None, stride: Any, padding: Any, dilation: Any, groups: Any
    ) -> Value:
        if isinstance(padding, str):
            raise _Unsupported(f"string padding {padding!r} is not supported; give explicit int/tuple padding")
        xb = self.batched4(x, "conv2d")
        y = self.b.conv2d(
            xb,
            w,
            stride=_pair(stride, "stride"),
            padding=_pair(padding, "padding"),
            dilation=_pair(dilation, "dilation"),
            groups=int(groups),
        )
        if b is not None:
            sb = self.shape(b)
            if len(sb) != 1:
                raise _Unsupported(f"conv bias must be 1-D, got shape {sb}")
            y = self.b.add(y, self.reshape(b, (1, sb[0], 1, 1)))
        return self.to_meta_shape(y)

    def m_batchnorm(self, m: nn.modules.batchnorm._BatchNorm, path: str, x: Value) -> Value:
        if m.training or m.running_mean is None or m.running_var is None:
            raise _Unsupported(
                "BatchNorm without running statistics (training mode or "
                "track_running_stats=False) uses batch statistics; call module.eval()"
            )
        mean = self.param(m.running_mean, f"{path}.running_mean")
        var = self.param(m.running_var, f"{path}.running_var")
        c = m.num_features
        w = (
            self.param(m.weight, f"{path}.weight")
            if m.weight is not None
            else self.const((path, "ones"), f"{path}.weight", lambda: torch.ones(c))
        )
        b = (
            self.param(m.bias, f"{path}.bias")
            if m.bias is not None
            else self.const((path, "zeros"), f"{path}.bias", lambda: torch.zeros(c))
        )
        return self.b.batchnorm(x, w, b, mean, var, eps=float(m.eps))

    def m_layernorm(self, m: nn.LayerNorm, path: str, x: Value) -> Value:
        w = self.param(m.weight, f"{path}.weight") if m.weight is not None else None
        b = self.param(m.bias, f"{path}.bias") if getattr(m, "bias", None) is not None else None
        return self.layernorm(x, tuple(m.normalized_shape), w, b, m.eps, path)

    def layernorm(
        self, x: Value, normalized_shape: Any, w: Value | None, b: Value | None, eps: float, prefix: str
    ) -> Value:
        ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        sx = self.shape(x)
        k = len(ns)
        if not ns or len(sx) < k or tuple(sx[len(sx) - k :]) != ns:
            raise _Unsupported(f"normalized_shape {list(ns)} does not match the last dimensions of {sx}")
        if k > 1:  # over several trailing dimensions: the same over them flattened into one
            n = math.prod(ns)
            flat = self.reshape(x, (*sx[: len(sx) - k], n))
            wf = None if w is None else self.reshape(w, (n,))
            bf = None if b is None else self.reshape(b, (n,))
            return self.reshape(self.layernorm(flat, n, wf, bf, eps, prefix), sx)
        n = ns[0]
        if w is None:
            w = self.const((prefix, "ones", n), f"{prefix}.weight", lambda: torch.ones(n))
        if b is None:
            b = self.const((prefix, "zeros", n), f"{prefix}.bias", lambda: torch.zeros(n))
        return self.b.layernorm(x, w, b, eps=float(eps))

    def m_relu(self, m: nn.ReLU, path: str, x: Value) -> Value:
        return self.b.relu(x)

    def m_unary(self, m: nn.Module, path: str, x: Value) -> Value:
        return self.b.op(_UNARY_MODULES[type(m)], x)

    def m_gelu(self, m: nn.GELU, path: str, x: Value) -> Value:
        return self.gelu(x, m.approximate)

    def gelu(self, x: Value, approximate: str) -> Value:
        if approximate == "tanh":
            return self.b.gelu(x)
        if approximate == "none":
            return self.b.op("gelu_erf", x)
        raise _Unsupported(f"GELU with approximate={approximate!r} (only 'none' and 'tanh')")

    def m_silu(self, m: nn.SiLU, path: str, x: Value) -> Value:
        return self.b.op("silu", x)

    def m_softmax(self, m: nn.Softmax, path: str, x: Value) -> Value:
        return self.softmax(x, m.dim)

    def softmax(self, x: Value, dim: Any) -> Value:
        if dim is None:
            raise _Unsupported("softmax without an explicit dim is not supported")
        return self.b.softmax(x, axis=self.axis(dim, len(self.shape(x))))

    def m_passthrough(self, m: nn.Module, path: str, x: Value) -> Value:
        return x

    def m_dropout(self, m: nn.Module, path: str, x: Value) -> Value:
        p = float(getattr(m, "p", 0.0))
        if m.training and p > 0:
            raise _Unsupported(f"dropout in training mode (p={p}) is random; call module.eval()")
        return x

    def m_maxpool(self, m: nn.MaxPool2d, path: str, x: Value) -> Value:
        return self.maxpool(x, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode, m.return_indices)

    def maxpool(
        self, x: Value, kernel: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: Any, return_indices: Any
    ) -> Value:
        if return_indices:
            raise _Unsupported("return_indices=True is not supported")
        if _pair(dilation, "dilation") != (1, 1):
            raise _Unsupported(f"dilation {dilation!r} is not supported (only 1)")
        k = _pair(kernel, "kernel_size")
        s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _pair(stride, "stride")
        y = self.b.maxpool2d(
            self.batched4(x, "max pooling"),
            kernel=k,
            stride=s,
            padding=_pair(padding, "padding"),
            ceil_mode=int(bool(ceil_mode)),
        )
        return self.to_meta_shape(y)

    def m_avgpool(self, m: nn.AvgPool2d, path: str, x: Value) -> Value:
        return self.avgpool(x, m.kernel_size, m.stride, m.padding, m.ceil_mode, m.count_include_pad, m.divisor_override)

    def avgpool(
        self,
        x: Value,
        kernel: Any,
        stride: Any,
        padding: Any,
        ceil_mode: Any,
        count_include_pad: Any,
        divisor_override: Any,
    ) -> Value:
        if divisor_override is not None:
            raise _Unsupported(f"divisor_override={divisor_override!r} is not supported")
        k = _pair(kernel, "kernel_size")
        s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _pair(stride, "stride")
        y = self.b.avgpool2d(
            self.batched4(x, "average pooling"),
            kernel=k,
            stride=s,
            padding=_pair(padding, "padding"),
            ceil_mode=int(bool(ceil_mode)),
            count_include_pad=int(bool(count_include_pad)),
        )
        return self.to_meta_shape(y)

    def m_adaptive_avgpool(self, m: nn.AdaptiveAvgPool2d, path: str, x: Value) -> Value:
        return self.adaptive_avgpool(x, m.output_size)

    def adaptive_avgpool(self, x: Value, output_size: Any) -> Value:
        """Output 1x1 is global_avgpool; an output that divides the input evenly is exactly an
        avgpool2d with kernel = stride = input / output (the identity if they are equal); any other
        is adaptive_avgpool."""
        xb = self.batched4(x, "adaptive average pooling")
        h, w = self.shape(xb)[2:]
        osz = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size, output_size]
        if len(osz) == 1:
            osz = osz * 2
        oh, ow = (h if osz[0] is None else osz[0]), (w if osz[1] is None else osz[1])
        if (oh, ow) == (1, 1):
            y = self.b.global_avgpool(xb)
        elif (oh, ow) == (h, w):
            y = xb
        elif h % oh == 0 and w % ow == 0:
            k = (h // oh, w // ow)
            y = self.b.avgpool2d(xb, kernel=k, stride=k)
        else:
            y = self.b.op("adaptive_avgpool", xb, output_size=(oh, ow))
        return self.to_meta_shape(y)

    def m_reshape(self, m: nn.Module, path: str, x: Value) -> Value:
        return self.to_meta_shape(x)

    # ------------------------------------------------------------ activations, reductions, norms, resize
    def m_clamp(self, m: nn.Hardtanh, path: str, x: Value) -> Value:
        return self.clamp(x, m.min_val, m.max_val)

    def clamp(self, x: Value, lo: Any, hi: Any) -> Value:
        if lo is None and hi is None:
            return x
        if lo is not None and hi is None and float(lo) == 0.0:
            return self.b.relu(x)
        lo = -math.inf if lo is None else float(lo)  # one bound: the other infinite (clamp_min, clamp_max)
        hi = math.inf if hi is None else float(hi)
        return self.b.op("clamp", x, min=lo, max=hi)

    def m_pad(self, m: nn.ConstantPad2d, path: str, x: Value) -> Value:
        return self.pad(x, m.padding, m.value)

    def pad(self, x: Value, torch_pads: Sequence[int], value: Any) -> Value:
        """torch order (last dim first: left, right, top, bottom, ...) to the registry's dim order."""
        rank = len(self.shape(x))
        tp = list(torch_pads)
        if len(tp) % 2 or len(tp) > 2 * rank:
            raise _Unsupported(f"padding {tp} for a rank-{rank} tensor")
        if any(p < 0 for p in tp):
            raise _Unsupported(f"negative padding {tp} (cropping)")
        pads = [0] * (2 * rank)
        for k in range(len(tp) // 2):
            d = rank - 1 - k
            pads[2 * d], pads[2 * d + 1] = tp[2 * k], tp[2 * k + 1]
        if not any(pads):
            return x
        return self.b.op("pad", x, pads=tuple(pads), value=float(value))

    def m_groupnorm(self, m: nn.GroupNorm, path: str, x: Value) -> Value:
        c = m.num_channels
        w = (
            self.param(m.weight, f"{path}.weight")
            if m.affine
            else self.const(("ones", c), "const.ones", lambda: torch.ones(c))
        )
        b = (
            self.param(m.bias, f"{path}.bias")
            if m.affine
            else self.const(("zeros", c), "const.zeros", lambda: torch.zeros(c))
        )
        return self.b.op("groupnorm", x, w, b, num_groups=m.num_groups, eps=float(m.eps))

    def m_rmsnorm(self, m: nn.RMSNorm, path: str, x: Value) -> Value:
        d = self.shape(x)[-1]
        if tuple(m.normalized_shape) != (d,):
            raise _Unsupported(f"RMSNorm over {tuple(m.normalized_shape)} (only the last axis)")
        if m.eps is None:
            raise _Unsupported("RMSNorm with eps=None (dtype-dependent)")
        w = (
            self.param(m.weight, f"{path}.weight")
            if m.weight is not None
            else self.const(("ones", d), "const.ones", lambda: torch.ones(d))
        )
        return self.b.op("rmsnorm", x, w, eps=float(m.eps))

    def m_upsample(self, m: nn.Upsample, path: str, x: Value) -> Value:
        return self.resize(x, m.mode, m.align_corners, m.scale_factor)

    def resize(self, x: Value, mode: str, align_corners: Any, scales: Any = None) -> Value:
        """The registry's resize derives its scales from the sizes; torch uses 1 / scale_factor when
        one is given, which is the same only when the output size is exactly input * scale."""
        if mode not in ("nearest", "bilinear"):
            raise _Unsupported(f"interpolate mode {mode!r} (only nearest and bilinear)")
        out = self.meta_shape()
        if len(out) != 4:
            raise _Unsupported(f"interpolate of a rank-{len(out)} tensor (only NCHW)")
        if scales is not None:
            sc = list(scales) if isinstance(scales, (tuple, list)) else [scales, scales]
            ins = self.shape(x)[2:]
            if any(float(o) != float(i) * float(f) for o, i, f in zip(out[2:], ins, sc)):
                raise _Unsupported(f"interpolate by scale {sc} from {ins} to {out[2:]} (not an exact size ratio)")
        return self.b.op("resize", x, size=tuple(out[2:]), mode=mode, align_corners=int(bool(align_corners)))
