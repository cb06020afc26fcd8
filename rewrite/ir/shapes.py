"""Shape rules: a small closed set of declarative kinds, each read three ways.

An op's registry entry (:class:`rewrite.ir.ops.OpDef`) names its output shapes
with one of these kinds instead of a hand-written function.  Each kind has three
interpreters, so shape inference is written once per kind, never once per
consumer:

* ``infer`` — concrete shapes, used by the graph IR (``OpDef.infer``);
* ``egg_cases`` — egglog text, the ``shape`` rules of the generated prelude
  (:func:`rewrite.egraph.prelude.prelude`): ``(condition, result)`` pairs over
  ``s0, s1, ...`` (the input shapes) and ``a_<attr>`` (the attributes);
* ``draw_ranks`` / ``draw_dims`` / ``draw_late`` — symbolic rank and dimension
  constraints for the rule checker (:mod:`rewrite.verify.rulecheck.draw`),
  which draws random concrete shapes satisfying them through a
  :class:`DrawCtx`.

A kind reads its attributes by fixed names (``axis``, ``perm``, ``stride``...),
so an op using a kind takes attributes with those names.

    >>> MatMul().infer([(8, 3, 4), (8, 4, 5)], {})
    [(8, 3, 5)]
    >>> Same().egg_cases()
    [('', 's0')]
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn, Protocol

from rewrite.ir.errors import ShapeError

Shape = tuple[int, ...]
Attrs = Mapping[str, Any]
EggCase = tuple[str, str]  # (extra query conditions, output shape expression)

MAX_RANK = 6  # rank-dependent egglog rules are generated for ranks 1..MAX_RANK

__all__ = [
    "MAX_RANK",
    "Broadcast",
    "Broadcast3",
    "Concat",
    "Conv2d",
    "DrawCtx",
    "Embedding",
    "Expand",
    "Gather",
    "GlobalPool2d",
    "GroupedChannels",
    "IndexSelect",
    "Linear",
    "MatMul",
    "Pad2d",
    "PadN",
    "PerChannel",
    "Permute",
    "Pool2d",
    "Reduce",
    "Reshape",
    "Same",
    "ShapeRule",
    "Slice",
    "Source",
    "Spatial2d",
    "Split",
    "broadcast",
    "conv_out",
    "norm_axis",
    "numel",
]


# ------------------------------------------------------------------ helpers


def numel(shape: Shape) -> int:
    return math.prod(shape)


def need(cond: bool, msg: str) -> None:
    if not cond:
        raise ShapeError(msg)


def norm_axis(axis: int, rank: int) -> int:
    need(-rank <= axis < rank, f"axis {axis} out of range for rank {rank}")
    return axis % rank


def broadcast(x: Shape, y: Shape) -> Shape:
    """Broadcast two shapes of equal rank (the IR keeps ranks explicit)."""
    need(len(x) == len(y), f"elementwise inputs must have equal rank, got {x} and {y}")
    out = []
    for i, (p, q) in enumerate(zip(x, y)):
        need(p == q or p == 1 or q == 1, f"dimension {i} does not broadcast: {p} vs {q}")
        out.append(max(p, q))
    return tuple(out)


def conv_out(size: int, k: int, s: int, p: int, d: int, ceil: bool = False) -> int:
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + p:  # PyTorch: last window must start inside the input
        out -= 1
    return out


def _vg(v: str, i: int | str) -> str:
    return f"(vec-get {v} {i})"


# ------------------------------------------------------------------ the rule checker's view


class RankUF(Protocol):
    """Union-find over ranks (of tensor variables, op outputs and list attributes)."""

    def union(self, a: Hashable, b: Hashable) -> Hashable: ...
    def fix(self, k: Hashable, v: int) -> None: ...
    def atleast(self, k: Hashable, v: int) -> None: ...


class DimUF(Protocol):
    """Union-find over symbolic dimensions; ``derived`` ones are computed from others."""

    def union(self, a: Hashable, b: Hashable) -> Hashable: ...
    def fix(self, k: Hashable, v: int) -> None: ...
    def new(self, value: int | None = None) -> int: ...
    def derived(self, fn: Callable[..., int], *args: int) -> int: ...


class DrawCtx(Protocol):
    """What a shape rule sees of one pattern op while the rule checker draws an instance."""

    @property
    def rng(self) -> random.Random: ...
    @property
    def ranks(self) -> RankUF: ...
    @property
    def dims(self) -> DimUF: ...

    def attr(self, name: str, draw: Callable[[], Any]) -> Any:
        """The attribute's value: from the pattern, or ``draw()`` when the pattern leaves it free."""
        ...

    def const_attr(self, name: str) -> Any:
        """The attribute's value when the pattern gives it without variables, else None."""
        ...

    def known_attr(self, name: str) -> Any:
        """The attribute's value when the pattern gives it as a literal or an already bound variable."""
        ...

    def rank_of_list_attr(self, name: str, key: Hashable) -> None:
        """Tie rank ``key`` to the length of a list attribute (a literal, or a variable's)."""
        ...

    def bcast(self, x: int, y: int) -> int:
        """Unify two broadcast dims (or set one to 1); the output dim."""
        ...

    def axis(self, v: Any, rank: int) -> int: ...
    def out_rank(self) -> int: ...
    def memo(self) -> dict[str, Any]:
        """Scratch space kept for this pattern op across ``draw_late`` calls."""
        ...

    def reject(self, msg: str) -> NoReturn: ...


