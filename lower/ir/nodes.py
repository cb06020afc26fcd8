"""Loop IR nodes: buffers, index/value expressions and statements.

A kernel body is a tree of statements over named buffers::

    parallel for i in 0..64 {
      vectorized for j in 0..128 {
        out[i, j] = max(x[i, j] + b[0, j], 0.0)
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

    >>> i, x = Var("i"), Buffer("x", (8,))
    >>> x[i * 2 + 1].idx
    (Bin(op='+', a=Bin(op='*', a=Var(name='i'), b=IntImm(value=2)), b=IntImm(value=1)),)

This module knows nothing else of the IR: traversal is ``lower.ir.traverse``,
analyses and the simplifier ``lower.ir.simplify``, text ``lower.ir.printer``,
the ``Kernel`` (parameters + body) ``lower.ir.kernel``; each builds on the
ones before it, never the other way round.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from rewrite.ir import dtypes
from rewrite.ir.errors import LoweringError

I64, F32, BOOL = "i64", "f32", "bool"
# Storage-only types: a buffer may hold them, an expression never does.  A load converts to f32 (exact), a
# store rounds an f32 to them (to nearest even), and ``Cast(F16, x)`` is that rounding kept in an f32
# register: a half value computes as the f32 it equals.
F16, BF16 = "f16", "bf16"
HALF_TYPES = (F16, BF16)
# Storage-only integers: a load sign- or zero-extends to i64 (exact), a store truncates an i64 that
# ``Cast(U8, x)`` (saturating to the range, a float truncated toward zero, NaN to 0) put in range.
U8, I8, I32 = "u8", "i8", "i32"
INT_TYPES = (U8, I8, I32)
# A graph value's dtype as the loop IR's type: float32 -> f32, int64 -> i64, bool -> bool, the storage-only
# float16 -> f16 and bfloat16 -> bf16, and the storage-only integers uint8 -> u8, int8 -> i8, int32 -> i32.
LOOP_DTYPE = {
    dtypes.FLOAT32: F32,
    dtypes.INT64: I64,
    dtypes.BOOL: BOOL,
    dtypes.FLOAT16: F16,
    dtypes.BFLOAT16: BF16,
    dtypes.UINT8: U8,
    dtypes.INT8: I8,
    dtypes.INT32: I32,
}
# a stored integer's range (where a cast to it saturates) and the bytes of one element of each type: the graph's
INT_BOUNDS = {LOOP_DTYPE[d]: r for d, r in dtypes.INT_RANGE.items()}
ITEM_BYTES = {LOOP_DTYPE[d]: n for d, n in dtypes.ITEMSIZE.items()}


def register_type(dtype: str) -> str:
    """The type an expression reading ``dtype`` has: f32 for the storage-only half types, i64 for the
    storage-only integers, else itself."""
    return F32 if dtype in HALF_TYPES else I64 if dtype in INT_TYPES else dtype


# ============================================================== memoization
class _Node:
    """Base of the immutable IR records.  Analyses memoize per node in its ``__dict__`` under names starting
    with ``_`` (its hash, the loads of a subtree: see ``lower.ir.traverse``, ``lower.ir.simplify``); those
    entries are no part of equality and are dropped when a node is pickled or copied.

    Nodes are shared between threads (kernels schedule and compile on several at once), so another thread may
    add a memo while this one pickles a node: the dict is copied first (one C call, under the GIL), never
    iterated live ("dictionary changed size during iteration" failed a schedule's pickling on 2 threads)."""

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.copy().items() if not k.startswith("_")}


