"""``Kernel``: one compiled unit, its parameters in ABI order and a body; ``str()`` prints it.

    >>> from lower.ir import Buffer, For, IntImm, Store, Var
    >>> i, x, o = Var("i"), Buffer("x", (4,)), Buffer("out", (4,))
    >>> print(Kernel("double", [x, o], For(i, IntImm(4), Store(o, (i,), x[i] * 2.0))))
    kernel double(x: f32[4], out: f32[4]) {
      for i in 0..4 {
        out[i] = x[i] * 2.0
      }
    }

It sits above the printer (which only needs a name, parameters and a body), so
neither imports the other from inside a function.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lower.ir.nodes import Buffer, Stmt
from lower.ir.printer import format_kernel


@dataclass
class Kernel:
    """One compiled unit: parameters in ABI order and a body."""

    name: str
    params: list[Buffer]
    body: Stmt
    meta: dict = field(default_factory=dict)  # free-form notes (cost, group) for the runtime

    def with_body(self, body: Stmt) -> Kernel:
        return Kernel(self.name, list(self.params), body, dict(self.meta))

    def __str__(self) -> str:
        return format_kernel(self)
