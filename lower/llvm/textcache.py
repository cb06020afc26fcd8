"""Kernel module text generated once: per process and on disk, keyed by the kernel's exact contents.

Generating a kernel's LLVM text (``codegen.kernel_module``) walks its loop IR in Python, and the JIT learns
that it has compiled a kernel before only from that text's hash; so every compile paid for the text again.
EfficientNet-B0's imported graph: 99 kernels, 58 of them distinct (layers repeat), 0.99 s of text against
0.06 s to pickle and hash the kernels; the run check then compiles the extracted graph, whose kernels cost
measurement had just compiled, and a warm process compiles a whole model whose objects are all on disk.

The text is a pure function of the kernel's parameters and body (its name aside: the text names the function
``jit.PLACEHOLDER``), the target's ``code_key`` and the lowering's code.  So it is kept under the SHA-256 of

* ``jit.CODEGEN_VERSION``, the target's ``code_key`` and ``lower_digest()`` (the ``lower`` package's source:
  an edit to the code generator is a new key, with nothing to bump by hand);
* the pickled ``(params, body)``: exact, floats to the bit and shared nodes as shared (the code generator
  tells a reduction's accumulate by node identity); two kernels alike but for sharing are two keys, never one,

in memory (the last ``MEMO_SIZE``) and in the cache folder's ``modules`` (framed and checked like kernel
objects: ``lower.filecache``).  ``EQSAT_NO_CACHE`` turns both off, as it does the schedule and object caches
(a test that patches the code generator sets it).

    >>> text, libraries = module_text(kernel, target)        # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import pickle
import threading
import zlib
from collections import OrderedDict

from lower import filecache
from lower.ir import Kernel
from lower.llvm import jit
from lower.llvm.codegen import kernel_module
from lower.measure_graphs import lower_digest
from rewrite import config
from rewrite.ir.target import Target

MEMO_SIZE = 1024  # module texts kept in memory (a kernel's is 2-90 KB: tens of MB at most)
FORMAT = "1"  # of the stored entry: zlib of the pickled (text, libraries)

Module = tuple[str, dict[str, str]]  # kernel_module's answer: the text, and the libraries it calls by name

_memo: OrderedDict[str, Module] = OrderedDict()
_lock = threading.Lock()


def text_key(kernel: Kernel, target: Target) -> str:
    """The hash ``kernel``'s module text for ``target`` is kept under (see the module docstring)."""
    h = hashlib.sha256()
    for part in (FORMAT, jit.CODEGEN_VERSION, target.code_key, lower_digest()):
        h.update(part.encode())
        h.update(b"\0")
    h.update(pickle.dumps((kernel.params, kernel.body), protocol=5))
    return h.hexdigest()


def module_text(kernel: Kernel, target: Target) -> Module:
    """``codegen.kernel_module(kernel, target, jit.PLACEHOLDER)``, from memory or disk when it was made before."""
    if config.NO_CACHE.flag():
        return kernel_module(kernel, target, jit.PLACEHOLDER)
    try:
        key = text_key(kernel, target)
    except (pickle.PicklingError, TypeError, AttributeError):  # a hand-built node holding what cannot be pickled
        return kernel_module(kernel, target, jit.PLACEHOLDER)
    with _lock:
        hit = _memo.get(key)
        if hit is not None:
            _memo.move_to_end(key)
            return hit
    hit = _read(key)
    if hit is None:
        hit = kernel_module(kernel, target, jit.PLACEHOLDER)
        filecache.write(key, zlib.compress(pickle.dumps(hit), 1), filecache.MODULES)
    with _lock:
        _memo[key] = hit
        while len(_memo) > MEMO_SIZE:
            _memo.popitem(last=False)
    return hit


def _read(key: str) -> Module | None:
    blob = filecache.read(key, filecache.MODULES)
    if blob is None:
        return None
    try:
        text, libs = pickle.loads(zlib.decompress(blob))
    except Exception:  # framed and checksummed: only an entry written by other code under the same key
        return None
    if not (isinstance(text, str) and isinstance(libs, dict)):
        return None
    return text, libs


def clear_memo() -> None:
    """Forget the texts kept in memory (tests; the disk entries stay)."""
    with _lock:
        _memo.clear()


__all__ = ["MEMO_SIZE", "clear_memo", "module_text", "text_key"]
