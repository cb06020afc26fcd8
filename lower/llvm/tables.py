"""What the LLVM walker needs to know about the target, as tables.

The walker (``codegen.py``) is target-neutral in structure: it asks these
tables how to spell an operator, a math function, a loop kind or an
intrinsic.  What depends on the machine (the vector width) comes from the
``Target`` as an argument (``loop_metadata``, ``vector_decls``), never from a
module constant.  A CUDA backend would walk the same loop IR with its own
tables (PTX/NVVM spellings, ``parallel`` mapped to the grid, ``vectorized``
to threads of a block).

    >>> F32_BINOPS["+"], loop_metadata("vectorized", 16)[1]
    ('fadd', '!{!"llvm.loop.vectorize.width", i32 16}')
"""

from __future__ import annotations

import struct

from lower.ir import INT_FUNCS
from lower.ir.nodes import TRIG_FUNCS

LIBM_ONLY = ("asinh", "acosh", "atanh")  # of lower.ir's TRIG_FUNCS, those LLVM has no intrinsic for: libm's

FAST = "reassoc nsz contract arcp afn"  # no nnan/ninf: -inf and NaN must survive
# Elementwise float math has no ``reassoc``: with it (and nsz) LLVM's Reassociate pass cancels
# ``x - x`` or ``(x+x+x) - (x+x)`` inside a fused expression, turning NaN/inf into 0 or x.
# Only a reduction's accumulate (``acc = acc + v``: the vectorizer needs reassoc) gets FAST.
SAFE = "nsz contract arcp afn"
# A division keeps IEEE's correctly rounded quotient (no arcp, which turns x / c into x * (1/c), nor afn): a
# quotient feeding round, floor or a comparison (QuantizeLinear's round(x / scale), floor division) must
# round as torch's and the spec's do, ties included.
DIV = "nsz"

F32_BINOPS = {"+": "fadd", "-": "fsub", "*": "fmul", "/": "fdiv"}
F32_MINMAX = {"min": "llvm.minimum.f32", "max": "llvm.maximum.f32"}  # NaN-propagating, like torch
I64_BINOPS = {"+": "add", "-": "sub", "*": "mul"}
I64_MINMAX = {"min": "llvm.smin.i64", "max": "llvm.smax.i64"}
I64_CMP = {"<": "slt", "<=": "sle", "==": "eq", "!=": "ne", ">": "sgt", ">=": "sge"}
F32_CMP = {"<": "olt", "<=": "ole", "==": "oeq", "!=": "une", ">": "ogt", ">=": "oge"}
BOOL_OPS = {"and": "and", "or": "or"}
TYPES = {"f32": "float", "i64": "i64", "bool": "i1"}
# in memory a bool is a byte (torch.bool); u8 and i8 are bytes too, zero- or sign-extended when loaded
MEM_TYPES = {
    "f32": "float",
    "i64": "i64",
    "bool": "i8",
    "f16": "half",
    "bf16": "i16",
    "u8": "i8",
    "i8": "i8",
    "i32": "i32",
}

