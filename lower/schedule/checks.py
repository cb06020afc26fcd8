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

import bisect
from collections.abc import Sequence

from lower.ir import (
    Allocate,
    Bin,
    Expr,
    For,
    If,
    IntImm,
    Intrinsic,
    Load,
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
    linear_form,
    loads_of,
    loop_names,
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


# A loop split with a tail, ``for v in 0..min(F, N - a*F)`` (or ``0..N - a*F``), bounds ``a*F + v`` by ``N - 1``;
# interval arithmetic bounds each term alone and overshoots by the last tile's missing part (64 rows in tiles of 6:
# 0..65).  ``Cap`` is that relation, ``sum(coeffs[u] * u) <= last``, for the loops around an access.
Cap = tuple[dict[str, int], int]


def _cap(v: str, extent: Expr) -> Cap | None:
    """The relation ``v``'s extent puts on ``v`` and the loops it depends on, or None (a constant extent, a form
    not affine)."""
    if isinstance(extent, Bin) and extent.op == "min":
        sides = [x for x in (extent.a, extent.b) if not isinstance(x, IntImm)]
        if len(sides) != 1:
            return None
        extent = sides[0]
    lf = linear_form(extent)
    if lf is None or not lf[0] or v in lf[0]:
        return None
    coeffs = {u: -c for u, c in lf[0].items()}
    coeffs[v] = 1
    return coeffs, lf[1] - 1


def _terms(e: Expr, sign: int, out: list[tuple[int, Expr]]) -> None:
    """``e`` as a signed sum of terms (``+`` and ``-`` flattened)."""
    if isinstance(e, Bin) and e.op in ("+", "-"):
        _terms(e.a, sign, out)
        _terms(e.b, sign if e.op == "+" else -sign, out)
    else:
        out.append((sign, e))


def _split_sum(e: Expr) -> tuple[dict[str, int], int, tuple[tuple[int, Expr], ...]]:
    """``e`` as ``sum(coeffs[u] * u) + c`` plus its signed terms that are not affine; memoized on the node (the
    legality checks ask it for every access box, many times)."""
    d = e.__dict__ if isinstance(e, Bin) else {}
    r = d.get("_split_sum")
    if r is None:
        terms: list[tuple[int, Expr]] = []
        _terms(e, 1, terms)
        coeffs: dict[str, int] = {}
        c = 0
        other: list[tuple[int, Expr]] = []
        for sign, t in terms:
            lf = linear_form(t)
            if lf is None:
                other.append((sign, t))
                continue
            for u, k in lf[0].items():
                coeffs[u] = coeffs.get(u, 0) + sign * k
            c += sign * lf[1]
        r = d["_split_sum"] = ({u: k for u, k in coeffs.items() if k}, c, tuple(other))
    return r


def _capped_hi(e: Expr, ranges: dict[str, Range], caps: Sequence[Cap], hi: int) -> int:
    """``hi`` (``e``'s interval bound) lowered by a cap whose terms ``e`` holds with the same coefficients; the
    other terms (a fused parallel loop's ``v // G`` among them) bounded alone."""
    coeffs, c, other = _split_sum(e)
    held = [(cap, last) for cap, last in caps if all(coeffs.get(u) == k for u, k in cap.items())]
    if not held:
        return hi
    rest_other = 0
    for sign, t in other:
        b = bounds(t, ranges)
        if b is None:
            return hi
        rest_other += sign * (b[1] if sign > 0 else b[0])
    for cap, last in held:
        rest = c + last + rest_other
        for u, k in coeffs.items():
            if u in cap:
                continue
            r = ranges.get(u)
            if r is None:
                break
            rest += k * (r[1] if k > 0 else r[0])
        else:
            hi = min(hi, rest)
    return hi


def _box(idx: Sequence[Expr], ranges: dict[str, Range], shape: Sequence[int], caps: Sequence[Cap] = ()) -> Box:
    idx, shape = collapse_index(idx, shape)
    out = []
    for e, n in zip(idx, shape, strict=False):
        b = bounds(e, ranges)
        lo, hi = b if b is not None else (0, n - 1)
        if caps and b is not None:
            hi = _capped_hi(e, ranges, caps, hi)
        out.append((lo, hi, n))
    return tuple(out)


def accesses(s: Stmt, fixed: dict[str, Range]) -> tuple[dict[str, list[Box]], dict[str, list[Box]]]:
    """(reads, writes) of global buffers in ``s`` as boxes, given ranges of enclosing loops."""
    reads: dict[str, list[Box]] = {}
    writes: dict[str, list[Box]] = {}
    local: set[str] = set()
    caps: list[Cap] = []  # the relations of the enclosing loops' extents (``_cap``)

    def rd(e: Expr | Stmt, ranges: dict[str, Range]) -> None:
        for ld in loads_of(e):
            if ld.buf.scope != "local" and ld.buf.name not in local:
                reads.setdefault(ld.buf.name, []).append(_box(ld.idx, ranges, ld.buf.shape, caps))

    def go(st: Stmt, ranges: dict[str, Range]) -> None:
        if isinstance(st, For):
            rd(st.extent, ranges)
            ext = bounds(st.extent, ranges)
            if ext is not None and ext[1] <= 0:
                return
            name = st.var.name
            outer = ranges.get(name)
            ranges[name] = (0, max(0, (ext[1] if ext else 1 << 40) - 1))  # for the body only
            cap = None if isinstance(st.extent, IntImm) else _cap(name, st.extent)
            if cap is not None:
                caps.append(cap)
            go(st.body, ranges)
            if cap is not None:
                caps.pop()
            if outer is None:
                del ranges[name]
            else:
                ranges[name] = outer
        elif isinstance(st, Store):
            rd(st, ranges)  # its indices' loads, then its value's
            if st.buf.scope != "local" and st.buf.name not in local:
                writes.setdefault(st.buf.name, []).append(_box(st.idx, ranges, st.buf.shape, caps))
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
    the dimensions both keep.

    Written as one loop over plain tuples: a parallel step compares the boxes of every pair of sampled
    iterations (180k comparisons for one MobileNetV2)."""
    i = j = 0
    n, m = len(a), len(b)
    while i < n and j < m:
        la, ha, na = a[i]
        lb, hb, nb = b[j]
        i, j = i + 1, j + 1
        while na != nb:  # extend the smaller side's group; its flat interval is row-major within the group
            if na < nb and i < n:
                first, last, size = a[i]
                la, ha, na, i = la * size + first, ha * size + last, na * size, i + 1
            elif nb < na and j < m:
                first, last, size = b[j]
                lb, hb, nb, j = lb * size + first, hb * size + last, nb * size, j + 1
            else:
                return True
        if ha < lb or hb < la:
            return False
    return True


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


Accesses = tuple[dict[str, list[Box]], dict[str, list[Box]]]  # (reads, writes), as ``accesses`` returns them


def conflict_free(acc: Sequence[Accesses]) -> bool:
    """True when ``conflict`` finds nothing for any two of ``acc``; False when some pair may conflict (the
    caller then looks for it pair by pair, in its own order).  The per-pair checks of a parallel step's
    sampled iterations (a thousand pairs) were most of its time; here each written buffer's boxes are sorted
    by the flat interval they span, and only boxes whose intervals meet are compared.  Sound because two
    boxes of one buffer that ``_overlap`` (every group's intervals meet) share a flat offset, so their spans
    meet; boxes reaching past their buffer's bounds, or one name seen with two sizes, fall back to pairs."""
    for name in {n for _, w in acc for n in w}:
        writes: list[tuple[int, int, int, Box]] = []
        targets: list[tuple[int, int, int, Box]] = []  # what a write of another iteration must not meet
        size = None
        for p, (r, w) in enumerate(acc):
            for written, boxes in ((True, w.get(name, ())), (False, r.get(name, ()))):
                for box in boxes:
                    lo = hi = 0
                    n = 1
                    for first, last, dim in box:
                        if not 0 <= first <= last < dim:
                            return False
                        lo, hi, n = lo * dim + first, hi * dim + last, n * dim
                    if size is None:
                        size = n
                    elif n != size:
                        return False
                    targets.append((lo, hi, p, box))
                    if written:
                        writes.append((lo, hi, p, box))
        targets.sort(key=lambda t: t[0])
        firsts = [t[0] for t in targets]
        for lo, hi, p, box in writes:
            for _, thi, q, other in targets[: bisect.bisect_right(firsts, hi)]:
                if q != p and thi >= lo and _overlap(box, other):
                    return False
    return True


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
def _loads_by_buffer(body: Stmt) -> dict[str, list[Load]]:
    """The loads in ``body`` by buffer name, each list in program order: looked up per store, where the loop
    body's loads were once collected again for every store (most of a kernel's scheduling time)."""
    out: dict[str, list[Load]] = {}
    for ld in loads_of(body):
        out.setdefault(ld.buf.name, []).append(ld)
    return out


def check_reorderable(body: Stmt, vars_: set[str], step: str) -> None:
    """Iterations of the loops ``vars_`` may run in any order over ``body``: every buffer written is only
    read at the written index (a reduction or a pure assignment), and a pure assignment writes a
    distinct element per iteration."""
    if any(isinstance(s, Intrinsic) for s in walk_stmt(body)):
        raise ScheduleError(f"{step}: the loop body contains a tensorized intrinsic; reorder before tensorize")
    local = {s.buf.name for s in walk_stmt(body) if isinstance(s, Allocate)}
    loads = _loads_by_buffer(body)
    for st in stores_of(body):
        if st.buf.scope == "local" or st.buf.name in local:
            continue
        reads = loads.get(st.buf.name, [])
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
    loads = _loads_by_buffer(lp.body)
    for st in stores_of(lp.body):
        for ld in loads.get(st.buf.name, ()):
            if ld.idx != st.idx:
                raise ScheduleError(
                    f"{step}: {st.buf.name} is written at [{', '.join(map(format_expr, st.idx))}] "
                    f"and read at [{', '.join(map(format_expr, ld.idx))}] in loop {lp.var.name}: "
                    "iterations are not independent"
                )
