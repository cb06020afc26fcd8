"""End to end: each benchmark model compiled by eqsat, against PyTorch eager and the peers.

``--models`` also takes zoo models (``bench.zoo``), the zoo at deployment sizes (``full:NAME``,
``bench.zoo.full``; ``full`` alone: all of them), a wide sweep of other architectures (``wide:NAME``,
``bench.zoo.wide``; ``wide`` alone: all 28) and ``FILE.py:FACTORY``: a model eqsat was not tuned for is
timed against the same peers the same way.

    python -m bench.e2e [--models a,b|full|wide] [--peers ort,openvino,inductor] [--threads 1,2]
                        [--cost compiled|analytical] [--json OUT] [--in-process]
    python -m bench.e2e --target cuda [--peers eager,inductor] [--cost compiled|analytical] [--imported]

Each model is timed in a process of its own (``run_model_apart``; ``--in-process``: all in this one), where
for each thread count every contender runs interleaved round by round (``costs.timing.interleaved``) on the
same thread count.  On several threads each timed call is followed by an untimed busy wait until the
process's other threads are quiet (``costs.timing.settle``): onnxruntime's worker spins ~50 ms after a run and
torch's OpenMP workers ~10 ms, and a contender timed while they spin runs on one core.  The contenders:

* ``eager``: the PyTorch module under ``torch.no_grad``;
* ``ort``: onnxruntime on the model's ONNX export, ``ORT_ENABLE_ALL``, ``intra_op_num_threads`` set;
* ``openvino``: OpenVINO's CPU plugin on ``openvino.convert_model`` of the module, compiled with
  ``INFERENCE_PRECISION_HINT=f32`` (no bf16/fp16 where the CPU has them), ``INFERENCE_NUM_THREADS`` set,
  one stream, the latency hint (``openvino_config``, the one definition ``bench.overhead`` builds with too);
* ``inductor``: ``torch.compile`` (Inductor, ``freezing=True`` so weights are constants it can fold);
* ``noopt``: the graph as imported (``from_torch``, no saturation) compiled for the same target and threads
  the same way as eqsat's: what the compiler alone gives, so that ``noopt / eqsat`` is the e-graph's own share;
* ``untuned``: eqsat's graph with every kernel on its recipe's default schedule (``EQSAT_TUNING=0``), where
  ``eqsat tune`` left records for this machine: ``untuned / eqsat`` is tuning's own share;
* ``eqsat``: the graph ``optimize`` chose for the LLVM target on that many threads, compiled for it.

``--cost compiled`` (the default) extracts with the costs of the target the graph runs on: every e-node
priced as its compiled kernels run on this CPU at that thread count (``compiled_cost``; what is not cached
yet is measured first, once per machine), with that target's rules (Winograd among them).  ``analytical``
optimizes for eager PyTorch instead (the roofline, torch's rules) and compiles that graph: what pricing
for the wrong machine costs (VGG-19, 1 thread: 411 ms priced for torch vs 202 ms priced for llvm).

Each column is a median over ``REPEATS`` interleaved rounds (``--repeats``) with its interquartile range; ratios
are ``peer / eqsat`` (above 1: eqsat is faster), ``best`` is the fastest peer's (eager and noopt are not peers)
and ``noopt/eq`` the compiled imported graph's, marked ``=`` where eqsat returned the imported graph itself (its
run check kept it, or nothing rewrote it: the two columns are then two timings of one graph); the geometric means
of those ratios close the table, with the models where the best peer beat eqsat counted. eqsat's outputs are
checked against eager first (``verified``); every other contender's too, once before timing: a peer whose outputs
differ from eager's by more than ``PEER_REL_TOL`` (noopt: by more than eqsat's tolerance) is not timed, with a
warning on stderr, and a peer that cannot run a model gets ``None`` (no column).

``--target cuda`` (a CUDA device and torch built with CUDA): each model optimized for the GPU
(``--cost compiled``, the default: e-nodes priced by kernels compiled and timed on it, cached per GPU;
``analytical``: the roofline), compiled for ``cuda`` and checked against the module on the GPU in
exact FP32 (TF32 tolerance: ``max|ours - ref| <= 5e-3 * max|ref|``), then timed against PyTorch eager
CUDA and ``torch.compile`` (Inductor), both with TF32 allowed like our tensor-core tiles (exact FP32
on both sides with ``EQSAT_CUDA_EXACT_FP32=1``), interleaved with CUDA events (``bench.gpu_timing``).
``--imported`` adds the graph compiled as imported (no rewriting): what rewriting bought on the GPU.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bench import e2e_cuda
from bench.gpu_timing import Timer, cuda_event_ms, cuda_missing, geomean
from bench.models import MODELS, load_spec
from costs.timing import SETTLE_S, Timing, interleaved
from lower import parse_target
from lower.tune import records as tuning_records
from rewrite import config
from rewrite.frontends import from_torch
from rewrite.ir.errors import EqsatError
from rewrite.ir.graph import Graph
from rewrite.ir.target import HALF_REL_TOL
from rewrite.pipeline import COSTS, compile, optimize, priced_for
from rewrite.progress import each
from rewrite.verification.numeric import REL_TOL, compare_all

PEERS = ("ort", "openvino", "inductor")
PEER_PACKAGES = {"ort": "onnxruntime", "openvino": "openvino"}  # peers whose package is optional (the bench extra)
COLS = ("eager", *PEERS, "noopt", "untuned", "eqsat")  # the llvm table's columns: each row has ms_<col> and iqr_<col>
PEER_REL_TOL = 1e-3  # a peer is timed only when max|peer - eager| <= this * max(1, max|eager|) (compare_all)

Runner = Callable[[], object]


def ort_runner(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], threads: int, tmp: str) -> Runner | None:
    """onnxruntime on the model's ONNX export, or None when it is not installed or the model does not export."""
    try:
        import onnxruntime as ort  # optional (bench extra): imported here so e2e runs without it
    except ImportError:
        return None
    path = os.path.join(tmp, f"m{threads}.onnx")
    try:
        torch.onnx.export(module, inputs, path, dynamo=False)
    except Exception as e:  # any exporter failure only means "no ort column" for this model
        print(f"  ort: export failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return None
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    feed = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs, strict=False)}
    return lambda: sess.run(None, feed)


