"""How the CUDA walker spells things: C types, operators, math functions and their helpers.

>>> f32_literal(0.5), f32_literal(float("-inf"))
('0.5f', '__int_as_float(0xff800000)')
>>> MATH["exp"]
('expf', ())
"""

from __future__ import annotations

import math

from lower.ir import INT_FUNCS
from lower.ir.nodes import TRIG_FUNCS

# C types of buffer elements (a register of a half type is a float: ``lower.ir.register_type``); a float16 or
# bfloat16 element is its 16 bits (NVRTC finds no cuda_fp16.h / cuda_bf16.h without the toolkit's include path,
# and needs none: the conversions below are one instruction or a few integer operations)
TYPES = {"f32": "float", "i64": "long long", "bool": "bool", "f16": "unsigned short", "bf16": "unsigned short"}

F32_BINOPS = {"+": "+", "-": "-", "*": "*", "/": "/"}
I64_BINOPS = {"+": "+", "-": "-", "*": "*"}
CMP_OPS = {"<": "<", "<=": "<=", "==": "==", "!=": "!=", ">": ">", ">=": ">="}
BOOL_OPS = {"and": "&&", "or": "||"}
F32_MINMAX = {"min": "fminf", "max": "fmaxf"}
I64_MINMAX = {"min": "eqsat_min_i64", "max": "eqsat_max_i64"}

# math function (lower.ir.MATH_FUNCS, each one: tests/lower/test_math_coverage.py) -> (CUDA spelling, helpers
# it needs).  Accurate (not __expf-style intrinsic) versions:
# the CPU backend's polynomials are within a few ulp, and results are compared across backends.
MATH: dict[str, tuple[str, tuple[str, ...]]] = {
    "exp": ("expf", ()),
    "exp88": ("eqsat_exp88", ("exp88",)),
    "tanh": ("tanhf", ()),
    "sqrt": ("sqrtf", ()),
    "rsqrt": ("rsqrtf", ()),
    "abs": ("fabsf", ()),
    "log": ("logf", ()),
    "sin": ("sinf", ()),
    "cos": ("cosf", ()),
    "log1p": ("log1pf", ()),
    "expm1": ("expm1f", ()),
    "floor": ("floorf", ()),
    "ceil": ("ceilf", ()),
    "round": ("rintf", ()),  # half to even under the default rounding mode
    "sigmoid": ("eqsat_sigmoid", ("sigmoid",)),
    "gelu_tanh": ("eqsat_gelu_tanh", ("gelu_tanh",)),
    "fmod": ("fmodf", ()),
    **{f: (f"{f}f", ()) for f in TRIG_FUNCS},
    "atan2": ("atan2f", ()),  # (y, x)
    "power": ("powf", ()),
    **{fn: (f"eqsat_{fn}", ("intdiv",)) for fn in INT_FUNCS},
}

# half type -> (16 bits to the float they equal, a float rounded to nearest even into 16 bits): the helper
# named by the half type (``HELPERS[F16]``) defines both
WIDEN = {"f16": "eqsat_f16_to_f32", "bf16": "eqsat_bf16_to_f32"}
NARROW = {"f16": "eqsat_f32_to_f16", "bf16": "eqsat_f32_to_bf16"}

