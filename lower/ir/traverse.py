"""Traversal of loop IR: children, bottom-up rewriting, walks, substitution, and structural queries.

    >>> from lower.ir import Buffer, Store, Var, loops
    >>> body = loops([(Var("i"), 4), (Var("j"), 8)], Store(Buffer("o", (4, 8)), (Var("i"), Var("j")), 1.0))
    >>> loop_names(body), root_loop(body).var.name
    (['i', 'j'], 'i')

Rewrites (``map_expr``, ``map_stmt``) rebuild only what changed; queries walk
the tree in program order.  The kernel-level helpers at the end
(``top_stmts``, ``unwrap_locals``, ``rewrap_locals``) see through the
``local`` allocations that wrap a scheduled kernel's statements.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import overload

from lower.ir.nodes import (
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


# ============================================================== expressions
# The node kinds are a closed set without subclasses, so dispatch compares ``type(e)`` (an identity test)
# instead of walking an ``isinstance`` chain: these functions run millions of times lowering one model.
def expr_children(e: Expr) -> tuple[Expr, ...]:
    t = type(e)
    if t is Bin:
        return (e.a, e.b)  # type: ignore[attr-defined]
    if t is Load:
        return e.idx  # type: ignore[attr-defined]
    if t is Select:
        return (e.cond, e.a, e.b)  # type: ignore[attr-defined]
    if t is Call:
        return e.args  # type: ignore[attr-defined]
    if t is Cast:
        return (e.a,)  # type: ignore[attr-defined]
    return ()


def map_expr(e: Expr, f: Callable[[Expr], Expr | None]) -> Expr:
    """Bottom-up rewrite: ``f`` returns a replacement or None to keep the (rebuilt) node."""
    t = type(e)
    if t is Bin:
        assert isinstance(e, Bin)
        a, b = map_expr(e.a, f), map_expr(e.b, f)
        e = e if (a is e.a and b is e.b) else Bin(e.op, a, b)
    elif t is Load:
        assert isinstance(e, Load)
        idx = tuple([map_expr(x, f) for x in e.idx])
        e = e if all(x is y for x, y in zip(idx, e.idx, strict=False)) else Load(e.buf, idx)
    elif t is Select:
        assert isinstance(e, Select)
        c, a, b = map_expr(e.cond, f), map_expr(e.a, f), map_expr(e.b, f)
        e = e if (c is e.cond and a is e.a and b is e.b) else Select(c, a, b)
    elif t is Call:
        assert isinstance(e, Call)
        args = tuple([map_expr(x, f) for x in e.args])
        e = e if all(x is y for x, y in zip(args, e.args, strict=False)) else Call(e.fn, args)
    elif t is Cast:
        assert isinstance(e, Cast)
        a = map_expr(e.a, f)
        e = e if a is e.a else Cast(e.to, a)
    r = f(e)
    return e if r is None else r


def walk_expr(e: Expr) -> Iterator[Expr]:
    """Every node of ``e``, parents before children, left to right."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        kids = expr_children(x)
        if kids:
            stack.extend(reversed(kids))


_LEAVES = (Var, IntImm, FloatImm)


def _expr_loads(e: Expr) -> tuple[Load, ...]:
    """The loads of ``e``'s subtree in ``walk_expr`` order, memoized on the node (see ``Expr``): the legality
    checks ask for them again after every schedule step, and a parallel step once per sampled iteration."""
    if type(e) in _LEAVES:
        return ()
    d = getattr(e, "__dict__", None)  # None: a bare number a caller left in an index (walked as a leaf)
    if d is None:
        return ()
    r = d.get("_loads")
    if r is None:
        r = (e,) if type(e) is Load else ()
        for c in expr_children(e):
            cl = _expr_loads(c)
            if cl:
                r = r + cl if r else cl
        d["_loads"] = r
    return r


