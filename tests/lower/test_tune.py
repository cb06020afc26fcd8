"""Schedule autotuning (``lower.tune``): the space read from the recipes, candidates checked and measured against
the default's output, records kept across processes and read by ``compile``, the search's budget."""

from __future__ import annotations

import dataclasses
import json
import random
import warnings

import pytest
import torch

from lower import parse_target
from lower.ir import Bin, FloatImm, Store
from lower.ir.traverse import map_stmt
from lower.plan import plan_kernels
from lower.schedule import Schedule, ScheduleError, cache, schedule_kernel
from lower.tune import records
from lower.tune.features import N_FEATURES, features
from lower.tune.harness import close, measure
from lower.tune.runners import LocalRunner
from lower.tune.search import TuneOptions, tune
from lower.tune.space import decisions_id, space_of, tasks_of
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import TuningWarning
from rewrite.pipeline import compile

pytestmark = pytest.mark.cpu_form


def _graph():
    g = torch.Generator().manual_seed(0)
    b = GraphBuilder("tunable")
    x = b.input("x", (64, 96))
    y = b.relu(b.matmul(x, b.weight("w", torch.randn(96, 80, generator=g))))
    c = b.input("img", (1, 16, 12, 12))
    dw = b.conv2d(c, b.weight("k", torch.randn(16, 1, 3, 3, generator=g)), padding=(1, 1), groups=16)
    return b.build([b.softmax(y, axis=-1), b.relu(dw)])


@pytest.fixture
def cache_dir(monkeypatch, tmp_path):
    """An empty cache folder: no records, no schedules kept from another test."""
    monkeypatch.setenv("EQSAT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EQSAT_TUNING", raising=False)
    records.forget()
    cache.clear_memo()
    yield tmp_path
    records.forget()
    cache.clear_memo()


def _target(threads: int = 2):
    return parse_target("llvm", threads)


def test_space_is_read_from_the_recipes_and_defaults_are_the_recipe():
    tasks = tasks_of(_graph(), _target(), "g")
    by = {t.name.split("_", 1)[1]: t for t in tasks}
    assert {"matmul", "conv2d", "softmax"} <= set(by)
    gemm = space_of(by["matmul"])
    assert {"mr", "nr", "nc", "mc", "kc", "rows", "parallel"} <= set(gemm)
    for d in gemm.values():
        assert d.default in d.choices and len(set(d.choices)) == len(d.choices)
    assert {"fold_post", "unroll"} <= set(space_of(by["conv2d"]))
    # the defaults are the schedule compile builds, step for step
    for t in tasks:
        plain = schedule_kernel(t.kernel, t.gemm, set(t.const_names), t.target)
        assert plain is not None
        assert [str(s) for s in t.schedule().steps] == [str(s) for s in plain.steps]


def test_a_value_not_among_a_decisions_choices_is_refused():
    t = next(t for t in tasks_of(_graph(), _target(), "g") if t.gemm is not None and not t.gemm.direct)
    with pytest.raises(ScheduleError, match="decision nc=12345"):
        t.schedule({"nc": 12345})
    s = Schedule(t.kernel)
    s.decide("x", [1, 2], 1)
    with pytest.raises(ScheduleError, match="asked twice"):
        s.decide("x", [1, 2], 1)


def test_random_candidates_build_match_the_default_and_are_timed():
    rng = random.Random(1)
    for t in tasks_of(_graph(), _target(), "g"):
        cands = []
        for _ in range(4):
            try:
                cands.append(t.schedule(rng=rng).decisions)
            except ScheduleError:
                pass
        assert cands, t.name
        default, got = measure(t, cands)
        assert default.seconds and default.seconds > 0
        assert [r.error for r in got if r.error] == []
        assert all(r.seconds and r.seconds > 0 for r in got)
        feats = features(t, t.schedule(cands[0]))
        assert len(feats) == N_FEATURES


