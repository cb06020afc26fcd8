"""How the CUDA walker spells things: C types, operators, math functions and their helpers.

>>> f32_literal(0.5), f32_literal(float("-inf"))
('0.5f', '__int_as_float(0xff800000)')
>>> MATH["exp"]
('expf', ())
"""

from __future__ import annotations

import math

TYPES = {"f32": "float", "i64": "long long", "bool": "bool"}

F32_BINOPS = {"+": "+", "-": "-", "*": "*", "/": "/"}
I64_BINOPS = {"+": "+", "-": "-", "*": "*"}
CMP_OPS = {"<": "<", "<=": "<=", "==": "==", "!=": "!=", ">": ">", ">=": ">="}
BOOL_OPS = {"and": "&&", "or": "||"}
F32_MINMAX = {"min": "fminf", "max": "fmaxf"}
I64_MINMAX = {"min": "eqsat_min_i64", "max": "eqsat_max_i64"}

# math function -> (CUDA spelling, helpers it needs).  Accurate (not __expf-style intrinsic) versions:
# the CPU backend's polynomials are within a few ulp, and results are compared across backends.
MATH: dict[str, tuple[str, tuple[str, ...]]] = {
    "exp": ("expf", ()),
    "tanh": ("tanhf", ()),
    "sqrt": ("sqrtf", ()),
    "rsqrt": ("rsqrtf", ()),
    "abs": ("fabsf", ()),
    "log": ("logf", ()),
    "sigmoid": ("eqsat_sigmoid", ("sigmoid",)),
    "gelu_tanh": ("eqsat_gelu_tanh", ("gelu_tanh",)),
}

HELPERS: dict[str, str] = {
    "minmax_i64": (
        "__device__ __forceinline__ long long eqsat_min_i64(long long a, long long b) { return a < b ? a : b; }\n"
        "__device__ __forceinline__ long long eqsat_max_i64(long long a, long long b) { return a > b ? a : b; }"
    ),
    "floordiv": (
        "__device__ __forceinline__ long long eqsat_floordiv(long long a, long long b) {\n"
        "  long long q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n"
        "__device__ __forceinline__ long long eqsat_floormod(long long a, long long b) {\n"
        "  long long r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}"
    ),
    "sigmoid": "__device__ __forceinline__ float eqsat_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }",
    "gelu_tanh": (
        "__device__ __forceinline__ float eqsat_gelu_tanh(float x) {\n"
        f"  return 0.5f * x * (1.0f + tanhf({math.sqrt(2.0 / math.pi)!r}f * (x + 0.044715f * x * x * x)));\n}}"
    ),
}

MAX_UNROLL = 64  # ``unrolled`` loops up to this extent get ``#pragma unroll``


def f32_literal(v: float) -> str:
    """A float constant as CUDA C: exact decimal with ``f``, bit patterns for infinities and NaN."""
    if math.isnan(v):
        return "__int_as_float(0x7fc00000)"
    if math.isinf(v):
        return "__int_as_float(0x7f800000)" if v > 0 else "__int_as_float(0xff800000)"
    text = repr(float(v))
    if "e" not in text and "." not in text:
        text += ".0"
    return text + "f"


def ident(name: str) -> str:
    """A C identifier for an IR name (``i0.i1.o`` -> ``i0_i1_o``)."""
    out = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    return out if out and not out[0].isdigit() else "_" + out


__all__ = [
    "BOOL_OPS",
    "CMP_OPS",
    "F32_BINOPS",
    "F32_MINMAX",
    "HELPERS",
    "I64_BINOPS",
    "I64_MINMAX",
    "MATH",
    "MAX_UNROLL",
    "TYPES",
    "f32_literal",
    "ident",
]
