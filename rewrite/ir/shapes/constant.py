"""Constant tensors built from their attributes alone: a filled tensor, an identity matrix, 2-d conv kernels.

These are TASO's constants (const_one, const_imm, const_iconv, const_pool): they
have no inputs, so every shape here is a function of the attributes.

    >>> Filled().infer([], {"shape": (2, 3)})
    [(2, 3)]
    >>> ConvKernel(odd=True).infer([], {"channels": 4, "kernel": (3, 3)})
    [(4, 4, 3, 3)]
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from rewrite.ir.shapes.base import Attrs, DrawCtx, EggCase, Shape, ShapeRule, at, need


@dataclass(frozen=True)
class Filled(ShapeRule):
    """The ``shape`` attribute (every element the same value)."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        need(len(a["shape"]) >= 1, "shape must have at least one dimension")
        need(all(d > 0 for d in a["shape"]), f"dimensions must be positive, got {a['shape']}")
        return [a["shape"]]

    def egg_cases(self) -> list[EggCase]:
        return [("", "a_shape")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.rank_of_list_attr("shape", out)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        known = ctx.known_attr("shape")
        if isinstance(known, tuple):
            return [ctx.dims.new(v) for v in known]
        return [ctx.dims.new() for _ in range(ctx.out_rank())]


@dataclass(frozen=True)
class Square(ShapeRule):
    """``[n, n]`` (an identity matrix)."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        need(a["n"] > 0, f"n must be positive, got {a['n']}")
        return [(a["n"], a["n"])]

    def egg_cases(self) -> list[EggCase]:
        return [("(> a_n 0)", "(vec-of a_n a_n)")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 2)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        n = ctx.attr("n", lambda: ctx.rng.randint(1, 6))
        return [ctx.dims.new(n), ctx.dims.new(n)]


@dataclass(frozen=True)
class ConvKernel(ShapeRule):
    """``[channels, channels, kh, kw]``: a dense OIHW conv kernel mapping ``channels`` to ``channels``.

    ``odd``: the kernel sizes must be odd, so the kernel has one centre tap and a
    conv with padding ``(k-1)/2`` keeps the spatial size (TASO's "same" padding).
    """

    odd: bool = False

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        c, k = a["channels"], a["kernel"]
        need(c > 0, f"channels must be positive, got {c}")
        need(len(k) == 2 and all(d > 0 for d in k), f"kernel must be 2 positive sizes, got {k}")
        need(not self.odd or all(d % 2 == 1 for d in k), f"kernel sizes must be odd (one centre tap), got {k}")
        return [(c, c, k[0], k[1])]

    def egg_cases(self) -> list[EggCase]:
        k0, k1 = at("a_kernel", 0), at("a_kernel", 1)
        cond = f"(> a_channels 0) (= (vec-length a_kernel) 2) (> {k0} 0) (> {k1} 0)"
        if self.odd:
            cond += f" (= (% {k0} 2) 1) (= (% {k1} 2) 1)"
        return [(cond, f"(vec-of a_channels a_channels {k0} {k1})")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        rng = ctx.rng
        c = ctx.attr("channels", lambda: rng.randint(1, 5))
        sizes = (1, 3) if self.odd else (1, 2, 3)
        k = ctx.attr("kernel", lambda: (rng.choice(sizes), rng.choice(sizes)))
        if len(k) != 2:
            ctx.reject("a conv kernel needs 2 kernel sizes")
        return [ctx.dims.new(c), ctx.dims.new(c), ctx.dims.new(k[0]), ctx.dims.new(k[1])]