# ------------------------------------------------------------------ the kinds


@dataclass(frozen=True)
class ShapeRule:
    """Base of the kinds.  The rule-checker defaults: output rank as the first input's, free dims."""

    late_attrs: ClassVar[tuple[str, ...]] = ()  # drawn against the concrete operand, once built
    encoded: ClassVar[bool] = True  # a constructor in the egglog prelude

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        raise NotImplementedError

    def egg_cases(self) -> list[EggCase]:
        raise NotImplementedError(f"{type(self).__name__} has no egglog shape rule")

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        if ins:
            ctx.ranks.union(out, ins[0])

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        return [ctx.dims.new() for _ in range(ctx.out_rank())]

    def draw_late(self, ctx: DrawCtx, name: str, shapes: list[Shape], target: list[int | None]) -> Any:
        raise NotImplementedError(name)


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
                f"(vec-of {' '.join(f'(max {_vg(sa, i)} {_vg(sb, i)})' for i in range(r))})",
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
class MatMul(ShapeRule):
    """(Batched) matrix product of equal ranks; ``bias``: a third input [N] along the last axis."""

    bias: bool = False

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, y = ins[:2]
        need(len(x) >= 2 and len(x) == len(y), f"matmul needs equal ranks >= 2, got {x} and {y}")
        need(x[-1] == y[-2], f"inner dimensions differ: {x[-1]} vs {y[-2]}")
        out = broadcast(x[:-2], y[:-2]) + (x[-2], y[-1])
        if self.bias:
            b = ins[2]
            need(b == (y[-1],), f"bias must be [{y[-1]}] (one per output column), got {b}")
        return [out]

    def egg_cases(self) -> list[EggCase]:
        cases = []
        for r in range(2, MAX_RANK + 1):
            batch = " ".join(f"(max {_vg('s0', i)} {_vg('s1', i)})" for i in range(r - 2))
            cases.append(
                (
                    f"(= (vec-length s0) {r}) (= (vec-length s1) {r}) (= {_vg('s0', r - 1)} {_vg('s1', r - 2)})",
                    f"(vec-of {batch} {_vg('s0', r - 2)} {_vg('s1', r - 1)})".replace("  ", " "),
                )
            )
        if not self.bias:
            return cases
        bias = f"(= (vec-length s2) 1) (= {_vg('s2', 0)} {_vg('s1', '(- (vec-length s1) 1)')})"
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
        ctx.dims.union(a[-1], b[-2])
        for bias in ins[2:]:
            ctx.dims.union(bias[0], b[-1])
        return [ctx.bcast(x, y) for x, y in zip(a[:-2], b[:-2])] + [a[-2], b[-1]]


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
        return [(f"(= {_vg('s0', last)} {_vg('s1', 1)})", f"(vec-set s0 {last} {_vg('s1', 0)})")]

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
        dims = []
        for i in range(2):
            span = (
                f"(- (+ {_vg('s0', 2 + i)} (* 2 {_vg('a_padding', i)})) "
                f"(+ (* {_vg('a_dilation', i)} (- {_vg('s1', 2 + i)} 1)) 1))"
            )
            dims.append(f"(+ (/ {span} {_vg('a_stride', i)}) 1)")
        cond = f"(= {_vg('s0', 1)} (* {_vg('s1', 1)} a_groups))"
        if self.bias:  # one value per output channel
            cond += f" (= (vec-length s2) 1) (= {_vg('s2', 0)} {_vg('s1', 0)})"
        return [(cond, f"(vec-of {_vg('s0', 0)} {_vg('s1', 0)} {dims[0]} {dims[1]})")]

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


