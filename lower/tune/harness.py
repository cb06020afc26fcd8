"""One kernel compiled alone with candidate schedules, checked against its default schedule, and timed.

``measure(task, candidates)`` is what a measurement worker runs (this process, or a Ray worker on another
machine): it needs only the ``TuneTask`` (the unscheduled kernel and what its recipe reads), never the
model's weights.  Each parameter the kernel had before scheduling gets its own buffer (floats uniform in
[0.5, 1.5), integers zero: an index stays in range; a contraction's two operands divided by the square root of
its reduction's length, so that its sums are near 1 as a model's are: sums near K sent a GELU epilogue's
erfc into denormals, 1749 us for a ConvNeXt GEMM that runs 1176 us in the model), the buffers scheduling
adds are computed once from the constants as ``compile`` does (``lower.runtime.constant_stages``) or given
scratch, and then:

1. the default schedule runs first and its outputs are kept;
2. each candidate runs once on the same inputs (outputs zeroed before) and must match them (``close``:
   summation order may differ, nothing else), else it is reported wrong and never timed or recorded;
3. the default and the good candidates are timed in interleaved rounds (``costs``' order: no candidate
   always runs right after the same one), each run after ``FLUSH_BYTES`` written elsewhere so the kernel's
   weights come from memory as in a model, then its activation inputs read once (``_toucher``) so they are
   in cache as a producer just before it leaves them; a candidate's time is its median round.

   (Reading the activations in alone changed little: ConvNeXt's first GEMM 1772 -> 1764 us; the inputs'
   values were what made it a kernel no model runs, see above.  After both, 300 trials on ConvNeXt: 1.115x in
   summed kernel time, 1.087x whole model; before, 1000 trials gave 1.15x and 1.01x.)

A candidate whose schedule is illegal (``ScheduleError``), that fails to compile, or is wrong comes back
with ``error`` set: the search drops it.
"""

from __future__ import annotations

import ctypes
import functools
import math
import socket
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import torch

from lower.ir import (
    LOOP_DTYPE,
    Bin,
    Buffer,
    FloatImm,
    For,
    IntImm,
    Kernel,
    Load,
    LoopKind,
    Store,
    Var,
    root_loop,
    stores_of,
)
from lower.runtime import constant_stages
from lower.schedule import Schedule
from lower.target import backend_of
from lower.tune.space import Decisions, TuneTask
from rewrite.ir.dtypes import TORCH_DTYPE
from rewrite.ir.errors import EqsatError
from rewrite.ir.target import Target

FLUSH_BYTES = 16 << 20  # as the llvm cost runner flushes (lower.llvm.measure: why 16 MiB)
ROUND_SECONDS = 0.25  # a measurement's rounds take about this long (at least MIN_ROUNDS, at most MAX_ROUNDS)
MIN_ROUNDS, MAX_ROUNDS = 3, 25
RTOL = 1e-3  # of the largest output magnitude: another summation order, never another result
_TORCH_OF = {ir: TORCH_DTYPE[name] for name, ir in LOOP_DTYPE.items()}


@dataclass
class Measured:
    """One candidate's result: ``seconds`` (median round) or why there is none (``error``)."""

    decisions: Decisions
    seconds: float | None = None
    error: str = ""
    features: list[float] = field(default_factory=list)  # of its scheduled kernel (``lower.tune.features``)
    machine: str = ""
    build_seconds: float = 0.0  # scheduling and compiling it


@dataclass
class _Built:
    decisions: Decisions
    kernel: Kernel
    run: Callable[[], None] | None  # the backend's launcher: runs the kernel once (None: not built, or wrong)
    keep: list  # what the launcher's arguments point into
    error: str = ""
    build_seconds: float = 0.0
    features: list[float] = field(default_factory=list)


def _extent(b) -> int:
    """Elements a parameter buffer spans (its offset and strides included)."""
    if not b.shape:
        return b.offset + 1
    return b.offset + sum((d - 1) * s for d, s in zip(b.shape, b.elem_strides)) + 1


def _buffers(task: TuneTask, seed: int = 0) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    g = task.gemm
    operands = {g.a_buf, g.b_buf} if g is not None else set()
    out = []
    for b in task.kernel.params[: task.n_params]:
        dt = _TORCH_OF.get(b.dtype, torch.float32)
        n = _extent(b)
        if dt.is_floating_point:
            t = torch.rand(n, generator=gen) + 0.5
            if g is not None and b.name in operands:  # sums of K products near 1, as in a model, not near K
                t /= math.sqrt(max(g.kdim, 1))
            t = t.to(dt)
        else:
            t = torch.zeros(n, dtype=dt)
        out.append(t)
    return out


def _outputs(task: TuneTask) -> list[int]:
    """Indices of the parameters the unscheduled kernel stores into."""
    written = {st.buf.name for st in stores_of(task.kernel.body)}
    return [i for i, b in enumerate(task.kernel.params[: task.n_params]) if b.name in written]


