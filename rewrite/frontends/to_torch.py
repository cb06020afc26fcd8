"""An eqsat graph back to PyTorch: a ``torch.fx.GraphModule`` computing it with torch ops.

    gm = to_torch(result.graph)        # an nn.Module: gm(x) == result.graph.run([x])
    print(gm.code)                     # one call_op("matmul", {...}, x, w) line per node

Each node calls :func:`call_op`, which computes the op with its registry reference
(``OpDef.ref``), so the module computes exactly what ``Graph.run`` does.  Weights are
buffers of the module (copies), read by ``get_attr``; the inputs are ``forward``'s
arguments in the graph's input order; one output is returned as a tensor, several as a
tuple.
"""

from __future__ import annotations

import re
from typing import Any

import torch
import torch.fx
from torch import nn

from rewrite.ir.graph import Graph, Value, expect_graph
from rewrite.ir.ops import get_op

__all__ = ["call_op", "to_torch"]


def call_op(op: str, attrs: dict[str, Any], *inputs: torch.Tensor) -> Any:
    """Registry op ``op`` on ``inputs``: one tensor, or a tuple for a multi-output op (split)."""
    outs = get_op(op).ref(list(inputs), attrs)
    return outs[0] if len(outs) == 1 else tuple(outs)


torch.fx.wrap("call_op")  # a leaf when a GraphModule that calls it is traced again


def _ident(name: str, taken: set[str]) -> str:
    base = re.sub(r"\W", "_", name) or "v"
    if base[0].isdigit():
        base = "_" + base
    out, k = base, 1
    while out in taken:
        k += 1
        out = f"{base}_{k}"
    taken.add(out)
    return out


def to_torch(graph: Graph) -> torch.fx.GraphModule:
    """A GraphModule whose ``forward(*inputs)`` computes ``graph`` with torch ops."""
    expect_graph(graph, "to_torch")
    graph.validate()
    root = nn.Module()
    fx = torch.fx.Graph()
    env: dict[Value, torch.fx.Node] = {}
    taken: set[str] = set()
    for n in graph:
        if n.op == "input":
            env[Value(n.id, 0)] = fx.placeholder(_ident(n.attrs["name"], taken))
        elif n.op == "weight":
            attr = _ident("w_" + n.attrs["name"], taken)
            root.register_buffer(attr, graph.weights[n.attrs["name"]].detach().clone())
            env[Value(n.id, 0)] = fx.get_attr(attr)
        else:
            args: tuple[Any, ...] = (n.op, dict(n.attrs), *(env[v] for v in n.inputs))
            node = fx.call_function(call_op, args)
            if len(n.shapes) == 1:
                env[Value(n.id, 0)] = node
            else:
                for i in range(len(n.shapes)):
                    env[Value(n.id, i)] = fx.call_function(_getitem, (node, i))
    outs = [env[v] for v in graph.outputs]
    fx.output(outs[0] if len(outs) == 1 else tuple(outs))
    return torch.fx.GraphModule(root, fx, class_name=_ident(graph.name, set()))


def _getitem(xs: Any, i: int) -> Any:
    return xs[i]
