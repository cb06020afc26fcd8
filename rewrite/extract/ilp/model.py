"""The 0-1 program: columns (one per surviving e-node, one order variable per cyclic class), rows, warm start.

Rows, per decided class ``c``:

* ``sum(x[n] for n in c) <= 1``, ``= 1`` where every selection needs ``c`` (the mandatory classes);
* for each class ``d`` the e-nodes of ``c`` need: ``sum(x[m] for m in d) >= sum(x[n] for n of c that need d)``,
  except where ``d`` is mandatory (``sum(x[m] for m in d) = 1`` and ``c`` picks at most one: implied, also
  in the LP relaxation).  Without those rows the program falls apart into independent parts at the
  mandatory classes (``split.components``): bert's eight layers are eight programs of ~100 columns;
* for each edge ``c -> d`` inside one SCC of size ``K``: ``o[c] - o[d] >= 1 - K * (1 - x[n])``.

    >>> rows = Rows(); rows.add([0, 1], [1.0, 1.0], 0.0, 1.0); rows.count
    1
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from rewrite.extract.egraph_data import EGraphData, ENode
from rewrite.extract.ilp.prune import Needs, Problem, needs, sccs
from rewrite.extract.ilp.result import ModelSizes
from rewrite.extract.ilp.selection import postorder, walk
from rewrite.extract.ilp.split import Part, components

OBJECTIVE_SCALE = 1000.0  # objective of this order: HiGHS's absolute tolerances stay negligible


@dataclass
class Rows:
    """Constraint rows as coordinate triplets with bounds (``math.inf`` is HiGHS's ``kHighsInf``)."""

    i: list[int] = field(default_factory=list)
    j: list[int] = field(default_factory=list)
    v: list[float] = field(default_factory=list)
    lo: list[float] = field(default_factory=list)
    hi: list[float] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.lo)

    def add(self, cols: list[int], vals: list[float], lo: float, hi: float) -> None:
        r = len(self.lo)
        self.i.extend([r] * len(cols))
        self.j.extend(cols)
        self.v.extend(vals)
        self.lo.append(lo)
        self.hi.append(hi)


@dataclass
class Model:
    """The program over a pruned problem; ``scale`` multiplies costs into the objective."""

    classes: dict[str, list[ENode]]
    comp: dict[str, int]  # class -> SCC index
    comp_size: dict[int, int]
    col_of: dict[str, int]  # e-node id -> column
    order_col: dict[str, int]  # cyclic class -> its order column
    cost: np.ndarray
    upper: np.ndarray
    integral: np.ndarray  # 1 for the binary e-node columns, 0 for the continuous order columns
    scale: float
    mandatory: frozenset[str] = frozenset()  # classes every selection picks (an e-node of each)
    rows: Rows = field(default_factory=Rows)
    parts: list[Part] = field(default_factory=list)  # independent parts (``split.components``), smallest first

    @property
    def ncols(self) -> int:
        return len(self.cost)


def _order_bounds(classes: dict[str, list[ENode]], comp: dict[str, int]) -> tuple[dict[int, int], list[str]]:
    """SCC sizes, and the classes in an SCC of size > 1 (only their edges can close a cycle)."""
    comp_size: dict[int, int] = {}
    for c in classes:
        comp_size[comp[c]] = comp_size.get(comp[c], 0) + 1
    return comp_size, sorted({c for c in classes if comp_size[comp[c]] > 1})


def _need_rows(model: Model, prob: Problem, need: Needs | None, c: str) -> int:
    """Class ``c``'s rows: what its e-nodes need (transitively, with ``need``), and its order rows.

    One row per (class c, class d): the e-nodes of c that need d, together, need d.  c picks at most one
    e-node, so this is exact; it is tighter than a row per e-node, where three alternatives at 1/3 that
    all need d get away with d at 1/3 in the LP relaxation.  Returns how many strengthening pairs it added.
    """
    ns, col_of, rows = model.classes[c], model.col_of, model.rows
    users_of: dict[str, dict[str, ENode]] = {}
    for n in ns:
        for d in n.children:
            if d not in prob.free:
                users_of.setdefault(d, {})[n.id] = n
    direct = {d: list(us.values()) for d, us in users_of.items()}
    strengthened = 0
    if need is not None and len(ns) > 1:
        for n in ns:
            if n.id in need.infeasible:
                continue  # fixed to 0 (build_model); its need is no row worth adding
            for d in need.of_node(n):
                if n.id not in users_of.setdefault(d, {}):
                    users_of[d][n.id] = n
                    strengthened += 1
    for d, us in users_of.items():
        if len(us) < 2 and d not in direct:
            continue  # implied by the rows below c
        if d in model.mandatory:
            continue  # implied: d picks exactly one e-node, c at most one (and this cut lets the program split)
        dcols = [col_of[m.id] for m in model.classes[d]]
        rows.add(dcols + [col_of[i] for i in us], [1.0] * len(dcols) + [-1.0] * len(us), 0.0, math.inf)
    for d, us_direct in direct.items():
        if model.comp[d] == model.comp[c] and c in model.order_col:
            k = float(model.comp_size[model.comp[c]])
            for n in us_direct:
                rows.add([model.order_col[c], model.order_col[d], col_of[n.id]], [1.0, -1.0, -k], 1.0 - k, math.inf)
    return strengthened


