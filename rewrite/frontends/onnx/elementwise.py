"""Elementwise ONNX ops: activations, arithmetic, comparisons, logic, ``Where`` and ``Cast``.

The op types the registry spells (``OpDef.onnx``: Relu, Add, Equal, Where...) are read from it: a node of
one becomes that op, through the op's importer where one is registered (``@imports``: constants fold,
scalars become ``smul``); the others have a handler of their own (``@handles``).

Broadcasting between ranks becomes explicit reshapes (the IR keeps ranks equal).  Operands
that are all constants fold at import time with numpy (shape arithmetic on int64 tensors,
masks built from constants), computed exactly as ONNX defines them.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import torch

from rewrite.frontends.onnx.context import (
    HALF_ONNX,
    HANDLERS,
    IMPORTERS,
    NP_DTYPES,
    ONNX_DTYPES,
    Ctx,
    Handler,
    Refuse,
    Tensor,
    handles,
    imports,
    only_attrs,
    onnx_dtype_name,
    opt_input,
)
from rewrite.ir.dtypes import FLOAT32, INT32_NOTE, INT64, exact_reciprocal
from rewrite.ir.graph import Value
from rewrite.ir.ops import OPS, OpDef, registry_version


@functools.lru_cache(maxsize=1)
def _spellings(version: int) -> dict[str, tuple[OpDef, ...]]:
    out: dict[str, list[OpDef]] = {}
    for op in OPS.values():
        if op.onnx is not None:
            out.setdefault(op.onnx.op_type, []).append(op)
    return {t: tuple(ops) for t, ops in out.items()}


def spellings() -> dict[str, tuple[OpDef, ...]]:
    """ONNX op type → the registry ops spelled with it (``OpDef.onnx``), as the registry holds them now."""
    return _spellings(registry_version())


def spelled_op(n: onnx.NodeProto) -> str:
    """The registry op ``n``'s type spells (the first, for a type several spell: Gelu's attributes pick)."""
    return spellings()[n.op_type][0].name


def handler_for(op_type: str) -> Handler | None:
    """The importer of ``op_type``: the registry's spelling first (an op registered at run time included), by
    its op's importer (``IMPORTERS``: Add, Equal, Where...) or as one node of the op; else the op type's own
    handler."""
    ops = spellings().get(op_type)
    if ops is None:
        return HANDLERS.get(op_type)
    return next((IMPORTERS[d.name] for d in ops if d.name in IMPORTERS), _spelled)


def _spelled(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """A node the registry spells (``OpDef.onnx``) whose attributes match: that op; otherwise the op type's own
    handler (HardSigmoid's other slopes, Selu's other constants, composed of registry ops)."""
    op = next((d for d in spellings()[n.op_type] if d.onnx is not None and d.onnx.matches(a)), None)
    if op is None:
        own = HANDLERS.get(n.op_type)
        if own is None:
            given = ", ".join(f"{k}={v!r}" for k, v in a.items())
            raise Refuse(f"attribute(s) {given} match no registry op spelled {n.op_type}")
        return own(c, n, a)
    if op.arity != 1:  # an op of several tensors with no importer of its own (one registered at run time)
        return [c.add(op.name, c.same_rank(*(c.env[i] for i in n.input)))]
    x = c.env[n.input[0]]
    if op.name == "identity":
        return [c.identity(x)]
    fold = _FOLD_UNARY.get(op.name)
    if isinstance(x, np.ndarray) and fold is not None and x.dtype.kind in _FOLD_KINDS.get(op.name, "if"):
        with np.errstate(all="ignore"):  # 1/0 is inf, as in ONNX
            return [np.asarray(fold(x)).astype(x.dtype)]
    return [c.add(op.name, [c.value(x)])]


def _np_erf(x: np.ndarray) -> np.ndarray:
    return torch.erf(torch.from_numpy(np.array(x, order="C"))).numpy()


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    return torch.sigmoid(torch.from_numpy(np.array(x, order="C"))).numpy()


# Constants fold at import (registry op -> its numpy form): neg, abs, sqrt and reciprocal exactly (correctly
# rounded); the transcendental ones with numpy's / torch's float32 functions, within an ulp or two of any
# runtime's (ONNX does not pin them), as exporters leave them on shape-derived constants (T5's relative
# position buckets: Log -> Cast).  An op not here stays a node on a constant (its input becomes a weight).
_FOLD_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "neg": np.negative,
    "abs": np.abs,
    "sqrt": np.sqrt,
    "reciprocal": np.reciprocal,
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "tanh": np.tanh,
    "sigmoid": _np_sigmoid,
    "erf": _np_erf,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.rint,  # half to even, as ONNX
    "sign": np.sign,
    "logical_not": np.logical_not,
}
_FOLD_KINDS = {"logical_not": "b"}  # numpy dtype kinds folded: floats and integers, bools for Not


@handles("IsNaN", "IsInf")
def _isnan(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """IsNaN(x) is x != x (unordered); IsInf compares |x| (or x) with inf. Attention exports guard softmax."""
    only_attrs(a, {"detect_negative", "detect_positive"})
    x = c.env[n.input[0]]
    neg, pos = bool(a.get("detect_negative", 1)), bool(a.get("detect_positive", 1))
    if isinstance(x, np.ndarray):
        if n.op_type == "IsNaN":
            return [np.isnan(x)]
        return [(np.isposinf(x) & pos) | (np.isneginf(x) & neg)]
    if c.dtype(x) != FLOAT32:
        raise Refuse(f"input is {c.dtype(x)}; it takes float32")
    if n.op_type == "IsNaN":
        return [c.add("ne", [x, x])]
    if not (neg or pos):
        return [c.value(np.zeros(c.shape(x), np.bool_))]
    if neg and pos:
        return [c.add("eq", [c.add("abs", [x]), _full(c, x, math.inf)])]
    return [c.add("eq", [x, _full(c, x, math.inf if pos else -math.inf)])]


@handles("HardSigmoid")
def _hardsigmoid(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"alpha", "beta"})
    alpha, beta = float(a.get("alpha", 0.2)), float(a.get("beta", 0.5))
    x = c.value(c.env[n.input[0]])
    # other than torch's slopes (the registry's hardsigmoid, OpDef.onnx):
    # max(0, min(1, alpha * x + beta)), each step in float32 as ONNX computes it
    lin = c.add("add", [c.add("smul", [x], scalar=alpha), c.value(np.full((1,) * len(c.shape(x)), beta, np.float32))])
    return [c.add("clamp", [lin], min=0.0, max=1.0)]


def _full(c: Ctx, x: Value, v: float) -> Value:
    """A float32 constant ``v`` shaped to broadcast against ``x``."""
    return c.value(np.full((1,) * len(c.shape(x)), v, np.float32))


@handles("Softplus", "Celu", "Shrink", "Swish")
def _smooth(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """Activations ONNX spells as ops, composed of registry ops."""
    only_attrs(a, {"alpha", "bias", "lambd"})
    x = c.value(c.env[n.input[0]])
    if c.dtype(x) != FLOAT32:
        raise Refuse(f"input is {c.dtype(x)}; it takes float32")
    op = n.op_type
    if op == "Softplus":  # log(1 + e^x): x itself above 20, where e^x would overflow first (as torch)
        soft = c.add("log1p", [c.add("exp", [x])])
        return [c.add("where", [c.add("gt", [x, _full(c, x, 20.0)]), x, soft])]
    if op == "Celu":  # x above 0, alpha * (exp(x / alpha) - 1) below
        alpha = float(a.get("alpha", 1.0))
        low = c.add("smul", [c.add("expm1", [c.add("smul", [x], scalar=1.0 / alpha)])], scalar=alpha)
        return [c.add("where", [c.add("gt", [x, _full(c, x, 0.0)]), x, low])]
    if op == "Swish":  # x * sigmoid(alpha * x)
        alpha = float(a.get("alpha", 1.0))
        if alpha == 1.0:
            return [c.add("silu", [x])]
        return [c.add("mul", [x, c.add("sigmoid", [c.add("smul", [x], scalar=alpha)])])]
    # Shrink: x + bias below -lambd, x - bias above lambd, 0 between
    bias, lambd = float(a.get("bias", 0.0)), float(a.get("lambd", 0.5))
    above = c.add(
        "where", [c.add("gt", [x, _full(c, x, lambd)]), c.add("sub", [x, _full(c, x, bias)]), _full(c, x, 0.0)]
    )
    return [c.add("where", [c.add("lt", [x, _full(c, x, -lambd)]), c.add("add", [x, _full(c, x, bias)]), above])]


@handles("LeakyRelu", "Elu", "Selu", "ThresholdedRelu", "PRelu", "Softsign")
def _piecewise(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """The ReLU family ONNX spells as ops, as selects between registry ops (no op of their own)."""
    only_attrs(a, {"alpha", "gamma"})
    x = c.value(c.env[n.input[0]])
    op = n.op_type
    if op == "Softsign":  # x / (1 + |x|)
        return [c.add("div", [x, c.add("add", [c.add("abs", [x]), _full(c, x, 1.0)])])]
    if op == "ThresholdedRelu":  # x where x > alpha, else 0
        alpha = float(a.get("alpha", 1.0))
        return [c.add("where", [c.add("gt", [x, _full(c, x, alpha)]), x, _full(c, x, 0.0)])]
    neg = c.add("lt", [x, _full(c, x, 0.0)])
    if op == "LeakyRelu":  # alpha * x below 0
        return [c.add("where", [neg, c.add("smul", [x], scalar=float(a.get("alpha", 0.01))), x])]
    if op == "PRelu":  # slope * x below 0, slope broadcast (ranks raised as numpy does)
        x2, slope = c.same_rank(x, c.env[n.input[1]])
        low = c.add("mul", [x2, slope])
        if c.shape(low) != c.shape(x):
            raise Refuse(f"slope of shape {c.shape(slope)} broadcasts the input {c.shape(x)} to {c.shape(low)}")
        return [c.add("where", [neg, low, x])]
    em1 = c.add("expm1", [x])  # exp(x) - 1, exact near 0
    if op == "Elu":  # alpha * (exp(x) - 1) below 0
        return [c.add("where", [neg, c.add("smul", [em1], scalar=float(a.get("alpha", 1.0))), x])]
    # Selu: gamma * (alpha * (exp(x) - 1) if x <= 0 else x)
    alpha, gamma = float(a.get("alpha", 1.67326319217681884765625)), float(a.get("gamma", 1.05070102214813232421875))
    le0 = c.add("le", [x, _full(c, x, 0.0)])
    return [c.add("smul", [c.add("where", [le0, c.add("smul", [em1], scalar=alpha), x])], scalar=gamma)]


@handles("Dropout")
def _dropout(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """Inference Dropout: the output is the input, the optional mask (which elements were kept) all true.

    The mask, declared or not, read or not (SqueezeNet and VGG-19 of the model zoo declare it and read nothing),
    is a constant: bool from opset 10 on, the input's float type before (1.0, the spec's ``T``).  onnxruntime
    writes zeros (False) for it in inference up to opset 11 and ones from 12; ones are what the mask means
    (``output = data * mask`` with nothing dropped), and what onnx's reference evaluator writes at every opset."""
    only_attrs(a, {"ratio", "seed", "is_test"})
    if a.get("is_test", 1) == 0 and c.opset < 7:
        raise Refuse("training mode (is_test=0) is not supported: eqsat graphs are for inference")
    training = opt_input(n, 2)
    if training and bool(c.const(training, "training_mode").reshape(-1)[0]):
        ratio = opt_input(n, 1)  # a zero ratio drops nothing: training mode is then the identity too
        if not ratio or float(c.const(ratio, "ratio").reshape(-1)[0]) != 0.0:
            raise Refuse("training_mode=true with a non-zero ratio drops at random: eqsat graphs are for inference")
    x = c.env[n.input[0]]
    kept = np.float32(1.0) if c.opset < 10 else np.True_
    # a broadcast view: an unread mask of a large activation costs no memory (a read one is copied as a weight)
    return [c.identity(x), np.broadcast_to(kept, c.shape(x))]


