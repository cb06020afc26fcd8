"""LLVM backend: loop IR -> LLVM IR text (``codegen``) -> host machine code (``jit``), as one ``Backend``.

    >>> fn = compile_kernel(kernel, parse_target("llvm"), "k")      # doctest: +SKIP
    >>> launcher(fn, args, None, 1)()                                # doctest: +SKIP

A model's launches run natively (``driver``): ``sequence`` turns them into one launch table, so a run
is one ctypes call, and parallel root loops (the kernel ABI is ``f(args, lo, hi)``: one range per
call) are split over the driver's native thread pool.  Where that pool cannot run (not x86-64 Linux)
parallel kernels go through ``lower.parallel``'s Python pool, one call per kernel.  ``vectorized``
loops become SIMD code of the target's vector width.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from lower.backend import Backend, KernelFn, Launch
from lower.ir import Kernel
from lower.llvm import driver, jit, objpool, textcache
from lower.llvm.codegen import kernel_to_llvm
from lower.parallel import parallel_for
from rewrite.ir.target import Target


def compile_kernel(kernel: Kernel, target: Target, hint: str = "k", passes: bool = True) -> KernelFn:
    """Compile (or fetch from the caches) one loop-IR kernel; returns a ctypes function ``f(args, lo, hi)``.

    The IR is generated once with a placeholder function name (and kept: ``textcache``); the real name is
    derived from the text's hash, so identical kernels share one compiled copy.  ``passes`` False: the light
    pipeline (``compile_once``)."""
    text, libs = textcache.module_text(kernel, target)
    for name, lib in libs.items():
        jit.load_library(name, lib, target)
    _, addr = jit.load_function(text, target, hint, passes)
    return jit.cfunc(addr)


# A kernel run once that moves more floats than this is compiled with O3's pipeline all the same: the light one's
# scalar copy loops packed VGG-19's 548 MB of weights in 0.49 s against O3's 0.16.
ONCE_LIGHT_MAX_ELEMS = 1 << 22


def compile_once(kernel: Kernel, target: Target, hint: str = "p") -> KernelFn:
    """``compile_kernel`` for a kernel run once, when a graph is compiled (a weight packed into a kernel's
    layout): light passes where it moves at most ``ONCE_LIGHT_MAX_ELEMS`` floats.  O3's pipeline cost LLVM 3-4x a
    light one's on such copy loops (MobileNetV2's 62 packing kernels 1.5 s against 0.4 s; DenseNet-121's compile
    7.2 against 5.7 LLVM seconds), for code that runs once (its 120 ran 5 ms)."""
    light = max((b.size for b in kernel.params), default=0) <= ONCE_LIGHT_MAX_ELEMS
    return compile_kernel(kernel, target, hint, passes=not light)


def launcher(fn: KernelFn, args: Any, extent: int | None, threads: int) -> Callable[[], None]:
    """A callable running ``fn`` once: its parallel root loop's range split over ``threads`` threads (the
    native pool, else the Python one), else one direct call (the ctypes function with its arguments
    bound: nothing between runtime and kernel)."""
    if extent is not None and threads > 1:
        if driver.native_pool(threads) is not None:
            return driver.LaunchTable([(fn, args, extent)], threads)
        return functools.partial(parallel_for, fn, args, extent, threads)
    return functools.partial(fn, args, 0, extent or 0)


def sequence(items: list[Launch]) -> Callable[[tuple[int, ...]], None] | None:
    """All of a model's launches as one native launch table; None (one by one, parallel kernels on the
    Python pool) when some kernel is parallel and the native pool cannot run here."""
    threads = max((it.threads for it in items), default=1)
    parallel = threads > 1 and any(it.extent is not None for it in items)
    if parallel and driver.native_pool(threads) is None:
        return None
    return driver.LaunchTable([(it.fn, it.args, it.extent) for it in items], threads)


BACKEND = Backend(
    "llvm",
    compile_kernel,
    launcher,
    kernel_to_llvm,
    device="cpu",
    sequence=sequence,
    compile_jobs=objpool.jobs,  # thread-safe; LLVM runs in this process and the compile workers at once
    compile_once=compile_once,
    steady=driver.awake,
)

__all__ = ["BACKEND", "compile_kernel", "compile_once", "launcher", "sequence"]
