"""Schedules as data: recorded, replayable, printable loop transformations.

Each step is a frozen dataclass with ``apply(kernel) -> kernel``.  A step
checks its preconditions first and raises ``ScheduleError`` (a
``LoweringError``) explaining what is illegal instead of transforming.  A
``Schedule`` records the steps applied to a kernel; ``replay`` applies the
same steps to a fresh copy; ``str(schedule)`` prints them one per line.

    >>> s = Schedule(kernel).split("i", 4).vectorize("i.i")     # doctest: +SKIP
    >>> print(s)                                                 # doctest: +SKIP
    split('i', 4)
    vectorize('i.i')
    >>> s.replay(kernel) == s.kernel                             # doctest: +SKIP
    True
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lower.ir import Kernel
from lower.ops_to_loops.core import GemmInfo
from lower.schedule.gemm_steps import FoldInit, FoldInitRows, FoldPostRows, Tensorize
from lower.schedule.loop_steps import Fuse, Parallel, Reorder, Split, Step, Unroll, Vectorize
from lower.schedule.stage_steps import ComputeAt, Inline, Pack
from rewrite import config
from rewrite.ir.errors import DecisionError
from rewrite.ir.target import Target


def recipe_inputs(kernel: Kernel, gemm: GemmInfo | None, const_names: set[str], target: Target) -> str:
    """What a recipe's schedule of ``kernel`` is a function of, as text: the target's cache key and
    ``EQSAT_PACK_A``, ``repr`` of its ``GemmInfo`` and sorted constant buffers, its notes but the fused group's
    (provenance: node ids), and the kernel as printed under a fixed name (kernels of another graph or position
    are the same).  Schedules (``cache.schedule_key``) and tuning records (``lower.tune.records.record_key``)
    are keyed by it."""
    return "\n".join(
        [
            target.cache_key,
            f"pack_a={config.PACK_A.flag()}",
            repr(gemm),
            repr(sorted(const_names)),
            repr(sorted((k, v) for k, v in kernel.meta.items() if k != "group")),
            str(dataclasses.replace(kernel, name="_")),
        ]
    )


# ============================================================== decisions
@dataclass(frozen=True)
class Decision:
    """One choice a recipe makes (``Schedule.decide``): its name, the values that are legal for this kernel
    where the recipe asks, and the one the recipe picks by rule.  A recipe's decisions, read from one run, are
    its search space (``lower.tune``): TVM's knobs, MetaSchedule's sampling instructions, asked define-by-run
    so a choice's legal values may depend on the ones before it."""

    name: str
    choices: tuple[Hashable, ...]
    default: Hashable


# ============================================================== schedule record
@dataclass
class Schedule:
    """The steps applied to a kernel, in order.  ``s.split("i", 4).vectorize("i.i")``."""

    kernel: Kernel
    steps: list[Step] = field(default_factory=list)
    # the values asked for by name (a tuning candidate); a name not here takes its default, or with ``rng`` a
    # value drawn from its choices
    fixed: Mapping[str, Hashable] = field(default_factory=dict)
    rng: random.Random | None = None
    decisions: dict[str, Hashable] = field(default_factory=dict)  # every decision taken, by name
    space: dict[str, Decision] = field(default_factory=dict)  # and where it was taken, what was legal

    def decide(self, name: str, choices: Sequence[Hashable], default: Hashable) -> Any:
        """The value of decision ``name``: ``fixed[name]`` when asked for (a ``DecisionError`` when it is not
        one of ``choices``), else with ``rng`` a random one of ``choices``, else ``default``; recorded in
        ``decisions`` and ``space``.  ``choices`` lists the legal values (``default`` among them)."""
        opts = tuple(dict.fromkeys([default, *choices]))
        if name in self.space:
            raise DecisionError(f"decision {name!r} asked twice")
        if name in self.fixed:
            value = self.fixed[name]
            if value not in opts:
                raise DecisionError(f"decision {name}={value!r} is not one of {list(opts)}")
        elif self.rng is not None:
            value = opts[self.rng.randrange(len(opts))]
        else:
            value = default
        self.space[name] = Decision(name, opts, default)
        self.decisions[name] = value
        return value

    def restart(self, kernel: Kernel) -> Schedule:
        """A fresh schedule of ``kernel`` taking decisions as this one does, with the ones taken so far kept (a
        recipe that falls back to another after a refusal)."""
        return Schedule(kernel, [], self.fixed, self.rng, dict(self.decisions), dict(self.space))

    def apply(self, step: Step) -> Schedule:
        self.kernel = step.apply(self.kernel)
        self.steps.append(step)
        return self

    def applied(self, step: Step, kernel: Kernel) -> Schedule:
        """Record ``step`` whose result ``kernel`` (``step.apply(self.kernel)``) the caller already has: a
        recipe that tries a step and inspects the result before keeping it need not apply it twice."""
        self.kernel = kernel
        self.steps.append(step)
        return self

    def split(self, loop: str, factor: int) -> Schedule:
        return self.apply(Split(loop, factor))

    def reorder(self, *loops: str) -> Schedule:
        return self.apply(Reorder(tuple(loops)))

    def fuse(self, outer: str, inner: str) -> Schedule:
        return self.apply(Fuse(outer, inner))

    def vectorize(self, loop: str) -> Schedule:
        return self.apply(Vectorize(loop))

    def parallel(self, loop: str) -> Schedule:
        return self.apply(Parallel(loop))

    def unroll(self, loop: str) -> Schedule:
        return self.apply(Unroll(loop))

    def compute_at(self, stage: str, loop: str) -> Schedule:
        return self.apply(ComputeAt(stage, loop))

    def fold_init(self, init: str, stage: str, k: str) -> Schedule:
        return self.apply(FoldInit(init, stage, k))

    def fold_init_rows(self, init: str, stage: str) -> Schedule:
        return self.apply(FoldInitRows(init, stage))

    def fold_post_rows(self, stage: str, post: str) -> Schedule:
        return self.apply(FoldPostRows(stage, post))

    def inline(self, stage: str) -> Schedule:
        return self.apply(Inline(stage))

    def pack(
        self, stage: str, buffer: str, at: str | None, layout: Sequence[str], name: str, min_sizes: Sequence[int] = ()
    ) -> Schedule:
        return self.apply(Pack(stage, buffer, at, tuple(layout), name, tuple(min_sizes)))

    def tensorize(
        self, loop: str, mr: int = 8, nr: int = 32, stream: str = "", segments: bool = False, runs: int = 0
    ) -> Schedule:
        return self.apply(Tensorize(loop, mr, nr, stream, segments, runs))

    def replay(self, kernel: Kernel) -> Kernel:
        for s in self.steps:
            kernel = s.apply(kernel)
        return kernel

    def __str__(self) -> str:
        return "\n".join(str(s) for s in self.steps) or "(no steps)"
