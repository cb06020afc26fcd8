"""Indexing kinds: embedding, index_select, gather."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from rewrite.ir.shapes.base import MAX_RANK, Attrs, DrawCtx, EggCase, Shape, ShapeRule, at, need, norm_axis


@dataclass(frozen=True)
class Embedding(ShapeRule):
    """Rows of a table [V, D] picked by an index tensor: output ``ids.shape + (D,)``."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        table, ids = ins
        need(len(table) == 2, f"embedding table must be [V, D], got {table}")
        need(len(ids) + 1 <= MAX_RANK, f"indices of rank {len(ids)} are too many")
        return [ids + (table[1],)]

    def egg_cases(self) -> list[EggCase]:
        return [
            (
                f"(= (vec-length s0) 2) (= (vec-length s1) {r})",
                f"(vec-of {' '.join(at('s1', i) for i in range(r))} {at('s0', 1)})",
            )
            for r in range(1, MAX_RANK)
        ]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(ins[0], 2)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        return list(ins[1]) + [ins[0][1]]


@dataclass(frozen=True)
class IndexSelect(ShapeRule):
    """Entries of input 0 along ``axis`` picked by a rank-1 index: that axis becomes the index's length."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, idx = ins
        ax = norm_axis(a["axis"], len(x))
        need(len(idx) == 1, f"index must be rank 1, got {idx}")
        return [x[:ax] + idx + x[ax + 1 :]]

    def egg_cases(self) -> list[EggCase]:
        return [("(= (vec-length s1) 1)", f"(vec-set s0 a_axis {at('s1', 0)})")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.union(out, ins[0])
        ctx.ranks.fix(ins[1], 1)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x = ins[0]
        ax = ctx.axis(ctx.attr("axis", lambda: ctx.rng.randrange(len(x))), len(x))
        return [ins[1][0] if d == ax else x[d] for d in range(len(x))]


@dataclass(frozen=True)
class Gather(ShapeRule):
    """``torch.gather``: output shaped like the index (equal ranks, no larger than input 0 off ``axis``)."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, idx = ins
        ax = norm_axis(a["axis"], len(x))
        need(len(idx) == len(x), f"index rank {len(idx)} != input rank {len(x)}")
        need(all(idx[d] <= x[d] for d in range(len(x)) if d != ax), f"index {idx} is larger than input {x}")
        return [idx]

    def egg_cases(self) -> list[EggCase]:
        return [("(= (vec-length s0) (vec-length s1))", "s1")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        for k in ins:
            ctx.ranks.union(out, k)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x, idx = ins
        ax = ctx.axis(ctx.attr("axis", lambda: ctx.rng.randrange(len(x))), len(x))
        for d in range(len(x)):
            if d != ax:
                ctx.dims.union(idx[d], x[d])
        return list(idx)
