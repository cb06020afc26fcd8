"""The one timing loop: contenders interleaved in one process, medians with their spread, and a warning
when the numbers cannot be trusted.

Every run time or speedup eqsat prints comes from here (cost profiling, the machine profile, the
fidelity and Tensat tables, ``optimize --run``, ``bench e2e``, ``bench kernels``), and so do the compiled
kernels' cost rows (``lower.measure_graphs``) and the GPU benchmarks' CUDA-event timings
(``bench.gpu_timing``), through ``interleaved(timer=...)``.  On a shared
machine a lone median hides how noisy it was, so:

* contenders alternate round by round (A B, then B A, ...; three or more in shuffled orders, nobody twice in a
  row: ``round_order``), so drift and other jobs hit every side;
* both sides run on the same torch thread count (``threads``), set for the duration;
* a result keeps every sample: median, quartiles, min and max;
* a speedup is the median of the per-round ratios, with their interquartile range as its spread;
* ``notes`` says when the spread exceeds ``NOISY`` (20%) of the median, or when other processes
  used the CPU while timing (``/proc/stat`` busy time minus this process's own, else the load average).

    >>> s = speedup(lambda: sum(range(2000)), lambda: sum(range(4000)), repeats=9)
    >>> f"{s}".endswith(")") and s.ratio > 1
    True
    >>> format_ratio(1.234, 1.1, 1.31)
    '1.23× (1.10–1.31)'
"""

from __future__ import annotations

import contextlib
import gc
import os
import random
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from rewrite import config

NOISY = 0.20  # relative spread (IQR / median) above which a timing is flagged
BUSY_CORES = 0.5  # other processes' average CPU use, in cores, above which a timing is flagged


@dataclass(frozen=True)
class Timing:
    """Seconds of one contender's timed runs."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def quartiles(self) -> tuple[float, float]:
        if len(self.samples) < 2:
            return self.samples[0], self.samples[0]
        q = statistics.quantiles(self.samples, n=4, method="inclusive")
        return q[0], q[2]

    @property
    def iqr(self) -> float:
        q1, q3 = self.quartiles
        return q3 - q1

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def max(self) -> float:
        return max(self.samples)

    @property
    def spread(self) -> float:
        """IQR relative to the median."""
        return self.iqr / self.median if self.median > 0 else 0.0

    def over(self, other: Timing) -> Timing:
        """Per-round ratios of this contender's times to ``other``'s, timed interleaved with it (rounds where
        ``other`` took no time left out): what drifts between rounds cancels in each ratio."""
        return Timing(tuple(a / b for a, b in zip(self.samples, other.samples, strict=True) if b > 0))

    def __str__(self) -> str:
        q1, q3 = self.quartiles
        return f"{self.median * 1e3:.3f} ms ({q1 * 1e3:.3f}–{q3 * 1e3:.3f})"

    def to_json(self) -> dict[str, Any]:
        q1, q3 = self.quartiles
        return {"median": self.median, "q1": q1, "q3": q3, "min": self.min, "max": self.max, "n": len(self.samples)}


@dataclass(frozen=True)
class Run:
    """Interleaved timings of several contenders, with what the machine did meanwhile."""

    timings: tuple[Timing, ...]
    threads: int
    others_busy_cores: float | None  # other processes' average CPU use while timing, in cores
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Speedup:
    """``baseline / ours``: the median of per-round ratios and their interquartile range."""

    ratio: float
    lo: float
    hi: float
    ours: Timing
    baseline: Timing
    threads: int
    notes: tuple[str, ...]

    def __str__(self) -> str:
        return format_ratio(self.ratio, self.lo, self.hi)

    def to_json(self) -> dict[str, Any]:
        return {
            "ratio": self.ratio,
            "lo": self.lo,
            "hi": self.hi,
            "ours": self.ours.to_json(),
            "baseline": self.baseline.to_json(),
            "threads": self.threads,
            "notes": list(self.notes),
        }


def format_ratio(ratio: float, lo: float, hi: float) -> str:
    return f"{ratio:.2f}× ({lo:.2f}–{hi:.2f})"


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[int]:
    """Run torch on ``n`` threads inside the block (no change, and no pool rebuild, if it already does)."""
    before = torch.get_num_threads()
    if n is not None and n != before:
        torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        if n is not None and n != before:
            torch.set_num_threads(before)


def _machine_busy() -> float | None:
    """Busy CPU seconds of the whole machine so far (``/proc/stat``), or None where there is none."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    busy = sum(ticks[:8]) - idle  # user nice system idle iowait irq softirq steal (guest is inside user)
    return busy / os.sysconf("SC_CLK_TCK")


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system


