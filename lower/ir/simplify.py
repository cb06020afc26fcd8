"""Analyses and the simplifier over loop-IR expressions: affine (linear) forms, interval bounds of
an index expression given loop ranges, and a range-aware simplifier for expressions and statements
(``simplify``, ``simplify_stmt``), plus ``flat_offset`` (the element offset of an indexed buffer).

    >>> i = Var("i")
    >>> simplify((i * 4 + 3) // 4, {"i": (0, 9)})
    Var(name='i')
    >>> bounds(i * 4 + 3, {"i": (0, 9)})
    (3, 39)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from lower.ir.nodes import (
    BIN_OPS,
    BOOL,
    BOOL_OPS,
    CMP_OPS,
    I64,
    Allocate,
    Bin,
    Buffer,
    Expr,
    FloatImm,
    For,
    If,
    IntImm,
    Intrinsic,
    Select,
    Seq,
    Stage,
    Stmt,
    Store,
    Var,
)
from lower.ir.traverse import enclosing, free_vars, map_expr


# ============================================================== affine analysis
def linear_form(e: Expr) -> tuple[dict[str, int], int] | None:
    """``e`` as ``sum(coeff * var) + const`` over loop variables, or None if not affine."""
    if isinstance(e, IntImm):
        return {}, e.value
    if isinstance(e, Var):
        return {e.name: 1}, 0
    if isinstance(e, Bin) and e.op in ("+", "-"):
        la, lb = linear_form(e.a), linear_form(e.b)
        if la is None or lb is None:
            return None
        s = -1 if e.op == "-" else 1
        d = dict(la[0])
        for k, v in lb[0].items():
            d[k] = d.get(k, 0) + s * v
        return {k: v for k, v in d.items() if v}, la[1] + s * lb[1]
    if isinstance(e, Bin) and e.op == "*":
        la, lb = linear_form(e.a), linear_form(e.b)
        if la is None or lb is None:
            return None
        if not la[0]:
            la, lb = lb, la
        if lb[0]:
            return None
        c = lb[1]
        return {k: v * c for k, v in la[0].items() if v * c}, la[1] * c
    return None


def from_linear(coeffs: dict[str, int], c: int) -> Expr:
    """Canonical form: positive terms (by name), then the constant, then subtracted terms."""

    def term(k: str, v: int) -> Expr:
        return Var(k) if v == 1 else Bin("*", Var(k), IntImm(v))

    out: Expr | None = None
    for k in sorted(coeffs):
        if coeffs[k] > 0:
            out = term(k, coeffs[k]) if out is None else Bin("+", out, term(k, coeffs[k]))
    if out is None:
        out = IntImm(c)
    elif c > 0:
        out = Bin("+", out, IntImm(c))
    elif c < 0:
        out = Bin("-", out, IntImm(-c))
    for k in sorted(coeffs):
        if coeffs[k] < 0:
            out = Bin("-", out, term(k, -coeffs[k]))
    return out


Range = tuple[int, int]  # inclusive [lo, hi]


def bounds(e: Expr, ranges: dict[str, Range]) -> Range | None:
    """Interval of an i64 expression given variable ranges; None if unknown."""
    if isinstance(e, IntImm):
        return e.value, e.value
    if isinstance(e, Var):
        return ranges.get(e.name)
    if isinstance(e, Select):
        a, b = bounds(e.a, ranges), bounds(e.b, ranges)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if not isinstance(e, Bin) or e.dtype != I64:
        return None
    a, b = bounds(e.a, ranges), bounds(e.b, ranges)
    if a is None or b is None:
        return None
    if e.op == "+":
        return a[0] + b[0], a[1] + b[1]
    if e.op == "-":
        return a[0] - b[1], a[1] - b[0]
    if e.op == "*":
        ps = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
        return min(ps), max(ps)
    if e.op == "min":
        return min(a[0], b[0]), min(a[1], b[1])
    if e.op == "max":
        return max(a[0], b[0]), max(a[1], b[1])
    if e.op == "//" and b[0] == b[1] and b[0] > 0:
        return a[0] // b[0], a[1] // b[0]
    if e.op == "%" and b[0] == b[1] and b[0] > 0:
        d = b[0]
        if a[1] - a[0] < d and a[0] % d <= a[1] % d:
            return a[0] % d, a[1] % d
        return 0, d - 1
    return None


def loop_ranges(s: Stmt, outer: dict[str, Range] | None = None) -> dict[str, Range]:
    """Ranges of every loop variable in ``s`` (extents bounded from above)."""
    ranges = dict(outer or {})

    def visit(st: Stmt) -> None:
        if isinstance(st, For):
            b = bounds(st.extent, ranges)
            ranges[st.var.name] = (0, max(0, (b[1] if b else 1 << 40) - 1))
            visit(st.body)
        elif isinstance(st, (Allocate, Stage)):
            visit(st.body)
        elif isinstance(st, Seq):
            for x in st.stmts:
                visit(x)
        elif isinstance(st, If):
            visit(st.then)
            if st.orelse:
                visit(st.orelse)

    visit(s)
    return ranges


def outer_ranges(body: Stmt, target: Stmt) -> dict[str, Range]:
    """Ranges of the loops enclosing ``target`` (not including it)."""
    path = enclosing(body, target) or []
    ranges: dict[str, Range] = {}
    for s in path[:-1]:
        if isinstance(s, For):
            b = bounds(s.extent, ranges)
            ranges[s.var.name] = (0, max(0, (b[1] if b else 1 << 40) - 1))
    return ranges


def affine_in(e: Expr, names: set[str]) -> tuple[dict[str, int], Expr] | None:
    """``e == sum(c[v] * v for v in names) + rest`` with ``rest`` free of ``names``; None if not so."""
    if not (free_vars(e) & names):
        return {}, e
    if isinstance(e, Var):
        return {e.name: 1}, IntImm(0)
    if isinstance(e, Bin) and e.op in ("+", "-"):
        a, b = affine_in(e.a, names), affine_in(e.b, names)
        if a is None or b is None:
            return None
        s = -1 if e.op == "-" else 1
        c = dict(a[0])
        for k, v in b[0].items():
            c[k] = c.get(k, 0) + s * v
        return {k: v for k, v in c.items() if v}, simplify(Bin(e.op, a[1], b[1]))
    if isinstance(e, Bin) and e.op == "*":
        for x, y in ((e.a, e.b), (e.b, e.a)):
            y2 = simplify(y)
            if isinstance(y2, IntImm):
                a = affine_in(x, names)
                if a is None:
                    return None
                return {k: v * y2.value for k, v in a[0].items() if v * y2.value}, simplify(a[1] * y2.value)
        return None
    return None


# ============================================================== simplification
_FOLD: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "min": min,
    "max": max,
}  # one entry per BIN_OPS operator: constant folding with Python's own int/float semantics


def simplify(e: Expr, ranges: dict[str, Range] | None = None) -> Expr:
    """Constant folding, identities, affine normalisation of index expressions,
    and ``//``/``%``/``min`` elimination using variable ranges."""
    rs = ranges or {}

    def f(x: Expr) -> Expr | None:
        if isinstance(x, Bin):
            return _simplify_bin(x, rs)
        if isinstance(x, Select) and isinstance(x.cond, Bin) and x.cond.dtype == BOOL:
            known = _bool_value(x.cond, rs)
            if known is not None:
                return x.a if known else x.b
        return None

    return map_expr(e, f)


