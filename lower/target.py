"""Targets by name: the kinds table, host detection and parsing.

    >>> t = parse_target("llvm", threads=2)           # LLVM for this CPU
    >>> t.kind, t.vector_width, (t.mr, t.nr), t.threads   # doctest: +SKIP
    ('llvm', 16, (12, 32), 2)
    >>> backend_of(t).name
    'llvm'

``KINDS`` maps a kind to how to describe this machine as a target of that kind (``host``)
and the ``Backend`` that compiles and runs kernels for it.  The record itself
(``rewrite.ir.target.Target``) is plain data one layer down, so that ``costs`` can key
measurements by the same record without importing ``lower``.

Adding a kind (``"cuda"``) is one entry here plus its backend module (``lower/cuda/``):
nothing in the runtime's driver code or in extraction changes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from lower.backend import Backend
from lower.cuda import BACKEND as CUDA_BACKEND
from lower.cuda import cuda_host
from lower.llvm import BACKEND as LLVM_BACKEND
from lower.llvm import jit
from rewrite import config
from rewrite.ir.errors import LoweringError
from rewrite.ir.target import Target

GEMM_TILE = {16: (12, 32), 8: (6, 16)}  # MR x NR of the micro-kernel per vector width: 24 of the 32 zmm
#                                           registers (AVX-512) or 12 of the 16 ymm (AVX2) hold accumulators


@dataclass(frozen=True)
class TargetKind:
    """One entry of the kinds table: this machine as a target of ``kind``, and the backend for it."""

    kind: str
    host: Callable[[int], Target]  # the target for this machine, running kernels on ``threads`` threads
    backend: Backend


def default_threads() -> int:
    """``EQSAT_THREADS``, else the cores this process may run on."""
    n = config.THREADS.integer()
    return config.cores() if n is None else n


@functools.cache
def _llvm_host_machine() -> tuple[str, str, tuple[str, ...]]:
    """Triple, CPU and features of this host, asked of LLVM once per process."""
    triple, cpu, features = jit.host_machine()
    if "+avx512f" in features:
        # LLVM reports e.g. rocketlake with AVX-512 but prefers 256-bit vectors there; without this the
        # vectorizer would not use the 16-wide vectors the schedules and the micro-kernel are built for
        features = (*features, "-prefer-256-bit")
    return triple, cpu, features


def llvm_host(threads: int) -> Target:
    """LLVM code for this CPU: 16 f32 lanes with AVX-512 and the 12 x 32 GEMM micro-tile, else 8 lanes
    and 6 x 16."""
    triple, cpu, features = _llvm_host_machine()
    width = 16 if "+avx512f" in features else 8
    mr, nr = GEMM_TILE[width]
    return Target(
        "llvm",
        triple=triple,
        cpu=cpu,
        features=features,
        vector_width=width,
        mr=mr,
        nr=nr,
        threads=threads,
        versions=(("llvmlite", jit.LLVMLITE_VERSION), ("codegen", jit.CODEGEN_VERSION)),
    )


KINDS: dict[str, TargetKind] = {
    "llvm": TargetKind("llvm", llvm_host, LLVM_BACKEND),
    "cuda": TargetKind("cuda", cuda_host, CUDA_BACKEND),  # NVRTC + driver API; see lower/cuda
}


def _kind(name: str) -> TargetKind:
    entry = KINDS.get(name)
    if entry is None:
        raise LoweringError(f"unknown target {name!r}; available: {', '.join(repr(k) for k in KINDS)}")
    return entry


def parse_target(target: str | Target = "llvm", threads: int | None = None) -> Target:
    """The ``Target`` for ``target``: a kind name for this host, or a record passed through.

    ``threads`` (when given) overrides the target's thread count; a kind name otherwise gets
    ``default_threads()``.  Raises ``LoweringError`` for a kind without a backend.
    """
    if isinstance(target, Target):
        _kind(target.kind)
        return target.with_threads(threads) if threads else target
    if not isinstance(target, str):
        raise LoweringError(f"a target is a kind name like 'llvm' or a Target, not {type(target).__name__}")
    return _kind(target).host(threads or default_threads())


def backend_of(target: Target) -> Backend:
    """The backend that compiles and runs kernels for ``target``."""
    return _kind(target.kind).backend


__all__ = ["KINDS", "TargetKind", "backend_of", "default_threads", "llvm_host", "parse_target"]
