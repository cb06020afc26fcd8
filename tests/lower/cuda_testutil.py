"""The CUDA tests' shared pieces: PTX availability marks (NVRTC and ptxas, a device), the sm_90 target, the
16-bit PTX patterns, and the CPU emulation of generated CUDA C (compiled as C++ with a tiny CUDA prelude, every
block and thread in turn)."""

from __future__ import annotations

import atexit
import ctypes
import dataclasses
import functools
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from lower.backend import Backend
from lower.cuda import cuda_target, kernel_module, kernel_to_cuda, nvrtc
from lower.cuda import driver as cuda_driver
from lower.ir import BF16, F16
from rewrite.ir.target import KINDS

HAS_PTX = nvrtc.available() and nvrtc.ptxas_path() is not None
needs_ptx = pytest.mark.skipif(not HAS_PTX, reason="needs NVRTC (the 'cuda' extra) and ptxas")
gpu = pytest.mark.gpu
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")  # emulated_backend compiles with it
needs_gpu = pytest.mark.skipif(cuda_driver.device_count() == 0, reason="needs a CUDA device")
TARGET = cuda_target("sm_90", precision="tf32")
LOAD16, STORE16 = re.compile(r"\bld\.global(\.nc)?\.u16\b"), re.compile(r"\bst\.global\.u16\b")
LOOP_HALF = {"float16": F16, "bfloat16": BF16}


PRELUDE = r"""
#define EQSAT_HOST_EMULATION 1
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>
struct eqsat_dim3 { unsigned x, y, z; };
struct eqsat_any { void* p; template <class T> operator T*() const { return static_cast<T*>(p); } };
static eqsat_dim3 blockIdx;
static thread_local eqsat_dim3 threadIdx;
static std::barrier<>* eqsat_block_bar;
static std::barrier<>* eqsat_warp_bar[32];
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
static inline void __syncthreads() { eqsat_block_bar->arrive_and_wait(); }
static inline float __int_as_float(unsigned v) { float f; std::memcpy(&f, &v, 4); return f; }
static inline float __uint_as_float(unsigned v) { return __int_as_float(v); }
static inline unsigned __float_as_uint(float f) { unsigned v; std::memcpy(&v, &f, 4); return v; }
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
static inline float atomicAdd(float* p, float v) { return std::atomic_ref<float>(*p).fetch_add(v); }
// float16 (cvt.f32.f16 and cvt.rn.f16.f32 on the device): the compiler's _Float16, IEEE round to nearest even
static inline float eqsat_f16_to_f32(unsigned short h) { _Float16 x; std::memcpy(&x, &h, 2); return (float)x; }
static inline unsigned short eqsat_f32_to_f16(float f) {
  const _Float16 x = (_Float16)f; unsigned short h; std::memcpy(&h, &x, 2); return h;
}
// TF32: round to nearest, ties away from zero, keeping 10 mantissa bits (finite inputs)
static inline unsigned eqsat_tf32(float x) { unsigned u; std::memcpy(&u, &x, 4); return (u + 0x1000u) & 0xffffe000u; }
// __shfl_xor_sync: every lane deposits its value, then reads its partner's
static float eqsat_shfl[32][32];
static inline float __shfl_xor_sync(unsigned, float v, int o) {
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  eqsat_shfl[w][lane] = v;
  eqsat_warp_bar[w]->arrive_and_wait();
  const float r = eqsat_shfl[w][lane ^ o];
  eqsat_warp_bar[w]->arrive_and_wait();
  return r;
}
// the warp's A (16 x K) and B (K x 8), deposited by every lane (PTX ISA layout), multiplied into each lane's D
static float eqsat_wa[32][16][16], eqsat_wb[32][16][8];
static inline void eqsat_mma_deposited(float* d, int k) {
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  eqsat_warp_bar[w]->arrive_and_wait();
  for (int q = 0; q < 4; ++q) {
    const int row = g + 8 * (q >> 1), col = 2 * t + (q & 1);
    float s = d[q];
    for (int kk = 0; kk < k; ++kk) s += eqsat_wa[w][row][kk] * eqsat_wb[w][kk][col];
    d[q] = s;
  }
  eqsat_warp_bar[w]->arrive_and_wait();
}
static inline void eqsat_mma_tf32(float* d, const unsigned* a, const unsigned* b) {
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  eqsat_wa[w][g][t] = __int_as_float(a[0]); eqsat_wa[w][g + 8][t] = __int_as_float(a[1]);
  eqsat_wa[w][g][t + 4] = __int_as_float(a[2]); eqsat_wa[w][g + 8][t + 4] = __int_as_float(a[3]);
  eqsat_wb[w][t][g] = __int_as_float(b[0]); eqsat_wb[w][t + 4][g] = __int_as_float(b[1]);
  eqsat_mma_deposited(d, 8);
}
// mma.sync m16n8k16 on float16 / bfloat16 pairs (the lower index in the lower 16 bits)
static inline unsigned eqsat_ld2(const unsigned short* p) { unsigned v; std::memcpy(&v, p, 4); return v; }
static inline float eqsat_h16(unsigned r, int i, bool bf) {
  const unsigned short h = (unsigned short)(r >> (16 * i));
  return bf ? __uint_as_float((unsigned)h << 16) : eqsat_f16_to_f32(h);
}
static inline void eqsat_mma_h16(float* d, const unsigned* a, const unsigned* b, bool bf) {
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int i = 0; i < 2; ++i) {
    eqsat_wa[w][g][2 * t + i] = eqsat_h16(a[0], i, bf); eqsat_wa[w][g + 8][2 * t + i] = eqsat_h16(a[1], i, bf);
    eqsat_wa[w][g][2 * t + 8 + i] = eqsat_h16(a[2], i, bf); eqsat_wa[w][g + 8][2 * t + 8 + i] = eqsat_h16(a[3], i, bf);
    eqsat_wb[w][2 * t + i][g] = eqsat_h16(b[0], i, bf); eqsat_wb[w][2 * t + 8 + i][g] = eqsat_h16(b[1], i, bf);
  }
  eqsat_mma_deposited(d, 16);
}
static inline void eqsat_mma_f16(float* d, const unsigned* a, const unsigned* b) { eqsat_mma_h16(d, a, b, false); }
static inline void eqsat_mma_bf16(float* d, const unsigned* a, const unsigned* b) { eqsat_mma_h16(d, a, b, true); }
template <class F> static void eqsat_launch(unsigned grid, unsigned block, F f) {
  for (unsigned b = 0; b < grid; ++b) {
    blockIdx.x = b;
    std::barrier<> bar(block);
    eqsat_block_bar = &bar;
    std::vector<std::barrier<>*> warps;
    for (unsigned w = 0; w < (block + 31) / 32; ++w) {
      eqsat_warp_bar[w] = new std::barrier<>(block - 32 * w < 32 ? block - 32 * w : 32);
      warps.push_back(eqsat_warp_bar[w]);
    }
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < block; ++t) ts.emplace_back([=] { threadIdx.x = t; f(); });
    for (auto& th : ts) th.join();
    for (auto* w : warps) delete w;
  }
}
"""


