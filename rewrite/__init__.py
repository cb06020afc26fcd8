"""eqsat: equality-saturation superoptimizer for deep-learning graphs.

>>> import rewrite
>>> graph = rewrite.from_torch(module, (x,))          # doctest: +SKIP
>>> result = rewrite.optimize(graph)                  # doctest: +SKIP
>>> result.stats["verified"], result.stats["cost_after"]  # doctest: +SKIP
"""

from rewrite.api import OptimizeResult, VerificationError, compile, load_rules, optimize, verify
from rewrite.builder import GraphBuilder
from rewrite.egraph.saturate import Limits, SaturationError, StopReason
from rewrite.frontends import from_torch
from rewrite.graph import Graph, GraphError, Node, Value
from rewrite.ops import OPS, Group, ShapeError, get_op
from rewrite.rulelang.syntax import Rule, RuleError

__all__ = [
    "Graph",
    "GraphBuilder",
    "GraphError",
    "Group",
    "Limits",
    "Node",
    "OPS",
    "OptimizeResult",
    "Rule",
    "RuleError",
    "SaturationError",
    "ShapeError",
    "StopReason",
    "Value",
    "VerificationError",
    "compile",
    "from_torch",
    "get_op",
    "load_rules",
    "optimize",
    "verify",
]
