"""Solving the model with HiGHS and reading its answer back as a selection.

``solve`` never raises for a solver failure: it answers ``FALLBACK`` with a message, and the caller
returns the greedy selection.

    >>> # answer = solve(model, time_left=9.5, start=None, rel_gap=1e-6, verbose=False, progress=print)
    >>> # answer.status, answer.bound, decode(model, prob, answer.x)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewrite.extract.egraph_data import ENode
from rewrite.extract.ilp.model import Model
from rewrite.extract.ilp.prune import Problem
from rewrite.extract.ilp.result import IlpStatus
from rewrite.extract.ilp.selection import walk
from rewrite.extract.ilp.split import Part, components, groups

MIN_SOLVE_SECONDS = 0.01  # less time than this left after building the model: do not start HiGHS

Progress = Callable[..., None]  # progress(event, **figures)


@dataclass
class Answer:
    """The solver's column values (None if unusable), how the solve ended, and its proved bound (unscaled)."""

    x: np.ndarray | None
    status: IlpStatus
    bound: float | None = None
    message: str = ""


@dataclass(frozen=True)
class _Program:
    """One part of the model (``split.components``) as HiGHS takes it: columns renumbered from 0."""

    cost: np.ndarray
    upper: np.ndarray
    integral: np.ndarray
    ri: np.ndarray  # nonzeros: row, column, value
    rj: np.ndarray
    rv: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def _programs(model: Model) -> list[tuple[Part, _Program]]:
    """The model's independent parts, smallest first, each with its own program."""
    rows = model.rows
    ri, rj, rv = np.asarray(rows.i, dtype=np.int64), np.asarray(rows.j, dtype=np.int64), np.asarray(rows.v)
    lo, hi = np.asarray(rows.lo, dtype=float), np.asarray(rows.hi, dtype=float)
    col_new = np.zeros(model.ncols, dtype=np.int64)
    row_new = np.zeros(rows.count, dtype=np.int64)
    row_part = np.full(rows.count, -1, dtype=np.int64)
    parts = model.parts or components(model.ncols, rows.count, rows.i, rows.j)
    for k, part in enumerate(parts):
        col_new[part.cols] = np.arange(len(part.cols))
        row_new[part.rows] = np.arange(len(part.rows))
        row_part[part.rows] = k
    by_part = groups(row_part[ri])  # each part's nonzeros, grouped once (not a scan of all nonzeros per part)
    none = np.zeros(0, dtype=np.int64)
    out = []
    for k, part in enumerate(parts):
        sel = by_part.get(k, none)
        out.append(
            (
                part,
                _Program(
                    model.cost[part.cols],
                    model.upper[part.cols],
                    model.integral[part.cols],
                    row_new[ri[sel]],
                    col_new[rj[sel]],
                    rv[sel],
                    lo[part.rows],
                    hi[part.rows],
                ),
            )
        )
    return out


def _highs_model(highspy: Any, p: _Program) -> Any:
    """A part as a column-wise ``HighsLp``."""
    ncols, nrows = len(p.cost), len(p.lo)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = ncols, nrows
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = p.cost, np.zeros(ncols), p.upper
    lp.row_lower_, lp.row_upper_ = p.lo, p.hi
    order = np.lexsort((p.ri, p.rj))
    starts = np.searchsorted(p.rj[order], np.arange(ncols + 1))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = ncols, nrows
    lp.a_matrix_.start_ = starts.astype(np.int32)
    lp.a_matrix_.index_ = p.ri[order].astype(np.int32)
    lp.a_matrix_.value_ = p.rv[order]
    lp.integrality_ = [highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous for v in p.integral]
    return lp


