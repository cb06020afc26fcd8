"""Kinds whose output follows the inputs elementwise: sources, same shape, per-channel, broadcasting."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from rewrite.ir.shapes.base import (
    MAX_RANK,
    Attrs,
    DrawCtx,
    EggCase,
    Shape,
    ShapeRule,
    at,
    broadcast,
    need,
    norm_axis,
)


@dataclass(frozen=True)
class Source(ShapeRule):
    """A graph input or weight: the ``shape`` attribute."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        need(all(d > 0 for d in a["shape"]), f"dimensions must be positive, got {a['shape']}")
        return [a["shape"]]

    def egg_cases(self) -> list[EggCase]:
        return [("", "a_shape")]


@dataclass(frozen=True)
class Same(ShapeRule):
    """Output shaped like input 0 (unary elementwise); ``axis``: also check that attribute."""

    axis: str | None = None

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        if self.axis is not None:
            norm_axis(a[self.axis], len(ins[0]))
        return [ins[0]]

    def egg_cases(self) -> list[EggCase]:
        return [("", "s0")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        for k in ins:
            ctx.ranks.union(out, k)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        return list(ins[0])


@dataclass(frozen=True)
class PerChannel(ShapeRule):
    """Output shaped like input 0; the other inputs are vectors along ``axis`` (norm parameters)."""

    axis: int  # 1 (batchnorm) or -1 (layernorm)

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x = ins[0]
        if self.axis == 1:
            need(len(x) >= 2, f"batchnorm needs a channel axis, got {x}")
            for s in ins[1:]:
                need(s == (x[1],), f"batchnorm parameters must be [{x[1]}], got {s}")
        else:
            need(
                len(x) >= 1 and all(s == (x[-1],) for s in ins[1:]),
                f"layernorm weight and bias must be [{x[-1] if x else '?'}], got "
                + " and ".join(str(s) for s in ins[1:]),
            )
        return [x]

    def egg_cases(self) -> list[EggCase]:
        return [("", "s0")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.union(out, ins[0])
        if self.axis == 1:
            ctx.ranks.atleast(out, 2)
        for k in ins[1:]:
            ctx.ranks.fix(k, 1)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x = ins[0]
        for q in ins[1:]:
            ctx.dims.union(q[0], x[self.axis])
        return list(x)


@dataclass(frozen=True)
class Broadcast(ShapeRule):
    """Two inputs of equal rank, broadcast dimension by dimension."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        return [broadcast(ins[0], ins[1])]

    def egg_cases(self) -> list[EggCase]:
        sa, sb = "s0", "s1"
        return [
            (
                f"(= (vec-length s0) {r}) (= (vec-length s1) {r})",
                f"(vec-of {' '.join(f'(max {at(sa, i)} {at(sb, i)})' for i in range(r))})",
            )
            for r in range(1, MAX_RANK + 1)
        ]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        for k in ins:
            ctx.ranks.union(out, k)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        a, b = ins
        if len(a) != len(b):
            ctx.reject("elementwise operands need equal ranks")
        return [ctx.bcast(x, y) for x, y in zip(a, b)]


@dataclass(frozen=True)
class Broadcast3(ShapeRule):
    """Three inputs of equal rank, broadcast dimension by dimension (``where``)."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        return [broadcast(broadcast(ins[0], ins[1]), ins[2])]

    def egg_cases(self) -> list[EggCase]:
        return [
            (
                f"(= (vec-length s0) {r}) (= (vec-length s1) {r}) (= (vec-length s2) {r})",
                "(vec-of " + " ".join(f"(max {at('s0', i)} (max {at('s1', i)} {at('s2', i)}))" for i in range(r)) + ")",
            )
            for r in range(1, MAX_RANK + 1)
        ]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        for k in ins:
            ctx.ranks.union(out, k)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        a, b, c = ins
        if not len(a) == len(b) == len(c):
            ctx.reject("where operands need equal ranks")
        return [ctx.bcast(ctx.bcast(x, y), z) for x, y, z in zip(a, b, c)]


@dataclass(frozen=True)
class GroupedChannels(PerChannel):
    """Like ``PerChannel(1)``; the channels also split evenly into ``num_groups`` (group norm)."""

    axis: int = 1

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        out = super().infer(ins, a)
        g = a["num_groups"]
        need(g >= 1 and ins[0][1] % g == 0, f"num_groups={g} must divide the {ins[0][1]} channels")
        return out