def _expr_vars(e: Expr) -> frozenset[str]:
    """The loop variables ``e`` uses, memoized on the node like ``_expr_loads``."""
    t = type(e)
    if t is Var:
        return frozenset((e.name,))  # type: ignore[attr-defined]
    if t is IntImm or t is FloatImm:
        return _NO_VARS
    d = getattr(e, "__dict__", None)
    if d is None:
        return _NO_VARS
    r = d.get("_vars")
    if r is None:
        r = _NO_VARS
        for c in expr_children(e):
            r = r | _expr_vars(c)
        d["_vars"] = r
    return r


_NO_VARS: frozenset[str] = frozenset()


# ============================================================== statements
def map_stmt(
    s: Stmt, fs: Callable[[Stmt], Stmt | None] | None = None, fe: Callable[[Expr], Expr | None] | None = None
) -> Stmt:
    """Rewrite statements bottom-up (``fs``) and every expression in them (``fe``).

    A statement whose parts all come back unchanged is kept (not rebuilt): a schedule step rewrites one loop
    of a kernel through here, and rebuilding all the others was most of its time.  Kept statements are shared
    with the input tree, never within the result: one the input holds twice is rebuilt the second time."""
    return _map_stmt(s, fs, (lambda e: map_expr(e, fe)) if fe else None, set())


def _map_stmt(
    s: Stmt, fs: Callable[[Stmt], Stmt | None] | None, me: Callable[[Expr], Expr] | None, kept: set[int]
) -> Stmt:
    """``map_stmt`` with ``me`` rewriting a whole expression (None: keep them)."""
    t = type(s)
    out: Stmt = s
    if t is For:
        assert isinstance(s, For)
        ext = me(s.extent) if me else s.extent
        body = _map_stmt(s.body, fs, me, kept)
        if ext is not s.extent or body is not s.body or id(s) in kept:
            out = For(s.var, ext, body, s.kind)
    elif t is Store:
        assert isinstance(s, Store)
        if me:
            idx = tuple([me(i) for i in s.idx])
            value = me(s.value)
        else:
            idx, value = tuple(s.idx), s.value
        if value is not s.value or not _same(idx, s.idx) or id(s) in kept:
            out = Store(s.buf, idx, value)
    elif t is Seq:
        assert isinstance(s, Seq)
        stmts = tuple([_map_stmt(x, fs, me, kept) for x in s.stmts])
        if not _same(stmts, s.stmts) or id(s) in kept:
            out = Seq(stmts)
    elif t is If:
        assert isinstance(s, If)
        c = me(s.cond) if me else s.cond
        then = _map_stmt(s.then, fs, me, kept)
        orelse = _map_stmt(s.orelse, fs, me, kept) if s.orelse else None
        if c is not s.cond or then is not s.then or orelse is not s.orelse or id(s) in kept:
            out = If(c, then, orelse)
    elif t is Allocate or t is Stage:
        assert isinstance(s, (Allocate, Stage))
        body = _map_stmt(s.body, fs, me, kept)
        if body is not s.body or id(s) in kept:
            out = Allocate(s.buf, body) if isinstance(s, Allocate) else Stage(s.name, body)
    elif t is Intrinsic:
        assert isinstance(s, Intrinsic)
        args = tuple([me(a) if me and isinstance(a, Expr) else a for a in s.args])
        if not _same(args, s.args) or id(s) in kept:
            out = Intrinsic(s.name, args, s.reads, s.writes)
    if out is s:
        kept.add(id(s))
    if fs:
        r = fs(out)
        if r is not None:
            return r
    return out


def _same(new: tuple, old: tuple) -> bool:
    """Whether ``new`` holds the same objects as the field ``old`` (which must be a tuple already, as a
    rebuilt statement's would be)."""
    return new is old or (
        type(old) is tuple and len(new) == len(old) and all(x is y for x, y in zip(new, old, strict=True))
    )


