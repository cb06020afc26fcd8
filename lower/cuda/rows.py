"""The grid of a ``block_rows`` stage (``schedule.gpu_steps.BlockRows``): one block per row.

Every thread of the block holds the row's scalars (softmax's max and sum, layernorm's mean and
rstd) in registers and runs the row's stores; a column loop ``for c in 0..n`` runs as
``for (c = threadIdx.x; c < n; c += threads)``.  A reduction ``acc = op(acc, e)`` in a column loop
accumulates a per-thread partial from the identity, combines the partials with warp shuffles
(``__shfl_xor_sync``, a butterfly, so every lane ends with the warp's value) and one shared-memory
slot per warp (each warp then reduces all slots the same way: every thread gets the same row
value, bit for bit), and finally ``acc = op(acc, partial)``::

    float red0 = 0.0f;
    for (long long j = threadIdx.x; j < 96; j += 128) { red0 = (red0 + b_x[...]); }
    red0 = eqsat_block_add(red0, red_sh, 4);
    l_mean[0] = (l_mean[0] + red0);

Stores to global memory outside column loops are made by thread 0 only; a barrier follows every
column loop that stores to global memory and every such store, so later statements may read what any thread wrote.
"""

from __future__ import annotations

from typing import Any

from lower.cuda import tables as T
from lower.ir import Bin, Buffer, For, IntImm, Seq, Stmt, Store, bounds, simplify
from lower.schedule.gpu_steps import WARP, reduction_of, row_plan
from rewrite.ir.errors import CodegenError, ScheduleError

IDENTITY = {"+": "0.0f", "max": "__int_as_float(0xff800000)", "min": "__int_as_float(0x7f800000)"}
COMBINE = {"+": "add", "max": "max", "min": "min"}


def _combine(op: str, a: str, b: str) -> str:
    return f"({a} + {b})" if op == "+" else f"{'fmaxf' if op == 'max' else 'fminf'}({a}, {b})"


def emit_block_rows(fe: Any, threads: int, row: For) -> tuple[int, int]:
    """Emit the body of the ``__global__`` function of a block-per-row stage; returns (grid, block)."""
    kname = fe.k.name
    try:
        plan = row_plan(row, "codegen")
    except ScheduleError as err:  # the step checked this; only a later rewrite could break it
        raise CodegenError(f"kernel {kname}: block_rows stage: {err}") from None
    grid = simplify(row.extent, {})
    if not isinstance(grid, IntImm):
        raise CodegenError(f"kernel {kname}: block_rows needs a constant row count")
    nwarps = threads // WARP
    fe.mod.need("block_reduce")
    e = fe.emit
    r = fe.fresh(row.var.name, "")
    e(f"const long long {r} = blockIdx.x;")
    fe.env[row.var.name], fe.ranges[row.var.name] = r, (0, grid.value - 1)
    sh = fe.fresh("red_sh", "")
    e(f"__shared__ float {sh}[{WARP}];")
    for b in plan.scalars:
        name = fe.fresh(b.name, "l_")
        e(f"{T.TYPES[b.dtype]} {name}[1];")
        fe.ptrs[b.name] = name
    for n, s in enumerate(plan.body):
        last = n == len(plan.body) - 1  # no barrier needed after the row's last statement
        if isinstance(s, Store):
            if s.buf in plan.scalars:
                fe.stmt(s)
            else:
                e("if (threadIdx.x == 0) {")
                fe.block(s)
                e("}")
                if not last:
                    e("__syncthreads();")
            continue
        assert isinstance(s, For)
        _column_loop(fe, s, threads, nwarps, sh, set(plan.scalars), last)
    return grid.value, threads


def _column_loop(fe: Any, lp: For, threads: int, nwarps: int, sh: str, scalars: set[Buffer], last: bool) -> None:
    e = fe.emit
    stmts: list[Stmt] = list(lp.body.stmts) if isinstance(lp.body, Seq) else [lp.body]
    reds: list[tuple[Store, str, str]] = []  # (store, op, partial's name)
    for x in stmts:
        assert isinstance(x, Store)
        red = reduction_of(x, lp.var.name)
        if red is not None:
            name = fe.fresh(f"red_{x.buf.name}", "")
            e(f"float {name} = {IDENTITY[red[0]]};")
            reds.append((x, red[0], name))
    c = fe.fresh(lp.var.name, "")
    hi = _upper(fe, lp)
    e(f"for (long long {c} = threadIdx.x; {c} < {fe.expr(simplify(lp.extent, fe.ranges))}; {c} += {threads}) {{")
    fe.env[lp.var.name], fe.ranges[lp.var.name] = c, (0, max(0, hi - 1))
    fe.depth += 1
    by_store = {id(x): (op, name) for x, op, name in reds}
    for x in stmts:
        assert isinstance(x, Store)
        if id(x) in by_store:
            op, name = by_store[id(x)]
            v = x.value
            assert isinstance(v, Bin)
            e(f"{name} = {_combine(op, name, fe.expr(v.b))};")
        else:
            fe.stmt(x)
    fe.depth -= 1
    e("}")
    del fe.env[lp.var.name], fe.ranges[lp.var.name]
    for x, op, name in reds:
        e(f"{name} = eqsat_block_{COMBINE[op]}({name}, {sh}, {nwarps});")
        update = fe.store(x.buf, x.idx, _combine(op, fe.load(x.buf, x.idx), name))
        e(update if x.buf in scalars else f"if (threadIdx.x == 0) {update}")
    if not last and any(x.buf not in scalars for x in stmts if isinstance(x, Store)):
        e("__syncthreads();")


def _upper(fe: Any, lp: For) -> int:
    b = bounds(lp.extent, fe.ranges)
    if b is None:
        raise CodegenError(f"kernel {fe.k.name}: column loop {lp.var.name} has no bounded extent")
    return b[1]


__all__ = ["emit_block_rows"]
