"""The blocked channel layout NCHWc: channels cut into blocks of ``b`` (the target's vector lanes), the
block's lanes innermost, so one vector holds ``b`` channels of one pixel.

* ``ToBlocked``: [N, C, H, W] with ``block`` b -> [N, ceil(C/b), H, W, b] (lanes past C zero);
* ``FromBlocked``: [N, CB, H, W, b] with ``channels`` C -> [N, C, H, W] (C in the last block);
* ``BlockedWeight``: [K, Cg, KH, KW] with ``block`` b -> [ceil(K/b), Cg, KH, KW, b] (output channels blocked);
* ``ConvBlocked``: [N, CB, H, W, b] x [KB, Cg, KH, KW, b] -> [N, KB, OH, OW, b], dense (``groups`` 1: the
  first Cg channels) or depthwise (``groups`` G = output channels, Cg 1: lane k reads channel k).

    >>> ToBlocked().infer([(1, 20, 5, 6)], {"block": 16})
    [(1, 2, 5, 6, 16)]
    >>> FromBlocked().infer([(1, 2, 5, 6, 16)], {"channels": 20})
    [(1, 20, 5, 6)]
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rewrite.ir.shapes.base import Attrs, DrawCtx, EggCase, Shape, ShapeRule, at, conv_out, need
from rewrite.ir.shapes.contraction import egg_conv_out


def blocks(c: int, b: int) -> int:
    """Blocks of ``b`` lanes holding ``c`` channels."""
    return -(-c // b)


def _egg_blocks(c: str, b: str) -> str:
    return f"(/ (+ {c} (- {b} 1)) {b})"


@dataclass(frozen=True)
class ToBlocked(ShapeRule):
    """[N, C, H, W] -> [N, ceil(C/b), H, W, b]."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, b = ins[0], a["block"]
        need(len(x) == 4, f"to_blocked needs NCHW, got {x}")
        need(b >= 1, f"block must be positive, got {b}")
        return [(x[0], blocks(x[1], b), x[2], x[3], b)]

    def egg_cases(self) -> list[EggCase]:
        cb = _egg_blocks(at("s0", 1), "a_block")
        return [
            ("(= (vec-length s0) 4) (>= a_block 1)", f"(vec-of {at('s0', 0)} {cb} {at('s0', 2)} {at('s0', 3)} a_block)")
        ]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 5)
        ctx.ranks.fix(ins[0], 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x = ins[0]
        b = ctx.attr("block", lambda: ctx.rng.choice((2, 4, 16)))
        if b < 1:
            ctx.reject("block must be positive")
        return [x[0], ctx.dims.derived(lambda c: blocks(c, b), x[1]), x[2], x[3], ctx.dims.new(b)]


@dataclass(frozen=True)
class FromBlocked(ShapeRule):
    """[N, CB, H, W, b] -> [N, C, H, W], the ``channels`` C in the last block: (CB - 1) * b < C <= CB * b."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        y, c = ins[0], a["channels"]
        need(len(y) == 5, f"from_blocked needs [N, CB, H, W, b], got {y}")
        need((y[1] - 1) * y[4] < c <= y[1] * y[4], f"{c} channels do not fill the last of {y[1]} blocks of {y[4]}")
        return [(y[0], c, y[2], y[3])]

    def egg_cases(self) -> list[EggCase]:
        cb, b = at("s0", 1), at("s0", 4)
        cond = f"(= (vec-length s0) 5) (< (* (- {cb} 1) {b}) a_channels) (<= a_channels (* {cb} {b}))"
        return [(cond, f"(vec-of {at('s0', 0)} a_channels {at('s0', 2)} {at('s0', 3)})")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 4)
        ctx.ranks.fix(ins[0], 5)

    late_attrs: ClassVar[tuple[str, ...]] = ("channels",)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        y = ins[0]
        c = ctx.const_attr("channels")
        return [y[0], ctx.dims.new(c) if isinstance(c, int) else ctx.dims.new(), y[2], y[3]]

    def draw_late(self, ctx: DrawCtx, name: str, shapes: list[Shape], target: list[int | None]) -> Any:
        """A channel count in the operand's last block (the one fixed elsewhere, when it fits)."""
        cb, b = shapes[0][1], shapes[0][4]
        lo, hi = (cb - 1) * b + 1, cb * b
        want = target[1]
        if want is not None:
            if not lo <= want <= hi:
                ctx.reject(f"{want} channels do not fill the last of {cb} blocks of {b}")
            return want
        return ctx.rng.randint(lo, hi)


@dataclass(frozen=True)
class BlockedWeight(ShapeRule):
    """[K, Cg, KH, KW] -> [ceil(K/b), Cg, KH, KW, b]."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        w, b = ins[0], a["block"]
        need(len(w) == 4, f"blocked_weight needs OIHW, got {w}")
        need(b >= 1, f"block must be positive, got {b}")
        return [(blocks(w[0], b), w[1], w[2], w[3], b)]

    def egg_cases(self) -> list[EggCase]:
        kb = _egg_blocks(at("s0", 0), "a_block")
        return [
            ("(= (vec-length s0) 4) (>= a_block 1)", f"(vec-of {kb} {at('s0', 1)} {at('s0', 2)} {at('s0', 3)} a_block)")
        ]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 5)
        ctx.ranks.fix(ins[0], 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        w = ins[0]
        b = ctx.attr("block", lambda: ctx.rng.choice((2, 4, 16)))
        if b < 1:
            ctx.reject("block must be positive")
        return [ctx.dims.derived(lambda k: blocks(k, b), w[0]), w[1], w[2], w[3], ctx.dims.new(b)]


@dataclass(frozen=True)
class ConvBlocked(ShapeRule):
    """[N, CB, H, W, b] x [KB, Cg, KH, KW, b] -> [N, KB, OH, OW, b] with ``stride``, ``padding``,
    ``dilation`` and ``groups``: 1 (Cg <= CB * b input channels), or G > 1 depthwise (Cg 1, G channels in
    and out, KB = ceil(G / b)); ``bias``: a third input [K] with ceil(K / b) = KB (dense) or K = G."""

    bias: bool = False

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, w = ins[:2]
        need(
            len(x) == 5 and len(w) == 5,
            f"conv2d_blocked needs [N, CB, H, W, b] and [KB, Cg, KH, KW, b], got {x} and {w}",
        )
        b, g = x[4], a["groups"]
        need(w[4] == b, f"weight blocks of {w[4]} lanes, input blocks of {b}")
        for k in ("stride", "padding", "dilation"):
            need(len(a[k]) == 2, f"{k} must have 2 entries, got {a[k]}")
        if g == 1:
            need(w[1] <= x[1] * b, f"weight expects {w[1]} input channels, input has at most {x[1] * b}")
        else:
            need(g > 1 and w[1] == 1, f"groups={g}: only depthwise (1 input channel per group), weight {w}")
            need(
                w[0] == blocks(g, b) and x[1] == w[0],
                f"depthwise over {g} channels needs {blocks(g, b)} blocks, got {x} and {w}",
            )
        hw = [conv_out(x[2 + i], w[2 + i], a["stride"][i], a["padding"][i], a["dilation"][i]) for i in range(2)]
        need(all(d > 0 for d in hw), f"output spatial size {hw} is empty")
        if self.bias:
            bs = ins[2]
            need(
                len(bs) == 1 and blocks(bs[0], b) == w[0] and (g == 1 or bs[0] == g),
                f"bias {bs} does not fit {w[0]} blocks",
            )
        return [(x[0], w[0], hw[0], hw[1], b)]

    def egg_cases(self) -> list[EggCase]:
        dims = egg_conv_out()
        b = at("s0", 4)
        base = f"(= (vec-length s0) 5) (= (vec-length s1) 5) (= {at('s1', 4)} {b})"
        out = f"(vec-of {at('s0', 0)} {at('s1', 0)} {dims[0]} {dims[1]} {b})"
        dense = f"{base} (= a_groups 1) (<= {at('s1', 1)} (* {at('s0', 1)} {b}))"
        dw = (
            f"{base} (> a_groups 1) (= {at('s1', 1)} 1) (= {at('s1', 0)} {_egg_blocks('a_groups', b)}) "
            f"(= {at('s0', 1)} {at('s1', 0)})"
        )
        if self.bias:
            fits = f"(= (vec-length s2) 1) (= {_egg_blocks(at('s2', 0), b)} {at('s1', 0)})"
            dense += f" {fits}"
            dw += f" {fits} (= {at('s2', 0)} a_groups)"
        return [(dense, out), (dw, out)]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        for k in (out, ins[0], ins[1]):
            ctx.ranks.fix(k, 5)
        for k in ins[2:]:
            ctx.ranks.fix(k, 1)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        D, rng = ctx.dims, ctx.rng
        x, w = ins[:2]
        D.union(x[4], w[4])
        stride = ctx.attr("stride", lambda: (rng.choice((1, 2)), rng.choice((1, 2))))
        pad = ctx.attr("padding", lambda: (rng.randint(0, 1), rng.randint(0, 1)))
        dil = ctx.attr("dilation", lambda: (1, 1))
        g = ctx.attr("groups", lambda: 1)
        if len(stride) != 2 or len(pad) != 2 or len(dil) != 2 or g != 1:
            ctx.reject("the rule checker draws dense blocked convolutions only")
        return (
            [x[0], w[0]]
            + [
                D.derived(lambda h, k, i=i: conv_out(h, k, stride[i], pad[i], dil[i]), x[2 + i], w[2 + i])
                for i in range(2)
            ]
            + [x[4]]
        )
