"""Stage-level schedule steps: ``ComputeAt``, ``Inline``, ``Pack`` and ``Tensorize``.

These move, substitute or copy whole top-level stages (or replace a whole
nest by an intrinsic), as opposed to the loop-level steps in ``loop_steps``.
Legality checks live in ``checks``.

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
    affine_in,
    bounds,
    emin,
    enclosing,
    eq,
    find_loop,
    find_stage,
    flat_offset,
    format_expr,
    free_vars,
    ge,
    land,
    loads_of,
    lt,
    map_expr,
    map_stmt,
    outer_ranges,
    perfect_nest,
    perfect_prefix,
    replace_loop,
    rewrap_locals,
    seq,
    simplify,
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


@dataclass(frozen=True)
class FoldInit(Step):
    """Fold a contraction's init into its update: the init stage goes, and the update's first reduction step
    reads zero instead of the output; a non-zero init (a bias) is added by the in-place epilogue stage right
    after the update instead (``relu(C)`` becomes ``relu(C + bias)``), refused when there is none.

    before::                                   after fold_init("mm.init", "mm", "k")::

        // stage mm.init                          // stage mm
        for i2, j2: C[i2, j2] = 0.0               for i, j, k:
        // stage mm                                  C[i, j] = select(k == 0, 0.0, C[i, j]) + A[i, k] * B[k, j]
        for i, j, k:
          C[i, j] = C[i, j] + A[i, k] * B[k, j]

    A tensorized block then stores its tile instead of adding it to zeros written in a pass before (the
    ``z`` micro-kernels).  Refused unless the two are adjacent top-level stages; the init a perfect nest
    storing 0.0, or a value not reading the output with such an epilogue (same loops and index, reading the
    output only there); the update a perfect nest around one ``C[x] = C[x] + a * b`` (a and b not reading C)
    with a loop ``k`` of constant extent of at least 1 that x does not use; the init's index the update's
    over loops of the same extents; and that index one element per iteration of the other loops (the flat
    offset affine in them, with strides that never meet): each element's first update is its k = 0 step.
    """

    init: str
    stage: str
    k: str

    def apply(self, k: Kernel) -> Kernel:
        step = f"fold_init({self.init!r}, {self.stage!r})"
        tops = top_stmts(k.body)
        names = [t.name if isinstance(t, Stage) else None for t in tops]
        if self.init not in names or self.stage not in names:
            raise ScheduleError(f"{step}: both must be top-level stages")
        p, t = names.index(self.init), names.index(self.stage)
        if t != p + 1:
            raise ScheduleError(f"{step}: the init stage must come right before the update")
        ini, U = tops[p], tops[t]
        assert isinstance(ini, Stage) and isinstance(U, Stage)
        init_loops, init_st = self._nest(ini.body, step, "init")
        up_loops, up_st = self._nest(U.body, step, "update")
        v = up_st.value
        C = up_st.buf
        if not (
            isinstance(v, Bin)
            and v.op == "+"
            and isinstance(v.a, Load)
            and v.a.buf == C
            and v.a.idx == up_st.idx
            and isinstance(v.b, Bin)
            and v.b.op == "*"
            and all(ld.buf != C for ld in loads_of(v.b))
        ):
            raise ScheduleError(f"{step}: the update is not C[x] = C[x] + a * b: {format_expr(v)}")
        if init_st.buf != C:
            raise ScheduleError(f"{step}: the init writes {init_st.buf.name}, the update {C.name}")
        kl = [lp for lp in up_loops if lp.var.name == self.k]
        if not kl or not isinstance(kl[0].extent, IntImm) or kl[0].extent.value < 1:
            raise ScheduleError(f"{step}: no loop {self.k} of constant extent >= 1 in the update")
        others = [lp for lp in up_loops if lp.var.name != self.k]
        if any(self.k in free_vars(e) for e in up_st.idx):
            raise ScheduleError(f"{step}: the output index uses {self.k}")
        extents = [lp.extent.value if isinstance(lp.extent, IntImm) else None for lp in others]
        if [lp.extent for lp in init_loops] != [lp.extent for lp in others] or None in extents:
            raise ScheduleError(f"{step}: the init's loops do not match the update's (constant extents, in order)")
        sub = {a.var.name: b.var for a, b in zip(init_loops, others, strict=True)}
        if tuple(substitute(e, sub) for e in init_st.idx) != up_st.idx:
            raise ScheduleError(f"{step}: the init and the update index the output differently")
        f = affine_in(flat_offset(C, up_st.idx), {lp.var.name for lp in others})
        if f is None or not _one_element_each(f[0], {lp.var.name: int(e or 0) for lp, e in zip(others, extents)}):
            raise ScheduleError(f"{step}: the output index may name one element from two iterations")
        first = Select(eq(Var(self.k), IntImm(0)), FloatImm(0.0), v.a)
        new_tops = list(tops)
        new_tops[t] = Stage(U.name, _renest(up_loops, Store(C, up_st.idx, Bin("+", first, v.b))))
        init = init_st.value
        if not (isinstance(init, FloatImm) and init.value == 0.0):  # the epilogue right after adds it
            new_tops[t + 1] = self._epilogue_adds(tops[t + 1] if t + 1 < len(tops) else None, init_loops, init_st)
        del new_tops[p]
        return k.with_body(rewrap_locals(unwrap_locals(k.body)[0], seq(*new_tops)))

    def _epilogue_adds(self, post: Stmt | None, init_loops: list[For], init_st: Store) -> Stage:
        """A non-zero init (a bias) moves into the in-place epilogue stage right after the update: its reads of
        the output element become that element plus the init's value (a pass over the output saved, not added)."""
        step = f"fold_init({self.init!r}, {self.stage!r})"
        C, init = init_st.buf, init_st.value
        if any(ld.buf == C for ld in loads_of(init)):
            raise ScheduleError(f"{step}: the init reads the output")
        if not isinstance(post, Stage):
            raise ScheduleError(f"{step}: a non-zero init needs an epilogue stage right after the update")
        p_loops, p_st = self._nest(post.body, step, "epilogue")
        if p_st.buf != C or [lp.extent for lp in p_loops] != [lp.extent for lp in init_loops]:
            raise ScheduleError(f"{step}: {post.name} does not update the output in place over the init's loops")
        sub = {a.var.name: b.var for a, b in zip(init_loops, p_loops, strict=True)}
        if tuple(substitute(e, sub) for e in init_st.idx) != p_st.idx:
            raise ScheduleError(f"{step}: {post.name} indexes the output differently from the init")
        if any(ld.buf == C and ld.idx != p_st.idx for ld in loads_of(p_st.value)):
            raise ScheduleError(f"{step}: {post.name} reads other elements of the output")
        add = substitute(init, sub)

        def plus_init(e: Expr) -> Expr | None:
            return Bin("+", e, add) if isinstance(e, Load) and e.buf == C else None

        return Stage(post.name, _renest(p_loops, Store(C, p_st.idx, map_expr(p_st.value, plus_init))))

    @staticmethod
    def _nest(body: Stmt, step: str, what: str) -> tuple[list[For], Store]:
        lps = perfect_nest(body) if isinstance(body, For) else []
        inner = lps[-1].body if lps else body
        if not isinstance(inner, Store):
            raise ScheduleError(f"{step}: the {what} stage is not a perfect nest around one store")
        return lps, inner


