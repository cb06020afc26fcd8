"""Legality analysis for schedule steps: loop lookup, fresh names, and memory-access checks.

Legality is checked on the loop IR itself: loop structure (perfect nesting,
extents that only depend on outer loops), and memory accesses.  Access
regions are boxes (per-dimension index intervals from interval arithmetic
over the loop ranges), which over-approximate what a loop reads or writes, so
"no conflict between boxes" is a sound test.  Where a condition quantifies
over iterations (``parallel``, ``compute_at``) it is checked on every
iteration for small loops and on a deterministic sample (ends, neighbours,
tails, middle) otherwise.

    >>> from lower.ir import Buffer, Store, Var
    >>> i, x = Var("i"), Buffer("x", (8,))
    >>> reads, writes = accesses(Store(x, (i,), x[i] * 2.0), {"i": (2, 5)})
    >>> writes                       # (first, last, size) per dimension
    {'x': [((2, 5, 8),)]}

The steps that use these are in ``loop_steps`` and ``stage_steps``.
"""

from __future__ import annotations

from collections.abc import Sequence

from lower.ir import (
    Allocate,
    Bin,
    Expr,
    For,
    If,
    IntImm,
    Intrinsic,
    LoopKind,
    Range,
    Seq,
    Stage,
    Stmt,
    Store,
    bounds,
    find_loop,
    format_expr,
    free_vars,
    loads_of,
    loop_names,
    stmt_exprs,
    stores_of,
    walk_stmt,
)
from rewrite.ir.errors import ScheduleError


# ============================================================== lookups
def fresh_name(body: Stmt, base: str) -> str:
    """``base``, or ``base1``, ``base2``... : the first name no loop in ``body`` has."""
    names = set(loop_names(body))
    if base not in names:
        return base
    k = 1
    while f"{base}{k}" in names:
        k += 1
    return f"{base}{k}"


def need_loop(body: Stmt, name: str, step: str) -> For:
    """The loop named ``name``, or a ``ScheduleError`` for ``step`` listing the loops there are."""
    lp = find_loop(body, name)
    if lp is None:
        raise ScheduleError(f"{step}: no loop named '{name}' (loops: {', '.join(loop_names(body)) or 'none'})")
    return lp


# ------------------------------------------------------------ access regions
Box = tuple[tuple[int, int, int], ...]  # (first, last, size) per (collapsed) dimension


def collapse_index(idx: Sequence[Expr], shape: Sequence[int]) -> tuple[tuple[Expr, ...], tuple[int, ...]]:
    """Merge adjacent dims indexed as ``(e // s, e % s)`` with ``shape[d+1] == s`` into one dim ``e``.

    Boxes of such delinearised indices (a GEMM's fused spatial column ``j`` in a
    conv output ``[.., j // OW, j % OW]``) would otherwise cover whole rows."""
    idx, shape = list(idx), list(shape)
    d = 0
    while d + 1 < len(idx):
        a, b = idx[d], idx[d + 1]
        if (
            isinstance(a, Bin)
            and a.op == "//"
            and isinstance(b, Bin)
            and b.op == "%"
            and a.a == b.a
            and a.b == b.b
            and isinstance(a.b, IntImm)
            and a.b.value == shape[d + 1]
        ):
            idx[d : d + 2] = [a.a]
            shape[d : d + 2] = [shape[d] * shape[d + 1]]
            d = max(0, d - 1)
            continue
        d += 1
    return tuple(idx), tuple(shape)


def _box(idx: Sequence[Expr], ranges: dict[str, Range], shape: Sequence[int]) -> Box:
    idx, shape = collapse_index(idx, shape)
    out = []
    for e, n in zip(idx, shape, strict=False):
        b = bounds(e, ranges)
        lo, hi = b if b is not None else (0, n - 1)
        out.append((lo, hi, n))
    return tuple(out)


