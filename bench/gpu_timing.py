"""GPU timing for the bench scripts: contenders interleaved round by round in one process, CUDA events.

    >>> ours, eager = interleaved_ms([lambda: cg(feed), lambda: module(*xs)], repeats=20)   # doctest: +SKIP
    >>> eager.median / ours.median                      # above 1: ours is faster      # doctest: +SKIP

Each round times every contender once (``costs.timing.interleaved``'s rounds: two alternate, more in
shuffled orders, so none always runs on a GPU another just warmed); a contender's figure is the median
of its rounds.  ``timer`` is the seam tests replace (no GPU needed to check what the scripts do with the
numbers).
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from costs.timing import interleaved
from lower.cuda.measure import event_seconds

Timer = Callable[[Callable[[], object]], float]  # one timed run of a contender -> milliseconds


def cuda_event_ms(fn: Callable[[], object]) -> float:
    """One run of ``fn`` between two CUDA events on the current stream (milliseconds)."""
    return event_seconds(fn) * 1e3


@dataclass(frozen=True)
class GpuTiming:
    samples: tuple[float, ...]  # milliseconds, one per round

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def quartiles(self) -> tuple[float, float]:
        ts = sorted(self.samples)
        q = len(ts) // 4
        return ts[q], ts[-1 - q]


def interleaved_ms(
    fns: Sequence[Callable[[], object]], repeats: int, warmup: int = 2, timer: Timer = cuda_event_ms
) -> list[GpuTiming]:
    """Each of ``fns`` timed ``repeats`` times by ``timer``, in ``costs.timing.interleaved``'s rounds, after
    ``warmup`` untimed rounds."""
    run = interleaved(fns, repeats, warmup, timer=lambda i: timer(fns[i]))
    return [GpuTiming(t.samples) for t in run.timings]


def back_to_back_ms(
    fns: Sequence[Callable[[], object]], rounds: int, calls: int = 30, timer: Timer = cuda_event_ms
) -> list[GpuTiming]:
    """Each of ``fns`` run ``calls`` times back to back per timed block, blocks interleaved as in
    ``interleaved_ms``; a sample is the block's time per call.  Launches queue behind each other, so no
    host gap between calls counts, and the GPU stays busy for the whole block (its sustained clock)."""

    def block(f: Callable[[], object]) -> Callable[[], object]:
        return lambda: [f() for _ in range(calls)]

    timings = interleaved_ms([block(f) for f in fns], rounds, warmup=1, timer=timer)
    return [GpuTiming(tuple(s / calls for s in t.samples)) for t in timings]


def cuda_missing(what: str) -> str | None:
    """None where torch can run on a CUDA device; else one line saying what ``what`` is missing."""
    if not torch.backends.cuda.is_built():
        return f"{what} needs torch built with CUDA; this torch is {torch.__version__}"
    if not torch.cuda.is_available():
        return f"{what} needs a CUDA device and torch sees none"
    return None


@contextlib.contextmanager
def torch_tf32(on: bool) -> Iterator[None]:
    """torch's matmuls (cuBLAS) and convolutions (cuDNN) in TF32 (``on``) or exact FP32, restored after."""
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = on
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def geomean(xs: Sequence[float]) -> float | None:
    return statistics.geometric_mean(xs) if xs else None


__all__ = [
    "GpuTiming",
    "Timer",
    "back_to_back_ms",
    "cuda_event_ms",
    "cuda_missing",
    "geomean",
    "interleaved_ms",
    "torch_tf32",
]