DECLS = {
    "llvm.minimum.f32": "declare float @llvm.minimum.f32(float, float)",
    "llvm.maximum.f32": "declare float @llvm.maximum.f32(float, float)",
    "llvm.minnum.f32": "declare float @llvm.minnum.f32(float, float)",
    "llvm.maxnum.f32": "declare float @llvm.maxnum.f32(float, float)",
    "llvm.smin.i64": "declare i64 @llvm.smin.i64(i64, i64)",
    "llvm.smax.i64": "declare i64 @llvm.smax.i64(i64, i64)",
    "llvm.fptosi.sat.i32.f32": "declare i32 @llvm.fptosi.sat.i32.f32(float)",
    "llvm.sqrt.f32": "declare float @llvm.sqrt.f32(float)",
    "llvm.fabs.f32": "declare float @llvm.fabs.f32(float)",
    "llvm.log.f32": "declare float @llvm.log.f32(float)",
    "log1pf": "declare float @log1pf(float)",
    "expm1f": "declare float @expm1f(float)",
    "llvm.sin.f32": "declare float @llvm.sin.f32(float)",
    "llvm.cos.f32": "declare float @llvm.cos.f32(float)",
    **{f"llvm.{f}.f32": f"declare float @llvm.{f}.f32(float)" for f in TRIG_FUNCS if f not in LIBM_ONLY},
    "llvm.atan2.f32": "declare float @llvm.atan2.f32(float, float)",
    "llvm.pow.f32": "declare float @llvm.pow.f32(float, float)",
    **{f"{f}f": f"declare float @{f}f(float)" for f in LIBM_ONLY},
    "llvm.rint.f32": "declare float @llvm.rint.f32(float)",
    "llvm.floor.f32": "declare float @llvm.floor.f32(float)",
    "llvm.ceil.f32": "declare float @llvm.ceil.f32(float)",
    "llvm.roundeven.f32": "declare float @llvm.roundeven.f32(float)",
    "llvm.fma.f32": "declare float @llvm.fma.f32(float, float, float)",
    "llvm.copysign.f32": "declare float @llvm.copysign.f32(float, float)",
    "llvm.prefetch.p0": "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)",
    "llvm.trap": "declare void @llvm.trap() cold noreturn nounwind",
}


def vector_decls(width: int) -> dict[str, str]:
    """Declarations of the ``width``-lane f32 vector intrinsics the GEMM micro-kernel calls, by name.

    ``Module.declare_intrinsic`` cannot declare vector intrinsics (TOOLCHAIN.md): they are spelled here."""
    vf, vm = f"<{width} x float>", f"<{width} x i1>"
    return {
        f"llvm.fma.v{width}f32": f"declare {vf} @llvm.fma.v{width}f32({vf}, {vf}, {vf})",
        f"llvm.masked.load.v{width}f32.p0": f"declare {vf} @llvm.masked.load.v{width}f32.p0(ptr, i32, {vm}, {vf})",
        f"llvm.masked.store.v{width}f32.p0": f"declare void @llvm.masked.store.v{width}f32.p0({vf}, ptr, i32, {vm})",
    }


def f32_literal(v: float) -> str:
    """LLVM spells float constants as the hex of the (f32-rounded) double."""
    r = struct.unpack("<f", struct.pack("<f", float(v)))[0] if abs(v) < 3.5e38 or v != v else float(v)
    return f"0x{struct.unpack('<Q', struct.pack('<d', r))[0]:016X}"


def hexf(v: float) -> str:
    return f32_literal(v)


# ---------------------------------------------------------------- math helpers
# Scalar, branch-free, call-free bodies: after inlining the loop vectorizer
# turns them into <16 x float> code (llvm.exp on vectors would be scalarised
# into expf calls).  exp: Cody-Waite range reduction x = n ln2 + r, a degree-6
# polynomial for e^r (Cephes expf coefficients), 2^n built in the exponent bits
# as two factors 2^(n/2) 2^(n-n/2) so that denormal results (x < -87) stay exact.
_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)


