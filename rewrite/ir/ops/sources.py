"""Source ops: graph inputs and weights, bound by name when a graph runs."""

from __future__ import annotations

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
    Source,
)


# ---------------------------------------------------------------- sources
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