def openvino_config(threads: int) -> dict[str, Any]:
    """``compile_model``'s properties for OpenVINO's CPU plugin as every bench builds it: FP32 arithmetic
    (no bf16/fp16 where the CPU has them, like eqsat and the other peers), ``threads`` threads in one stream,
    the latency hint."""
    import openvino as ov  # optional (bench extra): imported here so e2e runs without it
    import openvino.properties as props
    import openvino.properties.hint as hints

    return {
        hints.inference_precision(): ov.Type.f32,
        props.inference_num_threads(): threads,
        props.num_streams(): 1,
        hints.performance_mode(): hints.PerformanceMode.LATENCY,
    }


def openvino_convert(module: torch.nn.Module, inputs: tuple[Any, ...]) -> Any:
    """The module as an OpenVINO model: ``convert_model`` tracing it on ``inputs``, or, where OpenVINO's PyTorch
    frontend cannot convert it, its ONNX export (as onnxruntime reads it) through OpenVINO's ONNX frontend, with
    one line on stderr saying so.  Hugging Face GPT-2 and Llama need the second way (OpenVINO 2026: their
    key-value cache's tensor list reaches ``cat`` as an op the PyTorch frontend leaves unconverted); without it
    those models had no OpenVINO column.  The ONNX file stays in a folder removed when the process exits (the
    converted model may map its weights from it)."""
    import openvino as ov

    try:
        return ov.convert_model(module, example_input=inputs)
    except Exception as first:  # any frontend failure: try the model's ONNX export instead
        path = os.path.join(_onnx_folder(), f"openvino{len(os.listdir(_onnx_folder()))}.onnx")
        try:
            torch.onnx.export(module, inputs, path, dynamo=False)
            model = ov.convert_model(path)
        except Exception:
            raise first from None  # the PyTorch frontend's failure is the one to report
        print(
            f"  openvino: PyTorch frontend failed ({_error_line(first)}); converted from the ONNX export",
            file=sys.stderr,
        )
        return model