def accesses(s: Stmt, fixed: dict[str, Range]) -> tuple[dict[str, list[Box]], dict[str, list[Box]]]:
    """(reads, writes) of global buffers in ``s`` as boxes, given ranges of enclosing loops."""
    reads: dict[str, list[Box]] = {}
    writes: dict[str, list[Box]] = {}
    local: set[str] = set()

    def rd(e: Expr, ranges: dict[str, Range]) -> None:
        for ld in loads_of(e):
            if ld.buf.scope != "local" and ld.buf.name not in local:
                reads.setdefault(ld.buf.name, []).append(_box(ld.idx, ranges, ld.buf.shape))

    def go(st: Stmt, ranges: dict[str, Range]) -> None:
        if isinstance(st, For):
            rd(st.extent, ranges)
            ext = bounds(st.extent, ranges)
            r2 = dict(ranges)
            if ext is not None and ext[1] <= 0:
                return
            r2[st.var.name] = (0, max(0, (ext[1] if ext else 1 << 40) - 1))
            go(st.body, r2)
        elif isinstance(st, Store):
            for e in stmt_exprs(st):
                rd(e, ranges)
            if st.buf.scope != "local" and st.buf.name not in local:
                writes.setdefault(st.buf.name, []).append(_box(st.idx, ranges, st.buf.shape))
        elif isinstance(st, Seq):
            for x in st.stmts:
                go(x, ranges)
        elif isinstance(st, (Stage, Allocate)):
            if isinstance(st, Allocate):
                local.add(st.buf.name)
            go(st.body, ranges)
        elif isinstance(st, If):
            rd(st.cond, ranges)
            go(st.then, ranges)
            if st.orelse:
                go(st.orelse, ranges)
        elif isinstance(st, Intrinsic):
            # tensorized code: whole buffers (conservative)
            for b in st.reads:
                reads.setdefault(b.name, []).append(tuple((0, n - 1, n) for n in b.shape))
            for b in st.writes:
                writes.setdefault(b.name, []).append(tuple((0, n - 1, n) for n in b.shape))

    go(s, dict(fixed))
    return _merge(reads), _merge(writes)


def _overlap(a: Box, b: Box) -> bool:
    """Whether two boxes of one buffer may share an element, compared group by group: the fewest leading
    dimensions on each side that hold equally many elements span the same elements, so the flat intervals
    the two boxes cover there must meet.  Boxes of one collapsing compare dimension by dimension; those seen
    through different ones (a plane written through a fused ``(p // W, p % W)`` index, read row by row) on
    the dimensions both keep."""
    i = j = 0
    while i < len(a) and j < len(b):
        ga, gb = [a[i]], [b[j]]
        na, nb = a[i][2], b[j][2]
        i, j = i + 1, j + 1
        while na != nb:
            if na < nb and i < len(a):
                ga.append(a[i])
                na, i = na * a[i][2], i + 1
            elif nb < na and j < len(b):
                gb.append(b[j])
                nb, j = nb * b[j][2], j + 1
            else:
                return True
        (la, ha), (lb, hb) = _flat(ga), _flat(gb)
        if ha < lb or hb < la:
            return False
    return True


def _flat(group: list[tuple[int, int, int]]) -> tuple[int, int]:
    """The flat offsets (row-major within the group) a run of box dimensions can reach: first and last."""
    lo = hi = 0
    for first, last, size in group:
        lo, hi = lo * size + first, hi * size + last
    return lo, hi


def conflict(r1, w1, r2, w2) -> str | None:
    """A buffer both sides touch with at least one write, whose boxes overlap."""
    for name, wb in w1.items():
        for other in (r2.get(name, []), w2.get(name, [])):
            if any(_overlap(x, y) for x in wb for y in other):
                return name
    for name, wb in w2.items():
        if any(_overlap(x, y) for x in wb for y in r1.get(name, [])):
            return name
    return None


