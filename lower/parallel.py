"""A small Python thread pool that runs a kernel's parallel root loop in chunks.

The LLVM backend runs parallel kernels on its native pool (``lower.llvm.driver``: microseconds per
launch); this pool (tens of microseconds: futures and a lock per chunk) is the fallback where that
pool cannot run.

Kernels are ctypes functions ``f(args, lo, hi)``; ctypes releases the GIL
during the call, so the chunks really run concurrently.  Chunks are taken
dynamically from a shared counter (the machine is shared and noisy, so a
static split would wait for the slowest core).  How many threads to use is the
``Target``'s business (``lower.target``), passed in by the caller.

    >>> parallel_for(fn, args, extent=64, threads=2)    # doctest: +SKIP
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _get_pool(n: int) -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < n:
            old = _pool
            # kernels keep packing scratch on the stack (bounded: <= 2 MiB per kernel); give the workers
            # room, spawning them now so the process-wide setting can be restored at once
            prev = threading.stack_size(32 << 20)
            try:
                _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="eqsat")
                barrier = threading.Barrier(n + 1)
                for _ in range(n):
                    _pool.submit(barrier.wait)
                barrier.wait()
            finally:
                threading.stack_size(prev)
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def chunks(extent: int, n: int) -> list[tuple[int, int]]:
    n = max(1, min(n, extent))
    base, extra = divmod(extent, n)
    out, lo = [], 0
    for i in range(n):
        hi = lo + base + (1 if i < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


def parallel_for(fn, args, extent: int, threads: int, per_thread: int = 4) -> None:
    """Run ``fn(args, lo, hi)`` over ``[0, extent)`` on ``threads`` threads (the caller is one)."""
    if threads <= 1 or extent <= 1:
        fn(args, 0, extent)
        return
    parts = chunks(extent, threads * per_thread)
    it = iter(parts)
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                r = next(it, None)
            if r is None:
                return
            fn(args, r[0], r[1])

    pool = _get_pool(threads - 1)
    futs = [pool.submit(work) for _ in range(threads - 1)]
    work()
    for f in futs:
        f.result()