# ONNX's sums of any number of terms (Mean: scaled by 1/n): chains of add, not a spelling of it (Add is)
_SUMS = {"Sum": "add", "Mean": "add"}
_FOLD_VARIADIC: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


@handles(*_SUMS)
@imports("maximum", "minimum")  # ONNX Max and Min take any number of inputs
def _variadic(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    op = _SUMS.get(n.op_type) or spelled_op(n)
    terms = [c.env[i] for i in n.input]
    arrays = [t for t in terms if isinstance(t, np.ndarray)]
    if len(arrays) == len(terms) > 1:  # shape arithmetic: folds (an int32 and an int64 term as numpy promotes)
        folded = arrays[0]
        for arr in arrays[1:]:
            folded = _FOLD_VARIADIC[op](folded, arr)
        if n.op_type == "Mean":
            folded = folded / len(arrays)
        return [np.asarray(folded).astype(np.result_type(*arrays))]
    if len(terms) == 1:
        return [c.identity(terms[0])]
    acc = c.add(op, c.same_rank(terms[0], terms[1]))
    for t in terms[2:]:
        acc = c.add(op, c.same_rank(acc, t))
    if n.op_type == "Mean":
        acc = c.add("smul", [acc], scalar=1.0 / len(terms))
    return [acc]


def _int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if np.any(y == 0):
        raise Refuse("integer division by zero in a constant")
    q = np.abs(x) // np.abs(y)
    return np.where((x < 0) != (y < 0), -q, q).astype(x.dtype)  # truncates toward zero, as C


def _scalar_of(c: Ctx, x: Tensor, y: Tensor) -> float | None:
    """The value of ``y`` when it is a one-element float32 constant scaling a float32 value ``x``."""
    if not (isinstance(x, Value) and isinstance(y, np.ndarray) and y.size == 1 and y.dtype == np.float32):
        return None
    return float(y.reshape(-1)[0]) if y.ndim <= len(c.shape(x)) and c.dtype(x) == FLOAT32 else None


_FOLD_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


@imports("add", "sub", "mul", "div")
def _binary(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    if a.get("broadcast") or "axis" in a:  # opset < 7 explicit broadcasting
        raise Refuse("legacy 'broadcast'/'axis' attributes (opset < 7) are not supported")
    only_attrs(a, {"broadcast"})
    op = spelled_op(n)
    x, y = c.env[n.input[0]], c.env[n.input[1]]
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.dtype == y.dtype and x.dtype.kind in "if":
        with np.errstate(all="ignore"):  # x/0 is inf or nan, int64 wraps, as in ONNX
            if op == "div":
                return [_int_div(x, y) if x.dtype.kind == "i" else np.asarray(np.divide(x, y))]
            return [np.asarray(_FOLD_BINARY[op](x, y)).astype(x.dtype)]
    if op == "mul" and isinstance(x, np.ndarray) and isinstance(y, Value):
        x, y = y, x
    k = _scalar_of(c, x, y)
    if op == "mul" and k is not None:  # x * scalar constant: smul (a float32 scalar: the same product)
        return [c.add("smul", [c.value(x)], scalar=k)]
    if op == "div" and k is not None and (inv := exact_reciprocal(k)) is not None:
        return [c.add("smul", [c.value(x)], scalar=inv)]  # x / 2^k is x * 2^-k exactly: attention's 1/sqrt(d)
    if op == "div" and c.dtype(x) == "int64":  # integer Div truncates (C's /, onnxruntime's)
        return [c.add("idiv", c.same_rank(x, y), mode="trunc")]
    return [c.add(op, c.same_rank(x, y))]


@handles("Mod")
def _mod(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """x mod y as ONNX defines it: fmod=0 takes the divisor's sign (Python's %), fmod=1 the dividend's (C's
    fmod).  Constants fold (shape arithmetic: Swin's window padding); run-time values are the registry's
    ``mod`` (float32 or int64: CANINE's hash buckets)."""
    only_attrs(a, {"fmod"})
    x, y = c.env[n.input[0]], c.env[n.input[1]]
    fmod = int(a.get("fmod", 0))
    if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
        if c.dtype(x) != c.dtype(y):
            raise Refuse(f"Mod of {c.dtype(x)} and {c.dtype(y)}")
        return [c.add("mod", c.same_rank(x, y), mode="trunc" if fmod else "floor")]
    if x.dtype != y.dtype or x.dtype.kind not in "if":
        raise Refuse(f"Mod of {x.dtype} and {y.dtype} constants")
    if x.dtype.kind == "i" and np.any(y == 0):
        raise Refuse("integer Mod by zero in a constant")
    with np.errstate(all="ignore"):
        return [np.asarray(np.fmod(x, y) if fmod else np.mod(x, y)).astype(x.dtype)]


@handles("Clip")
def _clip(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    x = c.value(c.env[n.input[0]])
    if c.opset < 11:
        only_attrs(a, {"min", "max"})
        lo, hi = float(a.get("min", -math.inf)), float(a.get("max", math.inf))
    else:
        only_attrs(a, set())
        lo = c.scalar(n.input[1], "min") if opt_input(n, 1) else -math.inf
        hi = c.scalar(n.input[2], "max") if opt_input(n, 2) else math.inf
    if c.dtype(x) != FLOAT32:
        raise Refuse(f"input is {c.dtype(x)}; eqsat's clamp is float32 only")
    if (lo, hi) == (-math.inf, math.inf):
        return [c.identity(x)]
    if (lo, hi) == (0.0, math.inf):
        return [c.add("relu", [x])]
    return [c.add("clamp", [x], min=lo, max=hi)]


@imports("power")  # a one-element constant exponent: ``pow`` (x ** a number)
def _pow(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    x, y = c.env[n.input[0]], c.env[n.input[1]]
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.dtype.kind in "if" and y.dtype.kind in "if":
        with np.errstate(all="ignore"):  # shape arithmetic (DINOv2's sqrt of the patch count): folds
            return [np.asarray(np.power(x, y.astype(x.dtype))).astype(x.dtype)]
    if not isinstance(y, np.ndarray) or y.size != 1:  # a tensor exponent: the binary power op (powf)
        return [_power(c, x, y)]
    if y.ndim > len(c.shape(x)):
        raise Refuse(f"exponent of rank {y.ndim} broadcasts the base of shape {c.shape(x)}")
    if y.dtype.kind not in "if":
        raise Refuse(f"exponent has dtype {y.dtype}")
    e = float(y.reshape(-1)[0])
    if y.dtype.kind == "i" and abs(int(y.reshape(-1)[0])) > 2**24:
        raise Refuse(f"integer exponent {int(y.reshape(-1)[0])} is not exact in float")
    xv = c.value(x)
    return [c.add("pow", [xv], exponent=e) if e != 1.0 else c.add("identity", [xv])]


def _power(c: Ctx, x: Tensor, y: Tensor) -> Value:
    """x ** y elementwise for a float32 base; an int64 exponent is taken as float32, exact for every exponent
    below 2^24 in magnitude (a larger one's power is 0, 1 or inf for any base but -1 and 1, refused)."""
    if c.dtype(x) != FLOAT32:
        raise Refuse(f"base is {c.dtype(x)}; eqsat raises float32 to a tensor power")
    if c.dtype(y) not in (FLOAT32, INT64):
        raise Refuse(f"exponent has dtype {c.dtype(y)}")
    if c.dtype(y) == INT64:
        if isinstance(y, np.ndarray):
            if np.abs(y).max(initial=0) >= 2**24:
                raise Refuse("an integer exponent of 2^24 or more is not exact in float32")
            y = y.astype(np.float32)
        else:
            y = c.add("cast", [y], dtype=FLOAT32)
    return c.add("power", c.same_rank(x, y))


_FOLD_COMPARE = {"eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


@imports(*_FOLD_COMPARE)
def _compare(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    op = spelled_op(n)
    x, y = c.env[n.input[0]], c.env[n.input[1]]
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.dtype == y.dtype:
        return [np.asarray(_FOLD_COMPARE[op](x, y))]
    return [c.add(op, c.same_rank(x, y))]


_FOLD_LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or}


@imports(*_FOLD_LOGICAL)
def _logical(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    op = spelled_op(n)
    x, y = c.env[n.input[0]], c.env[n.input[1]]
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.dtype == y.dtype == np.bool_:
        return [np.asarray(_FOLD_LOGICAL[op](x, y))]
    return [c.add(op, c.same_rank(x, y))]


@imports("where")
def _where(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    cond, x, y = (c.env[i] for i in n.input[:3])
    if isinstance(cond, np.ndarray) and isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        if cond.dtype == np.bool_ and x.dtype == y.dtype:
            return [np.where(cond, x, y)]
    return [c.add("where", c.same_rank(cond, x, y))]


def _cast(c: Ctx, x: Tensor, to: str) -> Tensor:
    if c.dtype(x) == to:
        return c.identity(x)
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            raise Refuse(f"cannot cast a constant of dtype {x.dtype}")
        # float -> int truncates, nonzero -> true, as ONNX.  NaN, inf and out-of-range floats have no defined
        # integer (ONNX leaves it open); they get x86's "integer indefinite" INT64_MIN, as onnxruntime and
        # torch give there: T5's bucket arithmetic casts log(0) and then discards it with a Where
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            out = x.astype(NP_DTYPES[to])
        if to == INT64 and x.dtype.kind == "f":
            out[~(np.abs(x) < 2.0**63)] = np.iinfo(np.int64).min
        return out
    return c.add("cast", [x], dtype=to)


@handles("Cast")
def _cast_handler(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"to", "saturate", "round_mode"})
    to = ONNX_DTYPES.get(int(a["to"]))
    x = c.env[n.input[0]]
    if int(a["to"]) == onnx.TensorProto.INT32:
        if isinstance(x, np.ndarray):  # a constant stays int32, exactly (as a weight: int64, losslessly)
            wide = _cast(c, x, INT64)
            assert isinstance(wide, np.ndarray)
            return [np.where(np.abs(wide) < 2**31, wide, np.iinfo(np.int32).min).astype(np.int32)]
        warnings.warn(INT32_NOTE.format(where=c.origin), stacklevel=2)
        to = INT64
    if int(a["to"]) in HALF_ONNX:  # to float32 here; the importer rounds the result to the half type
        to = FLOAT32
    if to is None:
        raise Refuse(f"cast to {onnx_dtype_name(int(a['to']))}: eqsat has float32, int64, bool, float16 and bfloat16")
    return [_cast(c, x, to)]


@handles("CastLike")
def _castlike(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"saturate", "round_mode"})
    to = c.dtype(c.env[n.input[1]])
    if to not in NP_DTYPES:
        raise Refuse(f"cast to {to}: eqsat has float32, int64, bool, float16 and bfloat16")
    return [_cast(c, c.env[n.input[0]], to)]


__all__ = ["IMPORTERS", "handler_for", "imports", "spelled_op", "spellings"]
