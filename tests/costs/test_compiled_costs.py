"""The compiled (llvm) cost model: which table prices which op, the llvm runners, optimize(target="llvm"); a
compiled kind declared by one record (``fake``) and its cost keys."""

import dataclasses
import itertools
import math

import pytest
import torch

from costs import compiled, measured
from costs.compiled import CompiledCost
from costs.key import CostKey
from lower import parse_target
from lower.llvm.measure import cost_key, run_llvm_fused, run_llvm_op
from rewrite import GraphBuilder
from rewrite.egraph.limits import Limits
from rewrite.ir.errors import EqsatError, LoweringError
from rewrite.ir.target import KINDS, Target, TargetKind
from rewrite.pipeline import compiled_cost, default_cost_model, optimize

FAKE = CostKey(Target("fake", threads=1), versions=(("lower", "abc"),))


class Runner:
    """A fake runner: a fixed time per op, an error for 'softmax', and a log of what it was asked."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.asked = seconds, []

    def __call__(self, key, op, attrs, in_shapes, dtype="float32", warmup=5, repeats=20):
        self.asked.append((key.target.kind + "-fused" * key.fused, op))
        if op == "softmax":
            raise LoweringError(f"no lowering for {op}")
        return measured.Measurement(self.seconds, repeats, 0.0)


@pytest.fixture
def fake(monkeypatch, tmp_path):
    alone, fused = Runner(1e-3), Runner(1e-6)
    # a compiled kind is one record: its host, backend, recipe (llvm's), runners and cost key
    kind = TargetKind(
        name="fake",
        host=lambda threads: FAKE.target,
        backend="lower.llvm:BACKEND",
        recipe="lower.schedule.recipes:cpu_recipe",
        cost_key=lambda target, threads: FAKE,
        runner=alone,
        fused_runner=fused,
    )
    monkeypatch.setitem(KINDS, "fake", kind)
    model = CompiledCost(FAKE, cache=tmp_path / "c.sqlite", measure_missing=True, fallback=lambda *a, **k: 7.0)
    return model, alone, fused


def test_fused_rows_are_keyed_apart_on_the_same_target():
    f = FAKE.as_fused()
    assert f.target == FAKE.target and f.fused and not FAKE.fused and f.cache_key != FAKE.cache_key
    assert FAKE.cache_key == "fake|threads=1|lower=abc" and f.cache_key == "fake|threads=1|lower=abc|fused"


def test_a_declared_kind_is_asked_for_rules_costs_and_run_check(fake):
    """Everything the pipeline does differently per kind comes from the record, not from the kind's name."""
    from rewrite.pipeline import default_rules
    from rewrite.runcheck import host_for

    assert isinstance(default_cost_model("fake"), CompiledCost)
    assert compiled_cost("fake").fingerprint == FAKE.cache_key
    assert host_for("fake", True) == FAKE.target  # compiled: its graphs are run-checked
    assert {r.family for r in default_rules("fake")} >= {"winograd", "blocked"}
    KINDS["fake"] = dataclasses.replace(KINDS["fake"], skips_families=frozenset({"winograd"}))
    assert "winograd" not in {r.family for r in default_rules("fake")}
    eager = TargetKind(name="fake", host=lambda threads: FAKE.target, compiled=False)
    KINDS["fake"] = eager
    assert host_for("fake", True) is None and not isinstance(default_cost_model("fake"), CompiledCost)
    with pytest.raises(LoweringError, match="compiles no kernels"):
        parse_target("fake")


def test_each_role_is_priced_by_its_table(fake):
    model, alone, fused = fake
    assert model("conv2d", {}, [(1, 3, 8, 8), (4, 3, 3, 3)]) == 1e-3  # an anchor: its own kernel
    assert model("relu", {}, [(1, 4, 6, 6)]) == 1e-6  # injective: what it adds fused
    assert model("transpose", {"perm": (1, 0)}, [(4, 6)]) == 1e-6
    assert model("reshape", {"shape": (24,)}, [(4, 6)]) == 0.0  # a view: no kernel
    assert model("input", {"name": "x", "shape": (4,)}, []) == 0.0
    assert alone.asked == [("fake", "conv2d_bias_act")]  # a conv's row is its biased twin's (below)
    assert fused.asked == [("fake-fused", "relu"), ("fake-fused", "transpose")]