def _node(cls):
    """Finish an IR record class (applied over ``@dataclass(frozen=True)``), keeping its behaviour:

    * ``__init__`` fills ``__dict__`` directly: the frozen dataclass's own calls ``object.__setattr__`` once
      per field, and building nodes was a tenth of scheduling time;
    * ``__hash__`` is the dataclass's structural hash (the same value, so sets order as before), computed
      once per node: the simplifier's memo tables hash deep index expressions many times over."""
    fields = dataclasses.fields(cls)
    assert all(f.default_factory is dataclasses.MISSING and f.init for f in fields), cls
    params = ", ".join(f.name if f.default is dataclasses.MISSING else f"{f.name}=_default_{f.name}" for f in fields)
    lines = [f"def __init__(self, {params}):", "    d = self.__dict__"]
    lines += [f"    d[{f.name!r}] = {f.name}" for f in fields]
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    scope = {f"_default_{f.name}": f.default for f in fields if f.default is not dataclasses.MISSING}
    exec("\n".join(lines), scope)  # as dataclasses itself writes __init__: the fields are known only here
    cls.__init__ = scope["__init__"]
    cls.__init__.__qualname__ = f"{cls.__qualname__}.__init__"

    structural = cls.__hash__

    def __hash__(self) -> int:
        d = self.__dict__
        h = d.get("_hash")
        if h is None:
            h = d["_hash"] = structural(self)
        return h

    cls.__hash__ = __hash__
    return cls


# ============================================================== buffers
@_node
@dataclass(frozen=True)
class Buffer(_Node):
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

    def __getitem__(self, idx) -> Load:
        if not isinstance(idx, tuple):
            idx = (idx,)
        if len(idx) != len(self.shape):
            raise LoweringError(f"buffer {self.name}{list(self.shape)} indexed with {len(idx)} indices")
        return Load(self, tuple(as_expr(i, I64) for i in idx))

    def __repr__(self) -> str:
        return f"{self.name}: {self.dtype}{list(self.shape)}"


# ============================================================== expressions
class Expr(_Node):
    """An expression node.  ``dtype`` is the value's type: a field (``Var``, immediates, ``Call``) or, for nodes
    that derive it from their operands, computed once in ``__post_init__`` and kept as a plain attribute."""

    # not a property: it is read tens of millions of times lowering one model (every Bin's check, every
    # simplifier step), and a property over a deep tree re-derives it recursively each time
    dtype: str

    # arithmetic sugar -------------------------------------------------
    def _bin(self, op: str, other, rev: bool = False) -> Expr:
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


@_node
@dataclass(frozen=True, eq=True)
class Var(Expr):
    """A loop variable (always i64)."""

    name: str
    dtype: str = field(default=I64, repr=False)


@_node
@dataclass(frozen=True, eq=True)
class IntImm(Expr):
    value: int
    dtype: str = field(default=I64, repr=False)


@_node
@dataclass(frozen=True, eq=True)
class FloatImm(Expr):
    value: float
    dtype: str = field(default=F32, repr=False)


BIN_OPS = ("+", "-", "*", "/", "//", "%", "min", "max")
CMP_OPS = ("<", "<=", "==", "!=", ">", ">=")
BOOL_OPS = ("and", "or")
_ALL_BIN_OPS = frozenset(BIN_OPS + CMP_OPS + BOOL_OPS)
_BOOL_RESULT = frozenset(CMP_OPS + BOOL_OPS)


@_node
@dataclass(frozen=True, eq=True)
class Bin(Expr):
    op: str
    a: Expr
    b: Expr

    def __post_init__(self):
        op, ta = self.op, self.a.dtype
        if op not in _ALL_BIN_OPS:
            raise LoweringError(f"unknown binary operator {op!r}")
        if ta != self.b.dtype:
            raise LoweringError(f"operand types differ in {op}: {ta} vs {self.b.dtype}")
        if op in ("//", "%") and ta != I64:
            raise LoweringError(f"{op} is only defined on indices")
        if op == "/" and ta == I64:
            raise LoweringError("use // for index division")
        self.__dict__["dtype"] = BOOL if op in _BOOL_RESULT else ta


@_node
@dataclass(frozen=True, eq=True)
class Select(Expr):
    cond: Expr
    a: Expr
    b: Expr

    def __post_init__(self):
        self.__dict__["dtype"] = self.a.dtype


# C's float trigonometric and hyperbolic functions beyond sin and cos (libm's / CUDA's, a few ulp; NaN outside
# their domain): each is also the registry op of its name
TRIG_FUNCS = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")
# the f32 functions ``call`` accepts: the one list; each backend's table implements every one of them
# (tests/lower/test_math_coverage.py)
MATH_FUNCS = (
    "exp",
    "exp88",  # e^x for x clamped to [-88, 88]: no denormal results, fewer operations (a tail's scale factor)
    "tanh",
    "sigmoid",
    "sqrt",
    "rsqrt",
    "abs",
    "gelu_tanh",
    "log",
    "sin",
    "cos",
    "log1p",
    "expm1",
    "floor",
    "ceil",
    "round",
    "fmod",
    *TRIG_FUNCS,
    "atan2",
    "power",
)


