"""Pooling and 2-d spatial resizes."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from rewrite.ir.shapes.base import Attrs, DrawCtx, EggCase, Shape, ShapeRule, at, conv_out, need


def _pool_dim(i: int, ceil: bool, dec: bool) -> tuple[str, str]:
    """(condition, size) of pooled spatial dim ``i`` for one ceil-mode case."""
    size = at("s0", 2 + i)
    k, s, p = at("a_kernel", i), at("a_stride", i), at("a_padding", i)
    span = f"(- (+ {size} (* 2 {p})) {k})"
    if not ceil:
        return "", f"(+ (/ {span} {s}) 1)"
    out = f"(+ (/ (+ {span} (- {s} 1)) {s}) 1)"
    last = f"(* (- {out} 1) {s})"
    lim = f"(+ {size} {p})"
    cond = f"(>= {last} {lim})" if dec else f"(< {last} {lim})"
    return cond, (f"(- {out} 1)" if dec else out)


@dataclass(frozen=True)
class Pool2d(ShapeRule):
    """NCHW windows with ``kernel``, ``stride``, ``padding``, ``ceil_mode``; ``blocked``: NCHWc, the block's
    lanes a fifth dimension kept as it is."""

    blocked: bool = False

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        if self.blocked:
            x = ins[0]
            need(len(x) == 5, f"blocked pooling needs [N, CB, H, W, b], got {x}")
            return [Pool2d().infer([x[:4]], a)[0] + (x[4],)]
        x = ins[0]
        need(len(x) == 4, f"pooling needs NCHW input, got {x}")
        for k in ("kernel", "stride", "padding"):
            need(len(a[k]) == 2, f"{k} must have 2 entries, got {a[k]}")
        need(all(2 * p <= k for p, k in zip(a["padding"], a["kernel"])), "padding must be at most half the kernel")
        hw = [
            conv_out(x[2 + i], a["kernel"][i], a["stride"][i], a["padding"][i], 1, bool(a["ceil_mode"]))
            for i in range(2)
        ]
        need(all(d > 0 for d in hw), f"output spatial size {hw} is empty")
        return [(x[0], x[1], hw[0], hw[1])]

    def egg_cases(self) -> list[EggCase]:
        rank, lanes = ("(= (vec-length s0) 5) ", f" {at('s0', 4)}") if self.blocked else ("", "")
        cases = [
            (
                f"{rank}(= a_ceil_mode 0)",
                f"(vec-of {at('s0', 0)} {at('s0', 1)} {_pool_dim(0, False, False)[1]} {_pool_dim(1, False, False)[1]}"
                f"{lanes})",
            )
        ]
        for d0 in (False, True):
            for d1 in (False, True):
                (c0, h), (c1, w) = _pool_dim(0, True, d0), _pool_dim(1, True, d1)
                cases.append(
                    (f"{rank}(= a_ceil_mode 1) {c0} {c1}", f"(vec-of {at('s0', 0)} {at('s0', 1)} {h} {w}{lanes})")
                )
        return cases

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 5 if self.blocked else 4)
        ctx.ranks.fix(ins[0], 5 if self.blocked else 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        rng, x = ctx.rng, ins[0]
        k = ctx.attr("kernel", lambda: (rng.randint(1, 3), rng.randint(1, 3)))
        s = ctx.attr("stride", lambda: (rng.randint(1, 3), rng.randint(1, 3)))
        pad = ctx.attr("padding", lambda: tuple(rng.randint(0, kk // 2) for kk in k))
        ceil = ctx.attr("ceil_mode", lambda: rng.randint(0, 1))
        if len(k) != 2 or len(s) != 2 or len(pad) != 2:
            ctx.reject("bad pooling attributes")
        return (
            [x[0], x[1]]
            + [
                ctx.dims.derived(lambda h, i=i: conv_out(h, k[i], s[i], pad[i], 1, bool(ceil)), x[2 + i])
                for i in range(2)
            ]
            + x[4:]
        )


@dataclass(frozen=True)
class GlobalPool2d(ShapeRule):
    """NCHW to NC11."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        need(len(ins[0]) == 4, f"global pooling needs NCHW input, got {ins[0]}")
        return [ins[0][:2] + (1, 1)]

    def egg_cases(self) -> list[EggCase]:
        return [("", f"(vec-of {at('s0', 0)} {at('s0', 1)} 1 1)")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 4)
        ctx.ranks.fix(ins[0], 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x = ins[0]
        return [x[0], x[1], ctx.dims.new(1), ctx.dims.new(1)]


@dataclass(frozen=True)
class Spatial2d(ShapeRule):
    """NCHW to N C ``size_attr``: resize (``size``) and adaptive pooling (``output_size``)."""

    size_attr: str = "size"

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, s = ins[0], a[self.size_attr]
        need(len(x) == 4, f"needs NCHW input, got {x}")
        need(len(s) == 2 and all(v > 0 for v in s), f"{self.size_attr} must be 2 positive sizes, got {s}")
        return [(x[0], x[1], s[0], s[1])]

    def egg_cases(self) -> list[EggCase]:
        a = f"a_{self.size_attr}"
        return [("(= (vec-length s0) 4)", f"(vec-of {at('s0', 0)} {at('s0', 1)} {at(a, 0)} {at(a, 1)})")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 4)
        ctx.ranks.fix(ins[0], 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x, rng = ins[0], ctx.rng
        s = ctx.attr(self.size_attr, lambda: (rng.randint(1, 5), rng.randint(1, 5)))
        if len(s) != 2:
            ctx.reject(f"{self.size_attr} needs 2 sizes")
        return [x[0], x[1], ctx.dims.new(s[0]), ctx.dims.new(s[1])]
