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
    Call,
    Cast,
    Expr,
    FloatImm,
    For,
    If,
    IntImm,
    Intrinsic,
    Load,
    Select,
    Seq,
    Stage,
    Stmt,
    Store,
    Var,
)
from lower.ir.traverse import enclosing, free_vars

# ============================================================== memo tables
# Lowering one model simplifies the same index expressions again and again: every schedule step
# re-simplifies the kernel, and code generation derives each access's flat offset several times (its
# address, its bounds, the loop-metadata checks).  Results for pure index expressions (``Var``, ``IntImm``
# and ``Bin`` nodes only: no loads, no floats, so structural equality is exact) are kept in tables keyed by
# the expression and the ranges of its variables.  Nothing depends on the identity of such nodes (code
# generation marks float nodes by identity, never index ones), so a result may be shared.
_MEMO_MAX = 1 << 15  # entries per table before it is emptied: what the tables keep alive stays in tens of MB
_UNCHANGED = IntImm(0)  # marker in the simplify table: the input itself was the result
_MISSING: Any = object()  # a memo's "not there yet" (None is a value there)


def _index_vars(e: Expr) -> tuple[str, ...] | None:
    """The sorted variable names of a pure index expression (see above), or None when ``e`` is not one;
    memoized on the node."""
    t = type(e)
    if t is IntImm:
        return ()
    if t is Var:
        return (e.name,) if e.dtype == I64 else None  # type: ignore[attr-defined]
    if t is not Bin:
        return None
    d = e.__dict__
    r = d.get("_ivars", _MISSING)  # (not try/except: a miss, every new node's first visit, would raise)
    if r is _MISSING:
        assert isinstance(e, Bin)
        a, b = _index_vars(e.a), _index_vars(e.b)
        r = None if a is None or b is None else (a if a == b or not b else b if not a else tuple(sorted({*a, *b})))
        d["_ivars"] = r
    return r


def _remember(table: dict, key: object, value: object) -> None:
    if len(table) >= _MEMO_MAX:
        table.clear()
    table[key] = value


# ============================================================== affine analysis
def linear_form(e: Expr) -> tuple[dict[str, int], int] | None:
    """``e`` as ``sum(coeff * var) + const`` over loop variables, or None if not affine."""
    lf = _linear(e)
    return None if lf is None else (dict(lf[0]), lf[1])


_NOT_LINEAR = ({"": 0}, 0)  # marker memoized for a node that is not affine


def _linear(e: Expr) -> tuple[dict[str, int], int] | None:
    """``linear_form`` memoized on the node (the simplifier asks for each sum's form, and its operands' forms
    again inside it, once per enclosing sum); the dict is shared: read it, never change it."""
    t = type(e)
    if t is IntImm:
        return {}, e.value  # type: ignore[attr-defined]
    if t is Var:
        return {e.name: 1}, 0  # type: ignore[attr-defined]
    if t is not Bin:
        return None
    d = e.__dict__
    lf = d.get("_lf")
    if lf is None:
        lf = d["_lf"] = _linear_bin(e) or _NOT_LINEAR  # type: ignore[arg-type]
    return None if lf is _NOT_LINEAR else lf


def _linear_bin(e: Bin) -> tuple[dict[str, int], int] | None:
    if e.op in ("+", "-"):
        la, lb = _linear(e.a), _linear(e.b)
        if la is None or lb is None:
            return None
        s = -1 if e.op == "-" else 1
        d = dict(la[0])
        for k, v in lb[0].items():
            d[k] = d.get(k, 0) + s * v
        return {k: v for k, v in d.items() if v}, la[1] + s * lb[1]
    if e.op == "*":
        la, lb = _linear(e.a), _linear(e.b)
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
    # memoized (a pure index expression, see "memo tables"): the simplifier rebuilds every affine index it
    # visits this way, most of them already canonical
    key = (tuple(sorted([(k, v) for k, v in coeffs.items() if v])), c)
    out = _CANONICAL.get(key)
    if out is None:
        out = _build_linear(coeffs, c)
        _remember(_CANONICAL, key, out)
    return out


