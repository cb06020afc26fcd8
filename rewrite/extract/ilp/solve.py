"""Solving the model with HiGHS and reading its answer back as a selection.

``solve`` never raises for a solver failure: it answers ``FALLBACK`` with a message, and the caller
returns the greedy selection.

    >>> # answer = solve(model, time_left=9.5, start=None, rel_gap=1e-6, verbose=False, progress=print)
    >>> # answer.status, answer.bound, decode(model, prob, answer.x)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewrite.extract.egraph_data import ENode
from rewrite.extract.ilp.model import Model
from rewrite.extract.ilp.prune import Problem
from rewrite.extract.ilp.result import IlpStatus
from rewrite.extract.ilp.selection import walk

MIN_SOLVE_SECONDS = 0.01  # less time than this left after building the model: do not start HiGHS

Progress = Callable[..., None]  # progress(event, **figures)


@dataclass
class Answer:
    """The solver's column values (None if unusable), how the solve ended, and its proved bound (unscaled)."""

    x: np.ndarray | None
    status: IlpStatus
    bound: float | None = None
    message: str = ""


def _highs_model(highspy: Any, model: Model) -> Any:
    """The model as a column-wise ``HighsLp``."""
    rows = model.rows
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = model.ncols, rows.count
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = model.cost, np.zeros(model.ncols), model.upper
    lp.row_lower_, lp.row_upper_ = np.array(rows.lo), np.array(rows.hi)
    ri, rj, rv = np.array(rows.i, dtype=np.int64), np.array(rows.j, dtype=np.int64), np.array(rows.v)
    order = np.lexsort((ri, rj))
    starts = np.searchsorted(rj[order], np.arange(model.ncols + 1))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = model.ncols, rows.count
    lp.a_matrix_.start_ = starts.astype(np.int32)
    lp.a_matrix_.index_ = ri[order].astype(np.int32)
    lp.a_matrix_.value_ = rv[order]
    lp.integrality_ = [highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous for v in model.integral]
    return lp


def _solver(
    highspy: Any, model: Model, time_left: float, start: np.ndarray | None, rel_gap: float, verbose: bool
) -> Any:
    """A configured ``Highs`` holding the model and, when there is one, the warm start."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("time_limit", float(time_left))
    h.setOptionValue("mip_rel_gap", float(rel_gap))
    h.setOptionValue("mip_abs_gap", 1e-9)
    h.setOptionValue("random_seed", 0)
    h.passModel(_highs_model(highspy, model))
    if start is not None:
        sol = highspy.HighsSolution()
        sol.col_value = start
        sol.value_valid = True
        h.setSolution(sol)
    return h


def _read_answer(highspy: Any, h: Any, scale: float) -> Answer:
    """After ``h.run()``: a feasible point with its status, or ``FALLBACK`` and the model status."""
    ms = h.getModelStatus()
    info = h.getInfo()
    bound = info.mip_dual_bound / scale if math.isfinite(info.mip_dual_bound) else None
    x = np.asarray(h.getSolution().col_value) if info.primal_solution_status == 2 else None  # 2: feasible
    if x is not None and ms == highspy.HighsModelStatus.kOptimal:
        return Answer(x, IlpStatus.OPTIMAL, bound)
    if x is not None and ms in (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kInterrupt):
        return Answer(x, IlpStatus.TIME_LIMIT, bound)
    return Answer(None, IlpStatus.FALLBACK, bound, f"HiGHS: {h.modelStatusToString(ms)}")


def solve(
    model: Model,
    time_left: float,
    start: np.ndarray | None,
    rel_gap: float,
    verbose: bool,
    progress: Progress | None = None,
) -> Answer:
    """Solve within ``time_left`` seconds; ``progress("incumbent", objective=..., bound=...)`` per improvement."""
    if not model.classes:  # everything is free
        return Answer(np.zeros(0), IlpStatus.OPTIMAL, 0.0)
    if time_left <= MIN_SOLVE_SECONDS:
        return Answer(None, IlpStatus.FALLBACK, None, "time limit used up before the solve")
    import highspy  # deferred: HiGHS loads only when an ILP is solved

    h = _solver(highspy, model, time_left, start, rel_gap, verbose)
    if progress is not None:  # subscribed only when asked: a callback is work inside the solve
        report = progress

        def improved(e: Any) -> None:
            out = e.data_out
            bound = out.mip_dual_bound / model.scale if math.isfinite(out.mip_dual_bound) else None
            report("incumbent", objective=out.objective_function_value / model.scale, bound=bound)

        h.cbMipImprovingSolution.subscribe(improved)
    try:
        h.run()
        return _read_answer(highspy, h, model.scale)
    except Exception as e:  # a solver failure falls back to greedy
        return Answer(None, IlpStatus.FALLBACK, None, f"HiGHS failed: {e}")


def decode(model: Model, prob: Problem, x: np.ndarray) -> dict[str, ENode] | None:
    """The selection the column values pick from the roots (free classes -> witnesses); None if cyclic."""

    def pick(c: str) -> ENode | None:
        if c in prob.free:
            return prob.free[c]
        if c not in model.classes:
            return None
        best = max(model.classes[c], key=lambda n: x[model.col_of[n.id]])
        return best if x[model.col_of[best.id]] > 0.5 else None

    return walk(prob.roots, pick)
