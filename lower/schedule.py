"""Schedules as data: recorded, replayable, printable loop transformations.

Each step is a frozen dataclass with ``apply(kernel) -> kernel``.  A step
checks its preconditions first and raises ``ScheduleError`` (a
``LoweringError``) explaining what is illegal instead of transforming.  A
``Schedule`` records the steps applied to a kernel; ``replay`` applies the
same steps to a fresh copy; ``str(schedule)`` prints them one per line.

Legality is checked on the loop IR itself: loop structure (perfect nesting,
extents that only depend on outer loops), and memory accesses.  Access
regions are boxes (per-dimension index intervals from interval arithmetic
over the loop ranges), which over-approximate what a loop reads or writes, so
"no conflict between boxes" is a sound test.  Where a condition quantifies
over iterations (``parallel``, ``compute_at``) it is checked on every
iteration for small loops and on a deterministic sample (ends, neighbours,
tails, middle) otherwise.

The default schedule for each op group is built from shapes in
``schedule_kernel`` (see the recipes at the end).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from lower.loop_ir import (Allocate, Bin, Buffer, Expr, FloatImm, For, If, IntImm, Intrinsic, Kernel, Load, LoopKind,
                           LoweringError, Range, Select, Seq, Stage, Stmt, Store, Var, bounds, emin, find_loop,
                           find_stage, flat_offset, free_vars, land, loads_of, loop_names, lt, map_expr, map_stmt, seq,
                           simplify, simplify_stmt, stmt_exprs, stores_of, substitute, walk_expr, walk_stmt)
from lower.printer import format_expr


class ScheduleError(LoweringError):
    """A schedule step is not applicable or would change the result."""


# ============================================================== helpers
def _fresh(body: Stmt, base: str) -> str:
    names = set(loop_names(body))
    if base not in names:
        return base
    k = 1
    while f"{base}{k}" in names:
        k += 1
    return f"{base}{k}"


def _need_loop(body: Stmt, name: str, step: str) -> For:
    lp = find_loop(body, name)
    if lp is None:
        raise ScheduleError(f"{step}: no loop named '{name}' (loops: {', '.join(loop_names(body)) or 'none'})")
    return lp


def replace_loop(body: Stmt, name: str, fn: Callable[[For], Stmt]) -> Stmt:
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
            return [body] + p
    return None


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


# ------------------------------------------------------------ access regions
Box = tuple[Range, ...]


def collapse_index(idx: Sequence[Expr], shape: Sequence[int]) -> tuple[tuple[Expr, ...], tuple[int, ...]]:
    """Merge adjacent dims indexed as ``(e // s, e % s)`` with ``shape[d+1] == s`` into one dim ``e``.

    Boxes of such delinearised indices (a GEMM's fused spatial column ``j`` in a
    conv output ``[.., j // OW, j % OW]``) would otherwise cover whole rows."""
    idx, shape = list(idx), list(shape)
    d = 0
    while d + 1 < len(idx):
        a, b = idx[d], idx[d + 1]
        if (isinstance(a, Bin) and a.op == "//" and isinstance(b, Bin) and b.op == "%" and a.a == b.a
                and a.b == b.b and isinstance(a.b, IntImm) and a.b.value == shape[d + 1]):
            idx[d:d + 2] = [a.a]
            shape[d:d + 2] = [shape[d] * shape[d + 1]]
            d = max(0, d - 1)
            continue
        d += 1
    return tuple(idx), tuple(shape)


def _box(idx: Sequence[Expr], ranges: dict[str, Range], shape: Sequence[int]) -> Box:
    idx, shape = collapse_index(idx, shape)
    out = []
    for e, n in zip(idx, shape):
        b = bounds(e, ranges)
        out.append(b if b is not None else (0, n - 1))
    return tuple(out)


def accesses(s: Stmt, fixed: dict[str, Range]) -> tuple[dict[str, list[Box]], dict[str, list[Box]]]:
    """(reads, writes) of global buffers in ``s`` as boxes, given ranges of enclosing loops."""
    reads: dict[str, list[Box]] = {}
    writes: dict[str, list[Box]] = {}
    local: set[str] = set()

    def rd(e: Expr, ranges):
        for ld in loads_of(e):
            if ld.buf.scope != "local" and ld.buf.name not in local:
                reads.setdefault(ld.buf.name, []).append(_box(ld.idx, ranges, ld.buf.shape))

    def go(st: Stmt, ranges: dict[str, Range]) -> None:
        if isinstance(st, For):
            rd(st.extent, ranges)
            b = bounds(st.extent, ranges)
            r2 = dict(ranges)
            if b is not None and b[1] <= 0:
                return
            r2[st.var.name] = (0, max(0, (b[1] if b else 1 << 40) - 1))
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
                reads.setdefault(b.name, []).append(tuple((0, n - 1) for n in b.shape))
            for b in st.writes:
                writes.setdefault(b.name, []).append(tuple((0, n - 1) for n in b.shape))
    go(s, dict(fixed))
    return _merge(reads), _merge(writes)


def _overlap(a: Box, b: Box) -> bool:
    if len(a) != len(b):  # the same buffer seen through different collapsings: assume the worst
        return True
    return all(x[0] <= y[1] and y[0] <= x[1] for x, y in zip(a, b))


def _conflict(r1, w1, r2, w2) -> str | None:
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


def _points(loops_: list[For], base: dict[str, Range], limit: int = POINT_BUDGET) -> list[dict[str, Range]]:
    """Sampled iteration points (as point ranges) of nested loops, outermost first, in execution order;
    at most about ``limit`` points in all."""
    per = max(4, int(round(limit ** (1 / max(1, len(loops_))))))
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
    """One bounding box per buffer (per index rank): a sound over-approximation, and fast to compare."""
    out: dict[str, list[Box]] = {}
    for name, bs in boxes.items():
        by_rank: dict[int, Box] = {}
        for b in bs:
            cur = by_rank.get(len(b))
            by_rank[len(b)] = b if cur is None else tuple((min(x[0], y[0]), max(x[1], y[1])) for x, y in zip(cur, b))
        out[name] = list(by_rank.values())
    return out


# ============================================================== steps
@dataclass(frozen=True)
class Step:
    def apply(self, k: Kernel) -> Kernel:  # pragma: no cover - abstract
        raise NotImplementedError

    def __str__(self) -> str:
        args = ", ".join(repr(getattr(self, f)) for f in self.__dataclass_fields__)
        return f"{type(self).__name__.lower()}({args})"


@dataclass(frozen=True)
class Split(Step):
    """Split a loop by a constant factor; a non-dividing factor gives a tail extent.

    before::                         after split("i", 4), extent 10::

        for i in 0..10 {                 for i.o in 0..3 {
          out[i] = x[i]                    for i.i in 0..min(4, 10 - i.o * 4) {
        }                                    out[i.o * 4 + i.i] = x[i.o * 4 + i.i]
                                           }
                                         }
    """

    loop: str
    factor: int

    def apply(self, k: Kernel) -> Kernel:
        lp = _need_loop(k.body, self.loop, "split")
        if not isinstance(self.factor, int) or self.factor < 1:
            raise ScheduleError(f"split({self.loop!r}): factor must be a positive integer, got {self.factor!r}")
        on, inn = _fresh(k.body, f"{self.loop}.o"), _fresh(k.body, f"{self.loop}.i")
        f = self.factor
        o, i = Var(on), Var(inn)

        def fn(s: For) -> Stmt:
            ext = s.extent
            body = substitute(s.body, {s.var.name: o * f + i})
            if isinstance(ext, IntImm) and ext.value % f == 0:
                oe, ie = IntImm(ext.value // f), IntImm(f)
            else:
                oe = simplify((ext + (f - 1)) // f)
                ie = emin(IntImm(f), ext - o * f)
            ok = s.kind if s.kind is LoopKind.PARALLEL else LoopKind.SERIAL
            ik = s.kind if s.kind in (LoopKind.VECTORIZED, LoopKind.UNROLLED) else LoopKind.SERIAL
            return For(o, oe, For(i, ie, body, ik), ok)
        return k.with_body(simplify_stmt(replace_loop(k.body, self.loop, fn)))


def _chain(top: For) -> list[For]:
    """The perfect nest starting at ``top`` (each loop's body is exactly the next loop)."""
    out = [top]
    while isinstance(out[-1].body, For):
        out.append(out[-1].body)
    return out


def _check_body_reorderable(body: Stmt, vars_: set[str], step: str) -> None:
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
                raise ScheduleError(f"{step}: {st.buf.name} is written at [{', '.join(map(format_expr, st.idx))}] "
                                    f"but read at [{', '.join(map(format_expr, ld.idx))}]: "
                                    "iterations depend on each other")
        if not reads:
            used = set().union(*[free_vars(e) for e in st.idx]) if st.idx else set()
            missing = vars_ - used
            if missing:
                raise ScheduleError(f"{step}: every iteration of {sorted(missing)} overwrites the same element of "
                                    f"{st.buf.name}; the last write would change")


@dataclass(frozen=True)
class Reorder(Step):
    """Permute loops of one perfect nest (listed outermost first).

    before::                          after reorder("i", "k", "j")::

        for i in 0..M {                  for i in 0..M {
          for j in 0..N {                  for k in 0..K {
            for k in 0..K {                  for j in 0..N {
              C[i, j] = C[i, j] + ...          C[i, j] = C[i, j] + ...

    Refused when the loops are not perfectly nested, when an extent would
    depend on a loop moved inside it, or when iterations depend on each other.
    """

    loops: tuple[str, ...]

    def apply(self, k: Kernel) -> Kernel:
        names = list(self.loops)
        if len(set(names)) != len(names) or len(names) < 2:
            raise ScheduleError(f"reorder{tuple(names)}: give at least two distinct loops")
        found = [_need_loop(k.body, n, "reorder") for n in names]
        # the outermost listed loop is the one whose chain contains the others
        top = None
        for f in found:
            ch = [x.var.name for x in _chain(f)]
            if all(n in ch for n in names):
                top = f
                break
        if top is None:
            raise ScheduleError(f"reorder{tuple(names)}: loops are not perfectly nested in one chain "
                                "(some other statement sits between them)")
        chain = _chain(top)
        cnames = [x.var.name for x in chain]
        last = max(cnames.index(n) for n in names)
        chain = chain[:last + 1]
        cnames = cnames[:last + 1]
        positions = sorted(cnames.index(n) for n in names)
        new_order = list(chain)
        by_name = {x.var.name: x for x in chain}
        for pos, n in zip(positions, names):
            new_order[pos] = by_name[n]
        inner_body = chain[-1].body
        seen: set[str] = set()
        outer_vars = set()
        for lp in new_order:
            dep = free_vars(lp.extent) & set(cnames)
            if not dep <= seen:
                raise ScheduleError(f"reorder{tuple(names)}: extent of loop {lp.var.name} "
                                    f"({format_expr(lp.extent)}) depends on {sorted(dep - seen)}, "
                                    "which would be inside it")
            seen.add(lp.var.name)
        moved = {n for n in cnames[positions[0]:] }
        _check_body_reorderable(inner_body, moved, f"reorder{tuple(names)}")
        body = inner_body
        for lp in reversed(new_order):
            body = For(lp.var, lp.extent, body, lp.kind)
        return k.with_body(replace_loop(k.body, chain[0].var.name, lambda s: body))


@dataclass(frozen=True)
class Fuse(Step):
    """Fuse two perfectly nested loops into one.

    before::                          after fuse("i", "j") (j has constant extent 8)::

        for i in 0..4 {                  for i.j in 0..32 {
          for j in 0..8 {                  out[i.j // 8, i.j % 8] = ...
            out[i, j] = ...
    """

    outer: str
    inner: str

    def apply(self, k: Kernel) -> Kernel:
        o = _need_loop(k.body, self.outer, "fuse")
        i = _need_loop(k.body, self.inner, "fuse")
        if not (isinstance(o.body, For) and o.body.var.name == self.inner):
            raise ScheduleError(f"fuse({self.outer!r}, {self.inner!r}): {self.inner} is not the only statement "
                                f"in {self.outer}'s body")
        if self.outer in free_vars(i.extent):
            raise ScheduleError(f"fuse({self.outer!r}, {self.inner!r}): the extent of {self.inner} depends on "
                                f"{self.outer}")
        if not isinstance(i.extent, IntImm):
            raise ScheduleError(f"fuse({self.outer!r}, {self.inner!r}): inner extent must be constant")
        name = _fresh(k.body, f"{self.outer}.{self.inner}")
        f = Var(name)
        n = i.extent.value
        body = substitute(i.body, {self.outer: f // n, self.inner: f % n})
        new = For(f, simplify(o.extent * n), body, o.kind)
        return k.with_body(simplify_stmt(replace_loop(k.body, self.outer, lambda s: new)))


def _check_vectorizable(lp: For, step: str) -> None:
    if any(isinstance(s, For) and s.kind is not LoopKind.UNROLLED for s in walk_stmt(lp.body)):
        raise ScheduleError(f"{step}: loop {lp.var.name} is not innermost (it contains other loops)")
    if any(isinstance(s, (Intrinsic, Allocate)) for s in walk_stmt(lp.body)):
        raise ScheduleError(f"{step}: loop {lp.var.name} contains an intrinsic or an allocation")
    if lp.kind is LoopKind.PARALLEL:
        raise ScheduleError(f"{step}: loop {lp.var.name} is already parallel")
    for st in stores_of(lp.body):
        for ld in loads_of(lp.body):
            if ld.buf.name == st.buf.name and ld.idx != st.idx:
                raise ScheduleError(f"{step}: {st.buf.name} is written at [{', '.join(map(format_expr, st.idx))}] "
                                    f"and read at [{', '.join(map(format_expr, ld.idx))}] in loop {lp.var.name}: "
                                    "iterations are not independent")


@dataclass(frozen=True)
class Vectorize(Step):
    """Run an innermost loop with SIMD lanes (``vectorized`` kind; the backend emits vector code).

    before::                          after vectorize("j")::

        for j in 0..N {                  vectorized for j in 0..N {
          out[i, j] = x[i, j] * 2.0        out[i, j] = x[i, j] * 2.0

    Refused for loops that contain loops, or whose iterations depend on each
    other through memory (reductions into one element are allowed).
    """

    loop: str

    def apply(self, k: Kernel) -> Kernel:
        lp = _need_loop(k.body, self.loop, "vectorize")
        _check_vectorizable(lp, f"vectorize({self.loop!r})")
        return k.with_body(replace_loop(k.body, self.loop,
                                        lambda s: For(s.var, s.extent, s.body, LoopKind.VECTORIZED)))


@dataclass(frozen=True)
class Unroll(Step):
    """Replicate a loop body for each iteration (constant extent, at most 64).

    before::                          after unroll("kw")::

        for kw in 0..3 {                 unrolled for kw in 0..3 {
          acc = acc + x[ow + kw]           acc = acc + x[ow + kw]
    """

    loop: str
    max_extent: int = 64

    def apply(self, k: Kernel) -> Kernel:
        lp = _need_loop(k.body, self.loop, "unroll")
        if not isinstance(lp.extent, IntImm):
            raise ScheduleError(f"unroll({self.loop!r}): extent {format_expr(lp.extent)} is not constant")
        if lp.extent.value > self.max_extent:
            raise ScheduleError(f"unroll({self.loop!r}): extent {lp.extent.value} > {self.max_extent}")
        return k.with_body(replace_loop(k.body, self.loop,
                                        lambda s: For(s.var, s.extent, s.body, LoopKind.UNROLLED)))


def root_loop_of(body: Stmt) -> For | None:
    while isinstance(body, (Stage, Allocate)) or (isinstance(body, Seq) and len(body.stmts) == 1):
        body = body.body if not isinstance(body, Seq) else body.stmts[0]
    return body if isinstance(body, For) else None


@dataclass(frozen=True)
class Parallel(Step):
    """Run the kernel's outermost loop on several threads (``parallel`` kind).

    before::                          after parallel("i")::

        for i in 0..64 {                 parallel for i in 0..64 {
          for j in 0..N {                  for j in 0..N {
            out[i, j] = ...                  out[i, j] = ...

    Only the root loop of the kernel can be parallel (the runtime splits its
    range); its extent must be constant, and different iterations must write
    disjoint elements of every (non-local) buffer and not read what others write.
    """

    loop: str

    def apply(self, k: Kernel) -> Kernel:
        lp = _need_loop(k.body, self.loop, "parallel")
        step = f"parallel({self.loop!r})"
        root = root_loop_of(k.body)
        if root is not lp:
            raise ScheduleError(f"{step}: only the kernel's outermost loop can be parallel "
                                f"(root is {root.var.name if root else 'not a single loop'})")
        if not isinstance(lp.extent, IntImm):
            raise ScheduleError(f"{step}: extent must be constant")
        if any(isinstance(s, Intrinsic) for s in walk_stmt(lp.body)):
            raise ScheduleError(f"{step}: cannot analyse the writes of a tensorized intrinsic; "
                                "mark parallel before tensorize")
        pts = _points([lp], {})
        acc = [accesses(lp.body, p) for p in pts]
        for a, b in itertools.combinations(range(len(pts)), 2):
            c = _conflict(acc[a][0], acc[a][1], acc[b][0], acc[b][1])
            if c:
                va, vb = pts[a][self.loop][0], pts[b][self.loop][0]
                raise ScheduleError(f"{step}: iterations {va} and {vb} both touch the same elements of {c} "
                                    "(one of them writing)")
        return k.with_body(replace_loop(k.body, self.loop,
                                        lambda s: For(s.var, s.extent, s.body, LoopKind.PARALLEL)))


# ------------------------------------------------------------ stage-level steps
def _top_stmts(body: Stmt) -> list[Stmt]:
    body = _unwrap(body)[1]
    return list(body.stmts) if isinstance(body, Seq) else [body]


def _unwrap(body: Stmt) -> tuple[list[Buffer], Stmt]:
    """Kernel-level ``local`` allocations around the body, and what they wrap."""
    bufs = []
    while isinstance(body, Allocate):
        bufs.append(body.buf)
        body = body.body
    return bufs, body


def _rewrap(bufs: list[Buffer], body: Stmt) -> Stmt:
    for b in reversed(bufs):
        body = Allocate(b, body)
    return body


def _perfect_prefix(s: Stmt, n: int) -> tuple[list[For], Stmt] | None:
    loops_ = []
    while len(loops_) < n:
        if not isinstance(s, For):
            return None
        loops_.append(s)
        s = s.body
    return loops_, s


@dataclass(frozen=True)
class ComputeAt(Step):
    """Move a whole top-level stage into another nest, at ``loop``, computing per iteration.

    The stage's outer loops must match (same extents) the loops from the other
    nest's root down to ``loop``; they are merged.  A producer (stage before
    the nest) goes at the start of ``loop``'s body, a consumer at its end.

    before::                          after compute_at("scale", "i")::

        // stage scale                   for i in 0..R {
        for i2 in 0..R {                   // stage scale
          for j2 in 0..N {                 for j2 in 0..N {
            t[i2, j2] = x[i2, j2] * 2.0      t[i, j2] = x[i, j2] * 2.0
        // stage add                       }
        for i in 0..R {                    // stage add
          for j in 0..N {                  for j in 0..N {
            out[i, j] = t[i, j] + 1.0        out[i, j] = t[i, j] + 1.0

    Refused when an iteration of one side would then run before an
    iteration of the other that it depends on (checked on access boxes).
    """

    stage: str
    loop: str

    def apply(self, k: Kernel) -> Kernel:
        step = f"compute_at({self.stage!r}, {self.loop!r})"
        tops = _top_stmts(k.body)
        si = [n for n, s in enumerate(tops) if isinstance(s, Stage) and s.name == self.stage]
        if not si:
            raise ScheduleError(f"{step}: no top-level stage named {self.stage!r}")
        p_idx = si[0]
        P = tops[p_idx]
        lp = _need_loop(k.body, self.loop, "compute_at")
        t_idx = next((n for n, s in enumerate(tops) if enclosing(s, lp) is not None), None)
        if t_idx is None or t_idx == p_idx:
            raise ScheduleError(f"{step}: loop {self.loop} must be in a different top-level statement")
        T = tops[t_idx]
        chain = enclosing(T, lp)
        path = [s for s in chain if isinstance(s, For)]
        for a, b in zip(path, path[1:]):
            if a.body is not b:
                raise ScheduleError(f"{step}: loops down to {self.loop} must be perfectly nested "
                                    f"({a.var.name} has other statements)")
        if not isinstance(chain[0], For) and not (isinstance(chain[0], Stage) and chain[1] is path[0]):
            raise ScheduleError(f"{step}: {self.loop} must be reached from the root of its nest through loops only")
        pp = _perfect_prefix(P.body, len(path))
        if pp is None:
            raise ScheduleError(f"{step}: stage {self.stage} does not start with {len(path)} nested loops")
        p_loops, p_rest = pp
        sub: dict[str, Expr] = {}
        for a, b in zip(p_loops, path):
            if substitute(a.extent, sub) != b.extent:
                raise ScheduleError(f"{step}: loop {a.var.name} (extent {format_expr(a.extent)}) does not match "
                                    f"{b.var.name} (extent {format_expr(b.extent)})")
            sub[a.var.name] = b.var
        moved = Stage(P.name, substitute(p_rest, sub))
        producer = p_idx < t_idx
        between = tops[min(p_idx, t_idx) + 1:max(p_idx, t_idx)]
        if between:
            r0, w0 = accesses(seq(*between), {})
            rp, wp = accesses(P, {})
            c = _conflict(rp, wp, r0, w0)
            if c:
                raise ScheduleError(f"{step}: statements between the stage and the nest also use {c}")
        # per-iteration conflict check on sampled points of the shared loops
        pts = _points(path, {})
        t_acc = []
        p_acc = []
        for p in pts:
            t_acc.append(accesses(_below(T, lp), p))
            p_acc.append(accesses(moved.body, p))
        for a, b in itertools.product(range(len(pts)), repeat=2):
            if a == b:
                continue
            la = tuple(pts[a][x.var.name][0] for x in path)
            lb = tuple(pts[b][x.var.name][0] for x in path)
            # producer: T(lb) now runs before P(la) when lb < la; consumer: P(la) before T(lb) when la < lb
            if (producer and lb < la) or (not producer and la < lb):
                c = _conflict(p_acc[a][0], p_acc[a][1], t_acc[b][0], t_acc[b][1])
                if c:
                    raise ScheduleError(f"{step}: iteration {la} of {self.stage} and iteration {lb} of the nest "
                                        f"both touch {c}; computing per iteration would change the result")

        def fn(s: For) -> Stmt:
            return For(s.var, s.extent, seq(moved, s.body) if producer else seq(s.body, moved), s.kind)
        new_t = replace_loop(T, self.loop, fn)
        new_tops = [new_t if n == t_idx else s for n, s in enumerate(tops) if n != p_idx]
        return k.with_body(_rewrap(_unwrap(k.body)[0], seq(*new_tops)))


def _below(T: Stmt, lp: For) -> Stmt:
    """The body of ``lp`` inside T with ``lp``'s own variable bound by the point ranges."""
    return lp.body


def inline_stage(body: Stmt, stage: str) -> Stmt:
    """Substitute a pure elementwise stage into its readers and drop it (see ``Inline``)."""
    tops = _top_stmts(body)
    si = [n for n, s in enumerate(tops) if isinstance(s, Stage) and s.name == stage]
    step = f"inline({stage!r})"
    if not si:
        raise ScheduleError(f"{step}: no top-level stage named {stage!r}")
    P = tops[si[0]]
    loops_: list[For] = []
    s = P.body
    while isinstance(s, For):
        loops_.append(s)
        s = s.body
    if not isinstance(s, Store):
        raise ScheduleError(f"{step}: the stage is not a perfect loop nest around a single store")
    if any(ld.buf.name == s.buf.name for ld in loads_of(s.value)):
        raise ScheduleError(f"{step}: the stage reads its own output (a reduction)")
    vs = [lp.var.name for lp in loops_]
    idx_names = [e.name if isinstance(e, Var) else None for e in s.idx]
    if None in idx_names or sorted(idx_names) != sorted(vs):
        raise ScheduleError(f"{step}: the store index [{', '.join(map(format_expr, s.idx))}] must be exactly the "
                            "loop variables")
    if any(not isinstance(lp.extent, IntImm) or lp.extent.value != s.buf.shape[idx_names.index(lp.var.name)]
           for lp in loops_):
        raise ScheduleError(f"{step}: the loops do not cover {s.buf.name} exactly")
    X = s.buf
    rest = [t for n, t in enumerate(tops) if n != si[0]]
    for n, t in enumerate(tops[:si[0]]):
        if any(ld.buf.name == X.name for ld in loads_of(t)):
            raise ScheduleError(f"{step}: {X.name} is read before the stage computes it")
    for t in rest:
        if any(st.buf.name == X.name for st in stores_of(t)):
            raise ScheduleError(f"{step}: {X.name} is also written elsewhere")
    value = s.value

    def fe(e: Expr) -> Expr | None:
        if isinstance(e, Load) and e.buf.name == X.name:
            return substitute(value, {nm: ix for nm, ix in zip(idx_names, e.idx)})
        return None
    return simplify_stmt(_rewrap(_unwrap(body)[0], seq(*[map_stmt(t, None, fe) for t in rest])))


@dataclass(frozen=True)
class Inline(Step):
    """Compute a pure elementwise stage inside its readers instead of storing it.

    before::                          after inline("relu1")::

        // stage relu1                   // stage add2
        for i in 0..N {                  for i in 0..N {
          t[i] = max(x[i], 0.0)            out[i] = max(x[i], 0.0) + y[i]
        // stage add2
        for i in 0..N {
          out[i] = t[i] + y[i]

    Refused for reductions, stages that do not write each element exactly
    once through their loop variables, and buffers written elsewhere.
    """

    stage: str

    def apply(self, k: Kernel) -> Kernel:
        return k.with_body(inline_stage(k.body, self.stage))


def _operand(store: Store, buf: str, step: str) -> Expr:
    """The factor of the store's product that reads ``buf``; ``"#0"``/``"#1"``: the left/right factor of the
    product in ``C[x] = C[x] + a * b``."""
    if buf.startswith("#"):
        v = store.value
        if not (isinstance(v, Bin) and v.op == "+" and isinstance(v.b, Bin) and v.b.op == "*"):
            raise ScheduleError(f"{step}: the store is not an accumulation of a product")
        return (v.b.a, v.b.b)[int(buf[1:])]
    cands = []
    for e in walk_expr(store.value):
        if isinstance(e, Bin) and e.op == "*":
            for f in (e.a, e.b):
                if any(ld.buf.name == buf for ld in loads_of(f)):
                    cands.append(f)
    cands = [c for c in cands if not any(c is not d and any(x is c for x in walk_expr(d)) for d in cands)]
    if not cands:
        raise ScheduleError(f"{step}: the stage's store has no product factor reading {buf}")
    return cands[0]


@dataclass(frozen=True)
class Pack(Step):
    """Copy an operand of a stage into a packed buffer laid out by ``layout`` loops.

    ``at`` is the loop at whose start the copy is made (None: once, before
    everything; if the operand only reads constants the runtime then does it at
    compile time).  Loops with a tail extent are padded with zeros, so the
    packed panel always has full, constant extents (branch-free: padded lanes
    evaluate the operand at the last valid index and select 0).

    before::                                  after pack("mm", "B", "k.o", ("j.o", "k.i", "j.i"), "Bp")::

        for k.o ... {                            for k.o ... {
          for j.o ... {                            // stage mm.pack_Bp
            for k.i ... {                          for j.o.p, k.i.p, j.i.p: Bp[...] = B[k.o*KC+k.i.p, ...]
              for j.i ... {                        for j.o ... {
                C[i, j] += A[i, k] * B[k, j]         for k.i ... { for j.i ... {
                                                       C[i, j] += A[i, k] * Bp[j.o, k.i, j.i]

    Refused when the operand depends on loops neither in ``layout`` nor
    enclosing ``at``, or when its source is written inside the kernel.
    """

    stage: str
    buffer: str
    at: str | None
    layout: tuple[str, ...]
    name: str
    min_sizes: tuple[int, ...] = ()  # pad layout dims to at least these extents (e.g. NR lanes)

    def apply(self, k: Kernel) -> Kernel:
        step = f"pack({self.stage!r}, {self.buffer!r})"
        st_node = find_stage(k.body, self.stage)
        if st_node is None:
            raise ScheduleError(f"{step}: no stage named {self.stage!r}")
        if self.buffer.startswith("#"):
            stores = [s for s in stores_of(st_node) if isinstance(s.value, Bin) and s.value.op == "+"
                      and isinstance(s.value.b, Bin) and s.value.b.op == "*"
                      and any(ld.buf.name == s.buf.name for ld in loads_of(s.value.a))]
        else:
            stores = [s for s in stores_of(st_node) if any(ld.buf.name == self.buffer for ld in loads_of(s.value))]
        if len(stores) != 1:
            raise ScheduleError(f"{step}: expected one store reading {self.buffer}, found {len(stores)}")
        store = stores[0]
        operand = _operand(store, self.buffer, step)
        path = enclosing(k.body, store) or []
        loops_here = [s for s in path if isinstance(s, For)]
        names_here = [lp.var.name for lp in loops_here]
        if self.at is not None and self.at not in names_here:
            raise ScheduleError(f"{step}: loop {self.at!r} does not enclose the operand")
        at_pos = names_here.index(self.at) if self.at is not None else -1
        outside = set(names_here[:at_pos + 1])
        inside = names_here[at_pos + 1:]
        for v in self.layout:
            if v not in inside:
                raise ScheduleError(f"{step}: layout loop {v!r} is not inside {self.at or 'the kernel'} around "
                                    "the operand")
        need = free_vars(operand)
        stray = need - outside - set(self.layout)
        if stray:
            raise ScheduleError(f"{step}: the operand depends on loops {sorted(stray)} that are neither in the "
                                "layout nor outside the pack point")
        srcs = {ld.buf.name for ld in loads_of(operand)}
        written = {s.buf.name for s in stores_of(k.body)}
        if srcs & written:
            raise ScheduleError(f"{step}: the operand reads {sorted(srcs & written)}, which this kernel writes")
        by_name = {lp.var.name: lp for lp in loops_here}
        ranges = outer_ranges(k.body, store)
        shape = []
        for v in self.layout:
            b = bounds(by_name[v].extent, ranges)
            if b is None:
                raise ScheduleError(f"{step}: extent of {v} is unbounded")
            shape.append(max(1, b[1]))
        for d, m in enumerate(self.min_sizes):
            shape[d] = max(shape[d], m)
        scope = "local" if self.at is not None else "global"
        P = Buffer(self.name, tuple(shape), scope=scope)
        pvars = {v: Var(_fresh(k.body, v + ".p")) for v in self.layout}
        val = substitute(operand, {v: pv for v, pv in pvars.items()})
        # Dims given a min size (the micro-kernel's NR lanes) are padded with zeros, branch-free so the copy
        # vectorizes: the operand is evaluated at the last valid index (loads stay in bounds) and a select
        # zeroes the lane.  Other dims iterate their true (possibly tail) extent: nothing reads past it.
        conds, clamp, exts = [], {}, {}
        psub = {u: pv for u, pv in pvars.items()}
        for d, v in enumerate(self.layout):
            ext = substitute(by_name[v].extent, psub)
            stray_e = free_vars(ext) - outside - {pvars[u].name for u in self.layout}
            if stray_e:
                raise ScheduleError(f"{step}: extent of {v} depends on {sorted(stray_e)}")
            n = shape[d]
            padded = d < len(self.min_sizes) and self.min_sizes[d] > 1
            if bounds(ext, {}) == (n, n) or not padded:
                exts[v] = ext
                continue
            exts[v] = IntImm(n)
            conds.append(lt(pvars[v], ext))
            clamp[pvars[v].name] = emin(pvars[v], ext - 1)
        idx = tuple(pvars[v] for v in self.layout)
        if conds:
            val = Select(land(*conds), substitute(val, clamp), FloatImm(0.0))
        body: Stmt = Store(P, idx, val)
        for v in reversed(self.layout):
            body = For(pvars[v], exts[v], body)
        pack_stage = Stage(f"{self.stage}.pack_{self.name}", body)
        new_load = Load(P, tuple(Var(v) for v in self.layout))

        def fs(s: Stmt) -> Stmt | None:
            if isinstance(s, Store) and s == store:
                return Store(s.buf, s.idx, map_expr(s.value, lambda e: new_load if e == operand else None))
            return None
        newbody = map_stmt(k.body, fs)
        if self.at is None:
            newbody = seq(pack_stage, newbody)
            params = list(k.params) + [P]
        else:
            newbody = replace_loop(newbody, self.at,
                                   lambda s: For(s.var, s.extent, seq(pack_stage, s.body), s.kind))
            newbody = Allocate(P, newbody)
            params = list(k.params)
        out = Kernel(k.name, params, simplify_stmt(newbody), dict(k.meta))
        if self.at is None:
            out.meta.setdefault("scratch", []).append(P.name)
        return out


# ------------------------------------------------------------ tensorize
@dataclass(frozen=True)
class GemmIntrinsic:
    """``C[m x n] += A[m x kc] * B[kc x NR panel]`` for m <= MR, n <= NR (registers: MR x NR/16 zmm)."""

    mr: int = 8
    nr: int = 32

    @property
    def name(self) -> str:
        return f"gemm_{self.mr}x{self.nr}"


@dataclass(frozen=True)
class Tensorize(Step):
    """Replace a (i, j, k) multiply-accumulate nest by the GEMM micro-kernel.

    before::                                   after tensorize("i.i", mr=8, nr=32)::

        for i.i in 0..8 {                         gemm_8x32(A, a_off, lda, Bp, b_off, C, c_off, ldc, kc, m, n)
          for j.i in 0..32 {
            for k.i in 0..KC {
              C[..] = C[..] + A[..] * Bp[..]

    The nest must be exactly three perfectly nested loops around one
    ``C[x] = C[x] + A * B`` store, with extents at most (MR, NR, any); C and A
    must be affine in them with unit stride along j (C) and k (A); B must be a
    packed panel (unit stride along j, stride NR along k, padded to NR lanes).
    """

    loop: str
    mr: int = 8
    nr: int = 32

    def apply(self, k: Kernel) -> Kernel:
        step = f"tensorize({self.loop!r})"
        li = _need_loop(k.body, self.loop, "tensorize")
        pp = _perfect_prefix(li, 3)
        if pp is None or not isinstance(pp[1], Store):
            raise ScheduleError(f"{step}: expected three perfectly nested loops around one store")
        (L1, L2, L3), st = pp
        ranges = outer_ranges(k.body, li)
        b1 = bounds(L1.extent, ranges)
        r2 = dict(ranges, **{L1.var.name: (0, b1[1] - 1 if b1 else 0)})
        b2 = bounds(L2.extent, r2)
        if b1 is None or b1[1] > self.mr or b2 is None or b2[1] > self.nr:
            raise ScheduleError(f"{step}: extents must be at most ({self.mr}, {self.nr}), got "
                                f"({format_expr(L1.extent)}, {format_expr(L2.extent)})")
        v = st.value
        if not (isinstance(v, Bin) and v.op == "+" and isinstance(v.a, Load) and v.a.buf == st.buf
                and v.a.idx == st.idx and isinstance(v.b, Bin) and v.b.op == "*"
                and isinstance(v.b.a, Load) and isinstance(v.b.b, Load)):
            raise ScheduleError(f"{step}: the store is not C[x] = C[x] + A[..] * B[..]: {format_expr(v)}")
        iv, jv, kv = L1.var.name, L2.var.name, L3.var.name
        names = {iv, jv, kv}
        for lp in (L2, L3):
            if free_vars(lp.extent) & names:
                raise ScheduleError(f"{step}: extent of {lp.var.name} depends on the tensorized loops")

        def form(buf: Buffer, idx) -> tuple[dict[str, int], Expr]:
            f = affine_in(flat_offset(buf, idx), names)
            if f is None:
                raise ScheduleError(f"{step}: {buf.name}[{', '.join(map(format_expr, idx))}] is not affine in "
                                    f"({iv}, {jv}, {kv})")
            return f
        C = st.buf
        cf, coff = form(C, st.idx)
        if cf.get(jv) != 1 or cf.get(kv, 0) != 0 or (cf.get(iv, 0) <= 0 and b1[1] > 1):
            raise ScheduleError(f"{step}: C must have unit stride along {jv}, none along {kv} (got {cf})")
        ldc = cf.get(iv, 0)
        A = B = None
        for x, y in ((v.b.a, v.b.b), (v.b.b, v.b.a)):
            xf, yf = form(x.buf, x.idx), form(y.buf, y.idx)
            if (yf[0].get(jv) == 1 and yf[0].get(kv) == self.nr and yf[0].get(iv, 0) == 0
                    and xf[0].get(kv) == 1 and xf[0].get(jv, 0) == 0):
                A, af, B, bf = x, xf, y, yf
                break
        if A is None:
            raise ScheduleError(f"{step}: need A with unit stride along {kv} and a packed B panel "
                                f"(unit stride along {jv}, stride {self.nr} along {kv})")
        if B.buf.shape[-1] != self.nr or B.buf.strides is not None:
            raise ScheduleError(f"{step}: B ({B.buf.name}) must be a packed panel buffer with {self.nr} lanes")
        lda = af[0].get(iv, 0)
        intr = Intrinsic(f"gemm_{self.mr}x{self.nr}",
                         (A.buf, af[1], IntImm(lda), B.buf, bf[1], C, coff, IntImm(ldc),
                          L3.extent, L1.extent, L2.extent),
                         reads=(A.buf, B.buf, C), writes=(C,))
        return k.with_body(replace_loop(k.body, self.loop, lambda s: intr))


# ============================================================== schedule record
@dataclass
class Schedule:
    """The steps applied to a kernel, in order.  ``s.split("i", 4).vectorize("i.i")``."""

    kernel: Kernel
    steps: list[Step] = field(default_factory=list)

    def apply(self, step: Step) -> "Schedule":
        self.kernel = step.apply(self.kernel)
        self.steps.append(step)
        return self

    def split(self, loop: str, factor: int) -> "Schedule":
        return self.apply(Split(loop, factor))

    def reorder(self, *loops: str) -> "Schedule":
        return self.apply(Reorder(tuple(loops)))

    def fuse(self, outer: str, inner: str) -> "Schedule":
        return self.apply(Fuse(outer, inner))

    def vectorize(self, loop: str) -> "Schedule":
        return self.apply(Vectorize(loop))

    def parallel(self, loop: str) -> "Schedule":
        return self.apply(Parallel(loop))

    def unroll(self, loop: str) -> "Schedule":
        return self.apply(Unroll(loop))

    def compute_at(self, stage: str, loop: str) -> "Schedule":
        return self.apply(ComputeAt(stage, loop))

    def inline(self, stage: str) -> "Schedule":
        return self.apply(Inline(stage))

    def pack(self, stage: str, buffer: str, at: str | None, layout: Sequence[str], name: str,
             min_sizes: Sequence[int] = ()) -> "Schedule":
        return self.apply(Pack(stage, buffer, at, tuple(layout), name, tuple(min_sizes)))

    def tensorize(self, loop: str, mr: int = 8, nr: int = 32) -> "Schedule":
        return self.apply(Tensorize(loop, mr, nr))

    def replay(self, kernel: Kernel) -> Kernel:
        for s in self.steps:
            kernel = s.apply(kernel)
        return kernel

    def __str__(self) -> str:
        return "\n".join(str(s) for s in self.steps) or "(no steps)"


def last_loop_name(k: Kernel) -> str:
    return loop_names(k.body)[-1]