def _pool_dim(i: int, ceil: bool, dec: bool) -> tuple[str, str]:
    """(condition, size) of pooled spatial dim ``i`` for one ceil-mode case."""
    size = _vg("s0", 2 + i)
    k, s, p = _vg("a_kernel", i), _vg("a_stride", i), _vg("a_padding", i)
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
    """NCHW windows with ``kernel``, ``stride``, ``padding``, ``ceil_mode``."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
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
        cases = [
            (
                "(= a_ceil_mode 0)",
                f"(vec-of {_vg('s0', 0)} {_vg('s0', 1)} "
                f"{_pool_dim(0, False, False)[1]} {_pool_dim(1, False, False)[1]})",
            )
        ]
        for d0 in (False, True):
            for d1 in (False, True):
                (c0, h), (c1, w) = _pool_dim(0, True, d0), _pool_dim(1, True, d1)
                cases.append((f"(= a_ceil_mode 1) {c0} {c1}", f"(vec-of {_vg('s0', 0)} {_vg('s0', 1)} {h} {w})"))
        return cases

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 4)
        ctx.ranks.fix(ins[0], 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        rng, x = ctx.rng, ins[0]
        k = ctx.attr("kernel", lambda: (rng.randint(1, 3), rng.randint(1, 3)))
        s = ctx.attr("stride", lambda: (rng.randint(1, 3), rng.randint(1, 3)))
        pad = ctx.attr("padding", lambda: tuple(rng.randint(0, kk // 2) for kk in k))
        ceil = ctx.attr("ceil_mode", lambda: rng.randint(0, 1))
        if len(k) != 2 or len(s) != 2 or len(pad) != 2:
            ctx.reject("bad pooling attributes")
        return [x[0], x[1]] + [
            ctx.dims.derived(lambda h, i=i: conv_out(h, k[i], s[i], pad[i], 1, bool(ceil)), x[2 + i]) for i in range(2)
        ]


@dataclass(frozen=True)
class GlobalPool2d(ShapeRule):
    """NCHW to NC11."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        need(len(ins[0]) == 4, f"global pooling needs NCHW input, got {ins[0]}")
        return [ins[0][:2] + (1, 1)]

    def egg_cases(self) -> list[EggCase]:
        return [("", f"(vec-of {_vg('s0', 0)} {_vg('s0', 1)} 1 1)")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 4)
        ctx.ranks.fix(ins[0], 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x = ins[0]
        return [x[0], x[1], ctx.dims.new(1), ctx.dims.new(1)]


@dataclass(frozen=True)
class Permute(ShapeRule):
    """Dimensions permuted by ``perm``."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        x, p = ins[0], a["perm"]
        need(sorted(p) == list(range(len(x))), f"perm {p} is not a permutation of rank {len(x)}")
        return [tuple(x[i] for i in p)]

    def egg_cases(self) -> list[EggCase]:
        return [
            (f"(= (vec-length s0) {r})", f"(vec-of {' '.join(_vg('s0', _vg('a_perm', i)) for i in range(r))})")
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

    def egg_cases(self) -> list[EggCase]:
        return [
            (
                "(= (vec-length s0) (vec-length s1))",
                f"(vec-set s0 a_axis (+ {_vg('s0', 'a_axis')} {_vg('s1', 'a_axis')}))",
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
        hp = f"(+ {_vg('s0', h)} (+ {_vg('a_pads', 0)} {_vg('a_pads', 1)}))"
        wp = f"(+ {_vg('s0', w)} (+ {_vg('a_pads', 2)} {_vg('a_pads', 3)}))"
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


# ------------------------------------------------------------------ indexing, comparison, selection


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
                f"(vec-of {' '.join(_vg('s1', i) for i in range(r))} {_vg('s0', 1)})",
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
        return [("(= (vec-length s1) 1)", f"(vec-set s0 a_axis {_vg('s1', 0)})")]

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


@dataclass(frozen=True)
class Broadcast3(ShapeRule):
    """Three inputs of equal rank, broadcast dimension by dimension (``where``)."""

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        return [broadcast(broadcast(ins[0], ins[1]), ins[2])]

    def egg_cases(self) -> list[EggCase]:
        return [
            (
                f"(= (vec-length s0) {r}) (= (vec-length s1) {r}) (= (vec-length s2) {r})",
                "(vec-of "
                + " ".join(f"(max {_vg('s0', i)} (max {_vg('s1', i)} {_vg('s2', i)}))" for i in range(r))
                + ")",
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


# ------------------------------------------------------------------ activations, reductions, norms, resize


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
                keep = f"(vec-set {keep} {_vg('a_axes', i)} 1)"
            for i in reversed(range(n)):
                drop = f"(vec-remove {drop} {_vg('a_axes', i)})"
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
                + " ".join(
                    f"(+ {_vg('s0', d)} (+ {_vg('a_pads', 2 * d)} {_vg('a_pads', 2 * d + 1)}))" for d in range(r)
                )
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
        return [("(= (vec-length s0) 4)", f"(vec-of {_vg('s0', 0)} {_vg('s0', 1)} {_vg(a, 0)} {_vg(a, 1)})")]

    def draw_ranks(self, ctx: DrawCtx, out: Hashable, ins: Sequence[Hashable]) -> None:
        ctx.ranks.fix(out, 4)
        ctx.ranks.fix(ins[0], 4)

    def draw_dims(self, ctx: DrawCtx, ins: list[list[int]]) -> list[int]:
        x, rng = ins[0], ctx.rng
        s = ctx.attr(self.size_attr, lambda: (rng.randint(1, 5), rng.randint(1, 5)))
        if len(s) != 2:
            ctx.reject(f"{self.size_attr} needs 2 sizes")
        return [x[0], x[1], ctx.dims.new(s[0]), ctx.dims.new(s[1])]


@dataclass(frozen=True)
class GroupedChannels(PerChannel):
    """Like ``PerChannel(1)``; the channels also split evenly into ``num_groups`` (group norm)."""

    axis: int = 1

    def infer(self, ins: list[Shape], a: Attrs) -> list[Shape]:
        out = super().infer(ins, a)
        g = a["num_groups"]
        need(g >= 1 and ins[0][1] % g == 0, f"num_groups={g} must divide the {ins[0][1]} channels")
        return out