def build(task: TuneTask, decisions: Decisions, bufs: list[torch.Tensor], want_features: bool = False) -> _Built:
    """``task``'s kernel scheduled with ``decisions``, its compile-time stages run, compiled, bound to ``bufs``."""
    t0 = time.perf_counter()
    backend = backend_of(task.target)
    try:
        sched = task.schedule(decisions)
        kern = sched.kernel
        feats: list[float] = []
        if want_features:
            from lower.tune.features import features

            feats = features(task, sched)
        kern, extras = constant_stages(kern, task.n_params, set(task.const_names))
        tensors = list(bufs)
        by_name = {b.name: t for b, t in zip(kern.params, tensors)}
        for P, pk in extras:
            t = torch.zeros(max(_extent(P), 1), dtype=_TORCH_OF.get(P.dtype, torch.float32))
            if pk is not None:
                srcs = [by_name[b.name] for b in pk.params[:-1]]
                args = (ctypes.c_void_p * len(pk.params))(*[s.data_ptr() for s in srcs], t.data_ptr())
                fn = backend.compile_run_once(pk, task.target)
                backend.launcher(fn, ctypes.cast(args, ctypes.c_void_p), None, 1)()
            by_name[P.name] = t
            tensors.append(t)
        fn = backend.compile(kern, task.target, "k")
        args = (ctypes.c_void_p * max(len(tensors), 1))(*[t.data_ptr() for t in tensors])
        argp = ctypes.cast(args, ctypes.c_void_p)
        root = root_loop(kern.body)
        par = None
        if root is not None and root.kind is LoopKind.PARALLEL and isinstance(root.extent, IntImm):
            par = root.extent.value
        run = backend.launcher(fn, argp, par, task.target.threads)
        return _Built(
            dict(sched.decisions),
            kern,
            run,
            [tensors, args, fn],
            build_seconds=time.perf_counter() - t0,
            features=feats,
        )
    except Exception as e:  # a candidate is untrusted: whatever it raises drops it, not the kernel's search
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        return _Built(dict(decisions), task.kernel, None, [], f"{type(e).__name__}: {msg}", time.perf_counter() - t0)


def close(got: torch.Tensor, ref: torch.Tensor) -> bool:
    """Equal up to ``RTOL`` of the largest magnitude (NaN where the reference has NaN)."""
    if got.dtype != ref.dtype or got.shape != ref.shape:
        return False
    if not got.dtype.is_floating_point:
        return bool(torch.equal(got, ref))
    g, r = got.float(), ref.float()
    nan = r.isnan()
    if not torch.equal(nan, g.isnan()):
        return False
    if not r.numel():
        return True
    r, g = r.masked_fill(nan, 0.0), g.masked_fill(nan, 0.0)
    diff = torch.where(g == r, 0.0, (g - r).abs())  # equal infinities: no difference
    scale = float(r.abs().nan_to_num(0.0, 0.0, 0.0).max())
    return float(diff.max()) <= RTOL * max(scale, 1e-30)


def measure(
    task: TuneTask, candidates: Sequence[Decisions], want_features: bool = False, seed: int = 0
) -> tuple[Measured, list[Measured]]:
    """The default schedule's measurement and each candidate's (see the module docstring)."""
    host = socket.gethostname()
    bufs = _buffers(task, seed)
    outs = _outputs(task)
    default = build(task, {}, bufs, want_features)
    if default.run is None:
        raise EqsatError(f"{task.name}: its default schedule does not build: {default.error}")
    backend = backend_of(task.target)
    jobs = min(len(candidates), backend.compile_jobs() if backend.compile_jobs else 1)
    if jobs > 1:  # scheduled here, compiled by LLVM in this process and its compile workers at once
        with ThreadPoolExecutor(jobs, thread_name_prefix="eqsat-tune-build") as pool:
            built = list(pool.map(lambda d: build(task, d, bufs, want_features), candidates))
    else:
        built = [build(task, d, bufs, want_features) for d in candidates]
    with torch.no_grad():
        for i in outs:
            bufs[i].zero_()
        default.run()
        ref = [bufs[i].clone() for i in outs]
        for b in built:
            if b.run is None:
                continue
            for i in outs:
                bufs[i].zero_()
            b.run()
            bad = [task.kernel.params[i].name for i, r in zip(outs, ref) if not close(bufs[i], r)]
            if bad:
                b.error = f"wrong: output {', '.join(bad)} differs from the default schedule's"
                b.run = None
        timed = [default, *[b for b in built if b.run is not None]]
        consts = set(task.const_names)
        acts = [
            bufs[i] for i, b in enumerate(task.kernel.params[: task.n_params]) if b.name not in consts and i not in outs
        ]
        secs = _time([b.run for b in timed if b.run is not None], _before_run(task.target, acts))
    by = {id(b): s for b, s in zip(timed, secs)}

    def result(b: _Built) -> Measured:
        return Measured(b.decisions, by.get(id(b)), b.error, b.features, host, b.build_seconds)

    return result(default), [result(b) for b in built]


