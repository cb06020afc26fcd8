"""Elementwise ops: unary functions, scalar multiply, broadcasting binary ops, clamp and pow;
and ``ACTS``, the activations a fused contraction's ``act`` attribute names.

Each unary and binary op's row carries its frontend spellings (``OpDef.aten``, ``OpDef.onnx``): the ATen
converter table, the ONNX importer and exporter derive their rows for it from the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F

from rewrite.ir.dtypes import ANY_SAME, FLOAT, INTEGER, NUMERIC, DTypeRule
from rewrite.ir.ops.registry import (
    OPS,
    AtenSpelling,
    AttrKind,
    AttrSpec,
    CostClass,
    Group,
    OnnxSpelling,
    OpDef,
    f32,
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


class _Unary(NamedTuple):
    """One unary op's row: its torch function, FLOPs per element, ATen overloads and ONNX spelling
    (``OpDef.aten``, ``OpDef.onnx``)."""

    fn: Callable[[torch.Tensor], torch.Tensor]
    flops: int
    aten: tuple[str, ...] = ()
    onnx: OnnxSpelling | None = None


def _on(op_type: str, *attrs: tuple[str, Any, Any]) -> OnnxSpelling:
    return OnnxSpelling(op_type, attrs)


# SELU's constants (torch's, in float32: ONNX Selu's defaults)
SELU_ALPHA, SELU_SCALE = f32(1.6732632423543772848170429916717), f32(1.0507009873554804934193349852946)

# the ops without an ONNX spelling (or an ATen overload) are named, with the reason, in tests/ir/test_op_spellings.py
_UNARY: dict[str, _Unary] = {
    "relu": _Unary(torch.relu, 1, ("aten.relu.default",), _on("Relu")),
    "sigmoid": _Unary(torch.sigmoid, 4, ("aten.sigmoid.default",), _on("Sigmoid")),
    "tanh": _Unary(torch.tanh, 4, ("aten.tanh.default",), _on("Tanh")),
    # F.gelu has its own converter (aten.gelu.default's ``approximate`` picks gelu or gelu_erf)
    "gelu": _Unary(lambda x: F.gelu(x, approximate="tanh"), 8, onnx=_on("Gelu", ("approximate", "tanh", "none"))),
    "exp": _Unary(torch.exp, 4, ("aten.exp.default",), _on("Exp")),
    "identity": _Unary(lambda x: x, 0, onnx=_on("Identity")),
    # the float ops real CNNs and transformers need (MobileNet, EfficientNet, GPT-2, BERT, LLaMA, ViT)
    "hardswish": _Unary(F.hardswish, 5, ("aten.hardswish.default",), _on("HardSwish")),
    "hardsigmoid": _Unary(
        F.hardsigmoid,
        4,
        ("aten.hardsigmoid.default",),
        _on("HardSigmoid", ("alpha", f32(1 / 6), f32(0.2)), ("beta", 0.5, 0.5)),
    ),
    # ONNX has no SiLU before opset 24 (Swish): it imports as x * sigmoid(x) (see the handler)
    "silu": _Unary(F.silu, 5, aten=("aten.silu.default",)),
    "mish": _Unary(F.mish, 12, ("aten.mish.default",), _on("Mish")),
    # F.gelu (approximate="none") has its own converter
    "gelu_erf": _Unary(lambda x: F.gelu(x), 16, onnx=_on("Gelu", ("approximate", "none", "none"))),
    # ONNX exports spell GELU with erf
    "erf": _Unary(torch.erf, 20, ("aten.erf.default",), _on("Erf")),
    # steps: ONNX exports' shape arithmetic (folded when constant), quantization's rounding
    "floor": _Unary(torch.floor, 1, ("aten.floor.default",), _on("Floor")),
    "ceil": _Unary(torch.ceil, 1, ("aten.ceil.default",), _on("Ceil")),
    "round": _Unary(torch.round, 1, ("aten.round.default",), _on("Round")),  # half to even
    # 0 for NaN and -0, as torch
    "sign": _Unary(torch.sign, 2, ("aten.sign.default",), _on("Sign")),
    "log": _Unary(torch.log, 4, ("aten.log.default",), _on("Log")),
    "log1p": _Unary(torch.log1p, 4, ("aten.log1p.default",)),
    "expm1": _Unary(torch.expm1, 4, ("aten.expm1.default",)),
    "sqrt": _Unary(torch.sqrt, 2, ("aten.sqrt.default",), _on("Sqrt")),
    # torch.neg imports as smul(-1) (rules/algebra: neg <=> smul -1)
    "neg": _Unary(torch.neg, 1, onnx=_on("Neg")),
    "abs": _Unary(torch.abs, 1, ("aten.abs.default",), _on("Abs")),
    "reciprocal": _Unary(torch.reciprocal, 1, ("aten.reciprocal.default",), _on("Reciprocal")),
    # rotary position embeddings (LLaMA) when not folded
    "sin": _Unary(torch.sin, 8, ("aten.sin.default",), _on("Sin")),
    "cos": _Unary(torch.cos, 8, ("aten.cos.default",), _on("Cos")),
    # the rest of C's float math (libm's / CUDA's, a few ulp): NaN outside the domain, as torch's
    "tan": _Unary(torch.tan, 10, ("aten.tan.default",), _on("Tan")),
    "asin": _Unary(torch.asin, 10, ("aten.asin.default",), _on("Asin")),
    "acos": _Unary(torch.acos, 10, ("aten.acos.default",), _on("Acos")),
    "atan": _Unary(torch.atan, 10, ("aten.atan.default",), _on("Atan")),
    "sinh": _Unary(torch.sinh, 8, ("aten.sinh.default",), _on("Sinh")),
    "cosh": _Unary(torch.cosh, 8, ("aten.cosh.default",), _on("Cosh")),
    "asinh": _Unary(torch.asinh, 12, ("aten.asinh.default",), _on("Asinh")),
    "acosh": _Unary(torch.acosh, 12, ("aten.acosh.default",), _on("Acosh")),
    "atanh": _Unary(torch.atanh, 12, ("aten.atanh.default",), _on("Atanh")),
    # SELU (self-normalizing networks): scale * (x > 0 ? x : alpha * (exp(x) - 1))
    "selu": _Unary(
        F.selu,
        6,
        ("aten.selu.default",),
        _on("Selu", ("alpha", SELU_ALPHA, SELU_ALPHA), ("gamma", SELU_SCALE, SELU_SCALE)),
    ),
}
for _name, _u in _UNARY.items():
    register_op(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            1,
            (),
            Same(),
            (lambda f: lambda xs, a: [f(xs[0])])(_u.fn),
            _ew_flops(_u.flops),
            doc=f"elementwise {_name}",
            cost_class=CostClass.VIEW if _name == "identity" else None,
            dtype_rule=ANY_SAME if _name == "identity" else FLOAT,
            aten=_u.aten,
            onnx=_u.onnx,
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


class _Binary(NamedTuple):
    """One broadcasting op of two tensors: its torch function, whether it commutes, FLOPs per element, dtype
    rule, ATen overloads (each with its converter) and ONNX spelling (``OpDef.aten``, ``OpDef.onnx``)."""

    fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    commutative: bool
    flops: int
    dtype_rule: DTypeRule
    aten: tuple[AtenSpelling, ...]
    onnx: OnnxSpelling | None = None
    doc: str = ""  # what it computes, when its name does not say


def _at(converter: str, *overloads: str, training_only: bool = False, **attrs: Any) -> tuple[AtenSpelling, ...]:
    """Overloads of one op, read by one converter, implying ``attrs`` (``training_only``: overloads of
    torch.export's training IR, which core ATen decomposes; ``AtenSpelling``)."""
    return tuple(AtenSpelling(o, converter, tuple(attrs.items()), training_only) for o in overloads)


# a_arith reads a number for either operand, alpha, and torch's promotion (an int64 tensor times 0.5 is cast)
_BINARY: dict[str, _Binary] = {
    "add": _Binary(torch.add, True, 1, NUMERIC, _at("a_arith", "aten.add.Tensor", "aten.add.Scalar"), _on("Add")),
    # rsub(x, s, alpha) = s - alpha * x
    "sub": _Binary(
        torch.sub,
        False,
        1,
        NUMERIC,
        _at("a_arith", "aten.sub.Tensor", "aten.sub.Scalar", "aten.rsub.Scalar"),
        _on("Sub"),
    ),
    "mul": _Binary(
        torch.mul,
        True,
        1,
        NUMERIC,
        _at("a_arith", "aten.mul.Tensor", "aten.mul.Scalar")
        + _at("a_square", "aten.square.default", training_only=True),
        _on("Mul"),
    ),
    "div": _Binary(torch.div, False, 1, FLOAT, _at("a_arith", "aten.div.Tensor", "aten.div.Scalar"), _on("Div")),
    # ONNX Max and Min take any number of inputs: more than two import as a chain
    "maximum": _Binary(torch.maximum, True, 1, NUMERIC, _at("a_binary", "aten.maximum.default"), _on("Max")),
    "minimum": _Binary(torch.minimum, True, 1, NUMERIC, _at("a_binary", "aten.minimum.default"), _on("Min")),
    # float math of two tensors: libm's atan2f and powf (``pow`` is x ** a constant); ONNX has no Atan2
    "atan2": _Binary(
        torch.atan2,
        False,
        12,
        FLOAT,
        _at("a_atan2", "aten.atan2.default"),
        doc="atan2(y, x): the angle of (x, y), in [-pi, pi]",
    ),
    # ONNX Pow with a one-element constant exponent imports as ``pow`` (the Pow importer picks)
    "power": _Binary(
        torch.pow,
        False,
        12,
        FLOAT,
        _at("a_power", "aten.pow.Tensor_Tensor", "aten.pow.Scalar"),
        _on("Pow"),
        doc="x ** y of two tensors: C's powf",
    ),
}
for _name, _b in _BINARY.items():
    register_op(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            2,
            (),
            Broadcast(),
            (lambda f: lambda xs, a: [f(xs[0], xs[1])])(_b.fn),
            _ew_flops(_b.flops),
            commutative=_b.commutative,
            doc=f"elementwise {_b.doc}, with broadcasting (equal ranks)"
            if _b.doc
            else f"elementwise {_name} with broadcasting (equal ranks)",
            dtype_rule=_b.dtype_rule,
            aten=_b.aten,
            onnx=_b.onnx,
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
    # C's exact fmod, in float64: torch's vectorized float32 fmod/remainder return NaN where x / y overflows
    # float32 (a denormal or tiny divisor: fmod(0.5, 1e-40)) while its scalar path, C and the kernels give the
    # exact remainder; the quotient of two float32 values cannot overflow float64, and the remainder is exact
    r = torch.fmod(x.double(), y.double())
    if floor:  # torch.remainder: one divisor added where the remainder's sign differs from the divisor's
        r = torch.where((r != 0) & ((r < 0) != (y < 0)), r + y.double(), r)
    return [r.to(x.dtype)]


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
        aten=_at("a_arith", "aten.remainder.Scalar", "aten.remainder.Tensor", mode="floor")
        + _at("a_arith", "aten.fmod.Scalar", "aten.fmod.Tensor", mode="trunc"),
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
        # div with rounding_mode: the call's mode; a float32 one is composed (aten.float_division)
        aten=_at("a_arith", "aten.floor_divide.default", mode="floor")
        + _at("a_arith", "aten.div.Tensor_mode", "aten.div.Scalar_mode"),
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
        aten=_at("a_clamp", "aten.hardtanh.default")
        + _at("a_relu6", "aten.relu6.default", training_only=True)
        + _at("a_clamp_max", "aten.clamp_max.default", training_only=True),
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


# the ``act`` attribute of the fused contractions: its values, each the unary registry op it applies ("none":
# identity); the reference, the FLOPs, the lowering and the ONNX export read that op's row
ACTS: dict[str, str] = {"none": "identity", "relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh"}


def apply_act(act: str, x: torch.Tensor) -> torch.Tensor:
    """``x`` through the activation ``act`` (its op's torch reference)."""
    return OPS[ACTS[act]].ref([x], {})[0]


def act_flops(act: str) -> int:
    """FLOPs per element of the activation ``act``."""
    return OPS[ACTS[act]].flops([(1,)], [(1,)], {})
