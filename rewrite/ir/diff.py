"""A structural diff of two graphs: which nodes are shared, removed, added, grouped into changed regions.

Nodes are matched by *structure*, bottom up: a source is its name, any other node its op, its
attributes and the structures of its inputs.  Node numbering, order and origins do not matter, so
an optimized graph diffed against its original shows exactly the rewritten parts.  A *region* is a
connected group of removed and added nodes (linked through edges, or through a shared unchanged
neighbour), so one rewrite shows up as one region, its old nodes beside its new ones.  A node that
only reads a rewritten value (same op and attributes as the node at its place counted from the
outputs) is *rebuilt*, and counts as unchanged: a rewrite early in a model does not mark every later
node as changed.

    >>> from rewrite.ir.builder import GraphBuilder
    >>> def g(twice):
    ...     b = GraphBuilder("g"); x = b.input("x", (2, 3)); y = b.relu(x)
    ...     return b.build([b.relu(y) if twice else y])
    >>> d = diff(g(True), g(False))
    >>> (d.removed_ops, d.added_ops, len(d.regions))
    ({'relu': 1}, {}, 1)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rewrite.ir.graph import Graph, Node, Value
from rewrite.ir.ops import OPS

Key = tuple  # a node's structure: (op, attrs, input keys) or ("source", op, name)


def structure_keys(graph: Graph, table: dict[Key, int] | None = None) -> dict[int, int]:
    """Node id → structural key, as a small int (equal keys compute equal values, whatever the numbering).

    Keys are hash-consed through ``table`` (pass the same one for graphs to be compared): a node's
    key holds its inputs' int keys, so hashing it is cheap however deep the graph is.
    """
    table = {} if table is None else table
    keys: dict[int, int] = {}
    for n in graph:
        k: Key
        if n.op in ("input", "weight"):
            k = ("source", n.op, n.attrs["name"])
        else:
            attrs = tuple(sorted((k, repr(v)) for k, v in n.attrs.items()))
            k = (n.op, attrs, tuple((keys[v.node], v.index) for v in n.inputs))
        keys[n.id] = table.setdefault(k, len(table))
    return keys


@dataclass
class Region:
    """One connected change: the nodes it removes from A and adds in B (ids in each graph)."""

    removed: list[int] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    where: str = ""  # the origin of a removed node, when the graph knows it (file:line, module path)


@dataclass
class GraphDiff:
    a: Graph
    b: Graph
    shared: dict[int, int]  # node id in A -> node id in B, for unchanged nodes
    removed: list[int]  # compute nodes of A not in B
    added: list[int]  # compute nodes of B not in A
    regions: list[Region]

    @property
    def removed_ops(self) -> dict[str, int]:
        return dict(sorted(Counter(self.a.nodes[i].op for i in self.removed).items()))

    @property
    def added_ops(self) -> dict[str, int]:
        return dict(sorted(Counter(self.b.nodes[i].op for i in self.added).items()))

    @property
    def unchanged(self) -> bool:
        return not self.removed and not self.added

    def text(self, max_regions: int = 50) -> str:
        """The diff as text: a summary line, op counts, then each region as ``-``/``+`` lines."""
        na, nb = self.a.op_count(), self.b.op_count()
        lines = [f"{self.a.name} -> {self.b.name}: {na} -> {nb} ops ({nb - na:+d}), {len(self.regions)} region(s)"]
        if self.unchanged:
            return lines[0] + "; the graphs are structurally equal"
        fmt = lambda ops: ", ".join(f"{c} x {op}" for op, c in ops.items()) or "none"
        lines += [f"  removed: {fmt(self.removed_ops)}", f"  added:   {fmt(self.added_ops)}"]
        for k, r in enumerate(self.regions[:max_regions], start=1):
            lines.append(f"region {k}" + (f" ({r.where})" if r.where else "") + ":")
            lines += [f"  - {node_line(self.a, self.a.nodes[i])}" for i in r.removed]
            lines += [f"  + {node_line(self.b, self.b.nodes[i])}" for i in r.added]
        if len(self.regions) > max_regions:
            lines.append(f"... {len(self.regions) - max_regions} more region(s)")
        return "\n".join(lines)


def node_line(g: Graph, n: Node) -> str:
    """One node as a line of text: ``%7 = relu(%3) -> (2, 3)`` (sources by name)."""

    def ref(v: Value) -> str:
        src = g.nodes[v.node]
        if src.op in ("input", "weight"):
            return src.attrs["name"]
        return f"%{v.node}" + (f".{v.index}" if v.index else "")

    attrs = " ".join(f"{k}={v}" for k, v in n.attrs.items())
    shapes = ", ".join(str(s) for s in n.shapes)
    return f"%{n.id} = {n.op}({', '.join(ref(v) for v in n.inputs)}){' ' + attrs if attrs else ''} -> {shapes}"


def diff(a: Graph, b: Graph) -> GraphDiff:
    """Compare ``a`` (before) with ``b`` (after) structurally; see the module docstring."""
    table: dict[Key, int] = {}
    ka, kb = structure_keys(a, table), structure_keys(b, table)
    in_b: dict[int, int] = {}
    for nid, k in kb.items():
        in_b.setdefault(k, nid)
    shared = {i: in_b[k] for i, k in ka.items() if k in in_b}
    shared.update(_rebuilt(a, b, shared))
    compute = lambda g, i: g.nodes[i].op not in ("input", "weight")
    removed = [i for i in a.nodes if i not in shared and compute(a, i)]
    kept = set(shared.values())
    added = [i for i in kb if i not in kept and compute(b, i)]
    return GraphDiff(a, b, shared, removed, added, _regions(a, b, shared, removed, added))


def _rebuilt(a: Graph, b: Graph, shared: dict[int, int]) -> dict[int, int]:
    """Pairs (A id -> B id) of nodes that only read rewritten values: paired from the outputs down.

    Output ``i`` of A and of B compute the same value.  Two paired nodes with the same op, attributes
    and shapes are the same computation, so their inputs are paired position by position in turn; a
    pair stops where the ops differ (a rewrite) or a side is already matched by structure; the two
    operands of a commutative op are paired the way round whose ops and shapes agree.  Without
    this, every node downstream of a rewrite would read as changed.  A node proposed twice keeps its
    first partner.
    """
    taken = set(shared.values())
    pairs: dict[int, int] = {}
    work = [(va.node, vb.node) for va, vb in zip(a.outputs, b.outputs) if va.index == vb.index]
    while work:
        i, j = work.pop()
        if i in shared or i in pairs or j in taken:
            continue
        na, nb = a.nodes[i], b.nodes[j]
        if (na.op, dict(na.attrs), na.shapes, len(na.inputs)) != (nb.op, dict(nb.attrs), nb.shapes, len(nb.inputs)):
            continue
        if na.op in ("input", "weight"):
            continue
        pairs[i] = j
        taken.add(j)
        ins = nb.inputs
        if len(ins) == 2 and na.op in OPS and OPS[na.op].commutative and _kind(a, na.inputs) != _kind(b, ins):
            ins = ins[::-1]  # add(x, y) rebuilt as add(y', x'): pair by what the operands are
        work += [(va.node, vb.node) for va, vb in zip(na.inputs, ins) if va.index == vb.index]
    return pairs


def _kind(g: Graph, vals: tuple[Value, ...]) -> list[tuple[str, tuple]]:
    return [(g.nodes[v.node].op, g.nodes[v.node].shapes[v.index]) for v in vals]


def _regions(a: Graph, b: Graph, shared: dict[int, int], removed: list[int], added: list[int]) -> list[Region]:
    """Connected components over removed/added nodes; unchanged nodes read or feeding both sides link them."""
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(x: tuple[str, int], y: tuple[str, int]) -> None:
        parent[find(x)] = find(y)

    changed = {("a", i) for i in removed} | {("b", i) for i in added}
    b_to_a = {j: i for i, j in shared.items()}
    for side, g in (("a", a), ("b", b)):
        for n in g:
            here = n.id if side == "a" else b_to_a.get(n.id)  # the node's id in A when it is unchanged
            for v in n.inputs:
                if (side, n.id) in changed and (side, v.node) in changed:
                    union((side, n.id), (side, v.node))
                elif (side, n.id) in changed:  # an unchanged producer (not a graph input) links its readers
                    anchor = v.node if side == "a" else b_to_a.get(v.node)
                    if anchor is not None and a.nodes[anchor].op != "input":
                        union((side, n.id), ("in", anchor))
                elif (side, v.node) in changed and here is not None:  # an unchanged consumer links its producers
                    union((side, v.node), ("out", here))
    groups: dict[tuple[str, int], Region] = {}
    for key in sorted(changed):  # anchors only link: a region holds removed and added nodes
        r = groups.setdefault(find(key), Region())
        (r.removed if key[0] == "a" else r.added).append(key[1])
    out = sorted(groups.values(), key=lambda r: (min(r.removed, default=10**9), min(r.added, default=10**9)))
    for r in out:
        r.removed.sort()
        r.added.sort()
        r.where = next((a.nodes[i].origin for i in r.removed if a.nodes[i].origin), "")
    return out
