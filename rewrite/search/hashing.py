"""Structural keys and hashes of graphs, independent of node numbering.

A node's *key* is what it computes from its input values: op, attributes and
inputs (sorted for commutative ops, so ``add(a, b)`` and ``add(b, a)`` are one
node).  Keys of existing nodes let a rewrite reuse a node instead of building a
duplicate.  A node's *structural hash* replaces its inputs' node ids by their
structural hashes (a Merkle hash), so it does not depend on numbering; a graph's
hash combines the sorted multiset of its live nodes' hashes (which sees how
much is shared) with its outputs' hashes (which sees their order).

    >>> from rewrite.ir.builder import GraphBuilder
    >>> def g(swap):
    ...     b = GraphBuilder(); x = b.input("x", (2, 2)); y = b.input("y", (2, 2))
    ...     return b.build([b.relu(b.add(y, x) if swap else b.add(x, y))])
    >>> graph_hash(g(False)) == graph_hash(g(True))
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import OPS

NodeKey = tuple[Any, ...]


def attrs_key(attrs: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Attributes as a hashable tuple (values are ints, floats, strings or int tuples)."""
    return tuple(sorted(attrs.items()))


def node_key(op: str, attrs: Mapping[str, Any], inputs: Sequence[Value]) -> NodeKey:
    """What a node computes, for reusing an existing node: ``(op, attrs, inputs)``.

    >>> node_key("add", {}, [Value(2), Value(1)]) == node_key("add", {}, [Value(1), Value(2)])
    True
    """
    ins = tuple(sorted(inputs)) if OPS[op].commutative else tuple(inputs)
    return (op, attrs_key(attrs), ins)


def node_hashes(graph: Graph) -> dict[int, int]:
    """Structural (Merkle) hash of every node, in the graph's topological order."""
    h: dict[int, int] = {}
    for n in graph:
        ins = [(h[v.node], v.index) for v in n.inputs]
        if OPS[n.op].commutative:
            ins.sort()
        h[n.id] = hash((n.op, attrs_key(n.attrs), tuple(ins)))
    return h


def graph_hash(graph: Graph) -> int:
    """A hash of the run-time graph: equal for graphs equal up to numbering and commutative operand order.

    Only live nodes (and every input, which graphs keep) count, so dead nodes do not
    tell two graphs apart.
    """
    h = node_hashes(graph)
    live = graph.live()
    nodes = sorted(v for i, v in h.items() if i in live or graph.nodes[i].op == "input")
    return hash((tuple(nodes), tuple((h[v.node], v.index) for v in graph.outputs)))


__all__ = ["NodeKey", "attrs_key", "graph_hash", "node_hashes", "node_key"]
