"""Selections (e-class -> chosen e-node): walking one from the roots, its order, its validity.

>>> from rewrite.extract.egraph_data import ENode
>>> sel = {"R": ENode("r", "relu", {}, ("X",)), "X": ENode("x", "input", {}, ())}
>>> sorted(walk(["R"], sel.get)), postorder(["R"], sel)
(['R', 'X'], ['X', 'R'])
"""

from __future__ import annotations

from collections.abc import Callable

from rewrite.extract.egraph_data import EGraphData, ENode


def walk(roots: list[str], pick: Callable[[str], ENode | None]) -> dict[str, ENode] | None:
    """The selection reachable from ``roots`` under ``pick``; None if incomplete or cyclic."""
    sel: dict[str, ENode] = {}
    state: dict[str, int] = {}
    for r in roots:
        stack = [(r, False)]
        while stack:
            c, expanded = stack.pop()
            if expanded:
                state[c] = 2
                continue
            s = state.get(c)
            if s == 2:
                continue
            if s == 1:
                return None  # back edge: a cycle
            n = pick(c)
            if n is None:
                return None
            sel[c] = n
            state[c] = 1
            stack.append((c, True))
            for k in n.children:
                ks = state.get(k)
                if ks == 1:
                    return None
                if ks is None:
                    stack.append((k, False))
    return sel


def postorder(roots: list[str], sel: dict[str, ENode]) -> list[str]:
    """The selected e-classes, children before parents."""
    order: list[str] = []
    done: set[str] = set()
    for r in roots:
        stack = [(r, False)]
        while stack:
            c, expanded = stack.pop()
            if expanded:
                order.append(c)
                continue
            if c in done:
                continue
            done.add(c)
            stack.append((c, True))
            stack.extend((k, False) for k in reversed(sel[c].children) if k not in done)
    return order


def is_valid_selection(data: EGraphData, sel: dict[str, ENode]) -> bool:
    """Every root and every child of a selected e-node is selected, with an e-node of its class, acyclically."""
    members = {cid: {n.id for n in ns} for cid, ns in data.classes.items()}
    if any(n.id not in members.get(c, ()) for c, n in sel.items()):
        return False
    return walk(list(data.roots), sel.get) is not None