GXX = ["g++", "-std=c++20", "-O1", "-pthread", "-fPIC"]


@functools.cache
def _prelude_header() -> Path | None:
    """The prelude as a header precompiled once per test process (its <barrier>, <thread> and <vector> were
    four fifths of every kernel's g++ time), or None where g++ cannot precompile it: then each kernel's source
    carries the prelude."""
    d = Path(tempfile.mkdtemp(prefix="eqsat-cuda-prelude-"))
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    (d / "prelude.hpp").write_text(PRELUDE)
    r = subprocess.run(
        [*GXX, "-x", "c++-header", "-o", str(d / "prelude.hpp.gch"), str(d / "prelude.hpp")], capture_output=True
    )
    return d / "prelude.hpp" if r.returncode == 0 else None


def emulated_backend(tmp_path: Path) -> Backend:
    """The CUDA walker's output compiled by g++ and run block by block, each block's threads as OS
    threads (``__syncthreads`` a barrier, ``__shared__`` a static, ``mma.sync`` emulated per warp)."""
    keep: list[ctypes.CDLL] = []

    def compile_(kernel, target, hint):
        mod = kernel_module(kernel, target)
        n = len(kernel.params)
        casts = ", ".join(f"eqsat_any{{a[{i}]}}" for i in range(n))  # float*, long long*, bool*, unsigned short*
        runs = "\n".join(
            f"  eqsat_launch({ln.grid}u, {ln.block}u, [&] {{ {ln.name}({casts}); }});" for ln in mod.launches
        )
        header = _prelude_header()
        prelude = f'#include "{header}"\n' if header is not None else PRELUDE
        src = prelude + mod.text + f'\nextern "C" void eqsat_run(void** a) {{\n{runs}\n}}\n'
        d = tmp_path / f"k{len(keep)}"
        d.mkdir()
        (d / "k.cpp").write_text(src)
        r = subprocess.run(
            [*GXX, "-Winvalid-pch", "-shared", "-o", str(d / "k.so"), str(d / "k.cpp")], capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr[:4000]
        lib = ctypes.CDLL(str(d / "k.so"))
        keep.append(lib)
        run = lib.eqsat_run
        run.argtypes = [ctypes.c_void_p]
        return lambda args, lo, hi: run(args)

    return Backend(
        "cuda", compile_, lambda fn, args, extent, threads: lambda: fn(args, 0, 0), kernel_to_cuda, grid=True
    )


def emulate(monkeypatch, tmp_path) -> None:
    """The cuda kind's kernels compiled as C++ and run on the CPU (``emulated_backend``)."""
    emulated = dataclasses.replace(KINDS["cuda"], host=lambda threads: TARGET, backend=emulated_backend(tmp_path))
    monkeypatch.setitem(KINDS, "cuda", emulated)
