"""Readable text for loop IR (stable: used in docstrings, errors and snapshot tests).

>>> i = Var("i")
>>> format_expr((i + 1) * 4)
'(i + 1) * 4'
>>> print(format_nest(For(i, IntImm(4), Store(Buffer("o", (4,)), (i,), FloatImm(0.0)))))
for i in 0..4 {
  o[i] = 0.0
}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

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
    LoopKind,
    Select,
    Seq,
    Stage,
    Stmt,
    Store,
    Var,
)


class KernelLike(Protocol):
    """What ``format_kernel`` reads of a kernel (``lower.ir.kernel.Kernel``, which prints itself with it)."""

    @property
    def name(self) -> str: ...
    @property
    def params(self) -> Sequence[Buffer]: ...
    @property
    def body(self) -> Stmt: ...


_PREC = {
    "or": 1,
    "and": 2,
    "<": 3,
    "<=": 3,
    "==": 3,
    "!=": 3,
    ">": 3,
    ">=": 3,
    "+": 4,
    "-": 4,
    "*": 5,
    "/": 5,
    "//": 5,
    "%": 5,
}


def format_float(v: float) -> str:
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    r = repr(float(v))
    return r


def format_expr(e: Expr, prec: int = 0) -> str:
    if isinstance(e, Var):
        return e.name
    if isinstance(e, IntImm):
        return str(e.value) if e.value >= 0 or prec == 0 else f"({e.value})"
    if isinstance(e, FloatImm):
        return format_float(e.value)
    if isinstance(e, Load):
        return f"{e.buf.name}[{', '.join(format_expr(i) for i in e.idx)}]"
    if isinstance(e, Bin):
        if e.op in ("min", "max"):
            return f"{e.op}({format_expr(e.a)}, {format_expr(e.b)})"
        p = _PREC[e.op]
        s = f"{format_expr(e.a, p)} {e.op} {format_expr(e.b, p + 1)}"
        return f"({s})" if p < prec else s
    if isinstance(e, Select):
        return f"select({format_expr(e.cond)}, {format_expr(e.a)}, {format_expr(e.b)})"
    if isinstance(e, Call):
        return f"{e.fn}({', '.join(format_expr(a) for a in e.args)})"
    if isinstance(e, Cast):
        return f"{e.to}({format_expr(e.a)})"
    return repr(e)


def format_stmt(s: Stmt, indent: int = 0) -> list[str]:
    pad = "  " * indent
    if isinstance(s, For):
        kind = "" if s.kind is LoopKind.SERIAL else s.kind.value + " "
        head = f"{pad}{kind}for {s.var.name} in 0..{format_expr(s.extent)} {{"
        return [head, *format_stmt(s.body, indent + 1), pad + "}"]
    if isinstance(s, Store):
        return [f"{pad}{s.buf.name}[{', '.join(format_expr(i) for i in s.idx)}] = {format_expr(s.value)}"]
    if isinstance(s, Seq):
        out: list[str] = []
        for x in s.stmts:
            out += format_stmt(x, indent)
        return out
    if isinstance(s, If):
        out = [f"{pad}if {format_expr(s.cond)} {{", *format_stmt(s.then, indent + 1)]
        if s.orelse is not None:
            out += [pad + "} else {", *format_stmt(s.orelse, indent + 1)]
        return [*out, pad + "}"]
    if isinstance(s, Allocate):
        return [f"{pad}local {s.buf.name}: {s.buf.dtype}{list(s.buf.shape)}", *format_stmt(s.body, indent)]
    if isinstance(s, Stage):
        return [f"{pad}// stage {s.name}", *format_stmt(s.body, indent)]
    if isinstance(s, Intrinsic):
        args = ", ".join(a.name if isinstance(a, Buffer) else format_expr(a) for a in s.args)
        return [f"{pad}{s.name}({args})"]
    return [pad + repr(s)]


def format_buffer(b: Buffer) -> str:
    extra = ""
    if b.strides is not None or b.offset:
        extra = f" strides={list(b.elem_strides)}" + (f" offset={b.offset}" if b.offset else "")
    return f"{b.name}: {b.dtype}{list(b.shape)}{extra}"


def format_kernel(k: KernelLike) -> str:
    params = ", ".join(format_buffer(b) for b in k.params)
    return "\n".join([f"kernel {k.name}({params}) {{", *format_stmt(k.body, 1), "}"])


def format_nest(s: Stmt) -> str:
    return "\n".join(format_stmt(s))
