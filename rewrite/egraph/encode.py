"""Graph IR → egglog text: one ``(let $vN_i ...)`` per node output.

Loading a graph as flat lets is linear in its size (one nested expression is
not).  ``Encoding.roots`` names the let of each graph output, so extraction
can find the output e-classes in the serialized e-graph.

    >>> from rewrite.ir.builder import GraphBuilder
    >>> b = GraphBuilder(); x = b.input("x", (2, 3))
    >>> print(encode(b.build([b.relu(x)])).program)
    (let $v0_0 (Input "x" (vec-of 2 3)))
    (let $v1_0 (Relu $v0_0))
"""

from __future__ import annotations

from dataclasses import dataclass

from rewrite.egraph.prelude import egg_name, literal
from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import OPS


def let_name(v: Value) -> str:
    return f"$v{v.node}_{v.index}"


@dataclass
class Encoding:
    program: str
    roots: list[str]  # let name per graph output
    lets: dict[Value, str]


def encode(graph: Graph) -> Encoding:
    lines: list[str] = []
    lets: dict[Value, str] = {}
    for n in graph:
        opdef = OPS[n.op]
        args = [lets[v] for v in n.inputs]
        if n.op == "split":
            start = 0
            for i, size in enumerate(n.attrs["sizes"]):
                v = Value(n.id, i)
                lets[v] = let_name(v)
                lines.append(f"(let {lets[v]} (Slice {n.attrs['axis']} {start} {start + size} {args[0]}))")
                start += size
            continue
        attrs = [literal(a.kind, n.attrs[a.name]) for a in opdef.attrs]
        name = egg_name(n.op)
        if n.op == "concat" and len(args) > 1:
            term = args[0]
            for a in args[1:]:  # n-ary concat nests to the left
                term = f"({name} {attrs[0]} {term} {a})"
        elif n.op == "concat":
            term = args[0]  # a one-input concat is the input itself
        else:
            term = f"({' '.join([name, *attrs, *args])})"
        v = Value(n.id, 0)
        lets[v] = let_name(v)
        lines.append(f"(let {lets[v]} {term})")
        if n.op == "weight":  # weight order, for canonical merges (see prelude)
            lines.append(f"(set (wfirst {lets[v]}) {n.id}) (set (wlast {lets[v]}) {n.id})")
    return Encoding("\n".join(lines), [lets[v] for v in graph.outputs], lets)