_CANONICAL: dict[tuple[tuple[tuple[str, int], ...], int], Expr] = {}


def _build_linear(coeffs: dict[str, int], c: int) -> Expr:
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
    t = type(e)  # dispatch on the exact type: the legality checks ask this for every access, many times
    if t is IntImm:
        return e.value, e.value  # type: ignore[attr-defined]
    if t is Var:
        return ranges.get(e.name)  # type: ignore[attr-defined]
    if t is Select:
        assert isinstance(e, Select)
        a, b = bounds(e.a, ranges), bounds(e.b, ranges)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if t is not Bin or e.dtype != I64:
        return None
    assert isinstance(e, Bin)
    names = _index_vars(e)
    if names is None:
        return _bin_bounds(e, ranges)
    key = (e, tuple(map(ranges.get, names)))
    r = _BOUNDS.get(key, _MISSING)
    if r is _MISSING:
        r = _bin_bounds(e, ranges)
        _remember(_BOUNDS, key, r)
    return r


_BOUNDS: dict[tuple[Expr, tuple[Range | None, ...]], Range | None] = {}  # see "memo tables"


def _bin_bounds(e: Bin, ranges: dict[str, Range]) -> Range | None:
    a, b = bounds(e.a, ranges), bounds(e.b, ranges)
    if a is None or b is None:
        return None
    op = e.op
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op == "-":
        return a[0] - b[1], a[1] - b[0]
    if op == "*":
        ps = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
        return min(ps), max(ps)
    if op == "min":
        return min(a[0], b[0]), min(a[1], b[1])
    if op == "max":
        return max(a[0], b[0]), max(a[1], b[1])
    if op == "//" and b[0] == b[1] and b[0] > 0:
        return a[0] // b[0], a[1] // b[0]
    if op == "%" and b[0] == b[1] and b[0] > 0:
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
    return _simplify(e, ranges or {})


_SIMPLIFIED: dict[tuple[Expr, tuple[Range | None, ...]], Expr] = {}


def _simplify(e: Expr, rs: dict[str, Range]) -> Expr:
    """``map_expr(e, one rewrite per node)`` spelled out, with pure index subtrees looked up in (and added to)
    ``_SIMPLIFIED``.  As ``map_expr``, it returns ``e`` itself when nothing changed (callers rebuild a parent
    only when a child is a new object).  Value nodes are not memoized: a changed result is rebuilt each time,
    as fresh objects, so no value node ends up shared where it was not (code generation marks value nodes
    by identity)."""
    t = type(e)
    if t is Var or t is IntImm or t is FloatImm:
        return e
    if t is Bin:
        names = _index_vars(e)
        if names is not None:
            key = (e, tuple(map(rs.get, names)))
            hit = _SIMPLIFIED.get(key)
            if hit is not None:
                if hit is _UNCHANGED:
                    return e
                # a rewrite, which always gave a new node: even when ``e`` is the very node it gave before
                return hit if hit is not e else Bin(e.op, e.a, e.b)  # type: ignore[attr-defined]
            out = _simplify_node(e, rs)
            _remember(_SIMPLIFIED, key, _UNCHANGED if out is e else out)
            return out
        return _simplify_node(e, rs)
    if t in _COMPOUND:
        return _simplify_node(e, rs)
    return e  # not an expression (a bare number): as map_expr, kept


_COMPOUND = (Load, Select, Call, Cast)