# integer division of values (not indices: any divisor, checked at run time), i64 in and out: floor (Python's
# // and %, the remainder taking the divisor's sign) or trunc (C's, the dividend's).  A zero divisor gives
# quotient 0 and remainder the dividend; INT64_MIN / -1 wraps.  Neither traps (x86's idiv would).
# name -> (floor: rounds down, not toward zero; remainder: the remainder, not the quotient); the backends'
# tables spell each from these two facts
INT_FUNCS: dict[str, tuple[bool, bool]] = {
    "floordiv": (True, False),
    "floormod": (True, True),
    "truncdiv": (False, False),
    "truncmod": (False, True),
}


@_node
@dataclass(frozen=True, eq=True)
class Call(Expr):
    """A pure math function: an f32 one of ``MATH_FUNCS`` (``fmod``: C's fmodf, ``atan2``: C's atan2f(y, x)
    and ``power``: powf(x, y) take two arguments), or an i64 one of ``INT_FUNCS``."""

    fn: str
    args: tuple[Expr, ...]
    dtype: str = field(default=F32, repr=False)

    def __post_init__(self):
        if self.fn in INT_FUNCS:
            object.__setattr__(self, "dtype", I64)
        elif self.fn not in MATH_FUNCS:
            raise LoweringError(f"unknown math function {self.fn!r}")
        if any(a.dtype != self.dtype for a in self.args):
            raise LoweringError(f"{self.fn} takes {self.dtype} arguments, got {[a.dtype for a in self.args]}")


@_node
@dataclass(frozen=True, eq=True)
class Cast(Expr):
    """``a`` converted to ``to``; to a half type (``HALF_TYPES``): rounded to it, the result an f32; to a stored
    integer (``INT_TYPES``): saturated to its range, the result an i64."""

    to: str
    a: Expr

    def __post_init__(self):
        self.__dict__["dtype"] = register_type(self.to)


@_node
@dataclass(frozen=True, eq=True)
class Load(Expr):
    buf: Buffer
    idx: tuple[Expr, ...]

    def __post_init__(self):
        self.__dict__["dtype"] = register_type(self.buf.dtype)


ExprLike = Expr | int | float


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
class LoopKind(StrEnum):
    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"
    BLOCKS = "blocks"  # GPU: one iteration per thread block (the grid), only a stage's outermost loop
    THREADS = "threads"  # GPU: one iteration per thread of the block, only directly inside a ``blocks`` loop


class Stmt(_Node):
    pass


@_node
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


@_node
@dataclass(frozen=True, eq=True)
class Store(Stmt):
    buf: Buffer
    idx: tuple[Expr, ...]
    value: Expr


@_node
@dataclass(frozen=True, eq=True)
class Seq(Stmt):
    stmts: tuple[Stmt, ...]


@_node
@dataclass(frozen=True, eq=True)
class If(Stmt):
    cond: Expr
    then: Stmt
    orelse: Stmt | None = None


@_node
@dataclass(frozen=True, eq=True)
class Allocate(Stmt):
    """Scratch buffer ``buf`` (scope "local") live within ``body``."""

    buf: Buffer
    body: Stmt


@_node
@dataclass(frozen=True, eq=True)
class Stage(Stmt):
    """A named region: what one graph node (or one step of it) computes.
    Schedules refer to stages by name (``compute_at``, ``inline``)."""

    name: str
    body: Stmt


@_node
@dataclass(frozen=True, eq=True)
class Intrinsic(Stmt):
    """A call to a backend-provided routine (made by ``tensorize``).
    ``args`` are expressions (i64) and buffers; the backend table knows the name."""

    name: str
    args: tuple[Expr | Buffer, ...]
    reads: tuple[Buffer, ...] = ()
    writes: tuple[Buffer, ...] = ()


def seq(*stmts: Stmt | None) -> Stmt:
    """The statements in order, nested ``Seq``s flattened and ``None`` (an absent optional part) dropped."""
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
