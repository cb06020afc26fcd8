"""One walker from loop IR to CUDA C: one ``__global__`` function per top-level stage.

A kernel's stages run one after another (a stage may read what the one before wrote), and CUDA
blocks of one launch cannot wait for each other, so each top-level statement is its own launch::

    extern "C" __global__ void __launch_bounds__(256) NAME_s0(float* __restrict__ b_out, const float* ...) {
      const long long i0_o = blockIdx.x;          // the stage's ``blocks`` loop
      const long long i0_i = threadIdx.x;         // the ``threads`` loop directly inside it
      if (i0_i < 100) { ... }                     // only when the last block is partial
    }

A stage without a ``blocks`` loop runs on one thread (grid 1 x 1).  Every function takes every
kernel parameter, in the kernel's ABI order, so one argument array serves all of a kernel's
launches.  Other loop kinds run serially in a thread (``unrolled`` ones get ``#pragma unroll``).
Spellings are looked up in ``tables``; tensorized routines in ``intrinsics.INTRINSICS``.

A buffer of a half type (float16, bfloat16: ``lower.ir.HALF_TYPES``) holds its 16 bits (``unsigned short``):
a load widens the element to the float it equals, a store and a ``Cast`` round to nearest even
(``tables.WIDEN`` / ``tables.NARROW``), so a half kernel computes in float registers, as the CPU backend's
does.  The GEMM tiles widen half operands as they stage them (no half-precision tensor-core instructions).

    >>> mod = kernel_to_cuda(kernel, cuda_target("sm_90"))  # doctest: +SKIP
    >>> [(l.name, l.grid, l.block) for l in mod.launches]      # doctest: +SKIP
    [('relu_s0', 64, 256)]
"""

from __future__ import annotations

from dataclasses import dataclass

from lower.cuda import tables as T
from lower.cuda.gemm_tile import emit_gemm_tile, is_tile
from lower.cuda.intrinsics import INTRINSICS
from lower.cuda.rows import emit_block_rows
from lower.cuda.wgmma_tile import emit_wgmma_tile
from lower.ir import (
    BOOL,
    F32,
    HALF_TYPES,
    I64,
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
    bounds,
    flat_offset,
    simplify,
    stores_of,
    top_stmts,
    unwrap_locals,
    walk_stmt,
)
from lower.schedule.gpu_steps import WGMMA_TILE, is_block_rows, tile_params
from rewrite.ir.errors import CodegenError
from rewrite.ir.target import Target


@dataclass(frozen=True)
class LaunchSpec:
    """One ``__global__`` function of a kernel and its launch shape (1-d grid and block)."""

    name: str
    grid: int
    block: int
    smem: int = 0  # dynamic shared memory, bytes


@dataclass(frozen=True)
class CudaModule:
    """CUDA C source of one kernel: its functions, launched in order with the same arguments."""

    text: str
    launches: tuple[LaunchSpec, ...]


