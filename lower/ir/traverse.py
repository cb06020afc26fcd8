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
    For,
    If,
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
        e = e if all(x is y for x, y in zip(args, e.args, strict=False)) else Call(e.fn, args)
    elif isinstance(e, Cast):
        a = map_expr(e.a, f)
        e = e if a is e.a else Cast(e.to, a)
    elif isinstance(e, Load):
        idx = tuple(map_expr(x, f) for x in e.idx)
        e = e if all(x is y for x, y in zip(idx, e.idx, strict=False)) else Load(e.buf, idx)
    r = f(e)
    return e if r is None else r


def walk_expr(e: Expr) -> Iterator[Expr]:
    yield e
    for c in expr_children(e):
        yield from walk_expr(c)


# ============================================================== statements
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


@overload
def substitute(node: Expr, mapping: Mapping[str, Expr]) -> Expr: ...
@overload
def substitute(node: Stmt, mapping: Mapping[str, Expr]) -> Stmt: ...
def substitute(node: Expr | Stmt, mapping: Mapping[str, Expr]) -> Expr | Stmt:
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
