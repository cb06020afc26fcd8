"""LLVM backend: loop IR -> LLVM IR text (``codegen``) -> host machine code (``jit``)."""

from __future__ import annotations


def compile_kernel(kernel, hint: str = "k"):
    """Compile (or fetch from the caches) one loop-IR kernel; returns a ctypes function ``f(args, lo, hi)``."""
    from lower.llvm import jit
    from lower.llvm.codegen import kernel_module
    _, libs = kernel_module(kernel, "__probe__")
    for name, text in libs.items():
        jit.load_library(name, text)
    _, addr = jit.load_function(lambda nm: kernel_module(kernel, nm)[0], hint)
    return jit.cfunc(addr)