def test_concat_and_split_of_contiguous_stretches_are_free(fake):
    """One image's channel concat/split runs no kernel (lower/fusion.py places its pieces); two images' do."""
    model, alone, _ = fake
    assert model("concat", {"axis": 1}, [(1, 4, 6, 6), (1, 2, 6, 6)]) == 0.0
    assert model("split", {"axis": -3, "sizes": (1, 3)}, [(1, 4, 6, 6)]) == 0.0
    assert model("concat", {"axis": 1}, [(2, 4, 6, 6), (2, 2, 6, 6)]) == 1e-3
    assert model("concat", {"axis": 2}, [(1, 4, 6, 6), (1, 4, 2, 6)]) == 1e-3
    assert [op for _, op in alone.asked] == ["concat", "concat"]
    configs = [("concat", {"axis": 1}, ((1, 4, 6, 6), (1, 2, 6, 6)), "float32")]
    assert model.missing(configs) == []


def test_a_convolution_and_its_bias_epilogue_are_one_row(fake):
    """conv2d, conv2d_bias_act and relu(conv2d_bias_act) lower to one kernel: its act "none" row prices all
    three, an activation adding its fused increment; a matmul keeps its own row (its right operand is a
    layer's weight only when it is one)."""
    model, alone, fused = fake
    x, w, b = (1, 3, 8, 8), (4, 3, 3, 3), (4,)
    relu = model("conv2d_bias_act", {"padding": (1, 1), "act": "relu"}, [x, w, b])
    assert relu == pytest.approx(1e-3 + 1e-6)  # the biased conv + relu
    assert model("conv2d_bias_act", {"padding": (1, 1), "act": "none"}, [x, w, b]) == 1e-3
    assert model("conv2d", {"padding": (1, 1)}, [x, w]) == 1e-3
    assert alone.asked == [("fake", "conv2d_bias_act")] and fused.asked == [("fake-fused", "relu")]
    parts = model.parts("conv2d", {"stride": (2, 2)}, [x, w])
    assert parts == [("conv2d_bias_act", {"stride": (2, 2), "act": "none"}, (x, w, (4,)), "float32")]
    assert model.parts("matmul", {}, [(5, 8), (8, 6)]) == [("matmul", {}, ((5, 8), (8, 6)), "float32")]
    # a depthwise blocked conv over 24 channels in 2 blocks: no bias spans its 32 lanes, so it is its own row
    dw = ("conv2d_blocked", {"groups": 24, "padding": (1, 1)}, ((1, 2, 8, 8, 16), (2, 1, 3, 3, 16)), "float32")
    assert model.parts(*dw) == [dw]
    configs = [("conv2d_bias_act", {"stride": (2, 2), "act": "tanh"}, (x, w, b), "float32")]
    assert [c[0] for c in model.missing(configs)] == ["conv2d_bias_act", "tanh"]


def test_unmeasurable_config_falls_back_once_and_is_counted(fake):
    model, alone, _ = fake
    assert model("softmax", {"axis": -1}, [(4, 6)]) == 7.0
    assert model("softmax", {"axis": -1}, [(4, 6)]) == 7.0
    assert alone.asked == [("fake", "softmax")]  # not retried
    assert model.stats["unmeasurable"] == 2 and "no lowering" in next(iter(model.unmeasurable.values()))


