"""What a cost model is, and the one function that prices a whole graph with it.

A cost model is a plain function of one op configuration:
``model(op, attrs, in_shapes, dtype="float32") -> seconds``.  Extraction sees
only such a function; ``graph_cost`` sums it over the nodes a deployment runs.

    >>> from rewrite.ir.builder import GraphBuilder
    >>> b = GraphBuilder(); x = b.input("x", (4, 4))
    >>> graph_cost(b.build([b.relu(x)]), lambda op, attrs, shapes, dtype="float32": 1.0)
    1.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from rewrite.ir.graph import Graph
from rewrite.ir.ops import Shape


class CostModel(Protocol):
    def __call__(
        self, op: str, attrs: Mapping[str, object], in_shapes: Sequence[Shape], dtype: str = "float32"
    ) -> float: ...


def graph_cost(graph: Graph, model: CostModel) -> float:
    """Modelled seconds of a graph's run-time nodes; weight-only nodes are precomputed once, so free."""
    const = graph.weight_only()
    return sum(
        model(n.op, n.attrs, [graph.shape_of(v) for v in n.inputs]) for n in graph.compute_nodes() if n.id not in const
    )
