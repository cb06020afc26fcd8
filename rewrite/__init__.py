"""eqsat: equality-saturation superoptimizer for deep-learning graphs.

    >>> import rewrite
    >>> graph = rewrite.from_torch(module, (x,))          # doctest: +SKIP
    >>> result = rewrite.optimize(graph)                  # doctest: +SKIP
    >>> result.stats.verified, result.stats.cost_after  # doctest: +SKIP
    >>> rewrite.to_onnx(result.graph, "opt.onnx")         # doctest: +SKIP
    >>> rewrite.save(result.graph, "opt.eqsat"); rewrite.load("opt.eqsat")  # doctest: +SKIP

The public names are loaded on first use (PEP 562), so ``import rewrite`` (and
the ``eqsat`` command's start-up) costs nothing until one is asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    # the pipeline
    "optimize": "rewrite.pipeline",
    "compile": "rewrite.pipeline",
    "compile_ptx": "rewrite.pipeline",
    "OptimizeResult": "rewrite.pipeline",
    "verify": "rewrite.verification.numeric",
    "diff": "rewrite.ir.diff",
    "report": "rewrite.htmlreport",
    "load_rules": "rewrite.rulelang.loader",
    "from_torch": "rewrite.frontends",
    "from_onnx": "rewrite.frontends.onnx",
    "to_onnx": "rewrite.frontends.onnx",
    "save": "rewrite.frontends.onnx",
    "load": "rewrite.frontends.onnx",
    "to_torch": "rewrite.frontends",
    # the IR
    "Graph": "rewrite.ir.graph",
    "Node": "rewrite.ir.graph",
    "Value": "rewrite.ir.graph",
    "GraphBuilder": "rewrite.ir.builder",
    "OPS": "rewrite.ir.ops",
    "Group": "rewrite.ir.ops",
    "get_op": "rewrite.ir.ops",
    "Rule": "rewrite.rulelang.syntax",
    "Limits": "rewrite.egraph.limits",
    "StopReason": "rewrite.egraph.limits",
    # errors
    "EqsatError": "rewrite.ir.errors",
    "UsageError": "rewrite.ir.errors",
    "GraphError": "rewrite.ir.errors",
    "ShapeError": "rewrite.ir.errors",
    "FrontendError": "rewrite.ir.errors",
    "RuleError": "rewrite.ir.errors",
    "SaturationError": "rewrite.ir.errors",
    "ExtractionError": "rewrite.ir.errors",
    "LoweringError": "rewrite.ir.errors",
    "VerificationError": "rewrite.ir.errors",
}

__all__ = [
    "OPS",
    "EqsatError",
    "ExtractionError",
    "FrontendError",
    "Graph",
    "GraphBuilder",
    "GraphError",
    "Group",
    "Limits",
    "LoweringError",
    "Node",
    "OptimizeResult",
    "Rule",
    "RuleError",
    "SaturationError",
    "ShapeError",
    "StopReason",
    "UsageError",
    "Value",
    "VerificationError",
    "compile",
    "compile_ptx",
    "diff",
    "from_onnx",
    "from_torch",
    "get_op",
    "load",
    "load_rules",
    "optimize",
    "report",
    "save",
    "to_onnx",
    "to_torch",
    "verify",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rewrite' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)  # deferred: torch and egglog load on first use
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from rewrite.egraph.limits import Limits, StopReason
    from rewrite.frontends import from_torch, to_torch
    from rewrite.frontends.onnx import from_onnx, load, save, to_onnx
    from rewrite.htmlreport import report
    from rewrite.ir.builder import GraphBuilder
    from rewrite.ir.diff import diff
    from rewrite.ir.errors import (
        EqsatError,
        ExtractionError,
        FrontendError,
        GraphError,
        LoweringError,
        RuleError,
        SaturationError,
        ShapeError,
        UsageError,
        VerificationError,
    )
    from rewrite.ir.graph import Graph, Node, Value
    from rewrite.ir.ops import OPS, Group, get_op
    from rewrite.pipeline import OptimizeResult, compile, compile_ptx, optimize
    from rewrite.rulelang.loader import load_rules
    from rewrite.rulelang.syntax import Rule
    from rewrite.verification.numeric import verify
