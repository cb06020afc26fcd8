"""eqsat: equality-saturation superoptimizer for deep-learning graphs."""

from rewrite.builder import GraphBuilder
from rewrite.graph import Graph, GraphError, Node, Value
from rewrite.ops import OPS, Group, ShapeError, get_op

__all__ = ["Graph", "GraphBuilder", "GraphError", "Node", "OPS", "Group", "ShapeError", "Value", "get_op"]
