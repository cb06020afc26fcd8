"""Element types of graph values, and each op's dtype rule.

Three dtypes compute: ``float32`` (all arithmetic), ``int64`` (indices: token ids,
positions) and ``bool`` (masks).  Two more are stored: ``float16`` and ``bfloat16``
values are what ``cast`` makes of float32 ones (rounded to nearest even, as torch
and IEEE round) and what layout ops move, and a ``cast`` back to float32 (exact) is
how arithmetic reads them: a half-precision model computes in float32 between the
roundings its dtype puts on every tensor (``HALF``).  Three integer dtypes are
stored the same way (``STORED_INT``): ``uint8`` and ``int8`` hold quantized tensors,
``int32`` the exact sums ``matmul_integer`` makes of them; ``cast`` makes them
(saturating, truncating toward zero, NaN to 0) and reads them back exactly, layout
ops move them.  Every value has exactly one dtype; an op's
:class:`DTypeRule` says which input dtypes it takes and what it produces, and
``Graph.add`` checks it, so a float op never reads an int value and nothing is
ever converted implicitly (``cast`` is the one explicit conversion).  Other
torch dtypes (float64, int32, ...) are refused at import.

A rule's entries are a concrete dtype or the type variable ``"T"`` (every
``T`` of one node is the same dtype, one of ``t_choices``); ``out`` may also
be ``"attr"``: the node's ``dtype`` attribute (sources and ``cast``).

    >>> COMPARE.infer(["int64", "int64"], {})
    'bool'
    >>> FLOAT.infer(["float32", "float32"], {})
    'float32'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

FLOAT32, INT64, BOOL = "float32", "int64", "bool"
FLOAT16, BFLOAT16 = "float16", "bfloat16"
HALF = (FLOAT16, BFLOAT16)  # storage dtypes: rounded to by ``cast``, computed on as float32
UINT8, INT8, INT32 = "uint8", "int8", "int32"
QUANTIZED = (UINT8, INT8)  # a quantized tensor's integers
STORED_INT = (UINT8, INT8, INT32)  # storage dtypes: made by a saturating ``cast``, read exactly by one
# what a tensor of a model (torch, a weight) may be at import: int32 tensors are computed as int64
# (INT32_NOTE), and the quantized integers come only from quantization ops (QDQ) and the builder
IMPORTED = (FLOAT32, INT64, BOOL, FLOAT16, BFLOAT16)
DTYPES = (*IMPORTED, *STORED_INT)
TORCH_DTYPE: dict[str, torch.dtype] = {
    FLOAT32: torch.float32,
    INT64: torch.int64,
    BOOL: torch.bool,
    FLOAT16: torch.float16,
    BFLOAT16: torch.bfloat16,
    UINT8: torch.uint8,
    INT8: torch.int8,
    INT32: torch.int32,
}
ITEMSIZE = {FLOAT32: 4, INT64: 8, BOOL: 1, FLOAT16: 2, BFLOAT16: 2, UINT8: 1, INT8: 1, INT32: 4}
# the range of each stored integer dtype: where a cast to it saturates
INT_RANGE = {UINT8: (0, 255), INT8: (-128, 127), INT32: (-(2**31), 2**31 - 1)}

__all__ = [
    "ANY_SAME",
    "BFLOAT16",
    "BOOL",
    "COMPARE",
    "DTYPES",
    "FLOAT",
    "FLOAT16",
    "FLOAT32",
    "HALF",
    "IMPORTED",
    "INT8",
    "INT32",
    "INT32_NOTE",
    "INT64",
    "INT_RANGE",
    "ITEMSIZE",
    "NUMERIC",
    "QUANTIZED",
    "STORED_INT",
    "TORCH_DTYPE",
    "UINT8",
    "DTypeError",
    "DTypeRule",
    "dtype_name",
    "exact_reciprocal",
]


class DTypeError(ValueError):
    """An op given inputs of dtypes it does not take (``Graph.add`` turns it into a ``GraphError``)."""


def exact_reciprocal(v: float) -> float | None:
    """1 / v when ``v`` is a power of two whose reciprocal is a normal float32, else None.  Then
    x / v == x * (1 / v) for every float32 x (both are the correctly rounded same real), so a division
    by it may import as a scale (``smul``), which the rules move and fuse."""
    if v == 0 or v != v or v in (float("inf"), float("-inf")):
        return None
    m, e = math.frexp(abs(v))
    return 1.0 / v if m == 0.5 and -125 <= e - 1 <= 126 else None


def dtype_name(t: torch.dtype, among: tuple[str, ...] = IMPORTED) -> str | None:
    """The eqsat dtype of a torch dtype, or None when eqsat has no such dtype ``among`` those asked (never
    converted): by default what a model's tensors may be (``IMPORTED``), ``DTYPES`` for every dtype."""
    for k in among:
        if TORCH_DTYPE[k] == t:
            return k
    return None


def _stored(d: str) -> str:
    """The hint a dtype error adds for a stored (half or integer) value read by arithmetic."""
    return f" ({d} values are stored, not computed on: cast to float32 first)" if d in (*HALF, *STORED_INT) else ""


@dataclass(frozen=True)
class DTypeRule:
    ins: tuple[str, ...]  # per input; the last entry repeats for variadic ops
    out: str  # a dtype, "T" or "attr"
    t_choices: tuple[str, ...] = DTYPES

    def infer(self, in_dtypes: Sequence[str], attrs: Mapping[str, Any]) -> str:
        t: str | None = None
        for k, d in enumerate(in_dtypes):
            want = self.ins[min(k, len(self.ins) - 1)] if self.ins else None
            if want == "T":
                if t is None:
                    if d not in self.t_choices:
                        raise DTypeError(f"input {k} is {d}; it takes {' or '.join(self.t_choices)}{_stored(d)}")
                    t = d
                elif d != t:
                    raise DTypeError(f"input {k} is {d} but an earlier operand is {t}; they must agree")
            elif want is not None and d != want:
                raise DTypeError(f"input {k} is {d}; it takes {want}{_stored(d)}")
        if self.out == "attr":
            return str(attrs["dtype"])
        if self.out == "T":
            assert t is not None, "a T output needs a T input"
            return t
        return self.out


FLOAT = DTypeRule(("float32",), FLOAT32)  # the default: float in, float out
ANY_SAME = DTypeRule(("T",), "T")  # layout ops: any dtype, kept
COMPARE = DTypeRule(("T", "T"), BOOL, (FLOAT32, INT64))
# int32 has no dtype of its own: a run-time int32 value (RoBERTa's and CLIP's position arithmetic
# casts to it) is computed as int64, and the importer says so once
INT32_NOTE = (
    "eqsat computes int32 values as int64 (at {where}): equal while they stay within int32's range; "
    "an int32 overflow would not wrap"
)
# add, sub, mul: float32, or int64 (wrapping, as torch's): position ids computed from input ids
NUMERIC = DTypeRule(("T", "T"), "T", (FLOAT32, INT64))
INTEGER = DTypeRule(("int64", "int64"), INT64)  # integer division
SAME_NUMERIC = DTypeRule(("T",), "T", (FLOAT32, INT64))  # reductions that stay exact on int64: sum, max, min
