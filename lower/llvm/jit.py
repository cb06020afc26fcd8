"""Compile LLVM IR text for a ``Target``, with an on-disk object cache.

* One LLVM target machine per target (its triple, CPU name and features: for
  the host, AVX-512 at full 512-bit width via ``-prefer-256-bit``, see
  ``lower.target``), O3 through the new pass manager.
* Object code is cached under ``$EQSAT_CACHE_DIR/kernels`` (default
  ``~/.cache/eqsat/kernels``), keyed by a hash of ``CODEGEN_VERSION``, the
  target's ``code_key`` (its cache key without the thread count: machine
  code does not depend on it) and the IR text (which names nothing after the
  graph: ``lower.fusion.build_kernel`` names buffers and stages by place).  Each file is framed and
  checked before LLVM sees it, and written atomically (``lower.filecache``),
  so a damaged entry is rebuilt and concurrent processes may share the folder.
* Each target's objects are loaded into one MCJIT engine of its own (so a
  routine compiled for two targets never clashes by name); each kernel
  function has a content-derived name, so identical kernels load once.

    >>> name, addr = load_function(text_with_placeholder, parse_target("llvm"))    # doctest: +SKIP
    >>> cfunc(addr)(args, 0, n)                                                    # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# llvmlite reads this when it is first imported: opaque pointers (``ptr``), as the IR text uses
os.environ.setdefault("LLVMLITE_ENABLE_IR_LAYER_TYPED_POINTERS", "0")

import llvmlite
import llvmlite.binding as llvm

from lower import filecache
from lower.llvm import objcompile, objpool
from rewrite import config
from rewrite.ir.errors import CodegenError
from rewrite.ir.target import Target

# bump when the generated code changes for the same graph: the IR text's lowering, the recipes' choices (10: lower
# parallel thresholds; 11: math epilogues over planes; 12: exp below its range without subnormal products) or the
# code for the same IR text; it keys measured costs too
CODEGEN_VERSION = "12"
LLVMLITE_VERSION: str = llvmlite.__version__
LIBRARY_PASSES = "; light passes"  # keys libraries' objects apart from the ones O3 built
PLACEHOLDER = "__KERNEL__"  # the function name in kernel text before its content-derived name is known
KERNEL_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


@dataclass
class JitStats:
    compiled: int = 0
    cache_hits: int = 0
    memory_hits: int = 0
    seconds: float = 0.0


@dataclass
class _Jit:
    """One target's machine and engine, and what is loaded into it."""

    tm: llvm.TargetMachine
    engine: llvm.ExecutionEngine
    loaded: dict[str, int] = field(default_factory=dict)  # function name -> address
    libs: set[str] = field(default_factory=set)
    compiling: dict[str, threading.Event] = field(default_factory=dict)  # kernels and libraries being compiled


STATS = JitStats()
_lock = threading.RLock()
_jits: dict[str, _Jit] = {}  # target.code_key -> its JIT


def host_machine() -> tuple[str, str, tuple[str, ...]]:
    """This process's LLVM triple, host CPU name and CPU features (``+avx2``, ``-avx512f``, ...).

    AMX (``+amx-tile``) counts only once this process may use it: Linux hands out the tile registers' state
    to a process that asks (``amx_permitted``); where it says no, the AMX features read ``-`` and no kernel
    uses tiles (an AMX instruction without that permission kills the process with SIGILL)."""
    objcompile.init()
    flat = llvm.get_host_cpu_features().flatten()
    features = tuple(f for f in flat.split(",") if f)
    if "+amx-tile" in features and not amx_permitted():
        features = tuple("-" + f[1:] if f.startswith("+amx-") else f for f in features)
    return llvm.get_process_triple(), llvm.get_host_cpu_name(), features


_ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA, _SYS_ARCH_PRCTL = 0x1023, 18, 158  # <asm/prctl.h>, x86-64