@functools.cache
def _onnx_folder() -> str:
    """A folder for ONNX exports that live as long as the process (removed at exit)."""
    path = tempfile.mkdtemp(prefix="eqsat-bench-onnx-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def openvino_compile(model: Any, threads: int) -> Any:
    """A converted model compiled for the CPU with ``openvino_config(threads)``."""
    import openvino as ov

    return ov.Core().compile_model(model, "CPU", openvino_config(threads))


def openvino_call(compiled: Any, inputs: tuple[Any, ...]) -> Runner:
    """One inference of a compiled model on ``inputs`` per call (the inputs shared, not copied, as onnxruntime
    reads them); it returns the outputs as numpy arrays."""
    request = compiled.create_infer_request()
    feed = [t.numpy() for t in inputs]
    return lambda: request.infer(feed, share_inputs=True).to_tuple()


def openvino_runner(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], threads: int) -> Runner | None:
    """OpenVINO on the CPU (``openvino_convert``, ``openvino_compile``, ``openvino_call``), or None when it is
    not installed or cannot convert or compile the model."""
    try:
        import openvino  # noqa: F401  (optional: no column without it)
    except ImportError:
        return None
    try:
        with torch.no_grad():
            compiled = openvino_compile(openvino_convert(module, inputs), threads)
    except Exception as e:  # any converter or plugin failure only means "no openvino column" for this model
        print(f"  openvino: failed: {_error_line(e)}", file=sys.stderr)
        return None
    return openvino_call(compiled, inputs)


@contextlib.contextmanager
def _freezing() -> Iterator[None]:
    import torch._inductor.config as inductor_config  # deferred: importing Inductor is slow and e2e may skip it

    before = inductor_config.freezing
    inductor_config.freezing = True
    try:
        yield
    finally:
        inductor_config.freezing = before


