"""Contractions: matmul, linear, conv2d."""

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
    conv_out,
    need,
)


@dataclass(frozen=True)
class MatMul(ShapeRule):
    """(Batched) matrix product of equal ranks; ``bias``: a third input [N] along the last axis; ``at``: A given
    transposed, [..., K, M] (``matmul_at``: A^T B)."""

    bias: bool = False
    at: bool = False

    def _km(self, r: int) -> tuple[int, int]:
        """A's (contracted, row) axes for rank ``r``."""
        return (r - 2, r - 1) if self.at else (r - 1, r - 2)

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, y = ins[:2]
        need(len(x) >= 2 and len(x) == len(y), f"matmul needs equal ranks >= 2, got {x} and {y}")
        k, m = self._km(len(x))
        need(x[k] == y[-2], f"inner dimensions differ: {x[k]} vs {y[-2]}")
        out = broadcast(x[:-2], y[:-2]) + (x[m], y[-1])
        if self.bias:
            b = ins[2]
            need(b == (y[-1],), f"bias must be [{y[-1]}] (one per output column), got {b}")
        return [out]

    def egg_cases(self) -> list[EggCase]:
        cases = []
        for r in range(2, MAX_RANK + 1):
            k, m = self._km(r)
            batch = " ".join(f"(max {at('s0', i)} {at('s1', i)})" for i in range(r - 2))
            cases.append(
                (
                    f"(= (vec-length s0) {r}) (= (vec-length s1) {r}) (= {at('s0', k)} {at('s1', r - 2)})",
                    f"(vec-of {batch} {at('s0', m)} {at('s1', r - 1)})".replace("  ", " "),
                )
            )
        if not self.bias:
            return cases
        bias = f"(= (vec-length s2) 1) (= {at('s2', 0)} {at('s1', '(- (vec-length s1) 1)')})"
        return [(f"{cond} {bias}", result) for cond, result in cases]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.union(out, ins[0])
        ctx.ranks.union(out, ins[1])
        ctx.ranks.atleast(out, 2)
        for k in ins[2:]:  # bias [N]
            ctx.ranks.fix(k, 1)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        a, b = ins[:2]
        if len(a) != len(b) or len(a) < 2:
            ctx.reject("matmul operands need equal ranks >= 2")
        k, m = self._km(len(a))
        ctx.dims.union(a[k], b[-2])
        for bias in ins[2:]:
            ctx.dims.union(bias[0], b[-1])
        return [ctx.bcast(x, y) for x, y in zip(a[:-2], b[:-2])] + [a[m], b[-1]]


@dataclass(frozen=True)
class Linear(ShapeRule):
    """x @ w.T + b: x [..., in], w [out, in], b [out]."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, w, b = ins
        need(len(w) == 2 and len(b) == 1, f"linear needs weight [out, in] and bias [out], got {w} and {b}")
        need(len(x) >= 1 and x[-1] == w[1], f"input features {x[-1] if x else None} != weight in-features {w[1]}")
        need(b[0] == w[0], f"bias size {b[0]} != out-features {w[0]}")
        return [x[:-1] + (w[0],)]

    def egg_cases(self) -> list[EggCase]:
        last = "(- (vec-length s0) 1)"
        return [(f"(= {at('s0', last)} {at('s1', 1)})", f"(vec-set s0 {last} {at('s1', 0)})")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.union(out, ins[0])
        ctx.ranks.fix(ins[1], 2)
        ctx.ranks.fix(ins[2], 1)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x, w, bias = ins
        if not x or len(w) != 2 or len(bias) != 1:
            ctx.reject("linear needs x, w [out, in], b [out]")
        ctx.dims.union(x[-1], w[1])
        ctx.dims.union(bias[0], w[0])
        return x[:-1] + [w[0]]


def egg_conv_out() -> list[str]:
    """The egglog expressions of a convolution's two output sizes: input ``s0`` and weight ``s1`` with the
    spatial sizes at positions 2 and 3, attributes ``padding``, ``dilation``, ``stride``."""
    dims = []
    for i in range(2):
        span = (
            f"(- (+ {at('s0', 2 + i)} (* 2 {at('a_padding', i)})) "
            f"(+ (* {at('a_dilation', i)} (- {at('s1', 2 + i)} 1)) 1))"
        )
        dims.append(f"(+ (/ {span} {at('a_stride', i)}) 1)")
    return dims


@dataclass(frozen=True)
class Conv2d(ShapeRule):
    """NCHW x OIHW with ``stride``, ``padding``, ``dilation``, ``groups``; ``bias``: a third input [O]."""

    bias: bool = False

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, w = ins[:2]
        need(len(x) == 4 and len(w) == 4, f"conv2d needs NCHW input and OIHW weight, got {x} and {w}")
        for k in ("stride", "padding", "dilation"):
            need(len(a[k]) == 2, f"{k} must have 2 entries, got {a[k]}")
        g = a["groups"]
        need(g >= 1 and x[1] % g == 0 and w[0] % g == 0, f"groups={g} must divide in {x[1]} and out {w[0]} channels")
        need(w[1] * g == x[1], f"weight expects {w[1] * g} input channels, input has {x[1]}")
        hw = [conv_out(x[2 + i], w[2 + i], a["stride"][i], a["padding"][i], a["dilation"][i]) for i in range(2)]
        need(all(d > 0 for d in hw), f"output spatial size {hw} is empty")
        if self.bias:
            need(ins[2] == (w[0],), f"bias must be [{w[0]}] (one per output channel), got {ins[2]}")
        return [(x[0], w[0], hw[0], hw[1])]

    def egg_cases(self) -> list[EggCase]:
        dims = egg_conv_out()
        cond = f"(= {at('s0', 1)} (* {at('s1', 1)} a_groups))"
        if self.bias:  # one value per output channel
            cond += f" (= (vec-length s2) 1) (= {at('s2', 0)} {at('s1', 0)})"
        return [(cond, f"(vec-of {at('s0', 0)} {at('s1', 0)} {dims[0]} {dims[1]})")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        for k in (out, ins[0], ins[1]):
            ctx.ranks.fix(k, 4)
        for k in ins[2:]:  # bias [O]
            ctx.ranks.fix(k, 1)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        D, rng = ctx.dims, ctx.rng
        x, w = ins[:2]
        for bias in ins[2:]:
            D.union(bias[0], w[0])
        stride = ctx.attr("stride", lambda: (rng.choice((1, 1, 2)), rng.choice((1, 1, 2))))
        pad = ctx.attr("padding", lambda: (rng.randint(0, 1), rng.randint(0, 1)))
        dil = ctx.attr("dilation", lambda: (rng.choice((1, 1, 2)), rng.choice((1, 1, 2))))
        g = ctx.attr("groups", lambda: rng.choice((1, 1, 1, 2, 3)))
        if len(stride) != 2 or len(pad) != 2 or len(dil) != 2 or g < 1:
            ctx.reject("bad conv2d attributes")
        if g == 1:
            D.union(x[1], w[1])
        else:
            D.union(x[1], D.derived(lambda c: c * g, w[1]))
            D.union(w[0], D.derived(lambda c: c * g, D.new()))
        return [x[0], w[0]] + [
            D.derived(lambda h, k, i=i: conv_out(h, k, stride[i], pad[i], dil[i]), x[2 + i], w[2 + i]) for i in range(2)
        ]
