"""What eqsat costs to run, beside what its peers cost to build: ``eqsat bench overhead``.

    eqsat bench overhead [--models full:mobilenet_v2,full:bert] [--threads 2] [--peers ort,openvino,inductor]
                         [--json OUT]

Per model, each phase in a fresh interpreter of its own (peak resident memory is a process's):

* ``cold``: an empty cache folder (``EQSAT_CACHE_DIR``: no measured kernel costs, no compiled objects, no
  machine profile; and an empty ``TORCHINDUCTOR_CACHE_DIR`` for torch.compile), as a first-time user has
  it: import (``torch.export``; torch's dynamo and export modules loaded before any clock starts, as the peers
  find them: ``_torch_modules``), ``optimize(target="llvm")`` split into load, saturate, extract (kernel cost
  measurement apart), verify and the run check (the chosen graph compiled and timed against the input), then
  ``compile`` (what the run check did not compile); the peak resident memory of the process then; then, in the
  same process, each peer's build: onnxruntime (the ONNX export, then the ``InferenceSession``), OpenVINO
  (``convert_model`` and ``compile_model``, f32) and ``torch.compile`` (Inductor with freezing, to the end of
  its first call);
* ``warm``: the same eqsat steps again in another fresh process on the cache the cold one filled (its measured
  costs, kernels, run check and, since the graph is the same, ``optimize``'s kept answer: ``rewrite.result_cache``,
  so load, saturate and extract are 0 there and the row's ``cached`` is true).

The default models are the zoo at deployment sizes (``full:NAME``: models eqsat was not tuned for).  Times
are wall seconds of one run each (a build is done once; there is nothing to interleave); the ratio column
is eqsat's import + optimize + compile over ``torch.compile``'s build.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from bench.e2e import load_model, model_args, openvino_call, openvino_compile, openvino_convert, short_name
from rewrite.progress import each

PEERS = ("ort", "openvino", "inductor")
ROOT = Path(__file__).resolve().parents[1]
STAGES = ("import", "load", "saturate", "extract", "measure", "verify", "run_check", "compile")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _torch_modules() -> float:
    """Import the torch modules that ``torch.export`` and ``torch.compile`` both load on first use (dynamo,
    export's tracer); the seconds it took.  A process that builds a model loads them once, whoever builds it;
    the peers, built after eqsat in the cold process, found them loaded, and charged to eqsat's import they were
    about 2.6 of MobileNetV2's 4.9 s there.  Neither side is charged now."""
    t0 = time.perf_counter()
    import torch._dynamo
    import torch.export._trace  # noqa: F401

    return time.perf_counter() - t0


def eqsat_phase(spec: str, threads: int) -> dict[str, Any]:
    """Import, optimize for the LLVM target on ``threads`` threads, compile: each stage's seconds, the number
    of kernels measured, and the process's peak resident memory."""
    from lower import parse_target
    from rewrite.frontends import from_torch
    from rewrite.pipeline import compile, optimize

    torch.set_num_threads(threads)
    t_modules = _torch_modules()
    module, inputs = load_model(spec)
    graph, t_import = _timed(lambda: from_torch(module, inputs, name=short_name(spec)))
    res, t_opt = _timed(lambda: optimize(graph, target=parse_target("llvm", threads)))
    # the run check compiled the graph it kept (its seconds are in run_check): compile only when it did not
    run, t_compile = _timed(lambda: res.compiled or compile(res.graph, threads=threads))
    s = res.stats.seconds
    row: dict[str, Any] = {
        "import": t_import,
        "load": s.load,
        "saturate": s.saturate,
        "extract": s.extract - s.measure,
        "measure": s.measure,
        "verify": s.verify,
        "run_check": s.run_check,
        "compile": t_compile,
        "optimize": t_opt,  # the whole call: the stages above and what lies between them (cost model set-up)
        "torch_modules": t_modules,  # not in total (_torch_modules)
        "total": t_import + t_opt + t_compile,
        "measured_kernels": res.stats.measured_kernels,
        "cached": res.stats.cached,  # the answer an earlier optimize kept (rewrite.result_cache): nothing saturated
        "kernels": run.kernels,
        "ops_before": res.stats.ops_before,
        "ops_after": res.stats.ops_after,
        "peak_mb": _peak_mb(),
    }
    return row


def ort_build(module: torch.nn.Module, inputs: tuple[Any, ...], threads: int) -> dict[str, float]:
    import onnxruntime as ort  # optional: the onnx/bench extra

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        _, t_export = _timed(lambda: torch.onnx.export(module, inputs, path, dynamo=False))
        opts = ort.SessionOptions()
        opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess, t_session = _timed(lambda: ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"]))
        feed = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs, strict=False)}
        _, t_first = _timed(lambda: sess.run(None, feed))
    return {"export": t_export, "session": t_session, "first_call": t_first, "build": t_session}


