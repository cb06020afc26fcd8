"""The serialized e-graph, read back into plain Python: what extraction sees.

Only tensor e-nodes are kept, each with its op name, its typed attribute
values and its child e-classes; each tensor e-class carries its shape (from
the ``shape`` function egglog computed) and whether it is weight-only.  An
e-node whose shape, re-inferred with the op registry, disagrees with its
e-class's shape is dropped as ill-formed, so extraction can never pick it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rewrite.egraph.prelude import EGG_TO_OP, egg_arity
from rewrite.ir.ops import OPS, AttrKind, Shape, ShapeError


@dataclass(frozen=True)
class ENode:
    id: str
    op: str
    attrs: dict[str, Any]
    children: tuple[str, ...]  # tensor e-class ids


@dataclass
class EGraphData:
    classes: dict[str, list[ENode]]
    shapes: dict[str, Shape]
    roots: list[str]
    weight_only: set[str] = field(default_factory=set)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (node id, reason)

    @property
    def num_nodes(self) -> int:
        return sum(len(v) for v in self.classes.values())


def _value(nodes: dict[str, Any], nid: str, kind: AttrKind) -> Any:
    node = nodes[nid]
    op = node["op"]
    if kind is AttrKind.INTS:
        if op not in ("vec-of", "vec-empty"):
            raise ValueError(f"expected a vector literal, got {op}")
        return tuple(int(nodes[c]["op"]) for c in node["children"])
    if kind is AttrKind.INT:
        return int(op)
    if kind is AttrKind.FLOAT:
        return float(op)
    return bytes(op[1:-1], "utf-8").decode("unicode_escape")


def _class_vec(nodes: dict[str, Any], by_class: dict[str, list[str]], cid: str) -> Shape:
    for nid in by_class.get(cid, []):
        if nodes[nid]["op"] in ("vec-of", "vec-empty"):
            return _value(nodes, nid, AttrKind.INTS)
    raise ValueError(f"e-class {cid} has no vector value")


def read_serialized(data: dict[str, Any]) -> EGraphData:
    nodes: dict[str, Any] = data["nodes"]
    by_class: dict[str, list[str]] = {}
    for nid, n in nodes.items():
        by_class.setdefault(n["eclass"], []).append(nid)
    shapes: dict[str, Shape] = {}
    for n in nodes.values():
        if n["op"] == "shape":
            shapes[nodes[n["children"][0]]["eclass"]] = _class_vec(nodes, by_class, n["eclass"])
    classes: dict[str, list[ENode]] = {}
    dropped: list[tuple[str, str]] = []
    for nid, n in nodes.items():
        op = EGG_TO_OP.get(n["op"])
        if op is None:
            continue
        opdef = OPS[op]
        kids = n["children"]
        na = len(opdef.attrs)
        attrs = {a.name: _value(nodes, kids[i], a.kind) for i, a in enumerate(opdef.attrs)}
        children = tuple(nodes[c]["eclass"] for c in kids[na : na + egg_arity(opdef)])
        cid = n["eclass"]
        classes.setdefault(cid, [])
        if cid not in shapes or any(c not in shapes for c in children):
            dropped.append((nid, "no shape"))
            continue
        try:
            inferred = opdef.infer([shapes[c] for c in children], attrs)[0]
        except ShapeError as e:
            dropped.append((nid, str(e)))
            continue
        if inferred != shapes[cid]:
            dropped.append((nid, f"shape {inferred} != e-class shape {shapes[cid]}"))
            continue
        classes[cid].append(ENode(nid, op, attrs, children))
    weight_only: set[str] = set()
    changed = True
    while changed:  # a class is weight-only if one of its nodes is
        changed = False
        for cid, ns in classes.items():
            if cid not in weight_only and any(
                n.op == "weight"
                or OPS[n.op].constant
                or (n.op != "input" and n.children and all(c in weight_only for c in n.children))
                for n in ns
            ):
                weight_only.add(cid)
                changed = True
    return EGraphData(classes, shapes, list(data["root_eclasses"]), weight_only, dropped)
