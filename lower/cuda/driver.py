"""The CUDA driver API (through ``cuda.bindings.driver``): the device, modules, launches.

Everything here needs a GPU and runs only when a CUDA target compiles or runs kernels; tests that
reach it are marked ``gpu``.  Buffers are torch CUDA tensors (the runtime allocates its arena,
outputs and constants on ``Backend.device``), so kernels run in torch's context — the device's
primary context — and on torch's current stream.

    >>> info = device_info()                     # doctest: +SKIP
    >>> info.arch, info.name                     # doctest: +SKIP
    ('sm_90', 'NVIDIA H100 80GB HBM3')
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from typing import Any

from lower.cuda.codegen import CudaModule
from rewrite.ir.errors import CodegenError, LoweringError


@functools.cache
def _driver() -> Any:
    try:
        from cuda.bindings import driver
    except ImportError as e:
        raise LoweringError(f"the CUDA driver bindings are not installed ({e}); pip install 'eqsat[cuda]'") from None
    try:
        (err,) = driver.cuInit(0)
    except Exception as e:  # the bindings raise their own errors when libcuda.so itself is missing
        raise LoweringError(f"no CUDA driver library ({type(e).__name__}: {e})") from None
    if int(err) != 0:
        raise LoweringError(f"no usable CUDA driver or device (cuInit: {err!r})")
    return driver


def _ok(res: Any, what: str) -> Any:
    """The values of a driver call's result tuple; ``LoweringError`` naming the call on failure."""
    err, *vals = res if isinstance(res, tuple) else (res,)
    if int(err) != 0:
        raise LoweringError(f"CUDA {what} failed: {err!r}")
    return vals[0] if len(vals) == 1 else tuple(vals)


@dataclass(frozen=True)
class DeviceInfo:
    """What measured costs and compiled code depend on: the GPU, its compute capability, the driver."""

    ordinal: int
    name: str
    major: int
    minor: int
    driver_version: int  # e.g. 13000
    sms: int

    @property
    def arch(self) -> str:
        return f"sm_{self.major}{self.minor}"


def device_count() -> int:
    """CUDA devices visible to this process (0 when there is no driver or no bindings)."""
    try:
        drv = _driver()
    except LoweringError:
        return 0
    err, n = drv.cuDeviceGetCount()
    return int(n) if int(err) == 0 else 0


@functools.cache
def device_info(ordinal: int = 0) -> DeviceInfo:
    drv = _driver()
    dev = _ok(drv.cuDeviceGet(ordinal), "cuDeviceGet")
    name = _ok(drv.cuDeviceGetName(256, dev), "cuDeviceGetName")
    attr = drv.CUdevice_attribute
    major = _ok(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "attribute")
    minor = _ok(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "attribute")
    sms = _ok(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "attribute")
    version = _ok(drv.cuDriverGetVersion(), "cuDriverGetVersion")
    text = bytes(name).split(b"\0", 1)[0].decode()
    return DeviceInfo(ordinal, text, int(major), int(minor), int(version), int(sms))


