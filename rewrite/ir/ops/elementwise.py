"""Elementwise ops: unary functions, scalar multiply, broadcasting binary ops, clamp and pow;
and ``ACTS``, the activations a fused contraction's ``act`` attribute names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from rewrite.ir.dtypes import ANY_SAME, FLOAT, INTEGER, NUMERIC
from rewrite.ir.ops.registry import (
    AttrKind,
    AttrSpec,
    CostClass,
    Group,
    OpDef,
    register_op,
)
from rewrite.ir.shapes import (
    Attrs,
    Broadcast,
    Same,
    Shape,
    numel,
)


# ---------------------------------------------------------------- elementwise
def _ew_flops(per: int) -> Callable[[list[Shape], list[Shape], Attrs], int]:
    return lambda i, o, a: per * numel(o[0])


# name -> (torch function, FLOPs per element, torch spellings: functions, Tensor methods)
_UNARY: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], int, tuple[Any, ...], tuple[str, ...]]] = {
    "relu": (torch.relu, 1, (torch.relu, F.relu), ("relu",)),
    "sigmoid": (torch.sigmoid, 4, (torch.sigmoid, F.sigmoid), ("sigmoid",)),
    "tanh": (torch.tanh, 4, (torch.tanh, F.tanh), ("tanh",)),
    "gelu": (lambda x: F.gelu(x, approximate="tanh"), 8, (), ()),  # F.gelu has its own converter
    "exp": (torch.exp, 4, (torch.exp,), ("exp",)),
    "identity": (lambda x: x, 0, (), ()),
    # the float ops real CNNs and transformers need (MobileNet, EfficientNet, GPT-2, BERT, LLaMA, ViT)
    "hardswish": (F.hardswish, 5, (F.hardswish,), ()),
    "hardsigmoid": (F.hardsigmoid, 4, (F.hardsigmoid,), ()),
    "silu": (F.silu, 5, (), ()),  # F.silu / nn.SiLU have converters (inplace argument)
    "mish": (F.mish, 12, (F.mish,), ()),
    "gelu_erf": (lambda x: F.gelu(x), 16, (), ()),  # F.gelu (approximate="none") has its own converter
    "erf": (torch.erf, 20, (torch.erf, torch.special.erf), ("erf",)),  # ONNX exports spell GELU with it
    # steps: ONNX exports' shape arithmetic (folded when constant), quantization's rounding
    "floor": (torch.floor, 1, (torch.floor,), ("floor",)),
    "ceil": (torch.ceil, 1, (torch.ceil,), ("ceil",)),
    "round": (torch.round, 1, (torch.round,), ("round",)),  # half to even
    "sign": (torch.sign, 2, (torch.sign,), ("sign",)),  # 0 for NaN and -0, as torch
    "log": (torch.log, 4, (torch.log,), ("log",)),
    "log1p": (torch.log1p, 4, (torch.log1p,), ("log1p",)),
    "expm1": (torch.expm1, 4, (torch.expm1,), ("expm1",)),
    "sqrt": (torch.sqrt, 2, (torch.sqrt,), ("sqrt",)),
    "neg": (torch.neg, 1, (), ()),  # torch.neg imports as smul(-1) (rules/algebra: neg <=> smul -1)
    "abs": (torch.abs, 1, (torch.abs,), ("abs",)),
    "reciprocal": (torch.reciprocal, 1, (torch.reciprocal,), ("reciprocal",)),
    "sin": (torch.sin, 8, (torch.sin,), ("sin",)),  # rotary position embeddings (LLaMA) when not folded
    "cos": (torch.cos, 8, (torch.cos,), ("cos",)),
    # the rest of C's float math (libm's / CUDA's, a few ulp): NaN outside the domain, as torch's
    "tan": (torch.tan, 10, (torch.tan,), ("tan",)),
    "asin": (torch.asin, 10, (torch.asin, torch.arcsin), ("asin", "arcsin")),  # |x| <= 1
    "acos": (torch.acos, 10, (torch.acos, torch.arccos), ("acos", "arccos")),  # |x| <= 1
    "atan": (torch.atan, 10, (torch.atan, torch.arctan), ("atan", "arctan")),
    "sinh": (torch.sinh, 8, (torch.sinh,), ("sinh",)),
    "cosh": (torch.cosh, 8, (torch.cosh,), ("cosh",)),
    "asinh": (torch.asinh, 12, (torch.asinh, torch.arcsinh), ("asinh", "arcsinh")),
    "acosh": (torch.acosh, 12, (torch.acosh, torch.arccosh), ("acosh", "arccosh")),  # x >= 1
    "atanh": (torch.atanh, 12, (torch.atanh, torch.arctanh), ("atanh", "arctanh")),  # |x| <= 1
}
for _name, (_fn, _fl, _fns, _methods) in _UNARY.items():
    register_op(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            1,
            (),
            Same(),
            (lambda f: lambda xs, a: [f(xs[0])])(_fn),
            _ew_flops(_fl),
            doc=f"elementwise {_name}",
            cost_class=CostClass.VIEW if _name == "identity" else None,
            dtype_rule=ANY_SAME if _name == "identity" else FLOAT,
            torch_functions=_fns,
            torch_methods=_methods,
        )
    )

register_op(
    OpDef(
        "smul",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("scalar", AttrKind.FLOAT),),
        Same(),
        lambda xs, a: [xs[0] * a["scalar"]],
        _ew_flops(1),
        doc="multiply by a scalar constant",
    )
)

_BINARY: dict[str, tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], bool]] = {
    "add": (torch.add, True),
    "sub": (torch.sub, False),
    "mul": (torch.mul, True),
    "div": (torch.div, False),
    "maximum": (torch.maximum, True),
    "minimum": (torch.minimum, True),
}
for _name, (_bfn, _comm) in _BINARY.items():
    register_op(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            2,
            (),
            Broadcast(),
            (lambda f: lambda xs, a: [f(xs[0], xs[1])])(_bfn),
            _ew_flops(1),
            commutative=_comm,
            doc=f"elementwise {_name} with broadcasting (equal ranks)",
            dtype_rule=NUMERIC if _name in ("add", "sub", "mul", "maximum", "minimum") else FLOAT,
        )
    )

# float math of two tensors, with broadcasting: libm's atan2f and powf (``pow`` is x ** a constant)
_MATH2: dict[str, tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], str]] = {
    "atan2": (torch.atan2, "atan2(y, x): the angle of (x, y), in [-pi, pi]"),
    "power": (torch.pow, "x ** y of two tensors: C's powf"),
}
for _name, (_mfn, _what) in _MATH2.items():
    register_op(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            2,
            (),
            Broadcast(),
            (lambda f: lambda xs, a: [f(xs[0], xs[1])])(_mfn),
            _ew_flops(12),
            doc=f"elementwise {_what}, with broadcasting (equal ranks)",
            dtype_rule=FLOAT,
        )
    )


# integer division and remainder: a zero divisor gives quotient 0 and remainder the dividend (torch raises,
# onnxruntime's result is undefined), INT64_MIN / -1 wraps; the kernels never trap (lower.ir.INT_FUNCS)
ROUNDINGS = ("floor", "trunc")


def _int_safe(b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The divisor with 0 and -1 replaced by 1, and the masks of where they were."""
    zero, minus1 = b == 0, b == -1
    return torch.where(zero | minus1, torch.ones_like(b), b), zero, minus1