class FunctionEmitter:
    """Emits the ``__global__`` function of one top-level statement of a kernel."""

    def __init__(self, kernel: Kernel, module: ModuleBuilder) -> None:
        self.k = kernel
        self.mod = module
        self.lines: list[str] = []
        self.depth = 1
        self.env: dict[str, str] = {}  # loop var -> C identifier
        self.ranges: dict[str, Range] = {}
        self.ptrs: dict[str, str] = {}  # buffer name -> C identifier
        self.used_idents: set[str] = set()

    # ------------------------------------------------------------ plumbing
    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def fresh(self, name: str, prefix: str) -> str:
        base = prefix + T.ident(name)
        out, n = base, 0
        while out in self.used_idents:
            n += 1
            out = f"{base}_{n}"
        self.used_idents.add(out)
        return out

    # ------------------------------------------------------------ expressions
    def expr(self, e: Expr) -> str:
        if isinstance(e, IntImm):
            return f"{e.value}LL" if abs(e.value) >= 1 << 31 else str(e.value)
        if isinstance(e, FloatImm):
            return T.f32_literal(e.value)
        if isinstance(e, Var):
            try:
                return self.env[e.name]
            except KeyError:
                raise CodegenError(f"kernel {self.k.name}: variable {e.name} used outside its loop") from None
        if isinstance(e, Load):
            return self.load(e.buf, e.idx)
        if isinstance(e, Bin):
            return self.binop(e)
        if isinstance(e, Select):
            return f"({self.expr(e.cond)} ? {self.expr(e.a)} : {self.expr(e.b)})"
        if isinstance(e, Call):
            fn, helpers = T.MATH[e.fn]
            self.mod.need(*helpers)
            return f"{fn}({', '.join(self.expr(a) for a in e.args)})"
        if isinstance(e, Cast):
            if e.a.dtype == e.to:
                return self.expr(e.a)
            if e.to in HALF_TYPES:  # rounded to the half type, kept as the float it equals
                self.mod.need(e.to)
                return f"{T.WIDEN[e.to]}({T.NARROW[e.to]}({self.float_of(e.a)}))"
            if (e.a.dtype, e.to) in ((I64, F32), (F32, I64), (BOOL, I64), (BOOL, F32)):
                return f"(({T.TYPES[e.to]})({self.expr(e.a)}))"  # C's conversions: truncation; true is 1
            if e.to == BOOL:  # nonzero is true (NaN too), as torch's
                return f"({self.expr(e.a)} != 0)"
            raise CodegenError(f"kernel {self.k.name}: cannot cast {e.a.dtype} to {e.to}")
        raise CodegenError(f"kernel {self.k.name}: cannot generate code for expression {e!r}")

    def binop(self, e: Bin) -> str:
        ta = e.a.dtype
        if e.op in ("//", "%"):
            return self.divmod(e)
        a, b = self.expr(e.a), self.expr(e.b)
        if e.op in T.BOOL_OPS:
            return f"({a} {T.BOOL_OPS[e.op]} {b})"
        if e.op in T.CMP_OPS:
            return f"({a} {T.CMP_OPS[e.op]} {b})"
        if ta == F32 and e.op in T.F32_BINOPS:
            return f"({a} {T.F32_BINOPS[e.op]} {b})"
        if ta == F32 and e.op in T.F32_MINMAX:
            return f"{T.F32_MINMAX[e.op]}({a}, {b})"
        if ta == I64 and e.op in T.I64_BINOPS:
            return f"({a} {T.I64_BINOPS[e.op]} {b})"
        if ta == I64 and e.op in T.I64_MINMAX:
            self.mod.need("minmax_i64")
            return f"{T.I64_MINMAX[e.op]}({a}, {b})"
        raise CodegenError(f"kernel {self.k.name}: no code for {ta} operator {e.op}")

    def divmod(self, e: Bin) -> str:
        """Floor division / modulo: C's truncating ``/`` and ``%`` when the numerator is known non-negative."""
        if not (isinstance(e.b, IntImm) and e.b.value > 0):
            raise CodegenError(f"kernel {self.k.name}: index division needs a positive constant divisor, got {e.b!r}")
        a, b = self.expr(e.a), self.expr(e.b)
        rng = bounds(e.a, self.ranges)
        if rng is not None and rng[0] >= 0:
            return f"({a} {'/' if e.op == '//' else '%'} {b})"
        self.mod.need("floordiv")
        return f"{'eqsat_floordiv' if e.op == '//' else 'eqsat_floormod'}({a}, {b})"

    def float_of(self, e: Expr) -> str:
        """``e`` (f32, i64 or bool) as a float, for a rounding to a half type.  An int64 is then rounded twice:
        right for float16 (whatever it does not overflow on is below 2**24, exact in float32) and for bfloat16
        below 2**24, as on the CPU backend."""
        return self.expr(e) if e.dtype == F32 else f"((float)({self.expr(e)}))"

    def address(self, buf: Buffer, idx: tuple[Expr, ...]) -> str:
        """The element ``buf[idx]`` as a C lvalue of its storage type (16 bits for a half type)."""
        base = self.ptrs.get(buf.name)
        if base is None:
            raise CodegenError(f"kernel {self.k.name}: buffer {buf.name} is neither a parameter nor allocated")
        off = simplify(flat_offset(buf, idx), self.ranges)
        return f"{base}[{self.expr(off)}]"

    def load(self, buf: Buffer, idx: tuple[Expr, ...]) -> str:
        """The value of ``buf[idx]`` in a register: a half element widened to the float it equals (exact)."""
        if buf.dtype in HALF_TYPES:
            self.mod.need(buf.dtype)
            return f"{T.WIDEN[buf.dtype]}({self.address(buf, idx)})"
        return self.address(buf, idx)

    def store(self, buf: Buffer, idx: tuple[Expr, ...], value: str) -> str:
        """The C statement storing the register value ``value`` (C text) at ``buf[idx]``: into a half element
        rounded to nearest even."""
        if buf.dtype in HALF_TYPES:
            self.mod.need(buf.dtype)
            value = f"{T.NARROW[buf.dtype]}({value})"
        return f"{self.address(buf, idx)} = {value};"

    def store_stmt(self, s: Store) -> str:
        """A ``Store`` as C.  Into a half buffer, the roundings to its type that the value ends with are dropped
        (rounding twice to one type is rounding once) and a load of the same type is copied as its 16 bits (it
        round-trips exactly), so the common ``y = f16(f(f16 x))`` costs one widening and one rounding."""
        v = s.value
        half = s.buf.dtype
        if half in HALF_TYPES:
            while isinstance(v, Cast) and (v.to == half or (v.to == F32 and v.a.dtype == F32)):
                v = v.a
            if isinstance(v, Load) and v.buf.dtype == half:
                return f"{self.address(s.buf, s.idx)} = {self.address(v.buf, v.idx)};"
        return self.store(s.buf, s.idx, self.expr(v))

    # ------------------------------------------------------------ statements
    def stmt(self, s: Stmt) -> None:
        if isinstance(s, Seq):
            for x in s.stmts:
                self.stmt(x)
        elif isinstance(s, Stage):
            self.emit(f"// stage {s.name}")
            self.stmt(s.body)
        elif isinstance(s, Store):
            self.emit(self.store_stmt(s))
        elif isinstance(s, For):
            self.loop(s)
        elif isinstance(s, If):
            self.emit(f"if ({self.expr(s.cond)}) {{")
            self.block(s.then)
            if s.orelse is not None:
                self.emit("} else {")
                self.block(s.orelse)
            self.emit("}")
        elif isinstance(s, Allocate):
            if s.buf.name in self.ptrs:
                raise CodegenError(f"kernel {self.k.name}: buffer {s.buf.name} allocated twice")
            name = self.fresh(s.buf.name, "l_")
            self.emit(f"{T.TYPES[s.buf.dtype]} {name}[{s.buf.size}];")
            self.ptrs[s.buf.name] = name
            self.stmt(s.body)
            del self.ptrs[s.buf.name]
        elif isinstance(s, Intrinsic):
            fn = INTRINSICS.get(s.name)
            if fn is None:
                raise CodegenError(f"kernel {self.k.name}: no CUDA intrinsic named {s.name}")
            fn(self, s)
        else:
            raise CodegenError(f"kernel {self.k.name}: cannot generate code for statement {s!r}")

    def block(self, s: Stmt) -> None:
        self.depth += 1
        self.stmt(s)
        self.depth -= 1

    def loop(self, s: For) -> None:
        if s.kind in (LoopKind.BLOCKS, LoopKind.THREADS):
            raise CodegenError(
                f"kernel {self.k.name}: loop {s.var.name} is bound to {s.kind.value} but is not "
                "a stage's outermost loop (blocks) or directly inside one (threads)"
            )
        ext_b = bounds(s.extent, self.ranges)
        hi = (ext_b[1] if ext_b else 1 << 40) - 1
        if isinstance(s.extent, IntImm) and s.extent.value == 1:
            name = self.fresh(s.var.name, "")
            self.emit(f"{{ const long long {name} = 0;")
            self.env[s.var.name], self.ranges[s.var.name] = name, (0, 0)
            self.block(s.body)
            self.emit("}")
            del self.env[s.var.name]
            return
        ext = self.expr(simplify(s.extent, self.ranges))
        name = self.fresh(s.var.name, "")
        if s.kind is LoopKind.UNROLLED and isinstance(s.extent, IntImm) and s.extent.value <= T.MAX_UNROLL:
            self.emit("#pragma unroll")
        elif s.kind is LoopKind.SERIAL and any(isinstance(x, For) for x in _loops_in(s.body)):
            self.emit("#pragma unroll 1")  # outer serial loops: no code blow-up from unrolling them
        self.emit(f"for (long long {name} = 0; {name} < {ext}; ++{name}) {{")
        self.env[s.var.name], self.ranges[s.var.name] = name, (0, max(0, hi))
        self.block(s.body)
        del self.env[s.var.name]
        self.emit("}")

    # ------------------------------------------------------------ one launch
    def function(self, fname: str, top: Stmt, locals_: list[Buffer]) -> LaunchSpec:
        written = {st.buf.name for st in stores_of(top)}
        params = []
        for b in self.k.params:
            name = self.fresh(b.name, "b_")
            self.ptrs[b.name] = name
            qual = "" if b.name in written else "const "
            params.append(f"{qual}{T.TYPES[b.dtype]}* __restrict__ {name}")
        for b in locals_:
            name = self.fresh(b.name, "l_")
            self.emit(f"{T.TYPES[b.dtype]} {name}[{b.size}];")
            self.ptrs[b.name] = name
        grid, block, smem = 1, 1, 0
        inner = top
        while isinstance(inner, Stage):
            self.emit(f"// stage {inner.name}")
            inner = inner.body
        tile, rows = is_tile(inner), is_block_rows(inner)
        if tile is not None and tile_params(tile[0])[:3] == WGMMA_TILE:
            grid, block, smem = emit_wgmma_tile(self, tile[1])
        elif tile is not None:
            grid, block = emit_gemm_tile(self, *tile)
        elif rows is not None:
            grid, block = emit_block_rows(self, *rows)
        elif isinstance(inner, For) and inner.kind is LoopKind.BLOCKS:
            grid, block = self.bound_nest(inner)
        else:
            self.stmt(top)
        # a tile's registers decide its occupancy: min 1 block per SM keeps ptxas from capping it at 128
        # registers and spilling (a 7 x 7 depthwise conv's im2col tile spilled 12 bytes at 128)
        bounds_attr = f"__launch_bounds__({block}{', 1' if tile is not None else ''}) " if block > 1 else ""
        sig = ", ".join(params) or "void"
        text = "\n".join([f'extern "C" __global__ void {bounds_attr}{fname}({sig}) {{', *self.lines, "}"])
        self.mod.functions.append(text)
        return LaunchSpec(fname, grid, block, smem)

    def bound_nest(self, lp: For) -> tuple[int, int]:
        """A ``blocks`` loop (and a ``threads`` loop directly inside): the grid and block size."""
        if not isinstance(lp.extent, IntImm):
            raise CodegenError(f"kernel {self.k.name}: blocks loop {lp.var.name} needs a constant extent")
        grid = lp.extent.value
        b = self.fresh(lp.var.name, "")
        self.emit(f"const long long {b} = blockIdx.x;")
        self.env[lp.var.name], self.ranges[lp.var.name] = b, (0, grid - 1)
        body = lp.body
        if not (isinstance(body, For) and body.kind is LoopKind.THREADS):
            self.emit("if (threadIdx.x != 0) return;")
            self.stmt(body)
            return grid, 1
        tb = bounds(body.extent, self.ranges)
        if tb is None:
            raise CodegenError(f"kernel {self.k.name}: threads loop {body.var.name} has no constant bound")
        block = tb[1]
        t = self.fresh(body.var.name, "")
        self.emit(f"const long long {t} = threadIdx.x;")
        self.env[body.var.name], self.ranges[body.var.name] = t, (0, block - 1)
        ext = simplify(body.extent, self.ranges)
        if isinstance(ext, IntImm) and ext.value == block:
            self.stmt(body.body)
        else:
            self.emit(f"if ({t} < {self.expr(ext)}) {{")
            self.block(body.body)
            self.emit("}")
        return grid, block


