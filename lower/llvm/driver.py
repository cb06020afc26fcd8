"""Native launches: a JIT'ed driver walks a launch table; parallel kernels run on a native thread pool.

Running a model kernel by kernel from Python costs a ctypes call per kernel, and a parallel kernel
through ``lower.parallel``'s Python pool costs futures and a lock per chunk (tens of microseconds).
Here a whole model is ONE ctypes call, ``drive(pool, table, n)``, walking ``n`` entries
``{fn, args, extent, chunk}`` in order:

* ``chunk == 0`` (or no pool): ``fn(args, 0, extent)``, one call on the calling thread;
* ``chunk > 0``: the entry is published to the pool's workers, and every thread (the caller is one)
  claims chunks of ``chunk`` iterations until the extent is covered, the caller from the front and the
  workers from the back; the caller returns once every claimed chunk is *finished* (a count of done
  iterations), not once every worker has checked in.

Claiming from both ends keeps the work of consecutive kernels on the same core when nobody is late: on 2
threads the caller runs the first part of every kernel, the worker the last, so a depthwise convolution
finds its channels in the cache of the core that wrote them.  Claimed from the front by both (who came
first took the next chunk), half of a small kernel's input came from the other core's cache: 2 threads,
back-to-back runs in one process, MobileNetV2 1.11-1.18x, ShuffleNetV2 1.55x, DenseNet-121 1.14x faster
this way; EfficientNet-B0, ViT and ConvNeXt 1.00-1.02x.

Why not libgomp's ``GOMP_parallel`` (torch loads it): its end is a team barrier, so on a busy
machine (2 cores shared with other processes) a descheduled worker that never took a chunk still
holds every launch up for its time slice.  Measured on this host with one other process busy:
``GOMP_parallel`` 40-380 us per launch, the Python pool 20 us, this pool a few us.

The pool (one per thread count, ``threads - 1`` workers, started once) is a 384-byte record:

    word     gen << 32 | lo << 16 | hi    chunks [lo, hi) unclaimed; claimed with cmpxchg (lo + 1 by the
                                          caller, hi - 1 by a worker); a new gen publishes a new job
    done     iterations finished          the caller waits until it reaches the extent
    job      fn, args, extent, chunk      written before the gen that publishes them
    epoch, sleepers                       futex word and count: workers spin a while, then sleep
    stop, syscall, spins                  shutdown flag; libc's syscall(); spin count before sleeping

A late worker cannot run a stale job, nor the old job's claim under the new job's fields: it only runs
a range after its cmpxchg on ``word`` succeeded with the word it read the fields under, and a launch
first *closes* the old job (``word`` = a fresh gen with no chunk left, lo = hi = 0) before it rewrites the
fields (release; the worker reads them acquire), then publishes the job under the next gen.  Without the
close, a worker holding the last job's word could read the next job's fields before the new gen was
stored, and its cmpxchg on the old word would succeed: with a next-iteration counter in place of the
chunk bounds, iterations ran twice (27 in 20000 3-thread tables on 2 cores).

The worker/caller handshake around sleeping is Dekker's: the caller stores ``word`` then reads
``sleepers`` (both seq_cst), a worker increments ``sleepers`` then re-reads ``word``; whichever comes
second sees the other.  Linux x86-64 only
(futex and sched_yield by number, ``pause``); elsewhere ``native_pool()`` is None and the backend
keeps ``lower.parallel``'s Python pool.  The table itself works everywhere (serial entries only).

    >>> table = LaunchTable([(fn, args, 64, 2), (fn2, args2, None, 2)], threads=2)    # doctest: +SKIP
    >>> table()                                   # both kernels, one native call     # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import platform
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from lower.llvm import jit
from rewrite.ir.target import Target

SYS_FUTEX, SYS_SCHED_YIELD = 202, 24  # x86-64 Linux syscall numbers
FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE = 128, 129
# A worker's pauses (~50 ns each) before it sleeps: ~50 us, longer than the gap between two parallel
# kernels of a model.  Spinning longer costs on a busy machine: a spinning worker takes time slices from
# the caller's serial kernels (squeezenet, 2 threads, others busy 1.5 cores: 1 ms of spinning ran 0.89x
# the Python pool, 15-100 us 1.18-1.21x, none 1.14x).
SPIN_PAUSES = 1000
WAIT_PAUSES = 1000  # the caller's pauses waiting for a worker's chunk before it starts yielding its core
# ``awake``: an idle launch of two chunks a thread of this many pauses (~6 us each), then a wait of at most
# WAKE_WAIT_S until no worker sleeps (on this host a sleeping worker took 0.1-3 ms to run again, at times
# longer); inside, a worker spins AWAKE_PAUSES (~25 ms) after each job, longer than a measurement's cache flush
IDLE_PAUSES = 250
WAKE_WAIT_S = 0.05
AWAKE_PAUSES = 1_000_000
CHUNKS_PER_THREAD = 8  # dynamic balancing on a shared machine; a chunk costs a cmpxchg and a call
MAX_CHUNKS = 0xFFFF  # chunks of one launch: the claim word's 16-bit fields
POOL_BYTES = 384
_WORD, _DONE, _FN, _ARGS, _EXT, _CHUNK, _EPOCH, _SLEEPERS, _STOP, _SYSCALL, _SPINS, _GEN = (
    0, 64, 128, 136, 144, 152, 192, 196, 256, 264, 272, 320,
)  # fmt: skip


def _driver_ir(pause: bool) -> str:
    def at(off: int) -> str:
        return f"getelementptr inbounds i8, ptr %pool, i64 {off}"

    relax = "call void @llvm.x86.sse2.pause()" if pause else ""
    decl = "declare void @llvm.x86.sse2.pause()\n" if pause else ""
    return f"""{decl}
