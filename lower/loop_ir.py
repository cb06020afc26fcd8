"""Loop IR: buffers, index/value expressions, loop nests and kernels.

A kernel is a tree of statements over named buffers::

    kernel relu_add(x: f32[64, 128], b: f32[1, 128], out: f32[64, 128]) {
      parallel for i in 0..64 {
        vectorized for j in 0..128 {
          out[i, j] = max(x[i, j] + b[0, j], 0.0)
        }
      }
    }

Expressions are immutable (frozen dataclasses, structural equality) so that
schedules can substitute, compare and simplify them.  Three dtypes exist:
``i64`` (indices, loop variables), ``f32`` (tensor values) and ``bool``.
Everything is row-major; a buffer carries explicit strides and an element
offset so that views (slices of a concat output, reshapes) need no copy.

Python operators build expressions: ``x[i, j] + 1.0``, ``i * 4 + j``.
Comparisons use functions (``lt``, ``le``, ``eq`` ...) because ``==`` is kept
for structural equality.

Affine forms, interval bounds and the range-aware simplifier are in
``lower.loop_simplify`` (re-exported here); the printer is ``lower.printer``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Callable, Iterator, Sequence, Union

from rewrite.ir.errors import LoweringError

I64, F32, BOOL = "i64", "f32", "bool"


# ============================================================== buffers
@dataclass(frozen=True)
class Buffer:
    """A named n-d array. ``scope`` is "global" (a kernel parameter) or "local"
    (scratch allocated inside the kernel by an ``Allocate``)."""

    name: str
    shape: tuple[int, ...]
    dtype: str = F32
    strides: tuple[int, ...] | None = None  # None: contiguous row-major
    offset: int = 0  # in elements
    scope: str = "global"

    @property
    def elem_strides(self) -> tuple[int, ...]:
        if self.strides is not None:
            return self.strides
        out, acc = [], 1
        for d in reversed(self.shape):
            out.append(acc)
            acc *= d
        return tuple(reversed(out))

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __getitem__(self, idx) -> "Load":
        if not isinstance(idx, tuple):
            idx = (idx,)
        if len(idx) != len(self.shape):
            raise LoweringError(f"buffer {self.name}{list(self.shape)} indexed with {len(idx)} indices")
        return Load(self, tuple(as_expr(i, I64) for i in idx))

    def __repr__(self) -> str:
        return f"{self.name}: {self.dtype}{list(self.shape)}"


# ============================================================== expressions
class Expr:
    dtype: str = I64

    # arithmetic sugar -------------------------------------------------
    def _bin(self, op: str, other, rev: bool = False) -> "Expr":
        o = as_expr(other, self.dtype)
        return Bin(op, o, self) if rev else Bin(op, self, o)

    def __add__(self, o):
        return self._bin("+", o)

    def __radd__(self, o):
        return self._bin("+", o, True)

    def __sub__(self, o):
        return self._bin("-", o)

    def __rsub__(self, o):
        return self._bin("-", o, True)

    def __mul__(self, o):
        return self._bin("*", o)

    def __rmul__(self, o):
        return self._bin("*", o, True)

    def __truediv__(self, o):
        return self._bin("/", o)

    def __rtruediv__(self, o):
        return self._bin("/", o, True)

    def __floordiv__(self, o):
        return self._bin("//", o)

    def __mod__(self, o):
        return self._bin("%", o)

    def __neg__(self):
        return Bin("-", as_expr(0, self.dtype), self)


@dataclass(frozen=True, eq=True)
class Var(Expr):
    """A loop variable (always i64)."""

    name: str
    dtype: str = field(default=I64, repr=False)


@dataclass(frozen=True, eq=True)
class IntImm(Expr):
    value: int
    dtype: str = field(default=I64, repr=False)


@dataclass(frozen=True, eq=True)
class FloatImm(Expr):
    value: float
    dtype: str = field(default=F32, repr=False)


BIN_OPS = ("+", "-", "*", "/", "//", "%", "min", "max")
CMP_OPS = ("<", "<=", "==", "!=", ">", ">=")
BOOL_OPS = ("and", "or")


@dataclass(frozen=True, eq=True)
class Bin(Expr):
    op: str
    a: Expr
    b: Expr

    def __post_init__(self):
        if self.op not in BIN_OPS + CMP_OPS + BOOL_OPS:
            raise LoweringError(f"unknown binary operator {self.op!r}")
        if self.a.dtype != self.b.dtype:
            raise LoweringError(f"operand types differ in {self.op}: {self.a.dtype} vs {self.b.dtype}")
        if self.op in ("//", "%") and self.a.dtype != I64:
            raise LoweringError(f"{self.op} is only defined on indices")
        if self.op == "/" and self.a.dtype == I64:
            raise LoweringError("use // for index division")

    @property
    def dtype(self) -> str:  # type: ignore[override]
        return BOOL if self.op in CMP_OPS + BOOL_OPS else self.a.dtype


@dataclass(frozen=True, eq=True)
class Select(Expr):
    cond: Expr
    a: Expr
    b: Expr

    @property
    def dtype(self) -> str:  # type: ignore[override]
        return self.a.dtype


MATH_FUNCS = ("exp", "tanh", "sigmoid", "sqrt", "rsqrt", "abs", "gelu_tanh")


@dataclass(frozen=True, eq=True)
class Call(Expr):
    """A pure f32 math function, one of ``MATH_FUNCS``."""

    fn: str
    args: tuple[Expr, ...]
    dtype: str = field(default=F32, repr=False)

    def __post_init__(self):
        if self.fn not in MATH_FUNCS:
            raise LoweringError(f"unknown math function {self.fn!r}")


@dataclass(frozen=True, eq=True)
class Cast(Expr):
    to: str
    a: Expr

    @property
    def dtype(self) -> str:  # type: ignore[override]
        return self.to


@dataclass(frozen=True, eq=True)
class Load(Expr):
    buf: Buffer
    idx: tuple[Expr, ...]

    @property
    def dtype(self) -> str:  # type: ignore[override]
        return self.buf.dtype


ExprLike = Union[Expr, int, float]


def as_expr(v: ExprLike, dtype: str = I64) -> Expr:
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool):
        raise LoweringError("booleans are not expressions")
    if dtype == F32 or isinstance(v, float):
        return FloatImm(float(v))
    return IntImm(int(v))


def const(v: float) -> FloatImm:
    return FloatImm(float(v))


def emin(a: ExprLike, b: ExprLike) -> Expr:
    a = as_expr(a)
    return Bin("min", a, as_expr(b, a.dtype))


def emax(a: ExprLike, b: ExprLike) -> Expr:
    a = as_expr(a)
    return Bin("max", a, as_expr(b, a.dtype))


def _cmp(op: str) -> Callable[[ExprLike, ExprLike], Expr]:
    def f(a: ExprLike, b: ExprLike) -> Expr:
        a = as_expr(a, b.dtype if isinstance(b, Expr) else I64)
        return Bin(op, a, as_expr(b, a.dtype))

    return f


lt, le, eq, ne, gt, ge = _cmp("<"), _cmp("<="), _cmp("=="), _cmp("!="), _cmp(">"), _cmp(">=")


def land(*cs: Expr) -> Expr:
    out = cs[0]
    for c in cs[1:]:
        out = Bin("and", out, c)
    return out


def call(fn: str, *args: Expr) -> Call:
    return Call(fn, tuple(args))


# ============================================================== statements
class LoopKind(str, Enum):
    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"


class Stmt:
    pass


@dataclass(frozen=True, eq=True)
class For(Stmt):
    """``for var in 0..extent``; ``extent`` may depend on enclosing loop variables."""

    var: Var
    extent: Expr
    body: Stmt
    kind: LoopKind = LoopKind.SERIAL

    @property
    def name(self) -> str:
        return self.var.name


@dataclass(frozen=True, eq=True)
class Store(Stmt):
    buf: Buffer
    idx: tuple[Expr, ...]
    value: Expr


@dataclass(frozen=True, eq=True)
class Seq(Stmt):
    stmts: tuple[Stmt, ...]


@dataclass(frozen=True, eq=True)
class If(Stmt):
    cond: Expr
    then: Stmt
    orelse: Stmt | None = None


@dataclass(frozen=True, eq=True)
class Allocate(Stmt):
    """Scratch buffer ``buf`` (scope "local") live within ``body``."""

    buf: Buffer
    body: Stmt


@dataclass(frozen=True, eq=True)
class Stage(Stmt):
    """A named region: what one graph node (or one step of it) computes.
    Schedules refer to stages by name (``compute_at``, ``inline``)."""

    name: str
    body: Stmt


@dataclass(frozen=True, eq=True)
class Intrinsic(Stmt):
    """A call to a backend-provided routine (made by ``tensorize``).
    ``args`` are expressions (i64) and buffers; the backend table knows the name."""

    name: str
    args: tuple[Union[Expr, Buffer], ...]
    reads: tuple[Buffer, ...] = ()
    writes: tuple[Buffer, ...] = ()


def seq(*stmts: Stmt) -> Stmt:
    flat: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Seq):
            flat.extend(s.stmts)
        elif s is not None:
            flat.append(s)
    return flat[0] if len(flat) == 1 else Seq(tuple(flat))


def loops(vars_extents: Sequence[tuple[Var, ExprLike]], body: Stmt, kind: LoopKind = LoopKind.SERIAL) -> Stmt:
    """Perfect nest, outermost first."""
    for v, e in reversed(list(vars_extents)):
        body = For(v, as_expr(e), body, kind)
    return body


@dataclass
class Kernel:
    """One compiled unit: parameters in ABI order and a body."""

    name: str
    params: list[Buffer]
    body: Stmt
    meta: dict = field(default_factory=dict)  # free-form notes (cost, group) for the runtime

    def with_body(self, body: Stmt) -> "Kernel":
        return Kernel(self.name, list(self.params), body, dict(self.meta))

    def __str__(self) -> str:
        from lower.printer import format_kernel

        return format_kernel(self)


# ============================================================== traversal
def expr_children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Bin):
        return (e.a, e.b)
    if isinstance(e, Select):
        return (e.cond, e.a, e.b)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, Cast):
        return (e.a,)
    if isinstance(e, Load):
        return e.idx
    return ()


def map_expr(e: Expr, f: Callable[[Expr], Expr | None]) -> Expr:
    """Bottom-up rewrite: ``f`` returns a replacement or None to keep the (rebuilt) node."""
    if isinstance(e, Bin):
        a, b = map_expr(e.a, f), map_expr(e.b, f)
        e = e if (a is e.a and b is e.b) else Bin(e.op, a, b)
    elif isinstance(e, Select):
        c, a, b = map_expr(e.cond, f), map_expr(e.a, f), map_expr(e.b, f)
        e = e if (c is e.cond and a is e.a and b is e.b) else Select(c, a, b)
    elif isinstance(e, Call):
        args = tuple(map_expr(x, f) for x in e.args)
        e = e if all(x is y for x, y in zip(args, e.args)) else Call(e.fn, args)
    elif isinstance(e, Cast):
        a = map_expr(e.a, f)
        e = e if a is e.a else Cast(e.to, a)
    elif isinstance(e, Load):
        idx = tuple(map_expr(x, f) for x in e.idx)
        e = e if all(x is y for x, y in zip(idx, e.idx)) else Load(e.buf, idx)
    r = f(e)
    return e if r is None else r


def walk_expr(e: Expr) -> Iterator[Expr]:
    yield e
    for c in expr_children(e):
        yield from walk_expr(c)


def map_stmt(
    s: Stmt, fs: Callable[[Stmt], Stmt | None] | None = None, fe: Callable[[Expr], Expr | None] | None = None
) -> Stmt:
    """Rewrite statements bottom-up (``fs``) and every expression in them (``fe``)."""
    me = (lambda e: map_expr(e, fe)) if fe else (lambda e: e)
    if isinstance(s, For):
        s = For(s.var, me(s.extent), map_stmt(s.body, fs, fe), s.kind)
    elif isinstance(s, Store):
        s = Store(s.buf, tuple(me(i) for i in s.idx), me(s.value))
    elif isinstance(s, Seq):
        s = Seq(tuple(map_stmt(x, fs, fe) for x in s.stmts))
    elif isinstance(s, If):
        s = If(me(s.cond), map_stmt(s.then, fs, fe), map_stmt(s.orelse, fs, fe) if s.orelse else None)
    elif isinstance(s, Allocate):
        s = Allocate(s.buf, map_stmt(s.body, fs, fe))
    elif isinstance(s, Stage):
        s = Stage(s.name, map_stmt(s.body, fs, fe))
    elif isinstance(s, Intrinsic):
        s = Intrinsic(s.name, tuple(me(a) if isinstance(a, Expr) else a for a in s.args), s.reads, s.writes)
    if fs:
        r = fs(s)
        if r is not None:
            return r
    return s


def walk_stmt(s: Stmt) -> Iterator[Stmt]:
    yield s
    if isinstance(s, (For, Allocate, Stage)):
        yield from walk_stmt(s.body)
    elif isinstance(s, Seq):
        for x in s.stmts:
            yield from walk_stmt(x)
    elif isinstance(s, If):
        yield from walk_stmt(s.then)
        if s.orelse:
            yield from walk_stmt(s.orelse)


def stmt_exprs(s: Stmt) -> Iterator[Expr]:
    """Top-level expressions directly held by one statement."""
    if isinstance(s, For):
        yield s.extent
    elif isinstance(s, Store):
        yield from s.idx
        yield s.value
    elif isinstance(s, If):
        yield s.cond
    elif isinstance(s, Intrinsic):
        yield from (a for a in s.args if isinstance(a, Expr))


def all_exprs(s: Stmt) -> Iterator[Expr]:
    for st in walk_stmt(s):
        for e in stmt_exprs(st):
            yield from walk_expr(e)


def loads_of(s: Stmt | Expr) -> list[Load]:
    it = walk_expr(s) if isinstance(s, Expr) else all_exprs(s)
    return [e for e in it if isinstance(e, Load)]


def stores_of(s: Stmt) -> list[Store]:
    return [x for x in walk_stmt(s) if isinstance(x, Store)]


def free_vars(e: Expr) -> set[str]:
    return {x.name for x in walk_expr(e) if isinstance(x, Var)}


def substitute(node, mapping: dict[str, Expr]):
    """Replace loop variables by expressions in an Expr or a Stmt."""

    def fe(e: Expr) -> Expr | None:
        if isinstance(e, Var) and e.name in mapping:
            return mapping[e.name]
        return None

    if isinstance(node, Expr):
        return map_expr(node, fe)
    return map_stmt(node, None, fe)


def find_loop(s: Stmt, name: str) -> For | None:
    for x in walk_stmt(s):
        if isinstance(x, For) and x.var.name == name:
            return x
    return None


def loop_names(s: Stmt) -> list[str]:
    return [x.var.name for x in walk_stmt(s) if isinstance(x, For)]


def find_stage(s: Stmt, name: str) -> Stage | None:
    for x in walk_stmt(s):
        if isinstance(x, Stage) and x.name == name:
            return x
    return None


def buffers_used(s: Stmt) -> dict[str, Buffer]:
    out: dict[str, Buffer] = {}
    for x in walk_stmt(s):
        if isinstance(x, Store):
            out.setdefault(x.buf.name, x.buf)
        if isinstance(x, Intrinsic):
            for b in x.reads + x.writes:
                out.setdefault(b.name, b)
        if isinstance(x, Allocate):
            out.setdefault(x.buf.name, x.buf)
    for ld in loads_of(s):
        out.setdefault(ld.buf.name, ld.buf)
    return out


def replace_buffer(
    s: Stmt, old: str, new: Buffer, index_map: Callable[[tuple[Expr, ...]], tuple[Expr, ...]] | None = None
) -> Stmt:
    """Point loads and stores of buffer ``old`` at ``new``, optionally remapping indices."""
    im = index_map or (lambda idx: idx)

    def fe(e: Expr) -> Expr | None:
        if isinstance(e, Load) and e.buf.name == old:
            return Load(new, tuple(im(e.idx)))
        return None

    def fs(st: Stmt) -> Stmt | None:
        if isinstance(st, Store) and st.buf.name == old:
            return Store(new, tuple(im(st.idx)), st.value)
        if isinstance(st, Intrinsic):
            sw = lambda bs: tuple(new if b.name == old else b for b in bs)  # noqa: E731
            return Intrinsic(
                st.name,
                tuple(new if isinstance(a, Buffer) and a.name == old else a for a in st.args),
                sw(st.reads),
                sw(st.writes),
            )
        return None

    return map_stmt(s, fs, fe)


def rename_loops(s: Stmt, mapping: dict[str, str]) -> Stmt:
    def fs(st: Stmt) -> Stmt | None:
        if isinstance(st, For) and st.var.name in mapping:
            return replace(st, var=Var(mapping[st.var.name]))
        return None

    return map_stmt(substitute(s, {k: Var(v) for k, v in mapping.items()}), fs)


# Affine analysis, interval bounds and the simplifier live in lower/loop_simplify.py (which builds on the
# definitions above, hence the import at the end); re-exported so ``from lower.loop_ir import simplify`` works.
from lower.loop_simplify import (
    Range,
    _bool_value,
    _fold,
    bounds,
    flat_offset,
    from_linear,  # noqa: E402,F401
    linear_form,
    loop_ranges,
    simplify,
    simplify_stmt,
)
