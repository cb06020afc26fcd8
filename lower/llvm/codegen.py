"""One walker from loop IR to LLVM IR text.

Each kernel becomes::

    define void @NAME(ptr %args, i64 %lo, i64 %hi)        ; the ABI the runtime calls
      -> loads one pointer per parameter from %args, calls
    define internal void @NAME.body(ptr noalias %p0, ..., i64 %lo, i64 %hi)

If the kernel's outermost loop is ``parallel`` it runs over ``[lo, hi)`` only,
so the runtime can hand disjoint ranges to several threads (ctypes releases
the GIL).  Everything target-specific is looked up in ``tables`` (operators,
math helpers, loop metadata) and ``intrinsics`` (tensorized routines).
"""

from __future__ import annotations

from collections.abc import Callable

from lower.ir import (
    BF16,
    BOOL,
    F16,
    F32,
    HALF_TYPES,
    I32,
    I64,
    INT_BOUNDS,
    INT_TYPES,
    U8,
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
    Kernel,
    Load,
    LoopKind,
    Range,
    Select,
    Seq,
    Stage,
    Stmt,
    Store,
    Var,
    affine_in,
    bounds,
    flat_offset,
    loads_of,
    root_loop,
    simplify,
    stmt_exprs,
    walk_expr,
    walk_stmt,
)
from lower.llvm import tables as T
from lower.llvm.intrinsics import INTRINSICS
from rewrite.ir.errors import CodegenError
from rewrite.ir.target import Target


def _folded(op: str, a: str, b: str) -> str | None:
    """``a op b`` on i64 operands as a value without an instruction, where it is one: both constants (an unrolled
    loop's index), or an identity (``x + 0``, ``x * 1``, ``x * 0``); else None."""
    x, y = _const(a), _const(b)
    if x is not None and y is not None:
        v = {"+": x + y, "-": x - y, "*": x * y, "min": min(x, y), "max": max(x, y)}[op]
        return str(v) if -(1 << 63) <= v < (1 << 63) else None
    if op == "*" and (x == 0 or y == 0):
        return "0"
    if (op == "+" and x == 0) or (op == "*" and x == 1):
        return b
    if (op in ("+", "-") and y == 0) or (op == "*" and y == 1):
        return a
    return None


def _const(v: str) -> int | None:
    """An i64 operand's value when it is a literal (``"12"``, ``"-3"``), else None (an SSA name)."""
    return int(v) if v[:1].isdigit() or (v[:1] == "-" and v[1:2].isdigit()) else None


