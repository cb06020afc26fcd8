"""CUDA backend: loop IR -> CUDA C (``codegen``) -> PTX (``nvrtc``) -> launches (``driver``), as one ``Backend``.

    >>> ptx = graph_ptx(graph, "sm_90")                 # no GPU needed: one PTX text per kernel   # doctest: +SKIP
    >>> cg = compile_graph(graph, "cuda")               # a GPU: takes and returns CUDA tensors  # doctest: +SKIP

Schedules for a ``cuda`` target come from ``lower.schedule.gpu_recipes`` (each stage one grid:
``blocks`` and ``threads`` loops); every top-level stage of a kernel is its own ``__global__``
function, launched in order on torch's current stream with the runtime's argument array.
``cuda.bindings`` (NVRTC, driver) is the optional ``cuda`` extra, imported on first use.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lower.backend import Backend, KernelFn, Launch
from lower.cuda import driver, nvrtc
from lower.cuda.codegen import CudaModule, LaunchSpec, kernel_module, kernel_to_cuda
from lower.fusion import BuiltKernel
from lower.ir import Kernel
from lower.plan import plan_kernels
from rewrite import config
from rewrite.ir.errors import LoweringError
from rewrite.ir.graph import Graph
from rewrite.ir.target import TF32_REL_TOL, Target

DEFAULT_ARCH = "sm_90"  # what a CUDA target describes when no device is visible (PTX-only work, CI)
WARP = 32


def cuda_target(
    arch: str = DEFAULT_ARCH, name: str = "", versions: tuple[tuple[str, str], ...] = (), precision: str = ""
) -> Target:
    """A CUDA target for compute capability ``arch`` (no device needed: generating code and PTX); its
    contractions in ``precision`` (default: TF32 tensor cores, exact FP32 with ``EQSAT_CUDA_EXACT_FP32``)."""
    precision = precision or ("fp32" if config.CUDA_EXACT_FP32.flag() else "tf32")
    return Target("cuda", name=name or f"cuda-{arch}", arch=arch, warp=WARP, precision=precision, versions=versions)


def cuda_host(threads: int) -> Target:
    """The first visible GPU as a target: name, compute capability, driver and NVRTC versions (these key
    measured costs).  ``LoweringError`` without a device: code for a GPU that is not there comes from
    ``cuda_target(arch)`` (``graph_ptx``, ``rewrite.compile_ptx``), which needs none."""
    if driver.device_count() == 0:
        raise LoweringError(
            "target 'cuda' needs a CUDA device and none is visible; "
            "rewrite.compile_ptx(graph, arch='sm_90') generates and compiles the kernels without one"
        )
    info = driver.device_info(0)
    slug = "".join(ch if ch.isalnum() else "-" for ch in info.name).strip("-").lower()
    versions = (("driver", str(info.driver_version)), ("nvrtc", nvrtc.nvrtc_version()))
    return cuda_target(info.arch, name=f"cuda-{slug}", versions=versions)


@functools.cache
def _module_ptx(text: str, arch: str) -> str:
    """PTX of one module; for the arch-specific target (``sm_90a``) when it uses ``wgmma`` (``EQSAT_WGMMA``)."""
    if "#define EQSAT_WGMMA" in text and not arch.endswith("a"):
        arch += "a"
    return nvrtc.compile_ptx(text, arch)


def compile_kernel(kernel: Kernel, target: Target, hint: str = "k") -> KernelFn:
    """Generate, compile (NVRTC, for ``target.arch``) and load one kernel; returns ``f(args, lo, hi)``."""
    mod = kernel_module(kernel, target)
    return driver.LoadedKernel(mod, _module_ptx(mod.text, target.arch or DEFAULT_ARCH), len(kernel.params))


def prepare(kernels: list[Kernel], target: Target) -> None:
    """Compile every kernel's module to PTX ahead, in parallel (NVRTC runs without the GIL), so that
    ``compile_kernel`` finds them cached: a model's hundred-odd kernels take seconds, not a minute."""
    arch = target.arch or DEFAULT_ARCH
    texts = {kernel_module(k, target).text for k in kernels}
    with ThreadPoolExecutor(max_workers=max(1, min(len(texts), os.cpu_count() or 1))) as pool:
        list(pool.map(lambda text: _module_ptx(text, arch), texts))


def launcher(fn: KernelFn, args: Any, extent: int | None, threads: int) -> Callable[[], None]:
    """A callable launching all of ``fn``'s grids on the current stream (the grids are fixed at codegen)."""
    if not isinstance(fn, driver.LoadedKernel):
        raise TypeError(f"the CUDA launcher runs kernels compiled by lower.cuda, not {type(fn).__name__}")
    params = fn.params_for(args)
    return lambda: fn.launch(params, driver.current_stream())


def sequence(items: list[Launch]) -> Callable[[tuple[int, ...]], None] | None:
    """Unless ``EQSAT_CUDA_GRAPH=0``: all of a model's launches as one CUDA graph per set of patched
    addresses (``driver.CapturedGraph``), replayed on the current stream; else None (one by one)."""
    if not config.CUDA_GRAPH.flag():
        return None
    fns = []
    for fn, args, *_ in items:  # the grids are fixed at codegen: extent and threads are not needed
        if not isinstance(fn, driver.LoadedKernel):
            raise TypeError(f"a CUDA graph holds kernels compiled by lower.cuda, not {type(fn).__name__}")
        fns.append((fn, fn.params_for(args)))
    return driver.CapturedGraph(fns)


BACKEND = Backend(
    "cuda",
    compile_kernel,
    launcher,
    kernel_to_cuda,
    device="cuda",
    copies_inputs=True,
    sequence=sequence,
    grid=True,  # e.g. grouped/depthwise convs as batched GEMMs: tiles per (n, group), not one thread per group
    prepare=prepare,
)


# ------------------------------------------------------------ without a device: the kernels of a graph as PTX
def graph_kernels(graph: Graph, target: Target, fuse: bool = True) -> list[BuiltKernel]:
    """The scheduled kernels ``compile_graph(graph, target)`` would build (``lower.plan``, which it plans with),
    without allocating anything on a device: weight-only values stay on the CPU (only their being constant
    matters here)."""
    return plan_kernels(graph, target, grid=BACKEND.grid, fuse=fuse).built


def graph_ptx(graph: Graph, arch: str = DEFAULT_ARCH, fuse: bool = True) -> list[str]:
    """PTX for every kernel of ``graph`` (in launch order), compiled by NVRTC for ``arch``; no GPU needed."""
    target = cuda_target(arch)
    kernels = [bk.kernel for bk in graph_kernels(graph, target, fuse)]
    prepare(kernels, target)
    return [_module_ptx(kernel_module(k, target).text, arch) for k in kernels]


__all__ = [
    "BACKEND",
    "DEFAULT_ARCH",
    "TF32_REL_TOL",
    "CudaModule",
    "LaunchSpec",
    "compile_kernel",
    "cuda_host",
    "cuda_target",
    "graph_kernels",
    "graph_ptx",
    "kernel_module",
    "kernel_to_cuda",
    "launcher",
    "prepare",
    "sequence",
]