def _mod_ref(xs: list[torch.Tensor], a: Any) -> list[torch.Tensor]:
    x, y = xs
    floor = a["mode"] == "floor"
    if not x.dtype.is_floating_point:
        d, zero, minus1 = _int_safe(y)
        r = torch.remainder(x, d) if floor else torch.fmod(x, d)
        r = torch.where(minus1, torch.zeros_like(r), r)
        return [torch.where(zero, x, r)]
    return [torch.remainder(x, y) if floor else torch.fmod(x, y)]


def _idiv_ref(xs: list[torch.Tensor], a: Any) -> list[torch.Tensor]:
    x, y = xs
    d, zero, minus1 = _int_safe(y)
    q = torch.div(x, d, rounding_mode=a["mode"])
    q = torch.where(minus1, -x, q)  # int64 negation wraps, as the kernels'
    return [torch.where(zero, torch.zeros_like(q), q)]


register_op(
    OpDef(
        "mod",
        Group.ELEMENTWISE,
        2,
        (AttrSpec("mode", AttrKind.STR, "floor", choices=ROUNDINGS),),
        Broadcast(),
        _mod_ref,
        _ew_flops(4),
        doc="x mod y with broadcasting: floor (torch.remainder, Python's %) or trunc (torch.fmod, C's fmod); "
        "float32 or int64",
        dtype_rule=NUMERIC,
    )
)
register_op(
    OpDef(
        "idiv",
        Group.ELEMENTWISE,
        2,
        (AttrSpec("mode", AttrKind.STR, "floor", choices=ROUNDINGS),),
        Broadcast(),
        _idiv_ref,
        _ew_flops(4),
        doc="int64 x / y rounded down (floor: torch.floor_divide, Python's //) or toward zero (trunc: ONNX Div)",
        dtype_rule=INTEGER,
    )
)


register_op(
    OpDef(
        "clamp",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("min", AttrKind.FLOAT), AttrSpec("max", AttrKind.FLOAT)),
        Same(),
        lambda xs, a: [torch.clamp(xs[0], a["min"], a["max"])],
        _ew_flops(2),
        doc="min(max(x, min), max): hardtanh, relu6 (min=0, max=6)",
    )
)
register_op(
    OpDef(
        "pow",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("exponent", AttrKind.FLOAT),),
        Same(),
        lambda xs, a: [torch.pow(xs[0], a["exponent"])],
        _ew_flops(4),
        doc="x ** exponent for a constant exponent (small integers multiply; others exp(e * log x))",
    )
)


# act attribute of the fused contractions: name -> (torch function, FLOPs per element)
ACTS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], int]] = {
    "none": (lambda x: x, 0),
    **{k: _UNARY[k][:2] for k in ("relu", "sigmoid", "tanh")},
}