def openvino_build(module: torch.nn.Module, inputs: tuple[Any, ...], threads: int) -> dict[str, float]:
    """OpenVINO built as ``bench e2e`` builds it (``openvino_convert``, ``openvino_compile``: f32, ``threads``)."""
    model, t_convert = _timed(lambda: openvino_convert(module, inputs))
    compiled, t_compile = _timed(lambda: openvino_compile(model, threads))
    _, t_first = _timed(openvino_call(compiled, inputs))
    return {"convert": t_convert, "compile": t_compile, "first_call": t_first, "build": t_convert + t_compile}


def inductor_build(module: torch.nn.Module, inputs: tuple[Any, ...], threads: int) -> dict[str, float]:
    import torch._inductor.config as inductor_config

    torch.set_num_threads(threads)
    before = inductor_config.freezing
    inductor_config.freezing = True
    try:
        with torch.no_grad():
            compiled = torch.compile(module, backend="inductor")
            _, t = _timed(lambda: compiled(*inputs))
    finally:
        inductor_config.freezing = before
    return {"build": t}


BUILDERS: dict[str, Callable[[torch.nn.Module, tuple[Any, ...], int], dict[str, float]]] = {
    "ort": ort_build,
    "openvino": openvino_build,
    "inductor": inductor_build,
}


def peers_phase(spec: str, threads: int, peers: Sequence[str]) -> dict[str, Any]:
    """Each peer's build time for ``spec`` (None, with the reason on stderr, where a peer cannot build it)."""
    out: dict[str, Any] = {}
    for peer in peers:
        module, inputs = load_model(spec)  # a fresh module each: no peer sees what another did to it
        try:
            with torch.no_grad():
                out[peer] = BUILDERS[peer](module.eval(), tuple(inputs), threads)
        except Exception as e:  # a peer that cannot build a model only leaves its column empty
            first = str(e).splitlines()[0] if str(e) else ""
            print(f"  {short_name(spec)}: {peer} failed: {type(e).__name__}: {first}", file=sys.stderr)
            out[peer] = None
    return out


def run_phase(spec: str, phase: str, threads: int, peers: Sequence[str]) -> dict[str, Any]:
    """One phase in this process (the cache folder is the caller's ``EQSAT_CACHE_DIR``)."""
    row: dict[str, Any] = {"model": short_name(spec), "phase": phase, "threads": threads}
    row.update(eqsat_phase(spec, threads))
    if phase == "cold":
        row["peers"] = peers_phase(spec, threads, peers)
    return row


