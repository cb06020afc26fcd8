"""Lowering: graph -> fused kernels in a loop IR -> LLVM -> a callable.

    >>> from lower import compile_graph
    >>> cg = compile_graph(graph)          # target="llvm": the host CPU  # doctest: +SKIP
    >>> outs = cg({"x": x})                # like graph.run                # doctest: +SKIP
    >>> print(cg.plan); cg.kernels; cg.compile_seconds                     # doctest: +SKIP

Errors: ``LoweringError`` (names the node it cannot lower), ``ScheduleError``
(an illegal or inapplicable schedule step, a ``LoweringError``).
``parse_target("llvm", threads=2)`` is the ``Target`` a compile uses.
"""

from lower.runtime import CompiledGraph, compile_graph
from lower.target import parse_target
from rewrite.ir.errors import LoweringError, ScheduleError
from rewrite.ir.target import Target

__all__ = ["CompiledGraph", "LoweringError", "ScheduleError", "Target", "compile_graph", "parse_target"]
