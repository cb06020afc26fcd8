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

The package follows those steps: ``prune`` (free classes, usable and dominated
e-nodes, reachability; SCCs and need sets), ``model`` (columns, rows, the warm
start as column values), ``split`` (the independent parts), ``solve`` (part by
part, and the answer read back as a selection), ``highs`` (one part in HiGHS),
``child`` (a big part in a process of its own, stopped at the deadline: HiGHS's
root work can overrun its time limit by seconds), ``result`` (the record and
its status enums); ``ilp_extract`` below runs them in order.

    >>> # res = ilp_extract(data, ncost, time_limit=10); res.status, res.objective, res.gap
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from rewrite.extract.egraph_data import EGraphData, ENode
from rewrite.extract.greedy import ExtractionError, dag_cost, greedy_choice, select
from rewrite.extract.ilp.model import build_model, mandatory_floor, warm_start_vector
from rewrite.extract.ilp.prune import prune
from rewrite.extract.ilp.result import STATUSES, IlpResult, IlpSource, IlpStatus, ModelSizes
from rewrite.extract.ilp.selection import is_valid_selection, walk
from rewrite.extract.ilp.solve import Answer, decode, solve

NEED_LIMIT = 30_000  # e-classes up to which must-need sets (bitsets, ~n^2/8 bytes) are computed
READBACK_SHARE = 0.03  # of the time limit kept back from HiGHS for reading its answer back (decode, DAG cost)
WORSE_THAN_GREEDY = 1e-9  # relative slack before a solver answer counts as worse than the greedy one

__all__ = [
    "NEED_LIMIT",
    "STATUSES",
    "IlpResult",
    "IlpSource",
    "IlpStatus",
    "ModelSizes",
    "ilp_extract",
    "is_valid_selection",
]


def _check_inputs(ncost: dict[str, float], time_limit: float) -> None:
    if time_limit <= 0:
        raise ValueError(f"time limit must be > 0 seconds, got {time_limit}")
    bad = [nid for nid, c in ncost.items() if not (c >= 0.0 and math.isfinite(c))]
    if bad:
        raise ValueError(f"e-node costs must be finite and non-negative; {len(bad)} are not (e.g. {bad[0]})")


def _greedy_start(
    data: EGraphData, ncost: dict[str, float], warm_start: dict[str, ENode] | None
) -> dict[str, ENode] | None:
    """The warm start (greedy by default), cut to what the roots reach: ``select`` can leave behind
    classes of abandoned candidates.  None when greedy finds no selection either."""
    if warm_start is None:
        try:
            warm_start = select(data, greedy_choice(data, ncost), ncost)
        except ExtractionError:
            return None
    return walk(list(dict.fromkeys(data.roots)), warm_start.get)


def _accept(
    answer: Answer, selection: dict[str, ENode] | None, ncost: dict[str, float], greedy_obj: float | None
) -> tuple[dict[str, ENode] | None, str]:
    """The solver's selection if it decodes and is no worse than greedy, else None and the reason."""
    if answer.x is None:
        return None, answer.message
    if selection is None:
        return None, "the solver's solution does not decode to an acyclic selection"
    obj = dag_cost(selection, ncost)
    if greedy_obj is not None and obj > greedy_obj * (1 + WORSE_THAN_GREEDY):
        return None, f"the solver's solution ({obj:.6g}) is worse than greedy ({greedy_obj:.6g})"
    return selection, answer.message


def _root_floor(data: EGraphData, ncost: dict[str, float]) -> float:
    """A lower bound on any selection's DAG cost: each root e-class picks an e-node of its own, and costs are
    non-negative, so the cheapest e-node of every distinct root class is paid for at least.  It is what a
    gap is stated against when the solver proves no bound (the model took the whole time limit to build);
    once the model is built, ``mandatory_floor`` (every class all selections need) is at least as high."""
    return float(sum(min((ncost[n.id] for n in data.classes[c]), default=0.0) for c in set(data.roots)))


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
    t0 = time.perf_counter()
    _check_inputs(ncost, time_limit)

    def progress(event: str, **kw: Any) -> None:
        if on_progress is not None:
            on_progress({"event": event, "seconds": time.perf_counter() - t0, **kw})

    greedy = _greedy_start(data, ncost, warm_start)
    greedy_obj = dag_cost(greedy, ncost) if greedy is not None else None
    prob = prune(data, ncost)
    built = build_model(data, prob, ncost, greedy_obj, NEED_LIMIT, deadline=t0 + time_limit)
    solved, sizes = None, None
    floor = _root_floor(data, ncost)
    if built is None:
        answer = Answer(None, IlpStatus.FALLBACK, None, "time limit used up building the model")
    else:
        model, sizes = built
        floor = max(floor, mandatory_floor(model, ncost))
        progress("model", **asdict(sizes))
        start = warm_start_vector(model, prob, greedy) if greedy is not None else None
        time_left = time_limit * (1 - READBACK_SHARE) - (time.perf_counter() - t0)
        answer = solve(model, time_left, start, rel_gap, verbose, progress if on_progress is not None else None)
        solved = decode(model, prob, answer.x) if answer.x is not None else None
    chosen, message = _accept(answer, solved, ncost, greedy_obj)
    status, source = answer.status, IlpSource.ILP
    if chosen is None:
        if greedy is None:
            raise ExtractionError(f"ILP extraction failed ({message or 'fallback'}) and there is no greedy selection")
        chosen, status, source = greedy, IlpStatus.FALLBACK, IlpSource.GREEDY
    obj = float(dag_cost(chosen, ncost))
    bound = min(max(answer.bound, floor) if answer.bound is not None else floor, obj)
    gap = 0.0 if obj <= 0 else max(0.0, (obj - bound) / obj)
    res = IlpResult(chosen, status, obj, bound, gap, time.perf_counter() - t0, source, greedy_obj, sizes, message)
    progress("done", status=status.value, objective=obj, bound=bound, gap=gap, source=source.value)
    return res