def _loops_in(s: Stmt) -> list[For]:
    out: list[For] = []
    stack = [s]
    while stack:
        x = stack.pop()
        if isinstance(x, For):
            out.append(x)
            stack.append(x.body)
        elif isinstance(x, Seq):
            stack.extend(x.stmts)
        elif isinstance(x, (Stage, Allocate)):
            stack.append(x.body)
        elif isinstance(x, If):
            stack.append(x.then)
            if x.orelse is not None:
                stack.append(x.orelse)
    return out


class ModuleBuilder:
    """One CUDA translation unit for ``target``: helpers, then the kernel's functions."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.helpers: list[str] = []
        self.functions: list[str] = []

    def need(self, *helpers: str) -> None:
        for h in helpers:
            if h not in self.helpers:
                self.helpers.append(h)

    def text(self) -> str:
        head = f"// eqsat CUDA kernel for {self.target.arch or 'sm_?'}"
        return "\n\n".join([head, *(T.HELPERS[h] for h in self.helpers), *self.functions]) + "\n"


def kernel_module(kernel: Kernel, target: Target, name: str | None = None) -> CudaModule:
    """The CUDA C of one kernel: one function per top-level statement, each with its launch shape.

    Kernel-level scratch (``Allocate`` around all stages) is shared by the stages, so such a kernel
    is one function running everything on one thread."""
    base = T.ident(name or kernel.name)
    mb = ModuleBuilder(target)
    locals_, _ = unwrap_locals(kernel.body)
    allocated = [s.buf for s in walk_stmt(kernel.body) if isinstance(s, Allocate)]
    other = next((b for b in (*kernel.params, *allocated) if b.dtype not in T.TYPES), None)
    if other is not None:
        raise CodegenError(
            f"kernel {kernel.name}: buffer {other.name} holds {other.dtype}; "
            f"the cuda target stores {', '.join(T.TYPES)}"
        )
    tops = [unwrap_locals(kernel.body)[1]] if locals_ else top_stmts(kernel.body)
    launches = [FunctionEmitter(kernel, mb).function(f"{base}_s{i}", top, locals_) for i, top in enumerate(tops)]
    return CudaModule(mb.text(), tuple(launches))


def kernel_to_cuda(kernel: Kernel, target: Target, name: str | None = None) -> str:
    """CUDA C source (text) of one kernel for ``target``; its launches are in ``kernel_module``."""
    return kernel_module(kernel, target, name).text


__all__ = ["CudaModule", "LaunchSpec", "kernel_module", "kernel_to_cuda"]
