"""LLVM IR text -> object code for one target machine: the pass pipeline and code generation, in one place
for the JIT (``lower.llvm.jit``) and for its compile worker processes (``lower.llvm.objpool``).

llvmlite runs one LLVM call at a time per process (a global lock around its C API), so a process compiles one
module at a time however many threads ask; worker processes compile beside it.  This module imports llvmlite
and the standard library alone, so that a worker starts in a tenth of a second: run as a script, it serves
compile requests on two pipes (``serve``).

    >>> obj = emit(ir_text, triple, cpu, "+avx2,+fma")     # doctest: +SKIP
"""

from __future__ import annotations

import functools
import os
import pickle
import struct
import sys
import threading
from typing import Any

import llvmlite.binding as llvm

_init_lock = threading.Lock()
_initialized = False


def init() -> None:
    """LLVM's native target, asm printer and parser, once per process (``llvm.initialize()`` raises in
    llvmlite 0.50: only the native parts)."""
    global _initialized
    with _init_lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()
            _initialized = True


def new_target_machine(triple: str, cpu: str, features: str) -> llvm.TargetMachine:
    """A target machine for kernels (O3, JIT code model); raises RuntimeError when LLVM cannot generate code
    for ``triple``.  A fresh one each call: an MCJIT engine takes ownership of (and frees) the one it is given."""
    init()
    return llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=3, jit=True)


@functools.lru_cache(maxsize=16)
def target_machine(triple: str, cpu: str, features: str) -> llvm.TargetMachine:
    """The machine ``emit`` compiles for, one per (triple, cpu, features) and process (never given to an
    engine)."""
    return new_target_machine(triple, cpu, features)


# For hand-written vector code (GEMM micro-kernel libraries): folds, then loops rotated and unrolled as O3
# unrolls them (a short edge tile's k loop by 2-4), at a third of O3's time.  O3's inlining, SLP and the rest
# change nothing in the loops.
LIGHT_PASSES = (
    "instruction_combine",
    "simplify_cfg",
    "loop_rotate",
    "loop_unroll",
    "instruction_combine",
    "simplify_cfg",
)


def optimize(ir_text: str, tm: llvm.TargetMachine, triple: str, passes: bool = True) -> llvm.ModuleRef:
    """Parse, verify and optimize ``ir_text`` for ``tm``: O3, or with ``passes`` False the few passes that
    code written as vector code already needs (``LIGHT_PASSES``; ``emit``'s code generation is O3 either way)."""
    mod = llvm.parse_assembly(ir_text)
    mod.verify()
    mod.triple = triple
    mod.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    if not passes:
        pb = llvm.create_pass_builder(tm, pto)
        mpm = llvm.create_new_module_pass_manager()
        for name in LIGHT_PASSES:
            getattr(mpm, f"add_{name}_pass")()
        mpm.run(mod, pb)
        return mod
    # llvmlite leaves the SLP vectorizer off at O3.  Short vectorized loops that LLVM unrolls fully before
    # the loop vectorizer sees them (a 32-column panel copy through a ReLU or an add) were left one float at
    # a time; SLP packs them back into vectors.  1 thread, interleaved: 1x1 convolutions packing relu(x) or
    # relu(x + y) 1.03-1.14x faster, plain and 3x3 ones the same; NASNet-A and SqueezeNet 1.01-1.02x at 1 and
    # 2 threads, ResNet-50, ResNeXt-50, Inception-v3, BERT and NasRNN 1.00x.
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return mod


def emit(ir_text: str, triple: str, cpu: str, features: str, passes: bool = True) -> bytes:
    """``ir_text`` optimized (unless ``passes`` is False: see ``optimize``) and compiled to an object file for
    the machine (triple, cpu, features)."""
    tm = target_machine(triple, cpu, features)
    return tm.emit_object(optimize(ir_text, tm, triple, passes))


# A request and its answer on the pipes: a 4-byte length, then a pickle.  Request: (ir_text, triple, cpu,
# features, passes); answer: ("ok", object bytes) or ("error", message) (the parent compiles it again itself, so that
# the error it raises is LLVM's own, as without workers).
_LEN = struct.Struct("<I")


def send(fd: int, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _LEN.pack(len(data)) + data)


def receive(fd: int) -> Any:
    """The next message on ``fd``; EOFError when the other side closed it."""
    (n,) = _LEN.unpack(_read_exactly(fd, _LEN.size))
    return pickle.loads(_read_exactly(fd, n))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, n: int) -> bytes:
    parts, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def serve(rfd: int, wfd: int) -> None:
    """Answer compile requests from ``rfd`` on ``wfd`` until ``rfd`` closes (the parent exited or let go)."""
    while True:
        try:
            request = receive(rfd)
        except EOFError:
            return
        try:
            ir_text, triple, cpu, features, passes = request
            answer: tuple[str, object] = ("ok", emit(ir_text, triple, cpu, features, passes))
        except Exception as e:  # any failure goes back to the parent, which compiles it itself
            answer = ("error", f"{type(e).__name__}: {e}")
        send(wfd, answer)


if __name__ == "__main__":  # a worker: requests on stdin; answers on the stdout it was started with
    wfd = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # anything else printing (LLVM, a library) must not corrupt the answers
    if sys.argv[1:] != ["debug"]:
        os.dup2(null, 2)  # LLVM's "loop not vectorized" remarks, as the JIT silences them in-process
    os.close(null)
    sys.stdout = open(os.devnull, "w")  # for the process's life
    serve(0, wfd)
