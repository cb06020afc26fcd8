"""Compile LLVM IR text for the host CPU, with an on-disk object cache.

* One target machine for the host (its CPU name and features, AVX-512 at full
  512-bit width via ``-prefer-256-bit``), O3 through the new pass manager.
* Object code is cached under ``$EQSAT_CACHE_DIR/kernels`` (default
  ``~/.cache/eqsat/kernels``), keyed by a hash of the IR text, the CPU name and
  features, the llvmlite version and ``CODEGEN_VERSION``.  Files are written
  atomically, so concurrent processes may share the directory.
* All objects are loaded into one process-wide MCJIT engine; each kernel
  function has a content-derived name, so identical kernels are loaded once.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LLVMLITE_ENABLE_IR_LAYER_TYPED_POINTERS", "0")

import llvmlite  # noqa: E402
import llvmlite.binding as llvm  # noqa: E402

from rewrite import config  # noqa: E402

CODEGEN_VERSION = "4"  # bump when the generated code changes meaning for the same IR text
KERNEL_CFUNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


@dataclass
class JitStats:
    compiled: int = 0
    cache_hits: int = 0
    memory_hits: int = 0
    seconds: float = 0.0


STATS = JitStats()
_lock = threading.RLock()
_state: dict = {}


def _init() -> dict:
    with _lock:
        if not _state:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()
            triple = llvm.get_process_triple()
            cpu = llvm.get_host_cpu_name()
            feats = llvm.get_host_cpu_features().flatten() + ",-prefer-256-bit"
            tm = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=feats, opt=3, jit=True)
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
            _state.update(tm=tm, cpu=cpu, features=feats, triple=triple, engine=engine, loaded={}, modules=[])
        return _state


def host_description() -> str:
    s = _init()
    return f"{s['triple']} {s['cpu']} {s['features']}"


def cache_dir() -> Path:
    return config.cache_dir("kernels")  # shared with the cost caches: kernels get their own folder


def cache_key(ir_text: str) -> str:
    s = _init()
    h = hashlib.sha256()
    for part in (CODEGEN_VERSION, llvmlite.__version__, s["triple"], s["cpu"], s["features"], ir_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def optimize(ir_text: str) -> llvm.ModuleRef:
    s = _init()
    mod = llvm.parse_assembly(ir_text)
    mod.verify()
    mod.triple = s["triple"]
    mod.data_layout = str(s["tm"].target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(s["tm"], pto)
    with _quiet_stderr():  # "loop not vectorized" remarks for hinted loops LLVM declined: not errors
        pb.getModulePassManager().run(mod, pb)
    return mod


class _quiet_stderr:
    """Silence LLVM's diagnostics printed straight to fd 2 (unless EQSAT_DEBUG is set)."""

    def __enter__(self):
        self.fd = None
        if config.DEBUG.flag():
            return self
        try:
            import sys

            sys.stderr.flush()
            self.fd = os.dup(2)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            os.close(devnull)
        except OSError:
            self.fd = None
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.dup2(self.fd, 2)
            os.close(self.fd)
        return False


def optimized_ir(ir_text: str) -> str:
    return str(optimize(ir_text))


def assembly(ir_text: str) -> str:
    return _init()["tm"].emit_assembly(optimize(ir_text))


def _object_for(ir_text: str, key: str) -> bytes:
    path = cache_dir() / key[:2] / f"{key}.o"
    if not config.NO_CACHE.flag():
        try:
            data = path.read_bytes()
            STATS.cache_hits += 1
            return data
        except OSError:
            pass
    t0 = time.perf_counter()
    obj = _init()["tm"].emit_object(optimize(ir_text))
    STATS.seconds += time.perf_counter() - t0
    STATS.compiled += 1
    if not config.NO_CACHE.flag():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(obj)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only or full cache directory only costs recompilation
    return obj


def load_library(name: str, ir_text: str) -> None:
    """Load a module of shared routines (e.g. GEMM micro-kernels) once per process; kernels call them
    as external functions, resolved by the JIT linker across loaded objects."""
    with _lock:
        s = _init()
        libs = s.setdefault("libs", set())
        if name in libs:
            return
        obj = _object_for(ir_text, cache_key(ir_text))
        s["engine"].add_object_file(llvm.ObjectFileRef.from_data(obj))
        s["engine"].finalize_object()
        libs.add(name)


def load_function(ir_text_fn, name_hint: str = "k") -> tuple[str, int]:
    """Compile (or fetch) a module whose single exported function is named by the caller.

    ``ir_text_fn(name)`` returns the module text with the function called ``name``.
    The name is derived from the text itself, so identical kernels share code.
    Returns ``(function name, address)``.
    """
    probe = ir_text_fn("__KERNEL__")  # the same placeholder as lower.llvm.PLACEHOLDER
    key = cache_key(probe)
    name = f"{name_hint}_{key[:20]}"
    with _lock:
        s = _init()
        addr = s["loaded"].get(name)
        if addr:
            STATS.memory_hits += 1
            return name, addr
        obj = _object_for(ir_text_fn(name), key)
        s["engine"].add_object_file(llvm.ObjectFileRef.from_data(obj))
        s["engine"].finalize_object()
        addr = s["engine"].get_function_address(name)
        if not addr:
            raise RuntimeError(f"kernel {name} not found after loading its object code")
        s["loaded"][name] = addr
        return name, addr


def cfunc(addr: int):
    return KERNEL_CFUNC(addr)
