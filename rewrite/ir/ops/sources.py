"""Source ops, which take no tensor inputs: graph inputs and weights, bound by name when a graph runs,
and constants, built from their attributes alone.

The constants are TASO's (SOSP'19) constant tensors, which its operator axioms 39-43 are about:

* ``fill``: every element ``value`` (TASO's const_one is ``fill`` with value 1);
* ``eye``: the ``n`` x ``n`` identity matrix (const_imm);
* ``identity_kernel``: a ``[C, C, kh, kw]`` conv kernel with a 1 at the centre tap of each
  ``(c, c)`` plane, so a stride-1 conv with padding ``(k-1)/2`` is the identity (const_iconv);
* ``avg_kernel``: a ``[C, C, kh, kw]`` conv kernel whose ``(c, c)`` planes hold ``1/(kh*kw)``, so a
  conv with it is average pooling that counts the zero padding (const_pool).  It is dense, not
  depthwise, as TASO's axiom 43 types it (average pooling of const_iconv): a dense kernel is
  what lets a pooling branch merge into a sibling conv on the same input (``add`` of two convs
  is one conv of the summed kernels), which is why TASO has it.

The identity kernel's sizes are odd: one centre tap.  Constants are weight-only (``OpDef.constant``), computed
once with ``ref`` wherever a graph is folded, compiled or exported.

    >>> constant_tensor("eye", {"n": 2}).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from rewrite.ir.dtypes import DTYPES, FLOAT32, DTypeRule
from rewrite.ir.ops.registry import (
    AttrKind,
    AttrSpec,
    Group,
    OpDef,
    register_op,
)
from rewrite.ir.shapes import (
    Attrs,
    ConvKernel,
    Filled,
    Source,
    Square,
)


# ---------------------------------------------------------------- inputs and weights
def _no_ref(ins: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    raise RuntimeError("source ops are bound by Graph.run, not computed")


for _name in ("input", "weight"):
    register_op(
        OpDef(
            _name,
            Group.SOURCE,
            0,
            (
                AttrSpec("name", AttrKind.STR),
                AttrSpec("shape", AttrKind.INTS),
                AttrSpec("dtype", AttrKind.STR, FLOAT32, choices=DTYPES),
            ),
            Source(),
            _no_ref,
            doc=f"a graph {_name}, bound by name",
            dtype_rule=DTypeRule((), "attr"),
        )
    )


# ---------------------------------------------------------------- constants (float32)
_CONST = DTypeRule((), FLOAT32)
_KERNEL_ATTRS = (AttrSpec("channels", AttrKind.INT), AttrSpec("kernel", AttrKind.INTS))


def _diagonal_planes(a: Attrs, plane: torch.Tensor) -> torch.Tensor:
    """``[C, C, kh, kw]`` with ``plane`` on every ``(c, c)`` and zeros elsewhere."""
    c = a["channels"]
    w = torch.zeros((c, c, *plane.shape), dtype=plane.dtype)
    idx = torch.arange(c)
    w[idx, idx] = plane
    return w


def _identity_plane(a: Attrs, dtype: torch.dtype) -> torch.Tensor:
    kh, kw = a["kernel"]
    plane = torch.zeros((kh, kw), dtype=dtype)
    plane[kh // 2, kw // 2] = 1.0
    return _diagonal_planes(a, plane)


_BUILD: dict[str, Callable[[Attrs, torch.dtype], torch.Tensor]] = {
    "fill": lambda a, dt: torch.full(tuple(a["shape"]), float(a["value"]), dtype=dt),
    "eye": lambda a, dt: torch.eye(a["n"], dtype=dt),
    "identity_kernel": _identity_plane,
    "avg_kernel": lambda a, dt: _diagonal_planes(
        a, torch.full(tuple(a["kernel"]), 1.0 / math.prod(a["kernel"]), dtype=dt)
    ),
}


def constant_tensor(op: str, attrs: Attrs, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The tensor of constant ``op`` built in ``dtype``: float32 (its ``ref``), or float64 for a
    high-precision reference run (``Graph.run``), where a float32 1/9 would be off by 3e-8."""
    return _BUILD[op](attrs, dtype)


def _ref(op: str) -> Callable[[list[torch.Tensor], Attrs], list[torch.Tensor]]:
    return lambda ins, a: [constant_tensor(op, a)]


register_op(
    OpDef(
        "fill",
        Group.SOURCE,
        0,
        (AttrSpec("shape", AttrKind.INTS), AttrSpec("value", AttrKind.FLOAT)),
        Filled(),
        _ref("fill"),
        doc="a tensor of the given shape, every element value (TASO const_one: value 1)",
        dtype_rule=_CONST,
    )
)
register_op(
    OpDef(
        "eye",
        Group.SOURCE,
        0,
        (AttrSpec("n", AttrKind.INT),),
        Square(),
        _ref("eye"),
        doc="the n x n identity matrix (TASO const_imm)",
        dtype_rule=_CONST,
    )
)
register_op(
    OpDef(
        "identity_kernel",
        Group.SOURCE,
        0,
        _KERNEL_ATTRS,
        ConvKernel(odd=True),
        _ref("identity_kernel"),
        doc="[C, C, kh, kw] conv kernel, 1 at the centre of each (c, c) plane (TASO const_iconv)",
        dtype_rule=_CONST,
    )
)
register_op(
    OpDef(
        "avg_kernel",
        Group.SOURCE,
        0,
        _KERNEL_ATTRS,
        ConvKernel(),
        _ref("avg_kernel"),
        doc="[C, C, kh, kw] conv kernel, 1/(kh*kw) on each (c, c) plane (TASO const_pool)",
        dtype_rule=_CONST,
    )
)