def test_profile_measures_only_what_is_missing(fake, tmp_path):
    model, alone, fused = fake
    configs = [("matmul", {}, ((4, 8), (8, 8)), "float32"), ("relu", {}, ((4, 8),), "float32")]
    configs.append(("reshape", {"shape": (32,)}, ((4, 8),), "float32"))
    seen = []
    assert model.profile(configs, lambda done, total, key: seen.append((done, total))) == 2
    assert seen == [(1, 2), (2, 2)]
    assert alone.asked == [("fake", "matmul")] and fused.asked == [("fake-fused", "relu")]
    again = CompiledCost(FAKE, cache=tmp_path / "c.sqlite")  # the rows are on disk
    assert again.missing(configs) == [] and again("matmul", {}, [(4, 8), (8, 8)]) == 1e-3


class SizedRunner(Runner):
    """A fused runner whose increment grows with the output's elements: 1 ns each plus 1 us."""

    def __call__(self, key, op, attrs, in_shapes, dtype="float32", warmup=5, repeats=20):
        super().__call__(key, op, attrs, in_shapes, dtype, warmup, repeats)
        self.asked[-1] = (*self.asked[-1], tuple(in_shapes[0]))
        return measured.Measurement(1e-6 + 1e-9 * math.prod(in_shapes[0]), repeats, 0.0)


def test_fused_increments_of_a_family_are_sampled_and_the_rest_interpolated(fake, monkeypatch, tmp_path):
    """Relu at eight sizes spanning 1024x: measured at the ends and within SAMPLE_SPAN of each other, the
    sizes between priced on the line through their measured neighbours (exact for a linear runner), and
    nothing interpolated written to the cache; a second process measures nothing new."""
    model, _, _ = fake
    runner = SizedRunner(0.0)
    monkeypatch.setitem(KINDS, "fake", dataclasses.replace(KINDS["fake"], fused_runner=runner))
    sizes = [64, 96, 128, 512, 1024, 4096, 8192, 65536]
    configs = [("relu", {}, ((1, n),), "float32") for n in sizes]
    configs += [("relu", {}, ((n, 1),), "float32") for n in (64, 512, 65536)]  # sizes twice: one measured
    configs.append(("tanh", {}, ((1, 300),), "float32"))  # a family of its own: measured
    todo, derive = model.plan(configs)
    measured_sizes = sorted(s[-1] for s in (c[2][0] for c in todo if c[0] == "relu"))
    assert measured_sizes[0] == 64 and measured_sizes[-1] == 65536
    assert all(b <= a * compiled.SAMPLE_SPAN for a, b in itertools.pairwise(measured_sizes))
    assert len(derive) == len(configs) - 1 - len(measured_sizes) > 0 and ("tanh", {}, ((1, 300),), "float32") in todo
    assert len({c[2][0][0] * c[2][0][1] for c in todo if c[0] == "relu"}) == len(measured_sizes)
    assert model.profile(configs) == len(todo)
    assert model.stats["interpolated"] == len(derive) and len(runner.asked) == len(todo)
    for c in configs[:-1]:
        assert model(*c[:3]) == pytest.approx(1e-6 + 1e-9 * math.prod(c[2][0]))
    assert len(runner.asked) == len(todo)  # the interpolated ones were priced, not measured
    again = CompiledCost(FAKE, cache=tmp_path / "c.sqlite", measure_missing=True)
    assert len(again.missing(configs)) == len(derive)  # measurements only on disk
    assert again.plan(configs) == ([], derive)  # the next process measures nothing
    monkeypatch.setenv("EQSAT_MEASURE_ALL", "1")
    assert again.plan(configs) == (derive, [])