HELPERS: dict[str, str] = {
    # float16: PTX's conversions (any sm): cvt.f32.f16 is exact; cvt.rn.f16.f32 rounds to nearest even, overflows
    # to inf, keeps subnormals and makes every NaN the canonical one (0x7fff; a NaN stays a NaN).  A host emulation
    # of the generated code defines EQSAT_HOST_EMULATION and its own versions.
    "f16": (
        "#ifndef EQSAT_HOST_EMULATION\n"
        "__device__ __forceinline__ float eqsat_f16_to_f32(unsigned short h) {\n"
        '  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;\n}\n'
        "__device__ __forceinline__ unsigned short eqsat_f32_to_f16(float f) {\n"
        '  unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;\n}\n'
        "#endif"
    ),
    # bfloat16: the upper half of a float's bits (exact); rounded with integer operations as the CPU backend and
    # torch's c10::BFloat16 round (ties to even, an overflow carries into inf, every NaN 0x7fc0), bit for bit
    # and on any sm (sm_80's cvt.rn.bf16.f32 would make NaNs 0x7fff)
    "bf16": (
        "__device__ __forceinline__ float eqsat_bf16_to_f32(unsigned short h) { "
        "return __uint_as_float((unsigned)h << 16); }\n"
        "__device__ __forceinline__ unsigned short eqsat_f32_to_bf16(float f) {\n"
        "  const unsigned u = __float_as_uint(f);\n"
        "  return f != f ? (unsigned short)0x7fc0u : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n}"
    ),
    "minmax_i64": (
        "__device__ __forceinline__ long long eqsat_min_i64(long long a, long long b) { return a < b ? a : b; }\n"
        "__device__ __forceinline__ long long eqsat_max_i64(long long a, long long b) { return a > b ? a : b; }"
    ),
    "floordiv": (
        "__device__ __forceinline__ long long eqsat_floordiv(long long a, long long b) {\n"
        "  long long q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n"
        "__device__ __forceinline__ long long eqsat_floormod(long long a, long long b) {\n"
        "  long long r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}"
    ),
    # lower.ir.INT_FUNCS: no trap on a zero divisor (quotient 0, remainder a) or INT64_MIN / -1 (wraps)
    "intdiv": "\n".join(
        f"__device__ __forceinline__ long long eqsat_{fn}(long long a, long long b) {{\n"
        "  if (b == 0) return " + ("a" if rem else "0") + ";\n"
        "  if (b == -1) return " + ("0" if rem else "(long long)(0ull - (unsigned long long)a)") + ";\n"
        f"  long long v = a {'%' if rem else '/'} b;\n"
        + (
            f"  return (a % b != 0 && ((a % b < 0) != (b < 0))) ? {'v + b' if rem else 'v - 1'} : v;\n}}"
            if floor
            else "  return v;\n}"
        )
        for fn, (floor, rem) in INT_FUNCS.items()
    ),
    "sigmoid": "__device__ __forceinline__ float eqsat_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }",
    "exp88": "__device__ __forceinline__ float eqsat_exp88(float x) { return expf(fminf(fmaxf(x, -88.0f), 88.0f)); }",
    "gelu_tanh": (
        "__device__ __forceinline__ float eqsat_gelu_tanh(float x) {\n"
        f"  return 0.5f * x * (1.0f + tanhf({math.sqrt(2.0 / math.pi)!r}f * (x + 0.044715f * x * x * x)));\n}}"
    ),
    # TF32 tensor cores: round to TF32 (nearest, ties away), D = A * B + D on a 16 x 8 x 8 warp tile.
    # A host emulation of the generated code defines EQSAT_HOST_EMULATION and its own versions.
    "tf32_mma": (
        "#ifndef EQSAT_HOST_EMULATION\n"
        "__device__ __forceinline__ unsigned eqsat_tf32(float x) {\n"
        '  unsigned r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x)); return r;\n}\n'
        "__device__ __forceinline__ void eqsat_mma_tf32(float* d, const unsigned* a, const unsigned* b) {\n"
        '  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, '
        '{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"\n'
        '      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])\n'
        '      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));\n}\n'
        "#endif"
    ),
}


def _half_mma(half: str) -> str:
    """``mma.sync.m16n8k16`` on float16 or bfloat16 operands (sm_80 on), FP32 accumulators: D = A * B + D on a
    16 x 16 x 16 warp tile, each 32-bit register two 16-bit elements (the lower index in the lower half); and
    ``eqsat_ld2``, two adjacent 16-bit elements of shared memory as one register.  A host emulation of the
    generated code defines EQSAT_HOST_EMULATION and its own versions."""
    return (
        "#ifndef EQSAT_HOST_EMULATION\n"
        "#ifndef EQSAT_LD2\n#define EQSAT_LD2 1\n"
        "__device__ __forceinline__ unsigned eqsat_ld2(const unsigned short* p) { return *(const unsigned*)p; }\n"
        "#endif\n"
        f"__device__ __forceinline__ void eqsat_mma_{half}(float* d, const unsigned* a, const unsigned* b) {{\n"
        f'  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.{half}.{half}.f32 {{%0, %1, %2, %3}}, '
        '{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"\n'
        '      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])\n'
        '      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));\n}\n'
        "#endif"
    )


# float16 / bfloat16 tensor cores (``gemm_tile`` precisions ``f16``, ``bf16``)
HELPERS["f16_mma"], HELPERS["bf16_mma"] = _half_mma("f16"), _half_mma("bf16")


