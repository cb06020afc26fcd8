"""Greedy DAG-aware extraction: shared sub-graphs are counted once.

Each e-class's cost is the cost of its chosen e-node plus the costs of the
*set* of e-classes below it (a union, never a tree sum), iterated to a fixed
point.  The final choice is made acyclic by ``select``, which walks down from
the roots and falls back to the next-cheapest e-node whenever a choice would
close a cycle.

    >>> # choice = greedy_choice(data, node_cost); sel = select(data, choice)
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable

from rewrite.extract.egraph_data import EGraphData, ENode
from rewrite.ir.errors import ExtractionError


def node_costs(data: EGraphData, cost: Callable[[str, dict, list], float]) -> dict[str, float]:
    """Cost of each e-node alone; weight-only classes are precomputed, so free."""
    out: dict[str, float] = {}
    for cid, nodes in data.classes.items():
        for n in nodes:
            if cid in data.weight_only or n.op in ("input", "weight"):
                out[n.id] = 0.0
            else:
                out[n.id] = cost(n.op, n.attrs, [data.shapes[c] for c in n.children])
    return out


def greedy_choice(data: EGraphData, ncost: dict[str, float]) -> dict[str, ENode]:
    """Per e-class, the e-node with the cheapest DAG cost found by fixed-point iteration."""
    parents: dict[str, list[tuple[str, ENode]]] = {}
    for cid, nodes in data.classes.items():
        for n in nodes:
            for c in set(n.children):
                parents.setdefault(c, []).append((cid, n))
    best_cost: dict[str, float] = {}
    best_set: dict[str, dict[str, float]] = {}
    choice: dict[str, ENode] = {}
    queue = deque((cid, n) for cid, nodes in data.classes.items() for n in nodes if not n.children)
    while queue:
        cid, n = queue.popleft()
        if any(c not in best_set for c in n.children):
            continue
        union: dict[str, float] = {}
        for c in n.children:
            if len(best_set[c]) > len(union):
                union, small = dict(best_set[c]), union
                union.update(small)
            else:
                union.update(best_set[c])
        if cid in union:
            continue  # would be a cycle
        union[cid] = ncost[n.id]
        total = sum(union.values())
        if total < best_cost.get(cid, float("inf")) - 1e-15:
            best_cost[cid], best_set[cid], choice[cid] = total, union, n
            queue.extend(parents.get(cid, ()))
    return choice


def select(data: EGraphData, choice: dict[str, ENode], ncost: dict[str, float]) -> dict[str, ENode]:
    """An acyclic selection reachable from the roots, preferring ``choice``."""
    done: dict[str, ENode] = {}
    on_path: set[str] = set()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20 * (len(data.classes) + 100)))

    def visit(cid: str) -> bool:
        if cid in done:
            return True
        if cid in on_path:
            return False
        on_path.add(cid)
        first = [choice[cid]] if cid in choice else []
        rest = sorted((n for n in data.classes.get(cid, []) if n not in first), key=lambda n: ncost[n.id])
        for n in first + rest:
            if all(visit(c) for c in n.children):
                done[cid] = n
                on_path.discard(cid)
                return True
        on_path.discard(cid)
        return False

    try:
        for r in data.roots:
            if not visit(r):
                raise ExtractionError(f"no acyclic, well-formed term for output e-class {r}")
    finally:
        sys.setrecursionlimit(limit)
    # keep only what the roots reach: abandoned candidates may have completed other classes
    keep: set[str] = set()
    stack = list(data.roots)
    while stack:
        c = stack.pop()
        if c not in keep:
            keep.add(c)
            stack.extend(done[c].children)
    return {c: n for c, n in done.items() if c in keep}


def dag_cost(sel: dict[str, ENode], ncost: dict[str, float]) -> float:
    return sum(ncost[n.id] for n in sel.values())