class FunctionEmitter:
    """Emits one kernel's function body, asking ``module`` for helpers, declarations and loop metadata."""

    def __init__(self, kernel: Kernel, module: ModuleBuilder) -> None:
        self.k = kernel
        self.mod = module
        self.lines: list[str] = []
        self.allocas: list[str] = []
        self.n = 0
        self.block = "entry"
        self.env: dict[str, str] = {}  # loop var -> SSA value
        self.ranges: dict[str, Range] = {}
        self.ptrs: dict[str, str] = {}  # buffer name -> base pointer SSA value
        self.root = root_loop(kernel.body)
        self.accumulates: set[int] = set()  # ids of Bin nodes that update their own store target (T.FAST)
        self.values: dict[tuple[str, str], str] = {}  # (block, pure instruction) -> its value (``pure``)

    # ------------------------------------------------------------ plumbing
    def tmp(self, hint: str = "t") -> str:
        self.n += 1
        return f"%{hint}{self.n}"

    def label(self, hint: str) -> str:
        self.n += 1
        return f"{hint}{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append("  " + line)

    def start_block(self, lab: str) -> None:
        self.lines.append(f"{lab}:")
        self.block = lab

    def pure(self, instr: str, hint: str = "t") -> str:
        """The value of ``instr`` (an instruction without side effects, e.g. ``add i64 %a, 4``), emitted once per
        block: the same instruction later in the block is the value computed first, which dominates it.  Index
        arithmetic repeats itself (every access of an unrolled body recomputes its row's offset), and LLVM spent
        its time folding it again: kernels' IR was half such repeats."""
        key = (self.block, instr)
        r = self.values.get(key)
        if r is None:
            r = self.values[key] = self.tmp(hint)
            self.emit(f"{r} = {instr}")
        return r

    # ------------------------------------------------------------ expressions
    def expr(self, e: Expr) -> str:
        t = type(e)  # the node kinds are a closed set: test the most frequent (address arithmetic) first
        if t is Bin:
            return self.binop(e)  # type: ignore[arg-type]
        if t is Var:
            name: str = e.name  # type: ignore[attr-defined]
            try:
                return self.env[name]
            except KeyError:
                raise CodegenError(f"kernel {self.k.name}: variable {name} used outside its loop") from None
        if t is IntImm:
            return str(e.value)  # type: ignore[attr-defined]
        if isinstance(e, FloatImm):
            return T.f32_literal(e.value)
        if isinstance(e, Load):
            p = self.address(e.buf, e.idx)
            r = self.tmp("v")
            if e.buf.dtype == BOOL:  # bools live in memory as bytes (torch.bool), i1 in registers
                b = self.tmp("b")
                self.emit(f"{b} = load i8, ptr {p}, align 1")
                self.emit(f"{r} = trunc i8 {b} to i1")
                return r
            if e.buf.dtype in HALF_TYPES:  # stored in 16 bits, computed on as the float it equals
                h = self.tmp("h")
                self.emit(f"{h} = load {T.MEM_TYPES[e.buf.dtype]}, ptr {p}, align 2")
                return self.widen(h, e.buf.dtype)
            if e.buf.dtype in INT_TYPES:  # stored in 8 or 32 bits, computed on as the i64 it equals
                h = self.tmp("h")
                self.emit(f"{h} = load {T.MEM_TYPES[e.buf.dtype]}, ptr {p}, align 1")
                self.emit(f"{r} = {'zext' if e.buf.dtype == U8 else 'sext'} {T.MEM_TYPES[e.buf.dtype]} {h} to i64")
                return r
            self.emit(f"{r} = load {T.TYPES[e.buf.dtype]}, ptr {p}, align 4")
            return r
        if isinstance(e, Select):
            ga, gb = (any(isinstance(x, Load) and not self.in_bounds(x) for x in walk_expr(br)) for br in (e.a, e.b))
            if ga or gb:
                return self.guarded(e, ga, gb)
            c, a, b = self.expr(e.cond), self.expr(e.a), self.expr(e.b)
            r = self.tmp("s")
            self.emit(f"{r} = select i1 {c}, {T.TYPES[e.dtype]} {a}, {T.TYPES[e.dtype]} {b}")
            return r
        if isinstance(e, Call):
            fn, helpers, decls = T.MATH[e.fn]
            self.mod.need(helpers, decls)
            ty = T.TYPES[e.dtype]
            args = ", ".join(f"{ty} {self.expr(a)}" for a in e.args)
            r = self.tmp("c")
            self.emit(f"{r} = call {T.SAFE if e.dtype == F32 else ''} {ty} @{fn}({args})")
            return r
        if isinstance(e, Cast):
            a = self.expr(e.a)
            if e.to in HALF_TYPES:  # rounded to the half type, kept as the float it equals
                f = self.to_float(a, e.a.dtype)
                return self.widen(self.narrow(f, e.to), e.to)
            if e.to in INT_TYPES:  # saturated into the stored integer's range, kept as the i64 it equals
                return self.saturate(a, e.a.dtype, e.to)
            r = self.tmp("x")
            if e.a.dtype == I64 and e.to == F32:
                self.emit(f"{r} = sitofp i64 {a} to float")
            elif e.a.dtype == F32 and e.to == I64:
                self.emit(f"{r} = fptosi float {a} to i64")
            elif e.a.dtype == e.to:
                return a
            elif e.a.dtype == BOOL and e.to in (F32, I64):
                self.emit(f"{r} = {'uitofp' if e.to == F32 else 'zext'} i1 {a} to {T.TYPES[e.to]}")
            elif e.to == BOOL and e.a.dtype == F32:
                self.emit(f"{r} = fcmp une float {a}, 0.0")
            elif e.to == BOOL and e.a.dtype == I64:
                self.emit(f"{r} = icmp ne i64 {a}, 0")
            else:
                raise CodegenError(f"cannot cast {e.a.dtype} to {e.to}")
            return r
        raise CodegenError(f"cannot generate code for expression {e!r}")

    def saturate(self, a: str, dtype: str, to: str) -> str:
        """An f32, i64 or bool register's value in ``to``'s range (``INT_BOUNDS``), as an i64: a float
        truncated toward zero and saturated, NaN to 0 (LLVM's ``fptosi.sat``), an i64 clamped."""
        lo, hi = INT_BOUNDS[to]
        r = self.tmp("q")
        if dtype == BOOL:
            self.emit(f"{r} = zext i1 {a} to i64")
            return r
        if dtype == F32 and to != I32:  # a byte's bounds are floats: NaN to 0, clamped, then an in-range
            # conversion (vcvttps2dq on 16 lanes; LLVM scalarizes a vector fptosi.sat on x86)
            self.mod.need((), ("llvm.minnum.f32", "llvm.maxnum.f32"))
            self.emit(f"{r}.n = fcmp uno float {a}, 0.0")
            self.emit(f"{r}.z = select i1 {r}.n, float 0.0, float {a}")
            self.emit(f"{r}.l = call float @llvm.maxnum.f32(float {r}.z, float {T.f32_literal(lo)})")
            self.emit(f"{r}.h = call float @llvm.minnum.f32(float {r}.l, float {T.f32_literal(hi)})")
            self.emit(f"{r}.i = fptosi float {r}.h to i32")
            self.emit(f"{r} = sext i32 {r}.i to i64")
            return r
        if dtype == F32:  # int32's upper bound is no float: LLVM's saturating conversion
            self.mod.need((), ("llvm.fptosi.sat.i32.f32",))
            self.emit(f"{r}.f = call i32 @llvm.fptosi.sat.i32.f32(float {a})")
            self.emit(f"{r} = sext i32 {r}.f to i64")
            return r
        self.mod.need((), ("llvm.smax.i64", "llvm.smin.i64"))
        self.emit(f"{r}.l = call i64 @llvm.smax.i64(i64 {a}, i64 {lo})")
        self.emit(f"{r} = call i64 @llvm.smin.i64(i64 {r}.l, i64 {hi})")
        return r

    def to_float(self, a: str, dtype: str) -> str:
        """An i64 or bool register's value as a float (an f32 one as is).  An int64 then rounded to a half
        type is rounded twice: right for float16 (whatever it does not overflow on is below 2**24, exact in
        float32) and for bfloat16 below 2**24; above that a bfloat16 tie may round one unit off."""
        if dtype == F32:
            return a
        r = self.tmp("x")
        self.emit(f"{r} = {'sitofp i64' if dtype == I64 else 'uitofp i1'} {a} to float")
        return r

    def narrow(self, f: str, half: str) -> str:
        """The float ``f`` rounded to nearest even into ``half``'s 16 bits (a ``half`` or an ``i16`` register).
        float16: LLVM's fptrunc (F16C's vcvtps2ph: overflow to inf, subnormals kept).  bfloat16: the upper 16
        bits after adding 0x7fff plus the kept part's lowest bit (ties to even; an overflow carries into inf),
        and every NaN as 0x7fc0, as torch's c10::BFloat16 rounds (no instruction needed: AVX-512 BF16 is
        not on every machine)."""
        r = self.tmp("n")
        if half == F16:
            self.emit(f"{r} = fptrunc float {f} to half")
            return r
        assert half == BF16
        b, lsb, bias, hi, nan, w = (self.tmp(x) for x in ("nb", "nl", "nk", "nh", "nn", "nw"))
        self.emit(f"{b} = bitcast float {f} to i32")
        self.emit(f"{lsb} = lshr i32 {b}, 16")
        self.emit(f"{bias} = and i32 {lsb}, 1")
        self.emit(f"{hi} = add i32 {bias}, 32767")
        self.emit(f"{w} = add i32 {b}, {hi}")
        self.emit(f"{hi}.s = lshr i32 {w}, 16")
        self.emit(f"{nan} = fcmp uno float {f}, 0.0")
        self.emit(f"{w}.q = select i1 {nan}, i32 32704, i32 {hi}.s")
        self.emit(f"{r} = trunc i32 {w}.q to i16")
        return r

    def widen(self, h: str, half: str) -> str:
        """A 16-bit ``half`` register (``narrow``'s result, or a load) as the float it equals (exact)."""
        r = self.tmp("w")
        if half == F16:
            self.emit(f"{r} = fpext half {h} to float")
            return r
        z = self.tmp("wz")
        self.emit(f"{z} = zext i16 {h} to i32")
        self.emit(f"{z}.s = shl i32 {z}, 16")
        self.emit(f"{r} = bitcast i32 {z}.s to float")
        return r

    def in_bounds(self, ld: Load) -> bool:
        """Whether every element ``ld`` can address lies inside its buffer, given the loop ranges."""
        buf = ld.buf
        b = bounds(simplify(flat_offset(buf, ld.idx), self.ranges), self.ranges)
        if b is None or buf.size == 0:
            return False
        spans = [(n - 1) * st for n, st in zip(buf.shape, buf.elem_strides, strict=False)]
        lo = buf.offset + sum(x for x in spans if x < 0)
        hi = buf.offset + sum(x for x in spans if x > 0)
        return lo <= b[0] and b[1] <= hi

    def guarded(self, e: Select, ga: bool, gb: bool) -> str:
        """``select(c, a, b)`` where ``a`` (``ga``) and/or ``b`` (``gb``) read memory they may not own when not
        selected (a convolution tap in the padding, a panel's lanes past the last column): such a side is
        computed behind a branch, which LLVM's vectorizer turns into masked loads (contiguous) or masked
        gathers."""
        c = self.expr(e.cond)
        va = None if ga else self.expr(e.a)
        vb = None if gb else self.expr(e.b)
        pre = self.block
        la, lb, done = self.label("sa"), self.label("sb"), self.label("sj")
        self.emit(f"br i1 {c}, label %{la if ga else done}, label %{lb if gb else done}")
        ends = {}
        for lab, side, guard in ((la, e.a, ga), (lb, e.b, gb)):
            if guard:
                self.start_block(lab)
                ends[lab] = (self.expr(side), self.block)
                self.emit(f"br label %{done}")
        self.start_block(done)
        ia = ends[la] if ga else (va, pre)
        ib = ends[lb] if gb else (vb, pre)
        r = self.tmp("s")
        self.emit(f"{r} = phi {T.TYPES[e.dtype]} [ {ia[0]}, %{ia[1]} ], [ {ib[0]}, %{ib[1]} ]")
        return r

    def flags(self, e: Bin) -> str:
        """Fast-math flags of a float op: reassociation only for a reduction's accumulate; a division exact."""
        if e.op == "/":
            return T.DIV
        return T.FAST if id(e) in self.accumulates else T.SAFE

    def binop(self, e: Bin) -> str:
        ta = e.a.dtype
        if e.op in ("//", "%"):
            return self.divmod(e)
        a, b = self.expr(e.a), self.expr(e.b)
        if ta == I64 and e.op in T.I64_BINOPS:  # index arithmetic: folded where it can be, once per block
            return _folded(e.op, a, b) or self.pure(f"{T.I64_BINOPS[e.op]} i64 {a}, {b}")
        if ta == I64 and e.op in T.I64_MINMAX:
            fn = T.I64_MINMAX[e.op]
            self.mod.need([], [fn])
            return _folded(e.op, a, b) or self.pure(f"call i64 @{fn}(i64 {a}, i64 {b})")
        if e.op in T.I64_CMP and ta == I64:
            return self.pure(f"icmp {T.I64_CMP[e.op]} i64 {a}, {b}")
        r = self.tmp()
        if e.op in T.BOOL_OPS:
            self.emit(f"{r} = {T.BOOL_OPS[e.op]} i1 {a}, {b}")
        elif e.op in ("==", "!=") and ta == BOOL:
            self.emit(f"{r} = icmp {T.I64_CMP[e.op]} i1 {a}, {b}")
        elif e.op in T.F32_CMP and ta == F32:
            self.emit(f"{r} = fcmp {T.F32_CMP[e.op]} float {a}, {b}")
        elif ta == F32 and e.op in T.F32_BINOPS:
            self.emit(f"{r} = {T.F32_BINOPS[e.op]} {self.flags(e)} float {a}, {b}")
        elif ta == F32 and e.op in T.F32_MINMAX:
            fn = T.F32_MINMAX[e.op]
            self.mod.need([], [fn])
            self.emit(f"{r} = call {self.flags(e)} float @{fn}(float {a}, float {b})")
        else:
            raise CodegenError(f"no code for {ta} operator {e.op}")
        return r

    def divmod(self, e: Bin) -> str:
        """Floor division / modulo; plain sdiv/srem when the numerator is known non-negative."""
        a, b = self.expr(e.a), self.expr(e.b)
        rng = bounds(e.a, self.ranges)
        if not (isinstance(e.b, IntImm) and e.b.value > 0):
            raise CodegenError(f"index division needs a positive constant divisor, got {e.b!r}")
        if (x := _const(a)) is not None:  # floor division and modulo, as the IR defines them (Python's)
            return str(x // e.b.value if e.op == "//" else x % e.b.value)
        if rng is not None and rng[0] >= 0:
            return self.pure(f"{'sdiv' if e.op == '//' else 'srem'} i64 {a}, {b}", "q" if e.op == "//" else "r")
        q, r = self.tmp("q"), self.tmp("r")
        self.emit(f"{q} = sdiv i64 {a}, {b}")
        self.emit(f"{r} = srem i64 {a}, {b}")
        neg = self.tmp()
        self.emit(f"{neg} = icmp slt i64 {r}, 0")
        out = self.tmp()
        if e.op == "//":
            d = self.tmp()
            self.emit(f"{d} = zext i1 {neg} to i64")
            self.emit(f"{out} = sub i64 {q}, {d}")
        else:
            s = self.tmp()
            self.emit(f"{s} = add i64 {r}, {b}")
            self.emit(f"{out} = select i1 {neg}, i64 {s}, i64 {r}")
        return out

    def address(self, buf: Buffer, idx) -> str:
        return self.pointer(buf, flat_offset(buf, idx))

    def pointer(self, buf: Buffer, offset: Expr) -> str:
        """Address of element ``offset`` (flat, in elements) of ``buf``."""
        off = simplify(offset, self.ranges)
        base = self.ptrs.get(buf.name)
        if base is None:
            raise CodegenError(f"kernel {self.k.name}: buffer {buf.name} is neither a parameter nor allocated")
        o = self.expr(off)
        if o == "0":  # zero, or folded to it
            return base
        return self.pure(f"getelementptr inbounds {T.MEM_TYPES[buf.dtype]}, ptr {base}, i64 {o}", "p")

    # ------------------------------------------------------------ statements
    def stmt(self, s: Stmt) -> None:
        if isinstance(s, Seq):
            for x in s.stmts:
                self.stmt(x)
        elif isinstance(s, Stage):
            self.emit(f"; stage {s.name}")
            self.stmt(s.body)
        elif isinstance(s, Store):
            e = s.value
            if isinstance(e, Bin) and e.op in ("+", "*", "min", "max") and Load(s.buf, s.idx) in (e.a, e.b):
                self.accumulates.add(id(e))  # a reduction step: reassociation lets it vectorize
            v = self.expr(e)
            p = self.address(s.buf, s.idx)
            if s.buf.dtype == BOOL:
                b = self.tmp("b")
                self.emit(f"{b} = zext i1 {v} to i8")
                self.emit(f"store i8 {b}, ptr {p}, align 1")
            elif s.buf.dtype in HALF_TYPES:
                self.emit(f"store {T.MEM_TYPES[s.buf.dtype]} {self.narrow(v, s.buf.dtype)}, ptr {p}, align 2")
            elif s.buf.dtype in INT_TYPES:  # the value is in range (a Cast saturated it): truncation is exact
                b = self.tmp("b")
                self.emit(f"{b} = trunc i64 {v} to {T.MEM_TYPES[s.buf.dtype]}")
                self.emit(f"store {T.MEM_TYPES[s.buf.dtype]} {b}, ptr {p}, align 1")
            else:
                self.emit(f"store {T.TYPES[s.buf.dtype]} {v}, ptr {p}, align 4")
        elif isinstance(s, For):
            self.loop(s)
        elif isinstance(s, If):
            self.if_(s)
        elif isinstance(s, Allocate):
            if s.buf.name in self.ptrs:
                raise CodegenError(f"buffer {s.buf.name} allocated twice")
            p = f"%l.{s.buf.name}"
            self.allocas.append(f"{p} = alloca [{s.buf.size} x {T.MEM_TYPES[s.buf.dtype]}], align 64")
            self.ptrs[s.buf.name] = p
            self.stmt(s.body)
        elif isinstance(s, Intrinsic):
            fn = INTRINSICS.get(s.name)
            if fn is None:
                raise CodegenError(f"no LLVM intrinsic named {s.name}")
            fn(self, s)
        else:
            raise CodegenError(f"cannot generate code for statement {s!r}")

    def loop(self, s: For) -> None:
        if s.kind in (LoopKind.BLOCKS, LoopKind.THREADS):
            raise CodegenError(
                f"kernel {self.k.name}: loop {s.var.name} is bound to GPU {s.kind.value}; not a CPU loop"
            )
        is_root_par = s is self.root and s.kind is LoopKind.PARALLEL
        ext_b = bounds(s.extent, self.ranges)
        if s.kind is LoopKind.UNROLLED and isinstance(s.extent, IntImm) and s.extent.value <= T.MAX_UNROLL:
            self.ranges[s.var.name] = (0, max(0, s.extent.value - 1))
            for c in range(s.extent.value):
                self.env[s.var.name] = str(c)
                self.ranges[s.var.name] = (c, c)
                self.stmt(s.body)
            del self.env[s.var.name]
            return
        if not is_root_par and isinstance(s.extent, IntImm) and s.extent.value == 1:
            self.env[s.var.name] = "0"
            self.ranges[s.var.name] = (0, 0)
            self.stmt(s.body)
            del self.env[s.var.name]
            return
        if is_root_par:
            start, ext = "%lo", "%hi"
        else:
            start, ext = "0", self.expr(s.extent)
        pre = self.block
        head, body, latch, exit_ = (
            self.label(f"{s.var.name.replace('.', '_')}.{x}") for x in ("head", "body", "latch", "exit")
        )
        iv = self.tmp(s.var.name.replace(".", "_") + ".")
        nxt = self.tmp("n")
        self.emit(f"br label %{head}")
        self.start_block(head)
        self.emit(f"{iv} = phi i64 [ {start}, %{pre} ], [ {nxt}, %{latch} ]")
        cond = self.tmp()
        self.emit(f"{cond} = icmp slt i64 {iv}, {ext}")
        self.emit(f"br i1 {cond}, label %{body}, label %{exit_}")
        self.start_block(body)
        self.env[s.var.name] = iv
        self.ranges[s.var.name] = (0, max(0, (ext_b[1] if ext_b else 1 << 40) - 1))
        self.stmt(s.body)
        del self.env[s.var.name]
        self.emit(f"br label %{latch}")
        self.start_block(latch)
        self.emit(f"{nxt} = add nuw nsw i64 {iv}, 1")
        kind = s.kind.value
        if s.kind is LoopKind.VECTORIZED and _short_strided(s):
            kind = "vectorized-strided"
        elif s.kind is LoopKind.VECTORIZED and _latency_bound(s, ext_b, self.mod.target.vector_width):
            kind = "vectorized-chains"
        if s.kind is LoopKind.SERIAL and any(isinstance(x, For) for x in walk_stmt(s.body)):
            kind = "serial-outer"  # LLVM would fully unroll constant outer loops: code size, compile time
            if _encloses_vector_loop(s.body):
                kind = "serial-outer-vector"  # the schedule chose the vector axis inside (see LOOP_METADATA)
        md = self.mod.loop_md(kind)
        self.emit(f"br label %{head}" + (f", !llvm.loop {md}" if md else ""))
        self.start_block(exit_)

    def if_(self, s: If) -> None:
        c = self.expr(s.cond)
        then, els, done = self.label("then"), self.label("else"), self.label("endif")
        self.emit(f"br i1 {c}, label %{then}, label %{els if s.orelse else done}")
        self.start_block(then)
        self.stmt(s.then)
        self.emit(f"br label %{done}")
        if s.orelse:
            self.start_block(els)
            self.stmt(s.orelse)
            self.emit(f"br label %{done}")
        self.start_block(done)

    # ------------------------------------------------------------ function
    def function(self, name: str) -> str:
        params = []
        for i, b in enumerate(self.k.params):
            self.ptrs[b.name] = f"%param.{i}"
            params.append(f"ptr noalias nocapture align 4 %param.{i}")
        self.stmt(self.k.body)
        body = "\n".join(["entry:", *("  " + a for a in self.allocas), *self.lines, "  ret void"])
        sig = ", ".join([*params, "i64 %lo", "i64 %hi"])
        wrapper = [f"define void @{name}(ptr %args, i64 %lo, i64 %hi) nounwind {{", "entry:"]
        for i in range(len(self.k.params)):
            wrapper.append(f"  %g{i} = getelementptr ptr, ptr %args, i64 {i}")
            wrapper.append(f"  %a{i} = load ptr, ptr %g{i}, align 8")
        args = ", ".join([f"ptr %a{i}" for i in range(len(self.k.params))] + ["i64 %lo", "i64 %hi"])
        wrapper += [f"  call void @{name}.body({args})", "  ret void", "}"]
        return f"define internal void @{name}.body({sig}) nounwind {{\n{body}\n}}\n\n" + "\n".join(wrapper)


class ModuleBuilder:
    """One LLVM module for ``target``: declarations, helpers, intrinsic routines, functions, metadata."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.helpers: list[str] = []
        self.decls: list[str] = []
        self.extra: list[str] = []  # intrinsic function definitions
        self.extra_keys: set[str] = set()
        self.md: list[str] = []
        self.libraries: dict[str, str] = {}  # shared routine modules the kernel calls (name -> IR text)

    def need(self, helpers, decls) -> None:
        for h in helpers:
            if h not in self.helpers:
                self.helpers.append(h)
        for d in decls:
            if d not in self.decls:
                self.decls.append(d)

    def define(self, key: str, text: Callable[[], str], decls=()) -> None:
        if key not in self.extra_keys:
            self.extra_keys.add(key)
            self.extra.append(text())
        self.need([], decls)

    def loop_md(self, kind: str) -> str | None:
        entries = T.loop_metadata(kind, self.target.vector_width)
        if not entries:
            return None
        # a distinct node per loop is required by LLVM; entries may be shared
        base = len(self.md)
        ids = [f"!{base + 1 + j}" for j in range(len(entries))]
        self.md.append(f"!{base} = distinct !{{!{base}, {', '.join(ids)}}}")
        for j, e in enumerate(entries):
            self.md.append(f"!{base + 1 + j} = {e}")
        return f"!{base}"

    def text(self, functions: list[str]) -> str:
        parts = [T.DECLS[d] for d in self.decls]
        parts += [T.HELPERS[h]() for h in self.helpers]
        parts += self.extra
        parts += functions
        parts += self.md
        return "\n\n".join(parts) + "\n"


def kernel_module(kernel: Kernel, target: Target, name: str | None = None) -> tuple[str, dict[str, str]]:
    """LLVM module text defining one kernel function for ``target``, and the shared library modules it calls."""
    mb = ModuleBuilder(target)
    fe = FunctionEmitter(kernel, mb)
    fn = fe.function(name or kernel.name)
    return mb.text([fn]), mb.libraries


def kernel_to_llvm(kernel: Kernel, target: Target, name: str | None = None) -> str:
    """A complete LLVM module (text) defining one kernel function for ``target``.

    >>> print(kernel_to_llvm(kernel, parse_target("llvm"), "relu"))    # doctest: +SKIP
    define internal void @relu.body(ptr noalias nocapture align 4 %param.0, ...
    """
    return kernel_module(kernel, target, name)[0]


SHORT_STRIDED_MAX = 64  # iterations: a vectorized loop this short that reads at a stride keeps LLVM's unroller off
SHORT_STRIDED_MAX_STEP = 4  # a convolution's or pool's column stride; not a layout change's (16: NCHWc blocks)


def _short_strided(loop: For) -> bool:
    """Whether vectorized ``loop`` runs a constant count under ``SHORT_STRIDED_MAX`` and reads a kernel
    parameter at a stride of 2 to ``SHORT_STRIDED_MAX_STEP`` along it: a phase-split copy of an input row (see
    ``LOOP_METADATA["vectorized-strided"]``)."""
    if not isinstance(loop.extent, IntImm) or loop.extent.value >= SHORT_STRIDED_MAX:
        return False
    v = loop.var.name
    loads = [ld for st in walk_stmt(loop.body) for e in stmt_exprs(st) for ld in loads_of(e)]
    steps = (affine_in(flat_offset(ld.buf, ld.idx), {v}) for ld in loads if ld.buf.scope == "global")
    return any(f is not None and 1 < abs(f[0].get(v, 0)) <= SHORT_STRIDED_MAX_STEP for f in steps)


# Functions computed inline by a long dependent chain (``tables.HELPERS``: range reduction, a polynomial, a scale)
# and the division: a loop of them is latency bound at one vector an iteration (LOOP_METADATA["vectorized-chains"])
CHAIN_FUNCS = frozenset({"exp", "exp88", "tanh", "sigmoid", "gelu_tanh"})
# At least this many vectors' worth of iterations for the interleaved loop, unless the interleaving leaves no more to
# the scalar remainder than one vector at a time does: the vectorizer runs a trip count under width x interleave
# scalar, and a remainder of up to width x interleave - 1 iterations one at a time
CHAIN_MIN_VECTORS = 64


def _latency_bound(loop: For, extent: tuple[int, int] | None, width: int) -> bool:
    """Whether vectorized ``loop`` computes a ``CHAIN_FUNCS`` function or divides floats, over an extent (its
    bounds: ``extent``) long enough to interleave ``tables.CHAIN_INTERLEAVE`` vectors: at least
    ``CHAIN_MIN_VECTORS`` vectors, or a constant one that leaves the scalar remainder as one vector at a time does."""
    if extent is None or width < 1:
        return False
    n, step = extent[0], width * T.CHAIN_INTERLEAVE
    exact = isinstance(loop.extent, IntImm) and n >= step and n % step == n % width
    if not exact and n < CHAIN_MIN_VECTORS * width:
        return False
    for st in walk_stmt(loop.body):
        for e in stmt_exprs(st):
            for x in walk_expr(e):
                if isinstance(x, Call) and x.fn in CHAIN_FUNCS:
                    return True
                if isinstance(x, Bin) and x.op == "/" and x.dtype == F32:
                    return True
    return False


def _encloses_vector_loop(body: Stmt) -> bool:
    """Whether ``body`` (a loop's) holds, with no other loop between, a vectorized loop whose loads each read
    one element or consecutive ones (a transposing copy, strided along the vector loop, is left to LLVM,
    which vectorizes the outer loop instead when that reads consecutive elements)."""
    if isinstance(body, For):
        if body.kind is not LoopKind.VECTORIZED:
            return False
        v = body.var.name
        steps = (affine_in(flat_offset(ld.buf, ld.idx), {v}) for ld in loads_of(body.body))
        return all(f is not None and f[0].get(v, 0) in (0, 1) for f in steps)
    if isinstance(body, (Allocate, Stage)):
        return _encloses_vector_loop(body.body)
    if isinstance(body, Seq):
        return any(_encloses_vector_loop(x) for x in body.stmts)
    if isinstance(body, If):
        return _encloses_vector_loop(body.then) or (body.orelse is not None and _encloses_vector_loop(body.orelse))
    return False
