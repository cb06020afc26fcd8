"""Solving the model part by part with HiGHS (``highs``; big parts in a child process, ``child``) and reading
its answer back as a selection.

``solve`` never raises for a solver failure: it answers ``FALLBACK`` with a message, and the caller
returns the greedy selection.

    >>> # answer = solve(model, time_left=9.5, start=None, rel_gap=1e-6, verbose=False, progress=print)
    >>> # answer.status, answer.bound, decode(model, prob, answer.x)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from rewrite.extract.egraph_data import ENode
from rewrite.extract.ilp.child import CHILD_MIN_NONZEROS, solve_in_child
from rewrite.extract.ilp.highs import Answer, OnIncumbent, Program, solve_part
from rewrite.extract.ilp.model import Model
from rewrite.extract.ilp.prune import Problem
from rewrite.extract.ilp.result import IlpStatus
from rewrite.extract.ilp.selection import walk
from rewrite.extract.ilp.split import Part, components, groups

MIN_SOLVE_SECONDS = 0.01  # less time than this left after building the model: do not start HiGHS

Progress = Callable[..., None]  # progress(event, **figures)


def _programs(model: Model) -> list[tuple[Part, Program]]:
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
                Program(
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


def _in_child(prog: Program) -> bool:
    """Whether ``_solve_part`` solves ``prog`` in a child process (stopped at the deadline), not in this one."""
    return len(prog.rv) >= CHILD_MIN_NONZEROS


def _solve_part(
    prog: Program,
    time_left: float,
    start: np.ndarray | None,
    rel_gap: float,
    verbose: bool,
    on_incumbent: OnIncumbent | None,
) -> Answer:
    """One part, here or, when it is big enough that HiGHS may overrun its limit, in a child process."""
    if _in_child(prog):
        return solve_in_child(prog, time_left, start, rel_gap, verbose, on_incumbent)
    return solve_part(prog, time_left, start, rel_gap, verbose, on_incumbent)


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
    columns of the warm start, which is feasible part by part, and adds what bound it proved, else 0 (costs are
    non-negative); without a warm start, or when HiGHS fails on a part, the whole answer is ``FALLBACK``.
    """
    if not model.classes:  # everything is free
        return Answer(np.zeros(0), IlpStatus.OPTIMAL, 0.0)
    if time_left <= MIN_SOLVE_SECONDS:
        return Answer(None, IlpStatus.FALLBACK, None, "time limit used up before the solve")
    deadline = time.perf_counter() + time_left
    progs = _programs(model)
    x = np.zeros(model.ncols)
    bound, status, notes = 0.0, IlpStatus.OPTIMAL, []
    done_obj = 0.0  # scaled objective of the parts solved so far
    rest_obj = float(model.cost @ start) if start is not None else math.nan  # ... and the start's on the others
    # HiGHS in this process overruns a short limit (BERT's 20k-nonzero parts: 0.48 s left, 0.74 s taken; the
    # limit passed by 0.31 s in a loaded CI): with a start to fall back on, a part is not begun with less time
    # left than the last part solved here took (smallest first: a floor for this one).  A child stops on time.
    took = 0.0
    for part, prog in progs:
        sub_start = start[part.cols] if start is not None else None
        if sub_start is not None:
            rest_obj -= float(prog.cost @ sub_start)
        left = deadline - time.perf_counter()
        ans = Answer(None, IlpStatus.TIME_LIMIT, None, "time limit used up before this part")
        here = not _in_child(prog)
        if left > MIN_SOLVE_SECONDS and not (here and sub_start is not None and left < took):
            on_better = None
            if progress is not None and start is not None:
                report, base = progress, done_obj + rest_obj

                def on_better(obj: float, _x: np.ndarray, base: float = base, report: Progress = report) -> None:
                    report("incumbent", objective=(base + obj) / model.scale, bound=None)

            t0 = time.perf_counter()
            ans = _solve_part(prog, left, sub_start, rel_gap, verbose, on_better)
            if here:
                took = time.perf_counter() - t0
        if ans.x is None:
            if sub_start is None or ans.status is IlpStatus.FALLBACK:  # no start, or the solver failed
                return Answer(None, IlpStatus.FALLBACK, None, ans.message)
            ans = Answer(sub_start, IlpStatus.TIME_LIMIT, ans.bound, ans.message)  # out of time: the start's part
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
