"""Compile LLVM IR text for a ``Target``, with an on-disk object cache.

* One LLVM target machine per target (its triple, CPU name and features: for
  the host, AVX-512 at full 512-bit width via ``-prefer-256-bit``, see
  ``lower.target``), O3 through the new pass manager.
* Object code is cached under ``$EQSAT_CACHE_DIR/kernels`` (default
  ``~/.cache/eqsat/kernels``), keyed by a hash of ``CODEGEN_VERSION``, the
  target's ``code_key`` (its cache key without the thread count: machine
  code does not depend on it) and the IR text.  Each file is framed and
  checked before LLVM sees it, and written atomically (``lower.llvm.objcache``),
  so a damaged entry is rebuilt and concurrent processes may share the folder.
* Each target's objects are loaded into one MCJIT engine of its own (so a
  routine compiled for two targets never clashes by name); each kernel
  function has a content-derived name, so identical kernels load once.

    >>> name, addr = load_function(text_with_placeholder, parse_target("llvm"))    # doctest: +SKIP
    >>> cfunc(addr)(args, 0, n)                                                    # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
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

from lower.llvm import objcache
from rewrite import config
from rewrite.ir.errors import CodegenError
from rewrite.ir.target import Target

CODEGEN_VERSION = "5"  # bump when the generated code changes meaning for the same IR text
LLVMLITE_VERSION: str = llvmlite.__version__
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


STATS = JitStats()
_lock = threading.RLock()
_jits: dict[str, _Jit] = {}  # target.code_key -> its JIT
_initialized = False


def _init_llvm() -> None:
    global _initialized
    with _lock:
        if not _initialized:  # llvm.initialize() raises in llvmlite 0.50: only the native parts
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()
            _initialized = True


def host_machine() -> tuple[str, str, tuple[str, ...]]:
    """This process's LLVM triple, host CPU name and CPU features (``+avx2``, ``-avx512f``, ...)."""
    _init_llvm()
    flat = llvm.get_host_cpu_features().flatten()
    return llvm.get_process_triple(), llvm.get_host_cpu_name(), tuple(f for f in flat.split(",") if f)


def _jit(target: Target) -> _Jit:
    with _lock:
        j = _jits.get(target.code_key)
        if j is None:
            _init_llvm()
            try:
                tm = llvm.Target.from_triple(target.triple).create_target_machine(
                    cpu=target.cpu, features=",".join(target.features), opt=3, jit=True
                )
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


def optimize(ir_text: str, target: Target) -> llvm.ModuleRef:
    """Parse, verify and optimize (O3) ``ir_text`` for ``target``."""
    tm = _jit(target).tm
    mod = llvm.parse_assembly(ir_text)
    mod.verify()
    mod.triple = target.triple
    mod.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    # llvmlite leaves the SLP vectorizer off at O3.  Short vectorized loops that LLVM unrolls fully before
    # the loop vectorizer sees them (a 32-column panel copy through a ReLU or an add) were left one float at
    # a time; SLP packs them back into vectors.  1 thread, interleaved: 1x1 convolutions packing relu(x) or
    # relu(x + y) 1.03-1.14x faster, plain and 3x3 ones the same; NASNet-A and SqueezeNet 1.01-1.02x at 1 and
    # 2 threads, ResNet-50, ResNeXt-50, Inception-v3, BERT and NasRNN 1.00x.
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    with _quiet_stderr():  # "loop not vectorized" remarks for hinted loops LLVM declined: not errors
        pb.getModulePassManager().run(mod, pb)
    return mod


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


def _object_for(ir_text: str, key: str, target: Target) -> bytes:
    cached = None if config.NO_CACHE.flag() else objcache.read(key)
    if cached is not None:
        with _lock:
            STATS.cache_hits += 1
        return cached
    t0 = time.perf_counter()
    obj = _jit(target).tm.emit_object(optimize(ir_text, target))
    with _lock:
        STATS.seconds += time.perf_counter() - t0
        STATS.compiled += 1
    if not config.NO_CACHE.flag():
        objcache.write(key, obj)
    return obj


def load_library(name: str, ir_text: str, target: Target) -> None:
    """Load a module of shared routines (e.g. GEMM micro-kernels) once per process and target; kernels
    call them as external functions, resolved by the JIT linker across the target's loaded objects."""
    with _lock:
        j = _jit(target)
        if name in j.libs:
            return
        obj = _object_for(ir_text, cache_key(ir_text, target), target)
        j.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        j.engine.finalize_object()
        j.libs.add(name)


def load_function(text: str, target: Target, name_hint: str = "k") -> tuple[str, int]:
    """Compile (or fetch) a module whose single exported function is named ``PLACEHOLDER`` in ``text``.

    The function's real name is derived from the text and the target, so identical kernels share
    code.  Returns ``(function name, address)``.  Safe to call from several threads: the compile runs
    outside this module's lock (llvmlite serializes LLVM's own calls, so one thread's LLVM work overlaps
    another's Python lowering), and a kernel two threads compiled at once is loaded once.
    """
    key = cache_key(text, target)
    name = f"{name_hint}_{key[:20]}"
    with _lock:
        j = _jit(target)
        addr = j.loaded.get(name)
        if addr:
            STATS.memory_hits += 1
            return name, addr
    obj = _object_for(text.replace(f"@{PLACEHOLDER}", f"@{name}"), key, target)
    with _lock:
        addr = j.loaded.get(name)
        if addr:
            return name, addr
        j.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        j.engine.finalize_object()
        addr = j.engine.get_function_address(name)
        if not addr:
            raise RuntimeError(f"kernel {name} not found after loading its object code")  # a bug, not user input
        j.loaded[name] = addr
        return name, addr


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