def _imm(e: Expr) -> int | float | None:
    """The value of a constant, or None."""
    return e.value if isinstance(e, (IntImm, FloatImm)) else None


def _simplify_bin(x: Bin, ranges: dict[str, Range]) -> Expr | None:
    """One rewrite of a binary node whose operands are already simplified, or None."""
    a, b = x.a, x.b
    va, vb = _imm(a), _imm(b)
    if va is not None and vb is not None and x.op in BIN_OPS:
        if x.op in ("//", "%") and vb == 0:
            return None
        v = _FOLD[x.op](va, vb)
        return IntImm(int(v)) if x.dtype == I64 else FloatImm(float(v))
    if x.dtype == BOOL:
        if x.op == "and":
            if _bool_value(a, ranges) is True:
                return b
            if _bool_value(b, ranges) is True:
                return a
        return None
    if x.dtype != I64:  # float identities: x * 1, x + 0
        if x.op == "*" and (va == 1.0 or vb == 1.0):
            return b if va is not None else a
        if x.op == "+" and (va == 0.0 or vb == 0.0):
            return b if va is not None else a
        return None
    if x.op in ("+", "-", "*"):
        lf = linear_form(x)
        if lf is not None:
            return from_linear(*lf)
        if x.op == "*" and (va == 0 or vb == 0):
            return IntImm(0)
        if x.op == "*" and (va == 1 or vb == 1):
            return b if va == 1 else a
        if x.op in ("+", "-") and vb == 0:  # non-affine operands too: `x // 13 - 0` hides the div/mod fold
            return a
        if x.op == "+" and va == 0:
            return b
        return None
    if x.op in ("//", "%") and isinstance(b, IntImm) and b.value > 0:
        return _simplify_divmod(x.op, a, b.value, ranges)
    if x.op in ("min", "max"):
        return _simplify_minmax(x.op, a, b, ranges)
    return None


