"""Schedules as data: the ``Schedule`` record, its steps, their legality checks, and the default recipes.

    >>> from lower.schedule import Schedule
    >>> s = Schedule(kernel).split("i", 4).vectorize("i.i")     # doctest: +SKIP
    >>> print(s)                                                 # doctest: +SKIP
    split('i', 4)
    vectorize('i.i')

Modules, each importing only those before it: ``checks`` (loop lookup, fresh
names, access-region legality), ``loop_steps`` (``Step`` and the loop-level
steps), ``stage_steps`` (stage-level steps), ``record`` (``Schedule``),
``gpu_steps`` / ``gpu_recipes`` (GPU block and thread binding), ``recipes``
(the default schedule per op group, from shapes and the target), ``cache``
(each recipe's schedule built once, in memory and on disk).
Only public names cross module boundaries; this package exports what users
of schedules need.
"""

from __future__ import annotations

from lower.schedule.gemm_steps import (
    STREAMS,
    FoldInit,
    FoldInitRows,
    FoldPostRows,
    Tensorize,
    micro_kernel_name,
    micro_kernel_parts,
)
from lower.schedule.gpu_steps import BindBlocks, BindThreads, BlockRows, TileGemm
from lower.schedule.loop_steps import Fuse, Parallel, Reorder, Split, Step, Unroll, Vectorize
from lower.schedule.recipes import schedule_kernel
from lower.schedule.record import Schedule
from lower.schedule.stage_steps import ComputeAt, Inline, Pack, inline_stage
from rewrite.ir.errors import ScheduleError

__all__ = [
    "STREAMS",
    "BindBlocks",
    "BindThreads",
    "BlockRows",
    "ComputeAt",
    "FoldInit",
    "FoldInitRows",
    "FoldPostRows",
    "Fuse",
    "Inline",
    "Pack",
    "Parallel",
    "Reorder",
    "Schedule",
    "ScheduleError",
    "Split",
    "Step",
    "Tensorize",
    "TileGemm",
    "Unroll",
    "Vectorize",
    "inline_stage",
    "micro_kernel_name",
    "micro_kernel_parts",
    "schedule_kernel",
]
