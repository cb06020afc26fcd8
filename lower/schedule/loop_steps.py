"""Loop-level schedule steps: ``Split``, ``Reorder``, ``Fuse``, ``Vectorize``, ``Unroll``, ``Parallel``,
and the ``Step`` base class they share with the stage-level steps (``stage_steps``).

Each step is a frozen dataclass with ``apply(kernel) -> kernel``; it checks its
preconditions first (``checks``) and raises ``ScheduleError`` instead of
transforming when the step is illegal:

    >>> str(Split("i", 4))
    "split('i', 4)"
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from lower.ir import (
    Expr,
    For,
    IntImm,
    Intrinsic,
    Kernel,
    LoopKind,
    Seq,
    Stage,
    Stmt,
    Var,
    emin,
    format_expr,
    free_vars,
    perfect_nest,
    replace_loop,
    root_loop,
    simplify,
    simplify_stmt,
    stores_of,
    substitute,
    unwrap_locals,
    walk_stmt,
)
from lower.schedule.checks import (
    accesses,
    check_reorderable,
    check_vectorizable,
    conflict,
    conflict_free,
    fresh_name,
    need_loop,
    sample_points,
)
from rewrite.ir.errors import ScheduleError


# ============================================================== steps
def _after_prologue(k: Kernel, lp: For) -> bool:
    """Whether ``lp`` roots the kernel's last top-level nest and every statement before it is a stage that
    only fills packed buffers of the kernel (``Pack`` at no loop: listed in ``meta["scratch"]``)."""
    _, inner = unwrap_locals(k.body)
    tops = list(inner.stmts) if isinstance(inner, Seq) else [inner]
    scratch = set(k.meta.get("scratch", []))
    if len(tops) < 2 or root_loop(tops[-1]) is not lp:
        return False
    return all(isinstance(t, Stage) and {st.buf.name for st in stores_of(t)} <= scratch for t in tops[:-1])


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
        need_loop(k.body, self.loop, "split")
        if not isinstance(self.factor, int) or self.factor < 1:
            raise ScheduleError(f"split({self.loop!r}): factor must be a positive integer, got {self.factor!r}")
        on, inn = fresh_name(k.body, f"{self.loop}.o"), fresh_name(k.body, f"{self.loop}.i")
        f = self.factor
        o, i = Var(on), Var(inn)

        def fn(s: For) -> Stmt:
            ext = s.extent
            body = substitute(s.body, {s.var.name: o * f + i})
            oe: Expr
            ie: Expr
            if isinstance(ext, IntImm) and ext.value % f == 0:
                oe, ie = IntImm(ext.value // f), IntImm(f)
            else:
                oe = simplify((ext + (f - 1)) // f)
                ie = emin(IntImm(f), ext - o * f)
            ok = s.kind if s.kind is LoopKind.PARALLEL else LoopKind.SERIAL
            ik = s.kind if s.kind in (LoopKind.VECTORIZED, LoopKind.UNROLLED) else LoopKind.SERIAL
            return For(o, oe, For(i, ie, body, ik), ok)

        return k.with_body(simplify_stmt(replace_loop(k.body, self.loop, fn)))


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
        found = [need_loop(k.body, n, "reorder") for n in names]
        # the outermost listed loop is the one whose chain contains the others
        top = None
        for f in found:
            ch = [x.var.name for x in perfect_nest(f)]
            if all(n in ch for n in names):
                top = f
                break
        if top is None:
            raise ScheduleError(
                f"reorder{tuple(names)}: loops are not perfectly nested in one chain "
                "(some other statement sits between them)"
            )

        # every loop of that name is reordered from its own nest: a kernel can hold several (a packing copy's
        # full and tail versions), and each keeps its own body
        def reordered(nest: For) -> Stmt:
            chain = perfect_nest(nest)
            if not all(n in [x.var.name for x in chain] for n in names):
                raise ScheduleError(
                    f"reorder{tuple(names)}: another loop named {nest.var.name} does not hold the others in its nest"
                )
            cnames = [x.var.name for x in chain]
            last = max(cnames.index(n) for n in names)
            chain = chain[: last + 1]
            cnames = cnames[: last + 1]
            positions = sorted(cnames.index(n) for n in names)
            new_order = list(chain)
            by_name = {x.var.name: x for x in chain}
            for pos, n in zip(positions, names, strict=False):
                new_order[pos] = by_name[n]
            inner_body = chain[-1].body
            seen: set[str] = set()
            for lp in new_order:
                dep = free_vars(lp.extent) & set(cnames)
                if not dep <= seen:
                    raise ScheduleError(
                        f"reorder{tuple(names)}: extent of loop {lp.var.name} "
                        f"({format_expr(lp.extent)}) depends on {sorted(dep - seen)}, "
                        "which would be inside it"
                    )
                seen.add(lp.var.name)
            moved = {n for n in cnames[positions[0] :]}
            check_reorderable(inner_body, moved, f"reorder{tuple(names)}")
            body = inner_body
            for lp in reversed(new_order):
                body = For(lp.var, lp.extent, body, lp.kind)
            return body

        return k.with_body(replace_loop(k.body, top.var.name, reordered))


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
        need_loop(k.body, self.outer, "fuse")
        need_loop(k.body, self.inner, "fuse")
        f = Var(fresh_name(k.body, f"{self.outer}.{self.inner}"))

        def fused(o: For) -> Stmt:  # each loop named outer, from its own body (a kernel can hold several)
            i = o.body
            if not (isinstance(i, For) and i.var.name == self.inner):
                raise ScheduleError(
                    f"fuse({self.outer!r}, {self.inner!r}): {self.inner} is not the only statement in "
                    f"{self.outer}'s body"
                )
            if self.outer in free_vars(i.extent):
                raise ScheduleError(
                    f"fuse({self.outer!r}, {self.inner!r}): the extent of {self.inner} depends on {self.outer}"
                )
            if not isinstance(i.extent, IntImm):
                raise ScheduleError(f"fuse({self.outer!r}, {self.inner!r}): inner extent must be constant")
            n = i.extent.value
            body = substitute(i.body, {self.outer: f // n, self.inner: f % n})
            return For(f, simplify(o.extent * n), body, o.kind)

        return k.with_body(simplify_stmt(replace_loop(k.body, self.outer, fused)))


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
        lp = need_loop(k.body, self.loop, "vectorize")
        check_vectorizable(lp, f"vectorize({self.loop!r})")
        return k.with_body(replace_loop(k.body, self.loop, lambda s: For(s.var, s.extent, s.body, LoopKind.VECTORIZED)))


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
        lp = need_loop(k.body, self.loop, "unroll")
        if not isinstance(lp.extent, IntImm):
            raise ScheduleError(f"unroll({self.loop!r}): extent {format_expr(lp.extent)} is not constant")
        if lp.extent.value > self.max_extent:
            raise ScheduleError(f"unroll({self.loop!r}): extent {lp.extent.value} > {self.max_extent}")
        return k.with_body(replace_loop(k.body, self.loop, lambda s: For(s.var, s.extent, s.body, LoopKind.UNROLLED)))


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
    Before the root nest there may be stages filling packed buffers once
    (``pack`` at no loop): the runtime computes those of constants at compile
    time, which leaves the nest the root; one it cannot leaves the whole kernel
    serial (the code generator runs a parallel loop that is not the root as a plain loop).
    """

    loop: str

    def apply(self, k: Kernel) -> Kernel:
        lp = need_loop(k.body, self.loop, "parallel")
        step = f"parallel({self.loop!r})"
        root = root_loop(k.body)
        if root is not lp and not _after_prologue(k, lp):
            raise ScheduleError(
                f"{step}: only the kernel's outermost loop can be parallel "
                f"(root is {root.var.name if root else 'not a single loop'})"
            )
        if not isinstance(lp.extent, IntImm):
            raise ScheduleError(f"{step}: extent must be constant")
        if any(isinstance(s, Intrinsic) for s in walk_stmt(lp.body)):
            raise ScheduleError(
                f"{step}: cannot analyse the writes of a tensorized intrinsic; mark parallel before tensorize"
            )
        pts = sample_points([lp], {})
        acc = [accesses(lp.body, p) for p in pts]
        for a, b in () if conflict_free(acc) else itertools.combinations(range(len(pts)), 2):
            c = conflict(acc[a][0], acc[a][1], acc[b][0], acc[b][1])
            if c:
                va, vb = pts[a][self.loop][0], pts[b][self.loop][0]
                raise ScheduleError(
                    f"{step}: iterations {va} and {vb} both touch the same elements of {c} (one of them writing)"
                )
        return k.with_body(replace_loop(k.body, self.loop, lambda s: For(s.var, s.extent, s.body, LoopKind.PARALLEL)))