def _wgmma_helpers(nacc: int = 128) -> str:
    """sm_90a (Hopper) only: 16-byte / 4-byte copies into shared memory that bypass registers (zero-filled,
    reading nothing, when ``ok`` is false), and D(64 x 256) += A(64 x 8, registers) * B(8 x 256, shared
    memory through a matrix descriptor) by a warpgroup, TF32 in, FP32 accumulators (``nacc`` per thread).
    ``EQSAT_WGMMA`` marks a module that must be compiled for the arch-specific target (``sm_90a``)."""
    regs = ", ".join(f"%{i}" for i in range(nacc))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(nacc))
    a = ", ".join(f"%{nacc + i}" for i in range(4))
    return "\n".join(
        [
            "#define EQSAT_WGMMA 1",
            "template <bool B> struct eqsat_bool { static constexpr bool value = B; };  // a variant chosen per block",
            "__device__ __forceinline__ void eqsat_cp16(float* dst, const float* src, bool ok) {",
            "  unsigned d = (unsigned)__cvta_generic_to_shared(dst);",
            '  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(d), "l"(src), "r"(ok ? 16 : 0));',
            "}",
            "__device__ __forceinline__ void eqsat_cp4(float* dst, const float* src, bool ok) {",
            "  unsigned d = (unsigned)__cvta_generic_to_shared(dst);",
            '  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(d), "l"(src), "r"(ok ? 4 : 0));',
            "}",
            "__device__ __forceinline__ void eqsat_wgmma256(float* d, const unsigned* a, unsigned long long desc) {",
            '  asm volatile("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 '
            f'{{{regs}}}, {{{a}}}, %{nacc + 4}, 1, 1, 1;"',
            f"    : {outs}",
            '    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));',
            "}",
        ]
    )


HELPERS["wgmma_tf32"] = _wgmma_helpers()


def _block_reduce(name: str, comb: str, identity: str) -> str:
    """Warp butterfly (every lane gets the warp's value), one slot per warp in ``sh``, then each warp
    reduces the ``nw`` slots the same way: all threads of the block return the same value."""
    return (
        f"__device__ __forceinline__ float eqsat_warp_{name}(float v) {{\n"
        "#pragma unroll\n"
        f"  for (int o = 16; o > 0; o >>= 1) {{ const float u = __shfl_xor_sync(0xffffffffu, v, o); v = {comb}; }}\n"
        "  return v;\n}\n"
        f"__device__ __forceinline__ float eqsat_block_{name}(float v, float* sh, int nw) {{\n"
        f"  v = eqsat_warp_{name}(v);\n"
        "  __syncthreads();  // the slots may still be read by a previous reduction\n"
        "  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;\n"
        "  __syncthreads();\n"
        f"  v = (int)(threadIdx.x & 31) < nw ? sh[threadIdx.x & 31] : {identity};\n"
        f"  return eqsat_warp_{name}(v);\n}}"
    )


HELPERS["block_reduce"] = "\n".join(
    [
        _block_reduce("add", "v + u", "0.0f"),
        _block_reduce("max", "fmaxf(v, u)", "__int_as_float(0xff800000)"),
        _block_reduce("min", "fminf(v, u)", "__int_as_float(0x7f800000)"),
    ]
)

MAX_UNROLL = 64  # ``unrolled`` loops up to this extent get ``#pragma unroll``


def f32_literal(v: float) -> str:
    """A float constant as CUDA C: exact decimal with ``f``, bit patterns for infinities and NaN."""
    if math.isnan(v):
        return "__int_as_float(0x7fc00000)"
    if math.isinf(v):
        return "__int_as_float(0x7f800000)" if v > 0 else "__int_as_float(0xff800000)"
    text = repr(float(v))
    if "e" not in text and "." not in text:
        text += ".0"
    return text + "f"


def ident(name: str) -> str:
    """A C identifier for an IR name (``i0.i1.o`` -> ``i0_i1_o``)."""
    out = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    return out if out and not out[0].isdigit() else "_" + out


__all__ = [
    "BOOL_OPS",
    "CMP_OPS",
    "F32_BINOPS",
    "F32_MINMAX",
    "HELPERS",
    "I64_BINOPS",
    "I64_MINMAX",
    "MATH",
    "MAX_UNROLL",
    "NARROW",
    "TYPES",
    "WIDEN",
    "f32_literal",
    "ident",
]
