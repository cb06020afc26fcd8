"""Exact pruning before the model is built, and the class-graph facts the model needs (SCCs, need sets).

Pruning never removes every optimum (see the package docstring for why each step is exact): free
e-classes are fixed to a zero-cost witness; e-nodes that use their own class, or need a class with no
usable e-node, are dropped (to a fixed point); dominated e-nodes are dropped; classes the roots cannot
reach are dropped.

    >>> from rewrite.extract.egraph_data import EGraphData, ENode
    >>> x, r = ENode("x0", "input", {}, ()), ENode("r0", "relu", {}, ("X",))
    >>> prob = prune(EGraphData({"X": [x], "R": [r]}, {}, ["R"]), {"x0": 0.0, "r0": 1.0})
    >>> list(prob.free), list(prob.classes)
    (['X'], ['R'])
"""

from __future__ import annotations

from dataclasses import dataclass

from rewrite.extract.egraph_data import EGraphData, ENode
from rewrite.extract.greedy import ExtractionError

DOMINANCE_SCAN = 400  # kept e-nodes per class up to which dominance tests subsets, not only equal child sets


@dataclass
class Problem:
    """What is left to decide after pruning."""

    free: dict[str, ENode]  # free e-class -> its zero-cost witness e-node
    classes: dict[str, list[ENode]]  # the e-classes left to decide, with their surviving e-nodes
    dominated_by: dict[str, ENode]  # dropped e-node id -> an e-node of its class that replaces it
    roots: list[str]


def free_classes(data: EGraphData, ncost: dict[str, float]) -> dict[str, ENode]:
    """E-classes with a zero-cost e-node whose children are all free (a fixed point, in discovery order)."""
    waiting: dict[str, list[tuple[str, ENode, set[str]]]] = {}
    ready: list[tuple[str, ENode]] = []
    for cid, nodes in data.classes.items():
        for n in nodes:
            if ncost[n.id] != 0.0:
                continue
            need = set(n.children)
            if not need:
                ready.append((cid, n))
            for c in need:
                waiting.setdefault(c, []).append((cid, n, need))
    free: dict[str, ENode] = {}
    while ready:
        cid, n = ready.pop()
        if cid in free:
            continue
        free[cid] = n
        for pcid, pn, need in waiting.pop(cid, ()):
            need.discard(cid)
            if not need and pcid not in free:
                ready.append((pcid, pn))
    return free


def _usable(data: EGraphData, free: dict[str, ENode]) -> dict[str, list[ENode]]:
    """Per non-free class, its e-nodes with no self-loop whose child classes are free or usable (fixed point)."""
    nodes = {cid: [n for n in ns if cid not in n.children] for cid, ns in data.classes.items() if cid not in free}
    users: dict[str, list[tuple[str, ENode]]] = {}
    for cid, ns in nodes.items():
        for n in ns:
            for c in set(n.children):
                if c not in free:
                    users.setdefault(c, []).append((cid, n))
    dead = [cid for cid, ns in nodes.items() if not ns]
    dead += sorted({c for ns in nodes.values() for n in ns for c in n.children if c not in free and c not in nodes})
    gone: set[str] = set()
    dead_set: set[str] = set()
    while dead:
        c = dead.pop()
        if c in dead_set:
            continue
        dead_set.add(c)
        for pcid, pn in users.get(c, ()):
            if pn.id in gone:
                continue
            gone.add(pn.id)
            nodes[pcid] = [n for n in nodes[pcid] if n.id != pn.id]
            if not nodes[pcid]:
                dead.append(pcid)
    return {cid: ns for cid, ns in nodes.items() if ns}


def _drop_dominated(nodes: dict[str, list[ENode]], ncost: dict[str, float], free: dict[str, ENode]) -> dict[str, ENode]:
    """Drop (in place) each e-node that another of its class beats: no dearer, needing a subset of its classes.

    Swapping the dropped e-node for its dominator never raises the cost and never adds an edge, so never
    a cycle.  Returns dropped id -> dominator.
    """
    dominated_by: dict[str, ENode] = {}
    for cid, ns in nodes.items():
        if len(ns) < 2:
            continue
        keyed = sorted(
            ((ncost[n.id], frozenset(c for c in n.children if c not in free), n) for n in ns),
            key=lambda t: (t[0], len(t[1]), t[2].id),
        )
        kept: list[tuple[float, frozenset[str], ENode]] = []
        for cost, kids, n in keyed:
            dom = (
                next((k for k in kept if k[0] <= cost and k[1] <= kids), None)
                if len(kept) < DOMINANCE_SCAN
                else next((k for k in kept if k[0] <= cost and k[1] == kids), None)
            )
            if dom is None:
                kept.append((cost, kids, n))
            else:
                dominated_by[n.id] = dom[2]
        nodes[cid] = [k[2] for k in kept]
    return dominated_by


def _reachable(nodes: dict[str, list[ENode]], free: dict[str, ENode], roots: list[str]) -> set[str]:
    """Non-free classes reachable from ``roots`` through surviving e-nodes."""
    seen: set[str] = set()
    stack = [r for r in roots if r not in free]
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        for n in nodes[c]:
            stack.extend(k for k in n.children if k not in free and k not in seen)
    return seen