; claim and run chunks of job `gen` until they are all claimed or a newer job replaced it: the caller
; (%front) takes them from the front, the workers from the back
define internal void @__KERNEL__.run(ptr %pool, i64 %gen, i1 %front) nounwind {{
entry:
  %donep = {at(_DONE)}
  %fnp = {at(_FN)}
  %argsp = {at(_ARGS)}
  %extp = {at(_EXT)}
  %chunkp = {at(_CHUNK)}
  br label %claim
claim:
  %c = load atomic i64, ptr %pool acquire, align 8
  %cg = lshr i64 %c, 32
  %same = icmp eq i64 %cg, %gen
  br i1 %same, label %check, label %out
check:
  %lo16 = lshr i64 %c, 16
  %lo = and i64 %lo16, 65535
  %hi = and i64 %c, 65535
  %left = icmp ult i64 %lo, %hi
  br i1 %left, label %take, label %out
take:
  %ext = load atomic i64, ptr %extp acquire, align 8
  %chunk = load atomic i64, ptr %chunkp acquire, align 8
  %fn = load atomic ptr, ptr %fnp acquire, align 8
  %args = load atomic ptr, ptr %argsp acquire, align 8
  %hi1 = sub i64 %hi, 1
  %k = select i1 %front, i64 %lo, i64 %hi1
  %step = select i1 %front, i64 65536, i64 -1
  %next = add i64 %c, %step
  %r = cmpxchg ptr %pool, i64 %c, i64 %next acq_rel acquire
  %ok = extractvalue {{ i64, i1 }} %r, 1
  br i1 %ok, label %work, label %claim
work:
  %idx = mul i64 %k, %chunk
  %end = add i64 %idx, %chunk
  %short = icmp slt i64 %end, %ext
  %top = select i1 %short, i64 %end, i64 %ext
  call void %fn(ptr %args, i64 %idx, i64 %top)
  %n = sub i64 %top, %idx
  %old = atomicrmw add ptr %donep, i64 %n release
  br label %claim
out:
  ret void
}}

