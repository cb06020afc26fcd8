"""Stage-level schedule steps: ``ComputeAt``, ``Inline`` and ``Pack``.

These move, substitute or copy whole top-level stages, as opposed to the
loop-level steps in ``loop_steps``; the contraction steps (``FoldInit``,
``Tensorize``) are in ``gemm_steps``.  Legality checks live in ``checks``.

    >>> str(ComputeAt("scale", "i"))
    "computeat('scale', 'i')"
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from lower.ir import (
    Allocate,
    Bin,
    Buffer,
    Expr,
    FloatImm,
    For,
    If,
    IntImm,
    Intrinsic,
    Kernel,
    Load,
    Select,
    Seq,
    Stage,
    Stmt,
    Store,
    Var,
    bounds,
    enclosing,
    find_loop,
    find_stage,
    format_expr,
    free_vars,
    ge,
    land,
    loads_of,
    lt,
    map_expr,
    map_stmt,
    outer_ranges,
    perfect_prefix,
    replace_loop,
    rewrap_locals,
    seq,
    simplify_stmt,
    stores_of,
    substitute,
    top_stmts,
    unwrap_locals,
    walk_expr,
    walk_stmt,
)
from lower.schedule.checks import accesses, conflict, fresh_name, need_loop, sample_points
from lower.schedule.loop_steps import Step
from rewrite.ir.errors import ScheduleError


@dataclass(frozen=True)
class ComputeAt(Step):
    """Move a whole top-level stage into another nest, at ``loop``, computing per iteration.

    The stage's outer loops must match (same extents) the loops from the other
    nest's root down to ``loop``; they are merged.  A producer (stage before
    the nest) goes at the start of ``loop``'s body, a consumer at its end.
    The loops on the way down may hold other statements (a slice filled per
    row beside the row's nest) that do not touch what the stage does.

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
        tops = top_stmts(k.body)
        si = [(n, s) for n, s in enumerate(tops) if isinstance(s, Stage) and s.name == self.stage]
        if not si:
            raise ScheduleError(f"{step}: no top-level stage named {self.stage!r}")
        p_idx, P = si[0]
        lp = need_loop(k.body, self.loop, "compute_at")
        t_idx = next((n for n, s in enumerate(tops) if enclosing(s, lp) is not None), None)
        if t_idx is None or t_idx == p_idx:
            raise ScheduleError(f"{step}: loop {self.loop} must be in a different top-level statement")
        T = tops[t_idx]
        chain = enclosing(T, lp)
        assert chain is not None  # t_idx was picked as the statement enclosing lp
        path = [s for s in chain if isinstance(s, For)]
        # statements beside the way down (a loop whose body is a local buffer and a sequence: a producer
        # computed per iteration beside the nest) must not touch what the stage does: it then runs after those
        # of its own and earlier iterations, and before later ones
        beside: list[Stmt] = []
        for a, b in itertools.pairwise(chain):
            if isinstance(a, Seq):
                beside += [x for x in a.stmts if x is not b]
            elif not isinstance(a, (For, Allocate, Stage)):
                raise ScheduleError(f"{step}: {self.loop} is inside a {type(a).__name__}")
        if beside:  # by buffer name, locals included (``accesses`` sees only global buffers)
            c = _shared_names(P, seq(*beside)) or conflict(*accesses(P, {}), *accesses(seq(*beside), {}))
            if c:
                raise ScheduleError(
                    f"{step}: loops down to {self.loop} hold other statements that also use {c} "
                    f"({path[0].var.name} is not a perfect nest)"
                )
        if not isinstance(chain[0], For) and not (isinstance(chain[0], Stage) and chain[1] is path[0]):
            raise ScheduleError(f"{step}: {self.loop} must be reached from the root of its nest through loops only")
        pp = perfect_prefix(P.body, len(path))
        if pp is None:
            raise ScheduleError(f"{step}: stage {self.stage} does not start with {len(path)} nested loops")
        p_loops, p_rest = pp
        sub: dict[str, Expr] = {}
        for a, b in zip(p_loops, path, strict=False):
            if substitute(a.extent, sub) != b.extent:
                raise ScheduleError(
                    f"{step}: loop {a.var.name} (extent {format_expr(a.extent)}) does not match "
                    f"{b.var.name} (extent {format_expr(b.extent)})"
                )
            sub[a.var.name] = b.var
        moved = Stage(P.name, substitute(p_rest, sub))
        producer = p_idx < t_idx
        between = tops[min(p_idx, t_idx) + 1 : max(p_idx, t_idx)]
        if between:
            r0, w0 = accesses(seq(*between), {})
            rp, wp = accesses(P, {})
            c = conflict(rp, wp, r0, w0)
            if c:
                raise ScheduleError(f"{step}: statements between the stage and the nest also use {c}")
        # per-iteration conflict check on sampled points of the shared loops
        pts = sample_points(path, {})
        t_acc = []
        p_acc = []
        for p in pts:
            t_acc.append(accesses(lp.body, p))
            p_acc.append(accesses(moved.body, p))
        for ia, ib in itertools.product(range(len(pts)), repeat=2):
            if ia == ib:
                continue
            la = tuple(pts[ia][x.var.name][0] for x in path)
            lb = tuple(pts[ib][x.var.name][0] for x in path)
            # producer: T(lb) now runs before P(la) when lb < la; consumer: P(la) before T(lb) when la < lb
            if (producer and lb < la) or (not producer and la < lb):
                c = conflict(p_acc[ia][0], p_acc[ia][1], t_acc[ib][0], t_acc[ib][1])
                if c:
                    raise ScheduleError(
                        f"{step}: iteration {la} of {self.stage} and iteration {lb} of the nest "
                        f"both touch {c}; computing per iteration would change the result"
                    )

        def fn(s: For) -> Stmt:
            return For(s.var, s.extent, seq(moved, s.body) if producer else seq(s.body, moved), s.kind)

        new_t = replace_loop(T, self.loop, fn)
        new_tops = [new_t if n == t_idx else s for n, s in enumerate(tops) if n != p_idx]
        return k.with_body(rewrap_locals(unwrap_locals(k.body)[0], seq(*new_tops)))


def _reads_writes(s: Stmt) -> tuple[set[str], set[str]]:
    """The names of the buffers ``s`` reads and writes, local ones and micro-kernel operands included."""
    reads, writes = {ld.buf.name for ld in loads_of(s)}, {st.buf.name for st in stores_of(s)}
    for x in walk_stmt(s):
        if isinstance(x, Intrinsic):
            reads |= {b.name for b in x.reads}
            writes |= {b.name for b in x.writes}
    return reads, writes


def _shared_names(a: Stmt, b: Stmt) -> str | None:
    """A buffer one side writes and the other reads or writes, by name; None when there is none."""
    (ra, wa), (rb, wb) = _reads_writes(a), _reads_writes(b)
    both = sorted((wa & (rb | wb)) | (wb & ra))
    return both[0] if both else None


def inline_stage(body: Stmt, stage: str) -> Stmt:
    """Substitute a pure elementwise stage into its readers and drop it (see ``Inline``)."""
    tops = top_stmts(body)
    si = [(n, s) for n, s in enumerate(tops) if isinstance(s, Stage) and s.name == stage]
    step = f"inline({stage!r})"
    if not si:
        raise ScheduleError(f"{step}: no top-level stage named {stage!r}")
    p_idx, P = si[0]
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
    idx_names = [e.name for e in s.idx if isinstance(e, Var)]
    if len(idx_names) != len(s.idx) or sorted(idx_names) != sorted(vs):
        raise ScheduleError(
            f"{step}: the store index [{', '.join(map(format_expr, s.idx))}] must be exactly the loop variables"
        )
    if any(
        not isinstance(lp.extent, IntImm) or lp.extent.value != s.buf.shape[idx_names.index(lp.var.name)]
        for lp in loops_
    ):
        raise ScheduleError(f"{step}: the loops do not cover {s.buf.name} exactly")
    X = s.buf
    rest = [t for n, t in enumerate(tops) if n != p_idx]
    for t in tops[:p_idx]:
        if any(ld.buf.name == X.name for ld in loads_of(t)):
            raise ScheduleError(f"{step}: {X.name} is read before the stage computes it")
    for t in rest:
        if any(st.buf.name == X.name for st in stores_of(t)):
            raise ScheduleError(f"{step}: {X.name} is also written elsewhere")
    value = s.value

    def fe(e: Expr) -> Expr | None:
        if isinstance(e, Load) and e.buf.name == X.name:
            return substitute(value, {nm: ix for nm, ix in zip(idx_names, e.idx, strict=False)})
        return None

    return simplify_stmt(rewrap_locals(unwrap_locals(body)[0], seq(*[map_stmt(t, None, fe) for t in rest])))


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
    enclosing ``at``, or when its source is written inside the kernel (with
    ``at`` a loop of the stage: inside the stage).
    """

    stage: str
    buffer: str
    at: str | None
    layout: tuple[str, ...]
    name: str
    min_sizes: tuple[int, ...] = ()  # pad layout dims to at least these extents (e.g. NR lanes)

    def apply(self, k: Kernel) -> Kernel:
        step = f"pack({self.stage!r}, {self.buffer!r})"
        store, operand, loops_here, outside = self._operand_and_loops(k, step)
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
        pack_stage = self._copy_stage(k, step, operand, by_name, outside, P)
        new_load = Load(P, tuple(Var(v) for v in self.layout))

        def fs(s: Stmt) -> Stmt | None:
            if isinstance(s, Store) and s == store:
                return Store(s.buf, s.idx, map_expr(s.value, lambda e: new_load if e == operand else None))
            return None

        newbody = map_stmt(k.body, fs)
        if self.at is None:
            newbody = seq(pack_stage, newbody)
            params = [*k.params, P]
        else:
            newbody = replace_loop(newbody, self.at, lambda s: For(s.var, s.extent, seq(pack_stage, s.body), s.kind))
            newbody = Allocate(P, newbody)
            params = list(k.params)
        out = Kernel(k.name, params, simplify_stmt(newbody), dict(k.meta))
        if self.at is None:
            out.meta.setdefault("scratch", []).append(P.name)
        return out

    def _operand_and_loops(self, k: Kernel, step: str) -> tuple[Store, Expr, list[For], set[str]]:
        """The one store reading the operand, the operand, the loops around it, and those outside ``at``;
        refuses an operand that depends on other loops or reads what the kernel writes."""
        st_node = find_stage(k.body, self.stage)
        if st_node is None:
            raise ScheduleError(f"{step}: no stage named {self.stage!r}")
        if self.buffer.startswith("#"):
            stores = [
                s
                for s in stores_of(st_node)
                if isinstance(s.value, Bin)
                and s.value.op == "+"
                and isinstance(s.value.b, Bin)
                and s.value.b.op == "*"
                and any(ld.buf.name == s.buf.name for ld in loads_of(s.value.a))
            ]
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
        outside = set(names_here[: at_pos + 1])
        inside = names_here[at_pos + 1 :]
        for v in self.layout:
            if v not in inside:
                raise ScheduleError(
                    f"{step}: layout loop {v!r} is not inside {self.at or 'the kernel'} around the operand"
                )
        stray = free_vars(operand) - outside - set(self.layout)
        if stray:
            raise ScheduleError(
                f"{step}: the operand depends on loops {sorted(stray)} that are neither in the "
                "layout nor outside the pack point"
            )
        srcs = {ld.buf.name for ld in loads_of(operand)}
        # packed at a loop of the stage, the copy runs after everything outside the stage: only what the
        # stage itself writes could change under it (a slice filled beside the stage is packed as it is read)
        inside_stage = self.at is not None and find_loop(st_node, self.at) is not None
        written = {s.buf.name for s in stores_of(st_node if inside_stage else k.body)}
        if srcs & written:
            raise ScheduleError(f"{step}: the operand reads {sorted(srcs & written)}, which this kernel writes")
        return store, operand, loops_here, outside

    def _copy_stage(
        self, k: Kernel, step: str, operand: Expr, by_name: dict[str, For], outside: set[str], P: Buffer
    ) -> Stage:
        """The stage copying ``operand`` into ``P`` over fresh copies of the layout loops."""
        pvars = {v: Var(fresh_name(k.body, v + ".p")) for v in self.layout}
        val = substitute(operand, {v: pv for v, pv in pvars.items()})
        # Dims given a min size (the micro-kernel's NR lanes) are padded with zeros: a select zeroes the lanes
        # past the true extent, and the operand is read only under it (the backends' guarded selects), so a
        # unit-stride operand stays a (masked) vector load.  Other dims iterate their true (possibly tail)
        # extent: nothing reads past it.
        conds, exts = [], {}
        psub = {u: pv for u, pv in pvars.items()}
        for d, v in enumerate(self.layout):
            ext = substitute(by_name[v].extent, psub)
            stray_e = free_vars(ext) - outside - {pvars[u].name for u in self.layout}
            if stray_e:
                raise ScheduleError(f"{step}: extent of {v} depends on {sorted(stray_e)}")
            n = P.shape[d]
            padded = d < len(self.min_sizes) and self.min_sizes[d] > 1
            if bounds(ext, {}) == (n, n) or not padded:
                exts[v] = ext
                continue
            exts[v] = IntImm(n)
            conds.append(lt(pvars[v], ext))
        idx = tuple(pvars[v] for v in self.layout)
        if not conds:
            return Stage(f"{self.stage}.pack_{self.name}", self._nest(Store(P, idx, val), exts, pvars, 0))
        # Full panels (every padded extent at its size) copy without the select; only the tail panel pays it.
        # The test sits just inside the last layout loop the padded extents depend on.
        full = land(*(ge(exts_true, IntImm(P.shape[d])) for d, exts_true in self._padded_extents(by_name, psub)))
        deps = free_vars(full)
        depth = max((d + 1 for d, v in enumerate(self.layout) if pvars[v].name in deps), default=0)
        fast = self._nest(Store(P, idx, val), exts, pvars, depth)
        slow = self._nest(Store(P, idx, Select(land(*conds), val, FloatImm(0.0))), exts, pvars, depth)
        body: Stmt = If(full, fast, slow)
        for v in reversed(self.layout[:depth]):
            body = For(pvars[v], exts[v], body)
        return Stage(f"{self.stage}.pack_{self.name}", body)

    def _padded_extents(self, by_name: dict[str, For], psub: dict[str, Var]) -> list[tuple[int, Expr]]:
        return [
            (d, substitute(by_name[v].extent, psub))
            for d, v in enumerate(self.layout)
            if d < len(self.min_sizes) and self.min_sizes[d] > 1
        ]

    def _nest(self, body: Stmt, exts: dict[str, Expr], pvars: dict[str, Var], start: int) -> Stmt:
        """``body`` inside the copy loops of ``self.layout[start:]``."""
        for v in reversed(self.layout[start:]):
            body = For(pvars[v], exts[v], body)
        return body