class _Watch:
    """Other processes' CPU use over a span of wall time, in cores."""

    def __init__(self) -> None:
        self.t, self.busy, self.own = time.perf_counter(), _machine_busy(), _own_cpu()

    def others(self) -> float | None:
        wall = time.perf_counter() - self.t
        busy = _machine_busy()
        if self.busy is None or busy is None:
            try:
                return max(0.0, os.getloadavg()[0] - 1.0)  # minus this process, assumed running
            except OSError:
                return None
        if wall <= 0:
            return 0.0
        return max(0.0, (busy - self.busy - (_own_cpu() - self.own)) / wall)


def free_threads(wanted: int, probe_seconds: float = 0.3) -> tuple[int, float | None]:
    """How many of ``wanted`` threads have a core to themselves now: ``wanted`` minus the cores other
    processes used over a short probe (at least 1), and that use in cores (None where unknown).

    Two runtimes on more threads than there are free cores do not slow down alike (an OpenMP pool
    waits at every barrier for a thread the scheduler parked, a 2-thread PyTorch squeezenet went
    from 13 ms to 1.3 s beside two busy processes), so a speedup timed oversubscribed measures the
    scheduler, not the code; timed on the free cores it stays put as the load changes.
    """
    watch = _Watch()
    time.sleep(probe_seconds)
    others = watch.others()
    if others is None or others < BUSY_CORES:
        return wanted, others
    return max(1, min(wanted, int(config.cores() - others + 0.5))), others


