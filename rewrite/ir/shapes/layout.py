"""Layout kinds: permute, reshape, concat, split, slice, pads, expand."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rewrite.ir.shapes.base import MAX_RANK, Attrs, DrawCtx, EggCase, Shape, ShapeRule, at, need, norm_axis, numel


def stretch_offsets(pieces: Sequence[Shape], axis: int) -> list[int] | None:
    """Where each of ``pieces`` (joined along ``axis``, row-major) starts in the whole, in elements, when each
    is one contiguous stretch of it: every dimension before ``axis`` is 1.  None otherwise.

    >>> stretch_offsets([(1, 2, 3, 3), (1, 4, 3, 3)], 1)
    [0, 18]
    """
    if any(d != 1 for d in pieces[0][:axis]):
        return None
    out, at_ = [], 0
    for s in pieces:
        out.append(at_)
        at_ += numel(s)
    return out


@dataclass(frozen=True)
class Permute(ShapeRule):
    """Dimensions permuted by ``perm``."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, p = ins[0], a["perm"]
        need(sorted(p) == list(range(len(x))), f"perm {p} is not a permutation of rank {len(x)}")
        return [tuple(x[i] for i in p)]

    def egg_cases(self) -> list[EggCase]:
        return [
            (f"(= (vec-length s0) {r})", f"(vec-of {' '.join(at('s0', at('a_perm', i)) for i in range(r))})")
            for r in range(1, MAX_RANK + 1)
        ]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.union(out, ins[0])
        ctx.rank_of_list_attr("perm", out)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x, rng = ins[0], ctx.rng
        r = len(x)
        perm = ctx.attr("perm", lambda: tuple(rng.sample(range(r), r)))
        if sorted(perm) != list(range(r)):
            ctx.reject(f"perm {perm} is not a permutation of rank {r}")
        return [x[i] for i in perm]