def test_a_candidate_computing_something_else_is_reported_wrong_and_not_timed():
    t = next(t for t in tasks_of(_graph(), _target(), "g") if "softmax" in t.name)

    class Broken(type(t)):  # every non-default candidate adds 1 to what it stores
        def schedule(self, fixed=None, rng=None):
            s = super().schedule(fixed, rng)
            if fixed:
                body = map_stmt(
                    s.kernel.body,
                    lambda st: (
                        Store(st.buf, st.idx, Bin("+", st.value, FloatImm(1.0))) if isinstance(st, Store) else None
                    ),
                )
                s.kernel = s.kernel.with_body(body)
            return s

    bt = Broken(**{f.name: getattr(t, f.name) for f in dataclasses.fields(t)})
    default, got = measure(bt, [{f"{n}": v for n, v in bt.schedule().decisions.items()} or {"x": 1}])
    assert default.seconds
    assert got[0].seconds is None and got[0].error.startswith("wrong: output")


def test_close_allows_summation_order_not_other_results():
    a = torch.rand(100) + 0.5
    assert close(a * (1 + 1e-6), a)
    assert not close(a + 0.01, a)
    assert close(torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0]))
    assert not close(torch.tensor([1, 2]), torch.tensor([1, 3]))


def test_records_survive_a_restart_and_damaged_lines_are_dropped(cache_dir):
    s = records.store()
    rec = records.Record("k" * 64, "tgt", "k1_matmul", {"nc": 4}, 1e-4, 2e-4, 10, "host")
    s.add(rec)
    path = cache_dir / "tuning" / records.FILE
    with path.open("a") as f:
        f.write('{"format": 1, "key": "trunc')  # a run killed mid-write
        f.write("\n[1, 2]\n")
        f.write(json.dumps({**rec.to_json(), "seconds": "fast"}) + "\n")
    records.forget()
    with pytest.warns(TuningWarning, match=r"3 damaged line\(s\) dropped: line 2: not JSON"):
        again = records.store().load()
    assert again == {rec.key: rec}
    assert again[rec.key].speedup == pytest.approx(2.0)


def test_compile_takes_a_records_decisions_and_tuning_off_ignores_them(cache_dir, monkeypatch):
    g = _graph()
    t = next(t for t in tasks_of(g, _target(), "g") if t.gemm is not None and not t.gemm.direct)
    default = t.schedule()
    other = next(c for c in default.space["nc"].choices if c != default.decisions["nc"])
    cand = t.schedule({**default.decisions, "nc": other}).decisions
    records.store().add(records.Record(t.key, t.target.cache_key, t.name, cand, 1e-4, 2e-4, 5))

    def nc_used():
        cache.clear_memo()
        plan = plan_kernels(g, t.target)
        bk = next(b for b in plan.built if b.schedule is not None and "nc" in b.schedule.decisions)
        return bk.schedule.decisions["nc"]

    assert nc_used() == other
    x = {"x": torch.randn(64, 96), "img": torch.randn(1, 16, 12, 12)}
    ref = g.run(x)
    for got, want in zip(compile(g, threads=2)(x), ref):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    monkeypatch.setenv("EQSAT_TUNING", "0")
    assert nc_used() == default.decisions["nc"]
    # a record the recipe no longer accepts: one warning, the default schedule
    monkeypatch.delenv("EQSAT_TUNING")
    records.store().add(dataclasses.replace(records.store().get(t.key), decisions={"nc": 10**6}))
    with pytest.warns(TuningWarning, match="not used: decision nc=1000000"):
        assert nc_used() == default.decisions["nc"]