def interleaved(
    fns: Sequence[Callable[[], object]],
    repeats: int = 10,
    warmup: int = 2,
    threads: int | None = None,
    on_round: Callable[[int, int], None] | None = None,
    names: Sequence[str] = (),
    settle_s: float = 0.0,
    timer: Callable[[int], float] | None = None,
) -> Run:
    """Time each of ``fns`` ``repeats`` times in rounds (``round_order``: two contenders forward, then
    reversed; more in shuffled orders), after ``warmup`` untimed rounds, with garbage collection off and torch on
    ``threads`` threads.

    ``settle_s``: an untimed busy wait of at least that long after each call, until the process's other
    threads are quiet (``settle``, ``SETTLE_S``), so that thread pools still spinning after one contender's
    run do not take cores from the next one.

    ``timer(i)``: one timed run of contender ``i`` and what it took, where the wall clock around ``fns[i]()``
    is not the measure (a GPU's CUDA events, the kernels' own profile, an L2 flush before the run); the samples
    are in its unit.  The warm-up rounds still call ``fns``."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got {repeats} and {warmup}")
    times: list[list[float]] = [[] for _ in fns]
    gc_was = gc.isenabled()
    with torch_threads(threads) as used:
        for _ in range(warmup):
            for f in fns:
                f()
        watch = _Watch()
        gc.disable()
        try:
            last = -1
            for r in range(repeats):
                order = round_order(len(fns), r, last)
                last = order[-1]
                for i in order:
                    if timer is None:
                        t = time.perf_counter()
                        fns[i]()
                        times[i].append(time.perf_counter() - t)
                    else:
                        times[i].append(timer(i))
                    if settle_s > 0:
                        settle(settle_s)
                if on_round is not None:
                    on_round(r + 1, repeats)
        finally:
            if gc_was:
                gc.enable()
        others = watch.others()
    timings = tuple(Timing(tuple(ts)) for ts in times)
    return Run(timings, used, others, tuple(_notes(timings, others, names)))


# With three or more contenders, forward-then-reversed rounds ran the first and the last one twice in a row every
# other round, its weights still in cache from its own run, and every other contender always after the same two
# neighbours: an edge for the columns at the ends (bench e2e's eager and noopt) that no other column had.  Shuffled
# rounds give every contender every predecessor.  (They do not explain all of e2e's spread at 2 threads: one graph
# compiled twice, eqsat's and noopt's columns when the run check kept the input, still timed up to ~10% apart.)
ROUND_SEED = 0x5EED


def round_order(n: int, r: int, last: int = -1) -> list[int]:
    """The order of round ``r`` over ``n`` contenders, ``last`` the one that ended the round before: two
    alternate forward and reversed (each follows the other as often); more take a shuffled order, fixed by
    ``ROUND_SEED`` and ``r``, rotated so that it does not start with ``last`` (nobody runs twice in a row).

        >>> round_order(2, 0), round_order(2, 1)
        ([0, 1], [1, 0])
        >>> o = round_order(5, 3, last=2); sorted(o) == [0, 1, 2, 3, 4] and o[0] != 2
        True
    """
    if n <= 2:
        return list(range(n)) if r % 2 == 0 else list(range(n - 1, -1, -1))
    order = list(range(n))
    random.Random(ROUND_SEED + r).shuffle(order)
    return order[1:] + order[:1] if order[0] == last else order


# On several threads, an untimed wait after each timed call (``interleaved(settle_s=...)``): peers' workers
# spin after a run and whoever runs next loses a core to them (resnet50, 2 threads: eqsat 1.25x slower right
# after onnxruntime).  Measured here (per-thread CPU time, /proc/self/task/*/schedstat): onnxruntime's
# worker spins 46-51 ms after a run, torch's OpenMP workers ~10 ms, the native pool's none.  A fixed 50 ms
# was on that edge: a 2-thread 512->1000 1x1 conv timed 5 ms after onnxruntime ran as slow as on one thread
# (780 vs 420 us).  So the wait lasts ``SETTLE_S`` and then until the process's other threads have used
# under ``QUIET_CPU`` of a core for ``QUIET_S`` (at most ``SETTLE_MAX_S``).
SETTLE_S = 0.05
QUIET_S = 0.01  # over two scheduler ticks: a running thread's CPU time is brought up to date at a tick
QUIET_CPU = 0.05
SETTLE_MAX_S = 1.0


def settle(min_seconds: float, max_seconds: float = SETTLE_MAX_S) -> float:
    """Busy-wait ``min_seconds``, then until this process's other threads are quiet (see ``SETTLE_S``);
    the seconds waited.  Where per-thread CPU time cannot be read, the fixed wait alone."""
    t0 = time.perf_counter()
    _busy(min_seconds)
    me = threading.get_native_id()
    last = _others_cpu(me)
    if last is None:
        return time.perf_counter() - t0
    while time.perf_counter() - t0 < max_seconds:
        _busy(QUIET_S)
        now = _others_cpu(me)
        if now is None or now - last < QUIET_CPU * QUIET_S:
            break
        last = now
    return time.perf_counter() - t0


def _others_cpu(me: int) -> float | None:
    """CPU seconds used so far by this process's threads other than ``me`` (Linux), else None."""
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    total = 0
    for tid in tids:
        if tid == str(me):
            continue
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended, or a kernel without schedstat
    return total / 1e9


def _busy(seconds: float) -> None:
    """Wait ``seconds`` on this thread without sleeping: an idle core is clocked down (on a virtual machine,
    halted), and the next timed call would pay for waking it (a 6 ms GEMM on 2 threads ran 1.5x slower
    after a 50 ms sleep)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _notes(timings: Sequence[Timing], others: float | None, names: Sequence[str]) -> list[str]:
    notes = [
        f"{names[i] if i < len(names) else f'timing #{i}'} is noisy: spread {t.spread:.0%} of its median "
        f"(more than {NOISY:.0%})"
        for i, t in enumerate(timings)
        if t.spread > NOISY
    ]
    if others is not None and others > BUSY_CORES:
        notes.append(f"other processes used {others:.1f} CPU core(s) while timing: numbers may be off")
    return notes


def speedup(
    ours: Callable[[], object],
    baseline: Callable[[], object],
    repeats: int = 10,
    warmup: int = 2,
    threads: int | None = None,
) -> Speedup:
    """How many times faster ``ours`` runs than ``baseline``, interleaved, on the same thread count."""
    run = interleaved([ours, baseline], repeats, warmup, threads, names=("ours", "the baseline"))
    a, b = run.timings
    ratios = b.over(a)
    lo, hi = ratios.quartiles
    notes = list(run.notes)
    if ratios.spread > NOISY:
        notes.append(f"the speedup is noisy: per-round ratios spread {ratios.spread:.0%} of their median")
    return Speedup(ratios.median, lo, hi, a, b, run.threads, tuple(notes))
