"""``CostKey``: what a row of measured costs depends on — its own record, not a mutated ``Target``.

A row is keyed by the target the op ran on (kind, machine, precision, threads, the software versions code
depends on), by which table it belongs to (an op's own kernel time, or what it adds ``fused`` into a
neighbour's kernel) and by the versions the measurement itself depends on (a digest of the lowering's
source, the runner's version), which are no part of the target kernels are compiled for.

    >>> t = Target("torch", name="torch-cpu", threads=2, versions=(("torch", "2.13.0"),))
    >>> CostKey(t).cache_key                       # the target's key: torch rows keep theirs
    'torch-cpu|threads=2|torch=2.13.0'
    >>> CostKey(Target("llvm", threads=1), versions=(("runner", "3"),)).as_fused().cache_key
    'llvm|threads=1|runner=3|fused'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from rewrite.ir.target import Target, TargetKind


@dataclass(frozen=True)
class CostKey:
    """Measured rows of ``target``: its kernels' own times, or (``fused``) fused increments; ``versions``
    are what the measurement depends on beyond the target (``(("lower", digest), ("runner", "3"))``)."""

    target: Target
    fused: bool = False
    versions: tuple[tuple[str, str], ...] = ()

    @property
    def kind(self) -> TargetKind:
        return self.target.kind_info

    @property
    def name(self) -> str:
        return self.target.name

    def as_fused(self) -> CostKey:
        """The key of the fused increments measured beside these rows."""
        return replace(self, fused=True)

    @cached_property
    def cache_key(self) -> str:
        """The ``target`` column of the cost cache: the target's key, the measurement's versions, the table."""
        return "|".join([self.target.cache_key, *(f"{k}={v}" for k, v in self.versions), *(["fused"] * self.fused)])


__all__ = ["CostKey"]
