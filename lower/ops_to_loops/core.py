"""The pieces every lowering shares: ``LowerCtx``, the ``LOWERINGS`` table and ``@lowering``, loop variables."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from lower.ir import (
    F32,
    Buffer,
    Expr,
    IntImm,
    Load,
    Stage,
    Stmt,
    Store,
    Var,
    emax,
    emin,
    loops,
    map_expr,
    simplify_stmt,
    substitute,
)
from rewrite.ir.errors import LoweringError
from rewrite.ir.graph import Node
from rewrite.ir.ops import OPS, Group

NEG_INF = float("-inf")


class Namer:
    """Unique loop-variable and buffer names within one kernel."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def name(self, base: str) -> str:
        if base not in self.used:
            self.used.add(base)
            return base
        k = 1
        while f"{base}_{k}" in self.used:
            k += 1
        self.used.add(f"{base}_{k}")
        return f"{base}_{k}"

    def var(self, base: str) -> Var:
        return Var(self.name(base))


@dataclass
class GemmInfo:
    """Roles of the loops of a contraction stage (see module docstring)."""

    stage: str
    init_stage: str
    batch: list[str]
    i: str
    j: str
    k: str
    out: str  # output buffer name
    m: int
    n: int
    kdim: int
    a_buf: str  # buffer the A operand loads (for packing decisions)
    b_buf: str
    init_vars: list[Var] = field(default_factory=list)  # loops of the init stage: batch..., i, j
    init_extents: list[int] = field(default_factory=list)
    c_index: tuple[Expr, ...] = ()  # output index over init_vars
    post: list[str] = field(default_factory=list)  # stages in (batch, i, j) coordinates run after the update
    direct: bool = False  # a direct convolution (see lower_conv2d), not the batch-GEMM form
    nr: int | None = None  # columns per micro-tile, when only that many are contiguous (a blocked output)
    kc: int | None = None  # the reduction's block, when A is row-major in place only that far (a blocked input)
    # batch loops enclosing the update stage with a producer beside it, instead of the stage's own (``batch``
    # is then empty): the update is a GEMM per iteration of them, and they are the parallel root
    outer: list[str] = field(default_factory=list)


def stage_tag(op: str, k: int) -> str:
    """A lowered node's stage name (and its buffers' prefix): its op and its place in the kernel.  A kernel
    names its nodes and buffers by place, not by graph id, so two layers alike are one kernel text: one
    schedule (``lower.schedule.cache``) and one compiled object."""
    return f"{op}{k}"


@dataclass(frozen=True)
class PointwiseEpilogue:
    """Elementwise ops fused after a contraction whose lowering applies them itself (``FusionRole.CALL_EPILOGUE``):
    ``value`` is the last op's value at the output index ``vars``, in which the contraction's own element is
    ``Load(acc, vars)``; ``final`` is where it goes (its dtype, e.g. uint8, not the contraction's)."""

    final: Buffer
    vars: tuple[Var, ...]
    value: Expr
    acc: Buffer

    def store(self, elem: Expr, idx: Sequence[Expr]) -> Stmt:
        """``final[idx] = `` the chain applied to ``elem``, the contraction's element at ``idx``."""
        at = substitute(self.value, {v.name: e for v, e in zip(self.vars, idx, strict=True)})
        mine = self.acc.name
        return Store(
            self.final, tuple(idx), map_expr(at, lambda x: elem if isinstance(x, Load) and x.buf.name == mine else None)
        )


@dataclass
class LowerCtx:
    node: Node
    namer: Namer = field(default_factory=Namer)
    consts: dict[str, torch.Tensor] = field(default_factory=dict)  # known constant buffers, by buffer name
    new_consts: dict[str, torch.Tensor] = field(default_factory=dict)  # constants derived while lowering
    gemm: GemmInfo | None = None
    grid: bool = False  # the kernel runs as a grid of many threads: data-parallel forms (Backend.grid)
    threads: int = 1  # host threads the kernel runs on (a form whose parallel units are few may not fit)
    features: tuple[str, ...] = ()  # the target CPU's LLVM features (``+amx-int8``): forms its instructions allow
    epilogue: PointwiseEpilogue | None = None  # ops the node's lowering applies to its result as it stores it
    local: int | None = None  # the node's place in its kernel (``stage_tag``); None: its id in the graph

    @property
    def tag(self) -> str:
        return stage_tag(self.node.op, self.node.id if self.local is None else self.local)

    def var(self, base: str) -> Var:
        return self.namer.var(base)

    def error(self, msg: str) -> LoweringError:
        return LoweringError(f"{self.node.describe()}: {msg}")


LowerFn = Callable[[Node, list[Buffer], list[Buffer], LowerCtx], Stmt]
LOWERINGS: dict[str, LowerFn] = {}


def lowering(*ops: str) -> Callable[[LowerFn], LowerFn]:
    def deco(fn: LowerFn) -> LowerFn:
        for op in ops:
            LOWERINGS[op] = fn
        return fn

    return deco


def lower_node(node: Node, ins: Sequence[Buffer], outs: Sequence[Buffer], ctx: LowerCtx) -> Stmt:
    """The loop nest computing ``node``'s outputs from its inputs."""
    fn = LOWERINGS.get(node.op)
    if fn is None:
        raise LoweringError(f"{node.describe()}: no lowering for op '{node.op}'")
    for b, s in zip(list(ins) + list(outs), [None] * len(ins) + list(node.shapes), strict=False):
        if s is not None and tuple(b.shape) != tuple(s):
            raise LoweringError(f"{node.describe()}: buffer {b.name}{list(b.shape)} does not match shape {s}")
    try:
        return simplify_stmt(fn(node, list(ins), list(outs), ctx))
    except LoweringError as e:
        if node.describe() in str(e):
            raise
        raise LoweringError(f"{node.describe()}: {e}") from None


def loop_vars(ctx: LowerCtx, shape: Sequence[int], base: str = "i") -> list[Var]:
    return [ctx.var(f"{base}{d}") for d in range(len(shape))]


def bcast_index(in_shape: Sequence[int], out_shape: Sequence[int], vs: Sequence[Expr]) -> tuple[Expr, ...]:
    """Index of an input broadcast (equal ranks) to ``out_shape``."""
    return tuple(IntImm(0) if s == 1 and o != 1 else v for s, o, v in zip(in_shape, out_shape, vs, strict=False))


def copy_stage(ctx: LowerCtx, name: str, out: Buffer, src: Callable[[list[Var]], Expr]) -> Stmt:
    vs = loop_vars(ctx, out.shape)
    return Stage(name, loops(list(zip(vs, out.shape, strict=False)), Store(out, tuple(vs), src(vs))))


def unflatten(flat: Expr, shape: Sequence[int]) -> tuple[Expr, ...]:
    """Row-major multi-index of a flat offset."""
    idx = []
    for d in range(len(shape)):
        inner = math.prod(shape[d + 1 :])
        e = flat // inner if inner != 1 else flat
        idx.append(e % shape[d] if d > 0 else e)
    return tuple(idx)


def local_scalar(ctx: LowerCtx, base: str, dtype: str = F32) -> Buffer:
    return Buffer(ctx.namer.name(base), (1,), dtype, scope="local")


def clip(e: Expr, hi: int) -> Expr:
    """``e`` clamped into ``[0, hi]``: an index that never reads outside its buffer."""
    return emin(emax(e, 0), hi)


def check_coverage() -> list[str]:
    """Registry ops (other than sources) without a lowering: should be empty."""
    return [op for op, d in OPS.items() if d.group is not Group.SOURCE and op not in LOWERINGS]
