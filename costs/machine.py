"""This machine's peak FLOP/s, memory bandwidth and per-op overhead, measured once and cached.

The profile is keyed by the machine fingerprint (CPU, core count, OS,
architecture; the measured-cost cache keys on it too) plus the torch version
and thread count, so a cache copied from another machine is ignored, not trusted.

    >>> p = machine_profile()          # measured on first use (~1 s), then read from disk
    >>> p.peak_flops > 1e9
    True
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from costs.timing import interleaved
from rewrite import config
from rewrite.ir.builder import GraphBuilder


@dataclass(frozen=True)
class MachineProfile:
    fingerprint: str
    peak_flops: float  # FLOP/s of a large fp32 matmul with torch
    bandwidth: float  # bytes/s of a large copy
    op_overhead: float  # seconds to launch one small elementwise torch op
    view_overhead: float  # seconds for a view (reshape/slice) that moves no data
    matmul_overhead: float = 0.0  # seconds for a tiny matmul (dispatch + BLAS setup)
    conv_overhead: float = 0.0  # seconds for a tiny conv2d
    conv_flops: float = 0.0  # FLOP/s of a mid-size 3x3 conv (convs run well below matmul peak)
    depthwise_flops: float = 0.0  # FLOP/s of a depthwise 3x3 conv (memory-bound, far below both)


def cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo where there is one)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return cpu


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def machine_fingerprint() -> str:
    """CPU model, core count, OS and architecture: what makes measurements from elsewhere meaningless."""
    return _digest(f"{cpu_name()}|{os.cpu_count()}|{platform.system()}|{platform.machine()}")


def fingerprint() -> str:
    """The profile's key: this machine, plus the torch version and thread count its peaks depend on."""
    return _digest(f"v6|{machine_fingerprint()}|{torch.__version__}|{torch.get_num_threads()}")  # v6: best of rounds


def _best_time(fn: Callable[[], object], reps: int) -> float:
    """Fastest of ``reps`` runs: a peak is what the machine can do, and other jobs only slow it down."""
    return interleaved([fn], reps, warmup=1).timings[0].min


def _per_node(op: str, shape: tuple[int, ...], n: int = 200, w: tuple[int, ...] = ()) -> float:
    """Seconds per node of a chain of ``n`` tiny ``op`` nodes run by ``Graph.run`` (``w``: the weight
    shape of a matmul or conv2d chain).

    Overheads are measured through the executor that runs our graphs, so the
    model prices what a node really costs there (dispatch + bookkeeping).
    """
    b = GraphBuilder("overhead")
    y = b.input("x", shape)
    for i in range(n):
        if op == "reshape":  # alternate between two shapes so no node is a no-op
            y = b.reshape(y, shape=(shape[0] * shape[1],) if i % 2 == 0 else shape)
        elif op in ("matmul", "conv2d"):
            y = b.op(op, y, b.weight(f"w{i}", torch.randn(*w)))
        else:
            y = b.op(op, y)
    g = b.build([y])
    ins = g.random_inputs()
    return _best_time(lambda: g.run(ins), 7) / n


ROUNDS = 3  # independent rounds; each quantity keeps its fastest, so a burst of load in one round is outvoted


def _round() -> list[float]:
    """One round of every timing the profile needs, in seconds (see ``measure`` for what each is)."""
    with torch.no_grad():
        a, b = torch.randn(512, 512), torch.randn(512, 512)
        t_mm = _best_time(lambda: torch.matmul(a, b), 15)
        big = torch.randn(8 * 1024 * 1024)
        out = torch.empty_like(big)
        t_cp = _best_time(lambda: out.copy_(big), 9)
        t_op = _per_node("relu", (2, 4))
        t_view = _per_node("reshape", (2, 4))
        t_mm0 = _per_node("matmul", (8, 8), w=(8, 8))
        t_cv0 = _per_node("conv2d", (1, 4, 4, 4), w=(4, 4, 1, 1))
        xc, wc = torch.randn(1, 64, 56, 56), torch.randn(64, 64, 3, 3)
        t_cv = _best_time(lambda: torch.nn.functional.conv2d(xc, wc, padding=1), 9)
        wd = torch.randn(64, 1, 3, 3)
        t_dw = _best_time(lambda: torch.nn.functional.conv2d(xc, wd, padding=1, groups=64), 9)
    return [t_mm, t_cp, t_op, t_view, t_mm0, t_cv0, t_cv, t_dw]


def measure(rounds: int = ROUNDS) -> MachineProfile:
    """Peaks and overheads of this machine: the fastest of ``rounds`` independent rounds per quantity.

    One round taken while another job held the cores once stored a matmul
    peak 6x too low (below the conv throughput, which is impossible), and
    every later extraction on the machine priced matmuls wrong.  Rounds are
    cheap (~1 s), so we take several and keep each quantity's best.
    """
    t_mm, t_cp, t_op, t_view, t_mm0, t_cv0, t_cv, t_dw = (min(ts) for ts in zip(*(_round() for _ in range(rounds))))
    return MachineProfile(
        fingerprint(),
        2 * 512**3 / t_mm,
        2 * 8 * 1024 * 1024 * 4 / t_cp,
        t_op,
        t_view,
        t_mm0,
        t_cv0,
        2 * 64 * 64 * 9 * 56 * 56 / t_cv,
        2 * 64 * 9 * 56 * 56 / t_dw,
    )


def _stored(path: Path) -> dict[str, dict]:
    """Profiles on disk by fingerprint (one per torch thread count / version); {} if missing or corrupt."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def profile_path() -> Path:
    """Where the measured profiles live (one file, one entry per fingerprint)."""
    return config.cache_dir() / "machine.json"


def machine_profile(refresh: bool = False) -> MachineProfile:
    """The cached profile for this machine and thread count, measuring it if missing, foreign or corrupt."""
    path = profile_path()
    fp = fingerprint()
    stored = _stored(path)
    if not refresh and fp in stored:
        try:
            prof = MachineProfile(**stored[fp])
            if prof.fingerprint == fp and prof.peak_flops > 0 and prof.bandwidth > 0 and prof.conv_flops > 0:
                return prof
        except TypeError:
            pass  # written by another version: measure again
    prof = measure()
    stored = _stored(path)  # re-read: another process may have added its own thread count meanwhile
    stored[fp] = asdict(prof)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(stored, indent=1))
    tmp.replace(path)  # atomic: concurrent writers never leave a torn file
    return prof