def _sample(n: int, limit: int = 24) -> list[int]:
    """Iterations to check: all if few, else both ends with their neighbours, the middle, and a stride."""
    if n <= limit:
        return list(range(n))
    pts = {0, 1, n - 2, n - 1}
    if limit >= 8:
        pts |= {2, n // 2 - 1, n // 2, n - 3}
    if limit > len(pts):
        step = max(1, n // (limit - len(pts)))
        pts.update(range(0, n, step))
    return sorted(p for p in pts if 0 <= p < n)


POINT_BUDGET = 48


def sample_points(loops_: list[For], base: dict[str, Range], limit: int = POINT_BUDGET) -> list[dict[str, Range]]:
    """Sampled iteration points (as point ranges) of nested loops, outermost first, in execution order;
    at most about ``limit`` points in all."""
    per = max(4, round(limit ** (1 / max(1, len(loops_)))))
    pts: list[dict[str, Range]] = [dict(base)]
    for lp in loops_:
        nxt = []
        for p in pts:
            b = bounds(lp.extent, p)
            n = b[1] if b else 0
            for v in _sample(n, per if len(loops_) > 1 else limit):
                q = dict(p)
                q[lp.var.name] = (v, v)
                nxt.append(q)
        pts = nxt
    return pts


def _merge(boxes: dict[str, list[Box]]) -> dict[str, list[Box]]:
    """One bounding box per buffer (per collapsed shape): a sound over-approximation, and fast to compare."""
    out: dict[str, list[Box]] = {}
    for name, bs in boxes.items():
        by_shape: dict[tuple[int, ...], Box] = {}
        for b in bs:
            key = tuple(x[2] for x in b)
            cur = by_shape.get(key)
            by_shape[key] = (
                b
                if cur is None
                else tuple((min(x[0], y[0]), max(x[1], y[1]), x[2]) for x, y in zip(cur, b, strict=False))
            )
        out[name] = list(by_shape.values())
    return out


# ------------------------------------------------------------ loop-structure checks
def check_reorderable(body: Stmt, vars_: set[str], step: str) -> None:
    """Iterations of the loops ``vars_`` may run in any order over ``body``: every buffer written is only
    read at the written index (a reduction or a pure assignment), and a pure assignment writes a
    distinct element per iteration."""
    if any(isinstance(s, Intrinsic) for s in walk_stmt(body)):
        raise ScheduleError(f"{step}: the loop body contains a tensorized intrinsic; reorder before tensorize")
    local = {s.buf.name for s in walk_stmt(body) if isinstance(s, Allocate)}
    for st in stores_of(body):
        if st.buf.scope == "local" or st.buf.name in local:
            continue
        reads = [ld for ld in loads_of(body) if ld.buf.name == st.buf.name]
        for ld in reads:
            if ld.idx != st.idx:
                raise ScheduleError(
                    f"{step}: {st.buf.name} is written at [{', '.join(map(format_expr, st.idx))}] "
                    f"but read at [{', '.join(map(format_expr, ld.idx))}]: "
                    "iterations depend on each other"
                )
        if not reads:
            used = set().union(*[free_vars(e) for e in st.idx]) if st.idx else set()
            missing = vars_ - used
            if missing:
                raise ScheduleError(
                    f"{step}: every iteration of {sorted(missing)} overwrites the same element of "
                    f"{st.buf.name}; the last write would change"
                )


def check_vectorizable(lp: For, step: str) -> None:
    if any(isinstance(s, For) and s.kind is not LoopKind.UNROLLED for s in walk_stmt(lp.body)):
        raise ScheduleError(f"{step}: loop {lp.var.name} is not innermost (it contains other loops)")
    if any(isinstance(s, (Intrinsic, Allocate)) for s in walk_stmt(lp.body)):
        raise ScheduleError(f"{step}: loop {lp.var.name} contains an intrinsic or an allocation")
    if lp.kind is LoopKind.PARALLEL:
        raise ScheduleError(f"{step}: loop {lp.var.name} is already parallel")
    for st in stores_of(lp.body):
        for ld in loads_of(lp.body):
            if ld.buf.name == st.buf.name and ld.idx != st.idx:
                raise ScheduleError(
                    f"{step}: {st.buf.name} is written at [{', '.join(map(format_expr, st.idx))}] "
                    f"and read at [{', '.join(map(format_expr, ld.idx))}] in loop {lp.var.name}: "
                    "iterations are not independent"
                )