@functools.cache
def _context(ordinal: int = 0) -> Any:
    """The device's primary context (the one torch uses), made current on this thread."""
    drv = _driver()
    dev = _ok(drv.cuDeviceGet(ordinal), "cuDeviceGet")
    ctx = _ok(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    _ok(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx


def current_stream() -> int:
    """torch's current CUDA stream handle (kernels are ordered with torch's own work on it)."""
    import torch

    return int(torch.cuda.current_stream().cuda_stream)


class LoadedKernel:
    """A kernel's functions loaded from PTX; ``fn(args, lo, hi)`` launches them all, in order.

    ``args`` points to the runtime's array of one device address per kernel parameter (``void **``);
    the launch passes the addresses of those slots as CUDA kernel parameters, so a slot the runtime
    patches (an input's address) is read at each launch.  ``lo``/``hi`` are unused: a GPU kernel's
    grid is fixed when it is generated."""

    def __init__(self, module: CudaModule, ptx: str, nparams: int) -> None:
        drv = _driver()
        _context()
        self.module = module
        self.nparams = nparams
        self._mod = _ok(drv.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData")
        self._fns = [
            (_ok(drv.cuModuleGetFunction(self._mod, ln.name.encode()), f"cuModuleGetFunction({ln.name})"), ln)
            for ln in module.launches
        ]
        for fn, ln in self._fns:
            if ln.smem > 48 * 1024:  # more dynamic shared memory than the default limit: opt in per function
                attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                _ok(drv.cuFuncSetAttribute(fn, attr, ln.smem), f"cuFuncSetAttribute({ln.name}, {ln.smem} bytes)")
        self._bound: dict[int, ctypes.Array] = {}

    def params_for(self, args: Any) -> int:
        """Address of a ``void *[]`` whose i-th entry points at slot i of ``args`` (kept alive here)."""
        base = int(args.value or 0) if isinstance(args, ctypes.c_void_p) else int(args)
        arr = self._bound.get(base)
        if arr is None:
            size = ctypes.sizeof(ctypes.c_void_p)
            arr = (ctypes.c_void_p * max(self.nparams, 1))(*(base + size * i for i in range(self.nparams)))
            self._bound[base] = arr
        return ctypes.addressof(arr)

    def __call__(self, args: Any, lo: int = 0, hi: int = 0) -> None:
        self.launch(self.params_for(args), current_stream())

    def launch(self, params: int, stream: int) -> None:
        drv = _driver()
        for fn, ln in self._fns:
            err = drv.cuLaunchKernel(fn, ln.grid, 1, 1, ln.block, 1, 1, ln.smem, stream, params, 0)
            err = err[0] if isinstance(err, tuple) else err
            if int(err) != 0:
                raise CodegenError(f"launch of {ln.name} (grid {ln.grid}, block {ln.block}) failed: {err!r}")


class CapturedGraph:
    """A model's launches, in order, replayed as CUDA graphs: ``run(key)`` launches them all at once.

    A graph records each launch's parameter values (the buffer addresses in the argument arrays) when
    it is captured, so one executable graph is kept per ``key`` (the addresses the runtime patched in
    for this call: inputs and outputs; the arena and constants never move), at most ``keep`` of them,
    least recently used first out.  Capture runs on a private stream (the legacy default stream
    cannot be captured) in thread-local mode; the replay is ordered on torch's current stream.
    """

    def __init__(self, launches: list[tuple[LoadedKernel, int]], keep: int = 8) -> None:
        drv = _driver()
        _context()
        self.launches = launches
        self.keep = keep
        self.captures = 0  # how many graphs were captured (a replay with a known key captures none)
        self._stream = _ok(drv.cuStreamCreate(drv.CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate")
        self._execs: dict[tuple[int, ...], Any] = {}

    def _capture(self) -> Any:
        drv = _driver()
        mode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
        _ok(drv.cuStreamBeginCapture(self._stream, mode), "cuStreamBeginCapture")
        try:
            for fn, params in self.launches:
                fn.launch(params, int(self._stream))
        finally:  # always end the capture, or the stream stays unusable
            graph = _ok(drv.cuStreamEndCapture(self._stream), "cuStreamEndCapture")
        try:
            return _ok(drv.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
        finally:
            _ok(drv.cuGraphDestroy(graph), "cuGraphDestroy")

    def run(self, key: tuple[int, ...], stream: int) -> None:
        drv = _driver()
        exe = self._execs.pop(key, None)
        if exe is None:
            exe = self._capture()
            self.captures += 1
            if len(self._execs) >= self.keep:
                old = next(iter(self._execs))
                _ok(drv.cuGraphExecDestroy(self._execs.pop(old)), "cuGraphExecDestroy")
        self._execs[key] = exe  # most recently used last
        _ok(drv.cuGraphLaunch(exe, stream), "cuGraphLaunch")

    def __call__(self, key: tuple[int, ...]) -> None:
        self.run(key, current_stream())

    def close(self) -> None:
        drv = _driver()
        for exe in self._execs.values():
            drv.cuGraphExecDestroy(exe)
        self._execs.clear()


__all__ = ["CapturedGraph", "DeviceInfo", "LoadedKernel", "current_stream", "device_count", "device_info"]
