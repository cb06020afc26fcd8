"""The run check: a compiled target's chosen graph timed against the imported one, and the input kept when it
ran faster in the median round (``check``; ``optimize`` runs it after verifying).

Within noise that is a coin toss between two graphs that run alike; the cost model's opinion is no tie-breaker,
since it is what the check exists to catch out (bench e2e over the full: zoo, keeping the input only when it won by
twice the median's standard error and 2%: the optimized graph ran 8-10% slower than the unoptimized one on
MobileNetV2, BERT and ViT at one thread count or another).  ``time_pair`` times two compiled graphs the way the
check does (``eqsat rules effect --run`` uses it too).

    >>> host = host_for("llvm", None)                           # doctest: +SKIP
    >>> kept, compiled, record = check(imported, chosen, host)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Callable

import torch

from costs.timing import Speedup, speedup
from lower import CompiledGraph, compile_graph, filecache, parse_target
from lower.measure_graphs import lower_digest
from lower.target import backend_of
from rewrite import config
from rewrite.ir.errors import EqsatError
from rewrite.ir.graph import Graph
from rewrite.ir.target import Target, kind_of
from rewrite.results import RunCheck

RUN_CHECK_SECONDS = 1.0  # timed rounds fill about this long (between RUN_CHECK_ROUNDS)
RUN_CHECK_ROUNDS = (9, 41)


def host_for(target: str | Target, run_check: bool | None) -> Target | RunCheck | None:
    """The compiled target the chosen graph is timed on; None (eager PyTorch, or the check is off), or the record
    of a check that cannot run here (no device for the target)."""
    kind = kind_of(target)
    if not kind.compiled:
        return None
    if not (config.RUN_CHECK.flag() if run_check is None else run_check):
        return None
    try:
        return parse_target(target)
    except EqsatError as e:
        return RunCheck(kind.name, 0, {}, "extracted", 0.0, 0, 0.0, (f"not run: {str(e).splitlines()[0]}",))


def _compiled_or_why(g: Graph, host: Target) -> CompiledGraph | str:
    try:
        return compile_graph(g, target=host)
    except EqsatError as e:
        return str(e).splitlines()[0]


def time_pair(ours: CompiledGraph, baseline: CompiledGraph, feed: dict[str, torch.Tensor], host: Target) -> Speedup:
    """``costs.timing.speedup`` of two compiled graphs on ``feed`` (per round, the baseline's time over ours),
    after a warm-up call each, in rounds sized to fill ``RUN_CHECK_SECONDS``.  On a device (a kind that is not
    ``threaded``: a GPU) each call waits for its kernels, and the host's thread count does not apply.  The run
    check times its pair this way, and so does ``eqsat rules effect --run``."""
    on_host = host.kind_info.threaded
    device = backend_of(host).device

    def call(cg: CompiledGraph) -> Callable[[], object]:
        def run() -> object:
            out = cg(feed)
            if not on_host:
                getattr(torch, device).synchronize()
            return out

        return run

    fns = (call(ours), call(baseline))
    with torch.no_grad():
        for f in fns:
            f()  # first calls: caches, a CUDA graph's capture
        t0 = time.perf_counter()
        for f in fns:
            f()
        one_round = time.perf_counter() - t0
        lo, hi = RUN_CHECK_ROUNDS
        rounds = max(lo, min(hi, int(RUN_CHECK_SECONDS / max(one_round, 1e-6))))
        return speedup(fns[0], fns[1], repeats=rounds, warmup=0, threads=host.threads if on_host else None)


def noise(iqr: float, n: int) -> float:
    """Twice the standard error of a median of ``n`` samples whose interquartile range is ``iqr`` (a normal
    spread: sigma = IQR / 1.349; the median's standard error 1.253 sigma / sqrt(n)): how far apart two graphs'
    times had to be for the check's answer to be more than a coin toss (``RunCheck.margin``)."""
    return 2 * 1.253 * (iqr / 1.349) / math.sqrt(max(n, 1))


def check(graph: Graph, chosen: Graph, host: Target) -> tuple[Graph, CompiledGraph | None, RunCheck | None]:
    """Compile the chosen graph and the imported one (when they differ) for ``host`` and time them
    interleaved; return the graph to keep, its compiled form and the record (None when they are one graph).

    The input is kept when the median of the per-round time ratios says it ran faster: extraction trusts a
    cost model, and the model can be wrong about a whole graph (fusion across kernels it priced apart,
    caches).  The other extractor's graph is not a candidate: a third compile cost MobileNetV2 a third more
    time in the check, and it ran within noise of the two.  When one of the two does not compile, the other
    is kept untimed (the chosen graph when neither does: ``compile`` will say why).

    A check is a measurement like a kernel's cost, and is not repeated: its record is kept in the cache
    folder (``run_checks``) under the two graphs' text, the target's key and the lowering's source digest,
    and a later check of the same pair compiles only the graph it kept (a note says the times are reused)."""
    t0 = time.perf_counter()
    if chosen is graph:
        return chosen, None, None
    ours_text, input_text = chosen.pretty(), graph.pretty()  # printed once: compared, then the cache key
    if ours_text == input_text:
        return chosen, None, None  # nothing else to run
    key = _key(ours_text, input_text, host)
    before = _cached(key)
    if before is not None:
        kept_graph = graph if before.kept == "input" else chosen
        compiled = _compiled_or_why(kept_graph, host)
        if isinstance(compiled, CompiledGraph):
            note = "times measured by an earlier check of these two graphs on this target (cached)"
            record = dataclasses.replace(before, seconds=time.perf_counter() - t0, notes=(*before.notes, note))
            return kept_graph, compiled, record
    ours, theirs = _compiled_or_why(chosen, host), _compiled_or_why(graph, host)
    notes = [
        f"{n} does not compile: {why}" for n, why in (("extracted", ours), ("input", theirs)) if isinstance(why, str)
    ]
    ms: dict[str, float] = {}
    rounds, margin = 0, 0.0
    if isinstance(ours, str) or isinstance(theirs, str):
        keep_input = isinstance(ours, str) and not isinstance(theirs, str)
    else:
        sp = time_pair(ours, theirs, graph.random_inputs(0), host)
        ms = {"extracted": sp.ours.median * 1e3, "input": sp.baseline.median * 1e3}
        rounds, margin = len(sp.ours.samples), noise(sp.hi - sp.lo, len(sp.ours.samples))
        keep_input = sp.ratio < 1.0  # the input's time over the chosen graph's, in the median round
        if keep_input:
            notes.append(f"the extracted graph ran {ms['extracted']:.3f} ms, input {ms['input']:.3f} ms: kept input")
    g, cg = (graph, theirs) if keep_input else (chosen, ours)
    record = RunCheck(
        target=host.name,
        threads=host.threads,
        ms=ms,
        kept="input" if keep_input else "extracted",
        margin=margin,
        rounds=rounds,
        seconds=time.perf_counter() - t0,
        notes=tuple(notes),
    )
    if ms:  # timed (a compile failure is not kept: it says nothing about the machine)
        _keep(key, record)
    return g, cg if isinstance(cg, CompiledGraph) else None, record


def _key(chosen_text: str, input_text: str, host: Target) -> str:
    text = "\n".join(["run-check 1", host.cache_key, lower_digest(), chosen_text, "--- input", input_text])
    return hashlib.sha256(text.encode()).hexdigest()


def _cached(key: str) -> RunCheck | None:
    if config.NO_CACHE.flag():
        return None
    blob = filecache.read(key, filecache.RUN_CHECKS)
    if blob is None:
        return None
    try:
        data = json.loads(blob)
        return RunCheck(**{**data, "notes": tuple(data["notes"])})
    except (ValueError, TypeError, KeyError):  # written by another version of the record: time again
        return None


def _keep(key: str, record: RunCheck) -> None:
    if not config.NO_CACHE.flag():
        filecache.write(key, json.dumps(record.to_json()).encode(), filecache.RUN_CHECKS)


__all__ = ["RUN_CHECK_ROUNDS", "RUN_CHECK_SECONDS", "check", "host_for", "noise", "time_pair"]
