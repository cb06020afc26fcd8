"""The shape kinds' common ground: the ``ShapeRule`` base, shape helpers and the rule checker's view (``DrawCtx``)."""

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


def at(v: str, i: int | str) -> str:
    """Element ``i`` of egglog vector ``v``: ``(vec-get v i)``."""
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

    def pieces(self, ins: list[Shape], a: Attrs) -> list[int] | None:
        """For an op that joins pieces into a whole or cuts a whole into pieces (concat, split): where each
        piece starts in the whole, in elements, when every piece is one contiguous stretch of it; None when
        not, and for every other kind.  The runtime then keeps the pieces as views of the whole (no kernel)."""
        return None