def _simplify_divmod(op: str, a: Expr, d: int, ranges: dict[str, Range]) -> Expr | None:
    """``a // d`` or ``a % d`` for a constant ``d > 0``: split off the multiples of ``d`` when the rest
    provably stays in ``[0, d)``."""
    if d == 1:
        return a if op == "//" else IntImm(0)
    lf = linear_form(a)
    if lf is not None:
        coeffs, c = lf
        q = {k: v // d for k, v in coeffs.items() if v % d == 0}
        r = {k: v for k, v in coeffs.items() if v % d != 0}
        rest = from_linear(r, c % d)
        rb = bounds(rest, ranges)
        if rb is not None and 0 <= rb[0] and rb[1] < d:
            if op == "//":
                return from_linear(q, c // d)
            return rest
    ab = bounds(a, ranges)
    if ab is not None and 0 <= ab[0] and ab[1] < d:
        return IntImm(0) if op == "//" else a
    return None


def _simplify_minmax(op: str, a: Expr, b: Expr, ranges: dict[str, Range]) -> Expr | None:
    """``min``/``max`` of two operands whose ranges do not overlap: the one that always wins."""
    ba, bb = bounds(a, ranges), bounds(b, ranges)
    if ba and bb:
        if op == "min":
            if ba[1] <= bb[0]:
                return a
            if bb[1] <= ba[0]:
                return b
        else:
            if ba[0] >= bb[1]:
                return a
            if bb[0] >= ba[1]:
                return b
    return None


def _bool_value(c: Expr, ranges: dict[str, Range]) -> bool | None:
    if not isinstance(c, Bin):
        return None
    if c.op in BOOL_OPS:
        x, y = _bool_value(c.a, ranges), _bool_value(c.b, ranges)
        if c.op == "and":
            if x is False or y is False:
                return False
            return True if (x and y) else None
        if x is True or y is True:
            return True
        return False if (x is False and y is False) else None
    if c.op not in CMP_OPS or c.a.dtype != I64:
        return None
    a, b = bounds(c.a, ranges), bounds(c.b, ranges)
    if a is None or b is None:
        return None
    lo, hi = a[0] - b[1], a[1] - b[0]  # range of a - b
    table = {
        "<": (hi < 0, lo >= 0),
        "<=": (hi <= 0, lo > 0),
        ">": (lo > 0, hi <= 0),
        ">=": (lo >= 0, hi < 0),
        "==": (lo == hi == 0, lo > 0 or hi < 0),
        "!=": (lo > 0 or hi < 0, lo == hi == 0),
    }
    t, f = table[c.op]
    return True if t else (False if f else None)


def simplify_stmt(s: Stmt, outer: dict[str, Range] | None = None) -> Stmt:
    """Simplify every expression using the ranges of the loops enclosing it."""
    ranges = dict(outer or {})

    def go(st: Stmt) -> Stmt:
        if isinstance(st, For):
            ext = simplify(st.extent, ranges)
            b = bounds(ext, ranges)
            ranges[st.var.name] = (0, max(0, (b[1] if b else 1 << 40) - 1))
            body = go(st.body)
            return For(st.var, ext, body, st.kind)
        if isinstance(st, Store):
            return Store(st.buf, tuple(simplify(i, ranges) for i in st.idx), simplify(st.value, ranges))
        if isinstance(st, Seq):
            return Seq(tuple(go(x) for x in st.stmts))
        if isinstance(st, If):
            c = simplify(st.cond, ranges)
            known = _bool_value(c, ranges)
            if known is True:
                return go(st.then)
            if known is False:
                return go(st.orelse) if st.orelse else Seq(())
            return If(c, go(st.then), go(st.orelse) if st.orelse else None)
        if isinstance(st, Allocate):
            return Allocate(st.buf, go(st.body))
        if isinstance(st, Stage):
            return Stage(st.name, go(st.body))
        if isinstance(st, Intrinsic):
            return Intrinsic(
                st.name, tuple(simplify(a, ranges) if isinstance(a, Expr) else a for a in st.args), st.reads, st.writes
            )
        return st

    return go(s)


def _scaled_terms(e: Expr, s: int) -> list[tuple[Expr, int]]:
    """``e * s`` as a sum of (atom, coefficient) pairs: sums and products by constants expanded, anything
    else (``x // c``, ``x % c``, a variable, a constant as ``IntImm(1)``) kept whole as an atom."""
    if isinstance(e, IntImm):
        return [(IntImm(1), e.value * s)] if e.value else []
    if isinstance(e, Bin) and e.op in ("+", "-"):
        return _scaled_terms(e.a, s) + _scaled_terms(e.b, -s if e.op == "-" else s)
    if isinstance(e, Bin) and e.op == "*":
        for x, y in ((e.a, e.b), (e.b, e.a)):
            if isinstance(y, IntImm):
                return _scaled_terms(x, s * y.value)
    return [(e, s)] if s else []


def flat_offset(buf: Buffer, idx: Sequence[Expr]) -> Expr:
    """Element offset of ``buf[idx]``, with ``(x // c) * c * s + (x % c) * s`` folded to ``x * s`` (floor
    division and modulo: true for every integer ``x``), also where the two sit in different indices among
    other terms (a convolution tap ``x[c, j // W + kh - 1, j % W + kw - 1]`` is ``j + (kh - 1) * W + kw - 1``
    past the channel's start: affine in ``j``)."""
    terms: list[tuple[Expr, int]] = [(IntImm(1), buf.offset)]
    for i, st in zip(idx, buf.elem_strides, strict=False):
        terms += _scaled_terms(simplify(i), st)
    changed = True
    while changed:
        changed = False
        for a_i, (ea, sa) in enumerate(terms):
            if isinstance(ea, Bin) and ea.op == "//" and isinstance(ea.b, IntImm):
                for b_i, (eb, sb) in enumerate(terms):
                    if isinstance(eb, Bin) and eb.op == "%" and eb.a == ea.a and eb.b == ea.b and sa == sb * ea.b.value:
                        terms = [t for k, t in enumerate(terms) if k not in (a_i, b_i)] + _scaled_terms(ea.a, sb)
                        changed = True
                        break
            if changed:
                break
    out: Expr = IntImm(0)
    for e, s in terms:
        out = Bin("+", out, e if s == 1 else Bin("*", e, IntImm(s)))
    return simplify(out)