def _simplify_node(e: Expr, rs: dict[str, Range]) -> Expr:
    """One step of ``_simplify``: the node's operands simplified, then its own rewrite."""
    if isinstance(e, Bin):
        a, b = _simplify(e.a, rs), _simplify(e.b, rs)
        x = e if (a is e.a and b is e.b) else Bin(e.op, a, b)
        r = _simplify_bin(x, rs)
        if r is None:
            return x
        if r is x or r is e:  # ``from_linear`` handed back a canonical node: a rewrite gives a new one, as it did
            r = Bin(r.op, r.a, r.b)
        return r
    if isinstance(e, Load):
        idx = tuple([_simplify(i, rs) for i in e.idx])
        return e if all(x is y for x, y in zip(idx, e.idx, strict=False)) else Load(e.buf, idx)
    if isinstance(e, Select):
        c, a, b = _simplify(e.cond, rs), _simplify(e.a, rs), _simplify(e.b, rs)
        sel = e if (c is e.cond and a is e.a and b is e.b) else Select(c, a, b)
        if isinstance(sel.cond, Bin) and sel.cond.dtype == BOOL:
            known = _bool_value(sel.cond, rs)
            if known is not None:
                return sel.a if known else sel.b
        return sel
    if isinstance(e, Call):
        args = tuple([_simplify(x, rs) for x in e.args])
        return e if all(x is y for x, y in zip(args, e.args, strict=False)) else Call(e.fn, args)
    assert isinstance(e, Cast)
    a = _simplify(e.a, rs)
    return e if a is e.a else Cast(e.to, a)


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
        lf = _linear(x)
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
    lf = _linear(a)
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
    idx = tuple(idx)
    if not all(_index_vars(i) is not None for i in idx):
        return _flat_offset(buf, idx)
    # memoized: code generation asks for each access's offset several times (address, bounds, loop metadata)
    key = (buf, idx)
    off = _OFFSETS.get(key)
    if off is None:
        off = _flat_offset(buf, idx)
        _remember(_OFFSETS, key, off)
    return off


_OFFSETS: dict[tuple[Buffer, tuple[Expr, ...]], Expr] = {}


def _split_quotient(x: Expr, c: int, rem: Bin) -> Expr | None:
    """What ``(x // c) * m + rem`` folds to when ``rem`` is ``y % m``: ``x`` when ``y`` is ``x`` and ``m`` is ``c``
    (``(x // c) * c + x % c == x``), ``x // c1`` when ``y`` is ``x // c1`` and ``c == c1 * m`` (floor division by
    positive constants nests: ``x // (c1 * m) == (x // c1) // m``); None otherwise.  The second is the multi-index
    of a flat offset over three or more dims (``unflatten``): ``j // (H * W)``, ``j // W % H``, ``j % W``."""
    m = rem.b
    assert isinstance(m, IntImm)
    if rem.a == x and m.value == c:
        return x
    y = rem.a
    if (
        isinstance(y, Bin)
        and y.op == "//"
        and y.a == x
        and isinstance(y.b, IntImm)
        and y.b.value > 0
        and m.value > 0
        and y.b.value * m.value == c
    ):
        return y
    return None


def _flat_offset(buf: Buffer, idx: Sequence[Expr]) -> Expr:
    terms: list[tuple[Expr, int]] = [(IntImm(1), buf.offset)]
    for i, st in zip(idx, buf.elem_strides, strict=False):
        terms += _scaled_terms(simplify(i), st)
    changed = True
    while changed:
        changed = False
        for a_i, (ea, sa) in enumerate(terms):
            if isinstance(ea, Bin) and ea.op == "//" and isinstance(ea.b, IntImm):
                for b_i, (eb, sb) in enumerate(terms):
                    if isinstance(eb, Bin) and eb.op == "%" and isinstance(eb.b, IntImm) and sa == sb * eb.b.value:
                        quotient = _split_quotient(ea.a, ea.b.value, eb)
                        if quotient is not None:
                            others = [t for k, t in enumerate(terms) if k not in (a_i, b_i)]
                            terms = others + _scaled_terms(quotient, sb)
                            changed = True
                            break
            if changed:
                break
    if all(type(e) is Var or type(e) is IntImm for e, _ in terms):
        # every term affine: simplifying the sum below gives its canonical linear form, built here directly
        coeffs: dict[str, int] = {}
        const = 0
        for e, s in terms:
            if isinstance(e, Var):
                coeffs[e.name] = coeffs.get(e.name, 0) + s
            else:
                assert isinstance(e, IntImm)
                const += e.value * s
        return from_linear(coeffs, const)
    out: Expr = IntImm(0)
    for e, s in terms:
        out = Bin("+", out, e if s == 1 else Bin("*", e, IntImm(s)))
    return simplify(out)