def test_a_family_is_the_op_spelled_one_way():
    """Sizes, a slice's bounds and float values aside, configurations are one family; an axis, a permutation,
    a broadcast operand or another rank are another."""
    f = compiled.family
    assert f("add", {}, [(1, 8, 4, 4), (1, 8, 4, 4)], "float32") == f(
        "add", {}, [(1, 2, 9, 9), (1, 2, 9, 9)], "float32"
    )
    assert f("add", {}, [(1, 8, 4, 4), (1, 8, 1, 1)], "float32") != f(
        "add", {}, [(1, 8, 4, 4), (1, 8, 4, 4)], "float32"
    )
    assert f("add", {}, [(8, 16), (8, 16)], "float32") != f("add", {}, [(1, 8, 16), (1, 8, 16)], "float32")
    slices = [f("slice", {"axis": 1, "start": a, "end": b}, [(1, 96, 7, 7)], "float32") for a, b in [(0, 48), (48, 96)]]
    assert slices[0] == slices[1] != f("slice", {"axis": 2, "start": 0, "end": 3}, [(1, 96, 7, 7)], "float32")
    assert f("smul", {"scalar": 0.125}, [(4, 8)], "float32") == f("smul", {"scalar": 0.5}, [(4, 8)], "float32")
    t = [f("transpose", {"perm": p}, [(4, 8, 2)], "float32") for p in [(0, 2, 1), (1, 0, 2)]]
    assert t[0] != t[1]


def test_commuted_twins_are_one_row(fake):
    """The e-graph holds ``add(x, b)`` and ``add(b, x)``: one kernel, one measurement, one price."""
    model, _, fused = fake
    x, b = (4, 8), (1, 8)
    configs = [("add", {}, (x, b), "float32"), ("add", {}, (b, x), "float32"), ("sub", {}, (x, b), "float32")]
    configs.append(("sub", {}, (b, x), "float32"))  # not commutative: a row of its own
    assert model.profile(configs) == 3
    assert fused.asked == [("fake-fused", "add"), ("fake-fused", "sub"), ("fake-fused", "sub")]
    assert model("add", {}, [b, x]) == model("add", {}, [x, b]) == 1e-6 and model.missing(configs) == []


def test_cost_key_fingerprints_the_lowering():
    k = cost_key("llvm", threads=1)
    t = k.target
    assert t.kind == "llvm" and t.threads == 1 and dict(k.versions)["lower"] and dict(k.versions)["runner"]
    assert "lower" not in dict(t.versions)  # the target kernels compile for carries no cost-only versions
    assert k.cache_key.startswith(t.cache_key + "|lower=")
    assert isinstance(default_cost_model("llvm"), CompiledCost)
    assert not isinstance(default_cost_model("torch"), CompiledCost)


def test_llvm_runners_time_compiled_kernels():
    k = cost_key("llvm", threads=1)
    m = run_llvm_op(k, "matmul", {}, [(4, 16), (16, 8)], warmup=1, repeats=3)
    assert m.reps == 3 and 0 < m.seconds < 1
    f = run_llvm_fused(k.as_fused(), "add", {}, [(4, 16), (4, 16)], warmup=1, repeats=3)
    assert f.reps == 3 and 0 < f.seconds < 1 and math.isfinite(f.iqr)
    b = run_llvm_fused(k.as_fused(), "lt", {}, [(4, 16), (4, 16)], warmup=1, repeats=3)  # bool out: cast consumer
    assert 0 < b.seconds < 1


def test_optimize_for_llvm_measures_the_egraph_and_verifies(tmp_path):
    torch.manual_seed(0)
    b = GraphBuilder("tiny")
    x = b.input("x", (4, 16))
    w = b.weight("w", torch.randn(16, 16))
    out = b.relu(b.add(b.matmul(x, w), x))
    model = CompiledCost(cost_key("llvm", threads=1), cache=tmp_path / "c.sqlite", measure_missing=True, repeats=3)
    res = optimize(b.build([out]), limits=Limits(iterations=3), extractor="greedy", cost_model=model, target="llvm")
    assert res.stats.verified is True
    assert model.stats["measured"] > 0 and model.stats["fallbacks"] == 0
    assert res.stats.measured_kernels == model.stats["measured"] and res.stats.seconds.measure > 0
    assert model.missing([("matmul", {}, ((4, 16), (16, 16)), "float32")]) == []
    assert isinstance(compiled_cost("llvm", threads=1, measure_missing=False), CompiledCost)


