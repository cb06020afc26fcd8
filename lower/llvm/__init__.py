"""LLVM backend: loop IR -> LLVM IR text (``codegen``) -> host machine code (``jit``)."""

from __future__ import annotations

PLACEHOLDER = "__KERNEL__"


def compile_kernel(kernel, hint: str = "k"):
    """Compile (or fetch from the caches) one loop-IR kernel; returns a ctypes function ``f(args, lo, hi)``.

    The IR is generated once with a placeholder function name; the real name is
    derived from the text's hash, so identical kernels share one compiled copy."""
    from lower.llvm import jit
    from lower.llvm.codegen import kernel_module

    text, libs = kernel_module(kernel, PLACEHOLDER)
    for name, lib in libs.items():
        jit.load_library(name, lib)
    _, addr = jit.load_function(
        lambda nm: text if nm == PLACEHOLDER else text.replace(f"@{PLACEHOLDER}", f"@{nm}"), hint
    )
    return jit.cfunc(addr)
