"""Elementwise ops: one expression per op (``UNARY``, ``BINARY``), fused into neighbours; ``ACTIVATIONS``, a
fused contraction's ``act``, is derived from ``UNARY`` and the registry's ``ACTS``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from lower.ir import (
    Buffer,
    Expr,
    FloatImm,
    Select,
    Stage,
    Stmt,
    Store,
    call,
    const,
    emax,
    emin,
    eq,
    gt,
    land,
    loops,
    lt,
    ne,
)
from lower.ops_to_loops.core import LOWERINGS, LowerCtx, bcast_index, loop_vars, lowering
from rewrite.ir.errors import LoweringError
from rewrite.ir.graph import Node
from rewrite.ir.ops import ACTS
from rewrite.ir.ops.elementwise import SELU_ALPHA, SELU_SCALE


# ============================================================== elementwise
def _gelu(x: Expr) -> Expr:
    return call("gelu_tanh", x)


UNARY: dict[str, Callable[[Expr, dict], Expr]] = {
    "relu": lambda x, a: emax(x, 0.0),
    "sigmoid": lambda x, a: call("sigmoid", x),
    "tanh": lambda x, a: call("tanh", x),
    "gelu": lambda x, a: _gelu(x),
    "exp": lambda x, a: call("exp", x),
    "identity": lambda x, a: x,
    "smul": lambda x, a: x * const(a["scalar"]),
    "rsqrt": lambda x, a: call("rsqrt", x + const(a.get("eps", 0.0))),
}
BINARY: dict[str, Callable[[Expr, Expr], Expr]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y,
    "maximum": emax,
    "minimum": emin,
    "atan2": lambda y, x: call("atan2", y, x),
    "power": lambda x, y: call("power", x, y),
}


def _mod(x: Expr, y: Expr, a: dict) -> Expr:
    """x mod y: ``floor`` (torch.remainder, Python's %: the divisor's sign) or ``trunc`` (torch.fmod, C's: the
    dividend's).  float32 from C's exact fmodf, the floor form one divisor added where the signs differ, as
    torch computes it; int64 by ``lower.ir.INT_FUNCS``."""
    if x.dtype == "i64":
        return call("floormod" if a["mode"] == "floor" else "truncmod", x, y)
    r = call("fmod", x, y)
    if a["mode"] == "trunc":
        return r
    zero = const(0.0)
    return Select(land(ne(r, zero), ne(lt(r, zero), lt(y, zero))), r + y, r)


# binary ops with attributes: (x, y, attrs) -> value
BINARY_ATTRS: dict[str, Callable[[Expr, Expr, dict], Expr]] = {
    "mod": _mod,
    "idiv": lambda x, y, a: call("floordiv" if a["mode"] == "floor" else "truncdiv", x, y),
}


def elementwise_expr(op: str, args: Sequence[Expr], attrs: dict) -> Expr:
    if op in UNARY:
        return UNARY[op](args[0], attrs)
    if op in BINARY:
        return BINARY[op](args[0], args[1])
    if op in BINARY_ATTRS:
        return BINARY_ATTRS[op](args[0], args[1], attrs)
    raise LoweringError(f"'{op}' is not an elementwise op")


@lowering(*UNARY, *BINARY, *BINARY_ATTRS)
def lower_elementwise(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    out = outs[0]
    vs = loop_vars(ctx, out.shape)
    args = [x[bcast_index(x.shape, out.shape, vs)] for x in ins]
    val = elementwise_expr(node.op, args, dict(node.attrs))
    return Stage(ctx.tag, loops(list(zip(vs, out.shape, strict=False)), Store(out, tuple(vs), val)))


def register_unary(op: str, expr: Callable[[Expr, dict], Expr]) -> None:
    """Lower a unary elementwise op added with ``register_op``: ``expr(x, attrs)`` is its value.

    One entry serves its own kernel and fusion (epilogues and prologues inline it).
    """
    if op in LOWERINGS:
        raise LoweringError(f"op '{op}' already has a lowering")
    UNARY[op] = expr
    LOWERINGS[op] = lower_elementwise


def unregister_lowering(op: str) -> None:
    """Remove a lowering added at run time (tests clean up their toy ops)."""
    UNARY.pop(op, None)
    LOWERINGS.pop(op, None)


# ============================================================== activations, reductions, norms, resize
def _hardsig(x: Expr) -> Expr:
    return emin(emax(x + const(3.0), 0.0), 6.0) / const(6.0)


def _erfc_pos(z: Expr) -> Expr:
    """erfc(z) for z >= 0 with relative error below 1.2e-7 (the Chebyshev fit of Numerical Recipes'
    ``erfcc``), so GELU keeps its relative accuracy in the negative tail down to z = 9.3 (erfc 1e-39): its
    exponential is ``exp88``, whose argument stops at -88 there, and past it erfc stays near 1e-39 instead of
    falling through the denormals (exp's two-factor scaling for those made a GELU over 96x112x112 floats 1.18x
    slower: 1053 against 891 us, 1 thread)."""
    t = const(1.0) / (const(1.0) + const(0.5) * z)
    coef = (
        -1.26551223,
        1.00002368,
        0.37409196,
        0.09678418,
        -0.18628806,
        0.27886807,
        -1.13520398,
        1.48851587,
        -0.82215223,
        0.17087277,
    )
    # Estrin's scheme, not Horner's: the same polynomial in a dependency chain of 5 multiply-adds instead of 9
    # (the GELU's loop is latency bound: one vector an iteration)
    t2 = t * t
    t4 = t2 * t2
    pairs = [const(coef[i]) + t * const(coef[i + 1]) for i in range(0, len(coef), 2)]
    poly = (pairs[0] + t2 * pairs[1]) + t4 * (pairs[2] + t2 * pairs[3]) + (t4 * t4) * pairs[4]
    return t * call("exp88", poly - z * z)


def _gelu_erf(x: Expr) -> Expr:
    """0.5 x (1 + erf(x / sqrt 2)) = x (1 - erfc(z) / 2) for x >= 0, x erfc(z) / 2 below (z = |x| / sqrt 2)."""
    c = _erfc_pos(call("abs", x) * const(1.0 / math.sqrt(2.0)))
    half = const(0.5)
    return Select(lt(x, const(0.0)), x * (half * c), x * (const(1.0) - half * c))


# erf's Maclaurin series, 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1)), to n = 6: below |x| = 0.5 the first
# term left out is under 1e-9 of the sum, and the series keeps erf's relative accuracy at tiny x where
# 1 - erfc(x) would round to 0
_ERF_SERIES = tuple(2.0 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(7))


def _erf(x: Expr) -> Expr:
    """erf(x): the series below |x| = 0.5, 1 - erfc(|x|) with x's sign above (relative error ~1.2e-7)."""
    z = call("abs", x)
    x2 = x * x
    poly: Expr = const(_ERF_SERIES[-1])
    for c in reversed(_ERF_SERIES[:-1]):
        poly = const(c) + x2 * poly
    far = const(1.0) - _erfc_pos(z)
    return Select(lt(z, const(0.5)), x * poly, Select(lt(x, const(0.0)), -far, far))


def _softplus(x: Expr) -> Expr:
    """log(1 + e^x), x itself above 20 (torch's threshold)."""
    return Select(gt(x, const(20.0)), x, call("log", const(1.0) + call("exp", x)))


def _pow(x: Expr, e: float) -> Expr:
    """Small integer exponents multiply (as torch's pow does for 2 and 3); 0.5 and -0.5 are roots."""
    if e == 0.5:
        return call("sqrt", x)
    if e == -0.5:
        return call("rsqrt", x)
    if e == int(e) and 0 <= e <= 4:
        out: Expr = const(1.0)
        for _ in range(int(e)):
            out = x if isinstance(out, FloatImm) else out * x
        return out
    if e == int(e) and -4 <= e < 0:
        return const(1.0) / _pow(x, -e)
    # libm's powf: exp(e * log(x)) would be NaN for a negative base with an integer exponent (torch: (-2)^5 =
    # -32) and for -inf with a fractional one (torch, C: +inf above 0, +0 below)
    p = call("power", x, const(e))
    if e == int(e):
        return p
    # a fractional constant exponent: LLVM may expand pow(x, 1.5) into x * sqrt(x), NaN at -inf and, for -1.5,
    # at 0 and inf; C's values there (0 and ±inf: +0 / +inf by the exponent's sign) are selected explicitly
    at_inf, at_zero = (math.inf, 0.0) if e > 0 else (0.0, math.inf)
    return Select(eq(call("abs", x), const(math.inf)), const(at_inf), Select(eq(x, const(0.0)), const(at_zero), p))


_MORE_UNARY: dict[str, Callable[[Expr, dict], Expr]] = {
    # x * clamp(x + 3, 0, 6) / 6 in torch's order: x times the hard sigmoid overflows at the top of the range
    # where torch's product does (x = 3e38: inf), and rounds as torch's does
    "hardswish": lambda x, a: x * emin(emax(x + const(3.0), 0.0), 6.0) / const(6.0),
    "hardsigmoid": lambda x, a: _hardsig(x),
    # x * sigmoid(x): the fast sigmoid is 0 below -88, so -0 there and NaN at -inf, as torch's x / (1 + e^-x)
    # (which itself ran 13% slower: an exp and a divide of its own, 96x112x112, 1 thread)
    "silu": lambda x, a: x * call("sigmoid", x),
    "mish": lambda x, a: x * call("tanh", _softplus(x)),
    "gelu_erf": lambda x, a: _gelu_erf(x),
    "erf": lambda x, a: _erf(x),
    "floor": lambda x, a: call("floor", x),
    "ceil": lambda x, a: call("ceil", x),
    "round": lambda x, a: call("round", x),  # half to even, as torch.round and ONNX Round
    "sign": lambda x, a: Select(gt(x, const(0.0)), const(1.0), Select(lt(x, const(0.0)), const(-1.0), const(0.0))),
    "log": lambda x, a: call("log", x),
    "log1p": lambda x, a: call("log1p", x),
    "expm1": lambda x, a: call("expm1", x),
    "sqrt": lambda x, a: call("sqrt", x),
    "neg": lambda x, a: x * const(-1.0),  # exact, and keeps the sign of zero
    "abs": lambda x, a: call("abs", x),
    "reciprocal": lambda x, a: const(1.0) / x,
    "sin": lambda x, a: call("sin", x),
    "cos": lambda x, a: call("cos", x),
    "tan": lambda x, a: call("tan", x),
    "asin": lambda x, a: call("asin", x),
    "acos": lambda x, a: call("acos", x),
    "atan": lambda x, a: call("atan", x),
    "sinh": lambda x, a: call("sinh", x),
    "cosh": lambda x, a: call("cosh", x),
    "asinh": lambda x, a: call("asinh", x),
    "acosh": lambda x, a: call("acosh", x),
    "atanh": lambda x, a: call("atanh", x),
    # scale * x above 0, scale * alpha * (exp(x) - 1) below, as torch's elu kernel (expm1: exact near 0)
    "selu": lambda x, a: Select(
        gt(x, const(0.0)), x * const(SELU_SCALE), call("expm1", x) * const(SELU_ALPHA * SELU_SCALE)
    ),
    "clamp": lambda x, a: emin(emax(x, const(a["min"])), const(a["max"])),
    "pow": lambda x, a: _pow(x, a["exponent"]),
}
for _op, _fn in _MORE_UNARY.items():
    register_unary(_op, _fn)


# a fused contraction's ``act`` (rewrite.ir.ops.ACTS names the unary op it applies): that op's expression
def _activation(op: str) -> Callable[[Expr], Expr]:
    return lambda x: UNARY[op](x, {})


ACTIVATIONS: dict[str, Callable[[Expr], Expr]] = {act: _activation(op) for act, op in ACTS.items()}
