"""What synthesis enumerates: shape worlds, the ops' attribute menus, and terms over them.

A **world** names a few tensor variables and gives each a shape built from symbols
(``a=n,m b=m,k``: ``?a`` is ``n x m`` and ``?b`` is ``m x k``) or literal sizes (a 3x3
kernel).  Graphs are enumerated over one world's variables and evaluated on several
*instances* of it (each symbol a different small size per instance), so an identity that
holds only at one size (``n == m``) does not group two graphs.  Where a world's variables
share a symbol, the rule that comes out of it gets the equality as a guard, which the
selection then drops again if the checker shows the rule holds without it.

An op's **attribute menu** says which attribute values enumeration tries (TASO's generator
did the same: a fixed list per op).  Values may be *symbolic*: ``DimExpr`` (a sum of
symbols, e.g. the split point of a concat) and ``Param`` (a scalar the rule leaves as a
``?variable``).  Ops without a menu entry are tried with their default attributes, so a
new op with defaults for everything is enumerable without code here.

Terms are trees (rules are tree patterns): ``Term`` is a variable or an op applied to
terms; its ``size`` is its number of ops.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewrite.ir.errors import UsageError
from rewrite.ir.ops import OPS, Shape

# ------------------------------------------------------------------ symbolic values


@dataclass(frozen=True, order=True)
class DimExpr:
    """A sum of shape symbols plus a constant (``n + m``, ``2n``, ``3``)."""

    coeffs: tuple[tuple[str, int], ...] = ()  # sorted by symbol, non-zero coefficients
    const: int = 0

    @staticmethod
    def of(coeffs: Mapping[str, int], const: int = 0) -> DimExpr:
        return DimExpr(tuple(sorted((s, c) for s, c in coeffs.items() if c)), const)

    def value(self, inst: Mapping[str, int]) -> int:
        return self.const + sum(c * inst[s] for s, c in self.coeffs)

    def units(self) -> int:
        """How many symbol occurrences the sum has (``2n + m``: 3)."""
        return sum(c for _, c in self.coeffs)

    def symbols(self) -> set[str]:
        return {s for s, _ in self.coeffs}

    def __str__(self) -> str:
        parts = [s if c == 1 else f"{c}{s}" for s, c in self.coeffs]
        if self.const or not parts:
            parts.append(str(self.const))
        return "+".join(parts)


@dataclass(frozen=True, order=True)
class Param:
    """A scalar attribute left as a rule variable (``?s``); a different value per instance."""

    name: str


AttrValue = Any  # int | float | tuple[int, ...] | DimExpr | Param


def resolve(value: AttrValue, inst: Mapping[str, int], params: Mapping[str, float]) -> Any:
    """An attribute value at one instance: symbols and parameters replaced by numbers."""
    if isinstance(value, DimExpr):
        return value.value(inst)
    if isinstance(value, Param):
        return params[value.name]
    if isinstance(value, tuple):
        return tuple(resolve(v, inst, params) for v in value)
    return value


def symbolic(value: AttrValue) -> bool:
    """True for a value that is not a literal (a rule must compute or bind it)."""
    if isinstance(value, (DimExpr, Param)):
        return True
    return isinstance(value, tuple) and any(symbolic(v) for v in value)


# ------------------------------------------------------------------ worlds

Dim = str | int  # a symbol or a literal size


@dataclass(frozen=True)
class World:
    """Tensor variables with symbolic shapes; enumeration happens inside one world."""

    name: str
    vars: tuple[tuple[str, tuple[Dim, ...]], ...]
    doc: str = ""
    low: int = 2  # each symbol's size is drawn from [low, high] per instance
    high: int = 6
    kernels: frozenset[str] = frozenset()  # variables that are convolution kernels (``w*=o,c,3,3``)

    @property
    def names(self) -> list[str]:
        return [v for v, _ in self.vars]

    def template(self, var: str) -> tuple[Dim, ...]:
        return dict(self.vars)[var]

    def symbols(self) -> list[str]:
        out: list[str] = []
        for _, dims in self.vars:
            for d in dims:
                if isinstance(d, str) and d not in out:
                    out.append(d)
        return out

    def shape(self, var: str, inst: Mapping[str, int]) -> Shape:
        return tuple(inst[d] if isinstance(d, str) else d for d in self.template(var))

    def instances(self, n: int, seed: int = 0) -> list[dict[str, int]]:
        """``n`` assignments of sizes to symbols, distinct within each instance where the range allows,
        and no two instances alike (so a per-symbol coincidence cannot hold on all of them)."""
        rng = random.Random(f"{self.name}:{seed}")
        syms = self.symbols()
        values = list(range(self.low, self.high + 1))
        out: list[dict[str, int]] = []
        for _ in range(200 * n):
            if len(out) == n:
                break
            pick = rng.sample(values, len(syms)) if len(syms) <= len(values) else [rng.choice(values) for _ in syms]
            inst = dict(zip(syms, pick))
            if inst not in out:
                out.append(inst)
        return out

    def describe(self) -> str:
        return " ".join(
            f"{v}{'*' if v in self.kernels else ''}={'x'.join(str(d) for d in dims)}" for v, dims in self.vars
        )


def parse_world(text: str, name: str | None = None) -> World:
    """``a=n,m b=m,k`` (or ``a=nxm;b=mxk``): variables and their symbolic shapes; digits are literal sizes;
    ``w*=o,c,3,3`` marks a convolution kernel (used only as a kernel, and in elementwise ops with kernels)."""
    items = [t for t in re.split(r"[\s;]+", text.strip()) if t]
    out: list[tuple[str, tuple[Dim, ...]]] = []
    kernels: set[str] = set()
    for item in items:
        var, sep, dims = item.partition("=")
        if var.endswith("*"):
            var = var[:-1]
            kernels.add(var)
        if not sep or not re.fullmatch(r"[a-z]\w*", var) or not dims:
            raise UsageError(f"shape world '{text}': '{item}' is not VAR=DIMS", hint="e.g. --shapes 'a=n,m b=m,k'")
        parsed: list[Dim] = []
        for d in re.split(r"[,x]", dims):
            if re.fullmatch(r"\d+", d) and int(d) >= 1:
                parsed.append(int(d))
            elif re.fullmatch(r"[a-z]\w*", d):
                parsed.append(d)
            else:
                raise UsageError(f"shape world '{text}': dimension '{d}' of {var} is not a symbol or a size >= 1")
        out.append((var, tuple(parsed)))
    if not out:
        raise UsageError(f"shape world '{text}' names no variables")
    if len({v for v, _ in out}) != len(out):
        raise UsageError(f"shape world '{text}' names a variable twice")
    return World(name or text, tuple(out), "given on the command line", kernels=frozenset(kernels))


def _w(name: str, spec: str, doc: str, low: int = 2, high: int = 6) -> World:
    w = parse_world(spec, name)
    return World(name, w.vars, doc, low, high, w.kernels)


# The default worlds: each makes one family of identities well-typed.  Matrices where every
# variable has one shape (elementwise algebra), square ones (matmul with transposes), a chain
# (matmul association), shared rows or columns (concats of different widths), four blocks (a sum
# of products as one product of concats), and images with 3x3 and 1x1 kernels (convolution
# linearity, merging along input and output channels, pooling).
WORLDS: dict[str, World] = {
    w.name: w
    for w in (
        _w("ew", "a=n,m b=n,m c=n,m d=n,m", "four matrices of one shape: elementwise algebra, transposes, concats"),
        _w("square", "a=n,n b=n,n c=n,n", "square matrices: matmul with add, mul, transpose"),
        _w("chain", "a=n,k b=k,m c=m,p", "a matmul chain: association, transposes of products"),
        _w("rows", "a=n,m b=k,m c=m,p", "matrices sharing columns: concats of different heights, and a right factor"),
        _w("cols", "a=n,k b=n,m c=p,n", "matrices sharing rows: concats of different widths, and a left factor"),
        _w("blocks", "a=n,k b=k,m c=n,j d=j,m", "two products that can become one of concats"),
        _w("fan", "a=n,k b=k,m c=k,m", "one left factor, two right ones: a product of a sum, of a concat"),
        _w("stack", "a=n,m b=n,m c=k,m d=k,m", "two pairs of different heights: elementwise ops of row concats"),
        _w("side", "a=n,m b=n,m c=n,k d=n,k", "two pairs of different widths: elementwise ops of column concats"),
        _w("grid", "a=n,m b=n,k c=p,m d=p,k", "four blocks of a matrix: concats in either order"),
        _w("image", "x=b,c,h,w y=b,c,h,w w*=c,c,3,3 v*=c,c,3,3", "images and 3x3 kernels of one channel count", 3, 8),
        _w("channels", "x=b,c,h,w y=b,d,h,w w*=o,c,3,3 v*=o,d,3,3", "inputs of different channel counts", 3, 8),
        _w("outputs", "x=b,c,h,w w*=o,c,3,3 v*=p,c,3,3", "kernels of different output counts", 3, 8),
        # 1x1 kernels: a pointwise convolution commutes with what mixes pixels linearly and not channels (it
        # found avgpool2d(conv2d(x, w)) = conv2d(avgpool2d(x), w), DenseNet's transitions with 4x fewer pixels)
        _w("pointwise", "x=b,c,h,w y=b,c,h,w w*=o,c,1,1 v*=o,c,1,1", "images and 1x1 kernels", 3, 8),
    )
}


def worlds_for(specs: Sequence[str] | None) -> list[World]:
    """World names or ``VAR=DIMS ...`` specs; None: every default world."""
    if not specs:
        return list(WORLDS.values())
    out = []
    for s in specs:
        if s in WORLDS:
            out.append(WORLDS[s])
        elif "=" in s:
            out.append(parse_world(s, f"shapes{len(out) + 1}"))
        else:
            raise UsageError(f"unknown shape world '{s}'", hint=f"known: {', '.join(WORLDS)}, or VAR=DIMS ...")
    return out


# ------------------------------------------------------------------ op menus

# ``split`` is written as slices in rules (rules/README.md); enumerating it means cutting a tensor
# whose size along an axis is a sum (a concat's result) at one of the sum's parts.
SPLIT = "split"
# ``pooling`` names both pooling ops.
ALIASES = {"pooling": ("avgpool2d", "maxpool2d"), "pool": ("avgpool2d", "maxpool2d"), SPLIT: (SPLIT,)}

# argument shapes (per argument, per instance) -> attribute sets; a menu offers only values that are the same
# at every instance (a padding computed from a size that is a symbol would be a coincidence of one instance)
Menu = Callable[[Sequence[Sequence[Shape]]], list[dict[str, AttrValue]]]

_PERMS: dict[int, list[tuple[int, ...]]] = {2: [(1, 0)], 3: [(0, 2, 1)], 4: [(0, 1, 3, 2)]}
_POOLS = [((3, 3), (1, 1), (1, 1)), ((2, 2), (2, 2), (0, 0))]


def _conv(shapes: Sequence[Sequence[Shape]]) -> list[dict[str, AttrValue]]:
    kernels = {s[2:] for s in shapes[1]}
    if len(kernels) != 1 or len(shapes[1][0]) != 4:
        return [{"stride": st, "padding": (0, 0)} for st in ((1, 1), (2, 2))]  # no "same" padding to offer
    kh, kw = kernels.pop()
    pads = sorted({(0, 0), (kh // 2, kw // 2)})
    return [{"stride": st, "padding": p} for st in ((1, 1), (2, 2)) for p in pads]


MENUS: dict[str, Menu] = {
    "smul": lambda s: [{"scalar": Param("s")}],
    "transpose": lambda s: [{"perm": p} for p in _PERMS.get(len(s[0][0]), [])],
    "concat": lambda s: [{"axis": a} for a in range(min(len(s[0][0]), 2))],
    "conv2d": _conv,
    "avgpool2d": lambda s: [{"kernel": k, "stride": st, "padding": p} for k, st, p in _POOLS],
    "maxpool2d": lambda s: [{"kernel": k, "stride": st, "padding": p} for k, st, p in _POOLS],
    "pad2d": lambda s: [{"pads": (1, 1, 1, 1)}, {"pads": (0, 1, 0, 1)}],
}

# Values that parameters take, per instance (mixed signs: an identity that needs a positive scalar
# is not grouped; that needs a guard synthesis does not write).
PARAM_VALUES = (0.75, -1.5, 2.25, -0.625, 1.375, -2.5)


def expand_ops(ops: Sequence[str]) -> list[str]:
    """The op names to enumerate (aliases expanded, order kept); ``UsageError`` for an unknown or
    unenumerable one (an op with a required attribute that has no menu, a constant source, a non-float
    input)."""
    out: list[str] = []
    for name in ops:
        for op in ALIASES.get(name, (name,)):
            if op == SPLIT:
                out.append(op)
                continue
            d = OPS.get(op)
            if d is None:
                raise UsageError(f"unknown op '{op}'", hint="`eqsat rules list` rules use the registry's op names")
            if d.arity == 0 or d.arity > 3 or (d.arity < 0 and op != "concat"):
                raise UsageError(f"op '{op}' cannot be enumerated: it takes {d.arity} inputs (1 to 3, or concat)")
            required = [a.name for a in d.attrs if a.default is None]
            if required and op not in MENUS:
                raise UsageError(
                    f"op '{op}' needs attribute(s) {', '.join(required)} and has no attribute menu",
                    hint=f"ops with menus: {', '.join(sorted(MENUS))}; an op whose attributes have defaults needs none",
                )
            if op not in out:
                out.append(op)
    if not out:
        raise UsageError("no ops to enumerate")
    return out


def arity(op: str) -> int:
    if op == SPLIT:
        return 1
    n = OPS[op].arity
    return 2 if n < 0 else n  # concat is binary in rules


def attr_sets(op: str, shapes: Sequence[Sequence[Shape]]) -> list[dict[str, AttrValue]]:
    menu = MENUS.get(op)
    return menu(shapes) if menu is not None else [{}]


# Ops that read their input as an image or a matrix: a kernel is no input of theirs (a pooled or transposed
# kernel only gives identities of 3x3 sizes).  ``conv2d`` takes a kernel in its second position only.
DATA_ONLY = frozenset({"matmul", "transpose", "avgpool2d", "maxpool2d", "pad2d", "conv2d"})
KERNEL = "kernel"
DATA = "data"


def result_kind(op: str, kinds: Sequence[str]) -> str | None:
    """The kind of an op's result from its arguments' kinds, or None where the op does not take them."""
    if op == "conv2d":
        return DATA if list(kinds) == [DATA, KERNEL] else None
    if op in DATA_ONLY:
        return DATA if all(k == DATA for k in kinds) else None
    return kinds[0] if len(set(kinds)) == 1 else None


# ------------------------------------------------------------------ terms


@dataclass(frozen=True)
class Term:
    """A variable (``op == ""``) or an op over terms; attributes sorted by name."""

    op: str
    args: tuple[Term, ...] = ()
    attrs: tuple[tuple[str, AttrValue], ...] = ()
    var: str = ""
    size: int = field(default=0, compare=False)

    @staticmethod
    def leaf(name: str) -> Term:
        return Term("", var=name)

    @staticmethod
    def apply(op: str, args: Sequence[Term], attrs: Mapping[str, AttrValue]) -> Term:
        return Term(op, tuple(args), tuple(sorted(attrs.items())), "", 1 + sum(a.size for a in args))

    def vars(self) -> list[str]:
        """Variables in order of first appearance."""
        if not self.op:
            return [self.var]
        out: list[str] = []
        for a in self.args:
            for v in a.vars():
                if v not in out:
                    out.append(v)
        return out

    def params(self) -> set[str]:
        out = {v.name for _, v in self.attrs if isinstance(v, Param)}
        for a in self.args:
            out |= a.params()
        return out

    def ops(self) -> set[str]:
        if not self.op:
            return set()
        out = {self.op}
        for a in self.args:
            out |= a.ops()
        return out

    def attrs_at(self, inst: Mapping[str, int], params: Mapping[str, float]) -> dict[str, Any]:
        """The term's attributes at one instance: sizes and parameters as numbers."""
        return {k: resolve(v, inst, params) for k, v in self.attrs}

    def walk(self) -> Iterator[Term]:
        yield self
        for a in self.args:
            yield from a.walk()

    def show(self, names: Mapping[str, str] | None = None) -> str:
        """A readable, rule-like rendering: variables renamed by ``names`` (others as they are), sizes
        as the world's symbols (``:end n+k``)."""
        if not self.op:
            return f"?{(names or {}).get(self.var, self.var)}"
        parts = [self.op] + [a.show(names) for a in self.args]
        for k, v in self.attrs:
            parts.append(f":{k} {_show(v)}")
        return "(" + " ".join(parts) + ")"

    def __str__(self) -> str:
        return self.show()


def literal(v: Any) -> str:
    """A literal attribute value in rule syntax: ``[1 0]``, ``0.75``, ``1`` for True."""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, tuple):
        return "[" + " ".join(literal(x) for x in v) + "]"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _show(v: AttrValue) -> str:
    if isinstance(v, tuple):
        return "[" + " ".join(_show(x) for x in v) + "]"
    if isinstance(v, Param):
        return f"?{v.name}"
    return str(v) if isinstance(v, DimExpr) else literal(v)


def pairs(n: int) -> Iterator[tuple[int, int]]:
    """Sizes (i, j) of two arguments whose sizes sum to ``n``."""
    for i in range(n + 1):
        yield i, n - i


def products(sizes: Sequence[int], by_size: Mapping[int, Sequence[Term]]) -> Iterator[tuple[Term, ...]]:
    """Every tuple of terms with the given sizes."""
    return itertools.product(*(by_size.get(s, ()) for s in sizes))
