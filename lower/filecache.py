"""The on-disk caches of the lowering: framed, checked before loading, written atomically.

Each kind of entry has its folder in the cache directory: compiled kernel objects (``kernels``, ``.o``:
``lower.llvm.jit``), kernel schedules (``schedules``, ``.pkl``: ``lower.schedule.cache``), kernels' LLVM text
(``modules``, ``.pkl.z``: ``lower.llvm.textcache``), the records of ``optimize``'s run checks (``run_checks``,
``.json``: ``rewrite.runcheck``) and its chosen graphs (``results``, ``.pkl``: ``rewrite.result_cache``).
A cached object is handed to LLVM's JIT linker, which trusts it completely: a truncated or
corrupted file would crash the process (segfault), not raise; a schedule is unpickled.  So every file
carries a header that is checked *before* the entry is used::

    magic "EQSATOBJ" | format (u32) | payload length (u64) | sha256(key) (32 bytes) | sha256(payload) (32 bytes)

An entry whose header, length, key or checksum does not match is removed with one
``CacheWarning`` and the kernel is compiled again (and the entry rewritten).  Files are written
to a temporary name in the same folder and renamed over the entry (``os.replace``), so a reader
never sees half a file and two processes compiling the same kernel at once each write a complete
copy; the last rename wins.

A cache folder that cannot be used (``EQSAT_CACHE_DIR`` names a file, the folder is read-only)
costs only speed: one ``CacheWarning`` naming it, then kernels are compiled without a disk cache.

    >>> blob = frame("ab" * 32, b"\\x7fELF...")
    >>> unframe("ab" * 32, blob)
    b'\\x7fELF...'
    >>> unframe("ab" * 32, blob[:-1])
    'length 7 in the header, 6 bytes present'
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import warnings
from pathlib import Path

from rewrite import config
from rewrite.ir.errors import CacheWarning, ConfigError

MAGIC = b"EQSATOBJ"
FORMAT = 1  # bump when the frame changes; files of another format are rebuilt
_HEADER = struct.Struct("<8sIQ32s32s")

_warned_dirs: set[str] = set()  # one warning per unusable cache folder per process


def frame(key: str, obj: bytes) -> bytes:
    """``obj`` behind a header naming its format, length, cache key and checksum."""
    return _HEADER.pack(MAGIC, FORMAT, len(obj), _digest(key.encode()), _digest(obj)) + obj


def unframe(key: str, data: bytes) -> bytes | str:
    """The object inside ``data``, or why it cannot be trusted (a short phrase)."""
    if len(data) < _HEADER.size:
        return f"{len(data)} bytes, shorter than the {_HEADER.size}-byte header"
    magic, fmt, length, key_sum, obj_sum = _HEADER.unpack_from(data)
    if magic != MAGIC:
        return "not an eqsat kernel object (bad magic)"
    if fmt != FORMAT:
        return f"format {fmt}, expected {FORMAT}"
    obj = data[_HEADER.size :]
    if len(obj) != length:
        return f"length {length} in the header, {len(obj)} bytes present"
    if key_sum != _digest(key.encode()):
        return "written for another key"
    if obj_sum != _digest(obj):
        return "checksum mismatch"
    return obj


def _digest(b: bytes) -> bytes:
    return hashlib.sha256(b).digest()


def _disable(where: str, why: str, cache: str | None = None) -> None:
    """One warning per unusable ``cache`` folder (default ``where``): a read-only cache folder refuses its
    kernels and its schedules alike, and one line says so."""
    cache = where if cache is None else cache
    if cache not in _warned_dirs:
        _warned_dirs.add(cache)
        warnings.warn(
            f"kernel cache {where} cannot be used ({why}); working without a disk cache", CacheWarning, stacklevel=4
        )


KERNELS = ("kernels", ".o")  # (folder, suffix) of compiled kernel objects
SCHEDULES = ("schedules", ".pkl")  # of pickled kernel schedules
MODULES = ("modules", ".pkl.z")  # of kernels' LLVM text, pickled and compressed (lower.llvm.textcache)
RUN_CHECKS = ("run_checks", ".json")  # of optimize's run checks (rewrite.runcheck)
RESULTS = ("results", ".pkl")  # of optimize's chosen graphs, pickled (rewrite.result_cache)


def source_digest(*packages: str) -> str:
    """The SHA-256 of the Python source of ``packages``, folders of the checkout (``"lower"``, ``"rewrite"``):
    each ``.py`` file under them, its path and its bytes, in path order.  The caches' keys hold it
    (``lower.measure_graphs.lower_digest``, ``rewrite.result_cache``), so an edit to the code that made an entry
    is a new key, with nothing to bump by hand."""
    root = Path(__file__).resolve().parents[1]  # the checkout (not rglob'd whole: its venv holds 12k files)
    h = hashlib.sha256()
    for pkg in packages:
        for f in sorted((root / pkg).rglob("*.py")):
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def folder(kind: tuple[str, str] = KERNELS) -> Path | None:
    """The cache folder of ``kind``, or None (with one warning) when it cannot be created."""
    try:
        return config.cache_dir(kind[0])
    except ConfigError as e:  # the cache folder itself (a file, not creatable): one warning for every kind
        _disable(str(config.CACHE_DIR.path()), str(e))
        return None


def _path(root: Path, key: str, kind: tuple[str, str]) -> Path:
    return root / key[:2] / f"{key}{kind[1]}"


def read(key: str, kind: tuple[str, str] = KERNELS) -> bytes | None:
    """The cached entry for ``key``, or None: missing, or bad (then removed, with one warning)."""
    root = folder(kind)
    if root is None:
        return None
    path = _path(root, key, kind)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    obj = unframe(key, data)
    if isinstance(obj, bytes):
        return obj
    warnings.warn(f"kernel cache entry {path} is damaged ({obj}); removed and built again", CacheWarning, stacklevel=3)
    try:
        path.unlink()
    except OSError:
        pass  # another process removed or replaced it already; rewriting it below is still right
    return None


def write(key: str, obj: bytes, kind: tuple[str, str] = KERNELS) -> None:
    """Store ``obj`` for ``key``: a temporary file in the same folder, renamed over the entry."""
    root = folder(kind)
    if root is None:
        return
    path = _path(root, key, kind)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(frame(key, obj))
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        _disable(str(root), e.strerror or str(e), str(root.parent))  # read-only or full: costs recompiling
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