@dataclass(frozen=True)
class Reshape(ShapeRule):
    """The ``shape`` attribute, with as many elements as the input (row-major)."""

    late_attrs: ClassVar[tuple[str, ...]] = ("shape",)

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        s = a["shape"]
        need(all(d > 0 for d in s), f"target shape {s} must be fully specified and positive")
        need(numel(s) == numel(ins[0]), f"cannot reshape {ins[0]} ({numel(ins[0])} elements) to {s}")
        return [s]

    def egg_cases(self) -> list[EggCase]:
        return [("", "a_shape")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.rank_of_list_attr("shape", out)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        target = ctx.const_attr("shape")
        if isinstance(target, tuple):
            return [ctx.dims.new(v) for v in target]
        return [ctx.dims.new() for _ in range(ctx.out_rank())]

    def draw_late(self, ctx: DrawCtx, name: str, shapes: list[Shape], target: list[int | None]) -> Any:
        """A factorisation of the operand's size that keeps the output dims fixed elsewhere."""
        n = numel(shapes[0])
        known = math.prod(t for t in target if t is not None)
        if known == 0 or n % known:
            ctx.reject(f"cannot reshape {shapes[0]} to fit {target}")
        q, out = n // known, list(target)
        free = [i for i, t in enumerate(target) if t is None]
        if not free:
            if q != 1:
                ctx.reject(f"cannot reshape {shapes[0]} to {target}")
            return tuple(out)
        for i in free[:-1]:
            d = ctx.rng.choice([d for d in range(1, q + 1) if q % d == 0])
            out[i], q = d, q // d
        out[free[-1]] = q
        return tuple(out)


@dataclass(frozen=True)
class Concat(ShapeRule):
    """Inputs of equal rank joined along ``axis`` (egglog: binary, n-ary concats nest)."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        r = len(ins[0])
        ax = norm_axis(a["axis"], r)
        for s in ins[1:]:
            need(
                len(s) == r and all(s[i] == ins[0][i] for i in range(r) if i != ax),
                f"inputs disagree off axis {ax}: {ins}",
            )
        out = list(ins[0])
        out[ax] = sum(s[ax] for s in ins)
        return [tuple(out)]

    def pieces(self, ins: list[Shape], a: Attrs) -> list[int] | None:
        return stretch_offsets(ins, norm_axis(a["axis"], len(ins[0])))

    def egg_cases(self) -> list[EggCase]:
        return [
            (
                "(= (vec-length s0) (vec-length s1))",
                f"(vec-set s0 a_axis (+ {at('s0', 'a_axis')} {at('s1', 'a_axis')}))",
            )
        ]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        for k in ins:
            ctx.ranks.union(out, k)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        a, b = ins
        if len(a) != len(b):
            ctx.reject("concat operands need equal ranks")
        ax = ctx.axis(ctx.attr("axis", lambda: ctx.rng.randrange(len(a))), len(a))
        for i in range(len(a)):
            if i != ax:
                ctx.dims.union(a[i], b[i])
        out = list(a)
        out[ax] = ctx.dims.derived(lambda m, n: m + n, a[ax], b[ax])
        return out


@dataclass(frozen=True)
class Split(ShapeRule):
    """One output per entry of ``sizes`` along ``axis`` (egglog: each output is a ``slice``)."""

    encoded: ClassVar[bool] = False

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x = ins[0]
        ax = norm_axis(a["axis"], len(x))
        need(len(a["sizes"]) >= 1 and all(s > 0 for s in a["sizes"]), f"sizes {a['sizes']} must be positive")
        need(sum(a["sizes"]) == x[ax], f"sizes {a['sizes']} do not sum to dimension {x[ax]}")
        return [x[:ax] + (s,) + x[ax + 1 :] for s in a["sizes"]]

    def pieces(self, ins: list[Shape], a: Attrs) -> list[int] | None:
        return stretch_offsets(self.infer(ins, a), norm_axis(a["axis"], len(ins[0])))


@dataclass(frozen=True)
class Slice(ShapeRule):
    """The range [``start``, ``end``) along ``axis``."""

    late_attrs: ClassVar[tuple[str, ...]] = ("start", "end")

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x = ins[0]
        ax = norm_axis(a["axis"], len(x))
        need(0 <= a["start"] < a["end"] <= x[ax], f"slice [{a['start']}:{a['end']}] out of range for {x[ax]}")
        return [x[:ax] + (a["end"] - a["start"],) + x[ax + 1 :]]

    def egg_cases(self) -> list[EggCase]:
        return [("", "(vec-set s0 a_axis (- a_end a_start))")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        for k in ins:
            ctx.ranks.union(out, k)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x = ins[0]
        ax = ctx.axis(ctx.attr("axis", lambda: ctx.rng.randrange(len(x))), len(x))
        out = list(x)
        out[ax] = ctx.dims.new()
        s, e = ctx.const_attr("start"), ctx.const_attr("end")
        if isinstance(s, int) and isinstance(e, int):
            if e <= s:
                ctx.reject(f"empty slice [{s}:{e}]")
            ctx.dims.fix(out[ax], e - s)
        return out

    def draw_late(self, ctx: DrawCtx, name: str, shapes: list[Shape], target: list[int | None]) -> Any:
        """start and end, drawn together: a valid range of the output length fixed elsewhere, if any."""
        memo = ctx.memo()
        if "range" not in memo:
            rng = ctx.rng
            ax = ctx.axis(ctx.attr("axis", lambda: 0), len(shapes[0]))
            d, length = shapes[0][ax], target[ax]
            s, e = ctx.known_attr("start"), ctx.known_attr("end")
            if length is not None:
                if s is None and e is None:
                    s = rng.randint(0, max(0, d - length))
                s = e - length if s is None else s
                e = s + length if e is None else e
            else:
                if s is None:
                    s = rng.randint(0, (e if isinstance(e, int) else d) - 1)
                if e is None:
                    e = rng.randint(s + 1, max(s + 1, d))
            memo["range"] = (s, e)
        return memo["range"][0 if name == "start" else 1]


@dataclass(frozen=True)
class Pad2d(ShapeRule):
    """The last two dims zero-padded by ``pads`` = (top, bottom, left, right)."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, p = ins[0], a["pads"]
        need(len(x) >= 2, f"pad2d needs rank >= 2, got {x}")
        need(len(p) == 4 and all(v >= 0 for v in p), f"pads must be 4 non-negative (top, bottom, left, right), got {p}")
        return [x[:-2] + (x[-2] + p[0] + p[1], x[-1] + p[2] + p[3])]

    def egg_cases(self) -> list[EggCase]:
        h, w = "(- (vec-length s0) 2)", "(- (vec-length s0) 1)"
        hp = f"(+ {at('s0', h)} (+ {at('a_pads', 0)} {at('a_pads', 1)}))"
        wp = f"(+ {at('s0', w)} (+ {at('a_pads', 2)} {at('a_pads', 3)}))"
        return [("(>= (vec-length s0) 2) (= (vec-length a_pads) 4)", f"(vec-set (vec-set s0 {h} {hp}) {w} {wp})")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.union(out, ins[0])
        ctx.ranks.atleast(out, 2)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x, rng = ins[0], ctx.rng
        pads = ctx.attr("pads", lambda: tuple(rng.randint(0, 2) for _ in range(4)))
        if len(pads) != 4 or len(x) < 2:
            ctx.reject("pad2d needs rank >= 2 and 4 pads")
        return x[:-2] + [
            ctx.dims.derived(lambda h: h + pads[0] + pads[1], x[-2]),
            ctx.dims.derived(lambda w: w + pads[2] + pads[3], x[-1]),
        ]


@dataclass(frozen=True)
class Expand(ShapeRule):
    """Broadcast to the ``shape`` attribute (equal rank; each input dim is 1 or the target's)."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, s = ins[0], a["shape"]
        need(len(x) == len(s), f"expand keeps the rank: {x} to {s}")
        need(all(p == q or p == 1 for p, q in zip(x, s)) and all(q > 0 for q in s), f"cannot expand {x} to {s}")
        return [s]

    def egg_cases(self) -> list[EggCase]:
        return [("(= (vec-length s0) (vec-length a_shape))", "a_shape")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.union(out, ins[0])
        ctx.rank_of_list_attr("shape", out)

    late_attrs: ClassVar[tuple[str, ...]] = ("shape",)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        """The rule checker draws no size-1 broadcast: the output takes the input's dims."""
        target = ctx.const_attr("shape")
        if isinstance(target, tuple):
            for d, v in zip(ins[0], target):
                ctx.dims.fix(d, v)
        return list(ins[0])

    def draw_late(self, ctx: DrawCtx, name: str, shapes: list[Shape], target: list[int | None]) -> Any:
        return tuple(t if t is not None else s for t, s in zip(target, shapes[0]))


@dataclass(frozen=True)
class PadN(ShapeRule):
    """Constant padding of every dim: ``pads`` = (before_0, after_0, before_1, after_1, ...)."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, p = ins[0], a["pads"]
        need(len(p) == 2 * len(x), f"pads needs 2 entries per dim ({2 * len(x)}), got {len(p)}")
        need(all(v >= 0 for v in p), f"pads must be non-negative, got {p}")
        return [tuple(n + p[2 * d] + p[2 * d + 1] for d, n in enumerate(x))]

    def egg_cases(self) -> list[EggCase]:
        return [
            (
                f"(= (vec-length s0) {r}) (= (vec-length a_pads) {2 * r})",
                "(vec-of "
                + " ".join(f"(+ {at('s0', d)} (+ {at('a_pads', 2 * d)} {at('a_pads', 2 * d + 1)}))" for d in range(r))
                + ")",
            )
            for r in range(1, MAX_RANK + 1)
        ]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.union(out, ins[0])

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x, rng = ins[0], ctx.rng
        pads = ctx.attr("pads", lambda: tuple(rng.randint(0, 2) for _ in range(2 * len(x))))
        if len(pads) != 2 * len(x):
            ctx.reject("pad needs 2 pads per dim")
        return [ctx.dims.derived(lambda n, d=d: n + pads[2 * d] + pads[2 * d + 1], v) for d, v in enumerate(x)]