def walk_stmt(s: Stmt) -> Iterator[Stmt]:
    """Every statement of ``s``, parents before children, in program order (a stack, not nested generators:
    a deep kernel otherwise pays each yield once per level)."""
    stack = [s]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, (For, Allocate, Stage)):
            stack.append(x.body)
        elif isinstance(x, Seq):
            stack.extend(reversed(x.stmts))
        elif isinstance(x, If):
            if x.orelse:
                stack.append(x.orelse)
            stack.append(x.then)


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
    """Every load in ``s``, in program order (``all_exprs`` / ``walk_expr`` order)."""
    return list(_expr_loads(s) if isinstance(s, Expr) else _stmt_loads(s))


def _stmt_loads(s: Stmt) -> tuple[Load, ...]:
    """``loads_of`` a statement, memoized on it like ``_expr_loads``."""
    d = getattr(s, "__dict__", None)
    if d is None:
        return ()
    r = d.get("_loads")
    if r is None:
        parts: list[tuple[Load, ...]] = []
        if isinstance(s, For):
            parts = [_expr_loads(s.extent), _stmt_loads(s.body)]
        elif isinstance(s, Store):
            parts = [*map(_expr_loads, s.idx), _expr_loads(s.value)]
        elif isinstance(s, Seq):
            parts = list(map(_stmt_loads, s.stmts))
        elif isinstance(s, If):
            parts = [_expr_loads(s.cond), _stmt_loads(s.then), _stmt_loads(s.orelse) if s.orelse else ()]
        elif isinstance(s, (Allocate, Stage)):
            parts = [_stmt_loads(s.body)]
        elif isinstance(s, Intrinsic):
            parts = [_expr_loads(a) for a in s.args if isinstance(a, Expr)]
        r = tuple(ld for p in parts for ld in p)
        d["_loads"] = r
    return r


def stores_of(s: Stmt) -> list[Store]:
    return [x for x in walk_stmt(s) if isinstance(x, Store)]


def free_vars(e: Expr) -> set[str]:
    return set(_expr_vars(e))


@overload
def substitute(node: Expr, mapping: Mapping[str, Expr]) -> Expr: ...
@overload
def substitute(node: Stmt, mapping: Mapping[str, Expr]) -> Stmt: ...
def substitute(node: Expr | Stmt, mapping: Mapping[str, Expr]) -> Expr | Stmt:
    """Replace loop variables by expressions in an Expr or a Stmt."""
    if isinstance(node, Expr):
        return _substitute(node, mapping)
    return _map_stmt(node, None, lambda e: _substitute(e, mapping), set())