def _solver(
    highspy: Any, p: _Program, time_left: float, start: np.ndarray | None, rel_gap: float, verbose: bool
) -> Any:
    """A configured ``Highs`` holding one part and, when there is one, its warm start."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("time_limit", float(time_left))
    h.setOptionValue("mip_rel_gap", float(rel_gap))
    h.setOptionValue("mip_abs_gap", 1e-9)
    h.setOptionValue("random_seed", 0)
    h.passModel(_highs_model(highspy, p))
    if start is not None:
        sol = highspy.HighsSolution()
        sol.col_value = start
        sol.value_valid = True
        h.setSolution(sol)
    return h


def _read_answer(highspy: Any, h: Any) -> Answer:
    """After ``h.run()``: a feasible point with its status and scaled bound, or ``FALLBACK`` and the model status."""
    ms = h.getModelStatus()
    info = h.getInfo()
    bound = info.mip_dual_bound if math.isfinite(info.mip_dual_bound) else None
    x = np.asarray(h.getSolution().col_value) if info.primal_solution_status == 2 else None  # 2: feasible
    if x is not None and ms == highspy.HighsModelStatus.kOptimal:
        return Answer(x, IlpStatus.OPTIMAL, bound)
    if x is not None and ms in (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kInterrupt):
        return Answer(x, IlpStatus.TIME_LIMIT, bound)
    return Answer(None, IlpStatus.FALLBACK, bound, f"HiGHS: {h.modelStatusToString(ms)}")


def _solve_part(
    highspy: Any, p: _Program, time_left: float, start: np.ndarray | None, rel_gap: float, verbose: bool, on_better: Any
) -> Answer:
    h = _solver(highspy, p, time_left, start, rel_gap, verbose)
    if on_better is not None:  # subscribed only when asked: a callback is work inside the solve
        h.cbMipImprovingSolution.subscribe(on_better)
    try:
        h.run()
        return _read_answer(highspy, h)
    except Exception as e:  # a solver failure falls back
        return Answer(None, IlpStatus.FALLBACK, None, f"HiGHS failed: {e}")


def solve(
    model: Model,
    time_left: float,
    start: np.ndarray | None,
    rel_gap: float,
    verbose: bool,
    progress: Progress | None = None,
) -> Answer:
    """Solve within ``time_left`` seconds, part by part (``split.components``, smallest first);
    ``progress("incumbent", objective=..., bound=...)`` per improvement (objectives known only with a start).

    The parts' optima add up to the whole's, their bounds to a bound.  A part left without time keeps its
    columns of the warm start, which is feasible part by part, and adds 0 to the bound (costs are
    non-negative); without a warm start, or when HiGHS fails on a part, the whole answer is ``FALLBACK``.
    """
    if not model.classes:  # everything is free
        return Answer(np.zeros(0), IlpStatus.OPTIMAL, 0.0)
    if time_left <= MIN_SOLVE_SECONDS:
        return Answer(None, IlpStatus.FALLBACK, None, "time limit used up before the solve")
    import highspy  # deferred: HiGHS loads only when an ILP is solved

    deadline = time.perf_counter() + time_left
    progs = _programs(model)
    x = np.zeros(model.ncols)
    bound, status, notes = 0.0, IlpStatus.OPTIMAL, []
    done_obj = 0.0  # scaled objective of the parts solved so far
    rest_obj = float(model.cost @ start) if start is not None else math.nan  # ... and the start's on the others
    for part, prog in progs:
        sub_start = start[part.cols] if start is not None else None
        if sub_start is not None:
            rest_obj -= float(prog.cost @ sub_start)
        left = deadline - time.perf_counter()
        ans = Answer(None, IlpStatus.TIME_LIMIT, None, "time limit used up before this part")
        if left > MIN_SOLVE_SECONDS:
            on_better = None
            if progress is not None and start is not None:
                report, base = progress, done_obj + rest_obj

                def on_better(e: Any, base: float = base, report: Progress = report) -> None:
                    out = e.data_out
                    report("incumbent", objective=(base + out.objective_function_value) / model.scale, bound=None)

            ans = _solve_part(highspy, prog, left, sub_start, rel_gap, verbose, on_better)
        if ans.x is None:
            if sub_start is None or ans.status is IlpStatus.FALLBACK:  # no start, or the solver failed
                return Answer(None, IlpStatus.FALLBACK, None, ans.message)
            ans = Answer(sub_start, IlpStatus.TIME_LIMIT, None, ans.message)  # out of time: the start's part
        x[part.cols] = ans.x
        done_obj += float(prog.cost @ ans.x)
        bound += ans.bound if ans.bound is not None else 0.0
        if ans.status is not IlpStatus.OPTIMAL:
            status = IlpStatus.TIME_LIMIT
            if ans.message:
                notes.append(ans.message)
    return Answer(x, status, bound / model.scale, notes[0] if notes else "")


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
