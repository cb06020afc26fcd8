"""A selection of e-nodes → a graph IR, with the encoding's detours undone.

Nested binary concats along one axis become one n-ary concat when the inner
one has no other user, and slices that tile a whole axis of one tensor become
one ``split``.  Every node goes through ``Graph.add``, which re-infers shapes:
an ill-formed extraction fails loudly here.
"""

from __future__ import annotations

import itertools

from rewrite.extract.egraph_data import EGraphData, ENode
from rewrite.ir.graph import Graph, Value


def _uses(sel: dict[str, ENode], roots: list[str]) -> dict[str, int]:
    uses = {c: 0 for c in sel}
    seen: set[str] = set()
    stack = list(roots)
    for r in roots:
        uses[r] += 1
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        for ch in sel[c].children:
            uses[ch] += 1
            stack.append(ch)
    return uses


def to_graph(data: EGraphData, sel: dict[str, ENode], original: Graph) -> Graph:
    uses = _uses(sel, data.roots)
    # slices that tile an axis of one tensor exactly → one split
    groups: dict[tuple[str, int], list[str]] = {}
    for cid, n in sel.items():
        if n.op == "slice" and uses.get(cid):
            groups.setdefault((n.children[0], n.attrs["axis"]), []).append(cid)
    split_of: dict[str, tuple[tuple[str, int], int]] = {}
    split_sizes: dict[tuple[str, int], tuple[int, ...]] = {}
    for key, cids in groups.items():
        src, axis = key
        spans = sorted({(sel[c].attrs["start"], sel[c].attrs["end"]) for c in cids})
        if len(spans) < 2 or spans[0][0] != 0 or spans[-1][1] != data.shapes[src][axis]:
            continue
        if any(a[1] != b[0] for a, b in itertools.pairwise(spans)):
            continue
        split_sizes[key] = tuple(e - s for s, e in spans)
        index = {span: i for i, span in enumerate(spans)}
        for c in cids:
            split_of[c] = (key, index[(sel[c].attrs["start"], sel[c].attrs["end"])])

    g = Graph(name=original.name)
    g.weights = {}
    vals: dict[str, Value] = {}
    # inputs first, in the original order: positional callers rely on it, and an input the
    # optimized graph no longer reads is still part of its signature
    input_of: dict[str, Value] = {}
    for n in original.inputs:
        input_of[n.attrs["name"]] = Value(g.add("input", [], n.attrs, origin=n.origin or "input").id, 0)
    splits: dict[tuple[str, int], int] = {}

    def concat_inputs(cid: str, axis: int) -> list[str]:
        n = sel[cid]
        if n.op == "concat" and n.attrs["axis"] == axis and uses[cid] <= 1:
            return concat_inputs(n.children[0], axis) + concat_inputs(n.children[1], axis)
        return [cid]

    def flat_concat(cid: str) -> list[str]:
        n = sel[cid]
        return concat_inputs(n.children[0], n.attrs["axis"]) + concat_inputs(n.children[1], n.attrs["axis"])

    order: list[str] = []
    state: dict[str, int] = {}
    for root in data.roots:  # iterative post-order
        stack = [(root, False)]
        while stack:
            c, expanded = stack.pop()
            if state.get(c) == 2:
                continue
            if expanded:
                state[c] = 2
                order.append(c)
                continue
            state[c] = 1
            stack.append((c, True))
            n = sel[c]
            kids = flat_concat(c) if n.op == "concat" else list(n.children)
            for ch in reversed(kids):
                if state.get(ch) != 2:
                    stack.append((ch, False))
    for c in order:
        n = sel[c]
        if c in split_of:
            key, i = split_of[c]
            if key not in splits:
                node = g.add("split", [vals[key[0]]], {"axis": key[1], "sizes": split_sizes[key]}, origin="extracted")
                splits[key] = node.id
            vals[c] = Value(splits[key], i)
            continue
        if n.op == "concat":
            ins = [vals[k] for k in flat_concat(c)]
            node = g.add("concat", ins, n.attrs, origin="extracted")
        elif n.op == "input":
            vals[c] = input_of[n.attrs["name"]]
            continue
        else:
            node = g.add(n.op, [vals[k] for k in n.children], n.attrs, origin="extracted")
            if n.op == "weight":
                g.weights[n.attrs["name"]] = original.weights[n.attrs["name"]]
        vals[c] = Value(node.id, 0)
    g.outputs = [vals[r] for r in data.roots]
    g.validate()
    return g