def prune(data: EGraphData, ncost: dict[str, float]) -> Problem:
    """Free classes, usable e-nodes, dominance and reachability, in that order (each step is exact)."""
    free = free_classes(data, ncost)
    nodes = _usable(data, free)
    dominated_by = _drop_dominated(nodes, ncost, free)
    roots = list(dict.fromkeys(data.roots))
    for r in roots:
        if r not in free and r not in nodes:
            raise ExtractionError(f"no acyclic, well-formed term for output e-class {r}")
    seen = _reachable(nodes, free, roots)
    return Problem(free, {c: nodes[c] for c in nodes if c in seen}, dominated_by, roots)


# ------------------------------------------------------------------ the class graph


def sccs(classes: dict[str, list[ENode]], free: dict[str, ENode]) -> dict[str, int]:
    """E-class -> SCC index of the class graph (Tarjan, iterative)."""
    succ = {c: sorted({k for n in ns for k in n.children if k not in free}) for c, ns in classes.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    st: list[str] = []
    comp: dict[str, int] = {}
    counter = ncomp = 0
    for start in classes:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                st.append(v)
                on.add(v)
            kids = succ[v]
            while i < len(kids):
                w = kids[i]
                i += 1
                if w not in index:
                    work.append((v, i))
                    work.append((w, 0))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                if low[v] == index[v]:
                    k = ncomp
                    ncomp += 1
                    while True:
                        w = st.pop()
                        on.discard(w)
                        comp[w] = k
                        if w == v:
                            break
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
    return comp


def _bits_to_names(bits: int, names: list[str]) -> list[str]:
    out = []
    while bits:
        low = bits & -bits
        out.append(names[low.bit_length() - 1])
        bits ^= low
    return out


class Needs:
    """Must-need sets: the e-classes every selection that picks an e-node (or e-class) also picks, and the
    e-nodes no acyclic selection can pick (each needs its own e-class back through its children)."""

    def __init__(
        self,
        names: list[str],
        index: dict[str, int],
        node_bits: dict[str, int],
        mandatory: set[str],
        infeasible: frozenset[str] = frozenset(),
    ) -> None:
        self.names, self.node_bits, self.mandatory, self.infeasible = names, node_bits, mandatory, infeasible
        self._mandatory_bits = sum(1 << index[c] for c in mandatory)

    def of_node(self, n: ENode) -> list[str]:
        """The non-mandatory e-classes picking ``n`` forces."""
        return _bits_to_names(self.node_bits[n.id] & ~self._mandatory_bits, self.names)


def _children_first(classes: dict[str, list[ENode]]) -> list[str]:
    """Post-order over the class graph: children before parents (outside SCCs)."""
    order: list[str] = []
    state: set[str] = set()
    for start in classes:
        if start in state:
            continue
        stack = [(start, False)]
        while stack:
            x, expanded = stack.pop()
            if expanded:
                order.append(x)
                continue
            if x in state:
                continue
            state.add(x)
            stack.append((x, True))
            for n in classes[x]:
                stack.extend((k, False) for k in n.children if k in classes and k not in state)
    return order


def needs(classes: dict[str, list[ENode]], free: dict[str, ENode], comp: dict[str, int], roots: list[str]) -> Needs:
    """need(n) = union over child classes d of {d} | need(d); need(c) = intersection over its usable e-nodes.

    Computed children first; each SCC of more than one class as the greatest fixpoint of those equations
    over its classes (starting from "everything"), once the SCC's last class in children-first order is
    reached (its members' outside children are done by then).  Any fixpoint is sound: in an acyclic
    selection, by induction on depth, the classes below a picked class include its need.  An e-node whose
    need holds its own class closes a cycle in every selection: it is *infeasible*, left out of its class's
    intersection (and a class left with none is unselectable: it needs everything).  ``mandatory``: the
    roots and what they need.
    """
    names = list(classes)
    index = {c: i for i, c in enumerate(names)}
    everything = (1 << len(names)) - 1
    order = _children_first(classes)
    size: dict[int, int] = {}
    last: dict[int, str] = {}
    for x in order:
        size[comp[x]] = size.get(comp[x], 0) + 1
        last[comp[x]] = x
    members: dict[int, list[str]] = {}
    class_bits: dict[str, int] = {}
    node_bits: dict[str, int] = {}

    def compute(x: str) -> int:
        acc: int | None = None
        own = 1 << index[x]
        for n in classes[x]:
            m = 0
            for k in n.children:
                if k not in free:
                    m |= (1 << index[k]) | class_bits[k]
            node_bits[n.id] = m
            if not m & own:
                acc = m if acc is None else acc & m
        return everything if acc is None else acc

    for x in order:
        if size[comp[x]] == 1:
            class_bits[x] = compute(x)
            continue
        group = members.setdefault(comp[x], [])
        group.append(x)
        class_bits[x] = everything
        if x != last[comp[x]]:
            continue
        changed = True
        while changed:  # decreasing bitsets: ends
            changed = False
            for y in group:
                b = compute(y)
                if b != class_bits[y]:
                    class_bits[y], changed = b, True
    infeasible = frozenset(n.id for x in names for n in classes[x] if node_bits[n.id] >> index[x] & 1)
    mand = 0
    for r in roots:
        if r in classes:
            mand |= (1 << index[r]) | class_bits[r]
    return Needs(names, index, node_bits, set(_bits_to_names(mand, names)), infeasible)
