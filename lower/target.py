"""Targets by name: parsing a kind name into this host's Target, the llvm kind's host detection, and
the backend of a target.

    >>> t = parse_target("llvm", threads=2)           # LLVM for this CPU
    >>> t.kind, t.vector_width, (t.mr, t.nr), t.threads   # doctest: +SKIP
    ('llvm', 16, (12, 32), 2)
    >>> backend_of(t).name
    'llvm'

Everything about a kind is its record, ``rewrite.ir.target.TargetKind`` (one layer down, so that
``costs`` and the pipeline ask the same record): how to describe this machine as a target of the
kind (``host``), and the ``Backend`` that compiles and runs kernels for it.  Adding a kind is one
record plus its backend module (``lower/cuda/``): nothing in the runtime's driver code or in
extraction changes.
"""

from __future__ import annotations

import functools

from lower.backend import Backend
from lower.llvm import jit
from rewrite import config
from rewrite.ir.errors import LoweringError
from rewrite.ir.target import KINDS, Target, TargetKind, compiled_kinds

GEMM_TILE = {16: (12, 32), 8: (6, 16)}  # MR x NR of the micro-kernel per vector width: 24 of the 32 zmm
#                                           registers (AVX-512) or 12 of the 16 ymm (AVX2) hold accumulators


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


def _kind(name: str) -> TargetKind:
    """The record of a kind that compiles kernels (``LoweringError`` for any other name)."""
    entry = KINDS.get(name)
    available = ", ".join(repr(k) for k in compiled_kinds())
    if entry is None:
        raise LoweringError(f"unknown target {name!r}; available: {available}")
    if not entry.compiled:
        raise LoweringError(f"target {name!r} compiles no kernels (it runs graphs eagerly); available: {available}")
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
    return _kind(target).detect(threads or default_threads())


def backend_of(target: Target) -> Backend:
    """The backend that compiles and runs kernels for ``target``."""
    backend = _kind(target.kind).load_backend()
    assert isinstance(backend, Backend), (target.kind, backend)
    return backend


__all__ = ["GEMM_TILE", "backend_of", "default_threads", "llvm_host", "parse_target"]