def _exp_core(lo: float, hi: float) -> str:
    """The lines both exps share: ``%x`` clamped to ``[lo, hi]``, reduced to ``n ln2 + r``, ``%q2`` = e^r (the
    polynomial in explicit FMAs: with fmul/fadd pairs LLVM left some uncontracted, and a sigmoid's error grew
    from 1.46e-7 to 1.83e-7) and ``%ni`` = n as an integer."""
    c = _EXP_POLY
    return f"""  %clo = fcmp olt float %x, {hexf(lo)}
  %lo = select i1 %clo, float {hexf(lo)}, float %x
  %chi = fcmp ogt float %lo, {hexf(hi)}
  %xc = select i1 %chi, float {hexf(hi)}, float %lo
  %t = fmul {FAST} float %xc, {hexf(1.4426950408889634)}
  %n = call {FAST} float @llvm.rint.f32(float %t)
  %r2 = call float @llvm.fma.f32(float %n, float {hexf(-0.693359375)}, float %xc)
  %r = call float @llvm.fma.f32(float %n, float {hexf(2.12194440e-4)}, float %r2)
  %p0 = call float @llvm.fma.f32(float %r, float {hexf(c[0])}, float {hexf(c[1])})
  %p1 = call float @llvm.fma.f32(float %p0, float %r, float {hexf(c[2])})
  %p2 = call float @llvm.fma.f32(float %p1, float %r, float {hexf(c[3])})
  %p3 = call float @llvm.fma.f32(float %p2, float %r, float {hexf(c[4])})
  %p9 = call float @llvm.fma.f32(float %p3, float %r, float {hexf(c[5])})
  %rr = fmul {FAST} float %r, %r
  %q1 = call float @llvm.fma.f32(float %p9, float %rr, float %r)
  %q2 = fadd {FAST} float %q1, {hexf(1.0)}
  %ni = fptosi float %n to i32
"""


def _exp_body() -> str:
    # Below -103.972 the result is 0; those lanes run the core on 0 instead of on -104, whose second factor made a
    # subnormal product (0 after the select) and took a microcode assist per lane: a causal attention's softmax
    # (rows half masked with float32's lowest) ran 3.7x slower than unmasked (12x128x128, 1 thread: 591 us
    # against 160).  Lanes in [-103.972, -87.3] still compute their subnormal results exactly.
    return f"""define internal float @eqsat_exp(float %xin) alwaysinline nounwind {{
  %small = fcmp olt float %xin, {hexf(-103.972)}
  %x = select i1 %small, float 0.0, float %xin
{_exp_core(-104.0, 88.75)}  %n1 = ashr i32 %ni, 1
  %n2 = sub i32 %ni, %n1
  %eb1 = add i32 %n1, 127
  %sh1 = shl i32 %eb1, 23
  %sc1 = bitcast i32 %sh1 to float
  %eb2 = add i32 %n2, 127
  %sh2 = shl i32 %eb2, 23
  %sc2 = bitcast i32 %sh2 to float
  %y0 = fmul float %q2, %sc1
  %y = fmul float %y0, %sc2
  %big = fcmp ogt float %xin, {hexf(88.72283)}
  %y1 = select i1 %big, float {hexf(float("inf"))}, float %y
  %y2 = select i1 %small, float 0.0, float %y1
  ret float %y2
}}"""


def _tanh_body() -> str:
    # |x| < 0.4: odd Taylor polynomial (rel. err < 1e-6); else 1 - 2 / (e^{2|x|} + 1); sign restored.
    t = [-1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835]
    return f"""define internal float @eqsat_tanh(float %x) alwaysinline nounwind {{
  %ax = call float @llvm.fabs.f32(float %x)
  %x2 = fmul {FAST} float %ax, %ax
  %a0 = fmul {FAST} float %x2, {hexf(t[3])}
  %a1 = fadd {FAST} float %a0, {hexf(t[2])}
  %a2 = fmul {FAST} float %a1, %x2
  %a3 = fadd {FAST} float %a2, {hexf(t[1])}
  %a4 = fmul {FAST} float %a3, %x2
  %a5 = fadd {FAST} float %a4, {hexf(t[0])}
  %a6 = fmul {FAST} float %a5, %x2
  %a7 = fmul {FAST} float %a6, %ax
  %small = fadd {FAST} float %a7, %ax
  %tx = fmul float %ax, 2.0
  %e = call float @eqsat_exp88(float %tx)
  %e1 = fadd float %e, 1.0
  %q = fdiv float 2.0, %e1
  %big = fsub float 1.0, %q
  %isb = fcmp olt float %ax, {hexf(0.4)}
  %m = select i1 %isb, float %small, float %big
  %y = call float @llvm.copysign.f32(float %m, float %x)
  ret float %y
}}"""


