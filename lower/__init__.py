"""Lowering: graph -> fused kernels in a loop IR -> LLVM -> a callable.

    >>> from lower import compile_graph
    >>> cg = compile_graph(graph)          # target="llvm": the host CPU
    >>> outs = cg({"x": x})                # like graph.run
    >>> print(cg.plan); cg.kernels; cg.compile_seconds

Errors: ``LoweringError`` (names the node it cannot lower), ``ScheduleError``
(an illegal or inapplicable schedule step, a ``LoweringError``).
"""

from lower.loop_ir import LoweringError
from lower.runtime import CompiledGraph, compile_graph
from lower.schedule import ScheduleError

__all__ = ["CompiledGraph", "LoweringError", "ScheduleError", "compile_graph"]
