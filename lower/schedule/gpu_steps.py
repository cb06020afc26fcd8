"""GPU binding steps: ``BindBlocks`` (a stage's outermost loop -> the grid) and ``BindThreads``
(the loop directly inside it -> the threads of a block).

A GPU backend launches each top-level statement of a kernel (each stage) as its own grid, in order,
so that a stage may read everything the stages before it wrote.  Inside a stage, different blocks
and different threads run concurrently with no ordering, so both steps refuse unless every
iteration writes elements no other iteration touches (the same access-box check as ``Parallel``):

    before::                              after bind_blocks("i.o"), bind_threads("i.i")::
        stage relu3 {                         stage relu3 {
          for i.o in 0..64 {                    blocks for i.o in 0..64 {
            for i.i in 0..256 {                   threads for i.i in 0..256 {
              out[i.o * 256 + i.i] = ...            out[i.o * 256 + i.i] = ...

    >>> str(BindThreads("i.i"))
    "bindthreads('i.i')"
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from lower.ir import (
    For,
    IntImm,
    Intrinsic,
    Kernel,
    LoopKind,
    Stage,
    Stmt,
    bounds,
    enclosing,
    format_expr,
    replace_loop,
    top_stmts,
    unwrap_locals,
    walk_stmt,
)
from lower.schedule.checks import accesses, conflict, need_loop, sample_points
from lower.schedule.loop_steps import Step
from rewrite.ir.errors import ScheduleError

MAX_THREADS = 1024  # threads of one CUDA block


def _stage_root(s: Stmt) -> Stmt:
    while isinstance(s, Stage):
        s = s.body
    return s


def _check_independent(nest: list[For], var: str, same: tuple[str, ...], step: str) -> None:
    """Refuse unless iterations of loop ``var`` (with the loops named in ``same`` at equal values) write
    disjoint elements and read none another writes.  Points fix every loop of ``nest`` (the bound
    loop with its enclosing or enclosed one), so fused and split indices are exact at each point."""
    lp = nest[-1] if nest[-1].var.name == var else nest[0]
    if any(isinstance(s, Intrinsic) for s in walk_stmt(lp.body)):
        raise ScheduleError(f"{step}: cannot analyse the writes of an intrinsic; bind before tensorize")
    pts = sample_points(nest, {})
    acc = [accesses(nest[-1].body, p) for p in pts]
    for a, b in itertools.combinations(range(len(pts)), 2):
        pa, pb = pts[a], pts[b]
        if pa[var] == pb[var] or any(pa[n] != pb[n] for n in same):
            continue
        c = conflict(acc[a][0], acc[a][1], acc[b][0], acc[b][1])
        if c:
            raise ScheduleError(
                f"{step}: iterations {pa[var][0]} and {pb[var][0]} of {var} both touch the same elements of {c} "
                "(one of them writing); they cannot run concurrently"
            )


@dataclass(frozen=True)
class BindBlocks(Step):
    """Run a stage's outermost loop as the grid: one iteration per thread block.

    Refused for a loop that is not the outermost loop of a top-level statement, a non-constant
    extent, kernel-level scratch (one launch per stage cannot share it), or dependent iterations.
    """

    loop: str

    def apply(self, k: Kernel) -> Kernel:
        step = f"bind_blocks({self.loop!r})"
        lp = need_loop(k.body, self.loop, "bind_blocks")
        if not any(_stage_root(t) is lp for t in top_stmts(k.body)):
            raise ScheduleError(f"{step}: only the outermost loop of a top-level stage can be bound to the grid")
        if unwrap_locals(k.body)[0]:
            raise ScheduleError(f"{step}: the kernel has kernel-level scratch buffers, shared by all its stages")
        if not isinstance(lp.extent, IntImm) or lp.extent.value < 1:
            raise ScheduleError(f"{step}: extent {format_expr(lp.extent)} is not a positive constant")
        if lp.kind is not LoopKind.SERIAL:
            raise ScheduleError(f"{step}: loop {self.loop} is already {lp.kind.value}")
        nest = [lp, lp.body] if isinstance(lp.body, For) else [lp]
        _check_independent(nest, self.loop, (), step)
        return k.with_body(replace_loop(k.body, self.loop, lambda s: For(s.var, s.extent, s.body, LoopKind.BLOCKS)))


@dataclass(frozen=True)
class BindThreads(Step):
    """Run the loop directly inside a ``blocks`` loop on the threads of each block.

    Its extent may depend on the block loop (a split's tail) but needs a constant bound of at most
    1024 (the block size); iterations must be independent.
    """

    loop: str

    def apply(self, k: Kernel) -> Kernel:
        step = f"bind_threads({self.loop!r})"
        lp = need_loop(k.body, self.loop, "bind_threads")
        path = enclosing(k.body, lp) or []
        outer = path[-2] if len(path) >= 2 and isinstance(path[-2], For) else None
        if outer is None or outer.kind is not LoopKind.BLOCKS or outer.body is not lp:
            raise ScheduleError(f"{step}: the loop must be the whole body of a loop bound to blocks")
        b = bounds(lp.extent, {outer.var.name: (0, outer.extent.value - 1)} if isinstance(outer.extent, IntImm) else {})
        if b is None or b[1] > MAX_THREADS or b[1] < 1:
            raise ScheduleError(
                f"{step}: extent {format_expr(lp.extent)} needs a constant bound between 1 and {MAX_THREADS}"
            )
        if lp.kind is not LoopKind.SERIAL:
            raise ScheduleError(f"{step}: loop {self.loop} is already {lp.kind.value}")
        _check_independent([outer, lp], self.loop, (outer.var.name,), step)
        return k.with_body(replace_loop(k.body, self.loop, lambda s: For(s.var, s.extent, s.body, LoopKind.THREADS)))


__all__ = ["MAX_THREADS", "BindBlocks", "BindThreads"]