def _exp88_body() -> str:
    # e^x for x clamped to [-88, 88], for sigmoid and tanh, which need no more: 2^n is one factor built in the
    # exponent bits (n in [-127, 127]; n = -127 gives 0), where eqsat_exp keeps denormal results exact with
    # two factors and clamps and selects around them.  1 / (1 + e^-x) is 1 for every x > 87.3 either way, and
    # tanh's 1 - 2 / (e^2|x| + 1) is 1 past 2|x| = 88; below x = -88 a sigmoid stays at 6.1e-39 instead of
    # falling to e^x (an absolute error under 6.1e-39).  A SiLU epilogue over a 96x112x112 output ran ~1.25x
    # faster than through eqsat_exp (the conv and SiLU 1.775 -> 1.417 ms).
    return f"""define internal float @eqsat_exp88(float %x) alwaysinline nounwind {{
{_exp_core(-88.0, 88.0)}  %eb = add i32 %ni, 127
  %sh = shl i32 %eb, 23
  %sc = bitcast i32 %sh to float
  %y = fmul float %q2, %sc
  ret float %y
}}"""


def _sigmoid_body() -> str:
    # 0 below -88 (where exp88's clamp would leave 6.1e-39): exact at -inf, as torch's, so a function that tells
    # 0 from a tiny positive number downstream (pow of a negative base: 1 against NaN) sees what torch sees;
    # between -104 and -88 torch's denormal results are under 6.1e-39 from it
    return """define internal float @eqsat_sigmoid(float %x) alwaysinline nounwind {
  %nx = fneg float %x
  %e = call float @eqsat_exp88(float %nx)
  %d = fadd float %e, 1.0
  %y = fdiv float 1.0, %d
  %lo = fcmp olt float %x, -88.0
  %r = select i1 %lo, float 0.0, float %y
  ret float %r
}"""


def _gelu_body() -> str:
    return f"""define internal float @eqsat_gelu_tanh(float %x) alwaysinline nounwind {{
  %x2 = fmul {FAST} float %x, %x
  %x3 = fmul {FAST} float %x2, %x
  %a = fmul {FAST} float %x3, {hexf(0.044715)}
  %b = fadd {FAST} float %x, %a
  %c = fmul {FAST} float %b, {hexf(0.7978845608028654)}
  %t = call float @eqsat_tanh(float %c)
  %u = fadd {FAST} float %t, 1.0
  %h = fmul {FAST} float %x, 0.5
  %y = fmul {FAST} float %h, %u
  ret float %y
}}"""


def _rsqrt_body() -> str:
    return """define internal float @eqsat_rsqrt(float %x) alwaysinline nounwind {
  %s = call float @llvm.sqrt.f32(float %x)
  %y = fdiv float 1.0, %s
  ret float %y
}"""