def inductor_runner(
    module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], mode: str | None = None
) -> Runner | None:
    """``torch.compile`` with Inductor and freezing (in ``mode``: ``max-autotune`` tunes GEMM templates and runs
    CUDA graphs), compiled (and warmed) here; None when it fails."""
    label = mode or "inductor"
    try:
        with _freezing(), torch.no_grad():
            compiled = torch.compile(module, backend="inductor", mode=mode)
            for _ in range(2 if mode else 1):  # compile now, not inside the timed rounds (CUDA graphs: record)
                compiled(*inputs)
    except Exception as e:  # a missing C++ compiler or an unsupported op only means "no inductor column"
        print(f"  {label}: failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return None

    def run() -> object:
        with torch.no_grad():
            return compiled(*inputs)

    return run


def _eager(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> Runner:
    def run() -> object:
        with torch.no_grad():
            return module(*inputs)

    return run


def _verified(
    graph: Graph,
    run: Callable[[dict[str, torch.Tensor]], list[torch.Tensor]],
    feed: dict[str, torch.Tensor],
    ref: object,
) -> tuple[bool, float]:
    refs = [ref] if isinstance(ref, torch.Tensor) else list(ref)  # type: ignore[call-overload]
    cmp = compare_all(refs, [o.cpu() for o in run(feed)], REL_TOL)
    if not cmp.close:
        print(f"  eqsat: '{graph.name}' differs from PyTorch: {cmp.why}", file=sys.stderr)
    return cmp.close, cmp.rel_err


def _bound(run: Callable[[dict[str, torch.Tensor]], object], feed: dict[str, torch.Tensor]) -> Runner:
    return lambda: run(feed)


def _tensors(out: object) -> list[torch.Tensor]:
    """A contender's outputs as a flat list of CPU tensors: a tensor, numpy arrays, or tuples and lists of them."""
    if isinstance(out, torch.Tensor):
        return [out.detach().cpu()]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensors(o)]
    return [torch.as_tensor(np.asarray(out))]


def _checked(label: str, run: Runner, refs: list[torch.Tensor], tol: float = PEER_REL_TOL) -> Runner | None:
    """``run`` when one call of it gives eager's outputs within ``tol`` (``compare_all``); otherwise None, with
    one line on stderr: a contender computing something else is not timed."""
    try:
        cmp = compare_all(refs, _tensors(run()), tol)
    except Exception as e:  # a runner that builds but cannot run is no column either
        print(f"  {label}: failed: {_error_line(e)}", file=sys.stderr)
        return None
    if not cmp.close:
        print(f"  {label}: differs from eager over rel {tol:g} ({cmp.why}); not timed", file=sys.stderr)
        return None
    return run


def _ms(t: Timing | None) -> float | None:
    return None if t is None else t.median * 1e3


def _iqr_ms(t: Timing | None) -> list[float] | None:
    return None if t is None else [q * 1e3 for q in t.quartiles]


def optimize_for(graph: Graph, threads: int, cost: str = "compiled") -> tuple[Graph, float, dict[str, Any] | None]:
    """``graph`` optimized for the LLVM target on ``threads`` threads (``cost="compiled"``: priced by that
    target's compiled kernels, with its rules) or for eager PyTorch (``"analytical"``), the seconds it took, and
    its run check's record (which graph it kept, both times) where it ran one."""
    t0 = time.perf_counter()
    res = optimize(graph, target=priced_for(parse_target("llvm", threads), cost))
    rc = res.stats.run_check
    return res.graph, time.perf_counter() - t0, rc.to_json() if rc is not None else None


def _noopt(graph: Graph, threads: int, feed: dict[str, torch.Tensor]) -> tuple[Runner | None, float | None, Any]:
    """The imported graph compiled as eqsat's is (no saturation), bound to its inputs, with its compile seconds
    and kernel count; (None, None, None), with a line on stderr, when it does not compile."""
    t0 = time.perf_counter()
    try:
        run = compile(graph, threads=threads)
    except EqsatError as e:  # an op the llvm target lowers only after rewriting: no noopt column
        print(f"  noopt: compile failed: {_error_line(e)}", file=sys.stderr)
        return None, None, None
    return _bound(run, feed), time.perf_counter() - t0, run.kernels


def _untuned(graph: Graph, threads: int, feed: dict[str, torch.Tensor]) -> Runner | None:
    """eqsat's graph compiled with every kernel on its recipe's default schedule (``EQSAT_TUNING=0``), bound to
    its inputs: tuning's own share, beside eqsat's (which uses ``eqsat tune``'s records); None when no record
    is kept for this machine's target (the two would be one)."""
    if tuning_records.digest(parse_target("llvm", threads)) is None:
        return None
    with config.TUNING.set("0"):
        run = compile(graph, threads=threads)
    return _bound(run, feed)


def run_model(
    name: str, threads_list: Sequence[int], peers: Sequence[str], repeats: int, cost: str = "compiled"
) -> list[dict[str, Any]]:
    """One row per thread count: every contender's median ms and spread, timed interleaved; eqsat's graph
    optimized for that thread count's target (``optimize_for``)."""
    module, inputs = load_model(name)
    graph = from_torch(module, inputs, name=name)
    with torch.no_grad():
        ref = module(*inputs)
    refs = _tensors(ref)
    inductor = inductor_runner(module, inputs) if "inductor" in peers else None
    imported = [n.attrs["name"] for n in graph.inputs]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for threads in threads_list:
            torch.set_num_threads(threads)  # Inductor's kernels read the OpenMP count torch set
            best, optimize_s, run_check = optimize_for(graph, threads, cost)
            # eqsat returned the imported graph itself (the run check kept it, or nothing rewrote it): its
            # eqsat and noopt columns are two timings of one compiled graph
            imported_kept = best is graph or best.pretty() == graph.pretty()
            names = [n.attrs["name"] for n in best.inputs]  # decode keeps the original input order
            feed = dict(zip(names, inputs, strict=False))
            t0 = time.perf_counter()
            run = compile(best, threads=threads)
            compile_s = time.perf_counter() - t0
            ok, rel_err = _verified(best, run, feed, ref)
            others: dict[str, Runner | None] = {
                "ort": ort_runner(module, inputs, threads, tmp) if "ort" in peers else None,
                "openvino": openvino_runner(module, inputs, threads) if "openvino" in peers else None,
                "inductor": inductor,
            }
            noopt, noopt_s, noopt_kernels = _noopt(graph, threads, dict(zip(imported, inputs, strict=False)))
            untuned = _untuned(best, threads, feed)
            contenders: dict[str, Runner] = {"eager": _eager(module, inputs), "eqsat": _bound(run, feed)}
            for k, r in others.items():
                if r is not None and (r := _checked(k, r, refs)) is not None:
                    contenders[k] = r
            if noopt is not None and (noopt := _checked("noopt", noopt, refs, REL_TOL)) is not None:
                contenders["noopt"] = noopt
            if untuned is not None and (untuned := _checked("untuned", untuned, refs, REL_TOL)) is not None:
                contenders["untuned"] = untuned
            keys = list(contenders)
            timed = interleaved(
                [contenders[k] for k in keys],
                repeats=repeats,
                threads=threads,
                names=keys,
                settle_s=SETTLE_S if threads > 1 else 0.0,
            )
            by = dict(zip(keys, timed.timings, strict=True))
            row: dict[str, Any] = {"model": short_name(name), "threads": threads, "cost": cost}
            for k in COLS:
                row[f"ms_{k}"] = _ms(by.get(k))
                row[f"iqr_{k}"] = _iqr_ms(by.get(k))
            row.update(
                verified=ok,
                max_rel_err=rel_err,
                optimize_seconds=optimize_s,
                compile_seconds=compile_s,
                kernels=run.kernels,
                run_check=run_check,  # optimize's own timing of its graph against the input (noopt's)
                imported_kept=imported_kept,
                compile_seconds_noopt=noopt_s,
                kernels_noopt=noopt_kernels,
                notes=list(timed.notes),
            )
            rows.append(row)
    return rows


ROOT = Path(__file__).resolve().parents[1]  # the checkout, where ``python -m rewrite.cli`` resolves
# Rounds per contender.  One graph timed twice in one run (the eqsat and noopt columns where eqsat kept the imported
# graph) came out 0.99-1.13x apart over 10 rounds and 0.97-1.04x over 30 (MobileNetV2 and ViT, 2 threads, two runs
# each on this 2-core host); the rounds cost 1-15 s a row on top of optimize and compile.
REPEATS = 30


def run_model_apart(
    name: str, threads_list: Sequence[int], peers: Sequence[str], repeats: int, cost: str = "compiled"
) -> list[dict[str, Any]]:
    """``run_model`` in a fresh interpreter (``eqsat bench e2e --in-process --models NAME``), its rows read
    back: every contender is still timed interleaved in that one process, but none carries what earlier models
    left in it (in one process through all eight, SqueezeNet at 2 threads ran 3.1-4.1 ms where it ran 2.5 ms
    alone, eager 13-15 ms where 10).  Its progress and warnings go to stderr, its stdout (a solver's banner)
    nowhere; a process that writes no rows is an error naming the model and its exit status."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        cmd = [sys.executable, "-m", "rewrite.cli", "bench", "e2e", "--in-process", "--rows-only", "--models", name]
        cmd += ["--threads", ",".join(map(str, threads_list)), "--peers", ",".join(peers)]
        cmd += ["--repeats", str(repeats), "--cost", cost, "--json", str(out)]
        proc = subprocess.run(cmd, cwd=ROOT, check=False, stdout=subprocess.DEVNULL)  # rows come back as JSON
        if not out.exists():
            raise RuntimeError(f"bench e2e: the process timing {name} wrote no rows (exit status {proc.returncode})")
        rows: list[dict[str, Any]] = json.loads(out.read_text())
        return rows


def _ratio(r: dict[str, Any], peer: str) -> float | None:
    """``peer``'s ms over eqsat's (``best``: the fastest peer's), None where either is missing."""
    ms = _best_ms(r) if peer == "best" else r.get(f"ms_{peer}")
    return ms / r["ms_eqsat"] if ms is not None and r.get("ms_eqsat") else None


def _ratio_cell(r: dict[str, Any], peer: str) -> str:
    """A ratio as the table prints it: ``noopt/eq`` marked ``=`` where eqsat returned the imported graph (the
    ratio is then the noise between two timings of one graph, not the e-graph's share)."""
    x = _ratio(r, peer)
    if x is None:
        return f"{'-':>8}"
    return f"{x:7.2f}=" if peer == "noopt" and r.get("imported_kept") else f"{x:8.2f}"


def _best_ms(r: dict[str, Any]) -> float | None:
    """The fastest peer's median on this row (eager and noopt are not peers), None where no peer ran."""
    return min((ms for p in PEERS if (ms := r.get(f"ms_{p}")) is not None), default=None)


def _cell(r: dict[str, Any], k: str) -> str:
    if r.get(f"ms_{k}") is None:
        return "-"
    lo, hi = r[f"iqr_{k}"]
    return f"{r[f'ms_{k}']:.2f} ({lo:.2f}–{hi:.2f})"


RATIO_LABELS = {
    "ort": "ort/eq",
    "openvino": "ov/eq",
    "inductor": "ind/eq",
    "best": "best/eq",
    "noopt": "noopt/eq",
    "untuned": "untun/eq",
}


def print_table(rows: Sequence[dict[str, Any]]) -> None:
    """Per model and thread count each contender's median ms (IQR), the ratios ``peer / eqsat``, ``best/eq``
    (the fastest peer's) and ``noopt/eq`` (the e-graph's own share); per thread count their geometric means,
    the models where eqsat beat each and where the best peer beat eqsat.  Columns no row has are left out."""
    cols = [c for c in COLS if c in ("eager", "eqsat") or any(r.get(f"ms_{c}") is not None for r in rows)]
    peers = [p for p in PEERS if p in cols]
    ratios = [*peers, *(["best"] if peers else []), *(c for c in ("noopt", "untuned") if c in cols)]
    w = max([12, *(len(str(r["model"])) for r in rows)])
    print(
        f"{'model':<{w}} {'thr':>3} "
        + " ".join(f"{c + ' ms (IQR)':>24}" for c in cols)
        + " "
        + " ".join(f"{RATIO_LABELS[p]:>8}" for p in ratios)
        + "  ok"
    )
    for r in rows:
        cells = " ".join(_ratio_cell(r, p) for p in ratios)
        print(
            f"{r['model']:<{w}} {r['threads']:>3} "
            + " ".join(f"{_cell(r, c):>24}" for c in cols)
            + f" {cells}  {'yes' if r['verified'] else 'NO'}"
        )
    for threads in sorted({r["threads"] for r in rows}):
        sub = [r for r in rows if r["threads"] == threads]
        parts = []
        for p in ("eager", *peers, *(["best"] if peers else [])):
            rs = [x for r in sub if (x := _ratio(r, p)) is not None]
            if rs:
                wins = sum(x > 1 for x in rs)
                losses = f"; best peer faster on {sum(x < 1 for x in rs)}/{len(rs)}" if p == "best" else ""
                parts.append(
                    f"vs {'best peer' if p == 'best' else p} {geomean(rs):.2f}× (faster on {wins}/{len(rs)}{losses})"
                )
        worst = [(r["model"], 1 / x) for r in sub if (x := _ratio(r, "best")) is not None]
        over = [f"{m} {x:.2f}×" for m, x in worst if x > 1.2]
        print(
            f"{threads} thread(s): geomean eqsat speedup "
            + "; ".join(parts)
            + (f"; over 1.2× the best peer: {', '.join(over)}" if over else "")
        )
        if rs := [x for r in sub if (x := _ratio(r, "noopt")) is not None]:
            same = sum(bool(r.get("imported_kept")) for r in sub if _ratio(r, "noopt") is not None)
            kept = f"; {same}/{len(rs)} the imported graph itself (=): two timings of one graph" if same else ""
            print(
                f"{threads} thread(s): geomean noopt/eqsat {geomean(rs):.2f}× (the e-graph's own share: the imported "
                f"graph compiled the same way; rewriting faster on {sum(x > 1 for x in rs)}/{len(rs)}{kept})"
            )
        if rs := [x for r in sub if (x := _ratio(r, "untuned")) is not None]:
            print(
                f"{threads} thread(s): geomean untuned/eqsat {geomean(rs):.2f}× (tuning's own share: eqsat's graph "
                f"with every kernel on its default schedule; tuned faster on {sum(x > 1 for x in rs)}/{len(rs)})"
            )


def _error_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def load_model(spec: str) -> tuple[Any, tuple[Any, ...]]:
    """``(module, inputs)`` for a benchmark model, a zoo model (``bench.zoo``: models eqsat was not tuned
    for) or ``FILE.py:FACTORY``."""
    if spec not in MODELS:
        from bench.zoo import zoo_builder  # deferred: the zoo's builders import transformers

        if (build := zoo_builder(spec)) is not None:
            module, inputs = build()
            return module, tuple(inputs)
    _, module, inputs = load_spec(spec)
    return module, inputs


def model_args(text: str) -> list[str]:
    """``--models``: benchmark or zoo names, a zoo group's name (``full``: every ``full:NAME``, the zoo at
    deployment sizes; ``wide``: every ``wide:NAME``, the wide sweep; ``bench.zoo.zoo_groups``) and
    ``FILE.py:FACTORY`` specs (files made absolute, since each model is timed in a process started in the
    checkout); an unknown name is a ``ValueError`` listing them."""
    from bench.zoo import zoo_builder, zoo_groups, zoo_names

    groups = zoo_groups()
    out: list[str] = []
    for x in (x for x in text.split(",") if x):
        path, sep, factory = x.rpartition(":")
        if x in groups:
            out.extend(f"{x}:{k}" for k in groups[x])
        elif sep and path.endswith(".py"):
            out.append(f"{Path(path).resolve()}:{factory}")
        elif x in MODELS or zoo_builder(x) is not None:
            out.append(x)
        else:
            known = ", ".join([*MODELS, *zoo_names(), *(f"{g} (all {g}:NAME)" for g in groups)])
            raise ValueError(f"unknown model {x!r}; known: {known}, or FILE.py:FACTORY")
    return out


def short_name(spec: str) -> str:
    """A model's name in the table: ``FILE.py:FACTORY`` as ``FILE:FACTORY``, a built-in name as it is."""
    path, sep, factory = spec.rpartition(":")
    return f"{Path(path).stem}:{factory}" if sep and path.endswith(".py") else spec


def list_arg(text: str, known: Sequence[str], what: str) -> list[str]:
    got = [x for x in text.split(",") if x]
    if unknown := [x for x in got if x not in known]:
        raise ValueError(f"unknown {what}(s) {unknown}; known: {', '.join(known)}")
    return got


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.e2e", description=__doc__.splitlines()[0])
    p.add_argument("--target", default="llvm", choices=("llvm", "cuda"), help="where eqsat's kernels run")
    p.add_argument(
        "--models",
        default=",".join(MODELS),
        help="comma-separated: benchmark models (the default: all eight), zoo models (bench.zoo: models eqsat was "
        "not tuned for), full:NAME (the zoo at deployment sizes; 'full': all of them), wide:NAME (the wide sweep of "
        "other architectures; 'wide': all of them) or FILE.py:FACTORY",
    )
    p.add_argument(
        "--peers",
        help=f"comma-separated: {','.join(PEERS)} on llvm (default all), {','.join(e2e_cuda.CUDA_PEERS)} on cuda "
        "(default both); eager, and on llvm the imported graph compiled without rewriting (noopt), are always "
        "timed; '' for none",
    )
    p.add_argument("--threads", default="1,2", help="llvm: comma-separated thread counts, each timed separately")
    p.add_argument(
        "--repeats",
        type=int,
        default=REPEATS,
        help=f"interleaved rounds each contender is timed in (default {REPEATS})",
    )
    p.add_argument(
        "--cost",
        choices=COSTS,
        default=COSTS[0],
        help="the cost model optimize extracts with: compiled (the target's kernels, measured) or analytical "
        "(llvm: priced for eager PyTorch; cuda: the roofline)",
    )
    p.add_argument("--imported", action="store_true", help="cuda: also time the graph compiled as imported")
    p.add_argument(
        "--dtype",
        default="float32",
        choices=("float32", *HALF_REL_TOL),
        help="cuda: the model and its inputs in this dtype (every contender runs it so; correct within twice torch's "
        "own error against float32, or the dtype's tolerance)",
    )
    p.add_argument("--json", help="write the rows (llvm: a JSON list; cuda: target, rows, summary) to this file")
    p.add_argument(
        "--in-process",
        action="store_true",
        help="llvm: time every model in this process (by default each of several models runs in its own)",
    )
    p.add_argument("--rows-only", action="store_true", help=argparse.SUPPRESS)  # no table: a model's own process
    return p


def missing_peers(peers: Sequence[str]) -> list[str]:
    """One line per asked-for peer whose package is not installed: its column is left out, and the line names the
    extra that installs it (``make setup`` does not: OpenVINO is a 60 MB wheel only the bench uses)."""
    return [
        f"bench e2e: peer {p} needs the {pkg} package (pip install -e '.[bench]'); its column is left out"
        for p in peers
        if (pkg := PEER_PACKAGES.get(p)) is not None and importlib.util.find_spec(pkg) is None
    ]


def main(argv: Sequence[str] | None = None, timer: Timer = cuda_event_ms) -> int:
    args = parser().parse_args(argv)
    cuda = args.target == "cuda"
    known_peers = e2e_cuda.CUDA_PEERS if cuda else ("eager", *PEERS)
    try:
        names = model_args(args.models)
        peers = list_arg(args.peers if args.peers is not None else ",".join(known_peers), known_peers, "peer")
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    if args.repeats < 1:
        print(f"--repeats wants a positive integer, got {args.repeats}", file=sys.stderr)
        return 2
    if cuda:
        if (missing := cuda_missing("bench e2e --target cuda")) is not None:
            print(missing, file=sys.stderr)
            return 2
        record = e2e_cuda.run_cuda(names, peers, args.repeats, args.cost, args.imported, timer, args.dtype)
        e2e_cuda.print_cuda_table(record["rows"], record["gpu"])
        if args.json:
            Path(args.json).write_text(json.dumps(record, indent=1))
        return 0 if all(r["verified"] for r in record["rows"]) else 1
    if args.dtype != "float32":
        print(f"--dtype {args.dtype} is for --target cuda; the llvm table runs float32 models", file=sys.stderr)
        return 2
    try:
        threads = [int(x) for x in args.threads.split(",") if x]
    except ValueError:
        print(f"--threads wants comma-separated integers, got {args.threads!r}", file=sys.stderr)
        return 2
    if not threads or min(threads) < 1:
        print(f"--threads wants positive integers, got {args.threads!r}", file=sys.stderr)
        return 2
    for line in missing_peers(peers):
        print(line, file=sys.stderr)
    rows: list[dict[str, Any]] = []
    timed = run_model if args.in_process or len(names) == 1 else run_model_apart
    for name in each(names, "bench e2e"):
        try:
            rows.extend(timed(name, threads, peers, args.repeats, args.cost))
        except RuntimeError as e:
            print(e, file=sys.stderr)
            return 1
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.rows_only:
        return 0 if all(r["verified"] for r in rows) else 1
    print_table(rows)
    for r in rows:
        for note in r["notes"]:
            print(f"warning: {r['model']} ({r['threads']} thr): {note}", file=sys.stderr)
    return 0 if all(r["verified"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