@functools.cache
def amx_permitted() -> bool:
    """Ask Linux, once per process, for the AMX tile data state (``arch_prctl(ARCH_REQ_XCOMP_PERM,
    XFEATURE_XTILEDATA)``, Linux 5.16+): True when granted, for every thread of the process."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA) == 0
    except (OSError, AttributeError):
        return False


@functools.cache
def _compiler_runtime() -> None:
    """Make the compiler runtime's routines resolvable in JIT-loaded code: LLVM turns ``pow(x, float(n))`` for an
    integer ``n`` (a power whose exponent is a cast bool or int) into ``llvm.powi``, which calls libgcc's
    ``__powisf2``; this process does not export it, and MCJIT left the call at address 0 (a segfault; fuzz seed
    6448).  libgcc_s is loaded by every Linux process that uses C++ exceptions (torch does): this only makes its
    symbols visible to the JIT."""
    name = ctypes.util.find_library("gcc_s") or "libgcc_s.so.1"
    try:
        llvm.load_library_permanently(name)
    except RuntimeError:  # not glibc/libgcc: LLVM's own runtime names then resolve from the process or fail loudly
        pass


def _jit(target: Target) -> _Jit:
    _compiler_runtime()
    with _lock:
        j = _jits.get(target.code_key)
        if j is None:
            try:
                tm = objcompile.new_target_machine(target.triple, target.cpu, ",".join(target.features))
            except RuntimeError as e:
                raise CodegenError(
                    f"target {target.name}: LLVM cannot generate code for {target.triple}: {e}"
                ) from None
            j = _jits[target.code_key] = _Jit(tm, llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm))
        return j


def cache_key(ir_text: str, target: Target) -> str:
    """The object cache's key for ``ir_text`` compiled for ``target``."""
    h = hashlib.sha256()
    for part in (CODEGEN_VERSION, target.code_key, ir_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def optimize(ir_text: str, target: Target, passes: bool = True) -> llvm.ModuleRef:
    """Parse, verify and optimize (O3, unless ``passes`` is False) ``ir_text`` for ``target``
    (``objcompile.optimize``)."""
    tm = _jit(target).tm
    with _quiet_stderr():  # "loop not vectorized" remarks for hinted loops LLVM declined: not errors
        return objcompile.optimize(ir_text, tm, target.triple, passes)


class _quiet_stderr:
    """Silence LLVM's diagnostics printed straight to fd 2 (unless EQSAT_DEBUG is set).

    fd 2 belongs to the process, and kernels compile on several threads at once: the first thread in points
    it at /dev/null and the last one out restores it (one thread's exit restoring another's /dev/null would
    leave stderr silenced for good)."""

    _lock = threading.Lock()
    _depth = 0
    _saved: int | None = None

    def __enter__(self):
        if config.DEBUG.flag():
            return self
        cls = type(self)
        with cls._lock:
            if cls._depth == 0:
                try:
                    sys.stderr.flush()
                    saved = os.dup(2)
                    devnull = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(devnull, 2)
                    os.close(devnull)
                    cls._saved = saved
                except OSError:
                    cls._saved = None
            cls._depth += 1
        return self

    def __exit__(self, *exc):
        if config.DEBUG.flag():
            return False
        cls = type(self)
        with cls._lock:
            cls._depth -= 1
            if cls._depth == 0 and cls._saved is not None:
                os.dup2(cls._saved, 2)
                os.close(cls._saved)
                cls._saved = None
        return False


def optimized_ir(ir_text: str, target: Target) -> str:
    return str(optimize(ir_text, target))


def assembly(ir_text: str, target: Target) -> str:
    return _jit(target).tm.emit_assembly(optimize(ir_text, target))


def _object_for(ir_text: str, key: str, target: Target, passes: bool = True) -> bytes:
    cached = None if config.NO_CACHE.flag() else filecache.read(key)
    if cached is not None:
        with _lock:
            STATS.cache_hits += 1
        return cached
    t0 = time.perf_counter()
    _jit(target)  # the target machine exists (or its CodegenError is raised) before a worker sees the target
    obj = objpool.compile_object(ir_text, target, passes)  # an idle worker process, else here
    if obj is None:
        obj = _jit(target).tm.emit_object(optimize(ir_text, target, passes))
    with _lock:
        STATS.seconds += time.perf_counter() - t0
        STATS.compiled += 1
    if not config.NO_CACHE.flag():
        filecache.write(key, obj)
    return obj


def _claim(j: _Jit, name: str, done: Callable[[], bool]) -> threading.Event | None:
    """Under ``_lock``: an event this thread sets once it has compiled and loaded ``name``, or None after another
    thread compiling it finished (``done()`` then says whether it succeeded) or when ``done()`` already holds."""
    while True:
        with _lock:
            if done():
                return None
            pending = j.compiling.get(name)
            if pending is None:
                pending = j.compiling[name] = threading.Event()
                return pending
        pending.wait()  # another thread compiles it: its result, or on its failure this thread's own try


def _release(j: _Jit, name: str, pending: threading.Event) -> None:
    with _lock:
        del j.compiling[name]
    pending.set()


def load_library(name: str, ir_text: str, target: Target) -> None:
    """Load a module of shared routines (e.g. GEMM micro-kernels) once per process and target; kernels
    call them as external functions, resolved by the JIT linker across the target's loaded objects.
    Compiled outside the lock, as kernels are; a thread wanting a library another thread is compiling waits
    for it.

    A library's text is vector code written as it should run (``lower.llvm.intrinsics``: registers named, no
    memory a pass could promote), so it takes ``objcompile.LIGHT_PASSES`` instead of O3's pipeline: a GEMM
    micro-kernel library (28 variants) compiled in 0.5 s, and five of them were half of BERT's cold compile
    time.  The loops come out as O3 left them; compiling full:mobilenet_v2 went 6.1 -> 4.6 s and
    full:bert 2.3 -> 1.7 s (one compile job, 3 runs each), their run times within noise (3.3 ms, 36 ms).
    A GEMM micro-kernel's library is now one of its bodies each, loaded only where a kernel reaches it
    (``lower.llvm.intrinsics.reached_parts``)."""
    j = _jit(target)
    pending = _claim(j, name, lambda: name in j.libs)
    if pending is None:
        return
    try:
        obj = _object_for(ir_text, cache_key(ir_text + LIBRARY_PASSES, target), target, passes=False)
        with _lock:
            j.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            j.engine.finalize_object()
            j.libs.add(name)
    finally:
        _release(j, name, pending)


def load_function(text: str, target: Target, name_hint: str = "k", passes: bool = True) -> tuple[str, int]:
    """Compile (or fetch) a module whose single exported function is named ``PLACEHOLDER`` in ``text``.

    The function's real name is derived from the text and the target, so identical kernels share code (layers
    alike lower to one text: ``lower.fusion.build_kernel`` names buffers and stages by place).  Returns
    ``(function name, address)``.  Safe to call from several threads: the compile runs outside this module's
    lock (llvmlite serializes LLVM's own calls, so one thread's LLVM work overlaps another's Python lowering,
    and compile workers run beside it: ``objpool``), and a kernel another thread is compiling is waited for,
    not compiled twice.  ``passes`` False: ``objcompile.LIGHT_PASSES`` instead of O3's pipeline, for code that
    runs once (``compile_once``): its own objects and symbols.
    """
    light = "" if passes else LIBRARY_PASSES  # keys a light compile's objects and symbols apart
    key = cache_key(text + light, target)
    name = f"{name_hint}_{key[:20]}"
    j = _jit(target)
    with _lock:
        addr = j.loaded.get(name)
        if addr:
            STATS.memory_hits += 1
            return name, addr
    pending = _claim(j, name, lambda: name in j.loaded)
    if pending is None:
        with _lock:
            STATS.memory_hits += 1
            return name, j.loaded[name]
    try:
        # the object is keyed by the text it compiles, its symbol named: the same text loaded under another
        # name hint (a benchmark's loop, a kernel) is another object, not one whose symbol is not there
        named = text.replace(f"@{PLACEHOLDER}", f"@{name}")
        obj = _object_for(named, cache_key(named + light, target), target, passes)
        with _lock:
            j.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            j.engine.finalize_object()
            addr = j.engine.get_function_address(name)
            if not addr:
                raise RuntimeError(f"kernel {name} not found after loading its object code")  # a bug, not input
            j.loaded[name] = addr
            return name, addr
    finally:
        _release(j, name, pending)


def function_address(target: Target, name: str) -> int:
    """The address of another non-internal function of a module ``load_function`` loaded (``{name}.x``)."""
    with _lock:
        addr = _jit(target).engine.get_function_address(name)
    if not addr:
        raise RuntimeError(f"function {name} is not loaded for {target.name}")  # a bug, not user input
    return addr


def cfunc(addr: int) -> Callable[[Any, int, int], None]:
    """The kernel at ``addr`` as a ctypes function ``f(args, lo, hi)`` (calls release the GIL)."""
    return KERNEL_CFUNC(addr)