# math function (lower.ir.MATH_FUNCS, each one: tests/lower/test_math_coverage.py) -> (llvm function called,
# helper definitions it needs (in order), declarations it needs)
MATH = {
    "exp": ("eqsat_exp", ["exp"], ["llvm.rint.f32", "llvm.fma.f32"]),
    "exp88": ("eqsat_exp88", ["exp88"], ["llvm.rint.f32", "llvm.fma.f32"]),
    "tanh": ("eqsat_tanh", ["exp88", "tanh"], ["llvm.rint.f32", "llvm.fma.f32", "llvm.fabs.f32", "llvm.copysign.f32"]),
    "sigmoid": ("eqsat_sigmoid", ["exp88", "sigmoid"], ["llvm.rint.f32", "llvm.fma.f32"]),
    "gelu_tanh": (
        "eqsat_gelu_tanh",
        ["exp88", "tanh", "gelu"],
        ["llvm.rint.f32", "llvm.fma.f32", "llvm.fabs.f32", "llvm.copysign.f32"],
    ),
    "sqrt": ("llvm.sqrt.f32", [], ["llvm.sqrt.f32"]),
    "rsqrt": ("eqsat_rsqrt", ["rsqrt"], ["llvm.sqrt.f32"]),
    "abs": ("llvm.fabs.f32", [], ["llvm.fabs.f32"]),
    "log": ("llvm.log.f32", [], ["llvm.log.f32"]),  # the JIT resolves it to libm's logf
    "sin": ("llvm.sin.f32", [], ["llvm.sin.f32"]),  # libm's sinf / cosf, like log
    "cos": ("llvm.cos.f32", [], ["llvm.cos.f32"]),
    "log1p": ("log1pf", [], ["log1pf"]),  # libm's, resolved by the JIT: exact near 0 where log(1 + x) is not
    "expm1": ("expm1f", [], ["expm1f"]),
    "floor": ("llvm.floor.f32", [], ["llvm.floor.f32"]),  # one vroundps each with SSE4.1 / AVX
    "ceil": ("llvm.ceil.f32", [], ["llvm.ceil.f32"]),
    "round": ("llvm.roundeven.f32", [], ["llvm.roundeven.f32"]),
    # LLVM's intrinsics (libm's tanf, asinf, ..., atan2f on x86, resolved by the JIT, as sin); the inverse
    # hyperbolic functions have none: libm's asinhf / acoshf / atanhf, declared like log1pf
    **{f: (f"llvm.{f}.f32", [], [f"llvm.{f}.f32"]) for f in (*(f for f in TRIG_FUNCS if f not in LIBM_ONLY), "atan2")},
    **{f: (f"{f}f", [], [f"{f}f"]) for f in LIBM_ONLY},
    "power": ("llvm.pow.f32", [], ["llvm.pow.f32"]),  # libm's powf, resolved by the JIT
}


def _fmod_body() -> str:
    # frem is C's fmodf (exact); LLVM lowers it to a libm call the JIT resolves, or inline code
    return """define internal float @eqsat_fmod(float %a, float %b) alwaysinline nounwind {
  %r = frem float %a, %b
  ret float %r
}"""


def _intdiv_body() -> str:
    """floordiv / floormod / truncdiv / truncmod of i64 values (``lower.ir.INT_FUNCS``): a zero divisor (or -1,
    where INT64_MIN / -1 would trap) is replaced by 1 before sdiv/srem, and the results fixed after."""
    out = []
    for fn, (floor, rem) in INT_FUNCS.items():
        lines = [
            f"define internal i64 @eqsat_{fn}(i64 %a, i64 %b) alwaysinline nounwind {{",
            "  %z = icmp eq i64 %b, 0",
            "  %m1 = icmp eq i64 %b, -1",
            "  %bad = or i1 %z, %m1",
            "  %d = select i1 %bad, i64 1, i64 %b",
        ]
        if rem or floor:
            lines.append("  %r = srem i64 %a, %d")
        if not rem:
            lines.append("  %q = sdiv i64 %a, %d")
        v = "%r" if rem else "%q"
        if floor:  # a nonzero remainder of the other sign than the divisor: one step down
            lines += [
                "  %rn = icmp ne i64 %r, 0",
                "  %sx = xor i64 %r, %d",
                "  %sn = icmp slt i64 %sx, 0",
                "  %fix = and i1 %rn, %sn",
                "  %vf = " + ("add i64 %r, %d" if rem else "sub i64 %q, 1"),
                f"  %v1 = select i1 %fix, i64 %vf, i64 {v}",
            ]
            v = "%v1"
        # b == -1: quotient -a (wrapping), remainder 0; b == 0: quotient 0, remainder a
        lines += [
            "  %neg = sub i64 0, %a",
            f"  %v2 = select i1 %m1, i64 {'0' if rem else '%neg'}, i64 {v}",
            f"  %v3 = select i1 %z, i64 {'%a' if rem else '0'}, i64 %v2",
            "  ret i64 %v3",
            "}",
        ]
        out.append("\n".join(lines))
    return "\n\n".join(out)