@functools.cache  # one per target and process: compiled once
def _flusher(target: Target) -> Callable[[], None]:
    """A launcher adding 1 to ``FLUSH_BYTES`` of floats, compiled for ``target`` and run on its threads:
    it evicts the kernel's operands from cache, and leaves the target's worker threads awake as the kernel
    before it in a model does (a flush by another pool would let them sleep: a parallel ReLU of 10 us then
    timed 48 us, all of it waking the workers)."""
    n = FLUSH_BYTES // 4
    buf = Buffer("flush", (n,))
    i = Var("i")
    k = Kernel("flush", [buf], For(i, IntImm(n), Store(buf, (i,), Bin("+", Load(buf, (i,)), FloatImm(1.0)))))
    s = Schedule(k).split("i", 1 << 14).vectorize("i.i")
    par = target.threads > 1
    if par:
        s.parallel("i.o")
    backend = backend_of(target)
    t = torch.zeros(n)
    fn = backend.compile(s.kernel, target, "f")
    args = (ctypes.c_void_p * 1)(t.data_ptr())
    run = backend.launcher(fn, ctypes.cast(args, ctypes.c_void_p), (n >> 14) if par else None, target.threads)

    def flush(_keep: object = (t, args, fn)) -> None:  # the buffer, arguments and code live as long as it
        run()

    return flush


TOUCH_CHUNKS = 64  # a touch reads its buffer in this many parallel chunks (each its own 16 partial sums)


@functools.cache  # one per (target, size): compiled once
def _toucher(target: Target, n: int) -> tuple[Callable[[Any, int, int], None], int | None]:
    """A kernel reading ``n`` floats (from the address its first argument holds) into partial sums, in
    parallel chunks on the target's threads as ``_flusher``: every cache line of them is then in cache; and
    its parallel extent (None: one thread)."""
    c = min(TOUCH_CHUNKS, max(1, n // 16))
    src, acc = Buffer("src", (c, n // (16 * c), 16)), Buffer("acc", (c, 16))
    ci, i, j = Var("c"), Var("i"), Var("j")
    add = Store(acc, (ci, j), Bin("+", Load(acc, (ci, j)), Load(src, (ci, i, j))))
    s = Schedule(Kernel("touch", [src, acc], For(ci, IntImm(c), For(i, IntImm(src.shape[1]), For(j, IntImm(16), add)))))
    s.vectorize("j")
    par = target.threads > 1 and c > 1
    if par:
        s.parallel("c")
    return backend_of(target).compile(s.kernel, target, "t"), (c if par else None)


def _before_run(target: Target, acts: Sequence[torch.Tensor]) -> Callable[[], None]:
    """What runs before each timed run: the flush, then each activation input read (see the module docstring)."""
    flush = _flusher(target)
    backend = backend_of(target)
    keep: list[object] = [acts]
    touches = []
    for t in acts:
        n = t.numel() * t.element_size() // 4
        if n < 16 * 16:
            continue  # a few lines: in cache or not, no difference
        fn, par = _toucher(target, n)
        sums = torch.zeros(TOUCH_CHUNKS * 16)
        args = (ctypes.c_void_p * 2)(t.data_ptr(), sums.data_ptr())
        keep += [sums, args, fn]
        touches.append(backend.launcher(fn, ctypes.cast(args, ctypes.c_void_p), par, target.threads))

    def before(_keep: object = keep) -> None:  # the tensors, arguments and code live as long as it
        flush()
        for touch in touches:
            touch()

    return before


def _time(runs: list[Callable[[], None]], flush: Callable[[], None]) -> list[float]:
    """Each run's median over interleaved rounds, each timed run right after ``flush``."""
    for r in runs:  # warm up: code and page tables
        r()
    t0 = time.perf_counter()
    runs[0]()
    one = max(time.perf_counter() - t0, 1e-6) * len(runs) + 2e-3 * len(runs)  # a round, flushes included
    rounds = max(MIN_ROUNDS, min(MAX_ROUNDS, int(ROUND_SECONDS / one)))
    samples: list[list[float]] = [[] for _ in runs]
    for rnd in range(rounds):
        order = range(len(runs)) if rnd % 2 == 0 else reversed(range(len(runs)))
        for i in order:
            flush()
            t0 = time.perf_counter()
            runs[i]()
            samples[i].append(time.perf_counter() - t0)
    return [sorted(s)[len(s) // 2] for s in samples]


__all__ = ["FLUSH_BYTES", "Measured", "build", "close", "measure"]
