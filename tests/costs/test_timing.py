"""The one timing module: interleaved contenders, medians with their spread, honest warnings; and the measured
cost model, which prices only what was measured."""

import dataclasses
import itertools
import re
import threading
import time

import pytest
import torch

from costs import measured, timing
from costs.measured import MeasuredCost, egraph_configs, profile_configs
from costs.timing import Timing, format_ratio, interleaved, speedup
from rewrite import GraphBuilder
from rewrite.cli.report import run_table
from rewrite.egraph.limits import Limits
from rewrite.ir.errors import UsageError
from rewrite.ir.target import KINDS
from rewrite.pipeline import optimize, saturated_egraph
from rewrite.results import RunStats
from rewrite.rulelang.loader import load_rules


def test_contenders_alternate_and_every_sample_is_kept():
    order = []
    run = interleaved([lambda: order.append("a"), lambda: order.append("b")], repeats=4, warmup=1)
    assert order == ["a", "b", "a", "b", "b", "a", "a", "b", "b", "a"]  # warmup, then forward/reversed rounds
    assert [len(t.samples) for t in run.timings] == [4, 4]


def test_both_sides_run_on_the_requested_thread_count_and_it_is_restored():
    before = torch.get_num_threads()
    seen = []
    run = interleaved([lambda: seen.append(torch.get_num_threads())] * 2, repeats=2, warmup=0, threads=1)
    assert set(seen) == {1} and run.threads == 1 and torch.get_num_threads() == before


def test_timing_statistics_and_format():
    t = Timing((1.0, 2.0, 3.0, 4.0, 100.0))
    assert (t.median, t.min, t.max, t.quartiles) == (3.0, 1.0, 100.0, (2.0, 4.0))
    assert t.spread == pytest.approx(2 / 3)
    assert format_ratio(1.234, 1.1, 1.31) == "1.23× (1.10–1.31)"


def test_a_speedup_is_the_median_per_round_ratio_with_its_quartiles():
    s = speedup(lambda: time.sleep(0.001), lambda: time.sleep(0.004), repeats=7, warmup=0)
    assert s.lo <= s.ratio <= s.hi and s.ratio > 1.5
    assert re.fullmatch(r"\d+\.\d\d× \(\d+\.\d\d–\d+\.\d\d\)", str(s))