MATH.update(
    {
        "fmod": ("eqsat_fmod", ["fmod"], []),
        **{fn: (f"eqsat_{fn}", ["intdiv"], []) for fn in INT_FUNCS},
    }
)
HELPERS = {
    "exp": _exp_body,
    "exp88": _exp88_body,
    "tanh": _tanh_body,
    "sigmoid": _sigmoid_body,
    "gelu": _gelu_body,
    "rsqrt": _rsqrt_body,
    "fmod": _fmod_body,
    "intdiv": _intdiv_body,
}

CHAIN_INTERLEAVE = 4  # vectors an iteration of a "vectorized-chains" loop (LOOP_METADATA)

# loop kind -> loop metadata entries (see ``loop_metadata``)
LOOP_METADATA: dict[str, list[str]] = {
    "vectorized": ['!{!"llvm.loop.vectorize.enable", i1 true}'],  # + the target's width, added by loop_metadata
    # Disabling unrolling on every vectorized loop (to stop softmax/layernorm rows from spilling)
    # made convolutions' packing loops ~1.6x slower end to end (ResNet-50 45 -> 76 ms): if row
    # kernels need it, it must be scoped to them.
    # A short vectorized loop reading an input at a stride (a phase-split copy's interleaved loads): LLVM
    # unrolled it fully before vectorizing, and the straight-line code that left stayed scalar (a 7x7/2
    # depthwise convolution over 56^2 spent a third of its time copying its rows one float at a time).  Half
    # the vector width (loop_metadata) leaves fewer of its 13-39 iterations to the scalar remainder.  NASNet-A
    # at 2 threads: its stride-2 depthwise convolutions 51-151 -> 50-88 us, 0.2 ms of 10.3.
    "vectorized-strided": ['!{!"llvm.loop.vectorize.enable", i1 true}', '!{!"llvm.loop.unroll.disable"}'],
    # A vectorized loop of long dependent chains (``codegen._latency_bound``: exp, tanh, sigmoid, GELU, a
    # division): one vector an iteration, its ~40 vector operations waiting on each other, fill the FP
    # scheduler before the next iteration's start; CHAIN_INTERLEAVE vectors an iteration, their operations
    # interleaved by the vectorizer, keep the units busy.  1 thread, interleaved, bit-identical results:
    # GELU-erf, SiLU, sigmoid over 197x1536 or 96x56x56 floats 1.16-1.28x faster, exp 1.13x, softmax rows of 197
    # 1.15x and of 1536 1.05x; 8 vectors spilled (exp 0.90x, softmax 0.79x).
    "vectorized-chains": ['!{!"llvm.loop.vectorize.enable", i1 true}'],
    "serial": [],
    "serial-outer": ['!{!"llvm.loop.unroll.disable"}'],
    # A loop right around a loop the schedule vectorized: LLVM may fully unroll that inner loop (a panel's
    # 32 columns) and then vectorize this one instead, across rows: gathers at the row stride.  A 1x1
    # convolution packing relu(x + y) into B panels that way ran 1.13-1.4x slower (1 thread, interleaved).
    "serial-outer-vector": ['!{!"llvm.loop.unroll.disable"}', '!{!"llvm.loop.vectorize.enable", i1 false}'],
    "parallel": [],
}


def loop_metadata(kind: str, vector_width: int) -> list[str]:
    """The ``!llvm.loop`` entries for a loop of ``kind`` on a target with ``vector_width`` f32 lanes."""
    entries = list(LOOP_METADATA.get(kind) or [])
    if kind.startswith("vectorized"):
        width = max(1, vector_width // 2) if kind == "vectorized-strided" else vector_width
        entries.append(f'!{{!"llvm.loop.vectorize.width", i32 {width}}}')
    if kind == "vectorized-chains":
        entries.append(f'!{{!"llvm.loop.interleave.count", i32 {CHAIN_INTERLEAVE}}}')
    return entries


MAX_UNROLL = 64  # unrolled loops are replicated by the walker itself
