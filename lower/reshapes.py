"""Reshapes moved below the pointwise ops that read them, before fusion is planned (``lower.plan``).

A reshape is a view: where it sits costs nothing, but the fusion planner (``lower.fusion``) grows a
contraction's epilogue only through ops of the contraction's own shape, and importers wrap every batched
linear layer in reshapes (a transformer's (1, S, H) activations flattened to (S, H) for the GEMM and back).
``sink_reshapes`` computes the pointwise ops after such a reshape in its input's shape and reshapes their
result instead, so the activation and the residual add join the GEMM's kernel.

    >>> sink_reshapes(graph) is graph       # nothing to move: the same graph   # doctest: +SKIP
    True
"""

from __future__ import annotations

import dataclasses

from rewrite.ir.graph import Graph, Node, Value
from rewrite.ir.ops import OPS, FusionRole, Group


def pointwise(op: str) -> bool:
    """An elementwise op with numpy (right-aligned) broadcasting and no axis of its own: it commutes with a
    reshape of its full-shape operands (batchnorm, an epilogue op too, broadcasts along channels: not one)."""
    d = OPS[op]
    return d.group is Group.ELEMENTWISE and d.fusion is FusionRole.ELEMENTWISE


def _common_suffix(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


def _in_shape(s: tuple[int, ...], p: tuple[int, ...], q: tuple[int, ...]) -> tuple[int, ...] | None:
    """How an operand of shape ``s`` (of ``q``'s rank, broadcast against it: the registry broadcasts sizes of 1,
    never ranks) reads against ``p`` instead (``p`` and ``q`` one size, differing only before their common
    suffix): its trailing dims after ones to ``p``'s rank, or None when it varies along a dimension the
    reshape changes.  A full-shape operand (``s == q``) is viewed as ``p``."""
    if s == q:
        return p
    keep = _common_suffix(p, q)
    if len(s) != len(q) or any(d != 1 for d in s[: len(s) - keep]):
        return None
    return (1,) * (len(p) - keep) + s[len(s) - keep :]


def sink_reshapes(graph: Graph) -> Graph:
    """``graph`` with reshapes moved below the pointwise ops that consume them, where the reshape's input is
    computed by a contraction or a pointwise op: ``gelu(reshape(x @ w + b))`` becomes
    ``reshape(gelu(x @ w + b))``, so the gelu joins the contraction's epilogue (which fuses ops of the
    contraction's own shape only) instead of running as a kernel of its own, a pass over the output saved.

    Importers write such reshapes around every batched linear layer (a transformer's (1, S, H) activations
    flattened to (S, H) for the GEMM and back): the FFN's activation and every residual add ran as separate
    kernels.  A reshape is a view, so where it goes costs nothing; only which ops share a kernel changes.
    The pointwise op's other operands must read the same elements in the reshape's input shape: a full-shape
    operand is viewed the same way, a broadcast one (a bias) must vary only along the dimensions the reshape
    keeps (their common suffix).  Returns ``graph`` itself when nothing moves."""
    users = graph.users()
    outs = {v.node for v in graph.outputs}

    # analysis: which reshapes are dropped (``sunk``: their value is the reshape of a value of shape P) and which
    # pointwise ops are computed in their operands' pre-reshape shape P (``in_p``)
    sunk: dict[int, tuple[int, ...]] = {}
    in_p: dict[int, tuple[int, ...]] = {}
    for n in graph:
        if not pointwise(n.op) or len(n.shapes) != 1:
            continue
        cands: dict[int, tuple[int, ...]] = {}  # input node -> its P
        for v in n.inputs:
            src = graph.nodes[v.node]
            if graph.shape_of(v) != n.shape:
                continue
            if src.op == "reshape":
                if src.id in outs or not all(pointwise(graph.nodes[u].op) for u in users[src.id]):
                    continue  # read as it is elsewhere: the view stays (a consumer that cannot move reads it back)
                inner = src.inputs[0]
                if inner.node in in_p:
                    cands[src.id] = in_p[inner.node]
                elif (
                    pointwise(graph.nodes[inner.node].op)
                    or OPS[graph.nodes[inner.node].op].fusion is FusionRole.CONTRACTION
                ):
                    cands[src.id] = graph.shape_of(inner)
            elif src.id in in_p:
                cands[src.id] = in_p[src.id]
        if not cands:
            continue
        p = next(iter(cands.values()))
        if p == n.shape or any(c != p for c in cands.values()):
            continue
        if all(v.node in cands or _in_shape(graph.shape_of(v), p, n.shape) is not None for v in n.inputs):
            in_p[n.id] = p
            sunk.update({c: p for c in cands if graph.nodes[c].op == "reshape"})
    if not in_p:
        return graph
    # rewrite: every node in order; a pointwise op in P reads its operands as P (or their trailing dims), and
    # its value is reshaped back where something other than the chain reads it
    out = Graph(weights=graph.weights, name=graph.name)
    env: dict[Value, Value] = {}
    in_p_value: dict[int, Value] = {}
    was: dict[int, int] = {}  # a node of ``out`` -> the node of ``graph`` it computes (the reshapes added: none)

    def add(op: str, inputs: list[Value], attrs: dict, origin: str, of: int | None = None) -> Node:
        m = out.add(op, inputs, attrs, origin)
        if of is not None:
            was[m.id] = of
        return m

    def val(v: Value) -> Value:
        if v not in env and v.node in in_p_value:  # read as it is: the reshape back, made once
            env[v] = Value(add("reshape", [in_p_value[v.node]], {"shape": graph.shape_of(v)}, "").id, 0)
        return env[v]

    for n in graph:
        if n.id in sunk:
            inner = n.inputs[0]
            in_p_value[n.id] = in_p_value[inner.node] if inner.node in in_p_value else val(inner)
        elif n.id in in_p:
            p, ins = in_p[n.id], []
            for v in n.inputs:
                if v.node in in_p_value:
                    ins.append(in_p_value[v.node])
                    continue
                s, want = graph.shape_of(v), _in_shape(graph.shape_of(v), p, n.shape)
                assert want is not None
                ins.append(val(v) if want == s else Value(add("reshape", [val(v)], {"shape": want}, n.origin).id, 0))
            in_p_value[n.id] = Value(add(n.op, ins, dict(n.attrs), n.origin, n.id).id, 0)
        else:
            m = add(n.op, [val(v) for v in n.inputs], dict(n.attrs), n.origin, n.id)
            for i in range(len(n.shapes)):
                env[Value(n.id, i)] = Value(m.id, i)
    out.outputs = [val(v) for v in graph.outputs]
    # the nodes keep their ids (kernel names, plans and messages match the graph given), the reshapes added
    # take fresh ones; the order stays the one built
    fresh = iter(range(max(graph.nodes) + 1, max(graph.nodes) + 1 + len(out.nodes)))
    ids = {m: was[m] if m in was else next(fresh) for m in out.nodes}

    def moved(v: Value) -> Value:
        return Value(ids[v.node], v.index)

    out.nodes = {
        ids[m.id]: dataclasses.replace(m, id=ids[m.id], inputs=tuple(moved(v) for v in m.inputs))
        for m in out.nodes.values()
    }
    out.outputs = [moved(v) for v in out.outputs]
    return out
