"""Schedules computed once: per process and on disk, keyed by what the recipe reads.

A recipe's schedule (``schedule_kernel``) is a pure function of the unscheduled kernel, its contraction's
loop roles, its constant buffers, the target and the lowering's own code; applying it checks every step
(the legality of a parallel loop alone samples dozens of iteration points), which made scheduling most of a
compile whose kernel objects were cached already: DenseNet-121's two compiles in the run check spent 18 s
in it, its LLVM objects loading from disk in 1.7 s.  So a schedule is kept under the hash of

* the kernel as printed, under a fixed name (kernels of another graph or position reuse it: ``build_kernel``
  names buffers and stages by place, not graph ids), its notes but the fused group's (provenance: node ids);
* ``repr`` of its ``GemmInfo`` and its sorted constant buffers;
* the target's cache key (kind, threads, vector width, codegen version) and ``EQSAT_PACK_A``;
* the decisions of the kernel's tuning record, when ``eqsat tune`` left one (``lower.tune.records``);
* the digest of the ``lower`` package's source (``lower_digest``, which keys measured kernel costs too):
  a change to a recipe, a step or the simplifier is a new key, with nothing to bump by hand,

in memory (the last ``MEMO_SIZE`` of them: the run check compiles two graphs that share most kernels) and
in the cache folder's ``schedules`` (framed and checked like kernel objects: ``lower.filecache``).
``EQSAT_NO_CACHE`` turns both off, as it turns off the object cache (and a test that patches a recipe's
constants sets it).  A hit is the schedule the recipe would build, renamed to the asking kernel.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from lower import filecache
from lower.ir import Kernel
from lower.measure_graphs import lower_digest
from lower.ops_to_loops.core import GemmInfo
from lower.schedule.recipes import schedule_kernel
from lower.schedule.record import Schedule, recipe_inputs
from lower.tune import records
from rewrite import config
from rewrite.ir.errors import ScheduleError, TuningWarning
from rewrite.ir.target import Target

MEMO_SIZE = 512
FORMAT = "1"  # of the pickled entry (a Schedule); the source hash covers the classes it holds
_memo: OrderedDict[str, Schedule] = OrderedDict()


def schedule_key(
    kernel: Kernel, gemm: GemmInfo | None, const_names: set[str], target: Target, fixed: Mapping[str, Any] | None = None
) -> str:
    """The hash a schedule is kept under (see the module docstring); ``fixed``: the decisions of a tuning
    record it was built with."""
    text = "\n".join(
        [FORMAT, repr(sorted((fixed or {}).items())), lower_digest(), recipe_inputs(kernel, gemm, const_names, target)]
    )
    return hashlib.sha256(text.encode()).hexdigest()


def cached_schedule(kernel: Kernel, gemm: GemmInfo | None, const_names: set[str], target: Target) -> Schedule | None:
    """``schedule_kernel(kernel, gemm, const_names, target)``, from memory or disk when it was built before."""
    if config.NO_SCHEDULE.flag():
        return None
    fixed = _tuned(kernel, gemm, const_names, target)
    if config.NO_CACHE.flag():
        return _build(kernel, gemm, const_names, target, fixed)
    key = schedule_key(kernel, gemm, const_names, target, fixed)
    hit = _memo.get(key)
    if hit is None:
        blob = filecache.read(key, filecache.SCHEDULES)
        if blob is not None:
            try:
                hit = pickle.loads(blob)
            except Exception:  # written by other code under the same key: cannot happen unless edited by hand
                hit = None
            if not isinstance(hit, Schedule):
                hit = None
    if hit is None:
        built = _build(kernel, gemm, const_names, target, fixed)
        if built is None:
            return None
        hit = dataclasses.replace(built, kernel=_named(built.kernel, "_"))
        filecache.write(key, pickle.dumps(hit), filecache.SCHEDULES)
    _memo[key] = hit
    _memo.move_to_end(key)
    while len(_memo) > MEMO_SIZE:
        _memo.popitem(last=False)
    return dataclasses.replace(hit, kernel=_named(hit.kernel, kernel.name), steps=list(hit.steps))


def _tuned(kernel: Kernel, gemm: GemmInfo | None, const_names: set[str], target: Target) -> dict[str, Any]:
    """The decisions of ``kernel``'s tuning record on ``target`` (``lower.tune.records``), or none."""
    rec = records.lookup(kernel, gemm, const_names, target)
    return dict(rec.decisions) if rec is not None else {}


def _build(
    kernel: Kernel, gemm: GemmInfo | None, const_names: set[str], target: Target, fixed: dict[str, Any]
) -> Schedule | None:
    """The recipe's schedule, with a tuning record's decisions when there is one; a record the recipe no longer
    accepts is passed over with one warning (the default schedule is built)."""
    if fixed:
        try:
            return schedule_kernel(kernel, gemm, const_names, target, fixed=fixed)
        except ScheduleError as e:
            warnings.warn(
                f"tuning record for {kernel.name} not used: {e}; its default schedule is built",
                TuningWarning,
                stacklevel=4,
            )
    return schedule_kernel(kernel, gemm, const_names, target)


def _named(k: Kernel, name: str) -> Kernel:
    """A copy of ``k`` under ``name`` (its lists and notes copied: the caller may extend them)."""
    return dataclasses.replace(k, name=name, params=list(k.params), meta=dict(k.meta))


def clear_memo() -> None:
    """Forget the schedules kept in memory (tests; the disk entries stay)."""
    _memo.clear()


__all__ = ["MEMO_SIZE", "cached_schedule", "clear_memo", "schedule_key"]
