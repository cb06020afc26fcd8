"""What one ATen import holds while it converts a graph, and the value helpers every converter builds with.

    st = ImportState("Net")            # a GraphBuilder and the caches of one import
    y = st.binary("add", x, bias)      # ranks aligned by one reshape, emitted once per value and shape

:class:`ImportState` is what every ATen converter (a plain function ``a_*(st, ...)``, found by name in
``aten_base.CONVERTER_FNS``) builds with; ``torch_export._ExportImporter`` holds one (composed, not
inherited), sets ``node`` and ``current`` to the fx node being converted and its overload, and sets
``read``, how :meth:`ImportState.tensor` reads an argument that is not a graph value (constants become
weights there).  Besides the value
helpers (shapes, axes, reshapes, broadcasting, weights, constants) it holds the layer helpers that several
ATen rows share (``conv2d``, ``layernorm``, pooling, ``clamp``, ``pad``, ``resize``).  Nothing here knows
an ``nn.Module`` type or a torch function: the rows of ``aten_training.CONVERTERS`` are the only table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.fx

from rewrite.frontends.compose import Emit
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.dtypes import FLOAT32, HALF, INT64, TORCH_DTYPE, dtype_name
from rewrite.ir.graph import Value
from rewrite.ir.ops import Shape

__all__ = ["ImportState", "computed_as"]


class _Unsupported(Exception):
    """Raised by converters; the importer turns it into a FrontendError naming the current node."""


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


def computed_as(t: torch.dtype) -> str | None:
    """The eqsat dtype a run-time tensor of torch dtype ``t`` is computed in: its own, int64 for int32
    (``dtypes.INT32_NOTE``), float32 for float16 and bfloat16 (rounded to them after every op: ``compose.round_half``);
    None when eqsat has none."""
    if t == torch.int32:
        return INT64
    name = dtype_name(t)
    return FLOAT32 if name in HALF else name


class ImportState:
    """The builder and caches of one import, and the helpers that build values into it."""

    def __init__(self, name: str, share_weights: bool = False) -> None:
        self.b = GraphBuilder(name)
        self.share_weights = share_weights  # weights are the module's own contiguous tensors, not copies
        self.node: torch.fx.Node | None = None  # the node being converted: its meta holds what torch computed
        self.cache: dict[tuple, Value] = {}  # reshapes and constants, emitted once each
        self.keep_alive: list[torch.Tensor] = []  # tensors whose id() keys the cache or param_names
        self.param_names: dict[int, str] = {}  # id of a parameter/buffer (or a folded copy) -> its weight name
        self.current: Any = None  # the ATen overload being converted
        # how the importer reads an argument that is not a graph value (a constant tensor becomes a weight);
        # None: such an argument is refused
        self.read: Callable[[Any, str], Value] | None = None

    # ------------------------------------------------------------ values
    def tensor(self, v: Any, what: str = "input") -> Value:
        if isinstance(v, Value):
            return v
        if self.read is not None:
            return self.read(v, what)
        raise _Unsupported(f"{what} must be a tensor, got {type(v).__name__} {v!r}")

    def shape(self, v: Value) -> Shape:
        return self.b.shape(v)

    def meta_shape(self) -> Shape:
        """The shape torch computed for the current node's (first) output."""
        assert self.node is not None
        val = self.node.meta.get("val")
        val = val[0] if isinstance(val, (tuple, list)) and val else val
        if not isinstance(val, torch.Tensor):
            raise _Unsupported("torch did not produce a single tensor here")
        return tuple(int(d) for d in val.shape)

    def out_shape(self) -> tuple[int, ...]:
        return self.meta_shape()

    def meta_val(self) -> Any:
        """What torch computed for the current node (its first output when it has several)."""
        assert self.node is not None
        val = self.node.meta.get("val")
        return val[0] if isinstance(val, (tuple, list)) and val else val

    def meta_dtype(self) -> str | None:
        """The eqsat dtype torch computed for the current node's (first) output, or None."""
        val = self.meta_val()
        return computed_as(val.dtype) if isinstance(val, torch.Tensor) else None

    def emit(self) -> Emit:
        """This import as ``frontends.compose`` builds into it: builder ops, constants as named weights."""
        return Emit(
            self.b.graph,
            lambda op, ins, **attrs: self.b.op(op, *ins, **attrs),
            lambda t: self.weight(f"const.{self.node_name()}", t),
        )

    def scalar_of(self, v: Any) -> float | None:
        """A Python number, or a one-element float32 constant tensor, as a float."""
        if isinstance(v, bool) or not isinstance(v, (int, float, torch.Tensor)):
            return None
        if isinstance(v, torch.Tensor):
            if v.dim() != 0 or v.dtype != torch.float32:
                return None
            return float(v.item())
        return float(v)

    def reduce_axes(self, dims: Any, rank: int) -> tuple[int, ...]:
        """A reduction's ``dim`` argument (an int, a list, or None / empty for every axis) as sorted axes."""
        picked = [dims] if isinstance(dims, int) else list(dims or range(rank))
        return tuple(sorted({self.axis(d, rank) for d in picked})) or tuple(range(rank))

    def node_name(self) -> str:
        return "node" if self.node is None else str(self.node.name)

    def scalar_like(self, s: Any, like: Value) -> Value:
        """A Python number as a one-element constant of ``like``'s dtype and rank (exactly, or refused)."""
        dtype = self.b.graph.dtype_of(like)
        t = torch.tensor(s, dtype=TORCH_DTYPE[dtype])
        if float(t.item()) != float(s):
            raise _Unsupported(f"scalar {s!r} is not exactly a {dtype}")
        r = len(self.shape(like))
        return self.const(("scalar", dtype, s, r), f"const.{self.node_name()}", lambda: t.reshape((1,) * r))

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
        """A weight node holding a contiguous copy of ``tensor`` (``tensor`` itself when the import shares
        weights and it is contiguous), under ``name`` (``name.2``... if taken).

        A floating tensor of another precision is rounded to float32 here, on purpose: the import's own
        tables (resampling taps, pooling factors) are computed in float64 for accuracy and stored in eqsat's
        one float type, and a model's constants reach here only after ``constant`` checked they are exact
        in float32.  The builder itself never casts."""
        base, k = name, 1
        while name in self.b.graph.weights:
            k += 1
            name = f"{base}.{k}"
        t = tensor.detach()
        if t.is_floating_point() and t.dtype != torch.float32:
            t = t.float()
        if not (self.share_weights and t.is_contiguous()):
            t = t.clone(memory_format=torch.contiguous_format)
        return self.b.weight(name, t)

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

    # ------------------------------------------------------------ layers several ATen rows share
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

    def gelu(self, x: Value, approximate: str) -> Value:
        if approximate == "tanh":
            return self.b.gelu(x)
        if approximate == "none":
            return self.b.op("gelu_erf", x)
        raise _Unsupported(f"GELU with approximate={approximate!r} (only 'none' and 'tanh')")

    def softmax(self, x: Value, dim: Any) -> Value:
        if dim is None:
            raise _Unsupported("softmax without an explicit dim is not supported")
        return self.b.softmax(x, axis=self.axis(dim, len(self.shape(x))))

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

    def clamp(self, x: Value, lo: Any, hi: Any) -> Value:
        if lo is None and hi is None:
            return x
        if lo is not None and hi is None and float(lo) == 0.0:
            return self.b.relu(x)
        lo = -math.inf if lo is None else float(lo)  # one bound: the other infinite (clamp_min, clamp_max)
        hi = math.inf if hi is None else float(hi)
        return self.b.op("clamp", x, min=lo, max=hi)

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