; the caller's side of one parallel launch: publish, wake sleepers, work, wait until all is done
define internal void @__KERNEL__.parallel(ptr %pool, ptr %fn, ptr %args, i64 %ext, i64 %chunk) nounwind {{
entry:
  %donep = {at(_DONE)}
  %genp = {at(_GEN)}
  %epochp = {at(_EPOCH)}
  %sleepp = {at(_SLEEPERS)}
  %sysp = {at(_SYSCALL)}
  %fnp = {at(_FN)}
  %argsp = {at(_ARGS)}
  %extp = {at(_EXT)}
  %chunkp = {at(_CHUNK)}
  %g0 = load i64, ptr %genp, align 8
  %g1 = add i64 %g0, 1
  %shut = and i64 %g1, 4294967295
  %g2 = add i64 %g0, 2
  %gen = and i64 %g2, 4294967295
  store i64 %gen, ptr %genp, align 8
  %closed = shl i64 %shut, 32
  store atomic i64 %closed, ptr %pool seq_cst, align 8
  store atomic ptr %fn, ptr %fnp release, align 8
  store atomic ptr %args, ptr %argsp release, align 8
  store atomic i64 %ext, ptr %extp release, align 8
  store atomic i64 %chunk, ptr %chunkp release, align 8
  store atomic i64 0, ptr %donep monotonic, align 8
  %last = add i64 %ext, %chunk
  %last1 = sub i64 %last, 1
  %chunks = udiv i64 %last1, %chunk
  %w0 = shl i64 %gen, 32
  %w = or i64 %w0, %chunks
  store atomic i64 %w, ptr %pool seq_cst, align 8
  %sleepers = load atomic i32, ptr %sleepp seq_cst, align 4
  %anyone = icmp sgt i32 %sleepers, 0
  %sys = load ptr, ptr %sysp, align 8
  br i1 %anyone, label %wake, label %go
wake:
  %e = atomicrmw add ptr %epochp, i32 1 seq_cst
  %wk = call i64 (i64, ...) %sys(i64 {SYS_FUTEX}, ptr %epochp, i64 {FUTEX_WAKE_PRIVATE}, i64 2147483647)
  br label %go
go:
  call void @__KERNEL__.run(ptr %pool, i64 %gen, i1 true)
  br label %wait
wait:
  %i = phi i64 [ 0, %go ], [ %i1, %relax ], [ %i1, %yield ]
  %d = load atomic i64, ptr %donep acquire, align 8
  %fin = icmp sge i64 %d, %ext
  br i1 %fin, label %out, label %more
more:
  %i1 = add i64 %i, 1
  %patient = icmp slt i64 %i, {WAIT_PAUSES}
  br i1 %patient, label %relax, label %yield
relax:
  {relax}
  br label %wait
yield:
  %y = call i64 (i64, ...) %sys(i64 {SYS_SCHED_YIELD})
  br label %wait
out:
  ret void
}}

; a worker thread: serve each new job, spin a while when idle, then sleep on the futex; returns on stop
define void @__KERNEL__.worker(ptr %pool) nounwind {{
entry:
  %epochp = {at(_EPOCH)}
  %sleepp = {at(_SLEEPERS)}
  %stopp = {at(_STOP)}
  %sysp = {at(_SYSCALL)}
  %spinsp = {at(_SPINS)}
  br label %top
top:
  %last = phi i64 [ 0, %entry ], [ %g, %serve ], [ %last, %unsleep ]
  br label %poll
poll:
  %i = phi i64 [ 0, %top ], [ %i1, %pause ]
  %c = load atomic i64, ptr %pool acquire, align 8
  %g = lshr i64 %c, 32
  %fresh = icmp ne i64 %g, %last
  br i1 %fresh, label %serve, label %idle
serve:
  call void @__KERNEL__.run(ptr %pool, i64 %g, i1 false)
  br label %top
idle:
  %stop = load atomic i64, ptr %stopp monotonic, align 8
  %halt = icmp ne i64 %stop, 0
  br i1 %halt, label %exit, label %count
count:
  %i1 = add i64 %i, 1
  %spins = load atomic i64, ptr %spinsp monotonic, align 8
  %more = icmp slt i64 %i, %spins
  br i1 %more, label %pause, label %sleep
pause:
  {relax}
  br label %poll
sleep:
  %e = load atomic i32, ptr %epochp seq_cst, align 4
  %s0 = atomicrmw add ptr %sleepp, i32 1 seq_cst
  %c2 = load atomic i64, ptr %pool seq_cst, align 8
  %g2 = lshr i64 %c2, 32
  %stop2 = load atomic i64, ptr %stopp seq_cst, align 8
  %fresh2 = icmp ne i64 %g2, %last
  %halt2 = icmp ne i64 %stop2, 0
  %awake = or i1 %fresh2, %halt2
  br i1 %awake, label %unsleep, label %block
block:
  %sys = load ptr, ptr %sysp, align 8
  %e64 = zext i32 %e to i64
  %r = call i64 (i64, ...) %sys(i64 {SYS_FUTEX}, ptr %epochp, i64 {FUTEX_WAIT_PRIVATE}, i64 %e64, ptr null)
  br label %unsleep
unsleep:
  %s1 = atomicrmw sub ptr %sleepp, i32 1 seq_cst
  br label %top
exit:
  ret void
}}

