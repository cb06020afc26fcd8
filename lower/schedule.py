"""Schedules as data: recorded, replayable, printable loop transformations.

Each step is a frozen dataclass with ``apply(kernel) -> kernel``.  A step
checks its preconditions first and raises ``ScheduleError`` (a
``LoweringError``) explaining what is illegal instead of transforming.  A
``Schedule`` records the steps applied to a kernel; ``replay`` applies the
same steps to a fresh copy; ``str(schedule)`` prints them one per line.

The default schedule for each op group is built from shapes in
``schedule_kernel`` (``lower/recipes.py``).

The module is split by concern; everything stays importable from here:

- ``lower.schedule_checks``: ``ScheduleError``, loop-structure queries and
  the access-region legality checks the steps use;
- ``lower.schedule_loop_steps``: the ``Step`` base and the loop-level steps;
- ``lower.schedule_stage_steps``: the stage-level steps;
- this module: the ``Schedule`` record (apply, replay, print).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from lower.loop_ir import Kernel, loop_names

# Re-exported: the steps and the analyses were split out of this module; keep them importable from here.
from lower.schedule_checks import (
    POINT_BUDGET,
    Box,
    ScheduleError,
    _box,
    _chain,
    _check_body_reorderable,
    _check_vectorizable,
    _conflict,
    _fresh,
    _merge,
    _need_loop,
    _overlap,
    _perfect_prefix,
    _points,
    _rewrap,
    _sample,
    _top_stmts,
    _unwrap,
    accesses,
    affine_in,
    collapse_index,
    enclosing,
    outer_ranges,
    replace_loop,
    root_loop_of,
)  # noqa: F401
from lower.schedule_loop_steps import Fuse, Parallel, Reorder, Split, Step, Unroll, Vectorize  # noqa: F401
from lower.schedule_stage_steps import ComputeAt, GemmIntrinsic, Inline, Pack, Tensorize, _below, _operand, inline_stage  # noqa: F401


# ============================================================== schedule record
@dataclass
class Schedule:
    """The steps applied to a kernel, in order.  ``s.split("i", 4).vectorize("i.i")``."""

    kernel: Kernel
    steps: list[Step] = field(default_factory=list)

    def apply(self, step: Step) -> "Schedule":
        self.kernel = step.apply(self.kernel)
        self.steps.append(step)
        return self

    def split(self, loop: str, factor: int) -> "Schedule":
        return self.apply(Split(loop, factor))

    def reorder(self, *loops: str) -> "Schedule":
        return self.apply(Reorder(tuple(loops)))

    def fuse(self, outer: str, inner: str) -> "Schedule":
        return self.apply(Fuse(outer, inner))

    def vectorize(self, loop: str) -> "Schedule":
        return self.apply(Vectorize(loop))

    def parallel(self, loop: str) -> "Schedule":
        return self.apply(Parallel(loop))

    def unroll(self, loop: str) -> "Schedule":
        return self.apply(Unroll(loop))

    def compute_at(self, stage: str, loop: str) -> "Schedule":
        return self.apply(ComputeAt(stage, loop))

    def inline(self, stage: str) -> "Schedule":
        return self.apply(Inline(stage))

    def pack(
        self, stage: str, buffer: str, at: str | None, layout: Sequence[str], name: str, min_sizes: Sequence[int] = ()
    ) -> "Schedule":
        return self.apply(Pack(stage, buffer, at, tuple(layout), name, tuple(min_sizes)))

    def tensorize(self, loop: str, mr: int = 8, nr: int = 32) -> "Schedule":
        return self.apply(Tensorize(loop, mr, nr))

    def replay(self, kernel: Kernel) -> Kernel:
        for s in self.steps:
            kernel = s.apply(kernel)
        return kernel

    def __str__(self) -> str:
        return "\n".join(str(s) for s in self.steps) or "(no steps)"


def last_loop_name(k: Kernel) -> str:
    return loop_names(k.body)[-1]
