"""Winograd F(4x4, 3x3) convolution's three layouts: transformed weights, input tiles, output tiles.

A 3x3 stride-1 convolution with output ``OH x OW`` is cut into ``TH x TW`` tiles of 4x4 outputs
(``TH = ceil(OH / 4)``), each read from a 6x6 input tile; the transformed tensors put the 36 tile
positions first so that the product is one batched ``matmul`` [36, N*T, C] @ [36, C, K] (tiles as
the GEMM's rows, output channels as its columns: the transformed weights are the constant, packed
operand, and a small map's few tiles do not leave the micro-kernel's columns empty):

* ``WinogradWeight``: [K, C, 3, 3] -> [36, C, K];
* ``WinogradInput``: [N, C, H, W] with ``padding`` -> [36, N*T, C], ``T = TH * TW``
  (``tiles_inner``: [36, C, N*T], read by ``matmul_at`` as a column-major A);
* ``WinogradOutput``: [36, N*T, K] with ``out = (OH, OW)`` -> [N, K, OH, OW] (``bias``: a second input [K]).

    >>> WinogradInput().infer([(2, 3, 7, 9)], {"padding": (1, 1)})
    [(36, 12, 3)]
    >>> WinogradOutput().infer([(36, 12, 5)], {"out": (7, 9)})
    [(2, 5, 7, 9)]
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from rewrite.ir.shapes.base import Attrs, DrawCtx, EggCase, Shape, ShapeRule, at, need

T = TypeVar("T")
TILE = 4  # outputs per tile side: F(4x4, 3x3)
ALPHA = TILE + 2  # input tile side
POSITIONS = ALPHA * ALPHA  # 36 transformed positions


def tiles(oh: int, ow: int) -> int:
    """Number of 4x4 output tiles covering an ``oh`` x ``ow`` output."""
    return -(-oh // TILE) * -(-ow // TILE)


def _egg_tiles(oh: str, ow: str) -> str:
    return f"(* (/ (+ {oh} {TILE - 1}) {TILE}) (/ (+ {ow} {TILE - 1}) {TILE}))"


@dataclass(frozen=True)
class WinogradWeight(ShapeRule):
    """[K, C, 3, 3] -> [36, C, K]."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        w = ins[0]
        need(len(w) == 4 and w[2:] == (3, 3), f"winograd weights must be [K, C, 3, 3], got {w}")
        return [(POSITIONS, w[1], w[0])]

    def egg_cases(self) -> list[EggCase]:
        return [
            (
                f"(= (vec-length s0) 4) (= {at('s0', 2)} 3) (= {at('s0', 3)} 3)",
                f"(vec-of {POSITIONS} {at('s0', 1)} {at('s0', 0)})",
            )
        ]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 3)
        ctx.ranks.fix(ins[0], 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        w = ins[0]
        ctx.dims.fix(w[2], 3)
        ctx.dims.fix(w[3], 3)
        return [ctx.dims.new(POSITIONS), w[1], w[0]]


@dataclass(frozen=True)
class WinogradInput(ShapeRule):
    """[N, C, H, W] with ``padding`` (ph, pw) -> [36, N*T, C]; the 3x3 output must not be empty.
    ``tiles_inner``: [36, C, N*T] (``winograd_input_t``, read by ``matmul_at`` as a column-major A)."""

    tiles_inner: bool = False

    def _order(self, tiles: T, channels: T) -> tuple[T, T]:
        return (channels, tiles) if self.tiles_inner else (tiles, channels)

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, p = ins[0], a["padding"]
        need(len(x) == 4, f"winograd input must be NCHW, got {x}")
        need(len(p) == 2 and min(p) >= 0, f"padding must be 2 non-negative entries, got {p}")
        oh, ow = x[2] + 2 * p[0] - 2, x[3] + 2 * p[1] - 2
        need(oh > 0 and ow > 0, f"output spatial size {[oh, ow]} is empty")
        return [(POSITIONS, *self._order(x[0] * tiles(oh, ow), x[1]))]

    def egg_cases(self) -> list[EggCase]:
        oh = f"(- (+ {at('s0', 2)} (* 2 {at('a_padding', 0)})) 2)"
        ow = f"(- (+ {at('s0', 3)} (* 2 {at('a_padding', 1)})) 2)"
        t, c = self._order(f"(* {at('s0', 0)} {_egg_tiles(oh, ow)})", at("s0", 1))
        return [(f"(= (vec-length s0) 4) (> {oh} 0) (> {ow} 0)", f"(vec-of {POSITIONS} {t} {c})")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 3)
        ctx.ranks.fix(ins[0], 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x, rng = ins[0], ctx.rng
        p = ctx.attr("padding", lambda: (rng.randint(0, 1), rng.randint(0, 1)))
        if len(p) != 2:
            ctx.reject("padding needs 2 entries")
        t = ctx.dims.derived(lambda n, h, w: n * tiles(h + 2 * p[0] - 2, w + 2 * p[1] - 2), x[0], x[2], x[3])
        return [ctx.dims.new(POSITIONS), *self._order(t, x[1])]


@dataclass(frozen=True)
class WinogradOutput(ShapeRule):
    """[36, N*T, K] with ``out`` (OH, OW) -> [N, K, OH, OW]; ``bias``: a second input [K]."""

    bias: bool = False

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        m, out = ins[0], a["out"]
        need(len(m) == 3 and m[0] == POSITIONS, f"winograd output must be [{POSITIONS}, N*T, K], got {m}")
        need(len(out) == 2 and min(out) > 0, f"out must be 2 positive sizes, got {out}")
        t = tiles(*out)
        need(m[1] % t == 0, f"{m[1]} tiles is not a multiple of the {t} tiles of one {list(out)} output")
        if self.bias:
            need(ins[1] == (m[2],), f"bias must be [{m[2]}] (one per output channel), got {ins[1]}")
        return [(m[1] // t, m[2], out[0], out[1])]

    def egg_cases(self) -> list[EggCase]:
        t = _egg_tiles(at("a_out", 0), at("a_out", 1))
        cond = f"(= (vec-length s0) 3) (= {at('s0', 0)} {POSITIONS}) (= (% {at('s0', 1)} {t}) 0)"
        if self.bias:
            cond += f" (= (vec-length s1) 1) (= {at('s1', 0)} {at('s0', 2)})"
        return [(cond, f"(vec-of (/ {at('s0', 1)} {t}) {at('s0', 2)} {at('a_out', 0)} {at('a_out', 1)})")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 4)
        ctx.ranks.fix(ins[0], 3)
        for k in ins[1:]:
            ctx.ranks.fix(k, 1)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        m, rng = ins[0], ctx.rng
        out = ctx.attr("out", lambda: (rng.randint(1, 9), rng.randint(1, 9)))
        if len(out) != 2:
            ctx.reject("out needs 2 sizes")
        ctx.dims.fix(m[0], POSITIONS)
        n = ctx.dims.new()
        ctx.dims.union(m[1], ctx.dims.derived(lambda v: v * tiles(*out), n))
        for b in ins[1:]:
            ctx.dims.union(b[0], m[2])
        return [n, m[2], ctx.dims.new(out[0]), ctx.dims.new(out[1])]
