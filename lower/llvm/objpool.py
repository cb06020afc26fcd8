"""Compile worker processes: LLVM work of one process spread over the cores.

llvmlite serializes every LLVM call in a process, so threads that compile kernels at once (cost measurement's
batches, a model's kernels in ``compile_graph``) still run LLVM one module at a time.  ``EQSAT_COMPILE_JOBS``
(default: the cores this process may run on) is how many modules compile at once: this process and
``JOBS - 1`` workers, each a ``python lower/llvm/objcompile.py`` that imports llvmlite alone (a tenth of a
second to start) and answers compile requests on a pipe.

``compile_object`` hands a module to an idle worker, or answers None when none is idle (the caller then
compiles in-process, so a request never waits for a worker).  Workers start on the first request and stop
when this process exits or lets them go (``shutdown``).  A worker that dies or cannot start turns the pool
off for the process with one ``CompileWorkerWarning``: kernels then compile in-process, only slower.

    >>> obj = compile_object(ir_text, target)    # bytes, or None: compile it here   # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import os
import queue
import subprocess
import sys
import threading
import warnings
from dataclasses import dataclass

from lower.llvm import objcompile
from rewrite import config
from rewrite.ir.target import Target

_SCRIPT = objcompile.__file__


class CompileWorkerWarning(UserWarning):
    """A compile worker process failed: kernels compile in this process from now on."""


@dataclass
class _Worker:
    proc: subprocess.Popen[bytes]
    wfd: int  # requests
    rfd: int  # answers


_lock = threading.Lock()
_idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
_workers: list[_Worker] = []
_broken = False


def jobs() -> int:
    """LLVM compiles at once: ``EQSAT_COMPILE_JOBS``, else the cores this process may run on."""
    n = config.COMPILE_JOBS.integer()
    return config.cores() if n is None else n


def _start() -> None:
    """Start the workers (``jobs() - 1``) unless they run or the pool is off."""
    global _broken
    with _lock:
        if _workers or _broken:
            return
        try:
            for _ in range(jobs() - 1):
                proc = subprocess.Popen(
                    [sys.executable, _SCRIPT, "debug" if config.DEBUG.flag() else "quiet"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=None if config.DEBUG.flag() else subprocess.DEVNULL,
                    close_fds=True,
                )
                assert proc.stdin is not None and proc.stdout is not None
                w = _Worker(proc, proc.stdin.fileno(), proc.stdout.fileno())
                _workers.append(w)
                _idle.put(w)
        except OSError as e:
            _fail(f"cannot start a compile worker: {e}")


def _fail(why: str) -> None:
    global _broken
    if not _broken:
        _broken = True
        warnings.warn(f"{why}; LLVM compiles in this process from now on", CompileWorkerWarning, stacklevel=4)


def compile_object(ir_text: str, target: Target, passes: bool = True) -> bytes | None:
    """``ir_text``'s object code for ``target`` (``objcompile.emit``) from an idle worker; None when no worker
    is idle, the pool is off, or the worker could not compile it (the caller compiles it in-process: its error
    is LLVM's own)."""
    if _broken or jobs() < 2:
        return None
    if not _workers:
        _start()
    try:
        w = _idle.get_nowait()
    except queue.Empty:
        return None
    try:
        objcompile.send(w.wfd, (ir_text, target.triple, target.cpu, ",".join(target.features), passes))
        answer = objcompile.receive(w.rfd)
    except (OSError, EOFError) as e:
        _fail(f"compile worker {w.proc.pid} stopped ({type(e).__name__})")
        return None
    _idle.put(w)
    status, value = answer
    return value if status == "ok" and isinstance(value, bytes) else None


def shutdown() -> None:
    """Let the workers go (each exits when its request pipe closes); a later request starts new ones."""
    with _lock:
        for w in _workers:
            for f in (w.proc.stdin, w.proc.stdout):
                if f is not None:
                    f.close()
        for w in _workers:
            try:
                w.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover - a worker stuck in LLVM
                w.proc.kill()
        _workers.clear()
        while True:
            try:
                _idle.get_nowait()
            except queue.Empty:
                break


def _forget_in_child() -> None:
    """A forked child shares its parent's pipes to the workers: it starts its own (or none) instead."""
    global _idle, _broken
    for w in _workers:
        for f in (w.proc.stdin, w.proc.stdout):
            if f is not None:
                f.close()  # this process's copies of the descriptors; the parent's stay open
    _workers.clear()
    _idle = queue.SimpleQueue()
    _broken = False


atexit.register(shutdown)
os.register_at_fork(after_in_child=_forget_in_child)

__all__ = ["CompileWorkerWarning", "compile_object", "jobs", "shutdown"]
