"""A selection of e-nodes → a graph IR, with the encoding's detours undone.

Nested binary concats along one axis become one n-ary concat when the inner
one has no other user, and slices that tile a whole axis of one tensor become
one ``split``.  Every node goes through ``Graph.add``, which re-infers shapes:
an ill-formed extraction fails loudly here.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

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


SplitKey = tuple[str, int]  # (sliced class, axis)


def _tiling_splits(
    data: EGraphData, sel: dict[str, ENode], uses: dict[str, int]
) -> tuple[dict[str, tuple[SplitKey, int]], dict[SplitKey, tuple[int, ...]]]:
    """Slices that tile an axis of one tensor exactly, each to become one output of a ``split``:
    (slice class -> (split key, output index)), (split key -> sizes)."""
    groups: dict[SplitKey, list[str]] = {}
    for cid, n in sel.items():
        if n.op == "slice" and uses.get(cid):
            groups.setdefault((n.children[0], n.attrs["axis"]), []).append(cid)
    split_of: dict[str, tuple[SplitKey, int]] = {}
    split_sizes: dict[SplitKey, tuple[int, ...]] = {}
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
    return split_of, split_sizes


def _concat_operands(sel: dict[str, ENode], uses: dict[str, int], cid: str) -> list[str]:
    """The operands of the binary concat ``cid``, with nested concats along the same axis that have no
    other user flattened into it."""
    axis = sel[cid].attrs["axis"]

    def operands(c: str) -> list[str]:
        n = sel[c]
        if n.op == "concat" and n.attrs["axis"] == axis and uses[c] <= 1:
            return operands(n.children[0]) + operands(n.children[1])
        return [c]

    return operands(sel[cid].children[0]) + operands(sel[cid].children[1])


def _post_order(roots: list[str], operands: Callable[[str], list[str]]) -> list[str]:
    """Every class reachable from ``roots``, operands before users (iterative: graphs are deep)."""
    order: list[str] = []
    state: dict[str, int] = {}
    for root in roots:
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
            for ch in reversed(operands(c)):
                if state.get(ch) != 2:
                    stack.append((ch, False))
    return order


def to_graph(data: EGraphData, sel: dict[str, ENode], original: Graph) -> Graph:
    uses = _uses(sel, data.roots)
    split_of, split_sizes = _tiling_splits(data, sel, uses)

    def operands(c: str) -> list[str]:
        return _concat_operands(sel, uses, c) if sel[c].op == "concat" else list(sel[c].children)

    g = Graph(name=original.name)
    g.weights = {}
    vals: dict[str, Value] = {}
    # inputs first, in the original order: positional callers rely on it, and an input the
    # optimized graph no longer reads is still part of its signature
    input_of: dict[str, Value] = {}
    for inp in original.inputs:
        input_of[inp.attrs["name"]] = Value(g.add("input", [], inp.attrs, origin=inp.origin or "input").id, 0)
    splits: dict[SplitKey, int] = {}
    for c in _post_order(data.roots, operands):
        n = sel[c]
        if c in split_of:
            key, i = split_of[c]
            if key not in splits:
                node = g.add("split", [vals[key[0]]], {"axis": key[1], "sizes": split_sizes[key]}, origin="extracted")
                splits[key] = node.id
            vals[c] = Value(splits[key], i)
            continue
        if n.op == "input":
            vals[c] = input_of[n.attrs["name"]]
            continue
        node = g.add(n.op, [vals[k] for k in operands(c)], n.attrs, origin="extracted")
        if n.op == "weight":
            g.weights[n.attrs["name"]] = original.weights[n.attrs["name"]]
        vals[c] = Value(node.id, 0)
    g.outputs = [vals[r] for r in data.roots]
    g.validate()
    return g
