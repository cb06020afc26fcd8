"""The contraction steps: ``FoldInit`` (a GEMM's init folded into its first k step), ``FoldInitRows`` and
``FoldPostRows`` (a direct convolution's init and epilogue folded into the copies and stores of its
accumulator rows) and ``Tensorize`` (an (i, j, k) multiply-accumulate nest replaced by the micro-kernel the
backends define, ``micro_kernel_name``).

Split from ``stage_steps`` (the stage-level moves: ``ComputeAt``, ``Inline``, ``Pack``); legality checks live
in ``checks``.

    >>> micro_kernel_name("gemmt", 12, 32, "a")
    'gemmt_12x32_pa'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lower.ir import (
    Bin,
    Buffer,
    Expr,
    FloatImm,
    For,
    IntImm,
    Intrinsic,
    Kernel,
    Load,
    Select,
    Stage,
    Stmt,
    Store,
    Var,
    affine_in,
    bounds,
    emin,
    eq,
    flat_offset,
    format_expr,
    free_vars,
    loads_of,
    loop_ranges,
    map_expr,
    map_stmt,
    outer_ranges,
    perfect_nest,
    perfect_prefix,
    replace_loop,
    rewrap_locals,
    seq,
    simplify,
    stores_of,
    substitute,
    top_stmts,
    unwrap_locals,
)
from lower.schedule.checks import fresh_name, need_loop
from lower.schedule.loop_steps import Step
from rewrite.ir.errors import ScheduleError


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


@dataclass(frozen=True)
class FoldInitRows(Step):
    """Fold a direct convolution's init into the copies that start its accumulator rows from the output: the
    init stage goes, and each copy reads the init's value (zero, a bias, a folded residual) where it read
    the output, so that no pass writes the output before the update.

    before::                                      after fold_init_rows("conv.init", "conv"):

        // stage conv.init                           // stage conv
        for n0, g0, i0, oh0, ow0:                    for n, g: ... for ob:
          out[n0, g0*4 + i0, oh0, ow0] = b[g0*4 + i0]   acc[r, i, ow] = b[g*4 + i]
        // stage conv                                    ...
        for n, g: ... for ob:                            out[n, g*4 + i, ob*8 + r, ow] = acc[r, i, ow]
          acc[r, i, ow] = out[n, g*4 + i, ob*8 + r, ow]
          ...
          out[n, g*4 + i, ob*8 + r, ow] = acc[r, i, ow]

    Refused unless the two are adjacent top-level stages; the init a perfect nest around one store whose
    value does not read the output and whose index components are a loop variable each, or ``a*m + b`` with
    ``b``'s loop ``m`` long (``g0*4 + i0``); every read of the output in the update the whole value of a
    copy into a local buffer, whose index the init's index maps onto (checked after substituting); and the
    update storing the output.  The caller guarantees what is not checked: the update stores every element
    of the output, each after the copy that read it (``lower_conv2d``'s direct form does).
    """

    init: str
    stage: str

    def apply(self, k: Kernel) -> Kernel:
        step = f"fold_init_rows({self.init!r}, {self.stage!r})"
        tops, p, t = _adjacent(k, self.init, self.stage, step)
        ini, U = tops[p], tops[t]
        assert isinstance(ini, Stage) and isinstance(U, Stage)
        init_loops, init_st = FoldInit._nest(ini.body, step, "init")
        C = init_st.buf
        if any(ld.buf.name == C.name for ld in loads_of(init_st.value)):
            raise ScheduleError(f"{step}: the init reads the output")
        stores = stores_of(U.body)
        if not any(st.buf.name == C.name for st in stores):
            raise ScheduleError(f"{step}: the update does not store {C.name}")
        copies = [st for st in stores if isinstance(st.value, Load) and st.value.buf.name == C.name]
        if sum(ld.buf.name == C.name for ld in loads_of(U.body)) != len(copies):
            raise ScheduleError(f"{step}: the update reads {C.name} other than in whole copies")
        if not copies or any(st.buf.scope != "local" for st in copies):
            raise ScheduleError(f"{step}: the update reads {C.name} other than in copies into a local buffer")

        def value(st: Store, sub: dict[str, Expr]) -> Expr:
            return substitute(init_st.value, sub)

        new_u = _restore(U, init_loops, init_st, copies, _copied_index, value, step)
        return _with_stages(k, tops, t, new_u, p)


@dataclass(frozen=True)
class FoldPostRows(Step):
    """Fold an in-place epilogue stage into the stores that write a direct convolution's accumulator rows to
    the output: each store writes the epilogue's value of the row (a bias, batchnorm, activation, residual
    applied in registers) and the epilogue's pass over the output goes.

    before::                                       after fold_post_rows("conv", "conv.epilogue"):

        // stage conv                                 // stage conv
        ... out[n, g, ob*8 + r, ow] = acc[r, 0, ow]   ... out[n, g, ob*8 + r, ow] = relu(acc[r, 0, ow] + b[g])
        // stage conv.epilogue
        for n0, c0, oh0, ow0:
          out[n0, c0, oh0, ow0] = relu(out[n0, c0, oh0, ow0] + b[c0])

    Refused unless the epilogue is the top-level stage right after the update, a perfect nest around one store
    into the output whose value reads the output only at that element and whose index ``FoldInitRows``'s
    forms map onto each of the update's stores to the output (checked after substituting), and the update
    does not read the output (``FoldInitRows`` first).  The caller guarantees that the update stores every
    element of the output once (``lower_conv2d``'s direct form does).
    """

    stage: str
    post: str

    def apply(self, k: Kernel) -> Kernel:
        step = f"fold_post_rows({self.stage!r}, {self.post!r})"
        tops, t, p = _adjacent(k, self.stage, self.post, step)
        U, post = tops[t], tops[p]
        assert isinstance(U, Stage) and isinstance(post, Stage)
        p_loops, p_st = FoldInit._nest(post.body, step, "epilogue")
        C = p_st.buf
        if any(ld.buf.name == C.name and ld.idx != p_st.idx for ld in loads_of(p_st.value)):
            raise ScheduleError(f"{step}: the epilogue reads other elements of the output")
        if any(ld.buf.name == C.name for ld in loads_of(U.body)):
            raise ScheduleError(f"{step}: the update reads the output")
        writes = [st for st in stores_of(U.body) if st.buf.name == C.name]
        if not writes:
            raise ScheduleError(f"{step}: the update does not store {C.name}")

        def value(st: Store, sub: dict[str, Expr]) -> Expr:
            def own(e: Expr) -> Expr | None:
                return st.value if isinstance(e, Load) and e.buf.name == C.name else None

            return substitute(map_expr(p_st.value, own), sub)

        new_u = _restore(U, p_loops, p_st, writes, lambda st: st.idx, value, step)
        return _with_stages(k, tops, t, new_u, p)


def _copied_index(st: Store) -> tuple[Expr, ...]:
    """The index a copy ``x[..] = C[idx]`` reads."""
    assert isinstance(st.value, Load)
    return st.value.idx


def _adjacent(k: Kernel, first: str, second: str, step: str) -> tuple[list[Stmt], int, int]:
    """The kernel's top-level statements and the positions of stages ``first`` and ``second``, which must be
    adjacent in that order."""
    tops = top_stmts(k.body)
    names = [t.name if isinstance(t, Stage) else None for t in tops]
    if first not in names or second not in names:
        raise ScheduleError(f"{step}: both must be top-level stages")
    a, b = names.index(first), names.index(second)
    if b != a + 1:
        raise ScheduleError(f"{step}: {second} must come right after {first}")
    return tops, a, b


def _restore(
    U: Stage,
    loops: list[For],
    st: Store,
    targets: list[Store],
    at: Callable[[Store], tuple[Expr, ...]],
    value: Callable[[Store, dict[str, Expr]], Expr],
    step: str,
) -> Stage:
    """``U`` with each store of ``targets`` storing ``value(store, sub)`` instead, where ``sub`` maps the loops
    of the nest storing ``st`` onto the index ``at(store)`` (``_invert_index``, checked after substituting)."""
    extents = {lp.var.name: lp.extent.value for lp in loops if isinstance(lp.extent, IntImm)}
    if len(extents) != len(loops):
        raise ScheduleError(f"{step}: the folded stage's loops must have constant extents")
    ranges = loop_ranges(U.body)
    values: dict[int, Expr] = {}
    for x in targets:
        idx = at(x)
        sub = _invert_index(st.idx, idx, extents)
        if sub is None or set(sub) != set(extents):
            raise ScheduleError(f"{step}: cannot map the index {', '.join(map(format_expr, idx))} onto its loops")
        if any(simplify(substitute(e, sub), ranges) != simplify(c, ranges) for e, c in zip(st.idx, idx, strict=True)):
            raise ScheduleError(f"{step}: the folded stage's index does not map onto {format_expr(x.buf[idx])}")
        values[id(x)] = simplify(value(x, sub), ranges)

    def fs(x: Stmt) -> Stmt | None:
        return Store(x.buf, x.idx, values[id(x)]) if isinstance(x, Store) and id(x) in values else None

    out = map_stmt(U, fs)
    assert isinstance(out, Stage)
    return out


def _with_stages(k: Kernel, tops: list[Stmt], t: int, new: Stmt, drop: int) -> Kernel:
    """``k`` with top-level statement ``t`` replaced by ``new`` and statement ``drop`` removed."""
    new_tops = list(tops)
    new_tops[t] = new
    del new_tops[drop]
    return k.with_body(rewrap_locals(unwrap_locals(k.body)[0], seq(*new_tops)))


def _invert_index(idx: tuple[Expr, ...], at: tuple[Expr, ...], extents: dict[str, int]) -> dict[str, Expr] | None:
    """The loop variables of ``idx`` (components ``v``, or ``a*m + b`` with ``b`` ranging over ``m``, or ``a + b``
    with ``b`` over one value) as expressions of ``at``, the index they must name; None when a component is of
    another form."""
    sub: dict[str, Expr] = {}
    for e, c in zip(idx, at, strict=True):
        if isinstance(e, Var):
            sub[e.name] = c
            continue
        if isinstance(e, Bin) and e.op == "+" and isinstance(e.a, Var) and isinstance(e.b, Var):
            one, other = (e.a, e.b) if extents.get(e.a.name) == 1 else (e.b, e.a)  # g*1 + i simplified
            if extents.get(one.name) == 1:
                sub[one.name], sub[other.name] = IntImm(0), c
                continue
        if isinstance(e, Bin) and e.op == "+":
            mul, low = (e.a, e.b) if isinstance(e.a, Bin) else (e.b, e.a)
            if (
                isinstance(mul, Bin)
                and mul.op == "*"
                and isinstance(mul.a, Var)
                and isinstance(mul.b, IntImm)
                and isinstance(low, Var)
                and extents.get(low.name) == mul.b.value
            ):
                m = mul.b.value
                sub[mul.a.name] = c // IntImm(m)
                sub[low.name] = c % IntImm(m)
                continue
        return None
    return sub


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


# ------------------------------------------------------------ tensorize
STREAMS = ("", "a", "b", "ab")  # Tensorize.stream: which operands the micro-kernel prefetches ahead


def micro_kernel_name(kind: str, mr: int, nr: int, stream: str = "", runs: int = 0) -> str:
    """The name a tensorized nest calls (the backends define it): ``gemmt_12x32``, ``gemmt_12x32_pa``
    prefetching A, ``gemmq_12x32_r16`` storing C's columns in runs of 16 (a ``q`` kind: the backend needs the
    run length, which need not be its vector width)."""
    return f"{kind}_{mr}x{nr}" + (f"_r{runs}" if runs else "") + (f"_p{stream}" if stream else "")


def micro_kernel_parts(name: str) -> tuple[str, int, int, str, int]:
    """``micro_kernel_name``'s arguments back from its result: ``"gemmt_12x32_pa"`` ->
    ``("gemmt", 12, 32, "a", 0)``."""
    kind, shape, *rest = name.split("_")
    mr, nr = (int(x) for x in shape.split("x"))
    runs = int(rest.pop(0)[1:]) if rest and rest[0].startswith("r") else 0
    return kind, mr, nr, rest[0].removeprefix("p") if rest else "", runs


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
            micro_kernel_name(kind, self.mr, self.nr, self.stream, self.runs),
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
