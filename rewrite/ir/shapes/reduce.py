"""Reductions over a set of axes."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from rewrite.ir.shapes.base import MAX_RANK, Attrs, DrawCtx, EggCase, Shape, ShapeRule, at, need


def _check_axes(axes: Sequence[int], rank: int) -> None:
    need(len(axes) >= 1, "axes must not be empty")
    need(list(axes) == sorted(set(axes)), f"axes {list(axes)} must be sorted and distinct (normalised)")
    need(all(0 <= d < rank for d in axes), f"axes {list(axes)} out of range for rank {rank}")


@dataclass(frozen=True)
class Reduce(ShapeRule):
    """A reduction over ``axes`` (sorted, non-negative); ``keepdim``: keep them as size 1, else drop them.

    egglog: ``vec-set`` to 1 (keepdim) or ``vec-remove`` from the last axis down."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, axes = ins[0], a["axes"]
        _check_axes(axes, len(x))
        if a["keepdim"]:
            return [tuple(1 if d in axes else n for d, n in enumerate(x))]
        return [tuple(n for d, n in enumerate(x) if d not in axes)]

    def egg_cases(self) -> list[EggCase]:
        cases = []
        for n in range(1, MAX_RANK + 1):
            keep, drop = "s0", "s0"
            for i in range(n):
                keep = f"(vec-set {keep} {at('a_axes', i)} 1)"
            for i in reversed(range(n)):
                drop = f"(vec-remove {drop} {at('a_axes', i)})"
            cond = f"(= (vec-length a_axes) {n})"
            cases.append((f"{cond} (= a_keepdim 1)", keep))
            cases.append((f"{cond} (= a_keepdim 0)", drop))
        return cases

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        keep = ctx.const_attr("keepdim")
        if keep != 0:
            ctx.ranks.union(out, ins[0])

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x, rng = ins[0], ctx.rng
        r = len(x)
        axes = ctx.attr("axes", lambda: tuple(sorted(rng.sample(range(r), rng.randint(1, r)))))
        keep = ctx.attr("keepdim", lambda: 1)
        if not axes or list(axes) != sorted(set(axes)) or not all(0 <= d < r for d in axes):
            ctx.reject(f"bad reduction axes {axes} for rank {r}")
        if keep:
            return [ctx.dims.new(1) if d in axes else n for d, n in enumerate(x)]
        return [n for d, n in enumerate(x) if d not in axes]
