"""A kernel's search space and its candidates.

The space is read from the recipe itself: every choice a recipe makes by rule it asks through
``Schedule.decide(name, choices, default)`` (``lower.schedule.recipes``: a GEMM's micro-tile height,
row/column/k block sizes, loop order, which operands are packed or prefetched, whether it runs in
parallel; a direct convolution's folding, unrolling and parallel root; an elementwise or row kernel's
parallel launch and chunk size).  Run with its defaults it is the schedule ``compile`` uses; run with a
candidate's values (``fixed``) or random ones (``rng``) it builds that candidate, define-by-run as
MetaSchedule's traces are, so a choice's legal values may depend on the choices before it.

A candidate is checked before it is built: every step it applies checks its own legality (``ScheduleError``
otherwise), and ``check`` refuses one whose stack scratch exceeds ``STACK_MAX_BYTES`` (the kernel would
overflow a thread's stack, not raise).  A candidate is named by its decisions (``decisions_id``).

    >>> task = tasks_of(graph, parse_target("llvm"))[0]         # doctest: +SKIP
    >>> space_of(task)                                          # doctest: +SKIP
    {'mr': Decision(name='mr', choices=(12, 8), default=12), 'rows': ..., 'nc': ...}
"""

from __future__ import annotations

import json
import random
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from lower.fusion import BuiltKernel
from lower.ir import ITEM_BYTES, Allocate, Kernel, walk_stmt
from lower.ops_to_loops.core import GemmInfo
from lower.plan import plan_kernels
from lower.schedule import Schedule, ScheduleError, schedule_kernel
from lower.schedule.record import Decision
from lower.tune.records import record_key
from rewrite.ir.graph import Graph
from rewrite.ir.target import Target

# The most scratch one kernel may keep on its stack: the packing buffers of the default schedules stay under
# 2 MiB (``lower.llvm.driver``'s native threads have 32 MiB, a process's main thread 8 MiB).
STACK_MAX_BYTES = (2 << 20) + (64 << 10)

Decisions = dict[str, Hashable]


@dataclass
class TuneTask:
    """One distinct kernel of a graph to tune: unscheduled, with what its recipe reads."""

    name: str  # its name in the first graph it came from (``k3_matmul``)
    kernel: Kernel  # unscheduled
    gemm: GemmInfo | None
    const_names: frozenset[str]
    target: Target
    key: str  # its tuning record's key (``records.record_key``)
    n_params: int  # the kernel's parameters before scheduling adds packed buffers
    uses: int = 1  # kernels of the graph(s) that are this one
    where: list[str] = field(default_factory=list)  # "model:kernel" for each use

    def schedule(self, fixed: Mapping[str, Hashable] | None = None, rng: random.Random | None = None) -> Schedule:
        """The candidate ``fixed`` names (defaults elsewhere, or random ones with ``rng``), checked
        (``check``); a ``ScheduleError`` when it is not legal here."""
        s = schedule_kernel(self.kernel, self.gemm, set(self.const_names), self.target, fixed=fixed, rng=rng)
        if s is None:
            raise ScheduleError("EQSAT_NO_SCHEDULE is set: nothing to tune")
        check(s.kernel)
        return s


def check(kernel: Kernel) -> None:
    """Refuse a scheduled kernel whose stack scratch (its ``Allocate``s) exceeds ``STACK_MAX_BYTES``."""
    total = sum(
        st.buf.size * ITEM_BYTES.get(st.buf.dtype, 8) for st in walk_stmt(kernel.body) if isinstance(st, Allocate)
    )
    if total > STACK_MAX_BYTES:
        raise ScheduleError(f"{total} bytes of stack scratch, more than {STACK_MAX_BYTES}")


def decisions_id(d: Mapping[str, Hashable]) -> str:
    """A candidate's name: its decisions as sorted JSON."""
    return json.dumps(dict(sorted(d.items())), sort_keys=True)


def space_of(task: TuneTask) -> dict[str, Decision]:
    """The decisions the recipe asks of ``task``'s kernel with its defaults (the default schedule's path)."""
    return task.schedule().space


def tasks_of(graph: Graph, target: Target, label: str = "graph") -> list[TuneTask]:
    """The distinct kernels ``compile`` would build for ``graph`` on ``target`` that have something to tune
    (a decision), in launch order; ``label`` names the graph in ``TuneTask.where``."""
    plan = plan_kernels(graph, target, schedule=False)
    out: dict[str, TuneTask] = {}
    for bk in plan.built:
        t = _task(bk, target)
        prev = out.get(t.key)
        if prev is not None:
            prev.uses += 1
            prev.where.append(f"{label}:{bk.kernel.name}")
            continue
        t.where.append(f"{label}:{bk.kernel.name}")
        try:
            if not space_of(t):
                continue
        except ScheduleError:
            continue
        out[t.key] = t
    return list(out.values())


def _task(bk: BuiltKernel, target: Target) -> TuneTask:
    key = record_key(bk.kernel, bk.gemm, bk.const_names, target)
    return TuneTask(
        bk.kernel.name, bk.kernel, bk.gemm, frozenset(bk.const_names), target, key, n_params=len(bk.kernel.params)
    )


def merge_tasks(groups: list[list[TuneTask]]) -> list[TuneTask]:
    """Tasks of several graphs with the ones that are one kernel merged (uses added up)."""
    out: dict[str, TuneTask] = {}
    for ts in groups:
        for t in ts:
            prev = out.get(t.key)
            if prev is None:
                out[t.key] = t
            else:
                prev.uses += t.uses
                prev.where += t.where
    return list(out.values())


def mutate(task: TuneTask, d: Decisions, rng: random.Random, space: Mapping[str, Decision]) -> Decisions | None:
    """``d`` with one decision of ``space`` (the candidate's own: where it was taken) changed to another of
    its choices; None when none has another choice."""
    names = [n for n, dec in space.items() if len(dec.choices) > 1]
    if not names:
        return None
    name = rng.choice(names)
    others = [c for c in space[name].choices if c != d.get(name)]
    out = dict(d)
    out[name] = rng.choice(others)
    return out


__all__ = [
    "STACK_MAX_BYTES",
    "Decisions",
    "TuneTask",
    "check",
    "decisions_id",
    "merge_tasks",
    "mutate",
    "space_of",
    "tasks_of",
]