def run_apart(spec: str, phase: str, threads: int, peers: Sequence[str], cache: str) -> dict[str, Any]:
    """``run_phase`` in a fresh interpreter with ``EQSAT_CACHE_DIR=cache``; its row read back.  Its progress
    and warnings go to stderr; a process that writes no row is an error naming the model and the phase."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "row.json"
        cmd = [sys.executable, "-m", "rewrite.cli", "bench", "overhead", "--phase", phase, "--models", spec]
        cmd += ["--threads", str(threads), "--peers", ",".join(peers), "--json", str(out)]
        # the peers' builds are cold too: torch.compile keeps compiled graphs and kernels in its own cache
        # folder (/tmp/torchinductor_USER), where a second run of this bench found MobileNetV2's build and took
        # 9 s instead of 15
        env = {**os.environ, "EQSAT_CACHE_DIR": cache, "TORCHINDUCTOR_CACHE_DIR": str(Path(tmp) / "inductor")}
        proc = subprocess.run(cmd, cwd=ROOT, env=env, check=False, stdout=subprocess.DEVNULL)
        if not out.exists():
            raise RuntimeError(f"bench overhead: the {phase} process for {spec} wrote no row (exit {proc.returncode})")
        row: dict[str, Any] = json.loads(out.read_text())[0]
        return row


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def print_table(rows: Sequence[dict[str, Any]], peers: Sequence[str]) -> None:
    head = ["model", "phase", *STAGES, "total", "kern", "peak MB", *(f"{p} build" for p in peers), "total/ind"]
    print("  ".join(f"{h:>10}" if i else f"{h:<16}" for i, h in enumerate(head)))
    builds: dict[str, dict[str, float | None]] = {}
    for r in rows:
        if r["phase"] == "cold":
            builds[r["model"]] = {p: (b["build"] if (b := r.get("peers", {}).get(p)) else None) for p in peers}
        ind = builds.get(r["model"], {}).get("inductor")
        cells = [
            r["model"],
            r["phase"],
            *(_s(r[k]) for k in STAGES),
            _s(r["total"]),
            str(r["measured_kernels"]),
            f"{r['peak_mb']:.0f}",
            *(_s(builds.get(r["model"], {}).get(p)) if r["phase"] == "cold" else "" for p in peers),
            f"{r['total'] / ind:.2f}" if ind else "-",
        ]
        print("  ".join(f"{c:>10}" if i else f"{c:<16}" for i, c in enumerate(cells)))
    print(
        "times in seconds, one run each; kern: kernel configurations measured; total/ind: eqsat's import + optimize"
        " + compile over torch.compile's build (Inductor, freezing, to the end of the first call)"
    )


def parser() -> argparse.ArgumentParser:
    from bench.zoo.full import FULL

    p = argparse.ArgumentParser(prog="eqsat bench overhead", description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(f"full:{k}" for k in FULL), help="comma-separated model names")
    p.add_argument("--threads", type=int, default=2, help="threads for eqsat's kernels and every peer")
    p.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated, of {','.join(PEERS)}; '' for none")
    p.add_argument("--json", help="write the rows to this file")
    p.add_argument("--phase", choices=("cold", "warm"), help=argparse.SUPPRESS)  # one phase in this process
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        names = model_args(args.models)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    peers = [p for p in args.peers.split(",") if p]
    if bad := [p for p in peers if p not in PEERS]:
        print(f"unknown peer(s) {bad}; known: {', '.join(PEERS)}", file=sys.stderr)
        return 2
    if args.threads < 1:
        print(f"--threads wants a positive integer, got {args.threads}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    if args.phase is not None:  # one phase of one model, in this process (run_apart's child)
        rows = [run_phase(n, args.phase, args.threads, peers) for n in names]
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
        return 0
    failed = []
    for name in each(names, "bench overhead"):
        with tempfile.TemporaryDirectory(prefix="eqsat-overhead-") as cache:
            try:
                for phase in ("cold", "warm"):
                    rows.append(run_apart(name, phase, args.threads, peers, cache))
            except RuntimeError as e:  # one model that fails does not lose the others' rows
                print(e, file=sys.stderr)
                failed.append(name)
        if args.json:  # written as the rows come: a long run stopped halfway keeps what it measured
            Path(args.json).write_text(json.dumps(rows, indent=1))
    print_table(rows, peers)
    if failed:
        print(f"bench overhead: no row for {', '.join(failed)} (see above)", file=sys.stderr)
    return 1 if failed else 0
