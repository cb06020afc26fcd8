"""One part of the 0-1 program as HiGHS takes it, solved in this process: the model, the options, the answer.

``solve_part`` never raises for a solver failure: it answers ``FALLBACK`` with a message.  ``child`` runs the
same ``solve_part`` in a process of its own, for parts big enough that HiGHS may overrun its time limit.

    >>> # answer = solve_part(program, time_left=9.5, start=None, rel_gap=1e-6, verbose=False)
    >>> # answer.status, answer.bound, answer.x
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewrite.extract.ilp.result import IlpStatus

OnIncumbent = Callable[[float, np.ndarray], None]  # on_incumbent(scaled objective, column values) per improvement


@dataclass
class Answer:
    """The solver's column values (None if unusable), how the solve ended, and its proved bound (scaled)."""

    x: np.ndarray | None
    status: IlpStatus
    bound: float | None = None
    message: str = ""


@dataclass(frozen=True)
class Program:
    """One part of the model (``split.components``) as HiGHS takes it: columns renumbered from 0."""

    cost: np.ndarray
    upper: np.ndarray
    integral: np.ndarray
    ri: np.ndarray  # nonzeros: row, column, value
    rj: np.ndarray
    rv: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


_IMPORT_LOCK = threading.Lock()


@functools.cache
def _libc() -> Any:
    return ctypes.CDLL(None)


def load_highspy() -> Any:
    """``highspy``, imported on first use (HiGHS loads only when an ILP is solved), its banner swallowed.

    HiGHS prints a banner ("Running HiGHS ... Copyright ...") on the C++ stdout when a process's first solver
    is built, before any option can turn output off; a library call must not print.  So the first solver is
    built with file descriptor 1 pointed at /dev/null (C's stdio flushed on both sides of the swap); HiGHS
    prints it once per process, so later solvers are quiet by ``output_flag`` alone."""
    with _IMPORT_LOCK:
        return _quiet_highspy()


@functools.cache
def _quiet_highspy() -> Any:
    import highspy

    sys.stdout.flush()
    _libc().fflush(None)
    saved, sink = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(sink, 1)
        highspy.Highs()
        _libc().fflush(None)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(sink)
    return highspy


def _highs_model(highspy: Any, p: Program) -> Any:
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


def solver(highspy: Any, p: Program, time_left: float, start: np.ndarray | None, rel_gap: float, verbose: bool) -> Any:
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


def read_answer(highspy: Any, h: Any) -> Answer:
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


def solve_part(
    p: Program,
    time_left: float,
    start: np.ndarray | None,
    rel_gap: float,
    verbose: bool,
    on_incumbent: OnIncumbent | None = None,
    on_bound: Callable[[float], None] | None = None,
) -> Answer:
    """Solve one part here, within HiGHS's own time limit (which its root work can overrun: see ``child``);
    ``on_bound(scaled bound)`` whenever HiGHS checks in with a better proved bound."""
    highspy = load_highspy()
    try:
        h = solver(highspy, p, time_left, start, rel_gap, verbose)
        if on_incumbent is not None:  # subscribed only when asked: a callback is work inside the solve
            report = on_incumbent
            h.cbMipImprovingSolution.subscribe(
                lambda e: report(float(e.data_out.objective_function_value), np.array(e.data_out.mip_solution))
            )
        if on_bound is not None:
            best = [-math.inf]

            def check_in(e: Any, tell: Callable[[float], None] = on_bound) -> None:
                b = float(e.data_out.mip_dual_bound)
                if math.isfinite(b) and b > best[0]:
                    best[0] = b
                    tell(b)

            h.cbMipInterrupt.subscribe(check_in)
        h.run()
        return read_answer(highspy, h)
    except Exception as e:  # a solver failure falls back
        return Answer(None, IlpStatus.FALLBACK, None, f"HiGHS failed: {e}")