def _renest(lps: list[For], body: Stmt) -> Stmt:
    """``body`` inside copies of the loops ``lps`` (outermost first), their kinds kept."""
    for lp in reversed(lps):
        body = For(lp.var, lp.extent, body, lp.kind)
    return body


def _one_element_each(coef: dict[str, int], extents: dict[str, int]) -> bool:
    """Whether ``sum(coef[v] * v)`` over ``0 <= v < extents[v]`` is one-to-one: sorted by stride, each loop's
    stride passes the span of every smaller one (loops of extent 1 do not count)."""
    span = 0
    for c, n in sorted((abs(coef.get(v, 0)), n) for v, n in extents.items() if n > 1):
        if c <= span:
            return False
        span += c * (n - 1)
    return True


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


# ------------------------------------------------------------ tensorize
STREAMS = ("", "a", "b", "ab")  # Tensorize.stream: which operands the micro-kernel prefetches ahead


def micro_kernel_name(kind: str, mr: int, nr: int, stream: str = "") -> str:
    """The name a tensorized nest calls (the backends define it): ``gemmt_12x32``, or ``gemmt_12x32_pa``
    prefetching A."""
    return f"{kind}_{mr}x{nr}" + (f"_p{stream}" if stream else "")


def micro_kernel_parts(name: str) -> tuple[str, int, int, str]:
    """``micro_kernel_name``'s arguments back from its result: ``"gemmt_12x32_pa"`` -> ``("gemmt", 12, 32, "a")``."""
    kind, shape, *pf = name.split("_")
    mr, nr = (int(x) for x in shape.split("x"))
    return kind, mr, nr, pf[0].removeprefix("p") if pf else ""


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
    must be affine in them with unit stride along j (C) and along k or i (A:
    ``gemm_`` reads rows, ``gemmt_`` columns, e.g. a packed A panel); B a
    packed panel (unit stride along j, stride NR along k, padded to NR lanes) or
    a row-major buffer in memory read in place (``gemmr_`` / ``gemmtr_``: unit
    stride along j, any stride along k).

    ``stream`` names the operands that come from memory rather than cache ("a", "b", "ab": weights packed
    at compile time, read once per run): the micro-kernel prefetches them ahead (``gemmt_12x32_pa``).  A B
    read in place streams the next panel: each k step prefetches its row's next NR columns (a 1x1
    convolution's input, rows a plane apart, left by an earlier layer in memory).

    ``segments``: ``loop`` is a fourth loop around the three, over segments of the reduction (C must not
    depend on it): ``gemms_`` keeps the accumulators across them, A (row-major) and B advancing by their
    strides along it per segment — a blocked input's channel blocks, each a [pixels, 16] plane.
    """

    loop: str
    mr: int = 8
    nr: int = 32
    stream: str = ""
    segments: bool = False
    runs: int = 0  # C's columns contiguous in runs of this many (a blocked output's channel blocks), 0: all

    def __str__(self) -> str:
        extra = f", {self.stream!r}" if self.stream else ""
        if self.segments:
            extra += ", segments=True"
        if self.runs:
            extra += f", runs={self.runs}"
        return f"tensorize({self.loop!r}, {self.mr}, {self.nr}{extra})"

    def apply(self, k: Kernel) -> Kernel:
        step = f"tensorize({self.loop!r})"
        if self.stream not in STREAMS:
            raise ScheduleError(f"{step}: stream must be one of {STREAMS}, got {self.stream!r}")
        top = need_loop(k.body, self.loop, "tensorize")
        ranges = outer_ranges(k.body, top)
        seg: For | None = None
        li = top
        if self.segments:
            seg = top
            if not isinstance(seg.body, For):
                raise ScheduleError(f"{step}: the segment loop must wrap the three tensorized loops alone")
            bs = bounds(seg.extent, ranges)
            ranges = dict(ranges, **{seg.var.name: (0, max(0, (bs[1] if bs else 1 << 40) - 1))})
            li = seg.body
        pp = perfect_prefix(li, 3)
        if pp is None or not isinstance(pp[1], Store):
            raise ScheduleError(f"{step}: expected three perfectly nested loops around one store")
        (L1, L2, L3), st = pp[0], pp[1]
        b1 = bounds(L1.extent, ranges)
        r2 = dict(ranges, **{L1.var.name: (0, b1[1] - 1 if b1 else 0)})
        b2 = bounds(L2.extent, r2)
        if b1 is None or b1[1] > self.mr or b2 is None or b2[1] > self.nr:
            raise ScheduleError(
                f"{step}: extents must be at most ({self.mr}, {self.nr}), got "
                f"({format_expr(L1.extent)}, {format_expr(L2.extent)})"
            )
        v = st.value
        # a folded zero init (FoldInit): C[x] = select(k == 0, 0.0, C[x]) + ..., k the reduction's index
        first = None
        c_read = v.a if isinstance(v, Bin) else None
        if isinstance(c_read, Select) and c_read.a == FloatImm(0.0):
            first, c_read = c_read.cond, c_read.b
        if not (
            isinstance(v, Bin)
            and v.op == "+"
            and isinstance(c_read, Load)
            and c_read.buf == st.buf
            and c_read.idx == st.idx
            and isinstance(v.b, Bin)
            and v.b.op == "*"
            and isinstance(v.b.a, Load)
            and isinstance(v.b.b, Load)
        ):
            raise ScheduleError(f"{step}: the store is not C[x] = C[x] + A[..] * B[..]: {format_expr(v)}")
        iv, jv, kv = L1.var.name, L2.var.name, L3.var.name
        sv = seg.var.name if seg is not None else None
        names = {iv, jv, kv} | ({sv} if sv else set())
        for lp in (L1, L2, L3) if seg is not None else (L2, L3):
            if free_vars(lp.extent) & names:
                raise ScheduleError(f"{step}: extent of {lp.var.name} depends on the tensorized loops")

        def form(buf: Buffer, idx) -> tuple[dict[str, int], Expr]:
            f = affine_in(flat_offset(buf, idx), names)
            if f is None:
                raise ScheduleError(
                    f"{step}: {buf.name}[{', '.join(map(format_expr, idx))}] is not affine in ({iv}, {jv}, {kv})"
                )
            return f

        C = st.buf
        ldq = 0
        if self.runs:  # j = runs * jq + jl: unit stride along jl, ldq along jq
            if self.nr % self.runs:
                raise ScheduleError(f"{step}: NR={self.nr} is not a whole number of runs of {self.runs}")
            jq, jl = Var(fresh_name(k.body, f"{jv}.q")), Var(fresh_name(k.body, f"{jv}.l"))
            rr = dict(r2, **{kv: (0, 1 << 40), jq.name: (0, self.nr // self.runs - 1), jl.name: (0, self.runs - 1)})
            if sv:
                rr[sv] = ranges[sv]
            idx = tuple(simplify(substitute(e, {jv: jq * self.runs + jl}), rr) for e in st.idx)
            f = affine_in(flat_offset(C, idx), (names - {jv}) | {jq.name, jl.name})
            if f is None or f[0].get(jl.name) != 1:
                raise ScheduleError(f"{step}: C is not contiguous in runs of {self.runs} columns")
            ldq = f[0].get(jq.name, 0)
            cf = {v: c for v, c in f[0].items() if v not in (jq.name, jl.name)} | {jv: 1}
            coff = f[1]
        else:
            cf, coff = form(C, st.idx)
        if cf.get(jv) != 1 or cf.get(kv, 0) != 0 or (cf.get(iv, 0) <= 0 and b1[1] > 1):
            raise ScheduleError(f"{step}: C must have unit stride along {jv}, none along {kv} (got {cf})")
        ldc = cf.get(iv, 0)
        A = B = None
        kind, lda = "gemm", 0
        for x, y in ((v.b.a, v.b.b), (v.b.b, v.b.a)):
            xf, yf = form(x.buf, x.idx), form(y.buf, y.idx)
            if not (yf[0].get(jv) == 1 and yf[0].get(kv, 0) > 0 and yf[0].get(iv, 0) == 0):
                continue
            if xf[0].get(jv, 0) != 0:
                continue
            if xf[0].get(kv) == 1:  # A row-major: rows lda apart
                A, af, B, bf, kind, lda = x, xf, y, yf, "gemm", xf[0].get(iv, 0)
                break
            if xf[0].get(iv) == 1 and xf[0].get(kv, 0) >= 1:  # A column-major (a packed A panel): k steps lda apart
                A, af, B, bf, kind, lda = x, xf, y, yf, "gemmt", xf[0][kv]
                break
        if A is None or B is None:
            raise ScheduleError(
                f"{step}: need A with unit stride along {kv} or along {iv}, and B with unit stride along {jv} "
                f"and none along {iv} (a packed panel: stride {self.nr} along {kv})"
            )
        ldb = bf[0][kv]
        packed = ldb == self.nr and B.buf.shape[-1] == self.nr and B.buf.strides is None
        if not packed:
            if B.buf.scope == "local":
                raise ScheduleError(
                    f"{step}: B ({B.buf.name}) must be a packed panel buffer with {self.nr} lanes, or a row-major "
                    f"operand read in place (stride {ldb} along {kv})"
                )
            kind += "r"  # B read in place, rows ldb apart
        segs: tuple[Expr, ...] = ()
        if seg is not None and sv is not None:
            if kind != "gemm" or cf.get(sv, 0) != 0:
                raise ScheduleError(
                    f"{step}: segments need a row-major A, a packed B and C independent of {sv} (got {kind}, {cf})"
                )
            kind = "gemms"
            segs = (seg.extent, IntImm(af[0].get(sv, 0)), IntImm(bf[0].get(sv, 0)))
        if self.runs:
            kind += "q"
            if kind not in ("gemmq", "gemmtq", "gemmsq"):
                raise ScheduleError(f"{step}: C in runs needs a packed B (got {kind})")
            segs = (*segs, IntImm(ldq))
        if first is not None:  # C overwritten (beta = 0) when this call's first step is the reduction's first
            segs = (*segs, self._beta(first, kv, names, ranges, step))
            kind += "z"
        intr = Intrinsic(
            micro_kernel_name(kind, self.mr, self.nr, self.stream),
            (
                A.buf,
                af[1],
                IntImm(lda),
                B.buf,
                bf[1],
                IntImm(ldb),
                C,
                coff,
                IntImm(ldc),
                L3.extent,
                L1.extent,
                L2.extent,
                *segs,
            ),
            reads=(A.buf, B.buf, C),
            writes=(C,),
        )

        def call(lp: For) -> Stmt:  # the call stands for the nest it was built from, not another of that name
            if lp != top:
                raise ScheduleError(f"{step}: the kernel holds another, different loop named {self.loop}")
            return intr

        return k.with_body(replace_loop(k.body, self.loop, call))

    @staticmethod
    def _beta(cond: Expr, kv: str, names: set[str], ranges: dict, step: str) -> Expr:
        """For a folded init's ``k_total == 0`` with ``k_total = kv + off``: the call's ``beta``, 0 when its
        first step is the reduction's first (``off == 0``) and 1 otherwise (``min(off, 1)``, off >= 0)."""
        f = affine_in(cond.a, names) if isinstance(cond, Bin) and cond.op == "==" and cond.b == IntImm(0) else None
        if f is None or f[0].get(kv) != 1 or any(c for v, c in f[0].items() if v != kv):
            raise ScheduleError(f"{step}: the first-step test {format_expr(cond)} is not {kv} + offset == 0")
        b = bounds(f[1], ranges)
        if b is None or b[0] < 0:
            raise ScheduleError(f"{step}: the reduction offset {format_expr(f[1])} may be negative")
        return simplify(emin(f[1], 1), ranges)