def test_a_batch_runner_measures_the_batch_and_notes_what_it_could_not(fake, monkeypatch):
    model, alone, _ = fake
    batches = []

    def many(key, configs, warmup, repeats, on_done):
        batches.append([c[0] for c in configs])
        out = []
        for c in configs:
            out.append(LoweringError("no lowering") if c[0] == "softmax" else measured.Measurement(2e-3, repeats, 0.0))
            on_done(c)
        return out

    monkeypatch.setitem(KINDS, "fake", dataclasses.replace(KINDS["fake"], batch_runner=many))
    configs = [
        ("matmul", {}, ((4, 8), (8, 8)), "float32"),
        ("softmax", {"axis": -1}, ((4, 8),), "float32"),
        ("conv2d", {}, ((1, 3, 8, 8), (4, 3, 3, 3)), "float32"),
    ]
    seen = []
    assert model.profile(configs, lambda done, total, op: seen.append((done, total, op))) == 3
    # one batch, no single runs; the conv measured as its biased twin (one row for both)
    assert batches == [["matmul", "softmax", "conv2d_bias_act"]] and alone.asked == []
    assert seen == [(1, 3, "matmul"), (2, 3, "softmax"), (3, 3, "conv2d_bias_act")]
    assert model("matmul", {}, [(4, 8), (8, 8)]) == 2e-3
    assert model("softmax", {"axis": -1}, [(4, 8)]) == 7.0 and model.stats["unmeasurable"] == 1
    assert model.missing(configs) == []  # measured or known unmeasurable: nothing is measured twice


def test_llvm_batch_compiles_each_distinct_graph_once(monkeypatch):
    import lower.llvm.measure as llvm_measure

    compiled = []
    real = llvm_measure.compile_graph

    def counting(g, target):
        compiled.append(g.name)
        return real(g, target)

    monkeypatch.setattr(llvm_measure, "compile_graph", counting)
    t = cost_key("llvm", threads=1).as_fused()
    configs = [
        ("add", {}, ((4, 16), (4, 16)), "float32"),
        ("mul", {}, ((4, 16), (4, 16)), "float32"),
        ("add", {}, ((4, 16), (4, 15)), "float32"),  # no broadcast of 16 and 15: cannot be built
    ]
    done = []
    out = llvm_measure.run_llvm_many(t, configs, warmup=1, repeats=3, on_done=done.append)
    assert done == configs
    assert [type(m).__name__ for m in out[:2]] == ["Measurement", "Measurement"] and all(m.seconds > 0 for m in out[:2])
    assert isinstance(out[2], EqsatError)
    # relu(add), relu(mul) and one relu alone on (4, 16) for both increments
    assert sorted(compiled) == ["cost_add_consumer", "cost_add_fused", "cost_mul_fused"]


def test_a_configuration_its_op_refuses_is_measured_alone_not_sampled():
    """Shapes ``add`` cannot broadcast have no family: the plan measures them (the runner then says why)."""
    bad = ("add", {}, ((4, 3), (5, 7)), "float32")
    ok = [("relu", {}, ((1, n),), "float32") for n in (8, 16, 32)]
    measure, derive = compiled.sample([bad, *ok], [])
    assert bad in measure and len(derive) == 1


def test_missing_sees_rows_another_process_measured_since(fake, tmp_path):
    """missing() reads the cache file once per call: a row another model (another process) wrote after this one
    read its table is not measured again."""
    model, _, _ = fake
    relu = ("relu", {}, ((4, 8),), "float32")
    assert model.missing([relu]) == [relu]  # this model's table is read, the row absent
    other = CompiledCost(FAKE, cache=tmp_path / "c.sqlite", measure_missing=True)
    other.profile([relu])
    assert model.missing([relu]) == [] and model.fused.lookup(*relu, ask_file=False) == 1e-6