; a kernel that only waits, IDLE_PAUSES pauses per iteration: what ``awake`` launches
define void @__KERNEL__.idle(ptr %args, i64 %lo, i64 %hi) nounwind {{
entry:
  %n = sub i64 %hi, %lo
  %spins = mul i64 %n, {IDLE_PAUSES}
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  {relax}
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %spins
  br i1 %more, label %loop, label %out
out:
  ret void
}}

; the launch table: {{fn, args, extent, chunk}} per kernel, in order; %pool null: everything serial
define void @__KERNEL__(ptr %pool, ptr %table, i64 %n) nounwind {{
entry:
  %nopool = icmp eq ptr %pool, null
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %latch ]
  %e = getelementptr inbounds {{ ptr, ptr, i64, i64 }}, ptr %table, i64 %i
  %fn = load ptr, ptr %e, align 8
  %argsp = getelementptr inbounds {{ ptr, ptr, i64, i64 }}, ptr %e, i64 0, i32 1
  %args = load ptr, ptr %argsp, align 8
  %extp = getelementptr inbounds {{ ptr, ptr, i64, i64 }}, ptr %e, i64 0, i32 2
  %ext = load i64, ptr %extp, align 8
  %chunkp = getelementptr inbounds {{ ptr, ptr, i64, i64 }}, ptr %e, i64 0, i32 3
  %chunk = load i64, ptr %chunkp, align 8
  %serial = icmp sle i64 %chunk, 0
  %alone = or i1 %serial, %nopool
  br i1 %alone, label %one, label %team
one:
  call void %fn(ptr %args, i64 0, i64 %ext)
  br label %latch
team:
  call void @__KERNEL__.parallel(ptr %pool, ptr %fn, ptr %args, i64 %ext, i64 %chunk)
  br label %latch
latch:
  %next = add i64 %i, 1
  %again = icmp slt i64 %next, %n
  br i1 %again, label %loop, label %done
done:
  ret void
}}
"""


DRIVE_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
WORKER_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Entry(ctypes.Structure):
    """One launch: ``fn(args, lo, hi)`` over ``[0, extent)``; ``chunk`` 0 runs it as one call."""

    _fields_ = [
        ("fn", ctypes.c_void_p),
        ("args", ctypes.c_void_p),
        ("extent", ctypes.c_int64),
        ("chunk", ctypes.c_int64),
    ]


def pool_supported() -> bool:
    """Whether this host can run the native pool (futex and syscall numbers of x86-64 Linux)."""
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


@functools.cache
def _host() -> Target:
    """A generic target for the driver (no vector code in it): this process's triple, no CPU features."""
    triple, _, _ = jit.host_machine()
    return Target("llvm", name="llvm-driver", triple=triple, cpu="generic")


@functools.cache
def _driver() -> tuple[Any, int, int]:
    """The JIT'ed driver ``drive(pool, table, n)`` as a ctypes function, its worker loop's address and its idle
    kernel's."""
    t = _host()
    name, addr = jit.load_function(_driver_ir(pool_supported() and t.triple.startswith("x86_64")), t, "drive")
    return DRIVE_CFUNC(addr), jit.function_address(t, f"{name}.worker"), jit.function_address(t, f"{name}.idle")