def test_search_spends_its_budget_and_a_second_run_measures_nothing_known(cache_dir):
    tasks = tasks_of(_graph(), _target(1), "g")
    seen = []
    rep = tune(tasks, TuneOptions(trials=12, batch=4), LocalRunner(), progress=lambda d, n, w: seen.append((d, n)))
    assert rep.trials == 12 and rep.known == 0 and seen[-1] == (12, 12)
    assert sum(k.trials for k in rep.kernels) == 12
    assert all(k.default_seconds for k in rep.kernels if k.trials)
    log = records.trial_log().load()
    assert sum(len(v) for v in log.values()) == 12
    ids = [decisions_id(t.decisions) for v in log.values() for t in v]
    assert len(ids) == len(set(ids))  # nothing measured twice
    records.forget()  # a new process: read back from disk

    class Counting(LocalRunner):
        def submit(self, b, want_features=True):
            sent.append(b)
            super().submit(b, want_features)

    sent: list = []
    again = tune(tasks_of(_graph(), _target(1), "g"), TuneOptions(trials=12, batch=4), Counting())
    assert again.trials == 0 and again.known == 12
    assert sent == []  # not even a confirmation: nothing known is measured again
    assert "kernel time" in again.table()
    more = tune(tasks_of(_graph(), _target(1), "g"), TuneOptions(trials=16, batch=4), LocalRunner())
    assert more.trials == 4 and more.known == 12
    ids = [decisions_id(t.decisions) for v in records.trial_log().load().values() for t in v]
    assert len(ids) == len(set(ids)) == 16


def test_no_warning_on_a_clean_run(cache_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tune(tasks_of(_graph(), _target(1), "g"), TuneOptions(trials=4, batch=4), LocalRunner())


def test_measured_costs_are_keyed_by_the_records_of_their_target(cache_dir, monkeypatch):
    from lower.llvm.measure import cost_key

    t = _target(1)
    before = cost_key(t).cache_key
    assert "tuning=" not in before
    records.store().add(records.Record("a" * 64, t.cache_key, "k0", {"nc": 2}, 1e-4, 2e-4, 3))
    records.store().add(records.Record("b" * 64, _target(2).cache_key, "k0", {"nc": 2}, 1e-4, 2e-4, 3))
    tuned = cost_key(t).cache_key
    assert tuned.startswith(before) and "tuning=" in tuned
    records.store().add(records.Record("c" * 64, _target(2).cache_key, "k1", {"nc": 4}, 1e-4, 2e-4, 3))
    assert cost_key(t).cache_key == tuned  # another target's records: not this one's costs
    monkeypatch.setenv("EQSAT_TUNING", "0")
    assert cost_key(t).cache_key == before


def test_a_candidate_that_raises_anything_is_dropped_not_the_kernel():
    t = next(t for t in tasks_of(_graph(), _target(), "g") if "softmax" in t.name)

    class Raising(type(t)):
        def schedule(self, fixed=None, rng=None):
            if fixed:
                raise KeyError("a bug in a step")
            return super().schedule(fixed, rng)

    rt = Raising(**{f.name: getattr(t, f.name) for f in dataclasses.fields(t)})
    default, got = measure(rt, [{"anything": 1}])
    assert default.seconds and got[0].seconds is None and got[0].error.startswith("KeyError")


def test_a_contractions_operands_are_drawn_so_its_sums_are_near_one():
    """Candidates are timed on values a model has: a GEMM's sums near 1, not near K (positive draws summed
    over K sent a GELU epilogue's erfc into denormals, 1.5x slower than the model runs it)."""
    from lower.tune.harness import _buffers

    b = GraphBuilder("gelu_gemm")
    y = b.op("gelu_erf", b.matmul(b.input("x", (64, 384)), b.weight("w", torch.randn(384, 96))))
    (t,) = [t for t in tasks_of(b.build([y]), _target(1), "g") if t.gemm is not None]
    bufs = _buffers(t)
    names = [p.name for p in t.kernel.params[: t.n_params]]
    a = bufs[names.index(t.gemm.a_buf)][: 64 * 384].reshape(64, 384)
    w = bufs[names.index(t.gemm.b_buf)][: 384 * 96].reshape(384, 96)
    sums = a @ w
    assert 0.5 < float(sums.mean()) < 2.0, float(sums.mean())
    default, got = measure(t, [])
    assert default.seconds and default.seconds > 0 and got == []
