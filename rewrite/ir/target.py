"""``Target``: what code is generated for, or what measurements were taken on — one typed record.

Plain data, shared by the two layers that must agree on it without importing each other:
``lower`` compiles kernels for a Target (and caches them under its key), ``costs`` keys measured
operator times by one.  Parsing a name into the Target of this host belongs to whoever knows how
to detect it: ``lower.target.parse_target("llvm")`` (LLVM for this CPU),
``costs.measured.torch_target()`` (PyTorch eager on this CPU).

    >>> t = Target("torch", name="torch-cpu", threads=2, versions=(("torch", "2.13.0"),))
    >>> t.cache_key
    'torch-cpu|threads=2|torch=2.13.0'
    >>> Target("llvm", cpu="rocketlake", features=("+avx512f",), vector_width=16, mr=8, nr=32).code_key
    'llvm|cpu=rocketlake|features=21de4f02f53fc45f|vector=16|tile=8x32'

Fields that do not apply to a kind stay empty (``""``, ``()``, ``0``) and are left out of its keys.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from functools import cached_property

from rewrite.ir.errors import UsageError


@dataclass(frozen=True)
class Target:
    """A backend kind on one machine, with the facts schedules, code generation and caches read.

    ``kind`` picks the backend (``"llvm"``, ``"torch"``; a ``"cuda"`` kind would add a backend);
    ``name`` labels the target in keys and messages (default: the kind); ``triple``, ``cpu`` and
    ``features`` are LLVM's names for the machine; ``vector_width`` is the f32 lanes of one SIMD
    register, ``mr`` x ``nr`` the GEMM micro-kernel's register tile; ``threads`` how many threads
    kernels run on; ``versions`` the software whose version results depend on (``("torch", "2.13.0")``).
    """

    kind: str
    name: str = ""
    triple: str = ""
    cpu: str = ""
    features: tuple[str, ...] = field(default=(), repr=False)  # ~100 of them for a host CPU: keys hold a digest
    vector_width: int = 0
    mr: int = 0
    nr: int = 0
    threads: int = 1
    versions: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.kind:
            raise UsageError("a target needs a kind (e.g. 'llvm')")
        if not self.name:
            object.__setattr__(self, "name", self.kind)  # frozen: the one default derived from another field
        if not isinstance(self.threads, int) or self.threads < 1:
            raise UsageError(f"target {self.name}: threads must be a positive integer, got {self.threads!r}")
        if self.vector_width < 0 or self.mr < 0 or self.nr < 0:
            raise UsageError(f"target {self.name}: vector width and tile sizes cannot be negative")
        if not isinstance(self.features, tuple):
            raise UsageError(f"target {self.name}: features must be a tuple of strings like '+avx512f'")

    def with_threads(self, threads: int) -> Target:
        """The same target running on ``threads`` threads."""
        return self if threads == self.threads else replace(self, threads=threads)

    def has_feature(self, feature: str) -> bool:
        """Whether ``+feature`` is among the features (``t.has_feature("avx512f")``)."""
        return f"+{feature}" in self.features

    @cached_property
    def code_key(self) -> str:
        """What generated machine code depends on: the cache key without the thread count.

        Kernels take the range of their parallel loop as arguments, so one object file serves
        every thread count (thread-dependent choices, like block sizes, are in the IR text)."""
        return "|".join(self._parts(threads=False))

    @cached_property
    def cache_key(self) -> str:
        """Everything results on this target depend on, as one string: keys measured costs."""
        return "|".join(self._parts(threads=True))

    def _parts(self, threads: bool) -> list[str]:
        parts = [self.name]
        if threads:
            parts.append(f"threads={self.threads}")
        if self.triple:
            parts.append(self.triple)
        if self.cpu:
            parts.append(f"cpu={self.cpu}")
        if self.features:  # LLVM lists ~100 of them: a digest keeps keys short and still exact enough
            digest = hashlib.sha256(",".join(self.features).encode()).hexdigest()[:16]
            parts.append(f"features={digest}")
        if self.vector_width:
            parts.append(f"vector={self.vector_width}")
        if self.mr or self.nr:
            parts.append(f"tile={self.mr}x{self.nr}")
        parts += [f"{k}={v}" for k, v in self.versions]
        return parts


__all__ = ["Target"]