class Pool:
    """``threads - 1`` native worker threads and their shared record (see the module docstring)."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self._mem = ctypes.create_string_buffer(POOL_BYTES + 64)
        self.addr = ctypes.addressof(self._mem) + (-ctypes.addressof(self._mem)) % 64
        libc = ctypes.CDLL(None)
        self._syscall = libc.syscall
        self._set(_SYSCALL, ctypes.cast(libc.syscall, ctypes.c_void_p).value or 0)
        self._set(_SPINS, SPIN_PAUSES)
        self.lock = threading.Lock()  # one caller at a time; another one runs its kernels alone
        self.lock_awake, self.awake_depth = threading.Lock(), 0  # ``awake``: how many are inside it
        _, worker_addr, _ = _driver()
        self._worker = WORKER_CFUNC(worker_addr)
        prev = threading.stack_size(32 << 20)  # kernels keep packing scratch (<= 2 MiB) on the stack
        try:
            self._threads = [
                threading.Thread(target=self._worker, args=(self.addr,), name=f"eqsat-native-{i}", daemon=True)
                for i in range(threads - 1)
            ]
            for th in self._threads:
                th.start()
        finally:
            threading.stack_size(prev)

    def _set(self, off: int, value: int) -> None:
        ctypes.c_int64.from_address(self.addr + off).value = value

    def close(self) -> None:
        """Stop the workers (they return from the native loop) and wait for them."""
        self._set(_STOP, 1)
        epoch = ctypes.c_int32.from_address(self.addr + _EPOCH)
        epoch.value += 1
        self._syscall(ctypes.c_long(SYS_FUTEX), ctypes.c_void_p(self.addr + _EPOCH), FUTEX_WAKE_PRIVATE, 1 << 30)
        for th in self._threads:
            th.join()


_pools: dict[int, Pool] = {}
_pools_lock = threading.Lock()


def native_pool(threads: int) -> Pool | None:
    """The process's native pool for ``threads`` threads (started on first use); None for one thread or
    where the pool is not supported."""
    if threads <= 1 or not pool_supported():
        return None
    with _pools_lock:
        p = _pools.get(threads)
        if p is None:
            p = _pools[threads] = Pool(threads)
        return p


@contextlib.contextmanager
def awake(threads: int) -> Iterator[None]:
    """Inside, the workers of the pool for ``threads`` threads are up and spin for ``AWAKE_PAUSES`` after each
    job instead of ``SPIN_PAUSES``, so that a launch finds them spinning as a model's kernels find them after
    the kernel before (an idle launch wakes them on entry; on exit they may sleep again).  For measurements
    (``lower.llvm.measure``): there is a cache flush between two timed kernels, and a worker asleep by then
    was called up by the kernel it should have helped with.  Nests (the outermost exit restores the spin)."""
    pool = native_pool(threads)
    if pool is None:
        yield
        return
    with pool.lock_awake:
        pool.awake_depth += 1
        pool._set(_SPINS, AWAKE_PAUSES)
    try:
        sleepers = ctypes.c_int32.from_address(pool.addr + _SLEEPERS)
        if sleepers.value > 0:
            _, _, idle = _driver()
            LaunchTable([(ctypes.c_void_p(idle), None, 2 * threads)], threads)()
            # the caller may have run every chunk before a worker woke: wait (a while at most) until none sleeps
            deadline = time.perf_counter() + WAKE_WAIT_S
            while sleepers.value > 0 and time.perf_counter() < deadline:
                pass
        yield
    finally:
        with pool.lock_awake:  # nested (a measurement's rounds around each profile): the outermost one restores
            pool.awake_depth -= 1
            if pool.awake_depth == 0:
                pool._set(_SPINS, SPIN_PAUSES)


def chunk_of(extent: int | None, threads: int) -> int:
    """Iterations per claimed range of a parallel root loop of ``extent`` on ``threads`` threads; 0: one
    call (no parallel root, one thread, or one iteration)."""
    if extent is None or threads <= 1 or extent <= 1:
        return 0
    # the claim word counts chunks in 16 bits
    return max(1, extent // (threads * CHUNKS_PER_THREAD), -(-extent // MAX_CHUNKS))


class LaunchTable:
    """Kernels ``(fn, args, extent)`` in launch order, run by one call of the driver on ``threads`` threads.

    ``fn`` is a ctypes kernel ``f(args, lo, hi)``, ``args`` its argument array's address (patched in
    place between calls: the table holds the address, not the contents).  ``pool=False`` runs every
    entry as one call on the calling thread (what the per-kernel path does without a pool)."""

    def __init__(self, launches: Sequence[tuple[Any, Any, int | None]], threads: int, pool: bool = True) -> None:
        self.threads = max(1, threads)
        self.pool = native_pool(self.threads) if pool else None
        self.n = len(launches)
        self.table = (Entry * max(1, self.n))()
        self.keep = list(launches)  # the ctypes functions and arrays the table points into
        for e, (fn, args, extent) in zip(self.table, launches, strict=False):
            e.fn = ctypes.cast(fn, ctypes.c_void_p).value
            e.args = args.value if isinstance(args, ctypes.c_void_p) else ctypes.cast(args, ctypes.c_void_p).value
            e.extent = extent or 0
            e.chunk = chunk_of(extent, self.threads) if self.pool is not None else 0
        self._drive, _, _ = _driver()

    @property
    def parallel(self) -> int:
        """How many entries run on the pool."""
        return sum(1 for e in self.table[: self.n] if e.chunk > 0)

    def __call__(self, key: tuple[int, ...] = ()) -> None:
        pool = self.pool
        if pool is not None and pool.lock.acquire(blocking=False):
            try:
                self._drive(pool.addr, self.table, self.n)
            finally:
                pool.lock.release()
        else:  # no pool, or another caller holds it: every kernel as one call here
            self._drive(None, self.table, self.n)
