"""Compile a whole graph into kernels and run them: ``compile_graph(graph)``.

Compile time:

1. every weight-only node (``graph.weight_values``) is computed once with torch
   and becomes a constant;
2. the fusion planner groups the remaining live nodes into kernels
   (``reshape`` is a view and gets none);
3. each group is lowered to loop IR and scheduled (steps 1-3: ``lower.plan``,
   shared with ``lower.cuda.graph_kernels``), emitted as LLVM IR and
   compiled (text and object code cached on disk); with several compile jobs
   a kernel compiles while the planner lowers the next ones;
4. kernel stages that read only constants (weight packing, folded batchnorm
   parameters) are run once now and their results kept;
5. storage is planned ahead: inputs and constants are bound by pointer,
   outputs are allocated per call, every intermediate gets a slot in one
   arena, reusing slots whose values are dead (linear scan over kernel order).

Run time: the inputs' and outputs' addresses are patched into the kernels'
prepared argument arrays, then the backend's ``sequence`` replays all launches
at once (the LLVM backend: one native call walking a launch table, parallel
kernels on its native pool; a CUDA graph), or, without one and when profiling
(``profile``: per-kernel times), one launcher call per kernel.  A
``CompiledGraph`` is not reentrant (its arena is shared): calls are serialised
by a lock.

Nothing here depends on the target's kind: compiling a kernel, launching it
and the device its buffers live on come from the target's ``Backend``
(``lower.target.backend_of``).

    >>> cg = compile_graph(graph, "llvm", threads=2)     # doctest: +SKIP
    >>> outs = cg({"x": x})                              # doctest: +SKIP
    >>> outs = cg(x)            # one-input graph; a float32 numpy array works too   # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import torch

from lower.backend import KernelFn, Launch
from lower.fusion import BuiltKernel, FusionPlan, Scratch
from lower.ir import (
    Buffer,
    IntImm,
    Kernel,
    LoopKind,
    Seq,
    loads_of,
    rewrap_locals,
    root_loop,
    seq,
    stores_of,
    unwrap_locals,
)
from lower.plan import KernelPlan, plan_kernels
from lower.target import backend_of, parse_target
from rewrite.ir.dtypes import ITEMSIZE, TORCH_DTYPE
from rewrite.ir.errors import InputError
from rewrite.ir.graph import Graph, GraphError, Value
from rewrite.ir.target import Target

T = TypeVar("T")
ALIGN = 16  # floats (64 bytes)
Inputs = Mapping[str, torch.Tensor] | Sequence[torch.Tensor] | torch.Tensor  # or numpy float32 arrays in their place
Root = Value | tuple[int, str]  # a storage root: a graph value, or (kernel index, scratch buffer name)


@dataclass
class _Launch:
    name: str
    fn: KernelFn
    args: ctypes.Array
    argp: ctypes.c_void_p
    patches: list[tuple[int, str, Value, int]]  # (slot, "input"|"output", the graph value bound there, byte offset)
    par_extent: int | None
    kernel: Kernel
    threads: int
    run: Callable[[], None]  # the backend's launcher, bound once: runs the kernel on ``args`` as they are now


@dataclass
class CompileOptions:
    fuse: bool = True
    schedule: bool = True
    threads: int | None = None


class CompiledGraph:
    """Callable like ``graph.run``: ``cg(inputs)`` with a dict name -> tensor or a sequence."""

    def __init__(
        self,
        graph: Graph,
        target: str | Target = "llvm",
        fuse: bool = True,
        schedule: bool = True,
        threads: int | None = None,
    ) -> None:
        t0 = time.perf_counter()
        self.target = parse_target(target, threads)
        self.backend = backend_of(self.target)
        self.threads = self.target.threads
        self._device = torch.device(self.backend.device)
        self._lock = threading.Lock()
        self._recycle: dict[Value, torch.Tensor] = {}
        self.prepacked_bytes = 0
        jobs = self._jobs()
        if self.backend.prepare is None and jobs >= 2:
            # each kernel compiles on the pool as soon as it is scheduled, while the next ones are lowered: the
            # lowering is Python (one thread at a time), LLVM runs beside it.  DenseNet-121's imported graph, cold,
            # 2 jobs: 7.04 s with every kernel lowered before the first compiled, 6.19 s so (4 alternating pairs)
            fns: list[Future[KernelFn]] = []
            with ThreadPoolExecutor(jobs, thread_name_prefix="eqsat-compile") as pool:

                def started(plan: KernelPlan, k: int, bk: BuiltKernel) -> None:
                    if k == 0:
                        self._take(plan)
                    fns.append(pool.submit(self._prepared_fn, k, bk))

                self._take(self._plan(graph, fuse, schedule, started))
                done = [f.result() for f in fns]
            self._plan_storage()
            self._launches = [self._launch(k, bk, fn) for k, (bk, fn) in enumerate(zip(self.built, done, strict=True))]
        else:
            self._take(self._plan(graph, fuse, schedule, None))
            self._each_kernel(self._hoist_constant_stages)
            self._plan_storage()
            if self.backend.prepare is not None:
                self.backend.prepare([bk.kernel for bk in self.built], self.target)
            self._launches = self._compile_all()
        seq_ = self.backend.sequence
        launches = [Launch(ln.fn, ln.argp, ln.par_extent, ln.threads) for ln in self._launches]
        self._replay = seq_(launches) if seq_ is not None else None
        # what each call patches into the argument arrays: (array, slot, "input"|"output", value)
        self._patches = [(ln.args, *patch) for ln in self._launches for patch in ln.patches]
        self.compile_seconds = time.perf_counter() - t0

    # ------------------------------------------------------------ compile helpers
    def _plan(
        self, graph: Graph, fuse: bool, schedule: bool, on_kernel: Callable[[KernelPlan, int, BuiltKernel], None] | None
    ) -> KernelPlan:
        return plan_kernels(
            graph,
            self.target,
            grid=self.backend.grid,
            device=self._device,
            fuse=fuse,
            schedule=schedule,
            on_kernel=on_kernel,
        )

    def _take(self, plan: KernelPlan) -> None:
        """The plan's graph, constants, fusion and kernels as this graph's (before its first kernel compiles)."""
        self.graph = graph = plan.graph  # the same inputs and outputs; views moved where fusion needs them
        self.input_names = [n.attrs["name"] for n in graph.inputs]
        self._input_values = {n.attrs["name"]: Value(n.id, 0) for n in graph.inputs}
        self.consts: dict[Value, torch.Tensor] = plan.consts
        self.fusion: FusionPlan = plan.fusion
        self.built: list[BuiltKernel] = plan.built  # filled as the planner goes

    def resolve(self, v: Value) -> Value:
        """The value whose storage ``v`` lies in (through reshape views and placed concats/splits)."""
        return self.fusion.resolve(v)

    def _plan_storage(self) -> None:
        g = self.graph
        self._out_roots = [self.resolve(v) for v in g.outputs]
        assert all(self.fusion.place(v)[1] == 0 for v in g.outputs), "a graph output placed inside another value"
        out_root_set = set(self._out_roots)
        scratch_size: dict[Root, int] = {}
        # kinds of every storage root a kernel touches
        kinds: dict[Root, str] = {}
        first: dict[Root, int] = {}
        last: dict[Root, int] = {}
        for k, bk in enumerate(self.built):
            for p in bk.params:
                if isinstance(p, str):
                    kinds[(k, p)] = "derived"
                    continue
                if isinstance(p, Scratch):
                    s = (k, p.name)
                    scratch_size[s] = p.size
                    kinds[s] = "temp"
                    first[s], last[s] = k, k
                    continue
                r = self.resolve(p)
                node = g.nodes[r.node]
                if node.op == "input":
                    kinds[r] = "input"
                elif r in self.consts:
                    kinds[r] = "const"
                elif r in out_root_set:
                    kinds[r] = "output"
                else:
                    kinds[r] = "temp"
                    first.setdefault(r, k)
                    last[r] = k
        self._kinds = kinds
        # linear-scan arena assignment for temps
        # sizes in float32 slots: an int64 value takes two per element, a bool one per four
        size = {
            q: _padded(
                scratch_size[q] if isinstance(q, tuple) else -(-_numel(g.shape_of(q)) * ITEMSIZE[g.dtype_of(q)] // 4)
            )
            for q in first
        }
        free: list[tuple[int, int]] = []  # (offset, length)
        top = 0
        offset: dict[Root, int] = {}
        order = sorted(first, key=lambda q: (first[q], -size[q]))
        ends: dict[int, list[Root]] = {}
        for q in first:
            ends.setdefault(last[q], []).append(q)
        by_start: dict[int, list[Root]] = {}
        for q in order:
            by_start.setdefault(first[q], []).append(q)
        for k in range(len(self.built)):
            for q in by_start.get(k, []):
                best = None
                for fi, (_, ln) in enumerate(free):
                    if ln >= size[q] and (best is None or ln < free[best][1]):
                        best = fi
                if best is None:
                    offset[q] = top
                    top += size[q]
                else:
                    o, ln = free.pop(best)
                    offset[q] = o
                    if ln > size[q]:
                        free.append((o + size[q], ln - size[q]))
            for q in ends.get(k, []):
                free.append((offset[q], size[q]))
                free = _coalesce(free)
        self.arena = torch.empty(max(top, 1) + ALIGN, dtype=torch.float32, device=self._device)
        base = self.arena.data_ptr()
        shift = (-(base // 4)) % ALIGN  # align the arena start to 64 bytes
        self._arena_ptr = {q: base + 4 * (shift + o) for q, o in offset.items()}
        self.arena_bytes = 4 * top
        self.temp_bytes_unshared = 4 * sum(size.values())

    def _ptr_of(self, k: int, p: Value | str | Scratch) -> tuple[int | None, tuple[str, Value, int] | None]:
        """``p``'s address, or for storage bound per call (inputs, outputs) what to patch: (kind, the value
        owning the storage, byte offset in it)."""
        if isinstance(p, str):
            t = self.built[k].new_consts[p]
            return t.data_ptr(), None
        if isinstance(p, Scratch):
            return self._arena_ptr[(k, p.name)], None
        r, at = self.fusion.place(p)
        at *= ITEMSIZE[self.graph.dtype_of(r)]
        kind = self._kinds[r]
        if kind == "input":
            return None, ("input", r, at)
        if kind == "const":
            return self.consts[r].data_ptr() + at, None
        if kind == "output":
            return None, ("output", r, at)
        return self._arena_ptr[r] + at, None

    def _compile_all(self) -> list[_Launch]:
        """Every kernel compiled (``_each_kernel``), in order."""
        fns = self._each_kernel(self._kernel_fn)
        return [self._launch(k, bk, fn) for k, (bk, fn) in enumerate(zip(self.built, fns, strict=True))]

    def _jobs(self) -> int:
        """Kernels the backend compiles at once (LLVM: this process and its compile workers)."""
        return self.backend.compile_jobs() if self.backend.compile_jobs else 1

    def _each_kernel(self, step: Callable[[int, BuiltKernel], T]) -> list[T]:
        """``step(k, built kernel)`` for every kernel, on as many threads as the backend compiles at once; the
        results in kernel order.  Both steps that compile run so: the kernels, and before them the packing
        kernels of their constant operands (MobileNetV2's 17 ran one after another for a third of a second of a
        cold compile)."""
        jobs = min(len(self.built), self._jobs())
        if jobs < 2:
            return [step(k, bk) for k, bk in enumerate(self.built)]
        with ThreadPoolExecutor(jobs, thread_name_prefix="eqsat-compile") as pool:
            return list(pool.map(step, range(len(self.built)), self.built))

    def _prepared_fn(self, k: int, bk: BuiltKernel) -> KernelFn:
        """Kernel ``k`` with its constant stages hoisted, compiled (the pipelined compile's step)."""
        self._hoist_constant_stages(k, bk)
        return self._kernel_fn(k, bk)

    def _kernel_fn(self, k: int, bk: BuiltKernel) -> KernelFn:
        for name, t in bk.new_consts.items():
            bk.new_consts[name] = t.to(self._device, _const_dtype(t)).contiguous()
        return self.backend.compile(bk.kernel, self.target, "k")

    def _launch(self, k: int, bk: BuiltKernel, fn: KernelFn) -> _Launch:
        """Kernel ``k``'s launch: ``fn`` with its argument array (storage planned: ``_plan_storage``)."""
        kernel = bk.kernel
        n = len(kernel.params)
        args = (ctypes.c_void_p * max(n, 1))()
        patches = []
        for slot, p in enumerate(bk.params):
            ptr, patch = self._ptr_of(k, p)
            if patch is None:
                args[slot] = ptr
            else:
                patches.append((slot, *patch))
        root = root_loop(kernel.body)
        par = None
        if root is not None and root.kind is LoopKind.PARALLEL and isinstance(root.extent, IntImm):
            par = root.extent.value
        argp = ctypes.cast(args, ctypes.c_void_p)
        run = self.backend.launcher(fn, argp, par, self.threads)
        return _Launch(kernel.name, fn, args, argp, patches, par, kernel, self.threads, run)

    def _param_tensor(self, bk: BuiltKernel, p: Value | str | Scratch) -> torch.Tensor | None:
        if isinstance(p, str):
            return bk.new_consts.get(p)
        if isinstance(p, Value):
            return self.consts.get(self.resolve(p))
        return None

    def _hoist_constant_stages(self, k: int, bk: BuiltKernel) -> None:
        """Buffers added by scheduling (packed operands): computed now if they only read constants
        (``constant_stages``), else given scratch storage."""
        kern, extras = constant_stages(bk.kernel, len(bk.params), bk.const_names)
        by_name = {b.name: p for b, p in zip(kern.params, bk.params, strict=False)}
        for P, pk in extras:
            if pk is None:
                bk.params.append(Scratch(P.name, P.size))
                continue
            tensors = [self._param_tensor(bk, by_name.get(b.name, b.name)) for b in pk.params[:-1]]
            assert all(t is not None for t in tensors), f"{kern.name}: a constant source has no tensor"
            out = torch.zeros(P.size, dtype=torch.float32, device=self._device)
            args = (ctypes.c_void_p * len(pk.params))(*[t.data_ptr() for t in tensors if t is not None], out.data_ptr())
            fn = self.backend.compile_run_once(pk, self.target)
            self.backend.launcher(fn, ctypes.cast(args, ctypes.c_void_p), None, 1)()
            bk.new_consts[P.name] = out
            bk.const_names.add(P.name)
            bk.params.append(P.name)
            with self._lock:  # kernels are hoisted on several threads (_each_kernel)
                self.prepacked_bytes += 4 * P.size
        bk.kernel = kern

    # ------------------------------------------------------------ info
    @property
    def plan(self) -> str:
        return str(self.fusion)

    @property
    def kernels(self) -> int:
        return len(self._launches)

    def kernel_source(self, k: int | None = None) -> str:
        ks = self.built if k is None else [self.built[k]]
        return "\n\n".join(str(b.kernel) for b in ks)

    def llvm_ir(self, k: int) -> str:
        """The code the backend generates for kernel ``k`` (LLVM IR text for the "llvm" kind)."""
        return self.backend.source(self.built[k].kernel, self.target)

    def profile(self, inputs, repeats: int = 3) -> list[dict]:
        """Per-kernel wall time (median of ``repeats`` runs, seconds), with the fusion group of each.  The kernels
        run one by one inside the backend's ``steady`` context: on 2 threads the native pool's worker would
        otherwise be asleep at each run's first kernel, and MobileNetV2's stem profiled at 177 us where it runs
        92 us in a run of kernels."""
        times: list[list[float]] = [[] for _ in self._launches]
        with self.backend.steady(self.threads) if self.backend.steady is not None else contextlib.nullcontext():
            for _ in range(repeats):
                self(inputs, _times=times)
        out = []
        for ln, bk, ts in zip(self._launches, self.built, times, strict=False):
            ts = sorted(ts)
            grp = bk.group
            out.append(
                {
                    "kernel": ln.name,
                    "seconds": ts[len(ts) // 2],
                    "nodes": " ".join(f"{self.graph.nodes[n].op}%{n}" for n in grp.nodes) if grp else "",
                    "parallel": ln.par_extent is not None,
                }
            )
        return out

    # ------------------------------------------------------------ running
    def _output_buffer(self, r: Value) -> torch.Tensor:
        """A fresh output tensor, or last call's one if the caller has provably let go of it.

        Fresh large tensors cost a page fault per 4 KiB page on first touch (for a
        64 MiB output that is slower than the kernel itself), so a returned tensor
        is reused once nothing but this object refers to it: no other Python
        reference and no view sharing its storage."""
        old = self._recycle.get(r)
        if old is not None and sys.getrefcount(old) == 3 and _storage_uses(old) == _SOLE_USE:
            return old
        t = torch.empty(self.graph.shape_of(r), dtype=TORCH_DTYPE[self.graph.dtype_of(r)], device=self._device)
        if t.numel() >= RECYCLE_MIN:
            self._recycle[r] = t
        return t

    def expects(self) -> str:
        """What a call takes, for error messages: ``x: (9, 20) float32, y: (20,) float32``."""
        g = self.graph
        return ", ".join(f"{n}: {g.shape_of(v)} {g.dtype_of(v)}" for n, v in self._input_values.items())

    def _bind(self, inputs: Inputs) -> dict[Value, torch.Tensor]:
        """Each input value's tensor, checked (names, count, shapes, dtype, device) before any kernel runs."""
        g, names = self.graph, self.input_names
        where = f"compiled graph '{g.name}' takes {len(names)} input(s) ({self.expects()})"
        if isinstance(inputs, torch.Tensor) or _is_numpy(inputs):
            if len(names) != 1:
                raise InputError(f"{where}; got one tensor: pass a list, or a dict by input name")
            given: dict[str, object] = {names[0]: inputs}
        elif isinstance(inputs, Mapping):
            given = dict(inputs)
            missing = [n for n in names if n not in given]
            unknown = [str(n) for n in given if n not in self._input_values]
            if missing or unknown:
                raise InputError(f"{where}; missing {missing}, unknown {unknown}")
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) != len(names):
                raise InputError(f"{where}; got {len(inputs)}")
            given = dict(zip(names, inputs, strict=True))
        else:
            raise InputError(f"{where}; got a {type(inputs).__name__}: pass a tensor, a list, or a dict by name")
        bound: dict[Value, torch.Tensor] = {}
        for name, v in self._input_values.items():
            t = _as_tensor(given[name], f"input '{name}' of compiled graph '{g.name}'", g.dtype_of(v))
            shape = g.shape_of(v)
            if tuple(t.shape) != shape:
                raise InputError(f"input '{name}' has shape {tuple(t.shape)}, expected {shape} ({self.expects()})")
            if t.device.type != self._device.type:
                if not self.backend.copies_inputs:
                    raise InputError(
                        f"input '{name}' is on {t.device}; "
                        f"target '{self.target.name}' takes {self._device.type} tensors"
                    )
                t = t.to(self._device)  # a device backend copies host inputs over
            bound[v] = t.contiguous()
        return bound

    def __call__(self, inputs: Inputs, _times: list[list[float]] | None = None) -> list[torch.Tensor]:
        """Run on ``inputs``: a dict by input name, a list/tuple in input order, or one tensor for a
        one-input graph; float32 torch tensors or numpy arrays.  Raises ``InputError`` (a ``UsageError``)
        saying what it takes when they do not fit."""
        g = self.graph
        bound = self._bind(inputs)
        outs: dict[Value, torch.Tensor] = {}
        with self._lock:
            for r in self._out_roots:
                if r not in outs and self._kinds.get(r) == "output":
                    outs[r] = self._output_buffer(r)
            if self._replay is not None and _times is None:  # all launches at once (native table, CUDA graph)
                key = []
                for args, slot, kind, v, at in self._patches:
                    args[slot] = (bound[v] if kind == "input" else outs[v]).data_ptr() + at
                    key.append(args[slot] or 0)
                self._replay(tuple(key))
            else:
                for k, ln in enumerate(self._launches):
                    for slot, kind, v, at in ln.patches:
                        ln.args[slot] = (bound[v] if kind == "input" else outs[v]).data_ptr() + at
                    t0 = time.perf_counter() if _times is not None else 0.0
                    ln.run()
                    if _times is not None:
                        _times[k].append(time.perf_counter() - t0)
        result = []
        for v, r in zip(g.outputs, self._out_roots, strict=False):
            shape = g.shape_of(v)
            if r in outs:
                t = outs[r]
            elif r in bound:
                t = bound[r]
            elif r in self.consts:
                t = self.consts[r].clone()
            else:
                raise GraphError(f"output {v} has no storage")  # pragma: no cover
            result.append(t.reshape(shape) if tuple(t.shape) != shape else t)
        return result


def constant_stages(
    kern: Kernel, n_params: int, const_names: set[str]
) -> tuple[Kernel, list[tuple[Buffer, Kernel | None]]]:
    """The parameters scheduling added to ``kern`` (past its first ``n_params``: packed operands), in order,
    each with a kernel ``(*sources, P)`` computing it once at compile time when one top-level stage writes it
    from constants alone (``const_names``, or a parameter hoisted before it; the stage is taken out of
    ``kern``), or None: scratch the kernel fills per run.  Returns ``(kernel without the hoisted stages,
    extras)``."""
    extras: list[tuple[Buffer, Kernel | None]] = []
    names = {b.name: b for b in kern.params[:n_params]}
    known = set(const_names)
    for P in kern.params[n_params:]:
        wrappers, inner = unwrap_locals(kern.body)
        tops = list(inner.stmts) if isinstance(inner, Seq) else [inner]
        writers = [t for t in tops if any(st.buf.name == P.name for st in stores_of(t))]
        srcs = {ld.buf.name for w in writers for ld in loads_of(w)}
        if len(writers) == 1 and srcs <= known and all(n in names for n in srcs):
            pk = Kernel(f"{kern.name}_prepack", [*(names[n] for n in sorted(srcs)), P], writers[0])
            extras.append((P, pk))
            known.add(P.name)
            names[P.name] = P
            kern = kern.with_body(rewrap_locals(wrappers, seq(*[t for t in tops if t is not writers[0]])))
        else:
            extras.append((P, None))
    return kern, extras


def _const_dtype(t: torch.Tensor) -> torch.dtype:
    """The dtype a constant a lowering derived is kept in: a packed quantized operand's integers as they are,
    anything else as float32 (the loop IR's buffers of derived tables)."""
    return t.dtype if t.dtype in (torch.uint8, torch.int8, torch.int32) else torch.float32


def _is_numpy(x: object) -> bool:
    return type(x).__module__ == "numpy" and hasattr(x, "dtype")


def _as_tensor(x: object, what: str, dtype: str = "float32") -> torch.Tensor:
    """``x`` as a torch tensor of the input's dtype (float32, int64 or bool): such a tensor as is, such a
    numpy array shared (no copy); anything else refused, never cast (a float64 input silently rounded
    would hide a caller's bug)."""
    want = TORCH_DTYPE[dtype]
    if _is_numpy(x):
        got = str(getattr(x, "dtype", "?"))
        if got != dtype:
            raise InputError(f"{what} is a numpy {got} array; expected {dtype} (convert with .astype('{dtype}'))")
        return torch.from_numpy(x)
    if not isinstance(x, torch.Tensor):
        raise InputError(f"{what} is a {type(x).__name__}; expected a {dtype} torch.Tensor or numpy array")
    if x.dtype != want:
        raise InputError(f"{what} is {x.dtype}; expected {want}")
    return x


RECYCLE_MIN = 1 << 16  # elements; smaller outputs come from malloc's free lists anyway


def _storage_uses(t: torch.Tensor) -> int:
    try:
        return torch._C._storage_Use_Count(t.untyped_storage()._cdata)
    except Exception:  # private API gone: never recycle
        return 1 << 30


_SOLE_USE = _storage_uses(torch.empty(1))  # what a tensor alone holding its storage reports


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _padded(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _coalesce(free: list[tuple[int, int]]) -> list[tuple[int, int]]:
    free.sort()
    out: list[tuple[int, int]] = []
    for o, ln in free:
        if out and out[-1][0] + out[-1][1] == o:
            out[-1] = (out[-1][0], out[-1][1] + ln)
        else:
            out.append((o, ln))
    return out


def compile_graph(
    graph: Graph,
    target: str | Target = "llvm",
    *,
    fuse: bool = True,
    schedule: bool = True,
    threads: int | None = None,
) -> CompiledGraph:
    """Compile ``graph`` for ``target`` ("llvm": the host CPU, or a ``Target``) on ``threads`` threads.

    Returns a ``CompiledGraph`` callable with the same inputs as ``graph.run``
    (dict name -> tensor, or a sequence in input order) that returns a list of
    float32 tensors.  Raises ``LoweringError`` naming the node for anything it
    cannot compile, ``GraphError`` for a malformed graph or bad inputs.
    """
    return CompiledGraph(graph, target, fuse=fuse, schedule=schedule, threads=threads)