def build_model(
    data: EGraphData,
    prob: Problem,
    ncost: dict[str, float],
    greedy_obj: float | None,
    need_limit: int,
    deadline: float = math.inf,
) -> tuple[Model, ModelSizes] | None:
    """Columns and rows for ``prob``; must-need sets only up to ``need_limit`` classes (they cost ~n^2/8 bytes).

    None when ``time.perf_counter()`` passes ``deadline`` before the model is complete (checked before the
    must-need sets and between classes' rows): on e-graphs of ~50k e-nodes building alone can take longer
    than the ILP's limit, and a half-built model is of no use.
    """
    classes = prob.classes
    comp = sccs(classes, prob.free)
    comp_size, cyclic = _order_bounds(classes, comp)
    node_list = [n for c in classes for n in classes[c]]
    col_of = {n.id: i for i, n in enumerate(node_list)}
    order_col = {c: len(node_list) + i for i, c in enumerate(cyclic)}
    ncols = len(node_list) + len(cyclic)
    base = greedy_obj if greedy_obj and greedy_obj > 0 else max((ncost[n.id] for n in node_list), default=1.0) or 1.0
    scale = OBJECTIVE_SCALE / base
    cost, upper, integral = np.zeros(ncols), np.ones(ncols), np.zeros(ncols, dtype=np.int32)
    for n in node_list:
        cost[col_of[n.id]] = ncost[n.id] * scale
    integral[: len(node_list)] = 1
    for c in cyclic:
        upper[order_col[c]] = comp_size[comp[c]] - 1
    if time.perf_counter() > deadline:
        return None
    need = needs(classes, prob.free, comp, prob.roots) if len(classes) <= need_limit else None
    mandatory = need.mandatory if need is not None else set(prob.roots)
    if need is not None:  # e-nodes that close a cycle in every selection (prune.needs)
        for nid in need.infeasible:
            upper[col_of[nid]] = 0.0
    model = Model(classes, comp, comp_size, col_of, order_col, cost, upper, integral, scale, frozenset(mandatory))
    for c, ns in classes.items():  # one e-node per class at most; exactly one where every selection needs c
        model.rows.add([col_of[n.id] for n in ns], [1.0] * len(ns), 1.0 if c in mandatory else 0.0, 1.0)
    strengthened = 0
    for c in classes:
        if time.perf_counter() > deadline:
            return None
        strengthened += _need_rows(model, prob, need, c)
    model.parts = components(ncols, model.rows.count, model.rows.i, model.rows.j)
    sizes = ModelSizes(
        classes=len(data.classes),
        enodes=data.num_nodes,
        free_classes=len(prob.free),
        ilp_classes=len(classes),
        ilp_enodes=len(node_list),
        dominated=len(prob.dominated_by),
        cyclic_classes=len(cyclic),
        sccs=sum(1 for s in comp_size.values() if s > 1),
        mandatory_classes=len(mandatory),
        strengthened=strengthened,
        rows=model.rows.count,
        cols=ncols,
        parts=len(model.parts),
        largest_part=max((len(p.cols) for p in model.parts), default=0),
    )
    return model, sizes


def mandatory_floor(model: Model, ncost: dict[str, float]) -> float:
    """A lower bound on the optimum: every mandatory class picks one of its (pruned) e-nodes, distinct classes
    distinct e-nodes, costs are non-negative.  Pruning keeps an optimum, so the cheapest survivor bounds it."""
    return float(sum(min(ncost[n.id] for n in model.classes[c]) for c in model.mandatory if model.classes.get(c)))


def warm_start_vector(model: Model, prob: Problem, warm_start: dict[str, ENode]) -> np.ndarray | None:
    """``warm_start`` as column values: free classes -> witnesses, dominated e-nodes -> their dominators,
    order variables numbered children first within each SCC.  None if it does not map onto the model.
    """

    def pick(c: str) -> ENode | None:
        if c in prob.free:
            return prob.free[c]
        n = warm_start.get(c)
        while n is not None and n.id in prob.dominated_by:
            n = prob.dominated_by[n.id]
        return n if n is not None and n.id in model.col_of else None

    ws = walk(prob.roots, pick)
    if ws is None:
        return None
    start = np.zeros(model.ncols)
    for c, n in ws.items():
        if c not in prob.free:
            start[model.col_of[n.id]] = 1.0
    if model.order_col:
        rank: dict[int, int] = {}
        pos: dict[str, int] = {}
        for c in postorder(prob.roots, ws):
            if c in model.order_col:
                pos[c] = rank[model.comp[c]] = rank.get(model.comp[c], -1) + 1
        for c in model.order_col:  # sorted, as the columns are
            if c not in pos:
                pos[c] = rank[model.comp[c]] = rank.get(model.comp[c], -1) + 1
            start[model.order_col[c]] = pos[c]
    return start
