"""CUDA C -> PTX with NVRTC (in process, through ``cuda.bindings``), and ``ptxas`` resource reports.

    >>> ptx = compile_ptx(source, "sm_90")                  # doctest: +SKIP
    >>> ptxas_report(ptx, "sm_90")["k_s0"]                  # doctest: +SKIP
    {'registers': 12, 'smem': 0, 'spill_stores': 0, 'spill_loads': 0, 'stack': 0}

Both need no GPU.  ``cuda.bindings`` is an optional dependency (the ``cuda`` extra): it is
imported on first use, and its absence is a ``CodegenError`` saying how to install it.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from rewrite.ir.errors import CodegenError

NVRTC_OPTIONS = ("-default-device", "--std=c++17", "-lineinfo")
INSTALL_HINT = "install the 'cuda' extra: pip install 'eqsat[cuda]' (cuda-bindings, nvidia-cuda-nvrtc)"


@functools.cache
def _nvrtc() -> Any:
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise CodegenError(f"NVRTC is not available ({e}); {INSTALL_HINT}") from None
    return nvrtc


def available() -> bool:
    """Whether NVRTC can be loaded (the ``cuda`` extra is installed)."""
    try:
        _nvrtc()
        return True
    except CodegenError:
        return False


@functools.cache
def nvrtc_version() -> str:
    err, major, minor = _nvrtc().nvrtcVersion()
    _check(err, "nvrtcVersion")
    return f"{major}.{minor}"


def _check(err: Any, what: str, log: str = "") -> None:
    if int(err) != 0:
        raise CodegenError(f"NVRTC {what} failed ({err!r})" + (f":\n{log}" if log else ""))


def compile_ptx(source: str, arch: str, name: str = "kernel.cu") -> str:
    """PTX text for ``source`` compiled for ``arch`` (``"sm_90"``); ``CodegenError`` with NVRTC's log."""
    if not re.fullmatch(r"sm_\d+a?", arch):
        raise CodegenError(f"GPU architecture must look like 'sm_90', got {arch!r}")
    nv = _nvrtc()
    err, prog = nv.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    _check(err, "nvrtcCreateProgram")
    try:
        opts = [f"--gpu-architecture={arch.replace('sm_', 'compute_')}".encode(), *(o.encode() for o in NVRTC_OPTIONS)]
        (err,) = nv.nvrtcCompileProgram(prog, len(opts), opts)
        if int(err) != 0:
            _, size = nv.nvrtcGetProgramLogSize(prog)
            buf = b" " * size
            nv.nvrtcGetProgramLog(prog, buf)
            _check(err, f"compile of {name}", buf.decode(errors="replace").strip("\0 \n"))
        err, size = nv.nvrtcGetPTXSize(prog)
        _check(err, "nvrtcGetPTXSize")
        ptx = b" " * size
        (err,) = nv.nvrtcGetPTX(prog, ptx)
        _check(err, "nvrtcGetPTX")
    finally:
        nv.nvrtcDestroyProgram(prog)
    return ptx.rstrip(b"\0").decode()


def ptxas_path() -> str | None:
    """The ``ptxas`` on PATH, if any."""
    return shutil.which("ptxas")


_FUNC = re.compile(r"Compiling entry function '([^']+)'")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes smem)?")
_SERIALIZED = re.compile(r"wgmma.mma_async instructions are serialized .* in the function '([^']+)'")  # ptxas C7515


def ptxas_report(ptx: str, arch: str) -> dict[str, dict[str, int]]:
    """Assemble ``ptx`` for ``arch`` with ``ptxas -v``: per entry function its registers, shared memory
    (bytes), stack frame and spill stores/loads (bytes).  ``CodegenError`` if ptxas rejects it."""
    if re.search(rf"^\.target {re.escape(arch)}a\b", ptx, re.M):
        arch += "a"  # PTX for the arch-specific target (wgmma) assembles only for it
    exe = ptxas_path()
    if exe is None:
        raise CodegenError("ptxas is not on PATH (it comes with the CUDA toolkit)")
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(ptx)
        r = subprocess.run(
            [exe, f"-arch={arch}", "-v", str(src), "-o", str(Path(d) / "k.cubin")],
            capture_output=True,
            text=True,
            check=False,
        )
    if r.returncode != 0:
        raise CodegenError(f"ptxas -arch={arch} rejected the PTX:\n{r.stderr.strip()}")
    out: dict[str, dict[str, int]] = {}
    cur: dict[str, int] | None = None
    serialized = set(_SERIALIZED.findall(r.stdout + r.stderr))
    for line in (r.stdout + r.stderr).splitlines():
        m = _FUNC.search(line)
        if m:
            cur = out.setdefault(
                m.group(1),
                {
                    "registers": 0,
                    "smem": 0,
                    "stack": 0,
                    "spill_stores": 0,
                    "spill_loads": 0,
                    "wgmma_serialized": int(m.group(1) in serialized),
                },
            )
            continue
        if cur is None:
            continue
        m = _STACK.search(line)
        if m:
            cur["stack"], cur["spill_stores"], cur["spill_loads"] = (int(g) for g in m.groups())
            continue
        m = _USED.search(line)
        if m:
            cur["registers"] = int(m.group(1))
            cur["smem"] = int(m.group(2) or 0)
    return out


__all__ = ["available", "compile_ptx", "nvrtc_version", "ptxas_path", "ptxas_report"]