def _substitute(e: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """``map_expr`` replacing the variables in ``mapping``, returning a subtree that uses none of them as it is
    (which ``map_expr`` would also do, after visiting every node of it)."""
    t = type(e)
    if t is Var:
        return mapping.get(e.name, e)  # type: ignore[attr-defined]
    if t is IntImm or t is FloatImm or _expr_vars(e).isdisjoint(mapping):
        return e
    if t is Bin:
        assert isinstance(e, Bin)
        a, b = _substitute(e.a, mapping), _substitute(e.b, mapping)
        return e if (a is e.a and b is e.b) else Bin(e.op, a, b)
    if t is Load:
        assert isinstance(e, Load)
        idx = tuple([_substitute(x, mapping) for x in e.idx])
        return e if all(x is y for x, y in zip(idx, e.idx, strict=False)) else Load(e.buf, idx)
    return map_expr(e, lambda x: mapping[x.name] if isinstance(x, Var) and x.name in mapping else None)


def find_loop(s: Stmt, name: str) -> For | None:
    """The first loop named ``name`` in program order."""
    return _loop_index(s)[1].get(name)


def loop_names(s: Stmt) -> list[str]:
    return list(_loop_index(s)[0])


def _loop_index(s: Stmt) -> tuple[tuple[str, ...], dict[str, For]]:
    """The names of the loops in ``s`` in program order, and the first loop of each name; memoized on the
    statement (read-only).  Every schedule step looks its loops up and picks fresh names, and a step keeps
    the statements it does not change (``map_stmt``)."""
    d = getattr(s, "__dict__", None)
    if d is None:
        return (), {}
    r = d.get("_loops")
    if r is None:
        names: tuple[str, ...] = ()
        first: dict[str, For] = {}
        if isinstance(s, For):
            names, first = (s.var.name,), {s.var.name: s}
        for kid in stmt_children(s):
            kn, kf = _loop_index(kid)
            if kn:
                names += kn
                first = {**kf, **first} if first else kf
        r = d["_loops"] = (names, first)
    return r


def stmt_children(s: Stmt) -> tuple[Stmt, ...]:
    """The statements directly inside ``s``."""
    if isinstance(s, (For, Allocate, Stage)):
        return (s.body,)
    if isinstance(s, Seq):
        return s.stmts
    if isinstance(s, If):
        return (s.then, s.orelse) if s.orelse else (s.then,)
    return ()


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


# ============================================================== structure
def replace_loop(body: Stmt, name: str, fn: Callable[[For], Stmt]) -> Stmt:
    """``body`` with the loop named ``name`` replaced by ``fn(loop)``."""

    def fs(s: Stmt) -> Stmt | None:
        if isinstance(s, For) and s.var.name == name:
            return fn(s)
        return None

    return map_stmt(body, fs)


def enclosing(body: Stmt, target: Stmt) -> list[Stmt] | None:
    """Statements from the root down to ``target`` (inclusive), by identity."""
    if body is target:
        return [body]
    kids: Iterable[Stmt] = ()
    if isinstance(body, (For, Allocate, Stage)):
        kids = (body.body,)
    elif isinstance(body, Seq):
        kids = body.stmts
    elif isinstance(body, If):
        kids = (body.then,) + ((body.orelse,) if body.orelse else ())
    for k in kids:
        p = enclosing(k, target)
        if p is not None:
            return [body, *p]
    return None


def root_loop(body: Stmt) -> For | None:
    """The kernel's outermost loop, through Stage/Allocate wrappers, if the body is one nest."""
    while isinstance(body, (Stage, Allocate)) or (isinstance(body, Seq) and len(body.stmts) == 1):
        body = body.body if not isinstance(body, Seq) else body.stmts[0]
    return body if isinstance(body, For) else None


def perfect_nest(top: For) -> list[For]:
    """The perfect nest starting at ``top`` (each loop's body is exactly the next loop)."""
    out = [top]
    while isinstance(out[-1].body, For):
        out.append(out[-1].body)
    return out


def perfect_prefix(s: Stmt, n: int) -> tuple[list[For], Stmt] | None:
    """The first ``n`` perfectly nested loops of ``s`` and what they wrap; None if there are fewer."""
    loops_: list[For] = []
    while len(loops_) < n:
        if not isinstance(s, For):
            return None
        loops_.append(s)
        s = s.body
    return loops_, s


# ------------------------------------------------------------ kernel-level statements
def unwrap_locals(body: Stmt) -> tuple[list[Buffer], Stmt]:
    """Kernel-level ``local`` allocations around the body, and what they wrap."""
    bufs = []
    while isinstance(body, Allocate):
        bufs.append(body.buf)
        body = body.body
    return bufs, body


def rewrap_locals(bufs: list[Buffer], body: Stmt) -> Stmt:
    """Undo ``unwrap_locals``: allocate ``bufs`` around ``body`` again."""
    for b in reversed(bufs):
        body = Allocate(b, body)
    return body


def top_stmts(body: Stmt) -> list[Stmt]:
    """The kernel's top-level statements (stages, mostly), inside its ``local`` allocations."""
    body = unwrap_locals(body)[1]
    return list(body.stmts) if isinstance(body, Seq) else [body]
