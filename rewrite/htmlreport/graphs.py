"""A graph as inline SVG: boxes at layered-layout positions, coloured by what the diff says of them.

``status`` marks a node ``"new"``, ``"removed"`` or ``"same"``; ``region`` gives changed nodes their
region number, drawn as a dashed box around the region's nodes with the number beside it.  Graphs
with more than ``BLOCK_NODES`` drawn nodes are cut, in topological order, into blocks of
``BLOCK_SIZE``, each its own ``<details>`` (click to expand; blocks holding a change start open),
with the producers a block reads from other blocks drawn as grey stubs.

    >>> from rewrite.ir.builder import GraphBuilder
    >>> b = GraphBuilder("g"); x = b.input("x", (2, 3))
    >>> svg = graph_svg(b.build([b.relu(x)]), {}, {}, "after")
    >>> svg.count('class="node') == 2
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from rewrite.htmlreport.layout import Pos, layered
from rewrite.ir.graph import Graph

BLOCK_NODES = 160  # above this many drawn nodes, the graph is shown as collapsible blocks
BLOCK_SIZE = 80
BOX_W, BOX_H, MARGIN = 130.0, 28.0, 30.0


def drawn_nodes(g: Graph) -> list[int]:
    """Inputs and compute nodes in topological order; weights are left out (they would double the picture)."""
    return [n.id for n in g if n.op != "weight"]


def graph_svg(
    g: Graph, status: Mapping[int, str], region: Mapping[int, int], side: str, notes: Mapping[int, str] | None = None
) -> str:
    """The whole graph (one SVG), or collapsible blocks of it when it is big."""
    nodes = drawn_nodes(g)
    if len(nodes) <= BLOCK_NODES:
        return _svg(g, nodes, status, region, side, notes or {})
    parts = []
    for k in range(0, len(nodes), BLOCK_SIZE):
        chunk = nodes[k : k + BLOCK_SIZE]
        changed = sum(1 for n in chunk if status.get(n, "same") != "same")
        opened = " open" if changed else ""
        parts.append(
            f'<details class="block"{opened}><summary>block {k // BLOCK_SIZE + 1}: nodes %{chunk[0]}..%{chunk[-1]} '
            f"({len(chunk)} nodes, {changed} changed)</summary>"
            + _svg(g, chunk, status, region, side, notes or {})
            + "</details>"
        )
    return "".join(parts)


def _svg(
    g: Graph,
    nodes: list[int],
    status: Mapping[int, str],
    region: Mapping[int, int],
    side: str,
    notes: Mapping[int, str],
) -> str:
    inside = set(nodes)
    drawn = {n for n in drawn_nodes(g)}
    stubs = sorted({v.node for n in nodes for v in g.nodes[n].inputs if v.node in drawn and v.node not in inside})
    preds = {n: [v.node for v in g.nodes[n].inputs if v.node in inside or v.node in stubs] for n in nodes}
    preds.update({s: [] for s in stubs})
    pos = layered(preds)
    xs = [p.x for p in pos.values()] or [0.0]
    ys = [p.y for p in pos.values()] or [0.0]
    x0, y0 = min(xs) - BOX_W / 2 - MARGIN, min(ys) - BOX_H / 2 - MARGIN
    width, height = max(xs) - min(xs) + BOX_W + 2 * MARGIN, max(ys) - min(ys) + BOX_H + 2 * MARGIN
    out = [
        f'<svg class="graph graph-{side}" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="{x0:.0f} {y0:.0f} {width:.0f} {height:.0f}">'
    ]
    out += _regions(nodes, pos, region)
    for n, ps in preds.items():
        for p in ps:
            a, b = pos[p], pos[n]
            mid = (a.y + b.y) / 2
            out.append(
                f'<path class="edge" d="M{a.x:.1f},{a.y + BOX_H / 2:.1f} C{a.x:.1f},{mid:.1f} {b.x:.1f},{mid:.1f} '
                f'{b.x:.1f},{b.y - BOX_H / 2:.1f}"/>'
            )
    for s in stubs:
        out.append(_box(pos[s], "stub", f"%{s} {g.nodes[s].op}", f"from another block: %{s} {g.nodes[s].op}", s, 0))
    for n in nodes:
        node = g.nodes[n]
        kind = "input" if node.op == "input" else status.get(n, "same")
        label = node.attrs["name"] if node.op == "input" else f"{node.op} %{n}"
        shapes = ", ".join("x".join(map(str, s)) for s in node.shapes)
        tip = f"%{n} {node.op} -> {shapes}" + (f"\nfrom {node.origin}" if node.origin else "")
        if n in notes:
            tip += "\n" + notes[n]
        out.append(_box(pos[n], kind, label, tip, n, region.get(n, 0)))
    out.append("</svg>")
    return "".join(out)


def _box(p: Pos, kind: str, label: str, tip: str, nid: int, reg: int) -> str:
    text = label if len(label) <= 20 else label[:19] + "…"
    return (
        f'<g class="node {kind}" data-node="{nid}" data-region="{reg}"><title>{escape(tip)}</title>'
        f'<rect x="{p.x - BOX_W / 2:.1f}" y="{p.y - BOX_H / 2:.1f}" width="{BOX_W:.0f}" height="{BOX_H:.0f}" rx="5"/>'
        f'<text x="{p.x:.1f}" y="{p.y + 4:.1f}" text-anchor="middle">{escape(text)}</text></g>'
    )


def _regions(nodes: list[int], pos: Mapping[int, Pos], region: Mapping[int, int]) -> list[str]:
    """A dashed box around each region's nodes in this picture, numbered like the 'what changed' list."""
    boxes: dict[int, list[Pos]] = {}
    for n in nodes:
        if region.get(n):
            boxes.setdefault(region[n], []).append(pos[n])
    out = []
    for r, ps in sorted(boxes.items()):
        x1, x2 = min(p.x for p in ps) - BOX_W / 2 - 8, max(p.x for p in ps) + BOX_W / 2 + 8
        y1, y2 = min(p.y for p in ps) - BOX_H / 2 - 8, max(p.y for p in ps) + BOX_H / 2 + 8
        out.append(
            f'<g class="region" data-region="{r}"><rect x="{x1:.1f}" y="{y1:.1f}" width="{x2 - x1:.1f}" '
            f'height="{y2 - y1:.1f}" rx="8"/><text x="{x1 + 2:.1f}" y="{y1 - 2:.1f}">region {r}</text></g>'
        )
    return out
