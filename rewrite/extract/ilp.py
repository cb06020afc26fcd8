"""Exact DAG extraction as a 0-1 integer program, solved with HiGHS.

Variables: one binary ``x[n]`` per e-node ("n is picked").  Constraints:

* each root e-class picks exactly one e-node, every other e-class at most one;
* a picked e-node's child e-classes pick an e-node: ``sum(x[m] for m in d) >= sum(x[n] for n in c
  that use d)`` (at most one ``n`` of ``c`` is picked, so this is exact, and tighter than a row per e-node);
* the picked e-nodes form no cycle (see below).

The objective is the sum of the picked e-nodes' costs, so a sub-graph shared
by several users is paid for once: this is the DAG cost ``greedy.dag_cost``
computes, minimised exactly instead of heuristically.

Acyclicity.  We use order variables with big-M constraints, restricted to the
strongly connected components (SCCs) of the e-class graph: an edge between two
SCCs can never lie on a cycle, so only an edge ``c -> d`` with ``c`` and ``d``
in the same SCC of size ``K`` gets ``o[c] - o[d] >= 1 - K * (1 - x[n])`` with
continuous ``o`` in ``[0, K - 1]``.  A set of picked edges satisfies these iff
it is acyclic.  We prefer this to lazy cycle cuts (solve, find a cycle, forbid
it, re-solve) because it is one solve: the time limit, the warm start and the
dual bound all refer to a single search, and the e-graphs our rules build have
few and small SCCs (the order constraints are a handful of rows), while cut
loops can take many rounds, each a full MIP solve, with no useful bound between
them.

Exact pruning before the model is built:

* *free* e-classes — those with a zero-cost e-node whose children are free
  (inputs, weights, anything weight-only) — are fixed to that e-node.  Costs
  are non-negative, so this never costs anything, and a free class's witness
  only reaches free classes, so it cannot close a cycle;
* e-nodes that use their own e-class, and, to a fixed point, e-nodes with a
  child e-class that has no usable e-node, are dropped;
* e-classes unreachable from the roots are dropped;
* an e-node is dropped when another e-node of its e-class costs no more and
  needs a subset of its (non-free) child e-classes: swapping one for the other
  never raises the cost and never adds an edge, so never adds a cycle.

Strengthening (also exact).  ``need(n)``, the e-classes every selection picking ``n`` must also pick
(its children, and what all e-nodes of each child need), turns the per-class rows above transitive:
the e-nodes of ``c`` that need ``d``, together, need ``d``.  Without it the LP relaxation can pick three
alternatives at 1/3 that all reach one expensive shared matmul through different paths and pay a third
of it; on bert this cut the solve from ~8-12 s to ~2 s.  Classes the roots must need are fixed to one
e-node.  The bitsets cost ~n^2/8 bytes, so this is skipped above ``NEED_LIMIT`` e-classes.

The greedy selection (``greedy.select``) is passed to HiGHS as a starting
incumbent and kept as the fallback: ``ilp_extract`` never returns something
worse than greedy.

    >>> # res = ilp_extract(data, ncost, time_limit=10); res.status, res.objective, res.gap
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rewrite.extract.egraph_data import EGraphData, ENode
from rewrite.extract.greedy import ExtractionError, dag_cost, greedy_choice, select

STATUSES = ("optimal", "time_limit", "fallback")
NEED_LIMIT = 30_000  # e-classes up to which must-need sets (bitsets, ~n^2/8 bytes) are computed


@dataclass
class IlpResult:
    """``status``: ``optimal`` (proved, within ``rel_gap``), ``time_limit`` (stopped by the time limit
    with an incumbent) or ``fallback`` (the solver gave nothing usable: the greedy selection is returned).
    ``source`` says which selection was returned (``ilp`` or ``greedy``); ``objective`` is its DAG cost,
    ``bound`` a proved lower bound on the optimum (None if unknown), ``gap`` = (objective - bound) / objective.
    """

    selection: dict[str, ENode]
    status: str
    objective: float
    bound: float | None
    gap: float | None
    seconds: float
    source: str
    greedy_objective: float | None = None
    stats: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ pruning


@dataclass
class _Problem:
    free: dict[str, ENode]  # free e-class -> its zero-cost witness e-node
    classes: dict[str, list[ENode]]  # the e-classes left to decide, with their surviving e-nodes
    dominated_by: dict[str, ENode]  # dropped e-node id -> an e-node of its class that replaces it
    roots: list[str]


def _free_classes(data: EGraphData, ncost: dict[str, float]) -> dict[str, ENode]:
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


def _prune(data: EGraphData, ncost: dict[str, float]) -> _Problem:
    free = _free_classes(data, ncost)
    # usable e-nodes: no self-loop, every child class free or with a usable e-node (fixed point)
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
    nodes = {cid: ns for cid, ns in nodes.items() if ns}

    # dominance inside each class
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
                if len(kept) < 400
                else next((k for k in kept if k[0] <= cost and k[1] == kids), None)
            )
            if dom is None:
                kept.append((cost, kids, n))
            else:
                dominated_by[n.id] = dom[2]
        nodes[cid] = [k[2] for k in kept]

    roots = list(dict.fromkeys(data.roots))
    for r in roots:
        if r not in free and r not in nodes:
            raise ExtractionError(f"no acyclic, well-formed term for output e-class {r}")
    # reachable from the roots through surviving e-nodes
    seen: set[str] = set()
    stack = [r for r in roots if r not in free]
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        for n in nodes[c]:
            stack.extend(k for k in n.children if k not in free and k not in seen)
    return _Problem(free, {c: nodes[c] for c in nodes if c in seen}, dominated_by, roots)


def _sccs(classes: dict[str, list[ENode]], free: dict[str, ENode]) -> dict[str, int]:
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


class _Needs:
    """Must-need sets: the e-classes every selection that picks an e-node (or e-class) also picks."""

    def __init__(self, names: list[str], index: dict[str, int], node_bits: dict[str, int], mandatory: set[str]) -> None:
        self.names, self.node_bits, self.mandatory = names, node_bits, mandatory
        self._mandatory_bits = sum(1 << index[c] for c in mandatory)

    def of_node(self, n: ENode) -> list[str]:
        """The non-mandatory e-classes picking ``n`` forces."""
        m = self.node_bits[n.id] & ~self._mandatory_bits
        out = []
        while m:
            low = m & -m
            out.append(self.names[low.bit_length() - 1])
            m ^= low
        return out


def _needs(classes: dict[str, list[ENode]], free: dict[str, ENode], comp: dict[str, int], roots: list[str]) -> _Needs:
    """need(n) = union over child classes d of {d} | need(d); need(c) = intersection over its e-nodes.

    Computed children first; inside an SCC a child's own needs are not used (only the child itself),
    which keeps every set sound (an under-approximation).  ``mandatory``: the roots and what they need.
    """
    names = list(classes)
    index = {c: i for i, c in enumerate(names)}
    order: list[str] = []
    state: set[str] = set()
    for start in names:  # post-order over the class graph: children before parents (outside SCCs)
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
    class_bits: dict[str, int] = {}
    node_bits: dict[str, int] = {}
    for x in order:
        acc: int | None = None
        for n in classes[x]:
            m = 0
            for k in n.children:
                if k in free:
                    continue
                m |= 1 << index[k]
                if comp[k] != comp[x]:
                    m |= class_bits[k]
            node_bits[n.id] = m
            acc = m if acc is None else acc & m
        class_bits[x] = acc or 0
    mand = 0
    for r in roots:
        if r in classes:
            mand |= (1 << index[r]) | class_bits[r]
    mandatory = set()
    m = mand
    while m:
        low = m & -m
        mandatory.add(names[low.bit_length() - 1])
        m ^= low
    return _Needs(names, index, node_bits, mandatory)


# ------------------------------------------------------------------ selections


def _walk(roots: list[str], pick: Callable[[str], ENode | None]) -> dict[str, ENode] | None:
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


def _postorder(roots: list[str], sel: dict[str, ENode]) -> list[str]:
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
    return _walk(list(data.roots), sel.get) is not None


# ------------------------------------------------------------------ the solve


def ilp_extract(
    data: EGraphData,
    ncost: dict[str, float],
    time_limit: float = 10.0,
    warm_start: dict[str, ENode] | None = None,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    rel_gap: float = 1e-6,
    verbose: bool = False,
) -> IlpResult:
    """The cheapest acyclic selection (DAG cost), or the best found within ``time_limit`` seconds of wall time.

    ``warm_start`` defaults to the greedy selection; it seeds HiGHS and is returned if the solver fails.
    ``on_progress`` receives dicts: ``{"event": "model", ...sizes}``, ``{"event": "incumbent",
    "objective", "bound", "seconds"}`` for each improving solution, and ``{"event": "done", ...}``.
    """
    import highspy

    t0 = time.perf_counter()
    if time_limit <= 0:
        raise ValueError(f"time limit must be > 0 seconds, got {time_limit}")
    bad = [nid for nid, c in ncost.items() if not (c >= 0.0 and math.isfinite(c))]
    if bad:
        raise ValueError(f"e-node costs must be finite and non-negative; {len(bad)} are not (e.g. {bad[0]})")

    def report(event: str, **kw: Any) -> None:
        if on_progress is not None:
            on_progress({"event": event, "seconds": time.perf_counter() - t0, **kw})

    if warm_start is None:
        try:
            warm_start = select(data, greedy_choice(data, ncost), ncost)
        except ExtractionError:
            warm_start = None
    if warm_start is not None:
        # only what the roots reach (``select`` can leave behind classes of abandoned candidates)
        warm_start = _walk(list(dict.fromkeys(data.roots)), warm_start.get)
    greedy_obj = dag_cost(warm_start, ncost) if warm_start is not None else None

    prob = _prune(data, ncost)
    free, classes = prob.free, prob.classes
    comp = _sccs(classes, free)
    comp_size: dict[int, int] = {}
    for c in classes:
        comp_size[comp[c]] = comp_size.get(comp[c], 0) + 1
    cyclic = sorted({c for c in classes if comp_size[comp[c]] > 1})

    # columns: e-nodes, then order variables
    node_list = [n for c in classes for n in classes[c]]
    col_of = {n.id: i for i, n in enumerate(node_list)}
    order_col = {c: len(node_list) + i for i, c in enumerate(cyclic)}
    ncols = len(node_list) + len(cyclic)
    scale_base = (
        greedy_obj if greedy_obj and greedy_obj > 0 else max((ncost[n.id] for n in node_list), default=1.0) or 1.0
    )
    scale = 1000.0 / scale_base  # objective of order 1e3: HiGHS's absolute tolerances stay meaningless
    cost = np.zeros(ncols)
    lower = np.zeros(ncols)
    upper = np.ones(ncols)
    integrality = np.zeros(ncols, dtype=np.int32)
    for n in node_list:
        cost[col_of[n.id]] = ncost[n.id] * scale
    integrality[: len(node_list)] = 1
    for c in cyclic:
        upper[order_col[c]] = comp_size[comp[c]] - 1

    rows_i: list[int] = []
    rows_j: list[int] = []
    rows_v: list[float] = []
    rlo: list[float] = []
    rhi: list[float] = []
    inf = highspy.kHighsInf

    def row(cols: list[int], vals: list[float], lo: float, hi: float) -> None:
        r = len(rlo)
        rows_i.extend([r] * len(cols))
        rows_j.extend(cols)
        rows_v.extend(vals)
        rlo.append(lo)
        rhi.append(hi)

    need = _needs(classes, free, comp, prob.roots) if len(classes) <= NEED_LIMIT else None
    mandatory = need.mandatory if need is not None else set(prob.roots)
    for c, ns in classes.items():  # one e-node per class at most; exactly one where every selection needs c
        row([col_of[n.id] for n in ns], [1.0] * len(ns), 1.0 if c in mandatory else 0.0, 1.0)
    strengthened = 0
    for c, ns in classes.items():
        # one row per (class c, class d): the e-nodes of c that need d, together, need d.  c picks at most
        # one e-node, so this is exact; it is tighter than a row per e-node, where three alternatives at 1/3
        # that all need d get away with d at 1/3 in the LP relaxation.  "Need" is transitive (must-need sets).
        users_of: dict[str, dict[str, ENode]] = {}
        for n in ns:
            for d in n.children:
                if d not in free:
                    users_of.setdefault(d, {})[n.id] = n
        direct = {d: list(us.values()) for d, us in users_of.items()}
        if need is not None and len(ns) > 1:
            for n in ns:
                for d in need.of_node(n):
                    if n.id not in users_of.setdefault(d, {}):
                        users_of[d][n.id] = n
                        strengthened += 1
        for d, us in users_of.items():
            if len(us) < 2 and d not in direct:
                continue  # implied by the rows below c
            dcols = [col_of[m.id] for m in classes[d]]
            row(dcols + [col_of[i] for i in us], [1.0] * len(dcols) + [-1.0] * len(us), 0.0, inf)
        for d, us_direct in direct.items():
            if comp[d] == comp[c] and c in order_col:
                k = float(comp_size[comp[c]])
                for n in us_direct:
                    row([order_col[c], order_col[d], col_of[n.id]], [1.0, -1.0, -k], 1.0 - k, inf)
    nrows = len(rlo)
    sizes = {
        "classes": len(data.classes),
        "enodes": data.num_nodes,
        "free_classes": len(free),
        "ilp_classes": len(classes),
        "ilp_enodes": len(node_list),
        "dominated": len(prob.dominated_by),
        "cyclic_classes": len(cyclic),
        "sccs": sum(1 for s in comp_size.values() if s > 1),
        "mandatory_classes": len(mandatory),
        "strengthened": strengthened,
        "rows": nrows,
        "cols": ncols,
    }
    report("model", **sizes)

    def unscaled_selection(x: np.ndarray | None) -> dict[str, ENode] | None:
        def pick(c: str) -> ENode | None:
            if c in free:
                return free[c]
            if x is None or c not in classes:
                return None
            best = max(classes[c], key=lambda n: x[col_of[n.id]])
            return best if x[col_of[best.id]] > 0.5 else None

        return _walk(prob.roots, pick)

    # the warm start, mapped onto the pruned problem (free classes -> witnesses, dominated -> dominator)
    start: np.ndarray | None = None
    if warm_start is not None:

        def pick_ws(c: str) -> ENode | None:
            if c in free:
                return free[c]
            n = warm_start.get(c)  # type: ignore[union-attr]
            while n is not None and n.id in prob.dominated_by:
                n = prob.dominated_by[n.id]
            return n if n is not None and n.id in col_of else None

        ws = _walk(prob.roots, pick_ws)
        if ws is not None:
            start = np.zeros(ncols)
            for c, n in ws.items():
                if c not in free:
                    start[col_of[n.id]] = 1.0
            if cyclic:
                rank: dict[int, int] = {}
                pos: dict[str, int] = {}
                for c in _postorder(prob.roots, ws):
                    if c in order_col:
                        pos[c] = rank[comp[c]] = rank.get(comp[c], -1) + 1
                for c in cyclic:
                    if c not in pos:
                        pos[c] = rank[comp[c]] = rank.get(comp[c], -1) + 1
                    start[order_col[c]] = pos[c]

    status, source, x = "fallback", "greedy", None
    bound: float | None = None
    message = ""
    if not classes:  # everything is free
        status, source = "optimal", "ilp"
        x = np.zeros(0)
        bound = 0.0
    else:
        remaining = time_limit - (time.perf_counter() - t0)
        if remaining <= 0.01:
            status, message = "fallback", "time limit used up before the solve"
        else:
            h = highspy.Highs()
            h.setOptionValue("output_flag", bool(verbose))
            h.setOptionValue("time_limit", float(remaining))
            h.setOptionValue("mip_rel_gap", float(rel_gap))
            h.setOptionValue("mip_abs_gap", 1e-9)
            h.setOptionValue("random_seed", 0)
            lp = highspy.HighsLp()
            lp.num_col_, lp.num_row_ = ncols, nrows
            lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lower, upper
            lp.row_lower_, lp.row_upper_ = np.array(rlo), np.array(rhi)
            ri, rj, rv = np.array(rows_i, dtype=np.int64), np.array(rows_j, dtype=np.int64), np.array(rows_v)
            order = np.lexsort((ri, rj))
            starts = np.searchsorted(rj[order], np.arange(ncols + 1))
            lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
            lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = ncols, nrows
            lp.a_matrix_.start_ = starts.astype(np.int32)
            lp.a_matrix_.index_ = ri[order].astype(np.int32)
            lp.a_matrix_.value_ = rv[order]
            lp.integrality_ = [
                highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous for v in integrality
            ]
            h.passModel(lp)
            if start is not None:
                sol = highspy.HighsSolution()
                sol.col_value = start
                sol.value_valid = True
                h.setSolution(sol)
            if on_progress is not None:

                def improved(e: Any) -> None:
                    out = e.data_out
                    report(
                        "incumbent",
                        objective=out.objective_function_value / scale,
                        bound=out.mip_dual_bound / scale if math.isfinite(out.mip_dual_bound) else None,
                    )

                h.cbMipImprovingSolution.subscribe(improved)
            try:
                h.run()
                ms = h.getModelStatus()
                info = h.getInfo()
                if math.isfinite(info.mip_dual_bound):
                    bound = info.mip_dual_bound / scale
                if info.primal_solution_status == 2:  # feasible
                    x = np.asarray(h.getSolution().col_value)
                if ms == highspy.HighsModelStatus.kOptimal and x is not None:
                    status = "optimal"
                elif ms in (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kInterrupt) and x is not None:
                    status = "time_limit"
                else:
                    message = f"HiGHS: {h.modelStatusToString(ms)}"
                    x = None
            except Exception as e:
                message = f"HiGHS failed: {e}"
                x = None

    sel = unscaled_selection(x) if x is not None else None
    if x is not None and sel is None:
        message = "the solver's solution does not decode to an acyclic selection"
    if sel is not None:
        obj = dag_cost(sel, ncost)
        if greedy_obj is not None and obj > greedy_obj * (1 + 1e-9):
            sel, message = None, f"the solver's solution ({obj:.6g}) is worse than greedy ({greedy_obj:.6g})"
    if sel is not None:
        source = "ilp"
    else:
        status, source = "fallback", "greedy"
        if warm_start is None:
            raise ExtractionError(f"ILP extraction failed ({message or status}) and there is no greedy selection")
        sel, obj = warm_start, greedy_obj  # type: ignore[assignment]
    obj = float(obj)
    if bound is not None:
        bound = min(bound, obj)
    gap = None if bound is None else (0.0 if obj <= 0 else max(0.0, (obj - bound) / obj))
    seconds = time.perf_counter() - t0
    res = IlpResult(sel, status, obj, bound, gap, seconds, source, greedy_obj, {**sizes, "message": message})
    report("done", status=status, objective=obj, bound=bound, gap=gap, source=source)
    return res
