"""Lower one graph node to loop IR: one function per op group, looked up by op name.

Each lowering gets the node, its input and output buffers and a ``LowerCtx``
and returns a statement made of ``Stage``s.  The result is a plain, correct
loop nest (no schedule); ``lower.schedule`` makes it fast.

Contractions (matmul, linear, conv2d) all lower to one *batch-GEMM form* so
that one schedule recipe serves them all::

    // stage conv3.init
    for n, g, i, j:       C(n, g, i, j) = init
    // stage conv3
    for n, g, i, j, k:    C(...) = C(...) + A(n, g, i, k) * B(n, g, k, j)

(i: output rows, j: output columns, k: reduction); ``LowerCtx.gemm`` records
which loops play which role.  conv2d is an implicit im2col: ``B`` indexes the
input through ``k -> (c, kh, kw)`` and ``j -> (oh, ow)`` with bounds checks
for padding.

Anything that cannot be lowered raises ``LoweringError`` naming the node.
"""

from __future__ import annotations

from lower.ir import LOOP_DTYPE

# each module registers its ops' lowerings in LOWERINGS when imported
from lower.ops_to_loops import (  # noqa: F401
    blocked,
    contraction,
    elementwise,
    indexing,
    layout,
    norm,
    pool,
    quantized,
    reduce,
    winograd,
)
from lower.ops_to_loops.contraction import direct_conv
from lower.ops_to_loops.core import (
    LOWERINGS,
    GemmInfo,
    LowerCtx,
    Namer,
    check_coverage,
    lower_node,
    lowering,
    stage_tag,
)
from lower.ops_to_loops.elementwise import ACTIVATIONS, BINARY, UNARY, register_unary, unregister_lowering

__all__ = [
    "ACTIVATIONS",
    "BINARY",
    "LOOP_DTYPE",
    "LOWERINGS",
    "UNARY",
    "GemmInfo",
    "LowerCtx",
    "Namer",
    "check_coverage",
    "direct_conv",
    "lower_node",
    "lowering",
    "register_unary",
    "stage_tag",
    "unregister_lowering",
]
