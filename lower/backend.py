"""The seam between the runtime and a code generator: a ``Backend`` is a small table of functions.

The runtime (``lower.runtime``) never asks which target it compiles for: it asks the target's
kind record (``rewrite.ir.target.TargetKind.backend``, through ``lower.target.backend_of``) and
calls its backend's entries.  A backend module
(``lower/llvm/``; a ``lower/cuda/`` would be another) builds one ``Backend`` from its own parts:

    >>> from lower.llvm import BACKEND                                      # doctest: +SKIP
    >>> fn = BACKEND.compile(kernel, target, "k")    # loop IR -> callable fn(args, lo, hi)  # doctest: +SKIP
    >>> run = BACKEND.launcher(fn, args, 64, target.threads)  # parallel root loop of extent 64  # doctest: +SKIP
    >>> run()                                                                                  # doctest: +SKIP

``args`` is a pointer to an array of one buffer address per kernel parameter (``void **``).
How loop kinds map to hardware (``parallel`` to a thread pool here, to a grid on a GPU;
``vectorized`` to SIMD lanes or to threads of a block) is the backend's business: its code
generator reads the loop kinds, its ``launcher`` runs the parallel root loop's range.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, NamedTuple

from lower.ir import Kernel
from rewrite.ir.target import Target

KernelFn = Callable[[Any, int, int], None]  # f(args, lo, hi): one call runs the root loop over [lo, hi)


class Launch(NamedTuple):
    """One kernel launch as ``sequence`` sees it: ``fn`` on ``args`` (the argument array's address),
    ``extent`` its parallel root loop's extent (None: none), on ``threads`` threads."""

    fn: KernelFn
    args: Any
    extent: int | None
    threads: int


@dataclass(frozen=True)
class Backend:
    """What the runtime needs from a code generator.

    ``compile(kernel, target, hint)`` returns the kernel as a callable (``hint`` prefixes its symbol);
    ``launcher(fn, args, extent, threads)`` returns a callable running it once, ``extent`` being its
    parallel root loop's extent, or None for a kernel without one (one call, ``lo = hi = 0``): bound
    once at compile time, so a run costs no more than the call itself; ``source(kernel, target)`` is the
    generated code as text; ``device`` the torch device type its buffers live on; ``copies_inputs``
    whether inputs on another device are copied to it (else refused).  ``sequence``, if given, takes
    all of a model's ``Launch``es in launch order and returns either None (launch one by one) or
    ``replay(key)`` running them all at once, ``key`` being the addresses patched into the argument
    arrays for this call (a CUDA graph per key; the LLVM backend's native launch table ignores it).
    ``grid``: kernels run as grids of thousands of threads, so the lowering picks data-parallel forms
    (grouped convs as batched GEMMs, which a GPU tiles; Winograd output tiles stored straight out) over
    a CPU core's serial cache-blocked ones (the direct conv's per-group slice, a block buffer in L1).
    """

    name: str
    compile: Callable[[Kernel, Target, str], KernelFn]
    launcher: Callable[[KernelFn, Any, int | None, int], Callable[[], None]]
    source: Callable[[Kernel, Target], str]
    device: str = "cpu"
    copies_inputs: bool = False
    sequence: Callable[[list[Launch]], Callable[[tuple[int, ...]], None] | None] | None = None
    grid: bool = False  # kernels run as grids of many threads (see above)
    prepare: Callable[[list[Kernel], Target], None] | None = None  # before compiling: e.g. all of them, in parallel
    compile_jobs: Callable[[], int] | None = None  # how many kernels ``compile`` may take at once (None: one)
    # ``compile`` for a kernel that runs once, when a graph is compiled (a constant operand packed): cheaper to
    # compile, its speed beside the point (None: ``compile``)
    compile_once: Callable[[Kernel, Target, str], KernelFn] | None = None
    # a context in which launches on that many threads find the backend's threads ready, as a model's kernels find
    # them after the kernel before (the LLVM pool's workers awake): ``CompiledGraph.profile`` times kernels in it
    steady: Callable[[int], AbstractContextManager[None]] | None = None

    def compile_run_once(self, kernel: Kernel, target: Target, hint: str = "p") -> KernelFn:
        """``kernel`` compiled to run once (``compile_once``, else ``compile``)."""
        return (self.compile_once or self.compile)(kernel, target, hint)