def test_noisy_timings_and_a_busy_machine_are_flagged(monkeypatch):
    calls = iter([0.001, 0.001, 0.010, 0.001, 0.001, 0.010] * 4)
    run = interleaved([lambda: time.sleep(next(calls))], repeats=6, warmup=0)
    assert any("noisy" in n for n in run.notes), run.notes
    monkeypatch.setattr(timing, "_machine_busy", lambda: None)  # no /proc/stat: the load average decides
    monkeypatch.setattr(timing.os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    run = interleaved([lambda: None], repeats=3, warmup=0)
    assert run.others_busy_cores == 8.0 and any("other processes" in n for n in run.notes)


def test_run_table_prints_the_spread_and_the_warnings():
    stats = RunStats(
        target="llvm",
        compile_seconds=0.5,
        kernels=3,
        latency_ms=1.0,
        torch_eager_ms=1.3,
        speedup_vs_eager=1.3,
        speedup_vs_eager_iqr=(1.2, 1.4),
        timing_notes=("other processes used 1.5 CPU core(s) while timing: numbers may be off",),
        max_rel_err=1e-7,
        torch_threads=2,
        plan="",
    )
    out = run_table(stats)
    assert "(1.30× (1.20–1.40), 2 thread(s) each)" in out
    assert out.splitlines()[1].startswith("warning: other processes")


def _tiny():
    b = GraphBuilder("tiny")
    x = b.input("x", (8, 16))
    w = b.weight("w", torch.randn(16, 16))
    return b.build([b.relu(b.matmul(b.relu(b.matmul(x, w)), w))])


def test_strict_measured_costs_refuse_an_unmeasured_op_in_one_line(tmp_path):
    model = MeasuredCost(cache=tmp_path / "c.sqlite", strict=True, hint="run `eqsat costs profile tiny --egraph`")
    with pytest.raises(UsageError, match=r"no measured cost for \w+ \[\(8, 16\)[^]]*\] float32 on torch-cpu") as e:
        optimize(_tiny(), limits=Limits(iterations=2), extractor="greedy", cost_model=model)
    assert "\n" not in str(e.value) and "eqsat costs profile" in e.value.hint


@pytest.mark.slow  # ~10 s: profiles every op of an e-graph (test_optimize profiles a few in the fast tier)
def test_profiling_the_egraph_covers_every_op_extraction_prices(tmp_path, monkeypatch):
    fake = lambda k, op, a, s, d="float32", w=0, r=1: measured.Measurement(1e-6 * len(s), 1, 0.0)
    monkeypatch.setitem(KINDS, "torch", dataclasses.replace(KINDS["torch"], runner=fake))
    g, limits = _tiny(), Limits(iterations=2)
    model = MeasuredCost(cache=tmp_path / "c.sqlite", strict=True)
    profile_configs(egraph_configs(saturated_egraph(g, load_rules(), limits)), model)
    res = optimize(g, limits=limits, extractor="greedy", cost_model=model)
    assert res.stats.verified and model.stats["fallbacks"] == 0 and model.stats["hits"] > 0


def test_free_threads_leaves_the_cores_others_use(monkeypatch):
    """Oversubscribed timings measure the scheduler: a busy machine gets fewer threads, never 0."""
    import costs.timing as timing

    for others, wanted, cores, want in [
        (0.1, 2, 2, 2),
        (1.0, 2, 2, 1),
        (2.0, 2, 2, 1),
        (1.0, 4, 8, 4),
        (None, 2, 2, 2),
    ]:
        monkeypatch.setattr(timing._Watch, "others", lambda self, o=others: o)
        monkeypatch.setattr(timing.os, "sched_getaffinity", lambda pid, c=cores: set(range(c)))
        assert timing.free_threads(wanted, probe_seconds=0.0) == (want, others)


def test_three_or_more_contenders_never_run_twice_in_a_row():
    """Forward-then-reversed rounds ran the last contender back to back every other round (its data still in
    cache); shuffled rounds run every contender once per round, never right after itself, after varied others."""
    order: list[int] = []
    interleaved([lambda i=i: order.append(i) for i in range(4)], repeats=20, warmup=0)
    rounds = [order[k : k + 4] for k in range(0, len(order), 4)]
    assert all(sorted(r) == [0, 1, 2, 3] for r in rounds)
    assert all(a != b for a, b in itertools.pairwise(order))
    before = {i: {a for a, b in itertools.pairwise(order) if b == i} for i in range(4)}
    assert all(len(prev) >= 2 for prev in before.values()), before


def test_settle_waits_between_calls_without_timing_the_wait():
    """``settle_s``: a busy wait after each timed call (peers' spinning workers die down), not in the times."""
    t0 = time.perf_counter()
    run = interleaved([lambda: None, lambda: None], repeats=3, warmup=0, settle_s=0.01)
    assert time.perf_counter() - t0 >= 6 * 0.01
    assert all(t.median < 0.005 for t in run.timings)


def test_settle_waits_until_the_other_threads_of_the_process_are_quiet(monkeypatch):
    """A thread still spinning after a peer's run (onnxruntime's worker: ~50 ms) holds the settle back
    until it stops; with nothing running it lasts the minimum and one quiet span.  The other threads' CPU
    time is scripted here (a real spinner's share of two busy cores is the scheduler's to decide)."""
    waits: list[float] = []
    monkeypatch.setattr(timing, "_busy", waits.append)
    cpu = iter([1.0, 1.0])  # nothing else runs: one quiet span
    monkeypatch.setattr(timing, "_others_cpu", lambda me: next(cpu))
    timing.settle(0.001)
    assert waits == [0.001, timing.QUIET_S]
    waits.clear()
    busy_spans = 5  # another thread uses a whole core for five spans, then stops
    cpu = iter([1.0 + timing.QUIET_S * min(i, busy_spans) for i in range(busy_spans + 2)])
    timing.settle(0.001)
    assert waits == [0.001] + [timing.QUIET_S] * (busy_spans + 1)
    waits.clear()
    cpu = iter([float(i) for i in range(10_000)])  # never quiet: the wait is bounded
    assert timing.settle(0.0, max_seconds=0.0) >= 0.0 and waits == [0.0]


def test_the_other_threads_cpu_time_counts_a_spinning_thread_and_not_this_one():
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [None for _ in iter(stop.is_set, True)])
    me = threading.get_native_id()
    before = timing._others_cpu(me)
    if before is None:
        pytest.skip("per-thread CPU times cannot be read here (no /proc/self/task/*/schedstat)")
    spinner.start()
    try:
        time.sleep(0.05)  # the sleeping main thread leaves the spinner the interpreter lock
        during = timing._others_cpu(me)
    finally:
        stop.set()
        spinner.join()
    assert during > before


def test_settle_is_a_fixed_wait_where_thread_times_cannot_be_read(monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr(timing, "_busy", waits.append)
    monkeypatch.setattr(timing, "_others_cpu", lambda me: None)
    timing.settle(0.02)
    assert waits == [0.02]


def test_a_timer_takes_the_samples_and_the_warmup_still_runs_the_contenders():
    """``timer(i)``: what a contender's run took where the wall clock is not the measure (CUDA events, the
    kernels' own profile); the loop, its order and its warm-up stay the one in ``costs.timing``."""
    ran: list[int] = []
    timed: list[int] = []
    run = interleaved(
        [lambda: ran.append(0), lambda: ran.append(1)],
        repeats=3,
        warmup=1,
        timer=lambda i: timed.append(i) or 10.0 * (i + 1),
    )
    assert ran == [0, 1] and timed == [0, 1, 1, 0, 0, 1]
    assert [t.samples for t in run.timings] == [(10.0,) * 3, (20.0,) * 3]
